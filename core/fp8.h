/* The OCP FP8 E4M3 ("e4m3fn") format: 1 sign bit, 4 exponent bits (bias 7), 3
 * mantissa bits; no infinities; S.1111.111 is NaN, so the largest finite value
 * is 448 (S.1111.110); subnormals m * 2^-9 (m = 1..7). The CPU's conversions,
 * the reference the GPU's (cuda_fp8.h, cvt.rn.satfinite.e4m3x2.f32) is checked
 * against bit for bit:
 *   f32 -> e4m3  round to nearest, ties to even, saturating: a magnitude that
 *                rounds past 448 (infinity included) becomes 448 with its sign;
 *                NaN becomes 0.1111.111 whatever its sign (the canonical NaN the
 *                GPU's conversion writes on sm_90).
 *   e4m3 -> f32  exact. */
#ifndef Q35_CORE_FP8_H
#define Q35_CORE_FP8_H

#include <stdint.h>
#include <string.h>

#define Q35_E4M3_MAX 448.0f
#define Q35_E4M3_MAX_CODE 0x7eu
#define Q35_E4M3_NAN 0x7fu

static inline float q35_e4m3_to_f32(uint8_t c)
{
    const unsigned e = (c >> 3) & 15u, m = c & 7u;
    float mag;
    if (e == 15u && m == 7u) {
        const uint32_t nan = 0x7fc00000u;
        memcpy(&mag, &nan, sizeof mag);
    } else if (e == 0u) {
        mag = (float)m * 0x1p-9f; /* exact */
    } else {
        mag = (float)(8u + m) * 0x1p-3f; /* 1.m, exact */
        for (unsigned i = 7; i < e; i++)
            mag *= 2.0f;
        for (unsigned i = e; i < 7; i++)
            mag *= 0.5f;
    }
    return (c & 0x80u) ? -mag : mag;
}

static inline uint8_t q35_f32_to_e4m3(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    const uint8_t sign = (uint8_t)((x >> 24) & 0x80u);
    const uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u)
        return Q35_E4M3_NAN;
    const int e32 = (int)(ax >> 23) - 127;
    uint32_t code;
    if (e32 >= -6) {
        if (e32 > 8) /* 512 or more (infinity too): saturates */
            return (uint8_t)(sign | Q35_E4M3_MAX_CODE);
        code = ((uint32_t)(e32 + 7) << 3) | ((ax >> 20) & 7u);
        const uint32_t rest = ax & 0xfffffu;
        if (rest > 0x80000u || (rest == 0x80000u && (code & 1u)))
            code++; /* a carry walks into the exponent, as rounding should */
    } else {
        /* below 2^-6: a subnormal (or zero), value / 2^-9 rounded to even; the
         * scaling is exact, the float -> int conversion truncates */
        float mag;
        memcpy(&mag, &ax, sizeof mag);
        const float scaled = mag * 0x1p9f;
        code = (uint32_t)scaled;
        const float frac = scaled - (float)code;
        if (frac > 0.5f || (frac == 0.5f && (code & 1u)))
            code++; /* code 8 is the smallest normal, as it should be */
    }
    if (code > Q35_E4M3_MAX_CODE) /* rounded past 448 (into the NaN code or beyond) */
        code = Q35_E4M3_MAX_CODE;
    return (uint8_t)(sign | code);
}

#endif /* Q35_CORE_FP8_H */
