/* Grouped GEMM, list layout, on the GPU against the FP64 reference: the
 * seeds' four benchmark cases, then random cases (1..64 groups, rows
 * including 0 and 1, every type, with and without C), each launched twice
 * on the same pointers (the second launch reuses the cached tensor maps).
 * Every group's D is poisoned before each launch and checked whole.
 *   test_grouped [--seed S] [--count N]      (default 16 random cases) */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jg_test.h"
#include "jg_test_gpu.h"

typedef struct group_bufs {
    jg_mat a, b, c, d;
} group_bufs;

typedef struct grouped_case {
    const char *name;
    int32_t groups;
    int64_t m[JG_GROUPED_MAX_GROUPS];
    int64_t n, k;
    jg_dtype ab, d;
    bool has_c;
    float alpha, beta;
} grouped_case;

static jg_grouped_problem problem_of(const grouped_case *gc)
{
    jg_grouped_problem p = {.layout = JG_GROUPED_LIST, .a_type = gc->ab, .b_type = gc->ab,
                            .c_type = gc->has_c ? gc->d : JG_DTYPE_NONE, .d_type = gc->d,
                            .groups = gc->groups, .m = gc->m, .n = gc->n, .k = gc->k};
    return p;
}

static void groups_init(group_bufs *g, const grouped_case *gc, jg_rng *r)
{
    for (int32_t i = 0; i < gc->groups; ++i) {
        memset(&g[i], 0, sizeof g[i]);
        if (!gc->m[i])
            continue;
        jg_mat_init(&g[i].a, gc->ab, gc->m[i], gc->k, 0);
        jg_mat_init(&g[i].b, gc->ab, gc->n, gc->k, 0);
        jg_mat_init(&g[i].d, gc->d, gc->m[i], gc->n, 0);
        jg_mat_fill_normal(&g[i].a, r);
        jg_mat_fill_normal(&g[i].b, r);
        jg_mat_upload(&g[i].a);
        jg_mat_upload(&g[i].b);
        if (gc->has_c) {
            jg_mat_init(&g[i].c, gc->d, gc->m[i], gc->n, 0);
            jg_mat_fill_normal(&g[i].c, r);
            jg_mat_upload(&g[i].c);
        }
    }
}

static void groups_free(group_bufs *g, const grouped_case *gc)
{
    for (int32_t i = 0; i < gc->groups; ++i) {
        if (!gc->m[i])
            continue;
        jg_mat_free(&g[i].a);
        jg_mat_free(&g[i].b);
        jg_mat_free(&g[i].d);
        if (gc->has_c)
            jg_mat_free(&g[i].c);
    }
}

/* One launch: poison every D, run, check every group with rows. */
static bool launch_and_check(jg_context *ctx, const grouped_case *gc, group_bufs *g,
                             const jg_grouped_args *args, int round, jg_rng *r)
{
    for (int32_t i = 0; i < gc->groups; ++i)
        if (gc->m[i])
            jg_mat_poison(&g[i].d);
    jg_grouped_problem p = problem_of(gc);
    jg_status st = jg_grouped(ctx, &p, args, NULL);
    CHECK(st == JG_OK, "%s: jg_grouped: %s: %s", gc->name, jg_status_name(st),
          jg_context_last_error(ctx));
    if (st != JG_OK)
        return false;
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());
    bool ok = true;
    for (int32_t i = 0; i < gc->groups; ++i) {
        if (!gc->m[i])
            continue;
        jg_mat_download(&g[i].d);
        jg_gemm_check ck = {.a = &g[i].a, .b = &g[i].b, .c = gc->has_c ? &g[i].c : NULL,
                            .d = &g[i].d, .m = gc->m[i], .alpha = gc->alpha, .beta = gc->beta};
        jg_gemm_verify(&ck, r);
        if (!ck.ok) {
            char line[512];
            jg_check_describe(&ck, line, sizeof line);
            CHECK(ck.ok, "%s round %d group %d (m %lld): %s", gc->name, round, (int)i,
                  (long long)gc->m[i], line);
            ok = false;
        }
    }
    return ok;
}

