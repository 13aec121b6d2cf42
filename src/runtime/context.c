/* Contexts: the bound CUDA context, device facts, options, caches. */
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "runtime/runtime.h"

/* Targets with kernel tables. Offline contexts may name any of these. */
static const struct {
    const char *arch;
    int cc_major, cc_minor;
    int default_sm_count; /* offline planning without jg_options.sm_count */
    int smem_per_block;   /* opt-in dynamic shared memory per block */
    /* Offline planning at default_sm_count: clusters of 2, 3, ... CTAs
     * (one a SM, all shared memory) the GPU holds at once, as the driver
     * tells a device context (jg__probe_resident_clusters). GPCs do not
     * split evenly into clusters, and plans with clusters of 4 or 8 count
     * their waves with these: without them a build box's jitgemm-warm
     * planned other kernels than the GPU then asked for. */
    uint16_t resident_clusters[JG_SPLIT_K_MAX + 1];
} targets[] = {
    /* NVIDIA H200 (132 SMs), cuOccupancyMaxActiveClusters, 2026-11-27 */
    {"sm_90a", 9, 0, 132, 232448, {0, 0, 66, 39, 30, 22, 17, 15, 15}},
};

const char *jg_version(void) { return JITGEMM_VERSION_STRING; }

const char *jg_context_arch(const jg_context *ctx) { return ctx ? ctx->arch : ""; }

static jg_cache_mode cache_mode_from_env(const jg__log *log)
{
    const char *env = getenv("JITGEMM_CACHE");
    if (!env || !*env || !strcmp(env, "readwrite"))
        return JG_CACHE_READWRITE;
    if (!strcmp(env, "off"))
        return JG_CACHE_OFF;
    if (!strcmp(env, "read"))
        return JG_CACHE_READ;
    jg__logf(log, JG_LOG_WARN, JG_LOGC_CACHE,
             "JITGEMM_CACHE=%s is not off, read or readwrite: using readwrite", env);
    return JG_CACHE_READWRITE;
}

static void setup_log(jg_context *ctx, const jg_options *o)
{
    uint32_t env_mask = 0;
    bool env = jg__log_env_mask(&env_mask);
    if (o->log) {
        ctx->log.fn = o->log;
        ctx->log.user = o->log_user;
        ctx->log.mask = o->log_mask ? o->log_mask : env_mask;
    } else if (env) {
        ctx->log.fn = jg__log_stderr;
        ctx->log.mask = env_mask;
    }
}

/* JITGEMM_BACKEND=nvrtc|llvm: the default backend. Asked of a build
 * without LLVM, or misspelt, it warns and leaves NVRTC. */
static jg_backend backend_from_env(const jg__log *log)
{
    const char *env = getenv("JITGEMM_BACKEND");
    if (!env || !*env || !strcmp(env, "nvrtc"))
        return JG_BACKEND_NVRTC;
    if (!strcmp(env, "llvm") && jg__llvm_built())
        return JG_BACKEND_LLVM;
    jg__logf(log, JG_LOG_WARN, JG_LOGC_COMPILE, "JITGEMM_BACKEND=%s ignored: %s", env,
             strcmp(env, "llvm") ? "nvrtc or llvm" : "libjitgemm was built without LLVM");
    return JG_BACKEND_NVRTC;
}

void jg__backend_id(jg_backend backend, char *out, size_t len)
{
    int major = 0, minor = 0;
    if (backend == JG_BACKEND_LLVM) {
        jg__hash128 catalog = jg__llvm_catalog_hash();
        snprintf(out, len, "llvm %s|catalog %016llx%016llx", jg__llvm_options(),
                 (unsigned long long)catalog.hi, (unsigned long long)catalog.lo);
        return;
    }
    jg__nvrtc_version(&major, &minor);
    snprintf(out, len, "nvrtc %d.%d|%s", major, minor, jg__nvrtc_options());
}

