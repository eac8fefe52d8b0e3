/* The GGUF writer: metadata serialised as it is added, tensor infos laid out at
 * the alignment, the header written by q35_gguf_writer_write_header and the data
 * by the caller (or by q35_gguf_writer_write_file). */
#define _POSIX_C_SOURCE 200809L
#include "core/gguf.h"
#include "core/outfile.h"
#include "core/quant.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct wtensor {
    char *name;
    uint32_t type, n_dims;
    int64_t ne[Q35_GGUF_MAX_DIMS];
    uint64_t offset; /* from the start of the data section */
    uint64_t nbytes;
};

struct q35_gguf_writer {
    uint8_t *kv;         /* serialised pairs */
    uint64_t kv_len, kv_cap;
    uint64_t n_kv;
    char **keys;         /* for the duplicate check */
    struct wtensor *t;
    uint64_t n_t, cap_t;
    uint64_t data_end;   /* end of the last tensor in the data section */
    uint32_t alignment;
};

q35_gguf_writer *q35_gguf_writer_new(void)
{
    q35_gguf_writer *w = calloc(1, sizeof *w);
    if (w)
        w->alignment = Q35_GGUF_DEFAULT_ALIGNMENT;
    return w;
}

void q35_gguf_writer_free(q35_gguf_writer *w)
{
    if (!w)
        return;
    for (uint64_t i = 0; i < w->n_kv; i++)
        free(w->keys[i]);
    free(w->keys);
    for (uint64_t i = 0; i < w->n_t; i++)
        free(w->t[i].name);
    free(w->t);
    free(w->kv);
    free(w);
}

static int put(q35_gguf_writer *w, const void *p, uint64_t n, q35_error *err)
{
    if (n == 0) /* an empty array may come as NULL: memcpy must not see it */
        return 0;
    if (w->kv_len + n > w->kv_cap) {
        uint64_t cap = w->kv_cap ? w->kv_cap : 4096;
        while (cap < w->kv_len + n)
            cap *= 2;
        uint8_t *kv = realloc(w->kv, cap);
        if (!kv)
            return q35_fail(err, "GGUF writer: out of memory for %" PRIu64 " bytes of metadata", cap);
        w->kv = kv;
        w->kv_cap = cap;
    }
    memcpy(w->kv + w->kv_len, p, n);
    w->kv_len += n;
    return 0;
}

static int put_u32(q35_gguf_writer *w, uint32_t v, q35_error *err) { return put(w, &v, 4, err); }
static int put_u64(q35_gguf_writer *w, uint64_t v, q35_error *err) { return put(w, &v, 8, err); }

static int put_str(q35_gguf_writer *w, const char *s, q35_error *err)
{
    const uint64_t len = strlen(s);
    return put_u64(w, len, err) || put(w, s, len, err);
}

/* Starts a pair: checks the key and writes it with its value type. */
static int begin_kv(q35_gguf_writer *w, const char *key, q35_gguf_vtype type, q35_error *err)
{
    if (!key[0] || strlen(key) > Q35_GGUF_MAX_KEY)
        return q35_fail(err, "GGUF writer: key '%.64s' is empty or longer than %d bytes", key, Q35_GGUF_MAX_KEY);
    for (uint64_t i = 0; i < w->n_kv; i++)
        if (strcmp(w->keys[i], key) == 0)
            return q35_fail(err, "GGUF writer: duplicate key '%s'", key);
    char **keys = realloc(w->keys, (w->n_kv + 1) * sizeof *keys);
    if (!keys)
        return q35_fail(err, "GGUF writer: out of memory");
    w->keys = keys;
    w->keys[w->n_kv] = strdup(key);
    if (!w->keys[w->n_kv])
        return q35_fail(err, "GGUF writer: out of memory");
    w->n_kv++;
    return put_str(w, key, err) || put_u32(w, (uint32_t)type, err);
}

