/* The launch path: tensor maps from the plan's small cache, one parameter
 * block, cuLaunchKernelEx. No allocation, no sync, no string work unless a
 * call fails: it may be captured in a CUDA graph. */
#include <stddef.h>
#include <string.h>

#include "runtime/runtime.h"

/* CTAs of a launch: one per scheduling unit (a tile, or a cluster's stack
 * of tiles along M and N, or a tile whose K a cluster splits, or a share of
 * a tile's K split through the workspace), up to what fits on the GPU at
 * once, times the cluster. Dense split-K runs one tile per cluster (each
 * CTA leaves its partials in its stage ring, which a next tile would
 * refill): all of them. Swap-AB's tiles are N x M. Stream-K in R row groups:
 * a multiple of R (units are). */
uint32_t jg__gemm_grid(const jg_plan *plan, int64_t m)
{
    const jg__problem_key *p = &plan->problem;
    const jg__gemm_config *cfg = &plan->cfg;
    const uint64_t cluster = cfg->cluster ? cfg->cluster : 1;
    uint64_t resident = plan->max_clusters;
    uint64_t units = 0;
    if (p->layout > JG_GROUPED_LIST) /* rows known on the device only: every SM */
        return (uint32_t)(resident * cluster);
    if (p->groups) {
        const uint64_t unit_m = (uint64_t)cfg->block_m * jg__cfg_m_stack(cfg);
        for (uint32_t g = 0; g < p->groups; ++g)
            units += jg__ceil_div((uint64_t)p->group_m[g], unit_m);
        units *= jg__ceil_div((uint64_t)p->n, (uint64_t)cfg->block_n * jg__cfg_n_stack(cfg));
    } else {
        units = jg__gemm_units(cfg, m, p->n) * (cfg->split_ws > 1 ? cfg->split_ws : 1);
    }
    if (cfg->split_k > 1)
        return (uint32_t)(units * cluster);
    if (cfg->split_ws > 1 && cfg->stream_k > 1) /* row groups: a multiple of R CTAs */
        resident -= resident % cfg->stream_k;
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
 * tile and multicast it to all of them; of A's, likewise along N. */
static uint32_t b_box_rows(const jg_plan *plan)
{
    return plan->cfg.block_n / jg__cfg_m_stack(&plan->cfg);
}

static uint32_t a_box_rows(const jg_plan *plan)
{
    return plan->cfg.a_box_m / jg__cfg_n_stack(&plan->cfg);
}

/* Columns of D that TMA stores: N down to whole 16-byte pieces (the kernel
 * stores the rest, JG_N_TMA); at least one piece, for a valid map. */
static uint64_t d_map_cols(const jg__problem_key *p)
{
    const uint64_t per16 = 16 / jg__dtype_size(p->d_type);
    const uint64_t n16 = (uint64_t)p->n / per16 * per16;
    return n16 ? n16 : per16;
}

/* An operand as a launch's kernel reads it: a row-major [rows, cols]
 * matrix of `dtype`, ld elements a row, loaded in boxes of box_rows x
 * box_cols; `soft`: the kernel may take it by soft loads; `tf32`: FP32
 * values read as TF32, rounded as they are loaded (TMA: a TFLOAT32 map;
 * soft loads: the kernel). */
typedef struct operand {
    const void *ptr;
    uint64_t rows, cols, ld;
    uint32_t dtype, box_rows, box_cols;
    bool soft, tf32;
} operand;

/* Problem operand `which` (0: A of `m` rows, 1: B) as the kernel's A
 * (kernel_a; swap-AB: the problem's B) or B. K-major: rows of M or N by
 * K, boxes of one 128-byte swizzle atom of K by the tile's rows (A's box,
 * or B's share per CTA of a cluster). MN-major: rows of K by M or N, boxes
 * of 64 columns by the stage's K rows. Exact FP32: the workspace's rows of
 * high and low parts (2 KP floats, A's m rows then B's n rows). */
static operand kernel_operand(const jg_plan *plan, int which, bool kernel_a, const void *ptr,
                              int64_t m, const void *ws)
{
    const jg__problem_key *p = &plan->problem;
    const jg__gemm_config *cfg = &plan->cfg;
    const uint64_t rows = which ? b_rows(p) : (uint64_t)m;
    operand o = {.ptr = ptr,
                 .dtype = map_type(p),
                 .box_rows = kernel_a ? a_box_rows(plan) : b_box_rows(plan),
                 .box_cols = box_k(p),
                 .soft = (cfg->soft & (kernel_a ? JG_SOFT_A : JG_SOFT_B)) != 0,
                 .tf32 = p->a_type == JG_FP32};
    if (!p->groups && (p->flags & JG_GEMM_FP32_EXACT)) {
        o.tf32 = false; /* the parts are TF32 values already */
        const uint64_t kp = (uint64_t)jg__exact_kp(p->k);
        o.ptr = (const char *)ws + (which ? (uint64_t)m * 2 * kp * 4 : 0);
        o.rows = rows;
        o.cols = o.ld = 2 * kp;
        return o;
    }
    const int64_t ld = which ? p->ldb : p->lda;
    if (p->flags & (which ? JG_GEMM_B_N_MAJOR : JG_GEMM_A_M_MAJOR)) {
        o.rows = (uint64_t)p->k;
        o.cols = rows;
        o.ld = (uint64_t)ld;
        o.box_rows = cfg->block_k;
        o.box_cols = 64;
    } else {
        o.rows = rows;
        o.cols = map_cols(p, p->k);
        o.ld = map_cols(p, ld);
    }
    return o;
}

/* How a launch moves an operand that may take soft loads (JG_SOFT_*): by
 * TMA where its pointer and rows are 16-byte aligned, in 8-byte pieces
 * where they are 8-byte aligned, else by words. */
static uint32_t soft_mode(const operand *o)
{
    const uint64_t at = (uint64_t)(uintptr_t)o->ptr | o->ld * jg__dtype_size(o->dtype);
    return at % 16 == 0 ? JG_SOFT_TMA : at % 8 == 0 ? JG_SOFT_P8 : JG_SOFT_WORDS;
}

/* The bytes of D's direct stores for a D that may take them: 0 (TMA
 * stores) where its pointer and rows are 16-byte aligned, else the widest
 * of 8, 4, 2 bytes they are aligned to (at least an element). */
static uint32_t d_piece(const void *d, int64_t ldd, uint32_t d_type)
{
    const uint64_t size = jg__dtype_size(d_type);
    const uint64_t at = (uint64_t)(uintptr_t)d | (uint64_t)ldd * size;
    uint32_t piece = 16;
    while (piece > size && at % piece)
        piece /= 2;
    return piece == 16 ? 0 : piece;
}

/* The operand's tensor map where `mode` (the launch's, JG_SOFT_*) moves
 * it by TMA, else zeros; and its soft map. */
static jg_status operand_maps(jg_plan *plan, const operand *o, uint32_t mode, jg_tmap *map,
                              jg_soft_map *soft)
{
    soft->ptr = o->ptr;
    soft->ld = (int64_t)o->ld;
    soft->rows = (int32_t)o->rows;
    soft->cols = (int32_t)o->cols;
    if (mode != JG_SOFT_TMA) {
        memset(map, 0, sizeof *map);
        return JG_OK;
    }
    return jg__tmap_encode_2d(plan->ctx, map, o->tf32 ? JG__TMAP_TF32 : o->dtype, o->ptr,
                              o->rows, o->cols, o->ld, o->box_rows, o->box_cols);
}

/* Encodes a slot's maps for (args, m): the kernel's A and B, D (swap-AB:
 * the kernel's A is the problem's B, and its B the problem's A; the
 * epilogue stores chunks of 64 rows x epi_bytes, swap-AB's rounds of its
 * rows of D by 64 columns), the operands' soft maps and modes, NVFP4's
 * scale maps. */
static jg_status encode_slot(jg_plan *plan, const jg_gemm_args *args, int64_t m, const void *ws,
                             jg__tmap_slot *slot)
{
    const jg__problem_key *p = &plan->problem;
    const bool swap = plan->cfg.swap_ab;
    const operand oa = kernel_operand(plan, swap ? 1 : 0, true, swap ? args->b : args->a, m, ws);
    const operand ob = kernel_operand(plan, swap ? 0 : 1, false, swap ? args->a : args->b, m, ws);
    memset(&slot->soft, 0, sizeof slot->soft);
    slot->soft.a_mode = oa.soft ? soft_mode(&oa) : JG_SOFT_TMA;
    slot->soft.b_mode = ob.soft ? soft_mode(&ob) : JG_SOFT_TMA;
    jg_status st = operand_maps(plan, &oa, slot->soft.a_mode, &slot->ta, &slot->soft.a);
    if (st == JG_OK)
        st = operand_maps(plan, &ob, slot->soft.b_mode, &slot->tb, &slot->soft.b);
    if (plan->cfg.soft & JG_SOFT_D)
        slot->soft.d_piece = d_piece(args->d, p->ldd, p->d_type);
    memset(&slot->td, 0, sizeof slot->td);
    if (st == JG_OK && !slot->soft.d_piece) {
        const uint32_t epi_cols = plan->cfg.epi_bytes / (uint32_t)jg__dtype_size(p->d_type);
        const uint32_t epi_rows = swap ? jg__swap_epi_rows(plan->cfg.block_n) : 64;
        st = jg__tmap_encode_2d(plan->ctx, &slot->td, p->d_type, args->d, (uint64_t)m,
                                d_map_cols(p), (uint64_t)p->ldd, epi_rows, epi_cols);
    }
    if (st == JG_OK && p->a_type == JG_NVFP4)
        st = sf_maps(plan, args, m, slot);
    return st;
}

/* Finds or encodes the tensor maps for (a, b, m) (NVFP4: and the scales;
 * exact FP32: of the workspace) under the plan's lock; copies them
 * straight into the parameter block: dst = a, b, d, then (NVFP4 only, else
 * NULL) a_sf, b_sf; and the soft block into *soft (plans with soft
 * operands; may be NULL otherwise). */
static jg_status tensor_maps(jg_plan *plan, const jg_gemm_args *args, int64_t m,
                             jg_tmap *const dst[5], jg_soft_kargs *soft)
{
    jg_status st = JG_OK;
    const bool fp4 = plan->problem.a_type == JG_NVFP4; /* a_sf, b_sf read only then */
    const void *a_sf = fp4 ? args->a_sf : NULL, *b_sf = fp4 ? args->b_sf : NULL;
    /* (the workspace field is read only for exact plans: 0.6 callers' args end before it) */
    const void *ws = !plan->problem.groups && (plan->problem.flags & JG_GEMM_FP32_EXACT)
                         ? args->workspace
                         : NULL;
    pthread_mutex_lock(&plan->tmap_lock);
    jg__tmap_slot *slot = NULL, *oldest = &plan->tmaps[0];
    for (int i = 0; i < JG_TMAP_SLOTS; ++i) {
        jg__tmap_slot *s = &plan->tmaps[i];
        if (s->stamp && s->a == args->a && s->b == args->b && s->d == args->d && s->m == m &&
            s->a_sf == a_sf && s->b_sf == b_sf && s->ws == ws) {
            slot = s;
            break;
        }
        if (s->stamp < oldest->stamp)
            oldest = s;
    }
    if (!slot) {
        slot = oldest;
        slot->stamp = 0;
        st = encode_slot(plan, args, m, ws, slot);
        if (st == JG_OK) {
            slot->a = args->a;
            slot->b = args->b;
            slot->d = args->d;
            slot->a_sf = a_sf;
            slot->b_sf = b_sf;
            slot->ws = ws;
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
        if (soft)
            *soft = slot->soft;
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

/* Kernels with soft operands take the layout's block, then the soft block
 * (sm90_gemm.cu's jg_kargs_t: from the first's size, a multiple of 64). */
typedef struct dense_soft_kargs {
    jg_gemm_kargs k;
    jg_soft_kargs s;
} dense_soft_kargs;
typedef struct device_soft_kargs {
    jg_device_grouped_kargs k;
    jg_soft_kargs s;
} device_soft_kargs;
_Static_assert(offsetof(dense_soft_kargs, s) == sizeof(jg_gemm_kargs) &&
                   offsetof(device_soft_kargs, s) == sizeof(jg_device_grouped_kargs) &&
                   sizeof(jg_gemm_kargs) % 64 == 0 && sizeof(jg_device_grouped_kargs) % 64 == 0,
               "the soft block right after the layout's");

/* JG_GEMM_FP32_EXACT: the split of A and B into the workspace (the
 * module's first kernel), on the stream before the GEMM; 256 threads a
 * CTA, up to 8 CTAs per SM, over (m + n) rows of KP. */
static jg_status split_launch(jg_plan *plan, const jg_gemm_args *args, int64_t m,
                              jg_stream stream)
{
    const jg__problem_key *p = &plan->problem;
    jg_split_kargs ka = {.a = args->a,
                         .b = args->b,
                         .lda = p->lda,
                         .ldb = p->ldb,
                         .ws = args->workspace,
                         .m = (int32_t)m,
                         .n = (int32_t)p->n};
    const uint64_t items = ((uint64_t)m + (uint64_t)p->n) * (uint64_t)jg__exact_kp(p->k);
    const uint64_t most = (uint64_t)plan->ctx->target.sm_count * 8;
    const uint64_t grid = jg__ceil_div(items, 256);
    const jg__kernel *k = plan->kernel;
    const launch_desc d = {k->fn_pre, k->name, (uint32_t)(grid < most ? grid : most), 1, 256, 0, 1,
                           false};
    return launch_fn(plan->ctx, &d, &ka, stream);
}

/* Split-K through the workspace: the dense block, then the workspace's
 * (sm90_gemm.cu's jg_kargs_t for JG_SPLIT_WS) */
typedef struct dense_ws_kargs {
    jg_gemm_kargs k;
    jg_split_ws_kargs w;
} dense_ws_kargs;
_Static_assert(offsetof(dense_ws_kargs, w) == sizeof(jg_gemm_kargs),
               "the workspace's block right after the dense one");

/* The tiles' counts (stream-K: the CTAs' flags) zeroed on the stream
 * (whatever the workspace held), then the GEMM (gemm.c checked the
 * workspace). M is baked in these plans: the counts and the grid are the
 * plan's. */
static jg_status split_ws_launch(jg_plan *plan, const jg_gemm_args *args, const jg_gemm_kargs *ka,
                                 jg_stream stream)
{
    const uint64_t counts = plan->split_counts;
    dense_ws_kargs both;
    memset(&both, 0, sizeof both);
    both.k = *ka;
    both.w.counts = (uint32_t *)args->workspace;
    both.w.parts = (float *)((unsigned char *)args->workspace + jg__split_ws_parts_at(counts));
    const CUresult r = plan->ctx->cu->cuMemsetD32Async((CUdeviceptr)(uintptr_t)args->workspace, 0,
                                                       (size_t)counts, (CUstream)stream);
    if (r != CUDA_SUCCESS)
        return jg__fail_cu(plan->ctx, "cuMemsetD32Async", r);
    return launch(plan, plan->grid, &both, stream);
}

jg_status jg__gemm_launch(jg_plan *plan, const jg_gemm_args *args, jg_stream stream)
{
    const int64_t m = args->m ? args->m : plan->problem.m;
    jg_gemm_kargs ka;
    memset(&ka, 0, sizeof ka);
    jg_tmap sf[2];
    const bool fp4 = plan->problem.a_type == JG_NVFP4;
    jg_tmap *const dst[5] = {&ka.a, &ka.b, &ka.d, fp4 ? &sf[0] : NULL, fp4 ? &sf[1] : NULL};
    jg_soft_kargs soft;
    jg_status st = tensor_maps(plan, args, m, dst, &soft);
    if (st == JG_OK && (plan->problem.flags & JG_GEMM_FP32_EXACT))
        st = split_launch(plan, args, m, stream);
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
    if (plan->cfg.split_ws > 1)
        return split_ws_launch(plan, args, &ka, stream);
    if (plan->cfg.soft) {
        dense_soft_kargs both;
        memset(&both, 0, sizeof both);
        both.k = ka;
        both.s = soft;
        return launch(plan, jg__gemm_grid(plan, m), &both, stream);
    }
    return launch(plan, jg__gemm_grid(plan, m), &ka, stream);
}

bool jg__pack_wanted(const jg_plan *plan, const jg_gemm_args *args, int64_t m,
                     jg_pack_kargs *ka)
{
    const jg__problem_key *p = &plan->problem;
    if (!plan->packed || !args->workspace || (uintptr_t)args->workspace % 16)
        return false;
    /* Operands the soft kernel would load by TMA anyway (pointer and rows
     * 16-byte aligned, as soft_mode finds them) are no reason to pack; the
     * packed plan copies both of its operands once one needs it. Tested
     * before the pack's arguments are laid out: most launches stop here. */
    const uint32_t ops = plan->packed->problem.packed;
    const uint64_t a_at = (uint64_t)(uintptr_t)args->a | (uint64_t)p->lda * jg__dtype_size(p->a_type);
    const uint64_t b_at = (uint64_t)(uintptr_t)args->b | (uint64_t)p->ldb * jg__dtype_size(p->b_type);
    if (!((ops & JG_SOFT_A) && a_at % 16) && !((ops & JG_SOFT_B) && b_at % 16))
        return false;
    return args->workspace_bytes >= jg__pack_args(p, m, args->a, args->b, args->workspace, ka);
}

/* The pack on 256 threads a CTA, up to 8 CTAs per SM, then the packed
 * plan's GEMM with the copies as its A and B (the caller's args, 0.7's
 * struct; ka: jg__pack_wanted's). */
jg_status jg__pack_launch(jg_plan *plan, const jg_gemm_args *args, jg_pack_kargs *ka,
                          jg_stream stream)
{
    const uint64_t groups = (uint64_t)ka->groups[0] + (uint64_t)ka->groups[1];
    const uint64_t most = (uint64_t)plan->ctx->target.sm_count * 8;
    const jg__kernel *k = plan->pack;
    const launch_desc d = {k->fn, k->name, (uint32_t)(groups < most ? groups : most), 1, 256,
                           0, 1, false};
    jg_status st = launch_fn(plan->ctx, &d, ka, stream);
    if (st != JG_OK)
        return st;
    jg_gemm_args copies = *args;
    if (ka->rows[0])
        copies.a = ka->dst[0];
    if (ka->rows[1])
        copies.b = ka->dst[1];
    return jg__gemm_launch(plan->packed, &copies, stream);
}

/* The grouped parameter block for one pointer set: per group with rows, the
 * tensor maps of A_g, B_g and D_g, and the C_g and D_g pointers (NVFP4:
 * also the maps of and pointers to A_g's and B_g's block scales). cfg.pre:
 * A's map is the workspace's, no D or A-scale maps (the GEMM stores D and
 * the pre-pass reads A through pointers), and the pre-pass's block follows. */
_Static_assert(sizeof(jg_soft_map) == 24, "JG_SOFT_LIST_KARGS's maps are 24 bytes");

/* The list layout's soft modes: for each operand that may take soft loads
 * the strictest any group's pointer needs (a launch moves an operand
 * alike in every group), and D's narrowest direct stores. */
static jg_soft_kargs list_modes(const jg_plan *plan,
                                const void *ptrs[JG_LIST_PTRS][JG_GROUPED_MAX_GROUPS])
{
    const jg__problem_key *p = &plan->problem;
    jg_soft_kargs modes;
    memset(&modes, 0, sizeof modes);
    uint32_t piece = 16;
    for (uint32_t g = 0; g < p->groups; ++g) {
        if (!p->group_m[g])
            continue;
        const operand oa = kernel_operand(plan, 0, true, ptrs[0][g], p->group_m[g], NULL);
        const operand ob = kernel_operand(plan, 1, false, ptrs[1][g], p->group_m[g], NULL);
        const uint32_t a = oa.soft ? soft_mode(&oa) : JG_SOFT_TMA;
        const uint32_t b = ob.soft ? soft_mode(&ob) : JG_SOFT_TMA;
        const uint32_t d = d_piece(ptrs[3][g], p->ldd, p->d_type);
        modes.a_mode = a > modes.a_mode ? a : modes.a_mode;
        modes.b_mode = b > modes.b_mode ? b : modes.b_mode;
        if ((plan->cfg.soft & JG_SOFT_D) && d && d < piece)
            piece = d;
    }
    modes.d_piece = piece == 16 ? 0 : piece;
    return modes;
}

static jg_status list_params(jg_plan *plan, const void *ptrs[JG_LIST_PTRS][JG_GROUPED_MAX_GROUPS],
                             const void *workspace)
{
    const jg__problem_key *p = &plan->problem;
    const uint32_t G = p->groups;
    const uint32_t epi_cols = plan->cfg.epi_bytes / (uint32_t)jg__dtype_size(p->d_type);
    unsigned char *buf = plan->list_params;
    const bool fp4 = p->a_type == JG_NVFP4, pre = plan->cfg.pre;
    /* plans with soft operands: the soft block after the layout's */
    unsigned char *soft = plan->cfg.soft ? buf + JG_LIST_SIZE(G) : NULL;
    memset(buf, 0,
           fp4 ? JG_LIST_NVFP4_SIZE(G) : JG_LIST_SIZE(G) + (soft ? JG_SOFT_LIST_SIZE(G) : 0));
    const jg_soft_kargs modes = list_modes(plan, ptrs);
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
        const operand oa = kernel_operand(plan, 0, true, ptrs[0][g], (int64_t)rows, NULL);
        const operand ob = kernel_operand(plan, 1, false, ptrs[1][g], (int64_t)rows, NULL);
        jg_soft_map sa, sb;
        if (!pre) /* (pre: the pre-pass reads A through pointers) */
            st = operand_maps(plan, &oa, modes.a_mode, (jg_tmap *)(buf + JG_LIST_OFF_A(G)) + g,
                              &sa);
        if (st == JG_OK)
            st = operand_maps(plan, &ob, modes.b_mode, (jg_tmap *)(buf + JG_LIST_OFF_B(G)) + g,
                              &sb);
        if (st == JG_OK && !pre && !modes.d_piece) /* (pre: D is stored through pointers) */
            st =
                jg__tmap_encode_2d(plan->ctx, (jg_tmap *)(buf + JG_LIST_OFF_D(G)) + g, p->d_type,
                                   ptrs[3][g], rows, d_map_cols(p), (uint64_t)p->ldd, 64, epi_cols);
        if (soft && !pre) {
            memcpy(soft + JG_SOFT_LIST_OFF_A(G) + sizeof sa * g, &sa, sizeof sa);
            memcpy(soft + JG_SOFT_LIST_OFF_B(G) + sizeof sb * g, &sb, sizeof sb);
        }
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
    if (soft) {
        const uint32_t m3[3] = {modes.a_mode, modes.b_mode, modes.d_piece};
        memcpy(soft + JG_SOFT_LIST_OFF_MODES(G), m3, sizeof m3);
    }
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
    jg_soft_kargs soft;
    jg_status st = tensor_maps(plan, &ptrs, rows, dst, &soft);
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
    if (plan->cfg.soft) { /* never NVFP4: the device block, then the soft one */
        device_soft_kargs both;
        memset(&both, 0, sizeof both);
        memcpy(&both.k, &ka, sizeof both.k);
        both.s = soft;
        return launch(plan, plan->grid, &both, stream);
    }
    return launch(plan, plan->grid, &ka, stream);
}
