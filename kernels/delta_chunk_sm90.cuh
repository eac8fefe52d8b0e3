/* The chunked delta rule's state pass on wgmma, for sm_90a: tb4's formulation
 * (kernels/delta_chunk_tb.cuh) with its state pass one warp group's wgmma.
 * tb4wtkh and the multicast tb4wm2kh (the default on sm_90) run it,
 * production (kernels/delta_chunk_sm90.cu, in q35_kernels_sm90), and the
 * experiments tb4w, tb4wt, tb4wmkh and tb4wpkh (kernels/experiments/
 * delta_chunk_sm90.cu). This header holds the kernels, their chunk (w_chunk,
 * which the multicast kernel shares), its shared memory and device pieces
 * (descriptors by their two words, the transposed fragment stores; the sm_90a
 * probes run the same, parity/kernels/sm90_probe.cu), the tensor maps and the
 * launch. Its own family (2): the same products, the same f16 roundings in the
 * same places as tb4, but wgmma's accumulation is not promised to be mma.sync's,
 * and D = (T beta) X and P D are computed whole (their zero blocks above the
 * diagonal included), so it is held to the float64 bound, tb4 its oracle.
 *
 * Why. tb4's state pass is one warp a scheduler, bound by the instructions it
 * issues: 128 mma.sync, 72 ldmatrix and the integer instructions forming their
 * addresses a chunk. On wgmma the block is one warp group whose products read
 * their operands from shared memory through descriptors: 32 wgmma a chunk
 * (8 + 8 + 4 + 4 + 8 below) and no ldmatrix, a much shorter stream. It is
 * faster than tb4's, by less than the shorter stream alone would give: the
 * stage's tiles, re-read through L2 by each of a head's four blocks, bound it
 * (the multicast kernels' reason, below; bench/results/index.tsv, family
 * kernels).
 *
 * One block of 128 threads (a warp group) per (value head j, 32 value columns
 * sl), the chunks in order; the state slice S [32 v][128 dk] held transposed,
 * S^T [128 dk][32 v], as two m64n32 accumulators (dk halves), and as f16 [v][dk]
 * in shared memory (S16) for the next chunk's products. Per chunk c:
 *
 *   1  SK = K S^T        A = K [t][dk] (K-major), B = S16 [v][dk] (K-major)  8 wgmma
 *   2  QS = Q S^T        A = Q                                               8
 *      X = V - e^G SK    f16, stored transposed, X^T [v][s] (stmatrix.trans)
 *   3  D = (T beta) X    A = T beta [t][s], B = X^T                          4
 *      D, e^{G_last - G} D stored transposed, D^T and Dp^T [v][s]
 *   4  O = e^G QS + P D  A = P [t][s], B = D^T                               4
 *   5  S^T = e^{G_last} S^T + K^T Dp  A = K read MN-major ([s][dk]: dk, the
 *                        M index, contiguous; tnspA), B = Dp^T, a dk half    2 x 4
 *      O (times 1/sqrt(dk)) to o; S16 from S^T (stmatrix.trans)
 *
 * Operands live in 128-byte-swizzled boxes of 64 f16 columns (kernels/sm90.cuh,
 * q35_sw128; 1024-byte aligned); the stage's tiles are copied by cp.async from
 * the workspace (written by tb4's parallel pass) into that layout, then made
 * visible to the async proxy (fence.proxy.async) before the barrier. Stage (two,
 * the next chunk's copies under this one's products): K, Q 2 boxes each, P and
 * T beta one, V's slice f32 [64][32] (tb4's swizzle of 16-byte chunks), G [64];
 * then X^T, D^T, Dp^T ([32][64] boxes) and S16 (2 [32][64] boxes). Rows past T:
 * K, Q zero in the workspace, V zero-filled in the stage, T beta's columns past
 * T zero (tb4's argument), O's stores skipped.
 *
 * tb4wt: the same kernel (TMA true) with each stage brought by TMA, thread 0
 * issuing 8 boxes on the stage's mbarrier after the chunk's first barrier (the
 * stage it refills was last read by the chunk before), the rest waiting on the
 * mbarrier where tb4w's threads wait for their cp.async groups; the address
 * and copy instructions a warp spends on the loads in tb4w gone. The same
 * boxes in the same layouts (TMA's 128-byte swizzle is q35_sw128), so bitwise
 * tb4w; the suite's family check holds it. tb4wtkh: tb4wt after tb4kh's
 * parallel pass (by key head; bitwise tb4's; kernels/delta_chunk_tb_kh.cuh),
 * faster than tb4 (bench/results/index.tsv, family kernels). */
#ifndef Q35_KERNELS_DELTA_CHUNK_SM90_CUH
#define Q35_KERNELS_DELTA_CHUNK_SM90_CUH

#include "kernels/delta_chunk_tb.cuh"
#include "kernels/cluster_launch.cuh"
#include "kernels/delta_chunk_tb_kh.cuh"
#include "kernels/sm90.cuh"
#include "kernels/tma.h"

#include <string.h>

