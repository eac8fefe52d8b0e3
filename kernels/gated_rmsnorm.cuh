/* The gated RMSNorm's rows launch (kernels/gated_rmsnorm.h), its checks and
 * q35_norm_launch of kind KIND (Q35_NORM_GATED_RMS: the units'; _FAST: the
 * experiment kernels/experiments/gated_rmsnorm_fast.h's). */
#ifndef Q35_KERNELS_GATED_RMSNORM_CUH
#define Q35_KERNELS_GATED_RMSNORM_CUH

#include "kernels/gated_rmsnorm.h"
#include "kernels/norm_kernels.cuh"

#include <cuda_runtime.h>

/* Into y of Y (f32 or f16); who names the launcher in a refusal. */
template <int KIND, class Y>
static int q35_gated_rows(const char *who, Y *y, const float *o, const float *z, int64_t z_stride, const float *w,
                          int64_t n, int64_t heads, int64_t T, float eps, q35_stream stream, q35_error *err)
{
    static_assert(q35_norm_gated(KIND), "a gated kind");
    if (n < 1 || n > Q35_NORM_MAX_N || heads < 1 || T < 0 || T * heads > INT32_MAX)
        return q35_fail(err, "%s: n = %lld (want 1..%d), heads = %lld, T = %lld (want heads >= 1, T >= 0, "
                        "T * heads <= %d)", who, (long long)n, Q35_NORM_MAX_N, (long long)heads, (long long)T,
                        INT32_MAX);
    if (z_stride < heads * n)
        return q35_fail(err, "%s: z row stride %lld shorter than its heads * n = %lld * %lld", who,
                        (long long)z_stride, (long long)heads, (long long)n);
    if (T == 0)
        return 0;
    q35_norm_launch<KIND>(y, o, z, w, (int)n, (int)heads, heads * n, z_stride, eps, T * heads, stream);
    return Q35_LAUNCH_CHECK(who, err);
}

#endif /* Q35_KERNELS_GATED_RMSNORM_CUH */
