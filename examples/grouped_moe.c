/* libjitgemm example: the two grouped GEMMs of a mixture-of-experts layer.
 *
 *   grouped_moe [T E H I] [--seed S]      (default 512 8 1024 512)
 *
 * T tokens of width H are each routed to 2 of E experts at random, so
 * expert e receives m_e rows (possibly none). The tokens are gathered per
 * expert into one slab, expert after expert, and then, in BF16:
 *
 *   gate/up:  D1_e = A_e * W1_e^T     A_e [m_e, H], W1_e [2I, H], D1_e [m_e, 2I]
 *   act:      X_e  = SiLU(gate) * up  gate, up = the two halves of D1_e (on the host)
 *   down:     D2_e = X_e * W2_e^T     W2_e [H, I], D2_e [m_e, H]
 *
 * Each GEMM is one grouped launch over all experts (jg_grouped_run). Both are
 * checked against an FP64 reference on the CPU and timed with CUDA events.
 * Without a GPU it says so and compiles both grouped kernels for sm_90a into
 * the disk cache instead, so a later run on a GPU machine starts warm.
 * (List-layout kernels bake in every m_e: another routing is another kernel.) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <jitgemm/jitgemm.h>

#include "example_common.h"


/* Exits with the context's message when a libjitgemm call fails. */
static void jg_ok(jg_status st, const jg_context *ctx, const char *what)
{
    if (st == JG_OK)
        return;
    const char *text = jg_context_last_error(ctx); /* starts with the status name */
    fprintf(stderr, "%s: %s\n", what, *text ? text : jg_status_name(st));
    exit(1);
}

/* ---- small helpers: RNG and bf16 ------------------------------------------ */

static uint64_t rng_next(uint64_t *s) /* splitmix64 */
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static double rng_uniform(uint64_t *s) { return ((rng_next(s) >> 11) + 1) * 0x1.0p-53; }

