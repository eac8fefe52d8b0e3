/* The experiments' entries (for kernels/experiments/delta_chunk.cu's table):
 * tb4w (the wgmma state pass, its stages by cp.async) and tb4wt (by TMA), both
 * after tb4's parallel pass, run_w's instantiations of the state pass that the
 * production tb4wtkh runs (kernels/delta_chunk_sm90.cuh, which describes it;
 * kernels/delta_chunk_sm90.cu); and tb4wmkh, tb4wtkh with the tiles a value
 * head's blocks share multicast across them (below). Built for sm_90a alone
 * where the build has it, as q35_kernels_sm90. */
#include "kernels/cluster_launch.cuh"
#include "kernels/delta_chunk_sm90.cuh"

namespace q35_delta_chunk_kernels {

extern const variant_impl k_tb4w_impl = {nullptr, tb_cfg::C::SW, w_cfg::SMEM, run_w<false, false>, 2, tbw_runs_on};
extern const variant_impl k_tb4wt_impl = {nullptr, tb_cfg::C::SW, w_cfg::SMEM, run_w<true, false>, 2, tbw_runs_on};

/* ---- tb4wmkh: the state pass's shared tiles multicast across a value head's blocks ---------------- */

/* tb4wmkh's stages: three (a stage is refilled once every block of the
 * cluster has released it, a chunk and more after its last read). */
using wm_cfg = w_cfg_n<3>;

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
 * Why. Under ncu (H100, ee03ff5) tb4wt's state pass read L2 72-79 % busy:
 * each of a head's four blocks brings K, Q, P and T beta (48 KiB) and its V
 * slice and G (8.25 KiB) a chunk, 56 KiB a block, ~460 MB over 4096 rows of
 * the 9B. Here a block's L2 reads are 12 + 8.25 KiB a chunk (2.8x fewer).
 * Predicted (not measured): the state pass ~120 -> ~85-95 us under ncu at
 * 4096 rows, the variant ~0.179 -> ~0.15 ms on that H100, its chain of
 * dependent products a chunk then the bound; at risk: a cluster's four
 * blocks must be resident at once (one an SM: 32 clusters of 4 need four
 * free SMs in a GPC each) and move in step (a slow block holds the others'
 * refills).
 *
 * Measured (H100, 9f79b56): tb4wmkh 0.259 ms at 4096 rows of the 9B against
 * tb4wtkh's 0.181, bitwise it (the suite, memcheck clean). ncu: the state
 * pass 219 us against 121; at most 30 clusters of 4 resident (ncu's Max
 * Active Clusters, one block an SM) where the 9B's grid is 32, so two waves
 * of ~110 us, a wave ~10 % under tb4wt's pass (L2 36 % busy). tb4wm2kh: pairs
 * of blocks, L2 reads 32 KiB a block a chunk, 64 clusters of 2 (predicted
 * resident in one wave: ~115 us, the variant ~0.175 ms). */
static __global__ void __launch_bounds__(160, 1)
    q35_delta_chunk_state_tbwm(float *o, int64_t o_stride, float *S, int64_t T, int hk, int hv, int dv, int cl,
                               const __grid_constant__ w_maps maps)
{
    using W = wm_cfg;
    constexpr int NS = 3;
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
    if (warp == 4) {
        if (lane == 0) {
#pragma unroll 1
            for (int64_t c = 0; c < nc; c++) {
                const int s = (int)(c % NS);
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
}

#else

static __global__ void q35_delta_chunk_state_tbwm(float *o, int64_t o_stride, float *S, int64_t T, int hk, int hv,
                                                  int dv, int cl, const __grid_constant__ w_maps maps)
{
    (void)o, (void)o_stride, (void)S, (void)T, (void)hk, (void)hv, (void)dv, (void)cl, (void)maps;
    __trap(); /* built without sm_90a code: tbw_runs_on refuses first */
}

#endif /* Q35_SM90A_CODE */

/* Both passes, the state pass in clusters of MOST blocks (of the head's n =
 * dv / 32 when fewer; 1 where n is not a multiple of MOST), at most 8: the
 * portable cluster size. */
template <int MOST>
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
    if (w_make_maps(&maps, v, stride, T, d, W, P, G, Q, K, err) ||
        Q35_CUDA_CHECK(cudaFuncSetAttribute(q35_delta_chunk_state_tbwm, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            wm_cfg::SMEM),
                       err) ||
        launch_prep_tb(prep_tb_kh(d), optin, q, k, stride, g, beta, T, d, W, P, G, Q, K, stream, err))
        return -1;
    q35_cluster_launch l(dim3((unsigned)(d.hv * n)), dim3(160), wm_cfg::SMEM, (cudaStream_t)stream, (unsigned)cl);
    if (Q35_CUDA_CHECK(cudaLaunchKernelEx(&l.cfg, q35_delta_chunk_state_tbwm, o, o_stride, S, T, d.hk, d.hv, d.dv, cl,
                                          maps),
                       err))
        return q35_fail_context(err, "delta_chunk tb4wmkh: launching its state pass (clusters of %d)", cl);
    return Q35_LAUNCH_CHECK("q35_delta_chunk_state_tbwm", err);
}

extern const variant_impl k_tb4wmkh_impl = {nullptr, tb_cfg::C::SW, wm_cfg::SMEM, run_tbwm<8>, 2, tbw_runs_on};
extern const variant_impl k_tb4wm2kh_impl = {nullptr, tb_cfg::C::SW, wm_cfg::SMEM, run_tbwm<2>, 2, tbw_runs_on};

} /* namespace q35_delta_chunk_kernels */
