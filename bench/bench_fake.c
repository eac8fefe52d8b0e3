/* A benchmark that needs no GPU, for the shim's tests (bench/tests/): names
 * with numbered and labelled axes, shards, progress, a skipped point, and the
 * ceiling percentage. Each iteration "takes" a fixed manual time, so every
 * counter is exact: fake/path:P/n:N moves 1e9 bytes in N ms, i.e. 1e12 / N
 * bytes/s, which is 50 / N % of the fixed "copy" ceiling of 2e12 bytes/s.
 * fake_prefill/... has the prefill sweep's axes and counters (SCHEMA.md): a
 * prompt of len tokens takes len / 1e4 s (1e4 tokens/s), of which projections
 * 50 %, the scan 20 %, attention 20 %, the rest 10 % (q35_bench_phases), the
 * projections at 600 TFLOP/s and attention at 400.
 * $Q35_FAKE_SCALE (a positive number, default 1) multiplies every time, so a
 * test can make one run faster than another (tools/bench-ab.sh's).
 * $Q35_FAKE_POWER_PCI=ID: the power counters (bench/power.h) from NVML for
 * the device at PCI bus id ID, $Q35_NVML_LIB the library (bench/tests/power.sh
 * gives it a stand-in), and the point fake_power/ms:2, whose iterations sleep
 * 2 ms times $Q35_FAKE_SCALE (the energy counter needs wall time to count). */
#define _POSIX_C_SOURCE 200809L
#include "bench/gpu_bench.h"
#include "bench/power.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double g_scale = 1.0; /* $Q35_FAKE_SCALE */

static void fake(q35_bench_state *st, void *unused)
{
    (void)unused;
    const int64_t n = q35_bench_arg(st, 1);
    while (q35_bench_keep_running(st))
        q35_bench_set_iteration_time(st, g_scale * 1e-3 * (double)n);
    q35_bench_rate(st, "bytes", 1e9);
    q35_bench_pct_of(st, "copy", 1e9);
    q35_bench_pct_of(st, "sgemm", 1e9); /* never measured here: no counter */
    q35_bench_value(st, "path_index", (double)q35_bench_arg(st, 0));
    q35_bench_value(st, "path_is_flash", q35_bench_arg_label(st, 0)[1] == 'l');
}

static void fake_skip(q35_bench_state *st, void *unused)
{
    (void)unused;
    q35_bench_skip(st, "this point cannot run (a test of the report)");
    while (q35_bench_keep_running(st))
        ;
}

static void fake_prefill(q35_bench_state *st, void *unused)
{
    (void)unused;
    const double len = (double)q35_bench_arg(st, 5), s = g_scale * len / 1e4;
    while (q35_bench_keep_running(st))
        q35_bench_set_iteration_time(st, s);
    q35_op_times t = {{0}, {0}, {0}};
    const int prefills = 2; /* accumulated over two prefills: the counters are per prefill */
    t.seconds[Q35_OP_PROJ] = prefills * 0.5 * s;
    t.flop[Q35_OP_PROJ] = prefills * 0.5 * s * 6e14; /* 600 TFLOP/s over the projections' time */
    t.flop[Q35_OP_ATTN] = prefills * 0.2 * s * 4e14; /* 400 over attention's */
    t.seconds[Q35_OP_DELTA] = prefills * 0.2 * s;
    t.seconds[Q35_OP_ATTN] = prefills * 0.2 * s;
    t.seconds[Q35_OP_NORM] = prefills * 0.06 * s;
    t.seconds[Q35_OP_RESIDUAL] = prefills * 0.04 * s;
    q35_bench_rate(st, "tokens_per_s", len);
    q35_bench_phases(st, &t, prefills);
}

static void fake_power(q35_bench_state *st, void *unused)
{
    (void)unused;
    const double ms = g_scale * (double)q35_bench_arg(st, 0);
    const struct timespec nap = {(time_t)(ms / 1e3), (long)(fmod(ms, 1e3) * 1e6)};
    while (q35_bench_keep_running(st)) {
        nanosleep(&nap, NULL);
        q35_bench_set_iteration_time(st, 1e-3 * ms);
    }
}

int main(int argc, char **argv)
{
    const char *scale = getenv("Q35_FAKE_SCALE");
    if (scale) {
        char *end = NULL;
        g_scale = strtod(scale, &end);
        if (end == scale || *end || !isfinite(g_scale) || g_scale <= 0.0) {
            fprintf(stderr, "bench_fake: Q35_FAKE_SCALE=%s is not a positive number\n", scale);
            return 2;
        }
    }
    static const int64_t paths[] = {0, 1}, n[] = {1, 2, 4, 8, 16}, x[] = {7, 19};
    static const char *const path_names[] = {"f32", "flash"};
    q35_bench_set_ceiling("copy", "bytes", 2e12);
    q35_bench_register("fake", fake, NULL, (q35_bench_axis[]){{"path", paths, 2}, {"n", n, 5}}, 2);
    q35_bench_register("fake_skip", fake_skip, NULL, (q35_bench_axis[]){{"x", x, 2}}, 1);
    q35_bench_axis_labels("path", path_names, 2); /* after the registration: names are made in q35_bench_main */
    static const int64_t zero[] = {0}, attn[] = {0, 1}, chunk[] = {512}, len[] = {512, 4096};
    static const char *const shape_names[] = {"9b"}, *const quant_names[] = {"q4_k"}, *const gemm_names[] = {"f16"};
    q35_bench_axis_labels("shape", shape_names, 1);
    q35_bench_axis_labels("quant", quant_names, 1);
    q35_bench_axis_labels("attn", path_names, 2);
    q35_bench_axis_labels("gemm", gemm_names, 1);
    q35_bench_register("fake_prefill", fake_prefill, NULL,
                       (q35_bench_axis[]){{"shape", zero, 1}, {"quant", zero, 1}, {"attn", attn, 2},
                                          {"gemm", zero, 1}, {"chunk", chunk, 1}, {"len", len, 2}},
                       6);
    q35_bench_register("fake_none", fake_skip, NULL, NULL, 0);
    q35_bench_context("fake_paths", "path:f32, path:flash (labels of the values 0, 1)");
    const char *pci = getenv("Q35_FAKE_POWER_PCI");
    if (pci) {
        if (q35_bench_flags(&argc, argv)) /* --q35_power first */
            return 2;
        static const int64_t ms[] = {2};
        q35_bench_register("fake_power", fake_power, NULL, (q35_bench_axis[]){{"ms", ms, 1}}, 1);
        q35_power_attach(pci);
    }
    return q35_bench_main(argc, argv);
}
