/* Cache keys: the same problem always gives the same key bytes and hash,
 * every field that shapes code changes the hash, and nothing else (leading
 * dimensions, pointers, paths, padding) ever enters it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "jg_internal.h"
#include "jg_test.h"

static const jg__gemm_config base_cfg = {.block_m = 128,
                                          .block_n = 256,
                                          .block_k = 64,
                                          .stages = 4,
                                          .consumers = 2,
                                          .cluster = 1,
                                          .group_m = 8,
                                          .epi_bytes = 128,
                                          .a_box_m = 128,
                                          .ab_size = 2};

static jg_gemm_problem base_problem(void)
{
    jg_gemm_problem p;
    memset(&p, 0, sizeof p);
    p.a_type = JG_BF16;
    p.b_type = JG_BF16;
    p.d_type = JG_BF16;
    p.m = 1024;
    p.n = 2048;
    p.k = 512;
    return p;
}

/* The salt of an sm_90a context on the NVRTC backend. */
static jg__salt default_salt(void)
{
    char id[256];
    jg__backend_id(JG_BACKEND_NVRTC, id, sizeof id);
    return jg__salt_make("sm_90a", id);
}

/* Copies src's fields one by one into a struct whose padding holds `fill`,
 * as a caller's stack garbage would. */
static void copy_over_garbage(jg_gemm_problem *dst, const jg_gemm_problem *src, int fill)
{
    memset(dst, fill, sizeof *dst);
    dst->flags = src->flags;
    dst->a_type = src->a_type;
    dst->b_type = src->b_type;
    dst->c_type = src->c_type;
    dst->d_type = src->d_type;
    dst->m = src->m;
    dst->n = src->n;
    dst->k = src->k;
    dst->lda = src->lda;
    dst->ldb = src->ldb;
    dst->ldc = src->ldc;
    dst->ldd = src->ldd;
    dst->scale = src->scale;
    dst->a_sf_layout = src->a_sf_layout;
    dst->b_sf_layout = src->b_sf_layout;
}

/* The kernel key of (p, cfg), its outputs first filled with `fill`. */
static void make_keys(const jg_gemm_problem *p, const jg__gemm_config *cfg, int fill,
                      jg__problem_key *pk, jg__gemm_key *gk)
{
    jg_gemm_problem in;
    copy_over_garbage(&in, p, fill);
    memset(pk, fill ^ 0xff, sizeof *pk);
    memset(gk, fill ^ 0xff, sizeof *gk);
    jg__problem_key_make(&in, pk);
    jg__gemm_key_make(pk, cfg, gk);
}

static jg__hash128 kernel_hash(const jg_gemm_problem *p, const jg__gemm_config *cfg)
{
    jg__problem_key pk;
    jg__gemm_key gk;
    make_keys(p, cfg, 0xAB, &pk, &gk);
    jg__salt salt = default_salt();
    return jg__key_hash(&salt, &gk, sizeof gk);
}

static int hash_eq(jg__hash128 a, jg__hash128 b) { return a.lo == b.lo && a.hi == b.hi; }

static void test_determinism(void)
{
    jg_gemm_problem p = base_problem();
    p.c_type = JG_BF16;
    jg__problem_key pk1, pk2;
    jg__gemm_key gk1, gk2;
    make_keys(&p, &base_cfg, 0xAB, &pk1, &gk1);
    make_keys(&p, &base_cfg, 0x5C, &pk2, &gk2);
    CHECK(!memcmp(&pk1, &pk2, sizeof pk1), "problem key bytes depend on padding garbage");
    CHECK(!memcmp(&gk1, &gk2, sizeof gk1), "kernel key bytes depend on padding garbage");
    jg__salt s1 = default_salt(), s2 = default_salt();
    CHECK(hash_eq(s1.h, s2.h), "the salt is not deterministic");
    CHECK(hash_eq(jg__key_hash(&s1, &gk1, sizeof gk1), jg__key_hash(&s2, &gk2, sizeof gk2)),
          "same key, different hash");
    char hex1[33], hex2[33];
    jg__hash_hex(jg__key_hash(&s1, &gk1, sizeof gk1), hex1);
    jg__hash_hex(jg__key_hash(&s2, &gk2, sizeof gk2), hex2);
    CHECK(strlen(hex1) == 32 && !strcmp(hex1, hex2), "hex: %s vs %s", hex1, hex2);
}

