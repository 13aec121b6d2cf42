/* Helpers the examples share: CUDA error checks, BF16 conversions, random
 * normal inputs, and the name of a kernel's origin. Header-only. */
#ifndef JG_EXAMPLE_COMMON_H
#define JG_EXAMPLE_COMMON_H

#include <math.h>
#include <stdbool.h>
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

static inline const char *origin_name(jg_origin o)
{
    return o == JG_ORIGIN_COMPILED ? "compiled now (NVRTC)" : "disk cache";
}

static inline uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    u += 0x7fffu + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

static inline double from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

/* Random normal bf16 values (Box-Muller over a fixed-seed LCG). */
static inline void fill_normal(uint16_t *x, size_t n, uint64_t seed)
{
    for (size_t i = 0; i < n; ++i) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        double u1 = ((seed >> 11) + 1) * 0x1.0p-53;
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        double u2 = (seed >> 11) * 0x1.0p-53;
        x[i] = to_bf16((float)(sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2)));
    }
}

/* Compares `samples` rows (first to last, evenly spaced) of D = A B^T
 * (BF16, row-major) with the FP64 product of A and B. Returns the max error
 * relative to each row's largest reference value; *fro (when not NULL) gets
 * the norm-wise error ||D - ref||_F / ||ref||_F over the same rows. NaN
 * outputs count as infinite. */
static inline double compare_rows(const uint16_t *a, const uint16_t *b, const uint16_t *d,
                                  int64_t m, int64_t n, int64_t k, int samples, double *fro)
{
    double worst = 0, err2 = 0, ref2 = 0;
    for (int s = 0; s < samples; ++s) {
        int64_t i = samples > 1 ? s * (m - 1) / (samples - 1) : 0;
        double err = 0, scale = 0;
        for (int64_t j = 0; j < n; ++j) {
            double ref = 0;
            for (int64_t q = 0; q < k; ++q)
                ref += from_bf16(a[i * k + q]) * from_bf16(b[j * k + q]);
            double got = from_bf16(d[i * n + j]);
            double diff = isnan(got) ? INFINITY : fabs(got - ref);
            err = fmax(err, diff);
            scale = fmax(scale, fabs(ref));
            err2 += diff * diff;
            ref2 += ref * ref;
        }
        worst = fmax(worst, err / (scale > 0 ? scale : 1));
    }
    if (fro)
        *fro = sqrt(err2) / (ref2 > 0 ? sqrt(ref2) : 1);
    return worst;
}

/* compare_rows' max row-relative error alone. */
static inline double check_rows(const uint16_t *a, const uint16_t *b, const uint16_t *d,
                                int64_t m, int64_t n, int64_t k, int samples)
{
    return compare_rows(a, b, d, m, n, k, samples, NULL);
}

/* Mean microseconds of `iters` back-to-back launches of a plan (after 5 to
 * warm up), timed with events on the default stream. */
static inline double mean_run_us(jg_plan *plan, const jg_gemm_args *args, int iters)
{
    cudaEvent_t t0, t1;
    CUDA_OK(cudaEventCreate(&t0));
    CUDA_OK(cudaEventCreate(&t1));
    for (int i = 0; i < 5; ++i)
        jg_gemm_run(plan, args, NULL);
    CUDA_OK(cudaEventRecord(t0, NULL));
    for (int i = 0; i < iters; ++i)
        jg_gemm_run(plan, args, NULL);
    CUDA_OK(cudaEventRecord(t1, NULL));
    CUDA_OK(cudaEventSynchronize(t1));
    float ms;
    CUDA_OK(cudaEventElapsedTime(&ms, t0, t1));
    cudaEventDestroy(t0);
    cudaEventDestroy(t1);
    return ms * 1e3 / iters;
}

/* The primary context of device 0, made current, and a jg_context on it;
 * NULL after a message. */
