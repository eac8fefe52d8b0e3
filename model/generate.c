#define _POSIX_C_SOURCE 200809L
#include "generate.h"

#include "core/gguf.h"
#include "core/outfile.h"
#include "core/parallel.h"
#include "core/quant.h"
#include "core/rng.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

/* How a tensor's values are drawn. */
typedef enum init_kind { INIT_LINEAR, INIT_EMBED, INIT_NORM, INIT_SSM_A, INIT_DT, INIT_CONV } init_kind;

typedef struct plan_tensor {
    char name[96];
    uint32_t type;
    uint32_t n_dims;
    int64_t ne[2];
    init_kind init;
    int64_t index;        /* in the writer */
    uint64_t offset;      /* absolute file offset of its data */
} plan_tensor;

typedef struct plan {
    plan_tensor *t;
    int n, cap;
} plan;

static const char *const k_mixes[] = {"f32",     "f16",    "bf16",  "q8_0",    "q4_0",  "q5_0",  "q4_k",
                                      "q5_k",    "q6_k",   "q4_k_m", "q4_1",   "q5_1",  "q2_k",  "q3_k",
                                      "iq4_nl",  "iq4_xs", "iq2_xxs", "iq2_xs", "iq2_s", "iq3_xxs", "iq3_s",
                                      "iq1_s",   "iq1_m"};

q35_gen_options q35_gen_defaults(const q35_shape *shape)
{
    q35_gen_options o;
    memset(&o, 0, sizeof o);
    o.shape = *shape;
    snprintf(o.mix, sizeof o.mix, "q4_k_m");
    o.seed = 1;
    return o;
}

int q35_gen_mix_check(const char *mix, q35_error *err)
{
    char names[256] = "";
    size_t used = 0;
    for (size_t i = 0; i < sizeof k_mixes / sizeof k_mixes[0]; i++) {
        if (strcasecmp(mix, k_mixes[i]) == 0)
            return 0;
        used += (size_t)snprintf(names + used, sizeof names - used, "%s%s", i ? ", " : "", k_mixes[i]);
    }
    return q35_fail(err, "generator: unknown quant mix '%s' (one of %s)", mix, names);
}

int q35_gen_check(const q35_gen_options *o, q35_error *err)
{
    if (q35_gen_mix_check(o->mix, err))
        return -1;
    const q35_shape *s = &o->shape;
    if (s->n_embd < 1 || s->n_layer < 1 || s->n_layer > Q35_MAX_LAYERS || s->n_head < 1 || s->n_head_kv < 1 ||
        s->n_head % s->n_head_kv != 0 || s->head_dim < 2 || s->n_ff < 1 || s->ssm_hk < 1 || s->ssm_hv % s->ssm_hk != 0 ||
        s->ssm_dk < 1 || s->ssm_dv < 1 || s->conv_kernel < 2 || s->n_vocab < 1 || s->n_rot % 2 != 0 ||
        s->n_rot > s->head_dim || s->full_attn_interval < 1)
        return q35_fail(err, "generator: shape '%s' is inconsistent (sizes must be positive, heads divisible by "
                        "kv heads, Hv by Hk, n_rot even and <= head_dim)", s->name);
    if (o->mtp_layers < 0 || o->mtp_layers > 4)
        return q35_fail(err, "generator: %d MTP layers is outside 0..4", o->mtp_layers);
    if (s->n_layer + o->mtp_layers > Q35_MAX_LAYERS)
        return q35_fail(err, "generator: %d layers and %d MTP blocks make %d blocks, over the limit of %d", s->n_layer,
                        o->mtp_layers, s->n_layer + o->mtp_layers, Q35_MAX_LAYERS);
    return 0;
}

/* llama.cpp's use_more_bits: the first and last eighth of the layers and every
 * third in between get more bits in a _M mix. */
static bool use_more_bits(int layer, int n_layer)
{
    return layer < n_layer / 8 || layer >= 7 * n_layer / 8 || (layer - n_layer / 8) % 3 == 2;
}

/* A type whose blocks fit a row of ne0: 256-block types fall back to a 32-block
 * one as llama.cpp's quantizer does (Q4_K -> Q5_0, Q6_K -> Q8_0, Q2_K/Q3_K/IQ4_XS
 * and the grid i-quants IQ1_S, IQ1_M, IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S ->
 * IQ4_NL; Q5_K -> Q8_0 here, Q5_1 there), 32-blocks to F16. */
