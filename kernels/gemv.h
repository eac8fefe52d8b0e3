/* The per-token projection (SPEC §2): a GEMV straight from the quantized blocks,
 * never dequantizing the whole weight:
 *
 *     y[o] = sum_i x[i] * W[o][i]        W [n][k] of any computable type
 *
 * Each output is reduced in ONE fixed order that depends on k and the type
 * alone: the row's runs of 16 elements go to 32 lanes in turn (lane l: units l,
 * l + 32, ... of 16 or 32 elements), each lane accumulates its runs in order,
 *     d = sum_j x[j] q[j]   (q the exact integer levels, fused multiply-adds in order)
 *     acc = fma(s, d, acc)  (s the run's scale; Q4_K/Q5_K then acc = fma(-m1, sum_j x[j], acc);
 *                            plain types acc + d),
 * then a fixed butterfly over the lanes. The rows form runs that same per-output
 * reduction for each of T rows (the weight read once per tile of rows): row t of
 * q35_gemv_rows is bitwise q35_gemv on row t, whatever T. It is the deterministic mode's projection; the
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

/* CUDA, per token: y [n], x [k], w [n] rows of `type`; device pointers. w as the
 * GGUF stores it (2-byte aligned; 16-byte alignment with rows of whole 16 bytes
 * gives 16-byte loads to F32, F16, BF16, Q4_K, Q5_K), x 4-byte aligned (16-byte:
 * 16-byte loads). n at most 524280 (65535 blocks of 8 rows). Refuses a type it
 * cannot compute, k not a whole number of the type's blocks, each naming it.
 * Bytes: the weight as stored, once; x and y. */
int q35_gemv(float *y, const void *w, q35_type type, int64_t n, int64_t k, const float *x, q35_stream stream,
             q35_error *err);

/* CUDA, the batch-invariant rows form: y [T][ldy] (ldy >= n; columns n.. are
 * untouched), x [T][k]; T >= 0 (0 does nothing). The weight is read once per
 * tile of 8 rows. Refuses ldy < n besides. */
int q35_gemv_rows(float *y, int64_t ldy, const void *w, q35_type type, int64_t n, int64_t k, const float *x, int64_t T,
                  q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_GEMV_H */
