/* Part 3 of test_quant (quant_cases.h): quantize -> dequantize round trips, each
 * element checked against the grid its stored block defines. */
#include "quant_cases.h"

#include "core/half.h"
#include "core/quant.h"
#include "core/quant_blocks.h"

#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- 3. round trips ------------------------------------------------------------- */

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
 * for Q4_0/Q5_0/Q3_K, the side opposite the element of largest magnitude, whose top
 * level is one step short (|d| + the f16 rounding); for IQ4_NL/IQ4_XS, whose levels
 * are a table (-127 .. 113 steps), 14 steps short. With a table the step is the
 * gap between the two levels around the element. */
typedef struct grid {
    double step;     /* distance between adjacent levels (around the element) */
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

/* Asymmetric sub-blocks (Q4_K/Q5_K: 8 of 32, 6-bit scales; Q2_K: 16 of 16, 4-bit):
 * sub-block s: levels d1*L - m1, L = 0..nmax, d1 = d*sc[s], m1 = dmin*m[s], sc and
 * m 0..smax. Below: the min rounds to within dmin/2 of the sub-block's negative
 * part (plus what the f16 rounding of dmin takes when m is clamped at smax or dmin
 * is 0). Above: the scale is rounded up, so nothing is left out unless sc is
 * clamped at smax or d is 0, when the rounding of d can leave nmax * smax *
 * half-ulp(d). Tightness: with lo_s = min(0, min x), hi_s = max(0, max x) and
 * dmin <= f16_ceil(max(-lo_s) / smax), the offset is at most -lo_s + dmin/2, the
 * step needed need_s <= (hi_s - lo_s + dmin/2) / nmax, d <= f16_ceil(max need_s /
 * smax), and sc = ceil(need_s / d) gives a step below need_s + d. */
static void grid_asym(float d, float dmin, const uint8_t *sc, const uint8_t *m, int n_sub, int len, int nmax,
                      int smax, const float *x, grid *g)
{
    double lo[16], hi[16], max_min = 0.0, need[16], max_need = 0.0;
    for (int sb = 0; sb < n_sub; sb++) {
        lo[sb] = hi[sb] = 0.0;
        for (int l = 0; l < len; l++) {
            lo[sb] = fmin(lo[sb], x[len * sb + l]);
            hi[sb] = fmax(hi[sb], x[len * sb + l]);
        }
        max_min = fmax(max_min, -lo[sb]);
    }
    const double dmin_max = f16_ceil(max_min / smax);
    for (int sb = 0; sb < n_sub; sb++) {
        need[sb] = (hi[sb] - lo[sb] + dmin_max / 2.0) / nmax;
        max_need = fmax(max_need, need[sb]);
    }
    const double d_max = f16_ceil(max_need / smax);
    for (int sb = 0; sb < n_sub; sb++) {
        const float d1 = d * sc[sb], m1 = dmin * m[sb];
        const double below = dmin / 2.0 + (m[sb] == smax || dmin == 0.0f ? smax * f16_half_ulp(dmin) : 0.0);
        const double above = sc[sb] == smax || d == 0.0f ? nmax * smax * f16_half_ulp(d) : 0.0;
        for (int l = 0; l < len; l++) {
            grid *gl = &g[len * sb + l];
            gl->step = fabs((double)d1);
            span(gl, -(double)m1, (double)d1 * nmax - m1);
            gl->cover = x[len * sb + l] < gl->lo ? below : above;
            gl->step_max = need[sb] + d_max;
        }
    }
}

static void grid_k(uint16_t dbits, uint16_t dminbits, const uint8_t *scales, int nmax, const float *x, grid *g)
{
    uint8_t sc[8], m[8];
    for (int sb = 0; sb < 8; sb++)
        q35_k_scale_min(sb, scales, &sc[sb], &m[sb]);
    grid_asym(q35_f16_to_f32(dbits), q35_f16_to_f32(dminbits), sc, m, 8, 32, nmax, 63, x, g);
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

static void grid_q2_k(const void *q, int64_t block, const float *x, grid *g)
{
    const q35_block_q2_K *b = (const q35_block_q2_K *)q + block;
    uint8_t sc[16], m[16];
    for (int sb = 0; sb < 16; sb++)
        sc[sb] = b->scales[sb] & 15, m[sb] = b->scales[sb] >> 4;
    grid_asym(q35_f16_to_f32(b->d), q35_f16_to_f32(b->dmin), sc, m, 16, 16, 3, 15, x, g);
}

/* Q4_1/Q5_1: levels q * d + m, q = 0..nmax, m = f16(min x), d = f16((max - min) /
 * nmax): the span misses the data by at most the two roundings (half an ulp of m,
 * nmax half ulps of d). */
static void grid_offset(uint16_t dbits, uint16_t mbits, int nmax, const float *x, grid *g)
{
    const double d = q35_f16_to_f32(dbits), m = q35_f16_to_f32(mbits);
    double lo = x[0], hi = x[0];
    for (int j = 1; j < Q35_QK32; j++)
        lo = fmin(lo, x[j]), hi = fmax(hi, x[j]);
    const double cover = fmax(f16_half_ulp(m), f16_half_ulp(lo)) +
                         nmax * fmax(f16_half_ulp(d), f16_half_ulp((hi - lo) / nmax));
    for (int j = 0; j < Q35_QK32; j++) {
        g[j].step = fabs(d);
        span(&g[j], m, (double)(float)((float)nmax * (float)d + (float)m));
        g[j].cover = cover;
        g[j].step_max = f16_ceil((hi - lo) / nmax);
    }
}

static void grid_q4_1(const void *q, int64_t block, const float *x, grid *g)
{
    const q35_block_q4_1 *b = (const q35_block_q4_1 *)q + block;
    grid_offset(b->d, b->m, 15, x, g);
}

static void grid_q5_1(const void *q, int64_t block, const float *x, grid *g)
{
    const q35_block_q5_1 *b = (const q35_block_q5_1 *)q + block;
    grid_offset(b->d, b->m, 31, x, g);
}

/* A symmetric sub-block of n elements x with levels dl * T[i] (T ascending, from
 * T[0] < 0 to T[nt - 1] > 0; Q3_K -4..3, IQ4's table): the quantizer puts the
 * element of largest magnitude at T[0] (|dl| >= its want, up to `ulps` of it, f16
 * rounding), so the far side lacks (|T[0]| - T[nt - 1]) steps at most. Element j's
 * step is the gap of the two levels around it (the nearest is within half of it),
 * no coarser than that gap times want + d_max (the scale rounded up by at most d). */
static void grid_symmetric(double dl, const int *T, int nt, double want, double d_max, double ulps, const float *x,
                           int n, grid *g)
{
    const double amax = abs_max(x, n);
    for (int j = 0; j < n; j++) {
        span(&g[j], dl * T[0], dl * T[nt - 1]);
        const double v = dl != 0.0 ? x[j] / dl : 0.0;
        int i = 0;
        while (i < nt - 2 && v > T[i + 1])
            i++;
        const bool inside = v >= T[0] && v <= T[nt - 1];
        g[j].step = inside ? fabs(dl) * (T[i + 1] - T[i]) : 0.0;
        const bool max_side = x[j] * dl < 0.0;
        g[j].cover = (max_side ? 0.0 : fabs(dl) * (-T[0] - T[nt - 1])) + ulps * amax;
        g[j].step_max = (T[i + 1] - T[i]) * (fabs(want) + d_max);
    }
}

static const int k_q3_levels[8] = {-4, -3, -2, -1, 0, 1, 2, 3};
static const int k_iq4_levels[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

/* IQ4_NL: d = f16(max / -127): the rounding of d can leave 127 half-ulps of d. */
static void grid_iq4_nl(const void *q, int64_t block, const float *x, grid *g)
{
    const q35_block_iq4_nl *b = (const q35_block_iq4_nl *)q + block;
    const double d = q35_f16_to_f32(b->d), amax = abs_max(x, Q35_QK32);
    grid_symmetric(d, k_iq4_levels, 16, amax / 127.0, f16_ceil(amax / 127.0) - amax / 127.0, 0.0, x, Q35_QK32, g);
    for (int j = 0; j < Q35_QK32; j++)
        g[j].cover += 127.0 * f16_half_ulp(d);
}

/* Q3_K/IQ4_XS's super-scale: at least the largest want / 31, one f16 step above at most. */
static double super_max(const float *x, int n_sub, int len, int top)
{
    double w = 0.0;
    for (int sb = 0; sb < n_sub; sb++)
        w = fmax(w, abs_max(x + len * sb, len) / top);
    return w / 31.0 + 2.0 * f16_half_ulp(w / 31.0);
}

static void grid_q3_k(const void *q, int64_t block, const float *x, grid *g)
{
    const q35_block_q3_K *b = (const q35_block_q3_K *)q + block;
    const float d = q35_f16_to_f32(b->d);
    const double d_max = super_max(x, 16, 16, 4);
    for (int sb = 0; sb < 16; sb++) {
        const float dl = d * (float)(q35_q3_k_scale(sb, b->scales) - 32);
        grid_symmetric(dl, k_q3_levels, 8, abs_max(x + 16 * sb, 16) / 4.0, d_max, 0x1p-20, x + 16 * sb, 16,
                       g + 16 * sb);
    }
}

static void grid_iq4_xs(const void *q, int64_t block, const float *x, grid *g)
{
    const q35_block_iq4_xs *b = (const q35_block_iq4_xs *)q + block;
    const float d = q35_f16_to_f32(b->d);
    const double d_max = super_max(x, 8, 32, 127);
    for (int sb = 0; sb < 8; sb++) {
        const float dl = d * (float)(q35_iq4_xs_scale(sb, b->scales_l, b->scales_h) - 32);
        grid_symmetric(dl, k_iq4_levels, 16, abs_max(x + 32 * sb, 32) / 127.0, d_max, 0x1p-20, x + 32 * sb, 32,
                       g + 32 * sb);
    }
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
    {Q35_TYPE_Q4_1, grid_q4_1, QSLACK, 8.4e-2},     /* [7.47e-2, 7.70e-2] */
    {Q35_TYPE_Q5_1, grid_q5_1, QSLACK, 4.1e-2},     /* [3.59e-2, 3.74e-2] */
    {Q35_TYPE_IQ4_NL, grid_iq4_nl, QSLACK, 8.6e-2}, /* [7.69e-2, 7.90e-2] */
    {Q35_TYPE_Q2_K, grid_q2_k, QSLACK, 3.75e-1},    /* [3.34e-1, 3.44e-1] */
    {Q35_TYPE_Q3_K, grid_q3_k, QSLACK, 1.67e-1},    /* [1.49e-1, 1.54e-1] */
    {Q35_TYPE_IQ4_XS, grid_iq4_xs, QSLACK, 8.7e-2}, /* [7.79e-2, 8.00e-2] */
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

void q35_test_quant_pass(q35_type t, const float *x, int64_t n, uint8_t *qa, uint8_t *qb, float *y, bool *written,
                         bool *tail_ok, bool *ytail_ok)
{
    const size_t bytes = q35_row_bytes(t, n);
    memset(qa, 0x5a, bytes + Q35_TEST_SENTINEL_BYTES);
    memset(qb, 0xa5, bytes + Q35_TEST_SENTINEL_BYTES);
    q35_quantize(t, x, qa, n);
    q35_quantize(t, x, qb, n);
    *tail_ok = true;
    for (size_t i = bytes; i < bytes + Q35_TEST_SENTINEL_BYTES; i++)
        *tail_ok = *tail_ok && qa[i] == 0x5a && qb[i] == 0xa5;
    *written = memcmp(qa, qb, bytes) == 0;
    float poison[Q35_TEST_SENTINEL_FLOATS];
    q35_poison_f32(poison, Q35_TEST_SENTINEL_FLOATS);
    q35_poison_f32(y, n + Q35_TEST_SENTINEL_FLOATS);
    q35_dequantize(t, qa, y, n);
    *ytail_ok = memcmp(y + n, poison, sizeof poison) == 0;
}

/* Quantizes ds into two buffers filled with different bytes (both must come out
 * equal over q35_row_bytes, and untouched after it), dequantizes into a poisoned
 * buffer (untouched after n, no NaN left inside), checks each element's bound and
 * returns RMS(err)/RMS(x). One case. */
static double check_roundtrip(q35_suite *s, const codec *c, const dataset *ds)
{
    const q35_type_info *ti = q35_type_get(c->type);
    const size_t bytes = q35_row_bytes(c->type, ds->n);
    uint8_t *qa = malloc(bytes + Q35_TEST_SENTINEL_BYTES), *qb = malloc(bytes + Q35_TEST_SENTINEL_BYTES);
    float *y = malloc((size_t)(ds->n + Q35_TEST_SENTINEL_FLOATS) * sizeof *y);
    grid *g = malloc((size_t)ti->block_elems * sizeof *g);
    if (!qa || !qb || !y || !g || bytes == 0) {
        q35_case(s, false, "%s on %s: out of memory or no row bytes", ti->name, ds->what);
        free(qa);
        free(qb);
        free(y);
        free(g);
        return INFINITY;
    }
    bool all_written, tail_ok, ytail_ok;
    q35_test_quant_pass(c->type, ds->x, ds->n, qa, qb, y, &all_written, &tail_ok, &ytail_ok);

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
             "%-6s %-30s %5" PRId64 " el, %5zu bytes: writes %s%s, %" PRId64 " floats%s%s; off the nearest level "
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

/* Zero-length calls of every computable type write nothing. */
static void check_zero_length(q35_suite *s)
{
    int bad = 0, types = 0;
    for (uint32_t t = 0; t < Q35_TYPE_COUNT; t++) {
        if (!q35_type_computable(t))
            continue;
        types++;
        uint8_t q[Q35_TEST_SENTINEL_BYTES];
        float y[Q35_TEST_SENTINEL_FLOATS], poison[Q35_TEST_SENTINEL_FLOATS];
        const float x[1] = {1.0f};
        memset(q, 0x5a, sizeof q);
        q35_poison_f32(y, Q35_TEST_SENTINEL_FLOATS);
        q35_poison_f32(poison, Q35_TEST_SENTINEL_FLOATS);
        q35_quantize((q35_type)t, x, q, 0);
        q35_dequantize((q35_type)t, q, y, 0);
        for (int j = 0; j < Q35_TEST_SENTINEL_BYTES; j++)
            bad += q[j] != 0x5a;
        bad += memcmp(y, poison, sizeof y) != 0;
    }
    q35_case(s, bad == 0 && types == 22,
             "n = 0: quantize and dequantize of all %d computable types write nothing (%d bytes/buffers touched)",
             types, bad);
}

void q35_test_check_roundtrips(q35_suite *s, q35_rng *rng)
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
        q35_case(s, rms[i] <= k_codecs[i].rms_limit, "%-6s RMS(err)/RMS(x) on N(0,1): measured %.4e, limit %.2e",
                 q35_type_name(k_codecs[i].type), rms[i], k_codecs[i].rms_limit);
    check_zero_length(s);
    const float *const iq_sets[] = {gauss, wide, adv};
    const int64_t iq_lens[] = {N_GAUSS, N_WIDE, N_ADVERSARIAL * Q35_QK_K};
    const char *const iq_names[] = {sets[0].what, sets[1].what, sets[2].what};
    q35_test_check_iq_roundtrips(s, iq_sets, iq_lens, iq_names, 3);
    free(gauss);
    free(wide);
    free(adv);
}