/* One change to a field that shapes code, per row. */
#define MUTATION(name, stmt)                                                 \
    static void mut_##name(jg_gemm_problem *p, jg__gemm_config *c)            \
    {                                                                        \
        (void)p;                                                             \
        (void)c;                                                             \
        stmt;                                                                \
    }
MUTATION(a_type, p->a_type = JG_FP16)
MUTATION(b_type, p->b_type = JG_FP16)
MUTATION(c_type, p->c_type = JG_BF16)
MUTATION(d_type_fp16, p->d_type = JG_FP16)
MUTATION(d_type_fp32, p->d_type = JG_FP32)
MUTATION(flags, p->flags = JG_GEMM_M_GENERIC)
MUTATION(flags_pdl, p->flags = JG_GEMM_PDL)
MUTATION(flags_pdl_mg, p->flags = JG_GEMM_PDL | JG_GEMM_M_GENERIC)
MUTATION(m, p->m = 1025)
MUTATION(n, p->n = 2056)
MUTATION(k, p->k = 520)
MUTATION(block_m, c->block_m = 64)
MUTATION(block_n, c->block_n = 128)
MUTATION(block_k, c->block_k = 32)
MUTATION(stages, c->stages = 5)
MUTATION(consumers, c->consumers = 1)
MUTATION(cluster, c->cluster = 2)
MUTATION(group_m, c->group_m = 16)
MUTATION(epi_bytes, c->epi_bytes = 64)
MUTATION(a_box_m, c->a_box_m = 8)
MUTATION(ab_size, c->ab_size = 1)
MUTATION(expand_bufs, c->expand_bufs = 3)
MUTATION(swap, c->swap = 1)
MUTATION(promote_chunk, c->promote_chunk = 8)
MUTATION(a_scales_smem, c->a_scales_smem = 1)
MUTATION(ffma_reuse, c->ffma_reuse = 1)
MUTATION(pre, c->pre = 132)
MUTATION(pre_rows, c->pre_rows = 128)
MUTATION(n_stack, (c->cluster = 2, c->n_stack = 2))
MUTATION(split_ws, c->split_ws = 3)
MUTATION(stream_k, (c->split_ws = 3, c->stream_k = 1))
MUTATION(sk_dp, (c->split_ws = 3, c->sk_dp = 1))
MUTATION(scale, p->scale = JG_SCALE_TENSOR)
#define JG_NVFP4_PROBLEM(sfa, sfb)                                                                 \
    (p->a_type = p->b_type = JG_NVFP4, p->scale = JG_SCALE_NVFP4, p->a_sf_layout = (sfa),          \
     p->b_sf_layout = (sfb))
MUTATION(nvfp4, JG_NVFP4_PROBLEM(JG_SF_SWIZZLED_128X4, JG_SF_SWIZZLED_128X4))
MUTATION(a_sf_layout, JG_NVFP4_PROBLEM(JG_SF_ROW_MAJOR, JG_SF_SWIZZLED_128X4))
MUTATION(b_sf_layout, JG_NVFP4_PROBLEM(JG_SF_SWIZZLED_128X4, JG_SF_ROW_MAJOR))

static const struct {
    const char *name;
    void (*apply)(jg_gemm_problem *, jg__gemm_config *);
} mutations[] = {
    {"a_type", mut_a_type},
    {"b_type", mut_b_type},
    {"c_type", mut_c_type},
    {"d_type fp16", mut_d_type_fp16},
    {"d_type fp32", mut_d_type_fp32},
    {"flags", mut_flags},
    {"flags PDL", mut_flags_pdl},
    {"flags PDL|M_GENERIC", mut_flags_pdl_mg},
    {"m", mut_m},
    {"n", mut_n},
    {"k", mut_k},
    {"cfg.block_m", mut_block_m},
    {"cfg.block_n", mut_block_n},
    {"cfg.block_k", mut_block_k},
    {"cfg.stages", mut_stages},
    {"cfg.consumers", mut_consumers},
    {"cfg.cluster", mut_cluster},
    {"cfg.group_m", mut_group_m},
    {"cfg.epi_bytes", mut_epi_bytes},
    {"cfg.a_box_m", mut_a_box_m},
    {"cfg.ab_size", mut_ab_size},
    {"cfg.expand_bufs", mut_expand_bufs},
    {"cfg.swap", mut_swap},
    {"cfg.promote_chunk", mut_promote_chunk},
    {"cfg.a_scales_smem", mut_a_scales_smem},
    {"cfg.ffma_reuse", mut_ffma_reuse},
    {"cfg.pre", mut_pre},
    {"cfg.pre_rows", mut_pre_rows},
    {"cfg.n_stack", mut_n_stack},
    {"cfg.split_ws", mut_split_ws},
    {"cfg.stream_k", mut_stream_k},
    {"cfg.sk_dp", mut_sk_dp},
    {"scale", mut_scale},
    {"nvfp4", mut_nvfp4},
    {"a_sf_layout", mut_a_sf_layout},
    {"b_sf_layout", mut_b_sf_layout},
};

