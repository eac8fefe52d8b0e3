/* What the CUDA model's GPU suites share: the models they run (generated in
 * memory), loading with pinned paths, the per-token path's logits and states
 * computed ONCE per (model, prompt) for every prefill to be compared against,
 * and the comparisons of logits and states (bitwise, within a tolerance, or
 * against the float64 reference). A CUDA failure is fatal (prints and exits 1). */
#ifndef Q35_PARITY_CUDA_MODEL_CASES_H
#define Q35_PARITY_CUDA_MODEL_CASES_H

#include "parity/lib/gpu.h"
#include "parity/lib/harness.h"

#include "model/cuda_model.h"
#include "model/ref_model.h"

#include <stdbool.h>
#include <stdint.h>

/* SPEC §4 at the model level (logits and states, against the per-token path
 * or the float64 reference). An f32 path: rel L-inf <= 1e-4. An f16 path (f16
 * GEMM, flash or the chunked rule): rel L2, the golden suite's metric, with
 * rel L-inf <= 1e-2 as a guard against a few wild elements: flash alone and
 * the chunked rule alone <= 2e-3 (CM_LIMIT_F16), the f16 GEMM (with flash or
 * not) <= 3e-3 (CM_LIMIT_F16_GEMM, below). Rel L-inf alone at 2e-3 is not
 * a bound the f16 path keeps at real widths: a 4-layer 9B-shape model's logits
 * measured 1.3e-3 .. 2.3e-3 rel L-inf from its per-token f32 path over seeds
 * (activations and weights rounded to f16, ~2.4e-4 each, compounded over the
 * layers), where the GEMM alone measures ~3e-4 (test_kernels_linear).
 * A path with BOTH the f16 GEMM and the chunked delta rule (the fast path) has
 * two independent sources of error, each held to its own bound (the sweep
 * runs f16/scan and f32/chunked): to first order the errors of two
 * perturbations add, so by the triangle inequality their sum is within the sum
 * of the bounds, CM_LIMIT_F16_GEMM + CM_LIMIT_F16. Measured on the 9B-4 sweep
 * model (H200; worst position's rel L2 of the logits, per seed): at f5d05f6
 * (4 seeds, lengths to 2049) f16 GEMM with the scan 1.64-1.87e-3, the chunked
 * rule on the f32 GEMM 0.76-1.02e-3, both 1.85-2.55e-3; at 83a340d's tree (5
 * seeds, lengths to 4097: bench/results/, fcb3235's section) f16 GEMM with the
 * scan 1.60-2.06e-3, the chunked rule 0.98e-3 at worst, both 1.79-2.12e-3
 * (argmax equal, KL <= 4e-6). The f16 GEMM's share is the rounding of its
 * inputs and weights to f16 compounded over the layers, the same at every
 * chunking: it sat at 1.6-2.1e-3 over every case of a seed, so 2e-3 (set
 * before the 4097-token cases) was no bound: one seed in nine passed it.
 * 3e-3 is 1.46x the worst of nine seeds; a wrong tile or a lost row errs by
 * order 1. Flash attention stays within the f16 GEMM's share: alone it
 * measures ~5e-5. */
#define CM_LIMIT_F32 1e-4
#define CM_LIMIT_F16 2e-3
#define CM_LIMIT_F16_GEMM 3e-3
#define CM_GUARD_F16 1e-2
typedef struct cm_tol {
    double linf, l2; /* bounds on rel L-inf and rel L2 (INFINITY: none) */
} cm_tol;

/* The FP8 GEMM path's accuracy tier against float64 or transformers: rel L2
 * and KL by depth, model/accuracy.h's q35_fp8_tier_l2 / _kl (first run, H200
 * ca81fc6: worst rel L2 1.2e-2 on tiny and 4.4e-2 on 0.8b-4; worst KL 7.3e-6
 * nats; top-1 99/100 and 48/48), top-1 here on these shallow cases. A wrong
 * scale or a lost row (errors of order 1) fails. */
#define CM_FP8_TOP1 0.9  /* share of positions whose argmax agrees, at least */

/* Whether this device runs the FP8 path; else prints "SKIP  <what>: <why>". */
bool cm_fp8_here(const char *what);

/* One case: logits ours [n][vocab] against ref_f64 or ref_f32 (one non-NULL)
 * within the FP8 tier, the tier printed. */
bool cm_fp8_case(q35_suite *s, const char *what, const float *ours, const double *ref_f64, const float *ref_f32,
                 int64_t n, int64_t vocab, int n_layer);

/* A generated model: shape (layers and vocab overridden when > 0), mix, seed. */
q35_model *cm_model(const char *shape, int layers, int vocab, const char *mix, uint64_t seed);

/* Loads m with max_seq positions planned, quiet, paths pinned by cm_set. */
q35_cuda_model *cm_load(const q35_model *m, int64_t max_seq);

/* Pins the paths (fatal when refused), the delta rule as the model's default
 * picks it: chunked on GEMM f16, the scan on f32 and when deterministic. */
void cm_set(q35_cuda_model *cm, q35_attn_path attention, q35_gemm_path gemm, int64_t chunk_rows,
            bool deterministic, size_t scores_budget);

