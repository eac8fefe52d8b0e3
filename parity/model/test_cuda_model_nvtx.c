/* The CUDA model's NVTX ranges read like the model: prefill -> chunk -> layer
 * -> op, each layer kind with its ops in the reference's order, the tail only
 * in the chunk that holds the asked row. The residual adds are deferred into
 * the next residual RMSNorm (model/cuda_layers.c): a layer opens with
 * "rmsnorm attn_norm" (the first) or "add_rmsnorm attn_norm" (the previous
 * layer's FFN add in it), its FFN with "add_rmsnorm post_attention_norm" (the
 * mixer's add), and only the last layer ends with "residual". A prefill
 * prunes its last layer (q35_paths_prune, on this f32 path): in a chunk
 * without the asked row it stops after its mixing op's state ("qk_norm_rope"
 * for attention, "delta_rule" for DeltaNet), in the chunk with it the kept row
 * is gathered ("keep_rows") after the mixing op and the layer goes on. A prefill's
 * DeltaNet layers run their prologue as the one op "delta_prep"
 * (kernels/delta_prep.h), a token's as "conv1d", "l2norm", "gates". Recorded by a small NVTX injection
 * library (nvtx_record.c, loaded by NVTX through NVTX_INJECTION64_PATH, which
 * this suite sets before its first NVTX call). Also the per-op timing: each op
 * timed as many times as its ranges were pushed, every time positive, and the
 * projections' and attention's FLOP counted as the shapes say. */
#define _POSIX_C_SOURCE 200809L
#include "cuda_model_cases.h"
#include "nvtx_record.h"
#include "flop_count.h"

#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef Q35_NVTX_RECORD_PATH
#error "Q35_NVTX_RECORD_PATH must name the recording injection library"
#endif

static q35_nvtx_record_count_fn rec_count;
static q35_nvtx_record_at_fn rec_at;
static q35_nvtx_record_clear_fn rec_clear;

#define N_DELTANET_MIXER 10
#define N_DELTANET_FUSED 8
#define N_ATTENTION_MIXER 7
#define N_FFN 5
/* per token: conv1d, l2norm, gates; the rows paths (a prefill's chunks): the
 * fused prologue (kernels/delta_prep.h) in their place */
static const char *const k_deltanet_mixer[N_DELTANET_MIXER] = {
    "proj attn_qkv", "proj ssm_alpha", "proj ssm_beta", "proj attn_gate", "conv1d", "l2norm", "gates",
    "delta_rule", "gated_norm", "proj ssm_out",
};
static const char *const k_deltanet_fused[N_DELTANET_FUSED] = {
    "proj attn_qkv", "proj ssm_alpha", "proj ssm_beta", "proj attn_gate", "delta_prep",
    "delta_rule", "gated_norm", "proj ssm_out",
};
static const char *const k_attention_mixer[N_ATTENTION_MIXER] = {
    "proj attn_q", "proj attn_k", "proj attn_v", "qk_norm_rope", "attention", "out_gate", "proj attn_output",
};
static const char *const k_ffn[N_FFN] = {
    "add_rmsnorm post_attention_norm", "proj ffn_gate", "proj ffn_up", "swiglu", "proj ffn_down",
};
static const char *const k_edges[] = {"rmsnorm attn_norm", "add_rmsnorm attn_norm", "residual"};

/* A decode step's grouped projections (model/cuda_layers.c, proj_many): the
 * weights of one input in order, those of one type as one op named "proj
 * a+b+..." (a lone one by its own name); their names into out (kept in a
 * pool), the count. */
static char g_pool[64][160];
static int g_pooled;
static int token_groups(const q35_weight *const *w, const char *const *names, int n, const char **out)
{
    bool done[4] = {false};
    int k = 0;
    for (int i = 0; i < n; i++) {
        if (done[i])
            continue;
        char *name = g_pool[g_pooled++ % 64];
        int used = snprintf(name, 160, "proj %s", names[i]);
        for (int j = i + 1; j < n; j++)
            if (!done[j] && w[j]->type == w[i]->type) {
                used += snprintf(name + used, 160 - (size_t)used, "+%s", names[j]);
                done[j] = true;
            }
        out[k++] = name;
    }
    return k;
}

