/* The CUDA model's options and paths (model/cuda_model.h loads with them,
 * model/paths.h resolves them): the path enums, the options of a load and the
 * paths a loaded model runs. Pure C, no CUDA: the capacity plan and the path
 * choices (and their CPU tests) use them without a device. */
#ifndef Q35_CUDA_OPTIONS_H
#define Q35_CUDA_OPTIONS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The prefill's attention: cuBLAS f32 over materialised scores, or the fused
 * flash kernel (f16 inputs, f32 accumulation). DEFAULT means "not chosen". */
typedef enum q35_attn_path { Q35_ATTN_DEFAULT = 0, Q35_ATTN_F32 = 1, Q35_ATTN_FLASH = 2 } q35_attn_path;

/* The prefill's projections: dequant + f32 SGEMM, or f16 weights (converted at
 * load) x f16-rounded activations with f32 accumulation, or (opt-in, sm_89+)
 * e4m3 weights (converted at load, a scale an output row) x e4m3 activations (a
 * scale a token) with f32 accumulation (kernels/fp8.h: its error is that of
 * e4m3, ~4e-2 rel L2 a projection; the model suites report what it costs). */
typedef enum q35_gemm_path { Q35_GEMM_DEFAULT = 0, Q35_GEMM_F32 = 1, Q35_GEMM_F16 = 2, Q35_GEMM_FP8 = 3 } q35_gemm_path;

/* Whether GEMM path g is a reduced-precision fast path (f16 or fp8): the chunked
 * delta rule's default, a weight set made at load. */
static inline bool q35_gemm_is_fast(q35_gemm_path g)
{
    return g == Q35_GEMM_F16 || g == Q35_GEMM_FP8;
}

/* The prefill's gated delta rule: the token-sequential scan (f32, bitwise its
 * per-token steps) or the chunked form on tensor cores (kernels/delta_chunk.h:
 * f16 operands, f32 state; its own workspace). */
typedef enum q35_delta_path { Q35_DELTA_DEFAULT = 0, Q35_DELTA_SCAN = 1, Q35_DELTA_CHUNKED = 2 } q35_delta_path;

/* The flash attention kernel over an f16 cache (the fast path's): the sm_90a
 * wgmma kernel (kernels/attention_flash_sm90.h), where the device runs it, or the
 * mma.sync one (kernels/attention_flash.h), which also reads an f32 cache.
 * DEFAULT: sm90 where it runs, else mma. */
typedef enum q35_flash_kernel {
    Q35_FLASH_KERNEL_DEFAULT = 0, Q35_FLASH_KERNEL_SM90 = 1, Q35_FLASH_KERNEL_MMA = 2
} q35_flash_kernel;

/* The f16 GEMM path's projections: cuBLASLt with its candidates timed per shape
 * (kernels/gemm_lt.h), cublasGemmEx's own choice (kernels/gemm.h), or the sm_90a
 * GEMM (kernels/gemm_sm90.h) where a weight's n is even and its k a multiple of
 * 64 (else cuBLASLt). DEFAULT: cublaslt. */
typedef enum q35_gemm_kernel {
    Q35_GEMM_KERNEL_DEFAULT = 0, Q35_GEMM_KERNEL_CUBLASLT = 1, Q35_GEMM_KERNEL_CUBLAS = 2, Q35_GEMM_KERNEL_SM90 = 3
} q35_gemm_kernel;

const char *q35_attn_path_name(q35_attn_path a); /* "f32", "flash", "default" */
const char *q35_flash_kernel_name(q35_flash_kernel k); /* "sm90", "mma", "default" */
const char *q35_gemm_kernel_name(q35_gemm_kernel k); /* "cublaslt", "cublas", "sm90", "default" */
/* The kernel a name names, or DEFAULT where it names none. */
q35_flash_kernel q35_flash_kernel_parse(const char *name);
q35_gemm_kernel q35_gemm_kernel_parse(const char *name);
const char *q35_gemm_path_name(q35_gemm_path g); /* "f32", "f16", "fp8", "default" */
const char *q35_delta_path_name(q35_delta_path d); /* "scan", "chunked", "default" */

