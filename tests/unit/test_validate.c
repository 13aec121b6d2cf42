/* Validation in an offline context (no GPU): every broken rule is refused
 * before anything is compiled, with the right status and a message that
 * names the field. Also: context options, offline runs, status names. */
#include <stdio.h>
#include <string.h>

#include "jg_internal.h"
#include "jg_test.h"

#define NONE JG_DTYPE_NONE
#define BF16 JG_BF16
#define FP16 JG_FP16
#define FP32 JG_FP32
#define BAD ((jg_dtype)99)
#define E4M3 JG_E4M3
#define NVFP4 JG_NVFP4
#define ROWM JG_SF_ROW_MAJOR
#define SWZ JG_SF_SWIZZLED_128X4
#define MG JG_GEMM_M_GENERIC
#define PDL JG_GEMM_PDL

/* A jg_gemm_problem by position, so that each row below reads as one line. */
#define P(flags, a, b, c, d, m, n, k, lda, ldb, ldc, ldd) \
    {flags, a, b, c, d, m, n, k, lda, ldb, ldc, ldd, (a) == JG_E4M3 ? JG_SCALE_TENSOR : JG_SCALE_NONE, \
     JG_SF_LAYOUT_NONE, JG_SF_LAYOUT_NONE}
/* NVFP4 A and B with their scale layouts, bf16 out. */
#define PN(sfa, sfb, m, n, k, lda, ldb) \
    {0, NVFP4, NVFP4, NONE, BF16, m, n, k, lda, ldb, 0, 0, JG_SCALE_NVFP4, sfa, sfb}
/* The same with flags (JG_GEMM_PDL, JG_GEMM_M_GENERIC). */
#define PNF(flags, sfa, sfb, m, n, k) \
    {flags, NVFP4, NVFP4, NONE, BF16, m, n, k, 0, 0, 0, 0, JG_SCALE_NVFP4, sfa, sfb}
/* The same with an explicit jg_scale_mode. */
#define PS(scale, flags, a, b, c, d, m, n, k, lda, ldb, ldc, ldd) \
    {flags, a, b, c, d, m, n, k, lda, ldb, ldc, ldd, scale, JG_SF_LAYOUT_NONE, JG_SF_LAYOUT_NONE}

