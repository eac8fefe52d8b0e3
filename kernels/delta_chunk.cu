/* The chunked gated delta rule (kernels/delta_chunk.h): two launches.
 *
 * q35_delta_chunk_prep, one block of 4 warps per (chunk, value head j), value
 * heads fastest in the grid (the two blocks reading a key head's k and q run
 * together), three blocks an SM: the chunk's gates and their cumulative sum G
 * (f32, one warp's scan); K, Q, beta e^G K and beta V rounded to f16 into
 * shared memory, each thread's loads four rounds at a time (K and Q also to
 * the workspace, by the block of j < hk, once per key head); k.k and q.k on
 * tensor cores, each warp 16 rows; A (f32, where K and Q were) and P (f16,
 * workspace) masked and decayed from them; T = (I + A)^-1 by forward
 * substitution, one thread a column in f32 with four partial sums; W and U =
 * T times beta e^G K and beta V on tensor cores (only T's lower blocks), to the
 * workspace in f16 (U as [dv / 32][64][32] slices).
 *
 * q35_delta_chunk_state, one block per (value head j, 32 value columns), the
 * chunks in order: the block's [32][128] slice of the state in f32
 * accumulators and as f16 in shared memory (the B operand of D and Q S^T, two
 * buffers); the chunk's W, Q, K, P, U slice and G copied (cp.async) into a
 * stage while the chunk before runs (two stages where shared memory allows,
 * else one). Per chunk, warp w takes rows 16 (w % 4)..+15 (and, with 8 warps,
 * half the 32 columns): D = U - W S^T and Q S^T (one k loop), D and
 * e^{G_last - G} D to shared memory as f16; after a barrier O = e^G Q S^T + P D
 * (P's blocks at or left of the diagonal) scaled by 1/sqrt(dk) to o, and the
 * state e^{G_last} S + (e^{G_last - G} D)^T K, warp w its 128 / warps key
 * columns. The variants w4 and w8 are that block of 4 or 8 warps: the same
 * products in the same order, bitwise equal.
 *
 * Shared-memory tiles are f16 rows XOR-swizzled by 16-byte chunk
 * (kernels/mma.cuh): ldmatrix phases and the fragment stores are free of bank
 * conflicts. Fragment layouts are mma.m16n8k16's (kernels/mma.cuh); which
 * ldmatrix form feeds which operand is written at each product. */
#include "kernels/delta_chunk.h"
#include "kernels/mma.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <string.h>

