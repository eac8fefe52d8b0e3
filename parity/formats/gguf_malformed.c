/* The table of malformed GGUF images (gguf_malformed.h): the small valid base
 * image and where its fields lie, the few images built by hand, the table (a
 * case is the base with one or two edits at named fields, or a hand-built
 * image), and the suite that feeds each image to the reader. */
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

/* ---- the images the base cannot become by one edit: built by hand ---- */

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

static int bad_alignment_not_power_of_two(q35_test_bad_image *x) { return raw_alignment(x, Q35_GGUF_U32, 48); }
static int bad_alignment_zero(q35_test_bad_image *x) { return raw_alignment(x, Q35_GGUF_U32, 0); }
static int bad_alignment_wrong_type(q35_test_bad_image *x) { return raw_alignment(x, Q35_GGUF_U64, 64); }

/* general.alignment 1 and a q4_K tensor whose data starts at an odd file offset
 * (the image is opened from a copy at an address aligned to 16). */
static int bad_tensor_data_misaligned(q35_test_bad_image *x)
{
    raw_header(&x->b, 3, 1, 1);
    q35_test_put_str(&x->b, "general.alignment");
    q35_test_put_u32(&x->b, Q35_GGUF_U32);
    q35_test_put_u32(&x->b, 1);
    x->at = x->b.len;
    q35_test_put_str(&x->b, "t");
    q35_test_put_u32(&x->b, 1);
    q35_test_put_u64(&x->b, 256);
    q35_test_put_u32(&x->b, Q35_TYPE_Q4_K);
    const uint64_t data_offset = x->b.len + 8; /* after the offset field; alignment 1 adds no padding */
    const uint64_t offset = data_offset % 2 == 0 ? 1 : 0;
    q35_test_put_u64(&x->b, offset);
    q35_test_put_zeros(&x->b, offset + 144);
    return 0;
}

/* ---- the table ---- */

/* Shorthands of the table: a place in the base image, and the edits. */
#define AT(field, delta) {Q35_BAD_##field, (delta)}
#define U8(field, delta, v) {Q35_EDIT_U8, AT(field, delta), (v), NULL}
#define U32(field, delta, v) {Q35_EDIT_U32, AT(field, delta), (v), NULL}
#define U64(field, delta, v) {Q35_EDIT_U64, AT(field, delta), (v), NULL}
#define ADD64(field, delta, v) {Q35_EDIT_ADD_U64, AT(field, delta), (v), NULL}
#define BYTES(field, delta, s) {Q35_EDIT_BYTES, AT(field, delta), 0, (s)}
#define CUT(field, delta) {Q35_EDIT_CUT, AT(field, delta), 0, NULL}
#define BY_HAND(fn) fn, {{0}}, AT(START, 0)

