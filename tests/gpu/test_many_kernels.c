/* The memory cache's bound on an sm_90 GPU (exits 77 without one).
 *
 *   stream    --threads T threads (default: the CPUs, at most 16), each on
 *             its own stream, plan and launch --count N distinct problems
 *             (default 512; 10000 for the run) through the one-shot
 *             jg_gemm, in a context of max_kernels --limit L (default 64).
 *             Every problem has its own kernel (M, N, K, multiples of 16 up
 *             to 256, 512, 512, are baked in); every 16th call repeats an
 *             earlier problem of the thread, most likely evicted by then.
 *             Every result is checked against the FP64 reference, with D
 *             poisoned before each launch. The kernels and modules loaded
 *             must stay within L plus what the threads hold at once, and
 *             the device memory in use is reported, per module too.
 *   deferred  a kernel evicted while its one-shot launch waits behind a
 *             host function on its stream keeps its module until that
 *             launch has run (modules_waiting), its result right; a later
 *             trim unloads it.
 *   graph     a one-shot call captured into a CUDA graph pins its plan:
 *             other problems do not evict it, and the graph replays
 *             right; a pinned plan captured with jg_gemm_run is evicted
 *             once released after the graph is destroyed.
 *
 * The compiles dominate (one NVRTC run per problem, ~0.1-0.3 s each, T at
 * once): the default run takes some tens of seconds on a 16-core host,
 * --count 10000 some minutes. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jg_test.h"
#include "jg_test_gpu.h"

/* The problems' grid: M in 16..MAX_M, N in 16..MAX_N, K in 16..MAX_K, steps of 16. */
#define STEP 16
#define MAX_M 256
#define MAX_N 512
#define MAX_K 512
#define GRID_SIZE ((MAX_M / STEP) * (MAX_N / STEP) * (MAX_K / STEP))
/* Operands live in buffers of the largest problem: the leading dimensions
 * (not in a kernel's key) are those of the buffers, the same for all. */
#define LD 512

/* One thread's operands: A [MAX_M, LD], B [MAX_N, LD], D [MAX_M, LD], BF16. */
typedef jg_operands operands;

static void operands_init(operands *o, jg_rng *r) { jg_operands_init(o, MAX_M, MAX_N, LD, LD, r); }

static void operands_free(operands *o) { jg_operands_free(o); }

typedef struct shape {
    int64_t m, n, k;
} shape;

static shape shape_at(uint32_t i)
{
    shape s = {STEP * (1 + (int64_t)(i % (MAX_M / STEP))),
               STEP * (1 + (int64_t)(i / (MAX_M / STEP) % (MAX_N / STEP))),
               STEP * (1 + (int64_t)(i / (MAX_M / STEP) / (MAX_N / STEP)))};
    return s;
}

static jg_gemm_problem problem_of(shape s)
{
    jg_gemm_problem p;
    memset(&p, 0, sizeof p);
    p.a_type = p.b_type = p.d_type = JG_BF16;
    p.m = s.m;
    p.n = s.n;
    p.k = s.k;
    p.lda = p.ldb = p.ldd = LD;
    return p;
}

static jg_gemm_args args_of(const operands *o)
{
    jg_gemm_args a;
    memset(&a, 0, sizeof a);
    a.a = o->a.dev;
    a.b = o->b.dev;
    a.d = o->d.dev;
    a.alpha = 1.0f;
    return a;
}

/* Poisons D on stream (before a launch there). */
static void poison_async(const operands *o, cudaStream_t stream)
{
    CUDA_CHECK(cudaMemsetAsync(o->d.dev, 0xFF, o->d.bytes, stream));
}

/* Downloads D (after stream's work) and checks the problem's rows and
 * columns against the reference, and that nothing else of the buffer was
 * written; the verdict, with one line into why. */
