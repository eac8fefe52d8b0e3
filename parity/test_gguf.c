/* The GGUF reader and writer.
 *
 * 1. Round trip: every value type, arrays of each (and empty ones), empty
 *    strings, the longest key and tensor name, alignment 64 and tensors of several
 *    types and ranks go through the writer and back through q35_gguf_open (a temp
 *    file) and q35_gguf_open_memory; every value, name, shape, type, offset, size
 *    and data byte read back equal. Then the typed getters' accept/reject rules and
 *    the writer's refusals.
 * 2. Malformed images: a table of cases, each refused with -1, *out == NULL and a
 *    message holding the expected substring and the file offset of the field.
 * 3. Truncation: every prefix of a valid image (a malloc'd copy of exactly that
 *    many bytes, so ASan sees any overread) is refused cleanly; the whole opens.
 * 4. The committed corpus data/fixtures/gguf-bad: every file its MANIFEST lists
 *    is refused through the mmap path with its substring, every .gguf there is
 *    listed and holds the bytes the table builds now; the fuzz seed
 *    data/fixtures/gguf-seed/valid.gguf opens and is the image of part 3.
 *
 * `test_gguf --write-corpus DIR` (re)writes the table's images and MANIFEST into
 * DIR; `test_gguf --write-seed FILE` writes the valid seed. Run the suite under
 * -DQ35_SANITIZE=address,undefined to check for leaks and overreads. */
#define _POSIX_C_SOURCE 200809L
#include "harness.h"

#include "model/gguf.h"
#include "model/quant.h"
#include "model/rng.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CORPUS_DIR "data/fixtures/gguf-bad"
#define SEED_FILE "data/fixtures/gguf-seed/valid.gguf"
#define CORPUS_MAX_BYTES 4096 /* each committed file stays under this */
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* ---- byte images ------------------------------------------------------------ */

/* A growable byte image. */
typedef struct bytes {
    uint8_t *p;    /* the bytes (NULL while empty) */
    uint64_t len;  /* bytes used */
    uint64_t cap;  /* bytes allocated */
    bool oom;      /* an append failed: the image is incomplete */
} bytes;

static void put_bytes(bytes *b, const void *src, uint64_t n)
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

static void put_u32(bytes *b, uint32_t v) { put_bytes(b, &v, 4); }
static void put_u64(bytes *b, uint64_t v) { put_bytes(b, &v, 8); }

static void put_str(bytes *b, const char *s)
{
    put_u64(b, strlen(s));
    put_bytes(b, s, strlen(s));
}

static void put_zeros(bytes *b, uint64_t n)
{
    static const uint8_t zeros[64];
    while (n > 0) {
        const uint64_t k = n < sizeof zeros ? n : sizeof zeros;
        put_bytes(b, zeros, k);
        n -= k;
    }
}

static void set_u32(bytes *b, uint64_t at, uint32_t v) { memcpy(b->p + at, &v, 4); }
static void set_u64(bytes *b, uint64_t at, uint64_t v) { memcpy(b->p + at, &v, 8); }

static uint64_t get_u64(const bytes *b, uint64_t at)
{
    uint64_t v;
    memcpy(&v, b->p + at, 8);
    return v;
}

static void bytes_free(bytes *b)
{
    free(b->p);
    memset(b, 0, sizeof *b);
}

/* The image q35_gguf_writer_write_file writes: the header, then data[i] at tensor
 * i's offset, zeros between. */
static int writer_image(const q35_gguf_writer *w, const void *const *data, int64_t n_tensors, bytes *out,
                        q35_error *err)
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

/* Tensor data of a deterministic pattern, one malloc'd buffer per tensor. */
static int pattern_data(const q35_gguf_writer *w, int64_t n_tensors, uint8_t **data)
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

static void free_data(uint8_t **data, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        free(data[i]);
}

/* Opens a malloc'd copy of exactly len bytes of p (so ASan catches a read past
 * it), which the result owns on success; on failure the reader must leave the
 * copy alone and it is freed here (ASan reports a double free otherwise). */
static int open_copy(q35_gguf **g, const uint8_t *p, uint64_t len, q35_error *err)
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

/* Whether msg names file offset `at`: the word "offset" and the number, whole. */
static bool names_offset(const char *msg, uint64_t at)
{
    char num[24];
    const int len = snprintf(num, sizeof num, "%" PRIu64, at);
    if (!strstr(msg, "offset"))
        return false;
    for (const char *p = strstr(msg, num); p; p = strstr(p + 1, num))
        if ((p == msg || !isdigit((unsigned char)p[-1])) && !isdigit((unsigned char)p[len]))
            return true;
    return false;
}

