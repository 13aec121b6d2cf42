/* jitgemm-bench --random's draw (tools/random_draw.c) on the CPU: the
 * generator against splitmix64's published values, bench/model-dims.json
 * and bad dimension files, the draw's determinism (same seed, same
 * problems, whatever the count and the M-generic fraction), its ranges and
 * proportions over many draws, the bucket hints, the seed parser, and the
 * summary statistics.
 *
 *   test_random_draw path/to/bench/model-dims.json */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "jg_test.h"
#include "random_draw.h"

#define MANY 20000

static void generator(void)
{
    /* Vigna's splitmix64.c, state 0: the first three outputs */
    static const uint64_t want[3] = {0xe220a8397b1dcdafull, 0x6e789e6aa1b965f4ull,
                                     0x06c45d188009454full};
    uint64_t state = 0;
    for (int i = 0; i < 3; ++i) {
        uint64_t got = jg_splitmix64(&state);
        CHECK(got == want[i], "splitmix64 output %d: %016llx, expected %016llx", i,
              (unsigned long long)got, (unsigned long long)want[i]);
    }
}

static bool in_list(const random_dims *d, int64_t v)
{
    for (int i = 0; i < d->n; ++i)
        if (d->v[i] == v)
            return true;
    return false;
}

static void model_dims(const random_dims *d)
{
    CHECK(d->n >= 20, "only %d distinct dims", d->n);
    for (int i = 0; i < d->n; ++i) {
        CHECK(d->v[i] >= RANDOM_DIM_MIN && d->v[i] <= RANDOM_DIM_MAX && d->v[i] % 16 == 0,
              "dim %lld out of range or not a multiple of 16", (long long)d->v[i]);
        CHECK(i == 0 || d->v[i] > d->v[i - 1], "dims not ascending and distinct at %d", i);
    }
    /* Llama's 4096 and 28672, DeepSeek-V3's 7168, gpt-oss's 2880 are in;
     * MLA's 512 and Qwen2.5-72B's 29568 are outside the range */
    CHECK(in_list(d, 4096) && in_list(d, 28672) && in_list(d, 7168) && in_list(d, 2880),
          "a known width is missing");
    CHECK(!in_list(d, 512) && !in_list(d, 29568), "a width outside 1024..28672 was kept");
}

/* Loads `text` as a dims file; expects failure with `why` in the message. */
static void bad_file(const char *text, const char *why)
{
    char path[] = "/tmp/test_random_draw_XXXXXX", err[256] = "";
    int fd = mkstemp(path);
    random_dims d;
    CHECK(fd >= 0, "mkstemp");
    if (fd < 0)
        return;
    CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write");
    close(fd);
    int rc = random_dims_load(path, &d, err, sizeof err);
    CHECK(rc == -1 && strstr(err, why), "%s: rc %d, message '%s', expected '%s'", text, rc, err,
          why);
    CHECK(!d.v && !d.n, "a failed load left dims behind");
    unlink(path);
}

static void bad_files(void)
{
    bad_file("{\"models\": ", "");
    bad_file("{\"widths\": {}}", "expected an object \"models\"");
    bad_file("{\"models\": {\"X\": {\"hidden\": \"4096\"}}}", "models.X.hidden: expected a "
                                                            "positive integer");
    bad_file("{\"models\": {\"X\": {\"hidden\": 4096, \"odd\": 4100}}}",
             "models.X.odd = 4100: not a multiple of 16");
    bad_file("{\"models\": {\"X\": {\"kv\": 512, \"big\": 32768}}}", "no width in 1024..28672");
    bad_file("{\"models\": {\"X\": [4096]}}", "models.X: expected an object of widths");
}

static bool same_shapes(const random_problem *a, const random_problem *b, int n)
{
    for (int i = 0; i < n; ++i)
        if (a[i].m != b[i].m || a[i].n != b[i].n || a[i].k != b[i].k)
            return false;
    return true;
}

