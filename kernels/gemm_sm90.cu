/* The sm_90a [gate | up] GEMM with SwiGLU in its epilogue, and the plain f16
 * GEMM on the same kernels (kernels/gemm_sm90.h says what they compute and
 * refuse). The plain form tiles 256 output columns a block, w's rows n0 ..
 * n0+127 and n0+128 .. n0+255 as the two boxes (b2 = 128 where [gate | up]
 * has F), so its accumulator's columns are the output's in order; rows of w
 * past n are TMA's zeros and their columns are not stored.
 *
 * Work split. Tile t takes the 128 rows m0 = 128 (t % m_tiles) of x and
 * column tile t / m_tiles: for [gate | up] the 128 output columns n0 = 128
 * (t / m_tiles), that is w's gate rows n0 .. n0+127 and up rows F+n0 ..
 * F+n0+127 (the second box b2 = F below the first); for the plain product
 * 256 columns n0 = 256 (t / m_tiles), w's rows n0 .. n0+255 (b2 = 128).
 * Consecutive tiles share one w tile (w is larger than L2; x, T x K, is read
 * again from L2 for each column tile). A block takes tile blockIdx.x (or,
 * persistent, every gridDim.x-th from it).
 *
 * 384 threads, three warp groups:
 *   producer    warp group 0 (setmaxnreg down to 40): one thread walks the K
 *               steps s = 0 .. K/64 - 1, each x's 128 x 64 box and w's two
 *               128 x 64 boxes (gate, up: 256 rows together, 32 KiB) by TMA
 *               (128-byte swizzle) into stage s % 4 of the ring once both
 *               consumers released it (mbarrier `empty`), completing on
 *               `full` (48 KiB a stage);
 *   consumers   warp groups 1, 2 (setmaxnreg up to 232), 64 rows each:
 *     D[64][256] += X[64][64] W[256][64]^T   4 wgmma m64n256k16 SS a K step
 *               (both operands K-major, the descriptors stepping 32 bytes a
 *               k16 step, as the flash kernel's S = Q K^T), committed as one
 *               group; the group of the step before waited for (wait_group 1:
 *               one step always queued behind the running one) and its stage
 *               released; after the last, wait_group 0.
 *   epilogue    accumulator column c < 128 is gate column n0 + c and c + 128
 *               the up column beside it, in the same thread (n8 tiles i and
 *               i + 16 of the m64n256 layout): y16 = f16(q35_swiglu(g, u)),
 *               f16 pairs stored straight from registers (rows past T
 *               skipped); or (f32 form) g and u as float pairs at gu's
 *               columns n0 + c and F + n0 + c.
 * Shared memory: 4 stages x (16 + 32) KiB + the barriers, 1 KiB aligned (the
 * swizzle's 8-row atoms): 194 KiB + 1 KiB of alignment; one block an SM.
 * Variants: simple (the above; the oracle) and mcast:
 * blocks in clusters of 2 (consecutive row tiles of one column tile: the row
 * tiles rounded up to an even count) share the w tile, rank 0 loading the
 * gate box and rank 1 the up box, each by TMA multicast into both blocks at
 * the same offset, completing on both blocks' `full` (each still expects 48
 * KiB: its x box and both halves); a stage is reused only when both blocks'
 * consumers released it, so lane 0 of each consumer warp arrives on both
 * blocks' `empty` (16 a phase, the remote one through mapa), and the blocks
 * meet at a cluster barrier after the barriers' init and before leaving. L2
 * to SM traffic a K step: 32 KiB a block instead of 48. The same products in
 * the same order: simple's bits. persist and mcast_persist: simple's and
 * mcast's blocks made persistent, a block an SM (whole clusters) walking the
 * tiles t = blockIdx.x, + gridDim.x, ... through one ring (the step count
 * running on across tiles, each tile's last stage released too), so the
 * producer loads the next tile while the consumers store this one; a
 * cluster's two blocks take tiles t and t + 1 of one column tile at every
 * step. The same bits as simple.
 * Why: SwiGLU in the epilogue saves its own pass over [gate | up], a gain
 * where the product itself runs near cuBLASLt's rate; at that rate the 48 KiB
 * a block reads from L2 a K step is near what L2 serves, which mcast's third
 * less relieves. A w box wholly past the tensor's rows (the
 * plain product's second box where n - n0 <= 128) is TMA's zeros and still
 * completes its bytes (the PTX ISA's out-of-bounds fill; the plain suite's
 * odd shapes are the first to run it; x's boxes never are: see
 * gemm_produce). */
#include "kernels/gemm_sm90.h"
#include "kernels/cluster_launch.cuh"
#include "kernels/reduce.cuh"
#include "kernels/sm90.cuh"
#include "kernels/tma.h"
#include "kernels/variant.h"

#include <cuda_runtime.h>
#include <stdint.h>

#ifndef Q35_SM90
#define Q35_SM90 0
#endif

#define BM 128                       /* rows of x a block (a pingpong tile) */
#define BK 64                        /* K a step: one 128-byte swizzled box row */
#define THREADS 384                  /* producer + 2 consumer warp groups */

