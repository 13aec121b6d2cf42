/* The LLVM backend against NVRTC on the GPU (docs/llvm-backend.md): every
 * dense and decode line of the spec files, in BF16, FP16 and FP8 with tensor,
 * row and block scales, is planned in an NVRTC context and in an LLVM one,
 * run on the same operands (random normal 16-bit values; random e4m3 codes
 * of magnitude 2^-3..2^4 and random positive scales) with D poisoned, and
 * the two D compared element by element. Reports how many cases are
 * bit-identical; fails when the LLVM plan was not compiled by LLVM, when an
 * output stays poisoned, or when the two differ by more than one unit in the
 * last place of D's type anywhere (both compute in FP32 and round once: a
 * different order of the same FP32 operations moves a result by at most a
 * rounding step). Correctness against the FP64 reference is the rest of
 * the gpu suite's, run with JITGEMM_BACKEND=llvm.
 *   test_backends [--seed S] SPEC-FILE...        exits 77 without an sm_90 GPU
 *                                                or a build without LLVM */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "jg_test.h"
#include "jg_test_gpu.h"
#include "spec.h"
#include "spec_problem.h"

typedef struct side {
    jg_context *ctx;
    captured log;
} side;

static void capture_all(void *user, jg_log_level level, const char *category, const char *msg)
{
    (void)level, (void)category;
    captured *c = user;
    size_t used = strlen(c->text);
    if (used + strlen(msg) + 2 >= sizeof c->text)
        used = 0; /* keep the latest lines */
    snprintf(c->text + used, sizeof c->text - used, "%s\n", msg);
}

static void side_open(side *s, jg_backend backend)
{
    memset(s, 0, sizeof *s);
    jg_options o = {.flags = JG_CONTEXT_BACKEND, .backend = backend, .cache_mode = JG_CACHE_OFF,
                    .log = capture_all, .log_user = &s->log, .log_mask = JG_LOGC_COMPILE};
    const jg_status st = jg_context_create(&o, &s->ctx);
    if (st == JG_ERR_UNSUPPORTED && backend == JG_BACKEND_LLVM) {
        printf("SKIP: %s\n", jg_context_last_error(NULL));
        exit(JG_TEST_SKIP);
    }
    JG_REQUIRE(NULL, st);
}

/* Random bytes of e4m3 codes: sign, exponent 4..11 (2^-3..2^4), mantissa. */
static void fill_e4m3(uint8_t *p, size_t n, jg_rng *r)
{
    for (size_t i = 0; i < n; ++i) {
        const uint64_t x = jg_rng_next(r);
        p[i] = (uint8_t)(((x & 1) << 7) | ((4 + (x >> 1) % 8) << 3) | ((x >> 8) & 7));
    }
}

static void *upload(const void *host, size_t bytes)
{
    void *dev;
    CUDA_CHECK(cudaMalloc(&dev, bytes));
    CUDA_CHECK(cudaMemcpy(dev, host, bytes, cudaMemcpyHostToDevice));
    return dev;
}

/* Positive random scales around 1/16 (FP8 sums of K products are large). */
static float *scales(size_t n, jg_rng *r)
{
    float *h = malloc(n * sizeof *h);
    for (size_t i = 0; i < n; ++i)
        h[i] = (float)(0.03 + 0.06 * jg_rng_uniform(r));
    float *d = upload(h, n * sizeof *h);
    free(h);
    return d;
}

typedef struct operands {
    void *a, *b, *d;
    float *sa, *sb;
    size_t d_bytes;
} operands;

static void operands_make(operands *o, const jg_gemm_problem *p, jg_rng *r)
{
    const size_t ab = p->a_type == JG_E4M3 ? 1 : 2;
    const size_t na = (size_t)p->m * (size_t)p->k, nb = (size_t)p->n * (size_t)p->k;
    uint8_t *h = malloc((na > nb ? na : nb) * ab);
    for (int which = 0; which < 2; ++which) {
        const size_t n = which ? nb : na;
        if (ab == 1) {
            fill_e4m3(h, n, r);
        } else {
            uint16_t *h16 = (uint16_t *)h;
            for (size_t i = 0; i < n; ++i)
                h16[i] = (uint16_t)jg_test_encode(p->a_type, (float)jg_rng_normal(r));
        }
        *(which ? &o->b : &o->a) = upload(h, n * ab);
    }
    free(h);
    o->d_bytes = (size_t)p->m * (size_t)p->n * jg_test_dtype_size(p->d_type);
    CUDA_CHECK(cudaMalloc(&o->d, o->d_bytes));
    o->sa = o->sb = NULL;
    const size_t kb = (size_t)(p->k + 127) / 128;
    if (p->scale == JG_SCALE_TENSOR) {
        o->sa = scales(1, r);
        o->sb = scales(1, r);
    } else if (p->scale == JG_SCALE_ROW) {
        o->sa = scales((size_t)p->m, r);
        o->sb = scales((size_t)p->n, r);
    } else if (p->scale == JG_SCALE_BLOCK) {
        o->sa = scales((size_t)p->m * kb, r);
        o->sb = scales((size_t)(p->n + 127) / 128 * kb, r);
    }
}

