/* Gated RMSNorm rows and per token (kernels/gated_rmsnorm.h); the FP8-out form,
 * an experiment, is kernels/experiments/gated_rmsnorm_fp8.cu. */
#include "kernels/gated_rmsnorm.h"
#include "kernels/norm_kernels.cuh"

#include <cuda_runtime.h>

/* Into y of Y (f32 or f16). */
template <class Y>
static int gated_rows(const char *who, Y *y, const float *o, const float *z, int64_t z_stride, const float *w,
                      int64_t n, int64_t heads, int64_t T, float eps, q35_stream stream, q35_error *err)
{
    if (n < 1 || n > Q35_NORM_MAX_N || heads < 1 || T < 0 || T * heads > INT32_MAX)
        return q35_fail(err, "%s: n = %lld (want 1..%d), heads = %lld, T = %lld (want heads >= 1, T >= 0, "
                        "T * heads <= %d)", who, (long long)n, Q35_NORM_MAX_N, (long long)heads, (long long)T,
                        INT32_MAX);
    if (z_stride < heads * n)
        return q35_fail(err, "%s: z row stride %lld shorter than its heads * n = %lld * %lld", who,
                        (long long)z_stride, (long long)heads, (long long)n);
    if (T == 0)
        return 0;
    q35_norm_launch<Q35_NORM_GATED_RMS>(y, o, z, w, (int)n, (int)heads, heads * n, z_stride, eps, T * heads, stream);
    return Q35_LAUNCH_CHECK(who, err);
}

int q35_gated_rmsnorm_rows(float *y, const float *o, const float *z, int64_t z_stride, const float *w, int64_t n,
                           int64_t heads, int64_t T, float eps, q35_stream stream, q35_error *err)
{
    return gated_rows("gated_rmsnorm_rows", y, o, z, z_stride, w, n, heads, T, eps, stream, err);
}

int q35_gated_rmsnorm_rows_f16(uint16_t *y16, const float *o, const float *z, int64_t z_stride, const float *w,
                               int64_t n, int64_t heads, int64_t T, float eps, q35_stream stream, q35_error *err)
{
    return gated_rows("gated_rmsnorm_rows_f16", (__half *)y16, o, z, z_stride, w, n, heads, T, eps, stream, err);
}

int q35_gated_rmsnorm(float *y, const float *o, const float *z, const float *w, int64_t n, int64_t heads, float eps,
                      q35_stream stream, q35_error *err)
{
    return q35_gated_rmsnorm_rows(y, o, z, heads * n, w, n, heads, 1, eps, stream, err);
}
