/* Bad input to every public function of jitgemm.h, table by table: NULLs,
 * zero, negative and oversized sizes, misaligned pointers and leading
 * dimensions, unsupported type combinations, invalid enum values, unknown
 * flags. Each row expects its specific status and a message (from
 * jg_context_last_error of the context, or of NULL for calls without one)
 * that starts with the status name and names the field. Nothing crashes,
 * nothing is compiled for a rejected problem, nothing is launched: the
 * contexts are offline (no GPU), and jg_gemm_run checks its arguments
 * before it reports JG_ERR_OFFLINE. Device pointers are fake addresses.
 *
 * Grouped GEMM does not exist yet, so "too many groups" has no row: add
 * one when a grouped entry point appears. */
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jg_internal.h"
#include "jg_test.h"
#include "jg_test_problem.h" /* NONE, BF16, ..., P, PS */

#define BADT ((jg_dtype)99)
#define NEGT ((jg_dtype)-1)

/* ---- the error log callback: every failure on a context is logged -------- */

typedef struct error_log {
    int errors;
    char last[8192];
} error_log;

static void capture_errors(void *user, jg_log_level level, const char *category, const char *msg)
{
    error_log *c = user;
    (void)category;
    if (level != JG_LOG_ERROR)
        return;
    c->errors++;
    snprintf(c->last, sizeof c->last, "%s", msg);
}

static error_log ctx_log;

/* ---- message checks ------------------------------------------------------- */

/* Puts a known failure into the slot a row reads (the context's or the
 * thread's), so that a row whose call writes nothing is caught. */
#define PRIMER_CTX "m = -777"
#define PRIMER_NULL "options.sm_count -777"

static void prime(jg_context *ctx)
{
    if (ctx) {
        jg_gemm_problem p;
        memset(&p, 0, sizeof p);
        p.a_type = p.b_type = p.d_type = BF16;
        p.m = -777;
        p.n = p.k = 64;
        jg_plan *out;
        jg_gemm_plan(ctx, &p, &out);
        CHECK(strstr(jg_context_last_error(ctx), PRIMER_CTX), "priming the context's error");
    } else {
        jg_options o;
        memset(&o, 0, sizeof o);
        o.flags = JG_CONTEXT_OFFLINE;
        o.arch = "sm_90a";
        o.sm_count = -777;
        jg_context *out;
        jg_context_create(&o, &out);
        CHECK(strstr(jg_context_last_error(NULL), PRIMER_NULL), "priming the thread's error");
    }
    ctx_log.errors = 0;
    ctx_log.last[0] = 0;
}

/* The row's message: "<STATUS NAME>: ...", holding w1 and w2 (either may be
 * NULL). For a context's failure, the same text went to the log callback. */
static void check_message(const char *what, const jg_context *ctx, jg_status want,
                          const char *w1, const char *w2)
{
    const char *msg = jg_context_last_error(ctx);
    CHECK(msg != NULL, "%s: last error is NULL", what);
    if (!msg)
        return;
    char head[64];
    snprintf(head, sizeof head, "%s: ", jg_status_name(want));
    CHECK(!strncmp(msg, head, strlen(head)), "%s: message does not start with \"%s\": \"%s\"", what,
          head, msg);
    CHECK(!strstr(msg, ctx ? PRIMER_CTX : PRIMER_NULL), "%s: the call left no message of its own",
          what);
    CHECK(!w1 || strstr(msg, w1), "%s: message lacks \"%s\": \"%s\"", what, w1, msg);
    CHECK(!w2 || strstr(msg, w2), "%s: message lacks \"%s\": \"%s\"", what, w2, msg);
    if (ctx)
        CHECK(ctx_log.errors == 1 && !strcmp(ctx_log.last, msg),
              "%s: %d errors logged, last \"%s\"", what, ctx_log.errors, ctx_log.last);
}

/* ---- the fixture: an offline context and two plans ---------------------------- */

typedef struct fixture {
    jg_context *ctx;
    jg_gemm_problem baked_p, generic_p;
    jg_plan *baked;   /* m = n = k = 64 baked in, no C */
    jg_plan *generic; /* JG_GEMM_M_GENERIC, with C (bf16) */
} fixture;

static fixture fx;

static uint64_t compiles(void)
{
    jg_context_stats s;
    memset(&s, 0xff, sizeof s);
    jg_context_get_stats(fx.ctx, &s);
    return s.plans_compiled + s.compile_failures;
}

static bool setup(void)
{
    jg_options o;
    memset(&o, 0, sizeof o);
    o.flags = JG_CONTEXT_OFFLINE;
    o.arch = "sm_90a";
    o.cache_mode = JG_CACHE_OFF;
    o.log = capture_errors;
    o.log_user = &ctx_log;
    jg_status st = jg_context_create(&o, &fx.ctx);
    CHECK(st == JG_OK && fx.ctx, "offline context: %s", jg_context_last_error(NULL));
    if (st != JG_OK)
        return false;
    CHECK(!strcmp(jg_context_last_error(fx.ctx), ""), "a fresh context has an error");
    memset(&fx.baked_p, 0, sizeof fx.baked_p);
    fx.baked_p.a_type = fx.baked_p.b_type = fx.baked_p.d_type = BF16;
    fx.baked_p.m = fx.baked_p.n = fx.baked_p.k = 64;
    fx.generic_p = fx.baked_p;
    fx.generic_p.flags = JG_GEMM_M_GENERIC;
    fx.generic_p.c_type = BF16;
    st = jg_gemm_plan(fx.ctx, &fx.baked_p, &fx.baked);
    CHECK(st == JG_OK, "baked plan: %s", jg_context_last_error(fx.ctx));
    st = jg_gemm_plan(fx.ctx, &fx.generic_p, &fx.generic);
    CHECK(st == JG_OK, "generic plan: %s", jg_context_last_error(fx.ctx));
    CHECK(compiles() == 2, "setup: %llu compiles", (unsigned long long)compiles());
    return fx.baked && fx.generic;
}

/* ---- jg_status_name, jg_status_string, jg_version --------------------------------- */

