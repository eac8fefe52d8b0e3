/* The delta-rule scan's experiment variants (kernels/delta_rule.cu's header
 * says what each name means): built into the suites and the benchmarks only
 * (kernels/variant.h), beside the production r2pni and l16r2pn. Only LANES, RPL
 * and NS choose the arithmetic: rows2 = r2p, r2pn = r2pni = r2w2pn, l16r2pn =
 * l16r2w8pn bit for bit (test_kernels_deltanet checks it). */
#include "kernels/delta_rule_scan.cuh"

/*                                                     lanes rows warps  PF     IL     NS */
static constexpr q35_delta_scan_impl k_rows1 = scan_impl<8, 1, 4, false, false, false>(),
                                     k_rows2 = scan_impl<8, 2, 4, false, false, false>(),
                                     k_lanes4 = scan_impl<4, 1, 4, false, false, false>(),
                                     k_r2p = scan_impl<8, 2, 4, true, false, false>(),
                                     k_r2pn = scan_impl<8, 2, 4, true, false, true>(),
                                     k_r2w2pn = scan_impl<8, 2, 2, true, false, true>(),
                                     k_l16r2w8pn = scan_impl<16, 2, 8, true, false, true>(),
                                     k_l16w16pn = scan_impl<16, 1, 16, true, false, true>();
static const q35_variant k_experiments[] = {
    {"rows1", 0, &k_rows1}, {"rows2", 1, &k_rows2},   {"lanes4", 2, &k_lanes4},       {"r2p", 3, &k_r2p},
    {"r2pn", 4, &k_r2pn},   {"r2w2pn", 6, &k_r2w2pn}, {"l16r2w8pn", 8, &k_l16r2w8pn}, {"l16w16pn", 9, &k_l16w16pn},
};

extern "C" const q35_variant_table q35_delta_rule_experiments = Q35_VARIANT_TABLE(k_experiments);
