/* jitgemm-bench: times libjitgemm against cuBLASLt on the shapes of a spec
 * file, in one process, and reports each row against the speed of light
 * measured in the same run.
 *
 *   jitgemm-bench [--spec FILE] [--only NAME,NAME] [--dtype bf16|fp16|fp8|nvfp4]
 *                 [--scale tensor|row|block] [--sf-layout swizzled|rowmajor]
 *                 [--out-dtype bf16|fp16|fp32]
 *                 [--reps N] [--json FILE] [--no-peer] [--flush read|memset|none]
 *                 [--chain N] [--tune] [--help]
 *
 * cuBLASLt is opened with dlopen here, in the tool, so that libjitgemm keeps
 * no cuBLAS dependency; <cublasLt.h> supplies types and enums only. The
 * read-only L2 flush is a kernel compiled here with NVRTC (see flush_l2).
 * Exit status: 0 all rows fine, 1 a row failed or mismatched, 2 usage error,
 * no GPU, or a failure before the first row. bench/README.md says more. */
#include <dlfcn.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <jansson.h>
#include <nvrtc.h>

#include <jitgemm/jitgemm.h>

#include "jg_test.h" /* seeded RNG and 16-bit float conversions */
#include "jg_nvfp4_ref.h" /* e2m1/e4m3 values and code access: the nvfp4 check */
#include "spec.h"      /* the shape-spec parser every tool shares */

#define EXIT_ROWS_FAILED 1
#define EXIT_SETUP 2

#define MIN_REPS 50
#define WARMUP 10      /* launches of each implementation, at least */
#define WARM_MS 300.0  /* and for at least this long: see warm_up */
#define PICK_REPS 10   /* timed launches per cuBLASLt candidate algorithm */
#define MAX_ALGOS 8
#define MAX_TIMED 3    /* implementations timed together: ours and two peers (grouped), or
                          ours, ours without PDL and the peer (--chain) */
#define MAX_CHAIN 256  /* --chain's largest N */
#define COPY_REPS 20
#define WORKSPACE_BYTES (32ull << 20)
#define FLUSH_BYTES (256ull << 20)
#define FLUSH_THREADS 512 /* per block of the read-only flush */
#define FLUSH_BLOCKS_PER_SM 4
#define FLOOR_THREADS 384 /* per CTA of the launch floor's empty kernel: our GEMMs' */
#define COPY_BYTES (1ull << 30)
#define PEAK_DIM 8192
#define MISMATCH_TOL 2e-2
/* Two cuBLAS results (FP32 accumulation in another order, then rounded) may
 * differ by one bf16 ulp, up to 2^-7 of a value: more is a wrong peer. */
#define PEER_TOL 1e-2

/* ---- small helpers ----------------------------------------------------- */

/* Reports a failed CUDA runtime call and evaluates to true. */
#define CUDA_FAILED(call) cuda_failed((call), #call, __LINE__)

static bool cuda_failed(cudaError_t e, const char *what, int line)
{
    if (e == cudaSuccess)
        return false;
    fprintf(stderr, "jitgemm-bench:%d: %s: %s\n", line, what, cudaGetErrorString(e));
    return true;
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n), which it sorts. */
static double median(float *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_float);
    return n % 2 ? v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + v[n / 2]);
}

static const char *dtype_name(jg_dtype t)
{
    return t == JG_BF16   ? "bf16"
           : t == JG_FP16 ? "fp16"
           : t == JG_FP32 ? "fp32"
           : t == JG_E4M3 ? "e4m3"
           : t == JG_NVFP4 ? "nvfp4"
                          : "none";
}

/* Bytes per element of the 8- to 32-bit types; nvfp4 operands (half a byte
 * plus the block scales) are sized apart (nvfp4_init, row_metrics). */
static size_t dtype_size(jg_dtype t) { return t == JG_FP32 ? 4 : t == JG_E4M3 ? 1 : 2; }

static cudaDataType_t dtype_cuda(jg_dtype t)
{
    return t == JG_BF16   ? CUDA_R_16BF
           : t == JG_FP16 ? CUDA_R_16F
           : t == JG_E4M3 ? CUDA_R_8F_E4M3
                          : CUDA_R_32F;
}

/* bf16, fp16, and fp32 (D only) or fp8 and nvfp4 (A and B only) where
 * allowed. */
static jg_dtype parse_dtype(const char *s, bool allow_fp32, bool allow_fp8)
{
    if (allow_fp8 && !strcmp(s, "nvfp4"))
        return JG_NVFP4;
    if (!strcmp(s, "bf16"))
        return JG_BF16;
    if (!strcmp(s, "fp16"))
        return JG_FP16;
    if (allow_fp32 && !strcmp(s, "fp32"))
        return JG_FP32;
    if (allow_fp8 && (!strcmp(s, "fp8") || !strcmp(s, "e4m3")))
        return JG_E4M3;
    return JG_DTYPE_NONE;
}

static const char *scale_name(jg_scale_mode m)
{
    return m == JG_SCALE_TENSOR ? "tensor"
           : m == JG_SCALE_ROW  ? "row"
           : m == JG_SCALE_BLOCK ? "block"
           : m == JG_SCALE_NVFP4 ? "nvfp4"
                                 : "none";
}

static const char *sf_layout_name(jg_sf_layout l)
{
    return l == JG_SF_ROW_MAJOR ? "rowmajor" : l == JG_SF_SWIZZLED_128X4 ? "swizzled" : "none";
}

/* e4m3 (the "fn" variant): 1 sign, 4 exponent bits (bias 7), 3 mantissa
 * bits; no infinities, S.1111.111 is NaN. */
static double e4m3_decode(uint8_t v)
{
    int e = v >> 3 & 15, m = v & 7;
    double x = e == 15 && m == 7 ? NAN : e ? ldexp(8 + m, e - 10) : ldexp(m, -9);
    return v & 0x80 ? -x : x;
}

/* Element i of a bf16, fp16, fp32 or e4m3 array, as a double. */
static double load_elem(const void *p, size_t i, jg_dtype t)
{
    static double e4m3[256]; /* decoded once: the FP64 check reads ~10^8 */
    static bool e4m3_done;
    if (t == JG_E4M3 && !e4m3_done) {
        for (int v = 0; v < 256; ++v)
            e4m3[v] = e4m3_decode((uint8_t)v);
        e4m3_done = true;
    }
    if (t == JG_E4M3)
        return e4m3[((const uint8_t *)p)[i]];
    if (t == JG_FP32)
        return ((const float *)p)[i];
    uint16_t h = ((const uint16_t *)p)[i];
    return t == JG_BF16 ? jg_bf16_to_f32(h) : jg_f16_to_f32(h);
}

/* Standard normal values rounded to bf16 or fp16. Box-Muller gives two
 * values per draw; both are used because the large shapes need ~10^8. */
static void fill_normal(uint16_t *x, size_t n, jg_dtype t, uint64_t seed)
{
    jg_rng r;
    jg_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i += 2) {
        double rad = sqrt(-2.0 * log(1.0 - jg_rng_uniform(&r))); /* 1 - u is in (0, 1] */
        double phi = 6.283185307179586 * jg_rng_uniform(&r);
        float v[2] = {(float)(rad * cos(phi)), (float)(rad * sin(phi))};
        for (size_t j = 0; j < 2 && i + j < n; ++j)
            x[i + j] = t == JG_BF16 ? jg_f32_to_bf16(v[j]) : jg_f32_to_f16(v[j]);
    }
}

/* Random e4m3 codes: random sign and mantissa, exponent field 5..9, so |x|
 * in [0.25, 7.5]: finite, never zero or a NaN code (field 15), and with
 * varied bits, as tensor-core power (and so the clock) depends on the data.
 * Narrower than the format (fields 1..14 reach 240, products 57600): here
 * E[x^2] ~ 9.2, so a sum of 16384 products has sigma ~ 1200 and the largest
 * of ~10^8 outputs, ~6 sigma times scales of up to 1.5^2, stays ~4x inside
 * fp16's range (--out-dtype fp16). Four codes per 64-bit draw. */
static void fill_e4m3(uint8_t *x, size_t n, uint64_t seed)
{
    jg_rng r;
    jg_rng_seed(&r, seed);
    for (size_t i = 0; i < n; i += 4) {
        uint64_t bits = jg_rng_next(&r);
        for (size_t j = 0; j < 4 && i + j < n; ++j, bits >>= 16) {
            unsigned e = 5 + (unsigned)((((bits >> 4) & 0xfff) * 5) >> 12); /* 5..9 */
            x[i + j] = (uint8_t)((bits & 8) << 4 | e << 3 | (bits & 7));
        }
    }
}

/* n FP32 scales, uniform in [0.5, 1.5). */
static void fill_scales(float *x, size_t n, uint64_t seed)
{
    jg_rng r;
    jg_rng_seed(&r, seed);
    for (size_t i = 0; i < n; ++i)
        x[i] = (float)(0.5 + jg_rng_uniform(&r));
}

/* ---- options ----------------------------------------------------------- */

/* How L2 is emptied before each timed launch: see flush_l2. */
typedef enum flush_mode { FLUSH_READ, FLUSH_MEMSET, FLUSH_NONE } flush_mode;

static const char *flush_name(flush_mode f)
{
    return f == FLUSH_MEMSET ? "memset" : f == FLUSH_NONE ? "none" : "read";
}

typedef struct options {
    const char *spec;
    const char *only; /* comma-separated names, or NULL for all */
    jg_dtype dtype;   /* --dtype: A and B of every dense and decode row */
    jg_dtype out_dtype; /* --out-dtype; JG_DTYPE_NONE: see out_type */
    jg_scale_mode scale; /* --scale (default tensor) for e4m3 rows */
    bool scale_set;      /* --scale was given: it also overrides fp8 lines' own */
    int reps;
    const char *json;
    bool no_peer;
    bool tune; /* JITGEMM_TUNE=1 for our context */
    flush_mode flush;
    jg_sf_layout sf_layout; /* --sf-layout: nvfp4 rows' block scales (default swizzled) */
    int chain; /* --chain N: GEMMs per timed launch of dense and decode rows; 0: off */
} options;

static void usage(FILE *f)
{
    fprintf(f,
            "usage: jitgemm-bench [--spec FILE] [--only NAME,NAME]\n"
            "                     [--dtype bf16|fp16|fp8|nvfp4] [--scale tensor|row|block]\n"
            "                     [--sf-layout swizzled|rowmajor] [--out-dtype bf16|fp16|fp32]\n"
            "                     [--reps N] [--json FILE] [--no-peer] [--flush read|memset|none]\n"
            "                     [--chain N] [--tune] [--help]\n"
            "\n"
            "Times libjitgemm and cuBLASLt on each dense, decode and grouped (list,\n"
            "contiguous or masked layout) shape of the spec file (D[M,N] = A[M,K] * B[N,K]^T,\n"
            "row-major; grouped: one launch of ours against the faster of a loop of cuBLASLt\n"
            "matmuls, one per group, and one cublasGemmGroupedBatchedEx, both timed), L2\n"
            "flushed before every launch, and reports medians against the speed of light\n"
            "measured in the same run.\n"
            "\n"
            "  --spec FILE       JSON-lines shapes (default bench/shapes.jsonl)\n"
            "  --only NAMES      run only these shapes (comma-separated names)\n"
            "  --dtype T         A and B type: bf16 (default), fp16, fp8 (e4m3, with\n"
            "                    FP32 scales) or nvfp4 (packed e2m1, an e4m3 scale per 16\n"
            "                    of K, an FP32 global scale; quantized on the GPU from\n"
            "                    random bf16 by jg_quantize_nvfp4, untimed). fp8 and nvfp4:\n"
            "                    dense and decode rows only; grouped rows are skipped\n"
            "                    (grouped nvfp4: bench/peer_torch.py --nvfp4).\n"
            "                    Spec lines of \"dtype\": \"fp8\" (with their \"scale\") or\n"
            "                    \"nvfp4\" run as such whatever --dtype says. nvfp4 rows'\n"
            "                    peer is cuBLASLt fp8 (e4m3, tensor scales, the fp8 rows'\n"
            "                    inputs) on the same M, N, K; their SoL is\n"
            "                    max(FLOPs / the fp8 peak, bytes / copy bandwidth), bytes\n"
            "                    = 4.5 bits per element of A and B (K/2 bytes a row plus\n"
            "                    one e4m3 scale per 16) + D; their check: rows 0, M/2,\n"
            "                    M-1 against FP64 over the dequantized inputs\n"
            "  --scale MODE      fp8 scales: tensor (default; one each), row (a_scale[M],\n"
            "                    b_scale[N]) or block (a_scale[M][K/128],\n"
            "                    b_scale[N/128][K/128]); overrides fp8 lines' own. cuBLASLt\n"
            "                    gets the same scales (row, block: cuBLAS 12.9+, sm_90); where\n"
            "                    it refuses them it is timed with tensor scales, and its\n"
            "                    peer column says \"cuBLASLt fp8 (tensor scales)\". fp8 rows'\n"
            "                    SoL uses an fp8 peak: cuBLASLt e4m3 %d^3, measured once.\n"
            "                    Not read by nvfp4 rows (their format fixes the scales)\n"
            "  --sf-layout L     nvfp4 rows' block-scale layout: swizzled (default; the\n"
            "                    128x4 layout of cuBLAS and CUTLASS block scaling) or\n"
            "                    rowmajor ([rows][K/16]; needs K a multiple of 256)\n"
            "  --out-dtype T     D type: bf16, fp16 or fp32 (default: --dtype; bf16 for fp8\n"
            "                    and nvfp4)\n"
            "  --reps N          timed launches per measurement, >= %d (default 100)\n"
            "  --json FILE       also write the rows as JSON\n"
            "  --no-peer         do not time cuBLASLt per shape (still used for the peak)\n"
            "  --flush MODE      how L2 is emptied before each timed launch:\n"
            "                    read (default): a read-only kernel pass over >= 4x the L2,\n"
            "                      which leaves only clean lines;\n"
            "                    memset: a cudaMemsetAsync of the same buffer, which leaves\n"
            "                      the L2 full of dirty lines that the timed kernel then pays\n"
            "                      to write back to DRAM (slows short memory-bound rows);\n"
            "                    none: L2 keeps what the launches before left (inputs that\n"
            "                      fit in L2, such as scales, stay there; not the default)\n",
            PEAK_DIM, MIN_REPS);
    /* a second literal: ISO C compilers need only take 4095 characters in one */
    fprintf(f,
            "  --chain N         dense and decode rows (any dtype) as a serving loop runs them:\n"
            "                    each timed launch is a chain of N (2..%d) GEMMs back to\n"
            "                    back, each reading its own copy of B (and of nvfp4's block\n"
            "                    scales), A and D shared; L2 flushed before each chain;\n"
            "                    times are per GEMM (chain / N). \"ours us\": ours planned\n"
            "                    with JG_GEMM_PDL (a chain of programmatic dependent\n"
            "                    launches); \"plain us\": ours without (plain launches);\n"
            "                    cuBLASLt (no PDL) rotates through its B copies the same\n"
            "                    way. A row whose N copies of B total under 2x the L2 is\n"
            "                    marked (with --flush none, a chain may then find B in L2,\n"
            "                    left by the chain before). Grouped rows ignore it\n"
            "  --tune            plan dense shapes with JITGEMM_TUNE=1: the planner's best\n"
            "                    candidates are timed once and the fastest is recorded in\n"
            "                    the kernel cache (the \"plan ms\" column then includes it)\n"
            "\n"
            "Exit status: 0 ok, 1 a row failed or mismatched, 2 usage or setup error\n"
            "(including no CUDA GPU). See bench/README.md.\n",
            MAX_CHAIN);
}

/* The integer `v` of option `name` into *out; false (reported) unless it is
 * one in [lo, hi]. */
static bool parse_int(const char *name, const char *v, long lo, long hi, int *out)
{
    char *end;
    long n = strtol(v, &end, 10);
    if (!*v || *end || n < lo || n > hi) {
        fprintf(stderr, "jitgemm-bench: %s must be an integer in [%ld, %ld], not '%s'\n", name,
                lo, hi, v);
        return false;
    }
    *out = (int)n;
    return true;
}

/* Sets the option `name` to `v`; false (reported) for a bad value. */
static bool set_option(options *o, const char *name, const char *v, const char **out)
{
    if (!strcmp(name, "--spec"))
        o->spec = v;
    else if (!strcmp(name, "--only"))
        o->only = v;
    else if (!strcmp(name, "--json"))
        o->json = v;
    else if (!strcmp(name, "--out-dtype"))
        *out = v;
    else if (!strcmp(name, "--flush") &&
             (!strcmp(v, "read") || !strcmp(v, "memset") || !strcmp(v, "none")))
        o->flush = !strcmp(v, "memset") ? FLUSH_MEMSET : !strcmp(v, "none") ? FLUSH_NONE : FLUSH_READ;
    else if (!strcmp(name, "--flush")) {
        fprintf(stderr, "jitgemm-bench: --flush must be read, memset or none, not '%s'\n", v);
        return false;
    }
    else if (!strcmp(name, "--dtype") && !(o->dtype = parse_dtype(v, false, true))) {
        fprintf(stderr, "jitgemm-bench: --dtype must be bf16, fp16, fp8 or nvfp4, not '%s'\n",
                v);
        return false;
    } else if (!strcmp(name, "--sf-layout")) {
        o->sf_layout = !strcmp(v, "swizzled")   ? JG_SF_SWIZZLED_128X4
                       : !strcmp(v, "rowmajor") ? JG_SF_ROW_MAJOR
                                                : JG_SF_LAYOUT_NONE;
        if (!o->sf_layout) {
            fprintf(stderr, "jitgemm-bench: --sf-layout must be swizzled or rowmajor, not '%s'\n",
                    v);
            return false;
        }
    } else if (!strcmp(name, "--scale")) {
        o->scale = !strcmp(v, "tensor") ? JG_SCALE_TENSOR
                   : !strcmp(v, "row")  ? JG_SCALE_ROW
                   : !strcmp(v, "block") ? JG_SCALE_BLOCK
                                         : JG_SCALE_NONE;
        o->scale_set = true;
        if (!o->scale) {
            fprintf(stderr, "jitgemm-bench: --scale must be tensor, row or block, not '%s'\n",
                    v);
            return false;
        }
    } else if (!strcmp(name, "--reps"))
        return parse_int(name, v, MIN_REPS, 100000, &o->reps);
    else if (!strcmp(name, "--chain"))
        return parse_int(name, v, 2, MAX_CHAIN, &o->chain);
    return true;
}

/* Returns 0 to go on (or after --help, with *done set), else an exit status. */
static int parse_args(int argc, char **argv, options *o, bool *done)
{
    static const char *with_value[] = {"--spec", "--only", "--dtype", "--out-dtype", "--reps",
                                       "--json", "--flush", "--scale", "--sf-layout",
                                       "--chain"};
    *o = (options){.spec = "bench/shapes.jsonl", .dtype = JG_BF16, .scale = JG_SCALE_TENSOR,
                   .reps = 100, .sf_layout = JG_SF_SWIZZLED_128X4};
    const char *out = NULL;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        bool known = false;
        for (size_t j = 0; j < sizeof with_value / sizeof *with_value; ++j)
            known |= !strcmp(a, with_value[j]);
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            usage(stdout);
            *done = true;
            return 0;
        } else if (!strcmp(a, "--no-peer")) {
            o->no_peer = true;
        } else if (!strcmp(a, "--tune")) {
            o->tune = true;
        } else if (!known) {
            fprintf(stderr, "jitgemm-bench: unknown argument '%s' (try --help)\n", a);
            return EXIT_SETUP;
        } else if (i + 1 >= argc) {
            fprintf(stderr, "jitgemm-bench: %s needs a value\n", a);
            return EXIT_SETUP;
        } else if (!set_option(o, a, argv[++i], &out)) {
            return EXIT_SETUP;
        }
    }
    o->out_dtype = out ? parse_dtype(out, true, false) : JG_DTYPE_NONE;
    if (out && !o->out_dtype) {
        fprintf(stderr, "jitgemm-bench: --out-dtype must be bf16, fp16 or fp32, not '%s'\n", out);
        return EXIT_SETUP;
    }
    return 0;
}