static q35_type fit_row(q35_type t, int64_t ne0)
{
    if (q35_row_bytes(t, ne0) != 0)
        return t;
    const q35_type_info *ti = q35_type_get(t);
    if (!ti || ti->block_elems != 256)
        return Q35_TYPE_F16;
    const q35_type fb = t == Q35_TYPE_Q4_K                         ? Q35_TYPE_Q5_0
                        : t == Q35_TYPE_Q5_K || t == Q35_TYPE_Q6_K ? Q35_TYPE_Q8_0
                                                                   : Q35_TYPE_IQ4_NL; /* Q2_K, Q3_K, the IQ types */
    return q35_row_bytes(fb, ne0) != 0 ? fb : Q35_TYPE_F16;
}

q35_type q35_gen_mix_type(const char *mix, const char *kind, int layer, int n_layer, int64_t ne0)
{
    q35_type t = Q35_TYPE_F16;
    if (strcasecmp(mix, "q4_k_m") == 0) {
        /* llama-quantize's Q4_K_M for qwen35: the output (a tied token_embd too) Q6_K; the
         * attention-v-like weights (attn_v, and the DeltaNet's attn_qkv: one a layer, so its
         * count is the layer's) and ffn_down Q6_K in the layers use_more_bits picks */
        t = Q35_TYPE_Q4_K;
        if (strcmp(kind, "output.weight") == 0)
            t = Q35_TYPE_Q6_K;
        else if ((strcmp(kind, "attn_v.weight") == 0 || strcmp(kind, "attn_qkv.weight") == 0 ||
                  strcmp(kind, "ffn_down.weight") == 0) &&
                 layer >= 0 && use_more_bits(layer, n_layer))
            t = Q35_TYPE_Q6_K;
    } else if (q35_type_parse(mix, &t) != 0) {
        t = Q35_TYPE_F16;
    }
    return fit_row(t, ne0);
}

