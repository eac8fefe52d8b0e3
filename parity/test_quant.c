/* The CPU quant codecs (model/half.h, model/quant*.c), in five parts:
 *
 *   1. half.h: f16 and bf16 widening of all 65536 bit patterns against an ldexp
 *      reference; narrowing of every value back to its bits; round to nearest even
 *      at every half-way point between adjacent values (and one f32 ulp either
 *      side); overflow, the subnormal range and NaN; random floats against a
 *      nearest-value search.
 *   2. Hand-built blocks of Q8_0, Q4_0, Q5_0, Q4_K, Q5_K, Q6_K: every level, every
 *      scale position, f16 scales from zero and subnormal to 65504, infinity and
 *      NaN. Expected values are computed here from the format's definition by the
 *      float operations of ggml's formula in its order (quant_kquants.c states it),
 *      and compared bitwise; a few are also written out as literals.
 *   3. Quantize -> dequantize round trips of all 9 computable types on random and
 *      adversarial data: the bytes written (exactly q35_row_bytes, every one of
 *      them), the floats written (exactly n), per element the bounds derived from
 *      the format and this project's quantizer (see `grid`: the nearest level, a
 *      grid that covers the data, no coarser a step than the scale choice allows),
 *      and the RMS error on N(0,1) data under a measured per-format limit.
 *   4. The quantized golden files (data/golden/tiny-r2/quant): every tensor
 *      dequantized and hashed (FNV-1a 64 of its float32 bytes) against the hash of
 *      ggml's own dequantizer.
 *   5. The type table: ids, names, block sizes, row bytes, parsing. */
#include "harness.h"

#include "model/gguf.h"
#include "model/half.h"
#include "model/quant.h"
#include "model/quant_blocks.h"
#include "model/rng.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SENTINEL_BYTES 64   /* checked after every quantized buffer */
#define SENTINEL_FLOATS 16  /* checked after every dequantized buffer */
#define N_RANDOM_CONVERSIONS 400000

