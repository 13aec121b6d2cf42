/* Helpers for the GPU tests (CUDA runtime API): device setup that skips
 * (exit 77) without an sm_90 GPU, host/device matrices with NaN poison, and
 * an FP64 CPU reference with error checks that cannot fail falsely.
 * Header-only. */
#ifndef JG_TEST_GPU_H
#define JG_TEST_GPU_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "jg_test.h"
#include "jitgemm/jitgemm.h"

/* A CUDA runtime call that must succeed: prints where and why, exits 1. */
#define CUDA_CHECK(call)                                                                 \
    do {                                                                                 \
        cudaError_t e_ = (call);                                                         \
        if (e_ != cudaSuccess) {                                                         \
            fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call,    \
                    cudaGetErrorString(e_), cudaGetErrorName(e_));                       \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

/* A libjitgemm call that must succeed: prints the status and the context's
 * last error, exits 1. */
#define JG_REQUIRE(ctx, call)                                                            \
    do {                                                                                 \
        jg_status s_ = (call);                                                           \
        if (s_ != JG_OK) {                                                               \
            fprintf(stderr, "%s:%d: %s failed: %s: %s\n", __FILE__, __LINE__, #call,     \
                    jg_status_name(s_), jg_context_last_error(ctx));                     \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

/* Exits 77 (skipped) without a CUDA device of compute capability 9.x; else
 * makes device 0's primary context current on this thread, which is what
 * jg_context_create binds. */
static inline void jg_test_gpu_init(void)
{
    int count = 0, major = 0, minor = 0;
    setvbuf(stdout, NULL, _IOLBF, 0); /* progress survives a crash (meson pipes stdout) */
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e != cudaSuccess || count == 0) {
        printf("SKIP: no CUDA device: %s\n",
               e != cudaSuccess ? cudaGetErrorString(e) : "cudaGetDeviceCount returned 0");
        exit(JG_TEST_SKIP);
    }
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
    if (major != 9) {
        printf("SKIP: device 0 is compute capability %d.%d; these tests need 9.x (sm_90)\n",
               major, minor);
        exit(JG_TEST_SKIP);
    }
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaFree(0));
}

/* A context on the current CUDA context, with JG_CONTEXT_WORKSPACE (the
 * tests' args carry the workspace fields); exits 1 if that fails (the
 * device was already checked by jg_test_gpu_init). */
static inline jg_context *jg_test_context(void)
{
    jg_context *ctx = NULL;
    const jg_options o = {.flags = JG_CONTEXT_WORKSPACE};
    jg_status st = jg_context_create(&o, &ctx);
    if (st != JG_OK) {
        fprintf(stderr, "jg_context_create: %s: %s\n", jg_status_name(st),
                jg_context_last_error(NULL));
        exit(1);
    }
    return ctx;
}

/* ---- element types ------------------------------------------------------ */

static inline size_t jg_test_dtype_size(jg_dtype t) { return t == JG_FP32 ? 4 : 2; }

static inline const char *jg_test_dtype_str(jg_dtype t)
{
    return t == JG_BF16 ? "bf16" : t == JG_FP16 ? "fp16" : t == JG_FP32 ? "fp32" : "none";
}

/* Unit roundoff (round to nearest) of a type's significand. */
static inline double jg_test_unit_roundoff(jg_dtype t)
{
    return t == JG_BF16 ? 0x1p-8 : t == JG_FP16 ? 0x1p-11 : 0x1p-24;
}

/* Absolute error allowance for results in a type's subnormal range, where
 * rounding is absolute (half the subnormal spacing), not relative. Generous:
 * covers underflow of fp32 intermediates too. */
static inline double jg_test_tiny(jg_dtype t) { return t == JG_FP16 ? 0x1p-24 : 0x1p-120; }

/* The magnitude from which round-to-nearest gives infinity in t: the
 * largest finite value plus half its last step (FP16 65504 + 16; BF16
 * (2 - 2^-8) 2^127; FP32 (2 - 2^-24) 2^127). */
static inline double jg_test_overflow(jg_dtype t)
{
    return t == JG_FP16 ? 65520.0 : t == JG_BF16 ? 0x1.ffp127 : 0x1.ffffffp127;
}

static inline float jg_test_decode(jg_dtype t, uint32_t bits)
{
    if (t == JG_BF16)
        return jg_bf16_to_f32((uint16_t)bits);
    if (t == JG_FP16)
        return jg_f16_to_f32((uint16_t)bits);
    float f;
    memcpy(&f, &bits, 4);
    return f;
}

static inline uint32_t jg_test_encode(jg_dtype t, float f)
{
    if (t == JG_BF16)
        return jg_f32_to_bf16(f);
    if (t == JG_FP16)
        return jg_f32_to_f16(f);
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return bits;
}

/* ---- matrices: a host copy and a device copy of the same bytes ---------- */

typedef struct jg_mat {
    jg_dtype type;
    int64_t rows, cols, ld; /* in elements; ld >= cols */
    size_t bytes;           /* rows * ld elements */
    void *host;
    void *dev;
} jg_mat;

/* Allocates both copies; the host copy starts as all 0xFF bytes (NaN in
 * every type), so padding columns are poison everywhere. ld 0: packed. */
static inline void jg_mat_init(jg_mat *m, jg_dtype t, int64_t rows, int64_t cols, int64_t ld)
{
    m->type = t;
    m->rows = rows;
    m->cols = cols;
    m->ld = ld ? ld : cols;
    m->bytes = (size_t)rows * (size_t)m->ld * jg_test_dtype_size(t);
    m->host = malloc(m->bytes);
    if (!m->host) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", m->bytes);
        exit(1);
    }
    memset(m->host, 0xFF, m->bytes);
    CUDA_CHECK(cudaMalloc(&m->dev, m->bytes));
}

