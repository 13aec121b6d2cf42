/* PTX helpers for sm_90a kernels: mbarrier, TMA, wgmma, register control and
 * conversions. Self-contained (no toolkit headers): NVRTC compiles it fast.
 * Every helper is a thin wrapper over one PTX instruction of the PTX ISA;
 * shared-memory addresses are 32-bit shared-window addresses. */
#ifndef JG_SM90_PTX_CUH
#define JG_SM90_PTX_CUH

#include "jg_kargs.h"

#define JG_DEV __device__ __forceinline__
#define JG_STR_(x) #x
#define JG_STR(x) JG_STR_(x)

JG_DEV uint32_t jg_smem_addr(const void *p)
{
    return (uint32_t)__cvta_generic_to_shared(p);
}

/* The dynamic shared memory's first 1024-byte aligned address: the 128B
 * swizzle needs 1024-byte aligned tiles (the host asks for 1 KB extra). */
JG_DEV uint32_t jg_smem_tiles()
{
    extern __shared__ uint8_t jg_smem_raw[];
    return (jg_smem_addr(jg_smem_raw) + 1023) & ~1023u;
}

JG_DEV uint32_t jg_warp_id() { return threadIdx.x / 32; }
JG_DEV uint32_t jg_lane_id() { return threadIdx.x % 32; }

/* ---- programmatic dependent launch ------------------------------------ */

/* Waits until the grids this one depends on (launched with programmatic
 * stream serialization) have completed and their memory is visible; at
 * once when there are none. */
JG_DEV void jg_pdl_wait() { asm volatile("griddepcontrol.wait;" ::: "memory"); }

/* Lets the stream's next programmatic dependent launch once every CTA of
 * this grid has said so or exited: it still waits for this grid's end
 * before touching its results. */
JG_DEV void jg_pdl_launch_dependents()
{
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
}

/* ---- mbarrier ---------------------------------------------------------- */

JG_DEV void jg_mbar_init(uint32_t bar, uint32_t count)
{
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

/* Makes the initialized barriers visible to the async proxy (TMA). */
JG_DEV void jg_mbar_init_fence()
{
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

JG_DEV void jg_mbar_arrive(uint32_t bar)
{
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

/* True in one lane of the (converged) warp */
JG_DEV bool jg_elect_one()
{
    uint32_t one;
    asm volatile("{\n.reg .pred p;\nelect.sync _|p, 0xffffffff;\nselp.u32 %0, 1, 0, p;\n}\n"
                 : "=r"(one));
    return one != 0;
}

/* Arrives once and announces that `bytes` will land through TMA. */
JG_DEV void jg_mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
                 : "memory");
}

/* One try of an mbarrier wait; SEM: the acquire's qualifiers, if any. */
#define JG_MBAR_TRY_WAIT(SEM)                                                                  \
    "{\n.reg .pred p;\nmbarrier.try_wait.parity" SEM ".shared::cta.b64 p, [%1], %2;\n"        \
    "selp.u32 %0, 1, 0, p;\n}\n"

/* Waits until the barrier's phase with the given parity has completed.
 * CLUSTER: acquiring at cluster scope, for phases that threads of another
 * CTA of the cluster complete (their memory accesses become visible). */
template <bool CLUSTER = false>
JG_DEV void jg_mbar_wait(uint32_t bar, uint32_t parity)
{
    uint32_t done;
    do {
        if (CLUSTER)
            asm volatile(JG_MBAR_TRY_WAIT(".acquire.cluster")
                         : "=r"(done)
                         : "r"(bar), "r"(parity)
                         : "memory");
        else
            asm volatile(JG_MBAR_TRY_WAIT("") : "=r"(done) : "r"(bar), "r"(parity) : "memory");
    } while (!done);
}

/* ---- clusters ----------------------------------------------------------- */

JG_DEV uint32_t jg_cluster_rank()
{
    uint32_t r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

/* Every thread of every CTA of the cluster: arrive (release), then wait
 * (acquire). Also a barrier for the threads of this CTA. */
JG_DEV void jg_cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

/* The shared::cluster address of shared offset `addr` in the cluster's CTA
 * `rank` (this CTA's own included). */
JG_DEV uint32_t jg_mapa(uint32_t addr, uint32_t rank)
{
    uint32_t remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
    return remote;
}

/* Arrives on the barrier at shared offset `bar` of the cluster's CTA `rank`
 * (this CTA's own included), releasing this thread's earlier memory
 * accesses at cluster scope: a waiter in the other CTA sees them. */
JG_DEV void jg_mbar_arrive_cluster(uint32_t bar, uint32_t rank)
{
    asm volatile("mbarrier.arrive.release.cluster.shared::cluster.b64 _, [%0];" ::"r"(
                     jg_mapa(bar, rank))
                 : "memory");
}

/* Arrives on the barrier at shared offset `bar` of the cluster's CTA `rank`
 * without publishing anything at cluster scope: for handing a buffer back
 * once this thread's reads of it are complete (a stage its wgmmas read,
 * retired by wgmma.wait_group). The .release.cluster form above costs a
 * MEMBAR.ALL.GPU per arrive, which waits for the thread's outstanding
 * global stores too: the GEMM's stage releases with it ran clusters of 2
 * at half speed (H100, 2026-11-22: 4096x4096x7168 BF16 645 us against
 * 337 us at daa4429, before the release form came in). */
JG_DEV void jg_mbar_arrive_remote(uint32_t bar, uint32_t rank)
{
    asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];" ::"r"(jg_mapa(bar, rank))
                 : "memory");
}

