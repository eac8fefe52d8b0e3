/* The per-token projection (SPEC §2): a GEMV straight from the quantized blocks,
 * never dequantizing the whole weight:
 *
 *     y[o] = sum_i x[i] * W[o][i]        W [n][k] of any computable type
 *
 * Each output is reduced in ONE fixed order that depends on k and the type
 * alone: the row's runs of 16 elements go to 32 lanes in turn (lane l: units l,
 * l + 32, ... of 16 or 32 elements), each lane accumulates its runs in order,
 *     d = sum_j x[j] q[j]   (q the exact integer levels, fused multiply-adds in order)
 *     acc = fma(s, d, acc)  (s the run's scale; Q4_K/Q5_K then acc = fma(-m1, sum_j x[j], acc);
 *                            plain types acc + d),
 * then a fixed butterfly over the lanes. The rows form runs that same per-output
 * reduction for each of T rows (the weight read once per tile of rows): row t of
 * q35_gemv_rows is bitwise q35_gemv on row t, whatever T. It is the deterministic mode's projection; the
 * decode path and the lm_head tail use the per-token form. The float64
 * reference is q35_ref_linear (kernels/linear.h). */
#ifndef Q35_KERNELS_GEMV_H
#define Q35_KERNELS_GEMV_H

#include "core/quant.h"
#include "kernels/cuda.h"
#include "kernels/variant.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CUDA, per token: y [n], x [k], w [n] rows of `type`, by variant `variant`
 * (Q35_VARIANT_DEFAULT: q35_gemv_variant_default(type)); device pointers. w as
 * the GGUF stores it (2-byte aligned; 16-byte alignment with rows of whole 16
 * bytes gives 16-byte loads to F32, F16, BF16, Q4_K, Q5_K), x 4-byte aligned
 * (16-byte: 16-byte loads). n at most 524280 (65535 blocks of 8 rows). Refuses
 * a type it cannot compute, k not a whole number of the type's blocks, a
 * variant outside the registry, each naming it. Bytes: the weight as stored,
 * once; x and y. */
int q35_gemv(float *y, const void *w, q35_type type, int64_t n, int64_t k, const float *x, int variant,
             q35_stream stream, q35_error *err);

/* CUDA, per token, a group of weights that read the same x (a layer's
 * projections of one input: [qkv | z | alpha | beta], [gate | up], [q | k |
 * v]): part i's y [n] from its w [n] rows, every part of `type` and k, in one
 * launch. Each output is bitwise q35_gemv's of its part alone (the same
 * per-row reduction, whatever the group), by the same variant. 1 ..
 * Q35_GEMV_GROUP_MAX parts, their rows summed within q35_gemv's n limit;
 * refuses a part of another type besides q35_gemv's refusals. */
#define Q35_GEMV_GROUP_MAX 4
typedef struct q35_gemv_part {
    float *y;
    const void *w;
    q35_type type;
    int64_t n;
} q35_gemv_part;
int q35_gemv_group(const q35_gemv_part *parts, int count, q35_type type, int64_t k, const float *x, int variant,
                   q35_stream stream, q35_error *err);

/* The per-token form's variants (kernels/variant.h), both in the model's
 * library: the same arithmetic in the same order, so bitwise the same results;
 * they differ in how the weight reaches the lanes.
 *   registers  each lane loads its units of 4 (Q5_K, Q6_K: 2) rows into
 *              registers, then computes them.
 *   staged     each warp streams 32 units of 4 rows (Q8_0, Q6_K: 2) at a time
 *              through a ring of shared-memory stages with coalesced 16-byte
 *              cp.async, 2 or 3 stages in flight while it computes one; a grid
 *              of the resident blocks, each warp taking groups of rows in turn.
 *              Q4_K, Q5_K, Q6_K, Q8_0, Q4_0, Q5_0 on a 16-byte aligned weight
 *              with rows of whole 16 bytes; otherwise (and for Q4_1, Q5_1,
 *              IQ4_NL, Q2_K, Q3_K, IQ4_XS and the grid i-quants IQ2_XXS, IQ2_XS,
 *              IQ2_S, IQ3_XXS, IQ3_S, IQ1_S, IQ1_M) it runs the registers variant.
 * The default: staged for Q4_K, Q5_K, Q6_K, registers for the rest (the faster
 * per type: bench/results/index.tsv, family linear). */
int q35_gemv_variant_count(void);
const char *q35_gemv_variant_name(int variant);
int q35_gemv_variant_find(const char *name);
int q35_gemv_variant_production(int variant);
int q35_gemv_variant_default(q35_type type);

/* CUDA, the batch-invariant rows form: y [T][ldy] (ldy >= n; columns n.. are
 * untouched), x [T][k]; T >= 0 (0 does nothing). The weight is read once per
 * tile of 8 rows. Refuses ldy < n besides. */
int q35_gemv_rows(float *y, int64_t ldy, const void *w, q35_type type, int64_t n, int64_t k, const float *x, int64_t T,
                  q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_GEMV_H */
