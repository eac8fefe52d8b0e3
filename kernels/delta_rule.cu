/* The gated delta rule: the chunk-resident scan and the per-token step
 * (kernels/delta_rule.h).
 *
 * A value column c of head j evolves on its own: its state row S[j][c][0..dk)
 * only meets the shared k, q, g, beta of each token. So a block of 4 warps takes
 * rows of one head, a group of LANES lanes RPL of them (rows1: 8 lanes, 1 row,
 * 16 rows a block; rows2: 8 lanes, 2 rows, 32; lanes4: 4 lanes, 1 row, 32), the
 * rows in registers for the whole scan. Lane s holds float4 number LANES*m + s of
 * each of its rows: its float4 reads of k and q from shared memory are
 * conflict-free, and in rows2 each read serves two rows. Per token, the spec's
 * step (S <- e^g S; d = (v - S k) beta; S <- S + d k; o = S q / sqrt(dk)) in the
 * equivalent form whose three dot products all read the previous state, so one
 * interleaved butterfly over the group serves them and the output needs no second
 * pass (k.q is the same for every row: computed once per token):
 *
 *     sk = S.k, sq = S.q, kq = k.q;   d = (v - e^g sk) beta
 *     o = (e^g sq + d kq) / sqrt(dk);  S <- e^g S + d k
 *
 * q/k (256 floats a token), v, g and beta are staged TILE tokens at a time,
 * double-buffered with cp.async so the next tile loads while this one runs; e^g
 * and k.q are computed once per token of a tile. The per-token step is the same
 * kernel with T = 1. */
#include "kernels/delta_rule.h"

#include <cuda_runtime.h>
#include <stdint.h>

#define DK 128
#define WARPS 4
#define TILE 32                  /* tokens per staged tile */
#define THREADS (32 * WARPS)
#define MAX_ROWS 32              /* state rows per block, at most */

/* A group of LANES lanes holds RPL state rows (the same columns of each), M
 * float4 of each row per lane. */
template <int LANES, int RPL>
struct q35_delta_shape {
    static constexpr int rows = 32 / LANES * WARPS * RPL; /* state rows per block */
    static constexpr int m = DK / 4 / LANES;
};

struct q35_delta_tile {
    float4 qk[TILE][2 * DK / 4];  /* q (32 float4) then k (32 float4) of each token */
    float4 v[TILE][MAX_ROWS / 4]; /* this block's values of each token */
    float g[TILE];                /* g as loaded, then exp(g) */
    float beta[TILE];
    float kq[TILE];               /* k.q of each token */
};

__device__ __forceinline__ void cp_async16(void *smem, const void *gmem)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}

__device__ __forceinline__ void cp_async4(void *smem, const void *gmem)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(gmem));
}

__device__ __forceinline__ void cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::);
}

__device__ __forceinline__ void cp_async_wait_one()
{
    asm volatile("cp.async.wait_group 1;\n" ::);
}

/* Issues the copies of tokens t0 .. t0+n-1 into tile (each thread its share). */
template <int ROWS>
__device__ __forceinline__ void load_tile(q35_delta_tile *tile, const float *q, const float *k, const float *v,
                                          int64_t stride, const float *g, const float *beta, int64_t t0, int n,
                                          int kh, int j, int c0, int hv)
{
    for (int x = threadIdx.x; x < n * 64; x += THREADS) {
        const int t = x / 64, part = x % 64;
        const float *src = (part < 32 ? q : k) + (t0 + t) * stride + (int64_t)kh * DK + 4 * (part % 32);
        cp_async16(&tile->qk[t][part], src);
    }
    for (int x = threadIdx.x; x < n * (ROWS / 4); x += THREADS) {
        const int t = x / (ROWS / 4), part = x % (ROWS / 4);
        cp_async16(&tile->v[t][part], v + (t0 + t) * stride + c0 + 4 * part);
    }
    if (threadIdx.x < n)
        cp_async4(&tile->g[threadIdx.x], g + (t0 + threadIdx.x) * hv + j);
    else if (threadIdx.x >= 64 && threadIdx.x < 64 + n)
        cp_async4(&tile->beta[threadIdx.x - 64], beta + (t0 + threadIdx.x - 64) * hv + j);
}

