/* Decode attention (kernels/attention_decode.h): one query row per head over cache
 * rows 0..n_ctx-1, f32 arithmetic throughout over an f32 cache (the model's
 * deterministic-mode attention) or an f16 one (each value widened exactly to
 * f32 as it is read: the same arithmetic on the cache's values).
 *
 * The per-row arithmetic is fixed by n_ctx alone, so the rows form (row t over
 * pos0 + t + 1 rows) is bitwise the per-token launches:
 *
 *   slots    the positions are dealt to SLOTS = 32 slots in warp tiles of TP = 4
 *            positions: slot s takes tiles s, s + 32, s + 64, ... (positions
 *            4s..4s+3, then 128 further on). A slot is one warp running an
 *            online softmax over its tiles: per tile the 4 scores (lane L holds
 *            dims 4L..4L+3 of each 128, a fixed butterfly sums them), the tile's
 *            max, the rescale of (l, acc) by e^{m_old - m_new}, then p v added
 *            position by position. An empty slot (4s >= n_ctx) stays m = -inf.
 *   combine  M = max_s m_s; L = sum_s l_s e^{m_s - M}; o[d] = (sum_s acc_s[d]
 *            e^{m_s - M}) / L, slots in order 0..31 (an empty one weighs 0).
 *
 * Two launch shapes run this same arithmetic (the variants, both in the
 * model's library):
 *   block    one block of 16 warps per (row, head), warp w runs slots w and
 *            w + 16, the slot states meet in shared memory (every device);
 *   cluster  a cluster of 8 blocks of 4 warps per (row, head) (sm_90+): block
 *            r runs slots 4r..4r+3 and combines dims [r HD/8, (r+1) HD/8),
 *            reading the other blocks' slot states through distributed shared
 *            memory. Eight times the blocks for one decode token: the cache
 *            streams through many SMs, not heads-many. */
#include "kernels/attention_decode.h"

#include "kernels/attention_decode.cuh"

#include "kernels/cluster_launch.cuh"
#include "kernels/reduce.cuh"
#include "kernels/sm90.cuh" /* q35_grid_chain */

#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>

namespace cg = cooperative_groups;

#define SLOTS 32
#define TP 4                     /* positions per warp tile */
#define BLOCK_WARPS 16           /* the block shape: 2 slots per warp */
#define CLUSTER_BLOCKS 8         /* the cluster shape: 8 blocks ... */
#define CLUSTER_WARPS 4          /* ... of 4 warps, a slot per warp */
#define MAX_T_PER_LAUNCH 65535   /* gridDim.z */

/* One block's slot states: SLOTS of them (block shape) or CLUSTER_WARPS (cluster). */
template <int HD, int N>
struct q35_decode_slots {
    float m[N];
    float l[N];
    float4 acc[N][HD / 4];
};

/* A tile's K and V rows (positions p0 .. p0 + TP - 1 of the slot) into
 * registers, loaded together: one memory latency a tile, V's loads not waiting
 * for the scores. A position past n_ctx reads the last row (in bounds) and is
 * dropped by the caller. */
template <int J, class C>
__device__ __forceinline__ void q35_decode_tile(float4 (&kx)[TP][J], float4 (&vx)[TP][J], const C *k, const C *v,
                                                int64_t kv_stride, int64_t p0, int64_t n_ctx)
{
    const int lane = threadIdx.x % 32;
    const int nv = n_ctx - p0 < TP ? (int)(n_ctx - p0) : TP;
#pragma unroll
    for (int i = 0; i < TP; i++) {
        const int64_t row = (p0 + (i < nv ? i : nv - 1)) * kv_stride;
#pragma unroll
        for (int j = 0; j < J; j++)
            kx[i][j] = q35_decode_load4(k + row + 128 * j + 4 * lane);
#pragma unroll
        for (int j = 0; j < J; j++)
            vx[i][j] = q35_decode_load4(v + row + 128 * j + 4 * lane);
    }
}

/* Runs slot `slot` of one head: q in registers (lane's dims 4L + 128j), the
 * head's K and V columns at k, v (row stride kv_stride), over n_ctx rows.
 * Writes the slot's m, l and acc into the state at index `at`. PREFETCH: the
 * slot's next tile is loaded while this one is computed (twice the registers;
 * the same arithmetic in the same order, so the same bits). */
