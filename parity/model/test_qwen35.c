/* The Qwen3.5 loader on the golden GGUF: the hyperparameters and layer pattern
 * it reads, and — one edit of the file at a time — each refusal (wrong
 * architecture, missing or mis-shaped tensors, unsupported quant types,
 * inconsistent metadata, non-finite or out-of-range floats) with the message it
 * must give, plus the edits it must accept (tied output, recurrent_layers, an
 * MTP block) and report (tensors it does not know). Also the loader's fuzz
 * seed, data/fixtures/gguf-seed/qwen35-micro.gguf: it loads, and its header is
 * the one the generator writes now (`test_qwen35 --write-seed FILE` rewrites it).
 */
#include "gguf_edit.h"
#include "parity/lib/harness.h"

#include "model/generate.h"
#include "model/qwen35.h"
#include "model/ref_model.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GOLDEN "data/golden/tiny-r2/model.gguf"
#define SEED "data/fixtures/gguf-seed/qwen35-micro.gguf"

/* The loader's fuzz seed: a whole qwen35 model at the smallest widths (H 8,
 * 4 layers DDDA and an MTP block, f16), a few KiB. */
static q35_gen_options micro_options(void)
{
    q35_gen_options o = q35_gen_defaults(q35_shape_default());
    const q35_shape micro = {.name = "micro", .n_embd = 8, .n_layer = 4, .n_head = 2, .n_head_kv = 1, .head_dim = 8,
                             .n_ff = 8, .ssm_hk = 1, .ssm_hv = 2, .ssm_dk = 4, .ssm_dv = 4, .conv_kernel = 4,
                             .n_vocab = 16, .n_rot = 4, .full_attn_interval = 4, .n_ctx_train = 64, .eps = 1e-6f,
                             .rope_base = 1e7f, .tied = false};
    o.shape = micro;
    snprintf(o.mix, sizeof o.mix, "f16");
    o.mtp_layers = 1;
    return o;
}

static int write_seed(const char *path)
{
    const q35_gen_options o = micro_options();
    q35_error err = {{0}};
    if (q35_generate_file(&o, path, &err)) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    printf("wrote %s\n", path);
    return 0;
}

/* The committed seed loads, and its header (metadata and tensor table; the
 * data depends on libm) is the generator's. */
static void check_seed(q35_suite *s)
{
    char path[1024];
    q35_repo_path(SEED, path, sizeof path);
    const q35_gen_options o = micro_options();
    q35_error err = {{0}};
    void *image = NULL;
    uint64_t size = 0;
    size_t file_len = 0;
    void *file = q35_read_file(path, &file_len);
    q35_model *m = NULL;
    const bool built = q35_generate_image(&o, &image, &size, &err) == 0;
    const bool loads = q35_model_open(&m, path, &err) == 0;
    const uint64_t header = loads ? m->gguf->data_offset : 0;
    q35_case(s, built && loads && file && file_len == size && header > 0 && memcmp(file, image, header) == 0 &&
                    m->hp.n_layer == 4 && m->hp.n_nextn == 1 && m->n_unknown == 0 && !m->tied,
             "fuzz seed %s (%zu bytes) loads (4 layers + an MTP block, nothing unknown) and its %" PRIu64
             "-byte header is the generator's (regenerate: test_qwen35 --write-seed %s) %s",
             SEED, file_len, header, SEED, err.msg);
    q35_model_free(m);
    free(image);
    free(file);
}

/* Loads g edited by e; returns the model (NULL on failure, with err set). */
static q35_model *load_edited(const q35_gguf *g, const q35_gguf_edit *e, q35_error *err)
{
    void *image;
    uint64_t size;
    if (q35_gguf_rewrite(g, e, &image, &size, err))
        return NULL;
    q35_gguf *edited;
    if (q35_gguf_open_memory(&edited, image, size, true, err)) {
        free(image);
        return NULL;
    }
    q35_model *m;
    return q35_model_load(&m, edited, err) ? NULL : m;
}

