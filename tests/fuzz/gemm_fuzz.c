/* Random-shape GEMM fuzz on an sm_90 GPU.
 *
 *   test_gemm_fuzz [--count N] [--seed S] [--only I] [--threads T]
 *
 * Draws N shapes (default 500) from a seed (default: from the clock; printed
 * first, so `--seed S` replays a run and `--seed S --only I` one shape of
 * it). M, N, K come half the time from tile-edge values, half uniformly from
 * [1, 4096]; leading dimensions are rounded up to multiples of 8 elements
 * where K or N is not (so TMA zero-fills a ragged K); A/B bf16 or fp16, D
 * bf16, fp16 or fp32, C half the time, a quarter of the plans M-generic,
 * independently a quarter with JG_GEMM_PDL (the kernels that wait for the
 * previous kernel, run here after the poisoning memset). Shapes are planned
 * in turn in contexts that force the planner's kernel families (fuzz_envs:
 * the planner's own choice, clusters of 2 with multicast B wherever the
 * tiles pair up, swap-AB, split-K where the tiles leave SMs idle, both,
 * ping-pong tiles, 256-row tiles, clusters stacked along N sharing A by
 * multicast: 1x2, 1x4 and 2x2 where the tiles allow them, split-K through
 * a workspace of 3 and, with swap-AB, 5 units a tile, stream-K in 4 and,
 * with swap-AB, 7 units a tile, split-K in 5 units after data-parallel tiles: plans that take a
 * workspace get one filled with 0xff bytes every other round of the
 * contexts, and none in the others, where they run their plan without
 * the split).
 * Failing shapes print their flags and context.
 * All plans are built first, in parallel (each distinct problem is an NVRTC
 * compile), then each shape runs and is checked against the FP64 reference
 * of jg_test_gpu.h, one at a time. Exits 1 if any shape fails, 77 without
 * an sm_90 GPU. */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jg_fuzz.h"
#include "jg_test.h"
#include "jg_test_gpu.h"

#define FUZZ_DIM_MAX 4096
#define FUZZ_MNK_MAX (INT64_C(1) << 34) /* keeps the run to a few minutes */

static const int64_t edge_values[] = {1,   7,   8,   63,  64,  65,   127,  128,  129,  191,  192,
                                      255, 256, 257, 511, 512, 513, 1000, 1024, 2047, 2048, 4096};

typedef struct fuzz_shape {
    jg_gemm_problem p;
    int64_t m; /* rows of the launch (p.m is only a hint for M-generic plans) */
    float alpha, beta;
    uint64_t seed; /* of the data and the reference's samples */
    jg_plan *plan;
    jg_status plan_status;
    char plan_error[256];
} fuzz_shape;

static int64_t draw_dim(jg_rng *r)
{
    const uint64_t nedges = sizeof edge_values / sizeof edge_values[0];
    if (jg_rng_below(r, 2))
        return edge_values[jg_rng_below(r, nedges)];
    return 1 + (int64_t)jg_rng_below(r, FUZZ_DIM_MAX);
}

/* A leading dimension for `cols` 16-byte rows apart: packed (0) when cols
 * is a multiple of 8 elements, else cols rounded up to one. */
static int64_t ld_for(int64_t cols) { return cols % 8 ? (cols + 7) / 8 * 8 : 0; }

static void draw_shape(jg_rng *r, fuzz_shape *s)
{
    static const jg_dtype ab_types[] = {JG_BF16, JG_FP16};
    static const jg_dtype d_types[] = {JG_BF16, JG_FP16, JG_FP32};
    int64_t m, n, k;
    do {
        m = draw_dim(r);
        n = draw_dim(r);
        k = draw_dim(r);
    } while (m * n * k > FUZZ_MNK_MAX);
    memset(s, 0, sizeof *s);
    jg_gemm_problem *p = &s->p;
    p->a_type = p->b_type = ab_types[jg_rng_below(r, 2)];
    p->d_type = d_types[jg_rng_below(r, 3)];
    p->c_type = jg_rng_below(r, 2) ? p->d_type : JG_DTYPE_NONE;
    p->m = s->m = m;
    p->n = n;
    p->k = k;
    p->lda = p->ldb = ld_for(k);
    p->ldd = ld_for(n);
    p->ldc = p->c_type != JG_DTYPE_NONE ? ld_for(n) : 0;
    if (jg_rng_below(r, 4) == 0) {
        p->flags = JG_GEMM_M_GENERIC;
        /* the planner's hint, unrelated to the launch's m; half the time a
         * bucket of the Python package (a power of two or 1.5 times one,
         * 16..1536), whose A boxes the planner sizes to it */
        p->m = jg_rng_below(r, 2) ? draw_dim(r)
                                  : (int64_t)(2 + jg_rng_below(r, 2)) << (3 + jg_rng_below(r, 7));
    }
    if (jg_rng_below(r, 4) == 0)
        p->flags |= JG_GEMM_PDL;
    s->alpha = (float)(0.5 + 1.5 * jg_rng_uniform(r));
    s->beta = p->c_type != JG_DTYPE_NONE ? (float)(2 * jg_rng_uniform(r) - 1) : 0.0f;
    s->seed = jg_rng_next(r);
}

