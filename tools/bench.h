/* jitgemm-bench's internal header: the types every part of the tool shares
 * (options, rows, the benchmark context, cuBLASLt GEMMs, device buffers) and
 * each part's functions, grouped by file. Not installed; no other tool
 * includes it. */
#ifndef JG_TOOLS_BENCH_H
#define JG_TOOLS_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cublasLt.h>
#include <cuda_runtime_api.h>
#include <jansson.h>

#include <jitgemm/jitgemm.h>

#define EXIT_ROWS_FAILED 1
#define EXIT_SETUP 2

#define MIN_REPS 50
#define RANDOM_MIN_REPS 20 /* --random: many rows, each timed once */
#define WARMUP 10      /* launches of each implementation, at least */
#define WARM_MS 300.0  /* and for at least this long: see warm_up */
/* --random: rows follow each other with the GPU busy (only the host's check
 * and set-up between them, tens of ms), so a shorter warm-up still covers
 * the ~100 ms an idle GPU runs above its sustained clock. */
#define RANDOM_WARM_MS 150.0
#define PICK_REPS 10   /* timed launches per cuBLASLt candidate algorithm */
#define MAX_ALGOS 8
#define MAX_TIMED 4    /* implementations timed together: ours and two peers (grouped);
                          ours, ours without PDL and the peer (--chain); or ours, the peer,
                          the M-generic plan and the plain tiles (--random --family-ab) */
#define MAX_CHAIN 256  /* --chain's largest N */
#define COPY_REPS 20
#define WORKSPACE_BYTES (32ull << 20)
#define FLUSH_BYTES (256ull << 20)
#define FLUSH_THREADS 512 /* per block of the read-only flush */
#define FLUSH_BLOCKS_PER_SM 4
#define FLOOR_THREADS 384 /* per CTA of the launch floor's empty kernel: our GEMMs' */
#define COPY_BYTES (1ull << 30)
#define PEAK_DIM 8192
#define MISMATCH_TOL 2e-2
/* Two cuBLAS results (FP32 accumulation in another order, then rounded) may
 * differ by one bf16 ulp, up to 2^-7 of a value: more is a wrong peer. */
#define PEER_TOL 1e-2

/* Reports a failed CUDA runtime call and evaluates to true. */
#define CUDA_FAILED(call) cuda_failed((call), #call, __FILE__, __LINE__)

/* ---- options (bench_cli.c) --------------------------------------------- */

/* How L2 is emptied before each timed launch: see flush_l2. */
typedef enum flush_mode { FLUSH_READ, FLUSH_MEMSET, FLUSH_NONE } flush_mode;

typedef struct options {
    const char *spec;
    const char *only; /* comma-separated names, or NULL for all */
    jg_dtype dtype;   /* --dtype: A and B of every dense and decode row */
    jg_dtype out_dtype; /* --out-dtype; JG_DTYPE_NONE: see out_type */
    jg_scale_mode scale; /* --scale (default tensor) for e4m3 rows */
    bool scale_set;      /* --scale was given: it also overrides fp8 lines' own */
    int reps;
    const char *json;
    bool no_peer;
    bool no_check; /* --no-check: dense rows' D is not checked (tile sweeps) */
    bool pooled;   /* --pooled: the spec's dense rows run as --random's do (bench_random.c) */
    bool workspace; /* dense plans that take a workspace get one (--no-workspace: none) */
    bool tune; /* JITGEMM_TUNE=1 for our context */
    flush_mode flush;
    jg_sf_layout sf_layout; /* --sf-layout: nvfp4 rows' block scales (default swizzled) */
    int chain; /* --chain N: GEMMs per timed launch of dense and decode rows; 0: off */
    int random;              /* --random N: problems drawn (bench_random.c); 0: the spec's */
    uint64_t seed;           /* --seed, else a fresh one */
    double generic_fraction; /* --random-generic F: rows also timed M-generic */
    bool generic_half;       /* --generic-buckets half: hints of 1.5 times a power of two too */
    const char *dims;        /* --dims FILE: the model widths N and K are drawn from */
    const char *emit_shapes; /* --emit-shapes FILE: write the drawn problems and stop */
    bool family_ab;          /* --family-ab: rows of another family timed on plain tiles too */
    bool energy;             /* --energy: energy per GEMM of ours and the peer (NVML) */
} options;

