/* float64 reference of kernels/rmsnorm.h. */
#include "kernels/pointwise.h"
#include "kernels/rmsnorm.h"

#include <math.h>

void q35_ref_rmsnorm(double *y, const double *x, const double *w, int64_t n, double eps)
{
    double ss = 0.0;
    for (int64_t i = 0; i < n; i++)
        ss += x[i] * x[i];
    const double inv = 1.0 / sqrt(ss / (double)n + eps);
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] * inv * w[i];
}

void q35_ref_add_rmsnorm(double *y, double *x, const double *r, const double *w, int64_t n, double eps)
{
    q35_ref_residual_add(x, r, n);
    q35_ref_rmsnorm(y, x, w, n, eps);
}
