#include "qwen35.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY(name) "qwen35." name

static int get_int(const q35_gguf *g, const char *key, int lo, int hi, int *out, q35_error *err)
{
    uint32_t v;
    if (q35_gguf_get_u32(g, key, &v, err))
        return -1;
    if ((int64_t)v < lo || (int64_t)v > hi)
        return q35_fail(err, "GGUF %s: %s = %u is outside %d..%d", g->source, key, v, lo, hi);
    *out = (int)v;
    return 0;
}

static int get_int_or(const q35_gguf *g, const char *key, int lo, int hi, int fallback, int *out, q35_error *err)
{
    if (!q35_gguf_find(g, key)) {
        *out = fallback;
        return 0;
    }
    return get_int(g, key, lo, hi, out, err);
}

static int check_arch(const q35_gguf *g, q35_error *err)
{
    q35_gguf_str arch;
    if (q35_gguf_get_str(g, "general.architecture", &arch, err))
        return -1;
    const char *nul = memchr(arch.data, '\0', arch.len);
    if (nul)
        return q35_fail(err, "GGUF %s: architecture '%.*s' holds a NUL byte at byte %d of its %llu: it is not 'qwen35'",
                        g->source, (int)(nul - arch.data > 64 ? 64 : nul - arch.data), arch.data, (int)(nul - arch.data),
                        (unsigned long long)arch.len);
    if (arch.len != 6 || memcmp(arch.data, "qwen35", 6) != 0)
        return q35_fail(err, "GGUF %s: architecture '%.*s' is not 'qwen35' (the dense Qwen3.5 hybrid)", g->source,
                        arch.len > 64 ? 64 : (int)arch.len, arch.data);
    return 0;
}

/* The layer pattern from full_attention_interval and/or recurrent_layers. */
static int read_pattern(q35_hparams *hp, const q35_gguf *g, q35_error *err)
{
    const q35_gguf_kv *rec = q35_gguf_find(g, KEY("attention.recurrent_layers"));
    const bool has_interval = q35_gguf_find(g, KEY("full_attention_interval")) != NULL;
    hp->full_attn_interval = 0;
    if (has_interval && get_int(g, KEY("full_attention_interval"), 1, Q35_MAX_LAYERS, &hp->full_attn_interval, err))
        return -1;
    if (!rec && !has_interval)
        return q35_fail(err, "GGUF %s: neither %s nor %s says which layers are full attention", g->source,
                        KEY("full_attention_interval"), KEY("attention.recurrent_layers"));
    if (rec) {
        if (rec->type != Q35_GGUF_ARRAY || !q35_gguf_vtype_is_int(rec->elem_type))
            return q35_fail(err, "GGUF %s: %s is not an array of bools", g->source, KEY("attention.recurrent_layers"));
        if (rec->count != (uint64_t)hp->n_layer_file)
            return q35_fail(err, "GGUF %s: %s has %" PRIu64 " entries, block_count is %d", g->source,
                            KEY("attention.recurrent_layers"), rec->count, hp->n_layer_file);
    }
    hp->n_attn = hp->n_delta = 0;
    for (int i = 0; i < hp->n_layer; i++) {
        const bool by_interval = has_interval && (i + 1) % hp->full_attn_interval == 0;
        bool attn = by_interval;
        if (rec) {
            attn = q35_gguf_array_int(rec, (uint64_t)i) == 0;
            if (has_interval && attn != by_interval)
                return q35_fail(err,
                                "GGUF %s: inconsistent layer pattern: recurrent_layers says layer %d is %s, "
                                "full_attention_interval %d says %s",
                                g->source, i, attn ? "attention" : "DeltaNet", hp->full_attn_interval,
                                by_interval ? "attention" : "DeltaNet");
        }
        hp->is_attn[i] = attn;
        if (attn)
            hp->n_attn++;
        else
            hp->n_delta++;
    }
    return 0;
}

