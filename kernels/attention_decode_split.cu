/* Decode attention over f16 caches, split over the cache
 * (kernels/attention_decode_split.h).
 *
 *   partials  grid (splits, kv_heads), a warp per query head of the KV head.
 *             Split p takes rows [p c, min((p + 1) c, n_ctx)), c = ceil(n_ctx /
 *             splits) rounded up to TILE rows. Its tiles of TILE rows of K and
 *             V go through a ring of STAGES stages in shared memory (cp.async,
 *             16 bytes a copy; rows past the stretch are zeros, their scores
 *             dropped). Per tile a warp: lane L's partial dot products over
 *             dims 4L..4L+3 (+128), a fixed butterfly each, the tile's max, the
 *             rescale of (l, acc) by e^{m_old - m_new}, then p v row by row. An
 *             empty split writes m = -inf.
 *   combine   grid (heads), a thread a dim: M = max m_p over the non-empty
 *             splits, L = sum l_p e^{m_p - M}, o = (sum acc_p e^{m_p - M}) / L,
 *             splits in order. */
#include "kernels/attention_decode_split.h"

#include "kernels/attention_decode.cuh"

#include "kernels/mma.cuh"
#include "kernels/reduce.cuh"
#include "kernels/sm90.cuh" /* q35_grid_chain */

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>

#define TILE 8       /* cache rows a tile */
#define STAGES 4     /* tiles in flight */
#define MAX_GROUP 16 /* query heads a KV head (warps a block) */
#define MIN_ROWS 64  /* rows a split at least (q35_attention_decode_split_count) */

template <int HD>
struct q35_split_stage {
    __half k[TILE][HD];
    __half v[TILE][HD];
};

/* The partials: work holds [heads][splits][2] (m, l), padded to whole float4s,
 * then [heads][splits][HD] (acc). */
__host__ __device__ __forceinline__ int64_t q35_split_acc_at(int heads, int splits)
{
    return ((int64_t)heads * splits * 2 + 3) / 4 * 4;
}

template <int HD>
__global__ void __launch_bounds__(32 * MAX_GROUP)
    q35_decode_split_kernel(float *work, const float *q, const __half *k_cache, const __half *v_cache, int64_t n_ctx,
                            const int64_t *pos_at, q35_attn_shape sh, int splits)
{
    q35_grid_chain(); /* the grids before and after it (kernels/sm90.cuh) */
    constexpr int J = HD / 128, CPR = HD / 8; /* 16-byte copies a row */
    __shared__ __align__(16) q35_split_stage<HD> stage[STAGES];
    if (pos_at)
        n_ctx = *pos_at + 1;
    const int p = blockIdx.x, g = blockIdx.y, group = sh.heads / sh.kv_heads;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, h = g * group + warp;
    int64_t c = (n_ctx + splits - 1) / splits;
    c = (c + TILE - 1) / TILE * TILE;
    const int64_t begin = (int64_t)p * c, end = begin + c < n_ctx ? begin + c : n_ctx;
    float *ml = work + ((int64_t)h * splits + p) * 2;
    float *acc_out = work + q35_split_acc_at(sh.heads, splits) + ((int64_t)h * splits + p) * HD;
    if (begin >= end) { /* the whole block: no barrier has been reached */
        if (lane == 0)
            ml[0] = -INFINITY, ml[1] = 0.0f;
        return;
    }
    const __half *kg = k_cache + (int64_t)g * HD, *vg = v_cache + (int64_t)g * HD;
    auto load = [&](int t, int s) {
        const int64_t p0 = begin + (int64_t)t * TILE;
        for (int i = threadIdx.x; i < 2 * TILE * CPR; i += blockDim.x) {
            const int is_v = i / (TILE * CPR), r = i / CPR % TILE, x = i % CPR;
            const bool in = p0 + r < end;
            const __half *src = (is_v ? vg : kg) + (in ? p0 + r : begin) * sh.kv_stride + 8 * x;
            __half *dst = (is_v ? stage[s].v[r] : stage[s].k[r]) + 8 * x;
            q35_cp_async16((uint32_t)__cvta_generic_to_shared(dst), src, in ? 16 : 0);
        }
    };
    float4 qr[J], acc[J];
#pragma unroll
    for (int j = 0; j < J; j++) {
        qr[j] = *(const float4 *)(q + (int64_t)h * HD + 128 * j + 4 * lane);
        acc[j] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
    float m = -INFINITY, l = 0.0f;
    const int tiles = (int)((end - begin + TILE - 1) / TILE);
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < tiles)
            load(s, s);
        q35_cp_async_commit();
    }
    for (int t = 0; t < tiles; t++) {
        if (t + STAGES - 1 < tiles)
            load(t + STAGES - 1, (t + STAGES - 1) % STAGES);
        q35_cp_async_commit();
        q35_cp_async_wait<STAGES - 1>(); /* tile t's copies (this thread's) landed */
        __syncthreads();                 /* ... and every thread's */
        const q35_split_stage<HD> &st = stage[t % STAGES];
        const int64_t p0 = begin + (int64_t)t * TILE;
        const int nv = end - p0 < TILE ? (int)(end - p0) : TILE;
        float sc[TILE];
#pragma unroll
        for (int i = 0; i < TILE; i++) {
            float d = 0.0f;
#pragma unroll
            for (int j = 0; j < J; j++)
                d = q35_decode_dot4(d, qr[j], q35_decode_load4(st.k[i] + 128 * j + 4 * lane));
            sc[i] = q35_group_sum<32>(d) * sh.scale;
        }
        q35_decode_online(sc, nv, m, l, acc,
                          [&](int i, int j) { return q35_decode_load4(st.v[i] + 128 * j + 4 * lane); });
        __syncthreads(); /* the stage is read by every warp before it is copied into again */
    }
    q35_cp_async_wait<0>(); /* only empty groups are left */
    if (lane == 0)
        ml[0] = m, ml[1] = l;
