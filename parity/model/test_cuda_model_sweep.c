/* The CUDA model's prefill swept against its per-token path: chunk rows {1, 7,
 * 64, 512, 2048, 4096} x prompt lengths {1, 63, 64, 65, 600, 4097} x attention {f32,
 * flash} x GEMM {f32, f16}, and the deterministic mode at each chunk rows, on
 * the tiny shape and on 0.8B- and 9B-shaped models of 4 layers (3 DeltaNet, 1
 * attention; vocabulary 1024). Each model's per-token logits (every position)
 * and states (after each length) are computed ONCE and every prefill is
 * compared with them: logits at up to 8 positions and the whole state, within
 * SPEC §4's tolerance on the default paths, bitwise in the deterministic mode.
 * Chunk rows at or past the length all run one chunk of the whole prompt: only
 * the first is kept (said). Also: the f32 attention under a 16 KiB scores
 * budget (passes of a few query rows) bitwise equal to the default budget, and
 * a prefill split in two calls at n/3 followed by a decode step.
 * Under Q35_QUICK: the tiny model, lengths {1, 65}, chunk rows {7, 64}.
 * Q35_SWEEP_MODELS (labels, comma-separated, e.g. "9b-4") runs only those
 * models; a model left out still draws its seed and tokens from the suite's
 * generator, so Q35_SEED replays the same model and prompt as a full run. */
#include "cuda_model_cases.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sweep_model {
    const char *label, *shape;
    int layers, vocab;
    const char *mix;
} sweep_model;

typedef struct path {
    q35_attn_path attention;
    q35_gemm_path gemm;
    q35_delta_path delta;
    bool deterministic;
} path;

/* every attention x GEMM with the delta rule the model picks for that GEMM
 * (chunked on f16, the scan on f32), each delta rule on the other too (the
 * fast path with the scan, the exact GEMM with the chunked form), and the
 * deterministic mode */
static const path k_paths[] = {
    {Q35_ATTN_F32, Q35_GEMM_F32, Q35_DELTA_SCAN, false},     {Q35_ATTN_F32, Q35_GEMM_F16, Q35_DELTA_CHUNKED, false},
    {Q35_ATTN_FLASH, Q35_GEMM_F32, Q35_DELTA_SCAN, false},   {Q35_ATTN_FLASH, Q35_GEMM_F16, Q35_DELTA_CHUNKED, false},
    {Q35_ATTN_FLASH, Q35_GEMM_F16, Q35_DELTA_SCAN, false},   {Q35_ATTN_F32, Q35_GEMM_F32, Q35_DELTA_CHUNKED, false},
    {Q35_ATTN_F32, Q35_GEMM_F32, Q35_DELTA_SCAN, true},
};
#define N_PATHS ((int)(sizeof k_paths / sizeof k_paths[0]))

/* The chunk rows worth running at len: each distinct min(rows, len), first kept. */
static int distinct_rows(const int64_t *rows, int n, int64_t len, int64_t *keep)
{
    int k = 0;
    char dropped[128] = "";
    for (int i = 0; i < n; i++) {
        const int64_t eff = rows[i] < len ? rows[i] : len;
        bool seen = false;
        for (int j = 0; j < k; j++)
            seen = seen || (keep[j] < len ? keep[j] : len) == eff;
        if (!seen) {
            keep[k++] = rows[i];
            continue;
        }
        const size_t used = strlen(dropped);
        snprintf(dropped + used, sizeof dropped - used, "%s%" PRId64, used ? ", " : "", rows[i]);
    }
    if (dropped[0])
        printf("skip  length %" PRId64 ": chunk rows %s run one chunk of the whole prompt, as %" PRId64 " does\n", len,
               dropped, keep[k - 1]);
    return k;
}

/* The f32 attention's result does not depend on its pass size: a 16 KiB budget
 * (passes of a few rows) against the default, bitwise. */
static void check_budget(q35_suite *s, const char *label, q35_cuda_model *cm, q35_cuda_state *st,
                         const int32_t *tokens, int64_t n, const cm_token_ref *ref)
{
    const int vocab = ref->vocab;
    float *a = malloc((size_t)vocab * sizeof *a), *b = malloc((size_t)vocab * sizeof *b);
    q35_cuda_state_host ha, hb;
    cm_set(cm, Q35_ATTN_F32, Q35_GEMM_F32, 64, false, 0);
    cm_prefill_keep(cm, st, tokens, n, a, &ha);
    cm_set(cm, Q35_ATTN_F32, Q35_GEMM_F32, 64, false, 16384);
    cm_prefill_keep(cm, st, tokens, n, b, &hb);
    char what[96];
    snprintf(what, sizeof what, "%-7s len %5" PRId64 " rows   64 f32/f32, scores budget 16 KiB vs 1 GiB", label, n);
    cm_case_same(s, what, a, &ha, b, &hb, vocab);
    snprintf(what, sizeof what, "%-7s len %5" PRId64 " rows   64 f32/f32, 16 KiB budget vs per-token", label, n);
    cm_check_prefill(s, what, cm, st, tokens, n, ref);
    q35_cuda_state_host_free(&ha);
    q35_cuda_state_host_free(&hb);
    free(a);
    free(b);
}

