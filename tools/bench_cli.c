/* jitgemm-bench's command line: --help, the options and their checks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "random_draw.h"

#define RANDOM_COUNT_MAX 100000

const char *flush_name(flush_mode f)
{
    return f == FLUSH_MEMSET ? "memset" : f == FLUSH_NONE ? "none" : "read";
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

static void usage(FILE *f)
{
    fprintf(f,
            "usage: jitgemm-bench [--spec FILE] [--only NAME,NAME]\n"
            "                     [--dtype bf16|fp16|fp8|nvfp4] [--scale tensor|row|block]\n"
            "                     [--sf-layout swizzled|rowmajor] [--out-dtype bf16|fp16|fp32]\n"
            "                     [--reps N] [--json FILE] [--no-peer] [--flush read|memset|none]\n"
            "                     [--chain N] [--tune] [--no-check] [--no-workspace] [--energy]\n"
            "                     [--pooled [--family-ab]]\n"
            "                     [--help]\n"
            "       jitgemm-bench --random N [--seed S] [--random-generic F] [--dims FILE]\n"
            "                     [--generic-buckets half|pow2] [--emit-shapes FILE]\n"
            "                     [--family-ab] [--dtype bf16|fp16|fp8]\n"
            "                     [...]\n"
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
            "  --no-check        do not check dense rows' outputs (for tile sweeps, whose\n"
            "                    kernels the GPU tests check; the JSON's check is \"none\")\n"
            "  --no-workspace    pass dense plans no workspace (by default those that\n"
            "                    take one get one of jg_plan_workspace_bytes, as cuBLASLt\n"
            "                    gets its own: plans that split K through it run without\n"
            "                    the split then); --workspace: the default\n"
            "  --energy          dense rows: also ours and the peer each launched back to\n"
            "                    back (no flush) for 0.8 s or more: the energy per GEMM,\n"
            "                    the mean power between two steps of NVML's total-energy\n"
            "                    counter >= 0.5 s apart times the time per launch (JSON:\n"
            "                    ours_uj, cublas_uj; after the rows, ours / the peer's\n"
            "                    geomean); not with --chain\n"
            "  --pooled          run the spec's rows as --random runs its own: planned in\n"
            "                    parallel up front, inputs made once at the largest row's\n"
            "                    size (dense rows of one input type only)\n"
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
            "\n",
            MAX_CHAIN);
    fprintf(f,
            "  --random N        instead of the spec, N (1..%d) dense problems drawn afresh:\n"
            "                    M log-uniform in 1..%d; N and K from the model widths of\n"
            "                    --dims %.0f%% of the time, else multiples of %d in %d..%d;\n"
            "                    drawn again while M*K + N*K + M*N > 2^30 elements (2 GiB\n"
            "                    in bf16). In --dtype bf16, fp16 or fp8 (--scale). Every\n"
            "                    plan is compiled first, on parallel threads; each row is\n"
            "                    timed against cuBLASLt's best heuristic algorithm and\n"
            "                    checked as a spec row is; --reps may go down to %d. After\n"
            "                    the rows: the geomean, 10th percentile and minimum of the\n"
            "                    ratio, and the ten worst rows\n"
            "  --seed S          the draw's seed, 0..2^63-1 (default: a fresh one); printed\n"
            "                    first, and in the JSON\n"
            "  --random-generic F  the fraction of rows (0..1, default 0.25) also timed\n"
            "                    through an M-generic plan (JG_GEMM_M_GENERIC) planned for\n"
            "                    M rounded up to its bucket's top, as a serving loop plans\n"
            "                    once per bucket of M\n"
            "  --generic-buckets B  those plans' buckets: half (default: M rounded up to a\n"
            "                    power of two or 1.5 times one: 128, 192, 256, 384, ..., as\n"
            "                    the Python package's jitgemm.m_hint) or pow2 (a power of\n"
            "                    two); the same seed draws the same rows either way\n"
            "  --dims FILE       the model widths (default bench/model-dims.json)\n"
            "  --emit-shapes FILE  only write the drawn problems, as spec lines, and stop\n"
            "                    (no GPU needed; bench/peer_torch.py --random draws the same)\n"
            "  --family-ab       with --random or --pooled: every row that the planner gives\n"
            "                    another kernel family than the plain tiles (swap-AB, split-K,\n"
            "                    ping-pong, 256-row tiles) is also planned in a second context\n"
            "                    with JITGEMM_SWAP=0 JITGEMM_SPLIT=1 (the plain tiles alone),\n"
            "                    timed in the same alternation (\"tiles us\") and checked;\n"
            "                    after the rows, per chosen family, plain tiles us / ours us\n"
            "                    (above 1: the chosen family was faster) and the five rows\n"
            "                    where the plain tiles won most\n"
            "\n"
            "Exit status: 0 ok, 1 a row failed or mismatched, 2 usage or setup error\n"
            "(including no CUDA GPU). See bench/README.md.\n",
            RANDOM_COUNT_MAX, RANDOM_M_MAX, 100 * RANDOM_FROM_LIST, RANDOM_DIM_STEP,
            RANDOM_DIM_MIN, RANDOM_DIM_MAX, RANDOM_MIN_REPS);
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

/* What parse_args checks once every option is read: values whose rule
 * depends on other options, and which options were given. */