static void test_status_functions(void)
{
    static const int unknown[] = {1, 2, 100, -14, -100, INT_MAX, INT_MIN, INT_MIN + 1};
    for (size_t i = 0; i < JG_ARRAY_LEN(unknown); ++i) {
        jg_status s = (jg_status)unknown[i];
        const char *name = jg_status_name(s), *text = jg_status_string(s);
        CHECK(name && !strcmp(name, "JG_UNKNOWN_STATUS"), "status %d: name \"%s\"", unknown[i],
              name ? name : "(null)");
        CHECK(text && !strcmp(text, "unknown status"), "status %d: text \"%s\"", unknown[i],
              text ? text : "(null)");
    }
    /* Every listed status has its own name and text. */
#define JG_STATUS_CHECK_(name, value, text)                                              \
    CHECK(!strcmp(jg_status_name(JG_##name), "JG_" #name), "name of %d", value);        \
    CHECK(!strcmp(jg_status_string(JG_##name), text), "text of %d", value);
    JG_STATUS_LIST(JG_STATUS_CHECK_)
#undef JG_STATUS_CHECK_
    CHECK(jg_version() && !strcmp(jg_version(), JITGEMM_VERSION_STRING), "jg_version: %s",
          jg_version() ? jg_version() : "(null)");
}

/* ---- jg_context_create ------------------------------------------------------------ */

static char long_arch[300];
static char long_dir[6000];

static const struct {
    const char *what;
    bool opt_null, out_null;
    uint32_t flags;
    const char *arch;
    int cache_mode, sm_count;
    const char *cache_dir;
    jg_status want;
    const char *w1, *w2;
} create_rows[] = {
#define OFF JG_CONTEXT_OFFLINE
#define OFFC JG_CACHE_OFF
    /* what                  opt_null out_null flags        arch      cache_mode  sm  dir */
    {"out NULL",             false, true,  OFF,         "sm_90a", OFFC,       0,   NULL, JG_ERR_NULL_POINTER, "out", NULL},
    {"opt and out NULL",     true,  true,  0,           NULL,     0,          0,   NULL, JG_ERR_NULL_POINTER, "out", NULL},
    {"flags bit 4",          false, false, OFF | 16u,   "sm_90a", OFFC,       0,   NULL, JG_ERR_INVALID, "options.flags", "0x11"},
    {"flags bit 31",         false, false, 0x80000000u, "sm_90a", OFFC,       0,   NULL, JG_ERR_INVALID, "options.flags", "0x80000000"},
    {"cache_mode 4",         false, false, OFF,         "sm_90a", 4,          0,   NULL, JG_ERR_INVALID, "options.cache_mode 4", NULL},
    {"cache_mode -1",        false, false, OFF,         "sm_90a", -1,         0,   NULL, JG_ERR_INVALID, "options.cache_mode -1", NULL},
    {"cache_mode INT_MAX",   false, false, OFF,         "sm_90a", INT_MAX,    0,   NULL, JG_ERR_INVALID, "options.cache_mode", NULL},
    {"offline, arch NULL",   false, false, OFF,         NULL,     OFFC,       0,   NULL, JG_ERR_INVALID, "options.arch", "OFFLINE"},
    {"arch \"\"",            false, false, OFF,         "",       OFFC,       0,   NULL, JG_ERR_UNSUPPORTED_ARCH, "options.arch", "sm_90a"},
    {"arch sm_80",           false, false, OFF,         "sm_80",  OFFC,       0,   NULL, JG_ERR_UNSUPPORTED_ARCH, "options.arch sm_80", NULL},
    {"arch sm_90 (no a)",    false, false, OFF,         "sm_90",  OFFC,       0,   NULL, JG_ERR_UNSUPPORTED_ARCH, "options.arch sm_90:", NULL},
    {"arch SM_90A",          false, false, OFF,         "SM_90A", OFFC,       0,   NULL, JG_ERR_UNSUPPORTED_ARCH, "options.arch SM_90A", NULL},
    {"arch 299 chars",       false, false, OFF,         long_arch, OFFC,      0,   NULL, JG_ERR_UNSUPPORTED_ARCH, "options.arch xxxx", NULL},
    {"sm_count -1",          false, false, OFF,         "sm_90a", OFFC,       -1,  NULL, JG_ERR_INVALID, "options.sm_count -1", NULL},
    {"sm_count INT_MIN",     false, false, OFF,         "sm_90a", OFFC,       INT_MIN, NULL, JG_ERR_INVALID, "options.sm_count", NULL},
    /* Online: the test points JITGEMM_LIBCUDA at nothing, so this is the
     * same on machines with and without a GPU. */
    {"online, no driver",    false, false, 0,           NULL,     OFFC,       0,   NULL, JG_ERR_NO_DRIVER, "/nonexistent/libcuda.so.1", NULL},
    {"opt NULL, no driver",  true,  false, 0,           NULL,     0,          0,   NULL, JG_ERR_NO_DRIVER, "/nonexistent/libcuda.so.1", NULL},
    /* Valid. */
    {"offline",              false, false, OFF,         "sm_90a", OFFC,       0,   NULL, JG_OK, NULL, NULL},
    {"sm_count INT_MAX",     false, false, OFF,         "sm_90a", OFFC,       INT_MAX, NULL, JG_OK, NULL, NULL},
    {"sm_count 1",           false, false, OFF,         "sm_90a", OFFC,       1,   NULL, JG_OK, NULL, NULL},
    /* An unusable cache directory is not an error: a warning, memory only. */
    {"cache_dir too long",   false, false, OFF,         "sm_90a", JG_CACHE_READWRITE, 0, long_dir, JG_OK, NULL, NULL},
    {"cache_dir missing, read-only", false, false, OFF, "sm_90a", JG_CACHE_READ, 0, "/nonexistent/jg_cache", JG_OK, NULL, NULL},
#undef OFF
#undef OFFC
};

typedef struct warnings {
    int n;
    char text[8192];
} warnings;

static void capture_warnings(void *user, jg_log_level level, const char *category, const char *msg)
{
    warnings *w = user;
    (void)category;
    if (level > JG_LOG_WARN)
        return;
    w->n++;
    size_t used = strlen(w->text);
    snprintf(w->text + used, sizeof w->text - used, "%s\n", msg);
}

static void test_context_create(void)
{
    memset(long_arch, 'x', sizeof long_arch - 1);
    memcpy(long_arch, "xxxx", 4);
    memset(long_dir, 'd', sizeof long_dir - 1);
    long_dir[0] = '/';
    for (size_t i = 0; i < JG_ARRAY_LEN(create_rows); ++i) {
        const char *what = create_rows[i].what;
        jg_options o;
        memset(&o, 0, sizeof o);
        o.flags = create_rows[i].flags;
        o.arch = create_rows[i].arch;
        o.cache_mode = (jg_cache_mode)create_rows[i].cache_mode;
        o.sm_count = create_rows[i].sm_count;
        o.cache_dir = create_rows[i].cache_dir;
        warnings w;
        memset(&w, 0, sizeof w);
        o.log = capture_warnings;
        o.log_user = &w;
        prime(NULL);
        jg_context *ctx = (jg_context *)&o; /* not NULL: a failure must clear it */
        jg_status st = jg_context_create(create_rows[i].opt_null ? NULL : &o,
                                         create_rows[i].out_null ? NULL : &ctx);
        CHECK(st == create_rows[i].want, "%s: got %s, want %s (%s)", what, jg_status_name(st),
              jg_status_name(create_rows[i].want), jg_context_last_error(NULL));
        if (st == JG_OK) {
            CHECK(ctx && ctx != (jg_context *)&o && !strcmp(jg_context_arch(ctx), "sm_90a"),
                  "%s: no context", what);
            CHECK(ctx && !strcmp(jg_context_last_error(ctx), ""), "%s: a fresh context has an error",
                  what);
            if (create_rows[i].cache_dir == long_dir)
                CHECK(w.n == 1 && strstr(w.text, "cache directory") && strstr(w.text, "memory only"),
                      "%s: expected one warning, got %d: %s", what, w.n, w.text);
            if (ctx && ctx != (jg_context *)&o)
                jg_context_destroy(ctx);
            continue;
        }
        if (!create_rows[i].out_null)
            CHECK(ctx == NULL, "%s: *out not cleared", what);
        if (st == create_rows[i].want)
            check_message(what, NULL, create_rows[i].want, create_rows[i].w1, create_rows[i].w2);
    }
}

/* ---- NULL pointers, one wrapper per (function, argument) --------------------------- */

static jg_gemm_args good_args(void)
{
    jg_gemm_args a;
    memset(&a, 0, sizeof a);
    a.a = (const void *)(uintptr_t)0x10000;
    a.b = (const void *)(uintptr_t)0x20000;
    a.c = (const void *)(uintptr_t)0x30000;
    a.d = (void *)(uintptr_t)0x40000;
    a.alpha = 1.0f;
    return a;
}

static jg_plan *plan_sentinel(void) { return (jg_plan *)(uintptr_t)0x1230; }

static jg_status n_stats_ctx(void)
{
    jg_context_stats s;
    return jg_context_get_stats(NULL, &s);
}
static jg_status n_stats_out(void) { return jg_context_get_stats(fx.ctx, NULL); }
static jg_status n_stats_both(void) { return jg_context_get_stats(NULL, NULL); }
static jg_status n_cache_ctx(void)
{
    jg_cache_stats s;
    return jg_context_get_cache_stats(NULL, &s);
}
static jg_status n_cache_out(void) { return jg_context_get_cache_stats(fx.ctx, NULL); }
static jg_status n_cache_both(void) { return jg_context_get_cache_stats(NULL, NULL); }
static jg_status n_plan_ctx(void)
{
    jg_plan *out = plan_sentinel();
    jg_status st = jg_gemm_plan(NULL, &fx.baked_p, &out);
    CHECK(out == NULL, "jg_gemm_plan(NULL ctx): *out not cleared");
    return st;
}
static jg_status n_plan_problem(void)
{
    jg_plan *out = plan_sentinel();
    jg_status st = jg_gemm_plan(fx.ctx, NULL, &out);
    CHECK(out == NULL, "jg_gemm_plan(NULL problem): *out not cleared");
    return st;
}
static jg_status n_plan_out(void) { return jg_gemm_plan(fx.ctx, &fx.baked_p, NULL); }
static jg_status n_plan_all(void) { return jg_gemm_plan(NULL, NULL, NULL); }
static jg_status n_run_plan(void)
{
    jg_gemm_args a = good_args();
    return jg_gemm_run(NULL, &a, NULL);
}
static jg_status n_run_args(void) { return jg_gemm_run(fx.baked, NULL, NULL); }
static jg_status n_run_both(void) { return jg_gemm_run(NULL, NULL, NULL); }
static jg_status n_runc_plan(void)
{
    jg_gemm_args a = good_args();
    return jg_gemm_run_in_context(NULL, &a, NULL);
}
static jg_status n_runc_args(void) { return jg_gemm_run_in_context(fx.baked, NULL, NULL); }
static jg_status n_runc_both(void) { return jg_gemm_run_in_context(NULL, NULL, NULL); }
static jg_status n_gemm_ctx(void)
{
    jg_gemm_args a = good_args();
    return jg_gemm(NULL, &fx.baked_p, &a, NULL);
}
static jg_status n_gemm_problem(void)
{
    jg_gemm_args a = good_args();
    return jg_gemm(fx.ctx, NULL, &a, NULL);
}
static jg_status n_gemm_args(void) { return jg_gemm(fx.ctx, &fx.baked_p, NULL, NULL); }
static jg_status n_gemm_all(void) { return jg_gemm(NULL, NULL, NULL, NULL); }
static jg_status n_info_plan(void)
{
    jg_plan_info info;
    return jg_plan_get_info(NULL, &info);
}
static jg_status n_info_out(void) { return jg_plan_get_info(fx.baked, NULL); }
static jg_status n_info_both(void) { return jg_plan_get_info(NULL, NULL); }
static jg_status n_ws_plan(void)
{
    size_t bytes = 0;
    return jg_plan_workspace_bytes(NULL, &bytes);
}
static jg_status n_ws_out(void) { return jg_plan_workspace_bytes(fx.baked, NULL); }
static jg_status n_ws_both(void) { return jg_plan_workspace_bytes(NULL, NULL); }

static const struct {
    const char *what;
    jg_status (*call)(void);
    bool ctx_error; /* the message is the context's (else the thread's) */
    const char *w1;
} null_rows[] = {
    {"jg_context_get_stats(NULL, &s)", n_stats_ctx, false, "ctx is NULL"},
    {"jg_context_get_stats(ctx, NULL)", n_stats_out, true, "out is NULL"},
    {"jg_context_get_stats(NULL, NULL)", n_stats_both, false, "ctx is NULL"},
    {"jg_context_get_cache_stats(NULL, &s)", n_cache_ctx, false, "ctx is NULL"},
    {"jg_context_get_cache_stats(ctx, NULL)", n_cache_out, true, "out is NULL"},
    {"jg_context_get_cache_stats(NULL, NULL)", n_cache_both, false, "ctx is NULL"},
    {"jg_gemm_plan(NULL, p, &out)", n_plan_ctx, false, "ctx is NULL"},
    {"jg_gemm_plan(ctx, NULL, &out)", n_plan_problem, true, "problem is NULL"},
    {"jg_gemm_plan(ctx, p, NULL)", n_plan_out, true, "out is NULL"},
    {"jg_gemm_plan(NULL, NULL, NULL)", n_plan_all, false, "ctx is NULL"},
    {"jg_gemm_run(NULL, &args)", n_run_plan, false, "plan is NULL"},
    {"jg_gemm_run(plan, NULL)", n_run_args, true, "args is NULL"},
    {"jg_gemm_run(NULL, NULL)", n_run_both, false, "plan is NULL"},
    {"jg_gemm_run_in_context(NULL, &args)", n_runc_plan, false, "plan is NULL"},
    {"jg_gemm_run_in_context(plan, NULL)", n_runc_args, true, "args is NULL"},
    {"jg_gemm_run_in_context(NULL, NULL)", n_runc_both, false, "plan is NULL"},
    {"jg_gemm(NULL, p, &args)", n_gemm_ctx, false, "ctx is NULL"},
    {"jg_gemm(ctx, NULL, &args)", n_gemm_problem, true, "problem is NULL"},
    {"jg_gemm(ctx, p, NULL)", n_gemm_args, true, "args is NULL"},
    {"jg_gemm(NULL, NULL, NULL)", n_gemm_all, false, "ctx is NULL"},
    {"jg_plan_get_info(NULL, &info)", n_info_plan, false, "plan is NULL"},
    {"jg_plan_get_info(plan, NULL)", n_info_out, true, "out is NULL"},
    {"jg_plan_get_info(NULL, NULL)", n_info_both, false, "plan is NULL"},
    {"jg_plan_workspace_bytes(NULL, &n)", n_ws_plan, false, "plan is NULL"},
    {"jg_plan_workspace_bytes(plan, NULL)", n_ws_out, true, "out is NULL"},
    {"jg_plan_workspace_bytes(NULL, NULL)", n_ws_both, false, "plan is NULL"},
};

/* jg_options.backend (0.8): read only with JG_CONTEXT_BACKEND, so that a
 * caller built against 0.7, whose struct ends before it, is never read past
 * its end (the struct below is exactly that long: ASan sees any overread). */
static void test_context_backend(void)
{
    const size_t v07 = offsetof(jg_options, backend);
    const jg_options fields = {.flags = JG_CONTEXT_OFFLINE, .arch = "sm_90a",
                               .cache_mode = JG_CACHE_OFF};
    void *old = malloc(v07);
    memcpy(old, &fields, v07);
    jg_context *ctx = NULL;
    CHECK(jg_context_create(old, &ctx) == JG_OK, "0.7 options: %s", jg_context_last_error(NULL));
    CHECK(ctx && ctx->backend == JG_BACKEND_NVRTC, "0.7 options: not NVRTC");
    jg_context_destroy(ctx);
    free(old);

    jg_options o = {.flags = JG_CONTEXT_OFFLINE, .arch = "sm_90a", .cache_mode = JG_CACHE_OFF,
                    .backend = (jg_backend)3};
    CHECK(jg_context_create(&o, &ctx) == JG_OK, "backend 3 without the flag was read");
    jg_context_destroy(ctx);
    o.flags |= JG_CONTEXT_BACKEND;
    prime(NULL);
    CHECK(jg_context_create(&o, &ctx) == JG_ERR_INVALID, "backend 3 accepted");
    check_message("backend 3", NULL, JG_ERR_INVALID, "options.backend 3", NULL);
    o.backend = JG_BACKEND_LLVM;
    const jg_status st = jg_context_create(&o, &ctx);
    CHECK(st == (jg__llvm_built() ? JG_OK : JG_ERR_UNSUPPORTED), "LLVM backend: %s (%s)",
          jg_status_name(st), jg_context_last_error(NULL));
    CHECK(st != JG_OK || ctx->backend == JG_BACKEND_LLVM, "LLVM backend not taken");
    if (st == JG_OK)
        jg_context_destroy(ctx);
}

static void test_null_pointers(void)
{
    for (size_t i = 0; i < JG_ARRAY_LEN(null_rows); ++i) {
        jg_context *ctx = null_rows[i].ctx_error ? fx.ctx : NULL;
        prime(ctx);
        jg_status st = null_rows[i].call();
        CHECK(st == JG_ERR_NULL_POINTER, "%s: got %s", null_rows[i].what, jg_status_name(st));
        if (st == JG_ERR_NULL_POINTER)
            check_message(null_rows[i].what, ctx, JG_ERR_NULL_POINTER, null_rows[i].w1, NULL);
    }
    /* The functions that cannot fail take NULL too. */
    jg_context_destroy(NULL);
    CHECK(jg_context_arch(NULL) && !strcmp(jg_context_arch(NULL), ""), "jg_context_arch(NULL)");
    CHECK(jg_context_last_error(NULL) != NULL, "jg_context_last_error(NULL) is NULL");
    CHECK(jg_context_last_error(fx.ctx) != NULL, "jg_context_last_error(ctx) is NULL");
    CHECK(!strcmp(jg_context_arch(fx.ctx), "sm_90a"), "arch %s", jg_context_arch(fx.ctx));
}

/* ---- jg_gemm_plan and jg_gemm: problems ------------------------------------------------ */

#define I32P1 2147483648LL /* INT32_MAX + 1 */

static const struct {
    const char *what;
    jg_gemm_problem p;
    jg_status want;
    const char *w1, *w2;
} problem_rows[] = {
    /* what                 flags a     b     c     d     m          n       k      lda  ldb  ldc  ldd */
    /* sizes: zero, negative, past 2^31-1 */
    {"m = 0",          P(0, BF16, BF16, NONE, BF16, 0,         64,     64,    0,   0,   0,   0), JG_ERR_INVALID, "m = 0", ">= 1"},
    {"m = -1",         P(0, BF16, BF16, NONE, BF16, -1,        64,     64,    0,   0,   0,   0), JG_ERR_INVALID, "m = -1", NULL},
    {"m = INT64_MIN",  P(0, BF16, BF16, NONE, BF16, INT64_MIN, 64,     64,    0,   0,   0,   0), JG_ERR_INVALID, "m = -9223372036854775808", NULL},
    {"n = 0",          P(0, BF16, BF16, NONE, BF16, 64,        0,      64,    0,   0,   0,   0), JG_ERR_INVALID, "n = 0", NULL},
    {"n = -64",        P(0, BF16, BF16, NONE, BF16, 64,        -64,    64,    0,   0,   0,   0), JG_ERR_INVALID, "n = -64", NULL},
    {"k = 0",          P(0, BF16, BF16, NONE, BF16, 64,        64,     0,     0,   0,   0,   0), JG_ERR_INVALID, "k = 0", NULL},
    {"k = -8",         P(0, BF16, BF16, NONE, BF16, 64,        64,     -8,    0,   0,   0,   0), JG_ERR_INVALID, "k = -8", NULL},
    {"m = 2^31",       P(0, BF16, BF16, NONE, BF16, I32P1,     64,     64,    0,   0,   0,   0), JG_ERR_TOO_LARGE, "m = 2147483648", "2^31-1"},
    {"n = 2^31",       P(0, BF16, BF16, NONE, BF16, 64,        I32P1,  64,    0,   0,   0,   0), JG_ERR_TOO_LARGE, "n = 2147483648", NULL},
    {"k = 2^31",       P(0, BF16, BF16, NONE, BF16, 64,        64,     I32P1, 0,   0,   0,   0), JG_ERR_TOO_LARGE, "k = 2147483648", NULL},
    {"m = INT64_MAX",  P(0, BF16, BF16, NONE, BF16, INT64_MAX, 64,     64,    0,   0,   0,   0), JG_ERR_TOO_LARGE, "m = 9223372036854775807", NULL},
    {"m-generic m=2^31", P(1, BF16, BF16, NONE, BF16, I32P1,   64,     64,    0,   0,   0,   0), JG_ERR_TOO_LARGE, "m = 2147483648", NULL},
    /* leading dimensions: below the minimum, negative, extreme */
    {"lda < k",        P(0, BF16, BF16, NONE, BF16, 64,        64,     64,    32,  0,   0,   0), JG_ERR_INVALID, "lda = 32", ">= k (64)"},
    {"ldb < k",        P(0, BF16, BF16, NONE, BF16, 64,        64,     64,    0,   56,  0,   0), JG_ERR_INVALID, "ldb = 56", ">= k"},
    {"ldd < n",        P(0, BF16, BF16, NONE, BF16, 64,        64,     64,    0,   0,   0,   32), JG_ERR_INVALID, "ldd = 32", ">= n (64)"},
    {"ldc < n",        P(0, BF16, BF16, BF16, BF16, 64,        64,     64,    0,   0,   8,   0), JG_ERR_INVALID, "ldc = 8", ">= n"},
    {"lda = -8",       P(0, BF16, BF16, NONE, BF16, 64,        64,     64,    -8,  0,   0,   0), JG_ERR_INVALID, "lda = -8", NULL},
    {"lda INT64_MIN",  P(0, BF16, BF16, NONE, BF16, 64,        64,     64,    INT64_MIN, 0, 0, 0), JG_ERR_INVALID, "lda = -9223372036854775808", NULL},
    {"ldb INT64_MIN",  P(0, BF16, BF16, NONE, BF16, 64,        64,     64,    0,   INT64_MIN, 0, 0), JG_ERR_INVALID, "ldb", NULL},
    {"ldc INT64_MIN",  P(0, FP16, FP16, FP32, FP32, 64,        64,     64,    0,   0,   INT64_MIN, 0), JG_ERR_INVALID, "ldc", NULL},
    {"ldd INT64_MIN",  P(0, BF16, BF16, NONE, BF16, 64,        64,     64,    0,   0,   0,   INT64_MIN), JG_ERR_INVALID, "ldd", NULL},
    {"lda INT64_MAX",  P(0, BF16, BF16, NONE, BF16, 64,        64,     64,    INT64_MAX, 0, 0, 0), JG_ERR_TOO_LARGE, "lda = 9223372036854775807", "2^40"},
    {"ldb INT64_MAX",  P(0, BF16, BF16, NONE, BF16, 64,        64,     64,    0,   INT64_MAX, 0, 0), JG_ERR_TOO_LARGE, "ldb", NULL},
    {"ldc INT64_MAX",  P(0, BF16, BF16, FP32, FP32, 64,        64,     64,    0,   0,   INT64_MAX, 0), JG_ERR_TOO_LARGE, "ldc", NULL},
    {"ldd INT64_MAX",  P(0, BF16, BF16, NONE, FP32, 64,        64,     64,    0,   0,   0,   INT64_MAX), JG_ERR_TOO_LARGE, "ldd", NULL},
    {"lda 2^39 bf16",  P(0, BF16, BF16, NONE, BF16, 64,        64,     64,    1LL << 39, 0, 0, 0), JG_ERR_TOO_LARGE, "lda", "2^40"},
    {"ldd 2^38 fp32",  P(0, BF16, BF16, NONE, FP32, 64,        64,     64,    0,   0,   0,   1LL << 38), JG_ERR_TOO_LARGE, "ldd", NULL},
    /* leading dimensions below their rows (MN-major: M or N) */
    {"M-major lda 63", P(JG_GEMM_A_M_MAJOR, FP16, FP16, NONE, FP16, 64, 64, 8, 63, 0, 0,   0), JG_ERR_INVALID, "lda = 63", "m (M-major A)"},
    {"N-major ldb 9",  P(JG_GEMM_B_N_MAJOR, BF16, BF16, NONE, BF16, 64, 10, 64, 0, 9, 0,   0), JG_ERR_INVALID, "ldb = 9", "n (N-major B)"},
    /* dtypes: missing, unsupported combinations, not enum values */
    {"a NONE",         P(0, NONE, BF16, NONE, BF16, 64,        64,     64,    0,   0,   0,   0), JG_ERR_INVALID, "a_type", "JG_DTYPE_NONE"},
    {"b NONE",         P(0, BF16, NONE, NONE, BF16, 64,        64,     64,    0,   0,   0,   0), JG_ERR_INVALID, "b_type", NULL},
    {"d NONE",         P(0, BF16, BF16, NONE, NONE, 64,        64,     64,    0,   0,   0,   0), JG_ERR_INVALID, "d_type", NULL},
    {"d NONE, c bf16", P(0, BF16, BF16, BF16, NONE, 64,        64,     64,    0,   0,   0,   0), JG_ERR_INVALID, "d_type", NULL},
    {"e4m3 N-major",   {JG_GEMM_B_N_MAJOR, JG_E4M3, JG_E4M3, NONE, BF16, 64, 64, 64, 0, 0, 0, 0, JG_SCALE_ROW, JG_SF_LAYOUT_NONE, JG_SF_LAYOUT_NONE}, JG_ERR_UNSUPPORTED, "JG_GEMM_B_N_MAJOR", "K-major only"},
    {"exact fp16",     P(JG_GEMM_FP32_EXACT, FP16, FP16, NONE, FP16, 64, 64, 64, 0, 0,   0,   0), JG_ERR_INVALID, "JG_GEMM_FP32_EXACT", "fp32"},
    {"a fp32 b bf16",  P(0, FP32, BF16, NONE, BF16, 64,        64,     64,    0,   0,   0,   0), JG_ERR_UNSUPPORTED, "a_type fp32", NULL},
    {"a bf16 b fp16",  P(0, BF16, FP16, NONE, BF16, 64,        64,     64,    0,   0,   0,   0), JG_ERR_UNSUPPORTED, "b_type fp16", "a_type bf16"},
    {"a fp16 b bf16",  P(0, FP16, BF16, NONE, FP16, 64,        64,     64,    0,   0,   0,   0), JG_ERR_UNSUPPORTED, "b_type bf16", NULL},
    {"a fp16 b fp32",  P(0, FP16, FP32, NONE, FP16, 64,        64,     64,    0,   0,   0,   0), JG_ERR_UNSUPPORTED, "b_type fp32", NULL},
    {"c fp32 d bf16",  P(0, BF16, BF16, FP32, BF16, 64,        64,     64,    0,   0,   0,   0), JG_ERR_UNSUPPORTED, "c_type fp32", "d_type bf16"},
    {"c bf16 d fp32",  P(0, BF16, BF16, BF16, FP32, 64,        64,     64,    0,   0,   0,   0), JG_ERR_UNSUPPORTED, "c_type bf16", NULL},
    {"c fp16 d bf16",  P(0, FP16, FP16, FP16, BF16, 64,        64,     64,    0,   0,   0,   0), JG_ERR_UNSUPPORTED, "c_type fp16", NULL},
    {"a = 99",         P(0, BADT, BF16, NONE, BF16, 64,        64,     64,    0,   0,   0,   0), JG_ERR_INVALID, "a_type = 99", "jg_dtype"},
    {"b = 99",         P(0, BF16, BADT, NONE, BF16, 64,        64,     64,    0,   0,   0,   0), JG_ERR_INVALID, "b_type = 99", NULL},
    {"c = 99",         P(0, BF16, BF16, BADT, BF16, 64,        64,     64,    0,   0,   0,   0), JG_ERR_INVALID, "c_type = 99", NULL},
    {"d = 99",         P(0, BF16, BF16, NONE, BADT, 64,        64,     64,    0,   0,   0,   0), JG_ERR_INVALID, "d_type = 99", NULL},
    {"a = -1",         P(0, NEGT, BF16, NONE, BF16, 64,        64,     64,    0,   0,   0,   0), JG_ERR_INVALID, "a_type = -1", NULL},
    {"c = -1",         P(0, BF16, BF16, NEGT, BF16, 64,        64,     64,    0,   0,   0,   0), JG_ERR_INVALID, "c_type = -1", NULL},
    /* flags */
    {"flags 0x40",     P(0x40, BF16, BF16, NONE, BF16, 64,     64,     64,    0,   0,   0,   0), JG_ERR_INVALID, "flags 0x40", "unknown bits 0x40"},
    {"flags 0x80000001", P(0x80000001u, BF16, BF16, NONE, BF16, 64, 64, 64,   0,   0,   0,   0), JG_ERR_INVALID, "flags 0x80000001", "unknown bits 0x80000000"},
    {"flags all",      P(0xffffffffu, BF16, BF16, NONE, BF16, 64, 64,  64,    0,   0,   0,   0), JG_ERR_INVALID, "flags", "0xffffffc0"},
    /* NVFP4: a broken rule (the valid problem is among the boundaries below). */
    {"nvfp4, k = 24", {0, JG_NVFP4, JG_NVFP4, NONE, BF16, 128, 4096, 24, 0, 0, 0, 0, JG_SCALE_NVFP4, JG_SF_SWIZZLED_128X4, JG_SF_SWIZZLED_128X4}, JG_ERR_INVALID, "k = 24", NULL},
    /* Valid boundaries, checked with jg__validate_gemm only (nothing compiled). */
    {"m = 2^31-1",     P(0, BF16, BF16, NONE, BF16, 2147483647LL, 64,  64,    0,   0,   0,   0), JG_OK, NULL, NULL},
    {"n = k = 2^31-9", P(0, BF16, BF16, NONE, FP32, 1, 2147483640LL, 2147483640LL, 0, 0, 0, 0), JG_OK, NULL, NULL},
    {"lda = k exactly", P(0, FP16, FP16, FP16, FP16, 64,       64,     64,    64,  64,  64,  64), JG_OK, NULL, NULL},
    {"ld just < 2^40 B", P(0, BF16, BF16, NONE, BF16, 64,      64,     64,    (1LL << 39) - 8, 0, 0, 0), JG_OK, NULL, NULL},
    {"ldc ignored w/o C", P(0, BF16, BF16, NONE, BF16, 64,     64,     64,    0,   0,   INT64_MIN, 0), JG_OK, NULL, NULL},
    {"m-generic, C",   P(1, FP16, FP16, FP32, FP32, 1,         8,      8,     0,   0,   0,   0), JG_OK, NULL, NULL},
    /* The valid forms of 0.7 (rows of any length, FP32 and MN-major
     * operands) are test_validate.c's rows. */
};

static void test_problems(void)
{
    const uint64_t before = compiles();
    for (size_t i = 0; i < JG_ARRAY_LEN(problem_rows); ++i) {
        const char *what = problem_rows[i].what;
        const jg_status want = problem_rows[i].want;
        if (want == JG_OK) {
            prime(fx.ctx);
            jg_status st = jg__validate_gemm(fx.ctx, &problem_rows[i].p);
            CHECK(st == JG_OK, "%s: %s (%s)", what, jg_status_name(st), jg_context_last_error(fx.ctx));
            continue;
        }
        prime(fx.ctx);
        jg_plan *out = plan_sentinel();
        jg_status st = jg_gemm_plan(fx.ctx, &problem_rows[i].p, &out);
        CHECK(st == want, "jg_gemm_plan %s: got %s, want %s (%s)", what, jg_status_name(st),
              jg_status_name(want), jg_context_last_error(fx.ctx));
        CHECK(out == NULL, "jg_gemm_plan %s: *out not cleared", what);
        if (st == want)
            check_message(what, fx.ctx, want, problem_rows[i].w1, problem_rows[i].w2);

        /* jg_gemm: the same refusal, with valid arguments. */
        prime(fx.ctx);
        jg_gemm_args args = good_args();
        st = jg_gemm(fx.ctx, &problem_rows[i].p, &args, NULL);
        CHECK(st == want, "jg_gemm %s: got %s, want %s (%s)", what, jg_status_name(st),
              jg_status_name(want), jg_context_last_error(fx.ctx));
        if (st == want)
            check_message(what, fx.ctx, want, problem_rows[i].w1, problem_rows[i].w2);
    }
    CHECK(compiles() == before, "rejected problems compiled %llu kernels",
          (unsigned long long)(compiles() - before));
}

/* ---- jg_gemm_run and jg_gemm: arguments --------------------------------------------------- */

#define A0 0x10000u
#define B0 0x20000u
#define C0 0x30000u
#define D0 0x40000u

static const struct {
    const char *what;
    bool generic; /* the M-generic plan with C, else the baked plan without C */
    uintptr_t a, b, c, d;
    int64_t m;
    jg_status want;
    const char *w1, *w2;
    /* jg_gemm's status where it differs (pointers off 16 bytes: it plans
     * with JG_GEMM_UNALIGNED), else 0 (JG_OK: no row expects it) */
    jg_status gemm_want;
} run_rows[] = {
    /* what                    generic a          b          c          d          m */
    {"a NULL",                 false, 0,         B0,        0,         D0,        0, JG_ERR_NULL_POINTER, "args.a is NULL", NULL, 0},
    {"b NULL",                 false, A0,        0,         0,         D0,        0, JG_ERR_NULL_POINTER, "args.b is NULL", NULL, 0},
    {"d NULL",                 false, A0,        B0,        0,         0,         0, JG_ERR_NULL_POINTER, "args.d is NULL", NULL, 0},
    {"all NULL",               false, 0,         0,         0,         0,         0, JG_ERR_NULL_POINTER, "args.a is NULL", NULL, 0},
    {"c NULL with c_type",     true,  A0,        B0,        0,         D0,        0, JG_ERR_NULL_POINTER, "args.c is NULL", NULL, 0},
    /* TMA plans refuse pointers off 16 bytes (and name JG_GEMM_UNALIGNED);
     * jg_gemm plans with the flag instead (two compiles: the baked and the
     * generic problem's), whose plans take element-aligned pointers. C is
     * read element by element in every plan. */
    {"a + 2",                  false, A0 + 2,    B0,        0,         D0,        0, JG_ERR_MISALIGNED, "args.a", "JG_GEMM_UNALIGNED", JG_ERR_OFFLINE},
    {"a + 8",                  false, A0 + 8,    B0,        0,         D0,        0, JG_ERR_MISALIGNED, "args.a", "16-byte", JG_ERR_OFFLINE},
    {"b + 2",                  false, A0,        B0 + 2,    0,         D0,        0, JG_ERR_MISALIGNED, "args.b", NULL, JG_ERR_OFFLINE},
    {"b + 8",                  true,  A0,        B0 + 8,    C0,        D0,        0, JG_ERR_MISALIGNED, "args.b", NULL, JG_ERR_OFFLINE},
    {"d + 2",                  false, A0,        B0,        0,         D0 + 2,    0, JG_ERR_MISALIGNED, "args.d", NULL, JG_ERR_OFFLINE},
    {"d + 8",                  true,  A0,        B0,        C0,        D0 + 8,    0, JG_ERR_MISALIGNED, "args.d", NULL, JG_ERR_OFFLINE},
    {"c + 2 with c_type",      true,  A0,        B0,        C0 + 2,    D0,        0, JG_ERR_OFFLINE, "offline", NULL, 0},
    {"c + 8 with c_type",      true,  A0,        B0,        C0 + 8,    D0,        0, JG_ERR_OFFLINE, "offline", NULL, 0},
    {"c + 1 (odd) with c_type", true, A0,        B0,        C0 + 1,    D0,        0, JG_ERR_MISALIGNED, "args.c", "bf16 elements", 0},
    {"a + 1 (odd)",            false, A0 + 1,    B0,        0,         D0,        0, JG_ERR_MISALIGNED, "args.a", NULL, 0},
    {"m = -1, baked",          false, A0,        B0,        0,         D0,        -1, JG_ERR_INVALID, "args.m = -1", NULL, 0},
    {"m = 65 != 64, baked",    false, A0,        B0,        0,         D0,        65, JG_ERR_INVALID, "args.m = 65", "baked in (64)", 0},
    {"m = 1 != 64, baked",     false, A0,        B0,        0,         D0,        1, JG_ERR_INVALID, "args.m = 1", "JG_GEMM_M_GENERIC", 0},
    {"m = 2^31, baked",        false, A0,        B0,        0,         D0,        I32P1, JG_ERR_INVALID, "args.m = 2147483648", NULL, 0},
    {"m = -1, generic",        true,  A0,        B0,        C0,        D0,        -1, JG_ERR_INVALID, "args.m = -1", "1..2^31-1", 0},
    {"m = 2^31, generic",      true,  A0,        B0,        C0,        D0,        I32P1, JG_ERR_INVALID, "args.m = 2147483648", "1..2^31-1", 0},
    {"m = INT64_MIN, generic", true,  A0,        B0,        C0,        D0,        INT64_MIN, JG_ERR_INVALID, "args.m = -9223372036854775808", NULL, 0},
    {"m = INT64_MAX, generic", true,  A0,        B0,        C0,        D0,        INT64_MAX, JG_ERR_INVALID, "args.m = 9223372036854775807", NULL, 0},
    /* Pointer checks come before the M check, which comes before "offline". */
    {"a NULL and bad m",       true,  0,         B0,        C0,        D0,        -1, JG_ERR_NULL_POINTER, "args.a", NULL, 0},
    /* Valid arguments: an offline context never launches. */
    {"valid, baked",           false, A0,        B0,        0,         D0,        0, JG_ERR_OFFLINE, "offline", "sm_90a", 0},
    {"valid, m = problem.m",   false, A0,        B0,        0,         D0,        64, JG_ERR_OFFLINE, "offline", NULL, 0},
    {"c ignored without c_type", false, A0,      B0,        C0 + 2,    D0,        0, JG_ERR_OFFLINE, "offline", NULL, 0},
    {"c = d (in place)",       true,  A0,        B0,        D0,        D0,        0, JG_ERR_OFFLINE, "offline", NULL, 0},
    {"valid, generic m = 1",   true,  A0,        B0,        C0,        D0,        1, JG_ERR_OFFLINE, "offline", NULL, 0},
    {"valid, generic m = 2^31-1", true, A0,      B0,        C0,        D0,        2147483647LL, JG_ERR_OFFLINE, "offline", NULL, 0},
};

static void test_run_args(void)
{
    const uint64_t before = compiles();
    for (size_t i = 0; i < JG_ARRAY_LEN(run_rows); ++i) {
        const char *what = run_rows[i].what;
        const jg_status want = run_rows[i].want;
        jg_gemm_args args;
        memset(&args, 0, sizeof args);
        args.a = (const void *)run_rows[i].a;
        args.b = (const void *)run_rows[i].b;
        args.c = (const void *)run_rows[i].c;
        args.d = (void *)run_rows[i].d;
        args.alpha = 1.0f;
        args.beta = 1.0f;
        args.m = run_rows[i].m;
        jg_plan *plan = run_rows[i].generic ? fx.generic : fx.baked;
        const jg_gemm_problem *p = run_rows[i].generic ? &fx.generic_p : &fx.baked_p;

        prime(fx.ctx);
        jg_status st = jg_gemm_run(plan, &args, NULL);
        CHECK(st == want, "jg_gemm_run %s: got %s, want %s (%s)", what, jg_status_name(st),
              jg_status_name(want), jg_context_last_error(fx.ctx));
        if (st == want)
            check_message(what, fx.ctx, want, run_rows[i].w1, run_rows[i].w2);

        /* the same checks, in the same order: an offline context has no
         * CUDA context to push */
        prime(fx.ctx);
        st = jg_gemm_run_in_context(plan, &args, NULL);
        CHECK(st == want, "jg_gemm_run_in_context %s: got %s, want %s (%s)", what,
              jg_status_name(st), jg_status_name(want), jg_context_last_error(fx.ctx));
        if (st == want)
            check_message(what, fx.ctx, want, run_rows[i].w1, run_rows[i].w2);

        prime(fx.ctx);
        st = jg_gemm(fx.ctx, p, &args, NULL);
        const jg_status gemm_want = run_rows[i].gemm_want ? run_rows[i].gemm_want : want;
        CHECK(st == gemm_want, "jg_gemm %s: got %s, want %s (%s)", what, jg_status_name(st),
              jg_status_name(gemm_want), jg_context_last_error(fx.ctx));
        if (st == want)
            check_message(what, fx.ctx, want, run_rows[i].w1, run_rows[i].w2);
    }
    /* the two unaligned plans: each its soft kernel and the aligned GEMM
     * over the packed copies, and the pack kernel once */
    CHECK(compiles() == before + 5, "runs compiled %llu kernels, want 5 (the unaligned plans)",
          (unsigned long long)(compiles() - before));
}

/* ---- jg_plan_get_info, jg_plan_workspace_bytes, jg_context_get_stats on good input ---- */

static void test_good_queries(void)
{
    jg_plan_info info;
    memset(&info, 0xff, sizeof info);
    CHECK(jg_plan_get_info(fx.generic, &info) == JG_OK, "jg_plan_get_info");
    CHECK(info.kernel_name && info.kernel_name[0] && info.origin == JG_ORIGIN_COMPILED &&
              info.threads > 0 && info.block_m > 0 && info.smem_bytes > 0,
          "plan info: name %s, origin %d, threads %u", info.kernel_name ? info.kernel_name : "(null)",
          (int)info.origin, info.threads);
    /* Dense plans need no workspace. */
    size_t bytes = 12345;
    CHECK(jg_plan_workspace_bytes(fx.generic, &bytes) == JG_OK && bytes == 0,
          "jg_plan_workspace_bytes of a dense plan: %zu", bytes);
    jg_context_stats s;
    CHECK(jg_context_get_stats(fx.ctx, &s) == JG_OK, "jg_context_get_stats");
    CHECK(s.plans_compiled == 7 && s.compile_failures == 0 && s.plans_disk == 0,
          "stats: compiled %llu, failures %llu, disk %llu", (unsigned long long)s.plans_compiled,
          (unsigned long long)s.compile_failures, (unsigned long long)s.plans_disk);
}

/* ---- jg_quantize_e4m3: every rule, then one valid call (offline: compiled, not run) ---- */

#define QS 0x20000u /* a 16-byte aligned fake device address */
static const struct {
    const char *what;
    jg_quant_problem p;
    uintptr_t src, dst, scale;
    jg_status want;
    const char *w1;
} quant_rows[] = {
    {"src fp32", {JG_FP32, JG_SCALE_ROW, 0, 64, 128, 0, 0, JG_SF_LAYOUT_NONE}, QS, QS, QS, JG_ERR_UNSUPPORTED, "src_type"},
    {"src e4m3", {JG_E4M3, JG_SCALE_ROW, 0, 64, 128, 0, 0, JG_SF_LAYOUT_NONE}, QS, QS, QS, JG_ERR_UNSUPPORTED, "src_type"},
    {"scale none", {JG_BF16, JG_SCALE_NONE, 0, 64, 128, 0, 0, JG_SF_LAYOUT_NONE}, QS, QS, QS, JG_ERR_INVALID, "scale = 0"},
    {"scale 9", {JG_BF16, (jg_scale_mode)9, 0, 64, 128, 0, 0, JG_SF_LAYOUT_NONE}, QS, QS, QS, JG_ERR_INVALID, "scale = 9"},
    {"block rows 64", {JG_BF16, JG_SCALE_BLOCK, 64, 64, 128, 0, 0, JG_SF_LAYOUT_NONE}, QS, QS, QS, JG_ERR_INVALID, "block_rows = 64"},
    {"row, block rows 1", {JG_BF16, JG_SCALE_ROW, 1, 64, 128, 0, 0, JG_SF_LAYOUT_NONE}, QS, QS, QS, JG_ERR_INVALID, "block_rows"},
    {"rows 0", {JG_BF16, JG_SCALE_ROW, 0, 0, 128, 0, 0, JG_SF_LAYOUT_NONE}, QS, QS, QS, JG_ERR_INVALID, "rows = 0"},
    {"cols -1", {JG_BF16, JG_SCALE_ROW, 0, 64, -1, 0, 0, JG_SF_LAYOUT_NONE}, QS, QS, QS, JG_ERR_INVALID, "cols = -1"},
    {"cols 2^31", {JG_BF16, JG_SCALE_ROW, 0, 64, 2147483648LL, 0, 0, JG_SF_LAYOUT_NONE}, QS, QS, QS, JG_ERR_TOO_LARGE, "cols"},
    {"ld_src < cols", {JG_BF16, JG_SCALE_ROW, 0, 64, 128, 100, 0, JG_SF_LAYOUT_NONE}, QS, QS, QS, JG_ERR_INVALID, "ld_src = 100"},
    {"ld_dst < 0", {JG_BF16, JG_SCALE_ROW, 0, 64, 128, 0, -1, JG_SF_LAYOUT_NONE}, QS, QS, QS, JG_ERR_INVALID, "ld_dst = -1"},
    {"src NULL", {JG_BF16, JG_SCALE_ROW, 0, 64, 128, 0, 0, JG_SF_LAYOUT_NONE}, 0, QS, QS, JG_ERR_NULL_POINTER, "args.src"},
    {"scale NULL", {JG_BF16, JG_SCALE_ROW, 0, 64, 128, 0, 0, JG_SF_LAYOUT_NONE}, QS, QS, 0, JG_ERR_NULL_POINTER, "args.scale"},
    {"src odd", {JG_BF16, JG_SCALE_ROW, 0, 64, 128, 0, 0, JG_SF_LAYOUT_NONE}, QS + 1, QS, QS, JG_ERR_MISALIGNED, "args.src"},
    {"scale + 2", {JG_BF16, JG_SCALE_ROW, 0, 64, 128, 0, 0, JG_SF_LAYOUT_NONE}, QS, QS, QS + 2, JG_ERR_MISALIGNED, "args.scale"},
    {"valid", {JG_BF16, JG_SCALE_BLOCK, 128, 64, 128, 0, 0, JG_SF_LAYOUT_NONE}, QS, QS + 1, QS, JG_ERR_OFFLINE, "offline"},
};

/* jg_quantize_nvfp4: every rule, then one valid call per scale layout. */
#define NQ(src, scale, rows, cols, ld_src, ld_dst, layout) {src, scale, 0, rows, cols, ld_src, ld_dst, layout}
#define NV JG_SCALE_NVFP4
#define SWZ JG_SF_SWIZZLED_128X4
static const struct {
    const char *what;
    jg_quant_problem p;
    uintptr_t src, dst, scale, sf;
    jg_status want;
    const char *w1;
} nq_rows[] = {
    {"src fp32", NQ(JG_FP32, NV, 64, 128, 0, 0, SWZ), QS, QS, QS, QS, JG_ERR_UNSUPPORTED, "src_type 3"},
    {"src nvfp4", NQ(JG_NVFP4, NV, 64, 128, 0, 0, SWZ), QS, QS, QS, QS, JG_ERR_UNSUPPORTED, "src_type 5"},
    {"scale tensor", NQ(JG_BF16, JG_SCALE_TENSOR, 64, 128, 0, 0, SWZ), QS, QS, QS, QS, JG_ERR_INVALID, "scale = 1"},
    {"scale block", NQ(JG_BF16, JG_SCALE_BLOCK, 64, 128, 0, 0, SWZ), QS, QS, QS, QS, JG_ERR_INVALID, "JG_SCALE_NVFP4"},
    {"block rows 1", {JG_BF16, NV, 1, 64, 128, 0, 0, SWZ}, QS, QS, QS, QS, JG_ERR_INVALID, "block_rows = 1"},
    {"sf_layout 0", NQ(JG_BF16, NV, 64, 128, 0, 0, JG_SF_LAYOUT_NONE), QS, QS, QS, QS, JG_ERR_INVALID, "sf_layout = 0"},
    {"sf_layout 9", NQ(JG_BF16, NV, 64, 128, 0, 0, (jg_sf_layout)9), QS, QS, QS, QS, JG_ERR_INVALID, "sf_layout = 9"},
    {"rows 0", NQ(JG_BF16, NV, 0, 128, 0, 0, SWZ), QS, QS, QS, QS, JG_ERR_INVALID, "rows = 0"},
    {"cols 2^31", NQ(JG_BF16, NV, 64, 2147483648LL, 0, 0, SWZ), QS, QS, QS, QS, JG_ERR_TOO_LARGE, "cols"},
    {"cols 40", NQ(JG_BF16, NV, 64, 40, 0, 0, SWZ), QS, QS, QS, QS, JG_ERR_INVALID, "cols = 40"},
    {"cols 8", NQ(JG_FP16, NV, 64, 8, 0, 0, JG_SF_ROW_MAJOR), QS, QS, QS, QS, JG_ERR_INVALID, "multiple of 16"},
    {"ld_src < cols", NQ(JG_BF16, NV, 64, 128, 120, 0, SWZ), QS, QS, QS, QS, JG_ERR_INVALID, "ld_src = 120"},
    {"ld_dst < cols", NQ(JG_BF16, NV, 64, 128, 0, 112, SWZ), QS, QS, QS, QS, JG_ERR_INVALID, "ld_dst = 112"},
    {"ld_dst 136", NQ(JG_BF16, NV, 64, 128, 0, 136, SWZ), QS, QS, QS, QS, JG_ERR_INVALID, "ld_dst = 136"},
    {"src NULL", NQ(JG_BF16, NV, 64, 128, 0, 0, SWZ), 0, QS, QS, QS, JG_ERR_NULL_POINTER, "args.src"},
    {"dst NULL", NQ(JG_BF16, NV, 64, 128, 0, 0, SWZ), QS, 0, QS, QS, JG_ERR_NULL_POINTER, "args.dst"},
    {"scale NULL", NQ(JG_BF16, NV, 64, 128, 0, 0, SWZ), QS, QS, 0, QS, JG_ERR_NULL_POINTER, "args.scale"},
    {"sf NULL", NQ(JG_BF16, NV, 64, 128, 0, 0, SWZ), QS, QS, QS, 0, JG_ERR_NULL_POINTER, "args.sf"},
    {"src odd", NQ(JG_BF16, NV, 64, 128, 0, 0, SWZ), QS + 1, QS, QS, QS, JG_ERR_MISALIGNED, "args.src"},
    {"dst + 8", NQ(JG_BF16, NV, 64, 128, 0, 0, SWZ), QS, QS + 8, QS, QS, JG_ERR_MISALIGNED, "args.dst"},
    {"scale + 2", NQ(JG_BF16, NV, 64, 128, 0, 0, SWZ), QS, QS, QS + 2, QS, JG_ERR_MISALIGNED, "args.scale"},
    {"sf + 4", NQ(JG_BF16, NV, 64, 128, 0, 0, SWZ), QS, QS, QS, QS + 4, JG_ERR_MISALIGNED, "args.sf"},
    {"valid, swizzled", NQ(JG_BF16, NV, 300, 1040, 1048, 1056, SWZ), QS + 2, QS, QS + 4, QS, JG_ERR_OFFLINE, "offline"},
    {"valid, row-major", NQ(JG_FP16, NV, 1, 16, 0, 0, JG_SF_ROW_MAJOR), QS, QS, QS, QS, JG_ERR_OFFLINE, "offline"},
};
#undef NQ
#undef NV
#undef SWZ

static void test_quantize_nvfp4(void)
{
    const uint64_t before = compiles();
    jg_quant_args ok = {(const void *)QS, (void *)QS, (float *)QS, (void *)QS};
    const jg_quant_problem p0 = nq_rows[0].p;
    CHECK(jg_quantize_nvfp4(NULL, &p0, &ok, NULL) == JG_ERR_NULL_POINTER, "nvfp4: ctx NULL");
    CHECK(jg_quantize_nvfp4(fx.ctx, NULL, &ok, NULL) == JG_ERR_NULL_POINTER, "nvfp4: problem NULL");
    CHECK(jg_quantize_nvfp4(fx.ctx, &p0, NULL, NULL) == JG_ERR_NULL_POINTER, "nvfp4: args NULL");
    size_t valid = 0;
    for (size_t i = 0; i < JG_ARRAY_LEN(nq_rows); ++i) {
        valid += nq_rows[i].want == JG_ERR_OFFLINE;
        jg_quant_args a = {(const void *)nq_rows[i].src, (void *)nq_rows[i].dst,
                           (float *)nq_rows[i].scale, (void *)nq_rows[i].sf};
        prime(fx.ctx);
        jg_status st = jg_quantize_nvfp4(fx.ctx, &nq_rows[i].p, &a, NULL);
        CHECK(st == nq_rows[i].want, "jg_quantize_nvfp4 %s: got %s, want %s (%s)", nq_rows[i].what,
              jg_status_name(st), jg_status_name(nq_rows[i].want), jg_context_last_error(fx.ctx));
        if (st == nq_rows[i].want)
            check_message(nq_rows[i].what, fx.ctx, st, nq_rows[i].w1, NULL);
        CHECK(compiles() == before + valid, "nvfp4 %s: %llu compiles so far, expected %zu",
              nq_rows[i].what, (unsigned long long)(compiles() - before), valid);
    }
}

static void test_quantize(void)
{
    const uint64_t before = compiles();
    jg_quant_args ok = {(const void *)QS, (void *)QS, (float *)QS, NULL};
    const jg_quant_problem p0 = quant_rows[0].p;
    CHECK(jg_quantize_e4m3(NULL, &p0, &ok, NULL) == JG_ERR_NULL_POINTER, "quantize: ctx NULL");
    CHECK(jg_quantize_e4m3(fx.ctx, NULL, &ok, NULL) == JG_ERR_NULL_POINTER, "quantize: problem NULL");
    CHECK(jg_quantize_e4m3(fx.ctx, &p0, NULL, NULL) == JG_ERR_NULL_POINTER, "quantize: args NULL");
    for (size_t i = 0; i < JG_ARRAY_LEN(quant_rows); ++i) {
        const bool valid = quant_rows[i].want == JG_ERR_OFFLINE;
        CHECK(valid || compiles() == before, "quantize %s: compiled before it", quant_rows[i].what);
        jg_quant_args a = {(const void *)quant_rows[i].src, (void *)quant_rows[i].dst,
                           (float *)quant_rows[i].scale, NULL};
        prime(fx.ctx);
        jg_status st = jg_quantize_e4m3(fx.ctx, &quant_rows[i].p, &a, NULL);
        CHECK(st == quant_rows[i].want, "jg_quantize_e4m3 %s: got %s, want %s (%s)",
              quant_rows[i].what, jg_status_name(st), jg_status_name(quant_rows[i].want),
              jg_context_last_error(fx.ctx));
        if (st == quant_rows[i].want)
            check_message(quant_rows[i].what, fx.ctx, st, quant_rows[i].w1, NULL);
    }
    CHECK(compiles() == before + 1, "quantize: %llu compiles, expected 1 (the valid row)",
          (unsigned long long)(compiles() - before));
}

int main(void)
{
    /* Online contexts must fail the same way with and without a GPU. */
    setenv("JITGEMM_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
    unsetenv("JITGEMM_TILE");
    test_status_functions();
    test_context_create();
    test_context_backend();
    if (setup()) {
        test_null_pointers();
        test_problems();
        test_run_args();
        test_good_queries();
        test_quantize();
        test_quantize_nvfp4();
    }
    jg_context_destroy(fx.ctx);
    return jg_test_result("test_api_bad_input");
}
