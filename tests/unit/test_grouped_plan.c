/* Grouped GEMM (list layout) without a GPU: the validation table, what the
 * kernel key depends on, the plan cache, every argument check of
 * jg_grouped_run (an offline context refuses to launch only after them),
 * and JG_GROUPED_WORKSPACE: the plans that need a workspace and its checks. */
#include <stdint.h>
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
        {"flags bit 5", {.flags = 1u << 5, .layout = JG_GROUPED_LIST, .groups = 1, .m = seed1_m},
         JG_ERR_INVALID, "flags"},
        /* an unknown bit next to the known one, on an otherwise valid problem */
        {"flags workspace | bit 5",
         {.flags = JG_GROUPED_WORKSPACE | 1u << 5, .layout = JG_GROUPED_LIST,
          .a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16, .groups = 1, .m = seed1_m,
          .n = 64, .k = 64},
         JG_ERR_INVALID, "0x20"},
    };
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        jg_plan *plan = (jg_plan *)&rows[i];
        expect(ctx, rows[i].what, jg_grouped_plan(ctx, &rows[i].p, &plan), rows[i].want,
               rows[i].word);
        CHECK(plan == NULL, "%s: out not cleared", rows[i].what);
    }
    /* The rules the groups share are the dense ones (0.7: FP32 operands
     * as TF32, rows of any length, N-major B in the list layout; checked
     * without compiling). */
    jg_grouped_problem p = seed1();
    p.a_type = p.b_type = JG_FP32;
    jg_plan *plan;
    expect(ctx, "fp32 inputs", jg__validate_grouped(ctx, &p), JG_OK, NULL);
    p.b_type = JG_BF16;
    expect(ctx, "fp32 a, bf16 b", jg_grouped_plan(ctx, &p, &plan), JG_ERR_UNSUPPORTED, "b_type");
    p = seed1();
    p.k = 12;
    p.flags = JG_GROUPED_B_N_MAJOR | JG_GROUPED_UNALIGNED;
    expect(ctx, "packed k 12, N-major B, unaligned", jg__validate_grouped(ctx, &p), JG_OK, NULL);
    p.ldb = 4095;
    expect(ctx, "N-major ldb < n", jg_grouped_plan(ctx, &p, &plan), JG_ERR_INVALID, "n (N-major B)");
    p.ldb = 0;
    p.layout = JG_GROUPED_CONTIGUOUS;
    p.m_max = 512;
    expect(ctx, "N-major B, contiguous", jg_grouped_plan(ctx, &p, &plan), JG_ERR_UNSUPPORTED,
           "JG_GROUPED_B_N_MAJOR");
    p = seed1();
    p.flags = JG_GEMM_A_M_MAJOR; /* a dense flag: unknown in a grouped problem */
    expect(ctx, "A M-major, grouped", jg_grouped_plan(ctx, &p, &plan), JG_ERR_INVALID, "0x4");
    p.flags = JG_GEMM_FP32_EXACT;
    p.a_type = p.b_type = JG_FP32;
    expect(ctx, "exact FP32, grouped", jg_grouped_plan(ctx, &p, &plan), JG_ERR_INVALID, "0x20");
    p = seed1();
    p.a_type = p.b_type = JG_E4M3;
    p.scale = JG_SCALE_ROW;
    p.flags = JG_GROUPED_B_N_MAJOR;
    expect(ctx, "e4m3 N-major B", jg_grouped_plan(ctx, &p, &plan), JG_ERR_UNSUPPORTED,
           "K-major only");
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
    /* the in-context launches: the same checks, nothing to push offline */
    expect(ctx, "in context: b[5] misaligned", jg_grouped_run_in_context(plan, &args, NULL),
           JG_ERR_MISALIGNED, "args.b[5]");
    expect(ctx, "in context: args NULL", jg_grouped_run_in_context(plan, NULL, NULL),
           JG_ERR_NULL_POINTER, "args");
    expect(NULL, "in context: plan NULL", jg_grouped_run_in_context(NULL, &args, NULL),
           JG_ERR_NULL_POINTER, "plan is NULL");
    expect(ctx, "in context: a NULL", jg_grouped_run_in_context(plan, &bad, NULL),
           JG_ERR_NULL_POINTER, "args.a");
    expect(ctx, "in context: grouped plan, dense run", jg_gemm_run_in_context(plan, &dense, NULL),
           JG_ERR_INVALID, "jg_grouped_run");
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
    if (sparse) {
        expect(ctx, "empty group's NULLs", jg_grouped_run(sparse, &args, NULL), JG_ERR_OFFLINE,
               "offline");
        expect(ctx, "in context: valid args, offline",
               jg_grouped_run_in_context(sparse, &args, NULL), JG_ERR_OFFLINE, "offline");
    }
}

