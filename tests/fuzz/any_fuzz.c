/* Any-problem fuzz on an sm_90 GPU: the shapes, row strides, pointers,
 * types and layouts that TMA alone cannot take.
 *
 *   test_any_fuzz [--count N] [--seed S] [--only I] [--threads T]
 *
 * N shapes (default 1000) from a seed (default: the clock; printed first,
 * so --seed S replays a run and --seed S --only I one shape of it):
 *   M, N, K uniform in [1, 3000]; each leading dimension its rows' length
 *   (K, or M and N for MN-major operands) plus 0 (40%) or 1..17 (odd
 *   ones among them); each pointer one element past an aligned one 40% of
 *   the time (and JG_GEMM_UNALIGNED or jg_gemm's own choice for them);
 *   A and B BF16, FP16, FP32 as TF32, FP32 exact (JG_GEMM_FP32_EXACT with
 *   its workspace) or e4m3 with tensor, row or block scales; 16-bit A
 *   M-major and B N-major half the time each; D BF16, FP16 or FP32 (exact:
 *   FP32), C half the time; a fifth of the dense plans M-generic; planned in turn in
 *   contexts that force swap-AB or split-K where they apply. One shape in
 *   five is grouped (16-bit or TF32): the list layout (1-4 groups of 0 to
 *   1000 rows, B_g N-major half the time), contiguous and masked.
 * Every buffer is NaN poison outside its elements (padding, the element
 * before an offset pointer, 64 bytes after): A's and B's poison must not
 * reach D, and D is scanned whole after each launch: every element of
 * its rows finite, every other byte (padding columns, rows no group owns,
 * the guards) still poison. Elements are compared with an FP64 reference
 * of the inputs as stored (TF32: as the loads round them; jg_test_gpu.h's
 * checks, bounds per type below):
 * every written row at some columns, the first and last in full.
 * Dense plans with unaligned A or B run twice: without a workspace (the
 * cp.async loads) and with one of jitgemm.h's size (the pack into it, then
 * the aligned GEMM), D poisoned again between; jg_plan_workspace_bytes
 * must be that size (computed here by the header's rule).
 * All plans are built first, in parallel; then each shape runs and is
 * checked alone. Exits 1 if any shape fails, 77 without an sm_90 GPU.
 *
 * Bounds (element-wise, |d - ref| <= allowance; norm-wise over the checked
 * elements, ||d - ref|| / ||ref|| <= bound); sabs = |alpha| sum |a_k b_k|
 * (FP8: with the scales), u_out D's unit roundoff:
 *   BF16, FP16: products exact in FP32, K of them summed: jg_check_allow
 *     (gamma_K with u = 2^-23 for truncating accumulation) and
 *     2 u_out + 8 sqrt(K) 2^-24 (jg_gemm_verify's, justified there).
 *   TF32: the loads round each FP32 input to the nearest TF32 value (10
 *     explicit significand bits; TMA's TFLOAT32 maps, the soft loads'
 *     jg_soft_round_tf32), and the reference takes the inputs so rounded
 *     (the pool's FP32 values avoid ties, so any tie rule agrees): the
 *     products of TF32 values are exact in FP32, so the bounds are the
 *     16-bit ones. Inputs truncated instead (wgmma's own reading) would
 *     be off by ~2^-11 of D's norm, far above them.
 *   FP32 exact: a = hi + lo + e, |e| <= 2^-22 |a| (sm90_split.cu), the
 *     three products leave out below 3 * 2^-22 |a b| < 2^-20 |a b|, and
 *     3 KP terms are summed (KP = K rounded up to 64): jg_check_allow over
 *     3 KP terms of at most (1 + 2^-10) sabs, plus 2^-20 sabs; norm
 *     2 u_out + 8 sqrt(3 KP) 2^-24 + 2^-20 (FP32-level: TF32 alone misses
 *     it by 2^-10 / 2^-13 and more).
 *   e4m3: test_fp8.c's: sabs 2^-8 + 2 u_out |ref| (+ 2^-22 |beta c|);
 *     norm 2 u_out + 2^-9 (K <= 16384). */
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

#define DIM_MAX 3000
#define GROUP_ROWS_MAX 1000
#define GUARD 64                                 /* poison bytes after every buffer */
#define REF_BUDGET (INT64_C(1) << 23)            /* multiply-adds of the spot checks */

/* ---- element types ------------------------------------------------------------ */

static size_t esize(jg_dtype t) { return t == JG_E4M3 ? 1 : t == JG_FP32 ? 4 : 2; }

static const char *dtype_str(jg_dtype t)
{
    return t == JG_E4M3 ? "e4m3" : jg_test_dtype_str(t);
}

/* e4m3 (fn): bias 7, 3 mantissa bits, no infinities, 0x7f/0xff NaN. */
static double e4m3_decode(uint8_t v)
{
    const int e = (v >> 3) & 15, m = v & 7;
    const double x = e ? ldexp(1.0 + m / 8.0, e - 7) : ldexp(m / 8.0, -6);
    return (v & 0x80) ? -x : x;
}

/* The nearest non-zero finite e4m3 code to x (a search over the 126
 * positive codes, by value). */
static uint8_t e4m3_nearest(double x)
{
    uint8_t best = 1;
    for (int c = 1; c < 0x7f; ++c)
        if (fabs(e4m3_decode((uint8_t)c) - fabs(x)) < fabs(e4m3_decode(best) - fabs(x)))
            best = (uint8_t)c;
    return x < 0 ? (uint8_t)(best | 0x80) : best;
}

