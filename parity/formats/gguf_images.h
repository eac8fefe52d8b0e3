/* Test helper: the GGUF byte images test_gguf's parts build and open. A growable
 * byte buffer for hand-built and mutated images, the image the writer lays out,
 * the metadata pairs of every value type, and the valid image the truncation sweep
 * cuts and the fuzz seed holds. */
#ifndef Q35_GGUF_IMAGES_H
#define Q35_GGUF_IMAGES_H

#include "core/gguf.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define Q35_TEST_COUNT(a) (sizeof(a) / sizeof((a)[0]))
#define Q35_TEST_CORPUS_MAX_BYTES 4096 /* each committed file stays under this */
#define Q35_TEST_RT_STRING "tokens: <|im_start|> h\xc3\xa9llo, \"quoted\""

/* A growable byte image. */
typedef struct q35_test_bytes {
    uint8_t *p;    /* the bytes (NULL while empty) */
    uint64_t len;  /* bytes used */
    uint64_t cap;  /* bytes allocated */
    bool oom;      /* an append failed: the image is incomplete */
} q35_test_bytes;

/* Appends n bytes of src; on a failed allocation sets b->oom and appends nothing
 * more from then on. */
void q35_test_put_bytes(q35_test_bytes *b, const void *src, uint64_t n);

/* Appends v, little-endian (the host's order). */
void q35_test_put_u32(q35_test_bytes *b, uint32_t v);

/* Appends v, little-endian (the host's order). */
void q35_test_put_u64(q35_test_bytes *b, uint64_t v);

/* Appends a GGUF string: the u64 length of s, then its bytes (no NUL). */
void q35_test_put_str(q35_test_bytes *b, const char *s);

/* Appends n zero bytes. */
void q35_test_put_zeros(q35_test_bytes *b, uint64_t n);

/* Overwrites the 4 bytes at offset `at` (which must lie inside b) with v. */
void q35_test_set_u32(q35_test_bytes *b, uint64_t at, uint32_t v);

/* Overwrites the 8 bytes at offset `at` (which must lie inside b) with v. */
void q35_test_set_u64(q35_test_bytes *b, uint64_t at, uint64_t v);

/* The 8 bytes at offset `at` (which must lie inside b). */
uint64_t q35_test_get_u64(const q35_test_bytes *b, uint64_t at);

/* Frees the bytes and empties b. */
void q35_test_bytes_free(q35_test_bytes *b);

/* The image q35_gguf_writer_write_file writes: the header, then data[i] at tensor
 * i's offset, zeros between. -1 with err set when it cannot be built; out is left
 * for q35_test_bytes_free either way. */
int q35_test_writer_image(const q35_gguf_writer *w, const void *const *data, int64_t n_tensors,
                          q35_test_bytes *out, q35_error *err);

/* Tensor data of a deterministic pattern, one malloc'd buffer per tensor; -1 when
 * an allocation fails (the buffers made so far are left for q35_test_free_data). */
int q35_test_pattern_data(const q35_gguf_writer *w, int64_t n_tensors, uint8_t **data);

/* Frees data[0..n). */
void q35_test_free_data(uint8_t **data, int64_t n);

/* Opens a malloc'd copy of exactly len bytes of p (so ASan catches a read past
 * it), which the result owns on success; on failure the reader must leave the
 * copy alone and it is freed here (ASan reports a double free otherwise). */
int q35_test_open_copy(q35_gguf **g, const uint8_t *p, uint64_t len, q35_error *err);

/* One metadata pair as written. */
typedef struct q35_test_kv {
    const char *key;
    q35_gguf_vtype type;   /* value type */
    q35_gguf_vtype elem;   /* element type of an ARRAY */
    uint64_t count;        /* elements of an ARRAY */
    const void *value;     /* the scalar, a char * (STRING), the elements (ARRAY; char *const * of strings) */
} q35_test_kv;

/* The pairs of an image, in file order. */
typedef struct q35_test_kv_list {
    q35_test_kv kv[80];
    size_t n;
    char keys[2 * Q35_GGUF_VTYPE_COUNT][32]; /* keys of the generated arrays */
} q35_test_kv_list;

/* Appends kv; past the list's room it is dropped. */
void q35_test_add_kv(q35_test_kv_list *l, q35_test_kv kv);

/* Every scalar type, an array of each element type and an empty array of each
 * (elements NULL, as a caller with nothing to pass would write it). */
void q35_test_add_every_type(q35_test_kv_list *l);

/* Writes the pairs (general.alignment is q35_gguf_writer_set_alignment's); -1
 * with err set when the writer refuses one. */
int q35_test_write_kvs(q35_gguf_writer *w, const q35_test_kv_list *l, q35_error *err);

/* One tensor as written. */
typedef struct q35_test_tensor {
    const char *name;
    uint32_t type;                  /* q35_type */
    uint32_t n_dims;                /* 1..4 */
    int64_t ne[Q35_GGUF_MAX_DIMS];  /* ne[0] fastest */
} q35_test_tensor;

/* Adds the n tensors to w in order; -1 with err set when the writer refuses one. */
int q35_test_add_tensors(q35_gguf_writer *w, const q35_test_tensor *t, int64_t n, q35_error *err);

/* The valid image of the truncation sweep and the fuzz seed: every scalar type,
 * arrays of each (empty ones, strings with empty strings) and three tensors;
 * deterministic, under 4 KiB. *infos_end is the end of the last tensor info (where
 * the padding before the data section starts). -1 with err set (or out of memory)
 * when it cannot be built; out is freed by q35_test_bytes_free either way. */
int q35_test_rich_image(q35_test_bytes *out, uint64_t *infos_end, q35_error *err);

#endif /* Q35_GGUF_IMAGES_H */