/* The default rows per chunk on a discrete device, on one over the f16 or fp8
 * GEMM (the fast paths), and on a unified-memory one (the plan halves them
 * while memory is short): the fastest at the model's shapes
 * (bench/results/index.tsv, family prefill, the sweep's chunk axis). */
#define Q35_CHUNK_ROWS_DISCRETE 2048
#define Q35_CHUNK_ROWS_FAST 8192
#define Q35_CHUNK_ROWS_UNIFIED 2048

/* The options of a load. q35_cuda_options_init gives every field its "not set"
 * value, which defers to the environment variable, then to the default
 * (model/paths.h resolves them; model/README.md has the table). A kernel
 * variant is named as its op's registry names it (kernels/variant.h); a name
 * the program does not have, or one this device or these heads cannot run, is
 * a warning and the op's default. */
typedef struct q35_cuda_options {
    int device;              /* CUDA ordinal; -1: $Q35_DEVICE, else 0 */
    q35_attn_path attention; /* Q35_ATTN_DEFAULT: $Q35_PREFILL_ATTENTION, else flash where it runs, else f32 */
    q35_gemm_path gemm;      /* Q35_GEMM_DEFAULT: $Q35_PREFILL_GEMM, else f16 (the fast path; f32 where its
                                weight set does not fit) */
    q35_delta_path delta;    /* Q35_DELTA_DEFAULT: $Q35_PREFILL_DELTA, else chunked on the f16 GEMM path, the scan on f32 */
    int64_t chunk_rows;      /* 0: $Q35_PREFILL_CHUNK_ROWS, else Q35_CHUNK_ROWS_DISCRETE / _FAST / _UNIFIED */
    int deterministic;       /* -1: $Q35_DETERMINISTIC; 0 off; 1 on */
    int64_t max_seq;         /* positions a request holds: the plan's length (0: 4096) */
    size_t scores_budget;    /* 0: $Q35_ATTN_SCORES_BUDGET, else Q35_ATTN_SCORES_BUDGET (1 GiB) */
    uint64_t free_cap;       /* > 0: plan as if the device had at most this many bytes free */
    const char *flash_variant;       /* a variant of the chosen flash kernel's registry (sm90 or mma);
                                        NULL: $Q35_FLASH_VARIANT, else that kernel's default here */
    const char *delta_rule_variant;  /* NULL: $Q35_DELTA_RULE_VARIANT, else the scan's default for these heads */
    const char *delta_chunk_variant; /* NULL: $Q35_DELTA_CHUNK_VARIANT, else the chunked delta rule's default */
    const char *gemm_sm90_variant;   /* NULL: $Q35_GEMM_SM90_VARIANT, else the sm_90a GEMM's default */
    const char *gemv_q8_variant;     /* NULL: $Q35_GEMV_Q8_VARIANT, else the 8-bit-activation GEMV's default */
    q35_flash_kernel flash_kernel;   /* DEFAULT: $Q35_FLASH_KERNEL, else sm90 where it runs */
    q35_gemm_kernel gemm_kernel;     /* DEFAULT: $Q35_GEMM_KERNEL, else cublaslt */
    const char *switches;            /* "name=on|off,...": the switches of model/paths.h (fusions, the
                                        last layer's pruning, graphs, ...); each name given overrides
                                        $Q35_SWITCHES's, which overrides its default; NULL: none */
    bool quiet;              /* no stderr lines (warnings and notes go to q35_cuda_model_info's log) */
} q35_cuda_options;

void q35_cuda_options_init(q35_cuda_options *o);