/* ---- rows from the spec file (bench_spec.c) ----------------------------- */

typedef struct shape {
    char name[64];
    char kind[16];
    int64_t m, n, k; /* grouped: m is the sum of gm, the rows of all groups */
    int64_t b_count; /* B matrices read: 1, or the non-empty groups */
    int g;           /* groups; 0 for dense and decode */
    jg_grouped_layout layout; /* grouped: list, contiguous or masked */
    int64_t m_max;   /* contiguous: m (rows of A and D); masked: rows per group slot */
    int64_t gm[JG_GROUPED_MAX_DEVICE_GROUPS]; /* grouped: rows of each group (0: empty) */
    int64_t seed;    /* the spec's seed, else 0: varies the grouped inputs */
    jg_dtype in, out;     /* A and B; D */
    jg_scale_mode scale;  /* e4m3 rows; JG_SCALE_NVFP4 for nvfp4; NONE for 16-bit ones */
    jg_sf_layout sf_layout; /* nvfp4 rows: --sf-layout; NONE otherwise */
    int64_t generic_hint;   /* also timed M-generic (--random, or a --pooled spec's
                             * generic_hint_m): the plan's M; else 0 */
} shape;

typedef struct shape_list {
    shape *v;
    size_t n, cap;
} shape_list;

/* ---- the SM clock through NVML (bench_timing.c) ------------------------ */

/* NVML's own declarations (nvml.h is not among the build's headers). */
typedef struct nvml_dev_st *nvml_dev;
#define NVML_CLOCK_SM 1
#define NVML_REASON_SW_POWER_CAP 0x4ull
#define NVML_REASON_HW_SLOWDOWN 0x8ull
#define NVML_REASON_SW_THERMAL 0x20ull
#define NVML_REASON_HW_THERMAL 0x40ull
#define NVML_REASON_HW_POWER_BRAKE 0x80ull
#define CLOCK_POLL_NS 1000000 /* between samples while a timed batch runs */

typedef struct nvml_api {
    int (*nvmlInit_v2)(void);
    int (*nvmlDeviceGetHandleByPciBusId_v2)(const char *bus_id, nvml_dev *dev);
    int (*nvmlDeviceGetClockInfo)(nvml_dev dev, int type, unsigned *mhz);
    int (*reasons)(nvml_dev dev, unsigned long long *reasons); /* clock events (throttling) */
    int (*energy)(nvml_dev dev, unsigned long long *mj); /* total since the driver loaded; may be NULL */
    nvml_dev dev;
} nvml_api;

/* The SM clock sampled while a timed batch ran: mean and lowest MHz, and
 * the NVML clock-event reasons seen (OR of the samples); n = 0: none. */
typedef struct clock_stats {
    int n;
    double sum_mhz;
    unsigned min_mhz;
    unsigned long long reasons;
} clock_stats;

/* ---- the benchmark context ----------------------------------------------- */

