/* NVFP4 grouped GEMM (list layout) for sm_90a, swap-AB with the activation
 * dequantized once per launch: D_g[m_g, N] = alpha * g_g * A_g * B_g^T
 * (+ beta * C_g), A_g the group's activation rows (a few to a few hundred),
 * B_g [N, K] its weight, g_g the product of the two global scales.
 *
 * Two kernels of one module:
 * - jg_pre_dequant (JG_PRE_DQ_NAME): every group's A codes times their
 *   block scales into FP16 rows of a workspace the caller provides, [rows of
 *   all groups, K64] (K64: K rounded up to 64), group g's rows from the
 *   baked ws_row. Within each 64 of K the elements are in the K order of
 *   sm90_nvfp4.cuh (the order its converters write into shared memory), so
 *   that a TMA box of 64 x rows with the 128B swizzle lands as the wgmmas
 *   read it; blocks past K are zeros.
 * - JG_KERNEL_NAME: a tile is 128 weight rows (two consumers, 64 each, on
 *   wgmma's M side, dequantized in registers as in sm90_nvfp4_swap.cu) by a
 *   chunk of one group's activation rows (wgmma's N: the chunk's rows
 *   rounded up, baked per chunk, up to 256), loaded by TMA from the
 *   workspace: no converter warps, no 16-bit stores, and the activation is
 *   dequantized once instead of once per weight tile.
 *
 * The weight is staged 256 of K at a time (codes and scales), the
 * activation in pieces of 64 of K through a ring of JG_PRE_SLOTS slots of
 * JG_PRE_NMAX rows. Tiles are the baked chunks (largest first) times the
 * weight's 128-row tiles, chunk-major, spread over the persistent CTAs. */
#ifndef JG_KERNEL_NAME
#define JG_KERNEL_NAME jg_nvfp4_pre_sm90_default
#define JG_PRE_DQ_NAME jg_nvfp4_pre_dq_sm90_default
#define JG_D_DTYPE 1
#define JG_HAS_C 0
#define JG_N 4096
#define JG_K 7168
#define JG_GROUPS 8
#define JG_A_SF_LAYOUT 2
#define JG_B_SF_LAYOUT 2
#define JG_STAGES 3
#define JG_PRE_SLOTS 5
#define JG_PRE_NMAX 256
#define JG_PRE_BOX 32
/* group rows: 80 176 128 72 64 248 96 160; ws rows from 0 80 256 384 456 520 768 864 */
#define JG_PRE_GROUP_ROWS {80, 176, 128, 72, 64, 248, 96, 160}
#define JG_PRE_GROUP_WS {0, 80, 256, 384, 456, 520, 768, 864}
/* chunks {group, first row, rows, variant}, largest first */
#define JG_PRE_CHUNKS 8
#define JG_PRE_CHUNK_TABLE                                                                     \
    {{5, 0, 248, 0}, {1, 0, 176, 1}, {7, 0, 160, 2}, {2, 0, 128, 3},                          \
     {6, 0, 96, 4},  {0, 0, 80, 5},  {3, 0, 72, 6},  {4, 0, 64, 7}}
#define JG_PRE_VARIANTS(X)                                                                     \
    X(0, 248) X(1, 176) X(2, 160) X(3, 128) X(4, 96) X(5, 80) X(6, 72) X(7, 64)
/* each CTA's tiles (chunk * tiles_n + weight tile): CTA c runs
 * order[first[c] .. first[c + 1]) */
#define JG_PRE_GRID 2
#define JG_PRE_ORDER {0, 1}
#define JG_PRE_CTA_FIRST {0, 1, 2}
#endif
#define JG_BLOCK_M 0 /* sm90_nvfp4.cuh's staged activation: none (the workspace) */
#define JG_BLOCK_N 128
#define JG_A_BOX_M 0
#define JG_CLUSTER 1

#include "jg_kargs.h"
#include "sm90_ptx.cuh"
#include "sm90_wgmma_rs.cuh" /* jg_wgmma_rs_n<N> for every N */

/* What sm90_nvfp4.cuh's stage loads read of a tile (unused here). */
struct jg_tile {
    uint32_t tm, tn;
    const jg_tmap *a, *b;
    int32_t row_base, b_row;
    const jg_tmap *a_sf, *b_sf;
    const uint8_t *a_sf_ptr, *b_sf_ptr;
};

