/* Part 3b of test_quant (quant_cases.h): quantize -> dequantize round trips of the
 * grid i-quants. A grid point has no per-element level to be nearest to, so the
 * bound is per group of 8 (the formats' unit of search; IQ3's two points of 4):
 *
 *   nearest:  sum_j (y_j - x_j)^2 <= D^2 (1 + 1e-5) + tiny, D^2 = the least squared
 *             distance from x to the grid's points under the group's stored step,
 *             signs (IQ2, IQ3) and shift (IQ1), found here by exhaustive search in
 *             double; so each element's |y_j - x_j| <= D. IQ1_S's shared shift: the
 *             sub-block's sum under it no larger than under the other (1 + 1e-5).
 *   signs:    y_j's sign is x_j's (x_j != 0), except, where the format stores 7 sign
 *             bits (IQ2_XXS, IQ2_XS, IQ3_XXS) and x has an odd count of negatives,
 *             one element of the group's least |x|.
 *   covering: the sub-block's largest |x| <= top * step (1 + 2^-20), top the grid's
 *             largest level (43, 62, 15, 1 + 1/8).
 *   tight:    step <= want + gap * d (+ 2^-20 relative), want = largest |x| / top,
 *             gap = the difference of consecutive scale multipliers (IQ2 0.25,
 *             IQ3_XXS 0.5, IQ3_S and IQ1 2: the index is the least that covers);
 *             d <= f16 above (largest want / the top multiplier), one f16 ulp at most.
 * And as for every type: the bytes written exactly (twice, over different fill,
 * equal), the floats exactly n, no NaN; RMS(err)/RMS(x) on N(0,1) under a limit
 * measured here. */
#include "quant_cases.h"

#include "core/half.h"
#include "core/quant.h"
#include "core/quant_blocks.h"
#include "core/quant_grids.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct iq_codec {
    q35_type type;
    int points, point_elems, sub_len; /* grid points, elements a point, elements a sub-block scale */
    double top, gap, mult_top;        /* largest level, scale multiplier gap, largest multiplier */
    bool parity, shift;               /* 7 stored sign bits; IQ1's shift */
    double rms_limit;                 /* RMS(err)/RMS(x) on N(0,1): measured [range], limit */
} iq_codec;

static const iq_codec k_iq[] = {
    {Q35_TYPE_IQ2_XXS, 256, 8, 32, 43.0, 0.25, 3.875, true, false, 0.395}, /* [3.54e-1, 3.58e-1] */
    {Q35_TYPE_IQ2_XS, 512, 8, 16, 43.0, 0.25, 3.875, true, false, 0.345}, /* [3.08e-1, 3.12e-1] */
    {Q35_TYPE_IQ2_S, 1024, 8, 16, 43.0, 0.25, 3.875, false, false, 0.29}, /* [2.60e-1, 2.62e-1] */
    {Q35_TYPE_IQ3_XXS, 256, 4, 32, 62.0, 0.5, 7.75, true, false, 0.21}, /* [1.87e-1, 1.90e-1] */
    {Q35_TYPE_IQ3_S, 512, 4, 32, 15.0, 2.0, 31.0, false, false, 0.152}, /* [1.36e-1, 1.37e-1] */
    {Q35_TYPE_IQ1_S, 2048, 8, 32, 1.125, 2.0, 15.0, false, true, 0.665}, /* [5.94e-1, 6.05e-1] */
    {Q35_TYPE_IQ1_M, 2048, 8, 16, 1.125, 2.0, 15.0, false, true, 0.585}, /* [5.19e-1, 5.29e-1] */
};
#define N_IQ ((int)(sizeof k_iq / sizeof k_iq[0]))

