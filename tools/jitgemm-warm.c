/* jitgemm-warm: compiles the kernels that a set of shape specs needs into
 * libjitgemm's disk cache ahead of time (for the local GPU, or with --arch
 * for GPUs elsewhere), and lists, verifies and prunes that cache.
 * `jitgemm-warm --help` is its manual.
 *
 * It uses the public API only: it counts the distinct kernels before
 * compiling any (jg_gemm_kernel_id, the planner's own path), so the progress
 * line knows the total and no two threads wait on one kernel; it compiles
 * by planning in a context (offline with --arch); and it looks after the
 * cache with jg_cache_list and jg_cache_prune, the library's own checks. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

#include "jitgemm/jitgemm.h"
#include "spec.h"
#include "spec_problem.h"

#if defined(__GNUC__)
#define WARM_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define WARM_PRINTF(f, a)
#endif
#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

#define EXIT_FAILED 1  /* a line, a kernel or a cache entry failed */
#define EXIT_SETUP 2   /* usage, unreadable input, no GPU, no usable cache */
#define JOBS_MAX 1024
#define ROOT_LEN 4096 /* a cache directory's path, the NUL included */

enum mode { MODE_WARM, MODE_LIST, MODE_VERIFY, MODE_PRUNE };

typedef struct options {
    const char **files; /* spec files; none: stdin */
    int nfiles;
    const char *arch, *cache_dir;
    int sm_count, jobs;
    jg_dtype out_dtype; /* JG_DTYPE_NONE: the line's dtype */
    jg_backend backend; /* JG_BACKEND_DEFAULT: JITGEMM_BACKEND */
    int64_t max_age_s;  /* --prune --max-age; 0: none */
    uint64_t max_bytes; /* --prune --max-size; 0: none */
    bool m_generic, pdl, skip_unsupported, dry_run;
    enum mode mode;
    int modes; /* how many of --list/--verify/--prune were given */
} options;

/* ---- small helpers ------------------------------------------------------ */

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

static long online_cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > JOBS_MAX ? JOBS_MAX : n;
}

static bool parse_int(const char *s, long lo, long hi, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < lo || v > hi)
        return false;
    *out = (int)v;
    return true;
}

/* A number with an optional unit suffix (units[i] multiplies by scale[i]),
 * at least 1 and, scaled, at most max. */
static bool parse_scaled(const char *s, const char *units, const uint64_t *scale, uint64_t max,
                         uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *s == '-' || *s == '+' || errno || v == 0)
        return false;
    uint64_t mul = 1;
    if (*end) {
        const char *u = strchr(units, *end);
        if (!u || end[1])
            return false;
        mul = scale[u - units];
    }
    if (v > max / mul)
        return false;
    *out = (uint64_t)v * mul;
    return true;
}

/* "3h": the largest unit that keeps the number small. */
static void format_age(int64_t s, char *out, size_t len)
{
    if (s < 0)
        s = 0;
    if (s < 120)
        snprintf(out, len, "%llds", (long long)s);
    else if (s < 120 * 60)
        snprintf(out, len, "%lldm", (long long)(s / 60));
    else if (s < 48 * 3600)
        snprintf(out, len, "%lldh", (long long)(s / 3600));
    else
        snprintf(out, len, "%lldd", (long long)(s / 86400));
}

static void format_size(uint64_t b, char *out, size_t len)
{
    if (b < 1024)
        snprintf(out, len, "%llu B", (unsigned long long)b);
    else if (b < 1024 * 1024)
        snprintf(out, len, "%.1f KiB", b / 1024.0);
    else
        snprintf(out, len, "%.1f MiB", b / (1024.0 * 1024.0));
}

/* An array v of *cap elements of elem bytes, full, doubled (or made
 * `first` long); NULL when memory ran out, v and *cap then unchanged. */
static void *grow(void *v, size_t *cap, size_t elem, size_t first)
{
    const size_t n = *cap ? 2 * *cap : first;
    void *bigger = realloc(v, n * elem);
    if (bigger)
        *cap = n;
    return bigger;
}

/* A library message as one line: its first, and for a compile failure
 * ("compiling X for sm_90a:" then NVRTC's log) the log's first error. */
static void one_line(const char *msg, char *out, size_t len)
{
    int n = (int)strcspn(msg, "\n");
    const char *pick = NULL, *first = NULL;
    if (msg[n] && n > 0 && msg[n - 1] == ':')
        for (const char *p = msg + n + 1; *p && !pick; p += strcspn(p, "\n"), p += *p == '\n') {
            size_t l = strcspn(p, "\n");
            if (l && !first)
                first = p;
            if (l && memmem(p, l, "error", 5))
                pick = p;
        }
    if (!pick)
        pick = first;
    if (pick)
        snprintf(out, len, "%.*s %.*s", n, msg, (int)strcspn(pick, "\n"), pick);
    else
        snprintf(out, len, "%.*s", n, msg);
}

/* ---- the manual ------------------------------------------------------- */

