/* NVRTC compiles generated kernels for sm_90a with no GPU present.
 * Built twice: as `nvrtc` (one kernel, compile only) and, with JG_TEST_SASS,
 * as `sass`: every configuration the planner emits over a grid of shapes is
 * compiled and disassembled (argv[1] = cuobjdump), and its SASS must hold
 * HGMMA and no local-memory traffic (LDL/STL: spills or a run-time-indexed
 * register array) in any of the module's functions. Exits 77 when the SASS
 * test has no cuobjdump. `test_sass CUOBJDUMP exact` checks the exact FP32
 * kernels alone, `test_sass CUOBJDUMP n_stack` the clusters stacked along N. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "jg_internal.h"
#include "jg_test.h"
#include "jg_test_sass.h"

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static jg_status compile_key(const jg__gemm_key *key, jg__buf *cubin, double *ms)
{
    char name[128];
    jg__gemm_kernel_name(key, "sm_90a", name);
    jg__buf src = {0}, log = {0};
    jg__emit_gemm(key, name, &src);
    CHECK(!src.failed, "emitting %s", name);
    double t0 = now_ms();
    jg_status st = jg__nvrtc_compile(src.data, src.len, name, "sm_90a", cubin, NULL, &log);
    *ms = now_ms() - t0;
    CHECK(st == JG_OK, "%s: %s\n%s", name, jg_status_name(st), log.data ? log.data : "");
    /* the SASS edits the key asks for, as the library makes them */
    CHECK(st != JG_OK || jg__sass_edit(key, name, cubin) >= 0, "%s: SASS edit failed", name);
    CHECK(strstr(src.data, "#include") == NULL || strstr(src.data, "#include \"") == NULL,
          "%s: generated source still includes a file", name);
    printf("%s: %.0f ms, %zu bytes\n", name, *ms, cubin->len);
    jg__buf_free(&src);
    jg__buf_free(&log);
    return st;
}

/* Whether some HGMMA takes its A operand from registers: "HGMMA.<shape>.F32
 * Rd, Ra, gdesc[...]" (from shared memory: "Rd, gdesc[...], ..."). */
static bool has_register_a_hgmma(const char *sass)
{
    for (const char *p = sass; (p = strstr(p, "HGMMA.")) != NULL; ++p) {
        const char *sp = strchr(p, ' ');
        int d, a, n = 0;
        if (sp && sscanf(sp, " R%d, R%d, gdesc%n", &d, &a, &n) == 2 && n > 0)
            return true;
    }
    return false;
}

/* sm90_nvfp4_pre.cu: the module holds the GEMM and its pre-pass (name +
 * JG_PRE_DQ_SUFFIX), and the GEMM one wgmma variant per distinct chunk
 * width (wgmma's N: the height rounded up to 8, or more past
 * JG_PRE_MAX_WIDTHS heights), no other. */
static void check_pre_sass(const char *name, const jg__gemm_key *key, const char *sass)
{
    char fn[192];
    snprintf(fn, sizeof fn, "Function : %s\n", name);
    CHECK(sass && strstr(sass, fn), "%s: no GEMM function in the module", name);
    snprintf(fn, sizeof fn, "Function : %s" JG_PRE_DQ_SUFFIX "\n", name);
    CHECK(sass && strstr(sass, fn), "%s: no pre-pass %s" JG_PRE_DQ_SUFFIX " in the module", name,
          name);
    jg__pre_chunk chunks[JG_PRE_MAX_CHUNKS];
    const uint32_t n = jg__pre_chunks(key->group_m, key->groups, key->cfg.pre_rows, chunks,
                                      JG_PRE_MAX_CHUNKS);
    bool wanted[JG_PRE_CHUNK_MAX / 8 + 1] = {false};
    uint32_t widths = 0;
    for (uint32_t c = 0; c < n && c < JG_PRE_MAX_CHUNKS; ++c) {
        const uint32_t width = chunks[c].width;
        char shape[48];
        snprintf(shape, sizeof shape, "HGMMA.64x%ux16.", width);
        CHECK(sass && strstr(sass, shape), "%s: chunk %u (%u rows) has no %s", name, c,
              chunks[c].rows, shape);
        widths += !wanted[width / 8];
        wanted[width / 8] = true;
    }
    CHECK(widths <= JG_PRE_MAX_WIDTHS, "%s: %u wgmma widths", name, widths);
    for (const char *p = sass; p && (p = strstr(p, "HGMMA.64x")) != NULL; ++p) {
        const unsigned width = (unsigned)atoi(p + 9);
        const bool ok = width % 8 == 0 && width / 8 < JG_ARRAY_LEN(wanted) && wanted[width / 8];
        CHECK(ok, "%s: HGMMA.64x%u, a width no chunk has", name, width);
        if (!ok)
            break;
    }
}

/* FP32 operands run TF32 wgmmas (HGMMA.64xNx8.F32.TF32), the exact mode's
 * module also its split; MN-major operands' wgmmas transpose them
 * (.tnspA, .tnspB), K-major ones' none; soft loads are cp.async (LDGSTS)
 * and their warps shift words (SHF funnel shifts after LDS), soft stores
 * of D plain global stores (STG). */
static void check_forms(const char *name, const jg__gemm_key *key, const char *sass)
{
    if (!sass || key->kind > 2 || key->cfg.swap || key->cfg.pre)
        return;
    if (key->a_type == JG_FP32)
        CHECK(strstr(sass, "x8.F32.TF32"), "%s: no TF32 wgmma (HGMMA.64xNx8.F32.TF32)", name);
    if (key->flags & JG_GEMM_FP32_EXACT) {
        char fn[192];
        snprintf(fn, sizeof fn, "Function : %s" JG_SPLIT_SUFFIX "\n", name);
        CHECK(strstr(sass, fn), "%s: no split kernel %s" JG_SPLIT_SUFFIX, name, name);
        /* promoted sums: each stage of an unrolled chunk adds every
         * accumulator of the thread into its FP32 total (FADD, rounded to
         * nearest); one accumulator over K had a single FADD */
        const uint64_t kp = (uint64_t)jg__exact_kp(key->k);
        const uint64_t split = key->cfg.split_k > 1 ? key->cfg.split_k : 1;
        const uint64_t tiles = jg__ceil_div(jg__ceil_div(3 * kp, key->cfg.block_k), split);
        const uint64_t chunk = key->cfg.promote_chunk < tiles ? key->cfg.promote_chunk : tiles;
        const uint64_t regs = key->cfg.block_m / key->cfg.consumers / 64 * key->cfg.block_n / 2;
        CHECK((uint64_t)count_of(sass, "FADD") >= chunk * regs,
              "%s: %d FADDs, want at least %llu (a chunk of %llu stages' promotions)", name,
              count_of(sass, "FADD"), (unsigned long long)(chunk * regs),
              (unsigned long long)chunk);
    }
    const bool swap = key->cfg.swap_ab;
    const bool a_mn = key->flags & (swap ? JG_GEMM_B_N_MAJOR : JG_GEMM_A_M_MAJOR);
    const bool b_mn = key->flags & (swap ? JG_GEMM_A_M_MAJOR : JG_GEMM_B_N_MAJOR);
    CHECK(a_mn == (strstr(sass, "tnspA") != NULL), "%s: A %s, tnspA %s", name,
          a_mn ? "MN-major" : "K-major", strstr(sass, "tnspA") ? "present" : "absent");
    CHECK(b_mn == (strstr(sass, "tnspB") != NULL), "%s: B %s, tnspB %s", name,
          b_mn ? "MN-major" : "K-major", strstr(sass, "tnspB") ? "present" : "absent");
    if (key->cfg.soft & (JG_SOFT_A | JG_SOFT_B))
        CHECK(strstr(sass, "LDGSTS") && strstr(sass, "LDGDEPBAR") &&
                  (key->a_type == JG_FP32 || strstr(sass, "SHF.R.W")),
              "%s: soft loads without cp.async (LDGSTS), its groups or the words' shifts", name);
    else
        CHECK(!strstr(sass, "LDGSTS") || key->scale == JG_SCALE_ROW ||
                  key->scale == JG_SCALE_BLOCK,
              "%s: cp.async in a kernel without soft loads or staged scales", name);
}

