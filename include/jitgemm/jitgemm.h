/* libjitgemm: GEMM kernels generated for each problem at run time, compiled
 * with NVRTC, cached in memory and on disk, launched through the CUDA driver.
 *
 *   D[M,N] = alpha * A[M,K] * B[N,K]^T + beta * C[M,N]
 *
 * A and B are K-major (row-major [M,K] and [N,K]) unless the problem's
 * flags say otherwise (16-bit types: JG_GEMM_A_M_MAJOR, JG_GEMM_B_N_MAJOR);
 * C and D are row-major. Leading dimensions are in elements. All pointers
 * are device pointers.
 *
 * Thread-safety: every function may be called from several threads at once
 * on the same context, unless its comment says otherwise. Plans belong to
 * their context; a plan from jg_gemm_plan or jg_grouped_plan stays valid
 * until jg_plan_release or jg_context_destroy (see "the memory cache").
 *
 * The library never prints unless asked (jg_options.log or JITGEMM_LOG) and
 * never aborts the process: every failure is a jg_status plus a message from
 * jg_context_last_error. */
#ifndef JITGEMM_JITGEMM_H
#define JITGEMM_JITGEMM_H

#include <stddef.h>
#include <stdint.h>

#include "jitgemm/version.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define JG_API __attribute__((visibility("default")))
#else
#define JG_API
#endif

/* A CUDA stream: CUstream and cudaStream_t are both this type. NULL is the
 * legacy default stream. */
typedef struct CUstream_st *jg_stream;

/* ---- statuses ---------------------------------------------------------- */

/* X(name, value, text): one list makes the enum, jg_status_name and
 * jg_status_string. Values are stable; new ones are only appended. */
#define JG_STATUS_LIST(X)                                                       \
    X(OK, 0, "success")                                                         \
    X(ERR_INVALID, -1, "invalid argument: a value breaks a documented rule")   \
    X(ERR_NULL_POINTER, -2, "a required pointer is NULL")                      \
    X(ERR_MISALIGNED, -3, "a device pointer is not 16-byte aligned")           \
    X(ERR_UNSUPPORTED, -4, "valid request that this version does not support") \
    X(ERR_TOO_LARGE, -5, "a dimension exceeds what the kernels can index")     \
    X(ERR_NO_DRIVER, -6, "the CUDA driver (libcuda.so.1) could not be loaded") \
    X(ERR_NO_DEVICE, -7, "no current CUDA context or device")                  \
    X(ERR_UNSUPPORTED_ARCH, -8, "the GPU architecture is not supported")       \
    X(ERR_CUDA, -9, "a CUDA driver call failed")                               \
    X(ERR_COMPILE, -10, "NVRTC failed to compile the generated kernel")        \
    X(ERR_NO_MEMORY, -11, "out of host memory")                                \
    X(ERR_OFFLINE, -12, "the context has no device: it can compile, not run")  \
    X(ERR_CACHE, -13, "the kernel cache could not be used")

typedef enum jg_status {
#define JG_STATUS_ENUM_(name, value, text) JG_##name = value,
    JG_STATUS_LIST(JG_STATUS_ENUM_)
#undef JG_STATUS_ENUM_
} jg_status;

/* "JG_ERR_INVALID" etc.; "JG_UNKNOWN_STATUS" for values not in the list. */
JG_API const char *jg_status_name(jg_status status);
/* A sentence describing the status; never NULL. */
JG_API const char *jg_status_string(jg_status status);

/* "MAJOR.MINOR.PATCH" of the loaded library. */
JG_API const char *jg_version(void);

/* ---- types ------------------------------------------------------------- */

typedef enum jg_dtype {
    JG_DTYPE_NONE = 0, /* "no operand" (c_type only); the zero of a fresh struct */
    JG_BF16 = 1,
    JG_FP16 = 2,
    JG_FP32 = 3, /* D and C; A and B too (both FP32): read as TF32 unless
                    JG_GEMM_FP32_EXACT (see jg_gemm_problem) */
    JG_E4M3 = 4, /* FP8 e4m3 (A and B only, both K-major), with scales (jg_scale_mode) */
    JG_NVFP4 = 5, /* NVFP4 (A and B only, both K-major): packed e2m1 with e4m3 block scales
                     and an FP32 global scale; see "NVFP4" below */
} jg_dtype;

/* How FP8 operands are scaled: D = alpha * (A * sa) (B * sb)^T + beta * C,
 * the scales FP32 arrays on the device (args.a_scale, args.b_scale), read by
 * the kernel at each launch (so a CUDA graph picks up new values).
 *   JG_SCALE_TENSOR: one FP32 each.
 *   JG_SCALE_ROW: a_scale[M] (one per row of A; an M-generic plan reads the
 *   call's rows) and b_scale[N] (one per row of B), torch._scaled_mm's
 *   row-wise semantics.
 *   JG_SCALE_BLOCK (DeepSeek-V3): a_scale[M][ceil(K/128)] (one per row per
 *   128 of K), b_scale[ceil(N/128)][ceil(K/128)] (one per 128x128 block of
 *   B), both row-major; applied as each 128 of K is promoted to FP32.
 *   JG_SCALE_NVFP4: JG_NVFP4 operands: e4m3 block scales per 16 of K
 *   (args.a_sf, args.b_sf) and FP32 global scales (args.a_scale[0],
 *   args.b_scale[0]); see "NVFP4" below.
 * 16-bit operands take JG_SCALE_NONE. */
typedef enum jg_scale_mode {
    JG_SCALE_NONE = 0,
    JG_SCALE_TENSOR = 1,
    JG_SCALE_ROW = 2,
    JG_SCALE_BLOCK = 3,
    JG_SCALE_NVFP4 = 4, /* JG_NVFP4 operands, and only they: see "NVFP4" below */
} jg_scale_mode;

