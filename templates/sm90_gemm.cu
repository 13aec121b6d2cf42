/* Dense GEMM for sm_90a: D[M,N] = alpha * A[M,K] * B[N,K]^T + beta * C[M,N].
 *
 * One CTA = one producer warpgroup (one thread issues TMA loads) and
 * JG_CONSUMERS consumer warpgroups (wgmma with FP32 accumulators in
 * registers), joined by a ring of JG_STAGES shared-memory stages, each with
 * a "full" and an "empty" mbarrier. The grid is persistent: each CTA walks
 * output tiles tile = blockIdx.x, blockIdx.x + gridDim.x, ... in a grouped
 * order that keeps a band of A rows and B columns hot in L2 (jg_tile_coords).
 *
 * The generator (src/codegen/emit.c) defines the JG_* constants below before
 * this text; the defaults only let nvcc compile the file on its own:
 *   nvcc -gencode=arch=compute_90a,code=sm_90a -cubin -I templates templates/sm90_gemm.cu
 */
#ifndef JG_KERNEL_NAME
#define JG_KERNEL_NAME jg_gemm_sm90_default
#define JG_AB_DTYPE 1 /* 1 bf16, 2 fp16, 3 fp32 (as TF32), 4 e4m3, 5 nvfp4 (jg_dtype) */
#define JG_D_DTYPE 1  /* 1 bf16, 2 fp16, 3 fp32 */
#define JG_HAS_C 1
#define JG_M 0        /* 0: M from the arguments */
#define JG_N 4096
#define JG_K 4096
#define JG_BLOCK_M 128
#define JG_BLOCK_N 256
#define JG_BLOCK_K 64
#define JG_STAGES 4
#define JG_CONSUMERS 2
#define JG_GROUP_M 8
#define JG_EPI_BYTES 128 /* bytes per row of an epilogue chunk: 16, 32, 64 or 128 */
#endif
#ifndef JG_GROUPS
#define JG_GROUPS 0 /* groups of a grouped GEMM */
#endif
#ifndef JG_PDL /* 1: a programmatic dependent (JG_GEMM_PDL) */
#define JG_PDL 0
#endif
#ifndef JG_LAYOUT /* 0 dense; grouped: 1 list (rows JG_GROUP_MS baked), 2 contiguous, 3 masked */
#define JG_LAYOUT (JG_GROUPS ? 1 : 0)
#endif
#define JG_DEVICE_ROWS (JG_LAYOUT >= 2) /* group rows read from the device at start */
/* Swap-AB (dense): the kernel computes D^T = B A^T. Its A operand is the
 * problem's B and its B operand the problem's A, so its rows run over the
 * problem's N (baked in as JG_M) and its columns over M (JG_N: baked, or 0
 * for M from the arguments): wgmma's N, any multiple of 8, then fits M, and
 * no tile pads a few rows of M to 64 or 128. Up to the epilogue the kernel
 * is the unswapped one; its jg_epilogue stores the transpose, C is read
 * transposed, and the host passes the row scales swapped. */
#ifndef JG_SWAP_AB
#define JG_SWAP_AB 0
#endif
/* Split-K: a cluster of JG_SPLIT_K CTAs shares one output tile, each over
 * its share of K; they sum their partials through distributed shared memory
 * (jg_split_publish, jg_split_gather). One tile per cluster (the host
 * launches them all). */
#ifndef JG_SPLIT_K
#define JG_SPLIT_K 1
#endif
/* Split-K through the caller's workspace, without clusters: JG_SPLIT_WS
 * units a tile, each over its share of K, scheduled on the persistent CTAs
 * share by share (unit t: share t / T of tile t % T, T tiles in their
 * usual order: jg_ws_unit), so that the CTAs at work at once sweep one
 * share of K over all tiles and read each piece of A and B from DRAM once,
 * as the unsplit grid does. All but a tile's last unit store their FP32
 * sums to the workspace and count themselves on the tile (jg_split_ws);
 * the last waits for the count, adds the others' sums and runs the
 * epilogue. */
#ifndef JG_SPLIT_WS
#define JG_SPLIT_WS 1
#endif
/* Stream-K (with JG_SPLIT_WS > 1): the same units, JG_SPLIT_WS a tile, run
 * tile by tile, and CTA b of the grid's G runs the consecutive units
 * [b U / G, (b + 1) U / G) of all U (jg_sk_begin): every CTA the same work
 * within a unit, however many tiles there are. A CTA's consecutive units
 * of one tile (a run) go on with the sums in its registers; only the runs
 * that cut a tile meet in the workspace: a run that begins inside a tile
 * (a CTA's first, then) stores its sums in the CTA's part and flags it,
 * and the tile's first run (a CTA's last) adds the flagged parts of the
 * CTAs after it and runs the epilogue (jg_stream_k). JG_STREAM_K is the
 * count of row groups R: where the problem's M spans R tiles, the grid's
 * CTAs make R equal groups, interleaved (CTA b in group b % R), group r
 * running the units of the r-th row of tiles along M (tile r L + l:
 * jg_cta_tile) the same way, so that neighbouring CTAs run the tiles that
 * share a panel of the weight over the same stages of K at once and the
 * panel comes from DRAM once (one group over all tiles starts those runs
 * at unrelated places of K; groups of consecutive CTAs, far apart, read
 * it from DRAM more than once: plan_sm90.c's stream-K notes). */
#ifndef JG_STREAM_K
#define JG_STREAM_K 0
#endif
/* Split-K after data-parallel tiles (with JG_SPLIT_WS > 1, without
 * stream-K): of T tiles on a grid of G CTAs, the first D = (T / G - 1) G
 * (where T / G >= 2; else none) run whole, CTA b the tiles b, b + G, ... in
 * the grouped order as an unsplit grid runs them, each tile's JG_SPLIT_WS
 * units (numbered t S .. t S + S - 1) in one run, the sums going on from
 * unit to unit; the last T - D tiles (one to two waves) split share by
 * share as JG_SPLIT_WS alone splits every tile (jg_ws_unit), CTA b running
 * every G-th of their units, so that the CTAs at work at once sweep one
 * share of K over those tiles and read each piece of A and B from DRAM
 * once. (Stream-K over those tiles, each CTA an equal run of consecutive
 * units, starts the CTAs at unrelated places of K: on 21 H200 rows of
 * 3 to 11 waves that ran at 0.86x the unsplit plans' speed, 0.71x at K =
 * 24576.) Forced only (JITGEMM_SPLIT_DP=1): on those rows, S chosen per
 * row by a model of the waves, it ran at 0.98-0.99x the unsplit plans
 * (bench/results/2026-11-29-h200-split-dp). */
#ifndef JG_SK_DP
#define JG_SK_DP 0
#endif
/* Whether M and N are baked in (nonzero). The LLVM backend's bitcode leaves
 * M, N and K as values fixed when a kernel is made (docs/llvm-backend.md):
 * there these are defined first, and the sizes are not preprocessor numbers. */
#ifndef JG_M_BAKED
#define JG_M_BAKED JG_M
#endif
#ifndef JG_N_BAKED
#define JG_N_BAKED JG_N
#endif
/* Operand layouts (16-bit types): the kernel's A as [K, rows] row-major
 * (M-major) and its B as [K, N] row-major (N-major), read by wgmma from
 * MN-major tiles through its descriptors' transpose bits. */
#ifndef JG_A_MN
#define JG_A_MN 0
#endif
#ifndef JG_B_MN
#define JG_B_MN 0
#endif
/* Operands that may take soft loads or stores (sm90_soft.cuh) where TMA
 * cannot: their pointers or rows need not be 16-byte aligned. Each launch
 * says per operand how it moves (jg_soft_kargs, the kernel's second
 * parameter). */
#ifndef JG_A_SOFT
#define JG_A_SOFT 0
#endif
#ifndef JG_B_SOFT
#define JG_B_SOFT 0
#endif
#ifndef JG_D_SOFT
#define JG_D_SOFT 0
#endif
#define JG_SOFT_LOADS (JG_A_SOFT || JG_B_SOFT)
#define JG_SOFT_PARAM (JG_SOFT_LOADS || JG_D_SOFT)
/* JG_GEMM_FP32_EXACT: A and B are the workspace's TF32 high and low parts
 * (rows of 2 * JG_KP, sm90_split.cu), and K runs three times over them:
 * high x low, low x high, then high x high (JG_K = 3 * JG_KP), each
 * stage's wgmma sums promoted into FP32 registers (JG_PROMOTE).
 *
 * Why promoted: wgmma adds into its FP32 accumulator without rounding to
 * nearest. Each k8 step aligns its products to the accumulator and drops
 * the bits below its last place (truncation, a bias toward zero), so a
 * chain of K / 8 steps into one accumulator loses up to ~9 ulp(|acc|) per
 * step, all of one sign: measured (H200), max |D - ref| / max |ref| grew
 * linearly with K, 1.8e-5 at K = 2048 to 2e-4 at 16384, where SGEMM is
 * at 2e-7..6e-6. Promoted, every stage starts a fresh accumulator, and
 * its partial p_s (BLOCK_K of K) joins the total with one FADD, rounded
 * to nearest. Per output, with S = sum |a_k b_k| over the pass and u =
 * 2^-24:
 *   inside a stage: each of its BLOCK_K / 8 steps truncates at most ~9
 *     values by under an ulp (2u) of at most S_s (the stage's share of
 *     S): |p_s - exact p_s| <= 18 u (BLOCK_K / 8) S_s, summed over the
 *     stages <= 18 u (BLOCK_K / 8) S, a factor independent of K (one
 *     accumulator over K had K / 8 steps at the size of the whole sum).
 *     Within a stage the error leans toward zero, but the stages'
 *     partials have independent signs, so across stages it does not add
 *     up as a bias;
 *   the FADDs: K_total / BLOCK_K of them, each within u |running total|,
 *     gamma_{K_total / BLOCK_K} S at worst, ~u sqrt(K / BLOCK_K) max|D|
 *     typically (rounding to nearest: independent signs);
 *   the split (sm90_split.cu): below 3 * 2^-22 |a b| per product.
 * The cross passes come first: their sums are ~2^-11 of the total, so
 * their FADDs' errors are that much smaller, and the high x high pass
 * adds to a total that holds them already: only its K / BLOCK_K FADDs
 * round at the size of D. The bound is the FP32 reference's (a dot
 * product of K_total / BLOCK_K + BLOCK_K / 8 rounded terms), with no bias
 * that grows with K. */
#ifndef JG_EXACT
#define JG_EXACT 0
#endif
#ifndef JG_KP
#define JG_KP 0
#endif

#include "jg_kargs.h"
#include "sm90_ptx.cuh"
#if JG_SOFT_PARAM
#include "sm90_soft.cuh"
#endif

#define JG_MMA_N JG_BLOCK_N
#include "sm90_wgmma_n.cuh"

/* A and B: 16-bit (wgmma k16), e4m3 (k32) or TF32 (k8); either way one
 * wgmma step reads 32 bytes of each row, and a 128-byte swizzle atom holds
 * 4 steps.
 * NVFP4 (5) operands are expanded to FP16 in shared memory (sm90_nvfp4_expand.cuh):
 * a stage is JG_BLOCK_K (256) of K as loaded, the wgmmas run on BF16 pieces
 * of 64 of K, so JG_BLOCK_K below is the piece's. */
#define JG_NVFP4 (JG_AB_DTYPE == 5)
#if JG_NVFP4
#undef JG_BLOCK_K
#define JG_BLOCK_K 64
#endif
#if JG_AB_DTYPE == 1
#define JG_AB_PTX "bf16"
#elif JG_AB_DTYPE == 2 || JG_NVFP4 /* NVFP4: FP16 values c * s * 2^-7 */
#define JG_AB_PTX "f16"
/* FP32 read as TF32: wgmma takes the top 19 bits, of values the loads
 * rounded to TF32 (TFLOAT32 tensor maps, jg_soft_round_tf32) */
#elif JG_AB_DTYPE == 3
#define JG_AB_PTX "tf32"
#else
#define JG_AB_PTX "e4m3"
#endif
#if JG_AB_DTYPE == 4
#define JG_AB_SIZE 1
#define JG_MMA_K 32
#elif JG_AB_DTYPE == 3
#define JG_AB_SIZE 4
#define JG_MMA_K 8
#else
#define JG_AB_SIZE 2
#define JG_MMA_K 16
#endif
#ifndef JG_SCALE
#define JG_SCALE 0 /* 1: one FP32 scale per operand (tensor), on the device */
#endif
/* FP8 partial sums are promoted into FP32 registers after every stage (at
 * most 128 of K): Hopper's FP8 accumulation keeps only ~14 bits. So are
 * exact FP32's (JG_EXACT): its TF32 accumulation truncates. */
#define JG_PROMOTE (JG_AB_SIZE == 1 || JG_EXACT)
#ifndef JG_PROMOTE_PIPE
/* FP8 and exact FP32: two sets of partial sums, so a stage's wgmmas run
 * while the previous stage's sums are promoted (costs MMA_N / 2 registers
 * per slab), in chunks of this many stages */
#define JG_PROMOTE_PIPE (JG_PROMOTE ? 8 : 0)
#endif

#define JG_ATOM_K (128 / JG_AB_SIZE)        /* elements of a 128-byte swizzle atom */
#define JG_K_ATOMS (JG_BLOCK_K / JG_ATOM_K) /* 128-byte swizzle atoms along K per stage */
/* Ping-pong: the two consumer warpgroups take whole tiles in turn (the
 * CTA's tiles 0, 2, 4, ... and 1, 3, 5, ...), so one's epilogue runs while
 * the other's wgmmas do; their mainloops take turns (JG_PING_BAR). Otherwise
 * both share each tile, consumer c owning rows c * JG_WG_M on. */
#ifndef JG_PINGPONG
#define JG_PINGPONG 0
#endif
#if JG_PINGPONG
#define JG_WG_M JG_BLOCK_M
#define JG_CONSUMER_ROW0(c) 0
#else
#define JG_WG_M (JG_BLOCK_M / JG_CONSUMERS) /* rows of the tile per consumer warpgroup */
#define JG_CONSUMER_ROW0(c) ((c) * JG_WG_M)
#endif
#define JG_WG_MMAS (JG_WG_M / 64)           /* m64 wgmmas per warpgroup per k16 step */
#define JG_THREADS (128 * (JG_CONSUMERS + 1))
#define JG_A_STAGE_BYTES (JG_BLOCK_M * JG_BLOCK_K * JG_AB_SIZE)
#define JG_B_STAGE_BYTES (JG_BLOCK_N * JG_BLOCK_K * JG_AB_SIZE)
#ifndef JG_A_BOX_M
#define JG_A_BOX_M JG_BLOCK_M
#endif
/* A's box may be shorter than the tile (a baked M below BLOCK_M, as in
 * decode): the rows past it are never loaded, and their accumulators are
 * never stored. M-generic plans sized for fewer rows than a tile: A's box holds
 * JG_A_BOX_M rows (a power of two dividing BLOCK_M), and each tile loads as
 * many boxes as its rows below the launch's M need (jg_a_boxes), so that a
 * decode launch does not pay TMA for a tile of zero rows, and a launch of
 * more rows than the hint still loads them all. */
#ifndef JG_A_BOX_RUNTIME
#define JG_A_BOX_RUNTIME 0
#endif
#define JG_K_TILES_ALL ((JG_K + JG_BLOCK_K - 1) / JG_BLOCK_K) /* stages of the whole K */
/* Stages each CTA runs: all of K's, or with split-K its share (the last
 * CTA's may reach past K: those loads arrive as zeros) */
#define JG_K_SHARES (JG_SPLIT_K * JG_SPLIT_WS) /* one of them 1 */
#define JG_K_TILES ((JG_K_TILES_ALL + JG_K_SHARES - 1) / JG_K_SHARES)
#if JG_D_DTYPE == 3
#define JG_D_SIZE 4
#else
#define JG_D_SIZE 2
#endif
#define JG_EPI_W (JG_EPI_BYTES / JG_D_SIZE)   /* columns per epilogue chunk */
/* TMA stores whole 16-byte pieces of a row, even past the tensor's last
 * column: the D map ends at the last 16-byte boundary within N, and the few
 * columns after it are stored by the threads themselves. */
#if JG_SWAP_AB
#define JG_D_COLS JG_M /* D's columns, the problem's N: the kernel's rows */
#else
#define JG_D_COLS JG_N
#endif
#define JG_N_TMA ((JG_D_COLS * JG_D_SIZE / 16) * 16 / JG_D_SIZE)
/* The kernel's columns: baked, or (swap-AB with M from the arguments) M */
#if JG_N_BAKED
#define JG_COLS(p) JG_N
#else
#define JG_COLS(p) ((p).m)
#endif
/* Epilogue chunks: a 128-byte swizzle span of a row (rows whose bytes are
 * a multiple of 128), the whole row unswizzled (rows of other widths up to
 * 256 bytes: 120 BF16 columns are one 240-byte box, not 15 of 16 bytes),
 * or 16-64-byte spans. Chunks narrower than 128 bytes are staged several
 * at once, so that a warpgroup's barriers and TMA stores come per 128
 * bytes of a row. A tile that stores in one round needs one staging
 * buffer (the store issued a mainloop ago has surely read it); others
 * alternate two. The planner sizes them with the same rules (plan_sm90.c). */
#define JG_EPI_SWIZZLED (JG_EPI_BYTES <= 128 && (JG_EPI_BYTES & (JG_EPI_BYTES - 1)) == 0)
#if JG_SWAP_AB
/* Swap-AB: a round stages JG_SW_EPI_ROWS rows of D (of M: the kernel's
 * columns, 8 to 32, dividing wgmma's N) by a slab's 64 columns of D
 * (JG_EPI_BYTES: 128 bytes of 16-bit D, swizzled; 256 of FP32, plain). */
#ifndef JG_SW_EPI_ROWS /* the planner's (jg__swap_epi_rows) */
#define JG_SW_EPI_ROWS 8
#endif
#define JG_EPI_RPS (JG_MMA_N / JG_SW_EPI_ROWS) /* rounds per 64-row slab */
#define JG_EPI_QPR (JG_SW_EPI_ROWS / 8)        /* 8-column groups of the fragment per round */
#define JG_EPI_BUF_BYTES (JG_SW_EPI_ROWS * JG_EPI_BYTES)
static_assert(JG_MMA_N % JG_SW_EPI_ROWS == 0 && JG_SW_EPI_ROWS % 8 == 0 &&
                  JG_EPI_BYTES == 64 * JG_D_SIZE,
              "swap-AB: rounds of whole 8-row groups of D by a slab's 64 columns");
