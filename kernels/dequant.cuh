/* Quantized weights decoded on the device with the CPU dequantizer's arithmetic
 * bit for bit (model/quant_*.c, ggml's): every product and difference is an
 * explicitly rounded intrinsic, so nvcc cannot contract a multiply-subtract into
 * a fused multiply-add that the CPU does not do.
 *
 * One arithmetic per format (q35_dq_*, on exact integer levels), two readers of
 * the bytes: q35_dequant_at here, one element anywhere in a row (the embedding
 * gather), and the units of kernels/dequant_units.cuh (the dequantizer and the
 * GEMV). */
#ifndef Q35_KERNELS_DEQUANT_CUH
#define Q35_KERNELS_DEQUANT_CUH

#include "core/quant.h"
#include "core/quant_blocks.h"

#include <cuda_fp16.h>
#include <stdint.h>

/* ---- the arithmetic ------------------------------------------------------------ */

__device__ __forceinline__ float q35_dev_f16(uint16_t h)
{
    return __half2float(__ushort_as_half(h));
}

/* (float)q, exactly, for |q| < 2^22, without the int-to-float conversion unit
 * (16 results a clock per SM up to sm_90): 1.5 * 2^23 + q is exact in binary32,
 * and so is the subtraction. */
__device__ __forceinline__ float q35_dev_level(int q)
{
    return __fsub_rn(__int_as_float(0x4B400000 + q), 12582912.0f);
}

/* Byte i (0..3, a constant once unrolled) of w, minus BIAS, as a float, exactly:
 * one byte permute builds 0x4B4000bb = 1.5 * 2^23 + b, one subtraction. */
template <int BIAS>
__device__ __forceinline__ float q35_byte_level(uint32_t w, int i)
{
    return __fsub_rn(__int_as_float((int)__byte_perm(w, 0x4B400000u, 0x7640u | (unsigned)i)), 12582912.0f + BIAS);
}

/* IQ4_NL's and IQ4_XS's table entry `index` (0..15) as a float, exactly: the
 * entries + 128 are bytes (core/quant_blocks.h's Q35_KVALUES_IQ4NL), held in 4
 * words; two byte permutes pick index's byte from each half, the top bit picks
 * the half. */
namespace q35_iq4nl_detail {
constexpr int8_t k_table[16] = Q35_KVALUES_IQ4NL;
__host__ __device__ constexpr uint32_t word(int w)
{
    return (uint32_t)(uint8_t)(k_table[4 * w] + 128) | (uint32_t)(uint8_t)(k_table[4 * w + 1] + 128) << 8 |
           (uint32_t)(uint8_t)(k_table[4 * w + 2] + 128) << 16 | (uint32_t)(uint8_t)(k_table[4 * w + 3] + 128) << 24;
}
constexpr uint32_t w0 = word(0), w1 = word(1), w2 = word(2), w3 = word(3);
} // namespace q35_iq4nl_detail

__device__ __forceinline__ float q35_dev_iq4nl(uint32_t index)
{
    using namespace q35_iq4nl_detail;
    const uint32_t lo = __byte_perm(w0, w1, index & 7u), hi = __byte_perm(w2, w3, index & 7u);
    return __fsub_rn(__int_as_float((int)__byte_perm(index & 8u ? hi : lo, 0x4B400000u, 0x7640u)), 12582912.0f + 128);
}

/* The element arithmetic, from an exact level q (a float holding an integer):
 *   Q8_0, Q4_0, Q5_0   x = q * d                  (q35_dq_scaled)
 *   IQ4_NL             x = T[q] * d               (q35_dq_scaled of the table's entry)
 *   Q4_1, Q5_1         x = q * d + m              (q35_dq_k of d, -m)
 *   Q6_K               x = (d * sc) * q           (q35_dq_scaled of ds = q35_dq_q6k_scale)
 *   Q3_K, IQ4_XS       x = (d * (sc - 32)) * q    (the same; IQ4_XS's q from the table)
 *   Q2_K, Q4_K, Q5_K   d1 = d * sc; m1 = dmin * m; x = d1 * q - m1
 *   the grid i-quants  x = (+-grid[j] or grid[j] + delta) * db   (q35_dq_scaled; kernels/dequant_units_iq.cuh) */
__device__ __forceinline__ float q35_dq_scaled(float q, float d)
{
    return __fmul_rn(q, d);
}

__device__ __forceinline__ void q35_dq_k_sub(float d, float dmin, float sc, float m, float *d1, float *m1)
{
    *d1 = __fmul_rn(d, sc);
    *m1 = __fmul_rn(dmin, m);
}

__device__ __forceinline__ float q35_dq_k(float d1, float m1, float q)
{
    return __fsub_rn(__fmul_rn(d1, q), m1);
}

__device__ __forceinline__ float q35_dq_q6k_scale(float d, int sc)
{
    return __fmul_rn(d, q35_dev_level(sc));
}

