/* What the GPU fuzzers share: their command line
 *   NAME [--count N] [--seed S] [--only I] [--threads T]
 * (a seed from the clock by default, short enough to retype), a pool of
 * threads that takes indices 0..count-1 in turn (the parallel planning
 * phase: NVRTC compiles on every thread), the contexts that force kernel
 * families through the environment, and the wait after each launch.
 * Header-only. */
#ifndef JG_FUZZ_H
#define JG_FUZZ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jg_test.h"
#include "jg_test_gpu.h"

typedef struct jg_fuzz_opts {
    int64_t count, only; /* only: -1 runs all */
    uint64_t seed;
    int threads;
} jg_fuzz_opts;

static inline uint64_t jg_fuzz_clock_seed(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    uint64_t x = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
    return jg_splitmix64(&x) % 1000000000u; /* short enough to retype */
}

/* Parses the command line into o (count `count` unless given, 16
 * threads); exits 2 with the usage on anything else. */
static inline void jg_fuzz_parse(int argc, char **argv, int64_t count, jg_fuzz_opts *o)
{
    o->count = count;
    o->only = -1;
    o->seed = jg_fuzz_clock_seed();
    o->threads = 16;
    for (int i = 1; i < argc; i += 2) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v && !strcmp(argv[i], "--count"))
            o->count = strtoll(v, NULL, 0);
        else if (v && !strcmp(argv[i], "--seed"))
            o->seed = strtoull(v, NULL, 0);
        else if (v && !strcmp(argv[i], "--only"))
            o->only = strtoll(v, NULL, 0);
        else if (v && !strcmp(argv[i], "--threads"))
            o->threads = atoi(v);
        else {
            fprintf(stderr, "usage: %s [--count N] [--seed S] [--only I] [--threads T]\n",
                    argv[0]);
            exit(2);
        }
    }
    if (o->count < 1 || o->only >= o->count) {
        fprintf(stderr, "--count must be >= 1 and --only below it\n");
        exit(2);
    }
}

typedef struct jg_fuzz_pool {
    const jg_fuzz_opts *o;
    void (*fn)(int64_t i, void *arg);
    void *arg;
    atomic_llong next;
} jg_fuzz_pool;

static inline void *jg_fuzz_worker(void *p)
{
    jg_fuzz_pool *pool = p;
    for (;;) {
        const int64_t i = (int64_t)atomic_fetch_add(&pool->next, 1);
        if (i >= pool->o->count)
            return NULL;
        if (pool->o->only < 0 || i == pool->o->only)
            pool->fn(i, pool->arg);
    }
}

/* fn(i, arg) for every index (--only's alone) on o->threads threads (1 to
 * 64); returns the seconds it took. */
static inline double jg_fuzz_parallel(const jg_fuzz_opts *o, void (*fn)(int64_t, void *),
                                      void *arg)
{
    jg_fuzz_pool pool = {.o = o, .fn = fn, .arg = arg};
    atomic_init(&pool.next, 0);
    pthread_t tid[64];
    const int nt = o->threads < 1 ? 1 : o->threads > 64 ? 64 : o->threads;
    struct timespec t0, t1;
    timespec_get(&t0, TIME_UTC);
    for (int t = 0; t < nt; ++t)
        if (pthread_create(&tid[t], NULL, jg_fuzz_worker, &pool) != 0) {
            fprintf(stderr, "pthread_create failed\n");
            exit(1);
        }
    for (int t = 0; t < nt; ++t)
        pthread_join(tid[t], NULL);
    timespec_get(&t1, TIME_UTC);
    return (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
}

/* A context to plan in, made with up to two environment variables set
 * (read once, when the context is made; NULL: none). */
typedef struct jg_fuzz_env {
    const char *name, *var, *value, *var2, *value2;
} jg_fuzz_env;

/* ctx[e] for each of the n envs, each variable set only while its context
 * is made. */
static inline void jg_fuzz_contexts(const jg_fuzz_env *envs, size_t n, jg_context **ctx)
{
    for (size_t e = 0; e < n; ++e) {
        if (envs[e].var)
            setenv(envs[e].var, envs[e].value, 1);
        if (envs[e].var2)
            setenv(envs[e].var2, envs[e].value2, 1);
        ctx[e] = jg_test_context();
        if (envs[e].var)
            unsetenv(envs[e].var);
        if (envs[e].var2)
            unsetenv(envs[e].var2);
    }
}

/* The plan counts of n contexts, summed. */
static inline jg_context_stats jg_fuzz_stats(jg_context *const *ctx, size_t n)
{
    jg_context_stats sum;
    memset(&sum, 0, sizeof sum);
    for (size_t e = 0; e < n; ++e) {
        jg_context_stats st;
        JG_REQUIRE(ctx[e], jg_context_get_stats(ctx[e], &st));
        sum.plans_compiled += st.plans_compiled;
        sum.plans_disk += st.plans_disk;
        sum.plans_memory += st.plans_memory;
    }
    return sum;
}

/* What the planning phase's fn(i, arg) gets: the contexts and the shapes
 * (the fuzzer's own type). */
typedef struct jg_fuzz_job {
    jg_context *const *ctx;
    void *shapes;
} jg_fuzz_job;

/* The kernel a plan runs, for a failure's line ("-" without one). */
static inline const char *jg_fuzz_kernel(const jg_plan *plan)
{
    jg_plan_info info;
    memset(&info, 0, sizeof info);
    if (!plan || jg_plan_get_info(plan, &info) != JG_OK || !info.kernel_name)
        return "-";
    return info.kernel_name;
}

/* Waits for a launch that returned JG_OK. A CUDA error there loses the
 * context, so nothing more can run: prints "FAIL what: error" and
 * "NAME: aborted", exits 1. */
static inline void jg_fuzz_sync(const char *name, const char *what)
{
    cudaError_t e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaDeviceSynchronize();
    if (e != cudaSuccess) {
        printf("FAIL %s: %s\n%s: aborted\n", what, cudaGetErrorString(e), name);
        exit(1);
    }
}

#endif /* JG_FUZZ_H */
