/* Shape-spec lines as library problems, for the tools that plan them
 * (jitgemm-warm, jitgemm-variants): the same line makes the same kernels. */
#ifndef JG_TOOLS_SPEC_PROBLEM_H
#define JG_TOOLS_SPEC_PROBLEM_H

#include "jitgemm/jitgemm.h"
#include "spec.h"

/* Why no kernel exists for a line yet, or NULL. */
const char *spec_unsupported(const struct spec *s);
/* A line's first problem as a dense one: out_dtype JG_DTYPE_NONE writes the
 * line's type (BF16 for FP8 and NVFP4); flags are JG_GEMM_*. */
jg_gemm_problem spec_problem(const struct spec *s, jg_dtype out_dtype, uint32_t flags);
/* A grouped line as a problem; its rows are copied to m (JG_GROUPED_MAX_GROUPS
 * entries), which the problem points at. */
jg_grouped_problem spec_grouped(const jg_gemm_problem *dense, const struct spec *s, int64_t *m);

#endif /* JG_TOOLS_SPEC_PROBLEM_H */
