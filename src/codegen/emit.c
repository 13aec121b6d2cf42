/* Source generation: a prelude of named constants, then the template text
 * with our own #include lines replaced by the embedded files, so the result
 * needs no include path and no toolkit header. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

#include "codegen/codegen.h"

/* An M-generic dense plan whose A box is below its tile: the kernel loads
 * A in as many boxes as each tile's rows below the launch's M need
 * (JG_A_BOX_RUNTIME in sm90_gemm.cu). */
static bool a_box_runtime(const jg__gemm_key *key)
{
    return key->kind == 1 && key->m == 0 && !key->groups && !key->cfg.swap && !key->cfg.swap_ab &&
           key->cfg.a_box_m && key->cfg.a_box_m < key->cfg.block_m;
}

/* Names encode the kernel's parameters: the same name shows in logs,
 * profiles, the cache listing and JITGEMM_DUMP files. Grouped kernels carry
 * a hash of their rows (64 groups' rows do not fit a name). */
void jg__gemm_kernel_name(const jg__gemm_key *key, const char *arch, char out[128])
{
    char arch_id[16], m[32];
    size_t j = 0;
    for (const char *s = arch; *s && j + 1 < sizeof arch_id; ++s)
        if (*s != '_')
            arch_id[j++] = *s;
    arch_id[j] = 0;
    if (key->layout == JG_GROUPED_LIST)
        snprintf(m, sizeof m, "%08x",
                 (uint32_t)XXH3_64bits(key->group_m, key->groups * sizeof key->group_m[0]));
    else if (key->m)
        snprintf(m, sizeof m, "%lld", (long long)key->m);
    else if (a_box_runtime(key)) /* M-generic, A loaded in boxes of this many rows */
        snprintf(m, sizeof m, "X%u", key->cfg.a_box_m);
    else
        snprintf(m, sizeof m, "X");
    static const char *const layouts[] = {"gemm", "glist", "gcontig", "gmasked"};
    char kind[24];
    if (key->groups)
        snprintf(kind, sizeof kind, "%s%u", layouts[key->layout & 3], key->groups);
    else
        snprintf(kind, sizeof kind, "gemm");
    static const char *const scales[] = {"", "_tensor", "_row", "_block"};
    if (key->kind == JG_KIND_PACK) { /* no parameters: it copies bytes */
        snprintf(out, 128, "jg_pack_%s", arch_id);
        return;
    }
    if (key->kind == JG_KIND_QUANT_NVFP4) {
        snprintf(out, 128, "jg_quant_%s_nvfp4_%s_%s_n%lld", jg__dtype_name(key->a_type),
                 key->a_sf_layout == JG_SF_SWIZZLED_128X4 ? "sf128x4" : "sfrow", arch_id,
                 (long long)key->n);
        return;
    }
    if (key->kind == JG_KIND_QUANT) {
        snprintf(out, 128, "jg_quant_%s_e4m3%s%s_%s_n%lld", jg__dtype_name(key->a_type),
                 scales[key->scale & 3], key->scale == JG_SCALE_BLOCK
                                             ? (key->cfg.block_m == 128 ? "128x128" : "1x128")
                                             : "",
                 arch_id, (long long)key->n);
        return;
    }
    char pipe[32] = "";
    if (key->cfg.promote_chunk)
        snprintf(pipe, sizeof pipe, "_p%u%s%s", key->cfg.promote_chunk,
                 key->cfg.a_scales_smem ? "s" : "", key->cfg.ffma_reuse ? "r" : "");
    else if (key->cfg.swap)
        snprintf(pipe, sizeof pipe, "_sw%u", key->cfg.expand_bufs);
    else if (key->cfg.pre)
        snprintf(pipe, sizeof pipe, "_pre%ux%ur%u", key->cfg.expand_bufs, key->cfg.pre,
                 key->cfg.pre_rows);
    /* NVFP4: each operand's scale layout, r(ow-major) or s(wizzled 128x4) */
    char scale[16];
    if (key->scale == JG_SCALE_NVFP4)
        snprintf(scale, sizeof scale, "_sf%c%c", key->a_sf_layout == JG_SF_ROW_MAJOR ? 'r' : 's',
                 key->b_sf_layout == JG_SF_ROW_MAJOR ? 'r' : 's');
    else
        snprintf(scale, sizeof scale, "%s", scales[key->scale & 3]);
    /* At most ~110 characters (40 groups, n and k of 10 digits, _pdl); a
     * longer name would be cut alike where the source is emitted and where
     * the module's function is looked up. */
    /* dense swap-AB (tiles are N x M) and split-K */
    char shape[32] = "", rows[16] = "";
    if (key->cfg.stream_k > 1) /* stream-K in row groups: "r" and their count */
        snprintf(rows, sizeof rows, "r%u", key->cfg.stream_k);
    else if (key->cfg.sk_dp) /* split after data-parallel tiles: "dp" */
        snprintf(rows, sizeof rows, "dp");
    if (key->cfg.split_ws > 1) /* split-K through the workspace: "_ws" (stream-K "_sk") and the
                                  units a tile */
        snprintf(shape, sizeof shape, "%s_%s%u%s", key->cfg.swap_ab ? "_ab" : "",
                 key->cfg.stream_k ? "sk" : "ws", key->cfg.split_ws, rows);
    else if (key->cfg.split_k > 1)
        snprintf(shape, sizeof shape, "%s_k%u", key->cfg.swap_ab ? "_ab" : "", key->cfg.split_k);
    else if (key->cfg.swap_ab)
        snprintf(shape, sizeof shape, "_ab%s", key->cfg.pingpong ? "_pp" : "");
    else if (key->cfg.pingpong)
        snprintf(shape, sizeof shape, "_pp");
    /* a band of the tile order other than the default's ("_g" and its rows) */
    if (key->cfg.group_m && key->cfg.group_m != JG_BAND_ROWS_DEFAULT && !key->groups)
        snprintf(shape + strlen(shape), sizeof shape - strlen(shape), "_g%u", key->cfg.group_m);
    /* operand forms: MN-major A ("_am") and B ("_bn"), the kernel's soft
     * operands ("_s" and a, b, d) */
    char form[16] = "";
    if (key->flags & JG_GEMM_A_M_MAJOR)
        strcat(form, "_am");
    if (key->flags & JG_GEMM_B_N_MAJOR)
        strcat(form, "_bn");
    if (key->cfg.soft) {
        strcat(form, "_s");
        if (key->cfg.soft & JG_SOFT_A)
            strcat(form, "a");
        if (key->cfg.soft & JG_SOFT_B)
            strcat(form, "b");
        if (key->cfg.soft & JG_SOFT_D)
            strcat(form, "d");
    }
    /* the cluster's CTAs; stacked along N too, as M x N ("_c1x2") */
    char cluster[8]; /* a cluster has at most 8 CTAs (the kernel asserts it) */
    if (jg__cfg_n_stack(&key->cfg) > 1)
        snprintf(cluster, sizeof cluster, "%ux%u", (unsigned)(uint8_t)jg__cfg_m_stack(&key->cfg),
                 (unsigned)(uint8_t)jg__cfg_n_stack(&key->cfg));
    else
        snprintf(cluster, sizeof cluster, "%u", (unsigned)(uint8_t)key->cfg.cluster);
    const int len =
        snprintf(out, 128, "jg_%s_%s%s%s_%s%s_%s_%ux%ux%u_s%u_w%u_c%s%s%s%s_m%sn%lldk%lld%s", kind,
                 jg__dtype_name(key->a_type), (key->flags & JG_GEMM_FP32_EXACT) ? "x3" : "", scale,
                 jg__dtype_name(key->d_type), key->c_type ? "_c" : "", arch_id, key->cfg.block_m,
                 key->cfg.block_n, key->cfg.block_k, key->cfg.stages, key->cfg.consumers, cluster,
                 shape, form, pipe, m, (long long)key->n, (long long)key->k,
                 (key->flags & JG_GEMM_PDL) ? "_pdl" : "");
    (void)len;
}

