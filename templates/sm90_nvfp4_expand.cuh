/* NVFP4 for sm90_gemm.cu (JG_AB_DTYPE 5), M above the swap-AB kernel's:
 * Hopper has no FP4 MMA, but every e2m1 x e4m3 product has at most 6
 * significant bits and lies in 2^-10..2688, so it is exact in BF16. The
 * consumers expand each staged stage (sm90_nvfp4.cuh) 64 of K at a time (one
 * 128-byte BF16 swizzle atom per row) into one of JG_FP4_BUFS buffers laid
 * out as the BF16 path's TMA writes them, and run that piece's BF16 wgmmas,
 * whose products and FP32 sums are then those of a native NVFP4 MMA. The
 * global scales apply in the epilogue. */
#ifndef JG_SM90_NVFP4_EXPAND_CUH
#define JG_SM90_NVFP4_EXPAND_CUH

#include "sm90_nvfp4.cuh"

#define JG_FP4_BUFS 3
#define JG_FP4_BUF_BYTES ((JG_BLOCK_M + JG_BLOCK_N) * 128)
#define JG_FP4_BAR_ID 3 /* named barrier of the consumers (the epilogue uses 1 + c) */
#define JG_FP4_CONV_THREADS (JG_CONSUMERS * 128)

static_assert(JG_FP4_BUF_BYTES % 1024 == 0, "NVFP4: expanded tiles stay 1024-byte aligned");

/* The value of an e4m3 block scale (exact: e4m3 fits FP16). */
JG_DEV float jg_fp4_e4m3_value(uint32_t s)
{
    uint32_t h2;
    asm("cvt.rn.f16x2.e4m3x2 %0, %1;" : "=r"(h2) : "h"((uint16_t)s));
    return jg_f16_to_f32((uint16_t)h2);
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

#endif /* JG_SM90_NVFP4_EXPAND_CUH */
