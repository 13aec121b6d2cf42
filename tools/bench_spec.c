/* jitgemm-bench's rows from a spec file (tools/spec.h parses each line):
 * the types each row runs in, grouped lines it can run, --only. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "spec.h" /* the shape-spec parser every tool shares */

const char *layout_name(jg_grouped_layout l)
{
    return l == JG_GROUPED_CONTIGUOUS ? "contiguous" : l == JG_GROUPED_MASKED ? "masked" : "list";
}

/* A grouped line into *s: 1, or 0 (with the reason printed) for what the
 * library cannot run yet. */
static int parse_grouped(const struct spec *sp, shape *s)
{
    const char *why = NULL;
    s->layout = sp->layout == SPEC_LAYOUT_CONTIGUOUS ? JG_GROUPED_CONTIGUOUS
                : sp->layout == SPEC_LAYOUT_MASKED   ? JG_GROUPED_MASKED
                                                     : JG_GROUPED_LIST;
    if (s->layout == JG_GROUPED_LIST && sp->g > JG_GROUPED_MAX_GROUPS)
        why = "has more groups than the list layout allows (JG_GROUPED_MAX_GROUPS, 64)";
    else if (sp->g > JG_GROUPED_MAX_DEVICE_GROUPS)
        why = "has more groups than the layout allows (JG_GROUPED_MAX_DEVICE_GROUPS, 256)";
    for (int i = 1; i < sp->g && !why; ++i)
        if (sp->n[i] != sp->n[0] || sp->k[i] != sp->k[0])
            why = "has groups with different n or k (not supported by libjitgemm)";
    s->m = s->b_count = 0;
    for (int i = 0; i < sp->g && !why; ++i) {
        s->gm[i] = sp->m[i];
        s->m += sp->m[i];
        s->b_count += sp->m[i] > 0;
    }
    if (!why && !s->m)
        why = "has no rows in any group";
    else if (!why && s->layout == JG_GROUPED_CONTIGUOUS && s->m > INT32_MAX)
        why = "has more rows in all than int32 row offsets can hold";
    if (why) {
        printf("skipping %s: grouped, layout '%s', %s\n", sp->name,
               spec_layout_name(sp->layout), why);
        return 0;
    }
    s->g = sp->g;
    s->n = sp->n[0];
    s->k = sp->k[0];
    /* masked: the spec's m_max (>= every m; its default is max(m)) */
    s->m_max = s->layout == JG_GROUPED_CONTIGUOUS ? s->m
               : s->layout == JG_GROUPED_MASKED   ? sp->m_max
                                                  : 0;
    return 1;
}

/* The row's types: a line of dtype fp8 runs as e4m3 with its scale (or
 * --scale), a line of dtype nvfp4 as nvfp4 (its "scale" is not read: the
 * format fixes the scales; the layout is --sf-layout's), any other line as
 * --dtype (a spec line cannot say bf16 as opposed to its default, so
 * bf16/fp16 lines follow --dtype, as before). */
static void set_types(const struct spec *sp, const options *o, shape *s)
{
    static const jg_scale_mode modes[] = {[SPEC_SCALE_NONE] = JG_SCALE_TENSOR,
                                          [SPEC_SCALE_TENSOR] = JG_SCALE_TENSOR,
                                          [SPEC_SCALE_ROW] = JG_SCALE_ROW,
                                          [SPEC_SCALE_BLOCK] = JG_SCALE_BLOCK};
    bool line_fp8 = sp->dtype == SPEC_FP8;
    s->in = line_fp8 ? JG_E4M3 : sp->dtype == SPEC_NVFP4 ? JG_NVFP4 : o->dtype;
    s->out = out_type(o, s->in);
    s->scale = s->in == JG_NVFP4 ? JG_SCALE_NVFP4
               : s->in != JG_E4M3 ? JG_SCALE_NONE
               : line_fp8 && !o->scale_set ? modes[sp->scale]
                                           : o->scale;
    s->sf_layout = s->in == JG_NVFP4 ? o->sf_layout : JG_SF_LAYOUT_NONE;
}

/* One line: 1 a shape in *s, 0 skipped (blank, comment, or a kind, layout or
 * dtype not benchmarked yet), -1 malformed (reported by spec.c's message). */
