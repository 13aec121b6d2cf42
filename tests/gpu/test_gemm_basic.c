/* Targeted GEMM cases on an sm_90 GPU, each checked against the FP64
 * reference of jg_test_gpu.h: a large square problem, tiny and ragged
 * shapes, C with beta, C aliasing D, padded leading dimensions, one
 * M-generic plan run with several M, plan caching and introspection, and
 * argument errors that must launch nothing. Exits 77 without such a GPU. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "jg_test.h"
#include "jg_test_gpu.h"

typedef struct gemm_case {
    const char *name;
    jg_dtype ab, d;
    bool has_c, in_place; /* in_place: C and D are the same buffer */
    uint32_t flags;
    int64_t m, n, k;
    int64_t lda, ldb, ldc, ldd; /* 0: packed */
    float alpha, beta;
    bool banded; /* the plan's tile order in bands other than the default's ("_g" in its name) */
} gemm_case;

/* Host and device copies of one case's operands. */
typedef struct gemm_bufs {
    jg_mat a, b, c, d;
    bool has_c;
} gemm_bufs;

static jg_gemm_problem case_problem(const gemm_case *gc)
{
    jg_gemm_problem p;
    memset(&p, 0, sizeof p);
    p.flags = gc->flags;
    p.a_type = p.b_type = gc->ab;
    p.d_type = gc->d;
    p.c_type = gc->has_c ? gc->d : JG_DTYPE_NONE;
    p.m = gc->m;
    p.n = gc->n;
    p.k = gc->k;
    p.lda = gc->lda;
    p.ldb = gc->ldb;
    p.ldc = gc->has_c ? gc->ldc : 0;
    p.ldd = gc->ldd;
    return p;
}

/* Random A, B (and C) for `rows` rows of A, C and D, uploaded; D unset. */
static void bufs_init(gemm_bufs *bf, const jg_gemm_problem *p, int64_t rows, jg_rng *r)
{
    memset(bf, 0, sizeof *bf);
    bf->has_c = p->c_type != JG_DTYPE_NONE;
    jg_mat_init(&bf->a, p->a_type, rows, p->k, p->lda);
    jg_mat_init(&bf->b, p->b_type, p->n, p->k, p->ldb);
    jg_mat_init(&bf->d, p->d_type, rows, p->n, p->ldd);
    jg_mat_fill_normal(&bf->a, r);
    jg_mat_fill_normal(&bf->b, r);
    jg_mat_upload(&bf->a);
    jg_mat_upload(&bf->b);
    if (bf->has_c) {
        jg_mat_init(&bf->c, p->c_type, rows, p->n, p->ldc);
        jg_mat_fill_normal(&bf->c, r);
        jg_mat_upload(&bf->c);
    }
}

static void bufs_free(gemm_bufs *bf)
{
    jg_mat_free(&bf->a);
    jg_mat_free(&bf->b);
    jg_mat_free(&bf->d);
    if (bf->has_c)
        jg_mat_free(&bf->c);
}

/* Downloads D and checks rows [0, m) against the reference. */
static bool check_d(gemm_bufs *bf, int64_t m, float alpha, float beta, const char *what,
                    jg_rng *r)
{
    return jg_check_d(&bf->a, &bf->b, bf->has_c ? &bf->c : NULL, &bf->d, m, alpha, beta, what, r);
}

/* Launches with the given args (D already poisoned or holding C), waits,
 * downloads D and checks rows [0, m) against the reference. */
static void launch_and_check(jg_plan *plan, const jg_gemm_args *args, gemm_bufs *bf, int64_t m,
                             float alpha, float beta, const char *what, cudaStream_t stream,
                             jg_rng *r)
{
    jg_status st = jg_gemm_run(plan, args, stream);
    jg_plan_info info;
    jg_plan_get_info(plan, &info);
    CHECK(st == JG_OK, "%s: jg_gemm_run: %s", what, jg_status_name(st));
    if (st != JG_OK)
        return;
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    char label[256];
    snprintf(label, sizeof label, "%s (%s)", what, info.kernel_name);
    check_d(bf, m, alpha, beta, label, r);
}

/* Whether a kernel name says a band of the tile order ("_g" and its rows;
 * every name holds "_gemm") */
static bool names_band(const char *name)
{
    for (const char *g = strstr(name, "_g"); g; g = strstr(g + 2, "_g"))
        if (g[2] >= '0' && g[2] <= '9')
            return true;
    return false;
}

