/* The 8-bit-activation GEMV (kernels/gemv_q8.h).
 *
 * The quantization: a warp a block of 32 (a lane an element),
 * kernels/q8_block.cuh. The product: kernels/gemv_q8.cuh; its production
 * variants (registers, persist) here, the others in
 * kernels/experiments/gemv_q8.cu. */
#include "kernels/gemv_q8.cuh"
#include "kernels/linear_args.cuh"
#include "kernels/q8_block.cuh"

#include <cuda_runtime.h>

#pragma weak q35_gemv_q8_experiments

namespace {

/* ---- the quantization ---- */

__global__ void __launch_bounds__(256) quantize_kernel(int8_t *q, float *d, float *s, const float *x, int64_t blocks)
{
    q35_grid_chain(); /* the grids before and after it (kernels/sm90.cuh) */
    const int64_t b = (int64_t)blockIdx.x * 8 + threadIdx.x / 32;
    const int lane = threadIdx.x % 32;
    if (b >= blocks)
        return; /* the whole warp */
    q35_q8_block(q, d, s, b, x[32 * b + lane], lane);
}

const q35_gemv_q8_impl k_registers = q8_warp_impl<4, 1>(), k_persist = q8_persist_impl();
const q35_variant k_production[] = {{"registers", 0, &k_registers}, {"persist", 1, &k_persist}};
const q35_variant_set k_variants = {Q35_VARIANT_TABLE(k_production), &q35_gemv_q8_experiments, NULL};

int product(const char *who, gemv_parts P, q35_type type, int64_t k, const void *xq, int variant, bool early,
            q35_stream stream, q35_error *err)
{
    if (!q35_gemv_q8_takes(type))
        return q35_fail(err, "%s: type %s (the 8-bit-activation GEMV takes q4_K, q5_K, q6_K, q8_0)", who,
                        q35_type_name(type));
    if (variant == Q35_VARIANT_DEFAULT)
        variant = q35_gemv_q8_variant_default();
    const q35_variant *v = q35_variant_at(&k_variants, variant);
    if (!v)
        return q35_fail(err, "%s: variant %d (want 0 .. %d)", who, variant, q35_gemv_q8_variant_count() - 1);
    if (check_parts(who, P, type, k, err))
        return -1;
    const bool wide = type == Q35_TYPE_Q4_K || type == Q35_TYPE_Q5_K;
    for (int i = 0; i < P.count; i++)
        if ((uintptr_t)P.w[i] % (wide ? 16 : 2) != 0)
            return q35_fail(err, "%s: weight %d at %p (a %s weight must be %d-byte aligned)", who, i,
                            (const void *)P.w[i], q35_type_name(type), wide ? 16 : 2);
    if ((uintptr_t)xq % 16 != 0)
        return q35_fail(err, "%s: the quantized x at %p (want 16-byte aligned)", who, xq);
    const int64_t row_bytes = (int64_t)q35_row_bytes(type, k);
    const q35_gemv_q8_impl *impl = static_cast<const q35_gemv_q8_impl *>(v->impl);
    const int t = q8_type_at(type);
    P = impl->nr == 2 ? with_groups<2>(P) : with_groups<4>(P);
    q8_kernel_fn fn = early ? impl->early[t] : impl->plain[t];
    bool resident = impl->resident[t] && fn == impl->plain[t]; /* an early form that is the plain kernel: its grid */
    if (impl->ring[t] && parts_aligned16(P) && row_bytes % 16 == 0 && row_bytes <= INT32_MAX / impl->nr)
        fn = impl->ring[t], resident = true; /* its rows through shared memory (gemv_q8_kernel_ring) */
    return q8_launch(who, fn, P, row_bytes, k, xq, resident, early, stream, err);
}

} // namespace

int q35_gemv_q8_quantize(void *xq, const float *x, int64_t k, q35_stream stream, q35_error *err)
{
    if (k < 32 || k % 32 != 0 || k > INT32_MAX)
        return q35_fail(err, "gemv_q8_quantize: k = %lld (want a multiple of 32, 32..%d)", (long long)k, INT32_MAX);
    if ((uintptr_t)xq % 16 != 0 || (uintptr_t)x % 4 != 0)
        return q35_fail(err, "gemv_q8_quantize: the quantized x at %p (want 16-byte aligned), x at %p (4-byte)", xq,
                        (const void *)x);
    int8_t *q = static_cast<int8_t *>(xq);
    float *d = reinterpret_cast<float *>(static_cast<char *>(xq) + q35_gemv_q8_d_at(k));
    float *s = reinterpret_cast<float *>(static_cast<char *>(xq) + q35_gemv_q8_s_at(k));
    const int64_t blocks = k / 32;
    quantize_kernel<<<(unsigned)((blocks + 7) / 8), 256, 0, stream>>>(q, d, s, x, blocks);
    return Q35_LAUNCH_CHECK("gemv_q8_quantize", err);
}

Q35_VARIANT_REGISTRY(gemv_q8, k_variants)

int q35_gemv_q8_variant_default(void)
{
    return q35_gemv_q8_variant_find("persist");
}

int q35_gemv_q8(float *y, const void *w, q35_type type, int64_t n, int64_t k, const void *xq, int variant,
                q35_stream stream, q35_error *err)
{
    return product("gemv_q8", one_part(y, w, n), type, k, xq, variant, false, stream, err);
}

int q35_gemv_q8_add(float *y, const void *w, q35_type type, int64_t n, int64_t k, const void *xq, int variant,
                    q35_stream stream, q35_error *err)
{
    gemv_parts P = one_part(y, w, n);
    P.add = true;
    return product("gemv_q8_add", P, type, k, xq, variant, false, stream, err);
}

int q35_gemv_q8_group(const q35_gemv_part *parts, int count, q35_type type, int64_t k, const void *xq, int variant,
                      q35_stream stream, q35_error *err)
{
    gemv_parts P;
    if (parts_of("gemv_q8_group", parts, count, type, &P, err))
        return -1;
    return product("gemv_q8_group", P, type, k, xq, variant, false, stream, err);
}

int q35_gemv_q8_group_early(const q35_gemv_part *parts, int count, q35_type type, int64_t k, const void *xq,
                            int variant, q35_stream stream, q35_error *err)
{
    gemv_parts P;
    bool early = false;
    if (q8_early_here(&early, err) || parts_of("gemv_q8_group_early", parts, count, type, &P, err))
        return -1;
    return product("gemv_q8_group_early", P, type, k, xq, variant, early, stream, err);
}
