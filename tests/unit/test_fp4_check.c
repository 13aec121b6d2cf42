/* The NVFP4 GPU tests' element check (tests/common/jg_test_nvfp4.h) on the
 * host: references past D's range must come back as infinity of their sign
 * (an FP16 output of large sums with C did, and the check called the kernel
 * wrong: test_grouped_nvfp4 seed 1795369049), within the bound of the
 * threshold either value passes, and everything else keeps its bound. */
#include "jg_test_nvfp4.h"

static int failures;

/* One FP16 element `got` checked against `ref`, a non-exact check whose
 * bound is ~ref's rounding (K = 1, sum_abs = |ref|). */
static void one(float got, double ref, bool want_ok, bool want_norm_ok, const char *what)
{
    uint16_t bits = jg_f32_to_f16(got);
    jg_mat d = {.type = JG_FP16, .rows = 1, .cols = 1, .ld = 1, .bytes = 2, .host = &bits};
    fp4_check ck;
    fp4_check_init(&ck, JG_FP16, false, 1);
    fp4_check_element(&ck, &d, 0, 0, 0, 0, ref, fabs(ref), 1.0, 0.0, 0.0);
    const bool ok = ck.bad == 0, norm_ok = fp4_check_ok(&ck);
    printf("%s %-44s got %g, ref %g: element %s, norm %s\n",
           ok == want_ok && norm_ok == want_norm_ok ? "ok  " : "FAIL", what, (double)got, ref,
           ok ? "ok" : "bad", norm_ok ? "ok" : "bad");
    failures += ok != want_ok || norm_ok != want_norm_ok;
}

int main(void)
{
    one(-INFINITY, -75441.3, true, true, "past the range: -inf");
    one(-65504.0f, -75441.3, false, false, "past the range: the largest finite");
    one(INFINITY, -75441.3, false, false, "past the range: inf of the other sign");
    one(INFINITY, 65515.0, true, true, "within the bound of the threshold: inf");
    one(65504.0f, 65515.0, true, true, "within the bound of the threshold: finite");
    one(1.0f, 1.0, true, true, "in range, exact");
    one(1.5f, 1.0, false, false, "in range, off");
    one(INFINITY, 1.0, false, false, "in range: inf");
    return failures ? 1 : 0;
}