static void run_case(jg_context *ctx, const gemm_case *gc, cudaStream_t stream, jg_rng *r)
{
    jg_gemm_problem p = case_problem(gc);
    jg_plan *plan = NULL;
    jg_status st = jg_gemm_plan(ctx, &p, &plan);
    CHECK(st == JG_OK, "%s: jg_gemm_plan: %s: %s", gc->name, jg_status_name(st),
          jg_context_last_error(ctx));
    if (st != JG_OK)
        return;
    if (gc->banded) {
        jg_plan_info info;
        CHECK(jg_plan_get_info(plan, &info) == JG_OK && names_band(info.kernel_name),
              "%s: the plan's tile order keeps the default bands (%s)", gc->name, info.kernel_name);
    }
    gemm_bufs bf;
    bufs_init(&bf, &p, gc->m, r);
    jg_gemm_args args = {.a = bf.a.dev, .b = bf.b.dev, .c = bf.has_c ? bf.c.dev : NULL,
                         .d = bf.d.dev, .alpha = gc->alpha, .beta = gc->beta};
    if (gc->in_place) {
        /* D starts as C (same layout); the reference reads C's host copy. */
        CHECK(bf.c.bytes == bf.d.bytes, "%s: in-place needs ldc == ldd", gc->name);
        CUDA_CHECK(cudaMemcpy(bf.d.dev, bf.c.host, bf.d.bytes, cudaMemcpyHostToDevice));
        args.c = bf.d.dev;
    } else {
        jg_mat_poison(&bf.d);
    }
    launch_and_check(plan, &args, &bf, gc->m, gc->alpha, gc->beta, gc->name, stream, r);
    bufs_free(&bf);
}

/* One M-generic plan (tiles sized for a hint of 512 rows), buffers for
 * 1000 rows, run with several M: rows >= M must stay poisoned. m = 0 means
 * problem.m; 100 comes twice to reuse a cached tensor map. */
static void run_m_generic(jg_context *ctx, cudaStream_t stream, jg_rng *r)
{
    static const int64_t ms[] = {1, 100, 1000, 0, 100};
    const int64_t rows = 1000;
    gemm_case gc = {.name = "m-generic", .ab = JG_BF16, .d = JG_FP32, .has_c = true,
                    .flags = JG_GEMM_M_GENERIC, .m = 512, .n = 264, .k = 200,
                    .alpha = 0.75f, .beta = 0.5f};
    jg_gemm_problem p = case_problem(&gc);
    jg_plan *plan = NULL;
    jg_status st = jg_gemm_plan(ctx, &p, &plan);
    CHECK(st == JG_OK, "m-generic: jg_gemm_plan: %s: %s", jg_status_name(st),
          jg_context_last_error(ctx));
    if (st != JG_OK)
        return;
    gemm_bufs bf;
    bufs_init(&bf, &p, rows, r);
    for (size_t t = 0; t < sizeof ms / sizeof ms[0]; ++t) {
        jg_gemm_args args = {.a = bf.a.dev, .b = bf.b.dev, .c = bf.c.dev, .d = bf.d.dev,
                             .alpha = gc.alpha, .beta = gc.beta, .m = ms[t]};
        char what[64];
        snprintf(what, sizeof what, "m-generic args.m=%lld", (long long)ms[t]);
        jg_mat_poison(&bf.d);
        launch_and_check(plan, &args, &bf, ms[t] ? ms[t] : p.m, gc.alpha, gc.beta, what, stream,
                         r);
    }
    bufs_free(&bf);
}

/* jg_gemm_run under CUDA stream capture records the launch without running
 * it; replaying the graph computes D (twice, D poisoned before each). */