static int level_of(const iq_codec *c, int p, int j)
{
    switch (c->type) {
    case Q35_TYPE_IQ2_XXS: return (uint8_t)(q35_iq2xxs_grid[p] >> (8 * j));
    case Q35_TYPE_IQ2_XS: return (uint8_t)(q35_iq2xs_grid[p] >> (8 * j));
    case Q35_TYPE_IQ2_S: return (uint8_t)(q35_iq2s_grid[p] >> (8 * j));
    case Q35_TYPE_IQ3_XXS: return (uint8_t)(q35_iq3xxs_grid[p] >> (8 * j));
    case Q35_TYPE_IQ3_S: return (uint8_t)(q35_iq3s_grid[p] >> (8 * j));
    default: return (int8_t)(uint8_t)(q35_iq1s_grid[p] >> (8 * j));
    }
}

/* The least squared distance from the n = point_elems values x to the grid's
 * points, each read as step * (level + shift) * sign[j] (in float, as decoded). */
static double least_dist2(const iq_codec *c, const float *x, float step, float shift, const float *sign)
{
    double best = INFINITY;
    for (int p = 0; p < c->points; p++) {
        double d2 = 0.0;
        for (int j = 0; j < c->point_elems && d2 < best; j++) {
            const float y = c->shift ? step * ((float)level_of(c, p, j) + shift) : step * (float)level_of(c, p, j) * sign[j];
            d2 += ((double)y - x[j]) * ((double)y - x[j]);
        }
        best = d2 < best ? d2 : best;
    }
    return best;
}

typedef struct tally {
    int64_t far, signs, cover, loose, shift;
} tally;

/* The checks of one block (bytes b, data x, decoded y) into t. */
static void check_block(const iq_codec *c, const uint8_t *b, const float *x, const float *y, tally *t)
{
    const uint16_t dbits = c->type == Q35_TYPE_IQ1_M ? q35_iq1_m_d(b + 48) : (uint16_t)(b[0] | b[1] << 8);
    const float d = q35_f16_to_f32(dbits);
    double wmax = 0.0;
    for (int s = 0; s < Q35_QK_K / c->sub_len; s++) {
        double amax = 0.0;
        for (int j = 0; j < c->sub_len; j++)
            amax = fmax(amax, fabs(x[c->sub_len * s + j]));
        const double want = amax / c->top;
        wmax = fmax(wmax, want);
        const q35_test_iq_elem r = q35_test_iq_element(c->type, b, c->sub_len * s, d);
        t->cover += !(amax <= c->top * r.step * (1.0 + 0x1p-20) + 1e-30);
        t->loose += !(r.step <= (want + c->gap * d) * (1.0 + 0x1p-20));
    }
    const double dmax = wmax / c->mult_top;
    t->loose += !(d <= dmax + 2.0 * (dmax < 0x1p-14 ? 0x1p-25 : ldexp(1.0, ilogb(dmax) - 11)) + 1e-30);
    for (int g = 0; g < Q35_QK_K / 8; g++) {
        const float *xg = x + 8 * g, *yg = y + 8 * g;
        float sign[8];
        q35_test_iq_elem r[8];
        int flips = 0, negatives = 0, least = 0;
        for (int j = 0; j < 8; j++) {
            r[j] = q35_test_iq_element(c->type, b, 8 * g + j, d);
            sign[j] = r[j].neg ? -1.0f : 1.0f;
            negatives += xg[j] < 0.0f;
            least = fabsf(xg[j]) < fabsf(xg[least]) ? j : least;
        }
        if (!c->shift && r[0].step > 0.0f) {
            for (int j = 0; j < 8; j++) {
                if (xg[j] != 0.0f && (sign[j] < 0.0f) != (xg[j] < 0.0f)) {
                    flips++;
                    t->signs += !(c->parity && negatives % 2 == 1 && fabsf(xg[j]) == fabsf(xg[least]));
                }
            }
            t->signs += flips > 1;
        }
        for (int k = 0; k < 8; k += c->point_elems) {
            double got = 0.0;
            for (int j = k; j < k + c->point_elems; j++)
                got += ((double)yg[j] - xg[j]) * ((double)yg[j] - xg[j]);
            const double least_d2 = least_dist2(c, xg + k, r[k].step, r[k].shift, sign + k);
            t->far += !(got <= least_d2 * (1.0 + 1e-5) + 1e-30);
        }
    }
    if (c->type == Q35_TYPE_IQ1_S) { /* the shared shift: the sub-block's sum no larger under the other */
        for (int s = 0; s < 8; s++) {
            const q35_test_iq_elem r = q35_test_iq_element(c->type, b, 32 * s, d);
            double got = 0.0, other = 0.0;
            for (int g = 0; g < 4; g++) {
                const float *xg = x + 32 * s + 8 * g;
                for (int j = 0; j < 8; j++)
                    got += ((double)y[32 * s + 8 * g + j] - xg[j]) * ((double)y[32 * s + 8 * g + j] - xg[j]);
                other += least_dist2(c, xg, r.step, -r.shift, NULL);
            }
            t->shift += !(got <= other * (1.0 + 1e-5) + 1e-30);
        }
    }
}

