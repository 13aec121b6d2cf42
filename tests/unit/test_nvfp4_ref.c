/* NVFP4 on the CPU: the e2m1 and e4m3 code tables, the reference
 * quantizer's rounding, the FP64 dequantizer round trip over all 16 e2m1
 * codes and every finite positive e4m3 scale in both scale layouts, and
 * jg_nvfp4_sf_offset / jg_nvfp4_sf_bytes against two other ways of placing
 * the scales: a walk over the 128x4 tiles in memory order, and CUTLASS's
 * description of the layout as shapes and strides. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jg_internal.h"
#include "jg_nvfp4_ref.h"
#include "jg_test.h"

static const double e2m1_grid[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};

static void test_e2m1(void)
{
    for (unsigned c = 0; c < 16; ++c) {
        const double want = (c & 8 ? -1 : 1) * e2m1_grid[c & 7];
        const double got = jg_e2m1_value(c);
        CHECK(got == want && (signbit(got) != 0) == ((c & 8) != 0), "e2m1 %u: %g, want %g", c, got,
              want);
        CHECK(jg_ref_e2m1((float)got) == c, "e2m1 %u does not round to itself (%u)", c,
              jg_ref_e2m1((float)got));
    }
    /* Midpoints go to the even code; past 6 saturates; the sign is kept. */
    static const struct {
        float v;
        unsigned code;
    } rows[] = {{0.25f, 0},  {0.2500001f, 1}, {0.75f, 2},  {0.7499999f, 1}, {1.25f, 2},
                {1.75f, 4},  {2.5f, 4},       {2.5000002f, 5}, {3.5f, 6}, {5.0f, 6},
                {5.0000005f, 7}, {6.4f, 7},   {1e30f, 7},  {-0.0f, 8},      {-0.1f, 8},
                {-0.75f, 10}, {-5.0f, 14},    {-7.0f, 15}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i)
        CHECK(jg_ref_e2m1(rows[i].v) == rows[i].code, "e2m1 of %.9g: %u, want %u",
              (double)rows[i].v, jg_ref_e2m1(rows[i].v), rows[i].code);
}

static void test_e4m3(void)
{
    CHECK(jg_e4m3_value(0x7e) == 448.0 && jg_e4m3_value(0x01) == 0x1p-9 &&
              jg_e4m3_value(0x08) == 0x1p-6 && jg_e4m3_value(0x38) == 1.0 &&
              isnan(jg_e4m3_value(0x7f)) && jg_e4m3_value(0xb8) == -1.0,
          "e4m3 values");
    for (int c = 0; c < 256; ++c)
        if ((c & 0x7f) != 0x7f)
            CHECK(jg_ref_e4m3((float)jg_e4m3_value((uint8_t)c)) == c, "e4m3 0x%02x", c);
    static const struct {
        float x;
        uint8_t code;
    } rows[] = {{0x1p-10f, 0x00}, {0x1.8p-9f, 0x02}, {0x1.1p-9f, 0x01}, {1.0625f, 0x38},
                {1.1875f, 0x3a}, {449.0f, 0x7e},     {1e9f, 0x7e},       {464.0f, 0x7e},
                {432.0f, 0x7e},  {431.9f, 0x7d},     {-0x1p-11f, 0x80}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i)
        CHECK(jg_ref_e4m3(rows[i].x) == rows[i].code, "e4m3 of %.9g: 0x%02x, want 0x%02x",
              (double)rows[i].x, jg_ref_e4m3(rows[i].x), rows[i].code);
}

/* Codes, scales and g chosen so that quantizing the dequantized values must
 * give them back: each block holds all 16 codes (so its amax is 6 s g), g
 * is a power of two and one block has s = 448 (so amax / 2688 is g), and
 * every value is exact in FP32. Every positive finite e4m3 scale occurs. */