static double decode(jg_dtype t, const uint8_t *p)
{
    if (t == JG_E4M3)
        return e4m3_decode(*p);
    uint32_t bits = 0;
    memcpy(&bits, p, esize(t));
    return jg_test_decode(t, bits);
}

/* ---- stored matrices: NaN poison everywhere but their elements ------------------ */

typedef struct store {
    jg_dtype type;
    int64_t rows, cols, ld, off; /* elements; the matrix starts `off` elements in */
    size_t bytes;                /* the allocation */
    uint8_t *host;
    uint8_t *dev;
} store;

static void store_init(store *s, jg_dtype t, int64_t rows, int64_t cols, int64_t ld, int64_t off)
{
    s->type = t;
    s->rows = rows;
    s->cols = cols;
    s->ld = ld;
    s->off = off;
    s->bytes = (size_t)(off + rows * ld) * esize(t) + GUARD;
    s->host = malloc(s->bytes);
    if (!s->host) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", s->bytes);
        exit(1);
    }
    memset(s->host, 0xFF, s->bytes);
    CUDA_CHECK(cudaMalloc((void **)&s->dev, s->bytes));
}

static void store_free(store *s)
{
    if (s->host) {
        free(s->host);
        CUDA_CHECK(cudaFree(s->dev));
    }
    memset(s, 0, sizeof *s);
}

static uint8_t *store_at(const store *s, int64_t r, int64_t c)
{
    return s->host + (size_t)(s->off + r * s->ld + c) * esize(s->type);
}

static void *store_ptr(const store *s, int64_t row)
{
    return s->dev + (size_t)(s->off + row * s->ld) * esize(s->type);
}

static void store_upload(const store *s)
{
    CUDA_CHECK(cudaMemcpy(s->dev, s->host, s->bytes, cudaMemcpyHostToDevice));
}

/* A pool of 2^16 non-zero standard normals rounded to the type, encoded. */
typedef struct pool {
    uint8_t bytes[1 << 16][4];
} pool;

static void pool_fill(pool *p, jg_dtype t, jg_rng *r)
{
    for (size_t i = 0; i < (size_t)1 << 16; ++i)
        do {
            const double x = jg_rng_normal(r);
            if (t == JG_E4M3) {
                p->bytes[i][0] = e4m3_nearest(x);
            } else {
                uint32_t bits = jg_test_encode(t, (float)x);
                if (t == JG_FP32 && (bits & 0x1fff) == 0x1000)
                    bits ^= 1; /* no ties between TF32 values: any rounding to nearest agrees */
                memcpy(p->bytes[i], &bits, esize(t));
            }
        } while (decode(t, p->bytes[i]) == 0.0);
}

/* The elements (not the padding) from the pool. */
static void store_fill(store *s, const pool *p, jg_rng *r)
{
    const size_t n = esize(s->type);
    for (int64_t i = 0; i < s->rows; ++i)
        for (int64_t j = 0; j < s->cols; ++j)
            memcpy(store_at(s, i, j), p->bytes[jg_rng_below(r, (uint64_t)1 << 16)], n);
}

/* ---- shapes ---------------------------------------------------------------------- */

typedef enum prec { PR_BF16, PR_FP16, PR_TF32, PR_EXACT, PR_E4M3, PRECS } prec;
static const char *const prec_names[PRECS] = {"bf16", "fp16", "tf32", "fp32-exact", "e4m3"};

typedef enum kind { K_DENSE, K_LIST, K_CONTIG, K_MASKED } kind;
static const char *const kind_names[] = {"dense", "list", "contiguous", "masked"};

#define MAX_GROUPS 4

typedef struct fshape {
    kind kind;
    prec prec;
    jg_dtype ab, c, d;
    jg_scale_mode scale;
    uint32_t flags; /* dense JG_GEMM_*, grouped JG_GROUPED_* */
    bool a_mn, b_mn;
    int64_t m, n, k; /* dense: m the launch's rows (hint in hint_m) */
    int64_t hint_m;
    int64_t lda, ldb, ldc, ldd;
    int32_t groups;
    int64_t gm[MAX_GROUPS]; /* grouped: each group's rows */
    int64_t m_max;          /* contiguous, masked */
    int64_t off[4];         /* a, b, c, d: elements past an aligned pointer */
    bool one_shot;          /* jg_gemm / jg_grouped, not plan and run */
    float alpha, beta;
    uint64_t seed;
    int env;
    jg_plan *plan;
    jg_status plan_status;
    char plan_error[256];
} fshape;

static const jg_fuzz_env envs[] = {
    {"planner", NULL, NULL, NULL, NULL},
    {"swap-AB", "JITGEMM_SWAP", "1", NULL, NULL},
    {"split-K", "JITGEMM_SPLIT", "any", NULL, NULL},
    /* clusters stacked along N, sharing A (aligned 16-bit and FP8 with
     * tensor or row scales; other shapes plan as unstacked) */
    {"n-stack2", "JITGEMM_N_STACK", "2", NULL, NULL},
    {"n-stack2x2", "JITGEMM_N_STACK", "2", "JITGEMM_CLUSTER", "4"},
    /* swap-AB tiles in pairs along M sharing the weight's tile (the
     * planner's swap_pairs_share_weight, here at any M and K) */
    {"swap-pairs", "JITGEMM_N_STACK", "2", "JITGEMM_SWAP", "1"},
};
#define ENVS (sizeof envs / sizeof envs[0])

static int64_t dim(jg_rng *r, int64_t max) { return 1 + (int64_t)jg_rng_below(r, (uint64_t)max); }

static int64_t pad(jg_rng *r)
{
    return jg_rng_below(r, 10) < 4 ? 0 : 1 + (int64_t)jg_rng_below(r, 17);
}

