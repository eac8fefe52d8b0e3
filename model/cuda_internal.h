/* The CUDA model's insides, shared by its files (not a public header):
 *
 *   cuda_model.c    load (plan, upload, f16 prewarm), paths, the workspace
 *   cuda_weight_sets.c  the fast GEMM paths' weight sets (f16, fp8)
 *   cuda_state.c    the per-request state
 *   cuda_project.c  the projections: the per-call GEMV or GEMM, the fast paths'
 *                   GEMM inputs, a decode step's grouped GEMVs
 *   cuda_layers.c   the DeltaNet, attention and FFN compositions over T rows,
 *                   with the projection and attention chosen per call
 *   cuda_forward.c  the refusals, the chunk loop, the tail: prefill and decode
 *   cuda_graph.c    a prefill chunk's layers as CUDA graphs (paths.graphs)
 *   cuda_trace.c    NVTX ranges and the per-op CUDA event timing */
#ifndef Q35_CUDA_INTERNAL_H
#define Q35_CUDA_INTERNAL_H

#include "kernels/attention.h"
#include "kernels/blas.h"
#include "kernels/delta_prep.h"
#include "kernels/delta_rule.h"
#include "kernels/gemv.h"
#include "model/capacity.h"
#include "model/cuda_model.h"
#include "model/paths.h"

#include <stdbool.h>
#include <stdint.h>

/* A projection on the device: W [n][k] as stored, and its f16 copy once built. */
typedef struct q35_dweight {
    const void *w;        /* n rows of q35_row_bytes(type, k) */
    q35_type type;
    int64_t n, k;         /* outputs, inputs */
    uint16_t *w16;        /* [n][k] f16, NULL until the f16 set is built */
    uint8_t *w8;          /* [n][k] e4m3, NULL until the fp8 set is built */
    float *s8;            /* [n] its scales (kernels/fp8.h) */
    char label[40];       /* "proj attn_qkv": its NVTX range */
} q35_dweight;

/* A layer on the device: projections as stored, small vectors as f32. */
typedef struct q35_dlayer {
    q35_layer_kind kind;
    int index;                        /* layer number */
    int slot;                         /* index among layers of its kind: its state slot */
    float *attn_norm, *post_norm;     /* [H] */
    q35_dweight ffn_gate, ffn_up;     /* [ffn][H] */
    q35_dweight ffn_down;             /* [H][ffn] */
    /* The merged projections of the fast GEMM paths (cuda_weight_sets.c, q35_weight_set_build):
     * a group's rows side by side in the f16 / fp8 set, one weight of their
     * summed outputs (w NULL: no stored form; zero until the set is built):
     * gu [gate | up]; mix [qkv | z | alpha | beta]; qkv_a [q | k | v]. */
    q35_dweight gu, mix, qkv_a;
    /* DeltaNet */
    q35_dweight qkv;                  /* [conv_dim][H] */
    q35_dweight z;                    /* [Hv*dv][H] attn_gate */
    q35_dweight alpha, beta;          /* [Hv][H] */
    q35_dweight ssm_out;              /* [H][Hv*dv] */
    float *conv_w;                    /* [conv_dim][K] */
    float *dt, *a;                    /* [Hv] ssm_dt.bias, ssm_a */
    float *ssm_norm;                  /* [dv] */
    /* attention */
    q35_dweight q, k, v, o;           /* [2*heads*hd][H], [kv*hd][H] x2, [H][heads*hd] */
    float *q_norm, *k_norm;           /* [hd] */
} q35_dlayer;

/* The per-op event timer (cuda_trace.c): a pair of events around each op. */
typedef struct q35_timer {
    void **ev;            /* cudaEvent_t pairs: [2*i] start, [2*i+1] end */
    q35_op *op;           /* what pair i timed */
    int n, cap;           /* pairs recorded, pairs created */
} q35_timer;

/* What a captured decode step bakes in besides the model and its paths: the
 * state's arrays and their layout (max_seq), its cache element, the workspace,
 * whether it ends in the logits. */