static void operands_free(operands *o)
{
    cudaFree(o->a);
    cudaFree(o->b);
    cudaFree(o->d);
    cudaFree(o->sa);
    cudaFree(o->sb);
}

/* D through one backend, poisoned first; the host copy returned. */
static void *run(side *s, const jg_gemm_problem *p, const operands *o, bool want_llvm,
                 const char *what)
{
    s->log.text[0] = 0;
    jg_plan *plan;
    JG_REQUIRE(s->ctx, jg_gemm_plan(s->ctx, p, &plan));
    jg_plan_info info;
    JG_REQUIRE(s->ctx, jg_plan_get_info(plan, &info));
    if (want_llvm)
        CHECK(strstr(s->log.text, "with LLVM in"), "%s: %s was not compiled by LLVM: %s", what,
              info.kernel_name, s->log.text);
    CUDA_CHECK(cudaMemset(o->d, 0xFF, o->d_bytes));
    jg_gemm_args args = {.a = o->a, .b = o->b, .d = o->d, .alpha = 1.0f, .a_scale = o->sa,
                         .b_scale = o->sb};
    JG_REQUIRE(s->ctx, jg_gemm_run(plan, &args, NULL));
    CUDA_CHECK(cudaDeviceSynchronize());
    void *h = malloc(o->d_bytes);
    CUDA_CHECK(cudaMemcpy(h, o->d, o->d_bytes, cudaMemcpyDeviceToHost));
    return h;
}

/* Elements that differ, and the largest difference in units of D's last
 * place (16-bit D: codes of one sign are ordered like the values). */
static void compare(const jg_gemm_problem *p, const uint16_t *x, const uint16_t *y,
                    const char *what, int *identical)
{
    const size_t n = (size_t)p->m * (size_t)p->n;
    size_t differ = 0, poison = 0;
    long worst = 0;
    for (size_t i = 0; i < n; ++i) {
        poison += x[i] == 0xFFFF || y[i] == 0xFFFF;
        if (x[i] == y[i])
            continue;
        ++differ;
        const long d = (x[i] >> 15) != (y[i] >> 15) ? 1L << 16 : labs((long)x[i] - (long)y[i]);
        worst = d > worst ? d : worst;
    }
    printf("%s: %zu of %zu elements differ, at most %ld ulp\n", what, differ, n, worst);
    CHECK(poison == 0, "%s: %zu outputs not written", what, poison);
    CHECK(worst <= 1, "%s: NVRTC and LLVM differ by %ld ulp", what, worst);
    *identical += differ == 0;
}

static void run_line(side *nv, side *lv, const struct spec *s, jg_rng *r, int *cases,
                     int *identical)
{
    static const struct {
        enum spec_dtype dtype;
        enum spec_scale scale;
    } types[] = {{SPEC_BF16, SPEC_SCALE_NONE}, {SPEC_FP16, SPEC_SCALE_NONE},
                 {SPEC_FP8, SPEC_SCALE_TENSOR}, {SPEC_FP8, SPEC_SCALE_ROW},
                 {SPEC_FP8, SPEC_SCALE_BLOCK}};
    for (size_t t = 0; t < sizeof types / sizeof types[0]; ++t) {
        struct spec line = *s;
        line.dtype = types[t].dtype;
        line.scale = types[t].scale;
        const jg_gemm_problem p = spec_problem(&line, JG_DTYPE_NONE, 0);
        char what[160];
        snprintf(what, sizeof what, "%s %s%s%s", s->name, spec_dtype_name(line.dtype),
                 line.scale ? " " : "", spec_scale_name(line.scale));
        operands o;
        operands_make(&o, &p, r);
        void *x = run(nv, &p, &o, false, what);
        void *y = run(lv, &p, &o, true, what);
        compare(&p, x, y, what, identical);
        ++*cases;
        free(x);
        free(y);
        operands_free(&o);
    }
}

int main(int argc, char **argv)
{
    uint64_t seed = (uint64_t)time(NULL);
    int first = 1;
    if (argc > 2 && !strcmp(argv[1], "--seed")) {
        seed = strtoull(argv[2], NULL, 10);
        first = 3;
    }
    jg_test_gpu_init();
    printf("seed %llu\n", (unsigned long long)seed);
    jg_rng r;
    jg_rng_seed(&r, seed);
    side nv, lv;
    side_open(&nv, JG_BACKEND_NVRTC);
    side_open(&lv, JG_BACKEND_LLVM);
    int cases = 0, identical = 0;
    char line[1 << 16], err[256];
    for (int i = first; i < argc; ++i) {
        FILE *f = fopen(argv[i], "r");
        CHECK(f, "cannot read %s", argv[i]);
        for (int n = 1; f && fgets(line, sizeof line, f); ++n) {
            struct spec s;
            if (spec_parse_line(line, strlen(line), n, &s, err, sizeof err) == 0 &&
                s.kind != SPEC_GROUPED)
                run_line(&nv, &lv, &s, &r, &cases, &identical);
            spec_free(&s);
        }
        if (f)
            fclose(f);
    }
    printf("%d of %d cases bit-identical between NVRTC and LLVM\n", identical, cases);
    CHECK(cases > 0, "no cases");
    jg_context_destroy(nv.ctx);
    jg_context_destroy(lv.ctx);
    return jg_test_result("test_backends");
}
