/* NVFP4 GEMM for sm_90a with the weight on wgmma's M side (swap-AB), for
 * decode shapes: D[M,N] = alpha * g * A[M,K] * B[N,K]^T (+ beta * C), A the
 * activation (M <= a few hundred rows), B the weight, g = the product of
 * the two global scales.
 *
 * The weight never goes through shared memory as 16-bit values: each
 * consumer thread loads its share of the packed codes and block scales of a
 * stage and dequantizes them in registers, straight into the A fragments of
 * register-A wgmmas (m64nNk16, N = the activation rows of the tile). The
 * activation is the wgmma's B operand: a converter (warps 1-3 of the
 * producer warpgroup) expands its codes into FP16 pieces of 64 of K in
 * shared memory, the layout TMA's 128B swizzle gives a 16-bit tile.
 *
 * Exactness and K order: sm90_nvfp4.cuh's dequantization (shared with the
 * expanding kernel). Each thread's 16 elements of a weight row per piece
 * (c = lane % 4) are one 16-element scale block, read with one 8-byte load.
 *
 * Work split. A tile is 64 weight rows (BLOCK_N) by BLOCK_M activation
 * rows; both consumer warpgroups own all 64 rows and take every other
 * stage, two stages in work at once, so their accumulators are summed at
 * the tile's end through shared memory: halving the rows per CTA doubles
 * the CTAs that stream the weight, and the activation is expanded once per
 * CTA. Slabs (BLOCK_N = 128, for 32 to 64 activation rows and long K): each
 * consumer owns 64 of the rows and runs every stage, so the activation is
 * expanded once per 128 weight rows, and clusters of 2 split K to keep the
 * CTAs (JG_SW_SLAB).
 *
 * Shared memory: JG_STAGES staged stages as sm90_nvfp4.cuh loads them
 * (activation codes, weight codes, both operands' scales), JG_SW_BUFS FP16
 * pieces of the activation, the reduction buffer, then the mbarriers:
 * full/empty per stage, full/empty per piece.
 *
 * The piece ring: slots of a stage's 4 pieces, JG_SW_SLOTS per consumer
 * (JG_SW_BUFS = 8 or 16: one or two). With one, a consumer's next stage
 * waits for the converter to fill the slot its last stage has just freed,
 * so the conversion's latency shows at every stage; with two (small tiles
 * of activation rows, where the pieces are small), the converter fills a
 * consumer's other slot while it runs. Consumer C's u-th stage uses slot
 * C + 2 (u % JG_SW_SLOTS), the u / JG_SW_SLOTS-th use of that slot. Slabs:
 * two slots that both consumers read, stage u's slot u % 2. */
#ifndef JG_KERNEL_NAME
#define JG_KERNEL_NAME jg_nvfp4_swap_sm90_default
#define JG_AB_DTYPE 5
#define JG_D_DTYPE 1
#define JG_HAS_C 1
#define JG_SCALE 4
#define JG_M 0
#define JG_N 7168
#define JG_K 2048
#define JG_BLOCK_M 128
#define JG_BLOCK_N 64
#define JG_BLOCK_K 256
#define JG_STAGES 3
#define JG_CONSUMERS 2
#define JG_A_BOX_M 128
#define JG_A_SF_LAYOUT 2
#define JG_B_SF_LAYOUT 2
#define JG_SW_BUFS 8
#endif
#ifndef JG_PDL /* 1: a programmatic dependent (JG_GEMM_PDL) */
#define JG_PDL 0
#endif
/* Clusters of 2 split K: CTA rank r of a cluster runs stages
 * [r * ceil(K_TILES / 2), ...) of the cluster's tile, and rank 1's sums
 * join rank 0's through distributed shared memory (for problems with too
 * few tiles to fill the GPU). sm90_nvfp4.cuh's loads know no clusters. */
#if defined(JG_CLUSTER) && JG_CLUSTER == 2 /* the value, not the name: it is redefined */
#define JG_SW_SPLIT 2
#else
#define JG_SW_SPLIT 1
#endif
#undef JG_CLUSTER
#define JG_CLUSTER 1
#define JG_LAYOUT 0

#include "jg_kargs.h"
#include "sm90_ptx.cuh"

/* The wgmma's N: the activation rows the tile loads (a baked M below the
 * tile's rows, rounded up to 8, loads only those). */
#define JG_MMA_N JG_A_BOX_M
#include "sm90_wgmma_n.cuh"

