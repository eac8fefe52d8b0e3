/* The synthetic model generator: every shape loads with the hyperparameters it
 * was made with; weights have the scales promised (generate.h); the image is a
 * function of the seed alone (not of the thread count, not of file vs memory);
 * the q4_k_m mix assigns types as llama.cpp's Q4_K_M does. */
#define _POSIX_C_SOURCE 200809L
#include "parity/lib/harness.h"

#include "core/parallel.h"
#include "core/gguf.h"
#include "core/quant.h"
#include "model/generate.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static q35_gen_options opts(const char *shape, const char *mix, int layers, int vocab, uint64_t seed)
{
    q35_gen_options o = q35_gen_defaults(q35_shape_find(shape));
    snprintf(o.mix, sizeof o.mix, "%s", mix);
    if (layers)
        o.shape.n_layer = layers;
    if (vocab)
        o.shape.n_vocab = vocab;
    o.seed = seed;
    return o;
}

/* mean and standard deviation of a weight's dequantized values */
static void stats(const q35_weight *w, double *mean, double *sd, double *lo, double *hi)
{
    const int64_t n = w->rows * w->cols;
    float *x = malloc((size_t)n * sizeof *x);
    q35_dequantize(w->type, w->data, x, n);
    double s = 0.0, ss = 0.0;
    *lo = INFINITY;
    *hi = -INFINITY;
    for (int64_t i = 0; i < n; i++) {
        s += x[i];
        ss += (double)x[i] * x[i];
        *lo = fmin(*lo, x[i]);
        *hi = fmax(*hi, x[i]);
    }
    *mean = s / (double)n;
    *sd = sqrt(fmax(0.0, ss / (double)n - *mean * *mean));
    free(x);
}

static void check_shapes(q35_suite *s, uint64_t seed)
{
    for (int i = 0; q35_shape_at(i); i++) {
        const q35_shape *sh = q35_shape_at(i);
        q35_gen_options o = opts(sh->name, "q4_0", 4, 512, seed); /* 4 layers: 3 DeltaNet + 1 attention */
        q35_error err = {{0}};
        q35_model *m;
        const int rc = q35_generate_model(&o, &m, &err);
        const q35_hparams *hp = rc == 0 ? &m->hp : NULL;
        q35_case(s, rc == 0 && hp->n_embd == sh->n_embd && hp->n_ff == sh->n_ff && hp->n_head == sh->n_head &&
                        hp->n_head_kv == sh->n_head_kv && hp->ssm_hk == sh->ssm_hk && hp->ssm_hv == sh->ssm_hv &&
                        hp->ssm_dk == sh->ssm_dk && hp->ssm_dv == sh->ssm_dv && hp->head_dim == sh->head_dim &&
                        hp->n_layer == 4 && hp->n_attn == 1 && hp->n_vocab == 512 && m->tied == sh->tied,
                 "shape %-5s loads: H %5d ffn %5d heads %2d/%d Hk %d Hv %2d %s %s", sh->name, sh->n_embd, sh->n_ff,
                 sh->n_head, sh->n_head_kv, sh->ssm_hk, sh->ssm_hv, sh->tied ? "tied" : "untied", err.msg);
        if (rc == 0)
            q35_model_free(m);
    }
}

