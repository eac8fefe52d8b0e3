/* libFuzzer target for the GGUF reader and the qwen35 loader (what `q35 info`
 * runs): q35_gguf_open_memory on a malloc'd copy of exactly the input (so ASan
 * sees any read past it). On success it touches every value
 * (q35_gguf_format_value, every array element and string) and every tensor's
 * data bytes, and traps when a promise of the reader is broken; on failure it
 * traps unless the reader returned -1, cleared *out and left a message. A file
 * the reader accepts then goes through q35_model_load: on success every weight
 * must lie inside the image with the bytes its shape and type give, the
 * hyperparameters must be consistent and finite, and the unknown tensors real
 * ones; on failure there must be a message and no model. Every name is escaped
 * as `q35 info` prints it. Built with clang by parity/fuzz.cmake; ctest fuzz_gguf
 * runs it. */
#include "core/escape.h"
#include "core/gguf.h"
#include "core/quant.h"
#include "model/qwen35.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static volatile uint8_t g_sink; /* keeps the reads of the touched bytes */

/* Reads every byte of n at p. */
static void touch(const void *p, uint64_t n)
{
    const uint8_t *b = p;
    uint8_t x = 0;
    for (uint64_t i = 0; i < n; i++)
        x ^= b[i];
    g_sink ^= x;
}

/* Whether [p, p + n) lies inside the image of g. */
static int inside(const q35_gguf *g, const void *p, uint64_t n)
{
    const uint8_t *b = p;
    return b >= g->base && (uint64_t)(b - g->base) <= g->size && n <= g->size - (uint64_t)(b - g->base);
}

static void check_kv(const q35_gguf *g, const q35_gguf_kv *kv)
{
    char buf[512];
    q35_gguf_format_value(kv, buf, sizeof buf);
    for (const char *p = buf; *p; p++)
        if ((unsigned char)*p < 0x20 || *p == 0x7f) /* strings are printed escaped */
            __builtin_trap();
    if (q35_gguf_find(g, kv->key) != kv) /* keys are unique */
        __builtin_trap();
    q35_error err = {{0}};
    uint32_t u;
    float f;
    q35_gguf_str s;
    if (q35_gguf_get_u32(g, kv->key, &u, &err) == 0)
        g_sink ^= (uint8_t)u;
    if (q35_gguf_get_f32(g, kv->key, &f, &err) == 0)
        touch(&f, sizeof f);
    if (q35_gguf_get_str(g, kv->key, &s, &err) == 0) {
        if (!inside(g, s.data, s.len))
            __builtin_trap();
        touch(s.data, s.len);
    }
    if (kv->type != Q35_GGUF_ARRAY)
        return;
    if (kv->elem_type == Q35_GGUF_STRING) {
        for (uint64_t i = 0; i < kv->count; i++) {
            if (!inside(g, kv->strs[i].data, kv->strs[i].len))
                __builtin_trap();
            touch(kv->strs[i].data, kv->strs[i].len);
        }
        return;
    }
    const uint64_t bytes = kv->count * q35_gguf_vtype_size(kv->elem_type);
    if (!inside(g, kv->data, bytes))
        __builtin_trap();
    touch(kv->data, bytes);
    if (q35_gguf_vtype_is_int(kv->elem_type))
        for (uint64_t i = 0; i < kv->count; i++)
            g_sink ^= (uint8_t)q35_gguf_array_int(kv, i);
}

/* The bytes of t by its shape and type, computed without wrapping; false when
 * they do not fit a u64 (which the reader must have refused). */
static bool tensor_bytes(const q35_gguf_tensor *t, uint64_t *bytes)
{
    const q35_type_info *ti = q35_type_get(t->type);
    if (!ti || t->ne[0] < 1 || t->ne[0] % ti->block_elems != 0)
        return false;
    uint64_t n = (uint64_t)(t->ne[0] / ti->block_elems);
    if (__builtin_mul_overflow(n, (uint64_t)ti->block_bytes, &n))
        return false;
    for (uint32_t d = 1; d < Q35_GGUF_MAX_DIMS; d++)
        if (t->ne[d] < 1 || __builtin_mul_overflow(n, (uint64_t)t->ne[d], &n))
            return false;
    *bytes = n;
    return true;
}

static void check_tensor(const q35_gguf *g, const q35_gguf_tensor *t)
{
    /* The size is the one its shape and type give; the data is inside the image,
     * aligned, and found under its name. */
    uint64_t bytes;
    if (t->n_dims < 1 || t->n_dims > Q35_GGUF_MAX_DIMS || !tensor_bytes(t, &bytes) || t->nbytes != bytes ||
        t->offset % g->alignment != 0 || t->data != g->base + g->data_offset + t->offset ||
        !inside(g, t->data, t->nbytes) || q35_gguf_find_tensor(g, t->name) != t)
        __builtin_trap();
    touch(t->data, t->nbytes);
}

