/* The launch path: tensor maps from the plan's small cache, one parameter
 * block, cuLaunchKernelEx. No allocation, no sync, no string work unless a
 * call fails: it may be captured in a CUDA graph. */
#include <stddef.h>
#include <string.h>

#include "runtime/runtime.h"

/* CTAs of a launch: one per scheduling unit (a tile, or a cluster's stack
 * of tiles along M, or a tile whose K a cluster splits), up to what fits on
 * the GPU at once, times the cluster. Dense split-K runs one tile per
 * cluster (each CTA leaves its partials in its stage ring, which a next
 * tile would refill): all of them. Swap-AB's tiles are N x M. */
uint32_t jg__gemm_grid(const jg_plan *plan, int64_t m)
{
    const jg__problem_key *p = &plan->problem;
    const jg__gemm_config *cfg = &plan->cfg;
    const uint64_t cluster = cfg->cluster ? cfg->cluster : 1;
    const uint64_t unit_m = (uint64_t)cfg->block_m * jg__cfg_m_stack(cfg);
    const uint64_t resident = plan->max_clusters;
    const uint64_t rows = cfg->swap_ab ? (uint64_t)p->n : (uint64_t)m;
    const uint64_t cols = cfg->swap_ab ? (uint64_t)m : (uint64_t)p->n;
    uint64_t units_m = 0;
    if (p->layout > JG_GROUPED_LIST) /* rows known on the device only: every SM */
        return (uint32_t)(resident * cluster);
    if (p->groups)
        for (uint32_t g = 0; g < p->groups; ++g)
            units_m += jg__ceil_div((uint64_t)p->group_m[g], unit_m);
    else
        units_m = jg__ceil_div(rows, unit_m);
    const uint64_t units = units_m * jg__ceil_div(cols, cfg->block_n);
    if (cfg->split_k > 1)
        return (uint32_t)(units * cluster);
    return (uint32_t)((units < resident ? units : resident) * cluster);
}

/* Elements of A's and B's boxes along K: one 128-byte swizzle atom (64
 * 16-bit or 128 FP8 elements); a stage of two atoms loads two boxes.
 * NVFP4: 128 bytes of packed codes (256 of K), the map's elements bytes. */
static uint32_t box_k(const jg__problem_key *p)
{
    return p->a_type == JG_NVFP4 ? 128 : 128 / (uint32_t)jg__dtype_size(p->a_type);
}

/* The maps' element type and K extent: NVFP4 operands are maps of bytes. */
static uint32_t map_type(const jg__problem_key *p)
{
    return p->a_type == JG_NVFP4 ? JG_E4M3 : p->a_type;
}

static uint64_t map_cols(const jg__problem_key *p, int64_t elements)
{
    return p->a_type == JG_NVFP4 ? (uint64_t)elements / 2 : (uint64_t)elements;
}

/* Rows of B's tensor (and of its row-major scales): the contiguous and
 * masked layouts stack every group's n rows. */
static uint64_t b_rows(const jg__problem_key *p)
{
    return (uint64_t)p->n * (p->layout > JG_GROUPED_LIST ? p->groups : 1);
}

/* NVFP4 scales in the row-major layout: a map of [rows, k/16] bytes, one
 * 16-byte box a row per stage (swizzled scales are copied without maps:
 * nothing to encode). */
static jg_status sf_map(jg_plan *plan, jg_tmap *dst, uint32_t layout, const void *sf,
                        uint64_t rows, uint32_t box_rows)
{
    const uint64_t kbs = (uint64_t)plan->problem.k / 16;
    if (layout != JG_SF_ROW_MAJOR)
        return JG_OK;
    return jg__tmap_encode_2d(plan->ctx, dst, JG_E4M3, sf, rows, kbs, kbs, box_rows, 16);
}

/* Both operands' scale maps: A's over m rows, B's over the n rows (the
 * contiguous and masked layouts: every group's, stacked). */
static jg_status sf_maps(jg_plan *plan, const jg_gemm_args *args, int64_t m, jg__tmap_slot *slot)
{
    const jg__problem_key *p = &plan->problem;
    jg_status st = sf_map(plan, &slot->tsa, p->a_sf_layout, args->a_sf, (uint64_t)m,
                          plan->cfg.a_box_m);
    if (st == JG_OK)
        st = sf_map(plan, &slot->tsb, p->b_sf_layout, args->b_sf, b_rows(p), plan->cfg.block_n);
    return st;
}

