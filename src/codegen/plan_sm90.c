/* The sm_90a planner: which tile, how many stages, which tile order.
 *
 * Candidates are every BLOCK_M in {64, 128} (one or two consumer
 * warpgroups) with every BLOCK_N wgmma allows (8..256, step 8: widths that
 * are not powers of two cut wave quantization over the SM count). One rule
 * picks among them: the estimated time
 *
 *     max(compute, memory) + 1/4 min(compute, memory) + waves * tile_overhead
 *
 * (compute and memory overlap, but not perfectly), with compute = waves * tile FLOPs / (SM rate *
 * tile efficiency) and memory = unique bytes / min(HBM bandwidth, active SMs * per-SM bandwidth).
 * Large problems are compute-bound and pick big, efficient tiles; decode
 * problems (small M) are memory-bound and pick tiles that keep enough SMs
 * streaming the weight matrix. JITGEMM_LOG=plan prints the winners. */
#include <stdio.h>
#include <string.h>

#include "codegen/codegen.h"

/* Hopper facts and rates the choices rest on (H100 SXM, measured or datasheet). */
#define SM90_PEAK_FLOPS 800e12 /* dense BF16 reached by good kernels, all SMs (FP8: 2x) */
/* FP8 tiles hold three sets of FP32 accumulators: the promoted sums, and
 * two sets of partial sums so that a stage's wgmmas run while the previous
 * stage is promoted (on H100, 128x128 tiles so pipelined reached 1.2 PFLOP/s
 * where 128x176 ones promoting in turn reached 0.99, 2026-11-22):
 * BLOCK_N stays at or below this so all three fit the consumers' registers.
 * 144 fits (128x144: no local memory, 5 stages) in the leanest kernel
 * (dense, tensor scales, 16-bit D, no C; dense_candidate); 152 spills. A
 * 144-wide tile loads 5.6% fewer bytes per FLOP than a 128-wide one
 * (cuBLASLt's FP8 kernel on H100 is 144x128 with clusters of 2). On H100
 * (2026-11-27, the 50 of 200 random FP8 rows, seed 2204641361, whose plan
 * it changed) 128x144 tiles ran 1.062x as fast as main's plans over 33
 * rows (up to 1.24x), but 0.91-0.94x at K = 1024, and 128x136 ones 0.85x
 * over 8 rows (0.72 at K = 1408): past 128 columns, only 144, and only
 * from K = SM90_FP8_WIDE_MIN_K. */
#define SM90_FP8_MAX_BLOCK_N 144
#define SM90_FP8_LEAN_MAX_BLOCK_N 128 /* past it: the leanest FP8 kernel only */
#define SM90_FP8_WIDE_MIN_K 2048
/* Exact FP32 (JG_GEMM_FP32_EXACT) promotes its TF32 sums the same way
 * (sm90_gemm.cu, JG_EXACT: wgmma's FP32 accumulation truncates, and one
 * accumulator over K lost up to 2e-4 of max |D| at K = 16384), with the
 * same three sets of sums: tiles at most 128 wide, chunks as long. */
#define SM90_EXACT_MAX_BLOCK_N 128
/* FP8 stages per chunk of overlapped promotions: ptxas keeps wgmmas in
 * flight only across straight-line code, so each chunk is unrolled and
 * drains at its end (4, 8 and 16 measured alike; 8 compiles in ~0.45 s). */
#define SM90_FP8_PROMOTE_CHUNK 8
/* FP8 block scales: the promotions' FFMAs keep their scale in the operand
 * reuse cache, edited into the cubin (sass_patch.c; 1-4% on H100's dense
 * rows, 2026-11-22). JITGEMM_FFMA_REUSE overrides. */
#define SM90_FP8_BLOCK_FFMA_REUSE 1
/* Dense FP8 prefill from this K, and dense problems whose rows start off
 * 128-byte lines (off_lines_cluster), from this M: clusters of 2 (search();
 * decode rows and M below 1024 were not measured with them) */
#define SM90_FP8_CLUSTER_MIN_K 16384
#define SM90_CLUSTER_MIN_M 1024
/* FP8 rows off 32-byte sectors: tma_row_cost above this. With 256-byte L2
 * promotion they took clusters of 4, whose CTAs each request a quarter of
 * B (on H100, 2026-11-27, 4096x8192xK: 0.90-0.95x the time of clusters of
 * 2 at K = 16 mod 32). Their maps now promote 128 bytes (tma_promotion,
 * tensormap.c), and on an H200 clusters of 2 ran 1.034x as fast as the
 * clusters of 4 over 29 such rows (1.03-1.12 on the 11 that had clusters
 * of 4, 128x144 tiles in place of 128x128; bench/results/
 * 2026-11-29-h200-tma-promotion), so they take clusters of 2 like rows at
 * 32-byte steps. Clusters of 4 (JITGEMM_CLUSTER=4) need tiles at least
 * SM90_CLUSTER4_MIN_BLOCK_N wide: the GPU holds fewer clusters of 4 than
 * SMs / 4 (GPCs split unevenly), and without the width rule the model took
 * 128x32 tiles for 1346x5760x18512 (3x slower). */
#define SM90_OFF_SECTORS_ROW_COST 1.8
#define SM90_CLUSTER4_MIN_BLOCK_N 128
/* Below SM90_CLUSTER_MIN_M, FP8 rows off 32-byte sectors (16-byte steps)
 * take clusters of 2 from this M: on H100 (forced clusters on random
 * rows) 764x18944x22160 ran 1.40x and 202x4096x12016 1.35x faster
 * on the same tiles, 615x6144x2480 and 450x1536x7664 1.12x and 1.72x with
 * the tiles the planner then took; rows at 32- and 64-byte steps below
 * M = 1024 were 0.84-1.08x (5 of 9 slower), so they keep one CTA. */
#define SM90_OFF_SECTORS_FP8_CLUSTER_MIN_M 129
/* The narrowest box of D's row that the epilogue may store in (rows past
 * 256 bytes; see dense_candidate) */
#define SM90_EPI_MIN_BOX_BYTES 32
/* The measured table: which dense kernel family (plain tiles, swap-AB,
 * split-K, both) was fastest in each cell of a grid of shapes, per class
 * of operands; generated by bench/sweep-families.py from a sweep on the
 * GPU. Cells hold bucket indices: M, N and K up to each edge, the last
 * bucket past the last edge. */
typedef struct sm90_table_cell {
    uint8_t dclass;   /* sm90_dclass() */
    uint8_t m, n, k;  /* buckets */
    uint8_t families; /* JG_FAMILY_* bits the search keeps */
    uint16_t gain;    /* the winner's speed over the plain tiles', x1000 */
} sm90_table_cell;
#include "plan_sm90_table.h"

/* Classes of operands with a table of their own: 16-bit, FP8 with tensor
 * or row scales, FP8 with block scales (no swap-AB), FP32 (TF32). */
static uint8_t sm90_dclass(const jg__problem_key *p)
{
    if (jg__dtype_size(p->a_type) == 2)
        return 0;
    if (p->a_type == JG_FP32)
        return 3;
    return p->scale == JG_SCALE_BLOCK ? 2 : 1;
}

static uint8_t bucket(const uint32_t *edges, size_t n, int64_t v)
{
    uint8_t b = 0;
    while (b < n && v > (int64_t)edges[b])
        ++b;
    return b;
}

/* The table's cell for a dense problem (its M: the hint of an M-generic
 * one), or NULL. */
static const sm90_table_cell *table_cell(const jg__problem_key *p)
{
    const uint8_t dc = sm90_dclass(p);
    const uint8_t mb = bucket(sm90_table_m_edges, JG_ARRAY_LEN(sm90_table_m_edges), p->m);
    const uint8_t nb = bucket(sm90_table_nk_edges, JG_ARRAY_LEN(sm90_table_nk_edges), p->n);
    const uint8_t kb = bucket(sm90_table_nk_edges, JG_ARRAY_LEN(sm90_table_nk_edges), p->k);
    for (size_t i = 0; i < JG_ARRAY_LEN(sm90_table); ++i) {
        const sm90_table_cell *c = &sm90_table[i];
        if (c->dclass == dc && c->m == mb && c->n == nb && c->k == kb)
            return c;
    }
    return NULL;
}

bool jg__sm90_table_cell(size_t i, jg__table_cell_info *out)
{
    if (i >= JG_ARRAY_LEN(sm90_table) || sm90_table[i].dclass > 2)
        return false;
    const sm90_table_cell *c = &sm90_table[i];
    *out = (jg__table_cell_info){c->dclass,
                                 c->m,
                                 c->n,
                                 c->k,
                                 c->families,
                                 sm90_table_m_edges,
                                 sm90_table_nk_edges,
                                 JG_ARRAY_LEN(sm90_table_m_edges),
                                 JG_ARRAY_LEN(sm90_table_nk_edges)};
    return true;
}

/* Dense split-K: each CTA at least this many stages of K (and only where
 * the split adds no wave: split_adds_waves) */
#define SM90_SPLIT_MIN_STAGES 4
/* ... over 2, 4 or 8 CTAs, and 128-row tiles at most this wide: the
 * split's consumers hold 224 registers, and ptxas spilled 8-16 bytes from
 * 192 columns on with clusters of 6, from 216 with 8 (BF16 out) and from
 * 192 with 8 (FP32 out), 208 with FP32 out and C (the SASS test) */
#define SM90_SPLIT_MAX_BLOCK_N 176
/* Long K, few output tiles: split-K over 2 or 4 CTAs (swap-AB or not, the
 * model choosing), in place of the table cell's family, for dense K-major
 * BF16, FP16 and FP8 (tensor or row scales) problems that TMA loads, with
 * K >= SM90_LONG_K_SPLIT_MIN_K whose 128x128 tiles, or swap-AB's tiles if
 * fewer, would fill at most half the SMs. Measured on an H200 (2026-11-28,
 * bench/RESULTS.md "H200 split-K for long K"): over 32 decode-like rows
 * (M 1-432, K 4096-28672), BF16 and FP8 each, JITGEMM_SPLIT=2 or 4 beat the
 * planner's plans (the table's cells, measured on one shape each, mostly
 * plain tiles or swap-AB) where K >= 12288 (1.096 over the 46 rows this
 * rule takes, min 0.79), and mostly lost below K = 8192 (0.96-1.37x the
 * time). The model rates these splits at 0.9-1.0 of the unsplit plans
 * where they ran 0.6-0.8 of their time, so the rule, not the model,
 * chooses the family; the model chooses the split and the tile. */
#define SM90_LONG_K_SPLIT_MIN_K 12288
#define SM90_LONG_K_SPLIT_MAX 4
static bool long_k_split(const jg__target *t, const jg__problem_key *p)
{
    const uint64_t m = (uint64_t)p->m, n = (uint64_t)p->n;
    /* Swap-AB's tiles count too: on an H200, BF16 133x8192x18944 has 128
     * tiles of 128x128 (past half of 132 SMs) but 64 of swap-AB's (N in
     * 128-row tiles, M in one tile), and ran its unsplit plan at 0.45 of
     * cuBLASLt. Swap-AB with split-K tiles M at most SM90_SPLIT_MAX_BLOCK_N
     * wide, FP8 at most SM90_FP8_LEAN_MAX_BLOCK_N (dense_candidate). */
    const uint64_t swap_width =
        jg__dtype_size(p->a_type) == 1 ? SM90_FP8_LEAN_MAX_BLOCK_N : SM90_SPLIT_MAX_BLOCK_N;
    const uint64_t tiles128 = jg__ceil_div(m, 128) * jg__ceil_div(n, 128);
    const uint64_t swap_tiles = jg__ceil_div(n, 128) * jg__ceil_div(m, swap_width);
    const uint64_t tiles = swap_tiles < tiles128 ? swap_tiles : tiles128;
    return !p->groups && (p->a_type == JG_BF16 || p->a_type == JG_FP16 || p->a_type == JG_E4M3) &&
           p->scale != JG_SCALE_BLOCK && !jg__problem_soft(p) &&
           !(p->flags & (JG_GEMM_A_M_MAJOR | JG_GEMM_B_N_MAJOR | JG_GEMM_FP32_EXACT)) &&
           p->k >= SM90_LONG_K_SPLIT_MIN_K && 2 * tiles <= (uint64_t)t->sm_count;
}

/* The families f the problem's kernels can take: FP8 block scales, soft
 * stores of D and MN-major operands rule some out; never none (the plain
 * tiles then). */
static uint32_t family_limits(const jg__problem_key *p, uint32_t f)
{
    const uint32_t swaps = JG_FAMILY_SWAP | JG_FAMILY_SWAP_SPLIT;
    const uint32_t splits = JG_FAMILY_SPLIT | JG_FAMILY_SWAP_SPLIT;
    /* FP8 block scales: no swap-AB; no split-K (next to the block scales'
     * registers, split-K's consumers, at 224 registers, spilled) */
    if (p->scale == JG_SCALE_BLOCK)
        f &= ~(swaps | splits);
    if (jg__problem_soft(p) & JG_SOFT_D) /* swap-AB's epilogue stores D^T by TMA only */
        f &= ~swaps;
    /* No split-K with an MN-major operand: on H200 any_fuzz found wrong
     * sums and an illegal address in split kernels with an M-major A
     * (fp16 862x328x1943, split 2; 1225x1061x2113, split 4), not yet
     * explained. */
    if (p->flags & (JG_GEMM_A_M_MAJOR | JG_GEMM_B_N_MAJOR))
        f &= ~splits;
    /* ping-pong's consumers and epilogue take K-major 16-bit or FP8
     * operands by TMA only */
    if (jg__problem_soft(p) || p->a_type == JG_FP32 ||
        (p->flags & (JG_GEMM_A_M_MAJOR | JG_GEMM_B_N_MAJOR)))
        f &= ~JG_FAMILY_PINGPONG;
    return f ? f : JG_FAMILY_PLAIN;
}

/* The families a dense problem's plan comes from: the table cell's, else
 * the plain tiles (the analytic model alone rated swap-AB and split-K
 * above tiles measured faster). JITGEMM_SWAP and JITGEMM_SPLIT replace the
 * table: each restricts its own choice and leaves the other free;
 * JITGEMM_TILE=256 asks for 256-row tiles, JITGEMM_PINGPONG=1 for
 * ping-pong tiles alone. Swap-AB and split-K take no block scales. *cell: the
 * table's cell that chose, or NULL. */
static uint32_t dense_families(const jg__target *t, const jg__problem_key *p,
                               const sm90_table_cell **cell)
{
    *cell = NULL;
    uint32_t f = JG_FAMILY_PLAIN;
    if (p->groups || p->a_type == JG_NVFP4)
        return f;
    const uint32_t swaps = JG_FAMILY_SWAP | JG_FAMILY_SWAP_SPLIT;
    const uint32_t splits = JG_FAMILY_SPLIT | JG_FAMILY_SWAP_SPLIT;
    if (t->force_swap || t->force_split) {
        f = JG_FAMILY_ALL & ~(JG_FAMILY_TALL | JG_FAMILY_PINGPONG);
        if (t->force_swap == 1)
            f &= ~swaps;
        if (t->force_swap == 2)
            f &= swaps;
        if (t->force_split == 1)
            f &= ~splits;
        if (t->force_split > 1)
            f &= splits;
    } else if ((*cell = table_cell(p)) != NULL)
        f = (*cell)->families;
    if (t->force_m == 256)
        f |= JG_FAMILY_TALL;
    if (t->force_pingpong)
        f = JG_FAMILY_PINGPONG;
    if (t->force_n_stack > 1) /* tiles stacked along N: plain ones, or swap-AB's (JITGEMM_SWAP=1) */
        f = t->force_swap == 2 ? JG_FAMILY_SWAP : JG_FAMILY_PLAIN;
    return family_limits(p, f);
}

/* A table cell's swap-AB or split-K is taken only where the model rates
 * it at most this fraction of the plain tiles' time (search()): on H100
 * (2026-11-27, 200 random BF16 rows, seed 3731095953, the 72 rows the
 * table gave another family, each also timed on plain tiles) the cells'
 * choices ran at 0.990 of the plain tiles (min 0.58: decode rows whose
 * 64x8 swap tiles made 2.3 waves, 237x18432 whose swap tiles made 3 waves
 * to the plain tiles' 2); keeping only the 14 the model rated below 0.95
 * would have given 1.037 (min 0.79). Fitted on those rows: the margin is
 * to be re-measured on fresh seeds (jitgemm-bench --random --family-ab). */
#define SM90_FAMILY_MODEL_MARGIN 0.95
/* ... and where the model rates another family at most this fraction of
 * the cell's plan's time, that family replaces the cell's (search()):
 * swap-AB for any problem, split-K over 2 or 4 CTAs only where K is long
 * (at least SM90_LONG_K_SPLIT_MIN_K, or SM90_MODEL_SURE_SPLIT_MIN_K with
 * at most SM90_MODEL_SURE_SPLIT_MAX_M rows). On an H200 (bench/RESULTS.md
 * "H200 the model's sure families") over 80 random rows (BF16 and FP8,
 * seed 2993662893) where the model was sure of swap-AB or split-K without
 * these bounds: 1.024 of the cells' speed, 29 rows below 0.97 (down to
 * 0.68: 128-row split tiles in place of the cells' 64-row ones at M =
 * 175-800 with K of 1408-5072); the 35 rows within them 1.223 (0.98-1.64):
 * swap-AB alone 1.02-1.24 at M = 340-4526, split-K 0.98-1.64. On rows
 * drawn afresh (seed 1002006613) whose plans these bounds change: 1.202
 * over 40 BF16 rows (0.88-1.67), 1.186 over 27 FP8 ones (0.99-1.79). */
#define SM90_MODEL_SURE 0.8
#define SM90_MODEL_SURE_SPLIT_MAX_M 128
#define SM90_MODEL_SURE_SPLIT_MIN_K 4096
/* ... and for 16-bit operands wherever K >= SM90_MODEL_SURE_SPLIT_16BIT_K:
 * the rows that lost above had K of 1408-5072, while 1079x1024x11008 ran
 * 128x80 plain tiles (117 tiles, the cell's family) at 0.55 of torch.mm,
 * the model rating swap-AB split over a cluster of 2 at 0.72x their time
 * (H200: 64.4 -> 49.9 us). On fresh rows (seed 2238930045) whose plans
 * this bound changes: 1.057x over 24 BF16 rows (0.83-1.31); over 24 FP8
 * tensor-scale rows it would have changed 1.004x (0.85-1.27), hence
 * 16-bit only (bench/results/2026-11-29-h200-planner-rules). */
#define SM90_MODEL_SURE_SPLIT_16BIT_K 8192
/* Where K is long enough for the model's split-K to be trusted (the sure
 * families' bounds, SM90_MODEL_SURE_SPLIT_*). */
static bool split_credible(const jg__problem_key *p)
{
    return p->k >= SM90_LONG_K_SPLIT_MIN_K ||
           (jg__dtype_size(p->a_type) == 2 && p->k >= SM90_MODEL_SURE_SPLIT_16BIT_K) ||
           (p->m <= SM90_MODEL_SURE_SPLIT_MAX_M && p->k >= SM90_MODEL_SURE_SPLIT_MIN_K);
}

/* ... except a cell's swap-AB (without split-K) where M is past a decode
 * tile's 64 rows and the plain tiles would compute more than this fraction
 * of M again in padding rows: on H100 the overruled swap-AB of
 * 145x9216x28080 (plain 128x144 tiles: 256 rows) ran 1.51x faster than the
 * plain tiles,
 * 166x11008x9216 1.30x, and FP8 141x27648x22544 on plain tiles took 2.0x
 * torch's time. Over the rows of two BF16 seeds whose cells chose
 * swap-AB or split-K (69 and 42 rows), this rule gave 1.051 and 1.020 of
 * the plain tiles' speed (min 0.79 and 1.0); overruling by the margin
 * alone 1.034 and 0.995, the cells alone 0.988 and 0.988. Not swap-AB with
 * split-K: on 19 FP8 rows (seed 1769762954) keeping those past 30% padding
 * gave 1.069 (min 0.71), the margin alone 1.117 (min 0.89). */
