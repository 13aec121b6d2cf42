/* Problem validation: every rule checked before anything is compiled, each
 * failure a specific status and a message naming the field and the rule. */
#include <stdio.h>

#include "runtime/runtime.h"

#define JG_DIM_MAX 2147483647LL       /* tile indices and coordinates are int32 */
#define JG_TMA_STRIDE_MAX (1LL << 40) /* TMA global strides are < 2^40 bytes */

static bool is_16bit(jg_dtype t) { return t == JG_BF16 || t == JG_FP16; }
static bool is_known(jg_dtype t)
{
    return t == JG_BF16 || t == JG_FP16 || t == JG_FP32 || t == JG_E4M3 || t == JG_NVFP4;
}

/* FP8 operands come with scales, NVFP4 ones with theirs; 16-bit ones take none. */
static jg_status check_scale(jg_context *ctx, const jg_gemm_problem *p)
{
    if ((unsigned)p->scale > JG_SCALE_NVFP4)
        return jg__fail(ctx, JG_ERR_INVALID, "scale = %d: not a jg_scale_mode value",
                        (int)p->scale);
    if ((p->a_type == JG_NVFP4) != (p->scale == JG_SCALE_NVFP4))
        return jg__fail(ctx, JG_ERR_INVALID,
                        p->a_type == JG_NVFP4
                            ? "scale = %d with a_type %s: NVFP4 operands take problem.scale "
                              "JG_SCALE_NVFP4 (block scales in args.a_sf, args.b_sf)"
                            : "scale = %d (JG_SCALE_NVFP4) with a_type %s: for nvfp4 operands only",
                        (int)p->scale, jg__dtype_name(p->a_type));
    if (p->a_type == JG_NVFP4)
        return JG_OK;
    if (p->a_type != JG_E4M3) {
        if (p->scale != JG_SCALE_NONE)
            return jg__fail(ctx, JG_ERR_INVALID,
                            "scale = %d with a_type %s: scales apply to e4m3 operands only",
                            (int)p->scale, jg__dtype_name(p->a_type));
        return JG_OK;
    }
    if (p->scale == JG_SCALE_NONE)
        return jg__fail(ctx, JG_ERR_INVALID,
                        "a_type e4m3 needs problem.scale (JG_SCALE_TENSOR) and args.a_scale, "
                        "args.b_scale");
    return JG_OK;
}

jg_status jg__check_dim(jg_context *ctx, const char *name, int64_t v)
{
    if (v < 1)
        return jg__fail(ctx, JG_ERR_INVALID, "%s = %lld: must be >= 1", name, (long long)v);
    if (v > JG_DIM_MAX)
        return jg__fail(ctx, JG_ERR_TOO_LARGE, "%s = %lld: must be <= 2^31-1", name, (long long)v);
    return JG_OK;
}

/* A leading dimension: 0 (packed: `min`), else >= min; its byte stride
 * below 2^40 (TMA's limit for global strides), and with `tma` (operands
 * that only TMA moves: NVFP4's) a multiple of 16. */
static jg_status check_ld(jg_context *ctx, const char *name, int64_t ld, int64_t min,
                          const char *min_name, jg_dtype t, bool tma)
{
    int64_t eff = ld ? ld : min;
    const int64_t bits = (int64_t)jg__dtype_bits(t);
    /* Clamped: eff * bits must not overflow (a huge ld is TOO_LARGE below). */
    int64_t stride_bits = eff < 0 || eff > JG_TMA_STRIDE_MAX ? 8 * JG_TMA_STRIDE_MAX : eff * bits;
    int64_t bytes = stride_bits / 8;
    if (ld < 0 || (ld && ld < min))
        return jg__fail(ctx, JG_ERR_INVALID, "%s = %lld: must be 0 (packed) or >= %s (%lld)", name,
                        (long long)ld, min_name, (long long)min);
    if (tma && stride_bits % 128)
        return jg__fail(ctx, JG_ERR_INVALID,
                        "%s = %lld%s: rows of %s are %lld%s bytes apart; nvfp4 problems move "
                        "their operands only by TMA, which needs a multiple of 16 (a multiple "
                        "of %d elements)",
                        name, (long long)eff, ld ? "" : " (packed)", jg__dtype_name(t),
                        (long long)bytes, stride_bits % 8 ? ".5" : "", (int)(128 / bits));
    if (bytes >= JG_TMA_STRIDE_MAX)
        return jg__fail(ctx, JG_ERR_TOO_LARGE, "%s = %lld: a row stride of 2^40 bytes or more",
                        name, (long long)eff);
    return JG_OK;
}