namespace q35_delta_chunk_kernels {

/* K read MN-major (the state update's A): the descriptor's LBO (between 64-wide
 * M blocks: one block here, so unused in principle) and SBO (between 8-row K
 * atoms), in the order the flash kernel's V confirmed for an MN-major B
 * (kernels/attention_flash_sm90.cuh); test_kernels_sm90's n32 probe tries both
 * orders for A and says which the hardware takes. */
#ifndef Q35_TBW_MN_LBO
#define Q35_TBW_MN_LBO 8192u
#endif
#ifndef Q35_TBW_MN_SBO
#define Q35_TBW_MN_SBO 1024u
#endif

/* The state pass's shared memory: NS stages (tb4w, tb4wt: 2) of K, Q (two
 * [64][64] f16 boxes each), P, T beta (one), V's slice [64][32] f32 and G [64];
 * then X^T, D^T, Dp^T ([32][64] boxes) and S16 (two), two mbarriers a stage
 * (full, empty: the TMA variants'); the base aligned up to 1024 bytes. */
template <int NS>
struct w_cfg_n {
    static constexpr int BOX = 64 * 128; /* a [64][64] f16 box */
    static constexpr int OFF_K = 0, OFF_Q = 2 * BOX, OFF_P = 4 * BOX, OFF_T = 5 * BOX, OFF_V = 6 * BOX; /* K, Q adjacent */
    static constexpr int OFF_G = OFF_V + CH * 32 * 4;
    static constexpr int STAGE = (OFF_G + CH * 4 + 1023) / 1024 * 1024;
    static constexpr int SBOX = 32 * 128; /* a [32][64] f16 box: X^T, D^T, Dp^T, half of S16 */
    static constexpr int OFF_XT = NS * STAGE, OFF_DT = OFF_XT + SBOX, OFF_DPT = OFF_DT + SBOX, OFF_S = OFF_DPT + SBOX;
    static constexpr int OFF_BAR = OFF_S + 2 * SBOX; /* stage s's full barrier at + 8 s, its empty at + 8 (NS + s) */
    static constexpr int BYTES = OFF_BAR + 16 * NS;
    static constexpr int SMEM = BYTES + 1024;
    /* the bytes TMA brings a stage (every box whole: V's rows past T are its zeros) */
    static constexpr int TX_BYTES = 4 * BOX + 2 * BOX + CH * 32 * 4 + CH * 4;
};
using w_cfg = w_cfg_n<2>;

/* tb4wt's tensor maps (kernels/tma.h), each read in the boxes the stage
 * holds: K and Q [chunk][Hk][64][128] f16 (two [64][64] boxes a tile), P and T
 * beta [chunk][Hv][64][64] f16, V [T][Hv dv] f32 at its stride ([64][32] boxes:
 * a slice), G [chunk][Hv][64] f32 (a row of 64). */
struct w_maps {
    q35_tma_map k, q, p, t, v, g;
};

#ifdef Q35_SM90A_CODE

/* A wgmma descriptor (q35_gmma_desc's fields) as its two words: lo the start
 * address >> 4 (bits 0-13) and the leading byte offset >> 4 (16-29), hi the
 * stride byte offset >> 4 and the 128-byte swizzle. An operand's descriptor is
 * its tile's lo plus (byte offset >> 4): the address field never carries (a
 * block's shared memory is under 2^18 bytes), so one 32-bit add a wgmma where
 * q35_gmma_desc's masks and shifts took ~8 uniform instructions. */
__device__ __forceinline__ uint32_t w_desc_lo(uint32_t addr, uint32_t lbo)
{
    return ((addr & 0x3FFFF) >> 4) | ((lbo >> 4) & 0x3FFF) << 16;
}

__device__ __forceinline__ uint64_t w_desc(uint32_t lo, uint32_t sbo)
{
    uint64_t d;
    asm("mov.b64 %0, {%1, %2};" : "=l"(d) : "r"(lo), "r"(((sbo >> 4) & 0x3FFF) | 1u << 30));
    return d;
}

/* An m64n32 accumulator's 8 fragments (rows 16 w + 8 h, n8 tile i: h = e / 2 of
 * its elements), rounded to f16 (scaled by sa for rows g, sb8 for rows g + 8),
 * stored transposed into the [32][64] box at box: stored row v = 8 i + r, its 8
 * values the accumulator rows 16 w + 8 h .. + 7 (column chunk 2 w + h of the
 * row). Two stmatrix.x4: tiles i = 0, 1, then 2, 3. */
__device__ __forceinline__ void w_store_t(uint32_t box, const float (&d)[16], float sa, float sb8, int warp, int lane)
{
    const int m = lane / 8, r = lane % 8; /* this lane's stored row r of matrix m of an x4 */
#pragma unroll
    for (int x = 0; x < 2; x++) {
        uint32_t f[4];
#pragma unroll
        for (int mm = 0; mm < 4; mm++) { /* matrix mm: tile i = 2 x + mm / 2, row half h = mm % 2 */
            const int i = 2 * x + mm / 2, h = mm % 2;
            const float s = h ? sb8 : sa;
            f[mm] = q35_pack_half2(d[4 * i + 2 * h] * s, d[4 * i + 2 * h + 1] * s);
        }
        const int i = 2 * x + m / 2, h = m % 2;
        q35_stsm_x4_trans(box + q35_sw128(8 * i + r, 16 * warp + 8 * h), f[0], f[1], f[2], f[3]);
    }
}

/* The same without scaling: stored values are the accumulator's rounded (a
 * product by 1, exact, which the compiler drops). */
__device__ __forceinline__ void w_store_t(uint32_t box, const float (&d)[16], int warp, int lane)
{
    w_store_t(box, d, 1.0f, 1.0f, warp, lane);
}

/* A [64][8 NC] f16 tile at src (row-major) into 64-column 128-byte-swizzled
 * boxes at dst (box b: columns 64 b ..), cp.async by the block's 128 threads: a
 * pass 128 / NC rows (a multiple of the swizzle's 8), so a thread's chunk
 * column and swizzle are the same every pass. */
template <int NC>
__device__ __forceinline__ void w_cp_tile(uint32_t dst, const __half *src, int tid)
{
    constexpr int PASS = 128 / NC;
    static_assert(PASS % 8 == 0 && CH % PASS == 0, "whole passes of whole 8-row swizzle periods");
    const int r0 = tid / NC, cc = tid % NC;
    const uint32_t d0 = (uint32_t)((cc / 8) * w_cfg::BOX + r0 * 128 + (((cc % 8) ^ (r0 % 8)) << 4));
    const char *s = reinterpret_cast<const char *>(src) + tid * 16;
#pragma unroll
    for (int i = 0; i < CH / PASS; i++)
        q35_cp_async16(dst + d0 + i * PASS * 128, s + i * 2048, 16);
}

/* Chunk c's tiles into the stage at sb (cp.async, one group): K, Q [64][128]
 * (two boxes each, by dk half), P and T beta [64][64] (one box), V's slice sl
 * of value head j and G (tb4's). */
__device__ __forceinline__ void w_load_stage(uint32_t sb, int64_t c, int64_t T, int j, int kh, int sl, int hk, int hv,
                                             int dv, const float *v, int64_t stride, const __half *TB, const __half *P,
                                             const float *G, const __half *Q, const __half *K)
{
    using W = w_cfg;
    const int tid = threadIdx.x;
    w_cp_tile<DK / 8>(sb + W::OFF_K, K + ((size_t)c * hk + kh) * CH * DK, tid);
    w_cp_tile<DK / 8>(sb + W::OFF_Q, Q + ((size_t)c * hk + kh) * CH * DK, tid);
    w_cp_tile<CH / 8>(sb + W::OFF_P, P + ((size_t)c * hv + j) * CH * CH, tid);
    w_cp_tile<CH / 8>(sb + W::OFF_T, TB + ((size_t)c * hv + j) * CH * CH, tid);
    load_v_g(sb + W::OFF_V, sb + W::OFF_G, c, T, j, sl, hv, dv, v, stride, G, tid);
    q35_cp_async_commit();
}

/* Chunk c's tiles into the stage at sb by TMA (one thread), completing on the
 * stage's mbarrier bar, which expects the whole stage: the boxes w_load_stage's
 * cp.async make, in the same layouts (TMA's 128-byte swizzle is q35_sw128 and,
 * for V's 128-byte rows, tb4's XOR of 16-byte chunks), V's rows past T its
 * zeros. The six boxes a value head's blocks read alike (K, K, Q, Q by dk
 * half, P, T beta): in a cluster of cl blocks (tb4wmkh) this block, of rank
 * `rank`, brings boxes rank, rank + cl, .. into every block of the cluster
 * (multicast), the others the rest; alone (cl 1: tb4wt) all six. V's slice and
 * G are each block's own. The stage offsets are w_cfg_n's for any stage count. */
__device__ __forceinline__ void w_tma_stage(const w_maps &m, uint32_t sb, uint32_t bar, int64_t c, int j, int kh,
                                            int sl, int hk, int hv, int dv, int rank = 0, int cl = 1)
{
    using W = w_cfg;
    const int yk = (int)((c * hk + kh) * CH), yp = (int)((c * hv + j) * CH);
    const uint16_t mask = (uint16_t)((1u << cl) - 1);
    q35_mbar_arrive_expect_tx(bar, W::TX_BYTES);
#pragma unroll
    for (int i = rank; i < 6; i += cl) {
        const q35_tma_map *map = i < 2 ? &m.k : i < 4 ? &m.q : i == 4 ? &m.p : &m.t;
        const uint32_t at = sb + (i < 4 ? W::OFF_K + (uint32_t)i * W::BOX : i == 4 ? W::OFF_P : W::OFF_T);
        const int x = i < 4 ? 64 * (i % 2) : 0, y = i < 4 ? yk : yp;
        if (cl > 1)
            q35_tma_load_2d_mcast(at, map, bar, x, y, mask);
        else
            q35_tma_load_2d(at, map, bar, x, y);
    }
    q35_tma_load_2d(sb + W::OFF_V, &m.v, bar, j * dv + sl * 32, (int)(c * CH));
    q35_tma_load_2d(sb + W::OFF_G, &m.g, bar, 0, (int)(c * hv + j));
}

/* The state slice S^T [dk][v] between S (Sj: the block's slice) and st
 * (st[h]: the dk half h, accumulator row 16 warp + g (+8) = dk 64 h + ...,
 * column v): IN from S, else back to it. */
template <bool IN>
__device__ __forceinline__ void w_state_copy(float (&st)[2][16], float *Sj, int warp, int lane)
{
    const int gq = lane / 4, qq = lane % 4;
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int e = 0; e < 16; e++) {
            const int dk = 64 * h + 16 * warp + gq + 8 * ((e % 4) / 2), vc = 8 * (e / 4) + 2 * qq + e % 2;
            if (IN)
                st[h][e] = Sj[(size_t)vc * DK + dk];
            else
                Sj[(size_t)vc * DK + dk] = st[h][e];
        }
}

