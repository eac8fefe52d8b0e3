/* The e4m3 codec (core/fp8.h) and the FP8 row quantization's reference
 * (kernels/fp8.h), on the CPU: every code decodes and encodes back to itself;
 * the finite codes increase strictly; every midpoint between neighbours rounds
 * to the even one and one ulp either side to its side; saturation at 448,
 * infinities and NaN; random floats over the whole range against an independent
 * encoder (nearest of the 127 finite magnitudes by search, ties to the even
 * code); the quantized rows' amax maps to +-448 and the scales invert. */
#include "parity/lib/harness.h"

#include "core/fp8.h"
#include "core/rng.h"
#include "kernels/fp8.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static q35_rng g_rng;

static float bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* The independent encoder: the nearest finite magnitude by search, ties to the even code. */
static uint8_t encode_by_search(float f)
{
    if (isnan(f))
        return Q35_E4M3_NAN;
    const double a = fabs((double)f);
    unsigned best = 0;
    double best_d = INFINITY;
    for (unsigned c = 0; c <= Q35_E4M3_MAX_CODE; c++) {
        const double d = fabs(a - (double)q35_e4m3_to_f32((uint8_t)c));
        if (d < best_d || (d == best_d && (c & 1u) == 0u))
            best = c, best_d = d;
    }
    return (uint8_t)((signbit(f) ? 0x80u : 0u) | best);
}

static void check_codes(q35_suite *s)
{
    int round_trip = 0, increasing = 1, nan_ok = 1;
    for (unsigned c = 0; c < 256; c++) {
        const float v = q35_e4m3_to_f32((uint8_t)c);
        if ((c & 0x7fu) == Q35_E4M3_NAN) {
            nan_ok &= isnan(v) && q35_f32_to_e4m3(v) == Q35_E4M3_NAN && q35_f32_to_e4m3(-v) == Q35_E4M3_NAN;
            continue;
        }
        round_trip += q35_f32_to_e4m3(v) == (uint8_t)c;
        if ((c & 0x7fu) > 0 && (c & 0x7fu) <= Q35_E4M3_MAX_CODE)
            increasing &= fabsf(v) > fabsf(q35_e4m3_to_f32((uint8_t)(c - 1)));
    }
    q35_case(s, round_trip == 254, "each of the 254 non-NaN codes decodes and encodes back to itself (%d did)",
             round_trip);
    q35_case(s, increasing, "the finite magnitudes increase strictly with the code");
    q35_case(s, nan_ok, "the NaN codes decode to NaN; a NaN of either sign encodes to 0x7f");
    q35_case(s, q35_e4m3_to_f32(0x7e) == 448.0f && q35_e4m3_to_f32(0x01) == 0x1p-9f && q35_e4m3_to_f32(0x08) == 0x1p-6f &&
                    q35_e4m3_to_f32(0x38) == 1.0f && q35_e4m3_to_f32(0xb8) == -1.0f,
             "known values: 0x7e = 448, 0x01 = 2^-9, 0x08 = 2^-6, 0x38 = 1, 0xb8 = -1");
}

static void check_midpoints(q35_suite *s)
{
    int bad = 0, first = -1;
    for (unsigned c = 0; c < Q35_E4M3_MAX_CODE; c++) {
        const float lo = q35_e4m3_to_f32((uint8_t)c), hi = q35_e4m3_to_f32((uint8_t)(c + 1));
        const float mid = (lo + hi) * 0.5f; /* exact: both have 4 significant bits */
        const unsigned even = (c & 1u) ? c + 1 : c;
        for (int sign = 0; sign < 2; sign++) {
            const float m = sign ? -mid : mid;
            const unsigned sb = sign ? 0x80u : 0u;
            const int ok = q35_f32_to_e4m3(m) == (uint8_t)(sb | even) &&
                           q35_f32_to_e4m3(nextafterf(m, 0.0f)) == (uint8_t)(sb | c) &&
                           q35_f32_to_e4m3(nextafterf(m, sign ? -INFINITY : INFINITY)) == (uint8_t)(sb | (c + 1));
            if (!ok && first < 0)
                first = (int)c;
            bad += !ok;
        }
    }
    q35_case(s, bad == 0, "the %u midpoints (both signs) round to the even code, one ulp either side to its side "
             "(%d wrong, first between codes %d and %d)", Q35_E4M3_MAX_CODE, bad, first, first + 1);
    q35_case(s, q35_f32_to_e4m3(464.0f) == 0x7e && q35_f32_to_e4m3(479.9f) == 0x7e && q35_f32_to_e4m3(1e30f) == 0x7e &&
                    q35_f32_to_e4m3(INFINITY) == 0x7e && q35_f32_to_e4m3(-INFINITY) == 0xfe &&
                    q35_f32_to_e4m3(-500.0f) == 0xfe,
             "saturation: 464, 479.9, 1e30 and infinity become 448 with their sign");
    q35_case(s, q35_f32_to_e4m3(0x1p-10f) == 0x00 && q35_f32_to_e4m3(nextafterf(0x1p-10f, 1.0f)) == 0x01 &&
                    q35_f32_to_e4m3(3 * 0x1p-10f) == 0x02 && q35_f32_to_e4m3(-0.0f) == 0x80 &&
                    q35_f32_to_e4m3(1e-30f) == 0x00,
             "the subnormals: 2^-10 ties to 0, just above to 2^-9, 3 * 2^-10 ties to 2 * 2^-9; -0 keeps its sign");
}

