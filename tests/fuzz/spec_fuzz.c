/* libFuzzer target for the spec parser (tools/spec.c): any bytes in, never a
 * crash, a leak, undefined behaviour or an accepted spec that breaks the
 * parser's own promises. Built and run by tests/fuzz/run-spec-fuzz.sh. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "spec.h"

/* What a parsed spec promises its users (the warm and bench tools). */
static void check_spec(const struct spec *s)
{
    if (s->g < 1 || s->g > SPEC_G_MAX || !s->m || !s->n || !s->k)
        __builtin_trap();
    for (int i = 0; i < s->g; ++i) {
        if (s->m[i] < 0 || s->n[i] < 1 || s->k[i] < 1)
            __builtin_trap();
        if (s->layout == SPEC_LAYOUT_MASKED && s->m[i] > s->m_max)
            __builtin_trap();
    }
    if (memchr(s->name, 0, sizeof s->name) == NULL)
        __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct spec s;
    char err[256];
    int r = spec_parse_line((const char *)data, size, 1, &s, err, sizeof err);
    if (r == 0) {
        check_spec(&s);
        spec_free(&s);
    } else if (r == -1 && memchr(err, 0, sizeof err) == NULL) {
        __builtin_trap(); /* the message must be a terminated string */
    }
    return 0;
}
