/* The gated delta rule: the chunk-resident scan and the per-token step
 * (kernels/delta_rule.h).
 *
 * A value column c of head j evolves on its own: its state row S[j][c][0..dk)
 * only meets the shared k, q, g, beta of each token. So a block of WARPS warps
 * takes rows of one head, a group of LANES lanes RPL of them, the rows in
 * registers for the whole scan (q35_delta_cfg, kernels/delta_rule_step.cuh).
 * Lane s of a group holds float4 number LANES*m + s of each of its rows: its
 * float4 reads of k and q from shared memory are conflict-free, and each read
 * serves RPL rows. Per token, the spec's step in the form whose dot products
 * read the previous state, so one pass of reductions serves a token:
 *
 *     sk = S.k;  d = (v - e^g sk) beta;  S <- e^g S + d k
 *     o = (e^g S.q + d k.q) / sqrt(dk)      (k.q once per token of a tile)
 *  or o = S'.q / sqrt(dk), S' the new state (NS: computed while the next token
 *     runs, from the state that token reads, so S.k and S'.q share the pass)
 *
 * q/k (256 floats a token), v, g and beta are staged TILE tokens at a time,
 * double-buffered with cp.async so the next tile loads while this one runs; e^g
 * (and k.q) once per token of a tile. The per-token step is the same kernel with
 * T = 1, so a variant's scan is bitwise T of its steps.
 *
 * Variants (k_variants): rows1, rows2, lanes4 are the first three layouts (a row
 * per 8 lanes, two rows per 8 lanes, a row per 4 lanes; 4 warps) and their
 * arithmetic; the names of the others read r2 = 2 rows per 8-lane group,
 * l16 = 16 lanes a row (r2: 2 rows a group), w2/w8/w16 = warps a block (else 4),
 * p = prefetch and reduce-scatter (PF), n = output from the new state (NS),
 * i = interleaved groups (IL). Only LANES, RPL and NS choose the arithmetic:
 * rows2 = r2p, r2pn = r2pni = r2w2pn, l16r2pn = l16r2w8pn bit for bit. */
#include "kernels/delta_rule.h"
#include "kernels/delta_rule_step.cuh"

#include <cuda_runtime.h>
#include <stdint.h>

