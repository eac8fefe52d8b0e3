/* The flash prefill attention (kernels/attention.h): one fused causal kernel,
 * f16 inputs to mma.sync m16n8k16 tensor cores, f32 accumulation and an f32
 * online softmax, head_dim 256, no scores materialised. sm_80 or newer.
 *
 * Work split. A block takes R query rows of one KV group and ALL hpk query heads
 * of that group: its M = hpk * R "query rows" (M-row m = head h * R + row r)
 * share every K/V tile it loads. Warp w owns M-rows 16w..16w+15 (one head, 16
 * consecutive rows) and their whole output, 16 x 256 f32 in registers:
 *
 *     hpk       1    2    3    4    6    8
 *     R       128   64   32   32   16   16     M = 128 (96 for hpk 3, 6)
 *     warps     8    8    6    8    6    8
 *
 * Per KV tile of N = 32 positions (the tiles up to the block's last visible
 * position; the ones past it are never visited):
 *   S   = Q K^T     ldmatrix.x4 of Q (A) and K (B) from shared memory, 16 x 32
 *                   f32 per warp (4 n8 tiles), scores in log2 units;
 *   mask            only on the diagonal tiles: position p > pos0 + row -> -inf;
 *                   a warp whose 16 rows see none of the tile skips it;
 *   softmax         running max m and sum l per row (the 4 lanes of a row agree
 *                   on the max by two shuffles; l stays lane-partial until the
 *                   end), O rescaled by 2^(m_old - m_new), P = 2^(s - m) packed
 *                   to f16 straight into the A fragments of the next product;
 *   O  += P V       ldmatrix.x4.trans of V (B), 32 n8 tiles of 256 dims.
 * Shared memory (f16): Q [M][256] (64 KiB at M = 128), K [N][256], V [N][256]
 * (16 KiB each). Every row is 32 chunks of 16 bytes stored at chunk ^ (row % 8),
 * so the 8 rows an ldmatrix phase reads, and the 8 chunks a store phase writes,
 * fall in 8 different bank groups (no conflicts).
 * Staging. The caches and q are f32: half a tile at a time (16 rows) is loaded
 * into registers (f32, 8 floats per 16-byte chunk), converted to f16 and stored
 * into shared memory. V(j) streams in while Q K(j)^T runs (a half stored at
 * its middle, a half at its end), K(j+1) while P V(j) runs (a half after each
 * 16 positions): one K and one V buffer, two barriers a tile, and only 16 (8
 * warps) or 24 registers a thread hold staged data.
 * Order. Blocks take query tiles from the last (the longest rows) to the first,
 * every KV group's in turn, so the heavy blocks start first.
 * KV split (sm_90+). A chunk of 512 rows has few blocks (9B: 16 tiles x 4
 * groups = 64) for 132 SMs, so on sm_90 a cluster of S = 2 or 4 blocks shares
 * one query tile, block s taking tiles s, s + S, ...; at the end each block
 * scales its O by 2^(m_s - M) / L (M, L from every block's m, l through
 * distributed shared memory) and the cluster sums the S partial outputs in rank
 * order, each block writing M/S rows, 64 dims a round.
 * Resources (ptxas, CUDA 13.0, sm_90): 242-252 registers a thread, no spills
 * (the O accumulators alone take 128); 96 KiB of dynamic shared memory at
 * M = 128 (80 KiB at 96), 1 KiB more for the cluster combine; one block an SM. */
#include "kernels/attention.h"
#include "kernels/cluster_launch.cuh"

#include <cooperative_groups.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

namespace cg = cooperative_groups;

#define HD 256                   /* head_dim */
#define KV_TILE 32               /* positions per K/V tile (N) */
#define MAX_M 128                /* M-rows per block */
#define CHUNKS (HD / 8)          /* 16-byte f16 chunks per row */
#define ROUND_DIMS 64            /* dims per round of the cluster combine */
#define COMBINE_LD (ROUND_DIMS + 4)
#define MAX_SPLIT 4
#define LOG2E 1.4426950408889634f