/* ---- small helpers ---------------------------------------------------------- */

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static float float_of(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* x read back through a volatile, so an expected value is computed at run time by
 * the same instructions as the code under test (a NaN folded at compile time may
 * carry another sign than the one the FPU produces for 0 * inf). */
static float at_run_time(float x)
{
    volatile float v = x;
    return v;
}

/* The value of f16 bits by the definition, in double: (-1)^s 2^(e-15) 1.m, or
 * 2^-14 0.m when e == 0; e == 31 is infinity (m == 0) or NaN. */
static double f16_value(uint32_t h)
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

/* Half the spacing of f16 values in |v|'s binade: the largest error of rounding v
 * to f16 (|v| <= 65504); 2^-25 in the subnormal range and at zero. */
static double f16_half_ulp(double v)
{
    const double a = fabs(v);
    if (a < 0x1p-14)
        return 0x1p-25;
    int e;
    frexp(a, &e); /* a = f 2^e, f in [0.5, 1) */
    return ldexp(1.0, e - 1 - 11);
}

/* The same for bf16 (8 significant bits; subnormals spaced 2^-133). */
static double bf16_half_ulp(double v)
{
    const double a = fabs(v);
    if (a < 0x1p-126)
        return 0x1p-134;
    int e;
    frexp(a, &e);
    return ldexp(1.0, e - 1 - 8);
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
        if (f16_value(mid) <= a)
            lo = mid;
        else
            hi = mid - 1;
    }
    uint32_t h = lo;
    if (h < 0x7bff) {
        const double below = a - f16_value(h), above = f16_value(h + 1) - a;
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
    const uint32_t t = bits_of(x) >> 16;
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
        const double want = f16_value(h);
        bool ok;
        if (isnan(want))
            ok = isnan(got) && !signbit(got) == !(h & 0x8000u) && ((bits_of(got) >> 13) & 0x1ffu) == (h & 0x1ffu);
        else
            ok = bits_of(got) == bits_of((float)want);
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
        const double v = f16_value(h);
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
            const double lo = f16_value(h), hi = h + 1 == 0x7c00 ? 65536.0 : f16_value(h + 1);
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
        const uint16_t got = q35_f32_to_f16(at_run_time(k_f16_points[i].x));
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
            ok = isnan(got) && bits_of(got) == b << 16;
        else
            ok = bits_of(got) == bits_of((float)want);
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
        const uint16_t got = q35_f32_to_bf16(at_run_time(float_of(k_bf16_points[i].x)));
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

static void check_half(q35_suite *s, q35_rng *rng)
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

/* ---- 2. hand-built blocks ------------------------------------------------------ */

/* f16 scales by hand: the bits and the value they stand for. */
typedef struct f16_scale {
    uint16_t bits;
    float value;
    const char *what;
} f16_scale;

static const f16_scale k_scales[] = {
    {0x3c00, 1.0f, "1"},
    {0x3555, 0x1.554p-2f, "0.333252 (exp 13, mantissa 0x155)"},
    {0x2e66, 0x1.998p-4f, "0.0999756 (exp 11, mantissa 0x266)"},
    {0xb800, -0.5f, "-0.5, negative"},
    {0x7bff, 65504.0f, "65504, the largest f16"},
    {0xfbff, -65504.0f, "-65504"},
    {0x0400, 0x1p-14f, "2^-14, the smallest normal"},
    {0x03ff, 0x1.ff8p-15f, "1023*2^-24, the largest subnormal"},
    {0x0001, 0x1p-24f, "2^-24, the smallest subnormal"},
    {0x8001, -0x1p-24f, "-2^-24"},
    {0x0000, 0.0f, "+0"},
    {0x8000, -0.0f, "-0"},
    {0x7c00, INFINITY, "+inf (inf*0 is NaN)"},
    {0xfc00, -INFINITY, "-inf"},
    {0x7e00, NAN, "NaN"},
};
#define N_SCALES ((int)(sizeof k_scales / sizeof k_scales[0]))

/* The table's values must be what its bits mean (a typo here would test nothing). */
static void check_scale_table(q35_suite *s)
{
    int bad = 0;
    for (int i = 0; i < N_SCALES; i++) {
        const double v = f16_value(k_scales[i].bits);
        bad += isnan(v) ? !isnan(k_scales[i].value) : bits_of(k_scales[i].value) != bits_of((float)v);
    }
    q35_case(s, bad == 0, "the %d hand-written f16 scales match their bits: %d wrong", N_SCALES, bad);
}

/* Dequantizes n elements of `blocks` into a poisoned buffer and compares them
 * bitwise with want; the floats after the n must keep their poison. One case. */
static void check_blocks(q35_suite *s, q35_type type, const void *blocks, int64_t n, const float *want,
                         const char *what)
{
    float *got = malloc((size_t)(n + SENTINEL_FLOATS) * sizeof *got);
    float tail[SENTINEL_FLOATS];
    if (!got) {
        q35_case(s, false, "%s %s: out of memory", q35_type_name(type), what);
        return;
    }
    q35_poison_f32(got, n + SENTINEL_FLOATS);
    q35_poison_f32(tail, SENTINEL_FLOATS);
    q35_dequantize(type, blocks, got, n);
    const q35_bitcmp c = q35_bitwise_f32(got, want, n);
    const bool tail_ok = memcmp(got + n, tail, sizeof tail) == 0;
    char buf[256];
    q35_case(s, c.equal && tail_ok, "%-4s %s: %" PRId64 " values %s%s", q35_type_name(type), what, n,
             q35_bitcmp_str(&c, buf, sizeof buf), tail_ok ? "" : ", WROTE PAST n");
    free(got);
}

/* A few elements against literals worked out by hand. */
typedef struct spot {
    int index;
    float want;
} spot;

static void check_spots(q35_suite *s, q35_type type, const void *blocks, int64_t n, const spot *spots, int n_spots,
                        const char *what)
{
    float got[Q35_QK_K];
    q35_poison_f32(got, n);
    q35_dequantize(type, blocks, got, n);
    int bad = 0, first = -1;
    for (int i = 0; i < n_spots; i++) {
        if (bits_of(got[spots[i].index]) != bits_of(spots[i].want) && bad++ == 0)
            first = i;
    }
    char detail[96] = "";
    if (first >= 0)
        snprintf(detail, sizeof detail, " (first [%d]: got %.9g, want %.9g)", spots[first].index,
                 (double)got[spots[first].index], (double)spots[first].want);
    q35_case(s, bad == 0, "%-4s worked example, %s: %d literals, %d wrong%s", q35_type_name(type), what, n_spots, bad,
             detail);
}

/* The element's nibble in Q4_0/Q5_0 qs: element j < 16 in the low nibble of qs[j],
 * element j + 16 in the high one. */
static int legacy_nibble(const uint8_t qs[16], int e)
{
    return e < 16 ? qs[e] & 15 : qs[e - 16] >> 4;
}

/* Q8_0: all 256 int8 levels (8 blocks) under every scale: x = (float)q * d. */
static void check_q8_0_blocks(q35_suite *s)
{
    for (int i = 0; i < N_SCALES; i++) {
        q35_block_q8_0 b[8];
        float want[256];
        const float d = at_run_time(k_scales[i].value);
        for (int k = 0; k < 8; k++) {
            b[k].d = k_scales[i].bits;
            for (int j = 0; j < 32; j++) {
                b[k].qs[j] = (int8_t)(32 * k + j - 128);
                want[32 * k + j] = (float)b[k].qs[j] * d;
            }
        }
        char what[128];
        snprintf(what, sizeof what, "every int8 level, d = %s", k_scales[i].what);
        check_blocks(s, Q35_TYPE_Q8_0, b, 256, want, what);
    }
    /* d = 0x3555 = 1365/4096: -128 -> -42.65625, 127 -> 173355/4096, 1 -> d. */
    q35_block_q8_0 b = {.d = 0x3555};
    b.qs[0] = -128;
    b.qs[1] = 127;
    b.qs[2] = 1;
    b.qs[3] = -1;
    const spot spots[] = {{0, -42.65625f}, {1, 42.322998046875f}, {2, 0.333251953125f}, {3, -0.333251953125f}, {4, 0.0f}};
    check_spots(s, Q35_TYPE_Q8_0, &b, 32, spots, 5, "d = 0x3555");
}

/* Q4_0: every nibble in both halves (two orders) under every scale: x = (q - 8) * d. */
static void check_q4_0_blocks(q35_suite *s)
{
    for (int i = 0; i < N_SCALES; i++) {
        q35_block_q4_0 b[2];
        float want[64];
        const float d = at_run_time(k_scales[i].value);
        for (int k = 0; k < 2; k++) {
            b[k].d = k_scales[i].bits;
            for (int j = 0; j < 16; j++) /* low nibbles 0..15, high 15..0; then the reverse */
                b[k].qs[j] = (uint8_t)(k == 0 ? j | (15 - j) << 4 : (15 - j) | j << 4);
            for (int e = 0; e < 32; e++)
                want[32 * k + e] = (float)(legacy_nibble(b[k].qs, e) - 8) * d;
        }
        char what[128];
        snprintf(what, sizeof what, "every nibble in both halves, d = %s", k_scales[i].what);
        check_blocks(s, Q35_TYPE_Q4_0, b, 64, want, what);
    }
    /* d = -0.5: nibble 0 -> -8 * -0.5 = 4, nibble 15 -> 7 * -0.5 = -3.5, nibble 9 -> -0.5. */
    q35_block_q4_0 b = {.d = 0xb800};
    for (int j = 0; j < 16; j++)
        b.qs[j] = (uint8_t)(j | (15 - j) << 4);
    const spot spots[] = {{0, 4.0f}, {15, -3.5f}, {16, -3.5f}, {31, 4.0f}, {9, -0.5f}, {8, -0.0f}};
    check_spots(s, Q35_TYPE_Q4_0, &b, 32, spots, 6, "d = -0.5");
}

/* Q5_0: qh all clear, all set, and each of its 32 bits alone (bit e is element e's
 * fifth bit, qh little-endian), under every scale: x = ((q | h << 4) - 16) * d. */
static void check_q5_0_blocks(q35_suite *s)
{
    enum { NB = 34 };
    for (int i = 0; i < N_SCALES; i++) {
        q35_block_q5_0 b[NB];
        float want[NB * 32];
        const float d = at_run_time(k_scales[i].value);
        for (int k = 0; k < NB; k++) {
            const uint32_t qh = k == 0 ? 0u : k == 1 ? 0xffffffffu : 1u << (k - 2);
            b[k].d = k_scales[i].bits;
            for (int byte = 0; byte < 4; byte++)
                b[k].qh[byte] = (uint8_t)(qh >> (8 * byte));
            for (int j = 0; j < 16; j++)
                b[k].qs[j] = (uint8_t)((k & 1) ? (15 - j) | j << 4 : j | (15 - j) << 4);
            for (int e = 0; e < 32; e++) {
                const int high = b[k].qh[e / 8] >> (e % 8) & 1;
                want[32 * k + e] = (float)((legacy_nibble(b[k].qs, e) | high << 4) - 16) * d;
            }
        }
        char what[128];
        snprintf(what, sizeof what, "every level, each qh bit alone, d = %s", k_scales[i].what);
        check_blocks(s, Q35_TYPE_Q5_0, b, NB * 32, want, what);
    }
    /* d = 1, qh bit 20 only: element 20 = high nibble of qs[4] (11) + 16 -> 11; element 4
     * = low nibble 4, no fifth bit -> -12; element 0 -> -16; element 31 -> 0 - 16. */
    q35_block_q5_0 b = {.d = 0x3c00, .qh = {0, 0, 0x10, 0}};
    for (int j = 0; j < 16; j++)
        b.qs[j] = (uint8_t)(j | (15 - j) << 4);
    const spot spots[] = {{20, 11.0f}, {4, -12.0f}, {0, -16.0f}, {31, -16.0f}, {16, -1.0f}, {21, -6.0f}};
    check_spots(s, Q35_TYPE_Q5_0, &b, 32, spots, 6, "d = 1, qh bit 20");
}

/* Q4_K/Q5_K's 12 scale bytes from 8 scales and 8 mins of 6 bits, by the format's
 * definition: j < 4 in the low 6 bits of bytes j (scale) and j + 4 (min); j >= 4 with
 * its low nibbles in byte j + 4 (scale low, min high) and its top two bits in the
 * top bits of bytes j - 4 (scale) and j (min). */
static void pack_k_scales(const uint8_t sc[8], const uint8_t m[8], uint8_t out[Q35_K_SCALE_BYTES])
{
    memset(out, 0, Q35_K_SCALE_BYTES);
    for (int j = 0; j < 4; j++) {
        out[j] |= sc[j];
        out[j + 4] |= m[j];
    }
    for (int j = 4; j < 8; j++) {
        out[j + 4] = (uint8_t)((sc[j] & 15) | (m[j] & 15) << 4);
        out[j - 4] |= (uint8_t)((sc[j] >> 4) << 6);
        out[j] |= (uint8_t)((m[j] >> 4) << 6);
    }
}

/* Q4_K/Q5_K levels: element 32 s + l (sub-block s) lives in byte 32 (s / 2) + l of
 * qs, the low nibble for even s and the high one for odd s; Q5_K's fifth bit is
 * bit s of qh[l]. qh is NULL for Q4_K (levels < 16). */
static void pack_k_levels(const uint8_t L[Q35_QK_K], uint8_t qs[Q35_QK_K / 2], uint8_t *qh)
{
    memset(qs, 0, Q35_QK_K / 2);
    if (qh)
        memset(qh, 0, Q35_QK_K / 8);
    for (int e = 0; e < Q35_QK_K; e++) {
        const int sb = e / 32, l = e % 32;
        qs[32 * (sb / 2) + l] |= (uint8_t)((L[e] & 15) << (sb % 2 ? 4 : 0));
        if (qh)
            qh[l] |= (uint8_t)((L[e] >> 4) << sb);
    }
}

/* Q6_K levels (6 bits): element 128 h + 32 k + l (half h, quarter k, l < 32) has
 * its low nibble in ql[64 h + 32 (k % 2) + l] (the low half for k < 2, the high for
 * k >= 2) and its top two bits at bits 2k, 2k + 1 of qh[32 h + l]. */
static void pack_q6_k_levels(const uint8_t L[Q35_QK_K], uint8_t ql[Q35_QK_K / 2], uint8_t qh[Q35_QK_K / 4])
{
    memset(ql, 0, Q35_QK_K / 2);
    memset(qh, 0, Q35_QK_K / 4);
    for (int e = 0; e < Q35_QK_K; e++) {
        const int h = e / 128, k = e % 128 / 32, l = e % 32;
        ql[64 * h + 32 * (k % 2) + l] |= (uint8_t)((L[e] & 15) << (k < 2 ? 0 : 4));
        qh[32 * h + l] |= (uint8_t)((L[e] >> 4) << (2 * k));
    }
}

/* ggml's Q4_K/Q5_K element: d1 = d*sc; m1 = dmin*m; x = d1*q - m1, each a float op. */
static float want_k(float d, float dmin, uint8_t sc, uint8_t m, int q)
{
    const float d1 = d * (float)sc;
    const float m1 = dmin * (float)m;
    return d1 * (float)q - m1;
}

/* Sub-block scales and mins: distinct per position (a swapped position shows), all
 * 6 bits set, zero, and single bits with every top-two-bit pattern at j >= 4. */
static const struct {
    uint8_t sc[8], m[8];
} k_scale_sets[] = {
    {{63, 58, 53, 48, 43, 38, 33, 28}, {3, 10, 17, 24, 31, 38, 45, 52}},
    {{63, 63, 63, 63, 63, 63, 63, 63}, {63, 63, 63, 63, 63, 63, 63, 63}},
    {{0, 0, 0, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, 0}},
    {{1, 2, 4, 8, 16, 32, 48, 17}, {32, 16, 8, 4, 2, 1, 33, 63}},
};
#define N_SCALE_SETS ((int)(sizeof k_scale_sets / sizeof k_scale_sets[0]))

/* q35_k_scale_min against a hand-unpacked example, and against the packing of 64
 * rotations that put every 6-bit value at every scale and min position j = 0..7. */
static void check_k_scale_min(q35_suite *s)
{
    /* bytes 0-3: top bits 3,1,2,0 (scale j+4 high), low 1,2,3,4 (scale j);
     * bytes 4-7: top bits 1,2,3,0 (min j+4 high), low 5,6,7,8 (min j);
     * bytes 8-11: min j+4 low | scale j+4 low = 9|A, B|C, D|E, F|0. */
    static const uint8_t bytes[12] = {0xc1, 0x42, 0x83, 0x04, 0x45, 0x86, 0xc7, 0x08, 0x9a, 0xbc, 0xde, 0xf0};
    static const uint8_t sc_want[8] = {1, 2, 3, 4, 0x3a, 0x1c, 0x2e, 0x00};
    static const uint8_t m_want[8] = {5, 6, 7, 8, 0x19, 0x2b, 0x3d, 0x0f};
    int bad = 0;
    for (int j = 0; j < 8; j++) {
        uint8_t sc, m;
        q35_k_scale_min(j, bytes, &sc, &m);
        bad += sc != sc_want[j] || m != m_want[j];
    }
    uint8_t packed[12];
    pack_k_scales(sc_want, m_want, packed);
    const bool pack_ok = memcmp(packed, bytes, sizeof bytes) == 0;
    q35_case(s, bad == 0 && pack_ok,
             "q35_k_scale_min of a hand-unpacked example: %d of 8 positions wrong; the test's packer %s it", bad,
             pack_ok ? "reproduces" : "DOES NOT reproduce");

    int bad_at[8] = {0};
    for (int v = 0; v < 64; v++) {
        uint8_t sc[8], m[8], q[12];
        for (int j = 0; j < 8; j++) {
            sc[j] = (uint8_t)((v + 9 * j) & 63);
            m[j] = (uint8_t)((v + 23 * j + 5) & 63);
        }
        pack_k_scales(sc, m, q);
        for (int j = 0; j < 8; j++) {
            uint8_t gs, gm;
            q35_k_scale_min(j, q, &gs, &gm);
            bad_at[j] += gs != sc[j] || gm != m[j];
        }
    }
    int total = 0;
    for (int j = 0; j < 8; j++)
        total += bad_at[j];
    q35_case(s, total == 0,
             "q35_k_scale_min: every 6-bit value at every position j = 0..7 (scale and min): wrong per j "
             "%d %d %d %d %d %d %d %d",
             bad_at[0], bad_at[1], bad_at[2], bad_at[3], bad_at[4], bad_at[5], bad_at[6], bad_at[7]);
}

/* Q4_K/Q5_K: for each d of the table, blocks with every dmin of the table (negative
 * dmin turns the subtracted min into an added one; infinite ones give ggml's NaN
 * and inf) and every scale set; levels cycle so every sub-block holds every level.
 * Q5_K adds fifth-bit patterns: none, all, each sub-block's bit alone, scattered. */
static void check_k_blocks(q35_suite *s, q35_type type)
{
    const bool q5 = type == Q35_TYPE_Q5_K;
    const int n_high = q5 ? 11 : 1;
    const int nb = N_SCALES * N_SCALE_SETS * n_high;
    const size_t bb = q5 ? sizeof(q35_block_q5_K) : sizeof(q35_block_q4_K);
    uint8_t *blocks = malloc((size_t)nb * bb);
    float *want = malloc((size_t)nb * Q35_QK_K * sizeof *want);
    if (!blocks || !want) {
        q35_case(s, false, "%s blocks: out of memory", q35_type_name(type));
        free(blocks);
        free(want);
        return;
    }
    for (int i = 0; i < N_SCALES; i++) {
        const float d = at_run_time(k_scales[i].value);
        int k = 0;
        for (int im = 0; im < N_SCALES; im++) {
            const float dmin = at_run_time(k_scales[im].value);
            for (int set = 0; set < N_SCALE_SETS; set++) {
                for (int hp = 0; hp < n_high; hp++, k++) {
                    const uint8_t *sc = k_scale_sets[set].sc, *m = k_scale_sets[set].m;
                    uint8_t L[Q35_QK_K];
                    for (int e = 0; e < Q35_QK_K; e++) {
                        const int sb = e / 32, l = e % 32;
                        const int high = hp == 0 ? 0 : hp == 1 ? 1 : hp < 10 ? sb == hp - 2 : (l * 37 + sb * 11 + 5) >> 2 & 1;
                        L[e] = (uint8_t)((e + 5 * sb + k) % 16 + 16 * high);
                    }
                    uint16_t *hdr = (uint16_t *)(blocks + (size_t)k * bb); /* d, dmin lead both layouts */
                    if (q5) {
                        q35_block_q5_K *b = (q35_block_q5_K *)hdr;
                        b->d = k_scales[i].bits;
                        b->dmin = k_scales[im].bits;
                        pack_k_scales(sc, m, b->scales);
                        pack_k_levels(L, b->qs, b->qh);
                    } else {
                        q35_block_q4_K *b = (q35_block_q4_K *)hdr;
                        b->d = k_scales[i].bits;
                        b->dmin = k_scales[im].bits;
                        pack_k_scales(sc, m, b->scales);
                        pack_k_levels(L, b->qs, NULL);
                    }
                    for (int e = 0; e < Q35_QK_K; e++)
                        want[(size_t)k * Q35_QK_K + e] = want_k(d, dmin, sc[e / 32], m[e / 32], L[e]);
                }
            }
        }
        char what[160];
        snprintf(what, sizeof what, "d = %s: %d blocks (every dmin, %d scale sets%s)", k_scales[i].what, nb,
                 N_SCALE_SETS, q5 ? ", 11 fifth-bit patterns" : "");
        check_blocks(s, type, blocks, (int64_t)nb * Q35_QK_K, want, what);
    }
    free(blocks);
    free(want);

    /* Worked example: d = 1, dmin = 0.5, the scales of check_k_scale_min
     * (sc 1,2,3,4,58,28,46,0; m 5,6,7,8,25,43,61,15), qs all 0xf0: even sub-blocks
     * at level 0, odd at 15. Element 0: 0 - 0.5*5 = -2.5; 32: 2*15 - 3 = 27;
     * 128: -12.5; 160: 28*15 - 21.5 = 398.5; 192: -30.5; 224: 0*15 - 7.5 = -7.5.
     * Q5_K adds qh[0] bit 0 (element 0: 1*16 - 2.5 = 13.5) and qh[3] bit 5
     * (element 163: 28*31 - 21.5 = 846.5). */
    static const uint8_t scales[12] = {0xc1, 0x42, 0x83, 0x04, 0x45, 0x86, 0xc7, 0x08, 0x9a, 0xbc, 0xde, 0xf0};
    if (q5) {
        q35_block_q5_K b = {.d = 0x3c00, .dmin = 0x3800};
        memcpy(b.scales, scales, sizeof scales);
        memset(b.qs, 0xf0, sizeof b.qs);
        b.qh[0] = 0x01;
        b.qh[3] = 0x20;
        const spot spots[] = {{0, 13.5f}, {1, -2.5f}, {32, 27.0f}, {128, -12.5f}, {160, 398.5f},
                              {163, 846.5f}, {192, -30.5f}, {224, -7.5f}};
        check_spots(s, type, &b, Q35_QK_K, spots, 8, "d = 1, dmin = 0.5");
    } else {
        q35_block_q4_K b = {.d = 0x3c00, .dmin = 0x3800};
        memcpy(b.scales, scales, sizeof scales);
        memset(b.qs, 0xf0, sizeof b.qs);
        const spot spots[] = {{0, -2.5f}, {32, 27.0f}, {128, -12.5f}, {160, 398.5f}, {192, -30.5f}, {224, -7.5f}};
        check_spots(s, type, &b, Q35_QK_K, spots, 6, "d = 1, dmin = 0.5");
    }
}

/* Q6_K: for each d, 16 blocks whose scales run through all 256 int8 values and 16
 * more with another level order; levels shift per block so every 6-bit level sits at
 * every ql nibble / qh bit-pair position: x = d * sc * (q - 32), left to right. */
static void check_q6_k_blocks(q35_suite *s)
{
    enum { NB = 32 };
    q35_block_q6_K *b = malloc(NB * sizeof *b);
    float *want = malloc(NB * Q35_QK_K * sizeof *want);
    if (!b || !want) {
        q35_case(s, false, "q6_K blocks: out of memory");
        free(b);
        free(want);
        return;
    }
    for (int i = 0; i < N_SCALES; i++) {
        const float d = at_run_time(k_scales[i].value);
        for (int k = 0; k < NB; k++) {
            uint8_t L[Q35_QK_K];
            for (int e = 0; e < Q35_QK_K; e++)
                L[e] = (uint8_t)(k < 16 ? (e + 3 * k) % 64 : 63 - (7 * e + k) % 64);
            for (int sb = 0; sb < 16; sb++)
                b[k].scales[sb] = (int8_t)(16 * (k % 16) + sb - 128);
            b[k].d = k_scales[i].bits;
            pack_q6_k_levels(L, b[k].ql, b[k].qh);
            for (int e = 0; e < Q35_QK_K; e++)
                want[k * Q35_QK_K + e] = d * (float)b[k].scales[e / 16] * (float)(L[e] - 32);
        }
        char what[128];
        snprintf(what, sizeof what, "every level at every position, all int8 scales, d = %s", k_scales[i].what);
        check_blocks(s, Q35_TYPE_Q6_K, b, NB * Q35_QK_K, want, what);
    }
    free(b);
    free(want);

    /* d = 0.5, scales[s] = s - 8, all levels 32 (value 0) but: element 0 level 0
     * (0.5*-8*-32 = 128), element 100 (scale 6: -2) level 63 (0.5*-2*31 = -31),
     * element 200 (scale 12: 4) level 33 (0.5*4*1 = 2), element 170 (scale 10: 2)
     * level 17 (0.5*2*-15 = -15). A zero level under a negative scale is -0. */
    q35_block_q6_K bw = {.d = 0x3800};
    uint8_t L[Q35_QK_K];
    memset(L, 32, sizeof L);
    L[0] = 0;
    L[100] = 63;
    L[200] = 33;
    L[170] = 17;
    for (int sb = 0; sb < 16; sb++)
        bw.scales[sb] = (int8_t)(sb - 8);
    pack_q6_k_levels(L, bw.ql, bw.qh);
    const spot spots[] = {{0, 128.0f}, {100, -31.0f}, {200, 2.0f}, {170, -15.0f}, {1, -0.0f}, {255, 0.0f}};
    check_spots(s, Q35_TYPE_Q6_K, &bw, Q35_QK_K, spots, 6, "d = 0.5");
}

static void check_hand_blocks(q35_suite *s)
{
    printf("-- 2. hand-built blocks, compared bitwise with ggml's arithmetic\n");
    check_scale_table(s);
    check_q8_0_blocks(s);
    check_q4_0_blocks(s);
    check_q5_0_blocks(s);
    check_k_scale_min(s);
    check_k_blocks(s, Q35_TYPE_Q4_K);
    check_k_blocks(s, Q35_TYPE_Q5_K);
    check_q6_k_blocks(s);
}

/* ---- 3. round trips ------------------------------------------------------------- */

/* What the stored block says about one element: the spacing of the levels of its
 * (sub-)block, the values of their lowest and highest levels, how far outside that
 * span this project's quantizer may leave data, and the largest spacing its choice
 * of scales allows for this data. Each element is checked for
 *   nearest level:  |y - x| <= max(step / 2, dist(x, [lo, hi])) + slack
 *   coverage:       dist(x, [lo, hi]) <= cover + slack
 *   tight scales:   step <= step_max + slack
 * so |y - x| <= max(step / 2, cover) + 2 slack with a step no coarser than the
 * format needs. The quantizer picks its scales so the span covers the data, except
 * for what the f16 rounding of a super-scale takes away (at most
 * `levels * half-ulp(d)`, significant only when d is an f16 subnormal or zero) and,
 * for Q4_0/Q5_0, the side opposite the element of largest magnitude, whose top
 * level is one step short (|d| + the f16 rounding). */
typedef struct grid {
    double step;     /* distance between adjacent levels */
    double lo, hi;   /* the values of the lowest and the highest level */
    double cover;    /* the most an element may lie outside [lo, hi] */
    double step_max; /* the coarsest step the quantizer's scale choice allows */
} grid;

/* The grids of one block's elements; x is the block's data. */
typedef void grid_fn(const void *q, int64_t block, const float *x, grid *g);

static void grid_f32(const void *q, int64_t block, const float *x, grid *g)
{
    (void)q;
    (void)block;
    (void)x;
    *g = (grid){0.0, -INFINITY, INFINITY, 0.0, 0.0}; /* exact */
}

static void grid_f16(const void *q, int64_t block, const float *x, grid *g)
{
    (void)q;
    (void)block;
    const double ulp = 2.0 * f16_half_ulp(x[0]);
    *g = (grid){ulp, -65504.0, 65504.0, 0.0, ulp};
}

static void grid_bf16(const void *q, int64_t block, const float *x, grid *g)
{
    (void)q;
    (void)block;
    const double ulp = 2.0 * bf16_half_ulp(x[0]);
    *g = (grid){ulp, -FLT_MAX, FLT_MAX, 0.0, ulp};
}

static void span(grid *g, double a, double b)
{
    g->lo = fmin(a, b);
    g->hi = fmax(a, b);
}

/* The largest |x| of n elements. */
static double abs_max(const float *x, int n)
{
    double amax = 0.0;
    for (int j = 0; j < n; j++)
        amax = fmax(amax, fabs((double)x[j]));
    return amax;
}

/* The largest value f16(v) may take: v plus its rounding. */
static double f16_ceil(double v)
{
    return v + f16_half_ulp(v);
}

/* Q8_0: levels -128..127 of d = f16(amax / 127). */
static void grid_q8_0(const void *q, int64_t block, const float *x, grid *g)
{
    const double d = q35_f16_to_f32(((const q35_block_q8_0 *)q)[block].d);
    const double step_max = f16_ceil(abs_max(x, Q35_QK32) / 127.0);
    for (int j = 0; j < Q35_QK32; j++) {
        g[j].step = fabs(d);
        span(&g[j], -128.0 * d, 127.0 * d);
        g[j].cover = 127.0 * f16_half_ulp(d);
        g[j].step_max = step_max;
    }
}

/* Q4_0/Q5_0: levels -half..half-1 of d = f16(max / -half), max the element of largest
 * magnitude: that element's side reaches `half` steps, the other side half - 1. */
static void grid_legacy(const float *x, double d, int half, grid *g)
{
    const double e = f16_half_ulp(d);
    const double step_max = f16_ceil(abs_max(x, Q35_QK32) / half);
    for (int j = 0; j < Q35_QK32; j++) {
        g[j].step = fabs(d);
        span(&g[j], -half * d, (half - 1) * d);
        const bool max_side = x[j] * -d > 0.0;
        g[j].cover = (max_side ? 0.0 : fabs(d)) + half * e;
        g[j].step_max = step_max;
    }
}

static void grid_q4_0(const void *q, int64_t block, const float *x, grid *g)
{
    grid_legacy(x, q35_f16_to_f32(((const q35_block_q4_0 *)q)[block].d), 8, g);
}

static void grid_q5_0(const void *q, int64_t block, const float *x, grid *g)
{
    grid_legacy(x, q35_f16_to_f32(((const q35_block_q5_0 *)q)[block].d), 16, g);
}

/* Q4_K/Q5_K sub-block s: levels d1*L - m1, L = 0..nmax, d1 = d*sc, m1 = dmin*m.
 * Below: the min rounds to within dmin/2 of the sub-block's negative part (plus
 * what the f16 rounding of dmin takes when m is clamped at 63 or dmin is 0). Above:
 * the scale is rounded up, so nothing is left out unless sc is clamped at 63 or d is
 * 0, when the rounding of d can leave nmax * 63 * half-ulp(d). Tightness: with
 * lo_s = min(0, min x), hi_s = max(0, max x) and dmin <= f16_ceil(max(-lo_s) / 63),
 * the offset is at most -lo_s + dmin/2, the step needed need_s <= (hi_s - lo_s +
 * dmin/2) / nmax, d <= f16_ceil(max need_s / 63), and sc = ceil(need_s / d) gives a
 * step below need_s + d. */
static void grid_k(uint16_t dbits, uint16_t dminbits, const uint8_t *scales, int nmax, const float *x, grid *g)
{
    const float d = q35_f16_to_f32(dbits), dmin = q35_f16_to_f32(dminbits);
    double lo[8], hi[8], max_min = 0.0, need[8], max_need = 0.0;
    for (int sb = 0; sb < 8; sb++) {
        lo[sb] = hi[sb] = 0.0;
        for (int l = 0; l < 32; l++) {
            lo[sb] = fmin(lo[sb], x[32 * sb + l]);
            hi[sb] = fmax(hi[sb], x[32 * sb + l]);
        }
        max_min = fmax(max_min, -lo[sb]);
    }
    const double dmin_max = f16_ceil(max_min / 63.0);
    for (int sb = 0; sb < 8; sb++) {
        need[sb] = (hi[sb] - lo[sb] + dmin_max / 2.0) / nmax;
        max_need = fmax(max_need, need[sb]);
    }
    const double d_max = f16_ceil(max_need / 63.0);
    for (int sb = 0; sb < 8; sb++) {
        uint8_t sc, m;
        q35_k_scale_min(sb, scales, &sc, &m);
        const float d1 = d * sc, m1 = dmin * m;
        const double below = dmin / 2.0 + (m == 63 || dmin == 0.0f ? 63.0 * f16_half_ulp(dmin) : 0.0);
        const double above = sc == 63 || d == 0.0f ? nmax * 63.0 * f16_half_ulp(d) : 0.0;
        for (int l = 0; l < 32; l++) {
            grid *gl = &g[32 * sb + l];
            gl->step = fabs((double)d1);
            span(gl, -(double)m1, (double)d1 * nmax - m1);
            gl->cover = x[32 * sb + l] < gl->lo ? below : above;
            gl->step_max = need[sb] + d_max;
        }
    }
}

static void grid_q4_k(const void *q, int64_t block, const float *x, grid *g)
{
    const q35_block_q4_K *b = (const q35_block_q4_K *)q + block;
    grid_k(b->d, b->dmin, b->scales, 15, x, g);
}

static void grid_q5_k(const void *q, int64_t block, const float *x, grid *g)
{
    const q35_block_q5_K *b = (const q35_block_q5_K *)q + block;
    grid_k(b->d, b->dmin, b->scales, 31, x, g);
}

/* Q6_K sub-block s of 16: levels d*sc*(L - 32); the quantizer uses -31..31 steps
 * with the scale rounded up, clamped at 127 (then the rounding of d can leave
 * 31 * 127 * half-ulp(d)). Tightness: need_s = amax_s / 31, d <= f16_ceil(max
 * need_s / 127), and sc = ceil(need_s / d) gives a step below need_s + d. */
static void grid_q6_k(const void *q, int64_t block, const float *x, grid *g)
{
    const q35_block_q6_K *b = (const q35_block_q6_K *)q + block;
    const float d = q35_f16_to_f32(b->d);
    double need[16], max_need = 0.0;
    for (int sb = 0; sb < 16; sb++) {
        need[sb] = abs_max(x + 16 * sb, 16) / 31.0;
        max_need = fmax(max_need, need[sb]);
    }
    const double d_max = f16_ceil(max_need / 127.0);
    for (int sb = 0; sb < 16; sb++) {
        const float dsc = d * b->scales[sb];
        const double cover = b->scales[sb] == 127 || d == 0.0f ? 31.0 * 127.0 * f16_half_ulp(d) : 0.0;
        for (int l = 0; l < 16; l++) {
            grid *gl = &g[16 * sb + l];
            gl->step = fabs((double)dsc);
            span(gl, -32.0 * dsc, 31.0 * dsc);
            gl->cover = cover;
            gl->step_max = need[sb] + d_max;
        }
    }
}

typedef struct codec {
    q35_type type;
    grid_fn *grid;
    double slack;     /* times the block's max |x|: float rounding in quantize/dequantize */
    double rms_limit; /* RMS(error) / RMS(x) on N(0,1) data, measured with margin */
} codec;

/* Rounding slack: (x + off) * (1 / step) and the level's product are float ops, a
 * few ulps relative to the block's magnitude; 2^-18 of max |x| is well above them
 * and far below every step (at least max|x| / 127 / 63). */
#define QSLACK 0x1p-18

/* RMS limits: 8-10% above the largest of 300 seeds' measurements (the range in
 * brackets) on 16384 N(0,1)-like elements; a scale 8/7 too coarse, or a rounding that is not to
 * the nearest level, lands above them. */
static const codec k_codecs[] = {
    {Q35_TYPE_F32, grid_f32, 0.0, 0.0},      /* exact */
    {Q35_TYPE_F16, grid_f16, 0.0, 2.3e-4},   /* [2.04e-4, 2.12e-4] */
    {Q35_TYPE_BF16, grid_bf16, 0.0, 1.85e-3}, /* [1.64e-3, 1.70e-3] */
    {Q35_TYPE_Q8_0, grid_q8_0, QSLACK, 5.6e-3}, /* [4.97e-3, 5.19e-3] */
    {Q35_TYPE_Q4_0, grid_q4_0, QSLACK, 9.0e-2}, /* [8.05e-2, 8.31e-2] */
    {Q35_TYPE_Q5_0, grid_q5_0, QSLACK, 4.5e-2}, /* [3.96e-2, 4.14e-2] */
    {Q35_TYPE_Q4_K, grid_q4_k, QSLACK, 8.5e-2}, /* [7.54e-2, 7.80e-2] */
    {Q35_TYPE_Q5_K, grid_q5_k, QSLACK, 4.2e-2}, /* [3.69e-2, 3.82e-2] */
    {Q35_TYPE_Q6_K, grid_q6_k, QSLACK, 2.1e-2}, /* [1.85e-2, 1.92e-2] */
};
#define N_CODECS ((int)(sizeof k_codecs / sizeof k_codecs[0]))

/* Round-trip data: n elements, a whole number of 256-blocks (so of every type's
 * blocks), each 256-block named for the messages. */
typedef struct dataset {
    const char *what;
    int64_t n;
    float *x;
    const char *const *block_names; /* per 256-block, or NULL */
} dataset;

/* Adversarial 256-blocks, one each. */
static const char *const k_adversarial[] = {
    "all zero", "all equal +0.7", "all equal -3", "one outlier (+60 among N(0,1))", "all negative",
    "all positive", "tiny (1e-6 N(0,1))", "alternating +1 -1", "large (1e4 N(0,1), inside f16 range)", "one negative outlier",
};
#define N_ADVERSARIAL ((int)(sizeof k_adversarial / sizeof k_adversarial[0]))

static void fill_adversarial(q35_rng *rng, float *x)
{
    for (int k = 0; k < N_ADVERSARIAL; k++) {
        float *b = x + k * Q35_QK_K;
        for (int e = 0; e < Q35_QK_K; e++) {
            const float g = q35_rng_normal_fast(rng);
            switch (k) {
            case 0: b[e] = 0.0f; break;
            case 1: b[e] = 0.7f; break;
            case 2: b[e] = -3.0f; break;
            case 3: b[e] = e == 77 ? 60.0f : g; break;
            case 4: b[e] = -fabsf(g) - 0.01f; break;
            case 5: b[e] = fabsf(g) + 0.01f; break;
            case 6: b[e] = 1e-6f * g; break;
            case 7: b[e] = e % 2 ? -1.0f : 1.0f; break;
            case 8: b[e] = 1e4f * g; break; /* |g| <= 3.47: below 65504 */
            default: b[e] = e == 200 ? -45.0f : g; break;
            }
        }
    }
}

/* Quantizes ds into two buffers filled with different bytes (both must come out
 * equal over q35_row_bytes, and untouched after it), dequantizes into a poisoned
 * buffer (untouched after n, no NaN left inside), checks each element's bound and
 * returns RMS(err)/RMS(x). One case. */
static double check_roundtrip(q35_suite *s, const codec *c, const dataset *ds)
{
    const q35_type_info *ti = q35_type_get(c->type);
    const size_t bytes = q35_row_bytes(c->type, ds->n);
    uint8_t *qa = malloc(bytes + SENTINEL_BYTES), *qb = malloc(bytes + SENTINEL_BYTES);
    float *y = malloc((size_t)(ds->n + SENTINEL_FLOATS) * sizeof *y);
    grid *g = malloc((size_t)ti->block_elems * sizeof *g);
    if (!qa || !qb || !y || !g || bytes == 0) {
        q35_case(s, false, "%s on %s: out of memory or no row bytes", ti->name, ds->what);
        free(qa);
        free(qb);
        free(y);
        free(g);
        return INFINITY;
    }
    memset(qa, 0x5a, bytes + SENTINEL_BYTES);
    memset(qb, 0xa5, bytes + SENTINEL_BYTES);
    q35_quantize(c->type, ds->x, qa, ds->n);
    q35_quantize(c->type, ds->x, qb, ds->n);
    bool tail_ok = true;
    for (size_t i = bytes; i < bytes + SENTINEL_BYTES; i++)
        tail_ok = tail_ok && qa[i] == 0x5a && qb[i] == 0xa5;
    const bool all_written = memcmp(qa, qb, bytes) == 0;

    float poison[SENTINEL_FLOATS];
    q35_poison_f32(poison, SENTINEL_FLOATS);
    q35_poison_f32(y, ds->n + SENTINEL_FLOATS);
    q35_dequantize(c->type, qa, y, ds->n);
    const bool ytail_ok = memcmp(y + ds->n, poison, sizeof poison) == 0;

    int64_t nonfinite = 0, near_bad = 0, cover_bad = 0, loose = 0, worst_at = -1;
    double err2 = 0.0, x2 = 0.0, worst = 0.0; /* worst |err| / (max(step / 2, cover) + 2 slack) */
    const int64_t be = ti->block_elems;
    for (int64_t bi = 0; bi < ds->n / be; bi++) {
        const float *xb = ds->x + bi * be;
        const float *yb = y + bi * be;
        c->grid(qa, bi, xb, g);
        const double slack = c->slack * abs_max(xb, (int)be);
        for (int64_t j = 0; j < be; j++) {
            if (!isfinite(yb[j])) {
                nonfinite++;
                continue;
            }
            const double x = xb[j], err = fabs((double)yb[j] - x);
            const double dist = x < g[j].lo ? g[j].lo - x : x > g[j].hi ? x - g[j].hi : 0.0;
            near_bad += !(err <= fmax(g[j].step / 2.0, dist) + slack);
            cover_bad += !(dist <= g[j].cover + slack);
            loose += !(g[j].step <= g[j].step_max + slack);
            const double bound = fmax(g[j].step / 2.0, g[j].cover) + 2.0 * slack;
            const double ratio = bound > 0.0 ? err / bound : err > 0.0 ? INFINITY : 0.0;
            if (ratio > worst) {
                worst = ratio;
                worst_at = bi * be + j;
            }
            err2 += err * err;
            x2 += x * x;
        }
    }
    const bool f32_exact = c->type != Q35_TYPE_F32 || memcmp(y, ds->x, (size_t)ds->n * sizeof *y) == 0;
    const bool ok = tail_ok && all_written && ytail_ok && nonfinite == 0 && near_bad == 0 && cover_bad == 0 &&
                    loose == 0 && f32_exact;
    char where[128] = "";
    if (worst_at >= 0)
        snprintf(where, sizeof where, " (at [%" PRId64 "]%s%s%s)", worst_at, ds->block_names ? " in '" : "",
                 ds->block_names ? ds->block_names[worst_at / Q35_QK_K] : "", ds->block_names ? "'" : "");
    q35_case(s, ok,
             "%-4s %-30s %5" PRId64 " el, %5zu bytes: writes %s%s, %" PRId64 " floats%s%s; off the nearest level "
             "%" PRId64 ", outside the grid %" PRId64 ", step too coarse %" PRId64 "; max |err| %.3f of its bound%s",
             ti->name, ds->what, ds->n, bytes, all_written ? "all" : "NOT ALL", tail_ok ? "" : " AND PAST THEM", ds->n,
             ytail_ok ? "" : " AND PAST THEM", nonfinite ? " WITH NaN/inf" : "", near_bad, cover_bad, loose, worst,
             where);
    free(qa);
    free(qb);
    free(y);
    free(g);
    return x2 > 0.0 ? sqrt(err2 / x2) : 0.0;
}

/* Zero-length calls write nothing. */
static void check_zero_length(q35_suite *s)
{
    int bad = 0;
    for (int i = 0; i < N_CODECS; i++) {
        uint8_t q[SENTINEL_BYTES];
        float y[SENTINEL_FLOATS], poison[SENTINEL_FLOATS];
        const float x[1] = {1.0f};
        memset(q, 0x5a, sizeof q);
        q35_poison_f32(y, SENTINEL_FLOATS);
        q35_poison_f32(poison, SENTINEL_FLOATS);
        q35_quantize(k_codecs[i].type, x, q, 0);
        q35_dequantize(k_codecs[i].type, q, y, 0);
        for (int j = 0; j < SENTINEL_BYTES; j++)
            bad += q[j] != 0x5a;
        bad += memcmp(y, poison, sizeof y) != 0;
    }
    q35_case(s, bad == 0, "n = 0: quantize and dequantize of all %d types write nothing (%d bytes/buffers touched)",
             N_CODECS, bad);
}

static void check_roundtrips(q35_suite *s, q35_rng *rng)
{
    printf("-- 3. quantize -> dequantize round trips\n");
    enum { N_GAUSS = 64 * Q35_QK_K, N_WIDE = 64 * Q35_QK_K };
    float *gauss = malloc(N_GAUSS * sizeof *gauss), *wide = malloc(N_WIDE * sizeof *wide);
    float *adv = malloc(N_ADVERSARIAL * Q35_QK_K * sizeof *adv);
    if (!gauss || !wide || !adv) {
        q35_case(s, false, "round-trip data: out of memory");
        free(gauss);
        free(wide);
        free(adv);
        return;
    }
    for (int i = 0; i < N_GAUSS; i++)
        gauss[i] = q35_rng_normal_fast(rng);
    for (int b = 0; b < N_WIDE / Q35_QK_K; b++) { /* each 256-block scaled by 10^U(-6, 3.5) */
        const float scale = (float)pow(10.0, q35_rng_range(rng, -6.0, 3.5));
        for (int e = 0; e < Q35_QK_K; e++)
            wide[b * Q35_QK_K + e] = scale * q35_rng_normal_fast(rng);
    }
    fill_adversarial(rng, adv);
    const dataset sets[] = {
        {"N(0,1)", N_GAUSS, gauss, NULL},
        {"N(0,1) x 10^U(-6,3.5) per 256", N_WIDE, wide, NULL},
        {"adversarial 256-blocks", N_ADVERSARIAL * Q35_QK_K, adv, k_adversarial},
    };
    double rms[N_CODECS];
    for (int i = 0; i < N_CODECS; i++) {
        for (size_t k = 0; k < sizeof sets / sizeof sets[0]; k++) {
            const double r = check_roundtrip(s, &k_codecs[i], &sets[k]);
            if (k == 0)
                rms[i] = r;
        }
    }
    for (int i = 0; i < N_CODECS; i++)
        q35_case(s, rms[i] <= k_codecs[i].rms_limit, "%-4s RMS(err)/RMS(x) on N(0,1): measured %.4e, limit %.2e",
                 q35_type_name(k_codecs[i].type), rms[i], k_codecs[i].rms_limit);
    check_zero_length(s);
    free(gauss);
    free(wide);
    free(adv);
}

/* ---- 4. the quantized golden files -------------------------------------------- */

#define GOLDEN_QUANT "data/golden/tiny-r2/quant"

/* One line of dequant-<variant>.json. */
typedef struct golden_hash {
    char name[257];  /* tensor name (Q35_GGUF_MAX_NAME bytes at most) */
    char type[16];   /* ggml's type name */
    uint64_t fnv;    /* FNV-1a 64 of the dequantized float32 bytes */
    bool matched;    /* a tensor of the file carries this name */
} golden_hash;

/* FNV-1a 64 over the little-endian bytes of n floats, in order. */
static uint64_t fnv1a64_f32(const float *x, int64_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int64_t i = 0; i < n; i++) {
        const uint32_t u = bits_of(x[i]);
        for (int k = 0; k < 4; k++) {
            h ^= (u >> (8 * k)) & 0xffu;
            h *= 0x100000001b3ull;
        }
    }
    return h;
}

/* Reads the lines `"name": {"type": "q4_K", "fnv1a64_f32": "09f5f77ebc270e42"},`;
 * a line naming fnv1a64_f32 that does not parse counts as malformed. NULL when the
 * file cannot be read. */
static golden_hash *read_hashes(const char *path, int *count, int *malformed)
{
    size_t size = 0;
    char *text = q35_read_file(path, &size);
    *count = *malformed = 0;
    if (!text)
        return NULL;
    text[size] = '\0'; /* q35_read_file leaves room for it */
    int lines = 1;
    for (const char *p = text; *p; p++)
        lines += *p == '\n';
    golden_hash *h = calloc((size_t)lines, sizeof *h);
    for (char *line = text; h && *line;) {
        char *end = strchr(line, '\n');
        if (end)
            *end = '\0';
        if (strstr(line, "fnv1a64_f32")) {
            golden_hash *e = &h[*count];
            char hex[17] = "";
            int used = 0;
            if (sscanf(line, " \"%256[^\"]\": {\"type\": \"%15[^\"]\", \"fnv1a64_f32\": \"%16[0-9a-f]\"}%n", e->name,
                       e->type, hex, &used) == 3 &&
                used > 0 && strlen(hex) == 16) {
                e->fnv = strtoull(hex, NULL, 16);
                (*count)++;
            } else {
                (*malformed)++;
            }
        }
        line = end ? end + 1 : line + strlen(line);
    }
    free(text);
    return h;
}

/* Every tensor of model-<variant>.gguf dequantized and hashed against its line of
 * dequant-<variant>.json (type name too); every line must name a tensor of the file.
 * One FAIL case per mismatching tensor, one case for the file. */
static void check_golden_file(q35_suite *s, const char *variant)
{
    char rel[256], path[1024];
    snprintf(rel, sizeof rel, GOLDEN_QUANT "/dequant-%s.json", variant);
    int n_hashes = 0, malformed = 0;
    golden_hash *hashes = read_hashes(q35_repo_path(rel, path, sizeof path), &n_hashes, &malformed);
    snprintf(rel, sizeof rel, GOLDEN_QUANT "/model-%s.gguf", variant);
    q35_error err = {{0}};
    q35_gguf *g = NULL;
    if (!hashes || q35_gguf_open(&g, q35_repo_path(rel, path, sizeof path), &err)) {
        q35_case(s, false, "model-%s.gguf and dequant-%s.json: %s", variant, variant,
                 hashes ? err.msg : "cannot read the json");
        free(hashes);
        return;
    }
    int matched = 0, bad = 0;
    int type_count[Q35_TYPE_COUNT] = {0};
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        const q35_gguf_tensor *t = &g->tensors[i];
        golden_hash *h = NULL;
        for (int k = 0; k < n_hashes && !h; k++)
            h = strcmp(hashes[k].name, t->name) == 0 ? &hashes[k] : NULL;
        if (!h) {
            q35_case(s, false, "model-%s.gguf %s: not listed in dequant-%s.json", variant, t->name, variant);
            bad++;
            continue;
        }
        h->matched = true;
        int64_t n = 1;
        for (int d = 0; d < Q35_GGUF_MAX_DIMS; d++)
            n *= t->ne[d];
        const bool computable = q35_type_computable(t->type);
        const bool sized = q35_row_bytes(t->type, n) == t->nbytes;
        float *y = computable && sized ? malloc((size_t)n * sizeof *y) : NULL;
        uint64_t got = 0;
        if (y) {
            q35_poison_f32(y, n);
            q35_dequantize((q35_type)t->type, t->data, y, n);
            got = fnv1a64_f32(y, n);
        }
        const bool type_ok = strcmp(h->type, q35_type_name(t->type)) == 0;
        if (y && type_ok && got == h->fnv) {
            matched++;
            if (t->type < Q35_TYPE_COUNT)
                type_count[t->type]++;
        } else {
            q35_case(s, false,
                     "model-%s.gguf %s: type %s (listed %s), %" PRId64 " elements%s%s, fnv1a64 %016" PRIx64
                     " (listed %016" PRIx64 ")",
                     variant, t->name, q35_type_name(t->type), h->type, n, computable ? "" : " NOT COMPUTABLE",
                     sized ? "" : " SIZE MISMATCH", got, h->fnv);
            bad++;
        }
        free(y);
    }
    for (int k = 0; k < n_hashes; k++) {
        if (!hashes[k].matched) {
            q35_case(s, false, "dequant-%s.json %s: no such tensor in the file", variant, hashes[k].name);
            bad++;
        }
    }
    char types[256] = "";
    for (int t = 0; t < Q35_TYPE_COUNT; t++) {
        if (type_count[t]) {
            const size_t used = strlen(types);
            snprintf(types + used, sizeof types - used, "%s%s x%d", used ? ", " : "", q35_type_name((uint32_t)t),
                     type_count[t]);
        }
    }
    q35_case(s, bad == 0 && malformed == 0 && (uint64_t)n_hashes == g->n_tensors,
             "model-%-7s %d/%" PRIu64 " tensors hash as ggml dequantizes them (%d listed, %d malformed lines; %s)",
             variant, matched, g->n_tensors, n_hashes, malformed, types);
    q35_gguf_close(g);
    free(hashes);
}

