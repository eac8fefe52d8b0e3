/* The rows form of a projection through cuBLAS (kernels/gemm.h). Row-major Y
 * [T][ldy] = X [T][k] W^T with W [n][k] row-major is, column-major,
 *     C (n x T, ldc = ldy) = op_T(A: W as k x n, lda = k) * B (X as k x T, ldb = k),
 * one cublasGemmEx per chunk on the handle's stream. The f16 path's activations
 * are rounded to f16 by the kernel here first. */
#include "kernels/dequant.h"
#include "kernels/gemm.h"
#include "kernels/linear_args.cuh"

#include <cublas_v2.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

namespace {

constexpr int kThreads = 256;

/* y[i] = x[i] rounded to f16 (nearest even) for i < count; 4 a thread, 16-byte
 * loads and 8-byte stores when both are aligned. */
__global__ void __launch_bounds__(kThreads) round_f16_kernel(uint16_t *y, const float *x, int64_t count, bool vec)
{
    const int64_t i = ((int64_t)blockIdx.x * kThreads + threadIdx.x) * 4;
    if (i >= count)
        return;
    if (vec && i + 4 <= count) {
        const float4 v = reinterpret_cast<const float4 *>(x)[i / 4];
        const uint32_t lo = (uint32_t)__half_as_ushort(__float2half_rn(v.x)) |
                            ((uint32_t)__half_as_ushort(__float2half_rn(v.y)) << 16);
        const uint32_t hi = (uint32_t)__half_as_ushort(__float2half_rn(v.z)) |
                            ((uint32_t)__half_as_ushort(__float2half_rn(v.w)) << 16);
        reinterpret_cast<uint2 *>(y)[i / 4] = make_uint2(lo, hi);
        return;
    }
    for (int64_t j = i; j < i + 4 && j < count; j++)
        y[j] = __half_as_ushort(__float2half_rn(x[j]));
}

/* Y = X W^T + beta Y (beta 0 or 1): a and b of cuBLAS type ab (CUDA_R_32F or CUDA_R_16F), f32 output. */
int gemm(const char *who, q35_blas blas, float *y, int64_t ldy, const void *x, int64_t T, const void *w, int64_t n,
         int64_t k, cudaDataType_t ab, cublasComputeType_t compute, float beta, q35_error *err)
{
    const float one = 1.0f;
    if (Q35_CUBLAS_CHECK(cublasGemmEx(blas, CUBLAS_OP_T, CUBLAS_OP_N, (int)n, (int)T, (int)k, &one, w, ab, (int)k, x,
                                      ab, (int)k, &beta, y, CUDA_R_32F, (int)ldy, compute, CUBLAS_GEMM_DEFAULT),
                         err))
        return q35_fail_context(err, "%s (n %lld, k %lld, T %lld, ldy %lld)", who, (long long)n, (long long)k,
                                (long long)T, (long long)ldy);
    return 0;
}

int blas_stream(q35_blas blas, cudaStream_t *stream, q35_error *err)
{
    return Q35_CUBLAS_CHECK(cublasGetStream(blas, stream), err);
}

} // namespace

int64_t q35_gemm_f32_scratch_floats(int64_t n, int64_t k)
{
    return n * k;
}

int64_t q35_gemm_f16_scratch_halves(int64_t T, int64_t k)
{
    return T * k;
}

int q35_gemm_f32(q35_blas blas, float *y, int64_t ldy, const float *x, int64_t T, const void *w, q35_type type,
                 int64_t n, int64_t k, float *w_scratch, q35_error *err)
{
    if (q35_check_gemm("gemm_f32", type, n, k, T, ldy, err))
        return -1;
    if (T == 0)
        return 0;
    cudaStream_t stream;
    if (blas_stream(blas, &stream, err) || q35_dequant_f32(w_scratch, w, type, n, k, (q35_stream)stream, err))
        return -1;
    return gemm("gemm_f32", blas, y, ldy, x, T, w_scratch, n, k, CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC, 0.0f, err);
}

int q35_gemm_f16_round(q35_blas blas, uint16_t *x16, const float *x, int64_t T, int64_t k, q35_error *err)
{
    if (T < 0 || k < 1)
        return q35_fail(err, "gemm_f16_round: T = %lld, k = %lld (want T >= 0, k >= 1)", (long long)T, (long long)k);
    const int64_t count = T * k, threads = (count + 3) / 4;
    if (count == 0)
        return 0;
    if ((threads + kThreads - 1) / kThreads > INT32_MAX)
        return q35_fail(err, "gemm_f16: T * k = %lld activations (want at most %lld)", (long long)count,
                        (long long)INT32_MAX * kThreads * 4);
    cudaStream_t stream;
    if (blas_stream(blas, &stream, err))
        return -1;
    const bool vec = (uintptr_t)x % 16 == 0 && (uintptr_t)x16 % 8 == 0;
    round_f16_kernel<<<(unsigned)((threads + kThreads - 1) / kThreads), kThreads, 0, stream>>>(x16, x, count, vec);
    return Q35_LAUNCH_CHECK("gemm_f16 (rounding x to f16)", err);
}

int q35_gemm_f16_rounded(q35_blas blas, float *y, int64_t ldy, const uint16_t *x16, int64_t T, const uint16_t *w16,
                         int64_t n, int64_t k, q35_error *err)
{
    if (q35_check_gemm("gemm_f16", Q35_TYPE_F16, n, k, T, ldy, err))
        return -1;
    if (T == 0)
        return 0;
    return gemm("gemm_f16", blas, y, ldy, x16, T, w16, n, k, CUDA_R_16F, CUBLAS_COMPUTE_32F, 0.0f, err);
}

int q35_gemm_f16_rounded_add(q35_blas blas, float *y, int64_t ldy, const uint16_t *x16, int64_t T,
                             const uint16_t *w16, int64_t n, int64_t k, q35_error *err)
{
    if (q35_check_gemm("gemm_f16_add", Q35_TYPE_F16, n, k, T, ldy, err))
        return -1;
    if (T == 0)
        return 0;
    return gemm("gemm_f16_add", blas, y, ldy, x16, T, w16, n, k, CUDA_R_16F, CUBLAS_COMPUTE_32F, 1.0f, err);
}

int q35_gemm_f16(q35_blas blas, float *y, int64_t ldy, const float *x, int64_t T, const uint16_t *w16, int64_t n,
                 int64_t k, uint16_t *x_scratch, q35_error *err)
{
    if (q35_check_gemm("gemm_f16", Q35_TYPE_F16, n, k, T, ldy, err))
        return -1;
    if (T == 0)
        return 0;
    return q35_gemm_f16_round(blas, x_scratch, x, T, k, err) ||
                   gemm("gemm_f16", blas, y, ldy, x_scratch, T, w16, n, k, CUDA_R_16F, CUBLAS_COMPUTE_32F, 0.0f, err)
               ? -1
               : 0;
}
