/* The planner without a GPU: the ranked candidates JITGEMM_TUNE times (the
 * first is the planner's choice, all distinct and fitting, restrictions
 * honoured), A's box for a baked M below the tile, JITGEMM_TUNE leaving
 * an offline context's plans alone, and the NVFP4 list layout with a
 * workspace (sm90_nvfp4_pre.cu): its chunks, workspace size and config,
 * and the tables emitted into its source. */
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

/* An H100 whose planner keeps to the plain tiles (the families the
 * measured table may choose instead, forced off): the model's own rules. */
static void plain_target(jg__target *t)
{
    jg_test_h100_target(t);
    t->force_swap = 1;  /* JITGEMM_SWAP=0 */
    t->force_split = 1; /* JITGEMM_SPLIT=1 */
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

/* Ranked, distinct, fitting, the first one the planner's choice without a
 * workspace (the tuner times them without one: no split through it, no
 * stream-K). */
static void check_candidates(const jg__target *t, const jg__problem_key *pk, const char *what)
{
    jg__gemm_config c[JG_PLAN_CANDIDATES_MAX], chosen;
    jg__log quiet = {0};
    size_t n = jg__plan_candidates_sm90(t, pk, c, JG_PLAN_CANDIDATES_MAX);
    CHECK(n == JG_PLAN_CANDIDATES_MAX, "%s: %zu candidates, expected %d", what, n,
          JG_PLAN_CANDIDATES_MAX);
    jg__target none = *t;
    none.force_split_ws = none.force_stream_k = 1;
    CHECK(jg__plan_gemm_sm90(&none, pk, &quiet, &chosen) == JG_OK, "%s: planning", what);
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
                                      dense(128, 4096, 7168), dense(300, 520, 200),
                                      dense(80, 7168, 2048)};
    const char *names[] = {"4096^3", "decode m1", "decode m128", "ragged",
                           "decode m80 (tall tiles)"};
    for (size_t i = 0; i < JG_ARRAY_LEN(shapes); ++i)
        check_candidates(&t, &shapes[i], names[i]);

    static const int64_t seed1[8] = {80, 176, 128, 72, 64, 248, 96, 160};
    jg_grouped_problem gp = {.layout = JG_GROUPED_LIST, .a_type = JG_BF16, .b_type = JG_BF16,
                             .d_type = JG_BF16, .groups = 8, .m = seed1, .n = 4096, .k = 7168};
    jg__problem_key gk;
    jg__grouped_key_make(&gp, &gk);
    check_candidates(&t, &gk, "grouped seed1");

    /* The first four (what JITGEMM_TUNE times) hold a plan of each family:
     * plain tiles, swap-AB, split-K over a cluster (209x4736x15968: the
     * planner's plain tiles ran at 0.79x swap-AB's speed on an H200). */
    {
        const jg__problem_key mid = dense(209, 4736, 15968);
        jg__gemm_config f[4];
        const size_t nf = jg__plan_candidates_sm90(&t, &mid, f, 4);
        bool plain = false, swap = false, split = false;
        for (size_t i = 0; i < nf; ++i) {
            plain |= !f[i].swap_ab && f[i].split_k <= 1;
            swap |= f[i].swap_ab && f[i].split_k <= 1;
            split |= f[i].split_k > 1;
        }
        CHECK(nf == 4 && plain && swap && split,
              "209x4736x15968: %zu candidates, plain %d swap-AB %d split-K %d", nf, plain, swap,
              split);
    }

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
    t.force_cluster = 4;
    n = jg__plan_candidates_sm90(&t, &big, c, JG_PLAN_CANDIDATES_MAX);
    CHECK(n > 0, "JITGEMM_CLUSTER=4: no candidate");
    for (size_t i = 0; i < n; ++i)
        CHECK(c[i].cluster == 4 && c[i].block_n % 32 == 0,
              "JITGEMM_CLUSTER=4: candidate %zu has cluster %u, BLOCK_N %u", i, c[i].cluster,
              c[i].block_n);
    t.force_cluster = 0;

    snprintf(t.arch_name, sizeof t.arch_name, "sm_80");
    CHECK(jg__plan_candidates_sm90(&t, &big, c, JG_PLAN_CANDIDATES_MAX) == 0,
          "sm_80 has no table but got candidates");
}

/* The plan log's last message. */
static void keep_last(void *user, jg_log_level level, const char *category, const char *msg)
{
    (void)level;
    (void)category;
    snprintf((char *)user, 512, "%s", msg);
}

/* The plan of p, its log's last message in msg (512 bytes). */
static jg__gemm_config plan_logged(const jg__target *t, const jg_gemm_problem *p, char *msg,
                                   const char *what)
{
    jg__problem_key pk;
    jg__problem_key_make(p, &pk);
    jg__log log = {.fn = keep_last, .user = msg, .mask = JG_LOGC_PLAN};
    jg__gemm_config c;
    memset(&c, 0, sizeof c);
    CHECK(jg__plan_gemm_sm90(t, &pk, &log, &c) == JG_OK, "%s: planning", what);
    return c;
}

/* Between 64 and 128 rows one 128-row tile of width w replaces two 64-row
 * tiles of width 2w (plan_sm90.c, tall_tiles_for_pairs), at 128 rows only
 * where the pair is at least 96 wide, and for BF16 only up to K = 8192; at
 * 64 rows, at 128 outside those bounds, and where no such tile exists, the
 * model's choice stands. */
static void test_tall_tiles(void)
{
    jg__target t;
    plain_target(&t);
    static const struct {
        int64_t m, n, k;
        uint32_t block_m[2]; /* [0] BF16, [1] FP8 */
        uint32_t block_n;    /* 0: any width */
    } rows[] = {
        {65, 7168, 2048, {128, 128}, 56},  {80, 7168, 16384, {128, 128}, 56},
        {112, 7168, 2048, {128, 128}, 56}, {100, 2048, 4096, {128, 128}, 24},
        {128, 7168, 2048, {128, 128}, 56}, {128, 8192, 7168, {128, 128}, 64},
        {128, 5120, 7168, {64, 64}, 80},   {128, 2048, 4096, {64, 64}, 0},
        {128, 7168, 16384, {64, 128}, 0},  {64, 7168, 2048, {64, 64}, 0},
    };
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        for (int fp8 = 0; fp8 < 2; ++fp8) {
            jg_gemm_problem p = {.a_type = fp8 ? JG_E4M3 : JG_BF16,
                                 .b_type = fp8 ? JG_E4M3 : JG_BF16,
                                 .d_type = JG_BF16,
                                 .m = rows[i].m,
                                 .n = rows[i].n,
                                 .k = rows[i].k,
                                 .scale = fp8 ? JG_SCALE_TENSOR : JG_SCALE_NONE};
            char what[96];
            snprintf(what, sizeof what, "%s %lldx%lldx%lld", fp8 ? "fp8" : "bf16",
                     (long long)rows[i].m, (long long)rows[i].n, (long long)rows[i].k);
            const jg__gemm_config c = plan_of(&t, &p, what);
            const uint32_t bm = rows[i].block_m[fp8], bn = rows[i].block_n;
            CHECK(c.block_m == bm && (!bn || c.block_n == bn), "%s: tile %ux%u, expected %ux%u",
                  what, c.block_m, c.block_n, bm, bn);
        }
    }
    /* JITGEMM_LOG=plan says so, and only then. */
    for (int tall = 0; tall < 2; ++tall) {
        char msg[512] = "";
        jg__log log = {.fn = keep_last, .user = msg, .mask = JG_LOGC_PLAN};
        jg__problem_key pk = dense(tall ? 100 : 128, 7168, 16384);
        jg__gemm_config c;
        CHECK(jg__plan_gemm_sm90(&t, &pk, &log, &c) == JG_OK, "planning m=%lld", (long long)pk.m);
        CHECK(!strstr(msg, "in place of two 64x112 tiles") == !tall, "m=%lld: plan log \"%s\"",
              (long long)pk.m, msg);
    }
    /* A forced 64-row tile is kept. */
    plain_target(&t);
    t.force_m = 64;
    jg_gemm_problem p = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                         .m = 80, .n = 7168, .k = 2048};
    const jg__gemm_config c = plan_of(&t, &p, "JITGEMM_TILE=64x: m80");
    CHECK(c.block_m == 64, "JITGEMM_TILE=64x: m80 got %ux%u", c.block_m, c.block_n);
}

/* A baked M below the tile loads M rows of A, rounded up to 8. */
static void test_a_box(void)
{
    jg__target t;
    plain_target(&t);
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
    /* M-generic plans: test_generic_a_box */
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
    plain_target(&t);
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

/* Rows that start off 128-byte lines (FP8 K not a multiple of 128, 16-bit
 * K not a multiple of 16) take clusters of 2 from M = 1024; below M = 1024
 * only FP8 rows off 32-byte sectors, from M = 129 (with 128-byte L2
 * promotion clusters of 4 ran 0.97x clusters of 2 on them); rows on lines
 * keep their plans; a padded lda/ldb puts the rows back on lines. */
static void test_rows_off_lines(void)
{
    jg__target t;
    plain_target(&t);
    t.force_n_stack = 1; /* clusters stacked along M alone (test_n_stack: along N) */
    const struct {
        jg_dtype type;
        int64_t m, k, ld;
        uint32_t cluster;
    } rows[] = {
        {JG_E4M3, 4096, 4736, 0, 1},    {JG_E4M3, 4096, 4784, 0, 2},   {JG_E4M3, 4096, 4768, 0, 2},
        {JG_E4M3, 4096, 4784, 4864, 1}, {JG_E4M3, 512, 4784, 0, 2},    {JG_E4M3, 512, 4768, 0, 1},
        {JG_E4M3, 100, 4784, 0, 1},     {JG_BF16, 4096, 4736, 0, 1},   {JG_BF16, 4096, 4744, 0, 2},
        {JG_BF16, 4096, 4752, 0, 1},    {JG_BF16, 4096, 4744, 4752, 1}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_gemm_problem p = {.a_type = rows[i].type, .b_type = rows[i].type,
                                   .d_type = JG_BF16, .m = rows[i].m, .n = 8192, .k = rows[i].k,
                                   .lda = rows[i].ld, .ldb = rows[i].ld,
                                   .scale = rows[i].type == JG_E4M3 ? JG_SCALE_TENSOR : 0};
        const jg__gemm_config c = plan_of(&t, &p, "rows off lines");
        CHECK(c.cluster == rows[i].cluster,
              "%s %lldx8192x%lld, lda = ldb = %lld: cluster %u, expected %u",
              rows[i].type == JG_E4M3 ? "fp8" : "bf16", (long long)rows[i].m,
              (long long)rows[i].k, (long long)rows[i].ld, c.cluster, rows[i].cluster);
    }
    /* Clusters of 4 (JITGEMM_CLUSTER=4) only on tiles at least 128 wide,
     * also where the GPU holds fewer of them than SMs / 4 (say 32, and 66 of
     * 2): swap-AB's 1346x5760x18512 had taken 128x32 tiles (its M 32
     * wide), 3x slower; without the rule 2942x3584x11008 takes 128x96 where
     * the counts are unknown. */
    static const int64_t wide[][3] = {{1346, 5760, 18512}, {2942, 3584, 11008}};
    for (int known = 0; known < 2; ++known)
        for (size_t i = 0; i < JG_ARRAY_LEN(wide); ++i) {
            jg_test_h100_target(&t);
            t.resident_clusters[2] = known ? 66 : 0;
            t.resident_clusters[4] = known ? 32 : 0;
            t.force_cluster = 4;
            const jg_gemm_problem p = {.a_type = JG_E4M3,
                                       .b_type = JG_E4M3,
                                       .d_type = JG_BF16,
                                       .m = wide[i][0],
                                       .n = wide[i][1],
                                       .k = wide[i][2],
                                       .scale = JG_SCALE_TENSOR};
            const jg__gemm_config c = plan_of(&t, &p, "clusters of 4");
            CHECK(c.cluster != 4 || c.block_n >= 128,
                  "fp8 %lldx%lldx%lld: cluster 4 on %ux%u tiles", (long long)p.m, (long long)p.n,
                  (long long)p.k, c.block_m, c.block_n);
        }
}

/* Exact FP32 promotes its TF32 sums stage by stage (sm90_gemm.cu,
 * JG_EXACT): every candidate, in every family the table or the forced
 * families give, has chunks of promotions and tiles narrow enough for the
 * three sets of sums; plain TF32 keeps one accumulator. */
static void test_exact_promote(void)
{
    static const int64_t shapes[][3] = {
        {4096, 7168, 16384}, {8192, 8192, 8192}, {2048, 2048, 2048}, {128, 7168, 16384},
        {64, 4096, 7168},    {16, 7168, 2048},   {1, 7168, 16384},   {17, 2999, 513},
        {200, 1024, 14336},  {1, 1, 1}};
    jg__target t;
    jg_test_h100_target(&t);
    size_t n = 0;
    for (int forced = 0; forced < 3; ++forced) {
        t.force_swap = forced == 1 ? 2 : 0;             /* JITGEMM_SWAP=1 */
        t.force_split = forced == 2 ? JG_SPLIT_ANY : 0; /* JITGEMM_SPLIT=any */
        for (size_t i = 0; i < JG_ARRAY_LEN(shapes); ++i)
            for (int exact = 0; exact < 2; ++exact) {
                jg_gemm_problem p = {.flags = exact ? JG_GEMM_FP32_EXACT : 0,
                                     .a_type = JG_FP32, .b_type = JG_FP32, .d_type = JG_FP32,
                                     .m = shapes[i][0], .n = shapes[i][1], .k = shapes[i][2]};
                jg__problem_key pk;
                jg__problem_key_make(&p, &pk);
                jg__gemm_config c[JG_PLAN_CANDIDATES_MAX];
                const size_t found = jg__plan_candidates_sm90(&t, &pk, c, JG_ARRAY_LEN(c));
                CHECK(found > 0, "fp32%s %lldx%lldx%lld: no candidate", exact ? " exact" : "",
                      (long long)p.m, (long long)p.n, (long long)p.k);
                for (size_t j = 0; j < found; ++j, ++n)
                    CHECK(exact ? c[j].promote_chunk > 0 && c[j].block_n <= 128
                                : c[j].promote_chunk == 0,
                          "fp32%s %lldx%lldx%lld (forced %d), candidate %zu %ux%u: chunk %u",
                          exact ? " exact" : "", (long long)p.m, (long long)p.n,
                          (long long)p.k, forced, j, c[j].block_m, c[j].block_n,
                          c[j].promote_chunk);
            }
    }
    CHECK(n > 60, "exact promote: only %zu candidates checked", n);
}

/* ---- NVFP4 list layout with a workspace (sm90_nvfp4_pre.cu) ------------- */

/* Each chunk of out[0..n) as "group:row0+rows", for messages. */
static const char *chunks_text(const jg__pre_chunk *c, uint32_t n, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = 0;
    for (uint32_t i = 0; i < n && used < cap; ++i)
        used += (size_t)snprintf(buf + used, cap - used, " %u:%u+%u", c[i].group, c[i].row0,
                                 c[i].rows);
    return buf;
}

/* Each group's rows cut into near-equal chunks of at most chunk_rows (0 or
 * past 256: 256), empty groups skipped, tallest first (ties: lower group,
 * then lower row). */
static void test_pre_chunks(void)
{
    static const struct {
        const char *what;
        uint32_t groups, chunk_rows;
        int64_t m[6];
        uint32_t n;
        struct {
            uint32_t group, row0, rows;
        } want[8]; /* the width: the rows rounded up to 8 */
    } rows[] = {
        {"256 rows: one chunk", 1, 256, {256}, 1, {{0, 0, 256}}},
        {"257 rows: 129 + 128", 1, 256, {257}, 2, {{0, 0, 129}, {0, 129, 128}}},
        {"1000 rows: 4 x 250", 1, 256, {1000}, 4, {{0, 0, 250}, {0, 250, 250}, {0, 500, 250},
                                               {0, 750, 250}}},
        {"empty groups skipped", 4, 256, {0, 5, 0, 0}, 1, {{1, 0, 5}}},
        {"no rows at all", 3, 256, {0, 0, 0}, 0, {{0}}},
        {"300, 17, 0", 3, 256, {300, 17, 0}, 3, {{0, 0, 150}, {0, 150, 150}, {1, 0, 17}}},
        /* tallest first; equal heights keep the lower group, then row, first */
        {"ties, stable", 5, 256, {64, 200, 64, 0, 400}, 5,
         {{1, 0, 200}, {4, 0, 200}, {4, 200, 200}, {0, 0, 64}, {2, 0, 64}}},
        {"513 rows: 171 x 3, then 1", 2, 256, {1, 513}, 4,
         {{1, 0, 171}, {1, 171, 171}, {1, 342, 171}, {0, 0, 1}}},
        /* other heights: 128, 64; 0 and 257 mean 256 */
        {"300, 17, 0 by 128", 3, 128, {300, 17, 0}, 4,
         {{0, 0, 100}, {0, 100, 100}, {0, 200, 100}, {1, 0, 17}}},
        {"130, 64 by 64", 2, 64, {130, 64}, 4, {{1, 0, 64}, {0, 0, 44}, {0, 44, 43}, {0, 87, 43}}},
        {"300 by 0", 1, 0, {300}, 2, {{0, 0, 150}, {0, 150, 150}}},
        {"300 by 257", 1, 257, {300}, 2, {{0, 0, 150}, {0, 150, 150}}},
    };
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        jg__pre_chunk got[16];
        memset(got, 0xa5, sizeof got);
        const uint32_t n = jg__pre_chunks(rows[i].m, rows[i].groups, rows[i].chunk_rows, got,
                                          JG_ARRAY_LEN(got));
        char text[256];
        CHECK(n == rows[i].n, "%s: %u chunks, expected %u:%s", rows[i].what, n, rows[i].n,
              chunks_text(got, n < 16 ? n : 16, text, sizeof text));
        /* at most 8 heights here: each chunk's width its rows rounded up to 8 */
        for (uint32_t c = 0; c < n && c < rows[i].n; ++c)
            CHECK(got[c].group == rows[i].want[c].group && got[c].row0 == rows[i].want[c].row0 &&
                      got[c].rows == rows[i].want[c].rows &&
                      got[c].width == (got[c].rows + 7) / 8 * 8,
                  "%s: chunk %u is %u:%u+%u at %u, expected %u:%u+%u", rows[i].what, c,
                  got[c].group, got[c].row0, got[c].rows, got[c].width, rows[i].want[c].group,
                  rows[i].want[c].row0, rows[i].want[c].rows);
    }
    /* More chunks than fit: all counted, none written past max. */
    static const int64_t many[3] = {100, 1000, 40};
    jg__pre_chunk out[8];
    memset(out, 0xa5, sizeof out);
    uint32_t n = jg__pre_chunks(many, 3, 256, out, 3);
    CHECK(n == 6, "100, 1000, 40 into 3: counted %u, expected 6", n);
    for (uint32_t c = 3; c < JG_ARRAY_LEN(out); ++c)
        CHECK(out[c].group == 0xa5a5a5a5u && out[c].row0 == 0xa5a5a5a5u &&
                  out[c].rows == 0xa5a5a5a5u,
              "into 3: chunk %u written (%u:%u+%u)", c, out[c].group, out[c].row0, out[c].rows);
    memset(out, 0xa5, sizeof out);
    n = jg__pre_chunks(many, 3, 256, out, 0);
    CHECK(n == 6 && out[0].rows == 0xa5a5a5a5u, "into 0: counted %u, chunk 0 rows %u", n,
          out[0].rows);
    /* Exactly max: all written, sorted. */
    n = jg__pre_chunks(many, 3, 256, out, 6);
    char text[256];
    CHECK(n == 6 && out[0].rows == 250 && out[3].rows == 250 && out[4].rows == 100 &&
              out[5].rows == 40 && out[5].group == 2,
          "into 6: %u chunks:%s", n, chunks_text(out, n < 8 ? n : 8, text, sizeof text));

    /* The workspace: every group's rows, K rounded up to 64, 2 bytes each. */
    static const int64_t seed1[8] = {80, 176, 128, 72, 64, 248, 96, 160};
    const uint64_t ws = jg__pre_workspace_bytes(seed1, 8, 7168);
    CHECK(ws == UINT64_C(1024) * 7168 * 2, "seed1, k 7168: %llu bytes", (unsigned long long)ws);
    static const int64_t two[3] = {520, 0, 8};
    const uint64_t ws96 = jg__pre_workspace_bytes(two, 3, 96);
    CHECK(ws96 == UINT64_C(528) * 128 * 2, "520, 0, 8, k 96 (128 rounded): %llu bytes",
          (unsigned long long)ws96);
    const uint64_t ws64 = jg__pre_workspace_bytes(two, 3, 64);
    CHECK(ws64 == UINT64_C(528) * 64 * 2, "k 64 (whole): %llu bytes", (unsigned long long)ws64);
    static const int64_t none[2] = {0, 0};
    CHECK(jg__pre_workspace_bytes(none, 2, 7168) == 0, "no rows: a workspace");
}

