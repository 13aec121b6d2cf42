/* Grouped GEMM, list layout, on the GPU against the FP64 reference: the
 * seeds' four benchmark cases, then random cases (1..64 groups, rows
 * including 0 and 1, every type, with and without C), each launched twice
 * on the same pointers (the second launch reuses the cached tensor maps).
 * Every group's D is poisoned before each launch and checked whole. Then
 * the contiguous and masked layouts: random counts on the device, a second
 * launch after new counts (every other case through a captured CUDA graph
 * replayed after the counts changed), rows of no group left untouched.
 * Every other random case is planned in a context made with
 * JITGEMM_CLUSTER=2 (clusters of 2 with multicast B where tiles pair up).
 *   test_grouped [--seed S] [--count N]      (default 16 random cases) */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jg_test.h"
#include "jg_test_gpu.h"

typedef struct group_bufs {
    jg_mat a, b, c, d;
} group_bufs;

typedef struct grouped_case {
    const char *name;
    int32_t groups;
    int64_t m[JG_GROUPED_MAX_GROUPS];
    int64_t n, k;
    jg_dtype ab, d;
    bool has_c;
    float alpha, beta;
} grouped_case;

static jg_grouped_problem problem_of(const grouped_case *gc)
{
    jg_grouped_problem p = {.layout = JG_GROUPED_LIST, .a_type = gc->ab, .b_type = gc->ab,
                            .c_type = gc->has_c ? gc->d : JG_DTYPE_NONE, .d_type = gc->d,
                            .groups = gc->groups, .m = gc->m, .n = gc->n, .k = gc->k};
    return p;
}

static void groups_init(group_bufs *g, const grouped_case *gc, jg_rng *r)
{
    for (int32_t i = 0; i < gc->groups; ++i) {
        memset(&g[i], 0, sizeof g[i]);
        if (!gc->m[i])
            continue;
        jg_mat_init(&g[i].a, gc->ab, gc->m[i], gc->k, 0);
        jg_mat_init(&g[i].b, gc->ab, gc->n, gc->k, 0);
        jg_mat_init(&g[i].d, gc->d, gc->m[i], gc->n, 0);
        jg_mat_fill_normal(&g[i].a, r);
        jg_mat_fill_normal(&g[i].b, r);
        jg_mat_upload(&g[i].a);
        jg_mat_upload(&g[i].b);
        if (gc->has_c) {
            jg_mat_init(&g[i].c, gc->d, gc->m[i], gc->n, 0);
            jg_mat_fill_normal(&g[i].c, r);
            jg_mat_upload(&g[i].c);
        }
    }
}

static void groups_free(group_bufs *g, const grouped_case *gc)
{
    for (int32_t i = 0; i < gc->groups; ++i) {
        if (!gc->m[i])
            continue;
        jg_mat_free(&g[i].a);
        jg_mat_free(&g[i].b);
        jg_mat_free(&g[i].d);
        if (gc->has_c)
            jg_mat_free(&g[i].c);
    }
}

/* One launch: poison every D, run, check every group with rows. */
static bool launch_and_check(jg_context *ctx, const grouped_case *gc, group_bufs *g,
                             const jg_grouped_args *args, int round, jg_rng *r)
{
    for (int32_t i = 0; i < gc->groups; ++i)
        if (gc->m[i])
            jg_mat_poison(&g[i].d);
    jg_grouped_problem p = problem_of(gc);
    jg_status st = jg_grouped(ctx, &p, args, NULL);
    CHECK(st == JG_OK, "%s: jg_grouped: %s: %s", gc->name, jg_status_name(st),
          jg_context_last_error(ctx));
    if (st != JG_OK)
        return false;
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    bool ok = true;
    for (int32_t i = 0; i < gc->groups; ++i) {
        if (!gc->m[i])
            continue;
        jg_mat_download(&g[i].d);
        jg_gemm_check ck = {.a = &g[i].a, .b = &g[i].b, .c = gc->has_c ? &g[i].c : NULL,
                            .d = &g[i].d, .m = gc->m[i], .alpha = gc->alpha, .beta = gc->beta};
        jg_gemm_verify(&ck, r);
        if (!ck.ok) {
            char line[512];
            jg_check_describe(&ck, line, sizeof line);
            CHECK(ck.ok, "%s round %d group %d (m %lld): %s", gc->name, round, (int)i,
                  (long long)gc->m[i], line);
            ok = false;
        }
    }
    return ok;
}

