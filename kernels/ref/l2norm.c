/* float64 reference of kernels/l2norm.h. */
#include "kernels/l2norm.h"

#include <math.h>

void q35_ref_l2norm(double *y, const double *x, int64_t n, double eps)
{
    double ss = 0.0;
    for (int64_t i = 0; i < n; i++)
        ss += x[i] * x[i];
    const double inv = 1.0 / sqrt(ss + eps);
    for (int64_t i = 0; i < n; i++)
        y[i] = x[i] * inv;
}
