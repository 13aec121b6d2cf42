/* Programmatic dependent launch (JG_GEMM_PDL) on an sm_90 GPU: the kernels
 * may start before the kernel ahead of them on the stream ends, so every
 * read of A, B, C and the scales and every write of D must wait for it.
 * Each case below is a chain on one stream where a missing wait gives
 * wrong results, checked against the FP64 reference (bounds of
 * jg_test_gpu.h; FP8 and NVFP4 as test_fp8.c and test_nvfp4.c bound them)
 * and, bit for bit, against the same problem planned without the flag
 * and run alone afterwards (the same tiles: the same sums in the same
 * order). Every output is poisoned (NaN) before each launch.
 *
 * The delayed writer: a small kernel of this test (NVRTC, launched by the
 * runtime) that lets its programmatic dependents start at once
 * (griddepcontrol.launch_dependents), spins for SPIN_NS and only then
 * copies the final A and B (C, scales, block scales) from staging
 * buffers over their poison, and copies D (poison) to a snapshot.
 * Launched just before a PDL GEMM, a read that does not wait sees NaN
 * (RAW), and a write of D that does not wait shows in the snapshot (WAR).
 * It runs on WRITER_BLOCKS SMs, leaving the others free for the GEMM's
 * CTAs to start early on.
 *
 * bf16, M = 1, 16, 64, 128, 512, N = 2048, K = 4096:
 *   RAW   writer(A1) -> GEMM1 (PDL) D1 = A1 B1^T -> GEMM2 (PDL)
 *         D2 = 0.25 D1 B2^T + 0.5 D1 (D1 as A and as C). D2's reference
 *         is computed from the D1 actually produced (downloaded), so its
 *         bound is GEMM2's alone.
 *   WAR   GEMM1 (PDL) reads A1 -> GEMM2 (PDL) writes its D over the
 *         first M x 2048 elements of A1's buffer: D1 must be what the
 *         original A1 gives (bit for bit the RAW run's D1).
 *   graph the RAW chain captured in a CUDA graph (programmatic edges),
 *         replayed twice: bit for bit the RAW run's D1 and D2.
 * e4m3 with tensor scales (M = 16 -> bf16; M = 128 with C -> fp32) and
 * NVFP4 (M = 16: the swap-AB kernel; M = 512 with C: the expanding one),
 * N = 2048, K = 4096, with PDL: writer(A, B, the scales and block scales,
 * C) -> GEMM.
 * One M-generic plan (PDL, hint 128 rows) run with M = 1, 77, 256 after
 * the writer: rows past M stay poison.
 *
 *   test_pdl [--seed S]            (exits 77 without an sm_90 GPU) */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <nvrtc.h>

#include "jg_nvfp4_ref.h"
#include "jg_test.h"
#include "jg_test_gpu.h"
#include "jg_test_nvfp4.h"
#include "jg_test_nvrtc.h"

#define JG_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))
#define PDL ((uint32_t)JG_GEMM_PDL)
#define SPIN_NS 100000ull   /* the writer's delay: 100 us, several times a GEMM here */
#define WRITER_BLOCKS 16u
#define WRITER_THREADS 1024u
#define N1 2048 /* the chains: GEMM1 [M, N1, K1], GEMM2 [M, N1, N1] */
#define K1 4096

/* ---- the delayed writer --------------------------------------------------- */

#define MAX_COPIES 8

/* Byte copies done after the spin (the kernel's parameter, by value). */
typedef struct copy_list {
    struct {
        uint64_t dst, src, bytes;
    } c[MAX_COPIES];
    uint32_t n;
    uint32_t trigger; /* griddepcontrol.launch_dependents first */
    uint64_t spin_ns;
} copy_list;
_Static_assert(sizeof(copy_list) == 208, "copy_list must match pdl_copies in the kernel");

static const char writer_source[] =
    "struct pdl_copy { unsigned long long dst, src, bytes; };\n"
    "struct pdl_copies { pdl_copy c[8]; unsigned int n, trigger; unsigned long long spin_ns; };\n"
    "extern \"C\" __global__ void __launch_bounds__(1024) pdl_slow_copy(const pdl_copies cs)\n"
    "{\n"
    "    if (cs.trigger)\n"
    "        asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");\n"
    "    unsigned long long t0, t;\n"
    "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t0));\n"
    "    do\n"
    "        asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t));\n"
    "    while (t - t0 < cs.spin_ns);\n"
    "    const unsigned long long tid = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "    const unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "    for (unsigned int i = 0; i < cs.n; ++i) {\n"
    "        uint4 *d = (uint4 *)cs.c[i].dst;\n"
    "        const uint4 *s = (const uint4 *)cs.c[i].src;\n"
    "        const unsigned long long n16 = cs.c[i].bytes / 16;\n"
    "        for (unsigned long long j = tid; j < n16; j += stride)\n"
    "            d[j] = s[j];\n"
    "        for (unsigned long long j = n16 * 16 + tid; j < cs.c[i].bytes; j += stride)\n"
    "            ((unsigned char *)d)[j] = ((const unsigned char *)s)[j];\n"
    "    }\n"
    "}\n";

typedef struct writer {
    cudaLibrary_t lib;
    cudaKernel_t kernel;
} writer;

static void nvrtc_require(nvrtcResult r, nvrtcProgram prog, const char *what)
{
    if (r == NVRTC_SUCCESS)
        return;
    fprintf(stderr, "%s: %s\n", what, nvrtcGetErrorString(r));
    jg_nvrtc_print_log(prog);
    exit(1);
}

