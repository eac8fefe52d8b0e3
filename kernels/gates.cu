/* The DeltaNet gates, rows and per token (kernels/gates.h). */
#include "kernels/gates.h"
#include "kernels/gates.cuh"

#include <cuda_runtime.h>

__global__ void q35_gates_kernel(float *g, float *beta, const float *alpha, const float *b, const float *dt,
                                 const float *a, int64_t hv, int64_t n)
{
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i >= n)
        return;
    const int64_t j = i % hv;
    g[i] = q35_gate_decay(alpha[i], dt[j], a[j]);
    beta[i] = q35_sigmoid(b[i]);
}

int q35_gates_rows(float *g, float *beta, const float *alpha, const float *b, const float *dt, const float *a,
                   int64_t hv, int64_t T, q35_stream stream, q35_error *err)
{
    if (hv < 1 || T < 0 || hv * T > (int64_t)UINT32_MAX * 256)
        return q35_fail(err, "gates_rows: hv = %lld, T = %lld", (long long)hv, (long long)T);
    const int64_t n = hv * T;
    if (n == 0)
        return 0;
    q35_gates_kernel<<<(unsigned)((n + 255) / 256), 256, 0, stream>>>(g, beta, alpha, b, dt, a, hv, n);
    return Q35_LAUNCH_CHECK("gates_rows", err);
}

int q35_gates(float *g, float *beta, const float *alpha, const float *b, const float *dt, const float *a, int64_t hv,
              q35_stream stream, q35_error *err)
{
    return q35_gates_rows(g, beta, alpha, b, dt, a, hv, 1, stream, err);
}
