/* The norms share one kernel shape: a block (n >= 512) or a warp (n < 512) per
 * vector, a fixed-order sum of squares, a scale. The mapping depends on n only,
 * never on the row count, so a row's bits are the same in any launch. The output is f32 or f16 (Y:
 * float or __half, the next f16 GEMM's input): the same f32 value, rounded to
 * nearest even at the store; or FP8 (q35_norm_fp8_kernel, the next FP8 GEMM's
 * input): the same f32 values, staged in shared memory, quantized a token at
 * a time. */
#ifndef Q35_KERNELS_NORM_KERNELS_CUH
#define Q35_KERNELS_NORM_KERNELS_CUH

#include "kernels/fp8_row.cuh"
#include "kernels/gemv_q8.h"
#include "kernels/q8_block.cuh"
#include "kernels/reduce.cuh"
#include "kernels/sm90.cuh"

#include <cuda_fp16.h>
#include <stdint.h>

#define Q35_NORM_MAX_N (1 << 20)

/* RMS: w-scaled RMSNorm; L2: per-head L2 norm; GATED_RMS: RMSNorm times silu(z);
 * ADD_RMS: x + z first (stored to xs, the residual stream), then RMS of that sum. */
enum q35_norm_kind { Q35_NORM_RMS, Q35_NORM_L2, Q35_NORM_GATED_RMS, Q35_NORM_ADD_RMS, Q35_NORM_GATED_RMS_FAST };

/* The gated kinds: GATED_RMS, and GATED_RMS_FAST (its silu(z) in the fast form,
 * q35_silu_fast: the experiment kernels/experiments/gated_rmsnorm_fast.h's). */
__host__ __device__ constexpr bool q35_norm_gated(int kind)
{
    return kind == Q35_NORM_GATED_RMS || kind == Q35_NORM_GATED_RMS_FAST;
}

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

/* ss + the squares of v's x, y, z, w, in that order (fmaf each). */
__device__ __forceinline__ float q35_norm_sumsq(float ss, float4 v)
{
    ss = fmaf(v.x, v.x, ss);
    ss = fmaf(v.y, v.y, ss);
    ss = fmaf(v.z, v.z, ss);
    return fmaf(v.w, v.w, ss);
}

/* One element of the output: x * inv, times w[i] (RMS kinds), times silu(z[i]) (gated; the fast kind's q35_silu_fast). */
template <int KIND>
__device__ __forceinline__ float q35_norm_out(float x, float inv, float w, float z)
{
    float v = x * inv;
    if (KIND != Q35_NORM_L2)
        v *= w;
    if (q35_norm_gated(KIND))
        v *= KIND == Q35_NORM_GATED_RMS_FAST ? q35_silu_fast(z) : q35_silu(z);
    return v;
}

/* The offsets of vector b (of `heads` a row): x, y and xs at (b / heads) *
 * row_stride + (b % heads) * n, z at (b / heads) * z_stride + (b % heads) * n. */
struct q35_norm_off {
    int64_t x; /* of x, y, xs */
    int64_t z; /* of z */
};

__device__ __forceinline__ q35_norm_off q35_norm_offsets(int64_t row, int head, int n, int64_t row_stride,
                                                         int64_t z_stride)
{
    const int64_t in_row = (int64_t)head * n;
    return {row * row_stride + in_row, row * z_stride + in_row};
}

/* n >= 512: a block of THREADS a vector (vector b = blockIdx.x). Thread t takes
 * quads t, t + THREADS, ... and sums their squares in that order, x, y, z, w of
 * each (the order depends on n and THREADS only), then q35_block_sum; the first
 * Q35_NORM_KEEP quads stay in registers for the scaling pass, the rest are read
 * again (ADD_RMS: the sum, from xs, where this thread stored it). */
#define Q35_NORM_KEEP 4

/* The scale of a vector of n from its sum of squares: 1 / sqrt(mean + eps) (L2: of the sum). */
template <int KIND>
__device__ __forceinline__ float q35_norm_inv(float ss, int n, float eps)
{
    return 1.0f / sqrtf((KIND == Q35_NORM_L2 ? ss : ss / (float)n) + eps);
}

