/* The chunked delta rule's parallel pass by key head: tb4's (kernels/
 * delta_chunk_tb.cuh) one block per (chunk, key head) where tb4's is one per
 * (chunk, value head). The production tb4wtkh runs it (kernels/
 * delta_chunk_sm90.cu), and the experiment tb4kh (tb4's state pass after it;
 * kernels/experiments/delta_chunk.cu).
 *
 * Why. The R = Hv / Hk value heads that share a key head (R = 2 at the 4B and
 * 9B, 3 at the 27B) share K, Q, k.k and q.k: tb4 loads K and Q (64 KiB of f32)
 * and runs those products once per value head, R times in all. Here a block
 * does them once and then the gates, A, P and T beta of each of its R heads.
 * T's forward substitution, the longest chain of the pass (one thread a
 * column, ~2 000 dependent-in-part FMA), ran on 2 of tb4's 4 warps; here the
 * 128 threads solve two heads at once. Where R > 1 the pass has 1 / R of
 * tb4's blocks at about a block's time each (faster, though by less than that
 * suggests: bench/results/index.tsv, family kernels); no change where R = 1
 * (0.8B, 2B).
 *
 * Bitwise tb4: every value is computed by the same code from the same inputs
 * (the gates by prep_gates, K and Q by prep_load, k.k and q.k by
 * prep_products in the same order, A and P by prep_a_p, T by prep_solve), only
 * in other threads and blocks; the suite checks it with memcmp (the family's
 * first variant, tb4, against the others).
 *
 * Shared memory: K and Q [64][128] f16 (32 KiB), then the R heads' A [64][64 +
 * APAD] f32 (18 KiB each) in their place and past it; G and beta [R][64]. */
#ifndef Q35_KERNELS_DELTA_CHUNK_TB_KH_CUH
#define Q35_KERNELS_DELTA_CHUNK_TB_KH_CUH

#include "kernels/delta_chunk_tb.cuh"
#include "kernels/sm90.cuh"