/* D's type for rows whose A and B are `in`: --out-dtype, else `in`, and
 * bf16 for e4m3 (as jitgemm-warm compiles fp8 lines) and nvfp4. */
static jg_dtype out_type(const options *o, jg_dtype in)
{
    return o->out_dtype ? o->out_dtype : in == JG_E4M3 || in == JG_NVFP4 ? JG_BF16 : in;
}

/* ---- the spec file ----------------------------------------------------- */

typedef struct shape {
    char name[64];
    char kind[16];
    int64_t m, n, k; /* grouped: m is the sum of gm, the rows of all groups */
    int64_t b_count; /* B matrices read: 1, or the non-empty groups */
    int g;           /* groups; 0 for dense and decode */
    jg_grouped_layout layout; /* grouped: list, contiguous or masked */
    int64_t m_max;   /* contiguous: m (rows of A and D); masked: rows per group slot */
    int64_t gm[JG_GROUPED_MAX_DEVICE_GROUPS]; /* grouped: rows of each group (0: empty) */
    int64_t seed;    /* the spec's seed, else 0: varies the grouped inputs */
    jg_dtype in, out;     /* A and B; D */
    jg_scale_mode scale;  /* e4m3 rows; JG_SCALE_NVFP4 for nvfp4; NONE for 16-bit ones */
    jg_sf_layout sf_layout; /* nvfp4 rows: --sf-layout; NONE otherwise */
} shape;

typedef struct shape_list {
    shape *v;
    size_t n, cap;
} shape_list;

static const char *layout_name(jg_grouped_layout l)
{
    return l == JG_GROUPED_CONTIGUOUS ? "contiguous" : l == JG_GROUPED_MASKED ? "masked" : "list";
}

/* A grouped line into *s: 1, or 0 (with the reason printed) for what the
 * library cannot run yet. */
static int parse_grouped(const struct spec *sp, shape *s)
{
    const char *why = NULL;
    s->layout = sp->layout == SPEC_LAYOUT_CONTIGUOUS ? JG_GROUPED_CONTIGUOUS
                : sp->layout == SPEC_LAYOUT_MASKED   ? JG_GROUPED_MASKED
                                                     : JG_GROUPED_LIST;
    if (s->layout == JG_GROUPED_LIST && sp->g > JG_GROUPED_MAX_GROUPS)
        why = "has more groups than the list layout allows (JG_GROUPED_MAX_GROUPS, 64)";
    else if (sp->g > JG_GROUPED_MAX_DEVICE_GROUPS)
        why = "has more groups than the layout allows (JG_GROUPED_MAX_DEVICE_GROUPS, 256)";
    for (int i = 1; i < sp->g && !why; ++i)
        if (sp->n[i] != sp->n[0] || sp->k[i] != sp->k[0])
            why = "has groups with different n or k (not supported by libjitgemm)";
    s->m = s->b_count = 0;
    for (int i = 0; i < sp->g && !why; ++i) {
        s->gm[i] = sp->m[i];
        s->m += sp->m[i];
        s->b_count += sp->m[i] > 0;
    }
    if (!why && !s->m)
        why = "has no rows in any group";
    else if (!why && s->layout == JG_GROUPED_CONTIGUOUS && s->m > INT32_MAX)
        why = "has more rows in all than int32 row offsets can hold";
    if (why) {
        printf("skipping %s: grouped, layout '%s', %s\n", sp->name,
               spec_layout_name(sp->layout), why);
        return 0;
    }
    s->g = sp->g;
    s->n = sp->n[0];
    s->k = sp->k[0];
    /* masked: the spec's m_max (>= every m; its default is max(m)) */
    s->m_max = s->layout == JG_GROUPED_CONTIGUOUS ? s->m
               : s->layout == JG_GROUPED_MASKED   ? sp->m_max
                                                  : 0;
    return 1;
}

/* The row's types: a line of dtype fp8 runs as e4m3 with its scale (or
 * --scale), a line of dtype nvfp4 as nvfp4 (its "scale" is not read: the
 * format fixes the scales; the layout is --sf-layout's), any other line as
 * --dtype (a spec line cannot say bf16 as opposed to its default, so
 * bf16/fp16 lines follow --dtype, as before). */
static void set_types(const struct spec *sp, const options *o, shape *s)
{
    static const jg_scale_mode modes[] = {[SPEC_SCALE_NONE] = JG_SCALE_TENSOR,
                                          [SPEC_SCALE_TENSOR] = JG_SCALE_TENSOR,
                                          [SPEC_SCALE_ROW] = JG_SCALE_ROW,
                                          [SPEC_SCALE_BLOCK] = JG_SCALE_BLOCK};
    bool line_fp8 = sp->dtype == SPEC_FP8;
    s->in = line_fp8 ? JG_E4M3 : sp->dtype == SPEC_NVFP4 ? JG_NVFP4 : o->dtype;
    s->out = out_type(o, s->in);
    s->scale = s->in == JG_NVFP4 ? JG_SCALE_NVFP4
               : s->in != JG_E4M3 ? JG_SCALE_NONE
               : line_fp8 && !o->scale_set ? modes[sp->scale]
                                           : o->scale;
    s->sf_layout = s->in == JG_NVFP4 ? o->sf_layout : JG_SF_LAYOUT_NONE;
}

/* One line: 1 a shape in *s, 0 skipped (blank, comment, or a kind, layout or
 * dtype not benchmarked yet), -1 malformed (reported by spec.c's message). */
static int parse_line(const char *text, size_t len, const char *file, int line,
                      const options *o, shape *s)
{
    struct spec sp;
    char err[512];
    int rc = spec_parse_line(text, len, line, &sp, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "%s: %s; line skipped\n", file, err);
        return -1;
    }
    if (rc > 0)
        return 0;
    rc = 0;
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", sp.name);
    snprintf(s->kind, sizeof s->kind, "%s", spec_kind_name(sp.kind));
    s->seed = sp.has_seed ? sp.seed : 0;
    set_types(&sp, o, s);
    if (sp.dtype == SPEC_FP32 || sp.dtype == SPEC_FP32_EXACT || sp.a_mn || sp.b_mn ||
        sp.lda || sp.ldb || sp.ldd || sp.unaligned)
        printf("skipping %s: FP32 operands, MN-major operands, leading dimensions and "
               "unaligned pointers are measured by bench/peer_any.py\n", sp.name);
    else if (sp.kind == SPEC_GROUPED && s->in == JG_NVFP4)
        printf("skipping %s: grouped in nvfp4 (%s): grouped NVFP4 is measured against its "
               "peer (torch._scaled_grouped_mm, FP8 row-wise) by bench/peer_torch.py "
               "--nvfp4\n", sp.name,
               sp.dtype == SPEC_NVFP4 ? "the line's dtype" : "--dtype nvfp4");
    else if (sp.kind == SPEC_GROUPED && s->in == JG_E4M3)
        printf("skipping %s: grouped in fp8 (%s): grouped FP8 is measured against its peer "
               "(torch._scaled_grouped_mm, row-wise) by bench/peer_torch.py --fp8\n",
               sp.name, sp.dtype == SPEC_FP8 ? "the line's dtype" : "--dtype fp8");
    else if (sp.kind == SPEC_GROUPED)
        rc = parse_grouped(&sp, s);
    else {
        s->m = sp.m[0];
        s->n = sp.n[0];
        s->k = sp.k[0];
        s->b_count = 1;
        rc = 1;
    }
    spec_free(&sp);
    return rc;
}

/* Reads every line it can run; false only if the file cannot be read. */
static bool load_spec(const char *file, const options *o, shape_list *out)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        perror(file);
        return false;
    }
    char *text = NULL;
    size_t cap = 0;
    ssize_t len;
    int line = 0;
    shape s;
    while ((len = getline(&text, &cap, f)) >= 0) {
        if (parse_line(text, (size_t)len, file, ++line, o, &s) != 1)
            continue;
        if (out->n == out->cap) {
            out->cap = out->cap ? 2 * out->cap : 32;
            shape *v = realloc(out->v, out->cap * sizeof *v);
            if (!v) {
                fprintf(stderr, "jitgemm-bench: out of memory\n");
                exit(EXIT_SETUP);
            }
            out->v = v;
        }
        out->v[out->n++] = s;
    }
    free(text);
    fclose(f);
    return true;
}

/* Keeps the shapes named in `only`; an unknown name is an error, so that a
 * typo cannot silently shrink the run. */
static bool filter_shapes(shape_list *l, const char *only)
{
    bool *keep = calloc(l->n + 1, sizeof *keep), ok = true;
    const char *p = only;
    while (*p) {
        size_t len = strcspn(p, ",");
        bool found = false;
        for (size_t i = 0; i < l->n; ++i)
            if (strlen(l->v[i].name) == len && !strncmp(l->v[i].name, p, len))
                keep[i] = found = true;
        if (!found && len) {
            fprintf(stderr, "jitgemm-bench: --only: no runnable shape '%.*s' in the spec\n",
                    (int)len, p);
            ok = false;
        }
        p += len + (p[len] == ',');
    }
    size_t n = 0;
    for (size_t i = 0; i < l->n; ++i)
        if (keep[i])
            l->v[n++] = l->v[i];
    l->n = n;
    free(keep);
    return ok;
}

/* ---- cuBLASLt through dlopen ------------------------------------------- */

/* X(name, parameter types): the only cuBLASLt functions the tool calls. */
#define LT_FUNCS(X)                                                                          \
    X(cublasLtCreate, (cublasLtHandle_t *))                                                  \
    X(cublasLtDestroy, (cublasLtHandle_t))                                                   \
    X(cublasLtMatmulDescCreate, (cublasLtMatmulDesc_t *, cublasComputeType_t, cudaDataType_t)) \
    X(cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t))                                     \
    X(cublasLtMatmulDescSetAttribute,                                                        \
      (cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void *, size_t))          \
    X(cublasLtMatrixLayoutCreate,                                                            \
      (cublasLtMatrixLayout_t *, cudaDataType, uint64_t, uint64_t, int64_t))                 \
    X(cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t))                                 \
    X(cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t *))                        \
    X(cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t))                         \
    X(cublasLtMatmulPreferenceSetAttribute,                                                  \
      (cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t, const void *, size_t)) \
    X(cublasLtMatmulAlgoGetHeuristic,                                                        \
      (cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, \
       cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,      \
       cublasLtMatmulHeuristicResult_t *, int *))                                            \
    X(cublasLtMatmul,                                                                        \
      (cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *,                   \
       cublasLtMatrixLayout_t, const void *, cublasLtMatrixLayout_t, const void *,           \
       const void *, cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,                 \
       const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t))

/* The prototypes above (and CB_FUNCS's below) must match the headers', or
 * calls through dlsym'd pointers would be wrong; _Generic does not evaluate
 * (nor link) its operand. */
#define API_CHECK_(name, args)                                                      \
    _Static_assert(_Generic(&name, cublasStatus_t(*) args : 1, default : 0),        \
                   #name " does not match the cuBLAS headers");
LT_FUNCS(API_CHECK_)

typedef struct lt_api {
#define LT_MEMBER_(name, args) cublasStatus_t (*name) args;
    LT_FUNCS(LT_MEMBER_)
#undef LT_MEMBER_
} lt_api;

static lt_api lt;

/* The first of `n` library names that dlopen opens, or NULL with *why set
 * to dlerror's reason for the last one. */
static void *dl_open_first(const char *const *names, size_t n, const char **why)
{
    void *lib = NULL;
    for (size_t i = 0; i < n && !lib; ++i)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib && !(*why = dlerror()))
        *why = "?";
    return lib;
}

/* Stores the address of `name` in *slot, a function pointer; false if the
 * library has no such symbol. */
static bool dl_resolve(void *lib, const char *name, void *slot)
{
    void *sym = dlsym(lib, name);
    if (sym)
        memcpy(slot, &sym, sizeof sym); /* ISO C has no object-to-function cast */
    return sym != NULL;
}

