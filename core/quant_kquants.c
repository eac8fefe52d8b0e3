/* Q2_K, Q3_K, Q4_K, Q5_K, Q6_K and IQ4_XS: super-blocks of 256 with quantized
 * sub-block scales.
 *
 * Dequantization is ggml's, operation for operation (dequantize_row_q2_K ... q6_K,
 * _iq4_xs):
 *   Q2_K/Q4_K/Q5_K  d1 = d * sc; m1 = dmin * m; x = d1 * q - m1   (no fused multiply-add)
 *   Q3_K            dl = d * (sc - 32); x = dl * q                 (q = level - 4 or level)
 *   Q6_K            x = d * sc * (q - 32)                          (left to right)
 *   IQ4_XS          dl = d * (ls - 32); x = dl * kvalues[q]
 * Quantization is this project's: sub-block ranges from min/max (or the signed
 * element of largest magnitude), scales rounded up so each sub-block's range is
 * covered by its quantized step, levels rounded against the stored (f16-rounded)
 * scales. */
#include "core/half.h"
#include "core/quant.h"
#include "core/quant_blocks.h"
#include "core/quant_internal.h"

#include <math.h>
#include <string.h>


/* fminf/fmaxf without the NaN rules (and the libm call) the quantizer does not need */
static inline float min_f(float a, float b) { return a < b ? a : b; }
static inline float max_f(float a, float b) { return a > b ? a : b; }

/* One Q4_K or Q5_K super-block (qh NULL for Q4_K): ggml's dequantize_row_q4_K /
 * q5_K, whose loops differ only in the fifth bit (adding 0 is exact). */
static void dequantize_k_asymmetric(uint16_t dh, uint16_t dminh, const uint8_t *scales, const uint8_t *ql,
                                    const uint8_t *qh, float *y)
{
    const float d = q35_f16_to_f32(dh);
    const float min = q35_f16_to_f32(dminh);
    int is = 0;
    uint8_t sc, m;
    uint8_t u1 = 1, u2 = 2;
    for (int j = 0; j < Q35_QK_K; j += 64) {
        q35_k_scale_min(is + 0, scales, &sc, &m);
        const float d1 = d * sc;
        const float m1 = min * m;
        q35_k_scale_min(is + 1, scales, &sc, &m);
        const float d2 = d * sc;
        const float m2 = min * m;
        for (int l = 0; l < 32; l++)
            *y++ = d1 * ((ql[l] & 0xF) + (qh && (qh[l] & u1) ? 16 : 0)) - m1;
        for (int l = 0; l < 32; l++)
            *y++ = d2 * ((ql[l] >> 4) + (qh && (qh[l] & u2) ? 16 : 0)) - m2;
        ql += 32;
        is += 2;
        u1 = (uint8_t)(u1 << 2);
        u2 = (uint8_t)(u2 << 2);
    }
}

void q35_dequantize_q4_k(const void *src, float *dst, int64_t n)
{
    const q35_block_q4_K *b = src;
    for (int64_t i = 0; i < n / Q35_QK_K; i++)
        dequantize_k_asymmetric(b[i].d, b[i].dmin, b[i].scales, b[i].qs, NULL, dst + i * Q35_QK_K);
}

void q35_dequantize_q5_k(const void *src, float *dst, int64_t n)
{
    const q35_block_q5_K *b = src;
    for (int64_t i = 0; i < n / Q35_QK_K; i++)
        dequantize_k_asymmetric(b[i].d, b[i].dmin, b[i].scales, b[i].qs, b[i].qh, dst + i * Q35_QK_K);
}