static inline void jg_mat_free(jg_mat *m)
{
    free(m->host);
    if (m->dev)
        CUDA_CHECK(cudaFree(m->dev));
    memset(m, 0, sizeof *m);
}

static inline uint32_t jg_mat_bits(const jg_mat *m, int64_t i, int64_t j)
{
    size_t at = (size_t)(i * m->ld + j);
    if (m->type == JG_FP32)
        return ((const uint32_t *)m->host)[at];
    return ((const uint16_t *)m->host)[at];
}

static inline void jg_mat_set_bits(jg_mat *m, int64_t i, int64_t j, uint32_t bits)
{
    size_t at = (size_t)(i * m->ld + j);
    if (m->type == JG_FP32)
        ((uint32_t *)m->host)[at] = bits;
    else
        ((uint16_t *)m->host)[at] = (uint16_t)bits;
}

static inline double jg_mat_get(const jg_mat *m, int64_t i, int64_t j)
{
    return jg_test_decode(m->type, jg_mat_bits(m, i, j));
}

/* Still the poison pattern (0xFFFF / 0xFFFFFFFF): never written. */
static inline bool jg_mat_is_poison(const jg_mat *m, int64_t i, int64_t j)
{
    return jg_mat_bits(m, i, j) == (m->type == JG_FP32 ? 0xFFFFFFFFu : 0xFFFFu);
}

/* Fills the logical elements (not the padding) of the host copy with
 * standard normals rounded to the type, never zero. Elements are drawn from
 * a pool of 2^16 such values: as random as needed here, and ~50x faster
 * than Box-Muller per element for the 16M-element matrices. */
static inline void jg_mat_fill_normal(jg_mat *m, jg_rng *r)
{
    uint32_t *pool = malloc(sizeof(uint32_t) << 16);
    if (!pool) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    for (size_t p = 0; p < (size_t)1 << 16; ++p) {
        do
            pool[p] = jg_test_encode(m->type, (float)jg_rng_normal(r));
        while (jg_test_decode(m->type, pool[p]) == 0.0f);
    }
    uint64_t x = 0;
    int left = 0;
    for (int64_t i = 0; i < m->rows; ++i)
        for (int64_t j = 0; j < m->cols; ++j) {
            if (left == 0) {
                x = jg_rng_next(r);
                left = 4;
            }
            jg_mat_set_bits(m, i, j, pool[x & 0xFFFF]);
            x >>= 16;
            --left;
        }
    free(pool);
}

