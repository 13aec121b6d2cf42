/* Clock and median helpers shared by the tools that time host-side work
 * (jitgemm-latency, jitgemm-nvrtc-time). */
#ifndef JG_TOOLS_TIMING_H
#define JG_TOOLS_TIMING_H

#include <stdlib.h>
#include <time.h>

/* Milliseconds on a clock: CLOCK_MONOTONIC for wall time,
 * CLOCK_PROCESS_CPUTIME_ID for the CPU time of all the process's threads. */
static inline double timing_ms(clockid_t clock)
{
    struct timespec ts;
    clock_gettime(clock, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static inline int timing_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v (n > 0) and returns its median. */
static inline double timing_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, timing_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif /* JG_TOOLS_TIMING_H */
