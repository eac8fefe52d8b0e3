/* The flash prefill attention's kernel (kernels/attention_flash.h): one fused causal kernel,
 * f16 inputs to mma.sync m16n8k16 tensor cores, f32 accumulation and an f32
 * online softmax, head_dim 256, no scores materialised. sm_80 or newer. The
 * PTX pieces and the two stagings are in kernels/flash_frag.cuh.
 *
 * Work split. A block takes R query rows of one KV group and ALL hpk query heads
 * of that group: its M = hpk * R "query rows" (M-row m = head h * R + row r)
 * share every K/V tile it loads:
 *
 *     hpk       1    2    3    4    6    8
 *     R       128   64   32   32   16   16     M = 128 (96 for hpk 3, 6)
 *
 * The M-rows form groups of 16 * SLABS rows (SLABS m16 slabs, each within one
 * head); DSPLIT warps share a group, warp `part` owning output dims
 * [part * 256 / DSPLIT, ...) of its rows, 16 * SLABS x 256 / DSPLIT f32 in
 * registers. Per KV tile of N positions (the tiles up to the block's last
 * visible position; the ones past it are never visited):
 *   S   = Q K^T     ldmatrix.x4 of Q (A) and K (B) from shared memory; warp
 *                   `part` takes positions [part * N / DSPLIT, ...) over all
 *                   256 dims (no partial scores to exchange), scores in log2
 *                   units; base and async load a K fragment per n8 tile and
 *                   2 k-steps (as the kernel always did), the others per 2 n8
 *                   tiles and 1 k-step (half the live Q fragments);
 *   mask            only on the diagonal tiles: position p > pos0 + row -> -inf;
 *                   a group whose rows see none of the tile skips it;
 *   softmax         running max m and sum l per row (the 4 lanes of a row agree
 *                   on the max by two shuffles, the DSPLIT warps of a group
 *                   through shared memory and a named barrier; l stays
 *                   lane- and warp-partial until the end), O rescaled by
 *                   2^(m_old - m_new), P = 2^(s - m) packed to f16 straight
 *                   into the A fragments of the next product (and, with
 *                   DSPLIT 2, into shared memory for the other warp);
 *   O  += P V       ldmatrix.x4.trans of V (B): the warp's own positions with
 *                   P from registers, then (DSPLIT 2) the other warp's with P
 *                   from shared memory (written before the tile's barrier).
 * Shared memory (f16): Q [M][256], K [N][256], V [N][256]; every row is 32
 * chunks of 16 bytes at chunk ^ (row % 8) (no bank conflicts). With DSPLIT 2,
 * P [M][N] (chunk ^ row % 8 again) and the max exchange [M][2] f32.
 * Staging. q is f32; the caches f32 or f16 (the kernel's cache element C: an
 * f32 value is rounded to f16 on its way to shared memory, an f16 one moved as
 * it is, the same bits either way). K and V come as units of 16 rows, in the
 * order K(j) V(j) K(j + SPLIT) V(j + SPLIT) ...: V(j)'s units go to shared
 * memory during Q K(j)^T (the last one after the softmax), K(next)'s during
 * P V(j) (one per 16 positions), each put followed by the load of the unit
 * DEPTH places further on; one K and one V buffer, two barriers a tile.
 * Registers (DEPTH units in flight in registers) or a cp.async ring of DEPTH
 * raw units (16 KiB slots) converted or moved by the threads that copied them.
 * Order. Blocks take query tiles from the last (the longest rows) to the first,
 * every KV group's in turn, so the heavy blocks start first.
 * KV split (sm_90+). A chunk of 512 rows has few blocks (9B: 16 tiles x 4
 * groups = 64) for 132 SMs, so on sm_90 a cluster of S = 2 or 4 blocks shares
 * one query tile, block s taking tiles s, s + S, ...; at the end each block
 * scales its O by 2^(m_s - M) / L (M, L from every block's m, l through
 * distributed shared memory) and the cluster sums the S partial outputs in rank
 * order, each block writing M/S rows, 64 dims a round.
 *
 * Variants (the design choices the benchmarks compare;
 * q35_attention_flash_variant_default picks what q35_attention_prefill_flash
 * runs; base and kv64 are production, kernels/attention_flash.cu, the others
 * experiments, kernels/experiments/attention_flash.cu): N, SLABS, DSPLIT, the staging (regs
 * or ring, units in flight). Shared memory at M = 128 (1 KiB more for the
 * cluster combine), registers from ptxas (CUDA 13.0) at M = 128 / 96, no
 * spills; one block an SM. A variant whose shared memory an architecture lacks
 * is a stub there (refused by the launcher): sm_80 takes up to 163 KiB, sm_86
 * and sm_89 99 KiB (base only).
 *
 *   name            N SLABS DSPLIT staging warps  smem     sm_90 regs  sm_80 regs
 *   base           32   1     1    regs 1    8    96 KiB   238-246     236-241
 *   kv64           64   1     1    regs 1    8   128 KiB   247-252     248-254
 *   async          32   1     1    ring 4    8   160 KiB   231-238     225
 *   kv64_async     64   1     1    ring 4    8   192 KiB   245-250     (stub)
 *   pair_async     64   2     2    ring 4    8   209 KiB   247-255     (stub)
 *   dsplit16_async 64   1     2    ring 4   16   209 KiB   128         (stub)
 *   (dsplit16_async at M = 96: 12 warps, 150-154 registers)
 *
 * bench/results/log/2026-12-02-03.md ("flash optimisation log") says what each one tests
 * and what it is predicted to do. */
