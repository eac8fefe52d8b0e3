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

#include "bench/gpu_ceilings.h"
#include "bench/gpu_time.h"
#include "bench/shim.h"
#include "core/error.h"
#include "kernels/blas.h"
#include "model/op_times.h"

#include <stddef.h>

/* Takes the shim's flags out of argv (--device N first), picks the device, adds
 * its name, SMs, clocks, memory (size, bus, L2, peak), driver, runtime and
 * cuBLAS versions to the context, attaches the power, clock and energy
 * counters of every point (bench/power.h; unless --q35_power=0) and measures
 * the ceilings (unless --q35_ceilings=0; neither with --benchmark_list_tests).
 * Returns -1 (printed) when there is no usable device or the flags are
 * malformed. */
int q35_bench_gpu_init(int *argc, char **argv);

/* q35_bench_gpu_init, then a cuBLAS handle (kernels/blas.h) on the default
 * stream for the benchmarks that run GEMMs (q35_blas_destroy it at the end);
 * -1 (printed) on failure. */
int q35_bench_gpu_init_blas(int *argc, char **argv, q35_blas *blas);

/* The phases of a prefill (bench/results/SCHEMA.md) as plain counters, seconds
 * per prefill: s_proj (every projection, Q35_OP_PROJ), s_scan (the delta-rule
 * scan, Q35_OP_DELTA), s_attn (attention, Q35_OP_ATTN), s_other (every other
 * op), from op times accumulated over `prefills` prefills; and where the
 * times counted FLOP, proj_tflop_s and attn_tflop_s (the projections' and
 * attention's achieved TFLOP/s). The prefill sweep reports them beside its rate:
 *
 *     q35_bench_rate(st, "tokens_per_s", (double)len);   // tokens per iteration
 *     q35_bench_phases(st, &times, prefills);
 *
 * Needs no GPU (bench/phases.c). */
void q35_bench_phases(q35_bench_state *st, const q35_op_times *t, int64_t prefills);

#endif /* Q35_BENCH_GPU_H */
