/* NVRTC for the GPU tests and the benchmark, which compile small kernels of
 * their own (an L2 flush, a delayed writer): the program's log after a
 * failed compile. Header-only; the includer links NVRTC. */
#ifndef JG_TEST_NVRTC_H
#define JG_TEST_NVRTC_H

#include <stdio.h>
#include <stdlib.h>

#include <nvrtc.h>

/* Prints the log of prog to stderr, if it has one. */
static inline void jg_nvrtc_print_log(nvrtcProgram prog)
{
    size_t n = 0;
    char *log = NULL;
    if (nvrtcGetProgramLogSize(prog, &n) == NVRTC_SUCCESS && n > 1 && (log = malloc(n)) &&
        nvrtcGetProgramLog(prog, log) == NVRTC_SUCCESS)
        fprintf(stderr, "%s\n", log);
    free(log);
}

#endif /* JG_TEST_NVRTC_H */
