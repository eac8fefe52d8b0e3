/* The flash prefill attention's launchers and registry (kernels/attention_flash.h):
 * the production variants, base (the fallback: it runs wherever flash runs)
 * and kv64 (the default where shared memory holds it); the kernel is
 * kernels/attention_flash.cuh's, the other variants are experiments
 * (kernels/experiments/attention_flash.cu). */
#include "kernels/attention_flash.cuh"


#pragma weak q35_attention_flash_experiments

static constexpr q35_flash_impl k_base = flash_impl<q35_flash_base>(), k_kv64 = flash_impl<q35_flash_kv64>();
static const q35_variant k_production[] = {{"base", 0, &k_base}, {"kv64", 1, &k_kv64}};

static const q35_variant_set k_set = {Q35_VARIANT_TABLE(k_production), &q35_attention_flash_experiments, NULL};

Q35_VARIANT_REGISTRY(attention_flash, k_set)

int q35_attention_flash_supported(int device, q35_attn_shape s, int variant, q35_error *why)
{
    int major = 0, minor = 0, optin = 0;
    const int n = q35_variant_count(&k_set);
    if (variant == Q35_VARIANT_DEFAULT)
        variant = q35_variant_find(&k_set, "base");
    const q35_variant *v = q35_variant_at(&k_set, variant);
    if (!v) {
        q35_fail(why, "flash attention has variants 0..%d, not %d", n - 1, variant);
        return 0;
    }
    if (Q35_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device), why) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device), why) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device), why))
        return 0;
    if (major < 8) {
        q35_fail(why, "flash attention needs compute capability 8.0 or newer (mma.sync f16, ldmatrix); device %d is "
                      "%d.%d",
                 device, major, minor);
        return 0;
    }
    if (s.head_dim != HD) {
        q35_fail(why, "flash attention takes head_dim %d only, not %d", HD, s.head_dim);
        return 0;
    }
    if (s.heads < 1 || s.kv_heads < 1 || s.heads % s.kv_heads != 0) {
        q35_fail(why, "flash attention: heads %d is not a multiple of kv_heads %d", s.heads, s.kv_heads);
        return 0;
    }
    const int hpk = s.heads / s.kv_heads, R = flash_rows(hpk);
    if (R == 0) {
        q35_fail(why, "flash attention: %d query heads per KV head (the kernel takes groups of 1, 2, 3, 4, 6 or 8)",
                 hpk);
        return 0;
    }
    const q35_flash_impl *e = static_cast<const q35_flash_impl *>(v->impl);
    const size_t need = (hpk * R == 128 ? e->smem128 : e->smem96) + 2 * MAX_M * sizeof(float);
    if ((size_t)optin < need) {
        q35_fail(why, "flash attention (variant %s) needs %zu bytes of shared memory per block; device %d allows %d",
                 v->name, need, device, optin);
        return 0;
    }
    return 1;
}

int q35_attention_flash_variant_default(int device, q35_attn_shape s)
{
    const int kv64 = q35_variant_find(&k_set, "kv64");
    q35_error why = {{0}};
    return q35_attention_flash_supported(device, s, kv64, &why) == 1 ? kv64 : q35_variant_find(&k_set, "base");
}

/* Both launchers: the checks, the variant and the KV split, then the variant's
 * launcher over f32 (f16 false) or f16 caches. */
static int prefill_flash(const char *who, bool f16, float *o, const float *q, const void *k_cache,
                         const void *v_cache, int64_t pos0, int64_t T, q35_attn_shape s, const q35_flash_options *opt,
                         q35_stream stream, q35_error *err)
{
    if (q35_attention_check_shape(who, s, err))
        return -1;
    int dev = 0;
    if (Q35_CUDA_CHECK(cudaGetDevice(&dev), err))
        return -1;
    int variant = opt ? opt->variant : Q35_VARIANT_DEFAULT, split = opt ? opt->split : 0;
    if (variant == Q35_VARIANT_DEFAULT)
        variant = q35_attention_flash_variant_default(dev, s);
    q35_error why = {{0}};
    if (!q35_attention_flash_supported(dev, s, variant, &why))
        return q35_fail(err, "%s: %s", who, why.msg);
    if (pos0 < 0 || T < 0 || pos0 > (int64_t)INT32_MAX - T || (split != 0 && split != 1 && split != 2 && split != 4))
        return q35_fail(err, "%s: pos0 %lld, T %lld (>= 0, pos0 + T <= %d), split %d (0 auto, 1, 2 or 4)", who,
                        (long long)pos0, (long long)T, INT32_MAX, split);
    /* a chunk of 8 cache values is 32 bytes (f32) or 16 (f16): 16-byte aligned rows either way */
    const int64_t per16 = f16 ? 8 : 4;
    const uintptr_t bits = (uintptr_t)q | (uintptr_t)k_cache | (uintptr_t)v_cache;
    if (bits % 16 || (uintptr_t)o % 8 || s.q_stride % 4 || s.kv_stride % per16 || s.o_stride % 2)
        return q35_fail(err, "%s: q and the caches must be 16-byte aligned with strides of whole 16 bytes (q %lld "
                             "floats, kv %lld %s), o 8-byte aligned with an even stride (%lld)",
                        who, (long long)s.q_stride, (long long)s.kv_stride, f16 ? "halves" : "floats",
                        (long long)s.o_stride);
    if (T == 0)
        return 0;
    int major = 0, sms = 0;
    if (Q35_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev), err) ||
        Q35_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev), err))
        return -1;
    const int hpk = s.heads / s.kv_heads, R = flash_rows(hpk), m = hpk * R;
    /* every module of the build has the same architectures: this one's answer
     * holds for the experiments' too */
    const bool clusters =
        q35_clusters_usable((const void *)q35_flash_kernel<q35_flash_base, 128, MAX_SPLIT, float>, major);
    if (split == 0) {
        /* up to one wave of blocks, at least 4 tiles per block on the longest
         * rows (tiles of 32 positions whatever the variant's: the same choice) */
        const int64_t blocks = (T + R - 1) / R * s.kv_heads, tiles = (pos0 + T + 31) / 32;
        split = 1;
        while (clusters && split < MAX_SPLIT && blocks * split * 2 <= sms && tiles >= 8 * split)
            split *= 2;
    }
    if (split > 1 && !clusters)
        return q35_fail(err, "%s: a KV split of %d needs thread-block clusters (compute capability 9.0+, a build "
                             "with sm_90 code)",
                        who, split);
    const q35_flash_impl *e = static_cast<const q35_flash_impl *>(q35_variant_at(&k_set, variant)->impl);
    return (f16 ? e->launch_f16 : e->launch_f32)(m, split, o, q, k_cache, v_cache, pos0, T, s, (cudaStream_t)stream,
                                                 err);
}

int q35_attention_prefill_flash(float *o, const float *q, const float *k_cache, const float *v_cache, int64_t pos0,
                                int64_t T, q35_attn_shape s, const q35_flash_options *opt, q35_stream stream,
                                q35_error *err)
{
    return prefill_flash("attention_prefill_flash", false, o, q, k_cache, v_cache, pos0, T, s, opt, stream, err);
}

int q35_attention_prefill_flash_f16(float *o, const float *q, const uint16_t *k_cache, const uint16_t *v_cache,
                                    int64_t pos0, int64_t T, q35_attn_shape s, const q35_flash_options *opt,
                                    q35_stream stream, q35_error *err)
{
    return prefill_flash("attention_prefill_flash_f16", true, o, q, k_cache, v_cache, pos0, T, s, opt, stream, err);
}
