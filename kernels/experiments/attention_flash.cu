/* The flash kernel's experiment variants (kernels/attention_flash.cuh lists
 * them and what each tries): built into the suites and the benchmarks only
 * (kernels/variant.h), so every one stays tested and measured beside the
 * production base and kv64. */
#include "kernels/attention_flash.cuh"

static constexpr q35_flash_impl k_async = flash_impl<q35_flash_async>(),
                                k_kv64_async = flash_impl<q35_flash_kv64_async>(),
                                k_pair_async = flash_impl<q35_flash_pair_async>(),
                                k_dsplit16_async = flash_impl<q35_flash_dsplit16_async>();
static const q35_variant k_experiments[] = {
    {"async", 2, &k_async},
    {"kv64_async", 3, &k_kv64_async},
    {"pair_async", 4, &k_pair_async},
    {"dsplit16_async", 5, &k_dsplit16_async},
};

extern "C" const q35_variant_table q35_attention_flash_experiments = Q35_VARIANT_TABLE(k_experiments);
