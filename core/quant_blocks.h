/* ggml's block layouts, byte for byte (little-endian). Shared by the CPU codecs
 * and the CUDA dequantizers, so it compiles as C11, C++ and CUDA. An f16 field is
 * kept as its uint16_t bits. */
#ifndef Q35_QUANT_BLOCKS_H
#define Q35_QUANT_BLOCKS_H

#include <stdint.h>

#define Q35_QK32 32   /* elements per block of Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, IQ4_NL */
#define Q35_QK_K 256  /* elements per super-block of the k-quants */
#define Q35_K_SCALE_BYTES 12

/* Q4_0: x = (q - 8) * d, q a nibble; element j in the low nibble of qs[j],
 * element j + 16 in the high nibble. */
typedef struct q35_block_q4_0 {
    uint16_t d;      /* f16 scale */
    uint8_t qs[16];  /* 32 nibbles */
} q35_block_q4_0;

/* Q5_0: x = (q - 16) * d, q = nibble | (bit of qh) << 4; bit j of qh is element j's
 * fifth bit, bit j + 16 is element j + 16's. */
typedef struct q35_block_q5_0 {
    uint16_t d;      /* f16 scale */
    uint8_t qh[4];   /* 32 fifth bits, little-endian uint32 */
    uint8_t qs[16];  /* 32 low nibbles, as in Q4_0 */
} q35_block_q5_0;

/* Q4_1: x = q * d + m, q a nibble laid out as in Q4_0. */
typedef struct q35_block_q4_1 {
    uint16_t d;      /* f16 scale */
    uint16_t m;      /* f16 offset (the block's minimum) */
    uint8_t qs[16];  /* 32 nibbles */
} q35_block_q4_1;

/* Q5_1: x = q * d + m, q = nibble | (bit of qh) << 4, laid out as in Q5_0. */
typedef struct q35_block_q5_1 {
    uint16_t d;      /* f16 scale */
    uint16_t m;      /* f16 offset */
    uint8_t qh[4];   /* 32 fifth bits, little-endian uint32 */
    uint8_t qs[16];  /* 32 low nibbles */
} q35_block_q5_1;

/* IQ4_NL: x = d * q35_kvalues_iq4nl[q], q a nibble laid out as in Q4_0. */
typedef struct q35_block_iq4_nl {
    uint16_t d;      /* f16 scale */
    uint8_t qs[16];  /* 32 nibbles: indices into the table */
} q35_block_iq4_nl;

/* Q8_0: x = q * d. */
typedef struct q35_block_q8_0 {
    uint16_t d;      /* f16 scale */
    int8_t qs[32];   /* 32 signed bytes */
} q35_block_q8_0;

/* Q4_K: 8 sub-blocks of 32; sub-block s: x = d*sc[s] * q - dmin*m[s], with the 6-bit
 * sc/m packed in `scales` (see q35_k_scale_min). qs holds 4 groups of 32 bytes: the
 * low nibbles are sub-block 2g, the high nibbles sub-block 2g + 1. */
typedef struct q35_block_q4_K {
    uint16_t d;                           /* f16 super-scale of the sub-block scales */
    uint16_t dmin;                        /* f16 super-scale of the sub-block mins */
    uint8_t scales[Q35_K_SCALE_BYTES];    /* 8 scales + 8 mins, 6 bits each */
    uint8_t qs[Q35_QK_K / 2];             /* 256 nibbles */
} q35_block_q4_K;

/* Q5_K: as Q4_K with a fifth bit per element: bit 2g of qh[l] is element l of
 * sub-block 2g, bit 2g + 1 is element l of sub-block 2g + 1. */
typedef struct q35_block_q5_K {
    uint16_t d;                           /* f16 super-scale of the sub-block scales */
    uint16_t dmin;                        /* f16 super-scale of the sub-block mins */
    uint8_t scales[Q35_K_SCALE_BYTES];    /* 8 scales + 8 mins, 6 bits each */
    uint8_t qh[Q35_QK_K / 8];             /* fifth bits */
    uint8_t qs[Q35_QK_K / 2];             /* low nibbles */
} q35_block_q5_K;

/* Q6_K: 16 sub-blocks of 16; x = d * sc[s] * (q - 32), q 6 bits from ql (4) and qh (2).
 * Per half of 128: ql[l] low/high nibbles are elements l and l + 64, ql[l + 32]
 * elements l + 32 and l + 96; qh[l] bit pairs 0,2,4,6 are elements l, l+32, l+64, l+96. */
typedef struct q35_block_q6_K {
    uint8_t ql[Q35_QK_K / 2];   /* low 4 bits */
    uint8_t qh[Q35_QK_K / 4];   /* high 2 bits */
    int8_t scales[Q35_QK_K / 16]; /* 16 signed 8-bit sub-block scales */
    uint16_t d;                 /* f16 super-scale */
} q35_block_q6_K;

/* Q2_K: 16 sub-blocks of 16; sub-block s: x = d*(sc & 15) * q - dmin*(sc >> 4), sc =
 * scales[s], q 2 bits. Per half h of 128: element 128h + 32j + l (j < 4, l < 32) is
 * bits 2j, 2j + 1 of qs[32h + l]; its sub-block is (128h + 32j + l) / 16. */
typedef struct q35_block_q2_K {
    uint8_t scales[Q35_QK_K / 16];  /* low nibble: scale, high nibble: min */
    uint8_t qs[Q35_QK_K / 4];       /* 2-bit levels */
    uint16_t d;                     /* f16 super-scale of the scales */
    uint16_t dmin;                  /* f16 super-scale of the mins */
} q35_block_q2_K;