/* Compiles the writer to PTX for this device and loads it. */
static void writer_load(writer *w)
{
    int major = 0, minor = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, 0));
    char arch[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=compute_%d%d", major, minor);
    const char *opts[] = {arch};
    nvrtcProgram prog;
    nvrtcResult nr = nvrtcCreateProgram(&prog, writer_source, "pdl_slow_copy.cu", 0, NULL, NULL);
    if (nr != NVRTC_SUCCESS) {
        fprintf(stderr, "nvrtcCreateProgram: %s\n", nvrtcGetErrorString(nr));
        exit(1);
    }
    nvrtc_require(nvrtcCompileProgram(prog, 1, opts), prog, "nvrtcCompileProgram");
    size_t n = 0;
    nvrtc_require(nvrtcGetPTXSize(prog, &n), prog, "nvrtcGetPTXSize");
    char *ptx = malloc(n);
    if (!ptx)
        exit(1);
    nvrtc_require(nvrtcGetPTX(prog, ptx), prog, "nvrtcGetPTX");
    nvrtcDestroyProgram(&prog);
    CUDA_CHECK(cudaLibraryLoadData(&w->lib, ptx, NULL, NULL, 0, NULL, NULL, 0));
    CUDA_CHECK(cudaLibraryGetKernel(&w->kernel, w->lib, "pdl_slow_copy"));
    free(ptx);
}

static void copies_add(copy_list *cl, void *dst, const void *src, size_t bytes)
{
    if (!bytes)
        return;
    if (cl->n >= MAX_COPIES) {
        fprintf(stderr, "copy_list: more than %d copies\n", MAX_COPIES);
        exit(1);
    }
    cl->c[cl->n].dst = (uint64_t)(uintptr_t)dst;
    cl->c[cl->n].src = (uint64_t)(uintptr_t)src;
    cl->c[cl->n].bytes = bytes;
    cl->n++;
}

/* Enqueues the writer (an ordinary launch) on stream. */
static void writer_launch(const writer *w, const copy_list *cl, cudaStream_t stream)
{
    copy_list arg = *cl;
    arg.trigger = 1;
    arg.spin_ns = SPIN_NS;
    void *args[] = {&arg};
    dim3 grid = {WRITER_BLOCKS, 1, 1}, block = {WRITER_THREADS, 1, 1};
    CUDA_CHECK(cudaLaunchKernel((const void *)w->kernel, grid, block, args, 0, stream));
}

/* ---- operands: what the GEMM reads, a staging copy of the final values, and
 * the values in FP64 for the reference ---------------------------------------- */

typedef enum kind { KIND_BF16, KIND_E4M3, KIND_NVFP4 } kind;

static const char *kind_str(kind k)
{
    return k == KIND_BF16 ? "bf16" : k == KIND_E4M3 ? "e4m3" : "nvfp4";
}

/* One device array the GEMM reads (dev) and its final values (stage);
 * bytes 0: unused. */
typedef struct part {
    void *dev, *stage;
    size_t bytes;
} part;

typedef struct operand {
    kind kind;
    int64_t rows, k;
    part data, sf, scale; /* codes or elements; NVFP4 block scales; e4m3 tensor / NVFP4 global scale */
    double *deq;          /* rows x k: the values multiplied, scales in */
    fp4_operand fp4;      /* NVFP4: its device buffers are the stage */
} operand;

static void *dev_alloc(size_t bytes)
{
    void *p = NULL;
    CUDA_CHECK(cudaMalloc(&p, bytes));
    return p;
}