static void draw_grouped(jg_rng *r, fshape *s)
{
    s->kind = (kind)(1 + jg_rng_below(r, 3));
    s->prec = (prec)jg_rng_below(r, 3); /* bf16, fp16, tf32 */
    s->groups = (int32_t)dim(r, MAX_GROUPS);
    s->n = dim(r, 2000);
    s->k = dim(r, 2000);
    s->m = 0;
    for (int32_t g = 0; g < s->groups; ++g) {
        s->gm[g] = (int64_t)jg_rng_below(r, GROUP_ROWS_MAX + 1);
        s->m += s->gm[g];
    }
    if (s->kind == K_CONTIG)
        s->m_max = s->m + (int64_t)jg_rng_below(r, 64) + (s->m ? 0 : 1);
    if (s->kind == K_MASKED) {
        s->m_max = 1;
        for (int32_t g = 0; g < s->groups; ++g)
            s->m_max = s->gm[g] > s->m_max ? s->gm[g] : s->m_max;
        s->m_max += (int64_t)jg_rng_below(r, 16);
    }
    s->b_mn = s->kind == K_LIST && s->prec != PR_TF32 && jg_rng_below(r, 2);
}

static void draw_shape(jg_rng *r, fshape *s)
{
    static const jg_dtype outs[] = {JG_BF16, JG_FP16, JG_FP32};
    static const jg_scale_mode modes[] = {JG_SCALE_TENSOR, JG_SCALE_ROW, JG_SCALE_BLOCK};
    memset(s, 0, sizeof *s);
    if (jg_rng_below(r, 5) == 0) {
        draw_grouped(r, s);
    } else {
        s->kind = K_DENSE;
        s->prec = (prec)jg_rng_below(r, PRECS);
        s->m = dim(r, DIM_MAX);
        s->n = dim(r, DIM_MAX);
        s->k = dim(r, DIM_MAX);
        const bool bits16 = s->prec == PR_BF16 || s->prec == PR_FP16;
        s->a_mn = bits16 && jg_rng_below(r, 2);
        s->b_mn = bits16 && jg_rng_below(r, 2);
        if (s->prec == PR_EXACT)
            s->flags |= JG_GEMM_FP32_EXACT;
        if (jg_rng_below(r, 5) == 0) {
            s->flags |= JG_GEMM_M_GENERIC;
            s->hint_m = dim(r, DIM_MAX);
        }
        if (s->a_mn)
            s->flags |= JG_GEMM_A_M_MAJOR;
        if (s->b_mn)
            s->flags |= JG_GEMM_B_N_MAJOR;
    }
    s->ab = s->prec == PR_BF16   ? JG_BF16
            : s->prec == PR_FP16 ? JG_FP16
            : s->prec == PR_E4M3 ? JG_E4M3
                                 : JG_FP32;
    s->scale = s->prec == PR_E4M3 ? modes[jg_rng_below(r, 3)] : JG_SCALE_NONE;
    /* exact FP32: FP32 out, where its accuracy shows (BF16's rounding hides
     * TF32's error, and half of FP16's) */
    s->d = s->prec == PR_EXACT ? JG_FP32 : outs[jg_rng_below(r, 3)];
    s->c = jg_rng_below(r, 2) ? s->d : JG_DTYPE_NONE;
    /* M-generic: the M-major A's lda holds the launch's m and the hint */
    s->lda = (s->a_mn ? (s->m > s->hint_m ? s->m : s->hint_m) : s->k) + pad(r);
    s->ldb = (s->b_mn ? s->n : s->k) + pad(r);
    s->ldd = s->n + pad(r);
    s->ldc = s->c != JG_DTYPE_NONE ? s->n + pad(r) : 0;
    bool offset = false;
    for (int i = 0; i < 4; ++i) {
        s->off[i] = jg_rng_below(r, 10) < 4 && (i != 2 || s->c != JG_DTYPE_NONE);
        offset |= s->off[i] != 0;
    }
    if (s->kind != K_DENSE && s->b_mn)
        s->flags |= JG_GROUPED_B_N_MAJOR;
    s->one_shot = jg_rng_below(r, 10) < 3;
    /* plan and run: the flag the pointers need (sometimes without need);
     * one shot: jg_gemm adds it itself where a pointer is off 16 bytes */
    if ((offset && !s->one_shot) || jg_rng_below(r, 10) == 0)
        s->flags |= s->kind == K_DENSE ? JG_GEMM_UNALIGNED : JG_GROUPED_UNALIGNED;
    s->alpha = (float)(0.5 + 1.5 * jg_rng_uniform(r));
    s->beta = s->c != JG_DTYPE_NONE ? (float)(2 * jg_rng_uniform(r) - 1) : 0.0f;
    s->env = s->kind == K_DENSE ? (int)jg_rng_below(r, ENVS) : 0;
    s->seed = jg_rng_next(r);
}

/* Whether a pointer of the launch is off 16 bytes (its allocation 256-byte
 * aligned): the list layout's each group's (its rows' first), the others'
 * the operands'. */
static bool shape_offset(const fshape *s)
{
    const int32_t groups = s->kind == K_LIST ? s->groups : 1;
    int64_t first = 0;
    for (int32_t g = 0; g < groups; ++g) {
        if (s->kind == K_LIST && !s->gm[g])
            continue;
        const int64_t brow = s->kind == K_LIST ? g * (s->b_mn ? s->k : s->n) : 0;
        const int64_t at[4] = {s->off[0] + first * s->lda, s->off[1] + brow * s->ldb,
                               s->off[2] + first * s->ldc, s->off[3] + first * s->ldd};
        for (int i = 0; i < 4; ++i)
            if ((i != 2 || s->c != JG_DTYPE_NONE) &&
                at[i] * (int64_t)esize(i < 2 ? s->ab : s->d) % 16)
                return true;
        first += s->kind == K_LIST ? s->gm[g] : 0;
    }
    return false;
}