/* Opens cuBLASLt and resolves LT_FUNCS; false (reported) on failure. */
static bool lt_load(void)
{
    static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so"};
    const char *why;
    void *lib = dl_open_first(names, 2, &why);
    if (!lib) {
        fprintf(stderr, "jitgemm-bench: cannot open cuBLASLt: %s\n", why);
        return false;
    }
#define LT_RESOLVE_(name, args)                                                      \
    if (!dl_resolve(lib, #name, &lt.name)) {                                         \
        fprintf(stderr, "jitgemm-bench: cuBLASLt has no %s\n", #name);               \
        return false;                                                                \
    }
    LT_FUNCS(LT_RESOLVE_)
#undef LT_RESOLVE_
    return true;
}

/* X(name, required, parameter types): the cuBLAS functions of the "cuBLAS
 * grouped" peer of grouped rows. cublasGemmGroupedBatchedEx came with
 * cuBLAS 12.5; without a user workspace cuBLAS uses its own. */
#define CB_FUNCS(X)                                                                          \
    X(cublasCreate_v2, true, (cublasHandle_t *))                                             \
    X(cublasDestroy_v2, true, (cublasHandle_t))                                              \
    X(cublasSetStream_v2, true, (cublasHandle_t, cudaStream_t))                              \
    X(cublasSetWorkspace_v2, false, (cublasHandle_t, void *, size_t))                        \
    X(cublasGemmGroupedBatchedEx, true,                                                      \
      (cublasHandle_t, const cublasOperation_t *, const cublasOperation_t *, const int *,    \
       const int *, const int *, const void *, const void *const *, cudaDataType_t,          \
       const int *, const void *const *, cudaDataType_t, const int *, const void *,          \
       void *const *, cudaDataType_t, const int *, int, const int *, cublasComputeType_t))

#define CB_CHECK_(name, required, args) API_CHECK_(name, args)
CB_FUNCS(CB_CHECK_)
#undef CB_CHECK_
#undef API_CHECK_

typedef struct cb_api {
#define CB_MEMBER_(name, required, args) cublasStatus_t (*name) args;
    CB_FUNCS(CB_MEMBER_)
#undef CB_MEMBER_
} cb_api;

static cb_api cb;

/* Opens cuBLAS and resolves CB_FUNCS; false, with one note saying that the
 * cuBLAS grouped peer is skipped, if the library or a required function is
 * missing (grouped rows then run against the cuBLASLt loop alone). */
static bool cb_load(void)
{
    static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    const char *why;
    void *lib = dl_open_first(names, 3, &why);
    if (!lib) {
        fprintf(stderr, "jitgemm-bench: note: cannot open cuBLAS (%s): the cuBLAS grouped "
                        "peer is skipped\n", why);
        return false;
    }
#define CB_RESOLVE_(name, required, args)                                                \
    if (!dl_resolve(lib, #name, &cb.name) && required) {                                 \
        fprintf(stderr, "jitgemm-bench: note: cuBLAS has no %s (cuBLAS 12.5 or newer "    \
                        "has): the cuBLAS grouped peer is skipped\n", #name);            \
        return false;                                                                    \
    }
    CB_FUNCS(CB_RESOLVE_)
#undef CB_RESOLVE_
    return true;
}

/* Reports a failed cuBLASLt or cuBLAS call and evaluates to true. */
#define LT_FAILED(call) lt_failed((call), #call)

static bool lt_failed(cublasStatus_t s, const char *what)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return false;
    /* "lt.cublasLtXxx(...)" or "cb.cublasXxx(...)": the name only */
    what += strncmp(what, "lt.", 3) && strncmp(what, "cb.", 3) ? 0 : 3;
    fprintf(stderr, "jitgemm-bench: %.*s: cuBLAS status %d\n", (int)strcspn(what, "("), what,
            (int)s);
    return true;
}

/* ---- NVML through dlopen: the SM clock while rows run -------------------- */

/* NVML's own declarations (nvml.h is not among the build's headers). */
typedef struct nvml_dev_st *nvml_dev;
#define NVML_CLOCK_SM 1
#define NVML_REASON_SW_POWER_CAP 0x4ull
#define NVML_REASON_HW_SLOWDOWN 0x8ull
#define NVML_REASON_SW_THERMAL 0x20ull
#define NVML_REASON_HW_THERMAL 0x40ull
#define NVML_REASON_HW_POWER_BRAKE 0x80ull
#define CLOCK_POLL_NS 1000000 /* between samples while a timed batch runs */

typedef struct nvml_api {
    int (*nvmlInit_v2)(void);
    int (*nvmlDeviceGetHandleByPciBusId_v2)(const char *bus_id, nvml_dev *dev);
    int (*nvmlDeviceGetClockInfo)(nvml_dev dev, int type, unsigned *mhz);
    int (*reasons)(nvml_dev dev, unsigned long long *reasons); /* clock events (throttling) */
    nvml_dev dev;
} nvml_api;

/* The SM clock sampled while a timed batch ran: mean and lowest MHz, and
 * the NVML clock-event reasons seen (OR of the samples); n = 0: none. */
typedef struct clock_stats {
    int n;
    double sum_mhz;
    unsigned min_mhz;
    unsigned long long reasons;
} clock_stats;

/* ---- the benchmark context --------------------------------------------- */

typedef struct bench {
    options opt;
    cudaStream_t stream;
    cudaEvent_t *start, *stop; /* one pair per timed launch */
    int nevents;
    void *flush;                /* >= 4x the L2, zeroed once at setup */
    size_t flush_bytes;
    cudaLibrary_t flush_lib;    /* the read-only flush kernel (--flush read) and the empty one */
    cudaKernel_t flush_kernel;
    cudaKernel_t empty_kernel;  /* the launch floor's (NULL if the library did not build) */
    unsigned *flush_sink;       /* its output, never written in practice */
    unsigned flush_blocks;
    jg_context *jg;
    bool have_lt;
    cublasLtHandle_t lth;
    void *workspace;              /* cuBLASLt's, and cuBLAS's: one stream, in turn */
    bool have_cb;                 /* the cuBLAS grouped peer (grouped rows) */
    cublasHandle_t cbh;
    cudaStream_t cb_stream;       /* the stream cbh is bound to */
    bool grouped;                 /* the run has grouped rows */
    double copy_gbs, peak_tflops; /* peak_tflops NAN without cuBLASLt or 16-bit rows */
    int peak_algo;                /* the heuristic's algorithm that the peak used */
    bool rows16, rows8;           /* the run has 16-bit rows, e4m3 or nvfp4 rows */
    double fp8_peak_tflops;       /* cuBLASLt e4m3 8192^3; NAN without e4m3 rows */
    double floor_us;              /* an empty kernel, flushed and timed as the rows; NAN if none */
    double floor_smem_us;         /* the same asking for all of an SM's shared memory */
    int floor_smem;               /* the bytes it asks for */
    int fp8_peak_algo;
    size_t l2_bytes;              /* --chain: rows whose B copies total less than 2x are marked */
    nvml_api nvml;                /* nvml.dev NULL: no NVML, clocks not sampled */
    clock_stats peak_clock, fp8_peak_clock; /* while the peaks' launches ran */
    clock_stats clock;            /* the last timed batch's */
} bench;

/* Binds the cuBLAS handle to `stream` unless it is already, and then to the
 * shared workspace (setting the stream resets cuBLAS's workspace to its
 * own); false (reported) on failure. */
static bool cb_bind(bench *b, cudaStream_t stream)
{
    if (b->cb_stream == stream && stream)
        return true;
    if (LT_FAILED(cb.cublasSetStream_v2(b->cbh, stream)) ||
        (cb.cublasSetWorkspace_v2 && b->workspace &&
         LT_FAILED(cb.cublasSetWorkspace_v2(b->cbh, b->workspace, WORKSPACE_BYTES))))
        return false;
    b->cb_stream = stream;
    return true;
}

/* ---- the L2 flush ------------------------------------------------------ */

/* A flush must leave L2 holding nothing the timed kernel wants and nothing it
 * has to pay for. A memset leaves up to a whole L2 of DIRTY lines (H100:
 * ~50 MB), which the next kernel's misses must first write back to DRAM: on
 * short memory-bound rows that cost a lot (29 MB decode GEMMs took 20 us,
 * ours and cuBLAS alike, half the copy bandwidth). Reading a buffer >= 4x the
 * L2 evicts everything, writing any dirty line back during the flush, and
 * leaves only clean lines. The kernel below is that read: 16-byte plain
 * loads in a grid-stride loop. Their XOR is stored only if it equals a value
 * that the buffer (one repeated byte, so every XOR is 0) cannot give, which
 * the compiler cannot know, so the loads stay. */
#define FLUSH_KERNEL "jg_bench_read_flush"
#define EMPTY_KERNEL "jg_bench_empty"
static const char flush_source[] =
    "extern \"C\" __global__ void " EMPTY_KERNEL "() {}\n"
    "extern \"C\" __global__ void " FLUSH_KERNEL "(const uint4 *src, unsigned long long n,\n"
    "                                        unsigned int *sink)\n"
    "{\n"
    "    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "    unsigned int acc = 0;\n"
    "    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "         i < n; i += stride) {\n"
    "        uint4 v = src[i];\n"
    "        acc ^= v.x ^ v.y ^ v.z ^ v.w;\n"
    "    }\n"
    "    if (acc == 0x9e3779b9u)\n"
    "        *sink = acc;\n"
    "}\n";

/* Prints NVRTC's log of `prog`, if any, after a failed compile. */
static void nvrtc_print_log(nvrtcProgram prog)
{
    size_t n = 0;
    char *log = NULL;
    if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 1 && (log = malloc(n)) &&
        nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS)
        fprintf(stderr, "%s\n", log);
    free(log);
}

/* flush_source as PTX for compute capability major.minor, NUL-terminated
 * (malloc'd), or NULL (reported). */
static char *flush_ptx(int major, int minor)
{
    char arch[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=compute_%d%d", major, minor);
    const char *opts[] = {arch};
    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, flush_source, FLUSH_KERNEL ".cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        fprintf(stderr, "jitgemm-bench: nvrtcCreateProgram: %s\n", nvrtcGetErrorString(r));
        return NULL;
    }
    char *ptx = NULL;
    size_t n = 0;
    if ((r = nvrtcCompileProgram(prog, 1, opts)) != NVRTC_SUCCESS) {
        fprintf(stderr, "jitgemm-bench: nvrtcCompileProgram (%s): %s\n", arch,
                nvrtcGetErrorString(r));
        nvrtc_print_log(prog);
    } else if ((r = nvrtcGetPTXSize(prog, &n)) != NVRTC_SUCCESS || !(ptx = malloc(n)) ||
               (r = nvrtcGetPTX(prog, ptx)) != NVRTC_SUCCESS) {
        fprintf(stderr, "jitgemm-bench: nvrtcGetPTX: %s\n",
                r != NVRTC_SUCCESS ? nvrtcGetErrorString(r) : "out of memory");
        free(ptx);
        ptx = NULL;
    }
    nvrtcDestroyProgram(&prog);
    return ptx;
}

/* Compiles and loads the read-only flush and the empty kernel for this
 * device (`sms` SMs of compute capability major.minor); false (reported
 * where --flush read needs it) if it cannot. */
static bool flush_load(bench *b, int major, int minor, int sms)
{
    char *ptx = flush_ptx(major, minor);
    bool ok = ptx &&
              !CUDA_FAILED(cudaLibraryLoadData(&b->flush_lib, ptx, NULL, NULL, 0, NULL, NULL, 0)) &&
              !CUDA_FAILED(cudaLibraryGetKernel(&b->flush_kernel, b->flush_lib, FLUSH_KERNEL)) &&
              !CUDA_FAILED(cudaLibraryGetKernel(&b->empty_kernel, b->flush_lib, EMPTY_KERNEL)) &&
              !CUDA_FAILED(cudaMalloc((void **)&b->flush_sink, sizeof *b->flush_sink));
    free(ptx);
    b->flush_blocks = FLUSH_BLOCKS_PER_SM * (unsigned)(sms > 0 ? sms : 1);
    if (!ok)
        b->empty_kernel = NULL;
    if (!ok && b->opt.flush == FLUSH_READ)
        fprintf(stderr, "jitgemm-bench: cannot build the read-only L2 flush (above); "
                        "--flush memset times without it\n");
    return ok;
}

/* Empties L2 on the stream before timed launch `rep`, as --flush says. */
static bool flush_l2(bench *b, int rep)
{
    if (b->opt.flush == FLUSH_NONE)
        return true;
    if (b->opt.flush == FLUSH_MEMSET)
        return !CUDA_FAILED(cudaMemsetAsync(b->flush, rep & 0xff, b->flush_bytes, b->stream));
    unsigned long long n = b->flush_bytes / 16; /* uint4 elements */
    void *args[] = {&b->flush, &n, &b->flush_sink};
    dim3 grid = {b->flush_blocks, 1, 1}, block = {FLUSH_THREADS, 1, 1};
    return !CUDA_FAILED(cudaLaunchKernel((const void *)b->flush_kernel, grid, block, args, 0,
                                         b->stream));
}

/* ---- the timing loop --------------------------------------------------- */

/* Enqueues one launch on the stream; false if it could not be launched. */
typedef bool (*launch_fn)(void *arg, cudaStream_t stream);

/* One implementation to time: a launch function and its argument. */
typedef struct timed {
    launch_fn fn;
    void *arg;
} timed;

/* Launches the implementations in turn, WARMUP rounds at least and for at
 * least WARM_MS. A GPU that was idle (while the host made the inputs) runs
 * its first ~100 ms of heavy work at a clock it cannot hold under its power
 * limit, which would favour whatever is timed first. Returns -1, or the
 * index of an implementation that failed to launch. */
static int warm_up(bench *b, const timed *impl, int n)
{
    double t0 = now_ms();
    for (int round = 0;; ++round) {
        for (int j = 0; j < n; ++j)
            if (!impl[j].fn(impl[j].arg, b->stream))
                return j;
        if (round + 1 >= WARMUP && round % 8 == 7) {
            if (CUDA_FAILED(cudaStreamSynchronize(b->stream)))
                return 0;
            if (now_ms() - t0 >= WARM_MS)
                return -1;
        }
    }
}

/* Opens NVML for the device of the current CUDA context (matched by PCI
 * bus id); leaves b->nvml.dev NULL, silently, where it cannot: the clock
 * columns are then empty. */
static void nvml_open(bench *b)
{
    static const char *const names[] = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
    const char *why;
    nvml_api *n = &b->nvml;
    memset(n, 0, sizeof *n);
    void *lib = dl_open_first(names, sizeof names / sizeof names[0], &why);
    char bus[32];
    int dev;
    nvml_dev d = NULL;
    if (!lib || !dl_resolve(lib, "nvmlInit_v2", &n->nvmlInit_v2) ||
        !dl_resolve(lib, "nvmlDeviceGetHandleByPciBusId_v2", &n->nvmlDeviceGetHandleByPciBusId_v2) ||
        !dl_resolve(lib, "nvmlDeviceGetClockInfo", &n->nvmlDeviceGetClockInfo) ||
        !(dl_resolve(lib, "nvmlDeviceGetCurrentClocksEventReasons", &n->reasons) ||
          dl_resolve(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", &n->reasons)) ||
        n->nvmlInit_v2() != 0 || cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess ||
        n->nvmlDeviceGetHandleByPciBusId_v2(bus, &d) != 0)
        return;
    n->dev = d;
}

/* One sample of the SM clock and the clock-event reasons into *c. */
static void clock_sample(const nvml_api *n, clock_stats *c)
{
    unsigned mhz;
    unsigned long long why = 0;
    if (!n->dev || n->nvmlDeviceGetClockInfo(n->dev, NVML_CLOCK_SM, &mhz) != 0)
        return;
    if (n->reasons(n->dev, &why) == 0)
        c->reasons |= why;
    c->min_mhz = c->n == 0 || mhz < c->min_mhz ? mhz : c->min_mhz;
    c->sum_mhz += mhz;
    c->n++;
}

/* Mean MHz of the samples; NAN without any. */
static double clock_mean(const clock_stats *c) { return c->n ? c->sum_mhz / c->n : NAN; }

/* Waits for the timing stream, sampling the SM clock every millisecond
 * while it runs (into b->clock, reset here); false if the stream failed. */
static bool sync_sampling_clock(bench *b)
{
    memset(&b->clock, 0, sizeof b->clock);
    if (!b->nvml.dev)
        return !CUDA_FAILED(cudaStreamSynchronize(b->stream));
    cudaError_t e;
    while ((e = cudaStreamQuery(b->stream)) == cudaErrorNotReady) {
        clock_sample(&b->nvml, &b->clock);
        struct timespec ts = {0, CLOCK_POLL_NS};
        nanosleep(&ts, NULL);
    }
    if (e != cudaSuccess)
        return !CUDA_FAILED(cudaStreamSynchronize(b->stream));
    if (b->clock.n == 0) /* done before the first sample: one now */
        clock_sample(&b->nvml, &b->clock);
    return true;
}

/* Times n implementations in alternation (rep i of each, then rep i + 1),
 * so that clock and temperature drift hit them alike: median of `reps`
 * launches each into us[j], in microseconds. Each launch has its own pair
 * of events; with `flush`, flush_l2 runs before it, outside the events, so
 * every launch reads its inputs from DRAM as in a real model. Returns -1,
 * or the index of an implementation that failed (0 also for a CUDA error). */
static int time_interleaved(bench *b, const timed *impl, int n, int reps, bool flush, double *us)
{
    int bad = n * reps > b->nevents ? 0 : warm_up(b, impl, n);
    for (int i = 0; i < reps && bad < 0; ++i)
        for (int j = 0; j < n && bad < 0; ++j) {
            int e = i * n + j;
            if ((flush && !flush_l2(b, i)) ||
                CUDA_FAILED(cudaEventRecord(b->start[e], b->stream)))
                bad = 0;
            else if (!impl[j].fn(impl[j].arg, b->stream))
                bad = j;
            else if (CUDA_FAILED(cudaEventRecord(b->stop[e], b->stream)))
                bad = 0;
        }
    if (!sync_sampling_clock(b) && bad < 0)
        bad = 0;
    float *ms = malloc((size_t)reps * sizeof *ms);
    for (int j = 0; j < n && bad < 0; ++j) {
        for (int i = 0; i < reps && bad < 0; ++i)
            if (CUDA_FAILED(cudaEventElapsedTime(&ms[i], b->start[i * n + j], b->stop[i * n + j])))
                bad = 0;
        if (bad < 0)
            us[j] = median(ms, reps) * 1e3;
    }
    free(ms);
    return bad;
}

/* ---- one cuBLASLt GEMM in our row-major terms -------------------------- */

/* D[M,N] = A[M,K] B[N,K]^T row-major is, column-major, D^T[N,M] =
 * B[N,K] * A^T: cuBLAS's "A" is our B (K x N, ld K, transposed), its "B" is
 * our A (K x M, ld K), and C = D is N x M with ld N. That "TN" form is also
 * the only one cuBLASLt's FP8 kernels take. */
typedef struct lt_gemm {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t lay_b, lay_a, lay_d; /* cuBLAS's A, B, and C = D */
    cublasLtMatmulHeuristicResult_t algo[MAX_ALGOS];
    int nalgo;
    const void *a, *b; /* our A and B */
    void *d;
    bench *bench;
    const char *name;  /* the row's peer column: "cuBLASLt", "cuBLASLt fp8", ... */
    bool other_scales; /* e4m3 with tensor scales of 1 for lack of the row's: another D */
} lt_gemm;

/* The scales of an e4m3 GEMM in cuBLASLt's terms, where its A is our B:
 * `a` (its A_SCALE_POINTER) is made from our b_scale, `b` from our a_scale
 * (see lt_scales_layout for the layouts). */
typedef struct lt_scales {
    jg_scale_mode mode;
    const float *a, *b; /* device */
} lt_scales;

/* cuBLASLt's scale modes of its A and B for a row or block problem: false
 * where the headers lack them (cuBLAS before 12.9, which added them). Row:
 * OUTER_VEC_32F on both (its A's vector has our N values, its B's our M).
 * Block: BLK128x128_32F on its A (our B, the 128x128 blocks) and
 * VEC128_32F on its B (our A, 1x128 along K), as PyTorch's DeepSeek-style
 * _scaled_mm passes them. */
static bool lt_scale_modes(jg_scale_mode m, int32_t *mode_a, int32_t *mode_b)
{
#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 120900
    if (m == JG_SCALE_ROW) {
        *mode_a = *mode_b = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
        return true;
    }
    if (m == JG_SCALE_BLOCK) {
        *mode_a = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
        *mode_b = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
        return true;
    }
#else
    (void)m;
    (void)mode_a;
    (void)mode_b;
#endif
    return false;
}

/* Sets an e4m3 GEMM's scale attributes, and fast accumulation off (the
 * default, said explicitly: with it on, cuBLASLt would skip the periodic
 * promotion of FP8 partial sums to FP32 that libjitgemm does every 128 of
 * K, and be faster for it). A status other than
 * success means this cuBLASLt lacks what the scales need. Tensor scales
 * leave the scale modes at their default (scalar), so that any FP8-capable
 * cuBLASLt takes them. */
static cublasStatus_t lt_set_scales(lt_gemm *g, const lt_scales *sc)
{
    const int8_t fast_accum = 0;
    int32_t mode_a, mode_b;
    cublasStatus_t st = lt.cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                                          &fast_accum, sizeof fast_accum);
    if (st == CUBLAS_STATUS_SUCCESS && sc->mode != JG_SCALE_TENSOR) {
        if (!lt_scale_modes(sc->mode, &mode_a, &mode_b))
            return CUBLAS_STATUS_NOT_SUPPORTED;
        st = lt.cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode_a,
                                               sizeof mode_a);
        if (st == CUBLAS_STATUS_SUCCESS)
            st = lt.cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                                                   &mode_b, sizeof mode_b);
    }
    if (st == CUBLAS_STATUS_SUCCESS) /* the attribute's value is the device pointer */
        st = lt.cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                               &sc->a, sizeof sc->a);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = lt.cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                               &sc->b, sizeof sc->b);
    return st;
}

/* "bf16 x bf16 -> bf16" or "e4m3 x e4m3 -> bf16, block scales", for notes. */
static const char *types_text(char *buf, size_t n, jg_dtype in, jg_dtype out,
                              jg_scale_mode scale)
{
    if (scale)
        snprintf(buf, n, "%s x %s -> %s, %s scales", dtype_name(in), dtype_name(in),
                 dtype_name(out), scale_name(scale));
    else
        snprintf(buf, n, "%s x %s -> %s", dtype_name(in), dtype_name(in), dtype_name(out));
    return buf;
}

static void lt_gemm_destroy(lt_gemm *g)
{
    if (g->op)
        lt.cublasLtMatmulDescDestroy(g->op);
    if (g->lay_b)
        lt.cublasLtMatrixLayoutDestroy(g->lay_b);
    if (g->lay_a)
        lt.cublasLtMatrixLayoutDestroy(g->lay_a);
    if (g->lay_d)
        lt.cublasLtMatrixLayoutDestroy(g->lay_d);
    memset(g, 0, sizeof *g);
}

/* Describes the problem (s->in x s->in -> s->out, with the scales `sc`
 * for e4m3, NULL otherwise) and asks the heuristic for up to MAX_ALGOS
 * algorithms that fit in the workspace. Where cuBLASLt has none (or refuses
 * the scales) a note says so, and what follows, `then`. */