static const struct {
    const char *what;
    jg_gemm_problem p;
    jg_status want;
    const char *msg1, *msg2; /* both must appear in the message (msg2 may be NULL) */
} rows[] = {
    /* what              flags a     b     c     d     m             n    k    lda  ldb  ldc ldd */
    {"m = 0",      P(0,  BF16, BF16, NONE, BF16, 0,            128, 64,  0,   0,   0,  0), JG_ERR_INVALID, "m = 0", NULL},
    {"n = -1",     P(0,  BF16, BF16, NONE, BF16, 128,          -1,  64,  0,   0,   0,  0), JG_ERR_INVALID, "n = -1", NULL},
    {"k = 0",      P(0,  BF16, BF16, NONE, BF16, 128,          128, 0,   0,   0,   0,  0), JG_ERR_INVALID, "k = 0", NULL},
    {"m = 2^31",   P(0,  BF16, BF16, NONE, BF16, 2147483648LL, 128, 64,  0,   0,   0,  0), JG_ERR_TOO_LARGE, "m = 2147483648", "2^31-1"},
    {"k = 2^31",   P(0,  BF16, BF16, NONE, BF16, 128,          128, 2147483648LL, 0, 0, 0, 0), JG_ERR_TOO_LARGE, "k = 2147483648", NULL},
    {"a NONE",     P(0,  NONE, BF16, NONE, BF16, 128,          128, 64,  0,   0,   0,  0), JG_ERR_INVALID, "a_type", NULL},
    {"b NONE",     P(0,  BF16, NONE, NONE, BF16, 128,          128, 64,  0,   0,   0,  0), JG_ERR_INVALID, "b_type", NULL},
    {"d NONE",     P(0,  BF16, BF16, NONE, NONE, 128,          128, 64,  0,   0,   0,  0), JG_ERR_INVALID, "d_type", NULL},
    {"a fp32",     P(0,  FP32, FP32, NONE, FP32, 128,          128, 64,  0,   0,   0,  0), JG_ERR_UNSUPPORTED, "a_type", NULL},
    {"a bf16 b fp16", P(0, BF16, FP16, NONE, BF16, 128,        128, 64,  0,   0,   0,  0), JG_ERR_UNSUPPORTED, "b_type", NULL},
    {"c != d",     P(0,  BF16, BF16, FP32, BF16, 128,          128, 64,  0,   0,   0,  0), JG_ERR_UNSUPPORTED, "c_type", NULL},
    {"a = 99",     P(0,  BAD,  BF16, NONE, BF16, 128,          128, 64,  0,   0,   0,  0), JG_ERR_INVALID, "a_type = 99", NULL},
    {"c = 99",     P(0,  BF16, BF16, BAD,  BF16, 128,          128, 64,  0,   0,   0,  0), JG_ERR_INVALID, "c_type = 99", NULL},
    {"d = 99",     P(0,  BF16, BF16, NONE, BAD,  128,          128, 64,  0,   0,   0,  0), JG_ERR_INVALID, "d_type = 99", NULL},
    /* flags: unknown bits (bit 2 among them, alone or with JG_GEMM_PDL) */
    {"flags bit 7", P(1u << 7, BF16, BF16, NONE, BF16, 128,   128, 64,  0,   0,   0,  0), JG_ERR_INVALID, "flags", "0x80"},
    {"flags bit 31", P(PDL | (1u << 31), BF16, BF16, NONE, BF16, 128, 128, 64, 0, 0, 0, 0), JG_ERR_INVALID, "flags", "0x80000000"},
    {"flags bit 2", P(1u << 2, BF16, BF16, NONE, BF16, 128,   128, 64,  0,   0,   0,  0), JG_ERR_INVALID, "flags 0x4", "unknown bits 0x4"},
    {"PDL|bit 2",  P(PDL | (1u << 2), BF16, BF16, NONE, BF16, 128, 128, 64, 0, 0,  0,  0), JG_ERR_INVALID, "flags 0x6", "unknown bits 0x4"},
    {"lda < k",    P(0,  BF16, BF16, NONE, BF16, 128,          128, 64,  32,  0,   0,  0), JG_ERR_INVALID, "lda", NULL},
    {"lda < 0",    P(0,  BF16, BF16, NONE, BF16, 128,          128, 64,  -8,  0,   0,  0), JG_ERR_INVALID, "lda", NULL},
    {"ldb < k",    P(0,  BF16, BF16, NONE, BF16, 128,          128, 64,  0,   63,  0,  0), JG_ERR_INVALID, "ldb", NULL},
    {"packed k=12", P(0, BF16, BF16, NONE, BF16, 128,          128, 12,  0,   0,   0,  0), JG_ERR_INVALID, "lda", "16"},
    {"lda bytes",  P(0,  FP16, FP16, NONE, FP16, 128,          128, 64,  68,  0,   0,  0), JG_ERR_INVALID, "lda", "136 bytes"},
    {"ldd < n",    P(0,  BF16, BF16, NONE, BF16, 128,          128, 64,  0,   0,   0,  120), JG_ERR_INVALID, "ldd", NULL},
    {"ldd bytes",  P(0,  BF16, BF16, NONE, FP32, 128,          64,  64,  0,   0,   0,  66), JG_ERR_INVALID, "ldd", "264 bytes"},
    {"ldc bytes",  P(0,  BF16, BF16, FP32, FP32, 128,          64,  64,  0,   0,   66, 0), JG_ERR_INVALID, "ldc", NULL},
    {"ldc < n",    P(0,  BF16, BF16, FP32, FP32, 128,          64,  64,  0,   0,   32, 0), JG_ERR_INVALID, "ldc", NULL},
    {"lda 2^40 B", P(0,  BF16, BF16, NONE, BF16, 128,          128, 64,  1LL << 39, 0, 0, 0), JG_ERR_TOO_LARGE, "lda", "2^40"},
    {"lda huge",   P(0,  BF16, BF16, NONE, BF16, 128,          128, 64,  INT64_MAX - 7, 0, 0, 0), JG_ERR_TOO_LARGE, "lda", NULL},
    {"ldb INT64_MIN", P(0, BF16, BF16, NONE, BF16, 128,        128, 64,  0,   INT64_MIN, 0, 0), JG_ERR_INVALID, "ldb", NULL},
    {"ldd huge",   P(0,  BF16, BF16, NONE, FP32, 128,          128, 64,  0,   0,   0,  INT64_MAX / 4 + 4), JG_ERR_TOO_LARGE, "ldd", NULL},
    /* FP8: e4m3 A and B with tensor, row or block scales. */
    {"e4m3 no scale", PS(JG_SCALE_NONE, 0, E4M3, E4M3, NONE, BF16, 128, 128, 128, 0, 0, 0, 0), JG_ERR_INVALID, "problem.scale", NULL},
    {"e4m3 row scale", PS(JG_SCALE_ROW, 0, E4M3, E4M3, NONE, BF16, 128, 128, 128, 0, 0, 0, 0), JG_OK, NULL, NULL},
    {"e4m3 block scale", PS(JG_SCALE_BLOCK, 0, E4M3, E4M3, NONE, BF16, 128, 128, 128, 0, 0, 0, 0), JG_OK, NULL, NULL},
    {"scale = 7",  PS((jg_scale_mode)7, 0, E4M3, E4M3, NONE, BF16, 128, 128, 128, 0, 0, 0, 0), JG_ERR_INVALID, "scale = 7", NULL},
    {"bf16 scaled", PS(JG_SCALE_TENSOR, 0, BF16, BF16, NONE, BF16, 128, 128, 128, 0, 0, 0, 0), JG_ERR_INVALID, "e4m3 operands only", NULL},
    {"e4m3 b bf16", P(0, E4M3, BF16, NONE, BF16, 128,          128, 128, 0,   0,   0,  0), JG_ERR_UNSUPPORTED, "b_type", NULL},
    {"d e4m3",     P(0,  E4M3, E4M3, NONE, E4M3, 128,          128, 128, 0,   0,   0,  0), JG_ERR_UNSUPPORTED, "d_type e4m3", NULL},
    {"e4m3 k=8",   P(0,  E4M3, E4M3, NONE, BF16, 128,          128, 8,   0,   0,   0,  0), JG_ERR_INVALID, "lda", "8 bytes"},
    /* NVFP4: k in whole 16-element blocks, rows 16 bytes apart, known scale
     * layouts, row-major scales TMA can step over, the NVFP4 scale mode. */
    {"nvfp4 k=40",  PN(SWZ, SWZ, 128, 128, 40, 0, 0), JG_ERR_INVALID, "k = 40", "multiple of 16"},
    {"nvfp4 k=8",   PN(SWZ, SWZ, 128, 128, 8, 0, 0), JG_ERR_INVALID, "k = 8", NULL},
    {"nvfp4 k=48",  PN(SWZ, SWZ, 128, 128, 48, 0, 0), JG_ERR_INVALID, "lda = 48 (packed)", "24 bytes"},
    {"nvfp4 lda 80", PN(SWZ, SWZ, 128, 128, 64, 80, 0), JG_ERR_INVALID, "lda = 80", "multiple of 32 elements"},
    {"nvfp4 ldb 65", PN(SWZ, SWZ, 128, 128, 64, 0, 65), JG_ERR_INVALID, "ldb = 65", "32.5 bytes"},
    {"nvfp4 ldb < k", PN(SWZ, SWZ, 128, 128, 64, 0, 32), JG_ERR_INVALID, "ldb = 32", ">= k"},
    {"nvfp4 a_sf 0", PN(JG_SF_LAYOUT_NONE, SWZ, 128, 128, 64, 0, 0), JG_ERR_INVALID, "a_sf_layout = 0", "JG_SF_LAYOUT_NONE"},
    {"nvfp4 b_sf 0", PN(SWZ, JG_SF_LAYOUT_NONE, 128, 128, 64, 0, 0), JG_ERR_INVALID, "b_sf_layout = 0", NULL},
    {"nvfp4 a_sf 3", PN((jg_sf_layout)3, SWZ, 128, 128, 64, 0, 0), JG_ERR_INVALID, "a_sf_layout = 3", "not a jg_sf_layout"},
    {"nvfp4 b_sf -1", PN(SWZ, (jg_sf_layout)-1, 128, 128, 64, 0, 0), JG_ERR_INVALID, "b_sf_layout = -1", NULL},
    {"nvfp4 row-major k=320", PN(ROWM, SWZ, 128, 128, 320, 0, 0), JG_ERR_INVALID, "a_sf_layout JG_SF_ROW_MAJOR", "20 bytes"},
    {"nvfp4 b row-major k=64", PN(SWZ, ROWM, 128, 128, 64, 0, 0), JG_ERR_INVALID, "b_sf_layout JG_SF_ROW_MAJOR", "multiple of 256"},
    {"nvfp4 tensor scale", PS(JG_SCALE_TENSOR, 0, NVFP4, NVFP4, NONE, BF16, 128, 128, 256, 0, 0, 0, 0), JG_ERR_INVALID, "scale = 1", "JG_SCALE_NVFP4"},
    {"nvfp4 no scale", PS(JG_SCALE_NONE, 0, NVFP4, NVFP4, NONE, BF16, 128, 128, 256, 0, 0, 0, 0), JG_ERR_INVALID, "scale = 0", "JG_SCALE_NVFP4"},
    {"e4m3 nvfp4 scale", PS(JG_SCALE_NVFP4, 0, E4M3, E4M3, NONE, BF16, 128, 128, 256, 0, 0, 0, 0), JG_ERR_INVALID, "scale = 4", "nvfp4 operands only"},
    {"bf16 nvfp4 scale", PS(JG_SCALE_NVFP4, 0, BF16, BF16, NONE, BF16, 128, 128, 256, 0, 0, 0, 0), JG_ERR_INVALID, "scale = 4", NULL},
    {"scale = 5",  PS((jg_scale_mode)5, 0, NVFP4, NVFP4, NONE, BF16, 128, 128, 256, 0, 0, 0, 0), JG_ERR_INVALID, "scale = 5", "jg_scale_mode"},
    {"nvfp4 b bf16", PS(JG_SCALE_NVFP4, 0, NVFP4, BF16, NONE, BF16, 128, 128, 256, 0, 0, 0, 0), JG_ERR_UNSUPPORTED, "b_type bf16", "nvfp4"},
    {"d nvfp4",    PS(JG_SCALE_NVFP4, 0, NVFP4, NVFP4, NONE, NVFP4, 128, 128, 256, 0, 0, 0, 0), JG_ERR_UNSUPPORTED, "d_type nvfp4", NULL},
    /* Valid: checked with jg__validate_gemm only, so nothing is compiled. */
    {"nvfp4 swizzled", PN(SWZ, SWZ, 128, 7168, 16384, 0, 0), JG_OK, NULL, NULL},
    {"nvfp4 mixed layouts", PN(ROWM, SWZ, 1, 4096, 7168, 0, 0), JG_OK, NULL, NULL},
    {"nvfp4 k=32",  PN(SWZ, SWZ, 3, 8, 32, 0, 0), JG_OK, NULL, NULL},
    {"nvfp4 valid", PN(ROWM, ROWM, 100, 200, 512, 544, 512), JG_OK, NULL, NULL},
    {"nvfp4 valid swz", PN(SWZ, SWZ, 1, 8, 32, 0, 0), JG_OK, NULL, NULL},
    {"e4m3 tensor", P(0, E4M3, E4M3, FP32, FP32, 100,          200, 48,  0,   0,   0,  0), JG_OK, NULL, NULL},
    {"ldc w/o C",  P(0,  BF16, BF16, NONE, BF16, 128,          128, 64,  0,   0,   3,  0), JG_OK, NULL, NULL},
    /* JG_GEMM_PDL, alone and with M-generic plans, with every operand type */
    {"PDL",        P(PDL, BF16, BF16, NONE, BF16, 1,            4096, 7168, 0, 0,  0,  0), JG_OK, NULL, NULL},
    {"PDL with C", P(PDL, BF16, BF16, BF16, BF16, 16,           4096, 7168, 0, 0,  0,  0), JG_OK, NULL, NULL},
    {"PDL|M_GENERIC fp16", P(PDL | MG, FP16, FP16, NONE, FP32, 128, 2048, 4096, 0, 0, 0, 0), JG_OK, NULL, NULL},
    {"PDL|M_GENERIC", P(PDL | MG, BF16, BF16, NONE, BF16, 64,   2048, 4096, 0, 0,  0,  0), JG_OK, NULL, NULL},
    {"PDL e4m3 tensor", P(PDL, E4M3, E4M3, NONE, BF16, 16,      2048, 4096, 0, 0,  0,  0), JG_OK, NULL, NULL},
    {"PDL e4m3 row", PS(JG_SCALE_ROW, PDL, E4M3, E4M3, NONE, BF16, 16, 2048, 4096, 0, 0, 0, 0), JG_OK, NULL, NULL},
    {"PDL e4m3 block", PS(JG_SCALE_BLOCK, PDL | MG, E4M3, E4M3, NONE, BF16, 512, 2048, 4096, 0, 0, 0, 0), JG_OK, NULL, NULL},
    {"PDL nvfp4",  PNF(PDL, SWZ, SWZ, 16, 2048, 4096), JG_OK, NULL, NULL},
    {"PDL nvfp4 512 rows", PNF(PDL, ROWM, SWZ, 512, 2048, 4096), JG_OK, NULL, NULL},
    {"PDL|M_GENERIC nvfp4", PNF(PDL | MG, SWZ, ROWM, 16, 2048, 4096), JG_OK, NULL, NULL},
    {"padded",     P(1,  FP16, FP16, FP32, FP32, 1,            8,   8,   64,  72,  12, 16), JG_OK, NULL, NULL},
};

