/* FP8 projections (issue 22's unit): e4m3 operands with f32 scales, f32
 * accumulation, f32 output,
 *
 *     Y[t][o] = sx[t] * sw[o] * sum_i Xq[t][i] * Wq[o][i]          (W [n][k] row-major)
 *
 * where Xq, Wq are e4m3 (core/fp8.h) and sx, sw f32 scales, one a row of X (a
 * token) and one a row of W (an output).
 *
 * Quantizing a row (the same for a token of X and an output row of W): with
 * amax = max_i |x[i]| (0 for an all-zero row, where the scale is 1),
 *     inv   = 448 / amax         (f32, rounded once)
 *     q[i]  = e4m3(x[i] * inv)   (f32 product rounded once, then round to nearest
 *                                 even, saturating at 448)
 *     scale = amax / 448         (f32, rounded once)
 * all in IEEE f32 with no fused operations, so the GPU's bits equal the CPU
 * reference's (q35_ref_fp8_quantize_rows), tested with memcmp. Inputs must be
 * finite (a non-finite input gives unspecified codes and scale).
 *
 * The GEMM runs through cuBLASLt's FP8 matmul (compute 32F, the A and B scales
 * as outer vectors: CUBLASLT_MATMUL_MATRIX_SCALE_OUTER_VEC_32F), the accumulation
 * promoted to f32 (CUBLASLT_MATMUL_DESC_FAST_ACCUM off); sm_89 and sm_90 and
 * newer, refused elsewhere.
 *
 * Error, derived (checked by parity/kernels/test_kernels_fp8.c):
 * - Given the quantized operands, the only error is the accumulation: Hopper's
 *   FP8 tensor cores add products at reduced precision inside a k-block before
 *   cuBLAS promotes the partial sums to f32, so against the float64 sum of the
 *   dequantized products expect rel L2 ~1e-4 (bounded at 1e-3), not f32's 1e-7.
 * - Against the float64 product of the unquantized f32 operands: e4m3 keeps 3
 *   mantissa bits, its rounding error is at most 2^-4 of a value and, for values
 *   spread over binades, its rms about 2^-4 / sqrt(3) / 1.44 ~ 2.5e-2 relative (a
 *   uniform error over half a step, divided by the mantissa's mean). The error of
 *   a dot product of independent terms adds in quadrature, relative to the dot
 *   product's own size: sqrt(2) * 2.5e-2 ~ 3.5e-2 rel L2 for both operands, when
 *   amax / 448 does not push values into the subnormals (it does not for the rows
 *   of a model: their amax is within ~2^6 of their rms). Bounded at 6e-2. */
#ifndef Q35_KERNELS_FP8_H
#define Q35_KERNELS_FP8_H

#include "core/quant.h"
#include "kernels/cuda.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Float64 reference (kernels/ref/fp8.c): the rows' codes q [rows][cols] and
 * scales [rows] of x [rows][x_stride], exactly as above (f32 arithmetic: it is a
 * definition of bits, not an approximation). */
void q35_ref_fp8_quantize_rows(uint8_t *q, float *scale, const float *x, int64_t rows, int64_t cols,
                               int64_t x_stride);

/* Float64 reference of an FP8 projection's rounding, for the accuracy study
 * (issue 50): y [rows][n_out] = x . W^T with x's rows (rounded to f32) and W
 * (dequantized to f32) each through e4m3 at a scale per block, the products
 * summed in float64 (the GPU's reduced-precision accumulation left out: its
 * error is the 1e-4 above, the rounding's 3.5e-2). block 0: a scale per row of
 * x and per row of W (the GPU path's recipe, above); block B: a scale per 1 x B
 * block of x and per B x B tile of W (DeepSeek-V3's recipe at B = 128). -1
 * when out of memory. */
int q35_ref_linear_fp8(double *y, const double *x, q35_type type, const void *w, int64_t n_out, int64_t n_in,
                       int64_t rows, int block);

/* Whether this device runs FP8 GEMMs (compute capability 8.9 or newer): 1, or 0
 * with the reason in why. */
int q35_fp8_supported(int device, q35_error *why);

/* CUDA: y[i] = e4m3(x[i]) for i < n (no scale: the plain conversion). */
int q35_fp8_round(uint8_t *y, const float *x, int64_t n, q35_stream stream, q35_error *err);

/* CUDA: q [rows][cols] and scale [rows] from x [rows][x_stride], as above; one
 * block a row. cols >= 1, x_stride >= cols. */
