/* Q8_0, Q4_0, Q5_0, Q4_1, Q5_1 and IQ4_NL: blocks of 32 with an f16 scale (and,
 * for Q4_1/Q5_1, an f16 offset).
 *
 * Dequantization is ggml's arithmetic (dequantize_row_q8_0 ... _iq4_nl): the
 * integer level converted to float, then one multiply by the scale; Q4_1/Q5_1 then
 * add the offset (q * d + m, no fused multiply-add); IQ4_NL's level is an entry of
 * its table (d * kvalues[q]). Quantization rounds against the scale as stored
 * (after its f16 rounding), so the error is bounded by the stored step. */
#include "core/half.h"
#include "core/quant.h"
#include "core/quant_blocks.h"
#include "core/quant_internal.h"

#include <math.h>
#include <string.h>


/* Q4_0's nibble order: element j < 16 in the low nibble of qs[j], j + 16 in the high. */
static void pack_nibbles(const uint8_t L[Q35_QK32], uint8_t qs[Q35_QK32 / 2])
{
    for (int j = 0; j < Q35_QK32 / 2; j++)
        qs[j] = (uint8_t)((L[j] & 0x0F) | ((L[j + Q35_QK32 / 2] & 0x0F) << 4));
}

/* Q5_0's fifth bits: bit j of the little-endian word is element j's. */
static void pack_fifth_bits(const uint8_t L[Q35_QK32], uint8_t qh[4])
{
    uint32_t h = 0;
    for (int j = 0; j < Q35_QK32; j++)
        h |= (uint32_t)(L[j] >> 4) << j;
    memcpy(qh, &h, sizeof h);
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

void q35_quantize_q4_0(const float *src, void *dst, int64_t n)
{
    q35_block_q4_0 *b = dst;
    for (int64_t i = 0; i < n / Q35_QK32; i++) {
        const float *x = src + i * Q35_QK32;
        b[i].d = q35_f32_to_f16(signed_absmax(x, Q35_QK32) / -8.0f);
        const float d = q35_f16_to_f32(b[i].d);
        const float id = d != 0.0f ? 1.0f / d : 0.0f;
        uint8_t L[Q35_QK32];
        for (int j = 0; j < Q35_QK32; j++)
            L[j] = (uint8_t)clamp_int(round_half_away(x[j] * id) + 8, 0, 15);
        pack_nibbles(L, b[i].qs);
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
        uint8_t L[Q35_QK32];
        for (int j = 0; j < Q35_QK32; j++)
            L[j] = (uint8_t)clamp_int(round_half_away(x[j] * id) + 16, 0, 31);
        pack_nibbles(L, b[i].qs);
        pack_fifth_bits(L, b[i].qh);
    }
}

/* Q4_1/Q5_1 levels L[32] in [0, nmax] with the f16 scale and offset: m the block's
 * minimum, d its range over nmax, levels rounded against both as stored. */
static void quantize_offset(const float *x, int nmax, uint16_t *d_out, uint16_t *m_out, uint8_t L[Q35_QK32])
{
    float lo = x[0], hi = x[0];
    for (int j = 1; j < Q35_QK32; j++) {
        lo = x[j] < lo ? x[j] : lo;
        hi = x[j] > hi ? x[j] : hi;
    }
    *m_out = q35_f32_to_f16(lo);
    *d_out = q35_f32_to_f16((hi - lo) / (float)nmax);
    const float m = q35_f16_to_f32(*m_out), d = q35_f16_to_f32(*d_out);
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < Q35_QK32; j++)
        L[j] = (uint8_t)clamp_int(round_half_away((x[j] - m) * id), 0, nmax);
}