/* The last position's float64 logits of a 6-token prompt on m (NULL on failure). */
static double *ref_logits(const q35_model *m, q35_error *err)
{
    static const int32_t tokens[] = {1, 7, 42, 300, 5, 11};
    q35_ref_state st = {0};
    double *logits = malloc((size_t)m->hp.n_vocab * sizeof *logits);
    if (!logits || q35_ref_state_init(&st, m, 6, err) ||
        q35_ref_prefill(m, &st, tokens, 6, 0, 3, NULL, 0, logits, NULL, err)) {
        free(logits);
        logits = NULL;
    }
    q35_ref_state_free(&st);
    return logits;
}

/* A fused attention QKV (convert_hf_to_gguf.py --fuse-qkv): blk.3.attn_qkv
 * [q | k | v] read as views, bitwise the three tensors' bytes, the logits
 * bitwise the unfused file's; both forms in one layer refused naming both. */
static void check_fused_qkv(q35_suite *s, const q35_gguf *g, const q35_model *plain)
{
    q35_error err = {{0}};
    const q35_gguf_edit fuse = {.fuse_qkv = true}, both = {.fuse_qkv = true, .keep_qkv = true};
    q35_model *m = load_edited(g, &fuse, &err);
    if (!q35_case(s, m != NULL && m->n_unknown == 0 && !q35_gguf_find_tensor(m->gguf, "blk.3.attn_q.weight") &&
                         q35_gguf_find_tensor(m->gguf, "blk.3.attn_qkv.weight"),
                  "a fused blk.3.attn_qkv.weight (no attn_q/k/v) loads, every tensor known %s", err.msg))
        return;
    const q35_layer *a = &m->layers[3], *b = &plain->layers[3];
    const q35_weight *fw[3] = {&a->attn_q, &a->attn_k, &a->attn_v}, *pw[3] = {&b->attn_q, &b->attn_k, &b->attn_v};
    bool same = true;
    for (int k = 0; k < 3; k++)
        same = same && fw[k]->rows == pw[k]->rows && fw[k]->cols == pw[k]->cols && fw[k]->type == pw[k]->type &&
               fw[k]->nbytes == pw[k]->nbytes && memcmp(fw[k]->data, pw[k]->data, pw[k]->nbytes) == 0;
    q35_case(s, same, "its q, k, v views: the shapes, types and bytes of attn_q, attn_k, attn_v (memcmp)");
    double *lf = ref_logits(m, &err), *lp = ref_logits(plain, &err);
    q35_case(s, lf && lp && memcmp(lf, lp, (size_t)plain->hp.n_vocab * sizeof *lf) == 0,
             "the reference's logits on it: bitwise the unfused file's (memcmp) %s", err.msg);
    free(lf), free(lp);
    q35_model_free(m);
    err.msg[0] = '\0';
    m = load_edited(g, &both, &err);
    q35_case(s, m == NULL && strstr(err.msg, "attention layer 3 holds both a fused 'blk.3.attn_qkv.weight' and "
                                             "'blk.3.attn_q.weight'"),
             "both forms in one layer: refused, naming both: %s", err.msg);
    q35_model_free(m);
}

static void pattern(const q35_hparams *hp, char *buf)
{
    for (int i = 0; i < hp->n_layer; i++)
        buf[i] = hp->is_attn[i] ? 'A' : 'D';
    buf[hp->n_layer] = '\0';
}

