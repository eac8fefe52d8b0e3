/* The chunked delta rule's experiment variants w8 (8 warps a block in the
 * state pass over 32 value columns) and s64w8 (8 warps over 64;
 * kernels/delta_chunk.cuh): built into the suites and the benchmarks only
 * (kernels/variant.h), beside the production w4. */
#include "kernels/delta_chunk.cuh"

using namespace q35_delta_chunk_kernels;

static constexpr variant_impl k_w8 = make_variant<8, 32>(), k_s64w8 = make_variant<8, 64>();
static const q35_variant k_experiments[] = {{"w8", 1, &k_w8}, {"s64w8", 2, &k_s64w8}};

extern "C" const q35_variant_table q35_delta_chunk_experiments = {
    k_experiments, (int)(sizeof k_experiments / sizeof k_experiments[0])};
