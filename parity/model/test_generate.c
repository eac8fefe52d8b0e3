/* The synthetic model generator: every shape loads with the hyperparameters it
 * was made with; weights have the scales promised (generate.h); the image is a
 * function of the seed alone (not of the thread count, not of file vs memory);
 * every mix assigns types as llama-quantize does (model/mix.h). */
#define _POSIX_C_SOURCE 200809L
#include "parity/lib/harness.h"

#include "core/parallel.h"
#include "core/gguf.h"
#include "core/quant.h"
#include "model/generate.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdbool.h>
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
 * it takes token ids), the quantization version (the file type: below). */
static void check_llama_keys(q35_suite *s)
{
    static const char *const mixes[] = {"f32", "q4_k_m", "pure-q4_0"};
    for (size_t i = 0; i < sizeof mixes / sizeof mixes[0]; i++) {
        q35_gen_options o = opts("tiny", mixes[i], 1, 64, 1);
        q35_model *m = NULL;
        q35_error err = {{0}};
        uint32_t qv = 0;
        q35_gguf_str vocab = {0};
        const bool ok = q35_generate_model(&o, &m, &err) == 0 &&
                        q35_gguf_get_u32(m->gguf, "general.quantization_version", &qv, &err) == 0 &&
                        q35_gguf_get_str(m->gguf, "tokenizer.ggml.model", &vocab, &err) == 0;
        q35_case(s, ok && qv == 2 && vocab.len == 4 && memcmp(vocab.data, "none", 4) == 0,
                 "%-9s: quantization_version %u, tokenizer.ggml.model \"%.*s\" %s", mixes[i], qv, (int)vocab.len,
                 vocab.data ? vocab.data : "", err.msg);
        q35_model_free(m);
    }
}

/* The models llama-quantize's per-tensor types were recorded on (tools/llama-oracle.sh
 * quantize: f16 files q35 made with these arguments and seed 3). */
static const struct { const char *name, *shape; int layers, vocab, mtp; } k_quantized[] = {
    {"0.8b-8", "0.8b", 8, 4096, 0},
    {"9b-8", "9b", 8, 4096, 0},
    {"0.8b-24", "0.8b", 0, 4096, 0},
    {"tiny-8-mtp1", "tiny", 0, 0, 1},
};
#define QUANTIZE_DIR "data/golden/llama-0c1e570/quantize"

/* What one mix on one model came to against llama-quantize's file of its types. */
typedef struct types_cmp {
    int lines;            /* tensors the file names */
    int differ;           /* of ours and its, in one and not the other or of another type */
    long ftype;           /* the llama_ftype its first line gives, -1 for none */
    q35_type uncomputable; /* a type of ours this build does not quantize, or Q35_TYPE_COUNT */
    char first[160];      /* the first difference */
} types_cmp;

/* -1 when the mix has no file for the model. */
static int compare_types(const char *mix, int model, types_cmp *c)
{
    char rel[160], path[1024];
    snprintf(rel, sizeof rel, QUANTIZE_DIR "/%s-%s.tsv", mix, k_quantized[model].name);
    size_t n = 0;
    char *file = q35_read_file(q35_repo_path(rel, path, sizeof path), &n);
    if (!file)
        return -1;
    char *text = malloc(n + 1);
    memcpy(text, file, n);
    text[n] = '\0';
    free(file);
    q35_gen_options o = opts(k_quantized[model].shape, mix, k_quantized[model].layers, k_quantized[model].vocab, 3);
    o.mtp_layers = k_quantized[model].mtp;
    q35_gen_tensor *t = NULL;
    int nt = 0;
    q35_error err = {{0}};
    *c = (types_cmp){.ftype = -1, .uncomputable = Q35_TYPE_COUNT};
    if (q35_gen_tensors(&o, &t, &nt, &err) != 0)
        c->differ = 1, snprintf(c->first, sizeof c->first, "the generator: %.120s", err.msg);
    const char *num = strstr(text, "llama_ftype ");
    if (text[0] == '#' && num)
        c->ftype = strtol(num + strlen("llama_ftype "), NULL, 10);
    bool *seen = calloc((size_t)nt + 1, sizeof *seen);
    for (char *save = NULL, *line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char name[96], type[16];
        if (line[0] == '#' || sscanf(line, "%95s %15s", name, type) != 2)
            continue;
        c->lines++;
        int k = 0;
        while (k < nt && strcmp(t[k].name, name) != 0)
            k++;
        if (k < nt && !seen[k] && strcmp(q35_type_name(t[k].type), type) == 0) {
            seen[k] = true;
            if (!q35_type_computable(t[k].type))
                c->uncomputable = t[k].type;
        } else if (!c->differ++) {
            snprintf(c->first, sizeof c->first, "%s on %s: llama-quantize %s, ours %s", name, k_quantized[model].name,
                     type, k < nt ? q35_type_name(t[k].type) : "(none)");
        }
    }
    for (int k = 0; k < nt; k++)
        if (!seen[k] && !c->differ++)
            snprintf(c->first, sizeof c->first, "%s on %s: ours, not in llama-quantize's", t[k].name,
                     k_quantized[model].name);
    free(seen);
    free(t);
    free(text);
    return 0;
}

