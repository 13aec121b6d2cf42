/* The dense GEMM entry points: plan (validate, the planner's or the tuner's
 * choice, look up or build: plan.c) and run; the plan table that grouped.c
 * shares. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "runtime/runtime.h"

/* The planner's choice for a validated problem, as key bytes. */
jg_status jg__plan_key(jg_context *ctx, const jg__problem_key *pk, jg__gemm_key *key)
{
    jg__gemm_config cfg;
    jg_status st;
    if (ctx->tune && jg__tune(ctx, pk, &cfg) == JG_OK) {
        jg__gemm_key_make(pk, &cfg, key);
        return JG_OK;
    }
    st = jg__plan_gemm_sm90(&ctx->target, pk, &ctx->log, &cfg);
    if (st != JG_OK)
        return jg__fail(ctx, st, "no sm_90a configuration fits this problem on %s%s", ctx->arch,
                        ctx->target.force_m || ctx->target.force_n || ctx->target.force_k
                            ? " (JITGEMM_TILE restricts the tiles)"
                            : "");
    jg__gemm_key_make(pk, &cfg, key);
    return JG_OK;
}

jg_status jg__gemm_problem_key(jg_context *ctx, const jg_gemm_problem *p, jg__problem_key *out)
{
    jg_status st = jg__validate_gemm(ctx, p);
    if (st == JG_OK)
        jg__problem_key_make(p, out);
    return st;
}

jg_status jg__grouped_problem_key(jg_context *ctx, const jg_grouped_problem *p,
                                  jg__problem_key *out)
{
    jg_status st = jg__validate_grouped(ctx, p);
    if (st == JG_OK)
        jg__grouped_key_make(p, out);
    return st;
}

jg_status jg__gemm_kernel_key(jg_context *ctx, const jg_gemm_problem *p, jg__gemm_key *out)
{
    jg__problem_key pk;
    jg_status st = jg__gemm_problem_key(ctx, p, &pk);
    return st != JG_OK ? st : jg__plan_key(ctx, &pk, out);
}

jg_status jg__grouped_kernel_key(jg_context *ctx, const jg_grouped_problem *p, jg__gemm_key *out)
{
    jg__problem_key pk;
    jg_status st = jg__grouped_problem_key(ctx, p, &pk);
    return st != JG_OK ? st : jg__plan_key(ctx, &pk, out);
}

jg_status jg__kernel_id(jg_context *ctx, const void *problem, bool grouped, jg_kernel_id *out)
{
    if (out)
        memset(out, 0, sizeof *out);
    if (!ctx || !out)
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "%s is NULL", ctx ? "out" : "ctx");
    jg__gemm_key key;
    jg_status st = grouped ? jg__grouped_kernel_key(ctx, problem, &key)
                           : jg__gemm_kernel_key(ctx, problem, &key);
    if (st != JG_OK)
        return st;
    const jg__hash128 h = jg__kernel_hash(ctx, &key);
    jg__gemm_kernel_name(&key, ctx->arch, out->name);
    out->key_hash[0] = h.lo;
    out->key_hash[1] = h.hi;
    return JG_OK;
}

jg_status jg_gemm_kernel_id(jg_context *ctx, const jg_gemm_problem *problem, jg_kernel_id *out)
{
    return jg__kernel_id(ctx, problem, false, out);
}

/* A plan whose A or B may take soft loads also holds the aligned GEMM over
 * their copies and the pack kernel, built with it, so that a launch given
 * a workspace compiles nothing. No model decides between the two: the
 * pack moves (m + n) k elements twice at ~3 TB/s plus a launch of ~2-3 us,
 * well under the soft loads' loss where it was measured (H100, 160a119:
 * 0.35-0.46 of cuBLAS under ~1e9 multiply-adds, 0.76-1.08 above); a
 * caller who finds otherwise passes no workspace. */
static jg_status build_packed(jg_context *ctx, jg_plan *plan)
{
    jg__problem_key pp;
    jg__pack_problem(&plan->problem, &pp);
    jg__gemm_key key;
    jg_status st = jg__plan_key(ctx, &pp, &key);
    if (st == JG_OK)
        st = jg__plan_build(ctx, &pp, &key, &plan->packed);
    if (st == JG_OK) {
        jg__pack_key_make(&key);
        st = jg__kernel_get(ctx, &key, &plan->pack);
    }
    if (st == JG_OK)
        plan->workspace_bytes =
            jg__pack_args(&plan->problem, plan->problem.m, NULL, NULL, NULL, NULL);
    return st;
}

/* A plan that splits K through a workspace also holds the planner's plan
 * without that split (JITGEMM_SPLIT_WS=0's), built with it, for launches
 * without a workspace: the workspace stays optional. */