static void *host_alloc(size_t bytes)
{
    void *p = malloc(bytes);
    if (!p) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* A part holding `host`'s bytes in both copies. */
static void part_init(part *pt, const void *host, size_t bytes)
{
    pt->bytes = bytes;
    pt->stage = dev_alloc(bytes);
    pt->dev = dev_alloc(bytes);
    CUDA_CHECK(cudaMemcpy(pt->stage, host, bytes, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(pt->dev, host, bytes, cudaMemcpyHostToDevice));
}

/* A jg_mat's values as FP64 rows (an operand's, or the next GEMM's A). */
static double *mat_values(const jg_mat *x)
{
    double *v = host_alloc(sizeof(double) * (size_t)(x->rows * x->cols));
    for (int64_t i = 0; i < x->rows; ++i)
        for (int64_t j = 0; j < x->cols; ++j)
            v[i * x->cols + j] = jg_mat_get(x, i, j);
    return v;
}

/* op's header fields, the rest zero. */
static void op_begin(operand *op, kind kd, int64_t rows, int64_t k)
{
    memset(op, 0, sizeof *op);
    op->kind = kd;
    op->rows = rows;
    op->k = k;
}

/* Standard normals rounded to BF16, never zero (jg_mat_fill_normal). */
static void op_bf16(operand *op, int64_t rows, int64_t k, jg_rng *r)
{
    op_begin(op, KIND_BF16, rows, k);
    jg_mat x;
    jg_mat_init(&x, JG_BF16, rows, k, 0);
    jg_mat_fill_normal(&x, r);
    op->deq = mat_values(&x);
    part_init(&op->data, x.host, x.bytes);
    jg_mat_free(&x);
}

/* Random e4m3 codes of magnitude 2^-3 .. 15 (no zero, no NaN), a tensor
 * scale in [0.25, 1.25). */
static void op_e4m3(operand *op, int64_t rows, int64_t k, jg_rng *r)
{
    op_begin(op, KIND_E4M3, rows, k);
    uint8_t *x = host_alloc((size_t)(rows * k));
    for (int64_t i = 0; i < rows * k; ++i) {
        const uint64_t v = jg_rng_next(r);
        x[i] = (uint8_t)((v & 0x80) | ((4 + (v >> 8) % 7) << 3) | ((v >> 16) & 7));
    }
    const float s = (float)(0.25 + jg_rng_uniform(r));
    op->deq = host_alloc(sizeof(double) * (size_t)(rows * k));
    for (int64_t i = 0; i < rows * k; ++i)
        op->deq[i] = jg_e4m3_value(x[i]) * (double)s;
    part_init(&op->data, x, (size_t)(rows * k));
    part_init(&op->scale, &s, sizeof s);
    free(x);
}

/* Standard normals quantized by jg_quantize_nvfp4 (128x4-swizzled block
 * scales) into the stage. */
static void op_nvfp4(operand *op, jg_context *ctx, int64_t rows, int64_t k, jg_rng *r)
{
    op_begin(op, KIND_NVFP4, rows, k);
    fp4_operand *f = &op->fp4;
    operand_alloc(f, rows, k, JG_SF_SWIZZLED_128X4);
    operand_random(ctx, f, r);
    const size_t cb = (size_t)(rows * k / 2);
    const size_t sb = (size_t)jg_nvfp4_sf_bytes(f->layout, rows, k);
    op->data = (part){dev_alloc(cb), f->codes_dev, cb};
    op->sf = (part){dev_alloc(sb), f->sf_dev, sb};
    op->scale = (part){dev_alloc(sizeof(float)), f->g_dev, sizeof(float)};
    CUDA_CHECK(cudaMemcpy(op->data.dev, op->data.stage, cb, cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemcpy(op->sf.dev, op->sf.stage, sb, cudaMemcpyDeviceToDevice));
    CUDA_CHECK(cudaMemcpy(op->scale.dev, op->scale.stage, sizeof(float),
                          cudaMemcpyDeviceToDevice));
    op->deq = host_alloc(sizeof(double) * (size_t)(rows * k));
    jg_ref_dequantize_nvfp4(f->codes, k, f->sf, f->layout, f->g, rows, k, op->deq, k);
}

static void op_free(operand *op)
{
    part *parts[] = {&op->data, &op->sf, &op->scale};
    for (int i = 0; i < 3; ++i) {
        if (!parts[i]->bytes)
            continue;
        CUDA_CHECK(cudaFree(parts[i]->dev));
        if (op->kind != KIND_NVFP4)
            CUDA_CHECK(cudaFree(parts[i]->stage));
    }
    if (op->kind == KIND_NVFP4)
        operand_free(&op->fp4);
    free(op->deq);
    memset(op, 0, sizeof *op);
}

/* The parts of op: its data, block scales and scale, where it has them. */
static int op_parts(operand *op, part **out)
{
    int n = 0;
    if (op->data.bytes)
        out[n++] = &op->data;
    if (op->sf.bytes)
        out[n++] = &op->sf;
    if (op->scale.bytes)
        out[n++] = &op->scale;
    return n;
}

/* Poisons on stream what the writer will write; adds those copies. */
static void op_to_writer(operand *op, copy_list *cl, cudaStream_t stream)
{
    part *parts[3];
    const int n = op_parts(op, parts);
    for (int i = 0; i < n; ++i) {
        CUDA_CHECK(cudaMemsetAsync(parts[i]->dev, 0xFF, parts[i]->bytes, stream));
        copies_add(cl, parts[i]->dev, parts[i]->stage, parts[i]->bytes);
    }
}

/* Back to the final values, synchronously. */
static void op_restore(operand *op)
{
    part *parts[3];
    const int n = op_parts(op, parts);
    for (int i = 0; i < n; ++i)
        CUDA_CHECK(cudaMemcpy(parts[i]->dev, parts[i]->stage, parts[i]->bytes,
                              cudaMemcpyDeviceToDevice));
}

/* ---- problems and plans ------------------------------------------------------- */

static jg_gemm_problem problem(kind kd, uint32_t flags, int64_t m, int64_t n, int64_t k,
                               jg_dtype d, bool has_c)
{
    jg_gemm_problem p;
    memset(&p, 0, sizeof p);
    p.flags = flags;
    p.a_type = p.b_type = kd == KIND_BF16 ? JG_BF16 : kd == KIND_E4M3 ? JG_E4M3 : JG_NVFP4;
    p.d_type = d;
    p.c_type = has_c ? d : JG_DTYPE_NONE;
    p.m = m;
    p.n = n;
    p.k = k;
    p.scale = kd == KIND_E4M3 ? JG_SCALE_TENSOR : kd == KIND_NVFP4 ? JG_SCALE_NVFP4 : JG_SCALE_NONE;
    if (kd == KIND_NVFP4)
        p.a_sf_layout = p.b_sf_layout = JG_SF_SWIZZLED_128X4;
    return p;
}

static jg_gemm_args args_for(const operand *a, const operand *b, const void *c, void *d,
                             float alpha, float beta)
{
    jg_gemm_args g;
    memset(&g, 0, sizeof g);
    g.a = a->data.dev;
    g.b = b->data.dev;
    g.c = c;
    g.d = d;
    g.alpha = alpha;
    g.beta = beta;
    g.a_scale = a->scale.dev;
    g.b_scale = b->scale.dev;
    g.a_sf = a->sf.dev;
    g.b_sf = b->sf.dev;
    return g;
}

/* The plan (a memory-cache hit after prewarm), or NULL (reported). */
static jg_plan *plan_of(jg_context *ctx, const jg_gemm_problem *p, const char *what)
{
    jg_plan *plan = NULL;
    jg_status st = jg_gemm_plan(ctx, p, &plan);
    CHECK(st == JG_OK, "%s: jg_gemm_plan (flags 0x%x): %s: %s", what, p->flags,
          jg_status_name(st), jg_context_last_error(ctx));
    return st == JG_OK ? plan : NULL;
}

static const char *plan_name(const jg_plan *plan)
{
    jg_plan_info info;
    return plan && jg_plan_get_info(plan, &info) == JG_OK ? info.kernel_name : "?";
}

static bool run(jg_context *ctx, jg_plan *plan, const jg_gemm_args *args, cudaStream_t stream,
                const char *what)
{
    jg_status st = jg_gemm_run(plan, args, stream);
    CHECK(st == JG_OK, "%s: jg_gemm_run: %s: %s", what, jg_status_name(st),
          jg_context_last_error(ctx));
    return st == JG_OK;
}

/* The problems of the cases below, planned at the start on several threads
 * (each is an NVRTC compile), with their plain twins. */
#define MAX_PROBLEMS 64
static jg_gemm_problem prewarm_list[MAX_PROBLEMS];
static size_t prewarm_count;

/* p and its plain twin (the bit-for-bit comparison's); repeats are harmless
 * (the second plan of a problem is a memory-cache hit). */
static void prewarm_add(jg_gemm_problem p)
{
    for (int plain = 0; plain < 2; ++plain) {
        if (prewarm_count >= MAX_PROBLEMS) {
            fprintf(stderr, "prewarm: more than %d problems\n", MAX_PROBLEMS);
            exit(1);
        }
        prewarm_list[prewarm_count++] = p;
        p.flags &= ~PDL;
    }
}

typedef struct prewarm_pool {
    jg_context *ctx;
    atomic_size_t next;
} prewarm_pool;

static void *prewarm_worker(void *arg)
{
    prewarm_pool *pool = arg;
    for (;;) {
        const size_t i = atomic_fetch_add(&pool->next, 1);
        if (i >= prewarm_count)
            return NULL;
        jg_plan *plan = NULL;
        (void)jg_gemm_plan(pool->ctx, &prewarm_list[i], &plan); /* failures: reported later */
    }
}

static void prewarm(jg_context *ctx)
{
    prewarm_pool pool = {.ctx = ctx};
    atomic_init(&pool.next, 0);
    pthread_t tid[16];
    int started = 0;
    for (; started < 16; ++started)
        if (pthread_create(&tid[started], NULL, prewarm_worker, &pool) != 0)
            break;
    if (started == 0)
        prewarm_worker(&pool);
    for (int t = 0; t < started; ++t)
        pthread_join(tid[t], NULL);
    jg_context_stats st;
    JG_REQUIRE(ctx, jg_context_get_stats(ctx, &st));
    printf("test_pdl: %zu problems planned: %llu compiled in %.1f s of NVRTC, %llu failed\n",
           prewarm_count, (unsigned long long)st.plans_compiled, st.compile_ms / 1e3,
           (unsigned long long)st.compile_failures);
}

/* ---- checks --------------------------------------------------------------- */

/* One GEMM's output against the FP64 reference. */
typedef struct ref_gemm {
    const char *what;
    kind kind;             /* of A and B: the bounds */
    const double *a, *b;   /* rows of A (>= m) x k, n x k: the values multiplied */
    const jg_mat *c;       /* NULL: none; its host copy: C's values */
    double alpha, beta;
    int64_t m, k;          /* rows written */
    const jg_mat *d;       /* downloaded; rows past m must be poison */
    const char *kernel;
} ref_gemm;

/* jg_test_gpu.h's checks over FP64 operand rows: (a) D[0:m, 0:n] finite,
 * every other byte poison; (b) element-wise bounds on every column of the
 * rows jg_check_pick_rows picks and on random columns of the others; (c)
 * the norm-wise bound. bf16 and NVFP4 (both exact products, FP32 sums):
 * jg_check_allow's model. e4m3: test_fp8.c's (the tensor cores' ~14-bit
 * FP8 sums, promoted to FP32 every 128 of K). */
static bool check_ref(const ref_gemm *g, jg_rng *r)
{
    const jg_mat *d = g->d;
    const int64_t m = g->m, n = d->cols, k = g->k;
    const double u = 0x1p-23, uo = jg_test_unit_roundoff(d->type);
    jg_gemm_check ck = {.c = g->c, .d = d, .m = m, .alpha = g->alpha, .beta = g->beta};
    jg_check_begin(&ck);
    jg_check_scan(&ck);
    unsigned char *full = jg_check_pick_rows(m, n, k, r);
    const int64_t spot = jg_check_spot_cols(m, n, k);
    for (int64_t i = 0; i < m; ++i) {
        const int64_t cols = full[i] ? n : spot;
        for (int64_t s = 0; s < cols; ++s) {
            const int64_t j = full[i] ? s : (int64_t)jg_rng_below(r, (uint64_t)n);
            double dot, sabs;
            fp4_dot(g->a + i * k, g->b + j * k, k, &dot, &sabs);
            sabs *= fabs(g->alpha);
            const double bc = g->c ? g->beta * jg_mat_get(g->c, i, j) : 0.0;
            const double ref = g->alpha * dot + bc;
            const double allow =
                g->kind == KIND_E4M3
                    ? sabs * 0x1p-8 + 2 * u * fabs(bc) + 2 * uo * fabs(ref) + jg_test_tiny(d->type)
                    : jg_check_allow(d->type, k, sabs, bc, ref);
            jg_check_record(&ck, i, j, jg_mat_get(d, i, j), ref, allow);
        }
    }
    free(full);
    jg_check_finish(&ck, g->kind == KIND_E4M3 ? 2 * uo + 0x1p-9
                                              : 2 * uo + 8 * sqrt((double)k) * 0x1p-24);
    char line[640];
    jg_check_describe(&ck, line, sizeof line);
    CHECK(ck.ok, "%s (%s): %s", g->what, g->kernel ? g->kernel : "?", line);
    printf("  %-40s %s\n", g->what, line);
    return ck.ok;
}

/* The snapshot the writer took of D, after its spin: still all poison
 * (0xFF bytes), or the GEMM wrote D before its wait. */
static void check_snapshot(const void *snap_dev, size_t bytes, const char *what)
{
    uint8_t *s = host_alloc(bytes);
    CUDA_CHECK(cudaMemcpy(s, snap_dev, bytes, cudaMemcpyDeviceToHost));
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < bytes; ++i)
        if (s[i] != 0xFF && bad++ == 0)
            first = i;
    CHECK(bad == 0, "%s: D was written before the writer ended (its snapshot taken after the "
          "spin: %zu of %zu bytes not poison, first at byte %zu)", what, bad, bytes, first);
    free(s);
}

static int64_t bits_differ(const jg_mat *x, const void *y)
{
    const size_t es = jg_test_dtype_size(x->type), count = x->bytes / es;
    int64_t diff = 0;
    for (size_t i = 0; i < count; ++i)
        diff += memcmp((const char *)x->host + i * es, (const char *)y + i * es, es) != 0;
    return diff;
}

/* The same problem without PDL, run alone (synchronously, on the
 * inputs args points at, which must hold their final values) into a fresh
 * poisoned D: the same bits as `got` (downloaded), when the planner chose
 * the same tiles for both (it should: the flag changes when the kernel
 * waits, not what it computes). */
static void check_plain(jg_context *ctx, const jg_gemm_problem *p, jg_gemm_args args,
                        const jg_mat *got, const char *what)
{
    jg_gemm_problem q = *p;
    q.flags &= ~PDL;
    jg_plan *pp = plan_of(ctx, p, what), *qp = plan_of(ctx, &q, what);
    if (!pp || !qp)
        return;
    jg_plan_info pi, qi;
    JG_REQUIRE(ctx, jg_plan_get_info(pp, &pi));
    JG_REQUIRE(ctx, jg_plan_get_info(qp, &qi));
    const char *suffix = "_pdl";
    const size_t len = strlen(pi.kernel_name);
    CHECK(len > strlen(suffix) && !strcmp(pi.kernel_name + len - strlen(suffix), suffix),
          "%s: kernel %s does not end in %s", what, pi.kernel_name, suffix);
    const bool same = pi.block_m == qi.block_m && pi.block_n == qi.block_n &&
                      pi.block_k == qi.block_k && pi.stages == qi.stages &&
                      pi.cluster == qi.cluster && pi.grid == qi.grid;
    jg_mat d;
    jg_mat_init(&d, got->type, got->rows, got->cols, got->ld);
    jg_mat_poison(&d);
    args.d = d.dev;
    if (run(ctx, qp, &args, NULL, what)) {
        CUDA_CHECK(cudaDeviceSynchronize());
        jg_mat_download(&d);
        const int64_t diff = bits_differ(&d, got->host);
        if (same)
            CHECK(diff == 0, "%s: %lld elements differ from the plain plan's (%s vs %s)", what,
                  (long long)diff, pi.kernel_name, qi.kernel_name);
        else
            printf("  %-40s NOTE: the planner chose other tiles without PDL (%s vs %s): %lld "
                   "elements differ in bits, not compared\n",
                   what, pi.kernel_name, qi.kernel_name, (long long)diff);
    }
    jg_mat_free(&d);
}

/* ---- bf16 chains ------------------------------------------------------------ */

typedef struct chain_shared {
    operand b1, b2; /* B1 [N1, K1], B2 [N1, N1]: weights, never written */
} chain_shared;

static const int64_t chain_ms[] = {1, 16, 64, 128, 512};

static jg_gemm_problem chain_p1(int64_t m)
{
    return problem(KIND_BF16, PDL, m, N1, K1, JG_BF16, false);
}

static jg_gemm_problem chain_p2(int64_t m)
{
    return problem(KIND_BF16, PDL, m, N1, N1, JG_BF16, true);
}

#define ALPHA2 0.25f
#define BETA2 0.5f

static void run_chain(jg_context *ctx, const writer *w, chain_shared *sh, int64_t m,
                      cudaStream_t stream, jg_rng *r)
{
    char what[128];
    const jg_gemm_problem p1 = chain_p1(m), p2 = chain_p2(m);
    snprintf(what, sizeof what, "bf16 chain m=%lld", (long long)m);
    jg_plan *g1 = plan_of(ctx, &p1, what), *g2 = plan_of(ctx, &p2, what);
    if (!g1 || !g2)
        return;
    printf(" bf16 chain, M = %lld: %s, then %s\n", (long long)m, plan_name(g1), plan_name(g2));
    operand a1, x;
    op_bf16(&a1, m, K1, r);
    op_bf16(&x, m, N1, r); /* the WAR chain's second A and C */
    jg_mat d1, d2;
    jg_mat_init(&d1, JG_BF16, m, N1, 0);
    jg_mat_init(&d2, JG_BF16, m, N1, 0);
    void *snap1 = dev_alloc(d1.bytes), *snap2 = dev_alloc(d2.bytes);
    copy_list cl;
    memset(&cl, 0, sizeof cl);

    /* RAW: writer(A1; snapshots of D1, D2) -> GEMM1 -> GEMM2 reading D1. */
    const jg_gemm_args args1 = args_for(&a1, &sh->b1, NULL, d1.dev, 1.0f, 0.0f);
    jg_gemm_args args2 = args_for(&x, &sh->b2, d1.dev, d2.dev, ALPHA2, BETA2);
    args2.a = d1.dev;
    op_to_writer(&a1, &cl, stream);
    CUDA_CHECK(cudaMemsetAsync(d1.dev, 0xFF, d1.bytes, stream));
    CUDA_CHECK(cudaMemsetAsync(d2.dev, 0xFF, d2.bytes, stream));
    CUDA_CHECK(cudaMemsetAsync(snap1, 0, d1.bytes, stream));
    CUDA_CHECK(cudaMemsetAsync(snap2, 0, d2.bytes, stream));
    copies_add(&cl, snap1, d1.dev, d1.bytes);
    copies_add(&cl, snap2, d2.dev, d2.bytes);
    writer_launch(w, &cl, stream);
    bool ok = run(ctx, g1, &args1, stream, what) && run(ctx, g2, &args2, stream, what);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    uint16_t *d1_raw = host_alloc(d1.bytes), *d2_raw = host_alloc(d2.bytes);
    if (ok) {
        jg_mat_download(&d1);
        jg_mat_download(&d2);
        memcpy(d1_raw, d1.host, d1.bytes);
        memcpy(d2_raw, d2.host, d2.bytes);
        snprintf(what, sizeof what, "RAW m=%lld: D1 (writer -> PDL)", (long long)m);
        check_snapshot(snap1, d1.bytes, what);
        ref_gemm c1 = {what, KIND_BF16, a1.deq, sh->b1.deq, NULL, 1.0, 0.0, m, K1, &d1,
                       plan_name(g1)};
        check_ref(&c1, r);
        check_plain(ctx, &p1, args1, &d1, what);
        snprintf(what, sizeof what, "RAW m=%lld: D2 (reads D1 as A, C)", (long long)m);
        check_snapshot(snap2, d2.bytes, what);
        double *d1v = mat_values(&d1);
        ref_gemm c2 = {what, KIND_BF16, d1v, sh->b2.deq, &d1, ALPHA2, BETA2, m, N1, &d2,
                       plan_name(g2)};
        check_ref(&c2, r);
        check_plain(ctx, &p2, args2, &d2, what);
        free(d1v);
    }

    /* WAR: GEMM1 reads A1 -> GEMM2 writes its D over A1's first m x N1. */
    if (ok) {
        op_restore(&a1);
        CUDA_CHECK(cudaMemsetAsync(d1.dev, 0xFF, d1.bytes, stream));
        jg_gemm_args war2 = args_for(&x, &sh->b2, x.data.dev, a1.data.dev, ALPHA2, BETA2);
        ok = run(ctx, g1, &args1, stream, "WAR") && run(ctx, g2, &war2, stream, "WAR");
        CUDA_CHECK(cudaGetLastError());
        CUDA_CHECK(cudaStreamSynchronize(stream));
        if (ok) {
            jg_mat_download(&d1);
            snprintf(what, sizeof what, "WAR m=%lld: D1 (A1 then overwritten)", (long long)m);
            const int64_t diff = bits_differ(&d1, d1_raw);
            CHECK(diff == 0, "%s: %lld elements differ from the RAW run's D1", what,
                  (long long)diff);
            printf("  %-40s %s: bit for bit the RAW run's\n", what, diff ? "FAILED" : "ok");
            /* A1's buffer: D2 over its first m x N1 elements, the rest A1's. */
            jg_mat over = {.type = JG_BF16, .rows = m, .cols = N1, .ld = N1,
                           .bytes = (size_t)(m * N1) * 2, .dev = a1.data.dev};
            uint8_t *whole = host_alloc(a1.data.bytes), *orig = host_alloc(a1.data.bytes);
            CUDA_CHECK(cudaMemcpy(whole, a1.data.dev, a1.data.bytes, cudaMemcpyDeviceToHost));
            CUDA_CHECK(cudaMemcpy(orig, a1.data.stage, a1.data.bytes, cudaMemcpyDeviceToHost));
            over.host = whole;
            CHECK(!memcmp(whole + over.bytes, orig + over.bytes, a1.data.bytes - over.bytes),
                  "WAR m=%lld: A1 past GEMM2's D changed", (long long)m);
            snprintf(what, sizeof what, "WAR m=%lld: D2 over A1", (long long)m);
            jg_mat xc = {.type = JG_BF16, .rows = m, .cols = N1, .ld = N1,
                         .bytes = x.data.bytes, .dev = x.data.dev};
            xc.host = host_alloc(xc.bytes);
            CUDA_CHECK(cudaMemcpy(xc.host, x.data.dev, xc.bytes, cudaMemcpyDeviceToHost));
            ref_gemm c2 = {what, KIND_BF16, x.deq, sh->b2.deq, &xc, ALPHA2, BETA2, m, N1, &over,
                           plan_name(g2)};
            check_ref(&c2, r);
            check_plain(ctx, &p2, war2, &over, what);
            free(xc.host);
            free(whole);
            free(orig);
        }
    }

    /* The RAW chain in a CUDA graph, replayed twice. */
    if (ok) {
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
        writer_launch(w, &cl, stream);
        const jg_status s1 = jg_gemm_run(g1, &args1, stream);
        const jg_status s2 = jg_gemm_run(g2, &args2, stream);
        CUDA_CHECK(cudaStreamEndCapture(stream, &graph));
        CHECK(s1 == JG_OK && s2 == JG_OK, "graph m=%lld: jg_gemm_run under capture: %s, %s: %s",
              (long long)m, jg_status_name(s1), jg_status_name(s2), jg_context_last_error(ctx));
        CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        for (int replay = 0; replay < 2 && s1 == JG_OK && s2 == JG_OK; ++replay) {
            CUDA_CHECK(cudaMemsetAsync(a1.data.dev, 0xFF, a1.data.bytes, stream));
            CUDA_CHECK(cudaMemsetAsync(d1.dev, 0xFF, d1.bytes, stream));
            CUDA_CHECK(cudaMemsetAsync(d2.dev, 0xFF, d2.bytes, stream));
            CUDA_CHECK(cudaMemsetAsync(snap1, 0, d1.bytes, stream));
            CUDA_CHECK(cudaMemsetAsync(snap2, 0, d2.bytes, stream));
            CUDA_CHECK(cudaGraphLaunch(exec, stream));
            CUDA_CHECK(cudaStreamSynchronize(stream));
            jg_mat_download(&d1);
            jg_mat_download(&d2);
            snprintf(what, sizeof what, "graph m=%lld replay %d", (long long)m, replay + 1);
            check_snapshot(snap1, d1.bytes, what);
            check_snapshot(snap2, d2.bytes, what);
            const int64_t diff1 = bits_differ(&d1, d1_raw), diff2 = bits_differ(&d2, d2_raw);
            CHECK(diff1 == 0 && diff2 == 0,
                  "%s: %lld elements of D1, %lld of D2 differ from the RAW run's", what,
                  (long long)diff1, (long long)diff2);
            printf("  %-40s %s: D1, D2 bit for bit the RAW run's\n", what,
                   diff1 || diff2 ? "FAILED" : "ok");
        }
        CUDA_CHECK(cudaGraphExecDestroy(exec));
        CUDA_CHECK(cudaGraphDestroy(graph));
    }
    free(d1_raw);
    free(d2_raw);
    CUDA_CHECK(cudaFree(snap1));
    CUDA_CHECK(cudaFree(snap2));
    jg_mat_free(&d1);
    jg_mat_free(&d2);
    op_free(&a1);
    op_free(&x);
}

/* ---- the delayed writer ahead of one GEMM: every dtype -------------------------- */

typedef struct hazard_case {
    kind kind;
    uint32_t flags;
    int64_t m, n, k; /* m: the problem's (an M-generic plan's hint) */
    jg_dtype d;
    bool has_c;
} hazard_case;

static jg_gemm_problem hazard_problem(const hazard_case *hc)
{
    return problem(hc->kind, hc->flags, hc->m, hc->n, hc->k, hc->d, hc->has_c);
}

/* writer(A's parts, B's, C; snapshot of D) -> GEMM. a holds
 * `rows` rows (>= run_m); run_m: args.m of M-generic plans (0: problem.m). */
static void run_hazard(jg_context *ctx, const writer *w, const hazard_case *hc, operand *a,
                       operand *b, int64_t run_m, cudaStream_t stream, jg_rng *r)
{
    const jg_gemm_problem p = hazard_problem(hc);
    const int64_t rows = a->rows, m = run_m ? run_m : hc->m;
    char what[160];
    snprintf(what, sizeof what, "%s m=%lld%s%s -> %s, PDL", kind_str(hc->kind), (long long)m,
             hc->flags & JG_GEMM_M_GENERIC ? " (m-generic)" : "", hc->has_c ? " +C" : "",
             jg_test_dtype_str(hc->d));
    jg_plan *plan = plan_of(ctx, &p, what);
    if (!plan)
        return;
    jg_mat c, d;
    void *c_stage = NULL;
    if (hc->has_c) {
        jg_mat_init(&c, hc->d, rows, hc->n, 0);
        jg_mat_fill_normal(&c, r);
        c_stage = dev_alloc(c.bytes);
        CUDA_CHECK(cudaMemcpy(c_stage, c.host, c.bytes, cudaMemcpyHostToDevice));
    }
    jg_mat_init(&d, hc->d, rows, hc->n, 0);
    void *snap = dev_alloc(d.bytes);
    op_restore(a);
    op_restore(b);
    copy_list cl;
    memset(&cl, 0, sizeof cl);
    op_to_writer(a, &cl, stream);
    op_to_writer(b, &cl, stream);
    if (hc->has_c) {
        CUDA_CHECK(cudaMemsetAsync(c.dev, 0xFF, c.bytes, stream));
        copies_add(&cl, c.dev, c_stage, c.bytes);
    }
    CUDA_CHECK(cudaMemsetAsync(d.dev, 0xFF, d.bytes, stream));
    CUDA_CHECK(cudaMemsetAsync(snap, 0, d.bytes, stream));
    copies_add(&cl, snap, d.dev, d.bytes);
    const float alpha = 0.75f, beta = hc->has_c ? -0.5f : 0.0f;
    jg_gemm_args args = args_for(a, b, hc->has_c ? c.dev : NULL, d.dev, alpha, beta);
    args.m = run_m;
    writer_launch(w, &cl, stream);
    const bool ok = run(ctx, plan, &args, stream, what);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaStreamSynchronize(stream));
    if (ok) {
        jg_mat_download(&d);
        check_snapshot(snap, d.bytes, what);
        ref_gemm g = {what, hc->kind, a->deq, b->deq, hc->has_c ? &c : NULL, alpha, beta, m,
                      hc->k, &d, plan_name(plan)};
        check_ref(&g, r);
        check_plain(ctx, &p, args, &d, what);
    }
    CUDA_CHECK(cudaFree(snap));
    jg_mat_free(&d);
    if (hc->has_c) {
        jg_mat_free(&c);
        CUDA_CHECK(cudaFree(c_stage));
    }
}

/* e4m3 (tensor scales) and NVFP4 cases, with PDL. */
static const hazard_case scaled_cases[] = {
    {KIND_E4M3, PDL, 16, N1, K1, JG_BF16, false},
    {KIND_E4M3, PDL, 128, N1, K1, JG_FP32, true},
    {KIND_NVFP4, PDL, 16, N1, K1, JG_BF16, false},  /* swap-AB */
    {KIND_NVFP4, PDL, 512, N1, K1, JG_BF16, true},  /* expanding */
};

static void run_scaled(jg_context *ctx, const writer *w, cudaStream_t stream, jg_rng *r)
{
    for (int kd = KIND_E4M3; kd <= KIND_NVFP4; ++kd) {
        operand b;
        bool have_b = false;
        for (size_t i = 0; i < JG_ARRAY_LEN(scaled_cases); ++i) {
            const hazard_case *hc = &scaled_cases[i];
            if ((int)hc->kind != kd)
                continue;
            if (!have_b) {
                if (kd == KIND_E4M3)
                    op_e4m3(&b, hc->n, hc->k, r);
                else
                    op_nvfp4(&b, ctx, hc->n, hc->k, r);
                have_b = true;
            }
            operand a;
            if (kd == KIND_E4M3)
                op_e4m3(&a, hc->m, hc->k, r);
            else
                op_nvfp4(&a, ctx, hc->m, hc->k, r);
            run_hazard(ctx, w, hc, &a, &b, 0, stream, r);
            op_free(&a);
        }
        if (have_b)
            op_free(&b);
    }
}

/* One M-generic plan (PDL, a hint of 128 rows), buffers of 256 rows. */
static const hazard_case mgen_case = {KIND_BF16, PDL | JG_GEMM_M_GENERIC, 128, N1, K1, JG_BF16,
                                      false};
static const int64_t mgen_ms[] = {1, 77, 256};

static void run_m_generic(jg_context *ctx, const writer *w, operand *b1, cudaStream_t stream,
                          jg_rng *r)
{
    operand a;
    op_bf16(&a, 256, K1, r);
    for (size_t i = 0; i < JG_ARRAY_LEN(mgen_ms); ++i)
        run_hazard(ctx, w, &mgen_case, &a, b1, mgen_ms[i], stream, r);
    op_free(&a);
}

int main(int argc, char **argv)
{
    jg_test_gpu_init();
    const uint64_t seed = jg_test_seed(argc, argv, "test_pdl");
    jg_rng r;
    jg_rng_seed(&r, seed);
    jg_context *ctx = jg_test_context();
    for (size_t i = 0; i < JG_ARRAY_LEN(chain_ms); ++i) {
        prewarm_add(chain_p1(chain_ms[i]));
        prewarm_add(chain_p2(chain_ms[i]));
    }
    for (size_t i = 0; i < JG_ARRAY_LEN(scaled_cases); ++i)
        prewarm_add(hazard_problem(&scaled_cases[i]));
    prewarm_add(hazard_problem(&mgen_case));
    prewarm(ctx);

    writer w;
    writer_load(&w);
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream));

    chain_shared sh;
    op_bf16(&sh.b1, N1, K1, &r);
    op_bf16(&sh.b2, N1, N1, &r);
    for (size_t i = 0; i < JG_ARRAY_LEN(chain_ms); ++i)
        run_chain(ctx, &w, &sh, chain_ms[i], stream, &r);
    printf(" m-generic, PDL:\n");
    run_m_generic(ctx, &w, &sh.b1, stream, &r);
    op_free(&sh.b1);
    op_free(&sh.b2);
    printf(" e4m3 and nvfp4:\n");
    run_scaled(ctx, &w, stream, &r);

    CUDA_CHECK(cudaStreamDestroy(stream));
    CUDA_CHECK(cudaLibraryUnload(w.lib));
    jg_context_destroy(ctx);
    return jg_test_result("test_pdl");
}
