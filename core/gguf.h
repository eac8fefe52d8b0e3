/* GGUF v2/v3 (little-endian): a reader over a mapped file or a memory image, and
 * a writer that lays out and serialises a header for tensor data written by the
 * caller.
 *
 * The reader checks every count, length, offset and size against the bytes that
 * remain before it reads or allocates; a malformed file gets an error naming the
 * field and its file offset. Nothing is read outside the image.
 *
 * Layout: magic "GGUF", u32 version, u64 tensor_count, u64 kv_count; kv_count
 * pairs (string key, u32 value type, value); tensor_count infos (string name,
 * u32 n_dims, u64 ne[n_dims], u32 type, u64 offset); padding to the alignment
 * (general.alignment, default 32); tensor data, each tensor at its offset from the
 * start of the data section. A string is a u64 length and that many bytes. */
#ifndef Q35_GGUF_H
#define Q35_GGUF_H

#include "core/error.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define Q35_GGUF_MAGIC 0x46554747u /* "GGUF" read as a little-endian u32 */
#define Q35_GGUF_DEFAULT_ALIGNMENT 32
#define Q35_GGUF_MAX_DIMS 4
#define Q35_GGUF_MAX_NAME 256   /* longest tensor name accepted, bytes */
#define Q35_GGUF_MAX_KEY 65535  /* longest key accepted, bytes */

typedef enum q35_gguf_vtype {
    Q35_GGUF_U8 = 0,
    Q35_GGUF_I8 = 1,
    Q35_GGUF_U16 = 2,
    Q35_GGUF_I16 = 3,
    Q35_GGUF_U32 = 4,
    Q35_GGUF_I32 = 5,
    Q35_GGUF_F32 = 6,
    Q35_GGUF_BOOL = 7,
    Q35_GGUF_STRING = 8,
    Q35_GGUF_ARRAY = 9,
    Q35_GGUF_U64 = 10,
    Q35_GGUF_I64 = 11,
    Q35_GGUF_F64 = 12,
    Q35_GGUF_VTYPE_COUNT
} q35_gguf_vtype;

/* A string inside the image: not NUL-terminated. */
typedef struct q35_gguf_str {
    uint64_t len;      /* bytes */
    const char *data;  /* first byte, inside the image */
} q35_gguf_str;

typedef struct q35_gguf_kv {
    char *key;                   /* NUL-terminated copy of the key */
    q35_gguf_vtype type;         /* value type */
    q35_gguf_vtype elem_type;    /* element type when type is ARRAY */
    uint64_t count;              /* elements when type is ARRAY, else 1 */
    const uint8_t *data;         /* the value (or the first element) inside the image */
    const q35_gguf_str *strs;    /* the elements of a STRING array (count of them), else NULL */
    uint64_t offset;             /* file offset of the key, for messages */
} q35_gguf_kv;

typedef struct q35_gguf_tensor {
    char *name;                  /* NUL-terminated copy of the name */
    uint32_t n_dims;             /* 1..4 */
    int64_t ne[Q35_GGUF_MAX_DIMS]; /* elements per dimension, ne[0] fastest; 1 past n_dims */
    uint32_t type;               /* q35_type (a ggml type id) */
    uint64_t offset;             /* from the start of the data section */
    uint64_t nbytes;             /* bytes of data */
    const uint8_t *data;         /* the data inside the image */
    uint64_t info_offset;        /* file offset of this tensor's info, for messages */
} q35_gguf_tensor;

typedef struct q35_gguf {
    char source[512];            /* the path, or "<memory>" */
    uint32_t version;            /* 2 or 3 */
    uint64_t n_kv;               /* metadata pairs */
    q35_gguf_kv *kv;             /* n_kv of them, file order */
    uint64_t n_tensors;          /* tensors */
    q35_gguf_tensor *tensors;    /* n_tensors of them, file order */
    const q35_gguf_kv **kv_by_key;            /* the pairs sorted by key: q35_gguf_find's index */
    const q35_gguf_tensor **tensor_by_name;   /* the tensors sorted by name: q35_gguf_find_tensor's */
    uint32_t alignment;          /* of the data section and every tensor offset */
    uint64_t data_offset;        /* file offset of the data section */
    const uint8_t *base;         /* the image */
    uint64_t size;               /* bytes of the image */
    void *map;                   /* mmap'd region to unmap, or NULL */
    void *owned;                 /* malloc'd image to free, or NULL */
} q35_gguf;

/* Maps and parses a file. On error returns -1 with a message and *out == NULL. */
int q35_gguf_open(q35_gguf **out, const char *path, q35_error *err);

/* Parses an image in memory. The image must outlive the result unless `take`
 * is true, in which case the result owns it and frees it with free(). On error
 * the image is not freed. */
