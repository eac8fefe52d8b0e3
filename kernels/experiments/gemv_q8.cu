/* The 8-bit-activation GEMV's experiment variants (kernels/gemv_q8.h says
 * what each name means): built into the suites and the benchmarks only
 * (kernels/variant.h), beside the production registers. Every variant gives
 * the same bits (kernels/gemv_q8.cuh; test_kernels_linear checks it). */
#include "kernels/gemv_q8.cuh"

namespace {

/* persist: the resident grid, 2 rows a group; its Q6_K form (kPersists) and its
 * early form rows2's. */
q35_gemv_q8_impl persist_impl()
{
    q35_gemv_q8_impl p = q8_warp_impl<2, 1>();
    p.plain[0] = gemv_q8_kernel_persist<Q35_TYPE_Q4_K, 2>;
    p.plain[1] = gemv_q8_kernel_persist<Q35_TYPE_Q5_K, 2>;
    p.plain[3] = gemv_q8_kernel_persist<Q35_TYPE_Q8_0, 2>;
    p.resident[0] = p.resident[1] = p.resident[3] = true;
    static_assert(!kPersists<Q35_TYPE_Q6_K>, "Q6_K's persist form is rows2's");
    return p;
}

const q35_gemv_q8_impl k_persist = persist_impl(), k_rows2 = q8_warp_impl<2, 1>(), k_unroll2 = q8_warp_impl<4, 2>();
const q35_variant k_experiments[] = {{"persist", 1, &k_persist}, {"rows2", 2, &k_rows2}, {"unroll2", 3, &k_unroll2}};

} // namespace

extern "C" const q35_variant_table q35_gemv_q8_experiments = Q35_VARIANT_TABLE(k_experiments);
