/* The ceilings every GPU result is measured against (gpu_ceilings.c), and
 * the copy ceiling as a benchmark point of its own. */
#ifndef Q35_BENCH_GPU_CEILINGS_H
#define Q35_BENCH_GPU_CEILINGS_H

#include "bench/shim.h"

/* The ceilings (names for q35_bench_pct_of), measured at start-up on the chosen
 * device, each the median of 5 warm runs outside Google Benchmark's loop:
 *   copy   device-to-device cudaMemcpy of 1 GiB, bytes read + written per second
 *   sgemm  cuBLAS FP32 GEMM 8192^3, CUBLAS_COMPUTE_32F_PEDANTIC (no TF32), FLOP/s
 *   hgemm  cuBLAS GEMM 8192^3, f16 A and B, f32 accumulate and C, FLOP/s
 * on random data; the context holds ceiling_copy_bytes_per_s,
 * ceiling_sgemm_flop_per_s, ceiling_hgemm_flop_per_s. */
#define Q35_CEILING_COPY "copy"
#define Q35_CEILING_SGEMM "sgemm"
#define Q35_CEILING_HGEMM "hgemm"

/* Registers the ceilings as ordinary benchmarks: ceiling/copy/MiB:1024,
 * ceiling/sgemm/n:{4096,8192}, ceiling/hgemm/n:{4096,8192}. */
void q35_bench_register_ceilings(void);

/* Measures the three ceilings now (q35_bench_gpu_init does, once). */
void q35_bench_measure_ceilings(void);

/* The device-to-device copy of axis 0's MiB (random data), timed as a
 * benchmark point: bytes read + written, and its fraction of the copy ceiling.
 * ceiling/copy registers it; a benchmark registers it under its own name. */
void q35_bench_copy(q35_bench_state *st, void *unused);

#endif /* Q35_BENCH_GPU_CEILINGS_H */
