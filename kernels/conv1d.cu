/* Causal conv1d + SiLU, rows and per token (kernels/conv1d.h).
 *
 * Token t's input j of the window is x[t - (K-1) + j]: an earlier row of u, or
 * the state window for the first K-1 tokens. Every (t, c) output is independent
 * once the inputs are there, so the rows form runs them all in parallel, then a
 * second kernel moves each channel's window on by T. */
#include "kernels/conv1d.h"
#include "kernels/conv1d.cuh"

#include <cuda_runtime.h>

/* A thread takes channel c over CONV_R consecutive tokens: the R + K - 1 inputs
 * they share are read once into registers (not K times each), and each output
 * is the same fused multiply-adds in the same order as a lone token's. */
#define CONV_R 8
template <int K>
__global__ void q35_conv1d_rows_kernel(float *y, int64_t out_stride, const float *win, const float *u,
                                       int64_t in_stride, const float *w, int64_t channels, int64_t T)
{
    const int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    const int64_t t0 = (blockIdx.y + (int64_t)gridDim.y * blockIdx.z) * CONV_R;
    if (c >= channels || t0 >= T)
        return;
    float wc[K], xs[CONV_R + K - 1];
#pragma unroll
    for (int j = 0; j < K; j++)
        wc[j] = w[c * K + j];
#pragma unroll
    for (int i = 0; i < CONV_R + K - 1; i++) {
        const int64_t s = t0 - (K - 1) + i; /* the input's token */
        xs[i] = s < 0 ? win[c * (K - 1) + (K - 1) + s] : s < T ? u[s * in_stride + c] : 0.0f;
    }
#pragma unroll
    for (int r = 0; r < CONV_R; r++) {
        if (t0 + r >= T)
            break;
        y[(t0 + r) * out_stride + c] = q35_conv1d_silu_out<K>(xs + r, wc);
    }
}

__global__ void q35_conv1d_window_kernel(float *win, const float *u, int64_t in_stride, int64_t channels, int K,
                                         int64_t T)
{
    const int64_t c = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (c >= channels)
        return;
    q35_conv1d_window_advance(win + c * (K - 1), u + c, in_stride, K, T);
}

int q35_conv1d_silu_rows(float *y, int64_t out_stride, float *win, const float *u, int64_t in_stride, const float *w,
                         int64_t channels, int K, int64_t T, q35_stream stream, q35_error *err)
{
    if (K < 2 || K > Q35_CONV_MAX_K || channels < 1 || T < 0 || in_stride < channels || out_stride < channels)
        return q35_fail(err,
                        "conv1d_silu_rows: K = %d (want 2..%d), channels = %lld, T = %lld, strides %lld/%lld "
                        "(want >= channels)",
                        K, Q35_CONV_MAX_K, (long long)channels, (long long)T, (long long)in_stride,
                        (long long)out_stride);
    if (T == 0)
        return 0;
    const int threads = 256;
    const unsigned cblocks = (unsigned)((channels + threads - 1) / threads);
    const int64_t tiles = (T + CONV_R - 1) / CONV_R;
    const unsigned ty = tiles > 65535 ? 65535 : (unsigned)tiles, tz = (unsigned)((tiles + ty - 1) / ty);
    const dim3 grid(cblocks, ty, tz);
    switch (K) {
#define CONV_CASE(k)                                                                                                  \
    case k:                                                                                                           \
        q35_conv1d_rows_kernel<k><<<grid, threads, 0, stream>>>(y, out_stride, win, u, in_stride, w, channels, T);   \
        break;
        CONV_CASE(2) CONV_CASE(3) CONV_CASE(4) CONV_CASE(5) CONV_CASE(6) CONV_CASE(7) CONV_CASE(8)
#undef CONV_CASE
    }
    if (Q35_LAUNCH_CHECK("conv1d_rows", err))
        return -1;
    q35_conv1d_window_kernel<<<cblocks, threads, 0, stream>>>(win, u, in_stride, channels, K, T);
    return Q35_LAUNCH_CHECK("conv1d_window", err);
}

int q35_conv1d_silu(float *y, float *win, const float *u, const float *w, int64_t channels, int K, q35_stream stream,
                    q35_error *err)
{
    return q35_conv1d_silu_rows(y, channels, win, u, channels, w, channels, K, 1, stream, err);
}
