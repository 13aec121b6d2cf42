/* BF16/FP16 -> FP8 e4m3 quantization with the scales the FP8 GEMM reads:
 *   s = amax / 448 over a group (1 when the group is all zeros),
 *   q = e4m3(x / s), round to nearest, saturating; x ~= q * s.
 * Groups: the whole tensor (JG_Q_MODE 1), a row (2), or a block (3): 1x128
 * (JG_Q_BLOCK_ROWS 1, activations) or 128x128 (128, weights) along the
 * row-major [rows, JG_Q_COLS] source. Scales land in the GEMM's layouts:
 * scale[0]; scale[rows]; scale[rows][ceil(cols/128)] or
 * scale[ceil(rows/128)][ceil(cols/128)].
 * The tensor mode runs in three launches (p.phase): 0 amax into scale[0] (as
 * FP32 bits, atomic max; the host zeroes it first), 1 quantize, 2 scale. */
#include "sm90_quant_common.cuh"

/* The reciprocal of a group's scale, and the scale, from its amax. */
JG_DEV float jg_q_scale(float amax) { return amax > 0.0f ? amax / JG_E4M3_MAX : 1.0f; }

extern "C" __global__ void __launch_bounds__(JG_Q_THREADS)
JG_KERNEL_NAME(const __grid_constant__ jg_quant_kargs p)
{
    const uint16_t *src = (const uint16_t *)p.src;
    uint8_t *dst = (uint8_t *)p.dst;
#if JG_Q_MODE == 1
    if (p.phase == 2) {
        if (blockIdx.x == 0 && threadIdx.x == 0)
            p.scale[0] = jg_q_scale(__uint_as_float(*(const uint32_t *)p.scale));
        return;
    }
    if (p.phase == 0) {
        jg_q_tensor_amax(p);
        return;
    }
    const float inv = 1.0f / jg_q_scale(__uint_as_float(*(const uint32_t *)p.scale));
    const int64_t total = p.rows * (int64_t)JG_Q_COLS;
    for (int64_t i = (int64_t)blockIdx.x * JG_Q_THREADS + threadIdx.x; i < total;
         i += (int64_t)gridDim.x * JG_Q_THREADS) {
        const int64_t r = i / JG_Q_COLS, c = i % JG_Q_COLS;
        dst[r * p.ld_dst + c] = jg_q_e4m3(jg_q_load(src + r * p.ld_src, c) * inv);
    }
#elif JG_Q_MODE == 2 || JG_Q_BLOCK_ROWS == 1
    /* One warp per group: a row, or 128 columns of a row. */
#if JG_Q_MODE == 2
    const int64_t width = JG_Q_COLS, per_row = 1;
#else
    const int64_t width = 128, per_row = (JG_Q_COLS + 127) / 128;
#endif
    const int64_t group = ((int64_t)blockIdx.x * JG_Q_THREADS + threadIdx.x) / 32;
    if (group >= p.rows * per_row)
        return;
    const int64_t r = group / per_row, c0 = (group % per_row) * width;
    const int64_t c1 = c0 + width < JG_Q_COLS ? c0 + width : JG_Q_COLS;
    const uint16_t *row = src + r * p.ld_src;
    const uint32_t lane = jg_lane_id();
    float amax = 0.0f;
    for (int64_t c = c0 + lane; c < c1; c += 32)
        amax = fmaxf(amax, fabsf(jg_q_load(row, c)));
    const float s = jg_q_scale(jg_q_warp_max(amax)), inv = 1.0f / s;
    for (int64_t c = c0 + lane; c < c1; c += 32)
        dst[r * p.ld_dst + c] = jg_q_e4m3(jg_q_load(row, c) * inv);
    if (lane == 0)
        p.scale[group] = s;
#else
    /* One CTA per 128x128 block. */
    __shared__ float warp_max[JG_Q_THREADS / 32];
    const int64_t per_row = (JG_Q_COLS + 127) / 128;
    const int64_t r0 = (int64_t)(blockIdx.x / per_row) * 128, c0 = (blockIdx.x % per_row) * 128;
    float amax = 0.0f;
    for (int i = threadIdx.x; i < 128 * 128; i += JG_Q_THREADS) {
        const int64_t r = r0 + i / 128, c = c0 + i % 128;
        if (r < p.rows && c < JG_Q_COLS)
            amax = fmaxf(amax, fabsf(jg_q_load(src + r * p.ld_src, c)));
    }
    amax = jg_q_warp_max(amax);
    if (jg_lane_id() == 0)
        warp_max[threadIdx.x / 32] = amax;
    __syncthreads();
    amax = 0.0f;
#pragma unroll
    for (int w = 0; w < JG_Q_THREADS / 32; ++w)
        amax = fmaxf(amax, warp_max[w]);
    const float s = jg_q_scale(amax), inv = 1.0f / s;
    for (int i = threadIdx.x; i < 128 * 128; i += JG_Q_THREADS) {
        const int64_t r = r0 + i / 128, c = c0 + i % 128;
        if (r < p.rows && c < JG_Q_COLS)
            dst[r * p.ld_dst + c] = jg_q_e4m3(jg_q_load(src + r * p.ld_src, c) * inv);
    }
    if (threadIdx.x == 0)
        p.scale[blockIdx.x] = s;
#endif
}
