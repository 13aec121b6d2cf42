/* jitgemm-bench's output: the header, the table and its rows, the summary
 * lines, and the JSON file. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

metrics row_metrics(const bench *b, const row *r)
{
    const shape *s = r->s; /* grouped: m is the rows of all groups, b_count their B */
    double flops = 2.0 * s->m * s->n * s->k;
    size_t na, nb; /* e4m3: the scales are read too */
    scale_counts(s->scale, s->m, s->n, s->k, &na, &nb);
    double bytes = (double)dtype_size(s->in) * (s->m * s->k + s->b_count * s->n * s->k) +
                   (double)dtype_size(s->out) * s->m * s->n + 4.0 * (double)(na + nb);
    if (s->in == JG_NVFP4) /* 4.5 bits an element: K/2 bytes a row + an e4m3 per 16 */
        bytes = (s->m + s->b_count * s->n) * (s->k / 2.0 + s->k / 16.0) +
                (double)dtype_size(s->out) * s->m * s->n;
    double t = r->ours_us * 1e-6;
    double peak = s->in == JG_E4M3 || s->in == JG_NVFP4 ? b->fp8_peak_tflops : b->peak_tflops;
    /* Both ceilings or none: fmax would silently drop a NAN peak. */
    double sol_t = isfinite(peak) ? fmax(flops / (peak * 1e12), bytes / (b->copy_gbs * 1e9))
                                  : NAN;
    return (metrics){.ratio = r->peer_us / r->ours_us, .tflops = flops / t / 1e12,
                     .gbs = bytes / t / 1e9, .sol = sol_t / t};
}

/* The column titles; under --chain, "plain us" (ours without PDL) after
 * "ours us"; under --random, "gen us" (M-generic); under --family-ab,
 * "tiles us" (the plain tiles' plan). */
void print_table_header(const bench *b)
{
    printf("\n%-24s %6s %6s %6s %8s %5s %9s", "name", "M", "N", "K", "plan ms", "from",
           "ours us");
    if (b->opt.chain)
        printf(" %9s", "plain us");
    if (b->generic_rows)
        printf(" %9s", "gen us");
    if (b->opt.family_ab)
        printf(" %9s", "tiles us");
    printf(" %9s %6s %7s %7s %5s %5s  %-14s  %s\n", "cuBLAS us", "ratio", "TFLOP/s", "GB/s",
           "SoL", "MHz", "peer", "kernel");
}

/* A number, or "-" where it is unknown. */
static void print_num(int width, int prec, double v)
{
    if (isfinite(v))
        printf(" %*.*f", width, prec, v);
    else
        printf(" %*s", width, "-");
}

void print_row(const bench *b, const row *r)
{
    const shape *s = r->s;
    printf("%-24s %6lld %6lld %6lld", s->name, (long long)s->m, (long long)s->n,
           (long long)s->k);
    if (!r->origin) {
        printf("  ERROR %s\n", r->error);
        return;
    }
    metrics m = row_metrics(b, r);
    print_num(8, 1, r->plan_ms);
    printf(" %5s", r->origin);
    print_num(9, 1, r->ours_us);
    if (b->opt.chain)
        print_num(9, 1, r->ours_plain_us);
    if (b->generic_rows)
        print_num(9, 1, r->generic_us);
    if (b->opt.family_ab)
        print_num(9, 1, r->plain_family_us);
    print_num(9, 1, r->peer_us);
    print_num(6, 2, m.ratio);
    print_num(7, 1, m.tflops);
    print_num(7, 0, m.gbs);
    print_num(5, 2, m.sol);
    print_num(5, 0, clock_mean(&r->clock));
    printf("%s", r->clock.reasons & NVML_REASON_SW_POWER_CAP ? "p" : " ");
    printf(" %-14s  %s", r->peer ? r->peer : "-", r->kernel);
    if (r->error[0])
        printf("  ERROR %s", r->error);
    else if (r->mismatch)
        printf("  MISMATCH (max rel diff %.2e, %s)", r->rel_diff, r->check);
    if (!r->error[0] && r->generic_mismatch)
        printf("  MISMATCH M-generic (max rel diff %.2e, %s)", r->generic_rel_diff, r->check);
    if (!r->error[0] && r->plain_family_mismatch)
        printf("  MISMATCH plain tiles (max rel diff %.2e, %s)", r->plain_family_rel_diff,
               r->check);
    if (!r->error[0] && isfinite(r->grouped_us) && !(r->grouped_diff <= PEER_TOL))
        printf("  (cuBLAS grouped differs: %.2e, not the peer)", r->grouped_diff);
    /* Each copy is read once a chain: only what the chain before left can
     * be in L2, which the flush (not --flush none) empties. */
    if (!r->error[0] && r->chain_b_bytes && (size_t)r->chain_b_bytes < 2 * b->l2_bytes)
        printf("  WARNING chain B %.0f MiB < 2x L2%s", (double)r->chain_b_bytes / (1 << 20),
               b->opt.flush == FLUSH_NONE ? ": B partly read from L2" : "");
    printf("\n");
}

