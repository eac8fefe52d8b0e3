/* Device memory, fills and timing for the GPU benchmarks (gpu_time.c):
 * checked calls, buffers of finite values, CUDA-event timing of one launch. */
#ifndef Q35_BENCH_GPU_TIME_H
#define Q35_BENCH_GPU_TIME_H

#include "bench/shim.h"
#include "core/error.h"

#include <stddef.h>

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

#endif /* Q35_BENCH_GPU_TIME_H */
