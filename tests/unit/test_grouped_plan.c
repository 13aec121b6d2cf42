/* Grouped GEMM (list layout) without a GPU: the validation table, what the
 * kernel key depends on, the plan cache, and every argument check of
 * jg_grouped_run (an offline context refuses to launch only after them). */
#include <stdio.h>
#include <string.h>

#include "jg_internal.h"
#include "jg_test.h"

static const int64_t seed1_m[8] = {80, 176, 128, 72, 64, 248, 96, 160};

static jg_grouped_problem seed1(void)
{
    jg_grouped_problem p = {.layout = JG_GROUPED_LIST, .a_type = JG_BF16, .b_type = JG_BF16,
                            .d_type = JG_BF16, .groups = 8, .m = seed1_m, .n = 4096, .k = 7168};
    return p;
}

static jg_context *offline(void)
{
    jg_options o = {.flags = JG_CONTEXT_OFFLINE, .arch = "sm_90a", .cache_mode = JG_CACHE_OFF};
    jg_context *ctx = NULL;
    CHECK(jg_context_create(&o, &ctx) == JG_OK, "offline context: %s", jg_context_last_error(NULL));
    return ctx;
}

static void expect(jg_context *ctx, const char *what, jg_status got, jg_status want,
                   const char *word)
{
    const char *msg = jg_context_last_error(ctx);
    CHECK(got == want, "%s: %s, expected %s (%s)", what, jg_status_name(got), jg_status_name(want),
          msg);
    CHECK(!word || strstr(msg, word), "%s: message lacks \"%s\": %s", what, word, msg);
}

static void test_validation(jg_context *ctx)
{
    static const int64_t negative[2] = {4, -1}, huge[1] = {INT64_C(1) << 31};
    static const int64_t many[JG_GROUPED_MAX_GROUPS + 1] = {0};
    struct {
        const char *what;
        jg_grouped_problem p;
        jg_status want;
        const char *word;
    } rows[] = {
        {"groups 0", {.layout = JG_GROUPED_LIST, .groups = 0}, JG_ERR_INVALID, "groups"},
        {"groups 65", {.layout = JG_GROUPED_LIST, .groups = 65, .m = many}, JG_ERR_TOO_LARGE,
         "groups"},
        {"m NULL", {.layout = JG_GROUPED_LIST, .groups = 2}, JG_ERR_NULL_POINTER, "problem.m"},
        {"m[1] < 0", {.layout = JG_GROUPED_LIST, .groups = 2, .m = negative}, JG_ERR_INVALID,
         "m[1]"},
        {"m[0] 2^31", {.layout = JG_GROUPED_LIST, .groups = 1, .m = huge}, JG_ERR_TOO_LARGE, "m[0]"},
        {"contiguous, no m_max", {.layout = JG_GROUPED_CONTIGUOUS, .groups = 4}, JG_ERR_INVALID,
         "m_max"},
        {"masked, 257 groups", {.layout = JG_GROUPED_MASKED, .groups = 257, .m_max = 8},
         JG_ERR_TOO_LARGE, "groups"},
        {"masked, 2^31 rows", {.layout = JG_GROUPED_MASKED, .groups = 2, .m_max = 1 << 30},
         JG_ERR_TOO_LARGE, "m_max"},
        {"layout 9", {.layout = 9, .groups = 1, .m = seed1_m}, JG_ERR_INVALID, "layout"},
        {"flags", {.flags = 1, .layout = JG_GROUPED_LIST, .groups = 1, .m = seed1_m},
         JG_ERR_INVALID, "flags"},
    };
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        jg_plan *plan = (jg_plan *)&rows[i];
        expect(ctx, rows[i].what, jg_grouped_plan(ctx, &rows[i].p, &plan), rows[i].want,
               rows[i].word);
        CHECK(plan == NULL, "%s: out not cleared", rows[i].what);
    }
    /* The rules the groups share are the dense ones. */
    jg_grouped_problem p = seed1();
    p.a_type = p.b_type = JG_FP32;
    jg_plan *plan;
    expect(ctx, "fp32 inputs", jg_grouped_plan(ctx, &p, &plan), JG_ERR_UNSUPPORTED, "a_type");
    p = seed1();
    p.k = 12;
    expect(ctx, "packed k 12", jg_grouped_plan(ctx, &p, &plan), JG_ERR_INVALID, "lda");
    expect(ctx, "problem NULL", jg_grouped_plan(ctx, NULL, &plan), JG_ERR_NULL_POINTER, "problem");
    jg_context_stats s;
    jg_context_get_stats(ctx, &s);
    CHECK(s.plans_compiled == 0, "a refused problem compiled something");
}

/* The seeds' case 1 plans once; the same rows hit the memory cache; other
 * rows are another kernel. */
