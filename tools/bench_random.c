/* jitgemm-bench --random: problems drawn afresh (random_draw.h), every plan
 * compiled first on parallel threads, inputs made once for all rows, each
 * row timed against cuBLASLt (and some through an M-generic plan) and
 * checked, then a summary of the ratios. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench.h"
#include "random_draw.h"

#define PLAN_THREADS_MAX 16
#define FILL_CHUNK ((size_t)1 << 24) /* elements of an input per fill task */

/* ---- the draw, before any GPU work --------------------------------------- */

/* The drawn problems as spec lines (bench/README.md): the same text from
 * bench/peer_torch.py --random --emit-shapes, so a unit test can compare. */
static bool emit_shapes(const options *o, const random_problem *p)
{
    FILE *f = fopen(o->emit_shapes, "w");
    if (!f) {
        perror(o->emit_shapes);
        return false;
    }
    fprintf(f, "# --random %d --seed %llu --random-generic %g --generic-buckets %s\n", o->random,
            (unsigned long long)o->seed, o->generic_fraction, o->generic_half ? "half" : "pow2");
    for (int i = 0; i < o->random; ++i) {
        fprintf(f, "{\"name\": \"r%d\", \"kind\": \"dense\", \"m\": %lld, \"n\": %lld, "
                   "\"k\": %lld, \"generic_hint_m\": ", i + 1, (long long)p[i].m,
                (long long)p[i].n, (long long)p[i].k);
        if (p[i].generic_hint)
            fprintf(f, "%lld}\n", (long long)p[i].generic_hint);
        else
            fprintf(f, "null}\n");
    }
    bool ok = !ferror(f);
    ok = fclose(f) == 0 && ok;
    if (!ok)
        fprintf(stderr, "jitgemm-bench: cannot write %s\n", o->emit_shapes);
    else
        printf("wrote %d problems to %s\n", o->random, o->emit_shapes);
    return ok;
}

/* The first lines of the output: what was drawn, and the seed that draws it
 * again. */
static void print_draw(const options *o, const random_dims *dims, const random_problem *p)
{
    int generic = 0;
    for (int i = 0; i < o->random; ++i)
        generic += p[i].generic_hint != 0;
    printf("random         %d problems, seed %llu (--seed %llu draws them again)\n"
           "               M log-uniform in 1..%d; N, K from %s (%d widths) %.0f%% of the time,\n"
           "               else multiples of %d in %d..%d; M*K + N*K + M*N <= 2^30 elements;\n"
           "               %d also through an M-generic plan (hint: M rounded up to %s)\n",
           o->random, (unsigned long long)o->seed, (unsigned long long)o->seed, RANDOM_M_MAX,
           o->dims, dims->n, 100 * RANDOM_FROM_LIST, RANDOM_DIM_STEP, RANDOM_DIM_MIN,
           RANDOM_DIM_MAX, generic, random_buckets_text(o->generic_half));
    fflush(stdout);
}

int random_shapes(const options *o, shape_list *out, bool *done)
{
    random_dims dims;
    char err[512];
    if (random_dims_load(o->dims, &dims, err, sizeof err)) {
        fprintf(stderr, "jitgemm-bench: %s\n", err);
        return EXIT_SETUP;
    }
    random_problem *p = calloc((size_t)o->random, sizeof *p);
    out->v = calloc((size_t)o->random, sizeof *out->v);
    if (!p || !out->v) {
        fprintf(stderr, "jitgemm-bench: out of memory\n");
        free(p);
        random_dims_free(&dims);
        return EXIT_SETUP;
    }
    random_draw(o->seed, &dims, o->random, o->generic_fraction, o->generic_half, p);
    print_draw(o, &dims, p);
    random_dims_free(&dims);
    out->n = out->cap = (size_t)o->random;
    for (int i = 0; i < o->random; ++i) {
        shape *s = &out->v[i];
        snprintf(s->name, sizeof s->name, "r%d", i + 1);
        snprintf(s->kind, sizeof s->kind, "dense");
        s->m = p[i].m;
        s->n = p[i].n;
        s->k = p[i].k;
        s->b_count = 1;
        s->in = o->dtype;
        s->out = out_type(o, o->dtype);
        s->scale = o->dtype == JG_E4M3 ? o->scale : JG_SCALE_NONE;
        s->generic_hint = p[i].generic_hint;
    }
    *done = o->emit_shapes != NULL;
    int rc = *done && !emit_shapes(o, p) ? EXIT_SETUP : 0;
    free(p);
    return rc;
}