/* The problems as planned (one shot: as jg_gemm and jg_grouped plan them,
 * with the flag where a pointer is off 16 bytes). */

static jg_gemm_problem dense_problem(const fshape *s, bool as_planned)
{
    jg_gemm_problem p = {.flags = s->flags, .a_type = s->ab, .b_type = s->ab, .c_type = s->c,
                         .d_type = s->d, .m = (s->flags & JG_GEMM_M_GENERIC) ? s->hint_m : s->m,
                         .n = s->n, .k = s->k, .lda = s->lda, .ldb = s->ldb, .ldc = s->ldc,
                         .ldd = s->ldd, .scale = s->scale};
    if (as_planned && s->one_shot && shape_offset(s))
        p.flags |= JG_GEMM_UNALIGNED;
    return p;
}

static jg_grouped_problem grouped_problem(const fshape *s, bool as_planned)
{
    jg_grouped_problem p = {.flags = s->flags,
                            .layout = s->kind == K_LIST     ? JG_GROUPED_LIST
                                      : s->kind == K_CONTIG ? JG_GROUPED_CONTIGUOUS
                                                            : JG_GROUPED_MASKED,
                            .a_type = s->ab, .b_type = s->ab, .c_type = s->c, .d_type = s->d,
                            .groups = s->groups, .m = s->gm, .n = s->n, .k = s->k,
                            .lda = s->lda, .ldb = s->ldb, .ldc = s->ldc, .ldd = s->ldd,
                            .m_max = s->m_max};
    if (as_planned && s->one_shot && shape_offset(s))
        p.flags |= JG_GROUPED_UNALIGNED;
    return p;
}

/* ---- phase 1: every plan, in parallel ----------------------------------------------- */

static void plan_one(int64_t i, void *arg)
{
    const jg_fuzz_job *job = arg;
    fshape *s = (fshape *)job->shapes + i;
    jg_context *ctx = job->ctx[s->env];
    if (s->kind == K_DENSE) {
        const jg_gemm_problem p = dense_problem(s, true);
        s->plan_status = jg_gemm_plan(ctx, &p, &s->plan);
    } else {
        const jg_grouped_problem p = grouped_problem(s, true);
        s->plan_status = jg_grouped_plan(ctx, &p, &s->plan);
    }
    if (s->plan_status != JG_OK)
        snprintf(s->plan_error, sizeof s->plan_error, "%s", jg_context_last_error(ctx));
}

static void plan_all(jg_context *const ctx[ENVS], fshape *shapes, const jg_fuzz_opts *o)
{
    jg_fuzz_job job = {.ctx = ctx, .shapes = shapes};
    const double seconds = jg_fuzz_parallel(o, plan_one, &job);
    printf("any_fuzz: planned in %.1f s on %d threads, %llu kernels compiled\n", seconds,
           o->threads, (unsigned long long)jg_fuzz_stats(ctx, ENVS).plans_compiled);
}

/* ---- phase 2: one shape's operands, launch, checks -------------------------------- */

/* A shape's buffers: A and D (and C) over all rows the layout stores
 * (dense M, list every group's one after another, contiguous m_max,
 * masked groups x m_max), B over every group's; the groups' rows. */
typedef struct operands {
    store a, b, c, d;
    int64_t rows;     /* of A, C, D */
    int64_t first[MAX_GROUPS + 1]; /* list: each group's first row; masked: g * m_max */
    int32_t *owner;   /* rows: the group whose D row it is, or -1 (never written) */
    float *sa, *sb;   /* e4m3 scales on the host */
    void *dsa, *dsb;  /* and on the device */
    int64_t na, nb;   /* how many */
    void *ws;         /* exact FP32's workspace; unaligned A or B: the pack's, in a
                         * launch that packs (NULL in the one that does not) */
    size_t ws_bytes;
    int32_t *rows_dev; /* contiguous: offsets; masked: counts */
} operands;

static int64_t k_blocks(int64_t k) { return (k + 127) / 128; }

/* A's scale for row i and element k; B's for row j (its group's) and k. */
static double scale_a(const fshape *s, const operands *o, int64_t i, int64_t k)
{
    return s->scale == JG_SCALE_TENSOR ? o->sa[0]
           : s->scale == JG_SCALE_ROW  ? o->sa[i]
                                       : o->sa[i * k_blocks(s->k) + k / 128];
}

static double scale_b(const fshape *s, const operands *o, int64_t j, int64_t k)
{
    return s->scale == JG_SCALE_TENSOR ? o->sb[0]
           : s->scale == JG_SCALE_ROW  ? o->sb[j]
                                       : o->sb[(j / 128) * k_blocks(s->k) + k / 128];
}

static void *upload_floats(const float *x, int64_t n)
{
    void *d;
    CUDA_CHECK(cudaMalloc(&d, (size_t)n * 4));
    CUDA_CHECK(cudaMemcpy(d, x, (size_t)n * 4, cudaMemcpyHostToDevice));
    return d;
}

