/* The Qwen3.5 model on the GPU (SPEC §3): the CUDA units of kernels/ composed in
 * the op order of the float64 CPU reference (model/ref_model.c), over chunks of
 * rows (prefill) or one token (decode).
 *
 *   load      the capacity plan first (model/capacity.h: weights + KV + recurrent
 *             state + workspace + overhead against the device's free memory;
 *             nothing is uploaded when it refuses), then quantized weights as
 *             they are, small vectors as f32, and, on the f16 GEMM path, every
 *             projection converted once to f16 (only when the whole set fits
 *             with 1 GiB to spare; stderr says so, with MiB and ms).
 *   prefill   chunks of chunk_rows rows: the embedding gathered on the device,
 *             every projection ONE GEMM over the chunk, the DeltaNet recurrence
 *             one scan launch (or the chunked form's two), full attention over the resident KV cache; only
 *             the rows whose logits are asked for pay the output norm and the
 *             lm_head. One stream, no host synchronisation inside a chunk, the
 *             workspace allocated once and reused.
 *   decode    q35_cuda_forward_token: the same composition with T = 1 through
 *             the per-token launchers (q35_gemv, q35_attention_decode).
 *   state     conv windows, recurrent states, KV cache, kv_len, max_seq: a
 *             prefill of T tokens leaves it exactly where T decode steps do.
 *
 * Paths: each an option (model/cuda_options.h) over its environment variable
 * over its default, resolved in one place (model/paths.h; the table:
 * model/README.md). The defaults are the fast path where the device runs it:
 * the f16 GEMM, flash attention (the sm_90a kernel on sm_90), the chunked delta
 * rule; the exact path (f32 GEMM, f32 attention, the scan) and the
 * deterministic one are named. An unknown value or an impossible pick from the
 * environment is a warning; from an option, an unknown name is refused.
 *
 * Every function returns 0, or -1 with a message in err naming the thing and
 * the limit. */
#ifndef Q35_CUDA_MODEL_H
#define Q35_CUDA_MODEL_H

#include "core/error.h"
#include "model/capacity.h"
#include "model/cuda_options.h"
#include "model/op_times.h"
#include "model/qwen35.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* What a load found and chose. */
typedef struct q35_cuda_info {
    int device;                 /* CUDA ordinal */
    char device_name[256];      /* cudaDeviceProp.name */
    int sm;                     /* compute capability, major * 10 + minor */
    int sms;                    /* multiprocessors (cudaDeviceProp.multiProcessorCount) */
    bool unified;               /* cudaDeviceProp.integrated: memory shared with the host */
    bool flash_supported;       /* q35_attention_flash_supported for these heads */
    bool flash_sm90;            /* q35_attention_flash_sm90_supported for these heads */
    bool gemm_sm90;             /* q35_gemm_sm90_supported, and this FFN's shape (n_ff % 128, n_embd % 64) */
    uint64_t free_bytes;        /* free device memory before the upload (after free_cap) */
    uint64_t total_bytes;       /* the device's memory */
    q35_capacity_plan plan;     /* the plan the load made */
    uint64_t weight_bytes;      /* uploaded: quantized weights, small vectors as f32 */
    uint64_t f16_bytes;         /* the f16 projection set (0 when not built) */
    double f16_prewarm_ms;      /* time to build it */
    uint64_t fp8_bytes;         /* the fp8 projection set (0 when not built) */
    double fp8_prewarm_ms;      /* time to build it */
    char log[2048];             /* every warning and note of the load, one per line */
} q35_cuda_info;

typedef struct q35_cuda_model q35_cuda_model;
typedef struct q35_cuda_state q35_cuda_state;

/* CUDA devices this process can use: the count, or 0 with the reason in why
 * (no driver, none present). */
int q35_cuda_devices(char *why, size_t cap);

