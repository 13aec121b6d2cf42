/* Declarations shared between the library's files (prefix jg__). Not installed. */
#ifndef JG_INTERNAL_H
#define JG_INTERNAL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "jitgemm/jitgemm.h"
#include "jg_kargs.h"

#if defined(__GNUC__)
#define JG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define JG_PRINTF(f, a)
#endif

#define JG_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static inline uint64_t jg__ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* ---- growable text/byte buffer (emit.c): the first failure sticks ----- */

typedef struct jg__buf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed; later appends are ignored */
} jg__buf;

void jg__buf_append(jg__buf *b, const void *data, size_t len);
void jg__buf_puts(jg__buf *b, const char *s);
void jg__buf_printf(jg__buf *b, const char *fmt, ...) JG_PRINTF(2, 3);
void jg__buf_free(jg__buf *b);
/* Appends the whole file; false if it cannot be opened or memory ran out. */
bool jg__buf_read_file(jg__buf *b, const char *path);

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

/* ---- error.c, log.c ------------------------------------------------------ */

typedef struct jg__log {
    jg_log_fn fn; /* NULL: nothing is logged */
    void *user;
    uint32_t mask; /* JG_LOGC_* */
} jg__log;

/* Reads JITGEMM_LOG into a mask; false when unset or empty. */
bool jg__log_env_mask(uint32_t *mask);
void jg__log_stderr(void *user, jg_log_level level, const char *category, const char *msg);
void jg__logf(const jg__log *log, jg_log_level level, uint32_t category, const char *fmt, ...)
    JG_PRINTF(4, 5);
bool jg__log_on(const jg__log *log, uint32_t category);

/* Records a failure in ctx (or, for NULL, the thread's context-less slot)
 * and returns status, so callers can write `return jg__fail(...)`. */
jg_status jg__fail(jg_context *ctx, jg_status status, const char *fmt, ...) JG_PRINTF(3, 4);
/* Same for a failed driver call: "<call>: <CUDA_ERROR_NAME> (<text>)". */
jg_status jg__fail_cu(jg_context *ctx, const char *call, CUresult r);

/* ---- codegen: key.c ------------------------------------------------------ */

/* The planner's choices: everything besides the problem that shapes code. */
typedef struct jg__gemm_config {
    uint32_t block_m, block_n, block_k;
    uint32_t stages;
    uint32_t consumers; /* consumer warpgroups */
    uint32_t cluster;
    uint32_t group_m;   /* tile rows per band of the grouped tile order */
    uint32_t epi_bytes; /* row bytes of an epilogue chunk (TMA store box): 16..128, or a
                         * whole row up to 256 bytes (unswizzled) */
    uint32_t a_box_m;   /* rows of A's TMA box: block_m, or a baked M < block_m rounded up to
                         * 8 (rows past M are neither read nor zero-filled) */
    uint32_t ab_size;   /* bytes of an A/B element: 2, or 1 (e4m3); 0 reads as 2 */
    uint32_t promote_chunk; /* FP8: stages per chunk whose promotions overlap the next
                             * stage's wgmmas (two sets of partial sums); 0: none */
    uint32_t expand_bufs;   /* NVFP4: BF16 buffers the staged stages (block_k = 256 of K
                             * as packed codes and scales) are expanded into; 0: none.
                             * Swap-AB: FP16 pieces (64 of K) of the activation */
    uint32_t swap;          /* NVFP4 swap-AB (sm90_nvfp4_swap.cu): B, the weight, on wgmma's
                             * M side in 64-row tiles, dequantized in registers; block_m
                             * activation rows (8..128, a power of two) on its N side */
    uint32_t a_scales_smem; /* FP8 block scales: A's staged in shared memory a chunk of
                             * stages ahead (1), or loaded from global memory (0) */
    uint32_t ffma_reuse;    /* FP8 block scales: the promotions' FFMAs keep their scale in
                             * the operand-reuse cache, edited in the cubin (sass_patch.c) */
    uint32_t pre;           /* NVFP4 list layout with a workspace (sm90_nvfp4_pre.cu): the CTAs
                             * its baked tile schedule is for (0: another kernel). block_n 128
                             * weight rows; block_m the rows of an activation piece slot (the
                             * tallest chunk, rounded up to a_box_m, the box's rows);
                             * expand_bufs the slots; stages the weight's */
    uint32_t pre_rows;      /* cfg.pre: the most rows of a chunk (jg__pre_chunks) */
    uint32_t swap_ab;       /* dense swap-AB (sm90_gemm.cu, JG_SWAP_AB): D^T = B A^T, the kernel's
                             * rows the problem's N (block_m of them a tile), its columns M
                             * (block_n, wgmma's N); A's box is the problem's B's */
    uint32_t split_k;       /* dense split-K: a cluster of this many CTAs (cluster == split_k)
                             * shares each tile, each over its share of K (0 or 1: none) */
    uint32_t soft;          /* JG_SOFT_A | JG_SOFT_B | JG_SOFT_D: the kernel's operands (swap-AB:
                             * A the problem's B) that may take soft loads or, D, direct stores
                             * (sm90_soft.cuh), their pointers or rows not 16-byte aligned */
} jg__gemm_config;

