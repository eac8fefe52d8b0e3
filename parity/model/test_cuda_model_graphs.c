/* The prefill's CUDA graphs (paths.graphs, model/cuda_graph.c) against plain
 * launches on the tiny shape (8 layers: 6 DeltaNet, 2 attention of head dim
 * 256; q4_k_m), chunk rows 37 over n tokens (chunks 37, 37, ..., and a shorter
 * last one): on every path that takes graphs (flash with GEMM f16 and the
 * chunked delta rule, with the scan; flash with GEMM fp8 where it runs; the
 * deterministic path) the logits at cm_positions and the whole state are
 * BITWISE those of plain launches, for
 *   - the first prefill after the paths are set (each row count's first chunk
 *     plain, the rest as graphs),
 *   - a second one (every chunk a graph: kept graphs updated, the last
 *     chunk's kind instantiated),
 *   - a prompt split into two calls at n / 2 (other row counts, a state
 *     carried across calls);
 * and the graph counters say graphs ran (launched = layers x graph chunks,
 * each capture instantiated or updated), so the comparison cannot pass by
 * graphs silently not running. On a path that does not take graphs (f32 GEMM
 * with f32 attention: cuBLAS's own calls) nothing is captured.
 *
 * The decode graph (paths.decode_graph): after a prefill, decode steps with
 * the graph give BITWISE the logits and the state of plain steps, over an f16
 * cache (flash) and an f32 one (f32 attention; deterministic); the counters say
 * the step was captured once and replayed at every later step, and captured
 * anew for a step without logits and for another state, whose turn leaves
 * the first state's graphs to replay. The 8-bit-activation
 * decode (decode-q8) within the FP8 tier of the exact one, the split decode
 * attention (decode-split) within the f32 paths' bound of the exact kernel,
 * the 8-bit GEMVs launched early (decode-pdl) and the norms writing the 8-bit
 * x (decode-fuse), and SwiGLU, the gate and the gated norm writing it
 * (decode-act-q8) with the logits of the plain forms; each one's graph
 * bitwise its plain steps. decode-overlap (the step's edges into kernels that
 * wait first made programmatic: at least one a layer) bitwise the plain
 * graph, over the exact decode attention and the split one. */
#include "cuda_model_cases.h"
#include "model/accuracy.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROWS 37

static void fatal(const char *what, const q35_error *err)
{
    printf("FAIL  %s: %s\n", what, err->msg);
    exit(1);
}

/* The model's paths with graphs on or off, the last layer unpruned in both
 * (graphs never prune, q35_paths_prune: the plain launches compared with them
 * run every row too); nothing else changed. */
static void set_graphs(q35_cuda_model *cm, bool on)
{
    q35_cuda_paths p = *q35_cuda_model_paths(cm);
    p.graphs = on;
    p.prune_off = true;
    q35_error err = {{0}};
    if (q35_cuda_model_set_paths(cm, &p, &err))
        fatal("setting the paths", &err);
}

/* What one run keeps: the logits at the positions, the state. */
typedef struct run_out {
    float *logits; /* [n_at][vocab] */
    q35_cuda_state_host h;
} run_out;

/* Resets st and prefills tokens[0..n) in calls that end at each of ends[0..n_ends) (the last n), logits at at[]. */
static void run(q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens, const int64_t *ends, int n_ends,
                const int64_t *at, int n_at, run_out *out)
{
    const int vocab = q35_cuda_model_hparams(cm)->n_vocab;
    out->logits = malloc((size_t)n_at * (size_t)vocab * sizeof *out->logits);
    q35_poison_f32(out->logits, (int64_t)n_at * vocab);
    q35_error err = {{0}};
    if (q35_cuda_state_reset(st, &err))
        fatal("resetting the state", &err);
    int64_t from = 0;
    int a = 0;
    for (int c = 0; c < n_ends; c++) {
        int a_end = a;
        while (a_end < n_at && at[a_end] < ends[c])
            a_end++;
        if (q35_cuda_prefill_logits_at(cm, st, tokens + from, ends[c] - from, from, at + a, a_end - a,
                                       a_end > a ? out->logits + (int64_t)a * vocab : NULL, NULL, &err))
            fatal("prefill", &err);
        from = ends[c];
        a = a_end;
    }
    cm_download(st, &out->h);
}