static int plan_add(plan *p, const char *name, uint32_t type, int64_t ne0, int64_t ne1, init_kind init,
                    q35_error *err)
{
    if (p->n == p->cap) {
        const int cap = p->cap ? 2 * p->cap : 256;
        plan_tensor *t = realloc(p->t, (size_t)cap * sizeof *t);
        if (!t)
            return q35_fail(err, "generator: out of memory");
        p->t = t;
        p->cap = cap;
    }
    plan_tensor *t = &p->t[p->n++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->type = type;
    t->n_dims = ne1 > 0 ? 2 : 1;
    t->ne[0] = ne0;
    t->ne[1] = ne1 > 0 ? ne1 : 1;
    t->init = init;
    return 0;
}

/* A 2-D weight of block `layer` (-1: none) in the mix's type. */
static int plan_weight(plan *p, const q35_gen_options *o, int layer, const char *kind, int64_t ne0, int64_t ne1,
                       init_kind init, q35_error *err)
{
    char name[96];
    if (layer >= 0)
        snprintf(name, sizeof name, "blk.%d.%s", layer, kind);
    else
        snprintf(name, sizeof name, "%s", kind);
    /* a tied token_embd is the output too, and quantized as llama-quantize quantizes the output */
    const bool as_output = o->shape.tied && strcmp(kind, "token_embd.weight") == 0;
    const q35_type t = q35_gen_mix_type(o->mix, as_output ? "output.weight" : kind, layer, o->shape.n_layer, ne0);
    return plan_add(p, name, t, ne0, ne1, init, err);
}

static int plan_vector(plan *p, int layer, const char *kind, int64_t n, init_kind init, q35_error *err)
{
    char name[96];
    if (layer >= 0)
        snprintf(name, sizeof name, "blk.%d.%s", layer, kind);
    else
        snprintf(name, sizeof name, "%s", kind);
    return plan_add(p, name, Q35_TYPE_F32, n, 0, init, err);
}

static int plan_attention(plan *p, const q35_gen_options *o, int il, q35_error *err)
{
    const q35_shape *s = &o->shape;
    const int64_t H = s->n_embd, qd = (int64_t)s->n_head * s->head_dim, kvd = (int64_t)s->n_head_kv * s->head_dim;
    return plan_weight(p, o, il, "attn_q.weight", H, 2 * qd, INIT_LINEAR, err) ||
           plan_weight(p, o, il, "attn_k.weight", H, kvd, INIT_LINEAR, err) ||
           plan_weight(p, o, il, "attn_v.weight", H, kvd, INIT_LINEAR, err) ||
           plan_weight(p, o, il, "attn_output.weight", qd, H, INIT_LINEAR, err) ||
           plan_vector(p, il, "attn_q_norm.weight", s->head_dim, INIT_NORM, err) ||
           plan_vector(p, il, "attn_k_norm.weight", s->head_dim, INIT_NORM, err)
               ? -1
               : 0;
}

static int plan_deltanet(plan *p, const q35_gen_options *o, int il, q35_error *err)
{
    const q35_shape *s = &o->shape;
    const int64_t H = s->n_embd, vd = (int64_t)s->ssm_hv * s->ssm_dv;
    const int64_t conv = 2 * (int64_t)s->ssm_hk * s->ssm_dk + vd;
    char conv_name[96];
    snprintf(conv_name, sizeof conv_name, "blk.%d.ssm_conv1d.weight", il);
    return plan_weight(p, o, il, "attn_qkv.weight", H, conv, INIT_LINEAR, err) ||
           plan_weight(p, o, il, "attn_gate.weight", H, vd, INIT_LINEAR, err) ||
           plan_weight(p, o, il, "ssm_beta.weight", H, s->ssm_hv, INIT_LINEAR, err) ||
           plan_weight(p, o, il, "ssm_alpha.weight", H, s->ssm_hv, INIT_LINEAR, err) ||
           plan_add(p, conv_name, Q35_TYPE_F32, s->conv_kernel, conv, INIT_CONV, err) ||
           plan_vector(p, il, "ssm_dt.bias", s->ssm_hv, INIT_DT, err) ||
           plan_vector(p, il, "ssm_a", s->ssm_hv, INIT_SSM_A, err) ||
           plan_vector(p, il, "ssm_norm.weight", s->ssm_dv, INIT_NORM, err) ||
           plan_weight(p, o, il, "ssm_out.weight", vd, H, INIT_LINEAR, err)
               ? -1
               : 0;
}

static int build_plan(plan *p, const q35_gen_options *o, q35_error *err)
{
    const q35_shape *s = &o->shape;
    const int64_t H = s->n_embd;
    if (plan_weight(p, o, -1, "token_embd.weight", H, s->n_vocab, INIT_EMBED, err) ||
        plan_vector(p, -1, "output_norm.weight", H, INIT_NORM, err) ||
        (!s->tied && plan_weight(p, o, -1, "output.weight", H, s->n_vocab, INIT_LINEAR, err)))
        return -1;
    const int blocks = s->n_layer + o->mtp_layers;
    for (int il = 0; il < blocks; il++) {
        const bool mtp = il >= s->n_layer;
        const bool attn = mtp || (il + 1) % s->full_attn_interval == 0; /* MTP blocks are attention blocks */
        if (plan_vector(p, il, "attn_norm.weight", H, INIT_NORM, err) ||
            plan_vector(p, il, "post_attention_norm.weight", H, INIT_NORM, err))
            return -1;
        if (attn) {
            if (plan_attention(p, o, il, err))
                return -1;
        } else {
            if (plan_deltanet(p, o, il, err))
                return -1;
        }
        if (plan_weight(p, o, il, "ffn_gate.weight", H, s->n_ff, INIT_LINEAR, err) ||
            plan_weight(p, o, il, "ffn_up.weight", H, s->n_ff, INIT_LINEAR, err) ||
            plan_weight(p, o, il, "ffn_down.weight", s->n_ff, H, INIT_LINEAR, err))
            return -1;
        if (mtp && (plan_weight(p, o, il, "nextn.eh_proj.weight", 2 * H, H, INIT_LINEAR, err) ||
                    plan_vector(p, il, "nextn.enorm.weight", H, INIT_NORM, err) ||
                    plan_vector(p, il, "nextn.hnorm.weight", H, INIT_NORM, err) ||
                    plan_vector(p, il, "nextn.shared_head_norm.weight", H, INIT_NORM, err)))
            return -1;
    }
    return 0;
}

/* llama.cpp's llama_ftype of a mix (general.file_type): what its loader names the
 * file; a mix of one k-quant is its _S form (q2_k: Q2_K, llama.cpp's name for it),
 * q4_k_m Q4_K_M (LLAMA_FTYPE_*, llama.h). */
static uint32_t llama_ftype(const char *mix)
{
    static const struct { const char *mix; uint32_t ftype; } k[] = {
        {"f32", 0},     {"f16", 1},  {"q4_0", 2},  {"q4_1", 3},   {"q8_0", 7},    {"q5_0", 8},
        {"q5_1", 9},    {"q2_k", 10}, {"q3_k", 11}, {"q4_k", 14},  {"q4_k_m", 15}, {"q5_k", 16},
        {"q6_k", 18},   {"iq2_xxs", 19}, {"iq2_xs", 20}, {"iq3_xxs", 23}, {"iq1_s", 24},
        {"iq4_nl", 25}, {"iq3_s", 26},  {"iq2_s", 28},  {"iq4_xs", 30}, {"iq1_m", 31}, {"bf16", 32},
    };
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (strcasecmp(mix, k[i].mix) == 0)
            return k[i].ftype;
    return 1024; /* LLAMA_FTYPE_GUESSED: not reached, the mix was checked */
}

static int write_metadata(q35_gguf_writer *w, const q35_gen_options *o, q35_error *err)
{
    const q35_shape *s = &o->shape;
    char name[64];
    snprintf(name, sizeof name, "q35-synthetic-%s-%s", s->name, o->mix);
    int32_t sections[4] = {s->n_rot / 2, 0, 0, 0};
    if (s->n_rot == 64) { /* the released models' interleaved M-RoPE split */
        sections[0] = 11;
        sections[1] = 11;
        sections[2] = 10;
    }
    const uint32_t u[][2] = {
        {0, (uint32_t)(s->n_layer + o->mtp_layers)}, {1, (uint32_t)s->n_ctx_train}, {2, (uint32_t)s->n_embd},
        {3, (uint32_t)s->n_ff}, {4, (uint32_t)s->n_head}, {5, (uint32_t)s->n_head_kv}, {6, (uint32_t)s->head_dim},
        {7, (uint32_t)s->head_dim}, {8, (uint32_t)s->n_rot}, {9, (uint32_t)s->conv_kernel}, {10, (uint32_t)s->ssm_dk},
        {11, (uint32_t)s->ssm_hk}, {12, (uint32_t)s->ssm_hv}, {13, (uint32_t)(s->ssm_hv * s->ssm_dv)},
        {14, (uint32_t)s->full_attn_interval}, {15, (uint32_t)s->n_vocab},
    };
    static const char *const keys[] = {
        "qwen35.block_count", "qwen35.context_length", "qwen35.embedding_length", "qwen35.feed_forward_length",
        "qwen35.attention.head_count", "qwen35.attention.head_count_kv", "qwen35.attention.key_length",
        "qwen35.attention.value_length", "qwen35.rope.dimension_count", "qwen35.ssm.conv_kernel",
        "qwen35.ssm.state_size", "qwen35.ssm.group_count", "qwen35.ssm.time_step_rank", "qwen35.ssm.inner_size",
        "qwen35.full_attention_interval", "qwen35.vocab_size",
    };
    if (q35_gguf_writer_set_str(w, "general.architecture", "qwen35", err) ||
        q35_gguf_writer_set_str(w, "general.name", name, err) ||
        q35_gguf_writer_set_u32(w, "general.file_type", llama_ftype(o->mix), err) ||
        q35_gguf_writer_set_u32(w, "general.quantization_version", 2, err) ||
        /* no tokenizer: llama.cpp loads a "none" vocabulary and takes token ids */
        q35_gguf_writer_set_str(w, "tokenizer.ggml.model", "none", err))
        return -1;
    for (size_t i = 0; i < sizeof u / sizeof u[0]; i++)
        if (q35_gguf_writer_set_u32(w, keys[u[i][0]], u[i][1], err))
            return -1;
    if (q35_gguf_writer_set_f32(w, "qwen35.attention.layer_norm_rms_epsilon", s->eps, err) ||
        q35_gguf_writer_set_f32(w, "qwen35.rope.freq_base", s->rope_base, err) ||
        q35_gguf_writer_set_array(w, "qwen35.rope.dimension_sections", Q35_GGUF_I32, sections, 4, err))
        return -1;
    if (o->mtp_layers > 0 && q35_gguf_writer_set_u32(w, "qwen35.nextn_predict_layers", (uint32_t)o->mtp_layers, err))
        return -1;
    const uint64_t seed = o->seed;
    return q35_gguf_writer_set(w, "q35.generator.seed", Q35_GGUF_U64, &seed, err) ||
                   q35_gguf_writer_set_str(w, "q35.generator.mix", o->mix, err) ||
                   q35_gguf_writer_set_str(w, "q35.generator.shape", s->name, err)
               ? -1
               : 0;
}

/* ---- filling tensor data in parallel ---------------------------------------- */

#define GROUP_ELEMS (1 << 20) /* elements per work item, about */

typedef struct work {
    int tensor;
    int64_t row0, rows;
} work;

typedef struct fill_job {
    const q35_gen_options *o;
    const plan *p;
    const work *items;
    uint8_t *image;      /* memory target, or NULL */
    int fd;              /* file target when image is NULL */
    float **fbuf;        /* [threads] */
    uint8_t **qbuf;      /* [threads] */
    atomic_int failed;   /* errno of the first failed write, or 0 */
} fill_job;

static uint64_t name_hash(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++)
        h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
    return h;
}