typedef struct q35_decode_key {
    const void *conv, *ssm, *k_cache, *v_cache;
    int64_t max_seq;
    bool kv_f16;
    const void *ws_mem;
    bool tail;            /* the step computes logits */
} q35_decode_key;

/* Decode graphs kept: states decoded in turn, each with and without logits,
 * replay their own instead of capturing anew at every step. */
#define Q35_DECODE_GRAPHS 8

/* The prefill's CUDA graphs (cuda_graph.c): an executable graph per (layer,
 * chunk kind), and the chunk row counts (with the cache element) that ran plain
 * since the paths were set. */
#define Q35_GRAPH_WARM 8
typedef struct q35_graphs {
    void **exec;                     /* cudaGraphExec_t [n][2]: kind 0 chunk_rows rows, 1 any other; NULL until made */
    int n;                           /* layers */
    int64_t warm[Q35_GRAPH_WARM];    /* (row count, cache element) run plain: 2 T + kv_f16 */
    int n_warm;
    void *decode[Q35_DECODE_GRAPHS]; /* cudaGraphExec_t: decode steps, NULL until made */
    q35_decode_key decode_key[Q35_DECODE_GRAPHS]; /* what each was captured over */
    int64_t decode_used[Q35_DECODE_GRAPHS];       /* when each last ran (a count of launches): the
                                                     least recent is captured over first */
    q35_cuda_graph_stats stats;
} q35_graphs;

struct q35_cuda_model {
    q35_hparams hp;
    q35_cuda_options opts;           /* as given */
    q35_cuda_info info;
    q35_cuda_paths paths;            /* in effect */
    q35_weight_bytes wbytes;
    q35_attn_shape attn;             /* the attention heads on the device */
    q35_stream stream;               /* every launch of this model */
    q35_blas blas;                   /* bound to stream */
    void *weights;                   /* one allocation: every weight */
    void *f16;                       /* one allocation: the f16 set (or NULL) */
    void *fp8;                       /* one allocation: the fp8 set (or NULL) */
    struct q35_fp8_gemm *fp8_gemm;   /* cuBLASLt for the fp8 set (made with it) */
    struct q35_hgemm *hgemm;         /* cuBLASLt, tuned, for the f16 set (made on the f16 path unless gemm_lt_off) */
    q35_dlayer *layers;              /* [hp.n_layer] */
    const void *embd;                /* token_embd as stored */
    q35_type embd_type;
    const void *lm_head;             /* output as stored (embd when tied) */
    q35_type lm_type;
    float *output_norm;              /* [H] */
    /* the workspace (q35_workspace_of), grown as calls need, never shrunk */
    void *ws_mem;
    q35_workspace ws;
    float *buf[Q35_BUF_COUNT];       /* [ws.rows][q35_chunk_buf_floats] each */
    float *scores, *dequant;
    uint16_t *f16_act;
    void *delta_ws;                  /* the chunked delta rule's workspace (ws.delta bytes) */
    int32_t *ids;                    /* the call's token ids */
    float *tail_row, *logits;        /* [H], [vocab] */
    int64_t *dpos;                   /* the decode step's position, on the device: the per-token
                                        path's position-dependent launches read it (kernels' _at
                                        forms), so its launches are the same at every step */
    struct q35_step_in {
        int64_t pos;
        int32_t token;
    } *step_in;                      /* page-locked: a decode step's position and token, copied to
                                        dpos and ids from here (one DMA each, no staging) */
    void *step_in_copied;            /* the event after those copies: the next step waits on it
                                        before it writes them */
    q35_timer timer;
    q35_graphs graphs;
};