/* Every mutation gives a hash different from the base and from each other. */
static void test_fields_change_hash(void)
{
    enum { N = JG_ARRAY_LEN(mutations) };
    jg__hash128 h[N + 1];
    jg_gemm_problem p0 = base_problem();
    h[N] = kernel_hash(&p0, &base_cfg);
    for (size_t i = 0; i < N; ++i) {
        jg_gemm_problem p = base_problem();
        jg__gemm_config c = base_cfg;
        mutations[i].apply(&p, &c);
        h[i] = kernel_hash(&p, &c);
    }
    for (size_t i = 0; i <= N; ++i)
        for (size_t j = i + 1; j <= N; ++j)
            CHECK(!hash_eq(h[i], h[j]), "%s and %s give the same hash", mutations[i].name,
                  j == N ? "the base problem" : mutations[j].name);
}

/* NVFP4 quantization keys: the source type, the columns and the scale
 * layout shape the kernel and change the hash; rows and leading dimensions
 * (arguments) do not; an e4m3 quantization of the same shape is another
 * kernel. */
static void test_quant_nvfp4_keys(void)
{
    const jg_quant_problem base = {JG_BF16, JG_SCALE_NVFP4, 0, 64, 4096, 0, 0,
                                   JG_SF_SWIZZLED_128X4};
    jg_quant_problem v[4] = {base, base, base, base};
    v[1].src_type = JG_FP16;
    v[2].cols = 4112;
    v[3].sf_layout = JG_SF_ROW_MAJOR;
    const jg__salt salt = default_salt();
    jg__hash128 h[5];
    for (int i = 0; i < 4; ++i) {
        jg__gemm_key k;
        memset(&k, 0x5a, sizeof k); /* the maker zeroes every byte it does not fill */
        jg__quant_nvfp4_key_make(&v[i], &k);
        CHECK(k.kind == JG_KIND_QUANT_NVFP4 && k.key_format == JG_KEY_FORMAT && k.m == 0 &&
                  k.groups == 0,
              "nvfp4 quant key %d: kind %u", i, k.kind);
        h[i] = jg__key_hash(&salt, &k, sizeof k);
    }
    jg__gemm_key e4m3;
    const jg_quant_problem e4m3_problem = {JG_BF16, JG_SCALE_TENSOR, 0, 64, 4096, 0, 0,
                                           JG_SF_LAYOUT_NONE};
    jg__quant_e4m3_key_make(&e4m3_problem, &e4m3);
    h[4] = jg__key_hash(&salt, &e4m3, sizeof e4m3);
    for (int i = 0; i < 5; ++i)
        for (int j = i + 1; j < 5; ++j)
            CHECK(!hash_eq(h[i], h[j]), "quant keys %d and %d share a hash", i, j);
    jg_quant_problem other = base;
    other.rows = 7;
    other.ld_src = 8192;
    other.ld_dst = 4608;
    jg__gemm_key a, b;
    jg__quant_nvfp4_key_make(&base, &a);
    jg__quant_nvfp4_key_make(&other, &b);
    CHECK(!memcmp(&a, &b, sizeof a), "rows or leading dimensions enter the nvfp4 quant key");
    char name[128];
    jg__gemm_kernel_name(&a, "sm_90a", name);
    CHECK(!strcmp(name, "jg_quant_bf16_nvfp4_sf128x4_sm90a_n4096"), "name %s", name);
}

/* Clusters stacked along N: the name says the cluster as M x N CTAs
 * (_c1x2, _c2x2), and a key that stacks along N neither shares its name
 * nor its hash with the one stacked along M alone; n_stack 0 is the only
 * spelling of none. The key's layout is pinned: sk_dp, the config's
 * last field, moved groups and group_m (JG_KEY_FORMAT 17), and any other
 * move must bump the format again. */
