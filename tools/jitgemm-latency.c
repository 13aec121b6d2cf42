/* jitgemm-latency: the host-side costs of libjitgemm, measured on a GPU host.
 *
 *   cold compile      jg_gemm_plan of distinct problems with the disk cache off,
 *                     one thread (plan + emit + NVRTC + module load)
 *   disk hit          a fresh process: jg_context_create .. first launch returned,
 *                     the kernel in a warmed disk cache (CUDA context made before)
 *   memory hit        host time of jg_gemm (lookup + launch) per call
 *   run vs bare       jg_gemm_run on a held plan against cuLaunchKernelEx of the
 *                     same function with a prebuilt parameter block
 *   grouped run       host time of one 8-group jg_grouped_run, the same pointers
 *
 * Usage: jitgemm-latency [--compiles N] [--calls N] [--batch N]
 * Time NVRTC with CUDA_CACHE_DISABLE=1 so the driver's compute cache does
 * not answer for it. Links the internal library for the bare launch. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cuda_runtime_api.h>

/* Internal: the bare launch it compares jg_gemm_run with needs the plan's
 * CUfunction, tensor maps and grid (plan->kernel, plan->tmaps), which the
 * public API keeps opaque on purpose. */
#include "jg_internal.h"
#include "jg_test_gpu.h" /* CUDA_CHECK, JG_REQUIRE */
#include "timing.h"

static double now_us(void) { return timing_ms(CLOCK_MONOTONIC) * 1e3; }

static jg_gemm_problem problem(int64_t m, int64_t n, int64_t k)
{
    jg_gemm_problem p = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                         .m = m, .n = n, .k = k};
    return p;
}

static jg_context *context(const char *cache_dir, jg_cache_mode mode)
{
    jg_options o = {.cache_dir = cache_dir, .cache_mode = mode};
    jg_context *ctx;
    JG_REQUIRE(NULL, jg_context_create(&o, &ctx));
    return ctx;
}

/* Distinct K per compile: a new kernel each time, same tile. */
static void cold_compiles(int count)
{
    jg_context *ctx = context(NULL, JG_CACHE_OFF);
    double *t = malloc(sizeof *t * (size_t)count);
    for (int i = 0; i < count; ++i) {
        jg_gemm_problem p = problem(4096, 4096, 4096 + 64 * (i + 1));
        jg_plan *plan;
        double t0 = now_us();
        JG_REQUIRE(ctx, jg_gemm_plan(ctx, &p, &plan));
        t[i] = (now_us() - t0) / 1e3;
    }
    jg_context_stats s;
    jg_context_get_stats(ctx, &s);
    double med = timing_median(t, count);
    printf("cold compile      median %.1f ms, min %.1f, max %.1f over %d kernels "
           "(NVRTC alone: mean %.1f ms)\n",
           med, t[0], t[count - 1], count, s.compile_ms / count);
    free(t);
    jg_context_destroy(ctx);
}

/* The child of disk_hits(): everything after the CUDA context exists. */
static int child_disk_hit(const char *dir)
{
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaFree(0));
    void *a, *b, *d;
    CUDA_CHECK(cudaMalloc(&a, 4096 * 4096 * 2));
    CUDA_CHECK(cudaMalloc(&b, 4096 * 4096 * 2));
    CUDA_CHECK(cudaMalloc(&d, 4096 * 4096 * 2));
    jg_gemm_problem p = problem(4096, 4096, 4096);
    jg_gemm_args args = {.a = a, .b = b, .d = d, .alpha = 1.0f};
    double t0 = now_us();
    jg_context *ctx = context(dir, JG_CACHE_READ);
    jg_plan *plan;
    JG_REQUIRE(ctx, jg_gemm_plan(ctx, &p, &plan));
    JG_REQUIRE(ctx, jg_gemm_run(plan, &args, NULL));
    double t1 = now_us();
    jg_plan_info info;
    jg_plan_get_info(plan, &info);
    CUDA_CHECK(cudaDeviceSynchronize());
    printf("%.3f %d\n", (t1 - t0) / 1e3, (int)info.origin);
    return 0;
}