static void check_golden(q35_suite *s)
{
    printf("-- 4. the quantized golden files against ggml's dequantized hashes\n");
    static const char *const variants[] = {"BF16", "Q8_0", "Q6_K", "Q4_K_M", "Q4_0"};
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
        check_golden_file(s, variants[i]);
}

/* ---- 5. the type table ----------------------------------------------------------- */

/* The 9 computable types: ggml's id, name and block (ggml_type_traits), and the
 * size of this project's block struct. */
static const struct {
    uint32_t id;
    const char *name;
    int block_elems, block_bytes;
    size_t struct_bytes;
} k_computable[] = {
    {0, "f32", 1, 4, sizeof(float)},
    {1, "f16", 1, 2, sizeof(uint16_t)},
    {30, "bf16", 1, 2, sizeof(uint16_t)},
    {8, "q8_0", 32, 34, sizeof(q35_block_q8_0)},
    {2, "q4_0", 32, 18, sizeof(q35_block_q4_0)},
    {6, "q5_0", 32, 22, sizeof(q35_block_q5_0)},
    {12, "q4_K", 256, 144, sizeof(q35_block_q4_K)},
    {13, "q5_K", 256, 176, sizeof(q35_block_q5_K)},
    {14, "q6_K", 256, 210, sizeof(q35_block_q6_K)},
};