/* Rows of B's box: CTAs stacked along M each load their share of the B
 * tile and multicast it to all of them. */
static uint32_t b_box_rows(const jg_plan *plan)
{
    return plan->cfg.block_n / jg__cfg_m_stack(&plan->cfg);
}

/* Columns of D that TMA stores: N down to whole 16-byte pieces (the kernel
 * stores the rest, JG_N_TMA); at least one piece, for a valid map. */
static uint64_t d_map_cols(const jg__problem_key *p)
{
    const uint64_t per16 = 16 / jg__dtype_size(p->d_type);
    const uint64_t n16 = (uint64_t)p->n / per16 * per16;
    return n16 ? n16 : per16;
}

/* Finds or encodes the tensor maps for (a, b, m) (NVFP4: and the scales)
 * under the plan's lock; copies them straight into the parameter block:
 * dst = a, b, d, then (NVFP4 only, else NULL) a_sf, b_sf. */
static jg_status tensor_maps(jg_plan *plan, const jg_gemm_args *args, int64_t m,
                             jg_tmap *const dst[5])
{
    jg_status st = JG_OK;
    const bool fp4 = plan->problem.a_type == JG_NVFP4; /* a_sf, b_sf read only then */
    const void *a_sf = fp4 ? args->a_sf : NULL, *b_sf = fp4 ? args->b_sf : NULL;
    pthread_mutex_lock(&plan->tmap_lock);
    jg__tmap_slot *slot = NULL, *oldest = &plan->tmaps[0];
    for (int i = 0; i < JG_TMAP_SLOTS; ++i) {
        jg__tmap_slot *s = &plan->tmaps[i];
        if (s->stamp && s->a == args->a && s->b == args->b && s->d == args->d && s->m == m &&
            s->a_sf == a_sf && s->b_sf == b_sf) {
            slot = s;
            break;
        }
        if (s->stamp < oldest->stamp)
            oldest = s;
    }
    if (!slot) {
        const jg__problem_key *p = &plan->problem;
        slot = oldest;
        slot->stamp = 0;
        /* The epilogue stores chunks of 64 rows x epi_bytes; swap-AB's, rounds
         * of its rows of D by 64 columns (epi_bytes). The kernel's A is the
         * problem's B there, and its B the problem's A. */
        const bool swap = plan->cfg.swap_ab;
        const uint32_t epi_cols = plan->cfg.epi_bytes / (uint32_t)jg__dtype_size(p->d_type);
        const uint32_t epi_rows = swap ? jg__swap_epi_rows(plan->cfg.block_n) : 64;
        st = jg__tmap_encode_2d(plan->ctx, &slot->ta, map_type(p), swap ? args->b : args->a,
                                swap ? b_rows(p) : (uint64_t)m, map_cols(p, p->k),
                                map_cols(p, swap ? p->ldb : p->lda), plan->cfg.a_box_m, box_k(p));
        if (st == JG_OK)
            st = jg__tmap_encode_2d(plan->ctx, &slot->tb, map_type(p), swap ? args->a : args->b,
                                    swap ? (uint64_t)m : b_rows(p), map_cols(p, p->k),
                                    map_cols(p, swap ? p->lda : p->ldb), b_box_rows(plan),
                                    box_k(p));
        if (st == JG_OK)
            st = jg__tmap_encode_2d(plan->ctx, &slot->td, p->d_type, args->d, (uint64_t)m,
                                    d_map_cols(p), (uint64_t)p->ldd, epi_rows, epi_cols);
        if (st == JG_OK && fp4)
            st = sf_maps(plan, args, m, slot);
        if (st == JG_OK) {
            slot->a = args->a;
            slot->b = args->b;
            slot->d = args->d;
            slot->a_sf = a_sf;
            slot->b_sf = b_sf;
            slot->m = m;
        }
    }
    if (st == JG_OK) {
        slot->stamp = ++plan->tmap_clock;
        *dst[0] = slot->ta;
        *dst[1] = slot->tb;
        *dst[2] = slot->td;
        if (fp4) {
            *dst[3] = slot->tsa;
            *dst[4] = slot->tsb;
        }
    }
    pthread_mutex_unlock(&plan->tmap_lock);
    return st;
}