#else
#define JG_EPI_CHUNKS (JG_MMA_N / JG_EPI_W)   /* chunks per 64 rows of a tile */
#define JG_EPI_FIT (JG_EPI_BYTES >= 128 ? 1 : 128 / JG_EPI_BYTES)
#define JG_EPI_SUBS (JG_EPI_FIT < JG_EPI_CHUNKS ? JG_EPI_FIT : JG_EPI_CHUNKS)
#define JG_EPI_RPS ((JG_EPI_CHUNKS + JG_EPI_SUBS - 1) / JG_EPI_SUBS) /* rounds per slab */
#define JG_EPI_QPR (JG_EPI_SUBS * JG_EPI_W / 8) /* 8-column groups of the fragment per round */
#define JG_EPI_SUB_BYTES (64 * JG_EPI_BYTES)  /* one chunk: 64 rows */
#define JG_EPI_BUF_BYTES (JG_EPI_SUBS * JG_EPI_SUB_BYTES) /* one staging buffer */
#endif
#define JG_EPI_ROUNDS (JG_WG_MMAS * JG_EPI_RPS)
#define JG_EPI_NBUF (JG_EPI_ROUNDS == 1 ? 1 : 2) /* staging buffers per consumer */
#define JG_TILES_N ((JG_N + JG_BLOCK_N - 1) / JG_BLOCK_N) /* JG_N baked */
#ifndef JG_CLUSTER
#define JG_CLUSTER 1
#endif
/* CTAs of a cluster stacked along M (without split-K): JG_M_STACK tiles,
 * one per CTA, sharing their B tile (each CTA loads 1/JG_M_STACK of it and
 * multicasts it to all). A unit's second tile may lie past the rows: its
 * A loads arrive as zeros (or rows it never stores) and its stores are
 * clipped, so both CTAs walk the same units and stay in step. */
/* CTAs of a cluster stacked along N as well (dense, K-major A by TMA):
 * JG_N_STACK tiles side by side sharing their A tile, each CTA loading
 * 1/JG_N_STACK of A's box rows and multicasting it to the CTAs of its
 * column. Rank r of a cluster of JG_M_STACK x JG_N_STACK CTAs is the tile
 * (r % JG_M_STACK, r / JG_M_STACK) of the unit: B goes to the CTAs of r's
 * column of tiles (along M), A to those of its row (along N). A unit's
 * last tiles may lie past N: their B loads arrive as zeros and their
 * stores are clipped, as past M. */
#ifndef JG_N_STACK
#define JG_N_STACK 1
#endif
#define JG_M_STACK (JG_SPLIT_K > 1 ? 1 : JG_CLUSTER / JG_N_STACK)
#define JG_UNIT_M (JG_BLOCK_M * JG_M_STACK) /* rows of a scheduling unit */
#define JG_UNIT_N (JG_BLOCK_N * JG_N_STACK) /* columns of a scheduling unit */
#define JG_B_BOX_N (JG_BLOCK_N / JG_M_STACK)
#define JG_A_SHARE_M (JG_A_BOX_M / JG_N_STACK) /* rows of A's box each CTA loads */
/* Multicast masks of rank r's column (B) and row (A) of the cluster */
#define JG_B_MASK(r) ((uint16_t)(((1u << JG_M_STACK) - 1) << ((r) / JG_M_STACK * JG_M_STACK)))
#define JG_A_MASK(r)                                                                               \
    ((uint16_t)((JG_N_STACK == 4                                                                   \
                     ? 1u | 1u << JG_M_STACK | 1u << 2 * JG_M_STACK | 1u << 3 * JG_M_STACK         \
                     : 1u | 1u << JG_M_STACK)                                                      \
                << ((r) % JG_M_STACK)))
/* Each operand's stage as boxes of 128-byte rows (TMA's, or soft loads'
 * into the same places): K-major, one box of the tile's rows per 128-byte
 * atom along K; MN-major, one box of the stage's K rows per 64 elements of
 * M or N (a wgmma m64 slab of A, a 64-wide block of B's columns). A
 * cluster's CTAs stacked along M each load 1/JG_M_STACK of B's boxes. */
#if JG_A_MN
#define JG_A_BOXES (JG_BLOCK_M / 64)
#define JG_A_BOX_ROWS JG_BLOCK_K
#define JG_A_BOX_STRIDE (JG_BLOCK_K * 128)
#else
#define JG_A_BOXES JG_K_ATOMS
#define JG_A_BOX_ROWS JG_A_BOX_M
#define JG_A_BOX_STRIDE (JG_BLOCK_M * 128)
#endif
#if JG_B_MN
#define JG_B_BOXES (JG_BLOCK_N / 64 / JG_M_STACK)
#define JG_B_BOX_ROWS JG_BLOCK_K
#define JG_B_BOX_STRIDE (JG_BLOCK_K * 128)
#else
#define JG_B_BOXES JG_K_ATOMS
#define JG_B_BOX_ROWS JG_B_BOX_N
#define JG_B_BOX_STRIDE (JG_BLOCK_N * 128)
#endif
/* Bytes of a stage's A and of its B that TMA brings (jg_stage_tx_bytes's
 * parts), for launches that load one of them softly. */
#define JG_A_TX_BYTES (JG_A_BOX_M * JG_BLOCK_K * JG_AB_SIZE)
#define JG_B_TX_BYTES (JG_BLOCK_N * JG_BLOCK_K * JG_AB_SIZE)
/* Soft loads' side slots per stage: each soft box's 16 bytes per row (the
 * row's 9th chunk, jg_soft_box_words) and 16 delta bytes (one per group of
 * 8 producer lanes). The plan sets aside 18 bytes per row (each box has 8
 * rows at least). */
#define JG_A_SIDE_BOX (JG_A_BOX_ROWS * 16 + 16)
#define JG_B_SIDE_BOX (JG_B_BOX_ROWS * 16 + 16)
#define JG_SIDE_A (JG_A_SOFT ? JG_A_BOXES * JG_A_SIDE_BOX : 0)
#define JG_SIDE_B (JG_B_SOFT ? JG_B_BOXES * JG_B_SIDE_BOX : 0)
#define JG_SIDE_BYTES (JG_SIDE_A + JG_SIDE_B)
static_assert(JG_SIDE_A <= (JG_A_SOFT ? 18 * JG_A_BOXES * JG_A_BOX_ROWS : 0) &&
                  JG_SIDE_B <= (JG_B_SOFT ? 18 * JG_B_BOXES * JG_B_BOX_ROWS : 0),
              "side slots within the plan's 18 bytes a row");

static_assert(JG_BLOCK_K == JG_ATOM_K || JG_BLOCK_K == 2 * JG_ATOM_K,
              "a stage holds one or two 128-byte swizzle atoms along K");
static_assert(JG_WG_M % 64 == 0, "each consumer warpgroup owns whole m64 slabs");
static_assert(JG_BLOCK_N % 8 == 0 && JG_BLOCK_N <= 256, "wgmma N");
static_assert(JG_M_STACK == 1 ||
                  ((JG_M_STACK == 2 || JG_M_STACK == 4) && JG_BLOCK_N % (8 * JG_M_STACK) == 0),
              "clusters of 2 or 4 split B into whole 8-row swizzle atoms, one share a CTA");
static_assert(JG_SPLIT_K == 1 || (JG_CLUSTER == JG_SPLIT_K && JG_SPLIT_K <= 8 && JG_LAYOUT == 0 &&
                                  !JG_NVFP4),
              "split-K: dense, one cluster of at most 8 CTAs per tile");
static_assert(JG_SPLIT_WS == 1 ||
                  (JG_SPLIT_K == 1 && JG_CLUSTER == 1 && JG_LAYOUT == 0 && !JG_NVFP4 &&
                   !JG_PINGPONG && JG_SCALE != 3 && !JG_SOFT_PARAM && !JG_PDL && !JG_EXACT &&
                   JG_M_BAKED && JG_N_BAKED && !JG_A_BOX_RUNTIME && !JG_A_MN && !JG_B_MN),
              "split-K through the workspace: dense, M baked, K-major TMA operands, no cluster, "
              "ping-pong, block scales or PDL");
/* FP8's promoted sums carried from unit to unit spilled at 128x112 and
 * 128x128 (not at 96, 104 or 144): a loop-carried third set of sums */
static_assert(!JG_STREAM_K || (JG_SPLIT_WS > 1 && !JG_PROMOTE),
              "stream-K: units of a tile's share of K, 16-bit (wgmma's own sums)");
static_assert(!JG_SK_DP || (JG_SPLIT_WS > 1 && !JG_STREAM_K && !JG_PROMOTE),
              "data-parallel tiles' runs of units before the split ones: 16-bit, no stream-K");
static_assert(!JG_PINGPONG || (JG_CONSUMERS == 2 && JG_SPLIT_K == 1 && !JG_NVFP4),
              "ping-pong: two consumers on alternate tiles, without split-K");
static_assert(!JG_SWAP_AB || (JG_LAYOUT == 0 && !JG_NVFP4 && JG_SCALE != 3),
              "swap-AB: dense BF16, FP16 and FP8 with tensor or row scales");
static_assert(JG_N_BAKED || JG_SWAP_AB, "the kernel's columns are baked unless they are M (swap-AB)");
static_assert(JG_AB_SIZE != 1 || JG_SCALE, "FP8 operands come with their scales");
static_assert(JG_AB_SIZE == 1 || JG_NVFP4 || JG_SCALE == 0, "scales: FP8 operands only");
static_assert(!JG_PROMOTE || JG_BLOCK_K <= 128, "sums are promoted every 128 of K at most");
static_assert(!JG_PROMOTE || JG_PROMOTE_PIPE > 0, "promotions overlap the next stage's wgmmas");
/* Block scales (DeepSeek-V3): A one FP32 per row per 128 of K, B one per
 * 128x128 block: each stage is one K block, each tile inside one B block. */
static_assert(JG_SCALE != 3 || (JG_BLOCK_K == 128 && 128 % JG_BLOCK_N == 0),
              "block scales: stages of 128 K, tiles inside one 128-column block");
static_assert(JG_A_BOX_M % 8 == 0 && JG_A_BOX_M >= 8 && JG_A_BOX_M <= JG_BLOCK_M,
              "A's box: whole 8-row swizzle atoms inside the tile");
static_assert(!(JG_A_MN || JG_B_MN) || (JG_AB_SIZE == 2 && !JG_NVFP4),
              "MN-major operands: 16-bit types (wgmma transposes no others)");
static_assert(!JG_A_MN || JG_A_BOX_M == JG_BLOCK_M, "M-major A: boxes of whole slabs");
static_assert(!JG_A_BOX_RUNTIME || (JG_BLOCK_M % JG_A_BOX_M == 0 && !JG_A_MN && !JG_B_MN &&
                                    !JG_SOFT_LOADS && !JG_NVFP4 && JG_LAYOUT == 0),
              "A's boxes by the launch's M: dense K-major TMA loads, boxes tiling BLOCK_M");
static_assert(!JG_B_MN || (JG_BLOCK_N % (64 * JG_M_STACK) == 0 && JG_LAYOUT != 2 && JG_LAYOUT != 3),
              "N-major B: whole 64-column boxes (per CTA of a cluster); no stacked groups");
static_assert(!JG_SOFT_PARAM || !JG_NVFP4, "soft loads and stores: no NVFP4");
static_assert(!JG_B_SOFT || JG_M_STACK == 1, "soft B loads are not multicast");
static_assert(JG_N_STACK == 1 ||
                  ((JG_N_STACK == 2 || JG_N_STACK == 4) && JG_CLUSTER % JG_N_STACK == 0 &&
                   JG_CLUSTER <= 8 && JG_A_BOX_M % (8 * JG_N_STACK) == 0 && JG_LAYOUT == 0 &&
                   JG_SPLIT_K == 1 && !JG_NVFP4 && !JG_A_MN && !JG_B_MN &&
                   !JG_SOFT_LOADS && !JG_A_BOX_RUNTIME && JG_SCALE != 3),
              "clusters stacked along N: dense K-major TMA loads of A split into whole 8-row "
              "swizzle atoms, one share a CTA; no block scales (B's are read by tile column)");
static_assert(!JG_D_SOFT || !JG_SWAP_AB, "direct stores of D: unswapped tiles");
static_assert(!JG_EXACT || (JG_AB_DTYPE == 3 && JG_K % 3 == 0 && JG_KP % 64 == 0 &&
                            JG_K == 3 * JG_KP && !JG_SOFT_LOADS),
              "exact FP32: three passes over the workspace's TF32 parts");
static_assert(JG_SWAP_AB || JG_MMA_N % JG_EPI_W == 0, "epilogue chunks tile BLOCK_N exactly");

#if JG_LAYOUT == 1 && JG_NVFP4
typedef JG_LIST_NVFP4_KARGS(JG_GROUPS) jg_kargs_base_t;
static_assert(sizeof(jg_kargs_base_t) == JG_LIST_NVFP4_SIZE(JG_GROUPS), "list layout: size");
#elif JG_LAYOUT == 1
typedef JG_LIST_KARGS(JG_GROUPS) jg_kargs_base_t;
/* NVRTC has no offsetof: the members are arrays of 128- and 8-byte items
 * in the order the host's JG_LIST_OFF_* follow, so the size pins them. */
static_assert(sizeof(jg_kargs_base_t) == JG_LIST_SIZE(JG_GROUPS), "list layout: size");
#elif JG_DEVICE_ROWS && JG_NVFP4
typedef jg_device_grouped_nvfp4_kargs jg_kargs_base_t;
#elif JG_DEVICE_ROWS
typedef jg_device_grouped_kargs jg_kargs_base_t;
#elif JG_NVFP4
typedef jg_nvfp4_kargs jg_kargs_base_t;
#else
typedef jg_gemm_kargs jg_kargs_base_t;
#endif
#if JG_SOFT_PARAM
/* Kernels with soft operands: the layout's block, then the soft block
 * (list layout: each group's A and B), as the host lays them out: from
 * the first's size, a multiple of 64 bytes (its tensor maps' alignment). */
#if JG_LAYOUT == 1
typedef JG_SOFT_LIST_KARGS(JG_GROUPS) jg_soft_t;
static_assert(sizeof(jg_soft_t) == JG_SOFT_LIST_SIZE(JG_GROUPS), "soft list block: size");
#else
typedef jg_soft_kargs jg_soft_t;
#endif
struct jg_kargs_t : jg_kargs_base_t {
    jg_soft_t soft;
};
static_assert(sizeof(jg_kargs_base_t) % 64 == 0 &&
                  sizeof(jg_kargs_t) ==
                      (sizeof(jg_kargs_base_t) + sizeof(jg_soft_t) + 63) / 64 * 64,
              "soft block right after the layout's");
#elif JG_SPLIT_WS > 1
/* Split-K through the workspace: the dense block, then the workspace's. */
struct jg_kargs_t : jg_kargs_base_t {
    jg_split_ws_kargs ws;
};
#else
typedef jg_kargs_base_t jg_kargs_t;
#endif

/* One output tile: where it is in its matrix and which operands it uses.
 * Dense: the one problem; grouped: the tile's group. */
struct jg_tile {
    uint32_t tm, tn;
    int32_t m;        /* rows of the tile's matrices */
    int32_t n;        /* their columns (the kernel's: swap-AB, the problem's M) */
    int32_t k0;       /* split-K: the first of K's stages this CTA runs; else 0 */
    int32_t row_base; /* their first row in A and D (contiguous and masked layouts) */
    int32_t b_row;    /* the first row of the group's B in the stacked [G*N, K] B */
    const jg_tmap *a, *b, *d;
    const void *c;
    void *d_ptr;
#if JG_SOFT_LOADS
    const jg_soft_map *soft_a, *soft_b; /* the tile's A and B for soft loads */
#endif
#if JG_SCALE || JG_NVFP4
    /* FP8: the scales of the tile's A and B matrices (of the group's), laid
     * out as a dense problem's: tensor one each; row [m] and [N]; block
     * [m][K_TILES] and [ceil(N/128)][K_TILES]. NVFP4: the global scales. */
    const float *sa, *sb;
#endif
#if JG_NVFP4
    /* The block scales: row-major, a map over rows as A's and B's maps
     * count them (row_base, b_row); swizzled, the group's own array. */
    const jg_tmap *a_sf, *b_sf;
    const uint8_t *a_sf_ptr, *b_sf_ptr;
#endif
};
static_assert(JG_A_STAGE_BYTES % 1024 == 0 && JG_B_STAGE_BYTES % 1024 == 0,
              "stage tiles stay 1024-byte aligned for the 128B swizzle");

#if JG_NVFP4
#include "sm90_nvfp4_expand.cuh"
#endif

/* One m64nNk16 (16-bit), m64nNk32 (e4m3) or m64nNk8 (TF32) wgmma, A and B
 * from shared memory through descriptors, K-major or (16-bit only)
 * MN-major. */
#if JG_AB_SIZE == 2 /* imm-trans-a, imm-trans-b: 1 for MN-major tiles */
#define JG_MMA_TAIL ", p, 1, 1, " JG_STR(JG_A_MN) ", " JG_STR(JG_B_MN) ";\n"
#else
#define JG_MMA_TAIL ", p, 1, 1;\n"
#endif
JG_DEV void jg_wgmma_ss(float (&d)[JG_MMA_N / 2], uint64_t da, uint64_t db, uint32_t accumulate)
{
    asm volatile("{\n"
                 ".reg .pred p;\n"
                 "setp.ne.b32 p, " JG_MMA_IN2 ", 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n" JG_STR(JG_MMA_N) "k" JG_STR(JG_MMA_K)
                 ".f32." JG_AB_PTX "." JG_AB_PTX " " JG_MMA_REGS ", " JG_MMA_IN0 ", " JG_MMA_IN1
                 JG_MMA_TAIL
                 "}\n"
                 : JG_MMA_ACC(d)
                 : "l"(da), "l"(db), "r"(accumulate));
}

/* Tile t of the grouped order: bands of JG_GROUP_M tile rows are swept
 * column by column before moving on, so consecutive CTAs share A rows and
 * B columns; the planner picks the band whose waves read the fewest panels
 * from DRAM (plan_sm90.c's band_rows). */
