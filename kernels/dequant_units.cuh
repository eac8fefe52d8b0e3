/* The units of a quantized row (q35_unit<TYPE>): a lane's share of 16 or 32
 * elements, its bytes loaded into registers (16-byte loads where the unit is
 * aligned), then read a run of 16 consecutive elements at a time as exact integer
 * levels and the run's scales. q35_unit_decode composes those into the CPU
 * dequantizer's values with the arithmetic of kernels/dequant.cuh (the
 * dequantizer, kernels/dequant.cu); the GEMV (kernels/gemv.cu) takes them apart:
 * sums of x * level first, then the run's scales. */
#ifndef Q35_KERNELS_DEQUANT_UNITS_CUH
#define Q35_KERNELS_DEQUANT_UNITS_CUH

#include "kernels/dequant.cuh"

#include <type_traits>

/* 4 bytes at a 2-byte aligned address (GGUF blocks are 2-byte aligned at least). */
__device__ __forceinline__ uint32_t q35_ld_u32_2a(const uint8_t *p)
{
    const unsigned short *h = reinterpret_cast<const unsigned short *>(p);
    return (uint32_t)__ldg(h) | ((uint32_t)__ldg(h + 1) << 16);
}

/* N words from p: 16-byte loads when vec (p then 16-byte aligned), else 2-byte. */
template <int N>
__device__ __forceinline__ void q35_ld_words(uint32_t (&w)[N], const uint8_t *p, bool vec)
{
    static_assert(N % 4 == 0, "whole 16-byte pieces");
    if (vec) {
#pragma unroll
        for (int i = 0; i < N / 4; i++) {
            const uint4 v = __ldg(reinterpret_cast<const uint4 *>(p) + i);
            w[4 * i] = v.x, w[4 * i + 1] = v.y, w[4 * i + 2] = v.z, w[4 * i + 3] = v.w;
        }
    } else {
#pragma unroll
        for (int i = 0; i < N; i++)
            w[i] = q35_ld_u32_2a(p + 4 * i);
    }
}

/* N words from p in shared memory, 2-byte aligned: the N + 1 aligned words
 * around them (one word past p + 4N may be read: the staging buffer pads for
 * it), each pair funnel-shifted by the misalignment (0 or 16 bits). */
template <int N>
__device__ __forceinline__ void q35_ld_words_shared(uint32_t (&w)[N], const uint8_t *p)
{
    const uint32_t *a = reinterpret_cast<const uint32_t *>(reinterpret_cast<uintptr_t>(p) & ~(uintptr_t)3);
    const int sh = 8 * (int)(reinterpret_cast<uintptr_t>(p) & 3u);
    uint32_t lo = a[0];
#pragma unroll
    for (int i = 0; i < N; i++) {
        const uint32_t hi = a[i + 1];
        w[i] = __funnelshift_r(lo, hi, sh);
        lo = hi;
    }
}

/* N words from p in shared memory, 16-byte aligned: 16-byte reads. */
template <int N>
__device__ __forceinline__ void q35_ld_words_shared16(uint32_t (&w)[N], const uint8_t *p)
{
    static_assert(N % 4 == 0, "whole 16-byte pieces");
#pragma unroll
    for (int i = 0; i < N / 4; i++) {
        const uint4 v = reinterpret_cast<const uint4 *>(p)[i];
        w[4 * i] = v.x, w[4 * i + 1] = v.y, w[4 * i + 2] = v.z, w[4 * i + 3] = v.w;
    }
}