/* The loops over active lanes (BRA.U.ANY) whose uniform instruction is a
 * TMA load (UTMALDG: the last UTMA* before the branch, a few instructions
 * back). */
static int waterfall_loads(const char *sass)
{
    int n = 0;
    const char *u = strstr(sass, "UTMA"), *last = NULL;
    for (const char *br = strstr(sass, "BRA.U.ANY"); br; br = strstr(br + 9, "BRA.U.ANY")) {
        for (; u && u < br; u = strstr(u + 4, "UTMA"))
            last = u;
        n += last && br - last < 2000 && strncmp(last, "UTMALDG", 7) == 0;
    }
    return n;
}

static void check_sass(const char *cuobjdump, const jg__gemm_key *key, const jg__buf *cubin)
{
    char name[128];
    jg__gemm_kernel_name(key, "sm_90a", name);
    char *sass = check_no_local(cuobjdump, name, cubin);
    const char *mma = key->a_type == JG_E4M3 ? "QGMMA" : "HGMMA";
    CHECK(sass && strstr(sass, mma), "%s: no %s in SASS", name, mma);
    check_forms(name, key, sass);
    /* Clusters multicast B, except NVFP4 swap-AB's, which split K: the
     * peer's sums arrive through distributed shared memory (a remote
     * mbarrier arrive), and no CTA leaves before its peer (cluster barrier). */
    if (key->cfg.swap)
        CHECK(key->cfg.cluster < 2 || (sass && strstr(sass, "SYNCS.ARRIVE.TRANS64.RED") &&
                                       strstr(sass, "UCGABAR_WAIT")),
              "%s: a K split without remote arrives or cluster barrier", name);
    else if (key->cfg.split_k > 1) /* dense split-K: partials through distributed shared memory */
        CHECK(sass && strstr(sass, "UCGABAR_WAIT") && !strstr(sass, "UTMALDG.2D.MULTICAST") &&
                  (strstr(sass, "LD.E.128") || strstr(sass, "LDS.128") ||
                   strstr(sass, "LD.128")),
              "%s: a K split without cluster barriers or wide distributed loads", name);
    else {
        CHECK(key->cfg.cluster < 2 || (sass && strstr(sass, "UTMALDG.2D.MULTICAST")),
              "%s: a cluster of %u without multicast loads", name, key->cfg.cluster);
        /* The stage releases to the peer CTA carry no GPU-scope fence: only
         * the cluster barriers at the start and the end have one. With a
         * release.cluster arrive per stage (a MEMBAR.ALL.GPU each) clusters
         * ran at half speed (H100, 2026-11-22). */
        CHECK(key->cfg.cluster < 2 || (sass && count_of(sass, "MEMBAR.ALL.GPU") <= 2),
              "%s: %d GPU-scope fences (a cluster-scope release per stage?)", name,
              sass ? count_of(sass, "MEMBAR.ALL.GPU") : -1);
    }
    /* Dense and grouped TMA producers issue from one elected lane of a
     * converged warp: from one divergent thread ptxas wraps each TMA load
     * in a loop over the active lanes (ELECT ... BRA.U.ANY), and narrow
     * decode tiles then issued stages slower than they arrived (H200,
     * bench/results/2026-11-29-h200-elect-producer). NVFP4's workspace
     * kernels (cfg.pre) still issue from one thread; epilogues' TMA stores
     * may still loop. */
    if (!key->cfg.pre && !(key->cfg.soft & (JG_SOFT_A | JG_SOFT_B)))
        CHECK(sass && waterfall_loads(sass) == 0,
              "%s: %d TMA loads in loops over the active lanes (BRA.U.ANY): issued from a "
              "divergent thread?",
              name, sass ? waterfall_loads(sass) : -1);
    if (key->cfg.pre)
        check_pre_sass(name, key, sass);
    /* NVFP4, both kernels: A's fragments come from registers (HGMMA's A
     * operand a register, not a descriptor: swap-AB's weight, the expanding
     * kernel's A rows), and each group stays in flight while the next
     * fragments are made. */
    CHECK(key->a_type != JG_NVFP4 || (sass && strstr(sass, "WARPGROUP.DEPBAR.LE gsb0, 0x1") &&
                                      has_register_a_hgmma(sass)),
          "%s: NVFP4 wgmmas not register-A, or not asynchronous", name);
    /* Pipelined FP8 promotion: a stage's wgmmas stay in flight while the
     * previous stage is promoted (ptxas serializes them, waiting for each
     * to finish, when it cannot prove the two sets of sums apart). */
    const bool pipelined = key->cfg.promote_chunk > 1 && key->k > (int64_t)key->cfg.block_k;
    CHECK(!pipelined || (sass && strstr(sass, "WARPGROUP.DEPBAR.LE gsb0, 0x1")),
          "%s: promotions not overlapped with the next stage's wgmmas", name);
    free(sass);
}

/* The NVFP4 quantization kernels, both sources and scale layouts, ragged
 * and whole tiles of scales: compiled for sm_90a, no local memory; the
 * e4m3 conversion of the block scales is the hardware's (F2FP). */
static void check_quant_nvfp4(const char *cuobjdump)
{
    static const int64_t cols[] = {16, 4096, 7184};
    for (int src = JG_BF16; src <= JG_FP16; ++src)
        for (int layout = JG_SF_ROW_MAJOR; layout <= JG_SF_SWIZZLED_128X4; ++layout)
            for (size_t i = 0; i < JG_ARRAY_LEN(cols); ++i) {
                jg_quant_problem q = {(jg_dtype)src, JG_SCALE_NVFP4, 0, 1, cols[i], 0, 0,
                                      (jg_sf_layout)layout};
                jg__gemm_key key;
                jg__quant_nvfp4_key_make(&q, &key);
                char name[128];
                jg__gemm_kernel_name(&key, "sm_90a", name);
                jg__buf cubin = {0};
                double ms;
                if (compile_key(&key, &cubin, &ms) == JG_OK) {
                    char *sass = check_no_local(cuobjdump, name, &cubin);
                    CHECK(sass && strstr(sass, "F2FP"), "%s: no F2FP (e4m3 conversion)", name);
                    free(sass);
                }
                jg__buf_free(&cubin);
            }
}

/* The distinct configurations the planner chooses over a grid of shapes,
 * with clusters of 2 or 4 forced where they apply (JITGEMM_CLUSTER) and not. */
static size_t planner_configs(jg__gemm_config *out, size_t cap)
{
    static const int64_t ms[] = {1, 16, 64, 128, 200, 1000, 4096, 8192};
    static const int64_t ns[] = {8, 64, 128, 200, 1024, 4096, 7168, 16384};
    jg__target t;
    jg_test_h100_target(&t);
    /* the plain tiles, which compile for any problem of their kind: the
     * measured table's families are compiled for their own problems
     * (check_table, check_families) */
    t.force_swap = t.force_split = 1;
    jg__log quiet = {0};
    size_t n = 0;
    for (t.force_cluster = 0; t.force_cluster <= 4; t.force_cluster += 2)
    for (size_t i = 0; i < JG_ARRAY_LEN(ms); ++i)
        for (size_t j = 0; j < JG_ARRAY_LEN(ns); ++j) {
            jg_gemm_problem p = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                                 .m = ms[i], .n = ns[j], .k = 4096};
            jg__problem_key pk;
            jg__problem_key_make(&p, &pk);
            jg__gemm_config c;
            CHECK(jg__plan_gemm_sm90(&t, &pk, &quiet, &c) == JG_OK, "planning %lldx%lld",
                  (long long)ms[i], (long long)ns[j]);
            bool seen = false;
            for (size_t q = 0; q < n; ++q)
                seen |= !memcmp(&out[q], &c, sizeof c);
            if (!seen && n < cap)
                out[n++] = c;
        }
    return n;
}

/* Plans, compiles and checks the SASS of one problem's kernel; returns
 * the planner's configuration. */
