/* KV append (SPEC §2 attention.4): a chunk's K rows (after the per-head q/k norm
 * and RoPE) and V rows go into the layer's cache at positions pos .. pos + T - 1:
 *
 *     k_cache[pos + t][i] = k[t][i],  v_cache[pos + t][i] = v[t][i]     i < kv_dim
 *
 * A copy, so the rows form is bitwise T per-token appends; the reference is the
 * copy itself. */
#ifndef Q35_KERNELS_KV_APPEND_H
#define Q35_KERNELS_KV_APPEND_H

#include "kernels/cuda.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CUDA: caches [max_seq][cache_stride], k and v [T][src_stride] (the first
 * kv_dim floats of each row); device pointers. Refuses pos + T > max_seq. */
int q35_kv_append_rows(float *k_cache, float *v_cache, int64_t cache_stride, int64_t max_seq, const float *k,
                       const float *v, int64_t src_stride, int64_t kv_dim, int64_t pos, int64_t T,
                       q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_KV_APPEND_H */