#define SM90_SWAP_KEEP_PAD 0.3
#define SM90_SWAP_KEEP_MIN_M 64
/* ... and where the cell's plan (plain tiles) pads M past
 * SM90_SWAP_PAD_FROM, swap-AB without a split replaces it where it pads
 * less and the model rates it at most SM90_SWAP_PAD_SURE of the plan's
 * time, past SM90_SWAP_PAD_MIN_M rows. On an H200 (bench/RESULTS.md "H200
 * swap-AB against padding") over rows drawn afresh whose plans it
 * changed (seeds 3684809845, 2489993206): at M = 129-4000 1.18x over 31
 * rows (0.91-1.62), at M = 65-128 1.005x over 49 (0.79-1.27); bounded to
 * M > 128, on rows drawn afresh again (seeds 3686226012, 3048716090):
 * 1.184x over 24 BF16 rows (1.00-1.60), 1.220x over 24 FP8 (0.98-2.13)
 * (from 30% padding, the model at most 1.0). From 15% padding and the
 * model at most 1.05, over the rows of fresh draws whose plans that
 * changed (seeds 91446336, 3210836320): 1.054x over 24 BF16 rows
 * (0.90-1.18) and 1.056x over 24 FP8 (0.91-1.31). */
#define SM90_SWAP_PAD_SURE 1.05
#define SM90_SWAP_PAD_FROM 0.15
#define SM90_SWAP_PAD_MIN_M 128
/* ... and from SM90_SWAP_PAD_ALWAYS padding, swap-AB tiles spanning M in
 * one column replace plain 16-bit tiles whatever the model says, with or
 * without a table cell (swap_against_padding); the waves' stream-K rule may
 * then even out their last wave. The model rated such tiles (148 for
 * 141x18944x7168, 1.1 waves) worse than plain tiles computing 256 rows for
 * 141 in two full waves, which took twice cuBLASLt's time (148.6 us against
 * 77.2, H200). In the family sweeps (H200, bench/results/2026-11-27-h200-
 * family-sweep and 2026-11-29-h200-family-sweep-weak, BF16, M = 129-512)
 * swap-AB beat plain tiles padding M by 35% or more on all 25 shapes. A
 * first form (the model's best swap-AB tile, plain or ping-pong plans, FP8
 * too) ran on an H200 over the rows of a fresh draw it changed (bench/
 * results/2026-11-29-h200-swap-pad-always/): BF16 1.019x over 41 (0.73-1.74;
 * ping-pong plans of 64-row tiles and swap-AB tiles splitting M into
 * columns lost), FP8 0.953x over 30 (its swap-AB tiles split M). This form
 * changes 18 of those 41 BF16 rows: the 13 that ran its kernel there
 * 1.01-1.74x (geomean 1.26; M = 136-193, from 0.48-0.77 of cuBLASLt to
 * 0.84-1.05), 5 not measured with it. Fitted on those rows: to be measured
 * on rows drawn afresh, and on FP16. It also replaces the 15% tier's
 * swap-AB tiles of several columns where the plain tiles they replaced
 * padded M this much: each column read the whole weight again. On the 45
 * rows of a fresh draw that this changed (seed 2210336549, BF16, M =
 * 129-196, H200, bench/results/2026-11-29-h200-swap-pad-columns):
 * 1.053x (0.87-1.40; losers at M = 193-196 with K <= 1536, where one
 * column of 200-wide tiles made fewer tiles than SMs). */
#define SM90_SWAP_PAD_ALWAYS 0.3
/* At M = 128, tall_tiles_for_pairs replaces a pair of 64-row tiles only
 * where the pair is at least this wide, and for 16-bit operands only up to
 * this K (H200, chains of 16, 2026-11-26: bench/RESULTS.md "M = 128") */
#define SM90_TALL_M128_MIN_PAIR_N 96
#define SM90_TALL_M128_MAX_K_16BIT 8192

/* Stages per chunk for K's stages (the kernel unrolls a chunk; stages %
 * chunk more run as a second unrolled copy). Next to three sets of FP32
 * sums, some splits made ptxas spill: at 128x128 with K = 1536 (12 stages),
 * 8 + 4 and 12 spilled 128-384 bytes in every scale mode, 6 + 6 and 4 x 3
 * nothing (seed case 4, row-wise: 16.1 -> 19.0 us as the spill grew, H100
 * 2026-11-22). So: all of them up to 8, else the largest divisor in
 * [4, 8], else 8 and a remainder (17 = 8 + 8 + 1 compiles clean). */
static uint32_t fp8_promote_chunk(uint32_t k_stages, uint32_t most)
{
    if (k_stages <= most)
        return k_stages ? k_stages : 1;
    for (uint32_t d = most; d >= 4; --d)
        if (k_stages % d == 0)
            return d;
    return most;
}
/* Block scales staged in shared memory (stage_a_scales): chunks of at
 * most 6 stages. Next to the staged scales' loads, 64x128 tiles spilled
 * 24 bytes with chunks of 7 (K = 11584: 91 = 7 x 13) and 8 bytes with 8 +
 * 3, none with 4, 5 or 6 (the SASS test's table cells). */
#define SM90_FP8_STAGED_PROMOTE_CHUNK 6
#define SM90_HBM_BYTES_S 3.0e12     /* device-to-device copy, read + write */
#define SM90_SMS_TO_SATURATE 64     /* SMs streaming at once that fill HBM bandwidth */
#define SM90_TILE_OVERHEAD_S 1e-6   /* pipeline fill and epilogue per tile */
#define SM90_OVERLAP_LOSS 0.25      /* share of the shorter of compute/memory not hidden */
#define SM90_L2_TO_SM_BYTES_S 11e12 /* tile loads through L2, all SMs (grouped sweep, H100) */
/* TMA's reads from L2, per SM: a box's 128-byte piece of a row is one
 * request where the row starts on a 128-byte line, more where it straddles
 * lines or 32-byte sectors (tma_row_cost). Rows K elements apart, K not a
 * multiple of 128 bytes, made the same kernels request-bound on H100
 * (ncu, 4096x8192xK, 2026-11-27): FP8 128x128 K = 4784 took 51.6 M
 * requests against 24.0 M at K = 4800 and 506 us against 288, BF16
 * 128x256 K = 4744 744 us against 483 at K = 4736; both at ~0.55 requests
 * per SM cycle (1.41 GHz), cuBLASLt's nvjet kernel (144x128, clusters of
 * 2) at 0.62. */
#define SM90_TMA_REQUESTS_PER_SM_S 7.7e8

enum {
    SM90_MAX_STAGES = 12, /* beyond this, more stages buy no latency hiding */
    SM90_MIN_STAGES = 2,
    SM90_ALIGN_PAD = 1024, /* the kernel aligns its tiles to 1024 bytes */
    SM90_MMA_N_STEP = 8,   /* wgmma N: multiples of 8 ... */
    SM90_MMA_N_MAX = 256,  /* ... up to 256 */
};

/* BLOCK_K choices: one or two 128-byte swizzle atoms (64 16-bit elements)
 * per stage. Each TMA box reads 128 or 256 contiguous bytes of every row:
 * when streaming a weight matrix from HBM, 128-byte pieces of rows 2*K
 * bytes apart waste part of each DRAM burst. Two atoms halve the stages
 * that fit, so big compute-bound tiles keep one. The loss was measured on
 * one-warpgroup decode tiles; 128-row tiles with one atom streamed grouped
 * weights at 2.7 TB/s (H100 sweep, 2026-11-22), so it applies to 64-row
 * tiles only, and not to FP8 ones: their one-atom 64-row decode tiles
 * streamed as fast as 128-row ones or faster (M <= 64, H100 sweep,
 * 2026-11-22). */
static const struct {
    uint32_t block_k;
    double dram_efficiency;
} sm90_block_k[] = {
    {64, 0.80},
    {128, 1.00},
};
/* BLOCK_K in elements of row j of sm90_block_k (its block_k counts 16-bit
 * ones: the same bytes a row for every type) */
static uint32_t sm90_block_k_of(size_t j, uint32_t ab_size)
{
    return sm90_block_k[j].block_k * 2 / ab_size;
}

/* Fewer stages than this cannot cover TMA latency at full wgmma rate. */
#define SM90_STAGES_FOR_FULL_RATE 4.0

/* BLOCK_M choices: rows per consumer warpgroup are one m64 wgmma slab. */
static const struct {
    uint32_t block_m, consumers;
    double efficiency; /* one warpgroup hides less latency than two */
} sm90_block_m[] = {
    {128, 2, 1.00},
    {64, 1, 0.85},
    /* two m64 slabs per consumer (JG_FAMILY_TALL): B's tile serves 256 rows,
     * 16-bit operands, at most SM90_TALL_MAX_BLOCK_N wide (the sums of two
     * slabs in the consumers' registers) */
    {256, 2, 1.00},
    /* three consumers of one m64 slab each (512 threads), for dense 16-bit
     * operands (dense_candidate), as cuBLAS runs on 305x12288x25968 and
     * 172x18944x2112 (H200 profile). As the model's candidates they moved
     * 6.8% of random BF16 rows' plans, which ran 1.034x and 1.032x the
     * plans before over 40 and 55 such rows (H200; 0.84-1.38x: the worst
     * where plain 192-row tiles displace swap-AB at M 146-184), and
     * lifted cuBLASLt's random 200 from 0.982x to 0.985x, its minimum from
     * 0.71x to 0.79x (bench/results/2026-11-29-h200-tile192-tune). */
    {192, 3, 1.00},
};
#define SM90_TALL_MAX_BLOCK_N 160
/* Soft loads (sm90_soft.cuh): every producer thread copies, shifts and
 * keeps more registers, which the consumers give up (216 instead of 232
 * each): their tiles stay this narrow. */
#define SM90_SOFT_MAX_BLOCK_N 192
/* ... and with soft B loads next to two MN-major operands, this narrow (at
 * 192, ptxas spilled one register of the loop state) */
#define SM90_SOFT_MN_MAX_BLOCK_N 128
/* Ping-pong's 128-row tiles: two slabs of sums per consumer, and its own
 * epilogue's registers (128x160 with FP32 out and C spilled) */
#define SM90_PINGPONG_MAX_BLOCK_N 128

/* NVFP4 tiles (sm90_nvfp4.cuh): a stage is 256 of K as packed codes (128
 * bytes a row) and block scales, expanded by the consumers into FP16
 * buffers of 64 of K for the FP16 wgmmas. Tiles lie inside one 128-row
 * block of swizzled scales (BLOCK_M, BLOCK_N <= 128, BLOCK_N divides 128).
 * The expansion (the consumers' ALU work) bounds these kernels: per output
 * it costs (BM + BN) / (BM BN) of the tile, spread over its consumers'
 * threads, so the efficiencies fall with it. On H100 (8a4cfe7) 64x128 with
 * one consumer took 1.5-1.9x the time of 128x128 with two on the seeds'
 * grouped cases and 4096-row prefills, although its waves fit better. */
static const struct {
    uint32_t block_m, block_n, consumers;
    double efficiency;
} sm90_nvfp4_tiles[] = {
    {128, 128, 2, 1.00},
    {128, 64, 2, 0.75},
    {64, 128, 1, 0.55},
    {64, 64, 1, 0.45},
};
enum {
    SM90_NVFP4_BLOCK_K = 256, /* K per stage: 128 packed bytes, 16 row-major scales a row */
    SM90_NVFP4_SF_BYTES = 2 * 2048, /* per stage: A's and B's scales */
    SM90_NVFP4_EXPAND_BUFS = 3,     /* FP16 pieces in flight: expand, wgmma, wgmma */
    /* Swap-AB (sm90_nvfp4_swap.cu), for up to this many activation rows: past
     * them each CTA's expansion of the activation costs more ALU time than
     * the expansion of both operands by the table's tiles */
    SM90_NVFP4_SWAP_MAX_M = 256,
    SM90_NVFP4_SWAP_BLOCK_N = 64,   /* weight rows of a tile (wgmma M) */
    SM90_NVFP4_SWAP_SLAB_N = 128,   /* slabs: 64 weight rows per consumer */
    SM90_NVFP4_SWAP_SLAB_MIN_M = 32, /* slabs: activation rows of a tile */
    SM90_NVFP4_SWAP_SLAB_MAX_M = 64,
    /* slabs: stages of K, at least (H100, against 64-row tiles: 64 stages
     * 10-11% faster at M = 32, 48 and 64 on N = 7168; 28 stages 4-6% faster
     * at M = 128 on N = 4096; 16 stages 6% slower at M = 32, 8 stages 16%
     * slower at M = 64) */
    SM90_NVFP4_SWAP_SLAB_MIN_K_STAGES = 28,
    /* FP16 activation pieces: slots of a stage's 4 pieces, one per consumer
     * (a stage in wgmmas, the next converted), or two where they are small
     * (up to 32 activation rows: 64 KB), so that the converter fills a
     * consumer's next slot while it runs */
    SM90_NVFP4_SWAP_BUFS = 8,
    SM90_NVFP4_SWAP_BUFS2 = 16,
    SM90_NVFP4_SWAP_BUFS2_MAX_M = 32,
};

uint32_t jg__gemm_threads(const jg__gemm_config *cfg)
{
    /* swap-AB: a second converter warpgroup after the consumers */
    return 128 * (cfg->consumers + 1 + (cfg->swap ? 1 : 0));
}

uint64_t jg__gemm_units(const jg__gemm_config *cfg, int64_t m, int64_t n)
{
    const uint64_t rows = cfg->swap_ab ? (uint64_t)n : (uint64_t)m;
    const uint64_t cols = cfg->swap_ab ? (uint64_t)m : (uint64_t)n;
    return jg__ceil_div(rows, (uint64_t)cfg->block_m * jg__cfg_m_stack(cfg)) *
           jg__ceil_div(cols, (uint64_t)cfg->block_n * jg__cfg_n_stack(cfg));
}

uint64_t jg__split_ws_bytes(const jg__gemm_config *cfg, int64_t m, int64_t n, uint32_t grid)
{
    if (cfg->split_ws <= 1)
        return 0;
    const uint64_t tiles = jg__gemm_units(cfg, m, n);
    const uint64_t counts = jg__split_ws_counts(cfg, tiles, grid);
    const uint64_t parts = cfg->stream_k ? grid : counts * (cfg->split_ws - 1);
    return jg__split_ws_parts_at(counts) + parts * cfg->block_m * cfg->block_n * 4;
}

/* Widest tile of one CTA for split-K through the workspace, and with C or
 * FP32 D (see jg__split_ws_fits) */
#define SM90_SPLIT_WS_MAX_N 176
#define SM90_SPLIT_WS_MAX_N_C 128

bool jg__split_ws_fits(const jg__problem_key *p, const jg__gemm_config *cfg)
{
    const uint32_t never = JG_GEMM_M_GENERIC | JG_GEMM_PDL | JG_GEMM_A_M_MAJOR | JG_GEMM_B_N_MAJOR |
                           JG_GEMM_FP32_EXACT;
    const bool c_or_f32 = p->c_type != JG_DTYPE_NONE || p->d_type == JG_FP32;
    return !p->groups && (p->a_type == JG_BF16 || p->a_type == JG_FP16 || p->a_type == JG_E4M3) &&
           p->scale != JG_SCALE_BLOCK && !(p->flags & never) && !jg__problem_soft(p) &&
           !p->packed && !cfg->pingpong && !cfg->soft && !cfg->swap && !cfg->pre &&
           !cfg->expand_bufs &&
           cfg->block_n <= (c_or_f32     ? SM90_SPLIT_WS_MAX_N_C
                            : cfg->sk_dp ? SM90_MMA_N_MAX
                                         : SM90_SPLIT_WS_MAX_N);
}

bool jg__stream_k_fits(const jg__problem_key *p, const jg__gemm_config *cfg)
{
    return p->a_type != JG_E4M3 && jg__split_ws_fits(p, cfg);
}

/* The tile of cfg split into s units through the workspace, without a
 * cluster. */
static void split_through_ws(jg__gemm_config *cfg, uint32_t s)
{
    cfg->split_ws = s;
    cfg->stream_k = 0;
    cfg->sk_dp = 0;
    cfg->split_k = 0;
    cfg->cluster = 1;
    cfg->n_stack = 0;
}

/* JITGEMM_SPLIT_WS=S: the plan's tile, split into S units through the
 * workspace without a cluster, where it fits; other plans as they were.
 * With JITGEMM_SPLIT_DP=1 (16-bit operands) only the tiles of the last one
 * or two waves split, the others run whole first (cfg.sk_dp). */
static void force_split_ws(const jg__target *t, const jg__problem_key *p, jg__gemm_config *cfg)
{
    if (t->force_split_ws <= 1)
        return;
    jg__gemm_config c = *cfg;
    split_through_ws(&c, t->force_split_ws);
    c.sk_dp = t->force_sk_dp && p->a_type != JG_E4M3;
    if (jg__split_ws_fits(p, &c))
        *cfg = c;
}

/* Plain tiles (not swap-AB) whose K a cluster of 2 or 4 CTAs splits, past
 * SM90_SPLIT_WS_MIN_M rows: the same tile and split through the workspace
 * instead (the launch's, where it passes one; else the cluster's plan). On
 * an H200 (bench/RESULTS.md "H200 split-K through the workspace"), over 9
 * BF16 and 4 FP8 such rows of 48 whose cluster split it replaced (seeds
 * 2093747687, 3355072506) 1.13x and 1.09x; on 16 + 16 rows drawn afresh
 * (seeds 267553763, 56021557) 1.169x (1.03-1.33) and 1.088x (0.96-1.26),
 * of cuBLASLt 0.772 -> 0.902 and 0.849 -> 0.924. Swap-AB's cluster splits
 * lost there (0.985x over 15 BF16 rows), and so did every split through
 * the workspace of an unsplit plan on 40 long-K rows (0.98-0.84x at S = 2-4:
 * the splits' stores and sums cost more than the waves they filled). Not
 * where JITGEMM_SPLIT or JITGEMM_SPLIT_WS force the split. */
#define SM90_SPLIT_WS_MIN_M 128
static bool split_ws_for_clusters(const jg__target *t, const jg__problem_key *p,
                                  jg__gemm_config *cfg)
{
    if (t->force_split_ws || t->force_split || cfg->swap_ab || cfg->split_k < 2 ||
        cfg->split_k > 4 || p->m <= SM90_SPLIT_WS_MIN_M || !jg__split_ws_fits(p, cfg))
        return false;
    split_through_ws(cfg, cfg->split_k);
    return true;
}

static uint32_t stage_bytes(const jg__gemm_config *cfg)
{
    if (cfg->pre) /* the weight's codes and scales only */
        return cfg->block_n * 128 + SM90_NVFP4_SF_BYTES / 2;
    if (cfg->expand_bufs) /* NVFP4: packed codes and scales */
        return (cfg->block_m + cfg->block_n) * 128 + SM90_NVFP4_SF_BYTES;
    const uint32_t size = cfg->ab_size ? cfg->ab_size : 2;
    /* soft loads' side slots: 16 bytes per 128-byte row of a soft operand's
     * boxes and 16 per box (of 8 rows at least): 18 a row */
    const uint32_t side_rows = ((cfg->soft & JG_SOFT_A ? cfg->a_box_m : 0) +
                                (cfg->soft & JG_SOFT_B ? cfg->block_n : 0)) *
                               cfg->block_k * size / 128;
    return (cfg->block_m + cfg->block_n) * cfg->block_k * size + 18 * side_rows;
}

/* NVFP4: the FP16 buffers, 64 of K of the tile's rows each; swap-AB: the
 * FP16 pieces of the activation rows and their two mbarriers each. */
static uint32_t expand_bytes(const jg__gemm_config *cfg)
{
    if (cfg->swap)
        return cfg->expand_bufs * (cfg->block_m * 128 + 16);
    return cfg->expand_bufs * cfg->block_n * 128; /* B's rows (A's go to registers) */
}

/* Bytes of A or B per element: NVFP4 counts its e4m3 scale per 16. */
static double ab_bytes(const jg__problem_key *p)
{
    return p->a_type == JG_NVFP4 ? 0.5 + 1.0 / 16 : (double)jg__dtype_size(p->a_type);
}

