/* The chunked gated delta rule (kernels/delta_chunk.h): the parallel pass,
 * the production variant's state pass (w4) and the launcher; the kernels'
 * description and the state pass: kernels/delta_chunk.cuh. */
#include "kernels/delta_chunk.cuh"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#pragma weak q35_delta_chunk_experiments

namespace {

using namespace q35_delta_chunk_kernels;

constexpr int THREADS = 128;         /* 4 warps, 16 rows of a chunk each */
constexpr int APAD = 8;              /* floats past each row of A (float2 stores, 16-byte rows) */

__device__ __forceinline__ float4 scaled(float4 a, float f)
{
    return make_float4(a.x * f, a.y * f, a.z * f, a.w * f);
}

__device__ __forceinline__ uint4 f16x8(float4 a, float4 b)
{
    return make_uint4(q35_pack_half2(a.x, a.y), q35_pack_half2(a.z, a.w), q35_pack_half2(b.x, b.y),
                      q35_pack_half2(b.z, b.w));
}

/* acc[rb] (chunk rows 16 rb .. 16 rb + 15, for every row block rb, x 32
 * columns col0..col0+31) = T (f16 [64][64] at sT) times X (f16 [64][8 NC] at
 * src); T is unit lower triangular, so only its blocks at or left of the
 * diagonal. Each output sums its k blocks 0..rb in ascending order. X is the
 * B operand stored [k = token][n = column]: ldmatrix.trans, once a k block for
 * the row blocks that take it. */
template <int NC>
__device__ __forceinline__ void t_times(float (&acc)[4][4][4], uint32_t sT, uint32_t src, int col0, int lane)
{
#pragma unroll
    for (int rb = 0; rb < 4; rb++)
#pragma unroll
        for (int ni = 0; ni < 4; ni++)
            acc[rb][ni][0] = acc[rb][ni][1] = acc[rb][ni][2] = acc[rb][ni][3] = 0.0f;
#pragma unroll
    for (int kk = 0; kk < CH / 16; kk++) {
        uint32_t b[2][4];
#pragma unroll
        for (int nb = 0; nb < 2; nb++)
            q35_ldsm_x4_trans(b[nb], src + q35_swz_rows<NC>(16 * kk + lane % 8 + (lane / 8) % 2 * 8,
                                                            (col0 + 16 * nb) / 8 + lane / 16));
#pragma unroll
        for (int rb = kk; rb < CH / 16; rb++) {
            uint32_t a[4];
            q35_ldsm_x4(a, sT + q35_swz_rows<CH / 8>(16 * rb + lane % 16, 2 * kk + lane / 16));
#pragma unroll
            for (int nb = 0; nb < 2; nb++) {
                q35_mma16816(acc[rb][2 * nb], a, b[nb][0], b[nb][1]);
                q35_mma16816(acc[rb][2 * nb + 1], a, b[nb][2], b[nb][3]);
            }
        }
    }
}

/* The 16 x 16 blocks (rb, nb), nb <= rb, of k.k and q.k at or below the
 * diagonal, 3 / 3 / 2 / 2 a warp: row block rb costs rb + 1 blocks, so one warp
 * a row block gave warp 3 four times warp 0's products (and every block's warp
 * 3 shares one SM sub-partition). A warp's b-th block; (-1, -1) past its last. */
__device__ __forceinline__ void kk_block(int warp, int b, int &rb, int &nb)
{
    static constexpr int8_t k_rb[4][3] = {{3, 3, 3}, {3, 2, 2}, {2, 1, -1}, {1, 0, -1}};
    static constexpr int8_t k_nb[4][3] = {{0, 1, 2}, {3, 1, 2}, {0, 1, -1}, {0, 0, -1}};
    rb = k_rb[warp][b], nb = k_nb[warp][b];
}

/* Stores 16 x 32 accumulators of row block rb as f16 rows of a global [.][ld]
 * array (rows 16 rb + g and 16 rb + g + 8, columns col0 + 8 ni + 2 q). */
__device__ __forceinline__ void store_f16(__half *dst, int ld, int col0, const float (&acc)[4][4], int rb, int lane)
{
    const int r = 16 * rb + lane / 4, c = col0 + 2 * (lane % 4);
#pragma unroll
    for (int ni = 0; ni < 4; ni++) {
        *reinterpret_cast<uint32_t *>(dst + (size_t)r * ld + c + 8 * ni) = q35_pack_half2(acc[ni][0], acc[ni][1]);
        *reinterpret_cast<uint32_t *>(dst + (size_t)(r + 8) * ld + c + 8 * ni) = q35_pack_half2(acc[ni][2], acc[ni][3]);
    }
}
/* ---- the parallel pass --------------------------------------------------------- */

__global__ void __launch_bounds__(THREADS, 3) q35_delta_chunk_prep(const float *q, const float *k, const float *v,
                                                                   int64_t stride, const float *g, const float *beta,
                                                                   int64_t T, int hk, int hv, int dv, __half *Wg,
                                                                   __half *Ug, __half *Pg, float *Gg, __half *Qg,
                                                                   __half *Kg)
{
    extern __shared__ __align__(16) unsigned char smem[];
    /* value heads fastest: the blocks of the heads that share a key head run
     * together, and their second reads of k and q hit L2 */
    const int c = (int)(blockIdx.x / (unsigned)hv), j = (int)(blockIdx.x % (unsigned)hv), kh = j % hk;
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    const int64_t t0 = (int64_t)c * CH;
    const int n = T - t0 < CH ? (int)(T - t0) : CH;
    /* K and Q [64][128] f16, dead after k.k and q.k, then A [64][64 + APAD] f32
     * and T [64][64] f16 in their place; beta e^G K [64][128] and beta V
     * [dv/32][64][32] f16; G and beta [64] f32 */
    const uint32_t sK = (uint32_t)__cvta_generic_to_shared(smem), sQ = sK + CH * DK * 2;
    float *sA = reinterpret_cast<float *>(smem);
    const uint32_t sT = sK + CH * (CH + APAD) * 4;
    const uint32_t sKb = sQ + CH * DK * 2, sVb = sKb + CH * DK * 2;
    float *sG = reinterpret_cast<float *>(smem + 3 * CH * DK * 2 + CH * dv * 2), *sB = sG + CH;
    static_assert(CH * (CH + APAD) * 4 + CH * CH * 2 <= 2 * CH * DK * 2, "A and T fit where K and Q were");

    /* the gates: G by one warp's scan of pair sums (tokens 2l, 2l+1 in lane l);
     * the tokens past T are g = 0, beta = 0, so they change nothing */
    if (warp == 0) {
        const int ta = 2 * lane, tb = ta + 1;
        const float ga = ta < n ? g[(t0 + ta) * hv + j] : 0.0f, gb = tb < n ? g[(t0 + tb) * hv + j] : 0.0f;
        sB[ta] = ta < n ? beta[(t0 + ta) * hv + j] : 0.0f;
        sB[tb] = tb < n ? beta[(t0 + tb) * hv + j] : 0.0f;
        float s = ga + gb;
#pragma unroll
        for (int off = 1; off < 32; off *= 2) {
            const float x = __shfl_up_sync(0xffffffffu, s, off);
            if (lane >= off)
                s += x;
        }
        float before = __shfl_up_sync(0xffffffffu, s, 1);
        before = lane == 0 ? 0.0f : before;
        sG[ta] = before + ga;
        sG[tb] = (before + ga) + gb;
    }
    __syncthreads();

    /* K, Q, beta e^G K, beta V to shared memory as f16 (K and Q to the workspace
     * too, once per key head); rows past T are zeros. BATCH rounds of 16-byte
     * chunks are loaded before any is stored, so their latencies overlap. */
    constexpr int BATCH = 4;
    const int nk = CH * DK / 8, nv = CH * dv / 8;
    __half *Kc = Kg + ((size_t)c * hk + kh) * CH * DK, *Qc = Qg + ((size_t)c * hk + kh) * CH * DK;
#pragma unroll 1
    for (int first = tid; first < (nk > nv ? nk : nv); first += BATCH * THREADS) {
        float4 kx[BATCH][2], qx[BATCH][2], vx[BATCH][2];
#pragma unroll
        for (int i = 0; i < BATCH; i++) {
            const int idx = first + i * THREADS;
            kx[i][0] = kx[i][1] = qx[i][0] = qx[i][1] = vx[i][0] = vx[i][1] = make_float4(0.0f, 0.0f, 0.0f, 0.0f);
            if (idx < nk && idx / (DK / 8) < n) {
                const int64_t at = (t0 + idx / (DK / 8)) * stride + (int64_t)kh * DK + idx % (DK / 8) * 8;
                const float4 *kr = reinterpret_cast<const float4 *>(k + at), *qr = reinterpret_cast<const float4 *>(q + at);
                kx[i][0] = kr[0], kx[i][1] = kr[1], qx[i][0] = qr[0], qx[i][1] = qr[1];
            }
            if (idx < nv && idx / (dv / 8) < n) {
                const float4 *vr = reinterpret_cast<const float4 *>(v + (t0 + idx / (dv / 8)) * stride +
                                                                    (int64_t)j * dv + idx % (dv / 8) * 8);
                vx[i][0] = vr[0], vx[i][1] = vr[1];
            }
        }
#pragma unroll
        for (int i = 0; i < BATCH; i++) {
            const int idx = first + i * THREADS;
            if (idx < nk) {
                const int row = idx / (DK / 8), ch = idx % (DK / 8);
                const uint4 k16 = f16x8(kx[i][0], kx[i][1]), q16 = f16x8(qx[i][0], qx[i][1]);
                const uint32_t at = q35_swz_rows<DK / 8>(row, ch);
                q35_st_shared_v4(sK + at, k16.x, k16.y, k16.z, k16.w);
                q35_st_shared_v4(sQ + at, q16.x, q16.y, q16.z, q16.w);
                const float f = sB[row] * expf(sG[row]);
                q35_st_shared_f16x8(sKb + at, scaled(kx[i][0], f), scaled(kx[i][1], f));
                if (j < hk) {
                    *reinterpret_cast<uint4 *>(Kc + idx * 8) = k16;
                    *reinterpret_cast<uint4 *>(Qc + idx * 8) = q16;
                }
            }
            if (idx < nv) {
                const int row = idx / (dv / 8), cc = idx % (dv / 8);
                const float f = sB[row];
                q35_st_shared_f16x8(sVb + (cc / 4) * CH * SL * 2 + q35_swz_rows<SL / 8>(row, cc % 4),
                                    scaled(vx[i][0], f), scaled(vx[i][1], f));
            }
        }
    }
    __syncthreads();

    /* k.k and q.k over the warp's blocks (kk_block): A operand K or Q [t][dk]
     * (ldmatrix), B operand K stored [n = s][k = dk] (ldmatrix); each sum over
     * ks ascending */
    const int nblk = warp < 2 ? 3 : 2;
    float kk[3][2][4] = {}, qk[3][2][4] = {};
#pragma unroll
    for (int ks = 0; ks < DK / 16; ks++) {
#pragma unroll
        for (int bl = 0; bl < 3; bl++) {
            if (bl >= nblk)
                break;
            int rb, nb;
            kk_block(warp, bl, rb, nb);
            uint32_t ak[4], aq[4], b[4];
            const uint32_t at = q35_swz_rows<DK / 8>(16 * rb + lane % 16, 2 * ks + lane / 16);
            q35_ldsm_x4(ak, sK + at);
            q35_ldsm_x4(aq, sQ + at);
            q35_ldsm_x4(b, sK + q35_swz_rows<DK / 8>(16 * nb + lane % 8 + lane / 16 * 8, 2 * ks + (lane / 8) % 2));
            q35_mma16816(kk[bl][0], ak, b[0], b[1]);
            q35_mma16816(kk[bl][1], ak, b[2], b[3]);
            q35_mma16816(qk[bl][0], aq, b[0], b[1]);
            q35_mma16816(qk[bl][1], aq, b[2], b[3]);
        }
    }
    __syncthreads(); /* every warp's reads of K and Q: A takes their place */
    /* A = beta_t e^{G_t - G_s} k.k below the diagonal (shared, f32; its blocks
     * above the diagonal are never read); P = e^{G_t - G_s} q.k at and below it
     * (workspace, f16), zeros above */
    __half *Pc = Pg + ((size_t)c * hv + j) * CH * CH;
#pragma unroll
    for (int bl = 0; bl < 3; bl++) {
        if (bl >= nblk)
            break;
        int rb, nb;
        kk_block(warp, bl, rb, nb);
#pragma unroll
        for (int ni = 0; ni < 2; ni++)
#pragma unroll
            for (int h = 0; h < 2; h++) {
                const int t = 16 * rb + lane / 4 + 8 * h, s = 16 * nb + 8 * ni + 2 * (lane % 4);
                float a[2], p[2];
#pragma unroll
                for (int e = 0; e < 2; e++) {
                    const float dec = s + e <= t ? expf(sG[t] - sG[s + e]) : 0.0f;
                    a[e] = s + e < t ? sB[t] * dec * kk[bl][ni][2 * h + e] : 0.0f;
                    p[e] = dec * qk[bl][ni][2 * h + e];
                }
                *reinterpret_cast<float2 *>(sA + t * (CH + APAD) + s) = make_float2(a[0], a[1]);
                *reinterpret_cast<uint32_t *>(Pc + t * CH + s) = q35_pack_half2(p[0], p[1]);
            }
    }
#pragma unroll
    for (int idx = tid; idx < CH * CH / 8; idx += THREADS) { /* 8 halves a store */
        const int t = idx / (CH / 8), s = 8 * (idx % (CH / 8));
        if (s >= 16 * (t / 16 + 1))
            *reinterpret_cast<uint4 *>(Pc + t * CH + s) = make_uint4(0u, 0u, 0u, 0u);
    }
    __syncthreads();

    /* T = (I + A)^-1, column `col` by thread col: T_tc = [t == c] - sum_{s<t} A_ts T_sc
     * (T_sc = 0 for s < c, so the sums need no bound), four partial sums */
    if (tid < CH) {
        const int col = tid;
        float Tc[CH];
#pragma unroll
        for (int t = 0; t < CH; t++) {
            const float *a = sA + t * (CH + APAD);
            float x[4] = {t == col ? 1.0f : 0.0f, 0.0f, 0.0f, 0.0f};
#pragma unroll
            for (int s = 0; s + 4 <= t; s += 4) {
                const float4 a4 = *reinterpret_cast<const float4 *>(a + s);
                x[0] -= a4.x * Tc[s];
                x[1] -= a4.y * Tc[s + 1];
                x[2] -= a4.z * Tc[s + 2];
                x[3] -= a4.w * Tc[s + 3];
            }
#pragma unroll
            for (int s = t / 4 * 4; s < t; s++)
                x[s % 4] -= a[s] * Tc[s];
            Tc[t] = (x[0] + x[1]) + (x[2] + x[3]);
        }
#pragma unroll
        for (int t = 0; t < CH; t++)
            asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(sT + q35_swz_at<CH / 8>(t, col)),
                         "h"(__half_as_ushort(__float2half_rn(Tc[t]))));
    }
    __syncthreads();

