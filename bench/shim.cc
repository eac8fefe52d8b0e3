// The C shim over Google Benchmark (bench/shim.h): the project's one C++ file.
// Points are recorded at q35_bench_register and handed to Google Benchmark in
// q35_bench_main, once the flags say which shard runs and the filter says which
// points Google Benchmark will select (so shards split the selected points
// evenly and the progress line knows the total).
#include "bench/shim.h"
#include "q35_git_describe.h" // generated at build time: Q35_GIT_DESCRIBE

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <strings.h> // strcasecmp

namespace {

// One point of a registered product.
struct point {
    std::string family;
    std::vector<std::string> axes; // axis names
    std::vector<int64_t> args;     // one value per axis
    q35_bench_fn fn;
    void *ctx;
    std::string name;              // family/axis:value/... (without /manual_time), made in q35_bench_main
    bool started = false;          // progress: this point has begun
};

std::vector<point> &points()
{
    static std::vector<point> p;
    return p;
}

q35_bench_options g_opt = {-1, 0, 1, true, true, true, false};
q35_bench_run_hooks g_hooks = {nullptr, nullptr, nullptr};
bool g_parsed = false;
std::string g_command; // the command line as given, shim flags included
std::map<std::string, double> g_ceilings;
std::map<std::string, std::vector<std::string>> g_labels; // axis -> label of each value 0 ..

// Progress over the points this run selected.
size_t g_total = 0, g_started = 0;
std::chrono::steady_clock::time_point g_t0;

[[noreturn]] void die(const std::string &msg)
{
    std::fprintf(stderr, "benchmark shim: %s\n", msg.c_str());
    std::abort();
}

bool starts_with(const char *s, const char *prefix)
{
    return std::strncmp(s, prefix, std::strlen(prefix)) == 0;
}

// A whole non-negative decimal integer that fits an int.
bool parse_count(const char *s, int *out)
{
    char *end = nullptr;
    const long v = std::strtol(s, &end, 10);
    if (end == s || *end || v < 0 || v > 1 << 30 || !(*s >= '0' && *s <= '9'))
        return false;
    *out = (int)v;
    return true;
}

// Google Benchmark's reading of a boolean flag's value: absent is true.
bool truthy(const char *v)
{
    if (!v)
        return true;
    for (const char *f : {"0", "false", "no", "n", "f", "off"})
        if (strcasecmp(v, f) == 0)
            return false;
    return true;
}

const char *flag_value(const char *arg, const char *flag) // "--flag=v" -> "v", "--flag" -> nullptr
{
    const char *rest = arg + std::strlen(flag);
    return *rest == '=' ? rest + 1 : nullptr;
}

bool is_flag(const char *arg, const char *flag)
{
    const size_t n = std::strlen(flag);
    return std::strncmp(arg, flag, n) == 0 && (arg[n] == '\0' || arg[n] == '=');
}

std::string duration(double s)
{
    char buf[64];
    if (s < 60)
        std::snprintf(buf, sizeof buf, "%.1f s", s);
    else if (s < 3600)
        std::snprintf(buf, sizeof buf, "%d min %02d s", (int)s / 60, (int)s % 60);
    else
        std::snprintf(buf, sizeof buf, "%d h %02d min", (int)s / 3600, (int)s % 3600 / 60);
    return buf;
}

// Called as each run of a point begins; the first run of each counts.
void progress(point *p)
{
    if (p->started)
        return;
    p->started = true;
    const auto now = std::chrono::steady_clock::now();
    if (g_started++ == 0)
        g_t0 = now;
    if (!g_opt.progress)
        return;
    const double elapsed = std::chrono::duration<double>(now - g_t0).count();
    std::string line = "q35_bench: case " + std::to_string(g_started) + "/" + std::to_string(g_total) + " " +
                       p->name + " (elapsed " + duration(elapsed);
    if (g_started > 1 && g_started <= g_total)
        line += ", about " + duration(elapsed / (double)(g_started - 1) * (double)(g_total - g_started + 1)) + " left";
    std::fprintf(stderr, "%s)\n", line.c_str());
}

const std::string *label_of(const std::string &axis, int64_t v)
{
    const auto it = g_labels.find(axis);
    return it != g_labels.end() && v >= 0 && (size_t)v < it->second.size() ? &it->second[(size_t)v] : nullptr;
}

void make_name(point &p)
{
    p.name = p.family;
    for (size_t i = 0; i < p.axes.size(); i++) {
        const std::string *l = label_of(p.axes[i], p.args[i]);
        p.name += "/" + p.axes[i] + ":" + (l ? *l : std::to_string(p.args[i]));
    }
}

// Whether Google Benchmark's filter selects `name` (its rules: empty or "all"
// is everything, a leading '-' negates, else an extended regex searched in the
// name). A filter that does not compile selects everything here; Google
// Benchmark then reports it.
std::vector<point *> selected_points()
{
    std::string spec = benchmark::GetBenchmarkFilter();
    if (spec.empty() || spec == "all")
        spec = ".";
    bool negate = false;
    if (spec[0] == '-') {
        negate = true;
        spec.erase(0, 1);
    }
    std::vector<point *> out;
    try {
        const std::regex re(spec, std::regex::extended);
        for (point &p : points())
            if (std::regex_search(p.name + "/manual_time", re) != negate)
                out.push_back(&p);
    } catch (const std::regex_error &) {
        for (point &p : points())
            out.push_back(&p);
    }
    return out;
}

} // namespace