static jg_plan *test_plans(jg_context *ctx)
{
    jg_grouped_problem p = seed1();
    jg_plan *plan = NULL, *again = NULL, *other = NULL;
    CHECK(jg_grouped_plan(ctx, &p, &plan) == JG_OK, "seed1: %s", jg_context_last_error(ctx));
    CHECK(jg_grouped_plan(ctx, &p, &again) == JG_OK && again == plan, "the same plan again");
    int64_t m2[8];
    memcpy(m2, seed1_m, sizeof m2);
    m2[3] += 1;
    p.m = m2;
    CHECK(jg_grouped_plan(ctx, &p, &other) == JG_OK && other != plan, "other rows, other plan");
    jg_plan_info a, b;
    if (plan && other && jg_plan_get_info(plan, &a) == JG_OK && jg_plan_get_info(other, &b) == JG_OK) {
        CHECK(!strncmp(a.kernel_name, "jg_glist8_bf16_bf16_sm90a_", 26), "name %s", a.kernel_name);
        CHECK(memcmp(a.key_hash, b.key_hash, sizeof a.key_hash) != 0,
              "one group's rows must change the kernel key");
    }
    jg_context_stats s;
    jg_context_get_stats(ctx, &s);
    CHECK(s.plans_compiled == 2 && s.plans_memory == 1, "compiled %llu, memory hits %llu",
          (unsigned long long)s.plans_compiled, (unsigned long long)s.plans_memory);
    return plan;
}

static void test_run_checks(jg_context *ctx, jg_plan *plan)
{
    const void *a[8], *b[8];
    void *d[8];
    for (int g = 0; g < 8; ++g) {
        a[g] = b[g] = (void *)(uintptr_t)(0x100000 + 0x1000 * g);
        d[g] = (void *)(uintptr_t)(0x200000 + 0x1000 * g);
    }
    jg_grouped_args args = {.a = a, .b = b, .d = d, .alpha = 1};
    expect(ctx, "valid args, offline", jg_grouped_run(plan, &args, NULL), JG_ERR_OFFLINE,
           "offline");
    expect(ctx, "args NULL", jg_grouped_run(plan, NULL, NULL), JG_ERR_NULL_POINTER, "args");
    jg_grouped_args bad = args;
    bad.a = NULL;
    expect(ctx, "a NULL", jg_grouped_run(plan, &bad, NULL), JG_ERR_NULL_POINTER, "args.a");
    b[5] = NULL;
    expect(ctx, "b[5] NULL", jg_grouped_run(plan, &args, NULL), JG_ERR_NULL_POINTER, "args.b[5]");
    b[5] = (void *)(uintptr_t)0x300008;
    expect(ctx, "b[5] misaligned", jg_grouped_run(plan, &args, NULL), JG_ERR_MISALIGNED,
           "args.b[5]");
    jg_gemm_args dense = {.a = a[0], .b = b[0], .d = d[0], .alpha = 1};
    expect(ctx, "grouped plan, dense run", jg_gemm_run(plan, &dense, NULL), JG_ERR_INVALID,
           "jg_grouped_run");
    /* Groups without rows are not read: their pointers may be NULL. */
    static const int64_t m[3] = {64, 0, 8};
    jg_grouped_problem p = seed1();
    p.groups = 3;
    p.m = m;
    jg_plan *sparse = NULL;
    CHECK(jg_grouped_plan(ctx, &p, &sparse) == JG_OK, "rows 64, 0, 8: %s",
          jg_context_last_error(ctx));
    b[1] = a[1] = d[1] = NULL;
    b[5] = b[4];
    if (sparse)
        expect(ctx, "empty group's NULLs", jg_grouped_run(sparse, &args, NULL), JG_ERR_OFFLINE,
               "offline");
}

