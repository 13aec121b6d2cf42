/* The code generation layer's declarations (src/codegen/): problem to key,
 * plan and CUDA source. It knows no driver, no NVRTC, no disk and no GPU:
 * it includes nothing of the runtime and calls none of its functions
 * (tests/unit/check_layers.py). Not installed. */
#ifndef JG_CODEGEN_H
#define JG_CODEGEN_H

#include "jg_kargs.h"
#include "util/util.h"

/* ---- key.c (and plan_sm90.c's chunking of the pre kernel) ----------------- */

/* Tile rows per band of the grouped tile order unless the planner finds a
 * band that reads less (plan_sm90.c's band_rows); kernel names show others. */
#define JG_BAND_ROWS_DEFAULT 8

/* The planner's choices: everything besides the problem that shapes code. */
typedef struct jg__gemm_config {
    uint32_t block_m, block_n, block_k;
    uint32_t stages;
    uint32_t consumers; /* consumer warpgroups */
    uint32_t cluster;
    uint32_t group_m;   /* tile rows per band of the grouped tile order */
    uint32_t epi_bytes; /* row bytes of an epilogue chunk (TMA store box): 16..128, or a
                         * whole row up to 256 bytes (unswizzled) */
    uint32_t a_box_m;   /* rows of A's TMA box: block_m, or a baked M < block_m rounded up to
                         * 8 (rows past M are neither read nor zero-filled) */
    uint32_t ab_size;   /* bytes of an A/B element: 2, or 1 (e4m3); 0 reads as 2 */
    uint32_t promote_chunk; /* FP8, exact FP32: stages per chunk whose promotions overlap
                             * the next stage's wgmmas (two sets of partial sums); 0: none */
    uint32_t expand_bufs;   /* NVFP4: BF16 buffers the staged stages (block_k = 256 of K
                             * as packed codes and scales) are expanded into; 0: none.
                             * Swap-AB: FP16 pieces (64 of K) of the activation */
    uint32_t swap;          /* NVFP4 swap-AB (sm90_nvfp4_swap.cu): B, the weight, on wgmma's
                             * M side in 64-row tiles, dequantized in registers; block_m
                             * activation rows (8..128, a power of two) on its N side */
    uint32_t a_scales_smem; /* FP8 block scales: A's staged in shared memory a chunk of
                             * stages ahead (1), or loaded from global memory (0) */
    uint32_t ffma_reuse;    /* FP8 block scales: the promotions' FFMAs keep their scale in
                             * the operand-reuse cache, edited in the cubin (sass_patch.c) */
    uint32_t pre;           /* NVFP4 list layout with a workspace (sm90_nvfp4_pre.cu): the CTAs
                             * its baked tile schedule is for (0: another kernel). block_n 128
                             * weight rows; block_m the rows of an activation piece slot (the
                             * tallest chunk, rounded up to a_box_m, the box's rows);
                             * expand_bufs the slots; stages the weight's */
    uint32_t pre_rows;      /* cfg.pre: the most rows of a chunk (jg__pre_chunks) */
    uint32_t swap_ab;       /* dense swap-AB (sm90_gemm.cu, JG_SWAP_AB): D^T = B A^T, the kernel's
                             * rows the problem's N (block_m of them a tile), its columns M
                             * (block_n, wgmma's N); A's box is the problem's B's */
    uint32_t split_k;       /* dense split-K: a cluster of this many CTAs (cluster == split_k)
                             * shares each tile, each over its share of K (0 or 1: none) */
    uint32_t pingpong;      /* dense: the two consumers take whole tiles (block_m rows) in
                             * turn, one's epilogue under the other's wgmmas (JG_PINGPONG) */
    uint32_t soft;          /* JG_SOFT_A | JG_SOFT_B | JG_SOFT_D: the kernel's operands (swap-AB:
                             * A the problem's B) that may take soft loads or, D, direct stores
                             * (sm90_soft.cuh), their pointers or rows not 16-byte aligned */
    uint32_t n_stack;       /* dense, unswapped, without split-K: CTAs of a cluster stacked
                             * along N (cluster = m stack x n_stack), sharing one A tile by
                             * TMA multicast as those stacked along M share B (JG_N_STACK);
                             * 0 or 1: none. Last, in what was padding of jg__gemm_key:
                             * keys with none keep their bytes */
    uint32_t split_ws;      /* dense split-K through the caller's workspace, without clusters:
                             * this many units a tile, each over its share of K (JG_SPLIT_WS;
                             * 0 or 1: none). The plan's launches need a workspace of
                             * jg__split_ws_bytes */
    uint32_t stream_k;      /* with split_ws: the units run stream-K, tile by tile, each CTA
                             * of the grid an equal run of consecutive units (JG_STREAM_K);
                             * the workspace holds a part and a flag per CTA. The count of row
                             * groups R (0: none): 1, one over all tiles; R > 1, the problem's
                             * M spans R tiles and the grid (a multiple of R) makes R groups,
                             * CTA b in group b % R, each over one row of tiles along N */
    uint32_t sk_dp;         /* with split_ws, without stream_k: the tiles of all but the last
                             * one or two waves run whole (data-parallel, the grouped order),
                             * the split only over the rest (JG_SK_DP; JITGEMM_SPLIT_DP=1,
                             * jg__dp_tiles) */
} jg__gemm_config;