/* One launch of fn: a grid of grid_x x grid_y CTAs, clusters of `cluster`
 * along x (when more than 1); `dependent`: a programmatic dependent of the
 * stream's previous kernel, which it may overlap until its
 * griddepcontrol.wait. */
typedef struct launch_desc {
    CUfunction fn;
    const char *name; /* for the log */
    uint32_t grid_x, grid_y, threads, smem, cluster;
    bool dependent;
} launch_desc;

static jg_status launch_fn(jg_context *ctx, const launch_desc *d, void *kargs, jg_stream stream)
{
    CUlaunchAttribute attrs[2];
    unsigned nattrs = 0;
    memset(attrs, 0, sizeof attrs);
    if (d->cluster > 1) {
        attrs[nattrs].id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
        attrs[nattrs].value.clusterDim.x = d->cluster;
        attrs[nattrs].value.clusterDim.y = 1;
        attrs[nattrs].value.clusterDim.z = 1;
        ++nattrs;
    }
    if (d->dependent) {
        attrs[nattrs].id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
        attrs[nattrs].value.programmaticStreamSerializationAllowed = 1;
        ++nattrs;
    }
    CUlaunchConfig cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = d->grid_x;
    cfg.gridDimY = d->grid_y;
    cfg.gridDimZ = 1;
    cfg.blockDimX = d->threads;
    cfg.blockDimY = cfg.blockDimZ = 1;
    cfg.sharedMemBytes = d->smem;
    cfg.hStream = (CUstream)stream;
    cfg.attrs = attrs;
    cfg.numAttrs = nattrs;
    void *params[] = {kargs};
    CUresult r = ctx->cu->cuLaunchKernelEx(&cfg, d->fn, params, NULL);
    if (r != CUDA_SUCCESS)
        return jg__fail_cu(ctx, "cuLaunchKernelEx", r);
    if (jg__log_on(&ctx->log, JG_LOGC_LAUNCH))
        jg__logf(&ctx->log, JG_LOG_DEBUG, JG_LOGC_LAUNCH, "launched %s: grid %u x %u, %u threads",
                 d->name, d->grid_x, d->grid_y, d->threads);
    return JG_OK;
}

/* cuLaunchKernelEx of the plan's kernel with one parameter block. */
jg_status jg__launch_kernel(jg_context *ctx, const jg__kernel *k, uint32_t grid, uint32_t threads,
                            uint32_t cluster, void *kargs, jg_stream stream)
{
    const launch_desc d = {k->fn, k->name, grid, 1, threads, k->smem_bytes, cluster, false};
    return launch_fn(ctx, &d, kargs, stream);
}

/* A plan's kernel; dense plans with JG_GEMM_PDL as programmatic dependents
 * (their kernels wait before touching what the previous kernel may write). */
static jg_status launch(jg_plan *plan, uint32_t grid, void *kargs, jg_stream stream)
{
    const jg__kernel *k = plan->kernel;
    const bool pdl = !plan->problem.groups && (plan->problem.flags & JG_GEMM_PDL);
    const launch_desc d = {k->fn, k->name, grid, 1, plan->threads, k->smem_bytes,
                           plan->cfg.cluster, pdl};
    return launch_fn(plan->ctx, &d, kargs, stream);
}

/* NVFP4: the dense block (the same fields first), then the scales; so too
 * the contiguous and masked layouts' (filled through the NVFP4 struct). */
_Static_assert(offsetof(jg_nvfp4_kargs, a_sf) == sizeof(jg_gemm_kargs),
               "jg_nvfp4_kargs starts as jg_gemm_kargs");
_Static_assert(offsetof(jg_device_grouped_nvfp4_kargs, a_sf) == sizeof(jg_device_grouped_kargs) &&
                   offsetof(jg_device_grouped_nvfp4_kargs, reserved) ==
                       offsetof(jg_device_grouped_kargs, reserved),
               "jg_device_grouped_nvfp4_kargs starts as jg_device_grouped_kargs");