/* The least padding of chunks of distinct widths w[0] > ... > w[d-1]
 * (count[i] each) over every choice of `keep` of them with w[0] among
 * them, each width run at the narrowest kept one above it: by brute force
 * over the subsets of w[1..d). */
static uint64_t least_padding(const uint32_t *w, const uint32_t *count, uint32_t d, uint32_t keep)
{
    uint64_t least = UINT64_MAX;
    for (uint32_t set = 0; set < 1u << (d - 1); ++set) {
        if ((uint32_t)__builtin_popcount(set) != keep - 1)
            continue;
        uint64_t pad = 0;
        for (uint32_t i = 1, at = w[0]; i < d; ++i) {
            if (set >> (i - 1) & 1)
                at = w[i];
            pad += (uint64_t)count[i] * (at - w[i]);
        }
        least = pad < least ? pad : least;
    }
    return least;
}

/* Past JG_PRE_MAX_WIDTHS distinct heights (rounded up to 8), the chunks'
 * widths: multiples of 8 that hold their rows, at most JG_PRE_MAX_WIDTHS of
 * them, each the height of some chunk, each chunk at the narrowest of them
 * that holds it, with the least padding in all (brute force). */
static void test_pre_widths(void)
{
    uint32_t x = 12345; /* a fixed LCG: the same problems every run */
    for (int trial = 0; trial < 40; ++trial) {
        int64_t m[24];
        const uint32_t groups = 9 + (uint32_t)trial % 16;
        for (uint32_t g = 0; g < groups; ++g) {
            x = x * 1664525u + 1013904223u;
            /* trial 0: 8, 16, ... 8 groups (no cap); later ones random up to 300 */
            m[g] = trial == 0 ? 8 * (int64_t)(g % 8 + 1) : (int64_t)(x >> 8) % 301;
        }
        jg__pre_chunk c[64];
        const uint32_t n = jg__pre_chunks(m, groups, 256, c, JG_ARRAY_LEN(c));
        CHECK(n <= JG_ARRAY_LEN(c), "trial %d: %u chunks", trial, n);
        if (n > JG_ARRAY_LEN(c))
            continue;
        /* the heights' distinct widths, tallest first, and the kept ones */
        uint32_t w[32], count[32], d = 0, kept[32], nk = 0;
        bool ok = true;
        for (uint32_t i = 0; i < n; ++i) {
            const uint32_t own = (c[i].rows + 7) / 8 * 8;
            if (d == 0 || w[d - 1] != own) {
                ok = ok && (d == 0 || w[d - 1] > own) && d < 32;
                w[d] = own;
                count[d++] = 0;
            }
            count[d - 1]++;
            ok = ok && c[i].width % 8 == 0 && c[i].width >= own && c[i].width <= 256;
            uint32_t k = 0;
            while (k < nk && kept[k] != c[i].width)
                ++k;
            if (k == nk)
                kept[nk++] = c[i].width;
        }
        CHECK(ok, "trial %d: widths not multiples of 8 holding their rows, or unsorted", trial);
        CHECK(nk <= JG_PRE_MAX_WIDTHS, "trial %d: %u widths", trial, nk);
        if (!ok || nk > JG_PRE_MAX_WIDTHS)
            continue;
        uint64_t pad = 0;
        for (uint32_t i = 0; i < n; ++i) {
            const uint32_t own = (c[i].rows + 7) / 8 * 8;
            bool narrowest = true, a_height = false;
            for (uint32_t k = 0; k < nk; ++k)
                narrowest = narrowest && !(kept[k] >= own && kept[k] < c[i].width);
            for (uint32_t j = 0; j < n; ++j)
                a_height = a_height || (c[j].rows + 7) / 8 * 8 == c[i].width;
            ok = ok && narrowest && a_height;
            pad += c[i].width - own;
        }
        CHECK(ok, "trial %d: a chunk not at the narrowest kept width, or a width no chunk has",
              trial);
        const uint64_t least =
            d <= JG_PRE_MAX_WIDTHS ? 0 : least_padding(w, count, d, JG_PRE_MAX_WIDTHS);
        CHECK(pad == least, "trial %d (%u heights): %llu rows padded, the least is %llu", trial,
              d, (unsigned long long)pad, (unsigned long long)least);
        CHECK(trial != 0 || (d == 8 && pad == 0), "trial 0: 8 heights padded (%llu rows)",
              (unsigned long long)pad);
    }
}

/* Tiles to CTAs, each to the least loaded so far (the first of equals):
 * a tile costs its rows rounded up to 8, at least 128, plus 16. */
static void test_pre_balance(void)
{
    static const int64_t small[3] = {300, 17, 0};
    jg__pre_chunk chunks[8];
    uint16_t cta[64];
    /* 150, 150, 17 rows by 8 weight tiles over 24 CTAs: one tile each,
     * in order; 168 (152 + 16) the most */
    uint32_t n = jg__pre_chunks(small, 3, 256, chunks, 8);
    memset(cta, 0xff, sizeof cta);
    uint64_t span = jg__pre_balance(chunks, n, 8, 24, cta);
    bool in_order = true;
    for (uint32_t t = 0; t < 24; ++t)
        in_order &= cta[t] == t;
    CHECK(n == 3 && span == 168 && in_order && cta[24] == 0xffff,
          "150, 150, 17 over 24: span %llu, %s", (unsigned long long)span,
          in_order ? "in order" : "out of order");
    /* over 5 CTAs: the 16 tiles of 168 three rounds and one more (CTA 0 at
     * 672), the 8 of 144 (17 rows) to CTAs 1-4 twice: 504 + 288 = 792 */
    memset(cta, 0xff, sizeof cta);
    span = jg__pre_balance(chunks, n, 8, 5, cta);
    uint64_t load[5] = {0}, most = 0;
    for (uint32_t t = 0; t < 24; ++t)
        if (cta[t] < 5) {
            const uint32_t r = chunks[t / 8].rows;
            load[cta[t]] += ((r + 7) / 8 * 8 > 128 ? (r + 7) / 8 * 8 : 128) + 16;
        }
    for (int c = 0; c < 5; ++c)
        most = load[c] > most ? load[c] : most;
    CHECK(span == most && span == 792, "150, 150, 17 over 5: span %llu, the CTAs' most %llu",
          (unsigned long long)span, (unsigned long long)most);
    /* the seeds' first case by 256 rows: 256 tiles over 132 CTAs */
    static const int64_t seed1[8] = {80, 176, 128, 72, 64, 248, 96, 160};
    n = jg__pre_chunks(seed1, 8, 256, chunks, 8);
    span = jg__pre_balance(chunks, n, 32, 132, NULL);
    CHECK(n == 8 && span == 408, "seed1 over 132: span %llu, expected 408 (264 + 144)",
          (unsigned long long)span);
    CHECK(jg__pre_balance(chunks, n, 32, 0, NULL) == UINT64_MAX &&
              jg__pre_balance(chunks, n, 32, JG_PRE_MAX_GRID + 1, NULL) == UINT64_MAX,
          "no CTAs, or more than a schedule bakes: a span");
}

/* An NVFP4 list problem of `groups` rows m (both scale layouts swizzled). */
static jg__problem_key nvfp4_list(const int64_t *m, int32_t groups, int64_t n, int64_t k,
                                  uint32_t flags)
{
    jg_grouped_problem p = {.flags = flags, .layout = JG_GROUPED_LIST, .a_type = JG_NVFP4,
                            .b_type = JG_NVFP4, .d_type = JG_BF16, .groups = groups, .m = m,
                            .n = n, .k = k, .scale = JG_SCALE_NVFP4,
                            .a_sf_layout = JG_SF_SWIZZLED_128X4,
                            .b_sf_layout = JG_SF_SWIZZLED_128X4};
    jg__problem_key pk;
    jg__grouped_key_make(&p, &pk);
    return pk;
}

/* JG_GROUPED_WORKSPACE picks the pre kernel for NVFP4 list problems whose
 * chunks and tiles fit its baked tables: 128 weight rows a tile, boxes of
 * 32, 64, 128 or 256 rows (the least that holds the tallest chunk's width),
 * slots of that width rounded up to the box, one CTA a tile up to the SMs,
 * shared memory within the target's. Other problems plan as before. */
static void test_pre_planner(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    jg__log quiet = {0};
    static const int64_t seed1[8] = {80, 176, 128, 72, 64, 248, 96, 160};
    static const int64_t tall[2] = {520, 8}, small[3] = {300, 17, 0}, none[2] = {0, 0};
    static const int64_t tiny[3] = {8, 3, 0};
    int64_t ramp[40], big[40];
    for (int g = 0; g < 40; ++g) {
        ramp[g] = g + 1;
        big[g] = 2000; /* 8 chunks each: 320 in all, past JG_PRE_MAX_CHUNKS */
    }
    const struct {
        const char *what;
        jg__problem_key pk;
        uint32_t pre, block_m, box, rows; /* pre 0: another kernel */
    } rows[] = {
        /* chunks of 256: the most loaded CTA's cost 408 rows (test_pre_balance);
         * of 128, 11 chunks x 32 tiles of 144 over 132 CTAs: 432. The
         * tallest, 248 rows, in one box of 256 */
        {"seed1", nvfp4_list(seed1, 8, 4096, 7168, JG_GROUPED_WORKSPACE), 132, 256, 256, 256},
        /* 3 weight tiles: chunks of 128 (33 tiles), the tallest 124 rows */
        {"seed1 by n 264", nvfp4_list(seed1, 8, 264, 7168, JG_GROUPED_WORKSPACE), 33, 128, 128,
         128},
        /* by 256: 8 tiles, the tallest (174 rows) 192; by 128: 12 tiles of 104
         * and 8 rows, 144 each; by 64 no less: the first of the least kept */
        {"520, 8; n 136", nvfp4_list(tall, 2, 136, 96, JG_GROUPED_WORKSPACE), 12, 128, 128, 128},
        /* by 256: 24 tiles, 168; by 128: 32 tiles, 144 */
        {"300, 17, 0; n 1000", nvfp4_list(small, 3, 1000, 1056, JG_GROUPED_WORKSPACE), 32, 128,
         128, 128},
        /* every chunk one group's (up to 40 rows), whatever the height: a
         * box of 64 */
        {"40 groups 1..40", nvfp4_list(ramp, 40, 256, 512, JG_GROUPED_WORKSPACE), 80, 64, 64, 256},
        /* 8 rows at most: a box of 32 */
        {"8, 3, 0", nvfp4_list(tiny, 3, 4096, 1024, JG_GROUPED_WORKSPACE), 64, 32, 32, 256},
        {"seed1 without the flag", nvfp4_list(seed1, 8, 4096, 7168, 0), 0, 0, 0, 0},
        {"320 chunks", nvfp4_list(big, 40, 4096, 7168, JG_GROUPED_WORKSPACE), 0, 0, 0, 0},
        /* 40 chunks x 235 weight tiles: past JG_PRE_MAX_TILES */
        {"9400 tiles", nvfp4_list(ramp, 40, 30000, 512, JG_GROUPED_WORKSPACE), 0, 0, 0, 0},
        {"no rows", nvfp4_list(none, 2, 4096, 7168, JG_GROUPED_WORKSPACE), 0, 0, 0, 0},
    };
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        jg__gemm_config c;
        memset(&c, 0, sizeof c);
        CHECK(jg__plan_gemm_sm90(&t, &rows[i].pk, &quiet, &c) == JG_OK, "%s: planning",
              rows[i].what);
        CHECK(c.pre == rows[i].pre, "%s: pre %u, expected %u", rows[i].what, c.pre, rows[i].pre);
        if (!rows[i].pre || !c.pre)
            continue;
        CHECK(c.block_m == rows[i].block_m && c.block_n == 128 && c.a_box_m == rows[i].box &&
                  c.cluster == 1 && c.pre_rows == rows[i].rows,
              "%s: tile %ux%u, box %u, cluster %u, chunks of %u; expected %ux128, box %u, "
              "cluster 1, chunks of %u",
              rows[i].what, c.block_m, c.block_n, c.a_box_m, c.cluster, c.pre_rows,
              rows[i].block_m, rows[i].box, rows[i].rows);
        CHECK(c.expand_bufs >= 4 && c.expand_bufs <= 8 &&
                  jg__gemm_smem_bytes(&c, rows[i].pk.d_type, rows[i].pk.scale) <=
                      (uint32_t)t.smem_per_block,
              "%s: %u slots, %u bytes of shared memory", rows[i].what, c.expand_bufs,
              jg__gemm_smem_bytes(&c, rows[i].pk.d_type, rows[i].pk.scale));
    }
}