/* The manual, a section per string (C limits one string to 4095 bytes). */
static const char *const manual[] = {
    "NAME\n"
    "    jitgemm-warm - compile libjitgemm's kernels into its disk cache ahead of time\n"
    "\n",
    "SYNOPSIS\n"
    "    jitgemm-warm [-j N] [--arch ARCH [--sm-count N]] [--cache-dir DIR]\n"
    "                 [--out-dtype T] [--m-generic] [--pdl] [--backend B]\n"
    "                 [--skip-unsupported] [-n]\n"
    "                 [SPEC-FILE...]\n"
    "    jitgemm-warm --list | --verify [--cache-dir DIR]\n"
    "    jitgemm-warm --prune [--max-age AGE] [--max-size SIZE] [--cache-dir DIR]\n"
    "\n",
    "DESCRIPTION\n"
    "    Reads shape specs, one JSON object per line, from the SPEC-FILEs (standard\n"
    "    input when there are none, or for \"-\"), works out the distinct kernels\n"
    "    they need, and compiles those not in the disk cache yet (--backend), N at a\n"
    "    time. A process that later plans the same problems with the same library,\n"
    "    NVRTC and GPU architecture loads them from the cache in milliseconds\n"
    "    instead of compiling each for a few hundred.\n"
    "\n"
    "    Without --arch it compiles for the local GPU, which must be an sm_90 one.\n"
    "    With --arch it needs neither GPU nor driver: a build box can fill a cache\n"
    "    directory for the GPU machines that will mount or receive it.\n"
    "\n"
    "    A dense or decode line needs one kernel per problem; with --m-generic one\n"
    "    kernel serves every M that the planner sizes alike, so fewer kernels\n"
    "    serve many lines. nvfp4 lines with a scale other than block have no\n"
    "    kernels: each is reported as unsupported, with its line, and makes the\n"
    "    exit status 1 (unless --skip-unsupported). fp8 lines compile e4m3\n"
    "    kernels with the line's scale mode, nvfp4 lines kernels for the line's\n"
    "    scale layout (sf; in the contiguous layout A's scales are always row-major,\n"
    "    the only layout it takes), both writing bf16 unless --out-dtype says\n"
    "    otherwise.\n"
    "\n"
    "    On a terminal one progress line on standard error is kept up to date;\n"
    "    otherwise a line is printed there per kernel finished. A summary follows\n"
    "    on standard output: kernels compiled, already cached, failed (each with\n"
    "    the reason) and the wall time.\n"
    "\n",
    "OPTIONS\n"
    "    -j N, --jobs N       compile N kernels at once (default: the online CPUs)\n"
    "    --arch ARCH          compile for ARCH (sm_90a) with no GPU, instead of for\n"
    "                         the local GPU\n"
    "    --sm-count N         with --arch: the target's multiprocessors, which the\n"
    "                         planner sizes tiles for (default 132, an H100 SXM;\n"
    "                         an H100 PCIe has 114). Warm with the count of the\n"
    "                         GPUs that will load the kernels: another count may\n"
    "                         plan other kernels. At 132 the planner counts the\n"
    "                         clusters an H200 holds at once (30 of 4 CTAs, not\n"
    "                         33), as it does on such a GPU; at other counts,\n"
    "                         SMs / cluster size.\n"
    "    --cache-dir DIR      the cache directory (default: see ENVIRONMENT)\n"
    "    --out-dtype T        the D (output) type: bf16, fp16 or fp32 (default: the\n"
    "                         line's dtype)\n"
    "    --backend B          compile with nvrtc or llvm (default: JITGEMM_BACKEND,\n"
    "                         else nvrtc). Each backend has its own cache entries:\n"
    "                         warm with the one the processes will use. llvm\n"
    "                         compiles the kernels it holds bitcode for and the\n"
    "                         others with NVRTC, as the library does\n"
    "    --m-generic          plan M-generic kernels (JG_GEMM_M_GENERIC) with the\n"
    "                         line's M as the planner's hint, as servers whose M\n"
    "                         changes every call do\n"
    "    --pdl                plan dense and decode lines as programmatic dependents\n"
    "                         (JG_GEMM_PDL), the kernels a server that chains its\n"
    "                         decode GEMMs with them runs\n"
    "    --skip-unsupported   count lines that have no kernels yet as skipped, not\n"
    "                         failed\n"
    "    -n, --dry-run        print the kernels the specs need and whether each is\n"
    "                         cached; compile nothing\n"
    "    --list               list the cache's entries (every arch): kernel, arch,\n"
    "                         size, age, and CORRUPT (why) for damaged ones\n"
    "    --verify             check every entry's header and checksums, as the\n"
    "                         library does before loading one\n"
    "    --prune              remove damaged entries and those of an older format\n"
    "                         version, temp files left by killed writers (older\n"
    "                         than a minute) and lock files without an entry;\n"
    "                         print each removal\n"
    "    --max-age AGE        with --prune: also remove entries not used for longer\n"
    "                         than AGE, seconds or a number with s, m, h or d (30d).\n"
    "                         An entry's use is its file's access time, which loads\n"
    "                         update as the file system allows (relatime, Linux's\n"
    "                         default: about once a day; noatime: never, so that\n"
    "                         the age is since the kernel was compiled)\n"
    "    --max-size SIZE      with --prune: then remove the least recently used\n"
    "                         entries until the rest take at most SIZE, bytes or a\n"
    "                         number with K, M or G (2G)\n"
    "    -h, --help           print this manual\n"
    "    --version            print the libjitgemm version\n"
    "\n",
    "SPEC FORMAT\n"
    "    One JSON object per line; blank lines and lines starting with # are\n"
    "    skipped, unknown fields ignored. Both of these are lines:\n"
    "      {\"name\": \"square4096\", \"kind\": \"dense\", \"m\": 4096, \"n\": 4096, \"k\": 4096}\n"
    "      {\"m\": [80, 176], \"n\": [4096, 4096], \"k\": [7168, 7168], \"g\": 2, \"seed\": 1111}\n"
    "    name      1 to 63 characters (default line<N>)\n"
    "    kind      dense, decode or grouped (default: grouped when g is given or\n"
    "              m, n and k are all lists, else dense)\n"
    "    m, n, k   integers in [1, 2^31-1]; for grouped, lists of g of them\n"
    "    g         the number of groups (default: the lists' length)\n"
    "    layout    grouped: list (default), contiguous or masked\n"
    "    m_max     masked: the rows any group may reach (default: the largest m)\n"
    "    dtype     the A and B type: bf16 (default), fp16, fp8, nvfp4, fp32 (TF32\n"
    "              tensor cores) or fp32-exact (JG_GEMM_FP32_EXACT; dense, decode)\n"
    "    scale     fp8 and nvfp4: tensor, row or block (nvfp4: block only)\n"
    "    sf        nvfp4: the block scales' layout, 128x4 (default) or row\n"
    "    seed      an integer >= 0, for tools that fill operands\n"
    "    workspace grouped: true plans with JG_GROUPED_WORKSPACE, as a runtime that\n"
    "              passes a workspace does (nvfp4, list layout: another kernel);\n"
    "              default false\n"
    "    a_major   k (default) or m: A given as [K, M] (JG_GEMM_A_M_MAJOR; bf16\n"
    "              and fp16, dense and decode)\n"
    "    b_major   k (default) or n: B given as [K, N] (JG_GEMM_B_N_MAJOR,\n"
    "              JG_GROUPED_B_N_MAJOR; bf16 and fp16; grouped: list layout)\n"
    "    lda, ldb, ldd  dense and decode: leading dimensions in elements\n"
    "              (default packed); rows not 16 bytes apart plan cp.async\n"
    "              loads or direct stores, as the library does\n"
    "    unaligned true plans for element-aligned pointers (JG_GEMM_UNALIGNED,\n"
    "              JG_GROUPED_UNALIGNED); default false\n"
    "    A malformed line is reported as \"FILE: line N: field 'X': why\" and counted\n"
    "    as failed; the other lines are still warmed.\n"
    "\n",
    "ENVIRONMENT\n"
    "    JITGEMM_CACHE_DIR    the cache directory when --cache-dir is not given;\n"
    "                         else $XDG_CACHE_HOME/jitgemm, else ~/.cache/jitgemm\n"
    "    JITGEMM_LOG          library logging on standard error: 1 or all, or\n"
    "                         words among plan,cache,compile (warnings always show)\n"
    "    JITGEMM_TILE         restricts the planner's tiles (MxNxK): kernels warmed\n"
    "                         under it are not those a plain process plans\n"
    "    JITGEMM_DUMP         a directory that receives the source, PTX and cubin\n"
    "                         of each kernel compiled (llvm: also its variant's\n"
    "                         source, .llvm.cu, and optimized IR, .ll)\n"
    "    JITGEMM_BACKEND      the backend when --backend is not given\n"
    "    JITGEMM_LIBCUDA      the driver library to open instead of libcuda.so.1\n"
    "    JITGEMM_CACHE        ignored: warming always reads and writes the cache\n"
    "\n",
    "EXIT STATUS\n"
    "    0   every line was used and every kernel it needs is in the cache; or the\n"
    "        listing, verification or pruning found nothing wrong\n"
    "    1   a line was malformed or unsupported, a kernel failed to compile or to\n"
    "        be stored, --verify found a bad entry, or --prune could not remove one\n"
    "    2   usage error, an unreadable spec file, no GPU and no --arch, or a cache\n"
    "        directory the library refuses (not yours, or writable by others)\n"
    "\n",
    "EXAMPLES\n"
    "    Warm the benchmark shapes for this machine's GPU, 8 compiles at a time:\n"
    "        jitgemm-warm -j 8 bench/shapes.jsonl\n"
    "    On a build box without GPU, for H100 SXM servers, into a shipped directory:\n"
    "        jitgemm-warm --arch sm_90a --cache-dir /srv/jitgemm-cache shapes.jsonl\n"
    "    One kernel for many M, skipping grouped and FP8 lines:\n"
    "        jitgemm-warm --m-generic --skip-unsupported shapes.jsonl\n"
    "    A single shape from the shell:\n"
    "        echo '{\"m\": 128, \"n\": 4096, \"k\": 7168}' | jitgemm-warm --arch sm_90a\n"
    "    Check a cache received from elsewhere, and clean it if needed:\n"
    "        jitgemm-warm --verify --cache-dir DIR || jitgemm-warm --prune --cache-dir DIR\n"
    "    Keep the default cache under 2 GiB, dropping what went unused for a month:\n"
    "        jitgemm-warm --prune --max-age 30d --max-size 2G\n"
    "\n",
    "SEE ALSO\n"
    "    cache/README.md (where entries live, their format), bench/README.md (the\n"
    "    benchmark shapes), include/jitgemm/jitgemm.h (the API; jg_cache_list and\n"
    "    jg_cache_prune do what --list, --verify and --prune do)\n",
};

