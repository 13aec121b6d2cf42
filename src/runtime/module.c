/* Kernels: found in memory, else on disk, else generated and compiled; then
 * loaded into the context's CUDA context. One build per key per process
 * (the memory table's claim), one compile per key across processes (the
 * disk cache's per-key lock). Evicted kernels (cache_bound.c) are unloaded
 * once their one-shot launches have finished: the driver's documentation
 * of cuModuleUnload makes later use of the module undefined and does not
 * say that it waits for launches in flight, so the library records an
 * event after each such launch and waits for it, without blocking. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "runtime/runtime.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void dump_file(jg_context *ctx, const char *name, const char *ext, const void *data,
                      size_t len)
{
    char path[4400];
    snprintf(path, sizeof path, "%s/%s.%s", ctx->dump_dir, name, ext);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len)
        jg__logf(&ctx->log, JG_LOG_WARN, JG_LOGC_COMPILE, "JITGEMM_DUMP: cannot write %s", path);
    if (f)
        fclose(f);
}

/* The LLVM backend, where the context asks for it and its catalog holds
 * the key's variant: the module image is PTX. JG_ERR_UNSUPPORTED otherwise
 * (NVRTC compiles it). */
static jg_status compile_llvm(jg_context *ctx, const jg__gemm_key *key, const char *name,
                              jg__buf *image, jg__buf *log)
{
    if (ctx->backend != JG_BACKEND_LLVM)
        return JG_ERR_UNSUPPORTED;
    const bool dump = ctx->dump_dir[0] != 0;
    jg__buf ir = {0};
    jg_status st = jg__llvm_compile(key, name, ctx->arch, image, dump ? &ir : NULL, log);
    if (st == JG_ERR_UNSUPPORTED) {
        jg__logf(&ctx->log, JG_LOG_INFO, JG_LOGC_COMPILE,
                 "%s: the LLVM backend has no variant for it: compiling it with NVRTC", name);
        log->len = 0;
    } else if (dump) {
        jg__buf src = {0};
        jg__emit_gemm_spec(key, true, &src);
        if (!src.failed)
            dump_file(ctx, name, "llvm.cu", src.data, src.len);
        if (ir.len)
            dump_file(ctx, name, "ll", ir.data, ir.len);
        if (st == JG_OK) /* without its NUL */
            dump_file(ctx, name, "ptx", image->data, image->len - 1);
        jg__buf_free(&src);
    }
    jg__buf_free(&ir);
    return st;
}

/* Whether a module image is a cubin (an ELF file), not PTX. */
static bool is_cubin(const jg__buf *image)
{
    return image->len >= 4 && !memcmp(image->data, "\x7f" "ELF", 4);
}

/* NVRTC: the emitted source to a cubin. */
static jg_status compile_nvrtc(jg_context *ctx, const jg__gemm_key *key, const char *name,
                               jg__buf *cubin, jg__buf *log)
{
    jg__buf src = {0}, ptx = {0};
    jg__emit_gemm(key, name, &src);
    if (src.failed) {
        jg__buf_free(&src);
        return JG_ERR_NO_MEMORY;
    }
    jg_status st = jg__nvrtc_compile(src.data, src.len, name, ctx->arch, cubin,
                                     ctx->dump_dir[0] ? &ptx : NULL, log);
    if (ctx->dump_dir[0]) {
        dump_file(ctx, name, "cu", src.data, src.len);
        if (ptx.len) /* NVRTC's PTX size counts its terminating NUL */
            dump_file(ctx, name, "ptx", ptx.data, ptx.data[ptx.len - 1] ? ptx.len : ptx.len - 1);
    }
    jg__buf_free(&src);
    jg__buf_free(&ptx);
    return st;
}