static void setup_dump(jg_context *ctx)
{
    const char *dir = getenv("JITGEMM_DUMP");
    if (!dir || !*dir)
        return;
    if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
        jg__logf(&ctx->log, JG_LOG_WARN, JG_LOGC_COMPILE, "JITGEMM_DUMP=%s: %s", dir,
                 strerror(errno));
        return;
    }
    snprintf(ctx->dump_dir, sizeof ctx->dump_dir, "%s", dir);
}

/* JITGEMM_TILE=MxNxK restricts the planner's tiles; 0 or a missing part
 * leaves that size free ("64x32" or "x32x128"). */
static void read_forced_tile(jg_context *ctx)
{
    const char *env = getenv("JITGEMM_TILE");
    if (!env || !*env)
        return;
    unsigned v[3] = {0, 0, 0};
    const char *p = env;
    for (int i = 0; i < 3 && *p; ++i) {
        char *end;
        v[i] = (unsigned)strtoul(p, &end, 10);
        p = *end == 'x' ? end + 1 : end;
        if (*end != 'x')
            break;
    }
    ctx->target.force_m = v[0];
    ctx->target.force_n = v[1];
    ctx->target.force_k = v[2];
    jg__logf(&ctx->log, JG_LOG_WARN, JG_LOGC_PLAN, "JITGEMM_TILE=%s: tiles restricted to %ux%ux%u",
             env, v[0], v[1], v[2]);
}

/* *out = the variable `name`'s value where it is 1, 2 or 4 (else a warning
 * and *out unchanged); what: the log's words before the value. */
static void read_forced_124(jg_context *ctx, const char *name, const char *what, uint32_t *out)
{
    const char *env = getenv(name);
    if (!env || !*env)
        return;
    if (strcmp(env, "1") && strcmp(env, "2") && strcmp(env, "4")) {
        jg__logf(&ctx->log, JG_LOG_WARN, JG_LOGC_PLAN, "%s=%s ignored: 1, 2 or 4", name, env);
        return;
    }
    *out = (uint32_t)(env[0] - '0');
    jg__logf(&ctx->log, JG_LOG_WARN, JG_LOGC_PLAN, "%s=%s: %s %s", name, env, what, env);
}

/* A switch `name`=0|1: 0 or 1, or -1 where unset or neither (warned). */
static int read_env_bit(jg_context *ctx, const char *name)
{
    const char *env = getenv(name);
    if (!env || !*env)
        return -1;
    if (strcmp(env, "0") && strcmp(env, "1")) {
        jg__logf(&ctx->log, JG_LOG_WARN, JG_LOGC_PLAN, "%s=%s ignored: 0 or 1", name, env);
        return -1;
    }
    return env[0] - '0';
}

/* JITGEMM_FFMA_REUSE=0|1: the FP8 block-scale promotions' reuse edit
 * (sass_patch.c) off or on, instead of the planner's choice. */
static void read_forced_ffma_reuse(jg_context *ctx)
{
    const int on = read_env_bit(ctx, "JITGEMM_FFMA_REUSE");
    if (on < 0)
        return;
    ctx->target.force_ffma_reuse = (uint32_t)on + 1;
    jg__logf(&ctx->log, JG_LOG_WARN, JG_LOGC_PLAN, "JITGEMM_FFMA_REUSE=%d: the reuse edit %s", on,
             on ? "on" : "off");
}

/* `name`=S, units a tile through the workspace (JITGEMM_SPLIT_WS,
 * JITGEMM_STREAM_K): 2..JG_SPLIT_WS_MAX into *out, 0 (never) as 1. */
static void read_forced_units(jg_context *ctx, const char *name, uint32_t *out)
{
    const char *env = getenv(name);
    if (!env || !*env)
        return;
    char *end;
    const unsigned long s = strtoul(env, &end, 10);
    if (*end || (s != 0 && (s < 2 || s > JG_SPLIT_WS_MAX)))
        jg__logf(&ctx->log, JG_LOG_WARN, JG_LOGC_PLAN, "%s=%s ignored: 0 (none) or 2 to %d", name,
                 env, JG_SPLIT_WS_MAX);
    else
        *out = s < 2 ? 1 : (uint32_t)s; /* 1: never */
}