/* ---- NVFP4 ---------------------------------------------------------------
 *
 * Values. An e2m1 code is 4 bits: bit 3 the sign, bits 2..1 the exponent e
 * (bias 1), bit 0 the mantissa m; |value| = m / 2 for e = 0, else
 * (1 + m / 2) * 2^(e - 1). Codes 0..7 are 0, 0.5, 1, 1.5, 2, 3, 4, 6; codes
 * 8..15 the same negated (8 is -0). No infinities, no NaN.
 *
 * An operand of R rows and K columns (A: R = M; B: R = N), K a multiple of
 * 16, is three arrays on the device:
 *   codes   R rows of ld / 2 bytes (ld in elements: jg_gemm_problem.lda or
 *           ldb, 0 = K); element (r, k) is in byte r * ld / 2 + k / 2, in
 *           its low nibble (bits 3..0) when k is even, its high nibble when
 *           k is odd.
 *   sf      one e4m3 (fn: bias 7, 3 mantissa bits, max 448, no infinities)
 *           block scale per 16 consecutive elements of a row: sf(r, kb)
 *           covers elements (r, 16 kb .. 16 kb + 15), kb < K / 16. Laid out
 *           as jg_sf_layout says; every byte 16-byte aligned at its start.
 *   global  one FP32 (args.a_scale[0], args.b_scale[0]).
 * Element (r, k) = e2m1(code(r, k)) * e4m3(sf(r, k / 16)) * global.
 * The GEMM computes D = alpha * A B^T + beta * C over these values.
 *
 * jg_sf_layout: where sf(r, kb) lives, as a byte offset from the start of
 * the scale array (kbs = K / 16 scales per row):
 *   JG_SF_ROW_MAJOR: [R][kbs]:
 *       offset = r * kbs + kb;                       size R * kbs bytes.
 *   JG_SF_SWIZZLED_128X4: the layout of Blackwell's block-scaled MMAs
 *   (cuBLASLt's VEC16_UE4M3 scale mode, CUTLASS Sm1xxBlockScaledConfig,
 *   TensorRT-LLM / FlashInfer "SWIZZLED_128x4"), so weights quantized for
 *   B200 load unchanged. Rows are padded to Rp = 128 * ceil(R / 128) and
 *   scales per row to kbp = 4 * ceil(kbs / 4); each 128 x 4 tile of scales
 *   is one 512-byte block, tiles stored row-major over (r / 128, kb / 4):
 *       offset = ((r / 128) * (kbp / 4) + kb / 4) * 512
 *              + (r % 32) * 16 + ((r / 32) % 4) * 4 + kb % 4;
 *                                                    size Rp * kbp bytes.
 *   Inside a block, 16-byte line i holds rows i, i + 32, i + 64, i + 96,
 *   4 scales each. Padding bytes are written 0 by jg_quantize_nvfp4 and
 *   never read by the GEMM.
 * jg_nvfp4_sf_offset and jg_nvfp4_sf_bytes compute both.
 *
 * Quantization recipe (jg_quantize_nvfp4; NVIDIA's, with the global scale
 * stored as the decode factor). Every step in IEEE FP32, round to nearest
 * even, in this order, so that results are bit-for-bit reproducible:
 *   amax = max |x| over the tensor;
 *   g = amax / 2688 (2688 = 6 * 448, e2m1's and e4m3's largest values);
 *       g = 1 when that is 0 (an all-zero tensor, or amax / 2688 underflows);
 *   per 16-element block b: bmax = max |x| over b;
 *       s = e4m3_rn_satfinite((bmax / 6) / g)  (round to nearest even, values
 *       past 448 to 448);
 *   per element: v = x / (e4m3(s) * g); code = e2m1 nearest to v, ties to
 *       the even code (even mantissa bit), |v| > 6 saturating to 6, the sign
 *       bit that of v (so -0 and negatives rounding to 0 keep bit 3); every
 *       code of a block whose e4m3(s) * g is 0 is 0.
 * The e4m3 rounding of s: round to nearest, as NVIDIA's quantizers do, not
 * up. When s rounds down, |v| of the block's largest element can exceed 6
 * by the e4m3 rounding, at most 6 / (1 - 2^-4) = 6.4, and saturates to 6: an
 * error of at most 0.4 s g, less than the 1 s g that e2m1's step of 2
 * between 4 and 6 already allows. Rounding s up would keep |v| <= 6 without
 * saturating, at the price of a coarser grid (up to 2^-3 relative) for every
 * element of the block. Stored codes never exceed 6 in magnitude.
 * Inputs must be finite. */
typedef enum jg_sf_layout {
    JG_SF_LAYOUT_NONE = 0,     /* operands other than JG_NVFP4; the zero of a fresh struct */
    JG_SF_ROW_MAJOR = 1,       /* [R][K/16] */
    JG_SF_SWIZZLED_128X4 = 2,  /* 512-byte blocks of 128 rows x 4 scales, above */
} jg_sf_layout;

/* The byte offset of sf(r, kb) for an operand of `rows` rows and k columns,
 * by the formulas above; -1 when layout is unknown, k is not a positive
 * multiple of 16, rows < 1, or (r, kb) lies outside [0, rows) x [0, k/16). */
JG_API int64_t jg_nvfp4_sf_offset(jg_sf_layout layout, int64_t rows, int64_t k, int64_t r,
                                  int64_t kb);
/* The bytes of the scale array (padding included); -1 as above. */
JG_API int64_t jg_nvfp4_sf_bytes(jg_sf_layout layout, int64_t rows, int64_t k);

/* ---- context ----------------------------------------------------------- */

typedef struct jg_context jg_context;
typedef struct jg_plan jg_plan;

typedef enum jg_cache_mode {
    JG_CACHE_DEFAULT = 0,   /* $JITGEMM_CACHE (off|read|readwrite), else readwrite */
    JG_CACHE_OFF = 1,       /* memory cache only */
    JG_CACHE_READ = 2,      /* load from disk, never write */
    JG_CACHE_READWRITE = 3, /* load, and store what was compiled */
} jg_cache_mode;

typedef enum jg_log_level {
    JG_LOG_ERROR = 0,
    JG_LOG_WARN = 1,
    JG_LOG_INFO = 2,
    JG_LOG_DEBUG = 3,
} jg_log_level;

/* Log categories (jg_options.log_mask, and the comma-separated words of
 * JITGEMM_LOG: "plan,cache", "all" or "1"). Warnings and errors are sent
 * whenever a callback or JITGEMM_LOG is set, whatever the mask. */
#define JG_LOGC_PLAN 0x1u    /* why the planner chose each tile, stage, cluster */
#define JG_LOGC_CACHE 0x2u   /* memory and disk cache hits, misses, writes */
#define JG_LOGC_COMPILE 0x4u /* NVRTC compiles and their times */
#define JG_LOGC_LAUNCH 0x8u  /* kernel launches (noisy) */
#define JG_LOGC_ALL 0xffffffffu

/* category is "plan", "cache", "compile", "launch" or "general". The message
 * is valid only during the call. May be called from any thread. */
typedef void (*jg_log_fn)(void *user, jg_log_level level, const char *category,
                          const char *message);

enum {
    /* No GPU is used: kernels are compiled for jg_options.arch and stored in
     * the caches; jg_gemm_run returns JG_ERR_OFFLINE. Works without a driver. */
    JG_CONTEXT_OFFLINE = 1u << 0,
    /* 0.7: jg_options.max_kernels is set. The field is read only with this
     * bit, so that callers built against older headers, whose struct ends at
     * sm_count, are unaffected. */
    JG_CONTEXT_MAX_KERNELS = 1u << 1,
    /* 0.8: jg_options.backend is set (callers built against older headers
     * have no such field: it is read only with this flag). */
    JG_CONTEXT_BACKEND = 1u << 2,
    /* 0.9: every jg_gemm_args this caller passes has 0.7's workspace
     * fields (NULL where it has no workspace), so that dense plans may
     * split K through a workspace a launch passes ("Split-K through a
     * workspace"); without the flag no plan does (callers built against
     * the 0.6 header pass a shorter struct). */
    JG_CONTEXT_WORKSPACE = 1u << 3,
};

/* jg_options.max_kernels: no bound (every plan and kernel stays until
 * jg_context_destroy, as before 0.7). */
#define JG_MAX_KERNELS_UNLIMITED (-1)

/* What compiles the kernels (jg_options.backend, JITGEMM_BACKEND=nvrtc|llvm).
 * The backend is part of every cache key: each keeps its own cubins. */
typedef enum jg_backend {
    JG_BACKEND_DEFAULT = 0, /* $JITGEMM_BACKEND, else NVRTC */
    JG_BACKEND_NVRTC = 1,   /* the CUDA C++ templates, by NVRTC */
    /* LLVM bitcode of the same templates, compiled into the library for the
     * kernels of its build's shape specs, specialized to the problem's M, N
     * and K and lowered by LLVM's NVPTX target to PTX, which the driver
     * compiles when it loads the kernel (the disk cache keeps the PTX): no
     * NVRTC. A kernel it has no bitcode for is compiled by NVRTC (logged on
     * JG_LOGC_COMPILE). jg_context_create returns JG_ERR_UNSUPPORTED for it
     * in a build without LLVM. */
    JG_BACKEND_LLVM = 2,
} jg_backend;

