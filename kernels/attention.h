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
 * positions, a running max m, sum l and accumulator rescaled by e^{m_old - m_new}.
 *
 * On the device (f32 caches [max_seq][kv_stride], q and o [T][q_stride]), one
 * header per path, each declaring its launchers:
 *   decode   kernels/attention_decode.h: one query row per head; its rows form
 *            bitwise the per-token launches (the deterministic mode);
 *   f32      kernels/attention_f32.h: the prefill of a chunk through cuBLASLt
 *            GEMMs and a causal softmax over materialised scores, exact f32;
 *   flash    kernels/attention_flash.h: one fused causal kernel, f16 inputs to
 *            tensor cores, f32 accumulation and softmax.
 * This header holds what they share: the heads and buffers (q35_attn_shape)
 * and the checks every path makes.
 *
 * FLOP of a chunk (what the benchmarks count): 4 * head_dim * heads * (visible
 * (row, position) pairs), the pairs sum_t (pos0 + t + 1). */
#ifndef Q35_KERNELS_ATTENTION_H
#define Q35_KERNELS_ATTENTION_H

#include "core/error.h"

#include <stddef.h>
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

/* The device's view of the heads and buffers. */
typedef struct q35_attn_shape {
    int heads;          /* query heads */
    int kv_heads;       /* KV heads (heads is a multiple) */
    int head_dim;       /* values per head */
    int64_t q_stride;   /* floats between query rows (>= heads * head_dim) */
    int64_t o_stride;   /* floats between output rows (>= heads * head_dim) */
    int64_t kv_stride;  /* floats between cache rows (>= kv_heads * head_dim) */
    float scale;        /* softmax scale, 1/sqrt(head_dim) */
} q35_attn_shape;

/* The checks every device path makes: heads, kv_heads >= 1, heads a multiple of
 * kv_heads, head_dim >= 1, the strides at least the rows' widths, scale > 0
 * and finite. 0, or -1 with "<who>: ..." naming each value. */
int q35_attention_check_shape(const char *who, q35_attn_shape s, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_ATTENTION_H */
