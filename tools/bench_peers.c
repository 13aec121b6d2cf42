/* jitgemm-bench's peers: cuBLASLt (dense and decode rows, and the loop of
 * grouped rows) and cuBLAS's grouped GEMM, both opened with dlopen here, in
 * the tool, so that libjitgemm keeps no cuBLAS dependency; <cublasLt.h>
 * supplies types and enums only. */
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

/* ---- cuBLASLt through dlopen ------------------------------------------- */

/* X(name, parameter types): the only cuBLASLt functions the tool calls. */
#define LT_FUNCS(X)                                                                          \
    X(cublasLtCreate, (cublasLtHandle_t *))                                                  \
    X(cublasLtDestroy, (cublasLtHandle_t))                                                   \
    X(cublasLtMatmulDescCreate, (cublasLtMatmulDesc_t *, cublasComputeType_t, cudaDataType_t)) \
    X(cublasLtMatmulDescDestroy, (cublasLtMatmulDesc_t))                                     \
    X(cublasLtMatmulDescSetAttribute,                                                        \
      (cublasLtMatmulDesc_t, cublasLtMatmulDescAttributes_t, const void *, size_t))          \
    X(cublasLtMatrixLayoutCreate,                                                            \
      (cublasLtMatrixLayout_t *, cudaDataType, uint64_t, uint64_t, int64_t))                 \
    X(cublasLtMatrixLayoutDestroy, (cublasLtMatrixLayout_t))                                 \
    X(cublasLtMatmulPreferenceCreate, (cublasLtMatmulPreference_t *))                        \
    X(cublasLtMatmulPreferenceDestroy, (cublasLtMatmulPreference_t))                         \
    X(cublasLtMatmulPreferenceSetAttribute,                                                  \
      (cublasLtMatmulPreference_t, cublasLtMatmulPreferenceAttributes_t, const void *, size_t)) \
    X(cublasLtMatmulAlgoGetHeuristic,                                                        \
      (cublasLtHandle_t, cublasLtMatmulDesc_t, cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, \
       cublasLtMatrixLayout_t, cublasLtMatrixLayout_t, cublasLtMatmulPreference_t, int,      \
       cublasLtMatmulHeuristicResult_t *, int *))                                            \
    X(cublasLtMatmul,                                                                        \
      (cublasLtHandle_t, cublasLtMatmulDesc_t, const void *, const void *,                   \
       cublasLtMatrixLayout_t, const void *, cublasLtMatrixLayout_t, const void *,           \
       const void *, cublasLtMatrixLayout_t, void *, cublasLtMatrixLayout_t,                 \
       const cublasLtMatmulAlgo_t *, void *, size_t, cudaStream_t))

/* The prototypes above (and CB_FUNCS's below) must match the headers', or
 * calls through dlsym'd pointers would be wrong; _Generic does not evaluate
 * (nor link) its operand. */
#define API_CHECK_(name, args)                                                      \
    _Static_assert(_Generic(&name, cublasStatus_t(*) args : 1, default : 0),        \
                   #name " does not match the cuBLAS headers");
LT_FUNCS(API_CHECK_)

typedef struct lt_api {
#define LT_MEMBER_(name, args) cublasStatus_t (*name) args;
    LT_FUNCS(LT_MEMBER_)
#undef LT_MEMBER_
} lt_api;

static lt_api lt;

/* The first of `n` library names that dlopen opens, or NULL with *why set
 * to dlerror's reason for the last one. */
void *dl_open_first(const char *const *names, size_t n, const char **why)
{
    void *lib = NULL;
    for (size_t i = 0; i < n && !lib; ++i)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib && !(*why = dlerror()))
        *why = "?";
    return lib;
}

/* Stores the address of `name` in *slot, a function pointer; false if the
 * library has no such symbol. */
bool dl_resolve(void *lib, const char *name, void *slot)
{
    void *sym = dlsym(lib, name);
    if (sym)
        memcpy(slot, &sym, sizeof sym); /* ISO C has no object-to-function cast */
    return sym != NULL;
}