/* The unit of each type (q35_unit<TYPE>): `elems` elements (16 or 32) in `runs`
 * runs of 16 consecutive elements; `wide` when its bytes can be read with 16-byte
 * loads (the row and the weight 16-byte aligned); `kind` the arithmetic of its
 * elements from their exact integer levels q:
 *   Q35_PLAIN   the level is the value (F32, F16, BF16)
 *   Q35_SCALED  x = q * s                  (Q8_0, Q4_0, Q5_0, IQ4_NL: s = d; Q6_K: s = d * sc;
 *                                          Q3_K, IQ4_XS: s = d * (sc - 32); IQ4's q from its table)
 *   Q35_ASYM    x = s * q - m              (Q2_K, Q4_K, Q5_K: s = d1, m = m1; Q4_1, Q5_1: s = d, m = -m)
 * (the grid i-quants, Q35_SCALED with levels read from their grids:
 * kernels/dequant_units_iq.cuh)
 * For a row at `row`:
 *   load(r, row, u, vec, count)    unit u's bytes into r; count = elements of the
 *                                  unit inside the row (below 16 only for the last
 *                                  unit of a plain row; the rest read as 0);
 *   load_shared(r, row, u)         the same from a copy of the row's bytes in shared
 *                                  memory (row 16-byte aligned; the types the
 *                                  staged GEMV takes, kernels/gemv.cu);
 *   run_elem(u, run)               the row element where run `run` of unit u starts;
 *   levels(r, u, run, q)           q[j] = the level of element run_elem(u, run) + j;
 *   scale(r, u, run, &s, &m)       the run's s and m (one sub-block per run).
 * q35_unit_decode composes them into the CPU dequantizer's value, bit for bit.
 * The units of a row are numbered in order of their bytes. */
enum { Q35_PLAIN, Q35_SCALED, Q35_ASYM };

template <int TYPE>
struct q35_unit;

/* Plain types: 16 consecutive elements; WORDS words hold them. */
template <int WORDS>
struct q35_plain_unit {
    static constexpr int elems = 16, runs = 1, kind = Q35_PLAIN;
    static constexpr bool wide = true;
    static constexpr int esize = WORDS / 4; /* bytes per element */
    struct raw {
        uint32_t v[WORDS];
    };
    static __device__ __forceinline__ int64_t run_elem(int64_t u, int) { return 16 * u; }
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u, bool vec, int count)
    {
        const uint8_t *p = row + (int64_t)(4 * WORDS) * u;
        if (vec && count == 16) {
            q35_ld_words(r.v, p, true);
            return;
        }
        const unsigned short *h = reinterpret_cast<const unsigned short *>(p);
#pragma unroll
        for (int i = 0; i < 2 * WORDS; i++) { /* 2-byte pieces, only those of elements inside the row */
            const uint32_t half = i / (esize / 2) < count ? (uint32_t)__ldg(h + i) : 0u;
            r.v[i / 2] = (i % 2) ? r.v[i / 2] | (half << 16) : half;
        }
    }
    static __device__ __forceinline__ void scale(const raw &, int64_t, int, float *s, float *m) { *s = 1.0f, *m = 0.0f; }
};

template <>
struct q35_unit<Q35_TYPE_F32> : q35_plain_unit<16> {
    static __device__ __forceinline__ void levels(const raw &r, int64_t, int, float (&q)[16])
    {
#pragma unroll
        for (int j = 0; j < 16; j++)
            q[j] = __uint_as_float(r.v[j]);
    }
};

template <>
struct q35_unit<Q35_TYPE_F16> : q35_plain_unit<8> {
    static __device__ __forceinline__ void levels(const raw &r, int64_t, int, float (&q)[16])
    {
#pragma unroll
        for (int j = 0; j < 16; j++)
            q[j] = q35_dev_f16((uint16_t)(r.v[j / 2] >> (16 * (j % 2))));
    }
};

template <>
struct q35_unit<Q35_TYPE_BF16> : q35_plain_unit<8> {
    static __device__ __forceinline__ void levels(const raw &r, int64_t, int, float (&q)[16])
    {
#pragma unroll
        for (int j = 0; j < 16; j++)
            q[j] = __uint_as_float((j % 2) ? r.v[j / 2] & 0xFFFF0000u : r.v[j / 2] << 16);
    }
};

/* Q8_0, Q4_0, Q5_0, IQ4_NL, Q4_1, Q5_1 (blocks of BYTES = 34, 18, 22, 18, 20, 24): a
 * unit is a block of 32 (2-byte aligned: 2-byte loads); run 0 elements 0..15, run
 * 1 elements 16..31. The f16 d leads; OFFSET blocks (Q4_1, Q5_1) then hold the
 * f16 m, added to every element (Q35_ASYM with m1 = -m: x - (-m) is x + m, bit for
 * bit); QH_AT is the byte of the fifth bits (0: none); qs ends the block. */
