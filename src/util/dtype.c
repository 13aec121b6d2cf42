/* Element types: their names (as kernel names spell them) and sizes, for
 * code generation and the runtime's checks and tensor maps alike. */
#include "util/util.h"

const char *jg__dtype_name(uint32_t dtype)
{
    switch (dtype) {
    case JG_BF16:
        return "bf16";
    case JG_FP16:
        return "fp16";
    case JG_FP32:
        return "fp32";
    case JG_E4M3:
        return "e4m3";
    case JG_NVFP4:
        return "nvfp4";
    }
    return "none";
}

size_t jg__dtype_size(uint32_t dtype)
{
    switch (dtype) {
    case JG_BF16:
    case JG_FP16:
        return 2;
    case JG_FP32:
        return 4;
    case JG_E4M3:
        return 1;
    }
    return 0;
}

size_t jg__dtype_bits(uint32_t dtype)
{
    return dtype == JG_NVFP4 ? 4 : 8 * jg__dtype_size(dtype);
}
