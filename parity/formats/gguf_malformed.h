/* Test helper: the table of malformed GGUF images test_gguf feeds the reader.
 * Each case is an image (most a small valid image from the writer with one or two
 * edits at named fields, the rest built by hand) that the reader must refuse with a
 * message holding the case's substring and the file offset of the offending field. The same table
 * writes and checks the committed corpus data/fixtures/gguf-bad (gguf_corpus.h). */
#ifndef Q35_GGUF_MALFORMED_H
#define Q35_GGUF_MALFORMED_H

#include "gguf_images.h"
#include "parity/lib/harness.h"

#include <stdint.h>

#define Q35_TEST_N_BAD_CASES 48 /* entries of q35_test_bad_cases */

/* A malformed image and the file offset its message must name. */
typedef struct q35_test_bad_image {
    q35_test_bytes b;
    uint64_t at;
} q35_test_bad_image;

/* A field of the base image (gguf_malformed.c: a small valid image from the
 * writer with 5 pairs and 4 tensors), where the reader found it. */
typedef enum q35_test_bad_field {
    Q35_BAD_START,                                     /* offset 0: the header */
    Q35_BAD_ARCH_KEY, Q35_BAD_ARCH_VALUE,              /* "general.architecture": its key, its value */
    Q35_BAD_BLOCKS_TYPE,                               /* "qwen35.block_count": its value type */
    Q35_BAD_FLAG_VALUE,                                /* "flag": its bool */
    Q35_BAD_ARR_U32_VALUE, Q35_BAD_ARR_STR_VALUE,      /* the arrays: element type, count, elements */
    Q35_BAD_T0_INFO, Q35_BAD_T0_NAME, Q35_BAD_T0_N_DIMS, Q35_BAD_T0_DIMS, Q35_BAD_T0_TYPE, /* t.f32 f32 [8, 2] */
    Q35_BAD_T1_INFO, Q35_BAD_T1_DIMS, Q35_BAD_T1_OFFSET, /* t.q4k q4_K [256] */
    Q35_BAD_T2_DIMS,                                   /* t.f64 f64 [4] */
    Q35_BAD_T3_INFO, Q35_BAD_T3_NAME, Q35_BAD_T3_OFFSET, /* t.f16 f16 [16], the last info */
    Q35_BAD_INFOS_END, Q35_BAD_DATA_OFFSET,            /* the end of the infos, the data section */
} q35_test_bad_field;

/* A file offset: a field of the base image and a byte count past it. */
typedef struct q35_test_place {
    q35_test_bad_field field;
    int64_t delta;
} q35_test_place;

/* An edit of the base image at a place. */
typedef enum q35_test_edit_op {
    Q35_EDIT_NONE,
    Q35_EDIT_U8,      /* the byte there := value */
    Q35_EDIT_U32,     /* the u32 there := value */
    Q35_EDIT_U64,     /* the u64 there := value */
    Q35_EDIT_ADD_U64, /* the u64 there += value */
    Q35_EDIT_BYTES,   /* bytes's characters written there */
    Q35_EDIT_CUT,     /* the image ends there */
} q35_test_edit_op;

typedef struct q35_test_edit {
    q35_test_edit_op op;
    q35_test_place at;
    uint64_t value;
    const char *bytes;
} q35_test_edit;

/* One malformed image: its corpus name; the base image with up to two edits,
 * or (build not NULL) an image built by hand; the offset its message must
 * name; what the message says. */
typedef struct q35_test_bad_case {
    const char *name;
    int (*build)(q35_test_bad_image *x); /* NULL: the base image edited */
    q35_test_edit edit[2];
    q35_test_place at;                   /* with edits: the offset the message names (build: it sets x->at) */
    const char *want;
} q35_test_bad_case;

/* The cases: the header, the metadata, the tensor infos, the data section. */
extern const q35_test_bad_case q35_test_bad_cases[Q35_TEST_N_BAD_CASES];

/* Builds case c into x (zeroed first); -1 when it cannot be built or ran out of
 * memory, with x's bytes freed. On success free them with q35_test_bytes_free. */
int q35_test_build_bad(const q35_test_bad_case *c, q35_test_bad_image *x);

/* One case per table entry: through q35_gguf_open_memory (a malloc'd copy of
 * exactly the image) it is refused with -1, *out == NULL and a message holding the
 * substring and the field's offset; the image is under Q35_TEST_CORPUS_MAX_BYTES. */
void q35_test_suite_malformed(q35_suite *s);

#endif /* Q35_GGUF_MALFORMED_H */