static void check_scales(q35_suite *s, uint64_t seed)
{
    q35_gen_options o = opts("0.8b", "f32", 4, 2048, seed);
    q35_error err = {{0}};
    q35_model *m;
    if (!q35_case(s, q35_generate_model(&o, &m, &err) == 0, "0.8b-shape f32 model, 4 layers %s", err.msg))
        return;
    struct {
        const char *what;
        const q35_weight *w;
        double mean_lo, mean_hi, sd_lo, sd_hi, min_lo, max_hi;
    } checks[] = {
        {"ffn_up (linear)", &m->layers[0].ffn_up, -1e-3, 1e-3, 0.0195, 0.0205, -0.08, 0.08},
        {"attn_q (linear)", &m->layers[3].attn_q, -1e-3, 1e-3, 0.0195, 0.0205, -0.08, 0.08},
        {"token_embd", &m->token_embd, -0.01, 0.01, 0.98, 1.02, -3.5, 3.5},
        {"attn_norm", &m->layers[0].attn_norm, 0.98, 1.02, 0.08, 0.12, 0.6, 1.4},
        {"ssm_norm", &m->layers[1].ssm_norm, 0.97, 1.03, 0.07, 0.13, 0.6, 1.4},
        {"ssm_dt.bias", &m->layers[2].ssm_dt, 0.9, 1.1, 0.05, 0.15, 0.6, 1.4},
        {"ssm_a", &m->layers[0].ssm_a, -16.0, -0.01, 0.0, 16.0, -16.0, -0.01},
        {"ssm_conv1d", &m->layers[0].ssm_conv1d, -0.01, 0.01, 0.29, 0.31, -1.1, 1.1},
    };
    for (size_t i = 0; i < sizeof checks / sizeof checks[0]; i++) {
        double mean, sd, lo, hi;
        stats(checks[i].w, &mean, &sd, &lo, &hi);
        q35_case(s, mean >= checks[i].mean_lo && mean <= checks[i].mean_hi && sd >= checks[i].sd_lo &&
                        sd <= checks[i].sd_hi && lo >= checks[i].min_lo && hi <= checks[i].max_hi,
                 "%-16s mean %+.4f sd %.4f range [%+.3f, %+.3f]", checks[i].what, mean, sd, lo, hi);
    }
    q35_model_free(m);
}

static void check_determinism(q35_suite *s, uint64_t seed)
{
    q35_gen_options o = opts("tiny", "q4_k_m", 0, 0, seed);
    void *a = NULL, *b = NULL, *c = NULL;
    uint64_t na = 0, nb = 0, nc = 0;
    q35_error err = {{0}};
    const int threads = q35_threads();
    int rc = q35_generate_image(&o, &a, &na, &err);
    q35_set_threads(1);
    rc |= q35_generate_image(&o, &b, &nb, &err);
    q35_set_threads(threads > 1 ? threads : 3);
    o.seed = seed + 1;
    rc |= q35_generate_image(&o, &c, &nc, &err);
    q35_set_threads(threads);
    q35_case(s, rc == 0 && na == nb && memcmp(a, b, na) == 0, "same seed, 1 thread vs %d: images bitwise equal (%" PRIu64
             " bytes)", threads, na);
    q35_case(s, rc == 0 && na == nc && memcmp(a, c, na) != 0, "another seed: another image");

    char path[] = "/tmp/q35-gen-XXXXXX";
    const int fd = mkstemp(path);
    if (fd >= 0)
        close(fd);
    o.seed = seed;
    size_t nf = 0;
    void *f = NULL;
    if (fd >= 0 && q35_generate_file(&o, path, &err) == 0)
        f = q35_read_file(path, &nf);
    q35_case(s, f && nf == na && memcmp(f, a, na) == 0, "the file's bytes are the memory image's %s", err.msg);
    if (fd >= 0)
        unlink(path);
    free(a), free(b), free(c), free(f);
}

/* What llama.cpp's loader needs beside the tensors: a vocabulary model ("none":
 * it takes token ids), the file type of the mix, the quantization version. */
