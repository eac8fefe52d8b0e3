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
 * Parts 1 and 3 are here; part 2 is gguf_malformed.c, part 4 gguf_corpus.c, and
 * the images they share gguf_images.c.
 *
 * `test_gguf --write-corpus DIR` (re)writes the table's images and MANIFEST into
 * DIR; `test_gguf --write-seed FILE` writes the valid seed. Run the suite under
 * -DQ35_SANITIZE=address,undefined to check for leaks and overreads. */
#define _POSIX_C_SOURCE 200809L
#include "parity/lib/harness.h"

#include "gguf_corpus.h"
#include "gguf_images.h"
#include "gguf_malformed.h"
#include "core/gguf.h"
#include "core/parallel.h"
#include "core/quant.h"
#include "core/rng.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- the values of the round trip ------------------------------------------ */

/* Values for the getters: integers of every width that fit a u32 and some that do not. */
static const int8_t k_get_i8 = 100;
static const int16_t k_get_i16 = 1000;
static const int32_t k_get_i32 = 123456;
static const uint64_t k_get_u64_fits = 4294967295u;
static const uint64_t k_get_u64_big = 4294967296u;
static const int64_t k_get_i64 = 42;
static const double k_get_f64 = 0.25;
static const uint32_t k_align64 = 64;

static const q35_test_kv k_getter_kvs[] = {
    {.key = "get.i8", .type = Q35_GGUF_I8, .value = &k_get_i8},
    {.key = "get.i16", .type = Q35_GGUF_I16, .value = &k_get_i16},
    {.key = "get.i32", .type = Q35_GGUF_I32, .value = &k_get_i32},
    {.key = "get.u64.fits", .type = Q35_GGUF_U64, .value = &k_get_u64_fits},
    {.key = "get.u64.big", .type = Q35_GGUF_U64, .value = &k_get_u64_big},
    {.key = "get.i64", .type = Q35_GGUF_I64, .value = &k_get_i64},
    {.key = "get.f64", .type = Q35_GGUF_F64, .value = &k_get_f64},
};

