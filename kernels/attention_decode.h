/* Decode attention (kernels/attention.h's formula and shapes): one query row
 * per head over cache rows 0..n_ctx-1, f32 throughout. Its rows form runs row t
 * over pos0 + t + 1 rows with the very same per-row arithmetic: bitwise the
 * per-token launches, so the deterministic mode's attention. Over an f32 cache
 * or an f16 one (the forms _f16, the decode steps after a flash prefill).
 * kernels/attention_decode.cu. */
#ifndef Q35_KERNELS_ATTENTION_DECODE_H
#define Q35_KERNELS_ATTENTION_DECODE_H

#include "kernels/attention.h"
#include "kernels/cuda.h"
#include "kernels/variant.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CUDA, decode: o [heads*head_dim] from q [heads*head_dim] over cache rows
 * 0..n_ctx-1 (n_ctx >= 1), the default variant. head_dim 128 or 256; q and the
 * caches 16-byte aligned with strides of whole float4. */
int q35_attention_decode(float *o, const float *q, const float *k_cache, const float *v_cache, int64_t n_ctx,
                         q35_attn_shape s, q35_stream stream, q35_error *err);

/* CUDA, decode rows: row t of o, q over n_ctx = pos0 + t + 1, each bitwise the
 * q35_attention_decode of that row, in launch shape `variant` (the same
 * arithmetic, so the same bits; Q35_VARIANT_DEFAULT: the device's default). */
int q35_attention_decode_rows(float *o, const float *q, const float *k_cache, const float *v_cache, int64_t pos0,
                              int64_t T, q35_attn_shape s, int variant, q35_stream stream, q35_error *err);

/* CUDA, decode over f16 caches (IEEE half bits, q35_kv_append_rows_f16's;
 * s.kv_stride counts halves): each cache value widened exactly to f32, then
 * the very arithmetic of the f32 forms, so the rows form is bitwise the
 * per-token launches here too, and either is bitwise the f32 form over an f32
 * cache holding the widened values. The same refusals (q and the caches
 * 16-byte aligned, strides multiples of 4 values). */
int q35_attention_decode_f16(float *o, const float *q, const uint16_t *k_cache, const uint16_t *v_cache,
                             int64_t n_ctx, q35_attn_shape s, q35_stream stream, q35_error *err);
int q35_attention_decode_rows_f16(float *o, const float *q, const uint16_t *k_cache, const uint16_t *v_cache,
                                  int64_t pos0, int64_t T, q35_attn_shape s, int variant, q35_stream stream,
                                  q35_error *err);

/* CUDA, decode at a position the device holds: one query row at the position
 * *pos_at (an int64 in device memory, read when the kernel runs), so n_ctx =
 * *pos_at + 1: a launch captured once in a CUDA graph serves every decode step
 * (the step writes its position there first). Bitwise the forms above at that
 * position. The same refusals; the position is the caller's to keep within
 * the cache (it cannot be checked when the launch is made). */
int q35_attention_decode_at(float *o, const float *q, const float *k_cache, const float *v_cache,
                            const int64_t *pos_at, q35_attn_shape s, q35_stream stream, q35_error *err);
int q35_attention_decode_f16_at(float *o, const float *q, const uint16_t *k_cache, const uint16_t *v_cache,
                                const int64_t *pos_at, q35_attn_shape s, q35_stream stream, q35_error *err);

/* The launch shapes (kernels/variant.h), both in the model's library:
 *   block    a block of 16 warps per (row, head), on every device;
 *   cluster  a cluster of 8 blocks per (row, head), compute capability 9.0+
 *            and a build with sm_90 code.
 * The default: cluster where it runs, else block. */
int q35_attention_decode_variant_count(void);
const char *q35_attention_decode_variant_name(int variant);
int q35_attention_decode_variant_find(const char *name);
int q35_attention_decode_variant_production(int variant);
int q35_attention_decode_variant_default(int device, q35_attn_shape s);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_ATTENTION_DECODE_H */
