/* Small helpers shared by the tests: checks, a seeded RNG, 16-bit float
 * conversions, and (GPU tests) CUDA runtime setup. Header-only. */
#ifndef JG_TEST_H
#define JG_TEST_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jitgemm/jitgemm.h"

#define JG_TEST_SKIP 77

/* Collects the warnings and errors sent to a jg_log_fn (user = captured *). */
typedef struct captured {
    int warnings;
    char text[16384];
} captured;

static inline void capture_log(void *user, jg_log_level level, const char *category,
                               const char *msg)
{
    captured *c = user;
    (void)category;
    if (level > JG_LOG_WARN)
        return;
    c->warnings++;
    size_t used = strlen(c->text);
    snprintf(c->text + used, sizeof c->text - used, "%s\n", msg);
}

static int jg_test_failures;

/* Records a failure and goes on, so one run reports every broken case. */
#define CHECK(cond, ...)                                                  \
    do {                                                                  \
        if (!(cond)) {                                                    \
            fprintf(stderr, "%s:%d: CHECK(%s) failed: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                 \
            fprintf(stderr, "\n");                                        \
            ++jg_test_failures;                                           \
        }                                                                 \
    } while (0)

/* Exit status of a test: 0 when every CHECK held. */
static inline int jg_test_result(const char *name)
{
    if (jg_test_failures)
        fprintf(stderr, "%s: %d check(s) failed\n", name, jg_test_failures);
    else
        printf("%s: all checks passed\n", name);
    return jg_test_failures ? 1 : 0;
}

/* Options of an offline context for sm_90a (it compiles kernels and cannot
 * launch them) with the disk cache in dir, in mode; log, when not NULL,
 * captures its warnings and errors and the categories of log_mask. */
static inline jg_options jg_test_offline_options(const char *dir, jg_cache_mode mode,
                                                 captured *log, uint32_t log_mask)
{
    jg_options o;
    memset(&o, 0, sizeof o);
    o.flags = JG_CONTEXT_OFFLINE;
    o.arch = "sm_90a";
    o.cache_dir = dir;
    o.cache_mode = mode;
    if (log) {
        memset(log, 0, sizeof *log);
        o.log = capture_log;
        o.log_user = log;
        o.log_mask = log_mask;
    }
    return o;
}

/* That context, log capturing cache messages too. NULL (a failed check) if
 * it cannot be made. */
static inline jg_context *jg_test_offline_cache(const char *dir, jg_cache_mode mode,
                                                captured *log)
{
    const jg_options o = jg_test_offline_options(dir, mode, log, JG_LOGC_CACHE);
    jg_context *ctx = NULL;
    jg_status st = jg_context_create(&o, &ctx);
    CHECK(st == JG_OK && ctx, "offline context on %s: %s", dir ? dir : "(no cache)",
          jg_context_last_error(NULL));
    return st == JG_OK ? ctx : NULL;
}

/* The same with the caches off. */
static inline jg_context *jg_test_offline_context(void)
{
    return jg_test_offline_cache(NULL, JG_CACHE_OFF, NULL);
}

#ifdef JG_INTERNAL_H
/* An internal log that captures into c (tests of internal functions). */
static inline jg__log log_to(captured *c)
{
    memset(c, 0, sizeof *c);
    jg__log log = {capture_log, c, JG_LOGC_ALL};
    return log;
}

/* A bucket's representative value: the geometric middle of its range (M
 * from 1 to 16384; N and K from 1024 to 28672, a multiple of 64). */
static inline int64_t jg_test_bucket_middle(const uint32_t *edges, size_t count, uint32_t b,
                                            int nk)
{
    const double lo = b ? edges[b - 1] + 1.0 : (nk ? 1024 : 1);
    const double hi = b < count ? edges[b] : (nk ? 28672 : 16384);
    const int64_t v = (int64_t)(sqrt(lo * hi) + 0.5);
    return nk ? (v + 32) / 64 * 64 : v;
}

/* The middle problem of a measured table cell: its class's operands (bf16;
 * e4m3 with tensor scales; e4m3 with block scales), D bf16. */
static inline jg_gemm_problem jg_test_table_problem(const jg__table_cell_info *cell)
{
    static const jg_scale_mode scales[] = {JG_SCALE_NONE, JG_SCALE_TENSOR, JG_SCALE_BLOCK};
    jg_gemm_problem p = {
        .a_type = cell->dclass ? JG_E4M3 : JG_BF16,
        .b_type = cell->dclass ? JG_E4M3 : JG_BF16,
        .d_type = JG_BF16,
        .m = jg_test_bucket_middle(cell->m_edges, cell->m_edge_count, cell->m, 0),
        .n = jg_test_bucket_middle(cell->nk_edges, cell->nk_edge_count, cell->n, 1),
        .k = jg_test_bucket_middle(cell->nk_edges, cell->nk_edge_count, cell->k, 1),
        .scale = scales[cell->dclass % 3]};
    return p;
}

/* Whether the planner's long-K rule (plan_sm90.c, long_k_split) splits a
 * dense K-major BF16, FP16 or FP8 problem on `sms` SMs: K >= 12288, no
 * block scales, and its 128x128 tiles or, if fewer, swap-AB's (N in 128
 * rows by M in at most 176 columns, FP8 128) filling at most half of them. */
static inline bool jg_test_long_k(const jg_gemm_problem *p, int sms)
{
    const int64_t swap_width = p->a_type == JG_E4M3 ? 128 : 176;
    const int64_t tiles128 = (p->m + 127) / 128 * ((p->n + 127) / 128);
    const int64_t swap_tiles = (p->n + 127) / 128 * ((p->m + swap_width - 1) / swap_width);
    const int64_t tiles = swap_tiles < tiles128 ? swap_tiles : tiles128;
    return p->scale != JG_SCALE_BLOCK && p->k >= 12288 && tiles * 2 <= (int64_t)sms;
}

/* The planner's target for an H100 (132 SMs, sm_90a), filled in place (its
 * arch points into itself). */
static inline void jg_test_h100_target(jg__target *t)
{
    memset(t, 0, sizeof *t);
    t->sm_count = 132;
    t->smem_per_block = 232448;
    snprintf(t->arch_name, sizeof t->arch_name, "sm_90a");
    t->arch = t->arch_name;
}
#endif

/* The seed of a randomized test: --seed S, else the time; printed with
 * the command line that replays it. */
static inline uint64_t jg_test_seed(int argc, char **argv, const char *name)
{
    uint64_t seed = (uint64_t)time(NULL);
    for (int i = 1; i + 1 < argc; i += 2)
        if (!strcmp(argv[i], "--seed"))
            seed = strtoull(argv[i + 1], NULL, 0);
    printf("%s: seed %llu (replay with --seed %llu)\n", name, (unsigned long long)seed,
           (unsigned long long)seed);
    return seed;
}

/* --count N (random cases), or `fallback`. */
static inline int jg_test_count(int argc, char **argv, int fallback)
{
    for (int i = 1; i + 1 < argc; i += 2)
        if (!strcmp(argv[i], "--count"))
            return atoi(argv[i + 1]);
    return fallback;
}

/* xoshiro256** seeded by splitmix64: fast, reproducible from one seed. */
typedef struct jg_rng {
    uint64_t s[4];
} jg_rng;

static inline uint64_t jg_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void jg_rng_seed(jg_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; ++i)
        r->s[i] = jg_splitmix64(&seed);
}

static inline uint64_t jg_rng_next(jg_rng *r)
{
    uint64_t *s = r->s;
    uint64_t x = s[1] * 5;
    uint64_t result = ((x << 7) | (x >> 57)) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

/* Uniform in [0, 1). */
static inline double jg_rng_uniform(jg_rng *r) { return (jg_rng_next(r) >> 11) * 0x1.0p-53; }

static inline uint64_t jg_rng_below(jg_rng *r, uint64_t n) { return jg_rng_next(r) % n; }

/* Standard normal (Box-Muller). */
static inline double jg_rng_normal(jg_rng *r)
{
    double u1 = jg_rng_uniform(r), u2 = jg_rng_uniform(r);
    if (u1 < 1e-300)
        u1 = 1e-300;
    return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* ---- 16-bit floats (round to nearest even) ---------------------------- */

static inline uint16_t jg_f32_to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1);
    return (uint16_t)(u >> 16);
}

static inline float jg_bf16_to_f32(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static inline uint16_t jg_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return sign | 0x7e00u; /* NaN */
    if (ax >= 0x477ff000u)     /* rounds to infinity */
        return sign | 0x7c00u;
    if (ax < 0x38800000u) {    /* below 2^-14: a subnormal half, steps of 2^-24 */
        float af;
        memcpy(&af, &ax, 4);
        return sign | (uint16_t)nearbyintf(af * 16777216.0f);
    }
    uint32_t h = ((((ax >> 23) - 127 + 15) & 0x1fu) << 10) | ((ax & 0x7fffffu) >> 13);
    uint32_t rem = ax & 0x1fffu;
    if (rem > 0x1000u || (rem == 0x1000u && (h & 1)))
        ++h; /* a carry into the exponent is still the right encoding */
    return sign | (uint16_t)h;
}

static inline float jg_f16_to_f32(uint16_t h)
{
    int e = (h >> 10) & 0x1f, m = h & 0x3ff;
    float v;
    if (e == 0)
        v = ldexpf((float)m, -24);
    else if (e == 31)
        v = m ? NAN : INFINITY;
    else
        v = ldexpf((float)(1024 + m), e - 25);
    return (h & 0x8000) ? -v : v;
}

#endif
