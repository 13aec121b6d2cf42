/* Soft loads and stores for sm90_gemm.cu: operands whose pointer or rows
 * are not 16-byte aligned, which TMA cannot take. The producer warpgroup's
 * 128 threads fill the same 128B-swizzled boxes TMA would (same
 * coordinates, zeros past the matrix) with cp.async, and complete them on
 * the same "full" mbarriers; D leaves through direct stores of the staged
 * chunks. Modes per launch and operand (jg_soft_kargs, JG_SOFT_*):
 *   P8: 8-byte pieces, where the pointer and the rows' bytes allow;
 *   WORDS: each row's aligned 4-byte words, copied as they lie (a row that
 *     starts `delta` bytes past a 4-byte boundary lands delta bytes late,
 *     its 33rd word in a side slot), then shifted into place by the warp
 *     that loaded it once its copies have landed (jg_soft_shift).
 * A stage completes a few stages after its copies were issued: the thread
 * waits for its cp.async group, shifts (TF32: rounds), fences (its writes,
 * generic proxy, before wgmma's reads, async proxy) and arrives. */
#ifndef JG_SM90_SOFT_CUH
#define JG_SM90_SOFT_CUH

#include "jg_kargs.h"
#include "sm90_ptx.cuh"

/* Byte offset of (row, byte) in a box of 128-byte rows with 128-byte
 * swizzle on a 1024-byte aligned address: TMA's placement, 16-byte units
 * XORed with the row's place in its 8-row atom. */
JG_DEV uint32_t jg_swz128(uint32_t row, uint32_t byte)
{
    return row * 128 + ((((byte >> 4) ^ row) & 7) << 4) + (byte & 15);
}

/* The bytes a copy may take from `avail` bytes left in the row: 0..cap. */
JG_DEV uint32_t jg_soft_take(int64_t avail, uint32_t cap)
{
    return avail <= 0 ? 0u : avail >= (int64_t)cap ? cap : (uint32_t)avail;
}

/* Box rows [c1, c1 + ROWS) x 128 bytes from element c0 of m (SIZE bytes an
 * element) into dst, 8-byte pieces, zeros past m; every thread of the
 * producer warpgroup copies every 128th piece (a warp: two rows). */
template <int SIZE, int ROWS>
JG_DEV void jg_soft_box_p8(uint32_t dst, const jg_soft_map &m, int32_t c0, int32_t c1)
{
    const uint32_t tid = threadIdx.x % 128;
#pragma unroll 1
    for (uint32_t i = tid; i < ROWS * 16u; i += 128) {
        const uint32_t r = i / 16, j = i % 16;
        const int32_t row = c1 + (int32_t)r, col = c0 + (int32_t)(j * 8 / SIZE);
        const uint32_t bytes = row < m.rows ? jg_soft_take(((int64_t)m.cols - col) * SIZE, 8) : 0;
        const uint8_t *src =
            (const uint8_t *)m.ptr + (bytes ? ((int64_t)row * m.ld + col) * SIZE : 0);
        jg_cp_async_8(dst + jg_swz128(r, j * 8), src, bytes);
    }
}

/* The same in WORDS mode: warp w of the producer warpgroup takes rows w,
 * w + 4, ...; lane i copies the row's word i from the row's first element
 * rounded down to 4 bytes, lane 31 also word 32 and the row's delta into
 * its side slot (8 bytes a row). Bytes past the row's end arrive as zeros;
 * the delta bytes before its start are shifted out. */
template <int SIZE, int ROWS>
JG_DEV void jg_soft_box_words(uint32_t dst, uint32_t side, const jg_soft_map &m, int32_t c0,
                              int32_t c1)
{
    const uint32_t lane = jg_lane_id(), warp = (threadIdx.x / 32) % 4;
#pragma unroll 1
    for (uint32_t r = warp; r < (uint32_t)ROWS; r += 4) {
        const int32_t row = c1 + (int32_t)r;
        const bool in = row < m.rows;
        const uint8_t *start =
            (const uint8_t *)m.ptr + ((int64_t)(in ? row : 0) * m.ld + c0) * SIZE;
        const uint32_t delta = (uint32_t)(uintptr_t)start & 3;
        const uint8_t *base = start - delta;
        /* the row's bytes from base: its delta leading ones, then to its end */
        const int64_t end = in ? ((int64_t)m.cols - c0) * SIZE + delta : 0;
        const uint32_t bytes = jg_soft_take(end - 4 * (int64_t)lane, 4);
        jg_cp_async_4(dst + jg_swz128(r, 4 * lane), base + (bytes ? 4 * lane : 0), bytes);
        if (SIZE < 4 && lane == 31) {
            const uint32_t last = jg_soft_take(end - 128, 4);
            jg_cp_async_4(side + 8 * r, base + (last ? 128 : 0), last);
            jg_st_shared_b32(side + 8 * r + 4, in ? delta : 0);
        }
    }
}