/* q35_k_scale_min (model/quant_blocks.h) four sub-blocks at once, on the 12 scale
 * bytes held as little-endian words s0 = bytes 0..3, s1 = 4..7, s2 = 8..11: byte
 * j % 4 of *sc and *m is sub-block j's 6-bit scale and min, for j < 4 (high
 * false) or j >= 4 (high true). No branch: lanes of a warp take either half. */
__device__ __forceinline__ void q35_dev_k_scales(uint32_t s0, uint32_t s1, uint32_t s2, bool high, uint32_t *sc,
                                                 uint32_t *m)
{
    const uint32_t sc_hi = (s2 & 0x0F0F0F0Fu) | ((s0 >> 2) & 0x30303030u);        /* low nibble | top bits of j - 4 */
    const uint32_t m_hi = ((s2 >> 4) & 0x0F0F0F0Fu) | ((s1 >> 2) & 0x30303030u); /* high nibble | top bits of j */
    *sc = high ? sc_hi : s0 & 0x3F3F3F3Fu;
    *m = high ? m_hi : s1 & 0x3F3F3F3Fu;
}

/* ---- one element ------------------------------------------------------------------ */

__device__ __forceinline__ uint16_t q35_dev_u16(const uint8_t *p)
{
    return (uint16_t)(p[0] | (p[1] << 8)); /* blocks are only 2-byte aligned */
}

/* Element i of a row of a grid i-quant (kernels/dequant_units_iq.cuh, which a
 * translation unit calling q35_dequant_at must include: kernels/dequant_units.cuh). */
template <int TYPE>
__device__ __forceinline__ float q35_iq_at(const uint8_t *row, int64_t i);

