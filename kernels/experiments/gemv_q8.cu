/* The 8-bit-activation GEMV's experiment variants (kernels/gemv_q8.h says
 * what each name means): built into the suites and the benchmarks only
 * (kernels/variant.h), beside the production registers and persist. Every variant gives
 * the same bits (kernels/gemv_q8.cuh; test_kernels_linear checks it). */
#include "kernels/gemv_q8.cuh"

namespace {

const q35_gemv_q8_impl k_rows2 = q8_warp_impl<2, 1>(), k_unroll2 = q8_warp_impl<4, 2>();
const q35_variant k_experiments[] = {{"rows2", 2, &k_rows2}, {"unroll2", 3, &k_unroll2}};

} // namespace

extern "C" const q35_variant_table q35_gemv_q8_experiments = Q35_VARIANT_TABLE(k_experiments);