enum { JG_SOFT_A = 1u << 0, JG_SOFT_B = 1u << 1, JG_SOFT_D = 1u << 2 };

#define JG_SPLIT_K_MAX 8 /* CTAs of a split-K cluster, at most (portable cluster size) */
#define JG_SPLIT_ANY (JG_SPLIT_K_MAX + 1) /* jg__target.force_split: any split (JITGEMM_SPLIT=any) */

/* The dense kernel families the planner chooses among: tiles of M x N
 * (64 or 128 rows; 256 rows: TALL, 16-bit operands), swap-AB's tiles of
 * N x M, and either with split-K (a bit each). */
enum {
    JG_FAMILY_PLAIN = 1,
    JG_FAMILY_SWAP = 2,
    JG_FAMILY_SPLIT = 4,
    JG_FAMILY_SWAP_SPLIT = 8,
    JG_FAMILY_TALL = 16,
    JG_FAMILY_ALL = 31,
};

/* Rows of D a swap-AB epilogue round stages (JG_SW_EPI_ROWS): 8 times the
 * largest divisor of block_n / 8 up to 4. */
uint32_t jg__swap_epi_rows(uint32_t block_n);

/* sm90_nvfp4_pre.cu's chunks: each group's rows cut into near-equal pieces
 * of at most chunk_rows (up to JG_PRE_CHUNK_MAX, wgmma's widest N), tallest
 * first (ties: lower group, then lower row first), each with its width
 * (below). jg__pre_chunks writes up
 * to max of them and returns how many the problem has (more than max: the
 * kernel does not serve it). jg__pre_balance spreads the n chunks' tiles
 * (chunk-major, tiles_n weight tiles each) over `grid` CTAs, each to the
 * least loaded CTA so far (the costs fall along the chunks), into cta_of
 * (may be NULL); returns the most loaded CTA's cost, in rows (of the
 * chunks' widths). */
#define JG_PRE_CHUNK_MAX 256
#define JG_PRE_MAX_CHUNKS 256 /* chunks a kernel bakes in, at most */
#define JG_PRE_MAX_TILES 8192 /* chunks x weight tiles (16-bit indices, 16 KB of constants) */
#define JG_PRE_MAX_GRID 1024  /* CTAs of a baked schedule, at most (SMs) */
/* Activation rows per TMA box: 32, 64, 128 or 256, the least that holds
 * the tallest chunk's width. One thread issues every box, and the box count
 * paces it: the seeds' four cases took 5-19% less time with boxes chosen so
 * (up to 128) than with boxes of 32 rows, although shorter chunks load rows
 * they do not use; one box of 256 instead of two of 128 took the second
 * case from 81.4 to 77.7 us and left the others as they were (H200,
 * 2026-11-26). */