static void check_llama_keys(q35_suite *s)
{
    static const struct { const char *mix; uint32_t ftype; } k[] = {
        {"f32", 0},  {"q8_0", 7},  {"q4_k", 14}, {"q4_k_m", 15}, {"q4_1", 3},    {"q5_1", 9},
        {"q2_k", 10}, {"q3_k", 11}, {"iq4_nl", 25}, {"iq4_xs", 30}, {"iq2_xxs", 19}, {"iq2_xs", 20},
        {"iq3_xxs", 23}, {"iq1_s", 24}, {"iq3_s", 26}, {"iq2_s", 28}, {"iq1_m", 31},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
        q35_gen_options o = opts("tiny", k[i].mix, 1, 64, 1);
        q35_model *m = NULL;
        q35_error err = {{0}};
        uint32_t ftype = 0, qv = 0;
        q35_gguf_str vocab = {0};
        const bool ok = q35_generate_model(&o, &m, &err) == 0 &&
                        q35_gguf_get_u32(m->gguf, "general.file_type", &ftype, &err) == 0 &&
                        q35_gguf_get_u32(m->gguf, "general.quantization_version", &qv, &err) == 0 &&
                        q35_gguf_get_str(m->gguf, "tokenizer.ggml.model", &vocab, &err) == 0;
        q35_case(s, ok && ftype == k[i].ftype && qv == 2 && vocab.len == 4 && memcmp(vocab.data, "none", 4) == 0,
                 "%-7s: general.file_type %u (want %u), quantization_version %u, tokenizer.ggml.model \"%.*s\" %s",
                 k[i].mix, ftype, k[i].ftype, qv, (int)vocab.len, vocab.data ? vocab.data : "", err.msg);
        q35_model_free(m);
    }
}

/* q4_k_m is llama-quantize's Q4_K_M tensor for tensor: its types of the same
 * model (data/golden/llama-0c1e570/quantize/, written by llama-quantize from the
 * f16 file q35 makes; tools/llama-oracle.sh says how) against the generator's. */
static void check_llama_quantize_types(q35_suite *s)
{
    static const char *const shapes[] = {"0.8b", "9b"};
    for (int i = 0; i < 2; i++) {
        char rel[128], path[1024];
        snprintf(rel, sizeof rel, "data/golden/llama-0c1e570/quantize/q4_k_m-%s-8.tsv", shapes[i]);
        size_t n = 0;
        char *tsv = q35_read_file(q35_repo_path(rel, path, sizeof path), &n);
        q35_gen_options o = opts(shapes[i], "q4_k_m", 8, 4096, 3);
        q35_model *m = NULL;
        q35_error err = {{0}};
        if (!q35_case(s, tsv && q35_generate_model(&o, &m, &err) == 0, "%s: the generator's model and %s %s",
                      shapes[i], rel, err.msg)) {
            free(tsv);
            continue;
        }
        char *text = malloc(n + 1);
        memcpy(text, tsv, n);
        text[n] = '\0';
        int lines = 0, same = 0;
        char first[160] = "";
        for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
            char name[96], type[16];
            if (line[0] == '#' || sscanf(line, "%95s %15s", name, type) != 2)
                continue;
            lines++;
            const q35_gguf_tensor *t = q35_gguf_find_tensor(m->gguf, name);
            if (t && strcmp(q35_type_name(t->type), type) == 0)
                same++;
            else if (!first[0])
                snprintf(first, sizeof first, "%s: llama-quantize %s, ours %s", name, type,
                         t ? q35_type_name(t->type) : "(none)");
        }
        q35_case(s, lines > 100 && same == lines && (uint64_t)lines == m->gguf->n_tensors,
                 "%s, 8 layers, q4_k_m: %d of %d tensors of llama-quantize's type (ours has %" PRIu64 ") %s",
                 shapes[i], same, lines, m->gguf->n_tensors, first);
        free(text);
        free(tsv);
        q35_model_free(m);
    }
}