template <int HD, int N, bool PREFETCH, class C>
__device__ __forceinline__ void q35_decode_slot(q35_decode_slots<HD, N> *st, int at, const float4 (&q)[HD / 128],
                                                const C *k, const C *v, int64_t kv_stride, int64_t n_ctx,
                                                int slot, float scale)
{
    constexpr int J = HD / 128;
    constexpr int64_t STRIDE = (int64_t)SLOTS * TP;
    const int lane = threadIdx.x % 32;
    float m = -INFINITY, l = 0.0f;
    float4 acc[J];
#pragma unroll
    for (int j = 0; j < J; j++)
        acc[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    float4 kx[TP][J], vx[TP][J];
    if (PREFETCH && (int64_t)slot * TP < n_ctx)
        q35_decode_tile<J>(kx, vx, k, v, kv_stride, (int64_t)slot * TP, n_ctx);
    for (int64_t p0 = (int64_t)slot * TP; p0 < n_ctx; p0 += STRIDE) {
        const int nv = n_ctx - p0 < TP ? (int)(n_ctx - p0) : TP;
        float4 kn[TP][J], vn[TP][J];
        if (!PREFETCH)
            q35_decode_tile<J>(kx, vx, k, v, kv_stride, p0, n_ctx);
        else if (p0 + STRIDE < n_ctx)
            q35_decode_tile<J>(kn, vn, k, v, kv_stride, p0 + STRIDE, n_ctx);
        /* scores: the lane's partial dot products, then a fixed butterfly each */
        float s[TP];
#pragma unroll
        for (int i = 0; i < TP; i++) {
            float d = 0.0f;
#pragma unroll
            for (int j = 0; j < J; j++)
                d = q35_decode_dot4(d, q[j], kx[i][j]);
            s[i] = d;
        }
#pragma unroll
        for (int i = 0; i < TP; i++)
            s[i] = q35_group_sum<32>(s[i]) * scale;
        q35_decode_online(s, nv, m, l, acc, [&](int i, int j) { return vx[i][j]; });
        if (PREFETCH) {
#pragma unroll
            for (int i = 0; i < TP; i++)
#pragma unroll
                for (int j = 0; j < J; j++)
                    kx[i][j] = kn[i][j], vx[i][j] = vn[i][j];
        }
    }
    if (lane == 0) {
        st->m[at] = m;
        st->l[at] = l;
    }
#pragma unroll
    for (int j = 0; j < J; j++)
        st->acc[at][32 * j + lane] = acc[j];
}

/* The combine of dim d over the SLOTS slot states, slot s read through
 * state(s) at index s % N; the same arithmetic for both launch shapes. An
 * empty slot (m = -inf) weighs e^{-inf} = 0. */
template <int HD, int N, typename State>
__device__ __forceinline__ float q35_decode_combine(State state, int d)
{
    float M = -INFINITY;
#pragma unroll 4
    for (int s = 0; s < SLOTS; s++)
        M = fmaxf(M, state(s)->m[s % N]);
    float L = 0.0f, O = 0.0f;
#pragma unroll 4
    for (int s = 0; s < SLOTS; s++) {
        const q35_decode_slots<HD, N> *st = state(s);
        const float e = expf(st->m[s % N] - M);
        L = fmaf(st->l[s % N], e, L);
        O = fmaf(((const float *)st->acc[s % N])[d], e, O);
    }
    return O / L;
}

/* Loads head h's query row into the lane's registers (dims 4L + 128j). */
template <int HD>
__device__ __forceinline__ void q35_decode_load_q(float4 (&q)[HD / 128], const float *qh)
{
#pragma unroll
    for (int j = 0; j < HD / 128; j++)
        q[j] = *(const float4 *)(qh + 128 * j + 4 * (threadIdx.x % 32));
}

/* Block shape: grid (1, heads, T), BLOCK_WARPS warps; one block an SM at
 * least (up to 128 registers: ptxas's own target of 64 spills at HD 256). */
template <int HD, class C>
__global__ void __launch_bounds__(32 * BLOCK_WARPS, 1)
    q35_decode_block_kernel(float *o, const float *q, const C *k_cache, const C *v_cache, int64_t pos0,
                            const int64_t *pos_at, q35_attn_shape sh)
{
    q35_grid_chain(); /* the grids before and after it (kernels/sm90.cuh) */
    if (pos_at)
        pos0 = *pos_at;
    __shared__ q35_decode_slots<HD, SLOTS> st;
    const int h = blockIdx.y, warp = threadIdx.x / 32;
    const int64_t t = blockIdx.z, n_ctx = pos0 + t + 1;
    const int64_t kv_off = (int64_t)(h / (sh.heads / sh.kv_heads)) * HD;
    float4 qr[HD / 128];
    q35_decode_load_q<HD>(qr, q + t * sh.q_stride + (int64_t)h * HD);
    for (int s = warp; s < SLOTS; s += BLOCK_WARPS)
        q35_decode_slot<HD, SLOTS, false>(&st, s, qr, k_cache + kv_off, v_cache + kv_off, sh.kv_stride, n_ctx, s, sh.scale);
    __syncthreads();
    if (threadIdx.x < HD) {
        auto state = [&](int) { return (const q35_decode_slots<HD, SLOTS> *)&st; };
        o[t * sh.o_stride + (int64_t)h * HD + threadIdx.x] = q35_decode_combine<HD, SLOTS>(state, threadIdx.x);
    }
}

/* Cluster shape: grid (CLUSTER_BLOCKS, heads, T) in clusters of CLUSTER_BLOCKS
 * along x, CLUSTER_WARPS warps each. sm_90 and newer only. */
template <int HD, class C>
__global__ void __launch_bounds__(32 * CLUSTER_WARPS)
    q35_decode_cluster_kernel(float *o, const float *q, const C *k_cache, const C *v_cache, int64_t pos0,
                              const int64_t *pos_at, q35_attn_shape sh)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    q35_grid_chain(); /* the grids before and after it (kernels/sm90.cuh) */
    if (pos_at)
        pos0 = *pos_at;
    __shared__ q35_decode_slots<HD, CLUSTER_WARPS> st;
    cg::cluster_group cluster = cg::this_cluster();
    const int rank = (int)cluster.block_rank(), h = blockIdx.y, warp = threadIdx.x / 32;
    const int64_t t = blockIdx.z, n_ctx = pos0 + t + 1;
    const int64_t kv_off = (int64_t)(h / (sh.heads / sh.kv_heads)) * HD;
    float4 qr[HD / 128];
    q35_decode_load_q<HD>(qr, q + t * sh.q_stride + (int64_t)h * HD);
    const int slot = rank * CLUSTER_WARPS + warp;
    q35_decode_slot<HD, CLUSTER_WARPS, true>(&st, warp, qr, k_cache + kv_off, v_cache + kv_off, sh.kv_stride, n_ctx, slot,
                                        sh.scale);
    cluster.sync(); /* every block's slot states written */
    constexpr int DIMS = HD / CLUSTER_BLOCKS;
    if (threadIdx.x < DIMS) {
        auto state = [&](int s) {
            return (const q35_decode_slots<HD, CLUSTER_WARPS> *)cluster.map_shared_rank(&st, s / CLUSTER_WARPS);
        };
        const int d = rank * DIMS + threadIdx.x;
        o[t * sh.o_stride + (int64_t)h * HD + d] = q35_decode_combine<HD, CLUSTER_WARPS>(state, d);
    }
    cluster.sync(); /* no block leaves while another still reads its states */
#else
    __trap();
#endif
}

