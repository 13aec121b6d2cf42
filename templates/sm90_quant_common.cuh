/* Device helpers of the quantization kernels (sm90_quant.cu to e4m3,
 * sm90_quant_nvfp4.cu to NVFP4): source loads, e4m3 conversion, and the
 * tensor's amax. The including kernel defines JG_Q_SRC (1 bf16, 2 fp16)
 * and JG_Q_COLS. */
#ifndef JG_SM90_QUANT_COMMON_CUH
#define JG_SM90_QUANT_COMMON_CUH

#include "jg_kargs.h"
#include "sm90_ptx.cuh"

#define JG_Q_THREADS 256
#define JG_E4M3_MAX 448.0f

JG_DEV float jg_q_load(const uint16_t *row, int64_t c)
{
#if JG_Q_SRC == 1
    return jg_bf16_to_f32(row[c]);
#else
    return jg_f16_to_f32(row[c]);
#endif
}

/* x to e4m3 (round to nearest even, saturating to +-448). */
JG_DEV uint8_t jg_q_e4m3(float x)
{
    uint16_t pair;
    asm("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(pair) : "f"(0.0f), "f"(x));
    return (uint8_t)(pair & 0xff);
}

JG_DEV float jg_q_warp_max(float v)
{
#pragma unroll
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}

/* The amax of the [p.rows, JG_Q_COLS] source, folded into *p.scale as FP32
 * bits by atomic max (the host zeroes it first; non-negative floats order
 * as their bits). Every thread of the grid calls it. */
JG_DEV void jg_q_tensor_amax(const jg_quant_kargs &p)
{
    const uint16_t *src = (const uint16_t *)p.src;
    const int64_t total = p.rows * (int64_t)JG_Q_COLS;
    float amax = 0.0f;
    for (int64_t i = (int64_t)blockIdx.x * JG_Q_THREADS + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * JG_Q_THREADS)
        amax = fmaxf(amax, fabsf(jg_q_load(src + i / JG_Q_COLS * p.ld_src, i % JG_Q_COLS)));
    amax = jg_q_warp_max(amax);
    if (jg_lane_id() == 0)
        atomicMax((uint32_t *)p.scale, __float_as_uint(amax));
}

#endif /* JG_SM90_QUANT_COMMON_CUH */
