/* The table of malformed GGUF images (gguf_malformed.h): the small valid base
 * image and where its fields lie, one builder per case, the table, and the suite
 * that feeds each image to the reader. */
#include "gguf_malformed.h"

#include "core/gguf.h"
#include "core/quant.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

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

static int base_image(q35_test_bytes *b, base *f)
{
    static const q35_test_tensor ts[] = {
        {"t.f32", Q35_TYPE_F32, 2, {8, 2}},
        {"t.q4k", Q35_TYPE_Q4_K, 1, {256}},
        {"t.f64", Q35_TYPE_F64, 1, {4}},
        {"t.f16", Q35_TYPE_F16, 1, {16}},
    };
    static const uint8_t yes = 1; /* the bool "flag" */
    static const uint32_t arr[] = {1, 2, 3};
    static const char *const strs[] = {"a", "bc"};
    q35_error err = {{0}};
    q35_gguf_writer *w = q35_gguf_writer_new();
    uint8_t *data[Q35_TEST_COUNT(ts)] = {NULL};
    int rc = !w || q35_gguf_writer_set_str(w, "general.architecture", "qwen35", &err) ||
             q35_gguf_writer_set_u32(w, "qwen35.block_count", 2, &err) ||
             q35_gguf_writer_set(w, "flag", Q35_GGUF_BOOL, &yes, &err) ||
             q35_gguf_writer_set_array(w, "arr.u32", Q35_GGUF_U32, arr, Q35_TEST_COUNT(arr), &err) ||
             q35_gguf_writer_set_array(w, "arr.str", Q35_GGUF_STRING, strs, Q35_TEST_COUNT(strs), &err) ||
             q35_test_add_tensors(w, ts, Q35_TEST_COUNT(ts), &err) ||
             q35_test_pattern_data(w, Q35_TEST_COUNT(ts), data) ||
             q35_test_writer_image(w, (const void *const *)data, Q35_TEST_COUNT(ts), b, &err);
    q35_test_free_data(data, Q35_TEST_COUNT(ts));
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
static void raw_header(q35_test_bytes *b, uint32_t version, uint64_t n_tensors, uint64_t n_kv)
{
    q35_test_put_bytes(b, "GGUF", 4);
    q35_test_put_u32(b, version);
    q35_test_put_u64(b, n_tensors);
    q35_test_put_u64(b, n_kv);
}

/* A hand-built image with one pair "general.alignment" of type `type` holding v. */
static int raw_alignment(q35_test_bad_image *x, q35_gguf_vtype type, uint64_t v)
{
    raw_header(&x->b, 3, 0, 1);
    x->at = x->b.len;
    q35_test_put_str(&x->b, "general.alignment");
    q35_test_put_u32(&x->b, type);
    q35_test_put_bytes(&x->b, &v, q35_gguf_vtype_size(type));
    q35_test_put_zeros(&x->b, 16);
    return 0;
}

static int bad_empty_file(q35_test_bad_image *x)
{
    x->at = 0;
    return 0;
}

static int bad_magic_truncated(q35_test_bad_image *x)
{
    q35_test_put_bytes(&x->b, "GGU", 3);
    x->at = 0;
    return 0;
}

static int bad_magic(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    memcpy(x->b.p, "GGML", 4);
    x->at = 0;
    return 0;
}

static int with_version(q35_test_bad_image *x, uint32_t version)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u32(&x->b, 4, version);
    x->at = 4;
    return 0;
}

static int bad_version_1(q35_test_bad_image *x) { return with_version(x, 1); }
static int bad_version_4(q35_test_bad_image *x) { return with_version(x, 4); }
static int bad_version_2_big_endian(q35_test_bad_image *x) { return with_version(x, 0x02000000u); }
static int bad_version_3_big_endian(q35_test_bad_image *x) { return with_version(x, 0x03000000u); }

static int bad_tensor_count_absurd(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, 8, UINT64_MAX);
    x->at = 8;
    return 0;
}

static int bad_kv_count_absurd(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, 16, UINT64_MAX);
    x->at = 16;
    return 0;
}

static int bad_kv_count_truncated(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    x->b.len = 20;
    x->at = 16;
    return 0;
}

static int bad_key_past_end(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, f.arch.key, 60000);
    x->at = f.arch.key + 8;
    return 0;
}

static int bad_key_over_limit(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, f.arch.key, Q35_GGUF_MAX_KEY + 1);
    x->at = f.arch.key;
    return 0;
}