/* A JSON number, or null for NAN and infinities (which JSON lacks). */
json_t *json_num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* {"mean_mhz", "min_mhz", "samples", "reasons": [...]}: the SM clock sampled
 * while launches ran, with NVML's clock-event reasons by name; null when
 * not sampled. */
json_t *clock_json(const clock_stats *c)
{
    static const struct {
        unsigned long long bit;
        const char *name;
    } reasons[] = {{NVML_REASON_SW_POWER_CAP, "sw_power_cap"},
                   {NVML_REASON_HW_SLOWDOWN, "hw_slowdown"},
                   {NVML_REASON_SW_THERMAL, "sw_thermal"},
                   {NVML_REASON_HW_THERMAL, "hw_thermal"},
                   {NVML_REASON_HW_POWER_BRAKE, "hw_power_brake"}};
    if (!c->n)
        return json_null();
    json_t *o = json_object(), *why = json_array();
    json_object_set_new(o, "mean_mhz", json_real(clock_mean(c)));
    json_object_set_new(o, "min_mhz", json_integer(c->min_mhz));
    json_object_set_new(o, "samples", json_integer(c->n));
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; ++i)
        if (c->reasons & reasons[i].bit)
            json_array_append_new(why, json_string(reasons[i].name));
    json_object_set_new(o, "reasons", why);
    return o;
}

/* A grouped row's "layout", "groups", "m" (rows per group, a list) and
 * "m_max" (null for the list layout). */
static void row_json_grouped(const row *r, json_t *o)
{
    json_t *m = json_array();
    for (int i = 0; i < r->s->g; ++i)
        json_array_append_new(m, json_integer(r->s->gm[i]));
    json_object_set_new(o, "layout", json_string(layout_name(r->s->layout)));
    json_object_set_new(o, "groups", json_integer(r->s->g));
    json_object_set_new(o, "m", m);
    json_object_set_new(o, "m_max", r->s->m_max ? json_integer(r->s->m_max) : json_null());
}

/* "cublas_algo": the chosen heuristic result, for a grouped row a list of
 * one per group of the cuBLASLt loop (null for empty groups); null without
 * cuBLASLt. */
static json_t *algo_json(const row *r)
{
    if (r->s->g ? !isfinite(r->lt_loop_us) : !r->peer)
        return json_null();
    if (!r->s->g)
        return json_integer(r->peer_algo);
    json_t *algo = json_array();
    for (int i = 0; i < r->s->g; ++i)
        json_array_append_new(algo, r->group_algo[i] >= 0 ? json_integer(r->group_algo[i])
                                                          : json_null());
    return algo;
}

/* A --random row's M-generic columns: "generic_hint_m" (null: the row was
 * not timed M-generic), "generic_kernel", "generic_us", "generic_rel_diff"
 * and "generic_mismatch". */
static void row_json_generic(const row *r, json_t *o)
{
    bool on = r->generic_hint != 0;
    json_object_set_new(o, "generic_hint_m", on ? json_integer(r->generic_hint) : json_null());
    json_object_set_new(o, "generic_kernel",
                        r->generic_kernel[0] ? json_string(r->generic_kernel) : json_null());
    json_object_set_new(o, "generic_us", json_num(r->generic_us));
    json_object_set_new(o, "generic_rel_diff", json_num(r->generic_rel_diff));
    json_object_set_new(o, "generic_mismatch", on ? json_boolean(r->generic_mismatch)
                                                  : json_null());
}

