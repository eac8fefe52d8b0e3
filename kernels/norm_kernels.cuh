/* The three norms share one kernel shape: a block per vector, a fixed-order
 * sum of squares, a scale. The block size depends on n only, never on the row
 * count, so a row's bits are the same in any launch. */
#ifndef Q35_KERNELS_NORM_KERNELS_CUH
#define Q35_KERNELS_NORM_KERNELS_CUH

#include "kernels/reduce.cuh"

#include <stdint.h>

#define Q35_NORM_MAX_N (1 << 20)

enum q35_norm_kind { Q35_NORM_RMS, Q35_NORM_L2, Q35_NORM_GATED_RMS };

/* Vector b: x + (b / heads) * row_stride + (b % heads) * n (and the same for y, z). */
template <int THREADS, int KIND>
__global__ void __launch_bounds__(THREADS) q35_norm_kernel(float *y, const float *x, const float *z, const float *w,
                                                            int n, int heads, int64_t row_stride, float eps)
{
    const int64_t b = blockIdx.x;
    const int64_t off = (b / heads) * row_stride + (b % heads) * (int64_t)n;
    const float *xr = x + off;
    float *yr = y + off;
    float ss = 0.0f;
    for (int i = threadIdx.x; i < n; i += THREADS)
        ss = fmaf(xr[i], xr[i], ss);
    ss = q35_block_sum<THREADS>(ss);
    const float inv = 1.0f / sqrtf((KIND == Q35_NORM_L2 ? ss : ss / (float)n) + eps);
    for (int i = threadIdx.x; i < n; i += THREADS) {
        float v = xr[i] * inv;
        if (KIND != Q35_NORM_L2)
            v *= w[i];
        if (KIND == Q35_NORM_GATED_RMS)
            v *= q35_silu(z[off + i]);
        yr[i] = v;
    }
}

/* Launches KIND over `blocks` vectors with a block size chosen from n. */
template <int KIND>
static void q35_norm_launch(float *y, const float *x, const float *z, const float *w, int n, int heads,
                            int64_t row_stride, float eps, int64_t blocks, cudaStream_t s)
{
    if (n >= 1024)
        q35_norm_kernel<256, KIND><<<(unsigned)blocks, 256, 0, s>>>(y, x, z, w, n, heads, row_stride, eps);
    else if (n >= 256)
        q35_norm_kernel<64, KIND><<<(unsigned)blocks, 64, 0, s>>>(y, x, z, w, n, heads, row_stride, eps);
    else
        q35_norm_kernel<32, KIND><<<(unsigned)blocks, 32, 0, s>>>(y, x, z, w, n, heads, row_stride, eps);
}

#endif /* Q35_KERNELS_NORM_KERNELS_CUH */
