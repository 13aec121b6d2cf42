/* The CUDA driver, opened at run time so that the library loads, compiles
 * and caches on machines without one (CI, build farms), and a missing driver
 * is a status rather than a loader failure. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/runtime.h"

/* The ABI version we ask cuGetProcAddress for: every function in the table
 * exists in this form since CUDA 12.0. */
#define JG_DRIVER_ABI 12000

typedef CUresult (*jg__get_proc_fn)(const char *, void **, int, cuuint64_t,
                                    CUdriverProcAddressQueryResult *);

static pthread_once_t driver_once = PTHREAD_ONCE_INIT;
static jg__driver driver;
static jg_status driver_status;
static char driver_error[512];

static void driver_load(void)
{
    const char *path = getenv("JITGEMM_LIBCUDA");
    if (!path || !*path)
        path = "libcuda.so.1";
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(driver_error, sizeof driver_error, "dlopen(%s): %s", path, why ? why : "failed");
        driver_status = JG_ERR_NO_DRIVER;
        return;
    }
    void *sym = dlsym(lib, "cuGetProcAddress_v2");
    jg__get_proc_fn get_proc = NULL;
    memcpy(&get_proc, &sym, sizeof sym); /* ISO C has no object-to-function cast */
    if (!get_proc) {
        snprintf(driver_error, sizeof driver_error,
                 "%s has no cuGetProcAddress_v2: the driver is older than CUDA 12", path);
        driver_status = JG_ERR_NO_DRIVER;
        return;
    }
#define JG_DRIVER_RESOLVE_(name, ret, args)                                                        \
    {                                                                                              \
        void *fn = NULL;                                                                           \
        CUdriverProcAddressQueryResult q = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;                   \
        if (get_proc(#name, &fn, JG_DRIVER_ABI, CU_GET_PROC_ADDRESS_DEFAULT, &q) != 0 || !fn) {    \
            snprintf(driver_error, sizeof driver_error,                                            \
                     "cuGetProcAddress(%s) failed: the driver is too old", #name);                 \
            driver_status = JG_ERR_NO_DRIVER;                                                      \
            return;                                                                                \
        }                                                                                          \
        memcpy(&driver.name, &fn, sizeof fn);                                                      \
    }
    JG_DRIVER_FUNCS(JG_DRIVER_RESOLVE_)
#undef JG_DRIVER_RESOLVE_
    CUresult r = driver.cuInit(0);
    if (r != CUDA_SUCCESS) {
        const char *name = "?";
        driver.cuGetErrorName(r, &name);
        snprintf(driver_error, sizeof driver_error, "cuInit: %s", name);
        driver_status = r == CUDA_ERROR_NO_DEVICE ? JG_ERR_NO_DEVICE : JG_ERR_CUDA;
        return;
    }
    driver_status = JG_OK;
}

jg_status jg__driver_get(const jg__driver **out, char *err, size_t err_len)
{
    pthread_once(&driver_once, driver_load);
    if (driver_status != JG_OK) {
        snprintf(err, err_len, "%s", driver_error);
        *out = NULL;
        return driver_status;
    }
    *out = &driver;
    return JG_OK;
}
