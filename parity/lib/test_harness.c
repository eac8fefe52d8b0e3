/* The harness's own comparisons: bitwise diffs report the first differing index,
 * the count and the ULP distance (across zero and signs too); the tolerance
 * metrics and the NaN rule behave as SPEC §4 defines them. */
#include "harness.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    q35_suite s;
    q35_suite_begin(&s, "parity harness: bitwise diffs and tolerance metrics", 0);
    float a[5] = {1.0f, 2.0f, -0.0f, 3.0f, 5.0f}, b[5];
    memcpy(b, a, sizeof a);
    q35_bitcmp c = q35_bitwise_f32(a, b, 5);
    q35_case(&s, c.equal && c.first == -1 && c.n_diff == 0, "equal arrays: bitwise equal");
    b[1] = nextafterf(2.0f, 3.0f);
    b[4] = nextafterf(nextafterf(5.0f, 0.0f), 0.0f);
    c = q35_bitwise_f32(a, b, 5);
    q35_case(&s, !c.equal && c.first == 1 && c.n_diff == 2 && c.ulp == 1 && c.a == 2.0,
             "two changed: first [1], 2 differ, 1 ulp");
    memcpy(b, a, sizeof a);
    b[2] = 0.0f; /* -0 vs +0: different bits, no value between them */
    c = q35_bitwise_f32(a, b, 5);
    q35_case(&s, !c.equal && c.first == 2 && c.ulp == 0, "-0 vs +0: differ in bits, 0 ulp apart");
    const float neg = -nextafterf(0.0f, 1.0f), pos = nextafterf(0.0f, 1.0f);
    c = q35_bitwise_f32(&neg, &pos, 1);
    q35_case(&s, c.ulp == 2, "smallest negative vs smallest positive subnormal: 2 ulp (%llu)", (unsigned long long)c.ulp);
    const double x = 1.0, y = nextafter(nextafter(nextafter(1.0, 2.0), 2.0), 2.0);
    c = q35_bitwise_f64(&x, &y, 1);
    q35_case(&s, c.ulp == 3 && c.first == 0, "float64: 3 ulp");

    const double ref[4] = {1.0, -2.0, 3.0, 4.0};
    double got[4] = {1.0, -2.0, 3.0, 4.4};
    q35_cmp m = q35_compare_f64(got, ref, 4);
    q35_case(&s, fabs(m.rel_linf - 0.1) < 1e-15 && fabs(m.rel_l2 - 0.4 / sqrt(30.0)) < 1e-15 && m.argmax_a == 3 &&
                     m.argmax_b == 3 && m.nonfinite == 0,
             "rel Linf = max|a-b|/max|b| = 0.1, rel L2 = |a-b|/|b| = %.6f, argmax", m.rel_l2);
    got[0] = NAN;
    m = q35_compare_f64(got, ref, 4);
    q35_case(&s, m.nonfinite == 1 && !(m.rel_linf <= 1.0) && m.cosine == 0.0, "a NaN never passes");
    const float f[2] = {1.0f, INFINITY};
    const double fr[2] = {1.0, 1.0};
    m = q35_compare_f32_f64(f, fr, 2);
    q35_case(&s, m.nonfinite == 1 && !(m.rel_l2 <= 1e300), "an infinity never passes");
    return q35_suite_end(&s);
}