/* x[i] = offset + scale * N(0, 1), or ssm_a's log-uniform negatives. */
static void draw(float *x, int64_t n, init_kind init, q35_rng *r)
{
    if (init == INIT_SSM_A) {
        for (int64_t i = 0; i < n; i++)
            x[i] = (float)-exp(q35_rng_range(r, log(0.01), log(16.0)));
        return;
    }
    const float scale = init == INIT_LINEAR ? 0.02f : init == INIT_EMBED ? 1.0f : init == INIT_CONV ? 0.3f : 0.1f;
    const float offset = init == INIT_NORM || init == INIT_DT ? 1.0f : 0.0f;
    for (int64_t i = 0; i < n; i++)
        x[i] = offset + scale * q35_rng_normal_fast(r);
}

static void fill_range(void *ctx, int64_t begin, int64_t end, int thread)
{
    fill_job *j = ctx;
    for (int64_t k = begin; k < end; k++) {
        if (atomic_load_explicit(&j->failed, memory_order_relaxed)) /* a write failed: no more work */
            return;
        const work *w = &j->items[k];
        const plan_tensor *t = &j->p->t[w->tensor];
        const int64_t ne0 = t->ne[0], n = w->rows * ne0;
        const size_t row_bytes = q35_row_bytes(t->type, ne0);
        q35_rng r;
        q35_rng_seed(&r, j->o->seed ^ name_hash(t->name) ^ (0x9e3779b97f4a7c15ull * (uint64_t)(w->row0 + 1)));
        draw(j->fbuf[thread], n, t->init, &r);
        const uint64_t at = t->offset + (uint64_t)w->row0 * row_bytes;
        const size_t bytes = (size_t)w->rows * row_bytes;
        if (j->image) {
            q35_quantize((q35_type)t->type, j->fbuf[thread], j->image + at, n);
            continue;
        }
        q35_quantize((q35_type)t->type, j->fbuf[thread], j->qbuf[thread], n);
        size_t done = 0;
        while (done < bytes) {
            const ssize_t wr = pwrite(j->fd, j->qbuf[thread] + done, bytes - done, (off_t)(at + done));
            if (wr <= 0) {
                int expected = 0;
                atomic_compare_exchange_strong(&j->failed, &expected, wr < 0 ? errno : EIO);
                return;
            }
            done += (size_t)wr;
        }
    }
}

