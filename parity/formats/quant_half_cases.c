/* Part 1 of test_quant (quant_cases.h): core/half.h's f16 and bf16 conversions
 * against the formats' definitions, and the definitions the other parts share. */
#include "quant_cases.h"

#include "core/half.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define N_RANDOM_CONVERSIONS 400000

/* ---- the formats by their definition ---------------------------------------- */

uint32_t q35_test_bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

/* The float of bits u. */
static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

float q35_test_at_run_time(float x)
{
    volatile float v = x;
    return v;
}

double q35_test_f16_value(uint32_t h)
{
    const int e = (int)(h >> 10) & 31, m = (int)h & 1023;
    double v;
    if (e == 31)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp(m, -24);
    else
        v = ldexp(1024 + m, e - 25);
    return (h & 0x8000u) ? -v : v;
}

/* The value of bf16 bits by the definition: (-1)^s 2^(e-127) 1.m (7 bits of m), or
 * 2^-126 0.m when e == 0; e == 255 is infinity or NaN. */
static double bf16_value(uint32_t b)
{
    const int e = (int)(b >> 7) & 255, m = (int)b & 127;
    double v;
    if (e == 255)
        v = m ? NAN : INFINITY;
    else if (e == 0)
        v = ldexp(m, -133);
    else
        v = ldexp(128 + m, e - 134);
    return (b & 0x8000u) ? -v : v;
}

/* f32 -> f16 by the definition: the nearest f16 value, ties to the even bit
 * pattern; from 65520 (half-way from 65504 to 2^16) on, infinity. A binary search
 * over the positive finite halves, whose bit patterns are ordered as their values.
 * x must not be NaN. */
static uint16_t f16_nearest(float x)
{
    const uint32_t sign = signbit(x) ? 0x8000u : 0u;
    const double a = fabs((double)x);
    if (a >= 65520.0)
        return (uint16_t)(sign | 0x7c00u);
    uint32_t lo = 0, hi = 0x7bff; /* the largest h with value <= a */
    while (lo < hi) {
        const uint32_t mid = (lo + hi + 1) / 2;
        if (q35_test_f16_value(mid) <= a)
            lo = mid;
        else
            hi = mid - 1;
    }
    uint32_t h = lo;
    if (h < 0x7bff) {
        const double below = a - q35_test_f16_value(h), above = q35_test_f16_value(h + 1) - a;
        if (above < below || (above == below && (h & 1u)))
            h++;
    }
    return (uint16_t)(sign | h);
}

/* f32 -> bf16 by the definition: of the two bf16 values around x (its truncation
 * and the next larger magnitude, 2^128 past the largest finite), the nearer, ties
 * to the even pattern. x must not be NaN. */
static uint16_t bf16_nearest(float x)
{
    const uint32_t t = q35_test_bits_of(x) >> 16;
    const double a = fabs((double)x), below = fabs(bf16_value(t));
    if (a == below)
        return (uint16_t)t;
    const double above = ((t + 1) & 0x7fffu) == 0x7f80u ? 0x1p128 : fabs(bf16_value(t + 1));
    const double d_below = a - below, d_above = above - a;
    return (uint16_t)(d_above < d_below || (d_above == d_below && (t & 1u)) ? t + 1 : t);
}

/* A float with random sign, a binary exponent in [emin, emax] and random mantissa. */
static float random_float(q35_rng *rng, int emin, int emax)
{
    const uint64_t r = q35_rng_next(rng);
    const uint32_t e = (uint32_t)(emin + (int)(r % (uint64_t)(emax - emin + 1)) + 127);
    return float_of((uint32_t)((r >> 40) & 0x80000000u) | e << 23 | (uint32_t)(r >> 8 & 0x7fffffu));
}

/* ---- 1. half.h ---------------------------------------------------------------- */

/* Widening of every f16 pattern against the ldexp reference, bitwise (signed zeros
 * included); a NaN must stay a NaN with its sign and its payload below the quiet
 * bit (bits 0..8 of the half land in bits 13..21 of the float). */
