/* The kernel keys of a shape-spec line as the LLVM backend's catalog plans
 * them (tools/jitgemm-variants.c, and the test that checks the catalog). */
#ifndef JG_TOOLS_SPEC_KEYS_H
#define JG_TOOLS_SPEC_KEYS_H

/* Internal: a kernel key (jg__gemm_key, from jg__gemm_kernel_key) is the
 * library's own type; the public API shows only its name and hash
 * (jg_kernel_id). */
#include "jg_internal.h"
#include "spec.h"

#define SPEC_KEYS_MAX 3

/* Dense and decode lines as given, M-generic and with PDL; grouped lines as
 * given; none for a line without kernels (spec_unsupported). Returns how
 * many keys it wrote, or -1 with the reason in ctx's last error. */
int spec_line_keys(jg_context *ctx, const struct spec *s, jg__gemm_key out[SPEC_KEYS_MAX]);

#endif /* JG_TOOLS_SPEC_KEYS_H */