/* ---- phase 1: every plan, in parallel ----------------------------------- */

/* The contexts shapes are planned in, in turn: the environment each is
 * made with (read once, when the context is made). */
static const jg_fuzz_env fuzz_envs[] = {
    {"planner", NULL, NULL, NULL, NULL},
    {"cluster2", "JITGEMM_CLUSTER", "2", NULL, NULL},
    {"cluster4", "JITGEMM_CLUSTER", "4", NULL, NULL},
    {"swap-AB", "JITGEMM_SWAP", "1", NULL, NULL},
    {"split-K", "JITGEMM_SPLIT", "any", NULL, NULL},
    {"swap-AB+split-K", "JITGEMM_SWAP", "1", "JITGEMM_SPLIT", "any"},
    {"ping-pong", "JITGEMM_PINGPONG", "1", NULL, NULL},
    {"256-row", "JITGEMM_TILE", "256", NULL, NULL},
    {"192-row", "JITGEMM_TILE", "192", NULL, NULL},
    /* clusters stacked along N, sharing A: 1x2, 1x4, 2x2 */
    {"n-stack2", "JITGEMM_N_STACK", "2", NULL, NULL},
    {"n-stack4", "JITGEMM_N_STACK", "4", NULL, NULL},
    {"n-stack2x2", "JITGEMM_N_STACK", "2", "JITGEMM_CLUSTER", "4"},
    /* swap-AB tiles in pairs along M sharing the weight's tile (the
     * planner's swap_pairs_share_weight, here at any M and K) */
    {"swap-pairs", "JITGEMM_N_STACK", "2", "JITGEMM_SWAP", "1"},
    /* split-K through the workspace (3 units a tile; 5 with swap-AB) */
    {"split-ws3", "JITGEMM_SPLIT_WS", "3", NULL, NULL},
    {"split-ws5-swap", "JITGEMM_SPLIT_WS", "5", "JITGEMM_SWAP", "1"},
    /* stream-K (4 units a tile; 7 with swap-AB; 16-bit operands) */
    {"stream-k4", "JITGEMM_STREAM_K", "4", NULL, NULL},
    {"stream-k7-swap", "JITGEMM_STREAM_K", "7", "JITGEMM_SWAP", "1"},
    /* split-K in 5 units after data-parallel tiles (those past two waves) */
    {"split-dp5", "JITGEMM_SPLIT_WS", "5", "JITGEMM_SPLIT_DP", "1"},
};
#define FUZZ_ENVS (sizeof fuzz_envs / sizeof fuzz_envs[0])

static void plan_one(int64_t i, void *arg)
{
    const jg_fuzz_job *job = arg;
    fuzz_shape *s = (fuzz_shape *)job->shapes + i;
    jg_context *ctx = job->ctx[i % FUZZ_ENVS];
    s->plan_status = jg_gemm_plan(ctx, &s->p, &s->plan);
    if (s->plan_status != JG_OK)
        snprintf(s->plan_error, sizeof s->plan_error, "%s", jg_context_last_error(ctx));
}

static void plan_all(jg_context *const ctx[FUZZ_ENVS], fuzz_shape *shapes, const jg_fuzz_opts *o)
{
    jg_fuzz_job job = {.ctx = ctx, .shapes = shapes};
    const double seconds = jg_fuzz_parallel(o, plan_one, &job);
    const jg_context_stats st = jg_fuzz_stats(ctx, FUZZ_ENVS);
    printf("gemm_fuzz: planned in %.1f s on %d threads: %llu compiled, %llu from disk, "
           "%llu from memory\n",
           seconds, o->threads < 1 ? 1 : o->threads > 64 ? 64 : o->threads,
           (unsigned long long)st.plans_compiled, (unsigned long long)st.plans_disk,
           (unsigned long long)st.plans_memory);
}