/* A ring's layout: x's 128 x 64 box and w's two BNR x 64 boxes a stage
 * (BNR 128: the cooperative kernels, 48 KiB a stage; 64: pingpong's, 32 KiB),
 * NST stages, then the barriers (full, empty: 8 bytes each a stage). */
template <int BNR, int NST>
struct gemm_ring {
    static constexpr int STAGES = NST, W_BOX = BNR * BK * 2, A_BYTES = BM * BK * 2, B_BYTES = 2 * W_BOX;
    static constexpr int OFF_A = 0, OFF_B = OFF_A + STAGES * A_BYTES, OFF_BAR = OFF_B + STAGES * B_BYTES;
    static constexpr int SMEM = OFF_BAR + 1024 + 1024; /* barriers, alignment */
};
typedef gemm_ring<128, 4> coop_ring; /* simple, mcast, persist, mcast_persist */
typedef gemm_ring<64, 6> pp_ring;    /* pingpong */
#define BN 128                       /* the cooperative kernels' output columns a block (w: 2 x 128 rows) */
#define SMEM_BYTES (coop_ring::SMEM > pp_ring::SMEM ? coop_ring::SMEM : pp_ring::SMEM)

/* The kernel's scalars. */
struct gemm_args {
    uint16_t *y16; /* the SwiGLU form's output, or NULL */
    float *gu;     /* the f32 forms' output ([gate | up], or the plain y), or NULL */
    int64_t ld;    /* y16's or gu's row stride */
    int F, K, T, m_tiles, n_tiles;
    int n_step;    /* output columns a column tile: 128 ([gate | up]: F apart), 256 (plain) */
    int b2;        /* w's second box: rows n0 + b2 ([gate | up]: F; plain: 128) */
    int n_cols;    /* f32 forms: columns of y (2F; plain n): past them nothing is stored */
    int add;       /* f32 forms: y += the product */
    int split_from; /* persist_tail: the first tile taken in halves (the tail, 2 blocks a tile); tiles: none */
};

#ifdef Q35_SM90A_CODE

/* Thread 0 makes ring L's barriers: full (the producer's expect_tx) and
 * empty (`empty_count` consumer arrivals a phase), then fences their init;
 * the block (or cluster) meets after. */
template <class L>
__device__ __forceinline__ void gemm_ring_init(uint32_t base, uint32_t empty_count)
{
    if (threadIdx.x == 0) {
        for (int i = 0; i < L::STAGES; i++) {
            q35_mbar_init(base + L::OFF_BAR + 8 * i, 1);
            q35_mbar_init(base + L::OFF_BAR + 8 * (L::STAGES + i), empty_count);
        }
        q35_mbar_init_fence();
    }
}

/* The producer's thread: one tile's K steps through the ring, the first
 * being the block's g0-th step (a persistent block's tiles run on through
 * one ring); MCAST: this block's half of w's 256 rows (rank 0 the gate box,
 * rank 1 the up box) multicast to both blocks of the cluster, x's box its
 * own. */
template <class L, bool MCAST, bool HALF = false>
__device__ __forceinline__ void gemm_produce(const q35_tma_map *xmap, const q35_tma_map *wmap, uint32_t base,
                                             const gemm_args &a, int m0, int n0, int g0)
{
    const uint32_t full = base + L::OFF_BAR, empty = full + 8 * L::STAGES;
    const uint32_t rank = MCAST ? q35_cluster_rank() : 0;
    /* a block wholly past T (mcast's row tiles rounded up to whole clusters)
       loads the last tile's rows instead of a box wholly out of bounds; it
       stores nothing */
    const int steps = a.K / BK, xm = min(m0, (a.T - 1) / BM * BM);
    for (int s = 0; s < steps; s++) {
        const int g = g0 + s, st = g % L::STAGES;
        if (g >= L::STAGES)
            q35_mbar_wait(empty + 8 * st, (g / L::STAGES - 1) & 1);
        q35_mbar_arrive_expect_tx(full + 8 * st, L::A_BYTES + (HALF ? L::B_BYTES / 2 : L::B_BYTES));
        q35_tma_load_2d(base + L::OFF_A + st * L::A_BYTES, xmap, full + 8 * st, s * BK, xm);
        const uint32_t sb = base + L::OFF_B + st * L::B_BYTES;
        if (MCAST) {
            q35_tma_load_2d_mcast(sb + rank * L::W_BOX, wmap, full + 8 * st, s * BK, rank ? n0 + a.b2 : n0, 0x3);
        } else if (HALF) { /* wmap's boxes of 64 rows, one after the other: the m64n128 product's 128 */
            q35_tma_load_2d(sb, wmap, full + 8 * st, s * BK, n0);
            q35_tma_load_2d(sb + L::W_BOX / 2, wmap, full + 8 * st, s * BK, n0 + a.b2);
        } else {
            q35_tma_load_2d(sb, wmap, full + 8 * st, s * BK, n0);
            q35_tma_load_2d(sb + L::W_BOX, wmap, full + 8 * st, s * BK, n0 + a.b2);
        }
    }
}

