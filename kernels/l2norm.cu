/* Per-head L2 norm rows and per token, in place (kernels/l2norm.h). */
#include "kernels/l2norm.h"
#include "kernels/norm_kernels.cuh"

#include <cuda_runtime.h>

int q35_l2norm_rows(float *x, int64_t n, int64_t heads, int64_t rows, int64_t row_stride, float eps,
                    q35_stream stream, q35_error *err)
{
    if (n < 1 || n > Q35_NORM_MAX_N || heads < 1 || rows < 0 || rows * heads > INT32_MAX || row_stride < n * heads)
        return q35_fail(err,
                        "l2norm_rows: n = %lld (want 1..%d), heads = %lld, rows = %lld, row stride %lld "
                        "(want >= n * heads and rows * heads <= %d)",
                        (long long)n, Q35_NORM_MAX_N, (long long)heads, (long long)rows, (long long)row_stride,
                        INT32_MAX);
    if (rows == 0)
        return 0;
    q35_norm_launch<Q35_NORM_L2>(x, x, nullptr, nullptr, (int)n, (int)heads, row_stride, row_stride, eps, rows * heads,
                                 stream);
    return Q35_LAUNCH_CHECK("l2norm_rows", err);
}

int q35_l2norm(float *x, int64_t n, int64_t heads, float eps, q35_stream stream, q35_error *err)
{
    return q35_l2norm_rows(x, n, heads, 1, n * heads, eps, stream, err);
}