/* Contiguous and masked plans (rows read on the device) and their checks. */
static void test_device_layouts(jg_context *ctx)
{
    for (int layout = JG_GROUPED_CONTIGUOUS; layout <= JG_GROUPED_MASKED; ++layout) {
        jg_grouped_problem p = {.layout = (jg_grouped_layout)layout, .a_type = JG_BF16,
                                .b_type = JG_BF16, .c_type = JG_FP32, .d_type = JG_FP32,
                                .groups = 8, .n = 512, .k = 256, .m_max = 1024};
        jg_plan *plan = NULL;
        CHECK(jg_grouped_plan(ctx, &p, &plan) == JG_OK, "layout %d: %s", layout,
              jg_context_last_error(ctx));
        if (!plan)
            continue;
        jg_plan_info info;
        jg_plan_get_info(plan, &info);
        CHECK(strstr(info.kernel_name, layout == JG_GROUPED_CONTIGUOUS ? "jg_gcontig8_"
                                                                        : "jg_gmasked8_"),
              "name %s", info.kernel_name);
        /* Changing m_max or the row hints re-plans but needs no other kernel
         * unless the tiles change: m_max is an argument of the kernel. */
        jg_grouped_problem q = p;
        q.m_max = 2048;
        jg_plan *other = NULL;
        jg_plan_info info2;
        if (jg_grouped_plan(ctx, &q, &other) == JG_OK && jg_plan_get_info(other, &info2) == JG_OK)
            CHECK(other != plan, "another m_max is another plan");
        const void *a[1] = {(void *)0x100000}, *b[1] = {(void *)0x200000};
        const void *c[1] = {(void *)0x300000};
        void *d[1] = {(void *)0x400000};
        jg_grouped_args args = {.a = a, .b = b, .c = c, .d = d, .rows = (const int32_t *)0x500000};
        expect(ctx, "device layout, offline", jg_grouped_run(plan, &args, NULL), JG_ERR_OFFLINE,
               "offline");
        args.rows = NULL;
        expect(ctx, "rows NULL", jg_grouped_run(plan, &args, NULL), JG_ERR_NULL_POINTER,
               "args.rows");
        args.rows = (const int32_t *)0x500002;
        expect(ctx, "rows misaligned", jg_grouped_run(plan, &args, NULL), JG_ERR_MISALIGNED,
               "args.rows");
        args.rows = (const int32_t *)0x500000;
        args.c = NULL;
        expect(ctx, "c NULL with C", jg_grouped_run(plan, &args, NULL), JG_ERR_NULL_POINTER,
               "args.c");
    }
}

/* Row hints of the device layouts size the tiles per group, rounded up to
 * 64 rows: hints that round alike share a plan; up to the device layouts'
 * most groups (more than the hints' per-group record holds). */
static void test_hints(jg_context *ctx)
{
    static const int64_t a[2] = {190, 320}, b[2] = {192, 300}, c[2] = {128, 384};
    jg_grouped_problem p = {.layout = JG_GROUPED_CONTIGUOUS, .a_type = JG_BF16,
                            .b_type = JG_BF16, .d_type = JG_BF16, .groups = 2, .n = 3072,
                            .k = 4096, .m_max = 512, .m = a};
    jg_plan *pa = NULL, *pb = NULL, *pc = NULL;
    CHECK(jg_grouped_plan(ctx, &p, &pa) == JG_OK, "hints 190+320: %s", jg_context_last_error(ctx));
    p.m = b;
    CHECK(jg_grouped_plan(ctx, &p, &pb) == JG_OK, "hints 192+300: %s", jg_context_last_error(ctx));
    p.m = c;
    CHECK(jg_grouped_plan(ctx, &p, &pc) == JG_OK, "hints 128+384: %s", jg_context_last_error(ctx));
    CHECK(pa && pa == pb, "hints rounding to the same 64 rows share a plan");
    CHECK(pc && pc != pa, "hints rounding to other rows are planned apart");
    static int64_t many[JG_GROUPED_MAX_DEVICE_GROUPS];
    for (int g = 0; g < JG_GROUPED_MAX_DEVICE_GROUPS; ++g)
        many[g] = 1 + g % 200;
    jg_grouped_problem q = {.layout = JG_GROUPED_MASKED, .a_type = JG_BF16, .b_type = JG_BF16,
                            .d_type = JG_BF16, .groups = JG_GROUPED_MAX_DEVICE_GROUPS, .n = 512,
                            .k = 256, .m_max = 256, .m = many};
    jg_plan *pm = NULL;
    CHECK(jg_grouped_plan(ctx, &q, &pm) == JG_OK, "%d groups with hints: %s",
          JG_GROUPED_MAX_DEVICE_GROUPS, jg_context_last_error(ctx));
}

