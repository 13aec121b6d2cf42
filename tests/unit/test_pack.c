/* The pack of unaligned operands (src/codegen/pack.c, templates/sm90_pack.cu),
 * on the CPU:
 *   - which operands a problem packs, the workspace's layout and size (by
 *     the rule jitgemm.h states, computed here on its own), the packed
 *     GEMM's problem (TMA rows, D's soft stores kept);
 *   - keys and names: the pack kernel's own, the packed GEMM's the key an
 *     aligned problem with those rows gets (BF16; FP8 with block scales
 *     and C), with the caller's K and scales, unlike the soft kernel's;
 *   - the kernel's own code (jg_pack_group and what it calls, copied out
 *     of the template at build time) run for every thread of every group
 *     over random rows, strides, pointer offsets (to the byte) and element
 *     sizes: each copied row equals its source, nothing written past its
 *     last 16-byte chunk, and no 16-byte word read that holds no byte of
 *     a row (so no page the matrix does not touch);
 *   - NVRTC compiles the pack kernel for sm_90a; with cuobjdump (argv[1]),
 *     no local memory and 16-byte global loads and stores;
 *   - an offline context plans an unaligned problem with the packed
 *     alternative: jg_plan_workspace_bytes by the rule.
 *   test_pack [CUOBJDUMP] [--seed S] */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jg_internal.h"
#include "jg_test.h"
#include "jg_test_sass.h"

/* ---- the kernel's code on the CPU ----------------------------------------------- */

typedef struct uint4 {
    uint32_t x, y, z, w;
} uint4;

static uint32_t __funnelshift_r(uint32_t lo, uint32_t hi, uint32_t shift)
{
    const uint64_t v = ((uint64_t)hi << 32 | lo) >> (shift & 31);
    return (uint32_t)v;
}

/* The matrix the loads may read: rows of row_bytes, ld apart from base. */
static struct {
    uintptr_t base;
    int64_t rows, row_bytes, ld;
    int bad_reads;
} g_src;

/* jg_pack_load's stand-in: the word must hold a byte of some row. */
static uint4 jg_pack_load(const uint4 *p)
{
    const uintptr_t at = (uintptr_t)p;
    bool holds = at % 16 == 0;
    bool any = false;
    for (int64_t r = 0; holds && !any && r < g_src.rows; ++r) {
        const uintptr_t lo = g_src.base + (uintptr_t)(r * g_src.ld);
        const uintptr_t hi = lo + (uintptr_t)g_src.row_bytes;
        any = at < hi && at + 16 > lo;
    }
    if (!holds || !any)
        ++g_src.bad_reads;
    uint4 v;
    memcpy(&v, p, sizeof v);
    return v;
}

#include "shift_math.h"
#include "pack_math.h"