/* Per consumer warpgroup: staging for the epilogue, as sm90_gemm.cu sizes
 * it (JG_EPI_SUBS, JG_EPI_NBUF): chunks of 64 rows x epi_bytes, as many at
 * once as make a 128-byte row (or the tile's width), in two buffers, or one
 * where a tile's slab stores in one round; then row-wise scales (JG_RS_BYTES:
 * the consumer's rows and the tile's columns, FP32) or A's block scales
 * (JG_KS_BYTES). Swap-AB: one
 * consumer's FP32 accumulators (64 x the activation rows), which the other
 * adds to its own. */
uint32_t jg__swap_epi_rows(uint32_t block_n)
{
    for (uint32_t d = 4; d > 1; --d)
        if (block_n / 8 % d == 0)
            return 8 * d;
    return 8;
}

static uint32_t epilogue_bytes(const jg__gemm_config *cfg, uint32_t d_type, uint32_t scale)
{
    if (cfg->swap) /* a K split (cluster 2) receives the peer's too, and 2 mbarriers */
        return (cfg->cluster > 1 ? 2 : 1) * 64 * 4 * (cfg->a_box_m ? cfg->a_box_m : cfg->block_m) +
               16;
    /* rows per consumer (ping-pong's take whole tiles), in m64 slabs */
    const uint32_t wg_m = cfg->block_m / (cfg->pingpong ? 1 : cfg->consumers), slabs = wg_m / 64;
    uint32_t rounds, buf_bytes;
    if (cfg->swap_ab) { /* rounds of jg__swap_epi_rows rows of D by a slab's 64 columns */
        const uint32_t rows = jg__swap_epi_rows(cfg->block_n);
        rounds = slabs * (cfg->block_n / rows);
        buf_bytes = rows * cfg->epi_bytes;
    } else {
        const uint32_t chunks = cfg->block_n * (uint32_t)jg__dtype_size(d_type) / cfg->epi_bytes;
        const uint32_t fit = cfg->epi_bytes >= 128 ? 1 : 128 / cfg->epi_bytes;
        const uint32_t subs = fit < chunks ? fit : chunks;
        rounds = slabs * ((chunks + subs - 1) / subs);
        buf_bytes = 64 * cfg->epi_bytes * subs;
    }
    const uint32_t bufs = rounds == 1 ? 1 : 2;
    const uint32_t row_scales =
        scale == JG_SCALE_ROW ? (wg_m + cfg->block_n) * 4 : 0;
    /* FP8 block scales staged: two buffers of A's scales for a chunk of
     * stages of the consumer's rows (JG_KS_BYTES) */
    const uint32_t block_scales =
        cfg->a_scales_smem ? 2 * cfg->promote_chunk * wg_m * 4 : 0;
    return cfg->consumers * (bufs * buf_bytes + (row_scales + 15) / 16 * 16 + block_scales);
}

/* sm90_nvfp4_pre.cu: the weight's stages (codes and B's scales), the
 * activation's piece slots, two mbarriers each. */
static uint32_t pre_smem_bytes(const jg__gemm_config *cfg, uint32_t stages, uint32_t slots)
{
    return SM90_ALIGN_PAD + stages * (stage_bytes(cfg) + 16) +
           slots * (cfg->block_m * 128 + 16);
}

uint32_t jg__gemm_smem_bytes(const jg__gemm_config *cfg, uint32_t d_type, uint32_t scale)
{
    if (cfg->pre)
        return pre_smem_bytes(cfg, cfg->stages, cfg->expand_bufs);
    return SM90_ALIGN_PAD + epilogue_bytes(cfg, d_type, scale) + expand_bytes(cfg) +
           cfg->stages * (stage_bytes(cfg) + 16);
}

/* The TMA store box's row: a 128-byte swizzle span where it tiles
 * BLOCK_N's row exactly, else the whole row unswizzled up to 256 bytes (a
 * 240-byte row as 15 boxes of 16 bytes made 128x120 FP8 tiles 13% slower
 * than 128x128 ones on the seeds' second grouped case, H100 2026-11-22),
 * else the widest smaller span that tiles it. */
static uint32_t epi_bytes_for(uint32_t block_n, uint32_t d_type)
{
    uint32_t row = block_n * (uint32_t)jg__dtype_size(d_type);
    if (row % 128 && row <= 256)
        return row;
    for (uint32_t b = 128; b > 16; b /= 2)
        if (row % b == 0)
            return b;
    return 16;
}

/* Rows of A's TMA box. A baked M below the tile (decode) loads M rows,
 * rounded up to whole 8-row swizzle atoms: zero-filled rows past M cost the
 * TMA unit as much as loaded ones (on H100, M = 1 ran 1.4x slower than
 * M = 64 with the whole-tile box). */
static uint32_t a_box_rows(const jg__problem_key *p, uint32_t block_m)
{
    if (p->groups || (p->flags & (JG_GEMM_M_GENERIC | JG_GEMM_A_M_MAJOR)) ||
        p->m >= (int64_t)block_m) /* an M-major A loads whole 64-row slabs */
        return block_m;
    return (uint32_t)jg__ceil_div((uint64_t)p->m, 8) * 8;
}

/* An M-generic plan whose hint is its tile's height loads A in runtime
 * boxes too (launches of M down to half the hint load the boxes their rows
 * need), for 128-row tiles only: boxes of BLOCK_M / 8 rows. On an H200 over
 * 40 BF16 rows of M = 33-128 through plans for hints of 64 and 128 (bench/
 * results/2026-11-29-h200-generic-box): 128-row tiles in boxes of 16 rows
 * 1.067x the whole-tile box (12 rows, 0.96-1.24: 74x11072x8192 ran 58.1 us
 * against 72.0, baked 50.5); 64-row tiles in boxes of 8 rows lost on narrow
 * tiles (down to 0.55x with 64x24 tiles), so they keep the tile's box. */
#define SM90_GENERIC_HINT_BOX_ROWS 16
static bool generic_box_at_hint(const jg__problem_key *p, uint32_t block_m)
{
    return block_m == 8 * SM90_GENERIC_HINT_BOX_ROWS && p->m == (int64_t)block_m;
}

/* A's box rows for an M-generic plan whose hint is below the tile (or at
 * it: generic_box_at_hint): the hint rounded up to a power of two (at
 * least 8), which divides BLOCK_M; the kernel loads as many of these boxes
 * as each tile's rows below the launch's M need (JG_A_BOX_RUNTIME). With
 * the whole tile's box, M-generic decode plans ran at 0.54-0.65 of the
 * baked plans' speed on the same tiles (H100, BF16 M = 1-14 at K =
 * 10240-27648, hints of 1-16): the zero rows cost TMA as loaded ones do. */
static uint32_t generic_a_box_rows(const jg__problem_key *p, uint32_t block_m)
{
    if (generic_box_at_hint(p, block_m))
        return SM90_GENERIC_HINT_BOX_ROWS;
    /* A hint of 1.5 times a power of two (the Python package's buckets) in
     * three boxes of half that power, not one of the next power of two: a
     * hint of 96 on a 128-row tile loads 96 rows, not 128. On an H200 over
     * 40 BF16 rows (M 33-95, hints 48 and 96) whose kernels this changes:
     * 1.094x the M-generic time (hint 48: 1.042, 96: 1.186; 0.96-1.41), the
     * baked plans over the M-generic ones 0.895 -> 0.979; boxes of 16 rows
     * for every hint of 128-row tiles measured alike (1.094x; bench/results/
     * 2026-11-29-h200-generic-half-box). */
    const uint64_t low = (uint64_t)p->m & (uint64_t)-p->m; /* the hint's lowest bit */
    if (p->m > 0 && p->m < (int64_t)block_m && p->m == (int64_t)(3 * low) && low >= 16 &&
        block_m % low == 0)
        return (uint32_t)low;
    uint32_t rows = 8;
    while (rows < block_m && (int64_t)rows < p->m && block_m % (2 * rows) == 0)
        rows *= 2; /* (192-row tiles: boxes of at most 64 rows) */
    return rows;
}

/* Rows of A a tile loads a stage at the planned M (M-generic plans: the
 * hint): whole boxes of a_box_m rows covering the tile's rows below M. */
static uint32_t a_rows_loaded(const jg__problem_key *p, const jg__gemm_config *c)
{
    if (!c->a_box_m)
        return c->block_m;
    const uint64_t rows = p->m < (int64_t)c->block_m ? (uint64_t)p->m : c->block_m;
    const uint64_t boxes = jg__ceil_div(rows ? rows : 1, c->a_box_m);
    return (uint32_t)(boxes * c->a_box_m < c->block_m ? boxes * c->a_box_m : c->block_m);
}

/* A wgmma of width N spends a roughly fixed cost per instruction besides
 * its N columns: narrow tiles reach a smaller share of the peak. A cost of
 * 48 or 64 columns in place of 32 ranked no better on the rows it changed
 * (H200: 0.970-1.007x; bench/results/2026-11-29-h200-model-probes). */
static double width_efficiency(uint32_t block_n)
{
    return (block_n / (block_n + 32.0)) / (256.0 / (256.0 + 32.0));
}

typedef struct estimate {
    uint64_t tiles, waves;
    double compute_s, memory_s, total_s;
    double stream_s; /* the memory time without the last wave's shortfall (stream-K's) */
    uint32_t pair_n; /* tall_tiles_for_pairs: the 64-row pair's width, else 0 */
} estimate;

/* Tiles along M: of the one matrix, or summed over the groups (rows known
 * for the list layout; spread evenly over the groups otherwise). */
static uint64_t tiles_m(const jg__problem_key *p, uint32_t block_m)
{
    if (!p->groups)
        return jg__ceil_div((uint64_t)p->m, block_m);
    /* Rows read on the device: the hints' rows per group (key.c), else an
     * even split of the expected total. */
    uint64_t hinted = 0;
    for (uint32_t g = 0; g < p->groups && g < JG_GROUPED_MAX_GROUPS; ++g)
        hinted |= (uint64_t)p->group_m[g];
    if (p->layout != JG_GROUPED_LIST && !hinted)
        return p->groups * jg__ceil_div(jg__ceil_div((uint64_t)p->m, p->groups), block_m);
    uint64_t n = 0;
    for (uint32_t g = 0; g < p->groups; ++g)
        n += jg__ceil_div((uint64_t)p->group_m[g], block_m);
    return n;
}

/* The rows past M that tiles of `rows` rows compute (tiles_m), as a
 * fraction of M: swap-AB's tiles span M with their columns. */
static double m_padding(const jg__problem_key *p, uint32_t rows)
{
    return (double)(tiles_m(p, rows) * rows - (uint64_t)p->m) / (double)p->m;
}

/* The ranked candidates `from` (n of them) in place of `to`'s. */
static size_t take_ranked(jg__gemm_config *to, estimate *to_est, const jg__gemm_config *from,
                          const estimate *from_est, size_t n)
{
    memcpy(to, from, n * sizeof *to);
    memcpy(to_est, from_est, n * sizeof *to_est);
    return n;
}

/* B matrices read: one, or one per group with rows. */
static double b_matrices(const jg__problem_key *p)
{
    if (!p->groups)
        return 1.0;
    if (p->layout != JG_GROUPED_LIST)
        return p->groups;
    double n = 0;
    for (uint32_t g = 0; g < p->groups; ++g)
        n += p->group_m[g] > 0;
    return n;
}

/* Shallow rings of stages leave loads' latency uncovered. Not so in the
 * NVFP4 kernels (expand_bufs), whose expansion paces them: the expanding
 * kernel ran as fast with 2 staged stages as with 4 on H100, and swap-AB's
 * 128 activation rows with 2 took 1.6x the time of 64 rows with 7 for
 * twice the work (e306b4a, the M = 128 and M = 64 rows on 7168x16384). */
static double stage_efficiency(const jg__gemm_config *c)
{
    if (c->expand_bufs)
        return 1.0;
    return c->stages >= SM90_STAGES_FOR_FULL_RATE ? 1.0 : c->stages / SM90_STAGES_FOR_FULL_RATE;
}

/* Clusters of `cluster` CTAs that run at once: a wave of them. */
static uint64_t clusters_at_once(const jg__target *t, uint32_t cluster)
{
    const uint64_t most = (uint64_t)t->sm_count / cluster;
    const uint64_t told = cluster < JG_ARRAY_LEN(t->resident_clusters)
                              ? t->resident_clusters[cluster] : 0;
    return cluster > 1 && told && told < most ? told : most;
}

/* TMA requests per 128 bytes of a box row, averaged over rows `bytes`
 * apart (their offsets in a 128-byte line cycle through the multiples of
 * bytes mod 128): fitted to the requests and times above (rows 64 bytes
 * off half the time: 1.2 requests; 32-byte steps: 1.8, from the times;
 * 16-byte steps, half the rows off a sector boundary: 2.6). */
static double tma_row_cost(int64_t ld, uint32_t size)
{
    const int64_t bytes = ld * (int64_t)size;
    return bytes % 128 == 0 ? 1.0 : bytes % 64 == 0 ? 1.2 : bytes % 32 == 0 ? 1.8 : 2.6;
}

/* tma_row_cost of A's rows (or B's, `b`) as TMA loads them: 0 where they
 * are soft-loaded, 1 for a single row (it starts where its pointer does). */
static double operand_row_cost(const jg__problem_key *p, uint32_t soft, uint32_t size, bool b)
{
    const uint32_t mn = b ? JG_GEMM_B_N_MAJOR : JG_GEMM_A_M_MAJOR;
    const int64_t rows = p->flags & mn ? p->k : b ? p->n : p->m;
    if (soft & (b ? JG_SOFT_B : JG_SOFT_A))
        return 0;
    return rows > 1 ? tma_row_cost(b ? p->ldb : p->lda, size) : 1.0;
}

/* Compute and memory time overlapped: the longer, plus the share
 * SM90_OVERLAP_LOSS of the shorter not hidden under it. */
static double overlapped_s(double compute_s, double memory_s)
{
    const double hi = compute_s > memory_s ? compute_s : memory_s;
    return hi + SM90_OVERLAP_LOSS * (compute_s + memory_s - hi);
}

static estimate estimate_time(const jg__target *t, const jg__problem_key *p,
                              const jg__gemm_config *c, double efficiency, double dram_efficiency)
{
    estimate e = {0};
    const uint32_t block_m = c->block_m, block_n = c->block_n;
    const uint32_t cluster = c->cluster ? c->cluster : 1, stack = jg__cfg_m_stack(c);
    const uint32_t n_stack = jg__cfg_n_stack(c);
    /* NVFP4 swap-AB: a cluster's CTAs split K */
    const uint32_t k_split = cluster / (stack * n_stack);
    /* A cluster walks stacks of `stack` tiles along M by n_stack along N
     * (the last of a matrix or group may lie past its rows or columns and
     * still costs its time); e.tiles counts CTAs' shares of the work. */
    const uint64_t units =
        tiles_m(p, block_m * stack) * jg__ceil_div((uint64_t)p->n, (uint64_t)block_n * n_stack);
    e.tiles = units * cluster;
    const uint64_t per_wave = clusters_at_once(t, cluster);
    e.waves = jg__ceil_div(units, per_wave);
    double tile_flops = 2.0 * block_m * block_n * (double)p->k / k_split;
    const double stage_eff = stage_efficiency(c);
    /* wgmma's N: the activation rows for NVFP4 swap-AB */
    const uint32_t mma_n = c->swap ? block_m : block_n;
    /* FP8 twice the 16-bit rate, TF32 half of it */
    const double type_rate = c->ab_size == 1 ? 2.0 : c->ab_size == 4 ? 0.5 : 1.0;
    double sm_rate = SM90_PEAK_FLOPS * type_rate / t->sm_count * efficiency *
                     width_efficiency(mma_n) * stage_eff;
    /* Waves, not work: a floor of every tile's FLOPs at a power-capped share
     * of all SMs' rate (padding costing energy) took wider tiles that ran
     * 0.98x and spent 1.02x the energy (H200, model-probes results). */
    e.compute_s = (double)e.waves * tile_flops / sm_rate;
    /* Every tile loads its A and B panels through L2: tiles sharing a panel
     * (B of a group's row tiles) read DRAM once but L2 once each, except
     * that a cluster's CTAs read their B tile (stacked along M) or their A
     * tile (along N) once and multicast it. */
    double l2_bytes = ab_bytes(p) * (double)e.tiles *
                      ((double)a_rows_loaded(p, c) / n_stack + (double)block_n / stack) *
                      (double)p->k / k_split;
    /* p->m is the total rows of every group for a grouped problem. */
    double bytes =
        ab_bytes(p) * ((double)p->m + b_matrices(p) * p->n) * (double)p->k +
        (double)jg__dtype_size(p->d_type) * (double)p->m * p->n * (p->c_type ? 2.0 : 1.0);
    /* Full waves stream at the bandwidth, the last partial wave at what its
     * SMs can draw (fewer than SM90_SMS_TO_SATURATE do not fill HBM). */
    /* the last wave's CTAs: what the full waves before it (per_wave
     * clusters each, fewer than SMs / cluster where the GPU holds fewer)
     * leave; counting those waves as SMs / cluster clusters each had made
     * this negative, wrapped, and the memory time a cancellation's noise
     * (the device's plans, not the offline ones: 118x13824x9216 FP8 took
     * swap-AB split over 8 at twice the plain tiles' time on H100) */
    const uint64_t tail = e.tiles - (e.waves - 1) * per_wave * cluster;
    const double bw = SM90_HBM_BYTES_S * dram_efficiency;
    const double tail_share = (double)tail / (double)e.tiles;
    const double tail_bw =
        bw * (tail < SM90_SMS_TO_SATURATE ? (double)tail / SM90_SMS_TO_SATURATE : 1.0);
    const double l2_s = l2_bytes / SM90_L2_TO_SM_BYTES_S;
    e.memory_s = bytes * (1 - tail_share) / bw + bytes * tail_share / tail_bw;
    if (l2_s > e.memory_s)
        e.memory_s = l2_s;
    e.stream_s = bytes / bw > l2_s ? bytes / bw : l2_s;
    /* TMA requests per SM where rows start off 128-byte lines: 128-byte
     * pieces of A's and B's box rows (soft loads aside), each at its rows'
     * cost; a cluster's CTAs each request their share of B. Rows on lines
     * keep the model the table was measured with (their rate was not). */
    const double a_cost = operand_row_cost(p, c->soft, c->ab_size, false);
    const double b_cost = operand_row_cost(p, c->soft, c->ab_size, true);
    if (a_cost > 1 || b_cost > 1) {
        const double pieces = ab_bytes(p) * (double)p->k / k_split / 128.0;
        const double per_sm = (double)jg__ceil_div(e.tiles, (uint64_t)t->sm_count) * pieces *
                              (a_rows_loaded(p, c) * a_cost / n_stack +
                               (double)block_n / stack * b_cost);
        if (per_sm / SM90_TMA_REQUESTS_PER_SM_S > e.memory_s)
            e.memory_s = per_sm / SM90_TMA_REQUESTS_PER_SM_S;
    }
    e.total_s = overlapped_s(e.compute_s, e.memory_s) + (double)e.waves * SM90_TILE_OVERHEAD_S;
    return e;
}

/* Whether tiles stack along M at all: some matrix or group has more rows
 * than one tile (the M-generic and device layouts are planned for their
 * expected rows). */
static bool pairs_up(const jg__problem_key *p, uint32_t block_m)
{
    if (p->layout == JG_GROUPED_LIST) {
        for (uint32_t g = 0; g < p->groups; ++g)
            if (p->group_m[g] > (int64_t)block_m)
                return true;
        return false;
    }
    return tiles_m(p, block_m) > (p->groups ? p->groups : 1);
}

/* Static shared memory of the kernel: the group table of the layouts whose
 * rows are read on the device (first row, rows, first tile per group). */
static uint32_t static_smem_bytes(const jg__problem_key *p)
{
    return p->layout > JG_GROUPED_LIST ? 12 * p->groups + 64 : 0; /* + alignment */
}