/* Element i of a row of `type` starting at row (i < the row's length). */
__device__ __forceinline__ float q35_dequant_at(int type, const uint8_t *row, int64_t i)
{
    switch (type) {
    case Q35_TYPE_F32:
        return reinterpret_cast<const float *>(row)[i];
    case Q35_TYPE_F16:
        return q35_dev_f16(reinterpret_cast<const uint16_t *>(row)[i]);
    case Q35_TYPE_BF16:
        return __uint_as_float((uint32_t)reinterpret_cast<const uint16_t *>(row)[i] << 16);
    case Q35_TYPE_Q8_0: {
        const q35_block_q8_0 *b = reinterpret_cast<const q35_block_q8_0 *>(row) + i / 32;
        return q35_dq_scaled(q35_dev_level(b->qs[i % 32]), q35_dev_f16(b->d));
    }
    case Q35_TYPE_Q4_0: {
        const q35_block_q4_0 *b = reinterpret_cast<const q35_block_q4_0 *>(row) + i / 32;
        const int j = (int)(i % 32);
        const int q = (j < 16 ? (b->qs[j] & 0x0F) : (b->qs[j - 16] >> 4)) - 8;
        return q35_dq_scaled(q35_dev_level(q), q35_dev_f16(b->d));
    }
    case Q35_TYPE_Q5_0: {
        const q35_block_q5_0 *b = reinterpret_cast<const q35_block_q5_0 *>(row) + i / 32;
        const int j = (int)(i % 32);
        const uint32_t qh = b->qh[0] | (b->qh[1] << 8) | (b->qh[2] << 16) | ((uint32_t)b->qh[3] << 24);
        const int lo = j < 16 ? (b->qs[j] & 0x0F) : (b->qs[j - 16] >> 4);
        const int q = (lo | (int)(((qh >> j) & 1u) << 4)) - 16;
        return q35_dq_scaled(q35_dev_level(q), q35_dev_f16(b->d));
    }
    case Q35_TYPE_Q4_K:
    case Q35_TYPE_Q5_K: {
        const int64_t blk = i / 256;
        const int e = (int)(i % 256), s = e / 32, g = e / 64, l = e % 32, high = s % 2;
        const uint8_t *bp = row + blk * (type == Q35_TYPE_Q4_K ? 144 : 176);
        const float d = q35_dev_f16(q35_dev_u16(bp)), dmin = q35_dev_f16(q35_dev_u16(bp + 2));
        const uint8_t *scales = bp + 4;
        uint8_t sc, m;
        q35_k_scale_min(s, scales, &sc, &m);
        int q;
        if (type == Q35_TYPE_Q4_K) {
            q = (bp[16 + 32 * g + l] >> (4 * high)) & 0xF;
        } else {
            const uint8_t *qh = bp + 16, *qs = bp + 48;
            q = ((qs[32 * g + l] >> (4 * high)) & 0xF) + (((qh[l] >> (2 * g + high)) & 1) ? 16 : 0);
        }
        float d1, m1;
        q35_dq_k_sub(d, dmin, q35_dev_level(sc), q35_dev_level(m), &d1, &m1);
        return q35_dq_k(d1, m1, q35_dev_level(q));
    }
    case Q35_TYPE_Q6_K: {
        const q35_block_q6_K *b = reinterpret_cast<const q35_block_q6_K *>(row) + i / 256;
        const int e = (int)(i % 256), h = e / 128, o = e % 128, quarter = o / 32, l = o % 32;
        const uint8_t qlb = b->ql[h * 64 + (quarter & 1) * 32 + l];
        const int lo = quarter < 2 ? (qlb & 0xF) : (qlb >> 4);
        const int hi = (b->qh[h * 32 + l] >> (2 * quarter)) & 3;
        const int q = (int)(int8_t)(lo | (hi << 4)) - 32;
        const int sc = b->scales[h * 8 + l / 16 + 2 * quarter];
        return q35_dq_scaled(q35_dev_level(q), q35_dq_q6k_scale(q35_dev_f16(b->d), sc));
    }
    case Q35_TYPE_Q4_1:
    case Q35_TYPE_Q5_1: {
        const bool q5 = type == Q35_TYPE_Q5_1;
        const uint8_t *bp = row + (i / 32) * (q5 ? 24 : 20);
        const int j = (int)(i % 32);
        const uint8_t *qs = bp + (q5 ? 8 : 4);
        const int lo = j < 16 ? (qs[j] & 0x0F) : (qs[j - 16] >> 4);
        const int high = q5 ? (bp[4 + j / 8] >> (j % 8)) & 1 : 0;
        const float m = q35_dev_f16(q35_dev_u16(bp + 2));
        return q35_dq_k(q35_dev_f16(q35_dev_u16(bp)), -m, q35_dev_level(lo | high << 4));
    }
    case Q35_TYPE_IQ4_NL: {
        const q35_block_iq4_nl *b = reinterpret_cast<const q35_block_iq4_nl *>(row) + i / 32;
        const int j = (int)(i % 32);
        const int q = j < 16 ? (b->qs[j] & 0x0F) : (b->qs[j - 16] >> 4);
        return q35_dq_scaled(q35_dev_iq4nl((uint32_t)q), q35_dev_f16(b->d));
    }
    case Q35_TYPE_Q2_K:
    case Q35_TYPE_Q3_K: {
        const bool q3 = type == Q35_TYPE_Q3_K;
        const uint8_t *bp = row + (i / 256) * (q3 ? 110 : 84);
        const int e = (int)(i % 256), sb = e / 16;
        const int low = (bp[(q3 ? 32 : 16) + 32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32))) & 3;
        if (q3) {
            const int q = low - ((bp[e % 32] >> (e / 32)) & 1 ? 0 : 4);
            const float dl = q35_dq_q6k_scale(q35_dev_f16(q35_dev_u16(bp + 108)), q35_q3_k_scale(sb, bp + 96) - 32);
            return q35_dq_scaled(q35_dev_level(q), dl);
        }
        float d1, m1;
        q35_dq_k_sub(q35_dev_f16(q35_dev_u16(bp + 80)), q35_dev_f16(q35_dev_u16(bp + 82)), q35_dev_level(bp[sb] & 0xF),
                     q35_dev_level(bp[sb] >> 4), &d1, &m1);
        return q35_dq_k(d1, m1, q35_dev_level(low));
    }
    case Q35_TYPE_IQ4_XS: {
        const uint8_t *bp = row + (i / 256) * 136;
        const int e = (int)(i % 256), sb = e / 32, j = e % 32;
        const uint8_t qb = bp[8 + 16 * sb + j % 16];
        const int ls = q35_iq4_xs_scale(sb, bp + 4, q35_dev_u16(bp + 2));
        const float dl = q35_dq_q6k_scale(q35_dev_f16(q35_dev_u16(bp)), ls - 32);
        return q35_dq_scaled(q35_dev_iq4nl(j < 16 ? qb & 0xFu : (uint32_t)(qb >> 4)), dl);
    }
    case Q35_TYPE_IQ2_XXS: return q35_iq_at<Q35_TYPE_IQ2_XXS>(row, i);
    case Q35_TYPE_IQ2_XS: return q35_iq_at<Q35_TYPE_IQ2_XS>(row, i);
    case Q35_TYPE_IQ2_S: return q35_iq_at<Q35_TYPE_IQ2_S>(row, i);
    case Q35_TYPE_IQ3_XXS: return q35_iq_at<Q35_TYPE_IQ3_XXS>(row, i);
    case Q35_TYPE_IQ3_S: return q35_iq_at<Q35_TYPE_IQ3_S>(row, i);
    case Q35_TYPE_IQ1_S: return q35_iq_at<Q35_TYPE_IQ1_S>(row, i);
    case Q35_TYPE_IQ1_M: return q35_iq_at<Q35_TYPE_IQ1_M>(row, i);
    default:
        return __int_as_float(0x7fc00000); /* launchers refuse other types */
    }
}

#endif /* Q35_KERNELS_DEQUANT_CUH */
