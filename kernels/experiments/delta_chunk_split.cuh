/* The experiment w4o4 (kernels/experiments/delta_chunk.cu): the chunked delta
 * rule's state pass with its work split by role, to shorten the sequential
 * chain (kernels/delta_chunk.cuh has the production w4 it restates).
 *
 * w4 runs, per chunk and in each of its 4 warps, D = U - W S^T and Q S^T in
 * one k loop, then O += P D and O's stores, then the state update: the O
 * products (Q S^T, P D: ~48 of a warp's ~112 mma a chunk) and the stores lie
 * on the chain from one chunk's state to the next though nothing of the chain
 * reads them. w4o4 gives them to 4 more warps:
 *
 *   state warps 0..3   (w4's rows 16 w, every slice column; key columns 32 w of
 *                      the state) per chunk c: D = U - W S_c^T, D and
 *                      e^{G_last - G} D to shared memory, the state update, S_{c+1}
 *                      as f16 to the next of three buffers; they issue the
 *                      stage copies (cp.async) as w4 does.
 *   output warps 4..7  (rows 16 (w - 4)) per chunk c, a chunk behind at most:
 *                      O = e^G Q S_c^T + P D_c from the stage's Q, P, G, the
 *                      S_c buffer and D_c, stored to o.
 *
 * The same products in the same order as w4 (each accumulator's k steps
 * ascending, O's e^G scaling between its two sums), so bitwise w4.
 *
 * Handoffs (named barriers, 256 threads: 128 arrive, 128 sync):
 *   D_READY + (c & 1): the state warps arrive once D_c is stored (after their
 *                      cp.async wait and barrier for chunk c, so the stage's Q,
 *                      P, G are in place too); the output warps sync there.
 *   O_DONE + (c & 1):  the output warps arrive once chunk c's reads are done;
 *                      the state warps sync on chunk c - 1's at the top of chunk
 *                      c, before they copy chunk c + 1 into stage (c + 1) & 1
 *                      (chunk c - 1's) and, later in the chunk, write D_c's
 *                      buffer (chunk c - 2's) and S_{c+1}'s (chunk c - 2's).
 * STATE (128 threads) orders the state warps among themselves.
 * Shared memory: two stages as w4's, D x 2 (one a parity), e^{G_last - G} D, the
 * state as f16 x 3 (S_c read by the output warps while S_{c+1} is written). */
#ifndef Q35_KERNELS_EXPERIMENTS_DELTA_CHUNK_SPLIT_CUH
#define Q35_KERNELS_EXPERIMENTS_DELTA_CHUNK_SPLIT_CUH

#include "kernels/delta_chunk.cuh"