static uint32_t fit_stages(const jg__target *t, const jg__problem_key *p,
                           const jg__gemm_config *cfg)
{
    uint32_t budget = (uint32_t)t->smem_per_block - SM90_ALIGN_PAD -
                      epilogue_bytes(cfg, p->d_type, p->scale) - expand_bytes(cfg) -
                      static_smem_bytes(p);
    uint32_t stages = budget / (stage_bytes(cfg) + 16);
    return stages > SM90_MAX_STAGES ? SM90_MAX_STAGES : stages;
}

/* FP8 block scales: A's go through shared memory where that costs no
 * stage. On H100 (2026-11-22) staging made decode tiles 4-12% faster
 * (64x32, 64x128), but cost 128x128 tiles their sixth stage, or with one
 * epilogue buffer to keep it, made them 4-8% slower below K = 16384. */
static void stage_a_scales(const jg__target *t, const jg__problem_key *p, jg__gemm_config *c)
{
    if (p->scale != JG_SCALE_BLOCK)
        return;
    jg__gemm_config staged = *c;
    staged.a_scales_smem = 1;
    const uint32_t k_stages = (uint32_t)jg__ceil_div(jg__ceil_div((uint64_t)p->k, c->block_k),
                                                     c->split_k > 1 ? c->split_k : 1);
    staged.promote_chunk = fp8_promote_chunk(k_stages, SM90_FP8_STAGED_PROMOTE_CHUNK);
    staged.stages = fit_stages(t, p, &staged);
    if (staged.stages >= c->stages)
        *c = staged;
}

/* Inserts c into the `max` best so far (*found of them), best first; ties
 * go to the earlier candidate. */
static void keep_best(jg__gemm_config *out, estimate *est, size_t *found, size_t max,
                      const jg__gemm_config *c, const estimate *e)
{
    size_t at = *found;
    while (at > 0 && e->total_s < est[at - 1].total_s * (1 - 1e-9))
        --at;
    if (at >= max)
        return;
    size_t last = *found < max ? *found : max - 1;
    memmove(&out[at + 1], &out[at], (last - at) * sizeof *out);
    memmove(&est[at + 1], &est[at], (last - at) * sizeof *est);
    out[at] = *c;
    est[at] = *e;
    if (*found < max)
        ++*found;
}

/* NVFP4 swap-AB: 64 weight rows by the activation rows rounded up to a
 * power of two (at most 128; more rows take more tiles), or by half as many
 * in two tiles, which the estimate prefers where twice the tiles still fit
 * in one wave (M = 128, N = 4096: 128 CTAs of 64 rows instead of 64 of 128).
 * Slabs (bn = 128, 32 to 64 activation rows): a 64-row slab per consumer,
 * the activation converted once per 128 weight rows, K split over clusters
 * of 2 to keep the CTAs; only where those still fill most SMs, and for long
 * K (a short one pays the split's fixed costs). */
static void nvfp4_swap_candidate(const jg__target *t, const jg__problem_key *p, uint32_t bm,
                                 uint32_t bn, jg__gemm_config *out, estimate *est, size_t *found,
                                 size_t max)
{
    if ((t->force_m && t->force_m != bm) || (t->force_n && t->force_n != bn) ||
        (t->force_k && t->force_k != SM90_NVFP4_BLOCK_K))
        return;
    const bool slab = bn == SM90_NVFP4_SWAP_SLAB_N;
    jg__gemm_config c = {.block_m = bm,
                         .block_n = bn,
                         .block_k = SM90_NVFP4_BLOCK_K,
                         .consumers = 2,
                         .cluster = 1,
                         .group_m = JG_BAND_ROWS_DEFAULT,
                         .epi_bytes = epi_bytes_for(SM90_NVFP4_SWAP_BLOCK_N, p->d_type),
                         .ab_size = 2, /* the wgmmas' FP16 */
                         .expand_bufs = bm <= SM90_NVFP4_SWAP_BUFS2_MAX_M && !slab
                                            ? SM90_NVFP4_SWAP_BUFS2
                                            : SM90_NVFP4_SWAP_BUFS,
                         .swap = 1};
    c.a_box_m = a_box_rows(p, bm);
    /* Too few tiles to fill half the SMs (N = 4096 gives 64): clusters of
     * 2 split K between their CTAs, each tile's sums meet through
     * distributed shared memory (JITGEMM_CLUSTER=1 keeps one CTA a tile). */
    const uint64_t tiles = tiles_m(p, bm) * jg__ceil_div((uint64_t)p->n, c.block_n);
    const uint64_t k_stages = jg__ceil_div((uint64_t)p->k, SM90_NVFP4_BLOCK_K);
    if (2 * tiles <= (uint64_t)t->sm_count && k_stages >= 4 && t->force_cluster != 1)
        c.cluster = 2;
    if (slab && (c.cluster != 2 || 2 * tiles < (uint64_t)t->sm_count * 3 / 4 ||
                 k_stages < SM90_NVFP4_SWAP_SLAB_MIN_K_STAGES))
        return;
    c.stages = fit_stages(t, p, &c);
    if (c.stages < SM90_MIN_STAGES && c.cluster > 1 && !slab) { /* the peer's sums do not fit */
        c.cluster = 1;
        c.stages = fit_stages(t, p, &c);
    }
    if (c.stages < SM90_MIN_STAGES)
        return;
    /* the consumers share each tile's rows, hence one consumer's efficiency */
    estimate e = estimate_time(t, p, &c, 0.85, 1.0);
    keep_best(out, est, found, max, &c, &e);
}

static size_t search_nvfp4_swap(const jg__target *t, const jg__problem_key *p,
                                jg__gemm_config *out, estimate *est, size_t max)
{
    uint32_t bm = 8;
    while (bm < 128 && (int64_t)bm < p->m)
        bm *= 2;
    size_t found = 0;
    /* slabs first: the estimate counts no conversion work, and ties keep
     * the earlier candidate */
    for (uint32_t b = bm; b >= bm / 2 && b >= SM90_NVFP4_SWAP_SLAB_MIN_M; b /= 2)
        if (b <= SM90_NVFP4_SWAP_SLAB_MAX_M)
            nvfp4_swap_candidate(t, p, b, SM90_NVFP4_SWAP_SLAB_N, out, est, &found, max);
    nvfp4_swap_candidate(t, p, bm, SM90_NVFP4_SWAP_BLOCK_N, out, est, &found, max);
    if (bm > 8)
        nvfp4_swap_candidate(t, p, bm / 2, SM90_NVFP4_SWAP_BLOCK_N, out, est, &found, max);
    return found;
}

/* Past JG_PRE_MAX_WIDTHS distinct widths (rows rounded up to 8), keep
 * JG_PRE_MAX_WIDTHS of them, the tallest among them, and run each chunk at
 * the narrowest kept width that holds it, the kept ones chosen to pad the
 * fewest rows in all: over the distinct widths w[0] > w[1] > ... (count[i]
 * chunks each), best[v][b] is the least padding of w[0..b) by v kept
 * widths, the last kept one serving w[a..b). The chunks come tallest
 * first, so their widths fall along them. */
static void pre_cap_widths(jg__pre_chunk *c, uint32_t n)
{
    enum { D = JG_PRE_CHUNK_MAX / 8, V = JG_PRE_MAX_WIDTHS };
    uint32_t w[D], count[D], d = 0;
    for (uint32_t i = 0; i < n; ++i) {
        if (d == 0 || w[d - 1] != c[i].width) {
            if (d == D) /* not with the chunks sorted: their widths fall */
                return;
            w[d] = c[i].width;
            count[d++] = 0;
        }
        count[d - 1]++;
    }
    if (d <= V)
        return;
    uint64_t best[V + 1][D + 1];
    uint8_t from[V + 1][D + 1];
    for (uint32_t v = 0; v <= V; ++v)
        for (uint32_t b = 0; b <= d; ++b)
            best[v][b] = v == 0 && b == 0 ? 0 : UINT64_MAX;
    for (uint32_t v = 1; v <= V; ++v)
        for (uint32_t b = 1; b <= d; ++b)
            for (uint32_t a = b; a-- > 0;) {
                if (best[v - 1][a] == UINT64_MAX)
                    continue;
                uint64_t pad = 0; /* w[a] serving w[a..b) */
                for (uint32_t i = a; i < b; ++i)
                    pad += (uint64_t)count[i] * (w[a] - w[i]);
                if (best[v - 1][a] + pad < best[v][b]) {
                    best[v][b] = best[v - 1][a] + pad;
                    from[v][b] = (uint8_t)a;
                }
            }
    uint32_t serve[D]; /* the kept width each distinct one runs at */
    for (uint32_t v = V, b = d; v > 0 && b > 0; b = from[v--][b])
        for (uint32_t i = from[v][b]; i < b; ++i)
            serve[i] = w[from[v][b]];
    for (uint32_t i = 0, k = 0; i < n; ++i) {
        while (w[k] != c[i].width)
            ++k;
        c[i].width = serve[k];
    }
}

uint32_t jg__pre_chunks(const int64_t *group_m, uint32_t groups, uint32_t chunk_rows,
                        jg__pre_chunk *out, uint32_t max)
{
    if (chunk_rows == 0 || chunk_rows > JG_PRE_CHUNK_MAX)
        chunk_rows = JG_PRE_CHUNK_MAX;
    uint32_t n = 0;
    for (uint32_t g = 0; g < groups; ++g) {
        if (group_m[g] <= 0)
            continue;
        /* near-equal pieces: 300 rows as 150 + 150, not 256 + 44 */
        const uint64_t rows = (uint64_t)group_m[g];
        const uint64_t parts = jg__ceil_div(rows, chunk_rows);
        if (n + parts > max) { /* too many to bake: only count them */
            n += (uint32_t)(parts < (uint64_t)UINT32_MAX - n ? parts : UINT32_MAX - n);
            max = 0;
            continue;
        }
        for (uint64_t i = 0, row0 = 0; i < parts; ++i) {
            const uint64_t r = rows / parts + (i < rows % parts);
            out[n++] = (jg__pre_chunk){g, (uint32_t)row0, (uint32_t)r, (uint32_t)(r + 7) / 8 * 8};
            row0 += r;
        }
    }
    /* tallest first; a stable insertion sort keeps groups and rows in order */
    for (uint32_t i = 1; i < n && i < max; ++i) {
        const jg__pre_chunk c = out[i];
        uint32_t j = i;
        for (; j > 0 && out[j - 1].rows < c.rows; --j)
            out[j] = out[j - 1];
        out[j] = c;
    }
    if (n <= max)
        pre_cap_widths(out, n);
    return n;
}

/* A tile's cost: its wgmma width (rows rounded up to wgmma's step, or
 * more), but at least 128 (a shorter tile still streams and dequantizes
 * its 128 weight rows: on H100, 8 groups of 64 rows took 0.77 of the time
 * of 8 of 128), plus 16 for its fill and stores. */
static uint64_t pre_tile_cost(uint32_t width)
{
    return (width > 128 ? width : 128) + 16;
}

uint64_t jg__pre_balance(const jg__pre_chunk *chunks, uint32_t n, uint32_t tiles_n, uint32_t grid,
                         uint16_t *cta_of)
{
    uint64_t load[JG_PRE_MAX_GRID] = {0}, most = 0;
    if (grid == 0 || grid > JG_PRE_MAX_GRID)
        return UINT64_MAX;
    for (uint32_t t = 0; t < n * tiles_n; ++t) {
        uint32_t best = 0;
        for (uint32_t c = 1; c < grid; ++c)
            if (load[c] < load[best])
                best = c;
        load[best] += pre_tile_cost(chunks[t / tiles_n].width);
        if (load[best] > most)
            most = load[best];
        if (cta_of)
            cta_of[t] = (uint16_t)best;
    }
    return most;
}

uint64_t jg__pre_workspace_bytes(const int64_t *group_m, uint32_t groups, int64_t k)
{
    uint64_t rows = 0;
    for (uint32_t g = 0; g < groups; ++g)
        rows += group_m[g] > 0 ? (uint64_t)group_m[g] : 0;
    return rows * jg__ceil_div((uint64_t)k, 64) * 64 * 2;
}

enum {
    SM90_PRE_STAGES = 3,    /* the weight's (5 with 4 slots: no faster on H100) */
    SM90_PRE_MAX_SLOTS = 8, /* activation pieces in the ring, at most */
    SM90_PRE_MIN_SLOTS = 4,
};

/* sm90_nvfp4_pre.cu's time: the busiest CTA's tiles (span, in rows of
 * jg__pre_balance's cost) of 128 weight rows by K at the SM's share of
 * SM90_PEAK_FLOPS (the cost already counts short tiles' and each tile's
 * overhead: case 1 of the seeds, span 408, ran its GEMM in ~126 us on
 * H100/H200, 0.98 of this at efficiency 1), or the weight's, the
 * workspace's and D's bytes at the copy bandwidth if longer (the stream
 * overlaps the wgmmas); then the pre-pass before it, which reads the codes
 * and scales and writes FP16 at about half the copy bandwidth (12 us for
 * 1024 x 7168 on H100). */
static estimate estimate_pre(const jg__target *t, const jg__problem_key *p, uint64_t tiles,
                             uint32_t grid, uint64_t span)
{
    estimate e = {.tiles = tiles, .waves = jg__ceil_div(tiles, grid)};
    const double k64 = (double)jg__ceil_div((uint64_t)p->k, 64) * 64;
    const double rows = (double)p->m; /* every group's */
    const double sm_rate = SM90_PEAK_FLOPS / t->sm_count * 0.95;
    e.compute_s = (double)span * 128 * k64 * 2 / sm_rate;
    const double weight = (double)b_matrices(p) * (double)p->n * k64 * (0.5 + 1.0 / 16);
    const double d = (double)jg__dtype_size(p->d_type) * rows * (double)p->n *
                     (p->c_type ? 2.0 : 1.0);
    e.memory_s = (weight + rows * k64 * 2 + d) / SM90_HBM_BYTES_S;
    const double pre_s = rows * k64 * (0.5 + 1.0 / 16 + 2) / (SM90_HBM_BYTES_S * 0.5);
    e.total_s = (e.compute_s > e.memory_s ? e.compute_s : e.memory_s) + pre_s;
    return e;
}

/* NVFP4, list layout, with a workspace: sm90_nvfp4_pre.cu, where the
 * chunks and tiles fit its baked tables. */
static size_t search_nvfp4_pre(const jg__target *t, const jg__problem_key *p,
                               jg__gemm_config *out, estimate *est, size_t max)
{
    if ((t->force_n && t->force_n != 128) || (t->force_k && t->force_k != SM90_NVFP4_BLOCK_K))
        return 0;
    /* Chunks of up to 256, 128 or 64 rows, whichever balances best: fewer
     * tiles than SMs leave SMs idle (the seeds' third case, 192 + 320 rows
     * by 3072, makes 72 tiles of up to 256 rows, 120 of up to 128). */
    jg__pre_chunk chunks[JG_PRE_MAX_CHUNKS];
    const uint32_t tiles_n = (uint32_t)jg__ceil_div((uint64_t)p->n, 128);
    uint32_t rows = 0, grid = 0;
    uint64_t best = UINT64_MAX;
    for (uint32_t r = JG_PRE_CHUNK_MAX; r >= 64; r /= 2) {
        const uint32_t nr = jg__pre_chunks(p->group_m, p->groups, r, chunks, JG_PRE_MAX_CHUNKS);
        const uint64_t tiles = (uint64_t)nr * tiles_n;
        if (nr == 0 || nr > JG_PRE_MAX_CHUNKS || tiles > JG_PRE_MAX_TILES)
            continue;
        const uint64_t sms = (uint64_t)t->sm_count;
        const uint32_t g = (uint32_t)(tiles < sms ? tiles : sms);
        const uint64_t span = jg__pre_balance(chunks, nr, tiles_n, g, NULL);
        if (span < best) {
            best = span;
            rows = r;
            grid = g;
        }
    }
    if (!rows)
        return 0;
    const uint32_t nr = jg__pre_chunks(p->group_m, p->groups, rows, chunks, JG_PRE_MAX_CHUNKS);
    uint32_t box = JG_PRE_BOX_MIN;
    while (box < chunks[0].width && box < JG_PRE_BOX_MAX)
        box *= 2;
    jg__gemm_config c = {.block_m = (chunks[0].width + box - 1) / box * box,
                         .block_n = 128,
                         .block_k = SM90_NVFP4_BLOCK_K,
                         .consumers = 2,
                         .cluster = 1,
                         .ab_size = 2, /* the wgmmas' FP16 */
                         .a_box_m = box,
                         .stages = SM90_PRE_STAGES,
                         .pre = grid,
                         .pre_rows = rows};
    uint32_t slots = SM90_PRE_MAX_SLOTS;
    while (slots >= SM90_PRE_MIN_SLOTS &&
           pre_smem_bytes(&c, c.stages, slots) > (uint32_t)t->smem_per_block)
        --slots;
    if (slots < SM90_PRE_MIN_SLOTS)
        return 0;
    c.expand_bufs = slots;
    estimate e = estimate_pre(t, p, (uint64_t)nr * tiles_n, grid, best);
    size_t found = 0;
    keep_best(out, est, &found, max, &c, &e);
    return found;
}

/* NVFP4: swap-AB for decode rows; the list layout with a workspace, its
 * kernel; else the table's tiles, cluster 1 (JITGEMM_TILE's M and N apply). */
static size_t search_nvfp4(const jg__target *t, const jg__problem_key *p, jg__gemm_config *out,
                           estimate *est, size_t max)
{
    size_t found = 0;
    if (p->layout == JG_GROUPED_LIST && (p->flags & JG_GROUPED_WORKSPACE) &&
        (found = search_nvfp4_pre(t, p, out, est, max)))
        return found;
    if (!p->groups && p->m <= SM90_NVFP4_SWAP_MAX_M &&
        (found = search_nvfp4_swap(t, p, out, est, max)))
        return found;
    for (size_t i = 0; i < JG_ARRAY_LEN(sm90_nvfp4_tiles); ++i) {
        const uint32_t bm = sm90_nvfp4_tiles[i].block_m, bn = sm90_nvfp4_tiles[i].block_n;
        if ((t->force_m && t->force_m != bm) || (t->force_n && t->force_n != bn) ||
            (t->force_k && t->force_k != SM90_NVFP4_BLOCK_K))
            continue;
        jg__gemm_config c = {.block_m = bm,
                             .block_n = bn,
                             .block_k = SM90_NVFP4_BLOCK_K,
                             .consumers = sm90_nvfp4_tiles[i].consumers,
                             .cluster = 1,
                             .group_m = JG_BAND_ROWS_DEFAULT,
                             .epi_bytes = epi_bytes_for(bn, p->d_type),
                             .ab_size = 2, /* the wgmmas' BF16 */
                             .expand_bufs = SM90_NVFP4_EXPAND_BUFS};
        c.a_box_m = a_box_rows(p, bm);
        c.stages = fit_stages(t, p, &c);
        if (c.stages < SM90_MIN_STAGES)
            continue;
        estimate e = estimate_time(t, p, &c, sm90_nvfp4_tiles[i].efficiency, 1.0);
        keep_best(out, est, &found, max, &c, &e);
    }
    return found;
}

/* The dense search's pass: its cluster size (CTAs stacked along M sharing
 * B), and the size wanted where a tile allows it (pass 0; pass 1 takes
 * cluster 1); whether the candidate is swap-AB (p is then the swapped
 * problem) and over how many CTAs it splits K; the CTAs stacked along N
 * sharing A (forced_n_stack; each of the `cluster` along M: a cluster of
 * cluster x n_stack). */
typedef struct dense_pass {
    int pass;
    uint32_t cluster, max_cluster;
    uint32_t swap_ab, split, pingpong;
    uint32_t families; /* JG_FAMILY_TALL: 256-row tiles too */
    uint32_t n_stack;  /* 0 or 1: none */
} dense_pass;

/* Whether a candidate may stack dp->n_stack tiles along N (sm90_gemm.cu's
 * JG_N_STACK): dense K-major 16-bit or FP8 (tensor or row scales) operands
 * that TMA loads, plain 64- or 128-row tiles, A's box whole (no M-generic
 * boxes by the launch's M), enough tiles along N for one whole stack, and
 * clusters of at most 4 CTAs. */
