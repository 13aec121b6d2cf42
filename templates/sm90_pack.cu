/* The pack of unaligned operands (sm_90a): A and B of a dense plan whose
 * pointers or rows TMA cannot take, copied into the caller's workspace on
 * the GEMM's stream, so that the GEMM after it loads them by TMA (the
 * kernel an aligned problem gets). Each matrix is `rows` rows of row_bytes
 * bytes, src_ld bytes apart from a src aligned to its element only; the
 * copy's rows are dst_ld bytes apart (a multiple of 128: TMA reads rows on
 * 128-byte lines fastest) from a 16-byte aligned dst. The bytes past
 * row_bytes in each copied row are not written: the GEMM's tensor map ends
 * at row_bytes, and TMA fills what lies past it with zeros.
 *
 * A thread writes whole 16-byte chunks of a row. It reads the aligned
 * 16-byte words of the source that hold the chunk's bytes (one, or two
 * where the chunk straddles a word boundary), never a word that holds no
 * byte of the row (so no page the row does not touch), and shifts the
 * chunk into place in registers. Consecutive lanes take consecutive
 * chunks: the reads and the writes are coalesced whatever the alignment.
 * 2^lanes_log2 threads (up to 256) take a row, the CTA 256 >> lanes_log2
 * rows at once (a group), the CTAs striding over both matrices' groups.
 * Byte copies only: one kernel serves every element type. Defined by the
 * generator (emit.c): JG_KERNEL_NAME. */
#include "jg_kargs.h"
#include "sm90_ptx.cuh"
#include "sm90_shift.cuh"

#ifndef JG_KERNEL_NAME
#define JG_KERNEL_NAME jg_pack_sm90_default
#endif

#define JG_PACK_THREADS 256

/* An aligned 16-byte word of the source, through the non-coherent path
 * (the source is not written while the pack runs). */
JG_DEV uint4 jg_pack_load(const uint4 *p)
{
    uint4 v;
    asm("ld.global.nc.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(p));
    return v;
}

/* One row: this thread's chunks (lane, lane + lanes, ...) of row_bytes
 * bytes from `from` to `to`. */
JG_DEV void jg_pack_row(uintptr_t from, uint8_t *to, int64_t row_bytes, uint32_t lane,
                        uint32_t lanes)
{
    const int64_t chunks = (row_bytes + 15) / 16;
#pragma unroll 1
    for (int64_t j = lane; j < chunks; j += lanes) {
        const uintptr_t at = from + (uintptr_t)(16 * j);
        const uint4 *word = (const uint4 *)(at & ~(uintptr_t)15);
        const uint32_t shift = (uint32_t)(at & 15);
        const uint4 w0 = jg_pack_load(word);
        /* the second word only where the chunk's bytes reach into it */
        const uint4 w1 = shift && shift + (row_bytes - 16 * j) > 16 ? jg_pack_load(word + 1) : w0;
        *(uint4 *)(to + 16 * j) = jg_shift16(w0, w1, shift);
    }
}

/* Row group g of both matrices' (A's first), thread tid's part of it. */
JG_DEV void jg_pack_group(const jg_pack_kargs *p, int64_t g, uint32_t tid)
{
    const bool second = g >= p->groups[0];
    const uint32_t lanes_log2 = second ? p->lanes_log2[1] : p->lanes_log2[0];
    const int64_t row =
        ((second ? g - p->groups[0] : g) << (8 - lanes_log2)) + (int64_t)(tid >> lanes_log2);
    if (row >= (second ? p->rows[1] : p->rows[0]))
        return;
    const uintptr_t src = (uintptr_t)(second ? p->src[1] : p->src[0]);
    uint8_t *dst = (uint8_t *)(second ? p->dst[1] : p->dst[0]);
    const int64_t src_ld = second ? p->src_ld[1] : p->src_ld[0];
    const int64_t dst_ld = second ? p->dst_ld[1] : p->dst_ld[0];
    jg_pack_row(src + (uintptr_t)(row * src_ld), dst + row * dst_ld,
                second ? p->row_bytes[1] : p->row_bytes[0], tid & ((1u << lanes_log2) - 1),
                1u << lanes_log2);
}

extern "C" __global__ void __launch_bounds__(JG_PACK_THREADS)
JG_KERNEL_NAME(const __grid_constant__ jg_pack_kargs p)
{
    const int64_t groups = p.groups[0] + p.groups[1];
#pragma unroll 1
    for (int64_t g = blockIdx.x; g < groups; g += gridDim.x)
        jg_pack_group(&p, g, threadIdx.x);
}
