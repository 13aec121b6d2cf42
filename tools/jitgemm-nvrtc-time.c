/* jitgemm-nvrtc-time: how long NVRTC takes for one generated kernel, on the
 * CPU (no GPU, no driver). For work on the cold-compile cost (issue 5).
 *
 * Plans a dense BF16 problem for an H100-like target (132 SMs), emits its
 * source as the library does, and compiles it --runs times with the
 * library's own options (jg__nvrtc_options) plus any options given after
 * `--`, printing each time and the median. Run r compiles K + 64 r, so no
 * two runs see the same source or PTX (nothing can answer from a cache);
 * the tile stays the one the planner chose for the first K.
 *
 * Usage: jitgemm-nvrtc-time [--shape MxNxK] [--runs N] [--source FILE]
 *                           [--cubin FILE] [--emit FILE] [--log] [--replace]
 *                           [-- NVRTC-OPTION...]
 *   --source FILE  compile this text instead of the emitted source (its
 *                  `#define JG_K` line is rewritten per run as above)
 *   --cubin FILE   write the first run's cubin (for cuobjdump -sass)
 *   --emit FILE    write the first run's source
 *   --log          print the first run's NVRTC log (e.g. with -- --time=-)
 *   --replace      the options after `--` replace the library's (all but -arch),
 *                  to time an option set against the library's
 * NVRTC's own phase times (front end, NVVM, ptxas): `-- --time=FILE` appends
 * one CSV row per phase and compile to FILE. The CPU time printed beside the
 * wall time is less disturbed by other load on a shared machine.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvrtc.h>

/* Internal: it times NVRTC alone on the generated source, so it runs the
 * planner and the emitter (jg__plan_gemm_sm90, jg__emit_gemm) without the
 * compile that every public call includes. */
#include "jg_internal.h"
#include "timing.h"

#define MAX_OPTS 64

static void die(const char *what)
{
    fprintf(stderr, "jitgemm-nvrtc-time: %s\n", what);
    exit(1);
}

static char *read_file(const char *path)
{
    jg__buf b = {0};
    if (!jg__buf_read_file(&b, path) || !b.data)
        die("cannot read the --source file");
    return b.data;
}

static void write_file(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, len, f) != len)
        die("cannot write an output file");
    fclose(f);
}

/* The planner's kernel for a dense BF16 problem on a 132-SM sm_90a. */
static jg__gemm_key plan_key(int64_t m, int64_t n, int64_t k)
{
    jg__target t = {.sm_count = 132, .smem_per_block = 232448};
    snprintf(t.arch_name, sizeof t.arch_name, "sm_90a");
    t.arch = t.arch_name;
    jg_gemm_problem p = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                         .m = m, .n = n, .k = k};
    jg__problem_key pk;
    jg__problem_key_make(&p, &pk);
    jg__gemm_config cfg;
    jg__log quiet = {0};
    if (jg__plan_gemm_sm90(&t, &pk, &quiet, &cfg) != JG_OK)
        die("the planner rejected the shape");
    jg__gemm_key key;
    jg__gemm_key_make(&pk, &cfg, &key);
    return key;
}

/* Source of run r: emitted for K + 64 r, or the given text with its
 * `#define JG_K` value replaced the same way. */
static void source_for_run(const char *given, jg__gemm_key key, int r, jg__buf *out, char name[128])
{
    key.k += 64 * r;
    jg__gemm_kernel_name(&key, "sm_90a", name);
    if (!given) {
        jg__emit_gemm(&key, name, out);
        return;
    }
    const char *at = strstr(given, "\n#define JG_K ");
    if (!at)
        die("the --source text has no `#define JG_K` line");
    at += strlen("\n#define JG_K ");
    jg__buf_append(out, given, (size_t)(at - given));
    jg__buf_printf(out, "%lld", (long long)key.k);
    jg__buf_puts(out, at + strcspn(at, "\n"));
}

/* -arch, the library's option string split at spaces (unless replaced),
 * then the extras. */
static int build_options(char *storage, bool replace, const char **opts, int extra_count,
                         char **extra)
{
    int n = 0;
    opts[n++] = "-arch=sm_90a";
    snprintf(storage, 1024, "%s", replace ? "" : jg__nvrtc_options());
    for (char *tok = strtok(storage, " "); tok && n < MAX_OPTS; tok = strtok(NULL, " "))
        opts[n++] = tok;
    for (int i = 0; i < extra_count && n < MAX_OPTS; ++i)
        opts[n++] = extra[i];
    return n;
}

/* Wall time of create + compile + fetching the cubin; *cpu_ms: the
 * process's CPU time meanwhile (less disturbed by other load). */