/* The seeds' first case with NVFP4 operands, swizzled scales. */
static jg_grouped_problem nvfp4_seed1(uint32_t flags)
{
    jg_grouped_problem p = seed1();
    p.flags = flags;
    p.a_type = p.b_type = JG_NVFP4;
    p.scale = JG_SCALE_NVFP4;
    p.a_sf_layout = p.b_sf_layout = JG_SF_SWIZZLED_128X4;
    return p;
}

static uint64_t compiled(const jg_context *ctx)
{
    jg_context_stats s;
    memset(&s, 0xff, sizeof s);
    jg_context_get_stats(ctx, &s);
    return s.plans_compiled;
}

/* The plan's info and workspace bytes (without a plan: kernel name "",
 * SIZE_MAX bytes). */
static size_t plan_workspace(jg_plan *plan, const char *what, jg_plan_info *info)
{
    size_t bytes = SIZE_MAX;
    memset(info, 0, sizeof *info);
    info->kernel_name = "";
    if (!plan)
        return bytes;
    CHECK(jg_plan_get_info(plan, info) == JG_OK, "%s: info", what);
    CHECK(jg_plan_workspace_bytes(plan, &bytes) == JG_OK, "%s: workspace bytes", what);
    return bytes;
}

/* Fake device addresses (16-byte aligned, apart) for 8 groups' operands,
 * global scales and block scales in the list layout. */
typedef struct fake_list {
    const void *a[8], *b[8], *a_sf[8], *b_sf[8];
    const float *sa[8], *sb[8];
    void *d[8];
} fake_list;

static jg_grouped_args fake_args(fake_list *f)
{
    for (int g = 0; g < 8; ++g) {
        f->a[g] = (void *)(uintptr_t)(0x100000 * (g + 1));
        f->b[g] = (void *)(uintptr_t)(0x100000 * (g + 9));
        f->d[g] = (void *)(uintptr_t)(0x100000 * (g + 17));
        f->a_sf[g] = (void *)(uintptr_t)(0x100000 * (g + 25));
        f->b_sf[g] = (void *)(uintptr_t)(0x100000 * (g + 33));
        f->sa[g] = f->sb[g] = (const float *)(uintptr_t)(0x100000 * (g + 41));
    }
    jg_grouped_args args = {.a = f->a, .b = f->b, .d = f->d, .alpha = 1, .a_scales = f->sa,
                            .b_scales = f->sb, .a_sfs = f->a_sf, .b_sfs = f->b_sf};
    return args;
}

/* jg_grouped_run's workspace checks on a plan that needs `need` bytes:
 * after the pointer checks, before the offline refusal. */
static void workspace_run_checks(jg_context *ctx, jg_plan *plan, size_t need)
{
    fake_list f;
    jg_grouped_args args = fake_args(&f);
    void *const ws = (void *)(uintptr_t)0x40000000;
    args.workspace = ws;
    args.workspace_bytes = need;
    expect(ctx, "workspace given", jg_grouped_run(plan, &args, NULL), JG_ERR_OFFLINE, "offline");
    args.workspace_bytes = need + 4096;
    expect(ctx, "a larger workspace", jg_grouped_run(plan, &args, NULL), JG_ERR_OFFLINE,
           "offline");
    args.workspace = NULL;
    expect(ctx, "workspace NULL", jg_grouped_run(plan, &args, NULL), JG_ERR_NULL_POINTER,
           "workspace");
    args.workspace = (char *)ws + 8;
    expect(ctx, "workspace + 8", jg_grouped_run(plan, &args, NULL), JG_ERR_MISALIGNED,
           "args.workspace");
    args.workspace = ws;
    args.workspace_bytes = need - 1;
    expect(ctx, "workspace_bytes one short", jg_grouped_run(plan, &args, NULL), JG_ERR_INVALID,
           "workspace_bytes");
    args.workspace_bytes = 0;
    expect(ctx, "workspace_bytes 0", jg_grouped_run(plan, &args, NULL), JG_ERR_INVALID,
           "workspace_bytes");
    /* The operands' checks still come first. */
    args.workspace_bytes = need;
    f.a_sf[6] = NULL;
    expect(ctx, "a_sfs[6] NULL, workspace fine", jg_grouped_run(plan, &args, NULL),
           JG_ERR_NULL_POINTER, "args.a_sfs[6]");
}

