/* The trained model's KL-divergence cases (kld_case.h). */
#include "kld_case.h"

#include "parity/lib/harness.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int kld_case_open(kld_case *k, int64_t ctx, int64_t windows, int vocab)
{
    memset(k, 0, sizeof *k);
    char path[1024];
    size_t size = 0;
    k->tokens = q35_read_file(q35_repo_path(KLD_TRAINED "/heldout.i32", path, sizeof path), &size);
    if (!k->tokens || (int64_t)(size / 4) < ctx * windows) {
        printf("FAIL  %s: %zu bytes, %" PRId64 " tokens wanted\n", path, size, ctx * windows);
        free(k->tokens);
        k->tokens = NULL;
        return -1;
    }
    k->ctx = ctx;
    k->windows = windows;
    k->scored = q35_eval_scored(ctx);
    k->vocab = vocab;
    k->at = malloc((size_t)k->scored * sizeof *k->at);
    for (int64_t i = 0; i < k->scored; i++)
        k->at[i] = ctx / 2 + i;
    return 0;
}

void kld_case_free(kld_case *k)
{
    free(k->tokens);
    free(k->at);
    memset(k, 0, sizeof *k);
}

static float *ref_logits(const kld_case *k, const q35_model *m, q35_act_quant act, q35_ref_fp8 fp8);

float *kld_ref_logits(const kld_case *k, const q35_model *m)
{
    return ref_logits(k, m, Q35_ACT_EXACT, (q35_ref_fp8){0});
}

float *kld_ref_logits_fp8(const kld_case *k, const q35_model *m, q35_ref_fp8 fp8)
{
    return ref_logits(k, m, Q35_ACT_EXACT, fp8);
}

float *kld_ref_logits_act(const kld_case *k, const q35_model *m, q35_act_quant act)
{
    return ref_logits(k, m, act, (q35_ref_fp8){0});
}

static float *ref_logits(const kld_case *k, const q35_model *m, q35_act_quant act, q35_ref_fp8 fp8)
{
    const size_t rows = (size_t)(k->windows * k->scored), vocab = (size_t)k->vocab;
    float *out = malloc(rows * vocab * sizeof *out);
    double *d = malloc((size_t)k->scored * vocab * sizeof *d);
    q35_error err = {{0}};
    int rc = !out || !d;
    for (int64_t w = 0; w < k->windows && rc == 0; w++) {
        q35_ref_state st;
        q35_poison_f64(d, k->scored * k->vocab);
        rc = q35_ref_state_init(&st, m, k->ctx, &err);
        st.fp8 = fp8;
        st.act = act;
        rc = rc || q35_ref_prefill(m, &st, k->tokens + w * k->ctx, k->ctx, 0, 512, k->at, k->scored, d, NULL, &err);
        q35_ref_state_free(&st);
        for (size_t i = 0; rc == 0 && i < (size_t)k->scored * vocab; i++)
            out[(size_t)w * (size_t)k->scored * vocab + i] = (float)d[i];
    }
    free(d);
    if (rc) {
        printf("FAIL  the float64 reference's logits: %s\n", err.msg);
        free(out);
        return NULL;
    }
    return out;
}

q35_eval_report kld_report(const kld_case *k, const float *logits, const float *ref)
{
    q35_eval_acc a;
    q35_error err = {{0}};
    double *lp = malloc((size_t)k->vocab * sizeof *lp), *rlp = malloc((size_t)k->vocab * sizeof *rlp);
    q35_eval_acc_init(&a, k->vocab, true, &err);
    for (int64_t w = 0; w < k->windows; w++)
        for (int64_t i = 0; i < k->scored; i++) {
            const size_t row = (size_t)(w * k->scored + i) * (size_t)k->vocab;
            q35_eval_log_softmax(logits + row, k->vocab, lp, NULL);
            q35_eval_log_softmax(ref + row, k->vocab, rlp, NULL);
            q35_eval_add(&a, lp, rlp, k->tokens[w * k->ctx + k->at[i] + 1], &err);
        }
    const q35_eval_report r = q35_eval_report_of(&a);
    q35_eval_acc_free(&a);
    free(lp);
    free(rlp);
    return r;
}
