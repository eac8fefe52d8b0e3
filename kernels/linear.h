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

/* What the reference does to the activations of a matrix product first. */
typedef enum q35_act_quant {
    Q35_ACT_EXACT = 0, /* nothing: float64 activations times the dequantized weight */
    Q35_ACT_GGML = 1,  /* what ggml's CPU backend does (q35_ggml_act_row), so that the product is
                        * llama.cpp's up to its float32 summation order (SPEC.md, "llama.cpp's logits") */
    Q35_ACT_Q8 = 2,    /* what the decode step's 8-bit GEMV does (kernels/gemv_q8.h, switch decode-q8):
                        * x rounded to float32, then to int8 in blocks of 32 by q35_ref_gemv_q8_quantize
                        * (bitwise the GPU's), the product taken on x' = d q; for the weight types it
                        * takes (q35_gemv_q8_takes), the others exact */
} q35_act_quant;

/* q35_ref_linear with the activations first rounded as `act` says. For Q4_1 and
 * Q5_1 weights under Q35_ACT_GGML the blocks' offsets multiply the activation
 * blocks' stored sums, as ggml's dot product does. -1 only when out of memory. */
int q35_ref_linear_act(double *y, const double *x, q35_type type, const void *w, int64_t n_out, int64_t n_in,
                       int64_t rows, q35_act_quant act);

/* The type ggml's CPU backend converts the activations to before a product with a
 * weight of type `weight` (its vec_dot_type): F32 for f32, F16 for f16, BF16 for
 * bf16, Q8_0 for Q4_0, Q5_0, Q8_0 and IQ4_NL, Q8_1 for Q4_1 and Q5_1, Q8_K for the
 * K-quants and the i-quants. */
q35_type q35_ggml_act_type(q35_type weight);

/* A row of n activations (a whole number of that type's blocks) as ggml's CPU
 * backend (llama.cpp 0c1e570, the x86-64 AVX2 build its oracle uses) leaves them for
 * the product with a `weight` weight: rounded to float32, then to
 * q35_ggml_act_type(weight) — f16 and bf16 round to nearest even; Q8_0 and Q8_1
 * (blocks of 32) by the AVX2 quantizer's arithmetic; Q8_K (blocks of 256) by
 * quantize_row_q8_K_ref's — and their values exactly as float64 into y. For Q8_1,
 * each block's stored sum s = f16(d * sum q) into s[n / 32] (else s is not
 * touched and may be NULL). tmp: n floats of scratch. */
void q35_ggml_act_row(q35_type weight, const double *x, double *y, double *s, float *tmp, int64_t n);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_LINEAR_H */
