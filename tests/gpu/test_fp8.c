/* FP8 (e4m3) dense GEMM with tensor, row-wise and block scales on the GPU
 * against an FP64 reference over the dequantized inputs:
 *   D = alpha * (A * sa) (B * sb)^T + beta * C
 * (sa, sb scalars, per row, or per row x 128 of K and per 128x128 block).
 * Inputs are standard normals rounded to the nearest non-zero e4m3 value;
 * D is poisoned (NaN) before each launch and checked whole.
 *
 * Bounds. Hopper's FP8 wgmma accumulates with ~14 significant bits, so the
 * kernel promotes each stage's partial sums (<= 128 of K) into FP32. With
 * e = 2^-13 for a stage's accumulation and the blocks' errors adding up at
 * worst linearly over K/128 stages of a random-sign sum, the norm-wise
 * relative error stays below 2 u_out + 2^-9 for K <= 16384 (K = 16384 is
 * among the shapes: without promotion the error grows as e * sqrt(K) and
 * reaches ~2% there, far past the bound). Element-wise: |d - ref| <=
 * |alpha sa sb| * sum_k |a_k b_k| * 2^-8 + 2 u_out |ref| + the output's
 * smallest normal.
 * Then grouped FP8 in all three layouts (tensor scales one per group, row
 * and block scales), and jg_quantize_e4m3 in every scale mode against the host's amax
 * and rounding.
 * Then --count random shapes (default 24), dense and grouped, every scale
 * mode and layout.
 *   test_fp8 [--seed S] [--count N]         (exits 77 without an sm_90 GPU) */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jg_test.h"
#include "jg_test_gpu.h"

/* e4m3 (fn): 1 sign, 4 exponent (bias 7), 3 mantissa bits; no infinities,
 * 0x7f and 0xff are NaN. */
static double e4m3_decode(uint8_t v)
{
    const int s = v >> 7, e = (v >> 3) & 15, m = v & 7;
    double x = e ? ldexp(1.0 + m / 8.0, e - 7) : ldexp(m / 8.0, -6);
    return s ? -x : x;
}

/* The finite non-zero codes sorted by value, for nearest rounding. */
typedef struct e4m3_table {
    double value[252];
    uint8_t code[252];
    int n;
} e4m3_table;

static int by_value(const void *x, const void *y)
{
    double a = e4m3_decode(*(const uint8_t *)x), b = e4m3_decode(*(const uint8_t *)y);
    return (a > b) - (a < b);
}

static void table_init(e4m3_table *t)
{
    uint8_t codes[256];
    int n = 0;
    for (int v = 0; v < 256; ++v)
        if ((v & 0x7f) != 0x7f && (v & 0x7f) != 0) /* no NaN, no zero */
            codes[n++] = (uint8_t)v;
    qsort(codes, (size_t)n, 1, by_value);
    t->n = n;
    for (int i = 0; i < n; ++i) {
        t->code[i] = codes[i];
        t->value[i] = e4m3_decode(codes[i]);
    }
}

static uint8_t nearest(const e4m3_table *t, double x)
{
    int lo = 0, hi = t->n - 1;
    while (hi - lo > 1) {
        int mid = (lo + hi) / 2;
        if (t->value[mid] <= x)
            lo = mid;
        else
            hi = mid;
    }
    return fabs(t->value[lo] - x) <= fabs(t->value[hi] - x) ? t->code[lo] : t->code[hi];
}

/* The element-wise and norm-wise checks of the header, accumulated. */
typedef struct fp8_check {
    double sq_err, sq_ref, worst; /* worst: largest error / allowance */
    int64_t over, nonfinite;
} fp8_check;

/* got against ref; sabs = |alpha| * sum_k |a_k b_k| with the scales in. */
static void check_add(fp8_check *c, double got, double ref, double sabs, jg_dtype out)
{
    if (!isfinite(got)) {
        ++c->nonfinite;
        return;
    }
    const double uo = jg_test_unit_roundoff(out);
    const double allow = sabs * 0x1p-8 + 2 * uo * fabs(ref) + jg_test_tiny(out);
    const double err = fabs(got - ref);
    c->over += !(err <= allow);
    if (err / allow > c->worst)
        c->worst = err / allow;
    c->sq_err += err * err;
    c->sq_ref += ref * ref;
}

