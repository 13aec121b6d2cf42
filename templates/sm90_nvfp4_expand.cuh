/* NVFP4 for sm90_gemm.cu (JG_AB_DTYPE 5), M above the swap-AB kernel's and
 * grouped: Hopper has no FP4 MMA. For each staged stage (sm90_nvfp4.cuh),
 * 64 of K at a time, each consumer warpgroup dequantizes its 64 rows of A
 * straight into register-A wgmma fragments, and the consumers together
 * expand B's rows (one 128-byte FP16 swizzle atom per row) into one of
 * JG_FP4_BUFS buffers, both by sm90_nvfp4.cuh's dequantization to FP16
 * (every value c * s * 2^-7 exact, the same K order for both); then that
 * piece's FP16 wgmmas run, whose products and FP32 sums are those of a
 * native NVFP4 MMA times 2^-14. The epilogue applies the global scales and
 * 2^14. */
#ifndef JG_SM90_NVFP4_EXPAND_CUH
#define JG_SM90_NVFP4_EXPAND_CUH

#include "sm90_nvfp4.cuh"

#define JG_FP4_BUFS 3
#define JG_FP4_BUF_BYTES (JG_BLOCK_N * 128) /* B's rows: A's go to registers */
#define JG_FP4_BAR_ID 3 /* named barrier of the consumers (the epilogue uses 1 + c) */
#define JG_FP4_CONV_THREADS (JG_CONSUMERS * 128)

static_assert(JG_FP4_BUF_BYTES % 1024 == 0, "NVFP4: expanded tiles stay 1024-byte aligned");

/* A consumer thread's share of a piece's (row, half) items of B (the same
 * for every piece): item tid + k * JG_FP4_CONV_THREADS, whole 8-row atoms;
 * their addresses made once per tile (jg_fp4_at). */
#define JG_FP4_ITEMS (JG_BLOCK_N * 2)
#define JG_FP4_THREAD_ITEMS ((JG_FP4_ITEMS + JG_FP4_CONV_THREADS - 1) / JG_FP4_CONV_THREADS)
struct jg_fp4_items {
    jg_fp4_at at[JG_FP4_THREAD_ITEMS];
};

JG_DEV jg_fp4_items jg_fp4_items_make(uint32_t tid, uint32_t b_row0)
{
    jg_fp4_items it;
#pragma unroll
    for (int k = 0; k < JG_FP4_THREAD_ITEMS; ++k) {
        uint32_t row, hi;
        jg_fp4_item(tid + k * JG_FP4_CONV_THREADS, &row, &hi);
        it.at[k] = jg_fp4_at_make<JG_B_SF_LAYOUT>(row, hi, b_row0);
    }
    return it;
}

/* Piece j (64 of K) of B's staged rows into an FP16 buffer, each 16-byte
 * chunk c of row r at chunk c ^ (r % 8) (the 128B swizzle), K in
 * sm90_nvfp4.cuh's order. Scales past K's last block (a partial stage of
 * swizzled scales: bytes left from an earlier stage) read as 0. */
JG_DEV void jg_fp4_expand(const jg_fp4_items &it, uint32_t st, uint32_t buf, int kt, int j,
                          uint32_t tid)
{
    const uint32_t sf = st + (JG_BLOCK_M + JG_BLOCK_N) * 128 + JG_FP4_SF_BYTES;
#pragma unroll
    for (int k = 0; k < JG_FP4_THREAD_ITEMS; ++k)
        if (JG_FP4_ITEMS % JG_FP4_CONV_THREADS == 0 || tid + k * JG_FP4_CONV_THREADS < JG_FP4_ITEMS)
            jg_fp4_convert<JG_B_SF_LAYOUT>(it.at[k], st + JG_BLOCK_M * 128, sf, buf, kt,
                                           (uint32_t)j);
}

/* The expanded piece is complete: our generic stores, then the consumers'
 * wgmmas (async proxy) may read it. */
JG_DEV void jg_fp4_publish()
{
    jg_fence_proxy_async_smem();
    jg_named_barrier(JG_FP4_BAR_ID, JG_FP4_CONV_THREADS);
}

#endif /* JG_SM90_NVFP4_EXPAND_CUH */