static void check_f16_widen(q35_suite *s)
{
    int64_t bad = 0, first = -1;
    for (uint32_t h = 0; h < 65536; h++) {
        const float got = q35_f16_to_f32((uint16_t)h);
        const double want = q35_test_f16_value(h);
        bool ok;
        if (isnan(want))
            ok = isnan(got) && !signbit(got) == !(h & 0x8000u) &&
                 ((q35_test_bits_of(got) >> 13) & 0x1ffu) == (h & 0x1ffu);
        else
            ok = q35_test_bits_of(got) == q35_test_bits_of((float)want);
        if (!ok && bad++ == 0)
            first = h;
    }
    q35_case(s, bad == 0,
             "f16 -> f32: all 65536 patterns exact (+-0, 1023 subnormals each sign, +-inf; NaN keeps sign and "
             "payload): %" PRId64 " wrong (first 0x%04" PRIx64 ")",
             bad, first < 0 ? 0 : (uint64_t)first);
}

/* Narrowing of every f16 value (built by the reference) gives its own bits back;
 * every NaN pattern, widened, narrows to a NaN of the same sign. */
static void check_f16_narrow_back(q35_suite *s)
{
    int64_t bad = 0, bad_nan = 0;
    for (uint32_t h = 0; h < 65536; h++) {
        const double v = q35_test_f16_value(h);
        if (isnan(v)) {
            const uint16_t o = q35_f32_to_f16(q35_f16_to_f32((uint16_t)h));
            bad_nan += (o & 0x7c00u) != 0x7c00u || (o & 0x3ffu) == 0 || (o & 0x8000u) != (h & 0x8000u);
        } else {
            bad += q35_f32_to_f16((float)v) != h;
        }
    }
    q35_case(s, bad == 0 && bad_nan == 0,
             "f32 -> f16 of every f16 value: own bits back (63490 values incl. +-0, +-inf): %" PRId64
             " wrong; the 2046 NaNs stay NaN with their sign: %" PRId64 " wrong",
             bad, bad_nan);
}

/* Round to nearest even at every half-way point between adjacent halves of each
 * sign (0x7bff/0x7c00 is 65504/65536: its half-way 65520 ties to the even 0x7c00,
 * infinity), and one f32 ulp below/above it rounds down/up. */
static void check_f16_ties(q35_suite *s)
{
    int64_t bad = 0, inexact = 0, checked = 0;
    uint32_t first = 0;
    for (uint32_t neg = 0; neg < 2; neg++) {
        for (uint32_t h = 0; h < 0x7c00; h++) {
            const double lo = q35_test_f16_value(h), hi = h + 1 == 0x7c00 ? 65536.0 : q35_test_f16_value(h + 1);
            const float mid = (float)((lo + hi) / 2); /* 12 significant bits: exact */
            inexact += (double)mid != (lo + hi) / 2;
            const float sg = neg ? -1.0f : 1.0f;
            const uint32_t sign = neg ? 0x8000u : 0u, even = (h & 1u) ? h + 1 : h;
            const bool ok = q35_f32_to_f16(sg * mid) == (sign | even) &&
                            q35_f32_to_f16(sg * nextafterf(mid, 0.0f)) == (sign | h) &&
                            q35_f32_to_f16(sg * nextafterf(mid, INFINITY)) == (sign | (h + 1));
            if (!ok && bad++ == 0)
                first = sign | h;
            checked++;
        }
    }
    q35_case(s, bad == 0 && inexact == 0,
             "f32 -> f16 at all %" PRId64 " half-way points (subnormal, normal, 65520 -> inf; both signs): ties "
             "to even, +-1 f32 ulp to the nearer: %" PRId64 " wrong (first pair at 0x%04" PRIx32 ")",
             checked, bad, first);
}

