/* The chunked delta rule's experiment variants w8 (8 warps a block in the
 * state pass over 32 value columns), s64w8 (8 warps over 64;
 * kernels/delta_chunk.cuh), w4o4 (w4's state pass with the output
 * products given to 4 more warps; kernels/experiments/delta_chunk_split.cuh)
 * tb4o4 (the production tb4, family 1, with its state pass split as
 * w4o4's; kernels/experiments/delta_chunk_tb_split.cuh), tb4kh (tb4 with its
 * parallel pass one block per (chunk, key head);
 * kernels/delta_chunk_tb_kh.cuh, the production tb4wtkh's), tb4w (tb4's state pass on
 * wgmma, sm_90a, family 2; kernels/experiments/delta_chunk_sm90.cu, built
 * for 90a-real alone), tb4wt (tb4w fed by TMA, bitwise tb4w) and tb4wmkh
 * (tb4wtkh with a value head's blocks one cluster sharing their tiles by TMA
 * multicast, bitwise tb4wtkh; the production tb4wm2kh is the same in
 * clusters of 2), tb4wpkh (tb4wtkh's passes at once, chunk by chunk,
 * bitwise it), tb4wm2kho (tb4wm2kh's state pass launched in stream order,
 * not early: the A/B of its early launch; bitwise tb4wm2kh) and tb4wm2khf
 * (tb4wm2kh with T's solve from row 0 in every column: the A/B and oracle of
 * prep_solve's start at row 32; bitwise tb4wm2kh) and tb4wm2khq (T's columns
 * by quarters a warp; bitwise tb4wm2kh):
 * built into the suites and the benchmarks only (kernels/variant.h), beside
 * the production w4 and tb4 (kernels/delta_chunk.cu), tb4wtkh (tb4wt after
 * tb4kh's parallel pass, bitwise tb4wt) and tb4wm2kh (kernels/
 * delta_chunk_sm90.cu). */
#include "kernels/delta_chunk.cuh"
#include "kernels/delta_chunk_sm90.cuh"
#include "kernels/delta_chunk_tb_kh.cuh"
#include "kernels/experiments/delta_chunk_tb_split.cuh"

using namespace q35_delta_chunk_kernels;

/* tb4kh's both passes (variant_impl's run): tb4's state pass after this
 * parallel pass. */
static int run_tb_kh(int optin, float *o, int64_t o_stride, float *S, const float *q, const float *k, const float *v,
                     int64_t stride, const float *g, const float *beta, int64_t T, q35_delta_dims d, __half *W,
                     __half *U, __half *P, float *G, __half *Q, __half *K, q35_stream stream, q35_error *err)
{
    (void)U;
    return run_tb_with(prep_tb_kh(d), q35_delta_chunk_state_tb, 128, tb_cfg::C::smem(2), "q35_delta_chunk_state_tb",
                       optin, o, o_stride, S, q, k, v, stride, g, beta, T, d, W, P, G, Q, K, stream, err);
}

static constexpr variant_impl k_w8 = make_variant<8, 32>(), k_s64w8 = make_variant<8, 64>();
static constexpr variant_impl k_w4o4 = {launch_state_split, split_cfg::C::SW, split_cfg::SMEM, nullptr, 0};
static constexpr variant_impl k_tb4o4 = {nullptr, tb_cfg::C::SW, split_cfg::SMEM, run_tb_split, 1};
static constexpr variant_impl k_tb4kh = {nullptr, tb_cfg::C::SW, tb_cfg::C::smem(2), run_tb_kh, 1};
static const q35_variant k_experiments[] = {{"w8", 1, &k_w8},     {"s64w8", 2, &k_s64w8}, {"w4o4", 3, &k_w4o4},
                                            {"tb4o4", 5, &k_tb4o4},   {"tb4kh", 6, &k_tb4kh},
                                            {"tb4w", 7, &k_tb4w_impl}, {"tb4wt", 8, &k_tb4wt_impl},
                                            {"tb4wmkh", 10, &k_tb4wmkh_impl}, {"tb4wpkh", 12, &k_tb4wpkh_impl},
                                            {"tb4wm2kho", 13, &k_tb4wm2kho_impl},
                                            {"tb4wm2khf", 14, &k_tb4wm2khf_impl},
                                            {"tb4wm2khq", 15, &k_tb4wm2khq_impl}};

extern "C" const q35_variant_table q35_delta_chunk_experiments = Q35_VARIANT_TABLE(k_experiments);