static bool verify(operands *o, shape s, cudaStream_t stream, jg_rng *r, char *why, size_t len)
{
    CUDA_CHECK(cudaMemcpyAsync(o->d.host, o->d.dev, o->d.bytes, cudaMemcpyDeviceToHost, stream));
    CUDA_CHECK(cudaStreamSynchronize(stream));
    /* Views of the problem's part of the buffers; D's whole buffer is
     * scanned for writes outside [0, m) x [0, n). */
    jg_mat a = o->a, b = o->b, d = o->d;
    a.rows = s.m;
    a.cols = s.k;
    b.rows = s.n;
    b.cols = s.k;
    d.cols = s.n;
    jg_gemm_check ck = {.a = &a, .b = &b, .d = &d, .m = s.m, .alpha = 1.0, .beta = 0.0};
    jg_gemm_verify(&ck, r);
    jg_check_describe(&ck, why, len);
    return ck.ok;
}

static jg_cache_stats cache_of(const jg_context *ctx)
{
    jg_cache_stats c;
    JG_REQUIRE(ctx, jg_context_get_cache_stats(ctx, &c));
    return c;
}

static jg_context *context_with_limit(int limit)
{
    jg_options o;
    memset(&o, 0, sizeof o);
    o.flags = JG_CONTEXT_MAX_KERNELS;
    o.max_kernels = limit;
    o.cache_mode = JG_CACHE_OFF; /* every kernel compiled: nothing comes back from disk */
    jg_context *ctx = NULL;
    if (jg_context_create(&o, &ctx) != JG_OK) {
        fprintf(stderr, "jg_context_create: %s\n", jg_context_last_error(NULL));
        exit(1);
    }
    return ctx;
}

static size_t device_used(void)
{
    size_t free_b = 0, total = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total));
    return total - free_b;
}

/* ---- stream -------------------------------------------------------------- */

typedef struct stream_run {
    jg_context *ctx;
    const uint32_t *order; /* the grid's cells, shuffled */
    int count, threads, limit;
    uint64_t seed;
    atomic_int next; /* the next of count to plan */
    atomic_int failed, calls, repeats;
    atomic_uint_fast64_t most_kernels, most_plans;
    atomic_uint_fast64_t most_used; /* device memory, bytes */
} stream_run;

static void raise_to(atomic_uint_fast64_t *most, uint64_t v)
{
    uint64_t cur = atomic_load(most);
    while (cur < v && !atomic_compare_exchange_weak(most, &cur, v))
        ;
}

typedef struct stream_thread {
    stream_run *run;
    int index;
    operands o; /* allocated before the device memory in use is first read */
    jg_rng r;
} stream_thread;

/* One call: poison, jg_gemm, check; false (reported) on any failure. */
static bool one_call(stream_run *run, operands *o, shape s, cudaStream_t stream, jg_rng *r,
                     const char *what)
{
    jg_gemm_problem p = problem_of(s);
    jg_gemm_args args = args_of(o);
    poison_async(o, stream);
    jg_status st = jg_gemm(run->ctx, &p, &args, (jg_stream)stream);
    if (st != JG_OK) {
        fprintf(stderr, "%s %lldx%lldx%lld: jg_gemm: %s: %s\n", what, (long long)s.m,
                (long long)s.n, (long long)s.k, jg_status_name(st),
                jg_context_last_error(run->ctx));
        return false;
    }
    char why[512];
    if (!verify(o, s, stream, r, why, sizeof why)) {
        fprintf(stderr, "%s %lldx%lldx%lld: %s\n", what, (long long)s.m, (long long)s.n,
                (long long)s.k, why);
        return false;
    }
    jg_cache_stats c = cache_of(run->ctx);
    raise_to(&run->most_kernels, c.kernels);
    raise_to(&run->most_plans, c.plans);
    raise_to(&run->most_used, device_used());
    return true;
}

