/* jitgemm-bench's correctness guard: our D against a peer's on the whole
 * output, or sampled rows against FP64 on the host (nvfp4 rows: over the
 * dequantized inputs). */
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "bench.h"
#include "jg_nvfp4_ref.h" /* e2m1/e4m3 values and code access: the nvfp4 check */

/* Max |x - ref| over the whole output, relative to max |ref|; a NaN or an
 * infinity (an overflow, which would otherwise cancel out) in either counts
 * as an infinite difference. */
static double rel_diff(const void *x, const void *ref, size_t n, jg_dtype t)
{
    double err = 0, scale = 0;
    for (size_t i = 0; i < n; ++i) {
        double u = load_elem(x, i, t), v = load_elem(ref, i, t);
        err = !isfinite(u) || !isfinite(v) ? INFINITY : fmax(err, fabs(u - v));
        if (isinf(err))
            break;
        scale = fmax(scale, fabs(v));
    }
    return err / (scale > 0 ? scale : 1);
}

/* The product of our scales applying to D[i][j] in 128-wide K block kb:
 * 1 without scales. */
static double scale_at(const operands *o, int64_t i, int64_t j, int64_t kb)
{
    switch (o->scale) {
    case JG_SCALE_TENSOR:
        return (double)o->hsa[0] * o->hsb[0];
    case JG_SCALE_ROW:
        return (double)o->hsa[i] * o->hsb[j];
    case JG_SCALE_BLOCK:
        return (double)o->hsa[i * o->kb + kb] * o->hsb[j / 128 * o->kb + kb];
    default:
        return 1.0;
    }
}

/* Without a peer result: rows 0, M/2 and M-1 of our D against FP64 on the
 * host (the whole output would take minutes for the large shapes), e4m3
 * with the scales applied per 128 of K. Threads take slices of the
 * columns: one thread took seconds a row of 28672x22528 (the FP8
 * block-scale rows, which cuBLASLt often does not compute, spent most of
 * a --random run here). */
typedef struct sampled_slice {
    const operands *o;
    const shape *s;
    const void *d;
    int64_t j0, j1;
    double err, scale;
} sampled_slice;

static void *check_slice(void *arg)
{
    sampled_slice *t = arg;
    const operands *o = t->o;
    const shape *s = t->s;
    const int64_t rows[3] = {0, s->m / 2, s->m - 1};
    for (int r = 0; r < 3; ++r) {
        if (r > 0 && rows[r] == rows[r - 1])
            continue; /* M = 1 or 2 */
        for (int64_t j = t->j0; j < t->j1; ++j) {
            double ref = 0;
            for (int64_t q0 = 0; q0 < s->k; q0 += 128) {
                double part = 0;
                for (int64_t q = q0; q < q0 + 128 && q < s->k; ++q)
                    part += load_elem(o->ha, (size_t)(rows[r] * s->k + q), s->in) *
                            load_elem(o->hb, (size_t)(j * s->k + q), s->in);
                ref += part * scale_at(o, rows[r], j, q0 / 128);
            }
            double got = load_elem(t->d, (size_t)(rows[r] * s->n + j), s->out);
            t->err = !isfinite(got) ? INFINITY : fmax(t->err, fabs(got - ref));
            t->scale = fmax(t->scale, fabs(ref));
        }
    }
    return NULL;
}

