/* The units of the grid i-quants (IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S,
 * IQ1_M; core/quant_blocks_iq.h) for kernels/dequant_units.cuh, which includes
 * this: unit u is sub-block u & 7 (32 elements) of super-block u >> 3, run r its
 * elements 16r .. 16r + 15 (groups 2r, 2r + 1 of 8), kind Q35_SCALED:
 *   levels  the grid's bytes read from kernels/quant_grids.cuh as exact floats,
 *           negated by the group's sign bits (IQ2, IQ3), or + the shift (IQ1:
 *           level + 1/8 or - 1/8, exact in float)
 *   scale   IQ2: (d * (0.5 + ls)) * 0.25; IQ3_XXS: (d * (0.5 + ls)) * 0.5;
 *           IQ3_S, IQ1: d * (2 ls + 1)
 * so x = level * scale is the CPU's db * grid[j] * (+-1) (the sign is exact and a
 * product commutes) or dl * (grid[j] + delta), bit for bit for finite scales.
 * The blocks are 2-byte aligned (IQ1_M's bytes are read one at a time). */
#ifndef Q35_KERNELS_DEQUANT_UNITS_IQ_CUH
#define Q35_KERNELS_DEQUANT_UNITS_IQ_CUH

#include "kernels/quant_grids.cuh"

/* Byte j (0..7) of a 64-bit grid point held as two words, as an exact float. */
__device__ __forceinline__ float q35_grid8_level(uint2 p, int j)
{
    return q35_byte_level<0>(j < 4 ? p.x : p.y, j % 4);
}

__device__ __forceinline__ uint2 q35_ld_grid8(const unsigned long long *grid, int index)
{
    const unsigned long long v = __ldg(grid + index);
    return make_uint2((uint32_t)v, (uint32_t)(v >> 32));
}

/* f negated when bit `bit` of signs is set (exact). */
__device__ __forceinline__ float q35_signed(float f, uint32_t signs, int bit)
{
    return __int_as_float(__float_as_int(f) ^ (int)(((signs >> bit) & 1u) << 31));
}

/* (d * (0.5 + ls)) * QUARTERS / 4: IQ2's db (1), IQ3_XXS's (2). */
template <int QUARTERS>
__device__ __forceinline__ float q35_dq_iq_half_scale(float d, uint32_t ls)
{
    return __fmul_rn(__fmul_rn(d, __fadd_rn(0.5f, q35_dev_level((int)ls))), 0.25f * QUARTERS);
}

/* The byte at p (1-byte aligned). */
__device__ __forceinline__ uint32_t q35_ld_u8(const uint8_t *p)
{
    return (uint32_t)__ldg(reinterpret_cast<const unsigned char *>(p));
}

/* Common to the seven: 32 elements, 2 runs, row element of a run. */
struct q35_iq_unit_base {
    static constexpr int elems = 32, runs = 2, kind = Q35_SCALED;
    static constexpr bool wide = false;
    static __device__ __forceinline__ int64_t run_elem(int64_t u, int run) { return 32 * u + 16 * run; }
};

/* Two groups of 8 on a 64-bit grid (IQ2_*): points p0, p1 and their 8-bit signs. */
__device__ __forceinline__ void q35_iq2_levels(uint2 p0, uint2 p1, uint32_t s0, uint32_t s1, float (&q)[16])
{
#pragma unroll
    for (int j = 0; j < 8; j++) {
        q[j] = q35_signed(q35_grid8_level(p0, j), s0, j);
        q[8 + j] = q35_signed(q35_grid8_level(p1, j), s1, j);
    }
}

/* IQ2_XXS (66 bytes): the 8 bytes at 2 + 8p: 4 indices, then the word of signs and ls. */
template <>
struct q35_unit<Q35_TYPE_IQ2_XXS> : q35_iq_unit_base {
    struct raw {
        uint32_t d, q[2];
    };
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u, bool, int)
    {
        const uint8_t *b = row + 66 * (u >> 3);
        r.d = __ldg(reinterpret_cast<const unsigned short *>(b));
        r.q[0] = q35_ld_u32_2a(b + 2 + 8 * (u & 7)), r.q[1] = q35_ld_u32_2a(b + 2 + 8 * (u & 7) + 4);
    }
    static __device__ __forceinline__ void levels(const raw &r, int64_t, int run, float (&q)[16])
    {
        const int l = 2 * run;
        q35_iq2_levels(q35_ld_grid8(q35_dev_iq2xxs_grid, (int)((r.q[0] >> (8 * l)) & 0xFFu)),
                       q35_ld_grid8(q35_dev_iq2xxs_grid, (int)((r.q[0] >> (8 * l + 8)) & 0xFFu)),
                       q35_iq_signs7(r.q[1] >> (7 * l)), q35_iq_signs7(r.q[1] >> (7 * l + 7)), q);
    }
    static __device__ __forceinline__ void scale(const raw &r, int64_t, int, float *s, float *m)
    {
        *s = q35_dq_iq_half_scale<1>(q35_dev_f16((uint16_t)r.d), r.q[1] >> 28), *m = 0.0f;
    }
};

