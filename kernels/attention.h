/* Causal grouped-query attention of one query row over cache rows 0..n_ctx-1
 * (SPEC §2 attention.5): query head h reads KV head h / (heads / kv_heads),
 *
 *     s_p   = (q_h . k_p) * scale                    scale = 1/sqrt(head_dim)
 *     o_h   = sum_p softmax_p(s) v_p
 *
 * k_cache, v_cache: rows of kv_heads*head_dim at a row stride. A prefill row t of
 * a chunk starting at pos0 sees n_ctx = pos0 + t + 1.
 *
 * Second formulation (the cross-check): the online softmax over blocks of
 * positions, a running max m, sum l and accumulator rescaled by e^{m_old - m_new}. */
#ifndef Q35_KERNELS_ATTENTION_H
#define Q35_KERNELS_ATTENTION_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct q35_attn_dims {
    int heads;          /* query heads */
    int kv_heads;       /* KV heads (heads is a multiple) */
    int head_dim;       /* values per head */
    int64_t kv_stride;  /* doubles between consecutive cache rows */
    double scale;       /* softmax scale, 1/sqrt(head_dim) */
} q35_attn_dims;

/* float64 reference, full-matrix softmax: o, q [heads][head_dim]. Returns -1
 * only when out of memory. */
int q35_ref_attention(double *o, const double *q, const double *k_cache, const double *v_cache, int64_t n_ctx,
                      q35_attn_dims d);

/* float64 reference, online softmax over blocks of `block` positions. */
void q35_ref_attention_online(double *o, const double *q, const double *k_cache, const double *v_cache,
                              int64_t n_ctx, int block, q35_attn_dims d);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_ATTENTION_H */
