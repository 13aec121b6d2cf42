/* The NVFP4 quantization kernel's own arithmetic, run on the CPU (its
 * functions copied out of templates/sm90_quant_nvfp4.cu at build time):
 * the e2m1 rounding thresholds against the reference's nearest search over
 * every FP32 value near each midpoint and a sweep of the whole range; the
 * e4m3 decoding against the reference's for all 256 codes; the global
 * scale; and the swizzled layout's inverse map against jg_nvfp4_sf_offset.
 * Also the NVFP4 GEMMs' staged scale offsets and code words, and their
 * dequantization to FP16 (templates/sm90_nvfp4.cuh, both kernels': its
 * byte spread, with its permute, mask and FP16 multiply modelled here).
 * The e4m3 rounding itself is the hardware's cvt.rn.satfinite (not
 * emulated here); the GPU test compares it with the reference. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jg_internal.h"
#include "jg_nvfp4_ref.h"
#include "jg_test.h"
#include "quant_nvfp4_math.h"

/* The spread word (its struct, declared in the template). */
typedef struct jg_fp4w {
    uint32_t e, o;
} jg_fp4w;
#include "gemm_nvfp4_math.h"

static float next_up(float f, int n)
{
    for (; n > 0; --n)
        f = nextafterf(f, INFINITY);
    for (; n < 0; ++n)
        f = nextafterf(f, -INFINITY);
    return f;
}

static void test_e2m1(void)
{
    static const float points[] = {0.0f, 0.25f, 0.5f, 0.75f, 1.0f, 1.25f, 1.5f, 1.75f,
                                   2.0f, 2.5f,  3.0f, 3.5f,  4.0f, 5.0f,  6.0f,  6.4f};
    int64_t bad = 0, n = 0;
    for (size_t i = 0; i < JG_ARRAY_LEN(points); ++i)
        for (int d = -64; d <= 64; ++d)
            for (int sign = 0; sign < 2; ++sign) {
                float v = next_up(points[i], d);
                v = sign ? -v : v;
                ++n;
                if (jg_q_e2m1(v) != jg_ref_e2m1(v) && bad++ < 5)
                    fprintf(stderr, "e2m1(%.9g): kernel %u, reference %u\n", (double)v,
                            jg_q_e2m1(v), jg_ref_e2m1(v));
            }
    /* Every 997th FP32 bit pattern from 0 to 8, and a few far above. */
    for (uint32_t u = 0; u <= 0x41000000u; u += 997, ++n) {
        const float v = __uint_as_float(u);
        bad += jg_q_e2m1(v) != jg_ref_e2m1(v);
    }
    static const float far[] = {7.0f, 100.0f, 1e30f, 3.4e38f};
    for (size_t i = 0; i < JG_ARRAY_LEN(far); ++i, ++n)
        bad += jg_q_e2m1(far[i]) != 7 || jg_q_e2m1(-far[i]) != 15;
    CHECK(bad == 0, "e2m1: the kernel's rounding differs on %lld of %lld values", (long long)bad,
          (long long)n);
}

static void test_e4m3_and_global(void)
{
    int bad = 0;
    for (int c = 0; c < 256; ++c)
        if ((c & 0x7f) != 0x7f)
            bad += (double)jg_q_e4m3_value((uint32_t)c) != jg_e4m3_value((uint8_t)c);
    CHECK(bad == 0, "e4m3 values: %d codes decode differently", bad);
    CHECK(jg_q_global(2688.0f) == 1.0f && jg_q_global(0.0f) == 1.0f &&
              jg_q_global(0x1p-149f) == 1.0f && jg_q_global(448.0f) == 448.0f / 2688.0f,
          "global scale");
}