/* n floats of page-locked host memory (cudaMallocHost), for the logits the
 * calls below copy out: into it the copy is one DMA, as into an engine's
 * output buffer (llama.cpp's is page-locked too), where pageable memory
 * goes through the driver's staging buffers. NULL (err says why) on failure;
 * q35_cuda_host_free(NULL) is fine. */
float *q35_cuda_host_floats(size_t n, q35_error *err);
void q35_cuda_host_free(float *p);

/* Uploads m (a file's or the generator's; it may be freed afterwards) to the
 * device the options pick (o NULL: every option unset). Refuses, before any upload: no usable device, a
 * weight whose quant type the kernels cannot compute (naming it), and a
 * capacity plan that does not fit (each term in MiB and the free memory). */
int q35_cuda_model_load(q35_cuda_model **out, const q35_model *m, const q35_cuda_options *o, q35_error *err);

void q35_cuda_model_free(q35_cuda_model *cm); /* NULL is fine; frees every device byte it holds */

const q35_hparams *q35_cuda_model_hparams(const q35_cuda_model *cm);
const q35_cuda_info *q35_cuda_model_info(const q35_cuda_model *cm);
const q35_cuda_paths *q35_cuda_model_paths(const q35_cuda_model *cm);

/* Whether cm's prefill chunks pass q and k from the fused DeltaNet prologue
 * to the chunked delta rule as f16 in its workspace (paths.delta_qk16 where it
 * applies: q35_paths_delta_qk16, the fused prologue taking the heads, the
 * rule's variant of tb4's formulation; model/cuda_layers.c). */
bool q35_cuda_model_delta_qk16(const q35_cuda_model *cm);

/* Whether cm's f16 GEMMs run through a tuned cuBLASLt context that times its
 * candidates steadily (the switch tune-steady at load; kernels/gemm_lt.h). */
bool q35_cuda_model_gemm_lt_steady(const q35_cuda_model *cm);

/* Switches a loaded model's paths (for sweeps and benchmarks), by the same
 * rules as a load: flash refused where the device or the heads cannot run it,
 * f16 builds its weight set now when it fits with 1 GiB to spare (else
 * refused). Nothing changes on failure. */
int q35_cuda_model_set_paths(q35_cuda_model *cm, const q35_cuda_paths *p, q35_error *err);

/* One line naming the paths: "attention f32 (cuBLAS), GEMM f16, chunk rows 512". */
const char *q35_cuda_paths_str(const q35_cuda_paths *p, char *buf, size_t cap);

/* A zeroed state of max_seq positions (0: the plan's length) on cm's device. */
int q35_cuda_state_create(q35_cuda_state **out, const q35_cuda_model *cm, int64_t max_seq, q35_error *err);
void q35_cuda_state_free(q35_cuda_state *st); /* NULL is fine; before its model's free */

/* Back to zero (kv_len 0, every window, state and cache row zero); also clears a
 * state a failed call left unusable. */
int q35_cuda_state_reset(q35_cuda_state *st, q35_error *err);

int64_t q35_cuda_state_kv_len(const q35_cuda_state *st);
int64_t q35_cuda_state_max_seq(const q35_cuda_state *st);

/* A state copied to the host, for the parity suites: the layout of
 * q35_ref_state (model/ref_model.h) in f32, the caches' first kv_len rows. */
typedef struct q35_cuda_state_host {
    int64_t max_seq, kv_len;
    int n_delta, n_attn;
    int64_t conv_len;  /* floats per DeltaNet layer: conv_dim * (K-1) */
    int64_t ssm_len;   /* floats per DeltaNet layer: Hv * dv * dk */
    int64_t kv_dim;    /* floats per cache row */
    float *conv;       /* [n_delta][conv_dim][K-1] */
    float *ssm;        /* [n_delta][Hv][dv][dk] */
    float *k_cache;    /* [n_attn][kv_len][kv_dim] (rows past kv_len not copied; an f16 cache widened) */
    float *v_cache;    /* [n_attn][kv_len][kv_dim] */
} q35_cuda_state_host;