static jg_status compile(jg_context *ctx, const jg__gemm_key *key, const char *name, jg__buf *cubin)
{
    jg__buf log = {0};
    double t0 = now_ms();
    const char *by = "LLVM";
    jg_status st = compile_llvm(ctx, key, name, cubin, &log);
    if (st == JG_ERR_UNSUPPORTED) {
        by = "NVRTC";
        st = compile_nvrtc(ctx, key, name, cubin, &log);
    }
    if (st == JG_OK && is_cubin(cubin)) {
        /* before the dump and the cache: every copy of the kernel is the edited one */
        const int n = jg__sass_edit(key, name, cubin);
        if (n < 0)
            jg__logf(&ctx->log, JG_LOG_WARN, JG_LOGC_COMPILE,
                     "%s: no SASS section found: its FFMAs left as compiled", name);
        else if (n > 0)
            jg__logf(&ctx->log, JG_LOG_DEBUG, JG_LOGC_COMPILE,
                     "%s: %d FFMAs keep their scale in the reuse cache", name, n);
    }
    double ms = now_ms() - t0;
    pthread_mutex_lock(&ctx->stats_lock);
    ctx->stats.compile_ms += ms;
    if (st == JG_OK)
        ctx->stats.plans_compiled++;
    else
        ctx->stats.compile_failures++;
    pthread_mutex_unlock(&ctx->stats_lock);
    if (ctx->dump_dir[0] && st == JG_OK && is_cubin(cubin))
        dump_file(ctx, name, "cubin", cubin->data, cubin->len);
    if (st == JG_OK)
        jg__logf(&ctx->log, JG_LOG_INFO, JG_LOGC_COMPILE,
                 "compiled %s for %s with %s in %.1f ms (%zu bytes)", name, ctx->arch, by, ms,
                 cubin->len);
    else if (st == JG_ERR_NO_MEMORY)
        st = jg__fail(ctx, st, "compiling %s: out of memory", name);
    else
        st = jg__fail(ctx, st, "compiling %s for %s with %s:\n%s", name, ctx->arch, by,
                      log.data ? log.data : "(no log)");
    jg__buf_free(&log);
    return st;
}

/* How many clusters of `cluster` CTAs of function fn (`threads` threads,
 * `smem` bytes of dynamic shared memory) the GPU holds at once (GPCs need
 * not split evenly into clusters), asked with the context current; 0
 * without an answer. */
static uint32_t query_resident_clusters(const jg__driver *cu, CUfunction fn, uint32_t cluster,
                                        uint32_t threads, uint32_t smem, uint32_t sms)
{
    CUlaunchAttribute attr;
    memset(&attr, 0, sizeof attr);
    attr.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    attr.value.clusterDim.x = cluster;
    attr.value.clusterDim.y = attr.value.clusterDim.z = 1;
    CUlaunchConfig lc;
    memset(&lc, 0, sizeof lc);
    lc.gridDimX = sms / cluster * cluster;
    lc.gridDimY = lc.gridDimZ = 1;
    lc.blockDimX = threads;
    lc.blockDimY = lc.blockDimZ = 1;
    lc.sharedMemBytes = smem;
    lc.attrs = &attr;
    lc.numAttrs = 1;
    int n = 0;
    if (cu->cuOccupancyMaxActiveClusters(&n, fn, &lc) != CUDA_SUCCESS || n < 1)
        return 0;
    return (uint32_t)n;
}

/* An empty kernel, which the driver compiles from PTX, for asking the GPU
 * about clusters before any kernel of ours is compiled. */
static const char probe_ptx[] = ".version 8.0\n"
                                ".target sm_90a\n"
                                ".address_size 64\n"
                                ".visible .entry jg_cluster_probe()\n"
                                "{\n"
                                "    ret;\n"
                                "}\n";

void jg__probe_resident_clusters(jg_context *ctx)
{
    const jg__driver *cu = ctx->cu;
    jg__target *t = &ctx->target;
    CUmodule mod = NULL;
    CUfunction fn;
    const uint32_t smem = (uint32_t)t->smem_per_block, sms = (uint32_t)t->sm_count;
    if (cu->cuModuleLoadData(&mod, probe_ptx) != CUDA_SUCCESS) {
        jg__logf(&ctx->log, JG_LOG_DEBUG, JG_LOGC_PLAN,
                 "the cluster probe's PTX did not load: planning with SMs / cluster size");
        return;
    }
    if (cu->cuModuleGetFunction(&fn, mod, "jg_cluster_probe") == CUDA_SUCCESS &&
        cu->cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, (int)smem) ==
            CUDA_SUCCESS) {
        char line[128];
        int len = 0;
        for (uint32_t c = 2; c < JG_ARRAY_LEN(t->resident_clusters); ++c) {
            const uint32_t n = query_resident_clusters(cu, fn, c, 128, smem, sms);
            t->resident_clusters[c] = (uint16_t)(n > UINT16_MAX ? UINT16_MAX : n);
            if (len >= 0 && (size_t)len < sizeof line)
                len += snprintf(line + len, sizeof line - (size_t)len, " %u:%u", c, n);
        }
        jg__logf(&ctx->log, JG_LOG_INFO, JG_LOGC_PLAN,
                 "clusters resident at once (size:count, %u SMs):%s", sms, line);
    }
    cu->cuModuleUnload(mod);
}