/* The state slice in from S, and as f16 to S16 at sS (two [32][64] boxes). */
__device__ __forceinline__ void w_state_in(float (&st)[2][16], float *Sj, uint32_t sS, int warp, int lane)
{
    w_state_copy<true>(st, Sj, warp, lane);
    w_store_t(sS, st[0], warp, lane);
    w_store_t(sS + w_cfg::SBOX, st[1], warp, lane);
}

/* Chunk c's products by the warp group (warps 0-3; named barrier 1 over its
 * 128 threads), its tiles in the stage at sb (landed, and S16 of the chunk
 * before seen by wgmma): O to o, the state st and S16 updated; release()
 * once the stage is read for the last time (the state update's wgmma done). */
template <int NS, class Release>
__device__ __forceinline__ void w_chunk(uint32_t base, uint32_t sb, float (&st)[2][16], float *o, int64_t o_stride,
                                        int64_t c, int64_t T, int j, int sl, int dv, Release release)
{
    using W = w_cfg_n<NS>;
    using C = tb_cfg::C; /* store_o's view: 32 columns, 4 n8 tiles */
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, gq = lane / 4, qq = lane % 4;
    const uint32_t sXT = base + W::OFF_XT, sDT = base + W::OFF_DT, sDPT = base + W::OFF_DPT, sS = base + W::OFF_S;
    const uint32_t lo_s = w_desc_lo(sS, 16), lo_x = w_desc_lo(sXT, 16), lo_d = w_desc_lo(sDT, 16),
                   lo_dp = w_desc_lo(sDPT, 16);
    const int ta = 16 * warp + gq, tb = ta + 8; /* this thread's chunk rows (the accumulators' rows g, g + 8) */
    /* the stage's operands' descriptors (K-major: LBO unused, SBO 1024 between 8-row atoms) */
    const uint32_t lo = w_desc_lo(sb, 16), lo_mn = w_desc_lo(sb, Q35_TBW_MN_LBO); /* lo_mn: K read MN-major */

    /* 1, 2: K S^T and Q S^T over dk (box h = dk half, 32 bytes a k16 step in it) */
    float sk[16], oacc[16];
    q35_wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < DK / 16; ks++) {
        const uint32_t at = (uint32_t)((ks / 4) * W::BOX + 32 * (ks % 4)) >> 4;
        const uint64_t db = w_desc(lo_s + ((uint32_t)((ks / 4) * W::SBOX + 32 * (ks % 4)) >> 4), 1024);
        q35_wgmma_ss_m64n32k16<0, 0>(sk, w_desc(lo + (W::OFF_K >> 4) + at, 1024), db, ks > 0);
        q35_wgmma_ss_m64n32k16<0, 0>(oacc, w_desc(lo + (W::OFF_Q >> 4) + at, 1024), db, ks > 0);
    }
    q35_wgmma_commit();
    q35_wgmma_wait<0>();
    q35_reg_fence(sk);
    q35_reg_fence(oacc);

    /* X = V - e^G K S^T, rounded to f16, to X^T; e^G Q S^T */
    const float Glast = q35_ld_shared_f32(sb + W::OFF_G + (CH - 1) * 4);
    const float Ga = q35_ld_shared_f32(sb + W::OFF_G + ta * 4), Gb = q35_ld_shared_f32(sb + W::OFF_G + tb * 4);
    const float ea = expf(Ga), eb = expf(Gb);
    {
        float x[16];
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int col = 8 * i + 2 * qq;
            const uint32_t va = sb + W::OFF_V + ta * 128 + (((col / 4) ^ (ta & 7)) << 4) + (col % 4) * 4;
            const uint32_t vb = sb + W::OFF_V + tb * 128 + (((col / 4) ^ (tb & 7)) << 4) + (col % 4) * 4;
            x[4 * i + 0] = __fmaf_rn(-ea, sk[4 * i + 0], q35_ld_shared_f32(va));
            x[4 * i + 1] = __fmaf_rn(-ea, sk[4 * i + 1], q35_ld_shared_f32(va + 4));
            x[4 * i + 2] = __fmaf_rn(-eb, sk[4 * i + 2], q35_ld_shared_f32(vb));
            x[4 * i + 3] = __fmaf_rn(-eb, sk[4 * i + 3], q35_ld_shared_f32(vb + 4));
        }
        w_store_t(sXT, x, warp, lane);
    }
