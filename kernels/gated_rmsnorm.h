/* Gated RMSNorm of one DeltaNet value head (the `ssm_norm` of SPEC §2.6):
 *
 *     y[i] = o[i] / sqrt(mean_j(o[j]^2) + eps) * w[i] * silu(z[i]),   silu(x) = x / (1 + e^-x)
 *
 * w (ssm_norm, dv values) is shared by every head and carries NO +1. The rows
 * form covers T * Hv heads. */
#ifndef Q35_KERNELS_GATED_RMSNORM_H
#define Q35_KERNELS_GATED_RMSNORM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* float64 reference: one head of n values. y may alias o. */
void q35_ref_gated_rmsnorm(double *y, const double *o, const double *z, const double *w, int64_t n, double eps);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_GATED_RMSNORM_H */
