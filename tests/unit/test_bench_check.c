/* jitgemm-bench's nvfp4 check (check_nvfp4_rows) on the host, without a
 * GPU, linked with the tool's parts. Random normal bf16 inputs (the tool's
 * fill_normal) are quantized by the CPU reference
 * quantizer (tests/common/jg_nvfp4_ref.h, which jg_quantize_nvfp4 matches
 * bit for bit), and the rows the check reads (0, M/2, M-1) of three D's are
 * compared:
 *   - an FP32 sum over the dequantized values, rounded to bf16 (what a
 *     correct kernel computes): within the tool's 2e-2, in fact < 5e-3;
 *   - the bf16 product before quantization: > 5e-2 (e2m1 has 1 mantissa
 *     bit: this is why the check is over the dequantized inputs);
 *   - the right D checked with the block scales read in the other layout:
 *     > 5e-2, caught.
 * Both scale layouts, decode-like and M = 1 shapes.
 *
 * Also the tool's SM-clock statistics (clock_sample, clock_json) over a
 * stand-in NVML that replays a fixed sequence of clocks and reasons,
 * --random's summary over hand-made rows, and --family-ab's parts: the
 * family read from kernel names that offline contexts with the planner's
 * families forced give, the plain-tiles context (and the environment put
 * back after it), and its summary over hand-made rows. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "jg_nvfp4_ref.h" /* the CPU reference quantizer */
#include "jg_test.h"      /* 16-bit float conversions */

static int failures;

/* D's rows 0, M/2, M-1 (others stay 0: the check does not read them). */
static void fill_rows(uint16_t *d, int64_t m, int64_t n, int64_t k, const double *a,
                      const double *b, bool quantized, const float *xa, const float *xb)
{
    const int64_t rows[3] = {0, m / 2, m - 1};
    for (int r = 0; r < 3; ++r)
        for (int64_t j = 0; j < n; ++j) {
            float acc = 0;
            double raw = 0;
            for (int64_t q = 0; q < k; ++q) {
                acc += (float)(a[rows[r] * k + q] * b[j * k + q]);
                raw += (double)xa[rows[r] * k + q] * xb[j * k + q];
            }
            d[rows[r] * n + j] = jg_f32_to_bf16(quantized ? acc : (float)raw);
        }
}

static void one(jg_sf_layout lay, int64_t m, int64_t n, int64_t k)
{
    const jg_sf_layout other = lay == JG_SF_ROW_MAJOR ? JG_SF_SWIZZLED_128X4 : JG_SF_ROW_MAJOR;
    shape s = {.m = m, .n = n, .k = k, .in = JG_NVFP4, .out = JG_BF16, .sf_layout = lay};
    size_t na = (size_t)(m * k), nb = (size_t)(n * k);
    int64_t sfa = jg_nvfp4_sf_bytes(lay, m, k), sfb = jg_nvfp4_sf_bytes(lay, n, k);
    /* big enough for either layout's reading */
    int64_t sfa_max = sfa > jg_nvfp4_sf_bytes(other, m, k) ? sfa : jg_nvfp4_sf_bytes(other, m, k);
    int64_t sfb_max = sfb > jg_nvfp4_sf_bytes(other, n, k) ? sfb : jg_nvfp4_sf_bytes(other, n, k);
    float *xa = malloc(na * sizeof *xa), *xb = malloc(nb * sizeof *xb);
    uint16_t *t = malloc((na > nb ? na : nb) * 2), *d_ok = calloc((size_t)(m * n), 2),
             *d_raw = calloc((size_t)(m * n), 2);
    double *da = malloc(na * sizeof *da), *db = malloc(nb * sizeof *db);
    operands o;
    memset(&o, 0, sizeof o);
    o.sf_layout = lay;
    o.ha = malloc(na / 2);
    o.hb = malloc(nb / 2);
    o.hsfa = calloc((size_t)sfa_max, 1);
    o.hsfb = calloc((size_t)sfb_max, 1);
    o.hsa = malloc(sizeof *o.hsa);
    o.hsb = malloc(sizeof *o.hsb);
    assert(xa && xb && t && d_ok && d_raw && da && db && o.ha && o.hb && o.hsfa && o.hsfb &&
           o.hsa && o.hsb);
    fill_normal(t, na, JG_BF16, 1);
    for (size_t i = 0; i < na; ++i)
        xa[i] = jg_bf16_to_f32(t[i]);
    fill_normal(t, nb, JG_BF16, 2);
    for (size_t i = 0; i < nb; ++i)
        xb[i] = jg_bf16_to_f32(t[i]);
    jg_ref_quantize_nvfp4(xa, k, m, k, lay, o.ha, k, o.hsfa, o.hsa);
    jg_ref_quantize_nvfp4(xb, k, n, k, lay, o.hb, k, o.hsfb, o.hsb);
    jg_ref_dequantize_nvfp4(o.ha, k, o.hsfa, lay, *o.hsa, m, k, da, k);
    jg_ref_dequantize_nvfp4(o.hb, k, o.hsfb, lay, *o.hsb, n, k, db, k);
    fill_rows(d_ok, m, n, k, da, db, true, xa, xb);
    fill_rows(d_raw, m, n, k, da, db, false, xa, xb);
    double ok = check_nvfp4_rows(&o, &s, d_ok), raw = check_nvfp4_rows(&o, &s, d_raw);
    o.sf_layout = other;
    double misread = check_nvfp4_rows(&o, &s, d_ok);
    bool pass = ok < 5e-3 && ok <= MISMATCH_TOL && raw > 5e-2 && misread > 5e-2;
    printf("%s %s m %lld n %lld k %lld: dequantized %.2e, unquantized %.2e, other layout %.2e\n",
           pass ? "ok  " : "FAIL", sf_layout_name(lay), (long long)m, (long long)n,
           (long long)k, ok, raw, misread);
    failures += !pass;
    free(xa);
    free(xb);
    free(t);
    free(d_ok);
    free(d_raw);
    free(da);
    free(db);
    free(o.ha);
    free(o.hb);
    free(o.hsfa);
    free(o.hsfb);
    free(o.hsa);
    free(o.hsb);
}

