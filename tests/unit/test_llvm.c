/* The LLVM backend with no GPU (docs/llvm-backend.md).
 *
 *   test_llvm PTXAS CUOBJDUMP SPEC-FILE...
 *
 * Every configuration the planner emits for the spec files' lines (dense and
 * decode lines also M-generic and with PDL, as the catalog is built) has a
 * variant in the catalog, and a kernel of each variant (the first line's;
 * the others differ in M, N and K alone) compiles through it to PTX for
 * sm_90a, which ptxas
 * assembles as a whole program, as the driver does when it loads it: HGMMA
 * (16-bit) or QGMMA (e4m3) in the SASS, no local memory. A kernel the
 * catalog lacks is compiled by NVRTC with a log line; with NVRTC unavailable
 * (JITGEMM_NVRTC=none) the served ones still compile and the others fail
 * with the reason. Exits 77 in a build without LLVM or without ptxas or
 * cuobjdump. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <xxhash.h>

#include "jg_internal.h"
#include "jg_test.h"
#include "jg_test_sass.h"
#include "spec.h"
#include "spec_keys.h"

#define KERNELS_MAX 1024

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static jg_context *llvm_context(jg_log_fn log, void *user)
{
    jg_options o = {.flags = JG_CONTEXT_OFFLINE | JG_CONTEXT_BACKEND, .arch = "sm_90a",
                    .cache_mode = JG_CACHE_OFF, .backend = JG_BACKEND_LLVM, .log = log,
                    .log_user = user, .log_mask = JG_LOGC_COMPILE};
    jg_context *ctx = NULL;
    CHECK(jg_context_create(&o, &ctx) == JG_OK, "LLVM context: %s", jg_context_last_error(NULL));
    return ctx;
}

typedef struct kernels {
    jg__gemm_key keys[KERNELS_MAX];
    jg__hash128 hashes[KERNELS_MAX];
    size_t n;
    size_t lines; /* kernels planned, before one per variant */
} kernels;

/* One kernel per variant: kernels that share one differ in M, N and K alone. */
static void add_key(kernels *ks, const jg__gemm_key *key)
{
    jg__buf prelude = {0};
    jg__emit_gemm_spec(key, false, &prelude);
    XXH128_hash_t x = XXH3_128bits(prelude.data, prelude.len);
    jg__buf_free(&prelude);
    const jg__hash128 h = {x.low64, x.high64};
    for (size_t i = 0; i < ks->n; ++i)
        if (ks->hashes[i].lo == h.lo && ks->hashes[i].hi == h.hi)
            return;
    CHECK(ks->n < KERNELS_MAX, "more than %d kernels", KERNELS_MAX);
    if (ks->n < KERNELS_MAX) {
        ks->keys[ks->n] = *key;
        ks->hashes[ks->n++] = h;
    }
}

/* The kernels of one line, planned as jitgemm-variants plans them. */
static void add_line(kernels *ks, jg_context *ctx, const struct spec *s)
{
    jg__gemm_key keys[SPEC_KEYS_MAX];
    const int n = spec_line_keys(ctx, s, keys);
    CHECK(n >= 0, "line %d (%s): %s", s->line, s->name, jg_context_last_error(ctx));
    for (int i = 0; i < n; ++i) {
        if (!jg__spec_supported(&keys[i]))
            continue;
        CHECK(jg__llvm_serves(&keys[i]), "line %d (%s): no variant in the catalog", s->line,
              s->name);
        ks->lines++;
        add_key(ks, &keys[i]);
    }
}

static void read_specs(kernels *ks, jg_context *ctx, const char *path)
{
    FILE *f = fopen(path, "r");
    CHECK(f, "cannot read %s", path);
    char line[1 << 16], err[256];
    for (int n = 1; f && fgets(line, sizeof line, f); ++n) {
        struct spec s;
        const int r = spec_parse_line(line, strlen(line), n, &s, err, sizeof err);
        CHECK(r >= 0, "%s: %s", path, err);
        if (r == 0)
            add_line(ks, ctx, &s);
        spec_free(&s);
    }
    if (f)
        fclose(f);
}

/* PTX to a cubin by ptxas, whole program, as the driver's JIT compiles it. */
static bool assemble(const char *ptxas, const char *name, const jg__buf *ptx, jg__buf *cubin)
{
    char in[] = "/tmp/jg_llvm_XXXXXX", out[64], cmd[4400];
    int fd = mkstemp(in);
    const bool written = fd >= 0 && write(fd, ptx->data, ptx->len - 1) == (ssize_t)(ptx->len - 1);
    if (fd >= 0)
        close(fd);
    snprintf(out, sizeof out, "%s.cubin", in);
    snprintf(cmd, sizeof cmd, "'%s' -arch=sm_90a -o '%s' '%s' 2>&1", ptxas, out, in);
    const bool ok = written && system(cmd) == 0 && jg__buf_read_file(cubin, out);
    CHECK(ok, "%s: ptxas failed: %s", name, cmd);
    unlink(in);
    unlink(out);
    return ok;
}

