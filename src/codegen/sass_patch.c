/* Post-compile edits of a kernel's SASS in the cubin NVRTC returns.
 *
 * One edit so far: the FP8 block-scale promotions keep their scale in the
 * operand-reuse cache. Those kernels promote the tensor cores' partial sums
 * with long straight runs of FFMAs (64 per thread per stage at 128x128
 * tiles), each `acc = partial * scale + acc` with the same scale register as
 * operand b. ptxas marks only every other FFMA of such a run to keep the
 * scale in the reuse cache; the others read it from the register file,
 * where it meets a bank conflict with the accumulator or the partial sum.
 * The edit marks every FFMA whose successor reads the same register as
 * operand b (H100, 2026-11-22: block-scale rows 1-4% faster, in
 * bench/RESULTS.md; tensor and row scales promote by FADD, their scales
 * applied in the epilogue, so their kernels have nothing to edit). The other
 * edit tried, letting every FFMA of a run yield (DeepGEMM's FFMA
 * interleaving: reuse flags cleared), was 2-4% slower here.
 *
 * sm_90 encoding, as cuobjdump prints it (test_sass compares the two): 16
 * bytes per instruction, little endian; the low word's bits 0..11 are the
 * opcode (0x223: FFMA R, R, R; 0x823 an immediate, 0xa23 a constant bank,
 * 0x423 a constant as the third operand), bits 16..23 the destination, 24..31
 * operand a, 32..39 operand b (255: RZ); in the high word, bits 58..61 are
 * the reuse flags of operands a..d and bit 45 set means "do not yield" (a
 * warp must not switch away while it keeps a reuse cache). A reuse flag on
 * operand b of an instruction lets the next one read that register from the
 * cache; the register must not change in between, so the edit skips an
 * FFMA that writes its own operand b, and predicated FFMAs (bits 12..15 not
 * PT: whether one that does not run still fills the cache is not known
 * here). Nothing in the cubin moves. Only
 * cubins for sm_90 (EM_CUDA, e_flags bits 8..15 = 90) are edited: another
 * encoding is refused, and the kernel runs as compiled. */
#include <stdint.h>
#include <string.h>

#include "codegen/codegen.h"

#define SASS_INSN_BYTES 16
#define SASS_NO_YIELD (UINT64_C(1) << 45)
#define SASS_REUSE_B (UINT64_C(1) << 59)
#define SASS_RZ 255
#define SASS_PT 7 /* the guard predicate field (bits 12..15): PT, always true */
#define SASS_EM_CUDA 190
#define SASS_SM 90

static uint64_t rd64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; --i)
        v = v << 8 | p[i];
    return v;
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint16_t rd16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }

static void wr64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; ++i, v >>= 8)
        p[i] = (uint8_t)v;
}

static bool is_ffma(uint64_t lo)
{
    switch (lo & 0xFFF) {
    case 0x223: /* R, R, R */
    case 0x423: /* R, R, c[][] */
    case 0x823: /* R, imm, R */
    case 0xA23: /* R, c[][], R */
        return true;
    default:
        return false;
    }
}

/* Finds section `.text.<kernel>` of a 64-bit little-endian ELF: its file
 * offset and size, checked against the buffer. */
static bool find_text(const uint8_t *elf, size_t len, const char *kernel, size_t *off,
                      size_t *size)
{
    /* a CUDA ELF (e_machine 190) for sm_90 (e_flags bits 8..15): the only
     * encoding the edit knows */
    if (len < 64 || memcmp(elf, "\x7f" "ELF", 4) || elf[4] != 2 /* 64-bit */ ||
        elf[5] != 1 /* little endian */ || rd16(elf + 0x12) != SASS_EM_CUDA ||
        ((rd32(elf + 0x30) >> 8) & 0xFF) != SASS_SM)
        return false;
    const uint64_t shoff = rd64(elf + 0x28);
    const uint16_t shentsize = rd16(elf + 0x3A), shnum = rd16(elf + 0x3C),
                   shstrndx = rd16(elf + 0x3E);
    if (shentsize < 64 || shstrndx >= shnum || shoff > len ||
        (uint64_t)shnum * shentsize > len - shoff)
        return false;
    const uint8_t *strsh = elf + shoff + (size_t)shstrndx * shentsize;
    const uint64_t str_off = rd64(strsh + 0x18), str_size = rd64(strsh + 0x20);
    if (str_off > len || str_size > len - str_off)
        return false;
    const size_t klen = strlen(kernel);
    for (uint16_t i = 0; i < shnum; ++i) {
        const uint8_t *sh = elf + shoff + (size_t)i * shentsize;
        const uint32_t name = rd32(sh);
        const uint64_t s_off = rd64(sh + 0x18), s_size = rd64(sh + 0x20);
        if (name >= str_size)
            continue;
        const char *nm = (const char *)elf + str_off + name;
        const size_t room = (size_t)(str_size - name);
        if (room < 6 + klen + 1 || memcmp(nm, ".text.", 6) || memcmp(nm + 6, kernel, klen) ||
            nm[6 + klen])
            continue;
        if (s_off > len || s_size > len - s_off || s_size % SASS_INSN_BYTES)
            return false;
        *off = (size_t)s_off;
        *size = (size_t)s_size;
        return true;
    }
    return false;
}

int jg__sass_ffma_reuse(uint8_t *cubin, size_t len, const char *kernel, uint32_t min_run)
{
    size_t off, size;
    if (!cubin || !kernel || !find_text(cubin, len, kernel, &off, &size))
        return -1;
    uint8_t *text = cubin + off;
    const size_t n = size / SASS_INSN_BYTES;
    int changed = 0;
    for (size_t i = 0; i < n;) {
        if (!is_ffma(rd64(text + i * SASS_INSN_BYTES))) {
            ++i;
            continue;
        }
        size_t end = i;
        while (end < n && is_ffma(rd64(text + end * SASS_INSN_BYTES)))
            ++end;
        if (end - i >= min_run)
            for (size_t j = i; j + 1 < end; ++j) {
                const uint64_t lo = rd64(text + j * SASS_INSN_BYTES);
                const uint64_t lo2 = rd64(text + (j + 1) * SASS_INSN_BYTES);
                if ((lo & 0xFFF) != 0x223 || (lo2 & 0xFFF) != 0x223 ||
                    ((lo >> 12) & 0xF) != SASS_PT || ((lo2 >> 12) & 0xF) != SASS_PT)
                    continue;
                const uint32_t rb = (uint32_t)(lo >> 32) & 0xFF, rd = (uint32_t)(lo >> 16) & 0xFF;
                if (rb != ((uint32_t)(lo2 >> 32) & 0xFF) || rb == rd || rb == SASS_RZ)
                    continue;
                uint8_t *hi_at = text + j * SASS_INSN_BYTES + 8;
                const uint64_t hi = rd64(hi_at);
                const uint64_t want = hi | SASS_REUSE_B | SASS_NO_YIELD;
                if (want != hi) {
                    wr64(hi_at, want);
                    ++changed;
                }
            }
        i = end;
    }
    return changed;
}

int jg__sass_edit(const jg__gemm_key *key, const char *kernel, jg__buf *cubin)
{
    if (!key->cfg.ffma_reuse)
        return 0;
    return jg__sass_ffma_reuse((uint8_t *)cubin->data, cubin->len, kernel, JG_SASS_FFMA_MIN_RUN);
}
