/* jitgemm-bench's grouped rows (list, contiguous or masked layout): one
 * launch of ours against the faster of a loop of cuBLASLt matmuls and one
 * cublasGemmGroupedBatchedEx. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* ---- one grouped row (list, contiguous or masked layout) --------------- */

/* Group i of a grouped shape as a dense problem [gm[i], n, k]. */
static shape group_shape(const shape *s, int i)
{
    shape one = {.m = s->gm[i], .n = s->n, .k = s->k, .b_count = 1, .in = s->in, .out = s->out,
                 .scale = s->scale};
    snprintf(one.name, sizeof one.name, "%s", s->name);
    snprintf(one.kind, sizeof one.kind, "%s", s->kind);
    return one;
}

/* Contiguous and masked layouts: the first row of group i in A and D (for
 * i = g, contiguous: the rows of all groups). */
static int64_t group_row0(const shape *s, int i)
{
    if (s->layout == JG_GROUPED_MASKED)
        return i * s->m_max;
    int64_t row = 0;
    for (int j = 0; j < i; ++j)
        row += s->gm[j];
    return row;
}

typedef struct grouped_job {
    jg_plan *plan;
    jg_grouped_args args; /* points at the arrays below */
    /* list: one pointer per group; contiguous, masked: [0], the whole tensor */
    const void *a[JG_GROUPED_MAX_DEVICE_GROUPS], *b[JG_GROUPED_MAX_DEVICE_GROUPS];
    void *d[JG_GROUPED_MAX_DEVICE_GROUPS];
} grouped_job;

static bool grouped_launch(void *arg, cudaStream_t stream)
{
    grouped_job *j = arg;
    return jg_grouped_run(j->plan, &j->args, stream) == JG_OK;
}

/* The first peer: one cuBLASLt matmul per non-empty group, in group order,
 * each with its own best algorithm, timed as a whole. */
typedef struct lt_loop {
    lt_cand best[JG_GROUPED_MAX_DEVICE_GROUPS];
    int n;
} lt_loop;

static bool lt_loop_launch(void *arg, cudaStream_t stream)
{
    lt_loop *l = arg;
    for (int i = 0; i < l->n; ++i)
        if (!lt_launch(&l->best[i], stream))
            return false;
    return true;
}

/* Per group: its operands and the peers' GEMMs. List layout: o[i] owns the
 * group's buffers. Contiguous and masked: `whole` owns the single A, B and D
 * tensors and o[i] is a view of group i's valid rows inside them (never
 * freed). Empty groups keep zeroed entries and NULL pointers, which the
 * library ignores. */
typedef struct group_set {
    operands o[JG_GROUPED_MAX_DEVICE_GROUPS];
    operands whole;
    int32_t *rows; /* contiguous: g + 1 row offsets; masked: g counts (device) */
    lt_gemm lt[JG_GROUPED_MAX_DEVICE_GROUPS];
    lt_loop loop;
    cb_grouped cb; /* count 0 where that peer does not run */
    grouped_job job;
    bool peer; /* cuBLASLt has algorithms for every non-empty group */
} group_set;

/* Plans a grouped shape, as one plan of its layout (the rows per group are
 * the list's sizes, or the other layouts' tile-sizing hints); see plan_done. */
static jg_plan *plan_grouped(bench *b, const shape *s, row *r)
{
    jg_grouped_problem p = {.layout = s->layout, .a_type = s->in, .b_type = s->in,
                            .d_type = s->out,
                            .groups = s->g, .m = s->gm, .n = s->n, .k = s->k,
                            .m_max = s->m_max};
    jg_plan *plan = NULL;
    double t0 = now_ms();
    jg_status st = jg_grouped_plan(b->jg, &p, &plan);
    return plan_done(b->jg, st, plan, now_ms() - t0, r);
}

/* List layout: random normal A_g and B_g (seeds differing per group and per
 * spec seed) and every D_g (ours, `peers` peers') of every non-empty group,
 * each its own buffers. */
static bool grouped_alloc_list(group_set *gs, const shape *s, int peers)
{
    for (int i = 0; i < s->g; ++i) {
        shape one = group_shape(s, i);
        uint64_t seed = 2 * ((uint64_t)s->seed * JG_GROUPED_MAX_GROUPS + (uint64_t)i) + 1;
        if (s->gm[i] && !operands_init(&gs->o[i], &one, peers, seed))
            return false;
    }
    return true;
}

/* Group i's valid rows inside the whole tensors: A and D from row
 * group_row0, B_i the i-th [n, k] slice; host copies likewise. */