/* The numbers of `#define NAME {a, b, ...}` (nested braces flattened) in
 * src, up to cap; how many, or -1 without the define. */
static int define_list(const char *src, const char *name, uint32_t *out, int cap)
{
    char key[64];
    snprintf(key, sizeof key, "#define %s {", name);
    const char *p = strstr(src, key);
    if (!p)
        return -1;
    p += strlen(key);
    int n = 0, depth = 1;
    while (*p && depth > 0) {
        if (*p == '{')
            ++depth;
        else if (*p == '}')
            --depth;
        if (*p >= '0' && *p <= '9') {
            char *end;
            const unsigned long v = strtoul(p, &end, 10);
            if (n < cap)
                out[n] = (uint32_t)v;
            ++n;
            p = end;
            continue;
        }
        ++p;
    }
    return n;
}

/* The value of `#define NAME v` in src, or UINT32_MAX. */
static uint32_t define_value(const char *src, const char *name)
{
    char key[64];
    snprintf(key, sizeof key, "#define %s ", name);
    const char *p = strstr(src, key);
    return p ? (uint32_t)strtoul(p + strlen(key), NULL, 10) : UINT32_MAX;
}

/* What sm90_nvfp4_pre.cu's emitted tables say, checked against the
 * problem: the groups' rows and workspace rows; chunks that cover each
 * group's rows once, in order, each with the variant of its wgmma N (its
 * rows rounded up to 8, or more where the problem has more heights than
 * JG_PRE_MAX_WIDTHS, within the slot's rows); each CTA's tiles, which
 * together are every tile once, and whose costs add up to at most the
 * planner's makespan, the busiest CTA's exactly. */
static void test_pre_tables(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    jg__log quiet = {0};
    static const int64_t seed1[8] = {80, 176, 128, 72, 64, 248, 96, 160};
    static const int64_t seed2[8] = {40, 76, 168, 72, 164, 148, 196, 160};
    static const int64_t small[3] = {300, 17, 0}, tall[2] = {520, 8}, seed3[2] = {192, 320};
    int64_t ramp[40], steps[20];
    for (int g = 0; g < 40; ++g)
        ramp[g] = g + 1;
    for (int g = 0; g < 20; ++g)
        steps[g] = 12 * g + 5; /* 20 heights, 5 to 233 */
    const struct {
        const char *what;
        jg__problem_key pk;
        bool capped; /* more heights than JG_PRE_MAX_WIDTHS */
    } rows[] = {
        {"seed1", nvfp4_list(seed1, 8, 4096, 7168, JG_GROUPED_WORKSPACE), false},
        {"seed2", nvfp4_list(seed2, 8, 7168, 2048, JG_GROUPED_WORKSPACE), false},
        {"seed3", nvfp4_list(seed3, 2, 3072, 4096, JG_GROUPED_WORKSPACE), false},
        {"300, 17, 0", nvfp4_list(small, 3, 1000, 1056, JG_GROUPED_WORKSPACE), false},
        {"520, 8", nvfp4_list(tall, 2, 136, 96, JG_GROUPED_WORKSPACE), false},
        {"40 groups", nvfp4_list(ramp, 40, 256, 512, JG_GROUPED_WORKSPACE), false},
        {"20 heights", nvfp4_list(steps, 20, 512, 256, JG_GROUPED_WORKSPACE), true},
    };
    enum { CAP = 8192 };
    uint32_t *order = malloc(CAP * sizeof *order), *first = malloc(CAP * sizeof *first);
    uint32_t *seen = malloc(CAP * sizeof *seen), *chunk = malloc(4 * 256 * sizeof *chunk);
    for (size_t i = 0; i < JG_ARRAY_LEN(rows) && order && first && seen && chunk; ++i) {
        const jg__problem_key *pk = &rows[i].pk;
        jg__gemm_config c;
        memset(&c, 0, sizeof c);
        CHECK(jg__plan_gemm_sm90(&t, pk, &quiet, &c) == JG_OK && c.pre, "%s: planning",
              rows[i].what);
        if (!c.pre)
            continue;
        jg__gemm_key key;
        jg__gemm_key_make(pk, &c, &key);
        char name[128];
        jg__gemm_kernel_name(&key, "sm_90a", name);
        jg__buf src = {0};
        jg__emit_gemm(&key, name, &src);
        jg__buf_append(&src, "", 1);
        CHECK(!src.failed && src.data, "%s: emitting", rows[i].what);
        if (src.failed || !src.data) {
            jg__buf_free(&src);
            continue;
        }
        const char *text = src.data;
        /* groups: rows and first workspace rows */
        uint32_t grows[64], gws[64];
        const int ng = define_list(text, "JG_PRE_GROUP_ROWS", grows, 64);
        const int nw = define_list(text, "JG_PRE_GROUP_WS", gws, 64);
        bool ok = ng == (int)pk->groups && nw == (int)pk->groups;
        for (uint32_t g = 0, ws = 0; ok && g < pk->groups; ws += grows[g], ++g)
            ok = grows[g] == (uint32_t)pk->group_m[g] && gws[g] == ws;
        CHECK(ok, "%s: group rows (%d) or workspace rows (%d) wrong", rows[i].what, ng, nw);
        /* chunks {group, row0, rows, variant}, variants X(v, n) */
        const int nc4 = define_list(text, "JG_PRE_CHUNK_TABLE", chunk, 4 * 256);
        const uint32_t nchunks = define_value(text, "JG_PRE_CHUNKS");
        ok = nc4 == 4 * (int)nchunks && nchunks > 0 && nchunks <= 256;
        CHECK(ok, "%s: %d numbers for %u chunks", rows[i].what, nc4, nchunks);
        if (!ok) {
            jg__buf_free(&src);
            continue;
        }
        /* the variants' line: X(0, n0) X(1, n1) ... in order */
        uint32_t variant_n[256] = {0}, nv = 0;
        char line[4096] = "";
        const char *v = strstr(text, "#define JG_PRE_VARIANTS(X)");
        if (v) {
            const char *end = strchr(v, '\n');
            const size_t len = end ? (size_t)(end - v) : strlen(v);
            memcpy(line, v, len < sizeof line - 1 ? len : sizeof line - 1);
        }
        for (const char *x = strstr(line, " X("); x && nv < 256; x = strstr(x + 3, " X(")) {
            unsigned a, b;
            if (sscanf(x, " X(%u, %u)", &a, &b) != 2 || a != nv)
                break;
            variant_n[nv++] = b;
        }
        uint32_t covered[64] = {0};
        bool chunks_ok = nv > 0;
        for (uint32_t k = 0; k < nchunks && chunks_ok; ++k) {
            const uint32_t g = chunk[4 * k], r0 = chunk[4 * k + 1], r = chunk[4 * k + 2];
            const uint32_t var = chunk[4 * k + 3];
            /* the variant's width holds the rows; it is their own (rows
             * rounded up to 8) unless the problem has more heights than
             * the kernel instantiates widths */
            chunks_ok = g < pk->groups && r > 0 && r <= c.pre_rows && var < nv &&
                        variant_n[var] % 8 == 0 && variant_n[var] >= (r + 7) / 8 * 8 &&
                        (rows[i].capped || variant_n[var] == (r + 7) / 8 * 8) &&
                        variant_n[var] <= c.block_m && (k == 0 || chunk[4 * (k - 1) + 2] >= r);
            /* a group's chunks are contiguous rows: r0 is what came before */
            chunks_ok = chunks_ok && r0 == covered[g];
            covered[g] += r;
        }
        for (uint32_t g = 0; g < pk->groups && chunks_ok; ++g)
            chunks_ok = covered[g] == (uint32_t)pk->group_m[g];
        CHECK(chunks_ok, "%s: the chunk table does not cover the groups' rows once, tallest first",
              rows[i].what);
        CHECK(nv <= JG_PRE_MAX_WIDTHS && (!rows[i].capped || nv == JG_PRE_MAX_WIDTHS),
              "%s: %u wgmma widths", rows[i].what, nv);
        /* each CTA's tiles */
        const uint32_t grid = define_value(text, "JG_PRE_GRID");
        const uint32_t tiles_n = (uint32_t)jg__ceil_div((uint64_t)pk->n, 128);
        const uint32_t tiles = nchunks * tiles_n;
        const int nf = define_list(text, "JG_PRE_CTA_FIRST", first, CAP);
        const int no = define_list(text, "JG_PRE_ORDER", order, CAP);
        ok = grid == c.pre && nf == (int)grid + 1 && no == (int)tiles && tiles <= CAP &&
             first[0] == 0 && first[grid] == tiles;
        CHECK(ok, "%s: grid %u (planned %u), %d firsts, %d of %u tiles", rows[i].what, grid, c.pre,
              nf, no, tiles);
        if (ok) {
            memset(seen, 0, tiles * sizeof *seen);
            uint64_t most = 0;
            bool each_once = true;
            for (uint32_t cta = 0; cta < grid; ++cta) {
                uint64_t load = 0;
                each_once = each_once && first[cta] <= first[cta + 1];
                for (uint32_t x = first[cta]; each_once && x < first[cta + 1]; ++x) {
                    each_once = order[x] < tiles && !seen[order[x]]++;
                    const uint32_t w = variant_n[chunk[4 * (order[x] / tiles_n) + 3] % 256];
                    load += (w > 128 ? w : 128) + 16;
                }
                most = load > most ? load : most;
            }
            jg__pre_chunk pc[256];
            const uint32_t n = jg__pre_chunks(pk->group_m, pk->groups, c.pre_rows, pc, 256);
            const uint64_t span = jg__pre_balance(pc, n, tiles_n, grid, NULL);
            CHECK(each_once && most == span, "%s: tiles %s; the busiest CTA's cost %llu, span %llu",
                  rows[i].what, each_once ? "each once" : "not each once",
                  (unsigned long long)most, (unsigned long long)span);
        }
        jg__buf_free(&src);
    }
    free(order);
    free(first);
    free(seen);
    free(chunk);
}

/* The kernel family of a dense configuration. */
/* (split-K over a cluster, or through the workspace: the same family) */
static uint32_t family_of(const jg__gemm_config *c)
{
    const bool split = c->split_k > 1 || c->split_ws > 1;
    if (c->swap_ab)
        return split ? JG_FAMILY_SWAP_SPLIT : JG_FAMILY_SWAP;
    if (split)
        return JG_FAMILY_SPLIT;
    if (c->pingpong)
        return JG_FAMILY_PINGPONG;
    return c->block_m == 256 ? JG_FAMILY_TALL : JG_FAMILY_PLAIN;
}

/* The measured table: every cell's middle shape planned with its cell's
 * family or the plain tiles (where that family has no kernel for it, such
 * as a split where the tiles alone fill the GPU, or where the model rates
 * the cell's swap-AB or split-K above SM90_FAMILY_MODEL_MARGIN of the
 * plain tiles' time), the same twice, the plan log naming the cell and, for
 * a family the model overruled, saying so; where K is long and the tiles
 * few (long_k_split), split-K over 2 or 4 CTAs by that rule. The forced families
 * (JITGEMM_SWAP=0, JITGEMM_SPLIT=1) leave the table out. */
static void test_table(void)
{
    jg__target t, plain;
    jg_test_h100_target(&t);
    t.force_stream_k = 1; /* the table's plans, not the waves' rule over them (test_stream_k) */
    plain_target(&plain);
    jg__table_cell_info cell;
    size_t cells = 0, special = 0, kept = 0, overruled = 0, long_k_cells = 0, sure = 0;
    for (size_t i = 0; jg__sm90_table_cell(i, &cell); ++i, ++cells) {
        const jg_gemm_problem p = jg_test_table_problem(&cell);
        char what[96], msg[768] = "";
        snprintf(what, sizeof what, "table cell %zu (class %u, %lldx%lldx%lld)", i, cell.dclass,
                 (long long)p.m, (long long)p.n, (long long)p.k);
        const jg__gemm_config c = plan_logged(&t, &p, msg, what), again = plan_of(&t, &p, what);
        CHECK(!memcmp(&c, &again, sizeof c), "%s: two plans differ", what);
        const uint32_t f = family_of(&c);
        /* plain 64-row tiles in rows with long K: swap-AB (swap_over_row_tiles) */
        if (strstr(msg, "rows of 64-row plain tiles")) {
            CHECK(c.swap_ab, "%s: family %u by the rows-of-tiles rule", what, f);
            continue;
        }
        /* long K and few tiles: split-K by its own rule, whatever the cell */
        if (jg_test_long_k(&p, t.sm_count)) {
            ++long_k_cells;
            CHECK((f == JG_FAMILY_SPLIT || f == JG_FAMILY_SWAP_SPLIT) && c.split_k <= 4 &&
                      c.split_ws <= 4 && strstr(msg, "by the long-K rule"),
                  "%s: family %u, split over %u, not by the long-K rule: \"%s\"", what, f,
                  c.split_k, msg);
            continue;
        }
        /* the model sure of another family (SM90_MODEL_SURE): swap-AB or
         * split-K over at most 4, and the log says so */
        if (strstr(msg, "the cell's plan's time")) {
            ++sure;
            CHECK((f & (JG_FAMILY_SWAP | JG_FAMILY_SPLIT | JG_FAMILY_SWAP_SPLIT)) && c.split_k <= 4 &&
                      c.split_ws <= 4,
                  "%s: family %u, split over %u, by the model's certainty", what, f, c.split_k);
            continue;
        }
        /* swap-AB against padding from SM90_SWAP_PAD_ALWAYS, whatever the cell */
        if (strstr(msg, "against padding")) {
            CHECK(f == JG_FAMILY_SWAP && c.block_n >= p.m, "%s: family %u, tile %ux%u by the "
                  "padding rule", what, f, c.block_m, c.block_n);
            continue;
        }
        CHECK(f == cell.families || f == JG_FAMILY_PLAIN, "%s: family %u, the cell's %u", what, f,
              cell.families);
        CHECK(f != cell.families || strstr(msg, "measured table's cell"),
              "%s: the plan log does not name the cell: \"%s\"", what, msg);
        if (cell.families != JG_FAMILY_PLAIN) {
            ++special;
            kept += f == cell.families;
            overruled += f != cell.families && strstr(msg, "by the model over the measured table's cell");
            const jg__gemm_config forced = plan_of(&plain, &p, what);
            CHECK(family_of(&forced) == JG_FAMILY_PLAIN, "%s: JITGEMM_SWAP=0, JITGEMM_SPLIT=1 "
                  "gave family %u", what, family_of(&forced));
        }
    }
    CHECK(cells > 0, "the measured table is empty");
    /* the cells' families the model did not overrule: most of the rest */
    CHECK((kept + overruled) * 10 >= special * 8,
          "only %zu of %zu non-plain cells planned with their family (%zu overruled by the model)",
          kept, special, overruled);
    CHECK(kept > 0, "the model overruled every non-plain cell");
    CHECK(long_k_cells > 0 && long_k_cells * 4 < cells, "%zu of %zu cells split by the long-K rule",
          long_k_cells, cells);
    printf("measured table: %zu cells, %zu of %zu non-plain ones planned with their family, %zu "
           "overruled by the model, %zu split by the long-K rule, %zu another family by the "
           "model's certainty\n",
           cells, kept, special, overruled, long_k_cells, sure);
    /* On H100 12x19296x28672 BF16 ran its cell's swap-AB (64x8 tiles, 2.3
     * waves) at 594 us, plain tiles at 375: the model overrules it; and
     * 63x1536x10672 keeps its cell's swap-AB with split-K (21.5 us, plain
     * tiles 32.8). */
    const struct {
        int64_t m, n, k;
        uint32_t family;
    } rows[] = {{12, 19296, 28672, JG_FAMILY_PLAIN},
                {63, 1536, 10672, JG_FAMILY_SWAP_SPLIT},
                {525, 3584, 10944, JG_FAMILY_PLAIN}, /* 256-row tiles 165 us, 128: 92 */
                {618, 2560, 13424, JG_FAMILY_PLAIN},
                /* plain tiles: 256 rows for 145; swap-AB, split or not (the
                 * model sure of its split: SM90_MODEL_SURE) */
                {145, 9216, 28080, JG_FAMILY_SWAP | JG_FAMILY_SWAP_SPLIT}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_gemm_problem p = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                                   .m = rows[i].m, .n = rows[i].n, .k = rows[i].k};
        const jg__gemm_config c = plan_of(&t, &p, "model over table");
        CHECK(family_of(&c) & rows[i].family, "bf16 %lldx%lldx%lld: family %u, expected %u",
              (long long)p.m, (long long)p.n, (long long)p.k, family_of(&c), rows[i].family);
    }
}

