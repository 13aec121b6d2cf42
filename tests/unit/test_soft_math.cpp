/* The soft loads' own code (templates/sm90_soft.cuh, its functions copied
 * out at build time), run on the CPU: 128 threads, one pthread each, as
 * the producer warpgroup, over a shared-memory array; cp.async is a copy
 * with its zero fill, a warp's __shfl_down_sync and __syncwarp meet at a
 * barrier of its 32 threads. Each box (8-byte pieces where the pointer
 * and rows allow them, else aligned 16-byte chunks shifted into place)
 * must equal what TMA would load into a 128B-swizzled box: the matrix's
 * bytes where its rows and columns reach, zeros elsewhere. Every byte read
 * must lie in the 16-byte chunks that hold the matrix's rows (no fault
 * where TMA would read nothing). Random shapes, row strides, pointer
 * offsets (to the element), box origins, box rows (8 to 192, multiples of
 * 16 or not), element sizes 1, 2 and 4; seed printed. Half the 4-byte
 * boxes are rounded to TF32 as TF32 kernels do (8-byte pieces by
 * jg_soft_round_tf32, chunks by their shift): each value of the box
 * rounded. The rounding and the shifts read only copies the thread made
 * itself (a shift takes its neighbour's chunk by shuffles). */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jg_kargs.h"

#define JG_EXTRACT_SHIMS /* the test's own shims below */
#define JG_DEV static inline

