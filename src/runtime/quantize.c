/* BF16/FP16 -> e4m3 quantization (jg_quantize_e4m3): validation, the kernel
 * through the JIT pipeline (kind JG_KIND_QUANT keys), and its launches. */
#include <string.h>

#include "runtime/runtime.h"

#define QUANT_THREADS 256u /* JG_Q_THREADS of sm90_quant_common.cuh */

static jg_status validate(jg_context *ctx, const jg_quant_problem *p, const jg_quant_args *a)
{
    if (!p || !a)
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "%s is NULL", p ? "args" : "problem");
    if (p->src_type != JG_BF16 && p->src_type != JG_FP16)
        return jg__fail(ctx, JG_ERR_UNSUPPORTED, "src_type %d: bf16 or fp16 only",
                        (int)p->src_type);
    if (p->scale < JG_SCALE_TENSOR || p->scale > JG_SCALE_BLOCK)
        return jg__fail(ctx, JG_ERR_INVALID, "scale = %d: JG_SCALE_TENSOR, _ROW or _BLOCK",
                        (int)p->scale);
    if (p->scale == JG_SCALE_BLOCK ? p->block_rows != 1 && p->block_rows != 128
                                   : p->block_rows != 0)
        return jg__fail(ctx, JG_ERR_INVALID,
                        "block_rows = %d: 1 or 128 with JG_SCALE_BLOCK, "
                        "0 otherwise",
                        (int)p->block_rows);
    jg_status st;
    if ((st = jg__check_dim(ctx, "rows", p->rows)) || (st = jg__check_dim(ctx, "cols", p->cols)))
        return st;
    if (p->ld_src < 0 || (p->ld_src && p->ld_src < p->cols) || p->ld_dst < 0 ||
        (p->ld_dst && p->ld_dst < p->cols))
        return jg__fail(ctx, JG_ERR_INVALID,
                        "ld_src = %lld, ld_dst = %lld: 0 (packed) or >= "
                        "cols (%lld)",
                        (long long)p->ld_src, (long long)p->ld_dst, (long long)p->cols);
    if (!a->src || !a->dst || !a->scale)
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "args.%s is NULL",
                        !a->src   ? "src"
                        : !a->dst ? "dst"
                                  : "scale");
    if ((uintptr_t)a->src % 2 || (uintptr_t)a->scale % 4)
        return jg__fail(ctx, JG_ERR_MISALIGNED, "args.%s = %p is not %d-byte aligned",
                        (uintptr_t)a->src % 2 ? "src" : "scale",
                        (uintptr_t)a->src % 2 ? a->src : (const void *)a->scale,
                        (uintptr_t)a->src % 2 ? 2 : 4);
    return JG_OK;
}

static jg_status launch(jg_context *ctx, const jg__kernel *k, uint32_t grid, jg_quant_kargs *ka,
                        jg_stream stream)
{
    return jg__launch_kernel(ctx, k, grid, QUANT_THREADS, 1, ka, stream);
}

/* A grid of `units` threads' work, each thread looping when capped at 8
 * CTAs per SM (enough to fill the GPU). */
uint32_t jg__quant_grid(const jg_context *ctx, uint64_t units)
{
    const uint64_t grid = jg__ceil_div(units, QUANT_THREADS);
    const uint64_t cap = (uint64_t)ctx->target.sm_count * 8;
    return (uint32_t)(grid < cap ? grid : cap);
}

jg_status jg__quant_phases(jg_context *ctx, const jg__kernel *k, jg_quant_kargs *ka,
                           uint64_t elements, uint32_t quantize_grid, jg_stream stream)
{
    CUresult r =
        ctx->cu->cuMemsetD32Async((CUdeviceptr)(uintptr_t)ka->scale, 0, 1, (CUstream)stream);
    if (r != CUDA_SUCCESS)
        return jg__fail_cu(ctx, "cuMemsetD32Async", r);
    const uint32_t grids[3] = {jg__quant_grid(ctx, elements),
                               quantize_grid, 1};
    for (int32_t phase = 0; phase < 3; ++phase) {
        ka->phase = phase;
        jg_status st = launch(ctx, k, grids[phase], ka, stream);
        if (st != JG_OK)
            return st;
    }
    return JG_OK;
}

jg_status jg__quant_prepare(jg_context *ctx, const jg__gemm_key *key, const jg_quant_problem *p,
                            const jg_quant_args *a, void *sf, jg__kernel **k, jg_quant_kargs *ka)
{
    jg_status st = jg__kernel_get(ctx, key, k);
    if (st != JG_OK)
        return st;
    if (ctx->offline) {
        jg__kernel_release(*k);
        jg__cache_trim(ctx);
        return jg__fail(ctx, JG_ERR_OFFLINE, "the context is offline (%s): it cannot launch",
                        ctx->arch);
    }
    memset(ka, 0, sizeof *ka);
    ka->src = a->src;
    ka->ld_src = p->ld_src ? p->ld_src : p->cols;
    ka->dst = a->dst;
    ka->ld_dst = p->ld_dst ? p->ld_dst : p->cols;
    ka->scale = a->scale;
    ka->rows = p->rows;
    ka->sf = sf;
    return JG_OK;
}

/* The launches of a quantization by the mode's grid. */
static jg_status launch_mode(jg_context *ctx, const jg__kernel *k, const jg_quant_problem *problem,
                             jg_quant_kargs *ka, jg_stream stream)
{
    const uint64_t rows = (uint64_t)problem->rows, cols = (uint64_t)problem->cols;
    const uint32_t warps = QUANT_THREADS / 32;
    if (problem->scale == JG_SCALE_ROW)
        return launch(ctx, k, (uint32_t)jg__ceil_div(rows, warps), ka, stream);
    if (problem->scale == JG_SCALE_BLOCK && problem->block_rows == 1)
        return launch(ctx, k, (uint32_t)jg__ceil_div(rows * jg__ceil_div(cols, 128), warps), ka,
                      stream);
    if (problem->scale == JG_SCALE_BLOCK)
        return launch(ctx, k, (uint32_t)(jg__ceil_div(rows, 128) * jg__ceil_div(cols, 128)), ka,
                      stream);
    /* Tensor: amax (into zeroed scale[0]), quantize, then the scale. */
    return jg__quant_phases(ctx, k, ka, rows * cols, jg__quant_grid(ctx, rows * cols), stream);
}

jg_status jg_quantize_e4m3(jg_context *ctx, const jg_quant_problem *problem,
                           const jg_quant_args *args, jg_stream stream)
{
    if (!ctx)
        return jg__fail(NULL, JG_ERR_NULL_POINTER, "ctx is NULL");
    jg_status st = validate(ctx, problem, args);
    if (st != JG_OK)
        return st;
    jg__gemm_key key;
    jg__quant_e4m3_key_make(problem, &key);
    jg__kernel *k;
    jg_quant_kargs ka;
    if ((st = jg__quant_prepare(ctx, &key, problem, args, NULL, &k, &ka)) != JG_OK)
        return st;
    st = launch_mode(ctx, k, problem, &ka, stream);
    jg__oneshot_done(ctx, &k, 1, k->entry, &k->kept, stream, st);
    return st;
}
