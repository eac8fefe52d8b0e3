/* The DeltaNet prologue in one pass (kernels/delta_prep.h): the launchers;
 * the kernel is kernels/delta_prep.cuh's. */
#include "kernels/delta_prep.cuh"

int q35_delta_prep_rows(float *out, int64_t out_stride, float *g, float *beta, float *win, const float *mix,
                        int64_t in_stride, int64_t alpha_col, int64_t b_col, const float *conv_w, const float *dt,
                        const float *a, q35_delta_prep_dims d, int64_t T, float eps, q35_stream stream,
                        q35_error *err)
{
    return prep_launch<1>(out, out_stride, nullptr, nullptr, g, beta, win, mix, in_stride, alpha_col, b_col, conv_w, dt,
                       a, d, T, eps, stream, err);
}

int q35_delta_prep_rows_qk16(float *out, int64_t out_stride, uint16_t *q16, uint16_t *k16, float *g, float *beta,
                             float *win, const float *mix, int64_t in_stride, int64_t alpha_col, int64_t b_col,
                             const float *conv_w, const float *dt, const float *a, q35_delta_prep_dims d, int64_t T,
                             float eps, q35_stream stream, q35_error *err)
{
    if (!q16 || !k16 || ((uintptr_t)q16 & 7) || ((uintptr_t)k16 & 7))
        return q35_fail(err, "delta_prep_rows_qk16: q16 %p and k16 %p must be set and 8-byte aligned",
                        (const void *)q16, (const void *)k16);
    return prep_launch<1>(out, out_stride, q16, k16, g, beta, win, mix, in_stride, alpha_col, b_col, conv_w, dt, a, d,
                       T, eps, stream, err);
}
