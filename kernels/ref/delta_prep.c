/* float64 reference of kernels/delta_prep.h: the three references it fuses,
 * in order. */
#include "kernels/delta_prep.h"
#include "kernels/conv1d.h"
#include "kernels/gates.h"
#include "kernels/l2norm.h"

void q35_ref_delta_prep(double *out, double *g, double *beta, double *win, const double *mix, int64_t alpha_col,
                        int64_t b_col, const double *conv_w, const double *dt, const double *a, q35_delta_prep_dims d,
                        double eps)
{
    q35_ref_conv1d_silu(out, win, mix, conv_w, d.conv_dim, d.K);
    for (int64_t h = 0; h < 2 * d.hk; h++)
        q35_ref_l2norm(out + h * d.dk, out + h * d.dk, d.dk, eps);
    q35_ref_gates(g, beta, mix + alpha_col, mix + b_col, dt, a, d.hv);
}
