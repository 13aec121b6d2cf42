/* jg_gemm_run_in_context and jg_grouped_run_in_context on an sm_90 GPU: a
 * context bound to device 0's primary context, its plans launched with that
 * context current, with another context (made by cuCtxCreate) current, and
 * with none current. Each launch's D is checked against the FP64 reference
 * of jg_test_gpu.h, and the calling thread's current context must be the
 * same after the call as before it. Exits 77 without such a GPU.
 *
 * The driver's context calls come through cudaGetDriverEntryPointByVersion
 * (the tests link the runtime, not libcuda), at CUDA 12.0's ABI. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cuda.h>

#include "jg_test.h"
#include "jg_test_gpu.h"

#define SEED 20260529u
#define GROUPS 2

static struct {
    CUresult (*create)(CUcontext *, unsigned, CUdevice);
    CUresult (*destroy)(CUcontext);
    CUresult (*get_current)(CUcontext *);
    CUresult (*set_current)(CUcontext);
    CUresult (*pop)(CUcontext *);
    CUresult (*get_device)(CUdevice *);
} cu;

/* *out = the driver's function `name` in the ABI of CUDA `version`; exits 1
 * where there is none. */
static void driver_fn(const char *name, int version, void *out, size_t size)
{
    void *fn = NULL;
    enum cudaDriverEntryPointQueryResult found;
    cudaError_t e = cudaGetDriverEntryPointByVersion(name, &fn, version, cudaEnableDefault, &found);
    if (e != cudaSuccess || found != cudaDriverEntryPointSuccess || !fn || size != sizeof fn) {
        fprintf(stderr, "driver entry point %s: %s (query result %d)\n", name,
                cudaGetErrorString(e), (int)found);
        exit(1);
    }
    memcpy(out, &fn, sizeof fn); /* ISO C has no object-to-function cast */
}

static void driver_init(void)
{
    /* cuCtxCreate took (ctx, flags, dev) up to CUDA 11.3; from 11.4 it takes
     * affinity parameters, from 12.5 creation parameters, so ask for 3.2's. */
    driver_fn("cuCtxCreate", 3020, &cu.create, sizeof cu.create);
    driver_fn("cuCtxDestroy", 12000, &cu.destroy, sizeof cu.destroy);
    driver_fn("cuCtxGetCurrent", 12000, &cu.get_current, sizeof cu.get_current);
    driver_fn("cuCtxSetCurrent", 12000, &cu.set_current, sizeof cu.set_current);
    driver_fn("cuCtxPopCurrent", 12000, &cu.pop, sizeof cu.pop);
    driver_fn("cuCtxGetDevice", 12000, &cu.get_device, sizeof cu.get_device);
}

static CUcontext current(void)
{
    CUcontext c = NULL;
    CUresult r = cu.get_current(&c);
    CHECK(r == CUDA_SUCCESS, "cuCtxGetCurrent: %d", (int)r);
    return c;
}

/* Makes c current on this thread; NULL: none, by popping the thread's whole
 * context stack (cuCtxSetCurrent(NULL) pops only its top, and cuCtxCreate
 * left two entries on it). */
static void set_current(CUcontext c)
{
    CUresult r = CUDA_SUCCESS;
    if (c) {
        r = cu.set_current(c);
    } else {
        CUcontext popped;
        while (r == CUDA_SUCCESS && current() != NULL)
            r = cu.pop(&popped);
    }
    if (r != CUDA_SUCCESS) {
        fprintf(stderr, "cuCtxSetCurrent, cuCtxPopCurrent: %d\n", (int)r);
        exit(1);
    }
}

/* Where the calling thread stands at a launch. */
typedef enum { PRIMARY, OTHER, NONE } standing;
static const char *const standing_name[] = {"primary current", "another context current",
                                            "no context current"};

/* Launches one of the two (grouped: the list plan over ops[0..GROUPS),
 * else the dense plan over ops[0]) on stream with the thread standing as
 * asked, checks that it stands so again after the call, then (the primary
 * context current) waits and checks every D. */