static jg_status build_unsplit(jg_context *ctx, jg_plan *plan)
{
    jg__target t = ctx->target;
    t.force_split_ws = 1; /* never (nor stream-K) */
    const jg__log quiet = {0};
    jg__gemm_config cfg;
    jg__gemm_key key;
    jg_status st = jg__plan_gemm_sm90(&t, &plan->problem, &quiet, &cfg);
    if (st != JG_OK)
        return jg__fail(ctx, st, "no sm_90a configuration without a workspace for this problem");
    jg__gemm_key_make(&plan->problem, &cfg, &key);
    return jg__plan_build(ctx, &plan->problem, &key, &plan->unsplit);
}

static jg_status build_plan(jg_context *ctx, const jg__problem_key *pk, jg_plan **out)
{
    jg__gemm_key key;
    jg_status st = jg__plan_key(ctx, pk, &key);
    if (st == JG_OK)
        st = jg__plan_build(ctx, pk, &key, out);
    if (st == JG_OK && jg__pack_operands(pk) && (st = build_packed(ctx, *out)) != JG_OK) {
        jg__plan_free(*out);
        *out = NULL;
    }
    if (st == JG_OK && (*out)->cfg.split_ws > 1 && (st = build_unsplit(ctx, *out)) != JG_OK) {
        jg__plan_free(*out);
        *out = NULL;
    }
    return st;
}

jg_status jg__plan_get(jg_context *ctx, const jg__problem_key *pk, jg_plan **out)
{
    jg__table *table = pk->groups ? &ctx->grouped_plans : &ctx->plans;
    jg_status st = JG_OK;
    jg__table_entry *e;
    jg_plan *plan = jg__table_find(table, pk, &e);
    if (!plan)
        plan = jg__table_claim(table, pk, &e, &st);
    if (st != JG_OK)
        return jg__fail(ctx, st, "plan table");
    if (plan) {
        __atomic_fetch_add(&ctx->stats.plans_memory, 1, __ATOMIC_RELAXED);
        *out = plan;
        return JG_OK;
    }
    if ((st = build_plan(ctx, pk, &plan)) != JG_OK) {
        jg__table_abandon(table, e);
        return st;
    }
    plan->entry = e; /* before publishing: whoever finds the plan may release it */
    jg__table_publish(table, e, plan);
    jg__cache_trim(ctx);
    *out = plan;
    return JG_OK;
}

jg_status jg_plan_release(jg_plan *plan)
{
    if (!plan)
        return JG_OK;
    jg_context *ctx = plan->ctx; /* once released, another thread may free the plan */
    if (!plan->entry || !jg__table_release(plan->entry))
        return jg__fail(ctx, JG_ERR_INVALID,
                        "jg_plan_release: the plan is not pinned (released more often than "
                        "jg_gemm_plan or jg_grouped_plan returned it)");
    jg__cache_trim(ctx);
    return JG_OK;
}

jg_status jg_gemm_plan(jg_context *ctx, const jg_gemm_problem *problem, jg_plan **out)
{
    if (out)
        *out = NULL;
    if (!ctx || !out)
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "%s is NULL", ctx ? "out" : "ctx");
    jg__problem_key pk;
    jg_status st = jg__gemm_problem_key(ctx, problem, &pk);
    return st != JG_OK ? st : jg__plan_get(ctx, &pk, out);
}

/* A pointer the plan reads or writes: present, and aligned as the plan
 * needs: to its element where the plan may move it otherwise than by TMA
 * (`soft`), else to 16 bytes. */
static jg_status check_ptr(jg_context *ctx, const char *name, const void *p, bool soft,
                           uint32_t dtype)
{
    const uintptr_t align = soft ? jg__dtype_size(dtype) : 16;
    if (!p)
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "args.%s is NULL", name);
    if ((uintptr_t)p % align)
        return jg__fail(ctx, JG_ERR_MISALIGNED,
                        soft ? "args.%s = %p is not aligned to its %s elements"
                             : "args.%s = %p is not 16-byte aligned: this plan moves it by TMA "
                               "(its problem's rows are 16-byte multiples); plan with "
                               "JG_GEMM_UNALIGNED for pointers aligned to the element (%s)",
                        name, p, jg__dtype_name(dtype));
    return JG_OK;
}

/* The launch's own rules beyond pointers: an M-major A's rows hold the
 * call's m; the exact FP32 workspace holds the call's parts. */