/* The block's rows and warps for hpk heads per group. */
static int flash_rows(int hpk)
{
    switch (hpk) {
    case 1: return 128;
    case 2: return 64;
    case 3: return 32;
    case 4: return 32;
    case 6: return 16;
    case 8: return 16;
    default: return 0;
    }
}

static size_t flash_smem_bytes(int m_rows)
{
    return (size_t)(m_rows + 2 * KV_TILE) * HD * sizeof(__half);
}

/* Byte offset of chunk c of row `row` in a swizzled [rows][256] f16 array. */
__device__ __forceinline__ uint32_t swz(int row, int c)
{
    return (uint32_t)(row * (HD * 2) + ((c ^ (row & 7)) << 4));
}

__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

__device__ __forceinline__ void ldsm_x4_trans(uint32_t (&r)[4], uint32_t addr)
{
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
                 : "r"(addr));
}

/* d += a b, m16n8k16, f16 inputs, f32 accumulators. */
__device__ __forceinline__ void mma16816(float (&d)[4], const uint32_t (&a)[4], uint32_t b0, uint32_t b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
}

__device__ __forceinline__ uint32_t pack_half2(float lo, float hi)
{
    const __half2 h = __floats2half2_rn(lo, hi);
    return *(const uint32_t *)&h;
}

