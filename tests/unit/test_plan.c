/* The planner without a GPU: the ranked candidates JITGEMM_TUNE times (the
 * first is the planner's choice, all distinct and fitting, restrictions
 * honoured), A's box for a baked M below the tile, and JITGEMM_TUNE leaving
 * an offline context's plans alone. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jg_internal.h"
#include "jg_test.h"

static jg__problem_key dense(int64_t m, int64_t n, int64_t k)
{
    jg_gemm_problem p = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                         .m = m, .n = n, .k = k};
    jg__problem_key pk;
    jg__problem_key_make(&p, &pk);
    return pk;
}

/* The planner's choice for p on t (zeroed, and a failed check, if none). */
static jg__gemm_config plan_of(const jg__target *t, const jg_gemm_problem *p, const char *what)
{
    jg__problem_key pk;
    jg__problem_key_make(p, &pk);
    jg__log quiet = {0};
    jg__gemm_config c;
    memset(&c, 0, sizeof c);
    CHECK(jg__plan_gemm_sm90(t, &pk, &quiet, &c) == JG_OK, "%s: planning", what);
    return c;
}

/* Ranked, distinct, fitting, the first one the planner's choice. */
static void check_candidates(const jg__target *t, const jg__problem_key *pk, const char *what)
{
    jg__gemm_config c[JG_PLAN_CANDIDATES_MAX], chosen;
    jg__log quiet = {0};
    size_t n = jg__plan_candidates_sm90(t, pk, c, JG_PLAN_CANDIDATES_MAX);
    CHECK(n == JG_PLAN_CANDIDATES_MAX, "%s: %zu candidates, expected %d", what, n,
          JG_PLAN_CANDIDATES_MAX);
    CHECK(jg__plan_gemm_sm90(t, pk, &quiet, &chosen) == JG_OK, "%s: planning", what);
    CHECK(n > 0 && !memcmp(&c[0], &chosen, sizeof chosen), "%s: first candidate %ux%ux%u is not "
          "the planner's choice %ux%ux%u", what, c[0].block_m, c[0].block_n, c[0].block_k,
          chosen.block_m, chosen.block_n, chosen.block_k);
    for (size_t i = 0; i < n; ++i) {
        CHECK(c[i].stages >= 2 &&
                  jg__gemm_smem_bytes(&c[i], pk->d_type, pk->scale) <= (uint32_t)t->smem_per_block,
              "%s: candidate %zu does not fit (%u stages, %u bytes)", what, i, c[i].stages,
              jg__gemm_smem_bytes(&c[i], pk->d_type, pk->scale));
        for (size_t j = 0; j < i; ++j)
            CHECK(memcmp(&c[i], &c[j], sizeof c[i]), "%s: candidates %zu and %zu are the same",
                  what, j, i);
    }
    /* Fewer asked for: the same ones, in the same order. */
    jg__gemm_config few[3];
    size_t nf = jg__plan_candidates_sm90(t, pk, few, 3);
    CHECK(nf == 3 && !memcmp(few, c, sizeof few), "%s: the best 3 differ from the best 8's head",
          what);
}

static void test_candidates(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    const jg__problem_key shapes[] = {dense(4096, 4096, 4096), dense(1, 7168, 16384),
                                      dense(128, 4096, 7168), dense(300, 520, 200)};
    const char *names[] = {"4096^3", "decode m1", "decode m128", "ragged"};
    for (size_t i = 0; i < JG_ARRAY_LEN(shapes); ++i)
        check_candidates(&t, &shapes[i], names[i]);

    static const int64_t seed1[8] = {80, 176, 128, 72, 64, 248, 96, 160};
    jg_grouped_problem gp = {.layout = JG_GROUPED_LIST, .a_type = JG_BF16, .b_type = JG_BF16,
                             .d_type = JG_BF16, .groups = 8, .m = seed1, .n = 4096, .k = 7168};
    jg__problem_key gk;
    jg__grouped_key_make(&gp, &gk);
    check_candidates(&t, &gk, "grouped seed1");

    /* Restrictions hold for every candidate. */
    jg__problem_key big = dense(4096, 4096, 4096);
    jg__gemm_config c[JG_PLAN_CANDIDATES_MAX];
    t.force_n = 128;
    size_t n = jg__plan_candidates_sm90(&t, &big, c, JG_PLAN_CANDIDATES_MAX);
    CHECK(n > 0, "JITGEMM_TILE=x128: no candidate");
    for (size_t i = 0; i < n; ++i)
        CHECK(c[i].block_n == 128, "JITGEMM_TILE=x128: candidate %zu has BLOCK_N %u", i,
              c[i].block_n);
    t.force_n = 0;
    t.force_cluster = 2;
    n = jg__plan_candidates_sm90(&t, &big, c, JG_PLAN_CANDIDATES_MAX);
    for (size_t i = 0; i < n; ++i)
        CHECK(c[i].cluster == 2 && c[i].block_n % 16 == 0,
              "JITGEMM_CLUSTER=2: candidate %zu has cluster %u, BLOCK_N %u", i, c[i].cluster,
              c[i].block_n);
    t.force_cluster = 0;

    snprintf(t.arch_name, sizeof t.arch_name, "sm_80");
    CHECK(jg__plan_candidates_sm90(&t, &big, c, JG_PLAN_CANDIDATES_MAX) == 0,
          "sm_80 has no table but got candidates");
}