static inline void jg_mat_upload(const jg_mat *m)
{
    CUDA_CHECK(cudaMemcpy(m->dev, m->host, m->bytes, cudaMemcpyHostToDevice));
}

static inline void jg_mat_download(jg_mat *m)
{
    CUDA_CHECK(cudaMemcpy(m->host, m->dev, m->bytes, cudaMemcpyDeviceToHost));
}

/* NaN in every element and padding of the device copy: an element the
 * kernel fails to write stays NaN and can never pass the checks. To be
 * called before EACH launch. */
static inline void jg_mat_poison(const jg_mat *m)
{
    CUDA_CHECK(cudaMemset(m->dev, 0xFF, m->bytes));
}

/* ---- the FP64 reference and the checks ---------------------------------- *
 *
 * ref[i][j] = alpha * sum_k A[i][k]*B[j][k] + beta*C[i][j], in FP64 from the
 * 16-bit inputs exactly as the GPU saw them. Products of two 16-bit values
 * are exact in FP64 (and FP32), so the reference's own error (~K*2^-53) is
 * negligible against every allowance below.
 *
 * (a) Every element of D[0:m, 0:n] is finite: the poison is NaN, so an
 *     element never written fails, and NaN never passes. Every other byte of
 *     the buffer (padding columns n..ldd, rows m.. of an M-generic launch)
 *     must still be poison: nothing is written out of bounds.
 * (b) Element-wise, with s = sum_k |A[i][k]*B[j][k]|:
 *       |d - ref| <= e + u_out*(|ref| + e) + tiny,
 *       e = |alpha|*(gamma_K + 2u)*s + 2u*|beta*c|,  gamma_K = K*u/(1 - K*u)
 *     gamma_K*s is the classical worst-case bound of any order of K-term
 *     FP32 summation (Higham, Accuracy and Stability, 3.1), for each
 *     rounding error at most u times its operands. We take u = 2^-23, not
 *     2^-24: tensor cores truncate instead of rounding to nearest in their
 *     accumulation (Fasi et al., "Numerical behavior of NVIDIA tensor cores",
 *     2021), which doubles the per-operation error. 2u*|alpha|*s and
 *     2u*|beta*c| cover the FP32 epilogue (alpha*acc, beta*c, their sum);
 *     u_out*(...) the final rounding to D's type (2^-8 bf16, 2^-11 fp16,
 *     2^-24 fp32); tiny the subnormal range. Being a worst case, this never
 *     fails on a correct kernel, whatever the data; it fails on any wrong,
 *     stale or misplaced element, since those are off by O(|ref|) while the
 *     allowance is ~K*2^-23*s (s ~ sqrt(K)*|ref| for random data).
 * (c) Norm-wise over the checked elements:
 *       ||d - ref||_F / ||ref||_F <= 2*u_out + 8*sqrt(K)*2^-24.
 *     Rounding errors of random data behave like a random walk: the
 *     accumulation error grows like sqrt(K)*2^-24 relative, and rounding to
 *     D adds at most u_out. The factor 8 leaves room for truncating
 *     accumulation, whose errors are biased: simulated at K = 4096 with
 *     every add truncated, the ratio reaches about half of this bound. Much
 *     tighter than (b): a missing 64-wide k-tile is off by sqrt(64/K) >= 1/8
 *     relative, a wrong row or tile by O(1) of its share of the norm. */

#define JG_REF_BUDGET (INT64_C(1) << 27) /* multiply-adds of the reference per check */