static void usage(FILE *f)
{
    for (size_t i = 0; i < ARRAY_LEN(manual); ++i)
        fputs(manual[i], f);
}

/* ---- arguments ---------------------------------------------------------- */

static int usage_error(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "jitgemm-warm: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, " (try --help)\n");
    va_end(ap);
    return EXIT_SETUP;
}

/* Options without a value; false when `a` is none of them. */
static bool set_flag(options *o, const char *a)
{
    static const struct {
        const char *name;
        enum mode mode;
    } modes[] = {{"--list", MODE_LIST}, {"--verify", MODE_VERIFY}, {"--prune", MODE_PRUNE}};
    for (size_t i = 0; i < ARRAY_LEN(modes); ++i)
        if (!strcmp(a, modes[i].name)) {
            o->mode = modes[i].mode;
            o->modes++;
            return true;
        }
    if (!strcmp(a, "--m-generic"))
        o->m_generic = true;
    else if (!strcmp(a, "--pdl"))
        o->pdl = true;
    else if (!strcmp(a, "--skip-unsupported"))
        o->skip_unsupported = true;
    else if (!strcmp(a, "-n") || !strcmp(a, "--dry-run"))
        o->dry_run = true;
    else
        return false;
    return true;
}

static bool is_value_option(const char *name)
{
    static const char *names[] = {"-j",          "--jobs",      "--arch",    "--sm-count",
                                  "--cache-dir", "--out-dtype", "--max-age", "--max-size",
                                  "--backend"};
    for (size_t i = 0; i < ARRAY_LEN(names); ++i)
        if (!strcmp(name, names[i]))
            return true;
    return false;
}

static int set_value(options *o, const char *name, const char *v)
{
    static const uint64_t age_units[] = {1, 60, 3600, 86400};
    static const uint64_t size_units[] = {1ull << 10, 1ull << 20, 1ull << 30};
    uint64_t n = 0;
    if (!strcmp(name, "--arch"))
        o->arch = v;
    else if (!strcmp(name, "--cache-dir"))
        o->cache_dir = v;
    else if (!strcmp(name, "--sm-count") && !parse_int(v, 1, 100000, &o->sm_count))
        return usage_error("--sm-count must be an integer in [1, 100000], not '%s'", v);
    else if ((!strcmp(name, "-j") || !strcmp(name, "--jobs")) &&
             !parse_int(v, 1, JOBS_MAX, &o->jobs))
        return usage_error("-j must be an integer in [1, %d], not '%s'", JOBS_MAX, v);
    else if (!strcmp(name, "--max-age") && !parse_scaled(v, "smhd", age_units, INT64_MAX, &n))
        return usage_error("--max-age must be a positive number of seconds, or one with s, m, h "
                           "or d (30d), not '%s'", v);
    else if (!strcmp(name, "--max-size") && !parse_scaled(v, "KMG", size_units, UINT64_MAX, &n))
        return usage_error("--max-size must be a positive number of bytes, or one with K, M or G "
                           "(2G), not '%s'", v);
    else if (!strcmp(name, "--backend")) {
        o->backend = !strcmp(v, "nvrtc")  ? JG_BACKEND_NVRTC
                     : !strcmp(v, "llvm") ? JG_BACKEND_LLVM
                                          : JG_BACKEND_DEFAULT;
        if (!o->backend)
            return usage_error("--backend must be nvrtc or llvm, not '%s'", v);
    } else if (!strcmp(name, "--out-dtype")) {
        o->out_dtype = !strcmp(v, "bf16")   ? JG_BF16
                       : !strcmp(v, "fp16") ? JG_FP16
                       : !strcmp(v, "fp32") ? JG_FP32
                                            : JG_DTYPE_NONE;
        if (!o->out_dtype)
            return usage_error("--out-dtype must be bf16, fp16 or fp32, not '%s'", v);
    }
    if (!strcmp(name, "--max-age"))
        o->max_age_s = (int64_t)n;
    else if (!strcmp(name, "--max-size"))
        o->max_bytes = n;
    return 0;
}

