/* nvJitLink, opened at run time: PTX to a cubin without NVRTC (the LLVM
 * backend's last step). libnvJitLink comes with the CUDA toolkit; the
 * library does not link it, so a build with LLVM still loads where it is
 * missing, and only the LLVM backend then reports it. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvJitLink.h>

#include "jg_internal.h"

#define JG_NVJITLINK_FUNCS(X)                                                                  \
    X(nvJitLinkCreate, (nvJitLinkHandle *, uint32_t, const char **))                           \
    X(nvJitLinkDestroy, (nvJitLinkHandle *))                                                   \
    X(nvJitLinkAddData, (nvJitLinkHandle, nvJitLinkInputType, const void *, size_t,            \
                         const char *))                                                        \
    X(nvJitLinkComplete, (nvJitLinkHandle))                                                    \
    X(nvJitLinkGetLinkedCubinSize, (nvJitLinkHandle, size_t *))                                \
    X(nvJitLinkGetLinkedCubin, (nvJitLinkHandle, void *))                                      \
    X(nvJitLinkGetErrorLogSize, (nvJitLinkHandle, size_t *))                                   \
    X(nvJitLinkGetErrorLog, (nvJitLinkHandle, char *))                                         \
    X(nvJitLinkVersion, (unsigned int *, unsigned int *))

static struct {
#define JG_NVJL_FIELD_(name, args) nvJitLinkResult(*name) args;
    JG_NVJITLINK_FUNCS(JG_NVJL_FIELD_)
#undef JG_NVJL_FIELD_
} nvjl;

static pthread_once_t nvjl_once = PTHREAD_ONCE_INIT;
static char nvjl_error[512]; /* "" once loaded */

static void nvjl_load(void)
{
    const char *env = getenv("JITGEMM_LIBNVJITLINK");
    const char *names[] = {env && *env ? env : "libnvJitLink.so.13", "libnvJitLink.so.12",
                           "libnvJitLink.so"};
    void *lib = NULL;
    for (size_t i = 0; !lib && i < (env && *env ? 1 : JG_ARRAY_LEN(names)); ++i)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char *why = dlerror();
        snprintf(nvjl_error, sizeof nvjl_error, "dlopen(%s): %s", names[0], why ? why : "failed");
        return;
    }
#define JG_NVJL_RESOLVE_(name, args)                                                           \
    {                                                                                          \
        void *fn = dlsym(lib, #name);                                                          \
        if (!fn) {                                                                             \
            snprintf(nvjl_error, sizeof nvjl_error, "libnvJitLink has no %s", #name);          \
            return;                                                                            \
        }                                                                                      \
        memcpy(&nvjl.name, &fn, sizeof fn); /* ISO C has no object-to-function cast */         \
    }
    JG_NVJITLINK_FUNCS(JG_NVJL_RESOLVE_)
#undef JG_NVJL_RESOLVE_
}

static bool nvjl_ready(jg__buf *log)
{
    pthread_once(&nvjl_once, nvjl_load);
    if (nvjl_error[0])
        jg__buf_printf(log, "nvJitLink unavailable: %s", nvjl_error);
    return !nvjl_error[0];
}

void jg__nvjitlink_version(int *major, int *minor)
{
    unsigned int ma = 0, mi = 0;
    pthread_once(&nvjl_once, nvjl_load);
    if (nvjl_error[0] || nvjl.nvJitLinkVersion(&ma, &mi) != NVJITLINK_SUCCESS)
        ma = mi = 0;
    *major = (int)ma;
    *minor = (int)mi;
}

/* The linker's error log after a failed step. */
static void error_log(nvJitLinkHandle h, const char *step, nvJitLinkResult r, jg__buf *log)
{
    jg__buf_printf(log, "%s: nvJitLinkResult %d", step, (int)r);
    size_t n = 0;
    if (nvjl.nvJitLinkGetErrorLogSize(h, &n) != NVJITLINK_SUCCESS || n <= 1)
        return;
    char *text = malloc(n);
    if (text && nvjl.nvJitLinkGetErrorLog(h, text) == NVJITLINK_SUCCESS)
        jg__buf_printf(log, "\n%.*s", (int)(n - 1), text);
    free(text);
}

jg_status jg__nvjitlink_ptx(const char *ptx, size_t len, const char *name, const char *arch,
                            jg__buf *cubin, jg__buf *log)
{
    if (!nvjl_ready(log))
        return JG_ERR_COMPILE;
    char arch_opt[64];
    snprintf(arch_opt, sizeof arch_opt, "-arch=%s", arch);
    const char *opts[] = {arch_opt, "-O3"};
    nvJitLinkHandle h = NULL;
    nvJitLinkResult r = nvjl.nvJitLinkCreate(&h, (uint32_t)JG_ARRAY_LEN(opts), opts);
    if (r != NVJITLINK_SUCCESS) {
        jg__buf_printf(log, "nvJitLinkCreate: nvJitLinkResult %d", (int)r);
        return JG_ERR_COMPILE;
    }
    const char *step = "nvJitLinkAddData";
    r = nvjl.nvJitLinkAddData(h, NVJITLINK_INPUT_PTX, ptx, len, name);
    if (r == NVJITLINK_SUCCESS) {
        step = "nvJitLinkComplete";
        r = nvjl.nvJitLinkComplete(h);
    }
    size_t n = 0;
    if (r == NVJITLINK_SUCCESS) {
        step = "nvJitLinkGetLinkedCubin";
        r = nvjl.nvJitLinkGetLinkedCubinSize(h, &n);
    }
    char *data = r == NVJITLINK_SUCCESS ? malloc(n ? n : 1) : NULL;
    if (r == NVJITLINK_SUCCESS && !data) {
        nvjl.nvJitLinkDestroy(&h);
        return JG_ERR_NO_MEMORY;
    }
    if (r == NVJITLINK_SUCCESS)
        r = nvjl.nvJitLinkGetLinkedCubin(h, data);
    if (r == NVJITLINK_SUCCESS)
        jg__buf_append(cubin, data, n);
    else
        error_log(h, step, r, log);
    free(data);
    nvjl.nvJitLinkDestroy(&h);
    if (cubin->failed)
        return JG_ERR_NO_MEMORY;
    return r == NVJITLINK_SUCCESS ? JG_OK : JG_ERR_COMPILE;
}