namespace {

constexpr int DK = 128;              /* key width: dk */
constexpr int CH = Q35_DELTA_CHUNK;  /* tokens a chunk */
constexpr int THREADS = 128;         /* 4 warps, 16 rows of a chunk each */
constexpr int SL = 32;               /* value columns a block of the state pass */
constexpr int APAD = 8;              /* floats past each row of A (float2 stores, 16-byte rows) */
constexpr float SCALE = 0.08838834764831845f; /* 1 / sqrt(128) */

__device__ __forceinline__ float4 scaled(float4 a, float f)
{
    return make_float4(a.x * f, a.y * f, a.z * f, a.w * f);
}

__device__ __forceinline__ uint4 f16x8(float4 a, float4 b)
{
    return make_uint4(q35_pack_half2(a.x, a.y), q35_pack_half2(a.z, a.w), q35_pack_half2(b.x, b.y),
                      q35_pack_half2(b.z, b.w));
}

__device__ __forceinline__ float2 unpack_half2(uint32_t x)
{
    return __half22float2(*reinterpret_cast<const __half2 *>(&x));
}

/* acc (16 rows of this warp x 32 columns) = T (rows 16w.., f16 [64][64] at sT)
 * times X (f16 [64][8 NC] at src, columns col0..col0+31); T is unit lower
 * triangular, so only its blocks at or left of the diagonal. X is the B operand
 * stored [k = token][n = column]: ldmatrix.trans. */
template <int NC>
__device__ __forceinline__ void t_times(float (&acc)[4][4], uint32_t sT, uint32_t src, int col0, int warp, int lane)
{
#pragma unroll
    for (int ni = 0; ni < 4; ni++)
        acc[ni][0] = acc[ni][1] = acc[ni][2] = acc[ni][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < CH / 16; kk++) {
        if (kk > warp)
            break;
        uint32_t a[4];
        q35_ldsm_x4(a, sT + q35_swz_rows<CH / 8>(16 * warp + lane % 16, 2 * kk + lane / 16));
#pragma unroll
        for (int nb = 0; nb < 2; nb++) {
            uint32_t b[4];
            q35_ldsm_x4_trans(b, src + q35_swz_rows<NC>(16 * kk + lane % 8 + (lane / 8) % 2 * 8,
                                                        (col0 + 16 * nb) / 8 + lane / 16));
            q35_mma16816(acc[2 * nb], a, b[0], b[1]);
            q35_mma16816(acc[2 * nb + 1], a, b[2], b[3]);
        }
    }
}

/* Stores a warp's 16 x 32 accumulators as f16 rows of a global [.][ld] array
 * (rows 16w + g and 16w + g + 8, columns col0 + 8 ni + 2 q). */
__device__ __forceinline__ void store_f16(__half *dst, int ld, int col0, const float (&acc)[4][4], int warp, int lane)
{
    const int r = 16 * warp + lane / 4, c = col0 + 2 * (lane % 4);
#pragma unroll
    for (int ni = 0; ni < 4; ni++) {
        *reinterpret_cast<uint32_t *>(dst + (size_t)r * ld + c + 8 * ni) = q35_pack_half2(acc[ni][0], acc[ni][1]);
        *reinterpret_cast<uint32_t *>(dst + (size_t)(r + 8) * ld + c + 8 * ni) = q35_pack_half2(acc[ni][2], acc[ni][3]);
    }
}

/* ---- the parallel pass --------------------------------------------------------- */

__global__ void __launch_bounds__(THREADS, 3) q35_delta_chunk_prep(const float *q, const float *k, const float *v,
                                                                   int64_t stride, const float *g, const float *beta,
                                                                   int64_t T, int hk, int hv, int dv, __half *Wg,
                                                                   __half *Ug, __half *Pg, float *Gg, __half *Qg,
                                                                   __half *Kg)
{
    extern __shared__ __align__(16) unsigned char smem[];
    /* value heads fastest: the blocks of the heads that share a key head run
     * together, and their second reads of k and q hit L2 */
    const int c = (int)(blockIdx.x / (unsigned)hv), j = (int)(blockIdx.x % (unsigned)hv), kh = j % hk;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int64_t t0 = (int64_t)c * CH;
    const int n = T - t0 < CH ? (int)(T - t0) : CH;
    /* K and Q [64][128] f16, dead after k.k and q.k, then A [64][64 + APAD] f32
     * and T [64][64] f16 in their place; beta e^G K [64][128] and beta V
     * [dv/32][64][32] f16; G and beta [64] f32 */
    const uint32_t sK = (uint32_t)__cvta_generic_to_shared(smem), sQ = sK + CH * DK * 2;
    float *sA = reinterpret_cast<float *>(smem);
    const uint32_t sT = sK + CH * (CH + APAD) * 4;
    const uint32_t sKb = sQ + CH * DK * 2, sVb = sKb + CH * DK * 2;
    float *sG = reinterpret_cast<float *>(smem + 3 * CH * DK * 2 + CH * dv * 2), *sB = sG + CH;
    static_assert(CH * (CH + APAD) * 4 + CH * CH * 2 <= 2 * CH * DK * 2, "A and T fit where K and Q were");

    /* the gates: G by one warp's scan of pair sums (tokens 2l, 2l+1 in lane l);
     * the tokens past T are g = 0, beta = 0, so they change nothing */
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
    __syncthreads();

    /* K, Q, beta e^G K, beta V to shared memory as f16 (K and Q to the workspace
     * too, once per key head); rows past T are zeros. BATCH rounds of 16-byte
     * chunks are loaded before any is stored, so their latencies overlap. */
    constexpr int BATCH = 4;
    const int nk = CH * DK / 8, nv = CH * dv / 8;
    __half *Kc = Kg + ((size_t)c * hk + kh) * CH * DK, *Qc = Qg + ((size_t)c * hk + kh) * CH * DK;
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
            if (idx < nv && idx / (dv / 8) < n) {
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
                const float f = sB[row] * expf(sG[row]);
                q35_st_shared_f16x8(sKb + at, scaled(kx[i][0], f), scaled(kx[i][1], f));
                if (j < hk) {
                    *reinterpret_cast<uint4 *>(Kc + idx * 8) = k16;
                    *reinterpret_cast<uint4 *>(Qc + idx * 8) = q16;
                }
            }
            if (idx < nv) {
                const int row = idx / (dv / 8), cc = idx % (dv / 8);
                const float f = sB[row];
                q35_st_shared_f16x8(sVb + (cc / 4) * CH * SL * 2 + q35_swz_rows<SL / 8>(row, cc % 4),
                                    scaled(vx[i][0], f), scaled(vx[i][1], f));
            }
        }
    }
    __syncthreads();

    /* k.k and q.k of the warp's rows t against tokens s < 16 (w + 1): A operand K
     * or Q [t][dk] (ldmatrix), B operand K stored [n = s][k = dk] (ldmatrix) */
    float kk[8][4] = {}, qk[8][4] = {};
