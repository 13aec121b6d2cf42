/* The memory cache's bound (jg_options.max_kernels): after insertions and
 * releases, the least recently used plans and kernels that nothing holds
 * are evicted, and the one-shot calls' holds end here. Apart from the hash
 * tables (cache_mem.c) and the kernels (module.c), which it uses and which
 * do not call it back: their callers trim. */
#include "runtime/runtime.h"

static size_t plan_count(const jg_context *ctx)
{
    return jg__table_count(&ctx->plans) + jg__table_count(&ctx->grouped_plans);
}

/* Frees the least recently used plan nothing holds, of either table (their
 * stamps come from one clock); false when there is none. */
static bool evict_plan(jg_context *ctx)
{
    jg__table *t = jg__table_lru_stamp(&ctx->grouped_plans) < jg__table_lru_stamp(&ctx->plans)
                       ? &ctx->grouped_plans
                       : &ctx->plans;
    jg_plan *plan = jg__table_evict(t);
    if (!plan)
        return false;
    jg__plan_free(plan); /* lets go of its kernel */
    ctx->cache.plan_evictions++;
    return true;
}

void jg__cache_trim(jg_context *ctx)
{
    const size_t most = ctx->max_kernels;
    if (!most || (plan_count(ctx) <= most && jg__table_count(&ctx->kernels) <= most &&
                  !__atomic_load_n(&ctx->cache.modules_waiting, __ATOMIC_RELAXED)))
        return;
    pthread_mutex_lock(&ctx->trim_lock);
    /* Plans first: a freed plan may leave its kernel unheld. */
    while (plan_count(ctx) > most && evict_plan(ctx))
        ;
    while (jg__table_count(&ctx->kernels) > most) {
        jg__kernel *k = jg__table_evict(&ctx->kernels);
        if (!k)
            break;
        ctx->cache.kernel_evictions++;
        k->next = ctx->retired;
        ctx->retired = k;
        __atomic_add_fetch(&ctx->cache.modules_waiting, 1, __ATOMIC_RELAXED);
    }
    jg__kernels_retire(ctx, false);
    pthread_mutex_unlock(&ctx->trim_lock);
}

void jg__oneshot_done(jg_context *ctx, jg__kernel *const *ks, size_t n, jg__table_entry *e,
                      bool *kept, jg_stream stream, jg_status st)
{
    const bool launched = st == JG_OK || st == JG_ERR_CUDA;
    size_t lost = n;
    for (size_t i = 0; launched && i < n && lost == n; ++i)
        if (!jg__kernel_track(ctx, ks[i], stream))
            lost = i;
    if (lost < n && !__atomic_exchange_n(kept, true, __ATOMIC_RELAXED)) {
        jg__logf(&ctx->log, JG_LOG_DEBUG, JG_LOGC_CACHE,
                 "%s: a launch the library cannot follow (a capturing stream, or launches in "
                 "flight on more streams than it marks): kept until the context is destroyed",
                 ks[lost]->name);
        return; /* this call's hold stays */
    }
    jg__table_release(e);
    jg__cache_trim(ctx); /* what others held while this call built may go now */
}
