/* jitgemm-bench's timing: the L2 flush, the interleaved timing loop, the SM
 * clock sampled through NVML, and the ceilings each row is compared with
 * (copy bandwidth, launch floor, matmul peaks). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <nvrtc.h>

#include "bench.h"
#include "jg_test_nvrtc.h" /* jg_nvrtc_print_log */

bool cuda_failed(cudaError_t e, const char *what, const char *file, int line)
{
    const char *base = strrchr(file, '/');
    if (e == cudaSuccess)
        return false;
    fprintf(stderr, "jitgemm-bench: %s:%d: %s: %s\n", base ? base + 1 : file, line, what,
            cudaGetErrorString(e));
    return true;
}

double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* Median of v[0..n), which it sorts. */
static double median(float *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_float);
    return n % 2 ? v[n / 2] : 0.5 * ((double)v[n / 2 - 1] + v[n / 2]);
}

/* ---- the L2 flush ------------------------------------------------------ */

/* A flush must leave L2 holding nothing the timed kernel wants and nothing it
 * has to pay for. A memset leaves up to a whole L2 of DIRTY lines (H100:
 * ~50 MB), which the next kernel's misses must first write back to DRAM: on
 * short memory-bound rows that cost a lot (29 MB decode GEMMs took 20 us,
 * ours and cuBLAS alike, half the copy bandwidth). Reading a buffer >= 4x the
 * L2 evicts everything, writing any dirty line back during the flush, and
 * leaves only clean lines. The kernel below is that read: 16-byte plain
 * loads in a grid-stride loop. Their XOR is stored only if it equals a value
 * that the buffer (one repeated byte, so every XOR is 0) cannot give, which
 * the compiler cannot know, so the loads stay. */
#define FLUSH_KERNEL "jg_bench_read_flush"
#define EMPTY_KERNEL "jg_bench_empty"
static const char flush_source[] =
    "extern \"C\" __global__ void " EMPTY_KERNEL "() {}\n"
    "extern \"C\" __global__ void " FLUSH_KERNEL "(const uint4 *src, unsigned long long n,\n"
    "                                        unsigned int *sink)\n"
    "{\n"
    "    unsigned long long stride = (unsigned long long)gridDim.x * blockDim.x;\n"
    "    unsigned int acc = 0;\n"
    "    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;\n"
    "         i < n; i += stride) {\n"
    "        uint4 v = src[i];\n"
    "        acc ^= v.x ^ v.y ^ v.z ^ v.w;\n"
    "    }\n"
    "    if (acc == 0x9e3779b9u)\n"
    "        *sink = acc;\n"
    "}\n";

/* flush_source as PTX for compute capability major.minor, NUL-terminated
 * (malloc'd), or NULL (reported). */
static char *flush_ptx(int major, int minor)
{
    char arch[64];
    snprintf(arch, sizeof arch, "--gpu-architecture=compute_%d%d", major, minor);
    const char *opts[] = {arch};
    nvrtcProgram prog;
    nvrtcResult r = nvrtcCreateProgram(&prog, flush_source, FLUSH_KERNEL ".cu", 0, NULL, NULL);
    if (r != NVRTC_SUCCESS) {
        fprintf(stderr, "jitgemm-bench: nvrtcCreateProgram: %s\n", nvrtcGetErrorString(r));
        return NULL;
    }
    char *ptx = NULL;
    size_t n = 0;
    if ((r = nvrtcCompileProgram(prog, 1, opts)) != NVRTC_SUCCESS) {
        fprintf(stderr, "jitgemm-bench: nvrtcCompileProgram (%s): %s\n", arch,
                nvrtcGetErrorString(r));
        jg_nvrtc_print_log(prog);
    } else if ((r = nvrtcGetPTXSize(prog, &n)) != NVRTC_SUCCESS || !(ptx = malloc(n)) ||
               (r = nvrtcGetPTX(prog, ptx)) != NVRTC_SUCCESS) {
        fprintf(stderr, "jitgemm-bench: nvrtcGetPTX: %s\n",
                r != NVRTC_SUCCESS ? nvrtcGetErrorString(r) : "out of memory");
        free(ptx);
        ptx = NULL;
    }
    nvrtcDestroyProgram(&prog);
    return ptx;
}

/* Compiles and loads the read-only flush and the empty kernel for this
 * device (`sms` SMs of compute capability major.minor); false (reported
 * where --flush read needs it) if it cannot. */