__device__ __forceinline__ void st_shared_v4(uint32_t addr, uint32_t a, uint32_t b, uint32_t c, uint32_t d)
{
    asm volatile("st.shared.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(a), "r"(b), "r"(c), "r"(d));
}

/* Half a K or V tile (HALF rows) in flight in registers: the thread's 16-byte
 * chunks, 8 floats each (chunk index tid + THREADS * i: row index / 32, chunk
 * lane). Half tiles keep the registers a thread stages to 16 (8 warps) or 24. */
#define HALF (KV_TILE / 2)
template <int THREADS>
struct q35_flash_stage {
    static constexpr int N = (HALF * CHUNKS + THREADS - 1) / THREADS;
    float4 lo[N], hi[N];

    /* Loads rows p0..p0+HALF-1 of the cache column base (row stride ld); rows at
     * or past n_ctx read as zeros. */
    __device__ __forceinline__ void load(const float *base, int64_t ld, int p0, int n_ctx)
    {
#pragma unroll
        for (int i = 0; i < N; i++) {
            const int idx = threadIdx.x + THREADS * i;
            lo[i] = hi[i] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (idx < HALF * CHUNKS && p0 + idx / CHUNKS < n_ctx) {
                const float4 *src = (const float4 *)(base + (p0 + idx / CHUNKS) * ld + (idx % CHUNKS) * 8);
                lo[i] = __ldg(src);
                hi[i] = __ldg(src + 1);
            }
        }
    }

    /* Rounds to f16 and stores into rows half * HALF.. of the swizzled tile at
     * shared address tile. */
    __device__ __forceinline__ void store(uint32_t tile, int half) const
    {
#pragma unroll
        for (int i = 0; i < N; i++) {
            const int idx = threadIdx.x + THREADS * i;
            if (idx < HALF * CHUNKS)
                st_shared_v4(tile + swz(half * HALF + idx / CHUNKS, idx % CHUNKS), pack_half2(lo[i].x, lo[i].y),
                             pack_half2(lo[i].z, lo[i].w), pack_half2(hi[i].x, hi[i].y), pack_half2(hi[i].z, hi[i].w));
        }
    }
};

/* The flash kernel: grid query tiles * kv_heads * split, WARPS warps, dynamic
 * shared memory flash_smem_bytes(16 * WARPS). With SPLIT > 1, clusters of SPLIT
 * blocks along x (sm_90+). */
template <int WARPS, int SPLIT>
__global__ void __launch_bounds__(32 * WARPS, 1)
    q35_flash_kernel(float *o, const float *q, const float *k_cache, const float *v_cache, int64_t pos0, int64_t T,
                     q35_attn_shape sh)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
#if __CUDA_ARCH__ < 900
    if (SPLIT > 1) /* clusters: the launcher never asks for them here */
        __trap();
#endif
    constexpr int THREADS = 32 * WARPS, M = 16 * WARPS;
    extern __shared__ __align__(16) unsigned char smem[];
    const uint32_t sQ = (uint32_t)__cvta_generic_to_shared(smem);
    const uint32_t sK = sQ + M * HD * 2, sV = sK + KV_TILE * HD * 2;

    const int hpk = sh.heads / sh.kv_heads, R = M / hpk;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
    /* block x: split = x % SPLIT (the rank in its cluster), then the KV groups,
     * then the query tiles from the last (the longest rows) to the first, so the
     * heavy blocks of every group start first */
    const int n_qtiles = (int)((T + R - 1) / R);
    const int split = SPLIT > 1 ? (int)(blockIdx.x % SPLIT) : 0;
    const int unit = (int)(blockIdx.x / SPLIT), kvh = unit % sh.kv_heads;
    const int qtile = n_qtiles - 1 - unit / sh.kv_heads;
    const int r0 = qtile * R, n_ctx = (int)(pos0 + T); /* the launcher keeps pos0 + T <= INT32_MAX */
    const int rows_here = T - r0 < R ? (int)T - r0 : R;
    const int n_tiles = ((int)pos0 + r0 + rows_here - 1) / KV_TILE + 1; /* to the block's last visible position */

    /* this warp's 16 M-rows: head wh of the group, rows wr..wr+15 of the tile */
    const int wh = 16 * warp / R, wr = 16 * warp % R;
    const int lim0 = (int)pos0 + r0 + wr + g, lim1 = lim0 + 8; /* the last positions rows g, g + 8 see */
    const int warp_first = lim0 - g, warp_last = lim1 - g + 7;  /* the same for the warp's first, last row */
    const float *kc = k_cache + (int64_t)kvh * HD, *vc = v_cache + (int64_t)kvh * HD;

    /* The lanes' ldmatrix addresses. Every loop below steps by whole 8-chunk
     * groups (128 bytes), which the swizzle leaves alone, so each address is one
     * of these plus an immediate offset. Rows: Q 16w + lane % 16, K 8t + lane % 8,
     * V 16kk + lane % 16 (8 + 8), all with row % 8 = lane % 8. */
    uint32_t qoff[4], koff[2], voff[4];
#pragma unroll
    for (int i = 0; i < 4; i++) {
        qoff[i] = sQ + (16 * warp + lane % 16) * (HD * 2) + (((2 * i + lane / 16) ^ (lane % 8)) << 4);
        voff[i] = sV + (lane % 16) * (HD * 2) + (((2 * i + lane / 16) ^ (lane % 8)) << 4);
    }
#pragma unroll
    for (int i = 0; i < 2; i++)
        koff[i] = sK + (lane % 8) * (HD * 2) + (((4 * i + lane / 8) ^ (lane % 8)) << 4);

    /* ---- stage Q: f32 -> f16, swizzled; rows past T are zeros ---- */
    for (int idx = threadIdx.x; idx < M * CHUNKS; idx += THREADS) {
        const int m = idx / CHUNKS, ch = idx % CHUNKS, h = m / R, r = m % R;
        float4 a = make_float4(0.0f, 0.0f, 0.0f, 0.0f), b = a;
        if (r0 + r < T) {
            const float4 *src =
                (const float4 *)(q + (r0 + r) * sh.q_stride + (int64_t)(kvh * hpk + h) * HD + ch * 8);
            a = __ldg(src);
            b = __ldg(src + 1);
        }
        st_shared_v4(sQ + swz(m, ch), pack_half2(a.x, a.y), pack_half2(a.z, a.w), pack_half2(b.x, b.y),
                     pack_half2(b.z, b.w));
    }

    float acc[HD / 8][4]; /* O: n8 tile t holds dims 8t + 2c, +1 of rows g (0, 1) and g + 8 (2, 3) */
#pragma unroll
    for (int t = 0; t < HD / 8; t++)
        acc[t][0] = acc[t][1] = acc[t][2] = acc[t][3] = 0.0f;
    float row_max[2] = {-INFINITY, -INFINITY}, row_sum[2] = {0.0f, 0.0f};
    const float sc = sh.scale * LOG2E;

    /* ---- prologue: K of the first tile into shared memory, the first half of its V in flight ---- */
    q35_flash_stage<THREADS> stage;
    int j = split;
    if (j < n_tiles) {
        stage.load(kc, sh.kv_stride, j * KV_TILE, n_ctx);
        stage.store(sK, 0);
        stage.load(kc, sh.kv_stride, j * KV_TILE + HALF, n_ctx);
        stage.store(sK, 1);
        stage.load(vc, sh.kv_stride, j * KV_TILE, n_ctx);
    }
    __syncthreads();

    for (; j < n_tiles; j += SPLIT) {
        const int p0 = j * KV_TILE, next = j + SPLIT;
        const bool active = p0 <= warp_last; /* a warp none of whose rows sees the tile skips it */
        float s[KV_TILE / 8][4];
        uint32_t pa[KV_TILE / 16][4]; /* P as the A fragments of P V */
        /* ---- S = Q K^T: 64 dims (kq) at a time, two k-steps per K fragment load;
         *      halfway, V(j)'s first half goes to shared memory (every warp is past
         *      P V(j - SPLIT)) and its second half is loaded ---- */
#pragma unroll
        for (int t = 0; t < KV_TILE / 8; t++)
            s[t][0] = s[t][1] = s[t][2] = s[t][3] = 0.0f;
#pragma unroll
        for (int kq = 0; kq < HD / 64; kq++) {
            if (active)
#pragma unroll
                for (int ip = 0; ip < 2; ip++) {
                    uint32_t qa0[4], qa1[4];
                    ldsm_x4(qa0, qoff[2 * ip] + 128 * kq);
                    ldsm_x4(qa1, qoff[2 * ip + 1] + 128 * kq);
#pragma unroll
                    for (int t = 0; t < KV_TILE / 8; t++) {
                        uint32_t kb[4];
                        ldsm_x4(kb, koff[ip] + 8 * t * (HD * 2) + 128 * kq);
                        mma16816(s[t], qa0, kb[0], kb[1]);
                        mma16816(s[t], qa1, kb[2], kb[3]);
                    }
                }
            if (kq == HD / 128 - 1) {
                stage.store(sV, 0);
                stage.load(vc, sh.kv_stride, p0 + HALF, n_ctx);
            }
        }
        if (active) {
            /* ---- causal mask (diagonal tiles only), scores to log2 units ---- */
            const bool diagonal = p0 + KV_TILE - 1 > warp_first;
#pragma unroll
            for (int t = 0; t < KV_TILE / 8; t++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int p = p0 + 8 * t + 2 * c + (e & 1);
                    s[t][e] = diagonal && p > (e < 2 ? lim0 : lim1) ? -INFINITY : s[t][e] * sc;
                }
            /* ---- online softmax: rows g (ri 0) and g + 8 (ri 1) ---- */
#pragma unroll
            for (int ri = 0; ri < 2; ri++) {
                float mx = row_max[ri];
#pragma unroll
                for (int t = 0; t < KV_TILE / 8; t++)
                    mx = fmaxf(mx, fmaxf(s[t][2 * ri], s[t][2 * ri + 1]));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
                mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
                const float base = mx == -INFINITY ? 0.0f : mx; /* a row that has seen nothing yet */
                const float corr = exp2f(row_max[ri] - base);
                row_max[ri] = mx;
                float sum = 0.0f;
#pragma unroll
                for (int t = 0; t < KV_TILE / 8; t++) {
                    s[t][2 * ri] = exp2f(s[t][2 * ri] - base);
                    s[t][2 * ri + 1] = exp2f(s[t][2 * ri + 1] - base);
                    sum += s[t][2 * ri] + s[t][2 * ri + 1];
                }
                row_sum[ri] = row_sum[ri] * corr + sum;
                if (!__all_sync(0xffffffffu, corr == 1.0f)) /* most tiles leave every max where it was */
#pragma unroll
                    for (int t = 0; t < HD / 8; t++) {
                        acc[t][2 * ri] *= corr;
                        acc[t][2 * ri + 1] *= corr;
                    }
            }
#pragma unroll
            for (int kk = 0; kk < KV_TILE / 16; kk++) {
                pa[kk][0] = pack_half2(s[2 * kk][0], s[2 * kk][1]);
                pa[kk][1] = pack_half2(s[2 * kk][2], s[2 * kk][3]);
                pa[kk][2] = pack_half2(s[2 * kk + 1][0], s[2 * kk + 1][1]);
                pa[kk][3] = pack_half2(s[2 * kk + 1][2], s[2 * kk + 1][3]);
            }
        }
        /* ---- V(j)'s second half to shared memory, K(next)'s first half in flight ---- */
        stage.store(sV, 1);
        if (next < n_tiles)
            stage.load(kc, sh.kv_stride, next * KV_TILE, n_ctx);
        __syncthreads();
        /* ---- O += P V: 16 positions (kk) by 16 dims (two n8 tiles) per V fragment
         *      load; after each kk, a half of K(next) goes to shared memory (every
         *      warp is past Q K(j)^T) and the next half is loaded ---- */
#pragma unroll
        for (int kk = 0; kk < KV_TILE / 16; kk++) {
            if (active)
#pragma unroll
                for (int tq = 0; tq < HD / 64; tq++)
#pragma unroll
                    for (int i = 0; i < 4; i++) {
                        const int t = 4 * tq + i;
                        uint32_t vb[4];
                        ldsm_x4_trans(vb, voff[i] + 16 * kk * (HD * 2) + 128 * tq);
                        mma16816(acc[2 * t], pa[kk], vb[0], vb[1]);
                        mma16816(acc[2 * t + 1], pa[kk], vb[2], vb[3]);
                    }
            if (next < n_tiles) {
                stage.store(sK, kk);
                if (kk == 0)
                    stage.load(kc, sh.kv_stride, next * KV_TILE + HALF, n_ctx);
                else
                    stage.load(vc, sh.kv_stride, next * KV_TILE, n_ctx);
            }
        }
        __syncthreads();
    }

    /* ---- the row sums: the 4 lanes of a row hold parts ---- */
#pragma unroll
    for (int ri = 0; ri < 2; ri++) {
        row_sum[ri] += __shfl_xor_sync(0xffffffffu, row_sum[ri], 1);
        row_sum[ri] += __shfl_xor_sync(0xffffffffu, row_sum[ri], 2);
    }
    const int m_row[2] = {16 * warp + g, 16 * warp + g + 8};

    if (SPLIT == 1) {
        /* ---- O / l into o ---- */
#pragma unroll
        for (int ri = 0; ri < 2; ri++) {
            const int r = m_row[ri] % R;
            if (r0 + r >= T)
                continue;
            const float inv = 1.0f / row_sum[ri];
            float *dst = o + (r0 + r) * sh.o_stride + (int64_t)(kvh * hpk + wh) * HD + 2 * c;
#pragma unroll
            for (int t = 0; t < HD / 8; t++)
                *(float2 *)(dst + 8 * t) = make_float2(acc[t][2 * ri] * inv, acc[t][2 * ri + 1] * inv);
        }
        return;
    }
#if __CUDA_ARCH__ >= 900
    /* ---- the cluster's combine ---- */
    __shared__ float sm_max[MAX_M], sm_sum[MAX_M];
    cg::cluster_group cluster = cg::this_cluster();
    if (c == 0) {
        sm_max[m_row[0]] = row_max[0], sm_sum[m_row[0]] = row_sum[0];
        sm_max[m_row[1]] = row_max[1], sm_sum[m_row[1]] = row_sum[1];
    }
    cluster.sync();
#pragma unroll
    for (int ri = 0; ri < 2; ri++) {
        float mx = -INFINITY, l = 0.0f;
#pragma unroll
        for (int b = 0; b < SPLIT; b++)
            mx = fmaxf(mx, cluster.map_shared_rank(sm_max, b)[m_row[ri]]);
#pragma unroll
        for (int b = 0; b < SPLIT; b++) {
            const float mb = cluster.map_shared_rank(sm_max, b)[m_row[ri]];
            if (mb != -INFINITY)
                l += cluster.map_shared_rank(sm_sum, b)[m_row[ri]] * exp2f(mb - mx);
        }
        const float f = row_max[ri] == -INFINITY ? 0.0f : exp2f(row_max[ri] - mx) / l;
#pragma unroll
        for (int t = 0; t < HD / 8; t++) {
            acc[t][2 * ri] *= f;
            acc[t][2 * ri + 1] *= f;
        }
    }
    float *part = (float *)smem; /* [M][COMBINE_LD], over Q: every warp is past its last read */
    constexpr int MINE = M / SPLIT;
    const int rank = (int)cluster.block_rank();
#pragma unroll
    for (int round = 0; round < HD / ROUND_DIMS; round++) {
#pragma unroll
        for (int t = 0; t < ROUND_DIMS / 8; t++)
#pragma unroll
            for (int ri = 0; ri < 2; ri++)
                *(float2 *)(part + m_row[ri] * COMBINE_LD + 8 * t + 2 * c) =
                    make_float2(acc[round * ROUND_DIMS / 8 + t][2 * ri], acc[round * ROUND_DIMS / 8 + t][2 * ri + 1]);
        cluster.sync();
        for (int idx = threadIdx.x; idx < MINE * ROUND_DIMS; idx += THREADS) {
            const int m = rank * MINE + idx / ROUND_DIMS, d = idx % ROUND_DIMS, h = m / R, r = m % R;
            float v = 0.0f;
#pragma unroll
            for (int b = 0; b < SPLIT; b++)
                v += cluster.map_shared_rank(part, b)[m * COMBINE_LD + d];
            if (r0 + r < T)
                o[(r0 + r) * sh.o_stride + (int64_t)(kvh * hpk + h) * HD + round * ROUND_DIMS + d] = v;
        }
        cluster.sync();
    }
#endif
#else
    __trap();
#endif
}