int q35_attention_check_shape(const char *who, q35_attn_shape s, q35_error *err)
{
    if (s.heads < 1 || s.kv_heads < 1 || s.heads % s.kv_heads != 0 || s.head_dim < 1 ||
        s.q_stride < (int64_t)s.heads * s.head_dim || s.o_stride < (int64_t)s.heads * s.head_dim ||
        s.kv_stride < (int64_t)s.kv_heads * s.head_dim || !(s.scale > 0.0f) || !isfinite(s.scale))
        return q35_fail(err,
                        "%s: heads %d and kv_heads %d (heads a multiple of kv_heads), head_dim %d, q stride %lld and "
                        "o stride %lld (>= heads*head_dim), kv stride %lld (>= kv_heads*head_dim), scale %g (> 0)",
                        who, s.heads, s.kv_heads, s.head_dim, (long long)s.q_stride, (long long)s.o_stride,
                        (long long)s.kv_stride, (double)s.scale);
    return 0;
}

/* 0 when q and the caches are 16-byte aligned with strides of whole float4s
 * (the kernel reads them as float4). */
static int check_vectors(const char *who, const void *q, const void *k, const void *v, q35_attn_shape s,
                         q35_error *err)
{
    const uintptr_t bits = (uintptr_t)q | (uintptr_t)k | (uintptr_t)v;
    if (bits % 16 != 0 || s.q_stride % 4 != 0 || s.kv_stride % 4 != 0)
        return q35_fail(err, "%s: q and the caches must be 16-byte aligned and the q and kv strides (%lld, %lld) "
                             "multiples of 4 values",
                        who, (long long)s.q_stride, (long long)s.kv_stride);
    return 0;
}

