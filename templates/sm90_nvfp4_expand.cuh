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
/* The converter: warps 1-3 of the producer's warpgroup and the warpgroup
 * after the consumers; registers: the consumers' and the others' within 64K. */
#define JG_FP4_CONV_WARPS 7
#define JG_FP4_CONV_THREADS (JG_FP4_CONV_WARPS * 32)
#define JG_FP4_SIDE_REGS 88
#define JG_FP4_CONSUMER_REGS (JG_CONSUMERS == 2 ? 168 : 232)
static_assert(JG_CONSUMERS * JG_FP4_CONSUMER_REGS + 2 * JG_FP4_SIDE_REGS <= 512,
              "NVFP4: the warpgroups' registers fit the SM's 64K");

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

/* The converter (JG_FP4_CONV_THREADS threads, tid its own index): for each
 * of the CTA's tiles, in the producer's order, each staged stage's 4 pieces
 * into the ring of JG_FP4_BUFS FP16 buffers, in the order the consumers
 * take them (piece g in buffer g % BUFS). The mbarriers: a stage's empty
 * follows its full, a buffer's full and empty follow the stages'. */
JG_DEV void jg_fp4_convert_tiles(const jg_kargs_t &p, uint32_t first_unit, uint32_t unit_step,
                                 uint32_t tiles, uint32_t tiles_m, uint32_t smem_st,
                                 uint32_t smem_buf, uint32_t bar_full, uint32_t bar_afull,
                                 uint32_t tid)
{
    const uint32_t bar_empty = bar_full + JG_STAGES * 8, bar_aempty = bar_afull + JG_FP4_BUFS * 8;
    uint32_t stage = 0, phase = 0, piece = 0;
    for (uint32_t t = first_unit; t < tiles; t += unit_step) {
        const jg_tile tl = jg_tile_at(p, t, tiles_m);
        for (int kt = 0; kt < JG_FP4_K_TILES; ++kt) {
            jg_mbar_wait(bar_full + 8 * stage, phase);
            const uint32_t st = smem_st + stage * JG_FP4_STAGE_BYTES;
            for (int j = 0; j < JG_FP4_PIECES; ++j, ++piece) {
                const uint32_t b = piece % JG_FP4_BUFS;
                jg_mbar_wait(bar_aempty + 8 * b, ((piece / JG_FP4_BUFS) & 1) ^ 1);
                jg_fp4_expand(st, smem_buf + b * JG_FP4_BUF_BYTES, kt, j, tl.tm * JG_BLOCK_M,
                              tl.tn * JG_BLOCK_N, tid);
                jg_fence_proxy_async_smem(); /* our stores, then the wgmmas' reads */
                __syncwarp();
                if (jg_lane_id() == 0)
                    jg_mbar_arrive(bar_afull + 8 * b);
            }
            __syncwarp();
            if (jg_lane_id() == 0) /* the staged bytes are all read */
                jg_mbar_arrive(bar_empty + 8 * stage);
            if (++stage == JG_STAGES) {
                stage = 0;
                phase ^= 1;
            }
        }
    }
}

#endif /* JG_SM90_NVFP4_EXPAND_CUH */