#pragma unroll
    for (int i = 0; i < 4; i++)
        oacc[4 * i] *= ea, oacc[4 * i + 1] *= ea, oacc[4 * i + 2] *= eb, oacc[4 * i + 3] *= eb;
    q35_fence_proxy_async();
    q35_named_sync(1, 128); /* every warp's X^T rows */

    /* 3: D = (T beta) X, whole (T beta's blocks above the diagonal are zeros) */
    float dacc[16];
    q35_wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < CH / 16; ks++)
        q35_wgmma_ss_m64n32k16<0, 0>(dacc, w_desc(lo + ((W::OFF_T + 32 * ks) >> 4), 1024),
                                     w_desc(lo_x + ((32 * ks) >> 4), 1024), ks > 0);
    q35_wgmma_commit();
    q35_wgmma_wait<0>();
    q35_reg_fence(dacc);
    w_store_t(sDT, dacc, warp, lane);
    w_store_t(sDPT, dacc, expf(Glast - Ga), expf(Glast - Gb), warp, lane);
    q35_fence_proxy_async();
    q35_named_sync(1, 128); /* every warp's D^T and Dp^T rows */

    /* 4: O += P D; 5: S^T = e^{G_last} S^T + K^T Dp */
    const float el = expf(Glast);
#pragma unroll
    for (int h = 0; h < 2; h++)
