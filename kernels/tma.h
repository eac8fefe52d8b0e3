/* TMA tensor maps (sm_90+) for f16 and f32 tensors, made through the driver's
 * cuTensorMapEncodeTiled, reached with cudaGetDriverEntryPointByVersion (so no
 * program links libcuda itself):
 *
 *   a rank-r tensor (r = 2 or 3) of f16 (or f32) at `base`, dims[0] innermost, byte
 *   strides[i] between consecutive indices of dimension i + 1, read in boxes of
 *   box[0] x box[1] (x box[2]) elements; elements outside dims read as zeros;
 *   swizzle128: CU_TENSOR_MAP_SWIZZLE_128B (box[0] elements <= 128 bytes), else none.
 *
 * TMA's own limits, checked here with a message naming the value: base 16-byte
 * aligned, strides multiples of 16 bytes below 2^40, dims 1 .. 2^32, box
 * sides 1 .. 256, box[0] elements a multiple of 16 bytes. */
#ifndef Q35_KERNELS_TMA_H
#define Q35_KERNELS_TMA_H

#include "core/error.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The opaque 128-byte CUtensorMap (128-byte aligned), passed to a kernel by
 * value (__grid_constant__). */
typedef struct q35_tma_map {
#ifdef __cplusplus
    alignas(128) uint64_t opaque[16];
#else
    _Alignas(128) uint64_t opaque[16];
#endif
} q35_tma_map;

/* Encodes *map; 0, or -1 with "<who>: ..." naming the value or the driver's
 * status. */
int q35_tma_map_f16(q35_tma_map *map, const void *base, int rank, const uint64_t *dims, const uint64_t *strides,
                    const uint32_t *box, int swizzle128, const char *who, q35_error *err);
/* The same for an f32 tensor (box[0] * 4 bytes a multiple of 16, at most 128
 * with the 128-byte swizzle). */
int q35_tma_map_f32(q35_tma_map *map, const void *base, int rank, const uint64_t *dims, const uint64_t *strides,
                    const uint32_t *box, int swizzle128, const char *who, q35_error *err);

/* The device check every sm_90a kernel (wgmma, TMA, setmaxnreg) makes: a build
 * with its code (built: the unit's Q35_SM90), compute capability 9.0 exactly,
 * smem_bytes of opt-in shared memory a block. 1, or 0 with "<who>: ..." in
 * why naming what is missing. */
int q35_sm90_device_ok(int device, int built, int smem_bytes, const char *who, q35_error *why);

/* The grid of a persistent sm_90a kernel (one block an SM): *blocks = the
 * device's SMs rounded down to whole clusters of `cluster` blocks, at most
 * `items`. 0, or -1 with the failed query in err. */
int q35_sm90_persistent_blocks(int device, int64_t items, int cluster, int64_t *blocks, q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_TMA_H */
