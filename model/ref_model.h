/* The float64 CPU reference model of Qwen3.5: the model everything on the GPU is
 * checked against. It is the plainest composition of the per-op references in
 * kernels/ref (float64 activations, state and accumulation; weights dequantized
 * by the reference dequantizer), in the op order of SPEC §2.
 *
 * A prefill runs chunks of `chunk_rows` rows, each chunk layer by layer; a
 * per-token forward is a prefill of one row. Every op computes each row with
 * the same operations whatever the chunk, so logits and state after a prefill
 * are bitwise those of per-token steps, at any chunk rows. */
#ifndef Q35_REF_MODEL_H
#define Q35_REF_MODEL_H

#include "core/error.h"
#include "kernels/linear.h"
#include "model/op_times.h"
#include "qwen35.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* An accuracy study of the FP8 GEMM path (issue 50): the projections whose
 * kind is in `kinds` (bit k: q35_ref_fp8_kind(k), "attn_qkv", "ffn_down", ...)
 * and whose layer is in `layers` (bit i; 0: every layer) run through
 * q35_ref_linear_fp8 at `block` (kernels/fp8.h); the rest as `act` says. */
typedef struct q35_ref_fp8 {
    uint32_t kinds;
    uint64_t layers;
    int block;
} q35_ref_fp8;

/* The name of projection kind k (the tensor name after "blk.N.", less
 * ".weight"), or NULL past the last. */
const char *q35_ref_fp8_kind(int k);

typedef struct q35_ref_state {
    int64_t max_seq;   /* positions the KV cache holds */
    int64_t kv_len;    /* positions written so far: the next prefill starts here */
    int n_delta;       /* DeltaNet layers */
    int n_attn;        /* attention layers */
    int64_t conv_len;  /* doubles per layer of conv: conv_dim * (K-1) */
    int64_t ssm_len;   /* doubles per layer of ssm: Hv * dv * dk */
    int64_t kv_dim;    /* doubles per cache row: kv_heads * head_dim */
    double *conv;      /* [n_delta][conv_dim][K-1], oldest input first */
    double *ssm;       /* [n_delta][Hv][dv][dk] */
    double *k_cache;   /* [n_attn][max_seq][kv_dim], after q/k norm and RoPE */
    double *v_cache;   /* [n_attn][max_seq][kv_dim] */
    q35_act_quant act; /* what each matrix product does to its activations (kernels/linear.h):
                        * Q35_ACT_EXACT from init; the caller may set Q35_ACT_GGML (llama.cpp's
                        * numerics, `q35 run --cpu --act-quant ggml`) or Q35_ACT_Q8 (the decode
                        * step's 8-bit activations, `--act-quant decode-q8`); reset keeps it */
    q35_ref_fp8 fp8;   /* the projections rounded as an FP8 GEMM rounds them (none from init) */
} q35_ref_state;

/* Allocates a zeroed state for m holding max_seq positions. */
int q35_ref_state_init(q35_ref_state *st, const q35_model *m, int64_t max_seq, q35_error *err);
void q35_ref_state_free(q35_ref_state *st);
void q35_ref_state_reset(q35_ref_state *st);

/* Prefills tokens[0..n) at positions pos0..pos0+n-1 in chunks of chunk_rows.
 * Logits (vocab doubles each, into `logits`) are produced for each position of
 * at[0..n_at) (absolute, ascending, inside the prompt), or for the last position
 * when n_at == 0; only those rows pay the output norm and lm_head. logits may be
 * NULL when n_at == 0 (no tail at all). `times` (may be NULL) accumulates.
 *
 * Refuses, before touching the state: an empty prompt; pos0 != st->kv_len;
 * positions past max_seq; a token outside the vocabulary; positions not
 * ascending or outside the prompt; chunk_rows < 1. A failure after the checks
 * (out of memory) leaves the state half-advanced: discard it. */
int q35_ref_prefill(const q35_model *m, q35_ref_state *st, const int32_t *tokens, int64_t n, int64_t pos0,
                    int64_t chunk_rows, const int64_t *at, int64_t n_at, double *logits, q35_op_times *times,
                    q35_error *err);

/* One token at pos (== st->kv_len): the decode step, a prefill of one row. */
int q35_ref_forward_token(const q35_model *m, q35_ref_state *st, int32_t token, int64_t pos, double *logits,
                          q35_op_times *times, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_REF_MODEL_H */