static void test_n_stack_keys(void)
{
    const jg_gemm_problem p = base_problem();
    static const struct {
        uint32_t cluster, n_stack;
        const char *part;
    } rows[] = {{2, 0, "_c2_"}, {2, 2, "_c1x2_"}, {4, 2, "_c2x2_"}, {4, 4, "_c1x4_"}};
    jg__hash128 h[JG_ARRAY_LEN(rows)];
    for (size_t i = 0; i < JG_ARRAY_LEN(rows); ++i) {
        jg__gemm_config c = base_cfg;
        c.cluster = rows[i].cluster;
        c.n_stack = rows[i].n_stack;
        jg__problem_key pk;
        jg__gemm_key gk;
        make_keys(&p, &c, 0, &pk, &gk);
        char name[128];
        jg__gemm_kernel_name(&gk, "sm_90a", name);
        CHECK(strstr(name, rows[i].part) != NULL, "cluster %u, n_stack %u: name %s lacks %s",
              rows[i].cluster, rows[i].n_stack, name, rows[i].part);
        h[i] = kernel_hash(&p, &c);
        for (size_t j = 0; j < i; ++j)
            CHECK(!hash_eq(h[i], h[j]), "n_stack keys %zu and %zu share a hash", i, j);
    }
    CHECK(offsetof(jg__gemm_config, sk_dp) + sizeof(uint32_t) == sizeof(jg__gemm_config) &&
              offsetof(jg__gemm_key, groups) >=
                  offsetof(jg__gemm_key, cfg) + sizeof(jg__gemm_config) &&
              offsetof(jg__gemm_key, group_m) == 176 && sizeof(jg__gemm_key) == 688 &&
              JG_KEY_FORMAT == 17,
          "jg__gemm_key's layout moved (%zu, %zu): bump JG_KEY_FORMAT and pin the new one",
          offsetof(jg__gemm_key, group_m), sizeof(jg__gemm_key));
}

/* With JG_GEMM_M_GENERIC, M is a run-time argument: it must not split keys. */
static void test_m_generic(void)
{
    jg_gemm_problem a = base_problem(), b = base_problem();
    a.flags = b.flags = JG_GEMM_M_GENERIC;
    a.m = 128;
    b.m = 65536;
    CHECK(hash_eq(kernel_hash(&a, &base_cfg), kernel_hash(&b, &base_cfg)),
          "M-generic keys differ by problem.m");
    jg__problem_key pk;
    jg__gemm_key gk;
    make_keys(&a, &base_cfg, 0xAB, &pk, &gk);
    CHECK(gk.m == 0 && gk.flags == JG_GEMM_M_GENERIC, "M-generic key: m %lld flags %u",
          (long long)gk.m, gk.flags);
    a.flags = b.flags = 0;
    CHECK(!hash_eq(kernel_hash(&a, &base_cfg), kernel_hash(&b, &base_cfg)),
          "fixed-M keys ignore problem.m");
}

/* JG_GEMM_PDL shapes code: both keys keep it (a plan with PDL is another
 * kernel than one without), and the kernel's name is the plain one's with
 * "_pdl" appended, for every kind of dense kernel (the names of cfg.swap and
 * cfg.promote_chunk kernels carry more fields). */
