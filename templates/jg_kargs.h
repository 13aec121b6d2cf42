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
    jg_tmap a;         /* A [m, k], K-major, box {128 bytes, BLOCK_M}, 128B swizzle */
    jg_tmap b;         /* B [n, k], K-major, box {128 bytes, BLOCK_N}, 128B swizzle */
    jg_tmap d;         /* D [m, n16], box {epi_bytes / size, 64}, swizzle of epi_bytes;
                          n16: n rounded down to whole 16-byte pieces */
    void *d_ptr;       /* D, for the columns from n16 to n */
    int64_t ldd;
    const void *c;     /* C [m, n], row stride ldc elements; unused without C */
    int64_t ldc;
    const float *a_scale, *b_scale; /* FP8 tensor scales (one FP32 each), or NULL */
    int32_t m;         /* rows of this launch (baked kernels ignore it) */
    float alpha;
    float beta;
    uint32_t reserved;
} jg_gemm_kargs;

/* Soft loads and stores (sm90_soft.cuh), for operands whose pointers or
 * rows TMA cannot take (not 16-byte aligned): the matrix as a row-major
 * [rows, cols] array with rows ld elements apart, read in the boxes and
 * coordinates of its tensor map (K-major A: rows M, columns K; M-major A:
 * rows K, columns M). */
typedef struct jg_soft_map {
    const void *ptr;
    int64_t ld;
    int32_t rows, cols;
} jg_soft_map;

/* How one launch moves an operand that may take soft loads: */
#define JG_SOFT_TMA 0   /* TMA after all: pointer and rows 16-byte aligned */
#define JG_SOFT_P8 1    /* cp.async of 8-byte pieces: pointer and rows 8-byte aligned */
#define JG_SOFT_WORDS 2 /* cp.async of the aligned 4-byte words that hold each row,
                           then shifted into place (any element-aligned pointer and rows) */

/* The second kernel parameter of a GEMM with soft operands (JG_SOFT_PARAM
 * in sm90_gemm.cu): the kernel's A and B (swap-AB: the problem's B and A),
 * each operand's JG_SOFT_* mode for this launch, and the bytes of D's
 * direct stores (0: TMA stores). */
typedef struct jg_soft_kargs {
    jg_soft_map a, b;
    uint32_t a_mode, b_mode;
    uint32_t d_piece; /* 2, 4, 8 or 16 */
    uint32_t reserved;
} jg_soft_kargs;

/* The list layout's soft block: each group's A and B as soft maps, and
 * one mode for all groups (the strictest any group's pointers need). */
#define JG_SOFT_LIST_KARGS(G)                                                                \
    struct {                                                                                 \
        jg_soft_map a[G];                                                                    \
        jg_soft_map b[G];                                                                    \
        uint32_t a_mode, b_mode, d_piece, reserved;                                          \
    }
#define JG_SOFT_LIST_OFF_A(G) 0
#define JG_SOFT_LIST_OFF_B(G) ((G)*24)
#define JG_SOFT_LIST_OFF_MODES(G) ((G)*48)
#define JG_SOFT_LIST_SIZE(G) ((G)*48 + 16)

/* JG_GEMM_FP32_EXACT's split (sm90_split.cu): FP32 A [m, k] and B [n, k]
 * (rows lda, ldb elements apart) into the workspace as TF32 high and low
 * parts, rows of 2 * KP floats (KP = k rounded up to 64: high parts at
 * 0, low parts at KP, zeros past k): A's m rows, then B's n rows. */
typedef struct jg_split_kargs {
    const float *a, *b;
    int64_t lda, ldb;
    float *ws;
    int32_t m, n;
} jg_split_kargs;

/* Split-K through the caller's workspace (sm90_gemm.cu's JG_SPLIT_WS, after
 * the dense block): the workspace's tile counts (one uint32 a tile, zeroed
 * by the launch before the kernel) and, from the next 256-byte boundary,
 * each tile's JG_SPLIT_WS - 1 partial tiles of FP32 sums; stream-K
 * (JG_STREAM_K): a flag and a partial tile per CTA (jg__split_ws_bytes). */
typedef struct jg_split_ws_kargs {
    uint32_t *counts;
    float *parts;
} jg_split_ws_kargs;

