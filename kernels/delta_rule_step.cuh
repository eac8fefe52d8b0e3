/* The parts of the delta-rule scan (kernels/delta_rule.cu): the staged tile of
 * tokens, one token's operands in registers, and one token's step on the state
 * rows a lane group holds. */
#ifndef Q35_KERNELS_DELTA_RULE_STEP_CUH
#define Q35_KERNELS_DELTA_RULE_STEP_CUH

#include <cuda_runtime.h>
#include <stdint.h>

#define DK 128   /* key head width, the only one */
#define TILE 32  /* tokens per staged tile */

/* A variant: a block of WARPS warps; a group of LANES lanes holds RPL state
 * rows (the same columns of each), M float4 of each row per lane. Lane `sub` of
 * a group holds float4 LANES*m + sub of each row. The groups of a warp sit side
 * by side (lanes g*LANES + sub) or, IL, interleaved (lanes sub*GROUPS + g), so
 * that neighbouring lanes read the same k and q. PF: token t+1's operands are
 * read into registers while token t runs, and S.q is reduce-scattered over the
 * group (q35_delta_token_step). NS: the output is S'.q of the new state; else
 * e^g S.q + d k.q of the previous state (the same value, other bits). */
template <int LANES_, int RPL_, int WARPS_, bool PF_, bool IL_, bool NS_>
struct q35_delta_cfg {
    static constexpr int LANES = LANES_, RPL = RPL_, WARPS = WARPS_;
    static constexpr bool PF = PF_, IL = IL_, NS = NS_;
    static_assert(32 % LANES == 0 && RPL <= LANES && DK % (4 * LANES) == 0, "a row's float4s spread over the group");
    static_assert(PF || !NS, "the previous token's output is a PF variant's (its reduce-scatter)");
    static constexpr int GROUPS = 32 / LANES;            /* lane groups per warp */
    static constexpr int ROWS = GROUPS * RPL * WARPS;    /* state rows per block */
    static constexpr int M = DK / 4 / LANES;
    static constexpr int STRIDE = IL ? GROUPS : 1;       /* lanes between subs of a group */
    static __device__ __forceinline__ int sub(int lane) { return IL ? lane / GROUPS : lane % LANES; }
    static __device__ __forceinline__ int group(int lane) { return IL ? lane % GROUPS : lane / LANES; }
};

/* TILE tokens as staged in shared memory, for a block of ROWS rows. */
template <int ROWS>
struct q35_delta_tile {
    static_assert(ROWS % 4 == 0, "v in float4s");
    float4 qk[TILE][2 * DK / 4]; /* q (32 float4) then k (32 float4) of each token */
    float4 v[TILE][ROWS / 4];    /* this block's values of each token */
    float4 sc[TILE];             /* exp(g), beta, k.q, 0 of each token */
    float g[TILE];               /* g as loaded */
    float beta[TILE];            /* beta as loaded */
};

/* One token's operands for a lane of a group: its float4s of k and q, its rows'
 * values, and exp(g), beta, k.q. */
template <int M, int RPL>
struct q35_delta_token {
    float4 k[M], q[M];
    float v[RPL];
    float4 sc;
};

__device__ __forceinline__ void q35_cp_async16(void *smem, const void *gmem)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}

__device__ __forceinline__ void q35_cp_async4(void *smem, const void *gmem)
{
    const unsigned s = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(s), "l"(gmem));
}

__device__ __forceinline__ void q35_cp_async_commit()
{
    asm volatile("cp.async.commit_group;\n" ::);
}

__device__ __forceinline__ void q35_cp_async_wait_one()
{
    asm volatile("cp.async.wait_group 1;\n" ::);
}

/* Issues the copies of tokens t0 .. t0+n-1 into tile: thread x copies float4
 * x % 64 of q|k and float4 x % (ROWS/4) of v of every THREADS/64-th (THREADS/(ROWS/4)-th)
 * token, a source pointer stepping by whole rows; threads 0..63 copy g and beta. */
