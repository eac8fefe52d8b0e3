/* An experiment (kernels/experiments/, built into the suites and benchmarks
 * where Q35_KERNEL_EXPERIMENTS is on; not in q35_kernels): the gated RMSNorm's
 * f16 form (q35_gated_rmsnorm_rows_f16, kernels/gated_rmsnorm.h, ssm_out's
 * input on the f16 path) with its silu(z) in the fast form of q35_swiglu
 * (q35_silu_fast, kernels/reduce.cuh: __expf and __fdividef), so not the
 * units' bits: the SiLU within relative (4.5 + 1.173 |z|) 2^-23 of its own,
 * far under the f16 rounding the output takes next; the suite holds it to
 * float64 within the f16 form's bound. Why: the units' form reads o and z in
 * f32 and writes f16 (10 bytes a value) below the copy rate, and silu's expf
 * range reduction and IEEE division are most of its instructions a value, as
 * in the fused prologue (kernels/experiments/delta_prep.h). The gain is small
 * (bench gated_rmsnorm_fast_silu; bench/results/index.tsv, family kernels):
 * not taken into the model. Refuses what
 * q35_gated_rmsnorm_rows_f16 refuses. */
#ifndef Q35_KERNELS_EXPERIMENTS_GATED_RMSNORM_FAST_H
#define Q35_KERNELS_EXPERIMENTS_GATED_RMSNORM_FAST_H

#include "kernels/cuda.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int q35_gated_rmsnorm_rows_f16_fast(uint16_t *y16, const float *o, const float *z, int64_t z_stride, const float *w,
                                    int64_t n, int64_t heads, int64_t T, float eps, q35_stream stream, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_EXPERIMENTS_GATED_RMSNORM_FAST_H */