static void *stream_worker(void *arg)
{
    stream_thread *t = arg;
    stream_run *run = t->run;
    CUDA_CHECK(cudaSetDevice(0));
    jg_rng r = t->r;
    operands o = t->o;
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    shape mine[64]; /* this thread's last problems, for the repeats */
    int n_mine = 0, mine_next = 0;
    for (int calls = 0;; ++calls) {
        bool repeat = calls % 16 == 15 && n_mine;
        shape s;
        if (repeat) {
            s = mine[jg_rng_below(&r, (uint64_t)n_mine)];
        } else {
            const int i = atomic_fetch_add(&run->next, 1);
            if (i >= run->count)
                break;
            s = shape_at(run->order[i]);
            mine[mine_next++ % 64] = s;
            n_mine += n_mine < 64;
        }
        if (!one_call(run, &o, s, stream, &r, repeat ? "repeat" : "problem"))
            atomic_fetch_add(&run->failed, 1);
        atomic_fetch_add(&run->calls, 1);
        atomic_fetch_add(&run->repeats, repeat);
        if (t->index == 0 && calls % 64 == 63) {
            jg_cache_stats c = cache_of(run->ctx);
            printf("  %d of %d problems: %llu kernels, %llu plans, %llu modules (%llu waiting), "
                   "%llu kernels evicted\n",
                   atomic_load(&run->next) < run->count ? atomic_load(&run->next) : run->count,
                   run->count, (unsigned long long)c.kernels, (unsigned long long)c.plans,
                   (unsigned long long)c.modules, (unsigned long long)c.modules_waiting,
                   (unsigned long long)c.kernel_evictions);
        }
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
    CUDA_CHECK(cudaStreamDestroy(stream));
    return NULL;
}

static void test_stream(int count, int threads, int limit, uint64_t seed)
{
    printf("stream: %d distinct problems, %d threads, max_kernels %d\n", count, threads, limit);
    if (count > GRID_SIZE)
        count = GRID_SIZE;
    uint32_t *order = malloc(sizeof *order * GRID_SIZE);
    jg_rng r;
    jg_rng_seed(&r, seed);
    for (uint32_t i = 0; i < GRID_SIZE; ++i)
        order[i] = i;
    for (uint32_t i = GRID_SIZE - 1; i > 0; --i) {
        uint32_t j = (uint32_t)jg_rng_below(&r, i + 1), x = order[i];
        order[i] = order[j];
        order[j] = x;
    }
    pthread_t *th = malloc(sizeof *th * (size_t)threads);
    stream_thread *args = malloc(sizeof *args * (size_t)threads);
    for (int i = 0; i < threads; ++i) {
        jg_rng_seed(&args[i].r, seed + 1000003u * (uint64_t)(i + 1));
        operands_init(&args[i].o, &args[i].r);
    }
    operands o; /* the last call's */
    operands_init(&o, &r);
    const size_t used_before = device_used();
    stream_run run;
    memset(&run, 0, sizeof run);
    run.ctx = context_with_limit(limit);
    run.order = order;
    run.count = count;
    run.threads = threads;
    run.limit = limit;
    run.seed = seed;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (int i = 0; i < threads; ++i) {
        args[i].run = &run;
        args[i].index = i;
        pthread_create(&th[i], NULL, stream_worker, &args[i]);
    }
    for (int i = 0; i < threads; ++i)
        pthread_join(th[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &t1);

    /* Every stream is idle now: the next call's trim unloads what waited. */
    CHECK(one_call(&run, &o, shape_at(order[0]), NULL, &r, "last"), "the last call");
    jg_cache_stats c = cache_of(run.ctx);
    jg_context_stats s;
    jg_context_get_stats(run.ctx, &s);
    const size_t used_after = device_used();
    const int held = 2 * threads; /* each thread holds a plan and a kernel, or builds them */
    printf("  %d calls (%d repeats) in %.1f s; %llu kernels compiled in %.1f s of NVRTC\n",
           atomic_load(&run.calls), atomic_load(&run.repeats),
           (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec),
           (unsigned long long)s.plans_compiled, s.compile_ms / 1e3);
    printf("  at most %llu kernels, %llu plans, %llu modules loaded at once (bound %d, %d "
           "threads); %llu kernels and %llu plans evicted\n",
           (unsigned long long)atomic_load(&run.most_kernels),
           (unsigned long long)atomic_load(&run.most_plans), (unsigned long long)c.modules_peak,
           limit, threads, (unsigned long long)c.kernel_evictions,
           (unsigned long long)c.plan_evictions);
    printf("  now: %llu modules, %llu bytes of cubins (%.1f KB each); device memory in use "
           "%.1f MB above the start, at most %.1f MB (%.0f KB per module at the end)\n",
           (unsigned long long)c.modules, (unsigned long long)c.module_bytes,
           c.modules ? (double)c.module_bytes / (double)c.modules / 1e3 : 0.0,
           ((double)used_after - (double)used_before) / 1e6,
           ((double)atomic_load(&run.most_used) - (double)used_before) / 1e6,
           c.modules ? ((double)used_after - (double)used_before) / (double)c.modules / 1e3 : 0.0);
    CHECK(atomic_load(&run.failed) == 0, "%d calls failed (above)", atomic_load(&run.failed));
    CHECK(atomic_load(&run.most_kernels) <= (uint64_t)(limit + held),
          "%llu kernels cached at once: bound %d + %d held",
          (unsigned long long)atomic_load(&run.most_kernels), limit, held);
    CHECK(atomic_load(&run.most_plans) <= (uint64_t)(limit + held),
          "%llu plans cached at once: bound %d + %d held",
          (unsigned long long)atomic_load(&run.most_plans), limit, held);
    CHECK(c.modules_peak <= (uint64_t)(limit + held + threads),
          "%llu modules loaded at once: bound %d + %d held + %d waiting for a launch",
          (unsigned long long)c.modules_peak, limit, held, threads);
    CHECK(c.modules_waiting == 0 && c.modules == c.kernels && c.kernels <= (uint64_t)limit,
          "idle: %llu modules (%llu waiting), %llu kernels, bound %d",
          (unsigned long long)c.modules, (unsigned long long)c.modules_waiting,
          (unsigned long long)c.kernels, limit);
    CHECK(c.plans_held == 0, "%llu plans held after one-shot calls only",
          (unsigned long long)c.plans_held);
    CHECK(count <= limit + held || c.kernel_evictions >= (uint64_t)(count - limit - held),
          "%llu kernel evictions for %d distinct problems", (unsigned long long)c.kernel_evictions,
          count);
    jg_context_destroy(run.ctx);
    const size_t used_destroyed = device_used();
    printf("  jg_context_destroy gave back %.1f MB of device memory (%llu modules)\n",
           ((double)used_after - (double)used_destroyed) / 1e6, (unsigned long long)c.modules);
    operands_free(&o);
    for (int i = 0; i < threads; ++i)
        operands_free(&args[i].o);
    free(th);
    free(args);
    free(order);
}

/* ---- deferred -------------------------------------------------------------- */

/* One test's random operands and context of the given bound. */
typedef struct fixture {
    jg_rng r;
    operands o;
    jg_context *ctx;
} fixture;

static void fixture_init(fixture *f, uint64_t seed, int limit)
{
    jg_rng_seed(&f->r, seed);
    operands_init(&f->o, &f->r);
    f->ctx = context_with_limit(limit);
}

static void fixture_free(fixture *f)
{
    jg_context_destroy(f->ctx);
    operands_free(&f->o);
}

static void CUDART_CB sleep_host(void *ms) { usleep((useconds_t)(*(const int *)ms) * 1000u); }

static void test_deferred(uint64_t seed)
{
    printf("deferred: a kernel evicted while its launch waits keeps its module\n");
    fixture f;
    fixture_init(&f, seed ^ 0xdefe, 2);
    jg_context *ctx = f.ctx;
    const shape y1 = {64, 64, 64}, y2 = {64, 128, 64}, x = {128, 96, 48};
    jg_plan *py1, *py2, *px;
    jg_gemm_problem p1 = problem_of(y1), p2 = problem_of(y2), pxp = problem_of(x);
    JG_REQUIRE(ctx, jg_gemm_plan(ctx, &p1, &py1));
    JG_REQUIRE(ctx, jg_gemm_plan(ctx, &p2, &py2));
    JG_REQUIRE(ctx, jg_gemm_plan(ctx, &pxp, &px)); /* three kernels, all pinned, bound 2 */
    jg_cache_stats c = cache_of(ctx);
    CHECK(c.kernels == 3 && c.modules == 3 && c.kernel_evictions == 0,
          "pinned past the bound: %llu kernels, %llu modules", (unsigned long long)c.kernels,
          (unsigned long long)c.modules);

    cudaStream_t gated;
    cudaEvent_t ran;
    CUDA_CHECK(cudaStreamCreateWithFlags(&gated, cudaStreamNonBlocking));
    CUDA_CHECK(cudaEventCreateWithFlags(&ran, cudaEventDisableTiming));
    static int gate_ms = 3000;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    poison_async(&f.o, gated);
    CUDA_CHECK(cudaLaunchHostFunc(gated, sleep_host, &gate_ms));
    jg_gemm_args args = args_of(&f.o);
    JG_REQUIRE(ctx, jg_gemm(ctx, &pxp, &args, (jg_stream)gated)); /* a hit: nothing loaded */
    CUDA_CHECK(cudaEventRecord(ran, gated));
    /* The last pin goes: the plan and then its kernel are evicted, while the
     * launch still waits behind the host function. */
    JG_REQUIRE(ctx, jg_plan_release(px));
    c = cache_of(ctx);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    const double took = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
    const cudaError_t pending = cudaEventQuery(ran);
    CHECK(pending == cudaErrorNotReady,
          "the launch ran before the check (%s after %.2f s of a %d ms gate): nothing was "
          "checked",
          cudaGetErrorName(pending), took, gate_ms);
    if (pending == cudaErrorNotReady) {
        CHECK(c.kernels == 2 && c.kernel_evictions == 1 && c.modules_waiting == 1 && c.modules == 3,
              "evicted in flight: %llu kernels (%llu evicted), %llu modules, %llu waiting; "
              "expected 2 (1), 3, 1",
              (unsigned long long)c.kernels, (unsigned long long)c.kernel_evictions,
              (unsigned long long)c.modules, (unsigned long long)c.modules_waiting);
        printf("  evicted %.3f s into a %d ms gate: %llu modules, %llu waiting\n", took, gate_ms,
               (unsigned long long)c.modules, (unsigned long long)c.modules_waiting);
    }
    char why[512];
    CHECK(verify(&f.o, x, gated, &f.r, why, sizeof why), "the evicted kernel's launch: %s", why);
    /* Its launch is done: the next trim (here, a release) unloads it. */
    JG_REQUIRE(ctx, jg_plan_release(py2));
    c = cache_of(ctx);
    CHECK(c.modules_waiting == 0 && c.modules == 2 && c.kernels == 2,
          "after the launch: %llu modules (%llu waiting), %llu kernels; expected 2 (0), 2",
          (unsigned long long)c.modules, (unsigned long long)c.modules_waiting,
          (unsigned long long)c.kernels);
    printf("  the launch ran right; its module unloaded at the next trim (%llu loaded)\n",
           (unsigned long long)c.modules);
    jg_plan_release(py1);
    CUDA_CHECK(cudaEventDestroy(ran));
    CUDA_CHECK(cudaStreamDestroy(gated));
    fixture_free(&f);
}

/* ---- graph ------------------------------------------------------------------- */

static cudaGraphExec_t capture(jg_context *ctx, cudaStream_t stream, const jg_gemm_problem *p,
                               jg_plan *plan, const jg_gemm_args *args, cudaGraph_t *graph)
{
    CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    jg_status st = plan ? jg_gemm_run(plan, args, (jg_stream)stream)
                        : jg_gemm(ctx, p, args, (jg_stream)stream);
    CUDA_CHECK(cudaStreamEndCapture(stream, graph));
    CHECK(st == JG_OK, "under capture: %s: %s", jg_status_name(st), jg_context_last_error(ctx));
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaGraphInstantiate(&exec, *graph, 0));
    return exec;
}

/* Misses of other problems, one-shot: with a bound of 1, each evicts
 * whatever is not held. */
static void churn(jg_context *ctx, operands *o, cudaStream_t stream, int64_t k0)
{
    jg_gemm_args args = args_of(o);
    for (int64_t k = k0; k < k0 + 3 * STEP; k += STEP) {
        jg_gemm_problem q = problem_of((shape){32, 32, k});
        JG_REQUIRE(ctx, jg_gemm(ctx, &q, &args, (jg_stream)stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(stream));
}

static void test_graph(uint64_t seed)
{
    printf("graph: captured plans stay\n");
    fixture f;
    fixture_init(&f, seed ^ 0x6a4f, 1);
    jg_context *ctx = f.ctx;
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    jg_gemm_args args = args_of(&f.o);
    char why[512];

    /* A one-shot call under capture: planned first (a hit under capture
     * loads nothing), then kept for the context's life. */
    const shape sp = {96, 160, 80};
    jg_gemm_problem p = problem_of(sp);
    jg_plan *plan;
    JG_REQUIRE(ctx, jg_gemm_plan(ctx, &p, &plan));
    JG_REQUIRE(ctx, jg_plan_release(plan));
    cudaGraph_t graph;
    cudaGraphExec_t exec = capture(ctx, stream, &p, NULL, &args, &graph);
    churn(ctx, &f.o, stream, 32);
    jg_cache_stats c = cache_of(ctx);
    CHECK(c.plans_held == 1 && c.kernel_evictions >= 2,
          "after captured jg_gemm and 3 misses: %llu plans held, %llu kernels evicted",
          (unsigned long long)c.plans_held, (unsigned long long)c.kernel_evictions);
    poison_async(&f.o, stream);
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CHECK(verify(&f.o, sp, stream, &f.r, why, sizeof why), "the captured one-shot call: %s", why);
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));

    /* A pinned plan captured with jg_gemm_run, released after the graph. */
    const shape sq = {48, 64, 112};
    jg_gemm_problem q = problem_of(sq);
    JG_REQUIRE(ctx, jg_gemm_plan(ctx, &q, &plan));
    exec = capture(ctx, stream, &q, plan, &args, &graph);
    churn(ctx, &f.o, stream, 160);
    poison_async(&f.o, stream);
    CUDA_CHECK(cudaGraphLaunch(exec, stream));
    CHECK(verify(&f.o, sq, stream, &f.r, why, sizeof why), "the captured pinned plan: %s", why);
    CUDA_CHECK(cudaGraphExecDestroy(exec));
    CUDA_CHECK(cudaGraphDestroy(graph));
    c = cache_of(ctx);
    const uint64_t evicted = c.plan_evictions;
    CHECK(c.plans_held == 2, "the kept and the pinned plan: %llu held",
          (unsigned long long)c.plans_held);
    JG_REQUIRE(ctx, jg_plan_release(plan));
    c = cache_of(ctx);
    CHECK(c.plans_held == 1 && c.plan_evictions > evicted,
          "released: %llu plans held, %llu evictions (%llu before)",
          (unsigned long long)c.plans_held, (unsigned long long)c.plan_evictions,
          (unsigned long long)evicted);
    CUDA_CHECK(cudaStreamDestroy(stream));
    fixture_free(&f);
}

/* --name N: an integer option, or `fallback`. */
static int int_option(int argc, char **argv, const char *name, int fallback)
{
    for (int i = 1; i + 1 < argc; ++i)
        if (!strcmp(argv[i], name))
            return atoi(argv[i + 1]);
    return fallback;
}

int main(int argc, char **argv)
{
    jg_test_gpu_init();
    const uint64_t seed = jg_test_seed(argc, argv, "test_many_kernels");
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const int threads = int_option(argc, argv, "--threads",
                                   cpus < 1    ? 1
                                   : cpus > 16 ? 16
                                               : (int)cpus);
    const int count = jg_test_count(argc, argv, 512);
    const int limit = int_option(argc, argv, "--limit", 64);
    if (threads < 1 || count < 1 || limit < 1) {
        fprintf(stderr, "--threads, --count and --limit take positive values\n");
        return 2;
    }
    test_deferred(seed);
    test_graph(seed);
    test_stream(count, threads, limit, seed);
    return jg_test_result("test_many_kernels");
}