/* The pack of unaligned operands (sm90_pack.cu): up to two matrices, [0]
 * A's and [1] B's (rows 0: none), each rows x row_bytes bytes, src_ld
 * bytes apart at src (aligned to its element), copied to rows dst_ld
 * bytes apart at dst (16-byte aligned, dst_ld a multiple of 128). Each row
 * is taken by 2^lanes_log2 threads; groups: a matrix's groups of
 * 256 >> lanes_log2 rows, the CTAs' units of work. */
typedef struct jg_pack_kargs {
    const void *src[2];
    void *dst[2];
    int64_t src_ld[2], dst_ld[2];
    int64_t row_bytes[2];
    int64_t rows[2];
    int64_t groups[2];
    uint32_t lanes_log2[2];
} jg_pack_kargs;

/* Dense NVFP4 GEMM: the dense block's fields in its order (the kernel's
 * shared code reads them by name), then the block scales. */
typedef struct jg_nvfp4_kargs {
    jg_tmap a;         /* packed A [m, k/2] bytes, box {128, a_box_m}, 128B swizzle */
    jg_tmap b;         /* packed B [n, k/2] bytes, box {128, BLOCK_N}, 128B swizzle */
    jg_tmap d;         /* as jg_gemm_kargs.d */
    void *d_ptr;
    int64_t ldd;
    const void *c;
    int64_t ldc;
    const float *a_scale, *b_scale; /* the global scales (one FP32 each) */
    int32_t m;
    float alpha;
    float beta;
    uint32_t reserved;
    jg_tmap a_sf;      /* row-major scales of A [m, k/16] bytes, box {16, a_box_m} */
    jg_tmap b_sf;      /* of B [n, k/16], box {16, BLOCK_N}; unused when swizzled */
    const uint8_t *a_sf_ptr, *b_sf_ptr; /* the scales (read directly when swizzled) */
} jg_nvfp4_kargs;

/* Quantization to e4m3 (sm90_quant.cu) or NVFP4 (sm90_quant_nvfp4.cu):
 * source [rows, cols] bf16/fp16. */
typedef struct jg_quant_kargs {
    const void *src;
    int64_t ld_src; /* elements */
    void *dst;      /* e4m3 bytes; NVFP4: e2m1 pairs */
    int64_t ld_dst; /* elements (NVFP4: rows ld_dst / 2 bytes apart) */
    float *scale;   /* the scales (tensor mode, NVFP4: the amax bits between phases) */
    int64_t rows;
    int32_t phase;  /* tensor mode, NVFP4: 0 amax, 1 quantize, 2 scale */
    uint32_t reserved;
    uint8_t *sf;    /* NVFP4: the e4m3 block scales */
} jg_quant_kargs;

/* Grouped GEMM, contiguous and masked layouts: one tensor per operand, the
 * groups' rows read from the device when the kernel starts (they may change
 * between launches, or be written by a previous kernel in a CUDA graph). */
typedef struct jg_device_grouped_kargs {
    jg_tmap a;           /* A: contiguous [m_max, k]; masked [groups * m_max, k] */
    jg_tmap b;           /* B: [groups * n, k], group g's rows from g * n */
    jg_tmap d;           /* D: rows as A, columns to the last whole 16 bytes of n */
    const int32_t *rows; /* contiguous: groups + 1 row offsets; masked: groups counts */
    const void *c;       /* C, laid out as D, or NULL */
    void *d_ptr;         /* D */
    int64_t ldc;
    int64_t ldd;
    const float *a_scale, *b_scale; /* e4m3: scales of the stacked A and B (tensor: one
                                        per group each; row; block) */
    int32_t m_max;       /* contiguous: rows of A and D; masked: rows of a group's slot */
    float alpha;
    float beta;
    uint32_t reserved;
} jg_device_grouped_kargs;

/* Contiguous and masked NVFP4: the block above in its order (the kernel's
 * shared code reads it by name), then the block scales. */
typedef struct jg_device_grouped_nvfp4_kargs {
    jg_tmap a;
    jg_tmap b;
    jg_tmap d;
    const int32_t *rows;
    const void *c;
    void *d_ptr;
    int64_t ldc;
    int64_t ldd;
    const float *a_scale, *b_scale; /* the groups' global scales, one FP32 per group each */
    int32_t m_max;
    float alpha;
    float beta;
    uint32_t reserved;
    jg_tmap a_sf;        /* row-major scales of all of A's rows, box {16, a_box_m} */
    jg_tmap b_sf;        /* row-major [groups * n, k/16], box {16, BLOCK_N}; unused swizzled */
    const uint8_t *a_sf_ptr, *b_sf_ptr; /* the scales (read directly when swizzled) */
} jg_device_grouped_nvfp4_kargs;