static int write_bytes(const char *path, const void *p, uint64_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    const bool ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* ---- the values of the round trip ------------------------------------------ */

#define RT_STRING "tokens: <|im_start|> h\xc3\xa9llo, \"quoted\""

static const uint8_t k_u8[] = {255, 0, 1};
static const int8_t k_i8[] = {-128, 127, -1, 0};
static const uint16_t k_u16[] = {65535, 0, 4660};
static const int16_t k_i16[] = {-32768, 32767, -2};
static const uint32_t k_u32[] = {4294967295u, 0, 123456789u, 7};
static const int32_t k_i32[] = {INT32_MIN, INT32_MAX, -1};
static const float k_f32[] = {3.25f, -0.0f, 1e-40f, INFINITY, NAN};
static const uint8_t k_bool[] = {1, 0, 1};
static const char *const k_str[] = {RT_STRING, "", "a", ""};
static const uint64_t k_u64[] = {UINT64_MAX, 0, 1ull << 40};
static const int64_t k_i64[] = {INT64_MIN, INT64_MAX, -7};
static const double k_f64[] = {-1e300, 0.1, 5e-324, -0.0};

/* Values for the getters: integers of every width that fit a u32 and some that do not. */
static const int8_t k_get_i8 = 100;
static const int16_t k_get_i16 = 1000;
static const int32_t k_get_i32 = 123456;
static const uint64_t k_get_u64_fits = 4294967295u;
static const uint64_t k_get_u64_big = 4294967296u;
static const int64_t k_get_i64 = 42;
static const double k_get_f64 = 0.25;
static const uint32_t k_align64 = 64;

/* One metadata pair as written. */
typedef struct rt_kv {
    const char *key;
    q35_gguf_vtype type;   /* value type */
    q35_gguf_vtype elem;   /* element type of an ARRAY */
    uint64_t count;        /* elements of an ARRAY */
    const void *value;     /* the scalar, a char * (STRING), the elements (ARRAY; char *const * of strings) */
} rt_kv;

static const rt_kv k_scalars[] = {
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
    {.key = "rt.string", .type = Q35_GGUF_STRING, .value = RT_STRING},
    {.key = "rt.string.empty", .type = Q35_GGUF_STRING, .value = ""},
    {.key = "rt.u64", .type = Q35_GGUF_U64, .value = &k_u64[0]},
    {.key = "rt.i64", .type = Q35_GGUF_I64, .value = &k_i64[0]},
    {.key = "rt.f64", .type = Q35_GGUF_F64, .value = &k_f64[0]},
};

static const rt_kv k_getter_kvs[] = {
    {.key = "get.i8", .type = Q35_GGUF_I8, .value = &k_get_i8},
    {.key = "get.i16", .type = Q35_GGUF_I16, .value = &k_get_i16},
    {.key = "get.i32", .type = Q35_GGUF_I32, .value = &k_get_i32},
    {.key = "get.u64.fits", .type = Q35_GGUF_U64, .value = &k_get_u64_fits},
    {.key = "get.u64.big", .type = Q35_GGUF_U64, .value = &k_get_u64_big},
    {.key = "get.i64", .type = Q35_GGUF_I64, .value = &k_get_i64},
    {.key = "get.f64", .type = Q35_GGUF_F64, .value = &k_get_f64},
};

/* The elements of the array of element type t. */
static const void *elems_of(q35_gguf_vtype t, uint64_t *n)
{
    switch (t) {
    case Q35_GGUF_U8: *n = COUNT(k_u8); return k_u8;
    case Q35_GGUF_I8: *n = COUNT(k_i8); return k_i8;
    case Q35_GGUF_U16: *n = COUNT(k_u16); return k_u16;
    case Q35_GGUF_I16: *n = COUNT(k_i16); return k_i16;
    case Q35_GGUF_U32: *n = COUNT(k_u32); return k_u32;
    case Q35_GGUF_I32: *n = COUNT(k_i32); return k_i32;
    case Q35_GGUF_F32: *n = COUNT(k_f32); return k_f32;
    case Q35_GGUF_BOOL: *n = COUNT(k_bool); return k_bool;
    case Q35_GGUF_STRING: *n = COUNT(k_str); return k_str;
    case Q35_GGUF_U64: *n = COUNT(k_u64); return k_u64;
    case Q35_GGUF_I64: *n = COUNT(k_i64); return k_i64;
    case Q35_GGUF_F64: *n = COUNT(k_f64); return k_f64;
    default: *n = 0; return NULL;
    }
}

/* The pairs of an image, in file order. */
typedef struct kv_list {
    rt_kv kv[80];
    size_t n;
    char keys[2 * Q35_GGUF_VTYPE_COUNT][32]; /* keys of the generated arrays */
} kv_list;

static void add_kv(kv_list *l, rt_kv kv)
{
    if (l->n < COUNT(l->kv))
        l->kv[l->n++] = kv;
}

/* Every scalar type, an array of each element type and an empty array of each
 * (elements NULL, as a caller with nothing to pass would write it). */
static void add_every_type(kv_list *l)
{
    for (size_t i = 0; i < COUNT(k_scalars); i++)
        add_kv(l, k_scalars[i]);
    int k = 0;
    for (uint32_t t = 0; t < Q35_GGUF_VTYPE_COUNT; t++) {
        if (t == Q35_GGUF_ARRAY)
            continue;
        uint64_t n;
        const void *p = elems_of((q35_gguf_vtype)t, &n);
        snprintf(l->keys[k], sizeof l->keys[k], "rt.array.%s", q35_gguf_vtype_name(t));
        add_kv(l, (rt_kv){.key = l->keys[k++], .type = Q35_GGUF_ARRAY, .elem = (q35_gguf_vtype)t, .count = n, .value = p});
        snprintf(l->keys[k], sizeof l->keys[k], "rt.empty.%s", q35_gguf_vtype_name(t));
        add_kv(l, (rt_kv){.key = l->keys[k++], .type = Q35_GGUF_ARRAY, .elem = (q35_gguf_vtype)t});
    }
}

/* Writes the pairs (general.alignment is q35_gguf_writer_set_alignment's). */
static int write_kvs(q35_gguf_writer *w, const kv_list *l, q35_error *err)
{
    for (size_t i = 0; i < l->n; i++) {
        const rt_kv *kv = &l->kv[i];
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

/* One tensor as written. */
typedef struct rt_tensor {
    const char *name;
    uint32_t type;                  /* q35_type */
    uint32_t n_dims;                /* 1..4 */
    int64_t ne[Q35_GGUF_MAX_DIMS];  /* ne[0] fastest */
} rt_tensor;

static int add_tensors(q35_gguf_writer *w, const rt_tensor *t, int64_t n, q35_error *err)
{
    for (int64_t i = 0; i < n; i++)
        if (q35_gguf_writer_add_tensor(w, t[i].name, t[i].type, t[i].n_dims, t[i].ne, err) != i)
            return -1;
    return 0;
}

/* Why kv i of g is not `want`, or NULL when it is. */
static const char *kv_mismatch(const q35_gguf *g, uint64_t i, const rt_kv *want)
{
    const q35_gguf_kv *kv = &g->kv[i];
    if (strcmp(kv->key, want->key) != 0)
        return "key (or its place in the file) differs";
    if (q35_gguf_find(g, want->key) != kv)
        return "q35_gguf_find does not return it";
    if (kv->type != want->type)
        return "value type differs";
    if (want->type == Q35_GGUF_STRING) {
        q35_error err = {{0}};
        q35_gguf_str v;
        if (q35_gguf_get_str(g, want->key, &v, &err))
            return "q35_gguf_get_str fails";
        const char *s = want->value;
        if (kv->count != 1 || v.len != strlen(s) || memcmp(v.data, s, v.len) != 0)
            return "string differs";
        return NULL;
    }
    if (want->type != Q35_GGUF_ARRAY) {
        if (kv->count != 1 || kv->strs || memcmp(kv->data, want->value, q35_gguf_vtype_size(want->type)) != 0)
            return "value bytes differ";
        return NULL;
    }
    if (kv->elem_type != want->elem || kv->count != want->count)
        return "element type or count differs";
    if (want->elem != Q35_GGUF_STRING) {
        if (kv->strs || (want->count && memcmp(kv->data, want->value, want->count * q35_gguf_vtype_size(want->elem))))
            return "element bytes differ";
        return NULL;
    }
    if (!kv->strs)
        return "string array without strs";
    const char *const *s = want->value;
    for (uint64_t j = 0; j < want->count; j++)
        if (kv->strs[j].len != strlen(s[j]) || memcmp(kv->strs[j].data, s[j], kv->strs[j].len) != 0)
            return "a string element differs";
    return NULL;
}

/* Why tensor i of g is not `want` as the writer laid it out with `data`, or NULL. */
static const char *tensor_mismatch(const q35_gguf *g, uint64_t i, const rt_tensor *want, const q35_gguf_writer *w,
                                   const uint8_t *data)
{
    const q35_gguf_tensor *t = &g->tensors[i];
    if (strcmp(t->name, want->name) != 0)
        return "name (or its place in the file) differs";
    if (q35_gguf_find_tensor(g, want->name) != t)
        return "q35_gguf_find_tensor does not return it";
    if (t->type != want->type || t->n_dims != want->n_dims)
        return "type or n_dims differs";
    uint64_t rows = 1;
    for (uint32_t d = 0; d < Q35_GGUF_MAX_DIMS; d++) {
        if (t->ne[d] != (d < want->n_dims ? want->ne[d] : 1))
            return "dims differ (or a dim past n_dims is not 1)";
        rows *= d > 0 ? (uint64_t)t->ne[d] : 1;
    }
    if (t->offset % g->alignment != 0)
        return "offset is not a multiple of the alignment";
    if (g->data_offset + t->offset != q35_gguf_writer_tensor_offset(w, (int64_t)i))
        return "offset differs from the writer's";
    if (t->nbytes != q35_gguf_writer_tensor_bytes(w, (int64_t)i) || t->nbytes != q35_row_bytes(t->type, t->ne[0]) * rows)
        return "nbytes differs";
    if (t->data != g->base + g->data_offset + t->offset)
        return "data does not point at its offset";
    if (memcmp(t->data, data, t->nbytes) != 0)
        return "data bytes differ";
    return NULL;
}

/* One case per header field, pair and tensor of g against what was written. */
static void check_read_back(q35_suite *s, const char *how, const q35_gguf *g, const kv_list *kvs,
                            const rt_tensor *ts, int64_t n_t, const q35_gguf_writer *w, uint8_t *const *data)
{
    q35_case(s, g->version == 3 && g->alignment == 64 && g->data_offset == q35_gguf_writer_data_offset(w) &&
                    g->data_offset % 64 == 0,
             "%s header: version %u, alignment %u, data section at %" PRIu64 " (writer: %" PRIu64 ")", how,
             g->version, g->alignment, g->data_offset, q35_gguf_writer_data_offset(w));
    if (!q35_case(s, g->n_kv == kvs->n && g->n_tensors == (uint64_t)n_t,
                  "%s %" PRIu64 " kvs (wrote %zu), %" PRIu64 " tensors (wrote %" PRId64 ")", how, g->n_kv, kvs->n,
                  g->n_tensors, n_t))
        return;
    for (uint64_t i = 0; i < g->n_kv; i++) {
        const rt_kv *want = &kvs->kv[i];
        const char *why = kv_mismatch(g, i, want);
        q35_case(s, why == NULL, "%s kv %-22.40s%s %s%s%s x %" PRIu64 ": %s", how, want->key,
                 strlen(want->key) > 40 ? "..." : "", q35_gguf_vtype_name(want->type),
                 want->type == Q35_GGUF_ARRAY ? " of " : "",
                 want->type == Q35_GGUF_ARRAY ? q35_gguf_vtype_name(want->elem) : "",
                 want->type == Q35_GGUF_ARRAY ? want->count : 1, why ? why : "equal");
    }
    for (int64_t i = 0; i < n_t; i++) {
        const q35_gguf_tensor *t = &g->tensors[i];
        const char *why = tensor_mismatch(g, (uint64_t)i, &ts[i], w, data[i]);
        q35_case(s, why == NULL,
                 "%s tensor %-22.40s%s %-6s %u dims [%" PRId64 ", %" PRId64 ", %" PRId64 ", %" PRId64
                 "] at +%" PRIu64 ", %" PRIu64 " bytes: %s",
                 how, ts[i].name, strlen(ts[i].name) > 40 ? "..." : "", q35_type_name(ts[i].type), ts[i].n_dims,
                 t->ne[0], t->ne[1], t->ne[2], t->ne[3], t->offset, t->nbytes, why ? why : "equal");
    }
}

/* q35_gguf_get_u32 / get_f32 / get_str: what they take and what they refuse. */
static void check_getters(q35_suite *s, const q35_gguf *g)
{
    static const struct { const char *key; uint32_t want; } ok_u32[] = {
        {"rt.u8", 255}, {"rt.u16", 65535}, {"rt.u32", 4294967295u}, {"get.i8", 100}, {"get.i16", 1000},
        {"get.i32", 123456}, {"get.u64.fits", 4294967295u}, {"get.i64", 42},
    };
    for (size_t i = 0; i < COUNT(ok_u32); i++) {
        q35_error err = {{0}};
        uint32_t v = 0xdeadbeef;
        const int rc = q35_gguf_get_u32(g, ok_u32[i].key, &v, &err);
        q35_case(s, rc == 0 && v == ok_u32[i].want && !err.msg[0], "get_u32(%s) = %u (want %u)", ok_u32[i].key, v,
                 ok_u32[i].want);
    }
    /* Refusals: the message names the key and says why. */
    static const struct { const char *key, *want; } bad_u32[] = {
        {"rt.i8", "= -128 (i8) does not fit a u32"},
        {"rt.i16", "= -32768 (i16) does not fit a u32"},
        {"rt.i32", "= -2147483648 (i32) does not fit a u32"},
        {"rt.i64", "= -9223372036854775808 (i64) does not fit a u32"},
        {"rt.u64", "= 18446744073709551615 (u64) does not fit a u32"},
        {"get.u64.big", "= 4294967296 (u64) does not fit a u32"},
        {"rt.bool.true", "is a bool, not an integer"},
        {"rt.f32", "is a f32, not an integer"},
        {"rt.string", "is a string, not an integer"},
        {"rt.array.u32", "is a array, not an integer"},
        {"no.such.key", "is missing"},
    };
    for (size_t i = 0; i < COUNT(bad_u32); i++) {
        q35_error err = {{0}};
        uint32_t v = 0xdeadbeef;
        const int rc = q35_gguf_get_u32(g, bad_u32[i].key, &v, &err);
        q35_case(s, rc == -1 && v == 0xdeadbeef && strstr(err.msg, bad_u32[i].key) && strstr(err.msg, bad_u32[i].want),
                 "get_u32(%s) refused: %s", bad_u32[i].key, err.msg);
    }
    static const struct { const char *key; float want; } ok_f32[] = {
        {"rt.f32", 3.25f}, {"get.f64", 0.25f}, {"rt.f32.nan", NAN},
    };
    for (size_t i = 0; i < COUNT(ok_f32); i++) {
        q35_error err = {{0}};
        float v = 0.0f;
        const int rc = q35_gguf_get_f32(g, ok_f32[i].key, &v, &err);
        q35_case(s, rc == 0 && (memcmp(&v, &ok_f32[i].want, 4) == 0 || (isnan(v) && isnan(ok_f32[i].want))),
                 "get_f32(%s) = %g", ok_f32[i].key, (double)v);
    }
    static const struct { const char *key, *want; } bad_f32[] = {
        {"rt.u32", "is a u32, not a float"}, {"rt.string", "is a string, not a float"}, {"no.such.key", "is missing"},
    };
    for (size_t i = 0; i < COUNT(bad_f32); i++) {
        q35_error err = {{0}};
        float v = 1.5f;
        const int rc = q35_gguf_get_f32(g, bad_f32[i].key, &v, &err);
        q35_case(s, rc == -1 && v == 1.5f && strstr(err.msg, bad_f32[i].key) && strstr(err.msg, bad_f32[i].want),
                 "get_f32(%s) refused: %s", bad_f32[i].key, err.msg);
    }
    {
        q35_error err = {{0}};
        q35_gguf_str a = {0}, e = {0};
        const int rc = q35_gguf_get_str(g, "rt.string", &a, &err) | q35_gguf_get_str(g, "rt.string.empty", &e, &err);
        q35_case(s, rc == 0 && a.len == strlen(RT_STRING) && memcmp(a.data, RT_STRING, a.len) == 0 && e.len == 0,
                 "get_str(rt.string) = \"%.*s\", get_str(rt.string.empty) has length %" PRIu64, (int)a.len,
                 a.data ? a.data : "", e.len);
    }
    static const struct { const char *key, *want; } bad_str[] = {
        {"rt.u32", "is a u32, not a string"}, {"rt.array.string", "is a array, not a string"},
        {"no.such.key", "is missing"},
    };
    for (size_t i = 0; i < COUNT(bad_str); i++) {
        q35_error err = {{0}};
        q35_gguf_str v = {7, NULL};
        const int rc = q35_gguf_get_str(g, bad_str[i].key, &v, &err);
        q35_case(s, rc == -1 && v.len == 7 && strstr(err.msg, bad_str[i].key) && strstr(err.msg, bad_str[i].want),
                 "get_str(%s) refused: %s", bad_str[i].key, err.msg);
    }
    /* q35_gguf_format_value and q35_gguf_array_int on what was written. */
    static const struct { const char *key, *want; } shown[] = {
        {"rt.u32", "4294967295"}, {"rt.i64", "-9223372036854775808"}, {"rt.u64", "18446744073709551615"},
        {"rt.bool.false", "false"}, {"rt.f32", "3.25"}, {"rt.string.empty", "\"\""},
        {"rt.array.i8", "[-128, 127, -1, 0]"}, {"rt.array.string", "[string x 4]"}, {"rt.empty.u16", "[]"},
    };
    for (size_t i = 0; i < COUNT(shown); i++) {
        char buf[128] = "";
        const q35_gguf_kv *kv = q35_gguf_find(g, shown[i].key);
        if (kv)
            q35_gguf_format_value(kv, buf, sizeof buf);
        q35_case(s, kv && strcmp(buf, shown[i].want) == 0, "format_value(%s) = %s (want %s)", shown[i].key, buf,
                 shown[i].want);
    }
    const q35_gguf_kv *i16 = q35_gguf_find(g, "rt.array.i16");
    q35_case(s, i16 && q35_gguf_array_int(i16, 0) == -32768 && q35_gguf_array_int(i16, 2) == -2,
             "array_int(rt.array.i16) sign-extends: [0] = %" PRId64, i16 ? q35_gguf_array_int(i16, 0) : 0);
    q35_case(s, !q35_gguf_find(g, "no.such.key") && !q35_gguf_find_tensor(g, "no.such.tensor"),
             "find and find_tensor return NULL for an absent name");
}

/* The writer refuses what the reader would refuse. */
static void check_writer_refusals(q35_suite *s)
{
    q35_gguf_writer *w = q35_gguf_writer_new();
    if (!q35_case(s, w != NULL, "writer: new"))
        return;
    q35_error err = {{0}};
    const int64_t ne_ok[4] = {256, 2, 1, 1};
    int rc = q35_gguf_writer_set_u32(w, "a", 1, &err) || q35_gguf_writer_add_tensor(w, "t", Q35_TYPE_Q4_K, 2, ne_ok, &err) != 0;
    q35_case(s, rc == 0, "writer: a key and a q4_K tensor accepted %s", err.msg);
    static const struct { const char *name; uint32_t type, n_dims; int64_t ne[4]; const char *want; } bad_t[] = {
        {"t", Q35_TYPE_F32, 1, {4}, "duplicate tensor name 't'"},
        {"", Q35_TYPE_F32, 1, {4}, "is empty or longer than 256"},
        {"u", Q35_TYPE_F32, 0, {4}, "n_dims 0 outside 1..4"},
        {"u", Q35_TYPE_F32, 5, {4, 1, 1, 1}, "n_dims 5 outside 1..4"},
        {"u", 77, 1, {4}, "type 77 is no ggml type"},
        {"u", Q35_TYPE_F32, 2, {4, 0}, "dimension 1 = 0 is not positive"},
        {"u", Q35_TYPE_Q4_K, 1, {100}, "row of 100 is not a whole number of q4_K blocks (256)"},
        {"u", Q35_TYPE_F32, 3, {1ll << 31, 1ll << 31, 4}, "overflow"},
        {"u", Q35_TYPE_F64, 1, {1ll << 62}, "overflow"},
        {"u", Q35_TYPE_F64, 1, {(1ll << 61) + 1}, "overflow"},
    };
    for (size_t i = 0; i < COUNT(bad_t); i++) {
        err.msg[0] = '\0';
        const int64_t idx = q35_gguf_writer_add_tensor(w, bad_t[i].name, bad_t[i].type, bad_t[i].n_dims, bad_t[i].ne, &err);
        q35_case(s, idx == -1 && strstr(err.msg, bad_t[i].want), "writer refuses tensor '%s' %s [%" PRId64 ", ...]: %s",
                 bad_t[i].name, q35_type_name(bad_t[i].type), bad_t[i].ne[0], err.msg);
    }
    err.msg[0] = '\0';
    rc = q35_gguf_writer_set_u32(w, "a", 2, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "duplicate key 'a'"), "writer refuses a duplicate key: %s", err.msg);
    err.msg[0] = '\0';
    rc = q35_gguf_writer_set_u32(w, "", 2, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "is empty or longer"), "writer refuses an empty key: %s", err.msg);
    err.msg[0] = '\0';
    rc = q35_gguf_writer_set_array(w, "nested", Q35_GGUF_ARRAY, NULL, 0, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "arrays of array"), "writer refuses a nested array: %s", err.msg);
    err.msg[0] = '\0';
    rc = q35_gguf_writer_set(w, "arr", Q35_GGUF_ARRAY, NULL, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "set_array"), "writer refuses set(ARRAY): %s", err.msg);
    err.msg[0] = '\0';
    rc = q35_gguf_writer_set_alignment(w, 64, &err);
    q35_case(s, rc == -1 && strstr(err.msg, "before adding tensors"), "writer refuses an alignment after tensors: %s",
             err.msg);
    q35_gguf_writer_free(w);
    w = q35_gguf_writer_new();
    err.msg[0] = '\0';
    rc = w ? q35_gguf_writer_set_alignment(w, 48, &err) : 0;
    q35_case(s, rc == -1 && strstr(err.msg, "48 is not a power of two"), "writer refuses alignment 48: %s", err.msg);
    q35_gguf_writer_free(w);
}

