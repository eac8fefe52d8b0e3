/* The device's copies of the i-quant grids (core/quant_grids.h), from the same
 * core/grids/<name>.inc as the CPU's: global memory read through the read-only
 * data cache (__ldg), as ggml's CUDA backend keeps them. Not __constant__: the
 * lanes of a warp read different points, and the constant cache serializes a warp's
 * distinct addresses. Each translation unit that includes this has its own copy. */
#ifndef Q35_KERNELS_QUANT_GRIDS_CUH
#define Q35_KERNELS_QUANT_GRIDS_CUH

#include <stdint.h>

static __device__ const unsigned long long q35_dev_iq2xxs_grid[256] = {
#include "core/grids/iq2xxs.inc"
};
static __device__ const unsigned long long q35_dev_iq2xs_grid[512] = {
#include "core/grids/iq2xs.inc"
};
static __device__ const unsigned long long q35_dev_iq2s_grid[1024] = {
#include "core/grids/iq2s.inc"
};
static __device__ const uint32_t q35_dev_iq3xxs_grid[256] = {
#include "core/grids/iq3xxs.inc"
};
static __device__ const uint32_t q35_dev_iq3s_grid[512] = {
#include "core/grids/iq3s.inc"
};
static __device__ const unsigned long long q35_dev_iq1s_grid[2048] = {
#include "core/grids/iq1s.inc"
};

#endif /* Q35_KERNELS_QUANT_GRIDS_CUH */