static void launch(jg_context *ctx, jg_plan *plan, bool grouped, jg_operands *ops, standing s,
                   CUcontext primary, CUcontext other, cudaStream_t stream, jg_rng *r)
{
    char what[160];
    snprintf(what, sizeof what, "%s, %s",
             grouped ? "jg_grouped_run_in_context" : "jg_gemm_run_in_context", standing_name[s]);
    const int n = grouped ? GROUPS : 1;
    for (int g = 0; g < n; ++g)
        jg_mat_poison(&ops[g].d);
    const CUcontext want = s == PRIMARY ? primary : s == OTHER ? other : NULL;
    set_current(want);
    jg_status st;
    if (grouped) {
        const void *a[GROUPS], *b[GROUPS];
        void *d[GROUPS];
        for (int g = 0; g < GROUPS; ++g) {
            a[g] = ops[g].a.dev;
            b[g] = ops[g].b.dev;
            d[g] = ops[g].d.dev;
        }
        jg_grouped_args args = {.a = a, .b = b, .d = d, .alpha = 1};
        st = jg_grouped_run_in_context(plan, &args, stream);
    } else {
        jg_gemm_args args = {.a = ops[0].a.dev, .b = ops[0].b.dev, .d = ops[0].d.dev, .alpha = 1};
        st = jg_gemm_run_in_context(plan, &args, stream);
    }
    const CUcontext after = current();
    set_current(primary);
    CHECK(st == JG_OK, "%s: %s: %s", what, jg_status_name(st), jg_context_last_error(ctx));
    CHECK(after == want, "%s: the current context after the call is %p, was %p", what,
          (void *)after, (void *)want);
    if (st != JG_OK)
        return;
    CUDA_CHECK(cudaStreamSynchronize(stream));
    for (int g = 0; g < n; ++g) {
        char label[200] = "";
        if (grouped)
            snprintf(label, sizeof label, "%s, group %d", what, g);
        jg_check_d(&ops[g].a, &ops[g].b, NULL, &ops[g].d, ops[g].d.rows, 1, 0,
                   grouped ? label : what, r);
    }
}

int main(void)
{
    jg_test_gpu_init();
    driver_init();
    const CUcontext primary = current();
    jg_context *ctx = jg_test_context(); /* bound to the primary context */
    cudaStream_t stream;
    CUDA_CHECK(cudaStreamCreate(&stream)); /* the primary context's */
    printf("seed %u\n", SEED);
    jg_rng r;
    jg_rng_seed(&r, SEED);

    const int64_t n = 384, k = 512, rows[GROUPS] = {200, 72};
    jg_gemm_problem p = {
        .a_type = JG_BF16, .b_type = JG_BF16, .d_type = JG_BF16, .m = 300, .n = n, .k = k};
    jg_grouped_problem gp = {.layout = JG_GROUPED_LIST,
                             .a_type = JG_BF16,
                             .b_type = JG_BF16,
                             .d_type = JG_BF16,
                             .groups = GROUPS,
                             .m = rows,
                             .n = n,
                             .k = k};
    jg_plan *dense = NULL, *grouped = NULL;
    JG_REQUIRE(ctx, jg_gemm_plan(ctx, &p, &dense));
    JG_REQUIRE(ctx, jg_grouped_plan(ctx, &gp, &grouped));
    jg_operands one, ops[GROUPS];
    jg_operands_init(&one, p.m, n, k, 0, &r);
    for (int g = 0; g < GROUPS; ++g)
        jg_operands_init(&ops[g], rows[g], n, k, 0, &r);

    CUdevice dev = 0;
    CUcontext other = NULL;
    CUresult cr = cu.get_device(&dev);
    if (cr == CUDA_SUCCESS)
        cr = cu.create(&other, 0, dev); /* made current on this thread */
    if (cr != CUDA_SUCCESS) {
        fprintf(stderr, "cuCtxGetDevice, cuCtxCreate: %d\n", (int)cr);
        return 1;
    }
    CHECK(other != primary, "cuCtxCreate returned the primary context");
    set_current(primary);

    for (int s = PRIMARY; s <= NONE; ++s) {
        launch(ctx, dense, false, &one, (standing)s, primary, other, stream, &r);
        launch(ctx, grouped, true, ops, (standing)s, primary, other, stream, &r);
    }

    cu.destroy(other); /* not current: the primary context stays */
    jg_operands_free(&one);
    for (int g = 0; g < GROUPS; ++g)
        jg_operands_free(&ops[g]);
    CUDA_CHECK(cudaStreamDestroy(stream));
    jg_context_destroy(ctx);
    return jg_test_result("test_run_in_context");
}
