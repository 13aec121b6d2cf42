/* jitgemm-bench's dense, decode and nvfp4 rows: planning, timing against
 * cuBLASLt, and --chain (GEMMs back to back, B rotated through copies). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "jg_test.h" /* fill_normal's RNG; 16-bit float conversions */

bool ours_launch(void *arg, cudaStream_t stream)
{
    ours_job *j = arg;
    return jg_gemm_run(j->plan, &j->args, stream) == JG_OK;
}

/* Fills the kernel columns of the row from a plan that took `ms` to make
 * (the compile or disk load, excluded from the GEMM time). Returns the plan,
 * or NULL with r->error set if planning failed. */
jg_plan *plan_done(jg_context *ctx, jg_status st, jg_plan *plan, double ms, row *r)
{
    jg_plan_info info;
    if (st != JG_OK || jg_plan_get_info(plan, &info) != JG_OK) {
        snprintf(r->error, sizeof r->error, "plan: %s%s",
                 st == JG_ERR_UNSUPPORTED ? "unsupported: " : "", jg_context_last_error(ctx));
        return NULL;
    }
    r->plan_ms = ms;
    r->origin = info.origin == JG_ORIGIN_COMPILED ? "nvrtc" : "disk";
    snprintf(r->kernel, sizeof r->kernel, "%s", info.kernel_name);
    r->family = kernel_family(r->kernel);
    return plan;
}

/* The library's problem for a dense or decode shape, planned with `flags`
 * (JG_GEMM_*) for m rows (an M-generic plan's hint). */
jg_gemm_problem shape_problem(const shape *s, uint32_t flags, int64_t m)
{
    return (jg_gemm_problem){.flags = flags, .a_type = s->in, .b_type = s->in,
                             .d_type = s->out, .m = m, .n = s->n, .k = s->k, .scale = s->scale,
                             .a_sf_layout = s->sf_layout, .b_sf_layout = s->sf_layout};
}

/* Plans a dense or decode shape with `flags` (JG_GEMM_*); see plan_done. */
static jg_plan *plan_shape(bench *b, const shape *s, uint32_t flags, row *r)
{
    jg_gemm_problem p = shape_problem(s, flags, s->m);
    jg_plan *plan = NULL;
    double t0 = now_ms();
    jg_status st = jg_gemm_plan(b->jg, &p, &plan);
    return plan_done(b->jg, st, plan, now_ms() - t0, r);
}

/* The row's plan and, under --chain, in *plain one without PDL. The chain
 * times ours with JG_GEMM_PDL (the "ours" column), and the plain plan
 * without it (the "plain" column). The PDL plan is made last so that the
 * row's plan columns (kernel, plan ms, origin) are its. */
static jg_plan *plan_row(bench *b, const shape *s, jg_plan **plain, row *r)
{
    if (!b->opt.chain)
        return plan_shape(b, s, 0, r);
    *plain = plan_shape(b, s, 0, r);
    return *plain ? plan_shape(b, s, JG_GEMM_PDL, r) : NULL;
}

/* Times ours (t[0]) and the peers t[1..n) in alternation, each launch after
 * an L2 flush, into us[0..n), per GEMM where a launch runs `gemms` of them
 * (--chain); sets r->ours_us, or r->error when ours failed. Returns
 * time_interleaved's answer: j > 0 when peer t[j] failed to launch. */
int time_with_peers(bench *b, const timed *t, int n, int gemms, row *r, double *us)
{
    int bad = time_interleaved(b, t, n, b->opt.reps, true, us);
    for (int j = 0; j < n && bad < 0; ++j)
        us[j] /= gemms;
    r->clock = b->clock;
    if (bad == 0)
        snprintf(r->error, sizeof r->error, "libjitgemm launch failed: %s",
                 jg_context_last_error(b->jg));
    else if (bad < 0)
        r->ours_us = us[0];
    return bad;
}

/* ---- --chain: GEMMs back to back, B rotated through copies ------------ */

/* n device buffers of one operand with the same contents: p[0] the row's
 * own, p[1..n) copies (owned). */
typedef struct b_copies {
    int n;
    void *p[MAX_CHAIN];
} b_copies;