#ifndef Q35_KERNELS_ATTENTION_FLASH_CUH
#define Q35_KERNELS_ATTENTION_FLASH_CUH

#include "kernels/attention_flash.h"
#include "kernels/cluster_launch.cuh"
#include "kernels/flash_frag.cuh"
#include "kernels/variant.h"

#include <cooperative_groups.h>
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>
#include <type_traits>

namespace cg = cooperative_groups;

#define HD Q35_FLASH_HD
#define ROW Q35_FLASH_ROW_BYTES
#define MAX_M 128                /* M-rows per block */
#define ROUND_DIMS 64            /* dims per round of the cluster combine */
#define COMBINE_LD (ROUND_DIMS + 4)
#define MAX_SPLIT 4
#define LOG2E 1.4426950408889634f

/* One variant: KV tile N, m16 slabs per warp, warps per row group (each owning
 * 256 / DSPLIT dims), units in flight, ring (cp.async) or registers. */
template <int KV_TILE, int SLABS, int DSPLIT, int DEPTH, bool RING>
struct q35_flash_variant {
    static constexpr int kv_tile = KV_TILE, slabs = SLABS, dsplit = DSPLIT, depth = DEPTH;
    static constexpr bool ring = RING;
};
using q35_flash_base = q35_flash_variant<32, 1, 1, 1, false>;
using q35_flash_kv64 = q35_flash_variant<64, 1, 1, 1, false>;
using q35_flash_async = q35_flash_variant<32, 1, 1, 4, true>;
using q35_flash_kv64_async = q35_flash_variant<64, 1, 1, 4, true>;
using q35_flash_pair_async = q35_flash_variant<64, 2, 2, 4, true>;
using q35_flash_dsplit16_async = q35_flash_variant<64, 1, 2, 4, true>;

/* A variant's block at M rows: warps, and its dynamic shared memory (byte
 * offsets of each array from the start). */
template <class V, int M>
struct q35_flash_layout {
    static constexpr int warps = M / (16 * V::slabs) * V::dsplit, threads = 32 * warps;
    static constexpr uint32_t k = M * ROW, v = k + V::kv_tile * ROW, p = v + V::kv_tile * ROW,
                              x = p + (V::dsplit > 1 ? M * V::kv_tile * 2 : 0),
                              ring = x + (V::dsplit > 1 ? M * V::dsplit * 4 : 0),
                              bytes = ring + (V::ring ? V::depth * Q35_FLASH_UNIT_BYTES : 0);
};

/* The block's rows for hpk heads per group (M = hpk * R). */
static inline int flash_rows(int hpk)
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

/* ---- the kernel's steps ------------------------------------------------------------
 * q35_flash_kernel (at the end) reads as this file's header tells the
 * algorithm: Q staged, then per KV tile the scores, the causal mask, the row
 * maxima, the online softmax, P, and O += P V, then the row sums and the output
 * (or the cluster's combine). Each step is a device function the compiler
 * inlines; the kernel's locals (the lane's coordinates, the ldmatrix
 * addresses, O, the row maxima and sums) are passed by reference, as a lambda
 * captures them: written so, the SASS is that of the one-body kernel, opcode
 * for opcode and register for register (checked with cuobjdump on sm_80 and
 * sm_90 when the steps were drawn; values or a struct of them instead change
 * the integer code around the same arithmetic). */

/* Q of the block's M-rows (M-row m = head kvh * hpk + m / R, query row r0 +
 * m % R) into sQ: f32 -> f16, swizzled; rows past T are zeros. */
template <int M, int THREADS>
__device__ __forceinline__ void q35_flash_stage_q(uint32_t sQ, const float *q, int64_t q_stride, int64_t T, int r0,
                                                  int R, int kvh, int hpk)
{
    for (int idx = threadIdx.x; idx < M * (HD / 8); idx += THREADS) {
        const int m = idx / (HD / 8), ch = idx % (HD / 8), h = m / R, r = m % R;
        float4 a = make_float4(0.0f, 0.0f, 0.0f, 0.0f), b = a;
        if (r0 + r < T) {
            const float4 *src = (const float4 *)(q + (r0 + r) * q_stride + (int64_t)(kvh * hpk + h) * HD + ch * 8);
            a = __ldg(src);
            b = __ldg(src + 1);
        }
        q35_st_shared_f16x8(sQ + q35_swz(m, ch), a, b);
    }
}

/* The M-row of a lane's row ri (0: g, 1: g + 8) of slab sl in row group grp
 * (GROUP = 16 slabs rows a group). */
template <int GROUP>
__device__ inline int q35_flash_mrow(const int &grp, int sl, const int &g, int ri)
{
    return GROUP * grp + 16 * sl + g + 8 * ri;
}

/* The last position slab sl's first row sees (slab sl of a row group: its
 * rows sit slab_step rows apart in their head); its row i sees i more. */
__device__ inline int q35_flash_first(const int &first0, const int &slab_step, int sl)
{
    return first0 + slab_step * sl;
}

/* DS > 1: a value per row of the lane's rows made the same in the row group's
 * DS warps through xch ([M][DS] f32), their max or their sum in warp order (the
 * caller keeps every warp of the block away from xch between two calls). */