/* A baked M below the tile loads M rows of A, rounded up to 8. */
static void test_a_box(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    jg__log quiet = {0};
    const struct {
        int64_t m;
        uint32_t want; /* 0: the whole tile */
    } rows[] = {{1, 8}, {16, 16}, {20, 24}, {64, 0}, {4096, 0}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        jg__problem_key pk = dense(rows[i].m, 7168, 2048);
        jg__gemm_config c;
        CHECK(jg__plan_gemm_sm90(&t, &pk, &quiet, &c) == JG_OK, "planning m=%lld",
              (long long)rows[i].m);
        uint32_t want = rows[i].want && rows[i].want < c.block_m ? rows[i].want : c.block_m;
        CHECK(c.a_box_m == want, "m=%lld: A box %u rows, expected %u (tile %u)",
              (long long)rows[i].m, c.a_box_m, want, c.block_m);
    }
    /* M-generic: any M may come, the box is the tile. */
    jg_gemm_problem p = {.flags = JG_GEMM_M_GENERIC, .a_type = JG_BF16, .b_type = JG_BF16,
                         .d_type = JG_BF16, .m = 1, .n = 7168, .k = 2048};
    const jg__gemm_config c = plan_of(&t, &p, "M-generic");
    CHECK(c.a_box_m == c.block_m, "M-generic: A box %u rows, tile %u", c.a_box_m, c.block_m);
}

/* JITGEMM_TUNE needs a GPU: an offline context plans as without it. */
static void test_tune_offline(void)
{
    jg_gemm_problem p = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                         .m = 1000, .n = 1000, .k = 1000};
    jg__gemm_key keys[2];
    for (int tune = 0; tune < 2; ++tune) {
        if (tune)
            setenv("JITGEMM_TUNE", "1", 1);
        jg_options o = {.flags = JG_CONTEXT_OFFLINE, .arch = "sm_90a", .cache_mode = JG_CACHE_OFF};
        jg_context *ctx = NULL;
        CHECK(jg_context_create(&o, &ctx) == JG_OK, "offline context: %s",
              jg_context_last_error(NULL));
        if (ctx) {
            CHECK(!ctx->tune, "JITGEMM_TUNE=1 enabled tuning in an offline context");
            CHECK(jg__gemm_kernel_key(ctx, &p, &keys[tune]) == JG_OK, "kernel key: %s",
                  jg_context_last_error(ctx));
            jg_context_destroy(ctx);
        }
        unsetenv("JITGEMM_TUNE");
    }
    CHECK(!memcmp(&keys[0], &keys[1], sizeof keys[0]), "JITGEMM_TUNE changed an offline plan");
}

/* NVFP4 decode rows go to swap-AB with 64 weight rows a tile; the
 * activation rows are split in two tiles where twice the tiles still fit in
 * one wave (measured on H100: M = 128, N = 4096), not where they would
 * take a second wave. Slabs of 128 weight rows (K split in clusters of 2)
 * for 32 to 64 activation rows a tile where the clusters still fill most
 * SMs and K has at least 28 stages (H100: M = 64, N = 7168, K = 16384
 * faster by 11%; M = 32, K = 4096 slower by 6%, M = 64, K = 2048 by 16%). */
