/* float64 reference of kernels/conv1d.h. */
#include "kernels/conv1d.h"
#include "kernels/pointwise.h"

void q35_ref_conv1d_silu(double *y, double *win, const double *u, const double *w, int64_t channels, int K)
{
    for (int64_t c = 0; c < channels; c++) {
        double *wc = win + c * (K - 1);
        const double *tap = w + c * K;
        double acc = 0.0;
        for (int j = 0; j < K - 1; j++)
            acc += wc[j] * tap[j];
        acc += u[c] * tap[K - 1];
        for (int j = 0; j + 1 < K - 1; j++)
            wc[j] = wc[j + 1];
        wc[K - 2] = u[c];
        y[c] = q35_ref_silu(acc);
    }
}
