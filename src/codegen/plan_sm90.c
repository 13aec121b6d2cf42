/* The sm_90a planner: which tile, how many stages, which tile order.
 * Reads as a spec sheet: a table of tile shapes with the reason each
 * exists, then one cost rule over it. */
#include <stdio.h>
#include <string.h>

#include "jg_internal.h"

/* Hopper facts the choices rest on. */
enum {
    SM90_BLOCK_K = 64,     /* 64 16-bit elements = one 128-byte swizzle row */
    SM90_MAX_STAGES = 8,   /* past this, more stages buy no latency hiding */
    SM90_MIN_STAGES = 2,
    SM90_ALIGN_PAD = 1024, /* the kernel aligns its tiles to 1024 bytes */
    SM90_GROUP_M = 8,      /* tile rows per band of the grouped order (L2 reuse) */
};

typedef struct sm90_tile {
    uint32_t block_m, block_n, consumers;
    /* Relative throughput of one SM on this tile when the pipeline is full:
     * smaller tiles re-read more operand bytes per FLOP from shared memory
     * and L2, and wgmma with small N issues less work per instruction. */
    double efficiency;
    const char *why;
} sm90_tile;

static const sm90_tile sm90_tiles[] = {
    {128, 256, 2, 1.00, "largest tile: most reuse per byte loaded"},
    {128, 192, 2, 0.96, "fewer columns per tile where N=256 leaves a partial wave"},
    {128, 128, 2, 0.88, "medium problems: twice the tiles of 128x256"},
    {128, 64, 2, 0.70, "narrow N"},
    {64, 256, 1, 0.80, "short M: one consumer warpgroup, full width"},
    {64, 128, 1, 0.68, "short M and narrow N"},
};

uint32_t jg__gemm_threads(const jg__gemm_config *cfg) { return 128 * (cfg->consumers + 1); }

static uint32_t stage_bytes(const jg__gemm_config *cfg)
{
    return (cfg->block_m + cfg->block_n) * cfg->block_k * 2;
}

uint32_t jg__gemm_smem_bytes(const jg__gemm_config *cfg)
{
    return SM90_ALIGN_PAD + cfg->stages * (stage_bytes(cfg) + 16);
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Estimated time in arbitrary units: full waves of tiles times the cost of a
 * tile. Persistent CTAs still finish in ceil(tiles / SMs) rounds. */
static double tile_cost(const jg__target *t, const jg__problem_key *p, const sm90_tile *e,
                        uint64_t *tiles_out, uint64_t *waves_out)
{
    uint64_t tiles = ceil_div((uint64_t)p->m, e->block_m) * ceil_div((uint64_t)p->n, e->block_n);
    uint64_t waves = ceil_div(tiles, (uint64_t)t->sm_count);
    *tiles_out = tiles;
    *waves_out = waves;
    return (double)waves * e->block_m * e->block_n / e->efficiency;
}

jg_status jg__plan_gemm_sm90(const jg__target *t, const jg__problem_key *p, const jg__log *log,
                             jg__gemm_config *out)
{
    if (strcmp(t->arch, "sm_90a") != 0)
        return JG_ERR_UNSUPPORTED_ARCH;
    const sm90_tile *best = NULL;
    double best_cost = 0;
    for (size_t i = 0; i < JG_ARRAY_LEN(sm90_tiles); ++i) {
        const sm90_tile *e = &sm90_tiles[i];
        uint64_t tiles, waves;
        double cost = tile_cost(t, p, e, &tiles, &waves);
        jg__logf(log, JG_LOG_DEBUG, JG_LOGC_PLAN,
                 "m=%lld n=%lld k=%lld: tile %ux%u (%s): %llu tiles, %llu waves on %d SMs, "
                 "cost %.0f",
                 (long long)p->m, (long long)p->n, (long long)p->k, e->block_m, e->block_n, e->why,
                 (unsigned long long)tiles, (unsigned long long)waves, t->sm_count, cost);
        if (!best || cost < best_cost) {
            best = e;
            best_cost = cost;
        }
    }
    memset(out, 0, sizeof *out);
    out->block_m = best->block_m;
    out->block_n = best->block_n;
    out->block_k = SM90_BLOCK_K;
    out->consumers = best->consumers;
    out->cluster = 1;
    out->group_m = SM90_GROUP_M;
    out->stages = 1;
    uint32_t budget = (uint32_t)t->smem_per_block - SM90_ALIGN_PAD;
    uint32_t per_stage = stage_bytes(out) + 16;
    uint32_t stages = budget / per_stage;
    if (stages > SM90_MAX_STAGES)
        stages = SM90_MAX_STAGES;
    if (stages < SM90_MIN_STAGES)
        return JG_ERR_UNSUPPORTED;
    out->stages = stages;
    jg__logf(log, JG_LOG_INFO, JG_LOGC_PLAN,
             "m=%lld n=%lld k=%lld: chose %ux%ux%u with %u consumer warpgroups (%s); "
             "%u stages of %u bytes fit %d bytes of shared memory",
             (long long)p->m, (long long)p->n, (long long)p->k, out->block_m, out->block_n,
             out->block_k, out->consumers, best->why, out->stages, stage_bytes(out),
             t->smem_per_block);
    return JG_OK;
}