#include "sm90_nvfp4.cuh"
#include "sm90_swap_store.cuh"

typedef JG_LIST_NVFP4_KARGS(JG_GROUPS) jg_kargs_t; /* a[0]: the workspace's map */
static_assert(sizeof(jg_kargs_t) == JG_LIST_NVFP4_SIZE(JG_GROUPS), "list block size");

#define JG_THREADS 384 /* producer warpgroup, 2 consumers */
#define JG_PRE_W_BYTES (JG_BLOCK_N * 128)                   /* a stage's weight codes */
#define JG_PRE_WSTAGE_BYTES (JG_PRE_W_BYTES + JG_FP4_SF_BYTES) /* and scales */
#define JG_PRE_PIECE_BYTES (JG_PRE_NMAX * 128)
#define JG_PRE_K64 ((JG_K + 63) / 64 * 64)
#define JG_TILES_N ((JG_N + JG_BLOCK_N - 1) / JG_BLOCK_N)

static_assert(JG_PRE_WSTAGE_BYTES % 1024 == 0 && JG_PRE_PIECE_BYTES % 1024 == 0,
              "staged tiles stay 1024-byte aligned");
static_assert(JG_PRE_NMAX % JG_PRE_BOX == 0 && JG_PRE_NMAX <= 256, "pieces of whole boxes");
/* Weight stages loaded ahead of the stage whose pieces the producer
 * loads: it waits for the slot of stage q + AHEAD - STAGES, whose
 * consumers have started it once the pieces of stage q - 1 are loaded
 * (the pieces' ring holds a stage at most, JG_PRE_SLOTS <= 8). */
#ifndef JG_PRE_AHEAD
#define JG_PRE_AHEAD (JG_STAGES - 2)
#endif
static_assert(JG_PRE_AHEAD >= 0 && JG_PRE_AHEAD <= JG_STAGES - 2, "the weight's lookahead");

struct jg_pre_chunk {
    uint32_t g, row0, rows, variant;
};
__constant__ const jg_pre_chunk jg_pre_chunks[JG_PRE_CHUNKS] = JG_PRE_CHUNK_TABLE;
__constant__ const uint32_t jg_pre_group_rows[JG_GROUPS] = JG_PRE_GROUP_ROWS;
__constant__ const uint32_t jg_pre_group_ws[JG_GROUPS] = JG_PRE_GROUP_WS;
/* The tiles of each CTA, balanced on the host (longest first onto the
 * least loaded CTA): the chunks' heights differ by up to 32x. */
__constant__ const uint16_t jg_pre_order[] = JG_PRE_ORDER;
__constant__ const uint16_t jg_pre_cta_first[JG_PRE_GRID + 1] = JG_PRE_CTA_FIRST;

/* wgmma's N of each variant, for the producer's boxes. */
JG_DEV uint32_t jg_pre_variant_n(uint32_t v)
{
#define JG_PRE_N_CASE(i, n)                                                                    \
    case i:                                                                                    \
        return n;
    switch (v) { JG_PRE_VARIANTS(JG_PRE_N_CASE) }
#undef JG_PRE_N_CASE
    return 0;
}

/* Pieces (64 of K) of stage kt: 4, fewer in a last partial stage. */
JG_DEV int jg_pre_pieces(int kt)
{
    const int left = (JG_K - kt * JG_FP4_STAGE_K + 63) / 64;
    return left < JG_FP4_PIECES ? left : JG_FP4_PIECES;
}

/* ---- the dequantization pre-pass ---------------------------------------- */

typedef JG_PRE_DQ_KARGS(JG_GROUPS) jg_pre_dq_args;
static_assert(sizeof(jg_pre_dq_args) == JG_PRE_DQ_SIZE(JG_GROUPS), "pre-pass block size");

/* Item (row r of group g, piece j, half hi): the 16-byte chunks q = 2 s +
 * hi (s = 0..3) of the piece's FP16 row, chunk q holding codes s and s + 4
 * of words W[2c + hi] (c = 0..3, the piece's four 16-element blocks) times
 * block c's scale: the order in which sm90_nvfp4.cuh's jg_fp4_convert fills
 * its shared buffers. Blocks past K are zeros. */