/* Loads a cubin into the context's CUDA context and prepares the function
 * (for a GEMM in clusters, also asks how many clusters fit at once). */
static jg_status load(jg_context *ctx, jg__kernel *k, const jg__gemm_key *key,
                      const jg__buf *cubin)
{
    const jg__driver *cu = ctx->cu;
    CUresult r = cu->cuCtxPushCurrent(ctx->cu_ctx);
    if (r != CUDA_SUCCESS)
        return jg__fail_cu(ctx, "cuCtxPushCurrent", r);
    const char *call = "cuModuleLoadData";
    char jit_log[4096] = "";
    if (is_cubin(cubin)) {
        r = cu->cuModuleLoadData(&k->module, cubin->data);
    } else { /* the LLVM backend's PTX: the driver compiles it, whole program */
        call = "cuModuleLoadDataEx(PTX)";
        CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
        void *values[] = {jit_log, (void *)(uintptr_t)sizeof jit_log};
        r = cu->cuModuleLoadDataEx(&k->module, cubin->data, 2, opts, values);
    }
    if (r == CUDA_SUCCESS) {
        call = "cuModuleGetFunction";
        r = cu->cuModuleGetFunction(&k->fn, k->module, k->name);
    }
    const bool split = key->kind == 1 && (key->flags & JG_GEMM_FP32_EXACT);
    if (r == CUDA_SUCCESS && (key->cfg.pre || split)) { /* quantizer, pack keys: cfg all zero */
        char first[sizeof k->name + sizeof JG_SPLIT_SUFFIX];
        snprintf(first, sizeof first, "%s%s", k->name, split ? JG_SPLIT_SUFFIX : JG_PRE_DQ_SUFFIX);
        r = cu->cuModuleGetFunction(&k->fn_pre, k->module, first);
    }
    if (r == CUDA_SUCCESS) {
        call = "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)";
        r = cu->cuFuncSetAttribute(k->fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                   (int)k->smem_bytes);
    }
    if (r == CUDA_SUCCESS && key->cfg.cluster > 1) /* quantizer keys: cfg all zero */
        k->resident_clusters =
            query_resident_clusters(cu, k->fn, key->cfg.cluster, jg__gemm_threads(&key->cfg),
                                    k->smem_bytes, (uint32_t)ctx->target.sm_count);
    if (r != CUDA_SUCCESS && k->module) {
        cu->cuModuleUnload(k->module);
        k->module = NULL;
    }
    CUcontext popped;
    cu->cuCtxPopCurrent(&popped);
    if (r != CUDA_SUCCESS && jit_log[0])
        return jg__fail(ctx, JG_ERR_CUDA, "%s (%s): %s", call, k->name, jit_log);
    return r == CUDA_SUCCESS ? JG_OK : jg__fail_cu(ctx, call, r);
}

/* A module loaded (bytes of its cubin) or unloaded (0): the counts of
 * jg_cache_stats. */
static void count_module(jg_context *ctx, size_t bytes, bool loaded)
{
    jg_cache_stats *c = &ctx->cache;
    if (!loaded) {
        __atomic_sub_fetch(&c->modules, 1, __ATOMIC_RELAXED);
        __atomic_sub_fetch(&c->module_bytes, bytes, __ATOMIC_RELAXED);
        return;
    }
    uint64_t now = __atomic_add_fetch(&c->modules, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&c->module_bytes, bytes, __ATOMIC_RELAXED);
    uint64_t peak = __atomic_load_n(&c->modules_peak, __ATOMIC_RELAXED);
    while (peak < now && !__atomic_compare_exchange_n(&c->modules_peak, &peak, now, true,
                                                      __ATOMIC_RELAXED, __ATOMIC_RELAXED))
        ;
}