/* Lays out the file and fills it: into `image` (file_size bytes) or through fd. */
static int generate(const q35_gen_options *o, uint8_t **image_out, uint64_t *size_out, int fd, const char *target,
                    q35_error *err)
{
    if (q35_gen_check(o, err))
        return -1;
    plan p = {0};
    q35_gguf_writer *w = q35_gguf_writer_new();
    work *items = NULL;
    uint8_t *image = NULL, *header = NULL;
    fill_job job = {.o = o, .p = &p, .fd = fd};
    atomic_init(&job.failed, 0);
    const int threads = q35_threads();
    int rc = -1;
    if (!w) {
        q35_fail(err, "generator: out of memory");
        goto out;
    }
    if (build_plan(&p, o, err) || write_metadata(w, o, err))
        goto out;
    int64_t n_items = 0, max_elems = 0;
    for (int i = 0; i < p.n; i++) {
        p.t[i].index = q35_gguf_writer_add_tensor(w, p.t[i].name, p.t[i].type, p.t[i].n_dims, p.t[i].ne, err);
        if (p.t[i].index < 0)
            goto out;
        const int64_t rows_per = GROUP_ELEMS / p.t[i].ne[0] > 0 ? GROUP_ELEMS / p.t[i].ne[0] : 1;
        n_items += (p.t[i].ne[1] + rows_per - 1) / rows_per;
        max_elems = rows_per * p.t[i].ne[0] > max_elems ? rows_per * p.t[i].ne[0] : max_elems;
    }
    const uint64_t size = q35_gguf_writer_file_size(w), hdr = q35_gguf_writer_data_offset(w);
    for (int i = 0; i < p.n; i++)
        p.t[i].offset = q35_gguf_writer_tensor_offset(w, p.t[i].index);
    items = malloc((size_t)n_items * sizeof *items);
    job.fbuf = calloc((size_t)threads, sizeof *job.fbuf);
    job.qbuf = calloc((size_t)threads, sizeof *job.qbuf);
    if (!items || !job.fbuf || !job.qbuf) {
        q35_fail(err, "generator: out of memory");
        goto out;
    }
    for (int t = 0; t < threads; t++) {
        job.fbuf[t] = malloc((size_t)max_elems * sizeof(float));
        job.qbuf[t] = image_out ? NULL : malloc((size_t)max_elems * sizeof(float));
        if (!job.fbuf[t] || (!image_out && !job.qbuf[t])) {
            q35_fail(err, "generator: out of memory for work buffers");
            goto out;
        }
    }
    int64_t k = 0;
    for (int i = 0; i < p.n; i++) {
        const int64_t rows_per = GROUP_ELEMS / p.t[i].ne[0] > 0 ? GROUP_ELEMS / p.t[i].ne[0] : 1;
        for (int64_t r = 0; r < p.t[i].ne[1]; r += rows_per)
            items[k++] = (work){.tensor = i, .row0 = r, .rows = p.t[i].ne[1] - r < rows_per ? p.t[i].ne[1] - r : rows_per};
    }
    job.items = items;
    if (image_out) {
        image = calloc(1, size);
        if (!image) {
            q35_fail(err, "generator: out of memory for a %.1f MiB model image", (double)size / 1048576.0);
            goto out;
        }
        job.image = image;
        if (q35_gguf_writer_write_header(w, image, size, err))
            goto out;
    } else {
        header = malloc(hdr);
        if (!header || q35_gguf_writer_write_header(w, header, hdr, err)) {
            if (!header)
                q35_fail(err, "generator: out of memory");
            goto out;
        }
        if (ftruncate(fd, (off_t)size) != 0 || pwrite(fd, header, hdr, 0) != (ssize_t)hdr) {
            q35_fail(err, "generator: writing %s (%.1f MiB) failed: %s", target, (double)size / 1048576.0,
                     strerror(errno));
            goto out;
        }
    }
    q35_parallel_for(n_items, 1, fill_range, &job);
    const int failed = atomic_load(&job.failed);
    if (failed) {
        q35_fail(err, "generator: writing %s failed: %s", target, strerror(failed));
        goto out;
    }
    if (image_out) {
        *image_out = image;
        image = NULL;
    }
    if (size_out)
        *size_out = size;
    rc = 0;
out:
    if (job.fbuf)
        for (int t = 0; t < threads; t++)
            free(job.fbuf[t]);
    if (job.qbuf)
        for (int t = 0; t < threads; t++)
            free(job.qbuf[t]);
    free(job.fbuf);
    free(job.qbuf);
    free(items);
    free(image);
    free(header);
    free(p.t);
    q35_gguf_writer_free(w);
    return rc;
}

int q35_generate_file(const q35_gen_options *o, const char *path, q35_error *err)
{
    q35_outfile f;
    if (q35_gen_check(o, err) || q35_outfile_open(&f, path, err))
        return -1;
    int rc = generate(o, NULL, NULL, f.fd, path, err);
    if (rc == 0)
        rc = q35_outfile_commit(&f, err);
    q35_outfile_discard(&f);
    return rc == 0 ? 0 : -1;
}

int q35_generate_image(const q35_gen_options *o, void **image, uint64_t *size, q35_error *err)
{
    uint8_t *img = NULL;
    if (generate(o, &img, size, -1, "<memory>", err))
        return -1;
    *image = img;
    return 0;
}

int q35_generate_model(const q35_gen_options *o, q35_model **out, q35_error *err)
{
    *out = NULL;
    void *image;
    uint64_t size;
    if (q35_generate_image(o, &image, &size, err))
        return -1;
    q35_gguf *g;
    if (q35_gguf_open_memory(&g, image, size, true, err)) {
        free(image);
        return -1;
    }
    return q35_model_load(out, g, err);
}
