/* The runtime layer's declarations (src/runtime/): validation, NVRTC, the
 * caches, the driver, contexts, plans and launches. It builds on the LLVM
 * backend, code generation and the utilities. Not installed. */
#ifndef JG_RUNTIME_H
#define JG_RUNTIME_H

#include <pthread.h>

#include <cuda.h>

#include "codegen/codegen.h"
#include "llvm/llvm.h"

/* ---- driver.c: libcuda.so.1 opened with dlopen ------------------------- */

#define JG_DRIVER_FUNCS(X)                                                                 \
    X(cuInit, CUresult, (unsigned int))                                                    \
    X(cuDriverGetVersion, CUresult, (int *))                                               \
    X(cuGetErrorName, CUresult, (CUresult, const char **))                                 \
    X(cuGetErrorString, CUresult, (CUresult, const char **))                               \
    X(cuCtxGetCurrent, CUresult, (CUcontext *))                                            \
    X(cuCtxGetDevice, CUresult, (CUdevice *))                                              \
    X(cuCtxPushCurrent, CUresult, (CUcontext))                                             \
    X(cuCtxPopCurrent, CUresult, (CUcontext *))                                            \
    X(cuDeviceGetAttribute, CUresult, (int *, CUdevice_attribute, CUdevice))               \
    X(cuDeviceGetName, CUresult, (char *, int, CUdevice))                                  \
    X(cuModuleLoadData, CUresult, (CUmodule *, const void *))                              \
    X(cuModuleLoadDataEx, CUresult,                                                        \
      (CUmodule *, const void *, unsigned int, CUjit_option *, void **))                   \
    X(cuModuleUnload, CUresult, (CUmodule))                                                \
    X(cuModuleGetFunction, CUresult, (CUfunction *, CUmodule, const char *))               \
    X(cuFuncSetAttribute, CUresult, (CUfunction, CUfunction_attribute, int))               \
    X(cuLaunchKernelEx, CUresult, (const CUlaunchConfig *, CUfunction, void **, void **))  \
    X(cuOccupancyMaxActiveClusters, CUresult, (int *, CUfunction, const CUlaunchConfig *)) \
    X(cuMemAlloc, CUresult, (CUdeviceptr *, size_t))                                       \
    X(cuMemFree, CUresult, (CUdeviceptr))                                                  \
    X(cuMemsetD32, CUresult, (CUdeviceptr, unsigned int, size_t))                          \
    X(cuMemsetD32Async, CUresult, (CUdeviceptr, unsigned int, size_t, CUstream))           \
    X(cuStreamCreate, CUresult, (CUstream *, unsigned int))                                \
    X(cuStreamDestroy, CUresult, (CUstream))                                               \
    X(cuEventCreate, CUresult, (CUevent *, unsigned int))                                  \
    X(cuEventDestroy, CUresult, (CUevent))                                                 \
    X(cuEventRecord, CUresult, (CUevent, CUstream))                                        \
    X(cuEventSynchronize, CUresult, (CUevent))                                             \
    X(cuEventQuery, CUresult, (CUevent))                                                   \
    X(cuStreamIsCapturing, CUresult, (CUstream, CUstreamCaptureStatus *))                  \
    X(cuStreamGetId, CUresult, (CUstream, unsigned long long *))                           \
    X(cuThreadExchangeStreamCaptureMode, CUresult, (CUstreamCaptureMode *))                \
    X(cuEventElapsedTime, CUresult, (float *, CUevent, CUevent))                           \
    X(cuTensorMapEncodeTiled, CUresult,                                                    \
      (CUtensorMap *, CUtensorMapDataType, cuuint32_t, void *, const cuuint64_t *,         \
       const cuuint64_t *, const cuuint32_t *, const cuuint32_t *, CUtensorMapInterleave, \
       CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill))

typedef struct jg__driver {
#define JG_DRIVER_FIELD_(name, ret, args) ret(*name) args;
    JG_DRIVER_FUNCS(JG_DRIVER_FIELD_)
#undef JG_DRIVER_FIELD_
} jg__driver;