/* Images with nothing in them: no kvs and no tensors, tensors only, kvs only. */
static void check_sparse_images(q35_suite *s)
{
    static const struct { const char *what; bool kv, tensor; } shapes[] = {
        {"no kvs, no tensors", false, false}, {"a tensor, no kvs", false, true}, {"kvs, no tensors", true, false},
    };
    for (size_t i = 0; i < COUNT(shapes); i++) {
        q35_error err = {{0}};
        q35_gguf_writer *w = q35_gguf_writer_new();
        const int64_t ne[1] = {32};
        uint8_t *data[1] = {NULL};
        bytes img = {0};
        q35_gguf *g = NULL;
        int rc = !w;
        if (!rc && shapes[i].kv)
            rc = q35_gguf_writer_set_str(w, "general.name", "", &err) || q35_gguf_writer_set_f32(w, "x", 1.0f, &err);
        if (!rc && shapes[i].tensor)
            rc = q35_gguf_writer_add_tensor(w, "t", Q35_TYPE_Q8_0, 1, ne, &err) != 0 || pattern_data(w, 1, data);
        if (!rc)
            rc = writer_image(w, (const void *const *)data, shapes[i].tensor, &img, &err) ||
                 open_copy(&g, img.p, img.len, &err);
        q35_case(s, rc == 0 && g->n_kv == (shapes[i].kv ? 2u : 0u) && g->n_tensors == (shapes[i].tensor ? 1u : 0u) &&
                        g->data_offset == q35_gguf_writer_data_offset(w) &&
                        (!shapes[i].tensor || memcmp(g->tensors[0].data, data[0], 34) == 0),
                 "%s: %" PRIu64 "-byte image opens %s", shapes[i].what, img.len, err.msg);
        q35_gguf_close(g);
        bytes_free(&img);
        free(data[0]);
        q35_gguf_writer_free(w);
    }
}