#pragma unroll
    for (int ks = 0; ks < DK / 16; ks++) {
        uint32_t ak[4], aq[4];
        const uint32_t at = q35_swz_rows<DK / 8>(16 * warp + lane % 16, 2 * ks + lane / 16);
        q35_ldsm_x4(ak, sK + at);
        q35_ldsm_x4(aq, sQ + at);
#pragma unroll
        for (int nb = 0; nb < 4; nb++) {
            if (nb > warp)
                break;
            uint32_t b[4];
            q35_ldsm_x4(b, sK + q35_swz_rows<DK / 8>(16 * nb + lane % 8 + lane / 16 * 8, 2 * ks + (lane / 8) % 2));
            q35_mma16816(kk[2 * nb], ak, b[0], b[1]);
            q35_mma16816(kk[2 * nb + 1], ak, b[2], b[3]);
            q35_mma16816(qk[2 * nb], aq, b[0], b[1]);
            q35_mma16816(qk[2 * nb + 1], aq, b[2], b[3]);
        }
    }
    __syncthreads(); /* every warp's reads of K and Q: A takes their place */
    /* A = beta_t e^{G_t - G_s} k.k below the diagonal (shared, f32); P = e^{G_t - G_s}
     * q.k at and below it, zeros above (workspace, f16) */
    __half *Pc = Pg + ((size_t)c * hv + j) * CH * CH;
#pragma unroll
    for (int ni = 0; ni < 8; ni++)