/* Per token of the tile, once: exp(g) in place, and k.q (a warp per token, a
 * float4 per lane, a fixed butterfly). */
__device__ __forceinline__ void prepare_tile(q35_delta_tile *tile, int n)
{
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    if (threadIdx.x < n)
        tile->g[threadIdx.x] = expf(tile->g[threadIdx.x]);
    for (int t = warp; t < n; t += WARPS) {
        const float4 a = tile->qk[t][lane], b = tile->qk[t][32 + lane];
        float kq = fmaf(a.w, b.w, fmaf(a.z, b.z, fmaf(a.y, b.y, a.x * b.x)));
#pragma unroll
        for (int off = 16; off > 0; off /= 2)
            kq += __shfl_xor_sync(0xffffffffu, kq, off);
        if (lane == 0)
            tile->kq[t] = kq;
    }
}

__device__ __forceinline__ float dot4(float4 a, float4 b)
{
    return fmaf(a.w, b.w, fmaf(a.z, b.z, fmaf(a.y, b.y, a.x * b.x)));
}

/* M partial sums added pairwise, in a fixed order. */
template <int M>
__device__ __forceinline__ float sum_fixed(const float *p)
{
    if constexpr (M == 1)
        return p[0];
    else
        return sum_fixed<M / 2>(p) + sum_fixed<M / 2>(p + M / 2);
}

