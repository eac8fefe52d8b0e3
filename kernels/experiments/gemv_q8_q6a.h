/* An experiment (kernels/experiments/, built into the suites and benchmarks
 * where Q35_KERNEL_EXPERIMENTS is on; not in q35_kernels): the 8-bit-activation
 * GEMV (kernels/gemv_q8.h) on Q6_K rows in q6a order: the same bytes, each run
 * of 8 super-blocks of a row (1680 bytes) as their 8 blocks without d (208
 * bytes each: ql, qh, scales; 16-byte aligned where the run is) and then their
 * 8 d (16 bytes). Why: Q6_K's blocks of 210 bytes are 2-byte aligned, so
 * gemv_q8's persist streams them through shared memory (kernels/gemv_ring.cuh)
 * and realigns each word, at 76-88 % of a read of the same bytes where Q4_K's
 * persist kernel, 16-byte loads straight into registers, is at the read
 * (docs/STATUS.md); in q6a order a lane reads its unit as Q4_K's kernel does.
 * Whether that moves Q6_K to its read is what bench_linear's gemv_q8_q6a
 * families measure; the model does not use it. */
#ifndef Q35_KERNELS_EXPERIMENTS_GEMV_Q8_Q6A_H
#define Q35_KERNELS_EXPERIMENTS_GEMV_Q8_Q6A_H

#include "kernels/cuda.h"

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Host: dst = the q6a order of src's n Q6_K rows of k (both n x
 * q35_row_bytes(Q6_K, k) bytes, not overlapping); -1 (err naming it) where
 * k is not a positive multiple of 2048 (whole runs of 8 super-blocks) or n < 1. */
int q35_q6a_order(void *dst, const void *src, int64_t n, int64_t k, q35_error *err);

/* CUDA: y[n] = W x for W (n rows of k, q6a order, on the device, 16-byte
 * aligned) and x quantized by q35_gemv_q8_quantize (xq); bitwise
 * q35_gemv_q8 on the rows in Q6_K order (the same units, summed in the same
 * order). early: launched as q35_gemv_q8_group_early launches (programmatic
 * dependent launch on sm_90, waiting for the grid before it first). Refuses k
 * not a positive multiple of 2048, n outside 1 .. q35_gemv_q8's limit, a
 * misaligned w or xq. */
int q35_gemv_q8_q6a(float *y, const void *w, int64_t n, int64_t k, const void *xq, bool early, q35_stream stream,
                    q35_error *err);

#ifdef __cplusplus
}
#endif

#endif /* Q35_KERNELS_EXPERIMENTS_GEMV_Q8_Q6A_H */
