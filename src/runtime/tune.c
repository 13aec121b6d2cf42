/* JITGEMM_TUNE=1: the planner's best few configurations for a dense problem
 * are timed once on the GPU and the fastest is remembered in the disk cache,
 * keyed by the problem (and everything the planner's choice depends on).
 * Opt-in: tuning allocates scratch operands of the problem's size and
 * synchronizes a private stream, once per problem and cache. The analytic
 * choice stays the default and the fallback whenever tuning cannot run. */
#include <stdio.h>
#include <string.h>

#include "runtime/runtime.h"

enum {
    TUNE_CANDIDATES = 4,
    TUNE_WARMUP = 2,
    TUNE_LAUNCHES = 5,
};

/* Scratch operands above this are not allocated: the planner decides. */
#define TUNE_MAX_BYTES ((size_t)4 << 30)

/* What the record's key hashes: the problem and the planner's inputs. */
typedef struct tune_key {
    char tag[8]; /* "jgtune2": a different space from kernel keys */
    int32_t sm_count, smem_per_block;
    uint32_t force_m, force_n, force_k, force_cluster, force_swap, force_split, force_pingpong;
    uint32_t force_n_stack; /* in what was padding: records without it keep their keys */
    jg__problem_key problem;
} tune_key;

static jg__hash128 record_key(const jg_context *ctx, const jg__problem_key *pk)
{
    tune_key k;
    memset(&k, 0, sizeof k);
    memcpy(k.tag, "jgtune2", 8);
    k.sm_count = ctx->target.sm_count;
    k.smem_per_block = ctx->target.smem_per_block;
    k.force_m = ctx->target.force_m;
    k.force_n = ctx->target.force_n;
    k.force_k = ctx->target.force_k;
    k.force_cluster = ctx->target.force_cluster;
    k.force_swap = ctx->target.force_swap;
    k.force_split = ctx->target.force_split;
    k.force_pingpong = ctx->target.force_pingpong;
    k.force_n_stack = ctx->target.force_n_stack;
    k.problem = *pk;
    return jg__key_hash(&ctx->salt, &k, sizeof k);
}

/* A recorded configuration is used only if the planner still offers it:
 * a record from another planner version is retuned, never trusted. */
static bool offered(const jg__gemm_config *cands, size_t n, const jg__gemm_config *c)
{
    for (size_t i = 0; i < n; ++i)
        if (!memcmp(&cands[i], c, sizeof *c))
            return true;
    return false;
}

typedef struct scratch {
    CUdeviceptr a, b, c, d, scales; /* scales: FP8 problems' a_scale then b_scale */
    size_t a_scales;                /* how many of them are a_scale's */
} scratch;

/* FP8 scales as the mode lays them out (jg_scale_mode), for A and for B. */
static void scale_counts(const jg__problem_key *pk, int64_t m, size_t *na, size_t *nb)
{
    const size_t kb = jg__ceil_div((uint64_t)pk->k, 128), nblk = jg__ceil_div((uint64_t)pk->n, 128);
    switch (pk->scale) {
    case JG_SCALE_TENSOR:
        *na = *nb = 1;
        return;
    case JG_SCALE_ROW:
        *na = (size_t)m;
        *nb = (size_t)pk->n;
        return;
    case JG_SCALE_BLOCK:
        *na = (size_t)m * kb;
        *nb = nblk * kb;
        return;
    default:
        *na = *nb = 0;
    }
}

static size_t dtype_bytes(uint32_t t, int64_t rows, int64_t ld)
{
    return (size_t)rows * (size_t)ld * jg__dtype_size(t);
}

/* Operands filled with 0x3c00 halves (1.0 in FP16, 2^-7 in BF16): finite,
 * non-zero, as the tensor cores would see real data. */