typedef struct jg_options {
    uint32_t flags;          /* JG_CONTEXT_* */
    const char *arch;        /* "sm_90a"; NULL: the current device's (required offline) */
    const char *cache_dir;   /* NULL: $JITGEMM_CACHE_DIR, $XDG_CACHE_HOME/jitgemm,
                                ~/.cache/jitgemm (in that order) */
    jg_cache_mode cache_mode;
    jg_log_fn log;           /* NULL: stderr, only if JITGEMM_LOG is set */
    void *log_user;
    uint32_t log_mask;       /* JG_LOGC_* for the callback; 0: from JITGEMM_LOG */
    int sm_count;            /* offline: the target's multiprocessors, which the planner
                                sizes tiles for (0: 132, an H100 SXM); ignored online. At
                                132 the clusters resident at once are an H200's, as a
                                GPU context asks its driver (other counts: SMs / size) */
    /* 0.7, read only with JG_CONTEXT_MAX_KERNELS in flags: the most kernels
     * (loaded CUDA modules) the memory cache keeps, and the most plans (see
     * "the memory cache" below). 0: $JITGEMM_MAX_KERNELS (a count, or
     * "unlimited"), else 1024; JG_MAX_KERNELS_UNLIMITED: no bound. */
    int max_kernels;
    jg_backend backend;      /* 0.8, read only with JG_CONTEXT_BACKEND in flags */
} jg_options;

/* Creates a context bound to the CUDA context current on the calling thread
 * (for example the primary context made current by the CUDA runtime).
 * opt may be NULL (defaults). The strings in opt are copied.
 * Returns JG_ERR_NO_DRIVER without a driver, JG_ERR_NO_DEVICE without a
 * current CUDA context, JG_ERR_UNSUPPORTED_ARCH on a GPU other than sm_90,
 * JG_ERR_INVALID for bad options (unknown flags, max_kernels below
 * JG_MAX_KERNELS_UNLIMITED). On failure *out is NULL and
 * jg_context_last_error(NULL) tells why. */
JG_API jg_status jg_context_create(const jg_options *opt, jg_context **out);

/* Frees the context, its plans and loaded modules. NULL is ignored. Not to be
 * called while other threads use the context or its kernels still run (in
 * flight, or in a CUDA graph that will be launched again). */
JG_API void jg_context_destroy(jg_context *ctx);

/* The text of the context's last failure: the failing call's name, the
 * CUresult name or the NVRTC log. ctx NULL: the calling thread's last failure
 * of a call that had no context (jg_context_create). Never NULL; "" when
 * nothing failed. Valid until the next failing call on the same context. */
JG_API const char *jg_context_last_error(const jg_context *ctx);

/* "sm_90a" etc.: what this context compiles for. */
JG_API const char *jg_context_arch(const jg_context *ctx);

typedef struct jg_context_stats {
    uint64_t plans_memory;    /* jg_gemm_plan answered from the memory cache */
    uint64_t plans_disk;      /* kernels loaded from the disk cache */
    uint64_t plans_compiled;  /* kernels compiled by NVRTC */
    uint64_t compile_failures;
    double compile_ms;        /* wall time spent in NVRTC, all threads summed */
} jg_context_stats;

JG_API jg_status jg_context_get_stats(const jg_context *ctx, jg_context_stats *out);

/* ---- the memory cache, and how long plans live ------------------------------
 *
 * A context keeps the plans and kernels (each kernel a loaded CUDA module) it
 * has built, so that a repeated problem costs a hash lookup. Both are
 * bounded by jg_options.max_kernels (default 1024, or $JITGEMM_MAX_KERNELS):
 * past it, the least recently used plans and kernels that nothing holds are
 * freed, and a freed kernel's module is unloaded once the GPU is done with
 * it. A problem met again after its plan was freed is planned again (from
 * the disk cache, or compiled): the same kernel, the same results.
 *
 * Who holds what:
 *   - jg_gemm_plan and jg_grouped_plan return the plan pinned: it stays
 *     valid, and its kernel loaded, until jg_plan_release is called once
 *     for each time a plan call returned it, or until jg_context_destroy.
 *     A program that never releases keeps every plan it asked for, as
 *     before 0.7: pinned plans are never freed to meet the bound, which the
 *     cache then exceeds by them (jg_cache_stats.plans_held); with more
 *     pinned than the bound, other plans live only while in use.
 *   - jg_gemm, jg_grouped, jg_quantize_e4m3 and jg_quantize_nvfp4 hold
 *     their plan or kernel only during the call. The CUDA driver does not
 *     promise that unloading a module waits for its launches in flight, so
 *     after such a call's launch the library records an event on the
 *     stream (two stream queries and an event record on the host), and
 *     unloads a freed kernel's module only once every such event has
 *     completed (checked, never waited for, at the end of later one-shot
 *     calls, plan or kernel builds and releases): these calls ask nothing
 *     of the caller.
 *   - A CUDA graph holds its kernels' modules for as long as it may run.
 *     Called on a stream that is capturing a graph, those one-shot calls
 *     therefore pin their plan (or kernel) until jg_context_destroy (as
 *     they do, rarely, when one kernel has one-shot launches in flight on
 *     more than four streams at once, which the library does not follow). To
 *     bound the memory of captured GEMMs, capture jg_gemm_run or
 *     jg_grouped_run with a pinned plan and release it once every graph
 *     (and graph exec) that launches it is destroyed.
 * With JG_MAX_KERNELS_UNLIMITED nothing is freed before jg_context_destroy
 * and the one-shot calls record no event. */

/* Releases one pin of a plan returned by jg_gemm_plan or jg_grouped_plan.
 * Once every pin is released the plan may be freed at any later call on
 * the context, and its module unloaded: release it only when no launch of
 * it through jg_gemm_run or jg_grouped_run is still in flight (for
 * example after synchronizing the streams it ran on) and no CUDA graph that
 * launches it will run again, and do not use the pointer afterwards. NULL
 * is ignored (JG_OK). Returns JG_ERR_INVALID when the plan has no pin left
 * (released more often than it was returned). */
JG_API jg_status jg_plan_release(jg_plan *plan);

/* 0.7: the memory cache's state (its own struct: jg_context_get_stats
 * writes a whole jg_context_stats, so that struct cannot grow). */
typedef struct jg_cache_stats {
    int64_t max_kernels;       /* the bound in force; JG_MAX_KERNELS_UNLIMITED: none */
    uint64_t kernels;          /* kernels in the cache (being built included) */
    uint64_t plans;            /* plans in the cache, dense and grouped */
    uint64_t plans_held;       /* of those, plans held: pinned and not released, pinned
                                  by a captured one-shot call, or in a call right now */
    uint64_t modules;          /* CUDA modules loaded now: the cached kernels' and the
                                  freed ones' still waiting (0 in an offline context) */
    uint64_t modules_waiting;  /* freed kernels whose module waits for launches */
    uint64_t modules_peak;     /* the most modules loaded at once so far */
    uint64_t module_bytes;     /* the loaded modules' cubins, bytes summed: their code
                                  and constants, which the driver places in device
                                  memory with its own overhead (not counted) */
    uint64_t kernel_evictions; /* kernels freed to meet the bound so far */
    uint64_t plan_evictions;   /* plans freed to meet the bound so far */
} jg_cache_stats;

/* Returns JG_ERR_NULL_POINTER for a NULL argument. */
JG_API jg_status jg_context_get_cache_stats(const jg_context *ctx, jg_cache_stats *out);

/* ---- dense GEMM -------------------------------------------------------- */

