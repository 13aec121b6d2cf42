/* jg_quantize_nvfp4 on the GPU against the CPU reference quantizer of
 * tests/common/jg_nvfp4_ref.h, bit for bit: the global scale, every block
 * scale (with the zero padding of the swizzled layout), every code; bytes
 * past a row's codes (ld_dst padding) must keep their poison. Then the FP64
 * dequantizer against the source: each element within its block's largest
 * e2m1 half step (s g; saturation adds at most 0.4 s g).
 * Sources: standard normals in BF16 or FP16, rows scaled by powers of two
 * (2^-4 .. 2^4), every 37th block zero, every 53rd block shrunk by 2^-12
 * (block scales near and below e4m3's smallest subnormal, some rounding
 * to 0), one outlier (x 64) per row (block scales saturating amax / 6 /
 * g at 448).
 * Then the NVFP4 GEMM (test_gemm): exact cases (random codes, scales
 * 2^-2 and 2^-1, global scales 1: every product and partial sum exact in
 * FP32) equal the FP64 reference rounded once, bit for bit; quantized
 * normals stay within the FP32 accumulation bound plus the output's
 * rounding, element-wise and norm-wise; both scale layouts and mixed,
 * ragged M and N, K 256 / 1056 / 2048 / 7168, M 1 / 16 / 128 / 300, the
 * output poisoned before each launch; malformed arguments get their
 * statuses.
 *   test_nvfp4 [--seed S]            (exits 77 without an sm_90 GPU) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jg_nvfp4_ref.h"
#include "jg_test.h"
#include "jg_test_gpu.h"
#include "jg_test_nvfp4.h"

typedef struct nvfp4_case {
    int64_t rows, cols, ld_src, ld_dst; /* ld 0: packed */
    jg_dtype src;
    jg_sf_layout layout;
} nvfp4_case;

/* The source of a case: normals, then the scalings of the header. */
static void fill_source(jg_mat *x, jg_rng *r)
{
    jg_mat_fill_normal(x, r);
    for (int64_t i = 0; i < x->rows; ++i) {
        const int64_t outlier = (int64_t)jg_rng_below(r, (uint64_t)x->cols);
        for (int64_t j = 0; j < x->cols; ++j) {
            const int64_t block = (i * x->cols + j) / 16;
            double v = ldexp(jg_mat_get(x, i, j), (int)(i % 9) - 4);
            if (block % 37 == 0)
                v = 0;
            else if (block % 53 == 0)
                v = ldexp(v, -12);
            if (j == outlier)
                v *= 64;
            jg_mat_set_bits(x, i, j, jg_test_encode(x->type, (float)v));
        }
    }
}

