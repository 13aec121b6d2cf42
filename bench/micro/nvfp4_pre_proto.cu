// Prototype driver of templates/sm90_nvfp4_pre.cu at its default macros (the seeds' grouped
// case 1 in NVFP4: 8 groups, N 4096, K 7168), outside the library: random codes and scales,
// both kernels timed (CUDA events, median of 50, L2 not flushed), the output checked against
// an FP32 reference kernel that dequantizes on the fly. Not part of the build:
//   python3 templates/gen_wgmma_n.py --rs $(seq 8 8 256) > /tmp/sm90_wgmma_rs.cuh
//   nvcc -gencode arch=compute_90a,code=sm_90a -O2 -Itemplates -I/tmp -o pre \
//        bench/micro/nvfp4_pre_proto.cu -lcuda
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include <cuda.h>
#include <cuda_runtime.h>

#include "sm90_nvfp4_pre.cu"

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t e_ = (x);                                                                  \
        if (e_ != cudaSuccess) {                                                               \
            printf("%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e_));                 \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

__device__ float e2m1_d(int c)
{
    const float v[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
    return (c & 8 ? -1.f : 1.f) * v[c & 7];
}
__device__ float e4m3_d(uint8_t b)
{
    int e = (b >> 3) & 15, m = b & 7;
    float f = e ? ldexpf(1.f + m / 8.f, e - 7) : ldexpf(m / 8.f, -6);
    return b & 0x80 ? -f : f;
}
// swizzled 128x4 scale offset, as jg_nvfp4_sf_offset
__device__ __host__ int64_t sf_off(int64_t r, int64_t kb, int64_t kbp4)
{
    return ((r / 128) * kbp4 + kb / 4) * 512 + (r % 32) * 16 + (r / 32 % 4) * 4 + kb % 4;
}

// out[m, n] = g * sum_k a(m,k) b(n,k), FP32, one thread per output
__global__ void ref_kernel(const uint8_t *a, const uint8_t *asf, const uint8_t *b, const uint8_t *bsf,
                           float g, int M, int N, int K, float *out)
{
    int n = blockIdx.x * blockDim.x + threadIdx.x, m = blockIdx.y;
    if (n >= N) return;
    const int kbp4 = (K / 16 + 3) / 4;
    float s = 0;
    for (int kb = 0; kb < K / 16; ++kb) {
        float sa = e4m3_d(asf[sf_off(m, kb, kbp4)]), sb = e4m3_d(bsf[sf_off(n, kb, kbp4)]);
        float p = 0;
        for (int i = 0; i < 16; ++i) {
            int k = kb * 16 + i;
            int ca = (a[(int64_t)m * K / 2 + k / 2] >> (4 * (k & 1))) & 15;
            int cb = (b[(int64_t)n * K / 2 + k / 2] >> (4 * (k & 1))) & 15;
            p += e2m1_d(ca) * e2m1_d(cb);
        }
        s += p * sa * sb;
    }
    out[(int64_t)m * N + n] = s * g;
}

static CUtensorMap map2d(void *p, CUtensorMapDataType t, uint64_t rows, uint64_t cols, uint64_t ld_bytes,
                         uint32_t box_cols, uint32_t box_rows)
{
    CUtensorMap m;
    cuuint64_t dims[2] = {cols, rows}, strides[1] = {ld_bytes};
    cuuint32_t box[2] = {box_cols, box_rows}, es[2] = {1, 1};
    CUresult r = cuTensorMapEncodeTiled(&m, t, 2, p, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                        CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                        CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
    if (r != CUDA_SUCCESS) { printf("encode failed %d\n", r); exit(1); }
    return m;
}

int main(int argc, char **argv)
{
    const int reps = argc > 1 ? atoi(argv[1]) : 50;
    const int G = JG_GROUPS, N = JG_N, K = JG_K;
    const uint32_t rows[G] = JG_PRE_GROUP_ROWS;
    int mt = 0;
    for (int g = 0; g < G; ++g) mt += rows[g];
    const int kbp4 = (K / 16 + 3) / 4;
    srand(12345);
    std::vector<uint8_t *> da(G), dasf(G), db(G), dbsf(G);
    std::vector<uint16_t *> dd(G);
    std::vector<float *> dsa(G), dsb(G);
    for (int g = 0; g < G; ++g) {
        size_t asz = (size_t)rows[g] * K / 2, bsz = (size_t)N * K / 2;
        size_t asfsz = (size_t)(rows[g] + 127) / 128 * kbp4 * 512, bsfsz = (size_t)(N + 127) / 128 * kbp4 * 512;
        std::vector<uint8_t> h(std::max(bsz, bsfsz));
        CK(cudaMalloc(&da[g], asz)); CK(cudaMalloc(&db[g], bsz));
        CK(cudaMalloc(&dasf[g], asfsz)); CK(cudaMalloc(&dbsf[g], bsfsz));
        for (size_t i = 0; i < asz; ++i) h[i] = rand() & 255;
        CK(cudaMemcpy(da[g], h.data(), asz, cudaMemcpyHostToDevice));
        for (size_t i = 0; i < bsz; ++i) h[i] = rand() & 255;
        CK(cudaMemcpy(db[g], h.data(), bsz, cudaMemcpyHostToDevice));
        for (size_t i = 0; i < asfsz; ++i) h[i] = 0x30 + rand() % 16; // 2^-1 .. ~1.9
        CK(cudaMemcpy(dasf[g], h.data(), asfsz, cudaMemcpyHostToDevice));
        for (size_t i = 0; i < bsfsz; ++i) h[i] = 0x28 + rand() % 16;
        CK(cudaMemcpy(dbsf[g], h.data(), bsfsz, cudaMemcpyHostToDevice));
        CK(cudaMalloc(&dd[g], (size_t)rows[g] * N * 2));
        float sa = 0.5f + g * 0.1f, sb = 0.25f;
        CK(cudaMalloc(&dsa[g], 4)); CK(cudaMalloc(&dsb[g], 4));
        CK(cudaMemcpy(dsa[g], &sa, 4, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(dsb[g], &sb, 4, cudaMemcpyHostToDevice));
    }
    uint16_t *ws;
    CK(cudaMalloc(&ws, (size_t)mt * JG_PRE_K64 * 2));

    jg_pre_dq_args dq;
    memset(&dq, 0, sizeof dq);
    for (int g = 0; g < G; ++g) { dq.a[g] = da[g]; dq.sf[g] = dasf[g]; }
    dq.ws = ws;
    dq.lda_bytes = K / 2;
    uint32_t maxr = 0;
    for (int g = 0; g < G; ++g) maxr = std::max(maxr, rows[g]);
    dim3 dq_grid((maxr * (JG_PRE_K64 / 64) * 2 + 255) / 256, G);

    static jg_kargs_t ka;
    memset(&ka, 0, sizeof ka);
    CUtensorMap wsmap = map2d(ws, CU_TENSOR_MAP_DATA_TYPE_FLOAT16, mt, JG_PRE_K64, JG_PRE_K64 * 2, 64, JG_PRE_BOX);
    memcpy(&ka.a[0], &wsmap, 128);
    for (int g = 0; g < G; ++g) {
        CUtensorMap bm = map2d(db[g], CU_TENSOR_MAP_DATA_TYPE_UINT8, N, K / 2, K / 2, 128, 128);
        memcpy(&ka.b[g], &bm, 128);
        ka.d_ptr[g] = dd[g];
        ka.b_sf_ptr[g] = dbsf[g];
        ka.a_scale[g] = dsa[g];
        ka.b_scale[g] = dsb[g];
    }
    ka.ldd = N;
    ka.alpha = 1.0f;
    const int smem = JG_STAGES * JG_PRE_WSTAGE_BYTES + JG_PRE_SLOTS * JG_PRE_PIECE_BYTES + 1024 + 1024;
    CK(cudaFuncSetAttribute(JG_KERNEL_NAME, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    int sms;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    const int grid = JG_PRE_GRID;
    (void)sms;
    printf("smem %d, grid %d, dq grid %d x %d\n", smem, grid, dq_grid.x, dq_grid.y);
    const bool pdl = getenv("PDL") && atoi(getenv("PDL"));

    cudaEvent_t e0, e1, e2;
    cudaEventCreate(&e0); cudaEventCreate(&e1); cudaEventCreate(&e2);
    std::vector<float> t_dq, t_mm, t_all;
    for (int it = 0; it < reps + 5; ++it) {
        for (int g = 0; g < G; ++g) CK(cudaMemsetAsync(dd[g], 0xFF, (size_t)rows[g] * N * 2));
        cudaEventRecord(e0);
        JG_PRE_DQ_NAME<<<dq_grid, 256>>>(dq);
        if (!pdl)
            cudaEventRecord(e1);
        if (pdl) {
            cudaLaunchConfig_t lc = {};
            cudaLaunchAttribute at[1];
            at[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
            at[0].val.programmaticStreamSerializationAllowed = 1;
            lc.gridDim = grid; lc.blockDim = JG_THREADS; lc.dynamicSmemBytes = smem; lc.attrs = at; lc.numAttrs = 1;
            CK(cudaLaunchKernelEx(&lc, JG_KERNEL_NAME, ka));
        } else
            JG_KERNEL_NAME<<<grid, JG_THREADS, smem>>>(ka);
        cudaEventRecord(e2);
        CK(cudaEventSynchronize(e2));
        CK(cudaGetLastError());
        float a, b;
        if (pdl) {
            cudaEventElapsedTime(&b, e0, e2);
            a = 0;
        } else {
            cudaEventElapsedTime(&a, e0, e1);
            cudaEventElapsedTime(&b, e1, e2);
        }
        if (it >= 5) { t_dq.push_back(a * 1000); t_mm.push_back(b * 1000); t_all.push_back((a + b) * 1000); }
    }
    std::sort(t_dq.begin(), t_dq.end()); std::sort(t_mm.begin(), t_mm.end()); std::sort(t_all.begin(), t_all.end());
    double flops = 2.0 * mt * N * K;
    printf("dequant %.1f us, gemm %.1f us (%.0f TFLOP/s), both %.1f us (%.0f TFLOP/s)\n", t_dq[reps / 2],
           t_mm[reps / 2], flops / t_mm[reps / 2] / 1e6, t_all[reps / 2], flops / t_all[reps / 2] / 1e6);

    // check
    double worst = 0, sum2 = 0, ref2 = 0;
    int bad = 0;
    for (int g = 0; g < G; ++g) {
        float *ref;
        float sa = 0.5f + g * 0.1f, sb = 0.25f;
        CK(cudaMalloc(&ref, (size_t)rows[g] * N * 4));
        ref_kernel<<<dim3((N + 127) / 128, rows[g]), 128>>>(da[g], dasf[g], db[g], dbsf[g], sa * sb, rows[g], N, K, ref);
        CK(cudaDeviceSynchronize());
        std::vector<float> hr((size_t)rows[g] * N);
        std::vector<uint16_t> hd((size_t)rows[g] * N);
        CK(cudaMemcpy(hr.data(), ref, hr.size() * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(hd.data(), dd[g], hd.size() * 2, cudaMemcpyDeviceToHost));
        for (size_t i = 0; i < hr.size(); ++i) {
            uint32_t u = (uint32_t)hd[i] << 16;
            float v;
            memcpy(&v, &u, 4);
            double e = fabs((double)v - hr[i]);
            sum2 += e * e; ref2 += (double)hr[i] * hr[i];
            if (!(e <= 1e-2 * fabs(hr[i]) + 1e-3 * 8)) { if (bad < 5) printf("g %d i %zu: %g vs %g\n", g, i, v, hr[i]); ++bad; }
            worst = std::max(worst, e / (fabs(hr[i]) + 1));
        }
        cudaFree(ref);
    }
    printf("check: %d bad, rel norm err %.3g, worst %.3g\n", bad, sqrt(sum2 / ref2), worst);
    return bad != 0;
}
