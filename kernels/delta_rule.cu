/* The gated delta rule: the chunk-resident scan and the per-token step
 * (kernels/delta_rule.h).
 *
 * A value column c of head j evolves on its own: its state row S[j][c][0..dk)
 * only meets the shared k, q, g, beta of each token. So a block takes 16 rows of
 * one head, a warp 4 of them, 8 lanes a row (16 values each, in registers for the
 * whole scan; the lanes16 variant: 8 rows a block, 16 lanes a row). Lane s of a
 * row holds float4 number LANES*m + s of it: its float4 reads of k and q from
 * shared memory are conflict-free. Per token, the spec's
 * step (S <- e^g S; d = (v - S k) beta; S <- S + d k; o = S q / sqrt(dk)) in the
 * equivalent form whose three dot products all read the previous state, so one
 * interleaved 8-lane butterfly serves them and the output needs no second pass:
 *
 *     sk = S.k, sq = S.q, kq = k.q;   d = (v - e^g sk) beta
 *     o = (e^g sq + d kq) / sqrt(dk);  S <- e^g S + d k
 *
 * q/k (256 floats a token), v (16 a token), g and beta are staged TILE tokens at
 * a time, double-buffered with cp.async so the next tile loads while this one
 * runs. The per-token step is the same kernel with T = 1. */
#include "kernels/delta_rule.h"

#include <cuda_runtime.h>
#include <stdint.h>

#define DK 128
#define WARPS 4
#define TILE 32                  /* tokens per staged tile */
#define THREADS (32 * WARPS)
#define MAX_ROWS 16              /* state rows per block, at 8 lanes a row */

/* LANES lanes per state row: 8 (4 rows a warp) or 16 (2 rows a warp). */
template <int LANES>
struct q35_delta_shape {
    static constexpr int rows = 32 / LANES * WARPS; /* state rows per block */
    static constexpr int m = DK / 4 / LANES;        /* float4 of the row per lane */
};

