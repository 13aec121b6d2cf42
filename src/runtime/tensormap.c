/* TMA descriptors, encoded on the host and passed by value to the kernel. */
#include <string.h>

#include "jg_internal.h"

_Static_assert(sizeof(jg_tmap) == sizeof(CUtensorMap), "jg_tmap mirrors CUtensorMap");
_Static_assert(_Alignof(jg_tmap) == 64, "TMA needs 64-byte aligned descriptors");

/* A K-major operand [rows, k] with row stride ld elements, read in boxes of
 * box_k x box_rows into 128-byte-swizzled shared memory. The map carries the
 * true extents, so TMA zero-fills the ragged edges of the last tiles. */
jg_status jg__tmap_encode_kmajor(jg_context *ctx, jg_tmap *out, uint32_t dtype, const void *ptr,
                                 uint64_t rows, uint64_t k, uint64_t ld, uint32_t box_rows,
                                 uint32_t box_k)
{
    CUtensorMapDataType dt =
        dtype == JG_BF16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    cuuint64_t dims[2] = {k, rows};
    cuuint64_t strides[1] = {ld * jg__dtype_size(dtype)};
    cuuint32_t box[2] = {box_k, box_rows};
    cuuint32_t elem_strides[2] = {1, 1};
    CUresult r = ctx->cu->cuTensorMapEncodeTiled(
        (CUtensorMap *)out, dt, 2, (void *)ptr, dims, strides, box, elem_strides,
        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS)
        return jg__fail_cu(ctx, "cuTensorMapEncodeTiled", r);
    return JG_OK;
}