/* Opens cuBLASLt and resolves LT_FUNCS; false (reported) on failure. */
static bool lt_load(void)
{
    static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so"};
    const char *why;
    void *lib = dl_open_first(names, 2, &why);
    if (!lib) {
        fprintf(stderr, "jitgemm-bench: cannot open cuBLASLt: %s\n", why);
        return false;
    }
#define LT_RESOLVE_(name, args)                                                      \
    if (!dl_resolve(lib, #name, &lt.name)) {                                         \
        fprintf(stderr, "jitgemm-bench: cuBLASLt has no %s\n", #name);               \
        return false;                                                                \
    }
    LT_FUNCS(LT_RESOLVE_)
#undef LT_RESOLVE_
    return true;
}

/* X(name, required, parameter types): the cuBLAS functions of the "cuBLAS
 * grouped" peer of grouped rows. cublasGemmGroupedBatchedEx came with
 * cuBLAS 12.5; without a user workspace cuBLAS uses its own. */
#define CB_FUNCS(X)                                                                          \
    X(cublasCreate_v2, true, (cublasHandle_t *))                                             \
    X(cublasDestroy_v2, true, (cublasHandle_t))                                              \
    X(cublasSetStream_v2, true, (cublasHandle_t, cudaStream_t))                              \
    X(cublasSetWorkspace_v2, false, (cublasHandle_t, void *, size_t))                        \
    X(cublasGemmGroupedBatchedEx, true,                                                      \
      (cublasHandle_t, const cublasOperation_t *, const cublasOperation_t *, const int *,    \
       const int *, const int *, const void *, const void *const *, cudaDataType_t,          \
       const int *, const void *const *, cudaDataType_t, const int *, const void *,          \
       void *const *, cudaDataType_t, const int *, int, const int *, cublasComputeType_t))

#define CB_CHECK_(name, required, args) API_CHECK_(name, args)
CB_FUNCS(CB_CHECK_)
#undef CB_CHECK_
#undef API_CHECK_

typedef struct cb_api {
#define CB_MEMBER_(name, required, args) cublasStatus_t (*name) args;
    CB_FUNCS(CB_MEMBER_)
#undef CB_MEMBER_
} cb_api;

static cb_api cb;

/* Opens cuBLAS and resolves CB_FUNCS; false, with one note saying that the
 * cuBLAS grouped peer is skipped, if the library or a required function is
 * missing (grouped rows then run against the cuBLASLt loop alone). */
static bool cb_load(void)
{
    static const char *const names[] = {"libcublas.so.13", "libcublas.so.12", "libcublas.so"};
    const char *why;
    void *lib = dl_open_first(names, 3, &why);
    if (!lib) {
        fprintf(stderr, "jitgemm-bench: note: cannot open cuBLAS (%s): the cuBLAS grouped "
                        "peer is skipped\n", why);
        return false;
    }
#define CB_RESOLVE_(name, required, args)                                                \
    if (!dl_resolve(lib, #name, &cb.name) && required) {                                 \
        fprintf(stderr, "jitgemm-bench: note: cuBLAS has no %s (cuBLAS 12.5 or newer "    \
                        "has): the cuBLAS grouped peer is skipped\n", #name);            \
        return false;                                                                    \
    }
    CB_FUNCS(CB_RESOLVE_)
#undef CB_RESOLVE_
    return true;
}

/* Reports a failed cuBLASLt or cuBLAS call and evaluates to true. */
#define LT_FAILED(call) lt_failed((call), #call)

static bool lt_failed(cublasStatus_t s, const char *what)
{
    if (s == CUBLAS_STATUS_SUCCESS)
        return false;
    /* "lt.cublasLtXxx(...)" or "cb.cublasXxx(...)": the name only */
    what += strncmp(what, "lt.", 3) && strncmp(what, "cb.", 3) ? 0 : 3;
    fprintf(stderr, "jitgemm-bench: %.*s: cuBLAS status %d\n", (int)strcspn(what, "("), what,
            (int)s);
    return true;
}

/* Binds the cuBLAS handle to `stream` unless it is already, and then to the
 * shared workspace (setting the stream resets cuBLAS's workspace to its
 * own); false (reported) on failure. */
static bool cb_bind(bench *b, cudaStream_t stream)
{
    if (b->cb_stream == stream && stream)
        return true;
    if (LT_FAILED(cb.cublasSetStream_v2(b->cbh, stream)) ||
        (cb.cublasSetWorkspace_v2 && b->workspace &&
         LT_FAILED(cb.cublasSetWorkspace_v2(b->cbh, b->workspace, WORKSPACE_BYTES))))
        return false;
    b->cb_stream = stream;
    return true;
}

/* cuBLASLt's scale modes of its A and B for a row or block problem: false
 * where the headers lack them (cuBLAS before 12.9, which added them). Row:
 * OUTER_VEC_32F on both (its A's vector has our N values, its B's our M).
 * Block: BLK128x128_32F on its A (our B, the 128x128 blocks) and
 * VEC128_32F on its B (our A, 1x128 along K), as PyTorch's DeepSeek-style
 * _scaled_mm passes them. */
static bool lt_scale_modes(jg_scale_mode m, int32_t *mode_a, int32_t *mode_b)
{
#if defined(CUBLAS_VERSION) && CUBLAS_VERSION >= 120900
    if (m == JG_SCALE_ROW) {
        *mode_a = *mode_b = CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F;
        return true;
    }
    if (m == JG_SCALE_BLOCK) {
        *mode_a = CUBLASLT_MATMUL_MATRIX_SCALE_BLK128x128_32F;
        *mode_b = CUBLASLT_MATMUL_MATRIX_SCALE_VEC128_32F;
        return true;
    }
#else
    (void)m;
    (void)mode_a;
    (void)mode_b;
#endif
    return false;
}

/* Sets an e4m3 GEMM's scale attributes, and fast accumulation off (the
 * default, said explicitly: with it on, cuBLASLt would skip the periodic
 * promotion of FP8 partial sums to FP32 that libjitgemm does every 128 of
 * K, and be faster for it). A status other than
 * success means this cuBLASLt lacks what the scales need. Tensor scales
 * leave the scale modes at their default (scalar), so that any FP8-capable
 * cuBLASLt takes them. */
static cublasStatus_t lt_set_scales(lt_gemm *g, const lt_scales *sc)
{
    const int8_t fast_accum = 0;
    int32_t mode_a, mode_b;
    cublasStatus_t st = lt.cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_FAST_ACCUM,
                                                          &fast_accum, sizeof fast_accum);
    if (st == CUBLAS_STATUS_SUCCESS && sc->mode != JG_SCALE_TENSOR) {
        if (!lt_scale_modes(sc->mode, &mode_a, &mode_b))
            return CUBLAS_STATUS_NOT_SUPPORTED;
        st = lt.cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_A_SCALE_MODE, &mode_a,
                                               sizeof mode_a);
        if (st == CUBLAS_STATUS_SUCCESS)
            st = lt.cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_B_SCALE_MODE,
                                                   &mode_b, sizeof mode_b);
    }
    if (st == CUBLAS_STATUS_SUCCESS) /* the attribute's value is the device pointer */
        st = lt.cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER,
                                               &sc->a, sizeof sc->a);
    if (st == CUBLAS_STATUS_SUCCESS)
        st = lt.cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER,
                                               &sc->b, sizeof sc->b);
    return st;
}

