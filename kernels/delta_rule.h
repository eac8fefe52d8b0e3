/* The gated delta rule of one token (SPEC §2.5). Per value head j, reading key
 * head j % Hk (value heads are TILED onto key heads), with state S_j [dv][dk]
 * (row = one value column):
 *
 *     S_j <- S_j * exp(g_j)
 *     d    = (v_j - S_j k) * beta_j            (a dv vector)
 *     S_j <- S_j + d k^T
 *     o_j  = (S_j q) / sqrt(dk)
 *
 * q, k [Hk][dk] are L2-normalised; v, o [Hv][dv]; g, beta [Hv]. The rows form
 * (a scan over T tokens) leaves S where T steps leave it.
 *
 * Second formulation (the reference's cross-check): over a chunk of C tokens with
 * cumulative log decay G_t = sum_{s<=t} g_s and initial state S0,
 *     S_t = e^{G_t} S0 + sum_{s<=t} e^{G_t - G_s} d_s k_s^T,
 *     (I + A) D = R,  A_ts = beta_t e^{G_t - G_s} (k_t . k_s) for s < t,
 *                     R_t = beta_t (v_t - e^{G_t} S0 k_t),
 * solved through the UT transform T = (I + A)^-1 (the WY form), then
 *     o_t = (e^{G_t} S0 q_t + sum_{s<=t} e^{G_t - G_s} (k_s . q_t) d_s) / sqrt(dk). */
#ifndef Q35_KERNELS_DELTA_RULE_H
#define Q35_KERNELS_DELTA_RULE_H

#include "kernels/cuda.h"
#include "kernels/variant.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct q35_delta_dims {
    int hk;  /* key heads */
    int hv;  /* value heads (a multiple of hk) */
    int dk;  /* key head width */
    int dv;  /* value head width */
} q35_delta_dims;

/* float64 reference, the recurrence: one token. S [hv][dv][dk] is updated. */
void q35_ref_delta_rule_step(double *o, double *S, const double *q, const double *k, const double *v, const double *g,
                             const double *beta, q35_delta_dims d);

/* float64 reference, the chunked WY / UT-transform form over T tokens in chunks
 * of `chunk` (the cross-check). Token t's q, k, v start at q + t*stride, k + t*stride,
 * v + t*stride; g, beta at g + t*hv; o at o + t*hv*dv. S is updated. Returns -1
 * only when out of memory. */
int q35_ref_delta_rule_chunked(double *o, double *S, const double *q, const double *k, const double *v,
                               int64_t stride, const double *g, const double *beta, int64_t T, int chunk,
                               q35_delta_dims d);

/* CUDA, the chunk-resident scan over T tokens, by variant `variant`
 * (Q35_VARIANT_DEFAULT: q35_delta_rule_variant_default): token t's q, k, v
 * heads start at q + t*stride, k + t*stride, v + t*stride (the sections of a
 * conv output row); g, beta [T][hv]; o [T][o_stride] (value head j at j*dv); S
 * [hv][dv][dk], updated. Device pointers, 16-byte aligned; stride and o_stride
 * multiples of 4. Each state row (one value column) lives in a group of lanes'
 * registers for the whole scan, q/k/v/g/beta are staged in shared memory a tile
 * at a time, and every token runs the same instructions as a launch of one
 * token: a variant's outputs and final state are bitwise those of T of its
 * per-token launches. dk = 128, dv a multiple of the variant's rows per block
 * (q35_delta_rule_variant_rows), hv a multiple of hk; refuses (-1, err naming
 * the limit) anything else. */
int q35_delta_rule_scan(float *o, int64_t o_stride, float *S, const float *q, const float *k, const float *v,
                        int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d, int variant,
                        q35_stream stream, q35_error *err);

/* The scan's variants (kernels/variant.h; kernels/delta_rule.cu: lanes per
 * state row, state rows per group of lanes, warps per block, prefetch, output
 * form, lane order). Production: r2pni (32 rows a block) and l16r2pn (16); the
 * rest are experiments. The default: r2pni where dv allows it, else l16r2pn
 * (the fastest at the model's shapes: bench/results/index.tsv, family
 * kernels). A variant
 * takes dv in multiples of its rows per block (0 outside the variants). */
int q35_delta_rule_variant_count(void);
const char *q35_delta_rule_variant_name(int variant);
int q35_delta_rule_variant_find(const char *name);
int q35_delta_rule_variant_production(int variant);
int q35_delta_rule_variant_default(q35_delta_dims d);
int q35_delta_rule_variant_rows(int variant);

/* CUDA, the per-token step: one token (the default variant's scan with T = 1). */
int q35_delta_rule_step(float *o, float *S, const float *q, const float *k, const float *v, const float *g,
                        const float *beta, q35_delta_dims d, q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_DELTA_RULE_H */