static jg_status nvfp4_launch(jg_plan *plan, const jg_gemm_args *args, const jg_gemm_kargs *dense,
                              const jg_tmap sf[2], int64_t m, jg_stream stream)
{
    jg_nvfp4_kargs ka;
    memset(&ka, 0, sizeof ka);
    memcpy(&ka, dense, sizeof *dense);
    ka.a_sf = sf[0];
    ka.b_sf = sf[1];
    ka.a_sf_ptr = args->a_sf;
    ka.b_sf_ptr = args->b_sf;
    return launch(plan, jg__gemm_grid(plan, m), &ka, stream);
}

jg_status jg__gemm_launch(jg_plan *plan, const jg_gemm_args *args, jg_stream stream)
{
    const int64_t m = args->m ? args->m : plan->problem.m;
    jg_gemm_kargs ka;
    memset(&ka, 0, sizeof ka);
    jg_tmap sf[2];
    const bool fp4 = plan->problem.a_type == JG_NVFP4;
    jg_tmap *const dst[5] = {&ka.a, &ka.b, &ka.d, fp4 ? &sf[0] : NULL, fp4 ? &sf[1] : NULL};
    jg_status st = tensor_maps(plan, args, m, dst);
    if (st != JG_OK)
        return st;
    ka.d_ptr = args->d;
    /* swap-AB: the kernel's rows are the problem's B's (row scales too) */
    ka.a_scale = plan->cfg.swap_ab ? args->b_scale : args->a_scale;
    ka.b_scale = plan->cfg.swap_ab ? args->a_scale : args->b_scale;
    ka.ldd = plan->problem.ldd;
    ka.c = args->c;
    ka.ldc = plan->problem.ldc;
    ka.m = (int32_t)m;
    ka.alpha = args->alpha;
    ka.beta = args->beta;
    if (fp4)
        return nvfp4_launch(plan, args, &ka, sf, m, stream);
    return launch(plan, jg__gemm_grid(plan, m), &ka, stream);
}

/* The grouped parameter block for one pointer set: per group with rows, the
 * tensor maps of A_g, B_g and D_g, and the C_g and D_g pointers (NVFP4:
 * also the maps of and pointers to A_g's and B_g's block scales). cfg.pre:
 * A's map is the workspace's, no D or A-scale maps (the GEMM stores D and
 * the pre-pass reads A through pointers), and the pre-pass's block follows. */