static void test_round_trip(jg_sf_layout layout)
{
    const int64_t rows = 126, cols = 64, kbs = cols / 16;
    const float g = 0x1p-3f;
    const int64_t sf_bytes = jg_nvfp4_sf_bytes(layout, rows, cols);
    uint8_t *codes = calloc((size_t)(rows * cols / 2), 1), *sf = calloc((size_t)sf_bytes, 1);
    uint8_t *codes2 = malloc((size_t)(rows * cols / 2)), *sf2 = malloc((size_t)sf_bytes);
    double *deq = malloc(sizeof(double) * (size_t)(rows * cols));
    float *x = malloc(sizeof(float) * (size_t)(rows * cols));
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t kb = 0; kb < kbs; ++kb) {
            sf[jg_nvfp4_sf_offset(layout, rows, cols, r, kb)] = (uint8_t)(1 + (r * kbs + kb) % 126);
            for (int i = 0; i < 16; ++i) { /* a rotation of 0..15 per block */
                const unsigned c = (unsigned)(i + r + kb) % 16;
                codes[r * cols / 2 + kb * 8 + i / 2] |= (uint8_t)(c << (4 * (i % 2)));
            }
        }
    jg_ref_dequantize_nvfp4(codes, cols, sf, layout, g, rows, cols, deq, cols);
    int64_t bad = 0;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < cols; ++k) {
            const unsigned c = (unsigned)(k % 16 + r + k / 16) % 16;
            const uint8_t s = (uint8_t)(1 + (r * kbs + k / 16) % 126);
            const double want = jg_e2m1_value(c) * jg_e4m3_value(s) * 0.125;
            bad += deq[r * cols + k] != want || signbit(deq[r * cols + k]) != signbit(want);
            x[r * cols + k] = (float)deq[r * cols + k];
        }
    CHECK(bad == 0, "%s: %lld dequantized values wrong", layout == 1 ? "row-major" : "swizzled",
          (long long)bad);
    float g2 = 0;
    memset(sf2, 0xee, (size_t)sf_bytes);
    jg_ref_quantize_nvfp4(x, cols, rows, cols, layout, codes2, cols, sf2, &g2);
    CHECK(g2 == g, "round trip: g %g, want %g", (double)g2, (double)g);
    CHECK(!memcmp(codes, codes2, (size_t)(rows * cols / 2)), "round trip: codes differ");
    CHECK(!memcmp(sf, sf2, (size_t)sf_bytes), "round trip: scales (or their zero padding) differ");
    /* An all-zero tensor: g = 1, every scale and code 0. */
    memset(x, 0, sizeof(float) * (size_t)(rows * cols));
    jg_ref_quantize_nvfp4(x, cols, rows, cols, layout, codes2, cols, sf2, &g2);
    bool zeros = g2 == 1.0f;
    for (int64_t i = 0; i < rows * cols / 2; ++i)
        zeros &= codes2[i] == 0;
    for (int64_t i = 0; i < sf_bytes; ++i)
        zeros &= sf2[i] == 0;
    CHECK(zeros, "an all-zero tensor: g %g, codes and scales not all 0", (double)g2);
    free(codes);
    free(sf);
    free(codes2);
    free(sf2);
    free(deq);
    free(x);
}

/* Which (r, kb) each byte of a swizzled array holds, by walking the bytes in
 * memory order: tiles of 128 rows x 4 scales, row-major over (rows/128,
 * kbp/4); inside a tile 32 lines of 16 bytes, line i holding rows i, i+32,
 * i+64, i+96, 4 scales each. -1 for padding. */
static void swizzled_walk(int64_t rows, int64_t kbs, int64_t *at_r, int64_t *at_kb)
{
    const int64_t tiles_r = (rows + 127) / 128, tiles_k = (kbs + 3) / 4;
    int64_t o = 0;
    for (int64_t tr = 0; tr < tiles_r; ++tr)
        for (int64_t tk = 0; tk < tiles_k; ++tk)
            for (int64_t line = 0; line < 32; ++line)
                for (int64_t quarter = 0; quarter < 4; ++quarter)
                    for (int64_t j = 0; j < 4; ++j, ++o) {
                        const int64_t r = tr * 128 + quarter * 32 + line, kb = tk * 4 + j;
                        const bool in = r < rows && kb < kbs;
                        at_r[o] = in ? r : -1;
                        at_kb[o] = in ? kb : -1;
                    }
}

/* CUTLASS's block-scaled config describes the same layout as a CuTe layout:
 * rows ((32, 4), tiles) with strides ((16, 4), 512 * kbp / 4), scales
 * (4, tiles) with strides (1, 512); a coordinate splits over a mode's shape
 * first index fastest. */
static int64_t cute_offset(int64_t r, int64_t kb, int64_t kbp)
{
    const int64_t row_shape[3] = {32, 4, INT64_MAX}, row_stride[3] = {16, 4, 512 * (kbp / 4)};
    const int64_t k_shape[2] = {4, INT64_MAX}, k_stride[2] = {1, 512};
    int64_t off = 0;
    for (int i = 0; i < 3; r /= row_shape[i], ++i)
        off += r % row_shape[i] * row_stride[i];
    for (int i = 0; i < 2; kb /= k_shape[i], ++i)
        off += kb % k_shape[i] * k_stride[i];
    return off;
}