JG_DEV void jg_tile_coords(uint32_t t, uint32_t tiles_m, uint32_t tiles_n, uint32_t &tm,
                           uint32_t &tn)
{
    const uint32_t group_size = JG_GROUP_M * tiles_n;
    const uint32_t first_m = (t / group_size) * JG_GROUP_M;
    const uint32_t rows = min(tiles_m - first_m, (uint32_t)JG_GROUP_M);
    const uint32_t in_group = t % group_size;
    tm = first_m + in_group % rows;
    tn = in_group / rows;
}

#if JG_LAYOUT == 1
/* Rows of each group, baked in: tiles are numbered group after group. */
JG_DEV constexpr int32_t jg_group_m(int g)
{
    constexpr int32_t ms[JG_GROUPS] = {JG_GROUP_MS};
    return ms[g];
}

/* Scheduling units of group g along M (tiles, or tile pairs in a cluster). */
JG_DEV constexpr uint32_t jg_group_tiles_m(int g)
{
    return ((uint32_t)jg_group_m(g) + JG_UNIT_M - 1) / JG_UNIT_M;
}

JG_DEV constexpr uint32_t jg_total_tiles()
{
    uint32_t n = 0;
    for (int g = 0; g < JG_GROUPS; ++g)
        n += jg_group_tiles_m(g) * JG_TILES_N;
    return n;
}

/* Tile t: its group found by a chain of compares against the baked tile
 * offsets (immediates, selecting four integers), then the group's operands
 * read from the parameter block by index (__grid_constant__: no copy). */
JG_DEV jg_tile jg_tile_at(const jg_kargs_t &p, uint32_t t, uint32_t)
{
    uint32_t g = 0, start = 0, tiles_m = 0, first = 0;
    int32_t m = 0;
#pragma unroll
    for (int i = 0; i < JG_GROUPS; ++i) {
        if (jg_group_tiles_m(i) && t >= first) {
            g = (uint32_t)i;
            start = first;
            tiles_m = jg_group_tiles_m(i);
            m = jg_group_m(i);
        }
        first += jg_group_tiles_m(i) * JG_TILES_N;
    }
    jg_tile tl;
    jg_tile_coords(t - start, tiles_m, JG_TILES_N, tl.tm, tl.tn);
    tl.m = m;
    tl.n = JG_N;
    tl.k0 = 0;
    tl.row_base = tl.b_row = 0;
    tl.a = &p.a[g];
    tl.b = &p.b[g];
    tl.d = &p.d[g];
    tl.c = p.c[g];
    tl.d_ptr = p.d_ptr[g];
#if JG_SOFT_LOADS
    tl.soft_a = &p.soft.a[g];
    tl.soft_b = &p.soft.b[g];
#endif
#if JG_SCALE || JG_NVFP4
    tl.sa = p.a_scale[g];
    tl.sb = p.b_scale[g];
#endif
#if JG_NVFP4
    tl.a_sf = &p.a_sf[g];
    tl.b_sf = &p.b_sf[g];
    tl.a_sf_ptr = p.a_sf_ptr[g];
    tl.b_sf_ptr = p.b_sf_ptr[g];
#endif
    return tl;
}
#elif JG_DEVICE_ROWS
/* The groups' rows as the device holds them at launch, read once per CTA:
 * first row, rows, and first tile of each group (and the total last). */
__shared__ int32_t jg_gstart[JG_GROUPS], jg_gcount[JG_GROUPS];
__shared__ uint32_t jg_gtile[JG_GROUPS + 1];

JG_DEV uint32_t jg_group_tiles(int32_t count)
{
    return ((uint32_t)count + JG_UNIT_M - 1) / JG_UNIT_M * JG_TILES_N;
}

/* Contiguous: rows[g]..rows[g+1] of A and D; masked: rows[g] rows from
 * g * m_max. Clamped to the m_max rows the tensor maps hold, so bad counts
 * cannot make the direct stores leave D. Every thread calls it: the groups
 * are read in parallel, then warp 0 scans their tile counts (the caller's
 * __syncthreads publishes the table). */
JG_DEV void jg_group_table(const jg_kargs_t &p)
{
    for (int g = threadIdx.x; g < JG_GROUPS; g += blockDim.x) {
#if JG_LAYOUT == 2
        const int32_t start = min(max(p.rows[g], 0), p.m_max);
        const int32_t count = min(max(p.rows[g + 1] - start, 0), p.m_max - start);
#else
        const int32_t start = g * p.m_max;
        const int32_t count = min(max(p.rows[g], 0), p.m_max);
#endif
        jg_gstart[g] = start;
        jg_gcount[g] = count;
    }
    __syncthreads();
    if (threadIdx.x < 32) {
        const int per = (JG_GROUPS + 31) / 32, lo = (int)threadIdx.x * per;
        const int hi = min(lo + per, JG_GROUPS);
        uint32_t sum = 0;
        for (int g = lo; g < hi; ++g)
            sum += jg_group_tiles(jg_gcount[g]);
        uint32_t incl = sum;
#pragma unroll
        for (int o = 1; o < 32; o <<= 1) {
            const uint32_t v = __shfl_up_sync(0xffffffffu, incl, o);
            if ((int)threadIdx.x >= o)
                incl += v;
        }
        uint32_t first = incl - sum;
        for (int g = lo; g < hi; ++g) {
            jg_gtile[g] = first;
            first += jg_group_tiles(jg_gcount[g]);
        }
        if (threadIdx.x == 31)
            jg_gtile[JG_GROUPS] = incl;
    }
}

/* Tile t: the last group whose first tile is <= t (empty groups share
 * their successor's first tile), by binary search. */
JG_DEV jg_tile jg_tile_at(const jg_kargs_t &p, uint32_t t, uint32_t)
{
    int lo = 0, hi = JG_GROUPS;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (jg_gtile[mid] <= t)
            lo = mid;
        else
            hi = mid;
    }
    jg_tile tl;
    const int32_t count = jg_gcount[lo];
    jg_tile_coords(t - jg_gtile[lo], jg_group_tiles(count) / JG_TILES_N, JG_TILES_N, tl.tm, tl.tn);
    tl.m = count;
    tl.n = JG_N;
    tl.k0 = 0;
    tl.row_base = jg_gstart[lo];
    tl.b_row = lo * JG_N;
    tl.a = &p.a;
    tl.b = &p.b;
    tl.d = &p.d;
#if JG_SOFT_LOADS
    tl.soft_a = &p.soft.a;
    tl.soft_b = &p.soft.b;
#endif
    tl.c = p.c ? (const uint8_t *)p.c + (int64_t)tl.row_base * p.ldc * JG_D_SIZE : nullptr;
    tl.d_ptr = (uint8_t *)p.d_ptr + (int64_t)tl.row_base * p.ldd * JG_D_SIZE;
#if JG_SCALE == 1 || JG_NVFP4
    tl.sa = p.a_scale + lo;
    tl.sb = p.b_scale + lo;
#elif JG_SCALE == 2
    tl.sa = p.a_scale + tl.row_base;
    tl.sb = p.b_scale + tl.b_row;
#elif JG_SCALE == 3
    tl.sa = p.a_scale + (int64_t)tl.row_base * JG_K_TILES_ALL;
    tl.sb = p.b_scale + (int64_t)lo * ((JG_N + 127) / 128) * JG_K_TILES_ALL;
#endif
#if JG_NVFP4
    /* Masked, swizzled A: `groups` arrays of m_max rows; swizzled B: of N
     * rows (the contiguous layout takes row-major A scales only). */
    tl.a_sf = &p.a_sf;
    tl.b_sf = &p.b_sf;
    tl.a_sf_ptr = p.a_sf_ptr + (JG_A_SF_LAYOUT == 2 ? (int64_t)lo * ((p.m_max + 127) / 128) *
                                                          JG_FP4_KBP4 * 512
                                                    : 0);
    tl.b_sf_ptr = p.b_sf_ptr + (int64_t)lo * ((JG_N + 127) / 128) * JG_FP4_KBP4 * 512;
#endif
    return tl;
}
#else
JG_DEV jg_tile jg_tile_at(const jg_kargs_t &p, uint32_t t, uint32_t tiles_m)
{
    jg_tile tl;
    tl.n = JG_COLS(p);
    jg_tile_coords(t, tiles_m, ((uint32_t)tl.n + JG_UNIT_N - 1) / JG_UNIT_N, tl.tm, tl.tn);
    tl.k0 = 0;
    tl.row_base = tl.b_row = 0;
#if JG_M_BAKED
    tl.m = JG_M;
#else
    tl.m = p.m;
#endif
    tl.a = &p.a;
    tl.b = &p.b;
    tl.d = &p.d;
    tl.c = p.c;
    tl.d_ptr = p.d_ptr;
#if JG_SOFT_LOADS
    tl.soft_a = &p.soft.a;
    tl.soft_b = &p.soft.b;
#endif
#if JG_SCALE || JG_NVFP4
    tl.sa = p.a_scale;
    tl.sb = p.b_scale;
#endif
#if JG_NVFP4
    tl.a_sf = &p.a_sf;
    tl.b_sf = &p.b_sf;
    tl.a_sf_ptr = p.a_sf_ptr;
    tl.b_sf_ptr = p.b_sf_ptr;
#endif
    return tl;
}
#endif

/* This CTA's tile of scheduling unit t: the CTAs of a cluster stack their
 * tiles along M (sharing B by multicast) and along N (sharing A), or with
 * split-K share one tile and each runs its share of K's stages. */
#if JG_SPLIT_WS > 1
/* The tiles of `tiles` run whole before the split ones (JG_SK_DP; 0
 * without) */
JG_DEV uint32_t jg_dp_tiles(uint32_t tiles)
{
#if JG_SK_DP
    const uint32_t waves = tiles / gridDim.x;
    return waves >= 2 ? (waves - 1) * gridDim.x : 0;
#else
    (void)tiles;
    return 0;
#endif
}

/* Split-K through the workspace: unit t's tile and share of K, and the
 * tile's place among the split ones (its count and parts in the
 * workspace) */
JG_DEV void jg_ws_unit(uint32_t t, uint32_t tiles_m, uint32_t &tile, uint32_t &share,
                       uint32_t &slot)
{
#if JG_STREAM_K /* tile by tile */
    (void)tiles_m;
    tile = t / JG_SPLIT_WS;
    share = t % JG_SPLIT_WS;
    slot = tile;
#else /* share by share (after the data-parallel tiles' runs) */
    const uint32_t tiles = tiles_m * (uint32_t)((JG_COLS(p) + JG_UNIT_N - 1) / JG_UNIT_N);
    const uint32_t dp = jg_dp_tiles(tiles);
    if (t < dp * JG_SPLIT_WS) {
        tile = t / JG_SPLIT_WS;
        share = t % JG_SPLIT_WS;
        slot = 0; /* none */
        return;
    }
    t -= dp * JG_SPLIT_WS;
    slot = t % (tiles - dp);
    tile = dp + slot;
    share = t / (tiles - dp);
#endif
}

/* The unit after t with data-parallel tiles first (JG_SK_DP): within a
 * tile's run the next, after it the CTA's next tile G tiles on, after its
 * last data-parallel tile its first split unit, then every G-th */
JG_DEV uint32_t jg_dp_unit_next(uint32_t t, uint32_t dp_units)
{
    if (t >= dp_units)
        return t + gridDim.x;
    ++t;
    if (t % JG_SPLIT_WS == 0) {
        const uint32_t on = t + (gridDim.x - 1) * JG_SPLIT_WS;
        t = on < dp_units ? on : dp_units + blockIdx.x;
    }
    return t;
}
#endif

JG_DEV jg_tile jg_cta_tile(const jg_kargs_t &p, uint32_t t, uint32_t tiles_m, uint32_t rank)
{
#if JG_SPLIT_WS > 1
    uint32_t tile, share, slot;
    jg_ws_unit(t, tiles_m, tile, share, slot);
    (void)slot;
    jg_tile tl = jg_tile_at(p, tile, tiles_m);
#if JG_STREAM_K > 1 /* row groups: tile r L + l, r along the problem's M */
#if JG_SWAP_AB
    tl.tn = tile / tiles_m;
    tl.tm = tile % tiles_m;
#else
    const uint32_t tiles_n = ((uint32_t)JG_COLS(p) + JG_UNIT_N - 1) / JG_UNIT_N;
    tl.tm = tile / tiles_n;
    tl.tn = tile % tiles_n;
#endif
#endif
    tl.k0 = (int32_t)(share * JG_K_TILES);
    (void)rank;
#else
    jg_tile tl = jg_tile_at(p, t, tiles_m);
#endif
#if JG_SPLIT_K > 1
    tl.k0 = (int32_t)(rank * JG_K_TILES);
#elif JG_N_STACK > 1
    tl.tm = tl.tm * JG_M_STACK + rank % JG_M_STACK;
    tl.tn = tl.tn * JG_N_STACK + rank / JG_M_STACK;
#else
    tl.tm = tl.tm * JG_M_STACK + rank;
#endif
    return tl;
}

/* Element offsets along K of stage kt (of the whole K's, split-K's share
 * offset included) in A's and B's rows. JG_EXACT: three passes over the
 * workspace's rows of 2 * JG_KP (high parts, then low parts): A's high x
 * B's low, A's low x B's high, then A's high x B's high (the small sums
 * first: see JG_EXACT); stages past the third (split-K's last share)
 * read past the rows, as zeros. */
#if JG_EXACT
#define JG_KP_TILES (JG_KP / JG_BLOCK_K)
JG_DEV int32_t jg_k_pass(int kt, int low_pass)
{
    const int pass = kt / JG_KP_TILES;
    return pass > 2 ? 2 * JG_KP
                    : (kt % JG_KP_TILES) * JG_BLOCK_K + (pass == low_pass ? JG_KP : 0);
}
JG_DEV int32_t jg_k_a(int kt) { return jg_k_pass(kt, 1); }
JG_DEV int32_t jg_k_b(int kt) { return jg_k_pass(kt, 0); }
#else
JG_DEV int32_t jg_k_a(int kt) { return kt * JG_BLOCK_K; }
JG_DEV int32_t jg_k_b(int kt) { return kt * JG_BLOCK_K; }
#endif

/* A's boxes a stage of the tile loads (JG_A_BOX_RUNTIME: those holding
 * rows below M, at least one; else the one box) */
JG_DEV uint32_t jg_a_boxes(const jg_tile &tl)
{
#if JG_A_BOX_RUNTIME
    const int32_t left = tl.m - (int32_t)(tl.tm * JG_BLOCK_M);
    const uint32_t need = left > 0 ? (uint32_t)(left + JG_A_BOX_M - 1) / JG_A_BOX_M : 1u;
    return need < JG_BLOCK_M / JG_A_BOX_M ? need : JG_BLOCK_M / JG_A_BOX_M;
#else
    (void)tl;
    return 1;
#endif
}

/* The bytes a stage of A's `a_boxes` boxes and B's tile brings */
JG_DEV uint32_t jg_stage_tx_bytes(uint32_t a_boxes)
{
    return (a_boxes * JG_A_BOX_M + JG_BLOCK_N) * JG_BLOCK_K * JG_AB_SIZE;
}

/* Stage kt's TMA loads of the tile's A (if `a`) and B (if `b`), counted on
 * `full` (the caller announced their bytes). K-major operands: one box
 * per swizzle atom along K (A's, then B's, atom by atom; A's as `a_boxes`
 * boxes of JG_A_BOX_M rows with JG_A_BOX_RUNTIME); MN-major ones: a
 * box of the stage's K rows per 64 elements of M or N. A box wholly past
 * the matrix arrives as zeros and still counts its bytes. A cluster's CTAs
 * stacked along M each load their share of B's rows (or boxes) and
 * multicast it to all of their column; stacked along N, their share of
 * A's rows, multicast to all of their row. */
