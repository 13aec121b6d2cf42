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

/* ---- dequantization to FP16 (both kernels) ----------------------------
 *
 * Exactness. The products are those of a native NVFP4 MMA: an e2m1 code c
 * is placed into FP16 bits as c * 2^-14 (e1 e0 m into bits 11..9, a
 * subnormal for e = 0, the sign into bit 15: no arithmetic), then one FP16
 * multiply by its block scale s times 2^7 gives c * s * 2^-7. That product
 * has at most 6 significant bits, lies in 2^-17..21, and is exact in FP16
 * (subnormals reach 2^-24); s * 2^7 <= 448 * 128 stays below FP16's 65504.
 * The FP32 accumulation of products of two such values equals the unscaled
 * one times 2^-14 exactly, and the epilogues multiply by g * 2^14.
 *
 * K order. Within each 64 of K (a piece) both operands use the same
 * permutation of K, so the sums are unchanged: step s (0..3, one k16
 * wgmma) position kk = 8 hi + 2 c + lo (the fragment's k) holds the
 * element 16 c + 8 hi + s + 4 lo of the piece. A register pair (lo = 0,
 * 1) is then elements j and j + 4 of one 32-bit word of codes (j = s): one
 * shift and two masks place both. */

/* Two e4m3 block scales (the low two bytes of s: byte 0 into the low half)
 * as an FP16 pair, each times 2^7: one conversion for two scales. */
JG_DEV uint32_t jg_fp4_scales2(uint32_t s)
{
    uint32_t h2, r;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"((uint16_t)s));
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(h2), "r"(0x58005800u)); /* 128.0 */
    return r;
}

/* Half h (0: low) of an FP16 pair in both halves: ptxas folds it into the
 * using multiply's operand (HMUL2's .H0_H0 / .H1_H1), no instruction. */
JG_DEV uint32_t jg_f16x2_dup(uint32_t x, int h)
{
    uint32_t r;
    if (h == 0)
        asm("{\n.reg .b16 l, u;\nmov.b32 {l, u}, %1;\nmov.b32 %0, {l, l};\n}" : "=r"(r) : "r"(x));
    else
        asm("{\n.reg .b16 l, u;\nmov.b32 {l, u}, %1;\nmov.b32 %0, {u, u};\n}" : "=r"(r) : "r"(x));
    return r;
}

/* A word of 8 codes, each spread into the high byte of its FP16 (sign
 * into bit 7, e1 e0 m into bits 3..1; the low byte is 0): byte b of `e`
 * holds code 2b, of `o` code 2b + 1. */
struct jg_fp4w {
    uint32_t e, o;
};

JG_DEV jg_fp4w jg_fp4_spread(uint32_t w)
{
    jg_fp4w z;
    z.e = ((w << 1) & 0x0E0E0E0Eu) | ((w << 4) & 0x80808080u);
    z.o = ((w >> 3) & 0x0E0E0E0Eu) | (w & 0x80808080u);
    return z;
}

/* Codes j and j + 4 of a spread word times a scale pair: an FP16 pair, code
 * j in the low half (see the file's comment on exactness). One byte
 * permute, or a mask, places both high bytes. */
JG_DEV uint32_t jg_fp4_pair(const jg_fp4w &z, int j, uint32_t scale2)
{
    uint32_t v, r;
    if (j == 0)
        asm("prmt.b32 %0, %1, %2, 0x2404;" : "=r"(v) : "r"(z.e), "r"(0u));
    else if (j == 1)
        asm("prmt.b32 %0, %1, %2, 0x2404;" : "=r"(v) : "r"(z.o), "r"(0u));
    else
        v = (j == 2 ? z.e : z.o) & 0xFF00FF00u;
    asm("mul.rn.f16x2 %0, %1, %2;" : "=r"(r) : "r"(v), "r"(scale2));
    return r;
}

/* The scale byte at sf_base + off, block kb (0..15) of stage kt; 0 past
 * K's last block (swizzled scales of a partial stage are bytes left from an
 * earlier one). */
JG_DEV uint32_t jg_fp4_sf_byte(uint32_t sf_base, uint32_t off, uint32_t kb, int kt)
{
    uint32_t s;
    asm volatile("ld.shared.u8 %0, [%1];" : "=r"(s) : "r"(sf_base + off));
    if (JG_K % JG_FP4_STAGE_K && kt * 16 + (int)kb >= JG_FP4_KBS)
        return 0;
    return s;
}

/* The block scales of a thread's two rows r and r + 8 (bytes at sf_base +
 * off_r, + off_r8), block kb of stage kt, as one FP16 pair times 2^7, row
 * r's in the low half: what jg_fp4_frags_make takes. */
JG_DEV uint32_t jg_fp4_row_scales(uint32_t sf_base, uint32_t off_r, uint32_t off_r8, uint32_t kb,
                                  int kt)
{
    return jg_fp4_scales2(jg_fp4_sf_byte(sf_base, off_r, kb, kt) |
                          jg_fp4_sf_byte(sf_base, off_r8, kb, kt) << 8);
}