void q35_dequantize_q6_k(const void *src, float *dst, int64_t n)
{
    const q35_block_q6_K *b = src;
    float *y = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float d = q35_f16_to_f32(b[i].d);
        const uint8_t *ql = b[i].ql;
        const uint8_t *qh = b[i].qh;
        const int8_t *sc = b[i].scales;
        for (int h = 0; h < Q35_QK_K; h += 128) {
            for (int l = 0; l < 32; l++) {
                const int is = l / 16;
                const int8_t q1 = (int8_t)((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
                const int8_t q2 = (int8_t)((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
                const int8_t q3 = (int8_t)((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
                const int8_t q4 = (int8_t)((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
                y[l + 0] = d * sc[is + 0] * q1;
                y[l + 32] = d * sc[is + 2] * q2;
                y[l + 64] = d * sc[is + 4] * q3;
                y[l + 96] = d * sc[is + 6] * q4;
            }
            y += 128;
            ql += 64;
            qh += 32;
            sc += 8;
        }
    }
}

/* Levels L[n_sub * len] in [0, nmax] and the integer scales ls and mins lm (each
 * 0..smax) of one asymmetric super-block: x ~= d*ls[s] * L - dmin*lm[s] per
 * sub-block s of len elements (Q4_K/Q5_K: 8 of 32, smax 63; Q2_K: 16 of 16, 15). */
static void quantize_asymmetric(const float *x, int n_sub, int len, int nmax, int smax, uint16_t *d_out,
                                uint16_t *dmin_out, uint8_t *ls, uint8_t *lm, uint8_t *L)
{
    float lo[16], hi[16], max_min = 0.0f;
    for (int s = 0; s < n_sub; s++) {
        lo[s] = 0.0f; /* the offset is non-negative: the format subtracts dmin*m */
        hi[s] = 0.0f;
        for (int l = 0; l < len; l++) {
            lo[s] = min_f(lo[s], x[len * s + l]);
            hi[s] = max_f(hi[s], x[len * s + l]);
        }
        max_min = max_f(max_min, -lo[s]);
    }
    *dmin_out = q35_f32_to_f16(max_min / (float)smax);
    const float dmin = q35_f16_to_f32(*dmin_out);
    float need[16], max_need = 0.0f;
    for (int s = 0; s < n_sub; s++) {
        lm[s] = (uint8_t)(dmin > 0.0f ? clamp_int(round_half_away(-lo[s] / dmin), 0, smax) : 0);
        need[s] = (hi[s] + dmin * lm[s]) / (float)nmax; /* step covering the shifted top */
        max_need = max_f(max_need, need[s]);
    }
    *d_out = q35_f32_to_f16(max_need / (float)smax);
    const float d = q35_f16_to_f32(*d_out);
    for (int s = 0; s < n_sub; s++)
        ls[s] = (uint8_t)(d > 0.0f ? clamp_int((int)ceilf(need[s] / d), 0, smax) : 0);
    for (int s = 0; s < n_sub; s++) {
        const float step = d * ls[s];
        const float off = dmin * lm[s];
        const float inv = step > 0.0f ? 1.0f / step : 0.0f;
        /* the shifted value is >= -off_err > -1: truncating v + 0.5 rounds it (ties up), then the clamp */
        for (int l = 0; l < len; l++)
            L[len * s + l] = (uint8_t)clamp_int((int)((x[len * s + l] + off) * inv + 0.5f), 0, nmax);
    }
}

/* Levels L[256] in [0, nmax] and the packed scales of one Q4_K/Q5_K super-block. */
static void quantize_k_asymmetric(const float *x, int nmax, uint16_t *d_out, uint16_t *dmin_out,
                                  uint8_t scales[Q35_K_SCALE_BYTES], uint8_t L[Q35_QK_K])
{
    uint8_t ls[8], lm[8];
    quantize_asymmetric(x, 8, 32, nmax, 63, d_out, dmin_out, ls, lm, L);
    memset(scales, 0, Q35_K_SCALE_BYTES);
    for (int j = 0; j < 8; j++) {
        if (j < 4) {
            scales[j] = ls[j];
            scales[j + 4] = lm[j];
        } else {
            scales[j + 4] = (uint8_t)((ls[j] & 0xF) | ((lm[j] & 0xF) << 4));
            scales[j - 4] |= (uint8_t)((ls[j] >> 4) << 6);
            scales[j - 0] |= (uint8_t)((lm[j] >> 4) << 6);
        }
    }
}

void q35_quantize_q4_k(const float *src, void *dst, int64_t n)
{
    q35_block_q4_K *b = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        uint8_t L[Q35_QK_K];
        quantize_k_asymmetric(src + i * Q35_QK_K, 15, &b[i].d, &b[i].dmin, b[i].scales, L);
        for (int g = 0; g < 4; g++)
            for (int l = 0; l < 32; l++)
                b[i].qs[32 * g + l] = (uint8_t)(L[64 * g + l] | (L[64 * g + 32 + l] << 4));
    }
}

void q35_quantize_q5_k(const float *src, void *dst, int64_t n)
{
    q35_block_q5_K *b = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        uint8_t L[Q35_QK_K];
        quantize_k_asymmetric(src + i * Q35_QK_K, 31, &b[i].d, &b[i].dmin, b[i].scales, L);
        memset(b[i].qh, 0, sizeof b[i].qh);
        for (int g = 0; g < 4; g++) {
            for (int l = 0; l < 32; l++) {
                const int l1 = L[64 * g + l], l2 = L[64 * g + 32 + l];
                b[i].qs[32 * g + l] = (uint8_t)((l1 & 0xF) | ((l2 & 0xF) << 4));
                b[i].qh[l] |= (uint8_t)(((l1 >> 4) << (2 * g)) | ((l2 >> 4) << (2 * g + 1)));
            }
        }
    }
}

void q35_quantize_q6_k(const float *src, void *dst, int64_t n)
{
    q35_block_q6_K *b = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float *x = src + i * Q35_QK_K;
        float need[16], max_need = 0.0f;
        for (int s = 0; s < 16; s++) {
            float amax = 0.0f;
            for (int l = 0; l < 16; l++)
                amax = max_f(amax, fabsf(x[16 * s + l]));
            need[s] = amax / 31.0f; /* levels -31..31 cover +-amax */
            max_need = max_f(max_need, need[s]);
        }
        b[i].d = q35_f32_to_f16(max_need / 127.0f);
        const float d = q35_f16_to_f32(b[i].d);
        uint8_t L[Q35_QK_K];
        for (int s = 0; s < 16; s++) {
            const int sc = d > 0.0f ? clamp_int((int)ceilf(need[s] / d), 0, 127) : 0;
            b[i].scales[s] = (int8_t)sc;
            const float step = d * sc;
            const float inv = step > 0.0f ? 1.0f / step : 0.0f;
            for (int l = 0; l < 16; l++)
                L[16 * s + l] = (uint8_t)(clamp_int(round_half_away(x[16 * s + l] * inv), -32, 31) + 32);
        }
        uint8_t *ql = b[i].ql, *qh = b[i].qh;
        for (int h = 0; h < Q35_QK_K; h += 128) {
            for (int l = 0; l < 32; l++) {
                const uint8_t *Lh = L + h;
                ql[l + 0] = (uint8_t)((Lh[l] & 0xF) | ((Lh[l + 64] & 0xF) << 4));
                ql[l + 32] = (uint8_t)((Lh[l + 32] & 0xF) | ((Lh[l + 96] & 0xF) << 4));
                qh[l] = (uint8_t)((Lh[l] >> 4) | ((Lh[l + 32] >> 4) << 2) | ((Lh[l + 64] >> 4) << 4) |
                                  ((Lh[l + 96] >> 4) << 6));
            }
            ql += 64;
            qh += 32;
        }
    }
}

/* Q2_K/Q3_K's 2-bit layout: element 128h + 32j + l at bits 2j of qs[32h + l]. */
static void pack_2bit(const uint8_t L[Q35_QK_K], uint8_t qs[Q35_QK_K / 4])
{
    for (int h = 0; h < Q35_QK_K; h += 128)
        for (int l = 0; l < 32; l++)
            qs[h / 4 + l] = (uint8_t)(L[h + l] | (L[h + l + 32] << 2) | (L[h + l + 64] << 4) | (L[h + l + 96] << 6));
}

void q35_dequantize_q2_k(const void *src, float *dst, int64_t n)
{
    const q35_block_q2_K *b = src;
    float *y = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float d = q35_f16_to_f32(b[i].d);
        const float min = q35_f16_to_f32(b[i].dmin);
        const uint8_t *q = b[i].qs;
        int is = 0;
        for (int h = 0; h < Q35_QK_K; h += 128) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int half = 0; half < 2; half++) {
                    const uint8_t sc = b[i].scales[is++];
                    const float dl = d * (sc & 0xF);
                    const float ml = min * (sc >> 4);
                    for (int l = 0; l < 16; l++)
                        *y++ = dl * ((q[16 * half + l] >> shift) & 3) - ml;
                }
            }
            q += 32;
        }
    }
}