/* One timed launch under --chain: `inner` once per copy, pointed at copy i
 * of B (and of b_sf) before launch i, so that each GEMM of the chain reads
 * its weights from DRAM, as a model's successive layers do, and not from
 * the L2 lines that the GEMM before it left. */
typedef struct chain_job {
    timed inner;
    const void **b, **sf; /* where inner reads B and b_sf (sf NULL: none) */
    const b_copies *cb, *csf;
} chain_job;

/* A row's chain: the copies, ours without PDL, and the chains timed (in
 * the places of their implementations in time_row's t). */
struct row_chain {
    b_copies b, sf; /* our B and, nvfp4, b_sf (n 0: none) */
    b_copies peer_b; /* the peer's B where it has operands of its own (nvfp4) */
    ours_job plain;  /* ours planned without PDL, on the row's arguments */
    chain_job job[MAX_TIMED];
};

static bool chain_launch(void *arg, cudaStream_t stream)
{
    chain_job *c = arg;
    for (int i = 0; i < c->cb->n; ++i) {
        *c->b = c->cb->p[i];
        if (c->sf)
            *c->sf = c->csf->p[i];
        if (!c->inner.fn(c->inner.arg, stream))
            return false;
    }
    return true;
}

/* Fills c (zeroed) with n buffers of `bytes` holding src's: src, then n - 1
 * device-to-device copies (on the legacy stream); false (reported) if one
 * cannot be made, c then holding what was, for copies_free. A failed
 * allocation is also cleared from the runtime's last error, which the
 * rows after must not see. */
static bool copies_make(b_copies *c, void *src, size_t bytes, int n)
{
    c->n = n;
    c->p[0] = src;
    for (int i = 1; i < n; ++i) {
        if (CUDA_FAILED(cudaMalloc(&c->p[i], bytes))) {
            c->p[i] = NULL;
            cudaGetLastError();
            return false;
        }
        if (CUDA_FAILED(cudaMemcpy(c->p[i], src, bytes, cudaMemcpyDeviceToDevice)))
            return false;
    }
    return true;
}

static void copies_free(b_copies *c)
{
    for (int i = 1; i < c->n; ++i)
        cudaFree(c->p[i]);
    c->n = 0;
}

static void chain_free(row_chain *ch)
{
    copies_free(&ch->b);
    copies_free(&ch->sf);
    copies_free(&ch->peer_b);
}

/* The bytes of B (nvfp4: codes and block scales) that a chain of n GEMMs
 * of s reads; 0 for grouped rows, which are not chained. */
int64_t chain_b_bytes(const shape *s, int n)
{
    bool nvfp4 = s->in == JG_NVFP4;
    int64_t sf = nvfp4 ? jg_nvfp4_sf_bytes(s->sf_layout, s->n, s->k) : 0;
    int64_t b = nvfp4 ? s->n * s->k / 2 : s->n * s->k * (int64_t)dtype_size(s->in);
    return s->g ? 0 : n * (b + (sf > 0 ? sf : 0));
}

/* Under --chain (else nothing to do: true), the copies of o's B, of its
 * b_sf (nvfp4), and of the peer's B where the peer has operands of its own
 * (po: nvfp4 rows' fp8 twin; NULL, or without a B, otherwise); false with
 * r->error set if they cannot be made: N copies of a large B may not fit,
 * which fails the row, not the run. */
static bool chain_init(row_chain *ch, const bench *b, const operands *o, const operands *po,
                       row *r)
{
    int n = b->opt.chain;
    if (!n)
        return true;
    bool ok = copies_make(&ch->b, o->b, o->b_bytes, n) &&
              (!o->sfb || copies_make(&ch->sf, o->sfb, o->sfb_bytes, n)) &&
              (!po || !po->b || copies_make(&ch->peer_b, po->b, po->b_bytes, n)) &&
              /* the timing stream (non-blocking) does not wait for the copies */
              !CUDA_FAILED(cudaDeviceSynchronize());
    if (!ok)
        snprintf(r->error, sizeof r->error, "cannot make the chain's %d copies of B (see above)",
                 n);
    return ok;
}

/* Appends ours without PDL (the plan ch->plain, on ours' arguments) to the
 * n implementations of t and turns each into a chain of its own; returns
 * its place in t. t[0] is ours, t[peer_at] the peer (peer_at 0: none),
 * which rotates through its own B copies or, sharing our operands, ours. */