static void run_case(jg_context *ctx, const grouped_case *gc, jg_rng *r)
{
    group_bufs *g = calloc((size_t)gc->groups, sizeof *g);
    const void *a[JG_GROUPED_MAX_GROUPS] = {0}, *b[JG_GROUPED_MAX_GROUPS] = {0};
    const void *c[JG_GROUPED_MAX_GROUPS] = {0};
    void *d[JG_GROUPED_MAX_GROUPS] = {0};
    groups_init(g, gc, r);
    for (int32_t i = 0; i < gc->groups; ++i) {
        a[i] = g[i].a.dev;
        b[i] = g[i].b.dev;
        c[i] = gc->has_c ? g[i].c.dev : NULL;
        d[i] = g[i].d.dev;
    }
    jg_grouped_args args = {.a = a, .b = b, .c = gc->has_c ? c : NULL, .d = d,
                            .alpha = gc->alpha, .beta = gc->beta};
    bool ok = launch_and_check(ctx, gc, g, &args, 1, r) && launch_and_check(ctx, gc, g, &args, 2, r);
    int64_t rows = 0;
    for (int32_t i = 0; i < gc->groups; ++i)
        rows += gc->m[i];
    printf("  %-10s %2d groups, %5lld rows, n %lld k %lld %s->%s%s: %s\n", gc->name,
           (int)gc->groups, (long long)rows, (long long)gc->n, (long long)gc->k,
           jg_test_dtype_str(gc->ab), jg_test_dtype_str(gc->d), gc->has_c ? " +C" : "",
           ok ? "ok" : "FAILED");
    groups_free(g, gc);
    free(g);
}

/* The seeds' cases (shared/bench/shapes.jsonl), BF16 in and out. */
static const grouped_case seeds[] = {
    {"seed1", 8, {80, 176, 128, 72, 64, 248, 96, 160}, 4096, 7168, JG_BF16, JG_BF16, false, 1, 0},
    {"seed2", 8, {40, 76, 168, 72, 164, 148, 196, 160}, 7168, 2048, JG_BF16, JG_BF16, false, 1, 0},
    {"seed3", 2, {192, 320}, 3072, 4096, JG_BF16, JG_BF16, false, 1, 0},
    {"seed4", 2, {128, 384}, 4096, 1536, JG_BF16, JG_BF16, false, 1, 0},
};

static int64_t pick(jg_rng *r, const int64_t *v, size_t n) { return v[jg_rng_below(r, n)]; }

static grouped_case random_case(jg_rng *r, int index)
{
    static const int64_t nk[] = {8, 56, 64, 72, 128, 200, 256, 512, 520, 1024};
    static const int64_t rows[] = {0, 1, 7, 63, 64, 65, 127, 128, 129, 255, 300};
    static const jg_dtype outs[] = {JG_BF16, JG_FP16, JG_FP32};
    grouped_case gc = {.name = "random"};
    gc.groups = index == 0 ? JG_GROUPED_MAX_GROUPS : 1 + (int32_t)jg_rng_below(r, 16);
    for (int32_t i = 0; i < gc.groups; ++i)
        gc.m[i] = jg_rng_below(r, 2) ? pick(r, rows, (sizeof rows / sizeof rows[0]))
                                      : (int64_t)jg_rng_below(r, 301);
    gc.n = pick(r, nk, (sizeof nk / sizeof nk[0]));
    gc.k = pick(r, nk, (sizeof nk / sizeof nk[0]));
    gc.ab = jg_rng_below(r, 2) ? JG_BF16 : JG_FP16;
    gc.d = outs[jg_rng_below(r, 3)];
    gc.has_c = jg_rng_below(r, 2);
    gc.alpha = (float)(0.5 + 1.5 * jg_rng_uniform(r));
    gc.beta = gc.has_c ? (float)(2 * jg_rng_uniform(r) - 1) : 0.0f;
    return gc;
}

