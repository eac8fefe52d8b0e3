/* The f32 prefill attention (kernels/attention.h's formula and shapes): a
 * chunk of T rows starting at pos0, per KV group, cuBLASLt strided-batched
 * S = Q K^T over the resident cache rows 0..pos0+T-1, a causal softmax kernel
 * (row t sees positions <= pos0 + t, the rest exact zeros), O = P V; the
 * chunk's query rows split into passes so one group's scores (heads/kv_heads x
 * pass_rows x n_ctx floats) fit a byte budget (Q35_ATTN_SCORES_BUDGET by
 * default); bitwise the same for any pass size. kernels/attention_f32.cu. */
#ifndef Q35_KERNELS_ATTENTION_F32_H
#define Q35_KERNELS_ATTENTION_F32_H

#include "kernels/attention.h"
#include "kernels/blas.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The default scores budget of the f32 path: 1 GiB for one pass of one KV group. */
#define Q35_ATTN_SCORES_BUDGET ((size_t)1 << 30)

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

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_ATTENTION_F32_H */
