/* BF16/FP16 -> NVFP4 (jg_quantize_nvfp4) by the recipe of jitgemm.h's
 * "NVFP4", every step an IEEE FP32 operation in that order:
 *   g = amax / 2688 over the tensor (1 when that is 0);
 *   per 16 elements of a row: s = e4m3_rn_satfinite((bmax / 6) / g),
 *   code = e2m1 nearest to x / (e4m3(s) * g), ties to even, saturating.
 * Three launches (p.phase): 0 the amax into scale[0] as FP32 bits (atomic
 * max; the host zeroes it first), 1 quantize, 2 g into scale[0].
 * Phase 1 runs one thread per byte of the scale array, in its memory order
 * (the scale stores coalesce): the thread maps its offset back to (row r,
 * block kb), reads the block's 16 source elements and writes its 8 code
 * bytes. JG_Q_SF_LAYOUT 1: row-major [rows][cols/16]; 2: 512-byte blocks
 * of 128 rows x 4 scales, rows padded to 128 and scales to 4 per row, the
 * padding written 0. */
#include "sm90_quant_common.cuh"

#define JG_Q_KB (JG_Q_COLS / 16)            /* scales per row */
#define JG_Q_KBP ((JG_Q_KB + 3) / 4 * 4)    /* the same, padded (swizzled layout) */

JG_DEV float jg_q_global(float amax)
{
    const float g = amax / 2688.0f;
    return g > 0.0f ? g : 1.0f;
}

/* The value of an e4m3 code (exact in FP32). */
JG_DEV float jg_q_e4m3_value(uint32_t s)
{
    const uint32_t e = (s >> 3) & 15, m = s & 7;
    const float v = e ? __uint_as_float(((e + 120) << 23) | (m << 20)) : (float)m * 0.001953125f;
    return (s & 0x80) ? -v : v;
}

/* The e2m1 code nearest to v, ties to the even code, |v| > 6 to 6; the
 * sign bit from v's. Each comparison crosses one midpoint of the grid
 * 0, .5, 1, 1.5, 2, 3, 4, 6: strict where the lower code is even. */
JG_DEV uint32_t jg_q_e2m1(float v)
{
    const float a = fabsf(v);
    const uint32_t mag = (a > 0.25f) + (a >= 0.75f) + (a > 1.25f) + (a >= 1.75f) + (a > 2.5f) +
                         (a >= 3.5f) + (a > 5.0f);
    return (__float_as_uint(v) >> 31) << 3 | mag;
}

/* The (row, block) whose scale is byte o of the swizzled layout, kbp scales
 * per padded row: the inverse of
 *   o = ((r / 128) * (kbp / 4) + kb / 4) * 512 + (r % 32) * 16 + (r / 32 % 4) * 4 + kb % 4. */
JG_DEV void jg_q_sf_coords(int64_t o, int64_t kbp, int64_t *r, int64_t *kb)
{
    const int64_t tile = o / 512, in = o % 512;
    *r = tile / (kbp / 4) * 128 + in / 4 % 4 * 32 + in / 16;
    *kb = tile % (kbp / 4) * 4 + in % 4;
}

/* Quantizes the 16 elements (r, 16 kb ..): writes their 8 code bytes,
 * returns the e4m3 scale. */
JG_DEV uint32_t jg_q_block(const jg_quant_kargs &p, int64_t r, int64_t kb, float g)
{
    const uint16_t *row = (const uint16_t *)p.src + r * p.ld_src + kb * 16;
    float x[16], bmax = 0.0f;
#pragma unroll
    for (int i = 0; i < 16; ++i) {
        x[i] = jg_q_load(row, i);
        bmax = fmaxf(bmax, fabsf(x[i]));
    }
    const uint32_t s = jg_q_e4m3((bmax / 6.0f) / g);
    const float d = jg_q_e4m3_value(s) * g;
    uint32_t packed[2] = {0, 0};
    if (d != 0.0f) {
#pragma unroll
        for (int i = 0; i < 16; ++i)
            packed[i / 8] |= jg_q_e2m1(x[i] / d) << (4 * (i % 8));
    }
    uint8_t *out = (uint8_t *)p.dst + r * (p.ld_dst / 2) + kb * 8;
    *(uint2 *)out = make_uint2(packed[0], packed[1]); /* 8-byte aligned: dst 16, ld_dst % 16 */
    return s;
}

extern "C" __global__ void __launch_bounds__(JG_Q_THREADS)
JG_KERNEL_NAME(const __grid_constant__ jg_quant_kargs p)
{
    if (p.phase == 0) {
        jg_q_tensor_amax(p);
        return;
    }
    const float g = jg_q_global(__uint_as_float(*(const uint32_t *)p.scale));
    if (p.phase == 2) {
        if (blockIdx.x == 0 && threadIdx.x == 0)
            p.scale[0] = g;
        return;
    }
#if JG_Q_SF_LAYOUT == 2
    const int64_t total = (p.rows + 127) / 128 * 128 * JG_Q_KBP;
#else
    const int64_t total = p.rows * JG_Q_KB;
#endif
    for (int64_t o = (int64_t)blockIdx.x * JG_Q_THREADS + threadIdx.x; o < total;
         o += (int64_t)gridDim.x * JG_Q_THREADS) {
#if JG_Q_SF_LAYOUT == 2
        int64_t r, kb;
        jg_q_sf_coords(o, JG_Q_KBP, &r, &kb);
        const uint32_t s = r < p.rows && kb < JG_Q_KB ? jg_q_block(p, r, kb, g) : 0u;
#else
        const uint32_t s = jg_q_block(p, o / JG_Q_KB, o % JG_Q_KB, g);
#endif
        p.sf[o] = (uint8_t)s;
    }
}