#define JG_PRE_BOX_MIN 32
#define JG_PRE_BOX_MAX 256
/* Distinct wgmma widths a kernel instantiates its tile for, at most: each
 * costs ~0.3-0.4 s of NVRTC (the seeds' first case, 8 of them, 3.15 s at d693b3a). */
#define JG_PRE_MAX_WIDTHS 8
/* width: wgmma's N the kernel runs the chunk at. Its rows rounded up to 8;
 * where the chunks have more than JG_PRE_MAX_WIDTHS such heights, the
 * next of JG_PRE_MAX_WIDTHS of them (the tallest among them) chosen to pad
 * the fewest rows in all (the kernel loads the rows past a chunk and does
 * not store them). */
typedef struct jg__pre_chunk {
    uint32_t group, row0, rows, width;
} jg__pre_chunk;
uint32_t jg__pre_chunks(const int64_t *group_m, uint32_t groups, uint32_t chunk_rows,
                        jg__pre_chunk *out, uint32_t max);
uint64_t jg__pre_balance(const jg__pre_chunk *chunks, uint32_t n, uint32_t tiles_n, uint32_t grid,
                         uint16_t *cta_of);
/* The pre-pass's workspace: every group's rows, K rounded up to 64, FP16. */
uint64_t jg__pre_workspace_bytes(const int64_t *group_m, uint32_t groups, int64_t k);

/* CTAs of a cluster that stack their tiles along M and share one B tile
 * (TMA multicast): the cluster's size, but 1 for NVFP4 swap-AB, whose
 * clusters split K of one tile, and for the pre kernel (cfg.pre), whose
 * CTAs load their whole weight tile (launch.c sizes the weight's TMA box
 * by this: the pair kernel of 83bc822's bench/patches hung on half
 * boxes). */
static inline uint32_t jg__cfg_m_stack(const jg__gemm_config *cfg)
{
    return cfg->swap || cfg->pre || cfg->split_k > 1 || !cfg->cluster ? 1 : cfg->cluster;
}

#define JG_KIND_QUANT 3
#define JG_KIND_QUANT_NVFP4 4
#define JG_KEY_FORMAT 14 /* jg__gemm_key.key_format: bumped when the struct changes meaning */

/* Fixed-layout bytes that decide a kernel's source: zeroed, then filled. */
typedef struct jg__gemm_key {
    uint32_t key_format; /* bumped when this struct changes meaning */
    uint32_t kind;       /* 1: dense GEMM, 2: grouped, 3: quantization to e4m3 (JG_KIND_QUANT),
                            4: quantization to NVFP4 (JG_KIND_QUANT_NVFP4) */
    uint32_t a_type, b_type, c_type, d_type;
    uint32_t flags;      /* JG_GEMM_* that shape code (JG_KEY_CODE_FLAGS) */
    uint32_t scale;      /* jg_scale_mode */
    uint32_t a_sf_layout, b_sf_layout; /* jg_sf_layout of NVFP4 operands (quantization: a_) */
    int64_t m;           /* 0 when M is a run-time argument */
    int64_t n, k;
    jg__gemm_config cfg;
    uint32_t groups;     /* grouped: the groups (and, list layout, their rows) */
    uint32_t layout;     /* 0 dense, else jg_grouped_layout */
    int64_t group_m[JG_GROUPED_MAX_GROUPS];
} jg__gemm_key;

typedef struct jg__hash128 {
    uint64_t lo, hi;
} jg__hash128;

/* A problem normalized for lookup: fields copied into zeroed memory, packed
 * leading dimensions filled in. Used as the plan table's key. */
