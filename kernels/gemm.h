/* The rows form of a projection (SPEC §2, §3): ONE GEMM per chunk of T rows,
 *
 *     Y[t][o] = sum_i X[t][i] * W[o][i]          (Y = X W^T; W [n][k] row-major)
 *
 * through cuBLAS, on one of two paths:
 *   f32  W dequantized into an f32 scratch (q35_dequant_f32), then SGEMM with
 *        CUBLAS_COMPUTE_32F_PEDANTIC (no TF32, no reduced precision);
 *   f16  W converted ONCE to f16 and cached by the caller (q35_dequant_f16 at
 *        load), X rounded to f16 into a scratch, f16 x f16 products with f32
 *        accumulation and f32 output (cublasGemmEx, CUBLAS_COMPUTE_32F).
 * Y has a leading dimension ldy >= n, so V can be written straight into the KV
 * cache rows. The float64 reference is q35_ref_linear (kernels/linear.h) on the
 * dequantized weight (for the f16 path: on the f16-rounded weight and rows).
 * cuBLAS may split K differently for different T: the rows form is NOT bitwise
 * equal to per-token GEMVs (the batch-invariant rows form is q35_gemv_rows). */
#ifndef Q35_KERNELS_GEMM_H
#define Q35_KERNELS_GEMM_H

#include "core/quant.h"
#include "kernels/blas.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Floats of f32 scratch the f32 path needs for a weight of n x k (n * k). */
int64_t q35_gemm_f32_scratch_floats(int64_t n, int64_t k);

/* Halves of f16 scratch the f16 path needs for T rows of k (T * k). */
int64_t q35_gemm_f16_scratch_halves(int64_t T, int64_t k);

/* CUDA, f32 path: y [T][ldy] (columns 0..n-1 written, the others untouched),
 * x [T][k], w [n] rows of type `type` on the device; w_scratch >=
 * q35_gemm_f32_scratch_floats(n, k) floats. T >= 0 (0 does nothing), ldy >= n;
 * n, k, T, ldy at most INT32_MAX (cuBLAS's int). The blas handle's stream is
 * used for the dequantization and the GEMM. Refuses a type it cannot compute, k
 * not a whole number of the type's blocks, ldy < n, each naming the value. */
int q35_gemm_f32(q35_blas blas, float *y, int64_t ldy, const float *x, int64_t T, const void *w, q35_type type,
                 int64_t n, int64_t k, float *w_scratch, q35_error *err);

/* CUDA, f16 path: w16 [n][k] f16 (the cached weight), x_scratch >=
 * q35_gemm_f16_scratch_halves(T, k) halves (x rounded to nearest even into it).
 * The limits and refusals of the f32 path. */
int q35_gemm_f16(q35_blas blas, float *y, int64_t ldy, const float *x, int64_t T, const uint16_t *w16, int64_t n,
                 int64_t k, uint16_t *x_scratch, q35_error *err);

/* The f16 path in two steps, for several weights applied to one x: round x
 * once (x16 [T][k] = x rounded to nearest even), then a GEMM per weight from
 * x16. q35_gemm_f16 is the two in a row, with the same bits. */
int q35_gemm_f16_round(q35_blas blas, uint16_t *x16, const float *x, int64_t T, int64_t k, q35_error *err);
int q35_gemm_f16_rounded(q35_blas blas, float *y, int64_t ldy, const uint16_t *x16, int64_t T, const uint16_t *w16,
                         int64_t n, int64_t k, q35_error *err);
/* The same GEMM added into y (cuBLAS's beta = 1: y[t][o] + the f32-accumulated
 * product, one f32 rounding): the residual add folded into an output
 * projection's epilogue, one pass over y fewer than a GEMM then an add. Not
 * bitwise that pair (cuBLAS may take another algorithm for beta = 1); checked
 * against float64 at the f16 path's bound. */
int q35_gemm_f16_rounded_add(q35_blas blas, float *y, int64_t ldy, const uint16_t *x16, int64_t T,
                             const uint16_t *w16, int64_t n, int64_t k, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_GEMM_H */