typedef struct bench {
    options opt;
    cudaStream_t stream;
    cudaEvent_t *start, *stop; /* one pair per timed launch */
    int nevents;
    void *flush;                /* >= 4x the L2, zeroed once at setup */
    size_t flush_bytes;
    cudaLibrary_t flush_lib;    /* the read-only flush kernel (--flush read) and the empty one */
    cudaKernel_t flush_kernel;
    cudaKernel_t empty_kernel;  /* the launch floor's (NULL if the library did not build) */
    unsigned *flush_sink;       /* its output, never written in practice */
    unsigned flush_blocks;
    jg_context *jg;
    jg_context *jg_plain;         /* --family-ab: the planner limited to plain tiles; else NULL */
    bool have_lt;
    cublasLtHandle_t lth;
    void *workspace;              /* cuBLASLt's, and cuBLAS's: one stream, in turn */
    bool have_cb;                 /* the cuBLAS grouped peer (grouped rows) */
    cublasHandle_t cbh;
    cudaStream_t cb_stream;       /* the stream cbh is bound to */
    bool grouped;                 /* the run has grouped rows */
    double copy_gbs, peak_tflops; /* peak_tflops NAN without cuBLASLt or 16-bit rows */
    int peak_algo;                /* the heuristic's algorithm that the peak used */
    bool rows16, rows8;           /* the run has 16-bit rows, e4m3 or nvfp4 rows */
    double fp8_peak_tflops;       /* cuBLASLt e4m3 8192^3; NAN without e4m3 rows */
    double floor_us;              /* an empty kernel, flushed and timed as the rows; NAN if none */
    double floor_smem_us;         /* the same asking for all of an SM's shared memory */
    int floor_smem;               /* the bytes it asks for */
    int fp8_peak_algo;
    size_t l2_bytes;              /* --chain: rows whose B copies total less than 2x are marked */
    nvml_api nvml;                /* nvml.dev NULL: no NVML, clocks not sampled */
    clock_stats peak_clock, fp8_peak_clock; /* while the peaks' launches ran */
    clock_stats clock;            /* the last timed batch's */
    double warm_ms;               /* warm_up's least time: WARM_MS, or RANDOM_WARM_MS */
    void *jg_ws;                  /* --workspace: ours, grown as plans need (rows run in turn) */
    size_t jg_ws_bytes;
    bool generic_rows;            /* rows are also timed M-generic (--random, or a --pooled
                                   * spec with generic_hint_m): their columns are shown */
} bench;

/* ---- timing (bench_timing.c) -------------------------------------------- */

/* Enqueues one launch on the stream; false if it could not be launched. */
typedef bool (*launch_fn)(void *arg, cudaStream_t stream);

/* One implementation to time: a launch function and its argument. */
typedef struct timed {
    launch_fn fn;
    void *arg;
} timed;

/* ---- one cuBLASLt GEMM in our row-major terms (bench_peers.c) ---------- */

/* D[M,N] = A[M,K] B[N,K]^T row-major is, column-major, D^T[N,M] =
 * B[N,K] * A^T: cuBLAS's "A" is our B (K x N, ld K, transposed), its "B" is
 * our A (K x M, ld K), and C = D is N x M with ld N. That "TN" form is also
 * the only one cuBLASLt's FP8 kernels take. */
typedef struct lt_gemm {
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t lay_b, lay_a, lay_d; /* cuBLAS's A, B, and C = D */
    cublasLtMatmulHeuristicResult_t algo[MAX_ALGOS];
    int nalgo;
    const void *a, *b; /* our A and B */
    void *d;
    bench *bench;
    const char *name;  /* the row's peer column: "cuBLASLt", "cuBLASLt fp8", ... */
    bool other_scales; /* e4m3 with tensor scales of 1 for lack of the row's: another D */
} lt_gemm;

/* The scales of an e4m3 GEMM in cuBLASLt's terms, where its A is our B:
 * `a` (its A_SCALE_POINTER) is made from our b_scale, `b` from our a_scale
 * (see lt_scales_layout for the layouts). */
typedef struct lt_scales {
    jg_scale_mode mode;
    const float *a, *b; /* device */
} lt_scales;

/* One of the heuristic's algorithms, as a launchable implementation. */
typedef struct lt_cand {
    lt_gemm *g;
    int algo;
} lt_cand;

/* Grouped rows' second peer: one cublasGemmGroupedBatchedEx over the non-empty
 * groups, each a cuBLAS "group" of one problem, mapped as lt_gemm maps a
 * dense problem: cuBLAS's A is our B_g (op T, K x N, lda K), its B our A_g
 * (op N, K x m_g, ldb K), its C = D_g^T (N x m_g, ldc N), m = N, n = m_g.
 * cuBLAS reads the per-group arrays from the host at each call; the pointer
 * arrays must be in device memory, and are uploaded once per shape. */
