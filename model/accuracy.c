/* The accuracy tier of a path's logits (accuracy.h). */
#include "model/accuracy.h"

#include <math.h>
#include <stdio.h>

/* Element i of a row held as float64 (r64) or else as float (r32). */
static double ref_at(const double *r64, const float *r32, int64_t i)
{
    return r64 ? r64[i] : (double)r32[i];
}

/* log sum_i e^(x_i - xmax) of such a row (float64). */
static double log_sum_exp(const double *r64, const float *r32, int64_t vocab, double xmax)
{
    double s = 0.0;
    for (int64_t i = 0; i < vocab; i++)
        s += exp(ref_at(r64, r32, i) - xmax);
    return log(s);
}

q35_logit_tier q35_logit_tier_of(const float *ours, const double *ref_f64, const float *ref_f32, int64_t n,
                                 int64_t vocab)
{
    q35_logit_tier t = {.kl_worst_at = -1};
    for (int64_t p = 0; p < n; p++) {
        const float *z = ours + p * vocab;
        const double *r64 = ref_f64 ? ref_f64 + p * vocab : NULL;
        const float *r32 = ref_f64 ? NULL : ref_f32 + p * vocab;
        t.n++;
        double zmax = -INFINITY, rmax = -INFINITY, d2 = 0.0, r2 = 0.0;
        int64_t za = 0, ra = 0;
        int finite = 1;
        for (int64_t i = 0; i < vocab; i++) {
            const double a = z[i], b = ref_at(r64, r32, i);
            if (!isfinite(a) || !isfinite(b)) {
                finite = 0;
                break;
            }
            if (a > zmax)
                zmax = a, za = i;
            if (b > rmax)
                rmax = b, ra = i;
            d2 += (a - b) * (a - b);
            r2 += b * b;
        }
        if (!finite) {
            t.nonfinite++;
            continue;
        }
        t.top1_same += za == ra;
        const double l2 = r2 > 0.0 ? sqrt(d2 / r2) : (d2 > 0.0 ? INFINITY : 0.0);
        t.rel_l2_mean += l2;
        if (l2 > t.rel_l2_worst)
            t.rel_l2_worst = l2;
        const double lz = log_sum_exp(NULL, z, vocab, zmax), lr = log_sum_exp(r64, r32, vocab, rmax);
        double kl = 0.0;
        for (int64_t i = 0; i < vocab; i++) {
            const double log_r = ref_at(r64, r32, i) - rmax - lr, log_z = (double)z[i] - zmax - lz;
            kl += exp(log_r) * (log_r - log_z);
        }
        kl = kl > 0.0 ? kl : 0.0; /* >= 0 in exact arithmetic; rounding can leave -1e-17 */
        t.kl_mean += kl;
        if (t.kl_worst_at < 0 || kl > t.kl_worst)
            t.kl_worst = kl, t.kl_worst_at = p;
    }
    const int64_t counted = t.n - t.nonfinite;
    if (counted > 0)
        t.rel_l2_mean /= (double)counted, t.kl_mean /= (double)counted;
    return t;
}

const char *q35_logit_tier_line(const q35_logit_tier *t, char *buf, int cap)
{
    snprintf(buf, (size_t)cap,
             "rel L2 <= %.1e (mean %.1e), top-1 %lld/%lld, KL <= %.1e (mean %.1e) nats%s", t->rel_l2_worst,
             t->rel_l2_mean, (long long)t->top1_same, (long long)t->n, t->kl_worst, t->kl_mean,
             t->nonfinite ? ", NON-FINITE positions" : "");
    return buf;
}

double q35_fp8_tier_l2(int n_layer)
{
    return 0.05 * sqrt((double)(n_layer > 1 ? n_layer : 1));
}

double q35_fp8_tier_kl(int n_layer)
{
    return 2.5e-4 * (double)(n_layer > 1 ? n_layer : 1);
}