static void run_free(run_out *o)
{
    free(o->logits);
    q35_cuda_state_host_free(&o->h);
}

static bool same(q35_suite *s, const char *what, const run_out *plain, const run_out *graph, int n_at, int vocab)
{
    return cm_case_same(s, what, plain->logits, &plain->h, graph->logits, &graph->h, n_at * vocab);
}

/* Chunks of ROWS rows in a call of len tokens: full ones, and whether a shorter last one. */
static int64_t full_chunks(int64_t len)
{
    return len / ROWS;
}

/* One path: plain runs first, then the same runs with graphs on. */
static void check_path(q35_suite *s, q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens, int64_t n)
{
    const q35_cuda_paths *p = q35_cuda_model_paths(cm);
    const int vocab = q35_cuda_model_hparams(cm)->n_vocab, L = q35_cuda_model_hparams(cm)->n_layer;
    char name[32], what[160];
    cm_paths_name(p, name, sizeof name);
    int64_t at[8];
    const int n_at = cm_positions(n, ROWS, at);
    const int64_t whole[] = {n}, split[] = {n / 2, n};

    set_graphs(cm, false);
    run_out plain, plain_split;
    run(cm, st, tokens, whole, 1, at, n_at, &plain);
    run(cm, st, tokens, split, 2, at, n_at, &plain_split);

    set_graphs(cm, true);
    const q35_cuda_graph_stats s0 = *q35_cuda_model_graph_stats(cm);
    run_out first, second, graph_split;
    run(cm, st, tokens, whole, 1, at, n_at, &first);
    const q35_cuda_graph_stats s1 = *q35_cuda_model_graph_stats(cm);
    run(cm, st, tokens, whole, 1, at, n_at, &second);
    const q35_cuda_graph_stats s2 = *q35_cuda_model_graph_stats(cm);
    run(cm, st, tokens, split, 2, at, n_at, &graph_split);
    const q35_cuda_graph_stats s3 = *q35_cuda_model_graph_stats(cm);

    snprintf(what, sizeof what, "%-16s rows %d, %3" PRId64 " tokens, first prefill with graphs", name, ROWS, n);
    same(s, what, &plain, &first, n_at, vocab);
    snprintf(what, sizeof what, "%-16s rows %d, %3" PRId64 " tokens, second prefill with graphs", name, ROWS, n);
    same(s, what, &plain, &second, n_at, vocab);
    snprintf(what, sizeof what, "%-16s rows %d, %3" PRId64 " tokens in two calls, with graphs", name, ROWS, n);
    same(s, what, &plain_split, &graph_split, n_at, vocab);

    /* the counters: the first prefill runs each row count's first chunk plain */
    const int64_t full = full_chunks(n), last = n % ROWS != 0;
    const int64_t want1 = (full - 1) * L, want2 = (full + last) * L;
    const int64_t got1 = s1.launched - s0.launched, got2 = s2.launched - s1.launched;
    const int64_t captured = s2.layers_captured - s0.layers_captured,
                  made = s2.instantiated + s2.updated - s0.instantiated - s0.updated;
    /* and the second prefill's full chunks update kept graphs (an update that
       always failed would instantiate every chunk: the same bits, slower) */
    q35_case(s, got1 == want1 && got2 == want2 && captured == got1 + got2 && made == captured &&
                    s1.plain_chunks - s0.plain_chunks == 1 + last && s3.launched > s2.launched &&
                    (full == 0 || s2.updated > s1.updated),
             "%-16s graphs ran: %" PRId64 " then %" PRId64 " layer graphs launched (want %" PRId64 ", %" PRId64
             "), %" PRId64 " captured, %" PRId64 " instantiated, %" PRId64 " updated, %" PRId64
             " plain chunks; the split calls %" PRId64 " more", name, got1, got2, want1, want2, captured,
             s2.instantiated - s0.instantiated, s2.updated - s0.updated, s1.plain_chunks - s0.plain_chunks,
             s3.launched - s2.launched);
    set_graphs(cm, false);
    run_free(&plain);
    run_free(&plain_split);
    run_free(&first);
    run_free(&second);
    run_free(&graph_split);
}

