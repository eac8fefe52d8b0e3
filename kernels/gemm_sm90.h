/* The f16 path's FFN [gate | up] GEMM on Hopper's warp-group tensor cores,
 * with SwiGLU in its epilogue (issue 21: the activation's own pass over
 * memory, and the f32 [gate | up] rows it reads, gone):
 *
 *     g[t][f] = sum_k x16[t][k] * w16[f][k]          (f = 0 .. F-1)
 *     u[t][f] = sum_k x16[t][k] * w16[F + f][k]
 *     y16[t][f] = f16(silu(g[t][f]) * u[t][f])       (q35_swiglu: kernels/reduce.cuh)
 *
 * x16 [T][ldx] and w16 [2F][ldw] IEEE f16 (uint16_t bits), row-major, K
 * contiguous: the f16 copy of the merged [gate | up] weight the model makes
 * at load (gate rows, then up rows); f32 accumulation; y16 [T][ldy] f16.
 *
 * How (kernels/gemm_sm90.cu): a block takes 128 rows of x and 128 output
 * columns f, that is 128 gate rows and the 128 up rows F below them of w;
 * TMA brings x's 128 x 64 and w's two 128 x 64 boxes of each 64-wide K step
 * into a ring of shared memory (128-byte swizzle); a producer warp group
 * issues the loads, two consumer warp groups each multiply their 64 rows by
 * the 256 w rows with wgmma m64n256k16 (both operands K-major in shared
 * memory), gate in accumulator columns 0..127 and up in 128..255, so each
 * thread holds g and u of the same (t, f) and the epilogue is registers only.
 *
 * The same product with f32 out, q35_gemm_gu_sm90_f32, writes g and u as the
 * model's unfused path lays [gate | up] out (gu[t][f] = g, gu[t][F + f] = u):
 * the one main loop, another epilogue. So y16 is bitwise
 * q35_swiglu_rows_f16(y16, gu, gu + F, ldg, F, T) of it (the same f32 g and
 * u, the same expression, one rounding): the suite's bitwise check of the
 * epilogue; the product itself is held to the f16 GEMM's bound (kernels/gemm.h)
 * against float64. Not bitwise cuBLAS's GEMM (another order of the f32 sums).
 *
 * Runs where: compute capability 9.0 exactly (sm_90a: wgmma, TMA, setmaxnreg),
 * a build with that code (CMake option Q35_SM90); K a multiple of 64 and F of
 * 128 (each block's boxes whole: a gate box must not reach into the up rows);
 * ldx, ldw multiples of 8 and x16, w16 16-byte aligned (TMA's 16-byte strides);
 * ldy even and y16 4-byte aligned (f16 pairs); ldg even, gu 8-byte aligned;
 * 0 <= T <= INT32_MAX - 256 (0 does nothing), 2F, K, ldx, ldw, ldy, ldg at
 * most INT32_MAX.
 * Each refusal names the value and the limit. */
#ifndef Q35_KERNELS_GEMM_SM90_H
#define Q35_KERNELS_GEMM_SM90_H

#include "kernels/cuda.h"
#include "kernels/variant.h"

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this build holds the sm_90a kernels (Q35_SM90), else 0. */
int q35_gemm_sm90_built(void);

/* Whether the kernels run on this device (compute capability 9.0, the shared
 * memory they need): 1, or 0 with the reason in why. */
int q35_gemm_sm90_supported(int device, q35_error *why);

/* y16 [T][ldy] = f16(silu(x16 w16[0..F)^T) * (x16 w16[F..2F)^T)), as above,
 * with kernel variant `variant` (below; Q35_VARIANT_DEFAULT: the default). */
int q35_gemm_swiglu_sm90_f16(uint16_t *y16, int64_t ldy, const uint16_t *x16, int64_t ldx, const uint16_t *w16,
                             int64_t ldw, int64_t F, int64_t K, int64_t T, int variant, q35_stream stream,
                             q35_error *err);

/* gu [T][ldg] = x16 w16^T (columns 0 .. 2F-1: gate, then up; the others
 * untouched), f32: the same main loop with the f32 epilogue (ldg >= 2F). */
int q35_gemm_gu_sm90_f32(float *gu, int64_t ldg, const uint16_t *x16, int64_t ldx, const uint16_t *w16, int64_t ldw,
                         int64_t F, int64_t K, int64_t T, int variant, q35_stream stream, q35_error *err);

/* The plain product on the same kernels (the f32 epilogue over 256 output
 * columns a block, w's 256 rows n0 .. n0+255 as two boxes):
 *
 *     y[t][o] = sum_k x16[t][k] * w16[o][k]     (add: y[t][o] + the sum)
 *
 * o = 0 .. n-1 (w16 [n][ldw]; rows past n read as TMA's zeros, columns past n
 * not written), f32 y [T][ldy], the others untouched: the f16 path's
 * projection GEMM (kernels/gemm_lt.h's q35_hgemm_rounded) on our own kernels,
 * to measure them against cuBLASLt at every projection. Bound: the f16 GEMM's
 * (f32 accumulation of exact f16 products); not bitwise cuBLAS (another order
 * of the sums). Refuses, beside the operands' refusals above: n < 2 or odd,
 * ldy < n or odd, y not 8-byte aligned. */
int q35_gemm_sm90_f32(float *y, int64_t ldy, const uint16_t *x16, int64_t ldx, const uint16_t *w16, int64_t ldw,
                      int64_t n, int64_t K, int64_t T, int add, int variant, q35_stream stream, q35_error *err);

/* The variants (kernels/variant.h; all in this unit): simple (each block
 * loads its own boxes), the oracle; mcast (blocks in
 * clusters of 2 along the rows share their w tile, each loading half of it
 * by TMA multicast into both: 32 KiB a K step from L2 a block instead of 48);
 * persist and mcast_persist (the two with a persistent grid: a block an SM
 * walking the tiles through one ring, the next tile's loads under this one's
 * epilogue; faster than simple at every shape benched, bench/results/
 * index.tsv, family linear); pingpong (persistent, its two
 * consumer groups on different tiles of 128 rows by w's 2 x 64 rows, one's
 * epilogue under the other's products: wgmma m64n128k16; slower than
 * persist, its shared-memory traffic a tensor cycle a quarter over
 * persist's); persist_tail (persist, with the tiles of the
 * last partial wave taken in halves of w's rows by two blocks each, m64n128,
 * where that wave fills at most half the SMs: the 9B's [gate | up] at 4096
 * rows is 3072 tiles, 23 waves of 132 and a 24th of 36 tiles, which then
 * takes half a tile's time; nothing where the tail fills more than half the
 * SMs, as at 2048 and 8192 rows; less than half a tile's time is won in
 * that wave (the halves' x boxes as large as a whole tile's), more on narrow
 * products of few tiles, the prefill within its noise (bench/results/
 * index.tsv, family linear): the default, bitwise persist); all the same
 * products in the same order along K, so bitwise simple. An
 * unknown variant is refused, naming the range. The suite runs and the benchmarks
 * time every one. */
int q35_gemm_sm90_variant_count(void);
const char *q35_gemm_sm90_variant_name(int variant);
int q35_gemm_sm90_variant_find(const char *name);
int q35_gemm_sm90_variant_production(int variant);
int q35_gemm_sm90_variant_default(void);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_GEMM_SM90_H */