JG_DEV void jg_stage_tma(const jg_tile &tl, int kt, uint32_t smem_a, uint32_t smem_b,
                         uint32_t stage, uint32_t full, uint32_t rank, bool a, bool b,
                         uint32_t a_boxes = 1)
{
#if !JG_A_MN && !JG_B_MN
#pragma unroll
    for (int at = 0; at < JG_K_ATOMS; ++at) {
        const int32_t ka = jg_k_a(tl.k0 + kt) + at * JG_ATOM_K;
        const int32_t kb = jg_k_b(tl.k0 + kt) + at * JG_ATOM_K;
#if JG_A_BOX_RUNTIME
        if (a) { /* the first box straight (a_boxes >= 1), the others in a
                  * loop: a decode tile's one box issues as fast as a baked
                  * plan's (unrolled, the loop's branches slowed the stage) */
            const uint32_t sa = smem_a + stage * JG_A_STAGE_BYTES + at * JG_BLOCK_M * 128;
            const int32_t row = tl.row_base + (int32_t)(tl.tm * JG_BLOCK_M);
            jg_tma_load_2d(sa, tl.a, full, ka, row);
#pragma unroll 1
            for (uint32_t i = 1; i < a_boxes; ++i)
                jg_tma_load_2d(sa + i * JG_A_BOX_M * 128, tl.a, full, ka,
                               row + (int32_t)(i * JG_A_BOX_M));
        }
#elif JG_N_STACK > 1
        (void)a_boxes;
        const uint32_t share = rank / JG_M_STACK * JG_A_SHARE_M; /* this CTA's rows of A's box */
        if (a)
            jg_tma_load_2d_multicast(
                smem_a + stage * JG_A_STAGE_BYTES + (at * JG_BLOCK_M + share) * 128, tl.a, full, ka,
                tl.row_base + (int32_t)(tl.tm * JG_BLOCK_M + share), JG_A_MASK(rank));
#else
        (void)a_boxes;
        if (a)
            jg_tma_load_2d(smem_a + stage * JG_A_STAGE_BYTES + at * JG_BLOCK_M * 128, tl.a, full,
                           ka, tl.row_base + (int32_t)(tl.tm * JG_BLOCK_M));
#endif
        if (b) {
#if JG_M_STACK > 1 && JG_N_STACK > 1
            const uint32_t mr = rank % JG_M_STACK; /* this CTA's share of B's rows */
            jg_tma_load_2d_multicast(
                smem_b + stage * JG_B_STAGE_BYTES + at * JG_BLOCK_N * 128 + mr * JG_B_BOX_N * 128,
                tl.b, full, kb, tl.b_row + (int32_t)(tl.tn * JG_BLOCK_N + mr * JG_B_BOX_N),
                JG_B_MASK(rank));
#elif JG_M_STACK > 1
            jg_tma_load_2d_multicast(smem_b + stage * JG_B_STAGE_BYTES + at * JG_BLOCK_N * 128 +
                                         rank * JG_B_BOX_N * 128,
                                     tl.b, full, kb,
                                     tl.b_row + (int32_t)(tl.tn * JG_BLOCK_N + rank * JG_B_BOX_N),
                                     (uint16_t)((1u << JG_M_STACK) - 1));
#else
            (void)rank;
            jg_tma_load_2d(smem_b + stage * JG_B_STAGE_BYTES + at * JG_BLOCK_N * 128, tl.b, full,
                           kb, tl.b_row + (int32_t)(tl.tn * JG_BLOCK_N));
#endif
        }
    }
#else
    const uint32_t sa = smem_a + stage * JG_A_STAGE_BYTES, sb = smem_b + stage * JG_B_STAGE_BYTES;
    const int32_t row0 = tl.row_base + (int32_t)(tl.tm * JG_BLOCK_M);
    const int32_t n0 = tl.b_row + (int32_t)(tl.tn * JG_BLOCK_N);
#pragma unroll
    for (int i = 0; a && i < JG_A_BOXES; ++i) {
#if JG_A_MN
        jg_tma_load_2d(sa + i * JG_A_BOX_STRIDE, tl.a, full, row0 + 64 * i, jg_k_a(tl.k0 + kt));
#else
        jg_tma_load_2d(sa + i * JG_A_BOX_STRIDE, tl.a, full,
                       jg_k_a(tl.k0 + kt) + i * JG_ATOM_K, row0);
#endif
    }
#pragma unroll
    for (int i = 0; b && i < JG_B_BOXES; ++i) {
#if JG_B_MN
        const int box = (int)rank * JG_B_BOXES + i; /* this CTA's share of the 64-column boxes */
        const int32_t c0 = n0 + 64 * box, c1 = jg_k_b(tl.k0 + kt);
#else
        const int box = i;
        const int32_t c0 = jg_k_b(tl.k0 + kt) + i * JG_ATOM_K,
                      c1 = n0 + (int32_t)(rank * JG_B_BOX_N);
#endif
        const uint32_t dst = sb + box * JG_B_BOX_STRIDE + (JG_B_MN ? 0 : rank * JG_B_BOX_N * 128);
#if JG_M_STACK > 1
        jg_tma_load_2d_multicast(dst, tl.b, full, c0, c1, (uint16_t)((1u << JG_M_STACK) - 1));
#else
        jg_tma_load_2d(dst, tl.b, full, c0, c1);
#endif
    }
#endif
}

#if JG_SOFT_LOADS
/* Stage kt's soft loads of the tile's A and B, in the launch's modes, into
 * the same boxes (and the stage's side slots): every producer thread. */
JG_DEV void jg_stage_soft(const jg_kargs_t &p, const jg_tile &tl, int kt, uint32_t sa, uint32_t sb,
                          uint32_t side)
{
    const int32_t row0 = tl.row_base + (int32_t)(tl.tm * JG_BLOCK_M);
    const int32_t n0 = tl.b_row + (int32_t)(tl.tn * JG_BLOCK_N);
#if JG_A_SOFT
    if (p.soft.a_mode != JG_SOFT_TMA)
#pragma unroll 1
        for (int i = 0; i < JG_A_BOXES; ++i) {
            const int32_t k = jg_k_a(tl.k0 + kt);
            jg_soft_box<JG_AB_SIZE, JG_A_BOX_ROWS>(
                p.soft.a_mode, sa + i * JG_A_BOX_STRIDE, side + i * JG_A_SIDE_BOX, *tl.soft_a,
                JG_A_MN ? row0 + 64 * i : k + i * JG_ATOM_K, JG_A_MN ? k : row0);
        }
#endif
#if JG_B_SOFT
    if (p.soft.b_mode != JG_SOFT_TMA)
#pragma unroll 1
        for (int i = 0; i < JG_B_BOXES; ++i) {
            const int32_t k = jg_k_b(tl.k0 + kt);
            jg_soft_box<JG_AB_SIZE, JG_B_BOX_ROWS>(
                p.soft.b_mode, sb + i * JG_B_BOX_STRIDE, side + JG_SIDE_A + i * JG_B_SIDE_BOX,
                *tl.soft_b, JG_B_MN ? n0 + 64 * i : k + i * JG_ATOM_K, JG_B_MN ? k : n0);
        }
#endif
    (void)p, (void)tl, (void)kt, (void)sa, (void)sb, (void)side, (void)row0, (void)n0;
}

/* A stage's soft loads have landed (this thread's, cp.async.wait_group):
 * the warp shifts its WORDS rows into place (TF32: rounding them; P8: the
 * thread rounds its values), then the thread fences its shared-memory writes (generic proxy)
 * before wgmma's reads (async proxy) and arrives on the stage's full
 * barrier. */
JG_DEV void jg_soft_complete(const jg_kargs_t &p, uint32_t stage, uint32_t smem_a,
                             uint32_t smem_b, uint32_t side, uint32_t bar_full)
{
    __syncwarp();
    const uint32_t sd = side + stage * JG_SIDE_BYTES;
#if JG_AB_DTYPE == 3 && JG_A_SOFT
    jg_soft_round_tf32<JG_A_BOX_ROWS>(p.soft.a_mode, smem_a + stage * JG_A_STAGE_BYTES,
                                      JG_A_BOXES, JG_A_BOX_STRIDE);
#endif
#if JG_AB_DTYPE == 3 && JG_B_SOFT
    jg_soft_round_tf32<JG_B_BOX_ROWS>(p.soft.b_mode, smem_b + stage * JG_B_STAGE_BYTES,
                                      JG_B_BOXES, JG_B_BOX_STRIDE);
#endif
#if JG_A_SOFT
    if (p.soft.a_mode == JG_SOFT_WORDS)
#pragma unroll 1
        for (int i = 0; i < JG_A_BOXES; ++i)
            jg_soft_shift<JG_AB_SIZE, JG_A_BOX_ROWS, JG_AB_DTYPE == 3>(
                smem_a + stage * JG_A_STAGE_BYTES + i * JG_A_BOX_STRIDE, sd + i * JG_A_SIDE_BOX);
#endif
#if JG_B_SOFT
    if (p.soft.b_mode == JG_SOFT_WORDS)
#pragma unroll 1
        for (int i = 0; i < JG_B_BOXES; ++i)
            jg_soft_shift<JG_AB_SIZE, JG_B_BOX_ROWS, JG_AB_DTYPE == 3>(
                smem_b + stage * JG_B_STAGE_BYTES + i * JG_B_BOX_STRIDE,
                sd + JG_SIDE_A + i * JG_B_SIDE_BOX);
#endif
    (void)p, (void)smem_a, (void)smem_b, (void)sd;
    jg_fence_proxy_async_smem();
    jg_mbar_arrive(bar_full + 8 * stage);
}
#endif

/* C's element `at` (elements from C's start) as FP32. */
JG_DEV float jg_c_at(const jg_tile &tl, int64_t at)
{
#if JG_D_DTYPE == 3
    return ((const float *)tl.c)[at];
#elif JG_D_DTYPE == 1
    return jg_bf16_to_f32(((const uint16_t *)tl.c)[at]);
#else
    return jg_f16_to_f32(((const uint16_t *)tl.c)[at]);
#endif
}

/* alpha * acc (+ beta * C) for two outputs: C's elements at0 and at1,
 * read where in0 and in1 say they lie in the matrix. */
JG_DEV void jg_apply_c2(const jg_kargs_t &p, const jg_tile &tl, int64_t at0, bool in0,
                        int64_t at1, bool in1, float &v0, float &v1)
{
#if JG_HAS_C
    const float c0 = in0 ? jg_c_at(tl, at0) : 0.0f, c1 = in1 ? jg_c_at(tl, at1) : 0.0f;
    v0 = p.alpha * v0 + p.beta * c0;
    v1 = p.alpha * v1 + p.beta * c1;
#else
    (void)tl, (void)at0, (void)in0, (void)at1, (void)in1;
    v0 *= p.alpha;
    v1 *= p.alpha;
#endif
}

/* alpha * acc (+ beta * C) for the pair of columns (col, col + 1) of a row.
 * C is read directly (masked to the matrix); D leaves through TMA. */
JG_DEV void jg_apply_c(const jg_kargs_t &p, const jg_tile &tl, int32_t row, int32_t col,
                       float &v0, float &v1)
{
    const int64_t at = (int64_t)row * p.ldc + col;
    const bool in = row < tl.m && col < tl.n;
    jg_apply_c2(p, tl, at, in, at + 1, in && col + 1 < tl.n, v0, v1);
}

/* The thread's first row of a wgmma m64nN fragment (16 per warp, lane/4);
 * its second lies 8 below. */
JG_DEV uint32_t jg_frag_row() { return (jg_warp_id() % 4) * 16 + jg_lane_id() / 4; }

/* Byte offset of (row, byte) in a staging buffer of JG_EPI_BYTES-wide rows,
 * swizzled as TMA expects for that width (16-byte units XORed with address
 * bits 7..9); the same XOR also spreads a warp's stores over all banks.
 * Whole unswizzled rows: an odd number of 16-byte units apart (240 bytes)
 * they fall on distinct banks as they are. */
JG_DEV uint32_t jg_epi_offset(uint32_t row, uint32_t byte)
{
    const uint32_t addr = row * JG_EPI_BYTES + byte;
#if JG_EPI_SWIZZLED
    return addr ^ (((addr >> 7) & (JG_EPI_BYTES / 16 - 1)) << 4);
#else
    return addr;
#endif
}

#if JG_D_DTYPE != 3
/* Two outputs as D's 16-bit pair, the first in the low half. */
JG_DEV uint32_t jg_pack_d(float v0, float v1)
{
#if JG_D_DTYPE == 1
    return jg_pack_bf16x2(v0, v1);
#else
    return jg_pack_f16x2(v0, v1);
#endif
}
#endif

/* A direct, masked store of (col, col + 1) of a row, for columns >= JG_N_TMA. */
JG_DEV void jg_store_pair_global(const jg_kargs_t &p, const jg_tile &tl, int32_t row, int32_t col,
                                 float v0, float v1)
{
    if (row >= tl.m || col >= tl.n)
        return;
    const int64_t at = (int64_t)row * p.ldd + col;
#if JG_D_DTYPE == 3
    float *d = (float *)tl.d_ptr + at;
    d[0] = v0;
    if (col + 1 < tl.n)
        d[1] = v1;
#else
    const uint32_t packed = jg_pack_d(v0, v1);
    uint16_t *d = (uint16_t *)tl.d_ptr + at;
    d[0] = (uint16_t)(packed & 0xFFFF);
    if (col + 1 < tl.n)
        d[1] = (uint16_t)(packed >> 16);
#endif
}

#if JG_D_DTYPE == 3
JG_DEV void jg_epi_store_pair(uint32_t buf, uint32_t row, uint32_t col, float v0, float v1)
{
    jg_st_shared_v2_f32(buf + jg_epi_offset(row, col * 4), v0, v1);
}
#else
/* A warp's 16 rows of a 16-bit chunk, from the pairs q[g] (rows r, r + 8 of
 * column group g, as the accumulators hold them) with stmatrix: 8x8
 * matrices (rows 0-7 and 8-15 of the warp's, one group) in fours. */
JG_DEV void jg_epi_store_matrices(uint32_t buf, uint32_t w, uint32_t l,
                                  const uint32_t (&q)[JG_EPI_W / 8][2])
{
    const uint32_t row = w * 16 + ((l / 8) % 2) * 8 + l % 8;
#pragma unroll
    for (int g = 0; g + 1 < JG_EPI_W / 8; g += 2)
        jg_stmatrix_x4(buf + jg_epi_offset(row, (g + l / 16) * 16), q[g][0], q[g][1], q[g + 1][0],
                       q[g + 1][1]);
    if (JG_EPI_W / 8 % 2) /* an odd group last (whole rows of 8 mod 16 columns) */
        jg_stmatrix_x2(buf + jg_epi_offset(row, (JG_EPI_W / 8 - 1) * 16),
                       q[JG_EPI_W / 8 - 1][0], q[JG_EPI_W / 8 - 1][1]);
}
#endif

#if JG_DEVICE_ROWS
/* A staged chunk whose 64 rows reach past the group's (contiguous, masked
 * layouts, where a TMA box would write the next group's rows): the
 * warpgroup copies the rows below the group's end to D itself, 16 bytes a
 * thread and consecutive threads along a row. Columns up to JG_N_TMA; the
 * rest leave pair by pair. D's rows are 16-byte aligned (TMA's stride rule,
 * checked on the host), as are the chunk's columns. */
JG_DEV void jg_epi_copy_rows(const jg_kargs_t &p, const jg_tile &tl, uint32_t buf, int32_t row0,
                             int32_t col0)
{
    constexpr uint32_t units = JG_EPI_BYTES / 16; /* per staged row */
    const uint32_t tid = threadIdx.x % 128;
#pragma unroll
    for (uint32_t i = 0; i < (64 * units + 127) / 128; ++i) {
        const uint32_t u = tid + i * 128;
        const int32_t r = (int32_t)(u / units);
        const uint32_t byte = (u % units) * 16;
        const int32_t col = col0 + (int32_t)(byte / JG_D_SIZE);
        if (u < 64 * units && row0 + r < tl.m && col < JG_N_TMA) {
            const uint4 v = jg_ld_shared_v4(buf + jg_epi_offset((uint32_t)r, byte));
            *(uint4 *)((uint8_t *)tl.d_ptr + ((int64_t)(row0 + r) * p.ldd + col) * JG_D_SIZE) = v;
        }
    }
}
#endif

#if JG_D_SOFT
/* Direct stores of a staged chunk (D's pointer or rows not 16-byte
 * aligned, jg_soft_kargs.d_piece): its 64 rows below the tile's matrix's
 * (row0 + r < tl.m), columns below tl.n, to D at (row0, col0), in
 * `piece`-byte stores (D's pointer and rows are aligned to them), element
 * by element where a piece would cross the last column. Consecutive
 * threads of the warpgroup store consecutive pieces of a row. */
template <uint32_t PIECE> /* `piece` known when the kernel is built (0: at run time) */
JG_DEV void jg_epi_store_soft_by(const jg_kargs_t &p, const jg_tile &tl, uint32_t buf,
                                 int32_t row0, int32_t col0, uint32_t run_piece)
{
    const uint32_t piece = PIECE ? PIECE : run_piece;
    const uint32_t per_row = JG_EPI_BYTES / piece, tid = threadIdx.x % 128;
    for (uint32_t u = tid; u < 64 * per_row; u += 128) {
        const int32_t r = (int32_t)(u / per_row);
        const uint32_t byte = (u % per_row) * piece;
        const int32_t col = col0 + (int32_t)(byte / JG_D_SIZE);
        if (row0 + r >= tl.m || col >= tl.n)
            continue;
        uint8_t *dst = (uint8_t *)tl.d_ptr + ((int64_t)(row0 + r) * p.ldd + col) * JG_D_SIZE;
        const uint32_t src = buf + jg_epi_offset((uint32_t)r, byte);
        if (col + (int32_t)(piece / JG_D_SIZE) <= tl.n) {
            jg_soft_store(dst, src, piece);
            continue;
        }
        for (int32_t e = 0; col + e < tl.n; ++e) /* the row's last columns */
            jg_soft_store(dst + e * JG_D_SIZE, src + (uint32_t)e * JG_D_SIZE, JG_D_SIZE);
    }
}

/* The same, with the piece's divisions by constants for D's 2-byte pieces
 * (odd rows of 16-bit D: a run-time divisor cost tens of instructions an
 * element) and 4-byte ones. */
JG_DEV void jg_epi_store_soft(const jg_kargs_t &p, const jg_tile &tl, uint32_t buf, int32_t row0,
                              int32_t col0, uint32_t piece)
{
    if (JG_D_SIZE == 2 && piece == 2)
        jg_epi_store_soft_by<JG_D_SIZE == 2 ? 2 : 0>(p, tl, buf, row0, col0, piece);
    else if (JG_D_SIZE <= 4 && piece == 4)
        jg_epi_store_soft_by<JG_D_SIZE <= 4 ? 4 : 0>(p, tl, buf, row0, col0, piece);
    else
        jg_epi_store_soft_by<0>(p, tl, buf, row0, col0, piece);
}
#endif

/* Split-K: the rounds of the epilogue (units of a consumer's slab, in
 * order) are dealt to the cluster's CTAs in turn; each CTA sums and stores
 * its own. Without split-K, every round is this CTA's. */
JG_DEV bool jg_split_owns(uint32_t c, int mi, int round, uint32_t rank)
{
    return JG_SPLIT_K == 1 ||
           ((c * JG_WG_MMAS + (uint32_t)mi) * JG_EPI_RPS + (uint32_t)round) % JG_SPLIT_K == rank;
}

#if JG_SPLIT_K > 1 || JG_SPLIT_WS > 1
#define JG_SPLIT_BAR (1 + JG_CONSUMERS) /* named barrier of all consumer warpgroups */
#endif

#if JG_SPLIT_K > 1
static_assert(JG_STAGES * (JG_A_STAGE_BYTES + JG_B_STAGE_BYTES) >= JG_BLOCK_M * JG_BLOCK_N * 4,
              "split-K: a tile's FP32 partial sums fit in the stage ring");

/* Where this thread of consumer c keeps its sums of fragment group q (8
 * columns: 4 floats) of slab mi: consecutive threads 16 bytes apart. */
JG_DEV uint32_t jg_split_slot(uint32_t part, uint32_t c, int mi, int q)
{
    return part + ((((c * JG_WG_MMAS + (uint32_t)mi) * (JG_MMA_N / 8) + (uint32_t)q) * 128) +
                   threadIdx.x % 128) *
                      16;
}

/* Leaves this CTA's partial sums in its stage ring (from `part`), which
 * the cluster's one tile no longer needs once every consumer's wgmmas are
 * done with it; the caller's cluster barrier then publishes them. */