#pragma unroll
        for (int h = 0; h < 2; h++) {
            const int t = 16 * warp + lane / 4 + 8 * h, s = 8 * ni + 2 * (lane % 4);
            float a[2], p[2];
#pragma unroll
            for (int e = 0; e < 2; e++) {
                const float dec = s + e <= t ? expf(sG[t] - sG[s + e]) : 0.0f;
                a[e] = s + e < t ? sB[t] * dec * kk[ni][2 * h + e] : 0.0f;
                p[e] = dec * qk[ni][2 * h + e];
            }
            *reinterpret_cast<float2 *>(sA + t * (CH + APAD) + s) = make_float2(a[0], a[1]);
            *reinterpret_cast<uint32_t *>(Pc + t * CH + s) = q35_pack_half2(p[0], p[1]);
        }
    __syncthreads();

    /* T = (I + A)^-1, column `col` by thread col: T_tc = [t == c] - sum_{s<t} A_ts T_sc
     * (T_sc = 0 for s < c, so the sums need no bound), four partial sums */
    if (tid < CH) {
        const int col = tid;
        float Tc[CH];
#pragma unroll
        for (int t = 0; t < CH; t++) {
            const float *a = sA + t * (CH + APAD);
            float x[4] = {t == col ? 1.0f : 0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
            for (int s = 0; s + 4 <= t; s += 4) {
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
            asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(sT + q35_swz_at<CH / 8>(t, col)),
                         "h"(__half_as_ushort(__float2half_rn(Tc[t]))));
    }
    __syncthreads();

    /* W = T (beta e^G K) and U = T (beta V), 32 columns at a time */
    float acc[4][4];
    __half *Wc = Wg + ((size_t)c * hv + j) * CH * DK;
#pragma unroll 1
    for (int col0 = 0; col0 < DK; col0 += 32) {
        t_times<DK / 8>(acc, sT, sKb, col0, warp, lane);
        store_f16(Wc, DK, col0, acc, warp, lane);
    }
    __half *Uc = Ug + ((size_t)c * hv + j) * CH * dv;
#pragma unroll 1
    for (int u = 0; u < dv / SL; u++) {
        t_times<SL / 8>(acc, sT, sVb + u * CH * SL * 2, 0, warp, lane);
        store_f16(Uc + (size_t)u * CH * SL, SL, 0, acc, warp, lane);
    }
    if (tid < CH)
        Gg[((size_t)c * hv + j) * CH + tid] = sG[tid];
}

/* ---- the sequential pass ------------------------------------------------------- */

/* A state pass of WARPS warps a block over a slice of SW value columns (32 or
 * 64). Warp w takes chunk rows 16 (w % 4) .. + 15 and slice columns CW (w / 4)
 * .. + CW - 1 for D and O (NT tiles of 8), and key columns KW w .. + KW - 1 of
 * the state (MT x NK tiles). One stage: a chunk's W, Q, K [64][128], P
 * [64][64], U slice [64][SW] (f16, swizzled) and G [64] (f32); then D and
 * e^{G_last - G} D [64][SW] and two buffers of the state as f16 [SW][128]. */
template <int WARPS, int SW_>
struct state_cfg {
    static_assert((WARPS == 4 && SW_ == 32) || (WARPS == 8 && (SW_ == 32 || SW_ == 64)), "w4, w8, s64w8");
    static constexpr int SW = SW_, THREADS_ = 32 * WARPS;
    static constexpr int CW = SW * 4 / WARPS, NT = CW / 8; /* slice columns of a warp (D, O) */
    static constexpr int KW = DK / WARPS, NK = KW / 8;     /* key columns of a warp's state */
    static constexpr int MT = SW / 16;                     /* the state's m tiles (value columns) */
    static constexpr int NS = SW / 8;                      /* 16-byte chunks of a U or D row */
    static constexpr int OFF_W = 0, OFF_Q = OFF_W + CH * DK * 2, OFF_K = OFF_Q + CH * DK * 2;
    static constexpr int OFF_P = OFF_K + CH * DK * 2, OFF_U = OFF_P + CH * CH * 2, OFF_G = OFF_U + CH * SW * 2;
    static constexpr int STAGE_BYTES = OFF_G + CH * 4, D_BYTES = CH * SW * 2, S16_BYTES = SW * DK * 2;
    static constexpr int smem(int stages) { return stages * STAGE_BYTES + 2 * D_BYTES + 2 * S16_BYTES; }
};

/* Copies chunk c's tiles into the stage at base (cp.async, one group); the
 * slice's U is SW / 32 consecutive [64][32] tiles of the workspace. */
template <class C>
__device__ __forceinline__ void load_stage(uint32_t base, int64_t c, int j, int kh, int sl, int hk, int hv, int dv,
                                           const __half *W, const __half *U, const __half *P, const float *G,
                                           const __half *Q, const __half *K)
{
    const int tid = threadIdx.x;
    const char *w = reinterpret_cast<const char *>(W + ((size_t)c * hv + j) * CH * DK);
    const char *qq = reinterpret_cast<const char *>(Q + ((size_t)c * hk + kh) * CH * DK);
    const char *kk = reinterpret_cast<const char *>(K + ((size_t)c * hk + kh) * CH * DK);
#pragma unroll
    for (int idx = tid; idx < CH * DK / 8; idx += C::THREADS_) {
        const uint32_t at = q35_swz_rows<DK / 8>(idx / (DK / 8), idx % (DK / 8));
        q35_cp_async16(base + C::OFF_W + at, w + idx * 16, 16);
        q35_cp_async16(base + C::OFF_Q + at, qq + idx * 16, 16);
        q35_cp_async16(base + C::OFF_K + at, kk + idx * 16, 16);
    }
    const char *p = reinterpret_cast<const char *>(P + ((size_t)c * hv + j) * CH * CH);
#pragma unroll
    for (int idx = tid; idx < CH * CH / 8; idx += C::THREADS_)
        q35_cp_async16(base + C::OFF_P + q35_swz_rows<CH / 8>(idx / (CH / 8), idx % (CH / 8)), p + idx * 16, 16);
    const char *u = reinterpret_cast<const char *>(U + (((size_t)c * hv + j) * (dv / SL) + (size_t)sl * (C::SW / SL)) *
                                                           CH * SL);
#pragma unroll
    for (int idx = tid; idx < CH * C::SW / 8; idx += C::THREADS_) {
        const int tile = idx / (CH * SL / 8), in = idx % (CH * SL / 8); /* [tile][row][chunk of 4] */
        q35_cp_async16(base + C::OFF_U + q35_swz_rows<C::NS>(in / (SL / 8), tile * (SL / 8) + in % (SL / 8)),
                       u + idx * 16, 16);
    }
    if (tid < CH / 4)
        q35_cp_async16(base + C::OFF_G + tid * 16, G + ((size_t)c * hv + j) * CH + tid * 4, 16);
    q35_cp_async_commit();
}

/* The warp's part of the block's state slice (rows 16 mi + g (+8) = value
 * columns, columns KW w + 8 ni + 2q (+1) = key index) as f16 [SW][128] into buf. */
template <class C>
__device__ __forceinline__ void put_state(uint32_t buf, const float (&st)[C::MT][C::NK][4], int warp, int lane)
{
#pragma unroll
    for (int mi = 0; mi < C::MT; mi++)
#pragma unroll
        for (int ni = 0; ni < C::NK; ni++) {
            const int r = 16 * mi + lane / 4, col = C::KW * warp + 8 * ni + 2 * (lane % 4);
            q35_st_shared_b32(buf + q35_swz_at<DK / 8>(r, col), q35_pack_half2(st[mi][ni][0], st[mi][ni][1]));
            q35_st_shared_b32(buf + q35_swz_at<DK / 8>(r + 8, col), q35_pack_half2(st[mi][ni][2], st[mi][ni][3]));
        }
}

template <int WARPS, int SW, int STAGES>
__global__ void __launch_bounds__(32 * WARPS, 1) q35_delta_chunk_state(float *o, int64_t o_stride, float *S, int64_t T,
                                                                       int hk, int hv, int dv, const __half *W,
                                                                       const __half *U, const __half *P, const float *G,
                                                                       const __half *Q, const __half *K)
{
    using C = state_cfg<WARPS, SW>;
    extern __shared__ __align__(16) unsigned char smem[];
    const int j = blockIdx.x, sl = blockIdx.y, kh = j % hk;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, gq = lane / 4, qq = lane % 4;
    const int rb = warp % 4, c0 = C::CW * (warp / 4); /* the warp's rows 16 rb.., slice columns c0.. */
    const int64_t nc = (T + CH - 1) / CH;
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
    const uint32_t sD = base + STAGES * C::STAGE_BYTES, sDp = sD + C::D_BYTES, sS = sDp + C::D_BYTES;
    float *Sj = S + ((size_t)j * dv + (size_t)sl * SW) * DK;

    float st[C::MT][C::NK][4]; /* S[value column 16 mi + g (+8)][key KW w + 8 ni + 2 q (+1)] */
#pragma unroll
    for (int mi = 0; mi < C::MT; mi++)
#pragma unroll
        for (int ni = 0; ni < C::NK; ni++) {
            const int r = 16 * mi + gq, col = C::KW * warp + 8 * ni + 2 * qq;
            const float2 a = *reinterpret_cast<const float2 *>(Sj + (size_t)r * DK + col);
            const float2 b = *reinterpret_cast<const float2 *>(Sj + (size_t)(r + 8) * DK + col);
            st[mi][ni][0] = a.x, st[mi][ni][1] = a.y, st[mi][ni][2] = b.x, st[mi][ni][3] = b.y;
        }
    put_state<C>(sS, st, warp, lane);
    load_stage<C>(base, 0, j, kh, sl, hk, hv, dv, W, U, P, G, Q, K);

    const int ta = 16 * rb + gq, tb = ta + 8; /* this thread's two rows of a chunk */
#pragma unroll 1
    for (int64_t c = 0; c < nc; c++) {
        const uint32_t sb = base + (STAGES == 2 ? (uint32_t)(c & 1) * C::STAGE_BYTES : 0u);
        const uint32_t s16 = sS + (uint32_t)(c & 1) * C::S16_BYTES;
        const uint32_t s16n = sS + (uint32_t)((c + 1) & 1) * C::S16_BYTES;
        q35_cp_async_wait<0>();
        __syncthreads(); /* the stage landed; the state of the chunk before is in s16 */
        if (STAGES == 2 && c + 1 < nc)
            load_stage<C>(base + (uint32_t)((c + 1) & 1) * C::STAGE_BYTES, c + 1, j, kh, sl, hk, hv, dv, W, U, P, G,
                          Q, K);

        /* W S^T and Q S^T: A operands W, Q [t][dk]; B the state stored [n = value
         * column][k = dk] (ldmatrix) */
        float dacc[C::NT][4] = {}, oacc[C::NT][4] = {};
#pragma unroll
        for (int ks = 0; ks < DK / 16; ks++) {
            uint32_t aw[4], aq[4], b[C::NT / 2][4];
            const uint32_t at = q35_swz_rows<DK / 8>(16 * rb + lane % 16, 2 * ks + lane / 16);
            q35_ldsm_x4(aw, sb + C::OFF_W + at);
            q35_ldsm_x4(aq, sb + C::OFF_Q + at);
#pragma unroll
            for (int nb = 0; nb < C::NT / 2; nb++)
                q35_ldsm_x4(b[nb], s16 + q35_swz_rows<DK / 8>(c0 + 16 * nb + lane % 8 + lane / 16 * 8, 2 * ks + (lane / 8) % 2));
#pragma unroll
            for (int nb = 0; nb < C::NT / 2; nb++) {
                q35_mma16816(dacc[2 * nb], aw, b[nb][0], b[nb][1]);
                q35_mma16816(dacc[2 * nb + 1], aw, b[nb][2], b[nb][3]);
                q35_mma16816(oacc[2 * nb], aq, b[nb][0], b[nb][1]);
                q35_mma16816(oacc[2 * nb + 1], aq, b[nb][2], b[nb][3]);
            }
        }
        /* D = U - W S^T, and e^{G_last - G} D, to shared memory; e^G Q S^T */
        const float Glast = q35_ld_shared_f32(sb + C::OFF_G + (CH - 1) * 4);
        const float Ga = q35_ld_shared_f32(sb + C::OFF_G + ta * 4), Gb = q35_ld_shared_f32(sb + C::OFF_G + tb * 4);
        const float ea = expf(Ga), eb = expf(Gb), la = expf(Glast - Ga), lb = expf(Glast - Gb);
#pragma unroll
        for (int ni = 0; ni < C::NT; ni++) {
            const int col = c0 + 8 * ni + 2 * qq;
            const uint32_t xa = q35_swz_at<C::NS>(ta, col), xb = q35_swz_at<C::NS>(tb, col);
            const float2 ua = unpack_half2(q35_ld_shared_b32(sb + C::OFF_U + xa));
            const float2 ub = unpack_half2(q35_ld_shared_b32(sb + C::OFF_U + xb));
            const float d0 = ua.x - dacc[ni][0], d1 = ua.y - dacc[ni][1], d2 = ub.x - dacc[ni][2], d3 = ub.y - dacc[ni][3];
            q35_st_shared_b32(sD + xa, q35_pack_half2(d0, d1));
            q35_st_shared_b32(sD + xb, q35_pack_half2(d2, d3));
            q35_st_shared_b32(sDp + xa, q35_pack_half2(d0 * la, d1 * la));
            q35_st_shared_b32(sDp + xb, q35_pack_half2(d2 * lb, d3 * lb));
            oacc[ni][0] *= ea, oacc[ni][1] *= ea, oacc[ni][2] *= eb, oacc[ni][3] *= eb;
        }
        __syncthreads(); /* every warp's D rows */

        /* O += P D: A operand P [t][s] (blocks at or left of the diagonal), B
         * operand D stored [k = s][n = column] (ldmatrix.trans) */
#pragma unroll
        for (int ks = 0; ks < CH / 16; ks++) {
            if (ks > rb)
                break;
            uint32_t a[4];
            q35_ldsm_x4(a, sb + C::OFF_P + q35_swz_rows<CH / 8>(16 * rb + lane % 16, 2 * ks + lane / 16));
#pragma unroll
            for (int nb = 0; nb < C::NT / 2; nb++) {
                uint32_t b[4];
                q35_ldsm_x4_trans(b, sD + q35_swz_rows<C::NS>(16 * ks + lane % 8 + (lane / 8) % 2 * 8,
                                                               (c0 + 16 * nb) / 8 + lane / 16));
                q35_mma16816(oacc[2 * nb], a, b[0], b[1]);
                q35_mma16816(oacc[2 * nb + 1], a, b[2], b[3]);
            }
        }
        const int64_t t0 = c * CH;
        float *oc = o + (int64_t)j * dv + (int64_t)sl * SW + c0 + 2 * qq;
#pragma unroll
        for (int ni = 0; ni < C::NT; ni++) {
            if (t0 + ta < T)
                *reinterpret_cast<float2 *>(oc + (t0 + ta) * o_stride + 8 * ni) =
                    make_float2(oacc[ni][0] * SCALE, oacc[ni][1] * SCALE);
            if (t0 + tb < T)
                *reinterpret_cast<float2 *>(oc + (t0 + tb) * o_stride + 8 * ni) =
                    make_float2(oacc[ni][2] * SCALE, oacc[ni][3] * SCALE);
        }

        /* S = e^{G_last} S + (e^{G_last - G} D)^T K: A operand that D stored [k = s]
         * [m = value column] (ldmatrix.trans), B operand K stored [k = s][n = dk]
         * (ldmatrix.trans), warp w the key columns KW w.. */
        const float el = expf(Glast);
#pragma unroll
        for (int mi = 0; mi < C::MT; mi++)
#pragma unroll
            for (int ni = 0; ni < C::NK; ni++)
#pragma unroll
                for (int e = 0; e < 4; e++)
                    st[mi][ni][e] *= el;
#pragma unroll
        for (int ks = 0; ks < CH / 16; ks++) {
            uint32_t a[C::MT][4], b[C::NK / 2][4];
#pragma unroll
            for (int mi = 0; mi < C::MT; mi++)
                q35_ldsm_x4_trans(a[mi], sDp + q35_swz_rows<C::NS>(16 * ks + lane % 8 + lane / 16 * 8,
                                                                    2 * mi + (lane / 8) % 2));
#pragma unroll
            for (int nb = 0; nb < C::NK / 2; nb++)
                q35_ldsm_x4_trans(b[nb], sb + C::OFF_K + q35_swz_rows<DK / 8>(16 * ks + lane % 8 + (lane / 8) % 2 * 8,
                                                                           (C::KW * warp + 16 * nb) / 8 + lane / 16));
#pragma unroll
            for (int mi = 0; mi < C::MT; mi++)
#pragma unroll
                for (int nb = 0; nb < C::NK / 2; nb++) {
                    q35_mma16816(st[mi][2 * nb], a[mi], b[nb][0], b[nb][1]);
                    q35_mma16816(st[mi][2 * nb + 1], a[mi], b[nb][2], b[nb][3]);
                }
        }
        put_state<C>(s16n, st, warp, lane);
        if (STAGES == 1 && c + 1 < nc) {
            __syncthreads(); /* every read of the stage is done */
            load_stage<C>(base, c + 1, j, kh, sl, hk, hv, dv, W, U, P, G, Q, K);
        }
    }
#pragma unroll
    for (int mi = 0; mi < C::MT; mi++)
#pragma unroll
        for (int ni = 0; ni < C::NK; ni++) {
            const int r = 16 * mi + gq, col = C::KW * warp + 8 * ni + 2 * qq;
            *reinterpret_cast<float2 *>(Sj + (size_t)r * DK + col) = make_float2(st[mi][ni][0], st[mi][ni][1]);
            *reinterpret_cast<float2 *>(Sj + (size_t)(r + 8) * DK + col) = make_float2(st[mi][ni][2], st[mi][ni][3]);
        }
}

/* The state pass's launch: WARPS warps a block over SW value columns, two
 * stages where the device's shared memory holds them, else one. */
template <int WARPS, int SW>
int launch_state(int optin, float *o, int64_t o_stride, float *S, int64_t T, q35_delta_dims d, const __half *W,
                 const __half *U, const __half *P, const float *G, const __half *Q, const __half *K, q35_stream stream,
                 q35_error *err)
{
    using C = state_cfg<WARPS, SW>;
    const dim3 grid((unsigned)d.hv, (unsigned)(d.dv / SW));
    const int stages = C::smem(2) <= optin ? 2 : 1, bytes = C::smem(stages);
    auto kernel = stages == 2 ? q35_delta_chunk_state<WARPS, SW, 2> : q35_delta_chunk_state<WARPS, SW, 1>;
    if (Q35_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes), err))
        return -1;
    kernel<<<grid, 32 * WARPS, bytes, stream>>>(o, o_stride, S, T, d.hk, d.hv, d.dv, W, U, P, G, Q, K);
    return Q35_LAUNCH_CHECK("q35_delta_chunk_state", err);
}