enum { JG_SOFT_A = 1u << 0, JG_SOFT_B = 1u << 1, JG_SOFT_D = 1u << 2 };

#define JG_SPLIT_K_MAX 8 /* CTAs of a split-K cluster, at most (portable cluster size) */
#define JG_SPLIT_WS_MAX 16 /* units a tile of split-K through the workspace, at most */
#define JG_SPLIT_ANY (JG_SPLIT_K_MAX + 1) /* jg__target.force_split: any split (JITGEMM_SPLIT=any) */

/* The dense kernel families the planner chooses among: tiles of M x N
 * (64 or 128 rows; 256 rows: TALL, 16-bit operands), swap-AB's tiles of
 * N x M, either with split-K, and plain tiles in ping-pong (a bit each). */
enum {
    JG_FAMILY_PLAIN = 1,
    JG_FAMILY_SWAP = 2,
    JG_FAMILY_SPLIT = 4,
    JG_FAMILY_SWAP_SPLIT = 8,
    JG_FAMILY_TALL = 16,
    JG_FAMILY_PINGPONG = 32,
    JG_FAMILY_ALL = 63,
};

/* The sm_90a planner's measured table (plan_sm90.c), for tests: cell i's
 * class of operands (0: 16-bit; 1: FP8 with tensor or row scales; 2: FP8
 * with block scales), its buckets of M, N and K, and the families it
 * keeps; false past the last cell. *_edges: the buckets' upper edges (a
 * value falls in the first bucket whose edge it does not exceed; past
 * the last, one more). */
typedef struct jg__table_cell_info {
    uint32_t dclass, m, n, k, families;
    const uint32_t *m_edges, *nk_edges;
    size_t m_edge_count, nk_edge_count;
} jg__table_cell_info;
bool jg__sm90_table_cell(size_t i, jg__table_cell_info *out);

/* Rows of D a swap-AB epilogue round stages (JG_SW_EPI_ROWS): 8 times the
 * largest divisor of block_n / 8 up to 4. */
uint32_t jg__swap_epi_rows(uint32_t block_n);

/* sm90_nvfp4_pre.cu's chunks: each group's rows cut into near-equal pieces
 * of at most chunk_rows (up to JG_PRE_CHUNK_MAX, wgmma's widest N), tallest
 * first (ties: lower group, then lower row first), each with its width
 * (below). jg__pre_chunks writes up
 * to max of them and returns how many the problem has (more than max: the
 * kernel does not serve it). jg__pre_balance spreads the n chunks' tiles
 * (chunk-major, tiles_n weight tiles each) over `grid` CTAs, each to the
 * least loaded CTA so far (the costs fall along the chunks), into cta_of
 * (may be NULL); returns the most loaded CTA's cost, in rows (of the
 * chunks' widths). */