/* A weight of a loaded model: inside the image, its bytes what rows x cols of
 * its type take, and one of the file's tensors. */
static void check_weight(const q35_gguf *g, const q35_weight *w)
{
    const uint64_t row = q35_row_bytes(w->type, w->cols);
    if (w->rows < 1 || w->cols < 1 || row == 0 || w->nbytes != row * (uint64_t)w->rows ||
        !inside(g, w->data, w->nbytes) || q35_gguf_find_tensor(g, w->name) == NULL)
        __builtin_trap();
    touch(w->data, w->nbytes < 64 ? w->nbytes : 64);
}

static void check_layer(const q35_gguf *g, const q35_layer *l)
{
    const q35_weight *common[] = {&l->attn_norm, &l->post_attention_norm, &l->ffn_gate, &l->ffn_up, &l->ffn_down};
    const q35_weight *delta[] = {&l->attn_qkv, &l->attn_gate, &l->ssm_alpha, &l->ssm_beta, &l->ssm_conv1d,
                                 &l->ssm_dt, &l->ssm_a, &l->ssm_norm, &l->ssm_out};
    const q35_weight *attn[] = {&l->attn_q, &l->attn_k, &l->attn_v, &l->attn_q_norm, &l->attn_k_norm, &l->attn_output};
    for (size_t i = 0; i < sizeof common / sizeof common[0]; i++)
        check_weight(g, common[i]);
    const bool is_delta = l->kind == Q35_LAYER_DELTANET;
    const q35_weight *const *own = is_delta ? delta : attn;
    const size_t n_own = is_delta ? sizeof delta / sizeof delta[0] : sizeof attn / sizeof attn[0];
    for (size_t i = 0; i < n_own; i++)
        check_weight(g, own[i]);
}

/* The loader over g (which it takes), as q35 info runs it. */
static void check_model(q35_gguf *g)
{
    q35_error err = {{0}};
    q35_model *m = (q35_model *)&err; /* not NULL: the loader must clear it */
    if (q35_model_load(&m, g, &err) != 0) {
        if (m != NULL || err.msg[0] == '\0')
            __builtin_trap();
        return;
    }
    const q35_hparams *hp = &m->hp;
    if (hp->n_layer < 1 || hp->n_layer > Q35_MAX_LAYERS || hp->n_layer > hp->n_layer_file ||
        hp->n_attn + hp->n_delta != hp->n_layer || hp->n_head % hp->n_head_kv != 0 || hp->ssm_hv % hp->ssm_hk != 0 ||
        !(hp->eps > 0.0f && hp->eps < 1.0f) || !(hp->rope_base > 1.0f) || !isfinite(hp->rope_base) ||
        hp->n_vocab != m->token_embd.rows || m->output.rows != hp->n_vocab || m->output.cols != hp->n_embd)
        __builtin_trap();
    check_weight(g, &m->token_embd);
    check_weight(g, &m->output_norm);
    check_weight(g, &m->output);
    for (int i = 0; i < hp->n_layer; i++)
        check_layer(g, &m->layers[i]);
    for (uint64_t i = 0; i < m->n_unknown; i++)
        if (m->unknown[i] >= g->n_tensors || (i > 0 && m->unknown[i] <= m->unknown[i - 1]))
            __builtin_trap();
    char name[4 * Q35_GGUF_MAX_NAME + 4];
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        q35_escape_str(name, sizeof name, g->tensors[i].name);
        for (const char *p = name; *p; p++)
            if ((unsigned char)*p < 0x20 || *p == 0x7f) /* nothing a terminal acts on */
                __builtin_trap();
    }
    q35_model_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size);
    if (!copy && size)
        return 0;
    if (size)
        memcpy(copy, data, size);
    q35_error err = {{0}};
    q35_gguf *g = (q35_gguf *)&err; /* not NULL: the reader must clear it */
    if (q35_gguf_open_memory(&g, copy, size, true, &err) != 0) {
        if (g != NULL || err.msg[0] == '\0')
            __builtin_trap();
        free(copy); /* not taken on failure */
        return 0;
    }
    for (uint64_t i = 0; i < g->n_kv; i++)
        check_kv(g, &g->kv[i]);
    for (uint64_t i = 0; i < g->n_tensors; i++)
        check_tensor(g, &g->tensors[i]);
    check_model(g); /* closes g, which frees the copy */
    return 0;
}
