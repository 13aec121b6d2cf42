/* Soft loads and stores for sm90_gemm.cu: operands whose pointer or rows
 * are not 16-byte aligned, which TMA cannot take. The producer warpgroup's
 * 128 threads fill the same 128B-swizzled boxes TMA would (same
 * coordinates, zeros past the matrix) with cp.async, and complete them on
 * the same "full" mbarriers; D leaves through direct stores of the staged
 * chunks. Modes per launch and operand (jg_soft_kargs, JG_SOFT_*):
 *   P8: 8-byte pieces, where the pointer and the rows' bytes allow;
 *   WORDS: each row's aligned 16-byte chunks, copied as they lie (a row
 *     that starts `delta` bytes past a 16-byte boundary lands delta bytes
 *     late, its 9th chunk in a side slot), then shifted into place by the
 *     lanes that loaded it once its copies have landed (jg_soft_shift).
 * A stage completes a few stages after its copies were issued: the thread
 * waits for its cp.async group, shifts and (TF32) rounds, fences (its writes,
 * generic proxy, before wgmma's reads, async proxy) and arrives. */
#ifndef JG_SM90_SOFT_CUH
#define JG_SM90_SOFT_CUH

#include "jg_kargs.h"
#include "sm90_ptx.cuh"
#include "sm90_shift.cuh"

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

/* jg_soft_box_words's copies: this lane's chunk of its group's rows, each
 * row `step` bytes after the last from `base` (the first row's first
 * chunk), `bytes` of the chunk read (lane 7: `last` of the 9th) from rows
 * less than `left` x16 on, none past them; WHOLE: every chunk whole. */
template <int ROWS, bool WHOLE>
JG_DEV void jg_soft_box_chunks(uint32_t dst, uint32_t side, uintptr_t base, int64_t step,
                               int32_t left, uint32_t bytes, uint32_t last, uintptr_t none)
{
    const uint32_t t = threadIdx.x % 128, g = t / 8, j = t % 8;
#pragma unroll 4
    for (uint32_t i = 0; i < (uint32_t)ROWS / 16 + 1; ++i) {
        const uint32_t r = g + 16 * i;
        if (r >= (uint32_t)ROWS) /* the same in every lane of the warp (ROWS % 8 == 0) */
            break;
        const bool in = WHOLE || (int32_t)(16 * i) < left;
        const uint32_t take = WHOLE ? 16u : in ? bytes : 0u, take8 = WHOLE ? 16u : in ? last : 0u;
        jg_cp_async_16(dst + jg_swz128(r, 16 * j), (const void *)(take ? base + 16 * j : none),
                       take);
        if (j == 7)
            jg_cp_async_16(side + 16 * r, (const void *)(take8 ? base + 128 : none), take8);
        base += step;
    }
}

/* The same in WORDS mode, by aligned 16-byte chunks: the 8 lanes t % 8 = j
 * of a group g = t / 8 of the producer warpgroup take the box's rows g,
 * g + 16, ...; lane j copies chunk j of each row (the 16 bytes from the
 * row's first element rounded down to 16 bytes, plus 16 j) into the row's
 * 16-byte slot j, lane 7 also chunk 8 into the row's side slot. A row that
 * starts `delta` bytes past a 16-byte boundary lands delta bytes late;
 * jg_soft_shift moves it into place. Rows 16 apart are 16 (ld bytes)
 * apart, so delta is the same for all of a group's rows: computed once,
 * kept in the box's delta bytes (one per group, after its side slots).
 * Bytes past the row's end arrive as zeros; the delta bytes before its
 * start are shifted out. Every read lies in the 16-byte chunks that hold
 * a row's bytes (no fault where TMA would read nothing). */
template <int SIZE, int ROWS>
JG_DEV void jg_soft_box_words(uint32_t dst, uint32_t side, const jg_soft_map &m, int32_t c0,
                              int32_t c1)
{
    static_assert(ROWS % 8 == 0, "whole 8-row swizzle atoms (a warp's rows stay in step)");
    const uint32_t t = threadIdx.x % 128, g = t / 8, j = t % 8;
    /* the group's first row (row 0 where it lies past the matrix: read nothing) */
    const int32_t left = m.rows - c1 - (int32_t)g; /* the group's rows inside the matrix, x16 */
    const uintptr_t start =
        (uintptr_t)m.ptr + ((int64_t)(left > 0 ? c1 + (int32_t)g : 0) * m.ld + c0) * SIZE;
    const uint32_t delta = (uint32_t)start & 15;
    /* the row's bytes from its first chunk (its delta leading ones, then up
     * to 144 of the row), the same for each of the group's rows inside the
     * matrix */
    const int64_t tail = ((int64_t)m.cols - c0) * SIZE;
    const int32_t end = tail <= 0 ? 0 : (int32_t)delta + (tail < 144 ? (int32_t)tail : 144);
    const uintptr_t none = (uintptr_t)m.ptr & ~(uintptr_t)15; /* a source that reads nothing */
    if (j == 7)
        jg_st_shared_u8(side + 16 * ROWS + g, (uint8_t)delta);
    /* the box's rows all inside the matrix, each with its 9 chunks whole
     * (all but the last stages of K): no sizes to work out */
    if (m.rows - c1 >= ROWS && tail >= 144)
        jg_soft_box_chunks<ROWS, true>(dst, side, start - delta, 16 * m.ld * SIZE, 0, 16, 16,
                                       none);
    else
        jg_soft_box_chunks<ROWS, false>(dst, side, start - delta, 16 * m.ld * SIZE, left,
                                        jg_soft_take(end - 16 * (int32_t)j, 16),
                                        j == 7 ? jg_soft_take(end - 128, 16) : 0, none);
}