/* A dense problem of ab operands (FP8: tensor scales) and d output, and
 * its name for messages */
static jg_gemm_problem dense_problem(jg_dtype ab, jg_dtype d, int64_t m, int64_t n, int64_t k)
{
    return (jg_gemm_problem){.a_type = ab,
                             .b_type = ab,
                             .d_type = d,
                             .m = m,
                             .n = n,
                             .k = k,
                             .scale = ab == JG_E4M3 ? JG_SCALE_TENSOR : JG_SCALE_NONE};
}

static const char *problem_name(const jg_gemm_problem *p, char *buf, size_t size)
{
    snprintf(buf, size, "%s %lldx%lldx%lld", jg__dtype_name(p->a_type), (long long)p->m,
             (long long)p->n, (long long)p->k);
    return buf;
}

/* The long-K rule counts swap-AB's tiles where fewer than 128x128 ones:
 * BF16 133x8192x18944 has 128 plain tiles (past half of 132 SMs) but 64
 * of swap-AB's, and its unsplit plan ran at 0.45 of cuBLASLt on an H200,
 * so it splits; 133x9216 (72 swap-AB tiles) does not, nor FP8 at 133 rows
 * (its swap-AB tiles are at most 128 wide: 128 of them) nor K = 8192. */
static void test_long_k_swap(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    t.force_split_ws = 1; /* the plan without a workspace: the few tiles' rule splits through one */
    const struct {
        jg_dtype type;
        int64_t m, n, k;
        bool long_k;
    } rows[] = {{JG_BF16, 133, 8192, 18944, true},
                {JG_FP16, 170, 8192, 28672, true},
                {JG_BF16, 133, 9216, 18944, false},
                {JG_E4M3, 133, 8192, 18944, false},
                {JG_BF16, 133, 8192, 8192, false}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_gemm_problem p =
            dense_problem(rows[i].type, JG_BF16, rows[i].m, rows[i].n, rows[i].k);
        char what[96], msg[768] = "";
        const jg__gemm_config c = plan_logged(&t, &p, msg, problem_name(&p, what, sizeof what));
        const bool by_rule = strstr(msg, "by the long-K rule") != NULL;
        CHECK(by_rule == rows[i].long_k && jg_test_long_k(&p, t.sm_count) == rows[i].long_k,
              "%s: long-K rule %d, expected %d: \"%s\"", what, by_rule, rows[i].long_k, msg);
        CHECK(!rows[i].long_k || (c.split_k > 1 && c.split_k <= 4),
              "%s: split over %u CTAs, expected 2 or 4", what, c.split_k);
    }
}

/* The model's sure family (SM90_MODEL_SURE) replaces a table cell's plan:
 * split-K only where K is long (on an H200 the unbounded rule put 128-row
 * split tiles on 191x2048x5056 and ran it at 0.68 of the cell's plan; for
 * 16-bit operands from K = 8192: 1079x1024x11008 swap-AB split over 2 CTAs,
 * 1.29x the cell's 128x80 plain tiles), swap-AB at any M (260x8192x10944:
 * 1.26x the cell's plain tiles). */
static void test_model_sure(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    const struct {
        int64_t m, n, k;
        bool sure;      /* the log names the model's certainty */
        uint32_t split; /* 0: none; else the split it must take at most */
        bool swap;      /* swap-AB expected */
    } rows[] = {{1, 1024, 8192, true, 4, true},
                {260, 8192, 10944, true, 0, true},
                {1079, 1024, 11008, true, 4, true},
                {191, 2048, 5056, false, 0, false}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_gemm_problem p = dense_problem(JG_BF16, JG_BF16, rows[i].m, rows[i].n, rows[i].k);
        char what[96], msg[768] = "";
        const jg__gemm_config c = plan_logged(&t, &p, msg, problem_name(&p, what, sizeof what));
        const bool sure = strstr(msg, "the cell's plan's time") != NULL;
        CHECK(sure == rows[i].sure, "%s: the model's certainty %d, expected %d: \"%s\"", what, sure,
              rows[i].sure, msg);
        CHECK(rows[i].split ? c.split_k > 1 && c.split_k <= rows[i].split : c.split_k <= 1,
              "%s: split over %u CTAs, expected %s", what, c.split_k,
              rows[i].split ? "2 or 4" : "none");
        CHECK(!rows[i].sure || (bool)c.swap_ab == rows[i].swap, "%s: swap-AB %d, expected %d", what,
              (int)c.swap_ab, (int)rows[i].swap);
    }
}

/* FP8 swap-AB tiles 144 wide (the leanest kernel: tensor scales, 16-bit D,
 * no C, K >= 2048): 515x4096x2048 takes four columns of them (576 of M)
 * where 128-row tiles pad M to 640; not with C or row scales (their sums
 * spill at 144). */
static void test_fp8_swap_wide(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    for (int heavy = 0; heavy < 3; ++heavy) {
        const jg_gemm_problem p = {.a_type = JG_E4M3,
                                   .b_type = JG_E4M3,
                                   .c_type = heavy == 1 ? JG_BF16 : JG_DTYPE_NONE,
                                   .d_type = JG_BF16,
                                   .m = 515,
                                   .n = 4096,
                                   .k = 2048,
                                   .scale = heavy == 2 ? JG_SCALE_ROW : JG_SCALE_TENSOR};
        const char *what = heavy == 0   ? "fp8 515x4096x2048"
                           : heavy == 1 ? "the same with C"
                                        : "the same, row scales";
        char msg[768] = "";
        const jg__gemm_config c = plan_logged(&t, &p, msg, what);
        if (heavy == 0)
            CHECK(c.swap_ab && c.block_m == 128 && c.block_n == 144 && c.split_k <= 1,
                  "%s: tile %ux%u swap-AB %u split %u, expected 128x144 swap-AB: \"%s\"", what,
                  c.block_m, c.block_n, (unsigned)c.swap_ab, c.split_k, msg);
        else
            CHECK(c.block_n <= 128, "%s: tile %ux%u, expected at most 128 wide", what, c.block_m,
                  c.block_n);
    }
}

/* A row of the planner's checks: operand type, shape and what it should do. */
typedef struct typed_row {
    jg_dtype ab;
    int64_t m, n, k;
    bool expect;
} typed_row;

/* Where the cell's plain tiles pad M past 15%, swap-AB (no split) takes
 * over if it pads less and the model rates it at most 1.05 of them, past
 * M = 128 only: BF16 295x5760x14336 (128x144 tiles pad 384 rows for 295),
 * 403x7824x10240 (27%) and FP8 292x21184x13824 swap, FP8 86x5120x7168
 * keeps its plain tiles. */
static void test_swap_pad(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    const typed_row rows[] = {
        {JG_BF16, 295, 5760, 14336, true},
        /* plain tiles padding M 27% (from 15%: bench/results/2026-11-28-h200-pad-swap2) */
        {JG_BF16, 403, 7824, 10240, true},
        {JG_E4M3, 292, 21184, 13824, true},
        {JG_E4M3, 86, 5120, 7168, false}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_gemm_problem p =
            dense_problem(rows[i].ab, JG_BF16, rows[i].m, rows[i].n, rows[i].k);
        char what[96], msg[768] = "";
        const jg__gemm_config c = plan_logged(&t, &p, msg, problem_name(&p, what, sizeof what));
        const bool padded = strstr(msg, "which padded M") != NULL;
        CHECK((bool)c.swap_ab == rows[i].expect && padded == rows[i].expect && c.split_k <= 1,
              "%s: swap-AB %u (by the padding rule %d), split %u; expected swap-AB %d: \"%s\"",
              what, (unsigned)c.swap_ab, padded, c.split_k, rows[i].expect, msg);
    }
}

/* From 30% padding, plain 16-bit tiles give way to swap-AB tiles spanning M
 * in one column whatever the model says (SM90_SWAP_PAD_ALWAYS), stream-K
 * or not (found on BF16 141x18944x7168: plain 128x144 tiles, 256 rows for
 * 141, twice cuBLASLt's time on an H200); not FP8 (182x9216x15360's
 * swap-AB tiles split M and lost), nor a plan that pads less (BF16
 * 240x18944x7168: 7%; 141x18944x7168 and 169x20480x5760 now, on 192-row
 * tiles, which ran 1.01x and 1.09x the rule's plans on an H200,
 * bench/results/2026-11-29-h200-tile192-tune). */
static void test_swap_pad_always(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    const typed_row rows[] = {
        {JG_BF16, 131, 9216, 5760, true},   {JG_BF16, 142, 5120, 2880, true},
        {JG_FP16, 146, 4608, 2048, true},   {JG_BF16, 193, 6144, 7168, true},
        {JG_BF16, 194, 20480, 6144, true},  {JG_BF16, 141, 18944, 7168, false},
        {JG_BF16, 169, 20480, 5760, false}, {JG_E4M3, 182, 9216, 15360, false},
        {JG_BF16, 240, 18944, 7168, false}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_dtype d = rows[i].ab == JG_E4M3 ? JG_BF16 : rows[i].ab;
        const jg_gemm_problem p = dense_problem(rows[i].ab, d, rows[i].m, rows[i].n, rows[i].k);
        char what[96], msg[768] = "";
        const jg__gemm_config c = plan_logged(&t, &p, msg, problem_name(&p, what, sizeof what));
        const bool rule = strstr(msg, "against padding") != NULL;
        CHECK(rule == rows[i].expect, "%s: the rule %s, expected %s: \"%s\"", what,
              rule ? "took it" : "did not", rows[i].expect ? "it" : "not", msg);
        if (rows[i].expect)
            CHECK(c.swap_ab && c.split_k <= 1 && c.block_n >= p.m && c.block_n < p.m + 8,
                  "%s: tile %ux%u swap-AB %u split %u; expected swap-AB %lld-%lld wide", what,
                  c.block_m, c.block_n, (unsigned)c.swap_ab, c.split_k, (long long)p.m,
                  (long long)p.m + 7);
    }
}

/* The test target with an H200's resident clusters of 2-8 CTAs (the
 * driver's count, which the device's plans use). */
static void h200_clusters_target(jg__target *t)
{
    static const uint16_t h200[] = {0, 0, 66, 39, 30, 22, 17, 15, 15};
    jg_test_h100_target(t);
    memcpy(t->resident_clusters, h200, sizeof h200);
}

/* Plain 64-row tiles in two rows (M = 65-128) with long K give way to
 * swap-AB as JITGEMM_SWAP=1 plans it (swap_over_row_tiles): the H200's
 * plans of the rows it was measured on (its resident clusters); short K,
 * more rows of tiles (M = 445) and M = 128 (the fixed decode rows, two
 * 64-row tiles without padding) keep them. */
static void test_swap_over_row_tiles(void)
{
    jg__target t, swap;
    h200_clusters_target(&t);
    swap = t;
    swap.force_swap = 2; /* JITGEMM_SWAP=1 */
    const typed_row rows[] = {{JG_BF16, 107, 1408, 20480, true},  {JG_BF16, 102, 1024, 14144, true},
                              {JG_BF16, 75, 1024, 8192, true},    {JG_BF16, 80, 2560, 8192, true},
                              {JG_BF16, 445, 1024, 28672, false}, {JG_BF16, 182, 1472, 2880, false},
                              {JG_BF16, 363, 1472, 1472, false},  {JG_BF16, 128, 4096, 7168, false},
                              {JG_E4M3, 128, 4096, 7168, false}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_gemm_problem p =
            dense_problem(rows[i].ab, rows[i].ab == JG_E4M3 ? JG_BF16 : rows[i].ab, rows[i].m,
                          rows[i].n, rows[i].k);
        char what[96], msg[768] = "";
        const jg__gemm_config c = plan_logged(&t, &p, msg, problem_name(&p, what, sizeof what));
        const bool rule = strstr(msg, "rows of 64-row plain tiles") != NULL;
        CHECK(rule == rows[i].expect && (!rule || c.swap_ab),
              "%s: the rule %s, expected %s (swap-AB %u): \"%s\"", what,
              rule ? "took it" : "did not", rows[i].expect ? "it" : "not", (unsigned)c.swap_ab,
              msg);
        if (rows[i].expect) {
            const jg__gemm_config forced = plan_of(&swap, &p, what);
            CHECK(!memcmp(&c, &forced, sizeof c),
                  "%s: tile %ux%u split %u, JITGEMM_SWAP=1's %ux%u "
                  "split %u",
                  what, c.block_m, c.block_n, c.split_k, forced.block_m, forced.block_n,
                  forced.split_k);
        }
    }
}

/* 16-bit swap-AB plans of one CTA, unsplit, with an even number of tile
 * columns across M run in 1x2 clusters sharing the weight's tile (the same
 * tile); FP8 too; not past the M and K bounds, nor M-generic. */
static void test_swap_pairs(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    const struct {
        jg_dtype ab;
        int64_t m, n, k;
        uint32_t flags;
        bool pairs;
    } rows[] = {{JG_BF16, 147, 3072, 5120, 0, true},
                {JG_FP16, 147, 3072, 5120, 0, true},
                {JG_BF16, 646, 3584, 5760, 0, true},
                {JG_BF16, 147, 3072, 5120, JG_GEMM_M_GENERIC, false},
                {JG_BF16, 215, 1536, 2880, 0, false},   /* K below the bound */
                {JG_BF16, 9101, 1536, 22016, 0, false}, /* M above it */
                {JG_E4M3, 147, 3072, 5120, 0, true}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_dtype d = rows[i].ab == JG_E4M3 ? JG_BF16 : rows[i].ab;
        jg_gemm_problem p = dense_problem(rows[i].ab, d, rows[i].m, rows[i].n, rows[i].k);
        p.flags = rows[i].flags;
        char what[96], msg[768] = "";
        const jg__gemm_config c = plan_logged(&t, &p, msg, problem_name(&p, what, sizeof what));
        const bool pairs = strstr(msg, "in pairs along M sharing the weight") != NULL;
        CHECK(pairs == rows[i].pairs, "%s%s: pairs %d, expected %d: \"%s\"", what,
              rows[i].flags ? " M-generic" : "", (int)pairs, (int)rows[i].pairs, msg);
        if (pairs)
            CHECK(c.swap_ab && c.cluster == 2 && jg__cfg_n_stack(&c) == 2 && c.split_k <= 1 &&
                      jg__ceil_div((uint64_t)p.m, c.block_n) % 2 == 0,
                  "%s: swap-AB %u cluster %u n_stack %u split %u, %ux%u tiles", what,
                  (unsigned)c.swap_ab, c.cluster, jg__cfg_n_stack(&c), c.split_k, c.block_m,
                  c.block_n);
        /* JITGEMM_TUNE's candidates hold the pair, first */
        if (pairs) {
            jg__problem_key pk;
            jg__problem_key_make(&p, &pk);
            jg__gemm_config cands[4];
            const size_t n = jg__plan_candidates_sm90(&t, &pk, cands, 4);
            CHECK(n >= 1 && cands[0].cluster == 2 && jg__cfg_n_stack(&cands[0]) == 2 &&
                      cands[0].block_n == c.block_n,
                  "%s: tuning's first candidate %ux%u cluster %u (of %zu), expected the pair",
                  what, n ? cands[0].block_m : 0, n ? cands[0].block_n : 0,
                  n ? cands[0].cluster : 0, n);
        }
        /* a context without JG_CONTEXT_WORKSPACE (never split through one:
         * force_split_ws and force_stream_k 1) pairs the same */
        if (pairs) {
            jg__target nows = t;
            nows.force_split_ws = nows.force_stream_k = 1;
            char msg1[768] = "";
            const jg__gemm_config c1 = plan_logged(&nows, &p, msg1, what);
            CHECK(c1.cluster == 2 && jg__cfg_n_stack(&c1) == 2 && c1.block_n == c.block_n,
                  "%s without a workspace: %ux%u cluster %u, expected the pair", what,
                  c1.block_m, c1.block_n, c1.cluster);
        }
        /* without the stack the same tile: JITGEMM_CLUSTER=1 turns it off */
        if (pairs) {
            jg__target one = t;
            one.force_cluster = 1;
            char msg1[768] = "";
            const jg__gemm_config c1 = plan_logged(&one, &p, msg1, what);
            CHECK(c1.cluster == 1 && c1.swap_ab && c1.block_m == c.block_m &&
                      c1.block_n == c.block_n && c1.block_k == c.block_k,
                  "%s: JITGEMM_CLUSTER=1 gave %ux%ux%u cluster %u, the pair %ux%ux%u", what,
                  c1.block_m, c1.block_n, c1.block_k, c1.cluster, c.block_m, c.block_n,
                  c.block_k);
        }
    }
}