static bool n_stack_fits(const jg__problem_key *p, const jg__gemm_config *c, const dense_pass *dp,
                         bool generic_box)
{
    if (dp->n_stack <= 1)
        return true;
    const uint32_t size = (uint32_t)jg__dtype_size(p->a_type);
    return dp->split <= 1 && !dp->pingpong && c->block_m != 256 && !p->groups &&
           (size == 2 || size == 1) && p->a_type != JG_NVFP4 && p->scale != JG_SCALE_BLOCK &&
           !(p->flags & (JG_GEMM_A_M_MAJOR | JG_GEMM_B_N_MAJOR | JG_GEMM_FP32_EXACT)) &&
           !(c->soft & (JG_SOFT_A | JG_SOFT_B)) && !generic_box &&
           jg__ceil_div((uint64_t)p->n, c->block_n) >= dp->n_stack &&
           dp->cluster * dp->n_stack <= 4;
}

/* Whether K split over clusters of `split` CTAs makes more waves of them
 * than the unsplit tiles make: the split is to fill idle SMs, not to queue
 * its CTAs. At most SMs / split clusters run at once, so a split adds no
 * wave exactly where all its clusters run at once (tiles past the SMs
 * already take a wave more split in two). The model rated such splits level with the unsplit plans
 * (916x1536x7168 BF16: swap-AB 128x160 over clusters of 8, 576 CTAs in 5
 * waves, 44.1 us against 44.6) where they ran at about half their speed
 * (75.5 us; torch.mm 36.6). On an H200 (bench/results/2026-11-30-h200-
 * split-waves): the 13 rows of bench/split-waves.jsonl (their plans' CTAs
 * in 2-6 waves) ran 1.561x (BF16, 7 rows) and 1.264x (FP8, 6) faster
 * without such splits, JITGEMM_SPLIT=1 1.201x and 1.179x; on the rows
 * drawn afresh whose plans it changes (48 of 26000, seeds 62001, 62002,
 * 62004, 62005) 1.230x over 29 BF16 rows (0.93-2.01) and 1.272x over 19
 * FP8 tensor-scale ones (0.86-2.26), at 0.88-0.93x the energy. Where no
 * split of a split family passes, the family unsplit (search_ranked). */
static bool split_adds_waves(const jg__target *t, uint64_t tiles, uint32_t split)
{
    return tiles > clusters_at_once(t, split);
}

/* The dense candidate of BLOCK_M row i of sm90_block_m, BLOCK_K row j of
 * sm90_block_k and BLOCK_N bn, its stages fitted, and its estimate; false
 * where the dtype, the scale mode, a forced size, the pass's cluster or
 * shared memory rule it out. */
static bool dense_candidate(const jg__target *t, const jg__problem_key *p, size_t i, size_t j,
                            uint32_t bn, const dense_pass *dp, jg__gemm_config *out, estimate *e)
{
    const uint32_t ab_size = (uint32_t)jg__dtype_size(p->a_type);
    const uint32_t split = dp->split > 1 ? dp->split : 1;
    jg__gemm_config c = {.block_m = sm90_block_m[i].block_m,
                         .block_n = bn,
                         .block_k = sm90_block_k_of(j, ab_size),
                         .consumers = dp->pingpong ? 2 : sm90_block_m[i].consumers,
                         .cluster =
                             split > 1 ? split : dp->cluster * (dp->n_stack > 1 ? dp->n_stack : 1),
                         .group_m = JG_BAND_ROWS_DEFAULT,
                         /* swap-AB: rounds of rows of D by a slab's 64 columns */
                         .epi_bytes = dp->swap_ab ? 64 * (uint32_t)jg__dtype_size(p->d_type)
                                                  : epi_bytes_for(bn, p->d_type),
                         .ab_size = ab_size,
                         .promote_chunk = 0,
                         .swap_ab = dp->swap_ab,
                         .split_k = split > 1 ? split : 0,
                         .pingpong = dp->pingpong,
                         .n_stack = dp->n_stack > 1 ? dp->n_stack : 0};
    /* Ping-pong: each consumer holds a whole tile's sums, 64 or 128 rows
     * (FP8's three sets: 64 rows, as many columns as a plain tile) */
    if (dp->pingpong && (c.block_m == 256 || (c.block_m == 128 && (ab_size != 2 ||
                                                                   bn > SM90_PINGPONG_MAX_BLOCK_N))))
        return false;
    const uint64_t k_stages = jg__ceil_div((uint64_t)p->k, c.block_k);
    /* Split-K: every CTA runs at least SM90_SPLIT_MIN_STAGES of K's stages
     * (the last CTA's share may run past K), and only where the split adds
     * no wave (split_adds_waves), unless JITGEMM_SPLIT asks for it. */
    if (split > 1 &&
        (dp->cluster > 1 || k_stages < (uint64_t)split * SM90_SPLIT_MIN_STAGES ||
         (c.block_m == 128 && bn > SM90_SPLIT_MAX_BLOCK_N) ||
         ((!t->force_split || t->force_split == JG_SPLIT_ANY) &&
          split_adds_waves(t, tiles_m(p, c.block_m) * jg__ceil_div((uint64_t)p->n, bn), split))))
        return false;
    const bool exact = (p->flags & JG_GEMM_FP32_EXACT) != 0;
    if (ab_size == 1 || exact) {
        c.promote_chunk =
            fp8_promote_chunk((uint32_t)jg__ceil_div(k_stages, split), SM90_FP8_PROMOTE_CHUNK);
        if (p->scale == JG_SCALE_BLOCK)
            c.ffma_reuse =
                t->force_ffma_reuse ? t->force_ffma_reuse - 1 : SM90_FP8_BLOCK_FFMA_REUSE;
    }
    /* FP8 stages are promoted one by one: 128 of K each at most; with
     * block scales a tile lies inside one 128-column block. */
    if ((ab_size == 1 && (bn > SM90_FP8_MAX_BLOCK_N || c.block_k > 128)) ||
        (exact && bn > SM90_EXACT_MAX_BLOCK_N))
        return false;
    /* 256-row tiles: their own family; 64 and 128 rows unswapped, unsplit: the plain one */
    if (c.block_m == 256 ? !(dp->families & JG_FAMILY_TALL) || ab_size != 2 ||
                               bn > SM90_TALL_MAX_BLOCK_N || dp->swap_ab || split > 1 ||
                               dp->pingpong
                         : !dp->swap_ab && split == 1 && !dp->pingpong &&
                               !(dp->families & JG_FAMILY_PLAIN))
        return false;
    /* 192-row tiles: dense 16-bit problems, at most SM90_TALL_MAX_BLOCK_N
     * wide (a consumer's m64 slab of FP32 sums within its 152 registers);
     * no cluster split, no ping-pong (both are of two consumers) */
    if (c.block_m == 192 && (ab_size != 2 || p->groups || bn > SM90_TALL_MAX_BLOCK_N ||
                             split > 1 || dp->pingpong))
        return false;
    if (p->scale == JG_SCALE_BLOCK && (128 % bn || dp->swap_ab))
        return false;
    if ((t->force_m && t->force_m != c.block_m) || (t->force_n && t->force_n != c.block_n) ||
        (t->force_k && t->force_k != c.block_k) ||
        (dp->pass == 0 && dp->max_cluster > 1 && dp->max_cluster != dp->cluster &&
         dp->n_stack <= 1))
        return false;
    /* Clusters of 2 or 4 split the B tile in 8-row-aligned shares, and only
     * pay off when tiles pair up along M (a dense problem's: at least one
     * tile a CTA). */
    if (dp->cluster > 1 && (bn % (8 * dp->cluster) || !pairs_up(p, c.block_m) ||
                            (!p->groups && tiles_m(p, c.block_m) < dp->cluster) ||
                            (dp->cluster == 4 && bn < SM90_CLUSTER4_MIN_BLOCK_N)))
        return false;
    /* Operands TMA may not take (sm90_soft.cuh): soft B loads are not
     * multicast, D's direct stores leave unswapped tiles, and soft loads
     * keep tiles at most SM90_SOFT_MAX_BLOCK_N wide. An N-major B loads
     * whole 64-column boxes (each CTA of a cluster its share of them). */
    c.soft = jg__problem_soft(p);
    const bool both_mn = (p->flags & JG_GEMM_A_M_MAJOR) && (p->flags & JG_GEMM_B_N_MAJOR);
    if ((c.soft & JG_SOFT_B && dp->cluster > 1 && split == 1) ||
        (c.soft & JG_SOFT_D && dp->swap_ab) ||
        (c.soft & (JG_SOFT_A | JG_SOFT_B) && bn > SM90_SOFT_MAX_BLOCK_N) ||
        (c.soft & JG_SOFT_B && both_mn && bn > SM90_SOFT_MN_MAX_BLOCK_N) ||
        ((p->flags & JG_GEMM_B_N_MAJOR) && bn % (64 * (split > 1 ? 1 : dp->cluster))))
        return false;
    /* M-generic plans for fewer rows than the tile: A's boxes by the
     * launch's M (generic_a_box_rows), for dense K-major TMA-loaded tiles */
    const bool generic_box = (p->flags & JG_GEMM_M_GENERIC) && !p->groups && !dp->swap_ab &&
                             !c.soft && !(p->flags & (JG_GEMM_A_M_MAJOR | JG_GEMM_B_N_MAJOR)) &&
                             (p->m < (int64_t)c.block_m || generic_box_at_hint(p, c.block_m));
    /* FP8 tiles past 128 columns fit their three sets of sums only in the
     * leanest kernel: the SASS test found local memory with row scales, C,
     * FP32 out, soft loads, swap-AB with split-K, ping-pong and grouped
     * layouts at 144. Swap-AB alone fits: 128 rows of N by 144 of M hold
     * the plain 128x144 tile's sums (cuobjdump: 168 registers, no local
     * memory). */
    if (ab_size == 1 && bn > SM90_FP8_LEAN_MAX_BLOCK_N &&
        (bn != SM90_FP8_MAX_BLOCK_N || p->k < SM90_FP8_WIDE_MIN_K || split > 1 || dp->pingpong ||
         p->groups || p->c_type || p->scale != JG_SCALE_TENSOR || jg__dtype_size(p->d_type) != 2 ||
         c.soft))
        return false;
    /* D's rows past 256 bytes that only 16-byte boxes tile (16-bit D, widths
     * of 8 mod 16 past 128): on H100 (JITGEMM_TUNE over the
     * planner's best 4 on 28 BF16 rows of M = 129-2048) every such plain
     * tile lost to the next width that stores in 32-byte boxes or wider:
     * 128x184 1.21x the time of 128x192, 128x248 1.06-1.23x of 128x256,
     * 128x200 1.13-1.14x of 128x208, 128x168 1.02-1.17x of 128x176, while
     * the model rates the narrower tile a few percent faster. */
    if (!dp->swap_ab && c.epi_bytes < SM90_EPI_MIN_BOX_BYTES &&
        bn * jg__dtype_size(p->d_type) > 256)
        return false;
    c.a_box_m = generic_box ? generic_a_box_rows(p, c.block_m) : a_box_rows(p, c.block_m);
    if (!n_stack_fits(p, &c, dp, generic_box))
        return false;
    if (dp->n_stack > 1) /* each CTA loads whole 8-row atoms of A's box */
        c.a_box_m = (uint32_t)jg__ceil_div(c.a_box_m, 8 * dp->n_stack) * 8 * dp->n_stack;
    c.stages = fit_stages(t, p, &c);
    stage_a_scales(t, p, &c);
    /* split-K: the tile's FP32 partials go to the stage ring (JG_SPLIT_K) */
    if (c.stages < SM90_MIN_STAGES ||
        (split > 1 && c.stages * stage_bytes(&c) < c.block_m * c.block_n * 4))
        return false;
    *out = c;
    *e = estimate_time(t, p, &c, sm90_block_m[i].efficiency,
                       c.consumers > 1 || ab_size == 1 ? 1.0 : sm90_block_k[j].dram_efficiency);
    return true;
}

/* A dense problem of 65 to 127 rows takes one 128-row tile of width w (two
 * consumers) in place of two 64-row tiles of width 2w wherever the model
 * ranks those: the same CTAs and bytes, but the second 64-row tile holds
 * only M - 64 rows, and each CTA has one consumer. The model rates the two
 * within a few percent. Measured (H200, chains of 16, bench/RESULTS.md
 * "Between 64 and 128 rows"), the pair lost at M = 65, 80, 96, 100 and
 * 112 by 3-40% on N = 7168 (K = 2048 and 16384) and by 8-23% on N = 2048
 * (K = 4096, M = 65-100), BF16 and FP8, except FP8 at M = 100 on N = 2048
 * (1% ahead). At M = 128, where both 64-row tiles are full, the swap is
 * kept to where it measured faster (bench/RESULTS.md "M = 128"): pairs at
 * least SM90_TALL_M128_MIN_PAIR_N wide (N = 6144-8192: 2-11% on FP8 and
 * on BF16's K = 2048 and 7168; at widths up to 80 the pair won by 2-36%),
 * and for BF16 not past SM90_TALL_M128_MAX_K_16BIT (at K = 16384 BF16's
 * tall tile, with BLOCK_K 64, was 0-2% slower in four runs). The tall tile
 * takes the pair's place in the ranking (its BLOCK_K the one the model
 * prefers) and later copies of it are dropped; where no 128-row tile of
 * half the width is a candidate (N = 4096's 64x72), the ranking stands.
 * Returns the candidates left. */
static size_t tall_tiles_for_pairs(const jg__target *t, const jg__problem_key *p,
                                   jg__gemm_config *out, estimate *est, size_t found)
{
    const bool full = p->m == 128; /* both 64-row tiles full */
    if (p->groups || p->m <= 64 || p->m > 128 ||
        (full && jg__dtype_size(p->a_type) == 2 && p->k > SM90_TALL_M128_MAX_K_16BIT))
        return found;
    for (size_t k = 0; k < found; ++k) {
        if (out[k].block_m != 64 || out[k].block_n % 16 || out[k].swap_ab || out[k].split_k ||
            out[k].n_stack > 1 || (full && out[k].block_n < SM90_TALL_M128_MIN_PAIR_N))
            continue;
        const dense_pass dp = {1, out[k].cluster, 1, 0, 1, 0, JG_FAMILY_PLAIN, 0};
        bool have = false;
        jg__gemm_config best;
        estimate best_e = {0};
        for (size_t i = 0; i < JG_ARRAY_LEN(sm90_block_m); ++i)
            for (size_t j = 0; j < JG_ARRAY_LEN(sm90_block_k); ++j) {
                jg__gemm_config tall;
                estimate e;
                if (sm90_block_m[i].block_m == 128 &&
                    dense_candidate(t, p, i, j, out[k].block_n / 2, &dp, &tall, &e) &&
                    (!have || e.total_s < best_e.total_s)) {
                    have = true;
                    best = tall;
                    best_e = e;
                }
            }
        if (have) {
            est[k].pair_n = out[k].block_n; /* est[k]: the pair's, its place in the ranking */
            out[k] = best;
        }
    }
    size_t kept = 0;
    for (size_t k = 0; k < found; ++k) {
        bool dup = false;
        for (size_t q = 0; q < kept && !dup; ++q)
            dup = out[q].block_m == out[k].block_m && out[q].block_n == out[k].block_n &&
                  out[q].block_k == out[k].block_k && out[q].cluster == out[k].cluster &&
                  out[q].swap_ab == out[k].swap_ab && out[q].split_k == out[k].split_k &&
                  out[q].n_stack == out[k].n_stack;
        if (!dup) {
            out[kept] = out[k];
            est[kept++] = est[k];
        }
    }
    return kept;
}

/* The problem swap-AB's tiles see: its rows N, its columns M, A and B
 * (and their layouts) exchanged. */
static jg__problem_key swapped_problem(const jg__problem_key *p)
{
    jg__problem_key ps = *p;
    ps.m = p->n;
    ps.n = p->m;
    ps.lda = p->ldb;
    ps.ldb = p->lda;
    ps.flags &= ~(uint32_t)(JG_GEMM_A_M_MAJOR | JG_GEMM_B_N_MAJOR);
    if (p->flags & JG_GEMM_A_M_MAJOR)
        ps.flags |= JG_GEMM_B_N_MAJOR;
    if (p->flags & JG_GEMM_B_N_MAJOR)
        ps.flags |= JG_GEMM_A_M_MAJOR;
    return ps;
}

/* The dense candidates of the given families, ranked into out/est (max of
 * them); swap-AB's search runs over the transposed problem (its rows N,
 * its columns M). A wanted cluster size (CTAs stacked along M) applies
 * where some tile allows it (pass 0), or instead, n_stack > 1, the forced
 * clusters stacked along N (forced_n_stack); otherwise cluster 1 (pass 1).
 * Split-K splits over at most split_max CTAs. */
static size_t search_families(const jg__target *t, const jg__problem_key *p, uint32_t families,
                              uint32_t split_max, uint32_t max_cluster, uint32_t n_stack,
                              jg__gemm_config *out, estimate *est, size_t max)
{
    const jg__problem_key ps = swapped_problem(p);
    /* each family's kernel: swap-AB or not, the splits of K, ping-pong */
    static const struct {
        uint32_t family, swap, split_min, split_max, pingpong;
    } kinds[] = {
        {JG_FAMILY_PLAIN | JG_FAMILY_TALL, 0, 1, 1, 0},
        {JG_FAMILY_SWAP, 1, 1, 1, 0},
        {JG_FAMILY_SPLIT, 0, 2, JG_SPLIT_K_MAX, 0},
        {JG_FAMILY_SWAP_SPLIT, 1, 2, JG_SPLIT_K_MAX, 0},
        {JG_FAMILY_PINGPONG, 0, 1, 1, 1},
    };
    size_t found = 0;
    for (int pass = 0; pass < 2 && !found; ++pass) {
        /* pass 0: the M stacks 1..max_cluster, or the forced N stack (by
         * JITGEMM_CLUSTER / it along M, else 1); pass 1: cluster 1 */
        const bool stacked = pass == 0 && n_stack > 1;
        const uint32_t rounds = pass == 0 && !stacked ? max_cluster : 1;
        for (uint32_t round = 0; round < rounds; ++round) {
            const uint32_t cluster = !stacked ? round + 1
                                     : t->force_cluster && t->force_cluster % n_stack == 0
                                         ? t->force_cluster / n_stack
                                         : 1;
            for (size_t f = 0; f < JG_ARRAY_LEN(kinds); ++f)
                for (uint32_t split = kinds[f].split_min;
                     split <= kinds[f].split_max && split <= split_max;
                     split = split < 2 ? split + 1 : 2 * split) {
                    const uint32_t sw = kinds[f].swap;
                    if (!(families & kinds[f].family) ||
                        (t->force_split > 1 && t->force_split < JG_SPLIT_ANY &&
                         split != t->force_split) ||
                        (stacked && (split > 1 || kinds[f].pingpong)))
                        continue;
                    const dense_pass dp = {
                        pass,  cluster,           max_cluster, sw,
                        split, kinds[f].pingpong, families,    stacked ? n_stack : 0};
                    for (size_t i = 0; i < JG_ARRAY_LEN(sm90_block_m); ++i)
                        for (size_t j = 0; j < JG_ARRAY_LEN(sm90_block_k); ++j)
                            for (uint32_t bn = SM90_MMA_N_STEP; bn <= SM90_MMA_N_MAX;
                                 bn += SM90_MMA_N_STEP) {
                                jg__gemm_config c;
                                estimate e;
                                if (dense_candidate(t, sw ? &ps : p, i, j, bn, &dp, &c, &e))
                                    keep_best(out, est, &found, max, &c, &e);
                            }
                }
        }
    }
    return found;
}