template <int SLABS, int DS>
__device__ inline void q35_flash_group_combine(float (&v)[SLABS][2], bool take_max, const uint32_t &xch,
                                               const int &grp, const int &part, const int &g, const int &c)
{
    constexpr int GROUP = 16 * SLABS;
#pragma unroll
    for (int sl = 0; sl < SLABS; sl++)
#pragma unroll
        for (int ri = 0; ri < 2; ri++)
            if (c == 0)
                q35_st_shared_f32(xch + 4 * (q35_flash_mrow<GROUP>(grp, sl, g, ri) * DS + part), v[sl][ri]);
    q35_bar_sync(1 + grp, 32 * DS);
#pragma unroll
    for (int sl = 0; sl < SLABS; sl++)
#pragma unroll
        for (int ri = 0; ri < 2; ri++) {
            float r = q35_ld_shared_f32(xch + 4 * (q35_flash_mrow<GROUP>(grp, sl, g, ri) * DS));
#pragma unroll
            for (int w = 1; w < DS; w++) {
                const float x = q35_ld_shared_f32(xch + 4 * (q35_flash_mrow<GROUP>(grp, sl, g, ri) * DS + w));
                r = take_max ? fmaxf(r, x) : r + x;
            }
            v[sl][ri] = r;
        }
}

/* O += P V over 16 positions: P's A fragments p[slab] (this warp's, or the
 * other's from shared memory), V's rows at voff + vrow, 16 dims (two n8 tiles)
 * per V fragment load. */
template <int SLABS, int WD>
__device__ inline void q35_flash_pv_step(float (&acc)[SLABS][WD / 8][4], const uint32_t (&voff)[4],
                                         const uint32_t (&p)[SLABS][4], uint32_t vrow)
{
#pragma unroll
    for (int tq = 0; tq < WD / 64; tq++)
#pragma unroll
        for (int i = 0; i < 4; i++) {
            const int t = 4 * tq + i;
            uint32_t vb[4];
            q35_ldsm_x4_trans(vb, voff[i] + vrow + 128 * tq);
#pragma unroll
            for (int sl = 0; sl < SLABS; sl++) {
                q35_mma16816(acc[sl][2 * t], p[sl], vb[0], vb[1]);
                q35_mma16816(acc[sl][2 * t + 1], p[sl], vb[2], vb[3]);
            }
        }
}

/* The lanes' ldmatrix addresses. Every loop of the steps steps by whole
 * 8-chunk groups (128 bytes) or 8 rows, which the swizzle leaves alone, so each
 * address is one of these plus an immediate offset. Rows: Q GROUP grp + lane %
 * 16, K part NP + 8t + lane % 8 (koff; kpair: two n8 tiles), V part NP + 16kk +
 * lane % 16 (8 + 8), all with row % 8 = lane % 8; V's dims from part WD. */
template <int GROUP, int NP, int WD>
__device__ inline void q35_flash_ldsm_addresses(uint32_t (&qoff)[4], uint32_t (&koff)[2], uint32_t (&voff)[4],
                                                uint32_t (&kpair)[4], const uint32_t &sQ, const uint32_t &sK,
                                                const uint32_t &sV, const int &grp, const int &part, const int &lane)
{
#pragma unroll
    for (int i = 0; i < 4; i++) {
        qoff[i] = sQ + (GROUP * grp + lane % 16) * ROW + (((2 * i + lane / 16) ^ (lane % 8)) << 4);
        voff[i] = sV + (part * NP + lane % 16) * ROW + (((2 * i + lane / 16) ^ (lane % 8)) << 4) + part * WD * 2;
    }
#pragma unroll
    for (int i = 0; i < 2; i++)
        koff[i] = sK + (part * NP + lane % 8) * ROW + (((4 * i + lane / 8) ^ (lane % 8)) << 4);
#pragma unroll
    for (int i = 0; i < 4; i++)
        kpair[i] = sK + (part * NP + 8 * (lane / 16) + lane % 8) * ROW + (((2 * i + lane / 8 % 2) ^ (lane % 8)) << 4);
}

/* DS > 1: the other warp's P as A fragments. The group's P [GROUP][N] f16
 * (at sPg) rows of 8 chunks at chunk ^ row % 8; this warp writes chunks part
 * NP / 8.., reads the other's: rows lane % 16, chunks (1 - part) NP / 8 + 2kk +
 * lane / 16 (and V rows (1 - part) NP..: voff + vother). */
template <int N, int NP>
__device__ inline void q35_flash_p_addresses(uint32_t (&poff)[NP / 16], const uint32_t &sPg, const int &part,
                                             const int &lane)
{
#pragma unroll
    for (int kk = 0; kk < NP / 16; kk++)
        poff[kk] = sPg + (lane % 16) * (2 * N) + ((((1 - part) * NP / 8 + 2 * kk + lane / 16) ^ (lane % 8)) << 4);
}

/* The rows' running state at the start: O = 0 (acc: n8 tile t of slab sl holds
 * dims part WD + 8t + 2c, +1 of rows g (0, 1), g + 8 (2, 3)), no position seen
 * (row_max, log2 units), nothing summed (row_sum: lane- and warp-partial until
 * the end). */
template <int SLABS, int WD>
__device__ inline void q35_flash_rows_clear(float (&acc)[SLABS][WD / 8][4], float (&row_max)[SLABS][2],
                                            float (&row_sum)[SLABS][2])
{
#pragma unroll
    for (int sl = 0; sl < SLABS; sl++)
#pragma unroll
        for (int t = 0; t < WD / 8; t++)
            acc[sl][t][0] = acc[sl][t][1] = acc[sl][t][2] = acc[sl][t][3] = 0.0f;
#pragma unroll
    for (int sl = 0; sl < SLABS; sl++)
        row_max[sl][0] = row_max[sl][1] = -INFINITY, row_sum[sl][0] = row_sum[sl][1] = 0.0f;
}