/* ---- work on parallel threads -------------------------------------------- */

typedef struct parallel {
    atomic_int next;
    int n;
    void (*fn)(void *arg, int i);
    void *arg;
} parallel;

static void *parallel_worker(void *p)
{
    parallel *w = p;
    for (int i; (i = atomic_fetch_add(&w->next, 1)) < w->n;)
        w->fn(w->arg, i);
    return NULL;
}

/* fn(arg, i) for every i in [0, n), on up to `threads` threads (this one
 * among them; fewer where a thread cannot be started). */
static void parallel_for(int n, int threads, void (*fn)(void *, int), void *arg)
{
    parallel w = {.n = n, .fn = fn, .arg = arg};
    pthread_t t[PLAN_THREADS_MAX];
    int started = 0;
    atomic_init(&w.next, 0);
    while (started < threads - 1 && started < PLAN_THREADS_MAX &&
           pthread_create(&t[started], NULL, parallel_worker, &w) == 0)
        ++started;
    parallel_worker(&w);
    for (int i = 0; i < started; ++i)
        pthread_join(t[i], NULL);
}

/* The threads for n tasks: the CPUs, at most PLAN_THREADS_MAX. */
static int thread_count(int n)
{
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int t = cpus > PLAN_THREADS_MAX ? PLAN_THREADS_MAX : cpus > 0 ? (int)cpus : 1;
    return t < n ? t : n > 0 ? n : 1;
}

/* ---- every plan, before any timing --------------------------------------- */

/* The plans of a run: job j < rows plans row j, job rows + i its M-generic
 * plan where it has one (extra_row[i], i < ng), and job rows + ng + i its
 * plan of the plain tiles (--family-ab, extra_row[ng + i], i < np). */
typedef enum job_kind { JOB_ROW, JOB_GENERIC, JOB_PLAIN } job_kind;

typedef struct plan_jobs {
    bench *b;
    const shape *shapes;
    row *rows;
    int n, ng, np, jobs;
    int *extra_row;
    jg_plan **plan;    /* per job */
    jg_status *status; /* per job */
    double *ms;        /* per job: the wall time of its jg_gemm_plan */
} plan_jobs;

/* Job j's kind, and its row in *i. */
static job_kind job_of(const plan_jobs *p, int j, int *i)
{
    *i = j < p->n ? j : p->extra_row[j - p->n];
    return j < p->n ? JOB_ROW : j < p->n + p->ng ? JOB_GENERIC : JOB_PLAIN;
}

/* The context a job plans in. */
static jg_context *job_context(const plan_jobs *p, job_kind k)
{
    return k == JOB_PLAIN ? p->b->jg_plain : p->b->jg;
}

/* Plans job j (kind k, row i) into *out. */
static jg_status job_plan(const plan_jobs *p, job_kind k, int i, jg_plan **out)
{
    const shape *s = &p->shapes[i];
    jg_gemm_problem prob = k == JOB_GENERIC
                               ? shape_problem(s, JG_GEMM_M_GENERIC, p->rows[i].generic_hint)
                               : shape_problem(s, 0, s->m);
    return jg_gemm_plan(job_context(p, k), &prob, out);
}

