/* The block layouts of the grid i-quants (ggml's block_iq2_xxs ... block_iq1_m,
 * ggml/src/ggml-common.h): super-blocks of 256 whose elements come in groups of 8
 * (IQ3: grid points of 4) read from a grid of points (core/quant_grids.h), a
 * sub-block scale, and signs (IQ2, IQ3) or a shift (IQ1). Included by
 * core/quant_blocks.h; the arithmetic is core/quant_iq*.c's (ggml's
 * dequantize_row_iq*), operation for operation. In every layout a sub-block of 32
 * holds 4 groups of 8, group l the elements 8l .. 8l + 7 of it.
 *
 * Signs of a group of 8 (IQ2_XXS, IQ2_XS, IQ3_XXS store 7 bits): bit j set makes
 * element j negative; the 8th bit is the parity of the 7 stored ones
 * (q35_iq_signs7), so a group has an even number of negatives. */
#ifndef Q35_QUANT_BLOCKS_IQ_H
#define Q35_QUANT_BLOCKS_IQ_H

#include <stdint.h>

/* IQ2_XXS (2.06 bits a weight): per sub-block s of 32, the 8 bytes at 8s of qs:
 * bytes 0..3 the grid indices (q35_iq2xxs_grid) of groups 0..3, bytes 4..7 a
 * little-endian word w: bits 7l .. 7l + 6 group l's signs, bits 28..31 the scale ls.
 *   db = d * (0.5 + ls) * 0.25;  x = db * grid[j] * (sign j ? -1 : 1) */
typedef struct q35_block_iq2_xxs {
    uint16_t d;                 /* f16 super-scale */
    uint16_t qs[Q35_QK_K / 8];  /* 8 sub-blocks of 8 bytes */
} q35_block_iq2_xxs;

/* IQ2_XS (2.31): qs[4s + l] of group l of sub-block s: bits 0..8 the index into
 * q35_iq2xs_grid, bits 9..15 its signs; scales[s]: low nibble the scale of groups
 * 0, 1 (elements 0..15), high nibble of groups 2, 3; db as IQ2_XXS's. */
typedef struct q35_block_iq2_xs {
    uint16_t d;
    uint16_t qs[Q35_QK_K / 8];
    uint8_t scales[Q35_QK_K / 32];
} q35_block_iq2_xs;

/* IQ2_S (2.56): group l of sub-block s: index qs[4s + l] | ((qh[s] >> 2l) & 3) << 8
 * into q35_iq2s_grid, all 8 signs in qs[32 + 4s + l] (no parity); scales as IQ2_XS's. */
typedef struct q35_block_iq2_s {
    uint16_t d;
    uint8_t qs[Q35_QK_K / 4];  /* 32 index bytes, then 32 sign bytes */
    uint8_t qh[Q35_QK_K / 32];
    uint8_t scales[Q35_QK_K / 32];
} q35_block_iq2_s;

/* IQ3_XXS (3.06): sub-block s: grid points 8s .. 8s + 7 of 4 elements, indices
 * qs[8s + k] into q35_iq3xxs_grid; the word w at qs[64 + 4s]: bits 7l .. 7l + 6 the
 * signs of group l (points 2l, 2l + 1), bits 28..31 ls.
 *   db = d * (0.5 + ls) * 0.5;  x = db * grid[j] * (sign ? -1 : 1) */
typedef struct q35_block_iq3_xxs {
    uint16_t d;
    uint8_t qs[3 * Q35_QK_K / 8]; /* 64 index bytes, then 8 words of signs and scale */
} q35_block_iq3_xxs;

/* IQ3_S (3.44): sub-block s: point k (4 elements) index qs[8s + k] | ((qh[s] >> k)
 * & 1) << 8 into q35_iq3s_grid; group l's 8 signs signs[4s + l] (no parity); ls the
 * nibble s % 2 of scales[s / 2].
 *   db = d * (1 + 2 ls);  x = db * grid[j] * (sign ? -1 : 1) */
typedef struct q35_block_iq3_s {
    uint16_t d;
    uint8_t qs[Q35_QK_K / 4];
    uint8_t qh[Q35_QK_K / 32];
    uint8_t signs[Q35_QK_K / 8];
    uint8_t scales[Q35_QK_K / 64];
} q35_block_iq3_s;

