/* The random problems of jitgemm-bench --random (and, with the same
 * generator, of bench/peer_torch.py --random): the model dimensions they are
 * drawn from, the draw itself, and the ratio statistics of the summary. CPU
 * only, so a unit test can check it on any machine.
 *
 * The draw, for a seed S (bench/README.md, "Random problems"): a splitmix64
 * stream x_1, x_2, ... started at S (tests/common/jg_test.h), u(x) =
 * (x >> 11) * 2^-53 in [0, 1). Each problem takes, in this order:
 *   M = floor(pow(16385, u)), clamped to [1, 16384]: log-uniform;
 *   N, then K: with u < 0.85 dims[x % count] (dims sorted ascending, one
 *       draw x), else 1024 + 16 * (x % 1729): a multiple of 16 in
 *       1024..28672;
 * and is drawn again (M, N and K) while M*K + N*K + M*N > 2^30 elements.
 * Then one more draw u: the problem is also timed M-generic when
 * u < the generic fraction, so the shapes of a seed do not depend on it. */
#ifndef JG_TOOLS_RANDOM_DRAW_H
#define JG_TOOLS_RANDOM_DRAW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RANDOM_M_MAX 16384
#define RANDOM_DIM_MIN 1024
#define RANDOM_DIM_MAX 28672
#define RANDOM_DIM_STEP 16
#define RANDOM_FROM_LIST 0.85
/* A problem's A, B and D together: 2 GiB in bf16. */
#define RANDOM_MAX_ELEMENTS (1ll << 30)
#define RANDOM_SEED_MAX INT64_MAX /* seeds fit a JSON integer */

/* The distinct model dimensions in [RANDOM_DIM_MIN, RANDOM_DIM_MAX],
 * ascending. */
typedef struct random_dims {
    int64_t *v;
    int n;
} random_dims;

/* Reads bench/model-dims.json: {"models": {"<model>": {"<what>": width,
 * ...}, ...}}. Returns 0, or -1 with "FILE: why" in err (an unreadable file,
 * a width that is not a positive integer, one in range that is not a
 * multiple of 16, or none in range). *out is always safe to free. */
int random_dims_load(const char *file, random_dims *out, char *err, size_t err_len);
void random_dims_free(random_dims *d);

typedef struct random_problem {
    int64_t m, n, k;
    int64_t generic_hint; /* the M-generic plan's hint (random_bucket_hint); 0: not timed */
} random_problem;

/* Draws `count` problems from `seed` into out[0..count), as above; with
 * half, the M-generic hints are random_bucket_hint_half's (the same rows). */
void random_draw(uint64_t seed, const random_dims *dims, int count, double generic_fraction,
                 bool half, random_problem *out);

/* The hint a serving loop plans a bucket of M with: m rounded up to a power
 * of two; with half, to a power of two or 1.5 times one (1, 2, 3, 4, 6, 8,
 * 12, ..., 128, 192, 256, 384, ...: twice the buckets, at most a third of
 * the hint's rows idle where the plan's tiles follow the hint). */
int64_t random_bucket_hint(int64_t m);
int64_t random_bucket_hint_half(int64_t m);
/* What the buckets' hints are, for reports: "a power of two" or "a power of
 * two or 1.5 times one". */
const char *random_buckets_text(bool half);

/* A seed for a run without --seed: 32 bits from /dev/urandom, else from the
 * clock, so it is short enough to type again. */
uint64_t random_fresh_seed(void);

/* "1234" into *out: decimal digits only, at most RANDOM_SEED_MAX. */
bool random_parse_seed(const char *s, uint64_t *out);

/* The summary of n > 0 ratios (peer us / ours us): count, geometric mean,
 * 10th percentile and minimum. The percentile is interpolated linearly
 * between the closest ranks of the sorted values (at (n - 1) * 0.1). */
typedef struct ratio_stats {
    int count;
    double geomean, p10, min;
} ratio_stats;

ratio_stats ratio_stats_of(const double *ratios, int n);

/* The q-quantile (0 <= q <= 1) of n > 0 ascending values, as above. */
double quantile_sorted(const double *v, int n, double q);

#endif /* JG_TOOLS_RANDOM_DRAW_H */
