/* The LLVM backend's bitcode catalog, generated at build time by
 * src/llvm/build_catalog.py: one entry per variant, sorted by the hash of
 * the variant's prelude (jg__emit_gemm_spec), hi then lo. */
#ifndef JG_LLVM_CATALOG_H
#define JG_LLVM_CATALOG_H

#include "llvm/llvm.h"

typedef struct jg__llvm_variant {
    jg__hash128 prelude; /* XXH3-128 of the variant's prelude */
    const unsigned char *bitcode;
    size_t len;
} jg__llvm_variant;

extern const jg__llvm_variant jg__llvm_variants[];
extern const size_t jg__llvm_variants_count;

#endif /* JG_LLVM_CATALOG_H */
