/* q35 run on the GPU (run.h): load with the options the flags set, a warm-up
 * prefill (the timed call itself, its times dropped: every shape's first call,
 * the tuned f16 GEMM's tuning, the op timer's events), the timed prefill
 * (per-op device times from CUDA events), then an untimed one for tokens/s;
 * on the fp8 GEMM path, then its accuracy tier: the same prompt once more
 * through the f32 GEMM (the other paths as they were), the logits of the
 * reported positions compared (model/accuracy.h). */
#include "run.h"
#include "run_report.h"

#include "core/parallel.h"
#include "model/accuracy.h"
#include "model/paths.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef Q35_HAVE_CUDA_MODEL

/* The fp8 path's tier: logits [rows][vocab] of the fp8 run against the same
 * prompt through the f32 GEMM (dequantized weights, no TF32), the other paths
 * unchanged. Said and skipped when that path cannot run here; -1 only when the
 * model's state is left unusable. */
static int print_fp8_tier(q35_cuda_model *cm, q35_cuda_state *st, const run_args *a, const int32_t *tokens, int64_t n,
                          const float *logits, int vocab)
{
    const int64_t rows = a->n_at > 0 ? a->n_at : 1;
    float *ref = malloc((size_t)rows * (size_t)vocab * sizeof *ref);
    q35_cuda_paths p = *q35_cuda_model_paths(cm);
    p.gemm = Q35_GEMM_F32;
    q35_error err = {{0}};
    if (!ref || q35_cuda_model_set_paths(cm, &p, &err)) {
        printf("tier    fp8: not measured (%s)\n", ref ? err.msg : "out of memory for the reference logits");
        free(ref);
        return 0;
    }
    const int rc = q35_cuda_state_reset(st, &err) ||
                   q35_cuda_prefill_logits_at(cm, st, tokens, n, 0, a->at, a->n_at, ref, NULL, &err);
    if (rc) {
        cli_error("fp8 tier: the f32 GEMM reference prefill: %s", err.msg);
        free(ref);
        return -1;
    }
    const q35_logit_tier t = q35_logit_tier_of(logits, NULL, ref, rows, vocab);
    const int layers = q35_cuda_model_hparams(cm)->n_layer;
    const double l2 = q35_fp8_tier_l2(layers), kl = q35_fp8_tier_kl(layers);
    char line[200];
    printf("tier    fp8 against the f32 GEMM (the other paths the same), %" PRId64 " position%s: %s; %s its tier at "
           "%d layers (rel L2 <= %.2f, KL <= %.1e nats: model/accuracy.h)\n", rows, rows == 1 ? "" : "s",
           q35_logit_tier_line(&t, line, (int)sizeof line),
           t.nonfinite == 0 && t.rel_l2_worst <= l2 && t.kl_worst <= kl ? "within" : "OUTSIDE", layers, l2, kl);
    free(ref);
    return 0;
}

static void print_phases(const q35_op_times *t)
{
    double s[Q35_PHASE_COUNT];
    q35_phase_times(t, s);
    printf("phases ");
    for (int p = 0; p < Q35_PHASE_COUNT; p++)
        printf(" %s %.3f ms%s", q35_phase_name((q35_phase)p), 1e3 * s[p], p + 1 < Q35_PHASE_COUNT ? "," : "\n");
}

/* `steps` decode steps from where the state stands, the prompt's tokens cycled;
 * times (or NULL) adds each op's device time. 0, or 1 after saying what failed. */
static int decode_steps(q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens, int64_t n, int64_t steps,
                        float *logits, q35_op_times *times)
{
    q35_error err = {{0}};
    for (int64_t i = 0; i < steps; i++) {
        const int64_t pos = q35_cuda_state_kv_len(st);
        if (q35_cuda_forward_token(cm, st, tokens[pos % n], pos, logits, times, &err)) {
            cli_error("decode step at %" PRId64 ": %s", pos, err.msg);
            return 1;
        }
    }
    return 0;
}

/* --decode N: after the prefill, one untimed step (its first calls; the decode
 * graph's capture), N steps timed per op (plain launches), then N untimed for
 * the rate (the decode graph where the switch decode-graph is on). */