struct q35_cuda_state {
    int device;
    int64_t max_seq, kv_len;
    bool broken;                     /* a call failed after its checks: reset before use */
    int n_delta, n_attn;
    int64_t conv_len, ssm_len, kv_dim;
    void *mem;                       /* one allocation */
    float *conv;                     /* [n_delta][conv_dim][K-1] */
    float *ssm;                      /* [n_delta][Hv][dv][dk] */
    int kv_capacity_bytes;           /* bytes a cache value was allocated (q35_kv_value_bytes of the
                                        paths at creation): 4 holds either element, 2 only f16 */
    bool kv_f16;                     /* the caches hold f16 (else f32): chosen by the first call
                                        after a reset, from its paths; kept while kv_len > 0 */
    void *k_cache, *v_cache;         /* [n_attn][max_seq][kv_dim] of f32 or f16 */
    q35_stream stream;               /* the model's stream, for the state's own copies */
};

/* One chunk (or one decode token) in flight. */
typedef struct q35_run q35_run;
typedef int (*q35_project_fn)(q35_run *r, float *y, int64_t ldy, const float *x, const q35_dweight *w);
typedef int (*q35_attend_fn)(q35_run *r, float *o, const float *q, const void *k_cache, const void *v_cache);

struct q35_run {
    q35_cuda_model *cm;
    q35_cuda_state *st;
    int64_t T;                /* rows of this chunk */
    int64_t pos;              /* position of its first row */
    bool per_token;           /* decode: the per-token launchers; the position in cm->dpos */
    int64_t pass_rows;        /* f32 attention: query rows per pass */
    q35_project_fn project;
    q35_attend_fn attend;
    const float *x16_of;      /* f16 GEMM: the x whose rounding cm->f16_act holds (NULL: none); any op
                                 but a projection clears it (q35_op_begin) */
    const float *xq_of;       /* decode-q8: the x whose 8-bit form cm->f16_act holds, written by a norm
                                 with it (switch decode-fuse); cleared as x16_of is */
    bool f16_inputs;          /* the f16 GEMM path (prefill, not deterministic): the residual norms, the
                                 gated norm and SwiGLU write their projections' input as f16 straight
                                 into cm->f16_act (x16_of), its f32 copy not written; and the output
                                 projections add into x in their GEMM (q35_gemm_f16_rounded_add), no
                                 residual left pending */
    bool fp8_inputs;          /* the fp8 GEMM path: the residual norms and SwiGLU write e4m3 codes and a
                                 scale a row into cm->f16_act (kernels/fp8.h's layout) instead; the output
                                 projections add into x in their GEMM (q35_gemm_fp8_add) as on f16 */
    bool merge;               /* the fast GEMM paths (f16, fp8): the projections that share an input run as
                                 their merged weight (q35_dlayer's gu, mix), one GEMM */
    const float *x16_only;    /* the x of the last such op: its f16 rounding is its only copy */
    bool residual_pending;    /* x += PROJ not yet done: the next residual RMSNorm adds it first
                                 (q35_add_rmsnorm_rows), the last layer's FFN adds it itself */
    bool prune;               /* this chunk's last layer goes on past its mixing op over the rows
                                 keep_at names only (q35_paths_prune; cuda_forward.c sets it) */
    const int64_t *keep_at;   /* the positions of this chunk whose logits the call wants, ascending */
    int64_t n_keep;           /* how many (0: none) */
    q35_op_times *times;      /* NULL: no timing */
    int timing_rc;            /* -1 once a timing call failed (the call then fails) */
    q35_error *err;
};

/* cuda_paths.c: the load's path helpers that need the kernels; they call neither
 * cuda_model.c nor cuda_layers.c. */
/* The variants of the path choice c looked up in their registries into
 * cm->paths (the flash kernel's chosen there already); -1 when an option names
 * a variant its registry does not have. */
int q35_model_pick_variants(q35_cuda_model *cm, const q35_path_choice *c, q35_error *err);
/* Whether a flash (mma) variant, and a scan variant, runs for cm here: 1, or 0
 * with the reason (where flash does not run at all, the attention path says so,
 * not the variant). */
