/* float64 reference of kernels/gates.h. */
#include "kernels/gates.h"
#include "kernels/pointwise.h"

#include <math.h>

void q35_ref_gates(double *g, double *beta, const double *alpha, const double *b, const double *dt, const double *a,
                   int64_t hv)
{
    for (int64_t j = 0; j < hv; j++) {
        const double x = alpha[j] + dt[j];
        const double softplus = x > 20.0 ? x : log1p(exp(x));
        g[j] = softplus * a[j];
        beta[j] = q35_ref_sigmoid(b[j]);
    }
}
