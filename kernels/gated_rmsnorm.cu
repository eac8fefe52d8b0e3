/* Gated RMSNorm rows and per token (kernels/gated_rmsnorm.h). */
#include "kernels/gated_rmsnorm.h"
#include "kernels/norm_kernels.cuh"

#include <cuda_runtime.h>

int q35_gated_rmsnorm_rows(float *y, const float *o, const float *z, const float *w, int64_t n, int64_t rows,
                           float eps, q35_stream stream, q35_error *err)
{
    if (n < 1 || n > Q35_NORM_MAX_N || rows < 0 || rows > INT32_MAX)
        return q35_fail(err, "gated_rmsnorm_rows: n = %lld (want 1..%d), rows = %lld (want 0..%d)", (long long)n,
                        Q35_NORM_MAX_N, (long long)rows, INT32_MAX);
    if (rows == 0)
        return 0;
    q35_norm_launch<Q35_NORM_GATED_RMS>(y, o, z, w, (int)n, 1, n, eps, rows, stream);
    return Q35_LAUNCH_CHECK("gated_rmsnorm_rows", err);
}

int q35_gated_rmsnorm(float *y, const float *o, const float *z, const float *w, int64_t n, int64_t heads, float eps,
                      q35_stream stream, q35_error *err)
{
    return q35_gated_rmsnorm_rows(y, o, z, w, n, heads, eps, stream, err);
}