static void plan_job(void *arg, int j)
{
    plan_jobs *p = arg;
    int i;
    job_kind k = job_of(p, j, &i);
    double t0 = now_ms();
    p->status[j] = job_plan(p, k, i, &p->plan[j]);
    p->ms[j] = now_ms() - t0;
}

/* Fills the plan columns of job j's row (or its M-generic or plain-tiles
 * ones) from the job; a failed job is planned again here, on one thread,
 * so that its message (the context's last error, which threads share) is
 * its own. */
static jg_plan *plan_result(plan_jobs *p, int j)
{
    int i;
    job_kind k = job_of(p, j, &i);
    row *r = &p->rows[i], scratch;
    jg_plan *plan = p->plan[j];
    jg_context *ctx = job_context(p, k);
    if (p->status[j] != JG_OK) {
        plan = NULL;
        p->status[j] = job_plan(p, k, i, &plan);
    }
    if (k == JOB_ROW)
        return plan_done(ctx, p->status[j], plan, p->ms[j], r);
    memset(&scratch, 0, sizeof scratch);
    plan = plan_done(ctx, p->status[j], plan, p->ms[j], &scratch);
    const char *what = k == JOB_GENERIC ? "M-generic" : "plain tiles";
    char *kernel = k == JOB_GENERIC ? r->generic_kernel : r->plain_family_kernel;
    if (!plan && !r->error[0])
        snprintf(r->error, sizeof r->error, "%s %.240s", what, scratch.error);
    else
        snprintf(kernel, sizeof r->kernel, "%s", scratch.kernel);
    return plan;
}

/* --family-ab: whether row i is planned (jg_gemm_kernel_id: the planner's
 * choice, nothing compiled) as a family other than the plain tiles; a
 * problem the planner refuses is not (its row's own plan fails). */
static bool needs_plain(const plan_jobs *p, int i)
{
    jg_kernel_id id;
    jg_gemm_problem prob = shape_problem(&p->shapes[i], 0, p->shapes[i].m);
    return p->b->jg_plain && jg_gemm_kernel_id(p->b->jg, &prob, &id) == JG_OK &&
           strcmp(kernel_family(id.name), "plain");
}

/* The extra jobs' rows: the M-generic ones, then (--family-ab) those of
 * another family than the plain tiles. */
static bool extra_jobs(plan_jobs *p)
{
    p->extra_row = malloc(2 * (size_t)p->n * sizeof *p->extra_row);
    if (!p->extra_row)
        return false;
    for (int i = 0; i < p->n; ++i)
        if (p->rows[i].generic_hint)
            p->extra_row[p->ng++] = i;
    for (int i = 0; i < p->n; ++i)
        if (needs_plain(p, i))
            p->extra_row[p->ng + p->np++] = i;
    p->jobs = p->n + p->ng + p->np;
    return true;
}

/* The plans' sources in b's contexts (with --family-ab, both summed). */
static jg_context_stats plan_stats(const bench *b)
{
    jg_context_stats s = {0}, t = {0};
    jg_context_get_stats(b->jg, &s);
    if (b->jg_plain) {
        jg_context_get_stats(b->jg_plain, &t);
        s.plans_compiled += t.plans_compiled;
        s.plans_disk += t.plans_disk;
        s.plans_memory += t.plans_memory;
    }
    return s;
}

/* Plans every row, its M-generic plan and (--family-ab) its plan of the
 * plain tiles, in parallel (one thread under --tune, whose timing runs on
 * the GPU); plans[i], generic[i] and plain[i] (NULL: none, or failed, with
 * rows[i].error set). */
