/* The GGUF reader: every read is bounds-checked against the image, every count
 * against the bytes that could hold it, and the tensor table against the data
 * section (alignment, extent, overlap, duplicates). */
#define _POSIX_C_SOURCE 200809L
#include "core/escape.h"
#include "core/gguf.h"
#include "core/outfile.h"
#include "core/quant.h"

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the GGUF reader assumes a little-endian host"
#endif

#define MIN_KV_BYTES 14     /* key length (8) + one key byte + type (4) + one value byte */
#define MIN_TENSOR_BYTES 33 /* name length (8) + one byte + n_dims (4) + one dim (8) + type (4) + offset (8) */

struct cursor {
    const uint8_t *base;
    uint64_t size;
    uint64_t pos;
    const char *src;
    q35_error *err;
};

static int need(struct cursor *c, uint64_t n, const char *what)
{
    if (n > c->size - c->pos)
        return q35_fail(c->err,
                        "GGUF %s: %s at offset %" PRIu64 " needs %" PRIu64 " bytes but the file ends %" PRIu64
                        " bytes later (truncated)",
                        c->src, what, c->pos, n, c->size - c->pos);
    return 0;
}

static int read_u32(struct cursor *c, uint32_t *v, const char *what)
{
    if (need(c, 4, what))
        return -1;
    memcpy(v, c->base + c->pos, 4);
    c->pos += 4;
    return 0;
}

static int read_u64(struct cursor *c, uint64_t *v, const char *what)
{
    if (need(c, 8, what))
        return -1;
    memcpy(v, c->base + c->pos, 8);
    c->pos += 8;
    return 0;
}

static int read_str(struct cursor *c, q35_gguf_str *s, const char *what, uint64_t max_len)
{
    const uint64_t at = c->pos;
    uint64_t len;
    if (read_u64(c, &len, what))
        return -1;
    if (len > max_len)
        return q35_fail(c->err, "GGUF %s: %s at offset %" PRIu64 " has length %" PRIu64 ", over the limit of %" PRIu64,
                        c->src, what, at, len, max_len);
    if (need(c, len, what))
        return -1;
    s->len = len;
    s->data = (const char *)c->base + c->pos;
    c->pos += len;
    return 0;
}

static char *dup_str(const q35_gguf_str *s)
{
    char *p = malloc(s->len + 1);
    if (p) {
        memcpy(p, s->data, s->len);
        p[s->len] = '\0';
    }
    return p;
}

size_t q35_gguf_vtype_size(uint32_t t)
{
    switch (t) {
    case Q35_GGUF_U8: case Q35_GGUF_I8: case Q35_GGUF_BOOL: return 1;
    case Q35_GGUF_U16: case Q35_GGUF_I16: return 2;
    case Q35_GGUF_U32: case Q35_GGUF_I32: case Q35_GGUF_F32: return 4;
    case Q35_GGUF_U64: case Q35_GGUF_I64: case Q35_GGUF_F64: return 8;
    default: return 0;
    }
}

const char *q35_gguf_vtype_name(uint32_t t)
{
    static const char *const names[Q35_GGUF_VTYPE_COUNT] = {
        "u8", "i8", "u16", "i16", "u32", "i32", "f32", "bool", "string", "array", "u64", "i64", "f64"};
    return t < Q35_GGUF_VTYPE_COUNT ? names[t] : "unknown";
}

bool q35_gguf_vtype_is_int(q35_gguf_vtype t)
{
    return t == Q35_GGUF_U8 || t == Q35_GGUF_I8 || t == Q35_GGUF_U16 || t == Q35_GGUF_I16 || t == Q35_GGUF_U32 ||
           t == Q35_GGUF_I32 || t == Q35_GGUF_U64 || t == Q35_GGUF_I64 || t == Q35_GGUF_BOOL;
}

static int check_bools(struct cursor *c, const uint8_t *p, uint64_t n, uint64_t at, const char *key)
{
    for (uint64_t i = 0; i < n; i++)
        if (p[i] > 1)
            return q35_fail(c->err, "GGUF %s: key '%s': bool at offset %" PRIu64 " holds %u, not 0 or 1", c->src, key,
                            at + i, p[i]);
    return 0;
}