int q35_hparams_read(q35_hparams *hp, const q35_gguf *g, q35_error *err)
{
    memset(hp, 0, sizeof *hp);
    if (check_arch(g, err))
        return -1;
    const int big = 1 << 24;
    if (get_int(g, KEY("block_count"), 1, Q35_MAX_LAYERS + 16, &hp->n_layer_file, err) ||
        get_int_or(g, KEY("nextn_predict_layers"), 0, 16, 0, &hp->n_nextn, err) ||
        get_int(g, KEY("embedding_length"), 1, big, &hp->n_embd, err) ||
        get_int(g, KEY("feed_forward_length"), 1, big, &hp->n_ff, err) ||
        get_int_or(g, KEY("context_length"), 0, 1 << 30, 0, &hp->n_ctx_train, err) ||
        get_int(g, KEY("attention.head_count"), 1, 1024, &hp->n_head, err) ||
        get_int(g, KEY("attention.head_count_kv"), 1, 1024, &hp->n_head_kv, err) ||
        get_int(g, KEY("attention.key_length"), 2, 4096, &hp->head_dim, err) ||
        get_int(g, KEY("rope.dimension_count"), 0, 4096, &hp->n_rot, err) ||
        get_int(g, KEY("ssm.conv_kernel"), 2, 64, &hp->conv_kernel, err) ||
        get_int(g, KEY("ssm.state_size"), 1, 4096, &hp->ssm_dk, err) ||
        get_int(g, KEY("ssm.group_count"), 1, 1024, &hp->ssm_hk, err) ||
        get_int(g, KEY("ssm.time_step_rank"), 1, 4096, &hp->ssm_hv, err))
        return -1;
    int inner, value_len;
    if (get_int(g, KEY("ssm.inner_size"), 1, big, &inner, err) ||
        get_int_or(g, KEY("attention.value_length"), 1, 4096, hp->head_dim, &value_len, err))
        return -1;
    if (q35_gguf_get_f32(g, KEY("attention.layer_norm_rms_epsilon"), &hp->eps, err) ||
        q35_gguf_get_f32(g, KEY("rope.freq_base"), &hp->rope_base, err))
        return -1;
    const char *src = g->source;
    if (!(hp->eps > 0.0f && hp->eps < 1.0f))
        return q35_fail(err, "GGUF %s: layer_norm_rms_epsilon %g is not in (0, 1)", src, (double)hp->eps);
    if (!(hp->rope_base > 1.0f && isfinite(hp->rope_base)))
        return q35_fail(err, "GGUF %s: rope.freq_base %g is not a finite number above 1", src, (double)hp->rope_base);
    hp->n_layer = hp->n_layer_file - hp->n_nextn;
    if (hp->n_layer < 1 || hp->n_layer > Q35_MAX_LAYERS)
        return q35_fail(err, "GGUF %s: block_count %d minus nextn_predict_layers %d leaves %d layers (want 1..%d)", src,
                        hp->n_layer_file, hp->n_nextn, hp->n_layer, Q35_MAX_LAYERS);
    if (hp->n_head % hp->n_head_kv != 0)
        return q35_fail(err, "GGUF %s: head_count %d is not a multiple of head_count_kv %d", src, hp->n_head,
                        hp->n_head_kv);
    if (value_len != hp->head_dim)
        return q35_fail(err, "GGUF %s: attention.value_length %d differs from key_length %d", src, value_len,
                        hp->head_dim);
    if (hp->n_rot % 2 != 0 || hp->n_rot > hp->head_dim)
        return q35_fail(err, "GGUF %s: rope.dimension_count %d must be even and at most key_length %d", src, hp->n_rot,
                        hp->head_dim);
    const q35_gguf_kv *sections = q35_gguf_find(g, KEY("rope.dimension_sections"));
    if (sections) {
        if (sections->type != Q35_GGUF_ARRAY || !q35_gguf_vtype_is_int(sections->elem_type))
            return q35_fail(err, "GGUF %s: rope.dimension_sections is not an integer array", src);
        int64_t sum = 0;
        for (uint64_t i = 0; i < sections->count; i++) {
            const int64_t v = q35_gguf_array_int(sections, i);
            if (v < 0 || v > hp->head_dim)
                return q35_fail(err, "GGUF %s: rope.dimension_sections[%" PRIu64 "] = %" PRId64 " is outside 0..%d "
                                "(key_length)", src, i, v, hp->head_dim);
            sum += v; /* at most 4096 x the elements the file holds: no overflow */
        }
        if (2 * sum != hp->n_rot)
            return q35_fail(err, "GGUF %s: rope.dimension_sections sum to %" PRId64 ", so n_rot = %" PRId64
                            ", but rope.dimension_count is %d", src, sum, 2 * sum, hp->n_rot);
    }
    if (hp->ssm_hv % hp->ssm_hk != 0)
        return q35_fail(err, "GGUF %s: ssm.time_step_rank Hv = %d is not a multiple of ssm.group_count Hk = %d", src,
                        hp->ssm_hv, hp->ssm_hk);
    if (inner % hp->ssm_hv != 0)
        return q35_fail(err, "GGUF %s: ssm.inner_size %d is not a multiple of Hv = %d", src, inner, hp->ssm_hv);
    hp->ssm_dv = inner / hp->ssm_hv;
    hp->ssm_r = hp->ssm_hv / hp->ssm_hk;
    hp->conv_dim = 2 * hp->ssm_hk * hp->ssm_dk + inner;
    return read_pattern(hp, g, err);
}