static bool scratch_alloc(jg_context *ctx, const jg__problem_key *pk, int64_t m, scratch *s)
{
    const jg__driver *cu = ctx->cu;
    size_t na, nb;
    scale_counts(pk, m, &na, &nb);
    const size_t bytes[5] = {dtype_bytes(pk->a_type, m, pk->lda),
                             dtype_bytes(pk->b_type, pk->n, pk->ldb),
                             pk->c_type ? dtype_bytes(pk->c_type, m, pk->ldc) : 0,
                             dtype_bytes(pk->d_type, m, pk->ldd), 4 * (na + nb)};
    /* 0x3c00 halves are 1.0 in FP16 and 2^-7 in BF16; bytes 0x3c and 0x00
     * are 1.0 and 0 in e4m3; scales are 1.0f. */
    const unsigned fill[5] = {0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3c003c00u, 0x3f800000u};
    CUdeviceptr *ptrs[5] = {&s->a, &s->b, &s->c, &s->d, &s->scales};
    memset(s, 0, sizeof *s);
    s->a_scales = na;
    if (bytes[0] + bytes[1] + bytes[2] + bytes[3] + bytes[4] > TUNE_MAX_BYTES)
        return false;
    for (int i = 0; i < 5; ++i) {
        if (!bytes[i])
            continue;
        if (cu->cuMemAlloc(ptrs[i], bytes[i]) != CUDA_SUCCESS ||
            cu->cuMemsetD32(*ptrs[i], fill[i], bytes[i] / 4) != CUDA_SUCCESS)
            return false;
    }
    return true;
}

static void scratch_free(jg_context *ctx, scratch *s)
{
    CUdeviceptr ptrs[5] = {s->a, s->b, s->c, s->d, s->scales};
    for (int i = 0; i < 5; ++i)
        if (ptrs[i])
            ctx->cu->cuMemFree(ptrs[i]);
}

/* Mean microseconds per launch of one candidate, or a negative value. */
static double time_candidate(jg_context *ctx, const jg__problem_key *pk, const jg__gemm_key *key,
                             const jg_gemm_args *args, CUstream stream, CUevent ev[2])
{
    jg_plan *plan;
    if (jg__plan_build(ctx, pk, key, &plan) != JG_OK)
        return -1;
    const jg__driver *cu = ctx->cu;
    bool ok = true;
    for (int i = 0; ok && i < TUNE_WARMUP; ++i)
        ok = jg__gemm_launch(plan, args, (jg_stream)stream) == JG_OK;
    ok = ok && cu->cuEventRecord(ev[0], stream) == CUDA_SUCCESS;
    for (int i = 0; ok && i < TUNE_LAUNCHES; ++i)
        ok = jg__gemm_launch(plan, args, (jg_stream)stream) == JG_OK;
    float ms = 0;
    ok = ok && cu->cuEventRecord(ev[1], stream) == CUDA_SUCCESS &&
         cu->cuEventSynchronize(ev[1]) == CUDA_SUCCESS &&
         cu->cuEventElapsedTime(&ms, ev[0], ev[1]) == CUDA_SUCCESS;
    jg__plan_free(plan);
    return ok ? ms * 1e3 / TUNE_LAUNCHES : -1;
}