static void make_scales(const fshape *s, operands *o, jg_rng *r)
{
    if (s->scale == JG_SCALE_NONE)
        return;
    o->na = s->scale == JG_SCALE_TENSOR ? 1
            : s->scale == JG_SCALE_ROW  ? s->m
                                        : s->m * k_blocks(s->k);
    o->nb = s->scale == JG_SCALE_TENSOR ? 1
            : s->scale == JG_SCALE_ROW  ? s->n
                                        : ((s->n + 127) / 128) * k_blocks(s->k);
    o->sa = malloc((size_t)o->na * 4);
    o->sb = malloc((size_t)o->nb * 4);
    for (int64_t i = 0; i < o->na; ++i)
        o->sa[i] = (float)ldexp(1.0 + jg_rng_uniform(r), (int)jg_rng_below(r, 5) - 3);
    for (int64_t i = 0; i < o->nb; ++i)
        o->sb[i] = (float)ldexp(1.0 + jg_rng_uniform(r), (int)jg_rng_below(r, 5) - 3);
    o->dsa = upload_floats(o->sa, o->na);
    o->dsb = upload_floats(o->sb, o->nb);
}

/* Which rows of D are written and by which group; the device's rows array. */
static void make_rows(const fshape *s, operands *o)
{
    o->owner = malloc((size_t)(o->rows ? o->rows : 1) * sizeof *o->owner);
    for (int64_t i = 0; i < o->rows; ++i)
        o->owner[i] = s->kind == K_DENSE ? 0 : -1;
    if (s->kind == K_DENSE)
        return;
    int32_t host[MAX_GROUPS + 1];
    int64_t at = 0;
    for (int32_t g = 0; g < s->groups; ++g) {
        o->first[g] = s->kind == K_MASKED ? g * s->m_max : at;
        for (int64_t i = 0; i < s->gm[g]; ++i)
            o->owner[o->first[g] + i] = g;
        host[g] = (int32_t)(s->kind == K_MASKED ? s->gm[g] : at);
        at += s->gm[g];
    }
    host[s->groups] = (int32_t)at; /* contiguous: the end */
    if (s->kind != K_LIST) {
        CUDA_CHECK(cudaMalloc((void **)&o->rows_dev, sizeof host));
        CUDA_CHECK(cudaMemcpy(o->rows_dev, host, sizeof host, cudaMemcpyHostToDevice));
    }
}

static void make_operands(const fshape *s, operands *o, jg_rng *r)
{
    memset(o, 0, sizeof *o);
    const int32_t g = s->kind == K_DENSE ? 1 : s->groups;
    o->rows = s->kind == K_DENSE ? s->m
              : s->kind == K_LIST ? s->m
              : s->kind == K_CONTIG ? s->m_max
                                    : s->groups * s->m_max;
    pool *pl = malloc(sizeof *pl);
    pool_fill(pl, s->ab, r);
    if (s->a_mn) /* [K, M] */
        store_init(&o->a, s->ab, s->k, s->m, s->lda, s->off[0]);
    else
        store_init(&o->a, s->ab, o->rows, s->k, s->lda, s->off[0]);
    if (s->b_mn) /* every group's [K, N] */
        store_init(&o->b, s->ab, g * s->k, s->n, s->ldb, s->off[1]);
    else
        store_init(&o->b, s->ab, g * s->n, s->k, s->ldb, s->off[1]);
    store_fill(&o->a, pl, r);
    store_fill(&o->b, pl, r);
    store_upload(&o->a);
    store_upload(&o->b);
    if (s->c != JG_DTYPE_NONE) {
        pool_fill(pl, s->c, r);
        store_init(&o->c, s->c, o->rows, s->n, s->ldc, s->off[2]);
        store_fill(&o->c, pl, r);
        store_upload(&o->c);
    }
    free(pl);
    store_init(&o->d, s->d, o->rows, s->n, s->ldd, s->off[3]);
    store_upload(&o->d); /* all poison */
    make_scales(s, o, r);
    make_rows(s, o);
    if (s->prec == PR_EXACT) {
        const int64_t kp = (s->k + 63) / 64 * 64;
        o->ws_bytes = (size_t)(s->m + s->n) * (size_t)kp * 8;
        CUDA_CHECK(cudaMalloc(&o->ws, o->ws_bytes));
    }
}

static int64_t up128(int64_t bytes) { return (bytes + 127) / 128 * 128; }

/* The pack's workspace by jitgemm.h's rule ("Unaligned operands with a
 * workspace") for a launch of m rows: each operand that may load by
 * cp.async (JG_GEMM_UNALIGNED as planned, or rows off 16 bytes), its rows
 * times its rows' bytes rounded up to 128. 0: the plan packs nothing
 * (grouped, exact FP32, aligned). A one-column MN-major operand of
 * adjacent elements is planned as the K-major one (jg__problem_key_make). */
static size_t pack_rule_bytes(const fshape *s, int64_t m)
{
    if (s->kind != K_DENSE || s->prec == PR_EXACT)
        return 0;
    const jg_gemm_problem p = dense_problem(s, true);
    const bool any = (p.flags & JG_GEMM_UNALIGNED) != 0;
    const bool generic = (p.flags & JG_GEMM_M_GENERIC) != 0;
    const int64_t size = (int64_t)esize(s->ab);
    bool a_mn = s->a_mn, b_mn = s->b_mn;
    int64_t lda = s->lda, ldb = s->ldb;
    if (a_mn && s->m == 1 && lda == 1 && !generic) {
        a_mn = false;
        lda = (s->k + 7) / 8 * 8;
    }
    if (b_mn && s->n == 1 && ldb == 1) {
        b_mn = false;
        ldb = (s->k + 7) / 8 * 8;
    }
    int64_t bytes = 0;
    if (any || lda * size % 16)
        bytes += (a_mn ? s->k : m) * up128((a_mn ? (generic ? lda : m) : s->k) * size);
    if (any || ldb * size % 16)
        bytes += (b_mn ? s->k : s->n) * up128((b_mn ? s->n : s->k) * size);
    return (size_t)bytes;
}

