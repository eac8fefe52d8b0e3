/* The norms share one kernel shape: a block per vector, a fixed-order sum of
 * squares, a scale. The block size depends on n only, never on the row count,
 * so a row's bits are the same in any launch. The output is f32 or f16 (Y:
 * float or __half, the next f16 GEMM's input): the same f32 value, rounded to
 * nearest even at the store. */
#ifndef Q35_KERNELS_NORM_KERNELS_CUH
#define Q35_KERNELS_NORM_KERNELS_CUH

#include "kernels/reduce.cuh"

#include <cuda_fp16.h>
#include <stdint.h>

#define Q35_NORM_MAX_N (1 << 20)

/* RMS: w-scaled RMSNorm; L2: per-head L2 norm; GATED_RMS: RMSNorm times silu(z);
 * ADD_RMS: x + z first (stored to xs, the residual stream), then RMS of that sum. */
enum q35_norm_kind { Q35_NORM_RMS, Q35_NORM_L2, Q35_NORM_GATED_RMS, Q35_NORM_ADD_RMS };

/* Quad q of a vector of n: elements 4q .. 4q+3, those past n read as 0 (adding
 * 0 * 0 leaves a sum of squares' bits alone). One 16-byte load where the vector
 * is 16-byte aligned and the quad whole, else four: the same values either way. */
__device__ __forceinline__ float4 q35_norm_quad(const float *v, int q, int n, bool vec)
{
    const int i = 4 * q;
    if (vec && i + 4 <= n)
        return *(const float4 *)(v + i);
    return make_float4(v[i], i + 1 < n ? v[i + 1] : 0.0f, i + 2 < n ? v[i + 2] : 0.0f, i + 3 < n ? v[i + 3] : 0.0f);
}

__device__ __forceinline__ void q35_norm_store(float *v, int q, int n, bool vec, float4 a)
{
    const int i = 4 * q;
    if (vec && i + 4 <= n) {
        *(float4 *)(v + i) = a;
        return;
    }
    v[i] = a.x;
    if (i + 1 < n)
        v[i + 1] = a.y;
    if (i + 2 < n)
        v[i + 2] = a.z;
    if (i + 3 < n)
        v[i + 3] = a.w;
}

/* Quad q as f16 (nearest even each): one 8-byte store where whole and aligned. */
__device__ __forceinline__ void q35_norm_store(__half *v, int q, int n, bool vec, float4 a)
{
    const int i = 4 * q;
    const __half2 lo = __floats2half2_rn(a.x, a.y), hi = __floats2half2_rn(a.z, a.w);
    if (vec && i + 4 <= n) {
        *(uint2 *)(v + i) = make_uint2(*(const uint32_t *)&lo, *(const uint32_t *)&hi);
        return;
    }
    v[i] = __low2half(lo);
    if (i + 1 < n)
        v[i + 1] = __high2half(lo);
    if (i + 2 < n)
        v[i + 2] = __low2half(hi);
    if (i + 3 < n)
        v[i + 3] = __high2half(hi);
}

__device__ __forceinline__ bool q35_aligned16(const void *p)
{
    return ((uintptr_t)p & 15) == 0;
}

/* Whether an output row takes whole-quad stores: 16 bytes of f32, 8 of f16. */
__device__ __forceinline__ bool q35_norm_out_vec(const float *p)
{
    return q35_aligned16(p);
}

__device__ __forceinline__ bool q35_norm_out_vec(const __half *p)
{
    return ((uintptr_t)p & 7) == 0;
}

/* Quad q of the vector to normalise: x's (ADD_RMS: x + z, stored to s). */
template <int KIND>
__device__ __forceinline__ float4 q35_norm_in(const float *xr, const float *zr, float *sr, int q, int n, bool vx,
                                              bool vz, bool vs)
{
    float4 v = q35_norm_quad(xr, q, n, vx);
    if (KIND == Q35_NORM_ADD_RMS) { /* x[i] + z[i], as q35_residual_add_rows adds: the same bits */
        const float4 a = q35_norm_quad(zr, q, n, vz);
        v = make_float4(v.x + a.x, v.y + a.y, v.z + a.z, v.w + a.w);
        q35_norm_store(sr, q, n, vs, v);
    }
    return v;
}

/* One element of the output: x * inv, times w[i] (RMS kinds), times silu(z[i]) (gated). */
template <int KIND>
__device__ __forceinline__ float q35_norm_out(float x, float inv, float w, float z)
{
    float v = x * inv;
    if (KIND != Q35_NORM_L2)
        v *= w;
    if (KIND == Q35_NORM_GATED_RMS)
        v *= q35_silu(z);
    return v;
}

/* ss plus the squares of a quad, x, y, z, w in that order (fused multiply-adds). */
__device__ __forceinline__ float q35_norm_sumsq(float ss, float4 v)
{
    ss = fmaf(v.x, v.x, ss);
    ss = fmaf(v.y, v.y, ss);
    ss = fmaf(v.z, v.z, ss);
    return fmaf(v.w, v.w, ss);
}

/* The scale from a vector's sum of squares: 1 / sqrt(ss + eps) (L2), 1 / sqrt(ss / n + eps) (the RMS kinds). */
template <int KIND>
__device__ __forceinline__ float q35_norm_inv(float ss, int n, float eps)
{
    return 1.0f / sqrtf((KIND == Q35_NORM_L2 ? ss : ss / (float)n) + eps);
}

/* Below this n, a warp a vector (q35_norm_launch's choice, which a vector's bits depend on). */
#define Q35_NORM_WARP_N 512