static void test_sf_offsets(void)
{
    static const int64_t shapes[][2] = {{1, 16},   {128, 64},  {129, 80},  {300, 1024},
                                        {127, 48}, {256, 7168}, {7, 16384}, {513, 272}};
    for (size_t s = 0; s < JG_ARRAY_LEN(shapes); ++s) {
        const int64_t rows = shapes[s][0], k = shapes[s][1], kbs = k / 16;
        const int64_t kbp = (kbs + 3) / 4 * 4, rp = (rows + 127) / 128 * 128;
        const int64_t bytes = jg_nvfp4_sf_bytes(JG_SF_SWIZZLED_128X4, rows, k);
        CHECK(bytes == rp * kbp, "%lldx%lld: %lld bytes, want %lld", (long long)rows,
              (long long)k, (long long)bytes, (long long)(rp * kbp));
        CHECK(jg_nvfp4_sf_bytes(JG_SF_ROW_MAJOR, rows, k) == rows * kbs, "row-major bytes");
        int64_t *at_r = malloc(sizeof(int64_t) * (size_t)bytes);
        int64_t *at_kb = malloc(sizeof(int64_t) * (size_t)bytes);
        swizzled_walk(rows, kbs, at_r, at_kb);
        int64_t bad = 0, covered = 0;
        for (int64_t r = 0; r < rows; ++r)
            for (int64_t kb = 0; kb < kbs; ++kb) {
                const int64_t o = jg_nvfp4_sf_offset(JG_SF_SWIZZLED_128X4, rows, k, r, kb);
                bad += o < 0 || o >= bytes || at_r[o] != r || at_kb[o] != kb ||
                       cute_offset(r, kb, kbp) != o;
                bad += jg_nvfp4_sf_offset(JG_SF_ROW_MAJOR, rows, k, r, kb) != r * kbs + kb;
            }
        for (int64_t o = 0; o < bytes; ++o)
            covered += at_r[o] >= 0;
        CHECK(bad == 0 && covered == rows * kbs, "%lldx%lld: %lld offsets disagree, %lld of %lld "
              "bytes hold a scale", (long long)rows, (long long)k, (long long)bad,
              (long long)covered, (long long)(rows * kbs));
        free(at_r);
        free(at_kb);
    }
    /* By hand, from the layout's description (rows = 256, k = 128: 2 x 2 tiles). */
    static const int64_t hand[][3] = {{0, 0, 0},     {0, 1, 1},     {0, 3, 3},     {1, 0, 16},
                                      {31, 0, 496},  {32, 0, 4},    {64, 2, 10},   {96, 3, 15},
                                      {127, 3, 511}, {0, 4, 512},   {128, 0, 1024}, {200, 5, 1024 + 512 + 8 * 16 + 2 * 4 + 1},
                                      {255, 7, 2047}};
    for (size_t i = 0; i < JG_ARRAY_LEN(hand); ++i)
        CHECK(jg_nvfp4_sf_offset(JG_SF_SWIZZLED_128X4, 256, 128, hand[i][0], hand[i][1]) ==
                  hand[i][2],
              "swizzled (%lld, %lld): %lld, want %lld", (long long)hand[i][0],
              (long long)hand[i][1],
              (long long)jg_nvfp4_sf_offset(JG_SF_SWIZZLED_128X4, 256, 128, hand[i][0], hand[i][1]),
              (long long)hand[i][2]);
    /* Outside the domain: -1. */
    CHECK(jg_nvfp4_sf_offset(JG_SF_LAYOUT_NONE, 128, 64, 0, 0) == -1, "layout none");
    CHECK(jg_nvfp4_sf_offset((jg_sf_layout)3, 128, 64, 0, 0) == -1, "layout 3");
    CHECK(jg_nvfp4_sf_offset(JG_SF_ROW_MAJOR, 128, 40, 0, 0) == -1, "k = 40");
    CHECK(jg_nvfp4_sf_offset(JG_SF_ROW_MAJOR, 128, 0, 0, 0) == -1, "k = 0");
    CHECK(jg_nvfp4_sf_offset(JG_SF_ROW_MAJOR, 0, 64, 0, 0) == -1, "rows = 0");
    CHECK(jg_nvfp4_sf_offset(JG_SF_SWIZZLED_128X4, 128, 64, 128, 0) == -1, "r = rows");
    CHECK(jg_nvfp4_sf_offset(JG_SF_SWIZZLED_128X4, 128, 64, 0, 4) == -1, "kb = k/16");
    CHECK(jg_nvfp4_sf_offset(JG_SF_ROW_MAJOR, 128, 64, -1, 0) == -1, "r = -1");
    CHECK(jg_nvfp4_sf_bytes(JG_SF_SWIZZLED_128X4, 1, 17) == -1, "bytes, k = 17");
    CHECK(jg_nvfp4_sf_bytes(JG_SF_ROW_MAJOR, INT64_MAX, 1LL << 40) == -1, "bytes overflow");
}

int main(void)
{
    test_e2m1();
    test_e4m3();
    test_round_trip(JG_SF_ROW_MAJOR);
    test_round_trip(JG_SF_SWIZZLED_128X4);
    test_sf_offsets();
    return jg_test_result("test_nvfp4_ref");
}
