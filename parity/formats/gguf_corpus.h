/* Test helper: the committed GGUF files of test_gguf, the malformed corpus
 * data/fixtures/gguf-bad (the table of gguf_malformed.h, one file a case, and its
 * MANIFEST) and the fuzz seed data/fixtures/gguf-seed/valid.gguf (the valid image
 * of gguf_images.h): writing them, and checking that what is committed is what the
 * table and the image builder make now. */
#ifndef Q35_GGUF_CORPUS_H
#define Q35_GGUF_CORPUS_H

#include "parity/lib/harness.h"

/* Writes every case of the table as DIR/<name>.gguf and their substrings into
 * DIR/MANIFEST, printing a line per file; 1 (a message on stderr) when a file
 * cannot be built or written, else 0. `test_gguf --write-corpus DIR`. */
int q35_test_write_corpus(const char *dir);

/* Writes the valid image to path, printing a line; 1 (a message on stderr) when it
 * cannot, else 0. `test_gguf --write-seed FILE`. */
int q35_test_write_seed(const char *path);

/* Every file the MANIFEST lists is refused through the mmap path with its
 * substring and holds the bytes its case builds now; every table case is listed;
 * every .gguf there is listed; the fuzz seed opens and is the valid image. */
void q35_test_suite_corpus(q35_suite *s);

#endif /* Q35_GGUF_CORPUS_H */