static void check_mix(q35_suite *s)
{
    /* tiny: 8 layers (3, 7 attention), ffn 384 (not a whole number of 256-blocks).
     * use_more_bits(i, 8) holds for layers 0, 3, 6, 7. */
    q35_gen_options o = opts("tiny", "q4_k_m", 0, 0, 5);
    q35_error err = {{0}};
    q35_model *m;
    if (!q35_case(s, q35_generate_model(&o, &m, &err) == 0, "tiny q4_k_m model %s", err.msg))
        return;
    bool down_ok = true;
    for (int il = 0; il < 8; il++) {
        const bool more = il == 0 || il == 3 || il == 6 || il == 7;
        down_ok = down_ok && m->layers[il].ffn_down.type == (more ? Q35_TYPE_Q8_0 : Q35_TYPE_Q5_0);
    }
    q35_case(s, down_ok, "ffn_down (rows of 384): q8_0 (Q6_K's fallback) in layers 0, 3, 6, 7, q5_0 (Q4_K's) elsewhere");
    q35_case(s, m->layers[3].attn_v.type == Q35_TYPE_Q6_K && m->layers[7].attn_v.type == Q35_TYPE_Q6_K &&
                    m->output.type == Q35_TYPE_Q6_K && m->token_embd.type == Q35_TYPE_Q4_K &&
                    m->layers[3].attn_q.type == Q35_TYPE_Q4_K && m->layers[0].attn_qkv.type == Q35_TYPE_Q6_K &&
                    m->layers[1].attn_qkv.type == Q35_TYPE_Q4_K &&
                    m->layers[0].ssm_conv1d.type == Q35_TYPE_F32 && m->layers[0].ssm_a.type == Q35_TYPE_F32,
             "attn_v (layers 3, 7), attn_qkv (layer 0) and output q6_K; token_embd, attn_q, attn_qkv (layer 1) q4_K; conv1d and vectors f32");
    q35_model_free(m);
    q35_case(s, q35_gen_mix_type("q4_k", "ffn_up.weight", 0, 8, 100 * 32) == Q35_TYPE_Q5_0 &&
                    q35_gen_mix_type("q6_k", "ffn_up.weight", 0, 8, 100 * 32) == Q35_TYPE_Q8_0 &&
                    q35_gen_mix_type("q8_0", "ffn_up.weight", 0, 8, 100) == Q35_TYPE_F16 &&
                    q35_gen_mix_type("bf16", "ffn_up.weight", 0, 8, 100) == Q35_TYPE_BF16,
             "row-length fallbacks: q4_K -> q5_0, q6_K -> q8_0, q8_0 -> f16 on rows of 100; bf16 stays");
    q35_case(s, q35_gen_mix_type("q2_k", "ffn_up.weight", 0, 8, 384) == Q35_TYPE_IQ4_NL &&
                    q35_gen_mix_type("q3_k", "ffn_up.weight", 0, 8, 384) == Q35_TYPE_IQ4_NL &&
                    q35_gen_mix_type("iq4_xs", "ffn_up.weight", 0, 8, 384) == Q35_TYPE_IQ4_NL &&
                    q35_gen_mix_type("iq4_xs", "ffn_up.weight", 0, 8, 100) == Q35_TYPE_F16 &&
                    q35_gen_mix_type("q4_1", "ffn_up.weight", 0, 8, 100) == Q35_TYPE_F16 &&
                    q35_gen_mix_type("q5_1", "ffn_up.weight", 0, 8, 384) == Q35_TYPE_Q5_1 &&
                    q35_gen_mix_type("q2_k", "attn_q.weight", 0, 8, 512) == Q35_TYPE_Q2_K &&
                    q35_gen_mix_type("iq4_nl", "output.weight", -1, 8, 100) == Q35_TYPE_F16,
             "row-length fallbacks: q2_K, q3_K, iq4_xs -> iq4_nl on rows of 384, -> f16 on rows of 100; q4_1 -> f16; "
             "q5_1 and q2_K kept where their blocks fit");
    static const char *const grid_mixes[] = {"iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s", "iq1_s", "iq1_m"};
    int bad_grid = 0;
    for (size_t i = 0; i < sizeof grid_mixes / sizeof grid_mixes[0]; i++) {
        q35_type t = Q35_TYPE_COUNT;
        bad_grid += q35_type_parse(grid_mixes[i], &t) != 0 ||
                    q35_gen_mix_type(grid_mixes[i], "attn_q.weight", 0, 8, 512) != t ||
                    q35_gen_mix_type(grid_mixes[i], "ffn_up.weight", 0, 8, 384) != Q35_TYPE_IQ4_NL ||
                    q35_gen_mix_type(grid_mixes[i], "ffn_up.weight", 0, 8, 100) != Q35_TYPE_F16;
    }
    q35_case(s, bad_grid == 0,
             "row-length fallbacks of the 7 grid i-quants (llama.cpp's): kept on rows of 512, iq4_nl on 384, f16 on "
             "100: %d wrong", bad_grid);
    static const struct { const char *mix; q35_type whole, ffn; } one[] = {
        {"q4_1", Q35_TYPE_Q4_1, Q35_TYPE_Q4_1},     {"q5_1", Q35_TYPE_Q5_1, Q35_TYPE_Q5_1},
        {"q2_k", Q35_TYPE_Q2_K, Q35_TYPE_IQ4_NL},   {"q3_k", Q35_TYPE_Q3_K, Q35_TYPE_IQ4_NL},
        {"iq4_nl", Q35_TYPE_IQ4_NL, Q35_TYPE_IQ4_NL}, {"iq4_xs", Q35_TYPE_IQ4_XS, Q35_TYPE_IQ4_NL},
        {"iq2_xxs", Q35_TYPE_IQ2_XXS, Q35_TYPE_IQ4_NL}, {"iq2_xs", Q35_TYPE_IQ2_XS, Q35_TYPE_IQ4_NL},
        {"iq2_s", Q35_TYPE_IQ2_S, Q35_TYPE_IQ4_NL},     {"iq3_xxs", Q35_TYPE_IQ3_XXS, Q35_TYPE_IQ4_NL},
        {"iq3_s", Q35_TYPE_IQ3_S, Q35_TYPE_IQ4_NL},     {"iq1_s", Q35_TYPE_IQ1_S, Q35_TYPE_IQ4_NL},
        {"iq1_m", Q35_TYPE_IQ1_M, Q35_TYPE_IQ4_NL},
    };
    for (size_t i = 0; i < sizeof one / sizeof one[0]; i++) {
        q35_gen_options oi = opts("tiny", one[i].mix, 2, 256, 3);
        q35_model *mi = NULL;
        const bool made = q35_generate_model(&oi, &mi, &err) == 0;
        q35_case(s, made && mi->layers[0].attn_qkv.type == one[i].whole && mi->output.type == one[i].whole &&
                        mi->layers[1].ffn_down.type == one[i].ffn && mi->layers[0].ssm_a.type == Q35_TYPE_F32,
                 "tiny %-7s model: attn_qkv and output %s, ffn_down (rows of 384) %s, vectors f32 %s", one[i].mix,
                 q35_type_name(one[i].whole), q35_type_name(one[i].ffn), made ? "" : err.msg);
        q35_model_free(mi);
    }
    q35_gen_options bad = opts("tiny", "q3_k_m", 0, 0, 1);
    q35_case(s, q35_gen_check(&bad, &err) == -1 && strstr(err.msg, "unknown quant mix 'q3_k_m'") &&
                    strstr(err.msg, "q4_1, q5_1, q2_k, q3_k, iq4_nl, iq4_xs, iq2_xxs, iq2_xs, iq2_s, iq3_xxs, iq3_s, "
                                    "iq1_s, iq1_m"),
             "refuses mix q3_k_m, listing the mixes: %s", err.msg);
}

int main(void)
{
    const uint64_t seed = q35_test_seed();
    q35_suite s;
    q35_suite_begin(&s, "synthetic model generator", seed);
    check_shapes(&s, seed);
    check_scales(&s, seed);
    check_determinism(&s, seed);
    check_mix(&s);
    check_llama_keys(&s);
    check_llama_quantize_types(&s);
    return q35_suite_end(&s);
}