static void disk_hits(const char *self)
{
    char dir[] = "/tmp/jg_latency_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        exit(2);
    }
    jg_context *ctx = context(dir, JG_CACHE_READWRITE);
    jg_gemm_problem p = problem(4096, 4096, 4096);
    jg_plan *plan;
    JG_REQUIRE(ctx, jg_gemm_plan(ctx, &p, &plan));
    jg_context_destroy(ctx);
    enum { RUNS = 7 };
    double t[RUNS];
    int hits = 0;
    for (int i = 0; i < RUNS; ++i) {
        char cmd[512];
        snprintf(cmd, sizeof cmd, "'%s' --child-disk-hit '%s'", self, dir);
        FILE *f = popen(cmd, "r");
        int origin = 0;
        if (!f || fscanf(f, "%lf %d", &t[i], &origin) != 2) {
            fprintf(stderr, "disk-hit child failed\n");
            exit(2);
        }
        pclose(f);
        hits += origin == JG_ORIGIN_DISK;
    }
    printf("disk hit          median %.2f ms from jg_context_create to the first launch, "
           "fresh processes (%d/%d loaded from disk)\n",
           timing_median(t, RUNS), hits, RUNS);
    char rm[600];
    snprintf(rm, sizeof rm, "rm -rf '%s'", dir);
    if (system(rm) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* Launches are timed in batches shorter than the launch queue, with a sync
 * between batches outside the timed region: a long unsynchronized loop fills
 * the queue and then measures the GPU's pace, not the host's cost. */
#define BATCH 256

static int batch = BATCH; /* --batch: a smaller one checks that the queue never filled */

typedef struct launch_loop {
    jg_context *ctx;
    const jg_gemm_problem *p;
    const jg_gemm_args *args;
    jg_plan *plan;
    const CUlaunchConfig *cfg;
    void **params;
} launch_loop;

enum { LOOP_GEMM, LOOP_RUN, LOOP_BARE };

static double host_us_per_call(const launch_loop *l, int which, int calls)
{
    double total = 0;
    for (int done = 0; done < calls; done += batch) {
        int n = calls - done < batch ? calls - done : batch;
        double t0 = now_us();
        for (int i = 0; i < n; ++i) {
            if (which == LOOP_GEMM)
                jg_gemm(l->ctx, l->p, l->args, NULL);
            else if (which == LOOP_RUN)
                jg_gemm_run(l->plan, l->args, NULL);
            else
                l->ctx->cu->cuLaunchKernelEx(l->cfg, l->plan->kernel->fn, l->params, NULL);
        }
        total += now_us() - t0;
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    return total / calls;
}

/* Host time per call of jg_gemm (memory hit) and of jg_gemm_run, against a
 * bare cuLaunchKernelEx of the same kernel and parameters. */
static void host_costs(int calls)
{
    jg_context *ctx = context(NULL, JG_CACHE_OFF);
    jg_gemm_problem p = problem(128, 256, 64);
    void *a, *b, *d;
    CUDA_CHECK(cudaMalloc(&a, 1 << 20));
    CUDA_CHECK(cudaMalloc(&b, 1 << 20));
    CUDA_CHECK(cudaMalloc(&d, 1 << 20));
    jg_gemm_args args = {.a = a, .b = b, .d = d, .alpha = 1.0f};
    jg_plan *plan;
    JG_REQUIRE(ctx, jg_gemm_plan(ctx, &p, &plan));
    JG_REQUIRE(ctx, jg_gemm_run(plan, &args, NULL));
    CUDA_CHECK(cudaDeviceSynchronize());

    /* The same launch, parameters prepared once. */
    jg_gemm_kargs ka;
    memset(&ka, 0, sizeof ka);
    ka.a = plan->tmaps[0].ta;
    ka.b = plan->tmaps[0].tb;
    ka.d = plan->tmaps[0].td;
    ka.d_ptr = d;
    ka.ldd = plan->problem.ldd;
    ka.m = (int32_t)p.m;
    ka.alpha = 1.0f;
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = plan->grid;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = plan->threads;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = plan->kernel->smem_bytes;
    void *params[] = {&ka};
    launch_loop l = {ctx, &p, &args, plan, &cfg, params};
    double gemm_us = host_us_per_call(&l, LOOP_GEMM, calls);
    double run_us = host_us_per_call(&l, LOOP_RUN, calls);
    double bare_us = host_us_per_call(&l, LOOP_BARE, calls);

    printf("memory hit        jg_gemm %.2f us per call (lookup + launch), %d calls in batches "
           "of %d\n",
           gemm_us, calls, batch);
    printf("run vs bare       jg_gemm_run %.2f us, bare cuLaunchKernelEx %.2f us: +%.2f us\n",
           run_us, bare_us, run_us - bare_us);

    cudaFree(a);
    cudaFree(b);
    cudaFree(d);
    jg_context_destroy(ctx);
}

/* Host time of one jg_grouped_run of the seeds' case 1 (8 groups, list
 * layout) with the same pointers every call: the parameter block is reused,
 * nothing is encoded. Batched like the dense loops. */
static void grouped_costs(int calls)
{
    static const int64_t m[8] = {80, 176, 128, 72, 64, 248, 96, 160};
    const int64_t n = 4096, k = 7168;
    jg_context *ctx = context(NULL, JG_CACHE_OFF);
    jg_grouped_problem p = {.layout = JG_GROUPED_LIST, .a_type = JG_BF16, .b_type = JG_BF16,
                            .d_type = JG_BF16, .groups = 8, .m = m, .n = n, .k = k};
    const void *a[8], *b[8];
    void *d[8];
    for (int g = 0; g < 8; ++g) {
        void *x, *y, *z;
        CUDA_CHECK(cudaMalloc(&x, (size_t)(m[g] * k * 2)));
        CUDA_CHECK(cudaMalloc(&y, (size_t)(n * k * 2)));
        CUDA_CHECK(cudaMalloc(&z, (size_t)(m[g] * n * 2)));
        CUDA_CHECK(cudaMemset(x, 0, (size_t)(m[g] * k * 2)));
        CUDA_CHECK(cudaMemset(y, 0, (size_t)(n * k * 2)));
        a[g] = x;
        b[g] = y;
        d[g] = z;
    }
    jg_grouped_args args = {.a = a, .b = b, .d = d, .alpha = 1.0f};
    jg_plan *plan;
    JG_REQUIRE(ctx, jg_grouped_plan(ctx, &p, &plan));
    JG_REQUIRE(ctx, jg_grouped_run(plan, &args, NULL));
    CUDA_CHECK(cudaDeviceSynchronize());
    double total = 0;
    for (int done = 0; done < calls; done += batch) {
        int n = calls - done < batch ? calls - done : batch;
        double t0 = now_us();
        for (int i = 0; i < n; ++i)
            jg_grouped_run(plan, &args, NULL);
        total += now_us() - t0;
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    printf("grouped run       jg_grouped_run (8 groups, list layout) %.2f us per call, %d calls "
           "in batches of %d\n",
           total / calls, calls, batch);
    for (int g = 0; g < 8; ++g) {
        cudaFree((void *)a[g]);
        cudaFree((void *)b[g]);
        cudaFree(d[g]);
    }
    jg_context_destroy(ctx);
}

int main(int argc, char **argv)
{
    int compiles = 9, calls = 100000;
    for (int i = 1; i < argc; ++i) {
        if (!strcmp(argv[i], "--child-disk-hit") && i + 1 < argc)
            return child_disk_hit(argv[i + 1]);
        if (!strcmp(argv[i], "--compiles") && i + 1 < argc)
            compiles = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--calls") && i + 1 < argc)
            calls = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--batch") && i + 1 < argc)
            batch = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: %s [--compiles N] [--calls N] [--batch N]\n", argv[0]);
            return 2;
        }
    }
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        fprintf(stderr, "jitgemm-latency: no CUDA GPU\n");
        return 2;
    }
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaFree(0));
    if (compiles < 1 || calls < 1 || batch < 1) {
        fprintf(stderr, "--compiles, --calls and --batch must be >= 1\n");
        return 2;
    }
    cold_compiles(compiles);
    disk_hits(argv[0]);
    host_costs(calls);
    grouped_costs(calls < 10000 ? calls : 10000);
    return 0;
}
