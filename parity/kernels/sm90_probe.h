/* Single-instruction probes of the sm_90a pieces the flash_sm90 kernel is
 * built from (kernels/sm90.cuh), one warp group each, so a wrong layout shows
 * in the smallest piece that has it (parity/kernels/test_kernels_sm90.c):
 *
 *   wgmma SS   D [64][64] = A B^T, A [64][K] and B [64][K] f16 row-major in
 *              global, staged by the threads into shared memory as the kernel
 *              stages Q (K-major, 64-wide boxes, 128-byte swizzle,
 *              q35_sw128), K / 16 wgmma m64n64k16 steps with the descriptors
 *              advancing 32 bytes a step (a box every 4); K = 16 .. 256;
 *   wgmma RS   O [64][256] = P V, P [64][64] f16 from registers (the
 *              m64nNk16 A fragment), V [64][256] f16 row-major staged as TMA
 *              stages a V tile (MN-major for the product: four 64-dim boxes,
 *              128-byte swizzle), 4 wgmma m64n256k16 steps; `swap` 0 takes
 *              LBO = 8 KiB (between dim boxes), SBO = 1 KiB (between
 *              8-position atoms), 1 the other order;
 *   tma 1      B (SS, K = 64 .. 256) or V (RS) brought by TMA instead, as the
 *              kernel brings K and V tiles (mbarrier, async proxy), A by the
 *              threads as the kernel stages Q;
 *   wgmma n32  D [64][32] = A B, A [64][64] f16 staged as [m][k] (K-major,
 *              tnsp_a 0) or transposed as [k][m] (MN-major, tnsp_a 1: tb4w's
 *              LBO / SBO, Q35_TBW_MN_LBO 8 KiB and _SBO 1 KiB, or with `swap`
 *              the other order; 2 KiB a k16 step), B given as B^T [32][64] (K-major),
 *              4 wgmma m64n32k16 steps with the chunked delta rule's tb4w
 *              descriptors (kernels/delta_chunk_sm90.cuh); then D
 *              rounded to f16 and stored transposed by its w_store_t
 *              (stmatrix.trans) into a [32][64] box, copied out raw to dt
 *              (2048 f16: D^T's swizzled image);
 *   TMA        one 64 x 64 box of a 2-D f16 tensor [rows][ld] at (x, y), 128-byte
 *              swizzle, through an mbarrier into shared memory, copied out raw
 *              (the swizzled image, 4096 f16).
 * Outputs are device buffers; each returns 0, or -1 with the CUDA error. */
#ifndef Q35_PARITY_SM90_PROBE_H
#define Q35_PARITY_SM90_PROBE_H

#include "core/error.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

int q35_probe_wgmma_ss(float *d, const uint16_t *a, const uint16_t *b, int K, int tma, q35_error *err);
int q35_probe_wgmma_rs(float *o, const uint16_t *p, const uint16_t *v, int swap, int tma, q35_error *err);
int q35_probe_wgmma_n32(float *d, uint16_t *dt, const uint16_t *a, const uint16_t *bt, int tnsp_a, int swap,
                        q35_error *err);
int q35_probe_tma(uint16_t *image, const uint16_t *src, int64_t rows, int64_t ld, int x, int y, q35_error *err);

/* The byte offset at which q35_sw128 puts element (row, col) of a [64][64] box
 * (the host's copy, to read the TMA image). */
int q35_probe_sw128(int row, int col);

#ifdef __cplusplus
}
#endif

#endif /* Q35_PARITY_SM90_PROBE_H */
