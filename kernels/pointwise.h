/* The pointwise ops of a layer, each a unit of its own (SPEC §2):
 *
 *     swiglu:        y[i] = silu(g[i]) * u[i]             (the FFN activation)
 *     sigmoid gate:  o[i] = o[i] * sigmoid(gate[i])       (the attention output gate)
 *     residual add:  x[i] = x[i] + p[i]
 *     q/gate split:  per head h of attn_q's output [q(hd) | gate(hd)]:
 *                    q[h][i] = full[h][i], gate[h][i] = full[h][hd + i]
 *
 * silu(x) = x / (1 + e^-x), sigmoid(x) = 1 / (1 + e^-x). */
#ifndef Q35_KERNELS_POINTWISE_H
#define Q35_KERNELS_POINTWISE_H

#include "kernels/cuda.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

double q35_ref_silu(double x);
double q35_ref_sigmoid(double x);

/* float64 references over n values (heads heads of hd for the split). */
void q35_ref_swiglu(double *y, const double *g, const double *u, int64_t n);
void q35_ref_sigmoid_gate(double *o, const double *gate, int64_t n);
void q35_ref_residual_add(double *x, const double *p, int64_t n);
void q35_ref_split_qgate(double *q, double *gate, const double *full, int heads, int hd);

/* CUDA forms, device pointers; the rows form is the same kernel over rows * width
 * values (the per-token form: rows = 1), each element computed on its own.
 * SwiGLU: y [rows][width] contiguous; g and u rows at in_stride floats (g of
 * row r at g + r*in_stride: the gate and up halves of one merged projection's
 * output, read in place); in_stride >= width, else refused. Whole-quad loads
 * where width and in_stride are multiples of 4 and the pointers 16-byte
 * aligned, else scalar ones: the same bits either way. */
int q35_swiglu_rows(float *y, const float *g, const float *u, int64_t in_stride, int64_t width, int64_t rows,
                    q35_stream stream, q35_error *err);
/* SwiGLU with f16 out (ffn_down's rounded input on the f16 GEMM path): y16
 * IEEE half bits, each q35_swiglu_rows's f32 value rounded to nearest even
 * (bitwise: the same arithmetic, one rounding at the store). y16 must not
 * alias g or u. */
int q35_swiglu_rows_f16(uint16_t *y16, const float *g, const float *u, int64_t in_stride, int64_t width,
                        int64_t rows, q35_stream stream, q35_error *err);
/* The same from f16 g and u (IEEE half bits; the f16 path's [gate | up],
 * written by q35_hgemm_rounded_f16, kernels/gemm_lt.h): each value widened
 * exactly to f32, then the f32 form's arithmetic, rounded to f16 at the store,
 * so bitwise q35_swiglu_rows_f16 of the widened rows. in_stride in halves;
 * 16-byte loads of eight where width and in_stride are multiples of 8 and the
 * pointers 16-byte aligned, else scalar ones: the same bits. y16 must not
 * alias g16 or u16. Bytes a row: 4 width read + 2 width written, against 8
 * width + 2 width (and the GEMM that wrote g and u: 4 width, against 8). */
int q35_swiglu_rows_f16_f16(uint16_t *y16, const uint16_t *g16, const uint16_t *u16, int64_t in_stride, int64_t width,
                            int64_t rows, q35_stream stream, q35_error *err);
/* SwiGLU with FP8 out (ffn_down's input on the FP8 GEMM path, kernels/fp8.h):
 * e4m3 codes q [rows][width] and scale [rows], bitwise
 * q35_fp8_quantize_rows(q, scale, y, rows, width, width) of q35_swiglu_rows's
 * f32 y (the same arithmetic; no f32 y written), g and u rows at in_stride, in
 * one launch: a block a row, the row kept in shared memory for its amax and its
 * codes. width in 1..Q35_FP8_ROW_MAX (24576), refused beyond. Bytes a row: 8
 * width read (g, u) + width + 4 written, against 12 width + 5 width + 4 for the
 * f32 form and q35_fp8_quantize_rows. */
int q35_swiglu_rows_fp8(uint8_t *q, float *scale, const float *g, const float *u, int64_t in_stride, int64_t width,
                        int64_t rows, q35_stream stream, q35_error *err);
/* The same from bf16 g and u (bits; the FP8 path's [gate | up], written by
 * q35_gemm_fp8_bf16, kernels/fp8.h): each value widened exactly to f32, then
 * the f32 form's arithmetic, so bitwise q35_swiglu_rows_fp8 of the widened
 * rows. in_stride in bf16 values. Bytes a row: 4 width read + width + 4
 * written, against 8 width + width + 4. */
int q35_swiglu_rows_bf16_fp8(uint8_t *q, float *scale, const uint16_t *g16, const uint16_t *u16, int64_t in_stride,
                             int64_t width, int64_t rows, q35_stream stream, q35_error *err);
int q35_sigmoid_gate_rows(float *o, const float *gate, int64_t width, int64_t rows, q35_stream stream,
                          q35_error *err);
/* The sigmoid gate with f16 out (the o projection's rounded input on the f16
 * GEMM path): y16 [rows][width] IEEE half bits, each q35_sigmoid_gate_rows's
 * f32 value o * sigmoid(gate) rounded to nearest even (bitwise: the same
 * arithmetic, one rounding at the store); o is left as it is. y16 must not
 * alias o or gate. */
int q35_sigmoid_gate_rows_f16(uint16_t *y16, const float *o, const float *gate, int64_t width, int64_t rows,
                              q35_stream stream, q35_error *err);
/* The 8-bit-out forms, one token (a decode step's SwiGLU and output gate,
 * before the 8-bit-activation GEMV that reads them, kernels/gemv_q8.h): y
 * [width] bitwise q35_swiglu_rows's (rows 1, in_stride width), o [width]
 * bitwise q35_sigmoid_gate_rows's (in place), and xq bitwise
 * q35_gemv_q8_quantize(xq, y or o, width)'s, in one launch of a warp a block
 * of 32 (no row-wide step). width a multiple of 32; xq 16-byte aligned,
 * q35_gemv_q8_x_bytes(width) bytes, aliasing none of the rest; y may be g or u. */
int q35_swiglu_q8(float *y, void *xq, const float *g, const float *u, int64_t width, q35_stream stream, q35_error *err);
int q35_sigmoid_gate_q8(float *o, void *xq, const float *gate, int64_t width, q35_stream stream, q35_error *err);
int q35_residual_add_rows(float *x, const float *p, int64_t width, int64_t rows, q35_stream stream, q35_error *err);
/* full [rows][heads][2*hd] -> q, gate [rows][heads][hd] */
int q35_split_qgate_rows(float *q, float *gate, const float *full, int heads, int hd, int64_t rows,
                         q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_POINTWISE_H */