/* A decode step's ops of a layer (L its weights; an f32 cache: the
 * attention's chain; the fused DeltaNet prologue), in order, into out; their
 * count. */
static int token_ops(const q35_layer *L, bool first, bool last, const char **out)
{
    int n = 0;
    out[n++] = first ? "rmsnorm attn_norm" : "add_rmsnorm attn_norm";
    if (L->kind == Q35_LAYER_ATTENTION) {
        const q35_weight *w[3] = {&L->attn_q, &L->attn_k, &L->attn_v};
        n += token_groups(w, (const char *const[]){"attn_q", "attn_k", "attn_v"}, 3, out + n);
        static const char *const rest[] = {"qk_norm_rope", "attention", "out_gate", "proj attn_output"};
        for (int i = 0; i < 4; i++)
            out[n++] = rest[i];
    } else {
        const q35_weight *w[4] = {&L->attn_qkv, &L->ssm_alpha, &L->ssm_beta, &L->attn_gate};
        n += token_groups(w, (const char *const[]){"attn_qkv", "ssm_alpha", "ssm_beta", "attn_gate"}, 4, out + n);
        static const char *const rest[] = {"delta_prep", "delta_rule", "gated_norm", "proj ssm_out"};
        for (int i = 0; i < 4; i++)
            out[n++] = rest[i];
    }
    out[n++] = "add_rmsnorm post_attention_norm";
    const q35_weight *w[2] = {&L->ffn_gate, &L->ffn_up};
    n += token_groups(w, (const char *const[]){"ffn_gate", "ffn_up"}, 2, out + n);
    out[n++] = "swiglu";
    out[n++] = "proj ffn_down";
    if (last)
        out[n++] = "residual";
    return n;
}

/* The ops of a layer, in order, into out (up to 1 + 10 + 1 + 5 + 1); their
 * count. fused: the DeltaNet prologue as one op (a prefill's chunks). kept:
 * the last layer of a pruned chunk (-1: not pruned) keeping that many rows:
 * 0 ends it at the mixing op's state (attention: qk_norm_rope; DeltaNet:
 * delta_rule), more gathers them (keep_rows) after the mixing op. */
static int layer_ops(bool attn, bool fused, bool first, bool last, int kept, const char **out)
{
    int n = 0;
    out[n++] = first ? "rmsnorm attn_norm" : "add_rmsnorm attn_norm";
    const int mixer = attn ? N_ATTENTION_MIXER : fused ? N_DELTANET_FUSED : N_DELTANET_MIXER;
    const char *state_op = attn ? "qk_norm_rope" : "delta_rule", *mixing_op = attn ? "attention" : "delta_rule";
    for (int i = 0; i < mixer; i++) {
        out[n++] = attn ? k_attention_mixer[i] : fused ? k_deltanet_fused[i] : k_deltanet_mixer[i];
        if (kept == 0 && strcmp(out[n - 1], state_op) == 0)
            return n;
        if (kept > 0 && strcmp(out[n - 1], mixing_op) == 0)
            out[n++] = "keep_rows";
    }
    for (int i = 0; i < N_FFN; i++)
        out[n++] = k_ffn[i];
    if (last)
        out[n++] = "residual";
    return n;
}

/* The pushes at `depth` directly inside the range pushed at event `parent`
 * (-1: the top level), in order, as event indices. */
static int children(int parent, int *out, int cap)
{
    const int depth = parent < 0 ? 0 : rec_at(parent)->depth + 1;
    int n = 0;
    for (int i = parent + 1; i < rec_count(); i++) {
        const q35_nvtx_event *e = rec_at(i);
        if (!e->push && e->depth < depth)
            break; /* the parent's pop */
        if (e->push && e->depth == depth && n < cap)
            out[n++] = i;
    }
    return n;
}