static void free_operands(operands *o)
{
    store_free(&o->a);
    store_free(&o->b);
    store_free(&o->c);
    store_free(&o->d);
    free(o->owner);
    free(o->sa);
    free(o->sb);
    if (o->dsa)
        CUDA_CHECK(cudaFree(o->dsa));
    if (o->dsb)
        CUDA_CHECK(cudaFree(o->dsb));
    if (o->ws)
        CUDA_CHECK(cudaFree(o->ws));
    if (o->rows_dev)
        CUDA_CHECK(cudaFree(o->rows_dev));
}

static jg_status launch(const fshape *s, operands *o, jg_context *ctx)
{
    if (s->kind == K_DENSE) {
        jg_gemm_args args = {.a = store_ptr(&o->a, 0), .b = store_ptr(&o->b, 0),
                             .c = s->c != JG_DTYPE_NONE ? store_ptr(&o->c, 0) : NULL,
                             .d = store_ptr(&o->d, 0), .alpha = s->alpha, .beta = s->beta,
                             .m = (s->flags & JG_GEMM_M_GENERIC) ? s->m : 0,
                             .a_scale = o->dsa, .b_scale = o->dsb, .workspace = o->ws,
                             .workspace_bytes = o->ws_bytes};
        if (!s->one_shot)
            return jg_gemm_run(s->plan, &args, NULL);
        const jg_gemm_problem p = dense_problem(s, false);
        return jg_gemm(ctx, &p, &args, NULL);
    }
    const void *a[MAX_GROUPS], *b[MAX_GROUPS], *c[MAX_GROUPS];
    void *d[MAX_GROUPS];
    for (int32_t g = 0; g < s->groups; ++g) { /* list: each group's rows; else the tensors */
        const int64_t row = s->kind == K_LIST ? o->first[g] : 0;
        const int64_t brow = s->kind == K_LIST ? g * (s->b_mn ? s->k : s->n) : 0;
        a[g] = store_ptr(&o->a, row);
        b[g] = store_ptr(&o->b, brow);
        c[g] = s->c != JG_DTYPE_NONE ? store_ptr(&o->c, row) : NULL;
        d[g] = store_ptr(&o->d, row);
    }
    jg_grouped_args args = {.a = a, .b = b, .c = s->c != JG_DTYPE_NONE ? c : NULL, .d = d,
                            .alpha = s->alpha, .beta = s->beta, .rows = o->rows_dev};
    if (!s->one_shot)
        return jg_grouped_run(s->plan, &args, NULL);
    const jg_grouped_problem p = grouped_problem(s, false);
    return jg_grouped(ctx, &p, &args, NULL);
}

/* ---- checks ------------------------------------------------------------------------- */

/* Every byte of D's allocation: the written rows' elements finite, all
 * else still poison (0xFF). */
static void scan_d(const fshape *s, const operands *o, jg_gemm_check *ck)
{
    const store *d = &o->d;
    const size_t n = esize(d->type);
    for (size_t byte = 0; byte < d->bytes; byte += n) {
        const int64_t e = (int64_t)(byte / n) - d->off;
        const int64_t i = e >= 0 ? e / d->ld : -1, j = e >= 0 ? e % d->ld : -1;
        const bool inside = i >= 0 && i < o->rows && j < s->n && o->owner[i] >= 0;
        bool bad;
        if (inside)
            bad = !isfinite(decode(d->type, d->host + byte));
        else {
            bad = false;
            for (size_t q = 0; q < n && byte + q < d->bytes; ++q)
                bad |= d->host[byte + q] != 0xFF;
        }
        if (bad)
            jg_check_bad(ck, inside, i, j);
    }
}

/* A value as TF32 kernels read it: rounded to the nearest TF32 value
 * (the pool holds no ties) by the loads. */
static float tf32_nearest(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    u = (u + 0x1000u) & 0xffffe000u; /* finite: the pool's normals */
    memcpy(&x, &u, 4);
    return x;
}

/* The logical A [rows, K] and B [groups * N, K] as floats (the stored
 * values; e4m3 with their scales; TF32: as the kernel reads them). */
static float *decode_a(const fshape *s, const operands *o)
{
    float *x = malloc(sizeof(float) * (size_t)(o->rows * s->k));
    for (int64_t i = 0; i < o->rows; ++i)
        for (int64_t k = 0; k < s->k; ++k) {
            const uint8_t *p = s->a_mn ? store_at(&o->a, k, i) : store_at(&o->a, i, k);
            double v = decode(s->ab, p);
            if (s->scale != JG_SCALE_NONE)
                v *= scale_a(s, o, i, k);
            x[i * s->k + k] = s->prec == PR_TF32 ? tf32_nearest((float)v) : (float)v;
        }
    return x;
}

static float *decode_b(const fshape *s, const operands *o)
{
    const int32_t groups = s->kind == K_DENSE ? 1 : s->groups;
    float *x = malloc(sizeof(float) * (size_t)(groups * s->n * s->k));
    for (int32_t g = 0; g < groups; ++g)
        for (int64_t j = 0; j < s->n; ++j)
            for (int64_t k = 0; k < s->k; ++k) {
                const uint8_t *p = s->b_mn ? store_at(&o->b, g * s->k + k, j)
                                           : store_at(&o->b, g * s->n + j, k);
                double v = decode(s->ab, p);
                if (s->scale != JG_SCALE_NONE)
                    v *= scale_b(s, o, j, k);
                x[(g * s->n + j) * s->k + k] =
                    s->prec == PR_TF32 ? tf32_nearest((float)v) : (float)v;
            }
    return x;
}