template <int THREADS, int ROWS>
__device__ __forceinline__ void q35_delta_load_tile(q35_delta_tile<ROWS> *tile, const float *q, const float *k,
                                                    const float *vj, int64_t stride, const float *g,
                                                    const float *beta, int64_t t0, int n, int kh, int j, int c0,
                                                    int hv)
{
    static_assert(THREADS % 64 == 0 && THREADS % (ROWS / 4) == 0 && TILE <= 32, "whole rows of copies");
    const int x = threadIdx.x;
    {
        constexpr int STEP = THREADS / 64;
        const int part = x % 64;
        const float *src = (part < 32 ? q : k) + (t0 + x / 64) * stride + (int64_t)kh * DK + 4 * (part % 32);
        for (int t = x / 64; t < n; t += STEP, src += STEP * stride)
            q35_cp_async16(&tile->qk[t][part], src);
    }
    {
        constexpr int STEP = THREADS / (ROWS / 4);
        const int part = x % (ROWS / 4);
        const float *src = vj + (t0 + x / (ROWS / 4)) * stride + c0 + 4 * part;
        for (int t = x / (ROWS / 4); t < n; t += STEP, src += STEP * stride)
            q35_cp_async16(&tile->v[t][part], src);
    }
    if (x < 64 && x % 32 < n) {
        const int t = x % 32;
        if (x < 32)
            q35_cp_async4(&tile->g[t], g + (t0 + t) * hv + j);
        else
            q35_cp_async4(&tile->beta[t], beta + (t0 + t) * hv + j);
    }
}

/* *p = x where c, as one predicated store: a branch would split the token's
 * instructions into blocks that the compiler schedules apart. */
__device__ __forceinline__ void q35_store_if(float *p, float x, bool c)
{
    asm volatile("{\n\t.reg .pred w;\n\tsetp.ne.u32 w, %2, 0;\n\t@w st.global.f32 [%0], %1;\n\t}" ::"l"(p), "f"(x),
                 "r"((unsigned)c));
}

__device__ __forceinline__ float q35_dot4(float4 a, float4 b)
{
    return fmaf(a.w, b.w, fmaf(a.z, b.z, fmaf(a.y, b.y, a.x * b.x)));
}

/* Per token of the tile, once: sc = exp(g), beta, k.q (a warp per token, a
 * float4 per lane, a fixed butterfly, the warp's tokens side by side; without
 * KQ, 0). */
template <int WARPS, bool KQ, int ROWS>
__device__ __forceinline__ void q35_delta_prepare_tile(q35_delta_tile<ROWS> *tile, int n)
{
    if constexpr (!KQ) {
        for (int t = threadIdx.x; t < n; t += 32 * WARPS)
            tile->sc[t] = make_float4(expf(tile->g[t]), tile->beta[t], 0.0f, 0.0f);
        return;
    }
    constexpr int PER = (TILE + WARPS - 1) / WARPS; /* tokens per warp */
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    float kq[PER];
#pragma unroll
    for (int p = 0; p < PER; p++) {
        const int t = min(warp + WARPS * p, n - 1); /* past the tile's end: computed, never stored */
        kq[p] = q35_dot4(tile->qk[t][lane], tile->qk[t][32 + lane]);
    }
#pragma unroll
    for (int off = 16; off > 0; off /= 2)
#pragma unroll
        for (int p = 0; p < PER; p++)
            kq[p] += __shfl_xor_sync(0xffffffffu, kq[p], off);
    float mine = kq[0]; /* lane p stores the warp's token p */
#pragma unroll
    for (int p = 1; p < PER; p++)
        mine = lane == p ? kq[p] : mine;
    const int t = warp + WARPS * lane;
    if (lane < PER && t < n)
        tile->sc[t] = make_float4(expf(tile->g[t]), tile->beta[t], mine, 0.0f);
}