int q35_fp8_quantize_rows(uint8_t *q, float *scale, const float *x, int64_t rows, int64_t cols, int64_t x_stride,
                          q35_stream stream, q35_error *err);

/* The FP8-out forms of the ops that produce a GEMM's input (the RMSNorms,
 * kernels/rmsnorm.h; SwiGLU, kernels/pointwise.h; the gated norm, the
 * experiment kernels/experiments/gated_rmsnorm_fp8.h): each writes the codes and scales of this
 * quantization of the f32 row it computes, bitwise q35_fp8_quantize_rows of
 * its f32 form's output, in one launch, the row kept in shared memory between
 * the op and its amax (kernels/fp8_row.cuh). The longest row they take: 24576
 * values, 96 KiB of f32 (within every sm_80+ device's opt-in shared memory:
 * 99 KiB on sm_86 and sm_89, 227 KiB on sm_90); the model's rows are 1024..5120
 * (norms), 3584..17408 (SwiGLU), 2048..6144 (a token's DeltaNet heads). */
#define Q35_FP8_ROW_MAX 24576

/* A cuBLASLt handle with its workspace and, per GEMM shape (the last 32), the
 * descriptors and the algorithm chosen for it, so a call sets only its two
 * scale pointers; bound to a stream, used from one thread at a time. */
typedef struct q35_fp8_gemm q35_fp8_gemm;

/* On the current device; refuses one below compute capability 8.9 (the check
 * each GEMM through g would otherwise repeat). */
int q35_fp8_gemm_create(q35_fp8_gemm **g, q35_stream stream, q35_error *err);
void q35_fp8_gemm_destroy(q35_fp8_gemm *g);

/* CUDA: y [T][ldy] (columns 0..n-1) = the formula above, xq [T][k] and sx [T],
 * wq [n][k] and sw [n] on the device. T >= 0 (0 does nothing); k a multiple of
 * 16, n, T, ldy at most INT32_MAX, ldy >= n and a multiple of 4; xq, wq, y
 * 16-byte aligned. Refuses, naming the value and the limit, what breaks these
 * and a shape cuBLASLt has no algorithm for (the device: at create). */
int q35_gemm_fp8(q35_fp8_gemm *g, float *y, int64_t ldy, const uint8_t *xq, const float *sx, int64_t T,
                 const uint8_t *wq, const float *sw, int64_t n, int64_t k, q35_error *err);
/* The same GEMM added into y (cuBLASLt's beta = 1, C = D = y in place: y[t][o]
 * + the scaled f32 accumulation, one f32 rounding): an output projection's
 * residual add in its epilogue, as q35_gemm_f16_rounded_add. Not bitwise
 * q35_gemm_fp8 then an add (one rounding fewer; cuBLASLt may take another
 * algorithm); checked against y + the float64 product at the GEMM's bound. */
int q35_gemm_fp8_add(q35_fp8_gemm *g, float *y, int64_t ldy, const uint8_t *xq, const float *sx, int64_t T,
                     const uint8_t *wq, const float *sw, int64_t n, int64_t k, q35_error *err);
/* The same GEMM with bf16 out: y16 [T][ldy] bf16 bits, the scaled f32
 * accumulation rounded once to nearest even in cuBLASLt's epilogue (D type
 * 16BF), for a product only an op that widens it again reads (the FP8 path's
 * [gate | up], read by q35_swiglu_rows_bf16_fp8): half the bytes written and
 * read of the f32 form. bf16, not f16: f32's range, so no activation
 * overflows. Its rounding is at most 2^-8 of a value; over values spread
 * across binades the rel L2 it adds is 2^-8 / sqrt(3 E[m^2]) ~ 1.5e-3 (m the
 * mantissa, log-uniform on [1, 2): E[m^2] = 3 / (2 ln 2)), ~1/20 of what
 * e4m3's inputs cost (3.5e-2, above). Against the float64 product of the e4m3
 * operands expect ~1.5e-3, bounded at 3e-3. "Rounded once" holds because a
 * split K may only reduce its partial sums in f32 (the heuristic is asked for
 * CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE alone, as kernels/gemm_lt.h's f16 out
 * is): a reduction in the output type would round every partial sum to bf16.
 * ldy a multiple of 8 (16-byte rows). */
int q35_gemm_fp8_bf16(q35_fp8_gemm *g, uint16_t *y16, int64_t ldy, const uint8_t *xq, const float *sx, int64_t T,
                      const uint8_t *wq, const float *sw, int64_t n, int64_t k, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_FP8_H */