extern "C" __global__ void __launch_bounds__(256)
JG_PRE_DQ_NAME(const __grid_constant__ jg_pre_dq_args p)
{
    /* The GEMM (a programmatic dependent) may start: it waits for this
     * grid's completion before reading the workspace. */
    jg_pdl_launch_dependents();
    const uint32_t g = blockIdx.y;
    const uint32_t rows = jg_pre_group_rows[g];
    constexpr uint32_t pieces = JG_PRE_K64 / 64;
    const uint32_t item = blockIdx.x * 256 + threadIdx.x;
    if (item >= rows * pieces * 2)
        return;
    const uint32_t hi = item % 2, j = item / 2 % pieces, r = item / 2 / pieces;
    const int k0 = (int)j * 64;
    const uint8_t *row = p.a[g] + (int64_t)r * p.lda_bytes + k0 / 2 + 4 * hi;
    /* The piece's 4 block scales: 4 consecutive bytes in either layout. */
    uint32_t s4 = 0;
    const uint32_t kb = 4 * j;
    if (JG_A_SF_LAYOUT == 1) {
        const uint8_t *sf = p.sf[g] + (int64_t)r * (JG_K / 16) + kb;
        for (int c = 0; c < 4; ++c)
            if (k0 + 16 * c < JG_K)
                s4 |= (uint32_t)__ldg(sf + c) << (8 * c);
    } else {
        s4 = __ldg((const uint32_t *)(p.sf[g] + ((int64_t)(r / 128) * JG_FP4_KBP4 + kb / 4) * 512 +
                                      (r % 32) * 16 + (r / 32 % 4) * 4));
    }
    jg_fp4w z[4];
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        const bool in = k0 + 16 * c < JG_K;
        z[c] = jg_fp4_spread(in ? __ldg((const uint32_t *)(row + 8 * c)) : 0u);
        if (!in)
            s4 &= ~(0xFFu << (8 * c));
    }
    uint32_t sc[4];
    jg_fp4_scale_pairs(s4, sc);
    uint4 *out = (uint4 *)(p.ws + (int64_t)(jg_pre_group_ws[g] + r) * JG_PRE_K64 + k0);
#pragma unroll
    for (int s = 0; s < 4; ++s)
        out[2 * s + hi] = make_uint4(jg_fp4_pair(z[0], s, sc[0]), jg_fp4_pair(z[1], s, sc[1]),
                                     jg_fp4_pair(z[2], s, sc[2]), jg_fp4_pair(z[3], s, sc[3]));
}

/* ---- the GEMM ------------------------------------------------------------ */

/* Ring positions: the weight stages and the activation's pieces, each
 * with its mbarriers' phase, counted alike by the producer and both
 * consumers. */
struct jg_pre_ring {
    uint32_t ws, wph, ps, pph;
    JG_DEV void next_w()
    {
        if (++ws == JG_STAGES) {
            ws = 0;
            wph ^= 1;
        }
    }
    JG_DEV void next_p()
    {
        if (++ps == JG_PRE_SLOTS) {
            ps = 0;
            pph ^= 1;
        }
    }
};

/* The mbarriers: wfull[S], wempty[S], afull[P], aempty[P]. */
struct jg_pre_bars {
    uint32_t wfull, wempty, afull, aempty;
};

/* A stage's weight operand in a consumer thread's registers: the codes of
 * its rows r and r + 8 and their block scales, piece by piece. */
struct jg_pre_w {
    uint32_t wa[JG_FP4_PIECES][2], wb[JG_FP4_PIECES][2], sab[JG_FP4_PIECES];
};

/* Stage kt's weight (NP pieces) into registers, its slot then given back. */
template <int NP>
JG_DEV void jg_pre_load_stage(jg_pre_w &w, int kt, uint32_t rw, uint32_t sf_r0, uint32_t sf_r8,
                              uint32_t smem_w, const jg_pre_bars &bar, jg_pre_ring &rg)
{
    const uint32_t q4 = jg_lane_id() % 4;
    jg_mbar_wait(bar.wfull + 8 * rg.ws, rg.wph);
    const uint32_t st = smem_w + rg.ws * JG_PRE_WSTAGE_BYTES;
    const uint32_t sf_b = st + JG_PRE_W_BYTES;
#pragma unroll
    for (int j = 0; j < NP; ++j) {
        jg_fp4_row_codes(st, rw, q4, j, w.wa[j], w.wb[j]);
        const uint32_t at_j = jg_fp4_sf_at(JG_B_SF_LAYOUT, 0, 0, 4 * j);
        w.sab[j] = jg_fp4_row_scales(sf_b, sf_r0 + at_j, sf_r8 + at_j, 4 * (uint32_t)j + q4, kt);
    }
    jg_mbar_arrive(bar.wempty + 8 * rg.ws); /* this thread's weight bytes are in registers */
    rg.next_w();
}

