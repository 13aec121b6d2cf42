/* The memory cache's bound in offline contexts (no GPU, kernels compiled
 * but never loaded): jg_options.max_kernels and JITGEMM_MAX_KERNELS, the
 * options struct of older headers, pinned plans (jg_gemm_plan) against
 * one-shot calls (jg_gemm), least-recently-used eviction of plans and of
 * kernels (quantization kernels too), jg_plan_release, and eviction while
 * other threads plan. */
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jg_internal.h"
#include "jg_test.h"

/* An offline context with the given options (flags adds to OFFLINE);
 * warnings go to *log when it is not NULL. */
static jg_status make_context(uint32_t flags, int max_kernels, captured *log, jg_context **out)
{
    jg_options o = jg_test_offline_options(NULL, JG_CACHE_OFF, log, 0);
    o.flags |= flags;
    o.max_kernels = max_kernels;
    return jg_context_create(&o, out);
}

static jg_cache_stats cache_of(const jg_context *ctx)
{
    jg_cache_stats s;
    memset(&s, 0xff, sizeof s);
    CHECK(jg_context_get_cache_stats(ctx, &s) == JG_OK, "jg_context_get_cache_stats");
    return s;
}

/* The bound a context gets from its options and the environment. */
static int64_t bound_of(uint32_t flags, int max_kernels, const char *env, captured *log)
{
    if (env)
        setenv("JITGEMM_MAX_KERNELS", env, 1);
    else
        unsetenv("JITGEMM_MAX_KERNELS");
    jg_context *ctx = NULL;
    jg_status st = make_context(flags, max_kernels, log, &ctx);
    CHECK(st == JG_OK, "flags 0x%x, max_kernels %d, env %s: %s", flags, max_kernels,
          env ? env : "unset", jg_context_last_error(NULL));
    int64_t bound = ctx ? cache_of(ctx).max_kernels : -99;
    jg_context_destroy(ctx);
    unsetenv("JITGEMM_MAX_KERNELS");
    return bound;
}

static void test_options(void)
{
    const uint32_t MK = JG_CONTEXT_MAX_KERNELS;
    captured log;
    CHECK(bound_of(0, 0, NULL, &log) == 1024, "default bound");
    CHECK(bound_of(0, 5, NULL, &log) == 1024, "max_kernels is not read without its flag");
    CHECK(bound_of(MK, 5, NULL, &log) == 5, "max_kernels 5");
    CHECK(bound_of(MK, 1, NULL, &log) == 1, "max_kernels 1");
    CHECK(bound_of(MK, JG_MAX_KERNELS_UNLIMITED, NULL, &log) == JG_MAX_KERNELS_UNLIMITED,
          "unlimited");
    CHECK(bound_of(MK, 0, NULL, &log) == 1024, "max_kernels 0: the default");
    CHECK(bound_of(MK, 0, "7", &log) == 7 && log.warnings == 0, "env 7");
    CHECK(bound_of(0, 0, "unlimited", &log) == JG_MAX_KERNELS_UNLIMITED && log.warnings == 0,
          "env unlimited");
    CHECK(bound_of(MK, 3, "7", &log) == 3, "the option wins over the environment");
    CHECK(bound_of(0, 0, "", &log) == 1024 && log.warnings == 0, "env empty: the default");
    const char *bad[] = {"0", "-3", "abc", "12x", " 5", "99999999999999999999999", "Unlimited"};
    for (size_t i = 0; i < JG_ARRAY_LEN(bad); ++i) {
        int64_t b = bound_of(0, 0, bad[i], &log);
        CHECK(b == 1024, "env \"%s\": bound %lld, expected the default", bad[i], (long long)b);
        CHECK(log.warnings == 1 && strstr(log.text, "JITGEMM_MAX_KERNELS") &&
                  strstr(log.text, "using 1024"),
              "env \"%s\": warning \"%s\"", bad[i], log.text);
    }

    jg_context *ctx = (jg_context *)&log;
    jg_status st = make_context(MK, -2, NULL, &ctx);
    CHECK(st == JG_ERR_INVALID && !ctx, "max_kernels -2: %s", jg_status_name(st));
    CHECK(strstr(jg_context_last_error(NULL), "options.max_kernels -2") != NULL, "message: %s",
          jg_context_last_error(NULL));

    /* A caller built against a 0.6 header passes a struct that ends at
     * sm_count: nothing past it may be read (ASan sees a read past the
     * allocation). */
    jg_options full;
    memset(&full, 0, sizeof full);
    full.flags = JG_CONTEXT_OFFLINE;
    full.arch = "sm_90a";
    full.cache_mode = JG_CACHE_OFF;
    const size_t old_size = offsetof(jg_options, max_kernels);
    void *old = malloc(old_size);
    memcpy(old, &full, old_size);
    ctx = NULL;
    st = jg_context_create(old, &ctx);
    CHECK(st == JG_OK && ctx && cache_of(ctx).max_kernels == 1024, "a 0.6 options struct: %s",
          jg_status_name(st));
    jg_context_destroy(ctx);
    free(old);
}