static void test_pdl_keys_and_names(void)
{
    jg__gemm_config swap_cfg = base_cfg, fp8_cfg = base_cfg;
    swap_cfg.block_m = 16;
    swap_cfg.block_n = 64;
    swap_cfg.block_k = 256;
    swap_cfg.swap = 1;
    swap_cfg.expand_bufs = 2;
    fp8_cfg.ab_size = 1;
    fp8_cfg.block_k = 128;
    fp8_cfg.promote_chunk = 2;
    fp8_cfg.a_scales_smem = 1;
    for (int variant = 0; variant < 8; ++variant) {
        jg_gemm_problem p = base_problem();
        const jg__gemm_config *cfg = &base_cfg;
        const char *what = "bf16";
        if (variant & 1) {
            p.m = 16;
            p.a_type = p.b_type = JG_NVFP4;
            p.scale = JG_SCALE_NVFP4;
            p.a_sf_layout = p.b_sf_layout = JG_SF_SWIZZLED_128X4;
            cfg = &swap_cfg;
            what = "nvfp4 swap";
        } else if (variant & 2) {
            p.a_type = p.b_type = JG_E4M3;
            p.scale = JG_SCALE_BLOCK;
            cfg = &fp8_cfg;
            what = "e4m3 block";
        }
        const uint32_t extra = variant & 4 ? JG_GEMM_M_GENERIC : 0; /* with M-generic plans */
        const char *mg = extra ? " m-generic" : "";
        /* [0] plain, [1] with JG_GEMM_PDL */
        jg__problem_key pk[2];
        jg__gemm_key gk[2];
        jg__hash128 h[2];
        char name[2][128];
        for (int f = 0; f < 2; ++f) {
            p.flags = (f ? JG_GEMM_PDL : 0) | extra;
            make_keys(&p, cfg, 0x3C, &pk[f], &gk[f]);
            jg__salt salt = default_salt();
            h[f] = jg__key_hash(&salt, &gk[f], sizeof gk[f]);
            jg__gemm_kernel_name(&gk[f], "sm_90a", name[f]);
            CHECK(gk[f].flags == p.flags, "%s flags 0x%x: kernel key flags 0x%x", what, p.flags,
                  gk[f].flags);
        }
        CHECK(!hash_eq(h[0], h[1]), "%s%s: PDL and plain share a hash", what, mg);
        CHECK(memcmp(&pk[0], &pk[1], sizeof pk[0]) != 0, "%s%s: PDL and plain share a problem key",
              what, mg);
        char want[160];
        snprintf(want, sizeof want, "%s_pdl", name[0]);
        CHECK(!strcmp(name[1], want), "%s%s: PDL name %s, want %s", what, mg, name[1], want);
    }
}

/* Leading dimensions live in tensor maps and kernel arguments: the kernel
 * key ignores them, while the plan table's problem key keeps them. */
static void test_leading_dims(void)
{
    jg_gemm_problem packed = base_problem();
    packed.c_type = JG_BF16;
    jg_gemm_problem explicit_ld = packed;
    explicit_ld.lda = explicit_ld.ldb = packed.k;
    explicit_ld.ldc = explicit_ld.ldd = packed.n;
    jg_gemm_problem padded = packed;
    padded.lda = 1024;
    padded.ldb = 4096;
    padded.ldc = 2112;
    padded.ldd = 8192;

    jg__problem_key pk_packed, pk_explicit, pk_padded;
    jg__gemm_key gk_packed, gk_explicit, gk_padded;
    make_keys(&packed, &base_cfg, 0xAB, &pk_packed, &gk_packed);
    make_keys(&explicit_ld, &base_cfg, 0x11, &pk_explicit, &gk_explicit);
    make_keys(&padded, &base_cfg, 0x22, &pk_padded, &gk_padded);
    CHECK(!memcmp(&gk_packed, &gk_padded, sizeof gk_packed), "leading dims enter the kernel key");
    CHECK(!memcmp(&gk_packed, &gk_explicit, sizeof gk_packed), "packed 0 vs explicit ld");
    CHECK(!memcmp(&pk_packed, &pk_explicit, sizeof pk_packed),
          "problem key: 0 (packed) and the packed value differ");
    CHECK(memcmp(&pk_packed, &pk_padded, sizeof pk_packed) != 0,
          "problem key ignores leading dims");

    /* Without C, ldc means nothing and must not split the plan table. */
    jg_gemm_problem no_c = base_problem(), no_c_ldc = base_problem();
    no_c_ldc.ldc = 4096;
    make_keys(&no_c, &base_cfg, 0x33, &pk_packed, &gk_packed);
    make_keys(&no_c_ldc, &base_cfg, 0x44, &pk_padded, &gk_padded);
    CHECK(!memcmp(&pk_packed, &pk_padded, sizeof pk_packed), "ldc without C splits problem keys");
}

/* One-column MN-major operands with adjacent elements key as the K-major
 * row they are; others keep their layout. */
