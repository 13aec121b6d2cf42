/* Offline plans against the GPU's: a build box's `jitgemm-warm --arch
 * sm_90a` fills the disk cache with the kernels an offline context plans,
 * and a serving process on the GPU looks up the kernels its device context
 * plans. Where the two differ, the process compiles on its hot path what
 * the warm-up was meant to have built. For random dense problems (BF16,
 * FP16, FP8 with tensor, row and block scales; baked and M-generic), the
 * device context's kernel (jg_gemm_kernel_id: no compiling) must be the one
 * an offline context for the same SM count names.
 *
 *   test_offline_plans [--seed S] [--count N]
 *
 * The device's resident clusters (JITGEMM_LOG=plan prints them) are what
 * the offline target assumes for sm_90a at 132 SMs (src/runtime/context.c);
 * a GPU whose GPCs hold other counts fails here, naming the problems whose
 * plans moved. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "jg_test_gpu.h"

/* Log-uniform in [lo, hi]. */
static int64_t log_uniform(jg_rng *r, double lo, double hi)
{
    return (int64_t)floor(exp(log(lo) + jg_rng_uniform(r) * (log(hi + 1) - log(lo))));
}

/* N and K: a model dimension most of the time, else a multiple of 16. */
static int64_t dim(jg_rng *r)
{
    static const int64_t dims[] = {1024,  1408,  1536,  2048,  2560,  2816,  2880,  3072,
                                   3584,  4096,  4608,  5120,  5760,  6144,  7168,  8192,
                                   10240, 10944, 11008, 12288, 13824, 14336, 16384, 18432,
                                   20480, 22016, 24576, 25600, 27648, 28672};
    if (jg_rng_below(r, 4))
        return dims[jg_rng_below(r, sizeof dims / sizeof dims[0])];
    return 16 * (64 + (int64_t)jg_rng_below(r, 1729)); /* 1024 .. 28672 */
}

static jg_gemm_problem draw(jg_rng *r)
{
    static const struct {
        jg_dtype ab;
        jg_scale_mode scale;
    } classes[] = {
        {JG_BF16, JG_SCALE_NONE}, {JG_FP16, JG_SCALE_NONE},  {JG_E4M3, JG_SCALE_TENSOR},
        {JG_E4M3, JG_SCALE_ROW},  {JG_E4M3, JG_SCALE_BLOCK},
    };
    const size_t c = jg_rng_below(r, sizeof classes / sizeof classes[0]);
    jg_gemm_problem p;
    memset(&p, 0, sizeof p);
    p.a_type = p.b_type = classes[c].ab;
    p.scale = classes[c].scale;
    p.d_type = JG_BF16;
    p.m = log_uniform(r, 1, 16384);
    p.n = dim(r);
    p.k = dim(r);
    p.lda = p.ldb = p.k;
    p.ldd = p.n;
    if (jg_rng_below(r, 5) == 0)
        p.flags |= JG_GEMM_M_GENERIC;
    return p;
}

int main(int argc, char **argv)
{
    jg_test_gpu_init();
    const uint64_t seed = jg_test_seed(argc, argv, "offline_plans");
    const int count = jg_test_count(argc, argv, 2000);
    jg_context *gpu = jg_test_context();
    int sms = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    jg_options o;
    memset(&o, 0, sizeof o);
    o.flags = JG_CONTEXT_OFFLINE | JG_CONTEXT_WORKSPACE;
    o.arch = "sm_90a";
    o.sm_count = sms;
    o.cache_mode = JG_CACHE_OFF;
    jg_context *off = NULL;
    JG_REQUIRE(NULL, jg_context_create(&o, &off));

    jg_rng r;
    jg_rng_seed(&r, seed);
    int differ = 0;
    for (int i = 0; i < count; ++i) {
        const jg_gemm_problem p = draw(&r);
        jg_kernel_id on_gpu, offline;
        JG_REQUIRE(gpu, jg_gemm_kernel_id(gpu, &p, &on_gpu));
        JG_REQUIRE(off, jg_gemm_kernel_id(off, &p, &offline));
        if (strcmp(on_gpu.name, offline.name) ||
            memcmp(on_gpu.key_hash, offline.key_hash, sizeof on_gpu.key_hash)) {
            if (differ < 20)
                fprintf(stderr, "m=%lld n=%lld k=%lld %s scale %d%s: GPU %s, offline %s\n",
                        (long long)p.m, (long long)p.n, (long long)p.k,
                        p.a_type == JG_E4M3 ? "e4m3" : jg_test_dtype_str(p.a_type), (int)p.scale,
                        p.flags & JG_GEMM_M_GENERIC ? " M-generic" : "", on_gpu.name, offline.name);
            ++differ;
        }
    }
    CHECK(differ == 0, "%d of %d problems plan another kernel offline (%d SMs)", differ, count,
          sms);
    printf("offline_plans: %d problems, %d SMs, %d planned apart\n", count, sms, differ);
    jg_context_destroy(off);
    jg_context_destroy(gpu);
    return jg_test_result("offline_plans");
}