    /* W = T (beta e^G K) and U = T (beta V): warp w the 32 columns 32 w.. of W
     * and U's slices w, w + 4, .. over every row block (the same products
     * for each warp) */
    static_assert(DK == 4 * 32, "W: a warp 32 columns");
    float acc[4][4][4];
    __half *Wc = Wg + ((size_t)c * hv + j) * CH * DK;
    t_times<DK / 8>(acc, sT, sKb, 32 * warp, lane);
#pragma unroll
    for (int rb = 0; rb < 4; rb++)
        store_f16(Wc, DK, 32 * warp, acc[rb], rb, lane);
    __half *Uc = Ug + ((size_t)c * hv + j) * CH * dv;
#pragma unroll 1
    for (int u = warp; u < dv / SL; u += 4) {
        t_times<SL / 8>(acc, sT, sVb + u * CH * SL * 2, 0, lane);
#pragma unroll
        for (int rb = 0; rb < 4; rb++)
            store_f16(Uc + (size_t)u * CH * SL, SL, 0, acc[rb], rb, lane);
    }
    if (tid < CH)
        Gg[((size_t)c * hv + j) * CH + tid] = sG[tid];
}

int prep_smem(int dv)
{
    return 3 * CH * DK * 2 + CH * dv * 2 + 2 * CH * 4;
}