/* The allowance for element (i, j) by the shape's type (the header's bounds). */
static double allowance(const fshape *s, double sabs, double bc, double ref)
{
    const double uo = jg_test_unit_roundoff(s->d);
    switch (s->prec) {
    case PR_EXACT: {
        const int64_t kp3 = 3 * ((s->k + 63) / 64 * 64);
        return jg_check_allow(s->d, kp3, sabs * (1 + 0x1p-10), bc, ref) + 0x1p-20 * sabs;
    }
    case PR_E4M3:
        return sabs * 0x1p-8 + 2 * uo * fabs(ref) + 0x1p-22 * fabs(bc) + jg_test_tiny(s->d);
    default:
        return jg_check_allow(s->d, s->k, sabs, bc, ref);
    }
}

static double norm_bound(const fshape *s)
{
    const double uo = jg_test_unit_roundoff(s->d), k = (double)s->k;
    switch (s->prec) {
    case PR_EXACT:
        return 2 * uo + 8 * sqrt(3.0 * (double)((s->k + 63) / 64 * 64)) * 0x1p-24 + 0x1p-20;
    case PR_E4M3:
        return 2 * uo + 0x1p-9;
    default:
        return 2 * uo + 8 * sqrt(k) * 0x1p-24;
    }
}

static void check_element(const fshape *s, const operands *o, const float *ad, const float *bd,
                          jg_gemm_check *ck, int64_t i, int64_t j)
{
    const int32_t g = o->owner[i];
    double sum, sabs;
    jg_check_dot(ad + i * s->k, bd + (g * s->n + j) * s->k, s->k, &sum, &sabs);
    const double bc = s->c != JG_DTYPE_NONE ? s->beta * decode(s->c, store_at(&o->c, i, j)) : 0.0;
    const double ref = s->alpha * sum + bc;
    jg_check_record(ck, i, j, decode(s->d, store_at(&o->d, i, j)), ref,
                    allowance(s, fabs(s->alpha) * sabs, bc, ref));
}

/* Every written row at a share of REF_BUDGET's columns (at least one), the
 * first and last written rows in full. */
static bool verify(const fshape *s, const operands *o, jg_rng *r, jg_gemm_check *ck)
{
    memset(ck, 0, sizeof *ck);
    jg_check_begin(ck);
    scan_d(s, o, ck);
    int64_t written = 0, first = -1, last = -1;
    for (int64_t i = 0; i < o->rows; ++i)
        if (o->owner[i] >= 0) {
            ++written;
            first = first < 0 ? i : first;
            last = i;
        }
    if (written) {
        float *ad = decode_a(s, o), *bd = decode_b(s, o);
        int64_t spot = REF_BUDGET / (written * s->k);
        spot = spot < 1 ? 1 : spot > s->n ? s->n : spot;
        for (int64_t i = 0; i < o->rows; ++i) {
            if (o->owner[i] < 0)
                continue;
            if (i == first || i == last)
                for (int64_t j = 0; j < s->n; ++j)
                    check_element(s, o, ad, bd, ck, i, j);
            else
                for (int64_t q = 0; q < spot; ++q)
                    check_element(s, o, ad, bd, ck, i, (int64_t)jg_rng_below(r, (uint64_t)s->n));
        }
        free(ad);
        free(bd);
    }
    jg_check_finish(ck, norm_bound(s));
    /* groups without rows: nothing to compare, the scan alone decides */
    if (!written)
        ck->ok = ck->nonfinite == 0 && ck->clobbered == 0;
    return ck->ok;
}

static void describe(const fshape *s, int64_t idx, char *buf, size_t size)
{
    char rows[96] = "";
    if (s->kind != K_DENSE) {
        int n = snprintf(rows, sizeof rows, " groups %d rows", (int)s->groups);
        for (int32_t g = 0; g < s->groups && n > 0 && (size_t)n < sizeof rows; ++g)
            n += snprintf(rows + n, sizeof rows - (size_t)n, "%s%lld", g ? "," : " ",
                          (long long)s->gm[g]);
        if (s->m_max && n > 0 && (size_t)n < sizeof rows)
            snprintf(rows + n, sizeof rows - (size_t)n, " m_max %lld", (long long)s->m_max);
    }
    snprintf(buf, size,
             "shape %lld: %s %s%s m=%lld n=%lld k=%lld%s %s%s%s->%s%s lda=%lld ldb=%lld ldc=%lld "
             "ldd=%lld off a%lld b%lld c%lld d%lld flags=0x%x%s alpha=%.6g beta=%.6g context %s "
             "kernel %s",
             (long long)idx, kind_names[s->kind], prec_names[s->prec],
             s->scale == JG_SCALE_TENSOR ? "/tensor"
             : s->scale == JG_SCALE_ROW  ? "/row"
             : s->scale == JG_SCALE_BLOCK ? "/block"
                                          : "",
             (long long)s->m, (long long)s->n, (long long)s->k, rows, s->a_mn ? "A M-major " : "",
             s->b_mn ? "B N-major " : "", dtype_str(s->ab), dtype_str(s->d),
             s->c != JG_DTYPE_NONE ? " +C" : "", (long long)s->lda, (long long)s->ldb,
             (long long)s->ldc, (long long)s->ldd, (long long)s->off[0], (long long)s->off[1],
             (long long)s->off[2], (long long)s->off[3], s->flags, s->one_shot ? " one-shot" : "",
             s->alpha, s->beta, envs[s->env].name, jg_fuzz_kernel(s->plan));
}

/* One launch of the shape on its operands (D poison before it), checked;
 * false with *line saying why. */
