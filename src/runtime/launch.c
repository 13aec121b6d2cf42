/* The launch path: tensor maps from the plan's small cache, one parameter
 * block, cuLaunchKernelEx. No allocation, no sync, no string work unless a
 * call fails: it may be captured in a CUDA graph. */
#include <string.h>

#include "jg_internal.h"

uint32_t jg__gemm_grid(const jg_plan *plan, int64_t m)
{
    uint64_t tiles_m = ((uint64_t)m + plan->cfg.block_m - 1) / plan->cfg.block_m;
    uint64_t tiles_n = ((uint64_t)plan->problem.n + plan->cfg.block_n - 1) / plan->cfg.block_n;
    uint64_t tiles = tiles_m * tiles_n;
    uint64_t sms = (uint64_t)plan->ctx->target.sm_count;
    return (uint32_t)(tiles < sms ? tiles : sms);
}

/* Finds or encodes the tensor maps for (a, b, m) under the plan's lock. */
static jg_status tensor_maps(jg_plan *plan, const jg_gemm_args *args, int64_t m, jg_gemm_kargs *ka)
{
    jg_status st = JG_OK;
    pthread_mutex_lock(&plan->tmap_lock);
    jg__tmap_slot *slot = NULL, *oldest = &plan->tmaps[0];
    for (int i = 0; i < JG_TMAP_SLOTS; ++i) {
        jg__tmap_slot *s = &plan->tmaps[i];
        if (s->stamp && s->a == args->a && s->b == args->b && s->d == args->d && s->m == m) {
            slot = s;
            break;
        }
        if (s->stamp < oldest->stamp)
            oldest = s;
    }
    if (!slot) {
        const jg__problem_key *p = &plan->problem;
        /* Boxes are one 128-byte swizzle atom wide along K (64 16-bit
         * elements); a stage of BLOCK_K = 128 loads two of them. */
        const uint32_t box_k = 64;
        slot = oldest;
        slot->stamp = 0;
        /* The epilogue stores chunks of 64 rows x epi_bytes. */
        const uint32_t epi_cols = plan->cfg.epi_bytes / (uint32_t)jg__dtype_size(p->d_type);
        st = jg__tmap_encode_2d(plan->ctx, &slot->ta, p->a_type, args->a, (uint64_t)m,
                                (uint64_t)p->k, (uint64_t)p->lda, plan->cfg.block_m, box_k);
        if (st == JG_OK)
            st = jg__tmap_encode_2d(plan->ctx, &slot->tb, p->b_type, args->b, (uint64_t)p->n,
                                    (uint64_t)p->k, (uint64_t)p->ldb, plan->cfg.block_n, box_k);
        /* TMA writes whole 16-byte pieces of a row: the map stops at the last
         * whole piece within n, the kernel stores the rest (JG_N_TMA). */
        const uint64_t per16 = 16 / jg__dtype_size(p->d_type);
        const uint64_t n16 = (uint64_t)p->n / per16 * per16;
        if (st == JG_OK)
            st = jg__tmap_encode_2d(plan->ctx, &slot->td, p->d_type, args->d, (uint64_t)m,
                                    n16 ? n16 : per16, (uint64_t)p->ldd, 64, epi_cols);
        if (st == JG_OK) {
            slot->a = args->a;
            slot->b = args->b;
            slot->d = args->d;
            slot->m = m;
        }
    }
    if (st == JG_OK) {
        slot->stamp = ++plan->tmap_clock;
        ka->a = slot->ta;
        ka->b = slot->tb;
        ka->d = slot->td;
    }
    pthread_mutex_unlock(&plan->tmap_lock);
    return st;
}

jg_status jg__gemm_launch(jg_plan *plan, const jg_gemm_args *args, jg_stream stream)
{
    jg_context *ctx = plan->ctx;
    const int64_t m = args->m ? args->m : plan->problem.m;
    jg_gemm_kargs ka;
    memset(&ka, 0, sizeof ka);
    jg_status st = tensor_maps(plan, args, m, &ka);
    if (st != JG_OK)
        return st;
    ka.d_ptr = args->d;
    ka.ldd = plan->problem.ldd;
    ka.c = args->c;
    ka.ldc = plan->problem.ldc;
    ka.m = (int32_t)m;
    ka.alpha = args->alpha;
    ka.beta = args->beta;

    CUlaunchAttribute attrs[1];
    unsigned nattrs = 0;
    if (plan->cfg.cluster > 1) {
        attrs[0].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attrs[0].value.clusterDim.x = plan->cfg.cluster;
        attrs[0].value.clusterDim.y = 1;
        attrs[0].value.clusterDim.z = 1;
        nattrs = 1;
    }
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = jg__gemm_grid(plan, m);
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = plan->threads;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = plan->kernel->smem_bytes;
    cfg.hStream = (CUstream)stream;
    cfg.attrs = attrs;
    cfg.numAttrs = nattrs;
    void *params[] = {&ka};
    CUresult r = ctx->cu->cuLaunchKernelEx(&cfg, plan->kernel->fn, params, NULL);
    if (r != CUDA_SUCCESS)
        return jg__fail_cu(ctx, "cuLaunchKernelEx", r);
    if (jg__log_on(&ctx->log, JG_LOGC_LAUNCH))
        jg__logf(&ctx->log, JG_LOG_DEBUG, JG_LOGC_LAUNCH,
                 "launched %s: grid %u, %u threads, m %lld", plan->kernel->name, cfg.gridDimX,
                 cfg.blockDimX, (long long)m);
    return JG_OK;
}