static bool plan_all(bench *b, const shape_list *shapes, row *rows, jg_plan **plans,
                     jg_plan **generic, jg_plan **plain)
{
    int n = (int)shapes->n;
    plan_jobs p = {.b = b, .shapes = shapes->v, .rows = rows, .n = n};
    bool ok = extra_jobs(&p);
    p.plan = calloc((size_t)p.jobs, sizeof *p.plan);
    p.status = calloc((size_t)p.jobs, sizeof *p.status);
    p.ms = calloc((size_t)p.jobs, sizeof *p.ms);
    ok = ok && p.plan && p.status && p.ms;
    jg_context_stats before = {0}, after = {0};
    int threads = b->opt.tune ? 1 : thread_count(p.jobs);
    double t0 = now_ms();
    if (ok) {
        before = plan_stats(b);
        parallel_for(p.jobs, threads, plan_job, &p);
        after = plan_stats(b);
        for (int j = 0; j < p.jobs; ++j) {
            int i;
            job_kind k = job_of(&p, j, &i);
            jg_plan **to = k == JOB_ROW ? plans : k == JOB_GENERIC ? generic : plain;
            to[i] = plan_result(&p, j);
        }
        printf("plans          %d (%d rows, %d M-generic", p.jobs, n, p.ng);
        if (b->jg_plain)
            printf(", %d plain tiles", p.np);
        printf(") in %.1f s on %d thread(s): %llu "
               "compiled by NVRTC, %llu from the disk cache, %llu from memory\n",
               (now_ms() - t0) / 1e3, threads,
               (unsigned long long)(after.plans_compiled - before.plans_compiled),
               (unsigned long long)(after.plans_disk - before.plans_disk),
               (unsigned long long)(after.plans_memory - before.plans_memory));
    } else
        fprintf(stderr, "jitgemm-bench: out of memory\n");
    free(p.extra_row);
    free(p.plan);
    free(p.status);
    free(p.ms);
    return ok;
}

/* ---- inputs made once for every row --------------------------------------- */

/* A and B of the largest row, random (normal bf16/fp16 values, or e4m3
 * codes), on the host and the device; each row reads the first M*K and
 * N*K elements, and writes the first M*N of each D. */
typedef struct pools {
    void *ha, *hb, *a, *b;
    void *d_ours, *d_peer, *d_generic, *d_plain; /* all but d_ours NULL when not needed */
    size_t a_elems, b_elems, d_elems;
    jg_dtype in;
    uint64_t seed;
} pools;

static void fill_chunk(void *arg, int t)
{
    pools *p = arg;
    size_t a_chunks = (p->a_elems + FILL_CHUNK - 1) / FILL_CHUNK;
    bool in_a = (size_t)t < a_chunks;
    size_t c = in_a ? (size_t)t : (size_t)t - a_chunks, at = c * FILL_CHUNK;
    size_t total = in_a ? p->a_elems : p->b_elems;
    size_t n = total - at < FILL_CHUNK ? total - at : FILL_CHUNK;
    void *base = in_a ? p->ha : p->hb;
    uint64_t seed = p->seed * 0x100000001b3ull + 2 * c + !in_a; /* a stream per chunk */
    if (p->in == JG_E4M3)
        fill_e4m3((uint8_t *)base + at, n, seed);
    else
        fill_normal((uint16_t *)base + at, n, p->in, seed);
}

static void pools_free(pools *p)
{
    free(p->ha);
    free(p->hb);
    cudaFree(p->a);
    cudaFree(p->b);
    cudaFree(p->d_ours);
    cudaFree(p->d_peer);
    cudaFree(p->d_generic);
    cudaFree(p->d_plain);
}

/* Sizes, fills (in parallel, a seeded stream per chunk of FILL_CHUNK, so
 * the values do not depend on the thread count) and uploads the inputs of
 * the rows that have a plan; false (reported) if they do not fit. */
