/* What the GPU benchmarks share: the device (--device N, else $Q35_DEVICE,
 * else 0; CUDA_VISIBLE_DEVICES is honoured by the runtime) and its description
 * in the JSON context, the ceilings measured once at start-up, CUDA-event
 * timing of one launch (warm, after a first untimed launch), checked calls.
 *
 * A benchmark's main:
 *
 *     int main(int argc, char **argv)
 *     {
 *         if (q35_bench_gpu_init(&argc, argv))
 *             return 1;
 *         q35_bench_register(...);
 *         return q35_bench_main(argc, argv);
 *     }
 *
 * and a point reports its fraction of a ceiling beside its rate:
 *
 *     q35_bench_rate(st, "FLOP", flop);
 *     q35_bench_pct_of(st, Q35_CEILING_SGEMM, flop);   // counter pct_of_sgemm
 *     q35_bench_rate(st, "bytes", bytes);
 *     q35_bench_pct_of(st, Q35_CEILING_COPY, bytes);   // counter pct_of_copy */
#ifndef Q35_BENCH_GPU_H
#define Q35_BENCH_GPU_H

#include "bench/shim.h"
#include "core/error.h"
#include "kernels/blas.h"
#include "model/op_times.h"

#include <stddef.h>

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

/* Takes the shim's flags out of argv (--device N first), picks the device, adds
 * its name, SMs, clocks, memory (size, bus, L2, peak), driver, runtime and
 * cuBLAS versions to the context and measures the ceilings (unless
 * --q35_ceilings=0 or --benchmark_list_tests). Returns -1 (printed) when there
 * is no usable device or the flags are malformed. */
int q35_bench_gpu_init(int *argc, char **argv);

/* q35_bench_gpu_init, then a cuBLAS handle (kernels/blas.h) on the default
 * stream for the benchmarks that run GEMMs (q35_blas_destroy it at the end);
 * -1 (printed) on failure. */
int q35_bench_gpu_init_blas(int *argc, char **argv, q35_blas *blas);

/* The flash kernel's variants for a JSON context, "0 = base, 1 = kv64, ...",
 * into buf; variant `mark` (or none: -1) followed by " (default here)". */
void q35_bench_flash_variant_names(char *buf, size_t cap, int mark);

/* Registers the ceilings as ordinary benchmarks: ceiling/copy/MiB:1024,
 * ceiling/sgemm/n:{4096,8192}, ceiling/hgemm/n:{4096,8192}. */
void q35_bench_register_ceilings(void);

/* Measures the three ceilings now (q35_bench_gpu_init does, once). */
void q35_bench_measure_ceilings(void);

/* Exits with the call's name when status (a cudaError_t) is not cudaSuccess. */
void q35_bench_check(int status, const char *what);

/* Device memory of n bytes, filled with a fixed pattern of finite floats in
 * [-1, 1) (so no launch runs on zeros); exits on failure. */
void *q35_bench_alloc(size_t n);
void q35_bench_free(void *p);

/* q35_bench_alloc, or NULL when n bytes do not fit the device: the point is then
 * skipped with the size as the reason (its loop drained). */
void *q35_bench_try_alloc(size_t n, q35_bench_state *st);

/* n floats of value v. */
void q35_bench_fill(float *p, size_t n, float v);

/* Runs launch(ctx) once untimed, then times it per iteration with CUDA events
 * under Google Benchmark's loop. A launch's failure skips the point with its
 * message. */
void q35_bench_time(q35_bench_state *st, int (*launch)(void *ctx, q35_error *err), void *ctx);

/* The phases of a prefill (bench/results/SCHEMA.md) as plain counters, seconds
 * per prefill: s_proj (every projection, Q35_OP_PROJ), s_scan (the delta-rule
 * scan, Q35_OP_DELTA), s_attn (attention, Q35_OP_ATTN), s_other (every other
 * op), from op times accumulated over `prefills` prefills. The prefill sweep
 * reports them beside its rate:
 *
 *     q35_bench_rate(st, "tokens_per_s", (double)len);   // tokens per iteration
 *     q35_bench_phases(st, &times, prefills);
 *
 * Needs no GPU (bench/phases.c). */
void q35_bench_phases(q35_bench_state *st, const q35_op_times *t, int64_t prefills);

#endif /* Q35_BENCH_GPU_H */