/* The paths a loaded model runs, every field explicit. */
typedef struct q35_cuda_paths {
    q35_attn_path attention; /* Q35_ATTN_F32 or Q35_ATTN_FLASH (the prefill's; decode is always per token) */
    q35_gemm_path gemm;      /* Q35_GEMM_F32, Q35_GEMM_F16 or Q35_GEMM_FP8 */
    q35_delta_path delta;    /* Q35_DELTA_SCAN or Q35_DELTA_CHUNKED (the prefill's; decode steps the scan) */
    int64_t chunk_rows;      /* rows per prefill chunk, >= 1 */
    bool deterministic;      /* batch-invariant projections and attention (GEMM and attention above unused) */
    size_t scores_budget;    /* bytes of one pass of one KV group's f32 scores */
    int flash_variant;       /* the mma flash kernel's variant: an index of kernels/attention_flash.h's registry */
    int flash_sm90_variant;  /* the sm_90a flash kernel's (where flash_sm90): kernels/attention_flash_sm90.h's */
    int delta_rule_variant;  /* the scan's (prefill and decode alike): kernels/delta_rule.h's */
    int delta_chunk_variant; /* the chunked delta rule's: kernels/delta_chunk.h's */
    int gemm_sm90_variant;   /* the sm_90a GEMM's (where it runs: gemm_sm90 below): kernels/gemm_sm90.h's */
    int gemv_q8_variant;     /* the 8-bit-activation GEMV's (where decode-q8 runs it): kernels/gemv_q8.h's */
    /* The kernel choices and the switches (model/paths.h has the switches' names and
     * defaults, model/README.md what each measured): */
    bool flash_sm90;         /* flash over the f16 cache through the sm_90a kernel
                                (kernels/attention_flash_sm90.h) instead of the mma.sync one:
                                flash kernel sm90 (the default), where the device runs it */
    bool gemm_lt_off;        /* the f16 path's GEMMs through cublasGemmEx's default algorithm
                                (kernels/gemm.h) instead of the cuBLASLt context that times
                                cuBLASLt's candidates per shape (kernels/gemm_lt.h): GEMM kernel cublas */
    bool gemm_sm90_proj;     /* the f16 path's projections with f32 out through the sm_90a GEMM
                                (q35_gemm_sm90_f32, kernels/gemm_sm90.h) instead of the tuned
                                cuBLASLt context, where a weight's n is even and its k a multiple
                                of 64, where gemm_sm90: GEMM kernel sm90 */
    bool gemm_sm90;          /* the sm_90a [gate | up] GEMM (kernels/gemm_sm90.h) runs here: the
                                device, and this model's FFN (n_ff a multiple of 128, n_embd of 64) */
    bool split_proj;         /* switch merge=off: the fast GEMM paths run each projection alone
                                instead of the merged groups ([qkv | z | alpha | beta],
                                [gate | up], [q | k | v]) */
    bool gemm_swiglu;        /* switch swiglu (on): the f16 path's merged [gate | up] GEMM and
                                SwiGLU as one sm_90a kernel (q35_gemm_swiglu_sm90_f16: SwiGLU in
                                its epilogue, ffn_down's f16 input written there;
                                model/cuda_layers.c, ffn_swiglu_sm90) instead of the tuned GEMM's
                                f32 [gate | up] and the swiglu op, where gemm_sm90 */
    bool f16_gu;             /* switch f16-gu=on: the f16 path's merged [gate | up] written in f16
                                instead of f32 by the tuned GEMM (model/cuda_layers.c, ffn_gu16;
                                without the tuned GEMM always f32) */
    bool fp8_gu_f32;         /* switch fp8-gu-bf16=off: the fp8 path's merged [gate | up] written
                                in f32 instead of bf16 (model/cuda_layers.c, ffn_gu16) */
    bool gemm_tune_steady;   /* switch tune-steady=on: the tuned context times its candidates as
                                the prefill runs them (kernels/gemm_lt.h, Q35_HGEMM_TUNE_STEADY) */
    bool delta_prep_chain;   /* switch prep=off: the DeltaNet prologue of a chunk as three launches
                                (conv1d, l2norm, gates) instead of the fused q35_delta_prep_rows
                                (the same bits) */
    bool delta_qk16;         /* switch qk16 (on): the fused DeltaNet prologue writes q and k as
                                f16 in the chunked delta rule's workspace
                                (q35_delta_prep_rows_qk16), which reads them there
                                (q35_delta_chunk_qk16): the same bits, less traffic; where
                                q35_paths_delta_qk16 and the rule's variant is of tb4's formulation */
    bool flash_gate;         /* switch gate=on: the f16 GEMM path's attention output gate in the
                                sm_90a flash kernel's epilogue
                                (q35_attention_prefill_flash_sm90_gated_f16; the same bits) instead
                                of its own op (out_gate, q35_sigmoid_gate_rows_f16) */
    bool prune_off;          /* switch prune=off: the last layer over every row of a chunk, as
                                every other layer, instead of pruned (q35_paths_prune) */
    bool graphs;             /* switch graphs=on: a prefill chunk's layers launched as CUDA graphs,
                                one a layer (model/cuda_graph.c; the same bits as plain
                                launches), where q35_paths_graph_ok */
    bool decode_graph;       /* switch decode-graph (on): the decode step as one CUDA graph,
                                captured once and replayed (model/cuda_graph.c; the same bits as
                                plain launches), on every path */
    bool decode_q8;          /* switch decode-q8: a decode step's projections (and lm_head) with
                                their activations rounded to 8 bits a block of 32 and integer
                                dot products (kernels/gemv_q8.h), where q35_paths_decode_q8; not
                                the exact GEMV's bits: the fast decode, with its own tier */
    bool decode_split;       /* switch decode-split: a decode step's attention over an f16 cache
                                split over the cache (kernels/attention_decode_split.h), where
                                q35_paths_decode_split; not the exact decode kernel's bits */
    bool decode_pdl;         /* switch decode-pdl: a decode step's 8-bit-activation GEMVs launched
                                early (q35_gemv_q8_group_early: each starts while the grid before
                                finishes, then waits for it), where q35_paths_decode_pdl; the same bits */
    bool decode_fuse;        /* switch decode-fuse: a decode step's residual and gated norms write the
                                8-bit form of their output too (q35_rmsnorm_q8, q35_add_rmsnorm_q8,
                                q35_gated_rmsnorm_q8), where q35_paths_decode_fuse; the same bits */
    bool decode_act_q8;      /* switch decode-act-q8: a decode step's SwiGLU, attention output gate,
                                gated norm and RMSNorms write the 8-bit form of their output too, over
                                many blocks (q35_swiglu_q8, q35_sigmoid_gate_q8, q35_gated_rmsnorm_q8,
                                q35_rmsnorm_q8), the output projections adding into the residual
                                (q35_gemv_q8_add, so no norm adds), where q35_paths_decode_act_q8;
                                the same bits */
    bool decode_overlap;     /* switch decode-overlap: in the decode graph, every edge into a kernel that
                                waits for the grid before it at its start made programmatic, so that
                                kernel launches once every block of the one before has started
                                (model/cuda_graph.c), where q35_paths_decode_overlap; the same bits */
} q35_cuda_paths;

