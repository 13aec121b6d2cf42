/* Cache keys: fixed-layout bytes, zeroed then filled, hashed with XXH3-128
 * together with everything else that decides the cubin. Keys hold no
 * pointers and no paths, so a cache built on one machine serves another. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <xxhash.h>

#include "codegen/codegen.h"

/* Everything a dense problem and a grouped one share, with packed leading
 * dimensions filled in; the rows are the caller's. */
#define JG_KEY_SHARED(out, p)                                                                      \
    do {                                                                                           \
        memset((out), 0, sizeof *(out));                                                           \
        (out)->flags = (p)->flags;                                                                 \
        (out)->a_type = (uint32_t)(p)->a_type;                                                     \
        (out)->b_type = (uint32_t)(p)->b_type;                                                     \
        (out)->c_type = (uint32_t)(p)->c_type;                                                     \
        (out)->d_type = (uint32_t)(p)->d_type;                                                     \
        (out)->n = (p)->n;                                                                         \
        (out)->k = (p)->k;                                                                         \
        (out)->ldb = (p)->ldb ? (p)->ldb : ((p)->flags & JG_GEMM_B_N_MAJOR) ? (p)->n : (p)->k;     \
        (out)->ldd = (p)->ldd ? (p)->ldd : (p)->n;                                                 \
        (out)->ldc = (p)->c_type == JG_DTYPE_NONE ? 0 : ((p)->ldc ? (p)->ldc : (p)->n);            \
    } while (0)

void jg__problem_key_make(const jg_gemm_problem *p, jg__problem_key *out)
{
    JG_KEY_SHARED(out, p);
    out->lda = p->lda ? p->lda : (p->flags & JG_GEMM_A_M_MAJOR) ? p->m : p->k;
    out->m = p->m;
    /* An M-major A of one column with adjacent elements ([K, 1], lda 1) is
     * the K-major [1, K] one, byte for byte, and likewise an N-major B of
     * one column: keyed as K-major, TMA reads one row of K elements rather
     * than K rows of one (decode with x given as x^T ran at 0.05-0.10 of
     * the K-major kernel on H200). The row stride of a single row is
     * never used; it is set to 16-byte rows. */
    if ((out->flags & JG_GEMM_A_M_MAJOR) && p->m == 1 && out->lda == 1 &&
        !(out->flags & JG_GEMM_M_GENERIC)) {
        out->flags &= ~(uint32_t)JG_GEMM_A_M_MAJOR;
        out->lda = (p->k + 7) / 8 * 8;
    }
    if ((out->flags & JG_GEMM_B_N_MAJOR) && p->n == 1 && out->ldb == 1) {
        out->flags &= ~(uint32_t)JG_GEMM_B_N_MAJOR;
        out->ldb = (p->k + 7) / 8 * 8;
    }
    out->scale = (uint32_t)p->scale;
    if (p->a_type == JG_NVFP4 || p->b_type == JG_NVFP4) { /* read only then: 0.2 callers */
        out->a_sf_layout = (uint32_t)p->a_sf_layout;
        out->b_sf_layout = (uint32_t)p->b_sf_layout;
    }
}

/* List layout: the rows of every group (baked in), their total as m (what
 * the planner sizes). Contiguous and masked: m_max, and as m the expected
 * total rows (the hints, else m_max for contiguous and groups * m_max for
 * masked), which only size tiles. */