static void suite_round_trip(q35_suite *s, uint64_t seed)
{
    printf("-- round trip: writer -> q35_gguf_open (file) and q35_gguf_open_memory\n");
    q35_error err = {{0}};
    kv_list *kvs = calloc(1, sizeof *kvs);
    char *long_key = malloc(Q35_GGUF_MAX_KEY + 1);
    char long_name[Q35_GGUF_MAX_NAME + 1];
    if (!q35_case(s, kvs && long_key, "round trip: allocations")) {
        free(kvs);
        free(long_key);
        return;
    }
    memset(long_key, 'k', Q35_GGUF_MAX_KEY);
    memcpy(long_key, "rt.longest.key.", 15);
    long_key[Q35_GGUF_MAX_KEY] = '\0';
    memset(long_name, 'n', Q35_GGUF_MAX_NAME);
    memcpy(long_name, "longest.name.", 13);
    long_name[Q35_GGUF_MAX_NAME] = '\0';

    add_kv(kvs, (rt_kv){.key = "general.alignment", .type = Q35_GGUF_U32, .value = &k_align64});
    add_every_type(kvs);
    for (size_t i = 0; i < COUNT(k_getter_kvs); i++)
        add_kv(kvs, k_getter_kvs[i]);
    add_kv(kvs, (rt_kv){.key = long_key, .type = Q35_GGUF_STRING, .value = "the longest key"});
    const rt_tensor ts[] = {
        {"token_embd.weight", Q35_TYPE_F32, 1, {7}},
        {"blk.0.attn_qkv.weight", Q35_TYPE_F16, 2, {3, 5}},
        {"blk.0.ffn_up.weight", Q35_TYPE_Q8_0, 3, {64, 3, 2}},
        {"blk.1.ffn_down.weight", Q35_TYPE_Q4_K, 4, {256, 2, 1, 3}},
        {"blk.1.attn_v.weight", Q35_TYPE_Q6_K, 2, {512, 1}},
        {"blk.1.norm", Q35_TYPE_BF16, 4, {1, 1, 1, 1}},
        {"positions", Q35_TYPE_I32, 1, {19}},
        {"x.q2_K", Q35_TYPE_Q2_K, 2, {256, 3}},
        {"x.mxfp4", Q35_TYPE_MXFP4, 1, {96}},
        {"x.f64", Q35_TYPE_F64, 3, {3, 1, 2}},
        {long_name, Q35_TYPE_Q5_0, 2, {32, 5}},
    };
    const int64_t n_t = (int64_t)COUNT(ts);

    q35_gguf_writer *w = q35_gguf_writer_new();
    int rc = !w || q35_gguf_writer_set_alignment(w, 64, &err) || write_kvs(w, kvs, &err) ||
             add_tensors(w, ts, n_t, &err);
    q35_case(s, rc == 0, "writer takes %zu kvs (every type, empty arrays, a %d-byte key) and %" PRId64
             " tensors (1..4 dims, a %d-byte name), alignment 64 %s", kvs->n, Q35_GGUF_MAX_KEY, n_t,
             Q35_GGUF_MAX_NAME, err.msg);
    uint8_t *data[COUNT(ts)] = {NULL};
    q35_rng rng;
    q35_rng_seed(&rng, seed);
    for (int64_t i = 0; i < n_t && rc == 0; i++) {
        const uint64_t n = q35_gguf_writer_tensor_bytes(w, i);
        data[i] = malloc(n);
        rc = !data[i];
        for (uint64_t j = 0; j < n && data[i]; j++)
            data[i][j] = (uint8_t)q35_rng_next(&rng);
    }
    bytes img = {0};
    if (rc == 0)
        rc = writer_image(w, (const void *const *)data, n_t, &img, &err);

    /* Through a file and the mmap path. */
    char path[512];
    const char *tmp = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/q35_test_gguf_XXXXXX", tmp && *tmp ? tmp : "/tmp");
    const int fd = rc == 0 ? mkstemp(path) : -1;
    if (fd >= 0)
        close(fd);
    size_t file_bytes = 0;
    void *file = NULL;
    if (fd >= 0 && q35_gguf_writer_write_file(w, path, (const void *const *)data, &err) == 0)
        file = q35_read_file(path, &file_bytes);
    q35_case(s, file && file_bytes == img.len && memcmp(file, img.p, img.len) == 0,
             "write_file writes the %" PRIu64 " bytes write_header + data lay out (%zu) %s", img.len, file_bytes,
             err.msg);
    free(file);
    q35_gguf *g = NULL;
    err.msg[0] = '\0';
    if (q35_case(s, fd >= 0 && q35_gguf_open(&g, path, &err) == 0, "q35_gguf_open(%s) %s", path, err.msg)) {
        q35_case(s, strcmp(g->source, path) == 0 && g->map && g->size == img.len, "[file] source, map and size");
        check_read_back(s, "[file]", g, kvs, ts, n_t, w, data);
    }
    q35_gguf_close(g);
    if (fd >= 0)
        unlink(path);

    /* Through memory, the image left the caller's, then taken. */
    g = NULL;
    err.msg[0] = '\0';
    if (q35_case(s, rc == 0 && q35_gguf_open_memory(&g, img.p, img.len, false, &err) == 0,
                 "q35_gguf_open_memory(%" PRIu64 " bytes) %s", img.len, err.msg)) {
        q35_case(s, strcmp(g->source, "<memory>") == 0 && !g->map && !g->owned && g->base == img.p,
                 "[memory] source, no map, image not owned");
        check_read_back(s, "[memory]", g, kvs, ts, n_t, w, data);
        check_getters(s, g);
    }
    q35_gguf_close(g);
    g = NULL;
    const int took = rc == 0 ? open_copy(&g, img.p, img.len, &err) : -1;
    q35_case(s, took == 0 && g->owned == g->base,
             "q35_gguf_open_memory(take) owns the image (freed by close; ASan checks) %s", err.msg);
    q35_gguf_close(g);

    bytes_free(&img);
    free_data(data, n_t);
    q35_gguf_writer_free(w);
    free(long_key);
    free(kvs);
    check_sparse_images(s);
    check_writer_refusals(s);
}