static int chain_timed(row_chain *ch, ours_job *ours, lt_gemm *g, int peer_at, timed *t, int *n)
{
    const b_copies *sf = ch->sf.n ? &ch->sf : NULL;
    int plain_at = (*n)++;
    ch->plain.args = ours->args;
    t[plain_at] = (timed){ours_launch, &ch->plain};
    for (int j = 0; j < *n; ++j) {
        jg_gemm_args *a = j == plain_at ? &ch->plain.args : &ours->args;
        ch->job[j] = peer_at && j == peer_at
                         ? (chain_job){t[j], &g->b, NULL, ch->peer_b.n ? &ch->peer_b : &ch->b,
                                       NULL}
                         : (chain_job){t[j], &a->b, sf ? &a->b_sf : NULL, &ch->b, sf};
        t[j] = (timed){chain_launch, &ch->job[j]};
    }
    return plain_at;
}

/* Times libjitgemm, and cuBLASLt's best algorithm when `g` has one, in
 * alternation on the same operands; under --chain, each as a chain (ch),
 * with ours without PDL too; with `generic` (--random, never with --chain),
 * ours through an M-generic plan too, and with `plain_family` (--family-ab,
 * never with --chain) through a plan of the plain tiles (b->jg_plain); sets
 * the times or r->error. A type
 * combination that cuBLASLt lacks (no algorithm, e.g. bf16 -> fp16) leaves
 * the peer columns empty. The peer's algorithm is picked on single
 * launches, chain or not. */
void time_row(bench *b, ours_job *job, lt_gemm *g, row_chain *ch, ours_job *generic,
              ours_job *plain_family, row *r)
{
    lt_cand best;
    timed t[MAX_TIMED] = {{ours_launch, job}, {lt_launch, &best}};
    double us[MAX_TIMED];
    /* their places in t; 0: not timed */
    int n = 1, peer_at = 0, plain_at = 0, generic_at = 0, family_at = 0;
    if (g->op && g->nalgo > 0) {
        if (!lt_pick(g, &best)) {
            snprintf(r->error, sizeof r->error, "cuBLASLt failed (see above)");
            return;
        }
        peer_at = n++;
    }
    if (b->opt.chain)
        plain_at = chain_timed(ch, job, g, peer_at, t, &n);
    if (!b->opt.chain && generic) {
        generic_at = n;
        t[n++] = (timed){ours_launch, generic};
    }
    if (!b->opt.chain && plain_family) {
        family_at = n;
        t[n++] = (timed){ours_launch, plain_family};
    }
    /* --random: the pick's launches just ran, so the GPU is not idle and
     * the warm-up needs no time floor (WARMUP rounds still run) */
    double warm_ms = b->warm_ms;
    if (b->opt.random && peer_at)
        b->warm_ms = 0;
    int bad = time_with_peers(b, t, n, b->opt.chain ? b->opt.chain : 1, r, us);
    b->warm_ms = warm_ms;
    if (bad > 0 && bad == plain_at)
        snprintf(r->error, sizeof r->error, "libjitgemm launch without PDL failed: %s",
                 jg_context_last_error(b->jg));
    else if (bad > 0 && bad == generic_at)
        snprintf(r->error, sizeof r->error, "libjitgemm M-generic launch failed: %s",
                 jg_context_last_error(b->jg));
    else if (bad > 0 && bad == family_at)
        snprintf(r->error, sizeof r->error, "libjitgemm plain-tiles launch failed: %s",
                 jg_context_last_error(b->jg_plain));
    else if (bad > 0)
        snprintf(r->error, sizeof r->error, "cuBLASLt algorithm %d failed to launch",
                 best.algo);
    else if (bad < 0) {
        r->ours_plain_us = plain_at ? us[plain_at] : NAN;
        r->generic_us = generic_at ? us[generic_at] : NAN;
        r->plain_family_us = family_at ? us[family_at] : NAN;
        r->peer = peer_at ? g->name : NULL;
        r->peer_other_scales = peer_at && g->other_scales;
        r->peer_us = peer_at ? us[peer_at] : NAN;
        r->peer_algo = peer_at ? best.algo : -1;
        if (b->opt.energy) { /* not with --chain (check_options) */
            r->ours_uj = energy_per_launch(b, &t[0], us[0]);
            r->peer_uj = peer_at ? energy_per_launch(b, &t[peer_at], us[peer_at]) : NAN;
        }
    }
}