typedef struct refusal {
    const char *what;       /* the edit, in words */
    q35_gguf_edit edit;
    const char *expect;     /* a substring of the error */
} refusal;

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-seed") == 0)
        return write_seed(argv[2]);
    q35_suite s;
    q35_suite_begin(&s, "qwen35 loader: hyperparameters, layer pattern, refusals", 0);
    char path[1024];
    q35_error err = {{0}};
    q35_gguf *g;
    if (!q35_case(&s, q35_gguf_open(&g, q35_repo_path(GOLDEN, path, sizeof path), &err) == 0, "open %s %s", GOLDEN,
                  err.msg))
        return q35_suite_end(&s);

    const q35_gguf_edit none = {0};
    q35_model *m = load_edited(g, &none, &err);
    if (q35_case(&s, m != NULL && m->n_unknown == 0, "golden model loads, every tensor known %s", err.msg)) {
        const q35_hparams *hp = &m->hp;
        char pat[Q35_MAX_LAYERS + 1];
        pattern(hp, pat);
        q35_case(&s, hp->n_layer == 4 && hp->n_embd == 256 && hp->n_ff == 384 && hp->n_vocab == 512 &&
                         hp->n_head == 2 && hp->n_head_kv == 1 && hp->head_dim == 256 && hp->n_rot == 64 &&
                         hp->ssm_hk == 2 && hp->ssm_hv == 4 && hp->ssm_dk == 128 && hp->ssm_dv == 128 &&
                         hp->ssm_r == 2 && hp->conv_dim == 1024 && hp->conv_kernel == 4 && !m->tied &&
                         strcmp(pat, "DDDA") == 0 && hp->eps == 1e-6f && hp->rope_base == 1e7f,
                 "hyperparameters as the golden README's table: H 256, 4 layers %s, heads 2/1 x 256, Hk 2 x 128, Hv 4 "
                 "x 128 (r = 2), ffn 384, vocab 512, untied",
                 pat);
        q35_case(&s, m->layers[3].kind == Q35_LAYER_ATTENTION && m->layers[3].slot == 0 && m->layers[2].slot == 2 &&
                         m->layers[1].attn_qkv.rows == 1024 && m->layers[1].attn_qkv.cols == 256 &&
                         m->layers[0].ssm_conv1d.cols == 4 && m->layers[3].attn_q.rows == 1024,
                 "layer kinds, state slots and weight shapes (attn_qkv [1024][256], conv1d [1024][4], attn_q [1024][256])");
    }
    q35_model_free(m);

    static const int32_t sections_bad[4] = {11, 11, 11, 0};
    static const uint8_t rec_all_delta[4] = {1, 1, 1, 1}, rec_dddA[4] = {1, 1, 1, 0};
    static const uint32_t three = 3, zero = 0, five = 5, vocab_1000 = 1000, v128 = 128, inner_510 = 510;
    static const float eps0 = 0.0f, f_inf = INFINITY, f_nan = NAN;
    static const double d_huge = 1e300;
    static const int64_t sections_neg[4] = {-1, 11, 11, 11};
    const refusal refusals[] = {
        {"architecture 'llama'", {.set_key = "general.architecture", .set_type = Q35_GGUF_STRING, .set_value = "llama"},
         "architecture 'llama' is not 'qwen35'"},
        {"no architecture key", {.drop_key = "general.architecture"}, "key 'general.architecture' is missing"},
        {"block_count missing", {.drop_key = "qwen35.block_count"}, "key 'qwen35.block_count' is missing"},
        {"block_count a string", {.set_key = "qwen35.block_count", .set_type = Q35_GGUF_STRING, .set_value = "4"},
         "'qwen35.block_count' is a string, not an integer"},
        {"block_count 0", {.set_key = "qwen35.block_count", .set_type = Q35_GGUF_U32, .set_value = &zero},
         "qwen35.block_count = 0 is outside"},
        {"ssm_a missing", {.drop_tensor = "blk.1.ssm_a"}, "tensor 'blk.1.ssm_a' is missing"},
        {"token_embd missing", {.drop_tensor = "token_embd.weight"}, "tensor 'token_embd.weight' is missing"},
        {"attn_k {256, 128}",
         {.edit_tensor = "blk.3.attn_k.weight", .new_type = 1, .new_dims = 2, .new_ne = {256, 128, 1, 1}},
         "'blk.3.attn_k.weight' has shape {256, 128}, expected {256, 256}"},
        {"ssm_norm {256}", {.edit_tensor = "blk.0.ssm_norm.weight", .new_type = 0, .new_dims = 1, .new_ne = {256, 1, 1, 1}},
         "'blk.0.ssm_norm.weight' has shape {256}, expected {128} (dv)"},
        {"ffn_up as tq1_0", {.edit_tensor = "blk.0.ffn_up.weight", .new_type = Q35_TYPE_TQ1_0},
         "'blk.0.ffn_up.weight' has quant type tq1_0, which this project does not support (supported: f32, f16, "
         "q4_0, q4_1, q5_0, q5_1, q8_0, q2_K, q3_K, q4_K, q5_K, q6_K, iq2_xxs, iq2_xs, iq3_xxs, iq1_s, iq4_nl, iq3_s, "
         "iq2_s, iq4_xs, iq1_m, bf16)"},
        {"output as q8_1", {.edit_tensor = "output.weight", .new_type = Q35_TYPE_Q8_1},
         "'output.weight' has quant type q8_1"},
        {"Hv = 3 over Hk = 2", {.set_key = "qwen35.ssm.time_step_rank", .set_type = Q35_GGUF_U32, .set_value = &three},
         "Hv = 3 is not a multiple of ssm.group_count Hk = 2"},
        {"inner_size 510", {.set_key = "qwen35.ssm.inner_size", .set_type = Q35_GGUF_U32, .set_value = &inner_510},
         "ssm.inner_size 510 is not a multiple of Hv = 4"},
        {"head_count_kv 3", {.set_key = "qwen35.attention.head_count_kv", .set_type = Q35_GGUF_U32, .set_value = &three},
         "head_count 2 is not a multiple of head_count_kv 3"},
        {"value_length 128", {.set_key = "qwen35.attention.value_length", .set_type = Q35_GGUF_U32, .set_value = &v128},
         "value_length 128 differs from key_length 256"},
        {"rope sections sum 33",
         {.set_key = "qwen35.rope.dimension_sections", .set_type = Q35_GGUF_ARRAY, .set_elem = Q35_GGUF_I32,
          .set_value = sections_bad, .set_count = 4},
         "sum to 33, so n_rot = 66, but rope.dimension_count is 64"},
        {"recurrent_layers all DeltaNet",
         {.set_key = "qwen35.attention.recurrent_layers", .set_type = Q35_GGUF_ARRAY, .set_elem = Q35_GGUF_BOOL,
          .set_value = rec_all_delta, .set_count = 4},
         "inconsistent layer pattern: recurrent_layers says layer 3 is DeltaNet"},
        {"no layer pattern", {.drop_key = "qwen35.full_attention_interval"}, "neither"},
        {"vocab_size 1000", {.set_key = "qwen35.vocab_size", .set_type = Q35_GGUF_U32, .set_value = &vocab_1000},
         "vocab_size 1000 differs from token_embd.weight's 512 rows"},
        {"eps 0", {.set_key = "qwen35.attention.layer_norm_rms_epsilon", .set_type = Q35_GGUF_F32, .set_value = &eps0},
         "layer_norm_rms_epsilon 0 is not in (0, 1)"},
        {"conv_kernel 5", {.set_key = "qwen35.ssm.conv_kernel", .set_type = Q35_GGUF_U32, .set_value = &five},
         "'blk.0.ssm_conv1d.weight' has shape {4, 1024}, expected {5, 1024}"},
        {"rope.freq_base +inf", {.set_key = "qwen35.rope.freq_base", .set_type = Q35_GGUF_F32, .set_value = &f_inf},
         "rope.freq_base inf is not a finite number above 1"},
        {"rope.freq_base NaN", {.set_key = "qwen35.rope.freq_base", .set_type = Q35_GGUF_F32, .set_value = &f_nan},
         "rope.freq_base nan is not a finite number above 1"},
        {"rope.freq_base 1e300 (f64)",
         {.set_key = "qwen35.rope.freq_base", .set_type = Q35_GGUF_F64, .set_value = &d_huge},
         "key 'qwen35.rope.freq_base' = 1e+300 (f64) does not fit a f32"},
        {"eps +inf",
         {.set_key = "qwen35.attention.layer_norm_rms_epsilon", .set_type = Q35_GGUF_F32, .set_value = &f_inf},
         "layer_norm_rms_epsilon inf is not in (0, 1)"},
        {"eps NaN",
         {.set_key = "qwen35.attention.layer_norm_rms_epsilon", .set_type = Q35_GGUF_F32, .set_value = &f_nan},
         "layer_norm_rms_epsilon nan is not in (0, 1)"},
        {"rope sections [-1, 11, 11, 11]",
         {.set_key = "qwen35.rope.dimension_sections", .set_type = Q35_GGUF_ARRAY, .set_elem = Q35_GGUF_I64,
          .set_value = sections_neg, .set_count = 4},
         "rope.dimension_sections[0] = -1 is outside 0..256"},
    };
    for (size_t i = 0; i < sizeof refusals / sizeof refusals[0]; i++) {
        memset(&err, 0, sizeof err);
        q35_model *bad = load_edited(g, &refusals[i].edit, &err);
        q35_case(&s, bad == NULL && strstr(err.msg, refusals[i].expect) != NULL, "refuses %-30s \"%s\"",
                 refusals[i].what, err.msg);
        q35_model_free(bad);
    }

    /* edits the loader accepts */
    memset(&err, 0, sizeof err);
    const q35_gguf_edit untie = {.drop_tensor = "output.weight"};
    m = load_edited(g, &untie, &err);
    q35_case(&s, m && m->tied && m->output.data == m->token_embd.data && m->output.rows == 512 && m->n_unknown == 0,
             "no output.weight: lm_head falls back to token_embd (tied), nothing unknown %s", err.msg);
    q35_model_free(m);

    /* Names the loader does not know are listed, in file order, never silently dropped. */
    const q35_gguf_edit renamed = {.rename_tensor = "output.weight", .new_name = "output.weighu"};
    m = load_edited(g, &renamed, &err);
    q35_case(&s,
             m && m->tied && m->n_unknown == 1 && strcmp(m->gguf->tensors[m->unknown[0]].name, "output.weighu") == 0,
             "output.weight renamed by one byte: tied, and 'output.weighu' listed unknown (%" PRIu64 ") %s",
             m ? m->n_unknown : 0, err.msg);
    q35_model_free(m);
    const q35_gguf_edit stray = {.rename_tensor = "blk.0.ssm_a", .new_name = "blk.0.ssm_A"};
    m = load_edited(g, &stray, &err);
    q35_case(&s, m == NULL && strstr(err.msg, "tensor 'blk.0.ssm_a' is missing"),
             "a required tensor renamed: refused as missing \"%s\"", err.msg);
    q35_model_free(m);
    memset(&err, 0, sizeof err);

    const q35_gguf_edit rec = {.set_key = "qwen35.attention.recurrent_layers", .set_type = Q35_GGUF_ARRAY,
                               .set_elem = Q35_GGUF_BOOL, .set_value = rec_dddA, .set_count = 4};
    q35_model *with_rec = load_edited(g, &rec, &err);
    char pat[Q35_MAX_LAYERS + 1] = "";
    if (with_rec)
        pattern(&with_rec->hp, pat);
    q35_case(&s, with_rec && strcmp(pat, "DDDA") == 0, "recurrent_layers [1,1,1,0] agreeing with the interval: %s %s",
             pat, err.msg);
    q35_model_free(with_rec);

    static const uint32_t one = 1;
    const q35_gguf_edit nextn = {.set_key = "qwen35.nextn_predict_layers", .set_type = Q35_GGUF_U32, .set_value = &one};
    m = load_edited(g, &nextn, &err);
    q35_case(&s, m && m->hp.n_layer == 3 && m->hp.n_layer_file == 4 && strstr(m->note, "MTP block 3") &&
                     m->n_unknown == 0,
             "nextn_predict_layers 1: block 3 counted in block_count is skipped, its tensors not unknown: \"%s\" %s",
             m ? m->note : "", err.msg);
    q35_model_free(m);

    {
        const q35_gguf_edit plain_edit = {0};
        q35_model *plain = load_edited(g, &plain_edit, &err);
        if (q35_case(&s, plain != NULL, "the golden model, rewritten unchanged, loads %s", err.msg))
            check_fused_qkv(&s, g, plain);
        q35_model_free(plain);
    }
    q35_gguf_close(g);
    check_seed(&s);
    return q35_suite_end(&s);
}