/* Grouped GEMM, list layout: G groups of separate A_g [m_g, k], B_g [n, k],
 * D_g [m_g, n] (and C_g). The block's size depends on G, so the struct is
 * declared only in the kernel (JG_LIST_KARGS(JG_GROUPS)); the host fills a
 * byte buffer at the offsets below, which the kernel checks against the
 * struct with static_assert. */
#define JG_LIST_KARGS(G) struct { JG_LIST_FIELDS(G) }
#define JG_LIST_FIELDS(G)                                                                    \
        jg_tmap a[G];      /* A_g: box {64, BLOCK_M}, 128B swizzle (as dense) */             \
        jg_tmap b[G];      /* B_g: box {64, BLOCK_N} */                                     \
        jg_tmap d[G];      /* D_g: as dense d */                                             \
        const void *c[G];  /* C_g, or NULL */                                                \
        void *d_ptr[G];    /* D_g, for the columns past the last whole 16 bytes */           \
        int64_t ldc;                                                                         \
        int64_t ldd;                                                                         \
        float alpha;                                                                         \
        float beta;                                                                          \
        const float *a_scale[G]; /* e4m3, NVFP4: A_g's scales, as a dense problem's, or NULL */    \
        const float *b_scale[G]; /* e4m3: B_g's; NVFP4: the global scales */

#define JG_LIST_OFF_A(G) 0
#define JG_LIST_OFF_B(G) ((G)*128)
#define JG_LIST_OFF_D(G) ((G)*256)
#define JG_LIST_OFF_C(G) ((G)*384)
#define JG_LIST_OFF_DPTR(G) ((G)*392)
#define JG_LIST_OFF_LDC(G) ((G)*400)
#define JG_LIST_OFF_LDD(G) ((G)*400 + 8)
#define JG_LIST_OFF_ALPHA(G) ((G)*400 + 16)
#define JG_LIST_OFF_BETA(G) ((G)*400 + 20)
#define JG_LIST_OFF_ASCALE(G) ((G)*400 + 24)
#define JG_LIST_OFF_BSCALE(G) ((G)*408 + 24)
#define JG_LIST_SIZE(G) (((G)*416 + 24 + 63) / 64 * 64)

/* List layout, NVFP4: the same fields, then each group's block scales (the
 * first map starts at JG_LIST_SIZE(G), where 64-byte alignment puts it). */
#define JG_LIST_NVFP4_KARGS(G)                                                               \
    struct {                                                                                 \
        JG_LIST_FIELDS(G)                                                                    \
        jg_tmap a_sf[G];   /* A_g's row-major scales, box {16, a_box_m}; unused swizzled */  \
        jg_tmap b_sf[G];   /* B_g's, box {16, BLOCK_N} */                                    \
        const uint8_t *a_sf_ptr[G]; /* the scales (read directly when swizzled) */           \
        const uint8_t *b_sf_ptr[G];                                                          \
    }
#define JG_LIST_OFF_ASF(G) JG_LIST_SIZE(G)
#define JG_LIST_OFF_BSF(G) (JG_LIST_SIZE(G) + (G)*128)
#define JG_LIST_OFF_ASFPTR(G) (JG_LIST_SIZE(G) + (G)*256)
#define JG_LIST_OFF_BSFPTR(G) (JG_LIST_SIZE(G) + (G)*264)
#define JG_LIST_NVFP4_SIZE(G) ((JG_LIST_SIZE(G) + (G)*272 + 63) / 64 * 64)

/* sm90_nvfp4_pre.cu's pre-pass: each group's packed A and its block
 * scales (by value: host arrays are not reachable), the workspace, A's row
 * stride in bytes. */
#define JG_PRE_DQ_KARGS(G)                                                                   \
    struct {                                                                                 \
        const uint8_t *a[G];                                                                 \
        const uint8_t *sf[G];                                                                \
        uint16_t *ws;                                                                        \
        int64_t lda_bytes;                                                                   \
    }
#define JG_PRE_DQ_OFF_A(G) 0
#define JG_PRE_DQ_OFF_SF(G) ((G)*8)
#define JG_PRE_DQ_OFF_WS(G) ((G)*16)
#define JG_PRE_DQ_OFF_LDA(G) ((G)*16 + 8)
#define JG_PRE_DQ_SIZE(G) ((G)*16 + 16)

#endif /* JG_KARGS_H */