/* Loads the driver once per process ($JITGEMM_LIBCUDA overrides the file
 * name). On failure returns JG_ERR_NO_DRIVER (or JG_ERR_CUDA if cuInit
 * fails) and writes why into err. */
jg_status jg__driver_get(const jg__driver **out, char *err, size_t err_len);

/* ---- error.c ------------------------------------------------------------------ */

/* Records a failure in ctx (or, for NULL, the thread's context-less slot)
 * and returns status, so callers can write `return jg__fail(...)`. */
jg_status jg__fail(jg_context *ctx, jg_status status, const char *fmt, ...) JG_PRINTF(3, 4);
/* Same for a failed driver call: "<call>: <CUDA_ERROR_NAME> (<text>)". */
jg_status jg__fail_cu(jg_context *ctx, const char *call, CUresult r);

/* ---- validate.c --------------------------------------------------- */

jg_status jg__validate_gemm(jg_context *ctx, const jg_gemm_problem *p);
jg_status jg__validate_grouped(jg_context *ctx, const jg_grouped_problem *p);
/* A size: >= 1 (JG_ERR_INVALID) and <= 2^31-1 (JG_ERR_TOO_LARGE), by name. */
jg_status jg__check_dim(jg_context *ctx, const char *name, int64_t v);
/* A scaled (FP8) launch's args.a_scale and args.b_scale: present, 4-byte aligned. */
jg_status jg__check_scales(jg_context *ctx, const float *a_scale, const float *b_scale);
/* An NVFP4 launch's block scales args.a_sf and args.b_sf: present, 16-byte aligned. */
jg_status jg__check_sf(jg_context *ctx, const void *a_sf, const void *b_sf);

/* ---- nvrtc.c ----------------------------------------------------- */

/* Compiles source to a cubin for arch. On JG_ERR_COMPILE the NVRTC log is in
 * log. PTX is returned too when ptx is non-NULL and NVRTC provides it. */
jg_status jg__nvrtc_compile(const char *src, size_t src_len, const char *name, const char *arch,
                            jg__buf *cubin, jg__buf *ptx, jg__buf *log);
/* The option string that goes into every cache key. */
const char *jg__nvrtc_options(void);
void jg__nvrtc_version(int *major, int *minor);
/* JITGEMM_NVRTC=none: compiles fail as if NVRTC were missing (version 0.0). */
bool jg__nvrtc_off(void);

/* ---- context.c ---------------------------------------------------------- */

/* What compiles a context's kernels, for its salt (jg__salt_make): NVRTC's
 * version and options, or LLVM's version, passes and catalog hash. */
void jg__backend_id(jg_backend backend, char *out, size_t len);

/* ---- cache_mem.c ---------------------------------------------------- */

typedef struct jg__table_entry jg__table_entry;

/* A hash table of fixed-size byte keys to pointers, with single-flight
 * insertion (the first thread to miss a key builds it, the others wait) and
 * holds: find and claim hand out a hold on the entry, jg__table_release
 * drops it, and only an entry nothing holds is ever evicted, the least
 * recently used first. */
typedef struct jg__table {
    pthread_rwlock_t lock;
    pthread_mutex_t wait_lock;
    pthread_cond_t done;
    jg__table_entry **buckets;
    size_t nbuckets, count, key_size;
    uint64_t *clock;    /* use stamps: shared by tables whose entries are compared */
    uint64_t own_clock; /* the clock when none is shared */
} jg__table;

/* clock: a counter shared with other tables (their stamps then compare), or
 * NULL for the table's own. */
int jg__table_init(jg__table *t, size_t key_size, uint64_t *clock);
/* Frees every value, held or not. */
void jg__table_destroy(jg__table *t, void (*free_value)(void *));
/* The value for key if built, held (*entry: the hold's entry); NULL
 * otherwise. Cheap: one read lock. */
