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

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_DELTA_RULE_H */