/* Whether a prefill on GEMM path gemm runs its projections through the f16
 * path's tuned cuBLASLt context: GEMM f16, not deterministic, not GEMM kernel
 * cublas (the capacity plan counts the context's workspace then). */
static inline bool q35_gemm_tuned_f16(q35_gemm_path gemm, bool deterministic, bool gemm_lt_off)
{
    return gemm == Q35_GEMM_F16 && !deterministic && !gemm_lt_off;
}

/* Whether paths p run the prefill's projections through the f16 GEMM path's
 * tuned cuBLASLt context (kernels/gemm_lt.h): a shape's first call then times
 * cuBLASLt's candidates (~32 GEMMs of it), so a first prefill pays that and a
 * measurement runs one untimed first. */
static inline bool q35_paths_tune_gemm(const q35_cuda_paths *p)
{
    return q35_gemm_tuned_f16(p->gemm, p->deterministic, p->gemm_lt_off);
}

/* Whether paths p take the attention output gate in the sm_90a flash kernel's
 * epilogue (a prefill over an f16 cache; model/cuda_layers.c): asked for, on
 * the f16 GEMM path (not deterministic) with flash through the sm_90a kernel. */
static inline bool q35_paths_flash_gate(const q35_cuda_paths *p)
{
    return p->flash_gate && p->flash_sm90 && p->attention == Q35_ATTN_FLASH && p->gemm == Q35_GEMM_F16 &&
           !p->deterministic;
}

