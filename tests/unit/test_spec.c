/* The shape-spec parser of the tools (tools/spec.c): every line of the
 * benchmark file and the seeds' own format parse to the right fields; each
 * malformed line is refused with its line number and the field at fault;
 * and mutated lines never crash it (the libFuzzer target goes further).
 *
 *   test_spec [bench/shapes.jsonl] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jg_test.h"
#include "spec.h"

static int parse(const char *text, int line, struct spec *s, char *err, size_t err_len)
{
    return spec_parse_line(text, strlen(text), line, s, err, err_len);
}

/* ---- good lines --------------------------------------------------------- */

static void test_dense(void)
{
    struct spec s;
    char err[256];
    int rc = parse("{\"name\": \"square4096\", \"kind\": \"dense\", \"m\": 4096, \"n\": 4096, "
                   "\"k\": 4096}\n", 1, &s, err, sizeof err);
    CHECK(rc == 0, "dense line: rc %d (%s)", rc, err);
    CHECK(!strcmp(s.name, "square4096"), "name %s", s.name);
    CHECK(s.kind == SPEC_DENSE && s.g == 1 && s.layout == SPEC_LAYOUT_NONE, "kind %d g %d",
          (int)s.kind, s.g);
    CHECK(s.m[0] == 4096 && s.n[0] == 4096 && s.k[0] == 4096, "dims");
    CHECK(s.dtype == SPEC_BF16 && s.scale == SPEC_SCALE_NONE && !s.has_seed, "defaults");
    CHECK(s.line == 1, "line %d", s.line);
    spec_free(&s);

    rc = parse("{\"name\": \"decode_m1_7168x16384\", \"kind\": \"decode\", \"m\": 1, \"n\": 7168,"
               " \"k\": 16384, \"dtype\": \"fp16\"}", 9, &s, err, sizeof err);
    CHECK(rc == 0 && s.kind == SPEC_DECODE && s.m[0] == 1 && s.dtype == SPEC_FP16,
          "decode line: rc %d (%s)", rc, err);
    spec_free(&s);

    /* No name or kind: dense, named after the line; a list of one is a scalar. */
    rc = parse("{\"m\": [128], \"n\": 256, \"k\": 64}", 12, &s, err, sizeof err);
    CHECK(rc == 0 && s.kind == SPEC_DENSE && !strcmp(s.name, "line12") && s.m[0] == 128,
          "bare line: rc %d (%s) name %s", rc, err, s.name);
    spec_free(&s);
}

static void test_seed_format(void)
{
    /* The seeds' exact format: lists, g and seed, nothing else. */
    const char *line = "{\"m\": [80, 176, 128, 72, 64, 248, 96, 160], "
                       "\"n\": [4096, 4096, 4096, 4096, 4096, 4096, 4096, 4096], "
                       "\"k\": [7168, 7168, 7168, 7168, 7168, 7168, 7168, 7168], "
                       "\"g\": 8, \"seed\": 1111}";
    struct spec s;
    char err[256];
    int rc = parse(line, 3, &s, err, sizeof err);
    CHECK(rc == 0, "seed line: %s", err);
    CHECK(s.kind == SPEC_GROUPED && s.layout == SPEC_LAYOUT_LIST && s.g == 8, "kind %d g %d",
          (int)s.kind, s.g);
    CHECK(s.m[0] == 80 && s.m[7] == 160 && s.n[5] == 4096 && s.k[7] == 7168, "values");
    CHECK(s.has_seed && s.seed == 1111, "seed");
    spec_free(&s);

    /* Without g: the lists' length. */
    rc = parse("{\"m\": [192, 320], \"n\": [3072, 3072], \"k\": [4096, 4096]}", 4, &s, err,
               sizeof err);
    CHECK(rc == 0 && s.kind == SPEC_GROUPED && s.g == 2, "g from lists: %s", err);
    spec_free(&s);

    /* A group may be empty (0 rows); n and k may not. */
    rc = parse("{\"m\": [0, 5], \"n\": [8, 8], \"k\": [8, 8]}", 5, &s, err, sizeof err);
    CHECK(rc == 0 && s.m[0] == 0 && s.m[1] == 5, "an empty group: %s", err);
    spec_free(&s);
}