static int run_decode(q35_cuda_model *cm, q35_cuda_state *st, const run_args *a, const int32_t *tokens, int64_t n,
                      float *logits)
{
    if (decode_steps(cm, st, tokens, n, 1, logits, NULL))
        return 1;
    q35_op_times times;
    memset(&times, 0, sizeof times);
    const int64_t from = q35_cuda_state_kv_len(st);
    double t0 = q35_now();
    if (decode_steps(cm, st, tokens, n, a->decode, logits, &times))
        return 1;
    printf("\ntimed decode, %" PRId64 " steps from position %" PRId64 " (device time per op, CUDA events):", a->decode,
           from);
    run_print_times(&times, q35_now() - t0, a->decode);
    t0 = q35_now();
    if (decode_steps(cm, st, tokens, n, a->decode, logits, NULL))
        return 1;
    const double s = q35_now() - t0;
    char graph[64] = ", plain launches";
    if (q35_cuda_model_paths(cm)->decode_graph)
        snprintf(graph, sizeof graph, ", each the decode graph (%" PRId64 " nodes) replayed",
                 q35_cuda_model_graph_stats(cm)->decode_nodes);
    printf("decode  %" PRId64 " steps untimed (after the timed ones%s): %.3f ms a step, %.1f tokens/s\n", a->decode,
           graph, 1e3 * s / (double)a->decode, s > 0 ? (double)a->decode / s : 0.0);
    return 0;
}

int run_cuda(const run_args *a, const q35_model *m, const int32_t *tokens, int64_t n, char *why, size_t cap)
{
    if (q35_cuda_devices(why, cap) == 0)
        return 2;
    q35_cuda_options o = a->cuda;
    o.max_seq = n + (a->decode > 0 ? 2 * a->decode + 1 : 0);
    q35_cuda_model *cm = NULL;
    q35_cuda_state *st = NULL;
    q35_error err = {{0}};
    const int vocab = m->hp.n_vocab;
    /* page-locked: each step's logits one DMA (q35_cuda_host_floats) */
    float *logits = q35_cuda_host_floats((size_t)(a->n_at > 0 ? a->n_at : 1) * (size_t)vocab, &err);
    int rc = 1;
    const double t_load = q35_now();
    if (!logits || q35_cuda_model_load(&cm, m, &o, &err)) {
        cli_error("%s%s", logits ? "" : "page-locked host memory for the logits: ", err.msg);
        goto out;
    }
    const double load_s = q35_now() - t_load;
    const q35_cuda_info *in = q35_cuda_model_info(cm);
    const q35_cuda_paths *p = q35_cuda_model_paths(cm);
    char line[512];
    printf("path    CUDA on %s (device %d, sm_%d%s): %s\n", in->device_name, in->device, in->sm,
           in->unified ? ", unified memory" : "", q35_cuda_paths_str(p, line, sizeof line));
    printf("tier    %s\n", q35_paths_tier(p));
    printf("plan    %s\n", q35_capacity_str(&in->plan, line, sizeof line));
    printf("load    %.1f MiB uploaded in %.2f s", (double)in->weight_bytes / (double)Q35_MIB, load_s);
    if (in->f16_bytes)
        printf(", %.1f MiB of f16 weights prewarmed in %.0f ms", (double)in->f16_bytes / (double)Q35_MIB,
               in->f16_prewarm_ms);
    if (in->fp8_bytes)
        printf(", %.1f MiB of fp8 weights built in %.0f ms", (double)in->fp8_bytes / (double)Q35_MIB,
               in->fp8_prewarm_ms);
    printf("\nprompt  %" PRId64 " tokens, chunk rows %" PRId64 "\n", n, p->chunk_rows);
    if (q35_cuda_state_create(&st, cm, o.max_seq, &err)) {
        cli_error("%s", err.msg);
        goto out;
    }
    /* a warm-up prefill, the same call as the timed one (the same logits, so a pruned last layer's
     * kept-row shapes too) and timed the same way, its times dropped: every shape's first call (the
     * f16 GEMM's tuning, a kernel's first load) and the op timer's events are paid here, not in the
     * timed prefill */
    q35_op_times warm;
    memset(&warm, 0, sizeof warm);
    if (q35_cuda_prefill_logits_at(cm, st, tokens, n, 0, a->at, a->n_at, logits, &warm, &err) ||
        q35_cuda_state_reset(st, &err)) {
        cli_error("%s", err.msg);
        goto out;
    }
    q35_op_times times;
    memset(&times, 0, sizeof times);
    double t0 = q35_now();
    if (q35_cuda_prefill_logits_at(cm, st, tokens, n, 0, a->at, a->n_at, logits, &times, &err)) {
        cli_error("%s", err.msg);
        goto out;
    }
    printf("\ntimed prefill (device time per op, CUDA events):");
    run_print_times(&times, q35_now() - t0, n);
    print_phases(&times);
    t0 = q35_now();
    if (q35_cuda_state_reset(st, &err) ||
        q35_cuda_prefill_logits_at(cm, st, tokens, n, 0, a->at, a->n_at, logits, NULL, &err)) {
        cli_error("%s", err.msg);
        goto out;
    }
    const double untimed = q35_now() - t0;
    printf("prefill %.3f ms untimed (after the timed run): %.1f tokens/s\n", 1e3 * untimed,
           untimed > 0 ? (double)n / untimed : 0.0);
    if (q35_paths_graphs(p)) { /* what the untimed prefill launched as graphs (the timed one runs plain) */
        const q35_cuda_graph_stats *g = q35_cuda_model_graph_stats(cm);
        printf("graphs  %" PRId64 " layer graphs launched, %" PRId64 " instantiated, %" PRId64 " updated; %" PRId64
               " chunks plain (a row count's first)\n", g->launched, g->instantiated, g->updated, g->plain_chunks);
    }
    rc = run_report_logits(a, logits, vocab, n);
    if (rc == 0 && a->decode > 0)
        rc = run_decode(cm, st, a, tokens, n, logits);
    if (rc == 0 && p->gemm == Q35_GEMM_FP8 && !p->deterministic && print_fp8_tier(cm, st, a, tokens, n, logits, vocab))
        rc = 1;
out:
    q35_cuda_state_free(st);
    q35_cuda_model_free(cm);
    q35_cuda_host_free(logits);
    return rc;
}