namespace {

constexpr int kThreads = 128;
constexpr uint32_t kSmemBytes = 64 * 1024;
uint8_t g_smem[kSmemBytes];

/* The matrix's allocation and the bytes any copy may read. */
const uint8_t *g_lo, *g_hi;
int g_bad_reads;

/* The thread whose cp.async wrote each byte; while g_own_only, a shared
 * access to a byte another thread copied counts in g_foreign. */
uint8_t g_writer[kSmemBytes];
bool g_own_only;
int g_foreign;

thread_local struct {
    unsigned x;
} threadIdx;

pthread_barrier_t g_warp_bar[kThreads / 32];
uint32_t g_shfl[kThreads / 32][32];

void warp_sync() { pthread_barrier_wait(&g_warp_bar[threadIdx.x / 32]); }

void __syncwarp() { warp_sync(); }

uint32_t __shfl_down_sync(unsigned, uint32_t v, int d)
{
    const unsigned w = threadIdx.x / 32, l = threadIdx.x % 32;
    g_shfl[w][l] = v;
    warp_sync();
    const uint32_t r = l + (unsigned)d < 32 ? g_shfl[w][l + d] : v;
    warp_sync();
    return r;
}

/* A warp's shuffle of 4 words: each a shuffle of its own. */
struct uint4 {
    uint32_t x, y, z, w;
};

uint32_t __funnelshift_r(uint32_t lo, uint32_t hi, uint32_t shift)
{
    return (uint32_t)(((uint64_t)hi << 32 | lo) >> (shift & 31));
}

/* cp.async of `size` bytes, `bytes` of them read, the rest zeros. */
void cp_async(uint32_t dst, const void *src, uint32_t bytes, uint32_t size)
{
    const uint8_t *s = (const uint8_t *)src;
    if (bytes && (s < g_lo || s + bytes > g_hi))
        __atomic_add_fetch(&g_bad_reads, 1, __ATOMIC_RELAXED);
    for (uint32_t i = 0; i < size; ++i) {
        g_smem[dst + i] = i < bytes ? s[i] : 0;
        g_writer[dst + i] = (uint8_t)threadIdx.x;
    }
}

void jg_cp_async_8(uint32_t dst, const void *src, uint32_t bytes) { cp_async(dst, src, bytes, 8); }
void jg_cp_async_16(uint32_t dst, const void *src, uint32_t bytes)
{
    if (dst % 16 || (uintptr_t)src % 16)
        __atomic_add_fetch(&g_bad_reads, 1, __ATOMIC_RELAXED); /* cp.async's alignment rule */
    cp_async(dst, src, bytes, 16);
}

void own_only(uint32_t addr)
{
    for (uint32_t i = 0; g_own_only && i < 4; ++i)
        if (g_writer[addr + i] != threadIdx.x)
            __atomic_add_fetch(&g_foreign, 1, __ATOMIC_RELAXED);
}

void jg_st_shared_b32(uint32_t addr, uint32_t v)
{
    own_only(addr);
    memcpy(&g_smem[addr], &v, 4);
}

uint32_t jg_ld_shared_b32(uint32_t addr)
{
    own_only(addr);
    uint32_t v;
    memcpy(&v, &g_smem[addr], 4);
    return v;
}

/* The delta bytes: written by lane 7 of a group, read by its 8 lanes
 * after __syncwarp (not cp.async copies: no ownership check). */
void jg_st_shared_u8(uint32_t addr, uint8_t v) { g_smem[addr] = v; }

uint32_t jg_ld_shared_u8(uint32_t addr) { return g_smem[addr]; }

uint4 jg_ld_shared_v4(uint32_t addr)
{
    uint4 v;
    for (uint32_t i = 0; i < 4; ++i)
        own_only(addr + 4 * i);
    memcpy(&v, &g_smem[addr], 16);
    return v;
}

void jg_st_shared_v4(uint32_t addr, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    const uint32_t v[4] = {a, b, c, d};
    for (uint32_t i = 0; i < 4; ++i)
        own_only(addr + 4 * i);
    memcpy(&g_smem[addr], v, 16);
}

uint32_t __float_as_uint(float x)
{
    uint32_t u;
    memcpy(&u, &x, 4);
    return u;
}

float __uint_as_float(uint32_t u)
{
    float x;
    memcpy(&x, &u, 4);
    return x;
}

/* cvt.rna.tf32.f32's rounding (to nearest, ties away): half a unit of the
 * 10th significand bit added, the 13 bits below cleared; NaN and
 * infinity kept. */
uint32_t tf32_rna_bits(uint32_t u)
{
    if ((u & 0x7f800000u) != 0x7f800000u)
        u += 0x1000u;
    return u & 0xffffe000u;
}

float jg_tf32_rna(float x) { return __uint_as_float(tf32_rna_bits(__float_as_uint(x))); }

#include "shift_math.h"
#include "soft_math.h"

/* ---- the test ------------------------------------------------------------ */

uint64_t g_rng;

uint64_t next()
{
    g_rng ^= g_rng << 13;
    g_rng ^= g_rng >> 7;
    g_rng ^= g_rng << 17;
    return g_rng;
}

uint64_t below(uint64_t n) { return next() % n; }

struct Box {
    uint32_t mode;
    int size, rows; /* element bytes, box rows */
    bool tf32;      /* 4-byte elements rounded to TF32 after the copies */
    jg_soft_map m;
    int32_t c0, c1;
};

const Box *g_box;

/* One thread of the producer warpgroup: its copies, then (after a
 * barrier of all: the copies have landed) its warp's shifts. */
template <int SIZE, int ROWS>
void thread_box(const Box &b)
{
    const uint32_t dst = 0, side = 32 * 1024;
    jg_soft_box<SIZE, ROWS>(b.mode, dst, side, b.m, b.c0, b.c1);
}

template <int SIZE, int ROWS>
void thread_shift(bool tf32)
{
    __syncwarp();
    g_own_only = true; /* the thread's own copies, its neighbours' by shuffles */
    if (tf32)
        jg_soft_shift<SIZE, ROWS, true>(0, 32 * 1024);
    else
        jg_soft_shift<SIZE, ROWS, false>(0, 32 * 1024);
}

pthread_barrier_t g_all;

template <int SIZE, int ROWS>
void run_box(const Box &b, bool shift)
{
    shift ? thread_shift<SIZE, ROWS>(b.tf32) : thread_box<SIZE, ROWS>(b);
}

template <int SIZE>
void run_rows(const Box &b, bool shift)
{
    switch (b.rows) {
    case 8:
        run_box<SIZE, 8>(b, shift);
        break;
    case 24:
        run_box<SIZE, 24>(b, shift);
        break;
    case 64:
        run_box<SIZE, 64>(b, shift);
        break;
    case 192:
        run_box<SIZE, 192>(b, shift);
        break;
    default:
        run_box<SIZE, 128>(b, shift);
    }
}

/* A thread's TF32 rounding of the box, reading only its own copies (no
 * barrier before it in the kernel: the thread's wait_group suffices). */
void run_round(const Box &b)
{
    g_own_only = true;
    if (b.rows == 8)
        jg_soft_round_tf32<8>(b.mode, 0, 1, 0);
    else if (b.rows == 24)
        jg_soft_round_tf32<24>(b.mode, 0, 1, 0);
    else if (b.rows == 64)
        jg_soft_round_tf32<64>(b.mode, 0, 1, 0);
    else if (b.rows == 192)
        jg_soft_round_tf32<192>(b.mode, 0, 1, 0);
    else
        jg_soft_round_tf32<128>(b.mode, 0, 1, 0);
}

void *thread_main(void *arg)
{
    threadIdx.x = (unsigned)(uintptr_t)arg;
    const Box &b = *g_box;
    for (int phase = 0; phase < 2; ++phase) {
        if (b.tf32 && b.mode == JG_SOFT_P8) { /* the copies, then the rounding */
            if (phase == 0)
                run_rows<4>(b, false);
            else
                run_round(b);
            pthread_barrier_wait(&g_all);
            continue;
        }
        if (phase == 1 && b.mode != JG_SOFT_WORDS)
            break;
        if (b.size == 1)
            run_rows<1>(b, phase == 1);
        else if (b.size == 2)
            run_rows<2>(b, phase == 1);
        else
            run_rows<4>(b, phase == 1);
        pthread_barrier_wait(&g_all);
    }
    return nullptr;
}

/* What TMA would load: (r, byte) of the box at jg_swz128's place. */
bool check_box(const Box &b, const uint8_t *matrix, char *why, size_t len)
{
    for (int r = 0; r < b.rows; ++r)
        for (uint32_t byte = 0; byte < 128; ++byte) {
            const int64_t row = (int64_t)b.c1 + r, col = b.c0 + byte / b.size;
            const bool in = row < b.m.rows && col < b.m.cols;
            uint8_t want = in ? matrix[(row * b.m.ld + col) * b.size + byte % b.size] : 0;
            if (b.tf32 && in) { /* the element's byte after rounding */
                uint32_t u;
                memcpy(&u, &matrix[(row * b.m.ld + col) * 4], 4);
                u = tf32_rna_bits(u);
                want = (uint8_t)(u >> (8 * (byte % 4)));
            }
            const uint8_t got = g_smem[jg_swz128((uint32_t)r, byte)];
            if (got != want) {
                snprintf(why, len, "row %d byte %u: got 0x%02x, want 0x%02x", r, byte, got, want);
                return false;
            }
        }
    return true;
}

} // namespace