/* What the tensor lookups share: the file, one flag per tensor saying the
 * model uses it, and where an error goes. */
typedef struct loader {
    const q35_gguf *g;
    bool *used;
    q35_error *err;
} loader;

/* Finds `name`, checks it is {cols} (rows == 0) or {cols, rows} and of a
 * computable type, fills w and marks the tensor used. `what` names the
 * expected shape in words. */
static int find_weight(const loader *ld, q35_weight *w, const char *name, int64_t cols, int64_t rows,
                       const char *what)
{
    const q35_gguf *g = ld->g;
    q35_error *err = ld->err;
    const q35_gguf_tensor *t = q35_gguf_find_tensor(g, name);
    if (!t)
        return q35_fail(err, "GGUF %s: tensor '%s' is missing", g->source, name);
    const uint32_t want_dims = rows ? 2 : 1;
    bool ok = t->ne[0] == cols && (rows == 0 || t->ne[1] == rows);
    for (uint32_t d = want_dims; d < Q35_GGUF_MAX_DIMS; d++)
        ok = ok && t->ne[d] == 1;
    if (!ok) {
        char got[96];
        int n = snprintf(got, sizeof got, "{%" PRId64, t->ne[0]);
        for (uint32_t d = 1; d < t->n_dims && n < (int)sizeof got; d++)
            n += snprintf(got + n, sizeof got - (size_t)n, ", %" PRId64, t->ne[d]);
        if (n < (int)sizeof got)
            snprintf(got + n, sizeof got - (size_t)n, "}");
        if (rows)
            return q35_fail(err, "GGUF %s: tensor '%s' has shape %s, expected {%" PRId64 ", %" PRId64 "} (%s)",
                            g->source, name, got, cols, rows, what);
        return q35_fail(err, "GGUF %s: tensor '%s' has shape %s, expected {%" PRId64 "} (%s)", g->source, name, got,
                        cols, what);
    }
    if (!q35_type_computable(t->type)) {
        char names[256]; /* the reader refused ids ggml does not define: the type has its name */
        return q35_fail(err, "GGUF %s: tensor '%s' has quant type %s, which this project does not support (supported: %s)",
                        g->source, name, q35_type_name(t->type), q35_type_computable_names(names, sizeof names));
    }
    w->name = t->name;
    w->type = (q35_type)t->type;
    w->cols = t->ne[0];
    w->rows = t->ne[1];
    w->data = t->data;
    w->nbytes = t->nbytes;
    ld->used[t - g->tensors] = true;
    return 0;
}

static int layer_weight(const loader *ld, q35_weight *w, int il, const char *suffix, int64_t cols, int64_t rows,
                        const char *what)
{
    char name[96];
    snprintf(name, sizeof name, "blk.%d.%s", il, suffix);
    return find_weight(ld, w, name, cols, rows, what);
}

/* Rows [r0, r0 + rows) of w, a view. */
static q35_weight rows_of(const q35_weight *w, int64_t r0, int64_t rows)
{
    const size_t rb = q35_row_bytes(w->type, w->cols);
    q35_weight v = *w;
    v.rows = rows;
    v.data = (const uint8_t *)w->data + (size_t)r0 * rb;
    v.nbytes = (uint64_t)rows * rb;
    return v;
}

/* A full-attention layer's q (with its gate), k and v: three tensors, or one
 * fused blk.N.attn_qkv.weight of their rows in that order (what
 * convert_hf_to_gguf.py --fuse-qkv writes; llama.cpp reads it as views), read
 * as views of it. A layer holding both forms is refused, naming both. */
