/* The NVFP4 quantization kernel's own arithmetic, run on the CPU (its
 * functions copied out of templates/sm90_quant_nvfp4.cu at build time):
 * the e2m1 rounding thresholds against the reference's nearest search over
 * every FP32 value near each midpoint and a sweep of the whole range; the
 * e4m3 decoding against the reference's for all 256 codes; the global
 * scale; and the swizzled layout's inverse map against jg_nvfp4_sf_offset.
 * The e4m3 rounding itself is the hardware's cvt.rn.satfinite (not
 * emulated here); the GPU test compares it with the reference. */
#include <stdio.h>
#include <stdlib.h>

#include "jg_internal.h"
#include "jg_nvfp4_ref.h"
#include "jg_test.h"
#include "quant_nvfp4_math.h"

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

int main(void)
{
    test_e2m1();
    test_e4m3_and_global();
    test_sf_coords();
    return jg_test_result("test_nvfp4_kernel_math");
}
