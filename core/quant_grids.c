/* The CPU's copies of the i-quant grids (core/quant_grids.h), from core/grids/. */
#include "core/quant_grids.h"

const uint64_t q35_iq2xxs_grid[256] = {
#include "core/grids/iq2xxs.inc"
};

const uint64_t q35_iq2xs_grid[512] = {
#include "core/grids/iq2xs.inc"
};

const uint64_t q35_iq2s_grid[1024] = {
#include "core/grids/iq2s.inc"
};

const uint32_t q35_iq3xxs_grid[256] = {
#include "core/grids/iq3xxs.inc"
};

const uint32_t q35_iq3s_grid[512] = {
#include "core/grids/iq3s.inc"
};

const uint64_t q35_iq1s_grid[2048] = {
#include "core/grids/iq1s.inc"
};
