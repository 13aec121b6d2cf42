/* TMA descriptors, encoded on the host and passed by value to the kernel. */
#include <string.h>

#include "runtime/runtime.h"

_Static_assert(sizeof(jg_tmap) == sizeof(CUtensorMap), "jg_tmap mirrors CUtensorMap");
_Static_assert(_Alignof(jg_tmap) == 64, "TMA needs 64-byte aligned descriptors");

static CUtensorMapDataType tma_dtype(uint32_t dtype)
{
    switch (dtype) {
    case JG_BF16:
        return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case JG_FP16:
        return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case JG_E4M3:
        return CU_TENSOR_MAP_DATA_TYPE_UINT8; /* TMA moves bytes; wgmma reads e4m3 */
    case JG__TMAP_TF32:
        return CU_TENSOR_MAP_DATA_TYPE_TFLOAT32;
    default:
        return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    }
}

static CUtensorMapSwizzle tma_swizzle(uint32_t row_bytes)
{
    switch (row_bytes) {
    case 128:
        return CU_TENSOR_MAP_SWIZZLE_128B;
    case 64:
        return CU_TENSOR_MAP_SWIZZLE_64B;
    case 32:
        return CU_TENSOR_MAP_SWIZZLE_32B;
    default:
        return CU_TENSOR_MAP_SWIZZLE_NONE;
    }
}

/* L2 promotion of a map whose rows are `pitch` bytes apart: 256 bytes, but
 * 128 where rows start off 32-byte sectors (FP8 rows of K = 16 mod 32,
 * NVFP4 ones of K = 32 mod 64). On an H200, 29 FP8 rows off sectors ran
 * 1.039x as fast with 128 (0.93-1.16; none or 64 bytes: 1.026), 10 aligned
 * ones 0.998x and 12 BF16 rows off 128-byte lines 0.996x
 * (bench/results/2026-11-29-h200-tma-promotion). */
static CUtensorMapL2promotion tma_promotion(uint64_t pitch)
{
    return pitch % 32 ? CU_TENSOR_MAP_L2_PROMOTION_L2_128B : CU_TENSOR_MAP_L2_PROMOTION_L2_256B;
}

/* The map carries the true extents, so TMA zero-fills loads past the edges
 * of the last tiles and drops stores there. */
jg_status jg__tmap_encode_2d(jg_context *ctx, jg_tmap *out, uint32_t dtype, const void *ptr,
                             uint64_t rows, uint64_t cols, uint64_t ld, uint32_t box_rows,
                             uint32_t box_cols)
{
    const uint64_t size = jg__dtype_size(dtype == JG__TMAP_TF32 ? JG_FP32 : dtype);
    if (!size) /* NVFP4 operands are maps of bytes (E4M3); a half-byte type here is our bug */
        return jg__fail(ctx, JG_ERR_UNSUPPORTED, "a tensor map of %s elements: only whole bytes",
                        jg__dtype_name((jg_dtype)dtype));
    cuuint64_t dims[2] = {cols, rows};
    cuuint64_t strides[1] = {ld * size};
    cuuint32_t box[2] = {box_cols, box_rows};
    cuuint32_t elem_strides[2] = {1, 1};
    CUresult r = ctx->cu->cuTensorMapEncodeTiled(
        (CUtensorMap *)out, tma_dtype(dtype), 2, (void *)ptr, dims, strides, box, elem_strides,
        CU_TENSOR_MAP_INTERLEAVE_NONE, tma_swizzle((uint32_t)(box_cols * size)),
        tma_promotion(strides[0]), CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return jg__fail_cu(ctx, "cuTensorMapEncodeTiled", r);
    return JG_OK;
}
