/* The embedding gather (SPEC §2): row `token` of token_embd {H, vocab}, of any
 * computable type, dequantized:
 *
 *     x[t][i] = E[token[t]][i]
 *
 * The rows form gathers T tokens; the per-token form one. */
#ifndef Q35_KERNELS_EMBEDDING_H
#define Q35_KERNELS_EMBEDDING_H

#include "core/quant.h"
#include "kernels/cuda.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* float64 reference: one row (also the reference's way of reading any small
 * weight whole: row 0 of a table of n_embd = rows*cols). */
void q35_ref_embedding(double *x, q35_type type, const void *table, int64_t n_embd, int64_t token);

/* CUDA, the rows form: x [T][n_embd]; table [vocab][row bytes] and tokens [T] on
 * the device. A token outside 0..vocab-1 gives a row of NaN (callers refuse such
 * tokens first); nothing is read outside the table. */
int q35_embedding_rows(float *x, const void *table, q35_type type, int64_t n_embd, int64_t vocab,
                       const int32_t *tokens, int64_t T, q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_EMBEDDING_H */
