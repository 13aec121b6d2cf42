/* Grouped NVFP4 GEMMs on the GPU against the FP64 reference, every layout:
 *   list        each group its own codes, block scales and global scales;
 *   contiguous  A's groups stacked in one tensor (row-major scales over
 *               all its rows), B's groups stacked, offsets on the device;
 *   masked      A in slots of m_max rows, counts on the device.
 * Each group's operands are made and quantized on their own (each its own
 * global scale; B's scales of the device layouts are the groups' arrays one
 * after another, as jg_grouped_args says). Exact cases (random codes,
 * power-of-two scales) must equal the reference rounded once, bit for bit;
 * quantized normals stay within the FP32 accumulation bound plus the
 * output's rounding (jg_test_nvfp4.h). Groups with 0 and 1 rows, ragged N,
 * both scale layouts, C, FP32/BF16/FP16 out. D is poisoned before each
 * launch; rows of no group must keep the poison. The device layouts run a
 * second time on the same plan after new counts are written on the
 * device (rows change groups: they take the new group's global scale).
 * A list case of 12 heights (8 wgmma widths with a workspace), two list
 * cases of odd N (D's and C's rows padded to a multiple of 8: the padding
 * must keep its poison). Then random cases (every layout, 1-8 groups, rows
 * 0, 1 or up to 300, n and k ragged, any output and scale layout), and
 * malformed arguments get their statuses.
 *   test_grouped_nvfp4 [--seed S] [--count N]   (default 8 random cases;
 *                                                exits 77 without an sm_90 GPU) */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "jg_nvfp4_ref.h"
#include "jg_test.h"
#include "jg_test_gpu.h"
#include "jg_test_nvfp4.h"

#define MAXG 12 /* the fixed cases' groups, at most */
#define RANDG 8 /* the random cases' */

typedef struct gcase {
    jg_grouped_layout layout;
    int32_t groups;
    int64_t m[MAXG]; /* rows of each group (masked: the first launch's counts) */
    int64_t n, k;
    int64_t m_max; /* masked: rows of a slot; contiguous: spare rows past the groups' */
    jg_dtype d_type;
    jg_sf_layout a_layout, b_layout;
    bool exact, with_c;
} gcase;

/* Everything of one case on the device and its host copies. */
typedef struct gstate {
    const gcase *c;
    int32_t G;
    fp4_operand a[MAXG + 1], b[MAXG]; /* contiguous: a[G] the spare rows */
    bool has_a[MAXG + 1];
    int64_t a_rows; /* rows of the stacked A (device layouts) */
    void *a_all, *a_sf_all, *b_all, *b_sf_all; /* stacked (device layouts) */
    float *ga_dev, *gb_dev;                     /* global scales per group (device layouts) */
    float ga[MAXG], gb[MAXG];                   /* their values */
    double *da;       /* device layouts: the stacked A dequantized with global 1 */
    double *db[MAXG]; /* each group's B, its global scale in */
    jg_mat d[MAXG], cm[MAXG]; /* list: per group; device layouts: [0] the whole */
} gstate;

static void *dev_alloc(size_t bytes)
{
    void *p;
    CUDA_CHECK(cudaMalloc(&p, bytes ? bytes : 16));
    return p;
}

/* Operand o's codes and scales copied into the stacked buffers at the given
 * byte offsets (device to device: the swizzled padding keeps its poison). */