enum {
    /* M is a run-time argument (jg_gemm_args.m): one compiled kernel serves
     * every M. problem.m is then a hint the planner sizes tiles for; a hint
     * below a tile's rows also sizes A's loads (the hint rounded up to a
     * power of two, as many of them per tile as the launch's M needs), so
     * hint the largest M of the calls a plan serves (a bucket's top). */
    JG_GEMM_M_GENERIC = 1u << 0,
    /* 0.6: programmatic dependent launch (PDL). Each jg_gemm_run launches the
     * kernel as a programmatic dependent of the kernel before it on the
     * stream: its CTAs may start and set up (barriers, tensor-map
     * prefetches) while that kernel finishes, and every global access (A,
     * B, C, the scales, D) waits for that kernel to complete and its memory
     * to be visible (griddepcontrol.wait), so the results are those of a
     * plain launch. Once its last loads are issued, each launch
     * also lets the stream's next programmatic dependent (a PDL launch of
     * ours or the caller's) start. Worth it for chains of short GEMMs
     * (decode), where launch latency and the first loads are a large part
     * of each GEMM's time. */
    JG_GEMM_PDL = 1u << 1,
    /* 0.7: A is given as [K, M] row-major (M-major): element (m, k) at
     * a[k * lda + m], lda >= m (M-generic plans: >= every call's args.m).
     * 16-bit types only. */
    JG_GEMM_A_M_MAJOR = 1u << 2,
    /* 0.7: B is given as [K, N] row-major (N-major): element (n, k) at
     * b[k * ldb + n], ldb >= n. 16-bit types only. With both flags the
     * call is D = A^T B in the terms of a row-major [K, M] A and [K, N] B:
     * the four transpose cases of a BLAS GEMM run without a copy. */
    JG_GEMM_B_N_MAJOR = 1u << 3,
    /* 0.7: the plan takes pointers aligned to their element only (2 bytes
     * for 16-bit types, 1 for e4m3, 4 for FP32), not 16 bytes: each launch
     * loads each operand by TMA where its pointer and rows allow, else by
     * cp.async, and stores D directly where TMA cannot. Problems whose
     * leading dimensions are not multiples of 16 bytes get such plans
     * without the flag. Costs a few percent where every pointer turns out
     * aligned; none where they are not. See "Alignment" below. Such plans
     * (16-bit, FP8, TF32) also take an optional workspace: "Unaligned
     * operands with a workspace" below. */
    JG_GEMM_UNALIGNED = 1u << 4,
    /* 0.7: FP32 A and B to FP32 accuracy: each product as three TF32
     * products (a_hi b_hi + a_hi b_lo + a_lo b_hi, a = a_hi + a_lo, the
     * parts rounded to nearest TF32), about 3x the time of the TF32
     * product. A first kernel splits A and B into the caller's workspace
     * (jg_gemm_args.workspace, jg_plan_workspace_bytes: (m + n) * KP * 8
     * bytes, KP = k rounded up to 64; M-generic plans: for each call's m),
     * on the same stream. K-major A and B only; inputs finite. */
    JG_GEMM_FP32_EXACT = 1u << 5,
};

/* Everything that shapes the kernel. A zeroed struct plus the fields you need.
 * Rules (checked before anything is compiled; JG_ERR_INVALID or
 * JG_ERR_UNSUPPORTED with the rule in the message):
 *   a_type == b_type: BF16, FP16, FP32, E4M3 (scale != NONE) or NVFP4;
 *   d_type BF16, FP16 or FP32; c_type NONE or == d_type;
 *   1 <= m, n, k <= 2^31 - 1 (JG_ERR_TOO_LARGE beyond);
 *   K-major A: lda >= k; M-major A (JG_GEMM_A_M_MAJOR): lda >= m;
 *   K-major B: ldb >= k; N-major B (JG_GEMM_B_N_MAJOR): ldb >= n;
 *   ldd (and ldc) >= n; 0 means packed (the least allowed); any value
 *   (0.6 and before: multiples of 16 bytes), each row under 2^40 bytes;
 *   MN-major operands: BF16 or FP16 (wgmma transposes no other type:
 *   JG_ERR_UNSUPPORTED for FP8, FP32 and NVFP4);
 *   FP32 A and B: no scale; TF32 tensor cores (10-bit significands, as
 *   torch's allow_tf32: each input rounded to the nearest TF32 value as it
 *   is loaded, within 2^-11 of itself), or FP32 accuracy with
 *   JG_GEMM_FP32_EXACT.
 * Alignment. A plan loads A and B with TMA and stores D with TMA when its
 * problem's leading dimensions times the element size are multiples of
 * 16 bytes and JG_GEMM_UNALIGNED is not set; jg_gemm_run then needs a, b
 * and d 16-byte aligned (JG_ERR_MISALIGNED, whose message names the
 * flag). Any other plan takes pointers aligned to their element and picks
 * per launch, per operand, TMA or cp.async. C is read element by element:
 * element-aligned in every plan. jg_gemm (plan and run in one) adds
 * JG_GEMM_UNALIGNED itself when a pointer is not 16-byte aligned.
 * Speed: TMA loads rows fastest when they are a multiple of 128 bytes
 * apart; FP8 rows off that, and 16-bit rows not a multiple of 32 bytes
 * apart, take up to ~1.4x the time (the planner shares B across clusters
 * of 2 there); unaligned plans run at 0.35-1 of the aligned ones (without
 * a workspace). Pad leading dimensions where the layout is yours to choose.
 * Unaligned operands with a workspace (0.8). A dense plan whose A or B
 * may load by cp.async (its rows off 16 bytes, or JG_GEMM_UNALIGNED;
 * BF16, FP16, e4m3 or FP32 as TF32; not JG_GEMM_FP32_EXACT) also holds
 * the kernel of the aligned problem and a pack kernel, compiled with it.
 * jg_plan_workspace_bytes reports what the pack needs: for each such
 * operand, its rows (K-major A: m, B: n; M-major A and N-major B: k) times
 * its rows' bytes (K-major: k; M-major A: m, M-generic plans lda; N-major
 * B: n; times the element size) rounded up to 128; A's copy first, then
 * B's (M-generic K-major A: for each call's args.m). A launch given
 * args.workspace (16-byte aligned, at least that many bytes; not
 * overlapping a, b, c or d) copies those operands there, rows on 128-byte
 * lines, by a first kernel on the same stream (their bytes read once and
 * written once: ~2-3 us plus (m + n) k elements twice at the memory's
 * bandwidth), then runs the aligned GEMM over the copies; D is stored as
 * without a workspace. The workspace is optional: with none (NULL), one
 * too small, or one not 16-byte aligned, and where every such operand's
 * pointer and rows turn out 16-byte aligned at that launch, the plan runs
 * as without one. Two launches in flight at once need two workspaces.
 * jg_gemm reads args.workspace only where the problem it is given already
 * needs an unaligned plan (JG_GEMM_UNALIGNED set, rows off 16 bytes, an
 * MN-major operand or FP32): where it adds the flag itself for the
 * pointers, a caller built against the 0.6 header may pass no such field.
 * Split-K through a workspace (0.9). A dense BF16, FP16 or FP8 (tensor
 * or row scales) plan with M baked in whose K the planner splits over a
 * cluster of 2 or 4 CTAs (long K, few output tiles) with plain tiles past
 * M = 128 splits it through a workspace instead: the same tile in 2 or 4
 * units, each storing its FP32 sums there for the tile's last unit to add
 * (measured 1.09-1.17x faster on H200). A dense BF16 or FP16 plan whose
 * swap-AB tiles of 128 weight rows span M (M 65-352, in one column or two
 * of at most 176) and fill under half the SMs splits K so too, into SMs /
 * tiles units where each keeps 64 stages of K (measured 1.11x on H200).
 * jg_plan_workspace_bytes reports what it needs: a 4-byte count per output
 * tile rounded up to 256 bytes, then (units - 1) FP32 tiles of sums per
 * tile (a few MB to tens: 66 tiles of 128x120 at 2 units, 4.1 MB; 36 of
 * 128x168 at 3 units, 6.2 MB). Given args.workspace (16-byte
 * aligned, at least that many bytes, any contents: the launch zeroes the
 * counts on the stream first), a launch splits through it; with none, one
 * too small or misaligned, it runs the cluster's plan, built with it: the
 * workspace is optional, and a caller who passes none gets the plans of
 * 0.8. Two launches in flight at once need two workspaces. jg_gemm reads
 * args.workspace as jg_gemm_run does. Only in contexts made with
 * JG_CONTEXT_WORKSPACE (the caller's args carry the workspace fields).
 * The split's units wait for one another: the kernel counts on every CTA
 * of its grid (one per SM at most) running at once. On a GPU whose SMs
 * other work holds meanwhile (an MPS partition, a persistent kernel beside
 * it) a launch waits for them to free, and could wait for ever where that
 * work waits on it: leave JG_CONTEXT_WORKSPACE unset there.
 * JITGEMM_SPLIT_WS=S (2-16) splits every plan that allows it into S units
 * so (for experiments; it measured slower than the unsplit plans on
 * long-K rows), =0 never; with JITGEMM_SPLIT_DP=1 (16-bit operands, tiles
 * up to 256 wide without C) only the tiles of the last one or two waves,
 * the others running whole first (the workspace holds counts and sums for
 * the split tiles alone; for experiments: it measured no faster than the
 * unsplit plans where the last wave was ragged).
 * Stream-K through the workspace (0.9). A dense BF16 or FP16 plan with M
 * baked in, M within one tile (or two: then the grid runs the two rows of
 * tiles in two interleaved groups of CTAs, units of 16 stages or more,
 * measured 1.03x on such rows), and 66 to 264 output tiles on 132 SMs
 * (half a wave to two waves, the last ragged: 149x17408x5760 makes 242
 * tiles of 128x144) may run stream-K where the planner's model rates it
 * 1.15x faster: the tile's K in S units (2-16), each CTA of the grid an
 * equal run of consecutive units, the runs that cut a tile summed through
 * the workspace (measured 1.11-1.92x, 1.34x over 19 such rows, on H200).
 * Its workspace: a 4-byte flag per CTA of the grid rounded up to 256
 * bytes, then one FP32 tile of sums per CTA (132 tiles of 128x144: 9.7
 * MB); the launch zeroes the flags; without a workspace the launch runs
 * the plan without stream-K, as above. The same co-residency caveat
 * holds. JITGEMM_STREAM_K=S (2-16) runs every plan that allows it
 * stream-K in S units a tile (for experiments), =0 never.
 * NVFP4 (a_type = b_type = JG_NVFP4, scale JG_SCALE_NVFP4, JG_ERR_INVALID
 * otherwise): k a multiple of 16; lda, ldb multiples of 32 (rows 16 bytes
 * apart); a_sf_layout and b_sf_layout JG_SF_ROW_MAJOR or
 * JG_SF_SWIZZLED_128X4, and k a multiple of 256 with JG_SF_ROW_MAJOR (rows
 * of scales k/16 bytes apart: TMA's 16-byte rule). Hopper has no FP4 MMA:
 * the kernels dequantize codes times block scales to FP16 (up to 256 rows
 * of A, B in registers and A in shared memory; beyond, and grouped, A in
 * registers and B in shared memory), every such product exactly (times a
 * power of two), and run FP16 wgmmas with FP32 sums;
 * alpha and the global scales apply in the epilogue.
 * JITGEMM_TUNE does not time NVFP4 problems (the planner picks). The sf
 * layout fields are read only when
 * a_type or b_type is JG_NVFP4, so callers built against the 0.2 header
 * (whose struct ends at scale) are unaffected. */