/* JITGEMM_SWAP=0|1 (dense swap-AB never, or only where it applies),
 * JITGEMM_SPLIT=S|any (dense split-K over clusters of S = 2, 4 or 8 CTAs only, 1 none,
 * any: some S from 2, where it applies), JITGEMM_PINGPONG=1 (dense
 * ping-pong tiles only) and JITGEMM_SPLIT_WS=S (the planner's plan split
 * into S = 2..16 units a tile through the caller's workspace, where it
 * fits; 0: never) and JITGEMM_STREAM_K=S (the plan's tile run stream-K in S
 * = 2..16 units a tile, where it fits; 0: never); with JITGEMM_SPLIT_DP=1 a
 * forced split only over the tiles of the last waves, those before them
 * whole first: instead of the planner's measured table, for experiments
 * and the sweep that measures the table. */
static void read_forced_shape(jg_context *ctx)
{
    const char *split = getenv("JITGEMM_SPLIT");
    const char *ping = getenv("JITGEMM_PINGPONG");
    if (ping && !strcmp(ping, "1"))
        ctx->target.force_pingpong = 1;
    const int swap = read_env_bit(ctx, "JITGEMM_SWAP");
    if (swap >= 0)
        ctx->target.force_swap = (uint32_t)swap + 1;
    read_forced_units(ctx, "JITGEMM_SPLIT_WS", &ctx->target.force_split_ws);
    read_forced_units(ctx, "JITGEMM_STREAM_K", &ctx->target.force_stream_k);
    ctx->target.force_sk_dp = read_env_bit(ctx, "JITGEMM_SPLIT_DP") == 1;
    if (split && *split) {
        char *end;
        const unsigned long s = strtoul(split, &end, 10);
        if (!strcmp(split, "any"))
            ctx->target.force_split = JG_SPLIT_ANY;
        else if (*end || s < 1 || s > JG_SPLIT_K_MAX)
            jg__logf(&ctx->log, JG_LOG_WARN, JG_LOGC_PLAN,
                     "JITGEMM_SPLIT=%s ignored: 1 to %d, or any", split, JG_SPLIT_K_MAX);
        else
            ctx->target.force_split = (uint32_t)s;
    }
}

/* The default bound of the memory cache. A serving process meets tens to a
 * few hundred kernels (a model's GEMM shapes times dtypes, M-generic
 * plans), so 1024 never evicts there, while a fuzz run or a server meeting
 * 10^4 shapes keeps at most 1024 modules loaded. Their cubins are 11-48 KB
 * (sm_90a, NVRTC 13: dense BF16 11-15 KB, FP8 with block scales 26 KB,
 * NVFP4 32-48 KB), so 1024 of them are some tens of MB of device memory
 * plus the driver's own per module (tests/gpu/test_many_kernels.c reports
 * what a run used), and a plan is about 7 KB of host memory (a grouped
 * list plan up to 35 KB). An evicted kernel met again costs ~0.2 ms from
 * the disk cache, or a compile (~0.3 s) without one. */
#define DEFAULT_MAX_KERNELS 1024

/* The bound from JITGEMM_MAX_KERNELS: a positive count, or "unlimited"
 * (returned as 0); anything else is warned about and gives the default. */
static size_t max_kernels_from_env(const jg__log *log)
{
    const char *env = getenv("JITGEMM_MAX_KERNELS");
    if (!env || !*env)
        return DEFAULT_MAX_KERNELS;
    if (!strcmp(env, "unlimited"))
        return 0;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(env, &end, 10);
    if (*end || env[0] < '0' || env[0] > '9' || !v || errno || v > SIZE_MAX / 2) {
        jg__logf(log, JG_LOG_WARN, JG_LOGC_CACHE,
                 "JITGEMM_MAX_KERNELS=%s is not a positive count or \"unlimited\": using %d", env,
                 DEFAULT_MAX_KERNELS);
        return DEFAULT_MAX_KERNELS;
    }
    return (size_t)v;
}

static int find_target(const char *arch)
{
    for (size_t i = 0; i < JG_ARRAY_LEN(targets); ++i)
        if (!strcmp(targets[i].arch, arch))
            return (int)i;
    return -1;
}

