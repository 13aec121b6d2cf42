/* NVRTC: generated source to a cubin for the exact arch. NVRTC is
 * thread-safe for distinct programs, so compiles may run in parallel. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvrtc.h>

#include "runtime/runtime.h"

/* -default-device: every function without a space qualifier is device code.
 * -minimal (NVRTC 12.4+, our minimum): leaves out of NVRTC's built-in header
 * what our self-contained sources never use (textures, the device runtime,
 * launches from the device): the front end takes ~13 ms instead of ~20, and
 * the cubins are byte for byte the same (bench/RESULTS.md, "Cold compile:
 * where NVRTC's time goes").
 * The string goes into every cache key: changing an option changes every key. */
#define JG_OPT_STD "-std=c++17"
#define JG_OPT_DEVICE "-default-device"
#define JG_OPT_MINIMAL "-minimal"
static const char options_text[] = JG_OPT_STD " " JG_OPT_DEVICE " " JG_OPT_MINIMAL;

const char *jg__nvrtc_options(void) { return options_text; }

void jg__nvrtc_version(int *major, int *minor)
{
    if (nvrtcVersion(major, minor) != NVRTC_SUCCESS)
        *major = *minor = 0;
}

/* Copies a result of the program (log, cubin, PTX) into a buffer. */
static bool fetch(nvrtcProgram prog, nvrtcResult (*size_fn)(nvrtcProgram, size_t *),
                  nvrtcResult (*get_fn)(nvrtcProgram, char *), jg__buf *out)
{
    size_t n = 0;
    if (size_fn(prog, &n) != NVRTC_SUCCESS)
        return false;
    char *data = malloc(n ? n : 1);
    if (!data)
        return false;
    bool ok = get_fn(prog, data) == NVRTC_SUCCESS;
    if (ok)
        jg__buf_append(out, data, n);
    free(data);
    return ok && !out->failed;
}

jg_status jg__nvrtc_compile(const char *src, size_t src_len, const char *name, const char *arch,
                            jg__buf *cubin, jg__buf *ptx, jg__buf *log)
{
    (void)src_len;
    char arch_opt[64];
    snprintf(arch_opt, sizeof arch_opt, "-arch=%s", arch);
    const char *opts[] = {arch_opt, JG_OPT_STD, JG_OPT_DEVICE, JG_OPT_MINIMAL};
    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, src, name, 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        jg__buf_printf(log, "nvrtcCreateProgram: %s", nvrtcGetErrorString(r));
        return r == NVRTC_ERROR_OUT_OF_MEMORY ? JG_ERR_NO_MEMORY : JG_ERR_COMPILE;
    }
    r = nvrtcCompileProgram(prog, (int)JG_ARRAY_LEN(opts), opts);
    fetch(prog, nvrtcGetProgramLogSize, nvrtcGetProgramLog, log);
    jg_status st = JG_OK;
    if (r != NVRTC_SUCCESS) {
        jg__buf_printf(log, "\nnvrtcCompileProgram: %s", nvrtcGetErrorString(r));
        st = JG_ERR_COMPILE;
    } else if (!fetch(prog, nvrtcGetCUBINSize, nvrtcGetCUBIN, cubin)) {
        jg__buf_printf(log, "\nnvrtcGetCUBIN failed");
        st = JG_ERR_COMPILE;
    } else if (ptx) {
        fetch(prog, nvrtcGetPTXSize, nvrtcGetPTX, ptx); /* optional: only for dumps */
    }
    nvrtcDestroyProgram(&prog);
    return st;
}
