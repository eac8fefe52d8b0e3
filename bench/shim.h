/* A C face for Google Benchmark, the project's one C++ file behind it. C
 * benchmarks register a function over an argument product; they time with CUDA
 * events and report through manual time (Google Benchmark owns the loop, the
 * repetitions, the filters and the JSON); counters are rates (per second) or
 * plain values; the device goes into the JSON's context. Google Benchmark's own
 * flags pass through q35_bench_main untouched. */
#ifndef Q35_BENCH_SHIM_H
#define Q35_BENCH_SHIM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct q35_bench_state q35_bench_state; /* a benchmark::State */
typedef void (*q35_bench_fn)(q35_bench_state *st, void *ctx);

#define Q35_BENCH_MAX_AXES 6

/* One axis of the argument product: its name and values. */
typedef struct q35_bench_axis {
    const char *name;
    const int64_t *values;
    int count;
} q35_bench_axis;

/* Registers name/axis1:v1/axis2:v2/... for every point of the product; the
 * function reads its point with q35_bench_arg. Timing is manual, in ms. */
void q35_bench_register(const char *name, q35_bench_fn fn, void *ctx, const q35_bench_axis *axes, int n_axes);

int64_t q35_bench_arg(q35_bench_state *st, int axis);
bool q35_bench_keep_running(q35_bench_state *st);
void q35_bench_set_iteration_time(q35_bench_state *st, double seconds);

/* A counter: a rate (value per iteration, reported per second of manual time)
 * or a plain value. */
void q35_bench_rate(q35_bench_state *st, const char *name, double per_iteration);
void q35_bench_value(q35_bench_state *st, const char *name, double value);

/* Marks this point skipped, with the reason (reported, never silently dropped). */
void q35_bench_skip(q35_bench_state *st, const char *reason);

/* Adds key = value to the JSON context. */
void q35_bench_context(const char *key, const char *value);

/* Google Benchmark's main: parses its flags, runs, writes its reports. */
int q35_bench_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* Q35_BENCH_SHIM_H */
