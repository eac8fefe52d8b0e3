/* The chunked gated delta rule (kernels/delta_chunk.h): the parallel pass,
 * the production variant's state pass (w4) and the launcher; the kernels'
 * description and the state pass: kernels/delta_chunk.cuh. */
#include "kernels/delta_chunk.cuh"
#include "kernels/delta_chunk_prep.cuh"
#include "kernels/delta_chunk_tb.cuh"
#include "kernels/delta_prep.h"

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>

#pragma weak q35_delta_chunk_experiments
#pragma weak q35_delta_chunk_sm90_variants

namespace {

using namespace q35_delta_chunk_kernels;

/* ---- the parallel pass --------------------------------------------------------- */

__global__ void __launch_bounds__(THREADS, 3) q35_delta_chunk_prep(const float *q, const float *k, const float *v,
                                                                   int64_t stride, const float *g, const float *beta,
                                                                   int64_t T, int hk, int hv, int dv, __half *Wg,
                                                                   __half *Ug, __half *Pg, float *Gg, __half *Qg,
                                                                   __half *Kg)
{
    extern __shared__ __align__(16) unsigned char smem[];
    const prep_at p = prep_where(T, hk, hv);
    const int c = p.c, j = p.j, tid = p.tid, warp = p.warp, lane = p.lane;
    /* K and Q [64][128] f16, dead after k.k and q.k, then A [64][64 + APAD] f32
     * and T [64][64] f16 in their place; beta e^G K [64][128] and beta V
     * [dv/32][64][32] f16; G and beta [64] f32 */
    const uint32_t sK = (uint32_t)__cvta_generic_to_shared(smem), sQ = sK + CH * DK * 2;
    const uint32_t sT = sK + CH * (CH + APAD) * 4;
    const uint32_t sKb = sQ + CH * DK * 2, sVb = sKb + CH * DK * 2;
    float *sG = reinterpret_cast<float *>(smem + 3 * CH * DK * 2 + CH * dv * 2), *sB = sG + CH;
    static_assert(CH * (CH + APAD) * 4 + CH * CH * 2 <= 2 * CH * DK * 2, "A and T fit where K and Q were");
    auto put = [&](int t, float x) { /* T, one column a thread, as f16 into sT */
        asm volatile("st.shared.b16 [%0], %1;\n" ::"r"(sT + q35_swz_at<CH / 8>(t, tid)),
                     "h"(__half_as_ushort(__float2half_rn(x))));
    };
    prep_front<true>(p, smem, sKb, sVb, sG, sB, q, k, v, stride, g, beta, hk, hv, dv, Pg, Qg, Kg, put);

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
constexpr variant_impl k_tb4 = {nullptr, tb_cfg::C::SW, tb_cfg::C::smem(2), run_tb, 1};
const q35_variant k_production[] = {{"w4", 0, &k_w4}, {"tb4", 4, &k_tb4}};

static_assert(Q35_DELTA_PREP_QK16_ROWS == CH, "delta_prep's f16 q/k rows come in the chunks this kernel reads");

const q35_variant_set k_set = {Q35_VARIANT_TABLE(k_production), &q35_delta_chunk_experiments,
                               &q35_delta_chunk_sm90_variants};

} /* namespace */

Q35_VARIANT_REGISTRY(delta_chunk, k_set)

int q35_delta_chunk_variant_family(int variant)
{
    const q35_variant *x = q35_variant_at(&k_set, variant);
    return x ? static_cast<const variant_impl *>(x->impl)->family : -1;
}

int q35_delta_chunk_variant_takes_qk16(int variant)
{
    const q35_variant *x = q35_variant_at(&k_set, variant);
    return x && static_cast<const variant_impl *>(x->impl)->run ? 1 : 0;
}

/* Whether the current device runs entry v's kernels (its runs_on, where it has
 * one), the device's shared memory a block in *optin: 0, or -1 and why. */
static int device_runs(const variant_impl *v, int *optin, q35_error *err)
{
    int dev = 0;
    if (Q35_CUDA_CHECK(cudaGetDevice(&dev), err) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev), err))
        return -1;
    return v->runs_on && !v->runs_on(dev, err) ? -1 : 0;
}

int q35_delta_chunk_variant_default(void)
{
    /* the fastest at the model's shapes (bench/results/index.tsv, family kernels): tb4wm2kh, then tb4wtkh, where this device runs
       it (an sm_90 device, a build with its sm_90a code, the program linking q35_kernels_sm90, the shared memory),
       else tb4 */
    static const char *const order[] = {"tb4wm2kh", "tb4wtkh"};
    for (const char *name : order) {
        const int w = q35_delta_chunk_variant_find(name);
        const q35_variant *x = q35_variant_at(&k_set, w);
        if (!x)
            continue;
        const variant_impl *v = static_cast<const variant_impl *>(x->impl);
        q35_error why{}; /* why not, for no one: the fallback is the answer */
        int optin = 0;
        if (device_runs(v, &optin, &why) == 0 && v->smem <= optin)
            return w;
    }
    return q35_delta_chunk_variant_find("tb4");
}

/* The checks the variant and the heads take on this device (the variant
 * resolved in *variant_io, its entry in *impl, the device's shared memory a block
 * in *optin): 0, or -1 and why. */