/* A --random or --pooled row's family columns: "family" (the chosen
 * kernel's, kernel_family), and under --family-ab its plan of the plain
 * tiles: "plain_family_kernel" (null: the row is plain, or the option is
 * off), "plain_family_us", "plain_family_rel_diff", "plain_family_mismatch". */
static void row_json_family(const row *r, json_t *o)
{
    bool on = r->plain_family_kernel[0] != 0;
    json_object_set_new(o, "family", r->family ? json_string(r->family) : json_null());
    json_object_set_new(o, "plain_family_kernel",
                        on ? json_string(r->plain_family_kernel) : json_null());
    json_object_set_new(o, "plain_family_us", json_num(r->plain_family_us));
    json_object_set_new(o, "plain_family_rel_diff", json_num(r->plain_family_rel_diff));
    json_object_set_new(o, "plain_family_mismatch", on ? json_boolean(r->plain_family_mismatch)
                                                      : json_null());
}

json_t *row_json(const bench *b, const row *r)
{
    metrics m = r->origin ? row_metrics(b, r) : (metrics){NAN, NAN, NAN, NAN};
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(r->s->name));
    json_object_set_new(o, "kind", json_string(r->s->kind));
    if (r->s->g)
        row_json_grouped(r, o);
    else
        json_object_set_new(o, "m", json_integer(r->s->m));
    json_object_set_new(o, "n", json_integer(r->s->n));
    json_object_set_new(o, "k", json_integer(r->s->k));
    json_object_set_new(o, "dtype", json_string(dtype_name(r->s->in)));
    json_object_set_new(o, "out_dtype", json_string(dtype_name(r->s->out)));
    json_object_set_new(o, "scale", r->s->scale ? json_string(scale_name(r->s->scale))
                                                : json_null());
    json_object_set_new(o, "sf_layout", r->s->sf_layout
                                            ? json_string(sf_layout_name(r->s->sf_layout))
                                            : json_null());
    json_object_set_new(o, "plan_ms", json_num(r->origin ? r->plan_ms : NAN));
    json_object_set_new(o, "origin", r->origin ? json_string(r->origin) : json_null());
    json_object_set_new(o, "kernel", r->kernel[0] ? json_string(r->kernel) : json_null());
    json_object_set_new(o, "ours_us", json_num(r->ours_us));
    json_object_set_new(o, "ours_plain_us", json_num(r->ours_plain_us));
    json_object_set_new(o, "chain_b_bytes", r->chain_b_bytes ? json_integer(r->chain_b_bytes)
                                                             : json_null());
    json_object_set_new(o, "cublas_us", json_num(r->peer_us));
    json_object_set_new(o, "peer", r->peer ? json_string(r->peer) : json_null());
    json_object_set_new(o, "ours_uj", json_num(r->ours_uj));
    json_object_set_new(o, "cublas_uj", json_num(r->peer_uj));
    if (b->generic_rows)
        row_json_generic(r, o);
    if (b->opt.random || b->opt.family_ab)
        row_json_family(r, o);
    if (r->s->g) { /* each peer's time; cublas_us is the faster (that agreed) */
        json_t *peers = json_object();
        json_object_set_new(peers, "cublaslt_loop", json_num(r->lt_loop_us));
        json_object_set_new(peers, "cublas_grouped", json_num(r->grouped_us));
        json_object_set_new(o, "peers", peers);
        json_object_set_new(o, "cublas_grouped_rel_diff", json_num(r->grouped_diff));
    }
    json_object_set_new(o, "cublas_algo", algo_json(r));
    json_object_set_new(o, "ratio", json_num(m.ratio));
    json_object_set_new(o, "tflops", json_num(m.tflops));
    json_object_set_new(o, "gbs", json_num(m.gbs));
    json_object_set_new(o, "sol_fraction", json_num(m.sol));
    json_object_set_new(o, "sm_clock", clock_json(&r->clock));
    json_object_set_new(o, "check", r->check ? json_string(r->check) : json_null());
    json_object_set_new(o, "rel_diff", json_num(r->rel_diff));
    json_object_set_new(o, "mismatch", json_boolean(r->mismatch));
    json_object_set_new(o, "error", r->error[0] ? json_string(r->error) : json_null());
    return o;
}