typedef struct cb_grouped {
    int count; /* problems (= cuBLAS groups): the non-empty groups; 0: no peer */
    cublasOperation_t ta[JG_GROUPED_MAX_DEVICE_GROUPS], tb[JG_GROUPED_MAX_DEVICE_GROUPS];
    int m[JG_GROUPED_MAX_DEVICE_GROUPS], n[JG_GROUPED_MAX_DEVICE_GROUPS],
        k[JG_GROUPED_MAX_DEVICE_GROUPS], size[JG_GROUPED_MAX_DEVICE_GROUPS];
    int lda[JG_GROUPED_MAX_DEVICE_GROUPS], ldb[JG_GROUPED_MAX_DEVICE_GROUPS],
        ldc[JG_GROUPED_MAX_DEVICE_GROUPS];
    float alpha[JG_GROUPED_MAX_DEVICE_GROUPS], beta[JG_GROUPED_MAX_DEVICE_GROUPS];
    void **ptr; /* device: count cuBLAS A (our B_g), count B (our A_g), count C (D_g) */
    cudaDataType_t in, out;
    bench *bench;
} cb_grouped;

/* ---- device buffers for one problem (bench_operands.c) ----------------- */

typedef struct operands {
    void *ha, *hb; /* host copies: inputs of the no-peer check */
    void *a, *b, *d_ours;
    void *d_peer, *d_peer2; /* the D of each peer: cuBLASLt (loop), cuBLAS grouped */
    size_t a_bytes, b_bytes, d_bytes;
    /* e4m3 problems only (scale NONE otherwise): see scales_init */
    jg_scale_mode scale;
    int64_t kb;          /* ceil(K / 128): block scales along K */
    float *hsa, *hsb;    /* our a_scale and b_scale on the host */
    float *sa, *sb;      /* the same on the device: args.a_scale, args.b_scale */
    float *lt_sa, *lt_sb; /* cuBLASLt's A and B scales (from our b_scale, a_scale) */
    float *unit;         /* two 1.0f: cuBLASLt's tensor scales where it lacks the mode */
    /* nvfp4 problems only (see nvfp4_init): a and b hold the packed e2m1 codes
     * (ha, hb their host copies), sa and sb the global scales (hsa, hsb) */
    jg_sf_layout sf_layout;
    void *sfa, *sfb;     /* the e4m3 block scales: args.a_sf, args.b_sf */
    uint8_t *hsfa, *hsfb; /* their host copies, for the check */
    size_t sfa_bytes, sfb_bytes;
} operands;

/* ---- one row ------------------------------------------------------------ */

typedef struct row {
    const shape *s;
    double plan_ms;
    const char *origin; /* "nvrtc" or "disk" */
    char kernel[128];
    double ours_us, peer_us; /* NAN when not measured; peer_us: the row's (best) peer */
    double ours_uj, peer_uj; /* --energy: microjoules per GEMM, back to back; NAN otherwise */
    double ours_plain_us;    /* --chain: ours without PDL; NAN otherwise */
    int64_t chain_b_bytes;   /* --chain: B (nvfp4: and b_sf) of the whole chain; 0 otherwise */
    const char *peer;        /* "cuBLASLt", "cuBLASLt fp8" (or "... (tensor scales)"),
                                "cuBLASLt loop" or "cuBLAS grouped", else NULL */
    bool peer_other_scales;  /* e4m3: cuBLASLt timed with tensor scales, not the row's */
    double lt_loop_us, grouped_us; /* grouped: each peer's time, NAN when not timed */
    double grouped_diff;     /* cuBLAS grouped against the cuBLASLt loop (else ours) */
    int peer_algo;           /* index of the chosen heuristic result (dense, decode) */
    int group_algo[JG_GROUPED_MAX_DEVICE_GROUPS]; /* grouped: the same per group, -1 if empty */
    const char *check;       /* "cublas" (whole D), "fp64_rows" (3 rows), "none" (--no-check) */
    double rel_diff;         /* max |ours - ref| / max |ref| (grouped: the worst group) */
    bool mismatch;
    char error[256]; /* "" when the row ran */
    clock_stats clock;       /* the SM clock while its timed launches ran */
    /* --random rows also timed through an M-generic plan (else hint 0, NANs) */
    int64_t generic_hint;    /* the plan's problem.m: M rounded up to a power of two */
    char generic_kernel[128];
    double generic_us, generic_rel_diff;
    bool generic_mismatch;   /* its D against the same reference as ours */
    const char *family;      /* kernel_family of the kernel; NULL until planned */
    /* --family-ab: rows not planned as plain tiles also timed through a plan of
     * jg_plain (else "", NANs) */
    char plain_family_kernel[128];
    double plain_family_us, plain_family_rel_diff;
    bool plain_family_mismatch; /* its D against the same reference as ours */
} row;