/* Token tt's operands for the lane sub of the group whose first row is r0. */
template <class C, int ROWS>
__device__ __forceinline__ void q35_delta_read_token(q35_delta_token<C::M, C::RPL> &x,
                                                     const q35_delta_tile<ROWS> *tile, int tt, int sub, int r0)
{
#pragma unroll
    for (int m = 0; m < C::M; m++) {
        x.q[m] = tile->qk[tt][C::LANES * m + sub];
        x.k[m] = tile->qk[tt][32 + C::LANES * m + sub];
    }
    const float *vt = reinterpret_cast<const float *>(tile->v[tt]) + r0;
    if constexpr (C::RPL == 2) {
        const float2 v2 = *reinterpret_cast<const float2 *>(vt);
        x.v[0] = v2.x, x.v[1] = v2.y;
    } else {
#pragma unroll
        for (int i = 0; i < C::RPL; i++)
            x.v[i] = vt[i];
    }
    if constexpr (C::NS) { /* no k.q */
        const float2 sc = *reinterpret_cast<const float2 *>(&tile->sc[tt]);
        x.sc = make_float4(sc.x, sc.y, 0.0f, 0.0f);
    } else {
        x.sc = tile->sc[tt];
    }
}

/* M partial sums added pairwise, in a fixed order. */
template <int M>
__device__ __forceinline__ float q35_sum_fixed(const float *p)
{
    if constexpr (M == 1)
        return p[0];
    else
        return q35_sum_fixed<M / 2>(p) + q35_sum_fixed<M / 2>(p + M / 2);
}

/* The value from lane sub ^ off of the group. */
template <class C>
__device__ __forceinline__ float q35_group_xor(float x, int off)
{
    return __shfl_xor_sync(0xffffffffu, x, off * C::STRIDE);
}

/* The sums of a[0..RPL) over the lanes of a group by the butterfly's pairwise
 * tree (so the same bits as a butterfly per value), each round halving the
 * values a lane carries: row i's sum ends in the lanes sub with
 * sub / (LANES / RPL) == i. Returns the lane's. */
template <class C>
__device__ __forceinline__ float q35_reduce_scatter(const float (&in)[C::RPL], int sub)
{
    float a[C::RPL];
#pragma unroll
    for (int i = 0; i < C::RPL; i++)
        a[i] = in[i];
#pragma unroll
    for (int n = C::RPL, off = C::LANES / 2; n > 1; n /= 2, off /= 2) {
        const bool hi = sub & off; /* keeps the upper half of the values */
#pragma unroll
        for (int i = 0; i < n / 2; i++) {
            const float send = hi ? a[i] : a[n / 2 + i], keep = hi ? a[n / 2 + i] : a[i];
            a[i] = keep + q35_group_xor<C>(send, off);
        }
    }
    float s = a[0];
#pragma unroll
    for (int off = C::LANES / (2 * C::RPL); off > 0; off /= 2)
        s += q35_group_xor<C>(s, off);
    return s;
}

/* S.q over the group, the partial sums pq[RPL] of the lane's rows reduced and
 * scaled: the output o = S.q / sqrt(dk) (NS) or (e^g S.q + d k.q) / sqrt(dk),
 * with e^g, d, k.q of the lane's output row, written when `write`. */
template <class C>
__device__ __forceinline__ void q35_delta_write_output(const float (&pq)[C::RPL], float decay, float d, float kq,
                                                       float *out, bool write, int sub)
{
    const float sq = q35_reduce_scatter<C>(pq, sub), scale = 1.0f / sqrtf((float)DK);
    q35_store_if(out, C::NS ? sq * scale : fmaf(decay, sq, d * kq) * scale, write);
}

/* The lane's partial sums of S.q of its rows, each a fixed sum of M. */
template <class C>
__device__ __forceinline__ void q35_delta_partial_sq(float (&pq)[C::RPL], const float4 (&st)[C::RPL][C::M],
                                                     const float4 (&q)[C::M])
{
#pragma unroll
    for (int i = 0; i < C::RPL; i++) {
        float p[C::M];
#pragma unroll
        for (int m = 0; m < C::M; m++)
            p[m] = q35_dot4(st[i][m], q[m]);
        pq[i] = q35_sum_fixed<C::M>(p);
    }
}