/* The geomean group of a row: its kind ("dense"), and for e4m3 its type
 * and scales too ("dense_e4m3_tensor"): ratios of different types are not
 * averaged together. */
static const char *row_group(const row *r, char *buf, size_t n)
{
    if (r->s->in == JG_E4M3)
        snprintf(buf, n, "%s_e4m3_%s", r->s->kind, scale_name(r->s->scale));
    else if (r->s->in == JG_NVFP4)
        snprintf(buf, n, "%s_nvfp4", r->s->kind);
    else
        snprintf(buf, n, "%s", r->s->kind);
    return buf;
}

/* Whether a row's ratio (into *ratio) counts in the geomeans and --random's
 * summary: it ran and matched, and its peer computed the same product (not
 * "cuBLASLt fp8 (tensor scales)"). */
bool row_ratio(const bench *b, const row *r, double *ratio)
{
    *ratio = r->origin ? row_metrics(b, r).ratio : NAN;
    return r->origin && !r->error[0] && !r->mismatch && !r->peer_other_scales &&
           isfinite(*ratio) && *ratio > 0;
}

/* Geometric mean of the ratio per group (row_group), in order of first
 * appearance, over the rows that ran and matched and whose peer computed
 * the same product (not "cuBLASLt fp8 (tensor scales)"); printed, and
 * stored in `out` (a JSON object) when not NULL. */
void geomean_by_kind(const bench *b, const row *rows, size_t n, json_t *out)
{
    char gi[64], gj[64];
    for (size_t i = 0; i < n; ++i) {
        bool first = true;
        row_group(&rows[i], gi, sizeof gi);
        for (size_t j = 0; j < i && first; ++j)
            first = strcmp(row_group(&rows[j], gj, sizeof gj), gi) != 0;
        if (!first)
            continue;
        double sum = 0, ratio;
        int count = 0;
        for (size_t j = i; j < n; ++j)
            if (!strcmp(row_group(&rows[j], gj, sizeof gj), gi) &&
                row_ratio(b, &rows[j], &ratio)) {
                sum += log(ratio);
                ++count;
            }
        double g = count ? exp(sum / count) : NAN;
        if (count)
            printf("geomean ratio (cuBLAS us / ours us), %-8s %.3f over %d shape(s)\n", gi, g,
                   count);
        else
            printf("geomean ratio (cuBLAS us / ours us), %-8s - (no row with both times)\n",
                   gi);
        if (out)
            json_object_set_new(out, gi, json_num(g));
    }
}

/* --energy: the geomean of ours / the peer's energy per GEMM over the rows
 * with both; printed. */
static void print_energy(const row *rows, size_t n)
{
    double sum = 0;
    int count = 0;
    for (size_t i = 0; i < n; ++i)
        if (rows[i].ours_uj > 0 && rows[i].peer_uj > 0 && !rows[i].mismatch) {
            sum += log(rows[i].ours_uj / rows[i].peer_uj);
            ++count;
        }
    if (count)
        printf("energy per GEMM (back to back), ours uJ / cuBLAS uJ: geomean %.3f over %d "
               "row(s) (above 1: ours spends more)\n",
               exp(sum / count), count);
}

/* One "types" line per distinct combination of types and scales among the
 * rows, in order of first appearance. */