/* A stage released by a consumer thread: its own arrival on the block's
 * `empty` (256 a phase); MCAST: lane 0 of each consumer warp on both blocks'
 * (16 a phase: 8 warps x 2 blocks), since either block's producer writes
 * into both. */
template <bool MCAST>
__device__ __forceinline__ void gemm_release(uint32_t bar)
{
    if (!MCAST) {
        q35_mbar_arrive(bar);
    } else if (threadIdx.x % 32 == 0) {
        q35_mbar_arrive_cluster(q35_mapa(bar, 0));
        q35_mbar_arrive_cluster(q35_mapa(bar, 1));
    }
}

/* One k16 step of a consumer group's product: m64n256 (a whole tile's 256 w
 * rows) or m64n128 (a half tile's 128: persist_tail's). */
__device__ __forceinline__ void gemm_wgmma(float (&d)[128], uint64_t da, uint64_t db, int scale_d)
{
    q35_wgmma_ss_m64n256k16<0>(d, da, db, scale_d);
}

__device__ __forceinline__ void gemm_wgmma(float (&d)[64], uint64_t da, uint64_t db, int scale_d)
{
    q35_wgmma_ss_m64n128k16(d, da, db, scale_d);
}

/* A consumer group's 64 rows (from row 64 c of the block) against the 256 w
 * rows (NA 128: d [64][256] f32, the m64n256 accumulator) or a half tile's
 * 128 (NA 64: the stage's first 128 w rows, m64n128) over all of K, the
 * tile's first step the block's g0-th; PERSIST: its last stage released too
 * (the block's next tile reuses the ring). */
template <bool MCAST, bool PERSIST, int NA>
__device__ __forceinline__ void gemm_mainloop(float (&d)[NA], uint32_t base, const gemm_args &a, int c, int g0)
{
    typedef coop_ring L;
    const uint32_t full = base + L::OFF_BAR, empty = full + 8 * L::STAGES;
    const int steps = a.K / BK;
#pragma unroll
    for (int i = 0; i < NA; i++)
        d[i] = 0.0f;
    for (int s = 0; s < steps; s++) {
        const int g = g0 + s, st = g % L::STAGES;
        q35_mbar_wait(full + 8 * st, (g / L::STAGES) & 1);
        const uint32_t sa = base + L::OFF_A + st * L::A_BYTES + c * (64 * 128), sb = base + L::OFF_B + st * L::B_BYTES;
        q35_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++)
            gemm_wgmma(d, q35_gmma_desc(sa + 32 * kk, 16, 1024), q35_gmma_desc(sb + 32 * kk, 16, 1024), (s | kk) != 0);
        q35_wgmma_commit();
        q35_wgmma_wait<1>();
        if (s > 0)
            gemm_release<MCAST>(empty + 8 * ((g - 1) % L::STAGES));
    }
    q35_wgmma_wait<0>();
    q35_reg_fence(d);
    if (PERSIST)
        gemm_release<MCAST>(empty + 8 * ((g0 + steps - 1) % L::STAGES));
}

/* pingpong's consumer group: a whole tile's 128 rows against w's 128 rows
 * (the two 64-row boxes) over all of K, rows 0..63 into d0 and 64..127 into
 * d1 (two m64n128 accumulators), the tile's first step the block's g0-th;
 * the group alone reads its stages (empty counts its 128 threads). Once it
 * has issued the tile's last step (every full phase of the tile passed) it
 * arrives on `next` (when given) so the other group may start its own tile:
 * a stage's phases are then waited for in ring order, which mbarrier parity
 * needs (a wait can tell only the current phase from the one before). */
__device__ __forceinline__ void pp_mainloop(float (&d0)[64], float (&d1)[64], uint32_t base, const gemm_args &a,
                                            int g0, int next)
{
    typedef pp_ring L;
    const uint32_t full = base + L::OFF_BAR, empty = full + 8 * L::STAGES;
    const int steps = a.K / BK;
#pragma unroll
    for (int i = 0; i < 64; i++)
        d0[i] = 0.0f, d1[i] = 0.0f;
    for (int s = 0; s < steps; s++) {
        const int g = g0 + s, st = g % L::STAGES;
        q35_mbar_wait(full + 8 * st, (g / L::STAGES) & 1);
        const uint32_t sa = base + L::OFF_A + st * L::A_BYTES, sb = base + L::OFF_B + st * L::B_BYTES;
        q35_wgmma_fence();
#pragma unroll
        for (int kk = 0; kk < BK / 16; kk++) {
            const uint64_t db = q35_gmma_desc(sb + 32 * kk, 16, 1024);
            q35_wgmma_ss_m64n128k16(d0, q35_gmma_desc(sa + 32 * kk, 16, 1024), db, (s | kk) != 0);
            q35_wgmma_ss_m64n128k16(d1, q35_gmma_desc(sa + 64 * 128 + 32 * kk, 16, 1024), db, (s | kk) != 0);
        }
        q35_wgmma_commit();
        if (s == steps - 1 && next)
            q35_named_arrive(next, 256);
        q35_wgmma_wait<1>();
        if (s > 0)
            q35_mbar_arrive(empty + 8 * ((g - 1) % L::STAGES));
    }
    q35_wgmma_wait<0>();
    q35_reg_fence(d0);
    q35_reg_fence(d1);
    q35_mbar_arrive(empty + 8 * ((g0 + steps - 1) % L::STAGES));
}

