/* What the GPU benchmarks share: the device in the JSON context, CUDA-event
 * timing of one launch (warm, after a first untimed launch), checked calls. */
#ifndef Q35_BENCH_GPU_H
#define Q35_BENCH_GPU_H

#include "bench/shim.h"
#include "model/error.h"

#include <stddef.h>

/* Picks device $Q35_DEVICE (default 0), adds name, SMs, clocks, memory, driver and
 * runtime versions to the context. Returns -1 (printed) when there is none. */
int q35_bench_gpu_init(void);

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

#endif /* Q35_BENCH_GPU_H */
