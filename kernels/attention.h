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
 * On the device (f32 caches [max_seq][kv_stride], q and o [T][q_stride]):
 *   decode   one query row per head over cache rows 0..n_ctx-1; its rows form
 *            runs row t over pos0 + t + 1 rows with the very same per-row
 *            arithmetic (bitwise the per-token launches: the deterministic mode);
 *            kernels/attention_decode.cu;
 *   f32      the prefill of a chunk of T rows starting at pos0, per KV group:
 *            cuBLASLt strided-batched S = Q K^T over the resident cache rows
 *            0..pos0+T-1, a causal softmax kernel (row t sees positions
 *            <= pos0 + t, the rest exact zeros), O = P V; the chunk's query rows
 *            split into passes so one group's scores (heads/kv_heads x pass_rows
 *            x n_ctx floats) fit a byte budget (Q35_ATTN_SCORES_BUDGET by
 *            default); bitwise the same for any pass size;
 *            kernels/attention_f32.cu;
 *   flash    one fused causal kernel: f16 inputs (rounded from the f32 cache and
 *            q) to mma.sync tensor cores, f32 accumulation, f32 online softmax,
 *            head_dim 256, a whole GQA group per block, no scores materialised;
 *            sm_80 or newer; kernels/attention_flash.cu.
 *
 * FLOP of a chunk (what the benchmarks count): 4 * head_dim * heads * (visible
 * (row, position) pairs), the pairs sum_t (pos0 + t + 1). */
#ifndef Q35_KERNELS_ATTENTION_H
#define Q35_KERNELS_ATTENTION_H

#include "kernels/blas.h"

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

/* The default scores budget of the f32 path: 1 GiB for one pass of one KV group. */
#define Q35_ATTN_SCORES_BUDGET ((size_t)1 << 30)

/* The checks every device path makes: heads, kv_heads >= 1, heads a multiple of
 * kv_heads, head_dim >= 1, the strides at least the rows' widths, scale > 0
 * and finite. 0, or -1 with "<who>: ..." naming each value. */
int q35_attention_check_shape(const char *who, q35_attn_shape s, q35_error *err);

/* CUDA, decode: o [heads*head_dim] from q [heads*head_dim] over cache rows
 * 0..n_ctx-1 (n_ctx >= 1). head_dim 128 or 256; q and the caches 16-byte
 * aligned with strides of whole float4. */
int q35_attention_decode(float *o, const float *q, const float *k_cache, const float *v_cache, int64_t n_ctx,
                         q35_attn_shape s, q35_stream stream, q35_error *err);

/* CUDA, decode rows: row t of o, q over n_ctx = pos0 + t + 1, each bitwise the
 * q35_attention_decode of that row. */
int q35_attention_decode_rows(float *o, const float *q, const float *k_cache, const float *v_cache, int64_t pos0,
                              int64_t T, q35_attn_shape s, q35_stream stream, q35_error *err);

/* The rows form in a chosen launch shape (the same arithmetic, so the same
 * bits): 0 the device's default, 1 a block per (row, head), 2 a cluster of 8
 * blocks per (row, head) (compute capability 9.0+). */
int q35_attention_decode_rows_variant(int variant, float *o, const float *q, const float *k_cache,
                                      const float *v_cache, int64_t pos0, int64_t T, q35_attn_shape s,
                                      q35_stream stream, q35_error *err);

/* f32 path: the query rows per pass that keep one KV group's scores within
 * budget_bytes for a chunk of T rows ending at n_ctx_max = pos0 + T (at least 1,
 * at most T). */
int64_t q35_attention_f32_pass_rows(q35_attn_shape s, int64_t T, int64_t n_ctx_max, size_t budget_bytes);

/* f32 path: bytes of scores workspace for passes of pass_rows rows over up to
 * n_ctx_max positions: heads/kv_heads * pass_rows * ld floats, ld = n_ctx_max
 * rounded up to a multiple of 32 (each scores row starts on 128 bytes). */
size_t q35_attention_f32_scores_bytes(q35_attn_shape s, int64_t pass_rows, int64_t n_ctx_max);