static void run_case(jg_context *ctx, const grouped_case *gc, jg_rng *r)
{
    group_bufs *g = calloc((size_t)gc->groups, sizeof *g);
    const void *a[JG_GROUPED_MAX_GROUPS] = {0}, *b[JG_GROUPED_MAX_GROUPS] = {0};
    const void *c[JG_GROUPED_MAX_GROUPS] = {0};
    void *d[JG_GROUPED_MAX_GROUPS] = {0};
    groups_init(g, gc, r);
    for (int32_t i = 0; i < gc->groups; ++i) {
        a[i] = g[i].a.dev;
        b[i] = g[i].b.dev;
        c[i] = gc->has_c ? g[i].c.dev : NULL;
        d[i] = g[i].d.dev;
    }
    jg_grouped_args args = {.a = a, .b = b, .c = gc->has_c ? c : NULL, .d = d,
                            .alpha = gc->alpha, .beta = gc->beta};
    bool ok = launch_and_check(ctx, gc, g, &args, 1, r) && launch_and_check(ctx, gc, g, &args, 2, r);
    int64_t rows = 0;
    for (int32_t i = 0; i < gc->groups; ++i)
        rows += gc->m[i];
    printf("  %-10s %2d groups, %5lld rows, n %lld k %lld %s->%s%s: %s\n", gc->name,
           (int)gc->groups, (long long)rows, (long long)gc->n, (long long)gc->k,
           jg_test_dtype_str(gc->ab), jg_test_dtype_str(gc->d), gc->has_c ? " +C" : "",
           ok ? "ok" : "FAILED");
    groups_free(g, gc);
    free(g);
}

/* The seeds' cases (shared/bench/shapes.jsonl), BF16 in and out. */
static const grouped_case seeds[] = {
    {"seed1", 8, {80, 176, 128, 72, 64, 248, 96, 160}, 4096, 7168, JG_BF16, JG_BF16, false, 1, 0},
    {"seed2", 8, {40, 76, 168, 72, 164, 148, 196, 160}, 7168, 2048, JG_BF16, JG_BF16, false, 1, 0},
    {"seed3", 2, {192, 320}, 3072, 4096, JG_BF16, JG_BF16, false, 1, 0},
    {"seed4", 2, {128, 384}, 4096, 1536, JG_BF16, JG_BF16, false, 1, 0},
};

static int64_t pick(jg_rng *r, const int64_t *v, size_t n) { return v[jg_rng_below(r, n)]; }

static grouped_case random_case(jg_rng *r, int index)
{
    static const int64_t nk[] = {8, 56, 64, 72, 128, 200, 256, 512, 520, 1024};
    static const int64_t rows[] = {0, 1, 7, 63, 64, 65, 127, 128, 129, 255, 300};
    static const jg_dtype outs[] = {JG_BF16, JG_FP16, JG_FP32};
    grouped_case gc = {.name = "random"};
    gc.groups = index == 0 ? JG_GROUPED_MAX_GROUPS : 1 + (int32_t)jg_rng_below(r, 16);
    for (int32_t i = 0; i < gc.groups; ++i)
        gc.m[i] = jg_rng_below(r, 2) ? pick(r, rows, (sizeof rows / sizeof rows[0]))
                                      : (int64_t)jg_rng_below(r, 301);
    gc.n = pick(r, nk, (sizeof nk / sizeof nk[0]));
    gc.k = pick(r, nk, (sizeof nk / sizeof nk[0]));
    gc.ab = jg_rng_below(r, 2) ? JG_BF16 : JG_FP16;
    gc.d = outs[jg_rng_below(r, 3)];
    gc.has_c = jg_rng_below(r, 2);
    gc.alpha = (float)(0.5 + 1.5 * jg_rng_uniform(r));
    gc.beta = gc.has_c ? (float)(2 * jg_rng_uniform(r) - 1) : 0.0f;
    return gc;
}

int main(int argc, char **argv)
{
    uint64_t seed = (uint64_t)time(NULL);
    int count = 16;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[i + 1], NULL, 0);
        else if (!strcmp(argv[i], "--count"))
            count = atoi(argv[i + 1]);
    }
    jg_test_gpu_init();
    printf("test_grouped: seed %llu (replay with --seed %llu)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    jg_rng r;
    jg_rng_seed(&r, seed);
    jg_context *ctx = jg_test_context();
    for (size_t i = 0; i < (sizeof seeds / sizeof seeds[0]); ++i)
        run_case(ctx, &seeds[i], &r);
    for (int i = 0; i < count; ++i) {
        grouped_case gc = random_case(&r, i);
        run_case(ctx, &gc, &r);
    }
    jg_context_destroy(ctx);
    return jg_test_result("test_grouped");
}
