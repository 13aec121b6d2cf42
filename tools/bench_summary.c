/* jitgemm-bench --random's summary after the rows: the ratio's geomean,
 * 10th percentile and minimum, by bands of M, the ten worst rows, and the
 * M-generic plans against the baked ones; printed, and as the JSON root's
 * "random" (what was drawn) and "summary". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench.h"
#include "random_draw.h"

#define WORST_ROWS 10

/* Bands of M, as serving runs them: decode, small batches, ..., prefill. */
static const int64_t m_bands[][2] = {{1, 16},      {17, 128},    {129, 512},
                                     {513, 2048},  {2049, 8192}, {8193, RANDOM_M_MAX}};
#define M_BANDS (sizeof m_bands / sizeof m_bands[0])

int cmp_ranked(const void *a, const void *b)
{
    double x = ((const ranked *)a)->ratio, y = ((const ranked *)b)->ratio;
    return (x > y) - (x < y);
}

/* What was drawn, for the JSON root's "random". */
static json_t *draw_json(const bench *b)
{
    json_t *o = json_object();
    json_object_set_new(o, "count", json_integer(b->opt.random));
    json_object_set_new(o, "seed", json_integer((json_int_t)b->opt.seed));
    json_object_set_new(o, "dims_file", json_string(b->opt.dims));
    json_object_set_new(o, "m_max", json_integer(RANDOM_M_MAX));
    json_object_set_new(o, "dim_min", json_integer(RANDOM_DIM_MIN));
    json_object_set_new(o, "dim_max", json_integer(RANDOM_DIM_MAX));
    json_object_set_new(o, "dim_step", json_integer(RANDOM_DIM_STEP));
    json_object_set_new(o, "from_list", json_real(RANDOM_FROM_LIST));
    json_object_set_new(o, "max_elements", json_integer(RANDOM_MAX_ELEMENTS));
    json_object_set_new(o, "generic_fraction", json_real(b->opt.generic_fraction));
    json_object_set_new(o, "generic_buckets", json_string(b->opt.generic_half ? "half" : "pow2"));
    json_object_set_new(o, "warm_ms", json_real(b->warm_ms));
    return o;
}

/* {"count", "geomean", "p10", "min"} of n ratios (nulls when n is 0). */
static json_t *stats_json(const ratio_stats *st)
{
    json_t *o = json_object();
    json_object_set_new(o, "count", json_integer(st->count));
    json_object_set_new(o, "geomean", json_num(st->geomean));
    json_object_set_new(o, "p10", json_num(st->p10));
    json_object_set_new(o, "min", json_num(st->min));
    return o;
}

/* The geomean of the ratio per band of M, printed on one line. */
static json_t *by_m(const ranked *v, int n)
{
    json_t *bands = json_array();
    double *r = malloc((size_t)(n ? n : 1) * sizeof *r);
    printf("  by M         ");
    for (size_t i = 0; i < M_BANDS && r; ++i) {
        int c = 0;
        for (int j = 0; j < n; ++j)
            if (v[j].r->s->m >= m_bands[i][0] && v[j].r->s->m <= m_bands[i][1])
                r[c++] = v[j].ratio;
        ratio_stats st = ratio_stats_of(r, c);
        json_t *o = stats_json(&st);
        json_object_set_new(o, "m_min", json_integer(m_bands[i][0]));
        json_object_set_new(o, "m_max", json_integer(m_bands[i][1]));
        json_array_append_new(bands, o);
        printf("%lld-%lld: ", (long long)m_bands[i][0], (long long)m_bands[i][1]);
        if (c)
            printf("%.3f (%d)   ", st.geomean, c);
        else
            printf("- (0)   ");
    }
    printf("\n");
    free(r);
    return bands;
}

json_t *row_ref_json(const row *r)
{
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(r->s->name));
    json_object_set_new(o, "m", json_integer(r->s->m));
    json_object_set_new(o, "n", json_integer(r->s->n));
    json_object_set_new(o, "k", json_integer(r->s->k));
    return o;
}