static jg_status build(jg_context *ctx, const jg__gemm_key *key, jg__hash128 h, jg__kernel **out)
{
    jg__kernel *k = calloc(1, sizeof *k);
    if (!k)
        return jg__fail(ctx, JG_ERR_NO_MEMORY, "allocating a kernel");
    pthread_mutex_init(&k->marks_lock, NULL);
    k->key = h;
    k->cu = ctx->cu;
    k->smem_bytes = key->kind == JG_KIND_QUANT || key->kind == JG_KIND_QUANT_NVFP4 ||
                            key->kind == JG_KIND_PACK
                        ? 0
                        : jg__gemm_smem_bytes(&key->cfg, key->d_type, key->scale);
    jg__gemm_kernel_name(key, ctx->arch, k->name);
    jg__buf cubin = {0};
    jg_status st = JG_OK;
    k->origin = JG_ORIGIN_DISK;
    if (!jg__disk_read(&ctx->disk, ctx->arch, h, &cubin, &ctx->log)) {
        /* Another process may be compiling this key: wait for its lock,
         * then look again before compiling ourselves. */
        int lock = jg__disk_lock(&ctx->disk, ctx->arch, h, &ctx->log);
        if (lock < 0 || !jg__disk_read(&ctx->disk, ctx->arch, h, &cubin, &ctx->log)) {
            k->origin = JG_ORIGIN_COMPILED;
            st = compile(ctx, key, k->name, &cubin);
            if (st == JG_OK)
                jg__disk_write(&ctx->disk, ctx->arch, h, k->name, cubin.data, cubin.len, &ctx->log);
        }
        jg__disk_unlock(lock);
    }
    if (st == JG_OK && k->origin == JG_ORIGIN_DISK) {
        pthread_mutex_lock(&ctx->stats_lock);
        ctx->stats.plans_disk++;
        pthread_mutex_unlock(&ctx->stats_lock);
    }
    if (st == JG_OK && !ctx->offline && (st = load(ctx, k, key, &cubin)) == JG_OK) {
        k->image_bytes = cubin.len;
        count_module(ctx, k->image_bytes, true);
    }
    jg__buf_free(&cubin);
    if (st != JG_OK) {
        pthread_mutex_destroy(&k->marks_lock);
        free(k);
        return st;
    }
    *out = k;
    return JG_OK;
}

jg__hash128 jg__kernel_hash(const jg_context *ctx, const jg__gemm_key *key)
{
    return jg__key_hash(&ctx->salt, key, sizeof *key);
}

jg_status jg__kernel_get(jg_context *ctx, const jg__gemm_key *key, jg__kernel **out)
{
    jg__hash128 h = jg__kernel_hash(ctx, key);
    jg_status st;
    jg__table_entry *e;
    jg__kernel *k = jg__table_claim(&ctx->kernels, &h, &e, &st);
    if (st != JG_OK)
        return jg__fail(ctx, st, "kernel table");
    if (!k) {
        st = build(ctx, key, h, &k);
        if (st != JG_OK) {
            jg__table_abandon(&ctx->kernels, e);
            return st;
        }
        k->entry = e;
        jg__table_publish(&ctx->kernels, e, k); /* the caller trims (cache_bound.c) */
    }
    *out = k;
    return JG_OK;
}

void jg__kernel_release(jg__kernel *k) { jg__table_release(k->entry); }

/* The mark for a one-shot launch on stream `id`: the stream's own, else an
 * unused one, else one whose launches have finished; NULL when every mark
 * follows launches still in flight on other streams. Under marks_lock. */
static jg__launch_mark *pick_mark(const jg__driver *cu, jg__kernel *k, unsigned long long id)
{
    jg__launch_mark *unused = NULL, *finished = NULL;
    for (int i = 0; i < JG_KERNEL_MARKS; ++i) {
        jg__launch_mark *m = &k->marks[i];
        if (!m->done)
            unused = unused ? unused : m;
        else if (m->stream == id)
            return m;
    }
    for (int i = 0; !unused && !finished && i < JG_KERNEL_MARKS; ++i)
        if (cu->cuEventQuery(k->marks[i].done) == CUDA_SUCCESS)
            finished = &k->marks[i];
    return unused ? unused : finished;
}