/* The first Q35_NORM_KEEP quads of thread tid of THREADS (tid, tid + THREADS,
 * ...; zeros past the vector's (n + 3) / 4) into keep, and the sum of their
 * squares in that order. */
template <int THREADS, int KIND>
__device__ __forceinline__ float q35_norm_keep(float4 (&keep)[Q35_NORM_KEEP], const float *xr, const float *zr,
                                               float *sr, int tid, int n, bool vx, bool vz, bool vs)
{
    const int nq = (n + 3) / 4;
    float ss = 0.0f;
#pragma unroll
    for (int c = 0; c < Q35_NORM_KEEP; c++) {
        const int q = tid + c * THREADS;
        keep[c] = q < nq ? q35_norm_in<KIND>(xr, zr, sr, q, n, vx, vz, vs) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
        ss = q35_norm_sumsq(ss, keep[c]);
    }
    return ss;
}

/* The largest n normed a warp a vector (q35_norm_launch: q35_norm_warp_kernel): the per-head norms. */
#define Q35_NORM_WARP_MAX_N 511
/* One vector of n at xr (zr: GATED_RMS's z or ADD_RMS's addend; sr: ADD_RMS's
 * sum, stored there) by THREADS threads, tid this one's: each output quad q
 * handed to put(q, value). Thread tid takes quads tid, tid + THREADS, ... and
 * sums their squares in that order, x, y, z, w of each (the order depends on n
 * and THREADS only, so a vector's bits depend on nothing else; at THREADS 32
 * the order of q35_norm_warp_kernel); the first Q35_NORM_KEEP quads stay in
 * registers for the scaling pass, the rest are read again (ADD_RMS: the sum,
 * from sr, where this thread stored it). Contains __syncthreads when THREADS >
 * 32. */
template <int THREADS, int KIND, class Put>
__device__ __forceinline__ void q35_norm_vector(const float *xr, const float *zr, float *sr, const float *w, int n,
                                                float eps, int tid, Put &put)
{
    const bool with_z = q35_norm_gated(KIND) || KIND == Q35_NORM_ADD_RMS;
    const bool vx = q35_aligned16(xr), vw = KIND == Q35_NORM_L2 || q35_aligned16(w),
               vz = !with_z || q35_aligned16(zr), vs = KIND != Q35_NORM_ADD_RMS || q35_aligned16(sr);
    const int nq = (n + 3) / 4;
    float4 keep[Q35_NORM_KEEP];
    float ss = q35_norm_keep<THREADS, KIND>(keep, xr, zr, sr, tid, n, vx, vz, vs);
    for (int q = tid + Q35_NORM_KEEP * THREADS; q < nq; q += THREADS)
        ss = q35_norm_sumsq(ss, q35_norm_in<KIND>(xr, zr, sr, q, n, vx, vz, vs));
    const float inv = q35_norm_inv<KIND>(q35_block_sum<THREADS>(ss), n, eps);
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
        const float4 zv = q35_norm_gated(KIND) ? q35_norm_quad(zr, q, n, vz) : v;
        put(q, make_float4(q35_norm_out<KIND>(v.x, inv, wv.x, zv.x), q35_norm_out<KIND>(v.y, inv, wv.y, zv.y),
                           q35_norm_out<KIND>(v.z, inv, wv.z, zv.z), q35_norm_out<KIND>(v.w, inv, wv.w, zv.w)));
    }
}

/* The f32 or f16 output sink: quad q stored to the vector at y. */
template <class Y>
struct q35_norm_put {
    Y *y;
    int n;
    bool vec;
    __device__ __forceinline__ void operator()(int q, float4 a)
    {
        q35_norm_store(y, q, n, vec, a);
    }
};

/* n >= 512: a block of THREADS a vector (vector b = blockIdx.x), q35_norm_vector. */
template <int THREADS, int KIND, class Y>
__global__ void __launch_bounds__(THREADS)
    q35_norm_kernel(Y *y, const float *x, const float *z, const float *w, int n, int heads, int64_t row_stride,
                    int64_t z_stride, float eps, float *xs)
{
    const int64_t b = blockIdx.x, row = b / heads;
    const q35_norm_off off = q35_norm_offsets(row, (int)(b - row * heads), n, row_stride, z_stride);
    const bool with_z = q35_norm_gated(KIND) || KIND == Q35_NORM_ADD_RMS;
    q35_norm_put<Y> put{y + off.x, n, q35_norm_out_vec(y + off.x)};
    q35_norm_vector<THREADS, KIND>(x + off.x, with_z ? z + off.z : nullptr,
                                   KIND == Q35_NORM_ADD_RMS ? xs + off.x : nullptr, w, n, eps, threadIdx.x, put);
}