/* Parses the value of kv (its type already read) at the cursor. */
static int parse_value(struct cursor *c, q35_gguf_kv *kv)
{
    const uint64_t at = c->pos;
    if (kv->type == Q35_GGUF_STRING) {
        q35_gguf_str s;
        if (read_str(c, &s, "string value", UINT64_MAX))
            return -1;
        kv->data = (const uint8_t *)s.data - 8; /* the length prefix, so strings read alike */
        kv->count = 1;
        return 0;
    }
    if (kv->type != Q35_GGUF_ARRAY) {
        const size_t sz = q35_gguf_vtype_size(kv->type);
        if (need(c, sz, "value"))
            return -1;
        kv->data = c->base + c->pos;
        kv->count = 1;
        c->pos += sz;
        return kv->type == Q35_GGUF_BOOL ? check_bools(c, kv->data, 1, at, kv->key) : 0;
    }
    uint32_t et;
    if (read_u32(c, &et, "array element type"))
        return -1;
    if (et >= Q35_GGUF_VTYPE_COUNT)
        return q35_fail(c->err, "GGUF %s: key '%s': array element type %u at offset %" PRIu64 " is unknown", c->src,
                        kv->key, et, at);
    if (et == Q35_GGUF_ARRAY)
        return q35_fail(c->err, "GGUF %s: key '%s': nested arrays (offset %" PRIu64 ") are not supported", c->src,
                        kv->key, at);
    kv->elem_type = (q35_gguf_vtype)et;
    const uint64_t count_at = c->pos;
    uint64_t count;
    if (read_u64(c, &count, "array count"))
        return -1;
    const uint64_t left = c->size - c->pos;
    const size_t esz = et == Q35_GGUF_STRING ? 8 : q35_gguf_vtype_size(et);
    if (count > left / esz)
        return q35_fail(c->err,
                        "GGUF %s: key '%s': array count %" PRIu64 " at offset %" PRIu64
                        " is absurd: the %" PRIu64 " bytes left hold at most %" PRIu64
                        " %s elements (the file is truncated, or the count is corrupt)",
                        c->src, kv->key, count, count_at, left, left / esz, q35_gguf_vtype_name(et));
    kv->count = count;
    kv->data = c->base + c->pos;
    if (et != Q35_GGUF_STRING) {
        c->pos += count * esz;
        return et == Q35_GGUF_BOOL ? check_bools(c, kv->data, count, at + 12, kv->key) : 0;
    }
    q35_gguf_str *strs = malloc((count ? count : 1) * sizeof *strs);
    if (!strs)
        return q35_fail(c->err, "GGUF %s: key '%s': out of memory for %" PRIu64 " strings", c->src, kv->key, count);
    kv->strs = strs;
    for (uint64_t i = 0; i < count; i++)
        if (read_str(c, &strs[i], "array string", UINT64_MAX))
            return -1;
    return 0;
}

static int cmp_kv_keys(const void *a, const void *b)
{
    return strcmp((*(const q35_gguf_kv *const *)a)->key, (*(const q35_gguf_kv *const *)b)->key);
}

static int cmp_tensor_names(const void *a, const void *b)
{
    return strcmp((*(const q35_gguf_tensor *const *)a)->name, (*(const q35_gguf_tensor *const *)b)->name);
}

/* Sorts an index of n object pointers by cmp; the position of the second of the
 * first pair cmp finds equal (a duplicate name), or 0 when none. */
static uint64_t sort_index(void *index, uint64_t n, int (*cmp)(const void *, const void *))
{
    qsort(index, n, sizeof(void *), cmp);
    const char *p = index;
    for (uint64_t i = 1; i < n; i++)
        if (cmp(p + (i - 1) * sizeof(void *), p + i * sizeof(void *)) == 0)
            return i;
    return 0;
}