template <int BYTES, int QH_AT = 0, bool OFFSET = false>
struct q35_block32_unit {
    static constexpr int elems = 32, runs = 2, kind = OFFSET ? Q35_ASYM : Q35_SCALED;
    static constexpr bool wide = false;
    static constexpr int qwords = BYTES == 34 ? 8 : 4, qs_at = BYTES - 4 * qwords;
    struct raw {
        uint32_t d, qh, q[qwords]; /* d: d | m << 16 for OFFSET; qh: Q5_0/Q5_1 only */
    };
    static __device__ __forceinline__ int64_t run_elem(int64_t u, int run) { return 32 * u + 16 * run; }
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u, bool, int)
    {
        const uint8_t *b = row + BYTES * u;
        r.d = OFFSET ? q35_ld_u32_2a(b) : (uint32_t)__ldg(reinterpret_cast<const unsigned short *>(b));
        r.qh = QH_AT ? q35_ld_u32_2a(b + QH_AT) : 0u;
        q35_ld_words(r.q, b + qs_at, false);
    }
    static __device__ __forceinline__ void load_shared(raw &r, const uint8_t *row, int64_t u)
    {
        const uint8_t *b = row + BYTES * u;
        if (OFFSET) {
            uint32_t dm[1];
            q35_ld_words_shared(dm, b);
            r.d = dm[0];
        } else {
            r.d = *reinterpret_cast<const unsigned short *>(b);
        }
        if (QH_AT) {
            uint32_t qh[1];
            q35_ld_words_shared(qh, b + QH_AT);
            r.qh = qh[0];
        } else {
            r.qh = 0u;
        }
        q35_ld_words_shared(r.q, b + qs_at);
    }
    static __device__ __forceinline__ void scale(const raw &r, int64_t, int, float *s, float *m)
    {
        *s = q35_dev_f16((uint16_t)r.d);
        *m = OFFSET ? -q35_dev_f16((uint16_t)(r.d >> 16)) : 0.0f;
    }
};

/* The fifth bits of run `run`'s 4 elements at word w of qs (Q5_0, Q5_1): bit
 * 16 run + 4w + i of qh as bit 4 of byte i. */
__device__ __forceinline__ uint32_t q35_fifth_bits(uint32_t qh, int run, int w)
{
    const uint32_t h4 = (qh >> (16 * run + 4 * w)) & 0xFu;
    return ((h4 & 1u) << 4) | ((h4 & 2u) << 11) | ((h4 & 4u) << 18) | ((h4 & 8u) << 25);
}

/* Q8_0: the signed byte, +128 by flipping its top bit, then -128. */
template <>
struct q35_unit<Q35_TYPE_Q8_0> : q35_block32_unit<34> {
    static __device__ __forceinline__ void levels(const raw &r, int64_t, int run, float (&q)[16])
    {
#pragma unroll
        for (int j = 0; j < 16; j++)
            q[j] = q35_byte_level<128>(r.q[4 * run + j / 4] ^ 0x80808080u, j % 4);
    }
};

/* Q4_0: run 0 the low nibbles, run 1 the high ones, minus 8. */
template <>
struct q35_unit<Q35_TYPE_Q4_0> : q35_block32_unit<18> {
    static __device__ __forceinline__ void levels(const raw &r, int64_t, int run, float (&q)[16])
    {
#pragma unroll
        for (int j = 0; j < 16; j++)
            q[j] = q35_byte_level<8>((r.q[j / 4] >> (4 * run)) & 0x0F0F0F0Fu, j % 4);
    }
};

