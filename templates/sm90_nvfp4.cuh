/* NVFP4 operands for sm90_gemm.cu (JG_AB_DTYPE 5): Hopper has no FP4 MMA,
 * but every e2m1 x e4m3 product has at most 6 significant bits and lies in
 * 2^-10..2688, so it is exact in BF16: each stage's packed codes and block
 * scales are expanded to BF16 in shared memory and fed to the BF16 wgmmas,
 * whose products and FP32 sums are then those of a native NVFP4 MMA. The
 * global scales apply in the epilogue.
 *
 * A stage is JG_FP4_STAGE_K (256) of K, staged by TMA as loaded:
 *   packed A  JG_BLOCK_M rows x 128 bytes, 128B-swizzled (the A map's box)
 *   packed B  JG_BLOCK_N rows x 128 bytes, likewise
 *   A scales  2048 bytes: row-major, rows of 16 bytes (a TMA box); swizzled
 *             128x4, up to four 512-byte blocks copied whole (cp.async.bulk)
 *   B scales  2048 bytes, likewise
 * The consumers expand it 64 of K at a time (one 128-byte BF16 swizzle atom
 * per row) into one of JG_FP4_BUFS buffers laid out as the BF16 path's TMA
 * writes them, and run that piece's wgmmas. */
#ifndef JG_SM90_NVFP4_CUH
#define JG_SM90_NVFP4_CUH

#define JG_FP4_STAGE_K 256
#define JG_FP4_PIECES (JG_FP4_STAGE_K / 64) /* BF16 swizzle atoms per stage */
#define JG_FP4_SF_BYTES 2048                 /* per operand per stage */
#define JG_FP4_STAGE_BYTES ((JG_BLOCK_M + JG_BLOCK_N) * 128 + 2 * JG_FP4_SF_BYTES)
#define JG_FP4_BUFS 3
#define JG_FP4_BUF_BYTES ((JG_BLOCK_M + JG_BLOCK_N) * 128)
#define JG_FP4_K_TILES ((JG_K + JG_FP4_STAGE_K - 1) / JG_FP4_STAGE_K)
#define JG_FP4_KBS (JG_K / 16)                /* scales per row */
#define JG_FP4_KBP4 ((JG_FP4_KBS + 3) / 4)    /* 512-byte blocks per 128 rows (swizzled) */
#define JG_FP4_BAR_ID 3 /* named barrier of the consumers (the epilogue uses 1 + c) */
#define JG_FP4_CONV_THREADS (JG_CONSUMERS * 128)

static_assert(JG_BLOCK_N <= 128 && 128 % JG_BLOCK_N == 0 && JG_BLOCK_M <= 128,
              "NVFP4: a tile's rows lie inside one 128-row block of swizzled scales");
static_assert(JG_FP4_STAGE_BYTES % 1024 == 0 && JG_FP4_BUF_BYTES % 1024 == 0,
              "NVFP4: staged and expanded tiles stay 1024-byte aligned");
static_assert(JG_CLUSTER == 1 && JG_LAYOUT == 0, "NVFP4: dense, no clusters");

/* cp.async.bulk of `bytes` (a multiple of 16) from global to shared memory,
 * completing on an mbarrier's transaction count. */
JG_DEV void jg_bulk_load(uint32_t dst, const void *src, uint32_t bytes, uint32_t bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1], %2, [%3];" ::"r"(dst),
                 "l"((uint64_t)src), "r"(bytes), "r"(bar)
                 : "memory");
}

/* The value of an e4m3 block scale (exact: e4m3 fits FP16). */
JG_DEV float jg_fp4_e4m3_value(uint32_t s)
{
    uint32_t h2;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"((uint16_t)s));
    return jg_f16_to_f32((uint16_t)h2);
}

/* 512-byte blocks of swizzled scales a stage reads: four, fewer at K's end. */
JG_DEV uint32_t jg_fp4_sf_blocks(int kt)
{
    const int left = JG_FP4_KBP4 - kt * 4;
    return left < 4 ? (uint32_t)left : 4u;
}

/* One operand's scales for stage kt, rows from `row0` (a multiple of the
 * tile height; the swizzled layout's 128-row block holds the whole tile). */
template <int LAYOUT>
JG_DEV uint32_t jg_fp4_load_sf(uint32_t dst, const jg_tmap *map, const uint8_t *sf, int32_t row0,
                               uint32_t box_rows, int kt, uint32_t bar)
{
    if (LAYOUT == 1) {
        jg_tma_load_2d(dst, map, bar, kt * 16, row0);
        return box_rows * 16;
    }
    const uint32_t blocks = jg_fp4_sf_blocks(kt);
    jg_bulk_load(dst, sf + ((int64_t)(row0 / 128) * JG_FP4_KBP4 + kt * 4) * 512, blocks * 512,
                 bar);
    return blocks * 512;
}

