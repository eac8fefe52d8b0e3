/* Per-head L2 normalisation of the DeltaNet q and k heads (SPEC §2.2):
 *
 *     y[i] = x[i] / sqrt(sum_j x[j]^2 + eps)
 *
 * The rows form walks T rows of `heads` heads of n values at a row stride (the q
 * and k sections of each conv output row). */
#ifndef Q35_KERNELS_L2NORM_H
#define Q35_KERNELS_L2NORM_H

#include "kernels/cuda.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* float64 reference: one head of n values. y may alias x. */
void q35_ref_l2norm(double *y, const double *x, int64_t n, double eps);

/* CUDA, the rows form, in place: for r < rows and h < heads, the head of n
 * values at x + r*row_stride + h*n. Device pointer. n in 1..1048576. */
int q35_l2norm_rows(float *x, int64_t n, int64_t heads, int64_t rows, int64_t row_stride, float eps,
                    q35_stream stream, q35_error *err);

/* CUDA, the per-token form: the heads of one row (rows = 1). */
int q35_l2norm(float *x, int64_t n, int64_t heads, float eps, q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_L2NORM_H */
