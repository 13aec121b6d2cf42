/* libjitgemm example: BF16 operands quantized to FP8 on the GPU, then one
 * block-scaled FP8 GEMM (the DeepSeek-V3 recipe), D = A * B^T in BF16.
 *
 *   fp8_gemm [M N K]        (default 4096 7168 16384)
 *
 * jg_quantize_e4m3 turns A into e4m3 with one scale per row per 128 of K
 * (1x128 blocks) and B with one scale per 128x128 block; the GEMM reads both
 * scale arrays as they come out. Sampled rows are compared with an FP64
 * product of the original BF16 operands, so the error includes e4m3's
 * rounding of the inputs (3 mantissa bits: ~1e-2 of a row's largest value
 * is expected). Without a GPU it compiles both kernels for sm_90a into the
 * disk cache instead. */
#include "example_common.h"

static int run(const jg_gemm_problem *p, const jg_quant_problem *qa, const jg_quant_problem *qb)
{
    jg_context *ctx = open_device_context();
    if (!ctx)
        return 1;
    const int64_t m = p->m, n = p->n, k = p->k, kb = (k + 127) / 128;
    const size_t na = (size_t)(m * k), nb = (size_t)(n * k), nd = (size_t)(m * n);
    const size_t nsa = (size_t)(m * kb), nsb = (size_t)(((n + 127) / 128) * kb);
    uint16_t *ha = malloc(na * 2), *hb = malloc(nb * 2), *hd = malloc(nd * 2);
    void *a16, *b16, *a8, *b8, *dd;
    float *sa, *sb;
    fill_normal(ha, na, 1);
    fill_normal(hb, nb, 2);
    CUDA_OK(cudaMalloc(&a16, na * 2));
    CUDA_OK(cudaMalloc(&b16, nb * 2));
    CUDA_OK(cudaMalloc(&a8, na));
    CUDA_OK(cudaMalloc(&b8, nb));
    CUDA_OK(cudaMalloc((void **)&sa, nsa * 4));
    CUDA_OK(cudaMalloc((void **)&sb, nsb * 4));
    CUDA_OK(cudaMalloc(&dd, nd * 2));
    CUDA_OK(cudaMemcpy(a16, ha, na * 2, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(b16, hb, nb * 2, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(dd, 0xff, nd * 2)); /* NaN: unwritten outputs show */

    jg_quant_args qa_args = {.src = a16, .dst = a8, .scale = sa};
    jg_quant_args qb_args = {.src = b16, .dst = b8, .scale = sb};
    jg_gemm_args args = {.a = a8, .b = b8, .d = dd, .alpha = 1.0f, .a_scale = sa, .b_scale = sb};
    jg_plan *plan =
        quantize_and_run(ctx, jg_quantize_e4m3, qa, &qa_args, qb, &qb_args, p, &args, hd);
    if (!plan)
        return 1;
    double err = check_rows(ha, hb, hd, m, n, k, 4);

    const int iters = 20;
    double us = mean_run_us(plan, &args, iters);
    double tflops = 2.0 * m * n * k / (us * 1e-6) / 1e12;
    const bool ok = err < 5e-2;
    printf("%lldx%lldx%lld e4m3 (block scales) -> bf16: %.1f us, %.1f TFLOP/s (mean of %d), "
           "max rel. error against the BF16 inputs %.2e: %s\n",
           (long long)m, (long long)n, (long long)k, us, tflops, iters, err,
           ok ? "OK" : "WRONG");
    cudaFree(a16);
    cudaFree(b16);
    cudaFree(a8);
    cudaFree(b8);
    cudaFree(sa);
    cudaFree(sb);
    cudaFree(dd);
    free(ha);
    free(hb);
    free(hd);
    jg_context_destroy(ctx);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    jg_gemm_problem p = {.a_type = JG_E4M3, .b_type = JG_E4M3, .d_type = JG_BF16,
                         .m = 4096, .n = 7168, .k = 16384, .scale = JG_SCALE_BLOCK};
    if (!parse_mnk(argc, argv, &p))
        return 2;
    jg_quant_problem qa = {.src_type = JG_BF16, .scale = JG_SCALE_BLOCK, .block_rows = 1,
                           .rows = p.m, .cols = p.k};
    jg_quant_problem qb = {.src_type = JG_BF16, .scale = JG_SCALE_BLOCK, .block_rows = 128,
                           .rows = p.n, .cols = p.k};
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
        return compile_offline_quantized(&p, jg_quantize_e4m3, &qa, &qb);
    return run(&p, &qa, &qb);
}