/* Binds the current CUDA context and reads the device's facts. */
static jg_status bind_device(jg_context *ctx, const jg_options *o)
{
    char err[512];
    jg_status st = jg__driver_get(&ctx->cu, err, sizeof err);
    if (st != JG_OK)
        return jg__fail(NULL, st, "%s", err);
    const jg__driver *cu = ctx->cu;
    CUresult r = cu->cuCtxGetCurrent(&ctx->cu_ctx);
    if (r != CUDA_SUCCESS || !ctx->cu_ctx)
        return jg__fail(NULL, JG_ERR_NO_DEVICE,
                        "no CUDA context is current on this thread: make one current first "
                        "(cudaSetDevice + cudaFree(0), or cuCtxSetCurrent)");
    int major = 0, minor = 0, sms = 0, smem = 0;
    if ((r = cu->cuCtxGetDevice(&ctx->device)) != CUDA_SUCCESS ||
        (r = cu->cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
                                      ctx->device)) != CUDA_SUCCESS ||
        (r = cu->cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
                                      ctx->device)) != CUDA_SUCCESS ||
        (r = cu->cuDeviceGetAttribute(&sms, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                      ctx->device)) != CUDA_SUCCESS ||
        (r = cu->cuDeviceGetAttribute(&smem, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
                                      ctx->device)) != CUDA_SUCCESS) {
        const char *name = "?";
        cu->cuGetErrorName(r, &name);
        return jg__fail(NULL, JG_ERR_CUDA, "reading device attributes: %s", name);
    }
    int t = -1;
    for (size_t i = 0; i < JG_ARRAY_LEN(targets); ++i)
        if (targets[i].cc_major == major && targets[i].cc_minor == minor)
            t = (int)i;
    if (t < 0)
        return jg__fail(NULL, JG_ERR_UNSUPPORTED_ARCH,
                        "the GPU has compute capability %d.%d; libjitgemm supports 9.0 (Hopper)",
                        major, minor);
    if (o->arch && strcmp(o->arch, targets[t].arch))
        return jg__fail(NULL, JG_ERR_INVALID, "options.arch %s differs from the GPU's %s", o->arch,
                        targets[t].arch);
    snprintf(ctx->arch, sizeof ctx->arch, "%s", targets[t].arch);
    ctx->target.sm_count = sms;
    ctx->target.smem_per_block = smem;
    return JG_OK;
}

static jg_status setup_offline(jg_context *ctx, const jg_options *o)
{
    if (!o->arch)
        return jg__fail(NULL, JG_ERR_INVALID, "options.arch is required with JG_CONTEXT_OFFLINE");
    int t = find_target(o->arch);
    if (t < 0)
        return jg__fail(NULL, JG_ERR_UNSUPPORTED_ARCH, "options.arch %s: supported is sm_90a",
                        o->arch);
    if (o->sm_count < 0)
        return jg__fail(NULL, JG_ERR_INVALID, "options.sm_count %d < 0", o->sm_count);
    ctx->offline = true;
    snprintf(ctx->arch, sizeof ctx->arch, "%s", targets[t].arch);
    ctx->target.sm_count = o->sm_count ? o->sm_count : targets[t].default_sm_count;
    ctx->target.smem_per_block = targets[t].smem_per_block;
    if (ctx->target.sm_count == targets[t].default_sm_count)
        memcpy(ctx->target.resident_clusters, targets[t].resident_clusters,
               sizeof ctx->target.resident_clusters);
    return JG_OK;
}