/* A consumer's stage kt of a tile: NP pieces (4, fewer in a last partial
 * stage), each a group of 4 wgmmas on one of two fragment sets, made after
 * the wait that retired the group which used the set last; piece 0's set
 * (frag[0]) comes made. The stage ends drained (ptxas serializes every
 * wgmma of a loop whose back edge a group stays in flight across), its
 * pieces given back to the producer; but first, while its last group runs,
 * the next stage's weight is loaded and its piece 0's fragments made
 * (`next`: the tile has a next stage), so that the tensor pipe idles only
 * from the drain to the next group's issue. */
template <int NV, int NP>
JG_DEV void jg_pre_stage(float (&acc)[NV / 2], int kt, bool next, uint32_t rw, uint32_t sf_r0,
                         uint32_t sf_r8, uint32_t smem_w, uint64_t desc0, const jg_pre_bars &bar,
                         jg_pre_ring &rg, jg_pre_w &w, uint32_t (&frag)[2][4][4])
{
    const uint32_t lane = jg_lane_id();
    uint32_t slot[NP];
#pragma unroll
    for (int j = 0; j < NP; ++j) {
        if (j > 0)
            jg_fp4_frags_make(w.wa[j][0], w.wa[j][1], w.wb[j][0], w.wb[j][1], w.sab[j],
                              frag[j % 2]);
        jg_mbar_wait(bar.afull + 8 * rg.ps, rg.pph);
        slot[j] = rg.ps;
        const uint64_t d = jg_wgmma_desc_add(desc0, rg.ps * JG_PRE_PIECE_BYTES);
        rg.next_p();
        jg_wgmma_fence();
#pragma unroll
        for (int s = 0; s < 4; ++s)
            jg_wgmma_rs_n<NV>(acc, frag[j % 2][s], jg_wgmma_desc_add(d, s * 32), 1u);
        jg_wgmma_commit();
        if (j + 1 < NP) {
            jg_wgmma_wait<1>(); /* the previous piece's group has retired */
            if (j > 0 && lane == 0)
                jg_mbar_arrive(bar.aempty + 8 * slot[j - 1]);
        }
    }
    if (NP == JG_FP4_PIECES && next) { /* (a partial stage is a tile's last) */
        jg_wgmma_wait<1>(); /* piece NP - 2's group, the last on frag[0] */
        if (lane == 0)
            jg_mbar_arrive(bar.aempty + 8 * slot[NP - 2]);
        /* all 4 pieces even if the next stage is a partial one: the rest
         * of its slot's bytes are loaded and not used */
        jg_pre_load_stage<JG_FP4_PIECES>(w, kt + 1, rw, sf_r0, sf_r8, smem_w, bar, rg);
        jg_fp4_frags_make(w.wa[0][0], w.wa[0][1], w.wb[0][0], w.wb[0][1], w.sab[0], frag[0]);
    }
    jg_wgmma_wait<0>();
    if (lane == 0) {
        if (NP > 1 && !(NP == JG_FP4_PIECES && next))
            jg_mbar_arrive(bar.aempty + 8 * slot[NP - 2]);
        jg_mbar_arrive(bar.aempty + 8 * slot[NP - 1]);
    }
}

/* Pieces of the last stage when K is not a whole number of stages. */
#define JG_PRE_TAIL_PIECES ((JG_K % JG_FP4_STAGE_K + 63) / 64)

/* A consumer's tile (128 weight rows from tn * 128, its 64 from 64 C; the
 * chunk's rows as wgmma's N = NV): its stages, then the stores. */