struct q35_bench_state {
    benchmark::State *st;
    const point *p;
    void *run = nullptr; // the run hooks' state
    bool begun = false, ended = false;
};

void q35_bench_axis_labels(const char *axis, const char *const *labels, int count)
{
    std::vector<std::string> &l = g_labels[axis];
    l.clear();
    for (int i = 0; i < count; i++) {
        if (!labels[i] || !*labels[i] ||
            std::strspn(labels[i], "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") !=
                std::strlen(labels[i]))
            die(std::string("axis ") + axis + ": label " + std::to_string(i) + " must be [A-Za-z0-9_.-]+");
        l.emplace_back(labels[i]);
    }
}

void q35_bench_register(const char *name, q35_bench_fn fn, void *ctx, const q35_bench_axis *axes, int n_axes)
{
    if (n_axes < 0 || n_axes > Q35_BENCH_MAX_AXES)
        die(std::string(name) + ": " + std::to_string(n_axes) + " axes, at most " +
            std::to_string(Q35_BENCH_MAX_AXES));
    size_t total = 1;
    for (int i = 0; i < n_axes; i++) {
        if (axes[i].count < 1)
            die(std::string(name) + ": axis " + axes[i].name + " has no values");
        total *= (size_t)axes[i].count;
    }
    std::vector<int> at(n_axes, 0); // the current point, last axis fastest
    for (size_t k = 0; k < total; k++) {
        point p;
        p.family = name;
        p.fn = fn;
        p.ctx = ctx;
        for (int i = 0; i < n_axes; i++) {
            p.axes.emplace_back(axes[i].name);
            p.args.push_back(axes[i].values[at[i]]);
        }
        points().push_back(std::move(p));
        for (int i = n_axes - 1; i >= 0 && ++at[i] == axes[i].count; i--)
            at[i] = 0;
    }
}

int64_t q35_bench_arg(q35_bench_state *s, int axis)
{
    if (axis < 0 || (size_t)axis >= s->p->args.size())
        die(s->p->name + ": no axis " + std::to_string(axis));
    return s->p->args[axis];
}

const char *q35_bench_arg_label(q35_bench_state *s, int axis)
{
    const std::string *l = label_of(s->p->axes[(size_t)axis], q35_bench_arg(s, axis));
    return l ? l->c_str() : nullptr;
}

bool q35_bench_keep_running(q35_bench_state *s)
{
    if (!s->begun) {
        s->begun = true;
        if (g_hooks.begin)
            s->run = g_hooks.begin(g_hooks.ctx);
    }
    const bool more = s->st->KeepRunning();
    if (!more && !s->ended) {
        s->ended = true;
        if (g_hooks.end)
            g_hooks.end(g_hooks.ctx, s->run, s, (int64_t)s->st->iterations());
    }
    return more;
}

