/* Q8_0, Q4_0 and Q5_0: blocks of 32 with one f16 scale.
 *
 * Dequantization is ggml's arithmetic: the integer level converted to float, then
 * one multiply by the scale. Quantization rounds against the scale as stored (after
 * its f16 rounding), so the error is bounded by the stored step. */
#include "core/half.h"
#include "core/quant.h"
#include "core/quant_blocks.h"

#include <math.h>
#include <string.h>

static inline int round_half_away(float x)
{
    return (int)(x + (x >= 0.0f ? 0.5f : -0.5f));
}

static inline int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

void q35_dequantize_q8_0(const void *src, float *dst, int64_t n)
{
    const q35_block_q8_0 *b = src;
    for (int64_t i = 0; i < n / Q35_QK32; i++) {
        const float d = q35_f16_to_f32(b[i].d);
        for (int j = 0; j < Q35_QK32; j++)
            dst[i * Q35_QK32 + j] = b[i].qs[j] * d;
    }
}

void q35_quantize_q8_0(const float *src, void *dst, int64_t n)
{
    q35_block_q8_0 *b = dst;
    for (int64_t i = 0; i < n / Q35_QK32; i++) {
        const float *x = src + i * Q35_QK32;
        float amax = 0.0f;
        for (int j = 0; j < Q35_QK32; j++)
            amax = fabsf(x[j]) > amax ? fabsf(x[j]) : amax;
        b[i].d = q35_f32_to_f16(amax / 127.0f);
        const float d = q35_f16_to_f32(b[i].d);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        for (int j = 0; j < Q35_QK32; j++)
            b[i].qs[j] = (int8_t)clamp_int(round_half_away(x[j] * id), -128, 127);
    }
}

void q35_dequantize_q4_0(const void *src, float *dst, int64_t n)
{
    const q35_block_q4_0 *b = src;
    for (int64_t i = 0; i < n / Q35_QK32; i++) {
        const float d = q35_f16_to_f32(b[i].d);
        for (int j = 0; j < Q35_QK32 / 2; j++) {
            const int x0 = (b[i].qs[j] & 0x0F) - 8;
            const int x1 = (b[i].qs[j] >> 4) - 8;
            dst[i * Q35_QK32 + j] = x0 * d;
            dst[i * Q35_QK32 + j + Q35_QK32 / 2] = x1 * d;
        }
    }
}

/* The signed element of largest magnitude: Q4_0 and Q5_0 map it to the lowest level. */
static float signed_absmax(const float *x, int n)
{
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; j++) {
        if (fabsf(x[j]) > amax) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    return max;
}

void q35_quantize_q4_0(const float *src, void *dst, int64_t n)
{
    q35_block_q4_0 *b = dst;
    for (int64_t i = 0; i < n / Q35_QK32; i++) {
        const float *x = src + i * Q35_QK32;
        b[i].d = q35_f32_to_f16(signed_absmax(x, Q35_QK32) / -8.0f);
        const float d = q35_f16_to_f32(b[i].d);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        for (int j = 0; j < Q35_QK32 / 2; j++) {
            const int q0 = clamp_int(round_half_away(x[j] * id) + 8, 0, 15);
            const int q1 = clamp_int(round_half_away(x[j + Q35_QK32 / 2] * id) + 8, 0, 15);
            b[i].qs[j] = (uint8_t)(q0 | (q1 << 4));
        }
    }
}

void q35_dequantize_q5_0(const void *src, float *dst, int64_t n)
{
    const q35_block_q5_0 *b = src;
    for (int64_t i = 0; i < n / Q35_QK32; i++) {
        const float d = q35_f16_to_f32(b[i].d);
        uint32_t qh;
        memcpy(&qh, b[i].qh, sizeof qh);
        for (int j = 0; j < Q35_QK32 / 2; j++) {
            const uint8_t xh_0 = (uint8_t)(((qh >> (j + 0)) << 4) & 0x10);
            const uint8_t xh_1 = (uint8_t)((qh >> (j + 12)) & 0x10);
            const int32_t x0 = ((b[i].qs[j] & 0x0F) | xh_0) - 16;
            const int32_t x1 = ((b[i].qs[j] >> 4) | xh_1) - 16;
            dst[i * Q35_QK32 + j] = x0 * d;
            dst[i * Q35_QK32 + j + Q35_QK32 / 2] = x1 * d;
        }
    }
}

void q35_quantize_q5_0(const float *src, void *dst, int64_t n)
{
    q35_block_q5_0 *b = dst;
    for (int64_t i = 0; i < n / Q35_QK32; i++) {
        const float *x = src + i * Q35_QK32;
        b[i].d = q35_f32_to_f16(signed_absmax(x, Q35_QK32) / -16.0f);
        const float d = q35_f16_to_f32(b[i].d);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        uint32_t qh = 0;
        for (int j = 0; j < Q35_QK32 / 2; j++) {
            const int q0 = clamp_int(round_half_away(x[j] * id) + 16, 0, 31);
            const int q1 = clamp_int(round_half_away(x[j + Q35_QK32 / 2] * id) + 16, 0, 31);
            b[i].qs[j] = (uint8_t)((q0 & 0x0F) | ((q1 & 0x0F) << 4));
            qh |= (uint32_t)(q0 >> 4) << j;
            qh |= (uint32_t)(q1 >> 4) << (j + Q35_QK32 / 2);
        }
        memcpy(b[i].qh, &qh, sizeof qh);
    }
}