typedef struct jg__problem_key {
    uint32_t flags;
    uint32_t a_type, b_type, c_type, d_type;
    uint32_t groups; /* 0: dense; else grouped, rows in group_m (list layout) */
    uint32_t layout; /* 0 dense, else jg_grouped_layout */
    uint32_t scale;  /* jg_scale_mode */
    uint32_t a_sf_layout, b_sf_layout; /* jg_sf_layout; 0 unless NVFP4 */
    int64_t m_max;   /* contiguous, masked: the m_max of the layout */
    int64_t m, n, k, lda, ldb, ldc, ldd; /* grouped: m is the total (expected) rows */
    int64_t group_m[JG_GROUPED_MAX_GROUPS];
} jg__problem_key;

#define JG_DENSE_KEY_BYTES offsetof(jg__problem_key, group_m)

/* Problem flags that shape a kernel's code (dense JG_GEMM_*; grouped
 * problems share the values of JG_GEMM_B_N_MAJOR and JG_GEMM_UNALIGNED). */
#define JG_KEY_CODE_FLAGS                                                                  \
    (JG_GEMM_M_GENERIC | JG_GEMM_PDL | JG_GEMM_A_M_MAJOR | JG_GEMM_B_N_MAJOR |            \
     JG_GEMM_FP32_EXACT)
_Static_assert((int)JG_GROUPED_B_N_MAJOR == (int)JG_GEMM_B_N_MAJOR &&
                   (int)JG_GROUPED_UNALIGNED == (int)JG_GEMM_UNALIGNED,
               "grouped and dense flags share these bits");

void jg__problem_key_make(const jg_gemm_problem *p, jg__problem_key *out);
/* The problem's operands that may need soft loads or stores: JG_SOFT_A |
 * JG_SOFT_B | JG_SOFT_D in the problem's terms. Those whose leading
 * dimension times the element size is not a multiple of 16 bytes, or
 * every one with JG_GEMM_UNALIGNED; JG_GEMM_FP32_EXACT's A and B never
 * (the GEMM reads the workspace). */
uint32_t jg__problem_soft(const jg__problem_key *p);
/* JG_GEMM_FP32_EXACT: K rounded up to 64, the workspace's part width. */
static inline int64_t jg__exact_kp(int64_t k) { return (k + 63) / 64 * 64; }
void jg__grouped_key_make(const jg_grouped_problem *p, jg__problem_key *out);
void jg__gemm_key_make(const jg__problem_key *p, const jg__gemm_config *cfg, jg__gemm_key *out);
/* The keys of the quantization kernels of a validated problem (e4m3 reads
 * no field past ld_dst: callers built against the 0.2 header). */
void jg__quant_e4m3_key_make(const jg_quant_problem *p, jg__gemm_key *out);
void jg__quant_nvfp4_key_make(const jg_quant_problem *p, jg__gemm_key *out);

/* Everything besides the key bytes that decides the cubin: library version,
 * embedded templates, NVRTC version, arch, compile options. */
typedef struct jg__salt {
    jg__hash128 h;
} jg__salt;

jg__salt jg__salt_make(const char *arch, const char *options);
jg__hash128 jg__key_hash(const jg__salt *salt, const void *key, size_t key_len);
void jg__hash_hex(jg__hash128 h, char out[33]);

/* ---- codegen: templates (generated), emit.c, plan_sm90.c ----------------- */

typedef struct jg__template {
    const char *name; /* file name under templates/ */
    const char *text;
    size_t len;
} jg__template;

extern const jg__template jg__templates[];
extern const size_t jg__templates_count;

const jg__template *jg__template_find(const char *name);
jg__hash128 jg__templates_hash(void);

/* SASS edits after NVRTC (sass_patch.c). jg__sass_ffma_reuse: in FFMA runs
 * of at least min_run instructions in the SASS of `kernel` (section
 * .text.<kernel> of the 64-bit ELF `cubin`), every FFMA R, R, R whose
 * successor reads the same register as operand b keeps it in the reuse
 * cache. Returns the FFMAs changed, or -1 where the ELF or the section is
 * not found or not well formed (the cubin is then unchanged).
 * jg__sass_edit: the edits the key's config asks for, on a compiled
 * kernel; 0 when it asks for none. */