static jg__gemm_config check_planned(const char *cuobjdump, const jg__target *t,
                                     const jg__problem_key *pk)
{
    jg__gemm_config cfg;
    memset(&cfg, 0, sizeof cfg);
    jg__log quiet = {0};
    CHECK(jg__plan_gemm_sm90(t, pk, &quiet, &cfg) == JG_OK, "planning %lldx%lldx%lld",
          (long long)pk->m, (long long)pk->n, (long long)pk->k);
    jg__gemm_key key;
    jg__gemm_key_make(pk, &cfg, &key);
    jg__buf cubin = {0};
    double ms;
    if (compile_key(&key, &cubin, &ms) == JG_OK)
        check_sass(cuobjdump, &key, &cubin);
    jg__buf_free(&cubin);
    return cfg;
}

/* Clusters stacked along N (JITGEMM_N_STACK, sharing A), 1x2, 1x4 and
 * 2x2: BF16, FP16 and FP8 (tensor scales with BF16 out; row scales with
 * FP32 out plus C, the most live registers), decode rows (A's box shorter
 * than the tile, shared in 8-row atoms) and prefill rows, N ragged
 * against the tiles: the planned kernel stacks as forced, and its SASS
 * multicasts without local memory. */
static void check_n_stack(const char *cuobjdump)
{
    static const struct {
        jg_dtype ab;
        jg_scale_mode scale;
        int64_t m, n, k;
    } rows[] = {
        {JG_BF16, JG_SCALE_NONE, 75, 1408, 14336},    {JG_FP16, JG_SCALE_NONE, 1000, 1000, 1000},
        {JG_BF16, JG_SCALE_NONE, 2048, 4104, 4096},   {JG_E4M3, JG_SCALE_TENSOR, 98, 1536, 24048},
        {JG_E4M3, JG_SCALE_TENSOR, 4096, 8192, 4784}, {JG_E4M3, JG_SCALE_ROW, 770, 1416, 7168},
    };
    static const uint32_t forced[][2] = {{2, 0}, {4, 0}, {2, 4}}; /* N stack, cluster */
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i)
        for (size_t f = 0; f < JG_ARRAY_LEN(forced); ++f)
            for (int heavy = 0; heavy < 2; ++heavy) {
                const bool fp8 = rows[i].ab == JG_E4M3;
                const bool row_scales = rows[i].scale == JG_SCALE_ROW;
                /* FP8 tensor scales: BF16 out alone (the leanest kernel's
                 * 144-wide tiles); else FP32 out plus C as the heavy form */
                if (heavy && fp8 && !row_scales)
                    continue;
                jg_gemm_problem p = {.a_type = rows[i].ab,
                                     .b_type = rows[i].ab,
                                     .c_type = heavy ? JG_FP32 : JG_DTYPE_NONE,
                                     .d_type = heavy ? JG_FP32
                                               : fp8 ? JG_BF16
                                                     : rows[i].ab,
                                     .m = rows[i].m,
                                     .n = rows[i].n,
                                     .k = rows[i].k,
                                     .scale = rows[i].scale};
                jg__target t;
                jg_test_h100_target(&t);
                t.force_n_stack = forced[f][0];
                t.force_cluster = forced[f][1];
                jg__problem_key pk;
                jg__problem_key_make(&p, &pk);
                const jg__gemm_config c = check_planned(cuobjdump, &t, &pk);
                const uint32_t m_stack = forced[f][1] ? forced[f][1] / forced[f][0] : 1;
                /* 2x2 needs two tiles of rows: decode rows keep one CTA */
                const bool stacks = m_stack == 1 || rows[i].m > 128;
                CHECK(!stacks ||
                          (c.n_stack == forced[f][0] && c.cluster == forced[f][0] * m_stack &&
                           c.a_box_m % (8 * forced[f][0]) == 0),
                      "%lldx%lldx%lld, JITGEMM_N_STACK=%u JITGEMM_CLUSTER=%u: cluster %u, "
                      "n_stack %u, A box %u",
                      (long long)p.m, (long long)p.n, (long long)p.k, forced[f][0], forced[f][1],
                      c.cluster, c.n_stack, c.a_box_m);
            }
}

static jg__gemm_config check_grouped(const char *cuobjdump, const jg__target *t,
                                     const jg_grouped_problem *gp)
{
    jg__problem_key pk;
    jg__grouped_key_make(gp, &pk);
    return check_planned(cuobjdump, t, &pk);
}

/* NVFP4 in the list layout with a workspace (sm90_nvfp4_pre.cu): the
 * seeds' first case; a group past 256 rows (cut in two), one empty, FP32
 * out plus C; a group cut in three beside one of 8 rows, a partial weight
 * tile (n 136) and K short of 64 (96); the most groups, 1 to 40 rows each
 * (five wgmma widths), row-major scales; 20 heights, run at
 * JG_PRE_MAX_WIDTHS widths. */
static void check_nvfp4_pre(const char *cuobjdump)
{
    static const int64_t seed1[8] = {80, 176, 128, 72, 64, 248, 96, 160};
    static const int64_t ragged[3] = {300, 17, 0}, tall[2] = {520, 8};
    static int64_t ramp[JG_GROUPED_MAX_NVFP4_GROUPS], steps[20];
    for (int g = 0; g < JG_GROUPED_MAX_NVFP4_GROUPS; ++g)
        ramp[g] = g + 1;
    for (int g = 0; g < 20; ++g)
        steps[g] = 12 * g + 5;
    const struct {
        const int64_t *m;
        int32_t groups;
        int64_t n, k;
        jg_dtype c, d;
        jg_sf_layout sf;
    } cases[] = {
        {seed1, 8, 4096, 7168, JG_DTYPE_NONE, JG_BF16, JG_SF_SWIZZLED_128X4},
        {ragged, 3, 1000, 1056, JG_FP32, JG_FP32, JG_SF_SWIZZLED_128X4},
        {tall, 2, 136, 96, JG_DTYPE_NONE, JG_FP16, JG_SF_SWIZZLED_128X4},
        {ramp, JG_GROUPED_MAX_NVFP4_GROUPS, 256, 512, JG_BF16, JG_BF16, JG_SF_ROW_MAJOR},
        {steps, 20, 512, 256, JG_DTYPE_NONE, JG_BF16, JG_SF_SWIZZLED_128X4},
    };
    jg__target t;
    jg_test_h100_target(&t);
    for (size_t i = 0; i < JG_ARRAY_LEN(cases); ++i) {
        jg_grouped_problem gp = {.flags = JG_GROUPED_WORKSPACE, .layout = JG_GROUPED_LIST,
                                 .a_type = JG_NVFP4, .b_type = JG_NVFP4, .c_type = cases[i].c,
                                 .d_type = cases[i].d, .groups = cases[i].groups,
                                 .m = cases[i].m, .n = cases[i].n, .k = cases[i].k,
                                 .scale = JG_SCALE_NVFP4, .a_sf_layout = cases[i].sf,
                                 .b_sf_layout = cases[i].sf};
        const jg__gemm_config cfg = check_grouped(cuobjdump, &t, &gp);
        CHECK(cfg.pre != 0, "nvfp4 pre case %zu (%d groups, n %lld, k %lld): not the pre kernel",
              i, cases[i].groups, (long long)cases[i].n, (long long)cases[i].k);
    }
}

/* NVFP4: the planner's tile over a grid of shapes (decode to large M),
 * output types and scale layouts in turn; then every tile of its table
 * with FP32 out plus C (the most live registers), and a K whose last stage
 * is partial (swizzled scales only: row-major ones need k % 256). */