/* The launch shapes (attention_decode.h): their ranks are what launch_decode takes. */
static constexpr int k_block = 0, k_cluster = 1;
static const q35_variant k_shapes[] = {{"block", k_block, NULL}, {"cluster", k_cluster, NULL}};
static const q35_variant_set k_variants = {Q35_VARIANT_TABLE(k_shapes), NULL, NULL};

Q35_VARIANT_REGISTRY(attention_decode, k_variants)

/* Whether the cluster shape runs on device `dev` (compute capability `major`). */
static bool clusters_usable(int head_dim, int major)
{
    return q35_clusters_usable(head_dim == 256 ? (const void *)q35_decode_cluster_kernel<256, float>
                                               : (const void *)q35_decode_cluster_kernel<128, float>,
                               major);
}

int q35_attention_decode_variant_default(int device, q35_attn_shape s)
{
    int major = 0;
    const bool clusters = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) == cudaSuccess &&
                          clusters_usable(s.head_dim, major);
    return q35_attention_decode_variant_find(clusters ? "cluster" : "block");
}

/* One launch of T <= MAX_T_PER_LAUNCH rows in launch shape `shape` (k_block, k_cluster). */
template <int HD, class C>
static int launch_decode(int shape, float *o, const float *q, const C *k_cache, const C *v_cache, int64_t pos0,
                         const int64_t *pos_at, int64_t T, q35_attn_shape s, q35_stream stream, q35_error *err)
{
    if (shape == k_block) {
        q35_decode_block_kernel<HD, C><<<dim3(1, (unsigned)s.heads, (unsigned)T), 32 * BLOCK_WARPS, 0, stream>>>(
            o, q, k_cache, v_cache, pos0, pos_at, s);
        return Q35_LAUNCH_CHECK("attention_decode (block)", err);
    }
    q35_cluster_launch l(dim3(CLUSTER_BLOCKS, (unsigned)s.heads, (unsigned)T), dim3(32 * CLUSTER_WARPS), 0,
                         (cudaStream_t)stream, CLUSTER_BLOCKS);
    if (Q35_CUDA_CHECK(cudaLaunchKernelEx(&l.cfg, q35_decode_cluster_kernel<HD, C>, o, q, k_cache, v_cache, pos0, pos_at, s),
                       err))
        return -1;
    return Q35_LAUNCH_CHECK("attention_decode (cluster)", err);
}

/* Both cache elements: the checks, the launch shape, launches of up to
 * MAX_T_PER_LAUNCH rows; pos_at (one row only): the position read on the
 * device instead of pos0. */