static bool pools_init(pools *p, const bench *b, const shape_list *shapes, const row *rows,
                       jg_plan *const *generic, jg_plan *const *plain)
{
    bool any_generic = false, any_plain = false;
    memset(p, 0, sizeof *p);
    p->in = shapes->v[0].in;
    p->seed = b->opt.seed;
    for (size_t i = 0; i < shapes->n; ++i) {
        const shape *s = &shapes->v[i];
        if (!rows[i].origin)
            continue;
        p->a_elems = (size_t)(s->m * s->k) > p->a_elems ? (size_t)(s->m * s->k) : p->a_elems;
        p->b_elems = (size_t)(s->n * s->k) > p->b_elems ? (size_t)(s->n * s->k) : p->b_elems;
        p->d_elems = (size_t)(s->m * s->n) > p->d_elems ? (size_t)(s->m * s->n) : p->d_elems;
        any_generic |= generic[i] != NULL;
        any_plain |= plain[i] != NULL;
    }
    if (!p->a_elems)
        return true; /* no row to run */
    size_t in = dtype_size(p->in), d_bytes = p->d_elems * dtype_size(shapes->v[0].out);
    p->ha = malloc(p->a_elems * in);
    p->hb = malloc(p->b_elems * in);
    if (!p->ha || !p->hb) {
        fprintf(stderr, "jitgemm-bench: out of host memory for the inputs\n");
        return false;
    }
    int tasks = (int)((p->a_elems + FILL_CHUNK - 1) / FILL_CHUNK +
                      (p->b_elems + FILL_CHUNK - 1) / FILL_CHUNK);
    parallel_for(tasks, thread_count(tasks), fill_chunk, p);
    return !CUDA_FAILED(cudaMalloc(&p->a, p->a_elems * in)) &&
           !CUDA_FAILED(cudaMalloc(&p->b, p->b_elems * in)) &&
           !CUDA_FAILED(cudaMalloc(&p->d_ours, d_bytes)) &&
           (!b->have_lt || b->opt.no_peer || !CUDA_FAILED(cudaMalloc(&p->d_peer, d_bytes))) &&
           (!any_generic || !CUDA_FAILED(cudaMalloc(&p->d_generic, d_bytes))) &&
           (!any_plain || !CUDA_FAILED(cudaMalloc(&p->d_plain, d_bytes))) &&
           !CUDA_FAILED(cudaMemcpy(p->a, p->ha, p->a_elems * in, cudaMemcpyHostToDevice)) &&
           !CUDA_FAILED(cudaMemcpy(p->b, p->hb, p->b_elems * in, cudaMemcpyHostToDevice));
}

/* ---- one row --------------------------------------------------------------- */

/* Row s's operands: views of the pools (not owned) and, for e4m3, scales
 * of its own (scales_init, seeded per row); every D poisoned with NaN. */
static bool row_operands(operands *o, const pools *p, const shape *s, uint64_t seed)
{
    size_t in = dtype_size(s->in);
    memset(o, 0, sizeof *o);
    *o = (operands){.ha = p->ha, .hb = p->hb, .a = p->a, .b = p->b, .d_ours = p->d_ours,
                    .d_peer = p->d_peer, .a_bytes = (size_t)(s->m * s->k) * in,
                    .b_bytes = (size_t)(s->n * s->k) * in,
                    .d_bytes = (size_t)(s->m * s->n) * dtype_size(s->out)};
    return (s->in != JG_E4M3 || scales_init(o, s, seed)) &&
           !CUDA_FAILED(cudaMemset(o->d_ours, 0xff, o->d_bytes)) &&
           (!o->d_peer || !CUDA_FAILED(cudaMemset(o->d_peer, 0xff, o->d_bytes))) &&
           (!p->d_generic || !CUDA_FAILED(cudaMemset(p->d_generic, 0xff, o->d_bytes))) &&
           (!p->d_plain || !CUDA_FAILED(cudaMemset(p->d_plain, 0xff, o->d_bytes))) &&
           /* on the legacy stream, which the timing stream does not wait for */
           !CUDA_FAILED(cudaDeviceSynchronize());
}

/* Checks another of our D's of row r, `d`, against the same reference as
 * ours (check_output) into *diff and *mismatch; r->error says so if it
 * cannot be read back. Nothing to do without `plan` or after an error. */