void *jg__table_find(jg__table *t, const void *key, jg__table_entry **entry);
/* Returns the built value, held, with its entry in *entry; or NULL after
 * making the caller the builder of key (*entry: the new entry), who must
 * then publish (a value) or abandon (failure) it. Threads that claim a key
 * being built wait for it. *status: JG_ERR_NO_MEMORY on failure (NULL,
 * *entry NULL). */
void *jg__table_claim(jg__table *t, const void *key, jg__table_entry **entry, jg_status *status);
/* The builder's value; the builder keeps a hold on it. */
void jg__table_publish(jg__table *t, jg__table_entry *e, void *value);
void jg__table_abandon(jg__table *t, jg__table_entry *e);
/* Drops one hold. False, and nothing changes, when the entry has none. */
bool jg__table_release(jg__table_entry *e);
/* Entries (being built included), and ready entries with a hold. */
size_t jg__table_count(const jg__table *t);
size_t jg__table_held(jg__table *t);
/* The use stamp of the least recently used ready entry nothing holds
 * (UINT64_MAX: none), and the eviction of that entry: unlinked, its value
 * returned for the caller to free (NULL: none). */
uint64_t jg__table_lru_stamp(jg__table *t);
void *jg__table_evict(jg__table *t);

/* ---- cache_disk.c --------------------------------------------------- */

typedef struct jg__disk {
    bool enabled;  /* false: memory-only */
    bool writable;
    char dir[4096]; /* the cache root; entries in <dir>/<arch>/ */
} jg__disk;

/* Resolves and checks the cache directory (creating it 0700 when writable).
 * A directory owned by someone else or writable by group/others is refused
 * with a warning: the cache turns memory-only. */
void jg__disk_open(jg__disk *d, const char *dir_opt, jg_cache_mode mode, const jg__log *log);

/* The directory dir_opt resolves to (jg_options.cache_dir's rules), into
 * out (len >= 4096), checked as jg__disk_open checks it but never created:
 * usable, not there yet, or refused (no directory resolves, or it is unsafe;
 * why, into why). */
typedef enum jg__dir_state { JG_DIR_USABLE, JG_DIR_MISSING, JG_DIR_REFUSED } jg__dir_state;
jg__dir_state jg__disk_locate(const char *dir_opt, char *out, size_t len, char *why,
                              size_t why_len);

/* Reads the entry for (arch, key). Any damage (bad magic, version, key,
 * sizes, checksum) is a miss and logged. Returns true on a hit. */
bool jg__disk_read(const jg__disk *d, const char *arch, jg__hash128 key, jg__buf *payload,
                   const jg__log *log);
/* Writes atomically: temp file in the same directory, fsync, rename. */
bool jg__disk_write(const jg__disk *d, const char *arch, jg__hash128 key, const char *name,
                    const void *payload, size_t len, const jg__log *log);
/* Per-key lock across processes: returns an fd to pass to unlock, or -1. */
int jg__disk_lock(const jg__disk *d, const char *arch, jg__hash128 key, const jg__log *log);
void jg__disk_unlock(int fd);
/* The path of an entry (for tests and tools). */
void jg__disk_entry_path(const jg__disk *d, const char *arch, jg__hash128 key, char *out,
                         size_t len);

/* read(2)/write(2) of exactly len bytes (short transfers and EINTR retried). */
bool jg__read_all(int fd, void *buf, size_t len);
bool jg__write_all(int fd, const void *buf, size_t len);

/* On-disk header: see cache/README.md. */
#define JG_DISK_MAGIC "JGCUBIN\x1a"
#define JG_DISK_FORMAT ((uint32_t)JG_CACHE_FORMAT)

typedef struct jg__disk_header {
    char magic[8];
    uint32_t format;
    uint32_t header_size;
    uint64_t key_lo, key_hi;
    uint64_t payload_size;
    uint64_t payload_checksum; /* XXH3-64 of the payload */
    uint64_t created_unix;
    char arch[16];
    char name[128];
    uint64_t header_checksum; /* XXH3-64 of every byte above */
} jg__disk_header;