static int bad_key_empty(q35_test_bad_image *x)
{
    raw_header(&x->b, 3, 0, 1);
    x->at = x->b.len;
    q35_test_put_str(&x->b, "");
    q35_test_put_u32(&x->b, Q35_GGUF_U32);
    q35_test_put_u32(&x->b, 1);
    q35_test_put_zeros(&x->b, 16);
    return 0;
}

static int bad_key_nul(q35_test_bad_image *x)
{
    raw_header(&x->b, 3, 0, 1);
    x->at = x->b.len;
    q35_test_put_u64(&x->b, 3);
    q35_test_put_bytes(&x->b, "a\0b", 3);
    q35_test_put_u32(&x->b, Q35_GGUF_U32);
    q35_test_put_u32(&x->b, 1);
    q35_test_put_zeros(&x->b, 16);
    return 0;
}

static int bad_key_duplicate(q35_test_bad_image *x)
{
    raw_header(&x->b, 3, 0, 2);
    q35_test_put_str(&x->b, "qwen35.block_count");
    q35_test_put_u32(&x->b, Q35_GGUF_U32);
    q35_test_put_u32(&x->b, 1);
    x->at = x->b.len;
    q35_test_put_str(&x->b, "qwen35.block_count");
    q35_test_put_u32(&x->b, Q35_GGUF_U32);
    q35_test_put_u32(&x->b, 2);
    q35_test_put_zeros(&x->b, 16);
    return 0;
}

static int bad_value_type_unknown(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u32(&x->b, f.blocks.type, Q35_GGUF_VTYPE_COUNT);
    x->at = f.blocks.type;
    return 0;
}

static int bad_string_value_past_end(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, f.arch.value, UINT64_MAX);
    x->at = f.arch.value + 8;
    return 0;
}

static int bad_bool_not_0_1(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    x->b.p[f.flag.value] = 2;
    x->at = f.flag.value;
    return 0;
}

static int bad_bool_array_not_0_1(q35_test_bad_image *x)
{
    static const uint8_t v[] = {1, 0, 7};
    raw_header(&x->b, 3, 0, 1);
    q35_test_put_str(&x->b, "flags");
    q35_test_put_u32(&x->b, Q35_GGUF_ARRAY);
    q35_test_put_u32(&x->b, Q35_GGUF_BOOL);
    q35_test_put_u64(&x->b, Q35_TEST_COUNT(v));
    x->at = x->b.len + 2;
    q35_test_put_bytes(&x->b, v, sizeof v);
    q35_test_put_zeros(&x->b, 16);
    return 0;
}

static int bad_array_type_unknown(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u32(&x->b, f.arr_u32.value, Q35_GGUF_VTYPE_COUNT);
    x->at = f.arr_u32.value;
    return 0;
}

static int bad_array_nested(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u32(&x->b, f.arr_u32.value, Q35_GGUF_ARRAY);
    x->at = f.arr_u32.value;
    return 0;
}

static int bad_array_count_absurd(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, f.arr_u32.value + 4, UINT64_MAX);
    x->at = f.arr_u32.value + 4;
    return 0;
}

static int bad_array_string_absurd(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    const uint64_t second = f.arr_str.value + 4 + 8 + 8 + 1; /* elem type, count, "a" */
    q35_test_set_u64(&x->b, second, UINT64_MAX);
    x->at = second + 8;
    return 0;
}

static int bad_alignment_not_power_of_two(q35_test_bad_image *x) { return raw_alignment(x, Q35_GGUF_U32, 48); }
static int bad_alignment_zero(q35_test_bad_image *x) { return raw_alignment(x, Q35_GGUF_U32, 0); }
static int bad_alignment_wrong_type(q35_test_bad_image *x) { return raw_alignment(x, Q35_GGUF_U64, 64); }

static int bad_tensor_info_truncated(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    x->b.len = f.t[3].offset;
    x->at = f.t[3].offset;
    return 0;
}

static int bad_tensor_name_empty(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, f.t[0].info, 0);
    x->at = f.t[0].info;
    return 0;
}

static int bad_tensor_name_over_limit(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, f.t[0].info, Q35_GGUF_MAX_NAME + 1);
    x->at = f.t[0].info;
    return 0;
}

static int bad_tensor_name_nul(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    x->b.p[f.t[0].name + 1] = '\0';
    x->at = f.t[0].info;
    return 0;
}

static int with_n_dims(q35_test_bad_image *x, uint32_t n_dims)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u32(&x->b, f.t[0].n_dims, n_dims);
    x->at = f.t[0].n_dims;
    return 0;
}

static int bad_tensor_n_dims_0(q35_test_bad_image *x) { return with_n_dims(x, 0); }
static int bad_tensor_n_dims_5(q35_test_bad_image *x) { return with_n_dims(x, 5); }

