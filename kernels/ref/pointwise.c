/* float64 references of kernels/pointwise.h. */
#include "kernels/pointwise.h"

#include <math.h>

double q35_ref_silu(double x)
{
    return x / (1.0 + exp(-x));
}

double q35_ref_sigmoid(double x)
{
    return 1.0 / (1.0 + exp(-x));
}

void q35_ref_swiglu(double *y, const double *g, const double *u, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        y[i] = q35_ref_silu(g[i]) * u[i];
}

void q35_ref_sigmoid_gate(double *o, const double *gate, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        o[i] *= q35_ref_sigmoid(gate[i]);
}

void q35_ref_residual_add(double *x, const double *p, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] += p[i];
}

void q35_ref_split_qgate(double *q, double *gate, const double *full, int heads, int hd)
{
    for (int h = 0; h < heads; h++) {
        for (int i = 0; i < hd; i++) {
            q[h * hd + i] = full[2 * h * hd + i];
            gate[h * hd + i] = full[2 * h * hd + hd + i];
        }
    }
}
