/* libjitgemm example: one BF16 GEMM, D = A * B^T, on the GPU.
 *
 *   gemm [M N K]        (default 4096 4096 4096)
 *
 * Plans the problem (compiling it, or loading it from the disk cache), runs
 * it, checks sampled rows against an FP64 reference on the CPU, and prints
 * the time, TFLOP/s and where the kernel came from. Without a GPU it says so
 * and compiles the kernel for sm_90a into the disk cache instead, so a
 * later run on a GPU machine sharing that cache starts warm. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include <jitgemm/jitgemm.h>

#include "example_common.h"

static int compile_offline(const jg_gemm_problem *p)
{
    printf("no CUDA GPU here: compiling the kernel for sm_90a into the disk cache instead\n");
    jg_options o = {.flags = JG_CONTEXT_OFFLINE, .arch = "sm_90a"};
    jg_context *ctx;
    jg_plan *plan;
    jg_plan_info info;
    if (jg_context_create(&o, &ctx) != JG_OK) {
        fprintf(stderr, "%s\n", jg_context_last_error(NULL));
        return 1;
    }
    if (jg_gemm_plan(ctx, p, &plan) != JG_OK || jg_plan_get_info(plan, &info) != JG_OK) {
        fprintf(stderr, "%s\n", jg_context_last_error(ctx));
        jg_context_destroy(ctx);
        return 1;
    }
    jg_context_stats s;
    jg_context_get_stats(ctx, &s);
    printf("kernel %s: %s (%.0f ms in NVRTC)\n", info.kernel_name, origin_name(info.origin),
           s.compile_ms);
    jg_context_destroy(ctx);
    return 0;
}

static int run(const jg_gemm_problem *p)
{
    jg_context *ctx = open_device_context();
    jg_plan *plan;
    jg_plan_info info;
    if (!ctx)
        return 1;
    if (jg_gemm_plan(ctx, p, &plan) != JG_OK || jg_plan_get_info(plan, &info) != JG_OK) {
        fprintf(stderr, "%s\n", jg_context_last_error(ctx));
        return 1;
    }
    printf("kernel %s: %s\n", info.kernel_name, origin_name(info.origin));
    jg_plan *again;
    jg_context_stats before, after;
    jg_context_get_stats(ctx, &before);
    jg_gemm_plan(ctx, p, &again);
    jg_context_get_stats(ctx, &after);
    printf("second lookup: %s\n", after.plans_memory > before.plans_memory ? "memory cache" : "?");

    size_t na = (size_t)(p->m * p->k), nb = (size_t)(p->n * p->k), nd = (size_t)(p->m * p->n);
    uint16_t *ha = malloc(na * 2), *hb = malloc(nb * 2), *hd = malloc(nd * 2);
    void *da, *db, *dd;
    fill_normal(ha, na, 1);
    fill_normal(hb, nb, 2);
    CUDA_OK(cudaMalloc(&da, na * 2));
    CUDA_OK(cudaMalloc(&db, nb * 2));
    CUDA_OK(cudaMalloc(&dd, nd * 2));
    CUDA_OK(cudaMemcpy(da, ha, na * 2, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemcpy(db, hb, nb * 2, cudaMemcpyHostToDevice));
    CUDA_OK(cudaMemset(dd, 0xff, nd * 2)); /* NaN: unwritten outputs show */
    jg_gemm_args args = {.a = da, .b = db, .d = dd, .alpha = 1.0f};
    if (jg_gemm_run(plan, &args, NULL) != JG_OK) {
        fprintf(stderr, "%s\n", jg_context_last_error(ctx));
        return 1;
    }
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(hd, dd, nd * 2, cudaMemcpyDeviceToHost));
    double err = check_rows(ha, hb, hd, p->m, p->n, p->k, 8);

    const int iters = 20;
    double us = mean_run_us(plan, &args, iters);
    double tflops = 2.0 * p->m * p->n * p->k / (us * 1e-6) / 1e12;
    printf("%lldx%lldx%lld bf16: %.1f us, %.1f TFLOP/s (mean of %d), max rel. error %.2e: %s\n",
           (long long)p->m, (long long)p->n, (long long)p->k, us, tflops, iters, err,
           err < 1e-2 ? "OK" : "WRONG");
    cudaFree(da);
    cudaFree(db);
    cudaFree(dd);
    free(ha);
    free(hb);
    free(hd);
    jg_context_destroy(ctx);
    return err < 1e-2 ? 0 : 1;
}

int main(int argc, char **argv)
{
    jg_gemm_problem p = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                         .m = 4096, .n = 4096, .k = 4096};
    if (!parse_mnk(argc, argv, &p))
        return 2;
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
        return compile_offline(&p);
    return run(&p);
}