#pragma unroll
    for (int j = 0; j < J; j++)
        *(float4 *)(acc_out + 128 * j + 4 * lane) = acc[j];
}

/* The combine: grid (heads), HD threads. */
template <int HD>
__global__ void __launch_bounds__(HD) q35_decode_split_combine(float *o, const float *work, q35_attn_shape sh, int splits)
{
    q35_grid_chain(); /* the grids before and after it (kernels/sm90.cuh) */
    const int h = blockIdx.x, d = threadIdx.x;
    const float *ml = work + (int64_t)h * splits * 2;
    const float *acc = work + q35_split_acc_at(sh.heads, splits) + (int64_t)h * splits * HD;
    float M = -INFINITY;
    for (int p = 0; p < splits; p++)
        M = fmaxf(M, ml[2 * p]);
    float L = 0.0f, O = 0.0f;
    for (int p = 0; p < splits; p++) {
        if (ml[2 * p] == -INFINITY) /* empty: its acc was never written */
            continue;
        const float e = expf(ml[2 * p] - M);
        L = fmaf(ml[2 * p + 1], e, L);
        O = fmaf(acc[(int64_t)p * HD + d], e, O);
    }
    o[(int64_t)h * HD + d] = O / L;
}

extern "C" int q35_attention_decode_split_count(q35_attn_shape s, int64_t n_ctx_max, int sms)
{
    const int64_t by_rows = n_ctx_max < 1 ? 1 : (n_ctx_max + MIN_ROWS - 1) / MIN_ROWS;
    const int kv = s.kv_heads > 0 ? s.kv_heads : 1;
    int64_t cap = ((int64_t)4 * (sms > 0 ? sms : 1) + kv - 1) / kv;
    cap = cap < 1 ? 1 : cap > Q35_DECODE_SPLITS_MAX ? Q35_DECODE_SPLITS_MAX : cap;
    return (int)(by_rows < cap ? by_rows : cap);
}

extern "C" size_t q35_attention_decode_split_work_bytes(q35_attn_shape s, int splits)
{
    if (s.heads < 1 || s.head_dim < 1 || splits < 1)
        return 0;
    return ((size_t)q35_split_acc_at(s.heads, splits) + (size_t)s.heads * (size_t)splits * (size_t)s.head_dim) *
           sizeof(float);
}