JG_DEV void jg_split_publish(const float (&sum)[JG_WG_MMAS][JG_MMA_N / 2], uint32_t part,
                             uint32_t c)
{
    jg_named_barrier(JG_SPLIT_BAR, JG_CONSUMERS * 128);
#pragma unroll
    for (int mi = 0; mi < JG_WG_MMAS; ++mi)
#pragma unroll
        for (int q = 0; q < JG_MMA_N / 8; ++q)
            jg_st_shared_v4_f32(jg_split_slot(part, c, mi, q), sum[mi][4 * q], sum[mi][4 * q + 1],
                                sum[mi][4 * q + 2], sum[mi][4 * q + 3]);
}

/* The rounds this CTA stores: the sums of every CTA's partials, added in
 * rank order (the same order whichever CTA adds them), the others' read
 * through distributed shared memory. */
JG_DEV void jg_split_gather(float (&sum)[JG_WG_MMAS][JG_MMA_N / 2], uint32_t part, uint32_t c,
                            uint32_t rank)
{
#pragma unroll
    for (int mi = 0; mi < JG_WG_MMAS; ++mi)
#pragma unroll
        for (int round = 0; round < JG_EPI_RPS; ++round) {
            if (!jg_split_owns(c, mi, round, rank))
                continue;
#pragma unroll
            for (int q = round * JG_EPI_QPR; q < (round + 1) * JG_EPI_QPR && q < JG_MMA_N / 8;
                 ++q) {
                const uint32_t slot = jg_split_slot(part, c, mi, q);
                float4 t, own;
                own.x = sum[mi][4 * q];
                own.y = sum[mi][4 * q + 1];
                own.z = sum[mi][4 * q + 2];
                own.w = sum[mi][4 * q + 3];
                t.x = t.y = t.z = t.w = 0.0f;
#pragma unroll
                for (uint32_t r = 0; r < JG_SPLIT_K; ++r) {
                    const float4 v = r == rank ? own : jg_ld_cluster_v4_f32(jg_mapa(slot, r));
                    t.x += v.x;
                    t.y += v.y;
                    t.z += v.z;
                    t.w += v.w;
                }
                sum[mi][4 * q] = t.x;
                sum[mi][4 * q + 1] = t.y;
                sum[mi][4 * q + 2] = t.z;
                sum[mi][4 * q + 3] = t.w;
            }
        }
}
#endif

#if JG_SPLIT_WS > 1
/* float4s of one unit's sums: the whole tile's */
#define JG_WS_PART_F4 (JG_BLOCK_M * JG_BLOCK_N / 4)
/* Each thread keeps its sums of fragment group q of slab mi in the float4 at
 * the same place of every part (consecutive threads 16 bytes apart): `at`
 * is its float4 of group 0 of its first slab in the first part (consumer
 * c's), group q of slab mi (((mi) * MMA_N / 8 + q) * 128 further: constant
 * offsets from one base, so that a loop over the parts keeps one pointer
 * live, not one a float4. */
JG_DEV const float4 *jg_ws_base(const jg_kargs_t &p, uint32_t c)
{
    return (const float4 *)p.ws.parts + c * JG_WG_MMAS * (JG_MMA_N / 8) * 128 + threadIdx.x % 128;
}
#define JG_WS_AT(mi, q) (((mi) * (JG_MMA_N / 8) + (q)) * 128)

/* This thread's sums to the part at `to` */
JG_DEV void jg_ws_store(float4 *to, const float (&sum)[JG_WG_MMAS][JG_MMA_N / 2])
{
#pragma unroll
    for (int mi = 0; mi < JG_WG_MMAS; ++mi)
#pragma unroll
        for (int q = 0; q < JG_MMA_N / 8; ++q)
            jg_st_global_v4_f32(to + JG_WS_AT(mi, q), sum[mi][4 * q], sum[mi][4 * q + 1],
                                sum[mi][4 * q + 2], sum[mi][4 * q + 3]);
}

/* The part at `from` added to this thread's sums */
JG_DEV void jg_ws_add(const float4 *from, float (&sum)[JG_WG_MMAS][JG_MMA_N / 2])
{
#pragma unroll
    for (int mi = 0; mi < JG_WG_MMAS; ++mi)
#pragma unroll
        for (int q = 0; q < JG_MMA_N / 8; ++q) {
            const float4 v = jg_ld_global_cg_v4_f32(from + JG_WS_AT(mi, q));
            sum[mi][4 * q] += v.x;
            sum[mi][4 * q + 1] += v.y;
            sum[mi][4 * q + 2] += v.z;
            sum[mi][4 * q + 3] += v.w;
        }
}

/* The part stored by every consumer thread, one counts it on `count` with
 * a release at GPU scope (after the barrier, every consumer thread's stores
 * come before it). */
JG_DEV void jg_ws_publish(float4 *to, const float (&sum)[JG_WG_MMAS][JG_MMA_N / 2], uint32_t *count)
{
    jg_ws_store(to, sum);
    jg_named_barrier(JG_SPLIT_BAR, JG_CONSUMERS * 128);
    if (threadIdx.x == 128)
        jg_red_release_gpu_add(count, 1);
}

#if JG_STREAM_K
/* Stream-K: the first unit of CTA b's units (of `units`); with row groups,
 * interleaved, CTA b' of group r (b = b' R + r) begins at
 * r U / R + b' (U / R) / (G / R) (the grid is a multiple of R), and the CTA
 * after b in its group is b + R (JG_SK_NEXT) */
#if JG_STREAM_K > 1
#define JG_SK_NEXT JG_STREAM_K
#else
#define JG_SK_NEXT 1
#endif
JG_DEV uint32_t jg_sk_begin(uint32_t b, uint32_t units)
{
#if JG_STREAM_K > 1
    const uint32_t per = gridDim.x / JG_STREAM_K, share = units / JG_STREAM_K;
    return b % JG_STREAM_K * share + (uint32_t)((uint64_t)(b / JG_STREAM_K) * share / per);
#else
    return (uint32_t)((uint64_t)b * units / gridDim.x);
#endif
}

/* Unit t, the last of a run, is done (this CTA's units: [first, end); a
 * run ends at its tile's end or at `end`), the run's sums in `sum`.
 * Whether the epilogue runs: when the run covers the whole tile, or
 * when it is the tile's first (then this CTA's last) and the other runs'
 * parts are added. A run that begins inside its tile is its CTA's first
 * (every later one begins a tile): it publishes its sums in the CTA's part
 * and flag. The tile's first run waits for the flags of the CTAs after its
 * own whose units begin inside the tile (those with none run nothing), then
 * adds their parts in the CTAs' order (the same order every run). A CTA
 * waits only for later CTAs' first runs, which wait for nothing: with the
 * whole grid resident (no more CTAs than fit at once), no wait is
 * circular. */
JG_DEV bool jg_stream_k(const jg_kargs_t &p, float (&sum)[JG_WG_MMAS][JG_MMA_N / 2], uint32_t t,
                        uint32_t first, uint32_t end, uint32_t units, uint32_t c)
{
    const uint32_t share = t % JG_SPLIT_WS, tile_end = t - share + JG_SPLIT_WS;
    const float4 *const base = jg_ws_base(p, c);
    if (first > t - share) {
        jg_ws_publish((float4 *)base + (uint64_t)blockIdx.x * JG_WS_PART_F4, sum,
                      p.ws.counts + blockIdx.x);
        return false;
    }
    if (t + 1 == tile_end)
        return true; /* the whole tile */
    if (threadIdx.x == 128)
        for (uint32_t b = blockIdx.x + JG_SK_NEXT, lo = end; b < gridDim.x && lo < tile_end;
             b += JG_SK_NEXT) {
            const uint32_t hi = jg_sk_begin(b + JG_SK_NEXT, units);
            if (hi > lo)
                while (jg_ld_acquire_gpu(p.ws.counts + b) == 0)
                    jg_nanosleep(64);
            lo = hi;
        }
    jg_named_barrier(JG_SPLIT_BAR, JG_CONSUMERS * 128);
#pragma unroll 1
    for (uint32_t b = blockIdx.x + JG_SK_NEXT, lo = end; b < gridDim.x && lo < tile_end;
         b += JG_SK_NEXT) {
        const uint32_t hi = jg_sk_begin(b + JG_SK_NEXT, units);
        if (hi > lo)
            jg_ws_add(base + (uint64_t)b * JG_WS_PART_F4, sum);
        lo = hi;
    }
    return true;
}
#else
/* Unit t's share of its tile's K is done (sums in `sum`). All shares but
 * the last publish their part in the workspace (jg_ws_publish) on the
 * tile's count and return false: no epilogue. The last waits for the count
 * (an acquire at GPU scope, then the barrier), adds the parts in share
 * order to its own sums (the same order every run) and returns true. A unit
 * waits only for lower-numbered ones (its tile's lower shares), and a CTA
 * runs its units in increasing order, so the unit waited for runs on
 * another resident CTA at the same or an earlier step (the grid holds no
 * more CTAs than fit at once): the lowest unfinished unit never waits. That
 * needs every CTA of the grid resident: where other kernels hold SMs
 * meanwhile, a CTA may wait for one not yet started
 * (bench/patches/split-ws-arrive.patch waits only for units that have
 * arrived). */
JG_DEV bool jg_split_ws(const jg_kargs_t &p, float (&sum)[JG_WG_MMAS][JG_MMA_N / 2], uint32_t t,
                        uint32_t tiles_m, uint32_t c)
{
    uint32_t tile, share, slot;
    jg_ws_unit(t, tiles_m, tile, share, slot);
    uint32_t *const count = p.ws.counts + slot;
    const float4 *const base =
        jg_ws_base(p, c) + (uint64_t)slot * (JG_SPLIT_WS - 1) * JG_WS_PART_F4;
    if (share + 1 < JG_SPLIT_WS) {
        jg_ws_publish((float4 *)base + (uint64_t)share * JG_WS_PART_F4, sum, count);
        return false;
    }
    if (threadIdx.x == 128)
        while (jg_ld_acquire_gpu(count) < JG_SPLIT_WS - 1)
            jg_nanosleep(64);
    jg_named_barrier(JG_SPLIT_BAR, JG_CONSUMERS * 128);
#pragma unroll 1
    for (int s = 0; s < JG_SPLIT_WS - 1; ++s)
        jg_ws_add(base + (uint64_t)s * JG_WS_PART_F4, sum);
    return true;
}
#endif
#endif

/* Writes one warpgroup's accumulators through shared memory and TMA stores,
 * in chunks of 64 rows x JG_EPI_W columns, in rounds (JG_EPI_SUBS chunks
 * each) alternating between two staging buffers, or reusing one where a
 * slab is one round (chunk counts rounds on across tiles, so the
 * alternation never repeats a buffer whose store may still read it); the
 * stores drain while the next tile's mainloop runs. TMA clips
 * rows and columns past the matrix. wgmma's m64nN fragment: warp w of the
 * warpgroup holds rows 16w..16w+15; in each group of 4 registers j, lane l
 * holds (row l/4, cols 8j + 2(l%4) + {0,1}) then the same 8 rows lower. */
#if !JG_SWAP_AB
JG_DEV void jg_epilogue(const jg_kargs_t &p, const jg_tile &tl,
                        float (&acc)[JG_WG_MMAS][JG_MMA_N / 2], int32_t row0, int32_t col0,
                        uint32_t bufs, uint32_t c, uint32_t rank, uint32_t &chunk)
{
    const uint32_t w = jg_warp_id() % 4, l = jg_lane_id(), bar_id = 1 + c;
    const bool leader = threadIdx.x % 128 == 0;
#if JG_D_SOFT /* this launch stores D directly (its pointer or rows not 16-byte aligned) */
    const uint32_t soft_d = p.soft.d_piece;
#else
    constexpr uint32_t soft_d = 0;
#endif
#pragma unroll
    for (int mi = 0; mi < JG_WG_MMAS; ++mi) {
        const uint32_t r = jg_frag_row();
        /* A chunk reaching past the group's rows (contiguous, masked) is
         * copied out by the threads: TMA would write the next group's rows. */
        const bool direct = (JG_DEVICE_ROWS && row0 + mi * 64 + 64 > tl.m) || soft_d;
#pragma unroll
        for (int ch0 = 0; ch0 < JG_EPI_CHUNKS; ch0 += JG_EPI_SUBS) {
            if (!jg_split_owns(c, mi, ch0 / JG_EPI_SUBS, rank))
                continue;
            const uint32_t buf = bufs + (chunk++ % JG_EPI_NBUF) * JG_EPI_BUF_BYTES;
            if (leader) /* the stores issued from this buffer JG_EPI_NBUF rounds ago have read it */
                jg_bulk_wait_read<JG_EPI_NBUF - 1>();
            jg_named_barrier(bar_id, 128);
#pragma unroll
            for (int s = 0; s < JG_EPI_SUBS; ++s) {
                const int ch = ch0 + s;
                if (ch >= JG_EPI_CHUNKS) /* the last round of an uneven split */
                    continue;
                const uint32_t sub = buf + (uint32_t)s * JG_EPI_SUB_BYTES;
#if JG_D_DTYPE != 3
                uint32_t q[JG_EPI_W / 8][2];
#endif
#pragma unroll
                for (int g = 0; g < JG_EPI_W / 8; ++g) {
                    const int j = ch * (JG_EPI_W / 8) + g;
                    const int32_t row = row0 + mi * 64 + (int32_t)r;
                    const int32_t col = col0 + j * 8 + (int32_t)(l % 4) * 2;
                    float v0 = acc[mi][4 * j + 0], v1 = acc[mi][4 * j + 1];
                    float v2 = acc[mi][4 * j + 2], v3 = acc[mi][4 * j + 3];
                    jg_apply_c(p, tl, row, col, v0, v1);
                    jg_apply_c(p, tl, row + 8, col, v2, v3);
#if JG_D_DTYPE == 3
                    const uint32_t c = g * 8 + (l % 4) * 2;
                    jg_epi_store_pair(sub, r, c, v0, v1);
                    jg_epi_store_pair(sub, r + 8, c, v2, v3);
#else
                    q[g][0] = jg_pack_d(v0, v1);
                    q[g][1] = jg_pack_d(v2, v3);
#endif
                    if (JG_N_TMA < JG_N && col >= JG_N_TMA && !soft_d) {
                        jg_store_pair_global(p, tl, row, col, v0, v1);
                        jg_store_pair_global(p, tl, row + 8, col, v2, v3);
                    }
                }
#if JG_D_DTYPE != 3
                jg_epi_store_matrices(sub, w, l, q);
#endif
            }
            jg_fence_proxy_async_smem(); /* our stores, then TMA's reads */
            jg_named_barrier(bar_id, 128);
#if JG_D_SOFT
            if (soft_d) {
#pragma unroll
                for (int s = 0; s < JG_EPI_SUBS; ++s)
                    if (ch0 + s < JG_EPI_CHUNKS)
                        jg_epi_store_soft(p, tl, buf + (uint32_t)s * JG_EPI_SUB_BYTES,
                                          row0 + mi * 64, col0 + (ch0 + s) * JG_EPI_W, soft_d);
            }
#endif
#if JG_DEVICE_ROWS
            if (direct && !soft_d) {
#pragma unroll
                for (int s = 0; s < JG_EPI_SUBS; ++s)
                    if (ch0 + s < JG_EPI_CHUNKS)
                        jg_epi_copy_rows(p, tl, buf + (uint32_t)s * JG_EPI_SUB_BYTES,
                                         row0 + mi * 64, col0 + (ch0 + s) * JG_EPI_W);
            }
#endif
            if (leader) {
                /* One bulk group per round, empty where nothing went out, so
                 * that "one group pending" always means the other buffer. */
#pragma unroll
                for (int s = 0; s < JG_EPI_SUBS; ++s) {
                    const int32_t col = col0 + (ch0 + s) * JG_EPI_W;
                    if (ch0 + s < JG_EPI_CHUNKS && !direct && col < JG_N_TMA)
                        jg_tma_store_2d(tl.d, buf + (uint32_t)s * JG_EPI_SUB_BYTES, col,
                                        tl.row_base + row0 + mi * 64);
                }
                jg_bulk_commit();
            }
        }
    }
}
#else
/* A direct store of D's element (m, n), for columns n >= JG_N_TMA. */
JG_DEV void jg_store_t(const jg_kargs_t &p, const jg_tile &tl, int32_t m, int32_t n, float v)
{
    if (m >= tl.n || n >= tl.m)
        return;
    const int64_t at = (int64_t)m * p.ldd + n;
#if JG_D_DTYPE == 3
    ((float *)tl.d_ptr)[at] = v;
#else
    ((uint16_t *)tl.d_ptr)[at] = (uint16_t)(jg_pack_d(v, 0.0f) & 0xFFFF);
#endif
}

/* alpha * acc (+ beta * C) for D's elements (m, n) and (m + 1, n): the
 * kernel's row n, columns m and m + 1. */
JG_DEV void jg_apply_c_t(const jg_kargs_t &p, const jg_tile &tl, int32_t m, int32_t n, float &v0,
                         float &v1)
{
    const int64_t at = (int64_t)m * p.ldc + n;
    jg_apply_c2(p, tl, at, n < tl.m && m < tl.n, at + p.ldc, n < tl.m && m + 1 < tl.n, v0, v1);
}

#if JG_D_DTYPE != 3
/* A warp's 16 fragment rows (columns of D) by a round's 8-column groups g
 * of the fragment (rows of D), transposed by stmatrix: the pairs q[g]
 * (fragment rows r and r + 8) are the matrices (g, 0) and (g, 1), and the
 * fragment's 8x8 block (g, h) lands as rows 8g..8g+7 of the staging buffer,
 * 16 bytes at column 16w + 8h. */
JG_DEV void jg_epi_store_matrices_t(uint32_t buf, uint32_t w, uint32_t l,
                                    const uint32_t (&q)[JG_EPI_QPR][2])
{
    const uint32_t mat = l / 8, byte = (16 * w + 8 * (mat % 2)) * 2;
#pragma unroll
    for (int g = 0; g + 1 < JG_EPI_QPR; g += 2)
        jg_stmatrix_x4_trans(buf + jg_epi_offset(8 * (g + mat / 2) + l % 8, byte), q[g][0],
                             q[g][1], q[g + 1][0], q[g + 1][1]);
    if (JG_EPI_QPR % 2) /* an odd group last: lanes 0-15 address it */
        jg_stmatrix_x2_trans(buf + jg_epi_offset(8 * (JG_EPI_QPR - 1) + l % 8, byte),
                             q[JG_EPI_QPR - 1][0], q[JG_EPI_QPR - 1][1]);
}
#endif