static inline jg_context *open_device_context(void)
{
    jg_context *ctx;
    CUDA_OK(cudaSetDevice(0));
    CUDA_OK(cudaFree(0)); /* makes the primary context current */
    if (jg_context_create(NULL, &ctx) != JG_OK) {
        fprintf(stderr, "%s\n", jg_context_last_error(NULL));
        return NULL;
    }
    return ctx;
}

/* jg_quantize_e4m3 or jg_quantize_nvfp4. */
typedef jg_status (*quantize_fn)(jg_context *, const jg_quant_problem *, const jg_quant_args *,
                                 jg_stream);

/* Quantizes A and B (by `quantize`, on the default stream), plans p, runs it
 * once, prints the kernel's name and origin, and downloads D (BF16, packed)
 * into hd. The plan, or NULL after a message. */
static inline jg_plan *quantize_and_run(jg_context *ctx, quantize_fn quantize,
                                        const jg_quant_problem *qa, const jg_quant_args *qa_args,
                                        const jg_quant_problem *qb, const jg_quant_args *qb_args,
                                        const jg_gemm_problem *p, const jg_gemm_args *args,
                                        uint16_t *hd)
{
    jg_plan *plan;
    jg_plan_info info;
    if (quantize(ctx, qa, qa_args, NULL) != JG_OK || quantize(ctx, qb, qb_args, NULL) != JG_OK ||
        jg_gemm_plan(ctx, p, &plan) != JG_OK || jg_plan_get_info(plan, &info) != JG_OK ||
        jg_gemm_run(plan, args, NULL) != JG_OK) {
        fprintf(stderr, "%s\n", jg_context_last_error(ctx));
        return NULL;
    }
    printf("kernel %s: %s\n", info.kernel_name, origin_name(info.origin));
    CUDA_OK(cudaDeviceSynchronize());
    CUDA_OK(cudaMemcpy(hd, args->d, (size_t)(p->m * p->n) * 2, cudaMemcpyDeviceToHost));
    return plan;
}

/* Without a GPU: compiles the GEMM p and the quantizations qa and qb (by
 * `quantize`) for sm_90a into the disk cache, so a later run on a GPU
 * machine sharing that cache starts warm. 0, or 1 after a message. */
static inline int compile_offline_quantized(const jg_gemm_problem *p, quantize_fn quantize,
                                            const jg_quant_problem *qa,
                                            const jg_quant_problem *qb)
{
    printf("no CUDA GPU here: compiling the kernels for sm_90a into the disk cache instead\n");
    jg_options o = {.flags = JG_CONTEXT_OFFLINE, .arch = "sm_90a"};
    jg_context *ctx;
    jg_plan *plan;
    if (jg_context_create(&o, &ctx) != JG_OK) {
        fprintf(stderr, "%s\n", jg_context_last_error(NULL));
        return 1;
    }
    static _Alignas(16) char stand_in[16]; /* offline: compiled, never launched */
    jg_quant_args qargs = {.src = stand_in, .dst = stand_in, .scale = (float *)stand_in,
                           .sf = stand_in};
    int rc = 0;
    if (jg_gemm_plan(ctx, p, &plan) != JG_OK || quantize(ctx, qa, &qargs, NULL) != JG_ERR_OFFLINE ||
        quantize(ctx, qb, &qargs, NULL) != JG_ERR_OFFLINE) {
        fprintf(stderr, "%s\n", jg_context_last_error(ctx));
        rc = 1;
    }
    jg_context_destroy(ctx);
    return rc;
}

/* `prog [M N K]`: the sizes into p; false (after a usage line) otherwise. */
static inline bool parse_mnk(int argc, char **argv, jg_gemm_problem *p)
{
    if (argc == 4) {
        p->m = atoll(argv[1]);
        p->n = atoll(argv[2]);
        p->k = atoll(argv[3]);
        return true;
    }
    if (argc != 1)
        fprintf(stderr, "usage: %s [M N K]\n", argv[0]);
    return argc == 1;
}

#endif /* JG_EXAMPLE_COMMON_H */