/* Q4_1/Q5_1 (qh NULL for Q4_1): ggml's dequantize_row_q4_1/q5_1, x = q * d + m. */
static void dequantize_offset(uint16_t dh, uint16_t mh, const uint8_t *qs, const uint8_t *qh, float *y)
{
    const float d = q35_f16_to_f32(dh);
    const float m = q35_f16_to_f32(mh);
    uint32_t h = 0;
    if (qh)
        memcpy(&h, qh, sizeof h);
    for (int j = 0; j < Q35_QK32 / 2; j++) {
        const int x0 = (qs[j] & 0x0F) | (int)(((h >> j) << 4) & 0x10);
        const int x1 = (qs[j] >> 4) | (int)((h >> (j + 12)) & 0x10);
        y[j] = x0 * d + m;
        y[j + Q35_QK32 / 2] = x1 * d + m;
    }
}

void q35_dequantize_q4_1(const void *src, float *dst, int64_t n)
{
    const q35_block_q4_1 *b = src;
    for (int64_t i = 0; i < n / Q35_QK32; i++)
        dequantize_offset(b[i].d, b[i].m, b[i].qs, NULL, dst + i * Q35_QK32);
}

void q35_quantize_q4_1(const float *src, void *dst, int64_t n)
{
    q35_block_q4_1 *b = dst;
    for (int64_t i = 0; i < n / Q35_QK32; i++) {
        uint8_t L[Q35_QK32];
        quantize_offset(src + i * Q35_QK32, 15, &b[i].d, &b[i].m, L);
        pack_nibbles(L, b[i].qs);
    }
}

void q35_dequantize_q5_1(const void *src, float *dst, int64_t n)
{
    const q35_block_q5_1 *b = src;
    for (int64_t i = 0; i < n / Q35_QK32; i++)
        dequantize_offset(b[i].d, b[i].m, b[i].qs, b[i].qh, dst + i * Q35_QK32);
}

void q35_quantize_q5_1(const float *src, void *dst, int64_t n)
{
    q35_block_q5_1 *b = dst;
    for (int64_t i = 0; i < n / Q35_QK32; i++) {
        uint8_t L[Q35_QK32];
        quantize_offset(src + i * Q35_QK32, 31, &b[i].d, &b[i].m, L);
        pack_nibbles(L, b[i].qs);
        pack_fifth_bits(L, b[i].qh);
    }
}

const int8_t q35_kvalues_iq4nl[16] = Q35_KVALUES_IQ4NL;

void q35_dequantize_iq4_nl(const void *src, float *dst, int64_t n)
{
    const q35_block_iq4_nl *b = src;
    for (int64_t i = 0; i < n / Q35_QK32; i++) {
        const float d = q35_f16_to_f32(b[i].d);
        for (int j = 0; j < Q35_QK32 / 2; j++) {
            dst[i * Q35_QK32 + j] = d * q35_kvalues_iq4nl[b[i].qs[j] & 0x0F];
            dst[i * Q35_QK32 + j + Q35_QK32 / 2] = d * q35_kvalues_iq4nl[b[i].qs[j] >> 4];
        }
    }
}

void q35_quantize_iq4_nl(const float *src, void *dst, int64_t n)
{
    q35_block_iq4_nl *b = dst;
    for (int64_t i = 0; i < n / Q35_QK32; i++) {
        const float *x = src + i * Q35_QK32;
        /* the element of largest magnitude on the table's longer side (-127) */
        b[i].d = q35_f32_to_f16(signed_absmax(x, Q35_QK32) / -127.0f);
        uint8_t L[Q35_QK32];
        q35_iq4nl_levels(x, Q35_QK32, q35_f16_to_f32(b[i].d), L);
        pack_nibbles(L, b[i].qs);
    }
}

void q35_iq4nl_levels(const float *x, int n, float d, uint8_t *L)
{
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    for (int j = 0; j < n; j++) {
        /* the nearest table entry to x / d: the table ascends, so the first whose
         * midpoint with the next lies above it (ties to the lower entry) */
        const float v = x[j] * id;
        int q = 0;
        while (q < 15 && v > 0.5f * (float)(q35_kvalues_iq4nl[q] + q35_kvalues_iq4nl[q + 1]))
            q++;
        L[j] = (uint8_t)q;
    }
}