/* Waits for the state's work, then copies it (malloc'd; free with _host_free). */
int q35_cuda_state_download(const q35_cuda_state *st, q35_cuda_state_host *h, q35_error *err);
void q35_cuda_state_host_free(q35_cuda_state_host *h);

/* Prefills tokens[0..n) at positions pos0..pos0+n-1 and writes the last
 * position's logits (vocab floats) when logits is not NULL (NULL: no tail at
 * all). times (may be NULL, then nothing is timed and nothing costs) gets each
 * op's device time added (CUDA events around each op; a sync at the end).
 *
 * Refuses, before touching the state: an empty prompt; pos0 != kv_len;
 * positions past max_seq; a token outside the vocabulary. A device failure
 * after the checks leaves the state unusable until q35_cuda_state_reset. */
int q35_cuda_prefill(q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens, int64_t n, int64_t pos0,
                     float *logits, q35_op_times *times, q35_error *err);

/* As q35_cuda_prefill, with the logits of each position at[0..n_at) (absolute,
 * ascending, inside the prompt) into logits [n_at][vocab]; only those rows pay
 * the tail. Also refuses positions not ascending or outside the prompt. */
int q35_cuda_prefill_logits_at(q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens, int64_t n,
                               int64_t pos0, const int64_t *at, int64_t n_at, float *logits, q35_op_times *times,
                               q35_error *err);

/* One token at pos (== kv_len): the decode step, per-token launchers
 * (q35_gemv, q35_attention_decode) whatever the paths. logits: vocab floats
 * (NULL: no tail). */
int q35_cuda_forward_token(q35_cuda_model *cm, q35_cuda_state *st, int32_t token, int64_t pos, float *logits,
                           q35_op_times *times, q35_error *err);

/* What the CUDA graphs did since the load (model/cuda_graph.c). The prefill's
 * (paths.graphs): a chunk row count runs plain the first time after the paths
 * are set (its GEMM shapes tuned), later chunks as a graph a layer. The decode
 * step's (paths.decode_graph): captured once per state, workspace and paths,
 * then replayed at every step. */
typedef struct q35_cuda_graph_stats {
    int64_t plain_chunks;     /* chunks launched plainly as a row count's first */
    int64_t layers_captured;  /* layers captured from the stream */
    int64_t instantiated;     /* executable graphs made (a layer's first, or its nodes changed) */
    int64_t updated;          /* captures applied to a kept executable graph (cudaGraphExecUpdate) */
    int64_t launched;         /* layer graphs launched */
    int64_t decode_captured;  /* decode steps captured into the decode graph (switch decode-graph) */
    int64_t decode_launched;  /* decode steps launched as that graph (the captured ones included) */
    int64_t decode_nodes;     /* the nodes of the decode graph captured last (its kernels and copies) */
    int64_t decode_programmatic; /* its edges made programmatic (switch decode-overlap) */
} q35_cuda_graph_stats;

const q35_cuda_graph_stats *q35_cuda_model_graph_stats(const q35_cuda_model *cm);

/* The four phases a benchmark reports, summed from the per-op times:
 * projections (Q35_OP_PROJ), scan (Q35_OP_DELTA), attention (Q35_OP_ATTN),
 * other (every other op, the tail included). */
typedef enum q35_phase { Q35_PHASE_PROJ, Q35_PHASE_SCAN, Q35_PHASE_ATTN, Q35_PHASE_OTHER, Q35_PHASE_COUNT } q35_phase;

q35_phase q35_phase_of(q35_op op);
const char *q35_phase_name(q35_phase p); /* "projections", "scan", "attention", "other" */
void q35_phase_times(const q35_op_times *t, double seconds[Q35_PHASE_COUNT]);

#ifdef __cplusplus
}
#endif

#endif /* Q35_CUDA_MODEL_H */
