/* The experiment tb4o4 (kernels/experiments/delta_chunk.cu): tb4's state pass
 * (kernels/delta_chunk_tb.cuh) split by role as w4o4 splits w4's. No faster
 * than tb4 (bench/results/index.tsv, family kernels), so not the model's. */
#ifndef Q35_KERNELS_EXPERIMENTS_DELTA_CHUNK_TB_SPLIT_CUH
#define Q35_KERNELS_EXPERIMENTS_DELTA_CHUNK_TB_SPLIT_CUH

#include "kernels/delta_chunk_tb.cuh"
#include "kernels/experiments/delta_chunk_split.cuh"

namespace q35_delta_chunk_kernels {

/* tb4o4: tb4's state pass split by role as w4o4 splits w4's
 * (kernels/experiments/delta_chunk_split.cuh, its handoffs and buffers): the
 * state warps 0..3 per chunk c: K S_c^T, X, D = (T beta) X, D and e^{G_last -
 * G} D to shared memory, the state update, S_{c+1} to the next of three
 * buffers; the output warps 4..7 a chunk behind: O = e^G Q S_c^T + P D_c
 * (output_warps). The same products in the same order as tb4: bitwise tb4.
 * The chain from one chunk's state to the next: ~80 of a warp's mma (tb4's
 * ~128). */
__global__ void __launch_bounds__(split_cfg::THREADS, 1)
    q35_delta_chunk_state_tb_split(float *o, int64_t o_stride, float *S, const float *v, int64_t stride, int64_t T,
                                   int hk, int hv, int dv, const __half *TB, const __half *P, const float *G,
                                   const __half *Q, const __half *K)
{
    using X = split_cfg;
    using Y = tb_cfg;
    using C = X::C;
    extern __shared__ __align__(16) unsigned char smem[];
    const split_at at = split_where(smem, T, hk);
    if (at.warp >= 4) {
        output_warps(o, o_stride, at, T, dv);
        return;
    }

    /* ---- the state warps: X, D, the state ---- */
    const uint32_t base = at.base, sDp = base + X::OFF_DP;
    const int rb = at.rb, ta = at.ta, tb = at.tb, qq = at.qq, lane = at.lane, warp = at.warp;
    float *Sj = S + ((size_t)at.j * dv + (size_t)at.sl * C::SW) * DK;
    float st[C::MT][C::NK][4]; /* S[value column 16 mi + g (+8)][key KW w + 8 ni + 2 q (+1)] */
    state_in<C>(st, Sj, warp, at.gq, qq);
    put_state<C>(base + X::OFF_S, st, warp, lane);
    load_stage_tb(base, 0, T, at.j, at.kh, at.sl, hk, hv, dv, v, stride, TB, P, G, Q, K);
#pragma unroll 1
    for (int64_t c = 0; c < at.nc; c++) {
        const uint32_t sb = base + (uint32_t)(c & 1) * C::STAGE_BYTES;
        const uint32_t sD = base + X::OFF_D + (uint32_t)(c & 1) * C::D_BYTES;
        split_chunk_top(c);
        if (c + 1 < at.nc)
            load_stage_tb(base + (uint32_t)((c + 1) & 1) * C::STAGE_BYTES, c + 1, T, at.j, at.kh, at.sl, hk, hv, dv, v,
                          stride, TB, P, G, Q, K);
        float sk[C::NT][4] = {};
        tile_times_state<C>(sk, sb + C::OFF_K, base + X::OFF_S + (uint32_t)(c % 3) * C::S16_BYTES, rb, lane);
        const float Glast = q35_ld_shared_f32(sb + C::OFF_G + (CH - 1) * 4);
        const float Ga = q35_ld_shared_f32(sb + C::OFF_G + ta * 4), Gb = q35_ld_shared_f32(sb + C::OFF_G + tb * 4);
        put_x(sk, sb, ta, tb, qq, expf(Ga), expf(Gb));
        q35_bar_sync(X::BAR_STATE, 128); /* every state warp's X rows */
        float dacc[C::NT][4] = {};
        lower_times<C>(dacc, sb + Y::OFF_T, sb + Y::OFF_X, rb, 0, lane);
        put_d(dacc, sD, sDp, ta, tb, qq, expf(Glast - Ga), expf(Glast - Gb));
        q35_bar_arrive(X::BAR_D_READY + (int)(c & 1), X::THREADS); /* D_c (and the stage) to the output warps */
        q35_bar_sync(X::BAR_STATE, 128);                          /* every state warp's e^{G_last - G} D rows */
        update_state<C>(st, sb, sDp, expf(Glast), warp, lane);
        /* S_{c+1}: seen, and sDp's reads done, at the next chunk's STATE barrier */
        put_state<C>(base + X::OFF_S + (uint32_t)((c + 1) % 3) * C::S16_BYTES, st, warp, lane);
    }
    state_out<C>(Sj, st, warp, at.gq, qq);
}

/* tb4o4's both passes (variant_impl's run). */
inline int run_tb_split(int optin, float *o, int64_t o_stride, float *S, const float *q, const float *k,
                        const float *v, int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d,
                        __half *W, __half *U, __half *P, float *G, __half *Q, __half *K, q35_stream stream,
                        q35_error *err)
{
    (void)U;
    return run_tb_with(prep_tb4(d), q35_delta_chunk_state_tb_split, split_cfg::THREADS, split_cfg::SMEM,
                       "q35_delta_chunk_state_tb_split", optin, o, o_stride, S, q, k, v, stride, g, beta, T, d, W, P,
                       G, Q, K, stream, err);
}

} /* namespace q35_delta_chunk_kernels */

#endif /* Q35_KERNELS_EXPERIMENTS_DELTA_CHUNK_TB_SPLIT_CUH */