static void run_case(jg_context *ctx, const nvfp4_case *c, jg_rng *r)
{
    const int64_t rows = c->rows, cols = c->cols;
    const int64_t ld_dst = c->ld_dst ? c->ld_dst : cols, row_bytes = ld_dst / 2;
    const int64_t sf_bytes = jg_nvfp4_sf_bytes(c->layout, rows, cols);
    const size_t dst_bytes = (size_t)(rows * row_bytes);
    jg_mat x;
    jg_mat_init(&x, c->src, rows, cols, c->ld_src);
    fill_source(&x, r);
    jg_mat_upload(&x);
    float *xf = malloc(sizeof(float) * (size_t)(rows * cols));
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j)
            xf[i * cols + j] = (float)jg_mat_get(&x, i, j);

    uint8_t *ref_codes = malloc(dst_bytes), *ref_sf = malloc((size_t)sf_bytes);
    float ref_g = 0;
    memset(ref_codes, 0xFF, dst_bytes);
    jg_ref_quantize_nvfp4(xf, cols, rows, cols, c->layout, ref_codes, ld_dst, ref_sf, &ref_g);

    void *dst_dev, *sf_dev;
    float *g_dev;
    CUDA_CHECK(cudaMalloc(&dst_dev, dst_bytes));
    CUDA_CHECK(cudaMalloc(&sf_dev, (size_t)sf_bytes));
    CUDA_CHECK(cudaMalloc((void **)&g_dev, sizeof(float)));
    CUDA_CHECK(cudaMemset(dst_dev, 0xFF, dst_bytes));
    CUDA_CHECK(cudaMemset(sf_dev, 0xFF, (size_t)sf_bytes));
    CUDA_CHECK(cudaMemset(g_dev, 0xFF, sizeof(float)));
    jg_quant_problem p = {.src_type = c->src, .scale = JG_SCALE_NVFP4, .rows = rows,
                          .cols = cols, .ld_src = c->ld_src, .ld_dst = c->ld_dst,
                          .sf_layout = c->layout};
    jg_quant_args a = {.src = x.dev, .dst = dst_dev, .scale = g_dev, .sf = sf_dev};
    jg_status st = jg_quantize_nvfp4(ctx, &p, &a, NULL);
    CHECK(st == JG_OK, "jg_quantize_nvfp4: %s: %s", jg_status_name(st),
          jg_context_last_error(ctx));
    CUDA_CHECK(cudaDeviceSynchronize());
    uint8_t *codes = malloc(dst_bytes), *sf = malloc((size_t)sf_bytes);
    float g = 0;
    CUDA_CHECK(cudaMemcpy(codes, dst_dev, dst_bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(sf, sf_dev, (size_t)sf_bytes, cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(&g, g_dev, sizeof g, cudaMemcpyDeviceToHost));

    /* Bit for bit: g, every scale byte, every code byte (and the poison). */
    uint32_t gb, ref_gb;
    memcpy(&gb, &g, 4);
    memcpy(&ref_gb, &ref_g, 4);
    int64_t bad_sf = 0, bad_codes = 0, first_sf = -1, first_code = -1;
    for (int64_t o = 0; o < sf_bytes; ++o)
        if (sf[o] != ref_sf[o] && (bad_sf++, first_sf < 0))
            first_sf = o;
    for (int64_t o = 0; o < (int64_t)dst_bytes; ++o)
        if (codes[o] != ref_codes[o] && (bad_codes++, first_code < 0))
            first_code = o;
    CHECK(gb == ref_gb, "g 0x%08x (%.9g), want 0x%08x (%.9g)", gb, (double)g, ref_gb,
          (double)ref_g);
    CHECK(bad_sf == 0, "%lld scale bytes differ; first at %lld: 0x%02x, want 0x%02x",
          (long long)bad_sf, (long long)first_sf, first_sf < 0 ? 0 : sf[first_sf],
          first_sf < 0 ? 0 : ref_sf[first_sf]);
    CHECK(bad_codes == 0, "%lld code bytes differ; first at row %lld byte %lld: 0x%02x, want "
          "0x%02x", (long long)bad_codes, (long long)(first_code < 0 ? 0 : first_code / row_bytes),
          (long long)(first_code < 0 ? 0 : first_code % row_bytes),
          first_code < 0 ? 0 : codes[first_code], first_code < 0 ? 0 : ref_codes[first_code]);

    /* The dequantized values against the source. */
    double *deq = malloc(sizeof(double) * (size_t)(rows * cols));
    jg_ref_dequantize_nvfp4(codes, ld_dst, sf, c->layout, g, rows, cols, deq, cols);
    int64_t far = 0;
    for (int64_t i = 0; i < rows; ++i)
        for (int64_t j = 0; j < cols; ++j) {
            const uint8_t s = sf[jg_nvfp4_sf_offset(c->layout, rows, cols, i, j / 16)];
            /* Round to nearest on the e2m1 grid: within half its widest
             * step (2 units of the block's scale s g). Past the grid's 6,
             * codes saturate: a scale that rounded down (by up to 1/16 as a
             * normal e4m3, by far more as a subnormal one, in blocks of
             * tiny values) leaves |x| - 6 s g. A scale of 0: |x| < 6 g
             * 2^-10 (it rounded to 0). */
            const double unit = s ? jg_e4m3_value(s) * g : 6 * 0x1p-10 * g;
            const double x = xf[i * cols + j], sat = fabs(x) - 6 * unit;
            const double bound = sat > unit ? sat : unit;
            far += !(fabs(deq[i * cols + j] - x) <= bound * (1 + 0x1p-20));
        }
    CHECK(far == 0, "%lld dequantized values off by more than their block's step", (long long)far);
    printf("  %lld x %lld (ld %lld -> %lld) %s -> nvfp4, %s scales: g %.6g: %s\n",
           (long long)rows, (long long)cols, (long long)x.ld, (long long)ld_dst,
           jg_test_dtype_str(c->src), c->layout == JG_SF_ROW_MAJOR ? "row-major" : "128x4",
           (double)g, gb == ref_gb && !bad_sf && !bad_codes && !far ? "ok" : "FAILED");
    CUDA_CHECK(cudaFree(dst_dev));
    CUDA_CHECK(cudaFree(sf_dev));
    CUDA_CHECK(cudaFree(g_dev));
    free(deq);
    free(codes);
    free(sf);
    free(ref_codes);
    free(ref_sf);
    free(xf);
    jg_mat_free(&x);
}

/* ---- the GEMM (operands: jg_test_nvfp4.h) ------------------------------ */

typedef struct gemm_case {
    int64_t m, n, k;
    jg_dtype d_type;
    jg_sf_layout a_layout, b_layout;
    bool exact; /* small integers times powers of two: the sums are exact in FP32 */
    bool with_c;
} gemm_case;

static void run_gemm_case(jg_context *ctx, const gemm_case *c, jg_rng *r)
{
    const int64_t m = c->m, n = c->n, k = c->k;
    fp4_operand a, b;
    operand_alloc(&a, m, k, c->a_layout);
    operand_alloc(&b, n, k, c->b_layout);
    if (c->exact) {
        operand_exact(&a, r);
        operand_exact(&b, r);
    } else {
        operand_random(ctx, &a, r);
        operand_random(ctx, &b, r);
    }
    /* Exact cases: alpha a power of two keeping FP16 results finite. */
    const float alpha = c->exact ? (c->d_type == JG_FP16 ? 0x1p-4f : 0.5f) : 1.25f;
    const float beta = c->with_c ? -0.75f : 0.0f;
    jg_mat d, cm;
    jg_mat_init(&d, c->d_type, m, n, 0);
    if (c->with_c) {
        jg_mat_init(&cm, c->d_type, m, n, 0);
        jg_mat_fill_normal(&cm, r);
        jg_mat_upload(&cm);
    }
    jg_gemm_problem p = {.a_type = JG_NVFP4, .b_type = JG_NVFP4,
                         .c_type = c->with_c ? c->d_type : JG_DTYPE_NONE, .d_type = c->d_type,
                         .m = m, .n = n, .k = k, .scale = JG_SCALE_NVFP4,
                         .a_sf_layout = c->a_layout, .b_sf_layout = c->b_layout};
    jg_gemm_args args = {.a = a.codes_dev, .b = b.codes_dev, .c = c->with_c ? cm.dev : NULL,
                         .d = d.dev, .alpha = alpha, .beta = beta, .a_scale = a.g_dev,
                         .b_scale = b.g_dev, .a_sf = a.sf_dev, .b_sf = b.sf_dev};
    jg_mat_poison(&d);
    jg_status st = jg_gemm(ctx, &p, &args, NULL);
    CHECK(st == JG_OK, "jg_gemm nvfp4: %s: %s", jg_status_name(st), jg_context_last_error(ctx));
    CUDA_CHECK(cudaDeviceSynchronize());
    jg_mat_download(&d);

    /* FP64 reference over the dequantized operands (global scales in). */
    double *da = malloc(sizeof(double) * (size_t)(m * k));
    double *db = malloc(sizeof(double) * (size_t)(n * k));
    jg_ref_dequantize_nvfp4(a.codes, k, a.sf, a.layout, a.g, m, k, da, k);
    jg_ref_dequantize_nvfp4(b.codes, k, b.sf, b.layout, b.g, n, k, db, k);
    fp4_check ck;
    fp4_check_init(&ck, c->d_type, c->exact, k);
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double sum, sum_abs;
            fp4_dot(da + i * k, db + j * k, k, &sum, &sum_abs);
            const double cv = c->with_c ? jg_mat_get(&cm, i, j) : 0.0;
            fp4_check_element(&ck, &d, i, j, i, j, alpha * sum + beta * cv, sum_abs, alpha, beta,
                              cv);
        }
    const bool ok = fp4_check_ok(&ck);
    CHECK(ok,
          "nvfp4 gemm %lldx%lldx%lld -> %s, sf %s/%s%s%s: %lld elements out of bounds (first "
          "%lld, %lld), |err|_F %.3g vs %.3g",
          (long long)m, (long long)n, (long long)k, jg_test_dtype_str(c->d_type),
          c->a_layout == JG_SF_ROW_MAJOR ? "row" : "128x4",
          c->b_layout == JG_SF_ROW_MAJOR ? "row" : "128x4", c->exact ? ", exact" : "",
          c->with_c ? ", C" : "", (long long)ck.bad, (long long)ck.first_i, (long long)ck.first_j,
          sqrt(ck.err2), sqrt(ck.bound2));
    printf("  gemm %lld x %lld x %lld -> %s, sf %s/%s%s%s: max |err| %.3g: %s\n", (long long)m,
           (long long)n, (long long)k, jg_test_dtype_str(c->d_type),
           c->a_layout == JG_SF_ROW_MAJOR ? "row" : "128x4",
           c->b_layout == JG_SF_ROW_MAJOR ? "row" : "128x4", c->exact ? " exact" : "",
           c->with_c ? " +C" : "", ck.worst, ok ? "ok" : "FAILED");
    free(da);
    free(db);
    if (c->with_c)
        jg_mat_free(&cm);
    jg_mat_free(&d);
    operand_free(&a);
    operand_free(&b);
}