void q35_quantize_q2_k(const float *src, void *dst, int64_t n)
{
    q35_block_q2_K *b = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        uint8_t ls[16], lm[16], L[Q35_QK_K];
        quantize_asymmetric(src + i * Q35_QK_K, 16, 16, 3, 15, &b[i].d, &b[i].dmin, ls, lm, L);
        for (int s = 0; s < 16; s++)
            b[i].scales[s] = (uint8_t)(ls[s] | (lm[s] << 4));
        pack_2bit(L, b[i].qs);
    }
}

/* Signed sub-block scales of a symmetric super-block (Q3_K, IQ4_XS) of n_sub
 * sub-blocks of len: want[s] the step that puts sub-block s's element of largest
 * magnitude at level `low` (< 0, the longer side); d covers the largest |want|
 * over 31, sc[s] = sign * ceil(|want| / d) in -32..31 so each stored step is at
 * least the wanted one. Returns d as stored. */
static float signed_scales(const float *x, int n_sub, int len, float low, uint16_t *d_out, int *sc)
{
    float want[16];
    for (int s = 0; s < n_sub; s++)
        want[s] = signed_absmax(x + len * s, len) / low;
    float amax = 0.0f;
    for (int s = 0; s < n_sub; s++)
        amax = max_f(amax, fabsf(want[s]));
    *d_out = q35_f16_at_least(amax / 31.0f);
    const float d = q35_f16_to_f32(*d_out);
    for (int s = 0; s < n_sub; s++) {
        const int a = d > 0.0f ? (int)ceilf(fabsf(want[s]) / d) : 0;
        sc[s] = want[s] < 0.0f ? -clamp_int(a, 0, 32) : clamp_int(a, 0, 31);
    }
    return d;
}