typedef jg_nvfp4_kargs jg_kargs_t;

/* What sm90_nvfp4.cuh's stage loads read of a tile. */
struct jg_tile {
    uint32_t tm, tn;
    const jg_tmap *a, *b;
    int32_t row_base, b_row; /* dense: 0 */
    const jg_tmap *a_sf, *b_sf;
    const uint8_t *a_sf_ptr, *b_sf_ptr;
};

#include "sm90_nvfp4.cuh"
#include "sm90_swap_store.cuh"

#define JG_THREADS 512 /* producer + converter, 2 consumers, converter */
#define JG_SW_PIECE_BYTES (JG_BLOCK_M * 128) /* one FP16 piece: 64 of K per row */
#define JG_SW_RED_BYTES (128 * (JG_MMA_N / 2) * 4) /* consumer 1's accumulators */
/* Converter warps: warps 1..3, then warpgroup 3's, as many as a stage's
 * items need (8 per activation row of the box: 4 pieces, 2 halves), up to
 * 7; the others idle (at M = 1, 64 items: five idle warps spent a fifth of
 * the kernel's issue slots waiting and signalling for nothing). */
#define JG_SW_CONV_WARPS (JG_A_BOX_M / 4 < 7 ? JG_A_BOX_M / 4 : 7)
#define JG_SW_CONV_THREADS (JG_SW_CONV_WARPS * 32)
/* A converter thread's items of a stage, at most (8 per row of the box) */
#define JG_SW_CONV_ITEMS ((8 * JG_A_BOX_M + JG_SW_CONV_THREADS - 1) / JG_SW_CONV_THREADS)
#define JG_TILES_N ((JG_N + JG_BLOCK_N - 1) / JG_BLOCK_N)

static_assert((JG_BLOCK_N == 64 || JG_BLOCK_N == 128) && JG_CONSUMERS == 2,
              "swap-AB: 64 or 128 weight rows, two consumers");
/* Slabs (128 weight rows): each consumer owns 64 of the tile's rows
 * (consumer C rows 64 C ..) and runs every stage of the tile, both reading
 * each stage's activation pieces: the activation is converted once per 128
 * weight rows instead of 64 (at M = 64 the conversion was half the
 * kernel's instructions). With 64 rows both consumers own all of them and
 * take alternate stages. */
#define JG_SW_SLAB (JG_BLOCK_N == 128)
#define JG_SW_ROWS0(c) (JG_SW_SLAB ? 64 * (c) : 0) /* consumer c's first weight row */
static_assert(JG_SW_SPLIT == 1 || (JG_SW_SPLIT == 2 && JG_FP4_K_TILES >= 2),
              "K splits in two at most, each rank with a stage");
/* Stages of a rank: the first ceil(K_TILES / 2) or the rest. */
#define JG_SW_KT_HALF ((JG_FP4_K_TILES + 1) / 2)
static_assert(JG_BLOCK_M >= 8 && JG_BLOCK_M <= 128 && (JG_BLOCK_M & (JG_BLOCK_M - 1)) == 0,
              "swap-AB: the activation rows of a tile lie in one 128-row block of scales");
static_assert(JG_A_BOX_M % 8 == 0 && JG_A_BOX_M <= JG_BLOCK_M, "wgmma N: whole 8-row atoms");
static_assert(JG_SW_BUFS == 8 || JG_SW_BUFS == 16, "slots of 4 pieces, one or two per consumer");
/* slots per consumer; slabs: two slots that both consumers read */
#define JG_SW_SLOTS (JG_SW_SLAB ? 2 : JG_SW_BUFS / 8)
static_assert(!JG_SW_SLAB || JG_SW_BUFS == 8, "slabs: two slots of 4 pieces");
/* Readers of a piece, arriving once per warp when done with it */
#define JG_SW_PIECE_READERS (JG_SW_SLAB ? 8 : 4)

/* Consumer h's u-th stage: its slot of the piece ring, and that slot's use
 * count (the parity of its mbarriers' phases). Slabs: every stage is both
 * consumers', its slot u % 2. */
JG_DEV uint32_t jg_sw_slot(uint32_t h, uint32_t u)
{
    return JG_SW_SLAB ? u % JG_SW_SLOTS : h + 2 * (u % JG_SW_SLOTS);
}
JG_DEV uint32_t jg_sw_slot_use(uint32_t u) { return u / JG_SW_SLOTS; }

