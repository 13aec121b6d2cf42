/* The utility layer's declarations (src/util/): what code generation and the
 * runtime both use. It depends on nothing of theirs (tests/unit/check_layers.py).
 * Not installed. */
#ifndef JG_UTIL_H
#define JG_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "jitgemm/jitgemm.h"

#if defined(__GNUC__)
#define JG_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define JG_PRINTF(f, a)
#endif

#define JG_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static inline uint64_t jg__ceil_div(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* ---- growable text/byte buffer (buf.c): the first failure sticks ----- */

typedef struct jg__buf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed; later appends are ignored */
} jg__buf;

void jg__buf_append(jg__buf *b, const void *data, size_t len);
void jg__buf_puts(jg__buf *b, const char *s);
void jg__buf_printf(jg__buf *b, const char *fmt, ...) JG_PRINTF(2, 3);
void jg__buf_free(jg__buf *b);
/* Appends the whole file; false if it cannot be opened or memory ran out. */
bool jg__buf_read_file(jg__buf *b, const char *path);

/* ---- log.c ----------------------------------------------------------------- */

typedef struct jg__log {
    jg_log_fn fn; /* NULL: nothing is logged */
    void *user;
    uint32_t mask; /* JG_LOGC_* */
} jg__log;

/* Reads JITGEMM_LOG into a mask; false when unset or empty. */
bool jg__log_env_mask(uint32_t *mask);
void jg__log_stderr(void *user, jg_log_level level, const char *category, const char *msg);
void jg__logf(const jg__log *log, jg_log_level level, uint32_t category, const char *fmt, ...)
    JG_PRINTF(4, 5);
bool jg__log_on(const jg__log *log, uint32_t category);

/* ---- dtype.c ------------------------------------------------------------------ */

/* Bytes of an element; 0 for JG_NVFP4 (half a byte: see jg__dtype_bits). */
size_t jg__dtype_size(uint32_t dtype);
size_t jg__dtype_bits(uint32_t dtype);
const char *jg__dtype_name(uint32_t dtype);

#endif /* JG_UTIL_H */