/* ---- plans ---------------------------------------------------------------- */

/* A small BF16 problem; distinct lda give distinct plans of one kernel
 * (leading dimensions are not in the kernel's key). The rows stay 128
 * bytes apart times some count: rows off those lines may take other
 * tiles (plan_sm90.c, tma_row_cost). */
static jg_gemm_problem problem(int64_t mnk, int64_t lda)
{
    jg_gemm_problem p;
    memset(&p, 0, sizeof p);
    p.a_type = p.b_type = p.d_type = JG_BF16;
    p.m = p.n = p.k = mnk;
    p.lda = lda;
    return p;
}

static void test_plans(void)
{
    jg_context *ctx = NULL;
    CHECK(make_context(JG_CONTEXT_MAX_KERNELS, 2, NULL, &ctx) == JG_OK, "context");
    if (!ctx)
        return;
    jg_plan *p[5];
    for (int i = 0; i < 4; ++i) {
        jg_gemm_problem pr = problem(64, 64 + 64 * i);
        CHECK(jg_gemm_plan(ctx, &pr, &p[i]) == JG_OK, "plan %d: %s", i, jg_context_last_error(ctx));
    }
    jg_cache_stats s = cache_of(ctx);
    CHECK(s.plans == 4 && s.plans_held == 4 && s.plan_evictions == 0 && s.kernels == 1,
          "4 pinned plans over a bound of 2 stay: plans %llu held %llu evicted %llu kernels %llu",
          (unsigned long long)s.plans, (unsigned long long)s.plans_held,
          (unsigned long long)s.plan_evictions, (unsigned long long)s.kernels);
    CHECK(s.modules == 0 && s.module_bytes == 0 && s.modules_waiting == 0,
          "offline: no modules (%llu, %llu bytes)", (unsigned long long)s.modules,
          (unsigned long long)s.module_bytes);

    /* Released, the oldest go first; each release trims. */
    for (int i = 0; i < 3; ++i)
        CHECK(jg_plan_release(p[i]) == JG_OK, "release %d", i);
    s = cache_of(ctx);
    CHECK(s.plans == 2 && s.plans_held == 1 && s.plan_evictions == 2,
          "after 3 releases: plans %llu held %llu evicted %llu (expected 2, 1, 2)",
          (unsigned long long)s.plans, (unsigned long long)s.plans_held,
          (unsigned long long)s.plan_evictions);
    /* p[2] (released, within the bound) is still cached: planning it again
     * is a hit, returned pinned. */
    jg_context_stats before, after;
    jg_context_get_stats(ctx, &before);
    jg_gemm_problem pr = problem(64, 64 + 64 * 2);
    jg_plan *again = NULL;
    CHECK(jg_gemm_plan(ctx, &pr, &again) == JG_OK && again == p[2], "p[2] from the cache");
    jg_context_get_stats(ctx, &after);
    CHECK(after.plans_memory == before.plans_memory + 1, "a memory hit");
    CHECK(jg_plan_release(again) == JG_OK, "release p[2] again");
    CHECK(jg_plan_release(again) == JG_ERR_INVALID, "a third release of p[2] has no pin");
    CHECK(strstr(jg_context_last_error(ctx), "not pinned") != NULL, "message: %s",
          jg_context_last_error(ctx));
    CHECK(jg_plan_release(NULL) == JG_OK, "release(NULL)");

    /* A one-shot call holds its plan only during the call (offline: it
     * plans, then cannot launch). Its plan is the newest: p[2] goes. */
    jg_gemm_args args;
    memset(&args, 0, sizeof args);
    args.a = args.b = args.d = (void *)(uintptr_t)0x10000;
    pr = problem(64, 64 + 64 * 4);
    CHECK(jg_gemm(ctx, &pr, &args, NULL) == JG_ERR_OFFLINE, "one-shot, offline");
    s = cache_of(ctx);
    CHECK(s.plans == 2 && s.plans_held == 1 && s.plan_evictions == 3,
          "after the one-shot call: plans %llu held %llu evicted %llu (expected 2, 1, 3)",
          (unsigned long long)s.plans, (unsigned long long)s.plans_held,
          (unsigned long long)s.plan_evictions);
    jg_context_get_stats(ctx, &before);
    pr = problem(64, 64 + 64 * 2);
    CHECK(jg_gemm_plan(ctx, &pr, &p[2]) == JG_OK, "p[2] planned again");
    jg_context_get_stats(ctx, &after);
    CHECK(after.plans_memory == before.plans_memory &&
              after.plans_compiled == before.plans_compiled,
          "p[2] was evicted: built again from its cached kernel, nothing compiled");
    jg_plan_info info;
    CHECK(jg_plan_get_info(p[2], &info) == JG_OK && info.block_m, "info of the rebuilt plan");
    jg_context_destroy(ctx); /* frees p[2] and p[3], still pinned */
}