static jg_status list_params(jg_plan *plan, const void *ptrs[JG_LIST_PTRS][JG_GROUPED_MAX_GROUPS],
                             const void *workspace)
{
    const jg__problem_key *p = &plan->problem;
    const uint32_t G = p->groups;
    const uint32_t epi_cols = plan->cfg.epi_bytes / (uint32_t)jg__dtype_size(p->d_type);
    unsigned char *buf = plan->list_params;
    const bool fp4 = p->a_type == JG_NVFP4, pre = plan->cfg.pre;
    memset(buf, 0, fp4 ? JG_LIST_NVFP4_SIZE(G) : JG_LIST_SIZE(G));
    if (pre) { /* a[0]: the workspace, FP16 [rows of all groups (m), k rounded up to 64] */
        const uint64_t k64 = jg__ceil_div((uint64_t)p->k, 64) * 64;
        jg_status st = jg__tmap_encode_2d(plan->ctx, (jg_tmap *)(buf + JG_LIST_OFF_A(G)), JG_FP16,
                                          workspace, (uint64_t)p->m, k64, k64, plan->cfg.a_box_m,
                                          64);
        if (st != JG_OK)
            return st;
        unsigned char *dq = buf + JG_LIST_NVFP4_SIZE(G);
        const int64_t lda_bytes = p->lda / 2;
        memset(dq, 0, JG_PRE_DQ_SIZE(G));
        memcpy(dq + JG_PRE_DQ_OFF_A(G), ptrs[0], G * sizeof(void *));
        memcpy(dq + JG_PRE_DQ_OFF_SF(G), ptrs[4], G * sizeof(void *));
        memcpy(dq + JG_PRE_DQ_OFF_WS(G), &workspace, sizeof(void *));
        memcpy(dq + JG_PRE_DQ_OFF_LDA(G), &lda_bytes, sizeof lda_bytes);
    }
    for (uint32_t g = 0; g < G; ++g) {
        const uint64_t rows = (uint64_t)p->group_m[g];
        if (!rows)
            continue;
        jg_status st = JG_OK;
        if (!pre) /* (pre: the pre-pass reads A through pointers) */
            st = jg__tmap_encode_2d(plan->ctx, (jg_tmap *)(buf + JG_LIST_OFF_A(G)) + g,
                                    map_type(p), ptrs[0][g], rows, map_cols(p, p->k),
                                    map_cols(p, p->lda), plan->cfg.a_box_m, box_k(p));
        if (st == JG_OK)
            st = jg__tmap_encode_2d(plan->ctx, (jg_tmap *)(buf + JG_LIST_OFF_B(G)) + g,
                                    map_type(p), ptrs[1][g], (uint64_t)p->n, map_cols(p, p->k),
                                    map_cols(p, p->ldb), b_box_rows(plan), box_k(p));
        if (st == JG_OK && !pre) /* (pre: D is stored through pointers) */
            st =
                jg__tmap_encode_2d(plan->ctx, (jg_tmap *)(buf + JG_LIST_OFF_D(G)) + g, p->d_type,
                                   ptrs[3][g], rows, d_map_cols(p), (uint64_t)p->ldd, 64, epi_cols);
        if (st == JG_OK && fp4 && !pre)
            st = sf_map(plan, (jg_tmap *)(buf + JG_LIST_OFF_ASF(G)) + g, p->a_sf_layout,
                        ptrs[4][g], rows, plan->cfg.a_box_m);
        if (st == JG_OK && fp4)
            st = sf_map(plan, (jg_tmap *)(buf + JG_LIST_OFF_BSF(G)) + g, p->b_sf_layout,
                        ptrs[5][g], (uint64_t)p->n, plan->cfg.block_n);
        if (st != JG_OK)
            return st;
        memcpy(buf + JG_LIST_OFF_C(G) + 8 * g, &ptrs[2][g], sizeof(void *));
        memcpy(buf + JG_LIST_OFF_DPTR(G) + 8 * g, &ptrs[3][g], sizeof(void *));
        if (fp4) {
            memcpy(buf + JG_LIST_OFF_ASFPTR(G) + 8 * g, &ptrs[4][g], sizeof(void *));
            memcpy(buf + JG_LIST_OFF_BSFPTR(G) + 8 * g, &ptrs[5][g], sizeof(void *));
        }
    }
    memcpy(buf + JG_LIST_OFF_LDC(G), &p->ldc, sizeof p->ldc);
    memcpy(buf + JG_LIST_OFF_LDD(G), &p->ldd, sizeof p->ldd);
    return JG_OK;
}

/* sm90_nvfp4_pre.cu: the pre-pass (A into the workspace, plan->pre_grid
 * CTAs a group), then the GEMM as its programmatic dependent, both on the
 * blocks list_params built. */
static jg_status pre_launch(jg_plan *plan, jg_stream stream)
{
    const uint32_t G = plan->problem.groups;
    const jg__kernel *k = plan->kernel;
    const launch_desc pre = {k->fn_pre, k->name, plan->pre_grid, G, 256, 0, 1, false};
    jg_status st = launch_fn(plan->ctx, &pre, plan->list_params + JG_LIST_NVFP4_SIZE(G), stream);
    const launch_desc gemm = {k->fn, k->name, plan->grid, 1, plan->threads, k->smem_bytes, 1, true};
    return st != JG_OK ? st : launch_fn(plan->ctx, &gemm, plan->list_params, stream);
}

/* Under the plan's lock: the block is rebuilt only for a new pointer set,
 * and the driver copies it during the launch. */
