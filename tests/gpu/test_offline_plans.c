/* Offline plans against the GPU's: a build box's `jitgemm-warm --arch
 * sm_90a` fills the disk cache with the kernels an offline context plans,
 * and a serving process on the GPU looks up the kernels its device context
 * plans. Where the two differ, the process compiles on its hot path what
 * the warm-up was meant to have built. For random dense problems (BF16,
 * FP16, FP8 with tensor, row and block scales; baked and M-generic), the
 * device context's kernel (jg_gemm_kernel_id: no compiling) must be the one
 * an offline context for the same SM count names.
 *
 *   test_offline_plans --dims bench/model-dims.json [--seed S] [--count N]
 *
 * The problems are jitgemm-bench --random's (tools/random_draw.c, a fifth
 * of them M-generic with the Python package's hints), in the classes in
 * turn.
 * The device's resident clusters (JITGEMM_LOG=plan prints them) are what
 * the offline target assumes for sm_90a at 132 SMs (src/runtime/context.c);
 * a GPU whose GPCs hold other counts fails here, naming the problems whose
 * plans moved. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jg_test_gpu.h"
#include "random_draw.h"

/* A drawn problem in one of the dense classes (BF16, FP16, FP8 with
 * tensor, row or block scales); M-generic where the draw gave a hint. */
static jg_gemm_problem problem_of(const random_problem *r, size_t cls)
{
    static const struct {
        jg_dtype ab;
        jg_scale_mode scale;
    } classes[] = {
        {JG_BF16, JG_SCALE_NONE}, {JG_FP16, JG_SCALE_NONE},  {JG_E4M3, JG_SCALE_TENSOR},
        {JG_E4M3, JG_SCALE_ROW},  {JG_E4M3, JG_SCALE_BLOCK},
    };
    const size_t c = cls % (sizeof classes / sizeof classes[0]);
    jg_gemm_problem p;
    memset(&p, 0, sizeof p);
    p.a_type = p.b_type = classes[c].ab;
    p.scale = classes[c].scale;
    p.d_type = JG_BF16;
    p.m = r->generic_hint ? r->generic_hint : r->m;
    p.n = r->n;
    p.k = r->k;
    p.lda = p.ldb = p.k;
    p.ldd = p.n;
    if (r->generic_hint)
        p.flags |= JG_GEMM_M_GENERIC;
    return p;
}

int main(int argc, char **argv)
{
    const char *dims_file = argc > 2 && !strcmp(argv[1], "--dims") ? argv[2] : NULL;
    random_dims dims;
    char err[256];
    if (!dims_file) {
        fprintf(stderr, "usage: %s --dims MODEL-DIMS.json [--seed S] [--count N]\n", argv[0]);
        return 2;
    }
    if (random_dims_load(dims_file, &dims, err, sizeof err) != 0) {
        fprintf(stderr, "offline_plans: %s\n", err);
        return 1;
    }
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

    random_problem *drawn = calloc((size_t)count, sizeof *drawn);
    if (!drawn)
        return 1;
    random_draw(seed, &dims, count, 0.2, true, drawn);
    int differ = 0;
    for (int i = 0; i < count; ++i) {
        const jg_gemm_problem p = problem_of(&drawn[i], (size_t)i);
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
    free(drawn);
    random_dims_free(&dims);
    jg_context_destroy(off);
    jg_context_destroy(gpu);
    return jg_test_result("offline_plans");
}