/* cm_set with the delta rule pinned too. */
void cm_set_delta(q35_cuda_model *cm, q35_attn_path attention, q35_gemm_path gemm, q35_delta_path delta,
                  int64_t chunk_rows, bool deterministic, size_t scores_budget);

/* "f32/f32", "flash/f16", "flash/f16/scan" (the delta rule named where it is
 * not the default for that GEMM), "deterministic" */
const char *cm_paths_name(const q35_cuda_paths *p, char *buf, size_t cap);

/* Whether p is an f16 path (f16 GEMM, flash or the chunked delta rule, not deterministic). */
bool cm_f16_path(const q35_cuda_paths *p);

/* The tolerance of p against the per-token or float64 path; whether (linf, l2)
 * is within it; its text ("rel Linf 1e-04", "rel L2 2e-03, rel Linf 1e-02"). */
cm_tol cm_tolerance(const q35_cuda_paths *p);
bool cm_within(cm_tol t, double linf, double l2);
const char *cm_tol_str(cm_tol t, char *buf, size_t cap);

/* n random tokens below vocab (malloc'd). */
int32_t *cm_tokens(int64_t n, int vocab, q35_rng *r);

/* The per-token path (q35_cuda_forward_token) over tokens[0..n): the logits at
 * every position and the state after each of the lengths in snap_at. */
typedef struct cm_token_ref {
    int64_t n;
    int vocab;
    float *logits;                   /* [n][vocab] */
    int n_snap;
    int64_t snap_at[8];
    q35_cuda_state_host snap[8];     /* the state after snap_at[i] tokens */
    double seconds;                  /* the run's wall time */
} cm_token_ref;

void cm_token_ref_run(cm_token_ref *ref, q35_cuda_model *cm, const int32_t *tokens, int64_t n,
                      const int64_t *snap_at, int n_snap);
void cm_token_ref_free(cm_token_ref *ref);

/* The snapshot after `len` tokens, or NULL. */
const q35_cuda_state_host *cm_token_ref_state(const cm_token_ref *ref, int64_t len);

/* a against b, both f32 (widened). */
q35_cmp cm_compare(const float *a, const float *b, int64_t n);

/* Worst per-position rel L-inf and rel L2 of logits a [n_at][vocab] against
 * the rows at[] of full [..][vocab]; bitwise flag when every row's bits are equal. */
typedef struct cm_logits_cmp {
    double worst;          /* max over positions of rel L-inf */
    int64_t worst_at;      /* its position */
    double worst_l2;       /* max over positions of rel L2 */
    int64_t argmax_same;   /* positions whose argmax agrees */
    double kl;             /* max over positions of KL(per-token || this) of the softmaxed logits, nats
                              (model/accuracy.h) */
    int64_t n;             /* positions */
    int64_t nonfinite;
    bool bitwise;          /* every row bitwise equal */
    q35_bitcmp first_diff; /* of the first row that differs */
    int64_t first_diff_at;
} cm_logits_cmp;

cm_logits_cmp cm_compare_logits(const float *a, const float *full, const int64_t *at, int64_t n_at, int vocab);

/* Two states: bitwise (all parts), and the worst rel L-inf and rel L2 over
 * the parts (conv, ssm, k, v); msg names the part and the first difference. */
typedef struct cm_state_cmp {
    bool bitwise;
    double worst;          /* max over parts of rel L-inf */
    double worst_l2;       /* max over parts of rel L2 */
    int64_t nonfinite;
    char msg[256];
} cm_state_cmp;

cm_state_cmp cm_compare_states(const q35_cuda_state_host *a, const q35_cuda_state_host *b);
cm_state_cmp cm_compare_state_ref(const q35_cuda_state_host *a, const q35_ref_state *ref);

/* Resets st, prefills tokens[0..n) and keeps the last position's logits
 * (vocab floats) and the state (fatal on failure). */
void cm_prefill_keep(q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens, int64_t n, float *logits,
                     q35_cuda_state_host *h);

/* Two prefills' logits and states, bitwise; one case line. */
bool cm_case_same(q35_suite *s, const char *what, const float *a, const q35_cuda_state_host *ha, const float *b,
                  const q35_cuda_state_host *hb, int vocab);

/* Downloads st (fatal on failure). */
void cm_download(const q35_cuda_state *st, q35_cuda_state_host *h);

#endif /* Q35_PARITY_CUDA_MODEL_CASES_H */

/* Up to 8 ascending logit positions of a prompt of len: its first and last
 * rows, both sides of the first chunk boundary, a third, a half. */
int cm_positions(int64_t len, int64_t chunk_rows, int64_t *at);

/* Resets st, prefills tokens[0..len) with cm's current paths (logits at
 * cm_positions), and compares logits and the whole state with the per-token
 * reference: bitwise in the deterministic mode, else within cm_tolerance. One case
 * line, prefixed by `what`. */
bool cm_check_prefill(q35_suite *s, const char *what, q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens,
                      int64_t len, const cm_token_ref *ref);

/* Resets st, prefills [0, n/3) then [n/3, n), then one decode step of
 * tokens[n] at n; compares its logits and the state with the per-token
 * reference (which must hold n + 1 tokens and the state after them). */
bool cm_check_split_decode(q35_suite *s, const char *what, q35_cuda_model *cm, q35_cuda_state *st,
                           const int32_t *tokens, int64_t n, const cm_token_ref *ref);