template <int LANES, int RPL>
__global__ void __launch_bounds__(THREADS) q35_delta_scan_kernel(float *o, int64_t o_stride, float *S, const float *q,
                                                                  const float *k, const float *v, int64_t stride,
                                                                  const float *g, const float *beta, int64_t T,
                                                                  int hk, int hv, int dv)
{
    constexpr int ROWS = q35_delta_shape<LANES, RPL>::rows, M = q35_delta_shape<LANES, RPL>::m;
    extern __shared__ float4 q35_delta_smem[];
    q35_delta_tile *tiles = reinterpret_cast<q35_delta_tile *>(q35_delta_smem);
    const int blocks_per_head = dv / ROWS;
    const int j = blockIdx.x / blocks_per_head, c0 = (blockIdx.x % blocks_per_head) * ROWS, kh = j % hk;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, sub = lane % LANES;
    const int r0 = (warp * (32 / LANES) + lane / LANES) * RPL; /* the group's first row in the block */
    const float *vj = v + (int64_t)j * dv;

    /* lane sub holds float4 number LANES*m + sub (m < M) of each of its RPL rows */
    float4 st[RPL][M];
#pragma unroll
    for (int i = 0; i < RPL; i++)
#pragma unroll
        for (int m = 0; m < M; m++)
            st[i][m] = reinterpret_cast<const float4 *>(S + ((int64_t)j * dv + c0 + r0 + i) * DK)[LANES * m + sub];
    const float scale = 1.0f / sqrtf((float)DK);

    const int64_t ntiles = (T + TILE - 1) / TILE;
    load_tile<ROWS>(&tiles[0], q, k, vj, stride, g, beta, 0, (int)(T < TILE ? T : TILE), kh, j, c0, hv);
    cp_async_commit();
    for (int64_t it = 0; it < ntiles; it++) {
        if (it + 1 < ntiles) {
            const int64_t t1 = (it + 1) * TILE;
            load_tile<ROWS>(&tiles[(it + 1) & 1], q, k, vj, stride, g, beta, t1,
                            (int)(T - t1 < TILE ? T - t1 : TILE), kh, j, c0, hv);
        }
        cp_async_commit(); /* possibly empty: the group count stays one ahead */
        cp_async_wait_one();
        __syncthreads();
        q35_delta_tile *tile = &tiles[it & 1];
        const int n = (int)(T - it * TILE < TILE ? T - it * TILE : TILE);
        prepare_tile(tile, n);
        __syncthreads();
        for (int tt = 0; tt < n; tt++) {
            float4 kv[M];
            float pk[RPL][M], pq[RPL][M];
#pragma unroll
            for (int m = 0; m < M; m++) {
                kv[m] = tile->qk[tt][32 + LANES * m + sub];
                const float4 qv = tile->qk[tt][LANES * m + sub];
#pragma unroll
                for (int i = 0; i < RPL; i++) {
                    pk[i][m] = dot4(st[i][m], kv[m]);
                    pq[i][m] = dot4(st[i][m], qv);
                }
            }
            /* S.k and S.q of the previous state, each a fixed sum of M partial sums,
             * then one interleaved butterfly over the group for all of them */
            float sk[RPL], sq[RPL];
#pragma unroll
            for (int i = 0; i < RPL; i++) {
                sk[i] = sum_fixed<M>(pk[i]);
                sq[i] = sum_fixed<M>(pq[i]);
            }
#pragma unroll
            for (int off = LANES / 2; off > 0; off /= 2)
#pragma unroll
                for (int i = 0; i < RPL; i++) {
                    sk[i] += __shfl_xor_sync(0xffffffffu, sk[i], off, LANES);
                    sq[i] += __shfl_xor_sync(0xffffffffu, sq[i], off, LANES);
                }
            /* S' = e^g S + d k with d = (v - e^g S.k) beta, so S'.q = e^g S.q + d (k.q) */
            const float decay = tile->g[tt], b = tile->beta[tt], kq = tile->kq[tt];
            const float *vt = reinterpret_cast<const float *>(tile->v[tt]);
#pragma unroll
            for (int i = 0; i < RPL; i++) {
                const float delta = (vt[r0 + i] - decay * sk[i]) * b;
                if (sub == 0)
                    o[(it * TILE + tt) * o_stride + (int64_t)j * dv + c0 + r0 + i] = fmaf(decay, sq[i], delta * kq) * scale;
#pragma unroll
                for (int m = 0; m < M; m++) {
                    st[i][m].x = fmaf(delta, kv[m].x, decay * st[i][m].x);
                    st[i][m].y = fmaf(delta, kv[m].y, decay * st[i][m].y);
                    st[i][m].z = fmaf(delta, kv[m].z, decay * st[i][m].z);
                    st[i][m].w = fmaf(delta, kv[m].w, decay * st[i][m].w);
                }
            }
        }
        __syncthreads(); /* the next iteration's copies overwrite the tile just read */
    }
#pragma unroll
    for (int i = 0; i < RPL; i++)
#pragma unroll
        for (int m = 0; m < M; m++)
            reinterpret_cast<float4 *>(S + ((int64_t)j * dv + c0 + r0 + i) * DK)[LANES * m + sub] = st[i][m];
}

static bool aligned16(const void *p)
{
    return ((uintptr_t)p & 15u) == 0;
}

/* The variants: lanes per state row and state rows per lane group. */
static const struct {
    const char *name;
    int lanes, rpl;
} k_variants[] = {{"rows1", 8, 1}, {"rows2", 8, 2}, {"lanes4", 4, 1}};

const char *q35_delta_rule_variant_name(int variant)
{
    return variant >= 0 && variant < Q35_DELTA_VARIANTS ? k_variants[variant].name : "?";
}

int q35_delta_rule_default_variant(q35_delta_dims d)
{
    return d.dv % q35_delta_shape<8, 2>::rows == 0 ? 1 : 0;
}