/* One window through the GPU path (run_window_fn): the state reset, then the prefill. */
typedef struct cuda_eval {
    q35_cuda_model *cm;
    q35_cuda_state *st;
} cuda_eval;

static int cuda_window(void *ctx, const int32_t *tokens, int64_t n, const int64_t *at, int64_t n_at, float *logits,
                       q35_error *err)
{
    cuda_eval *e = ctx;
    return q35_cuda_state_reset(e->st, err) || q35_cuda_prefill_logits_at(e->cm, e->st, tokens, n, 0, at, n_at, logits,
                                                                           NULL, err)
               ? -1
               : 0;
}

/* --eval-steps (run_window_fn): the state reset, the tokens before the first
 * scored position prefilled, then a decode step a position up to the last
 * scored one, each scored position's logits kept: the decode path's. */
static int cuda_window_steps(void *ctx, const int32_t *tokens, int64_t n, const int64_t *at, int64_t n_at,
                             float *logits, q35_error *err)
{
    cuda_eval *e = ctx;
    const int64_t vocab = q35_cuda_model_hparams(e->cm)->n_vocab, p0 = n_at > 0 ? at[0] : n;
    if (q35_cuda_state_reset(e->st, err) || (p0 > 0 && q35_cuda_prefill(e->cm, e->st, tokens, p0, 0, NULL, NULL, err)))
        return -1;
    for (int64_t pos = p0, k = 0; pos < n && k < n_at; pos++) {
        float *out = at[k] == pos ? logits + k * vocab : NULL;
        if (q35_cuda_forward_token(e->cm, e->st, tokens[pos], pos, out, NULL, err))
            return -1;
        k += out != NULL;
    }
    return 0;
}

int run_cuda_eval(const run_args *a, const q35_model *m, char *why, size_t cap)
{
    if (q35_cuda_devices(why, cap) == 0)
        return 2;
    q35_cuda_options o = a->cuda;
    o.max_seq = a->ctx;
    cuda_eval e = {0};
    q35_error err = {{0}};
    int rc = 1;
    if (q35_cuda_model_load(&e.cm, m, &o, &err) || q35_cuda_state_create(&e.st, e.cm, a->ctx, &err)) {
        cli_error("%s", err.msg);
        goto out;
    }
    const q35_cuda_info *in = q35_cuda_model_info(e.cm);
    const q35_cuda_paths *p = q35_cuda_model_paths(e.cm);
    char paths[512], line[1024];
    q35_cuda_paths_str(p, paths, sizeof paths);
    snprintf(line, sizeof line, "CUDA on %s (sm_%d): %s", in->device_name, in->sm, paths);
    if (a->eval_steps) /* the scored logits are a decode step's */
        snprintf(line + strlen(line), sizeof line - strlen(line), "; scored through decode steps%s",
                 q35_paths_decode_q8(p) ? " (8-bit activations)" : "");
    printf("path    %s\ntier    %s\n", line, q35_paths_tier(p));
    rc = run_eval(a, m->hp.n_vocab, line, a->eval_steps ? cuda_window_steps : cuda_window, &e);
out:
    q35_cuda_state_free(e.st);
    q35_cuda_model_free(e.cm);
    return rc;
}

#else

int run_cuda_eval(const run_args *a, const q35_model *m, char *why, size_t cap)
{
    (void)a, (void)m;
    snprintf(why, cap, "built without CUDA");
    return 2;
}

int run_cuda(const run_args *a, const q35_model *m, const int32_t *tokens, int64_t n, char *why, size_t cap)
{
    (void)a, (void)m, (void)tokens, (void)n;
    snprintf(why, cap, "built without CUDA");
    return 2;
}

#endif
