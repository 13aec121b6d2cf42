/* Stand-ins for the foreign calls of an eager launch, for the package's
 * launch path without a GPU (tests/python/test_launch_path.py, bench/
 * python_overhead.py --cpu-stub): the driver calls the package makes,
 * answering as a process whose device 0 primary context (0x1000) is current on
 * every thread unless stub_set_current says otherwise; a jg_gemm_run and
 * a jg_grouped_run that record their arguments and return JG_OK; and their
 * in-context forms, which push the primary context where it is not current. */
#include <string.h>

#include <jitgemm/jitgemm.h>

static _Thread_local void *current = (void *)0x1000;
static _Thread_local int pushed;
static jg_gemm_args last_args;
static void *last_plan, *last_stream;
static int runs, pushes;
/* the device layouts' call: its args, and the one pointer of each array */
static jg_grouped_args last_grouped;
static const void *grouped_ptrs[3];

int cuInit(unsigned flags) { (void)flags; return 0; }
int cuDeviceGet(int *dev, int index) { *dev = index; return 0; }
int cuDevicePrimaryCtxRetain(void **ctx, int dev) { *ctx = (void *)(0x1000L + dev); return 0; }
static int gets; /* cuCtxGetCurrent calls (the package's, not the in-context stubs') */
int cuCtxGetCurrent(void **ctx)
{
    *ctx = current;
    ++gets;
    return 0;
}
int cuGetErrorName(int r, const char **name) { (void)r; *name = "STUB"; return 0; }

static _Thread_local void *below; /* what a push covered (the package pushes one level) */

int cuCtxPushCurrent_v2(void *ctx)
{
    below = current;
    current = ctx;
    ++pushed;
    ++pushes;
    return 0;
}

int cuCtxPopCurrent_v2(void **ctx)
{
    *ctx = current;
    current = below;
    --pushed;
    return 0;
}

void stub_set_current(void *ctx) { current = ctx; }

int stub_run(jg_plan *plan, const jg_gemm_args *args, void *stream)
{
    if (!plan || !args)
        return JG_ERR_INVALID;
    /* a launch must see its device's primary context current */
    if (current != (void *)0x1000 || pushed < 0)
        return JG_ERR_CUDA;
    last_args = *args;
    last_plan = plan;
    last_stream = stream;
    ++runs;
    return JG_OK;
}

int stub_grouped_run(jg_plan *plan, const jg_grouped_args *args, void *stream)
{
    if (!plan || !args || !args->a || !args->b || !args->d)
        return JG_ERR_INVALID;
    if (current != (void *)0x1000 || pushed < 0)
        return JG_ERR_CUDA;
    last_grouped = *args;
    grouped_ptrs[0] = args->a[0];
    grouped_ptrs[1] = args->b[0];
    grouped_ptrs[2] = args->d[0];
    last_plan = plan;
    last_stream = stream;
    ++runs;
    return JG_OK;
}

/* The in-context launches (jg_gemm_run_in_context, jg_grouped_run_in_context):
 * the primary context pushed where another is current, as the library does
 * with its context's. */
static int enter_primary(void)
{
    if (current == (void *)0x1000)
        return 0;
    cuCtxPushCurrent_v2((void *)0x1000);
    return 1;
}

static void leave_primary(int was_pushed)
{
    void *popped;
    if (was_pushed)
        cuCtxPopCurrent_v2(&popped);
}

int stub_run_in_context(jg_plan *plan, const jg_gemm_args *args, void *stream)
{
    const int was_pushed = enter_primary();
    const int st = stub_run(plan, args, stream);
    leave_primary(was_pushed);
    return st;
}

int stub_grouped_run_in_context(jg_plan *plan, const jg_grouped_args *args, void *stream)
{
    const int was_pushed = enter_primary();
    const int st = stub_grouped_run(plan, args, stream);
    leave_primary(was_pushed);
    return st;
}

const jg_grouped_args *stub_last_grouped(void) { return &last_grouped; }
/* a[0], b[0], d[0] of the last grouped call (its arrays may be gone) */
const void *stub_grouped_ptr(int i) { return i >= 0 && i < 3 ? grouped_ptrs[i] : NULL; }

const jg_gemm_args *stub_last_args(void) { return &last_args; }
void *stub_last_plan(void) { return last_plan; }
void *stub_last_stream(void) { return last_stream; }
int stub_runs(void) { return runs; }
int stub_pushes(void) { return pushes; }
int stub_gets(void) { return gets; }