/* ---- the valid image of the truncation sweep and the fuzz seed -------------- */

/* Every scalar type, arrays of each (empty ones, strings with empty strings) and
 * three tensors; deterministic, under 4 KiB. *infos_end is the end of the last
 * tensor info (where the padding before the data section starts). */
static int rich_image(bytes *out, uint64_t *infos_end, q35_error *err)
{
    static const rt_tensor ts[] = {
        {"token_embd.weight", Q35_TYPE_F32, 1, {5}},
        {"blk.0.ffn_up.weight", Q35_TYPE_Q8_0, 2, {32, 2}},
        {"output_norm.weight", Q35_TYPE_F16, 2, {3, 3}},
    };
    kv_list *kvs = calloc(1, sizeof *kvs);
    q35_gguf_writer *w = q35_gguf_writer_new();
    uint8_t *data[COUNT(ts)] = {NULL};
    memset(out, 0, sizeof *out);
    int rc = !kvs || !w;
    if (rc == 0) {
        add_kv(kvs, (rt_kv){.key = "general.architecture", .type = Q35_GGUF_STRING, .value = "qwen35"});
        add_every_type(kvs);
        rc = write_kvs(w, kvs, err) || add_tensors(w, ts, COUNT(ts), err) || pattern_data(w, COUNT(ts), data) ||
             writer_image(w, (const void *const *)data, COUNT(ts), out, err);
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
    free_data(data, COUNT(ts));
    q35_gguf_writer_free(w);
    free(kvs);
    return rc ? -1 : 0;
}

/* Every prefix of the rich image fails cleanly; the whole image opens. */
static void suite_truncation(q35_suite *s)
{
    printf("-- truncation: every prefix of a valid image\n");
    q35_error err = {{0}};
    bytes img;
    uint64_t infos_end = 0;
    const int built = rich_image(&img, &infos_end, &err);
    if (!q35_case(s, built == 0 && img.len < CORPUS_MAX_BYTES,
                  "valid image: %" PRIu64 " bytes, tensor infos end at %" PRIu64 " %s", img.len, infos_end, err.msg)) {
        bytes_free(&img);
        return;
    }
    q35_gguf *whole = NULL;
    const int whole_rc = open_copy(&whole, img.p, img.len, &err);
    const uint64_t data_offset = whole_rc == 0 ? whole->data_offset : 0;
    q35_case(s, whole_rc == 0 && whole->n_tensors == 3 && whole->n_kv > 24,
             "the whole image (%" PRIu64 " bytes) opens: %" PRIu64 " kvs, %" PRIu64 " tensors, data at %" PRIu64
             " %s", img.len, whole_rc == 0 ? whole->n_kv : 0, whole_rc == 0 ? whole->n_tensors : 0, data_offset,
             err.msg);
    q35_gguf_close(whole);
    if (whole_rc != 0) {
        bytes_free(&img);
        return;
    }
    /* Three spans of prefix: the header (cut inside a field or leaving a count
     * more than the rest could hold), the padding before the data section, and
     * the tensor data. */
    int64_t n[3] = {0}, bad[3] = {0}, first_bad[3] = {-1, -1, -1};
    char first_msg[3][256] = {"", "", ""};
    static const char *const want[3] = {"", "the data section would start at offset", "runs past the end of the file"};
    for (uint64_t len = 0; len < img.len; len++) {
        const int span = len < infos_end ? 0 : len < data_offset ? 1 : 2;
        q35_gguf *g = (q35_gguf *)&err; /* not NULL: the reader must clear it */
        err.msg[0] = '\0';
        const int rc = open_copy(&g, img.p, len, &err);
        bool ok = rc == -1 && g == NULL && err.msg[0] && strstr(err.msg, "<memory>");
        if (span == 0)
            ok = ok && (strstr(err.msg, "(truncated)") || strstr(err.msg, "is absurd"));
        else
            ok = ok && strstr(err.msg, want[span]) && strstr(err.msg, "past the end of the file");
        if (rc == 0)
            q35_gguf_close(g);
        n[span]++;
        if (!ok && bad[span]++ == 0) {
            first_bad[span] = (int64_t)len;
            snprintf(first_msg[span], sizeof first_msg[span], "%s", err.msg);
        }
    }
    static const char *const what[3] = {"cut in the header: 'truncated' or 'absurd'",
                                        "cut in the padding: data section past the end",
                                        "cut in the tensor data: tensor past the end"};
    for (int i = 0; i < 3; i++)
        q35_case(s, bad[i] == 0 && n[i] > 0, "%" PRId64 " prefixes %s: %" PRId64 " wrong (first at %" PRId64 ": %s)",
                 n[i], what[i], bad[i], first_bad[i], first_msg[i]);
    bytes_free(&img);
}

/* ---- malformed images ------------------------------------------------------- */

/* A malformed image and the file offset its message must name. */
typedef struct bad_image {
    bytes b;
    uint64_t at;
} bad_image;

/* File offsets of a pair's fields. */
typedef struct kv_at {
    uint64_t key, type, value;
} kv_at;

/* File offsets of a tensor info's fields. */
typedef struct tensor_at {
    uint64_t info, name, n_dims, dims, type, offset;
} tensor_at;

/* The base of the mutations: a small valid image from the writer and where its
 * fields lie (found by parsing it). */
typedef struct base {
    kv_at arch, blocks, flag, arr_u32, arr_str;
    tensor_at t[4];         /* t.f32 f32 [8, 2], t.q4k q4_K [256], t.f64 f64 [4], t.f16 f16 [16] */
    uint64_t infos_end;     /* end of the last tensor info */
    uint64_t data_offset;   /* start of the data section */
} base;

static kv_at locate_kv(const q35_gguf *g, const char *key)
{
    const q35_gguf_kv *kv = q35_gguf_find(g, key);
    kv_at a = {0};
    if (kv) {
        a.key = kv->offset;
        a.type = kv->offset + 8 + strlen(kv->key);
        a.value = a.type + 4;
    }
    return a;
}

static tensor_at locate_tensor(const q35_gguf_tensor *t)
{
    tensor_at a = {.info = t->info_offset, .name = t->info_offset + 8};
    a.n_dims = a.name + strlen(t->name);
    a.dims = a.n_dims + 4;
    a.type = a.dims + 8ull * t->n_dims;
    a.offset = a.type + 4;
    return a;
}

static int base_image(bytes *b, base *f)
{
    static const rt_tensor ts[] = {
        {"t.f32", Q35_TYPE_F32, 2, {8, 2}},
        {"t.q4k", Q35_TYPE_Q4_K, 1, {256}},
        {"t.f64", Q35_TYPE_F64, 1, {4}},
        {"t.f16", Q35_TYPE_F16, 1, {16}},
    };
    static const uint32_t arr[] = {1, 2, 3};
    static const char *const strs[] = {"a", "bc"};
    q35_error err = {{0}};
    q35_gguf_writer *w = q35_gguf_writer_new();
    uint8_t *data[COUNT(ts)] = {NULL};
    int rc = !w || q35_gguf_writer_set_str(w, "general.architecture", "qwen35", &err) ||
             q35_gguf_writer_set_u32(w, "qwen35.block_count", 2, &err) ||
             q35_gguf_writer_set(w, "flag", Q35_GGUF_BOOL, &k_bool[0], &err) ||
             q35_gguf_writer_set_array(w, "arr.u32", Q35_GGUF_U32, arr, COUNT(arr), &err) ||
             q35_gguf_writer_set_array(w, "arr.str", Q35_GGUF_STRING, strs, COUNT(strs), &err) ||
             add_tensors(w, ts, COUNT(ts), &err) || pattern_data(w, COUNT(ts), data) ||
             writer_image(w, (const void *const *)data, COUNT(ts), b, &err);
    free_data(data, COUNT(ts));
    q35_gguf_writer_free(w);
    q35_gguf *g = NULL;
    if (rc == 0)
        rc = q35_gguf_open_memory(&g, b->p, b->len, false, &err);
    if (rc != 0) {
        fprintf(stderr, "base image: %s\n", err.msg);
        return -1;
    }
    f->arch = locate_kv(g, "general.architecture");
    f->blocks = locate_kv(g, "qwen35.block_count");
    f->flag = locate_kv(g, "flag");
    f->arr_u32 = locate_kv(g, "arr.u32");
    f->arr_str = locate_kv(g, "arr.str");
    for (int i = 0; i < 4; i++)
        f->t[i] = locate_tensor(&g->tensors[i]);
    f->infos_end = f->t[3].offset + 8;
    f->data_offset = g->data_offset;
    q35_gguf_close(g);
    return 0;
}

/* The 24-byte header of a hand-built image. */
static void raw_header(bytes *b, uint32_t version, uint64_t n_tensors, uint64_t n_kv)
{
    put_bytes(b, "GGUF", 4);
    put_u32(b, version);
    put_u64(b, n_tensors);
    put_u64(b, n_kv);
}

/* A hand-built image with one pair "general.alignment" of type `type` holding v. */
static int raw_alignment(bad_image *x, q35_gguf_vtype type, uint64_t v)
{
    raw_header(&x->b, 3, 0, 1);
    x->at = x->b.len;
    put_str(&x->b, "general.alignment");
    put_u32(&x->b, type);
    put_bytes(&x->b, &v, q35_gguf_vtype_size(type));
    put_zeros(&x->b, 16);
    return 0;
}

static int bad_empty_file(bad_image *x)
{
    x->at = 0;
    return 0;
}

static int bad_magic_truncated(bad_image *x)
{
    put_bytes(&x->b, "GGU", 3);
    x->at = 0;
    return 0;
}

static int bad_magic(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    memcpy(x->b.p, "GGML", 4);
    x->at = 0;
    return 0;
}

static int with_version(bad_image *x, uint32_t version)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u32(&x->b, 4, version);
    x->at = 4;
    return 0;
}