/* An include the emitter redirects: the template names the header with every
 * wgmma N (so nvcc compiles it standalone); the kernel gets its N's alone. */
typedef struct include_alias {
    const char *from;
    const jg__template *to;
} include_alias;

/* Every kernel source's first lines: the library and the kernel's name,
 * which the template's entry point takes. */
static void emit_banner(jg__buf *out, const char *kernel_name)
{
    jg__buf_printf(out, "/* libjitgemm %s: %s */\n", JITGEMM_VERSION_STRING, kernel_name);
    jg__buf_printf(out, "#define JG_KERNEL_NAME %s\n", kernel_name);
}

/* Appends a template, replacing `#include "x"` of embedded files by their
 * text (each file once; they carry include guards anyway). */
static void emit_template(jg__buf *out, const jg__template *t, uint64_t *included,
                          const include_alias *alias)
{
    const char *p = t->text, *end = t->text + t->len;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *line_end = nl ? nl + 1 : end;
        const char *inc = "#include \"";
        size_t inc_len = strlen(inc);
        if ((size_t)(line_end - p) > inc_len && !memcmp(p, inc, inc_len)) {
            const char *name = p + inc_len;
            const char *q = memchr(name, '"', (size_t)(line_end - name));
            char file[64];
            size_t n = q ? (size_t)(q - name) : 0;
            if (q && n < sizeof file) {
                memcpy(file, name, n);
                file[n] = 0;
                const jg__template *sub =
                    !strcmp(file, alias->from) && alias->to ? alias->to : jg__template_find(file);
                if (sub && sub - jg__templates >= 64) { /* the included set is 64 bits */
                    out->failed = true;
                    return;
                }
                if (sub) {
                    uint64_t bit = 1ull << (unsigned)(sub - jg__templates);
                    if (!(*included & bit)) {
                        *included |= bit;
                        emit_template(out, sub, included, alias);
                    }
                    p = line_end;
                    continue;
                }
            }
        }
        jg__buf_append(out, p, (size_t)(line_end - p));
        p = line_end;
    }
}