static int load_qkv(const loader *ld, int il, q35_layer *l, int64_t H, int64_t qd, int64_t kvd)
{
    char fused[64], q[64];
    snprintf(fused, sizeof fused, "blk.%d.attn_qkv.weight", il);
    snprintf(q, sizeof q, "blk.%d.attn_q.weight", il);
    const bool has_fused = q35_gguf_find_tensor(ld->g, fused) != NULL;
    if (!has_fused)
        return layer_weight(ld, &l->attn_q, il, "attn_q.weight", H, 2 * qd, "H x 2*heads*head_dim") ||
               layer_weight(ld, &l->attn_k, il, "attn_k.weight", H, kvd, "H x kv_heads*head_dim") ||
               layer_weight(ld, &l->attn_v, il, "attn_v.weight", H, kvd, "H x kv_heads*head_dim")
                   ? -1
                   : 0;
    for (int k = 0; k < 3; k++) {
        char name[64];
        snprintf(name, sizeof name, "blk.%d.attn_%c.weight", il, "qkv"[k]);
        if (q35_gguf_find_tensor(ld->g, name))
            return q35_fail(ld->err, "GGUF %s: attention layer %d holds both a fused '%s' and '%s': one form a layer",
                            ld->g->source, il, fused, name);
    }
    q35_weight qkv;
    if (layer_weight(ld, &qkv, il, "attn_qkv.weight", H, 2 * qd + 2 * kvd,
                     "H x (2*heads*head_dim + 2*kv_heads*head_dim): [q | k | v] fused"))
        return -1;
    l->attn_q = rows_of(&qkv, 0, 2 * qd);
    l->attn_k = rows_of(&qkv, 2 * qd, kvd);
    l->attn_v = rows_of(&qkv, 2 * qd + kvd, kvd);
    return 0;
}

static int load_layer(const loader *ld, const q35_hparams *hp, int il, q35_layer *l)
{
    const int64_t H = hp->n_embd, ff = hp->n_ff;
    if (layer_weight(ld, &l->attn_norm, il, "attn_norm.weight", H, 0, "H") ||
        layer_weight(ld, &l->post_attention_norm, il, "post_attention_norm.weight", H, 0, "H") ||
        layer_weight(ld, &l->ffn_gate, il, "ffn_gate.weight", H, ff, "H x ffn") ||
        layer_weight(ld, &l->ffn_up, il, "ffn_up.weight", H, ff, "H x ffn") ||
        layer_weight(ld, &l->ffn_down, il, "ffn_down.weight", ff, H, "ffn x H"))
        return -1;
    if (l->kind == Q35_LAYER_DELTANET) {
        const int64_t vd = (int64_t)hp->ssm_hv * hp->ssm_dv, hv = hp->ssm_hv;
        return layer_weight(ld, &l->attn_qkv, il, "attn_qkv.weight", H, hp->conv_dim, "H x (2*Hk*dk + Hv*dv)") ||
               layer_weight(ld, &l->attn_gate, il, "attn_gate.weight", H, vd, "H x Hv*dv") ||
               layer_weight(ld, &l->ssm_alpha, il, "ssm_alpha.weight", H, hv, "H x Hv") ||
               layer_weight(ld, &l->ssm_beta, il, "ssm_beta.weight", H, hv, "H x Hv") ||
               layer_weight(ld, &l->ssm_conv1d, il, "ssm_conv1d.weight", hp->conv_kernel, hp->conv_dim,
                            "conv_kernel x conv channels") ||
               layer_weight(ld, &l->ssm_dt, il, "ssm_dt.bias", hv, 0, "Hv") ||
               layer_weight(ld, &l->ssm_a, il, "ssm_a", hv, 0, "Hv") ||
               layer_weight(ld, &l->ssm_norm, il, "ssm_norm.weight", hp->ssm_dv, 0, "dv") ||
               layer_weight(ld, &l->ssm_out, il, "ssm_out.weight", vd, H, "Hv*dv x H")
                   ? -1
                   : 0;
    }
    const int64_t qd = (int64_t)hp->n_head * hp->head_dim, kvd = (int64_t)hp->n_head_kv * hp->head_dim;
    if (load_qkv(ld, il, l, H, qd, kvd))
        return -1;
    return layer_weight(ld, &l->attn_q_norm, il, "attn_q_norm.weight", hp->head_dim, 0, "head_dim") ||
           layer_weight(ld, &l->attn_k_norm, il, "attn_k_norm.weight", hp->head_dim, 0, "head_dim") ||
           layer_weight(ld, &l->attn_output, il, "attn_output.weight", qd, H, "heads*head_dim x H")
               ? -1
               : 0;
}

/* Whether name is "blk.N.<anything>" with N an MTP block (not run, its
 * tensors left alone). */
static bool in_mtp_block(const char *name, const q35_hparams *hp)
{
    if (strncmp(name, "blk.", 4) != 0)
        return false;
    const char *p = name + 4;
    int64_t n = 0;
    int digits = 0;
    for (; *p >= '0' && *p <= '9' && digits < 9; p++, digits++)
        n = 10 * n + (*p - '0');
    return digits > 0 && *p == '.' && n >= hp->n_layer && n < hp->n_layer_file;
}