static uint64_t compiles(const jg_context *ctx)
{
    jg_context_stats s;
    memset(&s, 0xff, sizeof s);
    jg_context_get_stats(ctx, &s);
    return s.plans_compiled + s.compile_failures;
}

/* The message holds the status name and the row's words. */
static void check_message(const char *what, const char *msg, jg_status want, const char *w1,
                          const char *w2)
{
    CHECK(strstr(msg, jg_status_name(want)) != NULL, "%s: message lacks %s: \"%s\"", what,
          jg_status_name(want), msg);
    CHECK(!w1 || strstr(msg, w1), "%s: message lacks \"%s\": \"%s\"", what, w1, msg);
    CHECK(!w2 || strstr(msg, w2), "%s: message lacks \"%s\": \"%s\"", what, w2, msg);
}

static void test_rows(jg_context *ctx)
{
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        if (rows[i].want == JG_OK) {
            jg_status st = jg__validate_gemm(ctx, &rows[i].p);
            CHECK(st == JG_OK, "%s: %s (%s)", rows[i].what, jg_status_name(st),
                  jg_context_last_error(ctx));
            continue;
        }
        jg_plan *out = (jg_plan *)&out; /* any non-NULL value: it must be cleared */
        jg_status st = jg_gemm_plan(ctx, &rows[i].p, &out);
        CHECK(st == rows[i].want, "%s: got %s, want %s (%s)", rows[i].what, jg_status_name(st),
              jg_status_name(rows[i].want), jg_context_last_error(ctx));
        CHECK(out == NULL, "%s: *out not cleared", rows[i].what);
        check_message(rows[i].what, jg_context_last_error(ctx), rows[i].want, rows[i].msg1,
                      rows[i].msg2);
        CHECK(compiles(ctx) == 0, "%s: something was compiled", rows[i].what);
    }
}