int prep_smem(int dv)
{
    return 3 * CH * DK * 2 + CH * dv * 2 + 2 * CH * 4;
}

bool aligned16(const void *p)
{
    return ((uintptr_t)p & 15u) == 0;
}

typedef int (*state_launcher)(int optin, float *o, int64_t o_stride, float *S, int64_t T, q35_delta_dims d,
                              const __half *W, const __half *U, const __half *P, const float *G, const __half *Q,
                              const __half *K, q35_stream stream, q35_error *err);

/* The variants: the state pass's warps a block and value columns a block (the
 * parallel pass is one). */
const struct {
    const char *name;
    int cols;      /* value columns a block: dv must be a multiple */
    int smem;      /* its shared memory with one stage (the least it runs with) */
    state_launcher state;
} k_variants[] = {
    {"w4", 32, state_cfg<4, 32>::smem(1), launch_state<4, 32>},
    {"w8", 32, state_cfg<8, 32>::smem(1), launch_state<8, 32>},
    {"s64w8", 64, state_cfg<8, 64>::smem(1), launch_state<8, 64>},
};
constexpr int N_VARIANTS = (int)(sizeof k_variants / sizeof k_variants[0]);

} /* namespace */

int q35_delta_chunk_variant_count(void)
{
    return N_VARIANTS;
}