/* Times the candidates; the index of the fastest, or -1. */
static int time_candidates(jg_context *ctx, const jg__problem_key *pk, const jg__gemm_config *cands,
                           size_t n)
{
    const jg__driver *cu = ctx->cu;
    const int64_t m = pk->m; /* an M-generic problem's hint */
    scratch s;
    CUstream stream = NULL;
    CUevent ev[2] = {NULL, NULL};
    int best = -1;
    double best_us = 0;
    if (scratch_alloc(ctx, pk, m, &s) &&
        cu->cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING) == CUDA_SUCCESS &&
        cu->cuEventCreate(&ev[0], CU_EVENT_DEFAULT) == CUDA_SUCCESS &&
        cu->cuEventCreate(&ev[1], CU_EVENT_DEFAULT) == CUDA_SUCCESS) {
        jg_gemm_args args = {.a = (const void *)(uintptr_t)s.a,
                             .b = (const void *)(uintptr_t)s.b,
                             .c = (const void *)(uintptr_t)s.c,
                             .d = (void *)(uintptr_t)s.d,
                             .alpha = 1.0f,
                             .beta = pk->c_type ? 1.0f : 0.0f,
                             .m = (pk->flags & JG_GEMM_M_GENERIC) ? m : 0,
                             .a_scale = s.scales ? (const float *)(uintptr_t)s.scales : NULL,
                             .b_scale =
                                 s.scales ? (const float *)(uintptr_t)s.scales + s.a_scales : NULL};
        for (size_t i = 0; i < n; ++i) {
            jg__gemm_key key;
            jg__gemm_key_make(pk, &cands[i], &key);
            double us = time_candidate(ctx, pk, &key, &args, stream, ev);
            if (jg__log_on(&ctx->log, JG_LOGC_PLAN)) {
                /* the kernel's name says its family (_ab swap-AB, _pp
                 * ping-pong, _k split-K, ...), not only its tile */
                char name[128];
                jg__gemm_kernel_name(&key, ctx->arch, name);
                jg__logf(&ctx->log, JG_LOG_INFO, JG_LOGC_PLAN,
                         "tune m=%lld n=%lld k=%lld: candidate %zu, tile %ux%ux%u, cluster %u "
                         "(%s): %.1f us",
                         (long long)m, (long long)pk->n, (long long)pk->k, i, cands[i].block_m,
                         cands[i].block_n, cands[i].block_k, cands[i].cluster, name, us);
            }
            if (us > 0 && (best < 0 || us < best_us)) {
                best = (int)i;
                best_us = us;
            }
        }
    }
    if (ev[0])
        cu->cuEventDestroy(ev[0]);
    if (ev[1])
        cu->cuEventDestroy(ev[1]);
    if (stream)
        cu->cuStreamDestroy(stream);
    scratch_free(ctx, &s);
    return best;
}

jg_status jg__tune(jg_context *ctx, const jg__problem_key *pk, jg__gemm_config *out)
{
    /* Dense problems with a GPU; NVFP4 ones are left to the planner (the
     * scratch launches carry no block scales), and so are MN-major and
     * exact FP32 ones (the scratch operands are K-major, with no workspace). */
    const uint32_t untimed = JG_GEMM_A_M_MAJOR | JG_GEMM_B_N_MAJOR | JG_GEMM_FP32_EXACT;
    if (ctx->offline || pk->groups || pk->a_type == JG_NVFP4 || (pk->flags & untimed))
        return JG_ERR_UNSUPPORTED;
    jg__gemm_config cands[TUNE_CANDIDATES];
    const size_t n = jg__plan_candidates_sm90(&ctx->target, pk, cands, TUNE_CANDIDATES);
    if (n == 0)
        return JG_ERR_UNSUPPORTED;
    const jg__hash128 key = record_key(ctx, pk);
    jg__buf rec = {0};
    if (jg__disk_read(&ctx->disk, ctx->arch, key, &rec, &ctx->log)) {
        bool usable =
            rec.len == sizeof *out && offered(cands, n, (const jg__gemm_config *)rec.data);
        if (usable)
            memcpy(out, rec.data, sizeof *out);
        jg__buf_free(&rec);
        if (usable)
            return JG_OK;
    }
    if (n == 1) {
        *out = cands[0];
        return JG_OK;
    }
    const jg__driver *cu = ctx->cu;
    if (cu->cuCtxPushCurrent(ctx->cu_ctx) != CUDA_SUCCESS)
        return JG_ERR_UNSUPPORTED;
    const int best = time_candidates(ctx, pk, cands, n);
    CUcontext popped;
    cu->cuCtxPopCurrent(&popped);
    jg__cache_trim(ctx); /* the candidates' kernels, held no more */
    if (best < 0) {
        jg__logf(&ctx->log, JG_LOG_WARN, JG_LOGC_PLAN,
                 "tune m=%lld n=%lld k=%lld: could not time the candidates; the planner decides",
                 (long long)pk->m, (long long)pk->n, (long long)pk->k);
        return JG_ERR_UNSUPPORTED;
    }
    *out = cands[best];
    char name[128];
    snprintf(name, sizeof name, "tune m%lld n%lld k%lld: %ux%ux%u c%u", (long long)pk->m,
             (long long)pk->n, (long long)pk->k, out->block_m, out->block_n, out->block_k,
             out->cluster);
    jg__disk_write(&ctx->disk, ctx->arch, key, name, out, sizeof *out, &ctx->log);
    return JG_OK;
}