/* ---- contiguous and masked layouts: rows on the device ------------------ */

/* Rows [row0, row0 + rows) of a matrix, as a matrix of its own. */
static jg_mat view_rows(const jg_mat *m, int64_t row0, int64_t rows)
{
    jg_mat v = *m;
    size_t off = (size_t)row0 * (size_t)m->ld * jg_test_dtype_size(m->type);
    v.rows = rows;
    v.bytes = (size_t)rows * (size_t)m->ld * jg_test_dtype_size(m->type);
    v.host = (char *)m->host + off;
    v.dev = (char *)m->dev + off;
    return v;
}

typedef struct device_case {
    const char *name;
    jg_grouped_layout layout;
    int32_t groups;
    int32_t count[JG_GROUPED_MAX_DEVICE_GROUPS]; /* rows of each group */
    int64_t m_max, n, k;
    jg_dtype ab, d;
    bool has_c;
    float alpha, beta;
} device_case;

/* First row of group g in A and D. */
static int64_t group_row(const device_case *dc, int32_t g)
{
    if (dc->layout == JG_GROUPED_MASKED)
        return (int64_t)g * dc->m_max;
    int64_t r = 0;
    for (int32_t i = 0; i < g; ++i)
        r += dc->count[i];
    return r;
}

/* The device's rows array: offsets (contiguous) or counts (masked). */
static void upload_rows(const device_case *dc, int32_t *dev)
{
    int32_t host[JG_GROUPED_MAX_DEVICE_GROUPS + 1];
    int n = dc->layout == JG_GROUPED_CONTIGUOUS ? dc->groups + 1 : dc->groups;
    for (int32_t g = 0; g < n; ++g)
        host[g] = dc->layout == JG_GROUPED_CONTIGUOUS ? (int32_t)group_row(dc, g) : dc->count[g];
    CUDA_CHECK(cudaMemcpy(dev, host, sizeof(int32_t) * (size_t)n, cudaMemcpyHostToDevice));
}

/* Every group's rows of D against the reference; every other row of D
 * (slack, masked rows past a count) still poison. */
static bool check_device_case(const device_case *dc, const jg_mat *a, const jg_mat *b,
                              const jg_mat *c, jg_mat *d, const char *what, jg_rng *r)
{
    jg_mat_download(d);
    bool ok = true;
    unsigned char *written = calloc((size_t)d->rows, 1);
    for (int32_t g = 0; g < dc->groups; ++g) {
        if (!dc->count[g])
            continue;
        const int64_t row0 = group_row(dc, g);
        jg_mat av = view_rows(a, row0, dc->count[g]), dv = view_rows(d, row0, dc->count[g]);
        jg_mat bv = view_rows(b, (int64_t)g * dc->n, dc->n), cv;
        if (c)
            cv = view_rows(c, row0, dc->count[g]);
        memset(written + row0, 1, (size_t)dc->count[g]);
        jg_gemm_check ck = {.a = &av, .b = &bv, .c = c ? &cv : NULL, .d = &dv,
                            .m = dc->count[g], .alpha = dc->alpha, .beta = dc->beta};
        if (!jg_gemm_verify(&ck, r)) {
            char line[512];
            jg_check_describe(&ck, line, sizeof line);
            CHECK(0, "%s group %d (rows %d): %s", what, (int)g, (int)dc->count[g], line);
            ok = false;
        }
    }
    for (int64_t i = 0; i < d->rows; ++i)
        if (!written[i] && !jg_mat_is_poison(d, i, 0)) {
            CHECK(0, "%s: row %lld belongs to no group but was written", what, (long long)i);
            ok = false;
            break;
        }
    free(written);
    return ok;
}