bool flush_load(bench *b, int major, int minor, int sms)
{
    char *ptx = flush_ptx(major, minor);
    bool ok = ptx &&
              !CUDA_FAILED(cudaLibraryLoadData(&b->flush_lib, ptx, NULL, NULL, 0, NULL, NULL, 0)) &&
              !CUDA_FAILED(cudaLibraryGetKernel(&b->flush_kernel, b->flush_lib, FLUSH_KERNEL)) &&
              !CUDA_FAILED(cudaLibraryGetKernel(&b->empty_kernel, b->flush_lib, EMPTY_KERNEL)) &&
              !CUDA_FAILED(cudaMalloc((void **)&b->flush_sink, sizeof *b->flush_sink));
    free(ptx);
    b->flush_blocks = FLUSH_BLOCKS_PER_SM * (unsigned)(sms > 0 ? sms : 1);
    if (!ok)
        b->empty_kernel = NULL;
    if (!ok && b->opt.flush == FLUSH_READ)
        fprintf(stderr, "jitgemm-bench: cannot build the read-only L2 flush (above); "
                        "--flush memset times without it\n");
    return ok;
}

/* Empties L2 on the stream before timed launch `rep`, as --flush says. */
static bool flush_l2(bench *b, int rep)
{
    if (b->opt.flush == FLUSH_NONE)
        return true;
    if (b->opt.flush == FLUSH_MEMSET)
        return !CUDA_FAILED(cudaMemsetAsync(b->flush, rep & 0xff, b->flush_bytes, b->stream));
    unsigned long long n = b->flush_bytes / 16; /* uint4 elements */
    void *args[] = {&b->flush, &n, &b->flush_sink};
    dim3 grid = {b->flush_blocks, 1, 1}, block = {FLUSH_THREADS, 1, 1};
    return !CUDA_FAILED(cudaLaunchKernel((const void *)b->flush_kernel, grid, block, args, 0,
                                         b->stream));
}

/* Launches the implementations in turn, WARMUP rounds at least and for at
 * least b->warm_ms. A GPU that was idle (while the host made the inputs) runs
 * its first ~100 ms of heavy work at a clock it cannot hold under its power
 * limit, which would favour whatever is timed first. Returns -1, or the
 * index of an implementation that failed to launch. */
static int warm_up(bench *b, const timed *impl, int n)
{
    double t0 = now_ms();
    for (int round = 0;; ++round) {
        for (int j = 0; j < n; ++j)
            if (!impl[j].fn(impl[j].arg, b->stream))
                return j;
        if (round + 1 >= WARMUP && round % 8 == 7) {
            if (CUDA_FAILED(cudaStreamSynchronize(b->stream)))
                return 0;
            if (now_ms() - t0 >= b->warm_ms)
                return -1;
        }
    }
}

/* Opens NVML for the device of the current CUDA context (matched by PCI
 * bus id); leaves b->nvml.dev NULL, silently, where it cannot: the clock
 * columns are then empty. */
void nvml_open(bench *b)
{
    static const char *const names[] = {"libnvidia-ml.so.1", "libnvidia-ml.so"};
    const char *why;
    nvml_api *n = &b->nvml;
    memset(n, 0, sizeof *n);
    void *lib = dl_open_first(names, sizeof names / sizeof names[0], &why);
    char bus[32];
    int dev;
    nvml_dev d = NULL;
    if (!lib || !dl_resolve(lib, "nvmlInit_v2", &n->nvmlInit_v2) ||
        !dl_resolve(lib, "nvmlDeviceGetHandleByPciBusId_v2", &n->nvmlDeviceGetHandleByPciBusId_v2) ||
        !dl_resolve(lib, "nvmlDeviceGetClockInfo", &n->nvmlDeviceGetClockInfo) ||
        !(dl_resolve(lib, "nvmlDeviceGetCurrentClocksEventReasons", &n->reasons) ||
          dl_resolve(lib, "nvmlDeviceGetCurrentClocksThrottleReasons", &n->reasons)) ||
        n->nvmlInit_v2() != 0 || cudaGetDevice(&dev) != cudaSuccess ||
        cudaDeviceGetPCIBusId(bus, sizeof bus, dev) != cudaSuccess ||
        n->nvmlDeviceGetHandleByPciBusId_v2(bus, &d) != 0)
        return;
    dl_resolve(lib, "nvmlDeviceGetTotalEnergyConsumption", &n->energy); /* else NULL */
    n->dev = d;
}