/* Q5_0: the nibble, bit j + 16 run of qh as its fifth bit, minus 16. */
template <>
struct q35_unit<Q35_TYPE_Q5_0> : q35_block32_unit<22, 2> {
    static __device__ __forceinline__ void levels(const raw &r, int64_t, int run, float (&q)[16])
    {
#pragma unroll
        for (int j = 0; j < 16; j++)
            q[j] = q35_byte_level<16>(((r.q[j / 4] >> (4 * run)) & 0x0F0F0F0Fu) | q35_fifth_bits(r.qh, run, j / 4), j % 4);
    }
};

/* Q4_1: Q4_0's nibbles, no bias; x = q * d + m. */
template <>
struct q35_unit<Q35_TYPE_Q4_1> : q35_block32_unit<20, 0, true> {
    static __device__ __forceinline__ void levels(const raw &r, int64_t, int run, float (&q)[16])
    {
#pragma unroll
        for (int j = 0; j < 16; j++)
            q[j] = q35_byte_level<0>((r.q[j / 4] >> (4 * run)) & 0x0F0F0F0Fu, j % 4);
    }
};

/* Q5_1: Q5_0's levels, no bias; x = q * d + m. */
template <>
struct q35_unit<Q35_TYPE_Q5_1> : q35_block32_unit<24, 4, true> {
    static __device__ __forceinline__ void levels(const raw &r, int64_t, int run, float (&q)[16])
    {
#pragma unroll
        for (int j = 0; j < 16; j++)
            q[j] = q35_byte_level<0>(((r.q[j / 4] >> (4 * run)) & 0x0F0F0F0Fu) | q35_fifth_bits(r.qh, run, j / 4), j % 4);
    }
};

/* IQ4_NL: Q4_0's nibbles as indices into the table; x = q35_iq4nl(index) * d. */
template <>
struct q35_unit<Q35_TYPE_IQ4_NL> : q35_block32_unit<18> {
    static __device__ __forceinline__ void levels(const raw &r, int64_t, int run, float (&q)[16])
    {
#pragma unroll
        for (int j = 0; j < 16; j++)
            q[j] = q35_dev_iq4nl((r.q[j / 4] >> (8 * (j % 4) + 4 * run)) & 0xFu);
    }
};

/* Q4_K, Q5_K: 8 units a super-block; unit p holds the 16 qs bytes 32g + l0 ..
 * 32g + l0 + 15 (g = p / 2, l0 = 16 (p % 2)): run 0 their low nibbles (sub-block
 * 2g), run 1 their high nibbles (sub-block 2g + 1); Q5_K's fifth bit is bit
 * 2g + run of qh[l0 + j]. Header and qs pieces are 16-byte aligned in the block
 * (144 and 176 bytes, both multiples of 16). */
template <bool FIFTH>
struct q35_k_unit {
    static constexpr int elems = 32, runs = 2, kind = Q35_ASYM;
    static constexpr bool wide = true;
    static constexpr int block_bytes = FIFTH ? 176 : 144, qs_at = FIFTH ? 48 : 16;
    struct raw {
        uint32_t h[4];  /* d | dmin << 16, the 12 scale bytes */
        uint32_t qh[4]; /* Q5_K: qh[l0 .. l0 + 15] (unused by Q4_K) */
        uint32_t q[4];  /* qs[32g + l0 .. 32g + l0 + 15] */
    };
    static __device__ __forceinline__ int64_t run_elem(int64_t u, int run)
    {
        const int p = (int)(u & 7);
        return 256 * (u >> 3) + 64 * (p / 2) + 32 * run + 16 * (p % 2);
    }
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u, bool vec, int)
    {
        const int p = (int)(u & 7);
        const uint8_t *b = row + block_bytes * (u >> 3);
        q35_ld_words(r.h, b, vec);
        if (FIFTH)
            q35_ld_words(r.qh, b + 16 + 16 * (p % 2), vec);
        q35_ld_words(r.q, b + qs_at + 16 * p, vec);
    }
    static __device__ __forceinline__ void load_shared(raw &r, const uint8_t *row, int64_t u)
    {
        const int p = (int)(u & 7);
        const uint8_t *b = row + block_bytes * (u >> 3);
        q35_ld_words_shared16(r.h, b);
        if (FIFTH)
            q35_ld_words_shared16(r.qh, b + 16 + 16 * (p % 2));
        q35_ld_words_shared16(r.q, b + qs_at + 16 * p);
    }
    static __device__ __forceinline__ void levels(const raw &r, int64_t u, int run, float (&q)[16])
    {
        const int s = 2 * ((int)(u & 7) / 2) + run; /* the sub-block */
#pragma unroll
        for (int j = 0; j < 16; j++) {
            uint32_t w = (r.q[j / 4] >> (4 * run)) & 0x0F0F0F0Fu;
            if (FIFTH)
                w |= ((r.qh[j / 4] >> s) & 0x01010101u) << 4;
            q[j] = q35_byte_level<0>(w, j % 4);
        }
    }
    static __device__ __forceinline__ void scale(const raw &r, int64_t u, int run, float *d1, float *m1)
    {
        const int s = 2 * ((int)(u & 7) / 2) + run; /* the sub-block */
        uint32_t sc, m;
        q35_dev_k_scales(r.h[1], r.h[2], r.h[3], s >= 4, &sc, &m);
        q35_dq_k_sub(q35_dev_f16((uint16_t)r.h[0]), q35_dev_f16((uint16_t)(r.h[0] >> 16)), q35_byte_level<0>(sc, s & 3),
                     q35_byte_level<0>(m, s & 3), d1, m1);
    }
};