template <class C>
__global__ void __launch_bounds__(32 * C::WARPS, 1) q35_delta_scan_kernel(float *o, int64_t o_stride, float *S,
                                                                        const float *q, const float *k, const float *v,
                                                                        int64_t stride, const float *g,
                                                                        const float *beta, int64_t T, int hk, int hv,
                                                                        int dv)
{
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

static bool aligned16(const void *p)
{
    return ((uintptr_t)p & 15u) == 0;
}

typedef int (*q35_delta_launcher)(const char *name, float *o, int64_t o_stride, float *S, const float *q,
                                  const float *k, const float *v, int64_t stride, const float *g, const float *beta,
                                  int64_t T, q35_delta_dims d, q35_stream stream, q35_error *err);

template <class C>
static int launch(const char *name, float *o, int64_t o_stride, float *S, const float *q, const float *k,
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

/* A variant: its name, its rows per block, its launcher. */
struct q35_delta_variant {
    const char *name;
    int rows; /* per block: dv must be a multiple */
    q35_delta_launcher launch;
};

template <int LANES, int RPL, int WARPS, bool PF, bool IL, bool NS>
static constexpr q35_delta_variant variant(const char *name)
{
    using C = q35_delta_cfg<LANES, RPL, WARPS, PF, IL, NS>;
    return {name, C::ROWS, launch<C>};
}

static const q35_delta_variant k_variants[Q35_DELTA_VARIANTS] = {
    /*                 lanes rows warps  PF     IL     NS */
    variant<8, 1, 4, false, false, false>("rows1"),
    variant<8, 2, 4, false, false, false>("rows2"),
    variant<4, 1, 4, false, false, false>("lanes4"),
    variant<8, 2, 4, true, false, false>("r2p"),
    variant<8, 2, 4, true, false, true>("r2pn"),
    variant<8, 2, 4, true, true, true>("r2pni"),
    variant<8, 2, 2, true, false, true>("r2w2pn"),
    variant<16, 2, 4, true, false, true>("l16r2pn"),
    variant<16, 2, 8, true, false, true>("l16r2w8pn"),
    variant<16, 1, 16, true, false, true>("l16w16pn"),
};

const char *q35_delta_rule_variant_name(int variant)
{
    return variant >= 0 && variant < Q35_DELTA_VARIANTS ? k_variants[variant].name : "?";
}

int q35_delta_rule_variant_rows(int variant)
{
    return variant >= 0 && variant < Q35_DELTA_VARIANTS ? k_variants[variant].rows : 0;
}

int q35_delta_rule_default_variant(q35_delta_dims d)
{
    /* the fastest measured on an H200 at the 9B shape (bench/results/README.md):
     * r2pni (32 rows a block), else l16r2pn (16) */
    return d.dv % k_variants[5].rows == 0 ? 5 : 7;
}

int q35_delta_rule_scan_variant(int variant, float *o, int64_t o_stride, float *S, const float *q, const float *k,
                                const float *v, int64_t stride, const float *g, const float *beta, int64_t T,
                                q35_delta_dims d, q35_stream stream, q35_error *err)
{
    if (variant < 0 || variant >= Q35_DELTA_VARIANTS)
        return q35_fail(err, "delta_rule_scan: no variant %d (0..%d)", variant, Q35_DELTA_VARIANTS - 1);
    const q35_delta_variant *x = &k_variants[variant];
    const int rows = x->rows;
    if (d.dk != DK || d.dv < rows || d.dv % rows != 0 || d.hk < 1 || d.hv < 1 || d.hv % d.hk != 0)
        return q35_fail(err,
                        "delta_rule_scan %s: unsupported heads Hk %d Hv %d dk %d dv %d (this kernel needs dk = %d, dv a "
                        "multiple of %d, Hv a multiple of Hk)",
                        x->name, d.hk, d.hv, d.dk, d.dv, DK, rows);
    if (T < 0 || stride % 4 || o_stride % 4 || o_stride < (int64_t)d.hv * d.dv || !aligned16(q) || !aligned16(k) ||
        !aligned16(v) || !aligned16(o) || !aligned16(S))
        return q35_fail(err,
                        "delta_rule_scan: T %lld, stride %lld and o_stride %lld (multiples of 4, o_stride >= Hv*dv), "
                        "pointers 16-byte aligned (q %p k %p v %p o %p S %p)",
                        (long long)T, (long long)stride, (long long)o_stride, (const void *)q, (const void *)k,
                        (const void *)v, (const void *)o, (const void *)S);
    if (T == 0)
        return 0;
    return x->launch(x->name, o, o_stride, S, q, k, v, stride, g, beta, T, d, stream, err);
}

int q35_delta_rule_scan(float *o, int64_t o_stride, float *S, const float *q, const float *k, const float *v,
                        int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d,
                        q35_stream stream, q35_error *err)
{
    return q35_delta_rule_scan_variant(q35_delta_rule_default_variant(d), o, o_stride, S, q, k, v, stride, g, beta, T,
                                       d, stream, err);
}

int q35_delta_rule_step(float *o, float *S, const float *q, const float *k, const float *v, const float *g,
                        const float *beta, q35_delta_dims d, q35_stream stream, q35_error *err)
{
    /* one token: strides are never followed; pass a legal one */
    const int64_t stride = 2 * (int64_t)d.hk * d.dk + (int64_t)d.hv * d.dv;
    return q35_delta_rule_scan(o, (int64_t)d.hv * d.dv, S, q, k, v, stride, g, beta, 1, d, stream, err);
}