/* Producer: one stage's packed codes and scales of both operands. */
JG_DEV void jg_fp4_load_stage(const jg_kargs_t &p, const jg_tile &tl, uint32_t st, int kt,
                              uint32_t full)
{
    const int32_t a_row = (int32_t)(tl.tm * JG_BLOCK_M), b_row = (int32_t)(tl.tn * JG_BLOCK_N);
    const uint32_t st_b = st + JG_BLOCK_M * 128, st_sf = st_b + JG_BLOCK_N * 128;
    /* The stage's bytes: both packed boxes (zero-filled past the edges still
     * count) and the scales, known before any copy is issued. */
    const uint32_t sfa = JG_A_SF_LAYOUT == 1 ? JG_A_BOX_M * 16 : jg_fp4_sf_blocks(kt) * 512;
    const uint32_t sfb = JG_B_SF_LAYOUT == 1 ? JG_BLOCK_N * 16 : jg_fp4_sf_blocks(kt) * 512;
    jg_mbar_arrive_expect_tx(full, (JG_A_BOX_M + JG_BLOCK_N) * 128 + sfa + sfb);
    jg_tma_load_2d(st, tl.a, full, kt * 128, a_row);
    jg_tma_load_2d(st_b, tl.b, full, kt * 128, b_row);
    jg_fp4_load_sf<JG_A_SF_LAYOUT>(st_sf, &p.a_sf, p.a_sf_ptr, a_row, JG_A_BOX_M, kt, full);
    jg_fp4_load_sf<JG_B_SF_LAYOUT>(st_sf + JG_FP4_SF_BYTES, &p.b_sf, p.b_sf_ptr, b_row, JG_BLOCK_N,
                                   kt, full);
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

/* Where the 4 code bytes of item c (0..7: elements 8c..8c+7) of piece j
 * (64 of K) of staged row r lie, from the row's start: bytes j * 32 + c * 4
 * .. + 3 of the row, in 16-byte chunk q = 2j + c/4, which TMA's 128B
 * swizzle stores at chunk q ^ (r % 8), 4 (c % 4) bytes into it. */
JG_DEV uint32_t jg_fp4_code_at(uint32_t r, uint32_t j, uint32_t c)
{
    const uint32_t q = j * 2 + c / 4;
    return ((q ^ (r % 8)) * 16) + (c % 4) * 4;
}

/* Eight e2m1 codes (element 2i in the low nibble of byte i) times a scale,
 * as BF16 pairs: |code| * 2 is 0, 1, 2, 3, 4, 6, 8, 12 (nibbles of a
 * constant), times half the scale: exact in FP32, and so in BF16; the
 * code's sign flips the product's (a negative scale's included). */
JG_DEV void jg_fp4_expand8(uint32_t codes, float scale, uint32_t out[4])
{
    const float half = 0.5f * scale;
    for (int i = 0; i < 4; ++i) { /* unrolled by the compiler: out stays in registers */
        const uint32_t lo = (codes >> (8 * i)) & 15, hi = (codes >> (8 * i + 4)) & 15;
        const float vlo = (float)((0xC8643210u >> (4 * (lo & 7))) & 15) * half;
        const float vhi = (float)((0xC8643210u >> (4 * (hi & 7))) & 15) * half;
        out[i] = jg_pack_bf16x2(vlo, vhi) ^ ((lo & 8) << 12) ^ ((hi & 8) << 28);
    }
}

/* Piece j (64 of K) of a staged stage into a BF16 buffer: A rows at buf,
 * B rows at buf + BLOCK_M * 128, each 16-byte chunk c of row r at chunk
 * c ^ (r % 8) (the 128B swizzle). Every consumer thread takes a share of the
 * (row, chunk) pairs; A rows past its box are left as they are (their
 * sums are never stored). Scales past K's last block (a partial stage of
 * swizzled scales: bytes left from an earlier stage) read as 0. */
JG_DEV void jg_fp4_expand(uint32_t st, uint32_t buf, int kt, int j, uint32_t a_row0,
                          uint32_t b_row0, uint32_t tid)
{
    constexpr uint32_t items = (JG_A_BOX_M + JG_BLOCK_N) * 8;
#pragma unroll 4
    for (uint32_t i = tid; i < items; i += JG_FP4_CONV_THREADS) {
        const uint32_t row = i / 8, c = i % 8;
        const bool is_a = row < JG_A_BOX_M;
        const uint32_t r = is_a ? row : row - JG_A_BOX_M;
        const uint32_t packed = st + (is_a ? 0u : JG_BLOCK_M * 128u) + r * 128;
        uint32_t codes;
        asm volatile("ld.shared.b32 %0, [%1];"
                     : "=r"(codes)
                     : "r"(packed + jg_fp4_code_at(r, (uint32_t)j, c)));
        const uint32_t kb = (uint32_t)j * 4 + c / 2;
        const uint32_t sf_base = st + (JG_BLOCK_M + JG_BLOCK_N) * 128 + (is_a ? 0u : JG_FP4_SF_BYTES);
        const uint32_t off = is_a ? jg_fp4_sf_at(JG_A_SF_LAYOUT, r, a_row0, kb)
                                  : jg_fp4_sf_at(JG_B_SF_LAYOUT, r, b_row0, kb);
        uint32_t sbyte;
        asm volatile("ld.shared.u8 %0, [%1];" : "=r"(sbyte) : "r"(sf_base + off));
        float scale = jg_fp4_e4m3_value(sbyte);
        if (JG_K % JG_FP4_STAGE_K && kt * 16 + (int)kb >= JG_FP4_KBS)
            scale = 0.0f;
        uint32_t v[4];
        jg_fp4_expand8(codes, scale, v);
        const uint32_t dst = buf + (is_a ? 0u : JG_BLOCK_M * 128u) + r * 128 + ((c ^ (r % 8)) * 16);
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(dst), "r"(v[0]), "r"(v[1]),
                     "r"(v[2]), "r"(v[3])
                     : "memory");
    }
}

/* The expanded piece is complete: our generic stores, then the consumers'
 * wgmmas (async proxy) may read it. */
JG_DEV void jg_fp4_publish()
{
    jg_fence_proxy_async_smem();
    jg_named_barrier(JG_FP4_BAR_ID, JG_FP4_CONV_THREADS);
}

#endif /* JG_SM90_NVFP4_CUH */