#define JG_PRE_CHUNK_MAX 256
#define JG_PRE_MAX_CHUNKS 256 /* chunks a kernel bakes in, at most */
#define JG_PRE_MAX_TILES 8192 /* chunks x weight tiles (16-bit indices, 16 KB of constants) */
#define JG_PRE_MAX_GRID 1024  /* CTAs of a baked schedule, at most (SMs) */
/* Activation rows per TMA box: 32, 64, 128 or 256, the least that holds
 * the tallest chunk's width. One thread issues every box, and the box count
 * paces it: the seeds' four cases took 5-19% less time with boxes chosen so
 * (up to 128) than with boxes of 32 rows, although shorter chunks load rows
 * they do not use; one box of 256 instead of two of 128 took the second
 * case from 81.4 to 77.7 us and left the others as they were (H200,
 * 2026-11-26). */
#define JG_PRE_BOX_MIN 32
#define JG_PRE_BOX_MAX 256
/* Distinct wgmma widths a kernel instantiates its tile for, at most: each
 * costs ~0.3-0.4 s of NVRTC (the seeds' first case, 8 of them, 3.15 s at d693b3a). */
#define JG_PRE_MAX_WIDTHS 8
/* width: wgmma's N the kernel runs the chunk at. Its rows rounded up to 8;
 * where the chunks have more than JG_PRE_MAX_WIDTHS such heights, the
 * next of JG_PRE_MAX_WIDTHS of them (the tallest among them) chosen to pad
 * the fewest rows in all (the kernel loads the rows past a chunk and does
 * not store them). */
typedef struct jg__pre_chunk {
    uint32_t group, row0, rows, width;
} jg__pre_chunk;
uint32_t jg__pre_chunks(const int64_t *group_m, uint32_t groups, uint32_t chunk_rows,
                        jg__pre_chunk *out, uint32_t max);
uint64_t jg__pre_balance(const jg__pre_chunk *chunks, uint32_t n, uint32_t tiles_n, uint32_t grid,
                         uint16_t *cta_of);
/* The pre-pass's workspace: every group's rows, K rounded up to 64, FP16. */
uint64_t jg__pre_workspace_bytes(const int64_t *group_m, uint32_t groups, int64_t k);

/* CTAs of a cluster that stack their tiles along N and share one A tile
 * (TMA multicast): cfg.n_stack, at least 1. */
static inline uint32_t jg__cfg_n_stack(const jg__gemm_config *cfg)
{
    return cfg->n_stack > 1 ? cfg->n_stack : 1;
}

/* CTAs of a cluster that stack their tiles along M and share one B tile
 * (TMA multicast): the cluster's size over its N stack, but 1 for NVFP4
 * swap-AB, whose clusters split K of one tile, and for the pre kernel
 * (cfg.pre), whose CTAs load their whole weight tile (launch.c sizes the
 * weight's TMA box by this: the pair kernel of 83bc822's bench/patches
 * hung on half boxes). */
static inline uint32_t jg__cfg_m_stack(const jg__gemm_config *cfg)
{
    return cfg->swap || cfg->pre || cfg->split_k > 1 || !cfg->cluster
               ? 1
               : cfg->cluster / jg__cfg_n_stack(cfg);
}

#define JG_KIND_QUANT 3
#define JG_KIND_QUANT_NVFP4 4
#define JG_KIND_PACK 5 /* the pack of unaligned operands (sm90_pack.cu) */
#define JG_KEY_FORMAT 17 /* jg__gemm_key.key_format: bumped when the struct changes meaning */