/* One sample of the SM clock and the clock-event reasons into *c. */
void clock_sample(const nvml_api *n, clock_stats *c)
{
    unsigned mhz;
    unsigned long long why = 0;
    if (!n->dev || n->nvmlDeviceGetClockInfo(n->dev, NVML_CLOCK_SM, &mhz) != 0)
        return;
    if (n->reasons(n->dev, &why) == 0)
        c->reasons |= why;
    c->min_mhz = c->n == 0 || mhz < c->min_mhz ? mhz : c->min_mhz;
    c->sum_mhz += mhz;
    c->n++;
}

/* Mean MHz of the samples; NAN without any. */
double clock_mean(const clock_stats *c) { return c->n ? c->sum_mhz / c->n : NAN; }

/* Waits for the timing stream, sampling the SM clock every millisecond
 * while it runs (into b->clock, reset here); false if the stream failed. */
static bool sync_sampling_clock(bench *b)
{
    memset(&b->clock, 0, sizeof b->clock);
    if (!b->nvml.dev)
        return !CUDA_FAILED(cudaStreamSynchronize(b->stream));
    cudaError_t e;
    while ((e = cudaStreamQuery(b->stream)) == cudaErrorNotReady) {
        clock_sample(&b->nvml, &b->clock);
        struct timespec ts = {0, CLOCK_POLL_NS};
        nanosleep(&ts, NULL);
    }
    if (e != cudaSuccess)
        return !CUDA_FAILED(cudaStreamSynchronize(b->stream));
    if (b->clock.n == 0) /* done before the first sample: one now */
        clock_sample(&b->nvml, &b->clock);
    return true;
}

/* Times n implementations in alternation (rep i of each, then rep i + 1),
 * so that clock and temperature drift hit them alike: median of `reps`
 * launches each into us[j], in microseconds. Each launch has its own pair
 * of events; with `flush`, flush_l2 runs before it, outside the events, so
 * every launch reads its inputs from DRAM as in a real model. Returns -1,
 * or the index of an implementation that failed (0 also for a CUDA error). */
int time_interleaved(bench *b, const timed *impl, int n, int reps, bool flush, double *us)
{
    int bad = n * reps > b->nevents ? 0 : warm_up(b, impl, n);
    for (int i = 0; i < reps && bad < 0; ++i)
        for (int j = 0; j < n && bad < 0; ++j) {
            int e = i * n + j;
            if ((flush && !flush_l2(b, i)) ||
                CUDA_FAILED(cudaEventRecord(b->start[e], b->stream)))
                bad = 0;
            else if (!impl[j].fn(impl[j].arg, b->stream))
                bad = j;
            else if (CUDA_FAILED(cudaEventRecord(b->stop[e], b->stream)))
                bad = 0;
        }
    if (!sync_sampling_clock(b) && bad < 0)
        bad = 0;
    float *ms = malloc((size_t)reps * sizeof *ms);
    for (int j = 0; j < n && bad < 0; ++j) {
        for (int i = 0; i < reps && bad < 0; ++i)
            if (CUDA_FAILED(cudaEventElapsedTime(&ms[i], b->start[i * n + j], b->stop[i * n + j])))
                bad = 0;
        if (bad < 0)
            us[j] = median(ms, reps) * 1e3;
    }
    free(ms);
    return bad;
}

/* --energy: microjoules per launch of impl, launched back to back (no flush
 * between launches) as a serving loop runs it, at the clock the power cap
 * leaves. NVML's total-energy counter (millijoules) moves in steps some
 * milliseconds apart, too coarse to difference around a short run; so the
 * mean power is taken between two of its steps at least ENERGY_MS apart
 * while the launches keep the GPU busy (batches of at least ENERGY_BATCH_US
 * queued one ahead), and multiplied by the time per launch over the whole
 * run (events around it). After warm_up's launches of the same. NAN
 * without NVML's counter, or when a launch fails. */