/* Vector b: x + (b / heads) * row_stride + (b % heads) * n (and the same for y, z, xs);
 * VPB vectors a block, one per THREADS threads (VPB > 1 only for a warp a vector,
 * whose sum needs no barrier: a vector's bits never depend on VPB).
 * Thread t takes quads t, t + THREADS, ... and sums their squares in that order,
 * x, y, z, w of each (the order depends on n and THREADS only); the first
 * Q35_NORM_KEEP quads stay in registers for the scaling pass, the rest are read
 * again (ADD_RMS: the sum, from xs, where this thread stored it). */
#define Q35_NORM_KEEP 4
template <int THREADS, int KIND, int VPB, class Y>
__global__ void __launch_bounds__(THREADS *VPB)
    q35_norm_kernel(Y *y, const float *x, const float *z, const float *w, int n, int heads, int64_t row_stride,
                    float eps, int64_t nvec, float *xs)
{
    static_assert(VPB == 1 || THREADS == 32, "several vectors a block only at a warp a vector");
    const int64_t b = blockIdx.x * (int64_t)VPB + threadIdx.x / THREADS;
    const int tid = threadIdx.x % THREADS;
    if (b >= nvec) /* a whole warp */
        return;
    const int64_t off = (b / heads) * row_stride + (b % heads) * (int64_t)n;
    const float *xr = x + off;
    Y *yr = y + off;
    const bool with_z = KIND == Q35_NORM_GATED_RMS || KIND == Q35_NORM_ADD_RMS;
    const float *zr = with_z ? z + off : nullptr;
    float *sr = KIND == Q35_NORM_ADD_RMS ? xs + off : nullptr;
    const bool vx = q35_aligned16(xr), vy = q35_norm_out_vec(yr), vw = KIND == Q35_NORM_L2 || q35_aligned16(w),
               vz = !with_z || q35_aligned16(zr), vs = KIND != Q35_NORM_ADD_RMS || q35_aligned16(sr);
    const int nq = (n + 3) / 4;
    float4 keep[Q35_NORM_KEEP];
    float ss = 0.0f;
#pragma unroll
    for (int c = 0; c < Q35_NORM_KEEP; c++) {
        const int q = tid + c * THREADS;
        keep[c] = q < nq ? q35_norm_in<KIND>(xr, zr, sr, q, n, vx, vz, vs) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        ss = q35_norm_sumsq(ss, keep[c]);
    }
    for (int q = tid + Q35_NORM_KEEP * THREADS; q < nq; q += THREADS)
        ss = q35_norm_sumsq(ss, q35_norm_in<KIND>(xr, zr, sr, q, n, vx, vz, vs));
    ss = q35_block_sum<THREADS>(ss);
    const float inv = q35_norm_inv<KIND>(ss, n, eps);
    for (int c = 0, q = tid; q < nq; c++, q += THREADS) {
        float4 v = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        if (c < Q35_NORM_KEEP) { /* a static index once unrolled: registers */
#pragma unroll
            for (int k = 0; k < Q35_NORM_KEEP; k++)
                if (k == c)
                    v = keep[k];
        } else {
            v = KIND == Q35_NORM_ADD_RMS ? q35_norm_quad(sr, q, n, vs) : q35_norm_quad(xr, q, n, vx);
        }
        const float4 wv = KIND == Q35_NORM_L2 ? v : q35_norm_quad(w, q, n, vw);
        const float4 zv = KIND == Q35_NORM_GATED_RMS ? q35_norm_quad(zr, q, n, vz) : v;
        q35_norm_store(yr, q, n, vy,
                       make_float4(q35_norm_out<KIND>(v.x, inv, wv.x, zv.x), q35_norm_out<KIND>(v.y, inv, wv.y, zv.y),
                                   q35_norm_out<KIND>(v.z, inv, wv.z, zv.z), q35_norm_out<KIND>(v.w, inv, wv.w, zv.w)));
    }
}

/* Launches KIND over `blocks` vectors with a block size chosen from n alone
 * (xs: ADD_RMS's sum, else unused), y f32 or f16. */
template <int KIND, class Y>
static void q35_norm_launch(Y *y, const float *x, const float *z, const float *w, int n, int heads,
                            int64_t row_stride, float eps, int64_t blocks, cudaStream_t s, float *xs = nullptr)
{
    if (n >= 1024)
        q35_norm_kernel<256, KIND, 1, Y><<<(unsigned)blocks, 256, 0, s>>>(y, x, z, w, n, heads, row_stride, eps, blocks,
                                                                        xs);
    else if (n >= Q35_NORM_WARP_N)
        q35_norm_kernel<64, KIND, 1, Y><<<(unsigned)blocks, 64, 0, s>>>(y, x, z, w, n, heads, row_stride, eps, blocks,
                                                                      xs);
    else /* the per-head norms (n 128, 256): 8 a block, not one 32-thread block each */
        q35_norm_kernel<32, KIND, 8, Y><<<(unsigned)((blocks + 7) / 8), 256, 0, s>>>(y, x, z, w, n, heads, row_stride,
                                                                                 eps, blocks, xs);
}

/* The L2 scale of a head of n <= 4 * 32 values held across a warp, lane l the
 * head's quad l (zeros past n): the bits q35_norm_kernel<32, Q35_NORM_L2, ...>
 * gives that head (q35_norm_launch's warp a vector), whose lane l sums quads l,
 * l + 32, ... (here quad l alone, then zeros, which leave a sum of squares'
 * bits alone) before the same warp sum. Every lane of the warp must call it. */
__device__ __forceinline__ float q35_l2_head_inv_warp(float4 v, float eps)
{
    const float ss = q35_block_sum<32>(q35_norm_sumsq(0.0f, v));
    return q35_norm_inv<Q35_NORM_L2>(ss, 0, eps);
}

#endif /* Q35_KERNELS_NORM_KERNELS_CUH */
