/* jitgemm-bench: the types' names and sizes, random inputs (normal 16-bit
 * values, e4m3 codes, FP8 scales), and the device buffers of one problem,
 * cuBLASLt's scale arrays among them. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "jg_test.h" /* seeded RNG and 16-bit float conversions */

const char *dtype_name(jg_dtype t)
{
    return t == JG_BF16   ? "bf16"
           : t == JG_FP16 ? "fp16"
           : t == JG_FP32 ? "fp32"
           : t == JG_E4M3 ? "e4m3"
           : t == JG_NVFP4 ? "nvfp4"
                          : "none";
}

/* Bytes per element of the 8- to 32-bit types; nvfp4 operands (half a byte
 * plus the block scales) are sized apart (nvfp4_init, row_metrics). */
size_t dtype_size(jg_dtype t) { return t == JG_FP32 ? 4 : t == JG_E4M3 ? 1 : 2; }

cudaDataType_t dtype_cuda(jg_dtype t)
{
    return t == JG_BF16   ? CUDA_R_16BF
           : t == JG_FP16 ? CUDA_R_16F
           : t == JG_E4M3 ? CUDA_R_8F_E4M3
                          : CUDA_R_32F;
}

const char *scale_name(jg_scale_mode m)
{
    return m == JG_SCALE_TENSOR ? "tensor"
           : m == JG_SCALE_ROW  ? "row"
           : m == JG_SCALE_BLOCK ? "block"
           : m == JG_SCALE_NVFP4 ? "nvfp4"
                                 : "none";
}

const char *sf_layout_name(jg_sf_layout l)
{
    return l == JG_SF_ROW_MAJOR ? "rowmajor" : l == JG_SF_SWIZZLED_128X4 ? "swizzled" : "none";
}

/* e4m3 (the "fn" variant): 1 sign, 4 exponent bits (bias 7), 3 mantissa
 * bits; no infinities, S.1111.111 is NaN. */
static double e4m3_decode(uint8_t v)
{
    int e = v >> 3 & 15, m = v & 7;
    double x = e == 15 && m == 7 ? NAN : e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
    return v & 0x80 ? -x : x;
}

/* Element i of a bf16, fp16, fp32 or e4m3 array, as a double. */
double load_elem(const void *p, size_t i, jg_dtype t)
{
    static double e4m3[256]; /* decoded once: the FP64 check reads ~10^8 */
    static bool e4m3_done;
    if (t == JG_E4M3 && !e4m3_done) {
        for (int v = 0; v < 256; ++v)
            e4m3[v] = e4m3_decode((uint8_t)v);
        e4m3_done = true;
    }
    if (t == JG_E4M3)
        return e4m3[((const uint8_t *)p)[i]];
    if (t == JG_FP32)
        return ((const float *)p)[i];
    uint16_t h = ((const uint16_t *)p)[i];
    return t == JG_BF16 ? jg_bf16_to_f32(h) : jg_f16_to_f32(h);
}

/* Standard normal values rounded to bf16 or fp16. Box-Muller gives two
 * values per draw; both are used because the large shapes need ~10^8. */
void fill_normal(uint16_t *x, size_t n, jg_dtype t, uint64_t seed)
{
    jg_rng r;
    jg_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i += 2) {
        double rad = sqrt(-2.0 * log(1.0 - jg_rng_uniform(&r))); /* 1 - u is in (0, 1] */
        double phi = 6.283185307179586 * jg_rng_uniform(&r);
        float v[2] = {(float)(rad * cos(phi)), (float)(rad * sin(phi))};
        for (size_t j = 0; j < 2 && i + j < n; ++j)
            x[i + j] = t == JG_BF16 ? jg_f32_to_bf16(v[j]) : jg_f32_to_f16(v[j]);
    }
}

/* Random e4m3 codes: random sign and mantissa, exponent field 5..9, so |x|
 * in [0.25, 7.5]: finite, never zero or a NaN code (field 15), and with
 * varied bits, as tensor-core power (and so the clock) depends on the data.
 * Narrower than the format (fields 1..14 reach 240, products 57600): here
 * E[x^2] ~ 9.2, so a sum of 16384 products has sigma ~ 1200 and the largest
 * of ~10^8 outputs, ~6 sigma times scales of up to 1.5^2, stays ~4x inside
 * fp16's range (--out-dtype fp16). Four codes per 64-bit draw. */
void fill_e4m3(uint8_t *x, size_t n, uint64_t seed)
{
    jg_rng r;
    jg_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i += 4) {
        uint64_t bits = jg_rng_next(&r);
        for (size_t j = 0; j < 4 && i + j < n; ++j, bits >>= 16) {
            unsigned e = 5 + (unsigned)((((bits >> 4) & 0xfff) * 5) >> 12); /* 5..9 */
            x[i + j] = (uint8_t)((bits & 8) << 4 | e << 3 | (bits & 7));
        }
    }
}