typedef struct jg_gemm_check {
    /* inputs */
    const jg_mat *a, *b; /* host copies hold A [>=m, k] and B [n, k] */
    const jg_mat *c;     /* NULL: no C; else its values before the launch */
    const jg_mat *d;     /* host copy holds D as downloaded; rows >= m */
    int64_t m;           /* rows written by the launch */
    double alpha, beta;
    /* results */
    int64_t checked;    /* elements compared with the reference */
    int64_t nonfinite;  /* (a) NaN/Inf in D[0:m, 0:n] */
    int64_t clobbered;  /* (a) bytes outside D[0:m, 0:n] no longer poison */
    int64_t bad_i, bad_j; /* first element failing (a), -1 if none */
    int64_t over_bound; /* (b) */
    double worst;       /* (b) largest |d - ref| / allowance */
    int64_t worst_i, worst_j;
    double worst_d, worst_ref;
    double norm_rel, norm_bound; /* (c) */
    double sq_err, sq_ref;       /* (c) accumulators */
    bool ok;
} jg_gemm_check;

/* (a)'s count of one bad element at (i, j): non-finite inside D, or no
 * longer poison outside it; the first one's place is kept. */
static inline void jg_check_bad(jg_gemm_check *ck, bool inside, int64_t i, int64_t j)
{
    if (inside)
        ++ck->nonfinite;
    else
        ++ck->clobbered;
    if (ck->bad_i < 0) {
        ck->bad_i = i;
        ck->bad_j = j;
    }
}

/* (a): scans the whole downloaded buffer, padding included. */
static inline void jg_check_scan(jg_gemm_check *ck)
{
    const jg_mat *d = ck->d;
    for (int64_t i = 0; i < d->rows; ++i)
        for (int64_t j = 0; j < d->ld; ++j) {
            bool inside = i < ck->m && j < d->cols;
            bool bad = inside ? !isfinite(jg_mat_get(d, i, j)) : !jg_mat_is_poison(d, i, j);
            if (bad)
                jg_check_bad(ck, inside, i, j);
        }
}

/* Rows [row0, row0 + rows) of a matrix, all its columns, decoded into packed
 * floats: into out, or into a new array when out is NULL. */
static inline float *jg_check_decode(const jg_mat *x, int64_t row0, int64_t rows, float *out)
{
    if (!out)
        out = malloc(sizeof(float) * (size_t)(rows * x->cols));
    if (!out) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t k = 0; k < x->cols; ++k)
            out[i * x->cols + k] = (float)jg_mat_get(x, row0 + i, k);
    return out;
}

/* sum x*y and sum |x*y| in FP64, four partial sums to keep the adds
 * pipelined (the order does not matter at FP64 against FP32 bounds). */
static inline void jg_check_dot(const float *x, const float *y, int64_t k, double *sum,
                                double *sabs)
{
    double s[4] = {0, 0, 0, 0}, a[4] = {0, 0, 0, 0};
    int64_t q = 0;
    for (; q + 4 <= k; q += 4)
        for (int l = 0; l < 4; ++l) {
            double p = (double)x[q + l] * (double)y[q + l];
            s[l] += p;
            a[l] += fabs(p);
        }
    for (; q < k; ++q) {
        double p = (double)x[q] * (double)y[q];
        s[0] += p;
        a[0] += fabs(p);
    }
    *sum = (s[0] + s[1]) + (s[2] + s[3]);
    *sabs = (a[0] + a[1]) + (a[2] + a[3]);
}

/* (b)'s allowance for an output of type d: K exact products summed in
 * FP32, `sabs` = |alpha| * sum_k |A[i][k]*B[j][k]|, bc = beta*C[i][j],
 * ref the reference. */
static inline double jg_check_allow(jg_dtype d, int64_t k, double sabs, double bc, double ref)
{
    const double u = 0x1p-23, uo = jg_test_unit_roundoff(d), ku = (double)k * u;
    const double gamma = ku < 1 ? ku / (1 - ku) : INFINITY;
    const double e = (gamma + 2 * u) * sabs + 2 * u * fabs(bc);
    return e + uo * (fabs(ref) + e) + jg_test_tiny(d);
}

/* (b) and the sums of (c) for element (i, j): got against ref, allowed
 * `allow` (jg_check_allow, or a test's own model of its dtype). */