static int parse_line(const char *text, size_t len, const char *file, int line,
                      const options *o, shape *s)
{
    struct spec sp;
    char err[512];
    int rc = spec_parse_line(text, len, line, &sp, err, sizeof err);
    if (rc < 0) {
        fprintf(stderr, "%s: %s; line skipped\n", file, err);
        return -1;
    }
    if (rc > 0)
        return 0;
    rc = 0;
    memset(s, 0, sizeof *s);
    snprintf(s->name, sizeof s->name, "%s", sp.name);
    snprintf(s->kind, sizeof s->kind, "%s", spec_kind_name(sp.kind));
    s->seed = sp.has_seed ? sp.seed : 0;
    set_types(&sp, o, s);
    if (sp.dtype == SPEC_FP32 || sp.dtype == SPEC_FP32_EXACT || sp.a_mn || sp.b_mn ||
        sp.lda || sp.ldb || sp.ldd || sp.unaligned)
        printf("skipping %s: FP32 operands, MN-major operands, leading dimensions and "
               "unaligned pointers are measured by bench/peer_any.py\n", sp.name);
    else if (sp.kind == SPEC_GROUPED && s->in == JG_NVFP4)
        printf("skipping %s: grouped in nvfp4 (%s): grouped NVFP4 is measured against its "
               "peer (torch._scaled_grouped_mm, FP8 row-wise) by bench/peer_torch.py "
               "--nvfp4\n", sp.name,
               sp.dtype == SPEC_NVFP4 ? "the line's dtype" : "--dtype nvfp4");
    else if (sp.kind == SPEC_GROUPED && s->in == JG_E4M3)
        printf("skipping %s: grouped in fp8 (%s): grouped FP8 is measured against its peer "
               "(torch._scaled_grouped_mm, row-wise) by bench/peer_torch.py --fp8\n",
               sp.name, sp.dtype == SPEC_FP8 ? "the line's dtype" : "--dtype fp8");
    else if (sp.kind == SPEC_GROUPED)
        rc = parse_grouped(&sp, s);
    else {
        s->m = sp.m[0];
        s->n = sp.n[0];
        s->k = sp.k[0];
        s->b_count = 1;
        s->generic_hint = sp.generic_hint_m;
        rc = 1;
    }
    spec_free(&sp);
    return rc;
}

/* Reads every line it can run; false only if the file cannot be read. */
bool load_spec(const char *file, const options *o, shape_list *out)
{
    FILE *f = fopen(file, "r");
    if (!f) {
        perror(file);
        return false;
    }
    char *text = NULL;
    size_t cap = 0;
    ssize_t len;
    int line = 0;
    shape s;
    while ((len = getline(&text, &cap, f)) >= 0) {
        if (parse_line(text, (size_t)len, file, ++line, o, &s) != 1)
            continue;
        if (out->n == out->cap) {
            out->cap = out->cap ? 2 * out->cap : 32;
            shape *v = realloc(out->v, out->cap * sizeof *v);
            if (!v) {
                fprintf(stderr, "jitgemm-bench: out of memory\n");
                exit(EXIT_SETUP);
            }
            out->v = v;
        }
        out->v[out->n++] = s;
    }
    free(text);
    fclose(f);
    return true;
}

/* Keeps the shapes named in `only`; an unknown name is an error, so that a
 * typo cannot silently shrink the run. */
bool filter_shapes(shape_list *l, const char *only)
{
    bool *keep = calloc(l->n + 1, sizeof *keep), ok = true;
    const char *p = only;
    while (*p) {
        size_t len = strcspn(p, ",");
        bool found = false;
        for (size_t i = 0; i < l->n; ++i)
            if (strlen(l->v[i].name) == len && !strncmp(l->v[i].name, p, len))
                keep[i] = found = true;
        if (!found && len) {
            fprintf(stderr, "jitgemm-bench: --only: no runnable shape '%.*s' in the spec\n",
                    (int)len, p);
            ok = false;
        }
        p += len + (p[len] == ',');
    }
    size_t n = 0;
    for (size_t i = 0; i < l->n; ++i)
        if (keep[i])
            l->v[n++] = l->v[i];
    l->n = n;
    free(keep);
    return ok;
}