/* IQ2_XS (74 bytes): the 4 uint16 at 2 + 8p (9-bit index, 7 sign bits each), the
 * scale byte 66 + p (run r: nibble r). */
template <>
struct q35_unit<Q35_TYPE_IQ2_XS> : q35_iq_unit_base {
    struct raw {
        uint32_t d, q[2], sc;
    };
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u, bool, int)
    {
        const uint8_t *b = row + 74 * (u >> 3);
        const int p = (int)(u & 7);
        r.d = __ldg(reinterpret_cast<const unsigned short *>(b));
        r.q[0] = q35_ld_u32_2a(b + 2 + 8 * p), r.q[1] = q35_ld_u32_2a(b + 2 + 8 * p + 4);
        r.sc = (uint32_t)__ldg(reinterpret_cast<const unsigned short *>(b + 66 + (p & ~1))) >> (8 * (p & 1));
    }
    static __device__ __forceinline__ void levels(const raw &r, int64_t, int run, float (&q)[16])
    {
        const uint32_t w = r.q[run]; /* groups 2 run (low half), 2 run + 1 */
        q35_iq2_levels(q35_ld_grid8(q35_dev_iq2xs_grid, (int)(w & 511u)),
                       q35_ld_grid8(q35_dev_iq2xs_grid, (int)((w >> 16) & 511u)), q35_iq_signs7((w >> 9) & 127u),
                       q35_iq_signs7(w >> 25), q);
    }
    static __device__ __forceinline__ void scale(const raw &r, int64_t, int run, float *s, float *m)
    {
        *s = q35_dq_iq_half_scale<1>(q35_dev_f16((uint16_t)r.d), (r.sc >> (4 * run)) & 0xFu), *m = 0.0f;
    }
};

/* IQ2_S (82 bytes): index bytes 2 + 4p, sign bytes 34 + 4p, qh 66 + p (2 bits a
 * group), scales 74 + p. */
template <>
struct q35_unit<Q35_TYPE_IQ2_S> : q35_iq_unit_base {
    struct raw {
        uint32_t d, q, sg, hs; /* hs: qh | scale byte << 8 */
    };
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u, bool, int)
    {
        const uint8_t *b = row + 82 * (u >> 3);
        const int p = (int)(u & 7);
        r.d = __ldg(reinterpret_cast<const unsigned short *>(b));
        r.q = q35_ld_u32_2a(b + 2 + 4 * p);
        r.sg = q35_ld_u32_2a(b + 34 + 4 * p);
        const uint32_t qh = (uint32_t)__ldg(reinterpret_cast<const unsigned short *>(b + 66 + (p & ~1))) >> (8 * (p & 1));
        const uint32_t sc = (uint32_t)__ldg(reinterpret_cast<const unsigned short *>(b + 74 + (p & ~1))) >> (8 * (p & 1));
        r.hs = (qh & 0xFFu) | (sc & 0xFFu) << 8;
    }
    static __device__ __forceinline__ int index(const raw &r, int l)
    {
        return (int)(((r.q >> (8 * l)) & 0xFFu) | ((r.hs >> (2 * l)) & 3u) << 8);
    }
    static __device__ __forceinline__ void levels(const raw &r, int64_t, int run, float (&q)[16])
    {
        const int l = 2 * run;
        q35_iq2_levels(q35_ld_grid8(q35_dev_iq2s_grid, index(r, l)), q35_ld_grid8(q35_dev_iq2s_grid, index(r, l + 1)),
                       r.sg >> (8 * l), r.sg >> (8 * l + 8), q);
    }
    static __device__ __forceinline__ void scale(const raw &r, int64_t, int run, float *s, float *m)
    {
        *s = q35_dq_iq_half_scale<1>(q35_dev_f16((uint16_t)r.d), (r.hs >> (8 + 4 * run)) & 0xFu), *m = 0.0f;
    }
};

/* Four points of 4 on a 32-bit grid (IQ3_*): run r's points, their signs s0 (group
 * 2r) and s1 (2r + 1). */
__device__ __forceinline__ void q35_iq3_levels(const uint32_t (&p)[4], uint32_t s0, uint32_t s1, float (&q)[16])
{
#pragma unroll
    for (int j = 0; j < 16; j++)
        q[j] = q35_signed(q35_byte_level<0>(p[j / 4], j % 4), j < 8 ? s0 : s1, j % 8);
}