static void stack_operand(const fp4_operand *o, void *codes, size_t codes_at, void *sf,
                          size_t sf_at)
{
    CUDA_CHECK(cudaMemcpy((uint8_t *)codes + codes_at, o->codes_dev, (size_t)(o->rows * o->k / 2),
                          cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemcpy((uint8_t *)sf + sf_at, o->sf_dev,
                          (size_t)jg_nvfp4_sf_bytes(o->layout, o->rows, o->k),
                          cudaMemcpyDeviceToDevice));
}

static void make_operand(jg_context *ctx, fp4_operand *o, int64_t rows, int64_t k,
                         jg_sf_layout layout, bool exact, jg_rng *r)
{
    operand_alloc(o, rows, k, layout);
    if (exact)
        operand_exact(o, r);
    else
        operand_random(ctx, o, r);
}

/* List layout: D's and C's row stride, N rounded up to 8 elements when
 * N is not a multiple of 8 (an N such as 261 needs a padded stride), else
 * 0 (packed). */
static int64_t list_ld(int64_t n)
{
    return n % 8 ? (n + 7) / 8 * 8 : 0;
}

static void state_init(jg_context *ctx, gstate *s, const gcase *c, jg_rng *r)
{
    memset(s, 0, sizeof *s);
    s->c = c;
    s->G = c->groups;
    const int64_t n = c->n, k = c->k;
    const bool list = c->layout == JG_GROUPED_LIST, masked = c->layout == JG_GROUPED_MASKED;
    for (int32_t g = 0; g < s->G; ++g) {
        make_operand(ctx, &s->b[g], n, k, c->b_layout, c->exact, r);
        s->gb[g] = s->b[g].g;
        s->db[g] = malloc(sizeof(double) * (size_t)(n * k));
        jg_ref_dequantize_nvfp4(s->b[g].codes, k, s->b[g].sf, c->b_layout, s->b[g].g, n, k,
                                s->db[g], k);
        const int64_t rows = masked ? c->m_max : c->m[g];
        s->ga[g] = c->exact ? 1.0f : 0.75f; /* a group without rows of its own */
        if (rows) {
            make_operand(ctx, &s->a[g], rows, k, c->a_layout, c->exact, r);
            s->has_a[g] = true;
            s->ga[g] = s->a[g].g;
        }
        s->a_rows += rows;
    }
    if (c->layout == JG_GROUPED_CONTIGUOUS && c->m_max) { /* spare rows of no group */
        make_operand(ctx, &s->a[s->G], c->m_max, k, c->a_layout, c->exact, r);
        s->has_a[s->G] = true;
        s->a_rows += c->m_max;
    }
    if (list) {
        for (int32_t g = 0; g < s->G; ++g) {
            if (!c->m[g])
                continue;
            jg_mat_init(&s->d[g], c->d_type, c->m[g], n, list_ld(n));
            if (c->with_c) {
                jg_mat_init(&s->cm[g], c->d_type, c->m[g], n, list_ld(n));
                jg_mat_fill_normal(&s->cm[g], r);
                jg_mat_upload(&s->cm[g]);
            }
        }
        return;
    }
    /* Stacked A and B: codes rows one after another, each operand's scale
     * array after the previous one's. */
    s->a_all = dev_alloc((size_t)(s->a_rows * k / 2));
    size_t sf_bytes = 0;
    for (int32_t g = 0; g <= s->G; ++g)
        if (s->has_a[g])
            sf_bytes += (size_t)jg_nvfp4_sf_bytes(c->a_layout, s->a[g].rows, k);
    s->a_sf_all = dev_alloc(sf_bytes);
    s->da = malloc(sizeof(double) * (size_t)(s->a_rows * k));
    size_t codes_at = 0, sf_at = 0;
    int64_t row = 0;
    for (int32_t g = 0; g <= s->G; ++g) {
        if (!s->has_a[g])
            continue;
        const fp4_operand *o = &s->a[g];
        stack_operand(o, s->a_all, codes_at, s->a_sf_all, sf_at);
        jg_ref_dequantize_nvfp4(o->codes, k, o->sf, c->a_layout, 1.0f, o->rows, k,
                                s->da + row * k, k);
        codes_at += (size_t)(o->rows * k / 2);
        sf_at += (size_t)jg_nvfp4_sf_bytes(c->a_layout, o->rows, k);
        row += o->rows;
    }
    const size_t b_sf_one = (size_t)jg_nvfp4_sf_bytes(c->b_layout, n, k);
    s->b_all = dev_alloc((size_t)(s->G * n * k / 2));
    s->b_sf_all = dev_alloc(b_sf_one * (size_t)s->G);
    for (int32_t g = 0; g < s->G; ++g)
        stack_operand(&s->b[g], s->b_all, (size_t)(g * n * k / 2), s->b_sf_all, g * b_sf_one);
    s->ga_dev = dev_alloc(sizeof(float) * MAXG);
    s->gb_dev = dev_alloc(sizeof(float) * MAXG);
    CUDA_CHECK(cudaMemcpy(s->ga_dev, s->ga, sizeof(float) * (size_t)s->G, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(s->gb_dev, s->gb, sizeof(float) * (size_t)s->G, cudaMemcpyHostToDevice));
    jg_mat_init(&s->d[0], c->d_type, s->a_rows, n, 0);
    if (c->with_c) {
        jg_mat_init(&s->cm[0], c->d_type, s->a_rows, n, 0);
        jg_mat_fill_normal(&s->cm[0], r);
        jg_mat_upload(&s->cm[0]);
    }
}

static void state_free(gstate *s)
{
    const bool list = s->c->layout == JG_GROUPED_LIST;
    for (int32_t g = 0; g <= s->G; ++g) {
        if (s->has_a[g])
            operand_free(&s->a[g]);
        if (g < s->G) {
            operand_free(&s->b[g]);
            free(s->db[g]);
        }
        if (g < s->G && (list ? s->c->m[g] != 0 : g == 0)) {
            jg_mat_free(&s->d[g]);
            if (s->c->with_c)
                jg_mat_free(&s->cm[g]);
        }
    }
    if (!list) {
        CUDA_CHECK(cudaFree(s->a_all));
        CUDA_CHECK(cudaFree(s->a_sf_all));
        CUDA_CHECK(cudaFree(s->b_all));
        CUDA_CHECK(cudaFree(s->b_sf_all));
        CUDA_CHECK(cudaFree(s->ga_dev));
        CUDA_CHECK(cudaFree(s->gb_dev));
        free(s->da);
    }
}

/* Rows of each group: list and masked, from 0 in the group's own D (masked:
 * slot g of m_max rows); contiguous, `first` from the device's offsets. */
static bool check_launch(gstate *s, const int64_t *m, const int64_t *first, float alpha,
                         float beta, const char *what)
{
    const gcase *c = s->c;
    const int64_t n = c->n, k = c->k;
    const bool list = c->layout == JG_GROUPED_LIST;
    fp4_check ck;
    fp4_check_init(&ck, c->d_type, c->exact, k);
    int64_t untouched_bad = 0;
    if (!list) {
        jg_mat_download(&s->d[0]);
        /* Rows of no group keep their poison. */
        bool *in = calloc((size_t)s->a_rows, 1);
        for (int32_t g = 0; g < s->G; ++g)
            for (int64_t i = 0; i < m[g]; ++i)
                in[first[g] + i] = true;
        for (int64_t row = 0; row < s->a_rows; ++row)
            for (int64_t j = 0; !in[row] && j < n; ++j)
                untouched_bad += !jg_mat_is_poison(&s->d[0], row, j);
        free(in);
    }
    double *arow = malloc(sizeof(double) * (size_t)k);
    for (int32_t g = 0; g < s->G; ++g) {
        if (!m[g])
            continue;
        jg_mat *d = list ? &s->d[g] : &s->d[0];
        const jg_mat *cm = list ? &s->cm[g] : &s->cm[0];
        if (list) {
            jg_mat_download(d);
            for (int64_t i = 0; i < m[g]; ++i) /* a padded stride's columns past N */
                for (int64_t j = n; j < d->ld; ++j)
                    untouched_bad += !jg_mat_is_poison(d, i, j);
        }
        double *da_g = NULL;
        if (list) {
            da_g = malloc(sizeof(double) * (size_t)(m[g] * k));
            jg_ref_dequantize_nvfp4(s->a[g].codes, k, s->a[g].sf, c->a_layout, s->a[g].g, m[g],
                                    k, da_g, k);
        }
        for (int64_t i = 0; i < m[g]; ++i) {
            const int64_t row = list ? i : first[g] + i;
            const double *src = list ? da_g + i * k : arow;
            if (!list)
                for (int64_t q = 0; q < k; ++q)
                    arow[q] = s->da[row * k + q] * s->ga[g];
            for (int64_t j = 0; j < n; ++j) {
                double sum, sum_abs;
                fp4_dot(src, s->db[g] + j * k, k, &sum, &sum_abs);
                const double cv = c->with_c ? jg_mat_get(cm, row, j) : 0.0;
                fp4_check_element(&ck, d, row, j, i, j, alpha * sum + beta * cv, sum_abs, alpha,
                                  beta, cv);
            }
        }
        free(da_g);
    }
    free(arow);
    const bool ok = fp4_check_ok(&ck) && untouched_bad == 0;
    static const char *const layouts[] = {"", "list", "contiguous", "masked"};
    CHECK(ok,
          "%s %s, %d groups, n %lld, k %lld -> %s, sf %s/%s%s%s: %lld out of bounds (first "
          "row %lld of its group, col %lld), %lld poison overwritten, |err|_F %.3g vs %.3g",
          layouts[c->layout], what, (int)s->G, (long long)n, (long long)k,
          jg_test_dtype_str(c->d_type), c->a_layout == JG_SF_ROW_MAJOR ? "row" : "128x4",
          c->b_layout == JG_SF_ROW_MAJOR ? "row" : "128x4", c->exact ? ", exact" : "",
          c->with_c ? ", C" : "", (long long)ck.bad, (long long)ck.first_i,
          (long long)ck.first_j, (long long)untouched_bad, sqrt(ck.err2), sqrt(ck.bound2));
    printf("  %s %s: %d groups (", layouts[c->layout], what, (int)s->G);
    for (int32_t g = 0; g < s->G; ++g)
        printf("%s%lld", g ? " " : "", (long long)m[g]);
    printf(") x %lld x %lld -> %s, sf %s/%s%s%s: max |err| %.3g: %s\n", (long long)n,
           (long long)k, jg_test_dtype_str(c->d_type),
           c->a_layout == JG_SF_ROW_MAJOR ? "row" : "128x4",
           c->b_layout == JG_SF_ROW_MAJOR ? "row" : "128x4", c->exact ? " exact" : "",
           c->with_c ? " +C" : "", ck.worst, ok ? "ok" : "FAILED");
    return ok;
}

static void poison_all(gstate *s)
{
    if (s->c->layout != JG_GROUPED_LIST) {
        jg_mat_poison(&s->d[0]);
        return;
    }
    for (int32_t g = 0; g < s->G; ++g)
        if (s->c->m[g])
            jg_mat_poison(&s->d[g]);
}

/* The device's rows array for counts m: contiguous, offsets (filled into
 * first); masked, the counts (first: the slots). */
static void upload_rows(const gstate *s, int32_t *rows_dev, const int64_t *m, int64_t *first)
{
    int32_t host[MAXG + 1];
    int64_t at = 0;
    for (int32_t g = 0; g < s->G; ++g) {
        if (s->c->layout == JG_GROUPED_CONTIGUOUS) {
            host[g] = (int32_t)at;
            first[g] = at;
            at += m[g];
        } else {
            host[g] = (int32_t)m[g];
            first[g] = g * s->c->m_max;
        }
    }
    host[s->G] = (int32_t)at;
    CUDA_CHECK(cudaMemcpy(rows_dev, host, sizeof(int32_t) * (size_t)(s->G + 1),
                          cudaMemcpyHostToDevice));
}

/* Malformed arguments of a planned grouped NVFP4 problem: each its status. */
static void check_refusals(jg_context *ctx, jg_plan *plan, const jg_grouped_args *good,
                           bool list)
{
    jg_grouped_args bad = *good;
    const void *sfs[MAXG];
    jg_status st;
    if (list) {
        bad.a_sfs = NULL;
        st = jg_grouped_run(plan, &bad, NULL);
        CHECK(st == JG_ERR_NULL_POINTER, "list, a_sfs NULL: %s", jg_status_name(st));
        memcpy(sfs, good->b_sfs, sizeof sfs);
        sfs[0] = (const uint8_t *)sfs[0] + 8;
        bad = *good;
        bad.b_sfs = sfs;
        st = jg_grouped_run(plan, &bad, NULL);
        CHECK(st == JG_ERR_MISALIGNED && strstr(jg_context_last_error(ctx), "b_sfs[0]"),
              "list, b_sfs[0] + 8: %s (%s)", jg_status_name(st), jg_context_last_error(ctx));
        return;
    }
    bad.a_sf = NULL;
    st = jg_grouped_run(plan, &bad, NULL);
    CHECK(st == JG_ERR_NULL_POINTER, "a_sf NULL: %s", jg_status_name(st));
    bad = *good;
    bad.b_sf = (const uint8_t *)good->b_sf + 8;
    st = jg_grouped_run(plan, &bad, NULL);
    CHECK(st == JG_ERR_MISALIGNED, "b_sf + 8: %s", jg_status_name(st));
    bad = *good;
    bad.b_scale = NULL;
    st = jg_grouped_run(plan, &bad, NULL);
    CHECK(st == JG_ERR_NULL_POINTER, "b_scale NULL: %s", jg_status_name(st));
}

/* The list layout planned with JG_GROUPED_WORKSPACE: a workspace of the
 * plan's size, filled with 0xFF (FP16 NaNs: a piece the pre-pass left
 * unwritten and the GEMM read would show), then the same checks; with
 * `refusals`, the workspace arguments' statuses. */
static void run_workspace(jg_context *ctx, gstate *s, const jg_grouped_problem *p0,
                          const jg_grouped_args *args0, float alpha, float beta, bool refusals)
{
    jg_grouped_problem p = *p0;
    p.flags = JG_GROUPED_WORKSPACE;
    jg_plan *plan = NULL;
    jg_status st = jg_grouped_plan(ctx, &p, &plan);
    CHECK(st == JG_OK, "jg_grouped_plan nvfp4, workspace: %s: %s", jg_status_name(st),
          jg_context_last_error(ctx));
    if (st != JG_OK)
        return;
    size_t bytes = 0;
    st = jg_plan_workspace_bytes(plan, &bytes);
    int64_t rows = 0;
    for (int32_t g = 0; g < s->G; ++g)
        rows += s->c->m[g];
    const size_t want = (size_t)rows * (size_t)((s->c->k + 63) / 64 * 64) * 2;
    CHECK(st == JG_OK && bytes == want, "jg_plan_workspace_bytes: %s, %zu bytes, want %zu",
          jg_status_name(st), bytes, want);
    jg_plan_info info;
    jg_plan_get_info(plan, &info);
    printf("  workspace %zu bytes: %s\n", bytes, info.kernel_name);
    void *ws = dev_alloc(bytes + 16);
    CUDA_CHECK(cudaMemset(ws, 0xFF, bytes + 16));
    jg_grouped_args args = *args0;
    args.workspace = ws;
    args.workspace_bytes = bytes;
    poison_all(s);
    st = jg_grouped_run(plan, &args, NULL);
    CHECK(st == JG_OK, "jg_grouped_run, workspace: %s: %s", jg_status_name(st),
          jg_context_last_error(ctx));
    CUDA_CHECK(cudaDeviceSynchronize());
    const int64_t first[MAXG] = {0};
    check_launch(s, s->c->m, first, alpha, beta, "workspace");
    if (refusals && bytes) {
        jg_grouped_args bad = args;
        bad.workspace = NULL;
        st = jg_grouped_run(plan, &bad, NULL);
        CHECK(st == JG_ERR_NULL_POINTER && strstr(jg_context_last_error(ctx), "workspace"),
              "workspace NULL: %s", jg_status_name(st));
        bad.workspace = (uint8_t *)ws + 8;
        st = jg_grouped_run(plan, &bad, NULL);
        CHECK(st == JG_ERR_MISALIGNED, "workspace + 8: %s", jg_status_name(st));
        bad.workspace = ws;
        bad.workspace_bytes = bytes - 1;
        st = jg_grouped_run(plan, &bad, NULL);
        CHECK(st == JG_ERR_INVALID && strstr(jg_context_last_error(ctx), "workspace_bytes"),
              "workspace_bytes one short: %s", jg_status_name(st));
    }
    CUDA_CHECK(cudaFree(ws));
}

static void run_case(jg_context *ctx, const gcase *c, bool refusals, jg_rng *r)
{
    gstate s;
    state_init(ctx, &s, c, r);
    const bool list = c->layout == JG_GROUPED_LIST;
    const float alpha = c->exact ? (c->d_type == JG_FP16 ? 0x1p-4f : 0.5f) : 1.25f;
    const float beta = c->with_c ? -0.75f : 0.0f;
    int64_t hint[MAXG];
    memcpy(hint, c->m, sizeof hint);
    jg_grouped_problem p = {.layout = c->layout, .a_type = JG_NVFP4, .b_type = JG_NVFP4,
                            .c_type = c->with_c ? c->d_type : JG_DTYPE_NONE,
                            .d_type = c->d_type, .groups = c->groups, .m = hint, .n = c->n,
                            .k = c->k, .scale = JG_SCALE_NVFP4, .a_sf_layout = c->a_layout,
                            .b_sf_layout = c->b_layout};
    if (!list)
        p.m_max = c->layout == JG_GROUPED_MASKED ? c->m_max : s.a_rows;
    else
        p.ldd = p.ldc = list_ld(c->n);
    const void *a[MAXG] = {0}, *b[MAXG] = {0}, *cp[MAXG] = {0}, *asf[MAXG] = {0},
               *bsf[MAXG] = {0};
    void *d[MAXG] = {0};
    const float *ga[MAXG] = {0}, *gb[MAXG] = {0};
    for (int32_t g = 0; g < s.G; ++g) {
        if (list && c->m[g]) {
            a[g] = s.a[g].codes_dev;
            asf[g] = s.a[g].sf_dev;
            ga[g] = s.a[g].g_dev;
            d[g] = s.d[g].dev;
            cp[g] = c->with_c ? s.cm[g].dev : NULL;
        }
        b[g] = s.b[g].codes_dev;
        bsf[g] = s.b[g].sf_dev;
        gb[g] = s.b[g].g_dev;
    }
    jg_grouped_args args = {.a = a, .b = b, .c = c->with_c ? cp : NULL, .d = d, .alpha = alpha,
                            .beta = beta, .a_scales = ga, .b_scales = gb, .a_sfs = asf,
                            .b_sfs = bsf};
    int32_t *rows_dev = NULL;
    int64_t first[MAXG] = {0};
    if (!list) {
        a[0] = s.a_all;
        b[0] = s.b_all;
        d[0] = s.d[0].dev;
        cp[0] = c->with_c ? s.cm[0].dev : NULL;
        args.a_sfs = args.b_sfs = NULL;
        args.a_scales = args.b_scales = NULL;
        args.a_sf = s.a_sf_all;
        args.b_sf = s.b_sf_all;
        args.a_scale = s.ga_dev;
        args.b_scale = s.gb_dev;
        rows_dev = dev_alloc(sizeof(int32_t) * (MAXG + 1));
        upload_rows(&s, rows_dev, c->m, first);
    }
    jg_plan *plan = NULL;
    jg_status st = jg_grouped_plan(ctx, &p, &plan);
    CHECK(st == JG_OK, "jg_grouped_plan nvfp4: %s: %s", jg_status_name(st),
          jg_context_last_error(ctx));
    if (st == JG_OK) {
        args.rows = rows_dev;
        poison_all(&s);
        st = jg_grouped_run(plan, &args, NULL);
        CHECK(st == JG_OK, "jg_grouped_run: %s: %s", jg_status_name(st),
              jg_context_last_error(ctx));
        CUDA_CHECK(cudaDeviceSynchronize());
        check_launch(&s, c->m, first, alpha, beta, "first launch");
        if (!list) {
            /* New counts on the device, the same plan: the groups' rows
             * rotated (contiguous: the rows change groups), or slots refilled
             * differently (masked). */
            int64_t m2[MAXG];
            for (int32_t g = 0; g < s.G; ++g)
                m2[g] = c->layout == JG_GROUPED_CONTIGUOUS ? c->m[(g + 1) % s.G]
                                                           : (c->m[g] * 7 + 13) % (c->m_max + 1);
            upload_rows(&s, rows_dev, m2, first);
            poison_all(&s);
            st = jg_grouped_run(plan, &args, NULL);
            CHECK(st == JG_OK, "second jg_grouped_run: %s", jg_status_name(st));
            CUDA_CHECK(cudaDeviceSynchronize());
            check_launch(&s, m2, first, alpha, beta, "new counts");
        }
        if (refusals)
            check_refusals(ctx, plan, &args, list);
    }
    if (list && st == JG_OK) /* again with a workspace: the activation dequantized first */
        run_workspace(ctx, &s, &p, &args, alpha, beta, refusals);
    if (rows_dev)
        CUDA_CHECK(cudaFree(rows_dev));
    state_free(&s);
}

/* A random case: any layout, 1..RANDG groups with rows 0, 1 or up to 300
 * (masked: up to m_max), n a multiple of 8, k of 32 (of 256 with row-major
 * scales), any output, C or not, exact or quantized; the FP64 reference's
 * multiply-adds kept under ~1.5e8. */
static gcase random_case(jg_rng *r)
{
    static const jg_dtype outs[] = {JG_BF16, JG_FP16, JG_FP32};
    gcase c;
    memset(&c, 0, sizeof c);
    c.layout = (jg_grouped_layout)(JG_GROUPED_LIST + jg_rng_below(r, 3));
    c.groups = 1 + (int32_t)jg_rng_below(r, RANDG);
    c.a_layout = jg_rng_below(r, 2) ? JG_SF_ROW_MAJOR : JG_SF_SWIZZLED_128X4;
    c.b_layout = jg_rng_below(r, 2) ? JG_SF_ROW_MAJOR : JG_SF_SWIZZLED_128X4;
    if (c.layout == JG_GROUPED_CONTIGUOUS)
        c.a_layout = JG_SF_ROW_MAJOR; /* the only one it takes */
    const bool row_major = c.a_layout == JG_SF_ROW_MAJOR || c.b_layout == JG_SF_ROW_MAJOR;
    /* packed rows of k / 2 bytes: TMA steps 16 bytes, so k a multiple of 32 */
    c.k = row_major ? 256 * (1 + (int64_t)jg_rng_below(r, 12)) : 32 * (1 + (int64_t)jg_rng_below(r, 96));
    c.n = 8 * (1 + (int64_t)jg_rng_below(r, 128));
    c.d_type = outs[jg_rng_below(r, 3)];
    c.exact = jg_rng_below(r, 3) == 0;
    c.with_c = !c.exact && jg_rng_below(r, 2) == 0; /* beta C would round twice */
    c.m_max = c.layout == JG_GROUPED_MASKED ? 1 + (int64_t)jg_rng_below(r, 300)
              : c.layout == JG_GROUPED_CONTIGUOUS ? (int64_t)jg_rng_below(r, 40) : 0;
    const int64_t cap = c.layout == JG_GROUPED_MASKED ? c.m_max : 300;
    int64_t rows = 0;
    for (int32_t g = 0; g < c.groups; ++g) {
        const uint64_t pick = jg_rng_below(r, 8);
        c.m[g] = pick == 0 ? 0 : pick == 1 ? 1 : (int64_t)jg_rng_below(r, (uint64_t)cap + 1);
        rows += c.layout == JG_GROUPED_MASKED ? c.m_max : c.m[g];
    }
    if (c.layout == JG_GROUPED_CONTIGUOUS && rows + c.m_max == 0)
        c.m_max = 1; /* A needs a row */
    while ((rows + 1) * c.n * c.k > 150000000 && c.k > (row_major ? 256 : 32))
        c.k = row_major ? c.k / 2 / 256 * 256 : c.k / 2 / 32 * 32;
    if (c.k < (row_major ? 256 : 32))
        c.k = row_major ? 256 : 32;
    return c;
}

/* Problems refused before anything compiles. */
static void check_problem_refusals(jg_context *ctx)
{
    int64_t m[JG_GROUPED_MAX_NVFP4_GROUPS + 1];
    for (int i = 0; i <= JG_GROUPED_MAX_NVFP4_GROUPS; ++i)
        m[i] = 16;
    jg_grouped_problem p = {.layout = JG_GROUPED_LIST, .a_type = JG_NVFP4, .b_type = JG_NVFP4,
                            .d_type = JG_BF16, .groups = JG_GROUPED_MAX_NVFP4_GROUPS + 1,
                            .m = m, .n = 256, .k = 256, .scale = JG_SCALE_NVFP4,
                            .a_sf_layout = JG_SF_ROW_MAJOR, .b_sf_layout = JG_SF_ROW_MAJOR};
    jg_plan *plan = NULL;
    jg_status st = jg_grouped_plan(ctx, &p, &plan);
    CHECK(st == JG_ERR_TOO_LARGE && !plan, "41 nvfp4 groups, list: %s", jg_status_name(st));
    p.layout = JG_GROUPED_CONTIGUOUS;
    p.groups = 4;
    p.m_max = 256;
    p.a_sf_layout = JG_SF_SWIZZLED_128X4;
    st = jg_grouped_plan(ctx, &p, &plan);
    CHECK(st == JG_ERR_UNSUPPORTED && !plan && strstr(jg_context_last_error(ctx), "a_sf_layout"),
          "contiguous, swizzled A scales: %s", jg_status_name(st));
    p.a_sf_layout = JG_SF_ROW_MAJOR;
    p.k = 272; /* whole scales, but row-major scale rows of 17 bytes: TMA needs 16-byte steps */
    st = jg_grouped_plan(ctx, &p, &plan);
    CHECK(st == JG_ERR_INVALID && !plan, "k = 272, row-major: %s", jg_status_name(st));
    p.k = 256;
    p.b_sf_layout = JG_SF_LAYOUT_NONE;
    st = jg_grouped_plan(ctx, &p, &plan);
    CHECK(st == JG_ERR_INVALID && !plan && strstr(jg_context_last_error(ctx), "b_sf_layout"),
          "b_sf_layout NONE: %s", jg_status_name(st));
}

int main(int argc, char **argv)
{
    jg_test_gpu_init();
    jg_rng r;
    jg_rng_seed(&r, jg_test_seed(argc, argv, "test_grouped_nvfp4"));
    jg_context *ctx = jg_test_context();
    const jg_sf_layout R = JG_SF_ROW_MAJOR, S = JG_SF_SWIZZLED_128X4;
    const jg_grouped_layout L = JG_GROUPED_LIST, C = JG_GROUPED_CONTIGUOUS,
                            M = JG_GROUPED_MASKED;
    const gcase cases[] = {
        /* exact: bit for bit */
        {L, 3, {100, 0, 1}, 264, 1024, 0, JG_FP32, S, S, true, false},
        {C, 4, {0, 150, 33, 100}, 264, 1024, 20, JG_BF16, R, S, true, false},
        {M, 3, {160, 0, 37}, 264, 1024, 160, JG_FP16, S, S, true, false},
        /* quantized normals against the bounds */
        {L, 4, {130, 64, 7, 200}, 520, 2048, 0, JG_FP16, R, S, false, true},
        {L, 5, {40, 76, 1, 72, 0}, 256, 7168, 0, JG_FP32, S, R, false, false},
        {L, 3, {300, 17, 0}, 1000, 1056, 0, JG_BF16, S, S, false, true},
        {L, 2, {520, 8}, 136, 96, 0, JG_FP32, S, S, true, false},
        {C, 3, {64, 1, 300}, 520, 2048, 0, JG_FP32, R, R, false, true},
        {C, 5, {17, 0, 200, 90, 1}, 200, 1024, 3, JG_BF16, R, S, false, false},
        {M, 5, {5, 128, 64, 0, 99}, 520, 2048, 128, JG_BF16, R, S, false, true},
        {M, 2, {256, 100}, 1000, 1056, 256, JG_FP32, S, S, false, false},
        /* 12 heights: with a workspace, run at 8 wgmma widths (rows past
         * a chunk computed, not stored) */
        {L, 12, {8, 19, 33, 47, 62, 75, 90, 104, 121, 139, 166, 201}, 264, 512, 0, JG_BF16, S, S,
         true, false},
        /* an odd N (D's rows padded to 264): the last column stored alone */
        {L, 3, {70, 0, 133}, 261, 512, 0, JG_BF16, S, R, true, false},
        {L, 2, {9, 40}, 131, 256, 0, JG_FP32, R, S, false, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; ++i)
        run_case(ctx, &cases[i], i == 3 || i == 7, &r);
    const int count = jg_test_count(argc, argv, 8);
    printf("random cases: %d\n", count);
    for (int i = 0; i < count; ++i) {
        const gcase c = random_case(&r);
        run_case(ctx, &c, false, &r);
    }
    check_problem_refusals(ctx);
    jg_context_destroy(ctx);
    return jg_test_result("test_grouped_nvfp4");
}