/* One kernel through the backend, then its SASS: the tensor-core MMA of its
 * operand type, and no local memory. */
static void compile_served(const char *ptxas, const char *cuobjdump, const jg__gemm_key *key,
                           double *total_ms)
{
    char name[128];
    jg__gemm_kernel_name(key, "sm_90a", name);
    CHECK(jg__llvm_serves(key), "%s: no variant in the catalog", name);
    jg__buf ptx = {0}, cubin = {0}, log = {0};
    const double t0 = now_ms();
    const jg_status st = jg__llvm_compile(key, name, "sm_90a", &ptx, NULL, &log);
    const double ms = now_ms() - t0;
    *total_ms += ms;
    CHECK(st == JG_OK && ptx.len > 1 && ptx.data[ptx.len - 1] == 0, "%s: %s\n%s", name,
          jg_status_name(st), log.data ? log.data : "");
    if (st == JG_OK && assemble(ptxas, name, &ptx, &cubin)) {
        char *sass = check_no_local(cuobjdump, name, &cubin);
        const char *mma = key->a_type == JG_E4M3 ? "QGMMA." : "HGMMA.";
        CHECK(sass && strstr(sass, mma), "%s: no %s in its SASS", name, mma);
        char fn[160];
        snprintf(fn, sizeof fn, "Function : %s\n", name);
        CHECK(sass && strstr(sass, fn), "%s: the module's function has another name", name);
        free(sass);
    }
    printf("%s: %.0f ms to PTX, %zu bytes of cubin\n", name, ms, cubin.len);
    jg__buf_free(&ptx);
    jg__buf_free(&cubin);
    jg__buf_free(&log);
}

/* INFO and above on the compile category, in one buffer. */
static void capture_compile(void *user, jg_log_level level, const char *category, const char *msg)
{
    captured *c = user;
    (void)level, (void)category;
    size_t used = strlen(c->text);
    snprintf(c->text + used, sizeof c->text - used, "%s\n", msg);
}

/* A problem whose kernel no spec line needs (FP32 output of a BF16 GEMM,
 * N = 1000) is compiled by NVRTC with a log line; with NVRTC off it fails
 * with both reasons, while a served kernel still compiles. */
static void test_fallback(void)
{
    static captured c;
    memset(&c, 0, sizeof c);
    jg_context *ctx = llvm_context(capture_compile, &c);
    if (!ctx)
        return;
    jg_gemm_problem odd = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_FP32,
                           .m = 512, .n = 1000, .k = 512};
    jg__gemm_key key;
    CHECK(jg__gemm_kernel_key(ctx, &odd, &key) == JG_OK, "key: %s", jg_context_last_error(ctx));
    CHECK(!jg__llvm_serves(&key), "the catalog serves an FP32-output kernel");
    jg_plan *plan = NULL;
    jg_status st = jg_gemm_plan(ctx, &odd, &plan);
    CHECK(st == JG_OK, "fallback: %s", jg_context_last_error(ctx));
    CHECK(strstr(c.text, "has no variant for it: compiling it with NVRTC") &&
              strstr(c.text, "with NVRTC in"),
          "fallback not logged: %s", c.text);

    setenv("JITGEMM_NVRTC", "none", 1);
    odd.n = 1008; /* another kernel */
    st = jg_gemm_plan(ctx, &odd, &plan);
    CHECK(st == JG_ERR_COMPILE && strstr(jg_context_last_error(ctx), "JITGEMM_NVRTC=none"),
          "no NVRTC: %s (%s)", jg_status_name(st), jg_context_last_error(ctx));
    jg_gemm_problem served = {.a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16,
                              .m = 4096, .n = 4096, .k = 4096 + 64};
    c.text[0] = 0;
    st = jg_gemm_plan(ctx, &served, &plan);
    CHECK(st == JG_OK && strstr(c.text, "with LLVM in"), "LLVM without NVRTC: %s (%s; log %s)",
          jg_status_name(st), jg_context_last_error(ctx), c.text);
    unsetenv("JITGEMM_NVRTC");
    jg_context_destroy(ctx);
}

int main(int argc, char **argv)
{
    if (!jg__llvm_built()) {
        printf("built without LLVM: skipped\n");
        return JG_TEST_SKIP;
    }
    if (argc < 4 || !argv[1][0] || !argv[2][0]) {
        printf("no ptxas or cuobjdump: skipped\n");
        return JG_TEST_SKIP;
    }
    unsetenv("JITGEMM_TILE");
    jg_context *ctx = llvm_context(NULL, NULL);
    static kernels ks;
    for (int i = 3; ctx && i < argc; ++i)
        read_specs(&ks, ctx, argv[i]);
    double total = 0;
    for (size_t i = 0; i < ks.n; ++i)
        compile_served(argv[1], argv[2], &ks.keys[i], &total);
    printf("%zu kernels, %zu variants of the catalog's %zu, %.0f ms to PTX in all\n", ks.lines,
           ks.n, jg__llvm_variant_count(), total);
    CHECK(ks.n > 0, "no kernels");
    jg_context_destroy(ctx);
    test_fallback();
    return jg_test_result("test_llvm");
}
