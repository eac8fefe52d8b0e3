/* Per-head L2 normalisation of the DeltaNet q and k heads (SPEC §2.2):
 *
 *     y[i] = x[i] / sqrt(sum_j x[j]^2 + eps)
 *
 * The rows form walks T rows of `heads` heads of n values at a row stride (the q
 * and k sections of each conv output row). */
#ifndef Q35_KERNELS_L2NORM_H
#define Q35_KERNELS_L2NORM_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* float64 reference: one head of n values. y may alias x. */
void q35_ref_l2norm(double *y, const double *x, int64_t n, double eps);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_L2NORM_H */