static void run_in_graph(jg_context *ctx, cudaStream_t stream, jg_rng *r)
{
    gemm_case gc = {.name = "graph", .ab = JG_BF16, .d = JG_BF16, .m = 300, .n = 520, .k = 264,
                    .alpha = 1.25f};
    jg_gemm_problem p = case_problem(&gc);
    jg_plan *plan = NULL;
    JG_REQUIRE(ctx, jg_gemm_plan(ctx, &p, &plan));
    gemm_bufs bf;
    bufs_init(&bf, &p, gc.m, r);
    jg_gemm_args args = {.a = bf.a.dev, .b = bf.b.dev, .d = bf.d.dev, .alpha = gc.alpha};
    jg_mat_poison(&bf.d);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    jg_status st = jg_gemm_run(plan, &args, stream);
    CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
    CHECK(st == JG_OK, "graph: jg_gemm_run under capture: %s", jg_context_last_error(ctx));
    CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    jg_mat_download(&bf.d);
    CHECK(jg_mat_is_poison(&bf.d, 0, 0) && jg_mat_is_poison(&bf.d, gc.m - 1, gc.n - 1),
          "graph: the capture itself wrote D");
    for (int round = 0; round < 2; ++round) {
        jg_mat_poison(&bf.d);
        CUDA_CHECK(cudaGraphLaunch(exec, stream));
        CUDA_CHECK(cudaStreamSynchronize(stream));
        check_d(&bf, gc.m, gc.alpha, 0.0f, round ? "graph replay 2" : "graph replay 1", r);
    }
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    bufs_free(&bf);
}

/* A second jg_gemm_plan of the same problem comes from the memory cache:
 * same plan, plans_memory + 1, nothing compiled. */
static void check_plan_cache(jg_context *ctx)
{
    jg_gemm_problem p = {.a_type = JG_FP16, .b_type = JG_FP16, .d_type = JG_FP16,
                         .m = 256, .n = 128, .k = 64};
    jg_plan *first = NULL, *second = NULL;
    jg_context_stats s0, s1;
    JG_REQUIRE(ctx, jg_gemm_plan(ctx, &p, &first));
    JG_REQUIRE(ctx, jg_context_get_stats(ctx, &s0));
    JG_REQUIRE(ctx, jg_gemm_plan(ctx, &p, &second));
    JG_REQUIRE(ctx, jg_context_get_stats(ctx, &s1));
    CHECK(first == second, "second plan %p differs from the first %p", (void *)second,
          (void *)first);
    CHECK(s1.plans_memory == s0.plans_memory + 1, "plans_memory %llu -> %llu, want +1",
          (unsigned long long)s0.plans_memory, (unsigned long long)s1.plans_memory);
    CHECK(s1.plans_compiled == s0.plans_compiled, "plans_compiled %llu -> %llu, want unchanged",
          (unsigned long long)s0.plans_compiled, (unsigned long long)s1.plans_compiled);
    jg_plan_info info;
    memset(&info, 0, sizeof info);
    JG_REQUIRE(ctx, jg_plan_get_info(first, &info));
    CHECK(info.kernel_name && strncmp(info.kernel_name, "jg_gemm_", 8) == 0,
          "kernel_name \"%s\" does not start with jg_gemm_",
          info.kernel_name ? info.kernel_name : "(null)");
    CHECK(info.grid >= 1 && info.threads >= 128 && info.block_k > 0 && info.stages >= 1,
          "plan info: grid %u threads %u block_k %u stages %u", info.grid, info.threads,
          info.block_k, info.stages);
    printf("  %-28s %s: plans_memory %llu -> %llu\n", "plan cache", info.kernel_name,
           (unsigned long long)s0.plans_memory, (unsigned long long)s1.plans_memory);
}

/* Expects jg_gemm_run to refuse args with status want and a message. */
static void expect_refused(jg_plan *plan, jg_context *ctx, const jg_gemm_args *args,
                           jg_status want, const char *what)
{
    jg_status st = jg_gemm_run(plan, args, NULL);
    CHECK(st == want, "%s: got %s, want %s", what, jg_status_name(st), jg_status_name(want));
    CHECK(jg_context_last_error(ctx)[0] != '\0', "%s: no last error message", what);
}

/* Bad arguments on a real context: the right status, and no launch (the
 * poisoned output stays poisoned everywhere). */