static jg_status check_types(jg_context *ctx, const jg_gemm_problem *p)
{
    if (p->a_type == JG_DTYPE_NONE || p->b_type == JG_DTYPE_NONE || p->d_type == JG_DTYPE_NONE)
        return jg__fail(ctx, JG_ERR_INVALID, "%s is not set (JG_DTYPE_NONE)",
                        p->a_type == JG_DTYPE_NONE   ? "a_type"
                        : p->b_type == JG_DTYPE_NONE ? "b_type"
                                                     : "d_type");
    const struct {
        const char *name;
        jg_dtype value;
    } fields[] = {
        {"a_type", p->a_type}, {"b_type", p->b_type}, {"c_type", p->c_type}, {"d_type", p->d_type}};
    for (size_t i = 0; i < JG_ARRAY_LEN(fields); ++i)
        if (fields[i].value != JG_DTYPE_NONE && !is_known(fields[i].value))
            return jg__fail(ctx, JG_ERR_INVALID, "%s = %d: not a jg_dtype value", fields[i].name,
                            (int)fields[i].value);
    /* (every known type is an operand type: bf16, fp16, fp32, e4m3, nvfp4) */
    if (p->b_type != p->a_type)
        return jg__fail(ctx, JG_ERR_UNSUPPORTED, "b_type %s differs from a_type %s",
                        jg__dtype_name(p->b_type), jg__dtype_name(p->a_type));
    if (p->d_type == JG_E4M3 || p->d_type == JG_NVFP4)
        return jg__fail(ctx, JG_ERR_UNSUPPORTED, "d_type %s: D must be bf16, fp16 or fp32",
                        jg__dtype_name(p->d_type));
    if (p->c_type != JG_DTYPE_NONE && p->c_type != p->d_type)
        return jg__fail(ctx, JG_ERR_UNSUPPORTED, "c_type %s differs from d_type %s",
                        jg__dtype_name(p->c_type), jg__dtype_name(p->d_type));
    return check_scale(ctx, p);
}

/* The flags that say how operands lie: MN-major ones for 16-bit types
 * only (wgmma transposes no other), the exact FP32 mode for FP32 only,
 * unaligned pointers not with NVFP4 (its kernels load only by TMA). */
static jg_status check_layout_flags(jg_context *ctx, const jg_gemm_problem *p)
{
    const struct {
        uint32_t flag;
        const char *name, *operand;
    } majors[] = {{JG_GEMM_A_M_MAJOR, "JG_GEMM_A_M_MAJOR", "A"},
                  {JG_GEMM_B_N_MAJOR, "JG_GEMM_B_N_MAJOR", "B"}};
    for (size_t i = 0; i < JG_ARRAY_LEN(majors); ++i)
        if ((p->flags & majors[i].flag) && !is_16bit(p->a_type))
            return jg__fail(ctx, JG_ERR_UNSUPPORTED,
                            "%s with %s operands: Hopper's wgmma reads e4m3, tf32 (fp32) and "
                            "nvfp4 operands K-major only; give %s K-major (row-major [%s, K])",
                            majors[i].name, jg__dtype_name(p->a_type), majors[i].operand,
                            i ? "N" : "M");
    if ((p->flags & JG_GEMM_FP32_EXACT) && p->a_type != JG_FP32)
        return jg__fail(ctx, JG_ERR_INVALID,
                        "JG_GEMM_FP32_EXACT with %s operands: for fp32 A and B only",
                        jg__dtype_name(p->a_type));
    if ((p->flags & JG_GEMM_UNALIGNED) && p->a_type == JG_NVFP4)
        return jg__fail(ctx, JG_ERR_UNSUPPORTED,
                        "JG_GEMM_UNALIGNED with nvfp4 operands: their kernels load only by TMA "
                        "(16-byte aligned pointers and rows)");
    return JG_OK;
}

/* The rules of a grouped problem: the dense rules for what the groups share
 * (checked on a stand-in dense problem), then the groups themselves. */