static void check_nvfp4(const char *cuobjdump)
{
    static const int64_t ms[] = {1, 16, 32, 64, 128, 300}, ns[] = {7168, 4096},
                         ks[] = {16384, 7168, 2048};
    static const jg_sf_layout layouts[3][2] = {{JG_SF_ROW_MAJOR, JG_SF_ROW_MAJOR},
                                               {JG_SF_SWIZZLED_128X4, JG_SF_SWIZZLED_128X4},
                                               {JG_SF_ROW_MAJOR, JG_SF_SWIZZLED_128X4}};
    static const jg_dtype outs[] = {JG_BF16, JG_FP16, JG_FP32};
    jg__target t;
    jg_test_h100_target(&t);
    int turn = 0;
    for (size_t i = 0; i < JG_ARRAY_LEN(ms); ++i)
        for (size_t j = 0; j < JG_ARRAY_LEN(ns); ++j)
            for (size_t l = 0; l < JG_ARRAY_LEN(ks); ++l, ++turn) {
                jg_gemm_problem p = {.a_type = JG_NVFP4, .b_type = JG_NVFP4,
                                     .d_type = outs[turn % 3], .m = ms[i], .n = ns[j],
                                     .k = ks[l], .scale = JG_SCALE_NVFP4,
                                     .a_sf_layout = layouts[turn % 3][0],
                                     .b_sf_layout = layouts[turn % 3][1]};
                jg__problem_key pk;
                jg__problem_key_make(&p, &pk);
                check_planned(cuobjdump, &t, &pk);
            }
    jg_gemm_problem p = {.a_type = JG_NVFP4, .b_type = JG_NVFP4, .c_type = JG_FP32,
                         .d_type = JG_FP32, .m = 300, .n = 1000, .k = 1056,
                         .scale = JG_SCALE_NVFP4, .a_sf_layout = JG_SF_SWIZZLED_128X4,
                         .b_sf_layout = JG_SF_SWIZZLED_128X4};
    jg__problem_key pk;
    jg__problem_key_make(&p, &pk);
    jg__gemm_config cfgs[8];
    const size_t n = jg__plan_candidates_sm90(&t, &pk, cfgs, JG_ARRAY_LEN(cfgs));
    CHECK(n == 4, "nvfp4: %zu candidate tiles, expected the table's 4", n);
    for (size_t i = 0; i < n; ++i) {
        jg__gemm_key key;
        jg__gemm_key_make(&pk, &cfgs[i], &key);
        jg__buf cubin = {0};
        double ms_;
        if (compile_key(&key, &cubin, &ms_) == JG_OK)
            check_sass(cuobjdump, &key, &cubin);
        jg__buf_free(&cubin);
    }
}

/* Counts the info messages of each category the context logs. */
typedef struct plan_log {
    int plan, compile;
} plan_log;

static void count_log(void *user, jg_log_level level, const char *category, const char *msg)
{
    plan_log *l = user;
    (void)level;
    (void)msg;
    l->plan += !strcmp(category, "plan");
    l->compile += !strcmp(category, "compile");
}

static char *read_file(const char *path, size_t *len)
{
    jg__buf b = {0};
    if (!jg__buf_read_file(&b, path)) {
        jg__buf_free(&b);
        return NULL;
    }
    *len = b.len;
    return b.data;
}

/* JITGEMM_DUMP writes the kernel's source, PTX and cubin under its name. */
static void check_dump(const char *dir, const char *name)
{
    char path[512];
    size_t len = 0;
    snprintf(path, sizeof path, "%s/%s.cu", dir, name);
    char *src = read_file(path, &len);
    CHECK(src && strstr(src, name) && strstr(src, "#define JG_KERNEL_NAME"), "%s", path);
    free(src);
    snprintf(path, sizeof path, "%s/%s.ptx", dir, name);
    char *ptx = read_file(path, &len);
    CHECK(ptx && strstr(ptx, ".entry") && strstr(ptx, name) && len && ptx[len - 1] != 0,
          "%s: PTX with the entry, no trailing NUL", path);
    free(ptx);
    snprintf(path, sizeof path, "%s/%s.cubin", dir, name);
    char *cubin = read_file(path, &len);
    CHECK(cubin && len > 4 && !memcmp(cubin, "\x7f" "ELF", 4), "%s: an ELF cubin", path);
    free(cubin);
}

/* One kernel through the public path of an offline context, with
 * JITGEMM_DUMP set and the plan and compile logs captured. */
static void test_public_path_with_dump(void)
{
    char dir[] = "/tmp/jg_dump_XXXXXX";
    CHECK(mkdtemp(dir) != NULL, "mkdtemp");
    setenv("JITGEMM_DUMP", dir, 1);
    plan_log logged = {0};
    jg_options o = {.flags = JG_CONTEXT_OFFLINE, .arch = "sm_90a", .cache_mode = JG_CACHE_OFF,
                    .log = count_log, .log_user = &logged,
                    .log_mask = JG_LOGC_PLAN | JG_LOGC_COMPILE};
    jg_context *ctx = NULL;
    CHECK(jg_context_create(&o, &ctx) == JG_OK, "offline context: %s", jg_context_last_error(NULL));
    unsetenv("JITGEMM_DUMP");
    jg_gemm_problem p = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                         .m = 4096, .n = 4096, .k = 4096};
    jg_plan *plan = NULL;
    CHECK(ctx && jg_gemm_plan(ctx, &p, &plan) == JG_OK, "plan: %s", jg_context_last_error(ctx));
    jg_plan_info info;
    if (plan && jg_plan_get_info(plan, &info) == JG_OK) {
        CHECK(info.origin == JG_ORIGIN_COMPILED, "origin %d", (int)info.origin);
        CHECK(!strncmp(info.kernel_name, "jg_gemm_bf16_bf16_sm90a_", 24), "name %s",
              info.kernel_name);
        check_dump(dir, info.kernel_name);
    }
    CHECK(logged.plan >= 1 && logged.compile >= 1, "plan %d and compile %d log lines",
          logged.plan, logged.compile);
    jg_context_stats stats;
    CHECK(ctx && jg_context_get_stats(ctx, &stats) == JG_OK && stats.plans_compiled == 1,
          "one compile expected");
    if (ctx && plan)
        printf("nvrtc: compiled %s in %.0f ms\n", info.kernel_name, stats.compile_ms);
    jg_context_destroy(ctx);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    CHECK(system(cmd) == 0, "removing %s", dir);
}

/* A source NVRTC rejects: JG_ERR_COMPILE with the compiler's log. */
static void test_compile_error(void)
{
    static const char bad[] = "extern \"C\" __global__ void broken() { undeclared_name(); }";
    jg__buf cubin = {0}, log = {0};
    jg_status st = jg__nvrtc_compile(bad, sizeof bad - 1, "broken", "sm_90a", &cubin, NULL, &log);
    CHECK(st == JG_ERR_COMPILE, "status %s", jg_status_name(st));
    CHECK(log.data && strstr(log.data, "undeclared_name") && strstr(log.data, "error"),
          "the log names the error: %s", log.data ? log.data : "(none)");
    CHECK(cubin.len == 0, "no cubin from a failed compile");
    jg__buf_free(&cubin);
    jg__buf_free(&log);
}

/* The next instruction of cuobjdump's SASS from *p (a line "/ *0a30* /
 * FFMA R1, R2, R3, R1 ;  / *0x...* /", without the spaces in the comment
 * marks): its text up to the ';', into out. */
static bool next_insn(const char **p, char *out, size_t cap)
{
    const char *s;
    while ((s = strstr(*p, "*/ ")) != NULL) {
        const char *line = s;
        while (line > *p && line[-1] != '\n')
            --line;
        const char *end = strchr(s, ';');
        const char *nl = strchr(s, '\n');
        *p = nl ? nl + 1 : s + strlen(s);
        /* an instruction: its address comment starts the line, ';' ends it */
        while (*line == ' ')
            ++line;
        if (line[0] != '/' || line[1] != '*' || !end || (nl && end > nl))
            continue;
        s += 3;
        while (*s == ' ')
            ++s;
        snprintf(out, cap, "%.*s", (int)(end - s), s);
        return true;
    }
    return false;
}

/* The reuse edit (sass_patch.c) read back by cuobjdump: an FP8 block-scale
 * kernel compiled without and with it disassembles to the same
 * instructions, but for ".reuse" on operand b (the scale) of more FFMAs
 * than ptxas marked, and nothing else. */