static void determinism(const random_dims *d)
{
    random_problem *a = calloc(500, sizeof *a), *b = calloc(500, sizeof *b);
    random_draw(42, d, 500, 0.25, false, a);
    random_draw(42, d, 500, 0.25, false, b);
    CHECK(same_shapes(a, b, 500) && !memcmp(a, b, 500 * sizeof *a), "seed 42 drew twice differs");
    random_draw(42, d, 100, 0.25, false, b);
    CHECK(!memcmp(a, b, 100 * sizeof *a), "the first 100 of 500 differ from a draw of 100");
    random_draw(43, d, 500, 0.25, false, b);
    CHECK(!same_shapes(a, b, 500), "seeds 42 and 43 drew the same problems");
    /* the generic fraction picks rows, never changes the shapes */
    random_draw(42, d, 500, 0.0, false, b);
    CHECK(same_shapes(a, b, 500), "generic fraction 0 changed the shapes");
    for (int i = 0; i < 500; ++i)
        CHECK(b[i].generic_hint == 0, "fraction 0: row %d is M-generic", i);
    random_draw(42, d, 500, 1.0, false, b);
    CHECK(same_shapes(a, b, 500), "generic fraction 1 changed the shapes");
    for (int i = 0; i < 500; ++i) {
        CHECK(b[i].generic_hint == random_bucket_hint(b[i].m), "fraction 1: row %d's hint", i);
        CHECK(!a[i].generic_hint || a[i].generic_hint == b[i].generic_hint,
              "fraction 0.25: row %d's hint", i);
    }
    /* half buckets: the same rows M-generic, their hints the half buckets' */
    random_draw(42, d, 500, 0.25, true, b);
    CHECK(same_shapes(a, b, 500), "half buckets changed the shapes");
    for (int i = 0; i < 500; ++i)
        CHECK(!a[i].generic_hint == !b[i].generic_hint &&
                  (!b[i].generic_hint || b[i].generic_hint == random_bucket_hint_half(b[i].m)),
              "half buckets: row %d's hint", i);
    free(a);
    free(b);
}

static void proportions(const random_dims *d)
{
    random_problem *p = calloc(MANY, sizeof *p);
    int listed = 0, small_m = 0, m_one = 0, generic = 0, max_m = 0;
    random_draw(7, d, MANY, 0.25, false, p);
    for (int i = 0; i < MANY; ++i) {
        CHECK(p[i].m >= 1 && p[i].m <= RANDOM_M_MAX, "row %d: M = %lld", i, (long long)p[i].m);
        CHECK(p[i].n >= RANDOM_DIM_MIN && p[i].n <= RANDOM_DIM_MAX && p[i].n % 16 == 0 &&
                  p[i].k >= RANDOM_DIM_MIN && p[i].k <= RANDOM_DIM_MAX && p[i].k % 16 == 0,
              "row %d: N = %lld, K = %lld", i, (long long)p[i].n, (long long)p[i].k);
        CHECK(p[i].m * p[i].k + p[i].n * p[i].k + p[i].m * p[i].n <= RANDOM_MAX_ELEMENTS,
              "row %d over the size cap", i);
        listed += in_list(d, p[i].n) + in_list(d, p[i].k);
        small_m += p[i].m <= 128;
        m_one += p[i].m == 1;
        generic += p[i].generic_hint != 0;
        max_m |= p[i].m > 8192;
    }
    /* 85% from the list, plus the random multiples that happen to be listed;
     * P(M <= 128) = ln 129 / ln 16385 = 0.501, P(M = 1) = ln 2 / ln 16385 =
     * 0.0715, before the cap redraws a few large problems */
    double f_list = listed / (2.0 * MANY), f_small = (double)small_m / MANY,
           f_one = (double)m_one / MANY, f_generic = (double)generic / MANY;
    CHECK(f_list > 0.84 && f_list < 0.88, "%.3f of N and K from the list", f_list);
    CHECK(f_small > 0.48 && f_small < 0.56, "%.3f of M <= 128", f_small);
    CHECK(f_one > 0.06 && f_one < 0.085, "%.3f of M = 1", f_one);
    CHECK(f_generic > 0.23 && f_generic < 0.27, "%.3f M-generic", f_generic);
    CHECK(max_m, "no M above 8192 in %d draws", MANY);
    printf("seed 7, %d problems: %.3f of N, K from the list, %.3f with M <= 128, %.3f M = 1, "
           "%.3f M-generic\n", MANY, f_list, f_small, f_one, f_generic);
    free(p);
}