/* IQ1_S (1.56): group l of sub-block s: index qs[4s + l] | ((qh[s] >> 3l) & 7) << 8
 * into q35_iq1s_grid (levels -1, 0, 1); qh[s] bits 12..14 ls, bit 15 the shift's sign.
 *   dl = d * (2 ls + 1);  x = dl * (grid[j] + delta), delta = bit 15 ? -1/8 : +1/8 */
typedef struct q35_block_iq1_s {
    uint16_t d;
    uint8_t qs[Q35_QK_K / 8];
    uint16_t qh[Q35_QK_K / 32];
} q35_block_iq1_s;

/* IQ1_M (1.75): group l of sub-block s: index qs[4s + l] | ((qh[2s + l/2] >> 4(l%2))
 * & 7) << 8 into q35_iq1s_grid, bit 3 of that nibble the sign of its own shift;
 * the 4 little-endian words sc[k] of scales: sc[s / 2] bits 6(s%2) .. +2 the scale
 * ls1 of groups 0, 1, bits 6(s%2) + 3 .. +5 ls2 of groups 2, 3; the f16 super-scale
 * d is their top nibbles (sc[k] >> 12 its nibble k).
 *   dl = d * (2 ls + 1);  x = dl * (grid[j] + delta) */
typedef struct q35_block_iq1_m {
    uint8_t qs[Q35_QK_K / 8];
    uint8_t qh[Q35_QK_K / 16];
    uint8_t scales[Q35_QK_K / 32];
} q35_block_iq1_m;

#ifdef __cplusplus
static_assert(sizeof(q35_block_iq2_xxs) == 66, "iq2_xxs block");
static_assert(sizeof(q35_block_iq2_xs) == 74, "iq2_xs block");
static_assert(sizeof(q35_block_iq2_s) == 82, "iq2_s block");
static_assert(sizeof(q35_block_iq3_xxs) == 98, "iq3_xxs block");
static_assert(sizeof(q35_block_iq3_s) == 110, "iq3_s block");
static_assert(sizeof(q35_block_iq1_s) == 50, "iq1_s block");
static_assert(sizeof(q35_block_iq1_m) == 56, "iq1_m block");
#else
_Static_assert(sizeof(q35_block_iq2_xxs) == 66, "iq2_xxs block");
_Static_assert(sizeof(q35_block_iq2_xs) == 74, "iq2_xs block");
_Static_assert(sizeof(q35_block_iq2_s) == 82, "iq2_s block");
_Static_assert(sizeof(q35_block_iq3_xxs) == 98, "iq3_xxs block");
_Static_assert(sizeof(q35_block_iq3_s) == 110, "iq3_s block");
_Static_assert(sizeof(q35_block_iq1_s) == 50, "iq1_s block");
_Static_assert(sizeof(q35_block_iq1_m) == 56, "iq1_m block");
#endif

/* The 8 sign bits a 7-bit sign field s stands for (ggml's ksigns_iq2xs[s], which
 * this computes): s, and as bit 7 the parity of s's bits. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline uint32_t q35_iq_signs7(uint32_t s)
{
    s &= 127u;
    uint32_t p = s ^ (s >> 4);
    p ^= p >> 2;
    p ^= p >> 1;
    return s | (p & 1u) << 7;
}

/* IQ1_M's f16 super-scale: the top nibbles of its 4 scale words. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline uint16_t q35_iq1_m_d(const uint8_t scales[8])
{
    return (uint16_t)((scales[1] >> 4) | (scales[3] & 0xF0) | (scales[5] >> 4) << 8 | (scales[7] & 0xF0) << 8);
}

/* Sets IQ1_M's f16 super-scale d into the top nibbles of its scale words (the
 * other bits kept). */
static inline void q35_iq1_m_set_d(uint8_t scales[8], uint16_t d)
{
    for (int k = 0; k < 4; k++)
        scales[2 * k + 1] = (uint8_t)((scales[2 * k + 1] & 0x0Fu) | ((d >> (4 * k)) & 0xFu) << 4);
}

/* IQ1_S's and IQ1_M's shift of the grid's levels (ggml's IQ1S_DELTA, IQ1M_DELTA). */
#define Q35_IQ1_DELTA 0.125f

#endif /* Q35_QUANT_BLOCKS_IQ_H */