static jg_status check_launch(jg_context *ctx, const jg__problem_key *p, const jg_gemm_args *args,
                              int64_t m, uint64_t plan_ws)
{
    if ((p->flags & JG_GEMM_A_M_MAJOR) && p->lda < m)
        return jg__fail(ctx, JG_ERR_INVALID,
                        "args.m = %lld: the M-major A's rows are lda = %lld elements; plan with "
                        "lda >= every call's m",
                        (long long)m, (long long)p->lda);
    if (!(p->flags & JG_GEMM_FP32_EXACT))
        return JG_OK;
    const uint64_t need = (p->flags & JG_GEMM_M_GENERIC)
                              ? ((uint64_t)m + (uint64_t)p->n) * (uint64_t)jg__exact_kp(p->k) * 8
                              : plan_ws;
    if (!args->workspace)
        return jg__fail(ctx, JG_ERR_NULL_POINTER,
                        "args.workspace is NULL: this JG_GEMM_FP32_EXACT plan needs %llu bytes",
                        (unsigned long long)need);
    if ((uintptr_t)args->workspace % 16)
        return jg__fail(ctx, JG_ERR_MISALIGNED, "args.workspace = %p is not 16-byte aligned",
                        args->workspace);
    if (args->workspace_bytes < need)
        return jg__fail(ctx, JG_ERR_INVALID,
                        "args.workspace_bytes = %zu: this call needs %llu ((m + n) * KP * 8, KP = "
                        "k rounded up to 64)",
                        args->workspace_bytes, (unsigned long long)need);
    return JG_OK;
}

/* Split-K through the workspace: whether the launch has one it can use
 * (16-byte aligned, at least jg_plan_workspace_bytes); else it runs the
 * plan without that split. */
static bool split_ws_usable(const jg_plan *plan, const jg_gemm_args *args)
{
    return args->workspace && (uintptr_t)args->workspace % 16 == 0 &&
           args->workspace_bytes >= plan->workspace_bytes;
}

/* jg_gemm_run; `workspace_field`: args has 0.7's workspace fields (a
 * caller of jg_gemm whose pointers alone made it unaligned may have
 * been built against 0.6); *packed: the launch packed A or B; *unsplit:
 * it ran the plan without its split through the workspace. */
static jg_status gemm_run(jg_plan *plan, const jg_gemm_args *args, jg_stream stream,
                          bool workspace_field, bool *packed, bool *unsplit)
{
    *packed = *unsplit = false;
    if (!plan)
        return jg__fail(NULL, JG_ERR_NULL_POINTER, "plan is NULL");
    jg_context *ctx = plan->ctx;
    if (!args)
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "args is NULL");
    if (plan->problem.groups)
        return jg__fail(ctx, JG_ERR_INVALID, "a grouped plan: launch it with jg_grouped_run");
    jg_status st;
    const jg__problem_key *p = &plan->problem;
    /* exact FP32: A and B are read by the split, element by element; C, by
     * every kernel but NVFP4's */
    const bool exact = p->flags & JG_GEMM_FP32_EXACT;
    const uint32_t soft = jg__problem_soft(p) | (exact ? JG_SOFT_A | JG_SOFT_B : 0);
    if ((st = check_ptr(ctx, "a", args->a, soft & JG_SOFT_A, p->a_type)) ||
        (st = check_ptr(ctx, "b", args->b, soft & JG_SOFT_B, p->b_type)) ||
        (st = check_ptr(ctx, "d", args->d, soft & JG_SOFT_D, p->d_type)))
        return st;
    if (p->c_type != JG_DTYPE_NONE &&
        (st = check_ptr(ctx, "c", args->c, p->a_type != JG_NVFP4, p->c_type)))
        return st;
    if (plan->problem.scale != JG_SCALE_NONE &&
        (st = jg__check_scales(ctx, args->a_scale, args->b_scale)))
        return st;
    if (plan->problem.a_type == JG_NVFP4 && (st = jg__check_sf(ctx, args->a_sf, args->b_sf)))
        return st;
    if (args->m) {
        bool generic = plan->problem.flags & JG_GEMM_M_GENERIC;
        if (args->m < 0 || args->m > 2147483647LL || (!generic && args->m != plan->problem.m))
            return jg__fail(ctx, JG_ERR_INVALID,
                            generic ? "args.m = %lld: must be 0 or 1..2^31-1"
                                    : "args.m = %lld: this plan's M is baked in (%lld); pass 0 "
                                      "or plan with JG_GEMM_M_GENERIC",
                            (long long)args->m, (long long)plan->problem.m);
    }
    if ((st = check_launch(ctx, p, args, args->m ? args->m : p->m, plan->workspace_bytes)))
        return st;
    if (ctx->offline) /* after the argument checks, so offline contexts test them too */
        return jg__fail(ctx, JG_ERR_OFFLINE, "the context is offline (%s): it cannot launch",
                        ctx->arch);
    jg_pack_kargs ka;
    if (plan->packed && workspace_field &&
        jg__pack_wanted(plan, args, args->m ? args->m : p->m, &ka)) {
        *packed = true;
        return jg__pack_launch(plan, args, &ka, stream);
    }
    if (plan->unsplit && !(workspace_field && split_ws_usable(plan, args))) {
        *unsplit = true;
        return jg__gemm_launch(plan->unsplit, args, stream);
    }
    return jg__gemm_launch(plan, args, stream);
}