int q35_model_flash_runs(int variant, const void *cm, q35_error *why);
int q35_model_delta_rule_runs(int variant, const void *cm, q35_error *why);
/* hp's delta-rule heads (kernels/delta_rule.h's q35_delta_dims). */
q35_delta_dims q35_model_delta_dims(const q35_hparams *hp);
/* The fused DeltaNet prologue's heads (kernels/delta_prep.h) of hp, and
 * whether the kernel takes them. */
q35_delta_prep_dims q35_model_delta_prep_dims(const q35_hparams *hp);
bool q35_model_delta_prep_fits(const q35_hparams *hp);

/* cuda_project.c: the projections. */
/* The per-call projection y [T][ldy] = x [T][k] W^T (q35_run_choose's): decode
 * (q35_gemv), deterministic (q35_gemv_rows), the prefill's GEMMs (f32, f16, fp8). */
int q35_project_gemv(q35_run *r, float *y, int64_t ldy, const float *x, const q35_dweight *w);
int q35_project_gemv_rows(q35_run *r, float *y, int64_t ldy, const float *x, const q35_dweight *w);
int q35_project_gemm_f32(q35_run *r, float *y, int64_t ldy, const float *x, const q35_dweight *w);
int q35_project_gemm_f16(q35_run *r, float *y, int64_t ldy, const float *x, const q35_dweight *w);
int q35_project_gemm_fp8(q35_run *r, float *y, int64_t ldy, const float *x, const q35_dweight *w);
/* What a fast path's GEMM writes: y = x W^T (f32), y += x W^T (f32, beta = 1 in
 * the GEMM: an output projection's residual add), or y = x W^T rounded to 16
 * bits, bf16 on the fp8 path (q35_gemm_fp8_bf16) and f16 on the f16 path's
 * tuned GEMM (q35_hgemm_rounded_f16): the merged [gate | up], which only
 * SwiGLU's 16-bit-input forms read. */
typedef enum q35_gemm_out { Q35_OUT_F32, Q35_OUT_F32_ADD, Q35_OUT_16 } q35_gemm_out;
/* A fast GEMM's input form made from x into the activation scratch (f16, or e4m3 codes and scales). */
typedef int (*q35_input_fn)(q35_run *r, const float *x, const q35_dweight *w);
int q35_round_f16(q35_run *r, const float *x, const q35_dweight *w);
/* The scratch's form of x for w made by `make` unless it holds it already (r->x16_of). */
int q35_gemm_input(q35_run *r, const float *x, const q35_dweight *w, q35_input_fn make);
/* The fp8 input's codes [T][k], then its scales [T], in the activation scratch. */
uint8_t *q35_fp8_codes(q35_run *r);
float *q35_fp8_scales(q35_run *r, int64_t k);
/* Whether the f16 path's GEMMs run through the tuned cuBLASLt context, not cublasGemmEx. */
bool q35_hgemm_tuned(const q35_run *r);
/* The f16 path's GEMM from f16 rows x16 (sm90: through the sm_90a GEMM where w fits it), from x
 * (its f16 form made first), and the fp8 path's from x; each writes y as `out` says. */
int q35_proj_f16_rows(q35_run *r, void *y, int64_t ldy, const uint16_t *x16, const q35_dweight *w, q35_gemm_out out,
                      bool sm90);
int q35_proj_f16(q35_run *r, void *y, int64_t ldy, const float *x, const q35_dweight *w, q35_gemm_out out);
int q35_proj_fp8(q35_run *r, void *y, int64_t ldy, const float *x, const q35_dweight *w, q35_gemm_out out);
/* A projection's op (NVTX range `label`, its 2 T n k FLOP counted) begun; one projection as an op. */
void q35_proj_begin(q35_run *r, const q35_dweight *w, const char *label);
int q35_proj(q35_run *r, float *y, int64_t ldy, const float *x, const q35_dweight *w);
/* Whether a decode step's projections of a k-input take the 8-bit-activation GEMV (switch decode-q8). */
bool q35_token_q8(const q35_run *r, int64_t k);

