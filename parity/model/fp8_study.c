/* Where the FP8 GEMM path's error comes from (issue 50), on the trained model
 * and the float64 CPU reference: the reference with some projections rounded
 * as an FP8 GEMM rounds them (q35_ref_linear_fp8, kernels/fp8.h), each
 * configuration's KL divergence against the exact reference over the held-out
 * windows (kld_case.h), as a markdown table on stdout:
 *
 *   fp8_study [CTX WINDOWS]      (default 256 2)
 *   fp8_study --depth SHAPE N [L]  random models of SHAPE (model/shapes.c) at
 *                                4, 8, .. L (64) layers, N tokens: rel L2,
 *                                KL and top-1 of every projection in fp8 against
 *                                the exact reference (model/accuracy.h): how
 *                                the error grows with depth
 *
 * Configurations: every projection at the GPU path's recipe (a scale per row of
 * x and of W); every projection at DeepSeek-V3's (1 x 128 and 128 x 128
 * blocks); each projection kind alone; every layer alone; every projection
 * but the ones the table shows costing most. Not a test: its figures go to
 * bench/results/; test_trained asserts what they found. */
#include "kld_case.h"
#include "parity/lib/harness.h"

#include "core/parallel.h"
#include "model/accuracy.h"
#include "model/generate.h"
#include "model/ref_model.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const q35_model *g_m;
static kld_case g_k;
static float *g_ref;

static void row(const char *what, q35_ref_fp8 f)
{
    const double t0 = q35_now();
    float *out = kld_ref_logits_fp8(&g_k, g_m, f);
    if (out) {
        const q35_eval_report r = kld_report(&g_k, out, g_ref);
        printf("| %s | %.3e ± %.1e | %.3e | %.3e | %.2f | %+.4f |\n", what, r.kld_mean, r.kld_err, r.kld_p99, r.kld_max,
               100 * r.same_top, r.dppl);
    } else {
        printf("| %s | failed |\n", what);
    }
    fprintf(stderr, "%s: %.1f s\n", what, q35_now() - t0);
    fflush(stdout);
    free(out);
}

/* Logits of every position of a random prompt, [n][vocab], with f applied. */
static double *random_logits(const q35_model *m, const int32_t *tok, int64_t n, q35_ref_fp8 f)
{
    int64_t *at = malloc((size_t)n * sizeof *at);
    double *y = malloc((size_t)n * (size_t)m->hp.n_vocab * sizeof *y);
    for (int64_t i = 0; i < n; i++)
        at[i] = i;
    q35_ref_state st;
    q35_error err = {{0}};
    int rc = q35_ref_state_init(&st, m, n, &err);
    st.fp8 = f;
    rc = rc || q35_ref_prefill(m, &st, tok, n, 0, 512, at, n, y, NULL, &err);
    q35_ref_state_free(&st);
    free(at);
    if (rc) {
        fprintf(stderr, "fp8_study: %s\n", err.msg);
        free(y);
        return NULL;
    }
    return y;
}