/* The template `name` with its includes and no redirection. */
static void emit_named(jg__buf *out, const char *name)
{
    const jg__template *t = jg__template_find(name);
    if (!t) {
        out->failed = true;
        return;
    }
    include_alias none = {"", NULL};
    uint64_t included = 1ull << (unsigned)(t - jg__templates);
    emit_template(out, t, &included, &none);
}

/* A quantization kernel (kinds 3 and 4): source type, scale mode, block
 * rows or scale layout, and columns baked in. */
static void emit_quant(const jg__gemm_key *key, const char *kernel_name, jg__buf *out)
{
    const bool nvfp4 = key->kind == JG_KIND_QUANT_NVFP4;
    emit_banner(out, kernel_name);
    jg__buf_printf(out, "#define JG_Q_SRC %u\n", key->a_type);
    jg__buf_printf(out, "#define JG_Q_MODE %u\n", key->scale);
    if (nvfp4)
        jg__buf_printf(out, "#define JG_Q_SF_LAYOUT %u\n", key->a_sf_layout);
    else
        jg__buf_printf(out, "#define JG_Q_BLOCK_ROWS %u\n", key->cfg.block_m);
    jg__buf_printf(out, "#define JG_Q_COLS %lld\n", (long long)key->n);
    emit_named(out, nvfp4 ? "sm90_quant_nvfp4.cu" : "sm90_quant.cu");
}

/* sm90_nvfp4_pre.cu's tables: the groups' rows and first workspace rows,
 * the chunks (tallest first) with their wgmma N (their width: one variant
 * per distinct width), and each CTA's tiles as jg__pre_balance spreads
 * them. */
