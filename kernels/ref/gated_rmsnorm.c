/* float64 reference of kernels/gated_rmsnorm.h. */
#include "kernels/gated_rmsnorm.h"
#include "kernels/pointwise.h"

#include <math.h>

void q35_ref_gated_rmsnorm(double *y, const double *o, const double *z, const double *w, int64_t n, double eps)
{
    double ss = 0.0;
    for (int64_t i = 0; i < n; i++)
        ss += o[i] * o[i];
    const double inv = 1.0 / sqrt(ss / (double)n + eps);
    for (int64_t i = 0; i < n; i++)
        y[i] = o[i] * inv * w[i] * q35_ref_silu(z[i]);
}