void jg__grouped_key_make(const jg_grouped_problem *p, jg__problem_key *out)
{
    JG_KEY_SHARED(out, p);
    out->lda = p->lda ? p->lda : p->k;
    out->scale = (uint32_t)p->scale;
    out->groups = (uint32_t)p->groups;
    out->layout = (uint32_t)p->layout;
    if (p->a_type == JG_NVFP4 || p->b_type == JG_NVFP4) { /* read only then: 0.3 callers */
        out->a_sf_layout = (uint32_t)p->a_sf_layout;
        out->b_sf_layout = (uint32_t)p->b_sf_layout;
    }
    if (p->layout == JG_GROUPED_LIST) {
        for (int32_t g = 0; g < p->groups; ++g) {
            out->group_m[g] = p->m[g];
            out->m += p->m[g];
        }
        return;
    }
    out->m_max = p->m_max;
    /* The hints also size the tiles per group: each group's last tile is
     * part empty, and how many tiles the rows make decides the waves (2
     * groups of 512 rows make 4 tiles of 128 as 128 + 384 rows, 5 as 192 +
     * 320). Rounded up to 64 rows, the planner's granularity, so that hints
     * a few rows apart share a plan. Past the list layout's most groups
     * (the device layouts allow more), only their total. */
    if (p->m)
        for (int32_t g = 0; g < p->groups; ++g) {
            const int64_t rows = p->groups <= JG_GROUPED_MAX_GROUPS ? (p->m[g] + 63) / 64 * 64
                                                                    : p->m[g];
            out->m += rows;
            if (p->groups <= JG_GROUPED_MAX_GROUPS)
                out->group_m[g] = rows;
        }
    else
        out->m = p->layout == JG_GROUPED_MASKED ? p->groups * p->m_max : p->m_max;
}

/* Leading dimensions live in the tensor maps and kernel arguments, not in
 * the code: they are left out of the kernel key. */
void jg__gemm_key_make(const jg__problem_key *p, const jg__gemm_config *cfg, jg__gemm_key *out)
{
    memset(out, 0, sizeof *out);
    out->key_format = JG_KEY_FORMAT;
    out->kind = p->groups ? 2 : 1;
    out->a_type = p->a_type;
    out->b_type = p->b_type;
    out->c_type = p->c_type;
    out->d_type = p->d_type;
    /* grouped: cfg.pre says the workspace; B's layout shapes code */
    out->flags = p->flags & (p->groups ? JG_GEMM_B_N_MAJOR : JG_KEY_CODE_FLAGS);
    out->scale = p->scale;
    out->a_sf_layout = p->a_sf_layout;
    out->b_sf_layout = p->b_sf_layout;
    out->m = p->groups || (p->flags & JG_GEMM_M_GENERIC) ? 0 : p->m;
    out->n = p->n;
    out->k = p->k;
    out->cfg = *cfg;
    out->groups = p->groups;
    out->layout = p->layout;
    /* The device layouts' kernels do not depend on the rows' hints. */
    if (p->layout == JG_GROUPED_LIST)
        memcpy(out->group_m, p->group_m, sizeof out->group_m);
}

/* A leading dimension of `bytes` per row (ld times the element size):
 * TMA takes it when a multiple of 16. */
static bool tma_rows(int64_t ld, uint32_t dtype)
{
    return ((uint64_t)ld * jg__dtype_bits(dtype)) % 128 == 0;
}

uint32_t jg__problem_soft(const jg__problem_key *p)
{
    const bool any = (p->flags & JG_GEMM_UNALIGNED) != 0;
    const bool exact = !p->groups && (p->flags & JG_GEMM_FP32_EXACT);
    uint32_t soft = 0;
    if (!exact && !(p->packed & JG_SOFT_A) && (any || !tma_rows(p->lda, p->a_type)))
        soft |= JG_SOFT_A;
    if (!exact && !(p->packed & JG_SOFT_B) && (any || !tma_rows(p->ldb, p->b_type)))
        soft |= JG_SOFT_B;
    if (any || !tma_rows(p->ldd, p->d_type))
        soft |= JG_SOFT_D;
    return soft;
}

/* What every quantization key holds: the source type and the columns
 * (baked in); rows and leading dimensions are arguments. */