typedef struct jg_gemm_problem {
    uint32_t flags; /* JG_GEMM_* */
    jg_dtype a_type, b_type, c_type, d_type;
    int64_t m, n, k;
    int64_t lda, ldb, ldc, ldd;
    jg_scale_mode scale; /* JG_SCALE_TENSOR with JG_E4M3 operands, else NONE */
    /* 0.3: JG_NVFP4 operands only (JG_SF_LAYOUT_NONE otherwise, not read) */
    jg_sf_layout a_sf_layout, b_sf_layout;
} jg_gemm_problem;

/* What changes from call to call. Pointers: 16-byte aligned, or aligned to
 * their element where the plan allows it ("Alignment" above). c may equal
 * d (in-place update). With c_type NONE, c and beta are ignored. */
typedef struct jg_gemm_args {
    const void *a;
    const void *b;
    const void *c;
    void *d;
    float alpha;
    float beta;
    int64_t m; /* M-generic plans: rows of this call (1..2^31-1); 0 = problem.m.
                  Other plans: 0 or problem.m. */
    const float *a_scale; /* scaled problems: on the device, 4-byte aligned */
    const float *b_scale;
    /* 0.3, JG_NVFP4 plans only (not read otherwise): the e4m3 block scales
     * on the device, 16-byte aligned, in the problem's sf layouts. */
    const void *a_sf;
    const void *b_sf;
    /* 0.7, read only when the problem sets JG_GEMM_FP32_EXACT: device
     * memory for this launch's TF32 parts of A and B (16-byte aligned; two
     * launches in flight at once need two), and its size, at least
     * jg_plan_workspace_bytes (M-generic plans: (args.m + n) * KP * 8).
     * 0.8: also read by plans with unaligned A or B, for which it is
     * optional ("Unaligned operands with a workspace" above); 0.9: by
     * plans that split K through it, optional too ("Split-K through a
     * workspace"). */
    void *workspace;
    size_t workspace_bytes;
} jg_gemm_args;

/* Finds or builds the plan for a problem: memory cache, then disk cache,
 * then NVRTC. Thread-safe: threads asking for the same uncached kernel at
 * once compile it once. *out is owned by ctx and pinned: valid until
 * jg_plan_release or jg_context_destroy (see "the memory cache"). In an
 * offline context the kernel is compiled and cached but *out cannot be run. */
JG_API jg_status jg_gemm_plan(jg_context *ctx, const jg_gemm_problem *problem,
                              jg_plan **out);

/* Launches the plan on stream: no allocation, no synchronization, no
 * compilation; capturable in a CUDA graph. The context's CUDA context must be
 * current on the calling thread. Returns JG_ERR_NULL_POINTER,
 * JG_ERR_MISALIGNED (a pointer the plan cannot take: see "Alignment"),
 * JG_ERR_INVALID (args.m; an M-major A's lda below args.m; a workspace too
 * small), JG_ERR_OFFLINE or JG_ERR_CUDA. */
JG_API jg_status jg_gemm_run(jg_plan *plan, const jg_gemm_args *args, jg_stream stream);

/* 0.9: jg_gemm_run with the plan's CUDA context (the one current when its
 * jg_context was created) current: where another context, or none, is
 * current on the calling thread, it is pushed for the launch and popped
 * after it, so the thread's own is current again on return. For callers
 * that cannot know which context is current (a runtime serving several
 * devices, a thread that made no CUDA call yet); where it is current already
 * the call costs one cuCtxGetCurrent more than jg_gemm_run. The plan's
 * lifetime and thread-safety are jg_gemm_run's (any thread may call it; the
 * push is the calling thread's alone). Pushing a context is no stream work:
 * in a stream that captures a CUDA graph, the launch is captured as
 * jg_gemm_run's is, and stream must belong to the plan's CUDA context.
 * Returns jg_gemm_run's statuses, in the same order (an offline context's
 * argument checks, then JG_ERR_OFFLINE); JG_ERR_CUDA also where the context
 * cannot be asked for or pushed. */
JG_API jg_status jg_gemm_run_in_context(jg_plan *plan, const jg_gemm_args *args, jg_stream stream);

/* jg_gemm_plan then jg_gemm_run, holding the plan only during the call: it
 * may be freed later to meet the cache's bound (see "the memory cache").
 * JG_GEMM_UNALIGNED is added to the problem when a, b, c or d is not
 * 16-byte aligned (a plan of its own). */
JG_API jg_status jg_gemm(jg_context *ctx, const jg_gemm_problem *problem,
                         const jg_gemm_args *args, jg_stream stream);

/* ---- grouped GEMM (MoE experts) ------------------------------------------ */

/* The most groups a list-layout kernel bakes in (its parameter block holds
 * three tensor maps per group: 64 groups are 25.6 KB of the 32 KB limit). */
#define JG_GROUPED_MAX_GROUPS 64
/* The list layout's most groups with NVFP4 operands (two more tensor maps
 * and two more pointers per group: 40 groups are 27.6 KB). */
#define JG_GROUPED_MAX_NVFP4_GROUPS 40
/* The most groups of the contiguous and masked layouts (rows read on the device). */
#define JG_GROUPED_MAX_DEVICE_GROUPS 256