static void test_one_column_layouts(void)
{
    const jg_gemm_problem k_major = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                                     .m = 1, .n = 1, .k = 4099};
    jg_gemm_problem mn = k_major;
    mn.flags = JG_GEMM_A_M_MAJOR | JG_GEMM_B_N_MAJOR;
    mn.lda = mn.ldb = 1;
    jg__problem_key a, b;
    jg__problem_key_make(&k_major, &a);
    jg__problem_key_make(&mn, &b);
    CHECK(b.flags == a.flags && b.lda == 4104 && b.ldb == 4104,
          "one-column MN-major: flags 0x%x (K-major 0x%x), lda %lld, ldb %lld", b.flags, a.flags,
          (long long)b.lda, (long long)b.ldb);
    jg_gemm_problem strided = mn; /* elements 2 apart: no single row */
    strided.lda = strided.ldb = 2;
    jg__problem_key_make(&strided, &b);
    CHECK(b.flags == (JG_GEMM_A_M_MAJOR | JG_GEMM_B_N_MAJOR) && b.lda == 2 && b.ldb == 2,
          "strided one-column MN-major operands changed layout (flags 0x%x)", b.flags);
    jg_gemm_problem generic = mn; /* M from the launch: A's layout stays */
    generic.flags |= JG_GEMM_M_GENERIC;
    jg__problem_key_make(&generic, &b);
    CHECK((b.flags & JG_GEMM_A_M_MAJOR) && !(b.flags & JG_GEMM_B_N_MAJOR),
          "M-generic one-column A: flags 0x%x", b.flags);
}

/* The salt holds the arch and the backend's id (what compiles the kernels:
 * NVRTC's version and options, or LLVM's); so does every hash. */
static void test_salt(void)
{
    const char *opts = jg__nvrtc_options();
    char id[256], more_opts[512], major_id[256], minor_id[256];
    snprintf(id, sizeof id, "nvrtc 13.0|%s", opts);
    snprintf(more_opts, sizeof more_opts, "nvrtc 13.0|%s -lineinfo", opts);
    snprintf(major_id, sizeof major_id, "nvrtc 12.0|%s", opts);
    snprintf(minor_id, sizeof minor_id, "nvrtc 13.1|%s", opts);
    jg__salt base = jg__salt_make("sm_90a", id);
    jg__salt arch = jg__salt_make("sm_90", id);
    jg__salt options = jg__salt_make("sm_90a", more_opts);
    jg__salt major = jg__salt_make("sm_90a", major_id);
    jg__salt minor = jg__salt_make("sm_90a", minor_id);
    CHECK(!hash_eq(base.h, arch.h), "salt ignores the arch");
    CHECK(!hash_eq(base.h, options.h), "salt ignores the compile options");
    CHECK(!hash_eq(arch.h, options.h), "arch and option salts collide");
    CHECK(!hash_eq(base.h, major.h), "salt ignores NVRTC's major version");
    CHECK(!hash_eq(base.h, minor.h), "salt ignores NVRTC's minor version");
    CHECK(!hash_eq(major.h, minor.h), "NVRTC version salts collide");

    jg__problem_key pk;
    jg__gemm_key gk;
    jg_gemm_problem p = base_problem();
    make_keys(&p, &base_cfg, 0xAB, &pk, &gk);
    CHECK(!hash_eq(jg__key_hash(&base, &gk, sizeof gk), jg__key_hash(&arch, &gk, sizeof gk)),
          "key hash ignores the arch");
    CHECK(!hash_eq(jg__key_hash(&base, &gk, sizeof gk), jg__key_hash(&options, &gk, sizeof gk)),
          "key hash ignores the compile options");

    /* The backends' ids: NVRTC's names the loaded NVRTC's version and its
     * options, LLVM's differs. */
    char nvrtc[256], llvm[256], version[32];
    int nv_major, nv_minor;
    jg__nvrtc_version(&nv_major, &nv_minor);
    snprintf(version, sizeof version, "nvrtc %d.%d|", nv_major, nv_minor);
    jg__backend_id(JG_BACKEND_NVRTC, nvrtc, sizeof nvrtc);
    jg__backend_id(JG_BACKEND_LLVM, llvm, sizeof llvm);
    CHECK(!strncmp(nvrtc, version, strlen(version)) && strstr(nvrtc, opts),
          "NVRTC's id '%s' lacks '%s' or the options", nvrtc, version);
    CHECK(strcmp(nvrtc, llvm), "backend ids: '%s', '%s'", nvrtc, llvm);
    CHECK(!hash_eq(jg__salt_make("sm_90a", nvrtc).h, jg__salt_make("sm_90a", llvm).h),
          "salt ignores the backend");

    /* A context salts with the backend it compiles with (LLVM: in a build
     * that has it). */
    for (int b = JG_BACKEND_NVRTC; b <= JG_BACKEND_LLVM; ++b) {
        if (b == JG_BACKEND_LLVM && !jg__llvm_built())
            continue;
        jg_options o = {.flags = JG_CONTEXT_OFFLINE | JG_CONTEXT_BACKEND, .arch = "sm_90a",
                        .cache_mode = JG_CACHE_OFF, .backend = (jg_backend)b};
        jg_context *ctx;
        CHECK(jg_context_create(&o, &ctx) == JG_OK, "offline context: %s",
              jg_context_last_error(NULL));
        if (ctx) {
            jg__salt own = jg__salt_make("sm_90a", b == JG_BACKEND_LLVM ? llvm : nvrtc);
            CHECK(hash_eq(ctx->salt.h, own.h), "the context's salt is not its backend's (%s)",
                  b == JG_BACKEND_LLVM ? llvm : nvrtc);
            jg_context_destroy(ctx);
        }
    }
}