namespace q35_delta_chunk_kernels {

struct split_cfg {
    using C = state_cfg<4, 32>; /* the state warps' tiles and the stage: w4's */
    static constexpr int THREADS = 256, BAR_STATE = 1, BAR_D_READY = 2, BAR_O_DONE = 4;
    static constexpr int OFF_D = 2 * C::STAGE_BYTES, OFF_DP = OFF_D + 2 * C::D_BYTES, OFF_S = OFF_DP + C::D_BYTES;
    static constexpr int SMEM = OFF_S + 3 * C::S16_BYTES;
};

/* acc = A S^T over dk: A operand a chunk's tile [t][dk] at sA (rows 16 rb..), B
 * the state stored [n = value column][k = dk] at s16 (ldmatrix), k ascending:
 * w4's product of W or Q with the state, for one of the two. */
template <class C>
__device__ __forceinline__ void tile_times_state(float (&acc)[C::NT][4], uint32_t sA, uint32_t s16, int rb, int lane)
{
#pragma unroll
    for (int ks = 0; ks < DK / 16; ks++) {
        uint32_t a[4], b[C::NT / 2][4];
        q35_ldsm_x4(a, sA + q35_swz_rows<DK / 8>(16 * rb + lane % 16, 2 * ks + lane / 16));
#pragma unroll
        for (int nb = 0; nb < C::NT / 2; nb++)
            q35_ldsm_x4(b[nb], s16 + q35_swz_rows<DK / 8>(16 * nb + lane % 8 + lane / 16 * 8, 2 * ks + (lane / 8) % 2));
#pragma unroll
        for (int nb = 0; nb < C::NT / 2; nb++) {
            q35_mma16816(acc[2 * nb], a, b[nb][0], b[nb][1]);
            q35_mma16816(acc[2 * nb + 1], a, b[nb][2], b[nb][3]);
        }
    }
}

/* Where a split state pass's thread is: value head j (key head kh), slice sl,
 * warp and lane, the warp's chunk rows 16 rb .. (both roles) and this thread's
 * two of them (ta, tb), the chunks, shared memory's address. */
struct split_at {
    int j, sl, kh, warp, lane, gq, qq, rb, ta, tb;
    int64_t nc;
    uint32_t base;
};

__device__ __forceinline__ split_at split_where(unsigned char *smem, int64_t T, int hk)
{
    split_at a;
    a.j = blockIdx.x, a.sl = blockIdx.y, a.kh = a.j % hk;
    a.warp = threadIdx.x / 32, a.lane = threadIdx.x % 32, a.gq = a.lane / 4, a.qq = a.lane % 4;
    a.rb = a.warp % 4, a.ta = 16 * a.rb + a.gq, a.tb = a.ta + 8;
    a.nc = (T + CH - 1) / CH;
    a.base = (uint32_t)__cvta_generic_to_shared(smem);
    return a;
}

/* The state warps' top of chunk c: chunk c - 1 done by the output warps (its
 * stage, and chunk c - 2's D and S buffers, free), then this thread's copies
 * landed and every state warp past here (the stage, and S_c in its buffer). */
__device__ __forceinline__ void split_chunk_top(int64_t c)
{
    if (c >= 1)
        q35_bar_sync(split_cfg::BAR_O_DONE + (int)((c - 1) & 1), split_cfg::THREADS);
    q35_cp_async_wait<0>();
    q35_bar_sync(split_cfg::BAR_STATE, 128);
}

/* The output warps (4..7) of a split state pass, chunk by chunk: O = e^G Q S_c^T
 * + P D_c from the stage's Q, P, G, the state buffer c % 3 and D_c, stored to
 * o; D_READY + (c & 1) waited for, O_DONE + (c & 1) arrived at (but for the
 * last chunk). Rows 16 rb.. (ta, tb this thread's), every slice column. */
__device__ __forceinline__ void output_warps(float *o, int64_t o_stride, const split_at &at, int64_t T, int dv)
{
    using X = split_cfg;
    using C = X::C;
    const uint32_t base = at.base;
    const int64_t nc = at.nc;
    const int j = at.j, sl = at.sl, rb = at.rb, ta = at.ta, tb = at.tb, qq = at.qq, lane = at.lane;
#pragma unroll 1
    for (int64_t c = 0; c < nc; c++) {
        const uint32_t sb = base + (uint32_t)(c & 1) * C::STAGE_BYTES;
        const uint32_t sD = base + X::OFF_D + (uint32_t)(c & 1) * C::D_BYTES;
        q35_bar_sync(X::BAR_D_READY + (int)(c & 1), X::THREADS);
        float oacc[C::NT][4] = {};
        tile_times_state<C>(oacc, sb + C::OFF_Q, base + X::OFF_S + (uint32_t)(c % 3) * C::S16_BYTES, rb, lane);
        const float ea = expf(q35_ld_shared_f32(sb + C::OFF_G + ta * 4)),
                    eb = expf(q35_ld_shared_f32(sb + C::OFF_G + tb * 4));
#pragma unroll
        for (int ni = 0; ni < C::NT; ni++)
            oacc[ni][0] *= ea, oacc[ni][1] *= ea, oacc[ni][2] *= eb, oacc[ni][3] *= eb;
        add_pd<C>(oacc, sb, sD, rb, 0, lane);
        if (c + 2 <= nc) /* chunk c's buffers free (the state warps wait for it unless c is the last) */
            q35_bar_arrive(X::BAR_O_DONE + (int)(c & 1), X::THREADS);
        store_o<C>(o, o_stride, oacc, c, T, j, sl, dv, 0, ta, tb, qq);
    }
}

__global__ void __launch_bounds__(split_cfg::THREADS, 1)
    q35_delta_chunk_state_split(float *o, int64_t o_stride, float *S, int64_t T, int hk, int hv, int dv,
                                const __half *W, const __half *U, const __half *P, const float *G, const __half *Q,
                                const __half *K)
{
    using X = split_cfg;
    using C = X::C;
    extern __shared__ __align__(16) unsigned char smem[];
    const split_at at = split_where(smem, T, hk);
    if (at.warp >= 4) {
        output_warps(o, o_stride, at, T, dv);
        return;
    }
    const int j = at.j, sl = at.sl, kh = at.kh, warp = at.warp, lane = at.lane, gq = at.gq, qq = at.qq, rb = at.rb;
    const int ta = at.ta, tb = at.tb;
    const int64_t nc = at.nc;
    const uint32_t base = at.base, sDp = base + X::OFF_DP;
    float *Sj = S + ((size_t)j * dv + (size_t)sl * C::SW) * DK;

    /* ---- the state warps: D, the state ---- */
    float st[C::MT][C::NK][4]; /* S[value column 16 mi + g (+8)][key KW w + 8 ni + 2 q (+1)] */
    state_in<C>(st, Sj, warp, gq, qq);
    put_state<C>(base + X::OFF_S, st, warp, lane);
    load_stage<C>(base, 0, j, kh, sl, hk, hv, dv, W, U, P, G, Q, K);
#pragma unroll 1
    for (int64_t c = 0; c < nc; c++) {
        const uint32_t sb = base + (uint32_t)(c & 1) * C::STAGE_BYTES;
        const uint32_t sD = base + X::OFF_D + (uint32_t)(c & 1) * C::D_BYTES;
        split_chunk_top(c);
        if (c + 1 < nc)
            load_stage<C>(base + (uint32_t)((c + 1) & 1) * C::STAGE_BYTES, c + 1, j, kh, sl, hk, hv, dv, W, U, P, G,
                          Q, K);
        float dacc[C::NT][4] = {};
        tile_times_state<C>(dacc, sb + C::OFF_W, base + X::OFF_S + (uint32_t)(c % 3) * C::S16_BYTES, rb, lane);
        const float Glast = q35_ld_shared_f32(sb + C::OFF_G + (CH - 1) * 4);
        const float Ga = q35_ld_shared_f32(sb + C::OFF_G + ta * 4), Gb = q35_ld_shared_f32(sb + C::OFF_G + tb * 4);
        put_deltas<C>(dacc, sb, sD, sDp, ta, tb, 0, expf(Glast - Ga), expf(Glast - Gb), qq);
        q35_bar_arrive(X::BAR_D_READY + (int)(c & 1), X::THREADS); /* D_c (and the stage) to the output warps */
        q35_bar_sync(X::BAR_STATE, 128);                          /* every state warp's e^{G_last - G} D rows */
        update_state<C>(st, sb, sDp, expf(Glast), warp, lane);
        /* S_{c+1}: seen, and sDp's reads done, at the next chunk's STATE barrier */
        put_state<C>(base + X::OFF_S + (uint32_t)((c + 1) % 3) * C::S16_BYTES, st, warp, lane);
    }
    state_out<C>(Sj, st, warp, gq, qq);
}

/* The launch (state_launcher's form): two stages, 256 threads, one block per (value head, 32 columns). */
inline int launch_state_split(int optin, float *o, int64_t o_stride, float *S, int64_t T, q35_delta_dims d,
                              const __half *W, const __half *U, const __half *P, const float *G, const __half *Q,
                              const __half *K, q35_stream stream, q35_error *err)
{
    using X = split_cfg;
    if (X::SMEM > optin)
        return q35_fail(err, "delta_chunk w4o4: needs %d bytes of shared memory a block, the device allows %d",
                        X::SMEM, optin);
    if (Q35_CUDA_CHECK(cudaFuncSetAttribute(q35_delta_chunk_state_split, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            X::SMEM),
                       err))
        return -1;
    const dim3 grid((unsigned)d.hv, (unsigned)(d.dv / X::C::SW));
    q35_delta_chunk_state_split<<<grid, X::THREADS, X::SMEM, (cudaStream_t)stream>>>(o, o_stride, S, T, d.hk, d.hv,
                                                                                      d.dv, W, U, P, G, Q, K);
    return Q35_LAUNCH_CHECK("q35_delta_chunk_state_split", err);
}

} /* namespace q35_delta_chunk_kernels */

#endif /* Q35_KERNELS_EXPERIMENTS_DELTA_CHUNK_SPLIT_CUH */