/* A stand-in NVML: the clocks and reasons of successive samples. */
static const unsigned fake_mhz[] = {1980, 1410, 1275, 1320};
static const unsigned long long fake_why[] = {0, NVML_REASON_SW_POWER_CAP, 0x100ull, 0};
static int fake_at;

static int fake_clock(nvml_dev dev, int type, unsigned *mhz)
{
    (void)dev;
    if (type != NVML_CLOCK_SM)
        return 1;
    *mhz = fake_mhz[fake_at];
    return 0;
}

static int fake_reasons(nvml_dev dev, unsigned long long *why)
{
    (void)dev;
    *why = fake_why[fake_at++];
    return 0;
}

static void check(bool ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "test_bench_check: %s\n", what);
        ++failures;
    }
}

static void clocks(void)
{
    nvml_api n = {.nvmlDeviceGetClockInfo = fake_clock, .reasons = fake_reasons,
                  .dev = (nvml_dev)&fake_at};
    clock_stats c = {0};
    json_t *none = clock_json(&c);
    check(json_is_null(none) && isnan(clock_mean(&c)), "clocks, no samples: null, NAN mean");
    json_decref(none);
    for (int i = 0; i < 4; ++i)
        clock_sample(&n, &c);
    check(c.n == 4 && c.min_mhz == 1275, "4 samples, min 1275");
    check(fabs(clock_mean(&c) - (1980 + 1410 + 1275 + 1320) / 4.0) < 1e-9, "mean");
    json_t *o = clock_json(&c), *why = json_object_get(o, "reasons");
    check(json_integer_value(json_object_get(o, "min_mhz")) == 1275 &&
              json_integer_value(json_object_get(o, "samples")) == 4,
          "JSON min_mhz, samples");
    /* 0x100 is no reason the tool names: only the power cap is listed */
    check(json_array_size(why) == 1 &&
              !strcmp(json_string_value(json_array_get(why, 0)), "sw_power_cap"),
          "JSON reasons: [\"sw_power_cap\"]");
    json_decref(o);
    nvml_api off = {0}; /* no NVML: sampling leaves the stats alone */
    clock_stats d = {0};
    clock_sample(&off, &d);
    check(d.n == 0, "no NVML: no sample");
}

/* --random's summary (random_summary) over hand-made rows: which rows count
 * (not errors, mismatches or a peer of other scales), the statistics, the
 * bands of M, the worst rows in order, and the M-generic ratios. */
static double num_at(json_t *o, const char *path)
{
    char key[64];
    const char *dot;
    while ((dot = strchr(path, '.'))) {
        snprintf(key, sizeof key, "%.*s", (int)(dot - path), path);
        o = json_is_array(o) ? json_array_get(o, (size_t)atoi(key)) : json_object_get(o, key);
        path = dot + 1;
    }
    o = json_is_array(o) ? json_array_get(o, (size_t)atoi(path)) : json_object_get(o, path);
    return json_is_number(o) ? json_number_value(o) : NAN;
}