static void print_types(const shape_list *l)
{
    bool printed = false;
    char what[96];
    for (size_t i = 0; i < l->n; ++i) {
        const shape *s = &l->v[i];
        bool first = true;
        for (size_t j = 0; j < i && first; ++j)
            first = l->v[j].in != s->in || l->v[j].out != s->out || l->v[j].scale != s->scale ||
                    l->v[j].sf_layout != s->sf_layout;
        if (!first)
            continue;
        if (s->in == JG_NVFP4) {
            printf("%-15snvfp4 x nvfp4 -> %s (e2m1, e4m3 scale per 16 of K in the %s layout, "
                   "fp32 global scales),\n%-15sfp32 accumulate; peer: cuBLASLt e4m3 x e4m3 -> "
                   "%s, tensor scales\n", printed ? "" : "types", dtype_name(s->out),
                   sf_layout_name(s->sf_layout), "", dtype_name(s->out));
            printed = true;
            continue;
        }
        printf("%-15s%s, fp32 accumulate%s\n", printed ? "" : "types",
               types_text(what, sizeof what, s->in, s->out, s->scale),
               s->in == JG_E4M3 ? " (promoted every 128 of K; cuBLASLt: no fast accumulation)"
                                : "");
        printed = true;
    }
}

/* What --chain times: the chains, their B (the range over the rows: each
 * row's JSON has its own) against the L2, and what each time column is. */
static void print_chain(const bench *b, const device_info *d, const shape_list *shapes)
{
    int n = b->opt.chain;
    int64_t lo = INT64_MAX, hi = 0;
    for (size_t i = 0; i < shapes->n; ++i) {
        int64_t bytes = chain_b_bytes(&shapes->v[i], n);
        lo = bytes && bytes < lo ? bytes : lo;
        hi = bytes > hi ? bytes : hi;
    }
    if (!hi) {
        printf("chain          --chain %d: no dense or decode row (grouped rows are not "
               "chained)\n", n);
        return;
    }
    printf("chain          of %d GEMMs, per-GEMM times, B rotated through %d copies (", n, n);
    if (lo < hi)
        printf("%.0f-", (double)lo / (1 << 20));
    printf("%.0f MiB, L2 %d MiB)\n"
           "               medians of chain time / %d; the flush (above) before each chain, "
           "none between its GEMMs;\n"
           "               ours us: ours with PDL (JG_GEMM_PDL), plain us: ours "
           "without, cuBLASLt without PDL;\n"
           "               grouped rows are not chained%s\n",
           (double)hi / (1 << 20), d->l2_bytes >> 20, n,
           (size_t)lo < 2 * b->l2_bytes ? "; rows whose chain B is under 2x the L2 are marked"
                                        : "");
}

void print_header(const bench *b, const device_info *d, const shape_list *shapes)
{
    printf("jitgemm-bench, libjitgemm %s\n", jg_version());
    printf("device         %s (sm_%d%d, %d SMs, L2 %d MiB), SM clock ", d->name, d->major,
           d->minor, d->sms, d->l2_bytes >> 20);
    if (d->clock_mhz)
        printf("%d MHz", d->clock_mhz);
    else
        printf("n/a");
    printf(", driver %d.%d, runtime %d.%d\n", d->driver / 1000, d->driver % 1000 / 10,
           d->runtime / 1000, d->runtime % 1000 / 10);
    printf("date           %s\n", d->date);
    print_types(shapes);
    printf("timing         median of %d launches, ours and cuBLAS alternating after >= %.0f ms "
           "of warm-up,\n", b->opt.reps, b->warm_ms);
    if (b->opt.flush == FLUSH_READ)
        printf("               L2 flushed before each by a read-only pass over %zu MiB (leaves "
               "only clean lines)\n", b->flush_bytes >> 20);
    else if (b->opt.flush == FLUSH_MEMSET)
        printf("               L2 flushed before each by a %zu MiB memset (--flush memset: "
               "leaves dirty lines\n               that the timed kernel writes back)\n",
               b->flush_bytes >> 20);
    else
        printf("               L2 not flushed (--flush none): each launch finds what the "
               "launches before left\n");
    if (b->opt.chain)
        print_chain(b, d, shapes);
    if (b->opt.family_ab)
        printf("family A/B     rows the planner gives another family than the plain tiles "
               "(swap-AB, split-K,\n               ping-pong, 256-row tiles) are also timed, "
               "in the same alternation, through the\n               plan of a second context "
               "with JITGEMM_SWAP=0 JITGEMM_SPLIT=1 (\"tiles us\")\n");
    if (b->opt.no_peer)
        printf("peer           none (--no-peer): rows checked on 3 sampled rows against FP64\n");
    else if (b->grouped)
        printf("peers          cuBLASLt; grouped rows: %s\n",
               b->have_cb ? "the faster of a cuBLASLt loop and cuBLAS grouped "
                            "(cublasGemmGroupedBatchedEx)"
                          : "a cuBLASLt loop (no cuBLAS grouped: see the note above)");
    printf("measuring the ceilings...\n");
    fflush(stdout);
}

