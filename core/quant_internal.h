/* What the quant codecs (core/quant_legacy.c, core/quant_kquants.c) share: the
 * rounding of their quantizers and IQ4_NL's table. Not for use outside core/quant*.c. */
#ifndef Q35_QUANT_INTERNAL_H
#define Q35_QUANT_INTERNAL_H

#include <math.h>
#include <stdint.h>

static inline int round_half_away(float x)
{
    return (int)(x + (x >= 0.0f ? 0.5f : -0.5f));
}

static inline int clamp_int(int v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* The signed element of largest magnitude of n (the first of equal ones): the
 * symmetric quantizers map it to their longer side's end. */
static inline float signed_absmax(const float *x, int n)
{
    float amax = 0.0f, max = 0.0f;
    for (int j = 0; j < n; j++) {
        if (fabsf(x[j]) > amax) {
            amax = fabsf(x[j]);
            max = x[j];
        }
    }
    return max;
}

/* IQ4_NL's and IQ4_XS's levels (quant_blocks.h). */
extern const int8_t q35_kvalues_iq4nl[16];

/* The nearest IQ4_NL table entries (indices, ties to the lower) to n elements x
 * under the scale d. */
void q35_iq4nl_levels(const float *x, int n, float d, uint8_t *L);

#endif /* Q35_QUANT_INTERNAL_H */
