/* The SASS reuse edit (src/codegen/sass_patch.c) on hand-made ELF files:
 * which FFMAs it marks and which it leaves, that it touches no other bit,
 * and that malformed or truncated files are refused unchanged, never read
 * past their end (the sanitized build checks the reads). test_sass checks
 * the same edit on a real kernel through cuobjdump. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jg_internal.h"
#include "jg_test.h"

#define REUSE_B (UINT64_C(1) << 59)
#define NO_YIELD (UINT64_C(1) << 45)

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; ++i, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
        v = v << 8 | p[i];
    return v;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; ++i, v >>= 8)
        p[i] = (uint8_t)v;
}
static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)v;
    p[1] = (uint8_t)(v >> 8);
}

/* FFMA Rd, Ra, Rb, Rc (opcode 0x223, guard PT: 0x7223), as ptxas leaves
 * one: stall 1, no flags */
static void put_ffma(uint8_t *at, uint32_t d, uint32_t a, uint32_t b, uint32_t c)
{
    put64(at, 0x7223u | (uint64_t)d << 16 | (uint64_t)a << 24 | (uint64_t)b << 32);
    put64(at + 8, UINT64_C(0x000fc20000000000) | c);
}

/* Any other instruction (an IADD3's opcode) */
static void other(uint8_t *at)
{
    put64(at, UINT64_C(0x0000000102037210));
    put64(at + 8, UINT64_C(0x000fe20007ffe0ff));
}

enum { TEXT_OFF = 256, MAX_INSNS = 64 };
static const char strtab[] = "\0.shstrtab\0.text.k\0.text.kernel2\0";

/* An ELF64 of a null section, .shstrtab, and .text.k holding `n`
 * instructions (their bytes written by the caller at TEXT_OFF). */
static size_t make_elf(uint8_t *buf, size_t n)
{
    memset(buf, 0, TEXT_OFF + MAX_INSNS * 16 + 4 * 64);
    memcpy(buf, "\x7f" "ELF", 4);
    buf[4] = 2; /* 64-bit */
    buf[5] = 1; /* little endian */
    buf[6] = 1;
    put16(buf + 0x12, 190);       /* EM_CUDA */
    put32(buf + 0x30, 0x06005a04); /* e_flags as NVRTC writes them for sm_90a */
    const size_t shoff = TEXT_OFF + n * 16;
    put64(buf + 0x28, shoff);
    put16(buf + 0x3A, 64);
    put16(buf + 0x3C, 3);
    put16(buf + 0x3E, 1);
    memcpy(buf + 64, strtab, sizeof strtab);
    uint8_t *sh = buf + shoff;
    /* [1] .shstrtab */
    put32(sh + 64, 1);
    put64(sh + 64 + 0x18, 64);
    put64(sh + 64 + 0x20, sizeof strtab);
    /* [2] .text.k */
    put32(sh + 128, 11);
    put64(sh + 128 + 0x18, TEXT_OFF);
    put64(sh + 128 + 0x20, n * 16);
    return shoff + 3 * 64;
}

static uint8_t elf[TEXT_OFF + MAX_INSNS * 16 + 4 * 64];
static uint8_t copy[sizeof elf];

/* what fill() writes: runs of 20, 8 and 17 FFMAs, two IADD3s between */
#define N_INSNS (20 + 1 + 8 + 1 + 17)

static uint64_t hi_of(const uint8_t *buf, size_t i) { return get64(buf + TEXT_OFF + i * 16 + 8); }

/* A run of 20 FFMAs on scale R7, one writing R7 itself (12), one reading
 * R9 instead (15), one guarded by @P0 (6); an IADD3; a run of 8; an
 * IADD3; a run of 17 of which one already marked. */
static size_t fill(uint8_t *buf)
{
    size_t i = 0;
    uint8_t *t = buf + TEXT_OFF;
    for (int j = 0; j < 20; ++j, ++i) {
        put_ffma(t + i * 16, j == 12 ? 7 : 100 + j, 40 + j, j == 15 ? 9 : 7, 100 + j);
        if (j == 6) /* @P0: predicate field 0 instead of PT (7) */
            put64(t + i * 16, get64(t + i * 16) & ~(UINT64_C(0xF) << 12));
    }
    other(t + i++ * 16);
    for (int j = 0; j < 8; ++j, ++i)
        put_ffma(t + i * 16, 150 + j, 60 + j, 7, 150 + j);
    other(t + i++ * 16);
    for (int j = 0; j < 17; ++j, ++i) {
        put_ffma(t + i * 16, 170 + j, 20 + j, 11, 170 + j);
        if (j == 3)
            put64(t + i * 16 + 8, hi_of(buf, i) | REUSE_B | NO_YIELD);
    }
    return i;
}