/* ---- TMA --------------------------------------------------------------- */

JG_DEV void jg_tma_prefetch_desc(const jg_tmap *map)
{
    asm volatile("prefetch.tensormap [%0];" ::"l"((uint64_t)map) : "memory");
}

/* Loads the box at (c0 inner, c1 outer) of a 2D tensor map into shared
 * memory; completion is counted in bytes on `bar`. Out-of-bounds elements
 * of the box arrive as zeros and still count. */
JG_DEV void jg_tma_load_2d(uint32_t dst, const jg_tmap *map, uint32_t bar, int32_t c0, int32_t c1)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(bar)
                 : "memory");
}

/* The same load multicast to the CTAs of the cluster in `mask`: the box
 * lands at the same shared-memory offset in each, and each CTA's barrier at
 * the offset of `bar` counts its bytes. */
JG_DEV void jg_tma_load_2d_multicast(uint32_t dst, const jg_tmap *map, uint32_t bar, int32_t c0,
                                     int32_t c1, uint16_t mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
                 ".multicast::cluster [%0], [%1, {%2, %3}], [%4], %5;" ::"r"(dst),
                 "l"((uint64_t)map), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
                 : "memory");
}

/* Stores a box from shared memory to the tensor at (c0, c1); TMA drops the
 * parts of the box outside the tensor. Completion is tracked per thread in
 * bulk groups (jg_bulk_commit, jg_bulk_wait_read, jg_bulk_wait). */
JG_DEV void jg_tma_store_2d(const jg_tmap *map, uint32_t src, int32_t c0, int32_t c1)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%2, %3}], [%1];" ::"l"(
                     (uint64_t)map),
                 "r"(src), "r"(c0), "r"(c1)
                 : "memory");
}

JG_DEV void jg_bulk_commit() { asm volatile("cp.async.bulk.commit_group;" ::: "memory"); }

/* Waits until at most N bulk groups still read their shared memory. */
template <int N>
JG_DEV void jg_bulk_wait_read()
{
    asm volatile("cp.async.bulk.wait_group.read %0;" ::"n"(N) : "memory");
}