#pragma unroll
        for (int e = 0; e < 16; e++)
            st[h][e] *= el;
    /* the scalings of S^T and O (above) done before the fence: wgmma reads them */
    q35_reg_fence(st[0]);
    q35_reg_fence(st[1]);
    q35_reg_fence(oacc);
    q35_wgmma_fence();
#pragma unroll
    for (int ks = 0; ks < CH / 16; ks++) {
        const uint64_t dp = w_desc(lo_dp + ((32 * ks) >> 4), 1024);
        q35_wgmma_ss_m64n32k16<0, 0>(oacc, w_desc(lo + ((W::OFF_P + 32 * ks) >> 4), 1024),
                                     w_desc(lo_d + ((32 * ks) >> 4), 1024), 1);
#pragma unroll
        for (int h = 0; h < 2; h++) /* A = K as stored, read MN-major: M = dk (box h), 16 rows s a k16 step */
            q35_wgmma_ss_m64n32k16<1, 0>(
                st[h], w_desc(lo_mn + ((W::OFF_K + h * W::BOX + 2048 * ks) >> 4), Q35_TBW_MN_SBO), dp, 1);
    }
    q35_wgmma_commit();
    q35_wgmma_wait<0>();
    q35_reg_fence(oacc);
    q35_reg_fence(st[0]);
    q35_reg_fence(st[1]);
    release(); /* the stage read for the last time */

    {
        float of[C::NT][4];
#pragma unroll
        for (int i = 0; i < 4; i++)
#pragma unroll
            for (int e = 0; e < 4; e++)
                of[i][e] = oacc[4 * i + e];
        store_o<C>(o, o_stride, of, c, T, j, sl, dv, 0, ta, tb, qq);
    }
    /* S16 for the next chunk (its readers, this chunk's products 1 and 2, are done) */
    w_store_t(sS, st[0], warp, lane);
    w_store_t(sS + W::SBOX, st[1], warp, lane);
}

/* TMA: the stages by TMA (tb4wt, maps), else by cp.async (tb4w). */
template <bool TMA>
static __global__ void __launch_bounds__(128, 1)
    q35_delta_chunk_state_tbw(float *o, int64_t o_stride, float *S, const float *v, int64_t stride, int64_t T, int hk,
                              int hv, int dv, const __half *TB, const __half *P, const float *G, const __half *Q,
                              const __half *K, const __grid_constant__ w_maps maps)
{
    using W = w_cfg;
    extern __shared__ __align__(16) unsigned char smem[];
    const uint32_t base = (q35_sm90_smem(smem) + 1023) & ~1023u; /* boxes 1024-byte aligned (w_cfg::SMEM's slack) */
    const int j = blockIdx.x, sl = blockIdx.y, kh = j % hk;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int64_t nc = (T + CH - 1) / CH;
    float *Sj = S + ((size_t)j * dv + (size_t)sl * 32) * DK;
    float st[2][16];
    w_state_in(st, Sj, base + W::OFF_S, warp, lane);
    const uint32_t bar = base + W::OFF_BAR; /* TMA: stage s's mbarrier at bar + 8 s */
    if (TMA) {
        if (tid == 0) {
            q35_mbar_init(bar, 1);
            q35_mbar_init(bar + 8, 1);
            q35_mbar_init_fence();
        }
        __syncthreads(); /* the barriers made before any wait on them */
        if (tid == 0)
            w_tma_stage(maps, base, bar, 0, j, kh, sl, hk, hv, dv);
    } else {
        w_load_stage(base, 0, T, j, kh, sl, hk, hv, dv, v, stride, TB, P, G, Q, K);
    }
#pragma unroll 1
    for (int64_t c = 0; c < nc; c++) {
        const uint32_t sb = base + (uint32_t)(c & 1) * W::STAGE, sn = base + (uint32_t)((c + 1) & 1) * W::STAGE;
        if (TMA) {
            q35_fence_proxy_async(); /* this thread's S16 stores seen by wgmma, its reads of the stage before TMA's */
            __syncthreads();         /* every warp done with chunk c - 1: its stage may be refilled */
            if (tid == 0 && c + 1 < nc)
                w_tma_stage(maps, sn, bar + 8 * (uint32_t)((c + 1) & 1), c + 1, j, kh, sl, hk, hv, dv);
            q35_mbar_wait(bar + 8 * (uint32_t)(c & 1), (uint32_t)((c >> 1) & 1));
        } else {
            q35_cp_async_wait<0>();
            q35_fence_proxy_async(); /* this thread's copies and S16 stores, seen by wgmma */
            __syncthreads();
            if (c + 1 < nc)
                w_load_stage(sn, c + 1, T, j, kh, sl, hk, hv, dv, v, stride, TB, P, G, Q, K);
        }
        w_chunk<2>(base, sb, st, o, o_stride, c, T, j, sl, dv, [] {});
    }
    w_state_copy<false>(st, Sj, warp, lane);
}