typedef struct given {
    const char *out, *reps; /* --out-dtype, --reps */
    bool spec, only, seed, generic, dims, emit, buckets;
} given;

/* --random-generic's F into *out; false (reported) unless a number in [0, 1]. */
static bool parse_fraction(const char *name, const char *v, double *out)
{
    char *end;
    double f = strtod(v, &end);
    if (!*v || *end || !(f >= 0 && f <= 1)) {
        fprintf(stderr, "jitgemm-bench: %s must be a number in [0, 1], not '%s'\n", name, v);
        return false;
    }
    *out = f;
    return true;
}

/* --random's options, and nothing for the others (--dtype's valid values
 * get here too); false (reported) for a bad value. */
static bool set_random_option(options *o, const char *name, const char *v, given *g)
{
    if (!strcmp(name, "--random"))
        return parse_int(name, v, 1, RANDOM_COUNT_MAX, &o->random);
    if (!strcmp(name, "--seed")) {
        g->seed = true;
        if (random_parse_seed(v, &o->seed))
            return true;
        fprintf(stderr, "jitgemm-bench: --seed must be an integer in [0, %lld], not '%s'\n",
                (long long)RANDOM_SEED_MAX, v);
        return false;
    }
    if (!strcmp(name, "--random-generic")) {
        g->generic = true;
        return parse_fraction(name, v, &o->generic_fraction);
    }
    if (!strcmp(name, "--generic-buckets")) {
        g->buckets = true;
        o->generic_half = !strcmp(v, "half");
        if (o->generic_half || !strcmp(v, "pow2"))
            return true;
        fprintf(stderr, "jitgemm-bench: --generic-buckets must be pow2 or half, not '%s'\n", v);
        return false;
    }
    if (!strcmp(name, "--dims")) {
        g->dims = true;
        o->dims = v;
    } else if (!strcmp(name, "--emit-shapes")) {
        g->emit = true;
        o->emit_shapes = v;
    }
    return true;
}

/* Sets the option `name` to `v`; false (reported) for a bad value. */
static bool set_option(options *o, const char *name, const char *v, given *g)
{
    g->spec |= !strcmp(name, "--spec");
    g->only |= !strcmp(name, "--only");
    if (!strcmp(name, "--spec"))
        o->spec = v;
    else if (!strcmp(name, "--only"))
        o->only = v;
    else if (!strcmp(name, "--json"))
        o->json = v;
    else if (!strcmp(name, "--out-dtype"))
        g->out = v;
    else if (!strcmp(name, "--reps"))
        g->reps = v;
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
    } else if (!strcmp(name, "--chain"))
        return parse_int(name, v, 2, MAX_CHAIN, &o->chain);
    else
        return set_random_option(o, name, v, g);
    return true;
}