/* One matrix packed by every (group, thread) of the kernel, checked. */
static void check_copy(jg_rng *r, int case_no)
{
    const int64_t size = 1 << jg_rng_below(r, 3); /* 1, 2 or 4 bytes */
    const int64_t cols = 1 + (int64_t)jg_rng_below(r, jg_rng_below(r, 4) ? 80 : 700);
    const int64_t rows = 1 + (int64_t)jg_rng_below(r, 40);
    const int64_t ld = (cols + (int64_t)jg_rng_below(r, 20)) * size;
    const int64_t off = (int64_t)jg_rng_below(r, 16) / size * size; /* element-aligned */
    jg_gemm_problem p = {.flags = JG_GEMM_UNALIGNED,
                         .a_type = size == 1 ? JG_E4M3 : size == 2 ? JG_BF16 : JG_FP32,
                         .d_type = JG_BF16, .m = rows, .n = 8, .k = cols, .lda = ld / size,
                         .ldb = cols, .scale = size == 1 ? JG_SCALE_TENSOR : JG_SCALE_NONE};
    p.b_type = p.a_type;
    jg__problem_key pk;
    jg__problem_key_make(&p, &pk);
    /* the source: 16-byte aligned words around the rows, random bytes */
    const size_t src_bytes = (size_t)(off + (rows - 1) * ld + cols * size + 32);
    uint8_t *src = aligned_alloc(16, (src_bytes + 15) / 16 * 16);
    for (size_t i = 0; i < src_bytes; ++i)
        src[i] = (uint8_t)jg_rng_next(r);
    const uint64_t ws_bytes = jg__pack_args(&pk, rows, NULL, NULL, NULL, NULL);
    uint8_t *ws = aligned_alloc(16, (size_t)(ws_bytes + 64));
    memset(ws, 0xA5, (size_t)(ws_bytes + 64));
    jg_pack_kargs ka;
    jg__pack_args(&pk, rows, src + off, src + 16, ws, &ka); /* B: 8 rows, not run here */
    ka.groups[1] = 0;
    g_src.base = (uintptr_t)(src + off);
    g_src.rows = rows;
    g_src.row_bytes = cols * size;
    g_src.ld = ld;
    g_src.bad_reads = 0;
    for (int64_t g = 0; g < ka.groups[0]; ++g)
        for (uint32_t t = 0; t < 256; ++t)
            jg_pack_group(&ka, g, t);
    CHECK(g_src.bad_reads == 0, "case %d: %d loads of words off the rows", case_no,
          g_src.bad_reads);
    const int64_t pitch = ka.dst_ld[0], row_bytes = cols * size;
    const int64_t written = (row_bytes + 15) / 16 * 16;
    int bad_rows = 0, bad_pad = 0;
    for (int64_t i = 0; i < rows; ++i) {
        bad_rows += memcmp(ws + i * pitch, src + off + i * ld, (size_t)row_bytes) != 0;
        for (int64_t b = written; b < pitch; ++b)
            bad_pad += ws[i * pitch + b] != 0xA5;
    }
    for (uint64_t b = (uint64_t)(rows * pitch); b < ws_bytes + 64; ++b) /* B's (not run), guard */
        bad_pad += ws[b] != 0xA5;
    CHECK(bad_rows == 0 && bad_pad == 0,
          "case %d (size %lld, %lld x %lld, ld %lld bytes, offset %lld): %d rows differ, %d "
          "bytes written past the rows' chunks",
          case_no, (long long)size, (long long)rows, (long long)cols, (long long)ld,
          (long long)off, bad_rows, bad_pad);
    free(src);
    free(ws);
}

/* ---- layout, problems, keys -------------------------------------------------------- */

static int64_t up128(int64_t bytes) { return (bytes + 127) / 128 * 128; }

static jg__problem_key key_of(const jg_gemm_problem *p)
{
    jg__problem_key pk;
    jg__problem_key_make(p, &pk);
    return pk;
}

/* Which operands pack: the soft ones of dense 16-bit, FP8 and FP32
 * problems, nothing else. */
static void test_operands(void)
{
    jg_gemm_problem p = {.flags = JG_GEMM_UNALIGNED, .a_type = JG_BF16, .b_type = JG_BF16,
                         .d_type = JG_BF16, .m = 386, .n = 270, .k = 1739};
    jg__problem_key pk = key_of(&p);
    CHECK(jg__pack_operands(&pk) == (JG_SOFT_A | JG_SOFT_B), "flagged: %u",
          jg__pack_operands(&pk));
    p.flags = 0;
    p.k = 1024;
    p.lda = 1027; /* A's rows off 16 bytes, B's on */
    pk = key_of(&p);
    CHECK(jg__pack_operands(&pk) == JG_SOFT_A, "odd lda: %u", jg__pack_operands(&pk));
    p.lda = 0;
    p.ldd = 271; /* only D's rows off: nothing to pack */
    pk = key_of(&p);
    CHECK(jg__pack_operands(&pk) == 0, "odd ldd: %u", jg__pack_operands(&pk));
    p.ldd = 0;
    pk = key_of(&p);
    CHECK(jg__pack_operands(&pk) == 0 && jg__pack_args(&pk, 386, NULL, NULL, NULL, NULL) == 0,
          "aligned: nothing packed");
    p.flags = JG_GEMM_UNALIGNED | JG_GEMM_FP32_EXACT;
    p.a_type = p.b_type = JG_FP32;
    p.d_type = JG_FP32;
    pk = key_of(&p);
    CHECK(jg__pack_operands(&pk) == 0, "exact FP32: its split reads A and B");
    pk.flags &= ~(uint32_t)JG_GEMM_FP32_EXACT;
    CHECK(jg__pack_operands(&pk) == (JG_SOFT_A | JG_SOFT_B), "TF32 packs");
    pk.groups = 2;
    CHECK(jg__pack_operands(&pk) == 0, "grouped: none");
    pk.groups = 0;
    pk.a_type = pk.b_type = JG_NVFP4;
    CHECK(jg__pack_operands(&pk) == 0, "NVFP4: none");
}