static int check_variant(int *variant_io, q35_delta_dims d, const variant_impl **impl, int *optin, q35_error *err)
{
    if (*variant_io == Q35_VARIANT_DEFAULT)
        *variant_io = q35_delta_chunk_variant_default();
    const int variant = *variant_io;
    const q35_variant *x = q35_variant_at(&k_set, variant);
    if (!x)
        return q35_fail(err, "delta_chunk: no variant %d (0..%d)", variant, q35_variant_count(&k_set) - 1);
    const variant_impl *v = static_cast<const variant_impl *>(x->impl);
    if (d.dk != DK || d.dv < v->cols || d.dv % v->cols != 0 || d.hk < 1 || d.hv < 1 || d.hv % d.hk != 0)
        return q35_fail(err,
                        "delta_chunk %s: unsupported heads Hk %d Hv %d dk %d dv %d (this kernel needs dk = %d, dv a "
                        "multiple of %d, Hv a multiple of Hk)",
                        x->name, d.hk, d.hv, d.dk, d.dv, DK, v->cols);
    if (device_runs(v, optin, err))
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
    return check_variant(&variant, d, &impl, &optin, err);
}

/* Both entries: q and k NULL (q35_delta_chunk_qk16) when they are in the
 * workspace already; `who` names the entry in errors. */
static int chunk_call(const char *who, float *o, int64_t o_stride, float *S, const float *q, const float *k,
                      const float *v, int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d,
                      void *workspace, size_t workspace_bytes, int variant, q35_stream stream, q35_error *err)
{
    const variant_impl *impl = nullptr;
    int optin = 0;
    if (check_variant(&variant, d, &impl, &optin, err)) /* variant resolved: the default's index */
        return -1;
    const bool qk16 = q == nullptr;
    if (qk16 && !impl->run)
        return q35_fail(err, "%s: variant %s reads q and k in f32 (q35_delta_chunk); q and k in f16 need tb4's "
                             "formulation (q35_delta_chunk_variant_takes_qk16)",
                        who, q35_delta_chunk_variant_name(variant));
    if (T < 0 || stride % 4 || o_stride % 4 || o_stride < (int64_t)d.hv * d.dv || (!qk16 && !aligned16(q)) ||
        (!qk16 && !aligned16(k)) || !aligned16(v) || !aligned16(o) || !aligned16(S))
        return q35_fail(err,
                        "%s: T %lld, stride %lld and o_stride %lld (multiples of 4, o_stride >= Hv*dv), "
                        "pointers 16-byte aligned (q %p k %p v %p o %p S %p)",
                        who, (long long)T, (long long)stride, (long long)o_stride, (const void *)q, (const void *)k,
                        (const void *)v, (const void *)o, (const void *)S);
    if (T == 0)
        return 0;
    const q35_delta_chunk_layout L = q35_delta_chunk_layout_of(T, d);
    if (!workspace || workspace_bytes < L.total || ((uintptr_t)workspace & 255u))
        return q35_fail(err, "%s: workspace of %zu bytes at %p (T %lld needs %zu, 256-byte aligned)", who,
                        workspace_bytes, workspace, (long long)T, L.total);
    const int64_t nc = (T + CH - 1) / CH;
    if (nc * d.hv > 0x7fffffff)
        return q35_fail(err, "%s: T %lld is %lld chunks of %d value heads (at most 2^31 - 1 blocks)", who,
                        (long long)T, (long long)nc, d.hv);
    const int prep_bytes = prep_smem(d.dv);
    char *ws = static_cast<char *>(workspace);
    __half *W = reinterpret_cast<__half *>(ws + L.w), *U = reinterpret_cast<__half *>(ws + L.u);
    __half *P = reinterpret_cast<__half *>(ws + L.p), *Q = reinterpret_cast<__half *>(ws + L.q);
    __half *K = reinterpret_cast<__half *>(ws + L.k);
    float *G = reinterpret_cast<float *>(ws + L.g);
    if (impl->run) /* another formulation: both passes its own */
        return impl->run(optin, o, o_stride, S, q, k, v, stride, g, beta, T, d, W, U, P, G, Q, K, stream, err);
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

int q35_delta_chunk(float *o, int64_t o_stride, float *S, const float *q, const float *k, const float *v,
                    int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d, void *workspace,
                    size_t workspace_bytes, int variant, q35_stream stream, q35_error *err)
{
    if (!q || !k)
        return q35_fail(err, "delta_chunk: q %p and k %p must be set", (const void *)q, (const void *)k);
    return chunk_call("delta_chunk", o, o_stride, S, q, k, v, stride, g, beta, T, d, workspace, workspace_bytes,
                      variant, stream, err);
}

int q35_delta_chunk_qk16(float *o, int64_t o_stride, float *S, const float *v, int64_t v_stride, const float *g,
                         const float *beta, int64_t T, q35_delta_dims d, void *workspace, size_t workspace_bytes,
                         int variant, q35_stream stream, q35_error *err)
{
    return chunk_call("delta_chunk_qk16", o, o_stride, S, nullptr, nullptr, v, v_stride, g, beta, T, d, workspace,
                      workspace_bytes, variant, stream, err);
}
