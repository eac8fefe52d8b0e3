/* The chunked delta rule's production variants for sm_90a: tb4wtkh, tb4kh's
 * parallel pass by key head (kernels/delta_chunk_tb_kh.cuh), then the wgmma
 * state pass fed by TMA; tb4wm2kh, the same with the state pass's blocks in
 * pairs sharing their tiles by TMA multicast, launched early (its prologue
 * under the parallel pass's end; both kernels/delta_chunk_sm90.cuh). tb4wm2kh is the default on an sm_90 device where the
 * build has sm_90a code (q35_delta_chunk_variant_default), then tb4wtkh, tb4
 * elsewhere. In q35_kernels_sm90 (built for 90a-real alone; without
 * Q35_SM90 its entry refuses, saying why): q35_delta_chunk's registry
 * (kernels/delta_chunk.cu, in q35_kernels) reaches this file's table by a weak
 * reference, and every program that links q35_kernels_sm90 asks the linker for
 * the table (kernels/CMakeLists.txt), so the model has it; a program with
 * q35_kernels alone lists w4 and tb4. */
#include "kernels/delta_chunk_sm90.cuh"

#ifndef Q35_SM90
#define Q35_SM90 0
#endif

namespace q35_delta_chunk_kernels {

int tbw_runs_on(int device, q35_error *why)
{
    return q35_sm90_device_ok(device, Q35_SM90, w_cfg::SMEM,
                              "delta_chunk's wgmma state pass (tb4wtkh, tb4wm2kh, tb4wt, tb4w)", why);
}

} /* namespace q35_delta_chunk_kernels */

using namespace q35_delta_chunk_kernels;

static constexpr variant_impl k_tb4wtkh = {nullptr, tb_cfg::C::SW, w_cfg::SMEM, run_w<true, true>, 2, tbw_runs_on};
static constexpr variant_impl k_tb4wm2kh = {nullptr, tb_cfg::C::SW, wm_cfg::SMEM, run_tbwm<2, true>, 2, tbw_runs_on};
static const q35_variant k_sm90[] = {{"tb4wtkh", 9, &k_tb4wtkh}, {"tb4wm2kh", 11, &k_tb4wm2kh}};

extern "C" const q35_variant_table q35_delta_chunk_sm90_variants = Q35_VARIANT_TABLE(k_sm90);