/* One round trip of codec c on n values x; returns RMS(err)/RMS(x). One case. */
static double roundtrip(q35_suite *s, const iq_codec *c, const float *x, int64_t n, const char *what)
{
    const size_t bytes = q35_row_bytes(c->type, n);
    uint8_t *qa = malloc(bytes + Q35_TEST_SENTINEL_BYTES), *qb = malloc(bytes + Q35_TEST_SENTINEL_BYTES);
    float *y = malloc((size_t)(n + Q35_TEST_SENTINEL_FLOATS) * sizeof *y);
    if (!qa || !qb || !y || bytes == 0) {
        q35_case(s, false, "%s on %s: out of memory or no row bytes", q35_type_name(c->type), what);
        free(qa), free(qb), free(y);
        return INFINITY;
    }
    bool all_written, tail_ok, ytail_ok;
    q35_test_quant_pass(c->type, x, n, qa, qb, y, &all_written, &tail_ok, &ytail_ok);
    int64_t nonfinite = 0;
    double err2 = 0.0, x2 = 0.0;
    for (int64_t i = 0; i < n; i++) {
        nonfinite += !isfinite(y[i]);
        err2 += ((double)y[i] - x[i]) * ((double)y[i] - x[i]);
        x2 += (double)x[i] * x[i];
    }
    tally t = {0, 0, 0, 0, 0};
    const size_t bb = (size_t)q35_type_get(c->type)->block_bytes;
    for (int64_t bi = 0; bi < n / Q35_QK_K && nonfinite == 0; bi++)
        check_block(c, qa + bi * bb, x + bi * Q35_QK_K, y + bi * Q35_QK_K, &t);
    q35_case(s,
             tail_ok && all_written && ytail_ok && nonfinite == 0 && t.far == 0 && t.signs == 0 && t.cover == 0 &&
                 t.loose == 0 && t.shift == 0,
             "%-7s %-30s %5" PRId64 " el, %5zu bytes: writes %s%s, %" PRId64 " floats%s%s; groups off the nearest "
             "point %" PRId64 ", signs off the rule %" PRId64 ", scales not covering %" PRId64 ", too coarse %" PRId64
             ", shifts %" PRId64,
             q35_type_name(c->type), what, n, bytes, all_written ? "all" : "NOT ALL", tail_ok ? "" : " AND PAST THEM",
             n, ytail_ok ? "" : " AND PAST THEM", nonfinite ? " WITH NaN/inf" : "", t.far, t.signs, t.cover, t.loose,
             t.shift);
    free(qa), free(qb), free(y);
    return x2 > 0.0 ? sqrt(err2 / x2) : 0.0;
}

void q35_test_check_iq_roundtrips(q35_suite *s, const float *const *sets, const int64_t *lens, const char *const *names,
                                  int n_sets)
{
    for (int i = 0; i < N_IQ; i++) {
        double rms = 0.0;
        for (int k = 0; k < n_sets; k++) {
            const double r = roundtrip(s, &k_iq[i], sets[k], lens[k], names[k]);
            if (k == 0)
                rms = r;
        }
        q35_case(s, rms <= k_iq[i].rms_limit, "%-7s RMS(err)/RMS(x) on %s: measured %.4e, limit %.2e",
                 q35_type_name(k_iq[i].type), names[0], rms, k_iq[i].rms_limit);
    }
}