/* "bf16 x bf16 -> bf16" or "e4m3 x e4m3 -> bf16, block scales", for notes. */
const char *types_text(char *buf, size_t n, jg_dtype in, jg_dtype out,
                       jg_scale_mode scale)
{
    if (scale)
        snprintf(buf, n, "%s x %s -> %s, %s scales", dtype_name(in), dtype_name(in),
                 dtype_name(out), scale_name(scale));
    else
        snprintf(buf, n, "%s x %s -> %s", dtype_name(in), dtype_name(in), dtype_name(out));
    return buf;
}

void lt_gemm_destroy(lt_gemm *g)
{
    if (g->op)
        lt.cublasLtMatmulDescDestroy(g->op);
    if (g->lay_b)
        lt.cublasLtMatrixLayoutDestroy(g->lay_b);
    if (g->lay_a)
        lt.cublasLtMatrixLayoutDestroy(g->lay_a);
    if (g->lay_d)
        lt.cublasLtMatrixLayoutDestroy(g->lay_d);
    memset(g, 0, sizeof *g);
}

/* Describes the problem (s->in x s->in -> s->out, with the scales `sc`
 * for e4m3, NULL otherwise) and asks the heuristic for up to MAX_ALGOS
 * algorithms that fit in the workspace. Where cuBLASLt has none (or refuses
 * the scales) a note says so, and what follows, `then`. */
