/* RMSNorm over one vector of n (a row of the residual stream, or one head):
 *
 *     y[i] = x[i] / sqrt(mean_j(x[j]^2) + eps) * w[i]
 *
 * The zero-centred norms of Qwen3.5 carry their +1 inside w already (SPEC §1).
 * The rows form applies it to `rows` consecutive vectors sharing w (per-head
 * RMSNorm is the rows form with n = head_dim, rows = T * heads). */
#ifndef Q35_KERNELS_RMSNORM_H
#define Q35_KERNELS_RMSNORM_H

#include "kernels/cuda.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* float64 reference: one vector. y may alias x. */
void q35_ref_rmsnorm(double *y, const double *x, const double *w, int64_t n, double eps);

/* float64 reference of the fused form: x += r, then y = rmsnorm(x) * w. */
void q35_ref_add_rmsnorm(double *y, double *x, const double *r, const double *w, int64_t n, double eps);

/* CUDA, the rows form: rows vectors of n at x (y may be x), w [n]; device
 * pointers. One block per row, its reduction order fixed by n alone, so each
 * row's bits are those of the per-token form. n in 1..1048576. */
int q35_rmsnorm_rows(float *y, const float *x, const float *w, int64_t n, int64_t rows, float eps, q35_stream stream,
                     q35_error *err);

/* CUDA, the per-token form: one vector (the rows form with rows = 1). */
int q35_rmsnorm(float *y, const float *x, const float *w, int64_t n, float eps, q35_stream stream, q35_error *err);

/* CUDA, the residual add fused with the RMSNorm after it: for each of rows
 * vectors of n, x += r (the residual stream, in place), then y = rmsnorm(x) * w.
 * Bitwise q35_residual_add_rows(x, r, n, rows) then q35_rmsnorm_rows(y, x, w,
 * n, rows) (the same adds, the same reduction order), in one launch and one
 * pass fewer over x. y must not alias x or r. The model's residual norms
 * (model/cuda_layers.c: each sublayer's add deferred into the next norm). */
int q35_add_rmsnorm_rows(float *y, float *x, const float *r, const float *w, int64_t n, int64_t rows, float eps,
                         q35_stream stream, q35_error *err);

/* CUDA, f16 out (the next f16 GEMM's rounded input, kernels/gemm.h's x16):
 * y16 [rows][n] IEEE half bits, each the f32 y of the form above rounded to
 * nearest even (bitwise: the same arithmetic, one rounding at the store), no
 * f32 y written; the fused form still adds into x. y16 must not alias x or r. */
int q35_rmsnorm_rows_f16(uint16_t *y16, const float *x, const float *w, int64_t n, int64_t rows, float eps,
                         q35_stream stream, q35_error *err);
int q35_add_rmsnorm_rows_f16(uint16_t *y16, float *x, const float *r, const float *w, int64_t n, int64_t rows,
                             float eps, q35_stream stream, q35_error *err);

/* CUDA, one token with its 8-bit form (a decode step's 8-bit-activation
 * GEMVs' input, kernels/gemv_q8.h): y [n] bitwise q35_rmsnorm's (the fused
 * form: x += r too, bitwise q35_add_rmsnorm_rows' at one row) and xq bitwise
 * q35_gemv_q8_quantize(xq, y, n)'s, in one launch (a block, the row staged in
 * shared memory; the plain form from 1024 values with y apart from x: a block
 * a span of 512, each computing the whole row's sum as the one block does).
 * n a multiple of 32 in 32..24576 (Q35_FP8_ROW_MAX), xq 16-byte
 * aligned; refused otherwise. y may be x in the plain form, not in the fused. */
int q35_rmsnorm_q8(float *y, void *xq, const float *x, const float *w, int64_t n, float eps, q35_stream stream,
                   q35_error *err);
int q35_add_rmsnorm_q8(float *y, void *xq, float *x, const float *r, const float *w, int64_t n, float eps,
                       q35_stream stream, q35_error *err);

/* CUDA, FP8 out (the next FP8 GEMM's input, kernels/fp8.h): e4m3 codes
 * q [rows][n] and one f32 scale a row, scale [rows], bitwise
 * q35_fp8_quantize_rows(q, scale, y, rows, n, n) of the f32 y the form above
 * computes (the same arithmetic; no f32 y written), in one launch: a block a
 * row, the row's y kept in shared memory for its amax and its codes. The fused
 * form still adds into x (bitwise the f32 form's x); q must not alias x or r.
 * n in 1..Q35_FP8_ROW_MAX (24576, kernels/fp8.h), refused beyond. Bytes a row:
 * 4n read (x) + n + 4 written (codes, scale), against 8n + 5n + 4 for the f32
 * form and q35_fp8_quantize_rows (the fused form: 8n read, 4n + n + 4 written,
 * against 16n + 5n + 4); w (4n) is shared by every row; past 4096 values the
 * rest of x (the sum) is read a second time, from cache, as the f32 form does.
 * Faster than the two launches it replaces (bench/results/index.tsv, family
 * kernels). */
int q35_rmsnorm_rows_fp8(uint8_t *q, float *scale, const float *x, const float *w, int64_t n, int64_t rows, float eps,
                         q35_stream stream, q35_error *err);
int q35_add_rmsnorm_rows_fp8(uint8_t *q, float *scale, float *x, const float *r, const float *w, int64_t n,
                             int64_t rows, float eps, q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_RMSNORM_H */
