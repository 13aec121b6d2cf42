/* NVFP4 for sm90_gemm.cu (JG_AB_DTYPE 5), M above the swap-AB kernel's and
 * grouped: Hopper has no FP4 MMA. The consumers expand each staged stage
 * (sm90_nvfp4.cuh) 64 of K at a time (one 128-byte FP16 swizzle atom per
 * row) into one of JG_FP4_BUFS buffers, both operands by sm90_nvfp4.cuh's
 * dequantization to FP16 (every value c * s * 2^-7 exact, the same K order
 * for both), and run that piece's FP16 wgmmas, whose products and FP32
 * sums are those of a native NVFP4 MMA times 2^-14. The epilogue applies
 * the global scales and 2^14. */
#ifndef JG_SM90_NVFP4_EXPAND_CUH
#define JG_SM90_NVFP4_EXPAND_CUH

#include "sm90_nvfp4.cuh"

#define JG_FP4_BUFS 3
#define JG_FP4_BUF_BYTES ((JG_BLOCK_M + JG_BLOCK_N) * 128)
#define JG_FP4_BAR_ID 3 /* named barrier of the consumers (the epilogue uses 1 + c) */
#define JG_FP4_CONV_THREADS (JG_CONSUMERS * 128)

static_assert(JG_FP4_BUF_BYTES % 1024 == 0, "NVFP4: expanded tiles stay 1024-byte aligned");

/* Piece j (64 of K) of a staged stage into an FP16 buffer: A rows at buf,
 * B rows at buf + BLOCK_M * 128, each 16-byte chunk c of row r at chunk
 * c ^ (r % 8) (the 128B swizzle), K in sm90_nvfp4.cuh's order. Every
 * consumer thread takes a share of the (row, half) items; A rows past its
 * box are left as they are (their sums are never stored). Scales past K's
 * last block (a partial stage of swizzled scales: bytes left from an
 * earlier stage) read as 0. */
JG_DEV void jg_fp4_expand(uint32_t st, uint32_t buf, int kt, int j, uint32_t a_row0,
                          uint32_t b_row0, uint32_t tid)
{
    constexpr uint32_t items = (JG_A_BOX_M + JG_BLOCK_N) * 2;
    const uint32_t sf = st + (JG_BLOCK_M + JG_BLOCK_N) * 128;
#pragma unroll 2
    for (uint32_t i = tid; i < items; i += JG_FP4_CONV_THREADS) {
        uint32_t row, hi; /* A's rows and B's, both whole 8-row atoms */
        jg_fp4_item(i, &row, &hi);
        if (row < JG_A_BOX_M)
            jg_fp4_convert_half<JG_A_SF_LAYOUT>(st, sf, buf, kt, (uint32_t)j, row, hi, a_row0);
        else
            jg_fp4_convert_half<JG_B_SF_LAYOUT>(st + JG_BLOCK_M * 128, sf + JG_FP4_SF_BYTES,
                                                buf + JG_BLOCK_M * 128, kt, (uint32_t)j,
                                                row - JG_A_BOX_M, hi, b_row0);
    }
}

/* The expanded piece is complete: our generic stores, then the consumers'
 * wgmmas (async proxy) may read it. */
JG_DEV void jg_fp4_publish()
{
    jg_fence_proxy_async_smem();
    jg_named_barrier(JG_FP4_BAR_ID, JG_FP4_CONV_THREADS);
}

#endif /* JG_SM90_NVFP4_EXPAND_CUH */