/* One token on the group's rows: st [RPL][M] the lane's float4s of its rows,
 * updated, in the form of the spec's step whose dot products read the previous
 * state:  d = (v - e^g S.k) beta;  S' = e^g S + d k;  S'.q = e^g S.q + d k.q.
 * The output written to out: this token's (e^g S.q + d k.q) / sqrt(dk) with
 * qo = q; or, NS, the previous token's, S.qo / sqrt(dk) with qo its q (S the
 * state it left), so that S.q and S.k still read the same state. PF variants
 * reduce S.q by a reduce-scatter and the lane holding row `row`'s sum writes it
 * to *out; the others by a butterfly beside S.k, and lane 0 of the group writes
 * every row, out[0..RPL). Only where `write`. */
template <class C>
__device__ __forceinline__ void q35_delta_token_step(float4 (&st)[C::RPL][C::M], const q35_delta_token<C::M, C::RPL> &x,
                                                     const float4 (&qo)[C::M], float *out, bool write, int row,
                                                     int sub)
{
    constexpr int RPL = C::RPL, M = C::M;
    float sk[RPL], pq[RPL];
#pragma unroll
    for (int i = 0; i < RPL; i++) {
        float p[M];
#pragma unroll
        for (int m = 0; m < M; m++)
            p[m] = q35_dot4(st[i][m], x.k[m]);
        sk[i] = q35_sum_fixed<M>(p);
    }
    q35_delta_partial_sq<C>(pq, st, qo);
    /* every lane needs every row's S.k (for d) */
#pragma unroll
    for (int off = C::LANES / 2; off > 0; off /= 2)
#pragma unroll
        for (int i = 0; i < RPL; i++) {
            sk[i] += q35_group_xor<C>(sk[i], off);
            if constexpr (!C::PF)
                pq[i] += q35_group_xor<C>(pq[i], off);
        }
    const float decay = x.sc.x, b = x.sc.y, kq = x.sc.z;
    float delta[RPL], d = 0.0f;
#pragma unroll
    for (int i = 0; i < RPL; i++) {
        delta[i] = (x.v[i] - decay * sk[i]) * b;
        d = row == i ? delta[i] : d;
    }
    if constexpr (C::PF) {
        q35_delta_write_output<C>(pq, decay, d, kq, out, write, sub);
    } else if (write) { /* as the first scan wrote it: the compiler predicates these */
#pragma unroll
        for (int i = 0; i < RPL; i++)
            out[i] = fmaf(decay, pq[i], delta[i] * kq) * (1.0f / sqrtf((float)DK));
    }
#pragma unroll
    for (int i = 0; i < RPL; i++)
#pragma unroll
        for (int m = 0; m < M; m++) {
            st[i][m].x = fmaf(delta[i], x.k[m].x, decay * st[i][m].x);
            st[i][m].y = fmaf(delta[i], x.k[m].y, decay * st[i][m].y);
            st[i][m].z = fmaf(delta[i], x.k[m].z, decay * st[i][m].z);
            st[i][m].w = fmaf(delta[i], x.k[m].w, decay * st[i][m].w);
        }
}

/* Reads (STORE false) or writes the lane's float4s of the group's RPL rows,
 * row0 the group's first row of S. */
template <class C, bool STORE>
__device__ __forceinline__ void q35_delta_state_io(float4 (&st)[C::RPL][C::M], float *row0, int sub)
{
#pragma unroll
    for (int i = 0; i < C::RPL; i++)
#pragma unroll
        for (int m = 0; m < C::M; m++) {
            float4 *p = reinterpret_cast<float4 *>(row0 + (int64_t)i * DK) + C::LANES * m + sub;
            if constexpr (STORE)
                *p = st[i][m];
            else
                st[i][m] = *p;
        }
}

#endif /* Q35_KERNELS_DELTA_RULE_STEP_CUH */
