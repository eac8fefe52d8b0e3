/* The attention prologue on the f16 cache path (kernels/attn_prep.h): a block
 * per row (up to 16 rows, a block per row and 4 of its heads), a warp a head. A head is normed as q35_rmsnorm_rows norms it (a
 * warp a vector: kernels/norm_kernels.cuh's quads, sum and scale) and rotated
 * as q35_rope_neox_rows rotates it (kernels/rope.cuh's angles and pair), so
 * each value has the unfused chain's bits. */
#include "kernels/attn_prep.h"
#include "kernels/norm_kernels.cuh"
#include "kernels/rope.cuh"
#include "kernels/sm90.cuh" /* q35_grid_chain */

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#define WARPS 4
#define THREADS (32 * WARPS)
#define STAGE 512 /* floats of shared memory a warp: one normed head, for RoPE's partners */
#define SPLIT_MAX_T 16 /* up to this many rows, a row's heads over several blocks */

static_assert(Q35_ATTN_PREP_MAX_HD <= Q35_NORM_WARP_MAX_N, "a head normed a warp a vector, as q35_rmsnorm_rows does");
static_assert(Q35_ATTN_PREP_MAX_HD <= 32 * 4 * Q35_NORM_KEEP, "a head's quads in its warp's kept registers");
static_assert(Q35_ATTN_PREP_MAX_HD <= Q35_ROPE_MAX_DIM && Q35_ATTN_PREP_MAX_HD <= STAGE, "a head's angles, its stage");

/* The head of hd at x into registers: lane takes quads lane, lane + 32, ...
 * (the norm's order), zeros past the head. */
__device__ __forceinline__ void load_head(float4 (&v)[Q35_NORM_KEEP], const float *x, int hd, int lane)
{
    const int nq = (hd + 3) / 4;
    const bool vx = q35_aligned16(x);
#pragma unroll
    for (int c = 0; c < Q35_NORM_KEEP; c++) {
        const int q = lane + 32 * c;
        v[c] = q < nq ? q35_norm_quad(x, q, hd, vx) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    }
}

/* The head in registers to y: f32 as it is, f16 rounded to nearest even. */
template <class Y>
__device__ __forceinline__ void store_head(Y *y, const float4 (&v)[Q35_NORM_KEEP], int hd, int lane)
{
    const int nq = (hd + 3) / 4;
    const bool vy = q35_norm_out_vec(y);
#pragma unroll
    for (int c = 0; c < Q35_NORM_KEEP; c++) {
        const int q = lane + 32 * c;
        if (q < nq)
            q35_norm_store(y, q, hd, vy, v[c]);
    }
}

/* Value i of a normed head after RoPE: x is the value, stage holds the head. */
__device__ __forceinline__ float rope_value(float x, int i, int half, const float *stage, const float *cs,
                                           const float *sn)
{
    if (i >= 2 * half)
        return x;
    return i < half ? q35_rope_lo(x, stage[i + half], cs[i], sn[i])
                    : q35_rope_hi(stage[i - half], x, cs[i - half], sn[i - half]);
}

/* The head of hd at x RMS-normed with w and rotated (the row's angles cs, sn
 * of n_rot / 2 = half), to y (f32, or f16 rounded). The whole warp calls it. */
template <class Y>
__device__ __forceinline__ void norm_rope_head(Y *y, const float *x, const float *w, int hd, int half, float eps,
                                               const float *cs, const float *sn, float *stage, int lane)
{
    const int nq = (hd + 3) / 4;
    const bool vx = q35_aligned16(x), vw = q35_aligned16(w);
    float4 v[Q35_NORM_KEEP];
    const float ss = q35_norm_keep<32, Q35_NORM_RMS>(v, x, nullptr, nullptr, lane, hd, vx, true, true);
    const float inv = q35_norm_inv<Q35_NORM_RMS>(q35_block_sum<32>(ss), hd, eps);
#pragma unroll
    for (int c = 0; c < Q35_NORM_KEEP; c++) {
        const int q = lane + 32 * c;
        if (q < nq) {
            const float4 wv = q35_norm_quad(w, q, hd, vw);
            v[c] = make_float4(q35_norm_out<Q35_NORM_RMS>(v[c].x, inv, wv.x, 0.0f),
                               q35_norm_out<Q35_NORM_RMS>(v[c].y, inv, wv.y, 0.0f),
                               q35_norm_out<Q35_NORM_RMS>(v[c].z, inv, wv.z, 0.0f),
                               q35_norm_out<Q35_NORM_RMS>(v[c].w, inv, wv.w, 0.0f));
            q35_norm_store(stage, q, hd, true, v[c]);
        }
    }
    __syncwarp();
#pragma unroll
    for (int c = 0; c < Q35_NORM_KEEP; c++) {
        const int q = lane + 32 * c, i = 4 * q;
        if (q < nq)
            v[c] = make_float4(rope_value(v[c].x, i, half, stage, cs, sn), rope_value(v[c].y, i + 1, half, stage, cs, sn),
                               rope_value(v[c].z, i + 2, half, stage, cs, sn),
                               rope_value(v[c].w, i + 3, half, stage, cs, sn));
    }
    __syncwarp(); /* every partner read before the stage takes the warp's next head */
    store_head(y, v, hd, lane);
}

