#include "gguf_edit.h"

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

int q35_gguf_rewrite(const q35_gguf *g, const q35_gguf_edit *e, void **image, uint64_t *size, q35_error *err)
{
    q35_gguf_writer *w = q35_gguf_writer_new();
    int64_t *index = calloc(g->n_tensors ? g->n_tensors : 1, sizeof *index);
    int rc = w && index ? 0 : q35_fail(err, "out of memory");
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
    if (rc == 0)
        *image = img;
    else
        free(img);
    free(index);
    q35_gguf_writer_free(w);
    return rc;
}