#define ENERGY_MS 500.0
#define ENERGY_BATCH_US 2000.0
double energy_per_launch(bench *b, const timed *impl, double us)
{
    const nvml_api *n = &b->nvml;
    if (!n->dev || !n->energy || !(us > 0))
        return NAN;
    const int batch = us * 16 >= ENERGY_BATCH_US ? 16 : (int)(ENERGY_BATCH_US / us) + 1;
    cudaEvent_t ev[3] = {NULL, NULL, NULL}; /* begin, the batches in turn */
    double out = NAN;
    for (int i = 0; i < 3; ++i)
        if (CUDA_FAILED(cudaEventCreate(&ev[i])))
            goto done;
    if (warm_up(b, impl, 1) >= 0)
        goto done;
    const double t0 = now_ms();
    unsigned long long e, last = 0, e1 = 0, e2 = 0;
    double t1 = -1, t2 = -1;
    long launches = 0;
    int k = 0;
    if (n->energy(n->dev, &last) != 0 || CUDA_FAILED(cudaEventRecord(ev[0], b->stream)))
        goto done;
    for (;; ++k) {
        for (int i = 0; i < batch; ++i, ++launches)
            if (!impl->fn(impl->arg, b->stream))
                goto done;
        if (CUDA_FAILED(cudaEventRecord(ev[1 + k % 2], b->stream)))
            goto done;
        if (k == 0)
            continue; /* one batch queued ahead of the one waited for */
        cudaError_t q;
        while ((q = cudaEventQuery(ev[1 + (k - 1) % 2])) == cudaErrorNotReady) {
            if (n->energy(n->dev, &e) == 0 && e != last) {
                const double t = now_ms();
                if (t1 < 0) {
                    t1 = t;
                    e1 = e;
                } else {
                    t2 = t;
                    e2 = e;
                }
                last = e;
            }
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
        if (CUDA_FAILED(q))
            goto done;
        if (t2 - t1 >= ENERGY_MS)
            break;
        if (now_ms() - t0 > 10 * ENERGY_MS)
            goto done; /* the counter does not move */
    }
    float ms;
    if (CUDA_FAILED(cudaStreamSynchronize(b->stream)) ||
        CUDA_FAILED(cudaEventElapsedTime(&ms, ev[0], ev[1 + k % 2])))
        goto done;
    out = (double)(e2 - e1) / (t2 - t1) * (ms * 1e3 / (double)launches);
done:
    for (int i = 0; i < 3; ++i)
        if (ev[i])
            cudaEventDestroy(ev[i]);
    cudaStreamSynchronize(b->stream);
    return out;
}

/* ---- ceilings: copy bandwidth and matmul peak --------------------------- */

typedef struct copy_job {
    void *dst, *src;
} copy_job;

static bool copy_launch(void *arg, cudaStream_t stream)
{
    copy_job *c = arg;
    return cudaMemcpyAsync(c->dst, c->src, COPY_BYTES, cudaMemcpyDeviceToDevice, stream) ==
           cudaSuccess;
}

/* A 1 GiB device-to-device copy reads and writes 1 GiB each: GB/s (1e9)
 * of bytes read + written, median of COPY_REPS. No flush: 2 GiB >> L2. */
static double measure_copy_gbs(bench *b)
{
    copy_job c = {NULL, NULL};
    double us = -1;
    if (!CUDA_FAILED(cudaMalloc(&c.dst, COPY_BYTES)) &&
        !CUDA_FAILED(cudaMalloc(&c.src, COPY_BYTES)) &&
        !CUDA_FAILED(cudaMemset(c.src, 1, COPY_BYTES)) &&
        !CUDA_FAILED(cudaDeviceSynchronize())) { /* the timing stream does not wait for it */
        timed t = {copy_launch, &c};
        if (time_interleaved(b, &t, 1, COPY_REPS, false, &us) >= 0)
            us = -1;
    }
    cudaFree(c.dst);
    cudaFree(c.src);
    return us > 0 ? 2.0 * COPY_BYTES / (us * 1e-6) / 1e9 : -1;
}

typedef struct empty_job {
    const bench *b;
    int smem; /* dynamic shared memory per CTA */
} empty_job;

static bool empty_launch(void *arg, cudaStream_t stream)
{
    const empty_job *e = arg;
    dim3 grid = {e->b->flush_blocks / FLUSH_BLOCKS_PER_SM, 1, 1}, block = {FLOOR_THREADS, 1, 1};
    return cudaLaunchKernel((const void *)e->b->empty_kernel, grid, block, NULL,
                            (size_t)e->smem, stream) == cudaSuccess;
}

/* The launch floor: an empty kernel of one CTA per SM (our kernels'
 * shape) with `smem` bytes of dynamic shared memory, flushed and
 * timed like every row, median of the reps: the part of a row's
 * microseconds that no kernel body can remove. With all of an SM's shared
 * memory it also pays what a GEMM's launch pays after the flush, which
 * ran with the L1 carveout. NAN if it cannot run. */
static double measure_floor_us(bench *b, int smem)
{
    double us = NAN;
    empty_job e = {b, smem};
    timed t = {empty_launch, &e};
    if (!b->empty_kernel ||
        cudaKernelSetAttributeForDevice(b->empty_kernel,
                                        cudaFuncAttributeMaxDynamicSharedMemorySize, smem,
                                        0) != cudaSuccess ||
        time_interleaved(b, &t, 1, b->opt.reps, true, &us) >= 0)
        return NAN;
    return us;
}

/* cuBLASLt 8192^3 on random inputs, median TFLOP/s: the compute ceiling
 * of `in` rows. bf16: bf16 in and out, normal values. e4m3: e4m3 in
 * (fill_e4m3), bf16 out, tensor scales (random, one each), no fast
 * accumulation. Random data, not zeros, because tensor-core power and
 * therefore clocks depend on the values. *algo: the heuristic's pick;
 * *clock: the SM clock while it was timed (left as it is if it was not). */
static double measure_peak_tflops(bench *b, jg_dtype in, int *algo, clock_stats *clock)
{
    shape s = {.name = "peak", .kind = "peak", .m = PEAK_DIM, .n = PEAK_DIM, .k = PEAK_DIM,
               .in = in, .out = JG_BF16,
               .scale = in == JG_E4M3 ? JG_SCALE_TENSOR : JG_SCALE_NONE};
    operands o;
    lt_gemm g;
    lt_cand best;
    double us = -1;
    memset(&g, 0, sizeof g);
    if (operands_init(&o, &s, 0, 1)) {
        lt_scales sc = {JG_SCALE_TENSOR, o.lt_sa, o.lt_sb};
        if (lt_gemm_init(&g, b, &s, in == JG_E4M3 ? &sc : NULL, "no matmul peak")) {
            g.a = o.a;
            g.b = o.b;
            g.d = o.d_ours;
            timed t = {lt_launch, &best};
            if (!lt_pick(&g, &best) || time_interleaved(b, &t, 1, b->opt.reps, true, &us) >= 0)
                us = -1;
            else {
                *algo = best.algo;
                *clock = b->clock;
            }
        }
    }
    lt_gemm_destroy(&g);
    operands_free(&o);
    return us > 0 ? 2.0 * PEAK_DIM * PEAK_DIM * PEAK_DIM / (us * 1e-6) / 1e12 : -1;
}

/* The ceilings, once per run, before any row: the copy bandwidth, and the
 * bf16 and fp8 matmul peaks where the run has rows of those types. Without
 * the fp8 peak (a cuBLASLt without FP8: a note) fp8 rows have no SoL. */
bool measure_ceilings(bench *b)
{
    b->copy_gbs = measure_copy_gbs(b);
    b->floor_us = measure_floor_us(b, 0);
    if (cudaDeviceGetAttribute(&b->floor_smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, 0) !=
        cudaSuccess)
        b->floor_smem = 0;
    b->floor_smem_us = b->floor_smem > 0 ? measure_floor_us(b, b->floor_smem) : NAN;
    b->peak_tflops = b->have_lt && b->rows16
                         ? measure_peak_tflops(b, JG_BF16, &b->peak_algo, &b->peak_clock)
                         : NAN;
    b->fp8_peak_tflops = b->have_lt && b->rows8
                             ? measure_peak_tflops(b, JG_E4M3, &b->fp8_peak_algo,
                                                   &b->fp8_peak_clock)
                             : NAN;
    if (!(b->copy_gbs > 0) || (b->have_lt && b->rows16 && !(b->peak_tflops > 0))) {
        fprintf(stderr, "jitgemm-bench: cannot measure the ceilings (see above)\n");
        return false;
    }
    if (b->have_lt && b->rows8 && !(b->fp8_peak_tflops > 0)) {
        fprintf(stderr, "jitgemm-bench: note: no fp8 matmul peak (see above): the SoL of fp8 "
                        "and nvfp4 rows stays empty\n");
        b->fp8_peak_tflops = NAN;
    }
    return true;
}