static void test_null_pointers(jg_context *ctx)
{
    jg_gemm_problem valid = rows[JG_ARRAY_LEN(rows) - 1].p;
    jg_plan *out = (jg_plan *)&out;
    CHECK(jg_gemm_plan(ctx, NULL, &out) == JG_ERR_NULL_POINTER && out == NULL, "problem NULL");
    check_message("problem NULL", jg_context_last_error(ctx), JG_ERR_NULL_POINTER, "problem", NULL);
    CHECK(jg_gemm_plan(ctx, &valid, NULL) == JG_ERR_NULL_POINTER, "out NULL");
    check_message("out NULL", jg_context_last_error(ctx), JG_ERR_NULL_POINTER, "out", NULL);
    out = (jg_plan *)&out;
    CHECK(jg_gemm_plan(NULL, &valid, &out) == JG_ERR_NULL_POINTER, "ctx NULL");
    check_message("ctx NULL", jg_context_last_error(NULL), JG_ERR_NULL_POINTER, "ctx", NULL);
    CHECK(jg_gemm_run(NULL, NULL, NULL) == JG_ERR_NULL_POINTER, "run: plan NULL");
    CHECK(jg_context_get_stats(ctx, NULL) == JG_ERR_NULL_POINTER, "stats: out NULL");
    CHECK(compiles(ctx) == 0, "null pointers: something was compiled");
}