#else

template <bool TMA>
static __global__ void q35_delta_chunk_state_tbw(float *o, int64_t o_stride, float *S, const float *v, int64_t stride,
                                                 int64_t T, int hk, int hv, int dv, const __half *TB, const __half *P,
                                                 const float *G, const __half *Q, const __half *K,
                                                 const __grid_constant__ w_maps maps)
{
    (void)o, (void)o_stride, (void)S, (void)v, (void)stride, (void)T, (void)hk, (void)hv, (void)dv, (void)TB, (void)P,
        (void)G, (void)Q, (void)K, (void)maps;
    __trap(); /* built without sm_90a code: tbw_runs_on refuses first */
}

#endif /* Q35_SM90A_CODE */

/* tb4wt's maps over this call's workspace and v. */
static inline int w_make_maps(w_maps *m, const float *v, int64_t stride, int64_t T, q35_delta_dims d,
                              const __half *TB, const __half *P, const float *G, const __half *Q, const __half *K,
                              q35_error *err)
{
    const uint64_t nc = (uint64_t)((T + CH - 1) / CH);
    const uint64_t dk_dims[2] = {DK, nc * d.hk * CH}, dk_str[1] = {DK * 2};
    const uint64_t pt_dims[2] = {CH, nc * d.hv * CH}, pt_str[1] = {CH * 2};
    const uint64_t v_dims[2] = {(uint64_t)d.hv * d.dv, (uint64_t)T}, v_str[1] = {(uint64_t)stride * 4};
    const uint64_t g_dims[2] = {CH, nc * d.hv}, g_str[1] = {CH * 4};
    const uint32_t box64[2] = {64, 64}, vbox[2] = {32, 64}, gbox[2] = {CH, 1};
    return q35_tma_map_f16(&m->k, K, 2, dk_dims, dk_str, box64, 1, "delta_chunk tb4wt K", err) ||
                   q35_tma_map_f16(&m->q, Q, 2, dk_dims, dk_str, box64, 1, "delta_chunk tb4wt Q", err) ||
                   q35_tma_map_f16(&m->p, P, 2, pt_dims, pt_str, box64, 1, "delta_chunk tb4wt P", err) ||
                   q35_tma_map_f16(&m->t, TB, 2, pt_dims, pt_str, box64, 1, "delta_chunk tb4wt T beta", err) ||
                   q35_tma_map_f32(&m->v, v, 2, v_dims, v_str, vbox, 1, "delta_chunk tb4wt V", err) ||
                   q35_tma_map_f32(&m->g, G, 2, g_dims, g_str, gbox, 0, "delta_chunk tb4wt G", err)
               ? -1
               : 0;
}

/* Both passes (variant_impl's run) of tb4w (TMA false) or tb4wt, tb4's
 * parallel pass, or (KH) of tb4wtkh, the one by key head (tb4kh's: the same
 * bits). */
template <bool TMA, bool KH>
static int run_w(int optin, float *o, int64_t o_stride, float *S, const float *q, const float *k, const float *v,
                 int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d, __half *W, __half *U,
                 __half *P, float *G, __half *Q, __half *K, q35_stream stream, q35_error *err)
{
    (void)U;
    /* the device and its shared memory were checked by q35_delta_chunk's check_variant (the entry's
       runs_on, tbw_runs_on, and its smem, w_cfg::SMEM), the only way here */
    const char *name = TMA ? "q35_delta_chunk_state_tbw (TMA)" : "q35_delta_chunk_state_tbw";
    w_maps maps;
    memset(&maps, 0, sizeof maps);
    if (TMA && w_make_maps(&maps, v, stride, T, d, W, P, G, Q, K, err))
        return -1;
    const auto state = q35_delta_chunk_state_tbw<TMA>;
    if (Q35_CUDA_CHECK(cudaFuncSetAttribute(state, cudaFuncAttributeMaxDynamicSharedMemorySize, w_cfg::SMEM), err) ||
        launch_prep_tb(KH ? prep_tb_kh(d) : prep_tb4(d), optin, q, k, stride, g, beta, T, d, W, P, G, Q, K, stream,
                       err))
        return -1;
    const dim3 grid((unsigned)d.hv, (unsigned)(d.dv / 32));
    state<<<grid, 128, w_cfg::SMEM, (cudaStream_t)stream>>>(o, o_stride, S, v, stride, T, d.hk, d.hv, d.dv, W, P, G,
                                                            Q, K, maps);
    return Q35_LAUNCH_CHECK(name, err);
}

/* ---- tb4wm2kh / tb4wmkh: the state pass's shared tiles multicast across a value head's blocks ------ */

/* The multicast kernel's stages: three (a stage is refilled once every block of the
 * cluster has released it, a chunk and more after its last read). */
using wm_cfg = w_cfg_n<3>;

/* How the multicast state pass follows the parallel pass (its DEP, below). */
enum { WM_AFTER, WM_EARLY, WM_FLAGS };

