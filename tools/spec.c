/* The shape-spec parser (spec.h): jansson reads the JSON, this file checks
 * the fields, so every tool reports the same error for the same line. It
 * faces files written by hand and a fuzzer: every path bounds its writes and
 * frees what it took. */
#include "spec.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#define SPEC_DIM_MAX 2147483647LL /* the library's limit for m, n and k */
#define DIM_RULE "expected an integer in [1, 2^31-1]"

typedef struct spec_word {
    const char *name;
    int value;
} spec_word;

static const spec_word kinds[] = {
    {"dense", SPEC_DENSE}, {"decode", SPEC_DECODE}, {"grouped", SPEC_GROUPED}};
static const spec_word layouts[] = {
    {"list", SPEC_LAYOUT_LIST}, {"contiguous", SPEC_LAYOUT_CONTIGUOUS}, {"masked", SPEC_LAYOUT_MASKED}};
static const spec_word dtypes[] = {{"bf16", SPEC_BF16},   {"fp16", SPEC_FP16},
                                   {"fp8", SPEC_FP8},     {"nvfp4", SPEC_NVFP4},
                                   {"fp32", SPEC_FP32},   {"fp32-exact", SPEC_FP32_EXACT}};
static const spec_word a_majors[] = {{"k", 0}, {"m", 1}};
static const spec_word b_majors[] = {{"k", 0}, {"n", 1}};
static const spec_word scales[] = {
    {"tensor", SPEC_SCALE_TENSOR}, {"row", SPEC_SCALE_ROW}, {"block", SPEC_SCALE_BLOCK}};
static const spec_word sfs[] = {{"128x4", SPEC_SF_128X4}, {"row", SPEC_SF_ROW}};

#define WORDS(a) (a), sizeof(a) / sizeof((a)[0])

static const char *word_name(const spec_word *w, size_t n, int value)
{
    for (size_t i = 0; i < n; ++i)
        if (w[i].value == value)
            return w[i].name;
    return "";
}

const char *spec_kind_name(enum spec_kind k) { return word_name(WORDS(kinds), (int)k); }
const char *spec_layout_name(enum spec_layout l) { return word_name(WORDS(layouts), (int)l); }
const char *spec_dtype_name(enum spec_dtype d) { return word_name(WORDS(dtypes), (int)d); }
const char *spec_scale_name(enum spec_scale s) { return word_name(WORDS(scales), (int)s); }
const char *spec_sf_name(enum spec_sf s) { return word_name(WORDS(sfs), (int)s); }

void spec_free(struct spec *s)
{
    if (!s)
        return;
    free(s->m);
    free(s->n);
    free(s->k);
    memset(s, 0, sizeof *s);
}

/* Where errors go: the line number and the caller's buffer. */
typedef struct spec_errs {
    int line;
    char *buf;
    size_t len;
} spec_errs;