/* The keys' index (g->kv_by_key, sorted by key), which also finds a duplicate. */
static int index_keys(struct cursor *c, q35_gguf *g)
{
    g->kv_by_key = malloc((g->n_kv ? g->n_kv : 1) * sizeof *g->kv_by_key);
    if (!g->kv_by_key)
        return q35_fail(c->err, "GGUF %s: out of memory", c->src);
    for (uint64_t i = 0; i < g->n_kv; i++)
        g->kv_by_key[i] = &g->kv[i];
    const uint64_t i = sort_index(g->kv_by_key, g->n_kv, cmp_kv_keys);
    if (i == 0)
        return 0;
    const q35_gguf_kv *x = g->kv_by_key[i - 1], *y = g->kv_by_key[i];
    return q35_fail(c->err, "GGUF %s: duplicate key '%s' at offsets %" PRIu64 " and %" PRIu64, c->src, x->key,
                    x->offset < y->offset ? x->offset : y->offset, x->offset < y->offset ? y->offset : x->offset);
}

/* The tensors' index (g->tensor_by_name, sorted by name), which also finds a duplicate. */
static int index_tensors(struct cursor *c, q35_gguf *g)
{
    g->tensor_by_name = malloc((g->n_tensors ? g->n_tensors : 1) * sizeof *g->tensor_by_name);
    if (!g->tensor_by_name)
        return q35_fail(c->err, "GGUF %s: out of memory", c->src);
    for (uint64_t i = 0; i < g->n_tensors; i++)
        g->tensor_by_name[i] = &g->tensors[i];
    const uint64_t i = sort_index(g->tensor_by_name, g->n_tensors, cmp_tensor_names);
    if (i == 0)
        return 0;
    const q35_gguf_tensor *x = g->tensor_by_name[i - 1], *y = g->tensor_by_name[i];
    const uint64_t lo = x->info_offset < y->info_offset ? x->info_offset : y->info_offset;
    const uint64_t hi = x->info_offset < y->info_offset ? y->info_offset : x->info_offset;
    return q35_fail(c->err, "GGUF %s: duplicate tensor name '%s' (infos at offsets %" PRIu64 " and %" PRIu64 ")", c->src,
                    x->name, lo, hi);
}

static int parse_kvs(struct cursor *c, q35_gguf *g, uint64_t n_kv)
{
    const uint64_t left = c->size - c->pos;
    if (n_kv > left / MIN_KV_BYTES)
        return q35_fail(c->err,
                        "GGUF %s: kv_count %" PRIu64 " at offset 16 is absurd: the %" PRIu64
                        " bytes after the header hold at most %" PRIu64
                        " pairs (the file is truncated, or the count is corrupt)",
                        c->src, n_kv, left, left / MIN_KV_BYTES);
    g->kv = calloc(n_kv ? n_kv : 1, sizeof *g->kv);
    if (!g->kv)
        return q35_fail(c->err, "GGUF %s: out of memory for %" PRIu64 " kv pairs", c->src, n_kv);
    for (uint64_t i = 0; i < n_kv; i++) {
        q35_gguf_kv *kv = &g->kv[i];
        kv->offset = c->pos;
        q35_gguf_str key;
        if (read_str(c, &key, "key", Q35_GGUF_MAX_KEY))
            return -1;
        if (key.len == 0)
            return q35_fail(c->err, "GGUF %s: kv pair %" PRIu64 " at offset %" PRIu64 " has an empty key", c->src, i,
                            kv->offset);
        if (memchr(key.data, '\0', key.len))
            return q35_fail(c->err, "GGUF %s: key at offset %" PRIu64 " contains a NUL byte", c->src, kv->offset);
        kv->key = dup_str(&key);
        g->n_kv = i + 1; /* from here on the pair is owned and freed with g */
        if (!kv->key)
            return q35_fail(c->err, "GGUF %s: out of memory", c->src);
        const uint64_t type_at = c->pos;
        uint32_t type;
        if (read_u32(c, &type, "value type"))
            return -1;
        if (type >= Q35_GGUF_VTYPE_COUNT)
            return q35_fail(c->err, "GGUF %s: key '%s': value type %u at offset %" PRIu64 " is unknown", c->src,
                            kv->key, type, type_at);
        kv->type = (q35_gguf_vtype)type;
        if (parse_value(c, kv))
            return -1;
    }
    return index_keys(c, g);
}