int q35_gguf_writer_set(q35_gguf_writer *w, const char *key, q35_gguf_vtype type, const void *value,
                        q35_error *err)
{
    if (type == Q35_GGUF_ARRAY)
        return q35_fail(err, "GGUF writer: key '%s': use q35_gguf_writer_set_array for arrays", key);
    if (type >= Q35_GGUF_VTYPE_COUNT)
        return q35_fail(err, "GGUF writer: key '%s': unknown value type %u", key, (unsigned)type);
    if (begin_kv(w, key, type, err))
        return -1;
    if (type == Q35_GGUF_STRING)
        return put_str(w, (const char *)value, err);
    return put(w, value, q35_gguf_vtype_size(type), err);
}

int q35_gguf_writer_set_u32(q35_gguf_writer *w, const char *key, uint32_t v, q35_error *err)
{
    return q35_gguf_writer_set(w, key, Q35_GGUF_U32, &v, err);
}

int q35_gguf_writer_set_f32(q35_gguf_writer *w, const char *key, float v, q35_error *err)
{
    return q35_gguf_writer_set(w, key, Q35_GGUF_F32, &v, err);
}

int q35_gguf_writer_set_str(q35_gguf_writer *w, const char *key, const char *v, q35_error *err)
{
    return q35_gguf_writer_set(w, key, Q35_GGUF_STRING, v, err);
}

int q35_gguf_writer_set_array(q35_gguf_writer *w, const char *key, q35_gguf_vtype elem_type, const void *data,
                              uint64_t count, q35_error *err)
{
    if (elem_type == Q35_GGUF_ARRAY || elem_type >= Q35_GGUF_VTYPE_COUNT)
        return q35_fail(err, "GGUF writer: key '%s': arrays of %s are not supported", key,
                        q35_gguf_vtype_name(elem_type));
    if (begin_kv(w, key, Q35_GGUF_ARRAY, err) || put_u32(w, (uint32_t)elem_type, err) || put_u64(w, count, err))
        return -1;
    if (elem_type != Q35_GGUF_STRING)
        return put(w, data, count * q35_gguf_vtype_size(elem_type), err);
    const char *const *strs = data;
    for (uint64_t i = 0; i < count; i++)
        if (put_str(w, strs[i], err))
            return -1;
    return 0;
}

int q35_gguf_writer_copy(q35_gguf_writer *w, const q35_gguf_kv *kv, q35_error *err)
{
    if (kv->type != Q35_GGUF_ARRAY) {
        if (kv->type == Q35_GGUF_STRING) {
            uint64_t len;
            memcpy(&len, kv->data, 8);
            return begin_kv(w, kv->key, kv->type, err) || put(w, kv->data, 8 + len, err);
        }
        return begin_kv(w, kv->key, kv->type, err) || put(w, kv->data, q35_gguf_vtype_size(kv->type), err);
    }
    if (begin_kv(w, kv->key, Q35_GGUF_ARRAY, err) || put_u32(w, (uint32_t)kv->elem_type, err) ||
        put_u64(w, kv->count, err))
        return -1;
    if (kv->elem_type != Q35_GGUF_STRING)
        return put(w, kv->data, kv->count * q35_gguf_vtype_size(kv->elem_type), err);
    for (uint64_t i = 0; i < kv->count; i++) /* each element's length and bytes, as they were */
        if (put_u64(w, kv->strs[i].len, err) || put(w, kv->strs[i].data, kv->strs[i].len, err))
            return -1;
    return 0;
}

int q35_gguf_writer_set_alignment(q35_gguf_writer *w, uint32_t alignment, q35_error *err)
{
    if (alignment == 0 || (alignment & (alignment - 1)) != 0)
        return q35_fail(err, "GGUF writer: alignment %u is not a power of two", alignment);
    if (w->n_t > 0)
        return q35_fail(err, "GGUF writer: set the alignment before adding tensors");
    w->alignment = alignment;
    if (alignment == Q35_GGUF_DEFAULT_ALIGNMENT)
        return 0;
    return q35_gguf_writer_set_u32(w, "general.alignment", alignment, err);
}