static bool lt_gemm_init(lt_gemm *g, bench *b, const shape *s, const lt_scales *sc,
                         const char *then)
{
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    uint64_t ws = WORKSPACE_BYTES;
    cublasLtMatmulPreference_t pref = NULL;
    jg_dtype in = s->in, out = s->out;
    char what[96];
    memset(g, 0, sizeof *g);
    g->bench = b;
    g->name = in == JG_E4M3 ? "cuBLASLt fp8" : "cuBLASLt";
    bool ok =
        !LT_FAILED(lt.cublasLtMatmulDescCreate(&g->op, CUBLAS_COMPUTE_32F, CUDA_R_32F)) &&
        !LT_FAILED(lt.cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta,
                                                     sizeof ta)) &&
        !LT_FAILED(lt.cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb,
                                                     sizeof tb)) &&
        !LT_FAILED(lt.cublasLtMatrixLayoutCreate(&g->lay_b, dtype_cuda(in), (uint64_t)s->k,
                                                 (uint64_t)s->n, s->k)) &&
        !LT_FAILED(lt.cublasLtMatrixLayoutCreate(&g->lay_a, dtype_cuda(in), (uint64_t)s->k,
                                                 (uint64_t)s->m, s->k)) &&
        !LT_FAILED(lt.cublasLtMatrixLayoutCreate(&g->lay_d, dtype_cuda(out), (uint64_t)s->n,
                                                 (uint64_t)s->m, s->n)) &&
        !LT_FAILED(lt.cublasLtMatmulPreferenceCreate(&pref)) &&
        !LT_FAILED(lt.cublasLtMatmulPreferenceSetAttribute(
            pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasStatus_t st = ok && sc ? lt_set_scales(g, sc) : CUBLAS_STATUS_SUCCESS;
    bool refused = st != CUBLAS_STATUS_SUCCESS; /* the scales: a cuBLASLt that lacks them */
    if (ok && !refused) {
        st = lt.cublasLtMatmulAlgoGetHeuristic(b->lth, g->op, g->lay_b, g->lay_a, g->lay_d,
                                               g->lay_d, pref, MAX_ALGOS, g->algo, &g->nalgo);
        /* INVALID_VALUE too: FP8 kernels have shape rules (ld, scale layouts) */
        refused = st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_INVALID_VALUE ||
                  (st == CUBLAS_STATUS_SUCCESS && g->nalgo < 1);
    }
    if (pref)
        lt.cublasLtMatmulPreferenceDestroy(pref);
    if (ok && refused)
        fprintf(stderr, "jitgemm-bench: cuBLASLt has no %s algorithm for %s (status %d): %s\n",
                types_text(what, sizeof what, in, out, sc ? sc->mode : JG_SCALE_NONE), s->name,
                (int)st, then);
    else if (ok)
        LT_FAILED(st);
    if (st != CUBLAS_STATUS_SUCCESS)
        g->nalgo = 0;
    return ok && !refused && st == CUBLAS_STATUS_SUCCESS && g->nalgo >= 1;
}

/* One of the heuristic's algorithms, as a launchable implementation. */
typedef struct lt_cand {
    lt_gemm *g;
    int algo;
} lt_cand;

static cublasStatus_t lt_matmul(const lt_cand *c, cudaStream_t stream)
{
    const lt_gemm *g = c->g;
    const float alpha = 1.0f, beta = 0.0f;
    bench *b = g->bench;
    return lt.cublasLtMatmul(b->lth, g->op, &alpha, g->b, g->lay_b, g->a, g->lay_a, &beta, g->d,
                             g->lay_d, g->d, g->lay_d, &g->algo[c->algo].algo, b->workspace,
                             WORKSPACE_BYTES, stream);
}

static bool lt_launch(void *arg, cudaStream_t stream)
{
    return lt_matmul(arg, stream) == CUBLAS_STATUS_SUCCESS;
}

/* One synchronized launch of the heuristic's first usable algorithm, for
 * e4m3 GEMMs: a scale mode or shape that cuBLASLt describes but does not
 * run (cublasLtMatmul's INVALID_VALUE or NOT_SUPPORTED) costs a note and
 * `then`, not the row. False also if nothing could be launched. */
static bool lt_try(lt_gemm *g, const char *then)
{
    lt_cand c = {g, 0};
    while (c.algo < g->nalgo && g->algo[c.algo].state != CUBLAS_STATUS_SUCCESS)
        ++c.algo;
    cublasStatus_t st = c.algo < g->nalgo ? lt_matmul(&c, g->bench->stream)
                                          : CUBLAS_STATUS_NOT_SUPPORTED;
    bool synced = !CUDA_FAILED(cudaStreamSynchronize(g->bench->stream));
    if (st != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "jitgemm-bench: cuBLASLt %s did not launch (status %d): %s\n", g->name,
                (int)st, then);
    return synced && st == CUBLAS_STATUS_SUCCESS;
}

/* "Best heuristic algorithm": times every algorithm the heuristic offered,
 * in alternation, PICK_REPS flushed launches each after a common warm-up,
 * and keeps the fastest in *best. One that fails to launch is dropped.
 * False if none runs. */
static bool lt_pick(lt_gemm *g, lt_cand *best)
{
    lt_cand c[MAX_ALGOS];
    timed t[MAX_ALGOS];
    double us[MAX_ALGOS];
    int n = 0;
    for (int i = 0; i < g->nalgo; ++i)
        if (g->algo[i].state == CUBLAS_STATUS_SUCCESS)
            c[n++] = (lt_cand){g, i};
    for (;;) {
        for (int j = 0; j < n; ++j)
            t[j] = (timed){lt_launch, &c[j]};
        int bad = n ? time_interleaved(g->bench, t, n, PICK_REPS, true, us) : -1;
        if (bad < 0)
            break;
        fprintf(stderr, "jitgemm-bench: cuBLASLt algorithm %d failed to launch: dropped\n",
                c[bad].algo);
        c[bad] = c[--n];
    }
    if (!n) {
        fprintf(stderr, "jitgemm-bench: no cuBLASLt algorithm could be launched\n");
        return false;
    }
    int k = 0;
    for (int j = 1; j < n; ++j)
        k = us[j] < us[k] ? j : k;
    *best = c[k];
    return true;
}

/* ---- device buffers for one problem ------------------------------------ */

typedef struct operands {
    void *ha, *hb; /* host copies: inputs of the no-peer check */
    void *a, *b, *d_ours;
    void *d_peer, *d_peer2; /* the D of each peer: cuBLASLt (loop), cuBLAS grouped */
    size_t a_bytes, b_bytes, d_bytes;
    /* e4m3 problems only (scale NONE otherwise): see scales_init */
    jg_scale_mode scale;
    int64_t kb;          /* ceil(K / 128): block scales along K */
    float *hsa, *hsb;    /* our a_scale and b_scale on the host */
    float *sa, *sb;      /* the same on the device: args.a_scale, args.b_scale */
    float *lt_sa, *lt_sb; /* cuBLASLt's A and B scales (from our b_scale, a_scale) */
    float *unit;         /* two 1.0f: cuBLASLt's tensor scales where it lacks the mode */
    /* nvfp4 problems only (see nvfp4_init): a and b hold the packed e2m1 codes
     * (ha, hb their host copies), sa and sb the global scales (hsa, hsb) */
    jg_sf_layout sf_layout;
    void *sfa, *sfb;     /* the e4m3 block scales: args.a_sf, args.b_sf */
    uint8_t *hsfa, *hsfb; /* their host copies, for the check */
    size_t sfa_bytes, sfb_bytes;
} operands;

static void operands_free(operands *o)
{
    free(o->ha);
    free(o->hb);
    free(o->hsa);
    free(o->hsb);
    cudaFree(o->a);
    cudaFree(o->b);
    cudaFree(o->d_ours);
    cudaFree(o->d_peer);
    cudaFree(o->d_peer2);
    cudaFree(o->sa);
    cudaFree(o->sb);
    cudaFree(o->lt_sa);
    cudaFree(o->lt_sb);
    cudaFree(o->unit);
    free(o->hsfa);
    free(o->hsfb);
    cudaFree(o->sfa);
    cudaFree(o->sfb);
    memset(o, 0, sizeof *o);
}

/* Random A (na elements) and B (nb) uploaded (seeds `seed` and seed + 1):
 * normal values rounded to bf16/fp16, or e4m3 codes (fill_e4m3); our D and
 * `peers` (0 to 2) peer D (nd elements each) poisoned with NaN (0xff bytes)
 * so that an output never written cannot pass the check. */
static bool operands_alloc(operands *o, const char *name, size_t na, size_t nb, size_t nd,
                           jg_dtype in, jg_dtype out, int peers, uint64_t seed)
{
    memset(o, 0, sizeof *o);
    o->a_bytes = na * dtype_size(in);
    o->b_bytes = nb * dtype_size(in);
    o->d_bytes = nd * dtype_size(out);
    o->ha = malloc(o->a_bytes);
    o->hb = malloc(o->b_bytes);
    if (!o->ha || !o->hb) {
        fprintf(stderr, "jitgemm-bench: out of host memory for %s\n", name);
        return false;
    }
    if (in == JG_E4M3) {
        fill_e4m3(o->ha, na, seed);
        fill_e4m3(o->hb, nb, seed + 1);
    } else {
        fill_normal(o->ha, na, in, seed);
        fill_normal(o->hb, nb, in, seed + 1);
    }
    return !CUDA_FAILED(cudaMalloc(&o->a, o->a_bytes)) &&
           !CUDA_FAILED(cudaMalloc(&o->b, o->b_bytes)) &&
           !CUDA_FAILED(cudaMalloc(&o->d_ours, o->d_bytes)) &&
           (peers < 1 || !CUDA_FAILED(cudaMalloc(&o->d_peer, o->d_bytes))) &&
           (peers < 2 || !CUDA_FAILED(cudaMalloc(&o->d_peer2, o->d_bytes))) &&
           !CUDA_FAILED(cudaMemcpy(o->a, o->ha, o->a_bytes, cudaMemcpyHostToDevice)) &&
           !CUDA_FAILED(cudaMemcpy(o->b, o->hb, o->b_bytes, cudaMemcpyHostToDevice)) &&
           !CUDA_FAILED(cudaMemset(o->d_ours, 0xff, o->d_bytes)) &&
           (peers < 1 || !CUDA_FAILED(cudaMemset(o->d_peer, 0xff, o->d_bytes))) &&
           (peers < 2 || !CUDA_FAILED(cudaMemset(o->d_peer2, 0xff, o->d_bytes))) &&
           /* These ran on the legacy stream, which the timing stream (non-
            * blocking) does not wait for. */
           !CUDA_FAILED(cudaDeviceSynchronize());
}

/* Elements of our a_scale and b_scale for a problem [m, n, k] (the header's
 * shapes; block: ceil(K/128) per row of A, per 128 rows of B). */
static void scale_counts(jg_scale_mode mode, int64_t m, int64_t n, int64_t k, size_t *na,
                         size_t *nb)
{
    size_t kb = (size_t)((k + 127) / 128);
    *na = mode == JG_SCALE_TENSOR ? 1 : mode == JG_SCALE_ROW ? (size_t)m
          : mode == JG_SCALE_BLOCK ? (size_t)m * kb : 0;
    *nb = mode == JG_SCALE_TENSOR ? 1 : mode == JG_SCALE_ROW ? (size_t)n
          : mode == JG_SCALE_BLOCK ? (size_t)((n + 127) / 128) * kb : 0;
}

/* cuBLASLt's scale arrays, on the host (malloc'd, NULL if out of memory),
 * from ours (o->hsa [M][kb], o->hsb [N/128][kb] for block), in the layouts
 * its modes read (those of PyTorch's blockwise _scaled_mm, cuBLAS 12.9):
 *   tensor, row (OUTER_VEC_32F): ours as they are; its A's are our b_scale.
 *   block, its A (BLK128x128_32F over our B): [ceil(N/128)][L] row-major
 *     (K-blocks innermost), L = kb rounded up to 4 (rows 16-byte aligned;
 *     the padding is 0); for our shapes' K (multiples of 512) L = kb.
 *   block, its B (VEC128_32F over our A): outer-dimension-major, [kb][M]:
 *     our a_scale transposed. */
static void lt_scales_layout(const operands *o, const shape *s, float **la, size_t *nla,
                             float **lb, size_t *nlb)
{
    size_t na, nb, kb = (size_t)o->kb, l4 = (kb + 3) / 4 * 4, m = (size_t)s->m;
    scale_counts(o->scale, s->m, s->n, s->k, &na, &nb);
    *nla = o->scale == JG_SCALE_BLOCK ? nb / kb * l4 : nb;
    *nlb = na;
    *la = calloc(*nla, sizeof **la);
    *lb = malloc(*nlb * sizeof **lb);
    if (!*la || !*lb)
        return;
    if (o->scale != JG_SCALE_BLOCK) {
        memcpy(*la, o->hsb, nb * sizeof **la);
        memcpy(*lb, o->hsa, na * sizeof **lb);
        return;
    }
    for (size_t r = 0; r < nb / kb; ++r)
        memcpy(*la + r * l4, o->hsb + r * kb, kb * sizeof **la);
    for (size_t i = 0; i < m; ++i)
        for (size_t j = 0; j < kb; ++j)
            (*lb)[j * m + i] = o->hsa[i * kb + j];
}

/* Allocates n floats on the device and copies `host` there. */
static bool upload_floats(float **dev, const float *host, size_t n)
{
    return !CUDA_FAILED(cudaMalloc((void **)dev, n * sizeof *host)) &&
           !CUDA_FAILED(cudaMemcpy(*dev, host, n * sizeof *host, cudaMemcpyHostToDevice));
}

/* The scales of an e4m3 problem in s->scale's shape, random in [0.5, 1.5)
 * (seeds seed + 2 and + 3), uploaded once: ours, cuBLASLt's in its layouts
 * (lt_scales_layout), and a pair of 1.0 for a cuBLASLt that lacks the
 * mode. Kept on the host for the FP64 check. */
static bool scales_init(operands *o, const shape *s, uint64_t seed)
{
    static const float unit[2] = {1.0f, 1.0f};
    size_t na, nb, nla = 0, nlb = 0;
    float *la = NULL, *lb = NULL;
    o->scale = s->scale;
    o->kb = (s->k + 127) / 128;
    scale_counts(s->scale, s->m, s->n, s->k, &na, &nb);
    o->hsa = malloc(na * sizeof *o->hsa);
    o->hsb = malloc(nb * sizeof *o->hsb);
    if (o->hsa && o->hsb) {
        fill_scales(o->hsa, na, seed + 2);
        fill_scales(o->hsb, nb, seed + 3);
        lt_scales_layout(o, s, &la, &nla, &lb, &nlb);
    }
    bool ok = la && lb;
    if (!ok)
        fprintf(stderr, "jitgemm-bench: out of host memory for %s\n", s->name);
    ok = ok && upload_floats(&o->sa, o->hsa, na) && upload_floats(&o->sb, o->hsb, nb) &&
         upload_floats(&o->lt_sa, la, nla) && upload_floats(&o->lt_sb, lb, nlb) &&
         upload_floats(&o->unit, unit, 2) &&
         !CUDA_FAILED(cudaDeviceSynchronize()); /* pageable copies may still be in flight */
    free(la);
    free(lb);
    return ok;
}

/* The operands of one problem [m, n, k] of s's types: see operands_alloc
 * and, for e4m3, scales_init. */
static bool operands_init(operands *o, const shape *s, int peers, uint64_t seed)
{
    return operands_alloc(o, s->name, (size_t)(s->m * s->k), (size_t)(s->n * s->k),
                          (size_t)(s->m * s->n), s->in, s->out, peers, seed) &&
           (s->in != JG_E4M3 || scales_init(o, s, seed));
}

/* ---- ceilings: copy bandwidth and matmul peak --------------------------- */

typedef struct copy_job {
    void *dst, *src;
} copy_job;

static bool copy_launch(void *arg, cudaStream_t stream)
{
    copy_job *c = arg;
    return cudaMemcpyAsync(c->dst, c->src, COPY_BYTES, cudaMemcpyDeviceToDevice, stream) ==
           cudaSuccess;
}

/* A 1 GiB device-to-device copy reads and writes 1 GiB each: GB/s (1e9)
 * of bytes read + written, median of COPY_REPS. No flush: 2 GiB >> L2. */
static double measure_copy_gbs(bench *b)
{
    copy_job c = {NULL, NULL};
    double us = -1;
    if (!CUDA_FAILED(cudaMalloc(&c.dst, COPY_BYTES)) &&
        !CUDA_FAILED(cudaMalloc(&c.src, COPY_BYTES)) &&
        !CUDA_FAILED(cudaMemset(c.src, 1, COPY_BYTES)) &&
        !CUDA_FAILED(cudaDeviceSynchronize())) { /* the timing stream does not wait for it */
        timed t = {copy_launch, &c};
        if (time_interleaved(b, &t, 1, COPY_REPS, false, &us) >= 0)
            us = -1;
    }
    cudaFree(c.dst);
    cudaFree(c.src);
    return us > 0 ? 2.0 * COPY_BYTES / (us * 1e-6) / 1e9 : -1;
}

typedef struct empty_job {
    const bench *b;
    int smem; /* dynamic shared memory per CTA */
} empty_job;

static bool empty_launch(void *arg, cudaStream_t stream)
{
    const empty_job *e = arg;
    dim3 grid = {e->b->flush_blocks / FLUSH_BLOCKS_PER_SM, 1, 1}, block = {FLOOR_THREADS, 1, 1};
    return cudaLaunchKernel((const void *)e->b->empty_kernel, grid, block, NULL,
                            (size_t)e->smem, stream) == cudaSuccess;
}

/* The launch floor: an empty kernel of one CTA per SM (our kernels'
 * shape) with `smem` bytes of dynamic shared memory, flushed and
 * timed like every row, median of the reps: the part of a row's
 * microseconds that no kernel body can remove. With all of an SM's shared
 * memory it also pays what a GEMM's launch pays after the flush, which
 * ran with the L1 carveout. NAN if it cannot run. */
static double measure_floor_us(bench *b, int smem)
{
    double us = NAN;
    empty_job e = {b, smem};
    timed t = {empty_launch, &e};
    if (!b->empty_kernel ||
        cudaKernelSetAttributeForDevice(b->empty_kernel,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, smem,
                                        0) != cudaSuccess ||
        time_interleaved(b, &t, 1, b->opt.reps, true, &us) >= 0)
        return NAN;
    return us;
}

/* cuBLASLt 8192^3 on random inputs, median TFLOP/s: the compute ceiling
 * of `in` rows. bf16: bf16 in and out, normal values. e4m3: e4m3 in
 * (fill_e4m3), bf16 out, tensor scales (random, one each), no fast
 * accumulation. Random data, not zeros, because tensor-core power and
 * therefore clocks depend on the values. *algo: the heuristic's pick;
 * *clock: the SM clock while it was timed (left as it is if it was not). */
static double measure_peak_tflops(bench *b, jg_dtype in, int *algo, clock_stats *clock)
{
    shape s = {.name = "peak", .kind = "peak", .m = PEAK_DIM, .n = PEAK_DIM, .k = PEAK_DIM,
               .in = in, .out = JG_BF16,
               .scale = in == JG_E4M3 ? JG_SCALE_TENSOR : JG_SCALE_NONE};
    operands o;
    lt_gemm g;
    lt_cand best;
    double us = -1;
    memset(&g, 0, sizeof g);
    if (operands_init(&o, &s, 0, 1)) {
        lt_scales sc = {JG_SCALE_TENSOR, o.lt_sa, o.lt_sb};
        if (lt_gemm_init(&g, b, &s, in == JG_E4M3 ? &sc : NULL, "no matmul peak")) {
            g.a = o.a;
            g.b = o.b;
            g.d = o.d_ours;
            timed t = {lt_launch, &best};
            if (!lt_pick(&g, &best) || time_interleaved(b, &t, 1, b->opt.reps, true, &us) >= 0)
                us = -1;
            else {
                *algo = best.algo;
                *clock = b->clock;
            }
        }
    }
    lt_gemm_destroy(&g);
    operands_free(&o);
    return us > 0 ? 2.0 * PEAK_DIM * PEAK_DIM * PEAK_DIM / (us * 1e-6) / 1e12 : -1;
}

/* ---- one row ----------------------------------------------------------- */

typedef struct row {
    const shape *s;
    double plan_ms;
    const char *origin; /* "nvrtc" or "disk" */
    char kernel[128];
    double ours_us, peer_us; /* NAN when not measured; peer_us: the row's (best) peer */
    double ours_plain_us;    /* --chain: ours without PDL; NAN otherwise */
    int64_t chain_b_bytes;   /* --chain: B (nvfp4: and b_sf) of the whole chain; 0 otherwise */
    const char *peer;        /* "cuBLASLt", "cuBLASLt fp8" (or "... (tensor scales)"),
                                "cuBLASLt loop" or "cuBLAS grouped", else NULL */
    bool peer_other_scales;  /* e4m3: cuBLASLt timed with tensor scales, not the row's */
    double lt_loop_us, grouped_us; /* grouped: each peer's time, NAN when not timed */
    double grouped_diff;     /* cuBLAS grouped against the cuBLASLt loop (else ours) */
    int peer_algo;           /* index of the chosen heuristic result (dense, decode) */
    int group_algo[JG_GROUPED_MAX_DEVICE_GROUPS]; /* grouped: the same per group, -1 if empty */
    const char *check;       /* "cublas" (whole D) or "fp64_rows" (3 rows) */
    double rel_diff;         /* max |ours - ref| / max |ref| (grouped: the worst group) */
    bool mismatch;
    char error[256]; /* "" when the row ran */
    clock_stats clock;       /* the SM clock while its timed launches ran */
} row;

typedef struct ours_job {
    jg_plan *plan;
    jg_gemm_args args;
} ours_job;

static bool ours_launch(void *arg, cudaStream_t stream)
{
    ours_job *j = arg;
    return jg_gemm_run(j->plan, &j->args, stream) == JG_OK;
}

/* Fills the kernel columns of the row from a plan asked for at t0 (that time,
 * the compile or disk load, is excluded from the GEMM time). Returns the
 * plan, or NULL with r->error set if planning failed. */
static jg_plan *plan_done(bench *b, jg_status st, jg_plan *plan, double t0, row *r)
{
    jg_plan_info info;
    if (st != JG_OK || jg_plan_get_info(plan, &info) != JG_OK) {
        snprintf(r->error, sizeof r->error, "plan: %s%s",
                 st == JG_ERR_UNSUPPORTED ? "unsupported: " : "", jg_context_last_error(b->jg));
        return NULL;
    }
    r->plan_ms = now_ms() - t0;
    r->origin = info.origin == JG_ORIGIN_COMPILED ? "nvrtc" : "disk";
    snprintf(r->kernel, sizeof r->kernel, "%s", info.kernel_name);
    return plan;
}

/* Plans a dense or decode shape with `flags` (JG_GEMM_*); see plan_done. */
static jg_plan *plan_shape(bench *b, const shape *s, uint32_t flags, row *r)
{
    jg_gemm_problem p = {.flags = flags, .a_type = s->in, .b_type = s->in, .d_type = s->out,
                         .m = s->m, .n = s->n, .k = s->k, .scale = s->scale,
                         .a_sf_layout = s->sf_layout, .b_sf_layout = s->sf_layout};
    jg_plan *plan = NULL;
    double t0 = now_ms();
    jg_status st = jg_gemm_plan(b->jg, &p, &plan);
    return plan_done(b, st, plan, t0, r);
}

/* The row's plan and, under --chain, in *plain one without PDL. The chain
 * times ours with JG_GEMM_PDL (the "ours" column), and the plain plan
 * without it (the "plain" column). The PDL plan is made last so that the
 * row's plan columns (kernel, plan ms, origin) are its. */
static jg_plan *plan_row(bench *b, const shape *s, jg_plan **plain, row *r)
{
    if (!b->opt.chain)
        return plan_shape(b, s, 0, r);
    *plain = plan_shape(b, s, 0, r);
    return *plain ? plan_shape(b, s, JG_GEMM_PDL, r) : NULL;
}

/* Max |x - ref| over the whole output, relative to max |ref|; a NaN or an
 * infinity (an overflow, which would otherwise cancel out) in either counts
 * as an infinite difference. */
static double rel_diff(const void *x, const void *ref, size_t n, jg_dtype t)
{
    double err = 0, scale = 0;
    for (size_t i = 0; i < n; ++i) {
        double u = load_elem(x, i, t), v = load_elem(ref, i, t);
        err = !isfinite(u) || !isfinite(v) ? INFINITY : fmax(err, fabs(u - v));
        if (isinf(err))
            break;
        scale = fmax(scale, fabs(v));
    }
    return err / (scale > 0 ? scale : 1);
}

/* The product of our scales applying to D[i][j] in 128-wide K block kb:
 * 1 without scales. */
static double scale_at(const operands *o, int64_t i, int64_t j, int64_t kb)
{
    switch (o->scale) {
    case JG_SCALE_TENSOR:
        return (double)o->hsa[0] * o->hsb[0];
    case JG_SCALE_ROW:
        return (double)o->hsa[i] * o->hsb[j];
    case JG_SCALE_BLOCK:
        return (double)o->hsa[i * o->kb + kb] * o->hsb[j / 128 * o->kb + kb];
    default:
        return 1.0;
    }
}

/* Without a peer result: rows 0, M/2 and M-1 of our D against FP64 on the
 * host (the whole output would take minutes for the large shapes), e4m3
 * with the scales applied per 128 of K. */
static double check_sampled_rows(const operands *o, const shape *s, const void *d)
{
    int64_t rows[3] = {0, s->m / 2, s->m - 1};
    double err = 0, scale = 0;
    for (int r = 0; r < 3; ++r) {
        if (r > 0 && rows[r] == rows[r - 1])
            continue; /* M = 1 or 2 */
        for (int64_t j = 0; j < s->n; ++j) {
            double ref = 0;
            for (int64_t q0 = 0; q0 < s->k; q0 += 128) {
                double part = 0;
                for (int64_t q = q0; q < q0 + 128 && q < s->k; ++q)
                    part += load_elem(o->ha, (size_t)(rows[r] * s->k + q), s->in) *
                            load_elem(o->hb, (size_t)(j * s->k + q), s->in);
                ref += part * scale_at(o, rows[r], j, q0 / 128);
            }
            double got = load_elem(d, (size_t)(rows[r] * s->n + j), s->out);
            err = !isfinite(got) ? INFINITY : fmax(err, fabs(got - ref));
            scale = fmax(scale, fabs(ref));
        }
    }
    return err / (scale > 0 ? scale : 1);
}

/* Downloads two device outputs x and ref of `bytes` each (type t) and puts
 * their relative difference in *diff; false if they cannot be read back. */
static bool diff_device(const void *x, const void *ref, size_t bytes, jg_dtype t, double *diff)
{
    void *hx = malloc(bytes), *hr = malloc(bytes);
    bool ok = hx && hr && !CUDA_FAILED(cudaMemcpy(hx, x, bytes, cudaMemcpyDeviceToHost)) &&
              !CUDA_FAILED(cudaMemcpy(hr, ref, bytes, cudaMemcpyDeviceToHost));
    if (ok)
        *diff = rel_diff(hx, hr, bytes / dtype_size(t), t);
    free(hx);
    free(hr);
    return ok;
}

/* Puts the relative difference of our D of one problem from the first
 * peer's (with has_peer) or, without, that of sampled rows against FP64 in
 * *diff; false if the outputs cannot be read back. */
static bool check_output(const operands *o, const shape *s, bool has_peer, double *diff)
{
    if (has_peer)
        return diff_device(o->d_ours, o->d_peer, o->d_bytes, s->out, diff);
    void *ours = malloc(o->d_bytes);
    bool ok = ours &&
              !CUDA_FAILED(cudaMemcpy(ours, o->d_ours, o->d_bytes, cudaMemcpyDeviceToHost));
    if (ok)
        *diff = check_sampled_rows(o, s, ours);
    free(ours);
    return ok;
}

/* Sets the check columns of a row from its largest difference, taken
 * against a cuBLAS(Lt) output (vs_peer) or FP64 rows. */
static void set_check(row *r, double diff, bool vs_peer)
{
    r->rel_diff = diff;
    r->mismatch = !(diff <= MISMATCH_TOL);
    r->check = vs_peer ? "cublas" : "fp64_rows";
}

/* Times ours (t[0]) and the peers t[1..n) in alternation, each launch after
 * an L2 flush, into us[0..n), per GEMM where a launch runs `gemms` of them
 * (--chain); sets r->ours_us, or r->error when ours failed. Returns
 * time_interleaved's answer: j > 0 when peer t[j] failed to launch. */
static int time_with_peers(bench *b, const timed *t, int n, int gemms, row *r, double *us)
{
    int bad = time_interleaved(b, t, n, b->opt.reps, true, us);
    for (int j = 0; j < n && bad < 0; ++j)
        us[j] /= gemms;
    r->clock = b->clock;
    if (bad == 0)
        snprintf(r->error, sizeof r->error, "libjitgemm launch failed: %s",
                 jg_context_last_error(b->jg));
    else if (bad < 0)
        r->ours_us = us[0];
    return bad;
}

/* ---- --chain: GEMMs back to back, B rotated through copies ------------ */

/* n device buffers of one operand with the same contents: p[0] the row's
 * own, p[1..n) copies (owned). */
typedef struct b_copies {
    int n;
    void *p[MAX_CHAIN];
} b_copies;

/* One timed launch under --chain: `inner` once per copy, pointed at copy i
 * of B (and of b_sf) before launch i, so that each GEMM of the chain reads
 * its weights from DRAM, as a model's successive layers do, and not from
 * the L2 lines that the GEMM before it left. */
typedef struct chain_job {
    timed inner;
    const void **b, **sf; /* where inner reads B and b_sf (sf NULL: none) */
    const b_copies *cb, *csf;
} chain_job;

/* A row's chain: the copies, ours without PDL, and the chains timed (in
 * the places of their implementations in time_row's t). */
typedef struct row_chain {
    b_copies b, sf; /* our B and, nvfp4, b_sf (n 0: none) */
    b_copies peer_b; /* the peer's B where it has operands of its own (nvfp4) */
    ours_job plain;  /* ours planned without PDL, on the row's arguments */
    chain_job job[MAX_TIMED];
} row_chain;

static bool chain_launch(void *arg, cudaStream_t stream)
{
    chain_job *c = arg;
    for (int i = 0; i < c->cb->n; ++i) {
        *c->b = c->cb->p[i];
        if (c->sf)
            *c->sf = c->csf->p[i];
        if (!c->inner.fn(c->inner.arg, stream))
            return false;
    }
    return true;
}

/* Fills c (zeroed) with n buffers of `bytes` holding src's: src, then n - 1
 * device-to-device copies (on the legacy stream); false (reported) if one
 * cannot be made, c then holding what was, for copies_free. A failed
 * allocation is also cleared from the runtime's last error, which the
 * rows after must not see. */
static bool copies_make(b_copies *c, void *src, size_t bytes, int n)
{
    c->n = n;
    c->p[0] = src;
    for (int i = 1; i < n; ++i) {
        if (CUDA_FAILED(cudaMalloc(&c->p[i], bytes))) {
            c->p[i] = NULL;
            cudaGetLastError();
            return false;
        }
        if (CUDA_FAILED(cudaMemcpy(c->p[i], src, bytes, cudaMemcpyDeviceToDevice)))
            return false;
    }
    return true;
}

static void copies_free(b_copies *c)
{
    for (int i = 1; i < c->n; ++i)
        cudaFree(c->p[i]);
    c->n = 0;
}

static void chain_free(row_chain *ch)
{
    copies_free(&ch->b);
    copies_free(&ch->sf);
    copies_free(&ch->peer_b);
}

/* The bytes of B (nvfp4: codes and block scales) that a chain of n GEMMs
 * of s reads; 0 for grouped rows, which are not chained. */
static int64_t chain_b_bytes(const shape *s, int n)
{
    bool nvfp4 = s->in == JG_NVFP4;
    int64_t sf = nvfp4 ? jg_nvfp4_sf_bytes(s->sf_layout, s->n, s->k) : 0;
    int64_t b = nvfp4 ? s->n * s->k / 2 : s->n * s->k * (int64_t)dtype_size(s->in);
    return s->g ? 0 : n * (b + (sf > 0 ? sf : 0));
}

/* Under --chain (else nothing to do: true), the copies of o's B, of its
 * b_sf (nvfp4), and of the peer's B where the peer has operands of its own
 * (po: nvfp4 rows' fp8 twin; NULL, or without a B, otherwise); false with
 * r->error set if they cannot be made: N copies of a large B may not fit,
 * which fails the row, not the run. */
static bool chain_init(row_chain *ch, const bench *b, const operands *o, const operands *po,
                       row *r)
{
    int n = b->opt.chain;
    if (!n)
        return true;
    bool ok = copies_make(&ch->b, o->b, o->b_bytes, n) &&
              (!o->sfb || copies_make(&ch->sf, o->sfb, o->sfb_bytes, n)) &&
              (!po || !po->b || copies_make(&ch->peer_b, po->b, po->b_bytes, n)) &&
              /* the timing stream (non-blocking) does not wait for the copies */
              !CUDA_FAILED(cudaDeviceSynchronize());
    if (!ok)
        snprintf(r->error, sizeof r->error, "cannot make the chain's %d copies of B (see above)",
                 n);
    return ok;
}

/* Appends ours without PDL (the plan ch->plain, on ours' arguments) to the
 * n implementations of t and turns each into a chain of its own; returns
 * its place in t. t[0] is ours, t[peer_at] the peer (peer_at 0: none),
 * which rotates through its own B copies or, sharing our operands, ours. */
static int chain_timed(row_chain *ch, ours_job *ours, lt_gemm *g, int peer_at, timed *t, int *n)
{
    const b_copies *sf = ch->sf.n ? &ch->sf : NULL;
    int plain_at = (*n)++;
    ch->plain.args = ours->args;
    t[plain_at] = (timed){ours_launch, &ch->plain};
    for (int j = 0; j < *n; ++j) {
        jg_gemm_args *a = j == plain_at ? &ch->plain.args : &ours->args;
        ch->job[j] = peer_at && j == peer_at
                         ? (chain_job){t[j], &g->b, NULL, ch->peer_b.n ? &ch->peer_b : &ch->b,
                                       NULL}
                         : (chain_job){t[j], &a->b, sf ? &a->b_sf : NULL, &ch->b, sf};
        t[j] = (timed){chain_launch, &ch->job[j]};
    }
    return plain_at;
}

/* Times libjitgemm, and cuBLASLt's best algorithm when `g` has one, in
 * alternation on the same operands; under --chain, each as a chain (ch),
 * with ours without PDL too; sets the times or r->error. A type
 * combination that cuBLASLt lacks (no algorithm, e.g. bf16 -> fp16) leaves
 * the peer columns empty. The peer's algorithm is picked on single
 * launches, chain or not. */
static void time_row(bench *b, ours_job *job, lt_gemm *g, row_chain *ch, row *r)
{
    lt_cand best;
    timed t[MAX_TIMED] = {{ours_launch, job}, {lt_launch, &best}};
    double us[MAX_TIMED];
    int n = 1, peer_at = 0, plain_at = 0; /* their places in t; 0: not timed */
    if (g->op && g->nalgo > 0) {
        if (!lt_pick(g, &best)) {
            snprintf(r->error, sizeof r->error, "cuBLASLt failed (see above)");
            return;
        }
        peer_at = n++;
    }
    if (b->opt.chain)
        plain_at = chain_timed(ch, job, g, peer_at, t, &n);
    int bad = time_with_peers(b, t, n, b->opt.chain ? b->opt.chain : 1, r, us);
    if (bad > 0 && bad == plain_at)
        snprintf(r->error, sizeof r->error, "libjitgemm launch without PDL failed: %s",
                 jg_context_last_error(b->jg));
    else if (bad > 0)
        snprintf(r->error, sizeof r->error, "cuBLASLt algorithm %d failed to launch",
                 best.algo);
    else if (bad < 0) {
        r->ours_plain_us = plain_at ? us[plain_at] : NAN;
        r->peer = peer_at ? g->name : NULL;
        r->peer_other_scales = peer_at && g->other_scales;
        r->peer_us = peer_at ? us[peer_at] : NAN;
        r->peer_algo = peer_at ? best.algo : -1;
    }
}

/* Points g at o's operands (its D: the first peer's) and, for e4m3, runs it
 * once (lt_try); false (g destroyed) if that fails. */
static bool lt_gemm_bind(lt_gemm *g, const operands *o, bool fp8, const char *then)
{
    g->a = o->a;
    g->b = o->b;
    g->d = o->d_peer;
    if (fp8 && !lt_try(g, then)) {
        lt_gemm_destroy(g);
        return false;
    }
    return true;
}

/* cuBLASLt for a dense or decode row on o's operands, into g: the row's
 * types and, for e4m3, its scales. Where cuBLASLt lacks the row's scale mode
 * (headers or library before cuBLAS 12.9, not sm_90, or a shape its kernels
 * refuse; a note says which), e4m3 with tensor scales of 1 instead, named
 * "cuBLASLt fp8 (tensor scales)": its time is a reference, its D another
 * product, so the row is checked against FP64. Without any, g is left
 * empty (no op) and the peer columns stay empty. */
static void dense_peer_init(lt_gemm *g, bench *b, const shape *s, const operands *o)
{
    bool fp8 = s->in == JG_E4M3, retry = fp8 && s->scale != JG_SCALE_TENSOR;
    const char *then = retry ? "timing it with tensor scales instead" : "its columns stay empty";
    lt_scales own = {s->scale, o->lt_sa, o->lt_sb}, unit = {JG_SCALE_TENSOR, o->unit, o->unit + 1};
    if (lt_gemm_init(g, b, s, fp8 ? &own : NULL, then) && lt_gemm_bind(g, o, fp8, then))
        return;
    lt_gemm_destroy(g);
    if (!retry)
        return;
    then = "its columns stay empty";
    if (lt_gemm_init(g, b, s, &unit, then)) {
        g->name = "cuBLASLt fp8 (tensor scales)";
        g->other_scales = true;
        if (lt_gemm_bind(g, o, fp8, then))
            return;
    }
    lt_gemm_destroy(g);
}

/* Plans, sets up and times one dense or decode shape, then checks it;
 * r->error says why if it could not. */
static void run_dense(bench *b, const shape *s, row *r)
{
    bool peer = b->have_lt && !b->opt.no_peer;
    row_chain ch;
    memset(&ch, 0, sizeof ch);
    ours_job job = {.plan = plan_row(b, s, &ch.plain.plan, r)};
    operands o;
    lt_gemm g;
    double diff;
    memset(&g, 0, sizeof g);
    if (!job.plan)
        return;
    if (!operands_init(&o, s, peer ? 1 : 0, 1)) {
        snprintf(r->error, sizeof r->error, "cannot set up the operands (see above)");
        operands_free(&o);
        return;
    }
    job.args = (jg_gemm_args){.a = o.a, .b = o.b, .d = o.d_ours, .alpha = 1.0f,
                              .a_scale = o.sa, .b_scale = o.sb};
    if (peer)
        dense_peer_init(&g, b, s, &o);
    if (chain_init(&ch, b, &o, NULL, r))
        time_row(b, &job, &g, &ch, r);
    /* against cuBLASLt where it computed the same product, else FP64 rows */
    bool vs_peer = isfinite(r->peer_us) && !r->peer_other_scales;
    if (!r->error[0] && check_output(&o, s, vs_peer, &diff))
        set_check(r, diff, vs_peer);
    else if (!r->error[0])
        snprintf(r->error, sizeof r->error, "cannot read the outputs back");
    chain_free(&ch);
    lt_gemm_destroy(&g);
    operands_free(&o);
}

/* ---- one nvfp4 row ----------------------------------------------------- */

/* Quantizes `rows` x K random normal bf16 values (seed) on the GPU with
 * jg_quantize_nvfp4 into codes (device), sf (device, o->sf_layout) and the
 * global scale *g (device), and copies the three back to the host (hcodes,
 * hsf, *hg) for the check. `src`/`hsrc` are scratch of >= rows * K bf16. */
static bool nvfp4_quantize(bench *b, const operands *o, const shape *s, int64_t rows,
                           uint64_t seed, uint16_t *hsrc, void *src, void *codes, void *sf,
                           size_t sf_bytes, float *g, void *hcodes, uint8_t *hsf, float *hg)
{
    size_t n = (size_t)(rows * s->k);
    jg_quant_problem p = {.src_type = JG_BF16, .scale = JG_SCALE_NVFP4, .rows = rows,
                          .cols = s->k, .sf_layout = o->sf_layout};
    jg_quant_args qa = {.src = src, .dst = codes, .scale = g, .sf = sf};
    fill_normal(hsrc, n, JG_BF16, seed);
    if (CUDA_FAILED(cudaMemcpy(src, hsrc, n * 2, cudaMemcpyHostToDevice)) ||
        CUDA_FAILED(cudaDeviceSynchronize())) /* the timing stream does not wait for it */
        return false;
    jg_status st = jg_quantize_nvfp4(b->jg, &p, &qa, (jg_stream)b->stream);
    if (st != JG_OK) {
        fprintf(stderr, "jitgemm-bench: jg_quantize_nvfp4 (%s, %lld x %lld): %s: %s\n", s->name,
                (long long)rows, (long long)s->k, jg_status_name(st),
                jg_context_last_error(b->jg));
        return false;
    }
    return !CUDA_FAILED(cudaStreamSynchronize(b->stream)) &&
           !CUDA_FAILED(cudaMemcpy(hcodes, codes, n / 2, cudaMemcpyDeviceToHost)) &&
           !CUDA_FAILED(cudaMemcpy(hsf, sf, sf_bytes, cudaMemcpyDeviceToHost)) &&
           !CUDA_FAILED(cudaMemcpy(hg, g, sizeof *hg, cudaMemcpyDeviceToHost));
}

/* The operands of an nvfp4 problem: random normal bf16 A [M,K] and B [N,K]
 * (seeds `seed` and seed + 1, as for 16-bit rows), quantized on the GPU by
 * jg_quantize_nvfp4 in s->sf_layout, outside any timing; the bf16 values
 * are freed after. Our D poisoned with NaN. No peer D: the peer, cuBLASLt
 * fp8, runs on operands of its own (run_nvfp4). */
static bool nvfp4_init(operands *o, bench *b, const shape *s, uint64_t seed)
{
    memset(o, 0, sizeof *o);
    o->sf_layout = s->sf_layout;
    int64_t sfa = jg_nvfp4_sf_bytes(s->sf_layout, s->m, s->k);
    int64_t sfb = jg_nvfp4_sf_bytes(s->sf_layout, s->n, s->k);
    if (sfa < 0 || sfb < 0) {
        fprintf(stderr, "jitgemm-bench: %s: no nvfp4 scale layout for K = %lld (a multiple of "
                        "16 is needed)\n", s->name, (long long)s->k);
        return false;
    }
    size_t big = (size_t)((s->m > s->n ? s->m : s->n) * s->k);
    o->a_bytes = (size_t)(s->m * s->k) / 2;
    o->b_bytes = (size_t)(s->n * s->k) / 2;
    o->d_bytes = (size_t)(s->m * s->n) * dtype_size(s->out);
    o->sfa_bytes = (size_t)sfa;
    o->sfb_bytes = (size_t)sfb;
    o->ha = malloc(o->a_bytes);
    o->hb = malloc(o->b_bytes);
    o->hsfa = malloc(o->sfa_bytes);
    o->hsfb = malloc(o->sfb_bytes);
    o->hsa = malloc(sizeof *o->hsa);
    o->hsb = malloc(sizeof *o->hsb);
    uint16_t *hsrc = malloc(big * 2);
    void *src = NULL;
    bool ok = o->ha && o->hb && o->hsfa && o->hsfb && o->hsa && o->hsb && hsrc;
    if (!ok)
        fprintf(stderr, "jitgemm-bench: out of host memory for %s\n", s->name);
    ok = ok && !CUDA_FAILED(cudaMalloc(&src, big * 2)) &&
         !CUDA_FAILED(cudaMalloc(&o->a, o->a_bytes)) &&
         !CUDA_FAILED(cudaMalloc(&o->b, o->b_bytes)) &&
         !CUDA_FAILED(cudaMalloc(&o->sfa, o->sfa_bytes)) &&
         !CUDA_FAILED(cudaMalloc(&o->sfb, o->sfb_bytes)) &&
         !CUDA_FAILED(cudaMalloc((void **)&o->sa, sizeof *o->sa)) &&
         !CUDA_FAILED(cudaMalloc((void **)&o->sb, sizeof *o->sb)) &&
         !CUDA_FAILED(cudaMalloc(&o->d_ours, o->d_bytes)) &&
         !CUDA_FAILED(cudaMemset(o->d_ours, 0xff, o->d_bytes)) &&
         nvfp4_quantize(b, o, s, s->m, seed, hsrc, src, o->a, o->sfa, o->sfa_bytes, o->sa,
                        o->ha, o->hsfa, o->hsa) &&
         nvfp4_quantize(b, o, s, s->n, seed + 1, hsrc, src, o->b, o->sfb, o->sfb_bytes, o->sb,
                        o->hb, o->hsfb, o->hsb);
    free(hsrc);
    cudaFree(src);
    return ok;
}

/* Rows 0, M/2 and M-1 of our D against FP64 over the dequantized inputs,
 * the ones our kernel read (host copies of the codes, block scales and
 * global scales): sum over K of e2m1 * e4m3 * e2m1 * e4m3, times both
 * global scales. Every such product is exact in BF16 and our kernel
 * accumulates in FP32, so, as for fp8 rows, the two differ only by the
 * summation order and D's final rounding (bf16: 2^-9 of the largest
 * output): the 2e-2 tolerance is as loose here as there. A check against
 * the bf16 product before quantization could not be as tight: e2m1 keeps
 * 1 mantissa bit, so each input is off by up to ~1/6 of its block's
 * largest and D by ~10% of its typical size. */
static double check_nvfp4_rows(const operands *o, const shape *s, const void *d)
{
    double e2m1[16];
    for (unsigned c = 0; c < 16; ++c)
        e2m1[c] = jg_e2m1_value(c);
    int64_t rows[3] = {0, s->m / 2, s->m - 1}, kbs = s->k / 16;
    double g = (double)o->hsa[0] * o->hsb[0], err = 0, scale = 0;
    double *arow = malloc((size_t)s->k * sizeof *arow);
    if (!arow)
        return INFINITY;
    for (int r = 0; r < 3; ++r) {
        if (r > 0 && rows[r] == rows[r - 1])
            continue; /* M = 1 or 2 */
        for (int64_t q = 0; q < s->k; ++q) /* A's row, block scales applied */
            arow[q] = e2m1[jg_nvfp4_code(o->ha, s->k, rows[r], q)] *
                      jg_e4m3_value(o->hsfa[jg_nvfp4_sf_offset(o->sf_layout, s->m, s->k,
                                                               rows[r], q / 16)]);
        for (int64_t j = 0; j < s->n; ++j) {
            const uint8_t *bj = (const uint8_t *)o->hb + j * (s->k / 2);
            double ref = 0;
            for (int64_t kb = 0; kb < kbs; ++kb) {
                double part = 0;
                for (int64_t q = 16 * kb; q < 16 * kb + 16; q += 2)
                    part += arow[q] * e2m1[bj[q / 2] & 15] + arow[q + 1] * e2m1[bj[q / 2] >> 4];
                ref += part * jg_e4m3_value(
                                  o->hsfb[jg_nvfp4_sf_offset(o->sf_layout, s->n, s->k, j, kb)]);
            }
            ref *= g;
            double got = load_elem(d, (size_t)(rows[r] * s->n + j), s->out);
            err = !isfinite(got) ? INFINITY : fmax(err, fabs(got - ref));
            scale = fmax(scale, fabs(ref));
        }
    }
    free(arow);
    return err / (scale > 0 ? scale : 1);
}

/* Sets up, plans and times one nvfp4 dense or decode shape against cuBLASLt
 * fp8 (e4m3, tensor scales) on the same M, N, K, then checks it (FP64 rows:
 * the peer computes another product); r->error says why if it could not.
 * The operands come first (unlike run_dense) so that jg_quantize_nvfp4 runs
 * on every row: while the library has no NVFP4 kernel, planning then fails
 * with JG_ERR_UNSUPPORTED and the row is an error row like any other. */
static void run_nvfp4(bench *b, const shape *s, row *r)
{
    bool peer = b->have_lt && !b->opt.no_peer;
    ours_job job = {.plan = NULL};
    /* the peer's problem: an fp8 row of the same shape, inputs and scales as
     * fp8 rows make them (random e4m3 codes, random tensor scales) */
    shape twin = *s;
    twin.in = JG_E4M3;
    twin.scale = JG_SCALE_TENSOR;
    twin.sf_layout = JG_SF_LAYOUT_NONE;
    operands o, po;
    lt_gemm g;
    row_chain ch;
    memset(&g, 0, sizeof g);
    memset(&o, 0, sizeof o);
    memset(&po, 0, sizeof po);
    memset(&ch, 0, sizeof ch);
    if (!nvfp4_init(&o, b, s, 1) || (peer && !operands_init(&po, &twin, 1, 1)))
        snprintf(r->error, sizeof r->error, "cannot set up the operands (see above)");
    else
        job.plan = plan_row(b, s, &ch.plain.plan, r);
    if (!job.plan) {
        operands_free(&o);
        operands_free(&po);
        return;
    }
    job.args = (jg_gemm_args){.a = o.a, .b = o.b, .d = o.d_ours, .alpha = 1.0f,
                              .a_scale = o.sa, .b_scale = o.sb, .a_sf = o.sfa, .b_sf = o.sfb};
    if (peer)
        dense_peer_init(&g, b, &twin, &po);
    if (chain_init(&ch, b, &o, &po, r))
        time_row(b, &job, &g, &ch, r);
    void *ours = r->error[0] ? NULL : malloc(o.d_bytes);
    if (ours && !CUDA_FAILED(cudaMemcpy(ours, o.d_ours, o.d_bytes, cudaMemcpyDeviceToHost)))
        set_check(r, check_nvfp4_rows(&o, s, ours), false);
    else if (!r->error[0])
        snprintf(r->error, sizeof r->error, "cannot read the outputs back");
    free(ours);
    chain_free(&ch);
    lt_gemm_destroy(&g);
    operands_free(&o);
    operands_free(&po);
}

/* ---- one grouped row (list, contiguous or masked layout) --------------- */

/* Group i of a grouped shape as a dense problem [gm[i], n, k]. */
static shape group_shape(const shape *s, int i)
{
    shape one = {.m = s->gm[i], .n = s->n, .k = s->k, .b_count = 1, .in = s->in, .out = s->out,
                 .scale = s->scale};
    snprintf(one.name, sizeof one.name, "%s", s->name);
    snprintf(one.kind, sizeof one.kind, "%s", s->kind);
    return one;
}

/* Contiguous and masked layouts: the first row of group i in A and D (for
 * i = g, contiguous: the rows of all groups). */
static int64_t group_row0(const shape *s, int i)
{
    if (s->layout == JG_GROUPED_MASKED)
        return i * s->m_max;
    int64_t row = 0;
    for (int j = 0; j < i; ++j)
        row += s->gm[j];
    return row;
}

typedef struct grouped_job {
    jg_plan *plan;
    jg_grouped_args args; /* points at the arrays below */
    /* list: one pointer per group; contiguous, masked: [0], the whole tensor */
    const void *a[JG_GROUPED_MAX_DEVICE_GROUPS], *b[JG_GROUPED_MAX_DEVICE_GROUPS];
    void *d[JG_GROUPED_MAX_DEVICE_GROUPS];
} grouped_job;

static bool grouped_launch(void *arg, cudaStream_t stream)
{
    grouped_job *j = arg;
    return jg_grouped_run(j->plan, &j->args, stream) == JG_OK;
}

/* The first peer: one cuBLASLt matmul per non-empty group, in group order,
 * each with its own best algorithm, timed as a whole. */
typedef struct lt_loop {
    lt_cand best[JG_GROUPED_MAX_DEVICE_GROUPS];
    int n;
} lt_loop;

static bool lt_loop_launch(void *arg, cudaStream_t stream)
{
    lt_loop *l = arg;
    for (int i = 0; i < l->n; ++i)
        if (!lt_launch(&l->best[i], stream))
            return false;
    return true;
}

/* The second peer: one cublasGemmGroupedBatchedEx over the non-empty
 * groups, each a cuBLAS "group" of one problem, mapped as lt_gemm maps a
 * dense problem: cuBLAS's A is our B_g (op T, K x N, lda K), its B our A_g
 * (op N, K x m_g, ldb K), its C = D_g^T (N x m_g, ldc N), m = N, n = m_g.
 * cuBLAS reads the per-group arrays from the host at each call; the pointer
 * arrays must be in device memory, and are uploaded once per shape. */
typedef struct cb_grouped {
    int count; /* problems (= cuBLAS groups): the non-empty groups; 0: no peer */
    cublasOperation_t ta[JG_GROUPED_MAX_DEVICE_GROUPS], tb[JG_GROUPED_MAX_DEVICE_GROUPS];
    int m[JG_GROUPED_MAX_DEVICE_GROUPS], n[JG_GROUPED_MAX_DEVICE_GROUPS],
        k[JG_GROUPED_MAX_DEVICE_GROUPS], size[JG_GROUPED_MAX_DEVICE_GROUPS];
    int lda[JG_GROUPED_MAX_DEVICE_GROUPS], ldb[JG_GROUPED_MAX_DEVICE_GROUPS],
        ldc[JG_GROUPED_MAX_DEVICE_GROUPS];
    float alpha[JG_GROUPED_MAX_DEVICE_GROUPS], beta[JG_GROUPED_MAX_DEVICE_GROUPS];
    void **ptr; /* device: count cuBLAS A (our B_g), count B (our A_g), count C (D_g) */
    cudaDataType_t in, out;
    bench *bench;
} cb_grouped;

static cublasStatus_t cb_grouped_call(cb_grouped *c, cudaStream_t stream)
{
    void **p = c->ptr;
    if (!cb_bind(c->bench, stream))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    return cb.cublasGemmGroupedBatchedEx(
        c->bench->cbh, c->ta, c->tb, c->m, c->n, c->k, c->alpha, (const void *const *)p, c->in,
        c->lda, (const void *const *)(p + c->count), c->in, c->ldb, c->beta, p + 2 * c->count,
        c->out, c->ldc, c->count, c->size, CUBLAS_COMPUTE_32F);
}

static bool cb_grouped_launch(void *arg, cudaStream_t stream)
{
    return cb_grouped_call(arg, stream) == CUBLAS_STATUS_SUCCESS;
}

/* Fills the arrays of `s`'s non-empty groups, whose operands are o[i] (the
 * peer writes o[i].d_peer2); false if a size is beyond int. */
static bool cb_grouped_fill(cb_grouped *c, const shape *s, const operands *o, void **host)
{
    int n = 0;
    for (int i = 0; i < s->g; ++i)
        n += s->gm[i] > 0;
    c->count = 0;
    for (int i = 0; i < s->g; ++i) {
        if (!s->gm[i])
            continue;
        if (s->gm[i] > INT_MAX || s->n > INT_MAX || s->k > INT_MAX)
            return false;
        int j = c->count++;
        c->ta[j] = CUBLAS_OP_T;
        c->tb[j] = CUBLAS_OP_N;
        c->m[j] = (int)s->n;
        c->n[j] = (int)s->gm[i];
        c->k[j] = c->lda[j] = c->ldb[j] = (int)s->k;
        c->ldc[j] = (int)s->n;
        c->size[j] = 1;
        c->alpha[j] = 1.0f;
        c->beta[j] = 0.0f;
        host[j] = o[i].b;
        host[n + j] = o[i].a;
        host[2 * n + j] = o[i].d_peer2;
    }
    return true;
}

/* Sets up the cuBLAS grouped peer of `s` (operands o[i], see cb_grouped_fill)
 * and runs it once, so that a problem cuBLAS does not support costs a note
 * and leaves the peer out (count 0) instead of failing the row. */
static void cb_grouped_init(cb_grouped *c, bench *b, const shape *s, const operands *o)
{
    void *host[3 * JG_GROUPED_MAX_DEVICE_GROUPS];
    size_t bytes;
    cublasStatus_t st = CUBLAS_STATUS_NOT_SUPPORTED;
    memset(c, 0, sizeof *c);
    c->bench = b;
    c->in = dtype_cuda(s->in);
    c->out = dtype_cuda(s->out);
    if (!cb_grouped_fill(c, s, o, host)) {
        fprintf(stderr, "jitgemm-bench: note: %s has sizes beyond int: the cuBLAS grouped peer "
                        "is left out of the row\n", s->name);
        c->count = 0;
        return;
    }
    bytes = 3 * (size_t)c->count * sizeof *host;
    /* The copy and the trial run on the timing stream, then one sync: the
     * host array lives until the copy is done. */
    bool ok = !CUDA_FAILED(cudaMalloc((void **)&c->ptr, bytes)) &&
              !CUDA_FAILED(cudaMemcpyAsync(c->ptr, host, bytes, cudaMemcpyHostToDevice,
                                           b->stream));
    if (ok)
        st = cb_grouped_call(c, b->stream);
    ok = !CUDA_FAILED(cudaStreamSynchronize(b->stream)) && ok;
    if (ok && st != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "jitgemm-bench: note: cublasGemmGroupedBatchedEx cannot run %s (%s x %s "
                        "-> %s): cuBLAS status %d\n", s->name, dtype_name(s->in),
                dtype_name(s->in), dtype_name(s->out), (int)st);
    if (!ok || st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "jitgemm-bench: note: the cuBLAS grouped peer is left out of %s\n",
                s->name);
        c->count = 0;
    }
}

