/* A C face for Google Benchmark, the project's one C++ file behind it. C
 * benchmarks register a function over an argument product; they time with CUDA
 * events and report through manual time (Google Benchmark owns the loop, the
 * repetitions, the filters and the JSON); counters are rates (per second) or
 * plain values; the device goes into the JSON's context. Google Benchmark's own
 * flags pass through q35_bench_main untouched.
 *
 * Names: family/axis:value/axis:value (Google Benchmark appends /manual_time);
 * an axis may name its values (`attn:flash`) instead of printing the number.
 * bench/results/SCHEMA.md documents the names, the context and the counters.
 *
 * The shim's own flags, taken out of argv before Google Benchmark parses it:
 *   --device N (or --device=N)  the GPU (q35_bench_gpu_init), else $Q35_DEVICE, else 0
 *   --q35_shard=i/n             run only the points whose index, counted over the
 *                               points the filter selects in registration order,
 *                               is i modulo n (tools/sweep.sh: one shard per GPU)
 *   --q35_progress=0            no "case k/n" line on stderr as each point starts
 *   --q35_ceilings=0            skip the ceilings measured at start-up (gpu_bench.h)
 *   --q35_power=0               no power, clock or energy counters (bench/power.h) */
#ifndef Q35_BENCH_SHIM_H
#define Q35_BENCH_SHIM_H

#include <stdbool.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct q35_bench_state q35_bench_state; /* a benchmark::State */
typedef void (*q35_bench_fn)(q35_bench_state *st, void *ctx);

#define Q35_BENCH_MAX_AXES 8

/* One axis of the argument product: its name and values. */
typedef struct q35_bench_axis {
    const char *name;
    const int64_t *values;
    int count;
} q35_bench_axis;

/* Names the values 0 .. count-1 of every axis called `axis`: the benchmark's
 * name shows labels[v] ([A-Za-z0-9_.-]+) instead of v, e.g. attn:flash for
 * value 1 of {"f32", "flash"}; other values stay numbers. Applies to every
 * family, whenever registered (names are made in q35_bench_main). */
void q35_bench_axis_labels(const char *axis, const char *const *labels, int count);

/* Registers name/axis1:v1/axis2:v2/... for every point of the product (the
 * first axis outermost, the last fastest); the function reads its point with
 * q35_bench_arg. Timing is manual, in ms. Registration is recorded here and
 * handed to Google Benchmark in q35_bench_main, after the flags (shard) are
 * known. */
void q35_bench_register(const char *name, q35_bench_fn fn, void *ctx, const q35_bench_axis *axes, int n_axes);

int64_t q35_bench_arg(q35_bench_state *st, int axis);
const char *q35_bench_arg_label(q35_bench_state *st, int axis); /* its label (q35_bench_axis_labels), or NULL */
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

/* A ceiling: `name` reaches per_second `unit`s per second at best on this
 * device (measured once at start-up). Recorded in the context as
 * ceiling_<name>_<unit>_per_s, e.g. ceiling_copy_bytes_per_s. */
void q35_bench_set_ceiling(const char *name, const char *unit, double per_second);
double q35_bench_ceiling(const char *name); /* 0 when not measured */

/* The counter pct_of_<ceiling>: per_iteration units per iteration as a
 * percentage of the ceiling's rate (a rate counter, so every repetition and
 * aggregate carries it). Nothing is added when that ceiling was not measured. */
void q35_bench_pct_of(q35_bench_state *st, const char *ceiling, double per_iteration);

/* Hooks around the loop of every run of a point (each repetition, and each of
 * Google Benchmark's runs that size the iterations): begin at the run's first
 * q35_bench_keep_running, before its first iteration, returning the run's
 * state; end when keep_running has returned false, with the iterations the run
 * took, to add its counters; or end with st NULL and 0 iterations when the
 * point's function returned without finishing its loop (it skipped the point):
 * free only. bench/power.h installs them. */
typedef struct q35_bench_run_hooks {
    void *(*begin)(void *ctx);
    void (*end)(void *ctx, void *run, q35_bench_state *st, int64_t iterations);
    void *ctx;
} q35_bench_run_hooks;

/* Installs the hooks (a copy; NULL: none) for the runs from now on. */
void q35_bench_set_run_hooks(const q35_bench_run_hooks *hooks);

/* What the shim's flags asked for. */
typedef struct q35_bench_options {
    int device;     /* --device N; -1 when absent */
    int shard;      /* --q35_shard=i/n: i (0 when absent) */
    int shards;     /* n (1 when absent) */
    bool progress;  /* --q35_progress (default on) */
    bool ceilings;  /* --q35_ceilings (default on) */
    bool power;     /* --q35_power (default on) */
    bool listing;   /* --benchmark_list_tests: nothing runs */
} q35_bench_options;

/* Takes the shim's flags out of argv (Google Benchmark's stay). 0, or -1 after
 * printing what is malformed. A second call finds them gone and keeps what the
 * first parsed. q35_bench_main calls it; q35_bench_gpu_init calls it earlier. */
int q35_bench_flags(int *argc, char **argv);
const q35_bench_options *q35_bench_get_options(void);

/* Google Benchmark's main: the shim's flags, then Google Benchmark's; the
 * points of this shard registered; runs, with progress on stderr; writes its
 * reports. 0, 1 on an unrecognised flag, 2 on a malformed shim flag. */
int q35_bench_main(int argc, char **argv);

#ifdef __cplusplus
}
#endif

#endif /* Q35_BENCH_SHIM_H */
