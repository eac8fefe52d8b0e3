#include "quant.h"

#include "quant_blocks.h"

#include <stdio.h>
#include <strings.h>

/* ggml's ggml_type_traits: block elements and bytes of every type it defines, so a
 * GGUF holding any of them can be sized and checked even where it is not computable. */
static const q35_type_info k_types[Q35_TYPE_COUNT] = {
    [Q35_TYPE_F32] = {"f32", 1, 4, true, 4},
    [Q35_TYPE_F16] = {"f16", 1, 2, true, 2},
    [Q35_TYPE_Q4_0] = {"q4_0", 32, 18, true, 2},
    [Q35_TYPE_Q4_1] = {"q4_1", 32, 20, true, 2},
    [Q35_TYPE_Q5_0] = {"q5_0", 32, 22, true, 2},
    [Q35_TYPE_Q5_1] = {"q5_1", 32, 24, true, 2},
    [Q35_TYPE_Q8_0] = {"q8_0", 32, 34, true, 2},
    [Q35_TYPE_Q8_1] = {"q8_1", 32, 36, false, 2},
    [Q35_TYPE_Q2_K] = {"q2_K", 256, 84, true, 2},
    [Q35_TYPE_Q3_K] = {"q3_K", 256, 110, true, 2},
    [Q35_TYPE_Q4_K] = {"q4_K", 256, 144, true, 2},
    [Q35_TYPE_Q5_K] = {"q5_K", 256, 176, true, 2},
    [Q35_TYPE_Q6_K] = {"q6_K", 256, 210, true, 2},
    [Q35_TYPE_Q8_K] = {"q8_K", 256, 292, false, 4},
    [Q35_TYPE_IQ2_XXS] = {"iq2_xxs", 256, 66, true, 2},
    [Q35_TYPE_IQ2_XS] = {"iq2_xs", 256, 74, true, 2},
    [Q35_TYPE_IQ3_XXS] = {"iq3_xxs", 256, 98, true, 2},
    [Q35_TYPE_IQ1_S] = {"iq1_s", 256, 50, true, 2},
    [Q35_TYPE_IQ4_NL] = {"iq4_nl", 32, 18, true, 2},
    [Q35_TYPE_IQ3_S] = {"iq3_s", 256, 110, true, 2},
    [Q35_TYPE_IQ2_S] = {"iq2_s", 256, 82, true, 2},
    [Q35_TYPE_IQ4_XS] = {"iq4_xs", 256, 136, true, 2},
    [Q35_TYPE_I8] = {"i8", 1, 1, false, 1},
    [Q35_TYPE_I16] = {"i16", 1, 2, false, 2},
    [Q35_TYPE_I32] = {"i32", 1, 4, false, 4},
    [Q35_TYPE_I64] = {"i64", 1, 8, false, 8},
    [Q35_TYPE_F64] = {"f64", 1, 8, false, 8},
    [Q35_TYPE_IQ1_M] = {"iq1_m", 256, 56, true, 1},
    [Q35_TYPE_BF16] = {"bf16", 1, 2, true, 2},
    [Q35_TYPE_TQ1_0] = {"tq1_0", 256, 54, false, 2},
    [Q35_TYPE_TQ2_0] = {"tq2_0", 256, 66, false, 2},
    [Q35_TYPE_MXFP4] = {"mxfp4", 32, 17, false, 1},
};

/* The table's alignments are at least the block structs' own. */
_Static_assert(_Alignof(q35_block_q4_0) <= 2 && _Alignof(q35_block_q5_0) <= 2 && _Alignof(q35_block_q8_0) <= 2,
               "a legacy block needs more than the table's 2-byte alignment");
_Static_assert(_Alignof(q35_block_q4_1) <= 2 && _Alignof(q35_block_q5_1) <= 2 && _Alignof(q35_block_iq4_nl) <= 2,
               "a legacy block needs more than the table's 2-byte alignment");
_Static_assert(_Alignof(q35_block_q2_K) <= 2 && _Alignof(q35_block_q3_K) <= 2 && _Alignof(q35_block_iq4_xs) <= 2,
               "a k-quant block needs more than the table's 2-byte alignment");
_Static_assert(_Alignof(q35_block_iq2_xxs) <= 2 && _Alignof(q35_block_iq2_xs) <= 2 && _Alignof(q35_block_iq2_s) <= 2 &&
                   _Alignof(q35_block_iq3_xxs) <= 2 && _Alignof(q35_block_iq3_s) <= 2 &&
                   _Alignof(q35_block_iq1_s) <= 2 && _Alignof(q35_block_iq1_m) <= 1,
               "a grid i-quant block needs more than the table's alignment");
_Static_assert(_Alignof(q35_block_q4_K) <= 2 && _Alignof(q35_block_q5_K) <= 2 && _Alignof(q35_block_q6_K) <= 2,
               "a k-quant block needs more than the table's 2-byte alignment");

const q35_type_info *q35_type_get(uint32_t type)
{
    if (type >= Q35_TYPE_COUNT || k_types[type].name == NULL)
        return NULL;
    return &k_types[type];
}

const char *q35_type_name(uint32_t type)
{
    const q35_type_info *t = q35_type_get(type);
    return t ? t->name : "unknown";
}

bool q35_type_computable(uint32_t type)
{
    const q35_type_info *t = q35_type_get(type);
    return t && t->computable;
}

char *q35_type_computable_names(char *buf, size_t cap)
{
    size_t used = 0;
    if (cap)
        buf[0] = '\0';
    for (uint32_t i = 0; i < Q35_TYPE_COUNT && used + 1 < cap; i++) {
        if (k_types[i].name && k_types[i].computable) {
            const int n = snprintf(buf + used, cap - used, "%s%s", used ? ", " : "", k_types[i].name);
            used = n < 0 ? used : used + (size_t)n < cap ? used + (size_t)n : cap - 1;
        }
    }
    return buf;
}