/* ", SM clock X MHz (min Y, software power cap)" and the line's end. */
static void print_clock(const clock_stats *c)
{
    if (c->n)
        printf(", SM clock %.0f MHz (min %u%s)", clock_mean(c), c->min_mhz,
               c->reasons & NVML_REASON_SW_POWER_CAP ? ", software power cap" : "");
    printf("\n");
}

/* How many rows ran with NVML reporting the software power cap, and
 * their clocks' range: the absolute times of such rows are a capped card's
 * (ours and the peers' alike: their launches alternate). */
void print_clock_summary(const bench *b, const row *rows, size_t n)
{
    if (!b->nvml.dev) {
        printf("SM clock       not sampled (no NVML): the MHz column is empty\n");
        return;
    }
    size_t sampled = 0, capped = 0;
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < n; ++i) {
        const clock_stats *c = &rows[i].clock;
        if (!c->n)
            continue;
        ++sampled;
        capped += (c->reasons & NVML_REASON_SW_POWER_CAP) != 0;
        lo = fmin(lo, clock_mean(c));
        hi = fmax(hi, clock_mean(c));
    }
    if (sampled)
        printf("SM clock       %.0f-%.0f MHz (row means, sampled every %d ms by NVML while each "
               "row's launches ran); %zu of %zu row(s) under the software power cap (\"p\")\n",
               lo, hi, CLOCK_POLL_NS / 1000000, capped, sampled);
}

void print_ceilings(const bench *b)
{
    printf("copy bandwidth %.0f GB/s (1 GiB device-to-device copy, read + write, median of %d)\n",
           b->copy_gbs, COPY_REPS);
    if (isfinite(b->floor_us))
        printf("launch floor   %.1f us, %.1f us with %d bytes of shared memory per CTA (an empty "
               "kernel, %u CTAs of %d threads, flushed and timed as the rows, median of %d)\n",
               b->floor_us, b->floor_smem_us, b->floor_smem, b->flush_blocks / FLUSH_BLOCKS_PER_SM,
               FLOOR_THREADS, b->opt.reps);
    if (!b->have_lt)
        printf("matmul peak    n/a (no cuBLASLt): SoL column left empty\n");
    if (b->have_lt && b->rows16) {
        printf("matmul peak    %.1f TFLOP/s (cuBLASLt bf16 %d^3, heuristic algorithm %d, "
               "median of %d)", b->peak_tflops, PEAK_DIM, b->peak_algo, b->opt.reps);
        print_clock(&b->peak_clock);
    }
    if (b->have_lt && b->rows8 && isfinite(b->fp8_peak_tflops)) {
        printf("fp8 peak       %.1f TFLOP/s (cuBLASLt e4m3 x e4m3 -> bf16, tensor scales, %d^3, "
               "heuristic algorithm %d, median of %d): fp8 and nvfp4 rows' SoL", b->fp8_peak_tflops,
               PEAK_DIM, b->fp8_peak_algo, b->opt.reps);
        print_clock(&b->fp8_peak_clock);
    }
    else if (b->have_lt && b->rows8)
        printf("fp8 peak       n/a (see the note above): fp8 and nvfp4 rows' SoL left "
               "empty\n");
    fflush(stdout);
}

/* ---- JSON output and main ---------------------------------------------- */

