/* The fused DeltaNet prologue with the warp's tiles chosen, and with the fast
 * SiLU (kernels/experiments/delta_prep.h): the launchers alone; the kernel and
 * its launch are kernels/delta_prep.cuh's, the production launchers' own. */
#include "kernels/delta_prep.cuh"
#include "kernels/experiments/delta_prep.h"

int q35_delta_prep_rows_run(int run, float *out, int64_t out_stride, float *g, float *beta, float *win,
                            const float *mix, int64_t in_stride, int64_t alpha_col, int64_t b_col, const float *conv_w,
                            const float *dt, const float *a, q35_delta_prep_dims d, int64_t T, float eps,
                            q35_stream stream, q35_error *err)
{
    if (run < 0 || run > 1)
        return q35_fail(err, "delta_prep_rows_run: run = %d (want 0: a tile a warp, or 1: runs of %d tiles)", run,
                        PREP_RUN);
    return run ? prep_launch<PREP_RUN>(out, out_stride, nullptr, nullptr, g, beta, win, mix, in_stride, alpha_col,
                                       b_col, conv_w, dt, a, d, T, eps, stream, err)
               : prep_launch<1>(out, out_stride, nullptr, nullptr, g, beta, win, mix, in_stride, alpha_col, b_col,
                                conv_w, dt, a, d, T, eps, stream, err);
}

int q35_delta_prep_rows_fast_silu(float *out, int64_t out_stride, float *g, float *beta, float *win, const float *mix,
                                  int64_t in_stride, int64_t alpha_col, int64_t b_col, const float *conv_w,
                                  const float *dt, const float *a, q35_delta_prep_dims d, int64_t T, float eps,
                                  q35_stream stream, q35_error *err)
{
    return prep_launch<1, true>(out, out_stride, nullptr, nullptr, g, beta, win, mix, in_stride, alpha_col, b_col,
                                conv_w, dt, a, d, T, eps, stream, err);
}
