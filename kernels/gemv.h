/* The per-token projection (SPEC §2): a GEMV straight from the quantized blocks,
 * never dequantizing the whole weight:
 *
 *     y[o] = sum_i x[i] * W[o][i]        W [n][k] of any computable type
 *
 * Each output is reduced in ONE fixed order that depends on k and the type
 * alone. The rows form runs that same per-output reduction for each of T rows
 * (the weight read once per tile of rows): row t of q35_gemv_rows is bitwise
 * q35_gemv on row t, whatever T. It is the deterministic mode's projection; the
 * decode path and the lm_head tail use the per-token form. The float64
 * reference is q35_ref_linear (kernels/linear.h). */
#ifndef Q35_KERNELS_GEMV_H
#define Q35_KERNELS_GEMV_H

#include "kernels/cuda.h"
#include "model/quant.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CUDA, per token: y [n], x [k], w [n] rows of `type`; device pointers. */
int q35_gemv(float *y, const void *w, q35_type type, int64_t n, int64_t k, const float *x, q35_stream stream,
             q35_error *err);

/* CUDA, the batch-invariant rows form: y [T][ldy] (ldy >= n), x [T][k]. */
int q35_gemv_rows(float *y, int64_t ldy, const void *w, q35_type type, int64_t n, int64_t k, const float *x, int64_t T,
                  q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_GEMV_H */