/* The cluster size for a dense problem whose A's or B's rows (TMA-loaded)
 * start off 128-byte lines often enough that a kernel's TMA requests, not
 * its wgmmas, set its pace (tma_row_cost): FP8 rows not a multiple of 128
 * bytes apart, 16-bit ones not a multiple of 32; else 1. Clusters share B
 * (each CTA requests its share of B's rows): on H100 (2026-11-27,
 * 4096x8192xK FP8, 128x128 tiles) clusters of 2 took K = 4784 from 509 to
 * 374 us, 4768 from 354 to 334, 4800 from 304 to 293, and K = 4736 (rows
 * on lines) stayed at 282-284; cuBLASLt 280-290. FP8 rows off 32-byte
 * sectors take clusters of 2 too (SM90_OFF_SECTORS_ROW_COST). From M =
 * SM90_CLUSTER_MIN_M (FP8 rows off sectors: clusters of 2 from
 * SM90_OFF_SECTORS_FP8_CLUSTER_MIN_M), K-major operands only: clusters
 * with MN-major ones were not measured. */
static uint32_t off_lines_cluster(const jg__problem_key *p, uint32_t ab_size)
{
    if (p->groups || p->m < SM90_OFF_SECTORS_FP8_CLUSTER_MIN_M ||
        (p->flags & (JG_GEMM_A_M_MAJOR | JG_GEMM_B_N_MAJOR)))
        return 1;
    const uint32_t soft = jg__problem_soft(p);
    const double a = operand_row_cost(p, soft, ab_size, false);
    const double b = operand_row_cost(p, soft, ab_size, true);
    const double worst = a > b ? a : b;
    const double on_pace = ab_size == 1 ? 1.0 : 1.8; /* 16-bit rows 32 bytes apart: 0.95-0.99 */
    const bool off_sectors = ab_size == 1 && worst > SM90_OFF_SECTORS_ROW_COST;
    return (p->m < SM90_CLUSTER_MIN_M ? off_sectors : worst > on_pace) ? 2 : 1;
}

/* The CTAs stacked along N (sharing A) that a dense problem's search takes
 * in place of the clusters stacked along M: JITGEMM_N_STACK=2 or 4, else
 * 0 (none). The planner does
 * not choose them itself: on an H200 (2026-11-28, bench/RESULTS.md "H200
 * clusters stacked along N") the rules it had chosen them by gained
 * little. FP8 rows off 32-byte sectors from M = 129 (1x2 and 2x2, where
 * the model rated them at most 0.9 of the unstacked plan): 1.007 of the
 * unstacked plans' speed over 11 random rows (0.87-1.09). One 64-row tile
 * of rows and K >= 4096 (1x2, 1x4): 0.82-0.84 at 38x1024x5120 (BF16,
 * FP8), 1.24-1.54 at 62x3072x12336, which long_k_split now splits about as
 * fast. Forced on 32 decode-like rows (M 1-432, K 4096-28672) they ran at
 * 0.68-0.72 of cuBLASLt, the planner's own plans at 0.88. */
static uint32_t forced_n_stack(const jg__target *t, const jg__problem_key *p)
{
    return t->force_n_stack > 1 && !p->groups && p->a_type != JG_NVFP4 ? t->force_n_stack : 0;
}

/* What chose a dense plan's family: the table's cell (NULL: none, or
 * forced), and where the model overruled the cell's swap-AB or split-K,
 * that family's estimated time over the plain tiles' (else 0). */
typedef struct family_choice {
    const sm90_table_cell *cell;
    double overruled;
    bool long_k; /* split-K by long_k_split */
    double
        sure; /* the model's family over the cell's: its estimate over the cell plan's (else 0) */
    bool pad; /* ... taken because the cell's plan padded M (SM90_SWAP_PAD_SURE) */
    double pad_always; /* swap-AB taken because the plan padded M this much (else 0) */
    double pad_before; /* the padding of the plan the 15% tier replaced (pad) */
    bool row_tiles;    /* swap-AB over two rows of 64-row plain tiles (swap_over_row_tiles) */
    bool unsplit;      /* a family of splits planned unsplit: each split added waves */
} family_choice;

/* The width of swap-AB tiles spanning M in `cols` columns: M / cols
 * rounded up to 8 (wgmma's N). */
static uint32_t swap_column_width(const jg__problem_key *p, uint64_t cols)
{
    return (uint32_t)(jg__ceil_div(jg__ceil_div((uint64_t)p->m, cols), 8) * 8);
}

/* Swap-AB's unsplit tiles spanning M in `cols` columns
 * (swap_column_width), ranked (at most max); how many. */
static size_t swap_across_m(const jg__target *t, const jg__problem_key *p, uint64_t cols,
                            uint32_t max_cluster, jg__gemm_config *out, estimate *est, size_t max)
{
    jg__target wide = *t;
    wide.force_n = swap_column_width(p, cols);
    return search_families(&wide, p, family_limits(p, JG_FAMILY_SWAP), 1, max_cluster, 0, out,
                           est, max);
}

/* Whether a switch forces the plan's family, tile rows or columns, or its
 * cluster (JITGEMM_SWAP, _SPLIT, _PINGPONG, _TILE's M or N, _N_STACK of 2 or
 * 4, _CLUSTER): the rules that would replace the planner's choice stand
 * aside. */
static bool family_forced(const jg__target *t)
{
    return t->force_swap || t->force_split || t->force_pingpong || t->force_m || t->force_n ||
           t->force_n_stack > 1 || t->force_cluster;
}

/* The ranked plans `all` (found of them) replaced by swap-AB's without a
 * split where their first, plain 16-bit tiles, pads M by
 * SM90_SWAP_PAD_ALWAYS or more, or where the 15% tier took swap-AB tiles
 * of several columns over plain tiles padding M that much, by swap-AB's
 * tiles spanning M in one column (the planner's switches untouched);
 * returns the candidates then ranked. */
static size_t swap_against_padding(const jg__target *t, const jg__problem_key *p,
                                   uint32_t max_cluster, jg__gemm_config *all, estimate *all_est,
                                   size_t found, family_choice *why)
{
    enum { RANKED = 2 * JG_PLAN_CANDIDATES_MAX };
    /* a plan of several columns of swap-AB tiles from the 15% tier, too */
    const bool columns = why->pad && all[0].swap_ab && all[0].block_n < p->m;
    if (!found || (all[0].swap_ab && !columns) || all[0].split_k > 1 || all[0].pingpong ||
        p->groups ||
        jg__dtype_size(p->a_type) != 2 || p->m <= SM90_SWAP_PAD_MIN_M || family_forced(t))
        return found;
    const double pad = columns ? why->pad_before : m_padding(p, all[0].block_m);
    if (pad < SM90_SWAP_PAD_ALWAYS)
        return found;
    jg__gemm_config alt[RANKED];
    estimate alt_est[RANKED];
    const size_t n = swap_across_m(t, p, 1, max_cluster, alt, alt_est, RANKED);
    /* ... as many as half the SMs at least (the rows it was measured on had
     * 72 or more on 132 SMs; fewer leave SMs idle, and stream-K passes them by) */
    if (!n || !alt[0].swap_ab || 2 * jg__gemm_units(&alt[0], p->m, p->n) < (uint64_t)t->sm_count)
        return found;
    why->pad_always = pad;
    return take_ranked(all, all_est, alt, alt_est, n);
}

static bool swap_pairs_share_weight(const jg__target *t, const jg__problem_key *p,
                                    jg__gemm_config *plan, estimate *e);

/* Keeps the `max` best configurations by estimated time, best first (ties
 * go to the earlier candidate: wider tiles re-read A less). Returns how
 * many it found. */
static size_t search_ranked(const jg__target *t, const jg__problem_key *p, jg__gemm_config *out,
                            estimate *est, size_t max, family_choice *why)
{
    const sm90_table_cell **cell = &why->cell;
    *cell = NULL;
    why->overruled = 0;
    why->long_k = false;
    why->sure = 0;
    why->pad = false;
    why->pad_always = 0;
    why->pad_before = 0;
    why->row_tiles = false;
    why->unsplit = false;
    if (p->a_type == JG_NVFP4)
        return search_nvfp4(t, p, out, est, max);
    /* JG_GEMM_FP32_EXACT: the GEMM runs three passes over the workspace's
     * TF32 parts (rows of 2 KP floats, 16-byte aligned) */
    jg__problem_key exact;
    if (!p->groups && (p->flags & JG_GEMM_FP32_EXACT)) {
        const int64_t kp = jg__exact_kp(p->k);
        exact = *p;
        exact.k = 3 * kp;
        exact.lda = exact.ldb = 2 * kp;
        p = &exact;
    }
    const uint32_t ab_size = (uint32_t)jg__dtype_size(p->a_type);
    /* A longer ranking, then its head: tall_tiles_for_pairs may merge
     * candidates (at most pairwise), and fewer asked for must still be the
     * same ones. */
    enum { RANKED = 2 * JG_PLAN_CANDIDATES_MAX };
    jg__gemm_config all[RANKED];
    estimate all_est[RANKED];
    size_t found = 0;
    /* Clusters of 2 are opt-in (JITGEMM_CLUSTER=2), except for dense FP8
     * with K >= SM90_FP8_CLUSTER_MIN_K: on H100 they measured within
     * run-to-run noise of cluster 1 on the dense BF16 rows or slower, and
     * slower on the grouped seeds and the shorter FP8 rows (2026-11-22,
     * RESULTS.md), while the model credits them with the L2 traffic they
     * save. FP8's 128x128 tiles load the most bytes per FLOP, and over
     * K = 16384 multicasting B took 4096x7168x16384 from 0.925 to 0.98 of
     * cuBLASLt (861 -> 811 us; square8192, K = 8192: 0.99 -> 0.96). Rows
     * off 128-byte lines: see off_lines_cluster. */
    const uint32_t off_lines = off_lines_cluster(p, ab_size);
    const uint32_t max_cluster =
        t->force_cluster ? t->force_cluster
        : off_lines > 1  ? off_lines
        : (!p->groups && p->m >= SM90_CLUSTER_MIN_M && ab_size == 1 &&
           p->k >= SM90_FP8_CLUSTER_MIN_K)
            ? 2
            : 1;
    const uint32_t n_stack = forced_n_stack(t, p);
    /* The families dense_families allows, else (none of their candidates
     * fits: a split where the tiles fill the GPU) the plain tiles. */
    uint32_t families = dense_families(t, p, cell);
    uint32_t split_max = JG_SPLIT_K_MAX;
    if (!t->force_swap && !t->force_split && !t->force_pingpong && !t->force_m && !n_stack &&
        long_k_split(t, p)) {
        *cell = NULL;
        why->long_k = true;
        families = JG_FAMILY_SPLIT | JG_FAMILY_SWAP_SPLIT;
        split_max = SM90_LONG_K_SPLIT_MAX;
    }
    found = search_families(t, p, families, split_max, max_cluster, n_stack, all, all_est, RANKED);
    /* no split that fills the SMs without adding waves (split_adds_waves):
     * the same families unsplit */
    if (!found && (families & (JG_FAMILY_SPLIT | JG_FAMILY_SWAP_SPLIT))) {
        const uint32_t unsplit = (families & ~(JG_FAMILY_SPLIT | JG_FAMILY_SWAP_SPLIT)) |
                                 (families & JG_FAMILY_SPLIT ? JG_FAMILY_PLAIN : 0) |
                                 (families & JG_FAMILY_SWAP_SPLIT ? JG_FAMILY_SWAP : 0);
        found = search_families(t, p, family_limits(p, unsplit), split_max, max_cluster, n_stack,
                                all, all_est, RANKED);
        why->unsplit = found > 0;
    }
    if (!found && families != JG_FAMILY_PLAIN) {
        *cell = NULL;
        why->long_k = false;
        found = search_families(t, p, JG_FAMILY_PLAIN, JG_SPLIT_K_MAX, max_cluster, n_stack, all,
                                all_est, RANKED);
    }
    /* A cell's swap-AB, split-K or 256-row tiles stand only where the
     * model, which knows this shape's waves and padding, also rates them
     * at most SM90_FAMILY_MODEL_MARGIN of the plain tiles' time: a cell's
     * family was measured on one shape, and its neighbours' waves differ.
     * (256-row tiles: on H100, 2026-11-27, the three random BF16 rows that
     * two cells gave them ran at 0.56, 0.61 and 0.90 of 128-row tiles'
     * speed, 525x3584x10944 and 618x2560x13424 with 3 tiles of 256 rows
     * for 2.05 and 2.4 tiles' worth; the model rated them 1.34, 1.38 and
     * 1.18x the plain tiles' time.) */
    if (found && *cell && !(families & (JG_FAMILY_PLAIN | JG_FAMILY_PINGPONG)) &&
        (families &
         (JG_FAMILY_SWAP | JG_FAMILY_SPLIT | JG_FAMILY_SWAP_SPLIT | JG_FAMILY_TALL))) {
        jg__gemm_config plain[RANKED];
        estimate plain_est[RANKED];
        const size_t n = search_families(t, p, JG_FAMILY_PLAIN, JG_SPLIT_K_MAX, max_cluster, 0,
                                         plain, plain_est, RANKED);
        /* a swap-AB plan is rated as the pair swap_pairs_share_weight makes
         * of it, where it does (H200, the rows this changed against the
         * unpaired rating: 1.017x over 32 BF16 rows, 1.024x over 24 FP8
         * ones at 0.969x the energy; bench/results/2026-11-29-h200-planner-
         * rules) */
        jg__gemm_config pair = all[0];
        estimate pair_est;
        double cell_s = all_est[0].total_s;
        if (swap_pairs_share_weight(t, p, &pair, &pair_est) && pair_est.total_s < cell_s)
            cell_s = pair_est.total_s;
        const double ratio = n ? cell_s / plain_est[0].total_s : 1.0;
        /* rows the plain tiles would pad past SM90_SWAP_KEEP_PAD of M:
         * the cell's swap-AB stays (the model underrates what it saves) */
        const double pad = n ? m_padding(p, plain[0].block_m) : 0;
        const bool swap = families & JG_FAMILY_SWAP;
        if (n && ratio > SM90_FAMILY_MODEL_MARGIN &&
            !(swap && p->m > SM90_SWAP_KEEP_MIN_M && pad > SM90_SWAP_KEEP_PAD)) {
            why->overruled = ratio;
            found = take_ranked(all, all_est, plain, plain_est, n);
        }
    }
    /* Where the model is sure (another family at most SM90_MODEL_SURE of
     * the cell's plan's time), its swap-AB or split-K over 2 or 4 CTAs
     * replaces the cell's plan: the cells hold one shape each. */
    if (found && *cell && !why->overruled && !t->force_pingpong && !t->force_m &&
        t->force_n_stack <= 1) {
        jg__gemm_config alt[RANKED];
        estimate alt_est[RANKED];
        const bool long_k = split_credible(p);
        const uint32_t others = family_limits(
            p, JG_FAMILY_PLAIN | JG_FAMILY_SWAP |
                   (long_k ? JG_FAMILY_SPLIT | JG_FAMILY_SWAP_SPLIT : 0));
        const size_t n = search_families(t, p, others, SM90_LONG_K_SPLIT_MAX, max_cluster, 0, alt,
                                         alt_est, RANKED);
        const double ratio = n ? alt_est[0].total_s / all_est[0].total_s : 1.0;
        if (n && ratio <= SM90_MODEL_SURE && (alt[0].swap_ab || alt[0].split_k > 1)) {
            why->sure = ratio;
            found = take_ranked(all, all_est, alt, alt_est, n);
        } else if (!all[0].swap_ab && p->m > SM90_SWAP_PAD_MIN_M &&
                   m_padding(p, all[0].block_m) > SM90_SWAP_PAD_FROM) {
            /* the plan pads M past SM90_SWAP_PAD_FROM: swap-AB (no split)
             * where it pads less and the model rates it at most
             * SM90_SWAP_PAD_SURE of the plan's time */
            const size_t ns = search_families(t, p, family_limits(p, JG_FAMILY_SWAP), 1,
                                              max_cluster, 0, alt, alt_est, RANKED);
            const double r = ns ? alt_est[0].total_s / all_est[0].total_s : 1.0;
            if (ns && alt[0].swap_ab && r <= SM90_SWAP_PAD_SURE &&
                m_padding(p, alt[0].block_n) < m_padding(p, all[0].block_m)) {
                why->sure = r;
                why->pad = true;
                why->pad_before = m_padding(p, all[0].block_m);
                found = take_ranked(all, all_est, alt, alt_est, ns);
            }
        }
    }
    if (!why->long_k && (!why->sure || why->pad))
        found = swap_against_padding(t, p, max_cluster, all, all_est, found, why);
    found = tall_tiles_for_pairs(t, p, all, all_est, found);
    if (found > max)
        found = max;
    return take_ranked(out, est, all, all_est, found);
}

/* Plain 64-row tiles in two rows (M = 65-127): each row of tiles reads
 * the whole weight through L2, where swap-AB's tiles (the weight on
 * wgmma's M side) span M in one column and read it once. Swap-AB as
 * JITGEMM_SWAP=1 plans it (its best tile, split over a cluster where the
 * model says) replaces them where K is long (split_credible), for dense
 * BF16, FP16 and FP8 problems; the model had rated the plain tiles ahead.
 * On an H200 (bench/results/2026-11-29-h200-row-tiles): five such plans
 * among 23 rows of M = 73-445, N <= 2560, K >= 8192 ran 1.14-1.61x faster
 * under JITGEMM_SWAP=1; over the random rows whose plans the rule changed
 * with three rows of tiles or more allowed, M = 65-128 gained (BF16 1.158x
 * over 21 rows, FP8 1.083x over 12, FP16 1.365x over 5; 0.84-1.57) and M
 * past 128 lost (0.907x, 0.866x, 0.715x over 8, 18, 5 rows). M = 128
 * (pairs of 64-row tiles without padding, tall_tiles_for_pairs' rows and
 * the fixed decode rows') was in neither set of rows: it keeps its plans. */
static size_t swap_over_row_tiles(const jg__target *t, const jg__problem_key *p,
                                  jg__gemm_config *all, estimate *all_est, size_t found, size_t max,
                                  family_choice *why)
{
    enum { RANKED = 2 * JG_PLAN_CANDIDATES_MAX };
    if (!found || all[0].swap_ab || all[0].block_m != 64 || all[0].pingpong || p->groups ||
        p->a_type == JG_NVFP4 || jg__dtype_size(p->a_type) > 2 || family_forced(t) || t->force_k ||
        t->force_n_stack || p->m <= 64 || p->m >= 128 || !split_credible(p))
        return found;
    jg__target swap = *t;
    swap.force_swap = 2; /* JITGEMM_SWAP=1 */
    jg__gemm_config alt[RANKED];
    estimate alt_est[RANKED];
    family_choice alt_why;
    const size_t n = search_ranked(&swap, p, alt, alt_est, max < RANKED ? max : RANKED, &alt_why);
    if (!n || !alt[0].swap_ab)
        return found;
    *why = alt_why;
    why->row_tiles = true;
    return take_ranked(all, all_est, alt, alt_est, n);
}

/* The ranked plans of a dense or grouped problem (search_ranked), then
 * swap_over_row_tiles. */
static size_t search(const jg__target *t, const jg__problem_key *p, jg__gemm_config *out,
                     estimate *est, size_t max, family_choice *why)
{
    const size_t found = search_ranked(t, p, out, est, max, why);
    return swap_over_row_tiles(t, p, out, est, found, max, why);
}