static void check_ffma_reuse(const char *cuobjdump)
{
    jg_gemm_problem p = {.a_type = JG_E4M3, .b_type = JG_E4M3, .d_type = JG_BF16, .m = 4096,
                         .n = 7168, .k = 16384, .scale = JG_SCALE_BLOCK};
    jg__target t;
    jg_test_h100_target(&t);
    jg__problem_key pk;
    jg__problem_key_make(&p, &pk);
    jg__gemm_config cfg;
    jg__log quiet = {0};
    CHECK(jg__plan_gemm_sm90(&t, &pk, &quiet, &cfg) == JG_OK, "planning the block-scale GEMM");
    CHECK(cfg.ffma_reuse == 1, "the planner does not ask for the reuse edit on block scales");
    char *sass[2] = {NULL, NULL};
    for (int e = 0; e < 2; ++e) {
        cfg.ffma_reuse = (uint32_t)e;
        jg__gemm_key key;
        jg__gemm_key_make(&pk, &cfg, &key);
        jg__buf cubin = {0};
        double ms;
        if (compile_key(&key, &cubin, &ms) == JG_OK)
            sass[e] = disassemble(cuobjdump, "-sass", &cubin);
        jg__buf_free(&cubin);
    }
    CHECK(sass[0] && sass[1], "no SASS to compare");
    if (!sass[0] || !sass[1])
        goto out;
    const char *p0 = sass[0], *p1 = sass[1];
    char a[256], b[256];
    int insns = 0, added = 0, other = 0, ffma_reuse = 0;
    while (next_insn(&p0, a, sizeof a)) {
        if (!next_insn(&p1, b, sizeof b)) {
            ++other;
            break;
        }
        ++insns;
        if (!strcmp(a, b)) {
            ffma_reuse += !strncmp(a, "FFMA ", 5) && strstr(a, ".reuse") != NULL;
            continue;
        }
        /* b must be a with ".reuse" after its third register */
        char want[300];
        int r[4], n = 0;
        if (!strncmp(a, "FFMA R", 6) && !strstr(a, ".reuse") &&
            sscanf(a, "FFMA R%d, R%d, R%d, R%d%n", &r[0], &r[1], &r[2], &r[3], &n) == 4) {
            snprintf(want, sizeof want, "FFMA R%d, R%d, R%d.reuse, R%d%s", r[0], r[1], r[2], r[3],
                     a + n);
            if (!strcmp(b, want)) {
                ++added;
                continue;
            }
        }
        if (++other <= 3)
            printf("  differs: '%s' / '%s'\n", a, b);
    }
    if (next_insn(&p1, b, sizeof b))
        ++other;
    printf("ffma reuse edit: %d instructions, %d FFMAs marked by ptxas, %d more by the edit, "
           "%d other differences\n",
           insns, ffma_reuse, added, other);
    CHECK(insns > 1000 && other == 0, "the edit changed %d instructions besides FFMA reuse flags",
          other);
    /* 128x128 tiles: 64 FFMAs per promotion, about half marked by ptxas */
    CHECK(added >= 64, "the edit marked %d FFMAs (expected at least 64)", added);
out:
    free(sass[0]);
    free(sass[1]);
}

/* Dense swap-AB and split-K, as JITGEMM_SWAP / JITGEMM_SPLIT force them
 * (the measured table chooses them per cell): decode and middle M over
 * three N x K shapes, 16-bit and FP8 operands in every scale mode that
 * takes the family, D of 16 bits without C and of 32 bits with C. */
static void check_families(const char *cuobjdump)
{
    static const int64_t ms[] = {1, 139, 330}, nk[][2] = {{1024, 14336}, {7168, 2048}};
    static const struct {
        uint32_t swap, split;
    } fams[] = {{2, 1}, {1, JG_SPLIT_ANY}, {2, JG_SPLIT_ANY}};
    static const struct {
        jg_dtype ab, d, c;
        jg_scale_mode scale;
    } types[] = {{JG_BF16, JG_BF16, JG_DTYPE_NONE, JG_SCALE_NONE},
                 {JG_FP16, JG_FP32, JG_FP32, JG_SCALE_NONE},
                 {JG_E4M3, JG_BF16, JG_DTYPE_NONE, JG_SCALE_TENSOR},
                 {JG_E4M3, JG_FP32, JG_FP32, JG_SCALE_ROW},
                 {JG_E4M3, JG_BF16, JG_DTYPE_NONE, JG_SCALE_BLOCK}};
    jg__target t;
    jg_test_h100_target(&t);
    int swapped = 0, split = 0;
    for (size_t f = 0; f < JG_ARRAY_LEN(fams); ++f)
        for (size_t y = 0; y < JG_ARRAY_LEN(types); ++y) {
            if (types[y].scale == JG_SCALE_BLOCK && fams[f].swap == 2)
                continue; /* no swap-AB with block scales */
            /* one shape of each per family and type, in turn */
            const size_t i = (f + y) % JG_ARRAY_LEN(ms), j = (f + y) % JG_ARRAY_LEN(nk);
            t.force_swap = fams[f].swap;
            t.force_split = fams[f].split;
            jg_gemm_problem p = {.a_type = types[y].ab, .b_type = types[y].ab,
                                 .c_type = types[y].c, .d_type = types[y].d, .m = ms[i],
                                 .n = nk[j][0], .k = nk[j][1], .scale = types[y].scale};
            jg__problem_key pk;
            jg__problem_key_make(&p, &pk);
            const jg__gemm_config c = check_planned(cuobjdump, &t, &pk);
            swapped += c.swap_ab != 0;
            split += c.split_k > 1;
        }
    CHECK(swapped >= 4 && split >= 4, "forced families: %d swap-AB and %d split-K plans", swapped,
          split);
    /* 256-row tiles (JITGEMM_TILE=256), 16-bit: fp32 out with C (the most
     * live registers next to two slabs of sums), and bf16 */
    t.force_swap = t.force_split = 0;
    t.force_m = 256;
    for (int y = 0; y < 2; ++y) {
        jg_gemm_problem p = {.a_type = JG_BF16, .b_type = JG_BF16,
                             .c_type = y ? JG_DTYPE_NONE : JG_FP32,
                             .d_type = y ? JG_BF16 : JG_FP32, .m = 936 + 3000 * y,
                             .n = 11008, .k = 1536};
        jg__problem_key pk;
        jg__problem_key_make(&p, &pk);
        const jg__gemm_config c = check_planned(cuobjdump, &t, &pk);
        CHECK(c.block_m == 256, "JITGEMM_TILE=256: a %u-row tile", c.block_m);
    }
    /* Ping-pong (JITGEMM_PINGPONG=1): 16-bit with fp32 out and C (two slabs
     * of sums a consumer), FP8 with row scales and with block scales */
    t.force_m = 0;
    t.force_pingpong = 1;
    for (int y = 0; y < 3; ++y) {
        jg_gemm_problem p = {.a_type = y ? JG_E4M3 : JG_BF16, .b_type = y ? JG_E4M3 : JG_BF16,
                             .c_type = y < 2 ? JG_FP32 : JG_DTYPE_NONE,
                             .d_type = y < 2 ? JG_FP32 : JG_BF16, .m = 4096, .n = 11008,
                             .k = 2048,
                             .scale = y == 0 ? JG_SCALE_NONE : y == 1 ? JG_SCALE_ROW : JG_SCALE_BLOCK};
        jg__problem_key pk;
        jg__problem_key_make(&p, &pk);
        const jg__gemm_config c = check_planned(cuobjdump, &t, &pk);
        CHECK(c.pingpong == 1, "JITGEMM_PINGPONG=1: not a ping-pong plan");
    }
    /* Split-K through the workspace (JITGEMM_SPLIT_WS), plain and swap-AB
     * tiles of the widest it takes (176; 128 with C or FP32 D: the last
     * unit adds the other units' sums into its own), 16-bit and FP8 (the
     * FP8 tiles of tensor scales at 144, the widest of the planner's FP8
     * tiles but 192 and 256) */
    t.force_pingpong = 0;
    /* ... and stream-K (JITGEMM_STREAM_K, 16-bit operands) at the same
     * widest tiles: the run's sums carried from unit to unit */
    int split_ws = 0, stream_k = 0;
    for (int sk = 0; sk < 2; ++sk)
        for (size_t y = 0; y < (sk ? 2u : 4u); ++y)
            for (uint32_t swap = 1; swap <= 2; ++swap) {
                const bool wide = types[y].c == JG_DTYPE_NONE && types[y].d != JG_FP32;
                t.force_swap = swap;
                *(sk ? &t.force_stream_k : &t.force_split_ws) = 3 + swap;
                t.force_n = !wide ? 128 : types[y].ab == JG_E4M3 ? 144 : 176;
                jg_gemm_problem p = {.a_type = types[y].ab,
                                     .b_type = types[y].ab,
                                     .c_type = types[y].c,
                                     .d_type = types[y].d,
                                     .m = 330,
                                     .n = 7168,
                                     .k = 14336,
                                     .scale = types[y].scale};
                jg__problem_key pk;
                jg__problem_key_make(&p, &pk);
                const jg__gemm_config c = check_planned(cuobjdump, &t, &pk);
                const bool widest = c.split_ws == 3 + swap && c.block_n == t.force_n;
                split_ws += !sk && widest;
                stream_k += sk && widest && c.stream_k;
                t.force_split_ws = t.force_stream_k = 0;
            }
    t.force_swap = t.force_n = 0;
    CHECK(split_ws == 8 && stream_k == 4,
          "%d of 8 plans split through the workspace (JITGEMM_SPLIT_WS), %d of 4 stream-K "
          "(JITGEMM_STREAM_K), at the widest tile",
          split_ws, stream_k);
}