static double rng_normal(uint64_t *s)
{
    double u1 = rng_uniform(s), u2 = rng_uniform(s);
    return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

/* Normal values times scale, so every GEMM output stays near unit size
 * (scale = 1/sqrt(K) for a weight read along K). */
static void fill_normal_scaled(uint16_t *x, size_t n, double scale, uint64_t *s)
{
    for (size_t i = 0; i < n; ++i)
        x[i] = to_bf16((float)(rng_normal(s) * scale));
}

/* ---- the layer -------------------------------------------------------------- */

typedef struct moe {
    int64_t t, e, h, i;                       /* tokens, experts, hidden, intermediate */
    uint64_t seed;
    int64_t m[JG_GROUPED_MAX_GROUPS];         /* rows routed to each expert */
    int64_t first[JG_GROUPED_MAX_GROUPS + 1]; /* first gathered row of each expert */
    int64_t rows;                             /* 2T: all gathered rows */
    /* host copies, bf16 */
    uint16_t *tokens; /* [T, H] */
    uint16_t *a;      /* [rows, H]: tokens gathered expert by expert */
    uint16_t *w1;     /* [E, 2I, H] */
    uint16_t *w2;     /* [E, H, I] */
    uint16_t *d1;     /* [rows, 2I] */
    uint16_t *x;      /* [rows, I] */
    uint16_t *d2;     /* [rows, H] */
} moe;

/* Top-2 routing: each token picks two different experts uniformly, then the
 * tokens are gathered per expert (counting sort, so token order is kept). */
static void route(moe *l)
{
    int64_t *pick = malloc((size_t)l->t * 2 * sizeof *pick);
    uint64_t s = l->seed * 2 + 1;
    memset(l->m, 0, sizeof l->m);
    for (int64_t t = 0; t < l->t; ++t) {
        int64_t e0 = (int64_t)(rng_next(&s) % (uint64_t)l->e);
        int64_t e1 = (e0 + 1 + (int64_t)(rng_next(&s) % (uint64_t)(l->e - 1))) % l->e;
        pick[2 * t] = e0;
        pick[2 * t + 1] = e1;
        l->m[e0]++;
        l->m[e1]++;
    }
    l->first[0] = 0;
    for (int64_t e = 0; e < l->e; ++e)
        l->first[e + 1] = l->first[e] + l->m[e];
    l->rows = l->first[l->e];
    int64_t next[JG_GROUPED_MAX_GROUPS];
    memcpy(next, l->first, sizeof next);
    for (int64_t r = 0; r < 2 * l->t; ++r) {
        int64_t row = next[pick[r]]++;
        memcpy(&l->a[row * l->h], &l->tokens[(r / 2) * l->h], (size_t)l->h * 2);
    }
    free(pick);
}

static void layer_init(moe *l)
{
    size_t t = (size_t)l->t, e = (size_t)l->e, h = (size_t)l->h, i = (size_t)l->i;
    uint64_t s = l->seed;
    l->tokens = malloc(t * h * 2);
    l->a = malloc(2 * t * h * 2);
    l->w1 = malloc(e * 2 * i * h * 2);
    l->w2 = malloc(e * h * i * 2);
    l->d1 = malloc(2 * t * 2 * i * 2);
    l->x = malloc(2 * t * i * 2);
    l->d2 = malloc(2 * t * h * 2);
    if (!l->tokens || !l->a || !l->w1 || !l->w2 || !l->d1 || !l->x || !l->d2) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    fill_normal_scaled(l->tokens, t * h, 1.0, &s);
    fill_normal_scaled(l->w1, e * 2 * i * h, 1.0 / sqrt((double)h), &s);
    fill_normal_scaled(l->w2, e * h * i, 1.0 / sqrt((double)i), &s);
    route(l);
}

static void layer_free(moe *l)
{
    free(l->tokens);
    free(l->a);
    free(l->w1);
    free(l->w2);
    free(l->d1);
    free(l->x);
    free(l->d2);
}

/* The grouped problem D_e [m_e, n] = A_e [m_e, k] * B_e [n, k]^T, BF16. */
static jg_grouped_problem grouped_problem(const moe *l, int64_t n, int64_t k)
{
    jg_grouped_problem p = {.layout = JG_GROUPED_LIST, .a_type = JG_BF16, .b_type = JG_BF16,
                            .d_type = JG_BF16, .groups = (int32_t)l->e, .m = l->m,
                            .n = n, .k = k};
    return p;
}

static void print_routing(const moe *l)
{
    printf("%lld tokens, top-2 of %lld experts, H %lld, I %lld, seed %llu\nrows per expert:",
           (long long)l->t, (long long)l->e, (long long)l->h, (long long)l->i,
           (unsigned long long)l->seed);
    for (int64_t e = 0; e < l->e; ++e)
        printf(" %lld", (long long)l->m[e]);
    printf("\n");
}

static jg_plan *plan_and_print(jg_context *ctx, const jg_grouped_problem *p, const char *name)
{
    jg_plan *plan;
    jg_plan_info info;
    jg_ok(jg_grouped_plan(ctx, p, &plan), ctx, "jg_grouped_plan");
    jg_ok(jg_plan_get_info(plan, &info), ctx, "jg_plan_get_info");
    printf("%-7s kernel %s: %s\n", name, info.kernel_name, origin_name(info.origin));
    return plan;
}

static int compile_offline(const moe *l)
{
    printf("no CUDA GPU here: compiling both grouped kernels for sm_90a into the disk cache "
           "instead\n");
    jg_options o = {.flags = JG_CONTEXT_OFFLINE, .arch = "sm_90a"};
    jg_context *ctx;
    jg_ok(jg_context_create(&o, &ctx), NULL, "jg_context_create");
    jg_grouped_problem up = grouped_problem(l, 2 * l->i, l->h);
    jg_grouped_problem down = grouped_problem(l, l->h, l->i);
    plan_and_print(ctx, &up, "gate/up");
    plan_and_print(ctx, &down, "down");
    jg_context_stats s;
    jg_context_get_stats(ctx, &s);
    printf("%.0f ms in NVRTC\n", s.compile_ms);
    jg_context_destroy(ctx);
    return 0;
}

/* ---- checking --------------------------------------------------------------- */

/* Norm-wise relative error ||D - A*B^T|| / ||A*B^T|| (Frobenius, FP64) over
 * the gathered slab: every row when the work is small, else up to 4 rows
 * per expert (first, last and two between). a [rows, k], d [rows, n],
 * b = E matrices [n, k]. NaN (an unwritten output) counts as infinite. */
static double check_grouped(const moe *l, const uint16_t *a, const uint16_t *b,
                            const uint16_t *d, int64_t n, int64_t k)
{
    int all = (double)l->rows * (double)n * (double)k <= 0x1p28;
    double err2 = 0, ref2 = 0;
    for (int64_t e = 0; e < l->e; ++e) {
        int64_t m = l->m[e], samples = all || m <= 4 ? m : 4;
        const uint16_t *be = b + e * n * k;
        for (int64_t s = 0; s < samples; ++s) {
            int64_t row = l->first[e] + (samples == m ? s : s * (m - 1) / 3);
            for (int64_t j = 0; j < n; ++j) {
                double ref = 0;
                for (int64_t q = 0; q < k; ++q)
                    ref += (double)from_bf16(a[row * k + q]) * from_bf16(be[j * k + q]);
                double got = from_bf16(d[row * n + j]);
                err2 += isnan(got) ? INFINITY : (got - ref) * (got - ref);
                ref2 += ref * ref;
            }
        }
    }
    return sqrt(err2) / (ref2 > 0 ? sqrt(ref2) : 1);
}

/* X = SiLU(gate) * up, gate the first I columns of D1 and up the last I,
 * in float and rounded to bf16 as a fused epilogue would. */
static void activate(moe *l)
{
    for (int64_t r = 0; r < l->rows; ++r)
        for (int64_t j = 0; j < l->i; ++j) {
            float g = (float)from_bf16(l->d1[r * 2 * l->i + j]);
            float u = (float)from_bf16(l->d1[r * 2 * l->i + l->i + j]);
            l->x[r * l->i + j] = to_bf16(g / (1.0f + expf(-g)) * u);
        }
}

/* ---- running ---------------------------------------------------------------- */

/* Device slabs; expert e's matrices start at its first row (or, for the
 * weights, at e times the matrix size), so each pointer is 16-byte aligned
 * whenever the row width is a multiple of 8 elements. */
typedef struct slabs {
    uint16_t *a, *w1, *d1, *x, *w2, *d2;
} slabs;

static uint16_t *upload(const uint16_t *host, size_t elems)
{
    void *dev;
    CUDA_OK(cudaMalloc(&dev, elems * 2));
    if (host)
        CUDA_OK(cudaMemcpy(dev, host, elems * 2, cudaMemcpyHostToDevice));
    else
        CUDA_OK(cudaMemset(dev, 0xff, elems * 2)); /* NaN: unwritten outputs show */
    return dev;
}

static void download(uint16_t *host, const uint16_t *dev, size_t elems)
{
    CUDA_OK(cudaMemcpy(host, dev, elems * 2, cudaMemcpyDeviceToHost));
}

/* The pointer arrays of one grouped GEMM: A and D per gathered rows, B per
 * expert. */
typedef struct grouped_ptrs {
    const void *a[JG_GROUPED_MAX_GROUPS], *b[JG_GROUPED_MAX_GROUPS];
    void *d[JG_GROUPED_MAX_GROUPS];
} grouped_ptrs;

static jg_grouped_args grouped_args(grouped_ptrs *p, const moe *l, const uint16_t *a,
                                    const uint16_t *b, uint16_t *d, int64_t n, int64_t k)
{
    for (int64_t e = 0; e < l->e; ++e) {
        p->a[e] = a + l->first[e] * k;
        p->b[e] = b + e * n * k;
        p->d[e] = d + l->first[e] * n;
    }
    jg_grouped_args args = {.a = p->a, .b = p->b, .d = p->d, .alpha = 1.0f};
    return args;
}

/* Mean microseconds of 20 launches, after 5 to warm up. */
static double time_grouped(jg_plan *plan, const jg_grouped_args *args, const jg_context *ctx)
{
    const int iters = 20;
    cudaEvent_t t0, t1;
    float ms;
    CUDA_OK(cudaEventCreate(&t0));
    CUDA_OK(cudaEventCreate(&t1));
    for (int i = 0; i < 5; ++i)
        jg_ok(jg_grouped_run(plan, args, NULL), ctx, "jg_grouped_run");
    CUDA_OK(cudaEventRecord(t0, NULL));
    for (int i = 0; i < iters; ++i)
        jg_grouped_run(plan, args, NULL);
    CUDA_OK(cudaEventRecord(t1, NULL));
    CUDA_OK(cudaEventSynchronize(t1));
    CUDA_OK(cudaEventElapsedTime(&ms, t0, t1));
    CUDA_OK(cudaEventDestroy(t0));
    CUDA_OK(cudaEventDestroy(t1));
    return ms * 1e3 / iters;
}

static void report(const char *name, const moe *l, double us, int64_t n, int64_t k, double err)
{
    double tflops = 2.0 * (double)l->rows * (double)n * (double)k / (us * 1e-6) / 1e12;
    printf("%-7s %lldx%lldx%lld over %lld experts: %.1f us, %.1f TFLOP/s (mean of 20), "
           "rel. error %.2e: %s\n",
           name, (long long)l->rows, (long long)n, (long long)k, (long long)l->e, us, tflops,
           err, err < 1e-2 ? "OK" : "WRONG");
}

static int run(moe *l)
{
    jg_context *ctx;
    CUDA_OK(cudaSetDevice(0));
    CUDA_OK(cudaFree(0)); /* makes the primary context current */
    jg_ok(jg_context_create(NULL, &ctx), NULL, "jg_context_create");
    int64_t h = l->h, i2 = 2 * l->i, i = l->i;
    jg_grouped_problem up = grouped_problem(l, i2, h), down = grouped_problem(l, h, i);
    jg_plan *up_plan = plan_and_print(ctx, &up, "gate/up");
    jg_plan *down_plan = plan_and_print(ctx, &down, "down");

    size_t rows = (size_t)l->rows, e = (size_t)l->e;
    slabs s = {.a = upload(l->a, rows * (size_t)h), .w1 = upload(l->w1, e * (size_t)(i2 * h)),
               .d1 = upload(NULL, rows * (size_t)i2), .x = upload(NULL, rows * (size_t)i),
               .w2 = upload(l->w2, e * (size_t)(h * i)), .d2 = upload(NULL, rows * (size_t)h)};
    grouped_ptrs p1, p2;
    jg_grouped_args args1 = grouped_args(&p1, l, s.a, s.w1, s.d1, i2, h);
    jg_grouped_args args2 = grouped_args(&p2, l, s.x, s.w2, s.d2, h, i);

    /* gate/up, then the activation on the host, then down */
    jg_ok(jg_grouped_run(up_plan, &args1, NULL), ctx, "jg_grouped_run");
    CUDA_OK(cudaDeviceSynchronize());
    download(l->d1, s.d1, rows * (size_t)i2);
    double err1 = check_grouped(l, l->a, l->w1, l->d1, i2, h);
    activate(l);
    CUDA_OK(cudaMemcpy(s.x, l->x, rows * (size_t)i * 2, cudaMemcpyHostToDevice));
    jg_ok(jg_grouped_run(down_plan, &args2, NULL), ctx, "jg_grouped_run");
    CUDA_OK(cudaDeviceSynchronize());
    download(l->d2, s.d2, rows * (size_t)h);
    double err2 = check_grouped(l, l->x, l->w2, l->d2, h, i);

    report("gate/up", l, time_grouped(up_plan, &args1, ctx), i2, h, err1);
    report("down", l, time_grouped(down_plan, &args2, ctx), h, i, err2);
    cudaFree(s.a);
    cudaFree(s.w1);
    cudaFree(s.d1);
    cudaFree(s.x);
    cudaFree(s.w2);
    cudaFree(s.d2);
    jg_context_destroy(ctx);
    return err1 < 1e-2 && err2 < 1e-2 ? 0 : 1;
}

/* ---- command line ----------------------------------------------------------- */

static int parse(int argc, char **argv, moe *l)
{
    int64_t *dims[] = {&l->t, &l->e, &l->h, &l->i};
    int ndims = 0;
    for (int a = 1; a < argc; ++a) {
        if (!strcmp(argv[a], "--seed") && a + 1 < argc)
            l->seed = strtoull(argv[++a], NULL, 0);
        else if (ndims < 4 && argv[a][0] != '-')
            *dims[ndims++] = atoll(argv[a]);
        else
            return 0;
    }
    if (ndims != 0 && ndims != 4)
        return 0;
    if (l->t < 1 || l->e < 2 || l->e > JG_GROUPED_MAX_GROUPS || l->h < 8 || l->i < 8 ||
        l->h % 8 || l->i % 8) {
        fprintf(stderr, "need T >= 1, 2 <= E <= %d, H and I positive multiples of 8\n",
                JG_GROUPED_MAX_GROUPS);
        return 0;
    }
    return 1;
}

int main(int argc, char **argv)
{
    moe l = {.t = 512, .e = 8, .h = 1024, .i = 512, .seed = 1};
    if (!parse(argc, argv, &l)) {
        fprintf(stderr, "usage: %s [T E H I] [--seed S]\n", argv[0]);
        return 2;
    }
    layer_init(&l);
    print_routing(&l);
    int devices = 0, rc;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
        rc = compile_offline(&l);
    else
        rc = run(&l);
    layer_free(&l);
    return rc;
}
