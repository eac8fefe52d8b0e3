/* ggml's block layouts, byte for byte (little-endian). Shared by the CPU codecs
 * and the CUDA dequantizers, so it compiles as C11, C++ and CUDA. An f16 field is
 * kept as its uint16_t bits. */
#ifndef Q35_QUANT_BLOCKS_H
#define Q35_QUANT_BLOCKS_H

#include <stdint.h>

#define Q35_QK32 32   /* elements per block of Q4_0, Q5_0, Q8_0 */
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

#ifdef __cplusplus
static_assert(sizeof(q35_block_q4_0) == 18, "q4_0 block");
static_assert(sizeof(q35_block_q5_0) == 22, "q5_0 block");
static_assert(sizeof(q35_block_q8_0) == 34, "q8_0 block");
static_assert(sizeof(q35_block_q4_K) == 144, "q4_K block");
static_assert(sizeof(q35_block_q5_K) == 176, "q5_K block");
static_assert(sizeof(q35_block_q6_K) == 210, "q6_K block");
#else
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

#endif /* Q35_QUANT_BLOCKS_H */
