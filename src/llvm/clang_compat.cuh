/* What NVRTC provides built in and our templates use, for clang's CUDA mode
 * with -nocudainc -nocudalib (no toolkit header): the build compiles the
 * LLVM backend's variants with `-include` of this file (docs/llvm-backend.md).
 * Each definition is the PTX-level meaning of the NVRTC built-in, through
 * clang's NVPTX builtins. __grid_constant__ is accepted and dropped: clang 19
 * has no such attribute, and the backend marks the kernel's parameter
 * grid_constant in the module's nvvm.annotations instead. */
#ifndef JG_CLANG_COMPAT_CUH
#define JG_CLANG_COMPAT_CUH

#define JG_LLVM_BACKEND 1 /* templates that compile differently under clang */
#define __CUDACC_RTC__ 1 /* jg_kargs.h: its own fixed-width typedefs, no system header */
#define __device__ __attribute__((device))
#define __global__ __attribute__((global))
#define __shared__ __attribute__((shared))
#define __constant__ __attribute__((constant))
#define __forceinline__ __inline__ __attribute__((always_inline))
#define __launch_bounds__(...) __attribute__((launch_bounds(__VA_ARGS__)))
#define __grid_constant__

#include <__clang_cuda_builtin_vars.h> /* threadIdx, blockIdx, blockDim, gridDim */

#define JG_COMPAT static __device__ __inline__ __attribute__((always_inline))

JG_COMPAT unsigned long long __cvta_generic_to_shared(const void *p)
{
    return (unsigned long long)(__attribute__((address_space(3))) const void *)p;
}
JG_COMPAT void __syncwarp(unsigned mask = 0xffffffffu) { __nvvm_bar_warp_sync(mask); }
JG_COMPAT int __shfl_up_sync(unsigned mask, int v, unsigned delta)
{
    return __nvvm_shfl_sync_up_i32(mask, v, (int)delta, 0);
}
JG_COMPAT unsigned __shfl_up_sync(unsigned mask, unsigned v, unsigned delta)
{
    return (unsigned)__nvvm_shfl_sync_up_i32(mask, (int)v, (int)delta, 0);
}
JG_COMPAT unsigned __shfl_xor_sync(unsigned mask, unsigned v, int lane)
{
    return (unsigned)__nvvm_shfl_sync_bfly_i32(mask, (int)v, lane, 0x1f);
}
JG_COMPAT float __shfl_xor_sync(unsigned mask, float v, int lane)
{
    return __nvvm_shfl_sync_bfly_f32(mask, v, lane, 0x1f);
}
JG_COMPAT float __uint_as_float(unsigned v) { return __builtin_bit_cast(float, v); }
JG_COMPAT unsigned __float_as_uint(float v) { return __builtin_bit_cast(unsigned, v); }
JG_COMPAT int min(int a, int b) { return a < b ? a : b; }
JG_COMPAT int max(int a, int b) { return a > b ? a : b; }
JG_COMPAT unsigned min(unsigned a, unsigned b) { return a < b ? a : b; }
JG_COMPAT unsigned max(unsigned a, unsigned b) { return a > b ? a : b; }

struct __attribute__((aligned(16))) uint4 {
    unsigned x, y, z, w;
};
struct __attribute__((aligned(16))) float4 {
    float x, y, z, w;
};
struct __attribute__((aligned(8))) float2 {
    float x, y;
};

#endif /* JG_CLANG_COMPAT_CUH */