#ifdef Q35_SM90A_CODE

/* One block per (value head j, slice sl) as tb4wt's, a value head's n = dv /
 * 32 blocks in clusters of cl (tb4wmkh: all n; tb4wm2kh: 2; rank = sl % cl,
 * the blocks of head j at j n .. j n + n - 1 along x),
 * 160 threads: warps 0-3 the warp group of tb4wt's products (w_chunk), warp
 * 4 the producer. The six [64][64] f16 boxes every block of the head reads
 * alike (K, Q by dk half, P, T beta) are each loaded once for the cluster:
 * box i by the block of rank i % n, multicast into all n blocks' stage and
 * completing on each block's full barrier; V's slice and G by each block for
 * itself. A stage is refilled only when all n blocks have released it (each
 * consumer warp's lane 0 arrives on every block's empty barrier: 4 cl a
 * phase), since any block's multicast writes into every block.
 *
 * Why. tb4wt's state pass is bound by its L2 reads: each of a head's four
 * blocks brings K, Q, P and T beta (48 KiB) and its V slice and G (8.25 KiB) a
 * chunk, 56 KiB a block. Here a block's L2 reads are 12 + 8.25 KiB a chunk,
 * the chain of dependent products a chunk then the bound. The cost: a
 * cluster's blocks must be resident at once (one an SM, a cluster's SMs in one
 * GPC) and move in step (a slow block holds the others' refills).
 *
 * tb4wmkh (clusters of 4) is bitwise tb4wtkh but slower: fewer clusters of 4
 * fit at once than the 9B's grid has, so its state pass takes two waves.
 * tb4wm2kh (pairs of blocks, L2 reads 32 KiB a block a chunk) fits the 9B's
 * grid in one wave, is bitwise tb4wtkh and faster at every length benched:
 * the default on sm_90 (bench/results/index.tsv, family kernels).
 *
 * DEP, how the kernel follows the parallel pass: WM_EARLY (tb4wm2kh's) launched early (programmatic stream serialization; the parallel
 * pass lets it start at each block's start) and every thread waiting for the
 * whole parallel pass (griddepcontrol.wait) after its prologue (barriers, the
 * state's load, the cluster barrier), which then runs under the parallel
 * pass's last blocks and the launch between them (the state is not written by
 * the parallel pass; everything after the wait is). A state block (197 KiB)
 * starts only on an SM the parallel pass has left, so it takes nothing from
 * the parallel pass's last wave. WM_AFTER in stream order (the experiment
 * tb4wm2kho, the A/B); WM_FLAGS launched early, the producer waiting on a
 * flag a chunk (the experiment tb4wpkh; kernels/experiments/). The early
 * launch hides the launch gap and the prologue, a fixed saving a call whatever
 * its rows; bitwise the form in stream order (the suite; the A/B's record:
 * bench/results/index.tsv, family kernels). */
template <int NS, int DEP>
static __global__ void __launch_bounds__(160, 1)
    q35_delta_chunk_state_tbwm(float *o, int64_t o_stride, float *S, int64_t T, int hk, int hv, int dv, int cl,
                               const unsigned *ready, const __grid_constant__ w_maps maps)
{
    using W = w_cfg_n<NS>;
    extern __shared__ __align__(16) unsigned char smem[];
    const uint32_t base = (q35_sm90_smem(smem) + 1023) & ~1023u;
    const int n = dv / 32, j = blockIdx.x / n, sl = blockIdx.x % n, kh = j % hk;
    const uint32_t rank = q35_cluster_rank(); /* = sl % cl */
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int64_t nc = (T + CH - 1) / CH;
    const uint32_t full = base + W::OFF_BAR, empty = full + 8 * NS;
    float *Sj = S + ((size_t)j * dv + (size_t)sl * 32) * DK;
    if (tid == 0) {
        for (int s = 0; s < NS; s++) {
            q35_mbar_init(full + 8 * s, 1);
            q35_mbar_init(empty + 8 * s, 4 * cl);
        }
        q35_mbar_init_fence();
    }
    float st[2][16];
    if (warp < 4)
        w_state_in(st, Sj, base + W::OFF_S, warp, lane);
    q35_cluster_sync(); /* every block's barriers made before any multicast into it or arrival on them */
    if (DEP == WM_EARLY)
        q35_grid_dependency_wait(); /* the parallel pass done, its writes seen */
    if (warp == 4) {
        if (lane == 0) {
#pragma unroll 1
            for (int64_t c = 0; c < nc; c++) {
                const int s = (int)(c % NS);
                if (DEP == WM_FLAGS) /* chunk c's tiles written by the parallel pass (asked before the stage is
                                        free: off the chain of refills when they were long since) */
                    q35_flag_wait(ready + c * hk + kh);
                if (c >= NS)
                    q35_mbar_wait(empty + 8 * s, (uint32_t)((c / NS - 1) & 1));
                w_tma_stage(maps, base + (uint32_t)s * W::STAGE, full + 8 * s, c, j, kh, sl, hk, hv, dv, (int)rank, cl);
            }
        }
    } else {
#pragma unroll 1
        for (int64_t c = 0; c < nc; c++) {
            const int s = (int)(c % NS);
            q35_fence_proxy_async(); /* this thread's S16 stores seen by wgmma */
            q35_named_sync(1, 128);  /* every consumer warp's */
            q35_mbar_wait(full + 8 * s, (uint32_t)((c / NS) & 1));
            const uint32_t release = empty + 8 * s;
            w_chunk<NS>(base, base + (uint32_t)s * W::STAGE, st, o, o_stride, c, T, j, sl, dv, [&] {
                __syncwarp(); /* every lane's reads of the stage (V, G) before lane 0 lets it go */
                if (lane == 0)
                    for (int r = 0; r < cl; r++)
                        q35_mbar_arrive_cluster(q35_mapa(release, (uint32_t)r));
            });
        }
        w_state_copy<false>(st, Sj, warp, lane);
    }
    q35_cluster_sync(); /* no block leaves while another may still multicast into it or arrive on its barriers */
    if (DEP == WM_FLAGS)
        q35_grid_dependency_wait(); /* done only once the parallel pass is: what follows in the stream sees both */
}