static inline void jg_check_record(jg_gemm_check *ck, int64_t i, int64_t j, double got,
                                   double ref, double allow)
{
    double err = fabs(got - ref);
    double ratio = err / allow;
    ++ck->checked;
    if (!(err <= allow))
        ++ck->over_bound;
    if (!isnan(ck->worst) && !(ratio <= ck->worst)) { /* a NaN ratio sticks as the worst */
        ck->worst = ratio;
        ck->worst_i = i;
        ck->worst_j = j;
        ck->worst_d = got;
        ck->worst_ref = ref;
    }
    ck->sq_err += (got - ref) * (got - ref);
    ck->sq_ref += ref * ref;
}

/* (b) and the sums of (c) for element (i, j); arow is A's row i decoded,
 * bdec all of B decoded. */
static inline void jg_check_element(jg_gemm_check *ck, const float *arow, const float *bdec,
                                    int64_t i, int64_t j)
{
    const int64_t k = ck->a->cols;
    double sum, sabs;
    jg_check_dot(arow, bdec + j * k, k, &sum, &sabs);
    double bc = ck->c ? ck->beta * jg_mat_get(ck->c, i, j) : 0.0;
    double ref = ck->alpha * sum + bc;
    jg_check_record(ck, i, j, jg_mat_get(ck->d, i, j), ref,
                    jg_check_allow(ck->d->type, k, fabs(ck->alpha) * sabs, bc, ref));
}

/* Which rows get every column checked: all when m*n*k fits the budget, else
 * max(8, half the budget's worth) including the first and the last row.
 * Returns a 0/1 array of m entries. */
static inline unsigned char *jg_check_pick_rows(int64_t m, int64_t n, int64_t k, jg_rng *r)
{
    unsigned char *full = calloc((size_t)m, 1);
    if (!full) {
        fprintf(stderr, "out of host memory\n");
        exit(1);
    }
    int64_t want = m * n * k <= JG_REF_BUDGET ? m : JG_REF_BUDGET / 2 / (n * k);
    if (want < 8)
        want = 8;
    if (want >= m) {
        memset(full, 1, (size_t)m);
        return full;
    }
    full[0] = full[m - 1] = 1;
    for (int64_t got = 2; got < want;) {
        int64_t i = (int64_t)jg_rng_below(r, (uint64_t)m);
        if (!full[i]) {
            full[i] = 1;
            ++got;
        }
    }
    return full;
}

/* Clears ck's results, before jg_check_scan and the elements. */
static inline void jg_check_begin(jg_gemm_check *ck)
{
    ck->checked = ck->nonfinite = ck->clobbered = ck->over_bound = 0;
    ck->bad_i = ck->bad_j = ck->worst_i = ck->worst_j = -1;
    ck->worst = 0;
    ck->sq_err = ck->sq_ref = 0;
}

/* (c) against norm_bound, and the verdict into ck->ok. */
static inline bool jg_check_finish(jg_gemm_check *ck, double norm_bound)
{
    ck->norm_rel = ck->sq_ref > 0 ? sqrt(ck->sq_err / ck->sq_ref) : INFINITY;
    ck->norm_bound = norm_bound;
    ck->ok = ck->checked > 0 && ck->nonfinite == 0 && ck->clobbered == 0 &&
             ck->over_bound == 0 && ck->norm_rel <= ck->norm_bound;
    return ck->ok;
}

/* The columns each row not checked in full gets (at random): a share of
 * the budget, at least 1, at most n. */
static inline int64_t jg_check_spot_cols(int64_t m, int64_t n, int64_t k)
{
    int64_t spot = JG_REF_BUDGET / 2 / (m * k);
    return spot < 1 ? 1 : spot > n ? n : spot;
}

/* Runs (a), (b), (c) and sets ck->ok. Rows not checked in full (big
 * shapes) still get a few random columns each, so every row and every tile
 * of D is compared against the reference somewhere. r picks the samples. */