/* Every check jg__disk_read makes (header, key against the file name
 * "<32 hex>.cubin", sizes, and with verify the payload's checksum), on any
 * entry file, without counting as a use (O_NOATIME): for the cache API
 * (cache_admin.c). *hdr receives the header as read (zeroed when shorter);
 * on false *why says what is wrong ("missing" when there is no such file). */
bool jg__disk_check_file(const char *path, bool verify, jg__disk_header *hdr, const char **why);
/* The key an entry's file name "<32 hex digits>.cubin" (at the end of path)
 * says it holds; false for any other name. */
bool jg__disk_key_from_path(const char *path, jg__hash128 *key);

/* ---- kernels, plans, context --------------------------------------- */

/* An event recorded on a stream after the last one-shot launch (jg_gemm,
 * jg_grouped, jg_quantize_*) of a kernel there: its module is not unloaded
 * before the event completes (jg__kernel_track). */
typedef struct jg__launch_mark {
    unsigned long long stream; /* cuStreamGetId: unique for the process's life */
    CUevent done;              /* NULL: the mark is unused */
} jg__launch_mark;

#define JG_KERNEL_MARKS 4 /* streams a kernel's one-shot launches may be in flight on at once */

typedef struct jg__kernel {
    const jg__driver *cu; /* to unload the module */
    jg__table_entry *entry; /* in the context's kernel table: plans hold it there */
    CUmodule module;   /* NULL in an offline context */
    CUfunction fn;
    CUfunction fn_pre; /* the module's first pass: cfg.pre's dequantization (JG_PRE_DQ_SUFFIX),
                        * JG_GEMM_FP32_EXACT's split (JG_SPLIT_SUFFIX) */
    uint32_t smem_bytes;
    /* clusters (of more than one CTA) resident at once, by the driver when
     * the module was loaded; 0: not asked (cluster 1, offline, or no answer) */
    uint32_t resident_clusters;
    jg_origin origin;
    jg__hash128 key;
    char name[128];
    size_t image_bytes; /* the loaded cubin's size (0 offline) */
    bool kept;          /* a captured one-shot call holds it for the context's life */
    pthread_mutex_t marks_lock;
    jg__launch_mark marks[JG_KERNEL_MARKS];
    struct jg__kernel *next; /* the context's evicted kernels (jg_context.retired) */
} jg__kernel;

#define JG_TMAP_SLOTS 4
#define JG_LIST_PTRS 6 /* a list plan's pointers per group: a, b, c, d, a_sf, b_sf */

/* Tensor maps depend on pointers: the last few sets are kept per plan. */
typedef struct jg__tmap_slot {
    const void *a, *b, *d;
    const void *a_sf, *b_sf; /* NVFP4 plans; NULL otherwise */
    const void *ws;          /* exact FP32 plans: the workspace A and B are read from */
    int64_t m;
    uint64_t stamp;
    jg_tmap ta, tb, td;
    jg_tmap tsa, tsb; /* NVFP4 row-major scales */
    jg_soft_kargs soft; /* plans with soft operands: their maps and modes for these pointers */
} jg__tmap_slot;