static operands group_view(const operands *w, const shape *s, int i, jg_dtype in, jg_dtype out)
{
    size_t row0 = (size_t)group_row0(s, i), m = (size_t)s->gm[i];
    size_t n = (size_t)s->n, k = (size_t)s->k, si = dtype_size(in), so = dtype_size(out);
    size_t ea = row0 * k, eb = (size_t)i * n * k, ed = row0 * n; /* element offsets */
    return (operands){.ha = (char *)w->ha + ea * si, .hb = (char *)w->hb + eb * si,
                      .a = (char *)w->a + ea * si, .b = (char *)w->b + eb * si,
                      .d_ours = (char *)w->d_ours + ed * so,
                      .d_peer = w->d_peer ? (char *)w->d_peer + ed * so : NULL,
                      .d_peer2 = w->d_peer2 ? (char *)w->d_peer2 + ed * so : NULL,
                      .a_bytes = m * k * si, .b_bytes = n * k * si, .d_bytes = m * n * so};
}

/* The device rows array of a contiguous (offsets) or masked (counts) shape,
 * uploaded once. */
static bool upload_rows(group_set *gs, const shape *s)
{
    int32_t host[JG_GROUPED_MAX_DEVICE_GROUPS + 1];
    bool contiguous = s->layout == JG_GROUPED_CONTIGUOUS;
    int n = contiguous ? s->g + 1 : s->g;
    for (int i = 0; i < n; ++i)
        host[i] = (int32_t)(contiguous ? group_row0(s, i) : s->gm[i]);
    void *dev = NULL;
    bool ok = !CUDA_FAILED(cudaMalloc(&dev, (size_t)n * sizeof *host));
    gs->rows = dev;
    return ok && !CUDA_FAILED(cudaMemcpy(dev, host, (size_t)n * sizeof *host,
                                         cudaMemcpyHostToDevice));
}

/* Contiguous and masked layouts: one random normal A ([m, k] or
 * [g, m_max, k]) and B ([g, n, k]), every D ([m, n] or [g, m_max, n]: ours
 * and `peers` peers'), the rows array, and a view of each non-empty group. */
static bool grouped_alloc_whole(group_set *gs, const shape *s, int peers)
{
    jg_dtype in = s->in, out = s->out;
    size_t rows = (size_t)group_row0(s, s->g), n = (size_t)s->n, k = (size_t)s->k;
    uint64_t seed = 2 * (uint64_t)s->seed * JG_GROUPED_MAX_GROUPS + 1;
    if (!upload_rows(gs, s) ||
        !operands_alloc(&gs->whole, s->name, rows * k, (size_t)s->g * n * k, rows * n, in, out,
                        peers, seed)) /* ends with a device sync: the rows are there too */
        return false;
    for (int i = 0; i < s->g; ++i)
        if (s->gm[i])
            gs->o[i] = group_view(&gs->whole, s, i, in, out);
    return true;
}

/* The operands of the shape's layout, our launch's arguments, and, with
 * `peer`, the cuBLASLt GEMM of every non-empty group (pointed at that
 * group's rows) and cuBLAS grouped where it loaded; false (reported) if the
 * operands cannot be made. */
static bool grouped_init(group_set *gs, bench *b, const shape *s, bool peer)
{
    bool list = s->layout == JG_GROUPED_LIST;
    int peers = peer ? 1 + b->have_cb : 0; /* D buffers besides ours */
    if (!(list ? grouped_alloc_list(gs, s, peers) : grouped_alloc_whole(gs, s, peers)))
        return false;
    gs->peer = peer;
    for (int i = 0; i < s->g; ++i) {
        if (!s->gm[i])
            continue;
        shape one = group_shape(s, i);
        gs->peer = gs->peer && lt_gemm_init(&gs->lt[i], b, &one, NULL, "its columns stay empty");
        gs->lt[i].a = gs->o[i].a;
        gs->lt[i].b = gs->o[i].b;
        gs->lt[i].d = gs->o[i].d_peer;
    }
    for (int i = 0; i < (list ? s->g : 1); ++i) {
        const operands *o = list ? &gs->o[i] : &gs->whole;
        gs->job.a[i] = o->a;
        gs->job.b[i] = o->b;
        gs->job.d[i] = o->d_ours;
    }
    gs->job.args = (jg_grouped_args){.a = gs->job.a, .b = gs->job.b, .d = gs->job.d,
                                     .alpha = 1.0f, .rows = gs->rows};
    if (peers == 2)
        cb_grouped_init(&gs->cb, b, s, gs->o);
    return true;
}

/* Frees what grouped_init made (also after it failed half-way). */
static void grouped_free(group_set *gs, const shape *s)
{
    for (int i = 0; i < s->g; ++i) {
        lt_gemm_destroy(&gs->lt[i]);
        if (s->layout == JG_GROUPED_LIST)
            operands_free(&gs->o[i]); /* else a view into `whole` */
    }
    operands_free(&gs->whole);
    cudaFree(gs->rows);
    cudaFree(gs->cb.ptr);
    free(gs);
}

/* Chooses each non-empty group's algorithm as a dense row does (lt_pick)
 * and builds the loop; false if a group has none that runs. */
