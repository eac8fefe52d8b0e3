/* F32, F16 and BF16: plain element types, exact widening, round-to-nearest-even
 * narrowing. */
#include "core/half.h"
#include "core/quant.h"

#include <string.h>

void q35_dequantize_f32(const void *src, float *dst, int64_t n)
{
    memcpy(dst, src, (size_t)n * sizeof(float));
}

void q35_quantize_f32(const float *src, void *dst, int64_t n)
{
    memcpy(dst, src, (size_t)n * sizeof(float));
}

void q35_dequantize_f16(const void *src, float *dst, int64_t n)
{
    const uint16_t *h = src;
    for (int64_t i = 0; i < n; i++)
        dst[i] = q35_f16_to_f32(h[i]);
}

void q35_quantize_f16(const float *src, void *dst, int64_t n)
{
    uint16_t *h = dst;
    for (int64_t i = 0; i < n; i++)
        h[i] = q35_f32_to_f16(src[i]);
}

void q35_dequantize_bf16(const void *src, float *dst, int64_t n)
{
    const uint16_t *b = src;
    for (int64_t i = 0; i < n; i++)
        dst[i] = q35_bf16_to_f32(b[i]);
}

void q35_quantize_bf16(const float *src, void *dst, int64_t n)
{
    uint16_t *b = dst;
    for (int64_t i = 0; i < n; i++)
        b[i] = q35_f32_to_bf16(src[i]);
}
