/* NVFP4: the scale-factor layouts (jg_nvfp4_sf_offset, jg_nvfp4_sf_bytes)
 * and BF16/FP16 -> NVFP4 quantization (jg_quantize_nvfp4): validation, the
 * kernel through the JIT pipeline (JG_KIND_QUANT_NVFP4 keys), its launches. */
#include <string.h>

#include "runtime/runtime.h"

/* Rows and scales per row of a layout's array, padding included; false for
 * arguments outside the formulas' domain. */
static bool sf_extent(jg_sf_layout layout, int64_t rows, int64_t k, int64_t *rows_p,
                      int64_t *kbs_p)
{
    if (rows < 1 || k < 16 || k % 16 || rows > INT64_MAX / 2 / k)
        return false;
    const int64_t kbs = k / 16;
    if (layout == JG_SF_ROW_MAJOR) {
        *rows_p = rows;
        *kbs_p = kbs;
        return true;
    }
    if (layout != JG_SF_SWIZZLED_128X4)
        return false;
    *rows_p = (rows + 127) / 128 * 128;
    *kbs_p = (kbs + 3) / 4 * 4;
    return true;
}

int64_t jg_nvfp4_sf_bytes(jg_sf_layout layout, int64_t rows, int64_t k)
{
    int64_t rp, kbp;
    return sf_extent(layout, rows, k, &rp, &kbp) ? rp * kbp : -1;
}

int64_t jg_nvfp4_sf_offset(jg_sf_layout layout, int64_t rows, int64_t k, int64_t r, int64_t kb)
{
    int64_t rp, kbp;
    if (!sf_extent(layout, rows, k, &rp, &kbp) || r < 0 || r >= rows || kb < 0 || kb >= k / 16)
        return -1;
    if (layout == JG_SF_ROW_MAJOR)
        return r * kbp + kb;
    return ((r / 128) * (kbp / 4) + kb / 4) * 512 + (r % 32) * 16 + ((r / 32) % 4) * 4 + kb % 4;
}

/* The pointers of a call: present, and aligned as the kernel and the GEMM
 * that reads its output need. */
static jg_status check_args(jg_context *ctx, const jg_quant_args *a)
{
    const struct {
        const char *name;
        const void *p;
        uintptr_t align;
    } ptrs[] = {{"src", a->src, 2}, {"dst", a->dst, 16}, {"scale", a->scale, 4}, {"sf", a->sf, 16}};
    for (size_t i = 0; i < JG_ARRAY_LEN(ptrs); ++i)
        if (!ptrs[i].p)
            return jg__fail(ctx, JG_ERR_NULL_POINTER, "args.%s is NULL", ptrs[i].name);
    for (size_t i = 0; i < JG_ARRAY_LEN(ptrs); ++i)
        if ((uintptr_t)ptrs[i].p % ptrs[i].align)
            return jg__fail(ctx, JG_ERR_MISALIGNED, "args.%s = %p is not %d-byte aligned",
                            ptrs[i].name, ptrs[i].p, (int)ptrs[i].align);
    return JG_OK;
}

static jg_status validate(jg_context *ctx, const jg_quant_problem *p, const jg_quant_args *a)
{
    if (!p || !a)
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "%s is NULL", p ? "args" : "problem");
    if (p->src_type != JG_BF16 && p->src_type != JG_FP16)
        return jg__fail(ctx, JG_ERR_UNSUPPORTED, "src_type %d: bf16 or fp16 only",
                        (int)p->src_type);
    if (p->scale != JG_SCALE_NVFP4)
        return jg__fail(ctx, JG_ERR_INVALID,
                        "scale = %d: jg_quantize_nvfp4 takes JG_SCALE_NVFP4 (%d)", (int)p->scale,
                        (int)JG_SCALE_NVFP4);
    if (p->block_rows)
        return jg__fail(ctx, JG_ERR_INVALID, "block_rows = %d: 0 with JG_SCALE_NVFP4",
                        (int)p->block_rows);
    if (p->sf_layout != JG_SF_ROW_MAJOR && p->sf_layout != JG_SF_SWIZZLED_128X4)
        return jg__fail(ctx, JG_ERR_INVALID,
                        "sf_layout = %d: JG_SF_ROW_MAJOR (1) or JG_SF_SWIZZLED_128X4 (2)",
                        (int)p->sf_layout);
    jg_status st;
    if ((st = jg__check_dim(ctx, "rows", p->rows)) || (st = jg__check_dim(ctx, "cols", p->cols)))
        return st;
    if (p->cols % 16)
        return jg__fail(ctx, JG_ERR_INVALID,
                        "cols = %lld: one e4m3 scale per 16 elements, so a multiple of 16",
                        (long long)p->cols);
    if (p->ld_src < 0 || (p->ld_src && p->ld_src < p->cols))
        return jg__fail(ctx, JG_ERR_INVALID, "ld_src = %lld: 0 (packed) or >= cols (%lld)",
                        (long long)p->ld_src, (long long)p->cols);
    if (p->ld_dst < 0 || (p->ld_dst && (p->ld_dst < p->cols || p->ld_dst % 16)))
        return jg__fail(ctx, JG_ERR_INVALID,
                        "ld_dst = %lld: 0 (packed) or >= cols (%lld) and a multiple of 16 "
                        "(rows of codes 8-byte aligned)",
                        (long long)p->ld_dst, (long long)p->cols);
    return check_args(ctx, a);
}

jg_status jg_quantize_nvfp4(jg_context *ctx, const jg_quant_problem *problem,
                            const jg_quant_args *args, jg_stream stream)
{
    if (!ctx)
        return jg__fail(NULL, JG_ERR_NULL_POINTER, "ctx is NULL");
    jg_status st = validate(ctx, problem, args);
    if (st != JG_OK)
        return st;
    jg__gemm_key key;
    jg__quant_nvfp4_key_make(problem, &key);
    jg__kernel *k;
    jg_quant_kargs ka;
    if ((st = jg__quant_prepare(ctx, &key, problem, args, args->sf, &k, &ka)) != JG_OK)
        return st;
    /* Phase 1: one thread per byte of the scale array. */
    const uint64_t sf_bytes =
        (uint64_t)jg_nvfp4_sf_bytes(problem->sf_layout, problem->rows, problem->cols);
    st = jg__quant_phases(ctx, k, &ka, (uint64_t)problem->rows * (uint64_t)problem->cols,
                          jg__quant_grid(ctx, sf_bytes), stream);
    jg__oneshot_done(ctx, &k, 1, k->entry, &k->kept, stream, st);
    return st;
}