/* Swap-AB: writes one warpgroup's accumulators as D's transpose. A slab's
 * 64 rows are 64 columns of D (from n0), its columns rows of D (from m0).
 * A round stages JG_SW_EPI_ROWS rows of D by the slab's 64 columns (16-bit
 * D through stmatrix.trans, FP32 element by element), then one TMA store;
 * buffers alternate as in the unswapped epilogue. Columns of D past
 * JG_N_TMA leave directly; C is read transposed. */
JG_DEV void jg_epilogue(const jg_kargs_t &p, const jg_tile &tl,
                        float (&acc)[JG_WG_MMAS][JG_MMA_N / 2], int32_t n0, int32_t m0,
                        uint32_t bufs, uint32_t c, uint32_t rank, uint32_t &chunk)
{
    const uint32_t w = jg_warp_id() % 4, l = jg_lane_id(), bar_id = 1 + c;
    const bool leader = threadIdx.x % 128 == 0;
#pragma unroll
    for (int mi = 0; mi < JG_WG_MMAS; ++mi) {
        const int32_t slab = n0 + mi * 64, n = slab + (int32_t)jg_frag_row(); /* and n + 8 */
#pragma unroll
        for (int round = 0; round < JG_EPI_RPS; ++round) {
            if (!jg_split_owns(c, mi, round, rank))
                continue;
            const uint32_t buf = bufs + (chunk++ % JG_EPI_NBUF) * JG_EPI_BUF_BYTES;
            if (leader) /* the stores issued from this buffer JG_EPI_NBUF rounds ago have read it */
                jg_bulk_wait_read<JG_EPI_NBUF - 1>();
            jg_named_barrier(bar_id, 128);
#if JG_D_DTYPE != 3
            uint32_t q[JG_EPI_QPR][2];
#endif
#pragma unroll
            for (int g = 0; g < JG_EPI_QPR; ++g) {
                const int j = round * JG_EPI_QPR + g;
                const int32_t m = m0 + j * 8 + (int32_t)(l % 4) * 2; /* and m + 1 */
                /* (m, n), (m + 1, n), (m, n + 8), (m + 1, n + 8) */
                float v0 = acc[mi][4 * j + 0], v1 = acc[mi][4 * j + 1];
                float v2 = acc[mi][4 * j + 2], v3 = acc[mi][4 * j + 3];
                jg_apply_c_t(p, tl, m, n, v0, v1);
                jg_apply_c_t(p, tl, m, n + 8, v2, v3);
#if JG_D_DTYPE == 3
                const uint32_t r = (uint32_t)(8 * g) + (l % 4) * 2, byte = (n - slab) * 4u;
                jg_st_shared_f32(buf + jg_epi_offset(r, byte), v0);
                jg_st_shared_f32(buf + jg_epi_offset(r + 1, byte), v1);
                jg_st_shared_f32(buf + jg_epi_offset(r, byte + 32), v2);
                jg_st_shared_f32(buf + jg_epi_offset(r + 1, byte + 32), v3);
#else
                q[g][0] = jg_pack_d(v0, v1);
                q[g][1] = jg_pack_d(v2, v3);
#endif
                if (JG_N_TMA < JG_D_COLS && n + 8 >= JG_N_TMA) {
                    if (n >= JG_N_TMA) {
                        jg_store_t(p, tl, m, n, v0);
                        jg_store_t(p, tl, m + 1, n, v1);
                    }
                    jg_store_t(p, tl, m, n + 8, v2);
                    jg_store_t(p, tl, m + 1, n + 8, v3);
                }
            }
#if JG_D_DTYPE != 3
            jg_epi_store_matrices_t(buf, w, l, q);
#endif
            jg_fence_proxy_async_smem(); /* our stores, then TMA's reads */
            jg_named_barrier(bar_id, 128);
            if (leader) { /* one bulk group per round, empty where nothing went out */
                if (slab < JG_N_TMA)
                    jg_tma_store_2d(tl.d, buf, slab, m0 + round * JG_SW_EPI_ROWS);
                jg_bulk_commit();
            }
        }
    }
}
#endif

#if JG_SCALE == 2
/* Row-wise scales: each total times a_scale[row] * b_scale[col] (rows and
 * columns past the matrix are never stored; their scales are not read).
 * When a tile starts, its consumer warpgroup copies the scales of its rows
 * and of the tile's columns into shared memory (cp.async: no registers
 * held across the mainloop); at the tile's end each thread reads its own.
 * Read from global memory at the end, they cost every tile a round trip.
 * The fragment layout is the epilogue's: lane l of warp w holds rows
 * 16w + l/4 and 8 below, columns 8j + 2(l%4) + {0, 1}. */
#define JG_RS_FLOATS (JG_WG_M + JG_MMA_N) /* per consumer: its rows, the tile's columns */
#define JG_RS_BYTES ((JG_RS_FLOATS * 4 + 15) / 16 * 16)

JG_DEV void jg_fetch_row_scales(const jg_tile &tl, int32_t row0, int32_t col0, uint32_t rs)
{
    for (uint32_t i = threadIdx.x % 128; i < JG_RS_FLOATS; i += 128) {
        const int32_t row = row0 + (int32_t)i, col = col0 + (int32_t)i - JG_WG_M;
        const bool is_a = i < JG_WG_M;
        const bool in = is_a ? row < tl.m : col < tl.n;
        const float *src = is_a ? tl.sa + (in ? row : 0) : tl.sb + (in ? col : 0);
        jg_cp_async_4(rs + 4 * i, src, in ? 4u : 0u);
    }
    jg_cp_async_commit();
}

/* bar_id: the consumer warpgroup's named barrier (its copies, then its reads). */
JG_DEV void jg_scale_rows(uint32_t rs, uint32_t bar_id, float (&sum)[JG_WG_MMAS][JG_MMA_N / 2])
{
    const uint32_t w = jg_warp_id() % 4, l = jg_lane_id();
    jg_cp_async_wait_all();
    jg_named_barrier(bar_id, 128);
#pragma unroll
    for (int mi = 0; mi < JG_WG_MMAS; ++mi) {
        const uint32_t row = (uint32_t)mi * 64 + jg_frag_row();
        const float sa0 = jg_ld_shared_f32(rs + 4 * row);
        const float sa1 = jg_ld_shared_f32(rs + 4 * (row + 8));
#pragma unroll
        for (int j = 0; j < JG_MMA_N / 8; ++j) {
            const float2 sb = jg_ld_shared_v2_f32(rs + 4 * (JG_WG_M + j * 8 + (l % 4) * 2));
            sum[mi][4 * j + 0] *= sa0 * sb.x;
            sum[mi][4 * j + 1] *= sa0 * sb.y;
            sum[mi][4 * j + 2] *= sa1 * sb.x;
            sum[mi][4 * j + 3] *= sa1 * sb.y;
        }
    }
}
#else
#define JG_RS_BYTES 0
#endif

#if JG_PINGPONG
/* Named barriers 4 and 5: consumer c may start its next mainloop once the
 * other's is done (arrive there, sync here: 256 threads). Taking turns
 * keeps each consumer's waits on the stage ring at most one phase ahead of
 * the stages it has seen filled, which parity waits need. */
#define JG_PING_BAR(c) (4 + (c))

/* Moves a consumer's place in the stage ring past the other consumer's
 * tile (its JG_K_TILES stages). */
JG_DEV void jg_ring_skip(uint32_t &stage, uint32_t &phase)
{
    const uint32_t next = stage + JG_K_TILES % (2 * JG_STAGES);
    phase ^= (next / JG_STAGES) & 1;
    stage = next % JG_STAGES;
}
#endif

/* Registers per thread after setmaxnreg: the producer warpgroup gives up
 * what the consumers take, within the 168 x (threads) the CTA starts with.
 * A split-K producer offsets K by its CTA's share and needs a few more (at
 * 40, ptxas spilled one 64-bit value in its loop); a soft producer more
 * (its boxes' copies and shifts unrolled, two rows' chunks loaded at once
 * in each lane: at 56, ptxas spilled a few values of its stage loop), so
 * that two consumers keep 216 each (tiles at most SM90_SOFT_MAX_BLOCK_N
 * wide). One consumer leaves room for both. */
#if JG_CONSUMERS == 3 && JG_SOFT_LOADS /* 192-row tiles: 512 threads start at 128 each */
#define JG_PRODUCER_REGS 72
#define JG_CONSUMER_REGS 144
#elif JG_CONSUMERS == 3
#define JG_PRODUCER_REGS 40
#define JG_CONSUMER_REGS 152
#elif JG_SOFT_LOADS && JG_CONSUMERS == 2
#define JG_PRODUCER_REGS 72
#define JG_CONSUMER_REGS 216
#elif JG_SOFT_LOADS /* one consumer leaves room for both */
#define JG_PRODUCER_REGS 80
#define JG_CONSUMER_REGS 256
#elif JG_SPLIT_K > 1
#define JG_PRODUCER_REGS 56
#define JG_CONSUMER_REGS 224
#elif JG_SOFT_PARAM && JG_CONSUMERS == 1 /* one consumer leaves room for both */
#define JG_PRODUCER_REGS 56
#define JG_CONSUMER_REGS 256
#elif JG_N_STACK > 1 && JG_CONSUMERS == 1 /* at 40, a 2x2 cluster's producer spilled */
#define JG_PRODUCER_REGS 56
#define JG_CONSUMER_REGS 256
#else
#define JG_PRODUCER_REGS 40
#define JG_CONSUMER_REGS 232
#endif
/* the registers a thread starts with: 168 for up to 384 threads, 128 for 512 */
#define JG_START_REGS (JG_THREADS > 384 ? 65536 / JG_THREADS : 168)
static_assert(128 * (JG_PRODUCER_REGS + JG_CONSUMERS * JG_CONSUMER_REGS) <=
                  JG_START_REGS * 128 * (JG_CONSUMERS + 1),
              "setmaxnreg: the warpgroups' registers fit the CTA's");

/* Arrivals that free a stage: each consumer warp of every CTA of the
 * cluster that writes into it (the CTAs of its column and of its row of
 * tiles), once its wgmmas have read the stage. NVFP4's consumers read the
 * staged codes and scales with their own loads: each thread arrives after
 * its last (a warp's lane 0 after a barrier would do for the hardware, but
 * compute-sanitizer's racecheck follows only a thread's own arrival to the
 * producer's next bulk copy of the scales, and reports the rest). */
#if JG_NVFP4
#define JG_EMPTY_ARRIVALS (JG_CONSUMERS * 128)
#else
#define JG_EMPTY_ARRIVALS ((JG_PINGPONG ? 1 : JG_CONSUMERS) * 4 * (JG_M_STACK + JG_N_STACK - 1))
#endif

/* Arrivals that fill a stage: the producer thread that announces its TMA
 * bytes; with soft loads also each producer thread once its copies of the
 * stage have landed (jg_soft_complete). */
#if JG_SOFT_LOADS
#define JG_FULL_ARRIVALS (1 + 128)
#else
#define JG_FULL_ARRIVALS 1
#endif

/* A consumer warp is done with a stage: every producer of the cluster may
 * refill it (each writes its part of B into every CTA of its column, of A
 * into every CTA of its row). */
JG_DEV void jg_release_stage(uint32_t bar)
{
#if JG_N_STACK > 1
    const uint32_t me = jg_cluster_rank();
#pragma unroll
    for (uint32_t r = 0; r < JG_CLUSTER; ++r)
        if (r % JG_M_STACK == me % JG_M_STACK || r / JG_M_STACK == me / JG_M_STACK)
            jg_mbar_arrive_remote(bar, r);
#elif JG_M_STACK > 1
#pragma unroll
    for (uint32_t r = 0; r < JG_M_STACK; ++r)
        jg_mbar_arrive_remote(bar, r);
#else
    jg_mbar_arrive(bar);
#endif
}

/* Descriptors of the operands' tiles and each step's bytes into them: a
 * K-major step is 32 bytes further along K inside its atom (the next atom
 * a tile's rows further on); an MN-major one JG_MMA_K rows of K further
 * (its slab of A, or B's 64-column blocks, a box apart: the leading byte
 * offset). */
#if JG_A_MN
#define JG_A_DESC(tile) jg_wgmma_desc_mn_sw128(tile, JG_BLOCK_K * 128)
#define JG_A_STEP(kk, mi) ((mi) * JG_BLOCK_K * 128 + (kk) * JG_MMA_K * 128)
#define JG_A_WG_BYTES(c) (JG_CONSUMER_ROW0(c) / 64 * JG_BLOCK_K * 128) /* consumer c's slabs */
#else
#define JG_A_DESC(tile) jg_wgmma_desc_sw128(tile)
#define JG_A_STEP(kk, mi) (((kk) / 4) * JG_BLOCK_M * 128 + (mi) * 64 * 128 + ((kk) % 4) * 32)
#define JG_A_WG_BYTES(c) (JG_CONSUMER_ROW0(c) * 128)
#endif
#if JG_B_MN
#define JG_B_DESC(tile) jg_wgmma_desc_mn_sw128(tile, JG_BLOCK_K * 128)
#define JG_B_STEP(kk) ((kk) * JG_MMA_K * 128)
#else
#define JG_B_DESC(tile) jg_wgmma_desc_sw128(tile)
#define JG_B_STEP(kk) (((kk) / 4) * JG_BLOCK_N * 128 + ((kk) % 4) * 32)
#endif

/* One stage's wgmmas for this warpgroup's slabs: BLOCK_K / MMA_K steps
 * (JG_A_STEP, JG_B_STEP). The first overwrites acc unless `accumulate`. */
JG_DEV void jg_stage_mmas(float (&acc)[JG_WG_MMAS][JG_MMA_N / 2], uint32_t a_tile, uint32_t b_tile,
                          bool accumulate)
{
    const uint64_t da0 = JG_A_DESC(a_tile), db0 = JG_B_DESC(b_tile);
    jg_wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < JG_BLOCK_K / JG_MMA_K; ++kk) {
        const uint64_t db = jg_wgmma_desc_add(db0, JG_B_STEP(kk));
#pragma unroll
        for (int mi = 0; mi < JG_WG_MMAS; ++mi) {
            const uint64_t da = jg_wgmma_desc_add(da0, JG_A_STEP(kk, mi));
            jg_wgmma_ss(acc[mi], da, db, (accumulate || kk > 0) ? 1u : 0u);
        }
    }
    jg_wgmma_commit();
}

#if JG_PROMOTE
/* Stages per chunk of overlapped promotions (the planner's promote_chunk,
 * at most K's stages): a chunk is unrolled, its A block scales staged at once. */
#ifndef JG_CHUNK_STAGES
#define JG_CHUNK_STAGES (JG_PROMOTE_PIPE < JG_K_TILES ? JG_PROMOTE_PIPE : JG_K_TILES)
#endif
#ifndef JG_CHUNK_TAIL /* stages of the last, shorter chunk (0: none) */
#define JG_CHUNK_TAIL (JG_K_TILES % JG_CHUNK_STAGES)
#endif

template <int N> struct jg_int {
    static constexpr int value = N;
};

/* A K block's scales (block scales staged in shared memory, JG_KS_SMEM):
 * the tile's B block's, a plain global load issued stages ahead, and A's
 * for the thread's two rows per slab, read from shared memory when the
 * stage is issued. Block scales from global memory come by pairs of stages
 * instead (jg_kpair, JG_KS_PAIRS); empty there and without block scales. */
struct jg_kscales {
#if JG_SCALE == 3 && JG_KS_SMEM
    float a[JG_WG_MMAS][2];
    float b;
#endif
};

/* Where this CTA's stage kt is in the block scales (rows of JG_K_TILES_ALL):
 * split-K's last CTA runs stages past K, whose loads are zeros; they take
 * the last block's scales. */
JG_DEV int jg_kblock(const jg_tile &tl, int kt)
{
#if JG_SPLIT_K > 1
    return min(tl.k0 + kt, JG_K_TILES_ALL - 1);
#else
    (void)tl;
    return kt;
#endif
}

JG_DEV void jg_load_kscales(const jg_tile &tl, uint32_t c, int kt, jg_kscales &ks)
{
#if JG_SCALE == 3 && JG_KS_SMEM
    ks.b = tl.sb[(int64_t)(tl.tn * JG_BLOCK_N / 128) * JG_K_TILES_ALL + jg_kblock(tl, kt)];
    (void)c;
#else /* block scales read from global memory: by pairs of stages (JG_KS_PAIRS) */
    (void)tl, (void)c, (void)kt, (void)ks;
#endif
}

#define JG_KS_PAIRS (JG_SCALE == 3 && !JG_KS_SMEM)
#if JG_KS_PAIRS
/* Block scales from global memory, by pairs of stages (k, k + 1): a pair's
 * loads (the thread's rows of A, B's) are issued right after the pair
 * before has been turned into products, and are themselves turned into
 * products two stages later, when their first stage is promoted. Loads
 * into registers all take one scoreboard, so the first use of any load
 * waits for every load issued before it: issued a stage ahead, as single
 * stages, each promotion waited for the loads of the stage after next
 * (H100, 2026-11-22: 9% of the block kernel's stall samples). */
struct jg_kpair {
    float a[2][JG_WG_MMAS][2];
    float b[2];
};

/* Loads stages k and k + 1 (clamped to K's last) of the pair; `dep` (always
 * 0) ties the loads' addresses to the products made just before them, so
 * that they are issued after those (which wait for the loads before). */
JG_DEV void jg_load_kpair(const jg_tile &tl, uint32_t c, int k, int dep, jg_kpair &r)
{
    const int32_t row0 = (int32_t)(tl.tm * JG_BLOCK_M + JG_CONSUMER_ROW0(c) + jg_frag_row());
#pragma unroll
    for (int q = 0; q < 2; ++q) {
        const int kk = jg_kblock(tl, k + q + dep < JG_K_TILES ? k + q + dep : JG_K_TILES - 1);
        r.b[q] = tl.sb[(int64_t)(tl.tn * JG_BLOCK_N / 128) * JG_K_TILES_ALL + kk];
#pragma unroll
        for (int mi = 0; mi < JG_WG_MMAS; ++mi)
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int32_t row = row0 + mi * 64 + h * 8;
                r.a[q][mi][h] = row < tl.m ? tl.sa[(int64_t)row * JG_K_TILES_ALL + kk] : 0.0f;
            }
    }
}

