/* IEEE binary16 and bfloat16 <-> binary32 on the host, exact where exactness
 * exists: widening is exact for every input (subnormals, infinities, NaN payloads);
 * narrowing rounds to nearest even, overflows to infinity, keeps NaN a NaN. */
#ifndef Q35_HALF_H
#define Q35_HALF_H

#include <stdint.h>
#include <string.h>

static inline float q35_bits_to_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline uint32_t q35_f32_to_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float q35_f16_to_f32(uint16_t h)
{
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    const uint32_t exp = (h >> 10) & 0x1fu;
    const uint32_t mant = h & 0x3ffu;
    if (exp == 0) {
        /* zero or subnormal: mant * 2^-24, exact in binary32 */
        const float mag = (float)mant * 0x1p-24f;
        return sign ? -mag : mag;
    }
    if (exp == 31) /* infinity or NaN (payload kept) */
        return q35_bits_to_f32(sign | 0x7f800000u | (mant << 13));
    return q35_bits_to_f32(sign | ((exp + 112u) << 23) | (mant << 13));
}

static inline uint16_t q35_f32_to_f16(float f)
{
    const uint32_t x = q35_f32_to_bits(f);
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    const uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) /* NaN: quiet, top payload bits kept */
        return (uint16_t)(sign | 0x7e00u | ((ax >> 13) & 0x3ffu));
    if (ax >= 0x477ff000u) /* >= 65520 rounds to infinity */
        return (uint16_t)(sign | 0x7c00u);
    if (ax < 0x38800000u) {
        /* below 2^-14: a half subnormal (or zero); value/2^-24 rounded to even.
         * The scaling is exact; the float->int conversion rounds. */
        const float scaled = q35_bits_to_f32(ax) * 0x1p24f;
        uint32_t m = (uint32_t)scaled;
        const float frac = scaled - (float)m;
        if (frac > 0.5f || (frac == 0.5f && (m & 1u)))
            m++;
        return (uint16_t)(sign | m); /* m == 1024 is the smallest normal, as it should be */
    }
    uint32_t h = (((ax >> 23) - 112u) << 10) | ((ax >> 13) & 0x3ffu);
    const uint32_t rest = ax & 0x1fffu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1u)))
        h++; /* a carry walks into the exponent, as rounding should */
    return (uint16_t)(sign | h);
}

static inline float q35_bf16_to_f32(uint16_t b)
{
    return q35_bits_to_f32((uint32_t)b << 16);
}

static inline uint16_t q35_f32_to_bf16(float f)
{
    const uint32_t x = q35_f32_to_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN stays NaN */
        return (uint16_t)((x >> 16) | 0x40u);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

#endif /* Q35_HALF_H */
