"""What the peers (bench/peers.py, bench/hf_peer.py) share: the shapes and axes
read from the C sources they pair with (model/shapes.c, bench/bench_*.c), the
commit, CUDA-event timing, and Google Benchmark's JSON form (bench/results/
SCHEMA.md). Imports nothing outside the standard library; torch is passed in
by the caller that has it.
"""

import datetime
import json
import os
import platform
import re
import socket
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def c_value(text):
    """A C initializer value as Python: int, float, bool, string."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"'):
        return text.strip('"')
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return float(text.rstrip("fF"))


def c_source(path):
    """A C file's text without its comments."""
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        return re.sub(r"/\*.*?\*/", "", f.read(), flags=re.S)


def read_shapes(path="model/shapes.c"):
    """The shapes table of model/shapes.c: {name: {field: value}}, the
    QWEN35_COMMON macro expanded."""
    src = c_source(path)
    macro = re.search(r"#define\s+QWEN35_COMMON\s+((?:.*\\\n)*.*)", src)
    common = macro.group(1).replace("\\\n", " ") if macro else ""
    table = re.search(r"k_shapes\[\]\s*=\s*\{(.*?)\n\};", src, flags=re.S)
    if not table:
        raise SystemExit(f"peers: no k_shapes table in {path}")
    shapes = {}
    for entry in re.findall(r"\{([^{}]*)\}", table.group(1)):
        entry = entry.replace("QWEN35_COMMON", common)
        fields = {k: c_value(v) for k, v in re.findall(r"\.(\w+)\s*=\s*([^,]+)", entry)}
        shapes[fields["name"]] = fields
    return shapes


def c_ints(path, name):
    """The integers of an array initializer `name[] = {1, 2, ...}` in a C file."""
    m = re.search(r"\b" + re.escape(name) + r"\[\]\s*=\s*\{([^{}]*)\}", c_source(path))
    if not m:
        raise SystemExit(f"peers: no array {name}[] in {path}")
    return [int(v) for v in m.group(1).split(",") if v.strip()]


def c_strings(path, name):
    """The strings of an array initializer `name[] = {"a", "b", ...}` in a C file."""
    m = re.search(r"\b" + re.escape(name) + r"\[\]\s*=\s*\{([^{}]*)\}", c_source(path))
    if not m:
        raise SystemExit(f"peers: no array {name}[] in {path}")
    return re.findall(r'"([^"]*)"', m.group(1))


def bench_models(shapes, path="bench/models.c"):
    """The kernel benchmarks' model axis (bench/models.c, names of the shapes
    table) as the shapes of those names, in axis order."""
    return [shapes[n] for n in c_strings(path, "k_bench_models")]


def c_define(path, name):
    """The integer of `#define NAME value` in a C file."""
    m = re.search(r"#define\s+" + re.escape(name) + r"\s+\(?(\d+)", c_source(path))
    if not m:
        raise SystemExit(f"peers: no #define {name} in {path}")
    return int(m.group(1))


def c_rows(path, name):
    """The rows of a table of brace-enclosed initializers `name[] = {{"a", 1, 2}, ...}`
    as tuples of values."""
    m = re.search(r"\b" + re.escape(name) + r"\[\]\s*=\s*\{(.*?)\n?\};", c_source(path), flags=re.S)
    if not m:
        raise SystemExit(f"peers: no table {name}[] in {path}")
    return [tuple(c_value(v) for v in row.split(",")) for row in re.findall(r"\{([^{}]*)\}", m.group(1))]


def git_describe():
    """$Q35_GIT_DESCRIBE when set (a tree copied without .git), else git describe."""
    if os.environ.get("Q35_GIT_DESCRIBE"):
        return os.environ["Q35_GIT_DESCRIBE"]
    try:
        out = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--abbrev=7"],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def base_context(executable):
    """The context keys every results file has (SCHEMA.md), without the device."""
    return {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host_name": socket.gethostname(),
        "executable": executable,
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
        "peer_python": platform.python_version(),
        "git_describe": git_describe(),
        "q35_schema": "1",
        "q35_shard": "0/1",
    }


def device_context(torch, device):
    """The device as torch sees it, and torch's versions."""
    props = torch.cuda.get_device_properties(device)
    return {
        "device": torch.cuda.get_device_name(device),
        "device_ordinal": str(device),
        "device_sms": str(props.multi_processor_count),
        "device_memory_gib": "%.1f" % (props.total_memory / 2**30),
        "device_arch": "sm_%d%d" % (props.major, props.minor),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", "(unset)"),
        "peer_torch": torch.__version__,
        "peer_torch_cuda": str(torch.version.cuda),
    }


def time_ms(torch, run, reps, seconds):
    """Milliseconds of each timed call of run(): one untimed call first (compilation,
    autotuning, the allocator), then up to `reps` calls each between two CUDA events on
    the current stream, no further one once `seconds` of timed calls are spent, but at
    least two (one when reps is 1) so that the spread is known."""
    run()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    while len(times) < reps and (len(times) < min(reps, 2) or sum(times) < seconds * 1e3):
        a.record()
        run()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return times


def _entry(name, index, reps, **fields):
    e = {"name": name + "/manual_time", "family_index": 0, "per_family_instance_index": index,
         "run_name": name + "/manual_time", "run_type": "iteration", "repetitions": reps, "threads": 1}
    e.update(fields)
    return e


def entries(name, index, times_ms, rates=None, values=None):
    """Google Benchmark's JSON entries of a point timed len(times_ms) times (ms per
    call): the iteration itself for one repetition, else the mean, median, stddev
    and cv aggregates (as --benchmark_report_aggregates_only). rates: amounts per
    call (FLOP, bytes, tokens), reported per second like the shim's rate counters,
    each aggregate taken over the repetitions' rates; values: plain counters."""
    rates, values = rates or {}, values or {}
    per_rep = [{k: v / (t / 1e3) for k, v in rates.items()} for t in times_ms]
    n = len(times_ms)
    if n == 1:
        return [_entry(name, index, 1, repetition_index=0, iterations=1, real_time=times_ms[0],
                       cpu_time=times_ms[0], time_unit="ms", **per_rep[0], **values)]
    stats = {"mean": statistics.mean, "median": statistics.median, "stddev": statistics.stdev,
             "cv": lambda xs: statistics.stdev(xs) / statistics.mean(xs)}
    out = []
    for agg, f in stats.items():
        counters = {k: f([r[k] for r in per_rep]) for k in rates}
        counters.update({k: (v if agg in ("mean", "median") else 0.0) for k, v in values.items()})
        t = f(times_ms)
        e = _entry(name, index, n, aggregate_name=agg, aggregate_unit="percentage" if agg == "cv" else "time",
                   iterations=n, real_time=t, cpu_time=t, time_unit="ms", **counters)
        e.update(name=f"{name}/manual_time_{agg}", run_type="aggregate")
        out.append(e)
    return out


def skipped(name, index, why):
    """A point that did not run, with the reason (reported, never dropped)."""
    return _entry(name, index, 1, repetition_index=0, iterations=0, real_time=0.0, cpu_time=0.0, time_unit="ms",
                  error_occurred=True, error_message="skipped: " + why)


def write_results(path, context, benchmarks):
    """The results JSON to path (rewritten whole, so a run cut short keeps what it
    measured), or to stdout when path is empty."""
    text = json.dumps({"context": context, "benchmarks": benchmarks}, indent=2) + "\n"
    if not path:
        sys.stdout.write(text)
        return
    tmp = path + ".tmp"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(tmp, path)