/* A pair's products: the scale of each of the thread's rows, per stage. */
JG_DEV void jg_kpair_products(const jg_kpair &r, float (&s)[2][JG_WG_MMAS][2])
{
#pragma unroll
    for (int q = 0; q < 2; ++q)
#pragma unroll
        for (int mi = 0; mi < JG_WG_MMAS; ++mi)
#pragma unroll
            for (int h = 0; h < 2; ++h)
                s[q][mi][h] = r.a[q][mi][h] * r.b[q];
}

/* 0, but not to the compiler (a NaN test of a product). */
JG_DEV int jg_kpair_dep(const float (&s)[2][JG_WG_MMAS][2])
{
    return s[1][0][1] != s[1][0][1];
}

/* Pairs run within a chunk of stages: its 0th and 1st, 2nd and 3rd, ...
 * Stage kt - 1, the running chunk's (i - 1)-th, is about to be promoted
 * (stage kt in flight): where it opens a pair, the pair's products and the
 * loads of the next pair (from kt + 1). Returns the row of prod that holds
 * stage kt - 1's. */
JG_DEV int jg_kpair_step(const jg_tile &tl, uint32_t c, int kt, int i, jg_kpair &raw,
                         float (&prod)[2][JG_WG_MMAS][2])
{
    if ((i - 1) % 2 == 0) {
        jg_kpair_products(raw, prod);
        jg_load_kpair(tl, c, kt + 1, jg_kpair_dep(prod), raw);
    }
    return (i - 1) % 2;
}

/* The chunk's last stage, k0 + n - 1, promoted once the chunk drains:
 * where it opens a pair (n odd), the pair's products, and where K goes
 * on, the loads of the next chunk's first pair (from k0 + n). That pair
 * was loaded as this one's second stage, so the next chunk, whose pairs
 * start at its own first stage, would otherwise promote its first two
 * stages with the scales of the two before them (H100 any_fuzz: e4m3
 * block scales, K = 2657, 21 stages in chunks of 7). Returns the row of
 * prod that holds stage k0 + n - 1's. */
JG_DEV int jg_kpair_chunk_end(const jg_tile &tl, uint32_t c, int k0, int n, jg_kpair &raw,
                              float (&prod)[2][JG_WG_MMAS][2])
{
    if ((n - 1) % 2 == 0) {
        jg_kpair_products(raw, prod);
        if (k0 + n < JG_K_TILES)
            jg_load_kpair(tl, c, k0 + n, jg_kpair_dep(prod), raw);
    }
    return (n - 1) % 2;
}
#endif

/* Staged A scales of the thread's rows from a stage's row of the shared
 * buffer (at). */
