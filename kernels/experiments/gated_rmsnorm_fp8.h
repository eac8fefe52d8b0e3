/* An experiment (kernels/experiments/, built into the suites and benchmarks
 * where Q35_KERNEL_EXPERIMENTS is on; not in q35_kernels, not the model's path):
 * the FP8-out form of the gated RMSNorm (kernels/gated_rmsnorm.h), measured
 * slower than the two steps it would replace (below), kept for the record and
 * as the start of a faster version. Its device code is the production FP8-out
 * forms' own (q35_norm_fp8_launch of kernels/norm_kernels.cuh, the row
 * quantization of kernels/fp8_row.cuh); only this launcher is the experiment's. */
#ifndef Q35_KERNELS_EXPERIMENTS_GATED_RMSNORM_FP8_H
#define Q35_KERNELS_EXPERIMENTS_GATED_RMSNORM_FP8_H

#include "kernels/cuda.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* CUDA, FP8 out (ssm_out's input on the FP8 GEMM path, kernels/fp8.h): T
 * tokens of `heads` heads of n (o contiguous, z at z_stride as the forms of
 * kernels/gated_rmsnorm.h), the quantization per TOKEN: e4m3 codes q
 * [T][heads * n] and one scale over the heads * n values of each token,
 * scale [T]; bitwise
 * q35_fp8_quantize_rows(q, scale, y, T, heads * n, heads * n) of the f32 y of
 * q35_gated_rmsnorm_rows (the same arithmetic; no f32 y written), in one
 * launch: a block a token, its heads computed as the f32 form computes them (a
 * warp a head below 512 values) into shared memory, then the token's amax and
 * codes. heads * n in 1..Q35_FP8_ROW_MAX (24576), refused beyond. Bytes a
 * token: 8 heads n read (o, z) + heads n + 4 written, against 12 heads n + 5
 * heads n + 4 for the f32 form and q35_fp8_quantize_rows. Passes the suite,
 * but slower than the two (a block a token of 32 heads at the 9B;
 * bench/results/log/): the model's fp8 path keeps the f32 form. */
int q35_gated_rmsnorm_rows_fp8(uint8_t *q, float *scale, const float *o, const float *z, int64_t z_stride,
                               const float *w, int64_t n, int64_t heads, int64_t T, float eps, q35_stream stream,
                               q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_EXPERIMENTS_GATED_RMSNORM_FP8_H */