/* A range the model pushes (a library's own ranges inside an op are allowed). */
static bool ours(const char *name)
{
    static const char *const prefixes[] = {"prefill", "forward_token", "chunk ", "layer ", "embed", "tail",
                                           "keep_rows"};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
        if (strncmp(name, prefixes[i], strlen(prefixes[i])) == 0)
            return true;
    for (int i = 0; i < N_DELTANET_MIXER; i++)
        if (strcmp(name, k_deltanet_mixer[i]) == 0)
            return true;
    if (strcmp(name, "delta_prep") == 0)
        return true;
    for (int i = 0; i < N_ATTENTION_MIXER; i++)
        if (strcmp(name, k_attention_mixer[i]) == 0)
            return true;
    for (int i = 0; i < N_FFN; i++)
        if (strcmp(name, k_ffn[i]) == 0)
            return true;
    for (size_t i = 0; i < sizeof k_edges / sizeof k_edges[0]; i++)
        if (strcmp(name, k_edges[i]) == 0)
            return true;
    return false;
}

/* Whether any range inside the one pushed at event `op` is the model's. */
static bool holds_ours(int op)
{
    int inner[64];
    const int n = children(op, inner, 64);
    for (int i = 0; i < n; i++)
        if (ours(rec_at(inner[i])->name) || holds_ours(inner[i]))
            return true;
    return false;
}

static bool balanced(void)
{
    int depth = 0;
    for (int i = 0; i < rec_count(); i++) {
        depth += rec_at(i)->push ? 1 : -1;
        if (depth < 0)
            return false;
    }
    return depth == 0;
}

/* One top-level range `top` holding the chunks of rows `rows` over n tokens
 * (fused: the DeltaNet prologue as one op; pruned: a prefill's last layer
 * pruned where the chunk has fewer asked rows, here 0 or 1, than rows). */
static void check_tree(q35_suite *s, const char *top, const q35_model *m, int64_t pos0, int64_t n, int64_t rows,
                       int64_t tail_row, bool fused, bool pruned)
{
    const q35_hparams *hp = &m->hp;
    const bool token = strcmp(top, "forward_token") == 0; /* a decode step: its grouped projections */
    int tops[4], chunks[64], parts[64], ops[64];
    const int n_top = children(-1, tops, 4);
    bool ok = balanced() && n_top == 1 && strcmp(rec_at(tops[0])->name, top) == 0;
    char why[256] = "";
    if (!ok)
        snprintf(why, sizeof why, "%d top-level ranges, first '%s', balanced %d", n_top,
                 n_top ? rec_at(tops[0])->name : "", balanced());
    const int n_chunks = ok ? children(tops[0], chunks, 64) : 0;
    const int64_t want_chunks = (n + rows - 1) / rows;
    if (ok && n_chunks != want_chunks) {
        ok = false;
        snprintf(why, sizeof why, "%d chunks, want %" PRId64, n_chunks, want_chunks);
    }
    int64_t layer_ranges = 0, op_ranges = 0;
    for (int c = 0; ok && c < n_chunks; c++) {
        const int64_t p = pos0 + c * rows, T = n - c * rows < rows ? n - c * rows : rows;
        char name[64];
        snprintf(name, sizeof name, "chunk %" PRId64 "..%" PRId64, p, p + T - 1);
        const int n_parts = children(chunks[c], parts, 64);
        const bool has_tail = tail_row >= p && tail_row < p + T;
        ok = strcmp(rec_at(chunks[c])->name, name) == 0 && n_parts == 1 + hp->n_layer + has_tail &&
             strcmp(rec_at(parts[0])->name, "embed") == 0 &&
             (!has_tail || strcmp(rec_at(parts[n_parts - 1])->name, "tail") == 0);
        if (!ok) {
            snprintf(why, sizeof why, "chunk %d: '%s' (want '%s') with %d ranges (want %d)", c,
                     rec_at(chunks[c])->name, name, n_parts, 1 + hp->n_layer + has_tail);
            break;
        }
        for (int il = 0; ok && il < hp->n_layer; il++) {
            const bool attn = hp->is_attn[il];
            snprintf(name, sizeof name, "layer %d %s", il, attn ? "attention" : "deltanet");
            const char *want[1 + N_DELTANET_MIXER + 1 + N_FFN + 1];
            const bool last = il == hp->n_layer - 1;
            const int kept = last && pruned && (int64_t)has_tail < T ? (int)has_tail : -1;
            const int n_want = token ? token_ops(&m->layers[il], il == 0, last, want)
                                     : layer_ops(attn, fused, il == 0, last, kept, want);
            const int n_ops = children(parts[1 + il], ops, 64);
            ok = strcmp(rec_at(parts[1 + il])->name, name) == 0 && n_ops == n_want;
            for (int k = 0; ok && k < n_ops; k++)
                ok = strcmp(rec_at(ops[k])->name, want[k]) == 0 && !holds_ours(ops[k]);
            if (!ok)
                snprintf(why, sizeof why, "chunk %d, '%s' (want '%s'): %d ops (want %d)", c,
                         rec_at(parts[1 + il])->name, name, n_ops, n_want);
            layer_ranges++;
            op_ranges += n_ops;
        }
    }
    q35_case(s, ok, "%-13s %" PRId64 " tokens at %" PRId64 ", chunk rows %" PRId64 ": %d events, %d chunk ranges, %"
             PRId64 " layer ranges, %" PRId64 " op ranges in the model's order%s%s",
             top, n, pos0, rows, rec_count(), n_chunks, layer_ranges, op_ranges, why[0] ? "; " : "", why);
}