/* An m64nN accumulator out (NH = N / 16: the n8 tiles of each half): thread
 * (warp, g, q4) holds rows r0 + 16 warp + g + 8 ri and columns 8 i + 2 q4 + e
 * (d[4 i + 2 ri + e]); the first NH tiles are gate (or w's first box), the
 * rest up (w's second box, b2 rows on). SwiGLU: f16 output column n0 + 8 i +
 * 2 q4 (+1) of gate tile i and up tile i + NH; f32: column n0 + 8 i + 2 q4
 * (+1) of the first box, n0 + b2 + 8 (i - NH) + 2 q4 (+1) of the second. */
template <bool SWIGLU, int NH>
__device__ __forceinline__ void gemm_store(const float (&d)[8 * NH], const gemm_args &a, int r0, int n0, int tid)
{
    const int warp = tid / 32, g = tid % 32 / 4, q4 = tid % 4;
#pragma unroll
    for (int ri = 0; ri < 2; ri++) {
        const int row = r0 + 16 * warp + g + 8 * ri;
        if (row >= a.T)
            continue;
        if (SWIGLU) {
            uint16_t *yr = a.y16 + (int64_t)row * a.ld + n0 + 2 * q4;
#pragma unroll
            for (int i = 0; i < NH; i++)
                *(uint32_t *)(yr + 8 * i) =
                    q35_pack_f16x2(q35_swiglu(d[4 * i + 2 * ri], d[4 * (i + NH) + 2 * ri]),
                                   q35_swiglu(d[4 * i + 2 * ri + 1], d[4 * (i + NH) + 2 * ri + 1]));
        } else {
            float *yr = a.gu + (int64_t)row * a.ld;
#pragma unroll
            for (int i = 0; i < 2 * NH; i++) {
                const int col = n0 + (i < NH ? 8 * i : a.b2 + 8 * (i - NH)) + 2 * q4;
                float2 v = make_float2(d[4 * i + 2 * ri], d[4 * i + 2 * ri + 1]);
                if (col + 1 < a.n_cols) {
                    if (a.add) {
                        const float2 r = *(const float2 *)(yr + col);
                        v = make_float2(r.x + v.x, r.y + v.y);
                    }
                    *(float2 *)(yr + col) = v;
                }
            }
        }
    }
}

#endif /* Q35_SM90A_CODE */

/* The kernel, SwiGLU (f16 out) or f32 [gate | up] out: two instantiations of
 * one main loop. TAIL (persist_tail; PERSIST, not MCAST): the tiles from
 * a.split_from on, the last partial wave's, each taken by two blocks, a half
 * of the tile's w rows each (w64map's 64-row boxes: m64n128), so that wave
 * takes half a tile's time. */
template <bool SWIGLU, bool MCAST, bool PERSIST, bool TAIL>
__global__ void __launch_bounds__(THREADS, 1)
    q35_gemm_gu_sm90_kernel(const __grid_constant__ q35_tma_map xmap, const __grid_constant__ q35_tma_map wmap,
                            const __grid_constant__ q35_tma_map w64map, const gemm_args a)
{
#ifdef Q35_SM90A_CODE
    static_assert(!TAIL || (PERSIST && !MCAST), "persist_tail is persist's grid, without clusters");
    extern __shared__ __align__(1024) uint8_t smem[];
    const uint32_t base = (q35_sm90_smem(smem) + 1023) & ~1023u;
    /* the block's tiles: its own (blockIdx.x), or PERSIST every gridDim.x-th from
       it (a cluster's blocks stay on consecutive row tiles of one column tile:
       gridDim.x is a whole number of clusters, the row tiles too); TAIL: those
       before split_from (a whole number of waves), then half u = blockIdx.x of
       the tail's tiles (tile split_from + u / 2, w's rows 64 (u % 2) on of each box) */
    const int tiles = a.m_tiles * a.n_tiles, t_step = (int)gridDim.x;
    const int whole = TAIL ? a.split_from : tiles;
    gemm_ring_init<coop_ring>(base, MCAST ? 16 : 256); /* empty: gemm_release's arrivals */
    if (MCAST)
        q35_cluster_sync(); /* both blocks' barriers made before either multicasts or arrives */
    else
        __syncthreads();
    const int steps = a.K / BK, t0 = (int)blockIdx.x;
    const int u = t0, ut = whole + u / 2, un = a.n_step * (ut / a.m_tiles) + 64 * (u % 2);
    const bool half = TAIL && ut < tiles;
    if (threadIdx.x < 128) {
        q35_setmaxnreg_dec<40>();
        if (threadIdx.x == 0) {
            if (PERSIST) {
                int i = 0;
                for (int t = t0; t < whole; t += t_step, i++)
                    gemm_produce<coop_ring, MCAST>(&xmap, &wmap, base, a, BM * (t % a.m_tiles),
                                                   a.n_step * (t / a.m_tiles), i * steps);
                if (half)
                    gemm_produce<coop_ring, false, true>(&xmap, &w64map, base, a, BM * (ut % a.m_tiles), un, i * steps);
            } else {
                gemm_produce<coop_ring, MCAST>(&xmap, &wmap, base, a, BM * (t0 % a.m_tiles),
                                               a.n_step * (t0 / a.m_tiles), 0);
            }
        }
    } else {
        q35_setmaxnreg_inc<232>();
        const int c = (int)threadIdx.x / 128 - 1, tid = (int)threadIdx.x % 128;
        if (PERSIST) {
            int i = 0;
            {
                float d[128];
                for (int t = t0; t < whole; t += t_step, i++) {
                    gemm_mainloop<MCAST, PERSIST>(d, base, a, c, i * steps);
                    gemm_store<SWIGLU, 16>(d, a, BM * (t % a.m_tiles) + 64 * c, a.n_step * (t / a.m_tiles), tid);
                }
            }
            if (half) {
                float d[64];
                gemm_mainloop<false, true>(d, base, a, c, i * steps);
                gemm_store<SWIGLU, 8>(d, a, BM * (ut % a.m_tiles) + 64 * c, un, tid);
            }
        } else {
            float d[128];
            gemm_mainloop<MCAST, PERSIST>(d, base, a, c, 0);
            gemm_store<SWIGLU, 16>(d, a, BM * (t0 % a.m_tiles) + 64 * c, a.n_step * (t0 / a.m_tiles), tid);
        }
    }
    if (MCAST)
        q35_cluster_sync(); /* neither block leaves while the other may still arrive on its barriers */
#else
    (void)xmap, (void)wmap, (void)w64map, (void)a;
    __trap(); /* built without sm_90a code: the launcher refuses first */
#endif
}

