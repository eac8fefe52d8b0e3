/* The delta-rule scan's kernel and its launch, one instantiation per variant
 * layout (q35_delta_cfg, kernels/delta_rule_step.cuh): the production variants
 * in kernels/delta_rule.cu, the experiments in kernels/experiments/delta_rule.cu.
 * kernels/delta_rule.cu's header says how the scan works. */
#ifndef Q35_KERNELS_DELTA_RULE_SCAN_CUH
#define Q35_KERNELS_DELTA_RULE_SCAN_CUH

#include "kernels/delta_rule.h"
#include "kernels/delta_rule_step.cuh"
#include "kernels/variant.h"
#include "kernels/sm90.cuh" /* q35_grid_chain */

#include <cuda_runtime.h>
#include <stdint.h>

template <class C>
__global__ void __launch_bounds__(32 * C::WARPS, 1) q35_delta_scan_kernel(float *o, int64_t o_stride, float *S,
                                                                        const float *q, const float *k, const float *v,
                                                                        int64_t stride, const float *g,
                                                                        const float *beta, int64_t T, int hk, int hv,
                                                                        int dv)
{
    q35_grid_chain(); /* the grids before and after it (kernels/sm90.cuh) */
    using tile_t = q35_delta_tile<C::ROWS>;
    using token_t = q35_delta_token<C::M, C::RPL>;
    extern __shared__ float4 q35_delta_smem[];
    tile_t *tiles = reinterpret_cast<tile_t *>(q35_delta_smem);
    const int blocks_per_head = dv / C::ROWS;
    const int j = blockIdx.x / blocks_per_head, c0 = (blockIdx.x % blocks_per_head) * C::ROWS, kh = j % hk;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, sub = C::sub(lane);
    const int r0 = (warp * C::GROUPS + C::group(lane)) * C::RPL; /* the group's first row in the block */
    const float *vj = v + (int64_t)j * dv;
    /* after the S.q reduction, lane sub holds row `row`'s sum and writes that row's o
     * (PF); else lane 0 of the group writes every row's */
    const int row = C::PF ? sub / (C::LANES / C::RPL) : 0;
    const bool writes = C::PF ? sub % (C::LANES / C::RPL) == 0 : sub == 0;
    float *out = o + (int64_t)j * dv + c0 + r0 + row; /* for the token at hand */

    float4 st[C::RPL][C::M];
    float4 qprev[C::M] = {}; /* NS: the previous token's q */
    q35_delta_state_io<C, false>(st, S + ((int64_t)j * dv + c0 + r0) * DK, sub);

    const int64_t ntiles = (T + TILE - 1) / TILE;
    q35_delta_load_tile<32 * C::WARPS>(&tiles[0], q, k, vj, stride, g, beta, 0, (int)(T < TILE ? T : TILE), kh, j,
                                       c0, hv);
    q35_cp_async_commit();
    for (int64_t it = 0; it < ntiles; it++) {
        if (it + 1 < ntiles) {
            const int64_t t1 = (it + 1) * TILE;
            q35_delta_load_tile<32 * C::WARPS>(&tiles[(it + 1) & 1], q, k, vj, stride, g, beta, t1,
                                               (int)(T - t1 < TILE ? T - t1 : TILE), kh, j, c0, hv);
        }
        q35_cp_async_commit(); /* possibly empty: the group count stays one ahead */
        q35_cp_async_wait_one();
        __syncthreads();
        const tile_t *tile = &tiles[it & 1];
        const int n = (int)(T - it * TILE < TILE ? T - it * TILE : TILE);
        q35_delta_prepare_tile<C::WARPS, !C::NS>(&tiles[it & 1], n);
        __syncthreads();
        token_t cur;
        if constexpr (C::PF)
            q35_delta_read_token<C>(cur, tile, 0, sub, r0);
        constexpr int UNROLL = C::PF ? 2 : 1; /* two tokens a pass: cur and next trade registers, no copies */
#pragma unroll UNROLL
        for (int tt = 0; tt < n; tt++) {
            if constexpr (!C::PF)
                q35_delta_read_token<C>(cur, tile, tt, sub, r0);
            token_t next; /* with PF, token tt+1's operands load while token tt runs */
            if constexpr (C::PF)
                q35_delta_read_token<C>(next, tile, tt + 1 < n ? tt + 1 : tt, sub, r0);
            if constexpr (C::NS) { /* token tt-1's output, from the state it left */
                q35_delta_token_step<C>(st, cur, qprev, out - o_stride, writes && (it > 0 || tt > 0), row, sub);
#pragma unroll
                for (int m = 0; m < C::M; m++)
                    qprev[m] = cur.q[m];
            } else {
                q35_delta_token_step<C>(st, cur, cur.q, out, writes, row, sub);
            }
            if constexpr (C::PF)
                cur = next;
            out += o_stride;
        }
        __syncthreads(); /* the next iteration's copies overwrite the tile just read */
    }
    if constexpr (C::NS) { /* the last token's output */
        float pq[C::RPL];
        q35_delta_partial_sq<C>(pq, st, qprev);
        q35_delta_write_output<C>(pq, 0.0f, 0.0f, 0.0f, out - o_stride, writes, sub);
    }
    q35_delta_state_io<C, true>(st, S + ((int64_t)j * dv + c0 + r0) * DK, sub);
}

typedef int (*q35_delta_launcher)(const char *name, float *o, int64_t o_stride, float *S, const float *q,
                                  const float *k, const float *v, int64_t stride, const float *g, const float *beta,
                                  int64_t T, q35_delta_dims d, q35_stream stream, q35_error *err);

template <class C>
static int launch_scan(const char *name, float *o, int64_t o_stride, float *S, const float *q, const float *k,
                  const float *v, int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d,
                  q35_stream stream, q35_error *err)
{
    const int smem = 2 * (int)sizeof(q35_delta_tile<C::ROWS>);
    auto kernel = q35_delta_scan_kernel<C>;
    /* more than 48 KiB of dynamic shared memory: allowed per function and device, so
     * on every launch; the largest carveout, so that small blocks fit several an SM */
    if (Q35_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem), err) ||
        Q35_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout,
                                            cudaSharedmemCarveoutMaxShared),
                       err))
        return -1;
    const unsigned blocks = (unsigned)(d.hv * (d.dv / C::ROWS));
    kernel<<<blocks, 32 * C::WARPS, smem, stream>>>(o, o_stride, S, q, k, v, stride, g, beta, T, d.hk, d.hv, d.dv);
    return Q35_LAUNCH_CHECK(name, err);
}

/* A variant's entry (q35_variant.impl): its rows per block, its launcher. */
struct q35_delta_scan_impl {
    int rows; /* per block: dv must be a multiple */
    q35_delta_launcher launch;
};

template <int LANES, int RPL, int WARPS, bool PF, bool IL, bool NS>
static constexpr q35_delta_scan_impl scan_impl()
{
    using C = q35_delta_cfg<LANES, RPL, WARPS, PF, IL, NS>;
    return {C::ROWS, launch_scan<C>};
}

/* The experiment variants (kernels/experiments/delta_rule.cu), where the
 * program links them (kernels/variant.h). */
extern "C" const q35_variant_table q35_delta_rule_experiments;

#endif /* Q35_KERNELS_DELTA_RULE_SCAN_CUH */
