/* What the quant codecs (core/quant_legacy.c, core/quant_kquants.c,
 * core/quant_iq*.c) share: the rounding of their quantizers, IQ4_NL's table and
 * the grid i-quants' search. Not for use outside core/quant*.c. */
#ifndef Q35_QUANT_INTERNAL_H
#define Q35_QUANT_INTERNAL_H

#include "core/half.h"

#include <math.h>
#include <stdbool.h>
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

/* The f16 bits of the least f16 value >= v (0 <= v <= 65504). */
static inline uint16_t q35_f16_at_least(float v)
{
    uint16_t h = q35_f32_to_f16(v);
    if (q35_f16_to_f32(h) < v && h < 0x7bff)
        h++;
    return h;
}

/* ---- the grid i-quants' quantizer (core/quant_iq_search.c) ---------------------- */

/* The grids a point is searched in (IQ1_S and IQ1_M share one). */
typedef enum q35_grid_id {
    Q35_GRID_IQ2XXS,
    Q35_GRID_IQ2XS,
    Q35_GRID_IQ2S,
    Q35_GRID_IQ3XXS,
    Q35_GRID_IQ3S,
    Q35_GRID_IQ1S,
    Q35_GRID_COUNT
} q35_grid_id;

/* The elements of a point of grid g (8; the IQ3 grids' 4). */
int q35_grid_point_elems(q35_grid_id g);

/* Element j of point p of grid g, the table's byte as the format reads it. */
int q35_grid_value(q35_grid_id g, int p, int j);

/* The point of grid g nearest to the targets t (q35_grid_point_elems of them) when
 * point p stands for the values step * (v_pj + off), each computed in float as the
 * dequantizer does: its index, the first found of equal distances (deterministic).
 * *dist2 (unless NULL): its squared distance, the elements' (t - value)^2 summed in
 * order in float. Exact, not greedy: a branch-and-bound walk of the grid's points
 * element by element (a trie built once, thread-safe), a branch cut only when its
 * partial distance plus the least the remaining elements can add reaches the best. */
int q35_grid_nearest(q35_grid_id g, const float *t, float step, float off, float *dist2);

/* The points of grid g (one, IQ3's two) nearest to a group of 8 elements x under
 * the signs `signs` (bit j: element j negative): q35_grid_nearest of the targets
 * x[j] * (sign j ? -1 : 1), into points[0 .. 8 / q35_grid_point_elems). */
void q35_iq_group_points(q35_grid_id g, const float *x, uint32_t signs, float step, int *points);

/* The signs of n elements x as a mask (bit j: x[j] < 0). With `parity` (the
 * 7-bit sign fields, q35_iq_signs7) an odd count of negatives is made even by
 * flipping the sign of the element of least |x| (the first of equal ones): the
 * flip that costs least, as its error grows by 4 |x| times its level's value. */
uint32_t q35_iq_group_signs(const float *x, int n, bool parity);

/* A grid i-quant's step of scale index ls under the super-scale d, in ggml's
 * arithmetic (core/quant_iq*.c). */
typedef float (*q35_iq_step_fn)(float d, int ls);

/* The scales of one super-block of n_sub sub-blocks: want[s] (>= 0) the step
 * sub-block s needs (its largest |x| over the grid's largest level). d = the
 * least f16 with step(d, max_ls) >= the largest want (f16 range permitting), then
 * ls[s] = the least index whose step(d, ls) >= want[s] (max_ls if none). The bits
 * of d in *d_out; returns d. */
float q35_iq_scales(const float *want, int n_sub, q35_iq_step_fn step, int max_ls, uint16_t *d_out, uint8_t *ls);

/* The largest |x| of n elements. */
float q35_abs_max(const float *x, int n);

/* want[s] = the largest |x| of sub-block s (len elements) of a super-block of 256
 * over the grid's top level: the step that sub-block needs. */
void q35_iq_wants(const float *x, int len, float top, float *want);

#endif /* Q35_QUANT_INTERNAL_H */
