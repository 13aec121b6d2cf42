/* The random problems of jitgemm-bench --random: random_draw.h. */
#include "random_draw.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "jg_test.h" /* jg_splitmix64 */

static int cmp_int64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void random_dims_free(random_dims *d)
{
    free(d->v);
    d->v = NULL;
    d->n = 0;
}

/* The widths of one model into d (room for them all); -1 with err set on a
 * bad value. */
static int add_model(const char *file, const char *model, json_t *widths, random_dims *d,
                     char *err, size_t err_len)
{
    const char *what;
    json_t *v;
    if (!json_is_object(widths)) {
        snprintf(err, err_len, "%s: models.%s: expected an object of widths", file, model);
        return -1;
    }
    json_object_foreach(widths, what, v) {
        json_int_t w = json_is_integer(v) ? json_integer_value(v) : 0;
        if (w < 1) {
            snprintf(err, err_len, "%s: models.%s.%s: expected a positive integer", file, model,
                     what);
            return -1;
        }
        if (w < RANDOM_DIM_MIN || w > RANDOM_DIM_MAX)
            continue;
        if (w % RANDOM_DIM_STEP) {
            snprintf(err, err_len, "%s: models.%s.%s = %lld: not a multiple of %d", file, model,
                     what, (long long)w, RANDOM_DIM_STEP);
            return -1;
        }
        d->v[d->n++] = w;
    }
    return 0;
}

int random_dims_load(const char *file, random_dims *out, char *err, size_t err_len)
{
    json_error_t je;
    json_t *root = json_load_file(file, 0, &je), *models = json_object_get(root, "models");
    const char *model;
    json_t *widths;
    size_t cap = 0;
    int rc = 0;
    memset(out, 0, sizeof *out);
    if (!root) {
        snprintf(err, err_len, "%s: %s", file, je.text);
        return -1;
    }
    json_object_foreach(models, model, widths)
        cap += json_is_object(widths) ? json_object_size(widths) : 0;
    out->v = malloc((cap ? cap : 1) * sizeof *out->v);
    if (!json_is_object(models)) {
        snprintf(err, err_len, "%s: expected an object \"models\"", file);
        rc = -1;
    } else if (!out->v) {
        snprintf(err, err_len, "%s: out of memory", file);
        rc = -1;
    }
    json_object_foreach(models, model, widths) {
        if (rc == 0)
            rc = add_model(file, model, widths, out, err, err_len);
    }
    json_decref(root);
    if (rc == 0 && out->n == 0) {
        snprintf(err, err_len, "%s: no width in %d..%d", file, RANDOM_DIM_MIN, RANDOM_DIM_MAX);
        rc = -1;
    }
    if (rc) {
        random_dims_free(out);
        return -1;
    }
    qsort(out->v, (size_t)out->n, sizeof *out->v, cmp_int64);
    int n = 0; /* distinct values */
    for (int i = 0; i < out->n; ++i)
        if (i == 0 || out->v[i] != out->v[n - 1])
            out->v[n++] = out->v[i];
    out->n = n;
    return 0;
}

static double uniform(uint64_t *state) { return (jg_splitmix64(state) >> 11) * 0x1.0p-53; }

/* N or K: a model dimension, or a multiple of 16 in range. */
static int64_t draw_dim(uint64_t *state, const random_dims *dims)
{
    const uint64_t steps = (RANDOM_DIM_MAX - RANDOM_DIM_MIN) / RANDOM_DIM_STEP + 1;
    bool from_list = uniform(state) < RANDOM_FROM_LIST;
    uint64_t x = jg_splitmix64(state);
    return from_list ? dims->v[x % (uint64_t)dims->n]
                     : RANDOM_DIM_MIN + RANDOM_DIM_STEP * (int64_t)(x % steps);
}

void random_draw(uint64_t seed, const random_dims *dims, int count, double generic_fraction,
                 bool half, random_problem *out)
{
    uint64_t state = seed;
    for (int i = 0; i < count; ++i) {
        random_problem *p = &out[i];
        do {
            /* pow, not exp(u * log(16385)): one libm call, the same in C
             * and Python (math.pow), so both draw the same M */
            double m = floor(pow(RANDOM_M_MAX + 1.0, uniform(&state)));
            p->m = m < 1 ? 1 : m > RANDOM_M_MAX ? RANDOM_M_MAX : (int64_t)m;
            p->n = draw_dim(&state, dims);
            p->k = draw_dim(&state, dims);
        } while (p->m * p->k + p->n * p->k + p->m * p->n > RANDOM_MAX_ELEMENTS);
        const bool generic = uniform(&state) < generic_fraction;
        p->generic_hint = !generic ? 0
                          : half   ? random_bucket_hint_half(p->m)
                                   : random_bucket_hint(p->m);
    }
}

int64_t random_bucket_hint(int64_t m)
{
    int64_t h = 1;
    while (h < m)
        h *= 2;
    return h;
}

const char *random_buckets_text(bool half)
{
    return half ? "a power of two or 1.5 times one" : "a power of two";
}

int64_t random_bucket_hint_half(int64_t m)
{
    const int64_t h = random_bucket_hint(m);
    return h >= 4 && h / 4 * 3 >= m ? h / 4 * 3 : h;
}

uint64_t random_fresh_seed(void)
{
    uint32_t s = 0;
    FILE *f = fopen("/dev/urandom", "rb");
    bool got = f && fread(&s, sizeof s, 1, f) == 1;
    if (f)
        fclose(f);
    if (!got) {
        struct timespec t;
        clock_gettime(CLOCK_REALTIME, &t);
        s = (uint32_t)(t.tv_nsec ^ t.tv_sec * 2654435761u ^ (uint64_t)getpid() << 16);
    }
    return s;
}

bool random_parse_seed(const char *s, uint64_t *out)
{
    char *end;
    if (!*s || strspn(s, "0123456789") != strlen(s))
        return false;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > (unsigned long long)RANDOM_SEED_MAX)
        return false;
    *out = v;
    return true;
}

double quantile_sorted(const double *v, int n, double q)
{
    double at = (n - 1) * q;
    int lo = (int)floor(at);
    if (lo >= n - 1)
        return v[n - 1];
    return v[lo] + (at - lo) * (v[lo + 1] - v[lo]);
}

ratio_stats ratio_stats_of(const double *ratios, int n)
{
    ratio_stats st = {.count = n, .geomean = NAN, .p10 = NAN, .min = NAN};
    double *v = malloc((size_t)n * sizeof *v), logs = 0;
    if (!v || n < 1) {
        free(v);
        return st;
    }
    for (int i = 0; i < n; ++i) {
        v[i] = ratios[i];
        logs += log(ratios[i]);
    }
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    st.geomean = exp(logs / n);
    st.p10 = quantile_sorted(v, n, 0.1);
    st.min = v[0];
    free(v);
    return st;
}