/* --workspace: each of the n plans' workspace (jg_plan_workspace_bytes)
 * into its args, all from one buffer grown as plans need it (rows run one
 * at a time; a row's launches in turn on one stream); false, with
 * r->error, if it cannot be had. Plans may be NULL. */
bool ours_workspace(bench *b, int n, const jg_plan *const *plans, jg_gemm_args *const *args, row *r)
{
    size_t need = 0;
    for (int i = 0; i < n; ++i) {
        size_t bytes = 0;
        if (b->opt.workspace && plans[i] && jg_plan_workspace_bytes(plans[i], &bytes) == JG_OK &&
            bytes > need)
            need = bytes;
    }
    if (!need)
        return true;
    if (need > b->jg_ws_bytes) {
        cudaFree(b->jg_ws);
        b->jg_ws = NULL;
        b->jg_ws_bytes = 0;
        if (CUDA_FAILED(cudaMalloc(&b->jg_ws, need))) {
            snprintf(r->error, sizeof r->error, "cannot allocate a workspace of %zu bytes", need);
            return false;
        }
        b->jg_ws_bytes = need;
    }
    for (int i = 0; i < n; ++i) {
        args[i]->workspace = b->jg_ws;
        args[i]->workspace_bytes = b->jg_ws_bytes;
    }
    return true;
}

/* Our arguments over o's operands and scales, into its D. */
jg_gemm_args dense_args(const operands *o)
{
    return (jg_gemm_args){.a = o->a, .b = o->b, .d = o->d_ours, .alpha = 1.0f,
                          .a_scale = o->sa, .b_scale = o->sb};
}

/* Plans, sets up and times one dense or decode shape, then checks it;
 * r->error says why if it could not. */
static void run_dense(bench *b, const shape *s, row *r)
{
    bool peer = b->have_lt && !b->opt.no_peer;
    row_chain ch;
    memset(&ch, 0, sizeof ch);
    ours_job job = {.plan = plan_row(b, s, &ch.plain.plan, r)};
    operands o;
    lt_gemm g;
    memset(&g, 0, sizeof g);
    if (!job.plan)
        return;
    if (!operands_init(&o, s, peer ? 1 : 0, 1)) {
        snprintf(r->error, sizeof r->error, "cannot set up the operands (see above)");
        operands_free(&o);
        return;
    }
    job.args = dense_args(&o);
    if (peer)
        dense_peer_init(&g, b, s, &o);
    const jg_plan *plans[] = {job.plan};
    jg_gemm_args *const args[] = {&job.args};
    if (ours_workspace(b, 1, plans, args, r) && chain_init(&ch, b, &o, NULL, r))
        time_row(b, &job, &g, &ch, NULL, NULL, r);
    check_dense(&o, s, r, b->opt.no_check);
    chain_free(&ch);
    lt_gemm_destroy(&g);
    operands_free(&o);
}

/* ---- one nvfp4 row ----------------------------------------------------- */

/* Quantizes `rows` x K random normal bf16 values (seed) on the GPU with
 * jg_quantize_nvfp4 into codes (device), sf (device, o->sf_layout) and the
 * global scale *g (device), and copies the three back to the host (hcodes,
 * hsf, *hg) for the check. `src`/`hsrc` are scratch of >= rows * K bf16. */