static void summary(void)
{
    /* M, ours us, peer us, generic us (0: not M-generic); then what excludes it */
    static const struct {
        int64_t m;
        double ours, peer, gen;
        int bad; /* 1 error, 2 mismatch, 3 peer of other scales, 4 M-generic mismatch */
    } in[] = {{1, 10, 12, 0, 0},     {16, 10, 8, 11, 0},   {100, 20, 10, 0, 0},
              {300, 10, 9, 12.5, 0}, {5000, 100, 130, 0, 0}, {9000, 50, 50, 0, 1},
              {9000, 50, 5, 0, 2},   {9000, 50, 500, 0, 3}, {2000, 10, 10, 20, 4}};
    enum { N = sizeof in / sizeof in[0] };
    shape s[N];
    row r[N];
    bench b;
    memset(&b, 0, sizeof b);
    memset(s, 0, sizeof s);
    b.opt.random = N;
    b.peak_tflops = b.fp8_peak_tflops = NAN;
    b.copy_gbs = 3000;
    for (int i = 0; i < N; ++i) {
        s[i] = (shape){.m = in[i].m, .n = 4096, .k = 4096, .b_count = 1, .in = JG_BF16,
                       .out = JG_BF16};
        snprintf(s[i].name, sizeof s[i].name, "r%d", i + 1);
        r[i] = (row){.s = &s[i], .origin = "nvrtc", .ours_us = in[i].ours, .peer_us = in[i].peer,
                     .generic_hint = in[i].gen > 0 ? 1 : 0, .generic_us = in[i].gen > 0 ? in[i].gen
                                                                                    : NAN};
        r[i].mismatch = in[i].bad == 2;
        r[i].peer_other_scales = in[i].bad == 3;
        r[i].generic_mismatch = in[i].bad == 4;
        if (in[i].bad == 1)
            snprintf(r[i].error, sizeof r[i].error, "failed");
    }
    json_t *out = random_summary(&b, r, N), *sum = json_object_get(out, "summary");
    /* counted: rows 1-5 and 9 (its M-generic mismatch does not hide its own ratio):
     * 1.2, 0.8, 0.5, 0.9, 1.3, 1.0 */
    const double ratios[] = {1.2, 0.8, 0.5, 0.9, 1.3, 1.0};
    double logs = 0;
    for (int i = 0; i < 6; ++i)
        logs += log(ratios[i]);
    check(num_at(sum, "rows") == N && num_at(sum, "count") == 6, "summary: 6 of 9 rows count");
    check(fabs(num_at(sum, "geomean") - exp(logs / 6)) < 1e-12, "summary: geomean");
    /* sorted 0.5 0.8 0.9 1.0 1.2 1.3: at 0.5, halfway from 0.5 to 0.8 */
    check(fabs(num_at(sum, "p10") - 0.65) < 1e-12 && num_at(sum, "min") == 0.5,
          "summary: 10th percentile, minimum");
    check(num_at(sum, "worst.0.ratio") == 0.5 && num_at(sum, "worst.0.m") == 100 &&
              num_at(sum, "worst.1.ratio") == 0.8 && num_at(sum, "worst.5.ratio") == 1.3 &&
              json_array_size(json_object_get(sum, "worst")) == 6,
          "summary: the worst rows, ascending");
    /* bands: 1-16 {1.2, 0.8}, 17-128 {0.5}, 129-512 {0.9}, 513-2048 {1.0}, 2049-8192
     * {1.3}, 8193- none */
    check(num_at(sum, "by_m.0.count") == 2 && fabs(num_at(sum, "by_m.0.geomean") -
                                                   sqrt(1.2 * 0.8)) < 1e-12 &&
              num_at(sum, "by_m.3.count") == 1 && num_at(sum, "by_m.5.count") == 0 &&
              isnan(num_at(sum, "by_m.5.geomean")),
          "summary: bands of M");
    /* M-generic: rows 2 and 4 (row 9's D mismatched): 10/11 and 10/12.5 */
    check(num_at(sum, "generic.baked_over_generic.count") == 2 &&
              fabs(num_at(sum, "generic.baked_over_generic.geomean") -
                   sqrt(10 / 11.0 * 10 / 12.5)) < 1e-12 &&
              fabs(num_at(sum, "generic.peer_over_generic.geomean") -
                   sqrt(8 / 11.0 * 9 / 12.5)) < 1e-12,
          "summary: M-generic ratios");
    check(num_at(out, "random.count") == N && num_at(out, "random.max_elements") == 1 << 30,
          "summary: what was drawn");
    json_decref(out);
}