/* Writes the run to --json FILE; takes `geo` (the geomeans by kind). */
bool write_json(const bench *b, const device_info *d, const row *rows, size_t n,
                json_t *geo, json_t *extra)
{
    json_t *root = json_object(), *list = json_array();
    const char *commit = getenv("JITGEMM_COMMIT");
    json_object_set_new(root, "device", json_string(d->name));
    json_object_set_new(root, "date", json_string(d->date));
    json_object_set_new(root, "commit", commit && *commit ? json_string(commit) : json_null());
    json_object_set_new(root, "libjitgemm", json_string(jg_version()));
    json_object_set_new(root, "sm_clock_mhz", d->clock_mhz ? json_integer(d->clock_mhz)
                                                           : json_null());
    json_object_set_new(root, "driver_version", json_integer(d->driver));
    /* --dtype and --scale; rows say their own (fp8 spec lines may differ) */
    json_object_set_new(root, "dtype", json_string(dtype_name(b->opt.dtype)));
    json_object_set_new(root, "out_dtype", json_string(dtype_name(out_type(&b->opt,
                                                                            b->opt.dtype))));
    json_object_set_new(root, "scale", b->opt.dtype == JG_E4M3 || b->opt.scale_set
                                           ? json_string(scale_name(b->opt.scale))
                                           : json_null());
    json_object_set_new(root, "sf_layout", b->opt.dtype == JG_NVFP4
                                               ? json_string(sf_layout_name(b->opt.sf_layout))
                                               : json_null());
    json_object_set_new(root, "reps", json_integer(b->opt.reps));
    json_object_set_new(root, "chain", b->opt.chain ? json_integer(b->opt.chain) : json_null());
    json_object_set_new(root, "flush", json_string(flush_name(b->opt.flush)));
    json_object_set_new(root, "flush_bytes", json_integer((json_int_t)b->flush_bytes));
    json_object_set_new(root, "copy_bw_gbs", json_num(b->copy_gbs));
    json_object_set_new(root, "launch_floor_us", json_num(b->floor_us));
    json_object_set_new(root, "launch_floor_smem_us", json_num(b->floor_smem_us));
    json_object_set_new(root, "peak_tflops", json_num(b->peak_tflops));
    json_object_set_new(root, "fp8_peak_tflops", json_num(b->fp8_peak_tflops));
    json_object_set_new(root, "peak_sm_clock", clock_json(&b->peak_clock));
    json_object_set_new(root, "fp8_peak_sm_clock", clock_json(&b->fp8_peak_clock));
    for (size_t i = 0; i < n; ++i)
        json_array_append_new(list, row_json(b, &rows[i]));
    json_object_set_new(root, "rows", list);
    json_object_set_new(root, "geomean_ratio", geo);
    if (extra)
        json_object_update(root, extra);
    json_decref(extra);
    int rc = json_dump_file(root, b->opt.json, JSON_INDENT(2));
    json_decref(root);
    if (rc)
        fprintf(stderr, "jitgemm-bench: cannot write %s\n", b->opt.json);
    return rc == 0;
}

/* After the rows: the geomeans, the clock summary, --random's summary, the
 * JSON file; returns the exit status (`failed` rows, and the JSON file if
 * it cannot be written, make it 1). */
int finish_run(const bench *b, const device_info *d, const row *rows, size_t n, int failed)
{
    printf("\n");
    json_t *geo = json_object();
    geomean_by_kind(b, rows, n, geo);
    if (b->opt.energy)
        print_energy(rows, n);
    print_clock_summary(b, rows, n);
    json_t *summary = b->opt.random ? random_summary(b, rows, n) : NULL;
    if (!b->opt.random && b->generic_rows) { /* a --pooled spec's generic_hint_m */
        summary = json_object();
        printf("\n");
        json_object_set_new(summary, "generic", generic_summary(b, rows, n));
    }
    if (b->opt.family_ab) {
        if (!summary)
            summary = json_object();
        json_object_set_new(summary, "family_ab", family_summary(rows, n));
    }
    if (b->opt.json && !write_json(b, d, rows, n, geo, summary))
        ++failed;
    else if (!b->opt.json) {
        json_decref(geo);
        json_decref(summary);
    }
    if (failed)
        printf("%d row(s) failed or mismatched (tolerance %.0e)\n", failed, MISMATCH_TOL);
    return failed ? EXIT_ROWS_FAILED : 0;
}