static void check_random(q35_suite *s)
{
    int bad = 0;
    float first = 0.0f;
    for (int i = 0; i < 400000; i++) {
        /* every exponent from far below the subnormals to past the saturation */
        const uint32_t e = (uint32_t)q35_rng_range(&g_rng, 100.0, 140.0);
        const uint32_t u = (uint32_t)(q35_rng_next(&g_rng) & 0x807fffffu) | (e << 23);
        const float f = bits_f32(u);
        if (q35_f32_to_e4m3(f) != encode_by_search(f)) {
            if (!bad)
                first = f;
            bad++;
        }
    }
    q35_case(s, bad == 0, "400000 random floats over 2^-27 .. 2^12 against the nearest-by-search encoder: %d differ "
             "(first %.9g)", bad, (double)first);
}

static void check_quantize_ref(q35_suite *s)
{
    enum { ROWS = 5, COLS = 300, STRIDE = 301 };
    float *x = calloc((size_t)ROWS * STRIDE, sizeof *x), scale[ROWS];
    uint8_t *q = malloc((size_t)ROWS * COLS);
    for (int r = 0; r < ROWS; r++)
        for (int i = 0; i < COLS; i++)
            x[r * STRIDE + i] = r == 3 ? 0.0f : (float)(q35_test_normal(&g_rng) * pow(10.0, r - 2));
    q35_ref_fp8_quantize_rows(q, scale, x, ROWS, COLS, STRIDE);
    int amax_ok = 1;
    double worst = 0.0;
    for (int r = 0; r < ROWS; r++) {
        if (r == 3) {
            int zero = scale[r] == 1.0f;
            for (int i = 0; i < COLS; i++)
                zero &= q[r * COLS + i] == 0;
            q35_case(s, zero, "an all-zero row: scale 1, codes 0");
            continue;
        }
        int hit = 0;
        for (int i = 0; i < COLS; i++) {
            const uint8_t c = q[r * COLS + i];
            hit |= (c & 0x7fu) == Q35_E4M3_MAX_CODE;
            const double back = (double)q35_e4m3_to_f32(c) * (double)scale[r], v = x[r * STRIDE + i];
            const double rel = fabs(back - v) / fabs(v);
            if (fabs(v) / (double)scale[r] >= 0x1p-6) /* in e4m3's normal range */
                worst = rel > worst ? rel : worst;
        }
        amax_ok &= hit;
    }
    const int err_ok = worst <= 0x1p-4 * 1.0001;
    q35_case(s, amax_ok, "each row's amax maps to +-448 (code 0x7e)");
    q35_case(s, err_ok, "code x scale is within 2^-4 relative of x in the normal range (worst %.4g)", worst);
    free(x), free(q);
}

int main(void)
{
    const uint64_t seed = q35_test_seed();
    q35_rng_seed(&g_rng, seed);
    q35_suite s;
    q35_suite_begin(&s, "e4m3 codec and the FP8 row quantization's reference", seed);
    check_codes(&s);
    check_midpoints(&s);
    check_random(&s);
    check_quantize_ref(&s);
    return q35_suite_end(&s);
}