/* n < 512 (the per-head norms: 128, 256): a warp a vector, RPW consecutive
 * vectors a warp, Q35_NORM_WARPS warps a block. Lane t takes quads t + 32 c (c <
 * QPT = ceil(nq / 32) <= 4) and sums their squares in that order, x, y, z, w of
 * each, then q35_group_sum<32>'s butterfly: the order a block of 32 threads of
 * q35_norm_kernel would take (its quads past nq add 0 * 0 to a sum that is
 * never -0, which leaves it alone), so a vector's bits depend on n alone, not on
 * RPW nor on the launch. Every load of a warp's RPW vectors (x, z, w) is issued
 * before the first sum: RPW * QPT * 32 bytes of x and z a lane in flight (and w
 * read once for all RPW), where a warp a vector had 16 bytes of x, a reduction,
 * then z and w. */
#define Q35_NORM_WARPS 8
template <int KIND, int QPT, int RPW, class Y>
__global__ void __launch_bounds__(32 * Q35_NORM_WARPS)
    q35_norm_warp_kernel(Y *y, const float *x, const float *z, const float *w, int n, int heads, int64_t row_stride,
                         int64_t z_stride, float eps, int64_t nvec, float *xs)
{
    const int lane = threadIdx.x % 32;
    const int64_t b0 = (blockIdx.x * (int64_t)Q35_NORM_WARPS + threadIdx.x / 32) * RPW;
    if (b0 >= nvec) /* a whole warp */
        return;
    const bool with_z = q35_norm_gated(KIND) || KIND == Q35_NORM_ADD_RMS;
    const int nq = (n + 3) / 4;
    const bool vw = KIND == Q35_NORM_L2 || q35_aligned16(w);
    const float4 zero = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float4 wv[QPT];
#pragma unroll
    for (int c = 0; c < QPT; c++)
        wv[c] = KIND != Q35_NORM_L2 && lane + 32 * c < nq ? q35_norm_quad(w, lane + 32 * c, n, vw) : zero;
    int64_t row = b0 / heads;
    int head = (int)(b0 - row * heads);
    q35_norm_off off[RPW];
    float4 v[RPW][QPT], zv[RPW][QPT];
#pragma unroll
    for (int r = 0; r < RPW; r++) {
        off[r] = q35_norm_offsets(row, head, n, row_stride, z_stride);
        if (++head == heads)
            head = 0, row++;
        const bool live = b0 + r < nvec; /* the same for the whole warp */
        const float *xr = x + off[r].x, *zr = with_z ? z + off[r].z : nullptr;
        float *sr = KIND == Q35_NORM_ADD_RMS ? xs + off[r].x : nullptr;
        const bool vx = q35_aligned16(xr), vz = !with_z || q35_aligned16(zr),
                   vs = KIND != Q35_NORM_ADD_RMS || q35_aligned16(sr);
#pragma unroll
        for (int c = 0; c < QPT; c++) {
            const int q = lane + 32 * c;
            const bool in = live && q < nq;
            v[r][c] = in ? q35_norm_in<KIND>(xr, zr, sr, q, n, vx, vz, vs) : zero;
            zv[r][c] = q35_norm_gated(KIND) && in ? q35_norm_quad(zr, q, n, vz) : zero;
        }
    }
#pragma unroll
    for (int r = 0; r < RPW; r++) {
        if (b0 + r >= nvec)
            break;
        float ss = 0.0f;
#pragma unroll
        for (int c = 0; c < QPT; c++)
            ss = q35_norm_sumsq(ss, v[r][c]);
        const float inv = q35_norm_inv<KIND>(q35_group_sum<32>(ss), n, eps);
        Y *yr = y + off[r].x;
        const bool vy = q35_norm_out_vec(yr);
#pragma unroll
        for (int c = 0; c < QPT; c++) {
            const int q = lane + 32 * c;
            if (q >= nq)
                break;
            const float4 a = v[r][c], g = KIND == Q35_NORM_L2 ? a : wv[c];
            const float4 h = q35_norm_gated(KIND) ? zv[r][c] : a;
            q35_norm_store(yr, q, n, vy,
                           make_float4(q35_norm_out<KIND>(a.x, inv, g.x, h.x), q35_norm_out<KIND>(a.y, inv, g.y, h.y),
                                       q35_norm_out<KIND>(a.z, inv, g.z, h.z), q35_norm_out<KIND>(a.w, inv, g.w, h.w)));
        }
    }
}

