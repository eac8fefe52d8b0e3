/* Gated RMSNorm of one DeltaNet value head (the `ssm_norm` of SPEC §2.6):
 *
 *     y[i] = o[i] / sqrt(mean_j(o[j]^2) + eps) * w[i] * silu(z[i]),   silu(x) = x / (1 + e^-x)
 *
 * w (ssm_norm, dv values) is shared by every head and carries NO +1. The rows
 * form covers T * Hv heads. */
#ifndef Q35_KERNELS_GATED_RMSNORM_H
#define Q35_KERNELS_GATED_RMSNORM_H

#include "kernels/cuda.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* float64 reference: one head of n values. y may alias o. */
void q35_ref_gated_rmsnorm(double *y, const double *o, const double *z, const double *w, int64_t n, double eps);

/* CUDA, the rows form: T tokens of `heads` heads of n; o and y contiguous
 * [T*heads][n] (y may be o); z of token t, head h at z + t*z_stride + h*n (the
 * z slice of a merged projection's output, read in place; z_stride >=
 * heads*n, else refused); w [n]; device pointers. n in 1..1048576. Any
 * alignment (rows not on 16 bytes take scalar loads: the same bits). */
int q35_gated_rmsnorm_rows(float *y, const float *o, const float *z, int64_t z_stride, const float *w, int64_t n,
                           int64_t heads, int64_t T, float eps, q35_stream stream, q35_error *err);

/* CUDA, the rows form with f16 out (ssm_out's rounded input on the f16 GEMM
 * path): y16 [T*heads][n] IEEE half bits, each the f32 y above rounded to
 * nearest even (bitwise: the same arithmetic, one rounding at the store). */
int q35_gated_rmsnorm_rows_f16(uint16_t *y16, const float *o, const float *z, int64_t z_stride, const float *w,
                               int64_t n, int64_t heads, int64_t T, float eps, q35_stream stream, q35_error *err);

/* The FP8-out form, q35_gated_rmsnorm_rows_fp8, is an experiment
 * (kernels/experiments/gated_rmsnorm_fp8.h): slower than this f32 form and
 * q35_fp8_quantize_rows, which the model's fp8 path runs. */

/* CUDA, the per-token form: `heads` heads of one token, o, z and y [heads][n]
 * (the rows form at T = 1, z_stride = heads*n: the same bits). */
int q35_gated_rmsnorm(float *y, const float *o, const float *z, const float *w, int64_t n, int64_t heads, float eps,
                      q35_stream stream, q35_error *err);

/* CUDA, the per-token form with its 8-bit form (a decode step's
 * 8-bit-activation GEMV's input, kernels/gemv_q8.h): y bitwise
 * q35_gated_rmsnorm's (y may be o) and xq bitwise q35_gemv_q8_quantize(xq,
 * y, heads * n)'s, in one launch (where n is a multiple of 32, 8 heads a
 * block at n <= 511, a head a block past it; else one block). heads * n a
 * multiple of 32, at most 24576
 * (Q35_FP8_ROW_MAX); xq 16-byte aligned; refused otherwise. */
int q35_gated_rmsnorm_q8(float *y, void *xq, const float *o, const float *z, const float *w, int64_t n, int64_t heads,
                         float eps, q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_GATED_RMSNORM_H */