namespace q35_delta_chunk_kernels {

/* How the parallel pass by key head gives T's columns to threads (prep_tb_kh_item). */
enum { SOLVE_HALVES, SOLVE_FULL, SOLVE_QUARTERS };

struct kh_cfg {
    static constexpr int KQ_BYTES = 2 * CH * DK * 2, A_BYTES = CH * (CH + APAD) * 4;
    __host__ __device__ static constexpr int a_area(int r) { return r * A_BYTES > KQ_BYTES ? r * A_BYTES : KQ_BYTES; }
    __host__ __device__ static constexpr int smem(int r) { return a_area(r) + 2 * r * CH * 4; }
};

/* Chunk c's key head kh by the block (its shared memory at smem, free at
 * entry; its last reads of it done at return only per thread). QK16: K and Q
 * already f16 in the workspace (q35_delta_chunk_qk16; q, k unused). SOLVE,
 * how T's columns are given to threads (every one bitwise the others):
 * SOLVE_HALVES threads 64 i .. 64 i + 63 the columns of heads i, i + 2, ..,
 * the second warp of each from row 32 (prep_solve); SOLVE_FULL the same, all
 * from row 0 (its A/B, the experiment tb4wm2khf); SOLVE_QUARTERS warp w the
 * columns 16 w .. 16 w + 15 of two heads at once (lanes 0-15 and 16-31), from
 * row 16 w (prep_solve_from): the experiment tb4wm2khq. */
template <bool QK16, int SOLVE = SOLVE_HALVES>
__device__ __forceinline__ void prep_tb_kh_item(unsigned char *smem, int c, int kh, const float *q, const float *k,
                                                int64_t stride, const float *g, const float *beta, int64_t T, int hk,
                                                int hv, __half *TBg, __half *Pg, float *Gg, __half *Qg, __half *Kg)
{
    const int r = hv / hk;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int64_t t0 = (int64_t)c * CH;
    const int n = T - t0 < CH ? (int)(T - t0) : CH;
    const uint32_t sK = (uint32_t)__cvta_generic_to_shared(smem), sQ = sK + CH * DK * 2;
    float *sA = reinterpret_cast<float *>(smem); /* head h's A at sA + h A_BYTES / 4 */
    float *sG = reinterpret_cast<float *>(smem + kh_cfg::a_area(r)), *sB = sG + r * CH; /* [R][64] each */

    /* head h = value head kh + h hk: its gates by warp h % 4 */
#pragma unroll 1
    for (int h = warp; h < r; h += 4)
        prep_gates(sG + h * CH, sB + h * CH, g, beta, t0, n, hv, kh + h * hk, 0, lane);
    __half *Kc = Kg + ((size_t)c * hk + kh) * CH * DK, *Qc = Qg + ((size_t)c * hk + kh) * CH * DK;
    if (QK16)
        prep_load_qk16(sK, sQ, Kc, Qc, n, true, tid);
    else
        prep_load<false>(sK, sQ, 0, 0, nullptr, nullptr, q, k, nullptr, stride, t0, n, kh, 0, 0, true, Kc, Qc, tid);
    __syncthreads(); /* K, Q and every head's gates */
    for (int i = tid; i < r * CH; i += THREADS)
        Gg[((size_t)c * hv + kh + i / CH * hk) * CH + i % CH] = sG[i];
    float kk[3][2][4] = {}, qk[3][2][4] = {};
    prep_products(kk, qk, sK, sQ, warp, lane);
    __syncthreads(); /* every warp's reads of K and Q: the A take their place */
#pragma unroll 1
    for (int h = 0; h < r; h++)
        prep_a_p(sA + h * (kh_cfg::A_BYTES / 4), Pg + ((size_t)c * hv + kh + h * hk) * CH * CH, kk, qk, sG + h * CH,
                 sB + h * CH, warp, lane, tid);
    __syncthreads();
    /* T beta */
    if (SOLVE == SOLVE_QUARTERS) {
        const int col = 16 * warp + lane % 16;
#pragma unroll 1
        for (int h = lane / 16; h - lane / 16 < r; h += 2) {
            if (h >= r) /* an odd head count's last round: this half-warp has none */
                continue;
            const float bcol = sB[h * CH + col];
            __half *tb = TBg + ((size_t)c * hv + kh + h * hk) * CH * CH + col;
            auto put = [&](int t, float x) { tb[(size_t)t * CH] = __float2half_rn(x * bcol); };
            const float *a = sA + h * (kh_cfg::A_BYTES / 4);
            if (warp == 0) /* a warp-uniform start: rows above 16 w are zero in its columns */
                prep_solve_from<0>(a, col, put);
            else if (warp == 1)
                prep_solve_from<16>(a, col, put);
            else if (warp == 2)
                prep_solve_from<32>(a, col, put);
            else
                prep_solve_from<48>(a, col, put);
        }
        return;
    }
    /* threads 64 i .. 64 i + 63 the columns of heads i, i + 2, .. */
    const int col = tid % CH;
#pragma unroll 1
    for (int h = tid / CH; h < r; h += THREADS / CH) {
        const float bcol = sB[h * CH + col];
        __half *tb = TBg + ((size_t)c * hv + kh + h * hk) * CH * CH + col;
        auto put = [&](int t, float x) { tb[(size_t)t * CH] = __float2half_rn(x * bcol); };
        prep_solve<SOLVE == SOLVE_FULL>(sA + h * (kh_cfg::A_BYTES / 4), col, put);
    }
}

template <bool QK16, int SOLVE = SOLVE_HALVES>
static __global__ void __launch_bounds__(THREADS, 4)
    q35_delta_chunk_prep_tb_kh(const float *q, const float *k, int64_t stride, const float *g, const float *beta,
                               int64_t T, int hk, int hv, __half *TBg, __half *Pg, float *Gg, __half *Qg, __half *Kg)
{
    extern __shared__ __align__(16) unsigned char smem[];
    /* a state pass launched early after this grid (tb4wm2kh) may start once every block has begun: it waits for
       this grid's end before it reads what this grid writes; a no-op for any other launch after it */
    q35_grid_launch_dependents();
    prep_tb_kh_item<QK16, SOLVE>(smem, (int)(blockIdx.x / (unsigned)hk), (int)(blockIdx.x % (unsigned)hk), q, k,
                                stride, g, beta, T, hk, hv, TBg, Pg, Gg, Qg, Kg);
}

/* The parallel pass by key head (run_tb_with's and launch_prep_tb's prep_tb);
 * SOLVE: how T's columns are given to threads (prep_tb_kh_item). */
template <int SOLVE = SOLVE_HALVES>
static inline prep_tb prep_tb_kh(q35_delta_dims d)
{
    return {{q35_delta_chunk_prep_tb_kh<false, SOLVE>, q35_delta_chunk_prep_tb_kh<true, SOLVE>}, d.hk,
            kh_cfg::smem(d.hv / d.hk), SOLVE == SOLVE_FULL       ? "q35_delta_chunk_prep_tb_kh (full solve)"
            : SOLVE == SOLVE_QUARTERS ? "q35_delta_chunk_prep_tb_kh (solve by quarters)"
                                      : "q35_delta_chunk_prep_tb_kh"};
}

} /* namespace q35_delta_chunk_kernels */

#endif /* Q35_KERNELS_DELTA_CHUNK_TB_KH_CUH */