/* A path that does not take graphs: asked for, nothing captured, and the results as without. */
static void check_not_taken(q35_suite *s, q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens, int64_t n)
{
    char name[32], what[160];
    cm_paths_name(q35_cuda_model_paths(cm), name, sizeof name);
    const int vocab = q35_cuda_model_hparams(cm)->n_vocab;
    int64_t at[8];
    const int n_at = cm_positions(n, ROWS, at);
    const int64_t whole[] = {n};
    run_out plain, asked;
    run(cm, st, tokens, whole, 1, at, n_at, &plain);
    set_graphs(cm, true);
    const q35_cuda_graph_stats s0 = *q35_cuda_model_graph_stats(cm);
    run(cm, st, tokens, whole, 1, at, n_at, &asked);
    run_free(&asked);
    run(cm, st, tokens, whole, 1, at, n_at, &asked);
    const q35_cuda_graph_stats s1 = *q35_cuda_model_graph_stats(cm);
    snprintf(what, sizeof what, "%-16s rows %d, graphs asked for on a path without them", name, ROWS);
    same(s, what, &plain, &asked, n_at, vocab);
    q35_case(s, !q35_paths_graphs(q35_cuda_model_paths(cm)) && s1.layers_captured == s0.layers_captured &&
                    s1.plain_chunks == s0.plain_chunks,
             "%-16s not taken: %" PRId64 " layers captured, %" PRId64 " plain chunks counted", name,
             s1.layers_captured - s0.layers_captured, s1.plain_chunks - s0.plain_chunks);
    set_graphs(cm, false);
    run_free(&plain);
    run_free(&asked);
}

/* The paths' decode graph on or off; nothing else changed. */
static void set_decode_graph(q35_cuda_model *cm, bool on)
{
    q35_cuda_paths p = *q35_cuda_model_paths(cm);
    p.decode_graph = on;
    q35_error err = {{0}};
    if (q35_cuda_model_set_paths(cm, &p, &err))
        fatal("setting the paths", &err);
}

#define STEPS 9

/* Resets st, prefills tokens[0..n0), then STEPS decode steps of tokens[n0..]
 * with their logits and one without; the logits and the state into out. */
static void decode_run(q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens, int64_t n0, run_out *out)
{
    const int vocab = q35_cuda_model_hparams(cm)->n_vocab;
    out->logits = malloc((size_t)STEPS * (size_t)vocab * sizeof *out->logits);
    q35_poison_f32(out->logits, (int64_t)STEPS * vocab);
    q35_error err = {{0}};
    if (q35_cuda_state_reset(st, &err) || q35_cuda_prefill(cm, st, tokens, n0, 0, NULL, NULL, &err))
        fatal("the decode run's prefill", &err);
    for (int i = 0; i <= STEPS; i++)
        if (q35_cuda_forward_token(cm, st, tokens[n0 + i], n0 + i, i < STEPS ? out->logits + (int64_t)i * vocab : NULL,
                                   NULL, &err))
            fatal("decode step", &err);
    cm_download(st, &out->h);
}

/* Plain decode steps, then the same with the decode graph, on this state and
 * on a second one of its capacity (the capacity picks kernels: decode-split
 * runs on Q35_DECODE_SPLIT_MIN_SEQ positions or more). */