#else

template <int NS, int DEP>
static __global__ void q35_delta_chunk_state_tbwm(float *o, int64_t o_stride, float *S, int64_t T, int hk, int hv,
                                                  int dv, int cl, const unsigned *ready,
                                                  const __grid_constant__ w_maps maps)
{
    (void)o, (void)o_stride, (void)S, (void)T, (void)hk, (void)hv, (void)dv, (void)cl, (void)ready, (void)maps;
    __trap(); /* built without sm_90a code: tbw_runs_on refuses first */
}

#endif /* Q35_SM90A_CODE */

/* Both passes, the state pass in clusters of MOST blocks (of the head's n =
 * dv / 32 when fewer; 1 where n is not a multiple of MOST), at most 8: the
 * portable cluster size; EARLY: launched early (WM_EARLY); SOLVE: how the
 * parallel pass gives T's columns to threads (prep_tb_kh_item). */
template <int MOST, bool EARLY = false, int SOLVE = SOLVE_HALVES>
static int run_tbwm(int optin, float *o, int64_t o_stride, float *S, const float *q, const float *k, const float *v,
                    int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d, __half *W,
                    __half *U, __half *P, float *G, __half *Q, __half *K, q35_stream stream, q35_error *err)
{
    (void)U;
    /* the device and its shared memory (wm_cfg::SMEM) were checked by check_variant */
    static_assert(MOST >= 1 && MOST <= 8, "a portable cluster");
    const int n = d.dv / 32, cl = n <= MOST ? n : n % MOST == 0 ? MOST : 1;
    w_maps maps;
    memset(&maps, 0, sizeof maps);
    const auto state = q35_delta_chunk_state_tbwm<3, EARLY ? WM_EARLY : WM_AFTER>;
    if (w_make_maps(&maps, v, stride, T, d, W, P, G, Q, K, err) ||
        Q35_CUDA_CHECK(cudaFuncSetAttribute(state, cudaFuncAttributeMaxDynamicSharedMemorySize, wm_cfg::SMEM), err) ||
        launch_prep_tb(prep_tb_kh<SOLVE>(d), optin, q, k, stride, g, beta, T, d, W, P, G, Q, K, stream, err))
        return -1;
    q35_cluster_launch l(dim3((unsigned)(d.hv * n)), dim3(160), wm_cfg::SMEM, (cudaStream_t)stream, (unsigned)cl);
    if (EARLY)
        l.early();
    const unsigned *no_flags = nullptr;
    if (Q35_CUDA_CHECK(cudaLaunchKernelEx(&l.cfg, state, o, o_stride, S, T, d.hk, d.hv, d.dv, cl, no_flags, maps),
                       err))
        return q35_fail_context(err, "delta_chunk: launching the multicast state pass (clusters of %d%s)", cl,
                                EARLY ? ", early" : "");
    return Q35_LAUNCH_CHECK("q35_delta_chunk_state_tbwm", err);
}

/* Whether device `device` runs the wgmma state pass (variant_impl's runs_on;
 * kernels/delta_chunk_sm90.cu): a build with sm_90a code, an sm_90 device, its
 * shared memory; else 0 and why. */
int tbw_runs_on(int device, q35_error *why);

/* The experiments' entries (kernels/experiments/delta_chunk_sm90.cu, built for
 * sm_90a as this header's kernels must be; their table is
 * kernels/experiments/delta_chunk.cu's): tb4w, tb4wt, tb4wmkh (run_tbwm in
 * clusters of a value head's dv / 32 blocks: the production tb4wm2kh's
 * kernel in fours), tb4wm2kho (tb4wm2kh's state pass in stream order,
 * WM_AFTER), tb4wm2khf (tb4wm2kh with the parallel pass's solve from row 0 in
 * every column: SOLVE_FULL), tb4wm2khq (T's columns by quarters a warp:
 * SOLVE_QUARTERS) and tb4wpkh (tb4wtkh's two passes at once,
 * the state pass waiting on flags the parallel pass publishes a chunk at a
 * time). */
extern const variant_impl k_tb4w_impl, k_tb4wt_impl, k_tb4wmkh_impl, k_tb4wm2kho_impl, k_tb4wm2khf_impl,
    k_tb4wm2khq_impl, k_tb4wpkh_impl;

} /* namespace q35_delta_chunk_kernels */

#endif /* Q35_KERNELS_DELTA_CHUNK_SM90_CUH */