/* Waits until at most N bulk groups are incomplete. */
template <int N>
JG_DEV void jg_bulk_wait()
{
    asm volatile("cp.async.bulk.wait_group %0;" ::"n"(N) : "memory");
}

/* Orders this thread's generic-proxy shared-memory writes before later
 * async-proxy (TMA, wgmma) reads of them. */
JG_DEV void jg_fence_proxy_async_smem()
{
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

/* Barrier among `threads` threads (a multiple of 32) on hardware barrier id. */
JG_DEV void jg_named_barrier(uint32_t id, uint32_t threads)
{
    asm volatile("bar.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

/* The same, for threads that reach it from different instructions (e.g. two
 * template instances): bar.sync is barrier.sync.aligned, which requires
 * every participant to execute the same instruction. */
/* Arrives at named barrier `id` without waiting: counts toward the
 * `threads` that its bar.sync waiters wait for. */
JG_DEV void jg_named_barrier_arrive(uint32_t id, uint32_t threads)
{
    asm volatile("bar.arrive %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

JG_DEV void jg_named_barrier_unaligned(uint32_t id, uint32_t threads)
{
    asm volatile("barrier.sync %0, %1;" ::"r"(id), "r"(threads) : "memory");
}

JG_DEV void jg_st_shared_v2_f32(uint32_t addr, float a, float b)
{
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(addr), "f"(a), "f"(b) : "memory");
}

JG_DEV void jg_st_shared_f32(uint32_t addr, float a)
{
    asm volatile("st.shared.f32 [%0], %1;" ::"r"(addr), "f"(a) : "memory");
}

JG_DEV void jg_st_shared_v4_f32(uint32_t addr, float a, float b, float c, float d)
{
    asm volatile("st.shared.v4.f32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "f"(a), "f"(b), "f"(c),
                 "f"(d)
                 : "memory");
}

/* Split-K through the workspace (sm90_gemm.cu's jg_split_ws): 16 bytes of
 * partial sums to global memory, and back from L2 (.cg: never a line this
 * SM's L1 may hold from before); the count of a tile's stored shares,
 * raised with release semantics at GPU scope (the stores that precede it,
 * this CTA's other threads' through a barrier, are visible to whoever
 * acquires the new value) and read with acquire semantics. */
JG_DEV void jg_st_global_v4_f32(float4 *dst, float a, float b, float c, float d)
{
    asm volatile("st.global.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(dst), "f"(a), "f"(b), "f"(c),
                 "f"(d)
                 : "memory");
}

JG_DEV float4 jg_ld_global_cg_v4_f32(const float4 *src)
{
    float4 v;
    asm volatile("ld.global.cg.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "l"(src));
    return v;
}

JG_DEV void jg_red_release_gpu_add(uint32_t *addr, uint32_t v)
{
    asm volatile("red.release.gpu.global.add.u32 [%0], %1;" ::"l"(addr), "r"(v) : "memory");
}

JG_DEV uint32_t jg_ld_acquire_gpu(const uint32_t *addr)
{
    uint32_t v;
    asm volatile("ld.acquire.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(addr) : "memory");
    return v;
}

JG_DEV void jg_nanosleep(uint32_t ns) { asm volatile("nanosleep.u32 %0;" ::"r"(ns)); }

/* 16 bytes from a shared::cluster address (jg_mapa): another CTA's shared
 * memory, or this CTA's own. */
JG_DEV float4 jg_ld_cluster_v4_f32(uint32_t addr)
{
    float4 v;
    asm volatile("ld.shared::cluster.v4.f32 {%0, %1, %2, %3}, [%4];"
                 : "=f"(v.x), "=f"(v.y), "=f"(v.z), "=f"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}

/* 4 bytes global -> shared without registers (cp.async, completed by
 * jg_cp_async_wait_all); bytes = 0 writes a zero and reads nothing. */
JG_DEV void jg_cp_async_4(uint32_t dst, const void *src, uint32_t bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" ::"r"(dst), "l"(src), "r"(bytes)
                 : "memory");
}

JG_DEV void jg_cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }

JG_DEV void jg_cp_async_wait_all() { asm volatile("cp.async.wait_all;" ::: "memory"); }

/* 8 bytes global -> shared, the same way (both addresses 8-byte aligned). */
JG_DEV void jg_cp_async_8(uint32_t dst, const void *src, uint32_t bytes)
{
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8, %2;" ::"r"(dst), "l"(src), "r"(bytes)
                 : "memory");
}

/* 16 bytes global -> shared, the same way (both addresses 16-byte aligned),
 * through L2 only: the operands' reuse is across CTAs. */
JG_DEV void jg_cp_async_16(uint32_t dst, const void *src, uint32_t bytes)
{
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(bytes)
                 : "memory");
}

/* Waits until at most N of this thread's cp.async groups are pending. */
template <int N>
JG_DEV void jg_cp_async_wait_group()
{
    asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

JG_DEV void jg_st_shared_b32(uint32_t addr, uint32_t v)
{
    asm volatile("st.shared.b32 [%0], %1;" ::"r"(addr), "r"(v) : "memory");
}

JG_DEV void jg_st_shared_u8(uint32_t addr, uint8_t v)
{
    asm volatile("st.shared.u8 [%0], %1;" ::"r"(addr), "h"((uint16_t)v) : "memory");
}

JG_DEV uint32_t jg_ld_shared_u8(uint32_t addr)
{
    uint16_t v;
    asm volatile("ld.shared.u8 %0, [%1];" : "=h"(v) : "r"(addr) : "memory");
    return v;
}

JG_DEV void jg_st_shared_v4(uint32_t addr, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};" ::"r"(addr), "r"(a), "r"(b), "r"(c),
                 "r"(d)
                 : "memory");
}

JG_DEV uint32_t jg_ld_shared_b32(uint32_t addr)
{
    uint32_t v;
    asm volatile("ld.shared.b32 %0, [%1];" : "=r"(v) : "r"(addr) : "memory");
    return v;
}

JG_DEV float jg_ld_shared_f32(uint32_t addr)
{
    float v;
    asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(addr) : "memory");
    return v;
}

JG_DEV float2 jg_ld_shared_v2_f32(uint32_t addr)
{
    float2 v;
    asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(v.x), "=f"(v.y) : "r"(addr) : "memory");
    return v;
}

