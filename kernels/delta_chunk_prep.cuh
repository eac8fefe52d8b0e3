/* The chunked delta rule's parallel pass in pieces (kernels/delta_chunk.cuh
 * says what it computes): one block of 4 warps per (chunk, value head). w4's
 * kernel (q35_delta_chunk_prep, kernels/delta_chunk.cu) is these pieces in
 * order; tb4's (kernels/delta_chunk_tb.cuh) takes the same gates, loads,
 * products, A, P and T, without beta e^G K, beta V, W and U; the experiment
 * tb4kh's (kernels/delta_chunk_tb_kh.cuh) the same pieces, a block
 * per (chunk, key head). K and Q come from the f32 q, k (prep_load) or, where
 * the DeltaNet prologue wrote them as f16 into the workspace, from there
 * (prep_load_qk16). */
#ifndef Q35_KERNELS_DELTA_CHUNK_PREP_CUH
#define Q35_KERNELS_DELTA_CHUNK_PREP_CUH

#include "kernels/delta_chunk.cuh"

namespace q35_delta_chunk_kernels {

constexpr int THREADS = 128;         /* 4 warps, 16 rows of a chunk each */
constexpr int APAD = 8;              /* floats past each row of A (float2 stores, 16-byte rows) */

__device__ __forceinline__ float4 scaled(float4 a, float f)
{
    return make_float4(a.x * f, a.y * f, a.z * f, a.w * f);
}

__device__ __forceinline__ uint4 f16x8(float4 a, float4 b)
{
    return make_uint4(q35_pack_half2(a.x, a.y), q35_pack_half2(a.z, a.w), q35_pack_half2(b.x, b.y),
                      q35_pack_half2(b.z, b.w));
}

/* acc[rb] (chunk rows 16 rb .. 16 rb + 15, for every row block rb, x 32
 * columns col0..col0+31) = T (f16 [64][64] at sT) times X (f16 [64][8 NC] at
 * src); T is unit lower triangular, so only its blocks at or left of the
 * diagonal. Each output sums its k blocks 0..rb in ascending order. X is the
 * B operand stored [k = token][n = column]: ldmatrix.trans, once a k block for
 * the row blocks that take it. */
template <int NC>
__device__ __forceinline__ void t_times(float (&acc)[4][4][4], uint32_t sT, uint32_t src, int col0, int lane)
{
#pragma unroll
    for (int rb = 0; rb < 4; rb++)
#pragma unroll
        for (int ni = 0; ni < 4; ni++)
            acc[rb][ni][0] = acc[rb][ni][1] = acc[rb][ni][2] = acc[rb][ni][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < CH / 16; kk++) {
        uint32_t b[2][4];
#pragma unroll
        for (int nb = 0; nb < 2; nb++)
            q35_ldsm_x4_trans(b[nb], src + q35_swz_rows<NC>(16 * kk + lane % 8 + (lane / 8) % 2 * 8,
                                                            (col0 + 16 * nb) / 8 + lane / 16));
#pragma unroll
        for (int rb = kk; rb < CH / 16; rb++) {
            uint32_t a[4];
            q35_ldsm_x4(a, sT + q35_swz_rows<CH / 8>(16 * rb + lane % 16, 2 * kk + lane / 16));
#pragma unroll
            for (int nb = 0; nb < 2; nb++) {
                q35_mma16816(acc[rb][2 * nb], a, b[nb][0], b[nb][1]);
                q35_mma16816(acc[rb][2 * nb + 1], a, b[nb][2], b[nb][3]);
            }
        }
    }
}

/* The 16 x 16 blocks (rb, nb), nb <= rb, of k.k and q.k at or below the
 * diagonal, 3 / 3 / 2 / 2 a warp: row block rb costs rb + 1 blocks, so one warp
 * a row block gave warp 3 four times warp 0's products (and every block's warp
 * 3 shares one SM sub-partition). A warp's b-th block; (-1, -1) past its last. */
__device__ __forceinline__ void kk_block(int warp, int b, int &rb, int &nb)
{
    static constexpr int8_t k_rb[4][3] = {{3, 3, 3}, {3, 2, 2}, {2, 1, -1}, {1, 0, -1}};
    static constexpr int8_t k_nb[4][3] = {{0, 1, 2}, {3, 1, 2}, {0, 1, -1}, {0, 0, -1}};
    rb = k_rb[warp][b], nb = k_nb[warp][b];
}

/* f(bl, rb, nb) for each of the warp's blocks (kk_block), bl ascending. */
template <class F>
__device__ __forceinline__ void for_warp_blocks(int warp, F &&f)
{
    const int nblk = warp < 2 ? 3 : 2;
#pragma unroll
    for (int bl = 0; bl < 3; bl++) {
        if (bl >= nblk)
            break;
        int rb, nb;
        kk_block(warp, bl, rb, nb);
        f(bl, rb, nb);
    }
}

/* Stores 16 x 32 accumulators of row block rb as f16 rows of a global [.][ld]
 * array (rows 16 rb + g and 16 rb + g + 8, columns col0 + 8 ni + 2 q). */
__device__ __forceinline__ void store_f16(__half *dst, int ld, int col0, const float (&acc)[4][4], int rb, int lane)
{
    const int r = 16 * rb + lane / 4, c = col0 + 2 * (lane % 4);
#pragma unroll
    for (int ni = 0; ni < 4; ni++) {
        *reinterpret_cast<uint32_t *>(dst + (size_t)r * ld + c + 8 * ni) = q35_pack_half2(acc[ni][0], acc[ni][1]);
        *reinterpret_cast<uint32_t *>(dst + (size_t)(r + 8) * ld + c + 8 * ni) = q35_pack_half2(acc[ni][2], acc[ni][3]);
    }
}

/* The gates of the chunk at t0 (n tokens), value head j: G, their cumulative
 * sum, and beta into sG, sB [64] by warp 0's scan of pair sums (tokens 2l, 2l+1
 * in lane l); the tokens past T are g = 0, beta = 0, so they change nothing. */
__device__ __forceinline__ void prep_gates(float *sG, float *sB, const float *g, const float *beta, int64_t t0, int n,
                                           int hv, int j, int warp, int lane)
{
    if (warp == 0) {
        const int ta = 2 * lane, tb = ta + 1;
        const float ga = ta < n ? g[(t0 + ta) * hv + j] : 0.0f, gb = tb < n ? g[(t0 + tb) * hv + j] : 0.0f;
        sB[ta] = ta < n ? beta[(t0 + ta) * hv + j] : 0.0f;
        sB[tb] = tb < n ? beta[(t0 + tb) * hv + j] : 0.0f;
        float s = ga + gb;
#pragma unroll
        for (int off = 1; off < 32; off *= 2) {
            const float x = __shfl_up_sync(0xffffffffu, s, off);
            if (lane >= off)
                s += x;
        }
        float before = __shfl_up_sync(0xffffffffu, s, 1);
        before = lane == 0 ? 0.0f : before;
        sG[ta] = before + ga;
        sG[tb] = (before + ga) + gb;
    }
}

/* K, Q (and, SCALED, beta e^G K and beta V) to shared memory as f16 (K and Q to
 * the workspace at Kc, Qc too where to_ws, once per key head); rows past T are
 * zeros. BATCH rounds of 16-byte chunks are loaded before any is stored, so
 * their latencies overlap. */
template <bool SCALED>
__device__ __forceinline__ void prep_load(uint32_t sK, uint32_t sQ, uint32_t sKb, uint32_t sVb, const float *sG,
                                          const float *sB, const float *q, const float *k, const float *v,
                                          int64_t stride, int64_t t0, int n, int kh, int j, int dv, bool to_ws,
                                          __half *Kc, __half *Qc, int tid)
{
    constexpr int BATCH = 4;
    const int nk = CH * DK / 8, nv = SCALED ? CH * dv / 8 : 0;
#pragma unroll 1
    for (int first = tid; first < (nk > nv ? nk : nv); first += BATCH * THREADS) {
        float4 kx[BATCH][2], qx[BATCH][2], vx[BATCH][2];
#pragma unroll
        for (int i = 0; i < BATCH; i++) {
            const int idx = first + i * THREADS;
            kx[i][0] = kx[i][1] = qx[i][0] = qx[i][1] = vx[i][0] = vx[i][1] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (idx < nk && idx / (DK / 8) < n) {
                const int64_t at = (t0 + idx / (DK / 8)) * stride + (int64_t)kh * DK + idx % (DK / 8) * 8;
                const float4 *kr = reinterpret_cast<const float4 *>(k + at), *qr = reinterpret_cast<const float4 *>(q + at);
                kx[i][0] = kr[0], kx[i][1] = kr[1], qx[i][0] = qr[0], qx[i][1] = qr[1];
            }
            if (SCALED && idx < nv && idx / (dv / 8) < n) {
                const float4 *vr = reinterpret_cast<const float4 *>(v + (t0 + idx / (dv / 8)) * stride +
                                                                    (int64_t)j * dv + idx % (dv / 8) * 8);
                vx[i][0] = vr[0], vx[i][1] = vr[1];
            }
        }
#pragma unroll
        for (int i = 0; i < BATCH; i++) {
            const int idx = first + i * THREADS;
            if (idx < nk) {
                const int row = idx / (DK / 8), ch = idx % (DK / 8);
                const uint4 k16 = f16x8(kx[i][0], kx[i][1]), q16 = f16x8(qx[i][0], qx[i][1]);
                const uint32_t at = q35_swz_rows<DK / 8>(row, ch);
                q35_st_shared_v4(sK + at, k16.x, k16.y, k16.z, k16.w);
                q35_st_shared_v4(sQ + at, q16.x, q16.y, q16.z, q16.w);
                if (SCALED) {
                    const float f = sB[row] * expf(sG[row]);
                    q35_st_shared_f16x8(sKb + at, scaled(kx[i][0], f), scaled(kx[i][1], f));
                }
                if (to_ws) {
                    *reinterpret_cast<uint4 *>(Kc + idx * 8) = k16;
                    *reinterpret_cast<uint4 *>(Qc + idx * 8) = q16;
                }
            }
            if (SCALED && idx < nv) {
                const int row = idx / (dv / 8), cc = idx % (dv / 8);
                const float f = sB[row];
                q35_st_shared_f16x8(sVb + (cc / 4) * CH * SL * 2 + q35_swz_rows<SL / 8>(row, cc % 4),
                                    scaled(vx[i][0], f), scaled(vx[i][1], f));
            }
        }
    }
}

/* K and Q of one (chunk, key head) already f16 in the workspace (Kc, Qc:
 * [64][128], as q35_delta_prep_rows_qk16 writes them) into the swizzled tiles
 * at sK, sQ by cp.async, rows n.. zero-filled there (whatever the workspace
 * holds past T); where zero_ws, rows n.. of Kc and Qc made zeros too (the
 * state pass reads them: their products must be finite). Waits for its copies. */
__device__ __forceinline__ void prep_load_qk16(uint32_t sK, uint32_t sQ, __half *Kc, __half *Qc, int n, bool zero_ws,
                                               int tid)
{
    constexpr int NC = DK / 8; /* 16-byte chunks a row */
    q35_cp_tile_swz<NC, CH, THREADS, true>(sK, Kc, tid, n);
    q35_cp_tile_swz<NC, CH, THREADS, true>(sQ, Qc, tid, n);
    q35_cp_async_commit();
    if (zero_ws && n < CH)
        for (int idx = n * NC + tid; idx < CH * NC; idx += THREADS) {
            reinterpret_cast<uint4 *>(Kc)[idx] = make_uint4(0u, 0u, 0u, 0u);
            reinterpret_cast<uint4 *>(Qc)[idx] = make_uint4(0u, 0u, 0u, 0u);
        }
    q35_cp_async_wait<0>();
}

/* k.k and q.k over the warp's blocks (kk_block): A operand K or Q [t][dk]
 * (ldmatrix), B operand K stored [n = s][k = dk] (ldmatrix); each sum over ks
 * ascending. */
__device__ __forceinline__ void prep_products(float (&kk)[3][2][4], float (&qk)[3][2][4], uint32_t sK, uint32_t sQ,
                                              int warp, int lane)
{
#pragma unroll
    for (int ks = 0; ks < DK / 16; ks++)
        for_warp_blocks(warp, [&](int bl, int rb, int nb) {
            uint32_t ak[4], aq[4], b[4];
            const uint32_t at = q35_swz_rows<DK / 8>(16 * rb + lane % 16, 2 * ks + lane / 16);
            q35_ldsm_x4(ak, sK + at);
            q35_ldsm_x4(aq, sQ + at);
            q35_ldsm_x4(b, sK + q35_swz_rows<DK / 8>(16 * nb + lane % 8 + lane / 16 * 8, 2 * ks + (lane / 8) % 2));
            q35_mma16816(kk[bl][0], ak, b[0], b[1]);
            q35_mma16816(kk[bl][1], ak, b[2], b[3]);
            q35_mma16816(qk[bl][0], aq, b[0], b[1]);
            q35_mma16816(qk[bl][1], aq, b[2], b[3]);
        });
}

/* A = beta_t e^{G_t - G_s} k.k below the diagonal (shared, f32, rows of CH +
 * APAD; its blocks above the diagonal are never read); P = e^{G_t - G_s} q.k at
 * and below it (global, f16 [64][64] at Pc), zeros above. */
__device__ __forceinline__ void prep_a_p(float *sA, __half *Pc, const float (&kk)[3][2][4], const float (&qk)[3][2][4],
                                         const float *sG, const float *sB, int warp, int lane, int tid)
{
    for_warp_blocks(warp, [&](int bl, int rb, int nb) {
#pragma unroll
        for (int ni = 0; ni < 2; ni++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int t = 16 * rb + lane / 4 + 8 * h, s = 16 * nb + 8 * ni + 2 * (lane % 4);
                float a[2], p[2];
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const float dec = s + e <= t ? expf(sG[t] - sG[s + e]) : 0.0f;
                    a[e] = s + e < t ? sB[t] * dec * kk[bl][ni][2 * h + e] : 0.0f;
                    p[e] = dec * qk[bl][ni][2 * h + e];
                }
                *reinterpret_cast<float2 *>(sA + t * (CH + APAD) + s) = make_float2(a[0], a[1]);
                *reinterpret_cast<uint32_t *>(Pc + t * CH + s) = q35_pack_half2(p[0], p[1]);
            }
    });
#pragma unroll
    for (int idx = tid; idx < CH * CH / 8; idx += THREADS) { /* 8 halves a store */
        const int t = idx / (CH / 8), s = 8 * (idx % (CH / 8));
        if (s >= 16 * (t / 16 + 1))
            *reinterpret_cast<uint4 *>(Pc + t * CH + s) = make_uint4(0u, 0u, 0u, 0u);
    }
}