int64_t q35_gguf_writer_add_tensor(q35_gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                                   const int64_t *ne, q35_error *err)
{
    if (!name[0] || strlen(name) > Q35_GGUF_MAX_NAME)
        return q35_fail(err, "GGUF writer: tensor name '%.64s' is empty or longer than %d bytes", name,
                        Q35_GGUF_MAX_NAME);
    for (uint64_t i = 0; i < w->n_t; i++)
        if (strcmp(w->t[i].name, name) == 0)
            return q35_fail(err, "GGUF writer: duplicate tensor name '%s'", name);
    if (n_dims < 1 || n_dims > Q35_GGUF_MAX_DIMS)
        return q35_fail(err, "GGUF writer: tensor '%s': n_dims %u outside 1..%d", name, n_dims, Q35_GGUF_MAX_DIMS);
    const q35_type_info *ti = q35_type_get(type);
    if (!ti)
        return q35_fail(err, "GGUF writer: tensor '%s': type %u is no ggml type", name, type);
    uint64_t elems = 1; /* the reader's limits: elements fit an int64, bytes (and the data end) a u64 */
    for (uint32_t d = 0; d < n_dims; d++) {
        if (ne[d] < 1)
            return q35_fail(err, "GGUF writer: tensor '%s': dimension %u = %" PRId64 " is not positive", name, d, ne[d]);
        if (elems > (uint64_t)INT64_MAX / (uint64_t)ne[d])
            return q35_fail(err, "GGUF writer: tensor '%s': dimension %u = %" PRId64 " makes the element count overflow",
                            name, d, ne[d]);
        elems *= (uint64_t)ne[d];
    }
    if (ne[0] % ti->block_elems != 0)
        return q35_fail(err, "GGUF writer: tensor '%s': row of %" PRId64 " is not a whole number of %s blocks (%d)",
                        name, ne[0], ti->name, ti->block_elems);
    const uint64_t blocks = (uint64_t)(ne[0] / ti->block_elems), rows = elems / (uint64_t)ne[0];
    const uint64_t a = w->alignment;
    const uint64_t offset = (w->data_end + a - 1) / a * a;
    if (blocks > UINT64_MAX / (uint64_t)ti->block_bytes / rows ||
        blocks * (uint64_t)ti->block_bytes * rows > UINT64_MAX - offset)
        return q35_fail(err, "GGUF writer: tensor '%s': byte size of %" PRIu64 " %s elements overflows a u64", name,
                        elems, ti->name);
    if (w->n_t == w->cap_t) {
        const uint64_t cap = w->cap_t ? 2 * w->cap_t : 64;
        struct wtensor *t = realloc(w->t, cap * sizeof *t);
        if (!t)
            return q35_fail(err, "GGUF writer: out of memory");
        w->t = t;
        w->cap_t = cap;
    }
    struct wtensor *t = &w->t[w->n_t];
    memset(t, 0, sizeof *t);
    t->name = strdup(name);
    if (!t->name)
        return q35_fail(err, "GGUF writer: out of memory");
    t->type = type;
    t->n_dims = n_dims;
    for (int d = 0; d < Q35_GGUF_MAX_DIMS; d++)
        t->ne[d] = (uint32_t)d < n_dims ? ne[d] : 1;
    t->offset = offset;
    t->nbytes = blocks * (uint64_t)ti->block_bytes * rows;
    w->data_end = t->offset + t->nbytes;
    return (int64_t)w->n_t++;
}

static uint64_t header_bytes(const q35_gguf_writer *w)
{
    uint64_t n = 4 + 4 + 8 + 8 + w->kv_len;
    for (uint64_t i = 0; i < w->n_t; i++)
        n += 8 + strlen(w->t[i].name) + 4 + 8ull * w->t[i].n_dims + 4 + 8;
    return n;
}