/* ---- kernels ------------------------------------------------------------- */

static uint64_t compiled(const jg_context *ctx)
{
    jg_context_stats s;
    jg_context_get_stats(ctx, &s);
    return s.plans_compiled;
}

static jg_status one_shot(jg_context *ctx, int64_t mnk)
{
    jg_gemm_problem pr = problem(mnk, 0);
    jg_gemm_args args;
    memset(&args, 0, sizeof args);
    args.a = args.b = args.d = (void *)(uintptr_t)0x10000;
    return jg_gemm(ctx, &pr, &args, NULL);
}

static void test_kernels(void)
{
    jg_context *ctx = NULL;
    CHECK(make_context(JG_CONTEXT_MAX_KERNELS, 2, NULL, &ctx) == JG_OK, "context");
    if (!ctx)
        return;
    /* Kernels A (64), B (128), A again, C (192): B is the least recently used. */
    const int64_t A = 64, B = 128, C = 192;
    CHECK(one_shot(ctx, A) == JG_ERR_OFFLINE && one_shot(ctx, B) == JG_ERR_OFFLINE &&
              one_shot(ctx, A) == JG_ERR_OFFLINE && one_shot(ctx, C) == JG_ERR_OFFLINE,
          "one-shot calls: %s", jg_context_last_error(ctx));
    jg_cache_stats s = cache_of(ctx);
    CHECK(s.kernels == 2 && s.kernel_evictions == 1 && s.plans == 2 && s.plans_held == 0,
          "kernels %llu (evicted %llu), plans %llu (held %llu): expected 2 (1), 2 (0)",
          (unsigned long long)s.kernels, (unsigned long long)s.kernel_evictions,
          (unsigned long long)s.plans, (unsigned long long)s.plans_held);
    uint64_t n = compiled(ctx);
    CHECK(one_shot(ctx, A) == JG_ERR_OFFLINE && compiled(ctx) == n, "A stayed: not compiled again");
    CHECK(one_shot(ctx, B) == JG_ERR_OFFLINE && compiled(ctx) == n + 1, "B was evicted: compiled "
                                                                        "again");

    /* Pinned plans keep their kernels past the bound; released, they go. */
    jg_plan *p[3];
    const int64_t sizes[3] = {A, B, C};
    for (int i = 0; i < 3; ++i) {
        jg_gemm_problem pr = problem(sizes[i], 0);
        CHECK(jg_gemm_plan(ctx, &pr, &p[i]) == JG_OK, "pin %d", i);
    }
    s = cache_of(ctx);
    CHECK(s.kernels == 3 && s.plans == 3 && s.plans_held == 3,
          "3 pinned: kernels %llu plans %llu held %llu", (unsigned long long)s.kernels,
          (unsigned long long)s.plans, (unsigned long long)s.plans_held);
    for (int i = 0; i < 3; ++i)
        jg_plan_release(p[i]);
    s = cache_of(ctx);
    CHECK(s.kernels == 2 && s.plans == 2 && s.plans_held == 0,
          "released: kernels %llu plans %llu held %llu", (unsigned long long)s.kernels,
          (unsigned long long)s.plans, (unsigned long long)s.plans_held);
    jg_context_destroy(ctx);
}

/* Quantization kernels count too: offline each call compiles its kernel
 * and is then refused (JG_ERR_OFFLINE), leaving the cache within its bound. */
static void test_quantize(void)
{
    jg_context *ctx = NULL;
    CHECK(make_context(JG_CONTEXT_MAX_KERNELS, 1, NULL, &ctx) == JG_OK, "context");
    if (!ctx)
        return;
    for (int64_t cols = 128; cols <= 384; cols += 128) {
        jg_quant_problem q;
        jg_quant_args a;
        memset(&q, 0, sizeof q);
        memset(&a, 0, sizeof a);
        q.src_type = JG_BF16;
        q.scale = JG_SCALE_TENSOR;
        q.rows = 64;
        q.cols = cols;
        a.src = a.dst = (void *)(uintptr_t)0x10000;
        a.scale = (float *)(uintptr_t)0x10000;
        CHECK(jg_quantize_e4m3(ctx, &q, &a, NULL) == JG_ERR_OFFLINE, "quantize %lld: %s",
              (long long)cols, jg_context_last_error(ctx));
        jg_cache_stats s = cache_of(ctx);
        CHECK(s.kernels == 1 && s.kernel_evictions == (uint64_t)(cols / 128 - 1),
              "after quantizing %lld columns: kernels %llu (evicted %llu)", (long long)cols,
              (unsigned long long)s.kernels, (unsigned long long)s.kernel_evictions);
    }
    jg_context_destroy(ctx);
}

