/* Epilogue stores of the swap-AB kernels (sm90_nvfp4_swap.cu,
 * sm90_nvfp4_pre.cu): a consumer's m64nNk16 accumulator has the weight's
 * rows on wgmma's M side, so its rows are D's columns. Thread (warp w, lane
 * l) holds acc[4i + e]: D's column n0 + 8 (e / 2), n0 = (tile's first) +
 * 16 w + l / 4, and D's row 8i + 2 (l % 4) + e % 2 (from the tile's).
 *
 * The lane 4 away (l ^ 4) holds column n0 ^ 1 of the same rows, so the two
 * swap a value and each stores two columns of one row: the even-column
 * lane row 8i + 2 (l % 4), the other row 8i + 2 (l % 4) + 1. One 4-byte
 * store (8 for FP32) instead of two 2-byte ones, at addresses stepped from
 * a base set once a tile. Against a store per value with its own address
 * and bounds, the seeds' grouped cases took 2-10% less time (H200,
 * 2026-11-26): the epilogue's instructions, not its bytes.
 *
 * Needs JG_D_DTYPE (1 BF16, 2 FP16, 3 FP32), JG_HAS_C and JG_N; D's and
 * C's pointers and row strides are 16-byte aligned (validated), so a pair
 * at an even column is one aligned word. */
#ifndef JG_SWAP_STORE_CUH
#define JG_SWAP_STORE_CUH

#if JG_D_DTYPE == 3
typedef float jg_out_t;
#else
typedef uint16_t jg_out_t; /* BF16 or FP16 bits */
#endif

JG_DEV float jg_out_to_f32(jg_out_t c)
{
#if JG_D_DTYPE == 3
    return c;
#elif JG_D_DTYPE == 1
    return jg_bf16_to_f32(c);
#else
    return jg_f16_to_f32(c);
#endif
}

/* A lane's pairs: its rows' parity (odd: the second row of each pair of
 * rows, the pair's second column its own) and the pairs' first column nc;
 * pair[h]: columns nc + 8h and nc + 8h + 1 lie in D; one[h]: only the first
 * does (an odd N's last column). */
struct jg_swap_pairs {
    uint32_t odd, nc;
    bool pair[2], one[2];
};

JG_DEV jg_swap_pairs jg_swap_pairs_at(uint32_t n0)
{
    jg_swap_pairs s;
    s.odd = n0 & 1;
    s.nc = n0 - s.odd;
#pragma unroll
    for (int h = 0; h < 2; ++h) {
        s.pair[h] = s.nc + 8 * h + 1 < JG_N;
        s.one[h] = JG_N % 2 == 1 && s.nc + 8 * h + 1 == JG_N;
    }
    return s;
}

/* d[0..1] = v0, v1 (+ beta c[0..1]) where the pair lies in D, d[0] alone
 * where only it does: v0 = acc[4i + 2h], v1 = acc[4i + 2h + 1] (already
 * scaled) of every lane of the warp (all of them call this: a shuffle),
 * `in` whether the lane's row of the pair lies in D. */
JG_DEV void jg_swap_store(const jg_swap_pairs &s, int h, bool in, float v0, float v1, jg_out_t *d,
                          const jg_out_t *c, float beta)
{
    const float got = __shfl_xor_sync(0xffffffffu, s.odd ? v0 : v1, 4);
    float lo = s.odd ? got : v0, hi = s.odd ? v1 : got;
    if (in && s.pair[h]) {
#if JG_HAS_C
#if JG_D_DTYPE == 3
        const float2 cc = *(const float2 *)c;
        lo += beta * cc.x;
        hi += beta * cc.y;
#else
        const uint32_t cc = *(const uint32_t *)c;
        lo += beta * jg_out_to_f32((uint16_t)cc);
        hi += beta * jg_out_to_f32((uint16_t)(cc >> 16));
#endif
#endif
#if JG_D_DTYPE == 3
        *(float2 *)d = make_float2(lo, hi);
#elif JG_D_DTYPE == 1
        *(uint32_t *)d = jg_pack_bf16x2(lo, hi);
#else
        *(uint32_t *)d = jg_pack_f16x2(lo, hi);
#endif
    } else if (JG_N % 2 == 1 && in && s.one[h]) {
#if JG_HAS_C
        lo += beta * jg_out_to_f32(*c);
#endif
#if JG_D_DTYPE == 3
        *d = lo;
#elif JG_D_DTYPE == 1
        *d = (uint16_t)jg_pack_bf16x2(lo, 0.0f);
#else
        *d = (uint16_t)jg_pack_f16x2(lo, 0.0f);
#endif
    }
}

/* A consumer's tile of D (and C) from its accumulators acc[NV / 2]: the
 * lane's first pair at row `row` (its rows step by 8 from there), column
 * sp.nc; rows from `row` on exist while 8 i < rows_left (i: the
 * accumulators' group of 4); values times `scale`, then times `alpha`
 * (each product rounded as written). */
template <int NV>
JG_DEV void jg_swap_store_tile(const jg_swap_pairs &sp, const float (&acc)[NV / 2], void *d_ptr,
                               const void *c_ptr, int64_t ldd, int64_t ldc, int64_t row,
                               int32_t rows_left, float scale, float alpha, float beta)
{
    jg_out_t *d = (jg_out_t *)d_ptr + row * ldd + sp.nc;
    const int64_t d_step = 8 * ldd;
#if JG_HAS_C
    const jg_out_t *c = (const jg_out_t *)c_ptr + row * ldc + sp.nc;
    const int64_t c_step = 8 * ldc;
#else
    (void)c_ptr;
    (void)ldc;
    const jg_out_t *c = nullptr;
    const int64_t c_step = 0;
#endif
#pragma unroll
    for (int i = 0; i < NV / 8; ++i) {
        const bool in = 8 * i < rows_left;
#pragma unroll
        for (int h = 0; h < 2; ++h)
            jg_swap_store(sp, h, in, alpha * (acc[4 * i + 2 * h] * scale),
                          alpha * (acc[4 * i + 2 * h + 1] * scale), d + i * d_step + 8 * h,
                          c + i * c_step + 8 * h, beta);
    }
}

#endif /* JG_SWAP_STORE_CUH */