/* One option with a value, as "--name value", "--name=value" or "-jN". */
static int value_option(options *o, int argc, char **argv, int *i)
{
    const char *a = argv[*i], *eq = strchr(a, '='), *v = NULL;
    char name[32];
    if (a[1] == 'j' && a[2]) {
        snprintf(name, sizeof name, "-j");
        v = a + 2;
    } else if (a[1] == '-' && eq && (size_t)(eq - a) < sizeof name) {
        snprintf(name, sizeof name, "%.*s", (int)(eq - a), a);
        v = eq + 1;
    } else {
        snprintf(name, sizeof name, "%s", strlen(a) < sizeof name ? a : "?");
    }
    if (!is_value_option(name))
        return usage_error("unknown option '%s'", a);
    if (!v) {
        if (*i + 1 >= argc)
            return usage_error("%s needs a value", a);
        v = argv[++*i];
    }
    return set_value(o, name, v);
}

/* Combinations that make no sense are refused rather than half-honoured. */
static int check_args(const options *o)
{
    if (o->modes > 1)
        return usage_error("--list, --verify and --prune go one at a time");
    if (o->mode != MODE_WARM && o->nfiles)
        return usage_error("--list, --verify and --prune take no spec files");
    if (o->mode != MODE_WARM &&
        (o->dry_run || o->m_generic || o->pdl || o->arch || o->out_dtype))
        return usage_error("--list, --verify and --prune take only --cache-dir (and --prune "
                           "--max-age and --max-size)");
    if (o->mode != MODE_PRUNE && (o->max_age_s || o->max_bytes))
        return usage_error("--max-age and --max-size go with --prune");
    if (o->sm_count && !o->arch)
        return usage_error("--sm-count goes with --arch (a local GPU has its own count)");
    return 0;
}

/* Returns 0 to go on (*done after --help or --version), else an exit status. */
static int parse_args(int argc, char **argv, options *o, bool *done)
{
    *o = (options){.jobs = (int)online_cpus()};
    o->files = calloc((size_t)argc, sizeof *o->files);
    if (!o->files)
        return EXIT_SETUP;
    bool only_files = false;
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        int rc = 0;
        if (only_files || a[0] != '-' || !strcmp(a, "-")) {
            o->files[o->nfiles++] = a;
        } else if (!strcmp(a, "--")) {
            only_files = true;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            *done = true;
            return 0;
        } else if (!strcmp(a, "--version")) {
            printf("jitgemm-warm (libjitgemm %s)\n", jg_version());
            *done = true;
            return 0;
        } else if (!set_flag(o, a) && (rc = value_option(o, argc, argv, &i))) {
            return rc;
        }
    }
    return check_args(o);
}

/* ---- state shared by the threads ------------------------------------------ */

enum result { RESULT_PENDING, RESULT_COMPILED, RESULT_CACHED, RESULT_FAILED };

/* One distinct kernel, and the first spec line that needs it. */
typedef struct job {
    jg_gemm_problem problem;
    /* Grouped lines (list layout): the problem's m points at group_m when
     * used, since jobs move when they are sorted. */
    bool grouped;
    jg_grouped_problem gproblem;
    int64_t group_m[JG_GROUPED_MAX_GROUPS];
    jg_kernel_id id; /* its name and cache key */
    const char *file;
    int line;
    size_t order; /* the first line's position among all lines: output order */
    int lines;    /* how many spec lines need this kernel */
    enum result result;
    double seconds;
    char why[512];
} job;

typedef struct spec_item {
    struct spec s;
    const char *file;
} spec_item;

typedef struct warm {
    options opt;
    spec_item *specs;
    size_t nspecs, specs_cap;
    char **failed; /* lines and problems that failed before compiling */
    size_t nfailed, failed_cap;
    size_t failed_total; /* nfailed, plus any whose text found no memory */
    size_t malformed, skipped;
    jg_context *ctx;
    const char *cache_dir; /* the context's, once open */
    job *jobs;
    size_t njobs;
    pthread_mutex_t lock; /* guards what follows, and writes to stderr */
    size_t next, done, compiled, cached, failures;
    const char *current;
    bool tty;
    bool capturing;       /* jg_context_create runs: keep warnings for later */
    char captured[2048];  /* those warnings */
} warm;

/* The library reports a failure to the log callback, as an error message,
 * on the failing thread: kept per thread, it cannot be another thread's,
 * unlike the context's shared last-error text. */
static _Thread_local char thread_error[8192];
static _Thread_local char thread_warning[1024];

static void add_failed(warm *w, const char *fmt, ...) WARM_PRINTF(2, 3);
static void add_failed(warm *w, const char *fmt, ...)
{
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    w->failed_total++; /* counted even if its text cannot be kept */
    if (w->nfailed == w->failed_cap) {
        char **v = grow(w->failed, &w->failed_cap, sizeof *v, 16);
        if (!v)
            return;
        w->failed = v;
    }
    w->failed[w->nfailed] = strdup(text);
    if (w->failed[w->nfailed])
        w->nfailed++;
}

/* Clears the progress line, so that a message can take its place. */
static void progress_clear(const warm *w)
{
    if (w->tty)
        fputs("\r\x1b[K", stderr);
}