struct jg_plan {
    jg_context *ctx;
    jg__table_entry *entry; /* in the context's plan table; NULL: the tuner's own plan */
    bool kept;              /* a captured one-shot call holds it for the context's life */
    jg__problem_key problem;
    jg__gemm_config cfg;
    jg__kernel *kernel;
    uint32_t threads, grid; /* grid for problem.m */
    pthread_mutex_t tmap_lock;
    uint64_t tmap_clock;
    jg__tmap_slot tmaps[JG_TMAP_SLOTS];
    /* Grouped plans: the parameter block (JG_LIST_SIZE(groups) bytes, NVFP4
     * JG_LIST_NVFP4_SIZE; cfg.pre: the pre-pass's JG_PRE_DQ_SIZE after it)
     * built for the pointer set in list_ptrs (a, b, c, d, and NVFP4's a_sf,
     * b_sf per group) and list_ws; valid once list_ready. */
    unsigned char *list_params;
    /* Clusters (CTAs when the cluster is 1) resident at once: the persistent
     * grid's limit (cuOccupancyMaxActiveClusters for clusters of 2). */
    uint32_t max_clusters;
    const void *list_ptrs[JG_LIST_PTRS][JG_GROUPED_MAX_GROUPS];
    const void *list_ws; /* cfg.pre: the workspace the block's activation map reads */
    bool list_ready;
    uint64_t workspace_bytes; /* each launch's (cfg.pre, exact FP32; packed: problem.m's), else 0 */
    uint64_t split_counts;    /* cfg.split_ws: the counts a launch zeroes at the workspace's
                               * start (the tiles', stream-K's CTAs' flags), the partial sums
                               * from jg__split_ws_parts_at(split_counts) */
    uint32_t pre_grid;        /* cfg.pre: the pre-pass's CTAs per group (its tallest's) */
    /* Dense plans whose A or B may take soft loads (jg__pack_operands): the
     * plan of the aligned GEMM over their copies in a caller's workspace
     * (owned by this one, in no table) and the pack kernel (held); NULL
     * for other plans and the tuner's. */
    struct jg_plan *packed;
    jg__kernel *pack;
    /* Dense plans that split K through a workspace (cfg.split_ws): the
     * plan a launch without one (or with one too small) runs instead, the
     * planner's without that split (owned by this one, in no table). */
    struct jg_plan *unsplit;
};

struct jg_context {
    const jg__driver *cu;   /* NULL when offline */
    CUcontext cu_ctx;
    CUdevice device;
    bool offline;
    bool tune; /* JITGEMM_TUNE=1: time the planner's best candidates once per problem */
    jg_backend backend; /* JG_BACKEND_NVRTC or JG_BACKEND_LLVM */
    jg__target target;
    char arch[16];
    jg__salt salt;
    jg__log log;
    jg__disk disk;
    char dump_dir[4096];    /* JITGEMM_DUMP, "" when off */
    /* jg__problem_key -> jg_plan*. Dense keys are compared and hashed up to
     * group_m only (JG_DENSE_KEY_BYTES): the launch path hashes 80 bytes,
     * not 600. */
    jg__table plans;
    jg__table grouped_plans;
    jg__table kernels;      /* jg__hash128 -> jg__kernel* */
    /* The memory cache's bound (jg__cache_trim): at most max_kernels
     * kernels and as many plans, held ones aside; 0: none. */
    size_t max_kernels;
    uint64_t clock;            /* the three tables' use stamps */
    pthread_mutex_t trim_lock; /* one trim at a time; guards retired and the evictions */
    jg__kernel *retired;       /* evicted kernels whose module waits for launches */
    jg_cache_stats cache;      /* modules, module_bytes, modules_peak, modules_waiting
                                * (atomics) and the evictions; the rest is counted when asked */
    pthread_mutex_t stats_lock;
    jg_context_stats stats;
    pthread_mutex_t error_lock;
    char last_error[8192];
};

/* module.c: finds or builds the kernel for a key (memory, disk, NVRTC),
 * held for the caller: jg__kernel_release lets go of it. The caller trims
 * the cache (jg__cache_trim) once it is done building. */
jg_status jg__kernel_get(jg_context *ctx, const jg__gemm_key *key, jg__kernel **out);
/* Fills ctx->target.resident_clusters from the driver (context current);
 * leaves zeros where it cannot, logged. */