/* The workspace by jitgemm.h's rule: each packed operand's rows (K-major:
 * m or n; MN-major: k) times its rows' bytes rounded up to 128 (an
 * M-generic M-major A: lda's), A's first. */
static void test_layout(void)
{
    static const struct {
        jg_dtype t;
        uint32_t flags;
        int64_t m, n, k, lda, ldb, call_m;
    } cases[] = {
        {JG_BF16, JG_GEMM_UNALIGNED, 386, 270, 1739, 1741, 1744, 386},
        {JG_FP16, JG_GEMM_UNALIGNED | JG_GEMM_M_GENERIC, 64, 3000, 8, 0, 0, 5000},
        {JG_E4M3, JG_GEMM_UNALIGNED, 999, 17, 1001, 1003, 0, 999},
        {JG_FP32, JG_GEMM_UNALIGNED, 10, 20, 33, 35, 0, 10},
        {JG_BF16, JG_GEMM_A_M_MAJOR | JG_GEMM_B_N_MAJOR, 301, 77, 50, 303, 79, 301},
        {JG_BF16, JG_GEMM_A_M_MAJOR | JG_GEMM_M_GENERIC | JG_GEMM_UNALIGNED, 100, 64, 90, 3000,
         0, 700},
    };
    for (size_t i = 0; i < JG_ARRAY_LEN(cases); ++i) {
        const int64_t size = (int64_t)jg__dtype_size(cases[i].t);
        jg_gemm_problem p = {.flags = cases[i].flags, .a_type = cases[i].t, .b_type = cases[i].t,
                             .d_type = JG_BF16, .m = cases[i].m, .n = cases[i].n,
                             .k = cases[i].k, .lda = cases[i].lda, .ldb = cases[i].ldb,
                             .scale = cases[i].t == JG_E4M3 ? JG_SCALE_TENSOR : JG_SCALE_NONE};
        const jg__problem_key pk = key_of(&p);
        const bool a_mn = p.flags & JG_GEMM_A_M_MAJOR, b_mn = p.flags & JG_GEMM_B_N_MAJOR;
        const int64_t m = cases[i].call_m, lda = pk.lda;
        const int64_t a_pitch =
            up128((a_mn ? ((p.flags & JG_GEMM_M_GENERIC) ? lda : p.m) : p.k) * size);
        const int64_t b_pitch = up128((b_mn ? p.n : p.k) * size);
        const int64_t a_rows = a_mn ? p.k : m, b_rows = b_mn ? p.k : p.n;
        const uint32_t ops = jg__pack_operands(&pk);
        const uint64_t want = (ops & JG_SOFT_A ? (uint64_t)(a_rows * a_pitch) : 0) +
                              (ops & JG_SOFT_B ? (uint64_t)(b_rows * b_pitch) : 0);
        char ws[1];
        jg_pack_kargs ka;
        const uint64_t got = jg__pack_args(&pk, m, "a", "b", ws, &ka);
        CHECK(ops && got == want, "case %zu: %llu workspace bytes, the rule says %llu (ops %u)",
              i, (unsigned long long)got, (unsigned long long)want, ops);
        for (int w = 0; w < 2; ++w) {
            if (!(ops & (w ? JG_SOFT_B : JG_SOFT_A))) {
                CHECK(ka.rows[w] == 0 && ka.groups[w] == 0, "case %zu: operand %d not packed",
                      i, w);
                continue;
            }
            const int64_t rows = w ? b_rows : a_rows, pitch = w ? b_pitch : a_pitch;
            const int64_t bytes = (w ? (b_mn ? p.n : p.k) : (a_mn ? m : p.k)) * size;
            const uint32_t lanes = 1u << ka.lanes_log2[w];
            CHECK(ka.rows[w] == rows && ka.dst_ld[w] == pitch && ka.row_bytes[w] == bytes &&
                      ka.dst_ld[w] % JG_PACK_PITCH == 0 && ka.dst_ld[w] >= bytes,
                  "case %zu operand %d: rows %lld pitch %lld bytes %lld", i, w,
                  (long long)ka.rows[w], (long long)ka.dst_ld[w], (long long)ka.row_bytes[w]);
            CHECK(ka.src_ld[w] == (w ? pk.ldb : pk.lda) * size, "case %zu: source stride", i);
            /* every row in some group, a row's chunks over its lanes */
            CHECK(ka.lanes_log2[w] <= 8 && ka.groups[w] * (256 >> ka.lanes_log2[w]) >= rows &&
                      (ka.groups[w] - 1) * (256 >> ka.lanes_log2[w]) < rows &&
                      (lanes == 256 || lanes >= (uint64_t)(bytes + 15) / 16),
                  "case %zu operand %d: %lld groups of %u lanes", i, w, (long long)ka.groups[w],
                  lanes);
        }
        CHECK(ka.dst[0] == (ops & JG_SOFT_A ? (void *)ws : NULL), "case %zu: A's copy first", i);
        if ((ops & JG_SOFT_A) && (ops & JG_SOFT_B))
            CHECK((char *)ka.dst[1] == ws + a_rows * a_pitch, "case %zu: B's after A's", i);
        /* the packed problem: TMA rows for the copies, D as it was */
        jg__problem_key pp;
        jg__pack_problem(&pk, &pp);
        const uint32_t soft = jg__problem_soft(&pk), psoft = jg__problem_soft(&pp);
        CHECK(pp.packed == ops && !(psoft & (JG_SOFT_A | JG_SOFT_B)) &&
                  (psoft & JG_SOFT_D) == (soft & JG_SOFT_D),
              "case %zu: packed problem soft %u (was %u)", i, psoft, soft);
        CHECK(!(ops & JG_SOFT_A) || pp.lda * size == a_pitch, "case %zu: packed lda %lld", i,
              (long long)pp.lda);
        CHECK(!(ops & JG_SOFT_B) || pp.ldb * size == b_pitch, "case %zu: packed ldb %lld", i,
              (long long)pp.ldb);
        CHECK(jg__pack_operands(&pp) == 0, "case %zu: a packed problem packs nothing more", i);
    }
}

