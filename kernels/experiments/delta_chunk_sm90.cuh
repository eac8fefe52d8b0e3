/* The experiment tb4w (kernels/experiments/delta_chunk_sm90.cu, built for
 * sm_90a alone where the build has it): its shared memory, its device pieces
 * (descriptors by their two words, the transposed fragment stores; the sm_90a
 * probes run the same, parity/kernels/sm90_probe.cu) and its entries, for the
 * experiments' table (kernels/experiments/delta_chunk.cu). */
#ifndef Q35_KERNELS_EXPERIMENTS_DELTA_CHUNK_SM90_CUH
#define Q35_KERNELS_EXPERIMENTS_DELTA_CHUNK_SM90_CUH

#include "kernels/delta_chunk_tb.cuh"
#include "kernels/sm90.cuh"
#include "kernels/tma.h"

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

/* The state pass's shared memory: two stages of K, Q (two [64][64] f16 boxes
 * each), P, T beta (one), V's slice [64][32] f32 and G [64]; then X^T, D^T,
 * Dp^T ([32][64] boxes) and S16 (two), tb4wt's two mbarriers; the base
 * aligned up to 1024 bytes. */
struct w_cfg {
    static constexpr int BOX = 64 * 128; /* a [64][64] f16 box */
    static constexpr int OFF_K = 0, OFF_Q = 2 * BOX, OFF_P = 4 * BOX, OFF_T = 5 * BOX, OFF_V = 6 * BOX;
    static constexpr int OFF_G = OFF_V + CH * 32 * 4;
    static constexpr int STAGE = (OFF_G + CH * 4 + 1023) / 1024 * 1024;
    static constexpr int SBOX = 32 * 128; /* a [32][64] f16 box: X^T, D^T, Dp^T, half of S16 */
    static constexpr int OFF_XT = 2 * STAGE, OFF_DT = OFF_XT + SBOX, OFF_DPT = OFF_DT + SBOX, OFF_S = OFF_DPT + SBOX;
    static constexpr int OFF_BAR = OFF_S + 2 * SBOX; /* tb4wt: a stage's mbarrier each (8 bytes) */
    static constexpr int BYTES = OFF_BAR + 16;
    static constexpr int SMEM = BYTES + 1024;
    /* tb4wt: the bytes TMA brings a stage (every box whole: V's rows past T are its zeros) */
    static constexpr int TX_BYTES = 4 * BOX + 2 * BOX + CH * 32 * 4 + CH * 4;
};

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

/* The same without scaling: stored values are the accumulator's rounded. */
__device__ __forceinline__ void w_store_t(uint32_t box, const float (&d)[16], int warp, int lane)
{
    const int m = lane / 8, r = lane % 8;
#pragma unroll
    for (int x = 0; x < 2; x++) {
        uint32_t f[4];
#pragma unroll
        for (int mm = 0; mm < 4; mm++) {
            const int i = 2 * x + mm / 2, h = mm % 2;
            f[mm] = q35_pack_half2(d[4 * i + 2 * h], d[4 * i + 2 * h + 1]);
        }
        const int i = 2 * x + m / 2, h = m % 2;
        q35_stsm_x4_trans(box + q35_sw128(8 * i + r, 16 * warp + 8 * h), f[0], f[1], f[2], f[3]);
    }
}

#endif /* Q35_SM90A_CODE */

/* Whether device `device` runs tb4w (variant_impl's runs_on): a build with
 * sm_90a code, an sm_90 device, its shared memory; else 0 and why. */
int tbw_runs_on(int device, q35_error *why);

/* tb4w's, tb4wt's and tb4wtkh's both passes (variant_impl's run): tb4's
 * parallel pass (tb4wtkh: tb4kh's), then the wgmma state pass (tb4wt's fed by
 * TMA); reached through q35_delta_chunk, whose check_variant has asked
 * tbw_runs_on (the entries' runs_on) first. */
int run_tbwt(int optin, float *o, int64_t o_stride, float *S, const float *q, const float *k, const float *v,
             int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d, __half *W, __half *U,
             __half *P, float *G, __half *Q, __half *K, q35_stream stream, q35_error *err);
int run_tbwtkh(int optin, float *o, int64_t o_stride, float *S, const float *q, const float *k, const float *v,
               int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d, __half *W, __half *U,
               __half *P, float *G, __half *Q, __half *K, q35_stream stream, q35_error *err);
int run_tbw(int optin, float *o, int64_t o_stride, float *S, const float *q, const float *k, const float *v,
            int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d, __half *W, __half *U,
            __half *P, float *G, __half *Q, __half *K, q35_stream stream, q35_error *err);

} /* namespace q35_delta_chunk_kernels */

#endif /* Q35_KERNELS_EXPERIMENTS_DELTA_CHUNK_SM90_CUH */
