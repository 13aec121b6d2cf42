/* The LLVM backend in a build without LLVM (meson -Dllvm=disabled, or auto
 * without llvm-19-dev): nothing is served, every kernel goes to NVRTC, and a
 * context that asks for the backend is refused (context.c). */
#include "llvm/llvm.h"

bool jg__llvm_built(void) { return false; }

jg_status jg__llvm_compile(const jg__gemm_key *key, const char *name, const char *arch,
                           jg__buf *ptx, jg__buf *ir, jg__buf *log)
{
    (void)key, (void)name, (void)arch, (void)ptx, (void)ir;
    jg__buf_puts(log, "libjitgemm was built without LLVM");
    return JG_ERR_UNSUPPORTED;
}

bool jg__llvm_serves(const jg__gemm_key *key)
{
    (void)key;
    return false;
}

size_t jg__llvm_variant_count(void) { return 0; }

const char *jg__llvm_options(void) { return "none"; }

jg__hash128 jg__llvm_catalog_hash(void)
{
    jg__hash128 none = {0, 0};
    return none;
}