/* The packed GEMM's kernel is the one an aligned problem with the copies'
 * rows gets (the same code: one cache entry), the soft kernel another.
 * Its K and scale mode, and so the block scales' layout ([m][ceil(K/128)],
 * [ceil(N/128)][ceil(K/128)]), are the caller's: the copies' padding lies
 * past K, outside the tensor maps. */
static void check_packed_key(const jg__target *t, const jg_gemm_problem *p,
                             const jg__gemm_key *pack)
{
    const jg__log quiet = {0};
    const jg__problem_key pk = key_of(p);
    jg__problem_key pp;
    jg__pack_problem(&pk, &pp);
    jg_gemm_problem aligned = *p;
    aligned.lda = pp.lda;
    aligned.ldb = pp.ldb;
    const jg__problem_key ak = key_of(&aligned);
    jg__gemm_config cs, cp, ca;
    jg__gemm_key soft_key, packed_key, aligned_key;
    CHECK(jg__plan_gemm_sm90(t, &pk, &quiet, &cs) == JG_OK &&
              jg__plan_gemm_sm90(t, &pp, &quiet, &cp) == JG_OK &&
              jg__plan_gemm_sm90(t, &ak, &quiet, &ca) == JG_OK,
          "planning the three problems");
    jg__gemm_key_make(&pk, &cs, &soft_key);
    jg__gemm_key_make(&pp, &cp, &packed_key);
    jg__gemm_key_make(&ak, &ca, &aligned_key);
    CHECK(!memcmp(&packed_key, &aligned_key, sizeof packed_key),
          "the packed GEMM's key is the aligned problem's");
    const int64_t size = (int64_t)jg__dtype_size(p->a_type);
    CHECK(packed_key.k == p->k && packed_key.scale == (uint32_t)p->scale &&
              pp.lda * size % JG_PACK_PITCH == 0 && pp.ldb * size % JG_PACK_PITCH == 0 &&
              pp.lda >= p->k && pp.ldb >= p->k,
          "the packed GEMM: K %lld, scale %u, rows of %lld and %lld", (long long)packed_key.k,
          packed_key.scale, (long long)pp.lda, (long long)pp.ldb);
    CHECK(cs.soft == (JG_SOFT_A | JG_SOFT_B | JG_SOFT_D) && cp.soft == JG_SOFT_D,
          "soft operands: %u unpacked, %u packed", cs.soft, cp.soft);
    char soft_name[128], packed_name[128];
    jg__gemm_kernel_name(&soft_key, "sm_90a", soft_name);
    jg__gemm_kernel_name(&packed_key, "sm_90a", packed_name);
    CHECK(strcmp(soft_name, packed_name) && strstr(soft_name, "_sabd") &&
              strstr(packed_name, "_sd") && !strstr(packed_name, "_sa"),
          "names: %s, %s", soft_name, packed_name);
    const jg__salt salt = jg__salt_make("sm_90a", "test");
    const jg__hash128 hs = jg__key_hash(&salt, &soft_key, sizeof soft_key);
    const jg__hash128 hp = jg__key_hash(&salt, &packed_key, sizeof packed_key);
    const jg__hash128 hk = jg__key_hash(&salt, pack, sizeof *pack);
    CHECK((hs.lo != hp.lo || hs.hi != hp.hi) && (hk.lo != hp.lo || hk.hi != hp.hi) &&
              (hk.lo != hs.lo || hk.hi != hs.hi),
          "three distinct cache keys");
}