static bool nvfp4_quantize(bench *b, const operands *o, const shape *s, int64_t rows,
                           uint64_t seed, uint16_t *hsrc, void *src, void *codes, void *sf,
                           size_t sf_bytes, float *g, void *hcodes, uint8_t *hsf, float *hg)
{
    size_t n = (size_t)(rows * s->k);
    jg_quant_problem p = {.src_type = JG_BF16, .scale = JG_SCALE_NVFP4, .rows = rows,
                          .cols = s->k, .sf_layout = o->sf_layout};
    jg_quant_args qa = {.src = src, .dst = codes, .scale = g, .sf = sf};
    fill_normal(hsrc, n, JG_BF16, seed);
    if (CUDA_FAILED(cudaMemcpy(src, hsrc, n * 2, cudaMemcpyHostToDevice)) ||
        CUDA_FAILED(cudaDeviceSynchronize())) /* the timing stream does not wait for it */
        return false;
    jg_status st = jg_quantize_nvfp4(b->jg, &p, &qa, (jg_stream)b->stream);
    if (st != JG_OK) {
        fprintf(stderr, "jitgemm-bench: jg_quantize_nvfp4 (%s, %lld x %lld): %s: %s\n", s->name,
                (long long)rows, (long long)s->k, jg_status_name(st),
                jg_context_last_error(b->jg));
        return false;
    }
    return !CUDA_FAILED(cudaStreamSynchronize(b->stream)) &&
           !CUDA_FAILED(cudaMemcpy(hcodes, codes, n / 2, cudaMemcpyDeviceToHost)) &&
           !CUDA_FAILED(cudaMemcpy(hsf, sf, sf_bytes, cudaMemcpyDeviceToHost)) &&
           !CUDA_FAILED(cudaMemcpy(hg, g, sizeof *hg, cudaMemcpyDeviceToHost));
}

/* The operands of an nvfp4 problem: random normal bf16 A [M,K] and B [N,K]
 * (seeds `seed` and seed + 1, as for 16-bit rows), quantized on the GPU by
 * jg_quantize_nvfp4 in s->sf_layout, outside any timing; the bf16 values
 * are freed after. Our D poisoned with NaN. No peer D: the peer, cuBLASLt
 * fp8, runs on operands of its own (run_nvfp4). */
static bool nvfp4_init(operands *o, bench *b, const shape *s, uint64_t seed)
{
    memset(o, 0, sizeof *o);
    o->sf_layout = s->sf_layout;
    int64_t sfa = jg_nvfp4_sf_bytes(s->sf_layout, s->m, s->k);
    int64_t sfb = jg_nvfp4_sf_bytes(s->sf_layout, s->n, s->k);
    if (sfa < 0 || sfb < 0) {
        fprintf(stderr, "jitgemm-bench: %s: no nvfp4 scale layout for K = %lld (a multiple of "
                        "16 is needed)\n", s->name, (long long)s->k);
        return false;
    }
    size_t big = (size_t)((s->m > s->n ? s->m : s->n) * s->k);
    o->a_bytes = (size_t)(s->m * s->k) / 2;
    o->b_bytes = (size_t)(s->n * s->k) / 2;
    o->d_bytes = (size_t)(s->m * s->n) * dtype_size(s->out);
    o->sfa_bytes = (size_t)sfa;
    o->sfb_bytes = (size_t)sfb;
    o->ha = malloc(o->a_bytes);
    o->hb = malloc(o->b_bytes);
    o->hsfa = malloc(o->sfa_bytes);
    o->hsfb = malloc(o->sfb_bytes);
    o->hsa = malloc(sizeof *o->hsa);
    o->hsb = malloc(sizeof *o->hsb);
    uint16_t *hsrc = malloc(big * 2);
    void *src = NULL;
    bool ok = o->ha && o->hb && o->hsfa && o->hsfb && o->hsa && o->hsb && hsrc;
    if (!ok)
        fprintf(stderr, "jitgemm-bench: out of host memory for %s\n", s->name);
    ok = ok && !CUDA_FAILED(cudaMalloc(&src, big * 2)) &&
         !CUDA_FAILED(cudaMalloc(&o->a, o->a_bytes)) &&
         !CUDA_FAILED(cudaMalloc(&o->b, o->b_bytes)) &&
         !CUDA_FAILED(cudaMalloc(&o->sfa, o->sfa_bytes)) &&
         !CUDA_FAILED(cudaMalloc(&o->sfb, o->sfb_bytes)) &&
         !CUDA_FAILED(cudaMalloc((void **)&o->sa, sizeof *o->sa)) &&
         !CUDA_FAILED(cudaMalloc((void **)&o->sb, sizeof *o->sb)) &&
         !CUDA_FAILED(cudaMalloc(&o->d_ours, o->d_bytes)) &&
         !CUDA_FAILED(cudaMemset(o->d_ours, 0xff, o->d_bytes)) &&
         nvfp4_quantize(b, o, s, s->m, seed, hsrc, src, o->a, o->sfa, o->sfa_bytes, o->sa,
                        o->ha, o->hsfa, o->hsa) &&
         nvfp4_quantize(b, o, s, s->n, seed + 1, hsrc, src, o->b, o->sfb, o->sfb_bytes, o->sb,
                        o->hb, o->hsfb, o->hsb);
    free(hsrc);
    cudaFree(src);
    return ok;
}