typedef enum jg_grouped_layout {
    /* Separate matrices per group: A_g [m_g, k], B_g [n, k], D_g [m_g, n]
     * (and C_g). The group count and every m_g are baked into the kernel:
     * one compile per distinct list of m_g, nothing set up on the device. */
    JG_GROUPED_LIST = 1,
    /* A [m_max, k] holds the groups' rows one after another, B [groups, n, k],
     * D [m_max, n]; args.rows (device) holds groups + 1 row offsets (group g
     * is rows rows[g] .. rows[g+1]-1). M-generic: changing the offsets never
     * recompiles; they are read when the kernel starts. */
    JG_GROUPED_CONTIGUOUS = 2,
    /* A [groups, m_max, k], D [groups, m_max, n]; args.rows (device) holds the
     * valid rows of each group (<= m_max), e.g. written by the router in a
     * CUDA graph. Rows past a group's count are neither read into D nor written. */
    JG_GROUPED_MASKED = 3,
} jg_grouped_layout;

/* D_g = alpha * A_g * B_g^T + beta * C_g for every group g. The same rules as
 * jg_gemm_problem for types, layouts, leading dimensions and alignment
 * (shared by all groups), but for FP32 A and B: TF32 only (no exact mode).
 * List layout: 1 <= groups <= JG_GROUPED_MAX_GROUPS (JG_ERR_TOO_LARGE beyond),
 * m[g] >= 0 the rows of each group (0: skipped), baked into the kernel.
 * Contiguous and masked: 1 <= groups <= JG_GROUPED_MAX_DEVICE_GROUPS, m_max
 * >= 1 as the layouts say; m may be NULL or give expected rows per group,
 * which only size the tiles (per group, rounded up to 64 rows: hints that
 * round alike share a plan; the kernel never depends on them).
 * m is copied. Different n or k per group are not supported.
 * NVFP4 (a_type = b_type = JG_NVFP4, scale JG_SCALE_NVFP4): the dense rules
 * (k, lda, ldb, the sf layouts), the list layout up to
 * JG_GROUPED_MAX_NVFP4_GROUPS groups (JG_ERR_TOO_LARGE beyond); in the
 * contiguous layout a_sf_layout must be JG_SF_ROW_MAJOR (a group's first row
 * is known only on the device, so its scales cannot be found in 128-row
 * blocks; JG_ERR_UNSUPPORTED). Where each scale lives: jg_grouped_args. */
enum {
    /* 0.5: the caller passes a device workspace with every launch
     * (jg_grouped_args.workspace, at least jg_plan_workspace_bytes bytes),
     * which the plan may use. NVFP4 list-layout plans then dequantize each
     * group's activation once per launch into it (FP16, rows x k rounded up
     * to 64, 2 bytes each) and run a kernel that reads it by TMA instead of
     * expanding both operands in every tile: on H200 the seeds' four
     * grouped cases ran 1.12-1.62x faster. That kernel compiles longer,
     * one wgmma shape per distinct chunk height and at most 8 (about 3.2 s
     * for 8 on one NVRTC thread), so warm such plans ahead (jitgemm-warm). Other
     * plans need none (0 bytes) and ignore the fields. Without the flag the
     * fields are not read (callers built against 0.4 headers, whose args
     * struct is shorter). */
    JG_GROUPED_WORKSPACE = 1u << 0,
    /* 0.7: every B_g is given as [K, N] row-major (N-major), as
     * JG_GEMM_B_N_MAJOR: 16-bit types, list layout (the contiguous and
     * masked layouts stack B_g by rows: JG_ERR_UNSUPPORTED). */
    JG_GROUPED_B_N_MAJOR = 1u << 3,
    /* 0.7: pointers aligned to their element only, as JG_GEMM_UNALIGNED
     * (and the same without the flag where a leading dimension is not a
     * multiple of 16 bytes); each launch takes TMA for an operand only
     * where every group's pointer allows it. Not with NVFP4 operands. */
    JG_GROUPED_UNALIGNED = 1u << 4,
};

typedef struct jg_grouped_problem {
    uint32_t flags; /* JG_GROUPED_* (0.4 and before: none, 0) */
    jg_grouped_layout layout;
    jg_dtype a_type, b_type, c_type, d_type;
    int32_t groups;
    const int64_t *m; /* groups values */
    int64_t n, k;
    int64_t lda, ldb, ldc, ldd;
    int64_t m_max;    /* contiguous and masked layouts */
    jg_scale_mode scale; /* e4m3 (contiguous, masked): JG_SCALE_ROW or _BLOCK; else NONE */
    /* 0.4: JG_NVFP4 operands only (not read otherwise), as jg_gemm_problem's */
    jg_sf_layout a_sf_layout, b_sf_layout;
} jg_grouped_problem;

/* List layout: host arrays of `groups` device pointers, each 16-byte
 * aligned (or to its element, as "Alignment" says); pointers of groups with
 * m[g] = 0 are ignored (may be NULL).
 * Contiguous and masked: each array holds one pointer, the whole tensor, and
 * rows is a device array (4-byte aligned) as the layout says. c may be NULL
 * without C. */
typedef struct jg_grouped_args {
    const void *const *a;
    const void *const *b;
    const void *const *c;
    void *const *d;
    float alpha;
    float beta;
    const int32_t *rows; /* contiguous and masked layouts: on the device */
    /* e4m3, contiguous and masked layouts: on the device, as A and B are stacked:
     * TENSOR a_scale[groups], b_scale[groups] (one per group's A and B);
     * ROW a_scale[rows of A], b_scale[groups * n];
     * BLOCK a_scale[rows of A][ceil(k/128)], b_scale[groups][ceil(n/128)][ceil(k/128)]. */
    const float *a_scale;
    const float *b_scale;
    /* e4m3, list layout: host arrays of `groups` device pointers (4-byte
     * aligned; groups without rows are not read), each group's scales laid out
     * as a dense problem's of m_g rows (jg_gemm_args.a_scale, b_scale). */
    const float *const *a_scales;
    const float *const *b_scales;
    /* 0.4, NVFP4 (not read otherwise). The FP32 global scales are the
     * e4m3 fields above: list, a_scales[g][0] and b_scales[g][0]; contiguous
     * and masked, a_scale[g] and b_scale[g] (one per group's A and B, as
     * TENSOR). The e4m3 block scales, 16-byte aligned, in the problem's sf
     * layouts (see "NVFP4"):
     * list: host arrays of `groups` device pointers, each group's as a dense
     *   problem's of m_g (A) and n (B) rows (groups without rows not read); */
    const void *const *a_sfs;
    const void *const *b_sfs;
    /* contiguous and masked: one device pointer each. A: row-major over all
     *   rows of A (contiguous m_max, masked groups * m_max); masked and
     *   swizzled, `groups` swizzled arrays of m_max rows one after another,
     *   group g's from g * jg_nvfp4_sf_bytes(layout, m_max, k). B: `groups`
     *   arrays of n rows one after another, group g's from
     *   g * jg_nvfp4_sf_bytes(b_sf_layout, n, k) (row-major: [groups * n][k/16]). */
    const void *a_sf;
    const void *b_sf;
    /* 0.5, read only when the problem sets JG_GROUPED_WORKSPACE: device
     * memory for this launch alone (16-byte aligned; the kernels of two
     * launches in flight at once need two), and its size, at least
     * jg_plan_workspace_bytes. It may be NULL where that is 0. */
    void *workspace;
    size_t workspace_bytes;
} jg_grouped_args;

/* As jg_gemm_plan, for a grouped problem. The plan runs with jg_grouped_run
 * only (jg_gemm_run refuses it with JG_ERR_INVALID, and the other way round). */
JG_API jg_status jg_grouped_plan(jg_context *ctx, const jg_grouped_problem *problem,
                                 jg_plan **out);

/* Launches every group in one kernel: no allocation, no sync; the tensor
 * maps of the last pointer set are kept, so a repeated call encodes nothing. */