static void emit_pre_tables(const jg__gemm_key *key, jg__buf *out)
{
    jg__pre_chunk chunks[JG_PRE_MAX_CHUNKS];
    const uint32_t n = jg__pre_chunks(key->group_m, key->groups, key->cfg.pre_rows, chunks,
                                      JG_PRE_MAX_CHUNKS);
    const uint32_t tiles_n = (uint32_t)jg__ceil_div((uint64_t)key->n, 128);
    const uint32_t tiles = n * tiles_n, grid = key->cfg.pre;
    if (n == 0 || n > JG_PRE_MAX_CHUNKS || tiles > JG_PRE_MAX_TILES || grid == 0 ||
        grid > JG_PRE_MAX_GRID) {
        out->failed = true; /* the planner does not choose such keys */
        return;
    }
    jg__buf_puts(out, "#define JG_PRE_GROUP_ROWS {");
    uint64_t ws_row = 0;
    for (uint32_t g = 0; g < key->groups; ++g)
        jg__buf_printf(out, "%s%lld", g ? ", " : "", (long long)key->group_m[g]);
    jg__buf_puts(out, "}\n#define JG_PRE_GROUP_WS {");
    for (uint32_t g = 0; g < key->groups; ++g) {
        jg__buf_printf(out, "%s%llu", g ? ", " : "", (unsigned long long)ws_row);
        ws_row += key->group_m[g] > 0 ? (uint64_t)key->group_m[g] : 0;
    }
    uint32_t variants[JG_PRE_MAX_CHUNKS], nv = 0, variant_of[JG_PRE_MAX_CHUNKS];
    for (uint32_t c = 0; c < n; ++c) {
        const uint32_t w = chunks[c].width; /* wgmma's N */
        uint32_t v = 0;
        while (v < nv && variants[v] != w)
            ++v;
        if (v == nv)
            variants[nv++] = w;
        variant_of[c] = v;
    }
    jg__buf_printf(out, "}\n#define JG_PRE_CHUNKS %u\n#define JG_PRE_CHUNK_TABLE {", n);
    for (uint32_t c = 0; c < n; ++c)
        jg__buf_printf(out, "%s{%u, %u, %u, %u}", c ? ", " : "", chunks[c].group, chunks[c].row0,
                       chunks[c].rows, variant_of[c]);
    jg__buf_puts(out, "}\n#define JG_PRE_VARIANTS(X)");
    for (uint32_t v = 0; v < nv; ++v)
        jg__buf_printf(out, " X(%u, %u)", v, variants[v]);
    uint16_t *cta_of = malloc(tiles * sizeof *cta_of), *order = malloc(tiles * sizeof *order);
    uint32_t *first = calloc(grid + 1, sizeof *first);
    if (!cta_of || !order || !first) {
        out->failed = true;
    } else {
        jg__pre_balance(chunks, n, tiles_n, grid, cta_of);
        for (uint32_t t = 0; t < tiles; ++t)
            first[cta_of[t] + 1]++;
        jg__buf_printf(out, "\n#define JG_PRE_GRID %u\n#define JG_PRE_CTA_FIRST {0", grid);
        for (uint32_t c = 1; c <= grid; ++c) {
            first[c] += first[c - 1];
            jg__buf_printf(out, ", %u", first[c]);
        }
        /* each CTA's tiles in the order it was given them: first[c] is its next slot */
        for (uint32_t t = 0; t < tiles; ++t)
            order[first[cta_of[t]]++] = (uint16_t)t;
        jg__buf_puts(out, "}\n#define JG_PRE_ORDER {");
        for (uint32_t i = 0; i < tiles; ++i)
            jg__buf_printf(out, "%s%u", i ? ", " : "", order[i]);
        jg__buf_puts(out, "}\n");
    }
    free(cta_of);
    free(order);
    free(first);
}

/* sm90_nvfp4_pre.cu: the GEMM and its pre-pass, with their tables. */
static void emit_pre(const jg__gemm_key *key, const char *kernel_name, jg__buf *out)
{
    emit_banner(out, kernel_name);
    jg__buf_printf(out, "#define JG_PRE_DQ_NAME %s" JG_PRE_DQ_SUFFIX "\n", kernel_name);
    jg__buf_printf(out, "#define JG_D_DTYPE %u\n", key->d_type);
    jg__buf_printf(out, "#define JG_HAS_C %d\n", key->c_type != JG_DTYPE_NONE);
    jg__buf_printf(out, "#define JG_N %lld\n#define JG_K %lld\n", (long long)key->n,
                   (long long)key->k);
    jg__buf_printf(out, "#define JG_GROUPS %u\n", key->groups);
    jg__buf_printf(out, "#define JG_A_SF_LAYOUT %u\n#define JG_B_SF_LAYOUT %u\n",
                   key->a_sf_layout, key->b_sf_layout);
    jg__buf_printf(out, "#define JG_STAGES %u\n#define JG_PRE_SLOTS %u\n", key->cfg.stages,
                   key->cfg.expand_bufs);
    jg__buf_printf(out, "#define JG_PRE_NMAX %u\n#define JG_PRE_BOX %u\n", key->cfg.block_m,
                   key->cfg.a_box_m);
    emit_pre_tables(key, out);
    emit_named(out, "sm90_nvfp4_pre.cu");
}