/* Row t = blockIdx.x at position pos + t: its angles, then heads + 2 kv_heads
 * units of a head each, warp w of part p = blockIdx.y taking units p WARPS + w,
 * then on by WARPS gridDim.y: q heads (the gate read first, so both halves of
 * [q | gate] are in flight together), k heads, v heads. Every part makes the
 * row's angles itself (the same values). */
__global__ void __launch_bounds__(THREADS)
    q35_attn_prep_kernel(float *__restrict__ q, float *__restrict__ gate, __half *__restrict__ k_cache,
                         __half *__restrict__ v_cache, int64_t cache_stride, const float *__restrict__ full,
                         int64_t ld, const float *__restrict__ q_norm, const float *__restrict__ k_norm, int heads,
                         int kv_heads, int hd, int n_rot, int64_t pos, const int64_t *pos_at, double base, float eps)
{
    q35_grid_chain(); /* the grids before and after it (kernels/sm90.cuh) */
    if (pos_at)
        pos = *pos_at;
    __shared__ float cs[Q35_ROPE_MAX_DIM / 2], sn[Q35_ROPE_MAX_DIM / 2];
    __shared__ __align__(16) float stage[WARPS][STAGE];
    const int half = n_rot / 2, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int64_t t = blockIdx.x, qd = (int64_t)heads * hd, kvd = (int64_t)kv_heads * hd;
    for (int i = threadIdx.x; i < half; i += THREADS)
        q35_rope_angle(pos + t, i, n_rot, base, &cs[i], &sn[i]);
    __syncthreads();
    const float *row = full + t * ld;
    __half *kc = k_cache + (pos + t) * cache_stride, *vc = v_cache + (pos + t) * cache_stride;
    for (int u = blockIdx.y * WARPS + warp; u < heads + 2 * kv_heads; u += WARPS * gridDim.y) { /* warp-uniform */
        if (u < heads) {
            const float *src = row + 2 * (int64_t)u * hd;
            float4 g[Q35_NORM_KEEP];
            load_head(g, src + hd, hd, lane);
            norm_rope_head(q + t * qd + (int64_t)u * hd, src, q_norm, hd, half, eps, cs, sn, stage[warp], lane);
            store_head(gate + t * qd + (int64_t)u * hd, g, hd, lane);
        } else if (u < heads + kv_heads) {
            const int64_t h = u - heads;
            norm_rope_head(kc + h * hd, row + 2 * qd + h * hd, k_norm, hd, half, eps, cs, sn, stage[warp], lane);
        } else {
            const int64_t h = u - heads - kv_heads;
            float4 v[Q35_NORM_KEEP];
            load_head(v, row + 2 * qd + kvd + h * hd, hd, lane);
            store_head(vc + h * hd, v, hd, lane);
        }
    }
}

/* A buffer's bytes, for the overlap check. */
struct span {
    const char *name;
    uintptr_t lo, hi; /* [lo, hi) */
};

static span span_of(const char *name, const void *p, int64_t first, int64_t count, int64_t elem)
{
    const uintptr_t lo = (uintptr_t)p + (uintptr_t)(first * elem);
    return {name, lo, lo + (uintptr_t)(count * elem)};
}

/* The checks and the launch; pos_at: the position read on the device (pos
 * unused, the caches' rows checked as a whole). */