const q35_test_bad_case q35_test_bad_cases[] = {
    /* header */
    {"empty_file", BY_HAND(bad_empty_file), "0 bytes"},
    {"magic_truncated", BY_HAND(bad_magic_truncated), "magic at offset 0 needs 4 bytes"},
    {"bad_magic", NULL, {BYTES(START, 0, "GGML")}, AT(START, 0), "bad magic 0x4c4d4747 at offset 0"},
    {"version_1", NULL, {U32(START, 4, 1)}, AT(START, 4), "version 1 at offset 4 (32-bit counts) is not supported"},
    {"version_4", NULL, {U32(START, 4, 4)}, AT(START, 4), "version 4 at offset 4 is not supported"},
    {"version_2_big_endian", NULL, {U32(START, 4, 0x02000000u)}, AT(START, 4), "version at offset 4 is byte-swapped"},
    {"version_3_big_endian", NULL, {U32(START, 4, 0x03000000u)}, AT(START, 4), "version at offset 4 is byte-swapped"},
    {"tensor_count_absurd", NULL, {U64(START, 8, UINT64_MAX)}, AT(START, 8),
     "tensor_count 18446744073709551615 at offset 8 is absurd"},
    {"kv_count_absurd", NULL, {U64(START, 16, UINT64_MAX)}, AT(START, 16),
     "kv_count 18446744073709551615 at offset 16 is absurd"},
    {"kv_count_truncated", NULL, {CUT(START, 20)}, AT(START, 16), "kv_count at offset 16 needs 8 bytes"},
    /* metadata */
    {"key_past_end", NULL, {U64(ARCH_KEY, 0, 60000)}, AT(ARCH_KEY, 8), "key at offset 32 needs 60000 bytes"},
    {"key_over_limit", NULL, {U64(ARCH_KEY, 0, Q35_GGUF_MAX_KEY + 1)}, AT(ARCH_KEY, 0),
     "key at offset 24 has length 65536, over the limit of 65535"},
    {"key_empty", BY_HAND(bad_key_empty), "kv pair 0 at offset 24 has an empty key"},
    {"key_nul", BY_HAND(bad_key_nul), "key at offset 24 contains a NUL byte"},
    {"key_duplicate", BY_HAND(bad_key_duplicate), "duplicate key 'qwen35.block_count' at offsets 24 and"},
    {"value_type_unknown", NULL, {U32(BLOCKS_TYPE, 0, Q35_GGUF_VTYPE_COUNT)}, AT(BLOCKS_TYPE, 0),
     "key 'qwen35.block_count': value type 13 at offset"},
    {"string_value_past_end", NULL, {U64(ARCH_VALUE, 0, UINT64_MAX)}, AT(ARCH_VALUE, 8), "string value at offset"},
    {"bool_not_0_1", NULL, {U8(FLAG_VALUE, 0, 2)}, AT(FLAG_VALUE, 0), "key 'flag': bool at offset"},
    {"bool_array_not_0_1", BY_HAND(bad_bool_array_not_0_1), "key 'flags': bool at offset 55 holds 7, not 0 or 1"},
    {"array_type_unknown", NULL, {U32(ARR_U32_VALUE, 0, Q35_GGUF_VTYPE_COUNT)}, AT(ARR_U32_VALUE, 0),
     "key 'arr.u32': array element type 13 at offset"},
    {"array_nested", NULL, {U32(ARR_U32_VALUE, 0, Q35_GGUF_ARRAY)}, AT(ARR_U32_VALUE, 0),
     "key 'arr.u32': nested arrays (offset"},
    {"array_count_absurd", NULL, {U64(ARR_U32_VALUE, 4, UINT64_MAX)}, AT(ARR_U32_VALUE, 4),
     "key 'arr.u32': array count 18446744073709551615 at offset"},
    /* the second string's length: past the element type, the count and "a" */
    {"array_string_absurd", NULL, {U64(ARR_STR_VALUE, 4 + 8 + 8 + 1, UINT64_MAX)},
     AT(ARR_STR_VALUE, 4 + 8 + 8 + 1 + 8), "array string at offset"},
    {"alignment_not_power_of_two", BY_HAND(bad_alignment_not_power_of_two),
     "general.alignment 48 at offset 24 is not a power of two"},
    {"alignment_zero", BY_HAND(bad_alignment_zero), "general.alignment 0 at offset 24 is not a power of two"},
    {"alignment_wrong_type", BY_HAND(bad_alignment_wrong_type), "general.alignment at offset 24 is a u64, not a u32"},
    {"tensor_data_misaligned", BY_HAND(bad_tensor_data_misaligned), "is not 2-byte aligned, as q4_K data must be"},
    /* tensor infos (t.f32 f32 [8, 2], t.q4k q4_K [256], t.f64 f64 [4], t.f16 f16 [16]) */
    {"tensor_info_truncated", NULL, {CUT(T3_OFFSET, 0)}, AT(T3_OFFSET, 0), "tensor offset at offset"},
    {"tensor_name_empty", NULL, {U64(T0_INFO, 0, 0)}, AT(T0_INFO, 0), "tensor 0 at offset"},
    {"tensor_name_over_limit", NULL, {U64(T0_INFO, 0, Q35_GGUF_MAX_NAME + 1)}, AT(T0_INFO, 0),
     "has length 257, over the limit of 256"},
    {"tensor_name_nul", NULL, {U8(T0_NAME, 1, 0)}, AT(T0_INFO, 0), "contains a NUL byte"},
    {"tensor_n_dims_0", NULL, {U32(T0_N_DIMS, 0, 0)}, AT(T0_N_DIMS, 0), "tensor 't.f32': n_dims 0 at offset"},
    {"tensor_n_dims_5", NULL, {U32(T0_N_DIMS, 0, 5)}, AT(T0_N_DIMS, 0), "tensor 't.f32': n_dims 5 at offset"},
    {"tensor_dim_zero", NULL, {U64(T0_DIMS, 8, 0)}, AT(T0_DIMS, 8), "tensor 't.f32': dimension 1 = 0 at offset"},
    {"tensor_dims_overflow", NULL, {U64(T0_DIMS, 0, 1ull << 32), U64(T0_DIMS, 8, 1ull << 32)}, AT(T0_DIMS, 8),
     "tensor 't.f32': dimension 1 = 4294967296 at offset"},
    {"tensor_dim_over_int64", NULL, {U64(T0_DIMS, 0, 1ull << 63)}, AT(T0_DIMS, 0),
     "tensor 't.f32': dimension 0 = 9223372036854775808 at offset"},
    {"tensor_type_unknown", NULL, {U32(T0_TYPE, 0, 77)}, AT(T0_TYPE, 0), "tensor 't.f32': type 77 at offset"},
    /* type 4: ggml's retired Q4_2 */
    {"tensor_type_removed", NULL, {U32(T0_TYPE, 0, 4)}, AT(T0_TYPE, 0), "tensor 't.f32': type 4 at offset"},
    /* q4_K: blocks of 256 */
    {"tensor_row_partial_block", NULL, {U64(T1_DIMS, 0, 100)}, AT(T1_DIMS, 0),
     "tensor 't.q4k': row of 100 elements (dimension 0 at offset"},
    /* an f64 row of 2^61 + 1 elements is 2^64 + 8 bytes: a reader that lets the
     * product wrap sizes it at 8 bytes and accepts it */
    {"tensor_row_bytes_wrap", NULL, {U64(T2_DIMS, 0, (1ull << 61) + 1)}, AT(T2_DIMS, 0),
     "tensor 't.f64': byte size of f64"},
    /* an f64 row of 2^62 elements is 2^65 bytes, which wraps to 0 */
    {"tensor_row_bytes_zero", NULL, {U64(T2_DIMS, 0, 1ull << 62)}, AT(T2_DIMS, 0), "tensor 't.f64': byte size of f64"},
    /* 2^31 x 2^31 f32 elements fit an int64 but their 2^64 bytes do not fit a u64 */
    {"tensor_bytes_overflow", NULL, {U64(T0_DIMS, 0, 1ull << 31), U64(T0_DIMS, 8, 1ull << 31)}, AT(T0_DIMS, 0),
     "tensor 't.f32': byte size of f32"},
    /* the data section */
    {"tensor_offset_misaligned", NULL, {ADD64(T1_OFFSET, 0, 8)}, AT(T1_INFO, 0),
     "is not a multiple of the alignment 32"},
    {"tensor_past_end", NULL, {U64(T3_OFFSET, 0, 4096)}, AT(T3_INFO, 0), "tensor 't.f16' (info at offset"},
    /* aligned, and offset + bytes wraps */
    {"tensor_offset_absurd", NULL, {U64(T3_OFFSET, 0, UINT64_MAX - 31)}, AT(T3_INFO, 0),
     "32 bytes at offset 18446744073709551584 of the data section"},
    /* inside t.f32 [0, 64) */
    {"tensors_overlap", NULL, {U64(T1_OFFSET, 0, 32)}, AT(T1_INFO, 0),
     "tensors 't.f32' [0, 64) and 't.q4k' [32, 176) overlap"},
    {"tensor_name_duplicate", NULL, {BYTES(T3_NAME, 0, "t.f32")}, AT(T3_INFO, 0),
     "duplicate tensor name 't.f32' (infos at offsets"},
    /* the base leaves padding before its data section (checked when built) */
    {"data_section_past_end", NULL, {CUT(INFOS_END, 0)}, AT(DATA_OFFSET, 0), "the data section would start at offset"},
};