/* Stores v at shared offset `addr` of the cluster's CTA `rank`. */
JG_DEV void jg_st_remote_f32(uint32_t addr, uint32_t rank, float v)
{
    asm volatile("{\n"
                 ".reg .b32 remote;\n"
                 "mapa.shared::cluster.u32 remote, %0, %1;\n"
                 "st.shared::cluster.f32 [remote], %2;\n"
                 "}" ::"r"(addr), "r"(rank), "f"(v)
                 : "memory");
}

/* acc += the sums another consumer left at buf (thread tid's own). */
JG_DEV void jg_sw_add_sums(float (&acc)[JG_MMA_N / 2], uint32_t buf, uint32_t tid)
{
#pragma unroll
    for (int i = 0; i < JG_MMA_N / 2; ++i) {
        float v;
        asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(buf + (i * 128 + tid) * 4) : "memory");
        acc[i] += v;
    }
}

/* The i-th of a tile's n stages (in this CTA) is consumer (i + n) % 2's
 * (the last stage of a tile is consumer 1's); its slot of the piece ring:
 * jg_sw_slot. */
JG_DEV uint32_t jg_sw_consumer(int i, int n) { return (uint32_t)(i + n) % 2; }

/* This CTA's stages of each tile: [*first, *first + return value). */
JG_DEV int jg_sw_stages(uint32_t rank, int *first)
{
    *first = (int)rank * JG_SW_KT_HALF;
    return JG_SW_SPLIT == 1 ? JG_FP4_K_TILES : rank ? JG_FP4_K_TILES - JG_SW_KT_HALF : JG_SW_KT_HALF;
}

/* Consumer C (0 or 1): every other stage of each tile (in its slots of the
 * piece ring); consumer 0 adds consumer 1's sums (and with a K split,
 * rank 0 adds rank 1's) and stores the tile. Slabs: every stage, for its
 * own 64 rows, which it stores (after rank 1's sums). The mbarriers follow
 * bar_full: full[S], empty[S], afull[8], aempty[8], then red, red_free
 * (the K split's). */