JG_API jg_status jg_grouped_run(jg_plan *plan, const jg_grouped_args *args, jg_stream stream);

/* 0.9: jg_grouped_run with the plan's CUDA context current, as
 * jg_gemm_run_in_context is to jg_gemm_run (the same pushes, captures and
 * statuses). */
JG_API jg_status jg_grouped_run_in_context(jg_plan *plan, const jg_grouped_args *args,
                                           jg_stream stream);

/* jg_grouped_plan then jg_grouped_run, holding the plan only during the
 * call, as jg_gemm does. */
JG_API jg_status jg_grouped(jg_context *ctx, const jg_grouped_problem *problem,
                            const jg_grouped_args *args, jg_stream stream);

/* ---- FP8 and NVFP4 quantization ------------------------------------------ */

/* dst = e4m3(src / s), s = amax / 448 of each group (1 for an all-zero
 * group), round to nearest, saturating; src ~= dst * s. The scales come out
 * in the layouts the FP8 GEMM reads (jg_scale_mode): TENSOR scale[0]; ROW
 * scale[rows]; BLOCK with block_rows 1 (1x128, for activations, A)
 * scale[rows][ceil(cols/128)], with block_rows 128 (128x128, for weights, B)
 * scale[ceil(rows/128)][ceil(cols/128)]. Compiled through the same JIT
 * pipeline and caches as the GEMMs. */
typedef struct jg_quant_problem {
    jg_dtype src_type;     /* JG_BF16 or JG_FP16 */
    jg_scale_mode scale;   /* JG_SCALE_TENSOR, JG_SCALE_ROW or JG_SCALE_BLOCK;
                              jg_quantize_nvfp4: JG_SCALE_NVFP4 */
    int32_t block_rows;    /* JG_SCALE_BLOCK: 1 or 128; otherwise 0 */
    int64_t rows, cols;
    int64_t ld_src, ld_dst; /* elements; 0: packed */
    jg_sf_layout sf_layout; /* 0.3, jg_quantize_nvfp4 only (not read by jg_quantize_e4m3) */
} jg_quant_problem;

typedef struct jg_quant_args {
    const void *src; /* device, 2-byte aligned */
    void *dst;       /* device, e4m3 bytes; NVFP4: packed e2m1, 16-byte aligned */
    float *scale;    /* device, 4-byte aligned, as many as the mode needs;
                        NVFP4: the global scale g, one */
    void *sf;        /* 0.3, jg_quantize_nvfp4 only: the e4m3 block scales, 16-byte
                        aligned, jg_nvfp4_sf_bytes(sf_layout, rows, cols) bytes */
} jg_quant_args;

/* Launches the quantization on stream (the tensor mode: a memset and three
 * small launches); no allocation, no sync. Returns JG_ERR_NULL_POINTER,
 * JG_ERR_INVALID, JG_ERR_MISALIGNED, JG_ERR_UNSUPPORTED (a source type),
 * JG_ERR_TOO_LARGE, JG_ERR_OFFLINE (after compiling), or a compile/CUDA error. */
JG_API jg_status jg_quantize_e4m3(jg_context *ctx, const jg_quant_problem *problem,
                                  const jg_quant_args *args, jg_stream stream);

/* BF16/FP16 [rows, cols] -> NVFP4 by the recipe of "NVFP4" above: codes
 * into dst (rows of ld_dst / 2 bytes), block scales into sf in
 * problem.sf_layout (padding bytes of the swizzled layout written 0), the
 * global scale g into scale[0]. Rules: src_type JG_BF16 or JG_FP16, scale
 * JG_SCALE_NVFP4, block_rows 0, sf_layout JG_SF_ROW_MAJOR or
 * JG_SF_SWIZZLED_128X4 (JG_ERR_INVALID otherwise), cols a multiple of 16,
 * ld_dst 0 or a multiple of 16 (JG_ERR_INVALID); dst and sf 16-byte, scale
 * 4-byte, src 2-byte aligned (JG_ERR_MISALIGNED). Launches a memset and
 * three small kernels (amax, quantize, g) on stream: no allocation, no
 * sync. Returns as jg_quantize_e4m3 does. */
JG_API jg_status jg_quantize_nvfp4(jg_context *ctx, const jg_quant_problem *problem,
                                   const jg_quant_args *args, jg_stream stream);

/* ---- plan introspection ------------------------------------------------ */

typedef enum jg_origin {
    JG_ORIGIN_COMPILED = 1, /* NVRTC compiled it in this process */
    JG_ORIGIN_DISK = 2,     /* loaded from the disk cache */
} jg_origin;

typedef struct jg_plan_info {
    const char *kernel_name; /* e.g. "jg_gemm_bf16_bf16_sm90a_128x256x64_s4_c1"; owned by the plan */
    jg_origin origin;        /* how the kernel reached this process */
    uint32_t block_m, block_n, block_k, stages, cluster;
    uint32_t grid;           /* CTAs launched (persistent) for problem.m */
    uint32_t threads;        /* per CTA */
    uint32_t smem_bytes;     /* dynamic shared memory per CTA */
    uint64_t key_hash[2];    /* the XXH3-128 cache key */
} jg_plan_info;

JG_API jg_status jg_plan_get_info(const jg_plan *plan, jg_plan_info *out);

/* 0.5: the device workspace bytes each launch of the plan needs in
 * jg_grouped_args.workspace (problems with JG_GROUPED_WORKSPACE); 0 for
 * plans that use none. 0.7: dense JG_GEMM_FP32_EXACT plans, in
 * jg_gemm_args.workspace ((m + n) * KP * 8). 0.8: dense plans with
 * unaligned A or B, the workspace they may use (optional: see "Unaligned
 * operands with a workspace"). 0.9: dense plans that split K through a
 * workspace, the one they may use (optional: "Split-K through a
 * workspace"). M-generic plans: for problem.m. */
JG_API jg_status jg_plan_workspace_bytes(const jg_plan *plan, size_t *out);

/* ---- which kernel, without building it (0.7) ------------------------------ */

/* A kernel as the disk cache and the logs know it. */
typedef struct jg_kernel_id {
    char name[128];       /* as jg_plan_info.kernel_name */
    uint64_t key_hash[2]; /* as jg_plan_info.key_hash: the kernel's disk cache key */
} jg_kernel_id;

/* The kernel jg_gemm_plan would use for problem, without compiling, loading
 * or caching anything: the problem is validated (the statuses and messages
 * of jg_gemm_plan) and the planner chooses, as jg_gemm_plan does, so that a
 * tool can count the distinct kernels of many problems, or look for them in
 * the disk cache (jg_context_cache_entry), before building any. The name
 * and key depend on the context's arch, SM count and JITGEMM_* settings, as
 * the plan's do. With JITGEMM_TUNE a GPU context may time the planner's
 * candidates here (once per problem and cache), as jg_gemm_plan would.
 * Returns JG_ERR_NULL_POINTER, the validation statuses, or
 * JG_ERR_UNSUPPORTED_ARCH; *out is zeroed on failure. */
JG_API jg_status jg_gemm_kernel_id(jg_context *ctx, const jg_gemm_problem *problem,
                                   jg_kernel_id *out);

/* As jg_gemm_kernel_id, for jg_grouped_plan. */
JG_API jg_status jg_grouped_kernel_id(jg_context *ctx, const jg_grouped_problem *problem,
                                      jg_kernel_id *out);