/* The warp kernel at QPT quads a lane: RPW = 4 / QPT vectors a warp (at most
 * 16 quads of x and 16 of z a lane held). */
template <int KIND, int QPT, class Y>
static void q35_norm_warp_launch(Y *y, const float *x, const float *z, const float *w, int n, int heads,
                                 int64_t row_stride, int64_t z_stride, float eps, int64_t nvec, cudaStream_t s,
                                 float *xs)
{
    constexpr int RPW = QPT == 1 ? 4 : QPT == 2 ? 2 : 1, PER_BLOCK = RPW * Q35_NORM_WARPS;
    q35_norm_warp_kernel<KIND, QPT, RPW, Y><<<(unsigned)((nvec + PER_BLOCK - 1) / PER_BLOCK), 32 * Q35_NORM_WARPS, 0,
                                              s>>>(y, x, z, w, n, heads, row_stride, z_stride, eps, nvec, xs);
}

/* Launches KIND over `blocks` vectors with a block size chosen from n alone
 * (xs: ADD_RMS's sum, else unused), y f32 or f16; z's rows at z_stride. */
template <int KIND, class Y>
static void q35_norm_launch(Y *y, const float *x, const float *z, const float *w, int n, int heads,
                            int64_t row_stride, int64_t z_stride, float eps, int64_t blocks, cudaStream_t s,
                            float *xs = nullptr)
{
    const int nq = (n + 3) / 4;
    if (n >= 1024)
        q35_norm_kernel<256, KIND, Y><<<(unsigned)blocks, 256, 0, s>>>(y, x, z, w, n, heads, row_stride, z_stride, eps,
                                                                      xs);
    else if (n > Q35_NORM_WARP_MAX_N)
        q35_norm_kernel<64, KIND, Y><<<(unsigned)blocks, 64, 0, s>>>(y, x, z, w, n, heads, row_stride, z_stride, eps,
                                                                    xs);
    else if (nq <= 32) /* the per-head norms (n 128; 256 at two quads a lane): a warp a vector, several a warp */
        q35_norm_warp_launch<KIND, 1>(y, x, z, w, n, heads, row_stride, z_stride, eps, blocks, s, xs);
    else if (nq <= 64)
        q35_norm_warp_launch<KIND, 2>(y, x, z, w, n, heads, row_stride, z_stride, eps, blocks, s, xs);
    else if (nq <= 96)
        q35_norm_warp_launch<KIND, 3>(y, x, z, w, n, heads, row_stride, z_stride, eps, blocks, s, xs);
    else
        q35_norm_warp_launch<KIND, 4>(y, x, z, w, n, heads, row_stride, z_stride, eps, blocks, s, xs);
}

/* The L2 scale of a head of n <= 4 * 32 values held across a warp, lane l the
 * head's quad l (zeros past n): the bits q35_norm_launch gives that head (a
 * warp a vector, q35_norm_warp_kernel), whose lane l sums quads l, l + 32, ...
 * (here quad l alone, then zeros, which leave a sum of squares' bits alone)
 * before the same warp sum. Every lane of the warp must call it. */
__device__ __forceinline__ float q35_l2_head_inv_warp(float4 v, float eps)
{
    const float ss = q35_group_sum<32>(q35_norm_sumsq(0.0f, v));
    return q35_norm_inv<Q35_NORM_L2>(ss, 0, eps);
}

/* The threads a vector of n gets in the FP8 form, from n alone (its sum's
 * order depends on it): q35_norm_launch's, a warp below Q35_NORM_WARP_MAX_N + 1. */