bool aligned16(const void *p)
{
    return ((uintptr_t)p & 15u) == 0;
}

constexpr variant_impl k_w4 = make_variant<4, 32>();
const q35_variant k_production[] = {{"w4", 0, &k_w4}};

const q35_variant_set k_set = {{k_production, (int)(sizeof k_production / sizeof k_production[0])},
                                       &q35_delta_chunk_experiments};

} /* namespace */

int q35_delta_chunk_variant_count(void)
{
    return q35_variant_count(&k_set);
}

const char *q35_delta_chunk_variant_name(int variant)
{
    return q35_variant_name(&k_set, variant);
}

int q35_delta_chunk_variant_find(const char *name)
{
    return q35_variant_find(&k_set, name);
}

int q35_delta_chunk_variant_default(void)
{
    return q35_delta_chunk_variant_find("w4"); /* the fastest measured at the model's shapes (bench/results/) */
}

/* The checks the variant and the heads take on this device (the variant
 * resolved, its entry in *impl, the device's shared memory a block in *optin):
 * 0, or -1 and why. */
static int check_variant(int variant, q35_delta_dims d, const variant_impl **impl, int *optin, q35_error *err)
{
    if (variant == Q35_VARIANT_DEFAULT)
        variant = q35_delta_chunk_variant_default();
    const q35_variant *x = q35_variant_at(&k_set, variant);
    if (!x)
        return q35_fail(err, "delta_chunk: no variant %d (0..%d)", variant, q35_variant_count(&k_set) - 1);
    const variant_impl *v = static_cast<const variant_impl *>(x->impl);
    if (d.dk != DK || d.dv < v->cols || d.dv % v->cols != 0 || d.hk < 1 || d.hv < 1 || d.hv % d.hk != 0)
        return q35_fail(err,
                        "delta_chunk %s: unsupported heads Hk %d Hv %d dk %d dv %d (this kernel needs dk = %d, dv a "
                        "multiple of %d, Hv a multiple of Hk)",
                        x->name, d.hk, d.hv, d.dk, d.dv, DK, v->cols);
    int dev = 0;
    if (Q35_CUDA_CHECK(cudaGetDevice(&dev), err) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), err))
        return -1;
    const int prep_bytes = prep_smem(d.dv);
    if (prep_bytes > *optin || v->smem > *optin)
        return q35_fail(err, "delta_chunk %s: needs %d bytes of shared memory a block (dv %d), the device allows %d",
                        x->name, prep_bytes > v->smem ? prep_bytes : v->smem, d.dv, *optin);
    *impl = v;
    return 0;
}