static void test_grouped_layouts(void)
{
    struct spec s;
    char err[256];
    int rc = parse("{\"name\": \"moe_decode_masked\", \"kind\": \"grouped\", \"layout\": "
                   "\"masked\", \"m\": [256, 97, 180], \"n\": [4096, 4096, 4096], \"k\": [7168, "
                   "7168, 7168], \"g\": 3, \"m_max\": 256}", 26, &s, err, sizeof err);
    CHECK(rc == 0 && s.layout == SPEC_LAYOUT_MASKED && s.m_max == 256 && s.g == 3,
          "masked: %s", err);
    spec_free(&s);
    rc = parse("{\"kind\": \"grouped\", \"layout\": \"masked\", \"m\": [5, 9], \"n\": [8, 8], "
               "\"k\": [8, 8]}", 1, &s, err, sizeof err);
    CHECK(rc == 0 && s.m_max == 9, "m_max defaults to the largest m: %lld (%s)",
          (long long)s.m_max, err);
    spec_free(&s);
    rc = parse("{\"kind\": \"grouped\", \"layout\": \"contiguous\", \"m\": [8192, 8192], \"n\": "
               "[4096, 4096], \"k\": [7168, 7168], \"g\": 2}", 1, &s, err, sizeof err);
    CHECK(rc == 0 && s.layout == SPEC_LAYOUT_CONTIGUOUS && s.m_max == 0, "contiguous: %s", err);
    spec_free(&s);
}

/* workspace (0.5): a boolean on grouped lines, false when missing. */
static void test_workspace(void)
{
    struct spec s;
    char err[256];
    int rc = parse("{\"kind\": \"grouped\", \"m\": [5, 9], \"n\": [8, 8], \"k\": [8, 8], "
                   "\"workspace\": true}", 1, &s, err, sizeof err);
    CHECK(rc == 0 && s.workspace, "workspace true: rc %d workspace %d (%s)", rc,
          (int)s.workspace, err);
    spec_free(&s);
    rc = parse("{\"kind\": \"grouped\", \"layout\": \"masked\", \"m\": [5, 9], \"n\": [8, 8], "
               "\"k\": [8, 8], \"workspace\": false}", 1, &s, err, sizeof err);
    CHECK(rc == 0 && !s.workspace, "workspace false: rc %d workspace %d (%s)", rc,
          (int)s.workspace, err);
    spec_free(&s);
    rc = parse("{\"m\": [5, 9], \"n\": [8, 8], \"k\": [8, 8]}", 1, &s, err, sizeof err);
    CHECK(rc == 0 && s.kind == SPEC_GROUPED && !s.workspace,
          "workspace defaults to false: rc %d workspace %d (%s)", rc, (int)s.workspace, err);
    spec_free(&s);
    rc = parse("{\"m\": 1, \"n\": 8, \"k\": 8}", 1, &s, err, sizeof err);
    CHECK(rc == 0 && !s.workspace, "dense: workspace %d (%s)", (int)s.workspace, err);
    spec_free(&s);
}