void q35_bench_set_run_hooks(const q35_bench_run_hooks *hooks)
{
    g_hooks = hooks ? *hooks : q35_bench_run_hooks{nullptr, nullptr, nullptr};
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

void q35_bench_set_ceiling(const char *name, const char *unit, double per_second)
{
    g_ceilings[name] = per_second;
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.6e", per_second);
    q35_bench_context((std::string("ceiling_") + name + "_" + unit + "_per_s").c_str(), buf);
}

double q35_bench_ceiling(const char *name)
{
    const auto it = g_ceilings.find(name);
    return it == g_ceilings.end() ? 0.0 : it->second;
}

void q35_bench_pct_of(q35_bench_state *s, const char *ceiling, double per_iteration)
{
    const double c = q35_bench_ceiling(ceiling);
    if (c > 0)
        s->st->counters[std::string("pct_of_") + ceiling] =
            benchmark::Counter(100.0 * per_iteration / c, benchmark::Counter::kIsIterationInvariantRate);
}

int q35_bench_flags(int *argc, char **argv)
{
    if (!g_parsed) {
        for (int i = 0; i < *argc; i++)
            g_command += (i ? " " : "") + std::string(argv[i]);
        g_parsed = true;
    }
    int rc = 0, out = 1;
    for (int i = 1; i < *argc; i++) {
        const char *a = argv[i];
        if (std::strcmp(a, "--device") == 0 || starts_with(a, "--device=")) {
            const char *v = a[8] == '=' ? a + 9 : (i + 1 < *argc ? argv[++i] : "");
            if (!parse_count(v, &g_opt.device)) {
                std::fprintf(stderr, "benchmark: --device wants a device ordinal >= 0, got '%s'\n", v);
                rc = -1;
            }
        } else if (starts_with(a, "--q35_shard=")) {
            const char *v = a + std::strlen("--q35_shard="), *slash = std::strchr(v, '/');
            const std::string i_str = slash ? std::string(v, slash) : std::string(v);
            if (!slash || !parse_count(i_str.c_str(), &g_opt.shard) || !parse_count(slash + 1, &g_opt.shards) ||
                g_opt.shards < 1 || g_opt.shard >= g_opt.shards) {
                std::fprintf(stderr, "benchmark: --q35_shard wants i/n with 0 <= i < n, got '%s'\n", v);
                g_opt.shard = 0, g_opt.shards = 1;
                rc = -1;
            }
        } else if (is_flag(a, "--q35_progress")) {
            g_opt.progress = truthy(flag_value(a, "--q35_progress"));
        } else if (is_flag(a, "--q35_ceilings")) {
            g_opt.ceilings = truthy(flag_value(a, "--q35_ceilings"));
        } else if (is_flag(a, "--q35_power")) {
            g_opt.power = truthy(flag_value(a, "--q35_power"));
        } else {
            if (is_flag(a, "--benchmark_list_tests")) // Google Benchmark's: kept, and noted
                g_opt.listing = truthy(flag_value(a, "--benchmark_list_tests"));
            argv[out++] = argv[i];
        }
    }
    *argc = out;
    argv[out] = nullptr;
    return rc;
}

const q35_bench_options *q35_bench_get_options(void)
{
    return &g_opt;
}

int q35_bench_main(int argc, char **argv)
{
    if (q35_bench_flags(&argc, argv))
        return 2;
    benchmark::Initialize(&argc, argv);
    if (benchmark::ReportUnrecognizedArguments(argc, argv))
        return 1;
    const std::string shard = std::to_string(g_opt.shard) + "/" + std::to_string(g_opt.shards);
    q35_bench_context("git_describe", Q35_GIT_DESCRIBE);
    q35_bench_context("q35_schema", "1");
    q35_bench_context("q35_shard", shard.c_str());
    q35_bench_context("command", g_command.c_str());
    for (point &p : points())
        make_name(p);
    const std::vector<point *> selected = selected_points();
    for (size_t k = 0; k < selected.size(); k++) {
        if (k % (size_t)g_opt.shards != (size_t)g_opt.shard)
            continue;
        point *p = selected[k];
        benchmark::RegisterBenchmark(p->name.c_str(),
                                     [p](benchmark::State &st) {
                                         progress(p);
                                         q35_bench_state s{&st, p};
                                         p->fn(&s, p->ctx);
                                         if (s.begun && !s.ended && g_hooks.end) // left its loop early
                                             g_hooks.end(g_hooks.ctx, s.run, nullptr, 0);
                                     })
            ->UseManualTime()
            ->Unit(benchmark::kMillisecond);
        g_total++;
    }
    if (g_opt.shards > 1 && g_opt.progress && !g_opt.listing)
        std::fprintf(stderr, "q35_bench: shard %s: %zu of the %zu selected points\n", shard.c_str(), g_total,
                     selected.size());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    return 0;
}