/* n FP32 scales, uniform in [0.5, 1.5). */
static void fill_scales(float *x, size_t n, uint64_t seed)
{
    jg_rng r;
    jg_rng_seed(&r, seed);
    for (size_t i = 0; i < n; ++i)
        x[i] = (float)(0.5 + jg_rng_uniform(&r));
}

/* Frees what scales_init made (and nvfp4_init's global scales) and
 * clears those fields. */
void scales_free(operands *o)
{
    free(o->hsa);
    free(o->hsb);
    cudaFree(o->sa);
    cudaFree(o->sb);
    cudaFree(o->lt_sa);
    cudaFree(o->lt_sb);
    cudaFree(o->unit);
    o->hsa = o->hsb = o->sa = o->sb = o->lt_sa = o->lt_sb = o->unit = NULL;
}

void operands_free(operands *o)
{
    scales_free(o);
    free(o->ha);
    free(o->hb);
    cudaFree(o->a);
    cudaFree(o->b);
    cudaFree(o->d_ours);
    cudaFree(o->d_peer);
    cudaFree(o->d_peer2);
    free(o->hsfa);
    free(o->hsfb);
    cudaFree(o->sfa);
    cudaFree(o->sfb);
    memset(o, 0, sizeof *o);
}

/* Random A (na elements) and B (nb) uploaded (seeds `seed` and seed + 1):
 * normal values rounded to bf16/fp16, or e4m3 codes (fill_e4m3); our D and
 * `peers` (0 to 2) peer D (nd elements each) poisoned with NaN (0xff bytes)
 * so that an output never written cannot pass the check. */
bool operands_alloc(operands *o, const char *name, size_t na, size_t nb, size_t nd,
                    jg_dtype in, jg_dtype out, int peers, uint64_t seed)
{
    memset(o, 0, sizeof *o);
    o->a_bytes = na * dtype_size(in);
    o->b_bytes = nb * dtype_size(in);
    o->d_bytes = nd * dtype_size(out);
    o->ha = malloc(o->a_bytes);
    o->hb = malloc(o->b_bytes);
    if (!o->ha || !o->hb) {
        fprintf(stderr, "jitgemm-bench: out of host memory for %s\n", name);
        return false;
    }
    if (in == JG_E4M3) {
        fill_e4m3(o->ha, na, seed);
        fill_e4m3(o->hb, nb, seed + 1);
    } else {
        fill_normal(o->ha, na, in, seed);
        fill_normal(o->hb, nb, in, seed + 1);
    }
    return !CUDA_FAILED(cudaMalloc(&o->a, o->a_bytes)) &&
           !CUDA_FAILED(cudaMalloc(&o->b, o->b_bytes)) &&
           !CUDA_FAILED(cudaMalloc(&o->d_ours, o->d_bytes)) &&
           (peers < 1 || !CUDA_FAILED(cudaMalloc(&o->d_peer, o->d_bytes))) &&
           (peers < 2 || !CUDA_FAILED(cudaMalloc(&o->d_peer2, o->d_bytes))) &&
           !CUDA_FAILED(cudaMemcpy(o->a, o->ha, o->a_bytes, cudaMemcpyHostToDevice)) &&
           !CUDA_FAILED(cudaMemcpy(o->b, o->hb, o->b_bytes, cudaMemcpyHostToDevice)) &&
           !CUDA_FAILED(cudaMemset(o->d_ours, 0xff, o->d_bytes)) &&
           (peers < 1 || !CUDA_FAILED(cudaMemset(o->d_peer, 0xff, o->d_bytes))) &&
           (peers < 2 || !CUDA_FAILED(cudaMemset(o->d_peer2, 0xff, o->d_bytes))) &&
           /* These ran on the legacy stream, which the timing stream (non-
            * blocking) does not wait for. */
           !CUDA_FAILED(cudaDeviceSynchronize());
}

/* Elements of our a_scale and b_scale for a problem [m, n, k] (the header's
 * shapes; block: ceil(K/128) per row of A, per 128 rows of B). */
void scale_counts(jg_scale_mode mode, int64_t m, int64_t n, int64_t k, size_t *na,
                  size_t *nb)
{
    size_t kb = (size_t)((k + 127) / 128);
    *na = mode == JG_SCALE_TENSOR ? 1 : mode == JG_SCALE_ROW ? (size_t)m
          : mode == JG_SCALE_BLOCK ? (size_t)m * kb : 0;
    *nb = mode == JG_SCALE_TENSOR ? 1 : mode == JG_SCALE_ROW ? (size_t)n
          : mode == JG_SCALE_BLOCK ? (size_t)((n + 127) / 128) * kb : 0;
}