JG_DEV void jg_load_ascales(uint32_t at, jg_kscales &ks)
{
#if JG_SCALE == 3 && JG_KS_SMEM
#pragma unroll
    for (int mi = 0; mi < JG_WG_MMAS; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            ks.a[mi][h] = jg_ld_shared_f32(at + 4 * (mi * 64 + jg_frag_row() + 8 * h));
#else
    (void)at, (void)ks;
#endif
}

#if JG_SCALE == 3 && JG_KS_SMEM
/* Staged A block scales (a_scale[row][K block]): each consumer warpgroup
 * copies its rows' scales of a chunk of stages with cp.async while the
 * chunk before runs, [stage][row] in one of two buffers. The planner
 * stages them where that costs no stage (plan_sm90.c): two strided
 * global loads per thread and stage made decode tiles 4-12% slower. */
#define JG_KS_BUF_BYTES (JG_CHUNK_STAGES * JG_WG_M * 4)
#define JG_KS_BYTES (2 * JG_KS_BUF_BYTES) /* per consumer */

/* Stages k0 .. k0 + N - 1 of this warpgroup's rows into buf: consecutive
 * threads along a row's K blocks (contiguous in a_scale). Rows past the
 * matrix read nothing and hold 0. */
template <int N>
JG_DEV void jg_fetch_ascales_n(const jg_tile &tl, uint32_t c, int k0, uint32_t buf)
{
    const int32_t row0 = (int32_t)(tl.tm * JG_BLOCK_M + JG_CONSUMER_ROW0(c));
#pragma unroll
    for (int i0 = 0; i0 < JG_WG_M * N; i0 += 128) {
        const int i = i0 + (int)(threadIdx.x % 128), r = i / N, s = i % N;
        if (JG_WG_M * N % 128 && i >= JG_WG_M * N)
            break;
        const bool in = row0 + r < tl.m;
        const float *src =
            tl.sa + (in ? (int64_t)(row0 + r) * JG_K_TILES_ALL + jg_kblock(tl, k0 + s) : 0);
        jg_cp_async_4(buf + 4u * (uint32_t)(s * JG_WG_M + r), src, in ? 4u : 0u);
    }
    jg_cp_async_commit();
}

/* The chunk of stages from k0: JG_CHUNK_STAGES of them, or K's last ones. */
JG_DEV void jg_fetch_ascales(const jg_tile &tl, uint32_t c, int k0, uint32_t buf)
{
    constexpr int tail = JG_CHUNK_TAIL ? JG_CHUNK_TAIL : JG_CHUNK_STAGES;
    if (tail == JG_CHUNK_STAGES || k0 + JG_CHUNK_STAGES <= JG_K_TILES)
        jg_fetch_ascales_n<JG_CHUNK_STAGES>(tl, c, k0, buf);
    else
        jg_fetch_ascales_n<tail>(tl, c, k0, buf);
}
#endif

/* A stage's partial sums join the FP32 totals times the scales of the
 * thread's two rows per slab. */
JG_DEV void jg_promote_rows(float (&sum)[JG_WG_MMAS][JG_MMA_N / 2],
                            const float (&part)[JG_WG_MMAS][JG_MMA_N / 2],
                            const float (&s)[JG_WG_MMAS][2])
{
#pragma unroll
    for (int mi = 0; mi < JG_WG_MMAS; ++mi)
#pragma unroll
        for (int j = 0; j < JG_MMA_N / 2; ++j) /* entries 4q, 4q+1: row 1; 4q+2, 4q+3: row 2 */
            sum[mi][j] += part[mi][j] * s[mi][(j >> 1) & 1];
}

#if !JG_KS_PAIRS /* pairs promote through jg_promote_rows with their products */
/* A stage's partial sums join the FP32 totals: times the stage's scales
 * (block scales: A's of the thread's rows and B's), or as they are. */
JG_DEV void jg_promote(float (&sum)[JG_WG_MMAS][JG_MMA_N / 2],
                       const float (&part)[JG_WG_MMAS][JG_MMA_N / 2], const jg_kscales &ks)
{
#if JG_SCALE == 3
    float s[JG_WG_MMAS][2];
#pragma unroll
    for (int mi = 0; mi < JG_WG_MMAS; ++mi)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            s[mi][h] = ks.a[mi][h] * ks.b;
    jg_promote_rows(sum, part, s);
#else
    (void)ks;
#pragma unroll
    for (int mi = 0; mi < JG_WG_MMAS; ++mi)
#pragma unroll
        for (int j = 0; j < JG_MMA_N / 2; ++j)
            sum[mi][j] += part[mi][j];
#endif
}
#endif
#endif

#if JG_SOFT_LOADS
/* Stages a producer thread keeps in flight before it completes the oldest
 * (waits for its copies, shifts, arrives): at most the ring's less two.
 * A consumer frees a stage only once the next one is full (it keeps one
 * stage's wgmmas in flight), so when the producer waits to refill stage
 * i - JG_STAGES, stage i - JG_STAGES + 1 must have been completed (with
 * the ring less one, rings of up to 8 stages deadlocked once K's stages
 * outran them). */
#define JG_SOFT_LAG (JG_STAGES - 2 < 7 ? JG_STAGES - 2 : 7)
static_assert(JG_STAGES >= 2, "soft loads: a ring of two stages at least");

/* The producer warpgroup with soft loads: every thread walks the stages;
 * thread 0 announces the stage's TMA bytes (those of the operands this
 * launch moves by TMA, if any) and issues their boxes, every thread its
 * share of the soft boxes, one cp.async group per stage; each stage is
 * completed JG_SOFT_LAG stages later, the last ones at the end. The state
 * is kept small (40 registers a thread): one count of the stages issued,
 * the other shared-memory addresses fixed offsets from smem_a and
 * bar_full (the kernel's layout). */
JG_DEV void jg_produce_soft(const jg_kargs_t &p, uint32_t smem_a, uint32_t bar_full,
                            uint32_t tiles, uint32_t tiles_m, uint32_t rank)
{
    const uint32_t smem_b = smem_a + JG_STAGES * JG_A_STAGE_BYTES;
    const uint32_t bar_empty = bar_full + JG_STAGES * 8, side = bar_empty + JG_STAGES * 8;
    const bool a_tma = !JG_A_SOFT || p.soft.a_mode == JG_SOFT_TMA;
    const bool b_tma = !JG_B_SOFT || p.soft.b_mode == JG_SOFT_TMA;
    uint32_t issued = 0;
    for (uint32_t t = blockIdx.x / JG_CLUSTER; t < tiles; t += gridDim.x / JG_CLUSTER) {
        const jg_tile tl = jg_cta_tile(p, t, tiles_m, rank);
        for (int kt = 0; kt < JG_K_TILES; ++kt, ++issued) {
            const uint32_t stage = issued % JG_STAGES;
            jg_mbar_wait(bar_empty + 8 * stage, ((issued / JG_STAGES) & 1) ^ 1);
            if (threadIdx.x == 0) {
                jg_mbar_arrive_expect_tx(bar_full + 8 * stage, (a_tma ? JG_A_TX_BYTES : 0u) +
                                                                   (b_tma ? JG_B_TX_BYTES : 0u));
                jg_stage_tma(tl, kt, smem_a, smem_b, stage, bar_full + 8 * stage, rank, a_tma,
                             b_tma);
            }
            jg_stage_soft(p, tl, kt, smem_a + stage * JG_A_STAGE_BYTES,
                          smem_b + stage * JG_B_STAGE_BYTES, side + stage * JG_SIDE_BYTES);
            jg_cp_async_commit();
            if (issued >= JG_SOFT_LAG) {
                jg_cp_async_wait_group<JG_SOFT_LAG>();
                jg_soft_complete(p, (issued - JG_SOFT_LAG) % JG_STAGES, smem_a, smem_b, side,
                                 bar_full);
            }
        }
    }
    jg_cp_async_wait_group<0>();
    for (uint32_t i = issued > JG_SOFT_LAG ? issued - JG_SOFT_LAG : 0; i < issued; ++i)
        jg_soft_complete(p, i % JG_STAGES, smem_a, smem_b, side, bar_full);
#if JG_PDL
    if (threadIdx.x == 0)
        jg_pdl_launch_dependents();
#endif
}
#endif

extern "C" __global__ void __launch_bounds__(JG_THREADS, 1)
JG_KERNEL_NAME(const __grid_constant__ jg_kargs_t p)
{
    const uint32_t smem_a = jg_smem_tiles();
#if JG_NVFP4 /* smem_a: the staged stages; smem_b: the FP16 buffers */
    const uint32_t smem_b = smem_a + JG_STAGES * JG_FP4_STAGE_BYTES;
    const uint32_t smem_epi = smem_b + JG_FP4_BUFS * JG_FP4_BUF_BYTES;
#else
    const uint32_t smem_b = smem_a + JG_STAGES * JG_A_STAGE_BYTES;
    /* JG_EPI_NBUF staging buffers per consumer */
    const uint32_t smem_epi = smem_b + JG_STAGES * JG_B_STAGE_BYTES;
#endif
    /* row-wise scales of each consumer's tile (JG_SCALE 2), then the mbarriers */
    const uint32_t smem_rs = smem_epi + JG_CONSUMERS * JG_EPI_NBUF * JG_EPI_BUF_BYTES;
#ifndef JG_KS_BYTES /* A's block scales not staged */
#define JG_KS_BYTES 0
#endif
    /* FP8 block scales: each consumer's two buffers of A's scales (JG_KS_BYTES) */
    const uint32_t smem_ks = smem_rs + JG_CONSUMERS * JG_RS_BYTES;
    const uint32_t bar_full = smem_ks + JG_CONSUMERS * JG_KS_BYTES;
    const uint32_t bar_empty = bar_full + JG_STAGES * 8;
#if JG_SOFT_LOADS /* the side slots after the barriers take 16-byte copies */
    static_assert((JG_STAGES * (JG_A_STAGE_BYTES + JG_B_STAGE_BYTES) +
                   JG_CONSUMERS * (JG_EPI_NBUF * JG_EPI_BUF_BYTES + JG_RS_BYTES + JG_KS_BYTES)) %
                          16 ==
                      0,
                  "soft loads' side slots 16-byte aligned");
#endif

#if JG_LAYOUT == 1
    const uint32_t tiles_m = 0; /* per group, from jg_tile_at */
    const uint32_t tiles = jg_total_tiles();
#elif JG_DEVICE_ROWS
    const uint32_t tiles_m = 0; /* per group, from jg_tile_at */
    jg_group_table(p);
#else
#if JG_M_BAKED
    const int32_t m = JG_M;
#else
    const int32_t m = p.m;
#endif
    const uint32_t tiles_m = ((uint32_t)m + JG_UNIT_M - 1) / JG_UNIT_M; /* units */
    /* units (split-K through the workspace: JG_SPLIT_WS a tile) */
    const uint32_t tiles =
        JG_SPLIT_WS * tiles_m * (((uint32_t)JG_COLS(p) + JG_UNIT_N - 1) / JG_UNIT_N);
#endif
    /* warp-uniform to the compiler (a shuffle from lane 0): values made from
     * it, such as the wgmma descriptors, go to uniform registers. Not under
     * the LLVM backend, nor with block scales: there ptxas then kept
     * registers of a grouped FP8 row-scale kernel (test_llvm), and of a
     * grouped block-scale one with C and FP32 D (test_sass), in local
     * memory. */
#if JG_LLVM_BACKEND || JG_SCALE == 3
    const uint32_t wg = threadIdx.x / 128;
#else
    const uint32_t wg = __shfl_sync(0xffffffffu, threadIdx.x / 128, 0);
#endif
#if JG_CLUSTER > 1
    const uint32_t rank = jg_cluster_rank();
#else
    const uint32_t rank = 0;
#endif
#if JG_STREAM_K /* this CTA's consecutive units */
    const uint32_t first_unit = jg_sk_begin(blockIdx.x, tiles), unit_step = 1;
#define JG_UNIT_NEXT(t) ((t) + 1)
#elif JG_SK_DP /* its data-parallel tiles' runs, then every G-th split unit */
    const uint32_t dp_units = jg_dp_tiles(tiles / JG_SPLIT_WS) * JG_SPLIT_WS;
    const uint32_t first_unit = dp_units ? blockIdx.x * JG_SPLIT_WS : blockIdx.x,
                   unit_step = gridDim.x;
#define JG_UNIT_NEXT(t) jg_dp_unit_next((t), dp_units)
#else /* every unit_step-th unit */
    const uint32_t first_unit = blockIdx.x / JG_CLUSTER, unit_step = gridDim.x / JG_CLUSTER;
#define JG_UNIT_NEXT(t) ((t) + unit_step)
#endif

    if (threadIdx.x == 0) {
#if JG_LAYOUT != 1 && JG_SOFT_PARAM /* the maps of operands this launch moves by TMA */
        if (!JG_A_SOFT || p.soft.a_mode == JG_SOFT_TMA)
            jg_tma_prefetch_desc(&p.a);
        if (!JG_B_SOFT || p.soft.b_mode == JG_SOFT_TMA)
            jg_tma_prefetch_desc(&p.b);
        if (!JG_D_SOFT || p.soft.d_piece == 0)
            jg_tma_prefetch_desc(&p.d);
#elif JG_LAYOUT != 1
        jg_tma_prefetch_desc(&p.a);
        jg_tma_prefetch_desc(&p.b);
        jg_tma_prefetch_desc(&p.d);
#endif
#if JG_NVFP4 && JG_LAYOUT != 1
        if (JG_A_SF_LAYOUT == 1)
            jg_tma_prefetch_desc(&p.a_sf);
        if (JG_B_SF_LAYOUT == 1)
            jg_tma_prefetch_desc(&p.b_sf);
#endif
        /* Each consumer warp of every CTA of the cluster releases a stage:
         * the cluster's producers all write into it. */
        for (int s = 0; s < JG_STAGES; ++s) {
            jg_mbar_init(bar_full + 8 * s, JG_FULL_ARRIVALS);
            jg_mbar_init(bar_empty + 8 * s, JG_EMPTY_ARRIVALS);
        }
        jg_mbar_init_fence();
    }
#if JG_LAYOUT == 1
    /* The groups' tensor maps live in the parameter block: fetch them into
     * the descriptor cache while the barriers are set up. */
    if (threadIdx.x < 32) {
#pragma unroll /* constant g: the baked rows stay immediates, not a local array */
        for (int g = 0; g < JG_GROUPS; ++g)
            if (jg_group_tiles_m(g) && g % 32 == (int)threadIdx.x) {
#if JG_SOFT_PARAM
                if (!JG_A_SOFT || p.soft.a_mode == JG_SOFT_TMA)
                    jg_tma_prefetch_desc(&p.a[g]);
                if (!JG_B_SOFT || p.soft.b_mode == JG_SOFT_TMA)
                    jg_tma_prefetch_desc(&p.b[g]);
                if (!JG_D_SOFT || p.soft.d_piece == 0)
                    jg_tma_prefetch_desc(&p.d[g]);
#else
                jg_tma_prefetch_desc(&p.a[g]);
                jg_tma_prefetch_desc(&p.b[g]);
                jg_tma_prefetch_desc(&p.d[g]);
#endif
#if JG_NVFP4
                if (JG_A_SF_LAYOUT == 1)
                    jg_tma_prefetch_desc(&p.a_sf[g]);
                if (JG_B_SF_LAYOUT == 1)
                    jg_tma_prefetch_desc(&p.b_sf[g]);
#endif
            }
    }
#endif
#if JG_CLUSTER > 1
    jg_cluster_sync(); /* the peer's barriers exist before anything reaches them */
#else
    __syncthreads();
#endif
#if JG_DEVICE_ROWS
    const uint32_t tiles = jg_gtile[JG_GROUPS];
#endif
#if JG_STREAM_K
    const uint32_t unit_end = jg_sk_begin(blockIdx.x + JG_SK_NEXT, tiles);
#else
    const uint32_t unit_end = tiles;
#endif
    (void)unit_end;
#if JG_PDL
    /* A programmatic dependent (JG_GEMM_PDL, dense only): the set-up above
     * overlapped the previous kernel's end; nothing global is touched before
     * that kernel has completed. The producer lets the stream's next
     * dependent launch once it has issued its last load (that one waits in
     * turn before it touches our D). Measured on H200 chains of decode
     * GEMMs (bench/RESULTS.md): a trigger at the start was 1-3% slower, and
     * B's first stages loaded before the wait (B constant) 3-10% slower:
     * those loads take bandwidth from the previous kernel's last CTAs,
     * which the wait is for. */
    static_assert(JG_LAYOUT == 0, "programmatic dependent launch: dense kernels only");
    jg_pdl_wait();
#endif

    if (wg == 0) {
        /* Producer: warp 0 keeps the ring full, running ahead across tiles,
         * one lane (elect.sync) issuing each stage's loads (with soft loads,
         * the whole warpgroup). Issued from `threadIdx.x
         * == 0` alone, ptxas wrapped every TMA load in a loop over the
         * active lanes, and a stage of a narrow decode tile took longer to
         * issue than to arrive: on an H200, 21x1536x11008 (64x16 tiles) ran
         * 19.7 us against 16.7 with the elected lane, M-generic decode plans
         * 27.7-28.2 against 19.4-20.6 (ncu: the consumers waiting for
         * data, the one producer thread busy, not waiting for free stages;
         * bench/results/2026-11-29-h200-elect-producer). */
        jg_setmaxnreg_dec<JG_PRODUCER_REGS>();
#if JG_SOFT_LOADS
        jg_produce_soft(p, smem_a, bar_full, tiles, tiles_m, rank);
#else
        if (threadIdx.x < 32) {
            uint32_t stage = 0, phase = 0;
            for (uint32_t t = first_unit; t < unit_end; t = JG_UNIT_NEXT(t)) {
                const jg_tile tl = jg_cta_tile(p, t, tiles_m, rank);
#if JG_NVFP4
                for (int kt = 0; kt < JG_FP4_K_TILES; ++kt) {
                    jg_mbar_wait(bar_empty + 8 * stage, phase ^ 1);
                    if (jg_elect_one())
                        jg_fp4_load_stage(tl, smem_a + stage * JG_FP4_STAGE_BYTES, kt,
                                          bar_full + 8 * stage);
                    __syncwarp();
#else
                const uint32_t a_boxes = jg_a_boxes(tl);
                for (int kt = 0; kt < JG_K_TILES; ++kt) {
                    jg_mbar_wait(bar_empty + 8 * stage, phase ^ 1);
                    const uint32_t full = bar_full + 8 * stage;
                    if (jg_elect_one()) {
                        jg_mbar_arrive_expect_tx(full, jg_stage_tx_bytes(a_boxes));
                        jg_stage_tma(tl, kt, smem_a, smem_b, stage, full, rank, true, true,
                                     a_boxes);
                    }
                    __syncwarp();
#endif
                    if (++stage == JG_STAGES) {
                        stage = 0;
                        phase ^= 1;
                    }
                }
            }
#if JG_PDL
            jg_pdl_launch_dependents();
#endif
        }
#endif
#if JG_SPLIT_K > 1
        /* the consumers' cluster barrier between jg_split_publish and
         * jg_split_gather, once per tile */
        __syncwarp();
        for (uint32_t t = first_unit; t < tiles; t += unit_step)
            jg_cluster_sync();
#endif
    } else {
        /* Consumers: warpgroup c owns rows [c*JG_WG_M, (c+1)*JG_WG_M) of each tile. */
        jg_setmaxnreg_inc<JG_CONSUMER_REGS>();
        const uint32_t c = wg - 1;
        float acc[JG_WG_MMAS][JG_MMA_N / 2];
#if JG_PROMOTE
        float sum[JG_WG_MMAS][JG_MMA_N / 2]; /* FP32 totals of the stages' partial sums */
        float acc2[JG_WG_MMAS][JG_MMA_N / 2]; /* partial sums of every other stage */
#else
        float (&sum)[JG_WG_MMAS][JG_MMA_N / 2] = acc;
#endif
        uint32_t stage = 0, phase = 0, chunk = 0;
#if JG_SCALE == 3 && JG_KS_SMEM
        uint32_t kchunk = 0; /* chunks of stages run, across tiles: A scales' buffer */
#endif
#if JG_NVFP4
        uint32_t fp4_buf = 0; /* the BF16 buffer the next piece goes to */
#endif
#if JG_PINGPONG
        if (c == 1) /* the CTA's first tile is consumer 0's */
            jg_ring_skip(stage, phase);
        for (uint32_t t = first_unit + c * unit_step; t < tiles; t += 2 * unit_step) {
            const jg_tile tl = jg_cta_tile(p, t, tiles_m, rank);
            if (t != first_unit) /* the other consumer's mainloop before this one is done */
                jg_named_barrier(JG_PING_BAR(c), 256);
#else
        for (uint32_t t = first_unit; t < unit_end; t = JG_UNIT_NEXT(t)) {
            const jg_tile tl = jg_cta_tile(p, t, tiles_m, rank);
#endif
#if JG_NVFP4
            /* the global scales, and 2^14 (the expanded values' 2^-7 twice) */
            const float scale = *tl.sa * *tl.sb * 16384.0f;
#elif JG_SCALE == 1
            const float scale = *tl.sa * *tl.sb; /* the tile's matrices' tensor scales */
#elif JG_SCALE == 2
            jg_fetch_row_scales(tl, (int32_t)(tl.tm * JG_BLOCK_M + JG_CONSUMER_ROW0(c)),
                                (int32_t)(tl.tn * JG_BLOCK_N), smem_rs + c * JG_RS_BYTES);
#endif
#if !JG_NVFP4 /* NVFP4: A from registers, B from the expanded buffers */
            const uint32_t a_wg = smem_a + JG_A_WG_BYTES(c), b_all = smem_b;
#endif
#if JG_STREAM_K || JG_SK_DP
            /* Stream-K: this CTA's run of units of the tile, from unit t,
             * one mainloop each, the sums going on from one to the next
             * (each unit's first wgmmas accumulate but the run's first); a
             * data-parallel tile's run is the whole tile, a split unit
             * one */
#if JG_STREAM_K
            const uint32_t run_end = min(unit_end, (t / JG_SPLIT_WS + 1) * JG_SPLIT_WS);
#else
            const uint32_t run_end = t < dp_units ? (t / JG_SPLIT_WS + 1) * JG_SPLIT_WS : t + 1;
#endif
            for (uint32_t u = t; u < run_end; ++u) {
                const bool cont = u != t; /* the run's sums go on */
#else
            { /* the tile's one unit (clang-format: leave these braces) */
                const bool cont = false;
#endif
                (void)cont;
#if JG_PROMOTE
                /* Stage kt's wgmmas go into `cur` and stay in flight while the
                 * previous stage's (in `other`) are promoted and its buffers go
                 * back to the producer. Block scales: staged in shared memory a
                 * chunk ahead (JG_KS_SMEM; B's a global load when the stage two
                 * before is issued), or global loads by pairs of stages
                 * (JG_KS_PAIRS). */
                uint32_t prev_stage = 0;
                jg_kscales ks_next, ks_ready, ks_inflight;
                jg_load_kscales(tl, c, 0, ks_ready);
                jg_load_kscales(tl, c, JG_K_TILES > 1 ? 1 : 0, ks_next);
#if JG_KS_PAIRS
                jg_kpair kraw;                 /* the next pair's loads */
                float kprod[2][JG_WG_MMAS][2]; /* the running pair's products */
                jg_load_kpair(tl, c, 0, 0, kraw);
#endif
                /* the running chunk's buffer of A's block scales (0 otherwise) */
                uint32_t ks_buf = 0;
#if JG_SCALE == 3 && JG_KS_SMEM
                const uint32_t ks_bufs = smem_ks + c * JG_KS_BYTES;
                jg_fetch_ascales(tl, c, 0, ks_bufs + (kchunk % 2) * JG_KS_BUF_BYTES);
#endif
                /* issues stage kt, the running chunk's i-th */
                auto issue = [&](float(&cur)[JG_WG_MMAS][JG_MMA_N / 2], int kt, int i) {
                    jg_mbar_wait(bar_full + 8 * stage, phase);
                    jg_stage_mmas(cur, a_wg + stage * JG_A_STAGE_BYTES,
                                  b_all + stage * JG_B_STAGE_BYTES, false);
                    prev_stage = stage;
                    if (++stage == JG_STAGES) {
                        stage = 0;
                        phase ^= 1;
                    }
                    ks_inflight = ks_ready;
                    ks_ready = ks_next;
                    jg_load_kscales(tl, c, kt + 2 < JG_K_TILES ? kt + 2 : kt, ks_next);
                    jg_load_ascales(ks_buf + 4u * (uint32_t)(i * JG_WG_M), ks_inflight);
                };
                /* issues stage kt (the chunk's i-th), promotes the one before */
                auto step = [&](float(&cur)[JG_WG_MMAS][JG_MMA_N / 2],
                                float(&other)[JG_WG_MMAS][JG_MMA_N / 2], int kt, int i) {
                    const uint32_t other_stage = prev_stage;
                    const jg_kscales other_ks = ks_inflight;
                    issue(cur, kt, i);
                    jg_wgmma_wait<1>();
                    if (jg_lane_id() == 0)
                        jg_release_stage(bar_empty + 8 * other_stage);
#if JG_KS_PAIRS
                    (void)other_ks;
                    const int q = jg_kpair_step(tl, c, kt, i, kraw, kprod);
                    jg_promote_rows(sum, other, kprod[q]);
#else
                    jg_promote(sum, other, other_ks);
#endif
                };
                /* N stages from K block k0, nothing in flight before or after:
                 * ptxas keeps wgmmas asynchronous only across straight-line code,
                 * so each chunk is unrolled and drains at its end. */
                auto run_chunk = [&](int k0, auto n) {
                    constexpr int N = decltype(n)::value;
#if JG_SCALE == 3 && JG_KS_SMEM
                    /* This chunk's A scales (fetched a chunk ago) have landed for
                     * the whole warpgroup, whose reads of the other buffer (the
                     * chunk before) are done: fetch the next chunk into it once
                     * the first stage is in flight. */
                    jg_cp_async_wait_all();
                    jg_named_barrier(1 + c, 128);
                    ks_buf = ks_bufs + (kchunk % 2) * JG_KS_BUF_BYTES;
#endif
                    issue(acc, k0, 0);
#if JG_SCALE == 3 && JG_KS_SMEM
                    if (k0 + N < JG_K_TILES)
                        jg_fetch_ascales(tl, c, k0 + N,
                                         ks_bufs + ((kchunk + 1) % 2) * JG_KS_BUF_BYTES);
                    ++kchunk;
#endif
#pragma unroll
                    for (int i = 1; i < N; ++i) {
                        if (i % 2)
                            step(acc2, acc, k0 + i, i);
                        else
                            step(acc, acc2, k0 + i, i);
                    }
                    jg_wgmma_wait<0>();
                    if (jg_lane_id() == 0)
                        jg_release_stage(bar_empty + 8 * prev_stage);
#if JG_KS_PAIRS
                    const int q = jg_kpair_chunk_end(tl, c, k0, N, kraw, kprod);
                    jg_promote_rows(sum, (N - 1) % 2 ? acc2 : acc, kprod[q]);
#else
                    jg_promote(sum, (N - 1) % 2 ? acc2 : acc, ks_inflight);
#endif
                };
#pragma unroll
                for (int mi = 0; mi < JG_WG_MMAS; ++mi)
#pragma unroll
                    for (int j = 0; j < JG_MMA_N / 2; ++j)
                        sum[mi][j] = 0.0f;
                constexpr int chunk_len = JG_CHUNK_STAGES;
                for (int k0 = 0; k0 + chunk_len <= JG_K_TILES; k0 += chunk_len)
                    run_chunk(k0, jg_int<chunk_len>());
                if (JG_K_TILES % chunk_len)
                    run_chunk(JG_K_TILES / chunk_len * chunk_len,
                              jg_int < JG_CHUNK_TAIL ? JG_CHUNK_TAIL : 1 > ());
#elif JG_NVFP4
                /* Each piece: A's fragments of this warpgroup's rows (set j % 2,
                 * whose last wgmmas, two pieces back, the wait_group of the piece
                 * before retired), B expanded by all consumers into the next of
                 * three buffers, then the piece's wgmmas. A buffer is rewritten
                 * three pieces later: every consumer thread has passed the
                 * barrier of the piece before, which it reached after its
                 * warpgroup's wgmma_wait<1> had retired the rewritten piece's. */
                static_assert(JG_WG_M == 64 && JG_FP4_PIECES % 2 == 0,
                              "NVFP4: a warpgroup's 64 rows of A in registers, pieces in pairs");
                const jg_fp4_items items = jg_fp4_items_make(threadIdx.x - 128, tl.tn * JG_BLOCK_N);
                uint32_t frags[2][4][4];
                for (int kt = 0; kt < JG_FP4_K_TILES; ++kt) {
                    jg_mbar_wait(bar_full + 8 * stage, phase);
                    const uint32_t st = smem_a + stage * JG_FP4_STAGE_BYTES;
#pragma unroll
                    for (int j = 0; j < JG_FP4_PIECES; ++j) {
                        const uint32_t buf = smem_b + fp4_buf * JG_FP4_BUF_BYTES;
                        jg_fp4_frags<JG_A_SF_LAYOUT>(
                            st + c * 64 * 128, st + (JG_BLOCK_M + JG_BLOCK_N) * 128, c * 64,
                            tl.tm * JG_BLOCK_M, kt, (uint32_t)j, frags[j % 2]);
                        jg_fp4_expand(items, st, buf, kt, j, threadIdx.x - 128);
                        if (j == JG_FP4_PIECES - 1) /* staged bytes all read, by this thread */
                            jg_mbar_arrive(bar_empty + 8 * stage);
                        jg_fp4_publish();
                        jg_wgmma_fence();
#pragma unroll
                        for (int s = 0; s < 4; ++s)
                            jg_wgmma_rs(acc[0], frags[j % 2][s],
                                        jg_wgmma_desc_sw128(buf + (uint32_t)s * 32),
                                        (kt > 0 || j > 0 || s > 0) ? 1u : 0u);
                        jg_wgmma_commit();
                        jg_wgmma_wait<1>();
                        fp4_buf = fp4_buf + 1 == JG_FP4_BUFS ? 0 : fp4_buf + 1;
                    }
                    if (++stage == JG_STAGES) {
                        stage = 0;
                        phase ^= 1;
                    }
                }
                jg_wgmma_wait<0>();
#else
                uint32_t prev_stage = 0;
                for (int kt = 0; kt < JG_K_TILES; ++kt) {
                    jg_mbar_wait(bar_full + 8 * stage, phase);
                    jg_stage_mmas(acc, a_wg + stage * JG_A_STAGE_BYTES,
                                  b_all + stage * JG_B_STAGE_BYTES, kt > 0 || cont);
                    /* Keep this stage's wgmmas in flight; the previous stage is
                     * now read completely and goes back to the producer. */
                    jg_wgmma_wait<1>();
                    if (kt > 0 && jg_lane_id() == 0)
                        jg_release_stage(bar_empty + 8 * prev_stage);
                    prev_stage = stage;
                    if (++stage == JG_STAGES) {
                        stage = 0;
                        phase ^= 1;
                    }
                }
                jg_wgmma_wait<0>();
                if (jg_lane_id() == 0)
                    jg_release_stage(bar_empty + 8 * prev_stage);
#endif
            } /* the run's units (stream-K, data-parallel tiles), or the tile's one */
#if JG_STREAM_K || JG_SK_DP
            t = run_end - 1; /* the run's last unit */
#endif
#if JG_PINGPONG
            /* the other consumer's next tile (if any) may start its mainloop;
             * its stages come before this consumer's next ones */
            if (t + unit_step < tiles)
                jg_named_barrier_arrive(JG_PING_BAR(c ^ 1), 256);
            jg_ring_skip(stage, phase);
#endif
#if JG_SPLIT_K > 1
            /* every CTA's partials in its ring, published; then each sums its rounds */
            jg_split_publish(sum, smem_a, c);
            jg_cluster_sync();
            jg_split_gather(sum, smem_a, c, rank);
#endif
#if JG_STREAM_K
            if (!jg_stream_k(p, sum, t, first_unit, unit_end, tiles, c))
                continue; /* the tile's first run stores it */
#elif JG_SPLIT_WS > 1
#if JG_SK_DP
            if (t >= dp_units) /* (a data-parallel tile's run is the whole tile) */
#endif
                if (!jg_split_ws(p, sum, t, tiles_m, c))
                    continue; /* the tile's last unit stores it */
#endif
#if JG_SCALE == 1 || JG_NVFP4
#pragma unroll
            for (int mi = 0; mi < JG_WG_MMAS; ++mi)
#pragma unroll
                for (int j = 0; j < JG_MMA_N / 2; ++j)
                    sum[mi][j] *= scale;
#elif JG_SCALE == 2
            jg_scale_rows(smem_rs + c * JG_RS_BYTES, 1 + c, sum);
#endif
            jg_epilogue(p, tl, sum, (int32_t)(tl.tm * JG_BLOCK_M + JG_CONSUMER_ROW0(c)),
                        (int32_t)(tl.tn * JG_BLOCK_N),
                        smem_epi + c * JG_EPI_NBUF * JG_EPI_BUF_BYTES, c, rank, chunk);
        }
        if (threadIdx.x % 128 == 0) /* shared memory must outlive the last stores */
            jg_bulk_wait<0>();
    }
#if JG_CLUSTER > 1
    __syncwarp();
    jg_cluster_sync(); /* no CTA leaves while its peer may still write to it */
#endif
}