const char *q35_delta_chunk_variant_name(int variant)
{
    return variant >= 0 && variant < N_VARIANTS ? k_variants[variant].name : NULL;
}

int q35_delta_chunk_variant_find(const char *name)
{
    for (int v = 0; name && v < N_VARIANTS; v++)
        if (strcmp(k_variants[v].name, name) == 0)
            return v;
    return -1;
}

int q35_delta_chunk_variant_default(void)
{
    return 0; /* w4: 0.269 ms against w8's 0.280 at the 9B heads over 4096 rows (H200) */
}

int q35_delta_chunk_variant_supported(int variant, q35_delta_dims d, q35_error *err)
{
    if (variant < 0 || variant >= N_VARIANTS)
        return q35_fail(err, "delta_chunk: no variant %d (0..%d)", variant, N_VARIANTS - 1);
    const int cols = k_variants[variant].cols;
    if (d.dk != DK || d.dv < cols || d.dv % cols != 0 || d.hk < 1 || d.hv < 1 || d.hv % d.hk != 0)
        return q35_fail(err,
                        "delta_chunk %s: unsupported heads Hk %d Hv %d dk %d dv %d (this kernel needs dk = %d, dv a "
                        "multiple of %d, Hv a multiple of Hk)",
                        k_variants[variant].name, d.hk, d.hv, d.dk, d.dv, DK, cols);
    int dev = 0, optin = 0;
    if (Q35_CUDA_CHECK(cudaGetDevice(&dev), err) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), err))
        return -1;
    const int prep_bytes = prep_smem(d.dv), state_bytes = k_variants[variant].smem;
    if (prep_bytes > optin || state_bytes > optin)
        return q35_fail(err, "delta_chunk %s: needs %d bytes of shared memory a block (dv %d), the device allows %d",
                        k_variants[variant].name, prep_bytes > state_bytes ? prep_bytes : state_bytes, d.dv, optin);
    return 0;
}