template <int C>
JG_DEV void jg_sw_consume(const jg_kargs_t &p, uint32_t smem_st, uint32_t smem_act,
                          uint32_t smem_red, uint32_t bar_full, int32_t m, uint32_t tiles_m,
                          uint32_t tiles)
{
    const uint32_t bar_empty = bar_full + JG_STAGES * 8;
    const uint32_t bar_afull = bar_empty + JG_STAGES * 8, bar_aempty = bar_afull + JG_SW_BUFS * 8;
    const uint32_t lane = jg_lane_id(), wl = (threadIdx.x % 128) / 32;
    const uint32_t r0 = 16 * wl + lane / 4, q4 = lane % 4; /* rows r0, r0 + 8; block q4 */
    const uint32_t rw = JG_SW_ROWS0(C) + r0; /* r0's row in the staged tile */
    const float g = *p.a_scale * *p.b_scale * 16384.0f;  /* global scales, times 2^14 */
    float acc[JG_MMA_N / 2];
    uint32_t done = 0; /* stages of earlier tiles: the ring's position at a tile's start */
    uint32_t uses = 0; /* stages this consumer ran (its slots' uses: jg_sw_slot) */
    /* the pieces' descriptors: the ring's first plus a constant offset */
    const uint64_t desc0 = jg_wgmma_desc_sw128(smem_act);
    const uint32_t rank = JG_SW_SPLIT > 1 ? jg_cluster_rank() : 0;
    int kt0;
    const int nk = jg_sw_stages(rank, &kt0);
    const uint32_t bar_red = bar_aempty + JG_SW_BUFS * 8, bar_red_free = bar_red + 8;
    uint32_t tile_no = 0;
    for (uint32_t t = blockIdx.x / JG_SW_SPLIT; t < tiles;
         t += gridDim.x / JG_SW_SPLIT, done += (uint32_t)nk, ++tile_no) {
        const uint32_t tm = t % tiles_m, tn = t / tiles_m;
        const uint32_t b_row0 = tn * JG_BLOCK_N;
        /* the scale bytes of rows r0 and r0 + 8 in a stage: block 4j + q4 is
         * sf_at(row) + sf_at(block 4j of row 0) in either layout */
        const uint32_t sf_r0 = jg_fp4_sf_at(JG_B_SF_LAYOUT, rw, b_row0, q4);
        const uint32_t sf_r8 = jg_fp4_sf_at(JG_B_SF_LAYOUT, rw + 8, b_row0, q4);
#pragma unroll
        for (int i = 0; i < JG_MMA_N / 2; ++i)
            acc[i] = 0.0f;
        /* The two consumers take alternate stages, so that two stages are
         * in work at once: consumer C the stages of its slots of the piece
         * ring, kt = (C + K_TILES) % 2, + 2, ... A stage's 4 pieces go in
         * two groups of 8 wgmmas on two fragment sets: a register operand
         * of a wgmma in flight must not be written (one set, rewritten a
         * stage later while its wgmmas ran on, gave wrong sums once wgmmas
         * were long: N >= 40), and ptxas keeps wgmmas asynchronous only if
         * fragments are made after a wait_group, as here. With two slots
         * per consumer a stage's second group stays in flight into the
         * next stage: each set is remade after the wait_group that retires
         * its last group, and a slot goes back to the converter once both
         * of its groups have retired (with one slot, at once: the
         * converter waits for it). */
        constexpr bool defer = JG_SW_SLOTS == 2;
        uint32_t frag_a[2][4][4], frag_b[2][4][4];
        uint32_t prev_slot = 0;
        bool pending = false; /* the previous stage's slot awaits its release */
        auto release = [&](uint32_t sl) {
            if (lane == 0) /* the slot's 4 pieces go back to the converter */
                for (int j = 0; j < 4; ++j)
                    jg_mbar_arrive(bar_aempty + 8 * (4 * sl + j));
        };
        auto run_stage = [&](int i) {
            const int kt = kt0 + i; /* the stage's place in K */
            const uint32_t pos = done + (uint32_t)i;
            const uint32_t stage = pos % JG_STAGES, phase = (pos / JG_STAGES) & 1;
            jg_mbar_wait(bar_full + 8 * stage, phase);
            const uint32_t st = smem_st + stage * JG_FP4_STAGE_BYTES;
            const uint32_t wrows = st + JG_BLOCK_M * 128;
            const uint32_t sf_b = st + (JG_BLOCK_M + JG_BLOCK_N) * 128 + JG_FP4_SF_BYTES;
            /* Piece j: the thread's 16 codes of rows r0 and r0 + 8 (bytes
             * 32 j + 8 q4 of the row, chunk 2 j + q4 / 2), and their scales. */
            uint32_t wa[4][2], wb[4][2], sab[4];
            auto load_piece = [&](int j) {
                jg_fp4_row_codes(wrows, rw, q4, j, wa[j], wb[j]);
                const uint32_t kb = 4 * (uint32_t)j + q4;
                const uint32_t at_j = jg_fp4_sf_at(JG_B_SF_LAYOUT, 0, 0, 4 * j);
                sab[j] = jg_fp4_row_scales(sf_b, sf_r0 + at_j, sf_r8 + at_j, kb, kt);
            };
            /* This stage's slot of the piece ring: its pieces' first
             * buffer, their descriptors' start, their mbarriers' phase. */
            const uint32_t slot = jg_sw_slot(C, uses), apar = jg_sw_slot_use(uses) & 1;
            const uint64_t desc_slot = jg_wgmma_desc_add(desc0, 4 * slot * JG_SW_PIECE_BYTES);
            /* Pieces j0, j0 + 1 as fragments, then their 8 wgmmas. */
            auto issue = [&](uint32_t(&frag)[2][4][4], int j0) {
#pragma unroll
                for (int jj = 0; jj < 2; ++jj) {
                    const int j = j0 + jj;
                    jg_fp4_frags_make(wa[j][0], wa[j][1], wb[j][0], wb[j][1], sab[j], frag[jj]);
                }
                jg_mbar_wait(bar_afull + 8 * (4 * slot + j0), apar);
                jg_mbar_wait(bar_afull + 8 * (4 * slot + j0 + 1), apar);
                jg_wgmma_fence();
#pragma unroll
                for (int jj = 0; jj < 2; ++jj)
#pragma unroll
                    for (int s = 0; s < 4; ++s)
                        jg_wgmma_rs(acc, frag[jj][s],
                                    jg_wgmma_desc_add(desc_slot,
                                                      (j0 + jj) * JG_SW_PIECE_BYTES + s * 32),
                                    1u);
                jg_wgmma_commit();
            };
            load_piece(0);
            load_piece(1);
            load_piece(2);
            load_piece(3);
            jg_mbar_arrive(bar_empty + 8 * stage); /* this thread's weight bytes are in registers */
            if (defer && pending)
                jg_wgmma_wait<1>(); /* the previous stage's first group */
            issue(frag_a, 0);
            jg_wgmma_wait<1>(); /* the previous stage's second group (deferred), or none */
            if (defer && pending)
                release(prev_slot);
            issue(frag_b, 2);
            ++uses;
            if (defer) {
                prev_slot = slot;
                pending = true;
            } else {
                jg_wgmma_wait<0>();
                release(slot);
            }
        };
        /* Deferred: stages in pairs, drained at the end of each (ptxas
         * serializes the wgmmas when a group stays in flight across the
         * loop's back edge). Slabs: every stage. */
        constexpr int step = JG_SW_SLAB ? 1 : 2;
        for (int i = JG_SW_SLAB ? 0 : (C + nk) % 2; i < nk; i += defer ? 2 * step : step) {
            run_stage(i);
            if (defer) {
                if (i + step < nk)
                    run_stage(i + step);
                jg_wgmma_wait<0>();
                release(prev_slot);
                pending = false;
            }
        }
        /* Consumer 1's sums join consumer 0's, which stores the tile
         * (slabs: each consumer stores its own rows). */
        const uint32_t tid = threadIdx.x % 128;
        constexpr bool stores = C == 0 || JG_SW_SLAB;
        if (!JG_SW_SLAB) {
            if (C == 1) {
#pragma unroll
                for (int i = 0; i < JG_MMA_N / 2; ++i)
                    asm volatile("st.shared.f32 [%0], %1;" ::"r"(smem_red + (i * 128 + tid) * 4),
                                 "f"(acc[i])
                                 : "memory");
            }
            /* The two consumers are two instances of this function: the
             * barriers they share are reached from different instructions. */
            jg_named_barrier_unaligned(1, 256);
            if (C == 0)
                jg_sw_add_sums(acc, smem_red, tid);
            jg_named_barrier_unaligned(2, 256); /* the buffer is free for the next tile */
        }
        if (JG_SW_SPLIT > 1 && stores) {
            /* Rank 1's sums go to rank 0's second buffer (slabs: each
             * consumer's its own), each thread its own, announced by each
             * thread (release, cluster scope); rank 0 gives the buffer back
             * once it has read it. */
            const uint32_t red2 = smem_red + (JG_SW_SLAB ? C : 1) * JG_SW_RED_BYTES;
            if (rank == 1) {
                jg_mbar_wait<true>(bar_red_free, (tile_no & 1) ^ 1);
#pragma unroll
                for (int i = 0; i < JG_MMA_N / 2; ++i)
                    jg_st_remote_f32(red2 + (i * 128 + tid) * 4, 0, acc[i]);
                jg_mbar_arrive_cluster(bar_red, 0);
            } else {
                jg_mbar_wait<true>(bar_red, tile_no & 1);
                jg_sw_add_sums(acc, red2, tid);
                jg_mbar_arrive_cluster(bar_red_free, 1);
            }
        }
        if (stores && rank == 0) {
            /* D's rows from the tile's (tm), its columns the weight rows
             * (sm90_swap_store.cuh) */
            const jg_swap_pairs sp = jg_swap_pairs_at(b_row0 + rw);
            const int32_t m0 = (int32_t)(tm * JG_BLOCK_M + 2 * q4 + sp.odd);
            jg_swap_store_tile<JG_MMA_N>(sp, acc, p.d_ptr, p.c, p.ldd, p.ldc, m0, m - m0, g,
                                         p.alpha, p.beta);
        }
    }
}