/* cuBLASLt's scale arrays, on the host (malloc'd, NULL if out of memory),
 * from ours (o->hsa [M][kb], o->hsb [N/128][kb] for block), in the layouts
 * its modes read (those of PyTorch's blockwise _scaled_mm, cuBLAS 12.9):
 *   tensor, row (OUTER_VEC_32F): ours as they are; its A's are our b_scale.
 *   block, its A (BLK128x128_32F over our B): [ceil(N/128)][L] row-major
 *     (K-blocks innermost), L = kb rounded up to 4 (rows 16-byte aligned;
 *     the padding is 0); for our shapes' K (multiples of 512) L = kb.
 *   block, its B (VEC128_32F over our A): outer-dimension-major, [kb][M]:
 *     our a_scale transposed. */
static void lt_scales_layout(const operands *o, const shape *s, float **la, size_t *nla,
                             float **lb, size_t *nlb)
{
    size_t na, nb, kb = (size_t)o->kb, l4 = (kb + 3) / 4 * 4, m = (size_t)s->m;
    scale_counts(o->scale, s->m, s->n, s->k, &na, &nb);
    *nla = o->scale == JG_SCALE_BLOCK ? nb / kb * l4 : nb;
    *nlb = na;
    *la = calloc(*nla, sizeof **la);
    *lb = malloc(*nlb * sizeof **lb);
    if (!*la || !*lb)
        return;
    if (o->scale != JG_SCALE_BLOCK) {
        memcpy(*la, o->hsb, nb * sizeof **la);
        memcpy(*lb, o->hsa, na * sizeof **lb);
        return;
    }
    for (size_t r = 0; r < nb / kb; ++r)
        memcpy(*la + r * l4, o->hsb + r * kb, kb * sizeof **la);
    for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < kb; ++j)
            (*lb)[j * m + i] = o->hsa[i * kb + j];
}

/* Allocates n floats on the device and copies `host` there. */
static bool upload_floats(float **dev, const float *host, size_t n)
{
    return !CUDA_FAILED(cudaMalloc((void **)dev, n * sizeof *host)) &&
           !CUDA_FAILED(cudaMemcpy(*dev, host, n * sizeof *host, cudaMemcpyHostToDevice));
}

/* The scales of an e4m3 problem in s->scale's shape, random in [0.5, 1.5)
 * (seeds seed + 2 and + 3), uploaded once: ours, cuBLASLt's in its layouts
 * (lt_scales_layout), and a pair of 1.0 for a cuBLASLt that lacks the
 * mode. Kept on the host for the FP64 check. */
bool scales_init(operands *o, const shape *s, uint64_t seed)
{
    static const float unit[2] = {1.0f, 1.0f};
    size_t na, nb, nla = 0, nlb = 0;
    float *la = NULL, *lb = NULL;
    o->scale = s->scale;
    o->kb = (s->k + 127) / 128;
    scale_counts(s->scale, s->m, s->n, s->k, &na, &nb);
    o->hsa = malloc(na * sizeof *o->hsa);
    o->hsb = malloc(nb * sizeof *o->hsb);
    if (o->hsa && o->hsb) {
        fill_scales(o->hsa, na, seed + 2);
        fill_scales(o->hsb, nb, seed + 3);
        lt_scales_layout(o, s, &la, &nla, &lb, &nlb);
    }
    bool ok = la && lb;
    if (!ok)
        fprintf(stderr, "jitgemm-bench: out of host memory for %s\n", s->name);
    ok = ok && upload_floats(&o->sa, o->hsa, na) && upload_floats(&o->sb, o->hsb, nb) &&
         upload_floats(&o->lt_sa, la, nla) && upload_floats(&o->lt_sb, lb, nlb) &&
         upload_floats(&o->unit, unit, 2) &&
         !CUDA_FAILED(cudaDeviceSynchronize()); /* pageable copies may still be in flight */
    free(la);
    free(lb);
    return ok;
}

/* The operands of one problem [m, n, k] of s's types: see operands_alloc
 * and, for e4m3, scales_init. */
bool operands_init(operands *o, const shape *s, int peers, uint64_t seed)
{
    return operands_alloc(o, s->name, (size_t)(s->m * s->k), (size_t)(s->n * s->k),
                          (size_t)(s->m * s->n), s->in, s->out, peers, seed) &&
           (s->in != JG_E4M3 || scales_init(o, s, seed));
}
