/* Test helper for test_kernels_linear: the projection shapes of the released
 * models (SPEC §1), quantized weights of realistic scale made fast enough for the
 * 248320-row lm_head, the checked subset of output columns and the float64
 * references on it. */
#ifndef Q35_LINEAR_INPUTS_H
#define Q35_LINEAR_INPUTS_H

#include "parity/lib/harness.h"

#include "core/quant.h"
#include "core/rng.h"
#include "model/shapes.h"

#include <stddef.h>
#include <stdint.h>

/* A projection: its tensor names and W [n][k]. */
typedef struct q35_proj {
    const char *name;
    int64_t n, k;
} q35_proj;

#define Q35_N_PROJ 10 /* distinct shapes: alpha/beta, k/v and gate/up share theirs */

/* The projections of a model shape (model/shapes.c), lm_head last. */
void q35_model_projections(q35_proj out[Q35_N_PROJ], const q35_shape *m);

/* W [n][k] of `type` on the host, malloc'd (q35_row_bytes(type, k) * n bytes):
 * quantized types from random bytes with every block's scales set to finite
 * values of a trained weight's scale (every level and sub-block scale pattern
 * occurs); plain types N(0, 0.05) rounded to the type. */
uint8_t *q35_test_weight(q35_type type, int64_t n, int64_t k, q35_rng *r);

/* Up to `most` distinct output columns of n, ascending, 0 and n - 1 among them
 * (all n when n <= most), malloc'd; their count in *m. */
int64_t *q35_test_columns(int64_t n, int64_t most, int64_t *m, q35_rng *r);

/* ref [T][m] = float64 q35_ref_linear of rows x [T][k] through the weight rows
 * cols[0..m) of w (type, k); with `f16` both the weight and the rows rounded to
 * f16 first (the f16 path's inputs). */
void q35_test_ref_columns(double *ref, const float *x, int64_t T, const uint8_t *w, q35_type type, int64_t k,
                          const int64_t *cols, int64_t m, bool f16);

#endif /* Q35_LINEAR_INPUTS_H */
