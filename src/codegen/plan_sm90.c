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
 * BLOCK_N stays at or below this so all three fit the consumers' registers. */
#define SM90_FP8_MAX_BLOCK_N 128
/* FP8 stages per chunk of overlapped promotions: ptxas keeps wgmmas in
 * flight only across straight-line code, so each chunk is unrolled and
 * drains at its end (4, 8 and 16 measured alike; 8 compiles in ~0.45 s). */
#define SM90_FP8_PROMOTE_CHUNK 8
/* FP8 block scales: the promotions' FFMAs keep their scale in the operand
 * reuse cache, edited into the cubin (sass_patch.c; 1-4% on H100's dense
 * rows, 2026-11-22). JITGEMM_FFMA_REUSE overrides. */
#define SM90_FP8_BLOCK_FFMA_REUSE 1
/* Dense FP8 prefill from this K and M: clusters of 2 (search(); decode rows
 * were not measured with them) */
#define SM90_FP8_CLUSTER_MIN_K 16384
#define SM90_FP8_CLUSTER_MIN_M 1024
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
static uint32_t fp8_promote_chunk(uint32_t k_stages)
{
    if (k_stages <= SM90_FP8_PROMOTE_CHUNK)
        return k_stages ? k_stages : 1;
    for (uint32_t d = SM90_FP8_PROMOTE_CHUNK; d >= 4; --d)
        if (k_stages % d == 0)
            return d;
    return SM90_FP8_PROMOTE_CHUNK;
}
#define SM90_HBM_BYTES_S 3.0e12     /* device-to-device copy, read + write */
#define SM90_SMS_TO_SATURATE 64     /* SMs streaming at once that fill HBM bandwidth */
#define SM90_TILE_OVERHEAD_S 1e-6   /* pipeline fill and epilogue per tile */
#define SM90_OVERLAP_LOSS 0.25      /* share of the shorter of compute/memory not hidden */
#define SM90_L2_TO_SM_BYTES_S 11e12 /* tile loads through L2, all SMs (grouped sweep, H100) */

