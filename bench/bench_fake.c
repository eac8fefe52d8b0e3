/* A benchmark that needs no GPU, for the shim's tests (bench/tests/): names
 * with numbered and labelled axes, shards, progress, a skipped point, and the
 * ceiling percentage. Each iteration "takes" a fixed manual time, so every
 * counter is exact: fake/path:P/n:N moves 1e9 bytes in N ms, i.e. 1e12 / N
 * bytes/s, which is 50 / N % of the fixed "copy" ceiling of 2e12 bytes/s. */
#include "bench/shim.h"

#include <stddef.h>

static void fake(q35_bench_state *st, void *unused)
{
    (void)unused;
    const int64_t n = q35_bench_arg(st, 1);
    while (q35_bench_keep_running(st))
        q35_bench_set_iteration_time(st, 1e-3 * (double)n);
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

int main(int argc, char **argv)
{
    static const int64_t paths[] = {0, 1}, n[] = {1, 2, 4, 8, 16}, x[] = {7, 19};
    static const char *const path_names[] = {"f32", "flash"};
    q35_bench_set_ceiling("copy", "bytes", 2e12);
    q35_bench_register("fake", fake, NULL, (q35_bench_axis[]){{"path", paths, 2}, {"n", n, 5}}, 2);
    q35_bench_register("fake_skip", fake_skip, NULL, (q35_bench_axis[]){{"x", x, 2}}, 1);
    q35_bench_axis_labels("path", path_names, 2); /* after the registration: names are made in q35_bench_main */
    q35_bench_register("fake_none", fake_skip, NULL, NULL, 0);
    q35_bench_context("fake_paths", "path:f32, path:flash (labels of the values 0, 1)");
    return q35_bench_main(argc, argv);
}