/* S = Q K^T of tile j for the warp's positions (active: the warp's rows see
 * the tile), 64 dims (kq) at a time, two k-steps per K fragment load; V(j)'s
 * units go to shared memory along the way (every warp is past P V(j -
 * SPLIT)): units 0 .. NU - 2 evenly through the product, the last after the
 * softmax. s[sl][t]: positions part NP + 8t + 2c, +1 of rows g (0, 1), g + 8
 * (2, 3). */
template <int SLABS, int N, int NP, int NU, class Feed>
__device__ inline void q35_flash_scores(float (&s)[SLABS][NP / 8][4], const bool &active, const uint32_t (&qoff)[4],
                                        const uint32_t (&koff)[2], const uint32_t (&kpair)[4], Feed &feed, const int &j)
{
#pragma unroll
    for (int sl = 0; sl < SLABS; sl++)
#pragma unroll
        for (int t = 0; t < NP / 8; t++)
            s[sl][t][0] = s[sl][t][1] = s[sl][t][2] = s[sl][t][3] = 0.0f;
#pragma unroll
    for (int kq = 0; kq < HD / 64; kq++) {
        if (active) {
            if constexpr (SLABS == 1 && N == 32)
#pragma unroll
                for (int ip = 0; ip < 2; ip++) { /* 2 k-steps of Q; K: one n8 tile by 2 k-steps */
                    uint32_t qa0[4], qa1[4];
                    q35_ldsm_x4(qa0, qoff[2 * ip] + 128 * kq);
                    q35_ldsm_x4(qa1, qoff[2 * ip + 1] + 128 * kq);
#pragma unroll
                    for (int t = 0; t < NP / 8; t++) {
                        uint32_t kb[4];
                        q35_ldsm_x4(kb, koff[ip] + 8 * t * ROW + 128 * kq);
                        q35_mma16816(s[0][t], qa0, kb[0], kb[1]);
                        q35_mma16816(s[0][t], qa1, kb[2], kb[3]);
                    }
                }
            else
#pragma unroll
                for (int ks = 0; ks < 4; ks++) { /* 1 k-step of Q per slab; K: two n8 tiles by 1 k-step */
                    uint32_t qa[SLABS][4];
#pragma unroll
                    for (int sl = 0; sl < SLABS; sl++)
                        q35_ldsm_x4(qa[sl], qoff[ks] + sl * 16 * ROW + 128 * kq);
#pragma unroll
                    for (int tp = 0; tp < NP / 16; tp++) {
                        uint32_t kb[4];
                        q35_ldsm_x4(kb, kpair[ks] + 16 * tp * ROW + 128 * kq);
#pragma unroll
                        for (int sl = 0; sl < SLABS; sl++) {
                            q35_mma16816(s[sl][2 * tp], qa[sl], kb[0], kb[1]);
                            q35_mma16816(s[sl][2 * tp + 1], qa[sl], kb[2], kb[3]);
                        }
                    }
                }
        }
        if ((kq + 1) % (4 / NU) == 0 && (kq + 1) / (4 / NU) < NU)
            feed.advance(1, (kq + 1) / (4 / NU) - 1, j);
    }
}

/* The causal mask (diagonal tiles only: a position past the row's last is
 * -inf) and the scores to log2 units (sc), for the tile from position p0. */
template <int SLABS, int N, int NP>
__device__ inline void q35_flash_mask(float (&s)[SLABS][NP / 8][4], const int &p0, const float &sc,
                                      const int &first0, const int &slab_step, const int &part, const int &g,
                                      const int &c)
{
#pragma unroll
    for (int sl = 0; sl < SLABS; sl++) {
        const bool diagonal = p0 + N - 1 > q35_flash_first(first0, slab_step, sl);
#pragma unroll
        for (int t = 0; t < NP / 8; t++)
#pragma unroll
            for (int e = 0; e < 4; e++) {
                const int p = p0 + part * NP + 8 * t + 2 * c + (e & 1);
                s[sl][t][e] = diagonal && p > q35_flash_first(first0, slab_step, sl) + g + 8 * (e / 2) ? -INFINITY
                                                                                                  : s[sl][t][e] * sc;
            }
    }
}

/* The rows' maxima over the tile and before it, rows g (ri 0) and g + 8 (ri
 * 1): the 4 lanes of a row agree by two shuffles (the group's warps then
 * through q35_flash_group_combine). */
template <int SLABS, int NP>
__device__ inline void q35_flash_tile_max(float (&mx)[SLABS][2], const float (&s)[SLABS][NP / 8][4],
                                          const float (&row_max)[SLABS][2])
{
#pragma unroll
    for (int sl = 0; sl < SLABS; sl++)
#pragma unroll
        for (int ri = 0; ri < 2; ri++) {
            float m = row_max[sl][ri];
#pragma unroll
            for (int t = 0; t < NP / 8; t++)
                m = fmaxf(m, fmaxf(s[sl][t][2 * ri], s[sl][t][2 * ri + 1]));
            m = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 1));
            mx[sl][ri] = fmaxf(m, __shfl_xor_sync(0xffffffffu, m, 2));
        }
}

/* The online softmax: each row's O rescaled by 2^(m_old - m_new) (skipped
 * where no lane's max moved: most tiles), P = 2^(s - m) in place of s, the
 * row sums carried. */