/* Malformed GEMM inputs: each gets its status (nothing launches). */
static void test_gemm_refusals(jg_context *ctx)
{
    fp4_operand a, b;
    operand_alloc(&a, 64, 256, JG_SF_ROW_MAJOR);
    operand_alloc(&b, 64, 256, JG_SF_ROW_MAJOR);
    void *d_dev;
    CUDA_CHECK(cudaMalloc(&d_dev, 64 * 64 * 2));
    jg_gemm_problem p = {.a_type = JG_NVFP4, .b_type = JG_NVFP4, .d_type = JG_BF16, .m = 64,
                         .n = 64, .k = 256, .scale = JG_SCALE_NVFP4,
                         .a_sf_layout = JG_SF_ROW_MAJOR, .b_sf_layout = JG_SF_ROW_MAJOR};
    const jg_gemm_args good = {.a = a.codes_dev, .b = b.codes_dev, .d = d_dev, .alpha = 1,
                               .a_scale = a.g_dev, .b_scale = b.g_dev, .a_sf = a.sf_dev,
                               .b_sf = b.sf_dev};
    struct {
        const char *what;
        jg_gemm_args args;
        jg_status want;
    } rows[] = {
        {"a_sf NULL", good, JG_ERR_NULL_POINTER},  {"b_sf + 8", good, JG_ERR_MISALIGNED},
        {"a_scale NULL", good, JG_ERR_NULL_POINTER}, {"b_scale + 1", good, JG_ERR_MISALIGNED},
        {"a + 4", good, JG_ERR_MISALIGNED},
    };
    rows[0].args.a_sf = NULL;
    rows[1].args.b_sf = (const uint8_t *)b.sf_dev + 8;
    rows[2].args.a_scale = NULL;
    rows[3].args.b_scale = (const float *)((const uint8_t *)b.g_dev + 1);
    rows[4].args.a = (const uint8_t *)a.codes_dev + 4;
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
        jg_status st = jg_gemm(ctx, &p, &rows[i].args, NULL);
        CHECK(st == rows[i].want, "%s: got %s, want %s (%s)", rows[i].what, jg_status_name(st),
              jg_status_name(rows[i].want), jg_context_last_error(ctx));
    }
    jg_gemm_problem bad = p;
    bad.k = 320; /* row-major scales need k % 256 */
    CHECK(jg_gemm(ctx, &bad, &good, NULL) == JG_ERR_INVALID, "row-major k = 320");
    bad = p;
    bad.k = 24;
    CHECK(jg_gemm(ctx, &bad, &good, NULL) == JG_ERR_INVALID, "k = 24");
    bad = p;
    bad.b_type = JG_BF16;
    CHECK(jg_gemm(ctx, &bad, &good, NULL) == JG_ERR_UNSUPPORTED, "nvfp4 x bf16");
    CUDA_CHECK(cudaFree(d_dev));
    operand_free(&a);
    operand_free(&b);
}