/* Waves of clusters count the clusters the GPU holds at once (the
 * driver's answer in a context with a GPU), not SMs / cluster size. */
static void test_resident_clusters(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    t.force_split = 4; /* JITGEMM_SPLIT=4 */
    const jg_gemm_problem p = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                               .m = 2048, .n = 4096, .k = 8192};
    for (uint32_t resident = 0; resident <= 16; resident += 16) {
        t.resident_clusters[4] = (uint16_t)resident;
        char msg[768] = "";
        jg__log log = {.fn = keep_last, .user = msg, .mask = JG_LOGC_PLAN};
        jg__problem_key pk;
        jg__problem_key_make(&p, &pk);
        jg__gemm_config c;
        CHECK(jg__plan_gemm_sm90(&t, &pk, &log, &c) == JG_OK, "split 4: planning");
        unsigned long long tiles = 0, waves = 0;
        const char *at = strstr(msg, " tiles = ");
        while (at && at > msg && at[-1] >= '0' && at[-1] <= '9')
            --at;
        CHECK(c.split_k == 4 && at && sscanf(at, "%llu tiles = %llu wave", &tiles, &waves) == 2,
              "split 4: split %u, log \"%s\"", c.split_k, msg);
        const unsigned long long per_wave = resident ? resident : (unsigned)t.sm_count / 4;
        CHECK(tiles / 4 > 16 && waves == (tiles / 4 + per_wave - 1) / per_wave,
              "split 4 with %u resident clusters: %llu CTAs in %llu waves", resident, tiles, waves);
    }
    /* Fewer resident clusters never make a plan of clusters more
     * attractive: the last wave's share had wrapped below zero where the
     * GPU holds fewer than SMs / size, and the device took swap-AB split
     * over 8 for FP8 118x13824x9216 (twice the plain tiles' time on H100)
     * where offline planning took plain tiles. */
    const uint16_t h100[JG_SPLIT_K_MAX + 1] = {[2] = 66, [4] = 32, [6] = 20, [8] = 14};
    const int64_t rows[][3] = {{118, 13824, 9216}, {43, 2880, 18432}, {82, 16384, 15360}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_gemm_problem q = {.a_type = JG_E4M3, .b_type = JG_E4M3, .d_type = JG_BF16,
                                   .m = rows[i][0], .n = rows[i][1], .k = rows[i][2],
                                   .scale = JG_SCALE_TENSOR};
        jg__target full, fewer;
        jg_test_h100_target(&full);
        fewer = full;
        memcpy(fewer.resident_clusters, h100, sizeof h100);
        const jg__gemm_config a = plan_of(&full, &q, "resident clusters");
        const jg__gemm_config b = plan_of(&fewer, &q, "resident clusters");
        CHECK(b.cluster <= a.cluster || b.cluster == 1,
              "fp8 %lldx%lldx%lld: cluster %u (split %u) with fewer resident clusters, %u "
              "with SMs / size",
              (long long)q.m, (long long)q.n, (long long)q.k, b.cluster, b.split_k, a.cluster);
    }
}

/* No split-K with an MN-major operand (split kernels with an M-major A
 * went wrong on the GPU), even where JITGEMM_SPLIT=any asks for it; a
 * K-major problem of the same shape splits. */
static void test_no_split_mn_major(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    t.force_swap = 1;
    t.force_split = JG_SPLIT_ANY;
    const uint32_t layouts[] = {0, JG_GEMM_A_M_MAJOR, JG_GEMM_B_N_MAJOR,
                                JG_GEMM_A_M_MAJOR | JG_GEMM_B_N_MAJOR};
    for (size_t i = 0; i < JG_ARRAY_LEN(layouts); ++i) {
        const jg_gemm_problem p = {.flags = layouts[i], .a_type = JG_BF16, .b_type = JG_BF16,
                                   .d_type = JG_BF16, .m = 330, .n = 1024, .k = 14336};
        const jg__gemm_config c = plan_of(&t, &p, "330x1024x14336, split-K asked for");
        CHECK(layouts[i] ? c.split_k <= 1 : c.split_k > 1,
              "330x1024x14336, flags 0x%x, JITGEMM_SPLIT=any: split %u", layouts[i], c.split_k);
    }
}

/* Plain tiles whose 16-bit D rows are past 256 bytes store them in boxes of
 * 32 bytes or wider: widths of 8 mod 16 past 128 (16-byte boxes) ran
 * 1.02-1.23x the time of the next width on H100; on these rows the model
 * alone takes 184, 248, 200 and 168. */
static void test_epilogue_boxes(void)
{
    jg__target t;
    plain_target(&t);
    const int64_t rows[][3] = {
        {552, 14336, 4096}, {1434, 18944, 2048}, {343, 8528, 2048}, {462, 10944, 18944}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_gemm_problem p = {.a_type = JG_BF16,
                                   .b_type = JG_BF16,
                                   .d_type = JG_BF16,
                                   .m = rows[i][0],
                                   .n = rows[i][1],
                                   .k = rows[i][2]};
        const jg__gemm_config c = plan_of(&t, &p, "epilogue boxes");
        CHECK(c.swap_ab || c.block_n * 2 <= 256 || c.epi_bytes >= 32,
              "bf16 %lldx%lldx%lld: %ux%u tile stores D in %u-byte boxes", (long long)rows[i][0],
              (long long)rows[i][1], (long long)rows[i][2], c.block_m, c.block_n, c.epi_bytes);
    }
}

/* M-generic plans for fewer rows than their tile load A in boxes of the
 * hint rounded up to a power of two (the kernel issues as many as the
 * launch's M needs); hints of a whole tile keep the tile's box, and baked
 * plans M rounded up to 8. */
static void test_generic_a_box(void)
{
    jg__target t;
    plain_target(&t);
    const struct {
        int64_t m;
        uint32_t flags;
    } rows[] = {{1, JG_GEMM_M_GENERIC},
                {4, JG_GEMM_M_GENERIC},
                {16, JG_GEMM_M_GENERIC},
                {20, JG_GEMM_M_GENERIC},
                {20, 0},
                {64, JG_GEMM_M_GENERIC},
                {4096, JG_GEMM_M_GENERIC}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_gemm_problem p = {.a_type = JG_BF16,
                                   .b_type = JG_BF16,
                                   .d_type = JG_BF16,
                                   .m = rows[i].m,
                                   .n = 4096,
                                   .k = 4096,
                                   .flags = rows[i].flags};
        const jg__gemm_config c = plan_of(&t, &p, "generic A box");
        uint32_t want = c.block_m;
        if (rows[i].m < (int64_t)c.block_m && rows[i].flags) {
            want = 8;
            while ((int64_t)want < rows[i].m)
                want *= 2;
        } else if (rows[i].m < (int64_t)c.block_m) {
            want = (uint32_t)(rows[i].m + 7) / 8 * 8;
        }
        CHECK(c.a_box_m == want && (!rows[i].flags || c.block_m % c.a_box_m == 0),
              "%s M = %lld: %ux%u tile, A box of %u rows, expected %u",
              rows[i].flags ? "generic" : "baked", (long long)rows[i].m, c.block_m, c.block_n,
              c.a_box_m, want);
    }
    /* A hint of a 128-row tile's height: boxes of 16 rows (64-row tiles keep
     * the tile's box: the loop's M = 64 above). */
    const jg_gemm_problem p = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                               .m = 128, .n = 11072, .k = 8192, .flags = JG_GEMM_M_GENERIC};
    const jg__gemm_config c = plan_of(&t, &p, "generic A box at the hint");
    CHECK(c.block_m == 128 && c.a_box_m == 16,
          "generic hint 128 of 128x11072x8192: %ux%u tile, A box of %u rows, expected 128-row "
          "tiles in boxes of 16", c.block_m, c.block_n, c.a_box_m);
    /* Hints of 1.5 times a power of two (16 or more) below the tile: three
     * boxes of half that power; 24 (boxes of 8) keeps one box of 32. */
    static const int64_t half[] = {24, 48, 96};
    for (size_t i = 0; i < JG_ARRAY_LEN(half); ++i) {
        const jg_gemm_problem h = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                                   .m = half[i], .n = 13824, .k = 2880,
                                   .flags = JG_GEMM_M_GENERIC};
        const jg__gemm_config g = plan_of(&t, &h, "generic A box at a half bucket");
        const uint32_t want = half[i] == 24 ? 32 : (uint32_t)half[i] / 3;
        CHECK(g.block_m > (uint32_t)half[i] && g.a_box_m == want && g.block_m % want == 0,
              "generic hint %lld of %lldx13824x2880: %ux%u tile, A box of %u rows, expected %u",
              (long long)half[i], (long long)half[i], g.block_m, g.block_n, g.a_box_m, want);
    }
}

/* An FP8 problem with tensor (or other) scales and BF16 out. */
static jg_gemm_problem fp8(int64_t m, int64_t n, int64_t k, jg_scale_mode scale)
{
    jg_gemm_problem p = {.a_type = JG_E4M3,
                         .b_type = JG_E4M3,
                         .d_type = JG_BF16,
                         .m = m,
                         .n = n,
                         .k = k,
                         .scale = scale};
    return p;
}

/* Clusters stacked along N (sharing A): JITGEMM_N_STACK=2 or 4 gives them
 * alone where a tile allows it (by JITGEMM_CLUSTER / it along M), each
 * CTA's share of A's box whole 8-row atoms, never swap-AB, split-K,
 * grouped, block-scaled, M-generic with boxes by the launch's M, or with
 * soft loads; =1 keeps the plans of clusters along M alone, and so does
 * the planner unforced. */
static void test_n_stack(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    /* dtype (FP8: tensor scales, but row scales with FP32 out plus C), M, N, K,
     * the forced N stack and cluster, the cluster expected */
    static const struct {
        jg_dtype ab;
        int64_t m, n, k;
        uint32_t force, cluster, want_cluster;
    } forced[] = {
        {JG_BF16, 75, 1408, 14336, 2, 0, 2},  {JG_BF16, 75, 1408, 14336, 4, 0, 4},
        {JG_E4M3, 4096, 8192, 4784, 2, 4, 4}, {JG_E4M3, 98, 1536, 24048, 2, 0, 2},
        {JG_E4M3, 19, 3072, 22864, 4, 0, 4},  {JG_FP16, 5, 4096, 4096, 2, 0, 2},
    };
    for (size_t i = 0; i < JG_ARRAY_LEN(forced); ++i) {
        t.force_n_stack = forced[i].force;
        t.force_cluster = forced[i].cluster;
        jg_gemm_problem fp =
            fp8(forced[i].m, forced[i].n, forced[i].k, i % 2 ? JG_SCALE_ROW : JG_SCALE_TENSOR);
        if (forced[i].ab != JG_E4M3) {
            fp.a_type = fp.b_type = fp.d_type = forced[i].ab;
            fp.scale = JG_SCALE_NONE;
        } else if (i % 2) {
            fp.c_type = fp.d_type = JG_FP32;
        }
        const jg_gemm_problem *p = &fp;
        const jg__gemm_config c = plan_of(&t, p, "JITGEMM_N_STACK");
        /* A's box: M's rows below the tile (whole 8-row atoms), then whole
         * atoms per CTA of the stack */
        const uint32_t step = 8 * forced[i].force;
        const uint32_t rows = p->m < (int64_t)c.block_m ? (uint32_t)p->m : c.block_m;
        const uint32_t box = (rows + step - 1) / step * step;
        CHECK(c.n_stack == forced[i].force && c.cluster == forced[i].want_cluster &&
                  c.a_box_m == box && box <= c.block_m && !c.swap_ab && c.split_k <= 1 &&
                  jg__cfg_m_stack(&c) * jg__cfg_n_stack(&c) == c.cluster,
              "%lldx%lldx%lld, JITGEMM_N_STACK=%u JITGEMM_CLUSTER=%u: %ux%u tile, cluster %u, "
              "n_stack %u, A box %u (expected cluster %u, A box %u)",
              (long long)p->m, (long long)p->n, (long long)p->k, forced[i].force, forced[i].cluster,
              c.block_m, c.block_n, c.cluster, c.n_stack, c.a_box_m, forced[i].want_cluster, box);
        jg__problem_key pk;
        jg__problem_key_make(p, &pk);
        jg__gemm_config cands[JG_PLAN_CANDIDATES_MAX];
        const size_t n = jg__plan_candidates_sm90(&t, &pk, cands, JG_PLAN_CANDIDATES_MAX);
        for (size_t j = 0; j < n; ++j)
            CHECK(cands[j].n_stack == forced[i].force,
                  "JITGEMM_N_STACK=%u: candidate %zu "
                  "stacks %u",
                  forced[i].force, j, cands[j].n_stack);
    }
    /* where the tile cannot stack (block scales, grouped, M-generic decode
     * boxes, unaligned rows), the force yields the unstacked plan */
    t.force_n_stack = 2;
    t.force_cluster = 0;
    jg_gemm_problem block = fp8(4096, 4096, 4096, JG_SCALE_BLOCK);
    jg_gemm_problem generic = fp8(16, 4096, 4096, JG_SCALE_TENSOR);
    generic.flags = JG_GEMM_M_GENERIC;
    jg_gemm_problem odd = fp8(4096, 4096, 4100, JG_SCALE_TENSOR);
    odd.lda = odd.ldb = 4100; /* rows 4 bytes off 16: soft loads */
    const jg_gemm_problem no[] = {block, generic, odd};
    for (size_t i = 0; i < JG_ARRAY_LEN(no); ++i) {
        const jg__gemm_config c = plan_of(&t, &no[i], "JITGEMM_N_STACK=2 where none fits");
        CHECK(c.n_stack == 0, "%lldx%lldx%lld (case %zu): stacked along N by %u",
              (long long)no[i].m, (long long)no[i].n, (long long)no[i].k, i, c.n_stack);
    }
    /* JITGEMM_N_STACK=1: the plans of clusters along M alone */
    t.force_n_stack = 1;
    const jg_gemm_problem off = fp8(4096, 8192, 4784, JG_SCALE_TENSOR);
    const jg__gemm_config one = plan_of(&t, &off, "JITGEMM_N_STACK=1");
    CHECK(one.n_stack == 0 && one.cluster == 2,
          "JITGEMM_N_STACK=1, fp8 4096x8192x4784: cluster "
          "%u, n_stack %u (expected 2 along M)",
          one.cluster, one.n_stack);
    /* the planner's own choice: never stacked along N, not even where
     * its rules once stacked them (FP8 rows 16 bytes off 32-byte sectors;
     * one row of tiles, many columns, long K), and deterministic */
    t.force_n_stack = 0;
    static const struct {
        jg_dtype ab;
        jg_scale_mode scale;
        int64_t m, n, k;
    } rows[] = {
        {JG_E4M3, JG_SCALE_TENSOR, 4096, 8192, 4784}, {JG_E4M3, JG_SCALE_TENSOR, 19, 3072, 22864},
        {JG_E4M3, JG_SCALE_TENSOR, 910, 6144, 15632}, {JG_BF16, JG_SCALE_NONE, 38, 1024, 5120},
        {JG_E4M3, JG_SCALE_TENSOR, 4096, 8192, 4800}, {JG_BF16, JG_SCALE_NONE, 4096, 4096, 4096},
        {JG_E4M3, JG_SCALE_BLOCK, 4096, 8192, 4784},
    };
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        jg_gemm_problem p = fp8(rows[i].m, rows[i].n, rows[i].k, rows[i].scale);
        if (rows[i].ab != JG_E4M3)
            p.a_type = p.b_type = p.d_type = rows[i].ab;
        const jg__gemm_config a = plan_of(&t, &p, "n_stack default");
        const jg__gemm_config b = plan_of(&t, &p, "n_stack default again");
        CHECK(!memcmp(&a, &b, sizeof a), "case %zu: two plans differ", i);
        CHECK(a.n_stack <= 1, "%lldx%lldx%lld (case %zu): stacked along N by %u", (long long)p.m,
              (long long)p.n, (long long)p.k, i, a.n_stack);
    }
    /* bench/shapes.jsonl's dense and decode rows, BF16 and FP8: none */
    static const int64_t bench[][3] = {
        {2048, 2048, 2048},  {4096, 4096, 4096}, {6144, 6144, 6144}, {8192, 8192, 8192},
        {4096, 7168, 16384}, {4096, 4096, 7168}, {4096, 7168, 2048}, {8192, 4096, 4096},
        {1, 7168, 16384},    {1, 4096, 7168},    {1, 7168, 2048},    {16, 7168, 16384},
        {16, 4096, 7168},    {16, 7168, 2048},   {64, 7168, 16384},  {64, 4096, 7168},
        {64, 7168, 2048},    {128, 7168, 16384}, {128, 4096, 7168},  {128, 7168, 2048}};
    for (size_t i = 0; i < JG_ARRAY_LEN(bench); ++i)
        for (int f = 0; f < 2; ++f) {
            jg_gemm_problem p = fp8(bench[i][0], bench[i][1], bench[i][2], JG_SCALE_TENSOR);
            if (!f) {
                p.a_type = p.b_type = JG_BF16;
                p.scale = JG_SCALE_NONE;
            }
            const jg__gemm_config c = plan_of(&t, &p, "bench row");
            CHECK(c.n_stack == 0, "bench row %s %lldx%lldx%lld: stacked along N by %u",
                  f ? "fp8" : "bf16", (long long)p.m, (long long)p.n, (long long)p.k, c.n_stack);
        }
}

