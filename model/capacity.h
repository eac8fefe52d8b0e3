/* The capacity plan of the CUDA model (SPEC §3), made on the host before
 * anything is uploaded: pure C, no CUDA, so the CPU tests can check it against
 * hand-computed figures.
 *
 *   total = weights + f16 weights + KV(seq) + recurrent state + workspace + cuBLASLt + overhead
 *
 *   weights      quantized projections as stored, small vectors as f32,
 *                token_embd (the lm_head too when tied) and output
 *   f16 weights  2 * n * k over every projection (the f16 GEMM path only);
 *                on the fp8 path n * k + 4 * n (codes and a scale a row) instead
 *   KV           n_attn * 2 (K and V) * seq * kv_heads * head_dim * the
 *                bytes of a value (q35_kv_value_bytes: 2 on the flash path,
 *                4 on f32 attention and when deterministic)
 *   recurrent    n_delta * 4 * (conv_dim * (K-1) + Hv * dv * dk)
 *   workspace    the chunk buffers (rows * the widths of q35_chunk_buf, each
 *                buffer rounded up to 256 bytes), the f32 attention scores
 *                (heads/kv * pass_rows * round_up(seq, 32) * 4, pass_rows
 *                clamped to [1, rows] by the scores budget), the f32 dequant
 *                scratch (4 * the largest projection's n * k), the f16
 *                activation scratch (2 * rows * the widest projection input),
 *                the chunked delta rule's workspace (kernels/delta_chunk.h,
 *                for rows rows), the token ids (4 * seq) and the tail
 *                (4 * (H + vocab), and the decode step's position: 8)
 *   cuBLASLt     the workspace of the model's cuBLASLt context
 *                (Q35_LT_WORKSPACE_BYTES, kernels/blas.h): on the fp8 path
 *                (kernels/fp8.h's GEMM) and on the f16 path unless its tuned
 *                GEMM is off (kernels/gemm_lt.h; gemm_lt_off); neither when
 *                deterministic
 *   overhead     Q35_CAPACITY_OVERHEAD: cuBLAS's own workspace, modules, rounding
 *
 * against the device's free memory. The candidates (chunk rows outer, attention
 * path inner, each in the caller's order of preference) are tried in turn; the
 * first that fits wins. rows = min(chunk rows, seq). */
#ifndef Q35_CAPACITY_H
#define Q35_CAPACITY_H

#include "core/error.h"
#include "model/cuda_options.h"
#include "model/qwen35.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define Q35_MIB ((uint64_t)1 << 20)
#define Q35_GIB ((uint64_t)1 << 30)
#define Q35_CAPACITY_OVERHEAD (512 * Q35_MIB)
#define Q35_CAPACITY_ALIGN 256 /* bytes every device buffer starts on */

/* The model's weights as the device holds them. */
typedef struct q35_weight_bytes {
    uint64_t uploaded;     /* everything uploaded: quantized as stored, vectors as f32 */
    uint64_t f16;          /* 2 * n * k over every projection */
    uint64_t fp8;          /* n * k + 4 * n over every projection: e4m3 codes and row scales */
    int64_t largest_proj;  /* max n * k over the projections: the f32 dequant scratch */
    int64_t widest_input;  /* max k over the projections: the f16 activation scratch per row */
} q35_weight_bytes;

/* Of a loaded model (each tensor's own type; 1-row weights and ssm_conv1d as f32). */
q35_weight_bytes q35_capacity_weights_of_model(const q35_model *m);

/* Of a shape with every 2-D weight (ssm_conv1d excepted: f32) in `type`, output
 * absent when tied. */
q35_weight_bytes q35_capacity_weights_of_shape(const q35_hparams *hp, q35_type type, bool tied);

/* The chunk buffers, [rows][width] floats each. */
typedef enum q35_chunk_buf {
    Q35_BUF_X,       /* [H] the residual stream */
    Q35_BUF_NORMED,  /* [H] RMSNorm of x (the mixer's, then the FFN's input) */
    Q35_BUF_PROJ,    /* [H] ssm_out / attn_output / ffn_down */
    Q35_BUF_MIX,     /* [conv_dim + Hv*dv + 2*Hv, rounded up to 4] the DeltaNet projections side by side:
                        [attn_qkv (the conv's input) | attn_gate (z) | ssm_alpha | ssm_beta] (one merged
                        GEMM on the fast paths, four into the slices elsewhere) */
    Q35_BUF_CONV_OUT,/* [conv_dim] after conv + SiLU: [q | k | v], q and k L2-normed */
    Q35_BUF_G,       /* [Hv] log decay */
    Q35_BUF_BETA,    /* [Hv] sigmoid(b) */
    Q35_BUF_O,       /* [Hv*dv] the delta rule's output, then gated-normed in place */
    Q35_BUF_Q_FULL,  /* [2*heads*hd + 2*kv*hd] attn_q (per head [q | gate]), then room for attn_k and
                        attn_v beside it: [q_full | k | v] (the merged GEMM over an f16 cache) */
    Q35_BUF_Q,       /* [heads*hd] q, normed and rotated in place */
    Q35_BUF_GATE,    /* [heads*hd] the output gate */
    Q35_BUF_K,       /* [kv*hd] attn_k before its norm (the normed K goes into the cache) */
    Q35_BUF_ATTN_O,  /* [heads*hd] attention output, gated in place */
    Q35_BUF_GU,      /* [2*ffn] [ffn_gate | ffn_up] side by side (one merged GEMM on the fast paths) */
    Q35_BUF_FFN_ACT, /* [ffn] silu(g) * u */
    Q35_BUF_COUNT
} q35_chunk_buf;