template <int NV>
JG_DEV void jg_pre_tile(const jg_kargs_t &p, uint32_t C, const jg_pre_chunk &ch, uint32_t tn,
                        uint32_t smem_w, uint32_t smem_a, const jg_pre_bars &bar, jg_pre_ring &rg)
{
    const uint32_t lane = jg_lane_id(), wl = (threadIdx.x % 128) / 32;
    const uint32_t r0 = 16 * wl + lane / 4, q4 = lane % 4;
    const uint32_t rw = 64 * C + r0; /* r0's row in the staged weight tile */
    const uint32_t b_row0 = tn * JG_BLOCK_N;
    const uint32_t sf_r0 = jg_fp4_sf_at(JG_B_SF_LAYOUT, rw, b_row0, q4);
    const uint32_t sf_r8 = jg_fp4_sf_at(JG_B_SF_LAYOUT, rw + 8, b_row0, q4);
    const uint64_t desc0 = jg_wgmma_desc_sw128(smem_a);
    float acc[NV / 2];
#pragma unroll
    for (int i = 0; i < NV / 2; ++i)
        acc[i] = 0.0f;
    /* The stages: whole ones, then a partial one; each but the tile's last
     * loads the next one's weight before its drain. */
    constexpr int whole = JG_K / JG_FP4_STAGE_K, tail = JG_PRE_TAIL_PIECES;
    jg_pre_w w;
    uint32_t frag[2][4][4];
    jg_pre_load_stage<whole ? JG_FP4_PIECES : tail>(w, 0, rw, sf_r0, sf_r8, smem_w, bar, rg);
    jg_fp4_frags_make(w.wa[0][0], w.wa[0][1], w.wb[0][0], w.wb[0][1], w.sab[0], frag[0]);
    for (int kt = 0; kt < whole; ++kt)
        jg_pre_stage<NV, JG_FP4_PIECES>(acc, kt, kt + 1 < whole || tail, rw, sf_r0, sf_r8, smem_w,
                                        desc0, bar, rg, w, frag);
#if JG_PRE_TAIL_PIECES
    jg_pre_stage<NV, tail>(acc, whole, false, rw, sf_r0, sf_r8, smem_w, desc0, bar, rg, w, frag);
#endif
    /* D's rows from the chunk's, its columns the tile's weight rows
     * (sm90_swap_store.cuh). */
    const float gs = p.alpha * *p.a_scale[ch.g] * *p.b_scale[ch.g] * 16384.0f;
    const jg_swap_pairs sp = jg_swap_pairs_at(b_row0 + rw);
    const uint32_t row = 2 * q4 + sp.odd; /* of the chunk */
    jg_swap_store_tile<NV>(sp, acc, p.d_ptr[ch.g], p.c[ch.g], p.ldd, p.ldc, ch.row0 + row,
                           (int32_t)(ch.rows - row), gs, 1.0f, p.beta);
}

