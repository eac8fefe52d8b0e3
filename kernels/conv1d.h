/* Causal depthwise conv1d + SiLU of the DeltaNet input (SPEC §2.1), per channel c
 * with a window of the K-1 previous PRE-activation inputs, oldest first:
 *
 *     y[c] = silu( sum_{j<K-1} win[c][j] * w[c][j]  +  u[c] * w[c][K-1] )
 *     win[c] <- (win[c][1], ..., win[c][K-2], u[c])
 *
 * w is ssm_conv1d {K, C}: row c holds channel c's K taps, w[c][K-1] multiplies
 * the current token. The rows form runs T tokens in order, the window advancing
 * in place, and leaves it where T per-token steps leave it. */
#ifndef Q35_KERNELS_CONV1D_H
#define Q35_KERNELS_CONV1D_H

#include "kernels/cuda.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* float64 reference: one token over `channels` channels. win [channels][K-1], w [channels][K]. */
void q35_ref_conv1d_silu(double *y, double *win, const double *u, const double *w, int64_t channels, int K);

/* CUDA, the rows form: T tokens; u [T][in_stride] (the first `channels` of each
 * row), y [T][out_stride], win [channels][K-1] (advanced in place), w [channels][K];
 * device pointers, y distinct from u and win. Every (token, channel) output is
 * computed with the per-token expression; the window is then moved on by T.
 * K in 2..8. */
int q35_conv1d_silu_rows(float *y, int64_t out_stride, float *win, const float *u, int64_t in_stride, const float *w,
                         int64_t channels, int K, int64_t T, q35_stream stream, q35_error *err);

/* CUDA, the per-token form: one token (T = 1). */
int q35_conv1d_silu(float *y, float *win, const float *u, const float *w, int64_t channels, int K, q35_stream stream,
                    q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_CONV1D_H */
