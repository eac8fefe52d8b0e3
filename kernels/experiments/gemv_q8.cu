/* The 8-bit-activation GEMV's experiment variants (kernels/gemv_q8.h says
 * what each name means): built into the suites and the benchmarks only
 * (kernels/variant.h), beside the production registers and persist. Every variant gives
 * the same bits (kernels/gemv_q8.cuh; test_kernels_gemv_q8 checks it). */
#include "kernels/gemv_q8.cuh"

namespace {

/* persist_narrow: persist as it was before the wide loads and the ring: Q6_K
 * rows2's form with 2-byte loads, Q6_K and Q8_0 never through the ring */
q35_gemv_q8_impl persist_narrow_impl()
{
    q35_gemv_q8_impl p = q8_persist_impl();
    p.plain[2] = p.early[2] = gemv_q8_kernel<Q35_TYPE_Q6_K, 2, false, 1>;
    p.ring[2] = p.ring[3] = nullptr;
    return p;
}

/* persist_u2: persist with a lane's two next units loaded before either is
 * computed (unroll2's loads in persist's grid; Q6_K rows2's form so unrolled) */
q35_gemv_q8_impl persist_u2_impl()
{
    q35_gemv_q8_impl p = q8_persist_impl();
    p.plain[0] = gemv_q8_kernel_persist<Q35_TYPE_Q4_K, 2, 2>;
    p.plain[1] = gemv_q8_kernel_persist<Q35_TYPE_Q5_K, 2, 2>;
    p.plain[2] = gemv_q8_kernel<Q35_TYPE_Q6_K, 2, false, 2>;
    p.plain[3] = gemv_q8_kernel_persist<Q35_TYPE_Q8_0, 2, 2>;
    for (int t = 0; t < 4; t++)
        p.early[t] = p.plain[t];
    p.ring[2] = p.ring[3] = nullptr; /* every row through the unrolled loads */
    return p;
}

/* persist_prefetch: persist_narrow whose early forms (decode-pdl) are rows2's,
 * which prefetch every row of theirs into L2 before they wait for the grid
 * before (persist as it was before decode-pdl waited first) */
q35_gemv_q8_impl persist_prefetch_impl()
{
    q35_gemv_q8_impl p = persist_narrow_impl();
    const q35_gemv_q8_impl r = q8_warp_impl<2, 1>();
    for (int t = 0; t < 4; t++)
        p.early[t] = r.early[t];
    return p;
}

/* persist_r0: persist with its ring kernels as they were before their x was
 * loaded a pass ahead (gemv_q8_kernel_ring's MODE 0: x in its pass, Q6_K's
 * levels less 32 a byte, the group located at every stage) */
q35_gemv_q8_impl persist_r0_impl()
{
    q35_gemv_q8_impl p = q8_persist_impl();
    p.ring[2] = gemv_q8_kernel_ring<Q35_TYPE_Q6_K, 2, 0>;
    p.ring[3] = gemv_q8_kernel_ring<Q35_TYPE_Q8_0, 2, 0>;
    return p;
}

/* persist_y: persist with Q6_K's ring form q8_unit6y (its levels with one
 * shift a word, its stage read by shared-space loads) */
q35_gemv_q8_impl persist_y_impl()
{
    q35_gemv_q8_impl p = q8_persist_impl();
    p.ring[2] = gemv_q8_kernel_ring<Q35_TYPE_Q6_K, 2, 3>;
    return p;
}

const q35_gemv_q8_impl k_rows2 = q8_warp_impl<2, 1>(), k_unroll2 = q8_warp_impl<4, 2>(), k_persist_narrow = persist_narrow_impl(),
                       k_persist_u2 = persist_u2_impl(), k_persist_prefetch = persist_prefetch_impl(),
                       k_persist_r0 = persist_r0_impl(), k_persist_y = persist_y_impl();
const q35_variant k_experiments[] = {{"rows2", 2, &k_rows2},
                                     {"unroll2", 3, &k_unroll2},
                                     {"persist_narrow", 4, &k_persist_narrow},
                                     {"persist_u2", 5, &k_persist_u2},
                                     {"persist_prefetch", 6, &k_persist_prefetch},
                                     {"persist_r0", 7, &k_persist_r0},
                                     {"persist_y", 8, &k_persist_y}};

} // namespace

extern "C" const q35_variant_table q35_gemv_q8_experiments = Q35_VARIANT_TABLE(k_experiments);