/* The launch: dynamic shared memory opted in, clusters of `split` along x. */
template <int WARPS, int SPLIT>
static int launch_flash(float *o, const float *q, const float *k, const float *v, int64_t pos0, int64_t T,
                        q35_attn_shape s, cudaStream_t stream, q35_error *err)
{
    const int R = 16 * WARPS / (s.heads / s.kv_heads);
    const int64_t blocks = (T + R - 1) / R * s.kv_heads * SPLIT;
    const size_t smem = flash_smem_bytes(16 * WARPS);
    if (blocks > INT32_MAX)
        return q35_fail(err, "attention_prefill_flash: T %lld needs too many blocks", (long long)T);
    if (Q35_CUDA_CHECK(cudaFuncSetAttribute(q35_flash_kernel<WARPS, SPLIT>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem),
                       err))
        return -1;
    q35_cluster_launch l(dim3((unsigned)blocks), dim3(32 * WARPS), smem, stream, SPLIT);
    if (Q35_CUDA_CHECK(cudaLaunchKernelEx(&l.cfg, q35_flash_kernel<WARPS, SPLIT>, o, q, k, v, pos0, T, s), err))
        return -1;
    return Q35_LAUNCH_CHECK("attention_prefill_flash", err);
}

template <int WARPS>
static int launch_split(int split, float *o, const float *q, const float *k, const float *v, int64_t pos0, int64_t T,
                        q35_attn_shape s, cudaStream_t stream, q35_error *err)
{
    switch (split) {
    case 1: return launch_flash<WARPS, 1>(o, q, k, v, pos0, T, s, stream, err);
    case 2: return launch_flash<WARPS, 2>(o, q, k, v, pos0, T, s, stream, err);
    default: return launch_flash<WARPS, MAX_SPLIT>(o, q, k, v, pos0, T, s, stream, err);
    }
}