static void hints_and_seeds(void)
{
    static const int64_t m[][2] = {{1, 1}, {2, 2}, {3, 4}, {129, 256}, {16383, 16384},
                                   {16384, 16384}};
    for (size_t i = 0; i < sizeof m / sizeof m[0]; ++i)
        CHECK(random_bucket_hint(m[i][0]) == m[i][1], "hint of %lld", (long long)m[i][0]);
    /* --generic-buckets half: 1.5 times a power of two between the powers */
    static const int64_t h[][2] = {{1, 1},     {2, 2},     {3, 3},       {4, 4},
                                   {5, 6},     {7, 8},     {129, 192},   {192, 192},
                                   {193, 256}, {257, 384}, {12288, 12288}, {12289, 16384}};
    for (size_t i = 0; i < sizeof h / sizeof h[0]; ++i)
        CHECK(random_bucket_hint_half(h[i][0]) == h[i][1], "half-bucket hint of %lld",
              (long long)h[i][0]);
    uint64_t s = 1;
    CHECK(random_parse_seed("0", &s) && s == 0, "seed 0");
    CHECK(random_parse_seed("9223372036854775807", &s) && s == 9223372036854775807ull,
          "seed 2^63-1");
    static const char *bad[] = {"", "-1", "+1", " 1", "1 ", "12x", "0x10", "9223372036854775808",
                                "18446744073709551616"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; ++i)
        CHECK(!random_parse_seed(bad[i], &s), "seed '%s' accepted", bad[i]);
    uint64_t f = random_fresh_seed();
    CHECK(f <= 0xffffffffu, "a fresh seed above 32 bits: %llu", (unsigned long long)f);
}

static void stats(void)
{
    const double r[10] = {7, 3, 10, 1, 9, 2, 8, 4, 6, 5};
    double logs = 0;
    for (int i = 1; i <= 10; ++i)
        logs += log(i);
    ratio_stats st = ratio_stats_of(r, 10);
    /* sorted 1..10: at (10 - 1) * 0.1 = 0.9, between 1 and 2 */
    CHECK(st.count == 10 && fabs(st.geomean - exp(logs / 10)) < 1e-12 &&
              fabs(st.p10 - 1.9) < 1e-12 && st.min == 1,
          "stats of 1..10: %d %.6f %.6f %.6f", st.count, st.geomean, st.p10, st.min);
    const double one = 0.8;
    st = ratio_stats_of(&one, 1);
    CHECK(st.count == 1 && fabs(st.geomean - 0.8) < 1e-12 && st.p10 == 0.8 && st.min == 0.8,
          "stats of one value");
    const double v[3] = {1, 2, 4};
    CHECK(quantile_sorted(v, 3, 0.5) == 2 && quantile_sorted(v, 3, 0.75) == 3 &&
              quantile_sorted(v, 3, 1.0) == 4 && quantile_sorted(v, 3, 0) == 1,
          "quantiles of 1, 2, 4");
}

int main(int argc, char **argv)
{
    random_dims d;
    char err[256];
    if (argc < 2) {
        fprintf(stderr, "usage: test_random_draw bench/model-dims.json\n");
        return 2;
    }
    generator();
    bad_files();
    hints_and_seeds();
    stats();
    CHECK(random_dims_load(argv[1], &d, err, sizeof err) == 0, "%s", err);
    if (d.n) {
        model_dims(&d);
        determinism(&d);
        proportions(&d);
    }
    random_dims_free(&d);
    return jg_test_result("test_random_draw");
}