void jg__probe_resident_clusters(jg_context *ctx);
void jg__kernel_release(jg__kernel *k);
/* The cache key of a kernel in this context (what jg_plan_info.key_hash shows). */
jg__hash128 jg__kernel_hash(const jg_context *ctx, const jg__gemm_key *key);
/* After a one-shot call (jg_gemm, jg_grouped, jg_quantize_*) may have
 * launched k on stream: records an event there, which the module outlives
 * once evicted. False when the launch cannot be followed so (the stream is
 * capturing a CUDA graph, which may launch the kernel at any later time;
 * the stream's id or an event cannot be had; launches in flight on more
 * than JG_KERNEL_MARKS other streams): the call's hold must then stay. True
 * at once where nothing is unloaded before jg_context_destroy (offline, or
 * no bound). */
bool jg__kernel_track(jg_context *ctx, jg__kernel *k, jg_stream stream);
/* Unloads and frees the evicted kernels (ctx->retired) whose followed
 * launches have finished; all: every one (jg_context_destroy). Under
 * trim_lock. */
void jg__kernels_retire(jg_context *ctx, bool all);
void jg__kernel_free(void *kernel);


/* tensormap.c: a row-major [rows, cols] matrix with row stride ld elements,
 * read or written in boxes of box_rows x box_cols; box_cols * size bytes is
 * also the swizzle span (16: none, 32, 64, 128). dtype a jg_dtype, or
 * JG__TMAP_TF32: FP32 elements that TMA rounds to TF32 as it loads them
 * (a TFLOAT32 map; wgmma would truncate them). */
#define JG__TMAP_TF32 0x80u
jg_status jg__tmap_encode_2d(jg_context *ctx, jg_tmap *out, uint32_t dtype, const void *ptr,
                             uint64_t rows, uint64_t cols, uint64_t ld, uint32_t box_rows,
                             uint32_t box_cols);

/* launch.c */
jg_status jg__gemm_launch(jg_plan *plan, const jg_gemm_args *args, jg_stream stream);
/* A plan with a packed alternative (plan->packed): whether a launch of m
 * rows with these args packs (a workspace 16-byte aligned and large enough
 * for m, and a packed operand whose pointer or rows TMA cannot take), and
 * that launch: the pack kernel, then the packed plan's GEMM over the
 * copies, on stream (ka: the pack's arguments, which jg__pack_wanted
 * filled). Read args->workspace only for callers of the 0.7
 * header or later (jg_gemm_args ended before it in 0.6). */
bool jg__pack_wanted(const jg_plan *plan, const jg_gemm_args *args, int64_t m,
                     jg_pack_kargs *ka);
jg_status jg__pack_launch(jg_plan *plan, const jg_gemm_args *args, jg_pack_kargs *ka,
                          jg_stream stream);
/* cuLaunchKernelEx of one kernel with one parameter block (a cluster
 * attribute when cluster > 1); logs on JG_LOGC_LAUNCH. */
jg_status jg__launch_kernel(jg_context *ctx, const jg__kernel *k, uint32_t grid,
                            uint32_t threads, uint32_t cluster, void *kargs, jg_stream stream);

/* quantize.c: a grid for `units` threads of work, capped at 8 CTAs per SM
 * (the kernels loop); and the three launches of a quantization that needs
 * the tensor's amax first: scale[0] zeroed, phase 0 (amax over `elements`),
 * phase 1 (quantize, on quantize_grid CTAs), phase 2 (the scale). */
uint32_t jg__quant_grid(const jg_context *ctx, uint64_t units);
/* The kernel for a validated quantization's key (compiled or cached), held
 * (the caller ends the hold with jg__oneshot_done after its launches), and
 * its arguments; JG_ERR_OFFLINE in an offline context, after compiling.
 * sf: the NVFP4 block scales (NULL for e4m3: its callers' args may end
 * before that field). */
jg_status jg__quant_prepare(jg_context *ctx, const jg__gemm_key *key, const jg_quant_problem *p,
                            const jg_quant_args *a, void *sf, jg__kernel **k, jg_quant_kargs *ka);
jg_status jg__quant_phases(jg_context *ctx, const jg__kernel *k, jg_quant_kargs *ka,
                           uint64_t elements, uint32_t quantize_grid, jg_stream stream);