static int parse_alignment(struct cursor *c, q35_gguf *g)
{
    g->alignment = Q35_GGUF_DEFAULT_ALIGNMENT;
    const q35_gguf_kv *kv = q35_gguf_find(g, "general.alignment");
    if (!kv)
        return 0;
    if (kv->type != Q35_GGUF_U32)
        return q35_fail(c->err, "GGUF %s: general.alignment at offset %" PRIu64 " is a %s, not a u32", c->src,
                        kv->offset, q35_gguf_vtype_name(kv->type));
    uint32_t a;
    memcpy(&a, kv->data, 4);
    if (a == 0 || (a & (a - 1)) != 0)
        return q35_fail(c->err, "GGUF %s: general.alignment %u at offset %" PRIu64 " is not a power of two", c->src, a,
                        kv->offset);
    g->alignment = a;
    return 0;
}

static int parse_tensor_info(struct cursor *c, q35_gguf_tensor *t, uint64_t i)
{
    t->info_offset = c->pos;
    q35_gguf_str name;
    if (read_str(c, &name, "tensor name", Q35_GGUF_MAX_NAME))
        return -1;
    if (name.len == 0)
        return q35_fail(c->err, "GGUF %s: tensor %" PRIu64 " at offset %" PRIu64 " has an empty name", c->src, i,
                        t->info_offset);
    if (memchr(name.data, '\0', name.len))
        return q35_fail(c->err, "GGUF %s: tensor name at offset %" PRIu64 " contains a NUL byte", c->src,
                        t->info_offset);
    t->name = dup_str(&name);
    if (!t->name)
        return q35_fail(c->err, "GGUF %s: out of memory", c->src);
    const uint64_t dims_at = c->pos;
    if (read_u32(c, &t->n_dims, "tensor n_dims"))
        return -1;
    if (t->n_dims < 1 || t->n_dims > Q35_GGUF_MAX_DIMS)
        return q35_fail(c->err, "GGUF %s: tensor '%s': n_dims %u at offset %" PRIu64 " is outside 1..%d", c->src,
                        t->name, t->n_dims, dims_at, Q35_GGUF_MAX_DIMS);
    uint64_t elems = 1;
    for (int d = 0; d < Q35_GGUF_MAX_DIMS; d++)
        t->ne[d] = 1;
    for (uint32_t d = 0; d < t->n_dims; d++) {
        const uint64_t at = c->pos;
        uint64_t ne;
        if (read_u64(c, &ne, "tensor dimension"))
            return -1;
        if (ne == 0 || ne > (uint64_t)INT64_MAX || elems > (uint64_t)INT64_MAX / ne)
            return q35_fail(c->err,
                            "GGUF %s: tensor '%s': dimension %u = %" PRIu64 " at offset %" PRIu64
                            " is zero or makes the element count overflow",
                            c->src, t->name, d, ne, at);
        t->ne[d] = (int64_t)ne;
        elems *= ne;
    }
    const uint64_t type_at = c->pos;
    if (read_u32(c, &t->type, "tensor type"))
        return -1;
    const q35_type_info *ti = q35_type_get(t->type);
    if (!ti)
        return q35_fail(c->err, "GGUF %s: tensor '%s': type %u at offset %" PRIu64 " is no ggml type", c->src, t->name,
                        t->type, type_at);
    if (t->ne[0] % ti->block_elems != 0)
        return q35_fail(c->err,
                        "GGUF %s: tensor '%s': row of %" PRId64 " elements (dimension 0 at offset %" PRIu64
                        ") is not a whole number of %s blocks (%d)",
                        c->src, t->name, t->ne[0], dims_at + 4, ti->name, ti->block_elems);
    /* blocks * block_bytes * rows, each product checked: a row alone can overflow */
    const uint64_t blocks = (uint64_t)(t->ne[0] / ti->block_elems);
    const uint64_t rows = elems / (uint64_t)t->ne[0];
    if (blocks > UINT64_MAX / (uint64_t)ti->block_bytes / rows)
        return q35_fail(c->err,
                        "GGUF %s: tensor '%s': byte size of %s [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                        "] (dimensions at offset %" PRIu64 ") overflows a u64",
                        c->src, t->name, ti->name, t->ne[0], t->ne[1], t->ne[2], t->ne[3], dims_at + 4);
    t->nbytes = blocks * (uint64_t)ti->block_bytes * rows;
    return read_u64(c, &t->offset, "tensor offset");
}

