/* Shape-spec lines as library problems (spec_problem.h). */
#include "spec_problem.h"

/* Grouped lines have kernels in every layout (no layout: the seeds' list
 * format), with one n and one k. */
const char *spec_unsupported(const struct spec *s)
{
    if (s->kind == SPEC_GROUPED) {
        bool list = s->layout == SPEC_LAYOUT_NONE || s->layout == SPEC_LAYOUT_LIST;
        if (s->g > (list ? JG_GROUPED_MAX_GROUPS : JG_GROUPED_MAX_DEVICE_GROUPS))
            return list ? "more groups than the list layout bakes in (64)"
                        : "more groups than the contiguous and masked layouts hold (256)";
        if (list && s->dtype == SPEC_NVFP4 && s->g > JG_GROUPED_MAX_NVFP4_GROUPS)
            return "more nvfp4 groups than the list layout bakes in (40)";
        for (int g = 1; g < s->g; ++g)
            if (s->n[g] != s->n[0] || s->k[g] != s->k[0])
                return "groups with different n or k are not supported";
    }
    if (s->dtype == SPEC_NVFP4 && s->scale != SPEC_SCALE_BLOCK)
        return "nvfp4 takes scale block (e4m3 per 16 of K, an FP32 global scale)";
    if (s->dtype == SPEC_NVFP4 && s->unaligned)
        return "nvfp4 operands are loaded by TMA only (16-byte aligned pointers)";
    if (s->kind == SPEC_GROUPED && s->b_mn && s->layout != SPEC_LAYOUT_NONE &&
        s->layout != SPEC_LAYOUT_LIST)
        return "N-major B takes the list layout only";
    return NULL;
}

jg_gemm_problem spec_problem(const struct spec *s, jg_dtype out_dtype, uint32_t flags)
{
    const bool fp32 = s->dtype == SPEC_FP32 || s->dtype == SPEC_FP32_EXACT;
    const jg_dtype in = s->dtype == SPEC_FP16    ? JG_FP16
                        : s->dtype == SPEC_FP8   ? JG_E4M3
                        : s->dtype == SPEC_NVFP4 ? JG_NVFP4
                        : fp32                   ? JG_FP32
                                                 : JG_BF16;
    /* FP8 and NVFP4 write BF16 unless --out-dtype says otherwise. */
    const jg_dtype out =
        out_dtype ? out_dtype : in == JG_E4M3 || in == JG_NVFP4 ? JG_BF16 : in;
    static const jg_scale_mode scales[] = {
        [SPEC_SCALE_NONE] = JG_SCALE_NONE, [SPEC_SCALE_TENSOR] = JG_SCALE_TENSOR,
        [SPEC_SCALE_ROW] = JG_SCALE_ROW, [SPEC_SCALE_BLOCK] = JG_SCALE_BLOCK};
    jg_gemm_problem p = {.a_type = in, .b_type = in, .d_type = out,
                         .m = s->m[0], .n = s->n[0], .k = s->k[0],
                         .lda = s->lda, .ldb = s->ldb, .ldd = s->ldd,
                         .scale = in == JG_E4M3 ? scales[s->scale] : JG_SCALE_NONE};
    if (in == JG_NVFP4) {
        p.scale = JG_SCALE_NVFP4;
        p.a_sf_layout = p.b_sf_layout =
            s->sf == SPEC_SF_ROW ? JG_SF_ROW_MAJOR : JG_SF_SWIZZLED_128X4;
    }
    p.flags = flags;
    if (s->a_mn)
        p.flags |= JG_GEMM_A_M_MAJOR;
    if (s->b_mn)
        p.flags |= JG_GEMM_B_N_MAJOR;
    if (s->unaligned)
        p.flags |= JG_GEMM_UNALIGNED;
    if (s->dtype == SPEC_FP32_EXACT)
        p.flags |= JG_GEMM_FP32_EXACT;
    return p;
}

/* List layout: the rows are baked in. Contiguous: the rows are what the
 * tiles are sized for and their sum is m_max; masked: m_max from the line. */
jg_grouped_problem spec_grouped(const jg_gemm_problem *dense, const struct spec *s, int64_t *m)
{
    int64_t total = 0;
    for (int g = 0; g < s->g; ++g) {
        total += s->m[g];
        if (g < JG_GROUPED_MAX_GROUPS)
            m[g] = s->m[g];
    }
    jg_grouped_problem p = {.layout = JG_GROUPED_LIST, .a_type = dense->a_type,
                            .b_type = dense->b_type, .d_type = dense->d_type,
                            .groups = s->g, .m = m, .n = s->n[0], .k = s->k[0],
                            .scale = dense->scale, .a_sf_layout = dense->a_sf_layout,
                            .b_sf_layout = dense->b_sf_layout,
                            .flags = (s->workspace ? JG_GROUPED_WORKSPACE : 0u) |
                                     (s->b_mn ? JG_GROUPED_B_N_MAJOR : 0u) |
                                     (s->unaligned ? JG_GROUPED_UNALIGNED : 0u)};
    if (s->layout == SPEC_LAYOUT_CONTIGUOUS || s->layout == SPEC_LAYOUT_MASKED) {
        p.layout = s->layout == SPEC_LAYOUT_MASKED ? JG_GROUPED_MASKED : JG_GROUPED_CONTIGUOUS;
        p.m = NULL; /* more groups than m holds: tiles sized from m_max */
        p.m_max = s->layout == SPEC_LAYOUT_MASKED ? s->m_max : total;
        if (p.layout == JG_GROUPED_CONTIGUOUS && p.a_type == JG_NVFP4)
            p.a_sf_layout = JG_SF_ROW_MAJOR; /* the only one it takes */
        if (s->g <= JG_GROUPED_MAX_GROUPS)
            p.m = m;
    }
    return p;
}