template <int SLABS, int NP, int WD>
__device__ inline void q35_flash_softmax(float (&s)[SLABS][NP / 8][4], const float (&mx)[SLABS][2],
                                         float (&acc)[SLABS][WD / 8][4], float (&row_max)[SLABS][2],
                                         float (&row_sum)[SLABS][2])
{
#pragma unroll
    for (int sl = 0; sl < SLABS; sl++)
#pragma unroll
        for (int ri = 0; ri < 2; ri++) {
            const float base = mx[sl][ri] == -INFINITY ? 0.0f : mx[sl][ri]; /* a row that has seen nothing yet */
            const float corr = exp2f(row_max[sl][ri] - base);
            row_max[sl][ri] = mx[sl][ri];
            float sum = 0.0f;
#pragma unroll
            for (int t = 0; t < NP / 8; t++) {
                s[sl][t][2 * ri] = exp2f(s[sl][t][2 * ri] - base);
                s[sl][t][2 * ri + 1] = exp2f(s[sl][t][2 * ri + 1] - base);
                sum += s[sl][t][2 * ri] + s[sl][t][2 * ri + 1];
            }
            row_sum[sl][ri] = row_sum[sl][ri] * corr + sum;
            if (!__all_sync(0xffffffffu, corr == 1.0f)) /* most tiles leave every max where it was */
#pragma unroll
                for (int t = 0; t < WD / 8; t++) {
                    acc[sl][t][2 * ri] *= corr;
                    acc[sl][t][2 * ri + 1] *= corr;
                }
        }
}

/* P packed to f16 straight into the A fragments of P V (pa[kk]: positions
 * 16kk..), and with DS 2 into shared memory for the other warp (a[e] is row
 * g + 8 (e % 2), chunk 2kk + e / 2). */
template <int SLABS, int N, int NP, int DS>
__device__ inline void q35_flash_pack_p(uint32_t (&pa)[NP / 16][SLABS][4], const float (&s)[SLABS][NP / 8][4],
                                        const uint32_t &sPg, const int &part, const int &g, const int &c)
{
#pragma unroll
    for (int sl = 0; sl < SLABS; sl++)
#pragma unroll
        for (int kk = 0; kk < NP / 16; kk++) {
            pa[kk][sl][0] = q35_pack_half2(s[sl][2 * kk][0], s[sl][2 * kk][1]);
            pa[kk][sl][1] = q35_pack_half2(s[sl][2 * kk][2], s[sl][2 * kk][3]);
            pa[kk][sl][2] = q35_pack_half2(s[sl][2 * kk + 1][0], s[sl][2 * kk + 1][1]);
            pa[kk][sl][3] = q35_pack_half2(s[sl][2 * kk + 1][2], s[sl][2 * kk + 1][3]);
        }
    if constexpr (DS > 1)
#pragma unroll
        for (int sl = 0; sl < SLABS; sl++)
#pragma unroll
            for (int kk = 0; kk < NP / 16; kk++)
#pragma unroll
                for (int e = 0; e < 4; e++) {
                    const int row = 16 * sl + g + 8 * (e % 2), ch = part * NP / 8 + 2 * kk + e / 2;
                    q35_st_shared_b32(sPg + row * (2 * N) + ((ch ^ (row & 7)) << 4) + 4 * c, pa[kk][sl][e]);
                }
}

/* O += P V of the tile: 16 positions (kk) by 16 dims (two n8 tiles) per V
 * fragment load, the warp's own positions first, then (DS 2) the other
 * warp's P from shared memory (there since the tile's barrier); after each kk,
 * a unit of K(next) goes to shared memory (every warp is past Q K(j)^T). */
template <int SLABS, int NP, int WD, int DS, int N, class Feed>
__device__ inline void q35_flash_pv(float (&acc)[SLABS][WD / 8][4], const uint32_t (&pa)[NP / 16][SLABS][4],
                                    const bool &active, const uint32_t (&voff)[4], const uint32_t (&poff)[NP / 16],
                                    const uint32_t &vother, Feed &feed, const int &next)
{
#pragma unroll
    for (int kk = 0; kk < NP / 16; kk++) {
        if (active)
            q35_flash_pv_step<SLABS, WD>(acc, voff, pa[kk], 16 * kk * ROW);
        feed.advance(0, kk, next);
    }
    if constexpr (DS > 1)
#pragma unroll
        for (int kk = 0; kk < NP / 16; kk++) {
            if (active) {
                uint32_t pf[SLABS][4];
#pragma unroll
                for (int sl = 0; sl < SLABS; sl++)
                    q35_ldsm_x4(pf[sl], poff[kk] + sl * 16 * (2 * N));
                q35_flash_pv_step<SLABS, WD>(acc, voff, pf, vother + 16 * kk * ROW);
            }
            feed.advance(0, NP / 16 + kk, next);
        }
}

/* The row sums whole: the 4 lanes of a row hold parts (the group's warps too:
 * q35_flash_group_combine after this). */
template <int SLABS>
__device__ inline void q35_flash_row_sums(float (&row_sum)[SLABS][2])
{
#pragma unroll
    for (int sl = 0; sl < SLABS; sl++)
#pragma unroll
        for (int ri = 0; ri < 2; ri++) {
            row_sum[sl][ri] += __shfl_xor_sync(0xffffffffu, row_sum[sl][ri], 1);
            row_sum[sl][ri] += __shfl_xor_sync(0xffffffffu, row_sum[sl][ri], 2);
        }
}

/* O / l into o (no KV split): the lane's rows that are query rows (r0 + row
 * < T), M-row m being head kvh * hpk + m / R. */