static int bad_tensor_dim_zero(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, f.t[0].dims + 8, 0);
    x->at = f.t[0].dims + 8;
    return 0;
}

static int bad_tensor_dims_overflow(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, f.t[0].dims, 1ull << 32);
    q35_test_set_u64(&x->b, f.t[0].dims + 8, 1ull << 32);
    x->at = f.t[0].dims + 8;
    return 0;
}

static int bad_tensor_dim_over_int64(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, f.t[0].dims, 1ull << 63);
    x->at = f.t[0].dims;
    return 0;
}

static int with_tensor_type(q35_test_bad_image *x, uint32_t type)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u32(&x->b, f.t[0].type, type);
    x->at = f.t[0].type;
    return 0;
}

static int bad_tensor_type_unknown(q35_test_bad_image *x) { return with_tensor_type(x, 77); }
static int bad_tensor_type_removed(q35_test_bad_image *x) { return with_tensor_type(x, 4); } /* ggml's retired Q4_2 */

static int bad_tensor_row_partial_block(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, f.t[1].dims, 100); /* q4_K: blocks of 256 */
    x->at = f.t[1].dims;
    return 0;
}

/* An f64 row of 2^61 + 1 elements is 2^64 + 8 bytes: a reader that lets the
 * product wrap sizes it at 8 bytes and accepts it. */
static int bad_tensor_row_bytes_wrap(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, f.t[2].dims, (1ull << 61) + 1);
    x->at = f.t[2].dims;
    return 0;
}

/* An f64 row of 2^62 elements is 2^65 bytes, which wraps to 0. */
static int bad_tensor_row_bytes_zero(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, f.t[2].dims, 1ull << 62);
    x->at = f.t[2].dims;
    return 0;
}

/* 2^31 x 2^31 f32 elements fit an int64 but their 2^64 bytes do not fit a u64. */
static int bad_tensor_bytes_overflow(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, f.t[0].dims, 1ull << 31);
    q35_test_set_u64(&x->b, f.t[0].dims + 8, 1ull << 31);
    x->at = f.t[0].dims;
    return 0;
}

static int bad_tensor_offset_misaligned(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, f.t[1].offset, q35_test_get_u64(&x->b, f.t[1].offset) + 8);
    x->at = f.t[1].info;
    return 0;
}

static int bad_tensor_past_end(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, f.t[3].offset, 4096);
    x->at = f.t[3].info;
    return 0;
}

static int bad_tensor_offset_absurd(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, f.t[3].offset, UINT64_MAX - 31); /* aligned, and offset + bytes wraps */
    x->at = f.t[3].info;
    return 0;
}

static int bad_tensors_overlap(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    q35_test_set_u64(&x->b, f.t[1].offset, 32); /* inside t.f32 [0, 64) */
    x->at = f.t[1].info;
    return 0;
}

static int bad_tensor_name_duplicate(q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    memcpy(x->b.p + f.t[3].name, "t.f32", 5);
    x->at = f.t[3].info;
    return 0;
}

static int bad_data_section_past_end(q35_test_bad_image *x)
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

const q35_test_bad_case q35_test_bad_cases[] = {
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

int q35_test_build_bad(const q35_test_bad_case *c, q35_test_bad_image *x)
{
    memset(x, 0, sizeof *x);
    if (c->build(x) != 0 || x->b.oom) {
        q35_test_bytes_free(&x->b);
        return -1;
    }
    return 0;
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

void q35_test_suite_malformed(q35_suite *s)
{
    printf("-- malformed images: refused with the field and its file offset\n");
    for (size_t i = 0; i < Q35_TEST_COUNT(q35_test_bad_cases); i++) {
        const q35_test_bad_case *c = &q35_test_bad_cases[i];
        q35_test_bad_image x;
        if (q35_test_build_bad(c, &x) != 0) {
            q35_case(s, false, "%s: the image cannot be built", c->name);
            continue;
        }
        q35_error err = {{0}};
        q35_gguf *g = (q35_gguf *)&err; /* not NULL: the reader must clear it */
        const int rc = q35_test_open_copy(&g, x.b.p, x.b.len, &err);
        q35_case(s, rc == -1 && g == NULL && strstr(err.msg, c->want) && names_offset(err.msg, x.at) &&
                        x.b.len < Q35_TEST_CORPUS_MAX_BYTES,
                 "%-26s (%4" PRIu64 " bytes, field at %" PRIu64 "): %s", c->name, x.b.len, x.at, err.msg);
        if (rc == 0)
            q35_gguf_close(g);
        q35_test_bytes_free(&x.b);
    }
}
