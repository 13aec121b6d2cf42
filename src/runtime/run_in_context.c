/* Launches with the plan's CUDA context current (jg_gemm_run_in_context,
 * jg_grouped_run_in_context): for callers that cannot know which context is
 * current on the calling thread, one call where they would otherwise ask
 * the driver themselves before each launch. */
#include <stdbool.h>

#include "runtime/runtime.h"

/* Makes ctx's CUDA context current where it is not (another current, or
 * none): *pushed then true, and the caller pops it after the launch.
 * Offline contexts have none: JG_OK, nothing pushed (the run's checks then
 * report JG_ERR_OFFLINE). */
static jg_status enter(jg_context *ctx, bool *pushed)
{
    *pushed = false;
    if (ctx->offline)
        return JG_OK;
    CUcontext current = NULL;
    CUresult r = ctx->cu->cuCtxGetCurrent(&current);
    if (r != CUDA_SUCCESS)
        return jg__fail_cu(ctx, "cuCtxGetCurrent", r);
    if (current == ctx->cu_ctx)
        return JG_OK;
    if ((r = ctx->cu->cuCtxPushCurrent(ctx->cu_ctx)) != CUDA_SUCCESS)
        return jg__fail_cu(ctx, "cuCtxPushCurrent", r);
    *pushed = true;
    return JG_OK;
}

/* jg_gemm_run (args a jg_gemm_args) or, grouped, jg_grouped_run (args a
 * jg_grouped_args) between enter and its pop. */
static jg_status run(jg_plan *plan, const void *args, bool grouped, jg_stream stream)
{
    if (!plan)
        return jg__fail(NULL, JG_ERR_NULL_POINTER, "plan is NULL");
    bool pushed;
    jg_status st = enter(plan->ctx, &pushed);
    if (st != JG_OK)
        return st;
    st = grouped ? jg_grouped_run(plan, args, stream) : jg_gemm_run(plan, args, stream);
    if (pushed) {
        CUcontext popped;
        plan->ctx->cu->cuCtxPopCurrent(&popped);
    }
    return st;
}

jg_status jg_gemm_run_in_context(jg_plan *plan, const jg_gemm_args *args, jg_stream stream)
{
    return run(plan, args, false, stream);
}

jg_status jg_grouped_run_in_context(jg_plan *plan, const jg_grouped_args *args, jg_stream stream)
{
    return run(plan, args, true, stream);
}