/* Points worked out by hand: overflow, the subnormal range, ties. */
static const struct {
    float x;
    uint16_t want;
    const char *what;
} k_f16_points[] = {
    {65504.0f, 0x7bff, "65504, the largest half, stays"},
    {65519.99f, 0x7bff, "65519.99 rounds down to 65504"},
    {65520.0f, 0x7c00, "65520, half-way to 2^16, ties to the even pattern: +inf"},
    {65536.0f, 0x7c00, "2^16 overflows to +inf"},
    {100000.0f, 0x7c00, "100000 -> +inf"},
    {1e30f, 0x7c00, "1e30 -> +inf"},
    {FLT_MAX, 0x7c00, "FLT_MAX -> +inf"},
    {INFINITY, 0x7c00, "+inf stays"},
    {-65520.0f, 0xfc00, "-65520 -> -inf"},
    {-65504.0f, 0xfbff, "-65504 stays"},
    {-INFINITY, 0xfc00, "-inf stays"},
    {1.0f, 0x3c00, "1"},
    {-2.0f, 0xc000, "-2"},
    {0.1f, 0x2e66, "0.1 (0x1.99999ap-4) rounds down"},
    {0x1.002p0f, 0x3c00, "1 + 2^-11, a tie, to even: down"},
    {0x1.006p0f, 0x3c02, "1 + 3*2^-11, a tie, to even: up"},
    {0x1.002002p0f, 0x3c01, "1 + 2^-11 + 2^-23, above the tie: up"},
    {0x1.ffep0f, 0x4000, "2 - 2^-11, a tie below 2: the carry reaches the exponent"},
    {0x1p-14f, 0x0400, "2^-14, the smallest normal"},
    {0x1.ff8p-15f, 0x03ff, "1023*2^-24, the largest subnormal"},
    {0x1.ffcp-15f, 0x0400, "1023.5*2^-24, a tie, to even: the smallest normal"},
    {0x1p-24f, 0x0001, "2^-24, the smallest subnormal"},
    {-0x1p-24f, 0x8001, "-2^-24"},
    {0x1.8p-24f, 0x0002, "1.5*2^-24, a tie, to even: up"},
    {0x1.4p-23f, 0x0002, "2.5*2^-24, a tie, to even: down"},
    {0x1p-25f, 0x0000, "2^-25, half the smallest subnormal, a tie, to even: +0"},
    {0x1.000002p-25f, 0x0001, "just above 2^-25: the smallest subnormal"},
    {-0x1p-25f, 0x8000, "-2^-25 -> -0"},
    {0x1p-26f, 0x0000, "2^-26 -> +0"},
    {FLT_MIN, 0x0000, "FLT_MIN -> +0"},
    {FLT_TRUE_MIN, 0x0000, "the smallest f32 subnormal -> +0"},
    {-FLT_TRUE_MIN, 0x8000, "minus the smallest f32 subnormal -> -0"},
    {0.0f, 0x0000, "+0"},
    {-0.0f, 0x8000, "-0"},
};

static void check_f16_points(q35_suite *s)
{
    for (size_t i = 0; i < sizeof k_f16_points / sizeof k_f16_points[0]; i++) {
        const uint16_t got = q35_f32_to_f16(q35_test_at_run_time(k_f16_points[i].x));
        q35_case(s, got == k_f16_points[i].want, "f32 -> f16 %-14a -> 0x%04x (want 0x%04x): %s",
                 (double)k_f16_points[i].x, got, k_f16_points[i].want, k_f16_points[i].what);
    }
}

/* Random floats (exponents from below the f16 subnormals to past its overflow, and
 * raw 32-bit patterns) against the nearest-value search; NaNs stay NaN. */
static void check_f16_random(q35_suite *s, q35_rng *rng)
{
    int64_t bad = 0, bad_nan = 0, nans = 0;
    float first = 0.0f;
    for (int i = 0; i < N_RANDOM_CONVERSIONS; i++) {
        const float x = i % 4 == 3 ? float_of((uint32_t)q35_rng_next(rng)) : random_float(rng, -27, 16);
        const uint16_t got = q35_f32_to_f16(x);
        if (isnan(x)) {
            nans++;
            bad_nan += (got & 0x7c00u) != 0x7c00u || (got & 0x3ffu) == 0 || !(got & 0x8000u) != !signbit(x);
        } else if (got != f16_nearest(x) && bad++ == 0) {
            first = x;
        }
    }
    q35_case(s, bad == 0 && bad_nan == 0,
             "f32 -> f16 of %d random floats against the nearest-value search: %" PRId64 " wrong (first %a); %" PRId64
             " random NaNs stay NaN: %" PRId64 " wrong",
             N_RANDOM_CONVERSIONS, bad, (double)first, nans, bad_nan);
}

