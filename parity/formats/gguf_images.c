/* The GGUF byte images test_gguf's parts build and open (gguf_images.h). */
#include "gguf_images.h"

#include "core/quant.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- byte images ------------------------------------------------------------ */

void q35_test_put_bytes(q35_test_bytes *b, const void *src, uint64_t n)
{
    if (b->oom || n == 0)
        return;
    if (b->len + n > b->cap) {
        uint64_t cap = b->cap ? b->cap : 256;
        while (cap < b->len + n)
            cap *= 2;
        uint8_t *p = realloc(b->p, cap);
        if (!p) {
            b->oom = true;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, src, n);
    b->len += n;
}

void q35_test_put_u32(q35_test_bytes *b, uint32_t v) { q35_test_put_bytes(b, &v, 4); }
void q35_test_put_u64(q35_test_bytes *b, uint64_t v) { q35_test_put_bytes(b, &v, 8); }

void q35_test_put_str(q35_test_bytes *b, const char *s)
{
    q35_test_put_u64(b, strlen(s));
    q35_test_put_bytes(b, s, strlen(s));
}

void q35_test_put_zeros(q35_test_bytes *b, uint64_t n)
{
    static const uint8_t zeros[64];
    while (n > 0) {
        const uint64_t k = n < sizeof zeros ? n : sizeof zeros;
        q35_test_put_bytes(b, zeros, k);
        n -= k;
    }
}

void q35_test_set_u32(q35_test_bytes *b, uint64_t at, uint32_t v) { memcpy(b->p + at, &v, 4); }
void q35_test_set_u64(q35_test_bytes *b, uint64_t at, uint64_t v) { memcpy(b->p + at, &v, 8); }

uint64_t q35_test_get_u64(const q35_test_bytes *b, uint64_t at)
{
    uint64_t v;
    memcpy(&v, b->p + at, 8);
    return v;
}

void q35_test_bytes_free(q35_test_bytes *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

int q35_test_writer_image(const q35_gguf_writer *w, const void *const *data, int64_t n_tensors,
                          q35_test_bytes *out, q35_error *err)
{
    const uint64_t size = q35_gguf_writer_file_size(w);
    memset(out, 0, sizeof *out);
    out->p = calloc(size ? size : 1, 1);
    if (!out->p)
        return q35_fail(err, "out of memory for a %" PRIu64 "-byte image", size);
    out->len = out->cap = size;
    if (q35_gguf_writer_write_header(w, out->p, size, err))
        return -1;
    for (int64_t i = 0; i < n_tensors; i++)
        memcpy(out->p + q35_gguf_writer_tensor_offset(w, i), data[i], q35_gguf_writer_tensor_bytes(w, i));
    return 0;
}

int q35_test_pattern_data(const q35_gguf_writer *w, int64_t n_tensors, uint8_t **data)
{
    for (int64_t i = 0; i < n_tensors; i++) {
        const uint64_t n = q35_gguf_writer_tensor_bytes(w, i);
        data[i] = malloc(n);
        if (!data[i])
            return -1;
        for (uint64_t j = 0; j < n; j++)
            data[i][j] = (uint8_t)(j * 37 + (uint64_t)i * 101 + 11);
    }
    return 0;
}

void q35_test_free_data(uint8_t **data, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        free(data[i]);
}

int q35_test_open_copy(q35_gguf **g, const uint8_t *p, uint64_t len, q35_error *err)
{
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy)
        return q35_fail(err, "out of memory");
    if (len)
        memcpy(copy, p, len);
    const int rc = q35_gguf_open_memory(g, copy, len, true, err);
    if (rc != 0)
        free(copy);
    return rc;
}

/* ---- the pairs of every value type ------------------------------------------ */

static const uint8_t k_u8[] = {255, 0, 1};
static const int8_t k_i8[] = {-128, 127, -1, 0};
static const uint16_t k_u16[] = {65535, 0, 4660};
static const int16_t k_i16[] = {-32768, 32767, -2};
static const uint32_t k_u32[] = {4294967295u, 0, 123456789u, 7};
static const int32_t k_i32[] = {INT32_MIN, INT32_MAX, -1};
static const float k_f32[] = {3.25f, -0.0f, 1e-40f, INFINITY, NAN};
static const uint8_t k_bool[] = {1, 0, 1};
static const char *const k_str[] = {Q35_TEST_RT_STRING, "", "a", ""};
static const uint64_t k_u64[] = {UINT64_MAX, 0, 1ull << 40};
static const int64_t k_i64[] = {INT64_MIN, INT64_MAX, -7};
static const double k_f64[] = {-1e300, 0.1, 5e-324, -0.0};

static const q35_test_kv k_scalars[] = {
    {.key = "rt.u8", .type = Q35_GGUF_U8, .value = &k_u8[0]},
    {.key = "rt.i8", .type = Q35_GGUF_I8, .value = &k_i8[0]},
    {.key = "rt.u16", .type = Q35_GGUF_U16, .value = &k_u16[0]},
    {.key = "rt.i16", .type = Q35_GGUF_I16, .value = &k_i16[0]},
    {.key = "rt.u32", .type = Q35_GGUF_U32, .value = &k_u32[0]},
    {.key = "rt.i32", .type = Q35_GGUF_I32, .value = &k_i32[0]},
    {.key = "rt.f32", .type = Q35_GGUF_F32, .value = &k_f32[0]},
    {.key = "rt.f32.nan", .type = Q35_GGUF_F32, .value = &k_f32[4]},
    {.key = "rt.bool.true", .type = Q35_GGUF_BOOL, .value = &k_bool[0]},
    {.key = "rt.bool.false", .type = Q35_GGUF_BOOL, .value = &k_bool[1]},
    {.key = "rt.string", .type = Q35_GGUF_STRING, .value = Q35_TEST_RT_STRING},
    {.key = "rt.string.empty", .type = Q35_GGUF_STRING, .value = ""},
    {.key = "rt.u64", .type = Q35_GGUF_U64, .value = &k_u64[0]},
    {.key = "rt.i64", .type = Q35_GGUF_I64, .value = &k_i64[0]},
    {.key = "rt.f64", .type = Q35_GGUF_F64, .value = &k_f64[0]},
};

/* The elements of the array of element type t. */
static const void *elems_of(q35_gguf_vtype t, uint64_t *n)
{
    switch (t) {
    case Q35_GGUF_U8: *n = Q35_TEST_COUNT(k_u8); return k_u8;
    case Q35_GGUF_I8: *n = Q35_TEST_COUNT(k_i8); return k_i8;
    case Q35_GGUF_U16: *n = Q35_TEST_COUNT(k_u16); return k_u16;
    case Q35_GGUF_I16: *n = Q35_TEST_COUNT(k_i16); return k_i16;
    case Q35_GGUF_U32: *n = Q35_TEST_COUNT(k_u32); return k_u32;
    case Q35_GGUF_I32: *n = Q35_TEST_COUNT(k_i32); return k_i32;
    case Q35_GGUF_F32: *n = Q35_TEST_COUNT(k_f32); return k_f32;
    case Q35_GGUF_BOOL: *n = Q35_TEST_COUNT(k_bool); return k_bool;
    case Q35_GGUF_STRING: *n = Q35_TEST_COUNT(k_str); return k_str;
    case Q35_GGUF_U64: *n = Q35_TEST_COUNT(k_u64); return k_u64;
    case Q35_GGUF_I64: *n = Q35_TEST_COUNT(k_i64); return k_i64;
    case Q35_GGUF_F64: *n = Q35_TEST_COUNT(k_f64); return k_f64;
    default: *n = 0; return NULL;
    }
}

void q35_test_add_kv(q35_test_kv_list *l, q35_test_kv kv)
{
    if (l->n < Q35_TEST_COUNT(l->kv))
        l->kv[l->n++] = kv;
}

void q35_test_add_every_type(q35_test_kv_list *l)
{
    for (size_t i = 0; i < Q35_TEST_COUNT(k_scalars); i++)
        q35_test_add_kv(l, k_scalars[i]);
    int k = 0;
    for (uint32_t t = 0; t < Q35_GGUF_VTYPE_COUNT; t++) {
        if (t == Q35_GGUF_ARRAY)
            continue;
        uint64_t n;
        const void *p = elems_of((q35_gguf_vtype)t, &n);
        snprintf(l->keys[k], sizeof l->keys[k], "rt.array.%s", q35_gguf_vtype_name(t));
        q35_test_add_kv(l, (q35_test_kv){.key = l->keys[k++], .type = Q35_GGUF_ARRAY, .elem = (q35_gguf_vtype)t,
                                         .count = n, .value = p});
        snprintf(l->keys[k], sizeof l->keys[k], "rt.empty.%s", q35_gguf_vtype_name(t));
        q35_test_add_kv(l, (q35_test_kv){.key = l->keys[k++], .type = Q35_GGUF_ARRAY, .elem = (q35_gguf_vtype)t});
    }
}

int q35_test_write_kvs(q35_gguf_writer *w, const q35_test_kv_list *l, q35_error *err)
{
    for (size_t i = 0; i < l->n; i++) {
        const q35_test_kv *kv = &l->kv[i];
        if (strcmp(kv->key, "general.alignment") == 0)
            continue;
        const int rc = kv->type == Q35_GGUF_ARRAY
                           ? q35_gguf_writer_set_array(w, kv->key, kv->elem, kv->value, kv->count, err)
                           : q35_gguf_writer_set(w, kv->key, kv->type, kv->value, err);
        if (rc)
            return -1;
    }
    return 0;
}

int q35_test_add_tensors(q35_gguf_writer *w, const q35_test_tensor *t, int64_t n, q35_error *err)
{
    for (int64_t i = 0; i < n; i++)
        if (q35_gguf_writer_add_tensor(w, t[i].name, t[i].type, t[i].n_dims, t[i].ne, err) != i)
            return -1;
    return 0;
}

/* ---- the valid image of the truncation sweep and the fuzz seed -------------- */

int q35_test_rich_image(q35_test_bytes *out, uint64_t *infos_end, q35_error *err)
{
    static const q35_test_tensor ts[] = {
        {"token_embd.weight", Q35_TYPE_F32, 1, {5}},
        {"blk.0.ffn_up.weight", Q35_TYPE_Q8_0, 2, {32, 2}},
        {"output_norm.weight", Q35_TYPE_F16, 2, {3, 3}},
    };
    q35_test_kv_list *kvs = calloc(1, sizeof *kvs);
    q35_gguf_writer *w = q35_gguf_writer_new();
    uint8_t *data[Q35_TEST_COUNT(ts)] = {NULL};
    memset(out, 0, sizeof *out);
    int rc = !kvs || !w;
    if (rc == 0) {
        q35_test_add_kv(kvs, (q35_test_kv){.key = "general.architecture", .type = Q35_GGUF_STRING, .value = "qwen35"});
        q35_test_add_every_type(kvs);
        rc = q35_test_write_kvs(w, kvs, err) || q35_test_add_tensors(w, ts, Q35_TEST_COUNT(ts), err) ||
             q35_test_pattern_data(w, Q35_TEST_COUNT(ts), data) ||
             q35_test_writer_image(w, (const void *const *)data, Q35_TEST_COUNT(ts), out, err);
    }
    if (rc == 0) { /* the infos end where the padding before the data section starts */
        q35_gguf *g = NULL;
        rc = q35_gguf_open_memory(&g, out->p, out->len, false, err);
        if (rc == 0) {
            const q35_gguf_tensor *t = &g->tensors[g->n_tensors - 1];
            *infos_end = t->info_offset + 8 + strlen(t->name) + 4 + 8ull * t->n_dims + 4 + 8;
        }
        q35_gguf_close(g);
    }
    q35_test_free_data(data, Q35_TEST_COUNT(ts));
    q35_gguf_writer_free(w);
    free(kvs);
    return rc ? -1 : 0;
}
