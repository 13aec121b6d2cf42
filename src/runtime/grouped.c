/* Grouped GEMM entry points (list layout): plan and run. */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "runtime/runtime.h"

jg_status jg_grouped_plan(jg_context *ctx, const jg_grouped_problem *problem, jg_plan **out)
{
    if (out)
        *out = NULL;
    if (!ctx || !out)
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "%s is NULL", ctx ? "out" : "ctx");
    jg__problem_key pk;
    jg_status st = jg__grouped_problem_key(ctx, problem, &pk);
    return st != JG_OK ? st : jg__plan_get(ctx, &pk, out);
}

jg_status jg_grouped_kernel_id(jg_context *ctx, const jg_grouped_problem *problem,
                               jg_kernel_id *out)
{
    return jg__kernel_id(ctx, problem, true, out);
}

/* The alignment an operand's pointers need: its element's where the plan
 * may move it otherwise than by TMA (jg__problem_soft's bit `soft`; C:
 * read element by element but by NVFP4's kernels), else 16 bytes. */
static uintptr_t operand_align(const jg__problem_key *p, uint32_t soft, uint32_t dtype)
{
    const bool any = soft ? (jg__problem_soft(p) & soft) != 0 : p->a_type != JG_NVFP4;
    return any ? (uintptr_t)jg__dtype_size(dtype) : 16;
}

/* The message of a misaligned pointer; an operand's 16 bytes (TMA's)
 * name the flag that lifts them. */
static jg_status misaligned(jg_context *ctx, const char *name, uint32_t g, const void *ptr,
                            uintptr_t align)
{
    const bool operand = strlen(name) == 1;
    return jg__fail(ctx, JG_ERR_MISALIGNED, "args.%s[%u] = %p is not %u-byte aligned%s", name, g,
                    ptr, (unsigned)align,
                    operand && align == 16
                        ? ": this plan moves it by TMA; plan with JG_GROUPED_UNALIGNED for "
                          "pointers aligned to the element"
                        : "");
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
            return misaligned(ctx, name, g, ptrs[g], align);
    }
    return JG_OK;
}

static jg_status check_list_args(jg_context *ctx, const jg__problem_key *p,
                                 const jg_grouped_args *args)
{
    jg_status st;
    if ((st = check_array(ctx, p, "a", args->a, operand_align(p, JG_SOFT_A, p->a_type))) ||
        (st = check_array(ctx, p, "b", args->b, operand_align(p, JG_SOFT_B, p->b_type))) ||
        (st = check_array(ctx, p, "d", (const void *const *)args->d,
                          operand_align(p, JG_SOFT_D, p->d_type))) ||
        (p->scale != JG_SCALE_NONE &&
         ((st = check_array(ctx, p, "a_scales", (const void *const *)args->a_scales, 4)) ||
          (st = check_array(ctx, p, "b_scales", (const void *const *)args->b_scales, 4)))))
        return st;
    if (p->c_type != JG_DTYPE_NONE &&
        (st = check_array(ctx, p, "c", args->c, operand_align(p, 0, p->c_type))))
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
        uintptr_t align;
    } ops[] = {{"a", args->a, operand_align(p, JG_SOFT_A, p->a_type)},
               {"b", args->b, operand_align(p, JG_SOFT_B, p->b_type)},
               {"d", (const void *const *)args->d, operand_align(p, JG_SOFT_D, p->d_type)},
               {"c", p->c_type != JG_DTYPE_NONE ? args->c : NULL, operand_align(p, 0, p->c_type)}};
    for (size_t i = 0; i < JG_ARRAY_LEN(ops); ++i) {
        if (i == 3 && p->c_type == JG_DTYPE_NONE)
            break;
        if (!ops[i].ptrs || !ops[i].ptrs[0])
            return jg__fail(ctx, JG_ERR_NULL_POINTER, "args.%s[0] (the whole tensor) is NULL",
                            ops[i].name);
        if ((uintptr_t)ops[i].ptrs[0] % ops[i].align)
            return misaligned(ctx, ops[i].name, 0, ops[i].ptrs[0], ops[i].align);
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

/* Whether a used pointer of the call is off 16 bytes (the list layout's
 * groups with rows, the device layouts' tensors; C only with C). */
static bool any_misaligned(const jg_grouped_problem *p, const jg_grouped_args *args)
{
    const void *const *arrays[4] = {args->a, args->b, (const void *const *)args->d,
                                    p->c_type != JG_DTYPE_NONE ? args->c : NULL};
    const int32_t n = p->layout == JG_GROUPED_LIST ? p->groups : 1;
    for (int i = 0; i < 4; ++i)
        for (int32_t g = 0; arrays[i] && g < n; ++g)
            if ((p->layout != JG_GROUPED_LIST || (p->m && p->m[g])) &&
                (uintptr_t)arrays[i][g] % 16)
                return true;
    return false;
}

jg_status jg_grouped(jg_context *ctx, const jg_grouped_problem *problem,
                     const jg_grouped_args *args, jg_stream stream)
{
    if (ctx && !args) /* before planning: a bad call compiles nothing */
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "args is NULL");
    /* pointers TMA cannot take: a plan that moves them otherwise (not for
     * NVFP4, whose kernels take none: jg_grouped_run says why) */
    jg_grouped_problem p;
    if (problem && problem->a_type != JG_NVFP4 && problem->groups > 0 &&
        (problem->layout == JG_GROUPED_LIST
             ? problem->groups <= JG_GROUPED_MAX_GROUPS
             : problem->layout == JG_GROUPED_CONTIGUOUS || problem->layout == JG_GROUPED_MASKED) &&
        any_misaligned(problem, args)) {
        /* the fields up to scale: the 0.3 header's struct ends there (the sf
         * layouts are read for NVFP4 only) */
        memset(&p, 0, sizeof p);
        memcpy(&p, problem, offsetof(jg_grouped_problem, a_sf_layout));
        p.flags |= JG_GROUPED_UNALIGNED;
        problem = &p;
    }
    jg_plan *plan;
    jg_status st = jg_grouped_plan(ctx, problem, &plan);
    if (st != JG_OK)
        return st;
    st = jg_grouped_run(plan, args, stream);
    jg__oneshot_done(ctx, &plan->kernel, 1, plan->entry, &plan->kept, stream, st);
    return st;
}
