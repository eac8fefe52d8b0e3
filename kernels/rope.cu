/* Partial NeoX RoPE, rows and per token (kernels/rope.h). A block per row: its
 * first n_rot/2 threads turn pos0 + t into the row's angles in float64, then
 * every thread rotates pairs of the row's heads. */
#include "kernels/rope.cuh"
#include "kernels/rope.h"

#include <cuda_runtime.h>

__global__ void q35_rope_kernel(float *x, int64_t row_stride, int heads, int head_dim, int n_rot, int64_t pos0,
                                const int64_t *pos_at, double base)
{
    if (pos_at)
        pos0 = *pos_at;
    __shared__ float cs[Q35_ROPE_MAX_DIM / 2], sn[Q35_ROPE_MAX_DIM / 2];
    const int half = n_rot / 2;
    const int64_t t = blockIdx.x;
    for (int i = threadIdx.x; i < half; i += blockDim.x)
        q35_rope_angle(pos0 + t, i, n_rot, base, &cs[i], &sn[i]);
    __syncthreads();
    float *row = x + t * row_stride;
    for (int p = threadIdx.x; p < heads * half; p += blockDim.x) {
        const int h = p / half, i = p % half;
        float *xh = row + (int64_t)h * head_dim;
        const float a = xh[i], b = xh[i + half];
        xh[i] = q35_rope_lo(a, b, cs[i], sn[i]);
        xh[i + half] = q35_rope_hi(a, b, cs[i], sn[i]);
    }
}

static int rope_rows(const char *who, float *x, int64_t row_stride, int heads, int head_dim, int n_rot, int64_t pos0,
                     const int64_t *pos_at, int64_t T, double base, q35_stream stream, q35_error *err)
{
    if (heads < 1 || head_dim < 2 || head_dim % 2 || n_rot < 0 || n_rot % 2 || n_rot > head_dim ||
        head_dim > Q35_ROPE_MAX_DIM || T < 0 || T > INT32_MAX || pos0 < 0 || row_stride < (int64_t)heads * head_dim ||
        !(base > 1.0))
        return q35_fail(err,
                        "%s: heads %d, head_dim %d (even, <= %d), n_rot %d (even, <= head_dim), T %lld, "
                        "pos0 %lld, row stride %lld (>= heads*head_dim), base %g (> 1)",
                        who, heads, head_dim, Q35_ROPE_MAX_DIM, n_rot, (long long)T, (long long)pos0,
                        (long long)row_stride, base);
    if (T == 0 || n_rot == 0)
        return 0;
    q35_rope_kernel<<<(unsigned)T, 128, 0, stream>>>(x, row_stride, heads, head_dim, n_rot, pos0, pos_at, base);
    return Q35_LAUNCH_CHECK(who, err);
}

int q35_rope_neox_rows(float *x, int64_t row_stride, int heads, int head_dim, int n_rot, int64_t pos0, int64_t T,
                       double base, q35_stream stream, q35_error *err)
{
    return rope_rows("rope_neox_rows", x, row_stride, heads, head_dim, n_rot, pos0, NULL, T, base, stream, err);
}

int q35_rope_neox_rows_at(float *x, int64_t row_stride, int heads, int head_dim, int n_rot, const int64_t *pos_at,
                          int64_t T, double base, q35_stream stream, q35_error *err)
{
    if (!pos_at)
        return q35_fail(err, "rope_neox_rows_at: no position pointer");
    return rope_rows("rope_neox_rows_at", x, row_stride, heads, head_dim, n_rot, 0, pos_at, T, base, stream, err);
}

int q35_rope_neox(float *x, int heads, int head_dim, int n_rot, int64_t pos, double base, q35_stream stream,
                  q35_error *err)
{
    return q35_rope_neox_rows(x, (int64_t)heads * head_dim, heads, head_dim, n_rot, pos, 1, base, stream, err);
}