/* Per group: its operands and the peers' GEMMs. List layout: o[i] owns the
 * group's buffers. Contiguous and masked: `whole` owns the single A, B and D
 * tensors and o[i] is a view of group i's valid rows inside them (never
 * freed). Empty groups keep zeroed entries and NULL pointers, which the
 * library ignores. */
typedef struct group_set {
    operands o[JG_GROUPED_MAX_DEVICE_GROUPS];
    operands whole;
    int32_t *rows; /* contiguous: g + 1 row offsets; masked: g counts (device) */
    lt_gemm lt[JG_GROUPED_MAX_DEVICE_GROUPS];
    lt_loop loop;
    cb_grouped cb; /* count 0 where that peer does not run */
    grouped_job job;
    bool peer; /* cuBLASLt has algorithms for every non-empty group */
} group_set;

/* Plans a grouped shape, as one plan of its layout (the rows per group are
 * the list's sizes, or the other layouts' tile-sizing hints); see plan_done. */
static jg_plan *plan_grouped(bench *b, const shape *s, row *r)
{
    jg_grouped_problem p = {.layout = s->layout, .a_type = s->in, .b_type = s->in,
                            .d_type = s->out,
                            .groups = s->g, .m = s->gm, .n = s->n, .k = s->k,
                            .m_max = s->m_max};
    jg_plan *plan = NULL;
    double t0 = now_ms();
    jg_status st = jg_grouped_plan(b->jg, &p, &plan);
    return plan_done(b, st, plan, t0, r);
}

