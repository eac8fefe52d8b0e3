/* The read ceiling at a weight's size (gpu_read.h). */
#include "bench/gpu_read.h"
#include "kernels/cuda.h"

#include <cuda_runtime.h>

namespace {

constexpr int kReadThreads = 512;

__global__ void __launch_bounds__(kReadThreads) read_kernel(uint32_t *out, int64_t n, const uint4 *in, int64_t words)
{
    const int64_t stride = (int64_t)gridDim.x * kReadThreads, t = (int64_t)blockIdx.x * kReadThreads + threadIdx.x;
    uint32_t acc = 0;
    int64_t i = t;
#pragma unroll 1
    for (; i + 3 * stride < words; i += 4 * stride) { /* four loads in flight */
        uint4 v[4];
#pragma unroll
        for (int j = 0; j < 4; j++)
            v[j] = __ldg(in + i + j * stride);
#pragma unroll
        for (int j = 0; j < 4; j++)
            acc ^= v[j].x ^ v[j].y ^ v[j].z ^ v[j].w;
    }
#pragma unroll 1
    for (; i < words; i += stride) {
        const uint4 v = __ldg(in + i);
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
#pragma unroll 1
    for (int64_t o = t; o < n; o += stride)
        out[o] = o == t ? acc : 0u;
}

} // namespace

int q35_bench_read(uint32_t *out, int64_t n, const void *in, size_t bytes, q35_error *err)
{
    static int blocks; /* the resident grid, once (the benchmark's device) */
    if (n < 1 || (uintptr_t)out % 4 != 0 || (uintptr_t)in % 16 != 0 || bytes > (size_t)INT64_MAX)
        return q35_fail(err, "bench read: n = %lld, out at %p (4-byte aligned), in at %p (16-byte aligned), %zu bytes",
                        (long long)n, (void *)out, in, bytes);
    if (!blocks) {
        int dev = 0, sms = 0, per_sm = 0;
        if (Q35_CUDA_CHECK(cudaGetDevice(&dev), err) ||
            Q35_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), err) ||
            Q35_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, read_kernel, kReadThreads, 0), err))
            return -1;
        blocks = sms * (per_sm > 0 ? per_sm : 1);
    }
    read_kernel<<<blocks, kReadThreads>>>(out, n, static_cast<const uint4 *>(in), (int64_t)(bytes / 16));
    return Q35_LAUNCH_CHECK("bench read", err);
}