static void check_bf16_widen(q35_suite *s)
{
    int64_t bad = 0, first = -1;
    for (uint32_t b = 0; b < 65536; b++) {
        const float got = q35_bf16_to_f32((uint16_t)b);
        const double want = bf16_value(b);
        bool ok;
        if (isnan(want)) /* bf16 is the top half of a float: the whole payload is kept */
            ok = isnan(got) && q35_test_bits_of(got) == b << 16;
        else
            ok = q35_test_bits_of(got) == q35_test_bits_of((float)want);
        if (!ok && bad++ == 0)
            first = b;
    }
    q35_case(s, bad == 0,
             "bf16 -> f32: all 65536 patterns exact (+-0, subnormals, +-inf; NaN bits kept): %" PRId64
             " wrong (first 0x%04" PRIx64 ")",
             bad, first < 0 ? 0 : (uint64_t)first);
}

static void check_bf16_narrow_back(q35_suite *s)
{
    int64_t bad = 0, bad_nan = 0;
    for (uint32_t b = 0; b < 65536; b++) {
        const double v = bf16_value(b);
        if (isnan(v)) {
            const uint16_t o = q35_f32_to_bf16(float_of(b << 16));
            bad_nan += (o & 0x7f80u) != 0x7f80u || (o & 0x7fu) == 0 || (o & 0x8000u) != (b & 0x8000u);
        } else {
            bad += q35_f32_to_bf16((float)v) != b;
        }
    }
    q35_case(s, bad == 0 && bad_nan == 0,
             "f32 -> bf16 of every bf16 value: own bits back: %" PRId64 " wrong; the 254 NaNs stay NaN with their "
             "sign: %" PRId64 " wrong",
             bad, bad_nan);
}

/* Half-way points between adjacent bf16 values of each sign (0x7f7f/0x7f80 is the
 * largest finite and 2^128: its half-way ties to the even 0x7f80, infinity). */
static void check_bf16_ties(q35_suite *s)
{
    int64_t bad = 0, inexact = 0, checked = 0;
    uint32_t first = 0;
    for (uint32_t neg = 0; neg < 2; neg++) {
        for (uint32_t b = 0; b < 0x7f80; b++) {
            const double lo = bf16_value(b), hi = b + 1 == 0x7f80 ? 0x1p128 : bf16_value(b + 1);
            const float mid = (float)((lo + hi) / 2); /* 9 significant bits: exact */
            inexact += (double)mid != (lo + hi) / 2;
            const float sg = neg ? -1.0f : 1.0f;
            const uint32_t sign = neg ? 0x8000u : 0u, even = (b & 1u) ? b + 1 : b;
            const bool ok = q35_f32_to_bf16(sg * mid) == (sign | even) &&
                            q35_f32_to_bf16(sg * nextafterf(mid, 0.0f)) == (sign | b) &&
                            q35_f32_to_bf16(sg * nextafterf(mid, INFINITY)) == (sign | (b + 1));
            if (!ok && bad++ == 0)
                first = sign | b;
            checked++;
        }
    }
    q35_case(s, bad == 0 && inexact == 0,
             "f32 -> bf16 at all %" PRId64 " half-way points (both signs, the largest -> inf): ties to even, +-1 "
             "f32 ulp to the nearer: %" PRId64 " wrong (first pair at 0x%04" PRIx32 ")",
             checked, bad, first);
}