/* Split-K through the workspace: JITGEMM_SPLIT_WS=S splits the planner's
 * tile into S units a tile, without a cluster (a cluster split-K plan
 * loses its cluster), where the problem and tile allow it; the workspace
 * holds the tiles' counts (256-byte aligned) and S - 1 FP32 tiles of sums
 * per tile; never M-generic, PDL, block scales, MN-major, grouped, or a
 * tile wider than 176 (128 with C or FP32 D); JITGEMM_SPLIT_WS=0, never. */
static jg_gemm_problem bf16_512x4096x8192(uint32_t flags, int64_t lda)
{
    jg_gemm_problem p = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16, .m = 512,
                         .n = 4096, .k = 8192, .lda = lda, .flags = flags};
    return p;
}

static void test_split_ws_forced(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    const jg_gemm_problem long_k = {
        .a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16, .m = 420, .n = 2096, .k = 23664};
    t.force_split_ws = 1; /* JITGEMM_SPLIT_WS=0 */
    const jg__gemm_config before = plan_of(&t, &long_k, "JITGEMM_SPLIT_WS=0 420x2096x23664");
    CHECK(before.split_ws <= 1, "JITGEMM_SPLIT_WS=0: split_ws %u", before.split_ws);
    t.force_split_ws = 3;
    const struct {
        jg_gemm_problem p;
        bool split;
    } rows[] = {
        {long_k, true},
        {fp8(306, 5760, 28672, JG_SCALE_TENSOR), true},
        {fp8(515, 4096, 7168, JG_SCALE_ROW), true},
        {fp8(306, 5760, 28672, JG_SCALE_BLOCK), false},
        /* FP32 D: the planner's tile is 192 wide, past 128 */
        {{.a_type = JG_FP16, .b_type = JG_FP16, .d_type = JG_FP32, .m = 1000, .n = 3000, .k = 9000},
         false},
        {bf16_512x4096x8192(JG_GEMM_M_GENERIC, 0), false},
        {bf16_512x4096x8192(JG_GEMM_PDL, 0), false},
        {bf16_512x4096x8192(JG_GEMM_A_M_MAJOR, 512), false},
    };
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_gemm_problem *p = &rows[i].p;
        char what[96];
        snprintf(what, sizeof what, "row %zu: %lldx%lldx%lld", i, (long long)p->m, (long long)p->n,
                 (long long)p->k);
        const jg__gemm_config c = plan_of(&t, p, what);
        jg__problem_key pk;
        jg__problem_key_make(p, &pk);
        const bool c_or_f32 = p->c_type != JG_DTYPE_NONE || p->d_type == JG_FP32;
        CHECK((c.split_ws == 3) == rows[i].split, "%s: split_ws %u, expected %s", what, c.split_ws,
              rows[i].split ? "3" : "none");
        CHECK(c.split_ws <= 1 || (c.cluster == 1 && c.split_k <= 1 && c.n_stack <= 1 &&
                                  c.block_n <= (c_or_f32 ? 128u : 176u)),
              "%s: split through the workspace with cluster %u, split_k %u, n_stack %u, "
              "tile width %u",
              what, c.cluster, c.split_k, c.n_stack, c.block_n);
        const uint64_t tiles = jg__gemm_units(&c, p->m, p->n);
        const uint64_t want =
            c.split_ws > 1 ? (tiles * 4 + 255) / 256 * 256 + tiles * 2 * c.block_m * c.block_n * 4
                           : 0;
        CHECK(jg__split_ws_bytes(&c, p->m, p->n, 132) == want, "%s: workspace %llu, expected %llu",
              what, (unsigned long long)jg__split_ws_bytes(&c, p->m, p->n, 132),
              (unsigned long long)want);
        jg__gemm_key key;
        jg__gemm_key_make(&pk, &c, &key);
        char name[128];
        jg__gemm_kernel_name(&key, "sm_90a", name);
        CHECK((strstr(name, "_ws3_") != NULL) == rows[i].split, "%s: kernel name %s", what, name);
    }
    /* the candidates JITGEMM_TUNE would time are split alike */
    jg__gemm_config cands[JG_PLAN_CANDIDATES_MAX];
    jg__problem_key pk;
    jg__problem_key_make(&long_k, &pk);
    const size_t n = jg__plan_candidates_sm90(&t, &pk, cands, JG_PLAN_CANDIDATES_MAX);
    CHECK(n > 0, "no candidates");
    for (size_t i = 0; i < n; ++i)
        CHECK(cands[i].split_ws == 3 || !jg__split_ws_fits(&pk, &cands[i]),
              "candidate %zu: split_ws %u", i, cands[i].split_ws);
}

/* The planner's own split through the workspace: plain tiles whose K a
 * cluster of 2 or 4 splits, past M = 128, take the same tile and split
 * through the workspace (the plan a launch without one falls back to is
 * JITGEMM_SPLIT_WS=0's: the cluster's); not swap-AB's cluster splits, not
 * at M <= 128, not under JITGEMM_SPLIT_WS=0 or JITGEMM_SPLIT, and never
 * among the candidates JITGEMM_TUNE times (they launch without a
 * workspace). Rows from the A/B that measured it (bench/results/
 * 2026-11-28-h200-split-ws/cluster-confirm) and its swap-AB rows. */
static void test_split_ws_rule(void)
{
    jg__target t, never;
    jg_test_h100_target(&t);
    never = t;
    never.force_split_ws = 1; /* JITGEMM_SPLIT_WS=0 */
    const jg_gemm_problem rows[] = {
        {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16, .m = 340, .n = 2560, .k = 17568},
        {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16, .m = 376, .n = 1024, .k = 14624},
        {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16, .m = 180, .n = 1408, .k = 20592},
        fp8(743, 1024, 17600, JG_SCALE_TENSOR),
        fp8(566, 1536, 20512, JG_SCALE_TENSOR),
        {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16, .m = 338, .n = 3584, .k = 28672},
        {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16, .m = 94, .n = 3520, .k = 22016},
        fp8(530, 1536, 18432, JG_SCALE_TENSOR),
        {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16, .m = 48, .n = 3520, .k = 22016},
        {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16, .m = 60, .n = 2560, .k = 17568},
    };
    int converted = 0, kept = 0, few = 0;
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_gemm_problem *p = &rows[i];
        char what[96];
        snprintf(what, sizeof what, "%s %lldx%lldx%lld", p->a_type == JG_E4M3 ? "fp8" : "bf16",
                 (long long)p->m, (long long)p->n, (long long)p->k);
        const jg__gemm_config base = plan_of(&never, p, what);
        char msg[768] = "";
        const jg__gemm_config c = plan_logged(&t, p, msg, what);
        jg__problem_key pk;
        jg__problem_key_make(p, &pk);
        CHECK(base.split_ws <= 1, "%s: JITGEMM_SPLIT_WS=0 split through the workspace", what);
        const bool rule = !base.swap_ab && base.split_k >= 2 && base.split_k <= 4 && p->m > 128 &&
                          jg__split_ws_fits(&pk, &base);
        if (strstr(msg, "by the few tiles' rule")) {
            /* (test_few_tiles_split checks that rule's plans) */
            CHECK(c.swap_ab && c.split_ws > 1 && p->a_type != JG_E4M3,
                  "%s: the few tiles' rule's plan is no swap-AB split: \"%s\"", what, msg);
            ++few;
        } else if (rule) {
            jg__gemm_config want = base;
            want.split_ws = base.split_k;
            want.split_k = 0;
            want.cluster = 1;
            want.n_stack = 0;
            CHECK(!memcmp(&c, &want, sizeof c),
                  "%s: the cluster split over %u was not split through the workspace alike "
                  "(split_ws %u, split_k %u, cluster %u, tile %ux%u against %ux%u)",
                  what, base.split_k, c.split_ws, c.split_k, c.cluster, c.block_m, c.block_n,
                  base.block_m, base.block_n);
            ++converted;
        } else {
            CHECK(!memcmp(&c, &base, sizeof c), "%s: a plan the rule leaves changed", what);
            kept += base.split_k > 1;
        }
        /* JITGEMM_SPLIT forces the cluster's split */
        jg__target forced = t;
        forced.force_split = JG_SPLIT_ANY;
        const jg__gemm_config f = plan_of(&forced, p, what);
        CHECK(f.split_ws <= 1, "%s: JITGEMM_SPLIT=any split through the workspace", what);
        jg__gemm_config cands[JG_PLAN_CANDIDATES_MAX];
        const size_t n = jg__plan_candidates_sm90(&t, &pk, cands, JG_PLAN_CANDIDATES_MAX);
        for (size_t j = 0; j < n; ++j)
            CHECK(cands[j].split_ws <= 1, "%s: candidate %zu splits through the workspace", what,
                  j);
    }
    CHECK(converted >= 4 && kept >= 2 && few >= 2,
          "the rows exercise the rule too little: %d converted, %d cluster splits kept, %d taken "
          "by the few tiles' rule first",
          converted, kept, few);
}

/* An offline sm_90a context, with JG_CONTEXT_WORKSPACE where `flag`, its
 * plan of p (NULL, a failed check, where none) and that plan's workspace
 * bytes; NULL (a failed check) where no context. The caller releases both. */
static jg_context *offline_plan(int flag, const jg_gemm_problem *p, jg_plan **plan, size_t *ws)
{
    jg_options o = {.flags = JG_CONTEXT_OFFLINE | (flag ? JG_CONTEXT_WORKSPACE : 0u),
                    .arch = "sm_90a",
                    .cache_mode = JG_CACHE_OFF};
    jg_context *ctx = NULL;
    *plan = NULL;
    *ws = 0;
    CHECK(jg_context_create(&o, &ctx) == JG_OK, "offline context: %s", jg_context_last_error(NULL));
    if (!ctx)
        return NULL;
    CHECK(jg_gemm_plan(ctx, p, plan) == JG_OK, "plan: %s", jg_context_last_error(ctx));
    if (*plan)
        CHECK(jg_plan_workspace_bytes(*plan, ws) == JG_OK, "workspace bytes");
    return ctx;
}

/* Only contexts made with JG_CONTEXT_WORKSPACE split K through a
 * workspace (the caller's args carry the fields): without the flag, the
 * plan of a row the rule takes is the cluster's, reports no workspace, and
 * JITGEMM_SPLIT_WS=S is ignored; with it, the plan splits, reports the
 * workspace its tiles need, and holds the cluster's plan for launches
 * without one. */
static void test_split_ws_context(void)
{
    const jg_gemm_problem p = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                               .m = 340, .n = 2560, .k = 17568};
    for (int flag = 0; flag < 2; ++flag)
        for (int forced = 0; forced < 2; ++forced) {
            if (forced)
                setenv("JITGEMM_SPLIT_WS", "4", 1);
            jg_plan *plan;
            size_t ws;
            jg_context *ctx = offline_plan(flag, &p, &plan, &ws);
            unsetenv("JITGEMM_SPLIT_WS");
            if (!ctx)
                continue;
            if (plan) {
                /* (unforced: the few tiles' rule's 3 units of its swap-AB tiles) */
                const uint32_t want = !flag ? 0 : forced ? 4 : 3;
                CHECK(plan->cfg.split_ws == want || (want == 0 && plan->cfg.split_ws <= 1),
                      "flag %d, JITGEMM_SPLIT_WS %s: split_ws %u, expected %u", flag,
                      forced ? "4" : "unset", plan->cfg.split_ws, want);
                CHECK((ws > 0) == (want > 1) &&
                          ws == jg__split_ws_bytes(&plan->cfg, p.m, p.n, plan->grid),
                      "flag %d: workspace %zu bytes", flag, ws);
                CHECK((plan->unsplit != NULL) == (want > 1) &&
                          (!plan->unsplit || plan->unsplit->cfg.split_ws <= 1),
                      "flag %d: the plan without the split %s", flag,
                      plan->unsplit ? "splits too" : "missing");
                CHECK(!plan->unsplit || forced || plan->unsplit->cfg.split_k == 2,
                      "flag %d: the fallback splits over %u CTAs, not the cluster of 2", flag,
                      plan->unsplit ? plan->unsplit->cfg.split_k : 0);
                jg_plan_release(plan);
            }
            jg_context_destroy(ctx);
        }
}

static jg_gemm_problem bf16(int64_t m, int64_t n, int64_t k)
{
    jg_gemm_problem p = {
        .a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16, .m = m, .n = n, .k = k};
    return p;
}

/* Stream-K (stream_k_for_waves): rows whose tiles leave SMs idle in their
 * last wave (random H200 rows at 0.56-0.70 of cuBLASLt: 160 tiles of
 * 128x136 on 132 SMs, 266 of 128x88, 242 of 128x144) take it, 16-bit only,
 * without a cluster, in units of at least 8 stages, half a wave to two
 * waves of tiles, M over at most 2 tiles in as many row groups (then units
 * of 16 stages or more), the log saying so; many waves, M over three
 * tiles or more, decode rows and FP8 do not;
 * nor the plan without a workspace
 * (JITGEMM_SPLIT_WS=0) or JITGEMM_STREAM_K=0; JITGEMM_STREAM_K=5 forces it
 * where the tile fits. The workspace: a flag and a tile of FP32 sums per
 * CTA. The tuner's candidates never take it. */