/* Q3_K: 16 sub-blocks of 16; x = d * (sc[s] - 32) * (q - (hmask bit ? 0 : 4)), q 2 bits
 * laid out as in Q2_K, the high bit of element e bit e / 32 of hmask[e % 32], sc[s]
 * 6 bits packed in `scales` (see q35_q3_k_scale). */
typedef struct q35_block_q3_K {
    uint8_t hmask[Q35_QK_K / 8];          /* high bits, set: level as is, clear: level - 4 */
    uint8_t qs[Q35_QK_K / 4];             /* low 2 bits */
    uint8_t scales[Q35_K_SCALE_BYTES];    /* 16 scales, 6 bits each */
    uint16_t d;                           /* f16 super-scale */
} q35_block_q3_K;

/* IQ4_XS: 8 sub-blocks of 32; x = d * (ls[s] - 32) * q35_kvalues_iq4nl[q], ls 6 bits:
 * the low 4 in nibble s % 2 of scales_l[s / 2], the high 2 bits 2s, 2s + 1 of
 * scales_h; qs as Q4_0's nibbles per sub-block of 32 (16 bytes each). */
typedef struct q35_block_iq4_xs {
    uint16_t d;                   /* f16 super-scale */
    uint16_t scales_h;            /* high 2 bits of the 8 scales */
    uint8_t scales_l[Q35_QK_K / 64]; /* low 4 bits of the 8 scales */
    uint8_t qs[Q35_QK_K / 2];     /* 256 nibbles */
} q35_block_iq4_xs;

#ifdef __cplusplus
static_assert(sizeof(q35_block_q4_1) == 20, "q4_1 block");
static_assert(sizeof(q35_block_q5_1) == 24, "q5_1 block");
static_assert(sizeof(q35_block_iq4_nl) == 18, "iq4_nl block");
static_assert(sizeof(q35_block_q2_K) == 84, "q2_K block");
static_assert(sizeof(q35_block_q3_K) == 110, "q3_K block");
static_assert(sizeof(q35_block_iq4_xs) == 136, "iq4_xs block");
static_assert(sizeof(q35_block_q4_0) == 18, "q4_0 block");
static_assert(sizeof(q35_block_q5_0) == 22, "q5_0 block");
static_assert(sizeof(q35_block_q8_0) == 34, "q8_0 block");
static_assert(sizeof(q35_block_q4_K) == 144, "q4_K block");
static_assert(sizeof(q35_block_q5_K) == 176, "q5_K block");
static_assert(sizeof(q35_block_q6_K) == 210, "q6_K block");
#else
_Static_assert(sizeof(q35_block_q4_1) == 20, "q4_1 block");
_Static_assert(sizeof(q35_block_q5_1) == 24, "q5_1 block");
_Static_assert(sizeof(q35_block_iq4_nl) == 18, "iq4_nl block");
_Static_assert(sizeof(q35_block_q2_K) == 84, "q2_K block");
_Static_assert(sizeof(q35_block_q3_K) == 110, "q3_K block");
_Static_assert(sizeof(q35_block_iq4_xs) == 136, "iq4_xs block");
_Static_assert(sizeof(q35_block_q4_0) == 18, "q4_0 block");
_Static_assert(sizeof(q35_block_q5_0) == 22, "q5_0 block");
_Static_assert(sizeof(q35_block_q8_0) == 34, "q8_0 block");
_Static_assert(sizeof(q35_block_q4_K) == 144, "q4_K block");
_Static_assert(sizeof(q35_block_q5_K) == 176, "q5_K block");
_Static_assert(sizeof(q35_block_q6_K) == 210, "q6_K block");
#endif

/* Sub-block j's 6-bit scale and min of a Q4_K/Q5_K block (ggml's get_scale_min_k4):
 * j < 4: the low 6 bits of scales[j] and scales[j + 4]; j >= 4: the nibbles of
 * scales[j + 4] with the top two bits of scales[j - 4] and scales[j]. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline void q35_k_scale_min(int j, const uint8_t *q, uint8_t *sc, uint8_t *m)
{
    if (j < 4) {
        *sc = q[j] & 63;
        *m = q[j + 4] & 63;
    } else {
        *sc = (uint8_t)((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
        *m = (uint8_t)((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
    }
}

/* Sub-block s's 6-bit scale (0..63; the format subtracts 32) of a Q3_K block
 * (ggml's dequantize_row_q3_K unpacks the same bits a word at a time): the low
 * nibble of scales[s] (s < 8) or the high nibble of scales[s - 8], the top two
 * bits at bits 2 (s / 4), 2 (s / 4) + 1 of scales[8 + s % 4]. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline int q35_q3_k_scale(int s, const uint8_t *scales)
{
    const int lo = s < 8 ? scales[s] & 0xF : scales[s - 8] >> 4;
    return lo | (((scales[8 + s % 4] >> (2 * (s / 4))) & 3) << 4);
}

/* Sub-block s's 6-bit scale (0..63; the format subtracts 32) of an IQ4_XS block. */
#ifdef __CUDACC__
__host__ __device__
#endif
static inline int q35_iq4_xs_scale(int s, const uint8_t *scales_l, uint16_t scales_h)
{
    return ((scales_l[s / 2] >> (4 * (s % 2))) & 0xF) | (((scales_h >> (2 * s)) & 3) << 4);
}

/* IQ4_NL's and IQ4_XS's 16 levels, a fact of the format (ggml's kvalues_iq4nl). */
#define Q35_KVALUES_IQ4NL {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113}

#include "core/quant_blocks_iq.h"

#endif /* Q35_QUANT_BLOCKS_H */