/* ---- keys seen through the public API: paths and cache modes never enter -- */

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_tree(const char *dir) { nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS); }

/* Plans the small problem in an offline context; returns its info. */
static jg_status plan_in(const char *dir, jg_cache_mode mode, jg_plan_info *info,
                         jg__gemm_config *cfg, jg_context_stats *stats)
{
    jg_options o;
    memset(&o, 0, sizeof o);
    o.flags = JG_CONTEXT_OFFLINE;
    o.arch = "sm_90a";
    o.cache_dir = dir;
    o.cache_mode = mode;
    jg_context *ctx = NULL;
    jg_status st = jg_context_create(&o, &ctx);
    CHECK(st == JG_OK, "context (%s): %s", dir, jg_context_last_error(NULL));
    if (st != JG_OK)
        return st;
    jg_gemm_problem p = base_problem();
    p.m = p.n = 128;
    p.k = 64;
    jg_plan *plan = NULL;
    st = jg_gemm_plan(ctx, &p, &plan);
    CHECK(st == JG_OK, "plan (%s): %s", dir, jg_context_last_error(ctx));
    if (st == JG_OK) {
        jg_plan_get_info(plan, info);
        *cfg = plan->cfg; /* internal: to recompute the key by hand */
    }
    jg_context_get_stats(ctx, stats);
    jg_context_destroy(ctx);
    return st;
}

static void test_public_key_ignores_paths(void)
{
    char dir_a[] = "/tmp/jg_key_a_XXXXXX", dir_b[] = "/tmp/jg_key_b_XXXXXX";
    if (!mkdtemp(dir_a) || !mkdtemp(dir_b)) {
        CHECK(0, "mkdtemp failed");
        return;
    }
    chmod(dir_a, 0700);
    chmod(dir_b, 0700);
    jg_plan_info off, rw, ro;
    jg__gemm_config cfg_off, cfg_rw, cfg_ro;
    jg_context_stats s_off, s_rw, s_ro;
    /* Cache off in dir A, read-write in dir B: two compiles. Read-only in
     * dir B: the entry B wrote, found by its key, no compile. */
    if (plan_in(dir_a, JG_CACHE_OFF, &off, &cfg_off, &s_off) == JG_OK &&
        plan_in(dir_b, JG_CACHE_READWRITE, &rw, &cfg_rw, &s_rw) == JG_OK &&
        plan_in(dir_b, JG_CACHE_READ, &ro, &cfg_ro, &s_ro) == JG_OK) {
        CHECK(off.key_hash[0] == rw.key_hash[0] && off.key_hash[1] == rw.key_hash[1],
              "key hash depends on the cache dir or mode");
        CHECK(ro.key_hash[0] == rw.key_hash[0] && ro.key_hash[1] == rw.key_hash[1],
              "read-only context: other key");
        CHECK(s_off.plans_compiled == 1 && s_rw.plans_compiled == 1, "compiles: %llu, %llu",
              (unsigned long long)s_off.plans_compiled, (unsigned long long)s_rw.plans_compiled);
        CHECK(ro.origin == JG_ORIGIN_DISK && s_ro.plans_compiled == 0 && s_ro.plans_disk == 1,
              "read-only context did not load B's entry (origin %d, compiled %llu)",
              (int)ro.origin, (unsigned long long)s_ro.plans_compiled);

        /* The public key is the internal hash of the key bytes, nothing more. */
        jg_gemm_problem p = base_problem();
        p.m = p.n = 128;
        p.k = 64;
        jg__hash128 h = kernel_hash(&p, &cfg_off);
        CHECK(h.lo == off.key_hash[0] && h.hi == off.key_hash[1],
              "plan key differs from jg__key_hash of the key bytes");
    }
    remove_tree(dir_a);
    remove_tree(dir_b);
}