JG_DEV uint4 jg_ld_shared_v4(uint32_t addr)
{
    uint4 v;
    asm volatile("ld.shared.v4.b32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "r"(addr)
                 : "memory");
    return v;
}

/* stmatrix: 8x8 matrices of 16-bit elements, one 32-bit register (a row's
 * two elements, row l/4, columns 2(l%4)) per matrix and lane; lanes 8i..8i+7
 * give the addresses of matrix i's eight 16-byte rows. */
JG_DEV void jg_stmatrix_x4(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2, uint32_t r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(addr),
                 "r"(r0), "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

JG_DEV void jg_stmatrix_x2(uint32_t addr, uint32_t r0, uint32_t r1)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x2.shared.b16 [%0], {%1, %2};" ::"r"(addr), "r"(r0),
                 "r"(r1)
                 : "memory");
}

/* The same, each matrix stored transposed: lanes 8i..8i+7 give the
 * addresses of the eight 16-byte columns of matrix i, which land as rows. */
JG_DEV void jg_stmatrix_x4_trans(uint32_t addr, uint32_t r0, uint32_t r1, uint32_t r2,
                                 uint32_t r3)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};" ::"r"(
                     addr),
                 "r"(r0), "r"(r1), "r"(r2), "r"(r3)
                 : "memory");
}

JG_DEV void jg_stmatrix_x2_trans(uint32_t addr, uint32_t r0, uint32_t r1)
{
    asm volatile("stmatrix.sync.aligned.m8n8.x2.trans.shared.b16 [%0], {%1, %2};" ::"r"(addr),
                 "r"(r0), "r"(r1)
                 : "memory");
}

