/* Build step of the LLVM backend: the variants that the library's bitcode
 * catalog holds (docs/llvm-backend.md).
 *
 *   jitgemm-variants [--sm-count N] OUTDIR SPEC-FILE...
 *
 * Plans every line of the shape specs for sm_90a with no GPU, as the catalog
 * wants them (spec_line_keys: dense and decode lines also M-generic and as
 * programmatic dependents, grouped lines as given). Each kernel that the
 * backend can serve is written as its variant's source (jg__emit_gemm_spec)
 * to OUTDIR/<prelude hash>.cu, once per variant; OUTDIR/variants.txt lists
 * the hashes. OUTDIR "-" only counts them (the sizes of a catalog). Lines
 * without kernels and kernels the backend does not serve (NVFP4) are
 * counted, not errors.
 *
 * It reaches inside the library (jg_internal.h): a variant's source and
 * prelude hash come from the emitter (jg__emit_gemm_spec), which the public
 * API does not export; it links the library's objects without a backend
 * (llvm_off.c), built before the catalog it generates. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <xxhash.h>

/* Internal: a variant's source and prelude hash come from the emitter
 * (jg__emit_gemm_spec), which the public API does not export (see above). */
#include "jg_internal.h"
#include "spec.h"
#include "spec_keys.h"

#define VARIANTS_MAX 65536

typedef struct gen {
    jg_context *ctx;
    const char *dir;
    jg__hash128 seen[VARIANTS_MAX];
    size_t nseen, kernels, skipped;
} gen;

static bool seen(gen *g, jg__hash128 h)
{
    for (size_t i = 0; i < g->nseen; ++i)
        if (g->seen[i].lo == h.lo && g->seen[i].hi == h.hi)
            return true;
    return false;
}

/* Writes the key's variant unless an earlier kernel shares it. */
static bool add_key(gen *g, const jg__gemm_key *key)
{
    g->kernels++;
    if (!jg__spec_supported(key)) {
        g->skipped++;
        return true;
    }
    jg__buf prelude = {0}, src = {0};
    jg__emit_gemm_spec(key, false, &prelude);
    jg__emit_gemm_spec(key, true, &src);
    bool ok = !prelude.failed && !src.failed;
    XXH128_hash_t x = XXH3_128bits(prelude.data, prelude.len);
    jg__hash128 h = {x.low64, x.high64};
    if (ok && !seen(g, h)) {
        if (!strcmp(g->dir, "-") && g->nseen < VARIANTS_MAX) {
            g->seen[g->nseen++] = h;
        } else if (g->nseen == VARIANTS_MAX) {
            fprintf(stderr, "jitgemm-variants: more than %d variants\n", VARIANTS_MAX);
            ok = false;
        } else {
            g->seen[g->nseen++] = h;
            char hex[33], path[4200];
            jg__hash_hex(h, hex);
            snprintf(path, sizeof path, "%s/%s.cu", g->dir, hex);
            FILE *f = fopen(path, "wb");
            ok = f && fwrite(src.data, 1, src.len, f) == src.len;
            if (f)
                ok = fclose(f) == 0 && ok;
            if (!ok)
                fprintf(stderr, "jitgemm-variants: cannot write %s\n", path);
        }
    }
    jg__buf_free(&prelude);
    jg__buf_free(&src);
    return ok;
}

/* One line's kernels (spec_line_keys); lines without kernels are counted. */
static bool add_line(gen *g, const struct spec *s)
{
    jg__gemm_key keys[SPEC_KEYS_MAX];
    const int n = spec_line_keys(g->ctx, s, keys);
    if (n < 0) {
        fprintf(stderr, "jitgemm-variants: line %d (%s): %s\n", s->line, s->name,
                jg_context_last_error(g->ctx));
        return false;
    }
    g->skipped += n == 0;
    for (int i = 0; i < n; ++i)
        if (!add_key(g, &keys[i]))
            return false;
    return true;
}

static bool add_file(gen *g, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "jitgemm-variants: cannot read %s\n", path);
        return false;
    }
    char line[1 << 16], err[256];
    bool ok = true;
    for (int n = 1; ok && fgets(line, sizeof line, f); ++n) {
        struct spec s;
        const int r = spec_parse_line(line, strlen(line), n, &s, err, sizeof err);
        if (r < 0)
            fprintf(stderr, "jitgemm-variants: %s: %s\n", path, err);
        ok = r >= 0 && (r == 1 || add_line(g, &s));
        spec_free(&s);
    }
    fclose(f);
    return ok;
}

static int by_hash(const void *a, const void *b)
{
    const jg__hash128 *x = a, *y = b;
    if (x->hi != y->hi)
        return x->hi < y->hi ? -1 : 1;
    return (x->lo > y->lo) - (x->lo < y->lo);
}

static bool write_list(gen *g)
{
    char path[4200], hex[33];
    snprintf(path, sizeof path, "%s/variants.txt", g->dir);
    FILE *f = fopen(path, "w");
    if (!f)
        return false;
    qsort(g->seen, g->nseen, sizeof g->seen[0], by_hash);
    for (size_t i = 0; i < g->nseen; ++i) {
        jg__hash_hex(g->seen[i], hex);
        fprintf(f, "%s\n", hex);
    }
    return fclose(f) == 0;
}

int main(int argc, char **argv)
{
    int first = 1, sm_count = 0;
    if (argc > 2 && !strcmp(argv[1], "--sm-count")) {
        sm_count = atoi(argv[2]);
        first = 3;
    }
    if (argc - first < 2) {
        fprintf(stderr, "usage: jitgemm-variants [--sm-count N] OUTDIR SPEC-FILE...\n");
        return 2;
    }
    static gen g;
    g.dir = argv[first];
    jg_options o = {.flags = JG_CONTEXT_OFFLINE, .arch = "sm_90a", .cache_mode = JG_CACHE_OFF,
                    .sm_count = sm_count};
    if (jg_context_create(&o, &g.ctx) != JG_OK) {
        fprintf(stderr, "jitgemm-variants: %s\n", jg_context_last_error(NULL));
        return 1;
    }
    bool ok = true;
    for (int i = first + 1; ok && i < argc; ++i)
        ok = add_file(&g, argv[i]);
    ok = ok && (!strcmp(g.dir, "-") || write_list(&g));
    if (ok)
        printf("%zu kernels, %zu variants, %zu lines or kernels not served\n", g.kernels,
               g.nseen, g.skipped);
    jg_context_destroy(g.ctx);
    return ok ? 0 : 1;
}
