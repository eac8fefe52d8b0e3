/* The whole-model benchmarks (bench/results/SCHEMA.md, "The prefill sweep"):
 *
 *   prefill/shape/quant/gemm/attn/chunk/len[/delta]   one prefill of `len` random
 *                      tokens from an empty state on the CUDA model
 *                      (model/cuda_model.h), full layer count, generated in
 *                      memory, with the last position's logits (the output a
 *                      prefill hands back, as transformers' logits_to_keep=1
 *                      does: the tail, its copy to the host, and the last
 *                      layer pruned to that row where the paths prune,
 *                      q35_paths_prune; value prune 1, else 0; up to e94f9c5
 *                      the points asked for no logits and ran every row of
 *                      the last layer); tokens/s and the seconds per phase (projections,
 *                      scan, attention, other); the delta rule the model's pick
 *                      for the GEMM (chunked on f16, the scan on f32) unless
 *                      the point names it (value delta_chunked: 1 or 0);
 *   decode/shape/quant/ctx                    one decode step at about `ctx`
 *                      positions (ctx .. ctx + DECODE_SPAN - 1: the cache grows as
 *                      steps run and is refilled when full, untimed), its logits
 *                      copied into page-locked host memory (q35_cuda_host_floats,
 *                      as llama.cpp's output buffer is; value logits_pinned 1;
 *                      $Q35_DECODE_LOGITS=pageable: malloc's memory, value 0, as
 *                      every point up to 3227202, which has no such value).
 *
 * The registered points (filters pick among them; tools/sweep.sh shards them):
 *   paths   shape {0.8b, 9b, 27b} x q4_k x GEMM {f32, f16} x attention {f32,
 *           flash} x chunk Q35_CHUNK_ROWS_DISCRETE (2048) x len {512, 4096, 16384,
 *           65536, 131072};
 *   delta   9b x q4_k x f16 x flash x chunk 2048 x len {512, 4096, 16384} x
 *           delta {scan, chunked};
 *   chunks  9b x q4_k x f16 x attention {f32, flash} x chunk {64 .. 4096} x len 4096;
 *           9b x q4_k x f16 x flash x chunk Q35_CHUNK_ROWS_FAST (8192: the fast
 *           path's default) x len {512 .. 131072} (bench/peers.map pairs it with
 *           transformers), and chunk 4096 x len {16384, 65536, 131072};
 *   fp8     9b x q4_k x fp8 (opt-in) x flash x chunk {2048, 8192} x len {512 ..
 *           131072} (8192 paired with transformers too);
 *   quants  9b x {q6_k, q8_0, f16} x f16 x f32 x chunk 2048 x len 4096;
 *   peers   9b x {q4_k_m, f16} x f16 x flash x chunk 8192 x len {512, 4096,
 *           16384}, and their decode at ctx {512, 4096}: the other files
 *           bench/llama_peer.sh runs llama.cpp on (bench/peers.map pairs them);
 *   decode  shape {0.8b, 9b, 27b} x q4_k x ctx {512, 4096, 16384, 65536};
 *   default the built-in default model (tiny, q4_k_m: what `q35 run` runs) x
 *           GEMM {f32, f16} x attention {f32, flash} x chunk 512 x len {512,
 *           4096}, and its decode at 512 (the main job's short sweep).
 * A point the capacity plan or the paths refuse is skipped with the refusal.
 * $Q35_FLASH_VARIANT picks the flash kernel's variant (cuda_options.h; and
 * $Q35_DELTA_RULE_VARIANT, $Q35_DELTA_CHUNK_VARIANT the delta rules'); a flash
 * point's value flash_variant is the one the model ran (the context's
 * flash_variants names them); likewise delta_chunk_variant (chunked points),
 * and gemm_swiglu, gemm_sm90_proj (the switch swiglu, $Q35_GEMM_KERNEL=sm90: 1 or 0) with
 * gemm_sm90_variant where either runs
 * ($Q35_GEMM_SM90_VARIANT; the context's gemm_sm90_variants), and on the f16
 * GEMM gemm_lt_steady (the switch tune-steady: 1 or 0); $Q35_SWITCHES sets the
 * switches (model/paths.h).
 * The model of a (shape, quant) is generated and uploaded once and kept while
 * consecutive points use it (registered shape by shape, so they are). */
