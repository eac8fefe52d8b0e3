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

/* RMSNorm rows into y of Y (f32 or f16). */
template <class Y>
static int rmsnorm_rows(const char *who, Y *y, const float *x, const float *w, int64_t n, int64_t rows, float eps,
                        q35_stream stream, q35_error *err)
{
    if (check_shape(who, n, rows, err))
        return -1;
    if (rows == 0)
        return 0;
    q35_norm_launch<Q35_NORM_RMS>(y, x, nullptr, w, (int)n, 1, n, n, eps, rows, stream);
    return Q35_LAUNCH_CHECK(who, err);
}

/* The fused form's shape, and its output (out, named out_name) apart from x and r. */
static int check_add(const char *who, const char *out_name, const void *out, const float *x, const float *r, int64_t n,
                     int64_t rows, q35_error *err)
{
    if (check_shape(who, n, rows, err))
        return -1;
    if (out == (const void *)x || out == (const void *)r)
        return q35_fail(err, "%s: %s must not alias x or r", who, out_name);
    return 0;
}

/* The fused add + RMSNorm into y of Y (f32 or f16). */
template <class Y>
static int add_rmsnorm_rows(const char *who, Y *y, float *x, const float *r, const float *w, int64_t n, int64_t rows,
                            float eps, q35_stream stream, q35_error *err)
{
    if (check_add(who, "y", y, x, r, n, rows, err))
        return -1;
    if (rows == 0)
        return 0;
    q35_norm_launch<Q35_NORM_ADD_RMS>(y, x, r, w, (int)n, 1, n, n, eps, rows, stream, x);
    return Q35_LAUNCH_CHECK(who, err);
}

int q35_rmsnorm_rows(float *y, const float *x, const float *w, int64_t n, int64_t rows, float eps, q35_stream stream,
                     q35_error *err)
{
    return rmsnorm_rows("rmsnorm_rows", y, x, w, n, rows, eps, stream, err);
}

int q35_rmsnorm_rows_f16(uint16_t *y16, const float *x, const float *w, int64_t n, int64_t rows, float eps,
                         q35_stream stream, q35_error *err)
{
    return rmsnorm_rows("rmsnorm_rows_f16", (__half *)y16, x, w, n, rows, eps, stream, err);
}

int q35_add_rmsnorm_rows(float *y, float *x, const float *r, const float *w, int64_t n, int64_t rows, float eps,
                         q35_stream stream, q35_error *err)
{
    return add_rmsnorm_rows("add_rmsnorm_rows", y, x, r, w, n, rows, eps, stream, err);
}

int q35_add_rmsnorm_rows_f16(uint16_t *y16, float *x, const float *r, const float *w, int64_t n, int64_t rows,
                             float eps, q35_stream stream, q35_error *err)
{
    return add_rmsnorm_rows("add_rmsnorm_rows_f16", (__half *)y16, x, r, w, n, rows, eps, stream, err);
}

int q35_rmsnorm_rows_fp8(uint8_t *q, float *scale, const float *x, const float *w, int64_t n, int64_t rows, float eps,
                         q35_stream stream, q35_error *err)
{
    if (check_shape("rmsnorm_rows_fp8", n, rows, err))
        return -1;
    return q35_norm_fp8_launch<Q35_NORM_RMS>("rmsnorm_rows_fp8", q, scale, x, nullptr, w, (int)n, 1, n, eps, rows,
                                             stream, nullptr, err);
}

int q35_add_rmsnorm_rows_fp8(uint8_t *q, float *scale, float *x, const float *r, const float *w, int64_t n,
                             int64_t rows, float eps, q35_stream stream, q35_error *err)
{
    if (check_add("add_rmsnorm_rows_fp8", "q", q, x, r, n, rows, err))
        return -1;
    return q35_norm_fp8_launch<Q35_NORM_ADD_RMS>("add_rmsnorm_rows_fp8", q, scale, x, r, w, (int)n, 1, n, eps, rows,
                                                 stream, x, err);
}

int q35_rmsnorm_q8(float *y, void *xq, const float *x, const float *w, int64_t n, float eps, q35_stream stream,
                   q35_error *err)
{
    if (check_shape("rmsnorm_q8", n, 1, err))
        return -1;
    return q35_norm_q8_launch<Q35_NORM_RMS>("rmsnorm_q8", y, xq, x, nullptr, w, (int)n, 1, eps, stream, nullptr, err);
}

int q35_add_rmsnorm_q8(float *y, void *xq, float *x, const float *r, const float *w, int64_t n, float eps,
                       q35_stream stream, q35_error *err)
{
    if (check_add("add_rmsnorm_q8", "y", y, x, r, n, 1, err))
        return -1;
    return q35_norm_q8_launch<Q35_NORM_ADD_RMS>("add_rmsnorm_q8", y, xq, x, r, w, (int)n, 1, eps, stream, x, err);
}

int q35_rmsnorm(float *y, const float *x, const float *w, int64_t n, float eps, q35_stream stream, q35_error *err)
{
    return q35_rmsnorm_rows(y, x, w, n, 1, eps, stream, err);
}
