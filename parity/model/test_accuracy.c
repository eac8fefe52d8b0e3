/* The accuracy tier of logits (model/accuracy.h) on cases whose answer is
 * known in closed form, and on fresh random logits against a direct float64
 * evaluation of the same definitions (softmax by division, no log-sum-exp). */
#include "parity/lib/harness.h"

#include "core/rng.h"
#include "model/accuracy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* KL(softmax(r) || softmax(z)) the plain way: p = e^x / sum e^x. */
static double kl_direct(const float *z, const double *r, int64_t vocab)
{
    double sz = 0.0, sr = 0.0, kl = 0.0;
    for (int64_t i = 0; i < vocab; i++)
        sz += exp((double)z[i]), sr += exp(r[i]);
    for (int64_t i = 0; i < vocab; i++) {
        const double p = exp(r[i]) / sr, q = exp((double)z[i]) / sz;
        kl += p * log(p / q);
    }
    return kl;
}

static void closed_forms(q35_suite *s)
{
    char line[200];
    const float ref[3] = {1.0f, 2.0f, 3.0f};
    q35_logit_tier t = q35_logit_tier_of(ref, NULL, ref, 1, 3);
    q35_case(s, t.n == 1 && t.rel_l2_worst == 0.0 && t.kl_worst == 0.0 && t.top1_same == 1 && t.nonfinite == 0,
             "identical logits: %s", q35_logit_tier_line(&t, line, sizeof line));

    const float shifted[3] = {6.0f, 7.0f, 8.0f};
    t = q35_logit_tier_of(shifted, NULL, ref, 1, 3);
    q35_case(s, t.kl_worst < 1e-15 && t.top1_same == 1 && fabs(t.rel_l2_worst - sqrt(75.0 / 14.0)) < 1e-12,
             "a constant shift costs no KL, rel L2 sqrt(75/14): %s", q35_logit_tier_line(&t, line, sizeof line));

    /* p_ref = (1/2, 1/2), p = (3/4, 1/4): KL = ln(4/3) / 2 */
    const float two_ref[2] = {0.0f, 0.0f}, two[2] = {(float)log(3.0), 0.0f};
    t = q35_logit_tier_of(two, NULL, two_ref, 1, 2);
    q35_case(s, fabs(t.kl_worst - 0.5 * log(4.0 / 3.0)) < 1e-7, /* ln 3 rounded to f32: ~1e-8 */
             "two classes, (1/2, 1/2) against (3/4, 1/4): KL %.9f, want ln(4/3)/2 = %.9f", t.kl_worst,
             0.5 * log(4.0 / 3.0));

    const float reversed[3] = {3.0f, 2.0f, 1.0f};
    t = q35_logit_tier_of(reversed, NULL, ref, 1, 3);
    q35_case(s, t.top1_same == 0 && t.kl_worst > 0.5, "argmax moved: top-1 0/1, KL %.3f", t.kl_worst);

    const double big[2] = {1000.0, 0.0};
    const float bigf[2] = {1000.0f, 0.0f};
    t = q35_logit_tier_of(bigf, big, NULL, 1, 2);
    q35_case(s, t.nonfinite == 0 && t.kl_worst == 0.0 && isfinite(t.kl_mean),
             "logits of 1000 (e^1000 overflows): finite, KL 0: %s", q35_logit_tier_line(&t, line, sizeof line));
}

static void nonfinite_and_worst(q35_suite *s)
{
    char line[200];
    /* three positions: equal, a NaN, a shifted softmax (the worst) */
    const float ref[9] = {0, 1, 2, 0, 1, 2, 0, 1, 2};
    float ours[9] = {0, 1, 2, 0, NAN, 2, 2, 1, 0};
    q35_logit_tier t = q35_logit_tier_of(ours, NULL, ref, 3, 3);
    q35_case(s, t.n == 3 && t.nonfinite == 1 && t.kl_worst_at == 2 && t.top1_same == 1 &&
                    fabs(t.kl_mean - t.kl_worst / 2.0) < 1e-15,
             "a NaN position counted apart, left out of the means; the worst KL at position 2: %s",
             q35_logit_tier_line(&t, line, sizeof line));
    ours[4] = 1.0f;
    const double inf_ref[3] = {0.0, INFINITY, 1.0};
    t = q35_logit_tier_of(ours, inf_ref, NULL, 1, 3);
    q35_case(s, t.nonfinite == 1 && t.kl_worst_at == -1, "an Inf in the reference: non-finite, no worst position");
}

static void random_rows(q35_suite *s, uint64_t seed)
{
    enum { N = 16, V = 2000 };
    q35_rng r;
    q35_rng_seed(&r, seed);
    float *z = malloc(sizeof(float) * N * V), *rf = malloc(sizeof(float) * N * V);
    double *rd = malloc(sizeof(double) * N * V);
    for (int64_t i = 0; i < N * V; i++) {
        rd[i] = 4.0 * q35_rng_normal_fast(&r);
        rf[i] = (float)rd[i];
        z[i] = (float)(rd[i] + 0.05 * q35_rng_normal_fast(&r));
    }
    const q35_logit_tier t = q35_logit_tier_of(z, rd, NULL, N, V), t32 = q35_logit_tier_of(z, NULL, rf, N, V);
    double worst_err = 0.0, mean = 0.0;
    int64_t worst_at = 0;
    double worst = -1.0;
    for (int p = 0; p < N; p++) {
        const double kl = kl_direct(z + p * V, rd + p * V, V);
        mean += kl / N;
        if (kl > worst)
            worst = kl, worst_at = p;
    }
    worst_err = fabs(t.kl_worst - worst) / worst;
    char line[200];
    q35_case(s, worst_err < 1e-9 && fabs(t.kl_mean - mean) / mean < 1e-9 && t.kl_worst_at == worst_at,
             "16 random rows of 2000 logits (sd 4, noise 0.05): KL as the direct float64 sum (rel err %.1e): %s",
             worst_err, q35_logit_tier_line(&t, line, sizeof line));
    q35_case(s, fabs(t32.kl_worst - t.kl_worst) / t.kl_worst < 1e-4 && t32.top1_same == t.top1_same,
             "the same against the reference rounded to f32: KL %.6e vs %.6e", t32.kl_worst, t.kl_worst);
    free(z), free(rf), free(rd);
}

int main(void)
{
    const uint64_t seed = q35_test_seed();
    q35_suite s;
    q35_suite_begin(&s, "accuracy tier of logits (rel L2, top-1, KL)", seed);
    closed_forms(&s);
    nonfinite_and_worst(&s);
    random_rows(&s, seed);
    return q35_suite_end(&s);
}