extern "C" __global__ void __launch_bounds__(JG_THREADS, 1)
JG_KERNEL_NAME(const __grid_constant__ jg_kargs_t p)
{
    const uint32_t smem_st = jg_smem_tiles();
    const uint32_t smem_act = smem_st + JG_STAGES * JG_FP4_STAGE_BYTES;
    const uint32_t smem_red = smem_act + JG_SW_BUFS * JG_SW_PIECE_BYTES;
    const uint32_t bar_full = smem_red + JG_SW_SPLIT * JG_SW_RED_BYTES;
    const uint32_t bar_empty = bar_full + JG_STAGES * 8;
    const uint32_t bar_afull = bar_empty + JG_STAGES * 8;
    const uint32_t bar_aempty = bar_afull + JG_SW_BUFS * 8;
    const uint32_t bar_red = bar_aempty + JG_SW_BUFS * 8, bar_red_free = bar_red + 8;
    const uint32_t rank = JG_SW_SPLIT > 1 ? jg_cluster_rank() : 0;
    int kt0;
    const int nk = jg_sw_stages(rank, &kt0);

#if JG_M
    const int32_t m = JG_M;
#else
    const int32_t m = p.m;
#endif
    const uint32_t tiles_m = ((uint32_t)m + JG_BLOCK_M - 1) / JG_BLOCK_M;
    const uint32_t tiles = tiles_m * JG_TILES_N;
    const uint32_t wg = threadIdx.x / 128;

    if (threadIdx.x == 0) {
        jg_tma_prefetch_desc(&p.a);
        jg_tma_prefetch_desc(&p.b);
        if (JG_A_SF_LAYOUT == 1)
            jg_tma_prefetch_desc(&p.a_sf);
        if (JG_B_SF_LAYOUT == 1)
            jg_tma_prefetch_desc(&p.b_sf);
        /* A stage is read by the converter's threads and one consumer's
         * 128, each arriving after its own last read (see JG_EMPTY_ARRIVALS
         * in sm90_gemm.cu: racecheck follows no other way to the next copy). */
        for (int s = 0; s < JG_STAGES; ++s) {
            jg_mbar_init(bar_full + 8 * s, 1);
            /* + the stage's consumer (slabs: both) */
            jg_mbar_init(bar_empty + 8 * s, JG_SW_CONV_THREADS + (JG_SW_SLAB ? 256 : 128));
        }
        /* A piece: written by the converter's warps, read by one consumer. */
        for (int b = 0; b < JG_SW_BUFS; ++b) {
            jg_mbar_init(bar_afull + 8 * b, JG_SW_CONV_WARPS);
            jg_mbar_init(bar_aempty + 8 * b, JG_SW_PIECE_READERS);
        }
        /* K split: rank 1's consumer 0 threads (slabs: both consumers')
         * fill rank 0's buffer, and rank 0's give it back */
        jg_mbar_init(bar_red, JG_SW_SLAB ? 256 : 128);
        jg_mbar_init(bar_red_free, JG_SW_SLAB ? 256 : 128);
        jg_mbar_init_fence();
    }
#if JG_SW_SPLIT > 1
    jg_cluster_sync(); /* the peer's barriers exist before anything reaches them */
#else
    __syncthreads();
#endif
#if JG_PDL
    jg_pdl_wait(); /* a programmatic dependent: see sm90_gemm.cu */
#endif

    /* Tiles: the activation's row tiles of one weight tile are adjacent, so
     * CTAs that share weight rows run together and read them once. */
    if (wg == 0 || wg == 3) {
        jg_setmaxnreg_dec<80>();
        /* the converter's threads: warps 1..3, then warpgroup 3 */
        const uint32_t conv_tid = wg == 0 ? threadIdx.x - 32 : threadIdx.x - 384 + 96;
        if (threadIdx.x < 32) {
            uint32_t stage = 0, phase = 0;
            for (uint32_t t = blockIdx.x / JG_SW_SPLIT; t < tiles; t += gridDim.x / JG_SW_SPLIT) {
                const jg_tile tl = {t % tiles_m, t / tiles_m, &p.a,     &p.b, 0, 0,
                                    &p.a_sf,     &p.b_sf,     p.a_sf_ptr, p.b_sf_ptr};
                for (int kt = kt0; kt < kt0 + nk; ++kt) {
                    jg_mbar_wait(bar_empty + 8 * stage, phase ^ 1);
                    if (jg_elect_one())
                        jg_fp4_load_stage(tl, smem_st + stage * JG_FP4_STAGE_BYTES, kt,
                                          bar_full + 8 * stage);
                    __syncwarp();
                    if (++stage == JG_STAGES) {
                        stage = 0;
                        phase ^= 1;
                    }
                }
            }
#if JG_PDL
            jg_pdl_launch_dependents(); /* its last load issued */
#endif
        } else if (threadIdx.x >= 32 && conv_tid < JG_SW_CONV_THREADS) {
            /* Converter: the activation's pieces, a group at a time. */
            const uint32_t tid = conv_tid;
            uint32_t stage = 0, phase = 0;
            uint32_t uses0 = 0, uses1 = 0; /* stages per consumer, as they count them */
            for (uint32_t t = blockIdx.x / JG_SW_SPLIT; t < tiles; t += gridDim.x / JG_SW_SPLIT) {
                const uint32_t a_row0 = (t % tiles_m) * JG_BLOCK_M;
                const uint32_t rows = min((uint32_t)JG_A_BOX_M, (uint32_t)m - a_row0);
                /* The stage's 4 pieces at once (the consumer of this slot
                 * takes the stage whole), in items of half a row spread
                 * over the converter's threads, piece-major (jg_fp4_item
                 * within a piece): this thread's items tid + k x threads,
                 * the same in every stage, the first three's addresses
                 * made here (five, at 128 rows, spill the 80 registers). Rows
                 * past M up to a whole 8-row atom are converted (the box's
                 * zeros), the rest left as they are (their sums are never
                 * stored). */
                const uint32_t per_piece = 2 * ((rows + 7) / 8 * 8); /* whole 8-row atoms */
                const uint32_t items = JG_FP4_PIECES * per_piece;
                auto item_at = [&](int k, uint32_t *j) {
                    const uint32_t i = tid + (uint32_t)k * JG_SW_CONV_THREADS;
                    uint32_t n, hi;
                    *j = i / per_piece;
                    jg_fp4_item(i % per_piece, &n, &hi);
                    return jg_fp4_at_make<JG_A_SF_LAYOUT>(n, hi, a_row0);
                };
                constexpr int keep = JG_SW_CONV_ITEMS < 3 ? JG_SW_CONV_ITEMS : 3;
                jg_fp4_at at[keep];
                uint32_t piece[keep];
#pragma unroll
                for (int k = 0; k < keep; ++k)
                    at[k] = item_at(k, &piece[k]);
                for (int kt = kt0; kt < kt0 + nk; ++kt) {
                    jg_mbar_wait(bar_full + 8 * stage, phase);
                    const uint32_t st = smem_st + stage * JG_FP4_STAGE_BYTES;
                    const uint32_t h = JG_SW_SLAB ? 0 : jg_sw_consumer(kt - kt0, nk);
                    const uint32_t u = h ? uses1++ : uses0++;
                    const uint32_t ring = 4 * jg_sw_slot(h, u), par = (jg_sw_slot_use(u) & 1) ^ 1;
                    for (int j = 0; j < JG_FP4_PIECES; ++j)
                        jg_mbar_wait(bar_aempty + 8 * (ring + j), par);
                    const uint32_t sf = st + (JG_BLOCK_M + JG_BLOCK_N) * 128;
#pragma unroll
                    for (int k = 0; k < keep; ++k)
                        if (tid + (uint32_t)k * JG_SW_CONV_THREADS < items)
                            jg_fp4_convert<JG_A_SF_LAYOUT>(
                                at[k], st, sf, smem_act + (ring + piece[k]) * JG_SW_PIECE_BYTES,
                                kt, piece[k]);
#pragma unroll 1
                    for (int k = keep; k < JG_SW_CONV_ITEMS; ++k) {
                        if (tid + (uint32_t)k * JG_SW_CONV_THREADS >= items)
                            break;
                        uint32_t j;
                        const jg_fp4_at a = item_at(k, &j);
                        jg_fp4_convert<JG_A_SF_LAYOUT>(
                            a, st, sf, smem_act + (ring + j) * JG_SW_PIECE_BYTES, kt, j);
                    }
                    jg_fence_proxy_async_smem(); /* our stores, then the wgmmas' reads */
                    __syncwarp();
                    if (jg_lane_id() == 0)
                        for (int j = 0; j < JG_FP4_PIECES; ++j)
                            jg_mbar_arrive(bar_afull + 8 * (ring + j));
                    jg_mbar_arrive(bar_empty + 8 * stage);
                    if (++stage == JG_STAGES) {
                        stage = 0;
                        phase ^= 1;
                    }
                }
            }
        }
    } else {
        jg_setmaxnreg_inc<176>(); /* 2 x 128 x 80 + 256 x 176 = 65536 */
        if (wg == 1)
            jg_sw_consume<0>(p, smem_st, smem_act, smem_red, bar_full, m, tiles_m, tiles);
        else
            jg_sw_consume<1>(p, smem_st, smem_act, smem_red, bar_full, m, tiles_m, tiles);
    }
#if JG_SW_SPLIT > 1
    __syncwarp();
    jg_cluster_sync(); /* no CTA leaves while its peer may still reach into it */
#endif
}