/* T = (I + A)^-1, column `col` (one thread): T_tc = [t == c] - sum_{s<t} A_ts
 * T_sc (T_sc = 0 for s < c, so the sums need no bound), four partial sums
 * (term s in sum s % 4); each T_tc (f32) handed to put(t, value), t ascending,
 * after the last. From row B on (B a multiple of 4, B <= col): the rows above
 * B are zero and so are the terms s < B of the rest, whose sums they leave
 * exactly as they were (+0 or 1 less +-0 stays +0 or 1), so starting there is
 * bitwise starting at 0. */
template <int B, class Put>
__device__ __forceinline__ void prep_solve_from(const float *sA, int col, Put &put)
{
    static_assert(B % 4 == 0 && B >= 0 && B < CH, "a start on a float4 boundary inside the chunk");
    float Tc[CH];
#pragma unroll
    for (int t = B; t < CH; t++) {
        const float *a = sA + t * (CH + APAD);
        float x[4] = {t == col ? 1.0f : 0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
        for (int s = B; s + 4 <= t; s += 4) {
            const float4 a4 = *reinterpret_cast<const float4 *>(a + s);
            x[0] -= a4.x * Tc[s];
            x[1] -= a4.y * Tc[s + 1];
            x[2] -= a4.z * Tc[s + 2];
            x[3] -= a4.w * Tc[s + 3];
        }
#pragma unroll
        for (int s = t / 4 * 4; s < t; s++)
            x[s % 4] -= a[s] * Tc[s];
        Tc[t] = (x[0] + x[1]) + (x[2] + x[3]);
    }
#pragma unroll
    for (int t = 0; t < CH; t++)
        put(t, t < B ? 0.0f : Tc[t]);
}

/* The solve of column `col` by its thread, the 64 columns' threads two whole
 * warps (columns 0-31, 32-63): the second starts at row 32 (prep_solve_from<32>,
 * a warp-uniform branch), 496 multiply-adds a thread in place of 2016, the
 * first as before; FULL: both from row 0 (the earlier form, kept as the A/B
 * and the bitwise oracle of the experiment tb4wm2khf). Fewer instructions
 * issued by two of a block's four warps: a gain where the pass is
 * issue-limited (long prompts), little where one wave's first warp, its chain
 * unchanged, bounds it (short ones). */
template <bool FULL = false, class Put>
__device__ __forceinline__ void prep_solve(const float *sA, int col, Put &put)
{
    if (!FULL && col >= 32)
        prep_solve_from<32>(sA, col, put);
    else
        prep_solve_from<0>(sA, col, put);
}

/* Where a parallel-pass block is: chunk c and value head j (value heads
 * fastest: the blocks of the heads that share a key head run together, and
 * their second reads of k and q hit L2), key head kh, the chunk's first token
 * t0 and its rows n, the thread. */
struct prep_at {
    int c, j, kh, tid, warp, lane, n;
    int64_t t0;
};

__device__ __forceinline__ prep_at prep_where(int64_t T, int hk, int hv)
{
    prep_at p;
    p.c = (int)(blockIdx.x / (unsigned)hv), p.j = (int)(blockIdx.x % (unsigned)hv), p.kh = p.j % hk;
    p.tid = threadIdx.x, p.warp = p.tid / 32, p.lane = p.tid % 32;
    p.t0 = (int64_t)p.c * CH;
    p.n = T - p.t0 < CH ? (int)(T - p.t0) : CH;
    return p;
}

/* The parallel pass up to T, both forms: the gates (sG, sB), K and Q (at the
 * front of smem; with SCALED beta e^G K and beta V at sKb, sVb too), k.k and
 * q.k, then A (f32, in K and Q's place) and P (to the workspace), then T = (I +
 * A)^-1 column by column by threads 0..63, each column's values handed to
 * put(t, value); ends on a barrier. QK16: K and Q are in the workspace
 * already (prep_load_qk16; q and k unused). */
template <bool SCALED, bool QK16 = false, class Put>
__device__ __forceinline__ void prep_front(const prep_at &p, unsigned char *smem, uint32_t sKb, uint32_t sVb,
                                           float *sG, float *sB, const float *q, const float *k, const float *v,
                                           int64_t stride, const float *g, const float *beta, int hk, int hv, int dv,
                                           __half *Pg, __half *Qg, __half *Kg, Put &put)
{
    const uint32_t sK = (uint32_t)__cvta_generic_to_shared(smem), sQ = sK + CH * DK * 2;
    float *sA = reinterpret_cast<float *>(smem);
    prep_gates(sG, sB, g, beta, p.t0, p.n, hv, p.j, p.warp, p.lane);
    __syncthreads();
    static_assert(!(SCALED && QK16), "beta e^G K is rounded from the f32 k: no f16 input");
    __half *Kc = Kg + ((size_t)p.c * hk + p.kh) * CH * DK, *Qc = Qg + ((size_t)p.c * hk + p.kh) * CH * DK;
    if (QK16)
        prep_load_qk16(sK, sQ, Kc, Qc, p.n, p.j < hk, p.tid);
    else
        prep_load<SCALED>(sK, sQ, sKb, sVb, sG, sB, q, k, v, stride, p.t0, p.n, p.kh, p.j, dv, p.j < hk, Kc, Qc,
                          p.tid);
    __syncthreads();
    float kk[3][2][4] = {}, qk[3][2][4] = {};
    prep_products(kk, qk, sK, sQ, p.warp, p.lane);
    __syncthreads(); /* every warp's reads of K and Q: A takes their place */
    prep_a_p(sA, Pg + ((size_t)p.c * hv + p.j) * CH * CH, kk, qk, sG, sB, p.warp, p.lane, p.tid);
    __syncthreads();
    if (p.tid < CH)
        prep_solve(sA, p.tid, put);
    __syncthreads();
}

} /* namespace q35_delta_chunk_kernels */

#endif /* Q35_KERNELS_DELTA_CHUNK_PREP_CUH */