static void check_bad_args(jg_context *ctx, jg_rng *r)
{
    gemm_case gc = {.ab = JG_BF16, .d = JG_BF16, .m = 128, .n = 64, .k = 64, .alpha = 1.0f};
    jg_gemm_problem p = case_problem(&gc);
    jg_plan *plan = NULL;
    JG_REQUIRE(ctx, jg_gemm_plan(ctx, &p, &plan));
    gemm_bufs bf;
    bufs_init(&bf, &p, gc.m, r);
    jg_mat_poison(&bf.d);
    const jg_gemm_args good = {.a = bf.a.dev, .b = bf.b.dev, .d = bf.d.dev, .alpha = 1.0f};
    jg_gemm_args bad = good;
    bad.d = (uint16_t *)bf.d.dev + 1;
    expect_refused(plan, ctx, &bad, JG_ERR_MISALIGNED, "d + 1 element");
    bad = good;
    bad.a = NULL;
    expect_refused(plan, ctx, &bad, JG_ERR_NULL_POINTER, "a = NULL");
    bad = good;
    bad.m = 5; /* not M-generic: args.m must be 0 or problem.m */
    expect_refused(plan, ctx, &bad, JG_ERR_INVALID, "args.m != problem.m");
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    jg_mat_download(&bf.d);
    int64_t written = 0;
    for (int64_t i = 0; i < bf.d.rows; ++i)
        for (int64_t j = 0; j < bf.d.ld; ++j)
            written += !jg_mat_is_poison(&bf.d, i, j);
    CHECK(written == 0, "refused launches wrote %lld elements of D", (long long)written);
    printf("  %-28s refused with the right statuses, nothing written\n", "bad arguments");
    bufs_free(&bf);
}

/* The last three: operands past L2, the tile order in bands of 21 rows
 * (all of M's tiles), of one row, and swap-AB's in bands of one row
 * (plan_sm90.c's band_rows); every tile checked and none left unwritten. */
static const gemm_case cases[] = {
    {.name = "4096^3 bf16->bf16", .ab = JG_BF16, .d = JG_BF16, .m = 4096, .n = 4096, .k = 4096,
     .alpha = 1.0f},
    {.name = "1x8x8 bf16->fp32", .ab = JG_BF16, .d = JG_FP32, .m = 1, .n = 8, .k = 8,
     .alpha = 1.5f},
    {.name = "129x257x72 fp16->fp32 +C", .ab = JG_FP16, .d = JG_FP32, .has_c = true, .m = 129,
     .n = 257, .k = 72, .ldc = 264, .ldd = 264, .alpha = 1.25f, .beta = -0.75f},
    {.name = "in-place c==d fp16", .ab = JG_FP16, .d = JG_FP16, .has_c = true, .in_place = true,
     .m = 300, .n = 200, .k = 136, .alpha = 0.5f, .beta = 1.0f},
    {.name = "in-place c==d bf16->fp32", .ab = JG_BF16, .d = JG_FP32, .has_c = true,
     .in_place = true, .m = 257, .n = 384, .k = 520, .ldc = 392, .ldd = 392, .alpha = 1.0f,
     .beta = -0.5f},
    {.name = "padded ld bf16 +C", .ab = JG_BF16, .d = JG_BF16, .has_c = true, .m = 200, .n = 136,
     .k = 96, .lda = 128, .ldb = 104, .ldc = 144, .ldd = 152, .alpha = 2.0f, .beta = 0.25f},
    {.name = "padded ld fp16->fp32", .ab = JG_FP16, .d = JG_FP32, .m = 333, .n = 520, .k = 1000,
     .lda = 1008, .ldb = 1024, .ldd = 528, .alpha = 1.0f},
    {.name = "2578x5616x14336 bf16 banded", .ab = JG_BF16, .d = JG_BF16, .m = 2578, .n = 5616,
     .k = 14336, .alpha = 1.0f, .banded = true},
    {.name = "13693x1536x5120 fp16 banded", .ab = JG_FP16, .d = JG_FP16, .m = 13693, .n = 1536,
     .k = 5120, .alpha = 1.0f, .banded = true},
    {.name = "773x10944x13824 bf16 swap-AB banded", .ab = JG_BF16, .d = JG_BF16, .m = 773,
     .n = 10944, .k = 13824, .alpha = 1.0f, .banded = true},
};

int main(void)
{
    jg_test_gpu_init();
    jg_context *ctx = jg_test_context();
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));
    jg_rng r;
    jg_rng_seed(&r, 20240601);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        run_case(ctx, &cases[i], i % 2 ? stream : NULL, &r);
    run_m_generic(ctx, stream, &r);
    run_in_graph(ctx, stream, &r);
    check_plan_cache(ctx);
    check_bad_args(ctx, &r);
    CUDA_CHECK(cudaStreamDestroy(stream));
    jg_context_destroy(ctx);
    return jg_test_result("test_gemm_basic");
}