jg_status jg__validate_grouped(jg_context *ctx, const jg_grouped_problem *p)
{
    if (!p)
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "problem is NULL");
    const uint32_t known = JG_GROUPED_WORKSPACE | JG_GROUPED_B_N_MAJOR | JG_GROUPED_UNALIGNED;
    if (p->flags & ~known)
        return jg__fail(ctx, JG_ERR_INVALID, "flags 0x%x: unknown bits 0x%x", p->flags,
                        p->flags & ~known);
    if (p->layout < JG_GROUPED_LIST || p->layout > JG_GROUPED_MASKED)
        return jg__fail(ctx, JG_ERR_INVALID, "layout %d: not a jg_grouped_layout", (int)p->layout);
    const bool list = p->layout == JG_GROUPED_LIST;
    const int max_groups = list ? JG_GROUPED_MAX_GROUPS : JG_GROUPED_MAX_DEVICE_GROUPS;
    if (p->groups < 1)
        return jg__fail(ctx, JG_ERR_INVALID, "groups = %d: must be >= 1", (int)p->groups);
    if (p->groups > max_groups)
        return jg__fail(ctx, JG_ERR_TOO_LARGE, "groups = %d: at most %d in this layout",
                        (int)p->groups, max_groups);
    if (list && !p->m)
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "problem.m (the rows of each group) is NULL");
    if (!list) {
        jg_status st = jg__check_dim(ctx, "m_max", p->m_max);
        if (st != JG_OK)
            return st;
        if (p->layout == JG_GROUPED_MASKED && p->groups * p->m_max > JG_DIM_MAX)
            return jg__fail(ctx, JG_ERR_TOO_LARGE,
                            "groups * m_max = %lld rows of A: must be <= 2^31-1",
                            (long long)(p->groups * p->m_max));
    }
    for (int32_t g = 0; p->m && g < p->groups; ++g) {
        if (p->m[g] < 0)
            return jg__fail(ctx, JG_ERR_INVALID, "m[%d] = %lld: must be >= 0", (int)g,
                            (long long)p->m[g]);
        if (p->m[g] > JG_DIM_MAX)
            return jg__fail(ctx, JG_ERR_TOO_LARGE, "m[%d] = %lld: must be <= 2^31-1", (int)g,
                            (long long)p->m[g]);
    }
    const bool fp4 = p->a_type == JG_NVFP4 || p->b_type == JG_NVFP4;
    if (fp4 && list && p->groups > JG_GROUPED_MAX_NVFP4_GROUPS)
        return jg__fail(ctx, JG_ERR_TOO_LARGE,
                        "groups = %d: at most %d with nvfp4 operands in the list layout (each "
                        "group's scale maps fill the kernel's parameter block)",
                        (int)p->groups, JG_GROUPED_MAX_NVFP4_GROUPS);
    if (fp4 && p->layout == JG_GROUPED_CONTIGUOUS && p->a_sf_layout == JG_SF_SWIZZLED_128X4)
        return jg__fail(ctx, JG_ERR_UNSUPPORTED,
                        "a_sf_layout JG_SF_SWIZZLED_128X4 in the contiguous layout: a group's "
                        "first row is known only on the device, so A's scales must be "
                        "JG_SF_ROW_MAJOR");
    if ((p->flags & JG_GROUPED_B_N_MAJOR) && p->layout != JG_GROUPED_LIST)
        return jg__fail(ctx, JG_ERR_UNSUPPORTED,
                        "JG_GROUPED_B_N_MAJOR in the %s layout: its B_g are stacked by rows of "
                        "K; N-major B takes the list layout",
                        p->layout == JG_GROUPED_CONTIGUOUS ? "contiguous" : "masked");
    jg_gemm_problem shared = {.flags = p->flags & (JG_GROUPED_B_N_MAJOR | JG_GROUPED_UNALIGNED),
                              .a_type = p->a_type,
                              .b_type = p->b_type,
                              .c_type = p->c_type,
                              .d_type = p->d_type,
                              .m = 1,
                              .n = p->n,
                              .k = p->k,
                              .lda = p->lda,
                              .ldb = p->ldb,
                              .ldc = p->ldc,
                              .ldd = p->ldd,
                              .scale = p->scale,
                              .a_sf_layout = fp4 ? p->a_sf_layout : JG_SF_LAYOUT_NONE,
                              .b_sf_layout = fp4 ? p->b_sf_layout : JG_SF_LAYOUT_NONE};
    return jg__validate_gemm(ctx, &shared);
}

/* NVFP4: k in whole scale blocks, the scale layouts named, and with
 * row-major scales rows of scales that TMA can step over. */
