/* The grids of the i-quants IQ2_XXS, IQ2_XS, IQ2_S, IQ3_XXS, IQ3_S, IQ1_S and
 * IQ1_M (core/quant_blocks_iq.h): facts of the formats, ggml's tables
 * (ggml/src/ggml-common.h), carried over as data. Each table's one source is its
 * core/grids/<name>.inc, an array initializer's body: core/quant_grids.c defines the
 * CPU's copies below, kernels/quant_grids.cuh the device's. Entry i is a grid
 * point, element j in byte j (little-endian). */
#ifndef Q35_QUANT_GRIDS_H
#define Q35_QUANT_GRIDS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

extern const uint64_t q35_iq2xxs_grid[256]; /* bytes 8, 25, 43 */
extern const uint64_t q35_iq2xs_grid[512];  /* bytes 8, 25, 43 */
extern const uint64_t q35_iq2s_grid[1024];  /* bytes 8, 25, 43 */
extern const uint32_t q35_iq3xxs_grid[256]; /* bytes 4, 12, .., 52, 62 */
extern const uint32_t q35_iq3s_grid[512];   /* bytes 1, 3, .., 15 */
extern const uint64_t q35_iq1s_grid[2048];  /* signed bytes -1, 0, 1 */

#ifdef __cplusplus
}
#endif

#endif /* Q35_QUANT_GRIDS_H */
