/* A shift of 16 bytes across two aligned words, shared by the soft loads
 * (sm90_soft.cuh) and the pack of unaligned operands (sm90_pack.cu). Apart
 * from sm90_ptx.cuh: the LLVM backend's catalog compiles that header with
 * clang, without CUDA's headers, which declare __funnelshift_r. */
#ifndef JG_SM90_SHIFT_CUH
#define JG_SM90_SHIFT_CUH

#include "sm90_ptx.cuh"

/* The 16 bytes `shift` (0..15) bytes past the start of w0, w1 the 16 bytes
 * after w0: whole words by two selections (8 and 4 bytes), then the last
 * 0..3 bytes by funnel shifts; no run-time register indexing (the soft
 * loads' shifts, the pack's). */
JG_DEV uint4 jg_shift16(uint4 w0, uint4 w1, uint32_t shift)
{
    const uint32_t x[8] = {w0.x, w0.y, w0.z, w0.w, w1.x, w1.y, w1.z, w1.w};
    const bool by8 = (shift & 8) != 0, by4 = (shift & 4) != 0;
    const uint32_t bits = 8 * (shift & 3);
    uint32_t y[6], u[5];
#pragma unroll
    for (int e = 0; e < 6; ++e)
        y[e] = by8 ? x[e + 2] : x[e];
#pragma unroll
    for (int e = 0; e < 5; ++e)
        u[e] = by4 ? y[e + 1] : y[e];
    uint4 o;
    o.x = __funnelshift_r(u[0], u[1], bits);
    o.y = __funnelshift_r(u[1], u[2], bits);
    o.z = __funnelshift_r(u[2], u[3], bits);
    o.w = __funnelshift_r(u[3], u[4], bits);
    return o;
}

#endif /* JG_SM90_SHIFT_CUH */