static void test_sf_coords(void)
{
    static const int64_t shapes[][2] = {{1, 16}, {129, 80}, {300, 1024}, {256, 7168}, {513, 272}};
    for (size_t s = 0; s < JG_ARRAY_LEN(shapes); ++s) {
        const int64_t rows = shapes[s][0], k = shapes[s][1], kbs = k / 16;
        const int64_t kbp = (kbs + 3) / 4 * 4;
        const int64_t bytes = jg_nvfp4_sf_bytes(JG_SF_SWIZZLED_128X4, rows, k);
        int64_t bad = 0, inside = 0;
        for (int64_t o = 0; o < bytes; ++o) {
            int64_t r, kb;
            jg_q_sf_coords(o, kbp, &r, &kb);
            if (r < rows && kb < kbs) {
                ++inside;
                bad += jg_nvfp4_sf_offset(JG_SF_SWIZZLED_128X4, rows, k, r, kb) != o;
            }
        }
        CHECK(bad == 0 && inside == rows * kbs, "%lldx%lld: %lld offsets map back wrong, %lld of "
              "%lld scales reached", (long long)rows, (long long)k, (long long)bad,
              (long long)inside, (long long)(rows * kbs));
    }
}

/* The GEMM's staged scale offsets: a stage's swizzled scales are the
 * 512-byte blocks (row0 / 128) * kbp / 4 + 4 kt onward, copied whole; the
 * kernel's offset into them must land on jg_nvfp4_sf_offset's byte. */
static void test_gemm_sf_offsets(void)
{
    static const int64_t shapes[][2] = {{300, 1056}, {128, 256}, {1000, 7168}};
    static const uint32_t heights[] = {64, 128};
    int64_t bad = 0;
    for (size_t s = 0; s < JG_ARRAY_LEN(shapes); ++s) {
        const int64_t rows = shapes[s][0], k = shapes[s][1], kbs = k / 16;
        const int64_t kbp4 = (kbs + 3) / 4;
        for (size_t h = 0; h < JG_ARRAY_LEN(heights); ++h)
            for (int64_t row0 = 0; row0 < rows; row0 += heights[h])
                for (int64_t kt = 0; kt * 16 < kbs; ++kt)
                    for (uint32_t r = 0; r < heights[h] && row0 + r < rows; ++r)
                        for (uint32_t kb = 0; kb < 16 && kt * 16 + kb < kbs; ++kb) {
                            const int64_t base = ((row0 / 128) * kbp4 + kt * 4) * 512;
                            const int64_t got =
                                base + jg_fp4_sf_at(2, r, (uint32_t)row0, kb);
                            bad += got != jg_nvfp4_sf_offset(JG_SF_SWIZZLED_128X4, rows, k,
                                                             row0 + r, kt * 16 + kb);
                        }
    }
    CHECK(bad == 0, "staged scale offsets: %lld differ", (long long)bad);
}

/* The code words a dequantization item reads: a staged row block of 8
 * rows filled the way TMA's 128B swizzle writes it (logical byte b of row r
 * in chunk (b / 16) ^ (r % 8)), word W[2c + hi] of piece j must be logical
 * bytes 32j + 8c + 4hi .. + 3 of its row, and a piece's 8 words cover its
 * 32 bytes once each. */
static void test_gemm_code_words(void)
{
    uint8_t staged[8 * 128];
    for (uint32_t r = 0; r < 8; ++r)
        for (uint32_t b = 0; b < 128; ++b)
            staged[r * 128 + ((b / 16) ^ (r % 8)) * 16 + b % 16] = (uint8_t)b;
    int64_t bad = 0;
    for (uint32_t r = 0; r < 8; ++r)
        for (uint32_t j = 0; j < 4; ++j) {
            uint32_t seen = 0;
            for (uint32_t c = 0; c < 4; ++c)
                for (uint32_t hi = 0; hi < 2; ++hi)
                    for (uint32_t i = 0; i < 4; ++i) {
                        const uint32_t b = staged[r * 128 + jg_fp4_word_at(r, j, c, hi) + i];
                        bad += b != 32 * j + 8 * c + 4 * hi + i;
                        seen |= 1u << (b % 32);
                    }
            bad += seen != 0xffffffffu;
        }
    CHECK(bad == 0, "dequantization items read %lld wrong code bytes", (long long)bad);
}

/* The dequantization's items (jg_fp4_item): over a piece of 8..256 rows
 * (whole 8-row atoms) every (row, half) once; and each quarter warp's 8
 * lanes store their chunk s (0..3) of a row into 8 different physical
 * chunks of the 128B swizzle (chunk (2s + hi) ^ (row % 8)), so that a
 * 16-byte store of a quarter warp is one pass of the banks. */