static void quant_key(const jg_quant_problem *p, uint32_t kind, jg_dtype dst, jg__gemm_key *out)
{
    memset(out, 0, sizeof *out);
    out->key_format = JG_KEY_FORMAT;
    out->kind = kind;
    out->a_type = (uint32_t)p->src_type;
    out->d_type = (uint32_t)dst;
    out->n = p->cols;
}

/* e4m3: also the scale mode and the block rows. */
void jg__quant_e4m3_key_make(const jg_quant_problem *p, jg__gemm_key *out)
{
    quant_key(p, JG_KIND_QUANT, JG_E4M3, out);
    out->scale = (uint32_t)p->scale;
    out->cfg.block_m = (uint32_t)p->block_rows;
}

/* NVFP4: also the scale layout. */
void jg__quant_nvfp4_key_make(const jg_quant_problem *p, jg__gemm_key *out)
{
    quant_key(p, JG_KIND_QUANT_NVFP4, JG_NVFP4, out);
    out->scale = JG_SCALE_NVFP4;
    out->a_sf_layout = (uint32_t)p->sf_layout;
}

jg__salt jg__salt_make(const char *arch, const char *backend_id)
{
    char text[512];
    jg__hash128 templates = jg__templates_hash();
    int n = snprintf(text, sizeof text, "libjitgemm %s|%s|%s|sass %d|templates %016llx%016llx",
                     JITGEMM_VERSION_STRING, backend_id, arch, JG_SASS_PATCH_VERSION,
                     (unsigned long long)templates.hi, (unsigned long long)templates.lo);
    XXH128_hash_t h = XXH3_128bits(text, (size_t)n);
    jg__salt s = {{h.low64, h.high64}};
    return s;
}

/* Keys are small fixed structs, hashed from one stack buffer. */
#define JG_KEY_MAX 1024
_Static_assert(sizeof(jg__gemm_key) <= JG_KEY_MAX, "grow JG_KEY_MAX");
_Static_assert(sizeof(jg__problem_key) <= JG_KEY_MAX, "grow JG_KEY_MAX");

jg__hash128 jg__key_hash(const jg__salt *salt, const void *key, size_t key_len)
{
    unsigned char buf[16 + JG_KEY_MAX];
    if (key_len > JG_KEY_MAX) /* unreachable for the asserted key structs */
        key_len = JG_KEY_MAX;
    uint64_t s[2] = {salt->h.lo, salt->h.hi};
    memcpy(buf, s, sizeof s);
    memcpy(buf + sizeof s, key, key_len);
    XXH128_hash_t h = XXH3_128bits(buf, sizeof s + key_len);
    jg__hash128 out = {h.low64, h.high64};
    return out;
}

void jg__hash_hex(jg__hash128 h, char out[33])
{
    snprintf(out, 33, "%016llx%016llx", (unsigned long long)h.hi, (unsigned long long)h.lo);
}

static pthread_once_t templates_once = PTHREAD_ONCE_INIT;
static jg__hash128 templates_hash;

/* Folds every embedded template, name and text, into one running hash:
 * h = XXH3-128(h, hash(name), hash(text)) per template, in embedding order. */
static void templates_hash_compute(void)
{
    uint64_t state[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < jg__templates_count; ++i) {
        state[2] = XXH3_64bits(jg__templates[i].name, strlen(jg__templates[i].name));
        state[3] = XXH3_64bits(jg__templates[i].text, jg__templates[i].len);
        XXH128_hash_t h = XXH3_128bits(state, sizeof state);
        state[0] = h.low64;
        state[1] = h.high64;
    }
    templates_hash.lo = state[0];
    templates_hash.hi = state[1];
}

jg__hash128 jg__templates_hash(void)
{
    pthread_once(&templates_once, templates_hash_compute);
    return templates_hash;
}

const jg__template *jg__template_find(const char *name)
{
    for (size_t i = 0; i < jg__templates_count; ++i)
        if (!strcmp(jg__templates[i].name, name))
            return &jg__templates[i];
    return NULL;
}
