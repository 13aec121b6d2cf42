/* The LLVM backend's layer (src/llvm/, docs/llvm-backend.md): a kernel key
 * to PTX through its variant's bitcode, LLVM's optimizer and its NVPTX
 * target. It builds on code generation and the utilities; like them it
 * knows no driver and no NVRTC (the runtime loads the PTX it makes, and
 * falls back to NVRTC for what it does not serve), which
 * tests/unit/check_layers.py checks. Not installed. */
#ifndef JG_LLVM_H
#define JG_LLVM_H

#include "codegen/codegen.h"

/* Whether this build has the backend (meson -Dllvm). Without it the
 * functions below serve nothing: jg__llvm_compile returns JG_ERR_UNSUPPORTED
 * (llvm_off.c). */
bool jg__llvm_built(void);
/* Compiles a key through its variant's bitcode to PTX for arch (with a
 * terminating NUL: the module image the driver compiles when it loads it,
 * as a whole program; nvJitLink and cuLink* compile PTX as relocatable
 * code, where ptxas ignores setmaxnreg and the kernels spill).
 * JG_ERR_UNSUPPORTED when the catalog has no variant for it (the caller
 * compiles it with NVRTC), JG_ERR_COMPILE with LLVM's message in log. ir,
 * when not NULL, receives the optimized IR (JITGEMM_DUMP). */
jg_status jg__llvm_compile(const jg__gemm_key *key, const char *name, const char *arch,
                           jg__buf *ptx, jg__buf *ir, jg__buf *log);
/* Whether the catalog has the key's variant. */
bool jg__llvm_serves(const jg__gemm_key *key);
size_t jg__llvm_variant_count(void);
/* LLVM's version, target features and passes: part of the salt, with the
 * catalog's hash (every variant's prelude hash and bitcode). */
const char *jg__llvm_options(void);
jg__hash128 jg__llvm_catalog_hash(void);

#endif /* JG_LLVM_H */