static void check_decode(q35_suite *s, q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens, int64_t n)
{
    char name[32], what[160];
    cm_paths_name(q35_cuda_model_paths(cm), name, sizeof name);
    const int vocab = q35_cuda_model_hparams(cm)->n_vocab;
    const int64_t n0 = n - STEPS - 1;
    q35_error err = {{0}};
    q35_cuda_state *st2 = NULL;
    if (q35_cuda_state_create(&st2, cm, q35_cuda_state_max_seq(st), &err))
        fatal("a second state", &err);
    set_decode_graph(cm, false);
    run_out plain, graph, other;
    const q35_cuda_graph_stats s0 = *q35_cuda_model_graph_stats(cm);
    decode_run(cm, st, tokens, n0, &plain);
    const q35_cuda_graph_stats s1 = *q35_cuda_model_graph_stats(cm);
    set_decode_graph(cm, true);
    decode_run(cm, st, tokens, n0, &graph);
    const q35_cuda_graph_stats s2 = *q35_cuda_model_graph_stats(cm);
    decode_run(cm, st2, tokens, n0, &other);
    const q35_cuda_graph_stats s3 = *q35_cuda_model_graph_stats(cm);
    run_out again; /* the first state once more: its graphs kept (Q35_DECODE_GRAPHS), nothing captured */
    decode_run(cm, st, tokens, n0, &again);
    const q35_cuda_graph_stats s4 = *q35_cuda_model_graph_stats(cm);
    snprintf(what, sizeof what, "%-16s %d decode steps after %" PRId64 " tokens, with the decode graph", name, STEPS,
             n0);
    cm_case_same(s, what, plain.logits, &plain.h, graph.logits, &graph.h, STEPS * vocab);
    snprintf(what, sizeof what, "%-16s the same on a second state (captured anew)", name);
    cm_case_same(s, what, plain.logits, &plain.h, other.logits, &other.h, STEPS * vocab);
    snprintf(what, sizeof what, "%-16s the same on the first state again (its graphs replayed)", name);
    cm_case_same(s, what, plain.logits, &plain.h, again.logits, &again.h, STEPS * vocab);
    /* plain: nothing captured; with the graph, per state: the steps with logits captured once, the step
       without them once, every step launched as the graph; the second state captures its own two */
    const int64_t cap1 = s2.decode_captured - s1.decode_captured, run1 = s2.decode_launched - s1.decode_launched;
    const int64_t cap2 = s3.decode_captured - s2.decode_captured, run2 = s3.decode_launched - s2.decode_launched;
    const int64_t cap3 = s4.decode_captured - s3.decode_captured, run3 = s4.decode_launched - s3.decode_launched;
    q35_case(s, s1.decode_captured == s0.decode_captured && s1.decode_launched == s0.decode_launched && cap1 == 2 &&
                    run1 == STEPS + 1 && cap2 == 2 && run2 == STEPS + 1 && cap3 == 0 && run3 == STEPS + 1,
             "%-16s decode graph ran: plain %" PRId64 " launched; with it %" PRId64 " captured, %" PRId64
             " launched (want 2, %d); second state %" PRId64 ", %" PRId64 "; the first again %" PRId64 ", %" PRId64
             " (want 0 captured)",
             name, s1.decode_launched - s0.decode_launched, cap1, run1, STEPS + 1, cap2, run2, cap3, run3);
    run_free(&plain);
    run_free(&graph);
    run_free(&other);
    run_free(&again);
    q35_cuda_state_free(st2);
}

/* A decode switch's steps against the exact decode's on the same path: the
 * switch on (set), taken there (taken), its logits within rel L2 `l2` and KL
 * `kl` of the exact steps', its decode graph's nodes more (nodes > 0), as many
 * (0) or fewer (< 0) than theirs; then, through check_decode, its graph bitwise
 * its plain steps; the switch off again. */
static void check_decode_switch(q35_suite *s, q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens,
                                int64_t n, const char *what, void (*set)(q35_cuda_paths *, bool),
                                bool (*taken_on)(const q35_cuda_paths *), double l2, double kl, int nodes)
{
    const int vocab = q35_cuda_model_hparams(cm)->n_vocab;
    run_out exact, on;
    decode_run(cm, st, tokens, n - STEPS - 1, &exact);
    const int64_t nodes_exact = q35_cuda_model_graph_stats(cm)->decode_nodes;
    q35_cuda_paths p = *q35_cuda_model_paths(cm);
    set(&p, true);
    q35_error err = {{0}};
    if (q35_cuda_model_set_paths(cm, &p, &err))
        fatal("setting the paths", &err);
    const bool taken = taken_on(q35_cuda_model_paths(cm));
    decode_run(cm, st, tokens, n - STEPS - 1, &on);
    const int64_t nodes_on = q35_cuda_model_graph_stats(cm)->decode_nodes, dn = nodes_on - nodes_exact;
    const bool nodes_ok = nodes_exact > 0 && (nodes > 0 ? dn > 0 : nodes < 0 ? dn < 0 : dn == 0);
    const q35_logit_tier t = q35_logit_tier_of(on.logits, NULL, exact.logits, STEPS, vocab);
    char line[200];
    q35_case(s, taken && nodes_ok && t.nonfinite == 0 && t.rel_l2_worst <= l2 && t.kl_worst <= kl,
             "%s, %d steps: %s (bounds rel L2 %.2g, KL %.1e); graph nodes %" PRId64 " against %" PRId64 " (want %s)%s",
             what, STEPS, q35_logit_tier_line(&t, line, (int)sizeof line), l2, kl, nodes_on, nodes_exact,
             nodes > 0 ? "more" : nodes < 0 ? "fewer" : "as many", taken ? "" : "; NOT TAKEN on these paths");
    check_decode(s, cm, st, tokens, n);
    set(&p, false);
    if (q35_cuda_model_set_paths(cm, &p, &err))
        fatal("setting the paths", &err);
    run_free(&exact);
    run_free(&on);
}