static int cmp_offsets(const void *a, const void *b)
{
    const q35_gguf_tensor *x = *(const q35_gguf_tensor *const *)a, *y = *(const q35_gguf_tensor *const *)b;
    return x->offset < y->offset ? -1 : x->offset > y->offset ? 1 : 0;
}

static int check_tensor_data(struct cursor *c, q35_gguf *g)
{
    if (g->n_tensors == 0)
        return 0;
    if (g->data_offset > g->size)
        return q35_fail(c->err,
                        "GGUF %s: the data section would start at offset %" PRIu64 ", past the end of the file (%" PRIu64
                        " bytes; truncated)",
                        c->src, g->data_offset, g->size);
    const uint64_t data_bytes = g->size - g->data_offset;
    for (uint64_t i = 0; i < g->n_tensors; i++) {
        q35_gguf_tensor *t = &g->tensors[i];
        if (t->offset % g->alignment != 0)
            return q35_fail(c->err,
                            "GGUF %s: tensor '%s' (info at offset %" PRIu64 "): offset %" PRIu64
                            " is not a multiple of the alignment %u",
                            c->src, t->name, t->info_offset, t->offset, g->alignment);
        if (t->offset > data_bytes || t->nbytes > data_bytes - t->offset)
            return q35_fail(c->err,
                            "GGUF %s: tensor '%s' (info at offset %" PRIu64 "): its data, %" PRIu64 " bytes at offset %" PRIu64
                            " of the data section (which starts at file offset %" PRIu64 " and holds %" PRIu64
                            " bytes), runs past the end of the file",
                            c->src, t->name, t->info_offset, t->nbytes, t->offset, g->data_offset, data_bytes);
        t->data = g->base + g->data_offset + t->offset;
        const int need = q35_type_get(t->type)->align; /* the type was checked with its info */
        if ((uintptr_t)t->data % (uintptr_t)need != 0)
            return q35_fail(c->err,
                            "GGUF %s: tensor '%s' (info at offset %" PRIu64 "): its data at file offset %" PRIu64
                            " is not %d-byte aligned, as %s data must be to be read in place (general.alignment is %u;"
                            " the default of 32 aligns every type)",
                            c->src, t->name, t->info_offset, g->data_offset + t->offset, need,
                            q35_type_name(t->type), g->alignment);
    }
    const q35_gguf_tensor **by_off = malloc(g->n_tensors * sizeof *by_off);
    if (!by_off)
        return q35_fail(c->err, "GGUF %s: out of memory", c->src);
    for (uint64_t i = 0; i < g->n_tensors; i++)
        by_off[i] = &g->tensors[i];
    qsort(by_off, g->n_tensors, sizeof *by_off, cmp_offsets);
    int rc = 0;
    for (uint64_t i = 1; i < g->n_tensors && rc == 0; i++) {
        const q35_gguf_tensor *a = by_off[i - 1], *b = by_off[i];
        if (a->offset + a->nbytes > b->offset)
            rc = q35_fail(c->err,
                          "GGUF %s: tensors '%s' [%" PRIu64 ", %" PRIu64 ") and '%s' [%" PRIu64 ", %" PRIu64
                          ") overlap (infos at offsets %" PRIu64 " and %" PRIu64 ")",
                          c->src, a->name, a->offset, a->offset + a->nbytes, b->name, b->offset, b->offset + b->nbytes,
                          a->info_offset, b->info_offset);
    }
    free(by_off);
    return rc;
}