static jg_grouped_problem device_problem(const device_case *dc)
{
    jg_grouped_problem p = {.layout = dc->layout, .a_type = dc->ab, .b_type = dc->ab,
                            .c_type = dc->has_c ? dc->d : JG_DTYPE_NONE, .d_type = dc->d,
                            .groups = dc->groups, .n = dc->n, .k = dc->k, .m_max = dc->m_max};
    return p;
}

/* Runs a contiguous or masked case twice; with graph, the second run is a
 * replay of a captured launch after new counts were written on the device. */
static void run_device_case(jg_context *ctx, device_case *dc, bool graph, jg_rng *r)
{
    const int64_t rows = dc->layout == JG_GROUPED_MASKED ? dc->groups * dc->m_max : dc->m_max;
    jg_mat a, b, c, d;
    jg_mat_init(&a, dc->ab, rows, dc->k, 0);
    jg_mat_init(&b, dc->ab, (int64_t)dc->groups * dc->n, dc->k, 0);
    jg_mat_init(&d, dc->d, rows, dc->n, 0);
    jg_mat_fill_normal(&a, r);
    jg_mat_fill_normal(&b, r);
    jg_mat_upload(&a);
    jg_mat_upload(&b);
    if (dc->has_c) {
        jg_mat_init(&c, dc->d, rows, dc->n, 0);
        jg_mat_fill_normal(&c, r);
        jg_mat_upload(&c);
    }
    int32_t *rows_dev;
    CUDA_CHECK(cudaMalloc((void **)&rows_dev, sizeof(int32_t) * (JG_GROUPED_MAX_DEVICE_GROUPS + 1)));
    const void *ap[1] = {a.dev}, *bp[1] = {b.dev}, *cp[1] = {dc->has_c ? c.dev : NULL};
    void *dp[1] = {d.dev};
    jg_grouped_args args = {.a = ap, .b = bp, .c = dc->has_c ? cp : NULL, .d = dp,
                            .alpha = dc->alpha, .beta = dc->beta, .rows = rows_dev};
    jg_grouped_problem p = device_problem(dc);
    jg_plan *plan = NULL;
    JG_REQUIRE(ctx, jg_grouped_plan(ctx, &p, &plan));
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    cudaGraphExec_t exec = NULL;
    upload_rows(dc, rows_dev);
    jg_mat_poison(&d);
    if (graph) {
        cudaGraph_t g;
        CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
        jg_status st = jg_grouped_run(plan, &args, stream);
        CUDA_CHECK(cudaStreamEndCapture(stream, &g));
        CHECK(st == JG_OK, "%s: run under capture: %s", dc->name, jg_context_last_error(ctx));
        CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
        CUDA_CHECK(cudaGraphDestroy(g));
        CUDA_CHECK(cudaGraphLaunch(exec, stream));
    } else {
        JG_REQUIRE(ctx, jg_grouped_run(plan, &args, stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    bool ok = check_device_case(dc, &a, &b, dc->has_c ? &c : NULL, &d, dc->name, r);
    /* New counts on the device; the same plan (or graph) serves them.
     * Contiguous: the counts rotated by one group (same total rows). */
    const int32_t first = dc->count[0];
    for (int32_t g = 0; g < dc->groups; ++g)
        dc->count[g] = dc->layout == JG_GROUPED_MASKED
                           ? (int32_t)jg_rng_below(r, (uint64_t)dc->m_max + 1)
                       : g + 1 < dc->groups ? dc->count[g + 1]
                                            : first;
    upload_rows(dc, rows_dev);
    jg_mat_poison(&d);
    if (graph)
        CUDA_CHECK(cudaGraphLaunch(exec, stream));
    else
        JG_REQUIRE(ctx, jg_grouped_run(plan, &args, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    ok &= check_device_case(dc, &a, &b, dc->has_c ? &c : NULL, &d, dc->name, r);
    printf("  %-10s %3d groups, m_max %lld, n %lld k %lld %s->%s%s%s: %s\n", dc->name,
           (int)dc->groups, (long long)dc->m_max, (long long)dc->n, (long long)dc->k,
           jg_test_dtype_str(dc->ab), jg_test_dtype_str(dc->d), dc->has_c ? " +C" : "",
           graph ? " (graph)" : "", ok ? "ok" : "FAILED");
    if (exec)
        CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaFree(rows_dev));
    jg_mat_free(&a);
    jg_mat_free(&b);
    jg_mat_free(&d);
    if (dc->has_c)
        jg_mat_free(&c);
}

static device_case random_device_case(jg_rng *r, jg_grouped_layout layout, int index)
{
    static const int64_t nk[] = {8, 64, 72, 128, 200, 256, 520};
    static const jg_dtype outs[] = {JG_BF16, JG_FP16, JG_FP32};
    device_case dc = {.name = layout == JG_GROUPED_MASKED ? "masked" : "contiguous",
                      .layout = layout};
    dc.groups = index == 0 ? 200 : 1 + (int32_t)jg_rng_below(r, 32);
    dc.m_max = layout == JG_GROUPED_MASKED ? 1 + (int64_t)jg_rng_below(r, 300) : 0;
    int64_t total = 0;
    for (int32_t g = 0; g < dc.groups; ++g) {
        int64_t cap = layout == JG_GROUPED_MASKED ? dc.m_max : 300;
        dc.count[g] = jg_rng_below(r, 4) == 0 ? 0 : (int32_t)jg_rng_below(r, (uint64_t)cap + 1);
        total += dc.count[g];
    }
    if (layout == JG_GROUPED_CONTIGUOUS)
        dc.m_max = total + 1 + (int64_t)jg_rng_below(r, 100); /* slack rows stay untouched */
    dc.n = nk[jg_rng_below(r, sizeof nk / sizeof nk[0])];
    dc.k = nk[jg_rng_below(r, sizeof nk / sizeof nk[0])];
    dc.ab = jg_rng_below(r, 2) ? JG_BF16 : JG_FP16;
    dc.d = outs[jg_rng_below(r, 3)];
    dc.has_c = jg_rng_below(r, 2);
    dc.alpha = (float)(0.5 + 1.5 * jg_rng_uniform(r));
    dc.beta = dc.has_c ? (float)(2 * jg_rng_uniform(r) - 1) : 0.0f;
    return dc;
}

int main(int argc, char **argv)
{
    const int count = jg_test_count(argc, argv, 16);
    jg_test_gpu_init();
    jg_rng r;
    jg_rng_seed(&r, jg_test_seed(argc, argv, "test_grouped"));
    jg_context *ctx = jg_test_context();
    setenv("JITGEMM_CLUSTER", "2", 1); /* read once, when the context is made */
    jg_context *ctx2 = jg_test_context();
    unsetenv("JITGEMM_CLUSTER");
    for (size_t i = 0; i < (sizeof seeds / sizeof seeds[0]); ++i)
        run_case(ctx, &seeds[i], &r);
    for (int i = 0; i < count; ++i) {
        grouped_case gc = random_case(&r, i);
        run_case(i % 2 ? ctx2 : ctx, &gc, &r);
    }
    for (int i = 0; i < count / 2; ++i) {
        for (int layout = JG_GROUPED_CONTIGUOUS; layout <= JG_GROUPED_MASKED; ++layout) {
            device_case dc = random_device_case(&r, (jg_grouped_layout)layout, i);
            run_device_case(i / 2 % 2 ? ctx2 : ctx, &dc, i % 2 == 1, &r);
        }
    }
    jg_context_destroy(ctx);
    jg_context_destroy(ctx2);
    return jg_test_result("test_grouped");
}