/* A block-scale word's four e4m3 scales (byte c: block c of a piece) as
 * FP16 pairs, each scale in both halves, times 2^7: what jg_fp4_pair takes. */
JG_DEV void jg_fp4_scale_pairs(uint32_t s4, uint32_t (&sc)[4])
{
    const uint32_t s01 = jg_fp4_scales2(s4), s23 = jg_fp4_scales2(s4 >> 16);
#pragma unroll
    for (int c = 0; c < 4; ++c)
        sc[c] = jg_f16x2_dup(c < 2 ? s01 : s23, c % 2);
}

/* A consumer thread's 16 codes of piece j in rows r and r + 8 of a staged
 * tile at `rows` (128-byte rows, TMA's 128B swizzle): bytes 32 j + 8 q of
 * each row (block q = lane % 4), chunk 2 j + q / 2, one 8-byte load a row. */
JG_DEV void jg_fp4_row_codes(uint32_t rows, uint32_t r, uint32_t q, int j, uint32_t (&wa)[2],
                             uint32_t (&wb)[2])
{
    const uint32_t chunk = 2 * (uint32_t)j + q / 2;
    const uint32_t at = ((chunk ^ (r % 8)) * 16) + (q % 2) * 8;
    asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];"
                 : "=r"(wa[0]), "=r"(wa[1])
                 : "r"(rows + r * 128 + at));
    asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];"
                 : "=r"(wb[0]), "=r"(wb[1])
                 : "r"(rows + (r + 8) * 128 + at));
}

/* Where staged row n's code word W[2c + hi] of piece j lies from the row's
 * start: logical bytes 32j + 8c + 4hi .. + 3 (K elements 64j + 16c + 8hi
 * .. + 7), in 16-byte chunk 2j + c/2, which TMA's 128B swizzle stores at
 * chunk (2j + c/2) ^ (n % 8). */
JG_DEV uint32_t jg_fp4_word_at(uint32_t n, uint32_t j, uint32_t c, uint32_t hi)
{
    return (((2 * j + c / 2) ^ (n % 8)) * 16) + (c % 2) * 8 + hi * 4;
}

/* What the addresses of item (row n, half hi) need, the same for every
 * piece: a thread that keeps its items computes them once per tile. */
struct jg_fp4_at {
    uint32_t src; /* n * 128 + hi * 4: the staged row's words, from the operand's first row */
    uint32_t dst; /* n * 128: the piece's row */
    uint32_t x;   /* n % 8: the loads' swizzle */
    uint32_t m;   /* hi ^ n % 8: the stores' (chunk 2s + hi = 2s ^ hi) */
    uint32_t sf;  /* the row's scale of block 0 (block 4j adds sf_at(0, 0, 4j)) */
};

/* Staged row n (of a tile starting at row0), half hi, scales in LAYOUT. */
template <int LAYOUT>
JG_DEV jg_fp4_at jg_fp4_at_make(uint32_t n, uint32_t hi, uint32_t row0)
{
    jg_fp4_at a;
    a.dst = n * 128;
    a.src = a.dst + hi * 4;
    a.x = n % 8;
    a.m = hi ^ a.x;
    a.sf = jg_fp4_sf_at(LAYOUT, n, row0, 0);
    return a;
}

/* Item a of piece j of stage kt (rows: the operand's first staged row;
 * sf_base: its staged scales, in layout LAYOUT) into the FP16 piece at buf
 * (rows of 128 bytes, the 128B swizzle). The row's 32 code bytes of the
 * piece are words W[2c + hi] (c: the 16-element block, hi: its half); the
 * piece's 16-byte chunk q = 2s + hi holds, for c = 0..3, codes s and s + 4
 * of W[2c + hi] times block c's scale: the K order of the file's comment,
 * the same for every operand. */
template <int LAYOUT>
JG_DEV void jg_fp4_convert(const jg_fp4_at &a, uint32_t rows, uint32_t sf_base, uint32_t buf,
                           int kt, uint32_t j)
{
    uint32_t w[4];
#pragma unroll
    for (int c = 0; c < 4; ++c)
        asm volatile("ld.shared.b32 %0, [%1];"
                     : "=r"(w[c])
                     : "r"(rows + a.src + jg_fp4_word_at(a.x, j, c, 0)));
    /* The piece's 4 block scales are 4 consecutive bytes in either layout. */
    uint32_t s4;
    asm volatile("ld.shared.b32 %0, [%1];"
                 : "=r"(s4)
                 : "r"(sf_base + a.sf + jg_fp4_sf_at(LAYOUT, 0, 0, 4 * j)));
    jg_fp4w z[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        z[c] = jg_fp4_spread(w[c]);
        if (JG_K % JG_FP4_STAGE_K && kt * 16 + (int)(4 * j) + c >= JG_FP4_KBS)
            s4 &= ~(0xFFu << (8 * c));
    }
    uint32_t sc[4];
    jg_fp4_scale_pairs(s4, sc);
#pragma unroll
    for (int s = 0; s < 4; ++s)
        asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(
                         buf + a.dst + (((2 * (uint32_t)s) ^ a.m) * 16)),
                     "r"(jg_fp4_pair(z[0], s, sc[0])), "r"(jg_fp4_pair(z[1], s, sc[1])),
                     "r"(jg_fp4_pair(z[2], s, sc[2])), "r"(jg_fp4_pair(z[3], s, sc[3]))
                     : "memory");
}