#define JG_SASS_FFMA_MIN_RUN 16 /* shorter FFMA runs are not promotions */
int jg__sass_ffma_reuse(uint8_t *cubin, size_t len, const char *kernel, uint32_t min_run);
int jg__sass_edit(const jg__gemm_key *key, const char *kernel, jg__buf *cubin);
/* The edits' version: part of the cache salt, bumped when they change. */
#define JG_SASS_PATCH_VERSION 1

/* Kernel names encode their parameters; max 127 characters. */
void jg__gemm_kernel_name(const jg__gemm_key *key, const char *arch, char out[128]);

/* Writes the self-contained source of a dense GEMM kernel. */
void jg__emit_gemm(const jg__gemm_key *key, const char *kernel_name, jg__buf *out);

typedef struct jg__target {
    const char *arch;     /* "sm_90a" (points at arch_name) */
    char arch_name[16];
    int sm_count;
    int smem_per_block;   /* opt-in maximum of dynamic shared memory */
    /* JITGEMM_TILE=MxNxK: only tiles with these sizes (0: any), for
     * experiments and for comparing the planner's choice with others. */
    uint32_t force_m, force_n, force_k;
    uint32_t force_cluster; /* JITGEMM_CLUSTER=1|2 (0: the planner's choice) */
    uint32_t force_ffma_reuse; /* JITGEMM_FFMA_REUSE=0|1, plus one (0: the planner's) */
    uint32_t force_swap;  /* JITGEMM_SWAP=0|1, plus one: dense swap-AB never or only */
    uint32_t force_split; /* JITGEMM_SPLIT=S: dense split-K over S CTAs only (1: none;
                           * JG_SPLIT_ANY: any S from 2) */
} jg__target;

/* Chooses tiles, stages, cluster for a valid problem; explains itself on
 * JG_LOGC_PLAN. Returns JG_ERR_UNSUPPORTED_ARCH for arches without tables. */
jg_status jg__plan_gemm_sm90(const jg__target *t, const jg__problem_key *p, const jg__log *log,
                             jg__gemm_config *out);
/* The planner's best `max` configurations (at most JG_PLAN_CANDIDATES_MAX),
 * best first by estimated time; returns how many (0: none fits, or an arch
 * without tables). Tuning (JITGEMM_TUNE) times them on the GPU. */
#define JG_PLAN_CANDIDATES_MAX 8
size_t jg__plan_candidates_sm90(const jg__target *t, const jg__problem_key *p,
                                jg__gemm_config *out, size_t max);
/* Dynamic shared memory of a GEMM kernel: d_type sizes its epilogue's
 * staging, scale (jg_scale_mode) adds row-wise scales' space. */
uint32_t jg__gemm_smem_bytes(const jg__gemm_config *cfg, uint32_t d_type, uint32_t scale);
uint32_t jg__gemm_threads(const jg__gemm_config *cfg);

/* ---- runtime: validate.c --------------------------------------------------- */

jg_status jg__validate_gemm(jg_context *ctx, const jg_gemm_problem *p);
jg_status jg__validate_grouped(jg_context *ctx, const jg_grouped_problem *p);
/* A size: >= 1 (JG_ERR_INVALID) and <= 2^31-1 (JG_ERR_TOO_LARGE), by name. */
jg_status jg__check_dim(jg_context *ctx, const char *name, int64_t v);
/* A scaled (FP8) launch's args.a_scale and args.b_scale: present, 4-byte aligned. */
jg_status jg__check_scales(jg_context *ctx, const float *a_scale, const float *b_scale);
/* An NVFP4 launch's block scales args.a_sf and args.b_sf: present, 16-byte aligned. */
jg_status jg__check_sf(jg_context *ctx, const void *a_sf, const void *b_sf);

/* ---- runtime: nvrtc.c ----------------------------------------------------- */

