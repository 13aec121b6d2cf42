/* Split-K after data-parallel tiles (JG_SK_DP in templates/sm90_gemm.cu):
 * the kernel's own unit functions (jg_dp_tiles, jg_ws_unit,
 * jg_dp_unit_next), copied out of the template at build time, run on the
 * CPU as each CTA of the grid runs them: the producer unit by unit, the
 * consumers run by run (a data-parallel tile's S units in one run, a split
 * unit alone). For 3000 random grids (G CTAs, T tiles of R rows, S units
 * a tile; seed printed) and the edges (T under two waves, whole waves),
 * every unit of every tile must run exactly once, the producer and the
 * consumers in the same order, a data-parallel run over one tile's shares
 * 0 .. S-1 in order, the tiles run whole the first D = (T / G - 1) G where
 * T / G >= 2 (else none), the split tiles' workspace slots 0 .. T - D - 1
 * (the host's count: jg__split_ws_counts), and a tile's last share, which
 * waits for the others, numbered after them, with each CTA's units in
 * increasing order (so the lowest unfinished unit never waits). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <vector>

#define JG_EXTRACT_SHIMS /* the test's own shims below */
#define JG_DEV static inline

namespace
{
struct dim {
    uint32_t x;
};
dim gridDim, blockIdx;
uint32_t g_s, g_cols; /* units a tile; tile columns */
} // namespace

#define JG_SK_DP 1
#define JG_STREAM_K 0
#define JG_SPLIT_WS g_s
#define JG_UNIT_N 1u
#define JG_COLS(p) g_cols

#include "split_schedule.h"

namespace
{

int failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            if (++failures <= 10) {                                                                \
                printf("FAIL: ");                                                                  \
                printf(__VA_ARGS__);                                                               \
                printf("\n");                                                                      \
            }                                                                                      \
        }                                                                                          \
    } while (0)

/* One grid: G CTAs over rows x cols tiles of s units. */
void run_grid(uint32_t g, uint32_t rows, uint32_t cols, uint32_t s)
{
    g_s = s;
    g_cols = cols;
    gridDim.x = g;
    const uint32_t tiles = rows * cols, units = tiles * s;
    /* the tiles run whole, and those split, as the host counts them */
    const uint32_t whole = tiles / g >= 2 ? (tiles / g - 1) * g : 0;
    const uint32_t split = tiles < 2 * g ? tiles : g + tiles % g;
    CHECK(jg_dp_tiles(tiles) == whole && tiles - whole == split,
          "G %u T %u: %u tiles whole, expected %u (%u split)", g, tiles, jg_dp_tiles(tiles), whole,
          split);
    const uint32_t dp_units = jg_dp_tiles(units / s) * s;
    std::vector<int> ran(units, 0);
    std::vector<uint32_t> unit_of((size_t)tiles * s, UINT32_MAX);
    for (uint32_t b = 0; b < g; ++b) {
        blockIdx.x = b;
        const uint32_t first = dp_units ? b * s : b;
        std::vector<uint32_t> produced, consumed;
        for (uint32_t t = first; t < units; t = jg_dp_unit_next(t, dp_units))
            produced.push_back(t);
        uint32_t last_unit = 0;
        bool any = false;
        for (uint32_t t = first; t < units;) {
            const uint32_t run_end = t < dp_units ? (t / s + 1) * s : t + 1;
            uint32_t run_tile = 0;
            for (uint32_t u = t; u < run_end; ++u) {
                consumed.push_back(u);
                CHECK(!any || u > last_unit, "G %u T %u S %u: CTA %u ran unit %u after %u", g,
                      tiles, s, b, u, last_unit);
                any = true;
                last_unit = u;
                uint32_t tile, share, slot;
                jg_ws_unit(u, rows, tile, share, slot);
                CHECK(tile < tiles && share < s, "unit %u: tile %u share %u", u, tile, share);
                if (tile >= tiles || share >= s)
                    continue;
                ++ran[(size_t)tile * s + share];
                unit_of[(size_t)tile * s + share] = u;
                if (u < dp_units) {
                    CHECK(tile < whole && share == u - t &&
                              (u == t ? (run_tile = tile, true) : tile == run_tile),
                          "G %u T %u S %u: data-parallel run from %u: unit %u is tile %u "
                          "share %u",
                          g, tiles, s, t, u, tile, share);
                } else {
                    CHECK(tile >= whole && slot == tile - whole && slot < split,
                          "G %u T %u S %u: split unit %u: tile %u slot %u (%u split)", g, tiles, s,
                          u, tile, slot, split);
                }
            }
            t = jg_dp_unit_next(run_end - 1, dp_units);
        }
        CHECK(produced == consumed, "G %u T %u S %u: CTA %u's producer and consumers differ", g,
              tiles, s, b);
    }
    for (uint32_t i = 0; i < units; ++i)
        CHECK(ran[i] == 1, "G %u T %u S %u: tile %u share %u ran %d times", g, tiles, s, i / s,
              i % s, ran[i]);
    /* a split tile's last share waits for its others: numbered after them */
    for (uint32_t tile = whole; tile < tiles; ++tile)
        for (uint32_t share = 0; share + 1 < s; ++share)
            CHECK(unit_of[(size_t)tile * s + share] < unit_of[(size_t)tile * s + s - 1],
                  "G %u T %u S %u: tile %u's last share (unit %u) before share %u (unit %u)", g,
                  tiles, s, tile, unit_of[(size_t)tile * s + s - 1], share,
                  unit_of[(size_t)tile * s + share]);
}

uint64_t rng_state;
uint32_t below(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (uint32_t)((rng_state >> 33) % n);
}

} // namespace

int main(int argc, char **argv)
{
    const uint64_t seed = argc > 1 ? strtoull(argv[1], NULL, 10) : (uint64_t)time(NULL);
    printf("split_schedule: seed %llu (replay: test_split_schedule %llu)\n",
           (unsigned long long)seed, (unsigned long long)seed);
    rng_state = seed;
    /* the edges: under two waves, exactly two and three waves, one more */
    const uint32_t edges[][3] = {{132, 1, 100}, {132, 2, 132}, {132, 3, 132}, {132, 1, 397},
                                 {132, 21, 24}, {4, 1, 9},     {1, 3, 5}};
    for (const auto &e : edges)
        for (uint32_t s = 2; s <= 16; s += 7)
            run_grid(e[0], e[1], e[2], s);
    for (int i = 0; i < 3000; ++i) {
        const uint32_t g = 1 + below(140), rows = 1 + below(24), cols = 1 + below(40);
        run_grid(g, rows, cols, 2 + below(15));
    }
    if (failures)
        printf("test_split_schedule: %d checks failed\n", failures);
    else
        printf("test_split_schedule: all checks passed\n");
    return failures ? 1 : 0;
}
