/* Test helper: the table of malformed GGUF images test_gguf feeds the reader.
 * Each case builds an image (most by one mutation of a small valid image from the
 * writer, the rest by hand) that the reader must refuse with a message holding the
 * case's substring and the file offset of the offending field. The same table
 * writes and checks the committed corpus data/fixtures/gguf-bad (gguf_corpus.h). */
#ifndef Q35_GGUF_MALFORMED_H
#define Q35_GGUF_MALFORMED_H

#include "gguf_images.h"
#include "parity/lib/harness.h"

#include <stdint.h>

#define Q35_TEST_N_BAD_CASES 47 /* entries of q35_test_bad_cases */

/* A malformed image and the file offset its message must name. */
typedef struct q35_test_bad_image {
    q35_test_bytes b;
    uint64_t at;
} q35_test_bad_image;

/* One malformed image: its corpus name, how it is built, what the message says. */
typedef struct q35_test_bad_case {
    const char *name;
    int (*build)(q35_test_bad_image *x);
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