/* Fixed-layout bytes that decide a kernel's source: zeroed, then filled. */
typedef struct jg__gemm_key {
    uint32_t key_format; /* bumped when this struct changes meaning */
    uint32_t kind;       /* 1: dense GEMM, 2: grouped, 3: quantization to e4m3 (JG_KIND_QUANT),
                            4: quantization to NVFP4 (JG_KIND_QUANT_NVFP4), 5: the pack of
                            unaligned operands (JG_KIND_PACK) */
    uint32_t a_type, b_type, c_type, d_type;
    uint32_t flags;      /* JG_GEMM_* that shape code (JG_KEY_CODE_FLAGS) */
    uint32_t scale;      /* jg_scale_mode */
    uint32_t a_sf_layout, b_sf_layout; /* jg_sf_layout of NVFP4 operands (quantization: a_) */
    int64_t m;           /* 0 when M is a run-time argument */
    int64_t n, k;
    jg__gemm_config cfg;
    uint32_t groups;     /* grouped: the groups (and, list layout, their rows) */
    uint32_t layout;     /* 0 dense, else jg_grouped_layout */
    int64_t group_m[JG_GROUPED_MAX_GROUPS];
} jg__gemm_key;

typedef struct jg__hash128 {
    uint64_t lo, hi;
} jg__hash128;

/* A problem normalized for lookup: fields copied into zeroed memory, packed
 * leading dimensions filled in. Used as the plan table's key. */
typedef struct jg__problem_key {
    uint32_t flags;
    uint32_t a_type, b_type, c_type, d_type;
    uint32_t groups; /* 0: dense; else grouped, rows in group_m (list layout) */
    uint32_t layout; /* 0 dense, else jg_grouped_layout */
    uint32_t scale;  /* jg_scale_mode */
    uint32_t a_sf_layout, b_sf_layout; /* jg_sf_layout; 0 unless NVFP4 */
    int64_t m_max;   /* contiguous, masked: the m_max of the layout */
    int64_t m, n, k, lda, ldb, ldc, ldd; /* grouped: m is the total (expected) rows */
    uint32_t packed; /* JG_SOFT_A | JG_SOFT_B: operands read from their copies in a
                      * workspace (jg__pack_problem), rows lda, ldb elements apart */
    int64_t group_m[JG_GROUPED_MAX_GROUPS];
} jg__problem_key;

#define JG_DENSE_KEY_BYTES offsetof(jg__problem_key, group_m)

/* Problem flags that shape a kernel's code (dense JG_GEMM_*; grouped
 * problems share the values of JG_GEMM_B_N_MAJOR and JG_GEMM_UNALIGNED). */
#define JG_KEY_CODE_FLAGS                                                                  \
    (JG_GEMM_M_GENERIC | JG_GEMM_PDL | JG_GEMM_A_M_MAJOR | JG_GEMM_B_N_MAJOR |            \
     JG_GEMM_FP32_EXACT)
_Static_assert((int)JG_GROUPED_B_N_MAJOR == (int)JG_GEMM_B_N_MAJOR &&
                   (int)JG_GROUPED_UNALIGNED == (int)JG_GEMM_UNALIGNED,
               "grouped and dense flags share these bits");

void jg__problem_key_make(const jg_gemm_problem *p, jg__problem_key *out);
/* The problem's operands that may need soft loads or stores: JG_SOFT_A |
 * JG_SOFT_B | JG_SOFT_D in the problem's terms. Those whose leading
 * dimension times the element size is not a multiple of 16 bytes, or
 * every one with JG_GEMM_UNALIGNED; JG_GEMM_FP32_EXACT's A and B never
 * (the GEMM reads the workspace), nor packed ones (p->packed). */
uint32_t jg__problem_soft(const jg__problem_key *p);
/* JG_GEMM_FP32_EXACT: K rounded up to 64, the workspace's part width. */
static inline int64_t jg__exact_kp(int64_t k) { return (k + 63) / 64 * 64; }

/* The pack of unaligned operands (pack.c, templates/sm90_pack.cu): a
 * dense plan whose A or B may take soft loads copies them, when the caller
 * gives a workspace, into it as rows on 128-byte lines, and runs the
 * aligned TMA GEMM over the copies. jg__pack_operands: JG_SOFT_A |
 * JG_SOFT_B, the operands copied: those jg__problem_soft names, in dense
 * 16-bit, FP8 and FP32 (TF32) problems; none for grouped, NVFP4, exact
 * FP32 or already packed problems. jg__pack_args: the workspace for a
 * call of m rows (A's copy first, B's after it, each rows x pitch bytes,
 * pitch a multiple of JG_PACK_PITCH); returns its bytes (0: nothing to
 * pack) and fills *out (may be NULL) for the pointers given (NULL: only
 * the layout). jg__pack_problem: the problem of the GEMM over the copies
 * (the packed operands' leading dimensions the pitch, `packed` set; D and
 * C as in p). jg__pack_key_make: the pack kernel's key (one kernel for
 * every problem: it copies bytes). */