enum {
    SM90_MAX_STAGES = 12, /* beyond this, more stages buy no latency hiding */
    SM90_MIN_STAGES = 2,
    SM90_ALIGN_PAD = 1024, /* the kernel aligns its tiles to 1024 bytes */
    SM90_GROUP_M = 8,      /* tile rows per band of the grouped order (L2 reuse) */
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

/* Fewer stages than this cannot cover TMA latency at full wgmma rate. */
#define SM90_STAGES_FOR_FULL_RATE 4.0

/* BLOCK_M choices: rows per consumer warpgroup are one m64 wgmma slab. */
static const struct {
    uint32_t block_m, consumers;
    double efficiency; /* one warpgroup hides less latency than two */
} sm90_block_m[] = {
    {128, 2, 1.00},
    {64, 1, 0.85},
};

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

static uint32_t stage_bytes(const jg__gemm_config *cfg)
{
    if (cfg->pre) /* the weight's codes and scales only */
        return cfg->block_n * 128 + SM90_NVFP4_SF_BYTES / 2;
    if (cfg->expand_bufs) /* NVFP4: packed codes and scales */
        return (cfg->block_m + cfg->block_n) * 128 + SM90_NVFP4_SF_BYTES;
    return (cfg->block_m + cfg->block_n) * cfg->block_k * (cfg->ab_size ? cfg->ab_size : 2);
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
static uint32_t epilogue_bytes(const jg__gemm_config *cfg, uint32_t d_type, uint32_t scale)
{
    if (cfg->swap) /* a K split (cluster 2) receives the peer's too, and 2 mbarriers */
        return (cfg->cluster > 1 ? 2 : 1) * 64 * 4 * (cfg->a_box_m ? cfg->a_box_m : cfg->block_m) +
               16;
    const uint32_t chunks = cfg->block_n * (uint32_t)jg__dtype_size(d_type) / cfg->epi_bytes;
    const uint32_t fit = cfg->epi_bytes >= 128 ? 1 : 128 / cfg->epi_bytes;
    const uint32_t subs = fit < chunks ? fit : chunks;
    const uint32_t rounds = cfg->block_m / cfg->consumers / 64 * ((chunks + subs - 1) / subs);
    const uint32_t bufs = rounds == 1 ? 1 : 2;
    const uint32_t row_scales =
        scale == JG_SCALE_ROW ? (cfg->block_m / cfg->consumers + cfg->block_n) * 4 : 0;
    /* FP8 block scales staged: two buffers of A's scales for a chunk of
     * stages of the consumer's rows (JG_KS_BYTES) */
    const uint32_t block_scales =
        cfg->a_scales_smem ? 2 * cfg->promote_chunk * (cfg->block_m / cfg->consumers) * 4 : 0;
    return cfg->consumers *
           (bufs * 64 * cfg->epi_bytes * subs + (row_scales + 15) / 16 * 16 + block_scales);
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
    if (p->groups || (p->flags & JG_GEMM_M_GENERIC) || p->m >= (int64_t)block_m)
        return block_m;
    return (uint32_t)jg__ceil_div((uint64_t)p->m, 8) * 8;
}

/* A wgmma of width N spends a roughly fixed cost per instruction besides
 * its N columns: narrow tiles reach a smaller share of the peak. */
static double width_efficiency(uint32_t block_n)
{
    return (block_n / (block_n + 32.0)) / (256.0 / (256.0 + 32.0));
}

typedef struct estimate {
    uint64_t tiles, waves;
    double compute_s, memory_s, total_s;
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

static estimate estimate_time(const jg__target *t, const jg__problem_key *p,
                              const jg__gemm_config *c, double efficiency, double dram_efficiency)
{
    estimate e = {0};
    const uint32_t block_m = c->block_m, block_n = c->block_n;
    const uint32_t cluster = c->cluster ? c->cluster : 1, stack = jg__cfg_m_stack(c);
    const uint32_t k_split = cluster / stack; /* NVFP4 swap-AB: a cluster's CTAs split K */
    /* A cluster walks stacks of `stack` tiles along M (the last of a matrix
     * or group may lie past its rows and still costs its time); e.tiles
     * counts CTAs' shares of the work. */
    const uint64_t units = tiles_m(p, block_m * stack) * jg__ceil_div((uint64_t)p->n, block_n);
    e.tiles = units * cluster;
    e.waves = jg__ceil_div(units, (uint64_t)t->sm_count / cluster);
    double tile_flops = 2.0 * block_m * block_n * (double)p->k / k_split;
    const double stage_eff = stage_efficiency(c);
    /* wgmma's N: the activation rows for NVFP4 swap-AB */
    const uint32_t mma_n = c->swap ? block_m : block_n;
    double sm_rate = SM90_PEAK_FLOPS * (c->ab_size == 1 ? 2.0 : 1.0) / t->sm_count * efficiency *
                     width_efficiency(mma_n) * stage_eff;
    e.compute_s = (double)e.waves * tile_flops / sm_rate;
    /* Every tile loads its A and B panels through L2: tiles sharing a panel
     * (B of a group's row tiles) read DRAM once but L2 once each, except
     * that a cluster's CTAs read their B tile once and multicast it. */
    double l2_bytes = ab_bytes(p) * (double)e.tiles *
                      (double)(c->a_box_m + (double)block_n / stack) * (double)p->k / k_split;
    /* p->m is the total rows of every group for a grouped problem. */
    double bytes =
        ab_bytes(p) * ((double)p->m + b_matrices(p) * p->n) * (double)p->k +
        (double)jg__dtype_size(p->d_type) * (double)p->m * p->n * (p->c_type ? 2.0 : 1.0);
    /* Full waves stream at the bandwidth, the last partial wave at what its
     * SMs can draw (fewer than SM90_SMS_TO_SATURATE do not fill HBM). */
    const uint64_t sms = (uint64_t)t->sm_count;
    const uint64_t tail = e.tiles - (e.waves - 1) * (sms / cluster * cluster);
    const double bw = SM90_HBM_BYTES_S * dram_efficiency;
    const double tail_share = (double)tail / (double)e.tiles;
    const double tail_bw =
        bw * (tail < SM90_SMS_TO_SATURATE ? (double)tail / SM90_SMS_TO_SATURATE : 1.0);
    e.memory_s = bytes * (1 - tail_share) / bw + bytes * tail_share / tail_bw;
    if (l2_bytes / SM90_L2_TO_SM_BYTES_S > e.memory_s)
        e.memory_s = l2_bytes / SM90_L2_TO_SM_BYTES_S;
    double hi = e.compute_s > e.memory_s ? e.compute_s : e.memory_s;
    double lo = e.compute_s > e.memory_s ? e.memory_s : e.compute_s;
    e.total_s = hi + SM90_OVERLAP_LOSS * lo + (double)e.waves * SM90_TILE_OVERHEAD_S;
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
                         .group_m = SM90_GROUP_M,
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
                             .group_m = SM90_GROUP_M,
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

/* The dense search's pass: its cluster size, and the size wanted where a
 * tile allows it (pass 0; pass 1 takes cluster 1). */
typedef struct dense_pass {
    int pass;
    uint32_t cluster, max_cluster;
} dense_pass;

/* The dense candidate of BLOCK_M row i of sm90_block_m, BLOCK_K row j of
 * sm90_block_k and BLOCK_N bn, its stages fitted, and its estimate; false
 * where the dtype, the scale mode, a forced size, the pass's cluster or
 * shared memory rule it out. */
static bool dense_candidate(const jg__target *t, const jg__problem_key *p, size_t i, size_t j,
                            uint32_t bn, const dense_pass *dp, jg__gemm_config *out, estimate *e)
{
    const uint32_t ab_size = (uint32_t)jg__dtype_size(p->a_type);
    jg__gemm_config c = {.block_m = sm90_block_m[i].block_m,
                         .block_n = bn,
                         .block_k = sm90_block_k[j].block_k * 2 / ab_size,
                         .consumers = sm90_block_m[i].consumers,
                         .cluster = dp->cluster,
                         .group_m = SM90_GROUP_M,
                         .epi_bytes = epi_bytes_for(bn, p->d_type),
                         .ab_size = ab_size,
                         .promote_chunk = 0};
    if (ab_size == 1) {
        c.promote_chunk = fp8_promote_chunk((uint32_t)jg__ceil_div((uint64_t)p->k, c.block_k));
        if (p->scale == JG_SCALE_BLOCK)
            c.ffma_reuse =
                t->force_ffma_reuse ? t->force_ffma_reuse - 1 : SM90_FP8_BLOCK_FFMA_REUSE;
    }
    /* FP8 stages are promoted one by one: 128 of K each at most; with
     * block scales a tile lies inside one 128-column block. */
    if (ab_size == 1 && (bn > SM90_FP8_MAX_BLOCK_N || c.block_k > 128))
        return false;
    if (p->scale == JG_SCALE_BLOCK && 128 % bn)
        return false;
    if ((t->force_m && t->force_m != c.block_m) || (t->force_n && t->force_n != c.block_n) ||
        (t->force_k && t->force_k != c.block_k) ||
        (dp->pass == 0 && dp->max_cluster > 1 && dp->max_cluster != dp->cluster))
        return false;
    /* Clusters of 2 split the B tile in two 8-row-aligned halves, and only
     * pay off when tiles pair up along M. */
    if (dp->cluster > 1 && (bn % 16 || !pairs_up(p, c.block_m)))
        return false;
    c.a_box_m = a_box_rows(p, c.block_m);
    c.stages = fit_stages(t, p, &c);
    stage_a_scales(t, p, &c);
    if (c.stages < SM90_MIN_STAGES)
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
        if (out[k].block_m != 64 || out[k].block_n % 16 ||
            (full && out[k].block_n < SM90_TALL_M128_MIN_PAIR_N))
            continue;
        const dense_pass dp = {1, out[k].cluster, 1};
        bool have = false;
        jg__gemm_config best;
        estimate best_e;
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
                  out[q].block_k == out[k].block_k && out[q].cluster == out[k].cluster;
        if (!dup) {
            out[kept] = out[k];
            est[kept++] = est[k];
        }
    }
    return kept;
}

/* Keeps the `max` best configurations by estimated time, best first (ties
 * go to the earlier candidate: wider tiles re-read A less). Returns how
 * many it found. */
static size_t search(const jg__target *t, const jg__problem_key *p, jg__gemm_config *out,
                     estimate *est, size_t max)
{
    if (p->a_type == JG_NVFP4)
        return search_nvfp4(t, p, out, est, max);
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
     * cuBLASLt (861 -> 811 us; square8192, K = 8192: 0.99 -> 0.96). A
     * wanted size applies where some tile allows it (pass 0); otherwise
     * cluster 1 (pass 1). */
    const uint32_t max_cluster =
        t->force_cluster ? t->force_cluster
                         : (ab_size == 1 && !p->groups && p->k >= SM90_FP8_CLUSTER_MIN_K &&
                                    p->m >= SM90_FP8_CLUSTER_MIN_M
                                ? 2
                                : 1);
    for (int pass = 0; pass < 2 && !found; ++pass)
        for (uint32_t cluster = 1; cluster <= (pass == 0 ? max_cluster : 1); ++cluster)
            for (size_t i = 0; i < JG_ARRAY_LEN(sm90_block_m); ++i)
                for (size_t j = 0; j < JG_ARRAY_LEN(sm90_block_k); ++j)
                    for (uint32_t bn = SM90_MMA_N_STEP; bn <= SM90_MMA_N_MAX;
                         bn += SM90_MMA_N_STEP) {
                        const dense_pass dp = {pass, cluster, max_cluster};
                        jg__gemm_config c;
                        estimate e;
                        if (dense_candidate(t, p, i, j, bn, &dp, &c, &e))
                            keep_best(all, all_est, &found, RANKED, &c, &e);
                    }
    found = tall_tiles_for_pairs(t, p, all, all_est, found);
    if (found > max)
        found = max;
    memcpy(out, all, found * sizeof *out);
    memcpy(est, all_est, found * sizeof *est);
    return found;
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
    return search(t, p, out, est, max);
}

jg_status jg__plan_gemm_sm90(const jg__target *t, const jg__problem_key *p, const jg__log *log,
                             jg__gemm_config *out)
{
    if (strcmp(t->arch, "sm_90a") != 0)
        return JG_ERR_UNSUPPORTED_ARCH;
    estimate best;
    memset(out, 0, sizeof *out);
    if (!search(t, p, out, &best, 1))
        return JG_ERR_UNSUPPORTED;
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
        jg__logf(log, JG_LOG_INFO, JG_LOGC_PLAN,
                 "m=%lld n=%lld k=%lld: tile %ux%ux%u%s, %u consumer warpgroup(s), cluster %u, "
                 "%u stages of %u bytes%s; %llu tiles = %llu wave(s) on %d SMs; estimated %.1f "
                 "us (compute %.1f, memory %.1f: %s-bound)",
                 (long long)p->m, (long long)p->n, (long long)p->k, out->block_m, out->block_n,
                 out->block_k, tall, out->consumers, out->cluster, out->stages, stage_bytes(out),
                 fp4, (unsigned long long)best.tiles, (unsigned long long)best.waves, t->sm_count,
                 best.total_s * 1e6, best.compute_s * 1e6, best.memory_s * 1e6,
                 best.compute_s > best.memory_s ? "compute" : "memory");
    }
    return JG_OK;
}