int q35_attention_flash_supported(int device, q35_attn_shape s, q35_error *why)
{
    int major = 0, minor = 0, optin = 0;
    if (Q35_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), why) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), why) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), why))
        return 0;
    if (major < 8) {
        q35_fail(why, "flash attention needs compute capability 8.0 or newer (mma.sync f16, ldmatrix); device %d is "
                      "%d.%d",
                 device, major, minor);
        return 0;
    }
    if (s.head_dim != HD) {
        q35_fail(why, "flash attention takes head_dim %d only, not %d", HD, s.head_dim);
        return 0;
    }
    if (s.heads < 1 || s.kv_heads < 1 || s.heads % s.kv_heads != 0) {
        q35_fail(why, "flash attention: heads %d is not a multiple of kv_heads %d", s.heads, s.kv_heads);
        return 0;
    }
    const int hpk = s.heads / s.kv_heads, R = flash_rows(hpk);
    if (R == 0) {
        q35_fail(why, "flash attention: %d query heads per KV head (the kernel takes groups of 1, 2, 3, 4, 6 or 8)",
                 hpk);
        return 0;
    }
    const size_t need = flash_smem_bytes(hpk * R) + 2 * MAX_M * sizeof(float);
    if ((size_t)optin < need) {
        q35_fail(why, "flash attention needs %zu bytes of shared memory per block; device %d allows %d", need, device,
                 optin);
        return 0;
    }
    return 1;
}