/* The 0.7 forms: fp32 dtypes, a_major, b_major, lda/ldb/ldd, unaligned. */
static void test_forms(void)
{
    struct spec s;
    char err[256];
    int rc = parse("{\"m\": 3, \"n\": 5, \"k\": 7}", 1, &s, err, sizeof err);
    CHECK(rc == 0 && !s.a_mn && !s.b_mn && !s.lda && !s.ldb && !s.ldd && !s.unaligned,
          "defaults: rc %d (%s)", rc, err);
    spec_free(&s);
    rc = parse("{\"m\": 3, \"n\": 5, \"k\": 7, \"dtype\": \"fp16\", \"a_major\": \"m\", "
               "\"b_major\": \"n\", \"lda\": 9, \"ldb\": 6, \"ldd\": 1099511627775, "
               "\"unaligned\": true}", 1, &s, err, sizeof err);
    CHECK(rc == 0 && s.a_mn && s.b_mn && s.lda == 9 && s.ldb == 6 &&
              s.ldd == (INT64_C(1) << 40) - 1 && s.unaligned,
          "every form: rc %d (%s)", rc, err);
    spec_free(&s);
    rc = parse("{\"kind\": \"decode\", \"m\": 3, \"n\": 5, \"k\": 7, \"a_major\": \"k\", "
               "\"b_major\": \"k\", \"unaligned\": false}", 1, &s, err, sizeof err);
    CHECK(rc == 0 && !s.a_mn && !s.b_mn && !s.unaligned, "K-major spelled out: rc %d (%s)", rc,
          err);
    spec_free(&s);
    rc = parse("{\"m\": [3, 4], \"n\": [8, 8], \"k\": [8, 8], \"b_major\": \"n\", "
               "\"unaligned\": true, \"dtype\": \"fp32\"}", 1, &s, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "field 'b_major': MN-major operands only for dtype bf16 or "
                                  "fp16, not fp32"),
          "grouped fp32 N-major: rc %d (%s)", rc, err);
    spec_free(&s);
    rc = parse("{\"m\": [3, 4], \"n\": [8, 8], \"k\": [8, 8], \"b_major\": \"n\", "
               "\"unaligned\": true}", 1, &s, err, sizeof err);
    CHECK(rc == 0 && s.kind == SPEC_GROUPED && s.b_mn && s.unaligned,
          "grouped N-major unaligned: rc %d (%s)", rc, err);
    spec_free(&s);
    rc = parse("{\"m\": 3, \"n\": 5, \"k\": 7, \"dtype\": \"fp32-exact\", \"lda\": 8}", 1,
               &s, err, sizeof err);
    CHECK(rc == 0 && s.dtype == SPEC_FP32_EXACT && s.lda == 8 && s.scale == SPEC_SCALE_NONE,
          "fp32-exact: rc %d (%s)", rc, err);
    spec_free(&s);
}