static void set_q8(q35_cuda_paths *p, bool on)
{
    p->decode_q8 = on;
}

static void set_split(q35_cuda_paths *p, bool on)
{
    p->decode_split = on;
}

static void set_pdl(q35_cuda_paths *p, bool on)
{
    p->decode_pdl = on;
}

static void set_fuse(q35_cuda_paths *p, bool on)
{
    p->decode_fuse = on;
}

static void set_act_q8(q35_cuda_paths *p, bool on)
{
    p->decode_act_q8 = on;
}

/* decode-overlap (the decode graph's edges into kernels that wait first made
 * programmatic) against the plain graph, on st: at least one edge a layer
 * made programmatic, the logits and the state bitwise. */
static void check_overlap(q35_suite *s, q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens, int64_t n,
                          const char *which)
{
    const int vocab = q35_cuda_model_hparams(cm)->n_vocab, L = q35_cuda_model_hparams(cm)->n_layer;
    run_out plain, over;
    q35_cuda_paths p = *q35_cuda_model_paths(cm);
    q35_error err = {{0}};
    p.decode_graph = true;
    p.decode_overlap = false;
    if (q35_cuda_model_set_paths(cm, &p, &err))
        fatal("setting the paths", &err);
    decode_run(cm, st, tokens, n - STEPS - 1, &plain);
    const int64_t made_off = q35_cuda_model_graph_stats(cm)->decode_programmatic;
    p.decode_overlap = true;
    if (q35_cuda_model_set_paths(cm, &p, &err))
        fatal("setting the paths", &err);
    const bool taken = q35_paths_decode_overlap(q35_cuda_model_paths(cm));
    decode_run(cm, st, tokens, n - STEPS - 1, &over);
    const int64_t made = q35_cuda_model_graph_stats(cm)->decode_programmatic;
    q35_case(s, taken && made >= L && made_off == 0,
             "decode-overlap (%s): %" PRId64 " edges of the step made programmatic (want >= %d, and 0 off: %" PRId64 ")%s",
             which, made, L, made_off, taken ? "" : "; NOT TAKEN on these paths");
    char what[160];
    snprintf(what, sizeof what, "decode-overlap (%s), %d steps: logits and state vs the plain graph", which, STEPS);
    same(s, what, &plain, &over, STEPS, vocab);
    p.decode_overlap = false;
    if (q35_cuda_model_set_paths(cm, &p, &err))
        fatal("setting the paths", &err);
    run_free(&plain);
    run_free(&over);
}

/* The 8-bit-activation decode (switch decode-q8) against the exact GEMVs:
 * within the FP8 tier's bounds (model/accuracy.h: rel L2 0.05 sqrt(layers),
 * KL 2.5e-4 layers; its activations round to 1/254 of a block's largest,
 * finer than e4m3's 1/16). The split decode attention (switch decode-split)
 * against the exact kernel: within the f32 paths' bound (CM_LIMIT_F32 rel L2;
 * the kernel is within 1e-5 of the float64 attention, as the exact one is). */
