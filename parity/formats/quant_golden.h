/* Test helper: the quantized golden files (data/golden/tiny-r2/quant). Every
 * tensor of model-<variant>.gguf is dequantized by the dequantizer under test and
 * hashed (FNV-1a 64 of its float32 bytes) against the hash of ggml's own
 * dequantizer listed in dequant-<variant>.json. test_quant runs it on the CPU
 * dequantizer, test_kernels_dequant on the GPU's. */
#ifndef Q35_QUANT_GOLDEN_H
#define Q35_QUANT_GOLDEN_H

#include "parity/lib/harness.h"

#include "core/error.h"
#include "core/quant.h"

#include <stdint.h>

/* The variants of the golden files: BF16, Q8_0, Q6_K, Q4_K_M, Q4_0 (llama.cpp's
 * quantizer), MIXED (q2_K, q3_K, iq4_xs, q4_1, q5_1, iq4_nl: this project's) and
 * GRID (the grid i-quants iq2_xxs .. iq1_m, iq4_nl: this project's). */
#define Q35_GOLDEN_VARIANTS 7
extern const char *const q35_golden_variants[Q35_GOLDEN_VARIANTS];

/* Dequantizes a tensor of rows x cols elements of a computable `type` (data as
 * the file stores it, in host memory) into y [rows][cols]; 0, or -1 with a
 * message in err. */
typedef int (*q35_golden_dequant_fn)(void *ctx, q35_type type, const void *data, int64_t rows, int64_t cols,
                                     float *y, q35_error *err);

/* FNV-1a 64 over the little-endian bytes of n floats, in order. */
uint64_t q35_fnv1a64_f32(const float *x, int64_t n);

/* Every tensor of model-<variant>.gguf through `dequant`, hashed against its line
 * of dequant-<variant>.json (type name too); every line must name a tensor of the
 * file. One FAIL case per mismatching tensor, one case for the file, its line
 * starting with `who`. */
void q35_check_golden_quant_file(q35_suite *s, const char *who, const char *variant, q35_golden_dequant_fn dequant,
                                 void *ctx);

#endif /* Q35_QUANT_GOLDEN_H */
