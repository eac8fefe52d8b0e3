/* Deterministic reductions for the CUDA units: a fixed butterfly within a warp
 * and a fixed order across warps, so a row's result never depends on timing or
 * on how many rows a launch has. */
#ifndef Q35_KERNELS_REDUCE_CUH
#define Q35_KERNELS_REDUCE_CUH

#include <math.h>

/* The two reductions: a sum (its order fixed below) and a max (exact in any
 * order). */
enum q35_reduce_op { Q35_REDUCE_SUM, Q35_REDUCE_MAX };

template <int OP>
__device__ __forceinline__ float q35_reduce2(float a, float b)
{
    return OP == Q35_REDUCE_SUM ? a + b : fmaxf(a, b);
}

/* OP over the `width` lanes of a group (a power of two dividing 32); every lane
 * of the group gets the same bits. */
template <int WIDTH, int OP = Q35_REDUCE_SUM>
__device__ __forceinline__ float q35_group_reduce(float v)
{
#pragma unroll
    for (int off = WIDTH / 2; off > 0; off /= 2)
        v = q35_reduce2<OP>(v, __shfl_xor_sync(0xffffffffu, v, off, WIDTH));
    return v;
}

template <int WIDTH>
__device__ __forceinline__ float q35_group_sum(float v)
{
    return q35_group_reduce<WIDTH, Q35_REDUCE_SUM>(v);
}

/* OP over a block of THREADS (a multiple of 32); every thread gets the result.
 * Uses 32 floats of shared memory; contains __syncthreads when THREADS > 32. */
template <int THREADS, int OP = Q35_REDUCE_SUM>
__device__ __forceinline__ float q35_block_reduce(float v)
{
    static_assert(THREADS % 32 == 0 && THREADS <= 1024, "block of whole warps");
    v = q35_group_reduce<32, OP>(v);
    if (THREADS == 32)
        return v;
    __shared__ float part[32];
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (lane == 0)
        part[warp] = v;
    __syncthreads();
    float s = lane < THREADS / 32 ? part[lane] : OP == Q35_REDUCE_SUM ? 0.0f : -INFINITY;
    s = q35_group_reduce<32, OP>(s);
    __syncthreads(); /* part[] may be reused by a later call */
    return s;
}

template <int THREADS>
__device__ __forceinline__ float q35_block_sum(float v)
{
    return q35_block_reduce<THREADS, Q35_REDUCE_SUM>(v);
}

/* The largest of a block's values (THREADS as q35_block_reduce). */
template <int THREADS>
__device__ __forceinline__ float q35_block_max(float v)
{
    return q35_block_reduce<THREADS, Q35_REDUCE_MAX>(v);
}

__device__ __forceinline__ float q35_silu(float x)
{
    return x / (1.0f + expf(-x));
}

/* silu(x) in the fast form, __expf (ex2.approx) and __fdividef (rcp.approx):
 * q35_swiglu's (below, where its error is derived: relative (4.5 + 1.173 |x|)
 * 2^-23 at most, the product there adding its half ulp), and the experiment
 * kernels/experiments/delta_prep.h's conv. */
__device__ __forceinline__ float q35_silu_fast(float x)
{
    return __fdividef(x, 1.0f + __expf(-x));
}

__device__ __forceinline__ float q35_sigmoid(float x)
{
    return 1.0f / (1.0f + expf(-x));
}

/* silu(g) * u: the FFN activation, one expression for its op
 * (kernels/pointwise.cu: f32, f16 and FP8 out) and the sm_90a [gate | up]
 * GEMM's epilogue (kernels/gemm_sm90.cu), so the same bits. Unlike q35_silu
 * it is the fast form, __expf (ex2.approx) and __fdividef (rcp.approx): in
 * the GEMM's epilogue the tensor cores wait on it, and expf's range reduction
 * and the IEEE division's slow-path check were ~20 instructions a value, a
 * cost the GEMM's time showed (bench/results/index.tsv, family linear). Its
 * error: __expf's documented
 * 2 + floor(1.173 |g|) ulp, the add's half ulp, __fdividef's 2 ulp, the
 * product's half ulp: relative (5 + 1.173 |g|) 2^-23 at most (the exp's
 * relative error reaches silu scaled by e / (1 + e) <= 1); 3e-6 at |g| = 16,
 * far under the f16 or FP8 rounding the fast paths apply next. Limits:
 * g -> -inf gives -0 (1 + e overflows to inf, or past 2^126 __fdividef
 * gives 0: silu there is under 2^-120), g -> +inf gives g. */
__device__ __forceinline__ float q35_swiglu(float g, float u)
{
    return q35_silu_fast(g) * u;
}

/* x gated by sigmoid(g): the attention output gate, one expression for its op
 * (kernels/pointwise.cu) and the sm_90a flash epilogue, so the same bits. */
__device__ __forceinline__ float q35_sigmoid_gate(float x, float g)
{
    return x * q35_sigmoid(g);
}

#endif /* Q35_KERNELS_REDUCE_CUH */