static double compile_once(const char *src, const char *name, const char **opts, int n_opts,
                           jg__buf *cubin, jg__buf *log, double *cpu_ms)
{
    nvrtcProgram prog;
    double t0 = timing_ms(CLOCK_MONOTONIC), c0 = timing_ms(CLOCK_PROCESS_CPUTIME_ID);
    if (nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL) != NVRTC_SUCCESS)
        die("nvrtcCreateProgram failed");
    nvrtcResult r = nvrtcCompileProgram(prog, n_opts, opts);
    size_t n = 0;
    char *text = NULL;
    if (r == NVRTC_SUCCESS && nvrtcGetCUBINSize(prog, &n) == NVRTC_SUCCESS &&
        (text = malloc(n ? n : 1)) && nvrtcGetCUBIN(prog, text) == NVRTC_SUCCESS)
        jg__buf_append(cubin, text, n);
    free(text);
    text = NULL;
    double ms = timing_ms(CLOCK_MONOTONIC) - t0;
    *cpu_ms = timing_ms(CLOCK_PROCESS_CPUTIME_ID) - c0;
    if ((log || r != NVRTC_SUCCESS) && nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS &&
        (text = malloc(n ? n : 1)) && nvrtcGetProgramLog(prog, text) == NVRTC_SUCCESS) {
        if (r != NVRTC_SUCCESS)
            fprintf(stderr, "%s\n", text);
        else
            jg__buf_append(log, text, n);
    }
    free(text);
    nvrtcDestroyProgram(&prog);
    if (r != NVRTC_SUCCESS)
        die(nvrtcGetErrorString(r));
    return ms;
}

int main(int argc, char **argv)
{
    long long m = 4096, n = 4096, k = 4096;
    int runs = 9, extra_at = argc;
    const char *source_path = NULL, *cubin_path = NULL, *emit_path = NULL;
    bool show_log = false, replace = false;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--")) {
            extra_at = i + 1;
            break;
        } else if (!strcmp(argv[i], "--shape") && i + 1 < argc) {
            if (sscanf(argv[++i], "%lldx%lldx%lld", &m, &n, &k) != 3)
                die("--shape wants MxNxK");
        } else if (!strcmp(argv[i], "--runs") && i + 1 < argc) {
            runs = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--source") && i + 1 < argc) {
            source_path = argv[++i];
        } else if (!strcmp(argv[i], "--cubin") && i + 1 < argc) {
            cubin_path = argv[++i];
        } else if (!strcmp(argv[i], "--emit") && i + 1 < argc) {
            emit_path = argv[++i];
        } else if (!strcmp(argv[i], "--log")) {
            show_log = true;
        } else if (!strcmp(argv[i], "--replace")) {
            replace = true;
        } else {
            fprintf(stderr,
                    "usage: %s [--shape MxNxK] [--runs N] [--source FILE] "
                    "[--cubin FILE] [--emit FILE] [--log] [--replace] "
                    "[-- NVRTC-OPTION...]\n",
                    argv[0]);
            return 2;
        }
    }
    if (runs < 1 || runs > 1000)
        die("--runs must be 1..1000");
    char *given = source_path ? read_file(source_path) : NULL;
    jg__gemm_key key = plan_key(m, n, k);
    char storage[1024];
    const char *opts[MAX_OPTS];
    int n_opts = build_options(storage, replace, opts, argc - extra_at, argv + extra_at);
    printf("options:");
    for (int i = 0; i < n_opts; ++i)
        printf(" %s", opts[i]);
    printf("\n");

    double *t = malloc(sizeof *t * (size_t)runs), *cpu = malloc(sizeof *cpu * (size_t)runs);
    if (!t || !cpu)
        die("out of memory");
    for (int r = 0; r < runs; ++r) {
        jg__buf src = {0}, cubin = {0}, log = {0};
        char name[128];
        source_for_run(given, key, r, &src, name);
        if (src.failed)
            die("out of memory");
        t[r] = compile_once(src.data, name, opts, n_opts, &cubin, r == 0 && show_log ? &log : NULL,
                            &cpu[r]);
        printf("run %d: %s %.1f ms (CPU %.1f ms)\n", r, name, t[r], cpu[r]);
        if (r == 0 && emit_path)
            write_file(emit_path, src.data, src.len);
        if (r == 0 && cubin_path)
            write_file(cubin_path, cubin.data, cubin.len);
        if (log.len)
            printf("%s\n", log.data);
        jg__buf_free(&src);
        jg__buf_free(&cubin);
        jg__buf_free(&log);
    }
    const double med = timing_median(t, runs), cpu_med = timing_median(cpu, runs);
    printf("median %.1f ms, min %.1f, max %.1f over %d runs; CPU median %.1f ms\n", med, t[0],
           t[runs - 1], runs, cpu_med);
    free(t);
    free(cpu);
    free(given);
    return 0;
}
