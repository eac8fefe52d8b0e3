/* Deterministic random numbers for generators and tests: splitmix64 to seed,
 * xoshiro256** to draw. Every test prints the seed it drew from. */
#ifndef Q35_RNG_H
#define Q35_RNG_H

#include <stdint.h>

typedef struct q35_rng {
    uint64_t s[4]; /* xoshiro256** state, never all zero */
} q35_rng;

static inline uint64_t q35_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline void q35_rng_seed(q35_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = q35_splitmix64(&seed);
}

static inline uint64_t q35_rng_next(q35_rng *r)
{
    uint64_t *s = r->s;
    const uint64_t x = s[1] * 5;
    const uint64_t result = ((x << 7) | (x >> 57)) * 9;
    const uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

/* Uniform in [0, 1) with 53 bits. */
static inline double q35_rng_uniform(q35_rng *r)
{
    return (double)(q35_rng_next(r) >> 11) * 0x1p-53;
}

/* Uniform in [lo, hi). */
static inline double q35_rng_range(q35_rng *r, double lo, double hi)
{
    return lo + (hi - lo) * q35_rng_uniform(r);
}

/* Approximately N(0, 1) from one draw: the Irwin-Hall sum of four 16-bit uniforms,
 * centred and scaled to unit variance (support +-3.46). Cheap enough to fill a
 * 9B-parameter model in seconds; its tails are lighter than a Gaussian's. */
static inline float q35_rng_normal_fast(q35_rng *r)
{
    const uint64_t b = q35_rng_next(r);
    const uint32_t s = (uint32_t)(b & 0xffffu) + (uint32_t)((b >> 16) & 0xffffu) +
                       (uint32_t)((b >> 32) & 0xffffu) + (uint32_t)(b >> 48);
    /* sum of 4 U(0,1) has mean 2 and variance 1/3 */
    return ((float)s * (1.0f / 65536.0f) - 2.0f) * 1.7320508f;
}

#endif /* Q35_RNG_H */