int q35_gguf_open_memory(q35_gguf **out, const void *image, uint64_t size, bool take,
                         q35_error *err);

void q35_gguf_close(q35_gguf *g);

/* Lookups by name, O(log n) through the indexes built at parsing: NULL when absent. */
const q35_gguf_kv *q35_gguf_find(const q35_gguf *g, const char *key);
const q35_gguf_tensor *q35_gguf_find_tensor(const q35_gguf *g, const char *name);

/* Typed reads of a scalar value. An integer read accepts any integer type whose
 * value fits; a float read accepts F32 or F64. Each fails with a message naming
 * the key and the type found when the key is absent or does not fit (an F64
 * beyond the f32 range does not). */
int q35_gguf_get_u32(const q35_gguf *g, const char *key, uint32_t *out, q35_error *err);
int q35_gguf_get_f32(const q35_gguf *g, const char *key, float *out, q35_error *err);
int q35_gguf_get_str(const q35_gguf *g, const char *key, q35_gguf_str *out, q35_error *err);

/* The i-th element of an integer or bool array as int64 (type checked by caller). */
int64_t q35_gguf_array_int(const q35_gguf_kv *kv, uint64_t i);

/* Whether a value type is an integer type (bool counts as one). */
bool q35_gguf_vtype_is_int(q35_gguf_vtype t);

/* Name of a value type ("u32", "string", ...). */
const char *q35_gguf_vtype_name(uint32_t t);

/* Bytes of one scalar of a fixed-size value type; 0 for STRING, ARRAY, unknown. */
size_t q35_gguf_vtype_size(uint32_t t);

/* The value of a scalar kv, printed into buf (strings quoted, cut at 64 bytes
 * and escaped as escape.h says; arrays as "[type x count]"). Returns buf. */
char *q35_gguf_format_value(const q35_gguf_kv *kv, char *buf, size_t cap);

/* ---- writer ---------------------------------------------------------------- */

typedef struct q35_gguf_writer q35_gguf_writer;

q35_gguf_writer *q35_gguf_writer_new(void);
void q35_gguf_writer_free(q35_gguf_writer *w);

/* Metadata, in the order added. A duplicate key is an error. */
int q35_gguf_writer_set(q35_gguf_writer *w, const char *key, q35_gguf_vtype type, const void *value,
                        q35_error *err);
int q35_gguf_writer_set_u32(q35_gguf_writer *w, const char *key, uint32_t v, q35_error *err);
int q35_gguf_writer_set_f32(q35_gguf_writer *w, const char *key, float v, q35_error *err);
int q35_gguf_writer_set_str(q35_gguf_writer *w, const char *key, const char *v, q35_error *err);
/* An array of `count` fixed-size elements of elem_type, or of strings
 * (elem_type STRING, data a const char *const *). */
int q35_gguf_writer_set_array(q35_gguf_writer *w, const char *key, q35_gguf_vtype elem_type,
                              const void *data, uint64_t count, q35_error *err);

/* A pair of a reader's image copied as it is (key, type, value bytes; strings
 * byte for byte, NULs included). A duplicate key is an error. */
int q35_gguf_writer_copy(q35_gguf_writer *w, const q35_gguf_kv *kv, q35_error *err);

/* The alignment of the data section (a power of two; writes general.alignment
 * when not 32). Set before adding tensors. */
int q35_gguf_writer_set_alignment(q35_gguf_writer *w, uint32_t alignment, q35_error *err);

/* Adds a tensor info, laid out after the previous one at the alignment; returns
 * its index, or -1 (duplicate name, bad dims, unknown type, a row not a whole
 * number of blocks). */
int64_t q35_gguf_writer_add_tensor(q35_gguf_writer *w, const char *name, uint32_t type, uint32_t n_dims,
                                   const int64_t *ne, q35_error *err);

/* After the last tensor: the size of the header (data section offset), each
 * tensor's absolute file offset and bytes, and the total file size. */
uint64_t q35_gguf_writer_data_offset(const q35_gguf_writer *w);
uint64_t q35_gguf_writer_tensor_offset(const q35_gguf_writer *w, int64_t index);
uint64_t q35_gguf_writer_tensor_bytes(const q35_gguf_writer *w, int64_t index);
uint64_t q35_gguf_writer_file_size(const q35_gguf_writer *w);

/* Serialises the header and its padding into dst (data_offset bytes). */
int q35_gguf_writer_write_header(const q35_gguf_writer *w, uint8_t *dst, uint64_t cap, q35_error *err);

/* Writes a whole file: the header, then data[i] for tensor i (tensor_bytes(i)
 * bytes each), zero padding between; through a temporary file renamed into
 * place (outfile.h), so a failure leaves path as it was. */
int q35_gguf_writer_write_file(const q35_gguf_writer *w, const char *path, const void *const *data,
                               q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_GGUF_H */