/* Compiles source to a cubin for arch. On JG_ERR_COMPILE the NVRTC log is in
 * log. PTX is returned too when ptx is non-NULL and NVRTC provides it. */
jg_status jg__nvrtc_compile(const char *src, size_t src_len, const char *name, const char *arch,
                            jg__buf *cubin, jg__buf *ptx, jg__buf *log);
/* The option string that goes into every cache key. */
const char *jg__nvrtc_options(void);
void jg__nvrtc_version(int *major, int *minor);

/* ---- runtime: cache_mem.c ---------------------------------------------------- */

typedef struct jg__table_entry jg__table_entry;

/* A hash table of fixed-size byte keys to pointers, with single-flight
 * insertion: the first thread to miss a key builds it, the others wait. */
typedef struct jg__table {
    pthread_rwlock_t lock;
    pthread_mutex_t wait_lock;
    pthread_cond_t done;
    jg__table_entry **buckets;
    size_t nbuckets, count, key_size;
} jg__table;

int jg__table_init(jg__table *t, size_t key_size);
void jg__table_destroy(jg__table *t, void (*free_value)(void *));
/* The value for key if built; NULL otherwise. Cheap: one read lock. */
void *jg__table_find(jg__table *t, const void *key);
/* Returns the built value, or NULL after making the caller the builder of
 * key, who must then call publish (value) or abandon (failure). Threads that
 * claim a key being built wait for it. *status: JG_ERR_NO_MEMORY on failure. */
void *jg__table_claim(jg__table *t, const void *key, jg_status *status);
void jg__table_publish(jg__table *t, const void *key, void *value);
void jg__table_abandon(jg__table *t, const void *key);

/* ---- runtime: cache_disk.c --------------------------------------------------- */

typedef struct jg__disk {
    bool enabled;  /* false: memory-only */
    bool writable;
    char dir[4096]; /* the cache root; entries in <dir>/<arch>/ */
} jg__disk;

/* Resolves and checks the cache directory (creating it 0700 when writable).
 * A directory owned by someone else or writable by group/others is refused
 * with a warning: the cache turns memory-only. */
void jg__disk_open(jg__disk *d, const char *dir_opt, jg_cache_mode mode, const jg__log *log);

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
#define JG_DISK_FORMAT 1u

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
 * "<32 hex>.cubin", sizes, both checksums), on any entry file: for tools
 * that list, verify or prune a cache. *hdr receives the header as read
 * (zeroed when shorter); on false *why says what is wrong ("missing" when
 * there is no such file). */
bool jg__disk_check_file(const char *path, jg__disk_header *hdr, const char **why);

/* ---- runtime: kernels, plans, context --------------------------------------- */

typedef struct jg__kernel {
    const jg__driver *cu; /* to unload the module */
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
} jg__kernel;

#define JG_PRE_DQ_SUFFIX "_dq" /* the pre-pass's name: the kernel's and this */
#define JG_SPLIT_SUFFIX "_split" /* exact FP32's split kernel: the GEMM's name and this */

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
    uint64_t workspace_bytes; /* each launch's (cfg.pre), else 0 */
    uint32_t pre_grid;        /* cfg.pre: the pre-pass's CTAs per group (its tallest's) */
};

struct jg_context {
    const jg__driver *cu;   /* NULL when offline */
    CUcontext cu_ctx;
    CUdevice device;
    bool offline;
    bool tune; /* JITGEMM_TUNE=1: time the planner's best candidates once per problem */
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
    pthread_mutex_t stats_lock;
    jg_context_stats stats;
    pthread_mutex_t error_lock;
    char last_error[8192];
};

/* module.c: finds or builds the kernel for a key (memory, disk, NVRTC). */
jg_status jg__kernel_get(jg_context *ctx, const jg__gemm_key *key, jg__kernel **out);
/* The cache key of a kernel in this context (what jg_plan_info.key_hash shows). */
jg__hash128 jg__kernel_hash(const jg_context *ctx, const jg__gemm_key *key);
void jg__kernel_free(void *kernel);

