/* The gated RMSNorm's f16 form with the fast SiLU
 * (kernels/experiments/gated_rmsnorm_fast.h): the launcher alone; the checks
 * and the kernels are the units' own (kernels/gated_rmsnorm.cuh,
 * norm_kernels.cuh), of kind Q35_NORM_GATED_RMS_FAST. */
#include "kernels/experiments/gated_rmsnorm_fast.h"
#include "kernels/gated_rmsnorm.cuh"

#include <cuda_fp16.h>

int q35_gated_rmsnorm_rows_f16_fast(uint16_t *y16, const float *o, const float *z, int64_t z_stride, const float *w,
                                    int64_t n, int64_t heads, int64_t T, float eps, q35_stream stream, q35_error *err)
{
    return q35_gated_rows<Q35_NORM_GATED_RMS_FAST>("gated_rmsnorm_rows_f16_fast", (__half *)y16, o, z, z_stride, w,
                                                   n, heads, T, eps, stream, err);
}