int q35_attention_prefill_flash_split(int split, float *o, const float *q, const float *k_cache,
                                      const float *v_cache, int64_t pos0, int64_t T, q35_attn_shape s,
                                      q35_stream stream, q35_error *err)
{
    static const char *who = "attention_prefill_flash";
    if (q35_attention_check_shape(who, s, err))
        return -1;
    int dev = 0;
    if (Q35_CUDA_CHECK(cudaGetDevice(&dev), err))
        return -1;
    q35_error why = {{0}};
    if (!q35_attention_flash_supported(dev, s, &why))
        return q35_fail(err, "%s: %s", who, why.msg);
    if (pos0 < 0 || T < 0 || pos0 > (int64_t)INT32_MAX - T || (split != 0 && split != 1 && split != 2 && split != 4))
        return q35_fail(err, "%s: pos0 %lld, T %lld (>= 0, pos0 + T <= %d), split %d (0 auto, 1, 2 or 4)", who,
                        (long long)pos0, (long long)T, INT32_MAX, split);
    const uintptr_t bits = (uintptr_t)q | (uintptr_t)k_cache | (uintptr_t)v_cache;
    if (bits % 16 || (uintptr_t)o % 8 || s.q_stride % 4 || s.kv_stride % 4 || s.o_stride % 2)
        return q35_fail(err, "%s: q and the caches must be 16-byte aligned with strides of whole float4 (q %lld, kv "
                             "%lld), o 8-byte aligned with an even stride (%lld)",
                        who, (long long)s.q_stride, (long long)s.kv_stride, (long long)s.o_stride);
    if (T == 0)
        return 0;
    int major = 0, sms = 0;
    if (Q35_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), err) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), err))
        return -1;
    const int hpk = s.heads / s.kv_heads, R = flash_rows(hpk), warps = hpk * R / 16;
    const bool clusters = q35_clusters_usable(warps == 8 ? (const void *)q35_flash_kernel<8, MAX_SPLIT>
                                                         : (const void *)q35_flash_kernel<6, MAX_SPLIT>,
                                              major);
    if (split == 0) {
        /* up to one wave of blocks, at least 4 tiles per block on the longest rows */
        const int64_t blocks = (T + R - 1) / R * s.kv_heads, tiles = (pos0 + T + KV_TILE - 1) / KV_TILE;
        split = 1;
        while (clusters && split < MAX_SPLIT && blocks * split * 2 <= sms && tiles >= 8 * split)
            split *= 2;
    }
    if (split > 1 && !clusters)
        return q35_fail(err, "%s: a KV split of %d needs thread-block clusters (compute capability 9.0+, a build "
                             "with sm_90 code)",
                        who, split);
    const cudaStream_t st = (cudaStream_t)stream;
    return warps == 8 ? launch_split<8>(split, o, q, k_cache, v_cache, pos0, T, s, st, err)
                      : launch_split<6>(split, o, q, k_cache, v_cache, pos0, T, s, st, err);
}

int q35_attention_prefill_flash(float *o, const float *q, const float *k_cache, const float *v_cache, int64_t pos0,
                                int64_t T, q35_attn_shape s, q35_stream stream, q35_error *err)
{
    return q35_attention_prefill_flash_split(0, o, q, k_cache, v_cache, pos0, T, s, stream, err);
}