template <int SLABS, int WD, int GROUP>
__device__ inline void q35_flash_store(float *const &o, const float (&acc)[SLABS][WD / 8][4],
                                       const float (&row_sum)[SLABS][2], const q35_attn_shape &sh, const int64_t &T,
                                       const int &r0, const int &R, const int &kvh, const int &hpk, const int &grp,
                                       const int &part, const int &g, const int &c)
{
#pragma unroll
    for (int sl = 0; sl < SLABS; sl++)
#pragma unroll
        for (int ri = 0; ri < 2; ri++) {
            const int r = q35_flash_mrow<GROUP>(grp, sl, g, ri) % R;
            if (r0 + r >= T)
                continue;
            const float inv = 1.0f / row_sum[sl][ri];
            const int head = kvh * hpk + (q35_flash_mrow<GROUP>(grp, sl, g, ri) - r) / R;
            float *dst = o + (r0 + r) * sh.o_stride + (int64_t)head * HD + part * WD + 2 * c;
#pragma unroll
            for (int t = 0; t < WD / 8; t++)
                *(float2 *)(dst + 8 * t) = make_float2(acc[sl][t][2 * ri] * inv, acc[sl][t][2 * ri + 1] * inv);
        }
}

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
/* The cluster's combine (a KV split of SPLIT blocks): each block scales its O
 * by 2^(m_s - M) / L (M, L from every block's m, l through distributed shared
 * memory: sm_max, sm_sum), then the cluster sums the SPLIT partial outputs in
 * rank order through cbuf [M][COMBINE_LD] (over Q: every warp is past its last
 * read), each block writing M / SPLIT rows, 64 dims a round. */
template <int M, int SPLIT, int SLABS, int WD, int GROUP, int THREADS>
__device__ inline void q35_flash_cluster_combine(float *const &o, float (&acc)[SLABS][WD / 8][4],
                                                 const float (&row_max)[SLABS][2], const float (&row_sum)[SLABS][2],
                                                 float *sm_max, float *sm_sum, float *cbuf, const q35_attn_shape &sh,
                                                 const int64_t &T, const int &r0, const int &R, const int &kvh,
                                                 const int &hpk, const int &grp, const int &part, const int &g,
                                                 const int &c)
{
    cg::cluster_group cluster = cg::this_cluster();
    if (c == 0 && part == 0)
#pragma unroll
        for (int sl = 0; sl < SLABS; sl++)
#pragma unroll
            for (int ri = 0; ri < 2; ri++)
                sm_max[q35_flash_mrow<GROUP>(grp, sl, g, ri)] = row_max[sl][ri],
                sm_sum[q35_flash_mrow<GROUP>(grp, sl, g, ri)] = row_sum[sl][ri];
    cluster.sync();
#pragma unroll
    for (int sl = 0; sl < SLABS; sl++)
#pragma unroll
        for (int ri = 0; ri < 2; ri++) {
            const int m = q35_flash_mrow<GROUP>(grp, sl, g, ri);
            float mx = -INFINITY, l = 0.0f;
#pragma unroll
            for (int b = 0; b < SPLIT; b++)
                mx = fmaxf(mx, cluster.map_shared_rank(sm_max, b)[m]);
#pragma unroll
            for (int b = 0; b < SPLIT; b++) {
                const float mb = cluster.map_shared_rank(sm_max, b)[m];
                if (mb != -INFINITY)
                    l += cluster.map_shared_rank(sm_sum, b)[m] * exp2f(mb - mx);
            }
            const float f = row_max[sl][ri] == -INFINITY ? 0.0f : exp2f(row_max[sl][ri] - mx) / l;
#pragma unroll
            for (int t = 0; t < WD / 8; t++) {
                acc[sl][t][2 * ri] *= f;
                acc[sl][t][2 * ri + 1] *= f;
            }
        }
    constexpr int MINE = M / SPLIT, OWN_ROUNDS = WD / ROUND_DIMS;
    const int rank = (int)cluster.block_rank();
#pragma unroll
    for (int round = 0; round < HD / ROUND_DIMS; round++) {
        if (part == round / OWN_ROUNDS) /* the round's dims are this warp's */
#pragma unroll
            for (int t = 0; t < ROUND_DIMS / 8; t++)
#pragma unroll
                for (int sl = 0; sl < SLABS; sl++)
#pragma unroll
                    for (int ri = 0; ri < 2; ri++) {
                        const float *a = acc[sl][round % OWN_ROUNDS * (ROUND_DIMS / 8) + t];
                        *(float2 *)(cbuf + q35_flash_mrow<GROUP>(grp, sl, g, ri) * COMBINE_LD + 8 * t + 2 * c) =
                            make_float2(a[2 * ri], a[2 * ri + 1]);
                    }
        cluster.sync();
        for (int idx = threadIdx.x; idx < MINE * ROUND_DIMS; idx += THREADS) {
            const int m = rank * MINE + idx / ROUND_DIMS, d = idx % ROUND_DIMS, h = m / R, r = m % R;
            float v = 0.0f;
#pragma unroll
            for (int b = 0; b < SPLIT; b++)
                v += cluster.map_shared_rank(cbuf, b)[m * COMBINE_LD + d];
            if (r0 + r < T)
                o[(r0 + r) * sh.o_stride + (int64_t)(kvh * hpk + h) * HD + round * ROUND_DIMS + d] = v;
        }
        cluster.sync();
    }
}
#endif

/* The flash kernel of variant V over caches of C (float or __half): grid query tiles * kv_heads * split,
 * q35_flash_layout<V, M>::threads threads, its bytes of dynamic shared memory;
 * hpk = heads / kv_heads, R = M / hpk, sc = the scale in log2 units.
 * With SPLIT > 1, clusters of SPLIT blocks along x (sm_90+). */
