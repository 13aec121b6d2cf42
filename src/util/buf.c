/* Growable text and byte buffers whose first allocation failure sticks:
 * appends after it are ignored, and the caller checks `failed` once at the
 * end. Shared by code generation (sources) and the runtime (cubins, logs). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/util.h"

void jg__buf_append(jg__buf *b, const void *data, size_t len)
{
    if (b->failed)
        return;
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len + 1)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = 0;
}

void jg__buf_puts(jg__buf *b, const char *s) { jg__buf_append(b, s, strlen(s)); }

void jg__buf_printf(jg__buf *b, const char *fmt, ...)
{
    char small[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if ((size_t)n < sizeof small) {
        jg__buf_append(b, small, (size_t)n);
        return;
    }
    char *big = malloc((size_t)n + 1);
    if (!big) {
        b->failed = true;
        return;
    }
    va_start(ap, fmt);
    vsnprintf(big, (size_t)n + 1, fmt, ap);
    va_end(ap);
    jg__buf_append(b, big, (size_t)n);
    free(big);
}

bool jg__buf_read_file(jg__buf *b, const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return false;
    char chunk[4096];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, f)) > 0)
        jg__buf_append(b, chunk, n);
    bool ok = !ferror(f) && !b->failed;
    fclose(f);
    return ok;
}

void jg__buf_free(jg__buf *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}
