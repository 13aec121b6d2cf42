/* jitgemm-bench --family-ab: which kernel family the planner chose for a
 * row (from the kernel's name), the second context that plans the plain
 * tiles alone, and the summary of chosen family against plain tiles. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "random_draw.h"

#define FAMILY_WORST_ROWS 5

/* The families a name can show, in the summary's order. */
static const char *const families[] = {
    "plain", "tall", "swap-AB", "split-K", "swap-AB split-K", "ping-pong", "swap-AB ping-pong"};
#define FAMILIES (sizeof families / sizeof families[0])

/* The planner's forcing variables and the values that leave only the plain
 * tiles (src/runtime/context.c: JITGEMM_SWAP=0 no swap-AB, JITGEMM_SPLIT=1
 * no split-K; JITGEMM_PINGPONG forces ping-pong only when "1"). */
static const char *const force_names[] = {"JITGEMM_SWAP", "JITGEMM_SPLIT", "JITGEMM_PINGPONG"};
static const char *const force_plain[] = {"0", "1", "0"};
#define FORCES (sizeof force_names / sizeof force_names[0])

/* Whether `name` has `_k` then digits then `_` (split-K's "_k4_"; the
 * problem's "...n4096k4096" has a digit, not `_`, before its k). */
static bool has_split(const char *name)
{
    for (const char *p = strstr(name, "_k"); p; p = strstr(p + 1, "_k")) {
        size_t digits = strspn(p + 2, "0123456789");
        if (digits && p[2 + digits] == '_')
            return true;
    }
    return false;
}

/* The tile's rows from "_<M>x<N>x<K>_s<stages>", or 0 if none is found. */
static unsigned tile_rows(const char *name)
{
    for (const char *p = strchr(name, '_'); p; p = strchr(p + 1, '_')) {
        unsigned bm, bn, bk, st;
        if (sscanf(p, "_%ux%ux%u_s%u", &bm, &bn, &bk, &st) == 4)
            return bm;
    }
    return 0;
}

/* A dense kernel's family from its name (emit.c's: "_ab" swap-AB, "_k<S>"
 * split-K over S CTAs, "_pp" ping-pong, each followed by `_`; 256-row
 * tiles are "tall"); "plain" for any other, grouped kernels included. */
const char *kernel_family(const char *kernel)
{
    bool ab = strstr(kernel, "_ab_") != NULL, pp = strstr(kernel, "_pp_") != NULL;
    if (has_split(kernel))
        return ab ? "swap-AB split-K" : "split-K";
    if (pp)
        return ab ? "swap-AB ping-pong" : "ping-pong";
    if (ab)
        return "swap-AB";
    return tile_rows(kernel) == 256 ? "tall" : "plain";
}

/* A context whose planner has only the plain tiles (JITGEMM_TILE and the
 * other settings as the process has them): the forcing variables are set
 * while it is made, read then, and put back as they were (unset ones
 * unset). Returns jg_context_create's status. */
jg_status family_context_create(const jg_options *opt, jg_context **out)
{
    char *saved[FORCES];
    bool ok = true;
    for (size_t i = 0; i < FORCES; ++i) {
        const char *v = getenv(force_names[i]);
        saved[i] = v ? strdup(v) : NULL;
        ok &= !v || saved[i];
        setenv(force_names[i], force_plain[i], 1);
    }
    jg_status st = ok ? jg_context_create(opt, out) : JG_ERR_NO_MEMORY;
    for (size_t i = 0; i < FORCES; ++i) {
        if (saved[i])
            setenv(force_names[i], saved[i], 1);
        else
            unsetenv(force_names[i]);
        free(saved[i]);
    }
    return st;
}

/* Whether a row's plain-tiles time counts: both plans ran and matched. */
static bool family_timed(const row *r)
{
    return r->origin && !r->error[0] && !r->mismatch && r->plain_family_kernel[0] &&
           !r->plain_family_mismatch && r->plain_family_us > 0 && r->ours_us > 0 &&
           isfinite(r->plain_family_us / r->ours_us);
}

/* Per chosen family: its rows, and over those timed on the plain tiles
 * too, plain us / ours us; printed, one line a family. */