static void check_other(const operands *o, const jg_plan *plan, void *d, const char *what,
                        row *r, double *diff, bool *mismatch)
{
    operands other = *o;
    double x;
    other.d_ours = d;
    if (!plan || r->error[0])
        return;
    if (check_output(&other, r->s, dense_vs_peer(r), &x)) {
        *diff = x;
        *mismatch = !(x <= MISMATCH_TOL);
    } else
        snprintf(r->error, sizeof r->error, "cannot read the %s output back", what);
}

/* Times row r's plan, cuBLASLt's best algorithm, the M-generic plan and
 * the plain tiles' plan (each when given) in alternation, then checks all
 * of our D's against the same reference (check_dense). */
static void run_random_row(bench *b, const pools *p, jg_plan *plan, jg_plan *generic,
                           jg_plan *plain, uint64_t seed, row *r)
{
    const shape *s = r->s;
    operands o;
    lt_gemm g;
    memset(&g, 0, sizeof g);
    if (!row_operands(&o, p, s, seed)) {
        snprintf(r->error, sizeof r->error, "cannot set up the operands (see above)");
        scales_free(&o);
        return;
    }
    ours_job job = {plan, dense_args(&o)}, gen = job, tiles = job;
    gen.plan = generic;
    gen.args.d = p->d_generic;
    gen.args.m = s->m;
    tiles.plan = plain;
    tiles.args.d = p->d_plain;
    if (o.d_peer)
        dense_peer_init(&g, b, s, &o);
    /* (the M-generic plan takes none: split-K through it needs M baked) */
    const jg_plan *plans[] = {plan, plain};
    jg_gemm_args *const args[] = {&job.args, &tiles.args};
    if (ours_workspace(b, 2, plans, args, r))
        time_row(b, &job, &g, NULL, generic ? &gen : NULL, plain ? &tiles : NULL, r);
    check_dense(&o, s, r, b->opt.no_check);
    check_other(&o, generic, p->d_generic, "M-generic", r, &r->generic_rel_diff,
                &r->generic_mismatch);
    check_other(&o, plain, p->d_plain, "plain tiles'", r, &r->plain_family_rel_diff,
                &r->plain_family_mismatch);
    lt_gemm_destroy(&g);
    scales_free(&o);
}

int run_random(bench *b, const device_info *d, const shape_list *shapes)
{
    size_t n = shapes->n;
    row *rows = calloc(n, sizeof *rows);
    jg_plan **plans = calloc(n, sizeof *plans), **generic = calloc(n, sizeof *generic);
    jg_plan **plain = calloc(n, sizeof *plain);
    pools p;
    int failed = 0, rc = EXIT_SETUP;
    memset(&p, 0, sizeof p);
    if (!rows || !plans || !generic || !plain) {
        fprintf(stderr, "jitgemm-bench: out of memory\n");
        goto done;
    }
    for (size_t i = 0; i < n; ++i) {
        row_init(b, &shapes->v[i], &rows[i]);
        rows[i].generic_hint = shapes->v[i].generic_hint;
    }
    if (!plan_all(b, shapes, rows, plans, generic, plain) ||
        !pools_init(&p, b, shapes, rows, generic, plain))
        goto done;
    print_table_header(b);
    for (size_t i = 0; i < n; ++i) {
        if (plans[i] && !rows[i].error[0])
            run_random_row(b, &p, plans[i], generic[i], plain[i], b->opt.seed + 4 * (i + 1),
                           &rows[i]);
        print_row(b, &rows[i]);
        fflush(stdout);
        failed += rows[i].error[0] || rows[i].mismatch || rows[i].generic_mismatch ||
                  rows[i].plain_family_mismatch;
    }
    rc = finish_run(b, d, rows, n, failed);
done:
    pools_free(&p);
    free(rows);
    free(plans);
    free(generic);
    free(plain);
    return rc;
}
