#include "gguf_edit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *cstr(const char *p, uint64_t len)
{
    char *s = malloc(len + 1);
    if (s) {
        memcpy(s, p, len);
        s[len] = '\0';
    }
    return s;
}

static int copy_kv(q35_gguf_writer *w, const q35_gguf_kv *kv, q35_error *err)
{
    if (kv->type == Q35_GGUF_STRING) {
        uint64_t len;
        memcpy(&len, kv->data, 8);
        char *s = cstr((const char *)kv->data + 8, len);
        const int rc = s ? q35_gguf_writer_set_str(w, kv->key, s, err) : q35_fail(err, "out of memory");
        free(s);
        return rc;
    }
    if (kv->type != Q35_GGUF_ARRAY)
        return q35_gguf_writer_set(w, kv->key, kv->type, kv->data, err);
    if (kv->elem_type != Q35_GGUF_STRING)
        return q35_gguf_writer_set_array(w, kv->key, kv->elem_type, kv->data, kv->count, err);
    char **strs = calloc(kv->count ? kv->count : 1, sizeof *strs);
    int rc = strs ? 0 : q35_fail(err, "out of memory");
    for (uint64_t i = 0; i < kv->count && rc == 0; i++)
        if (!(strs[i] = cstr(kv->strs[i].data, kv->strs[i].len)))
            rc = q35_fail(err, "out of memory");
    if (rc == 0)
        rc = q35_gguf_writer_set_array(w, kv->key, Q35_GGUF_STRING, (const char *const *)strs, kv->count, err);
    for (uint64_t i = 0; strs && i < kv->count; i++)
        free(strs[i]);
    free(strs);
    return rc;
}

static int set_new(q35_gguf_writer *w, const q35_gguf_edit *e, q35_error *err)
{
    if (e->set_type == Q35_GGUF_ARRAY)
        return q35_gguf_writer_set_array(w, e->set_key, e->set_elem, e->set_value, e->set_count, err);
    return q35_gguf_writer_set(w, e->set_key, e->set_type, e->set_value, err);
}

/* With e->fuse_qkv: whether t is blk.N.attn_q.weight with attn_k and attn_v of its type beside it (then
 * their tensors into k, v); or is such a layer's attn_k or attn_v (then *part is set). */
static bool fused_q(const q35_gguf *g, const q35_gguf_tensor *t, const q35_gguf_tensor **k, const q35_gguf_tensor **v,
                    bool *part)
{
    int il, n = 0;
    char rest[32], name[96];
    *part = false;
    if (sscanf(t->name, "blk.%d.attn_%31[a-z].weight%n", &il, rest, &n) != 2 || t->name[n] != '\0')
        return false;
    snprintf(name, sizeof name, "blk.%d.attn_q.weight", il);
    const q35_gguf_tensor *q = q35_gguf_find_tensor(g, name);
    snprintf(name, sizeof name, "blk.%d.attn_k.weight", il);
    *k = q35_gguf_find_tensor(g, name);
    snprintf(name, sizeof name, "blk.%d.attn_v.weight", il);
    *v = q35_gguf_find_tensor(g, name);
    if (!q || !*k || !*v || (*k)->type != q->type || (*v)->type != q->type)
        return false;
    *part = strcmp(rest, "k") == 0 || strcmp(rest, "v") == 0;
    return strcmp(rest, "q") == 0;
}