/* The mix a file of QUANTIZE_DIR is of ("<mix>-<model>.tsv" for a model of
 * k_quantized) into mix; false for a name of another form. */
static bool file_mix(const char *file, char *mix, size_t cap)
{
    const size_t len = strlen(file);
    for (size_t i = 0; i < sizeof k_quantized / sizeof k_quantized[0]; i++) {
        char tail[32];
        const size_t tl = (size_t)snprintf(tail, sizeof tail, "-%s.tsv", k_quantized[i].name);
        if (len > tl && strcmp(file + len - tl, tail) == 0) {
            snprintf(mix, cap, "%.*s", (int)(len - tl), file);
            return true;
        }
    }
    return false;
}

/* Every mix is llama-quantize's tensor for tensor (a named ftype as it makes
 * it, a pure-<type> mix as its --pure makes that type) on each model it was
 * recorded on, and the file's general.file_type is the ftype's number; a mix
 * whose types this build cannot quantize makes no file, said (SKIP). */
static void check_llama_quantize_types(q35_suite *s)
{
    char names[512];
    q35_mix_names(names, sizeof names);
    int n_mixes = 0;
    for (char *save = NULL, *mix = strtok_r(names, ", ", &save); mix; mix = strtok_r(NULL, ", ", &save), n_mixes++) {
        char first[160] = "", models[128] = "";
        int differ = 0, files = 0, tensors = 0;
        long ftype = -1;
        bool same_ftype = true;
        q35_type uncomputable = Q35_TYPE_COUNT;
        for (int i = 0; i < (int)(sizeof k_quantized / sizeof k_quantized[0]); i++) {
            types_cmp c;
            if (compare_types(mix, i, &c) != 0)
                continue;
            if (!differ && c.differ)
                snprintf(first, sizeof first, "%s", c.first);
            differ += c.differ;
            tensors += c.lines;
            same_ftype = same_ftype && c.ftype >= 0 && (files == 0 || c.ftype == ftype);
            ftype = c.ftype;
            uncomputable = c.uncomputable != Q35_TYPE_COUNT ? c.uncomputable : uncomputable;
            snprintf(models + strlen(models), sizeof models - strlen(models), "%s%s", files++ ? ", " : "",
                     k_quantized[i].name);
        }
        /* every named ftype on the four models, a pure mix on two (the fallbacks are all it has) */
        const int want = strncmp(mix, "pure-", 5) == 0 ? 2 : 4;
        q35_case(s, files == want && differ == 0 && tensors > 100 * files && same_ftype && q35_mix_file_type(mix) == ftype,
                 "%-11s llama-quantize's types, tensor for tensor, on %d models (%s): %d tensors, %d differ %s; "
                 "llama_ftype %ld (ours %u)", mix, files, models, tensors, differ, first, ftype, q35_mix_file_type(mix));
        if (uncomputable != Q35_TYPE_COUNT) {
            printf("SKIP  %-11s general.file_type: no file made, this build does not quantize %s (its types are "
                   "checked above)\n", mix, q35_type_name(uncomputable));
            continue;
        }
        q35_gen_options o = opts("tiny", mix, 1, 64, 1);
        q35_model *m = NULL;
        q35_error err = {{0}};
        uint32_t got = 0;
        const bool ok = q35_generate_model(&o, &m, &err) == 0 &&
                        q35_gguf_get_u32(m->gguf, "general.file_type", &got, &err) == 0;
        q35_case(s, ok && (long)got == ftype, "%-11s general.file_type %u, llama-quantize's llama_ftype %ld %s", mix,
                 got, ftype, err.msg);
        q35_model_free(m);
    }
    /* no file for a mix the generator does not know (one renamed, or gone) */
    char path[1024], what[300] = "";
    DIR *d = opendir(q35_repo_path(QUANTIZE_DIR, path, sizeof path));
    int stale = 0, all = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        char mix[256];
        q35_error err = {{0}};
        if (e->d_name[0] == '.')
            continue;
        all++;
        if ((!file_mix(e->d_name, mix, sizeof mix) || q35_mix_check(mix, &err) != 0) && !stale++)
            snprintf(what, sizeof what, "%s", e->d_name);
    }
    if (d)
        closedir(d);
    q35_case(s, d && all > 2 * n_mixes && stale == 0,
             "%d files in " QUANTIZE_DIR ", each of a known mix on a known model (%d are not %s)", all, stale, what);
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
    /* the row-length fallbacks (llama-quantize's tensor_type_fallback), on rows of 100 and 384 */
    const q35_mix_model mm = {.n_block = 8, .n_gqa = 2, .tied = false};
    static const struct { const char *mix; int64_t ne0; q35_type want; } fb[] = {
        {"pure-q4_k", 3200, Q35_TYPE_Q5_0},  {"pure-q6_k", 3200, Q35_TYPE_Q8_0}, {"pure-q5_k", 384, Q35_TYPE_Q5_1},
        {"pure-q2_k", 384, Q35_TYPE_Q4_0},   {"pure-q3_k", 384, Q35_TYPE_Q4_0},  {"pure-iq4_xs", 384, Q35_TYPE_IQ4_NL},
        {"pure-iq4_xs", 100, Q35_TYPE_F16},  {"pure-q8_0", 100, Q35_TYPE_F16},   {"pure-q4_1", 100, Q35_TYPE_F16},
        {"pure-q5_1", 384, Q35_TYPE_Q5_1},   {"bf16", 100, Q35_TYPE_BF16},       {"pure-q2_k", 512, Q35_TYPE_Q2_K},
        {"iq3_s", 384, Q35_TYPE_IQ4_NL},     {"pure-iq2_xxs", 384, Q35_TYPE_IQ4_NL}, {"pure-iq1_m", 100, Q35_TYPE_F16},
        {"pure-iq3_s", 512, Q35_TYPE_IQ3_S},
    };
    for (size_t i = 0; i < sizeof fb / sizeof fb[0]; i++) {
        const q35_type got = q35_mix_type(fb[i].mix, "ffn_up.weight", 0, &mm, fb[i].ne0);
        q35_case(s, got == fb[i].want, "row-length fallback: %-11s on rows of %4" PRId64 ": %s (want %s)", fb[i].mix,
                 fb[i].ne0, q35_type_name(got), q35_type_name(fb[i].want));
    }
    /* the output: Q6_K, Q8_0 where the default type's blocks do not fit (and its fallback) */
    q35_case(s, q35_mix_type("iq4_nl", "output.weight", -1, &mm, 100) == Q35_TYPE_F16 &&
                    q35_mix_type("q4_0", "output.weight", -1, &mm, 256) == Q35_TYPE_Q6_K &&
                    q35_mix_type("q4_0", "output.weight", -1, &mm, 96) == Q35_TYPE_Q8_0 &&
                    q35_mix_type("pure-q4_0", "output.weight", -1, &mm, 256) == Q35_TYPE_Q4_0,
             "output: iq4_nl on rows of 100 f16, q4_0 on 256 q6_K, on 96 q8_0; pure-q4_0 on 256 q4_0");
    static const struct { const char *mix; q35_type whole, ffn; } one[] = {
        {"pure-q4_1", Q35_TYPE_Q4_1, Q35_TYPE_Q4_1},     {"pure-q5_1", Q35_TYPE_Q5_1, Q35_TYPE_Q5_1},
        {"pure-q2_k", Q35_TYPE_Q2_K, Q35_TYPE_Q4_0},     {"pure-q3_k", Q35_TYPE_Q3_K, Q35_TYPE_Q4_0},
        {"pure-iq4_nl", Q35_TYPE_IQ4_NL, Q35_TYPE_IQ4_NL}, {"pure-iq4_xs", Q35_TYPE_IQ4_XS, Q35_TYPE_IQ4_NL},
        {"pure-iq2_xxs", Q35_TYPE_IQ2_XXS, Q35_TYPE_IQ4_NL}, {"pure-iq2_xs", Q35_TYPE_IQ2_XS, Q35_TYPE_IQ4_NL},
        {"pure-iq2_s", Q35_TYPE_IQ2_S, Q35_TYPE_IQ4_NL},     {"pure-iq3_xxs", Q35_TYPE_IQ3_XXS, Q35_TYPE_IQ4_NL},
        {"pure-iq3_s", Q35_TYPE_IQ3_S, Q35_TYPE_IQ4_NL},     {"pure-iq1_s", Q35_TYPE_IQ1_S, Q35_TYPE_IQ4_NL},
        {"pure-iq1_m", Q35_TYPE_IQ1_M, Q35_TYPE_IQ4_NL},
    };
    for (size_t i = 0; i < sizeof one / sizeof one[0]; i++) {
        q35_gen_options oi = opts("tiny", one[i].mix, 2, 256, 3);
        q35_model *mi = NULL;
        const bool made = q35_generate_model(&oi, &mi, &err) == 0;
        q35_case(s, made && mi->layers[0].attn_qkv.type == one[i].whole && mi->output.type == one[i].whole &&
                        mi->layers[1].ffn_down.type == one[i].ffn && mi->layers[0].ssm_a.type == Q35_TYPE_F32,
                 "tiny %-11s model: attn_qkv and output %s, ffn_down (rows of 384) %s, vectors f32 %s", one[i].mix,
                 q35_type_name(one[i].whole), q35_type_name(one[i].ffn), made ? "" : err.msg);
        q35_model_free(mi);
    }
    q35_gen_options bad = opts("tiny", "q3_k_xl", 0, 0, 1);
    q35_case(s, q35_gen_check(&bad, &err) == -1 && strstr(err.msg, "unknown quant mix 'q3_k_xl'") &&
                    strstr(err.msg, "q2_k, q2_k_s, q3_k_s, q3_k_m") && strstr(err.msg, "pure-q4_k"),
             "refuses mix q3_k_xl, listing the mixes: %s", err.msg);
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