uint64_t q35_gguf_writer_data_offset(const q35_gguf_writer *w)
{
    const uint64_t a = w->alignment;
    return (header_bytes(w) + a - 1) / a * a;
}

uint64_t q35_gguf_writer_tensor_offset(const q35_gguf_writer *w, int64_t index)
{
    return q35_gguf_writer_data_offset(w) + w->t[index].offset;
}

uint64_t q35_gguf_writer_tensor_bytes(const q35_gguf_writer *w, int64_t index)
{
    return w->t[index].nbytes;
}

uint64_t q35_gguf_writer_file_size(const q35_gguf_writer *w)
{
    return q35_gguf_writer_data_offset(w) + w->data_end;
}

int q35_gguf_writer_write_header(const q35_gguf_writer *w, uint8_t *dst, uint64_t cap, q35_error *err)
{
    const uint64_t total = q35_gguf_writer_data_offset(w);
    if (cap < total)
        return q35_fail(err, "GGUF writer: header needs %" PRIu64 " bytes, buffer has %" PRIu64, total, cap);
    uint8_t *p = dst;
    const uint32_t magic = Q35_GGUF_MAGIC, version = 3;
    memcpy(p, &magic, 4), p += 4;
    memcpy(p, &version, 4), p += 4;
    memcpy(p, &w->n_t, 8), p += 8;
    memcpy(p, &w->n_kv, 8), p += 8;
    if (w->kv_len > 0) /* w->kv is NULL while no pair was added */
        memcpy(p, w->kv, w->kv_len), p += w->kv_len;
    for (uint64_t i = 0; i < w->n_t; i++) {
        const struct wtensor *t = &w->t[i];
        const uint64_t len = strlen(t->name);
        memcpy(p, &len, 8), p += 8;
        memcpy(p, t->name, len), p += len;
        memcpy(p, &t->n_dims, 4), p += 4;
        for (uint32_t d = 0; d < t->n_dims; d++) {
            const uint64_t ne = (uint64_t)t->ne[d];
            memcpy(p, &ne, 8), p += 8;
        }
        memcpy(p, &t->type, 4), p += 4;
        memcpy(p, &t->offset, 8), p += 8;
    }
    memset(p, 0, (size_t)(dst + total - p));
    return 0;
}

int q35_gguf_writer_write_file(const q35_gguf_writer *w, const char *path, const void *const *data, q35_error *err)
{
    const uint64_t hdr = q35_gguf_writer_data_offset(w);
    uint8_t *buf = malloc(hdr);
    if (!buf)
        return q35_fail(err, "GGUF writer: out of memory for a %" PRIu64 "-byte header", hdr);
    q35_outfile f;
    if (q35_gguf_writer_write_header(w, buf, hdr, err) || q35_outfile_open(&f, path, err)) {
        free(buf);
        return -1;
    }
    int rc = q35_outfile_write(&f, buf, hdr, err);
    free(buf);
    static const uint8_t zeros[64];
    uint64_t at = 0;
    for (uint64_t i = 0; i < w->n_t && rc == 0; i++) {
        for (uint64_t pad = w->t[i].offset - at; pad > 0 && rc == 0;) {
            const size_t n = pad > sizeof zeros ? sizeof zeros : (size_t)pad;
            rc = q35_outfile_write(&f, zeros, n, err);
            pad -= n;
        }
        if (rc == 0)
            rc = q35_outfile_write(&f, data[i], w->t[i].nbytes, err);
        at = w->t[i].offset + w->t[i].nbytes;
    }
    if (rc == 0)
        rc = q35_outfile_commit(&f, err);
    q35_outfile_discard(&f);
    return rc == 0 ? 0 : q35_fail_context(err, "GGUF writer");
}
