/* Validation in an offline context (no GPU): every broken rule is refused
 * before anything is compiled, with the right status and a message that
 * names the field. Also: context options, offline runs, status names. */
#include <stdio.h>
#include <string.h>

#include "jg_internal.h"
#include "jg_test.h"
#include "jg_test_problem.h" /* NONE, BF16, ..., P, PS */

#define BAD ((jg_dtype)99)
#define E4M3 JG_E4M3
#define NVFP4 JG_NVFP4
#define ROWM JG_SF_ROW_MAJOR
#define SWZ JG_SF_SWIZZLED_128X4
#define MG JG_GEMM_M_GENERIC
#define PDL JG_GEMM_PDL
#define AM JG_GEMM_A_M_MAJOR
#define BN JG_GEMM_B_N_MAJOR
#define UNAL JG_GEMM_UNALIGNED
#define EXACT JG_GEMM_FP32_EXACT

/* NVFP4 A and B with their scale layouts, bf16 out. */
#define PN(sfa, sfb, m, n, k, lda, ldb) \
    {0, NVFP4, NVFP4, NONE, BF16, m, n, k, lda, ldb, 0, 0, JG_SCALE_NVFP4, sfa, sfb}
/* The same with flags (JG_GEMM_PDL, JG_GEMM_M_GENERIC). */
#define PNF(flags, sfa, sfb, m, n, k) \
    {flags, NVFP4, NVFP4, NONE, BF16, m, n, k, 0, 0, 0, 0, JG_SCALE_NVFP4, sfa, sfb}

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
    {"a fp32 b bf16", P(0, FP32, BF16, NONE, FP32, 128,        128, 64,  0,   0,   0,  0), JG_ERR_UNSUPPORTED, "b_type bf16", "a_type fp32"},
    {"a bf16 b fp16", P(0, BF16, FP16, NONE, BF16, 128,        128, 64,  0,   0,   0,  0), JG_ERR_UNSUPPORTED, "b_type", NULL},
    {"c != d",     P(0,  BF16, BF16, FP32, BF16, 128,          128, 64,  0,   0,   0,  0), JG_ERR_UNSUPPORTED, "c_type", NULL},
    {"a = 99",     P(0,  BAD,  BF16, NONE, BF16, 128,          128, 64,  0,   0,   0,  0), JG_ERR_INVALID, "a_type = 99", NULL},
    {"c = 99",     P(0,  BF16, BF16, BAD,  BF16, 128,          128, 64,  0,   0,   0,  0), JG_ERR_INVALID, "c_type = 99", NULL},
    {"d = 99",     P(0,  BF16, BF16, NONE, BAD,  128,          128, 64,  0,   0,   0,  0), JG_ERR_INVALID, "d_type = 99", NULL},
    /* flags: unknown bits (bit 6 among them, alone or with JG_GEMM_PDL) */
    {"flags bit 7", P(1u << 7, BF16, BF16, NONE, BF16, 128,   128, 64,  0,   0,   0,  0), JG_ERR_INVALID, "flags", "0x80"},
    {"flags bit 31", P(PDL | (1u << 31), BF16, BF16, NONE, BF16, 128, 128, 64, 0, 0, 0, 0), JG_ERR_INVALID, "flags", "0x80000000"},
    {"flags bit 6", P(1u << 6, BF16, BF16, NONE, BF16, 128,   128, 64,  0,   0,   0,  0), JG_ERR_INVALID, "flags 0x40", "unknown bits 0x40"},
    {"PDL|bit 6",  P(PDL | (1u << 6), BF16, BF16, NONE, BF16, 128, 128, 64, 0, 0,  0,  0), JG_ERR_INVALID, "flags 0x42", "unknown bits 0x40"},
    {"lda < k",    P(0,  BF16, BF16, NONE, BF16, 128,          128, 64,  32,  0,   0,  0), JG_ERR_INVALID, "lda", NULL},
    {"lda < 0",    P(0,  BF16, BF16, NONE, BF16, 128,          128, 64,  -8,  0,   0,  0), JG_ERR_INVALID, "lda", NULL},
    {"ldb < k",    P(0,  BF16, BF16, NONE, BF16, 128,          128, 64,  0,   63,  0,  0), JG_ERR_INVALID, "ldb", NULL},
    {"ldd < n",    P(0,  BF16, BF16, NONE, BF16, 128,          128, 64,  0,   0,   0,  120), JG_ERR_INVALID, "ldd", NULL},
    {"ldc < n",    P(0,  BF16, BF16, FP32, FP32, 128,          64,  64,  0,   0,   32, 0), JG_ERR_INVALID, "ldc", NULL},
    /* MN-major operands: their leading dimension holds M or N; 16-bit types only */
    {"M-major lda < m", P(AM, BF16, BF16, NONE, BF16, 128,     128, 64,  100, 0,   0,  0), JG_ERR_INVALID, "lda = 100", "m (M-major A)"},
    {"N-major ldb < n", P(BN, FP16, FP16, NONE, FP16, 128,     200, 64,  0,   199, 0,  0), JG_ERR_INVALID, "ldb = 199", "n (N-major B)"},
    {"K-major lda < k, M-major B", P(BN, BF16, BF16, NONE, BF16, 128, 128, 64, 63, 0, 0, 0), JG_ERR_INVALID, "lda = 63", ">= k"},
    {"e4m3 M-major A", P(AM, E4M3, E4M3, NONE, BF16, 128,      128, 128, 0,   0,   0,  0), JG_ERR_UNSUPPORTED, "JG_GEMM_A_M_MAJOR", "K-major only"},
    {"e4m3 N-major B", P(BN, E4M3, E4M3, NONE, BF16, 128,      128, 128, 0,   0,   0,  0), JG_ERR_UNSUPPORTED, "JG_GEMM_B_N_MAJOR", "e4m3"},
    {"fp32 N-major B", P(BN, FP32, FP32, NONE, FP32, 128,      128, 128, 0,   0,   0,  0), JG_ERR_UNSUPPORTED, "JG_GEMM_B_N_MAJOR", "tf32"},
    {"nvfp4 M-major A", {AM, NVFP4, NVFP4, NONE, BF16, 128, 128, 256, 0, 0, 0, 0, JG_SCALE_NVFP4, SWZ, SWZ}, JG_ERR_UNSUPPORTED, "JG_GEMM_A_M_MAJOR", "nvfp4"},
    /* the exact FP32 mode: FP32 operands only; unaligned NVFP4: never */
    {"exact bf16", P(EXACT, BF16, BF16, NONE, BF16, 128,       128, 64,  0,   0,   0,  0), JG_ERR_INVALID, "JG_GEMM_FP32_EXACT", "fp32 A and B only"},
    {"fp32 scaled", PS(JG_SCALE_TENSOR, 0, FP32, FP32, NONE, FP32, 128, 128, 64, 0, 0, 0, 0), JG_ERR_INVALID, "e4m3 operands only", NULL},
    {"nvfp4 unaligned", {UNAL, NVFP4, NVFP4, NONE, BF16, 128, 128, 256, 0, 0, 0, 0, JG_SCALE_NVFP4, SWZ, SWZ}, JG_ERR_UNSUPPORTED, "JG_GEMM_UNALIGNED", "TMA"},
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
    /* 0.7: any leading dimension, any k (soft loads and stores where TMA cannot) */
    {"packed k=12", P(0, BF16, BF16, NONE, BF16, 128,          128, 12,  0,   0,   0,  0), JG_OK, NULL, NULL},
    {"lda 68 fp16", P(0, FP16, FP16, NONE, FP16, 128,          128, 64,  68,  0,   0,  0), JG_OK, NULL, NULL},
    {"ldd 66 fp32", P(0, BF16, BF16, NONE, FP32, 128,          64,  64,  0,   0,   0,  66), JG_OK, NULL, NULL},
    {"ldc 66 fp32", P(0, BF16, BF16, FP32, FP32, 128,          64,  64,  0,   0,   66, 0), JG_OK, NULL, NULL},
    {"ldb 65 bf16", P(0, BF16, BF16, NONE, BF16, 64,           64,  64,  0,   65,  0,  0), JG_OK, NULL, NULL},
    {"ldc 65 bf16", P(0, BF16, BF16, BF16, BF16, 64,           64,  64,  0,   0,   65, 0), JG_OK, NULL, NULL},
    {"packed k=1 fp16", P(0, FP16, FP16, NONE, FP16, 64,       64,  1,   0,   0,   0,  0), JG_OK, NULL, NULL},
    {"packed n=6 fp32", P(0, BF16, BF16, FP32, FP32, 64,       6,   64,  0,   0,   0,  0), JG_OK, NULL, NULL},
    {"7x7x8 bf16", P(0,  BF16, BF16, NONE, BF16, 7,            7,   8,   0,   0,   0,  0), JG_OK, NULL, NULL},
    {"4097x4099x4104", P(0, BF16, BF16, NONE, BF16, 4097,      4099, 4104, 0, 0,   0,  0), JG_OK, NULL, NULL},
    {"e4m3 k=8",   P(0,  E4M3, E4M3, NONE, BF16, 128,          128, 8,   0,   0,   0,  0), JG_OK, NULL, NULL},
    {"e4m3 k=1 odd lds", PS(JG_SCALE_BLOCK, 0, E4M3, E4M3, BF16, BF16, 3, 5, 1, 7, 9, 11, 13), JG_OK, NULL, NULL},
    {"unaligned flag", P(UNAL, BF16, BF16, NONE, BF16, 4096,   4096, 4096, 0, 0,   0,  0), JG_OK, NULL, NULL},
    /* FP32 operands: TF32, or exact; MN-major 16-bit operands */
    {"fp32 tf32",  P(0,  FP32, FP32, NONE, FP32, 128,          128, 64,  0,   0,   0,  0), JG_OK, NULL, NULL},
    {"fp32 tf32 bf16 out", P(0, FP32, FP32, BF16, BF16, 3,     1000, 999, 1001, 0, 0,  0), JG_OK, NULL, NULL},
    {"fp32 exact", P(EXACT | MG, FP32, FP32, NONE, FP16, 128,  128, 1,   0,   0,   0,  0), JG_OK, NULL, NULL},
    {"fp32 exact bf16 out", P(EXACT, FP32, FP32, NONE, BF16, 64, 64, 64, 0,   0,   0,  0), JG_OK, NULL, NULL},
    {"M-major A",  P(AM, BF16, BF16, NONE, BF16, 100,          128, 64,  0,   0,   0,  0), JG_OK, NULL, NULL},
    {"N-major B",  P(BN, FP16, FP16, FP32, FP32, 100,          130, 64,  0,   131, 0,  0), JG_OK, NULL, NULL},
    {"both MN-major", P(AM | BN | MG, BF16, BF16, NONE, BF16, 64, 64, 3000, 71, 65, 0, 0), JG_OK, NULL, NULL},
    {"both MN-major packed", P(AM | BN, BF16, BF16, NONE, BF16, 64, 10, 64, 64, 10, 0, 0), JG_OK, NULL, NULL},
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
    {"nvfp4 mixed layouts, B row-major", PN(SWZ, ROWM, 128, 4096, 7168, 0, 0), JG_OK, NULL, NULL},
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

