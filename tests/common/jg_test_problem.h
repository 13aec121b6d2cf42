/* Short names for the validation tests' tables of jg_gemm_problem rows
 * (test_validate.c, test_api_bad_input.c), so that each row reads as one
 * line. Header-only. */
#ifndef JG_TEST_PROBLEM_H
#define JG_TEST_PROBLEM_H

#include "jitgemm/jitgemm.h"

#define NONE JG_DTYPE_NONE
#define BF16 JG_BF16
#define FP16 JG_FP16
#define FP32 JG_FP32

/* A jg_gemm_problem by position; e4m3 A gets tensor scales, every other
 * type none. */
#define P(flags, a, b, c, d, m, n, k, lda, ldb, ldc, ldd) \
    {flags, a, b, c, d, m, n, k, lda, ldb, ldc, ldd, (a) == JG_E4M3 ? JG_SCALE_TENSOR : JG_SCALE_NONE, \
     JG_SF_LAYOUT_NONE, JG_SF_LAYOUT_NONE}
/* The same with an explicit jg_scale_mode. */
#define PS(scale, flags, a, b, c, d, m, n, k, lda, ldb, ldc, ldd) \
    {flags, a, b, c, d, m, n, k, lda, ldb, ldc, ldd, scale, JG_SF_LAYOUT_NONE, JG_SF_LAYOUT_NONE}

#endif /* JG_TEST_PROBLEM_H */