int main(int argc, char **argv)
{
    const uint64_t seed = argc > 2 && !strcmp(argv[1], "--seed") ? strtoull(argv[2], nullptr, 0)
                                                                 : (uint64_t)time(nullptr);
    printf("soft_math: seed %llu (replay: --seed %llu)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    g_rng = seed * 2654435761u + 1;
    for (int w = 0; w < kThreads / 32; ++w)
        pthread_barrier_init(&g_warp_bar[w], nullptr, 32);
    pthread_barrier_init(&g_all, nullptr, kThreads);
    int failures = 0, boxes = 0, words = 0, pieces = 0, rounded = 0;
    static const int sizes[] = {1, 2, 4}, box_rows[] = {8, 24, 64, 128, 192};
    for (int iter = 0; iter < 600; ++iter) {
        Box b;
        b.size = sizes[below(3)];
        b.rows = box_rows[below(5)];
        b.tf32 = b.size == 4 && below(2);
        const int64_t rows = 1 + (int64_t)below(300), cols = 1 + (int64_t)below(400);
        b.m.rows = (int32_t)rows;
        b.m.cols = (int32_t)cols;
        b.m.ld = cols + (int64_t)(below(3) ? below(12) : 0);
        /* the pointer: any element offset from a 16-byte aligned allocation */
        const size_t bytes = (size_t)(rows * b.m.ld) * b.size;
        const size_t offset = below(16 / b.size) * b.size;
        uint8_t *buf = (uint8_t *)aligned_alloc(16, (bytes + offset + 64 + 15) / 16 * 16);
        for (size_t i = 0; i < bytes + offset + 64; ++i)
            buf[i] = (uint8_t)next();
        const uint8_t *matrix = buf + offset;
        b.m.ptr = matrix;
        /* what may be read: the 16-byte chunks holding the rows' bytes */
        g_lo = (const uint8_t *)((uintptr_t)matrix & ~(uintptr_t)15);
        g_hi = (const uint8_t *)(((uintptr_t)(matrix + ((rows - 1) * b.m.ld + cols) * b.size) +
                                  15) & ~(uintptr_t)15);
        /* box origins as the kernel's: columns in whole 128-byte atoms, rows anywhere */
        b.c0 = (int32_t)(below(cols * b.size / 128 + 2) * (128 / b.size));
        b.c1 = (int32_t)below(rows + 8);
        const bool p8 = ((uintptr_t)matrix | (uint64_t)b.m.ld * b.size) % 8 == 0;
        for (int mode = JG_SOFT_P8; mode <= JG_SOFT_WORDS; ++mode) {
            if (mode == JG_SOFT_P8 && !p8)
                continue;
            b.mode = (uint32_t)mode;
            memset(g_smem, 0xA5, sizeof g_smem); /* poison: an unwritten byte shows */
            memset(g_writer, 0xff, sizeof g_writer);
            g_bad_reads = g_foreign = 0;
            g_own_only = false;
            g_box = &b;
            pthread_t th[kThreads];
            for (int t = 0; t < kThreads; ++t)
                pthread_create(&th[t], nullptr, thread_main, (void *)(uintptr_t)t);
            for (int t = 0; t < kThreads; ++t)
                pthread_join(th[t], nullptr);
            char why[128];
            ++boxes;
            (mode == JG_SOFT_P8 ? pieces : words)++;
            const bool ok = check_box(b, matrix, why, sizeof why);
            rounded += b.tf32;
            if (!ok || g_bad_reads || g_foreign) {
                if (++failures <= 10)
                    fprintf(stderr,
                            "box %d (%s, %d-byte elements%s, %d rows; matrix %lldx%lld ld %lld, "
                            "pointer +%zu, origin (%d, %d)): %s%s%s\n",
                            iter, mode == JG_SOFT_P8 ? "8-byte pieces" : "words", b.size,
                            b.tf32 ? " rounded to TF32" : "", b.rows, (long long)rows,
                            (long long)cols, (long long)b.m.ld, offset, b.c0, b.c1,
                            ok ? "" : why, g_bad_reads ? " (reads outside the rows)" : "",
                            g_foreign ? " (rounding touched another thread's copies)" : "");
            }
        }
        free(buf);
    }
    printf("soft_math: %d boxes (%d of 8-byte pieces, %d of words; %d rounded to TF32), "
           "%d wrong\n", boxes, pieces, words, rounded, failures);
    return failures ? 1 : 0;
}