jg_status jg_context_create(const jg_options *opt, jg_context **out)
{
    if (!out)
        return jg__fail(NULL, JG_ERR_NULL_POINTER, "out is NULL");
    *out = NULL;
    /* Fields past sm_count only with the flags that say they are there:
     * callers built against older headers pass a shorter struct. */
    jg_options o;
    memset(&o, 0, sizeof o);
    if (opt)
        memcpy(&o, opt, offsetof(jg_options, max_kernels));
    if (o.flags & JG_CONTEXT_MAX_KERNELS)
        o.max_kernels = opt->max_kernels;
    if (o.flags & JG_CONTEXT_BACKEND)
        o.backend = opt->backend;
    if (o.flags & ~(uint32_t)(JG_CONTEXT_OFFLINE | JG_CONTEXT_MAX_KERNELS | JG_CONTEXT_BACKEND |
                              JG_CONTEXT_WORKSPACE))
        return jg__fail(NULL, JG_ERR_INVALID, "options.flags 0x%x: unknown bits", o.flags);
    if ((unsigned)o.cache_mode > JG_CACHE_READWRITE)
        return jg__fail(NULL, JG_ERR_INVALID, "options.cache_mode %d is not a jg_cache_mode",
                        (int)o.cache_mode);
    if (o.max_kernels < JG_MAX_KERNELS_UNLIMITED)
        return jg__fail(NULL, JG_ERR_INVALID,
                        "options.max_kernels %d: a count, 0 (the default) or "
                        "JG_MAX_KERNELS_UNLIMITED (-1)",
                        o.max_kernels);
    if ((unsigned)o.backend > JG_BACKEND_LLVM)
        return jg__fail(NULL, JG_ERR_INVALID, "options.backend %d is not a jg_backend",
                        (int)o.backend);
    if (o.backend == JG_BACKEND_LLVM && !jg__llvm_built())
        return jg__fail(NULL, JG_ERR_UNSUPPORTED,
                        "options.backend: libjitgemm was built without LLVM (meson -Dllvm)");
    jg_context *ctx = calloc(1, sizeof *ctx);
    if (!ctx)
        return jg__fail(NULL, JG_ERR_NO_MEMORY, "allocating the context");
    pthread_mutex_init(&ctx->stats_lock, NULL);
    pthread_mutex_init(&ctx->error_lock, NULL);
    pthread_mutex_init(&ctx->trim_lock, NULL);
    if (jg__table_init(&ctx->plans, JG_DENSE_KEY_BYTES, &ctx->clock) != 0 ||
        jg__table_init(&ctx->grouped_plans, sizeof(jg__problem_key), &ctx->clock) != 0 ||
        jg__table_init(&ctx->kernels, sizeof(jg__hash128), &ctx->clock) != 0) {
        jg_context_destroy(ctx);
        return jg__fail(NULL, JG_ERR_NO_MEMORY, "allocating the caches");
    }
    setup_log(ctx, &o);
    ctx->max_kernels = o.max_kernels > 0   ? (size_t)o.max_kernels
                       : o.max_kernels < 0 ? 0
                                           : max_kernels_from_env(&ctx->log);
    jg_status st = (o.flags & JG_CONTEXT_OFFLINE) ? setup_offline(ctx, &o) : bind_device(ctx, &o);
    if (st != JG_OK) {
        jg_context_destroy(ctx);
        return st;
    }
    snprintf(ctx->target.arch_name, sizeof ctx->target.arch_name, "%s", ctx->arch);
    if (!ctx->offline)
        jg__probe_resident_clusters(ctx);
    read_forced_tile(ctx);
    /* JITGEMM_CLUSTER: the cluster size where the tile allows it;
     * JITGEMM_N_STACK: dense tiles stacked along N by this many CTAs of a
     * cluster (sharing A), where a tile allows it (1: never) */
    read_forced_124(ctx, "JITGEMM_CLUSTER", "clusters of", &ctx->target.force_cluster);
    read_forced_124(ctx, "JITGEMM_N_STACK", "dense tiles stacked along N by",
                    &ctx->target.force_n_stack);
    read_forced_ffma_reuse(ctx);
    read_forced_shape(ctx);
    /* Without JG_CONTEXT_WORKSPACE no plan splits K through a workspace
     * (the caller's args may lack the fields): as JITGEMM_SPLIT_WS=0. */
    if (!(o.flags & JG_CONTEXT_WORKSPACE)) {
        if (ctx->target.force_split_ws > 1 || ctx->target.force_stream_k > 1)
            jg__logf(&ctx->log, JG_LOG_WARN, JG_LOGC_PLAN,
                     "JITGEMM_SPLIT_WS and JITGEMM_STREAM_K ignored: the context was made "
                     "without JG_CONTEXT_WORKSPACE");
        ctx->target.force_split_ws = 1;
        ctx->target.force_stream_k = 1;
    }
    const char *tune = getenv("JITGEMM_TUNE");
    /* (not with JITGEMM_SPLIT_WS=S: the tuner launches without a workspace) */
    ctx->tune = !ctx->offline && tune && !strcmp(tune, "1") && ctx->target.force_split_ws <= 1 &&
                ctx->target.force_stream_k <= 1;
    ctx->target.arch = ctx->target.arch_name;
    jg_cache_mode mode = o.cache_mode ? o.cache_mode : cache_mode_from_env(&ctx->log);
    jg__disk_open(&ctx->disk, o.cache_dir, mode, &ctx->log);
    setup_dump(ctx);
    ctx->backend = o.backend ? o.backend : backend_from_env(&ctx->log);
    char backend_id[256];
    jg__backend_id(ctx->backend, backend_id, sizeof backend_id);
    ctx->salt = jg__salt_make(ctx->arch, backend_id);
    *out = ctx;
    return JG_OK;
}