/* The family of the kernel that an offline context made with `env` (NAME=VALUE
 * pairs, NULL-terminated; unset after) plans for M x N x K bf16; "" if none. */
static const char *planned_family(const char *const *env, int64_t m, int64_t n, int64_t k,
                                  char *name, size_t len)
{
    jg_options o = {.flags = JG_CONTEXT_OFFLINE, .arch = "sm_90a", .cache_mode = JG_CACHE_OFF};
    jg_gemm_problem p = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16, .m = m,
                         .n = n, .k = k};
    jg_context *ctx = NULL;
    jg_kernel_id id;
    for (int i = 0; env[i]; i += 2)
        setenv(env[i], env[i + 1], 1);
    bool ok = jg_context_create(&o, &ctx) == JG_OK && jg_gemm_kernel_id(ctx, &p, &id) == JG_OK;
    for (int i = 0; env[i]; i += 2)
        unsetenv(env[i]);
    jg_context_destroy(ctx);
    snprintf(name, len, "%s", ok ? id.name : "");
    return ok ? kernel_family(id.name) : "";
}

/* kernel_family on the names the library gives each forced family, and the
 * plain-tiles context: plain whatever the environment forces, which it
 * leaves as it was. */
static void families(void)
{
    static const char *const swap[] = {"JITGEMM_SWAP", "1", NULL};
    static const char *const split[] = {"JITGEMM_SPLIT", "4", NULL};
    static const char *const ping[] = {"JITGEMM_PINGPONG", "1", NULL};
    static const char *const none[] = {NULL};
    char name[128], what[256];
    const char *f = planned_family(swap, 24, 4096, 4096, name, sizeof name);
    snprintf(what, sizeof what, "JITGEMM_SWAP=1: %s is %s, not swap-AB", name, f);
    check(!strncmp(f, "swap-AB", 7), what);
    f = planned_family(split, 128, 4096, 8192, name, sizeof name);
    snprintf(what, sizeof what, "JITGEMM_SPLIT=4: %s is %s, not split-K", name, f);
    check(!strcmp(f, "split-K") || !strcmp(f, "swap-AB split-K"), what);
    f = planned_family(ping, 4096, 4096, 4096, name, sizeof name);
    snprintf(what, sizeof what, "JITGEMM_PINGPONG=1: %s is %s, not ping-pong", name, f);
    check(!strcmp(f, "ping-pong"), what);
    f = planned_family(none, 4096, 4096, 4096, name, sizeof name);
    check(*f != 0, "an offline context plans 4096^3");
    check(!strcmp(kernel_family("jg_gemm_bf16_bf16_sm90a_256x128x64_s4_w2_c1_m4096n4096k4096"),
                  "tall") &&
              !strcmp(kernel_family("jg_gemm_bf16_bf16_sm90a_128x128x64_s4_w2_c2_m512n4096k64"),
                      "plain") &&
              !strcmp(kernel_family("jg_gemm_bf16_bf16_sm90a_128x64x64_s4_w2_c2_ab_k2_am_m8n64"
                                    "k64"),
                      "swap-AB split-K"),
          "kernel_family: 256-row tiles, a problem's k, swap-AB split-K");

    /* the plain-tiles context: swap-AB forced in the environment, not in it */
    jg_options o = {.flags = JG_CONTEXT_OFFLINE, .arch = "sm_90a", .cache_mode = JG_CACHE_OFF};
    jg_gemm_problem p = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16, .m = 24,
                         .n = 4096, .k = 4096};
    jg_context *ctx = NULL;
    jg_kernel_id id;
    memset(&id, 0, sizeof id);
    setenv("JITGEMM_SWAP", "1", 1);
    setenv("JITGEMM_PINGPONG", "1", 1);
    unsetenv("JITGEMM_SPLIT");
    check(family_context_create(&o, &ctx) == JG_OK && jg_gemm_kernel_id(ctx, &p, &id) == JG_OK,
          "family_context_create: an offline context plans");
    snprintf(what, sizeof what, "family_context_create: %s is not plain", id.name);
    check(!strcmp(kernel_family(id.name), "plain"), what);
    const char *sw = getenv("JITGEMM_SWAP"), *pp = getenv("JITGEMM_PINGPONG");
    check(sw && !strcmp(sw, "1") && pp && !strcmp(pp, "1") && !getenv("JITGEMM_SPLIT"),
          "family_context_create: the environment put back");
    unsetenv("JITGEMM_SWAP");
    unsetenv("JITGEMM_PINGPONG");
    jg_context_destroy(ctx);
}