/* FP8: the contiguous and masked layouts with row or block scales only. */
static void test_fp8(void)
{
    jg_context *ctx = offline();
    const struct {
        const char *what;
        jg_grouped_layout layout;
        jg_scale_mode scale;
        jg_status want;
        const char *word;
    } fp8[] = {
        {"e4m3 list, row", JG_GROUPED_LIST, JG_SCALE_ROW, JG_OK, NULL},
        {"e4m3 list, tensor", JG_GROUPED_LIST, JG_SCALE_TENSOR, JG_OK, NULL},
        {"e4m3 list, block", JG_GROUPED_LIST, JG_SCALE_BLOCK, JG_OK, NULL},
        {"e4m3 contiguous, tensor", JG_GROUPED_CONTIGUOUS, JG_SCALE_TENSOR, JG_OK, NULL},
        {"e4m3 masked, no scale", JG_GROUPED_MASKED, JG_SCALE_NONE, JG_ERR_INVALID,
         "problem.scale"},
        {"e4m3 contiguous, row", JG_GROUPED_CONTIGUOUS, JG_SCALE_ROW, JG_OK, NULL},
        {"e4m3 masked, block", JG_GROUPED_MASKED, JG_SCALE_BLOCK, JG_OK, NULL},
    };
    for (size_t i = 0; i < JG_ARRAY_LEN(fp8); ++i) {
        jg_grouped_problem fp = {.layout = fp8[i].layout, .a_type = JG_E4M3, .b_type = JG_E4M3,
                                 .d_type = JG_BF16, .groups = 8, .m = seed1_m, .n = 512,
                                 .k = 256, .m_max = 256, .scale = fp8[i].scale};
        jg_plan *fplan = NULL;
        expect(ctx, fp8[i].what, jg_grouped_plan(ctx, &fp, &fplan), fp8[i].want, fp8[i].word);
        if (!fplan)
            continue;
        if (fp8[i].layout == JG_GROUPED_LIST) {
            /* Per group: an array of scale pointers each, read where the
             * group has rows. */
            const void *a[8], *b[8];
            void *d[8];
            const float *sa[8], *sb[8];
            for (int g = 0; g < 8; ++g) {
                a[g] = b[g] = (void *)(uintptr_t)(0x100000 * (g + 1));
                d[g] = (void *)(uintptr_t)(0x100000 * (g + 9));
                sa[g] = sb[g] = (const float *)(uintptr_t)(0x100000 * (g + 17));
            }
            jg_grouped_args la = {.a = a, .b = b, .d = d};
            expect(ctx, "fp8 list run, no scales", jg_grouped_run(fplan, &la, NULL),
                   JG_ERR_NULL_POINTER, "args.a_scales");
            la.a_scales = sa;
            la.b_scales = sb;
            sb[3] = (const float *)0x300002;
            expect(ctx, "fp8 list run, b_scales[3] + 2", jg_grouped_run(fplan, &la, NULL),
                   JG_ERR_MISALIGNED, "args.b_scales[3]");
            sb[3] = (const float *)0x300004;
            sa[5] = NULL;
            expect(ctx, "fp8 list run, a_scales[5] NULL", jg_grouped_run(fplan, &la, NULL),
                   JG_ERR_NULL_POINTER, "args.a_scales[5]");
            sa[5] = (const float *)0x300008;
            expect(ctx, "fp8 list run, scales given", jg_grouped_run(fplan, &la, NULL),
                   JG_ERR_OFFLINE, "offline");
            continue;
        }
        /* The run checks the scales before anything else about FP8. */
        static const int32_t rows_dev_stand_in[1] = {0};
        const void *ptrs[1] = {(void *)0x100000};
        void *dptrs[1] = {(void *)0x200000};
        jg_grouped_args ga = {.a = ptrs, .b = ptrs, .d = dptrs, .rows = rows_dev_stand_in};
        expect(ctx, "fp8 run, no scales", jg_grouped_run(fplan, &ga, NULL), JG_ERR_NULL_POINTER,
               "a_scale");
        ga.a_scale = (const float *)0x300000;
        ga.b_scale = (const float *)0x300002;
        expect(ctx, "fp8 run, b_scale + 2", jg_grouped_run(fplan, &ga, NULL), JG_ERR_MISALIGNED,
               "b_scale");
        ga.b_scale = (const float *)0x300004;
        expect(ctx, "fp8 run, scales given", jg_grouped_run(fplan, &ga, NULL), JG_ERR_OFFLINE,
               "offline");
    }
    jg_context_destroy(ctx);
}

int main(void)
{
    jg_context *ctx = offline();
    if (!ctx)
        return jg_test_result("test_grouped_plan");
    test_validation(ctx);
    jg_plan *plan = test_plans(ctx);
    if (plan)
        test_run_checks(ctx, plan);
    test_device_layouts(ctx);
    test_hints(ctx);
    jg_gemm_problem dp = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                          .m = 64, .n = 64, .k = 64};
    jg_plan *dense = NULL;
    CHECK(jg_gemm_plan(ctx, &dp, &dense) == JG_OK, "dense plan");
    const void *ptrs[1] = {(void *)0x100000};
    void *dptrs[1] = {(void *)0x200000};
    jg_grouped_args ga = {.a = ptrs, .b = ptrs, .d = dptrs};
    if (dense)
        expect(ctx, "dense plan, grouped run", jg_grouped_run(dense, &ga, NULL), JG_ERR_INVALID,
               "jg_gemm_run");
    jg_context_destroy(ctx);
    test_fp8();
    return jg_test_result("test_grouped_plan");
}