static int depth(const char *shape, int64_t n, int max_layers)
{
    const q35_shape *sh = q35_shape_find(shape);
    if (!sh || n < 1) {
        fprintf(stderr, "fp8_study --depth: unknown shape '%s' or no tokens\n", shape);
        return 2;
    }
    printf("FP8 rounding (every projection, a scale per row) on the float64 reference, random %s-shape models "
           "(q35 model make, f16 weights, vocab 4096, seed 1), %" PRId64 " random tokens, against the exact reference."
           "\n\n| layers | rel L2 worst | rel L2 mean | KL worst | KL mean | top-1 |\n|---|---|---|---|---|---|\n",
           shape, n);
    for (int layers = 4; layers <= max_layers; layers *= 2) {
        q35_gen_options o = q35_gen_defaults(sh);
        o.shape.n_layer = layers;
        o.shape.n_vocab = 4096;
        snprintf(o.mix, sizeof o.mix, "f16");
        q35_model *m = NULL;
        q35_error err = {{0}};
        if (q35_generate_model(&o, &m, &err)) {
            fprintf(stderr, "fp8_study: %s\n", err.msg);
            return 1;
        }
        int32_t *tok = malloc((size_t)n * sizeof *tok);
        q35_rng r;
        q35_rng_seed(&r, 7);
        for (int64_t i = 0; i < n; i++)
            tok[i] = (int32_t)(q35_rng_next(&r) % 4096);
        double *ref = random_logits(m, tok, n, (q35_ref_fp8){0});
        double *f8 = random_logits(m, tok, n, (q35_ref_fp8){.kinds = (1u << 12) - 1});
        if (ref && f8) {
            float *f = malloc((size_t)n * 4096 * sizeof *f);
            for (int64_t i = 0; i < n * 4096; i++)
                f[i] = (float)f8[i];
            const q35_logit_tier t = q35_logit_tier_of(f, ref, NULL, n, 4096);
            printf("| %d | %.3e | %.3e | %.3e | %.3e | %" PRId64 "/%" PRId64 " |\n", layers, t.rel_l2_worst,
                   t.rel_l2_mean, t.kl_worst, t.kl_mean, t.top1_same, t.n);
            fflush(stdout);
            free(f);
        }
        free(ref);
        free(f8);
        free(tok);
        q35_model_free(m);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "--depth") == 0)
        return depth(argc > 2 ? argv[2] : "tiny", argc > 3 ? atoll(argv[3]) : 32, argc > 4 ? atoi(argv[4]) : 64);
    const int64_t ctx = argc > 1 ? atoll(argv[1]) : 256, windows = argc > 2 ? atoll(argv[2]) : 2;
    char path[1024];
    q35_error err = {{0}};
    q35_model *m = NULL;
    if (q35_model_open(&m, q35_repo_path(KLD_TRAINED "/model.gguf", path, sizeof path), &err)) {
        fprintf(stderr, "fp8_study: %s\n", err.msg);
        return 1;
    }
    g_m = m;
    if (ctx < 4 || windows < 1 || kld_case_open(&g_k, ctx, windows, m->hp.n_vocab) || !(g_ref = kld_ref_logits(&g_k, m)))
        return 1;
    printf("FP8 rounding on the float64 reference, trained model (%s), %" PRId64 " held-out windows of %" PRId64
           " tokens, %" PRId64 " scored positions; KLD against the exact reference.\n\n",
           KLD_TRAINED, windows, ctx, windows * g_k.scored);
    printf("| projections in fp8 | mean KLD ± s.e. | p99 | max | same top %% | Δppl |\n|---|---|---|---|---|---|\n");
    const uint32_t all = (1u << 12) - 1;
    row("none", (q35_ref_fp8){0});
    row("all, a scale per row (the GPU path's recipe)", (q35_ref_fp8){.kinds = all});
    row("all, 1 x 128 / 128 x 128 blocks (DeepSeek-V3)", (q35_ref_fp8){.kinds = all, .block = 128});
    row("all, 1 x 32 / 32 x 32 blocks", (q35_ref_fp8){.kinds = all, .block = 32});
    for (int k = 0; q35_ref_fp8_kind(k); k++) {
        char what[96];
        snprintf(what, sizeof what, "%s alone, per row", q35_ref_fp8_kind(k));
        row(what, (q35_ref_fp8){.kinds = 1u << k});
    }
    for (int l = 0; l < m->hp.n_layer; l++) {
        char what[96];
        snprintf(what, sizeof what, "layer %d alone (%s), per row", l,
                 m->layers[l].kind == Q35_LAYER_DELTANET ? "DeltaNet" : "attention");
        row(what, (q35_ref_fp8){.kinds = all, .layers = 1ull << l});
    }
    const uint32_t no_gates = all & ~(1u << 2) & ~(1u << 3); /* ssm_alpha, ssm_beta */
    row("all but ssm_alpha, ssm_beta, per row", (q35_ref_fp8){.kinds = no_gates});
    row("all but ssm_alpha, ssm_beta, ffn_down, per row", (q35_ref_fp8){.kinds = no_gates & ~(1u << 11)});
    /* the three costliest kinds on the trained model (ssm_out, attn_qkv, ffn_down) kept exact */
    row("all but ssm_out, attn_qkv, ffn_down, per row",
        (q35_ref_fp8){.kinds = all & ~(1u << 4) & ~(1u << 0) & ~(1u << 11)});
    row("ffn_gate and ffn_up only, per row", (q35_ref_fp8){.kinds = (1u << 9) | (1u << 10)});
    free(g_ref);
    kld_case_free(&g_k);
    q35_model_free(m);
    return 0;
}