jg_status jg_gemm_run(jg_plan *plan, const jg_gemm_args *args, jg_stream stream)
{
    bool packed, unsplit;
    return gemm_run(plan, args, stream, true, &packed, &unsplit);
}

/* Whether a problem uses what 0.6 refused (rows off 16 bytes, MN-major
 * operands, FP32), so that its caller's jg_gemm_args holds the workspace
 * fields. */
static bool problem_is_new(const jg_gemm_problem *p)
{
    jg__problem_key pk;
    jg__problem_key_make(p, &pk);
    pk.flags &= ~(uint32_t)JG_GEMM_UNALIGNED;
    return jg__problem_soft(&pk) || p->a_type == JG_FP32 ||
           (p->flags & (JG_GEMM_A_M_MAJOR | JG_GEMM_B_N_MAJOR | JG_GEMM_FP32_EXACT));
}

jg_status jg_gemm(jg_context *ctx, const jg_gemm_problem *problem, const jg_gemm_args *args,
                  jg_stream stream)
{
    if (ctx && !args) /* before planning: a bad call compiles nothing */
        return jg__fail(ctx, JG_ERR_NULL_POINTER, "args is NULL");
    /* pointers TMA cannot take: a plan that moves them otherwise (NVFP4's
     * kernels take none: jg_gemm_run says why) */
    jg_gemm_problem p;
    bool added = false;
    if (problem && problem->a_type != JG_NVFP4 &&
        ((uintptr_t)args->a | (uintptr_t)args->b | (uintptr_t)args->d |
         (problem->c_type != JG_DTYPE_NONE ? (uintptr_t)args->c : 0)) % 16) {
        /* the fields up to scale: the 0.2 header's struct ends there (the
         * sf layouts are read for NVFP4 only) */
        memset(&p, 0, sizeof p);
        memcpy(&p, problem, offsetof(jg_gemm_problem, a_sf_layout));
        added = !(p.flags & JG_GEMM_UNALIGNED);
        p.flags |= JG_GEMM_UNALIGNED;
        problem = &p;
    }
    jg_plan *plan;
    jg_status st = jg_gemm_plan(ctx, problem, &plan);
    if (st != JG_OK)
        return st;
    /* the flag added here: a problem 0.6 took (rows 16-byte multiples),
     * whose caller's args may end before the workspace fields */
    bool packed, unsplit;
    st = gemm_run(plan, args, stream, !added || problem_is_new(problem), &packed, &unsplit);
    if (packed) { /* the kernels this call launched: the pack and the packed plan's GEMM */
        jg__kernel *const ks[] = {plan->pack, plan->packed->kernel};
        jg__oneshot_done(ctx, ks, 2, plan->entry, &plan->kept, stream, st);
    } else if (unsplit) {
        jg__oneshot_done(ctx, &plan->unsplit->kernel, 1, plan->entry, &plan->kept, stream, st);
    } else {
        jg__oneshot_done(ctx, &plan->kernel, 1, plan->entry, &plan->kept, stream, st);
    }
    return st;
}

jg_status jg_plan_get_info(const jg_plan *plan, jg_plan_info *out)
{
    if (!plan || !out)
        return jg__fail(plan ? plan->ctx : NULL, JG_ERR_NULL_POINTER, "%s is NULL",
                        plan ? "out" : "plan");
    memset(out, 0, sizeof *out);
    out->kernel_name = plan->kernel->name;
    out->origin = plan->kernel->origin;
    out->block_m = plan->cfg.block_m;
    out->block_n = plan->cfg.block_n;
    out->block_k = plan->cfg.block_k;
    out->stages = plan->cfg.stages;
    out->cluster = plan->cfg.cluster;
    out->grid = plan->grid;
    out->threads = plan->threads;
    out->smem_bytes = plan->kernel->smem_bytes;
    out->key_hash[0] = plan->kernel->key.lo;
    out->key_hash[1] = plan->kernel->key.hi;
    return JG_OK;
}

jg_status jg_plan_workspace_bytes(const jg_plan *plan, size_t *out)
{
    if (!plan || !out)
        return jg__fail(plan ? plan->ctx : NULL, JG_ERR_NULL_POINTER, "%s is NULL",
                        plan ? "out" : "plan");
    *out = (size_t)plan->workspace_bytes;
    return JG_OK;
}