/* NVFP4 launches need their block scales; grouped NVFP4 is refused; the
 * sf layout fields of other types are never read (callers built against
 * the 0.2 header pass structs that end before them). */
static void test_nvfp4_rules(jg_context *ctx)
{
    static _Alignas(16) char buf[64];
    static const struct {
        const char *what;
        const void *a_sf, *b_sf;
        jg_status want;
        const char *w1;
    } sf_rows[] = {
        {"a_sf NULL", NULL, buf, JG_ERR_NULL_POINTER, "args.a_sf is NULL"},
        {"b_sf NULL", buf, NULL, JG_ERR_NULL_POINTER, "args.b_sf is NULL"},
        {"a_sf + 4", buf + 4, buf, JG_ERR_MISALIGNED, "args.a_sf"},
        {"b_sf + 8", buf, buf + 8, JG_ERR_MISALIGNED, "args.b_sf"},
        {"b_sf + 1", buf, buf + 1, JG_ERR_MISALIGNED, "16-byte"},
        {"both aligned", buf, buf + 16, JG_OK, NULL},
    };
    for (size_t i = 0; i < JG_ARRAY_LEN(sf_rows); ++i) {
        jg_status st = jg__check_sf(ctx, sf_rows[i].a_sf, sf_rows[i].b_sf);
        CHECK(st == sf_rows[i].want, "%s: got %s", sf_rows[i].what, jg_status_name(st));
        if (st != JG_OK)
            check_message(sf_rows[i].what, jg_context_last_error(ctx), st, sf_rows[i].w1, NULL);
    }
    /* Grouped NVFP4: the dense rules on what the groups share, the list
     * layout's group limit, the contiguous layout's row-major A scales. */
    jg_grouped_problem gp = {.layout = JG_GROUPED_CONTIGUOUS, .a_type = NVFP4, .b_type = NVFP4,
                             .d_type = BF16, .groups = 2, .n = 256, .k = 256, .m_max = 256,
                             .scale = JG_SCALE_NVFP4, .a_sf_layout = JG_SF_ROW_MAJOR,
                             .b_sf_layout = JG_SF_SWIZZLED_128X4};
    jg_status st = jg__validate_grouped(ctx, &gp);
    CHECK(st == JG_OK, "grouped nvfp4, contiguous: %s (%s)", jg_status_name(st),
          jg_context_last_error(ctx));
    gp.a_sf_layout = JG_SF_SWIZZLED_128X4;
    st = jg__validate_grouped(ctx, &gp);
    CHECK(st == JG_ERR_UNSUPPORTED, "contiguous, swizzled A scales: %s", jg_status_name(st));
    check_message("contiguous, swizzled A scales", jg_context_last_error(ctx), JG_ERR_UNSUPPORTED,
                  "a_sf_layout", "ROW_MAJOR");
    gp.layout = JG_GROUPED_MASKED;
    st = jg__validate_grouped(ctx, &gp);
    CHECK(st == JG_OK, "grouped nvfp4, masked, swizzled: %s (%s)", jg_status_name(st),
          jg_context_last_error(ctx));
    gp.b_sf_layout = JG_SF_LAYOUT_NONE;
    st = jg__validate_grouped(ctx, &gp);
    CHECK(st == JG_ERR_INVALID, "grouped nvfp4, b_sf_layout NONE: %s", jg_status_name(st));
    check_message("grouped b_sf_layout NONE", jg_context_last_error(ctx), JG_ERR_INVALID,
                  "b_sf_layout", NULL);
    int64_t gm[JG_GROUPED_MAX_NVFP4_GROUPS + 1] = {0};
    jg_grouped_problem gl = {.layout = JG_GROUPED_LIST, .a_type = NVFP4, .b_type = NVFP4,
                             .d_type = BF16, .groups = JG_GROUPED_MAX_NVFP4_GROUPS, .m = gm,
                             .n = 256, .k = 256, .scale = JG_SCALE_NVFP4,
                             .a_sf_layout = JG_SF_ROW_MAJOR, .b_sf_layout = JG_SF_ROW_MAJOR};
    st = jg__validate_grouped(ctx, &gl);
    CHECK(st == JG_OK, "nvfp4 list, 40 groups: %s", jg_status_name(st));
    gl.groups++;
    st = jg__validate_grouped(ctx, &gl);
    CHECK(st == JG_ERR_TOO_LARGE, "nvfp4 list, 41 groups: %s", jg_status_name(st));
    check_message("nvfp4 list, 41 groups", jg_context_last_error(ctx), JG_ERR_TOO_LARGE,
                  "groups = 41", "40");
    gl.a_type = gl.b_type = BF16; /* 41 bf16 groups are fine; garbage sf layouts unread */
    gl.scale = JG_SCALE_NONE;
    gl.a_sf_layout = (jg_sf_layout)77;
    st = jg__validate_grouped(ctx, &gl);
    CHECK(st == JG_OK, "bf16 list, 41 groups, garbage sf layout: %s", jg_status_name(st));
    /* A bf16 problem with garbage where a 0.2 caller's struct ends. */
    jg_gemm_problem p = P(0, BF16, BF16, NONE, BF16, 128, 128, 64, 0, 0, 0, 0);
    p.a_sf_layout = (jg_sf_layout)0x7777;
    p.b_sf_layout = (jg_sf_layout)-5;
    st = jg__validate_gemm(ctx, &p);
    CHECK(st == JG_OK, "bf16 with garbage sf layouts: %s (%s)", jg_status_name(st),
          jg_context_last_error(ctx));
    jg__problem_key k1, k2;
    jg__problem_key_make(&p, &k1);
    p.a_sf_layout = p.b_sf_layout = JG_SF_LAYOUT_NONE;
    jg__problem_key_make(&p, &k2);
    CHECK(!memcmp(&k1, &k2, sizeof k1), "a bf16 problem's key holds its sf layout fields");
    CHECK(compiles(ctx) == 0, "nvfp4 rules: something was compiled");
}

