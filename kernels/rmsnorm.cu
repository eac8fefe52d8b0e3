/* RMSNorm rows and single row (kernels/rmsnorm.h). */
#include "kernels/norm_kernels.cuh"
#include "kernels/rmsnorm.h"

#include <cuda_runtime.h>

/* The shapes both entry points take: n in 1..Q35_NORM_MAX_N, rows in 0..INT32_MAX. */
static int check_shape(const char *who, int64_t n, int64_t rows, q35_error *err)
{
    if (n < 1 || n > Q35_NORM_MAX_N || rows < 0 || rows > INT32_MAX)
        return q35_fail(err, "%s: n = %lld (want 1..%d), rows = %lld (want 0..%d)", who, (long long)n,
                        Q35_NORM_MAX_N, (long long)rows, INT32_MAX);
    return 0;
}

int q35_rmsnorm_rows(float *y, const float *x, const float *w, int64_t n, int64_t rows, float eps, q35_stream stream,
                     q35_error *err)
{
    if (check_shape("rmsnorm_rows", n, rows, err))
        return -1;
    if (rows == 0)
        return 0;
    q35_norm_launch<Q35_NORM_RMS>(y, x, nullptr, w, (int)n, 1, n, eps, rows, stream);
    return Q35_LAUNCH_CHECK("rmsnorm_rows", err);
}

int q35_add_rmsnorm_rows(float *y, float *x, const float *r, const float *w, int64_t n, int64_t rows, float eps,
                         q35_stream stream, q35_error *err)
{
    if (check_shape("add_rmsnorm_rows", n, rows, err))
        return -1;
    if (y == x || y == r)
        return q35_fail(err, "add_rmsnorm_rows: y must not alias x or r");
    if (rows == 0)
        return 0;
    q35_norm_launch<Q35_NORM_ADD_RMS>(y, x, r, w, (int)n, 1, n, eps, rows, stream, x);
    return Q35_LAUNCH_CHECK("add_rmsnorm_rows", err);
}

int q35_rmsnorm(float *y, const float *x, const float *w, int64_t n, float eps, q35_stream stream, q35_error *err)
{
    return q35_rmsnorm_rows(y, x, w, n, 1, eps, stream, err);
}