/* pingpong: the persistent grid with its two consumer groups on different
 * tiles (CUTLASS's ping-pong): a tile is 128 rows of x by w's two 64-row
 * boxes (gate n0 .. n0+63 and up F+n0 .. : 64 SwiGLU outputs; plain: 128
 * outputs n0 .. n0+127), a group multiplies all of it (2 x wgmma
 * m64n128k16 a k16 step) while the other stores its last tile, so the
 * tensor cores stay fed through the epilogues. The block's tiles t =
 * blockIdx.x + i gridDim.x go to group i % 2, in order through one ring of 6
 * stages of 32 KiB; a group starts tile i once the other has issued tile i -
 * 1 (named barriers 1, 2). The same products in the same order along K as
 * simple's (wgmma's N only tiles the columns): simple's bits, which the suite
 * checks. */
template <bool SWIGLU>
__global__ void __launch_bounds__(THREADS, 1)
    q35_gemm_pp_sm90_kernel(const __grid_constant__ q35_tma_map xmap, const __grid_constant__ q35_tma_map wmap,
                            const __grid_constant__ q35_tma_map w64map, const gemm_args a)
{
#ifdef Q35_SM90A_CODE
    typedef pp_ring L;
    extern __shared__ __align__(1024) uint8_t smem[];
    const uint32_t base = (q35_sm90_smem(smem) + 1023) & ~1023u;
    const int tiles = a.m_tiles * a.n_tiles, t_step = (int)gridDim.x, t0 = (int)blockIdx.x;
    gemm_ring_init<L>(base, 128); /* empty: one group's threads */
    __syncthreads();
    const int steps = a.K / BK, mine = t0 < tiles ? (tiles - t0 + t_step - 1) / t_step : 0;
    if (threadIdx.x < 128) {
        q35_setmaxnreg_dec<40>();
        if (threadIdx.x == 0)
            for (int i = 0; i < mine; i++) {
                const int t = t0 + i * t_step;
                gemm_produce<L, false>(&xmap, &wmap, base, a, BM * (t % a.m_tiles), a.n_step * (t / a.m_tiles),
                                       i * steps);
            }
    } else {
        q35_setmaxnreg_inc<232>();
        const int c = (int)threadIdx.x / 128 - 1, tid = (int)threadIdx.x % 128;
        float d0[64], d1[64];
        for (int i = c; i < mine; i += 2) {
            if (i > 0)
                q35_named_sync(1 + c, 256); /* the other group issued tile i - 1 */
            pp_mainloop(d0, d1, base, a, i * steps, i + 1 < mine ? 2 - c : 0);
            const int t = t0 + i * t_step, m0 = BM * (t % a.m_tiles), n0 = a.n_step * (t / a.m_tiles);
            gemm_store<SWIGLU, 8>(d0, a, m0, n0, tid);
            gemm_store<SWIGLU, 8>(d1, a, m0 + 64, n0, tid);
        }
    }
#else
    (void)xmap, (void)wmap, (void)a;
    __trap(); /* built without sm_90a code: the launcher refuses first */
#endif
    (void)w64map;
}

int q35_gemm_sm90_built(void)
{
    return Q35_SM90;
}