/* The WORST_ROWS lowest ratios of v (sorted ascending), printed as a table. */
static json_t *worst(const ranked *v, int n)
{
    json_t *list = json_array();
    printf("  the %d worst rows\n  %-8s %6s %6s %6s %10s %10s %7s\n",
           n < WORST_ROWS ? n : WORST_ROWS, "name", "M", "N", "K", "ours us", "cuBLAS us", "ratio");
    for (int i = 0; i < n && i < WORST_ROWS; ++i) {
        const row *r = v[i].r;
        json_t *o = row_ref_json(r);
        printf("  %-8s %6lld %6lld %6lld %10.1f %10.1f %7.3f\n", r->s->name, (long long)r->s->m,
               (long long)r->s->n, (long long)r->s->k, r->ours_us, r->peer_us, v[i].ratio);
        json_object_set_new(o, "ours_us", json_num(r->ours_us));
        json_object_set_new(o, "peer_us", json_num(r->peer_us));
        json_object_set_new(o, "ratio", json_num(v[i].ratio));
        json_array_append_new(list, o);
    }
    return list;
}

/* The rows timed through an M-generic plan: ours us / generic us (below 1:
 * the M-generic plan is slower) and cuBLAS us / generic us, over the rows
 * whose both D's matched (and, for the second, whose ratio counts). */
json_t *generic_summary(const bench *b, const row *rows, size_t n)
{
    double *baked = malloc((n ? n : 1) * sizeof *baked), *peer = malloc((n ? n : 1) * sizeof *peer);
    int nb = 0, np = 0;
    for (size_t i = 0; i < n && baked && peer; ++i) {
        const row *r = &rows[i];
        double ratio;
        if (!r->generic_hint || r->error[0] || r->mismatch || r->generic_mismatch ||
            !(r->generic_us > 0) || !(r->ours_us > 0))
            continue;
        baked[nb++] = r->ours_us / r->generic_us;
        if (row_ratio(b, r, &ratio))
            peer[np++] = r->peer_us / r->generic_us;
    }
    ratio_stats sb = ratio_stats_of(baked, nb), sp = ratio_stats_of(peer, np);
    json_t *o = json_object();
    json_object_set_new(o, "baked_over_generic", stats_json(&sb));
    json_object_set_new(o, "peer_over_generic", stats_json(&sp));
    char hints[64] = "their generic_hint_m";
    if (b->opt.random)
        snprintf(hints, sizeof hints, "M rounded up to %s", random_buckets_text(b->opt.generic_half));
    if (nb)
        printf("  M-generic    %d rows, planned for %s: ours us / generic us geomean %.3f, "
               "10th percentile %.3f, min %.3f (below 1: slower than the plan for the exact "
               "M); cuBLAS us / generic us geomean %.3f over %d\n",
               nb, hints, sb.geomean, sb.p10, sb.min, sp.geomean, np);
    else
        printf("  M-generic    no row timed through an M-generic plan\n");
    free(baked);
    free(peer);
    return o;
}

json_t *random_summary(const bench *b, const row *rows, size_t n)
{
    ranked *v = malloc((n ? n : 1) * sizeof *v);
    double *ratios = malloc((n ? n : 1) * sizeof *ratios);
    json_t *out = json_object(), *sum = json_object();
    int c = 0;
    for (size_t i = 0; i < n && v && ratios; ++i)
        if (row_ratio(b, &rows[i], &v[c].ratio)) {
            v[c].r = &rows[i];
            ratios[c] = v[c].ratio;
            ++c;
        }
    qsort(v, (size_t)c, sizeof *v, cmp_ranked);
    ratio_stats st = ratio_stats_of(ratios, c);
    printf("\nrandom summary cuBLAS us / ours us (above 1: ours faster) over %d of %zu rows%s\n",
           c, n, c < (int)n ? " (the others: errors, mismatches, no cuBLAS time, or a cuBLAS "
                              "of other scales)" : "");
    if (c)
        printf("  ratio        geomean %.3f, 10th percentile %.3f, min %.3f\n", st.geomean,
               st.p10, st.min);
    json_object_set_new(sum, "rows", json_integer((json_int_t)n));
    json_object_update_new(sum, stats_json(&st));
    json_object_set_new(sum, "by_m", by_m(v, c));
    json_object_set_new(sum, "worst", worst(v, c));
    json_object_set_new(sum, "generic", generic_summary(b, rows, n));
    json_object_set_new(out, "random", draw_json(b));
    json_object_set_new(out, "summary", sum);
    free(v);
    free(ratios);
    return out;
}