static void progress_draw(const warm *w)
{
    if (!w->tty)
        return;
    struct winsize ws;
    int cols = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col : 80;
    char head[64], tail[64];
    snprintf(head, sizeof head, "[%zu/%zu] compiling ", w->done, w->njobs);
    snprintf(tail, sizeof tail, " (%zu failed)", w->failures);
    /* The name gives way: a line wider than the terminal wraps, and \r
     * would then rewrite only its last part. */
    int room = cols - 1 - (int)strlen(head) - (int)strlen(tail);
    const char *name = w->current ? w->current : "";
    if (room < 4)
        fprintf(stderr, "\r%.*s\x1b[K", cols - 1, head);
    else if ((int)strlen(name) <= room)
        fprintf(stderr, "\r%s%s%s\x1b[K", head, name, tail);
    else
        fprintf(stderr, "\r%s%.*s...%s\x1b[K", head, room - 3, name, tail);
    fflush(stderr);
}

/* As the library writes its log when JITGEMM_LOG asks. */
static void log_line(jg_log_level level, const char *category, const char *msg)
{
    static const char *levels[] = {"error", "warn", "info", "debug"};
    fprintf(stderr, "jitgemm %s [%s]: %s\n", levels[level & 3], category, msg);
}

static void on_log(void *user, jg_log_level level, const char *category, const char *msg)
{
    warm *w = user;
    if (level == JG_LOG_ERROR) {
        snprintf(thread_error, sizeof thread_error, "%s", msg);
        if (!getenv("JITGEMM_LOG"))
            return;
    }
    if (level == JG_LOG_WARN)
        snprintf(thread_warning, sizeof thread_warning, "%s", msg);
    pthread_mutex_lock(&w->lock);
    if (w->capturing && level == JG_LOG_WARN) {
        size_t used = strlen(w->captured);
        snprintf(w->captured + used, sizeof w->captured - used, "%s%s", used ? "; " : "", msg);
    } else {
        progress_clear(w);
        log_line(level, category, msg);
        progress_draw(w);
    }
    pthread_mutex_unlock(&w->lock);
}

/* ---- reading the specs -------------------------------------------------- */

static bool add_spec(warm *w, const struct spec *s, const char *file)
{
    if (w->nspecs == w->specs_cap) {
        spec_item *v = grow(w->specs, &w->specs_cap, sizeof *v, 64);
        if (!v)
            return false;
        w->specs = v;
    }
    w->specs[w->nspecs++] = (spec_item){*s, file};
    return true;
}

/* Every line of one file; a malformed one is reported and counted, not
 * fatal. Returns 0, or EXIT_SETUP when the file cannot be read. */
static int read_file(warm *w, const char *path)
{
    bool std_in = !strcmp(path, "-");
    const char *label = std_in ? "<stdin>" : path;
    FILE *f = std_in ? stdin : fopen(path, "r");
    if (!f) {
        fprintf(stderr, "jitgemm-warm: cannot open %s: %s\n", path, strerror(errno));
        return EXIT_SETUP;
    }
    if (std_in && isatty(STDIN_FILENO))
        fprintf(stderr, "jitgemm-warm: reading specs from the terminal (end with Ctrl-D)\n");
    char *text = NULL, err[512];
    size_t cap = 0;
    ssize_t n;
    int line = 0, rc = 0;
    while (rc == 0 && line < 2147483647 && (n = getline(&text, &cap, f)) >= 0) {
        struct spec s;
        int got = spec_parse_line(text, (size_t)n, ++line, &s, err, sizeof err);
        if (got < 0) {
            fprintf(stderr, "jitgemm-warm: %s: %s\n", label, err);
            add_failed(w, "%s: %s", label, err);
            w->malformed++;
        } else if (got == 0 && !add_spec(w, &s, label)) {
            spec_free(&s);
            fprintf(stderr, "jitgemm-warm: out of memory\n");
            rc = EXIT_SETUP;
        }
    }
    if (rc == 0 && ferror(f)) {
        fprintf(stderr, "jitgemm-warm: reading %s: %s\n", label, strerror(errno));
        rc = EXIT_SETUP;
    }
    free(text);
    if (!std_in)
        fclose(f);
    return rc;
}

static int read_inputs(warm *w)
{
    static const char *std_in[] = {"-"};
    const char **files = w->opt.nfiles ? w->opt.files : std_in;
    int n = w->opt.nfiles ? w->opt.nfiles : 1;
    for (int i = 0; i < n; ++i) {
        int rc = read_file(w, files[i]);
        if (rc)
            return rc;
    }
    return 0;
}

/* ---- the context -------------------------------------------------------- */

/* Whether there is a GPU, whose primary context (GPU 0's) it then makes
 * current for jg_context_create. */
static bool gpu_current(void)
{
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        cudaGetLastError(); /* no GPU is an answer here, not an error to keep */
        return false;
    }
    return cudaSetDevice(0) == cudaSuccess && cudaFree(0) == cudaSuccess;
}

/* Online or offline as asked, always read-write; a cache the library turns
 * off (directory not ours, open to others, not creatable) makes warming
 * pointless, so that is an error with the library's reason. */
static int open_context(warm *w)
{
    jg_options o = {.cache_dir = w->opt.cache_dir, .cache_mode = JG_CACHE_READWRITE,
                    .log = on_log, .log_user = w, .backend = w->opt.backend};
    if (w->opt.backend)
        o.flags |= JG_CONTEXT_BACKEND;
    /* the plans that split K through a workspace, and the ones their
     * launches without a workspace (and contexts without the flag) run */
    o.flags |= JG_CONTEXT_WORKSPACE;
    if (w->opt.arch) {
        o.flags |= JG_CONTEXT_OFFLINE;
        o.arch = w->opt.arch;
        o.sm_count = w->opt.sm_count;
    } else if (!gpu_current()) {
        fprintf(stderr, "jitgemm-warm: no GPU: use --arch sm_90a to compile for one\n");
        return EXIT_SETUP;
    }
    w->capturing = true;
    jg_status st = jg_context_create(&o, &w->ctx);
    w->capturing = false;
    if (st != JG_OK) {
        fprintf(stderr, "jitgemm-warm: %s%s\n", jg_context_last_error(NULL),
                w->opt.arch ? "" : " (--arch sm_90a compiles for another GPU)");
        return EXIT_SETUP;
    }
    jg_cache_mode mode;
    jg_context_get_cache_dir(w->ctx, &w->cache_dir, &mode);
    if (mode != JG_CACHE_READWRITE) {
        fprintf(stderr, "jitgemm-warm: the disk cache is off, so nothing would be kept: %s\n",
                w->captured[0] ? w->captured : "no cache directory");
        return EXIT_SETUP;
    }
    if (w->captured[0])
        fprintf(stderr, "jitgemm-warm: warning: %s\n", w->captured);
    return 0;
}

