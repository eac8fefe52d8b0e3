/* The FP8 row quantization of kernels/fp8.h on the device, one piece of code
 * for every kernel that writes e4m3 rows: q35_fp8_quantize_rows (a row in
 * global memory) and the fused forms that quantize the row they produce (the
 * RMSNorms, SwiGLU, the gated norm: their row staged in shared memory). A block
 * owns a row: each thread folds the magnitudes it produced into its amax, then
 * q35_fp8_row_out reduces it over the block, writes the scale and the codes. */
#ifndef Q35_KERNELS_FP8_ROW_CUH
#define Q35_KERNELS_FP8_ROW_CUH

#include "kernels/cuda.h"
#include "kernels/fp8.h"
#include "kernels/reduce.cuh"

#include <cuda_fp8.h>
#include <cuda_runtime.h>
#include <stdint.h>

/* e4m3 of v, round to nearest even, saturating at 448 (core/fp8.h's codec). */
__device__ __forceinline__ uint8_t q35_to_e4m3(float v)
{
    return (uint8_t)__nv_cvt_float_to_fp8(v, __NV_SATFINITE, __NV_E4M3);
}

/* The row's factor 448 / amax and its scale amax / 448 (1 and 1 for amax 0),
 * each one IEEE division; the code of x is e4m3(x * inv), one rounded product
 * (the _rn intrinsics: never contracted). */
__device__ __forceinline__ float q35_fp8_inv(float amax)
{
    return amax > 0.0f ? __fdiv_rn(448.0f, amax) : 1.0f;
}

__device__ __forceinline__ float q35_fp8_scale(float amax)
{
    return amax > 0.0f ? __fdiv_rn(amax, 448.0f) : 1.0f;
}

__device__ __forceinline__ uint8_t q35_fp8_code(float x, float inv)
{
    return q35_to_e4m3(__fmul_rn(x, inv));
}

/* The block's row y [cols] (shared or global memory, every value written
 * before the call by any thread of the block) quantized: amax, this thread's
 * max of the magnitudes it produced, reduced over the block (a max: exact in
 * any order); scale [0] and the codes q [cols]. All THREADS threads of the
 * block call it; contains __syncthreads. Four codes a 4-byte store where y is
 * 16-byte and q 4-byte aligned and cols a multiple of 4, else one a thread: the
 * same codes. */
template <int THREADS>
__device__ __forceinline__ void q35_fp8_row_out(uint8_t *q, float *scale, const float *y, int64_t cols, float amax)
{
    __syncthreads(); /* y, written by other threads (q35_block_max has no barrier at a warp a block) */
    amax = q35_block_max<THREADS>(amax);
    const float inv = q35_fp8_inv(amax);
    if (threadIdx.x == 0)
        *scale = q35_fp8_scale(amax);
    if (cols % 4 == 0 && ((uintptr_t)y & 15) == 0 && ((uintptr_t)q & 3) == 0) {
        for (int64_t j = threadIdx.x; j < cols / 4; j += THREADS) {
            const float4 v = ((const float4 *)y)[j];
            ((uint32_t *)q)[j] = (uint32_t)q35_fp8_code(v.x, inv) | (uint32_t)q35_fp8_code(v.y, inv) << 8 |
                                 (uint32_t)q35_fp8_code(v.z, inv) << 16 | (uint32_t)q35_fp8_code(v.w, inv) << 24;
        }
    } else {
        for (int64_t i = threadIdx.x; i < cols; i += THREADS)
            q[i] = q35_fp8_code(y[i], inv);
    }
}

/* The dynamic shared memory a fused form stages its row in (16-byte aligned). */
__device__ __forceinline__ float *q35_fp8_staged_row()
{
    extern __shared__ float4 q35_fp8_row_smem[];
    return (float *)q35_fp8_row_smem;
}

/* A producer's sink: quad qd of a vector of n staged at ys (elements 4qd ..,
 * those at n and past dropped), their magnitudes folded into amax. */
struct q35_fp8_stage {
    float *ys;
    int n;
    float amax;
    __device__ __forceinline__ void operator()(int qd, float4 a)
    {
        const int i = 4 * qd;
        const float v[4] = {a.x, a.y, a.z, a.w};
        if (i + 4 <= n && ((uintptr_t)(ys + i) & 15) == 0) {
            *(float4 *)(ys + i) = a;
            amax = fmaxf(fmaxf(amax, fmaxf(fabsf(a.x), fabsf(a.y))), fmaxf(fabsf(a.z), fabsf(a.w)));
            return;
        }
#pragma unroll
        for (int k = 0; k < 4; k++)
            if (i + k < n) {
                ys[i + k] = v[k];
                amax = fmaxf(amax, fabsf(v[k]));
            }
    }
};

/* Readies `kernel` for a staged row of cols f32 values: the shared memory
 * opt-in past 47 KiB (a launch gets 48 KiB less the kernel's static shared
 * memory, the reductions' 128 or 256 bytes, without it); -1 with err set when
 * cols is past Q35_FP8_ROW_MAX (who names the caller) or the device refuses
 * the size. *bytes: the launch's dynamic shared memory. */
template <class K>
static int q35_fp8_stage_ready(const char *who, K kernel, int64_t cols, size_t *bytes, q35_error *err)
{
    if (cols < 1 || cols > Q35_FP8_ROW_MAX)
        return q35_fail(err, "%s: a row of %lld values (want 1..%d: the row is staged in shared memory, %d KiB at most)",
                        who, (long long)cols, Q35_FP8_ROW_MAX, Q35_FP8_ROW_MAX * 4 / 1024);
    *bytes = (size_t)cols * sizeof(float);
    if (*bytes > (47u << 10) &&
        Q35_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)*bytes), err))
        return q35_fail_context(err, "%s: %zu bytes of shared memory for a row of %lld", who, *bytes, (long long)cols);
    return 0;
}

#endif /* Q35_KERNELS_FP8_ROW_CUH */
