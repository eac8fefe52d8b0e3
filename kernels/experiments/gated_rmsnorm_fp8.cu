/* The gated RMSNorm's FP8-out form (kernels/experiments/gated_rmsnorm_fp8.h: an
 * experiment, measured slower than the f32 form + q35_fp8_quantize_rows): the
 * launcher alone; the kernel is q35_norm_fp8_launch's (kernels/norm_kernels.cuh),
 * the production FP8-out norms' own. */
#include "kernels/experiments/gated_rmsnorm_fp8.h"
#include "kernels/norm_kernels.cuh"

int q35_gated_rmsnorm_rows_fp8(uint8_t *q, float *scale, const float *o, const float *z, int64_t z_stride,
                               const float *w, int64_t n, int64_t heads, int64_t T, float eps, q35_stream stream,
                               q35_error *err)
{
    if (n < 1 || n > Q35_NORM_MAX_N || heads < 1 || heads > INT32_MAX || T < 0 || T > INT32_MAX)
        return q35_fail(err, "gated_rmsnorm_rows_fp8: n = %lld (want 1..%d), heads = %lld (want 1..%d), T = %lld "
                        "(want 0..%d)", (long long)n, Q35_NORM_MAX_N, (long long)heads, INT32_MAX, (long long)T,
                        INT32_MAX);
    if (z_stride < heads * n)
        return q35_fail(err, "gated_rmsnorm_rows_fp8: z row stride %lld shorter than its heads * n = %lld * %lld",
                        (long long)z_stride, (long long)heads, (long long)n);
    return q35_norm_fp8_launch<Q35_NORM_GATED_RMS>("gated_rmsnorm_rows_fp8", q, scale, o, z, w, (int)n, (int)heads,
                                                   z_stride, eps, T, stream, nullptr, err);
}
