/* NVFP4 GEMM operands for the GPU tests (test_nvfp4, test_grouped_nvfp4):
 * codes, block scales and global scale on the device with host copies for
 * the FP64 reference, filled exactly (random codes, power-of-two scales)
 * or by jg_quantize_nvfp4 from standard normals. */
#ifndef JG_TEST_NVFP4_H
#define JG_TEST_NVFP4_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jg_test.h"
#include "jg_test_gpu.h"

/* One NVFP4 operand on the device: codes, block scales, global scale, and
 * their host copies (what the reference reads). */
typedef struct fp4_operand {
    int64_t rows, k;
    jg_sf_layout layout;
    uint8_t *codes, *sf; /* host */
    float g;
    void *codes_dev, *sf_dev;
    float *g_dev;
} fp4_operand;

static inline void operand_alloc(fp4_operand *o, int64_t rows, int64_t k, jg_sf_layout layout)
{
    o->rows = rows;
    o->k = k;
    o->layout = layout;
    const size_t cb = (size_t)(rows * k / 2), sb = (size_t)jg_nvfp4_sf_bytes(layout, rows, k);
    o->codes = malloc(cb);
    o->sf = calloc(1, sb);
    CUDA_CHECK(cudaMalloc(&o->codes_dev, cb));
    CUDA_CHECK(cudaMalloc(&o->sf_dev, sb));
    CUDA_CHECK(cudaMalloc((void **)&o->g_dev, sizeof(float)));
    /* Swizzled padding the GEMM must never read: e4m3 NaN. */
    CUDA_CHECK(cudaMemset(o->sf_dev, 0x7F, sb));
}