/* Whether paths p write q and k as f16 into the chunked delta rule's
 * workspace in the fused DeltaNet prologue (model/cuda_layers.c, delta_qk16,
 * which also wants the rule's variant of tb4's formulation): asked for, on the
 * chunked rule with the fused prologue (not deterministic). */
static inline bool q35_paths_delta_qk16(const q35_cuda_paths *p)
{
    return p->delta_qk16 && p->delta == Q35_DELTA_CHUNKED && !p->delta_prep_chain && !p->deterministic;
}

/* Whether paths p run the FFN's [gate | up] GEMM and SwiGLU as the one sm_90a
 * kernel (a prefill's merged projection; model/cuda_layers.c): asked for,
 * where it runs, on the f16 GEMM path (not deterministic) with the
 * projections merged. */
static inline bool q35_paths_gemm_swiglu(const q35_cuda_paths *p)
{
    return p->gemm_swiglu && p->gemm_sm90 && p->gemm == Q35_GEMM_F16 && !p->deterministic && !p->split_proj;
}

/* Whether paths p run the f16 path's f32-out projections through the sm_90a
 * GEMM (model/cuda_layers.c, gemm_f16_rows): asked for, where it runs, on the
 * f16 GEMM path (not deterministic). */
static inline bool q35_paths_gemm_sm90_proj(const q35_cuda_paths *p)
{
    return p->gemm_sm90_proj && p->gemm_sm90 && p->gemm == Q35_GEMM_F16 && !p->deterministic;
}

/* Whether paths p can launch a prefill chunk's layers as CUDA graphs
 * (model/cuda_graph.c): where every launch of a layer is a unit's kernel or
 * goes through one of the model's own cuBLASLt contexts (their workspaces
 * allocated with them): the f16 GEMM through the tuned context, or the fp8
 * GEMM, with flash attention; or the deterministic path (GEMV rows,
 * decode-rows attention). The paths that call cuBLAS itself (the f32 GEMM,
 * cublasGemmEx, GEMM kernel cublas, f32 attention) launch plainly: under a
 * capture cuBLAS may take its workspace by a stream-ordered allocation inside
 * the graph, which the model does not manage. */
static inline bool q35_paths_graph_ok(const q35_cuda_paths *p)
{
    return p->deterministic ||
           (p->attention == Q35_ATTN_FLASH && (q35_paths_tune_gemm(p) || p->gemm == Q35_GEMM_FP8));
}

/* Whether paths p launch a prefill chunk's layers as CUDA graphs: asked for and able. */
static inline bool q35_paths_graphs(const q35_cuda_paths *p)
{
    return p->graphs && q35_paths_graph_ok(p);
}

/* Whether paths p run a decode step's projections with 8-bit activations
 * (model/cuda_layers.c, token_q8): asked for, on the f16 or fp8 GEMM path
 * (not deterministic: the parity oracle keeps the exact GEMV; the fast paths'
 * activation scratch holds the quantized x). */
