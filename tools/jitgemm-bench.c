/* jitgemm-bench: times libjitgemm against cuBLASLt on the shapes of a spec
 * file, in one process, and reports each row against the speed of light
 * measured in the same run.
 *
 *   jitgemm-bench [--spec FILE] [--only NAME,NAME] [--dtype bf16|fp16|fp8|nvfp4]
 *                 [--scale tensor|row|block] [--sf-layout swizzled|rowmajor]
 *                 [--out-dtype bf16|fp16|fp32]
 *                 [--reps N] [--json FILE] [--no-peer] [--flush read|memset|none]
 *                 [--chain N] [--tune] [--help]
 *   jitgemm-bench --random N [--seed S] [--random-generic F] [--dims FILE]
 *                 [--emit-shapes FILE] [--family-ab] [--dtype bf16|fp16|fp8] [...]
 *
 * This file holds main and the run's setup; the rest is split by concern,
 * with bench.h as the shared header: bench_cli.c (options), bench_spec.c
 * (rows from the spec file), bench_operands.c (inputs and device buffers),
 * bench_timing.c (the L2 flush, the timing loop, clocks, ceilings),
 * bench_peers.c (cuBLASLt and cuBLAS, opened with dlopen), bench_dense.c
 * and bench_grouped.c (one row of each kind), bench_check.c (the
 * correctness guard), bench_output.c (table, summary lines, JSON),
 * bench_random.c and bench_summary.c (--random: problems drawn by
 * random_draw.c, their run and their summary), bench_family.c
 * (--family-ab: the chosen kernel family against the plain tiles).
 * Exit status: 0 all rows fine, 1 a row failed or mismatched, 2 usage error,
 * no GPU, or a failure before the first row. bench/README.md says more. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

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
    /* Room for MAX_TIMED implementations interleaved, MAX_ALGOS x PICK_REPS
     * (more than 3 x --reps when --random takes it down to 20), COPY_REPS. */
    b->nevents = MAX_TIMED * (b->opt.reps > COPY_REPS ? b->opt.reps : COPY_REPS);
    if (b->nevents < MAX_ALGOS * PICK_REPS)
        b->nevents = MAX_ALGOS * PICK_REPS;
    b->warm_ms = b->opt.random ? RANDOM_WARM_MS : WARM_MS;
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
    /* --tune, or JITGEMM_TUNE=1 given: planned on one thread (the tuner's
     * timings must not share the GPU); the context reads the variable */
    const char *tune = getenv("JITGEMM_TUNE");
    if (b->opt.tune)
        setenv("JITGEMM_TUNE", "1", 1);
    else
        b->opt.tune = tune && !strcmp(tune, "1");
    const jg_options ws = {.flags = JG_CONTEXT_WORKSPACE}; /* rows pass one (--no-workspace: NULL) */
    if (jg_context_create(&ws, &b->jg) != JG_OK) {
        fprintf(stderr, "jitgemm-bench: jg_context_create: %s\n", jg_context_last_error(NULL));
        return false;
    }
    if (b->opt.family_ab && family_context_create(&ws, &b->jg_plain) != JG_OK) {
        fprintf(stderr, "jitgemm-bench: jg_context_create (plain tiles, for --family-ab): %s\n",
                jg_context_last_error(NULL));
        return false;
    }
    nvml_open(b);
    if (!peers_init(b, grouped))
        return false;
    return true;
}

static void bench_destroy(bench *b)
{
    peers_destroy(b);
    jg_context_destroy(b->jg_plain);
    jg_context_destroy(b->jg);
    for (int i = 0; i < b->nevents; ++i) {
        if (b->start && b->start[i])
            cudaEventDestroy(b->start[i]);
        if (b->stop && b->stop[i])
            cudaEventDestroy(b->stop[i]);
    }
    free(b->start);
    free(b->stop);
    cudaFree(b->jg_ws);
    cudaFree(b->flush);
    cudaFree(b->flush_sink);
    if (b->flush_lib)
        cudaLibraryUnload(b->flush_lib);
    if (b->stream)
        cudaStreamDestroy(b->stream);
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
    int rc = finish_run(b, d, rows, shapes->n, failed);
    free(rows);
    return rc;
}

/* The rows: the spec's, or (--random) drawn ones, read or drawn before
 * looking for a GPU so that they can be checked anywhere; an exit status,
 * or 0 with *done set when nothing is left to do (--emit-shapes). */
static int read_rows(const options *o, shape_list *shapes, bool *done)
{
    if (o->random)
        return random_shapes(o, shapes, done);
    if (!load_spec(o->spec, o, shapes) || (o->only && !filter_shapes(shapes, o->only)))
        return EXIT_SETUP;
    if (!shapes->n) {
        fprintf(stderr, "jitgemm-bench: no shape to run in %s\n", o->spec);
        return EXIT_SETUP;
    }
    for (size_t i = 0; o->pooled && i < shapes->n; ++i)
        if (shapes->v[i].g || shapes->v[i].in != shapes->v[0].in ||
            shapes->v[i].in == JG_NVFP4) {
            fprintf(stderr, "jitgemm-bench: --pooled takes dense rows of one input type, "
                            "bf16, fp16 or fp8 (%s differs)\n",
                    shapes->v[i].name);
            return EXIT_SETUP;
        }
    return 0;
}

int main(int argc, char **argv)
{
    bench b;
    memset(&b, 0, sizeof b);
    bool done = false;
    int rc = parse_args(argc, argv, &b.opt, &done);
    if (rc || done)
        return rc;
    shape_list shapes = {NULL, 0, 0};
    rc = read_rows(&b.opt, &shapes, &done);
    if (rc || done) {
        free(shapes.v);
        return rc;
    }
    /* rows also timed M-generic: --random's, or a --pooled spec's generic_hint_m */
    const shape *hinted = NULL;
    for (size_t i = 0; !b.opt.random && !hinted && i < shapes.n; ++i)
        hinted = shapes.v[i].generic_hint ? &shapes.v[i] : NULL;
    if (hinted && !b.opt.pooled)
        printf("note: generic_hint_m (first at %s) is timed with --pooled only\n", hinted->name);
    b.generic_rows = b.opt.random || (hinted && b.opt.pooled);
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
            rc = b.opt.random || b.opt.pooled ? run_random(&b, &d, &shapes)
                                              : run_all(&b, &d, &shapes);
        }
    }
    bench_destroy(&b);
    free(shapes.v);
    return rc;
}