/* The pack kernel's key and name; the packed GEMMs' keys. */
static void test_keys(void)
{
    jg__gemm_key pack, pack2;
    jg__pack_key_make(&pack);
    jg__pack_key_make(&pack2);
    char name[128];
    jg__gemm_kernel_name(&pack, "sm_90a", name);
    CHECK(!strcmp(name, "jg_pack_sm90a"), "pack kernel name %s", name);
    CHECK(!memcmp(&pack, &pack2, sizeof pack), "pack keys are the same bytes");
    /* the LLVM backend's catalog has no pack kernel: NVRTC compiles it */
    CHECK(!jg__spec_supported(&pack), "the pack kernel is NVRTC's");
    jg__target t;
    jg_test_h100_target(&t);
    /* D's rows off 16 bytes in both: its direct stores are in both kernels */
    const jg_gemm_problem bf16 = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                                  .m = 798, .n = 347, .k = 3307, .lda = 3309, .ldb = 3311,
                                  .ldd = 349};
    check_packed_key(&t, &bf16, &pack);
    /* FP8 block scales and C: any_fuzz's shape that failed on H100 only
     * when packed (the aligned kernel's block scales by pairs of stages,
     * in chunks of 7: test_kpair) */
    const jg_gemm_problem block = {.a_type = JG_E4M3, .b_type = JG_E4M3, .c_type = JG_BF16,
                                   .d_type = JG_BF16, .m = 1846, .n = 2109, .k = 2657,
                                   .lda = 2657, .ldb = 2657, .ldc = 2113, .ldd = 2117,
                                   .scale = JG_SCALE_BLOCK};
    check_packed_key(&t, &block, &pack);
}

