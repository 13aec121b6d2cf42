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

#define CUDA_OK(call)                                                                  \
    do {                                                                               \
        cudaError_t e_ = (call);                                                       \
        if (e_ != cudaSuccess) {                                                       \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,              \
                    cudaGetErrorString(e_));                                           \
            exit(1);                                                                   \
        }                                                                              \
    } while (0)

static const char *origin_name(jg_origin o)
{
    return o == JG_ORIGIN_COMPILED ? "compiled now (NVRTC)" : "disk cache";
}

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

static double from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Random normal bf16 values (Box-Muller over a fixed-seed LCG). */
static void fill_normal(uint16_t *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; ++i) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        double u1 = ((seed >> 11) + 1) * 0x1.0p-53;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        double u2 = (seed >> 11) * 0x1.0p-53;
        x[i] = to_bf16((float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2)));
    }
}

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

/* Max relative error of sampled rows against FP64, normalized by the row's
 * largest reference value. */
static double check_rows(const uint16_t *a, const uint16_t *b, const uint16_t *d, int64_t m,
                         int64_t n, int64_t k)
{
    double worst = 0;
    for (int s = 0; s < 8; ++s) {
        int64_t i = s * (m - 1) / 7;
        double err = 0, scale = 0;
        for (int64_t j = 0; j < n; ++j) {
            double ref = 0;
            for (int64_t q = 0; q < k; ++q)
                ref += from_bf16(a[i * k + q]) * from_bf16(b[j * k + q]);
            double got = from_bf16(d[i * n + j]);
            err = fmax(err, isnan(got) ? INFINITY : fabs(got - ref));
            scale = fmax(scale, fabs(ref));
        }
        worst = fmax(worst, err / (scale > 0 ? scale : 1));
    }
    return worst;
}

static int run(const jg_gemm_problem *p)
{
    jg_context *ctx;
    jg_plan *plan;
    jg_plan_info info;
    CUDA_OK(cudaSetDevice(0));
    CUDA_OK(cudaFree(0)); /* makes the primary context current */
    if (jg_context_create(NULL, &ctx) != JG_OK) {
        fprintf(stderr, "%s\n", jg_context_last_error(NULL));
        return 1;
    }
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
    double err = check_rows(ha, hb, hd, p->m, p->n, p->k);

    cudaEvent_t t0, t1;
    CUDA_OK(cudaEventCreate(&t0));
    CUDA_OK(cudaEventCreate(&t1));
    for (int i = 0; i < 5; ++i)
        jg_gemm_run(plan, &args, NULL);
    const int iters = 20;
    CUDA_OK(cudaEventRecord(t0, NULL));
    for (int i = 0; i < iters; ++i)
        jg_gemm_run(plan, &args, NULL);
    CUDA_OK(cudaEventRecord(t1, NULL));
    CUDA_OK(cudaEventSynchronize(t1));
    float ms;
    CUDA_OK(cudaEventElapsedTime(&ms, t0, t1));
    double us = ms * 1e3 / iters;
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
    if (argc == 4) {
        p.m = atoll(argv[1]);
        p.n = atoll(argv[2]);
        p.k = atoll(argv[3]);
    } else if (argc != 1) {
        fprintf(stderr, "usage: %s [M N K]\n", argv[0]);
        return 2;
    }
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0)
        return compile_offline(&p);
    return run(&p);
}