int64_t q35_chunk_buf_floats(const q35_hparams *hp, q35_chunk_buf b); /* width per row */
/* Where each DeltaNet projection's output starts in a row of Q35_BUF_MIX. */
typedef struct q35_mix_cols {
    int64_t qkv, z, alpha, beta, width;
} q35_mix_cols;
q35_mix_cols q35_mix_cols_of(const q35_hparams *hp);
uint64_t q35_align_bytes(uint64_t bytes); /* rounded up to Q35_CAPACITY_ALIGN */

/* The workspace of a prefill of up to `rows` rows per chunk ending at `seq`. */
typedef struct q35_workspace {
    int64_t rows;       /* rows per chunk */
    int64_t pass_rows;  /* f32 attention: query rows per pass (0 when no scores) */
    uint64_t chunk;     /* the chunk buffers */
    uint64_t scores;    /* f32 attention scores */
    uint64_t dequant;   /* f32 dequant scratch */
    uint64_t f16_act;   /* f16 activation scratch */
    uint64_t delta;     /* the chunked delta rule's workspace */
    uint64_t ids;       /* token ids */
    uint64_t tail;      /* normed row, logits and the decode step's position */
    uint64_t total;     /* the sum, each term aligned */
} q35_workspace;

/* Bytes of one KV cache value on these paths: 2 (an f16 cache) on the flash
 * path when not deterministic, else 4 (f32: the f32 attention, the
 * deterministic mode). The model's state holds the same (model/README.md). */
int q35_kv_value_bytes(q35_attn_path attention, bool deterministic);

/* rows = min(chunk_rows, seq). f32 scores only when attention is F32 and not
 * deterministic; the dequant scratch only on GEMM F32, the f16 scratch only on
 * GEMM F16, neither when deterministic; the delta workspace only on DELTA
 * CHUNKED (and not deterministic). */
q35_workspace q35_workspace_of(const q35_hparams *hp, const q35_weight_bytes *w, int64_t chunk_rows, int64_t seq,
                               q35_attn_path attention, q35_gemm_path gemm, q35_delta_path delta, bool deterministic,
                               size_t scores_budget);

/* What the plan is asked. */
typedef struct q35_capacity_request {
    const q35_hparams *hp;
    q35_weight_bytes weights;
    int64_t seq;                       /* positions a request holds */
    q35_gemm_path gemm;                /* F32, F16 or FP8 (then the f16 or fp8 set is counted) */
    q35_delta_path delta;              /* SCAN or CHUNKED (then its workspace is counted) */
    bool deterministic;
    bool gemm_lt_off;                  /* on F16: no cuBLASLt context (cublasGemmEx), its workspace not counted */
    size_t scores_budget;              /* bytes of one pass of one KV group's scores */
    uint64_t free_bytes;               /* the device's free memory */
    const q35_attn_path *attention;    /* candidates, most preferred first */
    int n_attention;
    const int64_t *chunk_rows;         /* candidates, most preferred first (the outer loop) */
    int n_chunk_rows;
} q35_capacity_request;

typedef struct q35_capacity_terms {
    uint64_t weights, f16_weights, kv, recurrent, workspace, overhead; /* f16_weights: the fp8 set on GEMM FP8 */
    uint64_t lt_workspace; /* the cuBLASLt context's workspace (0 where none is made) */
    uint64_t total;        /* the sum */
} q35_capacity_terms;

typedef struct q35_capacity_plan {
    bool fits;
    q35_attn_path attention;  /* the candidate chosen (or the last tried) */
    int64_t chunk_rows;       /* as asked (the workspace uses min(chunk_rows, seq)) */
    q35_workspace workspace;
    q35_capacity_terms terms;
    uint64_t free_bytes;
    int64_t seq;
    q35_gemm_path gemm;       /* as asked: names the prefill weight set ("f16 weights" / "fp8 weights") */
} q35_capacity_plan;

/* The terms of one candidate. */
q35_capacity_terms q35_capacity_terms_of(const q35_capacity_request *r, q35_attn_path attention, int64_t chunk_rows,
                                         q35_workspace *ws);

/* First fit over the candidates. 0 with the plan; -1 with every candidate's
 * arithmetic in err ("... weights 5012.3 MiB + ... = 150000.0 MiB > free
 * 139000.0 MiB") and the last candidate's terms in the plan. */
int q35_capacity_plan_make(q35_capacity_plan *plan, const q35_capacity_request *r, q35_error *err);

/* "weights 4562.1 + f16 0.0 + KV 256.0 + recurrent 37.5 + workspace 612.0 +
 * overhead 512.0 = 5979.6 MiB of 139000.0 MiB free" (with "+ cuBLASLt 32.0"
 * before the overhead where that term is not 0) */
const char *q35_capacity_str(const q35_capacity_plan *p, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

#endif /* Q35_CAPACITY_H */
