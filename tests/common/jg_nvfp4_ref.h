/* NVFP4 on the CPU, the tests' reference: the values of e2m1 and e4m3
 * codes, a quantizer that follows jitgemm.h's recipe step by step in FP32
 * (so the GPU's jg_quantize_nvfp4 must match it bit for bit), and an FP64
 * dequantizer, for both scale layouts (placed by jg_nvfp4_sf_offset).
 * Written apart from the kernel on purpose: rounding by nearest search over
 * the code tables, not by the kernel's thresholds and bit tricks.
 * Header-only; needs -lm. */
#ifndef JG_NVFP4_REF_H
#define JG_NVFP4_REF_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "jitgemm/jitgemm.h"

/* An e2m1 code (4 bits): sign, 2 exponent bits (bias 1), 1 mantissa bit. */
static inline double jg_e2m1_value(unsigned code)
{
    const unsigned e = (code >> 1) & 3, m = code & 1;
    const double v = e ? ldexp(1.0 + m / 2.0, (int)e - 1) : m / 2.0;
    return (code & 8) ? -v : v;
}

/* An e4m3 (fn) code: sign, 4 exponent bits (bias 7), 3 mantissa bits;
 * 0x7f and 0xff are NaN. */
static inline double jg_e4m3_value(uint8_t code)
{
    const int e = (code >> 3) & 15, m = code & 7;
    if (e == 15 && m == 7)
        return NAN;
    const double v = e ? ldexp(1.0 + m / 8.0, e - 7) : ldexp(m / 8.0, -6);
    return (code & 0x80) ? -v : v;
}

/* The e4m3 code nearest to x, ties to the even code (even mantissa), |x|
 * past 448 (the largest finite value) saturating: what PTX's
 * cvt.rn.satfinite.e4m3x2.f32 does for finite x. By search over the 127
 * non-negative finite codes, whose values increase with the code. */
static inline uint8_t jg_ref_e4m3(float x)
{
    const double a = fabs((double)x);
    const uint8_t sign = signbit(x) ? 0x80 : 0;
    uint8_t best = 0;
    if (a >= 448.0) /* the largest finite value (searching far above it loses precision) */
        return sign | 0x7e;
    for (int c = 1; c <= 0x7e; ++c) {
        const double dc = fabs(jg_e4m3_value((uint8_t)c) - a), db = fabs(jg_e4m3_value(best) - a);
        if (dc < db || (dc == db && !(c & 1)))
            best = (uint8_t)c;
    }
    return sign | best;
}

/* The e2m1 code nearest to v, ties to the even code, |v| > 6 saturating
 * to 6, the sign bit that of v (kept on zero). */
static inline unsigned jg_ref_e2m1(float v)
{
    const double a = fabs((double)v);
    unsigned best = a >= 6.0 ? 7 : 0;
    for (unsigned c = 1; c < 8 && best != 7; ++c) {
        const double dc = fabs(jg_e2m1_value(c) - a), db = fabs(jg_e2m1_value(best) - a);
        if (dc < db || (dc == db && !(c & 1)))
            best = c;
    }
    return (signbit(v) ? 8u : 0u) | best;
}

static inline unsigned jg_nvfp4_code(const uint8_t *codes, int64_t ld, int64_t r, int64_t k)
{
    const uint8_t byte = codes[r * (ld / 2) + k / 2];
    return k % 2 ? byte >> 4 : byte & 15u;
}

/* Quantizes x [rows, cols] (row stride ld_x) by jitgemm.h's recipe: codes
 * into rows of ld_codes / 2 bytes (ld_codes in elements), block scales into
 * sf (jg_nvfp4_sf_bytes(layout, rows, cols) bytes, padding 0), the global
 * scale into *g. FP32 steps in the recipe's order (C evaluates float
 * expressions in float here: FLT_EVAL_METHOD 0, no contraction in ISO C). */
static inline void jg_ref_quantize_nvfp4(const float *x, int64_t ld_x, int64_t rows, int64_t cols,
                                         jg_sf_layout layout, uint8_t *codes, int64_t ld_codes,
                                         uint8_t *sf, float *g)
{
    float amax = 0.0f;
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c)
            amax = fmaxf(amax, fabsf(x[r * ld_x + c]));
    float gs = amax / 2688.0f;
    if (!(gs > 0.0f))
        gs = 1.0f;
    *g = gs;
    memset(sf, 0, (size_t)jg_nvfp4_sf_bytes(layout, rows, cols));
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t kb = 0; kb < cols / 16; ++kb) {
            const float *blk = x + r * ld_x + kb * 16;
            float bmax = 0.0f;
            for (int i = 0; i < 16; ++i)
                bmax = fmaxf(bmax, fabsf(blk[i]));
            const float t = bmax / 6.0f;
            const uint8_t s = jg_ref_e4m3(t / gs);
            const float d = (float)jg_e4m3_value(s) * gs;
            sf[jg_nvfp4_sf_offset(layout, rows, cols, r, kb)] = s;
            uint8_t *out = codes + r * (ld_codes / 2) + kb * 8;
            for (int i = 0; i < 8; ++i) {
                const unsigned lo = d != 0.0f ? jg_ref_e2m1(blk[2 * i] / d) : 0;
                const unsigned hi = d != 0.0f ? jg_ref_e2m1(blk[2 * i + 1] / d) : 0;
                out[i] = (uint8_t)(lo | hi << 4);
            }
        }
}

/* out[r * ld_out + k] = e2m1(code) * e4m3(sf) * g, in FP64 (exact: at most
 * 2 + 4 significant bits times g's 24). */
static inline void jg_ref_dequantize_nvfp4(const uint8_t *codes, int64_t ld_codes,
                                           const uint8_t *sf, jg_sf_layout layout, float g,
                                           int64_t rows, int64_t cols, double *out, int64_t ld_out)
{
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t k = 0; k < cols; ++k)
            out[r * ld_out + k] = jg_e2m1_value(jg_nvfp4_code(codes, ld_codes, r, k)) *
                                  jg_e4m3_value(sf[jg_nvfp4_sf_offset(layout, rows, cols, r, k / 16)]) *
                                  (double)g;
}

#endif /* JG_NVFP4_REF_H */
