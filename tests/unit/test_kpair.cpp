/* FP8 block scales read from global memory by pairs of stages (JG_KS_PAIRS
 * in templates/sm90_gemm.cu): the kernel's own pair functions, copied out
 * of the template at build time, run on the CPU in the order a consumer
 * warpgroup runs them (run_chunk there: a tile's first pair loaded, then
 * per chunk of stages jg_kpair_step for its stages 1 .. n-1, each
 * promoting the stage before, and jg_kpair_chunk_end promoting its last).
 * Every stage of K must be promoted with its own K block's scales, A's of
 * the thread's rows (0 past the tile's matrix) times B's of the tile's
 * column block, for every K of 1 to 48 stages in chunks of 1 to 8 stages
 * (the kernel's: min(promote chunk, stages), the rest in a last shorter
 * chunk) and for each thread's rows. Exhaustive: no seed. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define JG_EXTRACT_SHIMS /* the test's own shims below */
#define JG_DEV static inline

namespace {

/* The kernel's constants as a 128-row tile of one consumer warpgroup
 * (two m64 slabs) over 128-column blocks, no split-K; K's stages vary. */
constexpr int kBlockM = 128, kBlockN = 128, kRows = 300, kColBlocks = 3;
int g_k_tiles;
uint32_t g_frag_row;

uint32_t jg_frag_row() { return g_frag_row; }

} // namespace

#define JG_WG_MMAS 2
#define JG_BLOCK_M kBlockM
#define JG_BLOCK_N kBlockN
#define JG_CONSUMER_ROW0(c) ((c) * 0u)
#define JG_SPLIT_K 1
#define JG_K_TILES g_k_tiles
#define JG_K_TILES_ALL g_k_tiles

/* The fields of the kernel's jg_tile that the pair functions read. */
struct jg_tile {
    uint32_t tm, tn;
    int32_t m, k0;
    const float *sa, *sb;
};

/* The kernel's pair registers (its struct). */
struct jg_kpair {
    float a[2][JG_WG_MMAS][2];
    float b[2];
};

#include "kpair_math.h"

namespace {

int failures;

/* A's block scales [kRows][K stages] and B's [kColBlocks][K stages]:
 * distinct values whose products are exact. */
float g_sa[kRows * 64], g_sb[kColBlocks * 64];

void fill_scales(int k_tiles)
{
    for (int r = 0; r < kRows; ++r)
        for (int kb = 0; kb < k_tiles; ++kb)
            g_sa[r * k_tiles + kb] = (float)(1 + r * 64 + kb);
    for (int j = 0; j < kColBlocks; ++j)
        for (int kb = 0; kb < k_tiles; ++kb)
            g_sb[j * k_tiles + kb] = (float)(1u << ((j * 5 + kb) % 11));
}

/* Stage kt promoted with prod: each of the thread's rows' A scale times
 * B's, both of block kt. */
void check_stage(const jg_tile &tl, int kt, const float (&prod)[JG_WG_MMAS][2], int chunk,
                 int *promoted)
{
    const int row0 = (int)(tl.tm * kBlockM + g_frag_row);
    for (int mi = 0; mi < JG_WG_MMAS; ++mi)
        for (int h = 0; h < 2; ++h) {
            const int row = row0 + mi * 64 + h * 8;
            const float a = row < tl.m ? g_sa[row * g_k_tiles + kt] : 0.0f;
            const float want = a * g_sb[tl.tn * g_k_tiles + kt];
            if (prod[mi][h] != want && ++failures <= 10)
                fprintf(stderr,
                        "K %d stages in chunks of %d, tile (%u, %u), row %d: stage %d promoted "
                        "with %g, its scales make %g\n",
                        g_k_tiles, chunk, tl.tm, tl.tn, row, kt, (double)prod[mi][h],
                        (double)want);
        }
    if (kt != *promoted && ++failures <= 10)
        fprintf(stderr, "K %d stages in chunks of %d: stage %d promoted after stage %d\n",
                g_k_tiles, chunk, kt, *promoted - 1);
    *promoted = kt + 1;
}

/* One tile's K stages, as the consumer runs them (sm90_gemm.cu's run_chunk
 * and the chunk loop after it). */
void run_tile(const jg_tile &tl, int chunk)
{
    jg_kpair raw;
    float prod[2][JG_WG_MMAS][2];
    memset(prod, 0, sizeof prod);
    int promoted = 0;
    jg_load_kpair(tl, 0, 0, 0, raw);
    for (int k0 = 0; k0 < g_k_tiles; k0 += chunk) {
        const int n = k0 + chunk <= g_k_tiles ? chunk : g_k_tiles % chunk;
        for (int i = 1; i < n; ++i)
            check_stage(tl, k0 + i - 1, prod[jg_kpair_step(tl, 0, k0 + i, i, raw, prod)], chunk,
                        &promoted);
        check_stage(tl, k0 + n - 1, prod[jg_kpair_chunk_end(tl, 0, k0, n, raw, prod)], chunk,
                    &promoted);
    }
    if (promoted != g_k_tiles && ++failures <= 10)
        fprintf(stderr, "K %d stages in chunks of %d: %d promoted\n", g_k_tiles, chunk, promoted);
}

} // namespace

int main()
{
    int cases = 0;
    for (g_k_tiles = 1; g_k_tiles <= 48; ++g_k_tiles) {
        fill_scales(g_k_tiles);
        for (int promote = 1; promote <= 8; ++promote) {
            const int chunk = promote < g_k_tiles ? promote : g_k_tiles;
            /* a full tile, and the last one (rows past kRows read as 0) */
            for (uint32_t tm = 1; tm <= 2; ++tm)
                for (g_frag_row = 0; g_frag_row < 64; ++g_frag_row) {
                    const jg_tile tl = {tm, tm % kColBlocks, kRows, 0, g_sa, g_sb};
                    run_tile(tl, chunk);
                    ++cases;
                }
        }
    }
    printf("kpair: %d tiles' stages checked, %d failures\n", cases, failures);
    return failures ? 1 : 0;
}