template <class C>
static int decode_rows(const char *who, float *o, const float *q, const C *k_cache, const C *v_cache, int64_t pos0,
                       const int64_t *pos_at, int64_t T, q35_attn_shape s, int variant, q35_stream stream,
                       q35_error *err)
{
    if (q35_attention_check_shape(who, s, err) || check_vectors(who, q, k_cache, v_cache, s, err))
        return -1;
    if (s.head_dim != 128 && s.head_dim != 256)
        return q35_fail(err, "%s: head_dim %d (the decode kernel takes 128 or 256)", who, s.head_dim);
    const q35_variant *v = variant == Q35_VARIANT_DEFAULT ? NULL : q35_variant_at(&k_variants, variant);
    if (s.heads > 65535 || pos0 < 0 || T < 0 || pos0 > INT64_MAX / 2 - T || (variant != Q35_VARIANT_DEFAULT && !v))
        return q35_fail(err, "%s: heads %d (<= 65535), pos0 %lld, T %lld (>= 0), variant %d (%d default, 0 block, "
                             "1 cluster)",
                        who, s.heads, (long long)pos0, (long long)T, variant, Q35_VARIANT_DEFAULT);
    int dev = 0, major = 0;
    if (Q35_CUDA_CHECK(cudaGetDevice(&dev), err) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), err))
        return -1;
    const bool clusters = clusters_usable(s.head_dim, major);
    const int shape = v ? v->rank : clusters ? k_cluster : k_block;
    if (shape == k_cluster && !clusters)
        return q35_fail(err, "%s: the cluster variant needs compute capability 9.0 or newer and a build with sm_90 "
                             "code (this device: %d.x)",
                        who, major);
    for (int64_t t0 = 0; t0 < T; t0 += MAX_T_PER_LAUNCH) {
        const int64_t n = T - t0 < MAX_T_PER_LAUNCH ? T - t0 : MAX_T_PER_LAUNCH;
        const int rc = s.head_dim == 256 ? launch_decode<256, C>(shape, o + t0 * s.o_stride, q + t0 * s.q_stride,
                                                                 k_cache, v_cache, pos0 + t0, pos_at, n, s, stream, err)
                                         : launch_decode<128, C>(shape, o + t0 * s.o_stride, q + t0 * s.q_stride,
                                                                 k_cache, v_cache, pos0 + t0, pos_at, n, s, stream,
                                                                 err);
        if (rc)
            return -1;
    }
    return 0;
}

int q35_attention_decode_rows(float *o, const float *q, const float *k_cache, const float *v_cache, int64_t pos0,
                              int64_t T, q35_attn_shape s, int variant, q35_stream stream, q35_error *err)
{
    return decode_rows("attention_decode_rows", o, q, k_cache, v_cache, pos0, NULL, T, s, variant, stream, err);
}

int q35_attention_decode_rows_f16(float *o, const float *q, const uint16_t *k_cache, const uint16_t *v_cache,
                                  int64_t pos0, int64_t T, q35_attn_shape s, int variant, q35_stream stream,
                                  q35_error *err)
{
    return decode_rows("attention_decode_rows_f16", o, q, (const __half *)k_cache, (const __half *)v_cache, pos0,
                       NULL, T, s, variant, stream, err);
}

int q35_attention_decode(float *o, const float *q, const float *k_cache, const float *v_cache, int64_t n_ctx,
                         q35_attn_shape s, q35_stream stream, q35_error *err)
{
    if (n_ctx < 1)
        return q35_fail(err, "attention_decode: n_ctx %lld (>= 1)", (long long)n_ctx);
    return q35_attention_decode_rows(o, q, k_cache, v_cache, n_ctx - 1, 1, s, Q35_VARIANT_DEFAULT, stream, err);
}

int q35_attention_decode_f16(float *o, const float *q, const uint16_t *k_cache, const uint16_t *v_cache,
                             int64_t n_ctx, q35_attn_shape s, q35_stream stream, q35_error *err)
{
    if (n_ctx < 1)
        return q35_fail(err, "attention_decode_f16: n_ctx %lld (>= 1)", (long long)n_ctx);
    return q35_attention_decode_rows_f16(o, q, k_cache, v_cache, n_ctx - 1, 1, s, Q35_VARIANT_DEFAULT, stream, err);
}

int q35_attention_decode_at(float *o, const float *q, const float *k_cache, const float *v_cache,
                            const int64_t *pos_at, q35_attn_shape s, q35_stream stream, q35_error *err)
{
    if (!pos_at)
        return q35_fail(err, "attention_decode_at: no position pointer");
    return decode_rows("attention_decode_at", o, q, k_cache, v_cache, 0, pos_at, 1, s, Q35_VARIANT_DEFAULT, stream,
                       err);
}

int q35_attention_decode_f16_at(float *o, const float *q, const uint16_t *k_cache, const uint16_t *v_cache,
                                const int64_t *pos_at, q35_attn_shape s, q35_stream stream, q35_error *err)
{
    if (!pos_at)
        return q35_fail(err, "attention_decode_f16_at: no position pointer");
    return decode_rows("attention_decode_f16_at", o, q, (const __half *)k_cache, (const __half *)v_cache, 0, pos_at,
                       1, s, Q35_VARIANT_DEFAULT, stream, err);
}
