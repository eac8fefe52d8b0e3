/* The golden case (data/golden/tiny-r2) on the GPU: the F16 model's logits at
 * all 100 positions against Hugging Face transformers' own (logits.f32), rel L2
 * per position: <= 1e-5 on the f32 path, the deterministic mode and the
 * per-token forward; <= 2e-3 where f16 enters (f16 GEMM, flash). Then each
 * quantized variant on the f32 path against the float64 logits of its weights
 * (quant/logits-*.f32), <= 1e-5 (SPEC §4). The opt-in FP8 GEMM (sm_89+) on
 * the F16 model and on each quantized one, within its accuracy tier
 * (cuda_model_cases.h). Under Q35_QUICK: the f32 and the deterministic paths,
 * the per-token forward, Q4_K_M. */
#include "cuda_model_cases.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GOLDEN "data/golden/tiny-r2"

typedef struct golden {
    int32_t *tokens;
    int64_t n;
} golden;

/* Per-position rel L2 of ours [n][vocab] against theirs (harness.h). */
static void check_positions(q35_suite *s, const char *what, const float *ours, const float *theirs, int64_t n,
                            int vocab, double limit)
{
    double *wide = q35_host_f64(ours, n * vocab);
    q35_case_positions(s, what, wide, theirs, n, vocab, limit);
    free(wide);
}

/* The logits at every position of the prompt, on cm's paths or per token. */
static void run(q35_cuda_model *cm, const golden *g, bool per_token, float *logits)
{
    const int vocab = q35_cuda_model_hparams(cm)->n_vocab;
    q35_cuda_state *st = NULL;
    q35_error err = {{0}};
    int64_t *at = malloc((size_t)g->n * sizeof *at);
    for (int64_t i = 0; i < g->n; i++)
        at[i] = i;
    q35_poison_f32(logits, g->n * vocab);
    int rc = q35_cuda_state_create(&st, cm, g->n, &err);
    if (rc == 0 && per_token)
        for (int64_t t = 0; t < g->n && rc == 0; t++)
            rc = q35_cuda_forward_token(cm, st, g->tokens[t], t, logits + t * vocab, NULL, &err);
    else if (rc == 0)
        rc = q35_cuda_prefill_logits_at(cm, st, g->tokens, g->n, 0, at, g->n, logits, NULL, &err);
    if (rc) {
        printf("FAIL  golden run: %s\n", err.msg);
        exit(1);
    }
    q35_cuda_state_free(st);
    free(at);
}

static q35_model *open_model(const char *rel)
{
    char path[1024];
    q35_model *m = NULL;
    q35_error err = {{0}};
    if (q35_model_open(&m, q35_repo_path(rel, path, sizeof path), &err)) {
        printf("FAIL  cannot load %s: %s\n", rel, err.msg);
        exit(1);
    }
    return m;
}