/* --family-ab's summary over hand-made rows: rows per family, the rows
 * that count (both plans ran and matched), plain / ours, and the rows where
 * the plain tiles won, fastest first, at most five. */
static void family_ab(void)
{
    /* family, ours us, plain us (0: not timed), 1 error, 2 mismatch, 3 plain mismatch */
    static const struct {
        const char *family;
        double ours, plain;
        int bad;
    } in[] = {{"plain", 10, 0, 0},   {"swap-AB", 10, 12, 0}, {"swap-AB", 10, 8, 0},
              {"split-K", 10, 5, 0}, {"split-K", 10, 9, 0},  {"split-K", 10, 7, 0},
              {"split-K", 10, 6, 0}, {"split-K", 10, 9.5, 0}, {"split-K", 10, 1, 1},
              {"split-K", 10, 1, 2}, {"split-K", 10, 1, 3}, {"ping-pong", 10, 20, 0}};
    enum { N = sizeof in / sizeof in[0] };
    shape s[N];
    row r[N];
    memset(s, 0, sizeof s);
    for (int i = 0; i < N; ++i) {
        s[i] = (shape){.m = 100 + i, .n = 4096, .k = 4096, .b_count = 1, .in = JG_BF16,
                       .out = JG_BF16};
        snprintf(s[i].name, sizeof s[i].name, "r%d", i + 1);
        r[i] = (row){.s = &s[i], .origin = "nvrtc", .ours_us = in[i].ours, .family = in[i].family,
                     .plain_family_us = in[i].plain > 0 ? in[i].plain : NAN,
                     .plain_family_rel_diff = NAN};
        snprintf(r[i].kernel, sizeof r[i].kernel, "k%d", i + 1);
        if (in[i].plain > 0)
            snprintf(r[i].plain_family_kernel, sizeof r[i].plain_family_kernel, "p%d", i + 1);
        r[i].mismatch = in[i].bad == 2;
        r[i].plain_family_mismatch = in[i].bad == 3;
        if (in[i].bad == 1)
            snprintf(r[i].error, sizeof r[i].error, "failed");
    }
    json_t *o = family_summary(r, N);
    /* families in kernel_family's order, those with rows only: plain, swap-AB, split-K,
     * ping-pong */
    check(json_array_size(json_object_get(o, "by_family")) == 4, "family A/B: 4 families");
    check(num_at(o, "by_family.0.rows") == 1 && num_at(o, "by_family.0.timed") == 0 &&
              isnan(num_at(o, "by_family.0.geomean")),
          "family A/B: plain rows, none timed");
    check(num_at(o, "by_family.1.timed") == 2 &&
              fabs(num_at(o, "by_family.1.geomean") - sqrt(1.2 * 0.8)) < 1e-12,
          "family A/B: swap-AB geomean");
    check(num_at(o, "by_family.2.rows") == 8 && num_at(o, "by_family.2.timed") == 5 &&
              fabs(num_at(o, "by_family.2.geomean") -
                   exp((log(0.5) + log(0.9) + log(0.7) + log(0.6) + log(0.95)) / 5)) < 1e-12 &&
              num_at(o, "by_family.2.min") == 0.5,
          "family A/B: split-K, its errors and mismatches left out");
    json_t *won = json_object_get(o, "plain_won");
    check(json_array_size(won) == 5 && num_at(o, "plain_won.0.ratio") == 0.5 &&
              num_at(o, "plain_won.1.ratio") == 0.6 && num_at(o, "plain_won.4.ratio") == 0.9 &&
              num_at(o, "plain_won.0.m") == 103,
          "family A/B: the five rows where the plain tiles won most, in order");
    json_decref(o);
    /* the rows' JSON: the family columns, null where the row is plain */
    bench b;
    memset(&b, 0, sizeof b);
    b.opt.random = N;
    b.opt.family_ab = true;
    b.peak_tflops = b.fp8_peak_tflops = NAN;
    b.copy_gbs = 3000;
    json_t *split = row_json(&b, &r[3]), *plain = row_json(&b, &r[0]);
    check(!strcmp(json_string_value(json_object_get(split, "family")), "split-K") &&
              !strcmp(json_string_value(json_object_get(split, "plain_family_kernel")), "p4") &&
              num_at(split, "plain_family_us") == 5 &&
              json_is_false(json_object_get(split, "plain_family_mismatch")),
          "family A/B: a split-K row's JSON");
    check(!strcmp(json_string_value(json_object_get(plain, "family")), "plain") &&
              json_is_null(json_object_get(plain, "plain_family_kernel")) &&
              json_is_null(json_object_get(plain, "plain_family_us")) &&
              json_is_null(json_object_get(plain, "plain_family_mismatch")),
          "family A/B: a plain row's JSON: nulls");
    json_decref(split);
    json_decref(plain);
}

