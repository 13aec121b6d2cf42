/* Kernel argument blocks, shared by the host C code and the generated CUDA
 * source, so that the two can never disagree about a layout. Written in the
 * common subset of C11 and C++17 with fixed-width types only. Every struct is
 * passed by value as one `const __grid_constant__` kernel parameter. */
#ifndef JG_KARGS_H
#define JG_KARGS_H

#if defined(__CUDACC_RTC__)
/* NVRTC compiles our sources without any toolkit or system header. */
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef int int32_t;
typedef unsigned int uint32_t;
typedef long long int64_t;
typedef unsigned long long uint64_t;
typedef unsigned long long uintptr_t;
#else
#include <stdint.h>
#endif

#if defined(__cplusplus)
#define JG_ALIGNAS(n) alignas(n)
#else
#define JG_ALIGNAS(n) _Alignas(n)
#endif

/* The 128-byte opaque CUtensorMap that cuTensorMapEncodeTiled fills on the
 * host. TMA requires it 64-byte aligned in the parameter space. */
typedef struct jg_tmap {
    JG_ALIGNAS(64) uint64_t opaque[16];
} jg_tmap;

/* Dense GEMM: D = alpha * A * B^T + beta * C. */
typedef struct jg_gemm_kargs {
    jg_tmap a;         /* A [m, k], K-major, box {64, BLOCK_M}, 128B swizzle */
    jg_tmap b;         /* B [n, k], K-major, box {64, BLOCK_N}, 128B swizzle */
    jg_tmap d;         /* D [m, n16], box {epi_bytes / size, 64}, swizzle of epi_bytes;
                          n16: n rounded down to whole 16-byte pieces */
    void *d_ptr;       /* D, for the columns from n16 to n */
    int64_t ldd;
    const void *c;     /* C [m, n], row stride ldc elements; unused without C */
    int64_t ldc;
    int32_t m;         /* rows of this launch (baked kernels ignore it) */
    float alpha;
    float beta;
    uint32_t reserved;
} jg_gemm_kargs;

#endif /* JG_KARGS_H */