static const struct {
    uint32_t x; /* f32 bits */
    uint16_t want;
    const char *what;
} k_bf16_points[] = {
    {0x3f800000u, 0x3f80, "1"},
    {0x3f808000u, 0x3f80, "1 + 2^-8, a tie, to even: down"},
    {0x3f818000u, 0x3f82, "1 + 3*2^-8, a tie, to even: up"},
    {0x3f808001u, 0x3f81, "just above 1 + 2^-8: up"},
    {0x3fff8000u, 0x4000, "2 - 2^-8, a tie below 2: the carry reaches the exponent"},
    {0x7f7f0000u, 0x7f7f, "the largest finite bf16 stays"},
    {0x7f7f7fffu, 0x7f7f, "just below its half-way to 2^128: down"},
    {0x7f7f8000u, 0x7f80, "its half-way to 2^128, a tie, to even: +inf"},
    {0x7f7fffffu, 0x7f80, "FLT_MAX -> +inf"},
    {0xff7fffffu, 0xff80, "-FLT_MAX -> -inf"},
    {0x7f800000u, 0x7f80, "+inf stays"},
    {0xff800000u, 0xff80, "-inf stays"},
    {0x00800000u, 0x0080, "FLT_MIN, the smallest normal"},
    {0x00008000u, 0x0000, "half the smallest bf16 subnormal, a tie, to even: +0"},
    {0x00008001u, 0x0001, "just above it: the smallest subnormal"},
    {0x00018000u, 0x0002, "1.5 subnormal steps, a tie, to even: up"},
    {0x00000001u, 0x0000, "the smallest f32 subnormal -> +0"},
    {0x80000001u, 0x8000, "minus it -> -0"},
    {0x007fffffu, 0x0080, "the largest f32 subnormal rounds up to FLT_MIN"},
    {0x00000000u, 0x0000, "+0"},
    {0x80000000u, 0x8000, "-0"},
};

static void check_bf16_points(q35_suite *s)
{
    for (size_t i = 0; i < sizeof k_bf16_points / sizeof k_bf16_points[0]; i++) {
        const uint16_t got = q35_f32_to_bf16(q35_test_at_run_time(float_of(k_bf16_points[i].x)));
        q35_case(s, got == k_bf16_points[i].want, "f32 -> bf16 0x%08" PRIx32 " -> 0x%04x (want 0x%04x): %s",
                 k_bf16_points[i].x, got, k_bf16_points[i].want, k_bf16_points[i].what);
    }
}

/* Random 32-bit patterns against the two-candidate reference. NaNs whose payload
 * lies only in the low 16 bits must not become infinity. */
static void check_bf16_random(q35_suite *s, q35_rng *rng)
{
    int64_t bad = 0, bad_nan = 0, nans = 0;
    uint32_t first = 0;
    for (int i = 0; i < N_RANDOM_CONVERSIONS; i++) {
        uint32_t u = (uint32_t)q35_rng_next(rng);
        if (i % 8 == 7) /* a NaN, half of them with a low-only payload */
            u = (u & 0x80000000u) | 0x7f800000u | ((i & 8) ? (u & 0xffffu) | 1u : (u & 0x7fffffu) | 0x10000u);
        const float x = float_of(u);
        const uint16_t got = q35_f32_to_bf16(x);
        if (isnan(x)) {
            nans++;
            bad_nan += (got & 0x7f80u) != 0x7f80u || (got & 0x7fu) == 0 || (got >> 15) != (u >> 31);
        } else if (got != bf16_nearest(x) && bad++ == 0) {
            first = u;
        }
    }
    q35_case(s, bad == 0 && bad_nan == 0,
             "f32 -> bf16 of %d random patterns against the two-candidate reference: %" PRId64
             " wrong (first 0x%08" PRIx32 "); %" PRId64 " NaNs (incl. low-16-bit payloads) stay NaN: %" PRId64 " wrong",
             N_RANDOM_CONVERSIONS, bad, first, nans, bad_nan);
}

void q35_test_check_half(q35_suite *s, q35_rng *rng)
{
    printf("-- 1. half.h: f16 and bf16 conversions\n");
    check_f16_widen(s);
    check_f16_narrow_back(s);
    check_f16_ties(s);
    check_f16_points(s);
    check_f16_random(s, rng);
    check_bf16_widen(s);
    check_bf16_narrow_back(s);
    check_bf16_ties(s);
    check_bf16_points(s);
    check_bf16_random(s, rng);
}