/* JG_GEMM_PDL is a dense-GEMM flag: in a grouped problem's flags
 * (JG_GROUPED_*) its bit is unknown, refused. */
static void test_pdl_flags_grouped(jg_context *ctx)
{
    static const int64_t gm[2] = {16, 32};
    static const uint32_t bad[] = {JG_GEMM_PDL, JG_GROUPED_WORKSPACE | JG_GEMM_PDL};
    for (size_t i = 0; i < JG_ARRAY_LEN(bad); ++i) {
        jg_grouped_problem gp = {.flags = bad[i], .layout = JG_GROUPED_LIST, .a_type = BF16,
                                 .b_type = BF16, .d_type = BF16, .groups = 2, .m = gm, .n = 256,
                                 .k = 256};
        jg_plan *out = (jg_plan *)&out;
        jg_status st = jg_grouped_plan(ctx, &gp, &out);
        CHECK(st == JG_ERR_INVALID && out == NULL, "grouped flags 0x%x: got %s (%s)", bad[i],
              jg_status_name(st), jg_context_last_error(ctx));
        check_message("grouped PDL flags", jg_context_last_error(ctx), JG_ERR_INVALID, "flags",
                      NULL);
    }
    CHECK(compiles(ctx) == 0, "grouped PDL flags: something was compiled");
}