int q35_gemm_sm90_supported(int device, q35_error *why)
{
    return q35_sm90_device_ok(device, Q35_SM90, SMEM_BYTES, "gemm_sm90", why);
}

/* A variant's kernels: SwiGLU (f16) and f32 out, its cluster size, whether
 * its grid is persistent (a block an SM, walking tiles), and w's box rows
 * (128: a tile's 256 w rows; pingpong 64: 128). */
typedef void (*gemm_kernel_fn)(q35_tma_map, q35_tma_map, q35_tma_map, gemm_args);
struct gemm_kernels {
    gemm_kernel_fn swiglu, f32;
    unsigned cluster;
    bool persist;
    int bnr;
    bool tail; /* the last partial wave's tiles in halves (persist_tail) */
};

static const gemm_kernels k_simple = {&q35_gemm_gu_sm90_kernel<true, false, false, false>,
                                      &q35_gemm_gu_sm90_kernel<false, false, false, false>, 1, false, 128, false};
static const gemm_kernels k_mcast = {&q35_gemm_gu_sm90_kernel<true, true, false, false>,
                                     &q35_gemm_gu_sm90_kernel<false, true, false, false>, 2, false, 128, false};
static const gemm_kernels k_persist = {&q35_gemm_gu_sm90_kernel<true, false, true, false>,
                                       &q35_gemm_gu_sm90_kernel<false, false, true, false>, 1, true, 128, false};
static const gemm_kernels k_mcast_persist = {&q35_gemm_gu_sm90_kernel<true, true, true, false>,
                                             &q35_gemm_gu_sm90_kernel<false, true, true, false>, 2, true, 128, false};
static const gemm_kernels k_pingpong = {&q35_gemm_pp_sm90_kernel<true>, &q35_gemm_pp_sm90_kernel<false>, 1, true,
                                        64, false};
static const gemm_kernels k_persist_tail = {&q35_gemm_gu_sm90_kernel<true, false, true, true>,
                                            &q35_gemm_gu_sm90_kernel<false, false, true, true>, 1, true, 128, true};

/* The variants: simple (each block loads its own boxes; the oracle), mcast
 * (blocks in clusters of 2 along the rows share the w tile, each loading half
 * of it multicast to both: 32 KiB a step from L2 a block instead of 48;
 * slower while its stage releases fenced the GPU, not yet timed since:
 * kernels/sm90.cuh's q35_mbar_arrive_cluster), persist
 * and mcast_persist (the two with a persistent grid), pingpong (its consumer groups on different tiles
 * of half the width, one's epilogue under the other's products: slower than
 * persist, its m64n128 pair and its TMA writes past what shared memory
 * serves; bench/results/index.tsv, family linear), persist_tail (persist with
 * the last partial wave's tiles split in two along w's rows, where that wave
 * fills at most half the SMs (kernels/gemm_sm90.h); m64n128 there, which
 * pingpong's run shows to be simple's bits); the
 * same products in the same order, so simple's bits. */
static const q35_variant k_table[] = {
    {"simple", 0, &k_simple},
    {"mcast", 1, &k_mcast},
    {"persist", 2, &k_persist},
    {"mcast_persist", 3, &k_mcast_persist},
    {"pingpong", 4, &k_pingpong},
    {"persist_tail", 5, &k_persist_tail},
};
static const q35_variant_set k_set = {Q35_VARIANT_TABLE(k_table), NULL, NULL};

Q35_VARIANT_REGISTRY(gemm_sm90, k_set)

int q35_gemm_sm90_variant_default(void)
{
    /* bitwise simple. persist: faster than simple at every shape benched; persist_tail: persist where the last
       wave is over half full, faster where it is not, most on narrow products of few tiles, the prefill within its
       noise (bench/results/index.tsv, family linear) */
    return q35_variant_find(&k_set, "persist_tail");
}

/* What a call asks of the kernels: its output (y16 for SwiGLU, else gu),
 * the form ([gate | up] with F, or plain: F 0), the columns stored (n_cols)
 * and add; w's rows. run() tiles the columns by the variant's box rows. */
struct gemm_call {
    uint16_t *y16;
    float *gu;
    int64_t ld, F, w_rows;
    int n_cols, add;
};

/* The refusals every form shares (the operands, T, K, the variant); 0 with
 * the variant resolved into *v, or -1. */