static void test_marks(void)
{
    const size_t n = N_INSNS;
    size_t len = make_elf(elf, n);
    CHECK(fill(elf) == n, "filled %zu", n);
    memcpy(copy, elf, len);
    const int changed = jg__sass_ffma_reuse(elf, len, "k", 16);
    /* first run: marked where the successor reads R7 as b too, so not 14
     * (its successor reads R9), 15 (R9, then R7), 19 (the last); 11 is
     * (12 reads R7 before writing it), 12 is not (it writes R7: 13 must
     * read the new value); neither the predicated 6 nor 5 before it */
    for (size_t i = 0; i < 20; ++i) {
        const bool want = i != 5 && i != 6 && i != 12 && i != 14 && i != 15 && i != 19;
        const uint64_t hi = hi_of(elf, i);
        CHECK(((hi & (REUSE_B | NO_YIELD)) == (REUSE_B | NO_YIELD)) == want,
              "run 1, FFMA %zu: flags %#llx, wanted %s", i, (unsigned long long)hi,
              want ? "marked" : "unmarked");
        CHECK((hi & ~(REUSE_B | NO_YIELD)) == (hi_of(copy, i) & ~(REUSE_B | NO_YIELD)),
              "run 1, FFMA %zu: other bits changed", i);
    }
    /* the 8-FFMA run is shorter than 16: untouched */
    CHECK(!memcmp(elf + TEXT_OFF + 20 * 16, copy + TEXT_OFF + 20 * 16, 10 * 16),
          "a short run or the IADD3s changed");
    /* third run: 0..15 marked (3 already was), 16 the last */
    for (size_t j = 0; j < 17; ++j) {
        const uint64_t hi = hi_of(elf, 30 + j);
        CHECK(((hi & REUSE_B) != 0) == (j != 16), "run 3, FFMA %zu: flags %#llx", j,
              (unsigned long long)hi);
    }
    CHECK(changed == 14 + 15, "changed %d, wanted 29", changed);
    /* the low words and everything outside the text are unchanged */
    for (size_t i = 0; i < n; ++i)
        CHECK(get64(elf + TEXT_OFF + i * 16) == get64(copy + TEXT_OFF + i * 16),
              "instruction %zu: low word changed", i);
    CHECK(!memcmp(elf, copy, TEXT_OFF) && !memcmp(elf + TEXT_OFF + n * 16, copy + TEXT_OFF + n * 16,
                                                   len - TEXT_OFF - n * 16),
          "bytes outside the section changed");
    /* a second pass finds nothing more to do */
    CHECK(jg__sass_ffma_reuse(elf, len, "k", 16) == 0, "the edit is not idempotent");
}

/* Refusals: each leaves the buffer as it was and returns -1. */
static void expect_refused(uint8_t *buf, size_t len, const char *kernel, const char *why)
{
    memcpy(copy, buf, len);
    CHECK(jg__sass_ffma_reuse(buf, len, kernel, 16) == -1, "%s: not refused", why);
    CHECK(!memcmp(buf, copy, len), "%s: refused but changed", why);
}

/* One field of the hand-made ELF set to a bad value: where (from the
 * file's start, or from the section header table's with `in_sh`), how
 * many bytes, what. */
static const struct {
    size_t at;
    bool in_sh;
    int width;
    uint64_t value;
    const char *why;
} bad_fields[] = {
    {0, false, 1, 0x7e, "bad magic"},
    {4, false, 1, 1, "a 32-bit ELF"},
    {5, false, 1, 2, "a big-endian ELF"},
    {0x12, false, 2, 62, "an x86-64 ELF"},
    {0x30, false, 4, 0x06006404, "a cubin for sm_100"},
    {0x3C, false, 2, 200, "section headers past the end"},
    {0x3E, false, 2, 3, "a string table index past the sections"},
    {128 + 0x20, true, 8, 0 /* set below: past the file's end */, "a text section past the end"},
    {128 + 0x20, true, 8, N_INSNS * 16 - 8, "a text size not a whole number of instructions"},
    {64 + 0x20, true, 8, UINT64_MAX, "a string table of absurd size"},
    {128, true, 4, sizeof strtab + 5, "a section name past the string table"},
};

static void test_refusals(void)
{
    size_t len = make_elf(elf, N_INSNS);
    fill(elf);
    CHECK(jg__sass_ffma_reuse(NULL, len, "k", 16) == -1, "NULL cubin");
    CHECK(jg__sass_ffma_reuse(elf, len, NULL, 16) == -1, "NULL kernel");
    expect_refused(elf, len, "kernel", "a kernel of another name");
    expect_refused(elf, len, "", "an empty name");
    expect_refused(elf, len, "kernel2x", "a longer name");
    expect_refused(elf, len, "kerne", "a prefix of .text.kernel2 (no such section)");
    for (size_t i = 0; i < JG_ARRAY_LEN(bad_fields); ++i) {
        make_elf(elf, N_INSNS);
        fill(elf);
        uint8_t *at = elf + bad_fields[i].at + (bad_fields[i].in_sh ? TEXT_OFF + N_INSNS * 16 : 0);
        const uint64_t v = bad_fields[i].value ? bad_fields[i].value : len - TEXT_OFF + 16;
        for (int b = 0; b < bad_fields[i].width; ++b)
            at[b] = (uint8_t)(v >> 8 * b);
        expect_refused(elf, len, "k", bad_fields[i].why);
    }
    /* every truncation: refused or edited within bounds, never a crash */
    make_elf(elf, N_INSNS);
    fill(elf);
    int refused = 0;
    for (size_t cut = 0; cut < len; ++cut) {
        uint8_t *t = malloc(cut ? cut : 1);
        memcpy(t, elf, cut);
        refused += jg__sass_ffma_reuse(t, cut, "k", 16) == -1;
        free(t);
    }
    CHECK(refused == (int)len, "%d of %zu truncations refused (the section table is at the end)",
          refused, len);
}

int main(void)
{
    test_marks();
    test_refusals();
    return jg_test_result("sass_patch");
}