/* IQ3_XXS (98 bytes): the 8 index bytes at 2 + 8p, the word at 66 + 4p (signs, ls). */
template <>
struct q35_unit<Q35_TYPE_IQ3_XXS> : q35_iq_unit_base {
    struct raw {
        uint32_t d, q[2], w;
    };
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u, bool, int)
    {
        const uint8_t *b = row + 98 * (u >> 3);
        const int p = (int)(u & 7);
        r.d = __ldg(reinterpret_cast<const unsigned short *>(b));
        r.q[0] = q35_ld_u32_2a(b + 2 + 8 * p), r.q[1] = q35_ld_u32_2a(b + 2 + 8 * p + 4);
        r.w = q35_ld_u32_2a(b + 66 + 4 * p);
    }
    static __device__ __forceinline__ void levels(const raw &r, int64_t, int run, float (&q)[16])
    {
        uint32_t p[4];
#pragma unroll
        for (int k = 0; k < 4; k++)
            p[k] = __ldg(q35_dev_iq3xxs_grid + ((r.q[run] >> (8 * k)) & 0xFFu));
        q35_iq3_levels(p, q35_iq_signs7(r.w >> (14 * run)), q35_iq_signs7(r.w >> (14 * run + 7)), q);
    }
    static __device__ __forceinline__ void scale(const raw &r, int64_t, int, float *s, float *m)
    {
        *s = q35_dq_iq_half_scale<2>(q35_dev_f16((uint16_t)r.d), r.w >> 28), *m = 0.0f;
    }
};

/* IQ3_S (110 bytes): index bytes 2 + 8p, qh 66 + p (a bit a point), sign bytes
 * 74 + 4p, the scale nibble p % 2 of byte 106 + p / 2. */
template <>
struct q35_unit<Q35_TYPE_IQ3_S> : q35_iq_unit_base {
    struct raw {
        uint32_t d, q[2], sg, hs; /* hs: qh | scale nibble << 8 */
    };
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u, bool, int)
    {
        const uint8_t *b = row + 110 * (u >> 3);
        const int p = (int)(u & 7);
        r.d = __ldg(reinterpret_cast<const unsigned short *>(b));
        r.q[0] = q35_ld_u32_2a(b + 2 + 8 * p), r.q[1] = q35_ld_u32_2a(b + 2 + 8 * p + 4);
        r.sg = q35_ld_u32_2a(b + 74 + 4 * p);
        const uint32_t qh = (uint32_t)__ldg(reinterpret_cast<const unsigned short *>(b + 66 + (p & ~1))) >> (8 * (p & 1));
        const uint32_t sc = (uint32_t)__ldg(reinterpret_cast<const unsigned short *>(b + 106 + 2 * (p / 4)));
        r.hs = (qh & 0xFFu) | ((sc >> (4 * (p % 4))) & 0xFu) << 8;
    }
    static __device__ __forceinline__ void levels(const raw &r, int64_t, int run, float (&q)[16])
    {
        uint32_t p[4];
#pragma unroll
        for (int k = 0; k < 4; k++) {
            const int point = 4 * run + k;
            p[k] = __ldg(q35_dev_iq3s_grid + (((r.q[run] >> (8 * k)) & 0xFFu) | ((r.hs >> point) & 1u) << 8));
        }
        q35_iq3_levels(p, r.sg >> (16 * run), r.sg >> (16 * run + 8), q);
    }
    static __device__ __forceinline__ void scale(const raw &r, int64_t, int, float *s, float *m)
    {
        *s = q35_dq_q6k_scale(q35_dev_f16((uint16_t)r.d), 1 + 2 * (int)((r.hs >> 8) & 0xFu)), *m = 0.0f;
    }
};

/* Two groups of 8 on IQ1's grid: the signed bytes (+128 by flipping the top bit,
 * then -128) + their shifts, exact. */
__device__ __forceinline__ void q35_iq1_levels(uint2 p0, uint2 p1, float delta0, float delta1, float (&q)[16])
{
#pragma unroll
    for (int j = 0; j < 8; j++) {
        q[j] = __fadd_rn(q35_byte_level<128>((j < 4 ? p0.x : p0.y) ^ 0x80808080u, j % 4), delta0);
        q[8 + j] = __fadd_rn(q35_byte_level<128>((j < 4 ? p1.x : p1.y) ^ 0x80808080u, j % 4), delta1);
    }
}

/* IQ1_S (50 bytes): index bytes 2 + 4p, the uint16 qh at 34 + 2p (3 high index
 * bits a group, ls at bits 12..14, the shift's sign at bit 15). */
