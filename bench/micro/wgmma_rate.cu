// Microbenchmark: cycles per m64nNk16 FP16 wgmma, A from registers (RS) or shared memory (SS),
// 1..3 warpgroups per CTA, one CTA per SM; each warpgroup issues groups of 16 independent-enough
// wgmmas (on four accumulators in turn, two at n64), then waits for them. Prints cycles per wgmma per warpgroup
// and per SM. Not part of the build (bench/RESULTS.md, "Techniques tried", quotes its output):
//   nvcc -gencode arch=compute_90a,code=sm_90a -O2 -Itemplates -o wgmma_rate \
//        bench/micro/wgmma_rate.cu
#include <cstdio>
#include <cstdint>
#include <cuda_runtime.h>

#include "sm90_ptx.cuh" /* the kernels' descriptor and wgmma sync helpers */

template <int MODE> // 0: RS n8, 1: SS n8, 2: RS n64, 3: RS n16
__global__ void __launch_bounds__(384, 1) kern(int iters, unsigned long long *out, float *sink) {
    __shared__ __align__(1024) uint8_t buf[64 * 1024];
    for (int i = threadIdx.x; i < 64 * 1024 / 4; i += blockDim.x) ((uint32_t *)buf)[i] = 0x3c003c00u * (i & 1);
    __syncthreads();
    const uint32_t sa = jg_smem_addr(buf);
    const uint64_t db = jg_wgmma_desc_sw128(sa + 32768), da = jg_wgmma_desc_sw128(sa);
    constexpr int NA = MODE == 2 ? 32 : MODE == 3 ? 8 : 4, NC = MODE == 2 ? 2 : 4;
    float acc[NC][NA];
    for (int c = 0; c < NC; ++c) for (int j = 0; j < NA; ++j) acc[c][j] = 0.f;
    uint32_t a[16][4];
    for (int q = 0; q < 16; ++q)
        for (int r = 0; r < 4; ++r) a[q][r] = 0x3c003c00u ^ (threadIdx.x * 16 + q * 4 + r);
    asm volatile("bar.sync 0;");
    unsigned long long t0 = clock64();
    for (int it = 0; it < iters; ++it) {
        jg_wgmma_fence();
#pragma unroll
        for (int s = 0; s < 16; ++s) {
            float *d = acc[s % NC];
            if (MODE == 0)
                asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, {%4,%5,%6,%7}, %8, 1, 1, 1, 0;"
                             : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                             : "r"(a[s][0]), "r"(a[s][1]), "r"(a[s][2]), "r"(a[s][3]), "l"(db + 2 * s));
            else if (MODE == 1)
                asm volatile("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%0,%1,%2,%3}, %4, %5, 1, 1, 1, 0, 0;"
                             : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                             : "l"(da + 2 * s), "l"(db + 2 * s));
            else if (MODE == 3)
                asm volatile("wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, %12, 1, 1, 1, 0;"
                             : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
                             : "r"(a[s][0]), "r"(a[s][1]), "r"(a[s][2]), "r"(a[s][3]), "l"(db + 2 * s));
            else
                asm volatile("wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
                             "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, "
                             "{%32,%33,%34,%35}, %36, 1, 1, 1, 0;"
                             : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),
                               "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),
                               "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),
                               "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
                             : "r"(a[s][0]), "r"(a[s][1]), "r"(a[s][2]), "r"(a[s][3]), "l"(db + 2 * s));
        }
        jg_wgmma_commit();
        jg_wgmma_wait<0>();
    }
    unsigned long long t1 = clock64();
    float s = 0; for (int c = 0; c < NC; ++c) for (int j = 0; j < NA; ++j) s += acc[c][j];
    if (s == 12345.f) *sink = s;
    if (threadIdx.x % 128 == 0) out[blockIdx.x * 3 + threadIdx.x / 128] = t1 - t0;
}

template <int MODE> void run(const char *name, int wgs) {
    int iters = 2000;
    unsigned long long *out; float *sink;
    cudaMalloc(&out, 132 * 3 * 8); cudaMalloc(&sink, 4);
    kern<MODE><<<132, 128 * wgs>>>(10, out, sink);
    cudaDeviceSynchronize();
    cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
    cudaEventRecord(e0);
    kern<MODE><<<132, 128 * wgs>>>(iters, out, sink);
    cudaEventRecord(e1); cudaEventSynchronize(e1);
    float ms; cudaEventElapsedTime(&ms, e0, e1);
    unsigned long long h[132 * 3]; cudaMemcpy(h, out, sizeof h, cudaMemcpyDeviceToHost);
    double cyc = h[0];
    printf("%-14s wgs %d: %.1f cycles per wgmma per warpgroup, %.1f per SM; %.3f ms (%s)\n", name, wgs,
           cyc / (iters * 16.0), cyc / (iters * 16.0 * wgs), ms, cudaGetErrorString(cudaGetLastError()));
    cudaFree(out); cudaFree(sink);
}

int main() {
    for (int w = 1; w <= 3; ++w) {
        run<0>("RS m64n8k16", w);
        run<3>("RS m64n16k16", w);
        run<1>("SS m64n8k16", w);
        run<2>("RS m64n64k16", w);
    }
    return 0;
}
