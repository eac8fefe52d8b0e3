/* The chunked delta rule's experiment variant w8 (8 warps a block in the state
 * pass; kernels/delta_chunk.cuh): built into the suites and the benchmarks only
 * (kernels/variant.h), beside the production w4. */
#include "kernels/delta_chunk.cuh"

using namespace q35_delta_chunk_kernels;

static constexpr variant_impl k_w8 = {launch_state<8>};
static const q35_variant k_experiments[] = {{"w8", 1, &k_w8}};

extern "C" const q35_variant_table q35_delta_chunk_experiments = {
    k_experiments, (int)(sizeof k_experiments / sizeof k_experiments[0])};