extern "C" __global__ void __launch_bounds__(JG_THREADS, 1)
JG_KERNEL_NAME(const __grid_constant__ jg_kargs_t p)
{
    const uint32_t smem_w = jg_smem_tiles();
    const uint32_t smem_a = smem_w + JG_STAGES * JG_PRE_WSTAGE_BYTES;
    jg_pre_bars bar;
    bar.wfull = smem_a + JG_PRE_SLOTS * JG_PRE_PIECE_BYTES;
    bar.wempty = bar.wfull + JG_STAGES * 8;
    bar.afull = bar.wempty + JG_STAGES * 8;
    bar.aempty = bar.afull + JG_PRE_SLOTS * 8;
    const uint32_t wg = threadIdx.x / 128;

    if (threadIdx.x == 0) {
        jg_tma_prefetch_desc(&p.a[0]);
        for (int g = 0; g < JG_GROUPS; ++g)
            jg_tma_prefetch_desc(&p.b[g]);
        for (int s = 0; s < JG_STAGES; ++s) {
            jg_mbar_init(bar.wfull + 8 * s, 1);
            jg_mbar_init(bar.wempty + 8 * s, 256); /* every consumer thread */
        }
        for (int s = 0; s < JG_PRE_SLOTS; ++s) {
            jg_mbar_init(bar.afull + 8 * s, 1);
            jg_mbar_init(bar.aempty + 8 * s, 8); /* every consumer warp */
        }
        jg_mbar_init_fence();
    }
    __syncthreads();

    jg_pre_ring rg = {0, 0, 0, 0};
    if (wg == 0) {
        jg_setmaxnreg_dec<40>();
        /* One producer thread for both rings (with a thread for each, the
         * weight's copies ran ahead and the pieces' waited behind them in
         * the copy engine: 10-15% slower on H100), the weight's stages
         * JG_PRE_AHEAD stages ahead of the pieces it issues: stage q of
         * the CTA's sequence (its tiles' stages one after another) is
         * (tile first + q / K_TILES, q % K_TILES). */
        if (threadIdx.x != 0)
            return;
        const uint32_t first = jg_pre_cta_first[blockIdx.x];
        const uint32_t stages = (jg_pre_cta_first[blockIdx.x + 1] - first) * JG_FP4_K_TILES;
        uint32_t qw = 0; /* the next weight stage to load */
        for (uint32_t q = 0; q < stages; ++q) {
            for (; qw < stages && qw <= q + JG_PRE_AHEAD; ++qw) {
                const uint32_t t = jg_pre_order[first + qw / JG_FP4_K_TILES];
                const int kt = (int)(qw % JG_FP4_K_TILES);
                const uint32_t g = jg_pre_chunks[t / JG_TILES_N].g;
                const int32_t b_row = (int32_t)((t % JG_TILES_N) * JG_BLOCK_N);
                jg_mbar_wait(bar.wempty + 8 * rg.ws, rg.wph ^ 1);
                const uint32_t st = smem_w + rg.ws * JG_PRE_WSTAGE_BYTES;
                const uint32_t full = bar.wfull + 8 * rg.ws;
                const uint32_t sfb =
                    JG_B_SF_LAYOUT == 1 ? JG_BLOCK_N * 16 : jg_fp4_sf_blocks(kt) * 512;
                jg_mbar_arrive_expect_tx(full, JG_PRE_W_BYTES + sfb);
                jg_tma_load_2d(st, &p.b[g], full, kt * 128, b_row);
                jg_fp4_load_sf<JG_B_SF_LAYOUT>(st + JG_PRE_W_BYTES, &p.b_sf[g], p.b_sf_ptr[g],
                                               b_row, b_row, JG_BLOCK_N, kt, full);
                rg.next_w();
            }
            if (q == 0) {
                /* The workspace is the pre-pass's: launched as its
                 * programmatic dependent, this kernel may start early
                 * (set-up, the first weight stages) and waits here. */
                jg_pdl_wait();
            }
            const uint32_t t = jg_pre_order[first + q / JG_FP4_K_TILES];
            const int kt = (int)(q % JG_FP4_K_TILES);
            const jg_pre_chunk ch = jg_pre_chunks[t / JG_TILES_N];
            const uint32_t boxes = (jg_pre_variant_n(ch.variant) + JG_PRE_BOX - 1) / JG_PRE_BOX;
            const int32_t a_row = (int32_t)(jg_pre_group_ws[ch.g] + ch.row0);
            const int np = jg_pre_pieces(kt);
            for (int j = 0; j < np; ++j) {
                jg_mbar_wait(bar.aempty + 8 * rg.ps, rg.pph ^ 1);
                const uint32_t af = bar.afull + 8 * rg.ps;
                const uint32_t dst = smem_a + rg.ps * JG_PRE_PIECE_BYTES;
                jg_mbar_arrive_expect_tx(af, boxes * JG_PRE_BOX * 128);
                for (uint32_t b = 0; b < boxes; ++b)
                    jg_tma_load_2d(dst + b * JG_PRE_BOX * 128, &p.a[0], af,
                                   (kt * JG_FP4_PIECES + j) * 64,
                                   a_row + (int32_t)(b * JG_PRE_BOX));
                rg.next_p();
            }
        }
    } else {
        jg_setmaxnreg_inc<232>(); /* 128 x 40 + 256 x 232 <= 65536 */
        const uint32_t C = wg - 1;
        for (uint32_t i = jg_pre_cta_first[blockIdx.x]; i < jg_pre_cta_first[blockIdx.x + 1]; ++i) {
            const uint32_t t = jg_pre_order[i];
            const jg_pre_chunk ch = jg_pre_chunks[t / JG_TILES_N];
            const uint32_t tn = t % JG_TILES_N;
#define JG_PRE_TILE_CASE(i, n)                                                                 \
    case i:                                                                                    \
        jg_pre_tile<n>(p, C, ch, tn, smem_w, smem_a, bar, rg);                                 \
        break;
            switch (ch.variant) { JG_PRE_VARIANTS(JG_PRE_TILE_CASE) }
#undef JG_PRE_TILE_CASE
        }
    }
}