/* ---- which kernels ------------------------------------------------------ */

/* The kernel of one line as a job, or false (counted) when it has none. */
static bool job_of(warm *w, size_t i, job *j)
{
    const spec_item *it = &w->specs[i];
    const char *why = spec_unsupported(&it->s);
    if (why && w->opt.skip_unsupported) {
        w->skipped++;
        return false;
    }
    if (why) {
        add_failed(w, "unsupported: %s (%s line %d, %s)", why, it->file, it->s.line, it->s.name);
        return false;
    }
    memset(j, 0, sizeof *j);
    j->problem = spec_problem(&it->s, w->opt.out_dtype,
                              (w->opt.m_generic ? JG_GEMM_M_GENERIC : 0) |
                                  (w->opt.pdl ? JG_GEMM_PDL : 0));
    thread_error[0] = 0;
    jg_status st;
    if (it->s.kind == SPEC_GROUPED) {
        j->grouped = true;
        j->gproblem = spec_grouped(&j->problem, &it->s, j->group_m);
        st = jg_grouped_kernel_id(w->ctx, &j->gproblem, &j->id);
    } else {
        st = jg_gemm_kernel_id(w->ctx, &j->problem, &j->id);
    }
    if (st != JG_OK) {
        char reason[512];
        one_line(thread_error[0] ? thread_error : jg_context_last_error(w->ctx), reason,
                 sizeof reason);
        add_failed(w, "%s line %d (%s): %s", it->file, it->s.line, it->s.name, reason);
        return false;
    }
    j->file = it->file;
    j->line = it->s.line;
    j->order = i;
    j->lines = 1;
    return true;
}

static bool same_kernel(const job *x, const job *y)
{
    return x->id.key_hash[0] == y->id.key_hash[0] && x->id.key_hash[1] == y->id.key_hash[1];
}