static int bad_version_1(bad_image *x) { return with_version(x, 1); }
static int bad_version_4(bad_image *x) { return with_version(x, 4); }
static int bad_version_2_big_endian(bad_image *x) { return with_version(x, 0x02000000u); }
static int bad_version_3_big_endian(bad_image *x) { return with_version(x, 0x03000000u); }

static int bad_tensor_count_absurd(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, 8, UINT64_MAX);
    x->at = 8;
    return 0;
}

static int bad_kv_count_absurd(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, 16, UINT64_MAX);
    x->at = 16;
    return 0;
}

static int bad_kv_count_truncated(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    x->b.len = 20;
    x->at = 16;
    return 0;
}

static int bad_key_past_end(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, f.arch.key, 60000);
    x->at = f.arch.key + 8;
    return 0;
}

static int bad_key_over_limit(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, f.arch.key, Q35_GGUF_MAX_KEY + 1);
    x->at = f.arch.key;
    return 0;
}

static int bad_key_empty(bad_image *x)
{
    raw_header(&x->b, 3, 0, 1);
    x->at = x->b.len;
    put_str(&x->b, "");
    put_u32(&x->b, Q35_GGUF_U32);
    put_u32(&x->b, 1);
    put_zeros(&x->b, 16);
    return 0;
}

static int bad_key_nul(bad_image *x)
{
    raw_header(&x->b, 3, 0, 1);
    x->at = x->b.len;
    put_u64(&x->b, 3);
    put_bytes(&x->b, "a\0b", 3);
    put_u32(&x->b, Q35_GGUF_U32);
    put_u32(&x->b, 1);
    put_zeros(&x->b, 16);
    return 0;
}

static int bad_key_duplicate(bad_image *x)
{
    raw_header(&x->b, 3, 0, 2);
    put_str(&x->b, "qwen35.block_count");
    put_u32(&x->b, Q35_GGUF_U32);
    put_u32(&x->b, 1);
    x->at = x->b.len;
    put_str(&x->b, "qwen35.block_count");
    put_u32(&x->b, Q35_GGUF_U32);
    put_u32(&x->b, 2);
    put_zeros(&x->b, 16);
    return 0;
}

static int bad_value_type_unknown(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u32(&x->b, f.blocks.type, Q35_GGUF_VTYPE_COUNT);
    x->at = f.blocks.type;
    return 0;
}

static int bad_string_value_past_end(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, f.arch.value, UINT64_MAX);
    x->at = f.arch.value + 8;
    return 0;
}

static int bad_bool_not_0_1(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    x->b.p[f.flag.value] = 2;
    x->at = f.flag.value;
    return 0;
}

static int bad_bool_array_not_0_1(bad_image *x)
{
    static const uint8_t v[] = {1, 0, 7};
    raw_header(&x->b, 3, 0, 1);
    put_str(&x->b, "flags");
    put_u32(&x->b, Q35_GGUF_ARRAY);
    put_u32(&x->b, Q35_GGUF_BOOL);
    put_u64(&x->b, COUNT(v));
    x->at = x->b.len + 2;
    put_bytes(&x->b, v, sizeof v);
    put_zeros(&x->b, 16);
    return 0;
}

static int bad_array_type_unknown(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u32(&x->b, f.arr_u32.value, Q35_GGUF_VTYPE_COUNT);
    x->at = f.arr_u32.value;
    return 0;
}

static int bad_array_nested(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u32(&x->b, f.arr_u32.value, Q35_GGUF_ARRAY);
    x->at = f.arr_u32.value;
    return 0;
}

static int bad_array_count_absurd(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, f.arr_u32.value + 4, UINT64_MAX);
    x->at = f.arr_u32.value + 4;
    return 0;
}

static int bad_array_string_absurd(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    const uint64_t second = f.arr_str.value + 4 + 8 + 8 + 1; /* elem type, count, "a" */
    set_u64(&x->b, second, UINT64_MAX);
    x->at = second + 8;
    return 0;
}

static int bad_alignment_not_power_of_two(bad_image *x) { return raw_alignment(x, Q35_GGUF_U32, 48); }
static int bad_alignment_zero(bad_image *x) { return raw_alignment(x, Q35_GGUF_U32, 0); }
static int bad_alignment_wrong_type(bad_image *x) { return raw_alignment(x, Q35_GGUF_U64, 64); }

static int bad_tensor_info_truncated(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    x->b.len = f.t[3].offset;
    x->at = f.t[3].offset;
    return 0;
}

static int bad_tensor_name_empty(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, f.t[0].info, 0);
    x->at = f.t[0].info;
    return 0;
}

static int bad_tensor_name_over_limit(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, f.t[0].info, Q35_GGUF_MAX_NAME + 1);
    x->at = f.t[0].info;
    return 0;
}

static int bad_tensor_name_nul(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    x->b.p[f.t[0].name + 1] = '\0';
    x->at = f.t[0].info;
    return 0;
}

static int with_n_dims(bad_image *x, uint32_t n_dims)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u32(&x->b, f.t[0].n_dims, n_dims);
    x->at = f.t[0].n_dims;
    return 0;
}

static int bad_tensor_n_dims_0(bad_image *x) { return with_n_dims(x, 0); }
static int bad_tensor_n_dims_5(bad_image *x) { return with_n_dims(x, 5); }

static int bad_tensor_dim_zero(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, f.t[0].dims + 8, 0);
    x->at = f.t[0].dims + 8;
    return 0;
}

