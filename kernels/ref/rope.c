/* float64 reference of kernels/rope.h. */
#include "kernels/rope.h"

#include <math.h>

void q35_ref_rope_neox(double *x, int heads, int head_dim, int n_rot, int64_t pos, double base)
{
    const int half = n_rot / 2;
    for (int i = 0; i < half; i++) {
        const double theta = (double)pos * pow(base, -2.0 * i / n_rot);
        const double c = cos(theta), s = sin(theta);
        for (int h = 0; h < heads; h++) {
            double *xh = x + (int64_t)h * head_dim;
            const double a = xh[i], b = xh[i + half];
            xh[i] = a * c - b * s;
            xh[i + half] = a * s + b * c;
        }
    }
}