/* List layout: random normal A_g and B_g (seeds differing per group and per
 * spec seed) and every D_g (ours, `peers` peers') of every non-empty group,
 * each its own buffers. */
static bool grouped_alloc_list(group_set *gs, const shape *s, int peers)
{
    for (int i = 0; i < s->g; ++i) {
        shape one = group_shape(s, i);
        uint64_t seed = 2 * ((uint64_t)s->seed * JG_GROUPED_MAX_GROUPS + (uint64_t)i) + 1;
        if (s->gm[i] && !operands_init(&gs->o[i], &one, peers, seed))
            return false;
    }
    return true;
}

/* Group i's valid rows inside the whole tensors: A and D from row
 * group_row0, B_i the i-th [n, k] slice; host copies likewise. */
static operands group_view(const operands *w, const shape *s, int i, jg_dtype in, jg_dtype out)
{
    size_t row0 = (size_t)group_row0(s, i), m = (size_t)s->gm[i];
    size_t n = (size_t)s->n, k = (size_t)s->k, si = dtype_size(in), so = dtype_size(out);
    size_t ea = row0 * k, eb = (size_t)i * n * k, ed = row0 * n; /* element offsets */
    return (operands){.ha = (char *)w->ha + ea * si, .hb = (char *)w->hb + eb * si,
                      .a = (char *)w->a + ea * si, .b = (char *)w->b + eb * si,
                      .d_ours = (char *)w->d_ours + ed * so,
                      .d_peer = w->d_peer ? (char *)w->d_peer + ed * so : NULL,
                      .d_peer2 = w->d_peer2 ? (char *)w->d_peer2 + ed * so : NULL,
                      .a_bytes = m * k * si, .b_bytes = n * k * si, .d_bytes = m * n * so};
}

/* The device rows array of a contiguous (offsets) or masked (counts) shape,
 * uploaded once. */
static bool upload_rows(group_set *gs, const shape *s)
{
    int32_t host[JG_GROUPED_MAX_DEVICE_GROUPS + 1];
    bool contiguous = s->layout == JG_GROUPED_CONTIGUOUS;
    int n = contiguous ? s->g + 1 : s->g;
    for (int i = 0; i < n; ++i)
        host[i] = (int32_t)(contiguous ? group_row0(s, i) : s->gm[i]);
    void *dev = NULL;
    bool ok = !CUDA_FAILED(cudaMalloc(&dev, (size_t)n * sizeof *host));
    gs->rows = dev;
    return ok && !CUDA_FAILED(cudaMemcpy(dev, host, (size_t)n * sizeof *host,
                                         cudaMemcpyHostToDevice));
}

/* Contiguous and masked layouts: one random normal A ([m, k] or
 * [g, m_max, k]) and B ([g, n, k]), every D ([m, n] or [g, m_max, n]: ours
 * and `peers` peers'), the rows array, and a view of each non-empty group. */
static bool grouped_alloc_whole(group_set *gs, const shape *s, int peers)
{
    jg_dtype in = s->in, out = s->out;
    size_t rows = (size_t)group_row0(s, s->g), n = (size_t)s->n, k = (size_t)s->k;
    uint64_t seed = 2 * (uint64_t)s->seed * JG_GROUPED_MAX_GROUPS + 1;
    if (!upload_rows(gs, s) ||
        !operands_alloc(&gs->whole, s->name, rows * k, (size_t)s->g * n * k, rows * n, in, out,
                        peers, seed)) /* ends with a device sync: the rows are there too */
        return false;
    for (int i = 0; i < s->g; ++i)
        if (s->gm[i])
            gs->o[i] = group_view(&gs->whole, s, i, in, out);
    return true;
}

/* The operands of the shape's layout, our launch's arguments, and, with
 * `peer`, the cuBLASLt GEMM of every non-empty group (pointed at that
 * group's rows) and cuBLAS grouped where it loaded; false (reported) if the
 * operands cannot be made. */