bool lt_gemm_init(lt_gemm *g, bench *b, const shape *s, const lt_scales *sc,
                  const char *then)
{
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    uint64_t ws = WORKSPACE_BYTES;
    cublasLtMatmulPreference_t pref = NULL;
    jg_dtype in = s->in, out = s->out;
    char what[96];
    memset(g, 0, sizeof *g);
    g->bench = b;
    g->name = in == JG_E4M3 ? "cuBLASLt fp8" : "cuBLASLt";
    bool ok =
        !LT_FAILED(lt.cublasLtMatmulDescCreate(&g->op, CUBLAS_COMPUTE_32F, CUDA_R_32F)) &&
        !LT_FAILED(lt.cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta,
                                                     sizeof ta)) &&
        !LT_FAILED(lt.cublasLtMatmulDescSetAttribute(g->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb,
                                                     sizeof tb)) &&
        !LT_FAILED(lt.cublasLtMatrixLayoutCreate(&g->lay_b, dtype_cuda(in), (uint64_t)s->k,
                                                 (uint64_t)s->n, s->k)) &&
        !LT_FAILED(lt.cublasLtMatrixLayoutCreate(&g->lay_a, dtype_cuda(in), (uint64_t)s->k,
                                                 (uint64_t)s->m, s->k)) &&
        !LT_FAILED(lt.cublasLtMatrixLayoutCreate(&g->lay_d, dtype_cuda(out), (uint64_t)s->n,
                                                 (uint64_t)s->m, s->n)) &&
        !LT_FAILED(lt.cublasLtMatmulPreferenceCreate(&pref)) &&
        !LT_FAILED(lt.cublasLtMatmulPreferenceSetAttribute(
            pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    cublasStatus_t st = ok && sc ? lt_set_scales(g, sc) : CUBLAS_STATUS_SUCCESS;
    bool refused = st != CUBLAS_STATUS_SUCCESS; /* the scales: a cuBLASLt that lacks them */
    if (ok && !refused) {
        st = lt.cublasLtMatmulAlgoGetHeuristic(b->lth, g->op, g->lay_b, g->lay_a, g->lay_d,
                                               g->lay_d, pref, MAX_ALGOS, g->algo, &g->nalgo);
        /* INVALID_VALUE too: FP8 kernels have shape rules (ld, scale layouts) */
        refused = st == CUBLAS_STATUS_NOT_SUPPORTED || st == CUBLAS_STATUS_INVALID_VALUE ||
                  (st == CUBLAS_STATUS_SUCCESS && g->nalgo < 1);
    }
    if (pref)
        lt.cublasLtMatmulPreferenceDestroy(pref);
    if (ok && refused)
        fprintf(stderr, "jitgemm-bench: cuBLASLt has no %s algorithm for %s (status %d): %s\n",
                types_text(what, sizeof what, in, out, sc ? sc->mode : JG_SCALE_NONE), s->name,
                (int)st, then);
    else if (ok)
        LT_FAILED(st);
    if (st != CUBLAS_STATUS_SUCCESS)
        g->nalgo = 0;
    return ok && !refused && st == CUBLAS_STATUS_SUCCESS && g->nalgo >= 1;
}

static cublasStatus_t lt_matmul(const lt_cand *c, cudaStream_t stream)
{
    const lt_gemm *g = c->g;
    const float alpha = 1.0f, beta = 0.0f;
    bench *b = g->bench;
    return lt.cublasLtMatmul(b->lth, g->op, &alpha, g->b, g->lay_b, g->a, g->lay_a, &beta, g->d,
                             g->lay_d, g->d, g->lay_d, &g->algo[c->algo].algo, b->workspace,
                             WORKSPACE_BYTES, stream);
}

bool lt_launch(void *arg, cudaStream_t stream)
{
    return lt_matmul(arg, stream) == CUBLAS_STATUS_SUCCESS;
}

/* One synchronized launch of the heuristic's first usable algorithm, for
 * e4m3 GEMMs: a scale mode or shape that cuBLASLt describes but does not
 * run (cublasLtMatmul's INVALID_VALUE or NOT_SUPPORTED) costs a note and
 * `then`, not the row. False also if nothing could be launched. */
static bool lt_try(lt_gemm *g, const char *then)
{
    lt_cand c = {g, 0};
    while (c.algo < g->nalgo && g->algo[c.algo].state != CUBLAS_STATUS_SUCCESS)
        ++c.algo;
    cublasStatus_t st = c.algo < g->nalgo ? lt_matmul(&c, g->bench->stream)
                                          : CUBLAS_STATUS_NOT_SUPPORTED;
    bool synced = !CUDA_FAILED(cudaStreamSynchronize(g->bench->stream));
    if (st != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "jitgemm-bench: cuBLASLt %s did not launch (status %d): %s\n", g->name,
                (int)st, then);
    return synced && st == CUBLAS_STATUS_SUCCESS;
}

/* "Best heuristic algorithm": times every algorithm the heuristic offered,
 * in alternation, PICK_REPS flushed launches each after a common warm-up,
 * and keeps the fastest in *best. One that fails to launch is dropped.
 * False if none runs. */
bool lt_pick(lt_gemm *g, lt_cand *best)
{
    lt_cand c[MAX_ALGOS];
    timed t[MAX_ALGOS];
    double us[MAX_ALGOS];
    int n = 0;
    for (int i = 0; i < g->nalgo; ++i)
        if (g->algo[i].state == CUBLAS_STATUS_SUCCESS)
            c[n++] = (lt_cand){g, i};
    for (;;) {
        for (int j = 0; j < n; ++j)
            t[j] = (timed){lt_launch, &c[j]};
        int bad = n ? time_interleaved(g->bench, t, n, PICK_REPS, true, us) : -1;
        if (bad < 0)
            break;
        fprintf(stderr, "jitgemm-bench: cuBLASLt algorithm %d failed to launch: dropped\n",
                c[bad].algo);
        c[bad] = c[--n];
    }
    if (!n) {
        fprintf(stderr, "jitgemm-bench: no cuBLASLt algorithm could be launched\n");
        return false;
    }
    int k = 0;
    for (int j = 1; j < n; ++j)
        k = us[j] < us[k] ? j : k;
    *best = c[k];
    return true;
}

/* Points g at o's operands (its D: the first peer's) and, for e4m3, runs it
 * once (lt_try); false (g destroyed) if that fails. */
static bool lt_gemm_bind(lt_gemm *g, const operands *o, bool fp8, const char *then)
{
    g->a = o->a;
    g->b = o->b;
    g->d = o->d_peer;
    if (fp8 && !lt_try(g, then)) {
        lt_gemm_destroy(g);
        return false;
    }
    return true;
}

/* cuBLASLt for a dense or decode row on o's operands, into g: the row's
 * types and, for e4m3, its scales. Where cuBLASLt lacks the row's scale mode
 * (headers or library before cuBLAS 12.9, not sm_90, or a shape its kernels
 * refuse; a note says which), e4m3 with tensor scales of 1 instead, named
 * "cuBLASLt fp8 (tensor scales)": its time is a reference, its D another
 * product, so the row is checked against FP64. Without any, g is left
 * empty (no op) and the peer columns stay empty. */
void dense_peer_init(lt_gemm *g, bench *b, const shape *s, const operands *o)
{
    bool fp8 = s->in == JG_E4M3, retry = fp8 && s->scale != JG_SCALE_TENSOR;
    const char *then = retry ? "timing it with tensor scales instead" : "its columns stay empty";
    lt_scales own = {s->scale, o->lt_sa, o->lt_sb}, unit = {JG_SCALE_TENSOR, o->unit, o->unit + 1};
    if (lt_gemm_init(g, b, s, fp8 ? &own : NULL, then) && lt_gemm_bind(g, o, fp8, then))
        return;
    lt_gemm_destroy(g);
    if (!retry)
        return;
    then = "its columns stay empty";
    if (lt_gemm_init(g, b, s, &unit, then)) {
        g->name = "cuBLASLt fp8 (tensor scales)";
        g->other_scales = true;
        if (lt_gemm_bind(g, o, fp8, then))
            return;
    }
    lt_gemm_destroy(g);
}

static cublasStatus_t cb_grouped_call(cb_grouped *c, cudaStream_t stream)
{
    void **p = c->ptr;
    if (!cb_bind(c->bench, stream))
        return CUBLAS_STATUS_EXECUTION_FAILED;
    return cb.cublasGemmGroupedBatchedEx(
        c->bench->cbh, c->ta, c->tb, c->m, c->n, c->k, c->alpha, (const void *const *)p, c->in,
        c->lda, (const void *const *)(p + c->count), c->in, c->ldb, c->beta, p + 2 * c->count,
        c->out, c->ldc, c->count, c->size, CUBLAS_COMPUTE_32F);
}

bool cb_grouped_launch(void *arg, cudaStream_t stream)
{
    return cb_grouped_call(arg, stream) == CUBLAS_STATUS_SUCCESS;
}

/* Fills the arrays of `s`'s non-empty groups, whose operands are o[i] (the
 * peer writes o[i].d_peer2); false if a size is beyond int. */
static bool cb_grouped_fill(cb_grouped *c, const shape *s, const operands *o, void **host)
{
    int n = 0;
    for (int i = 0; i < s->g; ++i)
        n += s->gm[i] > 0;
    c->count = 0;
    for (int i = 0; i < s->g; ++i) {
        if (!s->gm[i])
            continue;
        if (s->gm[i] > INT_MAX || s->n > INT_MAX || s->k > INT_MAX)
            return false;
        int j = c->count++;
        c->ta[j] = CUBLAS_OP_T;
        c->tb[j] = CUBLAS_OP_N;
        c->m[j] = (int)s->n;
        c->n[j] = (int)s->gm[i];
        c->k[j] = c->lda[j] = c->ldb[j] = (int)s->k;
        c->ldc[j] = (int)s->n;
        c->size[j] = 1;
        c->alpha[j] = 1.0f;
        c->beta[j] = 0.0f;
        host[j] = o[i].b;
        host[n + j] = o[i].a;
        host[2 * n + j] = o[i].d_peer2;
    }
    return true;
}

/* Sets up the cuBLAS grouped peer of `s` (operands o[i], see cb_grouped_fill)
 * and runs it once, so that a problem cuBLAS does not support costs a note
 * and leaves the peer out (count 0) instead of failing the row. */
void cb_grouped_init(cb_grouped *c, bench *b, const shape *s, const operands *o)
{
    void *host[3 * JG_GROUPED_MAX_DEVICE_GROUPS];
    size_t bytes;
    cublasStatus_t st = CUBLAS_STATUS_NOT_SUPPORTED;
    memset(c, 0, sizeof *c);
    c->bench = b;
    c->in = dtype_cuda(s->in);
    c->out = dtype_cuda(s->out);
    if (!cb_grouped_fill(c, s, o, host)) {
        fprintf(stderr, "jitgemm-bench: note: %s has sizes beyond int: the cuBLAS grouped peer "
                        "is left out of the row\n", s->name);
        c->count = 0;
        return;
    }
    bytes = 3 * (size_t)c->count * sizeof *host;
    /* The copy and the trial run on the timing stream, then one sync: the
     * host array lives until the copy is done. */
    bool ok = !CUDA_FAILED(cudaMalloc((void **)&c->ptr, bytes)) &&
              !CUDA_FAILED(cudaMemcpyAsync(c->ptr, host, bytes, cudaMemcpyHostToDevice,
                                           b->stream));
    if (ok)
        st = cb_grouped_call(c, b->stream);
    ok = !CUDA_FAILED(cudaStreamSynchronize(b->stream)) && ok;
    if (ok && st != CUBLAS_STATUS_SUCCESS)
        fprintf(stderr, "jitgemm-bench: note: cublasGemmGroupedBatchedEx cannot run %s (%s x %s "
                        "-> %s): cuBLAS status %d\n", s->name, dtype_name(s->in),
                dtype_name(s->in), dtype_name(s->out), (int)st);
    if (!ok || st != CUBLAS_STATUS_SUCCESS) {
        fprintf(stderr, "jitgemm-bench: note: the cuBLAS grouped peer is left out of %s\n",
                s->name);
        c->count = 0;
    }
}

/* Opens cuBLASLt, its handle and workspace, and, for `grouped` rows with
 * peers, cuBLAS (its absence is only a note); false (reported) without
 * cuBLASLt unless --no-peer. */
bool peers_init(bench *b, bool grouped)
{
    b->have_lt = lt_load() && !LT_FAILED(lt.cublasLtCreate(&b->lth)) &&
                 !CUDA_FAILED(cudaMalloc(&b->workspace, WORKSPACE_BYTES));
    if (!b->have_lt && !b->opt.no_peer) {
        fprintf(stderr, "jitgemm-bench: cuBLASLt is needed as the peer (or pass --no-peer)\n");
        return false;
    }
    b->grouped = grouped;
    if (grouped && !b->opt.no_peer && cb_load()) {
        if (LT_FAILED(cb.cublasCreate_v2(&b->cbh)))
            b->cbh = NULL;
        b->have_cb = b->cbh && cb_bind(b, b->stream);
        if (!b->have_cb)
            fprintf(stderr, "jitgemm-bench: note: the cuBLAS grouped peer is skipped\n");
    }
    return true;
}

void peers_destroy(bench *b)
{
    if (b->lth)
        lt.cublasLtDestroy(b->lth);
    if (b->cbh)
        cb.cublasDestroy_v2(b->cbh);
    cudaFree(b->workspace);
}