template <>
struct q35_unit<Q35_TYPE_Q4_K> : q35_k_unit<false> {};
template <>
struct q35_unit<Q35_TYPE_Q5_K> : q35_k_unit<true> {};

/* Q6_K: 8 units a super-block (210 bytes, 2-byte aligned: 2-byte loads); unit p of
 * half h = p / 4, quarter pair qp = (p / 2) % 2, l0 = 16 (p % 2) holds elements
 * l0 .. l0 + 15 of quarters qp (run 0, the low nibbles of ql[64h + 32qp + l]) and
 * qp + 2 (run 1, the high nibbles), their top two bits at bits 2 quarter of
 * qh[32h + l]; level - 32. */
template <>
struct q35_unit<Q35_TYPE_Q6_K> {
    static constexpr int elems = 32, runs = 2, kind = Q35_SCALED;
    static constexpr bool wide = false;
    struct raw {
        uint32_t ql[4], qh[4];
        uint32_t sc; /* the 2-byte words holding scales[i] (low) and scales[i + 4] (high), i = 8h + l0/16 + 2qp */
        uint32_t d;
    };
    static __device__ __forceinline__ int64_t run_elem(int64_t u, int run)
    {
        const int p = (int)(u & 7);
        return 256 * (u >> 3) + 128 * (p / 4) + 32 * ((p / 2) % 2 + 2 * run) + 16 * (p % 2);
    }
    static __device__ __forceinline__ int scale_index(int p) { return 8 * (p / 4) + (p % 2) + 2 * ((p / 2) % 2); }
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u, bool, int)
    {
        const int p = (int)(u & 7), h = p / 4, qp = (p / 2) % 2, l0 = 16 * (p % 2);
        const uint8_t *b = row + 210 * (u >> 3);
        q35_ld_words(r.ql, b + 64 * h + 32 * qp + l0, false);
        q35_ld_words(r.qh, b + 128 + 32 * h + l0, false);
        const unsigned short *sc = reinterpret_cast<const unsigned short *>(b + 192 + (scale_index(p) & ~1));
        r.sc = (uint32_t)__ldg(sc) | ((uint32_t)__ldg(sc + 2) << 16); /* scales[i + 4] is 2 words on */
        r.d = __ldg(reinterpret_cast<const unsigned short *>(b + 208));
    }
    static __device__ __forceinline__ void load_shared(raw &r, const uint8_t *row, int64_t u)
    {
        const int p = (int)(u & 7), h = p / 4, qp = (p / 2) % 2, l0 = 16 * (p % 2);
        const uint8_t *b = row + 210 * (u >> 3);
        q35_ld_words_shared(r.ql, b + 64 * h + 32 * qp + l0);
        q35_ld_words_shared(r.qh, b + 128 + 32 * h + l0);
        const unsigned short *sc = reinterpret_cast<const unsigned short *>(b + 192 + (scale_index(p) & ~1));
        r.sc = (uint32_t)sc[0] | ((uint32_t)sc[2] << 16);
        r.d = *reinterpret_cast<const unsigned short *>(b + 208);
    }
    static __device__ __forceinline__ void levels(const raw &r, int64_t u, int run, float (&q)[16])
    {
        const int quarter = ((int)(u & 7) / 2) % 2 + 2 * run;
#pragma unroll
        for (int j = 0; j < 16; j++) {
            const uint32_t lo = (r.ql[j / 4] >> (4 * run)) & 0x0F0F0F0Fu;
            const uint32_t hi = ((r.qh[j / 4] >> (2 * quarter)) & 0x03030303u) << 4;
            q[j] = q35_byte_level<32>(lo | hi, j % 4);
        }
    }
    static __device__ __forceinline__ void scale(const raw &r, int64_t u, int run, float *s, float *m)
    {
        const int sc = (int)(int8_t)((r.sc >> (16 * run + 8 * (scale_index((int)(u & 7)) & 1))) & 0xFFu);
        *s = q35_dq_q6k_scale(q35_dev_f16((uint16_t)r.d), sc), *m = 0.0f;
    }
};