/* Moves the rows of a WORDS box into place, by the warps that loaded them
 * once their copies have landed (cp.async.wait_group, then __syncwarp):
 * word i of a row `delta` bytes late takes the row's bytes 4i + delta ..
 * 4i + delta + 3, from the words i and i + 1 as loaded (the 33rd in the
 * side slot). Each lane reads only its own copies (and the side slot,
 * written by lane 31 of the warp), so the warp needs no other barrier. */
template <int SIZE, int ROWS>
JG_DEV void jg_soft_shift(uint32_t dst, uint32_t side)
{
    if (SIZE == 4) /* FP32 rows start on whole words */
        return;
    const uint32_t lane = jg_lane_id(), warp = (threadIdx.x / 32) % 4;
#pragma unroll 1
    for (uint32_t r = warp; r < (uint32_t)ROWS; r += 4) {
        const uint32_t delta = jg_ld_shared_b32(side + 8 * r + 4); /* the same in every lane */
        if (!delta)
            continue;
        const uint32_t at = dst + jg_swz128(r, 4 * lane);
        const uint32_t w = jg_ld_shared_b32(at);
        uint32_t next = __shfl_down_sync(0xffffffffu, w, 1);
        if (lane == 31)
            next = jg_ld_shared_b32(side + 8 * r);
        jg_st_shared_b32(at, __funnelshift_r(w, next, 8 * delta));
    }
}

/* TF32 operands: the FP32 values of `boxes` boxes (`stride` bytes apart)
 * this thread copied in `mode`, rounded in place to nearest TF32 once
 * they have landed, as a TFLOAT32 tensor map rounds those TMA loads (wgmma
 * would truncate them); nothing for TMA's. The thread's own pieces (P8:
 * every 128th; WORDS: word `lane` of its warp's rows), which its
 * cp.async.wait_group made visible to it: no barrier. */
template <int ROWS>
JG_DEV void jg_soft_round_tf32(uint32_t mode, uint32_t dst, int boxes, uint32_t stride)
{
    const uint32_t tid = threadIdx.x % 128, lane = jg_lane_id(), warp = tid / 32;
    const bool p8 = mode == JG_SOFT_P8;
    if (mode == JG_SOFT_TMA)
        return;
#pragma unroll 1
    for (int b = 0; b < boxes; ++b, dst += stride)
#pragma unroll 1
        for (uint32_t i = p8 ? tid : warp; i < (p8 ? ROWS * 16u : (uint32_t)ROWS);
             i += p8 ? 128 : 4) {
            const uint32_t at = dst + (p8 ? jg_swz128(i / 16, i % 16 * 8) : jg_swz128(i, 4 * lane));
#pragma unroll
            for (uint32_t w = 0; w < (p8 ? 2u : 1u); ++w)
                jg_st_shared_b32(at + 4 * w, __float_as_uint(jg_tf32_rna(
                                                 __uint_as_float(jg_ld_shared_b32(at + 4 * w)))));
        }
}

/* One box in the launch's mode (P8 or WORDS; TMA boxes are thread 0's). */
template <int SIZE, int ROWS>
JG_DEV void jg_soft_box(uint32_t mode, uint32_t dst, uint32_t side, const jg_soft_map &m,
                        int32_t c0, int32_t c1)
{
    if (mode == JG_SOFT_P8)
        jg_soft_box_p8<SIZE, ROWS>(dst, m, c0, c1);
    else
        jg_soft_box_words<SIZE, ROWS>(dst, side, m, c0, c1);
}

/* ---- direct stores of D ------------------------------------------------- */

/* `piece` bytes (2, 4, 8 or 16) from shared memory to global memory. */
JG_DEV void jg_soft_store(uint8_t *dst, uint32_t src, uint32_t piece)
{
    if (piece == 16) {
        *(uint4 *)dst = jg_ld_shared_v4(src);
    } else if (piece == 8) {
        const float2 v = jg_ld_shared_v2_f32(src);
        *(float2 *)dst = v;
    } else if (piece == 4) {
        *(uint32_t *)dst = jg_ld_shared_b32(src);
    } else {
        *(uint16_t *)dst = (uint16_t)(jg_ld_shared_b32(src & ~3u) >> (8 * (src & 2)));
    }
}

#endif /* JG_SM90_SOFT_CUH */