#undef AT
#undef U8
#undef U32
#undef U64
#undef ADD64
#undef BYTES
#undef CUT
#undef BY_HAND

/* The file offset of a place in the base image. */
static uint64_t base_offset(const base *f, q35_test_place p)
{
    uint64_t at = 0;
    switch (p.field) {
    case Q35_BAD_START: at = 0; break;
    case Q35_BAD_ARCH_KEY: at = f->arch.key; break;
    case Q35_BAD_ARCH_VALUE: at = f->arch.value; break;
    case Q35_BAD_BLOCKS_TYPE: at = f->blocks.type; break;
    case Q35_BAD_FLAG_VALUE: at = f->flag.value; break;
    case Q35_BAD_ARR_U32_VALUE: at = f->arr_u32.value; break;
    case Q35_BAD_ARR_STR_VALUE: at = f->arr_str.value; break;
    case Q35_BAD_T0_INFO: at = f->t[0].info; break;
    case Q35_BAD_T0_NAME: at = f->t[0].name; break;
    case Q35_BAD_T0_N_DIMS: at = f->t[0].n_dims; break;
    case Q35_BAD_T0_DIMS: at = f->t[0].dims; break;
    case Q35_BAD_T0_TYPE: at = f->t[0].type; break;
    case Q35_BAD_T1_INFO: at = f->t[1].info; break;
    case Q35_BAD_T1_DIMS: at = f->t[1].dims; break;
    case Q35_BAD_T1_OFFSET: at = f->t[1].offset; break;
    case Q35_BAD_T2_DIMS: at = f->t[2].dims; break;
    case Q35_BAD_T3_INFO: at = f->t[3].info; break;
    case Q35_BAD_T3_NAME: at = f->t[3].name; break;
    case Q35_BAD_T3_OFFSET: at = f->t[3].offset; break;
    case Q35_BAD_INFOS_END: at = f->infos_end; break;
    case Q35_BAD_DATA_OFFSET: at = f->data_offset; break;
    }
    return at + (uint64_t)p.delta;
}