/* CUDA, f32 path: o [T][o_stride] for query rows q [T][q_stride] at positions
 * pos0..pos0+T-1, over cache rows 0..pos0+T-1 (this chunk's rows already
 * appended). scores holds q35_attention_f32_scores_bytes(s, pass_rows,
 * pos0 + T). The work goes to the blas handle's stream. The result does not
 * depend on pass_rows, bit for bit (attention_f32.cu says why). FP32 FMA GEMMs
 * only (CUBLAS_COMPUTE_32F_PEDANTIC, no tensor ops, no TF32). */
int q35_attention_prefill_f32(q35_blas blas, float *o, const float *q, const float *k_cache, const float *v_cache,
                              int64_t pos0, int64_t T, float *scores, int64_t pass_rows, q35_attn_shape s,
                              q35_error *err);

/* f32 path, a part of it only (for the benchmarks that time each part): the
 * Q K^T GEMMs, the softmax, the P V GEMMs, or any union; a part reads what the
 * previous one left in scores. */
#define Q35_ATTN_F32_QK 1u
#define Q35_ATTN_F32_SOFTMAX 2u
#define Q35_ATTN_F32_PV 4u
#define Q35_ATTN_F32_ALL 7u
int q35_attention_prefill_f32_parts(unsigned parts, q35_blas blas, float *o, const float *q, const float *k_cache,
                                    const float *v_cache, int64_t pos0, int64_t T, float *scores, int64_t pass_rows,
                                    q35_attn_shape s, q35_error *err);

/* f32 path: the cuBLASLt algorithms a call for this chunk would run, as text
 * into buf (for logs and benchmarks; strides of whole float4 assumed). */
int q35_attention_f32_describe(q35_blas blas, q35_attn_shape s, int64_t pos0, int64_t T, char *buf, size_t cap,
                               q35_error *err);

/* Whether the flash kernel can run these heads on this device (compute
 * capability >= 8.0, head_dim 256, heads a multiple of kv_heads, groups of 1,
 * 2, 3, 4, 6 or 8 query heads, the shared memory it needs): 1, or 0 with the
 * reason in why. */
int q35_attention_flash_supported(int device, q35_attn_shape s, q35_error *why);

/* CUDA, flash path: as q35_attention_prefill_f32, no workspace. Refuses what
 * q35_attention_flash_supported refuses, with its reason; q and the caches must
 * be 16-byte aligned with strides of whole float4, o 8-byte aligned with an
 * even stride, pos0 + T <= INT32_MAX. */
int q35_attention_prefill_flash(float *o, const float *q, const float *k_cache, const float *v_cache, int64_t pos0,
                                int64_t T, q35_attn_shape s, q35_stream stream, q35_error *err);

/* The flash path with a chosen KV split: 0 the default (the device's SM count
 * decides), 1 none, 2 or 4 blocks of a cluster sharing a query tile (compute
 * capability 9.0+). */
int q35_attention_prefill_flash_split(int split, float *o, const float *q, const float *k_cache,
                                      const float *v_cache, int64_t pos0, int64_t T, q35_attn_shape s,
                                      q35_stream stream, q35_error *err);

/* The flash kernel's variants, for the benchmarks and the parity suite: the
 * same contract, other tilings and stagings (kernels/attention_flash.cu's
 * header lists them). Variant Q35_FLASH_BASE_VARIANT runs wherever flash runs
 * (q35_attention_flash_supported checks it); q35_attention_prefill_flash and
 * _split run q35_attention_flash_default_variant. */
#define Q35_FLASH_BASE_VARIANT 0

/* The variant q35_attention_prefill_flash runs on `device` for shape s: kv64
 * where the device's shared memory holds it (sm_80, sm_90), else base (sm_86,
 * sm_89). kv64 measured 139 / 167 / 174 TFLOP/s on the H200 at 4k / 16k / 64k
 * against base's 122 / 143 / 149 (bench/results/README.md). */
int q35_attention_flash_default_variant(int device, q35_attn_shape s);

/* How many variants there are; variant's name, or NULL past the last. */
int q35_attention_flash_variants(void);
const char *q35_attention_flash_variant_name(int variant);

/* As q35_attention_flash_supported, for one variant (they differ in the shared
 * memory they need). */
int q35_attention_flash_variant_supported(int variant, int device, q35_attn_shape s, q35_error *why);

/* The flash path, one variant, with a chosen KV split (as _split). */
int q35_attention_prefill_flash_variant(int variant, int split, float *o, const float *q, const float *k_cache,
                                        const float *v_cache, int64_t pos0, int64_t T, q35_attn_shape s,
                                        q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_ATTENTION_H */