template <class V, int M, int SPLIT, class C>
__global__ void __launch_bounds__(q35_flash_layout<V, M>::threads, 1)
    q35_flash_kernel(float *o, const float *q, const C *k_cache, const C *v_cache, int64_t pos0, int64_t T,
                     q35_attn_shape sh, int hpk, int R, float sc)
{
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    using L = q35_flash_layout<V, M>;
#if __CUDA_ARCH__ < 900
    /* clusters, or more shared memory than the architecture has: the launcher
     * never asks for them here (A100, Orin 163 KiB a block; sm_86, sm_89 99) */
    constexpr unsigned optin = __CUDA_ARCH__ == 800 || __CUDA_ARCH__ == 870 ? 166912 : 101376;
    if (SPLIT > 1 || L::bytes + 2 * MAX_M * sizeof(float) > optin)
        __trap();
#endif
    constexpr int N = V::kv_tile, SLABS = V::slabs, DS = V::dsplit, THREADS = L::threads;
    constexpr int WD = HD / DS, NP = N / DS, NU = N / Q35_FLASH_UNIT, GROUP = 16 * SLABS;
    static_assert(NU == 2 || NU == 4, "a tile is 2 or 4 units");
    static_assert(DS == 1 || (DS == 2 && N == 64), "the P exchange's rows are 8 chunks (N = 64)");
    using Stage = typename std::conditional<V::ring, q35_flash_ring<THREADS, V::depth, C>,
                                            q35_flash_regs<THREADS, V::depth, C>>::type;
    extern __shared__ __align__(16) unsigned char smem[];
    const uint32_t s0 = (uint32_t)__cvta_generic_to_shared(smem);
    const uint32_t sQ = s0, sK = s0 + L::k, sV = s0 + L::v;
    const uint32_t xch = s0 + L::x; /* DS > 1: [M][DS] f32, the row maxima, then the row sums */

    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, c = lane % 4;
    const int grp = warp / DS, part = warp % DS; /* the row group, the share of it */
    /* block x: split = x % SPLIT (the rank in its cluster), then the KV groups,
     * then the query tiles from the last (the longest rows) to the first, so the
     * heavy blocks of every group start first */
    const int n_qtiles = (int)((T + R - 1) / R);
    const int split = SPLIT > 1 ? (int)(blockIdx.x % SPLIT) : 0;
    const int unit = (int)(blockIdx.x / SPLIT), kvh = unit % sh.kv_heads;
    const int qtile = n_qtiles - 1 - unit / sh.kv_heads;
    const int r0 = qtile * R, n_ctx = (int)(pos0 + T); /* the launcher keeps pos0 + T <= INT32_MAX */
    const int rows_here = T - r0 < R ? (int)T - r0 : R;
    const int n_tiles = ((int)pos0 + r0 + rows_here - 1) / N + 1; /* to the block's last visible position */

    /* slab sl: M-rows GROUP grp + 16 sl + 0..15, one head's tile rows from
     * first(sl) - pos0 - r0 (R is 16 or a multiple of 32: the slabs of a group
     * are consecutive rows of one head, or row 0.. of two); the lane's rows are
     * M-rows mrow(sl, 0), mrow(sl, 1) (g, g + 8), which see positions up to
     * first(sl) + g (+ 8) (q35_flash_first, q35_flash_mrow) */
    const int first0 = (int)pos0 + r0 + GROUP * grp % R, slab_step = R > 16 ? 16 : 0;
    const int warp_last = q35_flash_first(first0, slab_step, SLABS - 1) + 15;

    uint32_t qoff[4], koff[2], voff[4], kpair[4];
    q35_flash_ldsm_addresses<GROUP, NP, WD>(qoff, koff, voff, kpair, sQ, sK, sV, grp, part, lane);
    const uint32_t sPg = s0 + L::p + grp * GROUP * (2 * N);
    const uint32_t vother = (uint32_t)((1 - 2 * part) * NP * ROW);
    uint32_t poff[NP / 16];
    q35_flash_p_addresses<N, NP>(poff, sPg, part, lane);

    q35_flash_stage_q<M, THREADS>(sQ, q, sh.q_stride, T, r0, R, kvh, hpk);

    float acc[SLABS][WD / 8][4], row_max[SLABS][2], row_sum[SLABS][2];
    q35_flash_rows_clear<SLABS, WD>(acc, row_max, row_sum);

    /* ---- prologue: K of the first tile into shared memory, V's first units in flight ---- */
    q35_flash_feed<Stage, N, SPLIT, V::depth, C> feed;
    if constexpr (V::ring)
        feed.st.ring = s0 + L::ring;
    feed.kc = k_cache + (int64_t)kvh * HD, feed.vc = v_cache + (int64_t)kvh * HD;
    feed.ld = sh.kv_stride, feed.n_ctx = n_ctx, feed.n_tiles = n_tiles, feed.sK = sK, feed.sV = sV;
    feed.start(split);
#pragma unroll
    for (int u = 0; u < NU; u++)
        feed.advance(0, u, split);
    __syncthreads();

    for (int j = split; j < n_tiles; j += SPLIT) {
        const int p0 = j * N, next = j + SPLIT;
        const bool active = p0 <= warp_last; /* a group none of whose rows sees the tile skips it */
        float s[SLABS][NP / 8][4];
        uint32_t pa[NP / 16][SLABS][4]; /* P of the warp's positions as the A fragments of P V */
        q35_flash_scores<SLABS, N, NP, NU>(s, active, qoff, koff, kpair, feed, j);
        if (active) {
            q35_flash_mask<SLABS, N, NP>(s, p0, sc, first0, slab_step, part, g, c);
            float mx[SLABS][2];
            q35_flash_tile_max<SLABS, NP>(mx, s, row_max);
            if constexpr (DS > 1) /* the group's warps agree (the same value in each) */
                q35_flash_group_combine<SLABS, DS>(mx, true, xch, grp, part, g, c);
            q35_flash_softmax<SLABS, NP, WD>(s, mx, acc, row_max, row_sum);
            q35_flash_pack_p<SLABS, N, NP, DS>(pa, s, sPg, part, g, c);
        }
        feed.advance(1, NU - 1, j);
        __syncthreads();
        q35_flash_pv<SLABS, NP, WD, DS, N>(acc, pa, active, voff, poff, vother, feed, next);
        __syncthreads();
    }
    if constexpr (V::ring)
        q35_cp_async_wait<0>(); /* only empty groups are left; nothing lands after this */

    q35_flash_row_sums<SLABS>(row_sum);
    if constexpr (DS > 1) /* every warp is past its last read of xch (the loop's barriers) */
        q35_flash_group_combine<SLABS, DS>(row_sum, false, xch, grp, part, g, c);

    if (SPLIT == 1) {
        q35_flash_store<SLABS, WD, GROUP>(o, acc, row_sum, sh, T, r0, R, kvh, hpk, grp, part, g, c);
        return;
    }
#if __CUDA_ARCH__ >= 900
    __shared__ float sm_max[MAX_M], sm_sum[MAX_M];
    q35_flash_cluster_combine<M, SPLIT, SLABS, WD, GROUP, THREADS>(o, acc, row_max, row_sum, sm_max, sm_sum,
                                                                  (float *)smem, sh, T, r0, R, kvh, hpk, grp, part, g,
                                                                  c);
#endif
#else
    __trap();
#endif
}