static jg_status check_nvfp4(jg_context *ctx, const jg_gemm_problem *p)
{
    if (p->k % 16)
        return jg__fail(ctx, JG_ERR_INVALID,
                        "k = %lld: nvfp4 operands have one e4m3 scale per 16 elements of K, so k "
                        "must be a multiple of 16",
                        (long long)p->k);
    const struct {
        const char *name;
        jg_sf_layout value;
    } layouts[] = {{"a_sf_layout", p->a_sf_layout}, {"b_sf_layout", p->b_sf_layout}};
    for (size_t i = 0; i < JG_ARRAY_LEN(layouts); ++i) {
        const int v = (int)layouts[i].value;
        if (v != JG_SF_ROW_MAJOR && v != JG_SF_SWIZZLED_128X4)
            return jg__fail(ctx, JG_ERR_INVALID,
                            "%s = %d%s: nvfp4 operands take JG_SF_ROW_MAJOR (1) or "
                            "JG_SF_SWIZZLED_128X4 (2)",
                            layouts[i].name, v,
                            v == JG_SF_LAYOUT_NONE ? " (JG_SF_LAYOUT_NONE)"
                                                   : ": not a jg_sf_layout value");
        if (v == JG_SF_ROW_MAJOR && p->k % 256)
            return jg__fail(ctx, JG_ERR_INVALID,
                            "k = %lld with %s JG_SF_ROW_MAJOR: rows of scales are k/16 = %lld "
                            "bytes apart, TMA needs a multiple of 16 (k a multiple of 256); "
                            "JG_SF_SWIZZLED_128X4 takes any k",
                            (long long)p->k, layouts[i].name, (long long)(p->k / 16));
    }
    return JG_OK;
}

/* A's and B's arrays of one kind of scale (names[0], names[1]): present,
 * `align`-byte aligned; `what` says which problems need them. */
static jg_status check_scale_pair(jg_context *ctx, const char *const names[2],
                                  const void *const ptrs[2], uintptr_t align, const char *what)
{
    for (int i = 0; i < 2; ++i) {
        if (!ptrs[i])
            return jg__fail(ctx, JG_ERR_NULL_POINTER, "args.%s is NULL: %s", names[i], what);
        if ((uintptr_t)ptrs[i] % align)
            return jg__fail(ctx, JG_ERR_MISALIGNED, "args.%s = %p is not %d-byte aligned",
                            names[i], ptrs[i], (int)align);
    }
    return JG_OK;
}

jg_status jg__check_sf(jg_context *ctx, const void *a_sf, const void *b_sf)
{
    static const char *const names[2] = {"a_sf", "b_sf"};
    const void *const ptrs[2] = {a_sf, b_sf};
    return check_scale_pair(ctx, names, ptrs, 16, "an nvfp4 problem needs its block scales");
}

jg_status jg__check_scales(jg_context *ctx, const float *a_scale, const float *b_scale)
{
    static const char *const names[2] = {"a_scale", "b_scale"};
    const void *const ptrs[2] = {a_scale, b_scale};
    return check_scale_pair(ctx, names, ptrs, 4, "a scaled (FP8, NVFP4) problem needs its scales");
}

jg_status jg__validate_gemm(jg_context *ctx, const jg_gemm_problem *p)
{
    jg_status st;
    if (!p)
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "problem is NULL");
    const uint32_t known = JG_GEMM_M_GENERIC | JG_GEMM_PDL | JG_GEMM_A_M_MAJOR |
                           JG_GEMM_B_N_MAJOR | JG_GEMM_UNALIGNED | JG_GEMM_FP32_EXACT;
    if (p->flags & ~known)
        return jg__fail(ctx, JG_ERR_INVALID, "flags 0x%x: unknown bits 0x%x", p->flags,
                        p->flags & ~known);
    if ((st = check_types(ctx, p)) != JG_OK || (st = check_layout_flags(ctx, p)) != JG_OK)
        return st;
    if ((st = jg__check_dim(ctx, "m", p->m)) != JG_OK ||
        (st = jg__check_dim(ctx, "n", p->n)) != JG_OK ||
        (st = jg__check_dim(ctx, "k", p->k)) != JG_OK)
        return st;
    if (p->a_type == JG_NVFP4 && (st = check_nvfp4(ctx, p)) != JG_OK)
        return st;
    const bool tma = p->a_type == JG_NVFP4, a_m = p->flags & JG_GEMM_A_M_MAJOR,
               b_n = p->flags & JG_GEMM_B_N_MAJOR;
    if ((st = check_ld(ctx, "lda", p->lda, a_m ? p->m : p->k, a_m ? "m (M-major A)" : "k",
                       p->a_type, tma)) != JG_OK ||
        (st = check_ld(ctx, "ldb", p->ldb, b_n ? p->n : p->k, b_n ? "n (N-major B)" : "k",
                       p->b_type, tma)) != JG_OK ||
        (st = check_ld(ctx, "ldd", p->ldd, p->n, "n", p->d_type, tma)) != JG_OK)
        return st;
    if (p->c_type != JG_DTYPE_NONE &&
        (st = check_ld(ctx, "ldc", p->ldc, p->n, "n", p->c_type, tma)))
        return st;
    return JG_OK;
}