/* Every non-plain cell of the measured table, and every cell the long-K
 * rule splits: its middle problem's plan compiles without local memory. */
static void check_table(const char *cuobjdump)
{
    jg__target t;
    jg_test_h100_target(&t);
    jg__table_cell_info cell;
    size_t n = 0;
    for (size_t i = 0; jg__sm90_table_cell(i, &cell); ++i) {
        const jg_gemm_problem p = jg_test_table_problem(&cell);
        if (cell.families == JG_FAMILY_PLAIN && !jg_test_long_k(&p, t.sm_count))
            continue;
        jg__problem_key pk;
        jg__problem_key_make(&p, &pk);
        check_planned(cuobjdump, &t, &pk);
        ++n;
    }
    printf("sass: %zu non-plain or long-K table cells compiled\n", n);
}

/* Exact FP32 over bench/shapes.jsonl's dense and decode rows (M, N, K
 * here), FP32 out, then with C and M from the arguments: the
 * planner's kernels promote (check_forms), without local memory. */
static void check_exact_rows(const char *cuobjdump)
{
    static const int64_t rows[][3] = {
        {2048, 2048, 2048}, {4096, 4096, 4096}, {6144, 6144, 6144}, {8192, 8192, 8192},
        {4096, 7168, 16384}, {4096, 4096, 7168}, {4096, 7168, 2048}, {8192, 4096, 4096},
        {1, 7168, 16384}, {1, 4096, 7168}, {1, 7168, 2048}, {16, 7168, 16384},
        {16, 4096, 7168}, {16, 7168, 2048}, {64, 7168, 16384}, {64, 4096, 7168},
        {64, 7168, 2048}, {128, 7168, 16384}, {128, 4096, 7168}, {128, 7168, 2048}};
    jg__target t;
    jg_test_h100_target(&t);
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i)
        for (int form = 0; form < 2; ++form) {
            jg_gemm_problem p = {.flags = JG_GEMM_FP32_EXACT | (form ? JG_GEMM_M_GENERIC : 0),
                                 .a_type = JG_FP32, .b_type = JG_FP32,
                                 .c_type = form ? JG_FP32 : JG_DTYPE_NONE,
                                 .d_type = JG_FP32, .m = rows[i][0],
                                 .n = rows[i][1], .k = rows[i][2]};
            jg__problem_key pk;
            jg__problem_key_make(&p, &pk);
            check_planned(cuobjdump, &t, &pk);
        }
    printf("sass: exact FP32 rows compiled\n");
}

/* 0.7's problems: FP32 operands (TF32, and exact with its split), MN-major
 * 16-bit operands, and operands TMA cannot take (odd rows, the unaligned
 * flag), over decode to prefill shapes, every D type, C, and the kernel
 * families as JITGEMM_SWAP / JITGEMM_SPLIT / JITGEMM_TILE force them; then
 * the grouped layouts with soft operands and N-major B. Every kernel: no
 * local memory, its forms in the SASS (check_forms). */