static void test_gemm(jg_context *ctx, jg_rng *r)
{
    const jg_sf_layout R = JG_SF_ROW_MAJOR, S = JG_SF_SWIZZLED_128X4;
    const gemm_case cases[] = {
        /* exact: bit for bit */
        {128, 256, 256, JG_FP32, R, R, true, false},
        {300, 1000, 2048, JG_FP32, S, S, true, false},
        {16, 520, 7168, JG_BF16, R, S, true, false},
        {1, 200, 1056, JG_FP16, S, S, true, false}, /* a partial last stage */
        {130, 72, 2048, JG_BF16, S, R, true, false},
        {200, 4104, 1024, JG_FP16, R, R, true, false}, /* swap-AB: 2 x 65 tiles */
        /* quantized normals against the bounds */
        {1, 1000, 256, JG_BF16, R, R, false, false},
        {1, 1000, 7168, JG_BF16, S, S, false, false},
        {16, 1000, 2048, JG_FP16, R, S, false, false},
        {16, 200, 7168, JG_FP32, S, R, false, false},
        {128, 1000, 256, JG_FP32, S, S, false, true},
        {128, 520, 2048, JG_BF16, R, R, false, false},
        {300, 1000, 2048, JG_BF16, S, S, false, false},
        {300, 200, 7168, JG_FP16, R, R, false, true},
        {300, 136, 7168, JG_FP32, S, S, false, false},
        {300, 1000, 1056, JG_BF16, S, S, false, false},
        /* swap-AB (M <= 256): more tiles than SMs, walked by persistent CTAs */
        {64, 9000, 512, JG_BF16, S, S, false, true},
        /* two slots of pieces per consumer (M <= 32), 3 stages a tile: a
         * CTA's second tile starts consumer 0 on its other slot */
        {16, 9000, 768, JG_BF16, S, S, true, false},
        {8, 9000, 768, JG_FP16, R, S, false, true},
        /* slabs (32 to 64 activation rows, N near the SM count's 64-row
         * tiles, K >= 7168): 128 weight rows a tile, K split in clusters
         * of 2 */
        {64, 7168, 7168, JG_BF16, S, S, true, false},
        {48, 7000, 7424, JG_FP16, R, S, false, true},
        {100, 4096, 7168, JG_FP32, S, R, false, false},
        {32, 7168, 7168, JG_BF16, R, R, false, true},
        {256, 520, 2048, JG_FP32, S, R, false, false},
        {40, 4096, 7168, JG_BF16, S, S, false, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        run_gemm_case(ctx, &cases[i], r);
    test_gemm_refusals(ctx);
}

int main(int argc, char **argv)
{
    jg_test_gpu_init();
    jg_rng r;
    jg_rng_seed(&r, jg_test_seed(argc, argv, "test_nvfp4"));
    jg_context *ctx = jg_test_context();
    const jg_sf_layout R = JG_SF_ROW_MAJOR, S = JG_SF_SWIZZLED_128X4;
    const nvfp4_case cases[] = {
        {300, 1024, 0, 0, JG_BF16, S},     {300, 1024, 0, 0, JG_BF16, R},
        {1, 16, 0, 0, JG_FP16, S},         {1, 16, 0, 0, JG_BF16, R},
        {129, 7168, 7176, 7200, JG_BF16, S}, {257, 80, 0, 96, JG_FP16, R},
        {257, 80, 88, 0, JG_FP16, S},      {128, 4096, 0, 0, JG_FP16, S},
        {1000, 2048, 0, 0, JG_BF16, R},    {640, 16384, 0, 0, JG_BF16, S},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        run_case(ctx, &cases[i], &r);
    test_gemm(ctx, &r);
    jg_context_destroy(ctx);
    return jg_test_result("test_nvfp4");
}
