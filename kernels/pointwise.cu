/* The pointwise units (kernels/pointwise.h): one element per thread, grid-stride. */
#include "kernels/pointwise.h"
#include "kernels/reduce.cuh"

#include <cuda_runtime.h>

enum { OP_SWIGLU, OP_SIGMOID_GATE, OP_RESIDUAL };

template <int OP>
__global__ void q35_pointwise_kernel(float *y, const float *a, const float *b, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        if (OP == OP_SWIGLU)
            y[i] = q35_silu(a[i]) * b[i];
        else if (OP == OP_SIGMOID_GATE)
            y[i] = y[i] * q35_sigmoid(a[i]);
        else
            y[i] = y[i] + a[i];
    }
}

static unsigned grid_for(int64_t n)
{
    const int64_t blocks = (n + 255) / 256;
    return (unsigned)(blocks < 65536 ? blocks : 65536);
}

template <int OP>
static int launch(const char *name, float *y, const float *a, const float *b, int64_t width, int64_t rows,
                  q35_stream stream, q35_error *err)
{
    if (width < 1 || rows < 0)
        return q35_fail(err, "%s: width %lld, rows %lld", name, (long long)width, (long long)rows);
    const int64_t n = width * rows;
    if (n == 0)
        return 0;
    q35_pointwise_kernel<OP><<<grid_for(n), 256, 0, stream>>>(y, a, b, n);
    return Q35_LAUNCH_CHECK(name, err);
}

int q35_swiglu_rows(float *y, const float *g, const float *u, int64_t width, int64_t rows, q35_stream stream,
                    q35_error *err)
{
    return launch<OP_SWIGLU>("swiglu_rows", y, g, u, width, rows, stream, err);
}

int q35_sigmoid_gate_rows(float *o, const float *gate, int64_t width, int64_t rows, q35_stream stream, q35_error *err)
{
    return launch<OP_SIGMOID_GATE>("sigmoid_gate_rows", o, gate, nullptr, width, rows, stream, err);
}

int q35_residual_add_rows(float *x, const float *p, int64_t width, int64_t rows, q35_stream stream, q35_error *err)
{
    return launch<OP_RESIDUAL>("residual_add_rows", x, p, nullptr, width, rows, stream, err);
}

__global__ void q35_split_qgate_kernel(float *q, float *gate, const float *full, int hd, int64_t n)
{
    for (int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x; i < n; i += (int64_t)gridDim.x * blockDim.x) {
        const int64_t head = i / hd, e = i % hd; /* head counts over rows * heads */
        q[i] = full[2 * head * hd + e];
        gate[i] = full[2 * head * hd + hd + e];
    }
}

int q35_split_qgate_rows(float *q, float *gate, const float *full, int heads, int hd, int64_t rows, q35_stream stream,
                         q35_error *err)
{
    if (heads < 1 || hd < 1 || rows < 0)
        return q35_fail(err, "split_qgate_rows: heads %d, hd %d, rows %lld", heads, hd, (long long)rows);
    const int64_t n = (int64_t)heads * hd * rows;
    if (n == 0)
        return 0;
    q35_split_qgate_kernel<<<grid_for(n), 256, 0, stream>>>(q, gate, full, hd, n);
    return Q35_LAUNCH_CHECK("split_qgate_rows", err);
}