int q35_delta_chunk_variant_supported(int variant, q35_delta_dims d, q35_error *err)
{
    const variant_impl *impl;
    int optin;
    return check_variant(variant, d, &impl, &optin, err);
}

int q35_delta_chunk(float *o, int64_t o_stride, float *S, const float *q, const float *k, const float *v,
                    int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d, void *workspace,
                    size_t workspace_bytes, int variant, q35_stream stream, q35_error *err)
{
    const variant_impl *impl = nullptr;
    int optin = 0;
    if (check_variant(variant, d, &impl, &optin, err))
        return -1;
    if (T < 0 || stride % 4 || o_stride % 4 || o_stride < (int64_t)d.hv * d.dv || !aligned16(q) || !aligned16(k) ||
        !aligned16(v) || !aligned16(o) || !aligned16(S))
        return q35_fail(err,
                        "delta_chunk: T %lld, stride %lld and o_stride %lld (multiples of 4, o_stride >= Hv*dv), "
                        "pointers 16-byte aligned (q %p k %p v %p o %p S %p)",
                        (long long)T, (long long)stride, (long long)o_stride, (const void *)q, (const void *)k,
                        (const void *)v, (const void *)o, (const void *)S);
    if (T == 0)
        return 0;
    const q35_delta_chunk_layout L = q35_delta_chunk_layout_of(T, d);
    if (workspace_bytes < L.total || ((uintptr_t)workspace & 255u))
        return q35_fail(err, "delta_chunk: workspace of %zu bytes at %p (T %lld needs %zu, 256-byte aligned)",
                        workspace_bytes, workspace, (long long)T, L.total);
    const int64_t nc = (T + CH - 1) / CH;
    if (nc * d.hv > 0x7fffffff)
        return q35_fail(err, "delta_chunk: T %lld is %lld chunks of %d value heads (at most 2^31 - 1 blocks)",
                        (long long)T, (long long)nc, d.hv);
    const int prep_bytes = prep_smem(d.dv);
    char *ws = static_cast<char *>(workspace);
    __half *W = reinterpret_cast<__half *>(ws + L.w), *U = reinterpret_cast<__half *>(ws + L.u);
    __half *P = reinterpret_cast<__half *>(ws + L.p), *Q = reinterpret_cast<__half *>(ws + L.q);
    __half *K = reinterpret_cast<__half *>(ws + L.k);
    float *G = reinterpret_cast<float *>(ws + L.g);
    if (Q35_CUDA_CHECK(cudaFuncSetAttribute(q35_delta_chunk_prep, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                            prep_bytes),
                       err))
        return -1;
    q35_delta_chunk_prep<<<(unsigned)(nc * d.hv), THREADS, prep_bytes, stream>>>(
        q, k, v, stride, g, beta, T, d.hk, d.hv, d.dv, W, U, P, G, Q, K);
    if (Q35_LAUNCH_CHECK("q35_delta_chunk_prep", err))
        return -1;
    return impl->state(optin, o, o_stride, S, T, d, W, U, P, G, Q, K, stream, err);
}