/* One valid plan (one compile): it exists, but an offline context cannot run it. */
static void test_offline_run(jg_context *ctx)
{
    jg_gemm_problem p = P(0, BF16, BF16, NONE, BF16, 128, 128, 64, 0, 0, 0, 0);
    jg_plan *plan = NULL;
    jg_status st = jg_gemm_plan(ctx, &p, &plan);
    CHECK(st == JG_OK && plan, "offline plan: %s", jg_context_last_error(ctx));
    if (!plan)
        return;
    CHECK(compiles(ctx) == 1, "offline plan: %llu compiles", (unsigned long long)compiles(ctx));
    static _Alignas(16) char buf[64];
    jg_gemm_args args = {.a = buf, .b = buf, .d = buf, .alpha = 1.0f};
    CHECK(jg_gemm_run(plan, NULL, NULL) == JG_ERR_NULL_POINTER, "run: args NULL");
    st = jg_gemm_run(plan, &args, NULL);
    CHECK(st == JG_ERR_OFFLINE, "offline run: %s", jg_status_name(st));
    check_message("offline run", jg_context_last_error(ctx), JG_ERR_OFFLINE, "offline", "sm_90a");
    st = jg_gemm(ctx, &p, &args, NULL);
    CHECK(st == JG_ERR_OFFLINE, "offline jg_gemm: %s", jg_status_name(st));
    CHECK(compiles(ctx) == 1, "the second plan of one problem compiled again");
}