/* Whether the checks held; the norm-wise error and its bound out. */
static bool check_ok(const fp8_check *c, jg_dtype out, double *norm, double *bound)
{
    *norm = c->sq_ref > 0 ? sqrt(c->sq_err / c->sq_ref) : INFINITY;
    *bound = 2 * jg_test_unit_roundoff(out) + 0x1p-9;
    return c->nonfinite == 0 && c->over == 0 && *norm <= *bound;
}

typedef struct fp8_case {
    int64_t m, n, k;
    jg_dtype d;
    bool has_c;
    jg_scale_mode mode; /* tensor, row or block */
} fp8_case;

static void run_case(jg_context *ctx, const e4m3_table *tab, const fp8_case *fc, jg_rng *r)
{
    const int64_t m = fc->m, n = fc->n, k = fc->k;
    uint8_t *a = malloc((size_t)(m * k)), *b = malloc((size_t)(n * k));
    double *ad = malloc(sizeof(double) * (size_t)(m * k));
    double *bd = malloc(sizeof(double) * (size_t)(n * k));
    for (int64_t i = 0; i < m * k; ++i)
        ad[i] = e4m3_decode(a[i] = nearest(tab, jg_rng_normal(r)));
    for (int64_t i = 0; i < n * k; ++i)
        bd[i] = e4m3_decode(b[i] = nearest(tab, jg_rng_normal(r)));
    /* The scales, a's then b's, uniform in [0.25, 1.25):
     * tensor 1 + 1; row m + n; block m x kb + nb x kb (kb = ceil(k/128),
     * nb = ceil(n/128), row-major). */
    const int64_t kb = (k + 127) / 128, nb = (n + 127) / 128;
    const int64_t na = fc->mode == JG_SCALE_TENSOR ? 1 : fc->mode == JG_SCALE_ROW ? m : m * kb;
    const int64_t nbs = fc->mode == JG_SCALE_TENSOR ? 1 : fc->mode == JG_SCALE_ROW ? n : nb * kb;
    const int64_t nscales = na + nbs;
    float *scales = malloc(sizeof(float) * (size_t)nscales);
    for (int64_t i = 0; i < nscales; ++i)
        scales[i] = (float)(0.25 + jg_rng_uniform(r));
    const float *sa = scales, *sb = scales + na;
    const float alpha = (float)(0.5 + jg_rng_uniform(r));
    const float beta = fc->has_c ? (float)(jg_rng_uniform(r) - 0.5) : 0.0f;
    jg_mat c, d;
    jg_mat_init(&d, fc->d, m, n, 0);
    if (fc->has_c) {
        jg_mat_init(&c, fc->d, m, n, 0);
        jg_mat_fill_normal(&c, r);
        jg_mat_upload(&c);
    }
    void *a_dev, *b_dev;
    float *s_dev;
    CUDA_CHECK(cudaMalloc(&a_dev, (size_t)(m * k)));
    CUDA_CHECK(cudaMalloc(&b_dev, (size_t)(n * k)));
    CUDA_CHECK(cudaMalloc((void **)&s_dev, sizeof(float) * (size_t)nscales));
    CUDA_CHECK(cudaMemcpy(a_dev, a, (size_t)(m * k), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(b_dev, b, (size_t)(n * k), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(s_dev, scales, sizeof(float) * (size_t)nscales, cudaMemcpyHostToDevice));
    jg_mat_poison(&d);

    jg_gemm_problem p = {.a_type = JG_E4M3, .b_type = JG_E4M3,
                         .c_type = fc->has_c ? fc->d : JG_DTYPE_NONE, .d_type = fc->d,
                         .m = m, .n = n, .k = k, .scale = fc->mode};
    jg_gemm_args args = {.a = a_dev, .b = b_dev, .c = fc->has_c ? c.dev : NULL, .d = d.dev,
                         .alpha = alpha, .beta = beta, .a_scale = s_dev,
                         .b_scale = s_dev + (sb - sa)};
    /* a plan that takes a workspace (split-K through it) gets one of
     * garbage, through jg_gemm_run; the others run by jg_gemm */
    jg_plan *plan = NULL;
    size_t ws_bytes = 0;
    void *ws = NULL;
    jg_status st = jg_gemm_plan(ctx, &p, &plan);
    if (st == JG_OK && jg_plan_workspace_bytes(plan, &ws_bytes) == JG_OK && ws_bytes) {
        CUDA_CHECK(cudaMalloc(&ws, ws_bytes));
        CUDA_CHECK(cudaMemset(ws, 0xFF, ws_bytes));
        args.workspace = ws;
        args.workspace_bytes = ws_bytes;
        st = jg_gemm_run(plan, &args, NULL);
    } else if (st == JG_OK) {
        st = jg_gemm(ctx, &p, &args, NULL);
    }
    jg_plan_release(plan);
    CHECK(st == JG_OK, "fp8 %lldx%lldx%lld: jg_gemm: %s", (long long)m, (long long)n,
          (long long)k, jg_context_last_error(ctx));
    CUDA_CHECK(cudaDeviceSynchronize());
    if (ws)
        CUDA_CHECK(cudaFree(ws));
    jg_mat_download(&d);

    fp8_check ck = {0};
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double sum = 0, sabs = 0; /* scaled by the operands' scales */
            for (int64_t q = 0; q < k; ++q) {
                double f;
                if (fc->mode == JG_SCALE_TENSOR)
                    f = (double)sa[0] * sb[0];
                else if (fc->mode == JG_SCALE_ROW)
                    f = (double)sa[i] * sb[j];
                else
                    f = (double)sa[i * kb + q / 128] * sb[(j / 128) * kb + q / 128];
                double prod = ad[i * k + q] * bd[j * k + q] * f;
                sum += prod;
                sabs += fabs(prod);
            }
            const double ref = alpha * sum + (fc->has_c ? beta * jg_mat_get(&c, i, j) : 0.0);
            check_add(&ck, jg_mat_get(&d, i, j), ref, fabs(alpha) * sabs, fc->d);
        }
    double norm, bound;
    const bool ok = check_ok(&ck, fc->d, &norm, &bound) && st == JG_OK;
    const char *mode = fc->mode == JG_SCALE_TENSOR ? "tensor"
                       : fc->mode == JG_SCALE_ROW  ? "row"
                                                   : "block";
    CHECK(ok, "fp8 %lldx%lldx%lld %s scales -> %s%s: %lld non-finite, %lld over the element "
          "bound (worst %.3g of it), norm error %.3g (bound %.3g)",
          (long long)m, (long long)n, (long long)k, mode, jg_test_dtype_str(fc->d),
          fc->has_c ? " +C" : "", (long long)ck.nonfinite, (long long)ck.over, ck.worst, norm,
          bound);
    printf("  %5lld x %5lld x %5lld e4m3, %s scales -> %s%s: norm error %.3g (bound %.3g), "
           "worst %.3g of the element bound%s: %s\n",
           (long long)m, (long long)n, (long long)k, mode, jg_test_dtype_str(fc->d),
           fc->has_c ? " +C" : "", norm, bound, ck.worst,
           ws ? " (split-K through a workspace)" : "", ok ? "ok" : "FAILED");
    free(scales);
    CUDA_CHECK(cudaFree(a_dev));
    CUDA_CHECK(cudaFree(b_dev));
    CUDA_CHECK(cudaFree(s_dev));
    jg_mat_free(&d);
    if (fc->has_c)
        jg_mat_free(&c);
    free(a);
    free(b);
    free(ad);
    free(bd);
}

/* Grouped FP8: contiguous (offsets) or masked (counts) over the stacked
 * A [rows, k] and B [groups * n, k], or the list layout over per-group
 * pointers into the same buffers; tensor (one per group), row or block
 * scales. Every group's rows against FP64 (the dense bounds); rows of no
 * group (masked slots past their count) stay poison. */
static void run_grouped_case(jg_context *ctx, const e4m3_table *tab, jg_grouped_layout layout,
                             jg_scale_mode mode, int32_t groups, int64_t n, int64_t k,
                             jg_rng *r)
{
    const int64_t m_max_slot = 200;
    int32_t count[16], first[17];
    int64_t total = 0;
    for (int32_t g = 0; g < groups; ++g) {
        count[g] = g == 1 ? 0 : (int32_t)jg_rng_below(r, (uint64_t)m_max_slot + 1);
        first[g] = (int32_t)(layout == JG_GROUPED_MASKED ? g * m_max_slot : total);
        total += count[g];
    }
    first[groups] = (int32_t)total;
    const int64_t rows = layout == JG_GROUPED_MASKED ? groups * m_max_slot : total;
    const int64_t kb = (k + 127) / 128, nb = (n + 127) / 128;
    const int64_t na = mode == JG_SCALE_TENSOR ? groups : mode == JG_SCALE_ROW ? rows : rows * kb;
    const int64_t nbs = mode == JG_SCALE_TENSOR ? groups
                        : mode == JG_SCALE_ROW  ? groups * n
                                                : groups * nb * kb;
    uint8_t *a = malloc((size_t)(rows * k)), *b = malloc((size_t)(groups * n * k));
    float *sc = malloc(sizeof(float) * (size_t)(na + nbs));
    for (int64_t i = 0; i < rows * k; ++i)
        a[i] = nearest(tab, jg_rng_normal(r));
    for (int64_t i = 0; i < groups * n * k; ++i)
        b[i] = nearest(tab, jg_rng_normal(r));
    for (int64_t i = 0; i < na + nbs; ++i)
        sc[i] = (float)(0.25 + jg_rng_uniform(r));
    void *a_dev, *b_dev;
    float *s_dev;
    int32_t *rows_dev;
    jg_mat d;
    jg_mat_init(&d, JG_BF16, rows, n, 0);
    jg_mat_poison(&d);
    CUDA_CHECK(cudaMalloc(&a_dev, (size_t)(rows * k)));
    CUDA_CHECK(cudaMalloc(&b_dev, (size_t)(groups * n * k)));
    CUDA_CHECK(cudaMalloc((void **)&s_dev, sizeof(float) * (size_t)(na + nbs)));
    CUDA_CHECK(cudaMalloc((void **)&rows_dev, sizeof first));
    CUDA_CHECK(cudaMemcpy(a_dev, a, (size_t)(rows * k), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(b_dev, b, (size_t)(groups * n * k), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(s_dev, sc, sizeof(float) * (size_t)(na + nbs), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(rows_dev, layout == JG_GROUPED_MASKED ? count : first,
                          sizeof(int32_t) * (size_t)(groups + 1), cudaMemcpyHostToDevice));
    const bool list = layout == JG_GROUPED_LIST;
    int64_t m_list[16];
    const void *ap[16] = {a_dev}, *bp[16] = {b_dev};
    void *dp[16] = {d.dev};
    const float *sap[16], *sbp[16];
    for (int32_t g = 0; list && g < groups; ++g) {
        m_list[g] = count[g];
        ap[g] = (const uint8_t *)a_dev + (int64_t)first[g] * k;
        bp[g] = (const uint8_t *)b_dev + (int64_t)g * n * k;
        dp[g] = (uint8_t *)d.dev + (int64_t)first[g] * n * 2;
        sap[g] = s_dev + (mode == JG_SCALE_TENSOR ? g
                          : mode == JG_SCALE_ROW  ? first[g]
                                                  : (int64_t)first[g] * kb);
        sbp[g] = s_dev + na + (mode == JG_SCALE_TENSOR ? g
                               : mode == JG_SCALE_ROW  ? (int64_t)g * n
                                                       : (int64_t)g * nb * kb);
    }
    jg_grouped_problem p = {.layout = layout, .a_type = JG_E4M3, .b_type = JG_E4M3,
                            .d_type = JG_BF16, .groups = groups, .n = n, .k = k,
                            .m = list ? m_list : NULL,
                            .m_max = list ? 0 : layout == JG_GROUPED_MASKED ? m_max_slot : rows,
                            .scale = mode};
    jg_grouped_args args = {.a = ap, .b = bp, .d = dp, .alpha = 1.0f,
                            .rows = list ? NULL : rows_dev,
                            .a_scale = list ? NULL : s_dev,
                            .b_scale = list ? NULL : s_dev + na,
                            .a_scales = list ? sap : NULL,
                            .b_scales = list ? sbp : NULL};
    jg_status st = jg_grouped(ctx, &p, &args, NULL);
    CHECK(st == JG_OK, "grouped fp8: %s", jg_context_last_error(ctx));
    CUDA_CHECK(cudaDeviceSynchronize());
    jg_mat_download(&d);
    const float *sa = sc, *sb = sc + na;
    fp8_check ck = {0};
    int64_t stray = 0;
    for (int32_t g = 0; g < groups; ++g)
        for (int64_t i = first[g]; i < first[g] + count[g]; ++i)
            for (int64_t j = 0; j < n; ++j) {
                double sum = 0, sabs = 0;
                for (int64_t q = 0; q < k; ++q) {
                    const double f = mode == JG_SCALE_TENSOR ? (double)sa[g] * sb[g]
                                     : mode == JG_SCALE_ROW
                                         ? (double)sa[i] * sb[g * n + j]
                                         : (double)sa[i * kb + q / 128] *
                                               sb[(g * nb + j / 128) * kb + q / 128];
                    const double prod = e4m3_decode(a[i * k + q]) *
                                        e4m3_decode(b[(g * n + j) * k + q]) * f;
                    sum += prod;
                    sabs += fabs(prod);
                }
                check_add(&ck, jg_mat_get(&d, i, j), sum, sabs, JG_BF16);
            }
    if (layout == JG_GROUPED_MASKED)
        for (int32_t g = 0; g < groups; ++g)
            for (int64_t i = first[g] + count[g]; i < first[g] + m_max_slot; ++i)
                stray += !jg_mat_is_poison(&d, i, 0);
    double norm, bound;
    const bool ok = check_ok(&ck, JG_BF16, &norm, &bound) && st == JG_OK && stray == 0;
    const char *lname = layout == JG_GROUPED_MASKED ? "masked" : list ? "list" : "contiguous";
    const char *sname = mode == JG_SCALE_TENSOR ? "tensor" : mode == JG_SCALE_ROW ? "row" : "block";
    CHECK(ok, "grouped fp8 %s, %s scales: %lld non-finite, %lld over the element bound, %lld "
          "stray rows, norm error %.3g (bound %.3g)", lname, sname, (long long)ck.nonfinite,
          (long long)ck.over, (long long)stray, norm, bound);
    printf("  grouped %s, %d groups, n %lld k %lld e4m3, %s scales -> bf16: norm error %.3g: %s\n",
           lname, (int)groups, (long long)n, (long long)k, sname, norm, ok ? "ok" : "FAILED");
    CUDA_CHECK(cudaFree(a_dev));
    CUDA_CHECK(cudaFree(b_dev));
    CUDA_CHECK(cudaFree(s_dev));
    CUDA_CHECK(cudaFree(rows_dev));
    jg_mat_free(&d);
    free(a);
    free(b);
    free(sc);
}

/* jg_quantize_e4m3 in every mode: each group's scale is its amax / 448 (as
 * FP32 computes it), and every element dequantizes to within e4m3's
 * rounding: |q s - x| <= 2^-4 |x| (3 mantissa bits, round to nearest) plus
 * half the subnormal step, 2^-10 s. */
static void test_quantize(jg_context *ctx, jg_rng *r)
{
    const int64_t rows = 300, cols = 1000; /* ragged against 128 both ways */
    jg_mat x;
    jg_mat_init(&x, JG_BF16, rows, cols, 0);
    jg_mat_fill_normal(&x, r);
    for (int64_t i = 0; i < rows; ++i) /* rows of different magnitudes */
        for (int64_t j = 0; j < cols; ++j)
            jg_mat_set_bits(&x, i, j,
                            jg_test_encode(JG_BF16, (float)(jg_mat_get(&x, i, j) * (1 + i % 7))));
    jg_mat_upload(&x);
    uint8_t *q = malloc((size_t)(rows * cols));
    float *sc = malloc(sizeof(float) * (size_t)(rows * ((cols + 127) / 128)));
    void *q_dev;
    float *s_dev;
    CUDA_CHECK(cudaMalloc(&q_dev, (size_t)(rows * cols)));
    CUDA_CHECK(cudaMalloc((void **)&s_dev, sizeof(float) * (size_t)(rows * ((cols + 127) / 128))));
    const struct {
        const char *name;
        jg_scale_mode mode;
        int32_t block_rows;
        int64_t group_rows, group_cols; /* 0: all */
    } modes[] = {{"tensor", JG_SCALE_TENSOR, 0, 0, 0},
                 {"row", JG_SCALE_ROW, 0, 1, 0},
                 {"block 1x128", JG_SCALE_BLOCK, 1, 1, 128},
                 {"block 128x128", JG_SCALE_BLOCK, 128, 128, 128}};
    for (size_t mi = 0; mi < sizeof modes / sizeof modes[0]; ++mi) {
        const int64_t gr = modes[mi].group_rows ? modes[mi].group_rows : rows;
        const int64_t gc = modes[mi].group_cols ? modes[mi].group_cols : cols;
        const int64_t ngr = (rows + gr - 1) / gr, ngc = (cols + gc - 1) / gc;
        jg_quant_problem p = {.src_type = JG_BF16, .scale = modes[mi].mode,
                              .block_rows = modes[mi].block_rows, .rows = rows, .cols = cols};
        jg_quant_args a = {.src = x.dev, .dst = q_dev, .scale = s_dev};
        CUDA_CHECK(cudaMemset(q_dev, 0xff, (size_t)(rows * cols)));
        jg_status st = jg_quantize_e4m3(ctx, &p, &a, NULL);
        CHECK(st == JG_OK, "quantize %s: %s", modes[mi].name, jg_context_last_error(ctx));
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaMemcpy(q, q_dev, (size_t)(rows * cols), cudaMemcpyDeviceToHost));
        CUDA_CHECK(cudaMemcpy(sc, s_dev, sizeof(float) * (size_t)(ngr * ngc),
                              cudaMemcpyDeviceToHost));
        int64_t bad_scale = 0, bad_value = 0;
        for (int64_t bi = 0; bi < ngr; ++bi)
            for (int64_t bj = 0; bj < ngc; ++bj) {
                double amax = 0;
                for (int64_t i = bi * gr; i < rows && i < (bi + 1) * gr; ++i)
                    for (int64_t j = bj * gc; j < cols && j < (bj + 1) * gc; ++j)
                        amax = fmax(amax, fabs(jg_mat_get(&x, i, j)));
                const double want = amax > 0 ? (double)(float)amax / 448.0 : 1.0;
                const double got = sc[bi * ngc + bj];
                bad_scale += !(fabs(got - want) <= 1e-6 * want);
                for (int64_t i = bi * gr; i < rows && i < (bi + 1) * gr; ++i)
                    for (int64_t j = bj * gc; j < cols && j < (bj + 1) * gc; ++j) {
                        const double v = jg_mat_get(&x, i, j);
                        const double d = e4m3_decode(q[i * cols + j]) * got;
                        bad_value += !(fabs(d - v) <= 0x1p-4 * fabs(v) + 0x1p-10 * got);
                    }
            }
        CHECK(st == JG_OK && !bad_scale && !bad_value, "quantize %s: %lld wrong scales, %lld "
              "values off", modes[mi].name, (long long)bad_scale, (long long)bad_value);
        printf("  quantize %lld x %lld bf16 -> e4m3, %s scales: %s\n", (long long)rows,
               (long long)cols, modes[mi].name,
               st == JG_OK && !bad_scale && !bad_value ? "ok" : "FAILED");
    }
    CUDA_CHECK(cudaFree(q_dev));
    CUDA_CHECK(cudaFree(s_dev));
    free(q);
    free(sc);
    jg_mat_free(&x);
}

/* A size in [lo, hi], a multiple of `step`, often at a tile edge (64, 128 or
 * 256 multiples, one either side). */
static int64_t pick_size(jg_rng *r, int64_t lo, int64_t hi, int64_t step)
{
    int64_t v;
    if (jg_rng_below(r, 3) == 0) {
        static const int64_t edges[] = {64, 128, 256};
        const int64_t e = edges[jg_rng_below(r, 3)];
        v = e * (1 + (int64_t)jg_rng_below(r, (uint64_t)(hi / e > 0 ? hi / e : 1))) +
            step * ((int64_t)jg_rng_below(r, 3) - 1);
    } else {
        v = lo + (int64_t)jg_rng_below(r, (uint64_t)(hi - lo + 1));
    }
    v = (v + step - 1) / step * step;
    return v < lo ? lo : v > hi ? hi / step * step : v;
}

/* Contexts that force the planner's dense families (JITGEMM_SWAP,
 * JITGEMM_SPLIT, JITGEMM_PINGPONG, JITGEMM_SPLIT_WS: read when a context
 * is made): swap-AB, split-K where the tiles leave SMs idle, both,
 * ping-pong tiles, split-K through a workspace in 4 units a tile. */
#define FAMILIES 5
static void family_contexts(jg_context *fam[FAMILIES])
{
    static const char *const swap[FAMILIES] = {"1", NULL, "1", NULL, NULL};
    static const char *const split[FAMILIES] = {NULL, "any", "any", NULL, NULL};
    for (int f = 0; f < FAMILIES; ++f) {
        if (swap[f])
            setenv("JITGEMM_SWAP", swap[f], 1);
        if (split[f])
            setenv("JITGEMM_SPLIT", split[f], 1);
        if (f == 3)
            setenv("JITGEMM_PINGPONG", "1", 1);
        if (f == 4)
            setenv("JITGEMM_SPLIT_WS", "4", 1);
        fam[f] = jg_test_context();
        unsetenv("JITGEMM_SWAP");
        unsetenv("JITGEMM_SPLIT");
        unsetenv("JITGEMM_PINGPONG");
        unsetenv("JITGEMM_SPLIT_WS");
    }
}

/* Random shapes: each scale mode, output type, with and without C, dense and
 * in each grouped layout; K shrunk until the FP64 reference stays cheap
 * (M N K <= 2^28), one dense case in four with K = 16384 (a missing
 * promotion fails there). Dense cases go in turn to ctx and the family
 * contexts. */
static void fuzz(jg_context *ctx, jg_context *const fam[FAMILIES], const e4m3_table *tab,
                 int count, jg_rng *r)
{
    static const jg_scale_mode modes[] = {JG_SCALE_TENSOR, JG_SCALE_ROW, JG_SCALE_BLOCK};
    static const jg_dtype outs[] = {JG_BF16, JG_FP16, JG_FP32};
    for (int i = 0; i < count; ++i) {
        const jg_scale_mode mode = modes[jg_rng_below(r, 3)];
        if (i % 2 == 0) {
            fp8_case fc = {.m = pick_size(r, 1, 1500, 1), .n = pick_size(r, 8, 2048, 8),
                           .k = i % 8 == 0 ? 16384 : pick_size(r, 16, 8192, 16),
                           .d = outs[jg_rng_below(r, 3)], .has_c = jg_rng_below(r, 2) == 1,
                           .mode = mode};
            /* K = 16384 stays: M, then N, shrink; otherwise K first. */
            while (fc.m * fc.n * fc.k > ((int64_t)1 << 28)) {
                if (fc.k > 16 && fc.k != 16384)
                    fc.k = fc.k / 32 * 16 > 16 ? fc.k / 32 * 16 : 16;
                else if (fc.m > 1)
                    fc.m /= 2;
                else
                    fc.n = fc.n / 16 * 8 > 8 ? fc.n / 16 * 8 : 8;
            }
            run_case(i / 2 % (FAMILIES + 1) ? fam[i / 2 % (FAMILIES + 1) - 1] : ctx, tab, &fc, r);
        } else {
            const jg_grouped_layout layout = (jg_grouped_layout)(JG_GROUPED_LIST +
                                                                 (int)jg_rng_below(r, 3));
            const int32_t groups = 1 + (int32_t)jg_rng_below(r, 16);
            const int64_t n = pick_size(r, 8, 1024, 8);
            int64_t k = pick_size(r, 16, 4096, 16);
            while (groups * 200 * n * k > ((int64_t)1 << 28) && k > 16)
                k = k / 32 * 16 > 16 ? k / 32 * 16 : 16;
            run_grouped_case(ctx, tab, layout, mode, groups, n, k, r);
        }
    }
}

int main(int argc, char **argv)
{
    const int count = jg_test_count(argc, argv, 24);
    jg_test_gpu_init();
    jg_rng r;
    jg_rng_seed(&r, jg_test_seed(argc, argv, "test_fp8"));
    e4m3_table tab;
    table_init(&tab);
    jg_context *ctx = jg_test_context();
    const jg_scale_mode T = JG_SCALE_TENSOR, R = JG_SCALE_ROW, B = JG_SCALE_BLOCK;
    const fp8_case cases[] = {
        {1, 256, 16384, JG_BF16, false, T},  {64, 200, 4096, JG_FP32, true, T},
        {128, 4096, 512, JG_BF16, false, T}, {300, 520, 1024, JG_FP16, true, T},
        {4096, 512, 256, JG_BF16, false, T}, {257, 136, 16384, JG_FP32, false, T},
        {1000, 1000, 128, JG_FP32, true, T}, {7, 72, 48, JG_BF16, false, T},
        {1, 512, 7168, JG_BF16, false, R},   {200, 1000, 4096, JG_FP32, true, R},
        {129, 136, 16384, JG_FP32, false, R}, {2048, 520, 256, JG_FP16, false, R},
        {1, 640, 16384, JG_BF16, false, B},  {256, 384, 4096, JG_FP32, true, B},
        {300, 200, 1008, JG_FP32, false, B}, {1024, 1024, 2048, JG_BF16, false, B},
        /* K = 1408: 11 K blocks, promoted as 8 + 3 (a last, shorter chunk);
         * A's block scales staged in shared memory (64-row tile, rows past
         * M), then read from global memory (128x128 tiles) */
        {48, 264, 1408, JG_BF16, false, B},  {2000, 1024, 1408, JG_FP16, true, B},
        /* 128x128 tiles, block scales by pairs of stages in odd chunks: 20
         * K blocks as 4 x 5, 21 as 3 x 7 (a chunk's last pair reaches into
         * the next chunk: test_kpair) */
        {2000, 1024, 2560, JG_BF16, true, B}, {2000, 1024, 2688, JG_FP16, false, B},
    };
    jg_context *fam[FAMILIES];
    family_contexts(fam);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i) {
        run_case(ctx, &tab, &cases[i], &r);
        run_case(fam[i % FAMILIES], &tab, &cases[i], &r);
    }
    /* The planner's swap-AB tiles 128x144 (four columns over M = 515, the
     * last 83 wide), and swap-AB forced */
    const fp8_case wide = {515, 4096, 2048, JG_BF16, false, T};
    run_case(ctx, &tab, &wide, &r);
    run_case(fam[0], &tab, &wide, &r);
    /* split-K through a workspace: long K, tensor and row scales, C */
    const fp8_case long_k[] = {{306, 1024, 16384, JG_BF16, false, T},
                               {130, 520, 12288, JG_FP32, true, R}};
    for (size_t i = 0; i < sizeof long_k / sizeof long_k[0]; ++i)
        run_case(fam[4], &tab, &long_k[i], &r);
    run_grouped_case(ctx, &tab, JG_GROUPED_CONTIGUOUS, JG_SCALE_ROW, 6, 520, 1024, &r);
    run_grouped_case(ctx, &tab, JG_GROUPED_MASKED, JG_SCALE_BLOCK, 5, 384, 4096, &r);
    run_grouped_case(ctx, &tab, JG_GROUPED_CONTIGUOUS, JG_SCALE_BLOCK, 4, 256, 16384, &r);
    run_grouped_case(ctx, &tab, JG_GROUPED_CONTIGUOUS, JG_SCALE_TENSOR, 5, 264, 2048, &r);
    run_grouped_case(ctx, &tab, JG_GROUPED_MASKED, JG_SCALE_TENSOR, 3, 128, 1024, &r);
    run_grouped_case(ctx, &tab, JG_GROUPED_LIST, JG_SCALE_TENSOR, 6, 520, 1024, &r);
    run_grouped_case(ctx, &tab, JG_GROUPED_LIST, JG_SCALE_ROW, 7, 384, 4096, &r);
    run_grouped_case(ctx, &tab, JG_GROUPED_LIST, JG_SCALE_BLOCK, 5, 256, 16384, &r);
    printf("random shapes: %d\n", count);
    fuzz(ctx, fam, &tab, count, &r);
    test_quantize(ctx, &r);
    jg_context_destroy(ctx);
    for (int f = 0; f < FAMILIES; ++f)
        jg_context_destroy(fam[f]);
    return jg_test_result("test_fp8");
}