/* generic_hint_m: an M for dense lines, null or absent for none. */
static void test_generic_hint(void)
{
    static const struct {
        const char *line;
        int rc;
        int64_t hint;
        const char *err;
    } cases[] = {
        {"{\"m\": 67, \"n\": 8, \"k\": 8}", 0, 0, NULL},
        {"{\"m\": 67, \"n\": 8, \"k\": 8, \"generic_hint_m\": null}", 0, 0, NULL},
        {"{\"m\": 67, \"n\": 8, \"k\": 8, \"generic_hint_m\": 128}", 0, 128, NULL},
        {"{\"m\": 67, \"n\": 8, \"k\": 8, \"generic_hint_m\": 0}", -1, 0,
         "field 'generic_hint_m': expected an integer in [1, 2^31-1] or null"},
        {"{\"m\": 67, \"n\": 8, \"k\": 8, \"generic_hint_m\": \"128\"}", -1, 0,
         "field 'generic_hint_m'"},
        {"{\"kind\": \"decode\", \"m\": 4, \"n\": 8, \"k\": 8, \"generic_hint_m\": 8}",
         -1, 0, "field 'generic_hint_m': only for kind dense"},
        {"{\"m\": [5, 9], \"n\": [8, 8], \"k\": [8, 8], \"generic_hint_m\": 16}", -1, 0,
         "field 'generic_hint_m': only for kind dense"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        struct spec s;
        char err[256];
        int rc = parse(cases[i].line, 1, &s, err, sizeof err);
        CHECK(rc == cases[i].rc && (rc || s.generic_hint_m == cases[i].hint) &&
                  (!cases[i].err || strstr(err, cases[i].err)),
              "%s: rc %d hint %lld (%s)", cases[i].line, rc, (long long)s.generic_hint_m, err);
        spec_free(&s);
    }
}

static void test_dtypes(void)
{
    static const struct {
        const char *line;
        enum spec_dtype dtype;
        enum spec_scale scale;
    } cases[] = {
        {"{\"m\": 1, \"n\": 8, \"k\": 8, \"dtype\": \"fp8\"}", SPEC_FP8, SPEC_SCALE_TENSOR},
        {"{\"m\": 1, \"n\": 8, \"k\": 8, \"dtype\": \"fp8\", \"scale\": \"row\"}", SPEC_FP8,
         SPEC_SCALE_ROW},
        {"{\"m\": 1, \"n\": 8, \"k\": 8, \"dtype\": \"nvfp4\"}", SPEC_NVFP4, SPEC_SCALE_BLOCK},
        {"{\"m\": 1, \"n\": 8, \"k\": 8, \"dtype\": \"nvfp4\", \"scale\": \"tensor\"}",
         SPEC_NVFP4, SPEC_SCALE_TENSOR},
        {"{\"m\": 1, \"n\": 8, \"k\": 8, \"dtype\": \"fp16\"}", SPEC_FP16, SPEC_SCALE_NONE},
        {"{\"m\": 1, \"n\": 8, \"k\": 8, \"dtype\": \"fp32\"}", SPEC_FP32, SPEC_SCALE_NONE},
        {"{\"m\": 1, \"n\": 8, \"k\": 8, \"dtype\": \"fp32-exact\"}", SPEC_FP32_EXACT,
         SPEC_SCALE_NONE},
    };
    /* nvfp4's scale layout: 128x4 by default, row on request, nvfp4 only. */
    static const struct {
        const char *line;
        int rc;
        enum spec_sf sf;
    } sfs[] = {
        {"{\"m\": 1, \"n\": 8, \"k\": 8, \"dtype\": \"nvfp4\"}", 0, SPEC_SF_128X4},
        {"{\"m\": 1, \"n\": 8, \"k\": 8, \"dtype\": \"nvfp4\", \"sf\": \"row\"}", 0, SPEC_SF_ROW},
        {"{\"m\": 1, \"n\": 8, \"k\": 8, \"dtype\": \"nvfp4\", \"sf\": \"col\"}", -1, SPEC_SF_NONE},
        {"{\"m\": 1, \"n\": 8, \"k\": 8, \"dtype\": \"fp8\", \"sf\": \"row\"}", -1, SPEC_SF_NONE},
        {"{\"m\": 1, \"n\": 8, \"k\": 8}", 0, SPEC_SF_NONE},
    };
    for (size_t i = 0; i < sizeof sfs / sizeof *sfs; ++i) {
        struct spec s;
        char err[256];
        int rc = parse(sfs[i].line, 1, &s, err, sizeof err);
        CHECK(rc == sfs[i].rc && (rc || s.sf == sfs[i].sf), "%s: rc %d sf %s (%s)", sfs[i].line,
              rc, spec_sf_name(s.sf), err);
        spec_free(&s);
    }
    for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
        struct spec s;
        char err[256];
        int rc = parse(cases[i].line, 1, &s, err, sizeof err);
        CHECK(rc == 0 && s.dtype == cases[i].dtype && s.scale == cases[i].scale,
              "%s: rc %d dtype %s scale %s (%s)", cases[i].line, rc, spec_dtype_name(s.dtype),
              spec_scale_name(s.scale), err);
        spec_free(&s);
    }
}

/* Blank and comment lines; text without a NUL; extra fields; small buffers. */
static void test_edges(void)
{
    static const char *skipped[] = {"", "\n", "   \t\r\n", "# a comment", "  # indented {"};
    struct spec s;
    char err[256];
    for (size_t i = 0; i < sizeof skipped / sizeof *skipped; ++i) {
        int rc = parse(skipped[i], 5, &s, err, sizeof err);
        CHECK(rc == 1, "'%s' should be skipped: rc %d", skipped[i], rc);
        spec_free(&s);
    }
    const char buf[] = "{\"m\": 1, \"n\": 8, \"k\": 8}GARBAGE";
    int rc = spec_parse_line(buf, strlen(buf) - strlen("GARBAGE"), 2, &s, err, sizeof err);
    CHECK(rc == 0, "only len bytes are read: rc %d (%s)", rc, err);
    spec_free(&s);
    rc = parse("{\"m\": 1, \"n\": 8, \"k\": 8, \"note\": [1, {\"x\": null}], \"owner\": \"me\"}",
               2, &s, err, sizeof err);
    CHECK(rc == 0, "unknown fields are ignored: %s", err);
    spec_free(&s);
    CHECK(parse("{\"m\": -1, \"n\": 8, \"k\": 8}", 2, &s, NULL, 0) == -1, "no err buffer");
    char tiny[8];
    CHECK(parse("{\"m\": -1, \"n\": 8, \"k\": 8}", 2, &s, tiny, sizeof tiny) == -1 &&
              strlen(tiny) < sizeof tiny, "a tiny err buffer is cut, not overrun");
    CHECK(spec_parse_line(NULL, 0, 1, &s, err, sizeof err) == 1, "NULL text is an empty line");
    spec_free(&s);
    spec_free(NULL);
}