/* The timed ops against the op ranges pushed (fused: a prefill, whose
 * DeltaNet prologue is conv1d's op and l2norm and gates never run). */
static void check_times(q35_suite *s, const q35_op_times *t, bool fused)
{
    /* an op's ranges: the names starting with its prefix, or its second (the
     * fused norm's, the fused prologue's); folded: none where fused */
    static const struct { const char *prefix, *also; q35_op op; bool folded; } map[] = {
        {"embed", NULL, Q35_OP_EMBED, false}, {"rmsnorm", "add_rmsnorm", Q35_OP_NORM, false},
        {"proj", NULL, Q35_OP_PROJ, false}, {"conv1d", "delta_prep", Q35_OP_CONV, false},
        {"l2norm", NULL, Q35_OP_L2NORM, true}, {"gates", NULL, Q35_OP_GATES, true},
        {"delta_rule", NULL, Q35_OP_DELTA, false}, {"gated_norm", NULL, Q35_OP_GATED_NORM, false},
        {"qk_norm_rope", NULL, Q35_OP_QK_NORM_ROPE, false}, {"attention", NULL, Q35_OP_ATTN, false},
        {"out_gate", NULL, Q35_OP_OUT_GATE, false}, {"swiglu", NULL, Q35_OP_SWIGLU, false},
        {"residual", NULL, Q35_OP_RESIDUAL, false}, {"tail", NULL, Q35_OP_TAIL, false},
        {"keep_rows", NULL, Q35_OP_KEEP_ROWS, false},
    };
    bool ok = true;
    char line[512] = "";
    for (size_t k = 0; k < sizeof map / sizeof map[0]; k++) {
        int64_t pushed = 0;
        for (int i = 0; i < rec_count(); i++) {
            const char *name = rec_at(i)->name;
            const bool named = strncmp(name, map[k].prefix, strlen(map[k].prefix)) == 0 ||
                               (map[k].also && strncmp(name, map[k].also, strlen(map[k].also)) == 0);
            pushed += rec_at(i)->push && named && rec_at(i)->depth >= 2;
        }
        const bool absent = fused && map[k].folded; /* then neither timed nor pushed */
        const bool this_ok = absent ? t->calls[map[k].op] == 0 && pushed == 0
                                    : t->calls[map[k].op] == pushed && pushed > 0 && t->seconds[map[k].op] > 0.0;
        ok = ok && this_ok;
        const size_t used = strlen(line);
        snprintf(line + used, sizeof line - used, "%s%s %" PRId64 "/%" PRId64 " %.3f ms%s", k ? ", " : "",
                 q35_op_name(map[k].op), t->calls[map[k].op], pushed, 1e3 * t->seconds[map[k].op], this_ok ? "" : "!");
    }
    double phases[Q35_PHASE_COUNT];
    q35_phase_times(t, phases);
    q35_case(s, ok, "per-op timing (timed/ranges): %s; phases: projections %.3f, scan %.3f, attention %.3f, other %.3f ms",
             line, 1e3 * phases[Q35_PHASE_PROJ], 1e3 * phases[Q35_PHASE_SCAN], 1e3 * phases[Q35_PHASE_ATTN],
             1e3 * phases[Q35_PHASE_OTHER]);
}