/* The base image with case c's edits. */
static int edit_base(const q35_test_bad_case *c, q35_test_bad_image *x)
{
    base f;
    if (base_image(&x->b, &f))
        return -1;
    if (f.infos_end % Q35_GGUF_DEFAULT_ALIGNMENT == 0)
        return -1; /* the base must leave padding before its data section */
    for (size_t i = 0; i < Q35_TEST_COUNT(c->edit) && c->edit[i].op != Q35_EDIT_NONE; i++) {
        const q35_test_edit *e = &c->edit[i];
        const uint64_t at = base_offset(&f, e->at);
        switch (e->op) {
        case Q35_EDIT_U8: x->b.p[at] = (uint8_t)e->value; break;
        case Q35_EDIT_U32: q35_test_set_u32(&x->b, at, (uint32_t)e->value); break;
        case Q35_EDIT_U64: q35_test_set_u64(&x->b, at, e->value); break;
        case Q35_EDIT_ADD_U64: q35_test_set_u64(&x->b, at, q35_test_get_u64(&x->b, at) + e->value); break;
        case Q35_EDIT_BYTES: memcpy(x->b.p + at, e->bytes, strlen(e->bytes)); break;
        case Q35_EDIT_CUT: x->b.len = at; break;
        case Q35_EDIT_NONE: break;
        }
    }
    x->at = base_offset(&f, c->at);
    return 0;
}

int q35_test_build_bad(const q35_test_bad_case *c, q35_test_bad_image *x)
{
    memset(x, 0, sizeof *x);
    if ((c->build ? c->build(x) : edit_base(c, x)) != 0 || x->b.oom) {
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
