/* Partial NeoX RoPE on the first n_rot dims of each head (SPEC §2 attention.3),
 * for i < n_rot/2 with theta_i = pos * base^(-2i / n_rot):
 *
 *     (x[i], x[i + n_rot/2]) <- (x[i] cos theta_i - x[i + n_rot/2] sin theta_i,
 *                                x[i] sin theta_i + x[i + n_rot/2] cos theta_i)
 *
 * dims n_rot..head_dim-1 pass through. The rows form puts row t at pos0 + t. */
#ifndef Q35_KERNELS_ROPE_H
#define Q35_KERNELS_ROPE_H

#include "kernels/cuda.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* float64 reference: `heads` heads of head_dim values at x, in place. */
void q35_ref_rope_neox(double *x, int heads, int head_dim, int n_rot, int64_t pos, double base);

/* CUDA, the rows form, in place: row t of x (row stride in floats) holds `heads`
 * heads of head_dim at position pos0 + t. The angles are computed in float64
 * (pos * base^(-2i/n_rot), then sincos) and rounded to float once, identically
 * for every row, so long positions keep their accuracy and both forms give the
 * same bits (theta/pi reduced to [-1, 1], then sincospi). head_dim even, n_rot even and <= head_dim, at most 512. */
int q35_rope_neox_rows(float *x, int64_t row_stride, int heads, int head_dim, int n_rot, int64_t pos0, int64_t T,
                       double base, q35_stream stream, q35_error *err);

/* CUDA, the rows form from a position the device holds: row t at *pos_at + t
 * (an int64 in device memory, read when the kernel runs: a launch captured
 * once in a CUDA graph serves every decode step). Bitwise the rows form at
 * that position; the same refusals but the position's. */
int q35_rope_neox_rows_at(float *x, int64_t row_stride, int heads, int head_dim, int n_rot, const int64_t *pos_at,
                          int64_t T, double base, q35_stream stream, q35_error *err);

/* CUDA, the per-token form: one row at pos. */
int q35_rope_neox(float *x, int heads, int head_dim, int n_rot, int64_t pos, double base, q35_stream stream,
                  q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_ROPE_H */