/* ---- malformed lines ---------------------------------------------------- */

static const struct {
    const char *line;
    const char *expect; /* a part of the message: the line number and the field */
} bad_lines[] = {
    {"{\"m\": 0, \"n\": 8, \"k\": 8}", "line 7: field 'm': "},
    {"{\"m\": -4, \"n\": 8, \"k\": 8}", "line 7: field 'm': "},
    {"{\"m\": 1, \"n\": 2147483648, \"k\": 8}", "line 7: field 'n': "},
    {"{\"m\": 1, \"n\": 8.5, \"k\": 8}", "line 7: field 'n': "},
    {"{\"m\": 1, \"n\": \"8\", \"k\": 8}", "line 7: field 'n': "},
    {"{\"m\": 1, \"n\": 8}", "line 7: field 'k': missing"},
    {"{\"m\": 1, \"n\": 8, \"k\": []}", "line 7: field 'k': empty list"},
    {"{\"m\": [1, 2], \"n\": [8, 8], \"k\": [8, 0]}", "line 7: field 'k': element [1]"},
    {"{\"m\": [1, -1], \"n\": [8, 8], \"k\": [8, 8]}",
     "line 7: field 'm': element [1]: expected an integer in [0, 2^31-1]"},
    {"{\"m\": 0, \"n\": 8, \"k\": 8}", "line 7: field 'm': expected an integer in [1, "},
    {"{\"m\": [1, 2], \"n\": [8, 8, 8], \"k\": [8, 8]}", "line 7: field 'n': a list of 3"},
    {"{\"m\": [1, 2], \"n\": [8, 8], \"k\": [8, 8], \"g\": 3}", "line 7: field 'm': "},
    {"{\"m\": [1], \"n\": [8], \"k\": [8], \"g\": 0}", "line 7: field 'g': "},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"g\": \"1\"}", "line 7: field 'g': "},
    {"{\"kind\": \"dense\", \"m\": [1, 2], \"n\": [8, 8], \"k\": [8, 8]}",
     "line 7: field 'm': kind dense takes one"},
    {"{\"kind\": \"dense\", \"m\": 1, \"n\": 8, \"k\": 8, \"g\": 2}", "line 7: field 'g': "},
    {"{\"m\": [1, 2], \"n\": 8, \"k\": 8}", "line 7: field 'm': kind dense takes one"},
    {"{\"kind\": \"grouped\", \"m\": [1], \"n\": 8, \"k\": [8]}", "line 7: field 'n': "},
    {"{\"kind\": \"sparse\", \"m\": 1, \"n\": 8, \"k\": 8}", "line 7: field 'kind': 'sparse'"},
    {"{\"kind\": 3, \"m\": 1, \"n\": 8, \"k\": 8}", "line 7: field 'kind': "},
    {"{\"kind\": \"grouped\", \"layout\": \"ragged\", \"m\": [1], \"n\": [8], \"k\": [8]}",
     "line 7: field 'layout': 'ragged'"},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"layout\": \"list\"}", "line 7: field 'layout': "},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"m_max\": 4}", "line 7: field 'm_max': "},
    {"{\"kind\": \"grouped\", \"layout\": \"masked\", \"m\": [9], \"n\": [8], \"k\": [8], "
     "\"m_max\": 4}", "line 7: field 'm': "},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"dtype\": \"int8\"}", "line 7: field 'dtype': 'int8'"},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"dtype\": \"fp8\", \"scale\": \"channel\"}",
     "line 7: field 'scale': 'channel'"},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"scale\": \"row\"}", "line 7: field 'scale': only"},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"seed\": -1}", "line 7: field 'seed': "},
    {"{\"kind\": \"grouped\", \"m\": [1], \"n\": [8], \"k\": [8], \"workspace\": 1}",
     "line 7: field 'workspace': expected true or false"},
    {"{\"kind\": \"grouped\", \"m\": [1], \"n\": [8], \"k\": [8], \"workspace\": \"true\"}",
     "line 7: field 'workspace': expected true or false"},
    {"{\"kind\": \"grouped\", \"m\": [1], \"n\": [8], \"k\": [8], \"workspace\": null}",
     "line 7: field 'workspace': expected true or false"},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"workspace\": true}",
     "line 7: field 'workspace': only for kind grouped"},
    {"{\"kind\": \"decode\", \"m\": 1, \"n\": 8, \"k\": 8, \"workspace\": false}",
     "line 7: field 'workspace': only for kind grouped"},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"dtype\": \"fp32\", \"scale\": \"tensor\"}",
     "line 7: field 'scale': only for dtype fp8 or nvfp4, not fp32"},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"a_major\": \"n\"}",
     "line 7: field 'a_major': 'n' is not one of k, m"},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"b_major\": \"m\"}",
     "line 7: field 'b_major': 'm' is not one of k, n"},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"b_major\": 1}", "line 7: field 'b_major': expected a"},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"dtype\": \"fp8\", \"b_major\": \"n\"}",
     "line 7: field 'b_major': MN-major operands only for dtype bf16 or fp16, not fp8"},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"dtype\": \"fp32-exact\", \"a_major\": \"m\"}",
     "line 7: field 'a_major': MN-major operands only for dtype bf16 or fp16, not fp32-exact"},
    {"{\"m\": [1], \"n\": [8], \"k\": [8], \"a_major\": \"m\"}",
     "line 7: field 'a_major': only for kind dense or decode"},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"lda\": 0}",
     "line 7: field 'lda': expected an integer in [1, 2^40-1]"},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"ldb\": 1099511627776}",
     "line 7: field 'ldb': expected an integer in [1, 2^40-1]"},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"ldd\": 8.5}", "line 7: field 'ldd': expected"},
    {"{\"m\": [1], \"n\": [8], \"k\": [8], \"ldd\": 8}",
     "line 7: field 'ldd': only for kind dense or decode"},
    {"{\"m\": [1], \"n\": [8], \"k\": [8], \"dtype\": \"fp32-exact\"}",
     "line 7: field 'dtype': fp32-exact only for kind dense or decode"},
    {"{\"m\": 1, \"n\": 8, \"k\": 8, \"unaligned\": 1}",
     "line 7: field 'unaligned': expected true or false"},
    {"{\"name\": \"\", \"m\": 1, \"n\": 8, \"k\": 8}", "line 7: field 'name': "},
    {"{\"name\": 5, \"m\": 1, \"n\": 8, \"k\": 8}", "line 7: field 'name': "},
    {"{\"name\": \"0123456789012345678901234567890123456789012345678901234567890123\", "
     "\"m\": 1, \"n\": 8, \"k\": 8}", "line 7: field 'name': "},
    {"{\"m\": 1, \"n\": 8, \"k\": 8} trailing", "line 7, column "},
    {"{\"m\": 1, \"n\": 8, \"k\": 8", "line 7, column "},
    {"{\"m\": 1, \"m\": 2, \"n\": 8, \"k\": 8}", "line 7, column "},
    {"not json", "line 7, column 3: invalid JSON"},
    {"[1, 2, 3]", "line 7: expected a JSON object, not an array"},
    {"42", "line 7: expected a JSON object"},
};