/* Moves the rows of a WORDS box into place, by the lanes that loaded them
 * once their copies have landed (cp.async.wait_group, then __syncwarp for
 * the delta bytes): slot j of a row `delta` bytes late takes the row's
 * bytes 16 j + delta .. 16 j + delta + 15, from its chunks j and j + 1 as
 * loaded (chunk 8 in the side slot). Each lane reads only its own copies
 * (chunk j + 1 comes from lane j + 1's registers by shuffles), so the warp
 * needs no other barrier. TF32 operands: the values rounded to TF32 on the
 * way (jg_soft_round_tf32's rounding; WORDS boxes are rounded only here). */
template <int SIZE, int ROWS, bool TF32>
JG_DEV void jg_soft_shift(uint32_t dst, uint32_t side)
{
    const uint32_t t = threadIdx.x % 128, g = t / 8, j = t % 8;
    const uint32_t delta = jg_ld_shared_u8(side + 16 * ROWS + g);
    /* rows in batches of 2: a batch's loads, then its shuffles and stores,
     * so that the loads' latencies overlap (the shared-memory accesses keep
     * their program order: asm volatile) */
    constexpr uint32_t steps = (uint32_t)ROWS / 16 + 1, batch = 2;
#pragma unroll 1
    for (uint32_t i0 = 0; i0 < steps; i0 += batch) {
        uint4 w[batch], last[batch];
#pragma unroll
        for (uint32_t k = 0; k < batch; ++k) {
            const uint32_t r = g + 16 * (i0 + k);
            if (i0 + k < steps && r < (uint32_t)ROWS) { /* the same in every lane of the warp */
                w[k] = jg_ld_shared_v4(dst + jg_swz128(r, 16 * j));
                if (j == 7)
                    last[k] = jg_ld_shared_v4(side + 16 * r);
            }
        }
#pragma unroll
        for (uint32_t k = 0; k < batch; ++k) {
            const uint32_t r = g + 16 * (i0 + k);
            if (i0 + k >= steps || r >= (uint32_t)ROWS)
                break;
            uint4 n;
            n.x = __shfl_down_sync(0xffffffffu, w[k].x, 1);
            n.y = __shfl_down_sync(0xffffffffu, w[k].y, 1);
            n.z = __shfl_down_sync(0xffffffffu, w[k].z, 1);
            n.w = __shfl_down_sync(0xffffffffu, w[k].w, 1);
            if (j == 7)
                n = last[k];
            const uint4 v = jg_shift16(w[k], n, delta);
            uint32_t o[4] = {v.x, v.y, v.z, v.w};
#pragma unroll
            for (int e = 0; e < 4; ++e)
                if (TF32)
                    o[e] = __float_as_uint(jg_tf32_rna(__uint_as_float(o[e])));
            jg_st_shared_v4(dst + jg_swz128(r, 16 * j), o[0], o[1], o[2], o[3]);
        }
    }
}

/* TF32 operands: the FP32 values of `boxes` boxes (`stride` bytes apart)
 * this thread copied in P8 mode, rounded in place to nearest TF32 once
 * they have landed, as a TFLOAT32 tensor map rounds those TMA loads (wgmma
 * would truncate them); nothing for TMA's, nor for WORDS boxes (their
 * shift rounds them). The thread's own pieces (every 128th), which its
 * cp.async.wait_group made visible to it: no barrier. */
template <int ROWS>
JG_DEV void jg_soft_round_tf32(uint32_t mode, uint32_t dst, int boxes, uint32_t stride)
{
    const uint32_t tid = threadIdx.x % 128;
    if (mode != JG_SOFT_P8)
        return;
#pragma unroll 1
    for (int b = 0; b < boxes; ++b, dst += stride)
#pragma unroll 1
        for (uint32_t i = tid; i < ROWS * 16u; i += 128) {
            const uint32_t at = dst + jg_swz128(i / 16, i % 16 * 8);
#pragma unroll
            for (uint32_t w = 0; w < 2; ++w)
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