static jg_status create_with(uint32_t flags, const char *arch, int cache_mode, int sm_count)
{
    jg_options o;
    memset(&o, 0, sizeof o);
    o.flags = flags;
    o.arch = arch;
    o.cache_mode = (jg_cache_mode)cache_mode;
    o.sm_count = sm_count;
    jg_context *ctx = (jg_context *)&o; /* non-NULL: it must be cleared */
    jg_status st = jg_context_create(&o, &ctx);
    CHECK(ctx == NULL || st == JG_OK, "failed create left *out set");
    jg_context_destroy(st == JG_OK ? ctx : NULL);
    return st;
}

static void test_context_options(void)
{
    static const struct {
        const char *what;
        uint32_t flags;
        const char *arch;
        int cache_mode, sm_count;
        jg_status want;
        const char *word;
    } cases[] = {
        {"arch NULL", JG_CONTEXT_OFFLINE, NULL, JG_CACHE_OFF, 0, JG_ERR_INVALID, "arch"},
        {"arch sm_80", JG_CONTEXT_OFFLINE, "sm_80", JG_CACHE_OFF, 0, JG_ERR_UNSUPPORTED_ARCH, "sm_80"},
        {"cache_mode 99", JG_CONTEXT_OFFLINE, "sm_90a", 99, 0, JG_ERR_INVALID, "cache_mode"},
        {"cache_mode -1", JG_CONTEXT_OFFLINE, "sm_90a", -1, 0, JG_ERR_INVALID, "cache_mode"},
        {"flags bit 5", JG_CONTEXT_OFFLINE | 32u, "sm_90a", JG_CACHE_OFF, 0, JG_ERR_INVALID, "flags"},
        {"sm_count -1", JG_CONTEXT_OFFLINE, "sm_90a", JG_CACHE_OFF, -1, JG_ERR_INVALID, "sm_count"},
    };
    for (size_t i = 0; i < JG_ARRAY_LEN(cases); ++i) {
        jg_status st = create_with(cases[i].flags, cases[i].arch, cases[i].cache_mode,
                                   cases[i].sm_count);
        CHECK(st == cases[i].want, "%s: got %s, want %s (%s)", cases[i].what, jg_status_name(st),
              jg_status_name(cases[i].want), jg_context_last_error(NULL));
        check_message(cases[i].what, jg_context_last_error(NULL), cases[i].want, cases[i].word,
                      NULL);
    }
    CHECK(jg_context_create(NULL, NULL) == JG_ERR_NULL_POINTER, "create: out NULL");
    CHECK(create_with(JG_CONTEXT_OFFLINE, "sm_90a", JG_CACHE_OFF, 0) == JG_OK, "valid offline");
}

static void test_status_names(void)
{
    static const struct {
        jg_status s;
        const char *name;
    } all[] = {
#define JG_STATUS_ROW_(name, value, text) {JG_##name, "JG_" #name},
        JG_STATUS_LIST(JG_STATUS_ROW_)
#undef JG_STATUS_ROW_
    };
    for (size_t i = 0; i < JG_ARRAY_LEN(all); ++i) {
        const char *name = jg_status_name(all[i].s), *text = jg_status_string(all[i].s);
        CHECK(name && !strcmp(name, all[i].name), "status %d: name %s", (int)all[i].s, name);
        CHECK(text && *text, "status %s: empty text", all[i].name);
        for (size_t j = 0; j < i; ++j) {
            CHECK(strcmp(name, jg_status_name(all[j].s)) != 0, "%s: duplicate name", name);
            CHECK(strcmp(text, jg_status_string(all[j].s)) != 0, "%s: duplicate text", name);
        }
    }
    CHECK(!strcmp(jg_status_name((jg_status)1), "JG_UNKNOWN_STATUS"), "status 1");
    CHECK(!strcmp(jg_status_name((jg_status)-1000), "JG_UNKNOWN_STATUS"), "status -1000");
    CHECK(jg_status_string((jg_status)-1000) && *jg_status_string((jg_status)-1000),
          "unknown status: empty text");
}

int main(void)
{
    test_status_names();
    test_context_options();
    jg_context *ctx = jg_test_offline_context();
    if (ctx) {
        CHECK(!strcmp(jg_context_last_error(ctx), ""), "fresh context has an error");
        CHECK(!strcmp(jg_context_arch(ctx), "sm_90a"), "arch %s", jg_context_arch(ctx));
        test_rows(ctx);
        test_null_pointers(ctx);
        test_nvfp4_rules(ctx);
        test_pdl_flags_grouped(ctx);
        test_offline_run(ctx);
        jg_context_destroy(ctx);
    }
    return jg_test_result("test_validate");
}
