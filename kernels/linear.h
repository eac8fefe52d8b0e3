/* The projection of `rows` activation rows through a linear weight W
 * [n_out][n_in] of any computable quant type (SPEC §2):
 *
 *     y[t][o] = sum_i x[t][i] * W[o][i]
 *
 * Per token a GEMV over the quantized blocks; over a chunk ONE GEMM, Y = X W^T. */
#ifndef Q35_KERNELS_LINEAR_H
#define Q35_KERNELS_LINEAR_H

#include "core/quant.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* float64 reference: W dequantized row by row (ggml's dequantizer), each dot
 * product accumulated in float64 in one fixed order (four interleaved partial sums), output rows split over threads.
 * y [rows][n_out], x [rows][n_in]. Returns -1 only when out of memory. */
int q35_ref_linear(double *y, const double *x, q35_type type, const void *w, int64_t n_out, int64_t n_in,
                   int64_t rows);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_LINEAR_H */
