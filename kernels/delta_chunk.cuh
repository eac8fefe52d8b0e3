/* The chunked gated delta rule (kernels/delta_chunk.h): two launches. This
 * header holds what its variants share, the sequential pass (one instantiation
 * per variant: the production w4 in kernels/delta_chunk.cu with the parallel
 * pass, the experiments w8 and s64w8 in kernels/experiments/delta_chunk.cu);
 * the parallel pass's pieces are kernels/delta_chunk_prep.cuh.
 *
 * q35_delta_chunk_prep, one block of 4 warps per (chunk, value head j), all in
 * parallel: the chunk's gates and their cumulative sum G (f32, one warp's
 * scan); K, Q, beta e^G K and beta V rounded to f16 into shared memory (K and Q
 * also to the workspace, by the block of j < hk, once per key head); k.k and
 * q.k on tensor cores, each warp 16 rows; A (f32, shared) and P (f16,
 * workspace) masked and decayed from them; T = (I + A)^-1 by forward
 * substitution, one thread a column in f32 with four partial sums; W and U =
 * T times beta e^G K and beta V on tensor cores (only T's lower blocks), to the
 * workspace in f16 (U as [dv / 32][64][32] slices).
 *
 * q35_delta_chunk_state, one block per (value head j, SW value columns), the
 * chunks in order: the block's [SW][128] slice of the state in f32
 * accumulators and as f16 in shared memory (the B operand of D and Q S^T, two
 * buffers); the chunk's W, Q, K, P, U slice and G copied (cp.async) into a
 * stage while the chunk before runs (two stages where shared memory allows,
 * else one). Per chunk, warp w takes rows 16 (w % 4)..+15 (and, with 8 warps,
 * half the SW columns): D = U - W S^T and Q S^T (one k loop), D and
 * e^{G_last - G} D to shared memory as f16; after a barrier O = e^G Q S^T + P D
 * (P's blocks at or left of the diagonal) scaled by 1/sqrt(dk) to o, and the
 * state e^{G_last} S + (e^{G_last - G} D)^T K, warp w its 128 / warps key
 * columns. The variants: w4 (4 warps, SW 32), w8 (8 warps, SW 32), s64w8 (8
 * warps, SW 64: W, Q, K and P staged once for 64 columns); the same products
 * in the same order, bitwise equal.
 *
 * Shared-memory tiles are f16 rows XOR-swizzled by 16-byte chunk
 * (kernels/mma.cuh): ldmatrix phases and the fragment stores are free of bank
 * conflicts. Fragment layouts are mma.m16n8k16's (kernels/mma.cuh); which
 * ldmatrix form feeds which operand is written at each product. */
#ifndef Q35_KERNELS_DELTA_CHUNK_CUH
#define Q35_KERNELS_DELTA_CHUNK_CUH

#include "kernels/delta_chunk.h"
#include "kernels/mma.cuh"
#include "kernels/variant.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

