/* Tensor element types, numbered as ggml numbers them, and the CPU
 * dequantizer/quantizer of the ones this project computes with.
 *
 * Dequantization follows ggml's block layouts and arithmetic bit for bit (the
 * project builds host code with -ffp-contract=off, as ggml's baseline x86-64 build
 * has no fused multiply-add); it is the reference every GPU dequantizer is checked
 * against. Quantization is this project's own (simple, fast, bounded error), used
 * by the model generator; ggml's dequantizer reads what it writes. */
#ifndef Q35_QUANT_H
#define Q35_QUANT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum q35_type {
    Q35_TYPE_F32 = 0,
    Q35_TYPE_F16 = 1,
    Q35_TYPE_Q4_0 = 2,
    Q35_TYPE_Q4_1 = 3,
    Q35_TYPE_Q5_0 = 6,
    Q35_TYPE_Q5_1 = 7,
    Q35_TYPE_Q8_0 = 8,
    Q35_TYPE_Q8_1 = 9,
    Q35_TYPE_Q2_K = 10,
    Q35_TYPE_Q3_K = 11,
    Q35_TYPE_Q4_K = 12,
    Q35_TYPE_Q5_K = 13,
    Q35_TYPE_Q6_K = 14,
    Q35_TYPE_Q8_K = 15,
    Q35_TYPE_IQ2_XXS = 16,
    Q35_TYPE_IQ2_XS = 17,
    Q35_TYPE_IQ3_XXS = 18,
    Q35_TYPE_IQ1_S = 19,
    Q35_TYPE_IQ4_NL = 20,
    Q35_TYPE_IQ3_S = 21,
    Q35_TYPE_IQ2_S = 22,
    Q35_TYPE_IQ4_XS = 23,
    Q35_TYPE_I8 = 24,
    Q35_TYPE_I16 = 25,
    Q35_TYPE_I32 = 26,
    Q35_TYPE_I64 = 27,
    Q35_TYPE_F64 = 28,
    Q35_TYPE_IQ1_M = 29,
    Q35_TYPE_BF16 = 30,
    Q35_TYPE_TQ1_0 = 34,
    Q35_TYPE_TQ2_0 = 35,
    Q35_TYPE_MXFP4 = 39,
    Q35_TYPE_COUNT = 40 /* one past the largest id this table knows */
} q35_type;

typedef struct q35_type_info {
    const char *name;  /* ggml's name: "f32", "q4_K", ... */
    int block_elems;   /* elements per block (1 for plain types) */
    int block_bytes;   /* bytes per block */
    bool computable;   /* this project dequantizes and quantizes it */
    int align;         /* bytes a block's address must be a multiple of to be read in place: its widest
                        * field (ggml's block structs: 2 for an f16 scale, 4 for an f32 one, 1 for bytes) */
} q35_type_info;

/* The type's row in the table, or NULL when `type` is no type ggml defines. */
const q35_type_info *q35_type_get(uint32_t type);

/* ggml's name of a type, or "unknown". */
const char *q35_type_name(uint32_t type);

/* True when the project can dequantize (and quantize) this type: F32, F16, BF16,
 * Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, IQ4_NL, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_XS,
 * IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M. */
bool q35_type_computable(uint32_t type);

/* The names of the computable types, ", "-separated in the table's order ("f32,
 * f16, q4_0, ..."), into buf (cut to cap - 1 bytes); buf. */
char *q35_type_computable_names(char *buf, size_t cap);

/* Parses a type name, case-insensitively ("q4_k", "Q4_K", "f16"). 0 on success. */
int q35_type_parse(const char *name, q35_type *out);

/* Bytes of a row of n elements; 0 when n is not a whole number of blocks, the
 * type is unknown, or the size does not fit a size_t. */
size_t q35_row_bytes(uint32_t type, int64_t n);

/* Dequantizes n elements (a whole number of blocks) of a computable type. */
void q35_dequantize(q35_type type, const void *src, float *dst, int64_t n);

/* Quantizes n elements (a whole number of blocks) into a computable type. */
void q35_quantize(q35_type type, const float *src, void *dst, int64_t n);

/* Per-format codecs, called through the two dispatchers above. */
void q35_dequantize_f32(const void *src, float *dst, int64_t n);
void q35_dequantize_f16(const void *src, float *dst, int64_t n);
void q35_dequantize_bf16(const void *src, float *dst, int64_t n);
void q35_dequantize_q8_0(const void *src, float *dst, int64_t n);
void q35_dequantize_q4_0(const void *src, float *dst, int64_t n);
void q35_dequantize_q5_0(const void *src, float *dst, int64_t n);
void q35_dequantize_q4_k(const void *src, float *dst, int64_t n);
void q35_dequantize_q5_k(const void *src, float *dst, int64_t n);
void q35_dequantize_q6_k(const void *src, float *dst, int64_t n);
void q35_dequantize_q4_1(const void *src, float *dst, int64_t n);
void q35_dequantize_q5_1(const void *src, float *dst, int64_t n);
void q35_dequantize_iq4_nl(const void *src, float *dst, int64_t n);
void q35_dequantize_q2_k(const void *src, float *dst, int64_t n);
void q35_dequantize_q3_k(const void *src, float *dst, int64_t n);
void q35_dequantize_iq4_xs(const void *src, float *dst, int64_t n);
void q35_dequantize_iq2_xxs(const void *src, float *dst, int64_t n);
void q35_dequantize_iq2_xs(const void *src, float *dst, int64_t n);
void q35_dequantize_iq2_s(const void *src, float *dst, int64_t n);
void q35_dequantize_iq3_xxs(const void *src, float *dst, int64_t n);
void q35_dequantize_iq3_s(const void *src, float *dst, int64_t n);
void q35_dequantize_iq1_s(const void *src, float *dst, int64_t n);
void q35_dequantize_iq1_m(const void *src, float *dst, int64_t n);
void q35_quantize_f32(const float *src, void *dst, int64_t n);
void q35_quantize_f16(const float *src, void *dst, int64_t n);
void q35_quantize_bf16(const float *src, void *dst, int64_t n);
void q35_quantize_q8_0(const float *src, void *dst, int64_t n);
void q35_quantize_q4_0(const float *src, void *dst, int64_t n);
void q35_quantize_q5_0(const float *src, void *dst, int64_t n);
void q35_quantize_q4_k(const float *src, void *dst, int64_t n);
void q35_quantize_q5_k(const float *src, void *dst, int64_t n);
void q35_quantize_q6_k(const float *src, void *dst, int64_t n);
void q35_quantize_q4_1(const float *src, void *dst, int64_t n);
void q35_quantize_q5_1(const float *src, void *dst, int64_t n);
void q35_quantize_iq4_nl(const float *src, void *dst, int64_t n);
void q35_quantize_q2_k(const float *src, void *dst, int64_t n);
void q35_quantize_q3_k(const float *src, void *dst, int64_t n);
void q35_quantize_iq4_xs(const float *src, void *dst, int64_t n);
void q35_quantize_iq2_xxs(const float *src, void *dst, int64_t n);
void q35_quantize_iq2_xs(const float *src, void *dst, int64_t n);
void q35_quantize_iq2_s(const float *src, void *dst, int64_t n);
void q35_quantize_iq3_xxs(const float *src, void *dst, int64_t n);
void q35_quantize_iq3_s(const float *src, void *dst, int64_t n);
void q35_quantize_iq1_s(const float *src, void *dst, int64_t n);
void q35_quantize_iq1_m(const float *src, void *dst, int64_t n);

#ifdef __cplusplus
}
#endif

#endif /* Q35_QUANT_H */