/* The alignment a plan needs at run time (after test_offline_run: its
 * 16-byte plan is compiled): TMA-only plans refuse pointers off 16 bytes
 * and name JG_GEMM_UNALIGNED; jg_gemm adds the flag itself; unaligned plans
 * take element-aligned pointers only. Exact FP32 plans check their
 * workspace, M-generic M-major ones each call's m against lda. Three more
 * kernels are compiled (the unaligned, exact and M-major plans). */
static void test_alignment_runs(jg_context *ctx)
{
    static _Alignas(16) char buf[64];
    const uint64_t before = compiles(ctx);
    jg_gemm_problem p = P(0, BF16, BF16, NONE, BF16, 128, 128, 64, 0, 0, 0, 0);
    jg_plan *tma = NULL, *any = NULL;
    CHECK(jg_gemm_plan(ctx, &p, &tma) == JG_OK, "the 16-byte plan: %s", jg_context_last_error(ctx));
    CHECK(compiles(ctx) == before, "the 16-byte plan compiled again");
    jg_gemm_args args = {.a = buf + 2, .b = buf, .d = buf, .alpha = 1.0f};
    jg_status st = tma ? jg_gemm_run(tma, &args, NULL) : JG_OK;
    CHECK(st == JG_ERR_MISALIGNED, "a + 2, TMA plan: %s", jg_status_name(st));
    check_message("a + 2, TMA plan", jg_context_last_error(ctx), JG_ERR_MISALIGNED, "args.a",
                  "JG_GEMM_UNALIGNED");
    /* plans with JG_GEMM_UNALIGNED: three compiles (the soft kernel, and
     * for a workspace the aligned GEMM over the copies and the pack) */
    st = jg_gemm(ctx, &p, &args, NULL);
    CHECK(st == JG_ERR_OFFLINE, "a + 2, jg_gemm: %s (%s)", jg_status_name(st),
          jg_context_last_error(ctx));
    CHECK(compiles(ctx) == before + 3, "jg_gemm with a + 2 compiled %llu kernels",
          (unsigned long long)(compiles(ctx) - before));
    p.flags = UNAL;
    CHECK(jg_gemm_plan(ctx, &p, &any) == JG_OK && compiles(ctx) == before + 3,
          "the unaligned plan is jg_gemm's: %s", jg_context_last_error(ctx));
    args.a = buf + 1;
    st = any ? jg_gemm_run(any, &args, NULL) : JG_OK;
    CHECK(st == JG_ERR_MISALIGNED, "a + 1, unaligned plan: %s", jg_status_name(st));
    check_message("a + 1, unaligned plan", jg_context_last_error(ctx), JG_ERR_MISALIGNED,
                  "args.a", "bf16 elements");
    args.a = buf + 14;
    args.d = buf + 6;
    st = any ? jg_gemm_run(any, &args, NULL) : JG_OK;
    CHECK(st == JG_ERR_OFFLINE, "a + 14, d + 6, unaligned plan: %s", jg_status_name(st));

    /* exact FP32: the workspace (m + n) * KP * 8 bytes, KP = 64 here */
    jg_gemm_problem e = P(EXACT, FP32, FP32, NONE, FP32, 100, 28, 50, 0, 0, 0, 0);
    jg_plan *exact = NULL;
    size_t ws = 0;
    CHECK(jg_gemm_plan(ctx, &e, &exact) == JG_OK, "exact plan: %s", jg_context_last_error(ctx));
    CHECK(exact && jg_plan_workspace_bytes(exact, &ws) == JG_OK && ws == 128 * 64 * 8,
          "exact workspace %zu bytes, want %d", ws, 128 * 64 * 8);
    static _Alignas(16) float fbuf[16];
    jg_gemm_args ea = {.a = fbuf + 1, .b = fbuf + 3, .d = fbuf, .alpha = 1.0f};
    static const struct {
        size_t offset, bytes;
        bool present;
        jg_status want;
        const char *w1;
    } ws_rows[] = {
        {0, 0, false, JG_ERR_NULL_POINTER, "args.workspace is NULL"},
        {4, 1 << 20, true, JG_ERR_MISALIGNED, "args.workspace"},
        {0, 128 * 64 * 8 - 1, true, JG_ERR_INVALID, "65535"},
        {0, 128 * 64 * 8, true, JG_ERR_OFFLINE, "offline"},
    };
    for (size_t i = 0; exact && i < JG_ARRAY_LEN(ws_rows); ++i) {
        ea.workspace = ws_rows[i].present ? (char *)buf + ws_rows[i].offset : NULL;
        ea.workspace_bytes = ws_rows[i].bytes;
        st = jg_gemm_run(exact, &ea, NULL);
        CHECK(st == ws_rows[i].want, "exact workspace row %zu: %s (%s)", i, jg_status_name(st),
              jg_context_last_error(ctx));
        check_message("exact workspace", jg_context_last_error(ctx), ws_rows[i].want,
                      ws_rows[i].w1, NULL);
    }
    ea.a = (const char *)fbuf + 2; /* FP32: 4-byte aligned */
    st = exact ? jg_gemm_run(exact, &ea, NULL) : JG_OK;
    CHECK(st == JG_ERR_MISALIGNED, "exact, a + 2 bytes: %s", jg_status_name(st));

    /* M-generic M-major A: each call's m within lda */
    jg_gemm_problem am = P(AM | MG, FP16, FP16, NONE, FP16, 64, 128, 64, 200, 0, 0, 0);
    jg_plan *mm = NULL;
    CHECK(jg_gemm_plan(ctx, &am, &mm) == JG_OK, "M-major plan: %s", jg_context_last_error(ctx));
    jg_gemm_args ma = {.a = buf, .b = buf, .d = buf, .alpha = 1.0f, .m = 201};
    st = mm ? jg_gemm_run(mm, &ma, NULL) : JG_OK;
    CHECK(st == JG_ERR_INVALID, "M-major, m 201 > lda 200: %s", jg_status_name(st));
    check_message("M-major m > lda", jg_context_last_error(ctx), JG_ERR_INVALID, "args.m = 201",
                  "lda = 200");
    ma.m = 200;
    st = mm ? jg_gemm_run(mm, &ma, NULL) : JG_OK;
    CHECK(st == JG_ERR_OFFLINE, "M-major, m 200 = lda: %s", jg_status_name(st));
    CHECK(compiles(ctx) == before + 5, "alignment runs compiled %llu kernels, want 5",
          (unsigned long long)(compiles(ctx) - before));
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
        test_alignment_runs(ctx);
        jg_context_destroy(ctx);
    }
    return jg_test_result("test_validate");
}
