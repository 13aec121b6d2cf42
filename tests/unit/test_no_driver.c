/* Without a CUDA driver the shared library still loads (dlopen, RTLD_NOW: no
 * unresolved symbol on libcuda), jg_context_create returns JG_ERR_NO_DRIVER
 * with a message naming the library it tried, and offline contexts work.
 * Uses only the public header, as a user would. argv[1]: libjitgemm.so. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jitgemm/jitgemm.h"
#include "jg_test.h"

typedef jg_status (*create_fn)(const jg_options *, jg_context **);
typedef void (*destroy_fn)(jg_context *);
typedef const char *(*last_error_fn)(const jg_context *);
typedef const char *(*status_name_fn)(jg_status);

static create_fn create;
static destroy_fn destroy;
static last_error_fn last_error;
static status_name_fn status_name;

/* ISO C has no object-to-function pointer cast: copy the bytes. */
static int resolve(void *lib, const char *name, void *fn_ptr, size_t size)
{
    void *sym = dlsym(lib, name);
    CHECK(sym != NULL, "dlsym(%s): %s", name, dlerror());
    if (sym)
        memcpy(fn_ptr, &sym, size);
    return sym != NULL;
}

/* The default (online) context must fail cleanly, every time it is asked. */
static void expect_no_driver(const char *libcuda, int attempt)
{
    jg_context *ctx = (jg_context *)&ctx; /* non-NULL: it must be cleared */
    jg_status st = create(NULL, &ctx);
    const char *msg = last_error(NULL);
    CHECK(st == JG_ERR_NO_DRIVER, "attempt %d: got %s, want JG_ERR_NO_DRIVER (%s)", attempt,
          status_name(st), msg);
    CHECK(ctx == NULL, "attempt %d: *out not cleared", attempt);
    CHECK(strstr(msg, libcuda) != NULL, "attempt %d: message does not name %s: \"%s\"", attempt,
          libcuda, msg);
    CHECK(strstr(msg, "JG_ERR_NO_DRIVER") != NULL, "attempt %d: message: \"%s\"", attempt, msg);
}

/* Offline contexts need no driver at all. */
static void expect_offline_works(void)
{
    jg_options o;
    memset(&o, 0, sizeof o);
    o.flags = JG_CONTEXT_OFFLINE;
    o.arch = "sm_90a";
    o.cache_mode = JG_CACHE_OFF;
    jg_context *ctx = NULL;
    jg_status st = create(&o, &ctx);
    CHECK(st == JG_OK && ctx, "offline context without a driver: %s (%s)", status_name(st),
          last_error(NULL));
    destroy(ctx);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s path/to/libjitgemm.so\n", argv[0]);
        return 2;
    }
    /* meson sets it; run by hand, point it at nothing ourselves. The loader
     * reads it at the first jg_context_create, so setting it here works. */
    const char *libcuda = getenv("JITGEMM_LIBCUDA");
    if (!libcuda || !*libcuda) {
        setenv("JITGEMM_LIBCUDA", "/nonexistent/libcuda.so.1", 1);
        libcuda = getenv("JITGEMM_LIBCUDA");
    }
    void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    CHECK(lib != NULL, "dlopen(%s): %s", argv[1], dlerror());
    if (!lib)
        return jg_test_result("test_no_driver");
    if (resolve(lib, "jg_context_create", &create, sizeof create) &&
        resolve(lib, "jg_context_destroy", &destroy, sizeof destroy) &&
        resolve(lib, "jg_context_last_error", &last_error, sizeof last_error) &&
        resolve(lib, "jg_status_name", &status_name, sizeof status_name)) {
        expect_no_driver(libcuda, 1);
        expect_no_driver(libcuda, 2); /* the loader's cached failure says the same */
        expect_offline_works();
        expect_no_driver(libcuda, 3);
    }
    /* No dlclose: unloading libstdc++ (pulled in by NVRTC) would orphan its
     * exception-handling pool, which LeakSanitizer then reports as a leak. */
    (void)lib;
    return jg_test_result("test_no_driver");
}