/* ---- wgmma ------------------------------------------------------------- */

/* Shared-memory matrix descriptor for a K-major tile in 128-byte swizzle:
 * rows of 128 bytes, 8-row atoms 1024 bytes apart (stride byte offset), the
 * leading byte offset unused (1). The tile must be 1024-byte aligned. */
JG_DEV uint64_t jg_wgmma_desc_sw128(uint32_t smem)
{
    uint64_t d = 0;
    d |= (uint64_t)((smem & 0x3FFFF) >> 4);
    d |= (uint64_t)1 << 16;
    d |= (uint64_t)(1024 >> 4) << 32;
    d |= (uint64_t)1 << 62;
    return d;
}

/* The same for an MN-major tile in 128-byte swizzle (wgmma's transposed
 * 16-bit operands): rows of 128 bytes (64 elements of M or N) along K,
 * 8-row atoms 1024 bytes apart along K (stride byte offset), and the next
 * 64 elements of M or N `lbo` bytes further (leading byte offset): the
 * canonical layout ((8 x 8 elements, m), (8 rows, k)) of the PTX ISA's
 * matrix descriptor, as a TMA box of 64 elements by the stage's K rows
 * with 128-byte swizzle lands. The tile must be 1024-byte aligned. */
JG_DEV uint64_t jg_wgmma_desc_mn_sw128(uint32_t smem, uint32_t lbo)
{
    uint64_t d = 0;
    d |= (uint64_t)((smem & 0x3FFFF) >> 4);
    d |= (uint64_t)((lbo >> 4) & 0x3FFF) << 16;
    d |= (uint64_t)(1024 >> 4) << 32;
    d |= (uint64_t)1 << 62;
    return d;
}

/* The descriptor of the tile `bytes` (a multiple of 16) further on: the
 * start address field holds address / 16 in 14 bits, and shared memory
 * (< 256 KB) never carries out of it, so a 32-bit add on the low word does
 * (one instruction, where a new descriptor takes a mask, a shift and an or). */
JG_DEV uint64_t jg_wgmma_desc_add(uint64_t desc, uint32_t bytes)
{
    const uint32_t lo = (uint32_t)desc + (bytes >> 4);
    return (desc & 0xFFFFFFFF00000000ull) | lo;
}

JG_DEV void jg_wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;" ::: "memory"); }
JG_DEV void jg_wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory"); }

template <int N>
JG_DEV void jg_wgmma_wait()
{
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(N) : "memory");
}

/* ---- registers --------------------------------------------------------- */

template <int R>
JG_DEV void jg_setmaxnreg_inc()
{
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;" ::"n"(R));
}

template <int R>
JG_DEV void jg_setmaxnreg_dec()
{
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;" ::"n"(R));
}

/* ---- conversions ------------------------------------------------------- */

/* Round-to-nearest-even of (lo, hi) into one packed pair. */
JG_DEV uint32_t jg_pack_bf16x2(float lo, float hi)
{
    uint32_t r;
    asm("cvt.rn.bf16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

JG_DEV uint32_t jg_pack_f16x2(float lo, float hi)
{
    uint32_t r;
    asm("cvt.rn.f16x2.f32 %0, %1, %2;" : "=r"(r) : "f"(hi), "f"(lo));
    return r;
}

/* TF32 of an FP32 value, rounded to nearest (ties away from zero): the
 * low 13 bits of the result are zero. */
JG_DEV float jg_tf32_rna(float x)
{
    uint32_t r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return __uint_as_float(r);
}

JG_DEV float jg_bf16_to_f32(uint16_t h) { return __uint_as_float((uint32_t)h << 16); }

JG_DEV float jg_f16_to_f32(uint16_t h)
{
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(h));
    return f;
}

#endif /* JG_SM90_PTX_CUH */