/* gemm.c: the key of the kernel a problem needs, without building it:
 * validation, then the planner's choice. jg_gemm_plan builds from the same
 * key, so a tool that counts kernels first (jitgemm-warm) agrees with it. */
jg_status jg__gemm_kernel_key(jg_context *ctx, const jg_gemm_problem *p, jg__gemm_key *out);

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
/* cuLaunchKernelEx of one kernel with one parameter block (a cluster
 * attribute when cluster > 1); logs on JG_LOGC_LAUNCH. */
jg_status jg__launch_kernel(jg_context *ctx, const jg__kernel *k, uint32_t grid,
                            uint32_t threads, uint32_t cluster, void *kargs, jg_stream stream);

/* quantize.c: a grid for `units` threads of work, capped at 8 CTAs per SM
 * (the kernels loop); and the three launches of a quantization that needs
 * the tensor's amax first: scale[0] zeroed, phase 0 (amax over `elements`),
 * phase 1 (quantize, on quantize_grid CTAs), phase 2 (the scale). */
uint32_t jg__quant_grid(const jg_context *ctx, uint64_t units);
/* The kernel for a validated quantization's key (compiled or cached) and
 * its arguments; JG_ERR_OFFLINE in an offline context, after compiling.
 * sf: the NVFP4 block scales (NULL for e4m3: its callers' args may end
 * before that field). */
jg_status jg__quant_prepare(jg_context *ctx, const jg__gemm_key *key, const jg_quant_problem *p,
                            const jg_quant_args *a, void *sf, jg__kernel **k, jg_quant_kargs *ka);
jg_status jg__quant_phases(jg_context *ctx, const jg__kernel *k, jg_quant_kargs *ka,
                           uint64_t elements, uint32_t quantize_grid, jg_stream stream);

/* ---- runtime: tune.c ---------------------------------------------------------- */

/* JITGEMM_TUNE: the configuration for a dense problem, from the disk cache's
 * record of an earlier tuning, else by timing the planner's best candidates
 * on the GPU (scratch buffers, a private stream, synchronized) and recording
 * the fastest. Returns JG_ERR_UNSUPPORTED when it cannot tune (offline,
 * grouped, out of memory): the caller keeps the planner's choice. */
jg_status jg__tune(jg_context *ctx, const jg__problem_key *pk, jg__gemm_config *out);
/* A plan for a given kernel key (the tuner's candidates, and build_plan). */
jg_status jg__plan_build(jg_context *ctx, const jg__problem_key *pk, const jg__gemm_key *key,
                         jg_plan **out);
void jg__plan_free(jg_plan *plan);
jg_status jg__grouped_launch(jg_plan *plan, const jg_grouped_args *args, jg_stream stream);
jg_status jg__device_grouped_launch(jg_plan *plan, const jg_grouped_args *args, jg_stream stream);
uint32_t jg__gemm_grid(const jg_plan *plan, int64_t m);

/* gemm.c: a plan for a validated problem key (dense or grouped), from the
 * memory table or built (planner, kernel, plan); the table hit is counted. */
jg_status jg__plan_key(jg_context *ctx, const jg__problem_key *pk, jg__gemm_key *key);
/* The key of the kernel a dense or grouped problem needs (validated, planned). */
jg_status jg__grouped_kernel_key(jg_context *ctx, const jg_grouped_problem *p, jg__gemm_key *out);
jg_status jg__plan_get(jg_context *ctx, const jg__problem_key *pk, jg_plan **out);

/* Bytes of an element; 0 for JG_NVFP4 (half a byte: see jg__dtype_bits). */
size_t jg__dtype_size(uint32_t dtype);
size_t jg__dtype_bits(uint32_t dtype);
const char *jg__dtype_name(uint32_t dtype);

#endif /* JG_INTERNAL_H */