static inline int q35_norm_threads(int n)
{
    return n >= 1024 ? 256 : n > Q35_NORM_WARP_MAX_N ? 64 : 32;
}

/* The FP8 output (kernels/fp8.h's quantization, one scale a token): a block a
 * token of `heads` vectors of n at x + t * heads * n (and xs; z at t *
 * z_stride), GROUPS
 * groups of THREADS threads taking vectors g, g + GROUPS, ... (GROUPS > 1 only
 * at a warp a vector). Each vector computed by q35_norm_vector, as the f32
 * form computes it, into the token's row in shared memory (heads * n f32) and
 * the thread's amax; then q35_fp8_row_out: the codes q [t][heads * n], the
 * scale [t]. */
template <int THREADS, int KIND, int GROUPS>
__global__ void __launch_bounds__(THREADS *GROUPS)
    q35_norm_fp8_kernel(uint8_t *q, float *scale, const float *x, const float *z, const float *w, int n, int heads,
                        int64_t z_stride, float eps, float *xs)
{
    static_assert(GROUPS == 1 || THREADS == 32, "several vectors at once only at a warp a vector");
    float *ys = q35_fp8_staged_row();
    const int64_t cols = (int64_t)heads * n, t = blockIdx.x;
    const bool with_z = q35_norm_gated(KIND) || KIND == Q35_NORM_ADD_RMS;
    float amax = 0.0f;
    for (int h = threadIdx.x / THREADS; h < heads; h += GROUPS) { /* the same count for a group's threads */
        const int64_t off = t * cols + (int64_t)h * n;
        q35_fp8_stage put{ys + (int64_t)h * n, n, amax};
        q35_norm_vector<THREADS, KIND>(x + off, with_z ? z + t * z_stride + (int64_t)h * n : nullptr,
                                       KIND == Q35_NORM_ADD_RMS ? xs + off : nullptr, w, n, eps,
                                       threadIdx.x % THREADS, put);
        amax = put.amax;
    }
    q35_fp8_row_out<THREADS * GROUPS>(q + t * cols, scale + t, ys, cols, amax);
}

/* Launches the FP8 form of KIND over `tokens` tokens of heads vectors of n,
 * with the threads a vector of the f32 form (q35_norm_threads); none does
 * nothing. who names the caller in a refusal (a token past Q35_FP8_ROW_MAX
 * values). */
template <int KIND>
static int q35_norm_fp8_launch(const char *who, uint8_t *q, float *scale, const float *x, const float *z,
                               const float *w, int n, int heads, int64_t z_stride, float eps, int64_t tokens,
                               cudaStream_t s, float *xs, q35_error *err)
{
    const int threads = q35_norm_threads(n);
    auto kernel = threads == 256  ? q35_norm_fp8_kernel<256, KIND, 1>
                  : threads == 64 ? q35_norm_fp8_kernel<64, KIND, 1>
                                  : q35_norm_fp8_kernel<32, KIND, 8>;
    size_t bytes = 0;
    if (q35_fp8_stage_ready(who, kernel, (int64_t)heads * n, &bytes, err))
        return -1;
    if (tokens == 0)
        return 0;
    kernel<<<(unsigned)tokens, threads == 32 ? 256 : threads, bytes, s>>>(q, scale, x, z, w, n, heads, z_stride, eps, xs);
    return Q35_LAUNCH_CHECK(who, err);
}

/* The 8-bit output (kernels/gemv_q8.h's x', one token, a decode step's):
 * the f32 y of the f32 form (the same bits) and its quantization, q [cols]
 * then d, s [cols / 32] at d_at, s_at from q. A block takes the values [lo,
 * lo + span) of the token's row (span a multiple of 32): it computes every
 * vector that meets them as q35_norm_fp8_kernel takes vectors (the same
 * threads a vector, so the same sums and bits whichever block computes it),
 * stores and stages in shared memory only its own values, then quantizes
 * their blocks of 32, a warp a block (kernels/q8_block.cuh). */
struct q35_q8_stage {
    float *y, *ys;
    int n, lo, hi; /* the block's values in this vector: [lo, hi) (past its ends where it takes all of it) */
    bool vec;
    __device__ __forceinline__ void operator()(int qd, float4 a)
    {
        if (4 * qd >= lo && 4 * qd < hi) {
            q35_norm_store(y, qd, n, vec, a);
            q35_norm_store(ys, qd, n, false, a);
        }
    }
};