static int by_hash(const void *a, const void *b)
{
    const job *x = a, *y = b;
    for (int i = 1; i >= 0; --i)
        if (x->id.key_hash[i] != y->id.key_hash[i])
            return x->id.key_hash[i] < y->id.key_hash[i] ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static int by_order(const void *a, const void *b)
{
    const job *x = a, *y = b;
    return (x->order > y->order) - (x->order < y->order);
}

/* One job per distinct kernel (by cache key), in the order of the lines
 * that first need them. Sorting keeps this O(n log n) for long files. */
static bool enumerate(warm *w)
{
    w->jobs = calloc(w->nspecs ? w->nspecs : 1, sizeof *w->jobs);
    if (!w->jobs)
        return false;
    size_t n = 0;
    for (size_t i = 0; i < w->nspecs; ++i)
        n += job_of(w, i, &w->jobs[n]);
    qsort(w->jobs, n, sizeof *w->jobs, by_hash);
    size_t kept = 0;
    for (size_t i = 0; i < n; ++i) {
        job *last = kept ? &w->jobs[kept - 1] : NULL;
        if (last && same_kernel(last, &w->jobs[i]))
            last->lines++;
        else
            w->jobs[kept++] = w->jobs[i];
    }
    qsort(w->jobs, kept, sizeof *w->jobs, by_order);
    w->njobs = kept;
    return true;
}

/* ---- compiling ---------------------------------------------------------- */

/* Whether the kernel's entry is on disk and whole; *e says. */
static bool entry_ok(const warm *w, const job *j, jg_cache_entry *e)
{
    if (jg_context_cache_entry(w->ctx, j->id.key_hash, e) != JG_OK) {
        e->state = JG_CACHE_ENTRY_MISSING;
        e->problem = "not checked (no disk cache)";
    }
    return e->state == JG_CACHE_ENTRY_OK;
}

/* Plans one kernel: compiled, or loaded from the disk cache. Then checks
 * its entry, since a failed write (disk full) is only a warning to the
 * library but leaves the cache cold. */
static void run_job(warm *w, job *j)
{
    jg_plan *plan;
    jg_plan_info info;
    jg_cache_entry e;
    thread_error[0] = thread_warning[0] = 0;
    double t0 = now_s();
    jg_status st;
    if (j->grouped) {
        if (j->gproblem.m) /* it pointed into the job before the jobs were sorted */
            j->gproblem.m = j->group_m;
        st = jg_grouped_plan(w->ctx, &j->gproblem, &plan);
    } else {
        st = jg_gemm_plan(w->ctx, &j->problem, &plan);
    }
    if (st == JG_OK)
        st = jg_plan_get_info(plan, &info);
    j->seconds = now_s() - t0;
    j->result = RESULT_FAILED;
    if (st != JG_OK)
        one_line(thread_error[0] ? thread_error : jg_context_last_error(w->ctx), j->why,
                 sizeof j->why);
    else if (info.key_hash[0] != j->id.key_hash[0] || info.key_hash[1] != j->id.key_hash[1])
        snprintf(j->why, sizeof j->why, "planned another kernel than counted (%s)",
                 info.kernel_name);
    else if (!entry_ok(w, j, &e))
        snprintf(j->why, sizeof j->why, "not stored in the cache (entry %s)%s%.400s", e.problem,
                 thread_warning[0] ? ": " : "", thread_warning);
    else
        j->result = info.origin == JG_ORIGIN_COMPILED ? RESULT_COMPILED : RESULT_CACHED;
}

/* Counts a finished job and tells the user, under w->lock. */
static void job_done(warm *w, const job *j)
{
    w->done++;
    w->compiled += j->result == RESULT_COMPILED;
    w->cached += j->result == RESULT_CACHED;
    w->failures += j->result == RESULT_FAILED;
    if (w->tty) {
        if (j->result == RESULT_FAILED) {
            progress_clear(w);
            fprintf(stderr, "FAILED %s: %s\n", j->id.name, j->why);
        }
        progress_draw(w);
        return;
    }
    if (j->result == RESULT_COMPILED)
        fprintf(stderr, "[%zu/%zu] compiled %s (%.2f s)\n", w->done, w->njobs, j->id.name,
                j->seconds);
    else if (j->result == RESULT_CACHED)
        fprintf(stderr, "[%zu/%zu] already cached %s\n", w->done, w->njobs, j->id.name);
    else
        fprintf(stderr, "[%zu/%zu] FAILED %s: %s\n", w->done, w->njobs, j->id.name, j->why);
    fflush(stderr);
}

static void *worker(void *arg)
{
    warm *w = arg;
    for (;;) {
        pthread_mutex_lock(&w->lock);
        job *j = w->next < w->njobs ? &w->jobs[w->next++] : NULL;
        if (j) {
            w->current = j->id.name;
            progress_draw(w);
        }
        pthread_mutex_unlock(&w->lock);
        if (!j)
            return NULL;
        run_job(w, j);
        pthread_mutex_lock(&w->lock);
        job_done(w, j);
        pthread_mutex_unlock(&w->lock);
    }
}

/* -j threads on the one context; the library makes that safe. */
static void run_pool(warm *w)
{
    size_t n = (size_t)w->opt.jobs < w->njobs ? (size_t)w->opt.jobs : w->njobs;
    pthread_t *t = calloc(n ? n : 1, sizeof *t);
    size_t started = 0;
    while (t && started < n && pthread_create(&t[started], NULL, worker, w) == 0)
        ++started;
    if (started == 0) /* no thread could start: work here, one at a time */
        worker(w);
    for (size_t i = 0; i < started; ++i)
        pthread_join(t[i], NULL);
    free(t);
    pthread_mutex_lock(&w->lock);
    if (w->njobs)
        progress_clear(w);
    pthread_mutex_unlock(&w->lock);
}

/* ---- the summary -------------------------------------------------------- */

static void print_summary(const warm *w, double wall)
{
    jg_context_stats st;
    jg_context_get_stats(w->ctx, &st);
    printf("compiled %zu\nalready cached %zu\nfailed %zu\n", w->compiled, w->cached,
           w->failures + w->failed_total);
    for (size_t i = 0; i < w->nfailed; ++i)
        printf("  %s\n", w->failed[i]);
    for (size_t i = 0; i < w->njobs; ++i)
        if (w->jobs[i].result == RESULT_FAILED)
            printf("  %s (%s line %d): %s\n", w->jobs[i].id.name, w->jobs[i].file, w->jobs[i].line,
                   w->jobs[i].why);
    if (w->opt.skip_unsupported)
        printf("skipped %zu (unsupported; --skip-unsupported)\n",
               w->skipped);
    printf("wall time %.2f s (compiling %.2f s summed over the threads)\n", wall,
           st.compile_ms / 1e3);
}

/* -n: what a run would do. */
static void print_dry_run(const warm *w)
{
    size_t cached = 0;
    for (size_t i = 0; i < w->njobs; ++i) {
        const job *j = &w->jobs[i];
        jg_cache_entry e;
        bool ok = entry_ok(w, j, &e);
        const bool damaged = !ok && e.state != JG_CACHE_ENTRY_MISSING;
        cached += ok;
        printf("%-8s %s (%s line %d", ok ? "cached" : "missing", j->id.name, j->file, j->line);
        if (j->lines > 1)
            printf(", and %d more line%s", j->lines - 1, j->lines > 2 ? "s" : "");
        printf(")%s%s\n", damaged ? ": damaged entry: " : "", damaged ? e.problem : "");
    }
    printf("%zu kernel%s: %zu cached, %zu to compile\n", w->njobs, w->njobs == 1 ? "" : "s",
           cached, w->njobs - cached);
    for (size_t i = 0; i < w->nfailed; ++i)
        printf("  %s\n", w->failed[i]);
    if (w->opt.skip_unsupported)
        printf("skipped %zu (unsupported; --skip-unsupported)\n",
               w->skipped);
}

static int warm_run(warm *w)
{
    int rc = read_inputs(w);
    if (rc || (rc = open_context(w)))
        return rc;
    double t0 = now_s();
    if (!enumerate(w)) {
        fprintf(stderr, "jitgemm-warm: out of memory\n");
        return EXIT_SETUP;
    }
    size_t threads = (size_t)w->opt.jobs < w->njobs ? (size_t)w->opt.jobs : w->njobs, used = 0;
    for (size_t i = 0; i < w->njobs; ++i)
        used += (size_t)w->jobs[i].lines;
    printf("jitgemm-warm: %zu distinct kernel%s for %s from %zu of %zu spec line%s; cache %s; "
           "%zu thread%s\n",
           w->njobs, w->njobs == 1 ? "" : "s", jg_context_arch(w->ctx), used,
           w->nspecs + w->malformed, w->nspecs + w->malformed == 1 ? "" : "s", w->cache_dir,
           threads, threads == 1 ? "" : "s");
    fflush(stdout);
    if (w->opt.dry_run) {
        print_dry_run(w);
        return w->failed_total ? EXIT_FAILED : 0;
    }
    w->tty = isatty(STDERR_FILENO);
    run_pool(w);
    w->tty = false; /* no progress line to redraw any more */
    print_summary(w, now_s() - t0);
    return w->failed_total || w->failures ? EXIT_FAILED : 0;
}

static void warm_free(warm *w)
{
    for (size_t i = 0; i < w->nspecs; ++i)
        spec_free(&w->specs[i].s);
    for (size_t i = 0; i < w->nfailed; ++i)
        free(w->failed[i]);
    free(w->specs);
    free(w->failed);
    free(w->jobs);
    jg_context_destroy(w->ctx);
}

/* ---- the cache directory: --list, --verify, --prune ------------------------- */

/* The cache directory as the library resolves and checks it; *exists is
 * false for one not created yet (nothing to list). */
static int cache_root(const options *o, char *out, size_t len, bool *exists)
{
    struct stat st;
    if (jg_cache_dir(o->cache_dir, out, len) != JG_OK) {
        fprintf(stderr, "jitgemm-warm: %s\n", jg_context_last_error(NULL));
        return EXIT_SETUP;
    }
    *exists = stat(out, &st) == 0;
    return 0;
}

/* What is wrong with an entry, as --list, --verify and --prune say it; ""
 * when nothing. */
static void entry_label(const jg_cache_entry *e, char *out, size_t len)
{
    if (e->state == JG_CACHE_ENTRY_OK)
        out[0] = 0;
    else if (e->state == JG_CACHE_ENTRY_OTHER_FORMAT)
        snprintf(out, len, "OTHER FORMAT (version %u; this library writes %u)", e->format,
                 (unsigned)JG_CACHE_FORMAT);
    else
        snprintf(out, len, "CORRUPT (%s)", e->problem);
}

/* A failed walk of the cache: the library says why. */
static int cache_error(void)
{
    fprintf(stderr, "jitgemm-warm: %s\n", jg_context_last_error(NULL));
    return EXIT_SETUP;
}

/* ---- --list ---------------------------------------------------------- */

typedef struct list_row {
    char kernel[128], arch[16], size[32], age[32], status[160];
} list_row;

typedef struct list_rows {
    list_row *v;
    size_t n, cap, bad;
    uint64_t bytes;
    time_t now;
    bool out_of_memory;
} list_rows;

static int add_row(void *user, const char *path, const jg_cache_entry *e)
{
    list_rows *l = user;
    if (l->n == l->cap) {
        list_row *v = grow(l->v, &l->cap, sizeof *v, 64);
        if (!v) {
            l->out_of_memory = true;
            return 1;
        }
        l->v = v;
    }
    list_row *r = &l->v[l->n++];
    const char *base = strrchr(path, '/');
    snprintf(r->kernel, sizeof r->kernel, "%s",
             e->state == JG_CACHE_ENTRY_OK ? e->kernel_name : base ? base + 1 : path);
    snprintf(r->arch, sizeof r->arch, "%s", e->arch);
    format_size(e->bytes, r->size, sizeof r->size);
    format_age((int64_t)l->now - e->created_unix, r->age, sizeof r->age);
    entry_label(e, r->status, sizeof r->status);
    l->bad += e->state != JG_CACHE_ENTRY_OK;
    l->bytes += e->bytes;
    return 0;
}

static int by_kernel(const void *a, const void *b)
{
    const list_row *x = a, *y = b;
    int c = strcmp(x->arch, y->arch);
    return c ? c : strcmp(x->kernel, y->kernel);
}

static int list_cache(const char *root)
{
    list_rows l = {.now = time(NULL)};
    jg_status st = jg_cache_list(root, JG_CACHE_VERIFY, add_row, &l);
    if (st != JG_OK || l.out_of_memory) {
        free(l.v);
        return l.out_of_memory ? (fprintf(stderr, "jitgemm-warm: out of memory\n"), EXIT_SETUP)
                               : cache_error();
    }
    size_t width = 6;
    for (size_t i = 0; i < l.n; ++i)
        if (strlen(l.v[i].kernel) > width)
            width = strlen(l.v[i].kernel);
    if (l.n) {
        qsort(l.v, l.n, sizeof *l.v, by_kernel);
        printf("%-*s  %-8s %10s %5s\n", (int)width, "KERNEL", "ARCH", "SIZE", "AGE");
    }
    for (size_t i = 0; i < l.n; ++i)
        printf("%-*s  %-8s %10s %5s%s%s\n", (int)width, l.v[i].kernel, l.v[i].arch, l.v[i].size,
               l.v[i].age, l.v[i].status[0] ? "  " : "", l.v[i].status);
    char total[32];
    format_size(l.bytes, total, sizeof total);
    printf("%zu entr%s (%zu bad), %s, in %s\n", l.n, l.n == 1 ? "y" : "ies", l.bad, total, root);
    free(l.v);
    return 0;
}

/* ---- --verify and --prune ------------------------------------------------ */

typedef struct verify_count {
    size_t n, bad;
} verify_count;

static int verify_one(void *user, const char *path, const jg_cache_entry *e)
{
    verify_count *c = user;
    char label[160];
    ++c->n;
    if (e->state != JG_CACHE_ENTRY_OK) {
        entry_label(e, label, sizeof label);
        printf("BAD %s: %s\n", path, label);
        ++c->bad;
    }
    return 0;
}

static int verify_cache(const char *root)
{
    verify_count c = {0, 0};
    if (jg_cache_list(root, JG_CACHE_VERIFY, verify_one, &c) != JG_OK)
        return cache_error();
    printf("verified %zu entr%s in %s: %zu ok, %zu bad\n", c.n, c.n == 1 ? "y" : "ies", root,
           c.n - c.bad, c.bad);
    return c.bad ? EXIT_FAILED : 0;
}

typedef struct prune_count {
    size_t removed, failed;
    uint64_t bytes;
} prune_count;

/* Says what happened to one file: damaged entries as --list labels them. */
static void report_removal(void *user, const jg_cache_removal *r)
{
    prune_count *c = user;
    char label[160];
    if (r->outcome == JG_CACHE_REMOVED) {
        if (r->entry && r->entry->state != JG_CACHE_ENTRY_OK)
            entry_label(r->entry, label, sizeof label);
        else
            snprintf(label, sizeof label, "%s", r->reason);
        printf("removed %s/%s: %s\n", r->arch, r->name, label);
        ++c->removed;
        c->bytes += r->bytes;
    } else if (r->outcome == JG_CACHE_BUSY) {
        printf("kept %s/%s: held by a compile in progress\n", r->arch, r->name);
    } else {
        printf("cannot remove %s: %s\n", r->path, strerror(r->error));
        ++c->failed;
    }
}

static int prune_cache(const options *o, const char *root)
{
    jg_cache_prune_options po = {.flags = JG_CACHE_VERIFY, .max_age_s = o->max_age_s,
                                 .max_bytes = o->max_bytes};
    prune_count c = {0, 0, 0};
    jg_status st = jg_cache_prune(root, &po, report_removal, &c);
    if (st != JG_OK && !c.failed)
        return cache_error();
    char total[32];
    format_size(c.bytes, total, sizeof total);
    printf("pruned %zu file%s (%s) in %s\n", c.removed, c.removed == 1 ? "" : "s", total, root);
    return st == JG_OK ? 0 : EXIT_FAILED;
}

static int cache_command(const options *o)
{
    char root[ROOT_LEN];
    bool exists;
    int rc = cache_root(o, root, sizeof root, &exists);
    if (rc)
        return rc;
    if (!exists) {
        printf("no cache at %s (nothing compiled there yet)\n", root);
        return 0;
    }
    return o->mode == MODE_LIST     ? list_cache(root)
           : o->mode == MODE_VERIFY ? verify_cache(root)
                                    : prune_cache(o, root);
}

int main(int argc, char **argv)
{
    static warm w; /* zeroed; large (the captured text) */
    bool done = false;
    int rc = parse_args(argc, argv, &w.opt, &done);
    if (!rc && !done) {
        pthread_mutex_init(&w.lock, NULL);
        rc = w.opt.mode == MODE_WARM ? warm_run(&w) : cache_command(&w.opt);
        warm_free(&w);
    }
    free(w.opt.files);
    return rc;
}