/* m->unknown: the tensors neither used nor in an MTP block. */
static int list_unknown(q35_model *m, const bool *used, q35_error *err)
{
    const q35_gguf *g = m->gguf;
    uint64_t n = 0;
    for (uint64_t i = 0; i < g->n_tensors; i++)
        n += !used[i] && !in_mtp_block(g->tensors[i].name, &m->hp);
    if (n == 0)
        return 0;
    m->unknown = malloc(n * sizeof *m->unknown);
    if (!m->unknown)
        return q35_fail(err, "GGUF %s: out of memory for the list of %" PRIu64 " unknown tensors", g->source, n);
    for (uint64_t i = 0; i < g->n_tensors; i++)
        if (!used[i] && !in_mtp_block(g->tensors[i].name, &m->hp))
            m->unknown[m->n_unknown++] = i;
    return 0;
}

int q35_model_load(q35_model **out, q35_gguf *g, q35_error *err)
{
    *out = NULL;
    q35_model *m = calloc(1, sizeof *m);
    bool *used = calloc(g->n_tensors ? g->n_tensors : 1, sizeof *used);
    if (!m || !used) {
        free(m);
        free(used);
        q35_gguf_close(g);
        return q35_fail(err, "loading a model: out of memory");
    }
    const loader ld = {.g = g, .used = used, .err = err};
    m->gguf = g;
    q35_hparams *hp = &m->hp;
    if (q35_hparams_read(hp, g, err))
        goto fail;
    const q35_gguf_tensor *embd = q35_gguf_find_tensor(g, "token_embd.weight");
    if (!embd) {
        q35_fail(err, "GGUF %s: tensor 'token_embd.weight' is missing", g->source);
        goto fail;
    }
    if (embd->ne[1] < 1 || embd->ne[1] > INT32_MAX) {
        q35_fail(err, "GGUF %s: token_embd.weight has %" PRId64 " rows", g->source, embd->ne[1]);
        goto fail;
    }
    hp->n_vocab = (int)embd->ne[1];
    uint32_t vocab_key;
    if (q35_gguf_find(g, KEY("vocab_size"))) {
        if (q35_gguf_get_u32(g, KEY("vocab_size"), &vocab_key, err))
            goto fail;
        if ((int64_t)vocab_key != hp->n_vocab) {
            q35_fail(err, "GGUF %s: qwen35.vocab_size %u differs from token_embd.weight's %d rows", g->source,
                     vocab_key, hp->n_vocab);
            goto fail;
        }
    }
    if (find_weight(&ld, &m->token_embd, "token_embd.weight", hp->n_embd, hp->n_vocab, "H x vocab") ||
        find_weight(&ld, &m->output_norm, "output_norm.weight", hp->n_embd, 0, "H"))
        goto fail;
    if (q35_gguf_find_tensor(g, "output.weight")) {
        if (find_weight(&ld, &m->output, "output.weight", hp->n_embd, hp->n_vocab, "H x vocab"))
            goto fail;
    } else {
        m->output = m->token_embd;
        m->tied = true;
    }
    int slot[2] = {0, 0};
    for (int il = 0; il < hp->n_layer; il++) {
        q35_layer *l = &m->layers[il];
        l->kind = hp->is_attn[il] ? Q35_LAYER_ATTENTION : Q35_LAYER_DELTANET;
        l->slot = slot[l->kind]++;
        if (load_layer(&ld, hp, il, l))
            goto fail;
    }
    if (list_unknown(m, used, err))
        goto fail;
    if (hp->n_nextn == 1)
        snprintf(m->note, sizeof m->note,
                 "MTP block %d (nextn_predict_layers = 1) counted in block_count %d: not run, skipped", hp->n_layer,
                 hp->n_layer_file);
    else if (hp->n_nextn > 1)
        snprintf(m->note, sizeof m->note,
                 "MTP blocks %d..%d (nextn_predict_layers = %d) counted in block_count %d: not run, skipped",
                 hp->n_layer, hp->n_layer_file - 1, hp->n_nextn, hp->n_layer_file);
    free(used);
    *out = m;
    return 0;
fail:
    free(used);
    q35_model_free(m);
    return -1;
}

int q35_model_open(q35_model **out, const char *path, q35_error *err)
{
    *out = NULL;
    q35_gguf *g;
    if (q35_gguf_open(&g, path, err))
        return -1;
    return q35_model_load(out, g, err);
}

void q35_model_free(q35_model *m)
{
    if (!m)
        return;
    q35_gguf_close(m->gguf);
    free(m->unknown);
    free(m);
}