#define JG_PACK_PITCH 128
uint32_t jg__pack_operands(const jg__problem_key *p);
uint64_t jg__pack_args(const jg__problem_key *p, int64_t m, const void *a, const void *b,
                       void *ws, jg_pack_kargs *out);
void jg__pack_problem(const jg__problem_key *p, jg__problem_key *out);
void jg__grouped_key_make(const jg_grouped_problem *p, jg__problem_key *out);
void jg__gemm_key_make(const jg__problem_key *p, const jg__gemm_config *cfg, jg__gemm_key *out);
/* The keys of the quantization kernels of a validated problem (e4m3 reads
 * no field past ld_dst: callers built against the 0.2 header). */
void jg__quant_e4m3_key_make(const jg_quant_problem *p, jg__gemm_key *out);
void jg__quant_nvfp4_key_make(const jg_quant_problem *p, jg__gemm_key *out);
void jg__pack_key_make(jg__gemm_key *out);

/* Everything besides the key bytes that decides the cubin: library version,
 * embedded templates, the backend (its version and options), arch. */
typedef struct jg__salt {
    jg__hash128 h;
} jg__salt;

/* backend_id: what compiles the kernels, with its version and options: the
 * caller's (jg__backend_id in the runtime; code generation asks no
 * compiler), NVRTC's or LLVM's with its catalog. */
jg__salt jg__salt_make(const char *arch, const char *backend_id);
jg__hash128 jg__key_hash(const jg__salt *salt, const void *key, size_t key_len);
void jg__hash_hex(jg__hash128 h, char out[33]);

/* ---- templates (generated), sass_patch.c, emit.c, plan_sm90.c ----------------- */

typedef struct jg__template {
    const char *name; /* file name under templates/ */
    const char *text;
    size_t len;
} jg__template;

extern const jg__template jg__templates[];
extern const size_t jg__templates_count;

const jg__template *jg__template_find(const char *name);
jg__hash128 jg__templates_hash(void);

/* SASS edits after NVRTC (sass_patch.c). jg__sass_ffma_reuse: in FFMA runs
 * of at least min_run instructions in the SASS of `kernel` (section
 * .text.<kernel> of the 64-bit ELF `cubin`), every FFMA R, R, R whose
 * successor reads the same register as operand b keeps it in the reuse
 * cache. Returns the FFMAs changed, or -1 where the ELF or the section is
 * not found or not well formed (the cubin is then unchanged).
 * jg__sass_edit: the edits the key's config asks for, on a compiled
 * kernel; 0 when it asks for none. */
#define JG_SASS_FFMA_MIN_RUN 16 /* shorter FFMA runs are not promotions */
int jg__sass_ffma_reuse(uint8_t *cubin, size_t len, const char *kernel, uint32_t min_run);
int jg__sass_edit(const jg__gemm_key *key, const char *kernel, jg__buf *cubin);
/* The edits' version: part of the cache salt, bumped when they change. */
#define JG_SASS_PATCH_VERSION 1

/* Kernel names encode their parameters; max 127 characters. */
void jg__gemm_kernel_name(const jg__gemm_key *key, const char *arch, char out[128]);
#define JG_PRE_DQ_SUFFIX "_dq" /* the pre-pass's name: the kernel's and this */
#define JG_SPLIT_SUFFIX "_split" /* exact FP32's split kernel: the GEMM's name and this */

/* Writes the self-contained source of a dense GEMM kernel. */
void jg__emit_gemm(const jg__gemm_key *key, const char *kernel_name, jg__buf *out);