/* ---- phase 2: run and check, one at a time ------------------------------- */

static void describe_shape(const fuzz_shape *s, int64_t idx, char *buf, size_t size)
{
    const jg_gemm_problem *p = &s->p;
    char generic[48] = "";
    if (p->flags & JG_GEMM_M_GENERIC)
        snprintf(generic, sizeof generic, " m-generic(hint %lld)", (long long)p->m);
    snprintf(buf, size,
             "shape %lld: m=%lld n=%lld k=%lld %s->%s%s alpha=%.6g beta=%.6g "
             "lda=%lld ldd=%lld flags=0x%x%s%s context %s kernel %s",
             (long long)idx, (long long)s->m, (long long)p->n, (long long)p->k,
             jg_test_dtype_str(p->a_type), jg_test_dtype_str(p->d_type),
             p->c_type != JG_DTYPE_NONE ? " +C" : "", s->alpha, s->beta, (long long)p->lda,
             (long long)p->ldd, p->flags, generic, (p->flags & JG_GEMM_PDL) ? " pdl" : "",
             fuzz_envs[idx % (int64_t)FUZZ_ENVS].name, jg_fuzz_kernel(s->plan));
}

/* Runs one planned shape; returns true when it passes, else prints why.
 * margin[0], margin[1]: the largest element and norm errors so far, as
 * fractions of their bounds (how close correct results come to failing). */
static bool run_shape(const fuzz_shape *s, int64_t idx, double margin[2])
{
    const jg_gemm_problem *p = &s->p;
    const bool has_c = p->c_type != JG_DTYPE_NONE;
    char what[256], line[512];
    describe_shape(s, idx, what, sizeof what);
    jg_rng r;
    jg_rng_seed(&r, s->seed);
    jg_mat a, b, c, d;
    jg_mat_init(&a, p->a_type, s->m, p->k, p->lda);
    jg_mat_init(&b, p->b_type, p->n, p->k, p->ldb);
    jg_mat_init(&d, p->d_type, s->m, p->n, p->ldd);
    jg_mat_fill_normal(&a, &r);
    jg_mat_fill_normal(&b, &r);
    jg_mat_upload(&a);
    jg_mat_upload(&b);
    if (has_c) {
        jg_mat_init(&c, p->c_type, s->m, p->n, p->ldc);
        jg_mat_fill_normal(&c, &r);
        jg_mat_upload(&c);
    }
    jg_mat_poison(&d);
    jg_gemm_args args = {.a = a.dev, .b = b.dev, .c = has_c ? c.dev : NULL, .d = d.dev,
                         .alpha = s->alpha, .beta = s->beta,
                         .m = (p->flags & JG_GEMM_M_GENERIC) ? s->m : 0};
    /* a plan that takes a workspace (split-K through it) gets one of
     * garbage (the launch must not trust what it holds) every other round
     * of the contexts, and none in the others (it runs its plan without
     * the split) */
    size_t ws_bytes = 0;
    void *ws = NULL;
    if ((idx / (int64_t)FUZZ_ENVS) % 2 == 0 && jg_plan_workspace_bytes(s->plan, &ws_bytes) == JG_OK &&
        ws_bytes) {
        CUDA_CHECK(cudaMalloc(&ws, ws_bytes));
        CUDA_CHECK(cudaMemset(ws, 0xFF, ws_bytes));
        args.workspace = ws;
        args.workspace_bytes = ws_bytes;
    }
    jg_status st = jg_gemm_run(s->plan, &args, NULL);
    bool ok = st == JG_OK;
    if (!ok) {
        snprintf(line, sizeof line, "jg_gemm_run: %s", jg_status_name(st));
    } else {
        jg_fuzz_sync("gemm_fuzz", what);
        jg_mat_download(&d);
        jg_gemm_check ck = {.a = &a, .b = &b, .c = has_c ? &c : NULL, .d = &d, .m = s->m,
                            .alpha = s->alpha, .beta = s->beta};
        ok = jg_gemm_verify(&ck, &r);
        jg_check_describe(&ck, line, sizeof line);
        margin[0] = fmax(margin[0], ck.worst);
        margin[1] = fmax(margin[1], ck.norm_rel / ck.norm_bound);
    }
    if (!ok)
        printf("FAIL %s: %s\n", what, line);
    jg_mat_free(&a);
    jg_mat_free(&b);
    jg_mat_free(&d);
    if (has_c)
        jg_mat_free(&c);
    if (ws)
        CUDA_CHECK(cudaFree(ws));
    return ok;
}