static void test_nvfp4_swap_rows(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    const struct {
        int64_t m, n, k;
        uint32_t block_m, block_n;
    } rows[] = {{1, 7168, 16384, 8, 64},      {16, 4096, 7168, 16, 64},
                {64, 7168, 16384, 64, 128},   {64, 7168, 2048, 64, 64},
                {32, 7168, 4096, 32, 64},     {32, 7168, 7168, 32, 128},
                {64, 4096, 7168, 64, 64},     {128, 4096, 7168, 64, 128},
                {96, 4096, 7168, 64, 128},    {128, 7168, 16384, 128, 64},
                {128, 7168, 2048, 128, 64},   {256, 4096, 7168, 128, 64}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        jg_gemm_problem p = {.a_type = JG_NVFP4, .b_type = JG_NVFP4, .d_type = JG_BF16,
                             .m = rows[i].m, .n = rows[i].n, .k = rows[i].k,
                             .scale = JG_SCALE_NVFP4, .a_sf_layout = JG_SF_SWIZZLED_128X4,
                             .b_sf_layout = JG_SF_SWIZZLED_128X4};
        const jg__gemm_config c = plan_of(&t, &p, "nvfp4 decode");
        CHECK(c.swap && c.block_n == rows[i].block_n && c.block_m == rows[i].block_m &&
                  (c.block_n == 64 || c.cluster == 2),
              "nvfp4 %lldx%lldx%lld: swap %u, tile %ux%u, cluster %u, expected swap-AB %ux%u",
              (long long)rows[i].m, (long long)rows[i].n, (long long)rows[i].k, c.swap,
              c.block_m, c.block_n, c.cluster, rows[i].block_m, rows[i].block_n);
    }
}

/* Clusters of 2 by default for dense FP8 prefill with K >= 16384 only;
 * JITGEMM_CLUSTER=1 (force_cluster 1) turns them off; FP8 K splits into
 * promotion chunks that divide its stages (K = 1536: 6 + 6, not 8 + 4);
 * which block-scaled kernels stage A's scales. */
static void test_fp8_defaults(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    const struct {
        int64_t m, n, k;
        uint32_t cluster, force, chunk;
    } rows[] = {{4096, 7168, 16384, 2, 0, 8}, {4096, 7168, 16384, 1, 1, 8},
                {8192, 8192, 8192, 1, 0, 8},  {128, 7168, 16384, 1, 0, 8},
                {4096, 4096, 1536, 1, 0, 6},  {4096, 4096, 640, 1, 0, 5}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        jg_gemm_problem p = {.a_type = JG_E4M3, .b_type = JG_E4M3, .d_type = JG_BF16,
                             .m = rows[i].m, .n = rows[i].n, .k = rows[i].k,
                             .scale = JG_SCALE_TENSOR};
        t.force_cluster = rows[i].force;
        const jg__gemm_config c = plan_of(&t, &p, "fp8 defaults");
        CHECK(c.cluster == rows[i].cluster && c.promote_chunk == rows[i].chunk,
              "fp8 %lldx%lldx%lld (JITGEMM_CLUSTER %u): cluster %u, chunk %u; expected %u, %u",
              (long long)rows[i].m, (long long)rows[i].n, (long long)rows[i].k, rows[i].force,
              c.cluster, c.promote_chunk, rows[i].cluster, rows[i].chunk);
    }
    /* Block scales: A's staged in shared memory where that costs no stage
     * (decode tiles), read from global memory by 128x128 tiles. */
    const struct {
        int64_t m, n, k;
        uint32_t staged;
    } block[] = {{128, 7168, 16384, 1}, {64, 4096, 7168, 1}, {16, 7168, 2048, 1},
                 {4096, 7168, 16384, 0}, {8192, 8192, 8192, 0}};
    t.force_cluster = 0;
    for (size_t i = 0; i < JG_ARRAY_LEN(block); ++i) {
        jg_gemm_problem p = {.a_type = JG_E4M3, .b_type = JG_E4M3, .d_type = JG_BF16,
                             .m = block[i].m, .n = block[i].n, .k = block[i].k,
                             .scale = JG_SCALE_BLOCK};
        const jg__gemm_config c = plan_of(&t, &p, "fp8 block");
        CHECK(c.a_scales_smem == block[i].staged,
              "fp8 block %lldx%lldx%lld: A scales staged %u (tile %ux%u, %u stages), expected %u",
              (long long)block[i].m, (long long)block[i].n, (long long)block[i].k,
              c.a_scales_smem, c.block_m, c.block_n, c.stages, block[i].staged);
    }
}

int main(void)
{
    test_candidates();
    test_fp8_defaults();
    test_a_box();
    test_nvfp4_swap_rows();
    test_tune_offline();
    return jg_test_result("test_plan");
}