/* The LLVM backend's variants (docs/llvm-backend.md): a key's source with M,
 * N and K as values (int globals named below; the list layout's N stays a
 * number) and the kernel named JG_SPEC_KERNEL. Keys that differ in those
 * sizes alone share the variant, whose bitcode is compiled ahead, when the
 * library is built; the backend fixes the values when it makes a kernel.
 * with_template: the whole source (for the build), else the prelude alone,
 * which names the variant (the templates being the build's). */
#define JG_SPEC_KERNEL "jg_spec_kernel"
#define JG_SPEC_M "jg_spec_m"
#define JG_SPEC_N "jg_spec_n"
#define JG_SPEC_K "jg_spec_k"
/* Whether a kernel key takes the forms of 0.7's any-problem work: soft
 * (cp.async) loads or direct stores, MN-major operands, FP32 (TF32 or
 * exact) inputs. The LLVM backend's catalog holds none of them yet. */
static inline bool jg__key_new_forms(const jg__gemm_key *key)
{
    return key->cfg.soft || key->a_type == JG_FP32 ||
           (key->flags & (JG_GEMM_A_M_MAJOR | JG_GEMM_B_N_MAJOR | JG_GEMM_FP32_EXACT)) ||
           (key->groups && (key->flags & JG_GROUPED_B_N_MAJOR));
}
bool jg__spec_supported(const jg__gemm_key *key);
void jg__emit_gemm_spec(const jg__gemm_key *key, bool with_template, jg__buf *out);
/* The values of JG_SPEC_M, _N and _K for a key (0: not a value). */
void jg__spec_values(const jg__gemm_key *key, int64_t values[3]);

typedef struct jg__target {
    const char *arch;     /* "sm_90a" (points at arch_name) */
    char arch_name[16];
    int sm_count;
    int smem_per_block;   /* opt-in maximum of dynamic shared memory */
    /* Clusters of 2..JG_SPLIT_K_MAX CTAs, one CTA per SM, that the GPU
     * holds at once (the driver's answer: its GPCs need not split evenly
     * into clusters); 0 where unknown (offline), read as sm_count / size. */
    uint16_t resident_clusters[JG_SPLIT_K_MAX + 1];
    /* JITGEMM_TILE=MxNxK: only tiles with these sizes (0: any), for
     * experiments and for comparing the planner's choice with others. */
    uint32_t force_m, force_n, force_k;
    uint32_t force_cluster; /* JITGEMM_CLUSTER=1|2 (0: the planner's choice) */
    uint32_t force_ffma_reuse; /* JITGEMM_FFMA_REUSE=0|1, plus one (0: the planner's) */
    uint32_t force_swap;  /* JITGEMM_SWAP=0|1, plus one: dense swap-AB never or only */
    uint32_t force_split; /* JITGEMM_SPLIT=S: dense split-K over S CTAs only (1: none;
                           * JG_SPLIT_ANY: any S from 2) */
    uint32_t force_pingpong; /* JITGEMM_PINGPONG=1: dense ping-pong tiles only */
    uint32_t force_n_stack;  /* JITGEMM_N_STACK=1|2|4: dense tiles stacked along N by this
                              * many CTAs only, where a tile allows it (1: none; 0: the
                              * planner's choice) */
    uint32_t force_split_ws; /* JITGEMM_SPLIT_WS=S (2..JG_SPLIT_WS_MAX): the planner's plan
                              * split into S units a tile through the workspace, where the
                              * problem and tile allow it (jg__split_ws_fits); 1
                              * (JITGEMM_SPLIT_WS=0 or 1): never, also the plan a launch
                              * without a workspace falls back to; 0: the planner's rule
                              * (split_ws_for_clusters in plan_sm90.c) */
    uint32_t force_stream_k; /* JITGEMM_STREAM_K=S (2..JG_SPLIT_WS_MAX): the planner's plan's
                              * tile run stream-K in S units a tile (cfg.stream_k), where it
                              * fits, unless force_split_ws is 1; 1 (JITGEMM_STREAM_K=0 or
                              * 1): never; 0: the planner's rule (stream_k_for_waves) */
    uint32_t force_sk_dp;    /* JITGEMM_SPLIT_DP=1: a forced split (force_split_ws) splits
                              * only the tiles of the last one or two waves, the others
                              * data-parallel first (cfg.sk_dp), its tile up to 256 wide
                              * without C (16-bit operands) */
} jg__target;