namespace q35_delta_chunk_kernels {

constexpr int DK = 128;              /* key width: dk */
constexpr int CH = Q35_DELTA_CHUNK;  /* tokens a chunk */
constexpr int SL = 32;               /* value columns of a U slice in the workspace */
constexpr float SCALE = 0.08838834764831845f; /* 1 / sqrt(128) */

__device__ __forceinline__ float2 unpack_half2(uint32_t x)
{
    return __half22float2(*reinterpret_cast<const __half2 *>(&x));
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
    q35_cp_tile_swz<DK / 8, CH, C::THREADS_>(base + C::OFF_W, W + ((size_t)c * hv + j) * CH * DK, tid);
    q35_cp_tile_swz<DK / 8, CH, C::THREADS_>(base + C::OFF_Q, Q + ((size_t)c * hk + kh) * CH * DK, tid);
    q35_cp_tile_swz<DK / 8, CH, C::THREADS_>(base + C::OFF_K, K + ((size_t)c * hk + kh) * CH * DK, tid);
    q35_cp_tile_swz<CH / 8, CH, C::THREADS_>(base + C::OFF_P, P + ((size_t)c * hv + j) * CH * CH, tid);
    const char *u = reinterpret_cast<const char *>(U + (((size_t)c * hv + j) * (dv / SL) + (size_t)sl * (C::SW / SL)) *
                                                           CH * SL);
    static_assert(CH * C::SW / 8 % C::THREADS_ == 0, "whole passes over U's chunks");
#pragma unroll
    for (int i = 0; i < CH * C::SW / 8 / C::THREADS_; i++) { /* a constant trip count: unrolled whole */
        const int idx = tid + C::THREADS_ * i;
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

/* The warp's part of the state slice at Sj (f32 [SW][128], rows = value
 * columns) into st (state_in), or st back to Sj (state_out). */
template <class C>
__device__ __forceinline__ void state_in(float (&st)[C::MT][C::NK][4], const float *Sj, int warp, int gq, int qq)
{
#pragma unroll
    for (int mi = 0; mi < C::MT; mi++)
#pragma unroll
        for (int ni = 0; ni < C::NK; ni++) {
            const int r = 16 * mi + gq, col = C::KW * warp + 8 * ni + 2 * qq;
            const float2 a = *reinterpret_cast<const float2 *>(Sj + (size_t)r * DK + col);
            const float2 b = *reinterpret_cast<const float2 *>(Sj + (size_t)(r + 8) * DK + col);
            st[mi][ni][0] = a.x, st[mi][ni][1] = a.y, st[mi][ni][2] = b.x, st[mi][ni][3] = b.y;
        }
}

template <class C>
__device__ __forceinline__ void state_out(float *Sj, const float (&st)[C::MT][C::NK][4], int warp, int gq, int qq)
{
#pragma unroll
    for (int mi = 0; mi < C::MT; mi++)
#pragma unroll
        for (int ni = 0; ni < C::NK; ni++) {
            const int r = 16 * mi + gq, col = C::KW * warp + 8 * ni + 2 * qq;
            *reinterpret_cast<float2 *>(Sj + (size_t)r * DK + col) = make_float2(st[mi][ni][0], st[mi][ni][1]);
            *reinterpret_cast<float2 *>(Sj + (size_t)(r + 8) * DK + col) = make_float2(st[mi][ni][2], st[mi][ni][3]);
        }
}

/* D = U - dacc (the thread's rows ta, tb; slice columns c0 + 8 ni + 2 q) and
 * e^{G_last - G} D (la, lb) to shared memory as f16 (sD, sDp), from the stage
 * at sb's U; where oacc is given, its rows scaled by ea, eb in the same loop. */
template <class C>
__device__ __forceinline__ void put_deltas(const float (&dacc)[C::NT][4], uint32_t sb, uint32_t sD, uint32_t sDp,
                                           int ta, int tb, int c0, float la, float lb, int qq,
                                           float (*oacc)[4] = nullptr, float ea = 1.0f, float eb = 1.0f)
{
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
        if (oacc)
            oacc[ni][0] *= ea, oacc[ni][1] *= ea, oacc[ni][2] *= eb, oacc[ni][3] *= eb;
    }
}

/* acc1 += A1 S^T and acc2 += A2 S^T in one k loop over dk (w4's W S^T and Q S^T):
 * A operands [t][dk] at sA1, sA2 (rows 16 rb.., swizzled), B the state stored
 * [n = value column][k = dk] at s16 (ldmatrix), slice columns c0.. */
template <class C>
__device__ __forceinline__ void pair_times_state(float (&acc1)[C::NT][4], float (&acc2)[C::NT][4], uint32_t sA1,
                                                 uint32_t sA2, uint32_t s16, int rb, int c0, int lane)
{
#pragma unroll
    for (int ks = 0; ks < DK / 16; ks++) {
        uint32_t a1[4], a2[4], b[C::NT / 2][4];
        const uint32_t at = q35_swz_rows<DK / 8>(16 * rb + lane % 16, 2 * ks + lane / 16);
        q35_ldsm_x4(a1, sA1 + at);
        q35_ldsm_x4(a2, sA2 + at);
#pragma unroll
        for (int nb = 0; nb < C::NT / 2; nb++)
            q35_ldsm_x4(b[nb], s16 + q35_swz_rows<DK / 8>(c0 + 16 * nb + lane % 8 + lane / 16 * 8, 2 * ks + (lane / 8) % 2));
#pragma unroll
        for (int nb = 0; nb < C::NT / 2; nb++) {
            q35_mma16816(acc1[2 * nb], a1, b[nb][0], b[nb][1]);
            q35_mma16816(acc1[2 * nb + 1], a1, b[nb][2], b[nb][3]);
            q35_mma16816(acc2[2 * nb], a2, b[nb][0], b[nb][1]);
            q35_mma16816(acc2[2 * nb + 1], a2, b[nb][2], b[nb][3]);
        }
    }
}

/* acc += L B over the blocks at or left of the diagonal of row block rb: A
 * operand L [t][s] (f16 [64][64], swizzled) at sL, B operand stored [k = s][n =
 * column] (f16 [64][SW], swizzled) at sB (ldmatrix.trans), slice columns c0.. */
template <class C>
__device__ __forceinline__ void lower_times(float (&acc)[C::NT][4], uint32_t sL, uint32_t sB, int rb, int c0, int lane)
{
#pragma unroll
    for (int ks = 0; ks < CH / 16; ks++) {
        if (ks > rb)
            break;
        uint32_t a[4];
        q35_ldsm_x4(a, sL + q35_swz_rows<CH / 8>(16 * rb + lane % 16, 2 * ks + lane / 16));
#pragma unroll
        for (int nb = 0; nb < C::NT / 2; nb++) {
            uint32_t b[4];
            q35_ldsm_x4_trans(b, sB + q35_swz_rows<C::NS>(16 * ks + lane % 8 + (lane / 8) % 2 * 8,
                                                           (c0 + 16 * nb) / 8 + lane / 16));
            q35_mma16816(acc[2 * nb], a, b[0], b[1]);
            q35_mma16816(acc[2 * nb + 1], a, b[2], b[3]);
        }
    }
}

/* O += P D: P [t][s] from the stage at sb, D at sD (lower_times). */
template <class C>
__device__ __forceinline__ void add_pd(float (&oacc)[C::NT][4], uint32_t sb, uint32_t sD, int rb, int c0, int lane)
{
    lower_times<C>(oacc, sb + C::OFF_P, sD, rb, c0, lane);
}

/* O's rows ta, tb of chunk c (those below T), scaled by 1/sqrt(dk), to o: value
 * head j, slice sl, columns c0 + 8 ni + 2 q. */
template <class C>
__device__ __forceinline__ void store_o(float *o, int64_t o_stride, const float (&oacc)[C::NT][4], int64_t c,
                                        int64_t T, int j, int sl, int dv, int c0, int ta, int tb, int qq)
{
    const int64_t t0 = c * CH;
    float *oc = o + (int64_t)j * dv + (int64_t)sl * C::SW + c0 + 2 * qq;
#pragma unroll
    for (int ni = 0; ni < C::NT; ni++) {
        if (t0 + ta < T)
            *reinterpret_cast<float2 *>(oc + (t0 + ta) * o_stride + 8 * ni) =
                make_float2(oacc[ni][0] * SCALE, oacc[ni][1] * SCALE);
        if (t0 + tb < T)
            *reinterpret_cast<float2 *>(oc + (t0 + tb) * o_stride + 8 * ni) =
                make_float2(oacc[ni][2] * SCALE, oacc[ni][3] * SCALE);
    }
}

/* S = e^{G_last} S + (e^{G_last - G} D)^T K: A operand that D stored [k = s]
 * [m = value column] at sDp (ldmatrix.trans), B operand K stored [k = s][n =
 * dk] in the stage at sb (ldmatrix.trans), warp w the key columns KW w.. */
template <class C>
__device__ __forceinline__ void update_state(float (&st)[C::MT][C::NK][4], uint32_t sb, uint32_t sDp, float el,
                                             int warp, int lane)
{
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
    state_in<C>(st, Sj, warp, gq, qq);
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
        pair_times_state<C>(dacc, oacc, sb + C::OFF_W, sb + C::OFF_Q, s16, rb, c0, lane);
        /* D = U - W S^T, and e^{G_last - G} D, to shared memory; e^G Q S^T */
        const float Glast = q35_ld_shared_f32(sb + C::OFF_G + (CH - 1) * 4);
        const float Ga = q35_ld_shared_f32(sb + C::OFF_G + ta * 4), Gb = q35_ld_shared_f32(sb + C::OFF_G + tb * 4);
        const float ea = expf(Ga), eb = expf(Gb), la = expf(Glast - Ga), lb = expf(Glast - Gb);
        put_deltas<C>(dacc, sb, sD, sDp, ta, tb, c0, la, lb, qq, oacc, ea, eb);
        __syncthreads(); /* every warp's D rows */

        /* O += P D (P's blocks at or left of the diagonal), to o; then the state */
        add_pd<C>(oacc, sb, sD, rb, c0, lane);
        store_o<C>(o, o_stride, oacc, c, T, j, sl, dv, c0, ta, tb, qq);
        const float el = expf(Glast);
        update_state<C>(st, sb, sDp, el, warp, lane);
        put_state<C>(s16n, st, warp, lane);
        if (STAGES == 1 && c + 1 < nc) {
            __syncthreads(); /* every read of the stage is done */
            load_stage<C>(base, c + 1, j, kh, sl, hk, hv, dv, W, U, P, G, Q, K);
        }
    }
    state_out<C>(Sj, st, warp, gq, qq);
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

typedef int (*state_launcher)(int optin, float *o, int64_t o_stride, float *S, int64_t T, q35_delta_dims d,
                              const __half *W, const __half *U, const __half *P, const float *G, const __half *Q,
                              const __half *K, q35_stream stream, q35_error *err);

/* Both passes of a variant of another formulation (its own parallel pass), on
 * the workspace's arrays as it uses them. */
typedef int (*pass_runner)(int optin, float *o, int64_t o_stride, float *S, const float *q, const float *k,
                           const float *v, int64_t stride, const float *g, const float *beta, int64_t T,
                           q35_delta_dims d, __half *W, __half *U, __half *P, float *G, __half *Q, __half *K,
                           q35_stream stream, q35_error *err);

/* A variant's entry (q35_variant.impl): its state pass after the shared
 * parallel pass (or, run set, both passes its own: tb4's formulation, which
 * also takes q and k as f16 from the workspace, q35_delta_chunk_qk16), the
 * value columns a block (dv must be a multiple), its shared memory with one
 * stage (the least it runs with), its family (q35_delta_chunk_variant_family: 0
 * the formulation of kernels/delta_chunk.h's two launches), and, where the
 * device decides more than shared memory does, whether device `device` runs it
 * (1; else 0 and why: tb4w needs sm_90a). */
struct variant_impl {
    state_launcher state;
    int cols;
    int smem;
    pass_runner run;
    int family;
    int (*runs_on)(int device, q35_error *why);
};

template <int WARPS, int SW>
constexpr variant_impl make_variant()
{
    return {launch_state<WARPS, SW>, SW, state_cfg<WARPS, SW>::smem(1), nullptr, 0};
}

} /* namespace q35_delta_chunk_kernels */

/* The experiment variants (kernels/experiments/delta_chunk.cu), where the
 * program links them, and the production sm_90a ones (kernels/
 * delta_chunk_sm90.cu, in q35_kernels_sm90; kernels/variant.h). */
extern "C" const q35_variant_table q35_delta_chunk_experiments;
extern "C" const q35_variant_table q35_delta_chunk_sm90_variants;

#endif /* Q35_KERNELS_DELTA_CHUNK_CUH */