static bool grouped_init(group_set *gs, bench *b, const shape *s, bool peer)
{
    bool list = s->layout == JG_GROUPED_LIST;
    int peers = peer ? 1 + b->have_cb : 0; /* D buffers besides ours */
    if (!(list ? grouped_alloc_list(gs, s, peers) : grouped_alloc_whole(gs, s, peers)))
        return false;
    gs->peer = peer;
    for (int i = 0; i < s->g; ++i) {
        if (!s->gm[i])
            continue;
        shape one = group_shape(s, i);
        gs->peer = gs->peer && lt_gemm_init(&gs->lt[i], b, &one, NULL, "its columns stay empty");
        gs->lt[i].a = gs->o[i].a;
        gs->lt[i].b = gs->o[i].b;
        gs->lt[i].d = gs->o[i].d_peer;
    }
    for (int i = 0; i < (list ? s->g : 1); ++i) {
        const operands *o = list ? &gs->o[i] : &gs->whole;
        gs->job.a[i] = o->a;
        gs->job.b[i] = o->b;
        gs->job.d[i] = o->d_ours;
    }
    gs->job.args = (jg_grouped_args){.a = gs->job.a, .b = gs->job.b, .d = gs->job.d,
                                     .alpha = 1.0f, .rows = gs->rows};
    if (peers == 2)
        cb_grouped_init(&gs->cb, b, s, gs->o);
    return true;
}

/* Frees what grouped_init made (also after it failed half-way). */
static void grouped_free(group_set *gs, const shape *s)
{
    for (int i = 0; i < s->g; ++i) {
        lt_gemm_destroy(&gs->lt[i]);
        if (s->layout == JG_GROUPED_LIST)
            operands_free(&gs->o[i]); /* else a view into `whole` */
    }
    operands_free(&gs->whole);
    cudaFree(gs->rows);
    cudaFree(gs->cb.ptr);
    free(gs);
}

/* Chooses each non-empty group's algorithm as a dense row does (lt_pick)
 * and builds the loop; false if a group has none that runs. */
static bool grouped_pick(group_set *gs, const shape *s, row *r)
{
    gs->loop.n = 0;
    for (int i = 0; i < s->g; ++i) {
        r->group_algo[i] = -1;
        if (!s->gm[i])
            continue;
        if (!lt_pick(&gs->lt[i], &gs->loop.best[gs->loop.n]))
            return false;
        r->group_algo[i] = gs->loop.best[gs->loop.n++].algo;
    }
    return true;
}

/* Times our one launch, the cuBLASLt loop and cuBLAS grouped (those that
 * run) in alternation, as time_row does for a dense row; each peer's time
 * goes into its own column of the row. */
static void time_grouped(bench *b, group_set *gs, const shape *s, row *r)
{
    timed t[MAX_TIMED] = {{grouped_launch, &gs->job}};
    double us[MAX_TIMED];
    int n = 1, lt_at = 0, cb_at = 0; /* their places in t; 0: not timed */
    if (gs->peer) {
        if (!grouped_pick(gs, s, r)) {
            snprintf(r->error, sizeof r->error, "cuBLASLt failed (see above)");
            return;
        }
        lt_at = n;
        t[n++] = (timed){lt_loop_launch, &gs->loop};
    }
    if (gs->cb.count) {
        cb_at = n;
        t[n++] = (timed){cb_grouped_launch, &gs->cb};
    }
    int bad = time_with_peers(b, t, n, 1, r, us);
    if (bad > 0)
        snprintf(r->error, sizeof r->error, "%s failed to launch",
                 bad == lt_at ? "the cuBLASLt loop" : "cuBLAS grouped");
    else if (bad < 0) {
        r->lt_loop_us = lt_at ? us[lt_at] : NAN;
        r->grouped_us = cb_at ? us[cb_at] : NAN;
    }
}

/* Checks every non-empty group as a dense row is checked (o[i]: its m_g
 * valid rows, whatever the layout): ours against the cuBLASLt loop (else
 * FP64 rows), and cuBLAS grouped against the cuBLASLt loop (else ours). The
 * row gets the worst difference of each. False if an output cannot be read
 * back. */
static bool check_grouped(const group_set *gs, const shape *s, row *r)
{
    bool lt = isfinite(r->lt_loop_us), cb = isfinite(r->grouped_us);
    double worst = 0, worst_cb = 0, diff;
    for (int i = 0; i < s->g; ++i) {
        const operands *o = &gs->o[i];
        if (!s->gm[i])
            continue;
        shape one = group_shape(s, i);
        if (!check_output(o, &one, lt, &diff))
            return false;
        if (!(diff <= worst)) /* keeps a NaN */
            worst = diff;
        if (cb && !diff_device(o->d_peer2, lt ? o->d_peer : o->d_ours, o->d_bytes, s->out,
                               &diff))
            return false;
        if (cb && !(diff <= worst_cb))
            worst_cb = diff;
    }
    set_check(r, worst, lt);
    r->grouped_diff = cb ? worst_cb : NAN;
    return true;
}

/* The row's peer: the faster of the cuBLASLt loop and cuBLAS grouped, the
 * latter only if its output agreed (a warning says so when it did not). */
static void pick_grouped_peer(row *r)
{
    bool cb = isfinite(r->grouped_us) && r->grouped_diff <= PEER_TOL;
    if (isfinite(r->grouped_us) && !cb)
        fprintf(stderr, "jitgemm-bench: WARNING: %s: cuBLAS grouped differs from the %s by "
                        "%.2e (max rel diff; more than bf16 rounding, %.0e): not used as the "
                        "row's peer\n", r->s->name,
                isfinite(r->lt_loop_us) ? "cuBLASLt loop" : "libjitgemm output",
                r->grouped_diff, PEER_TOL);
    if (cb && !(r->lt_loop_us <= r->grouped_us)) {
        r->peer = "cuBLAS grouped";
        r->peer_us = r->grouped_us;
    } else if (isfinite(r->lt_loop_us)) {
        r->peer = "cuBLASLt loop";
        r->peer_us = r->lt_loop_us;
    }
}

/* Plans, sets up, times and checks one grouped shape; r->error says why if
 * it could not. */
static void run_grouped(bench *b, const shape *s, row *r)
{
    group_set *gs = calloc(1, sizeof *gs);
    if (!gs) {
        snprintf(r->error, sizeof r->error, "out of host memory");
        return;
    }
    gs->job.plan = plan_grouped(b, s, r); /* r->error says why if NULL */
    if (gs->job.plan && !grouped_init(gs, b, s, b->have_lt && !b->opt.no_peer))
        snprintf(r->error, sizeof r->error, "cannot set up the operands (see above)");
    else if (gs->job.plan) {
        time_grouped(b, gs, s, r);
        if (!r->error[0] && !check_grouped(gs, s, r))
            snprintf(r->error, sizeof r->error, "cannot read the outputs back");
        else if (!r->error[0])
            pick_grouped_peer(r);
    }
    grouped_free(gs, s);
}

/* One row of the table, whatever the kind. */
static void run_shape(bench *b, const shape *s, row *r)
{
    *r = (row){.s = s, .ours_us = NAN, .peer_us = NAN, .ours_plain_us = NAN, .lt_loop_us = NAN,
               .grouped_us = NAN, .grouped_diff = NAN, .peer_algo = -1, .rel_diff = NAN,
               .chain_b_bytes = chain_b_bytes(s, b->opt.chain)};
    if (s->g)
        run_grouped(b, s, r);
    else if (s->in == JG_NVFP4)
        run_nvfp4(b, s, r);
    else
        run_dense(b, s, r);
}

/* ---- metrics, printing, JSON ------------------------------------------- */

typedef struct metrics {
    double ratio, tflops, gbs, sol; /* NAN when unknown */
} metrics;

static metrics row_metrics(const bench *b, const row *r)
{
    const shape *s = r->s; /* grouped: m is the rows of all groups, b_count their B */
    double flops = 2.0 * s->m * s->n * s->k;
    size_t na, nb; /* e4m3: the scales are read too */
    scale_counts(s->scale, s->m, s->n, s->k, &na, &nb);
    double bytes = (double)dtype_size(s->in) * (s->m * s->k + s->b_count * s->n * s->k) +
                   (double)dtype_size(s->out) * s->m * s->n + 4.0 * (double)(na + nb);
    if (s->in == JG_NVFP4) /* 4.5 bits an element: K/2 bytes a row + an e4m3 per 16 */
        bytes = (s->m + s->b_count * s->n) * (s->k / 2.0 + s->k / 16.0) +
                (double)dtype_size(s->out) * s->m * s->n;
    double t = r->ours_us * 1e-6;
    double peak = s->in == JG_E4M3 || s->in == JG_NVFP4 ? b->fp8_peak_tflops : b->peak_tflops;
    /* Both ceilings or none: fmax would silently drop a NAN peak. */
    double sol_t = isfinite(peak) ? fmax(flops / (peak * 1e12), bytes / (b->copy_gbs * 1e9))
                                  : NAN;
    return (metrics){.ratio = r->peer_us / r->ours_us, .tflops = flops / t / 1e12,
                     .gbs = bytes / t / 1e9, .sol = sol_t / t};
}

/* The column titles; under --chain, "plain us" (ours without PDL) after
 * "ours us". */
static void print_table_header(const bench *b)
{
    printf("\n%-24s %6s %6s %6s %8s %5s %9s", "name", "M", "N", "K", "plan ms", "from",
           "ours us");
    if (b->opt.chain)
        printf(" %9s", "plain us");
    printf(" %9s %6s %7s %7s %5s %5s  %-14s  %s\n", "cuBLAS us", "ratio", "TFLOP/s", "GB/s",
           "SoL", "MHz", "peer", "kernel");
}

/* A number, or "-" where it is unknown. */
static void print_num(int width, int prec, double v)
{
    if (isfinite(v))
        printf(" %*.*f", width, prec, v);
    else
        printf(" %*s", width, "-");
}

static void print_row(const bench *b, const row *r)
{
    const shape *s = r->s;
    printf("%-24s %6lld %6lld %6lld", s->name, (long long)s->m, (long long)s->n,
           (long long)s->k);
    if (!r->origin) {
        printf("  ERROR %s\n", r->error);
        return;
    }
    metrics m = row_metrics(b, r);
    print_num(8, 1, r->plan_ms);
    printf(" %5s", r->origin);
    print_num(9, 1, r->ours_us);
    if (b->opt.chain)
        print_num(9, 1, r->ours_plain_us);
    print_num(9, 1, r->peer_us);
    print_num(6, 2, m.ratio);
    print_num(7, 1, m.tflops);
    print_num(7, 0, m.gbs);
    print_num(5, 2, m.sol);
    print_num(5, 0, clock_mean(&r->clock));
    printf("%s", r->clock.reasons & NVML_REASON_SW_POWER_CAP ? "p" : " ");
    printf(" %-14s  %s", r->peer ? r->peer : "-", r->kernel);
    if (r->error[0])
        printf("  ERROR %s", r->error);
    else if (r->mismatch)
        printf("  MISMATCH (max rel diff %.2e, %s)", r->rel_diff, r->check);
    if (!r->error[0] && isfinite(r->grouped_us) && !(r->grouped_diff <= PEER_TOL))
        printf("  (cuBLAS grouped differs: %.2e, not the peer)", r->grouped_diff);
    /* Each copy is read once a chain: only what the chain before left can
     * be in L2, which the flush (not --flush none) empties. */
    if (!r->error[0] && r->chain_b_bytes && (size_t)r->chain_b_bytes < 2 * b->l2_bytes)
        printf("  WARNING chain B %.0f MiB < 2x L2%s", (double)r->chain_b_bytes / (1 << 20),
               b->opt.flush == FLUSH_NONE ? ": B partly read from L2" : "");
    printf("\n");
}

/* A JSON number, or null for NAN and infinities (which JSON lacks). */
static json_t *json_num(double v) { return isfinite(v) ? json_real(v) : json_null(); }

/* {"mean_mhz", "min_mhz", "samples", "reasons": [...]}: the SM clock sampled
 * while launches ran, with NVML's clock-event reasons by name; null when
 * not sampled. */
static json_t *clock_json(const clock_stats *c)
{
    static const struct {
        unsigned long long bit;
        const char *name;
    } reasons[] = {{NVML_REASON_SW_POWER_CAP, "sw_power_cap"},
                   {NVML_REASON_HW_SLOWDOWN, "hw_slowdown"},
                   {NVML_REASON_SW_THERMAL, "sw_thermal"},
                   {NVML_REASON_HW_THERMAL, "hw_thermal"},
                   {NVML_REASON_HW_POWER_BRAKE, "hw_power_brake"}};
    if (!c->n)
        return json_null();
    json_t *o = json_object(), *why = json_array();
    json_object_set_new(o, "mean_mhz", json_real(clock_mean(c)));
    json_object_set_new(o, "min_mhz", json_integer(c->min_mhz));
    json_object_set_new(o, "samples", json_integer(c->n));
    for (size_t i = 0; i < sizeof reasons / sizeof reasons[0]; ++i)
        if (c->reasons & reasons[i].bit)
            json_array_append_new(why, json_string(reasons[i].name));
    json_object_set_new(o, "reasons", why);
    return o;
}

/* A grouped row's "layout", "groups", "m" (rows per group, a list) and
 * "m_max" (null for the list layout). */
static void row_json_grouped(const row *r, json_t *o)
{
    json_t *m = json_array();
    for (int i = 0; i < r->s->g; ++i)
        json_array_append_new(m, json_integer(r->s->gm[i]));
    json_object_set_new(o, "layout", json_string(layout_name(r->s->layout)));
    json_object_set_new(o, "groups", json_integer(r->s->g));
    json_object_set_new(o, "m", m);
    json_object_set_new(o, "m_max", r->s->m_max ? json_integer(r->s->m_max) : json_null());
}

/* "cublas_algo": the chosen heuristic result, for a grouped row a list of
 * one per group of the cuBLASLt loop (null for empty groups); null without
 * cuBLASLt. */
static json_t *algo_json(const row *r)
{
    if (r->s->g ? !isfinite(r->lt_loop_us) : !r->peer)
        return json_null();
    if (!r->s->g)
        return json_integer(r->peer_algo);
    json_t *algo = json_array();
    for (int i = 0; i < r->s->g; ++i)
        json_array_append_new(algo, r->group_algo[i] >= 0 ? json_integer(r->group_algo[i])
                                                          : json_null());
    return algo;
}

static json_t *row_json(const bench *b, const row *r)
{
    metrics m = r->origin ? row_metrics(b, r) : (metrics){NAN, NAN, NAN, NAN};
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(r->s->name));
    json_object_set_new(o, "kind", json_string(r->s->kind));
    if (r->s->g)
        row_json_grouped(r, o);
    else
        json_object_set_new(o, "m", json_integer(r->s->m));
    json_object_set_new(o, "n", json_integer(r->s->n));
    json_object_set_new(o, "k", json_integer(r->s->k));
    json_object_set_new(o, "dtype", json_string(dtype_name(r->s->in)));
    json_object_set_new(o, "out_dtype", json_string(dtype_name(r->s->out)));
    json_object_set_new(o, "scale", r->s->scale ? json_string(scale_name(r->s->scale))
                                                : json_null());
    json_object_set_new(o, "sf_layout", r->s->sf_layout
                                            ? json_string(sf_layout_name(r->s->sf_layout))
                                            : json_null());
    json_object_set_new(o, "plan_ms", json_num(r->origin ? r->plan_ms : NAN));
    json_object_set_new(o, "origin", r->origin ? json_string(r->origin) : json_null());
    json_object_set_new(o, "kernel", r->kernel[0] ? json_string(r->kernel) : json_null());
    json_object_set_new(o, "ours_us", json_num(r->ours_us));
    json_object_set_new(o, "ours_plain_us", json_num(r->ours_plain_us));
    json_object_set_new(o, "chain_b_bytes", r->chain_b_bytes ? json_integer(r->chain_b_bytes)
                                                             : json_null());
    json_object_set_new(o, "cublas_us", json_num(r->peer_us));
    json_object_set_new(o, "peer", r->peer ? json_string(r->peer) : json_null());
    if (r->s->g) { /* each peer's time; cublas_us is the faster (that agreed) */
        json_t *peers = json_object();
        json_object_set_new(peers, "cublaslt_loop", json_num(r->lt_loop_us));
        json_object_set_new(peers, "cublas_grouped", json_num(r->grouped_us));
        json_object_set_new(o, "peers", peers);
        json_object_set_new(o, "cublas_grouped_rel_diff", json_num(r->grouped_diff));
    }
    json_object_set_new(o, "cublas_algo", algo_json(r));
    json_object_set_new(o, "ratio", json_num(m.ratio));
    json_object_set_new(o, "tflops", json_num(m.tflops));
    json_object_set_new(o, "gbs", json_num(m.gbs));
    json_object_set_new(o, "sol_fraction", json_num(m.sol));
    json_object_set_new(o, "sm_clock", clock_json(&r->clock));
    json_object_set_new(o, "check", r->check ? json_string(r->check) : json_null());
    json_object_set_new(o, "rel_diff", json_num(r->rel_diff));
    json_object_set_new(o, "mismatch", json_boolean(r->mismatch));
    json_object_set_new(o, "error", r->error[0] ? json_string(r->error) : json_null());
    return o;
}

/* The geomean group of a row: its kind ("dense"), and for e4m3 its type
 * and scales too ("dense_e4m3_tensor"): ratios of different types are not
 * averaged together. */
static const char *row_group(const row *r, char *buf, size_t n)
{
    if (r->s->in == JG_E4M3)
        snprintf(buf, n, "%s_e4m3_%s", r->s->kind, scale_name(r->s->scale));
    else if (r->s->in == JG_NVFP4)
        snprintf(buf, n, "%s_nvfp4", r->s->kind);
    else
        snprintf(buf, n, "%s", r->s->kind);
    return buf;
}

/* Geometric mean of the ratio per group (row_group), in order of first
 * appearance, over the rows that ran and matched and whose peer computed
 * the same product (not "cuBLASLt fp8 (tensor scales)"); printed, and
 * stored in `out` (a JSON object) when not NULL. */
static void geomean_by_kind(const bench *b, const row *rows, size_t n, json_t *out)
{
    char gi[64], gj[64];
    for (size_t i = 0; i < n; ++i) {
        bool first = true;
        row_group(&rows[i], gi, sizeof gi);
        for (size_t j = 0; j < i && first; ++j)
            first = strcmp(row_group(&rows[j], gj, sizeof gj), gi) != 0;
        if (!first)
            continue;
        double sum = 0;
        int count = 0;
        for (size_t j = i; j < n; ++j) {
            double ratio = row_metrics(b, &rows[j]).ratio;
            if (!strcmp(row_group(&rows[j], gj, sizeof gj), gi) && rows[j].origin &&
                !rows[j].error[0] && !rows[j].mismatch && !rows[j].peer_other_scales &&
                isfinite(ratio) && ratio > 0) {
                sum += log(ratio);
                ++count;
            }
        }
        double g = count ? exp(sum / count) : NAN;
        if (count)
            printf("geomean ratio (cuBLAS us / ours us), %-8s %.3f over %d shape(s)\n", gi, g,
                   count);
        else
            printf("geomean ratio (cuBLAS us / ours us), %-8s - (no row with both times)\n",
                   gi);
        if (out)
            json_object_set_new(out, gi, json_num(g));
    }
}

/* ---- setup ------------------------------------------------------------- */

typedef struct device_info {
    char name[256];
    int major, minor, sms, clock_mhz, l2_bytes, driver, runtime;
    char date[32]; /* ISO 8601, UTC */
} device_info;