/* The prompt a model's sweep draws: the longest length or the split run's, and a decode step. */
static int64_t prompt_tokens(const int64_t *lengths, int n_len, int64_t split_len)
{
    const int64_t longest = lengths[n_len - 1];
    return (longest > split_len ? longest : split_len) + 1;
}

static void sweep(q35_suite *s, const sweep_model *sm, const int64_t *lengths, int n_len, const int64_t *rows,
                  int n_rows, int64_t split_len, q35_rng *rng)
{
    q35_model *m = cm_model(sm->shape, sm->layers, sm->vocab, sm->mix, q35_rng_next(rng));
    const int64_t n_tok = prompt_tokens(lengths, n_len, split_len);
    q35_cuda_model *cm = cm_load(m, n_tok);
    int32_t *tokens = cm_tokens(n_tok, m->hp.n_vocab, rng);
    int64_t snaps[8];
    int n_snap = 0;
    for (int i = 0; i < n_len; i++)
        snaps[n_snap++] = lengths[i];
    snaps[n_snap++] = split_len + 1;
    for (int i = 1; i < n_snap; i++) /* ascending, as the run meets them */
        for (int j = i; j > 0 && snaps[j] < snaps[j - 1]; j--) {
            const int64_t t = snaps[j];
            snaps[j] = snaps[j - 1];
            snaps[j - 1] = t;
        }
    cm_token_ref ref;
    cm_token_ref_run(&ref, cm, tokens, n_tok, snaps, n_snap);
    q35_cuda_state *st = NULL;
    q35_error err = {{0}};
    if (q35_cuda_state_create(&st, cm, n_tok, &err)) {
        printf("FAIL  state: %s\n", err.msg);
        exit(1);
    }
    for (int li = 0; li < n_len; li++) {
        int64_t keep[8];
        const int n_keep = distinct_rows(rows, n_rows, lengths[li], keep);
        for (int ri = 0; ri < n_keep; ri++)
            for (int pi = 0; pi < N_PATHS; pi++) {
                const path *p = &k_paths[pi];
                cm_set_delta(cm, p->attention, p->gemm, p->delta, keep[ri], p->deterministic, 0);
                char what[96], name[32];
                snprintf(what, sizeof what, "%-7s len %5" PRId64 " rows %4" PRId64 " %-13s", sm->label, lengths[li],
                         keep[ri], cm_paths_name(q35_cuda_model_paths(cm), name, sizeof name));
                cm_check_prefill(s, what, cm, st, tokens, lengths[li], &ref);
            }
    }
    check_budget(s, sm->label, cm, st, tokens, split_len, &ref);
    for (int pi = 0; pi < N_PATHS; pi++) {
        const path *p = &k_paths[pi];
        cm_set_delta(cm, p->attention, p->gemm, p->delta, 64, p->deterministic, 0);
        char what[112], name[32];
        snprintf(what, sizeof what, "%-7s len %5" PRId64 " rows   64 %-13s split at %" PRId64 " + decode at %" PRId64,
                 sm->label, split_len, cm_paths_name(q35_cuda_model_paths(cm), name, sizeof name), split_len / 3,
                 split_len);
        cm_check_split_decode(s, what, cm, st, tokens, split_len, &ref);
    }
    q35_cuda_state_free(st);
    cm_token_ref_free(&ref);
    free(tokens);
    q35_cuda_model_free(cm);
    q35_model_free(m);
}

/* Whether Q35_SWEEP_MODELS (unset: every model) names label. */
static bool model_wanted(const char *label)
{
    return q35_env_lists("Q35_SWEEP_MODELS", label);
}

/* What sweep() draws from rng for a model it does not run: the model's seed
 * and its prompt, so the models after it see the same generator state. */
static void skip_model(const sweep_model *sm, const int64_t *lengths, int n_len, int64_t split_len, q35_rng *rng)
{
    const int64_t n_tok = prompt_tokens(lengths, n_len, split_len);
    (void)q35_rng_next(rng);
    for (int64_t i = 0; i < n_tok; i++)
        (void)q35_rng_next(rng);
    printf("skip  %s: not in Q35_SWEEP_MODELS\n", sm->label);
}

int main(void)
{
    q35_suite s;
    q35_rng rng;
    const int skip = q35_gpu_suite(&s, "CUDA model sweep: prefill vs per-token over chunk rows, lengths, paths", &rng);
    if (skip)
        return skip;
    static const sweep_model models[] = {
        {"tiny", "tiny", 0, 0, "q4_k_m"},
        {"0.8b-4", "0.8b", 4, 1024, "q4_k_m"},
        {"9b-4", "9b", 4, 1024, "q4_k"},
    };
    static const int64_t lengths[] = {1, 63, 64, 65, 600, 4097}, rows[] = {1, 7, 64, 512, 2048, 4096};
    static const int64_t quick_lengths[] = {1, 65}, quick_rows[] = {7, 64};
    if (q35_quick()) {
        sweep(&s, &models[0], quick_lengths, 2, quick_rows, 2, 65, &rng);
        return q35_suite_end(&s);
    }
    for (size_t i = 0; i < sizeof models / sizeof models[0]; i++)
        if (model_wanted(models[i].label))
            sweep(&s, &models[i], lengths, 6, rows, 6, 600, &rng);
        else
            skip_model(&models[i], lengths, 6, 600, &rng);
    return q35_suite_end(&s);
}