static void test_stream_k(void)
{
    jg__target t, never, none, forced;
    jg_test_h100_target(&t);
    never = none = forced = t;
    never.force_stream_k = 1; /* JITGEMM_STREAM_K=0 */
    none.force_split_ws = 1;  /* no workspace */
    forced.force_stream_k = 5;
    jg_gemm_problem fp16 = bf16(211, 1024, 8192);
    fp16.a_type = fp16.b_type = fp16.d_type = JG_FP16;
    const struct {
        jg_gemm_problem p;
        uint32_t takes; /* row groups, 0: none */
    } rows[] = {
        {bf16(145, 4608, 3072), 1},
        {bf16(150, 2112, 7680), 2}, /* K >= 8192: the model's sure split-K */
        {bf16(147, 4608, 9216), 1},
        {bf16(151, 5120, 10944), 1},
        {fp16, 0},
        {bf16(292, 11008, 23088), 2}, /* 192-row tiles: 1.38x the 128x104 swap-AB plan (H200) */
        {bf16(400, 11008, 23088), 0}, /* M over 3 tiles */
        {bf16(157, 2560, 5504), 0},   /* over 2, units under 16 stages */
        {bf16(3326, 24576, 19152), 0},
        {bf16(4096, 4096, 4096), 0},
        {bf16(16, 4096, 4096), 0},
        {fp8(149, 17408, 28224, JG_SCALE_TENSOR), 0},
    };
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_gemm_problem *p = &rows[i].p;
        char what[96], msg[768] = "";
        snprintf(what, sizeof what, "%s %lldx%lldx%lld", jg__dtype_name(p->a_type), (long long)p->m,
                 (long long)p->n, (long long)p->k);
        const jg__gemm_config c = plan_logged(&t, p, msg, what);
        CHECK(c.stream_k == rows[i].takes, "%s: stream_k %u, expected %d: \"%s\"", what, c.stream_k,
              rows[i].takes, msg);
        const uint64_t stages = (uint64_t)(p->k + c.block_k - 1) / c.block_k;
        if (c.stream_k) {
            CHECK(c.split_ws >= 2 && c.split_ws <= JG_SPLIT_WS_MAX && c.cluster == 1 &&
                      c.split_k <= 1 && c.n_stack <= 1 &&
                      (stages + c.split_ws - 1) / c.split_ws >= (c.stream_k > 1 ? 16 : 8) &&
                      p->m <= c.stream_k * (c.swap_ab ? c.block_n : c.block_m) &&
                      p->m > (c.stream_k - 1) * (c.swap_ab ? c.block_n : c.block_m) &&
                      jg__gemm_units(&c, p->m, p->n) <= 2 * 132 &&
                      jg__gemm_units(&c, p->m, p->n) >= 66 && strstr(msg, "stream-K in") &&
                      strstr(msg, "waves' rule"),
                  "%s: stream-K over %u units, cluster %u: \"%s\"", what, c.split_ws, c.cluster,
                  msg);
            const uint32_t grid = 132 / c.stream_k * c.stream_k;
            const uint64_t want =
                (grid * 4 + 255) / 256 * 256 + (uint64_t)grid * c.block_m * c.block_n * 4;
            CHECK(jg__split_ws_bytes(&c, p->m, p->n, grid) == want,
                  "%s: workspace %llu bytes, expected %llu", what,
                  (unsigned long long)jg__split_ws_bytes(&c, p->m, p->n, grid),
                  (unsigned long long)want);
            jg__problem_key pk;
            jg__problem_key_make(p, &pk);
            jg__gemm_key key;
            jg__gemm_key_make(&pk, &c, &key);
            char name[128];
            jg__gemm_kernel_name(&key, "sm_90a", name);
            char part[24];
            if (c.stream_k > 1)
                snprintf(part, sizeof part, "_sk%ur%u_", c.split_ws, c.stream_k);
            else
                snprintf(part, sizeof part, "_sk%u_", c.split_ws);
            CHECK(strstr(name, part) != NULL, "%s: kernel name %s lacks %s", what, name, part);
        }
        CHECK(!plan_of(&never, p, what).stream_k && !plan_of(&none, p, what).stream_k,
              "%s: stream-K with JITGEMM_STREAM_K=0 or without a workspace", what);
        const jg__gemm_config f = plan_of(&forced, p, what);
        jg__problem_key pk;
        jg__problem_key_make(p, &pk);
        const jg__gemm_config base = plan_of(&never, p, what);
        jg__gemm_config conv = base;
        conv.cluster = 1;
        conv.split_k = conv.n_stack = 0;
        conv.split_ws = 5;
        conv.stream_k = 1;
        const bool fits = jg__stream_k_fits(&pk, &conv);
        const uint64_t f_rows =
            (uint64_t)(p->m + (f.swap_ab ? f.block_n : f.block_m) - 1) /
            (f.swap_ab ? f.block_n : f.block_m); /* row groups while each keeps two CTAs */
        CHECK(fits ? (f.stream_k == (2 * f_rows <= 132 ? f_rows : 1) && f.split_ws == 5 &&
                      f.block_m == base.block_m && f.block_n == base.block_n)
                   : !memcmp(&f, &base, sizeof f),
              "%s: JITGEMM_STREAM_K=5: stream_k %u over %u units (the tile %s)", what, f.stream_k,
              f.split_ws, fits ? "fits" : "does not fit");
        CHECK(p->a_type != JG_E4M3 || !fits, "%s: FP8 fits stream-K", what);
        jg__gemm_config cands[JG_PLAN_CANDIDATES_MAX];
        const size_t n = jg__plan_candidates_sm90(&t, &pk, cands, JG_PLAN_CANDIDATES_MAX);
        for (size_t j = 0; j < n; ++j)
            CHECK(!cands[j].stream_k, "%s: candidate %zu is stream-K", what, j);
    }
}

/* JITGEMM_SPLIT_WS=S with JITGEMM_SPLIT_DP=1: the plan's tile (up to 256
 * wide without C) split into S units after data-parallel tiles
 * (cfg.sk_dp, stream_k 0), its kernel named "_wsSdp" and built with
 * JG_SK_DP; its workspace holds a count and S - 1 tiles of FP32 sums only
 * for the tiles of the last one or two waves (counted here from the waves:
 * 2578x5616x14336 on 128x240 tiles makes 21 x 24 = 504 tiles, 3 waves of
 * 132 and 108 more, of which 2 x 132 run whole and 240 split);
 * without the switch, 240-wide tiles do not fit the split and the plan
 * stays as it was; FP8 never takes it (its promoted sums do not carry
 * from unit to unit); no candidate has it. */
static void test_split_dp(void)
{
    jg__target t, forced, dp;
    jg_test_h100_target(&t);
    forced = dp = t;
    forced.force_split_ws = dp.force_split_ws = 4;
    dp.force_sk_dp = 1;
    const jg_gemm_problem p = bf16(2578, 5616, 14336);
    const jg__gemm_config base = plan_of(&t, &p, "2578x5616x14336");
    const jg__gemm_config f = plan_of(&forced, &p, "2578x5616x14336 JITGEMM_SPLIT_WS=4");
    const jg__gemm_config c = plan_of(&dp, &p, "2578x5616x14336 JITGEMM_SPLIT_DP=1");
    CHECK(!base.sk_dp && !f.sk_dp, "sk_dp without the switch");
    CHECK(base.block_n > 176 && !f.split_ws,
          "the %u-wide tile took the split without JITGEMM_SPLIT_DP", base.block_n);
    CHECK(c.sk_dp && !c.stream_k && c.split_ws == 4 && c.cluster == 1 &&
              c.block_m == base.block_m && c.block_n == base.block_n,
          "JITGEMM_SPLIT_DP=1: sk_dp %u, stream_k %u, %u units, tile %ux%u (the plan's %ux%u)",
          c.sk_dp, c.stream_k, c.split_ws, c.block_m, c.block_n, base.block_m, base.block_n);
    /* the workspace: the tiles of the last wave (ragged or not) and, where
     * it is ragged, the wave before it; all of them under two waves */
    const uint64_t tiles =
        (2578 + c.block_m - 1) / c.block_m * ((5616 + c.block_n - 1) / c.block_n);
    const uint64_t split = tiles < 2 * 132 ? tiles : 132 + tiles % 132;
    CHECK(tiles != 504 || split == 240, "%llu split tiles of 504", (unsigned long long)split);
    const uint64_t want = (split * 4 + 255) / 256 * 256 + split * 3 * c.block_m * c.block_n * 4;
    CHECK(jg__split_ws_bytes(&c, p.m, p.n, 132) == want,
          "workspace %llu bytes, expected %llu (%llu split tiles)",
          (unsigned long long)jg__split_ws_bytes(&c, p.m, p.n, 132), (unsigned long long)want,
          (unsigned long long)split);
    jg__problem_key pk;
    jg__problem_key_make(&p, &pk);
    jg__gemm_key key;
    jg__gemm_key_make(&pk, &c, &key);
    char name[128];
    jg__gemm_kernel_name(&key, "sm_90a", name);
    CHECK(strstr(name, "_ws4dp") != NULL, "kernel name %s lacks _ws4dp", name);
    jg_gemm_problem with_c = p;
    with_c.c_type = JG_BF16;
    const jg__gemm_config cc = plan_of(&dp, &with_c, "2578x5616x14336 +C JITGEMM_SPLIT_DP=1");
    CHECK(cc.block_n > 128 ? !cc.split_ws : cc.sk_dp, "with C: a %u-wide tile, %u units",
          cc.block_n, cc.split_ws);
    const jg_gemm_problem f8 = fp8(2578, 5616, 14336, JG_SCALE_TENSOR);
    const jg__gemm_config c8 = plan_of(&dp, &f8, "fp8 2578x5616x14336 JITGEMM_SPLIT_DP=1");
    CHECK(!c8.sk_dp, "FP8 split after data-parallel tiles (%u units)", c8.split_ws);
    jg__gemm_config cands[JG_PLAN_CANDIDATES_MAX];
    const size_t n = jg__plan_candidates_sm90(&t, &pk, cands, JG_PLAN_CANDIDATES_MAX);
    for (size_t j = 0; j < n; ++j)
        CHECK(!cands[j].sk_dp, "candidate %zu splits after data-parallel tiles", j);
}

/* Stream-K through a context: with JG_CONTEXT_WORKSPACE the plan of a row
 * the rule takes streams, reports a workspace of a flag and a tile of sums
 * per CTA of its grid, and holds the plan without it for launches without
 * one; without the flag, neither. */
static void test_stream_k_context(void)
{
    /* M in one tile, and over two (row groups: a grid of a multiple of 2) */
    const struct {
        jg_gemm_problem p;
        uint32_t groups;
    } rows[] = {{bf16(145, 4608, 3072), 1}, {bf16(314, 5760, 16384), 2}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i)
        for (int flag = 0; flag < 2; ++flag) {
            jg_plan *plan;
            size_t ws;
            jg_context *ctx = offline_plan(flag, &rows[i].p, &plan, &ws);
            if (!ctx)
                continue;
            if (plan) {
                const uint64_t want =
                    (plan->grid * 4ull + 255) / 256 * 256 +
                    (uint64_t)plan->grid * plan->cfg.block_m * plan->cfg.block_n * 4;
                CHECK(flag ? plan->cfg.stream_k == rows[i].groups && ws == want &&
                                 plan->split_counts == plan->grid &&
                                 plan->grid % rows[i].groups == 0 && plan->unsplit &&
                                 !plan->unsplit->cfg.stream_k && plan->unsplit->cfg.split_ws <= 1
                           : !plan->cfg.stream_k && ws == 0 && !plan->unsplit,
                      "row %zu, flag %d: stream_k %u, grid %u, counts %llu, workspace %zu "
                      "(expected %llu), fallback %s",
                      i, flag, plan->cfg.stream_k, plan->grid,
                      (unsigned long long)plan->split_counts, ws,
                      (unsigned long long)(flag ? want : 0), plan->unsplit ? "held" : "none");
                jg_plan_release(plan);
            }
            jg_context_destroy(ctx);
        }
}

/* 192-row tiles (three consumer warpgroups of one m64 slab each, 512
 * threads): the model's candidates for dense 16-bit problems, at most
 * SM90_TALL_MAX_BLOCK_N wide, neither split over a cluster nor ping-pong.
 * Rows where the planner takes them ran faster on an H200 than the plans
 * before (bench/results/2026-11-29-h200-tile192-tune): 175x20480x3584
 * 1.24x, 180x12288x6144 1.15x, 132x20480x7856 1.15x (swap-AB), FP16
 * 85x17408x2112 1.18x (swap-AB). Never FP8 nor grouped; an M-generic
 * plan's A box divides the tile. */
static void test_tile_192(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    const typed_row rows[] = {{JG_BF16, 175, 20480, 3584, false},
                              {JG_BF16, 180, 12288, 6144, false},
                              {JG_BF16, 132, 20480, 7856, true},
                              {JG_FP16, 85, 17408, 2112, true}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i)
        for (int generic = 0; generic < 2; ++generic) {
            jg_gemm_problem p =
                dense_problem(rows[i].ab, rows[i].ab, rows[i].m, rows[i].n, rows[i].k);
            p.flags = generic ? JG_GEMM_M_GENERIC : 0;
            char what[96], msg[768] = "";
            const jg__gemm_config c = plan_logged(&t, &p, msg, problem_name(&p, what, sizeof what));
            if (generic) {
                CHECK(c.block_m % c.a_box_m == 0, "%s M-generic: %ux%u tile, A box of %u rows",
                      what, c.block_m, c.block_n, c.a_box_m);
                continue;
            }
            CHECK(c.block_m == 192 && c.consumers == 3 && (bool)c.swap_ab == rows[i].expect &&
                      c.block_n <= 160 && c.split_k <= 1 && !c.pingpong,
                  "%s: tile %ux%u, %u consumers, swap-AB %u, split %u, ping-pong %u; expected "
                  "192 rows, 3 consumers, swap-AB %d: \"%s\"",
                  what, c.block_m, c.block_n, c.consumers, (unsigned)c.swap_ab, c.split_k,
                  (unsigned)c.pingpong, rows[i].expect, msg);
            /* the same shape in FP8, and as eight groups of it: never 192 rows */
            const jg_gemm_problem f = fp8(rows[i].m, rows[i].n, rows[i].k, JG_SCALE_TENSOR);
            const jg__gemm_config fc = plan_logged(&t, &f, msg, what);
            CHECK(fc.block_m != 192, "%s FP8: a 192-row tile", what);
            int64_t gm[8];
            for (int g = 0; g < 8; ++g)
                gm[g] = rows[i].m;
            const jg_grouped_problem gp = {.layout = JG_GROUPED_LIST,
                                           .a_type = rows[i].ab,
                                           .b_type = rows[i].ab,
                                           .d_type = rows[i].ab,
                                           .groups = 8,
                                           .m = gm,
                                           .n = rows[i].n,
                                           .k = rows[i].k};
            jg__problem_key gk;
            jg__grouped_key_make(&gp, &gk);
            jg__gemm_config cands[JG_PLAN_CANDIDATES_MAX];
            const size_t n = jg__plan_candidates_sm90(&t, &gk, cands, JG_PLAN_CANDIDATES_MAX);
            for (size_t j = 0; j < n; ++j)
                CHECK(cands[j].block_m != 192, "%s, 8 groups: candidate %zu has 192 rows", what,
                      j);
        }
}

/* The kernel's grouped tile order (sm90_gemm.cu's jg_tile_coords), its
 * waves' A and B panels counted tile by tile: what band_rows minimizes,
 * written here independently of plan_sm90.c's per-band formula. */
static uint64_t band_panels_brute(uint64_t rows, uint64_t cols, uint64_t g, uint64_t wave,
                                  uint64_t unit_m, uint64_t unit_n)
{
    static unsigned char seen_a[4096], seen_b[4096];
    uint64_t panels = 0;
    for (uint64_t s = 0; s < rows * cols; s += wave) {
        memset(seen_a, 0, sizeof seen_a);
        memset(seen_b, 0, sizeof seen_b);
        for (uint64_t t = s; t < s + wave && t < rows * cols; ++t) {
            const uint64_t size = g * cols, first = t / size * g;
            const uint64_t h = rows - first < g ? rows - first : g, in = t % size;
            const uint64_t tm = first + in % h, tn = in / h;
            panels += seen_a[tm] ? 0 : unit_m;
            panels += seen_b[tn] ? 0 : unit_n;
            seen_a[tm] = seen_b[tn] = 1;
        }
    }
    return panels;
}

/* Few tiles, long K (16-bit): where swap-AB tiles of 128 weight rows span M
 * in one or two columns (each at most 176 wide) and fill under half the
 * SMs, and each of S = SMs / tiles units keeps 64 stages of K or more, the
 * plan is those tiles split S ways through the workspace. Counted here
 * from the problem: the columns, the tiles, S and the stages; rows from
 * the H200 measurements (bench/results/2026-11-30-h200-few-tiles). Units
 * under 64 stages, three columns, M <= 64, FP8, M-generic plans and plans
 * without a workspace (JITGEMM_SPLIT_WS=0) are not the rule's. */