static int parse(struct cursor *c, q35_gguf *g)
{
    uint32_t magic;
    if (read_u32(c, &magic, "magic"))
        return -1;
    if (magic != Q35_GGUF_MAGIC)
        return q35_fail(c->err, "GGUF %s: bad magic 0x%08x at offset 0 (want \"GGUF\")", c->src, magic);
    if (read_u32(c, &g->version, "version"))
        return -1;
    if (g->version == 1)
        return q35_fail(c->err, "GGUF %s: version 1 at offset 4 (32-bit counts) is not supported; want 2 or 3", c->src);
    if (g->version == 0x02000000u || g->version == 0x03000000u)
        return q35_fail(c->err, "GGUF %s: version at offset 4 is byte-swapped: a big-endian GGUF, not supported",
                        c->src);
    if (g->version != 2 && g->version != 3)
        return q35_fail(c->err, "GGUF %s: version %u at offset 4 is not supported; want 2 or 3", c->src, g->version);
    uint64_t n_tensors, n_kv;
    if (read_u64(c, &n_tensors, "tensor_count") || read_u64(c, &n_kv, "kv_count"))
        return -1;
    if (parse_kvs(c, g, n_kv) || parse_alignment(c, g))
        return -1;
    const uint64_t left = c->size - c->pos;
    if (n_tensors > left / MIN_TENSOR_BYTES)
        return q35_fail(c->err,
                        "GGUF %s: tensor_count %" PRIu64 " at offset 8 is absurd: the %" PRIu64
                        " bytes after the metadata hold at most %" PRIu64
                        " tensor infos (the file is truncated, or the count is corrupt)",
                        c->src, n_tensors, left, left / MIN_TENSOR_BYTES);
    g->tensors = calloc(n_tensors ? n_tensors : 1, sizeof *g->tensors);
    if (!g->tensors)
        return q35_fail(c->err, "GGUF %s: out of memory for %" PRIu64 " tensor infos", c->src, n_tensors);
    for (uint64_t i = 0; i < n_tensors; i++) {
        g->n_tensors = i + 1; /* owned from here: freed with g */
        if (parse_tensor_info(c, &g->tensors[i], i))
            return -1;
    }
    if (index_tensors(c, g))
        return -1;
    const uint64_t a = g->alignment;
    if (c->pos > UINT64_MAX - a)
        return q35_fail(c->err, "GGUF %s: data offset overflows", c->src);
    g->data_offset = (c->pos + a - 1) / a * a;
    return check_tensor_data(c, g);
}

static int open_image(q35_gguf **out, q35_gguf *g, q35_error *err)
{
    struct cursor c = {.base = g->base, .size = g->size, .pos = 0, .src = g->source, .err = err};
    if (parse(&c, g) != 0) {
        q35_gguf_close(g);
        *out = NULL;
        return -1;
    }
    *out = g;
    return 0;
}

int q35_gguf_open_memory(q35_gguf **out, const void *image, uint64_t size, bool take, q35_error *err)
{
    *out = NULL;
    q35_gguf *g = calloc(1, sizeof *g);
    if (!g)
        return q35_fail(err, "GGUF <memory>: out of memory");
    snprintf(g->source, sizeof g->source, "<memory>");
    g->base = image;
    g->size = size;
    if (open_image(out, g, err) != 0)
        return -1; /* the image stays the caller's */
    if (take)
        g->owned = (void *)image;
    return 0;
}