static inline bool jg_gemm_verify(jg_gemm_check *ck, jg_rng *r)
{
    const int64_t m = ck->m, n = ck->d->cols, k = ck->a->cols;
    jg_check_begin(ck);
    jg_check_scan(ck);
    unsigned char *full = jg_check_pick_rows(m, n, k, r);
    const int64_t spot = jg_check_spot_cols(m, n, k);
    float *bdec = jg_check_decode(ck->b, 0, n, NULL);
    float *arow = malloc(sizeof(float) * (size_t)k);
    for (int64_t i = 0; i < m; ++i) {
        jg_check_decode(ck->a, i, 1, arow);
        if (full[i])
            for (int64_t j = 0; j < n; ++j)
                jg_check_element(ck, arow, bdec, i, j);
        else
            for (int64_t s = 0; s < spot; ++s)
                jg_check_element(ck, arow, bdec, i, (int64_t)jg_rng_below(r, (uint64_t)n));
    }
    free(arow);
    free(bdec);
    free(full);
    return jg_check_finish(ck, 2 * jg_test_unit_roundoff(ck->d->type) +
                                   8 * sqrt((double)k) * 0x1p-24);
}

/* One line describing the result of jg_gemm_verify. */
static inline void jg_check_describe(const jg_gemm_check *ck, char *buf, size_t size)
{
    char scan[160] = "";
    if (ck->bad_i >= 0)
        snprintf(scan, sizeof scan,
                 "%lld non-finite or unwritten, %lld written out of bounds, first at [%lld,%lld]; ",
                 (long long)ck->nonfinite, (long long)ck->clobbered, (long long)ck->bad_i,
                 (long long)ck->bad_j);
    snprintf(buf, size,
             "%s: %s%lld checked, %lld over the element bound, worst %.3g of it at [%lld,%lld] "
             "(got %.9g, want %.9g); norm error %.3g (bound %.3g)",
             ck->ok ? "ok" : "FAILED", scan, (long long)ck->checked, (long long)ck->over_bound,
             ck->worst, (long long)ck->worst_i, (long long)ck->worst_j, ck->worst_d,
             ck->worst_ref, ck->norm_rel, ck->norm_bound);
}

/* Downloads D and checks rows [0, m) against the reference (C NULL: none),
 * one line printed where it passes; the verdict. */
static inline bool jg_check_d(const jg_mat *a, const jg_mat *b, const jg_mat *c, jg_mat *d,
                              int64_t m, double alpha, double beta, const char *what, jg_rng *r)
{
    jg_mat_download(d);
    jg_gemm_check ck = {.a = a, .b = b, .c = c, .d = d, .m = m, .alpha = alpha, .beta = beta};
    jg_gemm_verify(&ck, r);
    char line[512];
    jg_check_describe(&ck, line, sizeof line);
    CHECK(ck.ok, "%s: %s", what, line);
    if (ck.ok)
        printf("  %-28s %s\n", what, line);
    return ck.ok;
}

/* ---- one BF16 GEMM's operands ------------------------------------------- */

typedef struct jg_operands {
    jg_mat a, b, d;
} jg_operands;

/* Random A [m, k] and B [n, k], uploaded; D [m, n] unset; row strides ld
 * elements (0: packed). */
static inline void jg_operands_init(jg_operands *o, int64_t m, int64_t n, int64_t k, int64_t ld,
                                    jg_rng *r)
{
    jg_mat_init(&o->a, JG_BF16, m, k, ld);
    jg_mat_init(&o->b, JG_BF16, n, k, ld);
    jg_mat_init(&o->d, JG_BF16, m, n, ld);
    jg_mat_fill_normal(&o->a, r);
    jg_mat_fill_normal(&o->b, r);
    jg_mat_upload(&o->a);
    jg_mat_upload(&o->b);
}

static inline void jg_operands_free(jg_operands *o)
{
    jg_mat_free(&o->a);
    jg_mat_free(&o->b);
    jg_mat_free(&o->d);
}

#endif /* JG_TEST_GPU_H */