static int check_operands(const char *who, const uint16_t *x16, int64_t ldx, const uint16_t *w16, int64_t ldw,
                          int64_t K, int64_t T, int variant, const q35_variant **v, q35_error *err)
{
    *v = q35_variant_at(&k_set, variant == Q35_VARIANT_DEFAULT ? q35_gemm_sm90_variant_default() : variant);
    if (!*v)
        return q35_fail(err, "%s: gemm_sm90 has variants 0..%d, not %d", who, q35_variant_count(&k_set) - 1, variant);
    if (!x16 || !w16)
        return q35_fail(err, "%s: x16 %p, w16 %p (both wanted)", who, (const void *)x16, (const void *)w16);
    if (T < 0 || T > INT32_MAX - 2 * BM)
        return q35_fail(err, "%s: T %lld outside 0 .. %d", who, (long long)T, INT32_MAX - 2 * BM);
    if (K < BK || K % BK || K > INT32_MAX)
        return q35_fail(err, "%s: K %lld is not a multiple of %d (from %d to %d)", who, (long long)K, BK, BK,
                        INT32_MAX);
    if (ldx < K || ldx % 8 || ldx > INT32_MAX)
        return q35_fail(err, "%s: ldx %lld is not a multiple of 8 at least K %lld (TMA: 16-byte row strides)", who,
                        (long long)ldx, (long long)K);
    if (ldw < K || ldw % 8 || ldw > INT32_MAX)
        return q35_fail(err, "%s: ldw %lld is not a multiple of 8 at least K %lld (TMA: 16-byte row strides)", who,
                        (long long)ldw, (long long)K);
    if ((uintptr_t)x16 % 16 || (uintptr_t)w16 % 16)
        return q35_fail(err, "%s: x16 and w16 must be 16-byte aligned (TMA), not %p and %p", who,
                        (const void *)x16, (const void *)w16);
    return 0;
}

/* The launch, once the call's own refusals are made: the device, the maps,
 * the grid (whole clusters of row tiles; persistent: a block an SM). */
static int run(const char *who, const gemm_call &c, const uint16_t *x16, int64_t ldx, const uint16_t *w16,
               int64_t ldw, int64_t K, int64_t T, const q35_variant *v, q35_stream stream, q35_error *err)
{
    const gemm_kernels *ks = (const gemm_kernels *)v->impl;
    int dev = 0;
    if (Q35_CUDA_CHECK(cudaGetDevice(&dev), err))
        return -1;
    q35_error why = {{0}};
    if (!q35_gemm_sm90_supported(dev, &why))
        return q35_fail(err, "%s: %s", who, why.msg);
    if (T == 0)
        return 0;
    const uint64_t xdims[2] = {(uint64_t)K, (uint64_t)T}, xstrides[1] = {(uint64_t)ldx * 2};
    const uint64_t wdims[2] = {(uint64_t)K, (uint64_t)c.w_rows}, wstrides[1] = {(uint64_t)ldw * 2};
    const uint32_t xbox[2] = {BK, BM}, wbox[2] = {BK, (uint32_t)ks->bnr}, w64box[2] = {BK, 64};
    q35_tma_map xmap, wmap, w64map;
    if (q35_tma_map_f16(&xmap, x16, 2, xdims, xstrides, xbox, 1, who, err) ||
        q35_tma_map_f16(&wmap, w16, 2, wdims, wstrides, wbox, 1, who, err))
        return -1;
    if (!ks->tail) /* only persist_tail's halves read w64map */
        w64map = wmap;
    else if (q35_tma_map_f16(&w64map, w16, 2, wdims, wstrides, w64box, 1, who, err))
        return -1;
    /* a cluster's blocks take consecutive row tiles of one column tile: the row
       tiles rounded up to whole clusters (a block past T loads TMA's zeros, stores
       nothing) */
    const int cl = (int)ks->cluster, m_tiles = (int)((T + BM * cl - 1) / (BM * cl)) * cl;
    /* [gate | up]: bnr outputs a column tile, w's up rows F below; plain: 2 bnr
       outputs, w's rows n0 .. n0 + 2 bnr - 1 as two boxes */
    const int64_t n_tiles = c.F ? c.F / ks->bnr : (c.w_rows + 2 * ks->bnr - 1) / (2 * ks->bnr);
    const int n_step = c.F ? ks->bnr : 2 * ks->bnr, b2 = c.F ? (int)c.F : ks->bnr;
    const int64_t tiles = (int64_t)m_tiles * n_tiles;
    if (tiles < 1 || tiles > INT32_MAX)
        return q35_fail(err, "%s: %lld tiles (T %lld, %lld column tiles) outside 1 .. %d", who, (long long)tiles,
                        (long long)T, (long long)n_tiles, INT32_MAX);
    int64_t blocks = tiles, split_from = tiles;
    if (ks->persist) {
        int64_t wave = 0; /* a block an SM, whole clusters */
        if (q35_sm90_persistent_blocks(dev, INT32_MAX, cl, &wave, err))
            return -1;
        blocks = tiles < wave ? tiles : wave;
        const int64_t tail = tiles % wave;
        if (ks->tail && tail && 2 * tail <= wave) { /* the last wave's tiles in halves, on the SMs it leaves */
            split_from = tiles - tail;
            blocks = tiles < wave ? 2 * tiles : wave;
        }
    }
    const gemm_args a = {c.y16, c.gu, c.ld, (int)c.F, (int)K, (int)T, m_tiles, (int)n_tiles,
                         n_step, b2, c.n_cols, c.add, (int)split_from};
    const gemm_kernel_fn kernel = c.y16 ? ks->swiglu : ks->f32;
    if (Q35_CUDA_CHECK(cudaFuncSetAttribute((const void *)kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            SMEM_BYTES),
                       err))
        return -1;
    q35_cluster_launch l(dim3((unsigned)blocks), dim3(THREADS), SMEM_BYTES, (cudaStream_t)stream, ks->cluster);
    if (Q35_CUDA_CHECK(cudaLaunchKernelEx(&l.cfg, kernel, xmap, wmap, w64map, a), err))
        return q35_fail_context(err, "%s: launching the gemm_sm90 kernel (variant %s)", who, v->name);
    return Q35_LAUNCH_CHECK(ks->bnr == 64 ? "q35_gemm_pp_sm90_kernel" : "q35_gemm_gu_sm90_kernel", err);
}