int q35_gguf_rewrite(const q35_gguf *g, const q35_gguf_edit *e, void **image, uint64_t *size, q35_error *err)
{
    q35_gguf_writer *w = q35_gguf_writer_new();
    int64_t *index = calloc(g->n_tensors ? g->n_tensors : 1, sizeof *index);
    int64_t *fused = malloc((g->n_tensors ? g->n_tensors : 1) * sizeof *fused);
    const q35_gguf_tensor **fused_kv = calloc(2 * (g->n_tensors ? g->n_tensors : 1), sizeof *fused_kv);
    int rc = w && index && fused && fused_kv ? 0 : q35_fail(err, "out of memory");
    for (uint64_t i = 0; fused && i < g->n_tensors; i++)
        fused[i] = -1;
    if (rc == 0 && g->alignment != Q35_GGUF_DEFAULT_ALIGNMENT)
        rc = q35_gguf_writer_set_alignment(w, g->alignment, err);
    bool set_done = false;
    for (uint64_t i = 0; i < g->n_kv && rc == 0; i++) {
        const q35_gguf_kv *kv = &g->kv[i];
        if (strcmp(kv->key, "general.alignment") == 0 || (e->drop_key && strcmp(kv->key, e->drop_key) == 0))
            continue;
        if (e->set_key && strcmp(kv->key, e->set_key) == 0) {
            rc = set_new(w, e, err);
            set_done = true;
        } else {
            rc = copy_kv(w, kv, err);
        }
    }
    if (rc == 0 && e->set_key && !set_done)
        rc = set_new(w, e, err);
    for (uint64_t i = 0; i < g->n_tensors && rc == 0; i++) {
        const q35_gguf_tensor *t = &g->tensors[i];
        index[i] = -1;
        if (e->drop_tensor && strcmp(t->name, e->drop_tensor) == 0)
            continue;
        uint32_t type = t->type, n_dims = t->n_dims;
        const int64_t *ne = t->ne;
        if (e->edit_tensor && strcmp(t->name, e->edit_tensor) == 0) {
            type = e->new_type;
            if (e->new_dims) {
                n_dims = e->new_dims;
                ne = e->new_ne;
            }
        }
        const q35_gguf_tensor *k = NULL, *v = NULL;
        bool part = false;
        if (e->fuse_qkv && fused_q(g, t, &k, &v, &part)) {
            char name[96];
            int il = 0;
            sscanf(t->name, "blk.%d.", &il);
            snprintf(name, sizeof name, "blk.%d.attn_qkv.weight", il);
            const int64_t fne[2] = {t->ne[0], t->ne[1] + k->ne[1] + v->ne[1]};
            fused[i] = q35_gguf_writer_add_tensor(w, name, type, 2, fne, err);
            fused_kv[2 * i] = k, fused_kv[2 * i + 1] = v;
            if (fused[i] < 0)
                rc = -1;
        }
        if (part && !e->keep_qkv)
            continue;
        if (fused[i] >= 0 && !e->keep_qkv)
            continue;
        const bool rename = e->rename_tensor && strcmp(t->name, e->rename_tensor) == 0;
        index[i] = q35_gguf_writer_add_tensor(w, rename ? e->new_name : t->name, type, n_dims, ne, err);
        if (index[i] < 0)
            rc = -1;
    }
    uint8_t *img = NULL;
    if (rc == 0) {
        *size = q35_gguf_writer_file_size(w);
        img = calloc(1, *size);
        rc = img ? q35_gguf_writer_write_header(w, img, *size, err) : q35_fail(err, "out of memory");
    }
    for (uint64_t i = 0; i < g->n_tensors && rc == 0; i++) {
        if (index[i] < 0)
            continue;
        const uint64_t nb = q35_gguf_writer_tensor_bytes(w, index[i]);
        if (nb == g->tensors[i].nbytes)
            memcpy(img + q35_gguf_writer_tensor_offset(w, index[i]), g->tensors[i].data, nb);
    }
    for (uint64_t i = 0; i < g->n_tensors && rc == 0; i++) { /* [q | k | v], their rows in that order */
        if (fused[i] < 0)
            continue;
        uint8_t *at = img + q35_gguf_writer_tensor_offset(w, fused[i]);
        const q35_gguf_tensor *parts[3] = {&g->tensors[i], fused_kv[2 * i], fused_kv[2 * i + 1]};
        for (int p = 0; p < 3; p++) {
            memcpy(at, parts[p]->data, parts[p]->nbytes);
            at += parts[p]->nbytes;
        }
    }
    if (rc == 0)
        *image = img;
    else
        free(img);
    free(index);
    free(fused);
    free(fused_kv);
    q35_gguf_writer_free(w);
    return rc;
}