static int bad_tensor_dims_overflow(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, f.t[0].dims, 1ull << 32);
    set_u64(&x->b, f.t[0].dims + 8, 1ull << 32);
    x->at = f.t[0].dims + 8;
    return 0;
}

static int bad_tensor_dim_over_int64(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, f.t[0].dims, 1ull << 63);
    x->at = f.t[0].dims;
    return 0;
}

static int with_tensor_type(bad_image *x, uint32_t type)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u32(&x->b, f.t[0].type, type);
    x->at = f.t[0].type;
    return 0;
}

static int bad_tensor_type_unknown(bad_image *x) { return with_tensor_type(x, 77); }
static int bad_tensor_type_removed(bad_image *x) { return with_tensor_type(x, 4); } /* ggml's retired Q4_2 */

static int bad_tensor_row_partial_block(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, f.t[1].dims, 100); /* q4_K: blocks of 256 */
    x->at = f.t[1].dims;
    return 0;
}

/* An f64 row of 2^61 + 1 elements is 2^64 + 8 bytes: a reader that lets the
 * product wrap sizes it at 8 bytes and accepts it. */
static int bad_tensor_row_bytes_wrap(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, f.t[2].dims, (1ull << 61) + 1);
    x->at = f.t[2].dims;
    return 0;
}

/* An f64 row of 2^62 elements is 2^65 bytes, which wraps to 0. */
static int bad_tensor_row_bytes_zero(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, f.t[2].dims, 1ull << 62);
    x->at = f.t[2].dims;
    return 0;
}

/* 2^31 x 2^31 f32 elements fit an int64 but their 2^64 bytes do not fit a u64. */
static int bad_tensor_bytes_overflow(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, f.t[0].dims, 1ull << 31);
    set_u64(&x->b, f.t[0].dims + 8, 1ull << 31);
    x->at = f.t[0].dims;
    return 0;
}

static int bad_tensor_offset_misaligned(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, f.t[1].offset, get_u64(&x->b, f.t[1].offset) + 8);
    x->at = f.t[1].info;
    return 0;
}

static int bad_tensor_past_end(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, f.t[3].offset, 4096);
    x->at = f.t[3].info;
    return 0;
}

static int bad_tensor_offset_absurd(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, f.t[3].offset, UINT64_MAX - 31); /* aligned, and offset + bytes wraps */
    x->at = f.t[3].info;
    return 0;
}

static int bad_tensors_overlap(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    set_u64(&x->b, f.t[1].offset, 32); /* inside t.f32 [0, 64) */
    x->at = f.t[1].info;
    return 0;
}

static int bad_tensor_name_duplicate(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    memcpy(x->b.p + f.t[3].name, "t.f32", 5);
    x->at = f.t[3].info;
    return 0;
}

static int bad_data_section_past_end(bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    if (f.infos_end % Q35_GGUF_DEFAULT_ALIGNMENT == 0)
        return -1; /* the base must leave padding before its data section */
    x->b.len = f.infos_end;
    x->at = f.data_offset;
    return 0;
}

/* One malformed image: its corpus name, how it is built, what the message says. */
typedef struct bad_case {
    const char *name;
    int (*build)(bad_image *x);
    const char *want;
} bad_case;

static const bad_case k_bad[] = {
    /* header */
    {"empty_file", bad_empty_file, "0 bytes"},
    {"magic_truncated", bad_magic_truncated, "magic at offset 0 needs 4 bytes"},
    {"bad_magic", bad_magic, "bad magic 0x4c4d4747 at offset 0"},
    {"version_1", bad_version_1, "version 1 at offset 4 (32-bit counts) is not supported"},
    {"version_4", bad_version_4, "version 4 at offset 4 is not supported"},
    {"version_2_big_endian", bad_version_2_big_endian, "version at offset 4 is byte-swapped"},
    {"version_3_big_endian", bad_version_3_big_endian, "version at offset 4 is byte-swapped"},
    {"tensor_count_absurd", bad_tensor_count_absurd, "tensor_count 18446744073709551615 at offset 8 is absurd"},
    {"kv_count_absurd", bad_kv_count_absurd, "kv_count 18446744073709551615 at offset 16 is absurd"},
    {"kv_count_truncated", bad_kv_count_truncated, "kv_count at offset 16 needs 8 bytes"},
    /* metadata */
    {"key_past_end", bad_key_past_end, "key at offset 32 needs 60000 bytes"},
    {"key_over_limit", bad_key_over_limit, "key at offset 24 has length 65536, over the limit of 65535"},
    {"key_empty", bad_key_empty, "kv pair 0 at offset 24 has an empty key"},
    {"key_nul", bad_key_nul, "key at offset 24 contains a NUL byte"},
    {"key_duplicate", bad_key_duplicate, "duplicate key 'qwen35.block_count' at offsets 24 and"},
    {"value_type_unknown", bad_value_type_unknown, "key 'qwen35.block_count': value type 13 at offset"},
    {"string_value_past_end", bad_string_value_past_end, "string value at offset"},
    {"bool_not_0_1", bad_bool_not_0_1, "key 'flag': bool at offset"},
    {"bool_array_not_0_1", bad_bool_array_not_0_1, "key 'flags': bool at offset 55 holds 7, not 0 or 1"},
    {"array_type_unknown", bad_array_type_unknown, "key 'arr.u32': array element type 13 at offset"},
    {"array_nested", bad_array_nested, "key 'arr.u32': nested arrays (offset"},
    {"array_count_absurd", bad_array_count_absurd, "key 'arr.u32': array count 18446744073709551615 at offset"},
    {"array_string_absurd", bad_array_string_absurd, "array string at offset"},
    {"alignment_not_power_of_two", bad_alignment_not_power_of_two,
     "general.alignment 48 at offset 24 is not a power of two"},
    {"alignment_zero", bad_alignment_zero, "general.alignment 0 at offset 24 is not a power of two"},
    {"alignment_wrong_type", bad_alignment_wrong_type, "general.alignment at offset 24 is a u64, not a u32"},
    /* tensor infos */
    {"tensor_info_truncated", bad_tensor_info_truncated, "tensor offset at offset"},
    {"tensor_name_empty", bad_tensor_name_empty, "tensor 0 at offset"},
    {"tensor_name_over_limit", bad_tensor_name_over_limit, "has length 257, over the limit of 256"},
    {"tensor_name_nul", bad_tensor_name_nul, "contains a NUL byte"},
    {"tensor_n_dims_0", bad_tensor_n_dims_0, "tensor 't.f32': n_dims 0 at offset"},
    {"tensor_n_dims_5", bad_tensor_n_dims_5, "tensor 't.f32': n_dims 5 at offset"},
    {"tensor_dim_zero", bad_tensor_dim_zero, "tensor 't.f32': dimension 1 = 0 at offset"},
    {"tensor_dims_overflow", bad_tensor_dims_overflow, "tensor 't.f32': dimension 1 = 4294967296 at offset"},
    {"tensor_dim_over_int64", bad_tensor_dim_over_int64, "tensor 't.f32': dimension 0 = 9223372036854775808 at offset"},
    {"tensor_type_unknown", bad_tensor_type_unknown, "tensor 't.f32': type 77 at offset"},
    {"tensor_type_removed", bad_tensor_type_removed, "tensor 't.f32': type 4 at offset"},
    {"tensor_row_partial_block", bad_tensor_row_partial_block,
     "tensor 't.q4k': row of 100 elements (dimension 0 at offset"},
    {"tensor_row_bytes_wrap", bad_tensor_row_bytes_wrap, "tensor 't.f64': byte size of f64"},
    {"tensor_row_bytes_zero", bad_tensor_row_bytes_zero, "tensor 't.f64': byte size of f64"},
    {"tensor_bytes_overflow", bad_tensor_bytes_overflow, "tensor 't.f32': byte size of f32"},
    /* the data section */
    {"tensor_offset_misaligned", bad_tensor_offset_misaligned, "is not a multiple of the alignment 32"},
    {"tensor_past_end", bad_tensor_past_end, "tensor 't.f16' (info at offset"},
    {"tensor_offset_absurd", bad_tensor_offset_absurd, "32 bytes at offset 18446744073709551584 of the data section"},
    {"tensors_overlap", bad_tensors_overlap, "tensors 't.f32' [0, 64) and 't.q4k' [32, 176) overlap"},
    {"tensor_name_duplicate", bad_tensor_name_duplicate, "duplicate tensor name 't.f32' (infos at offsets"},
    {"data_section_past_end", bad_data_section_past_end, "the data section would start at offset"},
};