struct q35_delta_tile {
    float4 qk[TILE][2 * DK / 4]; /* q (32 float4) then k (32 float4) of each token */
    float4 v[TILE][MAX_ROWS / 4]; /* this block's values of each token */
    float g[TILE];               /* g as loaded, then exp(g) */
    float beta[TILE];
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

/* The partial sums of a lane, in a fixed order. */
template <int M>
__device__ __forceinline__ float sum_fixed(const float (&p)[M])
{
    if constexpr (M == 4)
        return (p[0] + p[1]) + (p[2] + p[3]);
    else
        return p[0] + p[1];
}

template <int LANES>
__global__ void __launch_bounds__(THREADS) q35_delta_scan_kernel(float *o, int64_t o_stride, float *S, const float *q,
                                                                  const float *k, const float *v, int64_t stride,
                                                                  const float *g, const float *beta, int64_t T,
                                                                  int hk, int hv, int dv)
{
    constexpr int ROWS = q35_delta_shape<LANES>::rows, M = q35_delta_shape<LANES>::m;
    constexpr int ROWS_PER_WARP = 32 / LANES;
    extern __shared__ float4 q35_delta_smem[];
    q35_delta_tile *tiles = reinterpret_cast<q35_delta_tile *>(q35_delta_smem);
    const int blocks_per_head = dv / ROWS;
    const int j = blockIdx.x / blocks_per_head, c0 = (blockIdx.x % blocks_per_head) * ROWS, kh = j % hk;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, sub = lane % LANES;
    const int r = warp * ROWS_PER_WARP + lane / LANES; /* row in the block */
    const int64_t col = (int64_t)j * dv + c0 + r;      /* value column: the state row, the output index */
    const float *vj = v + (int64_t)j * dv;

    float4 *srow = reinterpret_cast<float4 *>(S + col * DK);
    float4 st[M]; /* lane sub holds the row's float4 number LANES*m + sub, m < M */
#pragma unroll
    for (int m = 0; m < M; m++)
        st[m] = srow[LANES * m + sub];
    const float scale = 1.0f / sqrtf((float)DK);

    const int64_t ntiles = (T + TILE - 1) / TILE;
    load_tile<ROWS>(&tiles[0], q, k, vj, stride, g, beta, 0, (int)(T < TILE ? T : TILE), kh, j, c0, hv);
    cp_async_commit();
    for (int64_t it = 0; it < ntiles; it++) {
        if (it + 1 < ntiles) {
            const int64_t t1 = (it + 1) * TILE;
            load_tile<ROWS>(&tiles[(it + 1) & 1], q, k, vj, stride, g, beta, t1, (int)(T - t1 < TILE ? T - t1 : TILE), kh,
                      j, c0, hv);
        }
        cp_async_commit(); /* possibly empty: the group count stays one ahead */
        cp_async_wait_one();
        __syncthreads();
        q35_delta_tile *tile = &tiles[it & 1];
        const int n = (int)(T - it * TILE < TILE ? T - it * TILE : TILE);
        if (threadIdx.x < n) /* the decays once per token, off the scan's critical path */
            tile->g[threadIdx.x] = expf(tile->g[threadIdx.x]);
        __syncthreads();
        for (int tt = 0; tt < n; tt++) {
            /* the three dot products of the previous state, in one reduction:
             * sk = S.k, sq = S.q, kq = k.q; each a fixed sum of four partial sums */
            float4 kv[M];
            float pk[M], pq[M], pkq[M];
#pragma unroll
            for (int m = 0; m < M; m++) {
                kv[m] = tile->qk[tt][32 + LANES * m + sub];
                const float4 qv = tile->qk[tt][LANES * m + sub];
                pk[m] = fmaf(st[m].w, kv[m].w, fmaf(st[m].z, kv[m].z, fmaf(st[m].y, kv[m].y, st[m].x * kv[m].x)));
                pq[m] = fmaf(st[m].w, qv.w, fmaf(st[m].z, qv.z, fmaf(st[m].y, qv.y, st[m].x * qv.x)));
                pkq[m] = fmaf(kv[m].w, qv.w, fmaf(kv[m].z, qv.z, fmaf(kv[m].y, qv.y, kv[m].x * qv.x)));
            }
            float sk = sum_fixed<M>(pk), sq = sum_fixed<M>(pq), kq = sum_fixed<M>(pkq);
#pragma unroll
            for (int off = LANES / 2; off > 0; off /= 2) {
                sk += __shfl_xor_sync(0xffffffffu, sk, off, LANES);
                sq += __shfl_xor_sync(0xffffffffu, sq, off, LANES);
                kq += __shfl_xor_sync(0xffffffffu, kq, off, LANES);
            }
            /* S' = e^g S + d k with d = (v - e^g S.k) beta, so S'.q = e^g S.q + d (k.q) */
            const float decay = tile->g[tt], b = tile->beta[tt];
            const float delta = (reinterpret_cast<const float *>(tile->v[tt])[r] - decay * sk) * b;
            if (sub == 0)
                o[(it * TILE + tt) * o_stride + col] = fmaf(decay, sq, delta * kq) * scale;
#pragma unroll
            for (int m = 0; m < M; m++) {
                st[m].x = fmaf(delta, kv[m].x, decay * st[m].x);
                st[m].y = fmaf(delta, kv[m].y, decay * st[m].y);
                st[m].z = fmaf(delta, kv[m].z, decay * st[m].z);
                st[m].w = fmaf(delta, kv[m].w, decay * st[m].w);
            }
        }
        __syncthreads(); /* the next iteration's copies overwrite the tile just read */
    }
#pragma unroll
    for (int m = 0; m < M; m++)
        srow[LANES * m + sub] = st[m];
}

static bool aligned16(const void *p)
{
    return ((uintptr_t)p & 15u) == 0;
}

/* The variants: lanes per state row, the block's rows. */
static const struct {
    const char *name;
    int lanes;
} k_variants[] = {{"lanes8", 8}, {"lanes16", 16}};

const char *q35_delta_rule_variant_name(int variant)
{
    return variant >= 0 && variant < Q35_DELTA_VARIANTS ? k_variants[variant].name : "?";
}

int q35_delta_rule_default_variant(q35_delta_dims d)
{
    (void)d;
    return 0;
}

int q35_delta_rule_scan_variant(int variant, float *o, int64_t o_stride, float *S, const float *q, const float *k,
                                const float *v, int64_t stride, const float *g, const float *beta, int64_t T,
                                q35_delta_dims d, q35_stream stream, q35_error *err)
{
    if (variant < 0 || variant >= Q35_DELTA_VARIANTS)
        return q35_fail(err, "delta_rule_scan: no variant %d (0..%d)", variant, Q35_DELTA_VARIANTS - 1);
    const int ROWS = 32 / k_variants[variant].lanes * WARPS;
    if (d.dk != DK || d.dv < MAX_ROWS || d.dv % MAX_ROWS != 0 || d.hk < 1 || d.hv < 1 || d.hv % d.hk != 0)
        return q35_fail(err,
                        "delta_rule_scan: unsupported heads Hk %d Hv %d dk %d dv %d (this kernel needs dk = %d, dv a "
                        "multiple of %d, Hv a multiple of Hk)",
                        d.hk, d.hv, d.dk, d.dv, DK, MAX_ROWS);
    if (T < 0 || stride % 4 || o_stride % 4 || o_stride < (int64_t)d.hv * d.dv || !aligned16(q) || !aligned16(k) ||
        !aligned16(v) || !aligned16(o) || !aligned16(S))
        return q35_fail(err,
                        "delta_rule_scan: T %lld, stride %lld and o_stride %lld (multiples of 4, o_stride >= Hv*dv), "
                        "pointers 16-byte aligned (q %p k %p v %p o %p S %p)",
                        (long long)T, (long long)stride, (long long)o_stride, (const void *)q, (const void *)k,
                        (const void *)v, (const void *)o, (const void *)S);
    if (T == 0)
        return 0;
    const int smem = 2 * (int)sizeof(q35_delta_tile);
    const unsigned blocks = (unsigned)(d.hv * (d.dv / ROWS));
    /* more than 48 KiB of dynamic shared memory: allowed per function and device, so on every launch */
    if (k_variants[variant].lanes == 8) {
        if (Q35_CUDA_CHECK(cudaFuncSetAttribute(q35_delta_scan_kernel<8>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                smem),
                           err))
            return -1;
        q35_delta_scan_kernel<8><<<blocks, THREADS, smem, stream>>>(o, o_stride, S, q, k, v, stride, g, beta, T, d.hk,
                                                                    d.hv, d.dv);
    } else {
        if (Q35_CUDA_CHECK(cudaFuncSetAttribute(q35_delta_scan_kernel<16>,
                                                cudaFuncAttributeMaxDynamicSharedMemorySize, smem),
                           err))
            return -1;
        q35_delta_scan_kernel<16><<<blocks, THREADS, smem, stream>>>(o, o_stride, S, q, k, v, stride, g, beta, T,
                                                                     d.hk, d.hv, d.dv);
    }
    return Q35_LAUNCH_CHECK(k_variants[variant].name, err);
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
