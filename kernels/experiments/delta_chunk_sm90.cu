/* The experiments' entries (for kernels/experiments/delta_chunk.cu's table):
 * tb4w (the wgmma state pass, its stages by cp.async) and tb4wt (by TMA), both
 * after tb4's parallel pass, run_w's instantiations of the state pass that the
 * production tb4wtkh runs; tb4wmkh, the production tb4wm2kh's multicast state
 * pass in clusters of a value head's four blocks (both in
 * kernels/delta_chunk_sm90.cuh, which describes them;
 * kernels/delta_chunk_sm90.cu); tb4wm2kho, tb4wm2khf, tb4wm2khq and tb4wpkh (below). Built for sm_90a alone
 * where the build has it, as q35_kernels_sm90. */
#include "kernels/delta_chunk_sm90.cuh"

namespace q35_delta_chunk_kernels {

extern const variant_impl k_tb4w_impl = {nullptr, tb_cfg::C::SW, w_cfg::SMEM, run_w<false, false>, 2, tbw_runs_on};
extern const variant_impl k_tb4wt_impl = {nullptr, tb_cfg::C::SW, w_cfg::SMEM, run_w<true, false>, 2, tbw_runs_on};
extern const variant_impl k_tb4wmkh_impl = {nullptr, tb_cfg::C::SW, wm_cfg::SMEM, run_tbwm<8>, 2, tbw_runs_on};

/* tb4wm2kho: tb4wm2kh's state pass launched in stream order after the
 * parallel pass, tb4wm2kh's earlier launch (the A/B of its early launch;
 * kernels/delta_chunk_sm90.cuh, WM_EARLY). */
extern const variant_impl k_tb4wm2kho_impl = {nullptr, tb_cfg::C::SW, wm_cfg::SMEM, run_tbwm<2, false>, 2,
                                               tbw_runs_on};

/* tb4wm2khf: tb4wm2kh with its parallel pass's solve from row 0 in every
 * column, the form before the second warp's columns started at row 32
 * (kernels/delta_chunk_prep.cuh, prep_solve): the A/B of that change and its
 * bitwise oracle (the family's suite holds the two to the same bits). */
extern const variant_impl k_tb4wm2khf_impl = {nullptr, tb_cfg::C::SW, wm_cfg::SMEM,
                                               run_tbwm<2, true, SOLVE_FULL>, 2, tbw_runs_on};

/* tb4wm2khq: tb4wm2kh with T's columns given to the parallel pass's warps by
 * quarters (prep_tb_kh_item's SOLVE_QUARTERS: warp w the columns 16 w .. 16 w +
 * 15 of two heads at once, from row 16 w), bitwise it. Why: the production
 * halves leave two warps of a block at 2016 multiply-adds a thread and two at
 * 496 (5024 a block's four warps, at the 9B's two heads a block); by quarters
 * the warps take 2016, 1128, 496 and 120 (3760, a quarter fewer), the longest
 * chain the same: a gain only where the parallel pass is issue-limited (long
 * prompts), none where one wave's longest chain bounds it; at risk: two heads' rows of A read by one warp's LDS.128 (two
 * addresses a load) and T beta stored in 32-byte runs a head. */
extern const variant_impl k_tb4wm2khq_impl = {nullptr, tb_cfg::C::SW, wm_cfg::SMEM,
                                               run_tbwm<2, true, SOLVE_QUARTERS>, 2, tbw_runs_on};

/* ---- tb4wpkh: the parallel pass and the state pass at once ---------------------------------------- */

/* Why. tb4wtkh runs its two passes one after the other, its time their sum.
 * The state pass needs
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
 * The aim: the variant ~max(state, parallel) plus the first item's latency.
 * Not kept: slower than tb4wtkh (bench/results/index.tsv, family kernels).
 * The parallel pass is latency-bound, its throughput at two blocks an SM not
 * its throughput at four: at half its blocks it takes about as long as the
 * state pass it was to hide under, and the two contend. */
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
    const auto state = q35_delta_chunk_state_tbwm<2, WM_FLAGS>;
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
    l.early(); /* no clusters: the early launch its one attribute */
    const unsigned *flags = ready;
    if (Q35_CUDA_CHECK(cudaLaunchKernelEx(&l.cfg, state, o, o_stride, S, T, d.hk, d.hv, d.dv, 1, flags, maps), err))
        return q35_fail_context(err, "delta_chunk tb4wpkh: launching its state pass (early, after the parallel pass)");
    return Q35_LAUNCH_CHECK("q35_delta_chunk_state_tbwm (early)", err);
}

extern const variant_impl k_tb4wpkh_impl = {nullptr, tb_cfg::C::SW, wp_cfg::SMEM, run_tbwp, 2, tbw_runs_on};

} /* namespace q35_delta_chunk_kernels */