int main(void)
{
    q35_suite s;
    q35_rng rng;
    const int skip = q35_gpu_suite(&s, "golden tiny-r2 on the GPU: transformers' logits, quantized float64 logits", &rng);
    if (skip)
        return skip;
    char path[1024];
    size_t tok_bytes = 0, lg_bytes = 0;
    golden g = {.tokens = q35_read_file(q35_repo_path(GOLDEN "/tokens.i32", path, sizeof path), &tok_bytes)};
    float *theirs = q35_read_file(q35_repo_path(GOLDEN "/logits.f32", path, sizeof path), &lg_bytes);
    if (!q35_case(&s, g.tokens && theirs, "golden files present under %s", GOLDEN))
        return q35_suite_end(&s);
    g.n = (int64_t)(tok_bytes / 4);

    q35_model *m = open_model(GOLDEN "/model.gguf");
    const int vocab = m->hp.n_vocab;
    float *ours = malloc((size_t)g.n * (size_t)vocab * sizeof *ours);
    q35_cuda_model *cm = cm_load(m, g.n);
    static const struct { q35_attn_path a; q35_gemm_path gm; bool det; int64_t rows; } paths[] = {
        {Q35_ATTN_F32, Q35_GEMM_F32, false, 512}, {Q35_ATTN_F32, Q35_GEMM_F32, false, 37},
        {Q35_ATTN_F32, Q35_GEMM_F16, false, 512}, {Q35_ATTN_FLASH, Q35_GEMM_F32, false, 512},
        {Q35_ATTN_FLASH, Q35_GEMM_F16, false, 37}, {Q35_ATTN_F32, Q35_GEMM_F32, true, 37},
    };
    q35_case(&s, (size_t)g.n * (size_t)vocab * 4 == lg_bytes, "F16 model: %" PRId64 " tokens, vocab %d", g.n, vocab);
    const bool quick = q35_quick(); /* under a sanitizer: the f32 path, the deterministic one, Q4_K_M */
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        if (quick && i != 0 && !paths[i].det)
            continue;
        cm_set(cm, paths[i].a, paths[i].gm, paths[i].rows, paths[i].det, 0);
        run(cm, &g, false, ours);
        char what[96], name[32];
        snprintf(what, sizeof what, "F16 prefill %s rows %" PRId64 " vs transformers",
                 cm_paths_name(q35_cuda_model_paths(cm), name, sizeof name), paths[i].rows);
        check_positions(&s, what, ours, theirs, g.n, vocab,
                        cm_f16_path(q35_cuda_model_paths(cm)) ? 2e-3 : 1e-5);
    }
    run(cm, &g, true, ours);
    check_positions(&s, "F16 per-token forward vs transformers", ours, theirs, g.n, vocab, 1e-5);
    /* after the per-token forward, which reads the cache element the last paths chose */
    if (!quick && cm_fp8_here("F16 prefill flash/fp8 vs transformers")) {
        cm_set(cm, Q35_ATTN_FLASH, Q35_GEMM_FP8, 37, false, 0);
        run(cm, &g, false, ours);
        cm_fp8_case(&s, "F16 prefill flash/fp8 rows 37 vs transformers", ours, NULL, theirs, g.n, vocab,
                    q35_cuda_model_hparams(cm)->n_layer);
    }
    q35_cuda_model_free(cm);
    q35_model_free(m);

    static const char *const types[] = {"BF16", "Q8_0", "Q6_K", "Q4_K_M", "Q4_0"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        if (quick && strcmp(types[i], "Q4_K_M") != 0)
            continue;
        char model[256], lg[256], what[96];
        snprintf(model, sizeof model, GOLDEN "/quant/model-%s.gguf", types[i]);
        snprintf(lg, sizeof lg, GOLDEN "/quant/logits-%s.f32", types[i]);
        size_t bytes = 0;
        float *ref = q35_read_file(q35_repo_path(lg, path, sizeof path), &bytes);
        q35_model *qm = open_model(model);
        q35_cuda_model *qcm = cm_load(qm, g.n);
        cm_set(qcm, Q35_ATTN_F32, Q35_GEMM_F32, 37, false, 0);
        run(qcm, &g, false, ours);
        snprintf(what, sizeof what, "%s prefill f32/f32 vs float64 logits", types[i]);
        if (q35_case(&s, ref && bytes == (size_t)g.n * (size_t)vocab * 4, "%s: logits loaded", types[i])) {
            check_positions(&s, what, ours, ref, g.n, vocab, 1e-5);
            /* the FP8 path on the quantized weights it is made from */
            snprintf(what, sizeof what, "%s prefill flash/fp8 vs float64 logits", types[i]);
            if (!quick && cm_fp8_here(what)) {
                cm_set(qcm, Q35_ATTN_FLASH, Q35_GEMM_FP8, 37, false, 0);
                run(qcm, &g, false, ours);
                cm_fp8_case(&s, what, ours, NULL, ref, g.n, vocab, q35_cuda_model_hparams(qcm)->n_layer);
            }
        }
        q35_cuda_model_free(qcm);
        q35_model_free(qm);
        free(ref);
    }
    free(ours);
    free(theirs);
    free(g.tokens);
    return q35_suite_end(&s);
}