/* Writes "line N: field 'X': why" and returns -1, for `return fail(...)`. */
static int fail(const spec_errs *e, const char *field, const char *fmt, ...)
{
    if (!e->buf || !e->len)
        return -1;
    int n = snprintf(e->buf, e->len, "line %d: field '%s': ", e->line, field);
    if (n >= 0 && (size_t)n < e->len) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(e->buf + n, e->len - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* ---- scalar fields ------------------------------------------------------ */

/* An optional integer field in [lo, hi]; *found says whether it was there. */
static int int_field(const spec_errs *e, json_t *obj, const char *key, int64_t lo, int64_t hi,
                     const char *rule, int64_t *out, bool *found)
{
    json_t *v = json_object_get(obj, key);
    *found = v != NULL;
    if (!v)
        return 0;
    if (!json_is_integer(v) || json_integer_value(v) < lo || json_integer_value(v) > hi)
        return fail(e, key, "%s", rule);
    *out = json_integer_value(v);
    return 0;
}

/* An optional string field that must be one of `words`. */
static int word_field(const spec_errs *e, json_t *obj, const char *key, const spec_word *words,
                      size_t n, int *out, bool *found)
{
    json_t *v = json_object_get(obj, key);
    *found = v != NULL;
    if (!v)
        return 0;
    char list[128] = "";
    for (size_t i = 0; i < n; ++i)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                 words[i].name);
    const char *s = json_string_value(v);
    if (!s)
        return fail(e, key, "expected a string: one of %s", list);
    for (size_t i = 0; i < n; ++i)
        if (!strcmp(s, words[i].name)) {
            *out = words[i].value;
            return 0;
        }
    return fail(e, key, "'%.40s%s' is not one of %s", s, strlen(s) > 40 ? "..." : "", list);
}

static int name_field(const spec_errs *e, json_t *obj, struct spec *out)
{
    json_t *v = json_object_get(obj, "name");
    if (!v) {
        snprintf(out->name, sizeof out->name, "line%d", e->line);
        return 0;
    }
    const char *s = json_string_value(v);
    if (!s || !*s || strlen(s) >= sizeof out->name)
        return fail(e, "name", "expected a string of 1 to %d characters", SPEC_NAME_MAX - 1);
    memcpy(out->name, s, strlen(s) + 1);
    return 0;
}

/* ---- m, n, k ------------------------------------------------------------ */

/* One dimension field as given: a scalar or a list, values checked. */
typedef struct spec_dims {
    int64_t *v;
    size_t count;
    bool is_list;
} spec_dims;

/* A list of m (a group's rows) may hold 0: that group is empty. */
static int dim_value(const spec_errs *e, const char *key, json_t *v, size_t index, bool is_list,
                     int64_t *out)
{
    const int64_t min = is_list && !strcmp(key, "m") ? 0 : 1;
    if (!json_is_integer(v) || json_integer_value(v) < min ||
        json_integer_value(v) > SPEC_DIM_MAX) {
        if (is_list)
            return fail(e, key, "element [%zu]: %s", index,
                        min ? DIM_RULE : "expected an integer in [0, 2^31-1]");
        return fail(e, key, DIM_RULE " or a list of them");
    }
    *out = json_integer_value(v);
    return 0;
}

static int dims_field(const spec_errs *e, json_t *obj, const char *key, spec_dims *d)
{
    json_t *v = json_object_get(obj, key);
    if (!v)
        return fail(e, key, "missing");
    d->is_list = json_is_array(v);
    d->count = d->is_list ? json_array_size(v) : 1;
    if (d->is_list && d->count == 0)
        return fail(e, key, "empty list");
    if (d->count > SPEC_G_MAX)
        return fail(e, key, "a list of %zu values: more than %d groups", d->count, SPEC_G_MAX);
    d->v = calloc(d->count, sizeof *d->v);
    if (!d->v)
        return fail(e, key, "out of memory");
    for (size_t i = 0; i < d->count; ++i)
        if (dim_value(e, key, d->is_list ? json_array_get(v, i) : v, i, d->is_list, &d->v[i]))
            return -1;
    return 0;
}

/* Every list has g values; dense and decode lines have one group. */
static int check_groups(const spec_errs *e, const struct spec *s, const spec_dims d[3],
                        bool g_given)
{
    static const char *keys[3] = {"m", "n", "k"};
    for (int i = 0; i < 3; ++i) {
        if (s->kind != SPEC_GROUPED && d[i].count != 1)
            return fail(e, keys[i], "kind %s takes one integer, not a list of %zu",
                        spec_kind_name(s->kind), d[i].count);
        if (s->kind == SPEC_GROUPED && !d[i].is_list)
            return fail(e, keys[i], "kind grouped takes a list of g integers");
        if (d[i].count != (size_t)s->g) {
            const char *plural = d[i].count == 1 ? "" : "s";
            if (g_given)
                return fail(e, keys[i], "a list of %zu value%s, but g is %d", d[i].count, plural,
                            s->g);
            return fail(e, keys[i], "a list of %zu value%s, but 'm' has %d", d[i].count, plural,
                        s->g);
        }
    }
    return 0;
}

/* ---- the line ----------------------------------------------------------- */

/* kind, g and the dimension lists, which decide one another's defaults. */
static int parse_shape(const spec_errs *e, json_t *obj, struct spec *s)
{
    spec_dims d[3] = {{0}};
    int64_t g = 1;
    bool g_given, kind_given;
    int kind = SPEC_DENSE, rc = -1;
    if (!word_field(e, obj, "kind", WORDS(kinds), &kind, &kind_given) &&
        !int_field(e, obj, "g", 1, SPEC_G_MAX, "expected an integer in [1, 65536]", &g,
                   &g_given) &&
        !dims_field(e, obj, "m", &d[0]) && !dims_field(e, obj, "n", &d[1]) &&
        !dims_field(e, obj, "k", &d[2])) {
        bool lists = d[0].is_list && d[1].is_list && d[2].is_list;
        s->kind = kind_given ? (enum spec_kind)kind : lists || g_given ? SPEC_GROUPED : SPEC_DENSE;
        s->g = g_given ? (int)g : (int)d[0].count;
        if (s->kind != SPEC_GROUPED && g_given && g != 1)
            rc = fail(e, "g", "kind %s has one group, not %d", spec_kind_name(s->kind), (int)g);
        else
            rc = check_groups(e, s, d, g_given);
    }
    s->m = d[0].v;
    s->n = d[1].v;
    s->k = d[2].v;
    return rc;
}

/* An optional boolean field; *out keeps its value when absent. */
static int bool_field(const spec_errs *e, json_t *obj, const char *key, bool *out, bool *found)
{
    json_t *v = json_object_get(obj, key);
    *found = v != NULL;
    if (!v)
        return 0;
    if (!json_is_boolean(v))
        return fail(e, key, "expected true or false");
    *out = json_is_true(v);
    return 0;
}

/* workspace: grouped lines only, a JSON boolean. */
static int parse_workspace(const spec_errs *e, json_t *obj, struct spec *s)
{
    bool found;
    if (bool_field(e, obj, "workspace", &s->workspace, &found))
        return -1;
    if (found && s->kind != SPEC_GROUPED)
        return fail(e, "workspace", "only for kind grouped");
    return 0;
}

/* a_major, b_major (16-bit types; A's dense only), lda, ldb, ldd (dense
 * and decode only), unaligned. */
static int parse_forms(const spec_errs *e, json_t *obj, struct spec *s)
{
    int a = 0, b = 0;
    bool a_found, b_found, found;
    if (word_field(e, obj, "a_major", WORDS(a_majors), &a, &a_found) ||
        word_field(e, obj, "b_major", WORDS(b_majors), &b, &b_found))
        return -1;
    const bool bits16 = s->dtype == SPEC_BF16 || s->dtype == SPEC_FP16;
    if ((a || b) && !bits16)
        return fail(e, a ? "a_major" : "b_major",
                    "MN-major operands only for dtype bf16 or fp16, not %s (Hopper's wgmma "
                    "reads the others K-major)",
                    spec_dtype_name(s->dtype));
    if (a && s->kind == SPEC_GROUPED)
        return fail(e, "a_major", "only for kind dense or decode");
    s->a_mn = a;
    s->b_mn = b;
    static const char *const lds[3] = {"lda", "ldb", "ldd"};
    int64_t *out[3] = {&s->lda, &s->ldb, &s->ldd};
    for (int i = 0; i < 3; ++i) {
        if (int_field(e, obj, lds[i], 1, (INT64_C(1) << 40) - 1,
                      "expected an integer in [1, 2^40-1]", out[i], &found))
            return -1;
        if (found && s->kind == SPEC_GROUPED)
            return fail(e, lds[i], "only for kind dense or decode");
    }
    if (s->dtype == SPEC_FP32_EXACT && s->kind == SPEC_GROUPED)
        return fail(e, "dtype", "fp32-exact only for kind dense or decode");
    return bool_field(e, obj, "unaligned", &s->unaligned, &found);
}

/* generic_hint_m: dense lines only, an M in [1, 2^31-1] or null (none); the
 * hint an M-generic plan of the line's N and K is made for
 * (jitgemm-bench --random --emit-shapes writes it). */
static int parse_generic_hint(const spec_errs *e, json_t *obj, struct spec *s)
{
    json_t *v = json_object_get(obj, "generic_hint_m");
    if (!v || json_is_null(v))
        return 0;
    bool found;
    if (int_field(e, obj, "generic_hint_m", 1, SPEC_DIM_MAX, DIM_RULE " or null",
                  &s->generic_hint_m, &found))
        return -1;
    if (s->kind != SPEC_DENSE)
        return fail(e, "generic_hint_m", "only for kind dense");
    return 0;
}

/* layout and m_max: grouped lines only, m_max for masked ones. */
static int parse_layout(const spec_errs *e, json_t *obj, struct spec *s)
{
    int layout = SPEC_LAYOUT_LIST;
    bool found, max_found;
    if (word_field(e, obj, "layout", WORDS(layouts), &layout, &found))
        return -1;
    if (found && s->kind != SPEC_GROUPED)
        return fail(e, "layout", "only for kind grouped");
    s->layout = s->kind == SPEC_GROUPED ? (enum spec_layout)layout : SPEC_LAYOUT_NONE;
    if (int_field(e, obj, "m_max", 1, SPEC_DIM_MAX, DIM_RULE, &s->m_max, &max_found))
        return -1;
    if (max_found && s->layout != SPEC_LAYOUT_MASKED)
        return fail(e, "m_max", "only for layout masked");
    if (s->layout != SPEC_LAYOUT_MASKED)
        return 0;
    for (int i = 0; i < s->g; ++i) {
        if (!max_found && s->m[i] > s->m_max)
            s->m_max = s->m[i];
        if (s->m[i] > s->m_max)
            return fail(e, "m", "element [%d] is %lld, more than m_max %lld", i,
                        (long long)s->m[i], (long long)s->m_max);
    }
    return 0;
}

/* dtype, scale and seed. */
static int parse_types(const spec_errs *e, json_t *obj, struct spec *s)
{
    int dtype = SPEC_BF16, scale = SPEC_SCALE_NONE;
    bool found;
    if (word_field(e, obj, "dtype", WORDS(dtypes), &dtype, &found) ||
        word_field(e, obj, "scale", WORDS(scales), &scale, &found))
        return -1;
    s->dtype = (enum spec_dtype)dtype;
    bool scaled = s->dtype == SPEC_FP8 || s->dtype == SPEC_NVFP4;
    if (found && !scaled)
        return fail(e, "scale", "only for dtype fp8 or nvfp4, not %s", spec_dtype_name(s->dtype));
    if (!found && scaled)
        scale = s->dtype == SPEC_FP8 ? SPEC_SCALE_TENSOR : SPEC_SCALE_BLOCK;
    s->scale = (enum spec_scale)scale;
    int sf = SPEC_SF_128X4;
    if (word_field(e, obj, "sf", WORDS(sfs), &sf, &found))
        return -1;
    if (found && s->dtype != SPEC_NVFP4)
        return fail(e, "sf", "only for dtype nvfp4, not %s", spec_dtype_name(s->dtype));
    s->sf = s->dtype == SPEC_NVFP4 ? (enum spec_sf)sf : SPEC_SF_NONE;
    return int_field(e, obj, "seed", 0, INT64_MAX, "expected an integer >= 0", &s->seed,
                     &s->has_seed);
}

static bool blank_or_comment(const char *text, size_t len)
{
    size_t i = 0;
    while (i < len && strchr(" \t\r\n\f\v", text[i]) && text[i])
        ++i;
    return i == len || text[i] == '#';
}

static const char *json_type_name(const json_t *v)
{
    return json_is_array(v) ? "an array" : json_is_string(v) ? "a string"
           : json_is_number(v) ? "a number" : json_is_boolean(v) ? "a boolean" : "null";
}

int spec_parse_line(const char *text, size_t len, int line, struct spec *out, char *err,
                    size_t err_len)
{
    spec_errs e = {line, err, err_len};
    if (err && err_len)
        err[0] = 0;
    if (!out)
        return -1;
    memset(out, 0, sizeof *out);
    out->line = line;
    if (!text || blank_or_comment(text, len))
        return 1;
    json_error_t jerr;
    json_t *obj = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY, &jerr);
    int rc = -1;
    if (!obj) {
        if (err && err_len)
            snprintf(err, err_len, "line %d, column %d: invalid JSON: %s", line, jerr.column,
                     jerr.text);
    } else if (!json_is_object(obj)) {
        if (err && err_len)
            snprintf(err, err_len, "line %d: expected a JSON object, not %s", line,
                     json_type_name(obj));
    } else if (!name_field(&e, obj, out) && !parse_shape(&e, obj, out) &&
               !parse_layout(&e, obj, out) && !parse_types(&e, obj, out) &&
               !parse_workspace(&e, obj, out) && !parse_forms(&e, obj, out) &&
               !parse_generic_hint(&e, obj, out)) {
        rc = 0;
    }
    json_decref(obj);
    if (rc) {
        spec_free(out);
        out->line = line;
    }
    return rc;
}