/* With no bound nothing is evicted. */
static void test_unlimited(void)
{
    jg_context *ctx = NULL;
    CHECK(make_context(JG_CONTEXT_MAX_KERNELS, JG_MAX_KERNELS_UNLIMITED, NULL, &ctx) == JG_OK,
          "context");
    if (!ctx)
        return;
    jg_gemm_args args;
    memset(&args, 0, sizeof args);
    args.a = args.b = args.d = (void *)(uintptr_t)0x10000;
    for (int i = 0; i < 40; ++i) {
        jg_gemm_problem pr = problem(64, 64 + 64 * i);
        jg_gemm(ctx, &pr, &args, NULL);
    }
    jg_cache_stats s = cache_of(ctx);
    CHECK(s.plans == 40 && s.plan_evictions == 0 && s.max_kernels == JG_MAX_KERNELS_UNLIMITED,
          "unlimited: plans %llu, evicted %llu", (unsigned long long)s.plans,
          (unsigned long long)s.plan_evictions);
    jg_context_destroy(ctx);
}

/* ---- threads -------------------------------------------------------------- */

enum { T_THREADS = 4, T_CALLS = 300, T_LDAS = 24, T_BOUND = 4 };

typedef struct shared {
    jg_context *ctx;
    atomic_int bad;
} shared;

/* Pinned plans (checked while pinned, then released) and one-shot calls
 * over T_LDAS plans of one kernel, evicted all the while by the others. */
static void *planner(void *arg)
{
    shared *sh = arg;
    uint64_t x = (uint64_t)(uintptr_t)&x;
    jg_gemm_args args;
    memset(&args, 0, sizeof args);
    args.a = args.b = args.d = (void *)(uintptr_t)0x10000;
    for (int i = 0; i < T_CALLS; ++i) {
        const int64_t lda = 64 + 64 * (int64_t)(jg_splitmix64(&x) % T_LDAS);
        jg_gemm_problem pr = problem(64, lda);
        if (i % 2) {
            if (jg_gemm(sh->ctx, &pr, &args, NULL) != JG_ERR_OFFLINE)
                atomic_fetch_add(&sh->bad, 1);
            continue;
        }
        jg_plan *p;
        jg_plan_info info;
        if (jg_gemm_plan(sh->ctx, &pr, &p) != JG_OK || jg_plan_get_info(p, &info) != JG_OK ||
            p->problem.lda != lda || jg_plan_release(p) != JG_OK)
            atomic_fetch_add(&sh->bad, 1);
    }
    return NULL;
}

static void test_threads(void)
{
    shared sh;
    memset(&sh, 0, sizeof sh);
    CHECK(make_context(JG_CONTEXT_MAX_KERNELS, T_BOUND, NULL, &sh.ctx) == JG_OK, "context");
    if (!sh.ctx)
        return;
    jg_gemm_problem pr = problem(64, 0);
    jg_plan *warm;
    CHECK(jg_gemm_plan(sh.ctx, &pr, &warm) == JG_OK && jg_plan_release(warm) == JG_OK,
          "the kernel, compiled once");
    pthread_t th[T_THREADS];
    for (int i = 0; i < T_THREADS; ++i)
        pthread_create(&th[i], NULL, planner, &sh);
    for (int i = 0; i < T_THREADS; ++i)
        pthread_join(th[i], NULL);
    jg_cache_stats s = cache_of(sh.ctx);
    CHECK(atomic_load(&sh.bad) == 0, "%d calls failed or saw another plan", atomic_load(&sh.bad));
    CHECK(s.plans <= T_BOUND && s.plans_held == 0 && s.kernels == 1,
          "after the threads: plans %llu (bound %d) held %llu kernels %llu",
          (unsigned long long)s.plans, T_BOUND, (unsigned long long)s.plans_held,
          (unsigned long long)s.kernels);
    CHECK(s.plan_evictions >= T_LDAS - T_BOUND, "only %llu plan evictions",
          (unsigned long long)s.plan_evictions);
    jg_context_destroy(sh.ctx);
}

int main(void)
{
    test_options();
    test_plans();
    test_kernels();
    test_quantize();
    test_unlimited();
    test_threads();
    return jg_test_result("test_cache_limit");
}
