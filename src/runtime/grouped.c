/* Grouped GEMM entry points (list layout): plan and run. */
#include <stdio.h>

#include "runtime/runtime.h"

jg_status jg_grouped_plan(jg_context *ctx, const jg_grouped_problem *problem, jg_plan **out)
{
    if (out)
        *out = NULL;
    if (!ctx || !out)
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "%s is NULL", ctx ? "out" : "ctx");
    jg_status st = jg__validate_grouped(ctx, problem);
    if (st != JG_OK)
        return st;
    jg__problem_key pk;
    jg__grouped_key_make(problem, &pk);
    return jg__plan_get(ctx, &pk, out);
}

jg_status jg_grouped_kernel_id(jg_context *ctx, const jg_grouped_problem *problem,
                               jg_kernel_id *out)
{
    return jg__kernel_id(ctx, problem, true, out);
}

/* One pointer array: present, and each used pointer non-NULL and `align`-byte
 * aligned (groups without rows are not read). */
static jg_status check_array(jg_context *ctx, const jg__problem_key *p, const char *name,
                             const void *const *ptrs, uintptr_t align)
{
    if (!ptrs)
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "args.%s is NULL", name);
    for (uint32_t g = 0; g < p->groups; ++g) {
        if (!p->group_m[g])
            continue;
        if (!ptrs[g])
            return jg__fail(ctx, JG_ERR_NULL_POINTER, "args.%s[%u] is NULL", name, g);
        if ((uintptr_t)ptrs[g] % align)
            return jg__fail(ctx, JG_ERR_MISALIGNED, "args.%s[%u] = %p is not %u-byte aligned",
                            name, g, ptrs[g], (unsigned)align);
    }
    return JG_OK;
}

static jg_status check_list_args(jg_context *ctx, const jg__problem_key *p,
                                 const jg_grouped_args *args)
{
    jg_status st;
    if ((st = check_array(ctx, p, "a", args->a, 16)) ||
        (st = check_array(ctx, p, "b", args->b, 16)) ||
        (st = check_array(ctx, p, "d", (const void *const *)args->d, 16)) ||
        (p->scale != JG_SCALE_NONE &&
         ((st = check_array(ctx, p, "a_scales", (const void *const *)args->a_scales, 4)) ||
          (st = check_array(ctx, p, "b_scales", (const void *const *)args->b_scales, 4)))))
        return st;
    if (p->c_type != JG_DTYPE_NONE && (st = check_array(ctx, p, "c", args->c, 16)))
        return st;
    if (p->a_type == JG_NVFP4 && ((st = check_array(ctx, p, "a_sfs", args->a_sfs, 16)) ||
                                  (st = check_array(ctx, p, "b_sfs", args->b_sfs, 16))))
        return st;
    return JG_OK;
}

/* One tensor per operand (element 0 of each array), and the rows array. */
static jg_status check_device_args(jg_context *ctx, const jg__problem_key *p,
                                   const jg_grouped_args *args)
{
    const struct {
        const char *name;
        const void *const *ptrs;
    } ops[] = {{"a", args->a},
               {"b", args->b},
               {"d", (const void *const *)args->d},
               {"c", p->c_type != JG_DTYPE_NONE ? args->c : NULL}};
    for (size_t i = 0; i < JG_ARRAY_LEN(ops); ++i) {
        if (i == 3 && p->c_type == JG_DTYPE_NONE)
            break;
        if (!ops[i].ptrs || !ops[i].ptrs[0])
            return jg__fail(ctx, JG_ERR_NULL_POINTER, "args.%s[0] (the whole tensor) is NULL",
                            ops[i].name);
        if ((uintptr_t)ops[i].ptrs[0] % 16)
            return jg__fail(ctx, JG_ERR_MISALIGNED, "args.%s[0] = %p is not 16-byte aligned",
                            ops[i].name, ops[i].ptrs[0]);
    }
    if (!args->rows)
        return jg__fail(ctx, JG_ERR_NULL_POINTER,
                        "args.rows (the groups' rows, on the device) "
                        "is NULL");
    if ((uintptr_t)args->rows % 4)
        return jg__fail(ctx, JG_ERR_MISALIGNED, "args.rows = %p is not 4-byte aligned",
                        (const void *)args->rows);
    jg_status st = JG_OK;
    if (p->scale != JG_SCALE_NONE)
        st = jg__check_scales(ctx, args->a_scale, args->b_scale);
    if (st == JG_OK && p->a_type == JG_NVFP4)
        st = jg__check_sf(ctx, args->a_sf, args->b_sf);
    return st;
}

jg_status jg_grouped_run(jg_plan *plan, const jg_grouped_args *args, jg_stream stream)
{
    if (!plan)
        return jg__fail(NULL, JG_ERR_NULL_POINTER, "plan is NULL");
    jg_context *ctx = plan->ctx;
    const jg__problem_key *p = &plan->problem;
    if (!args)
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "args is NULL");
    if (!p->groups)
        return jg__fail(ctx, JG_ERR_INVALID, "a dense plan: launch it with jg_gemm_run");
    jg_status st = p->layout == JG_GROUPED_LIST ? check_list_args(ctx, p, args)
                                                : check_device_args(ctx, p, args);
    if (st != JG_OK)
        return st;
    if (plan->workspace_bytes) { /* only plans of problems with JG_GROUPED_WORKSPACE */
        if (!args->workspace)
            return jg__fail(ctx, JG_ERR_NULL_POINTER,
                            "args.workspace is NULL: this plan needs %llu bytes "
                            "(jg_plan_workspace_bytes)",
                            (unsigned long long)plan->workspace_bytes);
        if ((uintptr_t)args->workspace % 16)
            return jg__fail(ctx, JG_ERR_MISALIGNED, "args.workspace = %p is not 16-byte aligned",
                            args->workspace);
        if (args->workspace_bytes < plan->workspace_bytes)
            return jg__fail(ctx, JG_ERR_INVALID,
                            "args.workspace_bytes = %zu: this plan needs %llu "
                            "(jg_plan_workspace_bytes)",
                            args->workspace_bytes, (unsigned long long)plan->workspace_bytes);
    }
    if (ctx->offline)
        return jg__fail(ctx, JG_ERR_OFFLINE, "the context is offline (%s): it cannot launch",
                        ctx->arch);
    return p->layout == JG_GROUPED_LIST ? jg__grouped_launch(plan, args, stream)
                                        : jg__device_grouped_launch(plan, args, stream);
}

jg_status jg_grouped(jg_context *ctx, const jg_grouped_problem *problem,
                     const jg_grouped_args *args, jg_stream stream)
{
    if (ctx && !args) /* before planning: a bad call compiles nothing */
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "args is NULL");
    jg_plan *plan;
    jg_status st = jg_grouped_plan(ctx, problem, &plan);
    if (st != JG_OK)
        return st;
    st = jg_grouped_run(plan, args, stream);
    jg__oneshot_done(ctx, plan->kernel, plan->entry, &plan->kept, stream, st);
    return st;
}