int q35_delta_chunk_variant(int variant, float *o, int64_t o_stride, float *S, const float *q, const float *k,
                            const float *v, int64_t stride, const float *g, const float *beta, int64_t T,
                            q35_delta_dims d, void *workspace, size_t workspace_bytes, q35_stream stream,
                            q35_error *err)
{
    if (q35_delta_chunk_variant_supported(variant, d, err))
        return -1;
    if (T < 0 || stride % 4 || o_stride % 4 || o_stride < (int64_t)d.hv * d.dv || !aligned16(q) || !aligned16(k) ||
        !aligned16(v) || !aligned16(o) || !aligned16(S))
        return q35_fail(err,
                        "delta_chunk: T %lld, stride %lld and o_stride %lld (multiples of 4, o_stride >= Hv*dv), "
                        "pointers 16-byte aligned (q %p k %p v %p o %p S %p)",
                        (long long)T, (long long)stride, (long long)o_stride, (const void *)q, (const void *)k,
                        (const void *)v, (const void *)o, (const void *)S);
    if (T == 0)
        return 0;
    const q35_delta_chunk_layout L = q35_delta_chunk_layout_of(T, d);
    if (workspace_bytes < L.total || ((uintptr_t)workspace & 255u))
        return q35_fail(err, "delta_chunk: workspace of %zu bytes at %p (T %lld needs %zu, 256-byte aligned)",
                        workspace_bytes, workspace, (long long)T, L.total);
    const int64_t nc = (T + CH - 1) / CH;
    if (nc * d.hv > 0x7fffffff)
        return q35_fail(err, "delta_chunk: T %lld is %lld chunks of %d value heads (at most 2^31 - 1 blocks)",
                        (long long)T, (long long)nc, d.hv);
    int dev = 0, optin = 0;
    if (Q35_CUDA_CHECK(cudaGetDevice(&dev), err) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), err))
        return -1;
    const int prep_bytes = prep_smem(d.dv);
    char *ws = static_cast<char *>(workspace);
    __half *W = reinterpret_cast<__half *>(ws + L.w), *U = reinterpret_cast<__half *>(ws + L.u);
    __half *P = reinterpret_cast<__half *>(ws + L.p), *Q = reinterpret_cast<__half *>(ws + L.q);
    __half *K = reinterpret_cast<__half *>(ws + L.k);
    float *G = reinterpret_cast<float *>(ws + L.g);
    if (Q35_CUDA_CHECK(cudaFuncSetAttribute(q35_delta_chunk_prep, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            prep_bytes),
                       err))
        return -1;
    q35_delta_chunk_prep<<<(unsigned)(nc * d.hv), THREADS, prep_bytes, stream>>>(
        q, k, v, stride, g, beta, T, d.hk, d.hv, d.dv, W, U, P, G, Q, K);
    if (Q35_LAUNCH_CHECK("q35_delta_chunk_prep", err))
        return -1;
    return k_variants[variant].state(optin, o, o_stride, S, T, d, W, U, P, G, Q, K, stream, err);
}

int q35_delta_chunk(float *o, int64_t o_stride, float *S, const float *q, const float *k, const float *v,
                    int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d, void *workspace,
                    size_t workspace_bytes, q35_stream stream, q35_error *err)
{
    return q35_delta_chunk_variant(q35_delta_chunk_variant_default(), o, o_stride, S, q, k, v, stride, g, beta, T, d,
                                   workspace, workspace_bytes, stream, err);
}