typedef struct ours_job {
    jg_plan *plan;
    jg_gemm_args args;
} ours_job;

/* A dense row's --chain state (bench_dense.c). */
typedef struct row_chain row_chain;

typedef struct metrics {
    double ratio, tflops, gbs, sol; /* NAN when unknown */
} metrics;

typedef struct device_info {
    char name[256];
    int major, minor, sms, clock_mhz, l2_bytes, driver, runtime;
    char date[32]; /* ISO 8601, UTC */
} device_info;

/* ---- each part's functions, by file ------------------------------------- */

/* bench_cli.c */
const char *flush_name(flush_mode f);
int parse_args(int argc, char **argv, options *o, bool *done);
jg_dtype out_type(const options *o, jg_dtype in);

/* bench_spec.c */
const char *layout_name(jg_grouped_layout l);
bool load_spec(const char *file, const options *o, shape_list *out);
bool filter_shapes(shape_list *l, const char *only);

/* bench_operands.c */
const char *dtype_name(jg_dtype t);
size_t dtype_size(jg_dtype t);
cudaDataType_t dtype_cuda(jg_dtype t);
const char *scale_name(jg_scale_mode m);
const char *sf_layout_name(jg_sf_layout l);
double load_elem(const void *p, size_t i, jg_dtype t);
void fill_normal(uint16_t *x, size_t n, jg_dtype t, uint64_t seed);
void fill_e4m3(uint8_t *x, size_t n, uint64_t seed);
void scales_free(operands *o);
void operands_free(operands *o);
bool operands_alloc(operands *o, const char *name, size_t na, size_t nb, size_t nd,
                    jg_dtype in, jg_dtype out, int peers, uint64_t seed);
void scale_counts(jg_scale_mode mode, int64_t m, int64_t n, int64_t k, size_t *na,
                  size_t *nb);
bool scales_init(operands *o, const shape *s, uint64_t seed);
bool operands_init(operands *o, const shape *s, int peers, uint64_t seed);

/* bench_timing.c */
bool cuda_failed(cudaError_t e, const char *what, const char *file, int line);
double now_ms(void);
bool flush_load(bench *b, int major, int minor, int sms);
void nvml_open(bench *b);
void clock_sample(const nvml_api *n, clock_stats *c);
double clock_mean(const clock_stats *c);
int time_interleaved(bench *b, const timed *impl, int n, int reps, bool flush, double *us);
double energy_per_launch(bench *b, const timed *impl, double us);
bool measure_ceilings(bench *b);

/* bench_peers.c */
void *dl_open_first(const char *const *names, size_t n, const char **why);
bool dl_resolve(void *lib, const char *name, void *slot);
const char *types_text(char *buf, size_t n, jg_dtype in, jg_dtype out,
                       jg_scale_mode scale);
void lt_gemm_destroy(lt_gemm *g);
bool lt_gemm_init(lt_gemm *g, bench *b, const shape *s, const lt_scales *sc,
                  const char *then);
bool lt_launch(void *arg, cudaStream_t stream);
bool lt_pick(lt_gemm *g, lt_cand *best);
void dense_peer_init(lt_gemm *g, bench *b, const shape *s, const operands *o);
bool cb_grouped_launch(void *arg, cudaStream_t stream);
void cb_grouped_init(cb_grouped *c, bench *b, const shape *s, const operands *o);
bool peers_init(bench *b, bool grouped);
void peers_destroy(bench *b);