/* A decode step's 8-bit-activation GEMV of parts of one type on xq (kernels/gemv_q8.h),
 * launched early where the switch decode-pdl takes it (q35_paths_decode_pdl). */
int q35_token_gemv_q8(const q35_run *r, const q35_gemv_part *parts, int count, q35_type type, int64_t k,
                      const void *xq);
/* The projections of one input x (each w[i] of its k inputs): w[i] into y[i] (row stride ldy[i]); a
 * decode step's of one type as one grouped GEMV (n <= Q35_GEMV_GROUP_MAX). */
int q35_proj_many(q35_run *r, float *const *y, const int64_t *ldy, const float *x, const q35_dweight *const *w,
                  int n);

/* cuda_layers.c: the projection and attention of a call (decode, deterministic,
 * or the prefill paths), and the layer compositions over r->T rows. */
void q35_run_choose(q35_run *r);
int q35_layer_deltanet(q35_run *r, const q35_dlayer *l);
int q35_layer_attention(q35_run *r, const q35_dlayer *l);
/* Output norm and lm_head of chunk row `row` into cm->logits. */
int q35_layer_tail(q35_run *r, int64_t row);

/* cuda_model.c: the workspace for chunks of up to `rows` rows ending at `seq`. */
int q35_workspace_ensure(q35_cuda_model *cm, int64_t rows, int64_t seq, q35_error *err);

/* A bump allocator over one device allocation: q35_arena_take gives the next
 * `bytes` (rounded up to Q35_CAPACITY_ALIGN), NULL past its size. */
typedef struct q35_arena {
    char *base;
    uint64_t used, size;
} q35_arena;

static inline void *q35_arena_take(q35_arena *a, uint64_t bytes)
{
    void *p = a->base + a->used;
    a->used += q35_align_bytes(bytes);
    return a->used <= a->size ? p : NULL;
}

/* cuda_weight_sets.c: builds the prefill weight set of a fast GEMM path (f16:
 * every projection converted once; fp8: quantized, on a device with FP8) when
 * it fits with 1 GiB to spare (fp8: and a dequant scratch for the largest
 * weight): 1 when built (or not needed), 0 when not (said in the load's log),
 * -1 on a device error. */
int q35_weight_set_build(q35_cuda_model *cm, q35_gemm_path gemm, q35_error *err);

/* cuda_graph.c: whether this chunk's layers run as graphs (the paths' graphs
 * on, not per token, not timed, its row count run plain before); after a plain
 * prefill chunk (timed or not), its row count noted; one layer captured by body and launched as a
 * graph; the executable graphs dropped (the paths changed, or the model's free). */
/* What a graph captures: a layer's launches (l), or a decode step's (l NULL). */
typedef int (*q35_graph_body)(q35_run *r, const q35_dlayer *l);
bool q35_graphs_chunk(q35_run *r);
void q35_graphs_ran_plain(q35_run *r);
int q35_graphs_layer(q35_run *r, const q35_dlayer *l, q35_graph_body body);
void q35_graphs_reset(q35_cuda_model *cm);
/* The decode step (body: everything from the embedding to the logits on the
 * device) launched as the decode graph: captured where there is none or what
 * it baked in changed (q35_decode_key), else the kept one replayed. */
int q35_graphs_decode(q35_run *r, q35_graph_body body);

/* cuda_trace.c */
void q35_trace_push(const char *name);
void q35_trace_pop(void);
void q35_op_begin(q35_run *r, q35_op op, const char *name);
int q35_op_end(q35_run *r, int rc); /* rc, or -1 when the op's timing failed */
void q35_op_flop(q35_run *r, q35_op op, double flop); /* op's FLOP (q35_op_times) counted, where the call is timed */
int q35_timer_collect(q35_cuda_model *cm, q35_op_times *times, q35_error *err); /* sync, add, reset */
void q35_timer_free(q35_timer *t);

#endif /* Q35_CUDA_INTERNAL_H */