template <int LANES, int RPL>
static int launch(const char *name, float *o, int64_t o_stride, float *S, const float *q, const float *k, const float *v, int64_t stride,
                  const float *g, const float *beta, int64_t T, q35_delta_dims d, q35_stream stream, q35_error *err)
{
    const int smem = 2 * (int)sizeof(q35_delta_tile);
    /* more than 48 KiB of dynamic shared memory: allowed per function and device, so on every launch */
    if (Q35_CUDA_CHECK(cudaFuncSetAttribute(q35_delta_scan_kernel<LANES, RPL>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                       err))
        return -1;
    const unsigned blocks = (unsigned)(d.hv * (d.dv / q35_delta_shape<LANES, RPL>::rows));
    q35_delta_scan_kernel<LANES, RPL><<<blocks, THREADS, smem, stream>>>(o, o_stride, S, q, k, v, stride, g, beta, T,
                                                                         d.hk, d.hv, d.dv);
    return Q35_LAUNCH_CHECK(name, err);
}

int q35_delta_rule_scan_variant(int variant, float *o, int64_t o_stride, float *S, const float *q, const float *k,
                                const float *v, int64_t stride, const float *g, const float *beta, int64_t T,
                                q35_delta_dims d, q35_stream stream, q35_error *err)
{
    if (variant < 0 || variant >= Q35_DELTA_VARIANTS)
        return q35_fail(err, "delta_rule_scan: no variant %d (0..%d)", variant, Q35_DELTA_VARIANTS - 1);
    const int rows = 32 / k_variants[variant].lanes * WARPS * k_variants[variant].rpl;
    if (d.dk != DK || d.dv < rows || d.dv % rows != 0 || d.hk < 1 || d.hv < 1 || d.hv % d.hk != 0)
        return q35_fail(err,
                        "delta_rule_scan %s: unsupported heads Hk %d Hv %d dk %d dv %d (this kernel needs dk = %d, dv a "
                        "multiple of %d, Hv a multiple of Hk)",
                        k_variants[variant].name, d.hk, d.hv, d.dk, d.dv, DK, rows);
    if (T < 0 || stride % 4 || o_stride % 4 || o_stride < (int64_t)d.hv * d.dv || !aligned16(q) || !aligned16(k) ||
        !aligned16(v) || !aligned16(o) || !aligned16(S))
        return q35_fail(err,
                        "delta_rule_scan: T %lld, stride %lld and o_stride %lld (multiples of 4, o_stride >= Hv*dv), "
                        "pointers 16-byte aligned (q %p k %p v %p o %p S %p)",
                        (long long)T, (long long)stride, (long long)o_stride, (const void *)q, (const void *)k,
                        (const void *)v, (const void *)o, (const void *)S);
    if (T == 0)
        return 0;
    const char *name = k_variants[variant].name;
    switch (variant) {
    case 0: return launch<8, 1>(name, o, o_stride, S, q, k, v, stride, g, beta, T, d, stream, err);
    case 1: return launch<8, 2>(name, o, o_stride, S, q, k, v, stride, g, beta, T, d, stream, err);
    default: return launch<4, 1>(name, o, o_stride, S, q, k, v, stride, g, beta, T, d, stream, err);
    }
}

int q35_delta_rule_scan(float *o, int64_t o_stride, float *S, const float *q, const float *k, const float *v,
                        int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d,
                        q35_stream stream, q35_error *err)
{
    return q35_delta_rule_scan_variant(q35_delta_rule_default_variant(d), o, o_stride, S, q, k, v, stride, g, beta, T,
                                       d, stream, err);
}

int q35_delta_rule_step(float *o, float *S, const float *q, const float *k, const float *v, const float *g,
                        const float *beta, q35_delta_dims d, q35_stream stream, q35_error *err)
{
    /* one token: strides are never followed; pass a legal one */
    const int64_t stride = 2 * (int64_t)d.hk * d.dk + (int64_t)d.hv * d.dv;
    return q35_delta_rule_scan(o, (int64_t)d.hv * d.dv, S, q, k, v, stride, g, beta, 1, d, stream, err);
}