static inline bool q35_paths_decode_q8(const q35_cuda_paths *p)
{
    return p->decode_q8 && !p->deterministic && (p->gemm == Q35_GEMM_F16 || p->gemm == Q35_GEMM_FP8);
}

/* Whether paths p run a decode step's attention split over the cache
 * (model/cuda_layers.c, attend_decode): asked for, on the flash path (its f16
 * cache), not deterministic (the parity oracle keeps the exact kernel); taken
 * on a state of Q35_DECODE_SPLIT_MIN_SEQ positions or more (below, the exact
 * kernel's one block a head is no slower: bench_attention decode_f16). */
#define Q35_DECODE_SPLIT_MIN_SEQ 1024
static inline bool q35_paths_decode_split(const q35_cuda_paths *p)
{
    return p->decode_split && !p->deterministic && p->attention == Q35_ATTN_FLASH;
}

/* Whether paths p launch a decode step's 8-bit-activation GEMVs early: asked
 * for, where those GEMVs run (q35_paths_decode_q8). */
static inline bool q35_paths_decode_pdl(const q35_cuda_paths *p)
{
    return p->decode_pdl && q35_paths_decode_q8(p);
}

/* Whether paths p fuse a decode step's norms with their 8-bit form: asked for,
 * where the 8-bit GEMVs run (q35_paths_decode_q8). */
static inline bool q35_paths_decode_fuse(const q35_cuda_paths *p)
{
    return p->decode_fuse && q35_paths_decode_q8(p);
}

/* Whether paths p fuse a decode step's SwiGLU, output gate and norms with
 * their 8-bit form (the output projections adding into the residual): asked
 * for, where the 8-bit GEMVs run. */
static inline bool q35_paths_decode_act_q8(const q35_cuda_paths *p)
{
    return p->decode_act_q8 && q35_paths_decode_q8(p);
}

/* Whether paths p overlap a decode graph's kernels with the ones before them:
 * asked for, where the step is a graph (model/cuda_graph.c makes an edge
 * programmatic only into a kernel it knows to wait first). */
static inline bool q35_paths_decode_overlap(const q35_cuda_paths *p)
{
    return p->decode_overlap && p->decode_graph;
}

/* Whether a prefill on paths p prunes its last layer (model/cuda_layers.c,
 * keep_rows). A prefill's outputs are the state (every layer's caches and
 * DeltaNet states) and the logits of the rows asked for; in the last layer
 * nothing after its mixing op (attention, or the delta rule) reaches the
 * state, so a chunk's last layer goes on past it over the rows whose logits
 * the call wants only, and over none where it wants none (every chunk of a
 * call without logits, and every chunk but the last of a call with the last
 * position's): the output gate, the output projection and the FFN of the rows
 * no logit needs are not computed, nor the last attention layer's attention
 * of those rows (a few kept rows each attend as a decode step does; none
 * kept, no attention). At the 9B's 4k that is ~1.4 TFLOP of the ~56.7 a
 * prefill's projections take (2.4 %): the FFN and output projection of one
 * layer in 32, over 4095 rows of 4096. The state is bitwise the unpruned call's (the same launches
 * up to that op); the kept rows' logits are the same math over fewer rows
 * (the f16 path's GEMMs then take other algorithms, other last bits). On
 * every prefill path but the deterministic one (whose batched-versus-per-
 * token identity the suites hold bitwise) and the CUDA graphs' (whose
 * captures are bitwise plain launches of the same rows); off with the
 * switch prune=off. */
static inline bool q35_paths_prune(const q35_cuda_paths *p)
{
    return !p->prune_off && !p->deterministic && !q35_paths_graphs(p);
}

/* A pruned last attention layer keeping at most this many rows of a chunk
 * computes their attention alone, each as a decode step at its position; more,
 * the chunk's attention over every row, then the kept rows gathered. */
#define Q35_PRUNE_DECODE_MAX 4

#ifdef __cplusplus
}
#endif

#endif /* Q35_CUDA_OPTIONS_H */
