/* The DeltaNet gates of one token (SPEC §2.3), per value head j:
 *
 *     g[j]    = softplus(alpha[j] + dt[j]) * a[j]      softplus(x) = log(1 + e^x), = x for x > 20
 *     beta[j] = sigmoid(b[j]) = 1 / (1 + e^-b[j])
 *
 * alpha = ssm_alpha . h, b = ssm_beta . h; dt = ssm_dt.bias; a = ssm_a, already
 * -exp(A_log) (negative; never exponentiated again). g < 0 is the log decay. */
#ifndef Q35_KERNELS_GATES_H
#define Q35_KERNELS_GATES_H

#include "kernels/cuda.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* float64 reference: one token of hv heads. */
void q35_ref_gates(double *g, double *beta, const double *alpha, const double *b, const double *dt, const double *a,
                   int64_t hv);

/* CUDA, the rows form: g, beta [T][hv]; alpha, b rows at in_stride floats
 * (alpha[t][j] = alpha + t*in_stride + j: slices of a merged projection's
 * output, read in place; in_stride >= hv, else refused); dt, a [hv]; device
 * pointers. */
int q35_gates_rows(float *g, float *beta, const float *alpha, const float *b, int64_t in_stride, const float *dt,
                   const float *a, int64_t hv, int64_t T, q35_stream stream, q35_error *err);

/* CUDA, the per-token form (T = 1, alpha and b [hv]). */
int q35_gates(float *g, float *beta, const float *alpha, const float *b, const float *dt, const float *a, int64_t hv,
              q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_GATES_H */