int main(void)
{
    /* before anything calls NVTX: it reads this once */
    setenv("NVTX_INJECTION64_PATH", Q35_NVTX_RECORD_PATH, 1);
    q35_suite s;
    q35_rng rng;
    const int skip = q35_gpu_suite(&s, "CUDA model NVTX ranges and per-op timing", &rng);
    if (skip)
        return skip;
    q35_model *m = cm_model("tiny", 0, 0, "q4_k_m", q35_rng_next(&rng));
    q35_cuda_model *cm = cm_load(m, 64);
    cm_set(cm, Q35_ATTN_F32, Q35_GEMM_F32, 4, false, 0);
    int32_t *tokens = cm_tokens(16, m->hp.n_vocab, &rng);
    float *logits = malloc((size_t)m->hp.n_vocab * sizeof *logits);
    q35_cuda_state *st = NULL;
    q35_error err = {{0}};
    if (q35_cuda_state_create(&st, cm, 64, &err)) {
        printf("FAIL  %s\n", err.msg);
        return 1;
    }
    /* NVTX reads NVTX_INJECTION64_PATH and loads the library at its first call,
     * which a load does not make: make one */
    nvtxRangePushA("q35 nvtx probe");
    nvtxRangePop();
    void *lib = dlopen(Q35_NVTX_RECORD_PATH, RTLD_NOW | RTLD_NOLOAD);
    if (lib) {
        /* POSIX: a dlsym result is copied into a function pointer, not cast */
        void *f[3] = {dlsym(lib, "q35_nvtx_record_count"), dlsym(lib, "q35_nvtx_record_at"),
                      dlsym(lib, "q35_nvtx_record_clear")};
        memcpy(&rec_count, &f[0], sizeof f[0]);
        memcpy(&rec_at, &f[1], sizeof f[1]);
        memcpy(&rec_clear, &f[2], sizeof f[2]);
    }
    if (!q35_case(&s, lib && rec_count && rec_at && rec_clear, "NVTX loaded the recording library %s",
                  Q35_NVTX_RECORD_PATH))
        return q35_suite_end(&s);

    rec_clear();
    q35_op_times times;
    memset(&times, 0, sizeof times);
    if (q35_cuda_prefill(cm, st, tokens, 10, 0, logits, &times, &err)) {
        printf("FAIL  prefill: %s\n", err.msg);
        return 1;
    }
    check_tree(&s, "prefill", m, 0, 10, 4, 9, true, true);
    check_times(&s, &times, true);
    {   /* its FLOP: the shapes' (parity/model/flop_count.h), the last position's logits asked */
        const int64_t last = 9;
        double proj = 0.0, attn = 0.0;
        const bool pruned = q35_paths_prune(q35_cuda_model_paths(cm));
        q35_expected_flop(&m->hp, 10, 4, &last, 1, pruned, &proj, &attn);
        q35_case(&s, times.flop[Q35_OP_PROJ] == proj && times.flop[Q35_OP_ATTN] == attn && proj > 0.0 && attn > 0.0,
                 "FLOP counted (%s): projections %.0f (want %.0f), attention %.0f (want %.0f)",
                 pruned ? "pruned" : "not pruned", times.flop[Q35_OP_PROJ], proj, times.flop[Q35_OP_ATTN], attn);
    }

    rec_clear();
    if (q35_cuda_forward_token(cm, st, tokens[10], 10, logits, NULL, &err)) {
        printf("FAIL  forward_token: %s\n", err.msg);
        return 1;
    }
    check_tree(&s, "forward_token", m, 10, 1, 1, 10, false, false);

    rec_clear();
    const int64_t at[] = {12};
    if (q35_cuda_prefill_logits_at(cm, st, tokens + 11, 5, 11, at, 1, logits, NULL, &err)) {
        printf("FAIL  prefill_logits_at: %s\n", err.msg);
        return 1;
    }
    check_tree(&s, "prefill", m, 11, 5, 4, 12, true, true); /* the tail in the first chunk only */

    q35_cuda_state_free(st);
    q35_cuda_model_free(cm);
    q35_model_free(m);
    free(tokens);
    free(logits);
    return q35_suite_end(&s);
}