static int split_run(const char *who, float *o, const float *q, const uint16_t *k_cache, const uint16_t *v_cache,
                     int64_t n_ctx, const int64_t *pos_at, q35_attn_shape s, int splits, void *work,
                     q35_stream stream, q35_error *err)
{
    if (q35_attention_check_shape(who, s, err))
        return -1;
    if (s.head_dim != 128 && s.head_dim != 256)
        return q35_fail(err, "%s: head_dim %d (the split decode kernel takes 128 or 256)", who, s.head_dim);
    if (s.heads / s.kv_heads > MAX_GROUP || s.kv_heads > 65535)
        return q35_fail(err, "%s: %d query heads a KV head (at most %d), %d KV heads (at most 65535)", who,
                        s.heads / s.kv_heads, MAX_GROUP, s.kv_heads);
    if (splits < 1 || splits > Q35_DECODE_SPLITS_MAX)
        return q35_fail(err, "%s: %d splits (want 1..%d)", who, splits, Q35_DECODE_SPLITS_MAX);
    if (!pos_at && n_ctx < 1)
        return q35_fail(err, "%s: n_ctx %lld (>= 1)", who, (long long)n_ctx);
    if (!o || !q || !k_cache || !v_cache || !work)
        return q35_fail(err, "%s: a NULL pointer (o, q, the caches, the work buffer)", who);
    if (((uintptr_t)q | (uintptr_t)k_cache | (uintptr_t)v_cache | (uintptr_t)work) % 16 != 0 || s.kv_stride % 8 != 0)
        return q35_fail(err, "%s: q, the caches and the work buffer must be 16-byte aligned and the kv stride (%lld) a "
                             "multiple of 8 halves",
                        who, (long long)s.kv_stride);
    const dim3 grid((unsigned)splits, (unsigned)s.kv_heads);
    const unsigned threads = 32u * (unsigned)(s.heads / s.kv_heads);
    const __half *k = (const __half *)k_cache, *v = (const __half *)v_cache;
    float *w = (float *)work;
    cudaStream_t st = (cudaStream_t)stream;
    if (s.head_dim == 256) {
        q35_decode_split_kernel<256><<<grid, threads, 0, st>>>(w, q, k, v, n_ctx, pos_at, s, splits);
        if (Q35_LAUNCH_CHECK("attention_decode_split (partials)", err))
            return -1;
        q35_decode_split_combine<256><<<(unsigned)s.heads, 256, 0, st>>>(o, w, s, splits);
    } else {
        q35_decode_split_kernel<128><<<grid, threads, 0, st>>>(w, q, k, v, n_ctx, pos_at, s, splits);
        if (Q35_LAUNCH_CHECK("attention_decode_split (partials)", err))
            return -1;
        q35_decode_split_combine<128><<<(unsigned)s.heads, 128, 0, st>>>(o, w, s, splits);
    }
    return Q35_LAUNCH_CHECK("attention_decode_split (combine)", err);
}

extern "C" int q35_attention_decode_split_f16(float *o, const float *q, const uint16_t *k_cache,
                                              const uint16_t *v_cache, int64_t n_ctx, q35_attn_shape s, int splits,
                                              void *work, q35_stream stream, q35_error *err)
{
    return split_run("attention_decode_split_f16", o, q, k_cache, v_cache, n_ctx, NULL, s, splits, work, stream, err);
}

extern "C" int q35_attention_decode_split_f16_at(float *o, const float *q, const uint16_t *k_cache,
                                                 const uint16_t *v_cache, const int64_t *pos_at, q35_attn_shape s,
                                                 int splits, void *work, q35_stream stream, q35_error *err)
{
    if (!pos_at)
        return q35_fail(err, "attention_decode_split_f16_at: no position pointer");
    return split_run("attention_decode_split_f16_at", o, q, k_cache, v_cache, 0, pos_at, s, splits, work, stream,
                     err);
}