static void plan_free(void *p) { jg__plan_free(p); }

void jg_context_destroy(jg_context *ctx)
{
    if (!ctx)
        return;
    jg__table_destroy(&ctx->plans, plan_free);
    jg__table_destroy(&ctx->grouped_plans, plan_free);
    bool pushed = ctx->cu && ctx->cu_ctx && ctx->cu->cuCtxPushCurrent(ctx->cu_ctx) == CUDA_SUCCESS;
    jg__table_destroy(&ctx->kernels, jg__kernel_free);
    jg__kernels_retire(ctx, true);
    if (pushed) {
        CUcontext popped;
        ctx->cu->cuCtxPopCurrent(&popped);
    }
    pthread_mutex_destroy(&ctx->stats_lock);
    pthread_mutex_destroy(&ctx->error_lock);
    pthread_mutex_destroy(&ctx->trim_lock);
    free(ctx);
}

jg_status jg_context_get_stats(const jg_context *ctx, jg_context_stats *out)
{
    jg_context *c = (jg_context *)ctx; /* the stats and error locks change */
    if (!ctx || !out)
        return jg__fail(c, JG_ERR_NULL_POINTER, "%s is NULL", ctx ? "out" : "ctx");
    pthread_mutex_lock(&c->stats_lock);
    *out = c->stats;
    out->plans_memory = __atomic_load_n(&c->stats.plans_memory, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&c->stats_lock);
    return JG_OK;
}

jg_status jg_context_get_cache_stats(const jg_context *ctx, jg_cache_stats *out)
{
    jg_context *c = (jg_context *)ctx; /* locks change */
    if (!ctx || !out)
        return jg__fail(c, JG_ERR_NULL_POINTER, "%s is NULL", ctx ? "out" : "ctx");
    memset(out, 0, sizeof *out);
    out->max_kernels = c->max_kernels ? (int64_t)c->max_kernels : JG_MAX_KERNELS_UNLIMITED;
    out->kernels = jg__table_count(&c->kernels);
    out->plans = jg__table_count(&c->plans) + jg__table_count(&c->grouped_plans);
    out->plans_held = jg__table_held(&c->plans) + jg__table_held(&c->grouped_plans);
    out->modules = __atomic_load_n(&c->cache.modules, __ATOMIC_RELAXED);
    out->modules_waiting = __atomic_load_n(&c->cache.modules_waiting, __ATOMIC_RELAXED);
    out->modules_peak = __atomic_load_n(&c->cache.modules_peak, __ATOMIC_RELAXED);
    out->module_bytes = __atomic_load_n(&c->cache.module_bytes, __ATOMIC_RELAXED);
    pthread_mutex_lock(&c->trim_lock);
    out->kernel_evictions = c->cache.kernel_evictions;
    out->plan_evictions = c->cache.plan_evictions;
    pthread_mutex_unlock(&c->trim_lock);
    return JG_OK;
}
