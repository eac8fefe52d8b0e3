/* The golden case (data/golden/tiny-r2, from Hugging Face transformers): the
 * float64 CPU reference against transformers' float32 logits at every position
 * (rel L2 <= 1e-5, SPEC §4), against its token-by-token decode logits too, and
 * on each quantized variant against the float64 logits of those weights
 * (rel L2 <= 1e-6). */
#include "parity/lib/harness.h"

#include "model/ref_model.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GOLDEN "data/golden/tiny-r2"

/* The float32 payload of a .npy file (little-endian '<f4', C order). */
static const float *npy_f32(const unsigned char *p, size_t size, size_t *count)
{
    if (size < 10 || memcmp(p, "\x93NUMPY", 6) != 0)
        return NULL;
    const size_t hl = p[8] | (size_t)p[9] << 8;
    if (10 + hl > size || !strstr((const char *)p + 10, "<f4"))
        return NULL;
    *count = (size - 10 - hl) / 4;
    return (const float *)(p + 10 + hl);
}

/* Runs the reference over the prompt, logits at every position; returns them or NULL. */
static double *reference_logits(const char *model_rel, const int32_t *tokens, int64_t n, int64_t chunk_rows,
                                int *vocab)
{
    char path[1024];
    q35_error err = {{0}};
    q35_model *m;
    if (q35_model_open(&m, q35_repo_path(model_rel, path, sizeof path), &err)) {
        printf("cannot load %s: %s\n", model_rel, err.msg);
        return NULL;
    }
    *vocab = m->hp.n_vocab;
    int64_t *at = malloc((size_t)n * sizeof *at);
    double *logits = malloc((size_t)n * (size_t)m->hp.n_vocab * sizeof *logits);
    q35_ref_state st;
    int rc = !at || !logits || q35_ref_state_init(&st, m, n, &err);
    if (!rc) {
        for (int64_t i = 0; i < n; i++)
            at[i] = i;
        q35_poison_f64(logits, n * m->hp.n_vocab);
        rc = q35_ref_prefill(m, &st, tokens, n, 0, chunk_rows, at, n, logits, NULL, &err);
        q35_ref_state_free(&st);
    }
    if (rc) {
        printf("reference prefill of %s failed: %s\n", model_rel, err.msg);
        free(logits);
        logits = NULL;
    }
    free(at);
    q35_model_free(m);
    return logits;
}

int main(void)
{
    q35_suite s;
    q35_suite_begin(&s, "golden tiny-r2: float64 CPU reference vs transformers", 0);
    char path[1024];
    size_t tok_bytes = 0, lg_bytes = 0, npy_bytes = 0;
    int32_t *tokens = q35_read_file(q35_repo_path(GOLDEN "/tokens.i32", path, sizeof path), &tok_bytes);
    float *golden = q35_read_file(q35_repo_path(GOLDEN "/logits.f32", path, sizeof path), &lg_bytes);
    unsigned char *npy = q35_read_file(q35_repo_path(GOLDEN "/decode_logits.npy", path, sizeof path), &npy_bytes);
    if (!q35_case(&s, tokens && golden && npy, "golden files present under %s", GOLDEN))
        return q35_suite_end(&s);
    const int64_t n = (int64_t)(tok_bytes / 4);
    int vocab = 0;
    double *ours = reference_logits(GOLDEN "/model.gguf", tokens, n, 512, &vocab);
    if (q35_case(&s, ours != NULL && (size_t)n * (size_t)vocab * 4 == lg_bytes, "F16 model: %" PRId64 " tokens, vocab %d",
                 n, vocab)) {
        q35_case_positions(&s, "F16 vs transformers prefill", ours, golden, n, vocab, 1e-5);
        size_t count = 0;
        const float *decode = npy_f32(npy, npy_bytes, &count);
        if (q35_case(&s, decode && count == (size_t)n * (size_t)vocab, "decode_logits.npy holds [%" PRId64 "][%d] f32",
                     n, vocab))
            q35_case_positions(&s, "F16 vs transformers decode", ours, decode, n, vocab, 1e-5);
    }
    free(ours);

    static const char *const types[] = {"BF16", "Q8_0", "Q6_K", "Q4_K_M", "Q4_0"};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        char model[256], lg[256], what[64];
        snprintf(model, sizeof model, GOLDEN "/quant/model-%s.gguf", types[i]);
        snprintf(lg, sizeof lg, GOLDEN "/quant/logits-%s.f32", types[i]);
        size_t bytes = 0;
        float *ref = q35_read_file(q35_repo_path(lg, path, sizeof path), &bytes);
        double *q = reference_logits(model, tokens, n, 37, &vocab); /* chunks of 37: boundaries mid-prompt */
        snprintf(what, sizeof what, "%s vs float64 logits", types[i]);
        if (q35_case(&s, ref && q && bytes == (size_t)n * (size_t)vocab * 4, "%s: model and logits loaded", types[i]))
            q35_case_positions(&s, what, q, ref, n, vocab, 1e-6);
        free(ref);
        free(q);
    }
    free(tokens);
    free(golden);
    free(npy);
    return q35_suite_end(&s);
}