/* Q2_K, Q3_K: 8 units a super-block (84 and 110 bytes, 2-byte aligned: 2-byte
 * loads); unit p of half h = p / 4, l0 = 16 ((p / 2) % 2), quarter pair jp = p % 2
 * holds the 16 qs bytes 32h + l0 .. + 15 and of them the 2-bit fields of quarters
 * j = 2jp + run: elements 128h + 32j + l0 + i (run `run`), sub-block 8h + 2j + l0/16.
 * Q2_K: x = d1 * q - m1 (Q4_K's arithmetic on 4-bit scale and min); Q3_K: the high
 * bit of element e is bit e / 32 of hmask[e % 32] (set: q, clear: q - 4), x =
 * (d * (sc - 32)) * q. */
template <int TYPE>
struct q35_k2_unit {
    static constexpr bool q3 = TYPE == Q35_TYPE_Q3_K;
    static constexpr int elems = 32, runs = 2, kind = q3 ? Q35_SCALED : Q35_ASYM;
    static constexpr bool wide = false;
    static constexpr int block_bytes = q3 ? 110 : 84, qs_at = q3 ? 32 : 16;
    struct raw {
        uint32_t q[4];  /* qs[32h + l0 .. + 15] */
        uint32_t hm[4]; /* Q3_K: hmask[l0 .. l0 + 15] */
        uint32_t sc[3]; /* Q2_K: the 2-byte words holding scales[i], scales[i + 2] (i = 8h + l0/16 + 4jp);
                         * Q3_K: the 12 scale bytes */
        uint32_t d;     /* d (Q2_K: d | dmin << 16) */
    };
    static __device__ __forceinline__ int quarter(int64_t u, int run) { return 2 * ((int)u & 1) + run; }
    static __device__ __forceinline__ int64_t run_elem(int64_t u, int run)
    {
        const int p = (int)(u & 7);
        return 256 * (u >> 3) + 128 * (p / 4) + 32 * quarter(u, run) + 16 * ((p / 2) % 2);
    }
    static __device__ __forceinline__ int sub_block(int64_t u, int run)
    {
        const int p = (int)(u & 7);
        return 8 * (p / 4) + 2 * quarter(u, run) + (p / 2) % 2;
    }
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u, bool, int)
    {
        const int p = (int)(u & 7), h = p / 4, l0 = 16 * ((p / 2) % 2);
        const uint8_t *b = row + block_bytes * (u >> 3);
        q35_ld_words(r.q, b + qs_at + 32 * h + l0, false);
        if (q3) {
            q35_ld_words(r.hm, b + l0, false);
            r.sc[0] = q35_ld_u32_2a(b + 96), r.sc[1] = q35_ld_u32_2a(b + 100), r.sc[2] = q35_ld_u32_2a(b + 104);
            r.d = __ldg(reinterpret_cast<const unsigned short *>(b + 108));
        } else {
            const unsigned short *sc = reinterpret_cast<const unsigned short *>(b + (sub_block(u, 0) & ~1));
            r.sc[0] = (uint32_t)__ldg(sc) | ((uint32_t)__ldg(sc + 1) << 16); /* scales[i + 2] is a word on */
            r.d = q35_ld_u32_2a(b + 80);
        }
    }
    static __device__ __forceinline__ void levels(const raw &r, int64_t u, int run, float (&q)[16])
    {
        const int j = quarter(u, run), row = 4 * ((int)(u & 7) / 4) + j; /* Q3_K: the hmask bit */
#pragma unroll
        for (int i = 0; i < 16; i++) {
            const uint32_t lo = (r.q[i / 4] >> (2 * j)) & 0x03030303u;
            if (q3)
                q[i] = q35_byte_level<4>(lo | (((r.hm[i / 4] >> row) & 0x01010101u) << 2), i % 4);
            else
                q[i] = q35_byte_level<0>(lo, i % 4);
        }
    }
    static __device__ __forceinline__ void scale(const raw &r, int64_t u, int run, float *s, float *m)
    {
        const int sb = sub_block(u, run);
        if (q3) {
            const uint32_t w = sb % 8 < 4 ? r.sc[0] : r.sc[1]; /* a select: no indexed registers */
            const int lo = (int)((w >> (8 * (sb % 4) + (sb < 8 ? 0 : 4))) & 0xFu);
            const int hi = (int)((r.sc[2] >> (8 * (sb % 4) + 2 * (sb / 4))) & 3u);
            *s = q35_dq_q6k_scale(q35_dev_f16((uint16_t)r.d), (lo | hi << 4) - 32), *m = 0.0f;
        } else {
            const uint32_t sc = (r.sc[0] >> (16 * run + 8 * (sb & 1))) & 0xFFu;
            q35_dq_k_sub(q35_dev_f16((uint16_t)r.d), q35_dev_f16((uint16_t)(r.d >> 16)), q35_dev_level((int)(sc & 0xF)),
                         q35_dev_level((int)(sc >> 4)), s, m);
        }
    }
};