static void test_few_tiles_split(void)
{
    jg__target t, never;
    jg_test_h100_target(&t);
    never = t;
    never.force_split_ws = 1;
    static const struct {
        int64_t m, n, k;
    } rows[] = {{168, 4608, 28672}, {130, 2048, 21088}, {248, 2560, 10240}, {71, 3072, 28672},
                {170, 4096, 27712}, {229, 2816, 20480}, {155, 1536, 15360}, {376, 2048, 4096},
                {82, 2560, 15360},  {48, 3520, 22016},  {221, 3584, 5120}};
    int taken = 0, left = 0;
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_gemm_problem p = dense_problem(JG_BF16, JG_BF16, rows[i].m, rows[i].n, rows[i].k);
        char what[96], msg[768] = "";
        problem_name(&p, what, sizeof what);
        const jg__gemm_config c = plan_logged(&t, &p, msg, what);
        int64_t cols = 1, width;
        while ((width = ((p.m + cols - 1) / cols + 7) / 8 * 8) > 176)
            ++cols;
        const int64_t tiles = (p.n + 127) / 128 * cols;
        int64_t s = t.sm_count / tiles;
        s = s > JG_SPLIT_WS_MAX ? JG_SPLIT_WS_MAX : s;
        const bool takes =
            p.m > 64 && cols <= 2 && 2 * tiles < t.sm_count && s >= 2 && (p.k + 63) / 64 >= 64 * s;
        const bool by_rule = strstr(msg, "by the few tiles' rule") != NULL;
        CHECK(by_rule == takes, "%s: the few tiles' rule %d, expected %d: \"%s\"", what, by_rule,
              takes, msg);
        if (takes) {
            ++taken;
            CHECK(c.swap_ab && c.block_m == 128 && c.block_n == (uint32_t)width &&
                      c.split_ws == (uint32_t)s && c.cluster <= 1 && c.split_k <= 1,
                  "%s: swap-AB %d, tile %ux%u split %u, expected 128x%lld split %lld", what,
                  c.swap_ab, c.block_m, c.block_n, c.split_ws, (long long)width, (long long)s);
            const jg__gemm_config w = plan_of(&never, &p, what);
            CHECK(w.split_ws <= 1, "%s: split through the workspace under JITGEMM_SPLIT_WS=0",
                  what);
        } else {
            ++left;
        }
        jg_gemm_problem g = p;
        g.flags = JG_GEMM_M_GENERIC;
        msg[0] = 0;
        plan_logged(&t, &g, msg, what);
        CHECK(!strstr(msg, "few tiles"), "%s M-generic: the few tiles' rule", what);
        const jg_gemm_problem f = fp8(p.m, p.n, p.k, JG_SCALE_TENSOR);
        msg[0] = 0;
        plan_logged(&t, &f, msg, what);
        CHECK(!strstr(msg, "few tiles"), "%s FP8: the few tiles' rule", what);
    }
    CHECK(taken == 4 && left == 7,
          "%d rows taken by the few tiles' rule, %d left (4 and 7 expected)", taken, left);
}

/* K split over a cluster never makes more waves of clusters than the
 * unsplit tiles make (split_adds_waves), on the rows of
 * bench/split-waves.jsonl whose plans split into 2-6 waves before (H200's
 * resident clusters: BF16 916x1536x7168 swap-AB 128x160 over clusters of
 * 8, 576 CTAs in 5 waves, ran at 0.45 of torch.mm); some of them still
 * split (fewer CTAs a cluster or wider tiles), and JITGEMM_SPLIT=8 still
 * splits over 8 whatever the waves. */
static void test_split_adds_waves(void)
{
    jg__target t, forced;
    h200_clusters_target(&t);
    forced = t;
    forced.force_split = 8;
    const typed_row rows[] = {
        {JG_BF16, 91, 1024, 15504, false},  {JG_BF16, 89, 5760, 7120, false},
        {JG_BF16, 536, 1408, 6144, false},  {JG_BF16, 606, 1408, 10240, false},
        {JG_BF16, 210, 1024, 21072, false}, {JG_BF16, 113, 5760, 3440, false},
        {JG_E4M3, 126, 9216, 9360, false},  {JG_E4M3, 104, 4096, 21072, false},
        {JG_E4M3, 70, 20480, 23504, false}, {JG_E4M3, 169, 9216, 28576, false},
        {JG_E4M3, 408, 1024, 6448, false},  {JG_BF16, 916, 1536, 7168, false},
        {JG_E4M3, 652, 1536, 10240, false}};
    int split = 0;
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_gemm_problem p =
            rows[i].ab == JG_E4M3
                ? fp8(rows[i].m, rows[i].n, rows[i].k, JG_SCALE_TENSOR)
                : dense_problem(JG_BF16, JG_BF16, rows[i].m, rows[i].n, rows[i].k);
        char what[96], msg[768] = "";
        const jg__gemm_config c = plan_logged(&t, &p, msg, problem_name(&p, what, sizeof what));
        if (c.split_k <= 1)
            continue;
        ++split;
        const int64_t rows_of = c.swap_ab ? p.n : p.m, cols = c.swap_ab ? p.m : p.n;
        const int64_t tiles =
            (rows_of + c.block_m - 1) / c.block_m * ((cols + c.block_n - 1) / c.block_n);
        const int64_t at_once = t.resident_clusters[c.split_k] ? t.resident_clusters[c.split_k]
                                                               : t.sm_count / c.split_k;
        CHECK((tiles + at_once - 1) / at_once <= (tiles + t.sm_count - 1) / t.sm_count,
              "%s: %lld tiles split over clusters of %u make %lld waves of them, unsplit %lld: "
              "\"%s\"",
              what, (long long)tiles, c.split_k, (long long)((tiles + at_once - 1) / at_once),
              (long long)((tiles + t.sm_count - 1) / t.sm_count), msg);
    }
    CHECK(split >= 3, "%d of the rows split over a cluster (3 or more expected)", split);
    const jg_gemm_problem p = dense_problem(JG_BF16, JG_BF16, 916, 1536, 7168);
    char msg[768] = "";
    const jg__gemm_config u = plan_logged(&t, &p, msg, "bf16 916x1536x7168");
    CHECK(u.split_k <= 1 && strstr(msg, "unsplit: each split over a cluster would add waves"),
          "bf16 916x1536x7168: split %u; the log names the unsplit family: \"%s\"", u.split_k, msg);
    const jg__gemm_config f = plan_of(&forced, &p, "bf16 916x1536x7168 under JITGEMM_SPLIT=8");
    CHECK(f.split_k == 8, "bf16 916x1536x7168 under JITGEMM_SPLIT=8: split %u", f.split_k);
}

/* FP8 plain tiles of one CTA, no split, one row of tiles spanning M =
 * 80-128 with K >= 9216 and N >= 8192: the plan stacks 4 CTAs along N
 * (1x4, A's tile multicast), its tile's rows still spanning M; M under 80,
 * short K, narrow N, block scales, M-generic plans and JITGEMM_N_STACK=1
 * keep the plan; the tuner's candidates start with the rule's plan. */
static void test_one_row_along_n(void)
{
    jg__target t, no_stack;
    jg_test_h100_target(&t);
    no_stack = t;
    no_stack.force_n_stack = 1;
    static const struct {
        int64_t m, n, k;
        bool stacks;
    } rows[] = {{84, 10240, 18432, true},  {116, 13232, 9520, true}, {95, 9216, 16880, true},
                {123, 22016, 22416, true}, {110, 5120, 9216, false}, {76, 18944, 11008, false},
                {120, 12288, 3072, false}, {100, 13824, 8192, false}};
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_gemm_problem p = fp8(rows[i].m, rows[i].n, rows[i].k, JG_SCALE_TENSOR);
        char what[96];
        problem_name(&p, what, sizeof what);
        const jg__gemm_config before = plan_of(&no_stack, &p, what);
        const jg__gemm_config c = plan_of(&t, &p, what);
        CHECK(!before.swap_ab && before.cluster <= 1 && before.split_k <= 1 &&
                  before.block_m >= p.m,
              "%s: the plan without the rule is not one row of plain tiles of one CTA (a row of "
              "the test wants one)",
              what);
        if (rows[i].stacks) {
            CHECK(c.cluster == 4 && jg__cfg_n_stack(&c) == 4 && jg__cfg_m_stack(&c) == 1 &&
                      !c.swap_ab && c.block_m >= p.m,
                  "%s: cluster %u, %u along N, tile %ux%u: expected 1x4 of tiles spanning M", what,
                  c.cluster, jg__cfg_n_stack(&c), c.block_m, c.block_n);
            jg__problem_key pk;
            jg__problem_key_make(&p, &pk);
            jg__gemm_config cands[JG_PLAN_CANDIDATES_MAX];
            const size_t n = jg__plan_candidates_sm90(&t, &pk, cands, JG_PLAN_CANDIDATES_MAX);
            CHECK(n && !memcmp(&cands[0], &c, sizeof c),
                  "%s: the tuner's first candidate is not the rule's plan", what);
        } else {
            CHECK(!memcmp(&c, &before, sizeof c), "%s: the plan moved", what);
        }
        jg_gemm_problem g = p;
        g.flags = JG_GEMM_M_GENERIC;
        const jg__gemm_config cg = plan_of(&t, &g, what);
        CHECK(jg__cfg_n_stack(&cg) <= 1, "%s M-generic: stacked along N", what);
        const jg_gemm_problem b = fp8(p.m, p.n, p.k, JG_SCALE_BLOCK);
        const jg__gemm_config cb = plan_of(&t, &b, what);
        CHECK(jg__cfg_n_stack(&cb) <= 1, "%s block scales: stacked along N", what);
    }
}

/* FP8 plans in clusters of 2 stacked along M whose tile rows are odd: the
 * last cluster's second CTA computes a tile wholly past M. Where that pads
 * 4% or more of the rows computed, the plan stacks its cluster along N
 * instead (1x2, no row past M's last tile); even rows, fewer than 4%
 * padded, M-generic plans, BF16 and JITGEMM_N_STACK=1 keep the M stack.
 * The rows and their padding are counted here from the plan's tile. */
static void test_odd_rows_along_n(void)
{
    jg__target t, no_stack;
    jg_test_h100_target(&t);
    no_stack = t;
    no_stack.force_n_stack = 1;
    static const struct {
        int64_t m, n, k;
    } rows[] = {{568, 22016, 23376}, {1403, 3584, 24576}, {619, 25600, 23024},
                {1707, 3072, 24432}, {6686, 2816, 16032}, {8388, 18432, 25680}};
    int stacked = 0, kept = 0;
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        char what[96];
        snprintf(what, sizeof what, "fp8 %lldx%lldx%lld", (long long)rows[i].m,
                 (long long)rows[i].n, (long long)rows[i].k);
        const jg_gemm_problem p = fp8(rows[i].m, rows[i].n, rows[i].k, JG_SCALE_TENSOR);
        const jg__gemm_config before = plan_of(&no_stack, &p, what);
        const jg__gemm_config c = plan_of(&t, &p, what);
        CHECK(before.cluster == 2 && jg__cfg_m_stack(&before) == 2 && !before.swap_ab,
              "%s: the plan without stacks along N: cluster %u of %u along M (a row of the test "
              "wants clusters of 2 along M)",
              what, before.cluster, jg__cfg_m_stack(&before));
        const int64_t tile_rows = (rows[i].m + before.block_m - 1) / before.block_m;
        const bool pads = tile_rows % 2 == 1 && 100 / (tile_rows + 1) >= 4;
        if (pads) {
            ++stacked;
            CHECK(c.cluster == 2 && jg__cfg_n_stack(&c) == 2 && jg__cfg_m_stack(&c) == 1 &&
                      !c.swap_ab,
                  "%s: %lld rows of %u-row tiles (one more computed): cluster %u, %u along N", what,
                  (long long)tile_rows, before.block_m, c.cluster, jg__cfg_n_stack(&c));
        } else {
            ++kept;
            CHECK(!memcmp(&c, &before, sizeof c), "%s: %lld rows of %u-row tiles: the plan moved",
                  what, (long long)tile_rows, before.block_m);
        }
        jg_gemm_problem g = p;
        g.flags = JG_GEMM_M_GENERIC;
        const jg__gemm_config cg = plan_of(&t, &g, what);
        CHECK(jg__cfg_n_stack(&cg) <= 1, "%s M-generic: stacked along N", what);
        jg_gemm_problem b = p;
        b.a_type = b.b_type = JG_BF16;
        b.scale = JG_SCALE_NONE;
        const jg__gemm_config cb = plan_of(&t, &b, what);
        CHECK(jg__cfg_n_stack(&cb) <= 1, "%s BF16: stacked along N", what);
    }
    CHECK(stacked == 3 && kept == 3, "%d rows stacked along N, %d kept (3 and 3 expected)", stacked,
          kept);
}

/* Dense plans past L2's reach take the band whose waves read the fewest
 * panels, counted here tile by tile: at most 0.95 of the default band's,
 * and none of the bands the planner tries reads fewer; others keep the
 * default (operands in L2, K short, grouped problems). */
static void test_bands(void)
{
    jg__target t;
    jg_test_h100_target(&t);
    static const int64_t rows[][3] = {
        {2578, 5616, 14336}, {2721, 20480, 11840}, {14455, 3584, 11008},
        {4233, 2560, 15360}, {6476, 14416, 7168},  {3941, 27648, 1024},
        {10763, 2048, 2048}, {64, 4096, 4096},     {1024, 1024, 1024}};
    static const uint64_t bands[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
    uint32_t moved = 0;
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        const jg_gemm_problem p =
            dense_problem(JG_BF16, JG_BF16, rows[i][0], rows[i][1], rows[i][2]);
        char what[96];
        problem_name(&p, what, sizeof what);
        const jg__gemm_config c = plan_of(&t, &p, what);
        const bool small = (double)(rows[i][0] + rows[i][1]) * (double)rows[i][2] * 2 <= 40 << 20;
        if (small || c.split_k > 1 || c.split_ws > 1) {
            CHECK(c.group_m == JG_BAND_ROWS_DEFAULT, "%s: band of %u rows, expected the default",
                  what, c.group_m);
            continue;
        }
        if (c.cluster > 1)
            continue; /* waves of clusters: the resident count's */
        const uint64_t um = c.block_m, un = c.block_n;
        const uint64_t r = (uint64_t)((c.swap_ab ? rows[i][1] : rows[i][0]) + um - 1) / um;
        const uint64_t n = (uint64_t)((c.swap_ab ? rows[i][0] : rows[i][1]) + un - 1) / un;
        const uint64_t wave = (uint64_t)t.sm_count;
        const uint64_t base = band_panels_brute(r, n, JG_BAND_ROWS_DEFAULT, wave, um, un);
        const uint64_t chosen = band_panels_brute(r, n, c.group_m, wave, um, un);
        CHECK(c.group_m >= 1 && (c.group_m == JG_BAND_ROWS_DEFAULT || chosen <= 0.95 * base),
              "%s: band of %u rows reads %llu panel rows, the default's %llu", what, c.group_m,
              (unsigned long long)chosen, (unsigned long long)base);
        for (size_t b = 0; b < JG_ARRAY_LEN(bands) && bands[b] < r; ++b)
            CHECK(c.group_m == JG_BAND_ROWS_DEFAULT ||
                      band_panels_brute(r, n, bands[b], wave, um, un) >= chosen,
                  "%s: bands of %llu rows read fewer panels than the chosen %u", what,
                  (unsigned long long)bands[b], c.group_m);
        moved += c.group_m != JG_BAND_ROWS_DEFAULT;
        /* deterministic: the same problem plans the same band */
        CHECK(plan_of(&t, &p, what).group_m == c.group_m, "%s: band differs between plans", what);
    }
    CHECK(moved >= 3, "only %u of the long-K rows moved off the default band", moved);
}

int main(void)
{
    test_split_dp();
    test_bands();
    test_odd_rows_along_n();
    test_few_tiles_split();
    test_split_adds_waves();
    test_one_row_along_n();
    test_stream_k_context();
    test_stream_k();
    test_split_ws_context();
    test_split_ws_rule();
    test_split_ws_forced();
    test_n_stack();
    test_resident_clusters();
    test_no_split_mn_major();
    test_table();
    test_long_k_swap();
    test_model_sure();
    test_fp8_swap_wide();
    test_swap_pad();
    test_swap_pad_always();
    test_swap_over_row_tiles();
    test_tile_192();
    test_swap_pairs();
    test_candidates();
    test_fp8_defaults();
    test_rows_off_lines();
    test_epilogue_boxes();
    test_generic_a_box();
    test_exact_promote();
    test_tall_tiles();
    test_a_box();
    test_nvfp4_swap_rows();
    test_tune_offline();
    test_pre_chunks();
    test_pre_widths();
    test_pre_balance();
    test_pre_planner();
    test_pre_tables();
    return jg_test_result("test_plan");
}
