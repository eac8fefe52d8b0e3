/* The flash prefill attention (kernels/attention.h's formula and shapes): one
 * fused causal kernel, f16 inputs (q rounded from f32; the caches f32,
 * rounded per tile, or f16, as they are) to
 * mma.sync tensor cores, f32 accumulation, f32 online softmax, head_dim 256, a
 * whole GQA group per block, no scores materialised; sm_80 or newer.
 * kernels/attention_flash.cu (launchers), kernels/attention_flash.cuh (the
 * kernel), kernels/experiments/attention_flash.cu (the experiment variants). */
#ifndef Q35_KERNELS_ATTENTION_FLASH_H
#define Q35_KERNELS_ATTENTION_FLASH_H

#include "kernels/attention.h"
#include "kernels/cuda.h"
#include "kernels/variant.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How a call runs: the kernel variant and the KV split. */
typedef struct q35_flash_options {
    int variant; /* an index of the registry below; Q35_VARIANT_DEFAULT: q35_attention_flash_variant_default */
    int split;   /* 0: the launcher's choice (the device's SM count decides); 1 none; 2 or 4 blocks of a
                    cluster sharing a query tile (compute capability 9.0+) */
} q35_flash_options;

/* Whether variant `variant` of the flash kernel can run these heads on this
 * device (compute capability >= 8.0, head_dim 256, heads a multiple of
 * kv_heads, groups of 1, 2, 3, 4, 6 or 8 query heads, the shared memory the
 * variant needs): 1, or 0 with the reason in why. Q35_VARIANT_DEFAULT asks
 * whether flash runs here at all (the base variant, which runs wherever any
 * does). */
int q35_attention_flash_supported(int device, q35_attn_shape s, int variant, q35_error *why);

/* CUDA, flash path: o [T][o_stride] for query rows q [T][q_stride] at positions
 * pos0..pos0+T-1, over cache rows 0..pos0+T-1 (this chunk's rows already
 * appended); no workspace. opt NULL: every default. Refuses what
 * q35_attention_flash_supported refuses, with its reason; q and the caches must
 * be 16-byte aligned with strides of whole float4, o 8-byte aligned with an
 * even stride, pos0 + T <= INT32_MAX. */
int q35_attention_prefill_flash(float *o, const float *q, const float *k_cache, const float *v_cache, int64_t pos0,
                                int64_t T, q35_attn_shape s, const q35_flash_options *opt, q35_stream stream,
                                q35_error *err);

/* CUDA, flash path over f16 caches (IEEE half bits, as q35_kv_append_rows_f16
 * writes them; s.kv_stride counts halves): the same contract and refusals, the
 * caches' strides whole 16 bytes (8 halves). The kernel rounds an f32 cache to
 * f16 on its way to the tensor cores; an f16 cache holding those very roundings
 * gives the same tiles, so o is bitwise q35_attention_prefill_flash's over the
 * f32 cache the f16 one was rounded from. Half the cache's bytes to read. */
int q35_attention_prefill_flash_f16(float *o, const float *q, const uint16_t *k_cache, const uint16_t *v_cache,
                                    int64_t pos0, int64_t T, q35_attn_shape s, const q35_flash_options *opt,
                                    q35_stream stream, q35_error *err);

/* The variants (kernels/variant.h): the same contract, other tilings and
 * stagings (kernels/attention_flash.cuh lists them). Production: base (runs
 * wherever flash runs) and kv64; the rest are experiments. The default: kv64
 * where the device's shared memory holds it (sm_80, sm_90), else base (sm_86,
 * sm_89). */
int q35_attention_flash_variant_count(void);
const char *q35_attention_flash_variant_name(int variant);
int q35_attention_flash_variant_find(const char *name);
int q35_attention_flash_variant_production(int variant);
int q35_attention_flash_variant_default(int device, q35_attn_shape s);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_ATTENTION_FLASH_H */