/* ---- cache_bound.c ---------------------------------------------------------- */

/* The context's bound (jg_options.max_kernels): evicts the least recently
 * used plans and kernels nothing holds until each table is within it, and
 * unloads evicted kernels whose one-shot launches have finished. Called
 * after every insertion and release (by the callers of cache_mem.c's and
 * module.c's functions, which never call it: it calls them); thread-safe. */
void jg__cache_trim(jg_context *ctx);
/* Ends a one-shot call's hold on a plan's or kernel's table entry e after
 * its launches of the n kernels ks on stream (st: the call's status; JG_OK
 * and JG_ERR_CUDA may have launched): released once all are followed, else
 * kept for the context's life, once (*kept). */
void jg__oneshot_done(jg_context *ctx, jg__kernel *const *ks, size_t n, jg__table_entry *e,
                      bool *kept, jg_stream stream, jg_status st);

/* ---- tune.c ---------------------------------------------------------- */

/* JITGEMM_TUNE: the configuration for a dense problem, from the disk cache's
 * record of an earlier tuning, else by timing the planner's best candidates
 * on the GPU (scratch buffers, a private stream, synchronized) and recording
 * the fastest. Returns JG_ERR_UNSUPPORTED when it cannot tune (offline,
 * grouped, out of memory): the caller keeps the planner's choice. */
jg_status jg__tune(jg_context *ctx, const jg__problem_key *pk, jg__gemm_config *out);

/* ---- plan.c ---------------------------------------------------------- */

/* A plan for a given kernel key (the tuner's candidates, and gemm.c's
 * build_plan): the kernel found or built, launch geometry, the grouped
 * parameter block. */
jg_status jg__plan_build(jg_context *ctx, const jg__problem_key *pk, const jg__gemm_key *key,
                         jg_plan **out);
void jg__plan_free(jg_plan *plan);

/* ---- launch.c ----------------------------------------------------------- */

jg_status jg__grouped_launch(jg_plan *plan, const jg_grouped_args *args, jg_stream stream);
jg_status jg__device_grouped_launch(jg_plan *plan, const jg_grouped_args *args, jg_stream stream);
uint32_t jg__gemm_grid(const jg_plan *plan, int64_t m);

/* ---- gemm.c (grouped.c's planning too) ------------------------------------------ */

/* The planner's (or, JITGEMM_TUNE, the tuner's) choice for a validated
 * problem key, as kernel key bytes. */
jg_status jg__plan_key(jg_context *ctx, const jg__problem_key *pk, jg__gemm_key *key);
/* The problem key of a dense or grouped problem once jg__validate_gemm or
 * jg__validate_grouped accepts it; else that status (the reason in ctx). */
jg_status jg__gemm_problem_key(jg_context *ctx, const jg_gemm_problem *p, jg__problem_key *out);
jg_status jg__grouped_problem_key(jg_context *ctx, const jg_grouped_problem *p,
                                  jg__problem_key *out);
/* A plan for a validated problem key (dense or grouped), from the memory
 * table or built (planner, kernel, plan); the table hit is counted. */
jg_status jg__plan_get(jg_context *ctx, const jg__problem_key *pk, jg_plan **out);
/* The key of the kernel a dense or grouped problem needs, without building
 * it: validation, then the planner's choice. jg_gemm_plan builds from the
 * same key, so a tool that counts kernels first (jitgemm-warm) agrees. */
jg_status jg__gemm_kernel_key(jg_context *ctx, const jg_gemm_problem *p, jg__gemm_key *out);
jg_status jg__grouped_kernel_key(jg_context *ctx, const jg_grouped_problem *p, jg__gemm_key *out);
/* jg_gemm_kernel_id (problem a jg_gemm_problem) and jg_grouped_kernel_id
 * (grouped: a jg_grouped_problem). */
jg_status jg__kernel_id(jg_context *ctx, const void *problem, bool grouped, jg_kernel_id *out);

#endif /* JG_RUNTIME_H */