/* Sets up, plans and times one nvfp4 dense or decode shape against cuBLASLt
 * fp8 (e4m3, tensor scales) on the same M, N, K, then checks it (FP64 rows:
 * the peer computes another product); r->error says why if it could not.
 * The operands come first (unlike run_dense) so that jg_quantize_nvfp4 runs
 * on every row: while the library has no NVFP4 kernel, planning then fails
 * with JG_ERR_UNSUPPORTED and the row is an error row like any other. */
static void run_nvfp4(bench *b, const shape *s, row *r)
{
    bool peer = b->have_lt && !b->opt.no_peer;
    ours_job job = {.plan = NULL};
    /* the peer's problem: an fp8 row of the same shape, inputs and scales as
     * fp8 rows make them (random e4m3 codes, random tensor scales) */
    shape twin = *s;
    twin.in = JG_E4M3;
    twin.scale = JG_SCALE_TENSOR;
    twin.sf_layout = JG_SF_LAYOUT_NONE;
    operands o, po;
    lt_gemm g;
    row_chain ch;
    memset(&g, 0, sizeof g);
    memset(&o, 0, sizeof o);
    memset(&po, 0, sizeof po);
    memset(&ch, 0, sizeof ch);
    if (!nvfp4_init(&o, b, s, 1) || (peer && !operands_init(&po, &twin, 1, 1)))
        snprintf(r->error, sizeof r->error, "cannot set up the operands (see above)");
    else
        job.plan = plan_row(b, s, &ch.plain.plan, r);
    if (!job.plan) {
        operands_free(&o);
        operands_free(&po);
        return;
    }
    job.args = (jg_gemm_args){.a = o.a, .b = o.b, .d = o.d_ours, .alpha = 1.0f,
                              .a_scale = o.sa, .b_scale = o.sb, .a_sf = o.sfa, .b_sf = o.sfb};
    if (peer)
        dense_peer_init(&g, b, &twin, &po);
    if (chain_init(&ch, b, &o, &po, r))
        time_row(b, &job, &g, &ch, NULL, NULL, r);
    void *ours = r->error[0] ? NULL : malloc(o.d_bytes);
    if (ours && !CUDA_FAILED(cudaMemcpy(ours, o.d_ours, o.d_bytes, cudaMemcpyDeviceToHost)))
        set_check(r, check_nvfp4_rows(&o, s, ours), false);
    else if (!r->error[0])
        snprintf(r->error, sizeof r->error, "cannot read the outputs back");
    free(ours);
    chain_free(&ch);
    lt_gemm_destroy(&g);
    operands_free(&o);
    operands_free(&po);
}

/* A row of s not yet run: every time and difference unknown (NAN). */
void row_init(const bench *b, const shape *s, row *r)
{
    *r = (row){.s = s, .ours_us = NAN, .peer_us = NAN, .ours_uj = NAN, .peer_uj = NAN,
               .ours_plain_us = NAN, .lt_loop_us = NAN,
               .grouped_us = NAN, .grouped_diff = NAN, .peer_algo = -1, .rel_diff = NAN,
               .chain_b_bytes = chain_b_bytes(s, b->opt.chain), .generic_us = NAN,
               .generic_rel_diff = NAN, .plain_family_us = NAN, .plain_family_rel_diff = NAN};
}

/* One row of the table, whatever the kind. */
void run_shape(bench *b, const shape *s, row *r)
{
    row_init(b, s, r);
    if (s->g)
        run_grouped(b, s, r);
    else if (s->in == JG_NVFP4)
        run_nvfp4(b, s, r);
    else
        run_dense(b, s, r);
}