template <>
struct q35_unit<Q35_TYPE_Q2_K> : q35_k2_unit<Q35_TYPE_Q2_K> {};
template <>
struct q35_unit<Q35_TYPE_Q3_K> : q35_k2_unit<Q35_TYPE_Q3_K> {};

/* IQ4_XS: 8 units a super-block (136 bytes, 2-byte loads), unit p sub-block p: the
 * 16 qs bytes 8 + 16p, run 0 their low nibbles, run 1 the high ones, indices into
 * the table; x = (d * (ls - 32)) * q35_iq4nl(index), ls 6 bits from scales_l and
 * scales_h. */
template <>
struct q35_unit<Q35_TYPE_IQ4_XS> {
    static constexpr int elems = 32, runs = 2, kind = Q35_SCALED;
    static constexpr bool wide = false;
    struct raw {
        uint32_t h[2]; /* d | scales_h << 16, scales_l */
        uint32_t q[4];
    };
    static __device__ __forceinline__ int64_t run_elem(int64_t u, int run) { return 32 * u + 16 * run; }
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u, bool, int)
    {
        const uint8_t *b = row + 136 * (u >> 3);
        q35_ld_words(r.q, b + 8 + 16 * (u & 7), false);
        r.h[0] = q35_ld_u32_2a(b), r.h[1] = q35_ld_u32_2a(b + 4);
    }
    static __device__ __forceinline__ void levels(const raw &r, int64_t, int run, float (&q)[16])
    {
#pragma unroll
        for (int j = 0; j < 16; j++)
            q[j] = q35_dev_iq4nl((r.q[j / 4] >> (8 * (j % 4) + 4 * run)) & 0xFu);
    }
    static __device__ __forceinline__ void scale(const raw &r, int64_t u, int, float *s, float *m)
    {
        const int p = (int)(u & 7);
        const int ls = (int)(((r.h[1] >> (4 * p)) & 0xFu) | (((r.h[0] >> (16 + 2 * p)) & 3u) << 4));
        *s = q35_dq_q6k_scale(q35_dev_f16((uint16_t)r.h[0]), ls - 32), *m = 0.0f;
    }
};