/* The kernel's operand layouts (MN-major: swap-AB's A is the problem's B)
 * and the operands that may take soft loads or stores (cfg.soft, already
 * the kernel's); nothing for K-major operands that only TMA moves. */
static void emit_forms(const jg__gemm_key *key, bool swap_ab, jg__buf *out)
{
    const bool a_mn = key->flags & (swap_ab ? JG_GEMM_B_N_MAJOR : JG_GEMM_A_M_MAJOR);
    const bool b_mn = key->flags & (swap_ab ? JG_GEMM_A_M_MAJOR : JG_GEMM_B_N_MAJOR);
    if (a_mn)
        jg__buf_puts(out, "#define JG_A_MN 1\n");
    if (b_mn)
        jg__buf_puts(out, "#define JG_B_MN 1\n");
    if (key->cfg.soft & JG_SOFT_A)
        jg__buf_puts(out, "#define JG_A_SOFT 1\n");
    if (key->cfg.soft & JG_SOFT_B)
        jg__buf_puts(out, "#define JG_B_SOFT 1\n");
    if (key->cfg.soft & JG_SOFT_D)
        jg__buf_puts(out, "#define JG_D_SOFT 1\n");
}

/* Whether the LLVM backend's bitcode serves a key (jg__emit_gemm_spec):
 * sm90_gemm.cu's kernels but NVFP4's, and but FP8 block scales in the list
 * layout, where LLVM's PTX left ptxas 24 bytes of spills at the consumers'
 * 232 registers (128x128x128, K = 1536; NVVM's: none), and but M-generic
 * dense 128-row tiles from 160 wide whose K a cluster splits, which spilled
 * there too (128x160x64 over 4, N = 1472, K = 21696; NVVM's: none), and
 * but FP8 swap-AB tiles with row scales from 128 wide split over a cluster
 * (64x128x128 over 2, 128x4096x7168: spills; NVVM's: none). Not
 * clusters stacked along N, nor split-K through the workspace: the catalog
 * has neither. */
bool jg__spec_supported(const jg__gemm_key *key)
{
    const bool generic_wide_split = key->kind == 1 && !key->m && key->cfg.split_k > 1 &&
                                    !key->cfg.swap_ab && key->cfg.block_m == 128 &&
                                    key->cfg.block_n >= 160;
    const bool fp8_row_swap_split = key->kind == 1 && key->a_type == JG_E4M3 &&
                                    key->scale == JG_SCALE_ROW && key->cfg.swap_ab &&
                                    key->cfg.split_k > 1 && key->cfg.block_n >= 128;
    return (key->kind == 1 || key->kind == 2) && key->a_type != JG_NVFP4 && !key->cfg.pre &&
           !key->cfg.swap && !(key->layout == JG_GROUPED_LIST && key->scale == JG_SCALE_BLOCK) &&
           !generic_wide_split && !fp8_row_swap_split && !jg__key_new_forms(key) &&
           jg__cfg_n_stack(&key->cfg) == 1 && key->cfg.split_ws <= 1;
}

/* M, N and K as the kernel sees them (swap-AB: N is its rows, M its columns). */
static void kernel_sizes(const jg__gemm_key *key, int64_t *m, int64_t *n)
{
    const bool swap_ab = key->cfg.swap_ab != 0;
    *m = swap_ab ? key->n : key->m;
    *n = swap_ab ? key->m : key->n;
}

/* One size: a number, or with spec the value's name (a nonzero size only:
 * zero means "from the arguments", which shapes the code). */
static void emit_size(jg__buf *out, const char *macro, int64_t v, bool value, const char *name)
{
    if (value && v) {
        jg__buf_printf(out, "extern __device__ const int %s;\n", name);
        jg__buf_printf(out, "#define %s_BAKED 1\n#define %s %s\n", macro, macro, name);
    } else {
        jg__buf_printf(out, "#define %s %lld\n", macro, (long long)v);
    }
}

/* The prelude of sm90_gemm.cu or sm90_nvfp4_swap.cu; spec: M, N and K as
 * values (see jg__emit_gemm_spec). */