/* Why kv i of g is not `want`, or NULL when it is. */
static const char *kv_mismatch(const q35_gguf *g, uint64_t i, const q35_test_kv *want)
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
static const char *tensor_mismatch(const q35_gguf *g, uint64_t i, const q35_test_tensor *want, const q35_gguf_writer *w,
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
static void check_read_back(q35_suite *s, const char *how, const q35_gguf *g, const q35_test_kv_list *kvs,
                            const q35_test_tensor *ts, int64_t n_t, const q35_gguf_writer *w, uint8_t *const *data)
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
        const q35_test_kv *want = &kvs->kv[i];
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
    for (size_t i = 0; i < Q35_TEST_COUNT(ok_u32); i++) {
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
    for (size_t i = 0; i < Q35_TEST_COUNT(bad_u32); i++) {
        q35_error err = {{0}};
        uint32_t v = 0xdeadbeef;
        const int rc = q35_gguf_get_u32(g, bad_u32[i].key, &v, &err);
        q35_case(s, rc == -1 && v == 0xdeadbeef && strstr(err.msg, bad_u32[i].key) && strstr(err.msg, bad_u32[i].want),
                 "get_u32(%s) refused: %s", bad_u32[i].key, err.msg);
    }
    static const struct { const char *key; float want; } ok_f32[] = {
        {"rt.f32", 3.25f}, {"get.f64", 0.25f}, {"rt.f32.nan", NAN},
    };
    for (size_t i = 0; i < Q35_TEST_COUNT(ok_f32); i++) {
        q35_error err = {{0}};
        float v = 0.0f;
        const int rc = q35_gguf_get_f32(g, ok_f32[i].key, &v, &err);
        q35_case(s, rc == 0 && (memcmp(&v, &ok_f32[i].want, 4) == 0 || (isnan(v) && isnan(ok_f32[i].want))),
                 "get_f32(%s) = %g", ok_f32[i].key, (double)v);
    }
    static const struct { const char *key, *want; } bad_f32[] = {
        {"rt.u32", "is a u32, not a float"}, {"rt.string", "is a string, not a float"}, {"no.such.key", "is missing"},
    };
    for (size_t i = 0; i < Q35_TEST_COUNT(bad_f32); i++) {
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
        q35_case(s, rc == 0 && a.len == strlen(Q35_TEST_RT_STRING) && memcmp(a.data, Q35_TEST_RT_STRING, a.len) == 0 &&
                        e.len == 0,
                 "get_str(rt.string) = \"%.*s\", get_str(rt.string.empty) has length %" PRIu64, (int)a.len,
                 a.data ? a.data : "", e.len);
    }
    static const struct { const char *key, *want; } bad_str[] = {
        {"rt.u32", "is a u32, not a string"}, {"rt.array.string", "is a array, not a string"},
        {"no.such.key", "is missing"},
    };
    for (size_t i = 0; i < Q35_TEST_COUNT(bad_str); i++) {
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
    for (size_t i = 0; i < Q35_TEST_COUNT(shown); i++) {
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
    for (size_t i = 0; i < Q35_TEST_COUNT(bad_t); i++) {
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
    for (size_t i = 0; i < Q35_TEST_COUNT(shapes); i++) {
        q35_error err = {{0}};
        q35_gguf_writer *w = q35_gguf_writer_new();
        const int64_t ne[1] = {32};
        uint8_t *data[1] = {NULL};
        q35_test_bytes img = {0};
        q35_gguf *g = NULL;
        int rc = !w;
        if (!rc && shapes[i].kv)
            rc = q35_gguf_writer_set_str(w, "general.name", "", &err) || q35_gguf_writer_set_f32(w, "x", 1.0f, &err);
        if (!rc && shapes[i].tensor)
            rc = q35_gguf_writer_add_tensor(w, "t", Q35_TYPE_Q8_0, 1, ne, &err) != 0 ||
                 q35_test_pattern_data(w, 1, data);
        if (!rc)
            rc = q35_test_writer_image(w, (const void *const *)data, shapes[i].tensor, &img, &err) ||
                 q35_test_open_copy(&g, img.p, img.len, &err);
        q35_case(s, rc == 0 && g->n_kv == (shapes[i].kv ? 2u : 0u) && g->n_tensors == (shapes[i].tensor ? 1u : 0u) &&
                        g->data_offset == q35_gguf_writer_data_offset(w) &&
                        (!shapes[i].tensor || memcmp(g->tensors[0].data, data[0], 34) == 0),
                 "%s: %" PRIu64 "-byte image opens %s", shapes[i].what, img.len, err.msg);
        q35_gguf_close(g);
        q35_test_bytes_free(&img);
        free(data[0]);
        q35_gguf_writer_free(w);
    }
}

static void suite_round_trip(q35_suite *s, uint64_t seed)
{
    printf("-- round trip: writer -> q35_gguf_open (file) and q35_gguf_open_memory\n");
    q35_error err = {{0}};
    q35_test_kv_list *kvs = calloc(1, sizeof *kvs);
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

    q35_test_add_kv(kvs, (q35_test_kv){.key = "general.alignment", .type = Q35_GGUF_U32, .value = &k_align64});
    q35_test_add_every_type(kvs);
    for (size_t i = 0; i < Q35_TEST_COUNT(k_getter_kvs); i++)
        q35_test_add_kv(kvs, k_getter_kvs[i]);
    q35_test_add_kv(kvs, (q35_test_kv){.key = long_key, .type = Q35_GGUF_STRING, .value = "the longest key"});
    const q35_test_tensor ts[] = {
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
    const int64_t n_t = (int64_t)Q35_TEST_COUNT(ts);

    q35_gguf_writer *w = q35_gguf_writer_new();
    int rc = !w || q35_gguf_writer_set_alignment(w, 64, &err) || q35_test_write_kvs(w, kvs, &err) ||
             q35_test_add_tensors(w, ts, n_t, &err);
    q35_case(s, rc == 0, "writer takes %zu kvs (every type, empty arrays, a %d-byte key) and %" PRId64
             " tensors (1..4 dims, a %d-byte name), alignment 64 %s", kvs->n, Q35_GGUF_MAX_KEY, n_t,
             Q35_GGUF_MAX_NAME, err.msg);
    uint8_t *data[Q35_TEST_COUNT(ts)] = {NULL};
    q35_rng rng;
    q35_rng_seed(&rng, seed);
    for (int64_t i = 0; i < n_t && rc == 0; i++) {
        const uint64_t n = q35_gguf_writer_tensor_bytes(w, i);
        data[i] = malloc(n);
        rc = !data[i];
        for (uint64_t j = 0; j < n && data[i]; j++)
            data[i][j] = (uint8_t)q35_rng_next(&rng);
    }
    q35_test_bytes img = {0};
    if (rc == 0)
        rc = q35_test_writer_image(w, (const void *const *)data, n_t, &img, &err);

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
    const int took = rc == 0 ? q35_test_open_copy(&g, img.p, img.len, &err) : -1;
    q35_case(s, took == 0 && g->owned == g->base,
             "q35_gguf_open_memory(take) owns the image (freed by close; ASan checks) %s", err.msg);
    q35_gguf_close(g);

    q35_test_bytes_free(&img);
    q35_test_free_data(data, n_t);
    q35_gguf_writer_free(w);
    free(long_key);
    free(kvs);
    check_sparse_images(s);
    check_writer_refusals(s);
}

/* ---- truncation ------------------------------------------------------------- */

/* Every prefix of the rich image fails cleanly; the whole image opens. */
static void suite_truncation(q35_suite *s)
{
    printf("-- truncation: every prefix of a valid image\n");
    q35_error err = {{0}};
    q35_test_bytes img;
    uint64_t infos_end = 0;
    const int built = q35_test_rich_image(&img, &infos_end, &err);
    if (!q35_case(s, built == 0 && img.len < Q35_TEST_CORPUS_MAX_BYTES,
                  "valid image: %" PRIu64 " bytes, tensor infos end at %" PRIu64 " %s", img.len, infos_end, err.msg)) {
        q35_test_bytes_free(&img);
        return;
    }
    q35_gguf *whole = NULL;
    const int whole_rc = q35_test_open_copy(&whole, img.p, img.len, &err);
    const uint64_t data_offset = whole_rc == 0 ? whole->data_offset : 0;
    q35_case(s, whole_rc == 0 && whole->n_tensors == 3 && whole->n_kv > 24,
             "the whole image (%" PRIu64 " bytes) opens: %" PRIu64 " kvs, %" PRIu64 " tensors, data at %" PRIu64
             " %s", img.len, whole_rc == 0 ? whole->n_kv : 0, whole_rc == 0 ? whole->n_tensors : 0, data_offset,
             err.msg);
    q35_gguf_close(whole);
    if (whole_rc != 0) {
        q35_test_bytes_free(&img);
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
        const int rc = q35_test_open_copy(&g, img.p, len, &err);
        bool ok = rc == -1 && g == NULL && err.msg[0] && strstr(err.msg, "<memory>");
        if (span == 0) /* a count the rest cannot hold says the file may be truncated */
            ok = ok && strstr(err.msg, "truncated");
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
    static const char *const what[3] = {"cut in the header: 'truncated'",
                                        "cut in the padding: data section past the end",
                                        "cut in the tensor data: tensor past the end"};
    for (int i = 0; i < 3; i++)
        q35_case(s, bad[i] == 0 && n[i] > 0, "%" PRId64 " prefixes %s: %" PRId64 " wrong (first at %" PRId64 ": %s)",
                 n[i], what[i], bad[i], first_bad[i], first_msg[i]);
    q35_test_bytes_free(&img);
}

/* ---- lookups by name ---------------------------------------------------------- */

/* An image of n f32 [1] tensors named t.NNNNNN in a scrambled order, and every
 * name looked up: each finds its own entry, an absent one nothing. Through the
 * indexes the lookups take n log n; a scan of the table took n^2 (q35 info on a
 * file of 500,000 tensors: 12 s). */
static void suite_lookups(q35_suite *s)
{
    printf("-- lookups by name: a table of 200,000 tensors\n");
    enum { N = 200000, P = 7919 }; /* P coprime with N: i * P mod N is a permutation */
    q35_test_bytes b = {0};
    q35_test_put_bytes(&b, "GGUF", 4);
    q35_test_put_u32(&b, 3);
    q35_test_put_u64(&b, N);
    q35_test_put_u64(&b, 1);
    q35_test_put_str(&b, "general.name");
    q35_test_put_u32(&b, Q35_GGUF_STRING);
    q35_test_put_str(&b, "lookups");
    char name[32];
    for (uint64_t i = 0; i < N; i++) {
        snprintf(name, sizeof name, "t.%06" PRIu64, i * P % N);
        q35_test_put_str(&b, name);
        q35_test_put_u32(&b, 1);
        q35_test_put_u64(&b, 1);
        q35_test_put_u32(&b, Q35_TYPE_F32);
        q35_test_put_u64(&b, 32 * i);
    }
    q35_test_put_zeros(&b, (32 - b.len % 32) % 32 + 32ull * N);
    q35_error err = {{0}};
    q35_gguf *g = NULL;
    const double t0 = q35_now();
    if (!q35_case(s, !b.oom && q35_test_open_copy(&g, b.p, b.len, &err) == 0, "an image of %d tensors opens %s", N,
                  err.msg)) {
        q35_test_bytes_free(&b);
        return;
    }
    uint64_t wrong = 0;
    for (uint64_t i = 0; i < N; i++) {
        snprintf(name, sizeof name, "t.%06" PRIu64, i * P % N);
        wrong += q35_gguf_find_tensor(g, name) != &g->tensors[i];
    }
    const q35_gguf_kv *kv = q35_gguf_find(g, "general.name");
    const bool absent = !q35_gguf_find_tensor(g, "t.200000") && !q35_gguf_find_tensor(g, "t.") &&
                        !q35_gguf_find_tensor(g, "") && !q35_gguf_find(g, "general.nam") && kv == &g->kv[0];
    q35_case(s, wrong == 0 && absent, "every name finds its own tensor (%" PRIu64 " wrong), absent names nothing: %s "
             "(open and %d lookups: %.2f s)", wrong, absent ? "yes" : "no", N, q35_now() - t0);
    q35_gguf_close(g);
    q35_test_bytes_free(&b);
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "--write-corpus") == 0)
        return q35_test_write_corpus(argv[2]);
    if (argc == 3 && strcmp(argv[1], "--write-seed") == 0)
        return q35_test_write_seed(argv[2]);
    if (argc != 1) {
        fprintf(stderr, "usage: %s [--write-corpus DIR | --write-seed FILE]\n", argv[0]);
        return 2;
    }
    const uint64_t seed = q35_test_seed();
    q35_suite s;
    q35_suite_begin(&s, "gguf: reader and writer", seed);
    suite_round_trip(&s, seed);
    q35_test_suite_malformed(&s);
    suite_truncation(&s);
    suite_lookups(&s);
    q35_test_suite_corpus(&s);
    return q35_suite_end(&s);
}
