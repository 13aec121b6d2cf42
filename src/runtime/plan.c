/* Plan objects: a loaded kernel with what its launches need (grid, threads,
 * the grouped parameter block), for a kernel key chosen elsewhere (the
 * planner through gemm.c, or the tuner's candidates). */
#include <stdlib.h>

#include "runtime/runtime.h"

/* How many of the kernel's clusters the GPU holds at once: the SMs for a
 * cluster of 1; for larger ones the driver's answer when the module was
 * loaded, or SMs / cluster without one (offline contexts). */
static uint32_t resident_clusters(const jg_context *ctx, const jg__gemm_config *cfg,
                                  const jg__kernel *kernel)
{
    const uint32_t cluster = cfg->cluster ? cfg->cluster : 1;
    const uint32_t most = (uint32_t)ctx->target.sm_count / cluster;
    if (cluster == 1 || !kernel->resident_clusters)
        return most;
    return kernel->resident_clusters < most ? kernel->resident_clusters : most;
}

jg_status jg__plan_build(jg_context *ctx, const jg__problem_key *pk, const jg__gemm_key *key,
                         jg_plan **out)
{
    jg__gemm_config cfg = key->cfg;
    jg__kernel *kernel;
    jg_status st = jg__kernel_get(ctx, key, &kernel);
    if (st != JG_OK)
        return st;
    jg_plan *plan = calloc(1, sizeof *plan);
    if (!plan) {
        jg__kernel_release(kernel);
        return jg__fail(ctx, JG_ERR_NO_MEMORY, "allocating a plan");
    }
    plan->ctx = ctx;
    plan->problem = *pk;
    plan->cfg = cfg;
    plan->kernel = kernel;
    plan->threads = jg__gemm_threads(&cfg);
    pthread_mutex_init(&plan->tmap_lock, NULL);
    plan->max_clusters = resident_clusters(ctx, &cfg, kernel);
    plan->grid = cfg.pre ? cfg.pre : jg__gemm_grid(plan, pk->m); /* pre: its baked schedule's */
    if (cfg.pre) { /* the pre-pass: 256 items a CTA, two a row's 64 of K, the tallest group's */
        int64_t most = 0;
        for (uint32_t g = 0; g < pk->groups; ++g)
            most = pk->group_m[g] > most ? pk->group_m[g] : most;
        plan->workspace_bytes = jg__pre_workspace_bytes(pk->group_m, pk->groups, pk->k);
        plan->pre_grid =
            (uint32_t)jg__ceil_div((uint64_t)most * jg__ceil_div((uint64_t)pk->k, 64) * 2, 256);
    }
    if (cfg.split_ws > 1) { /* split-K through the workspace: counts and partial sums */
        plan->workspace_bytes = jg__split_ws_bytes(&cfg, pk->m, pk->n, plan->grid);
        plan->split_counts =
            jg__split_ws_counts(&cfg, jg__gemm_units(&cfg, pk->m, pk->n), plan->grid);
    }
    if (!pk->groups && (pk->flags & JG_GEMM_FP32_EXACT)) /* the split's TF32 parts */
        plan->workspace_bytes = ((uint64_t)pk->m + (uint64_t)pk->n) *
                                (uint64_t)jg__exact_kp(pk->k) * 8;
    if (pk->layout == JG_GROUPED_LIST) {
        /* cfg.pre: the pre-pass's block after the GEMM's; soft operands: the
         * soft block (aligned_alloc takes whole multiples of the alignment) */
        const size_t pre_bytes = cfg.pre ? (JG_PRE_DQ_SIZE(pk->groups) + 63) / 64 * 64 : 0;
        const size_t soft_bytes = cfg.soft ? (JG_SOFT_LIST_SIZE(pk->groups) + 63) / 64 * 64 : 0;
        plan->list_params = aligned_alloc(64, pk->a_type == JG_NVFP4
                                                   ? JG_LIST_NVFP4_SIZE(pk->groups) + pre_bytes
                                                   : JG_LIST_SIZE(pk->groups) + soft_bytes);
        if (!plan->list_params) {
            jg__plan_free(plan);
            return jg__fail(ctx, JG_ERR_NO_MEMORY, "allocating a grouped parameter block");
        }
    }
    *out = plan;
    return JG_OK;
}

void jg__plan_free(jg_plan *plan)
{
    if (plan->packed)
        jg__plan_free(plan->packed);
    if (plan->unsplit)
        jg__plan_free(plan->unsplit);
    if (plan->pack)
        jg__kernel_release(plan->pack);
    jg__kernel_release(plan->kernel);
    free(plan->list_params);
    pthread_mutex_destroy(&plan->tmap_lock);
    free(plan);
}
