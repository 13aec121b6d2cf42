/* NVFP4 operands as the kernels stage them (sm90_gemm.cu, JG_AB_DTYPE 5,
 * which expands them with sm90_nvfp4_expand.cuh; sm90_nvfp4_swap.cu).
 *
 * A stage is JG_FP4_STAGE_K (256) of K, staged by TMA as loaded:
 *   packed A  JG_BLOCK_M rows x 128 bytes, 128B-swizzled (the A map's box)
 *   packed B  JG_BLOCK_N rows x 128 bytes, likewise
 *   A scales  2048 bytes: row-major, rows of 16 bytes (a TMA box); swizzled
 *             128x4, up to four 512-byte blocks copied whole (cp.async.bulk)
 *   B scales  2048 bytes, likewise
 * and consumed 64 of K (a piece) at a time. */
#ifndef JG_SM90_NVFP4_CUH
#define JG_SM90_NVFP4_CUH

#define JG_FP4_STAGE_K 256
#define JG_FP4_PIECES (JG_FP4_STAGE_K / 64) /* 16-bit swizzle atoms per stage */
#define JG_FP4_SF_BYTES 2048                 /* per operand per stage */
#define JG_FP4_STAGE_BYTES ((JG_BLOCK_M + JG_BLOCK_N) * 128 + 2 * JG_FP4_SF_BYTES)
#define JG_FP4_K_TILES ((JG_K + JG_FP4_STAGE_K - 1) / JG_FP4_STAGE_K)
#define JG_FP4_KBS (JG_K / 16)                /* scales per row */
#define JG_FP4_KBP4 ((JG_FP4_KBS + 3) / 4)    /* 512-byte blocks per 128 rows (swizzled) */

static_assert(JG_BLOCK_N <= 128 && 128 % JG_BLOCK_N == 0 && JG_BLOCK_M <= 128,
              "NVFP4: a tile's rows lie inside one 128-row block of swizzled scales");
static_assert(JG_FP4_STAGE_BYTES % 1024 == 0, "NVFP4: staged tiles stay 1024-byte aligned");
static_assert(JG_CLUSTER == 1, "NVFP4: no clusters");

/* cp.async.bulk of `bytes` (a multiple of 16) from global to shared memory,
 * completing on an mbarrier's transaction count. */
JG_DEV void jg_bulk_load(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1], %2, [%3];" ::"r"(dst),
                 "l"((uint64_t)src), "r"(bytes), "r"(bar)
                 : "memory");
}

/* 512-byte blocks of swizzled scales a stage reads: four, fewer at K's end. */
JG_DEV uint32_t jg_fp4_sf_blocks(int kt)
{
    const int left = JG_FP4_KBP4 - kt * 4;
    return left < 4 ? (uint32_t)left : 4u;
}

/* One operand's scales for stage kt: row-major, the map's rows from
 * `map_row`; swizzled, the array's from `row0` (a multiple of the tile
 * height; the layout's 128-row block holds the whole tile). */
template <int LAYOUT>
JG_DEV uint32_t jg_fp4_load_sf(uint32_t dst, const jg_tmap *map, const uint8_t *sf,
                               int32_t map_row, int32_t row0, uint32_t box_rows, int kt,
                               uint32_t bar)
{
    if (LAYOUT == 1) {
        jg_tma_load_2d(dst, map, bar, kt * 16, map_row);
        return box_rows * 16;
    }
    const uint32_t blocks = jg_fp4_sf_blocks(kt);
    jg_bulk_load(dst, sf + ((int64_t)(row0 / 128) * JG_FP4_KBP4 + kt * 4) * 512, blocks * 512,
                 bar);
    return blocks * 512;
}

/* Producer: one stage's packed codes and scales of both operands, rows
 * of the tile's matrices (grouped: from its group's first rows). */
JG_DEV void jg_fp4_load_stage(const jg_tile &tl, uint32_t st, int kt, uint32_t full)
{
    const int32_t a_row = (int32_t)(tl.tm * JG_BLOCK_M), b_row = (int32_t)(tl.tn * JG_BLOCK_N);
    const uint32_t st_b = st + JG_BLOCK_M * 128, st_sf = st_b + JG_BLOCK_N * 128;
    /* The stage's bytes: both packed boxes (zero-filled past the edges still
     * count) and the scales, known before any copy is issued. */
    const uint32_t sfa = JG_A_SF_LAYOUT == 1 ? JG_A_BOX_M * 16 : jg_fp4_sf_blocks(kt) * 512;
    const uint32_t sfb = JG_B_SF_LAYOUT == 1 ? JG_BLOCK_N * 16 : jg_fp4_sf_blocks(kt) * 512;
    jg_mbar_arrive_expect_tx(full, (JG_A_BOX_M + JG_BLOCK_N) * 128 + sfa + sfb);
    jg_tma_load_2d(st, tl.a, full, kt * 128, tl.row_base + a_row);
    jg_tma_load_2d(st_b, tl.b, full, kt * 128, tl.b_row + b_row);
    jg_fp4_load_sf<JG_A_SF_LAYOUT>(st_sf, tl.a_sf, tl.a_sf_ptr, tl.row_base + a_row, a_row,
                                   JG_A_BOX_M, kt, full);
    jg_fp4_load_sf<JG_B_SF_LAYOUT>(st_sf + JG_FP4_SF_BYTES, tl.b_sf, tl.b_sf_ptr,
                                   tl.b_row + b_row, b_row, JG_BLOCK_N, kt, full);
}

/* Byte of scale kb (0..15 within the stage) of staged row r (tile row0 + r),
 * in the operand's layout (1 row-major, 2 swizzled; a constant). */
JG_DEV uint32_t jg_fp4_sf_at(uint32_t layout, uint32_t r, uint32_t row0, uint32_t kb)
{
    if (layout == 1)
        return r * 16 + kb;
    const uint32_t rr = (row0 + r) % 128;
    return (kb / 4) * 512 + (rr % 32) * 16 + (rr / 32 % 4) * 4 + kb % 4;
}

#endif /* JG_SM90_NVFP4_CUH */