static bool launch_checked(const fshape *s, operands *o, jg_rng *r, jg_context *ctx,
                           const char *what, double margin[2], char *line, size_t size)
{
    const jg_status st = launch(s, o, ctx);
    if (st != JG_OK) {
        snprintf(line, size, "launch: %s: %s", jg_status_name(st), jg_context_last_error(ctx));
        return false;
    }
    jg_fuzz_sync("any_fuzz", what);
    CUDA_CHECK(cudaMemcpy(o->d.host, o->d.dev, o->d.bytes, cudaMemcpyDeviceToHost));
    jg_gemm_check ck;
    const bool ok = verify(s, o, r, &ck);
    jg_check_describe(&ck, line, size);
    margin[0] = fmax(margin[0], ck.worst);
    if (ck.norm_bound > 0 && ck.sq_ref > 0)
        margin[1] = fmax(margin[1], ck.norm_rel / ck.norm_bound);
    return ok;
}

/* Unaligned A or B: the launch again with the pack's workspace (D
 * poisoned anew), after checking that the plan asks for the rule's size. */
static bool run_packed(const fshape *s, operands *o, jg_rng *r, jg_context *ctx,
                       const char *what, double margin[2], char *line, size_t size,
                       int64_t *packed)
{
    if (s->kind != K_DENSE || s->prec == PR_EXACT) /* their workspaces are others' */
        return true;
    const size_t want = pack_rule_bytes(s, s->m);
    const size_t planned = pack_rule_bytes(s, (s->flags & JG_GEMM_M_GENERIC) ? s->hint_m : s->m);
    size_t got = 0;
    if (jg_plan_workspace_bytes(s->plan, &got) != JG_OK || got != planned) {
        snprintf(line, size, "jg_plan_workspace_bytes: %zu, the header's rule: %zu", got,
                 planned);
        return false;
    }
    if (!want)
        return true;
    memset(o->d.host, 0xFF, o->d.bytes);
    store_upload(&o->d);
    o->ws_bytes = want;
    CUDA_CHECK(cudaMalloc(&o->ws, o->ws_bytes));
    ++*packed;
    char with[700];
    snprintf(with, sizeof with, "%s, with a %zu-byte workspace", what, want);
    return launch_checked(s, o, r, ctx, with, margin, line, size);
}

static bool run_shape(const fshape *s, int64_t idx, jg_context *ctx, double margin[2],
                      int64_t *packed)
{
    char what[640], line[512];
    describe(s, idx, what, sizeof what);
    jg_rng r;
    jg_rng_seed(&r, s->seed);
    operands o;
    make_operands(s, &o, &r);
    bool ok = launch_checked(s, &o, &r, ctx, what, margin, line, sizeof line);
    if (ok && !run_packed(s, &o, &r, ctx, what, margin, line, sizeof line, packed)) {
        ok = false;
        snprintf(what + strlen(what), sizeof what - strlen(what), " (with a workspace)");
    }
    if (!ok)
        printf("FAIL %s: %s\n", what, line);
    free_operands(&o);
    return ok;
}

/* ---- main ----------------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    jg_fuzz_opts o;
    jg_fuzz_parse(argc, argv, 1000, &o);
    const int64_t count = o.count, only = o.only;
    const uint64_t seed = o.seed;
    printf("any_fuzz: seed %llu (replay with --seed %llu)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    fflush(stdout);
    jg_test_gpu_init();
    jg_context *ctx[ENVS];
    jg_fuzz_contexts(envs, ENVS, ctx);
    fshape *shapes = calloc((size_t)count, sizeof *shapes);
    if (!shapes)
        return 1;
    jg_rng r;
    jg_rng_seed(&r, seed);
    for (int64_t i = 0; i < count; ++i)
        draw_shape(&r, &shapes[i]);
    plan_all(ctx, shapes, &o);
    int64_t failed = 0, ran = 0, by_prec[PRECS] = {0}, by_kind[4] = {0}, packed = 0;
    double margin[2] = {0, 0};
    for (int64_t i = 0; i < count; ++i) {
        if (only >= 0 && i != only)
            continue;
        const fshape *s = &shapes[i];
        ++ran;
        ++by_prec[s->prec];
        ++by_kind[s->kind];
        if (s->plan_status != JG_OK) {
            char what[640];
            describe(s, i, what, sizeof what);
            printf("FAIL %s: plan: %s: %s\n", what, jg_status_name(s->plan_status),
                   s->plan_error);
            ++failed;
        } else if (!run_shape(s, i, ctx[s->env], margin, &packed)) {
            ++failed;
        }
        fflush(stdout);
    }
    for (size_t e = 0; e < ENVS; ++e)
        jg_context_destroy(ctx[e]);
    free(shapes);
    printf("any_fuzz: by type bf16 %lld, fp16 %lld, tf32 %lld, fp32-exact %lld, e4m3 %lld; "
           "dense %lld, list %lld, contiguous %lld, masked %lld\n",
           (long long)by_prec[0], (long long)by_prec[1], (long long)by_prec[2],
           (long long)by_prec[3], (long long)by_prec[4], (long long)by_kind[0],
           (long long)by_kind[1], (long long)by_kind[2], (long long)by_kind[3]);
    printf("any_fuzz: %lld dense shapes also ran with the pack's workspace\n", (long long)packed);
    printf("any_fuzz: largest errors: %.3g of the element bound, %.3g of the norm bound\n",
           margin[0], margin[1]);
    printf("any_fuzz: %lld shapes, %lld failed (seed %llu)\n", (long long)ran, (long long)failed,
           (unsigned long long)seed);
    return failed ? 1 : 0;
}