/* ---- the disk cache (0.7) --------------------------------------------------
 *
 * For tools and serving runtimes that look after the cache a context uses:
 * where it is, what it holds, whether each entry is whole, and pruning it.
 * cache/README.md describes the directory and the entry format. A cache is
 * filled by planning: jg_gemm_plan and jg_grouped_plan store each kernel
 * they compile (in an offline context too, which needs no GPU), so the way
 * to compile into a cache ahead of time is to plan in a context with
 * JG_CACHE_READWRITE (jitgemm-warm does).
 *
 * The functions that take `dir` resolve it as jg_options.cache_dir is
 * resolved (NULL or "": $JITGEMM_CACHE_DIR, else $XDG_CACHE_HOME/jitgemm,
 * else ~/.cache/jitgemm), need no context, GPU or driver, and refuse a
 * directory that a context would refuse (not a directory, owned by another
 * user, writable by group or others) with JG_ERR_CACHE. They read and remove
 * only files the library writes: <dir>/<arch>/<key>.cubin, <key>.lock and
 * <key>.cubin.tmp.XXXXXX in directories named sm_*; a directory given by
 * mistake loses nothing else. They may run while other threads and
 * processes use the cache. Failures are described by
 * jg_context_last_error(NULL) (by jg_context_last_error(ctx) for the two
 * that take a context). */

/* The entry format version this library writes and reads. */
#define JG_CACHE_FORMAT 1

/* Writes the directory that dir resolves to into out (len bytes, the
 * terminating NUL included). Returns JG_OK when the library would use it,
 * or when nothing is there yet (a read-write context creates it);
 * JG_ERR_CACHE when none resolves (the variables unset, a path of 4096
 * bytes or more) or the directory is refused (out then holds it, when one
 * resolved; "" otherwise); JG_ERR_NULL_POINTER for out NULL; JG_ERR_INVALID
 * when len cannot hold the path (out is then ""). */
JG_API jg_status jg_cache_dir(const char *dir, char *out, size_t len);

/* The disk cache ctx uses: *dir its directory, valid as long as ctx ("" when
 * the context has none), *mode JG_CACHE_READWRITE, JG_CACHE_READ, or
 * JG_CACHE_OFF when the context is memory-only (turned off, or the directory
 * refused: the context's log said why). Either output may be NULL.
 * Returns JG_ERR_NULL_POINTER for ctx NULL. */
JG_API jg_status jg_context_get_cache_dir(const jg_context *ctx, const char **dir,
                                          jg_cache_mode *mode);

typedef enum jg_cache_state {
    JG_CACHE_ENTRY_OK = 0,           /* passes every check made */
    JG_CACHE_ENTRY_MISSING = 1,      /* no such entry (jg_context_cache_entry) */
    JG_CACHE_ENTRY_DAMAGED = 2,      /* fails a check: a load would recompile and replace it */
    JG_CACHE_ENTRY_OTHER_FORMAT = 3, /* another format version (an older or newer library's):
                                        this one does not read it */
} jg_cache_state;

/* One entry. Times are Unix seconds. */
typedef struct jg_cache_entry {
    jg_cache_state state;
    const char *problem;   /* the check that failed ("payload checksum mismatch", "other
                              format version", ...; static text), "" when none did */
    char arch[16];         /* the directory it lies in: "sm_90a" */
    char kernel_name[128]; /* from its header, as jg_plan_info.kernel_name; "" unless OK */
    uint64_t key_hash[2];  /* from its file name, as jg_plan_info.key_hash */
    uint64_t bytes;        /* the file's size: header and cubin */
    int64_t created_unix;  /* written then (its header; unless OK, the file's modification
                              time) */
    int64_t used_unix;     /* the file's access time: when it was written, and then when a
                              process loaded it, as often as the file system records reads
                              (relatime, Linux's default: about once a day; noatime: never).
                              The library's own checks here do not count as reads. */
    uint32_t format;       /* its format version as read (0: too short to tell) */
} jg_cache_entry;

/* Called once per entry; returns 0 to go on, anything else to stop. path
 * (the entry's file) is valid during the call only. */
typedef int (*jg_cache_entry_fn)(void *user, const char *path, const jg_cache_entry *entry);

enum {
    /* Also read every entry's cubin and check its checksum, as a load does
     * (without it: the header's checks and the file's size). */
    JG_CACHE_VERIFY = 1u << 0,
};

/* Calls fn for every entry of the cache in dir (every arch), in the order
 * of their arch and then file name. flags: JG_CACHE_VERIFY or 0. Returns
 * JG_OK (also for a directory not there yet, which holds nothing),
 * JG_ERR_NULL_POINTER for fn NULL, JG_ERR_INVALID for unknown flags,
 * JG_ERR_CACHE for a directory refused or unreadable, JG_ERR_NO_MEMORY. */
JG_API jg_status jg_cache_list(const char *dir, uint32_t flags, jg_cache_entry_fn fn,
                               void *user);

/* The entry of one kernel (key_hash as jg_plan_info or jg_kernel_id give
 * it) in ctx's disk cache, checked as a load checks it (header, sizes, both
 * checksums): *out's state says whether it is there and whole. Returns
 * JG_ERR_NULL_POINTER, or JG_ERR_CACHE when ctx has no disk cache
 * (JG_CACHE_OFF, or its directory was refused). */
JG_API jg_status jg_context_cache_entry(jg_context *ctx, const uint64_t key_hash[2],
                                        jg_cache_entry *out);

/* What jg_cache_prune removes beyond what is always removed: damaged
 * entries (with JG_CACHE_VERIFY, those whose cubin fails its checksum too),
 * entries of an older format version (a newer library's are kept), temp
 * files of writers killed mid-write (older than a minute: younger ones may
 * be writes in progress) and lock files without an entry that no process
 * holds. A zeroed struct removes only those. */
typedef struct jg_cache_prune_options {
    uint32_t flags;     /* JG_CACHE_VERIFY or 0 */
    int64_t max_age_s;  /* > 0: also every entry not used (jg_cache_entry.used_unix) for
                           longer than this many seconds; 0: none by age */
    uint64_t max_bytes; /* > 0: then also the least recently used entries (used_unix,
                           then created_unix, then name), until the whole entries of
                           this format left take at most this many bytes; 0: no limit */
} jg_cache_prune_options;

typedef enum jg_cache_outcome {
    JG_CACHE_REMOVED = 0, /* the file is gone */
    JG_CACHE_BUSY = 1,    /* a lock file held by a compile in progress: kept */
    JG_CACHE_FAILED = 2,  /* could not be removed: error says why */
} jg_cache_outcome;

/* One file jg_cache_prune meant to remove. Pointers are valid during the
 * callback only. */
typedef struct jg_cache_removal {
    const char *path;             /* the file */
    const char *arch;             /* the directory it lies in */
    const char *name;             /* its name there */
    const char *reason;           /* why it was to go (static text): "damaged entry", "older
                                     format version", "not used within the age limit" (max_age_s),
                                     "least recently used, over the size limit" (max_bytes),
                                     "temp file left by an interrupted write", "lock file
                                     without an entry" */
    const jg_cache_entry *entry;  /* for entries (.cubin): what was found; else NULL */
    uint64_t bytes;               /* its size */
    jg_cache_outcome outcome;
    int error;                    /* JG_CACHE_FAILED: the errno of the removal; else 0 */
} jg_cache_removal;

typedef void (*jg_cache_removal_fn)(void *user, const jg_cache_removal *removal);

/* Removes from the cache in dir (every arch) what opt asks (NULL: a zeroed
 * struct), calling fn (may be NULL) for each file it meant to remove:
 * entries first (damaged, older format, by age, then by size), then lock
 * files, then temp files. An entry in use by a process is unaffected (it
 * has the file open, or loaded its cubin); a process that later needs a
 * removed kernel compiles it again. Returns JG_OK when every file meant to
 * go is gone (or busy), JG_ERR_CACHE when one could not be removed (the last
 * error names the first) or the directory is refused or unreadable,
 * JG_ERR_INVALID for unknown flags or max_age_s < 0, JG_ERR_NO_MEMORY. */
JG_API jg_status jg_cache_prune(const char *dir, const jg_cache_prune_options *opt,
                                jg_cache_removal_fn fn, void *user);

#ifdef __cplusplus
}
#endif

#endif /* JITGEMM_JITGEMM_H */