/* An event of the context's CUDA context, whichever is current. */
static bool create_event(const jg_context *ctx, CUevent *out)
{
    const jg__driver *cu = ctx->cu;
    if (cu->cuCtxPushCurrent(ctx->cu_ctx) != CUDA_SUCCESS)
        return false;
    const bool ok = cu->cuEventCreate(out, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS;
    CUcontext popped;
    cu->cuCtxPopCurrent(&popped);
    if (!ok)
        *out = NULL;
    return ok;
}

bool jg__kernel_track(jg_context *ctx, jg__kernel *k, jg_stream stream)
{
    if (ctx->offline || !ctx->max_kernels)
        return true;
    const jg__driver *cu = ctx->cu;
    CUstream s = (CUstream)stream;
    CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
    unsigned long long id = 0;
    if (cu->cuStreamIsCapturing(s, &capture) != CUDA_SUCCESS ||
        capture != CU_STREAM_CAPTURE_STATUS_NONE || cu->cuStreamGetId(s, &id) != CUDA_SUCCESS)
        return false;
    pthread_mutex_lock(&k->marks_lock);
    jg__launch_mark *m = pick_mark(cu, k, id);
    bool ok = m && (m->done || create_event(ctx, &m->done));
    /* A failed record leaves the mark's earlier record in place: it still
     * follows what it followed, and this launch is kept instead. */
    ok = ok && cu->cuEventRecord(m->done, s) == CUDA_SUCCESS;
    if (ok)
        m->stream = id;
    pthread_mutex_unlock(&k->marks_lock);
    return ok;
}

/* Whether every one-shot launch followed on k has finished. An event that
 * cannot be asked (an error other than "not ready") counts as unfinished:
 * the module then stays until jg_context_destroy. */
static bool launches_finished(const jg__kernel *k)
{
    for (int i = 0; i < JG_KERNEL_MARKS; ++i)
        if (k->marks[i].done && k->cu->cuEventQuery(k->marks[i].done) != CUDA_SUCCESS)
            return false;
    return true;
}

/* Destroys the marks' events and unloads the module: the context current. */
static void unload(jg__kernel *k)
{
    for (int i = 0; i < JG_KERNEL_MARKS; ++i)
        if (k->marks[i].done)
            k->cu->cuEventDestroy(k->marks[i].done);
    if (k->module)
        k->cu->cuModuleUnload(k->module);
    pthread_mutex_destroy(&k->marks_lock);
    free(k);
}

void jg__kernels_retire(jg_context *ctx, bool all)
{
    if (!ctx->retired)
        return;
    const jg__driver *cu = ctx->cu;
    bool pushed = cu && ctx->cu_ctx && cu->cuCtxPushCurrent(ctx->cu_ctx) == CUDA_SUCCESS;
    if (cu && !pushed && !all) /* cannot unload now: the next trim tries again */
        return;
    /* Unloading is no stream work, but in the default (global) capture mode
     * the driver may refuse calls it deems unsafe while any thread captures
     * a CUDA graph: relaxed for the unloads. */
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_RELAXED;
    const bool relaxed = pushed && cu->cuThreadExchangeStreamCaptureMode(&mode) == CUDA_SUCCESS;
    for (jg__kernel **link = &ctx->retired; *link;) {
        jg__kernel *k = *link;
        if (!all && !launches_finished(k)) {
            link = &k->next;
            continue;
        }
        *link = k->next;
        if (k->module)
            count_module(ctx, k->image_bytes, false);
        __atomic_sub_fetch(&ctx->cache.modules_waiting, 1, __ATOMIC_RELAXED);
        unload(k);
    }
    if (relaxed)
        cu->cuThreadExchangeStreamCaptureMode(&mode); /* the thread's mode as it was */
    if (pushed) {
        CUcontext popped;
        cu->cuCtxPopCurrent(&popped);
    }
}

/* Called by jg_context_destroy with the context's CUDA context current. */
void jg__kernel_free(void *p) { unload(p); }