static int build_bad(const bad_case *c, bad_image *x)
{
    memset(x, 0, sizeof *x);
    if (c->build(x) != 0 || x->b.oom) {
        bytes_free(&x->b);
        return -1;
    }
    return 0;
}

static void suite_malformed(q35_suite *s)
{
    printf("-- malformed images: refused with the field and its file offset\n");
    for (size_t i = 0; i < COUNT(k_bad); i++) {
        const bad_case *c = &k_bad[i];
        bad_image x;
        if (build_bad(c, &x) != 0) {
            q35_case(s, false, "%s: the image cannot be built", c->name);
            continue;
        }
        q35_error err = {{0}};
        q35_gguf *g = (q35_gguf *)&err; /* not NULL: the reader must clear it */
        const int rc = open_copy(&g, x.b.p, x.b.len, &err);
        q35_case(s, rc == -1 && g == NULL && strstr(err.msg, c->want) && names_offset(err.msg, x.at) &&
                        x.b.len < CORPUS_MAX_BYTES,
                 "%-26s (%4" PRIu64 " bytes, field at %" PRIu64 "): %s", c->name, x.b.len, x.at, err.msg);
        if (rc == 0)
            q35_gguf_close(g);
        bytes_free(&x.b);
    }
}

/* ---- the committed corpus --------------------------------------------------- */

static int write_corpus(const char *dir)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/MANIFEST", dir);
    FILE *m = fopen(path, "w");
    if (!m) {
        fprintf(stderr, "cannot create %s: %s\n", path, strerror(errno));
        return 1;
    }
    fprintf(m, "# Malformed GGUF files, each refused by the reader with the message substring after\n"
               "# the file name. Written by `test_gguf --write-corpus DIR` from its table; checked by\n"
               "# test_gguf through q35_gguf_open. Seeds of the fuzz_gguf ctest.\n");
    int rc = 0;
    for (size_t i = 0; i < COUNT(k_bad) && rc == 0; i++) {
        bad_image x;
        if (build_bad(&k_bad[i], &x) != 0) {
            fprintf(stderr, "%s: cannot build\n", k_bad[i].name);
            rc = 1;
            break;
        }
        snprintf(path, sizeof path, "%s/%s.gguf", dir, k_bad[i].name);
        if (write_bytes(path, x.b.p, x.b.len) != 0) {
            fprintf(stderr, "cannot write %s: %s\n", path, strerror(errno));
            rc = 1;
        }
        fprintf(m, "%s.gguf %s\n", k_bad[i].name, k_bad[i].want);
        printf("wrote %s (%" PRIu64 " bytes)\n", path, x.b.len);
        bytes_free(&x.b);
    }
    if (fclose(m) != 0)
        rc = 1;
    return rc;
}

static int write_seed(const char *path)
{
    q35_error err = {{0}};
    bytes img;
    uint64_t infos_end;
    if (rich_image(&img, &infos_end, &err) != 0 || write_bytes(path, img.p, img.len) != 0) {
        fprintf(stderr, "cannot write %s: %s\n", path, err.msg[0] ? err.msg : strerror(errno));
        bytes_free(&img);
        return 1;
    }
    printf("wrote %s (%" PRIu64 " bytes)\n", path, img.len);
    bytes_free(&img);
    return 0;
}

static const bad_case *find_bad(const char *file)
{
    for (size_t i = 0; i < COUNT(k_bad); i++) {
        const size_t n = strlen(k_bad[i].name);
        if (strncmp(file, k_bad[i].name, n) == 0 && strcmp(file + n, ".gguf") == 0)
            return &k_bad[i];
    }
    return NULL;
}

static void suite_corpus(q35_suite *s)
{
    printf("-- the corpus %s through q35_gguf_open (regenerate: test_gguf --write-corpus %s)\n", CORPUS_DIR,
           CORPUS_DIR);
    char dir[1024], path[1200];
    q35_repo_path(CORPUS_DIR, dir, sizeof dir);
    snprintf(path, sizeof path, "%s/MANIFEST", dir);
    size_t size = 0;
    char *manifest = q35_read_file(path, &size);
    if (!q35_case(s, manifest != NULL, "%s readable", path))
        return;
    manifest[size] = '\0';
    bool listed[COUNT(k_bad)] = {false};
    char *save = NULL;
    int n_listed = 0;
    for (char *line = strtok_r(manifest, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        if (line[0] == '#' || line[0] == '\0')
            continue;
        char *want = strchr(line, ' ');
        if (!want) {
            q35_case(s, false, "MANIFEST line '%s' is not '<file> <substring>'", line);
            continue;
        }
        *want++ = '\0';
        n_listed++;
        snprintf(path, sizeof path, "%s/%s", dir, line);
        size_t file_bytes = 0;
        void *file = q35_read_file(path, &file_bytes);
        q35_error err = {{0}};
        q35_gguf *g = (q35_gguf *)&err;
        const int rc = q35_gguf_open(&g, path, &err);
        q35_case(s, file && file_bytes < CORPUS_MAX_BYTES && rc == -1 && g == NULL && strstr(err.msg, want),
                 "corpus %-32s (%4zu bytes): %s", line, file_bytes, err.msg);
        if (rc == 0)
            q35_gguf_close(g);
        /* The file is the one the table builds now, listed with the table's substring. */
        const bad_case *c = find_bad(line);
        bad_image x;
        const bool built = c && build_bad(c, &x) == 0;
        q35_case(s, built && strcmp(c->want, want) == 0 && file && x.b.len == file_bytes &&
                        (file_bytes == 0 || memcmp(x.b.p, file, file_bytes) == 0),
                 "corpus %-32s matches the table's case", line);
        if (c)
            listed[c - k_bad] = true;
        if (built)
            bytes_free(&x.b);
        free(file);
    }
    free(manifest);
    int missing = 0;
    for (size_t i = 0; i < COUNT(k_bad); i++)
        missing += !listed[i];
    q35_case(s, missing == 0, "MANIFEST lists all %zu table cases (%d missing)", COUNT(k_bad), missing);
    /* Every .gguf in the directory is listed. */
    DIR *d = opendir(dir);
    int unlisted = 0, n_files = 0;
    for (struct dirent *e = d ? readdir(d) : NULL; e; e = readdir(d)) {
        const size_t n = strlen(e->d_name);
        if (n < 5 || strcmp(e->d_name + n - 5, ".gguf") != 0)
            continue;
        n_files++;
        if (!find_bad(e->d_name)) {
            printf("       %s is not in the table\n", e->d_name);
            unlisted++;
        }
    }
    if (d)
        closedir(d);
    q35_case(s, d && unlisted == 0 && n_files == n_listed,
             "every .gguf in %s is listed: %d files, %d listed, %d unknown", CORPUS_DIR, n_files, n_listed, unlisted);

    /* The fuzz seed is the valid image of the truncation sweep. */
    q35_repo_path(SEED_FILE, path, sizeof path);
    q35_error err = {{0}};
    q35_gguf *g = NULL;
    bytes img = {0};
    uint64_t infos_end;
    size_t seed_bytes = 0;
    void *seed = q35_read_file(path, &seed_bytes);
    const int rc = q35_gguf_open(&g, path, &err);
    q35_case(s, rc == 0 && rich_image(&img, &infos_end, &err) == 0 && seed && seed_bytes == img.len &&
                    memcmp(seed, img.p, img.len) == 0 && seed_bytes < CORPUS_MAX_BYTES,
             "fuzz seed %s (%zu bytes) opens and is the valid image (regenerate: test_gguf --write-seed %s) %s",
             SEED_FILE, seed_bytes, SEED_FILE, err.msg);
    q35_gguf_close(g);
    free(seed);
    bytes_free(&img);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0)
        return write_corpus(argv[2]);
    if (argc == 3 && strcmp(argv[1], "--write-seed") == 0)
        return write_seed(argv[2]);
    if (argc != 1) {
        fprintf(stderr, "usage: %s [--write-corpus DIR | --write-seed FILE]\n", argv[0]);
        return 2;
    }
    const uint64_t seed = q35_test_seed();
    q35_suite s;
    q35_suite_begin(&s, "gguf: reader and writer", seed);
    suite_round_trip(&s, seed);
    suite_malformed(&s);
    suite_truncation(&s);
    suite_corpus(&s);
    return q35_suite_end(&s);
}
