/* Inputs of the attention suites: a chunk of T query rows at positions pos0..
 * pos0+T-1 over a cache of n_ctx = pos0 + T rows, random like the model's (q
 * and k after RMSNorm and RoPE: normals of unit-ish RMS; v normal), with NaN
 * past the rows a kernel may read (the cache rows >= n_ctx, the padding of each
 * q row) so a read out of bounds shows; and the float64 reference of every row
 * (q35_ref_attention at n_ctx = pos0 + t + 1, on all threads). The same caches
 * as f16 (each value rounded to nearest even, core/half.h: what
 * q35_kv_append_rows_f16 writes; the NaN rows stay NaN), those halves widened
 * back to f32, and the reference over the halves' values. */
#ifndef Q35_PARITY_ATTENTION_INPUTS_H
#define Q35_PARITY_ATTENTION_INPUTS_H

#include "kernels/attention.h"
#include "parity/lib/harness.h"

#include <stdint.h>

/* A model's attention heads. */
typedef struct att_layout {
    char name[8];  /* as the case lines name it: "0.8B" */
    int heads, kv_heads;
} att_layout;

/* The heads of the 0.8B, 9B and 27B shapes (model/shapes.c), i = 0, 1, 2. */
#define Q35_ATT_MODELS 3
att_layout att_model_layout(int i);

typedef struct att_inputs {
    q35_attn_shape s;
    int64_t pos0, T, n_ctx;
    int64_t max_seq;       /* cache rows: n_ctx + 3, the last three NaN */
    float *q, *k, *v;      /* host: q [T][q_stride], caches [max_seq][kv_stride] */
    float *dq, *dk, *dv;   /* their device copies */
    double *ref;           /* float64 reference, [T][heads * head_dim] */
    uint16_t *dk16, *dv16; /* device: the caches rounded to f16 */
    float *dkw, *dvw;      /* device: those halves widened to f32 (exact) */
    double *ref16;         /* float64 reference over the halves' values */
} att_inputs;

/* Draws the inputs (q rows 8 floats wider than the heads, o rows 4 wider) and
 * computes the reference. */
void att_make(att_inputs *in, const att_layout *l, int head_dim, int64_t pos0, int64_t T, q35_rng *r);
void att_free(att_inputs *in);

/* A NaN-filled device output [T][o_stride]. */
float *att_output(const att_inputs *in);

/* A device output downloaded and packed to [T][heads * head_dim]; *stray counts
 * the floats of the rows' padding that are no longer the poison (written out of
 * bounds). */
float *att_download(const att_inputs *in, const float *d_out, int64_t *stray);

/* heads * head_dim: the floats of one packed row. */
int64_t att_width(const att_inputs *in);

/* Floats widened to float64 (to compare two device results). */
double *att_widen(const float *x, int64_t n);

#endif /* Q35_PARITY_ATTENTION_INPUTS_H */