#include "bench/gpu_bench.h"
#include "core/parallel.h"
#include "core/rng.h"
#include "kernels/attention_flash.h"
#include "kernels/delta_chunk.h"
#include "kernels/gemm_sm90.h"
#include "model/cuda_model.h"
#include "model/generate.h"
#include "model/shapes.h"

#include <cuda_runtime_api.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DECODE_SPAN 1024

static const char *const k_quants[] = {"f32", "f16", "bf16", "q8_0", "q4_0", "q5_0", "q4_k", "q5_k", "q6_k", "q4_k_m"};
enum { QUANT_F16 = 1, QUANT_Q8_0 = 3, QUANT_Q4_K = 6, QUANT_Q6_K = 8, QUANT_Q4_K_M = 9 };
enum { SHAPE_TINY = 0, SHAPE_08B = 1, SHAPE_9B = 4, SHAPE_27B = 5 }; /* q35_shape_at */
enum { AX_SHAPE, AX_QUANT }; /* the first two axes of every family */

/* The model the last points used: kept until a point wants another. */
static struct {
    int shape, quant;
    q35_cuda_model *cm;
    char refusal[1400]; /* why this (shape, quant) cannot load, or "" */
} g_model = {-1, -1, NULL, ""};

/* The loaded model of (shape, quant), or NULL with the point skipped. */
static q35_cuda_model *model_for(q35_bench_state *st, int shape, int quant)
{
    if (g_model.shape == shape && g_model.quant == quant) {
        if (g_model.cm)
            return g_model.cm;
        q35_bench_skip(st, g_model.refusal);
        return NULL;
    }
    q35_cuda_model_free(g_model.cm);
    g_model.cm = NULL;
    g_model.shape = shape, g_model.quant = quant, g_model.refusal[0] = '\0';
    q35_error err = {{0}};
    q35_gen_options go = q35_gen_defaults(q35_shape_at(shape));
    snprintf(go.mix, sizeof go.mix, "%s", k_quants[quant]);
    q35_model *m = NULL;
    const double t0 = q35_now();
    int rc = q35_generate_model(&go, &m, &err);
    if (rc == 0) {
        q35_cuda_options o;
        q35_cuda_options_init(&o);
        o.max_seq = 131072 + DECODE_SPAN; /* the plan covers every length of the sweep */
        o.quiet = true;
        rc = q35_cuda_model_load(&g_model.cm, m, &o, &err);
        q35_model_free(m);
    }
    if (rc) {
        snprintf(g_model.refusal, sizeof g_model.refusal, "%s %s: %s", q35_shape_at(shape)->name, k_quants[quant],
                 err.msg);
        q35_bench_skip(st, g_model.refusal);
        return NULL;
    }
    fprintf(stderr, "benchmark: model %s %s generated and loaded in %.1f s\n", q35_shape_at(shape)->name,
            k_quants[quant], q35_now() - t0);
    return g_model.cm;
}

static int32_t *random_tokens(int64_t n, int vocab)
{
    int32_t *t = malloc((size_t)n * sizeof *t);
    q35_rng r;
    q35_rng_seed(&r, 0x9e3779b97f4a7c15ull ^ (uint64_t)n);
    for (int64_t i = 0; t && i < n; i++)
        t[i] = (int32_t)(q35_rng_next(&r) % (uint64_t)vocab);
    return t;
}

/* Skips the point with err's message; returns NULL for the caller's convenience. */
static void *skip_err(q35_bench_state *st, const char *what, const q35_error *err)
{
    char msg[1600];
    snprintf(msg, sizeof msg, "%s: %s", what, err->msg);
    q35_bench_skip(st, msg);
    return NULL;
}

/* One prefill point; delta DEFAULT: the model's pick for the point's GEMM
 * (chunked on f16, the scan on f32). */
