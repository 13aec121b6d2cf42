/* libjitgemm example: BF16 operands quantized to NVFP4 on the GPU, then one
 * NVFP4 GEMM, D = A * B^T in BF16 (a decode step: 16 activation rows times
 * a 7168 x 2048 weight).
 *
 *   nvfp4_gemm [M N K]      (default 16 7168 2048; K a multiple of 16)
 *
 * jg_quantize_nvfp4 turns A and B each into packed e2m1 codes, one e4m3
 * block scale per 16 of K (in the swizzled 128x4 layout Blackwell's MMAs
 * read, so weights quantized for B200 would load unchanged) and one FP32
 * global scale; the GEMM reads all three as they come out. Sampled rows (all
 * 16 by default) are compared with an FP64 product of the original BF16
 * operands, so the error is mostly NVFP4's rounding of the inputs, far
 * coarser than FP8's: e2m1 keeps ~2 significant bits, ~0.1 RMS relative
 * error per element, and with both operands quantized, random normal
 * inputs give a norm-wise error ||D - ref||_F / ||ref||_F of ~0.13-0.14 and
 * a max error relative to a row's largest value of ~0.16 (0.135 and 0.159
 * from a CPU model of the quantizer at the default sizes). Only a norm-wise
 * error above 0.25 (or NaN) counts as wrong. Without a GPU it compiles the
 * kernels for sm_90a into the disk cache instead. */
#include "example_common.h"

static int run(const jg_gemm_problem *p, const jg_quant_problem *qa, const jg_quant_problem *qb)
{
    jg_context *ctx = open_device_context();
    if (!ctx)
        return 1;
    const int64_t m = p->m, n = p->n, k = p->k;
    const size_t na = (size_t)(m * k), nb = (size_t)(n * k), nd = (size_t)(m * n);
    /* Block scale bytes, the swizzled layout's padding to 128 rows and 4
     * scales per row included (16 rows of A still take a 128-row tile). */
    const size_t nsfa = (size_t)jg_nvfp4_sf_bytes(p->a_sf_layout, m, k);
    const size_t nsfb = (size_t)jg_nvfp4_sf_bytes(p->b_sf_layout, n, k);
    uint16_t *ha = malloc(na * 2), *hb = malloc(nb * 2), *hd = malloc(nd * 2);
    void *a16, *b16, *a4, *b4, *sfa, *sfb, *dd;
    float *ga, *gb; /* the global scales, one FP32 each, on the device */
    fill_normal(ha, na, 1);
    fill_normal(hb, nb, 2);
    CUDA_OK(cudaMalloc(&a16, na * 2));
    CUDA_OK(cudaMalloc(&b16, nb * 2));
    CUDA_OK(cudaMalloc(&a4, na / 2)); /* two e2m1 codes a byte */
    CUDA_OK(cudaMalloc(&b4, nb / 2));
    CUDA_OK(cudaMalloc(&sfa, nsfa));
    CUDA_OK(cudaMalloc(&sfb, nsfb));
    CUDA_OK(cudaMalloc((void **)&ga, 4));
    CUDA_OK(cudaMalloc((void **)&gb, 4));
    CUDA_OK(cudaMalloc(&dd, nd * 2));
    CUDA_OK(cudaMemcpy(a16, ha, na * 2, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(b16, hb, nb * 2, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(dd, 0xff, nd * 2)); /* NaN: unwritten outputs show */

    jg_quant_args qa_args = {.src = a16, .dst = a4, .scale = ga, .sf = sfa};
    jg_quant_args qb_args = {.src = b16, .dst = b4, .scale = gb, .sf = sfb};
    jg_gemm_args args = {.a = a4, .b = b4, .d = dd, .alpha = 1.0f, .a_scale = ga, .b_scale = gb,
                         .a_sf = sfa, .b_sf = sfb};
    jg_plan *plan =
        quantize_and_run(ctx, jg_quantize_nvfp4, qa, &qa_args, qb, &qb_args, p, &args, hd);
    if (!plan)
        return 1;
    double err, max_err = compare_rows(ha, hb, hd, m, n, k, m < 16 ? (int)m : 16, &err);

    const int iters = 20;
    double us = mean_run_us(plan, &args, iters);
    double tflops = 2.0 * m * n * k / (us * 1e-6) / 1e12;
    const bool ok = err <= 0.25; /* false for NaN too */
    printf("%lldx%lldx%lld nvfp4 (e4m3 scales per 16, swizzled 128x4) -> bf16: %.1f us, "
           "%.1f TFLOP/s (mean of %d), error against the BF16 inputs (~0.14 and ~0.16 "
           "expected): norm-wise %.3f, max rel. to row %.3f: %s\n",
           (long long)m, (long long)n, (long long)k, us, tflops, iters, err, max_err,
           ok ? "OK" : "WRONG");
    cudaFree(a16);
    cudaFree(b16);
    cudaFree(a4);
    cudaFree(b4);
    cudaFree(sfa);
    cudaFree(sfb);
    cudaFree(ga);
    cudaFree(gb);
    cudaFree(dd);
    free(ha);
    free(hb);
    free(hd);
    jg_context_destroy(ctx);
    return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
    jg_gemm_problem p = {.a_type = JG_NVFP4, .b_type = JG_NVFP4, .d_type = JG_BF16,
                         .m = 16, .n = 7168, .k = 2048, .scale = JG_SCALE_NVFP4,
                         .a_sf_layout = JG_SF_SWIZZLED_128X4,
                         .b_sf_layout = JG_SF_SWIZZLED_128X4};
    if (!parse_mnk(argc, argv, &p))
        return 2;
    if (p.k % 16 != 0) {
        fprintf(stderr, "K = %lld: NVFP4 needs a multiple of 16\n", (long long)p.k);
        return 2;
    }
    jg_quant_problem qa = {.src_type = JG_BF16, .scale = JG_SCALE_NVFP4, .rows = p.m,
                           .cols = p.k, .sf_layout = p.a_sf_layout};
    jg_quant_problem qb = {.src_type = JG_BF16, .scale = JG_SCALE_NVFP4, .rows = p.n,
                           .cols = p.k, .sf_layout = p.b_sf_layout};
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
        return compile_offline_quantized(&p, jg_quantize_nvfp4, &qa, &qb);
    return run(&p, &qa, &qb);
}