static void check_type_table(q35_suite *s)
{
    printf("-- 5. the type table\n");
    for (size_t i = 0; i < sizeof k_computable / sizeof k_computable[0]; i++) {
        const uint32_t id = k_computable[i].id;
        const int be = k_computable[i].block_elems, bb = k_computable[i].block_bytes;
        const q35_type_info *t = q35_type_get(id);
        char upper[16] = "";
        for (size_t c = 0; k_computable[i].name[c] && c + 1 < sizeof upper; c++)
            upper[c] = (char)(k_computable[i].name[c] >= 'a' && k_computable[i].name[c] <= 'z'
                                  ? k_computable[i].name[c] - 32 : k_computable[i].name[c]);
        q35_type parsed = Q35_TYPE_COUNT, parsed_upper = Q35_TYPE_COUNT;
        const bool parse_ok = q35_type_parse(k_computable[i].name, &parsed) == 0 && (uint32_t)parsed == id &&
                              q35_type_parse(upper, &parsed_upper) == 0 && (uint32_t)parsed_upper == id;
        const bool ok = t && strcmp(t->name, k_computable[i].name) == 0 && t->block_elems == be &&
                        t->block_bytes == bb && t->computable && q35_type_computable(id) &&
                        (size_t)bb == k_computable[i].struct_bytes &&
                        strcmp(q35_type_name(id), k_computable[i].name) == 0 && parse_ok &&
                        q35_row_bytes(id, 0) == 0 && q35_row_bytes(id, 7 * be) == (size_t)(7 * bb) &&
                        q35_row_bytes(id, 4096) == (size_t)(4096 / be * bb) &&
                        q35_row_bytes(id, -be) == 0 && (be == 1 || q35_row_bytes(id, 7 * be + 1) == 0) &&
                        (be == 1 || q35_row_bytes(id, be - 1) == 0);
        q35_case(s, ok,
                 "type %2" PRIu32 " %-4s: %3d elements / %3d bytes a block (struct %zu), computable, parses "
                 "(\"%s\", \"%s\"), row bytes of 0, 7 blocks, 4096, -1 block%s",
                 id, k_computable[i].name, be, bb, k_computable[i].struct_bytes, k_computable[i].name, upper,
                 be == 1 ? "" : ", non-multiples (0)");
    }

    /* Known to ggml but not computed here: sized, named, not computable. */
    static const struct {
        uint32_t id;
        const char *name;
        int block_elems, block_bytes;
    } known[] = {{3, "q4_1", 32, 20}, {10, "q2_K", 256, 84}, {15, "q8_K", 256, 292}, {20, "iq4_nl", 32, 18},
                 {24, "i8", 1, 1},    {28, "f64", 1, 8},     {39, "mxfp4", 32, 17}};
    int bad_known = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        const q35_type_info *t = q35_type_get(known[i].id);
        bad_known += !t || strcmp(t->name, known[i].name) != 0 || t->block_elems != known[i].block_elems ||
                     t->block_bytes != known[i].block_bytes || t->computable || q35_type_computable(known[i].id) ||
                     q35_row_bytes(known[i].id, 2 * known[i].block_elems) != (size_t)(2 * known[i].block_bytes);
    }
    q35_case(s, bad_known == 0, "7 known non-computable types (q4_1 .. mxfp4): sized and named, not computable: %d wrong",
             bad_known);

    int n_computable = 0;
    for (uint32_t id = 0; id < Q35_TYPE_COUNT; id++)
        n_computable += q35_type_computable(id);
    q35_case(s, n_computable == 9, "exactly 9 computable ids below Q35_TYPE_COUNT: %d", n_computable);

    /* Ids ggml leaves unused (4, 5: removed q4_2/q4_3; 31-33, 36-38) and ids past the table. */
    static const uint32_t unknown[] = {4, 5, 31, 32, 33, 36, 37, 38, 40, 41, 255, 0x80000000u, UINT32_MAX};
    int bad_unknown = 0;
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++)
        bad_unknown += q35_type_get(unknown[i]) != NULL || strcmp(q35_type_name(unknown[i]), "unknown") != 0 ||
                       q35_type_computable(unknown[i]) || q35_row_bytes(unknown[i], 256) != 0;
    q35_case(s, bad_unknown == 0,
             "13 unknown ids (4, 5, 31-33, 36-38, 40, 41, 255, 2^31, 2^32-1): NULL, \"unknown\", not computable, 0 "
             "row bytes: %d wrong",
             bad_unknown);

    static const char *const bad_names[] = {"q9_9", "", "q4_k_m", "f32 ", "q4", "Q4_K_M", "float"};
    int bad_parse = 0;
    for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
        q35_type out = Q35_TYPE_COUNT;
        bad_parse += q35_type_parse(bad_names[i], &out) != -1 || out != Q35_TYPE_COUNT;
    }
    q35_case(s, bad_parse == 0, "7 names that are no type (\"q9_9\", \"\", \"q4_k_m\", ...) fail to parse, output untouched: %d wrong",
             bad_parse);
}

int main(void)
{
    const uint64_t seed = q35_test_seed();
    q35_suite s;
    q35_suite_begin(&s, "quant: CPU codecs (model/half.h, model/quant*.c)", seed);
    q35_rng rng;
    q35_rng_seed(&rng, seed);
    check_half(&s, &rng);
    check_hand_blocks(&s);
    check_roundtrips(&s, &rng);
    check_golden(&s);
    check_type_table(&s);
    return q35_suite_end(&s);
}
