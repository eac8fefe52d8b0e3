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
template <int NS, bool PIPE>
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
    if (warp == 4) {
        if (lane == 0) {
#pragma unroll 1
            for (int64_t c = 0; c < nc; c++) {
                const int s = (int)(c % NS);
                if (PIPE) /* chunk c's tiles written by the parallel pass (asked before the stage is free: off the
                             chain of refills when they were long since) */
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
    if (PIPE)
        q35_grid_dependency_wait(); /* done only once the parallel pass is: what follows in the stream sees both */
}

#else

template <int NS, bool PIPE>
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
    const auto state = q35_delta_chunk_state_tbwm<3, false>;
    if (w_make_maps(&maps, v, stride, T, d, W, P, G, Q, K, err) ||
        Q35_CUDA_CHECK(cudaFuncSetAttribute(state, cudaFuncAttributeMaxDynamicSharedMemorySize, wm_cfg::SMEM), err) ||
        launch_prep_tb(prep_tb_kh(d), optin, q, k, stride, g, beta, T, d, W, P, G, Q, K, stream, err))
        return -1;
    q35_cluster_launch l(dim3((unsigned)(d.hv * n)), dim3(160), wm_cfg::SMEM, (cudaStream_t)stream, (unsigned)cl);
    const unsigned *no_flags = nullptr;
    if (Q35_CUDA_CHECK(cudaLaunchKernelEx(&l.cfg, state, o, o_stride, S, T, d.hk, d.hv, d.dv, cl, no_flags, maps),
                       err))
        return q35_fail_context(err, "delta_chunk tb4wmkh: launching its state pass (clusters of %d)", cl);
    return Q35_LAUNCH_CHECK("q35_delta_chunk_state_tbwm", err);
}

/* ---- tb4wpkh: the parallel pass and the state pass at once ---------------------------------------- */

/* Why. tb4wtkh runs its two passes one after the other: under ncu (H100,
 * ee03ff5 / 9f79b56) at 4096 rows of the 9B the parallel pass takes ~61 us and
 * the state pass ~121, their sum the variant's 0.181 ms. The state pass needs
 * only chunk c's tiles to run chunk c, and the parallel pass makes them in
 * chunk order; its blocks (36 KiB of shared memory, 128 registers a thread at
 * the 9B) fit two beside a state block (w_cfg_n<2>: 138 KiB). So here the
 * parallel pass runs as a grid of at most two blocks an SM, each taking items
 * (chunk, key head) in chunk order and publishing each done (a flag a item,
 * in the workspace's U, which the tb variants do not use); the state pass is
 * tb4wmkh's kernel alone (clusters of 1, its producer warp, two stages)
 * launched with programmatic stream serialization right after it: every
 * parallel block lets it start at once (griddepcontrol.launch_dependents), and
 * its producer waits for chunk c's flag before bringing chunk c's stage. The
 * state pass cannot start before every parallel block has (the launch waits
 * for all of them to have said so), so it never waits on a block that is not
 * running: no deadlock whatever the residency. Where the device ignores the
 * early launch the two run in turn, flags all set. Bitwise tb4wtkh: the same
 * code on the same inputs.
 * Predicted (not measured): the variant ~max(state, parallel) plus the first
 * item's latency: at 4096 rows of the 9B ~0.13-0.15 ms on the H100 (0.181
 * tb4wtkh), ~0.045 at 1024 (0.059), ~0.075 at 2048 (0.098), if the state pass
 * slows under the parallel pass's L2 traffic by no more than ~15 %. */
template <bool QK16>
static __global__ void __launch_bounds__(THREADS, 4)
    q35_delta_chunk_prep_tb_khp(const float *q, const float *k, int64_t stride, const float *g, const float *beta,
                                int64_t T, int hk, int hv, __half *TBg, __half *Pg, float *Gg, __half *Qg, __half *Kg,
                                unsigned *ready)
{
#ifdef Q35_SM90A_CODE
    extern __shared__ __align__(16) unsigned char smem[];
    q35_grid_launch_dependents();
    const int items = (int)((T + CH - 1) / CH) * hk;
#pragma unroll 1
    for (int it = (int)blockIdx.x; it < items; it += (int)gridDim.x) {
        prep_tb_kh_item<QK16>(smem, it / hk, it % hk, q, k, stride, g, beta, T, hk, hv, TBg, Pg, Gg, Qg, Kg);
        __syncthreads(); /* every thread's writes of the item made (and its reads of shared memory: the next item's) */
        if (threadIdx.x == 0)
            q35_flag_publish(ready + it);
    }
#else
    (void)q, (void)k, (void)stride, (void)g, (void)beta, (void)T, (void)hk, (void)hv, (void)TBg, (void)Pg, (void)Gg,
        (void)Qg, (void)Kg, (void)ready;
    __trap(); /* built without sm_90a code: tbw_runs_on refuses first */
#endif
}

using wp_cfg = w_cfg_n<2>;

static int run_tbwp(int optin, float *o, int64_t o_stride, float *S, const float *q, const float *k, const float *v,
                    int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d, __half *W,
                    __half *U, __half *P, float *G, __half *Q, __half *K, q35_stream stream, q35_error *err)
{
    /* the device and its shared memory (wp_cfg::SMEM) were checked by check_variant */
    const int64_t items = (T + CH - 1) / CH * d.hk; /* flags, 4 bytes each, in U's area ([chunk][hv][dv][64] f16) */
    unsigned *ready = reinterpret_cast<unsigned *>(U);
    const int pbytes = kh_cfg::smem(d.hv / d.hk);
    if (pbytes > optin)
        return q35_fail(err, "delta_chunk tb4wpkh: its parallel pass needs %d bytes of shared memory a block, the "
                        "device allows %d", pbytes, optin);
    int dev = 0, sms = 0, sm_bytes = 0;
    if (Q35_CUDA_CHECK(cudaGetDevice(&dev), err) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), err) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(&sm_bytes, cudaDevAttrMaxSharedMemoryPerMultiprocessor, dev), err))
        return -1;
    /* parallel blocks an SM beside a state block (1 KiB reserved a block), 1 to 4 */
    int per_sm = (sm_bytes - wp_cfg::SMEM - 1024) / (pbytes + 1024);
    per_sm = per_sm < 1 ? 1 : per_sm > 4 ? 4 : per_sm;
    const int64_t pblocks = items < (int64_t)per_sm * sms ? items : (int64_t)per_sm * sms;
    w_maps maps;
    memset(&maps, 0, sizeof maps);
    const auto prep = q == nullptr ? q35_delta_chunk_prep_tb_khp<true> : q35_delta_chunk_prep_tb_khp<false>;
    const auto state = q35_delta_chunk_state_tbwm<2, true>;
    if (w_make_maps(&maps, v, stride, T, d, W, P, G, Q, K, err) ||
        Q35_CUDA_CHECK(cudaFuncSetAttribute(state, cudaFuncAttributeMaxDynamicSharedMemorySize, wp_cfg::SMEM), err) ||
        Q35_CUDA_CHECK(cudaFuncSetAttribute(prep, cudaFuncAttributeMaxDynamicSharedMemorySize, pbytes), err) ||
        Q35_CUDA_CHECK(cudaMemsetAsync(ready, 0, (size_t)items * sizeof(unsigned), (cudaStream_t)stream), err))
        return -1;
    prep<<<(unsigned)pblocks, THREADS, pbytes, (cudaStream_t)stream>>>(q, k, stride, g, beta, T, d.hk, d.hv, W, P, G,
                                                                        Q, K, ready);
    if (Q35_LAUNCH_CHECK("q35_delta_chunk_prep_tb_khp", err))
        return -1;
    q35_cluster_launch l(dim3((unsigned)(d.hv * (d.dv / 32))), dim3(160), wp_cfg::SMEM, (cudaStream_t)stream, 1);
    cudaLaunchAttribute early;
    early.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    early.val.programmaticStreamSerializationAllowed = 1;
    l.cfg.attrs = &early;
    l.cfg.numAttrs = 1;
    const unsigned *flags = ready;
    if (Q35_CUDA_CHECK(cudaLaunchKernelEx(&l.cfg, state, o, o_stride, S, T, d.hk, d.hv, d.dv, 1, flags, maps), err))
        return q35_fail_context(err, "delta_chunk tb4wpkh: launching its state pass (early, after the parallel pass)");
    return Q35_LAUNCH_CHECK("q35_delta_chunk_state_tbwm (early)", err);
}

extern const variant_impl k_tb4wmkh_impl = {nullptr, tb_cfg::C::SW, wm_cfg::SMEM, run_tbwm<8>, 2, tbw_runs_on};
extern const variant_impl k_tb4wm2kh_impl = {nullptr, tb_cfg::C::SW, wm_cfg::SMEM, run_tbwm<2>, 2, tbw_runs_on};
extern const variant_impl k_tb4wpkh_impl = {nullptr, tb_cfg::C::SW, wp_cfg::SMEM, run_tbwp, 2, tbw_runs_on};

} /* namespace q35_delta_chunk_kernels */