static void emit_gemm_defines(const jg__gemm_key *key, const char *kernel_name, bool spec,
                              jg__buf *out)
{
    emit_banner(out, kernel_name);
    jg__buf_printf(out, "#define JG_AB_DTYPE %u\n", key->a_type);
    jg__buf_printf(out, "#define JG_D_DTYPE %u\n", key->d_type);
    jg__buf_printf(out, "#define JG_HAS_C %d\n", key->c_type != JG_DTYPE_NONE);
    jg__buf_printf(out, "#define JG_SCALE %u\n", key->scale);
    /* swap-AB: the kernel's rows are N, its columns M (0: from the arguments) */
    const bool swap_ab = key->cfg.swap_ab != 0;
    int64_t m, n;
    kernel_sizes(key, &m, &n);
    /* The list layout's tile count is a constant expression of N */
    emit_size(out, "JG_M", m, spec, JG_SPEC_M);
    jg__buf_printf(out, "#define JG_PDL %d\n", (key->flags & JG_GEMM_PDL) ? 1 : 0);
    emit_size(out, "JG_N", n, spec && key->layout != JG_GROUPED_LIST, JG_SPEC_N);
    if (swap_ab)
        jg__buf_printf(out, "#define JG_SWAP_AB 1\n#define JG_SW_EPI_ROWS %u\n",
                       jg__swap_epi_rows(key->cfg.block_n));
    if (key->cfg.split_k > 1)
        jg__buf_printf(out, "#define JG_SPLIT_K %u\n", key->cfg.split_k);
    if (key->cfg.split_ws > 1)
        jg__buf_printf(out, "#define JG_SPLIT_WS %u\n", key->cfg.split_ws);
    if (key->cfg.split_ws > 1 && key->cfg.stream_k)
        jg__buf_printf(out, "#define JG_STREAM_K %u\n", key->cfg.stream_k);
    if (key->cfg.split_ws > 1 && !key->cfg.stream_k && key->cfg.sk_dp)
        jg__buf_puts(out, "#define JG_SK_DP 1\n");
    if (key->cfg.pingpong)
        jg__buf_printf(out, "#define JG_PINGPONG 1\n");
    /* exact FP32: three passes over the workspace's parts, KP each (a
     * number: the LLVM backend does not take these kernels) */
    const bool exact = (key->flags & JG_GEMM_FP32_EXACT) != 0;
    if (exact) {
        const int64_t kp = jg__exact_kp(key->k);
        jg__buf_printf(out, "#define JG_K %lld\n#define JG_EXACT 1\n#define JG_KP %lld\n",
                       (long long)(3 * kp), (long long)kp);
    } else {
        emit_size(out, "JG_K", key->k, spec, JG_SPEC_K);
    }
    if (spec && key->a_type == JG_E4M3) {
        /* FP8's chunks of stages are unrolled: their lengths stay numbers */
        const uint64_t split = key->cfg.split_k > 1    ? key->cfg.split_k
                               : key->cfg.split_ws > 1 ? key->cfg.split_ws
                                                       : 1;
        const uint64_t tiles = jg__ceil_div(jg__ceil_div((uint64_t)key->k, key->cfg.block_k), split);
        const uint64_t chunk = key->cfg.promote_chunk < tiles ? key->cfg.promote_chunk : tiles;
        jg__buf_printf(out, "#define JG_CHUNK_STAGES %llu\n#define JG_CHUNK_TAIL %llu\n",
                       (unsigned long long)chunk, (unsigned long long)(chunk ? tiles % chunk : 0));
    }
    emit_forms(key, swap_ab, out);
    jg__buf_printf(out, "#define JG_BLOCK_M %u\n", key->cfg.block_m);
    jg__buf_printf(out, "#define JG_BLOCK_N %u\n", key->cfg.block_n);
    jg__buf_printf(out, "#define JG_BLOCK_K %u\n", key->cfg.block_k);
    jg__buf_printf(out, "#define JG_STAGES %u\n", key->cfg.stages);
    jg__buf_printf(out, "#define JG_CONSUMERS %u\n", key->cfg.consumers);
    jg__buf_printf(out, "#define JG_GROUP_M %u\n", key->cfg.group_m);
    jg__buf_printf(out, "#define JG_EPI_BYTES %u\n", key->cfg.epi_bytes);
    jg__buf_printf(out, "#define JG_CLUSTER %u\n", key->cfg.cluster ? key->cfg.cluster : 1);
    if (jg__cfg_n_stack(&key->cfg) > 1)
        jg__buf_printf(out, "#define JG_N_STACK %u\n", jg__cfg_n_stack(&key->cfg));
    jg__buf_printf(out, "#define JG_PROMOTE_PIPE %u\n", key->cfg.promote_chunk);
    jg__buf_printf(out, "#define JG_KS_SMEM %u\n", key->cfg.a_scales_smem);
    jg__buf_printf(out, "#define JG_A_BOX_M %u\n",
                   key->cfg.a_box_m ? key->cfg.a_box_m : key->cfg.block_m);
    if (a_box_runtime(key))
        jg__buf_puts(out, "#define JG_A_BOX_RUNTIME 1\n");
    if (key->a_type == JG_NVFP4)
        jg__buf_printf(out, "#define JG_A_SF_LAYOUT %u\n#define JG_B_SF_LAYOUT %u\n",
                       key->a_sf_layout, key->b_sf_layout);
    if (key->groups)
        jg__buf_printf(out, "#define JG_GROUPS %u\n#define JG_LAYOUT %u\n", key->groups,
                       key->layout);
    if (key->layout == JG_GROUPED_LIST) {
        jg__buf_puts(out, "#define JG_GROUP_MS");
        for (uint32_t g = 0; g < key->groups; ++g)
            jg__buf_printf(out, "%s %lld", g ? "," : "", (long long)key->group_m[g]);
        jg__buf_puts(out, "\n");
    }
    if (key->cfg.swap)
        jg__buf_printf(out, "#define JG_SW_BUFS %u\n", key->cfg.expand_bufs);
}

