/* JG_GEMM_FP32_EXACT's split (sm_90a): FP32 A [m, k] and B [n, k] into the
 * workspace as TF32 parts, x = hi + lo + (x - hi - lo), hi = tf32(x) and
 * lo = tf32(x - hi), each rounded to nearest: rows of 2 * JG_KP floats,
 * the high parts from 0, the low parts from JG_KP, zeros past k (A's m
 * rows, then B's n rows). The GEMM after it (sm90_gemm.cu with JG_EXACT)
 * sums hi_a lo_b + lo_a hi_b + hi_a hi_b over them, as three passes over
 * K in that order, promoted stage by stage into FP32 sums: each product
 * of two TF32 values is exact in FP32, and what is left out (lo_a lo_b,
 * and the roundings of lo_a and lo_b times the other operand) is below
 * 3 * 2^-22 |a b|. x - hi is exact in FP32 (hi is x rounded to TF32's
 * 11 significant bits: the difference has at most 13), |x - hi| <=
 * 2^-11 |x|, and lo rounds it to 11 bits: within 2^-22 |x|.
 *
 * Every element is read once and written twice, consecutive threads along
 * a row: coalesced whatever the rows' alignment (4-byte aligned floats).
 * Inputs are taken as finite. Defined by the generator (emit.c):
 *   JG_SPLIT_NAME  the kernel's name (the GEMM's, with "_split")
 *   JG_EXACT_K     the problem's K;  JG_KP  K rounded up to 64 */
#include "jg_kargs.h"
#include "sm90_ptx.cuh"

#ifndef JG_SPLIT_NAME
#define JG_SPLIT_NAME jg_split_sm90_default
#define JG_EXACT_K 1000
#define JG_KP 1024
#endif

#define JG_SPLIT_THREADS 256

extern "C" __global__ void __launch_bounds__(JG_SPLIT_THREADS)
JG_SPLIT_NAME(const __grid_constant__ jg_split_kargs p)
{
    const int64_t total = ((int64_t)p.m + p.n) * JG_KP;
    const int64_t step = (int64_t)gridDim.x * JG_SPLIT_THREADS;
    for (int64_t i = (int64_t)blockIdx.x * JG_SPLIT_THREADS + threadIdx.x; i < total; i += step) {
        const int64_t r = i / JG_KP, k = i % JG_KP;
        const float *src = r < p.m ? p.a + r * p.lda : p.b + (r - p.m) * p.ldb;
        const float x = k < JG_EXACT_K ? src[k] : 0.0f;
        const float hi = jg_tf32_rna(x);
        float *dst = p.ws + r * 2 * JG_KP + k;
        dst[0] = hi;
        dst[JG_KP] = jg_tf32_rna(x - hi);
    }
}