/* The no-peer FP64 check (sampled_rows_diff, threads over columns) on an
 * FP8 block-scale problem whose K ends in a partial block and whose N
 * spreads unevenly over threads: D's rows 0, M/2 and M-1 computed here in
 * FP64 (the scales indexed by hand) and rounded to bf16 pass; the same
 * with one element of row M-1, column N-1 off by 0.1 of max |ref| fails. */
static void sampled(void)
{
    const int64_t m = 7, n = 301, k = 300, kb = (k + 127) / 128, nb = (n + 127) / 128;
    shape s;
    memset(&s, 0, sizeof s);
    s.m = m, s.n = n, s.k = k, s.in = JG_E4M3, s.out = JG_BF16, s.scale = JG_SCALE_BLOCK;
    operands o;
    memset(&o, 0, sizeof o);
    uint8_t *a = malloc((size_t)(m * k)), *b = malloc((size_t)(n * k));
    float *sa = malloc(sizeof(float) * (size_t)(m * kb));
    float *sb = malloc(sizeof(float) * (size_t)(nb * kb));
    uint16_t *d = calloc((size_t)(m * n), sizeof *d);
    assert(a && b && sa && sb && d);
    fill_e4m3(a, (size_t)(m * k), 11);
    fill_e4m3(b, (size_t)(n * k), 12);
    jg_rng r;
    jg_rng_seed(&r, 13);
    for (int64_t i = 0; i < m * kb; ++i)
        sa[i] = (float)(0.5 + jg_rng_uniform(&r));
    for (int64_t i = 0; i < nb * kb; ++i)
        sb[i] = (float)(0.5 + jg_rng_uniform(&r));
    o.ha = a, o.hb = b, o.hsa = sa, o.hsb = sb, o.kb = kb, o.scale = JG_SCALE_BLOCK;
    const int64_t rows[3] = {0, m / 2, m - 1};
    double top = 0;
    for (int t = 0; t < 3; ++t)
        for (int64_t j = 0; j < n; ++j) {
            double ref = 0;
            for (int64_t q = 0; q < k; ++q)
                ref += load_elem(a, (size_t)(rows[t] * k + q), JG_E4M3) *
                       load_elem(b, (size_t)(j * k + q), JG_E4M3) * sa[rows[t] * kb + q / 128] *
                       sb[(j / 128) * kb + q / 128];
            d[rows[t] * n + j] = jg_f32_to_bf16((float)ref);
            top = fmax(top, fabs(ref));
        }
    const double ok = sampled_rows_diff(&o, &s, d);
    uint16_t *last = &d[(m - 1) * n + n - 1];
    *last = jg_f32_to_bf16(jg_bf16_to_f32(*last) + (float)(0.1 * top));
    const double bad = sampled_rows_diff(&o, &s, d);
    if (!(ok < 1e-2 && bad > 5e-2)) {
        fprintf(stderr, "test_bench_check: sampled rows: %g for the right D, %g with one off\n",
                ok, bad);
        ++failures;
    }
    free(a), free(b), free(sa), free(sb), free(d);
}

int main(void)
{
    sampled();
    clocks();
    summary();
    families();
    family_ab();
    one(JG_SF_SWIZZLED_128X4, 128, 512, 2048);
    one(JG_SF_ROW_MAJOR, 128, 512, 2048);
    one(JG_SF_SWIZZLED_128X4, 1, 300, 512);
    one(JG_SF_ROW_MAJOR, 64, 256, 1024);
    one(JG_SF_SWIZZLED_128X4, 200, 136, 4096);
    return failures ? 1 : 0;
}