#include "kernels/dequant_units_iq.cuh" /* IQ2_XXS .. IQ1_M */

/* v[j] = element run_elem(u, run) + j, bit for bit the CPU dequantizer's value. */
template <class U>
__device__ __forceinline__ void q35_unit_decode(const typename U::raw &r, int64_t u, int run, float (&v)[16])
{
    U::levels(r, u, run, v);
    if constexpr (U::kind != Q35_PLAIN) {
        float s, m;
        U::scale(r, u, run, &s, &m);
#pragma unroll
        for (int j = 0; j < 16; j++)
            v[j] = U::kind == Q35_ASYM ? q35_dq_k(s, m, v[j]) : q35_dq_scaled(v[j], s);
    }
}

/* Calls f(std::integral_constant<int, TYPE>{}) for a computable type; -1 for others
 * (the launchers refuse those first). */
template <class F>
__host__ int q35_type_dispatch(q35_type type, F &&f)
{
    switch (type) {
    case Q35_TYPE_F32: return f(std::integral_constant<int, Q35_TYPE_F32>{});
    case Q35_TYPE_F16: return f(std::integral_constant<int, Q35_TYPE_F16>{});
    case Q35_TYPE_BF16: return f(std::integral_constant<int, Q35_TYPE_BF16>{});
    case Q35_TYPE_Q8_0: return f(std::integral_constant<int, Q35_TYPE_Q8_0>{});
    case Q35_TYPE_Q4_0: return f(std::integral_constant<int, Q35_TYPE_Q4_0>{});
    case Q35_TYPE_Q5_0: return f(std::integral_constant<int, Q35_TYPE_Q5_0>{});
    case Q35_TYPE_Q4_K: return f(std::integral_constant<int, Q35_TYPE_Q4_K>{});
    case Q35_TYPE_Q5_K: return f(std::integral_constant<int, Q35_TYPE_Q5_K>{});
    case Q35_TYPE_Q6_K: return f(std::integral_constant<int, Q35_TYPE_Q6_K>{});
    case Q35_TYPE_Q4_1: return f(std::integral_constant<int, Q35_TYPE_Q4_1>{});
    case Q35_TYPE_Q5_1: return f(std::integral_constant<int, Q35_TYPE_Q5_1>{});
    case Q35_TYPE_IQ4_NL: return f(std::integral_constant<int, Q35_TYPE_IQ4_NL>{});
    case Q35_TYPE_Q2_K: return f(std::integral_constant<int, Q35_TYPE_Q2_K>{});
    case Q35_TYPE_Q3_K: return f(std::integral_constant<int, Q35_TYPE_Q3_K>{});
    case Q35_TYPE_IQ4_XS: return f(std::integral_constant<int, Q35_TYPE_IQ4_XS>{});
    case Q35_TYPE_IQ2_XXS: return f(std::integral_constant<int, Q35_TYPE_IQ2_XXS>{});
    case Q35_TYPE_IQ2_XS: return f(std::integral_constant<int, Q35_TYPE_IQ2_XS>{});
    case Q35_TYPE_IQ2_S: return f(std::integral_constant<int, Q35_TYPE_IQ2_S>{});
    case Q35_TYPE_IQ3_XXS: return f(std::integral_constant<int, Q35_TYPE_IQ3_XXS>{});
    case Q35_TYPE_IQ3_S: return f(std::integral_constant<int, Q35_TYPE_IQ3_S>{});
    case Q35_TYPE_IQ1_S: return f(std::integral_constant<int, Q35_TYPE_IQ1_S>{});
    case Q35_TYPE_IQ1_M: return f(std::integral_constant<int, Q35_TYPE_IQ1_M>{});
    default: return -1;
    }
}

#endif /* Q35_KERNELS_DEQUANT_UNITS_CUH */