/* Stream-K (cfg.stream_k): where a plan's last wave of tiles leaves SMs
 * idle (160 tiles on 132 SMs run as two waves; 99 tiles leave 33 SMs
 * idle), its tile's K in S units and every CTA an equal run of the units
 * in tile order, the runs that cut a tile summed through the workspace
 * (sm90_gemm.cu's jg_stream_k). The compute's cost in stages per CTA: the
 * plan's waves times its stages a tile, against ceil(T S / G) units of
 * ceil(stages / S), plus per unit SM90_STREAM_K_UNIT_STAGES (its wgmmas
 * drain at its end) and once the parts' store and load (two partial tiles
 * of FP32 at a stage's bytes' rate); the memory's, the bytes streamed
 * without the last wave's shortfall. Units of at least
 * SM90_STREAM_K_MIN_STAGES stages, and plans of SM90_STREAM_K_MIN_S or
 * more (the launch's memset of the flags is a kernel of its own). The rule
 * takes the best of the planner's ranked candidates under stream-K where
 * its time is at most 1 / SM90_STREAM_K_GAIN of the plan's.
 *
 * Where M spans R > 1 tiles, the grid makes R groups of CTAs, one a row
 * of tiles along N (cfg.stream_k = R, jg__gemm_grid), interleaved (CTA b
 * in group b % R), so that the CTAs whose tiles share a panel of the
 * weight read it at the same place of K and from neighbouring CTAs. One
 * group over all tiles (R = 1 with M over several tiles) began those
 * tiles' runs at different places of K: on an H200 (random BF16 rows, seed
 * 4000484927) it took 9 rows, 7 with M over two or more tiles, at
 * 0.46-0.71 of cuBLASLt (3326x24576x19152: 9.5 ms against 4.4). Groups of
 * consecutive CTAs (b / (G / R)) read the shared panels at the same place
 * of K but from CTAs far apart, and lost too: 0.879x the plans without
 * stream-K over 39 rows the rule took with R up to 4 (H200, ncu on
 * 197x5760x18432: 284 MB from DRAM against 220, the weight 212); the
 * interleaved groups 1.021x over the same rows (231 MB). Of those rows,
 * R = 3 or 4 ran at 0.97x and units under 16 stages lost (0.81-0.85: N of
 * 1536-2560, runs of 20-30 us), hence M over at most
 * SM90_STREAM_K_MAX_ROWS tiles and, with R > 1, units of at least
 * SM90_STREAM_K_ROWS_MIN_STAGES: 1.056x over the 20 such rows (min 0.938);
 * on fresh rows the rule so limited changed (0.4% of random rows) 1.028x
 * over 26 BF16 rows (0.81-1.86) and 0.992x over 16 FP16 rows
 * (bench/results/2026-11-28-h200-stream-k-rows). JITGEMM_STREAM_K makes row
 * groups wherever each keeps two CTAs. Tiles that make at most
 * SM90_STREAM_K_MAX_WAVES waves.
 * And only with at least half as many tiles as SMs (confirmed on fresh
 * rows: the limit lifted for M of 128 or more, the 30 BF16 and 18 FP16
 * rows it changed ran at 0.951x and 0.954x, 0.66-1.54):
 * on 68 rows the rule took then (H200, bench/results/
 * 2026-11-28-h200-stream-k), the 49 with fewer tiles (decode rows, N up to
 * 5120: 11-40 tiles, the split's parts a large share of short runs, their
 * plans cluster split-K or small tiles) ran at 0.83x their plans' speed,
 * the 19 with 70-150 tiles at 1.34x (1.11-1.92; of cuBLASLt 0.715 ->
 * 0.959). */
#define SM90_STREAM_K_MAX_WAVES 2
#define SM90_STREAM_K_MAX_ROWS 2
#define SM90_STREAM_K_ROWS_MIN_STAGES 16
#define SM90_STREAM_K_MIN_STAGES 8
#define SM90_STREAM_K_UNIT_STAGES 0.5
#define SM90_STREAM_K_GAIN 1.15
#define SM90_STREAM_K_MIN_S 15e-6

/* The stream-K form of cfg (S units a tile, no cluster), its cost in
 * stages per CTA in *sk and the plan's in *now; 0 where none fits, or (not
 * forced) where the rule's limits leave it out: M over more than
 * SM90_STREAM_K_MAX_ROWS tiles, tiles outside half a wave to
 * SM90_STREAM_K_MAX_WAVES waves, units shorter than the least stages. */
static uint32_t stream_k_units(const jg__target *t, const jg__problem_key *p,
                               const jg__gemm_config *cfg, const estimate *e, uint32_t force,
                               jg__gemm_config *out, double *sk, double *now)
{
    jg__gemm_config c = *cfg;
    split_through_ws(&c, 2);
    if (cfg->split_ws > 1 || !jg__stream_k_fits(p, &c))
        return 0;
    const uint64_t stages = jg__ceil_div((uint64_t)p->k, c.block_k);
    const uint64_t tiles = jg__gemm_units(&c, p->m, p->n), sms = (uint64_t)t->sm_count;
    const uint64_t rows = jg__ceil_div((uint64_t)p->m, c.swap_ab ? c.block_n : c.block_m);
    if (!force &&
        (rows > SM90_STREAM_K_MAX_ROWS || tiles > SM90_STREAM_K_MAX_WAVES * sms || 2 * tiles < sms))
        return 0;
    const uint64_t min_stages = rows > 1 ? SM90_STREAM_K_ROWS_MIN_STAGES : SM90_STREAM_K_MIN_STAGES;
    c.stream_k = 2 * rows <= sms ? (uint32_t)rows : 1; /* row groups of two CTAs or more */
    const uint64_t grid = sms / c.stream_k * c.stream_k;
    const uint32_t k_split = cfg->split_k > 1 ? cfg->split_k : 1;
    *now = (double)e->waves * (double)jg__ceil_div(stages, k_split);
    /* the parts' store and load, at a stage's bytes */
    const double part = 4.0 * c.block_m * c.block_n;
    const double stage = (double)(c.block_m + c.block_n) * c.block_k * c.ab_size;
    const double fixup = 2.0 * part / stage;
    uint32_t best = 0;
    for (uint32_t s = 2; s <= JG_SPLIT_WS_MAX; ++s) {
        if (force && s != force)
            continue;
        const uint64_t unit = jg__ceil_div(stages, s);
        if (unit < min_stages && !force)
            break;
        const double cost =
            (double)jg__ceil_div(tiles * s, grid) * ((double)unit + SM90_STREAM_K_UNIT_STAGES) +
            fixup;
        if (!best || cost < *sk) {
            best = s;
            *sk = cost;
        }
    }
    if (best) {
        c.split_ws = best;
        *out = c;
    }
    return best;
}

/* JITGEMM_STREAM_K=S: the plan's tile run stream-K in S units, where it
 * fits; else the rule (see above) over the ranked candidates, the plan's
 * first. The model's gain where the rule changed the plan, else 0. */
static double stream_k_for_waves(const jg__target *t, const jg__problem_key *p,
                                 jg__gemm_config *plan, const jg__gemm_config *cands,
                                 const estimate *est, size_t n)
{
    if (t->force_split_ws == 1 || t->force_stream_k == 1 || plan->split_ws > 1 || !n)
        return 0;
    double sk, now, gain = 0;
    jg__gemm_config c;
    if (t->force_stream_k > 1) {
        if (stream_k_units(t, p, plan, &est[0], t->force_stream_k, &c, &sk, &now))
            *plan = c;
        return 0;
    }
    /* (16-bit dense only: search_families below serves dense problems) */
    if (t->force_split_ws || t->force_split || t->force_pingpong || t->force_n_stack > 1 ||
        est[0].total_s < SM90_STREAM_K_MIN_S || p->groups ||
        (p->a_type != JG_BF16 && p->a_type != JG_FP16))
        return 0;
    /* the ranked candidates, and swap-AB's tiles across M */
    jg__gemm_config swap[JG_PLAN_CANDIDATES_MAX];
    estimate swap_est[JG_PLAN_CANDIDATES_MAX];
    const size_t n_swap = p->m <= SM90_SPLIT_WS_MAX_N
                              ? swap_across_m(t, p, 1, 1, swap, swap_est, JG_PLAN_CANDIDATES_MAX)
                              : 0;
    double best_s = est[0].total_s;
    for (size_t i = 0; i < n + n_swap; ++i) {
        const jg__gemm_config *cand = i < n ? &cands[i] : &swap[i - n];
        const estimate *e = i < n ? &est[i] : &swap_est[i - n];
        if (!stream_k_units(t, p, cand, e, 0, &c, &sk, &now))
            continue;
        const double s =
            overlapped_s(e->compute_s * sk / now, e->stream_s) +
            sk / (double)jg__ceil_div((uint64_t)p->k, c.block_k) * SM90_TILE_OVERHEAD_S;
        if (s * SM90_STREAM_K_GAIN <= est[0].total_s && s < best_s) {
            best_s = s;
            *plan = c;
            gain = est[0].total_s / s;
        }
    }
    return gain;
}

/* Few tiles, long K (16-bit dense): swap-AB tiles of 128 weight rows
 * spanning M in one column, or two where one would pass
 * SM90_SPLIT_WS_MAX_N, their K split through the workspace into S =
 * SMs / tiles units (at most JG_SPLIT_WS_MAX), all of the tiles' units in
 * one wave; where those tiles fill fewer than half the SMs and each unit
 * keeps SM90_FEW_TILES_MIN_STAGES stages. The plans it replaces split such
 * rows over clusters of 2 or 4 CTAs on tiles that padded M or made two
 * columns of it (the long-K rule), or through the workspace on plain tiles
 * padding M (split_ws_for_clusters); rows the stream-K rule takes keep
 * its plan. On an H200 (bench/results/2026-11-30-h200-few-tiles), forced
 * on 12 BF16 rows of M = 71-376 that trailed torch: 168x4608x28672 1.27x
 * (S = 3), 130x2048x21088 1.19x (8), 248x2560x10240 1.07x (3, two
 * columns), 71x3072x28672 1.07x; units of 22-32 stages 0.80-0.85x. As a
 * rule with units of 40 stages or more, over 46 BF16 rows of those it
 * changed in 3000 fresh ones (seeds 61001, 61002): 1.031x, units of 40-57
 * stages 0.87-1.12x, of 64 or more 1.052x over 35 rows (0.96-1.26); with
 * 64 (chosen on those rows, so checked again) on 20 of the 59 rows it
 * changed in 3000 fresh ones (seed 61004): 1.107x (0.96-1.48), energy
 * 0.953x, of cuBLASLt 0.878 -> 0.975. */
#define SM90_FEW_TILES_MIN_M 64
#define SM90_FEW_TILES_MIN_STAGES 64
#define SM90_FEW_TILES_ROWS 128
static bool few_tiles_split(const jg__target *t, const jg__problem_key *p, jg__gemm_config *plan,
                            estimate *e)
{
    if (p->groups || (p->a_type != JG_BF16 && p->a_type != JG_FP16) ||
        p->m <= SM90_FEW_TILES_MIN_M || (p->flags & JG_GEMM_M_GENERIC) || family_forced(t) ||
        t->force_k || t->force_n_stack || t->force_split_ws || t->force_stream_k)
        return false;
    uint64_t cols = 1;
    while (swap_column_width(p, cols) > SM90_SPLIT_WS_MAX_N)
        ++cols;
    if (cols > 2)
        return false;
    /* the tiles (128 weight rows by the columns' width), S and the stages
     * at the shortest BLOCK_K, before the search */
    const uint64_t tiles = jg__ceil_div((uint64_t)p->n, SM90_FEW_TILES_ROWS) *
                           jg__ceil_div((uint64_t)p->m, swap_column_width(p, cols));
    const uint64_t sms = (uint64_t)t->sm_count;
    const uint64_t s = sms / tiles < JG_SPLIT_WS_MAX ? sms / tiles : JG_SPLIT_WS_MAX;
    const uint32_t ab_size = jg__dtype_size(p->a_type);
    if (2 * tiles >= sms ||
        jg__ceil_div((uint64_t)p->k, sm90_block_k_of(0, ab_size)) < s * SM90_FEW_TILES_MIN_STAGES)
        return false;
    jg__target rows = *t;
    rows.force_m = SM90_FEW_TILES_ROWS;
    jg__gemm_config alt[JG_PLAN_CANDIDATES_MAX];
    estimate alt_est[JG_PLAN_CANDIDATES_MAX];
    const size_t n = swap_across_m(&rows, p, cols, 1, alt, alt_est, JG_PLAN_CANDIDATES_MAX);
    if (!n || !alt[0].swap_ab ||
        jg__ceil_div((uint64_t)p->k, alt[0].block_k) < s * SM90_FEW_TILES_MIN_STAGES)
        return false;
    jg__gemm_config c = alt[0];
    split_through_ws(&c, (uint32_t)s);
    if (!jg__split_ws_fits(p, &c))
        return false;
    *plan = c;
    /* the unsplit tiles' estimate, their compute shared by the S units,
     * their memory time as the units' CTAs stream it (stream_s) */
    *e = alt_est[0];
    e->tiles = tiles * s;
    e->compute_s /= (double)s;
    e->memory_s = e->stream_s;
    e->total_s = overlapped_s(e->compute_s, e->memory_s) + (double)e->waves * SM90_TILE_OVERHEAD_S;
    return true;
}

/* A swap-AB plan (16-bit, or FP8 with tensor or row scales: block scales
 * do not stack, n_stack_fits) of one CTA a cluster, without a split, whose
 * tiles make an even number of columns across M (M <=
 * SM90_SWAP_PAIRS_MAX_M, K >= SM90_SWAP_PAIRS_MIN_K): the same tiles in 1x2 clusters along M, the pair
 * sharing the weight's tile by TMA multicast (sm90_gemm.cu's JG_N_STACK over
 * the swapped problem), as cuBLAS pairs the small-output long-K class. On an
 * H200 (bench/results/2026-11-29-h200-swap-n-stack): over 30 BF16 rows of
 * M = 129-2048, K >= 4096 (forced swap-AB without a split, with and without
 * the stack) the 9 rows whose tile the stack kept ran 1.047x faster
 * (0.986-1.277) at 0.948x the energy; as a rule without those bounds, over
 * the 40 rows of a fresh draw it changed, 1.021x (0.86-1.33; energy 0.959x):
 * its 22 rows within the bounds 1.05x (0.93-1.33: 262x27648x19184 717.7 us
 * -> 537.8), the 18 others 0.98x (M >= 2481 0.92-1.02, K <= 3072 with few
 * tiles 0.86-0.90). FP8 (tensor or row scales) too: over 30 fresh FP8
 * tensor-scale rows it changes, 1.035x (0.97-1.30: 388x28672x23200 716.1
 * us -> 552.2), energy 0.946x (bench/results/2026-11-29-h200-swap-pairs-
 * fp8). Not M-generic plans (not measured), nor under the planner's
 * switches (a forced split through the workspace or stream-K that took the
 * plan left it split_ws > 1: no pair; one that did not fit left the
 * planner's plan, paired). Sets *plan and *e to the stacked plan; whether
 * it did. */
#define SM90_SWAP_PAIRS_MAX_M 2048
#define SM90_SWAP_PAIRS_MIN_K 4096
static bool swap_pairs_share_weight(const jg__target *t, const jg__problem_key *p,
                                    jg__gemm_config *plan, estimate *e)
{
    if (!plan->swap_ab || plan->split_k > 1 || plan->split_ws > 1 || plan->cluster != 1 ||
        plan->pingpong || p->groups ||
        (p->a_type != JG_BF16 && p->a_type != JG_FP16 && p->a_type != JG_E4M3) ||
        (p->flags & JG_GEMM_M_GENERIC) || p->m > SM90_SWAP_PAIRS_MAX_M ||
        p->k < SM90_SWAP_PAIRS_MIN_K || family_forced(t) ||
        t->force_n_stack /* 1: no stacks, so no pairs */)
        return false;
    const uint64_t columns = jg__ceil_div((uint64_t)p->m, plan->block_n);
    if (columns < 2 || columns % 2)
        return false;
    size_t i = 0, j = 0;
    while (i < JG_ARRAY_LEN(sm90_block_m) && sm90_block_m[i].block_m != plan->block_m)
        ++i;
    const uint32_t ab_size = (uint32_t)jg__dtype_size(p->a_type);
    while (j < JG_ARRAY_LEN(sm90_block_k) && sm90_block_k_of(j, ab_size) != plan->block_k)
        ++j;
    if (i == JG_ARRAY_LEN(sm90_block_m) || j == JG_ARRAY_LEN(sm90_block_k))
        return false;
    const jg__problem_key ps = swapped_problem(p);
    const dense_pass dp = {.pass = 1, .cluster = 1, .max_cluster = 1, .swap_ab = 1, .split = 1,
                           .families = JG_FAMILY_SWAP, .n_stack = 2};
    jg__gemm_config c;
    estimate ce;
    if (!dense_candidate(t, &ps, i, j, plan->block_n, &dp, &c, &ce))
        return false;
    *plan = c;
    *e = ce;
    return true;
}

/* The best plain tiles in clusters of `stack` CTAs stacked along N (1 x
 * stack, sharing A's tile by multicast) whose tile has min_rows rows or
 * more, into *plan and *e; false where none fits. */
static bool plain_along_n(const jg__target *t, const jg__problem_key *p, uint32_t stack,
                          int64_t min_rows, jg__gemm_config *plan, estimate *e)
{
    jg__gemm_config alt[JG_PLAN_CANDIDATES_MAX];
    estimate alt_est[JG_PLAN_CANDIDATES_MAX];
    const size_t n = search_families(t, p, JG_FAMILY_PLAIN, 1, stack, stack, alt, alt_est,
                                     JG_PLAN_CANDIDATES_MAX);
    for (size_t i = 0; i < n; ++i)
        if (jg__cfg_n_stack(&alt[i]) == stack && jg__cfg_m_stack(&alt[i]) == 1 &&
            (int64_t)alt[i].block_m >= min_rows) {
            *plan = alt[i];
            *e = alt_est[i];
            return true;
        }
    return false;
}

/* FP8 plain tiles in clusters of 2 stacked along M (sharing B's tile by
 * multicast: the planner's clusters for long K) whose rows of tiles are odd
 * in number: the last cluster's second CTA computes a whole tile past M,
 * 1 / (rows + 1) of the grid's MACs. Where that is SM90_M_STACK_PAD_MAX or
 * more (23 rows of 128 or fewer), the best plain tiles in clusters stacked
 * along N instead (1x2, sharing A's tile: search_families' n_stack), which
 * pad no row. On an H200 (bench/results/2026-11-29-h200-fp8-odd-rows), 1x2
 * stacks forced on 18 FP8 tensor-scale rows of such plans: 1.058x (energy
 * 0.966x); on the 8 with 3-21 odd rows 1.04-1.40 (568x22016x23376 805.5 us
 * -> 651.8, 619x25600x23024 1022.5 -> 732.4), on 27-53 odd rows 0.92-1.02,
 * on even rows 0.92-1.00; as the rule, on 22 of the 39 rows it changed in
 * 3000 fresh ones (seed 53001), two rounds: 1.046x (0.99-1.14), energy
 * 0.959x, of cuBLASLt 0.882 -> 0.924. Not M-generic plans (the launch's M
 * decides the rows). */
#define SM90_M_STACK_PAD_MAX 0.04
static bool odd_rows_along_n(const jg__target *t, const jg__problem_key *p, jg__gemm_config *plan,
                             estimate *e)
{
    if (p->a_type != JG_E4M3 || p->groups || plan->swap_ab || plan->cluster != 2 ||
        jg__cfg_m_stack(plan) != 2 || plan->split_k > 1 || plan->split_ws > 1 || plan->pingpong ||
        (p->flags & JG_GEMM_M_GENERIC) || family_forced(t) || t->force_n_stack)
        return false;
    const uint64_t rows = jg__ceil_div((uint64_t)p->m, plan->block_m);
    if (rows % 2 == 0 || 1.0 / (double)(rows + 1) < SM90_M_STACK_PAD_MAX)
        return false;
    return plain_along_n(t, p, 2, 0, plan, e);
}

/* FP8 plain tiles of one CTA, without a split, whose one row of tiles
 * spans M (SM90_ONE_ROW_MIN_M to the tile's rows) over long K: every tile
 * along N reads the whole of A's K-panel through L2, about M / N-tile
 * times the weight's bytes. Clusters of 4 stacked along N (1x4) read it
 * once and multicast it (search_families' best such plain tiles whose
 * rows still span M). On an H200 (bench/results/2026-11-30-h200-few-tiles),
 * 1x4 forced on 18 FP8 tensor-scale rows of such plans (M = 65-128, of
 * 3000 fresh ones, seed 61003; one round): M >= 80 with K >= 9216
 * 1.07-1.26x on all 5 rows (84x10240x18432 82.0 us -> 66.3), K up to 3072
 * 0.86-1.02x, M = 65-76 0.89-0.93x. As the rule, on 16 of the 47 rows it
 * changed in 3000 fresh ones (seed 61005): 1.053x, energy 0.991x, of
 * cuBLASLt 0.956 -> 1.035; its one loss, 110x5120x9216 at 0.77x, took
 * 64-row tiles (two rows) and ran 20 us: hence the tile's rows spanning M
 * and N >= SM90_ONE_ROW_MIN_N, which leave 15 of the 16 rows (1.073x,
 * 0.91-1.26). Not M-generic plans (the launch's M decides the rows). */