template <int THREADS, int KIND, int GROUPS>
__global__ void __launch_bounds__(THREADS *GROUPS)
    q35_norm_q8_kernel(float *y, int8_t *q, float *d, float *s, const float *x, const float *z, const float *w, int n,
                       int heads, int span, float eps, float *xs)
{
    static_assert(GROUPS == 1 || THREADS == 32, "several vectors at once only at a warp a vector");
    q35_grid_chain(); /* the grids before and after it (kernels/sm90.cuh) */
    float *ys = q35_fp8_staged_row();
    const int lo = blockIdx.x * span, hi = min(heads * n, lo + span); /* this block's values */
    const bool with_z = q35_norm_gated(KIND) || KIND == Q35_NORM_ADD_RMS;
    for (int h = lo / n + threadIdx.x / THREADS; h < (hi + n - 1) / n; h += GROUPS) { /* the same count for a group's threads */
        const int off = h * n;
        q35_q8_stage put{y + off, ys + off, n, lo - off, hi - off, q35_norm_out_vec(y + off)};
        q35_norm_vector<THREADS, KIND>(x + off, with_z ? z + off : nullptr, KIND == Q35_NORM_ADD_RMS ? xs + off : nullptr,
                                       w, n, eps, threadIdx.x % THREADS, put);
    }
    __syncthreads(); /* the block's values staged */
    const int lane = threadIdx.x % 32, warps = THREADS * GROUPS / 32;
    for (int b = lo / 32 + threadIdx.x / 32; b < hi / 32; b += warps)
        q35_q8_block(q, d, s, b, ys[32 * b + lane], lane);
}

/* Launches the 8-bit form of KIND over one token of heads vectors of n (cols
 * a multiple of 32, at most Q35_FP8_ROW_MAX), with the threads a vector of the
 * f32 form (q35_norm_threads); xq as q35_gemv_q8_quantize writes it. A block's
 * span: where n is a multiple of 32, heads > 1, 8 vectors (a warp a vector) or
 * one; one plain RMSNorm vector of 1024 values or more, y apart from x, 512
 * values (every block computing the whole vector's sum, read from L2; not in
 * place, nor the add form, which updates x in place: a block could read x
 * after another wrote it); else the whole token. */
template <int KIND>
static int q35_norm_q8_launch(const char *who, float *y, void *xq, const float *x, const float *z, const float *w,
                              int n, int heads, float eps, cudaStream_t st, float *xs, q35_error *err)
{
    const int threads = q35_norm_threads(n);
    auto kernel = threads == 256  ? q35_norm_q8_kernel<256, KIND, 1>
                  : threads == 64 ? q35_norm_q8_kernel<64, KIND, 1>
                                  : q35_norm_q8_kernel<32, KIND, 8>;
    const int64_t cols = (int64_t)heads * n;
    size_t bytes = 0;
    if (cols % 32 != 0)
        return q35_fail(err, "%s: a row of %lld values (want a multiple of 32: the 8-bit blocks)", who,
                        (long long)cols);
    if ((uintptr_t)xq % 16 != 0)
        return q35_fail(err, "%s: the quantized x at %p (want 16-byte aligned)", who, xq);
    if (q35_fp8_stage_ready(who, kernel, cols, &bytes, err))
        return -1;
    const bool apart = y + n <= x || x + n <= y;
    const int span = n % 32 == 0 && heads > 1                                              ? (threads == 32 ? 8 : 1) * n
                     : KIND == Q35_NORM_RMS && heads == 1 && n >= 1024 && n % 32 == 0 && apart ? 512
                                                                                            : (int)cols;
    char *base = (char *)xq;
    kernel<<<(unsigned)((cols + span - 1) / span), threads == 32 ? 256 : threads, bytes, st>>>(
        y, (int8_t *)base, (float *)(base + q35_gemv_q8_d_at(cols)), (float *)(base + q35_gemv_q8_s_at(cols)), x, z, w, n,
        heads, span, eps, xs);
    return Q35_LAUNCH_CHECK(who, err);
}

#endif /* Q35_KERNELS_NORM_KERNELS_CUH */
