/* The variant tb4 (kernels/delta_chunk.cu; the default where the sm_90
 * kernels do not run, the fastest there: bench/results/index.tsv, family
 * kernels): the chunked delta
 * rule with W and U never formed, D computed in the state pass from T beta
 * (FlashInfer's SM90 kernel factors it so):
 *
 *     D = U - W S^T = T diag(beta) (V - diag(e^G) K S^T)
 *
 * so the parallel pass keeps the gates, the loads of K and Q, k.k and q.k, A,
 * P and T, and writes T diag(beta) (f16 [64][64], in the workspace's W area)
 * in place of W ([64][128]) and U ([64][dv]): no beta e^G K nor beta V
 * staged (32 KiB of its 64 KiB of shared memory; 4 blocks an SM where w4's
 * holds 3: at 5, sm_89's registers spill), ~half its tensor-core products and
 * ~60 % of its stores gone. The state pass (one block of 4 warps per (value
 * head, 32 value columns), w4's tiles) per chunk:
 *
 *     SK = K S^T and Q S^T           one k loop (w4's W S^T and Q S^T, K for W)
 *     X  = V - e^G SK                f32, rounded to f16 into shared memory
 *     D  = (T beta) X                T beta's blocks at or left of the diagonal
 *     O  = e^G Q S^T + P D, the state update: w4's
 *
 * The chain from one chunk's state to the next gains D's product (16 of a
 * warp's ~128 mma) and a barrier; the parallel pass loses W and U, more than
 * the state pass gains.
 *
 * Not bitwise w4 (another formulation: its own family, kernels/delta_chunk.h):
 * the roundings differ (X and T beta rounded to f16 where w4 rounds beta e^G K,
 * beta V, W and U), each a relative 2^-11 as w4's; held to the same float64
 * bound by the suite. Rows of a last partial chunk past T: K, Q zero (the
 * parallel pass), V zero-filled in the stage and beta zero, so T beta's
 * columns past T are zero and no row past T reaches one before it.
 *
 * Stage (w4's layout, state_cfg<4, 32>, so its helpers take it unchanged): T
 * beta at OFF_W (8 KiB of W's 16), V's slice [64][32] f32 in W's second 8 KiB
 * (16-byte chunks XOR-swizzled by row), Q, K, P and G as w4's; X in U's 4 KiB. */
#ifndef Q35_KERNELS_DELTA_CHUNK_TB_CUH
#define Q35_KERNELS_DELTA_CHUNK_TB_CUH

#include "kernels/delta_chunk.cuh"
#include "kernels/delta_chunk_prep.cuh"