jg_status jg__grouped_launch(jg_plan *plan, const jg_grouped_args *args, jg_stream stream)
{
    const jg__problem_key *p = &plan->problem;
    const uint32_t G = p->groups;
    const bool fp4 = p->a_type == JG_NVFP4;
    /* a, b, c, d per group; NVFP4 also a_sf, b_sf (the rows past `used` are
     * neither filled nor compared, so other plans pay nothing for them) */
    const void *ptrs[JG_LIST_PTRS][JG_GROUPED_MAX_GROUPS];
    const size_t used = (fp4 ? JG_LIST_PTRS : 4) * sizeof ptrs[0];
    memset(ptrs, 0, used);
    for (uint32_t g = 0; g < G; ++g) {
        if (!p->group_m[g])
            continue;
        ptrs[0][g] = args->a[g];
        ptrs[1][g] = args->b[g];
        ptrs[2][g] = p->c_type ? args->c[g] : NULL;
        ptrs[3][g] = args->d[g];
        if (fp4) {
            ptrs[4][g] = args->a_sfs[g];
            ptrs[5][g] = args->b_sfs[g];
        }
    }
    jg_status st = JG_OK;
    const void *ws = plan->cfg.pre ? args->workspace : NULL;
    pthread_mutex_lock(&plan->tmap_lock);
    if (!plan->list_ready || memcmp(ptrs, plan->list_ptrs, used) || ws != plan->list_ws) {
        plan->list_ready = false;
        st = list_params(plan, ptrs, ws);
        if (st == JG_OK) {
            memcpy(plan->list_ptrs, ptrs, used);
            plan->list_ws = ws;
            plan->list_ready = true;
        }
    }
    if (st == JG_OK && plan->grid) {
        memcpy(plan->list_params + JG_LIST_OFF_ALPHA(G), &args->alpha, sizeof(float));
        memcpy(plan->list_params + JG_LIST_OFF_BETA(G), &args->beta, sizeof(float));
        /* FP8 scales, NVFP4 global scales: read at every launch, like alpha and beta */
        for (uint32_t g = 0; p->scale != JG_SCALE_NONE && g < G; ++g) {
            const float *sa = p->group_m[g] ? args->a_scales[g] : NULL;
            const float *sb = p->group_m[g] ? args->b_scales[g] : NULL;
            memcpy(plan->list_params + JG_LIST_OFF_ASCALE(G) + 8 * g, &sa, sizeof sa);
            memcpy(plan->list_params + JG_LIST_OFF_BSCALE(G) + 8 * g, &sb, sizeof sb);
        }
        st = plan->cfg.pre ? pre_launch(plan, stream)
                           : launch(plan, plan->grid, plan->list_params, stream);
    }
    pthread_mutex_unlock(&plan->tmap_lock);
    return st;
}

/* Contiguous and masked layouts: one tensor per operand (maps cached per
 * pointer set like dense ones), the groups' rows read on the device. */
jg_status jg__device_grouped_launch(jg_plan *plan, const jg_grouped_args *args, jg_stream stream)
{
    const jg__problem_key *p = &plan->problem;
    const int64_t rows = p->layout == JG_GROUPED_MASKED ? p->groups * p->m_max : p->m_max;
    const bool fp4 = p->a_type == JG_NVFP4;
    jg_gemm_args ptrs = {.a = args->a[0],
                         .b = args->b[0],
                         .d = args->d[0],
                         .a_sf = fp4 ? args->a_sf : NULL,
                         .b_sf = fp4 ? args->b_sf : NULL};
    jg_device_grouped_nvfp4_kargs ka; /* its first fields: jg_device_grouped_kargs */
    memset(&ka, 0, sizeof ka);
    jg_tmap *const dst[5] = {&ka.a, &ka.b, &ka.d, fp4 ? &ka.a_sf : NULL, fp4 ? &ka.b_sf : NULL};
    jg_status st = tensor_maps(plan, &ptrs, rows, dst);
    if (st != JG_OK)
        return st;
    ka.rows = args->rows;
    ka.c = p->c_type ? args->c[0] : NULL;
    ka.d_ptr = args->d[0];
    ka.a_scale = args->a_scale;
    ka.b_scale = args->b_scale;
    ka.ldc = p->ldc;
    ka.ldd = p->ldd;
    ka.m_max = (int32_t)p->m_max;
    ka.alpha = args->alpha;
    ka.beta = args->beta;
    ka.a_sf_ptr = ptrs.a_sf;
    ka.b_sf_ptr = ptrs.b_sf;
    return launch(plan, plan->grid, &ka, stream);
}