/* NVRTC: the pack kernel for sm_90a; with cuobjdump, its SASS. */
static void test_compile(const char *cuobjdump)
{
    jg__gemm_key key;
    jg__pack_key_make(&key);
    char name[128];
    jg__gemm_kernel_name(&key, "sm_90a", name);
    jg__buf src = {0}, cubin = {0}, log = {0};
    jg__emit_gemm(&key, name, &src);
    CHECK(!src.failed && strstr(src.data, "#define JG_KERNEL_NAME jg_pack_sm90a") &&
              !strstr(src.data, "#include \""),
          "pack source");
    const jg_status st = jg__nvrtc_compile(src.data, src.len, name, "sm_90a", &cubin, NULL, &log);
    CHECK(st == JG_OK, "%s: %s\n%s", name, jg_status_name(st), log.data ? log.data : "");
    if (st == JG_OK && cuobjdump && *cuobjdump) {
        char *sass = check_no_local(cuobjdump, name, &cubin);
        CHECK(sass && strstr(sass, "LDG.E.128") && strstr(sass, "STG.E.128"),
              "%s: 16-byte global loads and stores expected", name);
        free(sass);
    } else if (st == JG_OK) {
        printf("pack: no cuobjdump: the SASS not checked\n");
    }
    jg__buf_free(&src);
    jg__buf_free(&cubin);
    jg__buf_free(&log);
}

/* An offline plan of an unaligned problem: the soft kernel, the packed
 * GEMM and the pack compile; its workspace is the rule's. */
static void test_offline_plan(void)
{
    jg_options o = {.flags = JG_CONTEXT_OFFLINE, .arch = "sm_90a", .cache_mode = JG_CACHE_OFF};
    jg_context *ctx = NULL;
    CHECK(jg_context_create(&o, &ctx) == JG_OK, "offline context: %s",
          jg_context_last_error(NULL));
    if (!ctx)
        return;
    jg_gemm_problem p = {.flags = JG_GEMM_UNALIGNED, .a_type = JG_BF16, .b_type = JG_BF16,
                         .d_type = JG_BF16, .m = 386, .n = 270, .k = 1739, .lda = 1741,
                         .ldb = 1744, .ldd = 275};
    jg_plan *plan = NULL;
    CHECK(jg_gemm_plan(ctx, &p, &plan) == JG_OK, "plan: %s", jg_context_last_error(ctx));
    size_t bytes = 0;
    CHECK(plan && jg_plan_workspace_bytes(plan, &bytes) == JG_OK &&
              bytes == (size_t)(386 + 270) * 3584,
          "workspace %zu bytes, the rule: (386 + 270) * 3584", bytes);
    jg_context_stats stats;
    CHECK(jg_context_get_stats(ctx, &stats) == JG_OK && stats.plans_compiled == 3,
          "three kernels compiled (soft GEMM, packed GEMM, pack): %llu",
          (unsigned long long)stats.plans_compiled);
    /* an aligned problem: no workspace */
    jg_gemm_problem q = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16, .m = 256,
                         .n = 256, .k = 256};
    jg_plan *aligned = NULL;
    CHECK(jg_gemm_plan(ctx, &q, &aligned) == JG_OK && jg_plan_workspace_bytes(aligned, &bytes) ==
                                                          JG_OK && bytes == 0,
          "aligned plan: %zu workspace bytes", bytes);
    /* launches: the workspace is optional (offline refuses after the checks) */
    jg_gemm_args args = {.a = (void *)2, .b = (void *)2, .d = (void *)2, .alpha = 1};
    CHECK(plan && jg_gemm_run(plan, &args, NULL) == JG_ERR_OFFLINE, "no workspace: %s",
          jg_context_last_error(ctx));
    args.workspace = (void *)16;
    args.workspace_bytes = 1;
    CHECK(plan && jg_gemm_run(plan, &args, NULL) == JG_ERR_OFFLINE, "small workspace: %s",
          jg_context_last_error(ctx));
    jg_plan_release(plan);
    jg_plan_release(aligned);
    jg_context_destroy(ctx);
}

int main(int argc, char **argv)
{
    const char *cuobjdump = argc > 1 && strncmp(argv[1], "--", 2) ? argv[1] : "";
    const uint64_t seed = jg_test_seed(argc, argv, "test_pack");
    test_operands();
    test_layout();
    test_keys();
    jg_rng r;
    jg_rng_seed(&r, seed);
    for (int i = 0; i < 400; ++i)
        check_copy(&r, i);
    test_compile(cuobjdump);
    test_offline_plan();
    return jg_test_result("pack");
}
