/* KV append (SPEC §2 attention.4): a chunk's K rows (after the per-head q/k norm
 * and RoPE) and V rows go into the layer's cache at positions pos .. pos + T - 1:
 *
 *     k_cache[pos + t][i] = k[t][i],  v_cache[pos + t][i] = v[t][i]     i < kv_dim
 *
 * Two cache elements: f32 (a copy, so the rows form is bitwise T per-token
 * appends; the reference is the copy itself), and IEEE binary16 for the flash
 * path (each value rounded once to nearest even, __float2half_rn: the very
 * rounding the flash kernel applied per tile to an f32 cache, so a flash
 * prefill over the f16 cache is bitwise the one over the f32 cache; the
 * reference is core/half.h's q35_f32_to_f16). Same layout either way:
 * [max_seq][cache_stride] values. */
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

/* CUDA, f16 caches: the same rows rounded to binary16 (round to nearest even;
 * past 65504 infinity, NaN a NaN), caches [max_seq][cache_stride] of IEEE half
 * (uint16_t bits). The same refusals. */
int q35_kv_append_rows_f16(uint16_t *k_cache, uint16_t *v_cache, int64_t cache_stride, int64_t max_seq,
                           const float *k, const float *v, int64_t src_stride, int64_t kv_dim, int64_t pos, int64_t T,
                           q35_stream stream, q35_error *err);

/* CUDA, either element, at a position the device holds: rows at *pos_at ..
 * *pos_at + T - 1 (an int64 in device memory, read when the kernel runs: a
 * launch captured once in a CUDA graph serves every decode step). The same
 * values; the same refusals but the position's, which the caller keeps
 * within max_seq - T (it cannot be checked when the launch is made). */
int q35_kv_append_rows_at(float *k_cache, float *v_cache, int64_t cache_stride, int64_t max_seq, const float *k,
                          const float *v, int64_t src_stride, int64_t kv_dim, const int64_t *pos_at, int64_t T,
                          q35_stream stream, q35_error *err);
int q35_kv_append_rows_f16_at(uint16_t *k_cache, uint16_t *v_cache, int64_t cache_stride, int64_t max_seq,
                              const float *k, const float *v, int64_t src_stride, int64_t kv_dim,
                              const int64_t *pos_at, int64_t T, q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_KV_APPEND_H */