/* The template of a GEMM key after its prelude, with the wgmma header of
 * its N. */
static void emit_gemm_template(const jg__gemm_key *key, const char *kernel_name, jg__buf *out)
{
    const bool exact = (key->flags & JG_GEMM_FP32_EXACT) != 0;
    const jg__template *t = jg__template_find(key->cfg.swap ? "sm90_nvfp4_swap.cu" : "sm90_gemm.cu");
    if (!t) {
        out->failed = true;
        return;
    }
    /* The wgmma's N: the tile's columns, or swapped, the activation rows loaded */
    const uint32_t mma_n = key->cfg.swap ? (key->cfg.a_box_m ? key->cfg.a_box_m : key->cfg.block_m)
                                         : key->cfg.block_n;
    char wgmma[64];
    snprintf(wgmma, sizeof wgmma, "sm90_wgmma_n%u.cuh", mma_n);
    include_alias alias = {"sm90_wgmma_n.cuh", jg__template_find(wgmma)};
    uint64_t included = 1ull << (unsigned)(t - jg__templates);
    emit_template(out, t, &included, &alias);
    if (exact) { /* the split into the workspace, launched before the GEMM */
        jg__buf_printf(out, "#define JG_SPLIT_NAME %s" JG_SPLIT_SUFFIX "\n", kernel_name);
        jg__buf_printf(out, "#define JG_EXACT_K %lld\n", (long long)key->k);
        emit_named(out, "sm90_split.cu");
    }
}

void jg__emit_gemm(const jg__gemm_key *key, const char *kernel_name, jg__buf *out)
{
    if (key->kind == JG_KIND_QUANT || key->kind == JG_KIND_QUANT_NVFP4) {
        emit_quant(key, kernel_name, out);
        return;
    }
    if (key->kind == JG_KIND_PACK) {
        emit_banner(out, kernel_name);
        emit_named(out, "sm90_pack.cu");
        return;
    }
    if (key->cfg.pre) {
        emit_pre(key, kernel_name, out);
        return;
    }
    emit_gemm_defines(key, kernel_name, false, out);
    emit_gemm_template(key, kernel_name, out);
}

void jg__emit_gemm_spec(const jg__gemm_key *key, bool with_template, jg__buf *out)
{
    emit_gemm_defines(key, JG_SPEC_KERNEL, true, out);
    if (with_template)
        emit_gemm_template(key, JG_SPEC_KERNEL, out);
}

void jg__spec_values(const jg__gemm_key *key, int64_t values[3])
{
    kernel_sizes(key, &values[0], &values[1]);
    values[2] = key->k;
}