#define SM90_ONE_ROW_MIN_M 80
#define SM90_ONE_ROW_MIN_K 9216
#define SM90_ONE_ROW_MIN_N 8192
static bool one_row_along_n(const jg__target *t, const jg__problem_key *p, jg__gemm_config *plan,
                            estimate *e)
{
    if (p->a_type != JG_E4M3 || p->scale == JG_SCALE_BLOCK || p->groups || plan->swap_ab ||
        plan->cluster > 1 || plan->split_k > 1 || plan->split_ws > 1 || plan->pingpong ||
        p->m < SM90_ONE_ROW_MIN_M || p->m > plan->block_m || p->k < SM90_ONE_ROW_MIN_K ||
        p->n < SM90_ONE_ROW_MIN_N || (p->flags & JG_GEMM_M_GENERIC) || family_forced(t) ||
        t->force_n_stack)
        return false;
    return plain_along_n(t, p, 4, p->m, plan, e);
}

/* Bands of the grouped tile order (cfg.group_m: sm90_gemm.cu's
 * jg_tile_coords sweeps bands of that many rows of tiles column by
 * column). The CTAs at work at once (a wave of the persistent grid) run
 * over K together, so each wave reads from DRAM every row panel of A and
 * column panel of B its tiles touch: the band that touches the fewest
 * panels, wave after wave, reads the least. With bands of 8 that count
 * matched Nsight Compute's DRAM bytes within 4% on four H200 rows of M >
 * 2048 and K >= 11008 (2578x5616x14336 on 128x240 tiles: 663 MB modelled,
 * 645 measured, cuBLAS's kernel 397; 2721x20480x11840: 1867 and 1860
 * against 1383; bench/results/2026-11-29-h200-bands). On an H200, over
 * fresh rows whose plan it changes (about a fifth of BF16 rows, an eighth
 * of FP8), 1.011x and 1.009x (BF16, 40 and 24 rows) and 1.021x and 1.024x
 * (FP8 tensor scales), at 0.977-0.987 of the energy per GEMM; s1 above
 * read 1391 MB after it. Bands of one row (chosen on a fifth of those
 * rows) ran as the others did. Panels in rows: a wave's A panels times the
 * unit's rows, plus its B panels times the unit's columns (K and the
 * element size common to both). */
static const uint8_t sm90_bands[] = {1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64};
#define SM90_BAND_GAIN 0.95             /* another band only where it reads this or less */
#define SM90_BAND_L2_BYTES (40 << 20)   /* operands this small stay in the 50 MB L2 */
#define SM90_BAND_WAVE_BYTES (24 << 20) /* and a wave's panels this small, to the next wave */

/* The panels that units [s, e) of the grouped order touch, bands of g rows
 * of `rows`, `cols` columns */
static uint64_t wave_panels(uint64_t s, uint64_t e, uint64_t rows, uint64_t cols, uint64_t g,
                            uint64_t unit_m, uint64_t unit_n)
{
    uint64_t a = 0, first_lo = 0, last_hi = 0, parts = 0;
    while (s < e) {
        const uint64_t band = s / (g * cols), top = band * g;
        const uint64_t h = rows - top < g ? rows - top : g;
        const uint64_t start = band * g * cols, end = start + h * cols;
        const uint64_t i0 = s - start, i1 = (e < end ? e : end) - start;
        a += i1 - i0 < h ? i1 - i0 : h; /* a contiguous run shorter than h: distinct rows */
        if (!parts)
            first_lo = i0 / h;
        last_hi = (i1 - 1) / h;
        ++parts;
        s = start + i1;
    }
    /* columns: a first band from first_lo on, whole bands, a last one up to last_hi */
    uint64_t b;
    if (parts == 1)
        b = last_hi - first_lo + 1;
    else if (parts > 2 || last_hi + 1 >= first_lo)
        b = cols;
    else
        b = cols - first_lo + last_hi + 1;
    return a * unit_m + b * unit_n;
}

/* The panels every wave of `wave` units touches, over all the units */
static uint64_t grid_panels(uint64_t units, uint64_t wave, uint64_t rows, uint64_t cols, uint64_t g,
                            uint64_t unit_m, uint64_t unit_n)
{
    uint64_t panels = 0;
    for (uint64_t s = 0; s < units; s += wave)
        panels +=
            wave_panels(s, s + wave < units ? s + wave : units, rows, cols, g, unit_m, unit_n);
    return panels;
}

/* The band of rows for cfg's dense plan: the one whose waves touch the
 * fewest panels where it beats JG_BAND_ROWS_DEFAULT's by SM90_BAND_GAIN, else
 * JG_BAND_ROWS_DEFAULT (also where the operands fit in L2, and for split plans,
 * whose units run in other orders); *ratio (if given): its panels over
 * JG_BAND_ROWS_DEFAULT's. */
static uint32_t band_rows(const jg__target *t, const jg__problem_key *p, const jg__gemm_config *c,
                          double *ratio)
{
    double unused;
    ratio = ratio ? ratio : &unused;
    *ratio = 1;
    if (p->groups || c->split_k > 1 || (c->split_ws > 1 && !c->sk_dp) || c->pre || c->swap ||
        (double)(p->m + p->n) * (double)p->k * c->ab_size <= SM90_BAND_L2_BYTES)
        return JG_BAND_ROWS_DEFAULT;
    const uint64_t unit_m = (uint64_t)c->block_m * jg__cfg_m_stack(c);
    const uint64_t unit_n = (uint64_t)c->block_n * jg__cfg_n_stack(c);
    const uint64_t rows = jg__ceil_div((uint64_t)(c->swap_ab ? p->n : p->m), unit_m);
    const uint64_t cols = jg__ceil_div((uint64_t)(c->swap_ab ? p->m : p->n), unit_n);
    const uint64_t units = rows * cols, wave = clusters_at_once(t, c->cluster ? c->cluster : 1);
    const uint64_t base =
        grid_panels(units, wave, rows, cols, JG_BAND_ROWS_DEFAULT, unit_m, unit_n);
    /* a wave's panels that stay in L2 for the next wave: K short */
    const uint64_t waves = jg__ceil_div(units, wave);
    if ((double)base / (double)waves * (double)p->k * c->ab_size <= SM90_BAND_WAVE_BYTES)
        return JG_BAND_ROWS_DEFAULT;
    uint64_t best_panels = base;
    uint32_t best = JG_BAND_ROWS_DEFAULT;
    for (size_t i = 0; i < JG_ARRAY_LEN(sm90_bands) && sm90_bands[i] < rows; ++i) {
        const uint64_t panels = grid_panels(units, wave, rows, cols, sm90_bands[i], unit_m, unit_n);
        if (panels < best_panels) {
            best_panels = panels;
            best = sm90_bands[i];
        }
    }
    /* one band of all rows: the grid column by column */
    const uint64_t panels = grid_panels(units, wave, rows, cols, rows, unit_m, unit_n);
    if (rows > JG_BAND_ROWS_DEFAULT && panels < best_panels) {
        best_panels = panels;
        best = (uint32_t)rows;
    }
    if ((double)best_panels > SM90_BAND_GAIN * (double)base)
        return JG_BAND_ROWS_DEFAULT;
    *ratio = (double)best_panels / (double)base;
    return best;
}

size_t jg__plan_candidates_sm90(const jg__target *t, const jg__problem_key *p, jg__gemm_config *out,
                                size_t max)
{
    estimate est[JG_PLAN_CANDIDATES_MAX];
    if (strcmp(t->arch, "sm_90a") != 0 || max == 0)
        return 0;
    if (max > JG_PLAN_CANDIDATES_MAX)
        max = JG_PLAN_CANDIDATES_MAX;
    memset(out, 0, max * sizeof *out);
    family_choice why;
    size_t n = search(t, p, out, est, max, &why);
    for (size_t i = 0; i < n; ++i)
        force_split_ws(t, p, &out[i]);
    /* The first candidate's swap-AB pair (swap_pairs_share_weight) or its
     * tiles stacked along N (odd_rows_along_n), rules after the ranking,
     * come first, so that tuning never loses what the planner would run;
     * the ranking itself never stacks but under JITGEMM_N_STACK (the rules
     * are off there). */
    jg__gemm_config pair = out[0];
    estimate pair_est;
    if (n &&
        (swap_pairs_share_weight(t, p, &pair, &pair_est) ||
         odd_rows_along_n(t, p, &pair, &pair_est) || one_row_along_n(t, p, &pair, &pair_est))) {
        n = n < max ? n + 1 : max;
        memmove(out + 1, out, (n - 1) * sizeof *out);
        out[0] = pair;
    }
    /* Then the best plan of each family (plain tiles, swap-AB, split-K over
     * a cluster; one CTA a cluster otherwise) the ranking's head is not of,
     * ahead of the rest of the ranking: the model errs between families by
     * more than it separates one family's tiles (over the worst random rows'
     * forced variants, H200, measured over estimated time had a log sd of
     * 0.22; bench/RESULTS.md, "Where the gaps are"). On those rows, H200,
     * tuning ran 1.064x (BF16) and 1.012x (FP8) the untuned plans' speed
     * with these candidates, 1.050x and 0.997x with the ranking's first. */
    static const uint32_t families[] = {JG_FAMILY_PLAIN, JG_FAMILY_SWAP,
                                        JG_FAMILY_SPLIT | JG_FAMILY_SWAP_SPLIT};
    const bool forced = family_forced(t) || t->force_k || t->force_n_stack;
    size_t at = 1;
    for (size_t f = 0; f < JG_ARRAY_LEN(families) && n && at < max && !forced && !p->groups &&
                       p->a_type != JG_NVFP4;
         ++f) {
        const uint32_t fam = family_limits(p, families[f]);
        jg__gemm_config b[1];
        estimate be[1];
        memset(b, 0, sizeof b);
        if (!fam || search_families(t, p, fam, SM90_LONG_K_SPLIT_MAX, 1, 0, b, be, 1) != 1)
            continue;
        force_split_ws(t, p, &b[0]);
        size_t i = 0;
        while (i < n && memcmp(&out[i], &b[0], sizeof b[0]))
            ++i;
        if (i < at)
            continue; /* the head, or a family's best already */
        if (i == n) { /* not ranked: in, the ranking's last out where full */
            n = n < max ? n + 1 : max;
            i = n - 1;
        }
        memmove(out + at + 1, out + at, (i - at) * sizeof *out); /* out[i] moves up */
        out[at++] = b[0];
    }
    for (size_t i = 0; i < n; ++i)
        out[i].group_m = band_rows(t, p, &out[i], NULL);
    return n;
}

jg_status jg__plan_gemm_sm90(const jg__target *t, const jg__problem_key *p, const jg__log *log,
                             jg__gemm_config *out)
{
    if (strcmp(t->arch, "sm_90a") != 0)
        return JG_ERR_UNSUPPORTED_ARCH;
    estimate est[JG_PLAN_CANDIDATES_MAX];
    jg__gemm_config cands[JG_PLAN_CANDIDATES_MAX];
    family_choice why;
    memset(out, 0, sizeof *out);
    memset(cands, 0, sizeof cands);
    const size_t found = search(t, p, cands, est, JG_PLAN_CANDIDATES_MAX, &why);
    if (!found)
        return JG_ERR_UNSUPPORTED;
    *out = cands[0];
    estimate best = est[0];
    const bool odd_rows = odd_rows_along_n(t, p, out, &best);
    const bool one_row = !odd_rows && one_row_along_n(t, p, out, &best);
    force_split_ws(t, p, out);
    const bool ws_rule = split_ws_for_clusters(t, p, out);
    const double sk_gain = ws_rule ? 0 : stream_k_for_waves(t, p, out, cands, est, found);
    /* (may replace the split_ws_for_clusters plan; the log names it first) */
    const bool few = sk_gain == 0 && few_tiles_split(t, p, out, &best);
    const bool pairs = !few && swap_pairs_share_weight(t, p, out, &best);
    double band_ratio;
    out->group_m = band_rows(t, p, out, &band_ratio);
    if (jg__log_on(log, JG_LOGC_PLAN)) {
        char fp4[256] = "";
        if (out->pre) {
            jg__pre_chunk chunks[JG_PRE_MAX_CHUNKS];
            const uint32_t n = jg__pre_chunks(p->group_m, p->groups, out->pre_rows, chunks,
                                              JG_PRE_MAX_CHUNKS);
            uint32_t widths = 0;
            for (uint32_t c = 0; c < n && c < JG_PRE_MAX_CHUNKS; ++c)
                widths += c == 0 || chunks[c].width != chunks[c - 1].width;
            snprintf(fp4, sizeof fp4,
                     " (nvfp4 with a workspace: the activation dequantized once per launch, the "
                     "weight in registers; %u slots of %u activation rows, chunks of up to %u "
                     "rows at %u wgmma width%s, %u CTAs)",
                     out->expand_bufs, out->block_m, out->pre_rows, widths, widths == 1 ? "" : "s",
                     out->pre);
        } else if (out->swap)
            snprintf(fp4, sizeof fp4,
                     " (nvfp4 swap-AB: the weight dequantized in registers on wgmma's M side, "
                     "the activation expanded to FP16 in %u pieces of 64 of K)",
                     out->expand_bufs);
        else if (out->expand_bufs)
            snprintf(fp4, sizeof fp4,
                     " (nvfp4: codes and scales, expanded to FP16 by the consumers in %u buffers "
                     "of 64 of K; the best of %zu table tiles)",
                     out->expand_bufs, JG_ARRAY_LEN(sm90_nvfp4_tiles));
        char tall[128] = "";
        if (best.pair_n)
            snprintf(tall, sizeof tall,
                     " (in place of two 64x%u tiles, which measured slower at this M; the "
                     "estimate is theirs)",
                     best.pair_n);
        /* dense: the family, and what chose it */
        char family[448] = "";
        if (!p->groups && p->a_type != JG_NVFP4) {
            char shape[192];
            snprintf(shape, sizeof shape, "%s",
                     out->swap_ab ? "swap-AB (tiles of N x M)" : "plain tiles");
            if (out->split_k > 1)
                snprintf(shape + strlen(shape), sizeof shape - strlen(shape),
                         ", K split over %u CTAs", out->split_k);
            if (why.unsplit && out->split_k <= 1 && out->split_ws <= 1)
                snprintf(shape + strlen(shape), sizeof shape - strlen(shape),
                         " (unsplit: each split over a cluster would add waves)");
            char groups[32] = "";
            if (out->stream_k > 1)
                snprintf(groups, sizeof groups, " in %u row groups", out->stream_k);
            if (out->split_ws > 1 && out->stream_k && sk_gain > 0)
                snprintf(shape + strlen(shape), sizeof shape - strlen(shape),
                         ", stream-K in %u units a tile%s (by the waves' rule, %.2fx)",
                         out->split_ws, groups, sk_gain);
            else if (out->split_ws > 1 && out->stream_k)
                snprintf(shape + strlen(shape), sizeof shape - strlen(shape),
                         ", stream-K in %u units a tile%s (JITGEMM_STREAM_K)", out->split_ws,
                         groups);
            else if (out->split_ws > 1)
                snprintf(shape + strlen(shape), sizeof shape - strlen(shape),
                         ", K split over %u units through the workspace%s (%s)", out->split_ws,
                         out->sk_dp ? " after data-parallel tiles" : "",
                         few       ? "by the few tiles' rule: tiles spanning M, under half the SMs"
                         : ws_rule ? "without a workspace, a cluster's"
                                   : "JITGEMM_SPLIT_WS");
            const sm90_table_cell *cell = why.cell;
            if (few)
                snprintf(family, sizeof family, "; %s", shape);
            else if (why.row_tiles)
                snprintf(family, sizeof family,
                         "; %s, over two rows of 64-row plain tiles (each row of them read "
                         "the whole weight)",
                         shape);
            else if (why.pad_always)
                snprintf(family, sizeof family,
                         "; %s, against padding (the plan before it computed %.0f%% more rows "
                         "than M; from %.0f%% whatever the model says)",
                         shape, why.pad_always * 100, SM90_SWAP_PAD_ALWAYS * 100);
            else if (cell && why.overruled)
                snprintf(family, sizeof family,
                         "; %s, by the model over the measured table's cell (class %u, buckets "
                         "m%u n%u k%u: %s, which the model rated at %.2fx the plain tiles' time)",
                         shape, cell->dclass, cell->m, cell->n, cell->k,
                         cell->families & JG_FAMILY_SWAP    ? "swap-AB"
                         : cell->families & JG_FAMILY_SPLIT ? "split-K"
                         : cell->families & JG_FAMILY_TALL  ? "256-row tiles"
                                                            : "swap-AB with split-K",
                         why.overruled);
            else if (cell && why.sure)
                snprintf(family, sizeof family,
                         "; %s, by the model over the measured table's cell (class %u, buckets "
                         "m%u n%u k%u), at %.2fx the cell's plan's time%s",
                         shape, cell->dclass, cell->m, cell->n, cell->k, why.sure,
                         why.pad ? ", which padded M" : "");
            else if (why.long_k)
                snprintf(family, sizeof family,
                         "; %s, by the long-K rule (K >= %d, 128x128 or swap-AB tiles would "
                         "fill at most half the SMs)",
                         shape, SM90_LONG_K_SPLIT_MIN_K);
            else if (cell)
                snprintf(family, sizeof family,
                         "; %s, by the measured table's cell (class %u, buckets m%u n%u k%u: "
                         "%.2fx the plain tiles there)",
                         shape, cell->dclass, cell->m, cell->n, cell->k, cell->gain / 1000.0);
            else
                snprintf(family, sizeof family, "; %s, by %s", shape,
                         t->force_swap || t->force_split || t->force_pingpong || t->force_m == 256
                             ? "JITGEMM_SWAP, _SPLIT, _PINGPONG or _TILE"
                             : "the model (no table cell)");
            if (out->pingpong)
                snprintf(family + strlen(family), sizeof family - strlen(family),
                         " (ping-pong: the consumers on alternate tiles)");
        }
        /* clusters stacked along N (sharing A), and what chose them */
        char stacked[160] = "";
        if (pairs)
            snprintf(stacked, sizeof stacked,
                     " (swap-AB tiles in pairs along M sharing the weight's tile by multicast)");
        else if (jg__cfg_n_stack(out) > 1)
            snprintf(stacked, sizeof stacked,
                     " (%u along M by %u along N: A's tile multicast along N, by %s)",
                     jg__cfg_m_stack(out), jg__cfg_n_stack(out),
                     odd_rows  ? "the odd rows' rule: stacked along M, a tile row past M"
                     : one_row ? "the one row's rule: every tile along N read A"
                               : "JITGEMM_N_STACK");
        char band[96] = "";
        if (out->group_m != JG_BAND_ROWS_DEFAULT)
            snprintf(band, sizeof band,
                     "; tile order in bands of %u rows (its waves read %.2fx the DRAM panels "
                     "of bands of %d)",
                     out->group_m, band_ratio, JG_BAND_ROWS_DEFAULT);
        jg__logf(log, JG_LOG_INFO, JG_LOGC_PLAN,
                 "m=%lld n=%lld k=%lld: tile %ux%ux%u%s, %u consumer warpgroup(s), cluster %u%s, "
                 "%u stages of %u bytes%s%s%s; %llu tiles = %llu wave(s) on %d SMs; estimated "
                 "%.1f us (compute %.1f, memory %.1f: %s-bound)",
                 (long long)p->m, (long long)p->n, (long long)p->k, out->block_m, out->block_n,
                 out->block_k, tall, out->consumers, out->cluster, stacked, out->stages,
                 stage_bytes(out), fp4, family, band, (unsigned long long)best.tiles,
                 (unsigned long long)best.waves, t->sm_count, best.total_s * 1e6,
                 best.compute_s * 1e6, best.memory_s * 1e6,
                 best.compute_s > best.memory_s ? "compute" : "memory");
    }
    return JG_OK;
}