static bool grouped_pick(group_set *gs, const shape *s, row *r)
{
    gs->loop.n = 0;
    for (int i = 0; i < s->g; ++i) {
        r->group_algo[i] = -1;
        if (!s->gm[i])
            continue;
        if (!lt_pick(&gs->lt[i], &gs->loop.best[gs->loop.n]))
            return false;
        r->group_algo[i] = gs->loop.best[gs->loop.n++].algo;
    }
    return true;
}

/* Times our one launch, the cuBLASLt loop and cuBLAS grouped (those that
 * run) in alternation, as time_row does for a dense row; each peer's time
 * goes into its own column of the row. */
static void time_grouped(bench *b, group_set *gs, const shape *s, row *r)
{
    timed t[MAX_TIMED] = {{grouped_launch, &gs->job}};
    double us[MAX_TIMED];
    int n = 1, lt_at = 0, cb_at = 0; /* their places in t; 0: not timed */
    if (gs->peer) {
        if (!grouped_pick(gs, s, r)) {
            snprintf(r->error, sizeof r->error, "cuBLASLt failed (see above)");
            return;
        }
        lt_at = n;
        t[n++] = (timed){lt_loop_launch, &gs->loop};
    }
    if (gs->cb.count) {
        cb_at = n;
        t[n++] = (timed){cb_grouped_launch, &gs->cb};
    }
    int bad = time_with_peers(b, t, n, 1, r, us);
    if (bad > 0)
        snprintf(r->error, sizeof r->error, "%s failed to launch",
                 bad == lt_at ? "the cuBLASLt loop" : "cuBLAS grouped");
    else if (bad < 0) {
        r->lt_loop_us = lt_at ? us[lt_at] : NAN;
        r->grouped_us = cb_at ? us[cb_at] : NAN;
    }
}

/* Checks every non-empty group as a dense row is checked (o[i]: its m_g
 * valid rows, whatever the layout): ours against the cuBLASLt loop (else
 * FP64 rows), and cuBLAS grouped against the cuBLASLt loop (else ours). The
 * row gets the worst difference of each. False if an output cannot be read
 * back. */
static bool check_grouped(const group_set *gs, const shape *s, row *r)
{
    bool lt = isfinite(r->lt_loop_us), cb = isfinite(r->grouped_us);
    double worst = 0, worst_cb = 0, diff;
    for (int i = 0; i < s->g; ++i) {
        const operands *o = &gs->o[i];
        if (!s->gm[i])
            continue;
        shape one = group_shape(s, i);
        if (!check_output(o, &one, lt, &diff))
            return false;
        if (!(diff <= worst)) /* keeps a NaN */
            worst = diff;
        if (cb && !diff_device(o->d_peer2, lt ? o->d_peer : o->d_ours, o->d_bytes, s->out,
                               &diff))
            return false;
        if (cb && !(diff <= worst_cb))
            worst_cb = diff;
    }
    set_check(r, worst, lt);
    r->grouped_diff = cb ? worst_cb : NAN;
    return true;
}

/* The row's peer: the faster of the cuBLASLt loop and cuBLAS grouped, the
 * latter only if its output agreed (a warning says so when it did not). */
static void pick_grouped_peer(row *r)
{
    bool cb = isfinite(r->grouped_us) && r->grouped_diff <= PEER_TOL;
    if (isfinite(r->grouped_us) && !cb)
        fprintf(stderr, "jitgemm-bench: WARNING: %s: cuBLAS grouped differs from the %s by "
                        "%.2e (max rel diff; more than bf16 rounding, %.0e): not used as the "
                        "row's peer\n", r->s->name,
                isfinite(r->lt_loop_us) ? "cuBLASLt loop" : "libjitgemm output",
                r->grouped_diff, PEER_TOL);
    if (cb && !(r->lt_loop_us <= r->grouped_us)) {
        r->peer = "cuBLAS grouped";
        r->peer_us = r->grouped_us;
    } else if (isfinite(r->lt_loop_us)) {
        r->peer = "cuBLASLt loop";
        r->peer_us = r->lt_loop_us;
    }
}

/* Plans, sets up, times and checks one grouped shape; r->error says why if
 * it could not. */
void run_grouped(bench *b, const shape *s, row *r)
{
    group_set *gs = calloc(1, sizeof *gs);
    if (!gs) {
        snprintf(r->error, sizeof r->error, "out of host memory");
        return;
    }
    gs->job.plan = plan_grouped(b, s, r); /* r->error says why if NULL */
    if (gs->job.plan && !grouped_init(gs, b, s, b->have_lt && !b->opt.no_peer))
        snprintf(r->error, sizeof r->error, "cannot set up the operands (see above)");
    else if (gs->job.plan) {
        time_grouped(b, gs, s, r);
        if (!r->error[0] && !check_grouped(gs, s, r))
            snprintf(r->error, sizeof r->error, "cannot read the outputs back");
        else if (!r->error[0])
            pick_grouped_peer(r);
    }
    grouped_free(gs, s);
}
