/* Gated RMSNorm rows and per token (kernels/gated_rmsnorm.h); the FP8-out form
 * and the fast-SiLU form, experiments, are kernels/experiments/gated_rmsnorm_fp8.cu
 * and gated_rmsnorm_fast.cu. */
#include "kernels/gated_rmsnorm.cuh"

int q35_gated_rmsnorm_rows(float *y, const float *o, const float *z, int64_t z_stride, const float *w, int64_t n,
                           int64_t heads, int64_t T, float eps, q35_stream stream, q35_error *err)
{
    return q35_gated_rows<Q35_NORM_GATED_RMS>("gated_rmsnorm_rows", y, o, z, z_stride, w, n, heads, T, eps, stream,
                                              err);
}

int q35_gated_rmsnorm_rows_f16(uint16_t *y16, const float *o, const float *z, int64_t z_stride, const float *w,
                               int64_t n, int64_t heads, int64_t T, float eps, q35_stream stream, q35_error *err)
{
    return q35_gated_rows<Q35_NORM_GATED_RMS>("gated_rmsnorm_rows_f16", (__half *)y16, o, z, z_stride, w, n, heads, T,
                                              eps, stream, err);
}

int q35_gated_rmsnorm_q8(float *y, void *xq, const float *o, const float *z, const float *w, int64_t n, int64_t heads,
                         float eps, q35_stream stream, q35_error *err)
{
    if (n < 1 || n > Q35_NORM_MAX_N || heads < 1 || heads > INT32_MAX / n)
        return q35_fail(err, "gated_rmsnorm_q8: n = %lld (want 1..%d), heads = %lld (want >= 1)", (long long)n,
                        Q35_NORM_MAX_N, (long long)heads);
    return q35_norm_q8_launch<Q35_NORM_GATED_RMS>("gated_rmsnorm_q8", y, xq, o, z, w, (int)n, (int)heads, eps,
                                                  (cudaStream_t)stream, nullptr, err);
}

int q35_gated_rmsnorm(float *y, const float *o, const float *z, const float *w, int64_t n, int64_t heads, float eps,
                      q35_stream stream, q35_error *err)
{
    return q35_gated_rmsnorm_rows(y, o, z, heads * n, w, n, heads, 1, eps, stream, err);
}