/* ---- main ---------------------------------------------------------------- */

/* Whether the plan's kernel runs stream-K in row groups ("_skSrR") */
static bool sk_row_groups(const jg_plan *plan)
{
    const char *sk = strstr(jg_fuzz_kernel(plan), "_sk");
    return sk && sk[3 + strspn(sk + 3, "0123456789")] == 'r';
}

/* Whether it splits K after data-parallel tiles ("_wsSdp"; those tiles
 * exist where the plan makes more than two waves) */
static bool split_after_dp(const jg_plan *plan)
{
    const char *ws = strstr(jg_fuzz_kernel(plan), "_ws");
    return ws && !strncmp(ws + 3 + strspn(ws + 3, "0123456789"), "dp", 2);
}

int main(int argc, char **argv)
{
    jg_fuzz_opts o;
    jg_fuzz_parse(argc, argv, 500, &o);
    printf("gemm_fuzz: seed %llu (replay with --seed %llu)\n", (unsigned long long)o.seed,
           (unsigned long long)o.seed);
    fflush(stdout);
    jg_test_gpu_init();
    jg_context *ctx[FUZZ_ENVS];
    jg_fuzz_contexts(fuzz_envs, FUZZ_ENVS, ctx);
    fuzz_shape *shapes = calloc((size_t)o.count, sizeof *shapes);
    if (!shapes)
        return 1;
    jg_rng r;
    jg_rng_seed(&r, o.seed);
    for (int64_t i = 0; i < o.count; ++i)
        draw_shape(&r, &shapes[i]);
    plan_all(ctx, shapes, &o);
    int64_t failed = 0, ran = 0, split_ws = 0, split_none = 0, stream_k = 0, sk_rows = 0;
    int64_t split_dp = 0;
    double margin[2] = {0, 0};
    for (int64_t i = 0; i < o.count; ++i) {
        if (o.only >= 0 && i != o.only)
            continue;
        const fuzz_shape *s = &shapes[i];
        ++ran;
        const bool sk = s->plan && strstr(jg_fuzz_kernel(s->plan), "_sk") != NULL;
        const bool split = sk || (s->plan && strstr(jg_fuzz_kernel(s->plan), "_ws") != NULL);
        stream_k += sk && (i / (int64_t)FUZZ_ENVS) % 2 == 0;
        sk_rows += sk && (i / (int64_t)FUZZ_ENVS) % 2 == 0 && sk_row_groups(s->plan);
        split_dp += split && (i / (int64_t)FUZZ_ENVS) % 2 == 0 && split_after_dp(s->plan);
        split_ws += split && (i / (int64_t)FUZZ_ENVS) % 2 == 0;
        split_none += split && (i / (int64_t)FUZZ_ENVS) % 2 == 1;
        if (s->plan_status != JG_OK) {
            char what[256];
            describe_shape(s, i, what, sizeof what);
            printf("FAIL %s: jg_gemm_plan: %s: %s\n", what, jg_status_name(s->plan_status),
                   s->plan_error);
            ++failed;
        } else if (!run_shape(s, i, margin)) {
            ++failed;
        }
        fflush(stdout);
    }
    for (size_t e = 0; e < FUZZ_ENVS; ++e)
        jg_context_destroy(ctx[e]);
    free(shapes);
    /* Near 1 of the element bound is normal with 16-bit outputs: rounding to
     * nearest alone may use all of u_out*|ref|, which the bound allows exactly. */
    printf("gemm_fuzz: largest errors: %.3g of the element bound, %.3g of the norm bound\n",
           margin[0], margin[1]);
    printf("gemm_fuzz: %lld shapes split K through a workspace (%lld of them stream-K, %lld in "
           "row groups; %lld after data-parallel tiles), %lld such plans ran without one\n",
           (long long)split_ws, (long long)stream_k, (long long)sk_rows, (long long)split_dp,
           (long long)split_none);
    printf("gemm_fuzz: %lld shapes, %lld failed (seed %llu)\n", (long long)ran, (long long)failed,
           (unsigned long long)o.seed);
    return failed ? 1 : 0;
}