/* The launch: dynamic shared memory opted in, clusters of SPLIT along x. */
template <class V, int M, int SPLIT, class C>
static int launch_flash(float *o, const float *q, const C *k, const C *v, int64_t pos0, int64_t T,
                        q35_attn_shape s, cudaStream_t stream, q35_error *err)
{
    using L = q35_flash_layout<V, M>;
    const int hpk = s.heads / s.kv_heads, R = M / hpk;
    const int64_t blocks = (T + R - 1) / R * s.kv_heads * SPLIT;
    if (blocks > INT32_MAX)
        return q35_fail(err, "attention_prefill_flash: T %lld needs too many blocks", (long long)T);
    if (Q35_CUDA_CHECK(cudaFuncSetAttribute(q35_flash_kernel<V, M, SPLIT, C>,
                                            cudaFuncAttributeMaxDynamicSharedMemorySize, (int)L::bytes),
                       err))
        return -1;
    q35_cluster_launch l(dim3((unsigned)blocks), dim3(L::threads), L::bytes, stream, SPLIT);
    if (Q35_CUDA_CHECK(cudaLaunchKernelEx(&l.cfg, q35_flash_kernel<V, M, SPLIT, C>, o, q, k, v, pos0, T, s, hpk, R,
                                          s.scale * LOG2E),
                       err))
        return -1;
    return Q35_LAUNCH_CHECK("attention_prefill_flash", err);
}

/* k, v: the caches, f32 (f16 false) or f16 (true). */
typedef int (*flash_launch_fn)(int m, int split, float *o, const float *q, const void *k, const void *v,
                               int64_t pos0, int64_t T, q35_attn_shape s, cudaStream_t stream, q35_error *err);

/* Variant V over caches of C at M rows (128 or 96) and split (1, 2 or 4). */
template <class V, class C>
static int launch_variant(int m, int split, float *o, const float *q, const void *kv, const void *vv, int64_t pos0,
                          int64_t T, q35_attn_shape s, cudaStream_t stream, q35_error *err)
{
    const C *k = static_cast<const C *>(kv), *v = static_cast<const C *>(vv);
    if (m == 128)
        return split == 1   ? launch_flash<V, 128, 1, C>(o, q, k, v, pos0, T, s, stream, err)
               : split == 2 ? launch_flash<V, 128, 2, C>(o, q, k, v, pos0, T, s, stream, err)
                            : launch_flash<V, 128, MAX_SPLIT, C>(o, q, k, v, pos0, T, s, stream, err);
    return split == 1   ? launch_flash<V, 96, 1, C>(o, q, k, v, pos0, T, s, stream, err)
           : split == 2 ? launch_flash<V, 96, 2, C>(o, q, k, v, pos0, T, s, stream, err)
                        : launch_flash<V, 96, MAX_SPLIT, C>(o, q, k, v, pos0, T, s, stream, err);
}

/* A variant's entry (q35_variant.impl): its dynamic shared memory at M = 128
 * and 96 (the same for both caches: an f16 unit uses half a ring slot), its
 * launchers over f32 and over f16 caches. */
struct q35_flash_impl {
    size_t smem128, smem96;
    flash_launch_fn launch_f32, launch_f16;
};

template <class V>
static constexpr q35_flash_impl flash_impl()
{
    return {q35_flash_layout<V, 128>::bytes, q35_flash_layout<V, 96>::bytes, launch_variant<V, float>,
            launch_variant<V, __half>};
}

/* The experiment variants (kernels/experiments/attention_flash.cu), where the
 * program links them (kernels/variant.h). */
extern "C" const q35_variant_table q35_attention_flash_experiments;

#endif /* Q35_KERNELS_ATTENTION_FLASH_CUH */