static void check_decode_fast(q35_suite *s, q35_cuda_model *cm, q35_cuda_state *st, const int32_t *tokens, int64_t n)
{
    const int L = q35_cuda_model_hparams(cm)->n_layer;
    check_decode_switch(s, cm, st, tokens, n, "decode-q8 (8-bit activations) vs exact GEMVs", set_q8,
                        q35_paths_decode_q8, q35_fp8_tier_l2(L), q35_fp8_tier_kl(L), 1);
    /* the split runs on a state of Q35_DECODE_SPLIT_MIN_SEQ positions or more (below, the exact kernel) */
    q35_cuda_state *big = NULL;
    q35_error serr = {{0}};
    if (q35_cuda_state_create(&big, cm, n > Q35_DECODE_SPLIT_MIN_SEQ ? n : Q35_DECODE_SPLIT_MIN_SEQ, &serr))
        fatal("a state for the split attention", &serr);
    check_decode_switch(s, cm, big, tokens, n, "decode-split (attention split over the cache) vs the exact kernel",
                        set_split, q35_paths_decode_split, CM_LIMIT_F32, 1e-6, 1);
    check_overlap(s, cm, big, tokens, n, "the split attention");
    q35_cuda_state_free(big);
    /* the 8-bit GEMVs launched early (decode-pdl) against them launched plainly, and the norms writing the
       8-bit x (decode-fuse) against its quantization apart: the same logits */
    q35_cuda_paths p = *q35_cuda_model_paths(cm);
    q35_error err = {{0}};
    set_q8(&p, true);
    if (q35_cuda_model_set_paths(cm, &p, &err))
        fatal("setting the paths", &err);
    check_decode_switch(s, cm, st, tokens, n, "decode-pdl (8-bit GEMVs launched early) vs launched plainly", set_pdl,
                        q35_paths_decode_pdl, 0.0, 0.0, 0);
    check_decode_switch(s, cm, st, tokens, n, "decode-fuse (the norms write the 8-bit x) vs quantized apart", set_fuse,
                        q35_paths_decode_fuse, 0.0, 0.0, -1);
    check_decode_switch(s, cm, st, tokens, n,
                        "decode-act-q8 (SwiGLU, the gate, the gated norm write the 8-bit x) vs quantized apart",
                        set_act_q8, q35_paths_decode_act_q8, 0.0, 0.0, -1);
    check_overlap(s, cm, st, tokens, n, "8-bit GEMVs, the exact attention");
    set_q8(&p, false);
    if (q35_cuda_model_set_paths(cm, &p, &err))
        fatal("setting the paths", &err);
}

int main(void)
{
    q35_suite s;
    q35_rng rng;
    const int skip = q35_gpu_suite(&s, "CUDA model: prefill chunks and decode steps as CUDA graphs vs plain launches", &rng);
    if (skip)
        return skip;
    const int64_t n = q35_quick() ? 3 * ROWS + 5 : 5 * ROWS + 11;
    q35_model *m = cm_model("tiny", 0, 0, "q4_k_m", q35_rng_next(&rng));
    q35_cuda_model *cm = cm_load(m, n);
    int32_t *tokens = cm_tokens(n, m->hp.n_vocab, &rng);
    q35_cuda_state *st = NULL;
    q35_error err = {{0}};
    if (q35_cuda_state_create(&st, cm, n, &err))
        fatal("state", &err);

    cm_set(cm, Q35_ATTN_FLASH, Q35_GEMM_F16, ROWS, false, 0);
    check_path(&s, cm, st, tokens, n);
    cm_set_delta(cm, Q35_ATTN_FLASH, Q35_GEMM_F16, Q35_DELTA_SCAN, ROWS, false, 0);
    check_path(&s, cm, st, tokens, n);
    if (cm_fp8_here("flash/fp8 with graphs")) {
        cm_set(cm, Q35_ATTN_FLASH, Q35_GEMM_FP8, ROWS, false, 0);
        check_path(&s, cm, st, tokens, n);
    }
    cm_set(cm, Q35_ATTN_F32, Q35_GEMM_F32, ROWS, true, 0);
    check_path(&s, cm, st, tokens, n);
    cm_set(cm, Q35_ATTN_F32, Q35_GEMM_F32, ROWS, false, 0);
    check_not_taken(&s, cm, st, tokens, n);

    cm_set(cm, Q35_ATTN_FLASH, Q35_GEMM_F16, ROWS, false, 0); /* an f16 cache */
    check_decode(&s, cm, st, tokens, n);
    check_decode_fast(&s, cm, st, tokens, n);
    cm_set(cm, Q35_ATTN_F32, Q35_GEMM_F32, ROWS, false, 0);   /* an f32 cache */
    check_decode(&s, cm, st, tokens, n);
    cm_set(cm, Q35_ATTN_F32, Q35_GEMM_F32, ROWS, true, 0);    /* deterministic */
    check_decode(&s, cm, st, tokens, n);

    q35_cuda_state_free(st);
    free(tokens);
    q35_cuda_model_free(cm);
    q35_model_free(m);
    return q35_suite_end(&s);
}
