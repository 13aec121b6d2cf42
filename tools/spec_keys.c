/* The catalog's kernel keys of a shape-spec line (spec_keys.h). */
#include "spec_keys.h"
#include "spec_problem.h"

int spec_line_keys(jg_context *ctx, const struct spec *s, jg__gemm_key out[SPEC_KEYS_MAX])
{
    if (spec_unsupported(s))
        return 0;
    static const uint32_t dense_flags[SPEC_KEYS_MAX] = {0, JG_GEMM_M_GENERIC, JG_GEMM_PDL};
    const int sets = s->kind == SPEC_GROUPED ? 1 : SPEC_KEYS_MAX;
    for (int i = 0; i < sets; ++i) {
        jg_gemm_problem p = spec_problem(s, JG_DTYPE_NONE, dense_flags[i]);
        int64_t m[JG_GROUPED_MAX_GROUPS];
        jg_status st;
        if (s->kind == SPEC_GROUPED) {
            jg_grouped_problem gp = spec_grouped(&p, s, m);
            st = jg__grouped_kernel_key(ctx, &gp, &out[i]);
        } else {
            st = jg__gemm_kernel_key(ctx, &p, &out[i]);
        }
        if (st != JG_OK)
            return -1;
    }
    return sets;
}