double sampled_rows_diff(const operands *o, const shape *s, const void *d)
{
    enum { MAX_THREADS = 32 };
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    int64_t threads = cpus < 1 ? 1 : cpus > MAX_THREADS ? MAX_THREADS : cpus;
    if (threads > s->n)
        threads = s->n;
    sampled_slice slices[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    bool started[MAX_THREADS] = {false};
    for (int64_t i = 0; i < threads; ++i) {
        slices[i] = (sampled_slice){o, s, d, s->n * i / threads, s->n * (i + 1) / threads, 0, 0};
        /* slice 0 runs here, and so does one whose thread did not start */
        started[i] = i > 0 && pthread_create(&ids[i], NULL, check_slice, &slices[i]) == 0;
    }
    double err = 0, scale = 0;
    for (int64_t i = 0; i < threads; ++i) {
        if (started[i])
            pthread_join(ids[i], NULL);
        else
            check_slice(&slices[i]);
        err = fmax(err, slices[i].err);
        scale = fmax(scale, slices[i].scale);
    }
    return err / (scale > 0 ? scale : 1);
}

/* Downloads two device outputs x and ref of `bytes` each (type t) and puts
 * their relative difference in *diff; false if they cannot be read back. */
bool diff_device(const void *x, const void *ref, size_t bytes, jg_dtype t, double *diff)
{
    void *hx = malloc(bytes), *hr = malloc(bytes);
    bool ok = hx && hr && !CUDA_FAILED(cudaMemcpy(hx, x, bytes, cudaMemcpyDeviceToHost)) &&
              !CUDA_FAILED(cudaMemcpy(hr, ref, bytes, cudaMemcpyDeviceToHost));
    if (ok)
        *diff = rel_diff(hx, hr, bytes / dtype_size(t), t);
    free(hx);
    free(hr);
    return ok;
}

/* Puts the relative difference of our D of one problem from the first
 * peer's (with has_peer) or, without, that of sampled rows against FP64 in
 * *diff; false if the outputs cannot be read back. */
bool check_output(const operands *o, const shape *s, bool has_peer, double *diff)
{
    if (has_peer)
        return diff_device(o->d_ours, o->d_peer, o->d_bytes, s->out, diff);
    void *ours = malloc(o->d_bytes);
    bool ok = ours &&
              !CUDA_FAILED(cudaMemcpy(ours, o->d_ours, o->d_bytes, cudaMemcpyDeviceToHost));
    if (ok)
        *diff = sampled_rows_diff(o, s, ours);
    free(ours);
    return ok;
}

/* Sets the check columns of a row from its largest difference, taken
 * against a cuBLAS(Lt) output (vs_peer) or FP64 rows. */
void set_check(row *r, double diff, bool vs_peer)
{
    r->rel_diff = diff;
    r->mismatch = !(diff <= MISMATCH_TOL);
    r->check = vs_peer ? "cublas" : "fp64_rows";
}

/* Whether a dense or decode row's D can be checked against cuBLASLt's: it
 * ran and computed the same product (not the tensor-scaled stand-in). */
bool dense_vs_peer(const row *r) { return isfinite(r->peer_us) && !r->peer_other_scales; }

/* Checks our D of a dense or decode row (o->d_ours) against cuBLASLt's
 * where it computed the same product, else FP64 rows: sets the check
 * columns, or r->error when the outputs cannot be read back. Nothing after
 * an error; only the check column's "none" with `skip` (--no-check). */
void check_dense(const operands *o, const shape *s, row *r, bool skip)
{
    if (skip) {
        r->check = "none";
        return;
    }
    bool vs_peer = dense_vs_peer(r);
    double diff;
    if (!r->error[0] && check_output(o, s, vs_peer, &diff))
        set_check(r, diff, vs_peer);
    else if (!r->error[0])
        snprintf(r->error, sizeof r->error, "cannot read the outputs back");
}

/* Rows 0, M/2 and M-1 of our D against FP64 over the dequantized inputs,
 * the ones our kernel read (host copies of the codes, block scales and
 * global scales): sum over K of e2m1 * e4m3 * e2m1 * e4m3, times both
 * global scales. Every such product is exact in BF16 and our kernel
 * accumulates in FP32, so, as for fp8 rows, the two differ only by the
 * summation order and D's final rounding (bf16: 2^-9 of the largest
 * output): the 2e-2 tolerance is as loose here as there. A check against
 * the bf16 product before quantization could not be as tight: e2m1 keeps
 * 1 mantissa bit, so each input is off by up to ~1/6 of its block's
 * largest and D by ~10% of its typical size. */
double check_nvfp4_rows(const operands *o, const shape *s, const void *d)
{
    double e2m1[16];
    for (unsigned c = 0; c < 16; ++c)
        e2m1[c] = jg_e2m1_value(c);
    int64_t rows[3] = {0, s->m / 2, s->m - 1}, kbs = s->k / 16;
    double g = (double)o->hsa[0] * o->hsb[0], err = 0, scale = 0;
    double *arow = malloc((size_t)s->k * sizeof *arow);
    if (!arow)
        return INFINITY;
    for (int r = 0; r < 3; ++r) {
        if (r > 0 && rows[r] == rows[r - 1])
            continue; /* M = 1 or 2 */
        for (int64_t q = 0; q < s->k; ++q) /* A's row, block scales applied */
            arow[q] = e2m1[jg_nvfp4_code(o->ha, s->k, rows[r], q)] *
                      jg_e4m3_value(o->hsfa[jg_nvfp4_sf_offset(o->sf_layout, s->m, s->k,
                                                               rows[r], q / 16)]);
        for (int64_t j = 0; j < s->n; ++j) {
            const uint8_t *bj = (const uint8_t *)o->hb + j * (s->k / 2);
            double ref = 0;
            for (int64_t kb = 0; kb < kbs; ++kb) {
                double part = 0;
                for (int64_t q = 16 * kb; q < 16 * kb + 16; q += 2)
                    part += arow[q] * e2m1[bj[q / 2] & 15] + arow[q + 1] * e2m1[bj[q / 2] >> 4];
                ref += part * jg_e4m3_value(
                                  o->hsfb[jg_nvfp4_sf_offset(o->sf_layout, s->n, s->k, j, kb)]);
            }
            ref *= g;
            double got = load_elem(d, (size_t)(rows[r] * s->n + j), s->out);
            err = !isfinite(got) ? INFINITY : fmax(err, fabs(got - ref));
            scale = fmax(scale, fabs(ref));
        }
    }
    free(arow);
    return err / (scale > 0 ? scale : 1);
}