/* bench_check.c */
bool diff_device(const void *x, const void *ref, size_t bytes, jg_dtype t, double *diff);
bool check_output(const operands *o, const shape *s, bool has_peer, double *diff);
/* check_output's no-peer check on the host: rows 0, M/2 and M-1 of D (host
 * memory, s->out) against FP64 sums over o->ha, o->hb and the scales, max
 * |error| over max |ref|; the columns spread over the CPUs' threads. */
double sampled_rows_diff(const operands *o, const shape *s, const void *d);
void set_check(row *r, double diff, bool vs_peer);
bool dense_vs_peer(const row *r);
void check_dense(const operands *o, const shape *s, row *r, bool skip);
double check_nvfp4_rows(const operands *o, const shape *s, const void *d);

/* bench_dense.c */
bool ours_launch(void *arg, cudaStream_t stream);
jg_plan *plan_done(jg_context *ctx, jg_status st, jg_plan *plan, double ms, row *r);
jg_gemm_problem shape_problem(const shape *s, uint32_t flags, int64_t m);
jg_gemm_args dense_args(const operands *o);
bool ours_workspace(bench *b, int n, const jg_plan *const *plans, jg_gemm_args *const *args,
                    row *r);
void time_row(bench *b, ours_job *job, lt_gemm *g, row_chain *ch, ours_job *generic,
              ours_job *plain_family, row *r);
void row_init(const bench *b, const shape *s, row *r);
int time_with_peers(bench *b, const timed *t, int n, int gemms, row *r, double *us);
int64_t chain_b_bytes(const shape *s, int n);
void run_shape(bench *b, const shape *s, row *r);

/* bench_grouped.c */
void run_grouped(bench *b, const shape *s, row *r);

/* bench_random.c: --random. random_shapes draws the rows (before any GPU
 * work) and prints the seed; with --emit-shapes it writes them and sets
 * *done. run_random plans them all, then runs them. */
int random_shapes(const options *o, shape_list *out, bool *done);
int run_random(bench *b, const device_info *d, const shape_list *shapes);

/* bench_summary.c: --random's summary after the rows, printed and as JSON
 * (the root's "random" and "summary"); rows with a ratio, which cmp_ranked
 * (for qsort) puts in ascending order of it. */
json_t *random_summary(const bench *b, const row *rows, size_t n);
/* The M-generic rows' ratios (--random's summary has them as "generic"),
 * printed and as JSON. */
json_t *generic_summary(const bench *b, const row *rows, size_t n);
typedef struct ranked {
    double ratio;
    const row *r;
} ranked;
int cmp_ranked(const void *a, const void *b);
json_t *row_ref_json(const row *r); /* {"name", "m", "n", "k"} of a summary's row */

/* bench_family.c: --family-ab. kernel_family names a kernel's family
 * ("plain", "tall", "swap-AB", "split-K", "swap-AB split-K", "ping-pong",
 * "swap-AB ping-pong"); family_context_create makes jg_plain; family_summary
 * is printed after the rows (the JSON root's "family_ab"). */
const char *kernel_family(const char *kernel);
jg_status family_context_create(const jg_options *opt, jg_context **out);
json_t *family_summary(const row *rows, size_t n);

/* bench_output.c */
metrics row_metrics(const bench *b, const row *r);
bool row_ratio(const bench *b, const row *r, double *ratio);
void print_table_header(const bench *b);
void print_row(const bench *b, const row *r);
json_t *json_num(double v);
json_t *clock_json(const clock_stats *c);
json_t *row_json(const bench *b, const row *r);
void geomean_by_kind(const bench *b, const row *rows, size_t n, json_t *out);
void print_header(const bench *b, const device_info *d, const shape_list *shapes);
void print_clock_summary(const bench *b, const row *rows, size_t n);
void print_ceilings(const bench *b);
bool write_json(const bench *b, const device_info *d, const row *rows, size_t n,
                json_t *geo, json_t *extra);
int finish_run(const bench *b, const device_info *d, const row *rows, size_t n, int failed);

#endif /* JG_TOOLS_BENCH_H */