void q35_dequantize_q3_k(const void *src, float *dst, int64_t n)
{
    const q35_block_q3_K *b = src;
    float *y = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float d_all = q35_f16_to_f32(b[i].d);
        const uint8_t *q = b[i].qs;
        const uint8_t *hm = b[i].hmask;
        uint8_t m = 1;
        int is = 0;
        for (int h = 0; h < Q35_QK_K; h += 128) {
            for (int shift = 0; shift < 8; shift += 2) {
                for (int half = 0; half < 2; half++) {
                    const float dl = d_all * (q35_q3_k_scale(is++, b[i].scales) - 32);
                    for (int l = 16 * half; l < 16 * half + 16; l++)
                        *y++ = dl * (((q[l] >> shift) & 3) - ((hm[l] & m) ? 0 : 4));
                }
                m = (uint8_t)(m << 1);
            }
            q += 32;
        }
    }
}

void q35_quantize_q3_k(const float *src, void *dst, int64_t n)
{
    q35_block_q3_K *b = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float *x = src + i * Q35_QK_K;
        int sc[16];
        const float d = signed_scales(x, 16, 16, -4.0f, &b[i].d, sc);
        memset(b[i].scales, 0, sizeof b[i].scales);
        memset(b[i].hmask, 0, sizeof b[i].hmask);
        uint8_t L[Q35_QK_K];
        for (int s = 0; s < 16; s++) {
            const int u = sc[s] + 32; /* 0..63 */
            b[i].scales[s % 8] |= (uint8_t)((u & 0xF) << (s < 8 ? 0 : 4));
            b[i].scales[8 + s % 4] |= (uint8_t)((u >> 4) << (2 * (s / 4)));
            const float step = d * sc[s];
            const float inv = step != 0.0f ? 1.0f / step : 0.0f;
            for (int l = 0; l < 16; l++) {
                const int e = 16 * s + l, q = clamp_int(round_half_away(x[e] * inv), -4, 3) + 4;
                if (q > 3)
                    b[i].hmask[e % 32] |= (uint8_t)(1u << (e / 32));
                L[e] = (uint8_t)(q & 3);
            }
        }
        pack_2bit(L, b[i].qs);
    }
}

void q35_dequantize_iq4_xs(const void *src, float *dst, int64_t n)
{
    const q35_block_iq4_xs *b = src;
    float *y = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const uint8_t *qs = b[i].qs;
        const float d = q35_f16_to_f32(b[i].d);
        for (int s = 0; s < Q35_QK_K / 32; s++) {
            const float dl = d * (q35_iq4_xs_scale(s, b[i].scales_l, b[i].scales_h) - 32);
            for (int j = 0; j < 16; j++) {
                y[j] = dl * q35_kvalues_iq4nl[qs[j] & 0xF];
                y[j + 16] = dl * q35_kvalues_iq4nl[qs[j] >> 4];
            }
            y += 32;
            qs += 16;
        }
    }
}

void q35_quantize_iq4_xs(const float *src, void *dst, int64_t n)
{
    q35_block_iq4_xs *b = dst;
    for (int64_t i = 0; i < n / Q35_QK_K; i++) {
        const float *x = src + i * Q35_QK_K;
        int sc[8];
        const float d = signed_scales(x, 8, 32, -127.0f, &b[i].d, sc); /* the table's -127 */
        b[i].scales_h = 0;
        memset(b[i].scales_l, 0, sizeof b[i].scales_l);
        for (int s = 0; s < 8; s++) {
            const int u = sc[s] + 32;
            b[i].scales_l[s / 2] |= (uint8_t)((u & 0xF) << (4 * (s % 2)));
            b[i].scales_h = (uint16_t)(b[i].scales_h | (u >> 4) << (2 * s));
            uint8_t L[32];
            q35_iq4nl_levels(x + 32 * s, 32, d * sc[s], L);
            for (int j = 0; j < 16; j++)
                b[i].qs[16 * s + j] = (uint8_t)(L[j] | (L[j + 16] << 4));
        }
    }
}
