// The C shim over Google Benchmark (bench/shim.h): the project's one C++ file.
#include "bench/shim.h"

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

struct q35_bench_state {
    benchmark::State *st;
};

void q35_bench_register(const char *name, q35_bench_fn fn, void *ctx, const q35_bench_axis *axes, int n_axes)
{
    benchmark::internal::Benchmark *b = benchmark::RegisterBenchmark(name, [fn, ctx](benchmark::State &st) {
        q35_bench_state s{&st};
        fn(&s, ctx);
    });
    std::vector<std::vector<int64_t>> product;
    std::vector<std::string> names;
    for (int i = 0; i < n_axes; i++) {
        product.emplace_back(axes[i].values, axes[i].values + axes[i].count);
        names.emplace_back(axes[i].name);
    }
    if (n_axes > 0)
        b->ArgsProduct(product)->ArgNames(names);
    b->UseManualTime()->Unit(benchmark::kMillisecond);
}

int64_t q35_bench_arg(q35_bench_state *s, int axis)
{
    return s->st->range(axis);
}

bool q35_bench_keep_running(q35_bench_state *s)
{
    return s->st->KeepRunning();
}

void q35_bench_set_iteration_time(q35_bench_state *s, double seconds)
{
    s->st->SetIterationTime(seconds);
}

void q35_bench_rate(q35_bench_state *s, const char *name, double per_iteration)
{
    s->st->counters[name] = benchmark::Counter(per_iteration, benchmark::Counter::kIsIterationInvariantRate);
}

void q35_bench_value(q35_bench_state *s, const char *name, double value)
{
    s->st->counters[name] = benchmark::Counter(value);
}

void q35_bench_skip(q35_bench_state *s, const char *reason)
{
    s->st->SkipWithError((std::string("skipped: ") + reason).c_str());
}

void q35_bench_context(const char *key, const char *value)
{
    benchmark::AddCustomContext(key, value);
}

int q35_bench_main(int argc, char **argv)
{
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