/* The rules between options, once all are read; an exit status or 0. */
static int check_options(options *o, const given *g)
{
    o->out_dtype = g->out ? parse_dtype(g->out, true, false) : JG_DTYPE_NONE;
    if (g->out && !o->out_dtype) {
        fprintf(stderr, "jitgemm-bench: --out-dtype must be bf16, fp16 or fp32, not '%s'\n",
                g->out);
        return EXIT_SETUP;
    }
    if (g->reps &&
        !parse_int("--reps", g->reps, o->random ? RANDOM_MIN_REPS : MIN_REPS, 100000, &o->reps))
        return EXIT_SETUP;
    if (!o->random && (g->seed || g->generic || g->buckets || g->dims || g->emit)) {
        fprintf(stderr, "jitgemm-bench: --seed, --random-generic, --generic-buckets, --dims "
                        "and --emit-shapes go with --random N\n");
        return EXIT_SETUP;
    }
    if (o->pooled && (o->random || o->chain)) {
        fprintf(stderr, "jitgemm-bench: --pooled runs the spec's rows; not with --random or "
                        "--chain\n");
        return EXIT_SETUP;
    }
    if (o->random && (g->spec || g->only || o->chain)) {
        fprintf(stderr, "jitgemm-bench: --random draws its own problems: --spec, --only and "
                        "--chain do not apply\n");
        return EXIT_SETUP;
    }
    if (o->energy && o->chain) {
        fprintf(stderr, "jitgemm-bench: --energy times single GEMMs back to back, not --chain's "
                        "chains\n");
        return EXIT_SETUP;
    }
    if (o->family_ab && !o->random && !o->pooled) {
        fprintf(stderr, "jitgemm-bench: --family-ab goes with --random N or --pooled (rows "
                        "planned up front, in parallel)\n");
        return EXIT_SETUP;
    }
    if (o->random && o->dtype == JG_NVFP4) {
        fprintf(stderr, "jitgemm-bench: --random draws bf16, fp16 or fp8 problems, not "
                        "nvfp4\n");
        return EXIT_SETUP;
    }
    if (o->random && !g->seed)
        o->seed = random_fresh_seed();
    return 0;
}

/* Returns 0 to go on (or after --help, with *done set), else an exit status. */
int parse_args(int argc, char **argv, options *o, bool *done)
{
    static const char *with_value[] = {
        "--spec",  "--only",   "--dtype", "--out-dtype",      "--reps", "--json",
        "--flush", "--scale",  "--sf-layout", "--chain",      "--random", "--seed",
        "--random-generic", "--generic-buckets", "--dims", "--emit-shapes"};
    *o = (options){.spec = "bench/shapes.jsonl", .dtype = JG_BF16, .scale = JG_SCALE_TENSOR,
                   .reps = 100, .sf_layout = JG_SF_SWIZZLED_128X4, .generic_fraction = 0.25,
                   .generic_half = true, .dims = "bench/model-dims.json", .workspace = true};
    given g = {0};
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
        } else if (!strcmp(a, "--energy")) {
            o->energy = true;
        } else if (!strcmp(a, "--no-check")) {
            o->no_check = true;
        } else if (!strcmp(a, "--workspace")) {
            o->workspace = true;
        } else if (!strcmp(a, "--no-workspace")) {
            o->workspace = false;
        } else if (!strcmp(a, "--pooled")) {
            o->pooled = true;
        } else if (!strcmp(a, "--family-ab")) {
            o->family_ab = true;
        } else if (!strcmp(a, "--tune")) {
            o->tune = true;
        } else if (!known) {
            fprintf(stderr, "jitgemm-bench: unknown argument '%s' (try --help)\n", a);
            return EXIT_SETUP;
        } else if (i + 1 >= argc) {
            fprintf(stderr, "jitgemm-bench: %s needs a value\n", a);
            return EXIT_SETUP;
        } else if (!set_option(o, a, argv[++i], &g)) {
            return EXIT_SETUP;
        }
    }
    return check_options(o, &g);
}

/* D's type for rows whose A and B are `in`: --out-dtype, else `in`, and
 * bf16 for e4m3 (as jitgemm-warm compiles fp8 lines) and nvfp4. */
jg_dtype out_type(const options *o, jg_dtype in)
{
    return o->out_dtype ? o->out_dtype : in == JG_E4M3 || in == JG_NVFP4 ? JG_BF16 : in;
}