static void check_any_problem(const char *cuobjdump)
{
    enum { AM = JG_GEMM_A_M_MAJOR, BN = JG_GEMM_B_N_MAJOR, UN = JG_GEMM_UNALIGNED,
           EX = JG_GEMM_FP32_EXACT, MG = JG_GEMM_M_GENERIC };
    static const struct {
        uint32_t flags;
        jg_dtype ab, c, d;
        jg_scale_mode scale;
        int64_t m, n, k, lda, ldb, ldd;
        uint32_t swap, split, force_m; /* the target's forced family, 0: the planner's */
    } cases[] = {
        /* FP32 as TF32: tiles of 32 or 64 of K */
        {0, JG_FP32, JG_DTYPE_NONE, JG_FP32, JG_SCALE_NONE, 4096, 4096, 4096, 0, 0, 0, 0, 0, 0},
        {0, JG_FP32, JG_FP32, JG_FP32, JG_SCALE_NONE, 1, 7168, 2048, 0, 0, 0, 0, 0, 0},
        {MG, JG_FP32, JG_BF16, JG_BF16, JG_SCALE_NONE, 300, 2048, 4096, 0, 0, 0, 0, 0, 0},
        {0, JG_FP32, JG_DTYPE_NONE, JG_FP16, JG_SCALE_NONE, 100, 4096, 7168, 0, 0, 0, 2, 1, 0},
        {0, JG_FP32, JG_DTYPE_NONE, JG_FP32, JG_SCALE_NONE, 200, 1024, 14336, 0, 0, 0, 1,
         JG_SPLIT_ANY, 0},
        /* exact FP32: K of 3 passes over the parts; odd K, unaligned D */
        {EX, JG_FP32, JG_DTYPE_NONE, JG_FP32, JG_SCALE_NONE, 4096, 4096, 4096, 0, 0, 0, 0, 0, 0},
        {EX | MG, JG_FP32, JG_FP32, JG_FP32, JG_SCALE_NONE, 64, 1000, 999, 0, 0, 0, 0, 0, 0},
        {EX, JG_FP32, JG_DTYPE_NONE, JG_BF16, JG_SCALE_NONE, 17, 2999, 513, 0, 0, 0, 2, 0, 0},
        /* MN-major 16-bit operands: A, B, both; the families */
        {AM, JG_BF16, JG_DTYPE_NONE, JG_BF16, JG_SCALE_NONE, 4096, 4096, 4096, 0, 0, 0, 0, 0, 0},
        {BN, JG_FP16, JG_FP32, JG_FP32, JG_SCALE_NONE, 4096, 7168, 2048, 0, 0, 0, 0, 0, 0},
        {AM | BN, JG_BF16, JG_DTYPE_NONE, JG_BF16, JG_SCALE_NONE, 1, 4096, 7168, 0, 0, 0, 0, 0, 0},
        {AM | BN, JG_BF16, JG_FP32, JG_FP32, JG_SCALE_NONE, 4096, 11008, 1536, 0, 0, 0, 0, 0, 256},
        {BN, JG_BF16, JG_DTYPE_NONE, JG_BF16, JG_SCALE_NONE, 64, 7168, 2048, 0, 0, 0, 2, 1, 0},
        {AM, JG_FP16, JG_DTYPE_NONE, JG_FP16, JG_SCALE_NONE, 128, 4096, 7168, 0, 0, 0, 2, 1, 0},
        /* split-K asked for: MN-major operands take the other families (test_plan) */
        {AM | BN, JG_BF16, JG_DTYPE_NONE, JG_BF16, JG_SCALE_NONE, 330, 1024, 14336, 0, 0, 0, 1,
         JG_SPLIT_ANY, 0},
        /* rows TMA cannot take: odd K (words), K of 4 mod 8 (8-byte pieces),
         * odd N (D's direct stores), FP8 in every scale mode, FP32 */
        {0, JG_BF16, JG_DTYPE_NONE, JG_BF16, JG_SCALE_NONE, 4097, 4099, 4103, 0, 0, 0, 0, 0, 0},
        {0, JG_FP16, JG_FP16, JG_FP16, JG_SCALE_NONE, 7, 7, 8, 0, 0, 0, 0, 0, 0},
        {0, JG_BF16, JG_FP32, JG_FP32, JG_SCALE_NONE, 3000, 3000, 2996, 0, 0, 3001, 0, 0, 0},
        {MG, JG_FP16, JG_DTYPE_NONE, JG_BF16, JG_SCALE_NONE, 1, 128257, 4097, 0, 0, 0, 0, 0, 0},
        /* swap-AB tiles in 1x2 clusters sharing the weight (swap_pairs_share_weight) */
        {0, JG_BF16, JG_DTYPE_NONE, JG_BF16, JG_SCALE_NONE, 147, 3072, 5120, 0, 0, 0, 0, 0, 0},
        {0, JG_FP16, JG_FP16, JG_FP16, JG_SCALE_NONE, 147, 3072, 5120, 0, 0, 0, 0, 0, 0},
        {0, JG_BF16, JG_FP32, JG_FP32, JG_SCALE_NONE, 646, 3584, 5760, 0, 0, 0, 0, 0, 0},
        /* M-generic at a 128-row tile's height: A in runtime boxes of 16 rows */
        {MG, JG_BF16, JG_DTYPE_NONE, JG_BF16, JG_SCALE_NONE, 128, 11072, 8192, 0, 0, 0, 0, 0, 0},
        {MG, JG_BF16, JG_FP32, JG_FP32, JG_SCALE_NONE, 128, 11072, 8192, 0, 0, 0, 0, 0, 0},
        {0, JG_E4M3, JG_DTYPE_NONE, JG_BF16, JG_SCALE_TENSOR, 4096, 4096, 4097, 0, 0, 0, 0, 0, 0},
        {0, JG_E4M3, JG_FP32, JG_FP32, JG_SCALE_ROW, 1000, 999, 7003, 0, 0, 0, 0, 0, 0},
        {0, JG_E4M3, JG_DTYPE_NONE, JG_BF16, JG_SCALE_BLOCK, 200, 3001, 7003, 0, 0, 0, 0, 0, 0},
        {0, JG_FP32, JG_DTYPE_NONE, JG_FP32, JG_SCALE_NONE, 2000, 2001, 2003, 0, 0, 0, 0, 0, 0},
        {UN, JG_BF16, JG_DTYPE_NONE, JG_BF16, JG_SCALE_NONE, 4096, 4096, 4096, 0, 0, 0, 0, 0, 0},
        {UN | AM | BN, JG_BF16, JG_BF16, JG_BF16, JG_SCALE_NONE, 2048, 3000, 1001, 0, 0, 0, 0, 0,
         0},
        {UN | AM, JG_FP16, JG_DTYPE_NONE, JG_FP32, JG_SCALE_NONE, 3, 3000, 999, 0, 0, 0, 0, 0, 0},
        {UN, JG_BF16, JG_DTYPE_NONE, JG_BF16, JG_SCALE_NONE, 100, 4096, 7168, 0, 0, 0, 2, 1, 0},
        {0, JG_BF16, JG_DTYPE_NONE, JG_BF16, JG_SCALE_NONE, 300, 1024, 8191, 0, 0, 0, 1, 2, 0},
        {UN, JG_FP16, JG_DTYPE_NONE, JG_FP16, JG_SCALE_NONE, 4096, 11008, 1536, 0, 0, 0, 0, 0, 256},
    };
    jg__target t;
    jg_test_h100_target(&t);
    uint32_t forms = 0;
    for (size_t i = 0; i < JG_ARRAY_LEN(cases); ++i) {
        jg_gemm_problem p = {.flags = cases[i].flags, .a_type = cases[i].ab,
                             .b_type = cases[i].ab, .c_type = cases[i].c, .d_type = cases[i].d,
                             .m = cases[i].m, .n = cases[i].n, .k = cases[i].k,
                             .lda = cases[i].lda, .ldb = cases[i].ldb, .ldd = cases[i].ldd,
                             .scale = cases[i].scale};
        t.force_swap = cases[i].swap;
        t.force_split = cases[i].split;
        t.force_m = cases[i].force_m;
        jg__problem_key pk;
        jg__problem_key_make(&p, &pk);
        const jg__gemm_config c = check_planned(cuobjdump, &t, &pk);
        forms |= c.soft | (c.swap_ab ? 8u : 0) | (c.split_k > 1 ? 16u : 0) |
                 (c.block_m == 256 ? 32u : 0);
    }
    CHECK(forms == 63, "the cases planned soft A, B, D, swap-AB, split-K and 256-row tiles: "
                       "0x%x of 0x3f", forms);
    t.force_swap = t.force_split = t.force_m = 0;
    /* grouped: the list layout with N-major B and soft operands (odd rows,
     * then the flag), the device layouts with soft operands */
    static const int64_t gm[4] = {100, 0, 257, 31};
    jg_grouped_problem gp = {.flags = JG_GROUPED_B_N_MAJOR, .layout = JG_GROUPED_LIST,
                             .a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                             .groups = 4, .m = gm, .n = 3001, .k = 1025};
    check_grouped(cuobjdump, &t, &gp);
    gp.flags = JG_GROUPED_B_N_MAJOR | JG_GROUPED_UNALIGNED;
    gp.n = 4096;
    gp.k = 4096;
    gp.c_type = gp.d_type = JG_FP32;
    check_grouped(cuobjdump, &t, &gp);
    for (int layout = JG_GROUPED_CONTIGUOUS; layout <= JG_GROUPED_MASKED; ++layout) {
        jg_grouped_problem dp = {.flags = JG_GROUPED_UNALIGNED,
                                 .layout = (jg_grouped_layout)layout, .a_type = JG_FP16,
                                 .b_type = JG_FP16, .c_type = JG_FP16, .d_type = JG_FP16,
                                 .groups = 8, .n = 2049, .k = 7167, .m_max = 4096};
        check_grouped(cuobjdump, &t, &dp);
        dp.a_type = dp.b_type = JG_E4M3;
        dp.scale = JG_SCALE_ROW;
        dp.flags = 0;
        dp.k = 7001;
        check_grouped(cuobjdump, &t, &dp);
    }
}