static void test_gemm_items(void)
{
    int64_t bad_cover = 0, bad_banks = 0;
    for (uint32_t rows = 8; rows <= 256; rows += 8) {
        static unsigned char seen[256][2];
        memset(seen, 0, sizeof seen);
        for (uint32_t idx = 0; idx < 2 * rows; ++idx) {
            uint32_t n, hi;
            jg_fp4_item(idx, &n, &hi);
            if (n >= rows || hi > 1 || seen[n][hi]++)
                ++bad_cover;
        }
        for (uint32_t q0 = 0; q0 < 2 * rows; q0 += 8)
            for (uint32_t s = 0; s < 4; ++s) {
                uint32_t chunks = 0;
                for (uint32_t l = 0; l < 8; ++l) {
                    uint32_t n, hi;
                    jg_fp4_item(q0 + l, &n, &hi);
                    chunks |= 1u << ((2 * s + hi) ^ (n % 8));
                }
                bad_banks += chunks != 0xffu;
            }
    }
    CHECK(bad_cover == 0, "dequantization items: %lld missing or repeated", (long long)bad_cover);
    CHECK(bad_banks == 0, "dequantization items: %lld quarter-warp stores share banks",
          (long long)bad_banks);
}

/* The FP16 pair j of a spread word (jg_fp4_pair before its
 * multiply): codes j and j + 4 in the high bytes of the two halves, by
 * prmt.b32 (z, 0, 0x2404) for j = 0, 1 and a mask for j = 2, 3. */
static uint32_t pair_bits(jg_fp4w z, int j)
{
    const uint32_t w = j % 2 ? z.o : z.e;
    if (j < 2)
        return ((w & 0xffu) << 8) | (((w >> 16) & 0xffu) << 24);
    return w & 0xff00ff00u;
}

/* Every code in every position of a word lands as c * 2^-14 in FP16, sign
 * of zero included; times every finite e4m3 scale s times 2^7 (exact in
 * FP16), one FP16 rounding gives c * s * 2^-7 exactly: the products a
 * native NVFP4 MMA would sum, scaled by a power of two. */
static void test_dequant(void)
{
    int64_t bad_bits = 0, bad_products = 0, n = 0;
    for (uint32_t c = 0; c < 16; ++c)
        for (int pos = 0; pos < 8; ++pos) {
            uint32_t word = 0;
            for (int i = 0; i < 8; ++i)
                word |= (i == pos ? c : (c + 7u * (uint32_t)i + 3u) & 15u) << (4 * i);
            const uint32_t v = pair_bits(jg_fp4_spread(word), pos % 4);
            const uint16_t h = (uint16_t)(v >> (pos < 4 ? 0 : 16));
            const double code = jg_e2m1_value(c);
            const float f = jg_f16_to_f32(h);
            bad_bits += (double)f != ldexp(code, -14) || (signbit(f) != 0) != (c >= 8);
            for (int s = 0; s < 256; ++s, ++n) {
                if ((s & 0x7f) == 0x7f)
                    continue;
                const uint16_t s2 = jg_f32_to_f16((float)jg_e4m3_value((uint8_t)s) * 128.0f);
                const float prod = f * jg_f16_to_f32(s2); /* exact in FP32 */
                const float got = jg_f16_to_f32(jg_f32_to_f16(prod));
                const double want = ldexp(code * jg_e4m3_value((uint8_t)s), -7);
                bad_products += (double)got != want || (double)jg_f16_to_f32(s2) !=
                                                           128.0 * jg_e4m3_value((uint8_t)s);
            }
        }
    CHECK(bad_bits == 0, "spread: %lld of 128 codes misplaced", (long long)bad_bits);
    CHECK(bad_products == 0, "FP16 products: %lld of %lld inexact",
          (long long)bad_products, (long long)n);
}

int main(void)
{
    test_dequant();
    test_e2m1();
    test_e4m3_and_global();
    test_sf_coords();
    test_gemm_sf_offsets();
    test_gemm_code_words();
    test_gemm_items();
    return jg_test_result("test_nvfp4_kernel_math");
}