/* The [gate | up] forms' column tiling: 128 outputs a tile, w's up rows F below. */
static int check_F(const char *who, int64_t F, q35_error *err)
{
    if (F < BN || F % BN || 2 * F > INT32_MAX)
        return q35_fail(err, "%s: F %lld is not a multiple of %d (from %d, 2F to %d)", who, (long long)F, BN, BN,
                        INT32_MAX);
    return 0;
}

static gemm_call gate_up_call(uint16_t *y16, float *gu, int64_t ld, int64_t F)
{
    return gemm_call{y16, gu, ld, F, 2 * F, (int)(2 * F), 0};
}

int q35_gemm_swiglu_sm90_f16(uint16_t *y16, int64_t ldy, const uint16_t *x16, int64_t ldx, const uint16_t *w16,
                             int64_t ldw, int64_t F, int64_t K, int64_t T, int variant, q35_stream stream,
                             q35_error *err)
{
    static const char *who = "gemm_swiglu_sm90_f16";
    const q35_variant *v;
    if (check_operands(who, x16, ldx, w16, ldw, K, T, variant, &v, err) || check_F(who, F, err))
        return -1;
    if (!y16)
        return q35_fail(err, "%s: y16 is NULL", who);
    if (ldy % 2)
        return q35_fail(err, "%s: ldy %lld is odd (f16 pairs are stored)", who, (long long)ldy);
    if (ldy < F || ldy > INT32_MAX)
        return q35_fail(err, "%s: ldy %lld < F %lld or past %d", who, (long long)ldy, (long long)F, INT32_MAX);
    if ((uintptr_t)y16 % 4)
        return q35_fail(err, "%s: y16 must be 4-byte aligned, not %p", who, (void *)y16);
    return run(who, gate_up_call(y16, NULL, ldy, F), x16, ldx, w16, ldw, K, T, v, stream, err);
}

int q35_gemm_gu_sm90_f32(float *gu, int64_t ldg, const uint16_t *x16, int64_t ldx, const uint16_t *w16, int64_t ldw,
                         int64_t F, int64_t K, int64_t T, int variant, q35_stream stream, q35_error *err)
{
    static const char *who = "gemm_gu_sm90_f32";
    const q35_variant *v;
    if (check_operands(who, x16, ldx, w16, ldw, K, T, variant, &v, err) || check_F(who, F, err))
        return -1;
    if (!gu)
        return q35_fail(err, "%s: gu is NULL", who);
    if (ldg < 2 * F || ldg > INT32_MAX)
        return q35_fail(err, "%s: ldg %lld < 2F = %lld", who, (long long)ldg, (long long)(2 * F));
    if (ldg % 2)
        return q35_fail(err, "%s: ldg %lld is odd (float pairs are stored)", who, (long long)ldg);
    if ((uintptr_t)gu % 8)
        return q35_fail(err, "%s: gu must be 8-byte aligned, not %p", who, (void *)gu);
    return run(who, gate_up_call(NULL, gu, ldg, F), x16, ldx, w16, ldw, K, T, v, stream, err);
}

int q35_gemm_sm90_f32(float *y, int64_t ldy, const uint16_t *x16, int64_t ldx, const uint16_t *w16, int64_t ldw,
                      int64_t n, int64_t K, int64_t T, int add, int variant, q35_stream stream, q35_error *err)
{
    static const char *who = "gemm_sm90_f32";
    const q35_variant *v;
    if (check_operands(who, x16, ldx, w16, ldw, K, T, variant, &v, err))
        return -1;
    if (!y)
        return q35_fail(err, "%s: y is NULL", who);
    if (n < 2 || n > INT32_MAX - 256)
        return q35_fail(err, "%s: n %lld is below 2 or past %d", who, (long long)n, INT32_MAX - 256);
    if (n % 2)
        return q35_fail(err, "%s: n %lld is odd (float pairs are stored)", who, (long long)n);
    if (ldy < n || ldy > INT32_MAX)
        return q35_fail(err, "%s: ldy %lld < n %lld or past %d", who, (long long)ldy, (long long)n, INT32_MAX);
    if (ldy % 2)
        return q35_fail(err, "%s: ldy %lld is odd (float pairs are stored)", who, (long long)ldy);
    if ((uintptr_t)y % 8)
        return q35_fail(err, "%s: y must be 8-byte aligned, not %p", who, (void *)y);
    const gemm_call c = {NULL, y, ldy, 0, n, (int)n, add != 0};
    return run(who, c, x16, ldx, w16, ldw, K, T, v, stream, err);
}