int main(int argc, char **argv)
{
#ifdef JG_TEST_SASS
    (void)test_public_path_with_dump;
    (void)test_compile_error;
    const char *cuobjdump = argc > 1 ? argv[1] : "";
    if (!*cuobjdump) {
        printf("sass: cuobjdump not found at configure time: skipped\n");
        return JG_TEST_SKIP;
    }
    /* argv[2] "families", "exact" or "n_stack": those kernels alone (a focused run) */
    if (argc > 2 && strcmp(argv[2], "families") == 0) {
        check_families(cuobjdump);
        return jg_test_result("sass");
    }
    check_n_stack(cuobjdump);
    if (argc > 2 && strcmp(argv[2], "n_stack") == 0)
        return jg_test_result("sass");
    check_exact_rows(cuobjdump);
    if (argc > 2 && strcmp(argv[2], "exact") == 0)
        return jg_test_result("sass");
    check_any_problem(cuobjdump);
    check_ffma_reuse(cuobjdump);
    check_quant_nvfp4(cuobjdump);
    jg__gemm_config cfgs[64];
    size_t ncfg = planner_configs(cfgs, JG_ARRAY_LEN(cfgs));
    printf("sass: %zu distinct planner configurations\n", ncfg);
    for (size_t i = 0; i < ncfg; ++i) {
        /* fp32 output with C: the epilogue with the most live registers. */
        jg_gemm_problem p = {.a_type = i % 2 ? JG_FP16 : JG_BF16, .b_type = i % 2 ? JG_FP16 : JG_BF16,
                             .c_type = JG_FP32, .d_type = JG_FP32, .m = 4096, .n = 4096, .k = 4096};
        jg__problem_key pk;
        jg__problem_key_make(&p, &pk);
        jg__gemm_key key;
        jg__gemm_key_make(&pk, &cfgs[i], &key);
        jg__buf cubin = {0};
        double ms;
        if (compile_key(&key, &cubin, &ms) == JG_OK)
            check_sass(cuobjdump, &key, &cubin);
        jg__buf_free(&cubin);
    }
    /* FP8 (e4m3): the planner's tiles over a grid of shapes, tensor scales
     * with BF16 out, row scales with FP32 out plus C (the most live
     * registers next to the promoted sums), block scales with BF16 out.
     * 515x4096 with tensor scales: swap-AB tiles 128x144. */
    static const int64_t fp8_m[] = {1, 64, 128, 515, 4096}, fp8_n[] = {4096, 7168};
    for (size_t i = 0; i < JG_ARRAY_LEN(fp8_m); ++i)
        for (size_t j = 0; j < JG_ARRAY_LEN(fp8_n); ++j)
            for (int c = 0; c < 3; ++c) {
                jg_gemm_problem p = {.a_type = JG_E4M3, .b_type = JG_E4M3,
                                     .c_type = c == 1 ? JG_FP32 : JG_DTYPE_NONE,
                                     .d_type = c == 1 ? JG_FP32 : JG_BF16, .m = fp8_m[i],
                                     .n = fp8_n[j], .k = 7168,
                                     .scale = c == 1 ? JG_SCALE_ROW
                                              : c == 2 ? JG_SCALE_BLOCK
                                                       : JG_SCALE_TENSOR};
                jg__target ft;
                jg_test_h100_target(&ft);
                jg__problem_key pk;
                jg__problem_key_make(&p, &pk);
                check_planned(cuobjdump, &ft, &pk);
            }
    /* K = 1536 (12 stages): split 8 + 4 or whole, the promotion chunks
     * spilled in every mode at 128x128 (the planner now splits 6 + 6). */
    for (int s = JG_SCALE_TENSOR; s <= JG_SCALE_BLOCK; ++s) {
        jg_gemm_problem p = {.a_type = JG_E4M3, .b_type = JG_E4M3, .d_type = JG_BF16,
                             .m = 4096, .n = 4096, .k = 1536, .scale = (jg_scale_mode)s};
        jg__target ft;
        jg_test_h100_target(&ft);
        jg__problem_key pk;
        jg__problem_key_make(&p, &pk);
        check_planned(cuobjdump, &ft, &pk);
    }
    check_families(cuobjdump);
    check_table(cuobjdump);
    check_nvfp4(cuobjdump);
    /* The seeds' grouped cases (list layout): group rows baked in. */
    static const int64_t seed_m[4][8] = {{80, 176, 128, 72, 64, 248, 96, 160},
                                         {40, 76, 168, 72, 164, 148, 196, 160},
                                         {192, 320},
                                         {128, 384}};
    static const int64_t seed_nk[4][3] = {{8, 4096, 7168}, {8, 7168, 2048}, {2, 3072, 4096},
                                          {2, 4096, 1536}};
    jg__target t;
    jg_test_h100_target(&t);
    for (t.force_cluster = 0; t.force_cluster <= 2; t.force_cluster += 2)
        for (int i = 0; i < 4; ++i) {
            jg_grouped_problem gp = {.layout = JG_GROUPED_LIST, .a_type = JG_BF16,
                                     .b_type = JG_BF16, .d_type = JG_BF16,
                                     .groups = (int32_t)seed_nk[i][0], .m = seed_m[i],
                                     .n = seed_nk[i][1], .k = seed_nk[i][2]};
            check_grouped(cuobjdump, &t, &gp);
        }
    t.force_cluster = 0;
    /* 64 groups (the most), empty ones among them, fp32 out with C: the
     * largest group lookup next to the largest epilogue. */
    int64_t many[JG_GROUPED_MAX_GROUPS];
    for (int g = 0; g < JG_GROUPED_MAX_GROUPS; ++g)
        many[g] = (g * 37) % 5 == 0 ? 0 : 1 + (g * 53) % 300;
    jg_grouped_problem gp = {.layout = JG_GROUPED_LIST, .a_type = JG_FP16, .b_type = JG_FP16,
                             .c_type = JG_FP32, .d_type = JG_FP32,
                             .groups = JG_GROUPED_MAX_GROUPS, .m = many, .n = 1000, .k = 520};
    check_grouped(cuobjdump, &t, &gp);
    /* FP8 in the list layout: per-group scale pointers, in every mode; the
     * 64 groups' block scales with FP32 out and C, the seeds' first case
     * with tensor and row scales. */
    gp.a_type = gp.b_type = JG_E4M3;
    gp.k = 1024;
    gp.scale = JG_SCALE_BLOCK;
    check_grouped(cuobjdump, &t, &gp);
    for (int s = JG_SCALE_TENSOR; s <= JG_SCALE_ROW; ++s) {
        jg_grouped_problem fl = {.layout = JG_GROUPED_LIST, .a_type = JG_E4M3,
                                 .b_type = JG_E4M3, .d_type = JG_BF16, .groups = 8,
                                 .m = seed_m[0], .n = 4096, .k = 7168, .scale = (jg_scale_mode)s};
        check_grouped(cuobjdump, &t, &fl);
    }
    /* Rows on the device: the group table in shared memory, boundary tiles
     * stored directly. */
    for (int layout = JG_GROUPED_CONTIGUOUS; layout <= JG_GROUPED_MASKED; ++layout) {
        t.force_cluster = layout == JG_GROUPED_MASKED ? 2 : 0;
        jg_grouped_problem dp = {.layout = (jg_grouped_layout)layout, .a_type = JG_BF16,
                                 .b_type = JG_BF16, .c_type = JG_FP32, .d_type = JG_FP32,
                                 .groups = JG_GROUPED_MAX_DEVICE_GROUPS, .n = 4096, .k = 7168,
                                 .m_max = 8192};
        check_grouped(cuobjdump, &t, &dp);
        /* FP8: contiguous with row scales, masked with block scales, both
         * with tensor scales (one per group). */
        dp.a_type = dp.b_type = JG_E4M3;
        dp.scale = layout == JG_GROUPED_MASKED ? JG_SCALE_BLOCK : JG_SCALE_ROW;
        t.force_cluster = 0;
        check_grouped(cuobjdump, &t, &dp);
        dp.scale = JG_SCALE_TENSOR;
        check_grouped(cuobjdump, &t, &dp);
        /* NVFP4: contiguous with row-major A scales (the only ones it
         * takes) and swizzled B's; masked with both swizzled, FP32 and C. */
        dp.a_type = dp.b_type = JG_NVFP4;
        dp.scale = JG_SCALE_NVFP4;
        dp.a_sf_layout = layout == JG_GROUPED_MASKED ? JG_SF_SWIZZLED_128X4 : JG_SF_ROW_MAJOR;
        dp.b_sf_layout = JG_SF_SWIZZLED_128X4;
        check_grouped(cuobjdump, &t, &dp);
    }
    /* NVFP4 in the list layout: the most groups it takes (each with its
     * scale maps), empty ones among them; the seeds' second case. */
    jg_grouped_problem nl = {.layout = JG_GROUPED_LIST, .a_type = JG_NVFP4, .b_type = JG_NVFP4,
                             .c_type = JG_BF16, .d_type = JG_BF16,
                             .groups = JG_GROUPED_MAX_NVFP4_GROUPS, .m = many, .n = 1000,
                             .k = 1024, .scale = JG_SCALE_NVFP4,
                             .a_sf_layout = JG_SF_ROW_MAJOR, .b_sf_layout = JG_SF_SWIZZLED_128X4};
    check_grouped(cuobjdump, &t, &nl);
    nl.groups = 8;
    nl.m = seed_m[1];
    nl.n = 7168;
    nl.k = 2048;
    nl.c_type = JG_DTYPE_NONE;
    nl.a_sf_layout = JG_SF_SWIZZLED_128X4;
    check_grouped(cuobjdump, &t, &nl);
    check_nvfp4_pre(cuobjdump);
    return jg_test_result("sass");
#else
    (void)argc;
    (void)argv;
    (void)planner_configs;
    (void)check_sass;
    (void)check_exact_rows;
    (void)check_n_stack;
    (void)compile_key;
    (void)check_grouped;
    (void)check_planned;
    (void)check_quant_nvfp4;
    (void)check_nvfp4;
    (void)check_nvfp4_pre;
    (void)check_ffma_reuse;
    (void)check_families;
    (void)check_table;
    (void)check_any_problem;
    test_public_path_with_dump();
    test_compile_error();
    return jg_test_result("nvrtc");
#endif
}
