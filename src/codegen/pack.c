/* The pack of unaligned operands (templates/sm90_pack.cu): which operands
 * of a dense problem a caller's workspace can take, where their copies lie
 * in it, and the problem of the aligned GEMM that reads them there. */
#include <string.h>

#include "codegen/codegen.h"

uint32_t jg__pack_operands(const jg__problem_key *p)
{
    if (p->groups || p->packed || p->a_type == JG_NVFP4 || (p->flags & JG_GEMM_FP32_EXACT))
        return 0;
    return jg__problem_soft(p) & (JG_SOFT_A | JG_SOFT_B);
}

/* Operand w (0: A, 1: B) as the pack copies it: its rows, their bytes,
 * and the copy's pitch (bytes between rows). K-major: M or N rows of K
 * elements; MN-major: K rows of M or N. The pitch does not depend on the
 * call's m, so that the packed plan's leading dimensions are fixed: an
 * M-generic M-major A's rows are padded from lda (>= every call's m). */
static void pack_rows(const jg__problem_key *p, int w, int64_t m, int64_t *rows,
                      int64_t *row_bytes, int64_t *pitch)
{
    const int64_t size = (int64_t)jg__dtype_size(w ? p->b_type : p->a_type);
    const bool mn = (p->flags & (w ? JG_GEMM_B_N_MAJOR : JG_GEMM_A_M_MAJOR)) != 0;
    const int64_t mn_cols = w ? p->n : m;
    *rows = mn ? p->k : w ? p->n : m;
    *row_bytes = (mn ? mn_cols : p->k) * size;
    int64_t widest = *row_bytes;
    if (mn && !w)
        widest = ((p->flags & JG_GEMM_M_GENERIC) ? p->lda : p->m) * size;
    *pitch = (widest + JG_PACK_PITCH - 1) / JG_PACK_PITCH * JG_PACK_PITCH;
}

uint64_t jg__pack_args(const jg__problem_key *p, int64_t m, const void *a, const void *b,
                       void *ws, jg_pack_kargs *out)
{
    const uint32_t ops = jg__pack_operands(p);
    jg_pack_kargs ka;
    memset(&ka, 0, sizeof ka);
    uint64_t at = 0;
    for (int w = 0; w < 2; ++w) {
        if (!(ops & (w ? JG_SOFT_B : JG_SOFT_A)))
            continue;
        int64_t rows, row_bytes, pitch;
        pack_rows(p, w, m, &rows, &row_bytes, &pitch);
        /* threads per row: the row's 16-byte chunks up to a power of two, at most 256 */
        const uint64_t chunks = jg__ceil_div((uint64_t)row_bytes, 16);
        uint32_t lanes_log2 = 0;
        while (lanes_log2 < 8 && (1ull << lanes_log2) < chunks)
            ++lanes_log2;
        ka.src[w] = w ? b : a;
        ka.dst[w] = ws ? (char *)ws + at : NULL;
        ka.src_ld[w] = (w ? p->ldb : p->lda) * (int64_t)jg__dtype_size(w ? p->b_type : p->a_type);
        ka.dst_ld[w] = pitch;
        ka.row_bytes[w] = row_bytes;
        ka.rows[w] = rows;
        ka.groups[w] = (int64_t)jg__ceil_div((uint64_t)rows, 256u >> lanes_log2);
        ka.lanes_log2[w] = lanes_log2;
        at += (uint64_t)rows * (uint64_t)pitch;
    }
    if (out)
        *out = ka;
    return at;
}

void jg__pack_problem(const jg__problem_key *p, jg__problem_key *out)
{
    const uint32_t ops = jg__pack_operands(p);
    *out = *p;
    out->packed = ops;
    for (int w = 0; w < 2; ++w) {
        if (!(ops & (w ? JG_SOFT_B : JG_SOFT_A)))
            continue;
        int64_t rows, row_bytes, pitch;
        pack_rows(p, w, p->m, &rows, &row_bytes, &pitch);
        const int64_t ld = pitch / (int64_t)jg__dtype_size(w ? p->b_type : p->a_type);
        if (w)
            out->ldb = ld;
        else
            out->lda = ld;
    }
}

void jg__pack_key_make(jg__gemm_key *out)
{
    memset(out, 0, sizeof *out);
    out->key_format = JG_KEY_FORMAT;
    out->kind = JG_KIND_PACK;
}