template <>
struct q35_unit<Q35_TYPE_IQ1_S> : q35_iq_unit_base {
    struct raw {
        uint32_t d, q, qh;
    };
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u, bool, int)
    {
        const uint8_t *b = row + 50 * (u >> 3);
        const int p = (int)(u & 7);
        r.d = __ldg(reinterpret_cast<const unsigned short *>(b));
        r.q = q35_ld_u32_2a(b + 2 + 4 * p);
        r.qh = __ldg(reinterpret_cast<const unsigned short *>(b + 34 + 2 * p));
    }
    static __device__ __forceinline__ void levels(const raw &r, int64_t, int run, float (&q)[16])
    {
        const int l = 2 * run;
        const float delta = (r.qh & 0x8000u) ? -Q35_IQ1_DELTA : Q35_IQ1_DELTA;
        const int i0 = (int)(((r.q >> (8 * l)) & 0xFFu) | ((r.qh >> (3 * l)) & 7u) << 8);
        const int i1 = (int)(((r.q >> (8 * l + 8)) & 0xFFu) | ((r.qh >> (3 * l + 3)) & 7u) << 8);
        q35_iq1_levels(q35_ld_grid8(q35_dev_iq1s_grid, i0), q35_ld_grid8(q35_dev_iq1s_grid, i1), delta, delta, q);
    }
    static __device__ __forceinline__ void scale(const raw &r, int64_t, int, float *s, float *m)
    {
        *s = q35_dq_q6k_scale(q35_dev_f16((uint16_t)r.d), 2 * (int)((r.qh >> 12) & 7u) + 1), *m = 0.0f;
    }
};

/* IQ1_M (56 bytes, read a byte at a time): index bytes 4p, qh bytes 32 + 2p (a
 * nibble a group: 3 high index bits, the shift's sign), the 8 scale bytes at 48
 * (d their top nibbles, q35_iq1_m_d). */
template <>
struct q35_unit<Q35_TYPE_IQ1_M> : q35_iq_unit_base {
    struct raw {
        uint32_t q, qh, sc; /* qh: 2 bytes; sc: the scale word of sub-blocks 2 (p / 2), + 1 | d << 16 */
    };
    static __device__ __forceinline__ void load(raw &r, const uint8_t *row, int64_t u, bool, int)
    {
        const uint8_t *b = row + 56 * (u >> 3);
        const int p = (int)(u & 7);
        r.q = q35_ld_u8(b + 4 * p) | q35_ld_u8(b + 4 * p + 1) << 8 | q35_ld_u8(b + 4 * p + 2) << 16 |
              q35_ld_u8(b + 4 * p + 3) << 24;
        r.qh = q35_ld_u8(b + 32 + 2 * p) | q35_ld_u8(b + 33 + 2 * p) << 8;
        const uint32_t d = (q35_ld_u8(b + 49) >> 4) | (q35_ld_u8(b + 51) & 0xF0u) | (q35_ld_u8(b + 53) >> 4) << 8 |
                           (q35_ld_u8(b + 55) & 0xF0u) << 8;
        r.sc = q35_ld_u8(b + 48 + 2 * (p / 2)) | q35_ld_u8(b + 49 + 2 * (p / 2)) << 8 | d << 16;
    }
    static __device__ __forceinline__ void levels(const raw &r, int64_t, int run, float (&q)[16])
    {
        const uint32_t h = r.qh >> (8 * run); /* groups 2 run (low nibble), 2 run + 1 */
        const int i0 = (int)(((r.q >> (16 * run)) & 0xFFu) | (h & 7u) << 8);
        const int i1 = (int)(((r.q >> (16 * run + 8)) & 0xFFu) | ((h >> 4) & 7u) << 8);
        q35_iq1_levels(q35_ld_grid8(q35_dev_iq1s_grid, i0), q35_ld_grid8(q35_dev_iq1s_grid, i1),
                       (h & 0x08u) ? -Q35_IQ1_DELTA : Q35_IQ1_DELTA, (h & 0x80u) ? -Q35_IQ1_DELTA : Q35_IQ1_DELTA, q);
    }
    static __device__ __forceinline__ void scale(const raw &r, int64_t u, int run, float *s, float *m)
    {
        const int ls = (int)((r.sc >> (6 * (int)(u & 1) + 3 * run)) & 7u);
        *s = q35_dq_q6k_scale(q35_dev_f16((uint16_t)(r.sc >> 16)), 2 * ls + 1), *m = 0.0f;
    }
};

/* Element i of a row of a grid i-quant TYPE (the embedding gather): its unit's run
 * decoded, the element picked. */
template <int TYPE>
__device__ __forceinline__ float q35_iq_at(const uint8_t *row, int64_t i)
{
    using U = q35_unit<TYPE>;
    typename U::raw r;
    const int64_t u = i / 32;
    U::load(r, row, u, false, 32);
    float v[16];
    U::levels(r, u, (int)(i % 32) / 16, v);
    float s, m;
    U::scale(r, u, (int)(i % 32) / 16, &s, &m);
    return q35_dq_scaled(v[i % 16], s);
}

#endif /* Q35_KERNELS_DEQUANT_UNITS_IQ_CUH */