#ifdef JG_MMA_N /* sm90_nvfp4_pre.cu runs several N (jg_wgmma_rs_n) */
/* One m64nNk16 wgmma (N = JG_MMA_N): A from four registers of FP16 pairs,
 * B (K-major, 128B swizzle) from shared memory through descriptor db. */
JG_DEV void jg_wgmma_rs(float (&d)[JG_MMA_N / 2], const uint32_t (&a)[4], uint64_t db,
                        uint32_t accumulate)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, " JG_MMA_IN5 ", 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n" JG_STR(JG_MMA_N) "k16.f32.f16.f16 " JG_MMA_REGS
                 ", {" JG_MMA_IN0 ", " JG_MMA_IN1 ", " JG_MMA_IN2 ", " JG_MMA_IN3 "}, " JG_MMA_IN4
                 ", p, 1, 1, 0;\n"
                 "}\n"
                 : JG_MMA_ACC(d)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(db), "r"(accumulate));
}
#endif

/* A thread's register-A fragments of one piece from its codes (words 0 and
 * 1 of its 16 codes of row r: wa0, wa1; of row r + 8: wb0, wb1) and the two
 * rows' scales as one FP16 pair (row r's in the low half): step s's
 * registers are codes s and s + 4 of word 0 of row r, of row r + 8, then of
 * word 1 of each (the file's K order). */
JG_DEV void jg_fp4_frags_make(uint32_t wa0, uint32_t wa1, uint32_t wb0, uint32_t wb1, uint32_t sab,
                              uint32_t (&frag)[4][4])
{
    const uint32_t sa = jg_f16x2_dup(sab, 0), sb = jg_f16x2_dup(sab, 1);
    const jg_fp4w za0 = jg_fp4_spread(wa0), zb0 = jg_fp4_spread(wb0);
    const jg_fp4w za1 = jg_fp4_spread(wa1), zb1 = jg_fp4_spread(wb1);
#pragma unroll
    for (int s = 0; s < 4; ++s) {
        frag[s][0] = jg_fp4_pair(za0, s, sa);
        frag[s][1] = jg_fp4_pair(zb0, s, sb);
        frag[s][2] = jg_fp4_pair(za1, s, sa);
        frag[s][3] = jg_fp4_pair(zb1, s, sb);
    }
}

/* Register-A fragments of piece j (64 of K, stage kt) for the 64 staged rows
 * from `rows` (rows row_off .. row_off + 63 of the staged tile, which starts
 * at row0; scales at sf_base in layout LAYOUT): lane l of warp w of the
 * warpgroup holds rows r = 16 w + l / 4 and r + 8, the piece's scale block
 * q = l % 4 (its 16 codes: one 8-byte load a row); step s's registers are
 * codes s and s + 4 of word 0 of row r, of row r + 8, then of word 1 of
 * each, times the block's scale (the file's K order, as the pieces). */
template <int LAYOUT>
JG_DEV void jg_fp4_frags(uint32_t rows, uint32_t sf_base, uint32_t row_off, uint32_t row0, int kt,
                         uint32_t j, uint32_t (&frag)[4][4])
{
    const uint32_t lane = jg_lane_id(), r = 16 * ((threadIdx.x % 128) / 32) + lane / 4;
    const uint32_t q = lane % 4, kb = 4 * j + q;
    const uint32_t at = (((2 * j + q / 2) ^ (r % 8)) * 16) + (q % 2) * 8;
    uint32_t wa0, wa1, wb0, wb1;
    asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];" : "=r"(wa0), "=r"(wa1) : "r"(rows + r * 128 + at));
    asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];"
                 : "=r"(wb0), "=r"(wb1)
                 : "r"(rows + (r + 8) * 128 + at));
    const uint32_t sab = jg_fp4_row_scales(sf_base, jg_fp4_sf_at(LAYOUT, row_off + r, row0, kb),
                                           jg_fp4_sf_at(LAYOUT, row_off + r + 8, row0, kb), kb, kt);
    jg_fp4_frags_make(wa0, wa1, wb0, wb1, sab, frag);
}

/* Item idx of a piece's dequantization, rows x 2 halves (rows a multiple
 * of 8): staged row *n, half *hi. Lanes 8q .. 8q + 7 of a warp take 8
 * consecutive rows with one half, so that each quarter warp's 16-byte
 * stores (one pass of the shared memory's banks) fall in 8 different
 * chunks of the swizzle; consecutive items of one row (two halves) would
 * put two lanes of a quarter warp in one chunk's banks. */
JG_DEV void jg_fp4_item(uint32_t idx, uint32_t *n, uint32_t *hi)
{
    *hi = idx / 8 % 2;
    *n = idx % 8 + 8 * (idx / 16);
}

#endif /* JG_SM90_NVFP4_CUH */
