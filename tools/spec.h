/* Shape specs: one JSON object per line, shared by every tool (jitgemm-bench,
 * jitgemm-warm) so that a file one accepts the others accept too.
 *
 *   {"name": "square4096", "kind": "dense", "m": 4096, "n": 4096, "k": 4096}
 *   {"m": [80, 176], "n": [4096, 4096], "k": [7168, 7168], "g": 2, "seed": 1111}
 *
 * Fields (unknown ones are ignored, so files can carry notes):
 *   name    string of 1..63 characters; default "line<N>"
 *   kind    "dense", "decode" or "grouped"; default grouped when g is given
 *           or m, n and k are all lists, else dense
 *   layout  grouped only: "list" (default), "contiguous" or "masked"
 *   m n k   dense/decode: an integer, or a list of one; grouped: lists of g
 *           integers; every value in [1, 2^31-1]
 *   g       groups, in [1, 65536]; default the lists' length (1 for dense)
 *   m_max   masked only: rows each group may reach (>= every m); default max(m)
 *   dtype   "bf16" (default), "fp16", "fp8", "nvfp4", "fp32" (A and B FP32 on
 *           TF32 tensor cores) or "fp32-exact" (FP32 accuracy, three TF32
 *           products; dense only)
 *   scale   fp8/nvfp4 only: "tensor", "row" or "block"; default tensor for
 *           fp8, block for nvfp4
 *   sf      nvfp4 only: the block scales' layout, "128x4" (default: the
 *           swizzled layout of Blackwell's block-scaled GEMMs) or "row"
 *   seed    an integer >= 0 (the seeds' grouped cases name one)
 *   workspace  grouped only: true to plan with JG_GROUPED_WORKSPACE (the
 *           caller passes a device workspace); default false
 *   a_major  "k" (default) or "m": A given as [K, M] row-major (bf16 and
 *           fp16, dense only)
 *   b_major  "k" (default) or "n": B (each B_g) as [K, N] row-major (bf16
 *           and fp16; grouped: list layout)
 *   lda ldb ldd  dense and decode only: leading dimensions in elements, in
 *           [1, 2^40) (default packed; the library checks them against m, n, k)
 *   unaligned  true to plan for pointers aligned to their element only
 *           (JG_GEMM_UNALIGNED, JG_GROUPED_UNALIGNED); default false
 * Blank lines and lines whose first non-blank character is '#' are skipped. */
#ifndef JG_TOOLS_SPEC_H
#define JG_TOOLS_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum spec_kind { SPEC_DENSE, SPEC_DECODE, SPEC_GROUPED };
enum spec_layout { SPEC_LAYOUT_NONE, SPEC_LAYOUT_LIST, SPEC_LAYOUT_CONTIGUOUS, SPEC_LAYOUT_MASKED };
enum spec_dtype { SPEC_BF16, SPEC_FP16, SPEC_FP8, SPEC_NVFP4, SPEC_FP32, SPEC_FP32_EXACT };
enum spec_scale { SPEC_SCALE_NONE, SPEC_SCALE_TENSOR, SPEC_SCALE_ROW, SPEC_SCALE_BLOCK };
enum spec_sf { SPEC_SF_NONE, SPEC_SF_128X4, SPEC_SF_ROW };

#define SPEC_NAME_MAX 64 /* bytes, with the NUL */
#define SPEC_G_MAX 65536

struct spec {
    int line;                /* 1-based, as given to spec_parse_line */
    char name[SPEC_NAME_MAX];
    enum spec_kind kind;
    enum spec_layout layout; /* SPEC_LAYOUT_NONE unless grouped */
    int g;                   /* groups: the length of m, n and k */
    int64_t *m, *n, *k;      /* g values each (owned; spec_free) */
    int64_t m_max;           /* masked: >= every m; else 0 */
    enum spec_dtype dtype;
    enum spec_scale scale;   /* SPEC_SCALE_NONE for bf16/fp16 */
    enum spec_sf sf;         /* nvfp4: both operands' scale layout; else SPEC_SF_NONE */
    bool has_seed;
    int64_t seed;
    bool workspace;          /* grouped: plan with JG_GROUPED_WORKSPACE */
    bool a_mn, b_mn;         /* A as [K, M], B as [K, N] (a_major "m", b_major "n") */
    int64_t lda, ldb, ldd;   /* dense and decode: leading dimensions; 0 packed */
    bool unaligned;          /* plan for element-aligned pointers */
    int64_t generic_hint_m;  /* dense: also time an M-generic plan for this M; 0 (absent
                              * or null): none */
};

/* Parses one line of len bytes (no NUL needed; a trailing newline is fine).
 * Returns 0 with *out filled (free it with spec_free), 1 for a blank or
 * comment line, -1 with "line N: field 'X': why" (or "line N, column C:
 * invalid JSON: why") in err. *out is always left safe to spec_free.
 * err may be NULL or err_len 0. Never crashes, whatever the bytes. */
int spec_parse_line(const char *text, size_t len, int line, struct spec *out, char *err,
                    size_t err_len);

/* Frees the lists and zeroes *s; NULL and zeroed specs are fine. */
void spec_free(struct spec *s);

/* The JSON spellings: "dense", "masked", "bf16", "tensor"; "" for NONE. */
const char *spec_kind_name(enum spec_kind k);
const char *spec_layout_name(enum spec_layout l);
const char *spec_dtype_name(enum spec_dtype d);
const char *spec_scale_name(enum spec_scale s);
const char *spec_sf_name(enum spec_sf s);

#endif /* JG_TOOLS_SPEC_H */
