/* Decode attention over f16 caches, split over the cache (the fast path's
 * decode step, the switch decode-split): one query row per head over cache
 * rows 0..n_ctx-1, kernels/attention.h's formula and shapes.
 *
 * The cache is cut into `splits` stretches of whole 8-row tiles; a block per
 * (stretch, KV head) copies its stretch's K and V rows into shared memory once
 * (cp.async, four tiles in flight) and its heads of that KV head (one warp a
 * query head) each run an online softmax over them into a partial (m, l, acc)
 * in `work`; a second launch combines a head's partials in split order. So the
 * cache is read once per KV head, not once per query head, by splits x kv_heads
 * blocks rather than heads-many clusters.
 *
 * f32 arithmetic over the halves widened exactly, in another order than
 * kernels/attention_decode.h's: not its bits, held within 1e-5 (rel L-inf)
 * of the float64 reference over the halves, the same bound as the exact
 * kernel, which stays its oracle (test_kernels_attention). For a given
 * (n_ctx, splits) the result is deterministic; the _at form is bitwise the
 * plain one at that position. */
#ifndef Q35_KERNELS_ATTENTION_DECODE_SPLIT_H
#define Q35_KERNELS_ATTENTION_DECODE_SPLIT_H

#include "kernels/attention.h"
#include "kernels/cuda.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define Q35_DECODE_SPLITS_MAX 256 /* splits a call at most */

/* The splits for caches of up to n_ctx_max rows on a device of `sms`
 * multiprocessors: one a 64 rows, at most 4 blocks a multiprocessor over the
 * KV heads, in 1..Q35_DECODE_SPLITS_MAX. A graph captured for a state's
 * capacity keeps it for every position (stretches past n_ctx are empty). */
int q35_attention_decode_split_count(q35_attn_shape s, int64_t n_ctx_max, int sms);

/* Bytes of the partials of `splits` splits: heads x splits x (head_dim + 2)
 * floats (the (m, l) pairs padded to a multiple of 4). */
size_t q35_attention_decode_split_work_bytes(q35_attn_shape s, int splits);

/* CUDA: o [heads*head_dim] (one row) from q [heads*head_dim] over cache rows
 * 0..n_ctx-1 (n_ctx >= 1) of f16 caches (IEEE half bits; s.kv_stride counts
 * halves), `splits` splits (1..Q35_DECODE_SPLITS_MAX), partials in `work`
 * (q35_attention_decode_split_work_bytes, 16-byte aligned). head_dim 128 or
 * 256, heads / kv_heads at most 16; q 16-byte aligned, the caches too with a
 * stride of a multiple of 8 halves. Refusals name the limit. */
int q35_attention_decode_split_f16(float *o, const float *q, const uint16_t *k_cache, const uint16_t *v_cache,
                                   int64_t n_ctx, q35_attn_shape s, int splits, void *work, q35_stream stream,
                                   q35_error *err);

/* The same at the position *pos_at (an int64 in device memory, read when the
 * kernels run: n_ctx = *pos_at + 1), for a launch captured once in a CUDA graph;
 * the position is the caller's to keep within the cache. */
int q35_attention_decode_split_f16_at(float *o, const float *q, const uint16_t *k_cache, const uint16_t *v_cache,
                                      const int64_t *pos_at, q35_attn_shape s, int splits, void *work,
                                      q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_ATTENTION_DECODE_SPLIT_H */