static void prefill_point(q35_bench_state *st, q35_delta_path delta)
{
    q35_cuda_model *cm = model_for(st, (int)q35_bench_arg(st, AX_SHAPE), (int)q35_bench_arg(st, AX_QUANT));
    if (!cm)
        return;
    const int64_t len = q35_bench_arg(st, 5);
    q35_cuda_paths p = *q35_cuda_model_paths(cm);
    p.gemm = (q35_gemm_path)q35_bench_arg(st, 2);
    p.attention = (q35_attn_path)q35_bench_arg(st, 3);
    p.chunk_rows = q35_bench_arg(st, 4);
    p.deterministic = false;
    p.delta = delta != Q35_DELTA_DEFAULT ? delta : q35_gemm_is_fast(p.gemm) ? Q35_DELTA_CHUNKED : Q35_DELTA_SCAN;
    q35_error err = {{0}};
    q35_cuda_state *state = NULL;
    int32_t *tokens = random_tokens(len, q35_cuda_model_hparams(cm)->n_vocab);
    float *logits = malloc((size_t)q35_cuda_model_hparams(cm)->n_vocab * sizeof *logits);
    if (!logits) {
        q35_bench_skip(st, "no host memory for the logits");
        goto out;
    }
    if (!tokens || q35_cuda_model_set_paths(cm, &p, &err)) {
        skip_err(st, "paths", &err);
        goto out;
    }
    if (q35_cuda_state_create(&state, cm, len, &err)) {
        skip_err(st, "state", &err);
        goto out;
    }
    /* the phase pass (per-op device times) doubles as the warm-up; where the
     * f16 GEMM is tuned at a shape's first call, an untimed pass before it */
    q35_op_times times;
    memset(&times, 0, sizeof times);
    if (q35_paths_tune_gemm(q35_cuda_model_paths(cm)) &&
        (q35_cuda_prefill(cm, state, tokens, len, 0, logits, NULL, &err) || q35_cuda_state_reset(state, &err))) {
        skip_err(st, "prefill (the tuning pass)", &err);
        goto out;
    }
    if (q35_cuda_prefill(cm, state, tokens, len, 0, logits, &times, &err)) {
        skip_err(st, "prefill", &err);
        goto out;
    }
    while (q35_bench_keep_running(st)) {
        if (q35_cuda_state_reset(state, &err)) {
            skip_err(st, "reset", &err);
            goto out;
        }
        q35_bench_check((int)cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        const double t0 = q35_now();
        /* the last position's logits, copied to the host: the call's own wait ends the timed region */
        const int rc = q35_cuda_prefill(cm, state, tokens, len, 0, logits, NULL, &err);
        q35_bench_check((int)cudaDeviceSynchronize(), "cudaDeviceSynchronize");
        q35_bench_set_iteration_time(st, q35_now() - t0);
        if (rc) {
            skip_err(st, "prefill", &err);
            goto out;
        }
    }
    q35_bench_rate(st, "tokens_per_s", (double)len);
    q35_bench_phases(st, &times, 1);
    if (p.attention == Q35_ATTN_FLASH)
        q35_bench_value(st, "flash_variant", q35_cuda_model_paths(cm)->flash_variant);
    q35_bench_value(st, "delta_chunked", p.delta == Q35_DELTA_CHUNKED);
    q35_bench_value(st, "graphs", q35_paths_graphs(q35_cuda_model_paths(cm)));
    { /* the opt-ins the environment turns on, so a file says which configuration it measured */
        const q35_cuda_paths *cp = q35_cuda_model_paths(cm);
        if (p.delta == Q35_DELTA_CHUNKED) {
            q35_bench_value(st, "delta_chunk_variant", cp->delta_chunk_variant);
            q35_bench_value(st, "delta_qk16", q35_cuda_model_delta_qk16(cm));
        }
        q35_bench_value(st, "gemm_swiglu", q35_paths_gemm_swiglu(cp));
        if (p.gemm == Q35_GEMM_F16) /* switch tune-steady: the tuned GEMM's candidates timed steadily */
            q35_bench_value(st, "gemm_lt_steady", q35_cuda_model_gemm_lt_steady(cm));
        q35_bench_value(st, "gemm_sm90_proj", q35_paths_gemm_sm90_proj(cp));
        q35_bench_value(st, "prune", q35_paths_prune(cp));
        if (q35_paths_gemm_swiglu(cp) || q35_paths_gemm_sm90_proj(cp))
            q35_bench_value(st, "gemm_sm90_variant", cp->gemm_sm90_variant);
    }
out:
    q35_cuda_state_free(state);
    free(tokens);
    free(logits);
}

static void bench_prefill(q35_bench_state *st, void *unused)
{
    (void)unused;
    prefill_point(st, Q35_DELTA_DEFAULT);
}

/* The points with a delta axis (the 7th). */
static void bench_prefill_delta(q35_bench_state *st, void *unused)
{
    (void)unused;
    prefill_point(st, (q35_delta_path)q35_bench_arg(st, 6));
}

static void bench_decode(q35_bench_state *st, void *unused)
{
    (void)unused;
    q35_cuda_model *cm = model_for(st, (int)q35_bench_arg(st, AX_SHAPE), (int)q35_bench_arg(st, AX_QUANT));
    if (!cm)
        return;
    const int64_t ctx = q35_bench_arg(st, 2), max_seq = ctx + DECODE_SPAN;
    const int vocab = q35_cuda_model_hparams(cm)->n_vocab;
    q35_error err = {{0}};
    q35_cuda_state *state = NULL;
    int32_t *tokens = random_tokens(max_seq, vocab);
    /* page-locked, as an engine's output buffer is: the step's logits one DMA ($Q35_DECODE_LOGITS=pageable: malloc's) */
    const char *lg = getenv("Q35_DECODE_LOGITS");
    const bool pinned = !(lg && strcmp(lg, "pageable") == 0);
    float *logits = pinned ? q35_cuda_host_floats((size_t)vocab, &err) : malloc((size_t)vocab * sizeof *logits);
    if (!tokens || !logits || q35_cuda_state_create(&state, cm, max_seq, &err)) {
        skip_err(st, logits ? "state" : "page-locked logits", &err);
        goto out;
    }
    while (q35_bench_keep_running(st)) {
        int64_t pos = q35_cuda_state_kv_len(state);
        if (pos == 0 || pos == max_seq) { /* (re)fill the cache to ctx, then one step: untimed */
            if (q35_cuda_state_reset(state, &err) || q35_cuda_prefill(cm, state, tokens, ctx, 0, NULL, NULL, &err) ||
                q35_cuda_forward_token(cm, state, tokens[ctx], ctx, logits, NULL, &err)) {
                skip_err(st, "prefill and a warm-up step", &err);
                goto out;
            }
            pos = ctx + 1; /* the first step after a prefill pays its first calls: not the steady state */
        }
        const double t0 = q35_now();
        const int rc = q35_cuda_forward_token(cm, state, tokens[pos], pos, logits, NULL, &err);
        q35_bench_set_iteration_time(st, q35_now() - t0);
        if (rc) {
            skip_err(st, "decode", &err);
            goto out;
        }
    }
    q35_bench_rate(st, "tokens_per_s", 1.0);
    { /* the switches that change a step (model/README.md), so a file says which configuration it measured */
        const q35_cuda_paths *cp = q35_cuda_model_paths(cm);
        q35_bench_value(st, "decode_graph", cp->decode_graph);
        q35_bench_value(st, "decode_q8", q35_paths_decode_q8(cp));
        q35_bench_value(st, "decode_split", q35_paths_decode_split(cp));
        q35_bench_value(st, "decode_pdl", q35_paths_decode_pdl(cp));
        q35_bench_value(st, "decode_fuse", q35_paths_decode_fuse(cp));
        q35_bench_value(st, "decode_act_q8", q35_paths_decode_act_q8(cp));
        q35_bench_value(st, "decode_overlap", q35_paths_decode_overlap(cp));
        q35_bench_value(st, "decode_programmatic", (double)q35_cuda_model_graph_stats(cm)->decode_programmatic);
        q35_bench_value(st, "decode_nodes", (double)q35_cuda_model_graph_stats(cm)->decode_nodes);
        q35_bench_value(st, "logits_pinned", pinned);
    }
out:
    q35_cuda_state_free(state);
    free(tokens);
    if (pinned)
        q35_cuda_host_free(logits);
    else
        free(logits);
}

int main(int argc, char **argv)
{
    if (q35_bench_gpu_init(&argc, argv))
        return 1;
    const char *shapes[SHAPE_27B + 1];
    for (int i = 0; i <= SHAPE_27B; i++)
        shapes[i] = q35_shape_at(i)->name;
    q35_bench_axis_labels("shape", shapes, SHAPE_27B + 1);
    q35_bench_axis_labels("quant", k_quants, (int)(sizeof k_quants / sizeof k_quants[0]));
    q35_bench_axis_labels("attn", (const char *[]){"default", "f32", "flash"}, 3);
    q35_bench_axis_labels("gemm", (const char *[]){"default", "f32", "f16", "fp8"}, 4);
    q35_bench_axis_labels("delta", (const char *[]){"default", "scan", "chunked"}, 3);
    char names[400];
    q35_variant_list(q35_attention_flash_variant_count, q35_attention_flash_variant_name,
                     q35_attention_flash_variant_production, -1, names, sizeof names);
    q35_bench_context("flash_variants", names);
    q35_variant_list(q35_delta_chunk_variant_count, q35_delta_chunk_variant_name,
                     q35_delta_chunk_variant_production, -1, names, sizeof names);
    q35_bench_context("delta_chunk_variants", names);
    q35_variant_list(q35_gemm_sm90_variant_count, q35_gemm_sm90_variant_name, q35_gemm_sm90_variant_production, -1,
                     names, sizeof names);
    q35_bench_context("gemm_sm90_variants", names);

    /* per shape, its points in a row, so each (shape, quant) model is generated once */
    static const int64_t shapes_run[] = {SHAPE_08B, SHAPE_9B, SHAPE_27B};
    static const int64_t q4k[] = {QUANT_Q4_K}, others[] = {QUANT_Q6_K, QUANT_Q8_0, QUANT_F16};
    static const int64_t gemms[] = {Q35_GEMM_F32, Q35_GEMM_F16}, f16[] = {Q35_GEMM_F16};
    static const int64_t attns[] = {Q35_ATTN_F32, Q35_ATTN_FLASH}, f32[] = {Q35_ATTN_F32};
    static const int64_t c512[] = {512}, cdef[] = {Q35_CHUNK_ROWS_DISCRETE}, chunks[] = {64, 128, 256, 512, 1024, 4096};
    static const int64_t lens[] = {512, 4096, 16384, 65536, 131072}, l4k[] = {4096};
    static const int64_t ctxs[] = {512, 4096, 16384, 65536};
    static const int64_t tiny[] = {SHAPE_TINY}, q4km[] = {QUANT_Q4_K_M}, short_lens[] = {512, 4096};
    {
        const q35_bench_axis shape = {"shape", tiny, 1}, quant = {"quant", q4km, 1};
        q35_bench_register("prefill", bench_prefill, NULL,
                           (q35_bench_axis[]){shape, quant, {"gemm", gemms, 2}, {"attn", attns, 2}, {"chunk", c512, 1},
                                              {"len", short_lens, 2}},
                           6);
        q35_bench_register("decode", bench_decode, NULL, (q35_bench_axis[]){shape, quant, {"ctx", c512, 1}}, 3);
    }
    for (int i = 0; i < 3; i++) {
        const q35_bench_axis shape = {"shape", &shapes_run[i], 1}, quant = {"quant", q4k, 1};
        /* paths */
        q35_bench_register("prefill", bench_prefill, NULL,
                           (q35_bench_axis[]){shape, quant, {"gemm", gemms, 2}, {"attn", attns, 2}, {"chunk", cdef, 1},
                                              {"len", lens, 5}},
                           6);
        q35_bench_register("decode", bench_decode, NULL, (q35_bench_axis[]){shape, quant, {"ctx", ctxs, 4}}, 3);
        if (shapes_run[i] != SHAPE_9B)
            continue;
        /* the opt-in FP8 projections on the fast path (skipped below sm_89, saying so): at 2048-row chunks (the
         * earlier records') and at the fast paths' default (Q35_CHUNK_ROWS_FAST: what `q35 run --gemm fp8` runs) */
        static const int64_t fp8[] = {Q35_GEMM_FP8}, fp8_attn[] = {Q35_ATTN_FLASH},
                             fp8_chunks[] = {Q35_CHUNK_ROWS_DISCRETE, Q35_CHUNK_ROWS_FAST};
        q35_bench_register("prefill", bench_prefill, NULL,
                           (q35_bench_axis[]){shape, quant, {"gemm", fp8, 1}, {"attn", fp8_attn, 1},
                                              {"chunk", fp8_chunks, 2}, {"len", lens, 5}},
                           6);
        /* the delta rule both ways on the fast path */
        static const int64_t deltas[] = {Q35_DELTA_SCAN, Q35_DELTA_CHUNKED}, flash[] = {Q35_ATTN_FLASH};
        static const int64_t delta_lens[] = {512, 4096, 16384};
        q35_bench_register("prefill", bench_prefill_delta, NULL,
                           (q35_bench_axis[]){shape, quant, {"gemm", f16, 1}, {"attn", flash, 1}, {"chunk", cdef, 1},
                                              {"len", delta_lens, 3}, {"delta", deltas, 2}},
                           7);
        /* chunk rows (the default is in the paths set), then the other quant types */
        q35_bench_register("prefill", bench_prefill, NULL,
                           (q35_bench_axis[]){shape, quant, {"gemm", f16, 1}, {"attn", attns, 2}, {"chunk", chunks, 6},
                                              {"len", l4k, 1}},
                           6);
        /* the fast path's default chunk rows (Q35_CHUNK_ROWS_FAST) at every length: what `q35 run` and the
         * model run on f16 + flash, paired with transformers in bench/peers.map; 4096-row chunks past 4k
         * beside it */
        static const int64_t cfast[] = {Q35_CHUNK_ROWS_FAST}, c4k[] = {4096}, long_lens[] = {16384, 65536, 131072};
        q35_bench_register("prefill", bench_prefill, NULL,
                           (q35_bench_axis[]){shape, quant, {"gemm", f16, 1}, {"attn", flash, 1}, {"chunk", cfast, 1},
                                              {"len", lens, 5}},
                           6);
        q35_bench_register("prefill", bench_prefill, NULL,
                           (q35_bench_axis[]){shape, quant, {"gemm", f16, 1}, {"attn", flash, 1}, {"chunk", c4k, 1},
                                              {"len", long_lens, 3}},
                           6);
        q35_bench_register("prefill", bench_prefill, NULL,
                           (q35_bench_axis[]){shape, {"quant", others, 3}, {"gemm", f16, 1}, {"attn", f32, 1},
                                              {"chunk", cdef, 1}, {"len", l4k, 1}},
                           6);
        /* the Q4_K_M mix and F16 weights on the fast path, and their decode steps: each file's points in a row */
        static const int64_t peer_quants[] = {QUANT_Q4_K_M, QUANT_F16}, peer_lens[] = {512, 4096, 16384};
        for (int q = 0; q < 2; q++) {
            const q35_bench_axis pq = {"quant", &peer_quants[q], 1};
            q35_bench_register("prefill", bench_prefill, NULL,
                               (q35_bench_axis[]){shape, pq, {"gemm", f16, 1}, {"attn", flash, 1}, {"chunk", cfast, 1},
                                                  {"len", peer_lens, 3}},
                               6);
            q35_bench_register("decode", bench_decode, NULL, (q35_bench_axis[]){shape, pq, {"ctx", ctxs, 2}}, 3);
        }
    }
    const int rc = q35_bench_main(argc, argv);
    q35_cuda_model_free(g_model.cm);
    return rc;
}