/* Through the public API, offline (compiled by NVRTC: the PDL variants of
 * each kind of kernel must compile): plans with JG_GEMM_PDL are other
 * plans, with other key hashes and names ending in "_pdl". */
static void test_public_pdl_plans(void)
{
    jg_context *ctx = jg_test_offline_context();
    if (!ctx)
        return;
    jg_status st;
    const uint32_t pdl = JG_GEMM_PDL;
    /* each with PDL, most also plain, the bf16 decode shape M-generic too */
    static const struct {
        const char *what;
        jg_dtype ab;
        jg_scale_mode scale;
        int64_t m;
        size_t nflags; /* of {PDL, plain, PDL | M-generic} */
    } kinds[] = {
        {"bf16 decode", JG_BF16, JG_SCALE_NONE, 16, 3},
        {"bf16 512 rows", JG_BF16, JG_SCALE_NONE, 512, 1},
        {"e4m3 tensor", JG_E4M3, JG_SCALE_TENSOR, 16, 2},
        {"e4m3 block", JG_E4M3, JG_SCALE_BLOCK, 128, 2},
        {"nvfp4 swap-AB", JG_NVFP4, JG_SCALE_NVFP4, 16, 2},
        {"nvfp4 expanding", JG_NVFP4, JG_SCALE_NVFP4, 512, 2},
    };
    const uint32_t flags[] = {pdl, 0, pdl | JG_GEMM_M_GENERIC};
    for (size_t i = 0; i < JG_ARRAY_LEN(kinds); ++i) {
        jg_gemm_problem p = {.a_type = kinds[i].ab, .b_type = kinds[i].ab, .d_type = JG_BF16,
                             .m = kinds[i].m, .n = 2048, .k = 4096, .scale = kinds[i].scale};
        if (kinds[i].ab == JG_NVFP4)
            p.a_sf_layout = p.b_sf_layout = JG_SF_SWIZZLED_128X4;
        const size_t nflags = kinds[i].nflags;
        jg_plan_info info[3];
        for (size_t f = 0; f < nflags; ++f) {
            p.flags = flags[f];
            jg_plan *plan = NULL;
            memset(&info[f], 0, sizeof info[f]);
            st = jg_gemm_plan(ctx, &p, &plan);
            CHECK(st == JG_OK && plan, "%s flags 0x%x: %s: %s", kinds[i].what, p.flags,
                  jg_status_name(st), jg_context_last_error(ctx));
            if (st != JG_OK || !plan || jg_plan_get_info(plan, &info[f]) != JG_OK) {
                info[f].kernel_name = NULL;
                continue;
            }
            const char *name = info[f].kernel_name, *want = flags[f] ? "_pdl" : NULL;
            const size_t len = strlen(name);
            if (want)
                CHECK(len > strlen(want) && !strcmp(name + len - strlen(want), want),
                      "%s flags 0x%x: kernel %s does not end in %s", kinds[i].what, p.flags,
                      name, want);
            else
                CHECK(!strstr(name, "_pdl"), "%s without PDL: kernel %s", kinds[i].what, name);
            for (size_t g = 0; g < f; ++g)
                if (info[g].kernel_name)
                    CHECK(info[f].key_hash[0] != info[g].key_hash[0] ||
                              info[f].key_hash[1] != info[g].key_hash[1],
                          "%s: flags 0x%x and 0x%x share a key hash", kinds[i].what, flags[f],
                          flags[g]);
        }
        printf("key: %s: %s%s%s\n", kinds[i].what, info[0].kernel_name ? info[0].kernel_name : "-",
               nflags > 1 && info[1].kernel_name ? ", " : "",
               nflags > 1 && info[1].kernel_name ? info[1].kernel_name : "");
    }
    jg_context_destroy(ctx);
}

int main(void)
{
    test_determinism();
    test_fields_change_hash();
    test_pdl_keys_and_names();
    test_m_generic();
    test_n_stack_keys();
    test_quant_nvfp4_keys();
    test_leading_dims();
    test_one_column_layouts();
    test_salt();
    test_public_key_ignores_paths();
    test_public_pdl_plans();
    return jg_test_result("test_key");
}