static json_t *by_family(const row *rows, size_t n, double *ratios)
{
    json_t *list = json_array();
    printf("  %-18s %5s %6s %8s %8s %8s\n", "family", "rows", "timed", "geomean", "p10", "min");
    for (size_t f = 0; f < FAMILIES; ++f) {
        int count = 0, timed = 0;
        for (size_t i = 0; i < n; ++i) {
            if (!rows[i].origin || strcmp(rows[i].family, families[f]))
                continue;
            ++count;
            if (family_timed(&rows[i]))
                ratios[timed++] = rows[i].plain_family_us / rows[i].ours_us;
        }
        if (!count)
            continue;
        ratio_stats st = ratio_stats_of(ratios, timed);
        json_t *o = json_object();
        json_object_set_new(o, "family", json_string(families[f]));
        json_object_set_new(o, "rows", json_integer(count));
        json_object_set_new(o, "timed", json_integer(timed));
        json_object_set_new(o, "geomean", json_num(st.geomean));
        json_object_set_new(o, "p10", json_num(st.p10));
        json_object_set_new(o, "min", json_num(st.min));
        json_array_append_new(list, o);
        printf("  %-18s %5d %6d", families[f], count, timed);
        if (timed)
            printf(" %8.3f %8.3f %8.3f\n", st.geomean, st.p10, st.min);
        else
            printf(" %8s %8s %8s\n", "-", "-", "-");
    }
    return list;
}

/* The FAMILY_WORST_ROWS rows where the plain tiles were fastest against
 * the chosen family (plain us / ours us below 1, lowest first). */
static json_t *plain_won(const row *rows, size_t n, ranked *v)
{
    json_t *list = json_array();
    int c = 0;
    for (size_t i = 0; i < n; ++i)
        if (family_timed(&rows[i]) && rows[i].plain_family_us < rows[i].ours_us)
            v[c++] = (ranked){rows[i].plain_family_us / rows[i].ours_us, &rows[i]};
    qsort(v, (size_t)c, sizeof *v, cmp_ranked);
    if (!c) {
        printf("  no row where the plain tiles were faster\n");
        return list;
    }
    printf("  the %d row(s) where the plain tiles won most\n  %-8s %6s %6s %6s %-18s %9s "
           "%9s %6s  %s\n",
           c < FAMILY_WORST_ROWS ? c : FAMILY_WORST_ROWS, "name", "M", "N", "K", "family",
           "ours us", "tiles us", "ratio", "tiles kernel");
    for (int i = 0; i < c && i < FAMILY_WORST_ROWS; ++i) {
        const row *r = v[i].r;
        json_t *o = row_ref_json(r);
        printf("  %-8s %6lld %6lld %6lld %-18s %9.1f %9.1f %6.3f  %s\n", r->s->name,
               (long long)r->s->m, (long long)r->s->n, (long long)r->s->k, r->family, r->ours_us,
               r->plain_family_us, v[i].ratio, r->plain_family_kernel);
        json_object_set_new(o, "family", json_string(r->family));
        json_object_set_new(o, "kernel", json_string(r->kernel));
        json_object_set_new(o, "plain_family_kernel", json_string(r->plain_family_kernel));
        json_object_set_new(o, "ours_us", json_num(r->ours_us));
        json_object_set_new(o, "plain_family_us", json_num(r->plain_family_us));
        json_object_set_new(o, "ratio", json_num(v[i].ratio));
        json_array_append_new(list, o);
    }
    return list;
}

json_t *family_summary(const row *rows, size_t n)
{
    double *ratios = malloc((n ? n : 1) * sizeof *ratios);
    ranked *v = malloc((n ? n : 1) * sizeof *v);
    json_t *o = json_object();
    if (!ratios || !v) {
        fprintf(stderr, "jitgemm-bench: out of memory\n");
        free(ratios);
        free(v);
        return o;
    }
    printf("\nfamily A/B     plain tiles us / ours us by the family the planner chose (above "
           "1: the chosen family\n               was faster), over the rows whose both D's "
           "matched (\"timed\")\n");
    json_object_set_new(o, "by_family", by_family(rows, n, ratios));
    json_object_set_new(o, "plain_won", plain_won(rows, n, v));
    free(ratios);
    free(v);
    return o;
}