static inline void operand_download(fp4_operand *o)
{
    CUDA_CHECK(cudaMemcpy(o->codes, o->codes_dev, (size_t)(o->rows * o->k / 2),
                          cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(o->sf, o->sf_dev, (size_t)jg_nvfp4_sf_bytes(o->layout, o->rows, o->k),
                          cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&o->g, o->g_dev, sizeof(float), cudaMemcpyDeviceToHost));
}

/* Scales of the exact cases: 2^-2 or 2^-1 (e4m3 0x28, 0x30). Products are
 * multiples of 2^-6 (0.5 * 0.5 * 2^-4) of at most 6 * 6 / 4 = 9, so every
 * partial sum of K <= 7168 is below 2^16: 22 significant bits, two to
 * spare in FP32 whatever the order or alignment of the additions. Only the
 * real blocks are written (the swizzled padding stays NaN on the device). */
static inline void operand_exact(fp4_operand *o, jg_rng *r)
{
    for (int64_t i = 0; i < o->rows * o->k / 2; ++i)
        o->codes[i] = (uint8_t)jg_rng_below(r, 256);
    for (int64_t i = 0; i < o->rows; ++i)
        for (int64_t kb = 0; kb < o->k / 16; ++kb)
            o->sf[jg_nvfp4_sf_offset(o->layout, o->rows, o->k, i, kb)] =
                (uint8_t)(0x28 + 8 * jg_rng_below(r, 2));
    o->g = 1.0f;
    const size_t sb = (size_t)jg_nvfp4_sf_bytes(o->layout, o->rows, o->k);
    uint8_t *dev_sf = malloc(sb);
    memset(dev_sf, 0x7F, sb);
    for (int64_t i = 0; i < o->rows; ++i)
        for (int64_t kb = 0; kb < o->k / 16; ++kb) {
            const int64_t at = jg_nvfp4_sf_offset(o->layout, o->rows, o->k, i, kb);
            dev_sf[at] = o->sf[at];
        }
    CUDA_CHECK(cudaMemcpy(o->codes_dev, o->codes, (size_t)(o->rows * o->k / 2),
                          cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(o->sf_dev, dev_sf, sb, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(o->g_dev, &o->g, sizeof(float), cudaMemcpyHostToDevice));
    free(dev_sf);
}

/* Standard normals in BF16, quantized on the GPU by jg_quantize_nvfp4. */
static inline void operand_random(jg_context *ctx, fp4_operand *o, jg_rng *r)
{
    jg_mat x;
    jg_mat_init(&x, JG_BF16, o->rows, o->k, 0);
    jg_mat_fill_normal(&x, r);
    jg_mat_upload(&x);
    jg_quant_problem p = {.src_type = JG_BF16, .scale = JG_SCALE_NVFP4, .rows = o->rows,
                          .cols = o->k, .sf_layout = o->layout};
    jg_quant_args a = {.src = x.dev, .dst = o->codes_dev, .scale = o->g_dev, .sf = o->sf_dev};
    jg_status st = jg_quantize_nvfp4(ctx, &p, &a, NULL);
    CHECK(st == JG_OK, "jg_quantize_nvfp4: %s: %s", jg_status_name(st),
          jg_context_last_error(ctx));
    CUDA_CHECK(cudaDeviceSynchronize());
    operand_download(o);
    jg_mat_free(&x);
}

static inline void operand_free(fp4_operand *o)
{
    CUDA_CHECK(cudaFree(o->codes_dev));
    CUDA_CHECK(cudaFree(o->sf_dev));
    CUDA_CHECK(cudaFree(o->g_dev));
    free(o->codes);
    free(o->sf);
}

/* The checks of one NVFP4 GEMM's outputs against the FP64 reference. */
typedef struct fp4_check {
    jg_dtype d_type;
    bool exact; /* the sums exact in FP32: bits equal the reference rounded once */
    int64_t k;
    int64_t bad, first_i, first_j;
    double err2, bound2, worst;
} fp4_check;

static inline void fp4_check_init(fp4_check *ck, jg_dtype d_type, bool exact, int64_t k)
{
    memset(ck, 0, sizeof *ck);
    ck->d_type = d_type;
    ck->exact = exact;
    ck->k = k;
    ck->first_i = ck->first_j = -1;
}

/* Element (i, j) of d (row `row` of the matrix d) against
 * ref = alpha * sum + beta * cv, sum_abs the sum of the products' magnitudes. */
static inline void fp4_check_element(fp4_check *ck, const jg_mat *d, int64_t row, int64_t col,
                                     int64_t i, int64_t j, double ref, double sum_abs,
                                     double alpha, double beta, double cv)
{
    const double got = jg_mat_get(d, row, col);
    const double u_out = ck->d_type == JG_FP32 ? 0.0 : jg_test_unit_roundoff(ck->d_type);
    bool ok;
    double bound = 0;
    if (ck->exact) {
        /* Every product and partial sum is exact in FP32, the scales
         * powers of two: the output is the reference rounded once. */
        ok = jg_mat_bits(d, row, col) == jg_test_encode(ck->d_type, (float)ref);
    } else {
        /* FP32 sums of K products (each exact): at most K + 3 roundings of
         * 2^-24 (the sum, times ga gb, times alpha, plus beta C) of the
         * absolute sum; then the output's rounding. */
        bound = (double)(ck->k + 3) * 0x1p-24 * (fabs(alpha) * sum_abs + fabs(beta * cv)) +
                u_out * fabs(ref) + jg_test_tiny(ck->d_type);
        ok = fabs(got - ref) <= bound;
    }
    /* A reference past D's range (an FP16 output of large sums with C)
     * rounds to infinity of its sign; within the bound of that threshold,
     * either is right. Such an element adds no error to the norm. */
    const double thr = jg_test_overflow(ck->d_type);
    const bool inf_ok = isinf(got) && (got > 0) == (ref > 0);
    bool overflowed = false;
    if (!ck->exact && fabs(ref) + bound >= thr) {
        overflowed = inf_ok;
        ok = fabs(ref) - bound >= thr ? inf_ok : ok || inf_ok;
    }
    /* Exact cases: against the reference rounded once to D's type (the
     * FP64 value itself for FP32 out), as the bits are. */
    const double want =
        ck->exact ? (double)jg_test_decode(ck->d_type, jg_test_encode(ck->d_type, (float)ref))
                  : ref;
    const double e = overflowed ? 0.0 : fabs(got - want);
    ck->err2 += isfinite(e) ? e * e : INFINITY;
    ck->bound2 += bound * bound;
    if (e > ck->worst || !isfinite(e))
        ck->worst = e;
    if (!ok && ck->bad++ == 0) {
        ck->first_i = i;
        ck->first_j = j;
        fprintf(stderr, "  (%lld, %lld): got %.9g (0x%x), want %.9g (bound %.3g)\n",
                (long long)i, (long long)j, got, jg_mat_bits(d, row, col), ref, bound);
    }
}

/* Element-wise bounds all held, and norm-wise (the element bounds summed
 * in quadrature: implied by them, reported so a drift shows before it fails). */
static inline bool fp4_check_ok(const fp4_check *ck)
{
    return ck->bad == 0 && (ck->exact ? ck->err2 == 0 : sqrt(ck->err2) <= sqrt(ck->bound2));
}

/* FP64 dot products of row i of da and row j of db (k each): the sum and
 * the sum of magnitudes. */
static inline void fp4_dot(const double *da, const double *db, int64_t k, double *sum,
                           double *sum_abs)
{
    double s = 0, sa = 0;
    for (int64_t q = 0; q < k; ++q) {
        const double pr = da[q] * db[q];
        s += pr;
        sa += fabs(pr);
    }
    *sum = s;
    *sum_abs = sa;
}

#endif /* JG_TEST_NVFP4_H */