int q35_type_parse(const char *name, q35_type *out)
{
    for (uint32_t i = 0; i < Q35_TYPE_COUNT; i++) {
        if (k_types[i].name && strcasecmp(k_types[i].name, name) == 0) {
            *out = (q35_type)i;
            return 0;
        }
    }
    return -1;
}

size_t q35_row_bytes(uint32_t type, int64_t n)
{
    const q35_type_info *t = q35_type_get(type);
    if (!t || n < 0 || n % t->block_elems != 0)
        return 0;
    const uint64_t blocks = (uint64_t)(n / t->block_elems);
    if (blocks > SIZE_MAX / (uint64_t)t->block_bytes)
        return 0; /* no buffer that large exists */
    return (size_t)blocks * (size_t)t->block_bytes;
}

void q35_dequantize(q35_type type, const void *src, float *dst, int64_t n)
{
    switch (type) {
    case Q35_TYPE_F32: q35_dequantize_f32(src, dst, n); break;
    case Q35_TYPE_F16: q35_dequantize_f16(src, dst, n); break;
    case Q35_TYPE_BF16: q35_dequantize_bf16(src, dst, n); break;
    case Q35_TYPE_Q8_0: q35_dequantize_q8_0(src, dst, n); break;
    case Q35_TYPE_Q4_0: q35_dequantize_q4_0(src, dst, n); break;
    case Q35_TYPE_Q5_0: q35_dequantize_q5_0(src, dst, n); break;
    case Q35_TYPE_Q4_K: q35_dequantize_q4_k(src, dst, n); break;
    case Q35_TYPE_Q5_K: q35_dequantize_q5_k(src, dst, n); break;
    case Q35_TYPE_Q6_K: q35_dequantize_q6_k(src, dst, n); break;
    case Q35_TYPE_Q4_1: q35_dequantize_q4_1(src, dst, n); break;
    case Q35_TYPE_Q5_1: q35_dequantize_q5_1(src, dst, n); break;
    case Q35_TYPE_IQ4_NL: q35_dequantize_iq4_nl(src, dst, n); break;
    case Q35_TYPE_Q2_K: q35_dequantize_q2_k(src, dst, n); break;
    case Q35_TYPE_Q3_K: q35_dequantize_q3_k(src, dst, n); break;
    case Q35_TYPE_IQ4_XS: q35_dequantize_iq4_xs(src, dst, n); break;
    case Q35_TYPE_IQ2_XXS: q35_dequantize_iq2_xxs(src, dst, n); break;
    case Q35_TYPE_IQ2_XS: q35_dequantize_iq2_xs(src, dst, n); break;
    case Q35_TYPE_IQ2_S: q35_dequantize_iq2_s(src, dst, n); break;
    case Q35_TYPE_IQ3_XXS: q35_dequantize_iq3_xxs(src, dst, n); break;
    case Q35_TYPE_IQ3_S: q35_dequantize_iq3_s(src, dst, n); break;
    case Q35_TYPE_IQ1_S: q35_dequantize_iq1_s(src, dst, n); break;
    case Q35_TYPE_IQ1_M: q35_dequantize_iq1_m(src, dst, n); break;
    default: break; /* callers check q35_type_computable first */
    }
}

void q35_quantize(q35_type type, const float *src, void *dst, int64_t n)
{
    switch (type) {
    case Q35_TYPE_F32: q35_quantize_f32(src, dst, n); break;
    case Q35_TYPE_F16: q35_quantize_f16(src, dst, n); break;
    case Q35_TYPE_BF16: q35_quantize_bf16(src, dst, n); break;
    case Q35_TYPE_Q8_0: q35_quantize_q8_0(src, dst, n); break;
    case Q35_TYPE_Q4_0: q35_quantize_q4_0(src, dst, n); break;
    case Q35_TYPE_Q5_0: q35_quantize_q5_0(src, dst, n); break;
    case Q35_TYPE_Q4_K: q35_quantize_q4_k(src, dst, n); break;
    case Q35_TYPE_Q5_K: q35_quantize_q5_k(src, dst, n); break;
    case Q35_TYPE_Q6_K: q35_quantize_q6_k(src, dst, n); break;
    case Q35_TYPE_Q4_1: q35_quantize_q4_1(src, dst, n); break;
    case Q35_TYPE_Q5_1: q35_quantize_q5_1(src, dst, n); break;
    case Q35_TYPE_IQ4_NL: q35_quantize_iq4_nl(src, dst, n); break;
    case Q35_TYPE_Q2_K: q35_quantize_q2_k(src, dst, n); break;
    case Q35_TYPE_Q3_K: q35_quantize_q3_k(src, dst, n); break;
    case Q35_TYPE_IQ4_XS: q35_quantize_iq4_xs(src, dst, n); break;
    case Q35_TYPE_IQ2_XXS: q35_quantize_iq2_xxs(src, dst, n); break;
    case Q35_TYPE_IQ2_XS: q35_quantize_iq2_xs(src, dst, n); break;
    case Q35_TYPE_IQ2_S: q35_quantize_iq2_s(src, dst, n); break;
    case Q35_TYPE_IQ3_XXS: q35_quantize_iq3_xxs(src, dst, n); break;
    case Q35_TYPE_IQ3_S: q35_quantize_iq3_s(src, dst, n); break;
    case Q35_TYPE_IQ1_S: q35_quantize_iq1_s(src, dst, n); break;
    case Q35_TYPE_IQ1_M: q35_quantize_iq1_m(src, dst, n); break;
    default: break;
    }
}