int q35_gguf_open(q35_gguf **out, const char *path, q35_error *err)
{
    *out = NULL;
    /* O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused below. */
    const int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return q35_fail(err, "GGUF %s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fd, &st) != 0) {
        const int e = errno;
        close(fd);
        return q35_fail(err, "GGUF %s: cannot stat: %s", path, strerror(e));
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        return q35_fail(err, "GGUF %s: is %s, not a regular file", path, q35_file_kind(st.st_mode));
    }
    if (st.st_size == 0) {
        close(fd);
        return q35_fail(err, "GGUF %s: the file is empty (0 bytes)", path);
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    const int map_errno = errno;
    close(fd);
    if (map == MAP_FAILED)
        return q35_fail(err, "GGUF %s: cannot map %lld bytes: %s", path, (long long)st.st_size, strerror(map_errno));
    q35_gguf *g = calloc(1, sizeof *g);
    if (!g) {
        munmap(map, (size_t)st.st_size);
        return q35_fail(err, "GGUF %s: out of memory", path);
    }
    snprintf(g->source, sizeof g->source, "%s", path);
    g->base = map;
    g->size = (uint64_t)st.st_size;
    g->map = map;
    return open_image(out, g, err);
}

void q35_gguf_close(q35_gguf *g)
{
    if (!g)
        return;
    for (uint64_t i = 0; i < g->n_kv; i++) {
        free(g->kv[i].key);
        free((void *)g->kv[i].strs);
    }
    free(g->kv);
    free(g->kv_by_key);
    free(g->tensor_by_name);
    for (uint64_t i = 0; i < g->n_tensors; i++)
        free(g->tensors[i].name);
    free(g->tensors);
    if (g->map)
        munmap(g->map, g->size);
    free(g->owned);
    free(g);
}

const q35_gguf_kv *q35_gguf_find(const q35_gguf *g, const char *key)
{
    if (!g->kv_by_key)
        return NULL;
    const q35_gguf_kv probe = {.key = (char *)key}, *p = &probe;
    const q35_gguf_kv *const *hit = bsearch(&p, g->kv_by_key, g->n_kv, sizeof *g->kv_by_key, cmp_kv_keys);
    return hit ? *hit : NULL;
}

const q35_gguf_tensor *q35_gguf_find_tensor(const q35_gguf *g, const char *name)
{
    if (!g->tensor_by_name)
        return NULL;
    const q35_gguf_tensor probe = {.name = (char *)name}, *p = &probe;
    const q35_gguf_tensor *const *hit =
        bsearch(&p, g->tensor_by_name, g->n_tensors, sizeof *g->tensor_by_name, cmp_tensor_names);
    return hit ? *hit : NULL;
}

/* The integer at p of type t, widened; *neg set for a negative signed value. */
static uint64_t int_at(const uint8_t *p, q35_gguf_vtype t, bool *neg)
{
    *neg = false;
    switch (t) {
    case Q35_GGUF_U8: case Q35_GGUF_BOOL: return p[0];
    case Q35_GGUF_I8: { int8_t v; memcpy(&v, p, 1); *neg = v < 0; return (uint64_t)(int64_t)v; }
    case Q35_GGUF_U16: { uint16_t v; memcpy(&v, p, 2); return v; }
    case Q35_GGUF_I16: { int16_t v; memcpy(&v, p, 2); *neg = v < 0; return (uint64_t)(int64_t)v; }
    case Q35_GGUF_U32: { uint32_t v; memcpy(&v, p, 4); return v; }
    case Q35_GGUF_I32: { int32_t v; memcpy(&v, p, 4); *neg = v < 0; return (uint64_t)(int64_t)v; }
    case Q35_GGUF_U64: { uint64_t v; memcpy(&v, p, 8); return v; }
    case Q35_GGUF_I64: { int64_t v; memcpy(&v, p, 8); *neg = v < 0; return (uint64_t)v; }
    default: return 0;
    }
}

int64_t q35_gguf_array_int(const q35_gguf_kv *kv, uint64_t i)
{
    bool neg;
    const size_t sz = q35_gguf_vtype_size(kv->elem_type);
    return (int64_t)int_at(kv->data + i * sz, kv->elem_type, &neg);
}

int q35_gguf_get_u32(const q35_gguf *g, const char *key, uint32_t *out, q35_error *err)
{
    const q35_gguf_kv *kv = q35_gguf_find(g, key);
    if (!kv)
        return q35_fail(err, "GGUF %s: key '%s' is missing", g->source, key);
    if (!q35_gguf_vtype_is_int(kv->type) || kv->type == Q35_GGUF_BOOL)
        return q35_fail(err, "GGUF %s: key '%s' is a %s, not an integer", g->source, key,
                        q35_gguf_vtype_name(kv->type));
    bool neg;
    const uint64_t v = int_at(kv->data, kv->type, &neg);
    if (neg || v > UINT32_MAX)
        return q35_fail(err, "GGUF %s: key '%s' = %s%" PRIu64 " (%s) does not fit a u32", g->source, key,
                        neg ? "-" : "", neg ? 0 - v : v, q35_gguf_vtype_name(kv->type));
    *out = (uint32_t)v;
    return 0;
}

int q35_gguf_get_f32(const q35_gguf *g, const char *key, float *out, q35_error *err)
{
    const q35_gguf_kv *kv = q35_gguf_find(g, key);
    if (!kv)
        return q35_fail(err, "GGUF %s: key '%s' is missing", g->source, key);
    if (kv->type == Q35_GGUF_F32) {
        memcpy(out, kv->data, 4);
        return 0;
    }
    if (kv->type == Q35_GGUF_F64) {
        double d;
        memcpy(&d, kv->data, 8);
        if (isfinite(d) && fabs(d) > FLT_MAX) /* converting it would be undefined */
            return q35_fail(err, "GGUF %s: key '%s' = %g (f64) does not fit a f32", g->source, key, d);
        *out = (float)d;
        return 0;
    }
    return q35_fail(err, "GGUF %s: key '%s' is a %s, not a float", g->source, key, q35_gguf_vtype_name(kv->type));
}

int q35_gguf_get_str(const q35_gguf *g, const char *key, q35_gguf_str *out, q35_error *err)
{
    const q35_gguf_kv *kv = q35_gguf_find(g, key);
    if (!kv)
        return q35_fail(err, "GGUF %s: key '%s' is missing", g->source, key);
    if (kv->type != Q35_GGUF_STRING)
        return q35_fail(err, "GGUF %s: key '%s' is a %s, not a string", g->source, key, q35_gguf_vtype_name(kv->type));
    memcpy(&out->len, kv->data, 8);
    out->data = (const char *)kv->data + 8;
    return 0;
}

char *q35_gguf_format_value(const q35_gguf_kv *kv, char *buf, size_t cap)
{
    bool neg;
    switch (kv->type) {
    case Q35_GGUF_STRING: {
        uint64_t len;
        memcpy(&len, kv->data, 8);
        char shown[4 * 64 + 4];
        q35_escape(shown, sizeof shown, (const char *)kv->data + 8, len > 64 ? 64 : (size_t)len);
        snprintf(buf, cap, "\"%s\"%s", shown, len > 64 ? "..." : "");
        break;
    }
    case Q35_GGUF_ARRAY:
        if (kv->elem_type != Q35_GGUF_STRING && q35_gguf_vtype_is_int(kv->elem_type) && kv->count <= 16) {
            size_t used = (size_t)snprintf(buf, cap, "[");
            for (uint64_t i = 0; i < kv->count && used < cap; i++)
                used += (size_t)snprintf(buf + used, cap - used, "%s%" PRId64, i ? ", " : "", q35_gguf_array_int(kv, i));
            if (used < cap)
                snprintf(buf + used, cap - used, "]");
        } else {
            snprintf(buf, cap, "[%s x %" PRIu64 "]", q35_gguf_vtype_name(kv->elem_type), kv->count);
        }
        break;
    case Q35_GGUF_F32: { float f; memcpy(&f, kv->data, 4); snprintf(buf, cap, "%.9g", (double)f); break; }
    case Q35_GGUF_F64: { double d; memcpy(&d, kv->data, 8); snprintf(buf, cap, "%.17g", d); break; }
    case Q35_GGUF_BOOL: snprintf(buf, cap, "%s", kv->data[0] ? "true" : "false"); break;
    default: {
        const uint64_t v = int_at(kv->data, kv->type, &neg);
        if (neg)
            snprintf(buf, cap, "%" PRId64, (int64_t)v);
        else
            snprintf(buf, cap, "%" PRIu64, v);
    }
    }
    return buf;
}
