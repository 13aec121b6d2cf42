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
 * stand-in NVML that replays a fixed sequence of clocks and reasons, and
 * --random's summary over hand-made rows. */
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

int main(void)
{
    clocks();
    summary();
    one(JG_SF_SWIZZLED_128X4, 128, 512, 2048);
    one(JG_SF_ROW_MAJOR, 128, 512, 2048);
    one(JG_SF_SWIZZLED_128X4, 1, 300, 512);
    one(JG_SF_ROW_MAJOR, 64, 256, 1024);
    one(JG_SF_SWIZZLED_128X4, 200, 136, 4096);
    return failures ? 1 : 0;
}
