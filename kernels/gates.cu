/* The DeltaNet gates, rows and per token (kernels/gates.h). */
#include "kernels/gates.h"
#include "kernels/gates.cuh"

#include <cuda_runtime.h>

/* Element i = t * hv + j of the outputs; its inputs at t * in_stride + j. */
__global__ void q35_gates_kernel(float *g, float *beta, const float *alpha, const float *b, int64_t in_stride,
                                 const float *dt, const float *a, int64_t hv, int64_t n)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const int64_t t = i / hv, j = i - t * hv, in = t * in_stride + j;
    g[i] = q35_gate_decay(alpha[in], dt[j], a[j]);
    beta[i] = q35_sigmoid(b[in]);
}

int q35_gates_rows(float *g, float *beta, const float *alpha, const float *b, int64_t in_stride, const float *dt,
                   const float *a, int64_t hv, int64_t T, q35_stream stream, q35_error *err)
{
    if (hv < 1 || T < 0 || hv * T > (int64_t)UINT32_MAX * 256)
        return q35_fail(err, "gates_rows: hv = %lld, T = %lld", (long long)hv, (long long)T);
    if (in_stride < hv)
        return q35_fail(err, "gates_rows: input row stride %lld shorter than its hv = %lld values",
                        (long long)in_stride, (long long)hv);
    const int64_t n = hv * T;
    if (n == 0)
        return 0;
    q35_gates_kernel<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(g, beta, alpha, b, in_stride, dt, a, hv, n);
    return Q35_LAUNCH_CHECK("gates_rows", err);
}

int q35_gates(float *g, float *beta, const float *alpha, const float *b, const float *dt, const float *a, int64_t hv,
              q35_stream stream, q35_error *err)
{
    return q35_gates_rows(g, beta, alpha, b, hv, dt, a, hv, 1, stream, err);
}