static bool device_info_get(device_info *d)
{
    struct cudaDeviceProp prop;
    memset(d, 0, sizeof *d);
    if (CUDA_FAILED(cudaGetDeviceProperties(&prop, 0)))
        return false;
    snprintf(d->name, sizeof d->name, "%s", prop.name);
    cudaDeviceGetAttribute(&d->major, cudaDevAttrComputeCapabilityMajor, 0);
    cudaDeviceGetAttribute(&d->minor, cudaDevAttrComputeCapabilityMinor, 0);
    cudaDeviceGetAttribute(&d->sms, cudaDevAttrMultiProcessorCount, 0);
    cudaDeviceGetAttribute(&d->l2_bytes, cudaDevAttrL2CacheSize, 0);
    int khz = 0; /* the peak (boost) SM clock; 0 where the runtime does not say */
    if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0) == cudaSuccess)
        d->clock_mhz = khz / 1000;
    cudaDriverGetVersion(&d->driver);
    cudaRuntimeGetVersion(&d->runtime);
    cudaGetLastError(); /* an attribute this runtime lacks is not an error here */
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(d->date, sizeof d->date, "%Y-%m-%dT%H:%M:%SZ", &tm);
    return true;
}

/* Streams, events, the flush, our context, cuBLASLt and, for `grouped`
 * rows with peers, cuBLAS (its absence is only a note). */
static bool bench_init(bench *b, const device_info *d, bool grouped)
{
    /* Room for MAX_TIMED implementations interleaved, or MAX_ALGOS x PICK_REPS. */
    b->nevents = MAX_TIMED * (b->opt.reps > COPY_REPS ? b->opt.reps : COPY_REPS);
    b->start = calloc((size_t)b->nevents, sizeof *b->start);
    b->stop = calloc((size_t)b->nevents, sizeof *b->stop);
    /* Flushing must evict everything: at least 256 MiB and 4x the L2. */
    b->flush_bytes = FLUSH_BYTES;
    b->l2_bytes = (size_t)d->l2_bytes;
    if ((size_t)d->l2_bytes * 4 > b->flush_bytes)
        b->flush_bytes = (size_t)d->l2_bytes * 4;
    /* Zeroed once, so that the read-only flush reads defined data; the
     * timing stream (non-blocking) does not wait for the legacy stream. */
    if (!b->start || !b->stop ||
        CUDA_FAILED(cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking)) ||
        CUDA_FAILED(cudaMalloc(&b->flush, b->flush_bytes)) ||
        CUDA_FAILED(cudaMemset(b->flush, 0, b->flush_bytes)) ||
        CUDA_FAILED(cudaDeviceSynchronize()) ||
        (!flush_load(b, d->major, d->minor, d->sms) && b->opt.flush == FLUSH_READ))
        return false;
    for (int i = 0; i < b->nevents; ++i)
        if (CUDA_FAILED(cudaEventCreate(&b->start[i])) ||
            CUDA_FAILED(cudaEventCreate(&b->stop[i])))
            return false;
    if (b->opt.tune)
        setenv("JITGEMM_TUNE", "1", 1); /* read when the context is made */
    if (jg_context_create(NULL, &b->jg) != JG_OK) {
        fprintf(stderr, "jitgemm-bench: jg_context_create: %s\n", jg_context_last_error(NULL));
        return false;
    }
    nvml_open(b);
    b->have_lt = lt_load() && !LT_FAILED(lt.cublasLtCreate(&b->lth)) &&
                 !CUDA_FAILED(cudaMalloc(&b->workspace, WORKSPACE_BYTES));
    if (!b->have_lt && !b->opt.no_peer) {
        fprintf(stderr, "jitgemm-bench: cuBLASLt is needed as the peer (or pass --no-peer)\n");
        return false;
    }
    b->grouped = grouped;
    if (grouped && !b->opt.no_peer && cb_load()) {
        if (LT_FAILED(cb.cublasCreate_v2(&b->cbh)))
            b->cbh = NULL;
        b->have_cb = b->cbh && cb_bind(b, b->stream);
        if (!b->have_cb)
            fprintf(stderr, "jitgemm-bench: note: the cuBLAS grouped peer is skipped\n");
    }
    return true;
}

static void bench_destroy(bench *b)
{
    if (b->lth)
        lt.cublasLtDestroy(b->lth);
    if (b->cbh)
        cb.cublasDestroy_v2(b->cbh);
    cudaFree(b->workspace);
    jg_context_destroy(b->jg);
    for (int i = 0; i < b->nevents; ++i) {
        if (b->start && b->start[i])
            cudaEventDestroy(b->start[i]);
        if (b->stop && b->stop[i])
            cudaEventDestroy(b->stop[i]);
    }
    free(b->start);
    free(b->stop);
    cudaFree(b->flush);
    cudaFree(b->flush_sink);
    if (b->flush_lib)
        cudaLibraryUnload(b->flush_lib);
    if (b->stream)
        cudaStreamDestroy(b->stream);
}

/* The ceilings, once per run, before any row: the copy bandwidth, and the
 * bf16 and fp8 matmul peaks where the run has rows of those types. Without
 * the fp8 peak (a cuBLASLt without FP8: a note) fp8 rows have no SoL. */
static bool measure_ceilings(bench *b)
{
    b->copy_gbs = measure_copy_gbs(b);
    b->floor_us = measure_floor_us(b, 0);
    if (cudaDeviceGetAttribute(&b->floor_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0) !=
        cudaSuccess)
        b->floor_smem = 0;
    b->floor_smem_us = b->floor_smem > 0 ? measure_floor_us(b, b->floor_smem) : NAN;
    b->peak_tflops = b->have_lt && b->rows16
                         ? measure_peak_tflops(b, JG_BF16, &b->peak_algo, &b->peak_clock)
                         : NAN;
    b->fp8_peak_tflops = b->have_lt && b->rows8
                             ? measure_peak_tflops(b, JG_E4M3, &b->fp8_peak_algo,
                                                   &b->fp8_peak_clock)
                             : NAN;
    if (!(b->copy_gbs > 0) || (b->have_lt && b->rows16 && !(b->peak_tflops > 0))) {
        fprintf(stderr, "jitgemm-bench: cannot measure the ceilings (see above)\n");
        return false;
    }
    if (b->have_lt && b->rows8 && !(b->fp8_peak_tflops > 0)) {
        fprintf(stderr, "jitgemm-bench: note: no fp8 matmul peak (see above): the SoL of fp8 "
                        "and nvfp4 rows stays empty\n");
        b->fp8_peak_tflops = NAN;
    }
    return true;
}

/* One "types" line per distinct combination of types and scales among the
 * rows, in order of first appearance. */
static void print_types(const shape_list *l)
{
    bool printed = false;
    char what[96];
    for (size_t i = 0; i < l->n; ++i) {
        const shape *s = &l->v[i];
        bool first = true;
        for (size_t j = 0; j < i && first; ++j)
            first = l->v[j].in != s->in || l->v[j].out != s->out || l->v[j].scale != s->scale ||
                    l->v[j].sf_layout != s->sf_layout;
        if (!first)
            continue;
        if (s->in == JG_NVFP4) {
            printf("%-15snvfp4 x nvfp4 -> %s (e2m1, e4m3 scale per 16 of K in the %s layout, "
                   "fp32 global scales),\n%-15sfp32 accumulate; peer: cuBLASLt e4m3 x e4m3 -> "
                   "%s, tensor scales\n", printed ? "" : "types", dtype_name(s->out),
                   sf_layout_name(s->sf_layout), "", dtype_name(s->out));
            printed = true;
            continue;
        }
        printf("%-15s%s, fp32 accumulate%s\n", printed ? "" : "types",
               types_text(what, sizeof what, s->in, s->out, s->scale),
               s->in == JG_E4M3 ? " (promoted every 128 of K; cuBLASLt: no fast accumulation)"
                                : "");
        printed = true;
    }
}

/* What --chain times: the chains, their B (the range over the rows: each
 * row's JSON has its own) against the L2, and what each time column is. */
static void print_chain(const bench *b, const device_info *d, const shape_list *shapes)
{
    int n = b->opt.chain;
    int64_t lo = INT64_MAX, hi = 0;
    for (size_t i = 0; i < shapes->n; ++i) {
        int64_t bytes = chain_b_bytes(&shapes->v[i], n);
        lo = bytes && bytes < lo ? bytes : lo;
        hi = bytes > hi ? bytes : hi;
    }
    if (!hi) {
        printf("chain          --chain %d: no dense or decode row (grouped rows are not "
               "chained)\n", n);
        return;
    }
    printf("chain          of %d GEMMs, per-GEMM times, B rotated through %d copies (", n, n);
    if (lo < hi)
        printf("%.0f-", (double)lo / (1 << 20));
    printf("%.0f MiB, L2 %d MiB)\n"
           "               medians of chain time / %d; the flush (above) before each chain, "
           "none between its GEMMs;\n"
           "               ours us: ours with PDL (JG_GEMM_PDL), plain us: ours "
           "without, cuBLASLt without PDL;\n"
           "               grouped rows are not chained%s\n",
           (double)hi / (1 << 20), d->l2_bytes >> 20, n,
           (size_t)lo < 2 * b->l2_bytes ? "; rows whose chain B is under 2x the L2 are marked"
                                        : "");
}

static void print_header(const bench *b, const device_info *d, const shape_list *shapes)
{
    printf("jitgemm-bench, libjitgemm %s\n", jg_version());
    printf("device         %s (sm_%d%d, %d SMs, L2 %d MiB), SM clock ", d->name, d->major,
           d->minor, d->sms, d->l2_bytes >> 20);
    if (d->clock_mhz)
        printf("%d MHz", d->clock_mhz);
    else
        printf("n/a");
    printf(", driver %d.%d, runtime %d.%d\n", d->driver / 1000, d->driver % 1000 / 10,
           d->runtime / 1000, d->runtime % 1000 / 10);
    printf("date           %s\n", d->date);
    print_types(shapes);
    printf("timing         median of %d launches, ours and cuBLAS alternating after >= %.0f ms "
           "of warm-up,\n", b->opt.reps, WARM_MS);
    if (b->opt.flush == FLUSH_READ)
        printf("               L2 flushed before each by a read-only pass over %zu MiB (leaves "
               "only clean lines)\n", b->flush_bytes >> 20);
    else if (b->opt.flush == FLUSH_MEMSET)
        printf("               L2 flushed before each by a %zu MiB memset (--flush memset: "
               "leaves dirty lines\n               that the timed kernel writes back)\n",
               b->flush_bytes >> 20);
    else
        printf("               L2 not flushed (--flush none): each launch finds what the "
               "launches before left\n");
    if (b->opt.chain)
        print_chain(b, d, shapes);
    if (b->opt.no_peer)
        printf("peer           none (--no-peer): rows checked on 3 sampled rows against FP64\n");
    else if (b->grouped)
        printf("peers          cuBLASLt; grouped rows: %s\n",
               b->have_cb ? "the faster of a cuBLASLt loop and cuBLAS grouped "
                            "(cublasGemmGroupedBatchedEx)"
                          : "a cuBLASLt loop (no cuBLAS grouped: see the note above)");
    printf("measuring the ceilings...\n");
    fflush(stdout);
}

/* ", SM clock X MHz (min Y, software power cap)" and the line's end. */
static void print_clock(const clock_stats *c)
{
    if (c->n)
        printf(", SM clock %.0f MHz (min %u%s)", clock_mean(c), c->min_mhz,
               c->reasons & NVML_REASON_SW_POWER_CAP ? ", software power cap" : "");
    printf("\n");
}

/* How many rows ran with NVML reporting the software power cap, and
 * their clocks' range: the absolute times of such rows are a capped card's
 * (ours and the peers' alike: their launches alternate). */
static void print_clock_summary(const bench *b, const row *rows, size_t n)
{
    if (!b->nvml.dev) {
        printf("SM clock       not sampled (no NVML): the MHz column is empty\n");
        return;
    }
    size_t sampled = 0, capped = 0;
    double lo = INFINITY, hi = 0;
    for (size_t i = 0; i < n; ++i) {
        const clock_stats *c = &rows[i].clock;
        if (!c->n)
            continue;
        ++sampled;
        capped += (c->reasons & NVML_REASON_SW_POWER_CAP) != 0;
        lo = fmin(lo, clock_mean(c));
        hi = fmax(hi, clock_mean(c));
    }
    if (sampled)
        printf("SM clock       %.0f-%.0f MHz (row means, sampled every %d ms by NVML while each "
               "row's launches ran); %zu of %zu row(s) under the software power cap (\"p\")\n",
               lo, hi, CLOCK_POLL_NS / 1000000, capped, sampled);
}

static void print_ceilings(const bench *b)
{
    printf("copy bandwidth %.0f GB/s (1 GiB device-to-device copy, read + write, median of %d)\n",
           b->copy_gbs, COPY_REPS);
    if (isfinite(b->floor_us))
        printf("launch floor   %.1f us, %.1f us with %d bytes of shared memory per CTA (an empty "
               "kernel, %u CTAs of %d threads, flushed and timed as the rows, median of %d)\n",
               b->floor_us, b->floor_smem_us, b->floor_smem, b->flush_blocks / FLUSH_BLOCKS_PER_SM,
               FLOOR_THREADS, b->opt.reps);
    if (!b->have_lt)
        printf("matmul peak    n/a (no cuBLASLt): SoL column left empty\n");
    if (b->have_lt && b->rows16) {
        printf("matmul peak    %.1f TFLOP/s (cuBLASLt bf16 %d^3, heuristic algorithm %d, "
               "median of %d)", b->peak_tflops, PEAK_DIM, b->peak_algo, b->opt.reps);
        print_clock(&b->peak_clock);
    }
    if (b->have_lt && b->rows8 && isfinite(b->fp8_peak_tflops)) {
        printf("fp8 peak       %.1f TFLOP/s (cuBLASLt e4m3 x e4m3 -> bf16, tensor scales, %d^3, "
               "heuristic algorithm %d, median of %d): fp8 and nvfp4 rows' SoL", b->fp8_peak_tflops,
               PEAK_DIM, b->fp8_peak_algo, b->opt.reps);
        print_clock(&b->fp8_peak_clock);
    }
    else if (b->have_lt && b->rows8)
        printf("fp8 peak       n/a (see the note above): fp8 and nvfp4 rows' SoL left "
               "empty\n");
    fflush(stdout);
}

/* ---- JSON output and main ---------------------------------------------- */

/* Writes the run to --json FILE; takes `geo` (the geomeans by kind). */
static bool write_json(const bench *b, const device_info *d, const row *rows, size_t n,
                       json_t *geo)
{
    json_t *root = json_object(), *list = json_array();
    const char *commit = getenv("JITGEMM_COMMIT");
    json_object_set_new(root, "device", json_string(d->name));
    json_object_set_new(root, "date", json_string(d->date));
    json_object_set_new(root, "commit", commit && *commit ? json_string(commit) : json_null());
    json_object_set_new(root, "libjitgemm", json_string(jg_version()));
    json_object_set_new(root, "sm_clock_mhz", d->clock_mhz ? json_integer(d->clock_mhz)
                                                           : json_null());
    json_object_set_new(root, "driver_version", json_integer(d->driver));
    /* --dtype and --scale; rows say their own (fp8 spec lines may differ) */
    json_object_set_new(root, "dtype", json_string(dtype_name(b->opt.dtype)));
    json_object_set_new(root, "out_dtype", json_string(dtype_name(out_type(&b->opt,
                                                                            b->opt.dtype))));
    json_object_set_new(root, "scale", b->opt.dtype == JG_E4M3 || b->opt.scale_set
                                           ? json_string(scale_name(b->opt.scale))
                                           : json_null());
    json_object_set_new(root, "sf_layout", b->opt.dtype == JG_NVFP4
                                               ? json_string(sf_layout_name(b->opt.sf_layout))
                                               : json_null());
    json_object_set_new(root, "reps", json_integer(b->opt.reps));
    json_object_set_new(root, "chain", b->opt.chain ? json_integer(b->opt.chain) : json_null());
    json_object_set_new(root, "flush", json_string(flush_name(b->opt.flush)));
    json_object_set_new(root, "flush_bytes", json_integer((json_int_t)b->flush_bytes));
    json_object_set_new(root, "copy_bw_gbs", json_num(b->copy_gbs));
    json_object_set_new(root, "launch_floor_us", json_num(b->floor_us));
    json_object_set_new(root, "launch_floor_smem_us", json_num(b->floor_smem_us));
    json_object_set_new(root, "peak_tflops", json_num(b->peak_tflops));
    json_object_set_new(root, "fp8_peak_tflops", json_num(b->fp8_peak_tflops));
    json_object_set_new(root, "peak_sm_clock", clock_json(&b->peak_clock));
    json_object_set_new(root, "fp8_peak_sm_clock", clock_json(&b->fp8_peak_clock));
    for (size_t i = 0; i < n; ++i)
        json_array_append_new(list, row_json(b, &rows[i]));
    json_object_set_new(root, "rows", list);
    json_object_set_new(root, "geomean_ratio", geo);
    int rc = json_dump_file(root, b->opt.json, JSON_INDENT(2));
    json_decref(root);
    if (rc)
        fprintf(stderr, "jitgemm-bench: cannot write %s\n", b->opt.json);
    return rc == 0;
}

/* Runs every shape, printing each row as it completes; returns the exit
 * status. */
static int run_all(bench *b, const device_info *d, const shape_list *shapes)
{
    row *rows = calloc(shapes->n, sizeof *rows);
    int failed = 0;
    if (!rows)
        return EXIT_SETUP;
    print_table_header(b);
    for (size_t i = 0; i < shapes->n; ++i) {
        run_shape(b, &shapes->v[i], &rows[i]);
        print_row(b, &rows[i]);
        fflush(stdout);
        failed += rows[i].error[0] || rows[i].mismatch;
    }
    printf("\n");
    json_t *geo = json_object();
    geomean_by_kind(b, rows, shapes->n, geo);
    print_clock_summary(b, rows, shapes->n);
    if (b->opt.json && !write_json(b, d, rows, shapes->n, geo))
        ++failed;
    else if (!b->opt.json)
        json_decref(geo);
    if (failed)
        printf("%d row(s) failed or mismatched (tolerance %.0e)\n", failed, MISMATCH_TOL);
    free(rows);
    return failed ? EXIT_ROWS_FAILED : 0;
}

int main(int argc, char **argv)
{
    bench b;
    memset(&b, 0, sizeof b);
    bool done = false;
    int rc = parse_args(argc, argv, &b.opt, &done);
    if (rc || done)
        return rc;
    /* The spec is read before looking for a GPU, so that it can be checked
     * anywhere. */
    shape_list shapes = {NULL, 0, 0};
    if (!load_spec(b.opt.spec, &b.opt, &shapes) ||
        (b.opt.only && !filter_shapes(&shapes, b.opt.only))) {
        free(shapes.v);
        return EXIT_SETUP;
    }
    if (!shapes.n) {
        fprintf(stderr, "jitgemm-bench: no shape to run in %s\n", b.opt.spec);
        free(shapes.v);
        return EXIT_SETUP;
    }
    int devices = 0;
    cudaError_t e = cudaGetDeviceCount(&devices);
    if (e != cudaSuccess || devices == 0) {
        fprintf(stderr, "jitgemm-bench: no CUDA GPU (cudaGetDeviceCount: %s): nothing to time "
                        "(%zu shape(s) read)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices", shapes.n);
        free(shapes.v);
        return EXIT_SETUP;
    }
    device_info d;
    rc = EXIT_SETUP;
    bool grouped = false;
    for (size_t i = 0; i < shapes.n; ++i) {
        grouped |= shapes.v[i].g > 0;
        b.rows8 |= shapes.v[i].in == JG_E4M3 || shapes.v[i].in == JG_NVFP4; /* fp8 peak */
        b.rows16 |= shapes.v[i].in == JG_BF16 || shapes.v[i].in == JG_FP16;
    }
    if (!CUDA_FAILED(cudaSetDevice(0)) && !CUDA_FAILED(cudaFree(0)) && device_info_get(&d) &&
        bench_init(&b, &d, grouped)) {
        print_header(&b, &d, &shapes);
        if (measure_ceilings(&b)) {
            print_ceilings(&b);
            rc = run_all(&b, &d, &shapes);
        }
    }
    bench_destroy(&b);
    free(shapes.v);
    return rc;
}