static void test_malformed(void)
{
    for (size_t i = 0; i < sizeof bad_lines / sizeof *bad_lines; ++i) {
        struct spec s;
        char err[512];
        int rc = parse(bad_lines[i].line, 7, &s, err, sizeof err);
        CHECK(rc == -1, "%s: rc %d, expected -1", bad_lines[i].line, rc);
        CHECK(strstr(err, bad_lines[i].expect) != NULL, "%s: message '%s' lacks '%s'",
              bad_lines[i].line, err, bad_lines[i].expect);
        CHECK(s.m == NULL && s.n == NULL && s.k == NULL, "a refused line keeps no memory");
        spec_free(&s);
    }
}

/* ---- robustness ------------------------------------------------------------ */

/* Seeded mutations of good and bad lines: bytes flipped, inserted, cut.
 * Every outcome must be one of the three and well formed. */
static void test_mutations(void)
{
    static const char *seeds[] = {
        "{\"m\": [80, 176], \"n\": [4096, 4096], \"k\": [7168, 7168], \"g\": 2, \"seed\": 1}",
        ("{\"name\": \"x\", \"kind\": \"grouped\", \"layout\": \"masked\", \"m\": [5, 9], "
         "\"n\": [8, 8], \"k\": [8, 8], \"m_max\": 9, \"dtype\": \"fp8\", \"scale\": \"row\", "
         "\"workspace\": true}"),
        "{\"name\": \"d\", \"kind\": \"dense\", \"m\": 4096, \"n\": 4096, \"k\": 4096}",
        ("{\"m\": 7, \"n\": 9, \"k\": 3, \"dtype\": \"fp16\", \"a_major\": \"m\", "
         "\"b_major\": \"n\", \"lda\": 11, \"ldb\": 13, \"ldd\": 10, \"unaligned\": true}"),
    };
    static const char alphabet[] = "{}[]\",:0123456789-.eE \\u#\nmnkg";
    jg_rng r;
    jg_rng_seed(&r, 20261121);
    int bad = 0;
    for (int it = 0; it < 20000; ++it) {
        char buf[256];
        const char *seed = seeds[jg_rng_below(&r, sizeof seeds / sizeof *seeds)];
        size_t len = strlen(seed);
        memcpy(buf, seed, len);
        for (int e = 0, edits = 1 + (int)jg_rng_below(&r, 4); e < edits && len; ++e) {
            size_t at = jg_rng_below(&r, len);
            uint64_t op = jg_rng_below(&r, 3);
            if (op == 0)
                buf[at] = (char)jg_rng_below(&r, 256);
            else if (op == 1 && len + 1 < sizeof buf) {
                memmove(buf + at + 1, buf + at, len - at);
                buf[at] = alphabet[jg_rng_below(&r, sizeof alphabet - 1)];
                ++len;
            } else
                len = at;
        }
        struct spec s;
        char err[300];
        int rc = spec_parse_line(buf, len, it + 1, &s, err, sizeof err);
        char prefix[32];
        snprintf(prefix, sizeof prefix, "line %d", it + 1);
        bad += rc < -1 || rc > 1 || (rc == -1 && strncmp(err, prefix, strlen(prefix))) ||
               (rc == 0 && (s.g < 1 || !s.m || !s.n || !s.k));
        spec_free(&s);
    }
    CHECK(bad == 0, "%d mutated lines gave a malformed outcome", bad);
}

/* Every line of the benchmark file parses as it is. */
static void test_file(const char *path)
{
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    if (!f)
        return;
    char *text = NULL, err[512];
    size_t cap = 0;
    ssize_t n;
    int line = 0, shapes = 0;
    while ((n = getline(&text, &cap, f)) >= 0) {
        struct spec s;
        int rc = spec_parse_line(text, (size_t)n, ++line, &s, err, sizeof err);
        CHECK(rc >= 0, "%s: %s", path, err);
        shapes += rc == 0;
        if (rc == 0 && s.kind == SPEC_GROUPED)
            CHECK(s.g >= 1 && s.layout != SPEC_LAYOUT_NONE, "%s line %d: grouped", path, line);
        spec_free(&s);
    }
    free(text);
    fclose(f);
    CHECK(shapes >= 20, "%s: only %d shapes", path, shapes);
}

int main(int argc, char **argv)
{
    test_dense();
    test_seed_format();
    test_grouped_layouts();
    test_workspace();
    test_forms();
    test_generic_hint();
    test_dtypes();
    test_edges();
    test_malformed();
    test_mutations();
    if (argc > 1)
        test_file(argv[1]);
    return jg_test_result("test_spec");
}