namespace q35_delta_chunk_kernels {

struct tb_cfg {
    using C = state_cfg<4, 32>;
    static constexpr int OFF_T = C::OFF_W, OFF_V = C::OFF_W + CH * CH * 2, OFF_X = C::OFF_U;
    static_assert(CH * CH * 2 + CH * 32 * 4 <= CH * DK * 2, "T beta and V's slice fit in W's place");
    static constexpr int PREP_SMEM = 2 * CH * DK * 2 + 2 * CH * 4; /* K, Q (then A), G, beta */
};

/* ---- the parallel pass: gates, K and Q, k.k and q.k, A, P, T beta ---- */

/* QK16: K and Q already f16 in the workspace (q35_delta_chunk_qk16; q, k unused). */
template <bool QK16>
static __global__ void __launch_bounds__(THREADS, 4)
    q35_delta_chunk_prep_tb(const float *q, const float *k, int64_t stride, const float *g, const float *beta,
                            int64_t T, int hk, int hv, __half *TBg, __half *Pg, float *Gg, __half *Qg, __half *Kg)
{
    extern __shared__ __align__(16) unsigned char smem[];
    const prep_at p = prep_where(T, hk, hv);
    /* K and Q [64][128] f16, then A [64][64 + APAD] f32 in their place; G, beta [64] */
    float *sG = reinterpret_cast<float *>(smem + 2 * CH * DK * 2), *sB = sG + CH;
    __half *tb = TBg + ((size_t)p.c * hv + p.j) * CH * CH + p.tid;
    auto put = [&](int t, float x) { /* column tid of T times beta_tid, rounded once: T beta [t][tid] */
        tb[(size_t)t * CH] = __float2half_rn(x * sB[p.tid]);
    };
    prep_front<false, QK16>(p, smem, 0, 0, sG, sB, q, k, nullptr, stride, g, beta, hk, hv, 0, Pg, Qg, Kg, put);
    if (p.tid < CH)
        Gg[((size_t)p.c * hv + p.j) * CH + p.tid] = sG[p.tid];
}

/* ---- the state pass ---- */

/* A [64][8 NC] f16 tile at src (row-major) into the swizzled tile at dst,
 * cp.async by the block's 128 threads (tid). */
template <int NC>
__device__ __forceinline__ void cp_tile(uint32_t dst, const __half *src, int tid)
{
    q35_cp_tile_swz<NC, CH, 128>(dst, src, tid);
}

/* Chunk c's slice sl (32 value columns of value head j) of V, f32 [64][32] at
 * sv (8 chunks of 4 floats a row, XORed with the row's place in 8; rows past T
 * zero-filled), and its G [64] at sg, by cp.async of 128 threads: a pass 16
 * rows, a thread's chunk column and XOR the same every pass (a constant trip
 * count: unrolled whole). */
__device__ __forceinline__ void load_v_g(uint32_t sv, uint32_t sg, int64_t c, int64_t T, int j, int sl, int hv, int dv,
                                         const float *v, int64_t stride, const float *G, int tid)
{
    const int64_t t0 = c * CH;
    const int row0 = tid / 8, ch = tid % 8;
    const uint32_t v0 = sv + row0 * 128 + ((ch ^ (row0 & 7)) << 4);
    const float *vc = v + (int64_t)j * dv + (int64_t)sl * 32 + ch * 4;
#pragma unroll
    for (int i = 0; i < CH / 16; i++) {
        const int row = row0 + 16 * i;
        const bool in = t0 + row < T;
        q35_cp_async16(v0 + i * 16 * 128, in ? vc + (t0 + row) * stride : vc, in ? 16 : 0);
    }
    if (tid < CH / 4)
        q35_cp_async16(sg + tid * 16, G + ((size_t)c * hv + j) * CH + tid * 4, 16);
}

/* Chunk c's tiles into the stage at base (cp.async, one group): T beta (as P),
 * Q, K, P, G as w4's load_stage; V's slice sl (32 columns of value head j),
 * rows past T zero-filled. */
__device__ __forceinline__ void load_stage_tb(uint32_t base, int64_t c, int64_t T, int j, int kh, int sl, int hk,
                                              int hv, int dv, const float *v, int64_t stride, const __half *TB,
                                              const __half *P, const float *G, const __half *Q, const __half *K)
{
    using X = tb_cfg;
    using C = X::C;
    const int tid = threadIdx.x;
    cp_tile<DK / 8>(base + C::OFF_Q, Q + ((size_t)c * hk + kh) * CH * DK, tid);
    cp_tile<DK / 8>(base + C::OFF_K, K + ((size_t)c * hk + kh) * CH * DK, tid);
    cp_tile<CH / 8>(base + C::OFF_P, P + ((size_t)c * hv + j) * CH * CH, tid);
    cp_tile<CH / 8>(base + X::OFF_T, TB + ((size_t)c * hv + j) * CH * CH, tid);
    static_assert(C::THREADS_ == 128, "load_v_g's 128 threads");
    load_v_g(base + X::OFF_V, base + C::OFF_G, c, T, j, sl, hv, dv, v, stride, G, tid);
    q35_cp_async_commit();
}

/* X = V - e^G K S^T (rows ta, tb; the thread's columns 8 ni + 2 q (+1); ea,
 * eb their e^G) from the accumulators sk and the stage's V, as f16 into the
 * stage's X tile. */
__device__ __forceinline__ void put_x(const float (&sk)[tb_cfg::C::NT][4], uint32_t sb, int ta, int tb, int qq, float ea,
                                      float eb)
{
    using X = tb_cfg;
    using C = X::C;
#pragma unroll
    for (int ni = 0; ni < C::NT; ni++) {
        const int col = 8 * ni + 2 * qq;
        const uint32_t va_at = sb + X::OFF_V + ta * 128 + (((col / 4) ^ (ta & 7)) << 4) + (col % 4) * 4;
        const uint32_t vb_at = sb + X::OFF_V + tb * 128 + (((col / 4) ^ (tb & 7)) << 4) + (col % 4) * 4;
        const float va0 = q35_ld_shared_f32(va_at), va1 = q35_ld_shared_f32(va_at + 4);
        const float vb0 = q35_ld_shared_f32(vb_at), vb1 = q35_ld_shared_f32(vb_at + 4);
        /* one rounding each (fma): pinned, so both state passes (tb4, tb4o4)
         * make the same bits whatever the compiler's contraction */
        q35_st_shared_b32(sb + X::OFF_X + q35_swz_at<C::NS>(ta, col),
                          q35_pack_half2(__fmaf_rn(-ea, sk[ni][0], va0), __fmaf_rn(-ea, sk[ni][1], va1)));
        q35_st_shared_b32(sb + X::OFF_X + q35_swz_at<C::NS>(tb, col),
                          q35_pack_half2(__fmaf_rn(-eb, sk[ni][2], vb0), __fmaf_rn(-eb, sk[ni][3], vb1)));
    }
}

/* D (rows ta, tb, as put_x's columns) and e^{G_last - G} D (la, lb) as f16 into
 * sD and sDp. */
__device__ __forceinline__ void put_d(const float (&dacc)[tb_cfg::C::NT][4], uint32_t sD, uint32_t sDp, int ta, int tb,
                                      int qq, float la, float lb)
{
    using C = tb_cfg::C;
#pragma unroll
    for (int ni = 0; ni < C::NT; ni++) {
        const int col = 8 * ni + 2 * qq;
        const uint32_t xa = q35_swz_at<C::NS>(ta, col), xb = q35_swz_at<C::NS>(tb, col);
        q35_st_shared_b32(sD + xa, q35_pack_half2(dacc[ni][0], dacc[ni][1]));
        q35_st_shared_b32(sD + xb, q35_pack_half2(dacc[ni][2], dacc[ni][3]));
        q35_st_shared_b32(sDp + xa, q35_pack_half2(dacc[ni][0] * la, dacc[ni][1] * la));
        q35_st_shared_b32(sDp + xb, q35_pack_half2(dacc[ni][2] * lb, dacc[ni][3] * lb));
    }
}

static __global__ void __launch_bounds__(128, 1)
    q35_delta_chunk_state_tb(float *o, int64_t o_stride, float *S, const float *v, int64_t stride, int64_t T, int hk,
                             int hv, int dv, const __half *TB, const __half *P, const float *G, const __half *Q,
                             const __half *K)
{
    using X = tb_cfg;
    using C = X::C;
    extern __shared__ __align__(16) unsigned char smem[];
    const int j = blockIdx.x, sl = blockIdx.y, kh = j % hk;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32, gq = lane / 4, qq = lane % 4;
    const int rb = warp; /* the warp's rows 16 rb.., every slice column */
    const int64_t nc = (T + CH - 1) / CH;
    const uint32_t base = (uint32_t)__cvta_generic_to_shared(smem);
    const uint32_t sD = base + 2 * C::STAGE_BYTES, sDp = sD + C::D_BYTES, sS = sDp + C::D_BYTES;
    float *Sj = S + ((size_t)j * dv + (size_t)sl * C::SW) * DK;

    float st[C::MT][C::NK][4]; /* S[value column 16 mi + g (+8)][key KW w + 8 ni + 2 q (+1)] */
    state_in<C>(st, Sj, warp, gq, qq);
    put_state<C>(sS, st, warp, lane);
    load_stage_tb(base, 0, T, j, kh, sl, hk, hv, dv, v, stride, TB, P, G, Q, K);

    const int ta = 16 * rb + gq, tb = ta + 8; /* this thread's two rows of a chunk */
#pragma unroll 1
    for (int64_t c = 0; c < nc; c++) {
        const uint32_t sb = base + (uint32_t)(c & 1) * C::STAGE_BYTES;
        const uint32_t s16 = sS + (uint32_t)(c & 1) * C::S16_BYTES;
        const uint32_t s16n = sS + (uint32_t)((c + 1) & 1) * C::S16_BYTES;
        q35_cp_async_wait<0>();
        __syncthreads(); /* the stage landed; the state of the chunk before is in s16 */
        if (c + 1 < nc)
            load_stage_tb(base + (uint32_t)((c + 1) & 1) * C::STAGE_BYTES, c + 1, T, j, kh, sl, hk, hv, dv, v, stride,
                          TB, P, G, Q, K);

        /* K S^T and Q S^T: A operands K, Q [t][dk]; B the state stored [n = value
         * column][k = dk] (ldmatrix) */
        float sk[C::NT][4] = {}, oacc[C::NT][4] = {};
        pair_times_state<C>(sk, oacc, sb + C::OFF_K, sb + C::OFF_Q, s16, rb, 0, lane);
        /* X = V - e^G K S^T to shared memory as f16; e^G Q S^T */
        const float Glast = q35_ld_shared_f32(sb + C::OFF_G + (CH - 1) * 4);
        const float Ga = q35_ld_shared_f32(sb + C::OFF_G + ta * 4), Gb = q35_ld_shared_f32(sb + C::OFF_G + tb * 4);
        const float ea = expf(Ga), eb = expf(Gb);
        put_x(sk, sb, ta, tb, qq, ea, eb);
#pragma unroll
        for (int ni = 0; ni < C::NT; ni++)
            oacc[ni][0] *= ea, oacc[ni][1] *= ea, oacc[ni][2] *= eb, oacc[ni][3] *= eb;
        __syncthreads(); /* every warp's X rows */

        /* D = (T beta) X over T beta's blocks at or left of the diagonal, then D
         * and e^{G_last - G} D to shared memory */
        float dacc[C::NT][4] = {};
        lower_times<C>(dacc, sb + X::OFF_T, sb + X::OFF_X, rb, 0, lane);
        put_d(dacc, sD, sDp, ta, tb, qq, expf(Glast - Ga), expf(Glast - Gb));
        __syncthreads(); /* every warp's D rows */

        /* O += P D, to o; then the state (w4's) */
        add_pd<C>(oacc, sb, sD, rb, 0, lane);
        store_o<C>(o, o_stride, oacc, c, T, j, sl, dv, 0, ta, tb, qq);
        update_state<C>(st, sb, sDp, expf(Glast), warp, lane);
        put_state<C>(s16n, st, warp, lane);
    }
    state_out<C>(Sj, st, warp, gq, qq);
}

/* A tb state pass's kernel: tb4's, or tb4o4's. The kernels here are static:
 * the production unit (delta_chunk.cu) and the experiments' (tb4o4, tb4kh)
 * each build their own copy, as neither is compiled relocatable. */
typedef void (*state_tb_kernel)(float *, int64_t, float *, const float *, int64_t, int64_t, int, int, int,
                                const __half *, const __half *, const float *, const __half *, const __half *);

/* A tb parallel pass: its kernels (q35_delta_chunk_prep_tb's arguments; [1]
 * with K and Q already in the workspace as f16), its blocks a chunk (Hv for
 * tb4's, one a value head), its shared memory. */
typedef void (*prep_tb_kernel)(const float *, const float *, int64_t, const float *, const float *, int64_t, int, int,
                               __half *, __half *, float *, __half *, __half *);
struct prep_tb {
    prep_tb_kernel kernel[2];
    int blocks;
    int smem;
    const char *name;
};

/* The parallel pass `prep` into the workspace (T beta in its W area); q and k
 * NULL: they are in the workspace's Q and K already, as f16
 * (q35_delta_chunk_qk16). */
static inline int launch_prep_tb(const prep_tb &prep, int optin, const float *q, const float *k, int64_t stride,
                                 const float *g, const float *beta, int64_t T, q35_delta_dims d, __half *W, __half *P,
                                 float *G, __half *Q, __half *K, q35_stream stream, q35_error *err)
{
    if (prep.smem > optin)
        return q35_fail(err, "delta_chunk %s: needs %d bytes of shared memory a block, the device allows %d",
                        prep.name, prep.smem, optin);
    const int64_t nc = (T + CH - 1) / CH;
    const prep_tb_kernel pk = prep.kernel[q == nullptr];
    if (Q35_CUDA_CHECK(cudaFuncSetAttribute(pk, cudaFuncAttributeMaxDynamicSharedMemorySize, prep.smem), err))
        return -1;
    pk<<<(unsigned)(nc * prep.blocks), THREADS, prep.smem, (cudaStream_t)stream>>>(q, k, stride, g, beta, T, d.hk, d.hv,
                                                                                  W, P, G, Q, K);
    return Q35_LAUNCH_CHECK(prep.name, err);
}

/* Both passes (variant_impl's run): the parallel pass `prep`, then the state
 * pass `state` (tb4's q35_delta_chunk_state_tb, or the experiment tb4o4's
 * split one: its threads and shared memory). */
static inline int run_tb_with(const prep_tb &prep, state_tb_kernel state, int threads, int state_bytes,
                              const char *name, int optin, float *o, int64_t o_stride, float *S, const float *q,
                              const float *k, const float *v, int64_t stride, const float *g, const float *beta,
                              int64_t T, q35_delta_dims d, __half *W, __half *P, float *G, __half *Q, __half *K,
                              q35_stream stream, q35_error *err)
{
    if (state_bytes > optin)
        return q35_fail(err, "delta_chunk %s: needs %d bytes of shared memory a block, the device allows %d", name,
                        state_bytes, optin);
    if (Q35_CUDA_CHECK(cudaFuncSetAttribute(state, cudaFuncAttributeMaxDynamicSharedMemorySize, state_bytes), err) ||
        launch_prep_tb(prep, optin, q, k, stride, g, beta, T, d, W, P, G, Q, K, stream, err))
        return -1;
    const dim3 grid((unsigned)d.hv, (unsigned)(d.dv / tb_cfg::C::SW));
    state<<<grid, threads, state_bytes, (cudaStream_t)stream>>>(o, o_stride, S, v, stride, T, d.hk, d.hv, d.dv, W, P,
                                                               G, Q, K);
    return Q35_LAUNCH_CHECK(name, err);
}

/* tb4's parallel pass. */
static inline prep_tb prep_tb4(q35_delta_dims d)
{
    return {{q35_delta_chunk_prep_tb<false>, q35_delta_chunk_prep_tb<true>}, d.hv, tb_cfg::PREP_SMEM,
            "q35_delta_chunk_prep_tb"};
}

/* tb4's both passes (variant_impl's run). */
static inline int run_tb(int optin, float *o, int64_t o_stride, float *S, const float *q, const float *k,
                         const float *v, int64_t stride, const float *g, const float *beta, int64_t T,
                         q35_delta_dims d, __half *W, __half *U, __half *P, float *G, __half *Q, __half *K,
                         q35_stream stream, q35_error *err)
{
    (void)U;
    return run_tb_with(prep_tb4(d), q35_delta_chunk_state_tb, 128, tb_cfg::C::smem(2), "q35_delta_chunk_state_tb",
                       optin, o, o_stride, S, q, k, v, stride, g, beta, T, d, W, P, G, Q, K, stream, err);
}

} /* namespace q35_delta_chunk_kernels */

#endif /* Q35_KERNELS_DELTA_CHUNK_TB_CUH */
