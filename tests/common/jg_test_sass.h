/* SASS checks shared by the compile tests (test_nvrtc.c, test_llvm.c): a
 * cubin disassembled by cuobjdump, and the rule every kernel keeps, no
 * local memory. Include after jg_internal.h and jg_test.h. */
#ifndef JG_TEST_SASS_H
#define JG_TEST_SASS_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Runs `cuobjdump <flag> <cubin>` and returns its output. */
static inline char *disassemble(const char *cuobjdump, const char *flag, const jg__buf *cubin)
{
    char path[] = "/tmp/jg_sass_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0 || write(fd, cubin->data, cubin->len) != (ssize_t)cubin->len)
        return NULL;
    close(fd);
    char cmd[4400];
    snprintf(cmd, sizeof cmd, "'%s' %s '%s' 2>&1", cuobjdump, flag, path);
    FILE *p = popen(cmd, "r");
    jg__buf out = {0};
    char chunk[4096];
    size_t n;
    while (p && (n = fread(chunk, 1, sizeof chunk, p)) > 0)
        jg__buf_append(&out, chunk, n);
    if (p)
        pclose(p);
    unlink(path);
    return out.data;
}

static inline int count_of(const char *text, const char *what)
{
    int n = 0;
    for (const char *p = text; p && (p = strstr(p, what)) != NULL; p += strlen(what))
        ++n;
    return n;
}

/* How many times `field` (e.g. "LOCAL:") stands in text, and how many of
 * those are followed by a value other than 0. */
static inline int field_count(const char *text, const char *field, int *nonzero)
{
    int n = 0;
    *nonzero = 0;
    for (const char *p = text; p && (p = strstr(p, field)) != NULL; p += strlen(field), ++n)
        *nonzero += atoi(p + strlen(field)) != 0;
    return n;
}

/* No local-memory traffic (spills, run-time-indexed arrays), no stack, in
 * any of the module's functions (cuobjdump -res-usage: a line each).
 * Returns the SASS (to free) for further checks. */
static inline char *check_no_local(const char *cuobjdump, const char *name, const jg__buf *cubin)
{
    char *sass = disassemble(cuobjdump, "-sass", cubin);
    char *res = disassemble(cuobjdump, "-res-usage", cubin);
    CHECK(sass && !strstr(sass, "LDL") && !strstr(sass, "STL"), "%s: local-memory traffic", name);
    int stack_used, local_used;
    const int functions = res ? count_of(res, " Function ") : 0;
    const int stacks = res ? field_count(res, "STACK:", &stack_used) : 0;
    const int locals = res ? field_count(res, "LOCAL:", &local_used) : 0;
    CHECK(functions > 0 && stacks == functions && locals == functions && !stack_used &&
              !local_used,
          "%s: stack or local use: %s", name, res ? res : "(no output)");
    free(res);
    return sass;
}

#endif /* JG_TEST_SASS_H */
