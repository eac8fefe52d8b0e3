/* Dequantization of a linear weight on the device (SPEC §1): rows rows of a
 * computable type (F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K,
 * Q4_K, Q5_K, Q6_K, IQ4_XS, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M), each row
 * q35_row_bytes(type, cols) bytes, to f32 or to f16:
 *
 *     y32[r][i] = dequant(W)[r][i]                 bit for bit q35_dequantize (core/quant.h)
 *     y16[r][i] = round_to_nearest_even_f16(y32[r][i])
 *
 * The float64 reference is the CPU dequantizer itself (ggml's arithmetic); the
 * f16 form's reference is that value narrowed by q35_f32_to_f16 (core/half.h). */
#ifndef Q35_KERNELS_DEQUANT_H
#define Q35_KERNELS_DEQUANT_H

#include "core/quant.h"
#include "kernels/cuda.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CUDA: y [rows][cols] f32 from w on the device. cols a whole number of the
 * type's blocks; w as the GGUF stores it (blocks 2-byte aligned at least). rows 0 does nothing. Refuses a type it cannot compute, naming it, and
 * cols that are not whole blocks.
 * Speed: the weight is one stream of rows * cols elements, read once and written
 * once; 16-byte loads when w is 16-byte aligned (F32, F16, BF16, Q4_K, Q5_K; the
 * other blocks are 2-byte aligned by their size), 16-byte stores when y is.
 * Bytes: q35_row_bytes(type, cols) * rows read, 4 (f16: 2) * rows * cols written. */
int q35_dequant_f32(float *y, const void *w, q35_type type, int64_t rows, int64_t cols, q35_stream stream,
                    q35_error *err);

/* CUDA: y [rows][cols] IEEE binary16 (as uint16_t bits), the f32 value rounded
 * to nearest even. */
int q35_dequant_f16(uint16_t *y, const void *w, q35_type type, int64_t rows, int64_t cols, q35_stream stream,
                    q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_DEQUANT_H */