static int prep_rows(const char *who, float *q, float *gate, uint16_t *k_cache, uint16_t *v_cache,
                     int64_t cache_stride, int64_t max_seq, const float *full, int64_t ld, const float *q_norm,
                     const float *k_norm, int heads, int kv_heads, int hd, int n_rot, int64_t pos,
                     const int64_t *pos_at, int64_t T, double rope_base, float eps, q35_stream stream, q35_error *err)
{
    if (heads < 1 || kv_heads < 1 || hd < 2 || hd % 2 || hd > Q35_ATTN_PREP_MAX_HD || n_rot < 0 || n_rot % 2 ||
        n_rot > hd)
        return q35_fail(err, "%s: heads %d, kv_heads %d (>= 1), hd %d (even, 2..%d), n_rot %d (even, 0..hd)", who,
                        heads, kv_heads, hd, Q35_ATTN_PREP_MAX_HD, n_rot);
    if (T < 0 || T > INT32_MAX || pos < 0 || max_seq < 0 || !(rope_base > 1.0))
        return q35_fail(err, "%s: T %lld (0..%d), pos %lld (>= 0), max_seq %lld (>= 0), rope base %g (> 1)", who,
                        (long long)T, INT32_MAX, (long long)pos, (long long)max_seq, rope_base);
    const int64_t qd = (int64_t)heads * hd, kvd = (int64_t)kv_heads * hd, width = 2 * qd + 2 * kvd;
    if (ld < width)
        return q35_fail(err, "%s: ld %lld below the row's 2*heads*hd + 2*kv_heads*hd = %lld", who, (long long)ld,
                        (long long)width);
    if (cache_stride < kvd)
        return q35_fail(err, "%s: cache stride %lld below kv_heads*hd = %lld", who, (long long)cache_stride,
                        (long long)kvd);
    if (pos_at ? T > max_seq : pos > max_seq - T)
        return q35_fail(err, "%s: rows %lld..%lld past the cache's max_seq %lld", who, (long long)pos,
                        (long long)(pos + T - 1), (long long)max_seq);
    const struct {
        const char *name;
        const void *p;
        int elem;
    } ptrs[] = {{"q", q, 4},           {"gate", gate, 4},     {"k_cache", k_cache, 2}, {"v_cache", v_cache, 2},
                {"full", full, 4},     {"q_norm", q_norm, 4}, {"k_norm", k_norm, 4}};
    for (const auto &p : ptrs)
        if ((uintptr_t)p.p % (uintptr_t)p.elem)
            return q35_fail(err, "%s: %s %p not aligned to its %d-byte element", who, p.name, p.p, p.elem);
    if (T == 0)
        return 0;
    /* with pos_at, the rows are not known here: the caches' every row */
    const int64_t first = pos_at ? 0 : pos, rows = pos_at ? max_seq : T;
    const span spans[] = {span_of("q", q, 0, T * qd, 4), span_of("gate", gate, 0, T * qd, 4),
                          span_of("k_cache rows", k_cache, first * cache_stride, (rows - 1) * cache_stride + kvd, 2),
                          span_of("v_cache rows", v_cache, first * cache_stride, (rows - 1) * cache_stride + kvd, 2),
                          span_of("full", full, 0, (T - 1) * ld + width, 4)};
    const int n_spans = (int)(sizeof spans / sizeof spans[0]);
    for (int i = 0; i < n_spans; i++)
        for (int j = i + 1; j < n_spans; j++)
            if (spans[i].lo < spans[j].hi && spans[j].lo < spans[i].hi)
                return q35_fail(err, "%s: %s and %s overlap", who, spans[i].name, spans[j].name);
    /* few rows (a decode step's one): a block a row's WARPS heads, not a row's every head (one block at
     * T = 1 took 6 heads a warp in turn); many: a block a row */
    const unsigned parts = T <= SPLIT_MAX_T ? (unsigned)((heads + 2 * kv_heads + WARPS - 1) / WARPS) : 1u;
    q35_attn_prep_kernel<<<dim3((unsigned)T, parts), THREADS, 0, stream>>>(
        q, gate, (__half *)k_cache, (__half *)v_cache, cache_stride, full, ld, q_norm, k_norm, heads, kv_heads, hd,
        n_rot, pos, pos_at, rope_base, eps);
    return Q35_LAUNCH_CHECK(who, err);
}

int q35_attn_prep_rows_f16(float *q, float *gate, uint16_t *k_cache, uint16_t *v_cache, int64_t cache_stride,
                           int64_t max_seq, const float *full, int64_t ld, const float *q_norm, const float *k_norm,
                           int heads, int kv_heads, int hd, int n_rot, int64_t pos, int64_t T, double rope_base,
                           float eps, q35_stream stream, q35_error *err)
{
    return prep_rows("attn_prep_rows_f16", q, gate, k_cache, v_cache, cache_stride, max_seq, full, ld, q_norm, k_norm,
                     heads, kv_heads, hd, n_rot, pos, NULL, T, rope_base, eps, stream, err);
}

int q35_attn_prep_rows_f16_at(float *q, float *gate, uint16_t *k_cache, uint16_t *v_cache, int64_t cache_stride,
                              int64_t max_seq, const float *full, int64_t ld, const float *q_norm,
                              const float *k_norm, int heads, int kv_heads, int hd, int n_rot, const int64_t *pos_at,
                              int64_t T, double rope_base, float eps, q35_stream stream, q35_error *err)
{
    if (!pos_at)
        return q35_fail(err, "attn_prep_rows_f16_at: no position pointer");
    return prep_rows("attn_prep_rows_f16_at", q, gate, k_cache, v_cache, cache_stride, max_seq, full, ld, q_norm,
                     k_norm, heads, kv_heads, hd, n_rot, 0, pos_at, T, rope_base, eps, stream, err);
}