/* Chooses tiles, stages, cluster for a valid problem; explains itself on
 * JG_LOGC_PLAN. Returns JG_ERR_UNSUPPORTED_ARCH for arches without tables. */
jg_status jg__plan_gemm_sm90(const jg__target *t, const jg__problem_key *p, const jg__log *log,
                             jg__gemm_config *out);
/* The planner's best `max` configurations (at most JG_PLAN_CANDIDATES_MAX),
 * best first by estimated time; returns how many (0: none fits, or an arch
 * without tables). Tuning (JITGEMM_TUNE) times them on the GPU. */
#define JG_PLAN_CANDIDATES_MAX 8
size_t jg__plan_candidates_sm90(const jg__target *t, const jg__problem_key *p,
                                jg__gemm_config *out, size_t max);
/* Dynamic shared memory of a GEMM kernel: d_type sizes its epilogue's
 * staging, scale (jg_scale_mode) adds row-wise scales' space. */
uint32_t jg__gemm_smem_bytes(const jg__gemm_config *cfg, uint32_t d_type, uint32_t scale);
uint32_t jg__gemm_threads(const jg__gemm_config *cfg);
/* A dense plan's output tiles for m rows (swap-AB: tiles of N x M), as its
 * kernel counts them; clusters stacked along M or N count one unit each. */
uint64_t jg__gemm_units(const jg__gemm_config *cfg, int64_t m, int64_t n);
/* Split-K through the workspace (cfg.split_ws > 1): the bytes a launch's
 * workspace needs for m x n on `grid` CTAs (jg_split_ws_kargs: the split
 * tiles' counts, then from a 256-byte boundary split_ws - 1 FP32 tiles of
 * sums per split tile, every tile but those cfg.sk_dp runs whole; stream-K:
 * a flag and a tile of sums per CTA); 0 for other plans. */
uint64_t jg__split_ws_bytes(const jg__gemm_config *cfg, int64_t m, int64_t n, uint32_t grid);
/* ... where in it the partial sums start, after `counts` counts (the
 * tiles', or stream-K's CTAs' flags) */
static inline uint64_t jg__split_ws_parts_at(uint64_t counts)
{
    return jg__ceil_div(counts * 4, 256) * 256;
}
/* The tiles of `tiles` a grid of `grid` CTAs runs whole before the split
 * ones (cfg.sk_dp; else 0): all but the last one to two waves */
static inline uint64_t jg__dp_tiles(const jg__gemm_config *cfg, uint64_t tiles, uint32_t grid)
{
    const uint64_t waves = grid ? tiles / grid : 0;
    return cfg->sk_dp && waves >= 2 ? (waves - 1) * grid : 0;
}
/* ... and how many counts it holds (one a split tile; stream-K: a flag a
 * CTA) */
static inline uint64_t jg__split_ws_counts(const jg__gemm_config *cfg, uint64_t tiles,
                                           uint32_t grid)
{
    return cfg->stream_k ? grid : tiles - jg__dp_tiles(cfg, tiles, grid);
}
/* Whether split-K through the workspace serves the problem with the
 * configuration's tile: dense BF16, FP16 or FP8 (tensor or row scales),
 * M baked in, K-major operands TMA takes, no PDL, no ping-pong; one CTA's
 * tile at most 176 wide, 128 with C or FP32 D (the last unit's sums of
 * the others' parts: wider tiles touched local memory). */
bool jg__split_ws_fits(const jg__problem_key *p, const jg__gemm_config *cfg);
/* ... and stream-K (cfg.stream_k): 16-bit operands (FP8's promoted sums,
 * carried from unit to unit, spilled: sm90_gemm.cu) */
bool jg__stream_k_fits(const jg__problem_key *p, const jg__gemm_config *cfg);

#endif /* JG_CODEGEN_H */