/* JG_GROUPED_WORKSPACE: NVFP4 list problems plan the pre kernel, whose
 * launches need every group's rows x k rounded up to 64 in FP16; without
 * the flag the kernel is the expanding one and no workspace is read;
 * other types ignore the flag (the same kernel as without it). */
static void test_workspace(jg_context *ctx, jg_plan *bf16_seed1)
{
    jg_grouped_problem p = nvfp4_seed1(JG_GROUPED_WORKSPACE);
    jg_plan *pre = NULL, *plain = NULL, *bf16 = NULL;
    CHECK(jg_grouped_plan(ctx, &p, &pre) == JG_OK, "nvfp4 seed1 with a workspace: %s",
          jg_context_last_error(ctx));
    jg_plan_info info;
    size_t bytes = plan_workspace(pre, "nvfp4 with the flag", &info);
    const size_t want = (size_t)(80 + 176 + 128 + 72 + 64 + 248 + 96 + 160) * 7168 * 2;
    CHECK(strstr(info.kernel_name, "_pre") && !strncmp(info.kernel_name, "jg_glist8_nvfp4_", 16),
          "nvfp4 with the flag: kernel %s", info.kernel_name);
    CHECK(bytes == want && bytes == jg__pre_workspace_bytes(seed1_m, 8, 7168),
          "nvfp4 with the flag: %zu workspace bytes, expected %zu", bytes, want);
    if (pre)
        workspace_run_checks(ctx, pre, want);

    p.flags = 0;
    const uint64_t before = compiled(ctx);
    CHECK(jg_grouped_plan(ctx, &p, &plain) == JG_OK, "nvfp4 seed1: %s", jg_context_last_error(ctx));
    CHECK(plain != pre && compiled(ctx) == before + 1, "without the flag: %s plan, %llu compiles",
          plain == pre ? "the same" : "another", (unsigned long long)(compiled(ctx) - before));
    bytes = plan_workspace(plain, "nvfp4 without the flag", &info);
    CHECK(bytes == 0 && plain && !strstr(info.kernel_name, "_pre"),
          "nvfp4 without the flag: kernel %s, %zu workspace bytes", info.kernel_name, bytes);
    fake_list f;
    if (plain) { /* the workspace fields are not read */
        jg_grouped_args args = fake_args(&f);
        args.workspace = (void *)(uintptr_t)0x300008;
        args.workspace_bytes = 1;
        expect(ctx, "no flag, odd workspace", jg_grouped_run(plain, &args, NULL), JG_ERR_OFFLINE,
               "offline");
    }

    /* BF16 with the flag: a plan of its own, the kernel of the plan without. */
    jg_grouped_problem q = seed1();
    q.flags = JG_GROUPED_WORKSPACE;
    const uint64_t before_bf16 = compiled(ctx);
    CHECK(jg_grouped_plan(ctx, &q, &bf16) == JG_OK, "bf16 seed1 with the flag: %s",
          jg_context_last_error(ctx));
    bytes = plan_workspace(bf16, "bf16 with the flag", &info);
    jg_plan_info plain_info;
    CHECK(bytes == 0 && bf16 && !strstr(info.kernel_name, "_pre"),
          "bf16 with the flag: kernel %s, %zu workspace bytes", info.kernel_name, bytes);
    if (bf16 && bf16_seed1 && jg_plan_get_info(bf16_seed1, &plain_info) == JG_OK)
        CHECK(!memcmp(info.key_hash, plain_info.key_hash, sizeof info.key_hash) &&
                  compiled(ctx) == before_bf16,
              "bf16: the flag changed the kernel (%s, was %s) or compiled one",
              info.kernel_name, plain_info.kernel_name);
    if (bf16) { /* no workspace needed: NULL is fine */
        jg_grouped_args args = fake_args(&f);
        expect(ctx, "bf16 with the flag, no workspace", jg_grouped_run(bf16, &args, NULL),
               JG_ERR_OFFLINE, "offline");
    }
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
    test_workspace(ctx, plan);
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
