"""What the peers (bench/peers.py, bench/hf_peer.py) share: the shapes and axes
read from the C sources they pair with (model/shapes.c, bench/bench_*.c), the
commit, CUDA-event timing, the board's power over the timed calls (NVML, as
bench/power.h measures ours), and Google Benchmark's JSON form (bench/results/
SCHEMA.md). Imports nothing outside the standard library; torch is passed in
by the caller that has it.
"""

import contextlib
import ctypes
import datetime
import json
import os
import platform
import re
import socket
import statistics
import subprocess
import sys
import threading
import time

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


class PowerUnavailable(Exception):
    """NVML cannot measure this device: the message says why."""


class Power:
    """The board's power, SM clock and energy over a loop of timed calls, from NVML (the
    driver's libnvidia-ml through ctypes: $Q35_NVML_LIB, else libnvidia-ml.so.1), with
    bench/power.h's counters and meaning: gpu_j joules a call (the energy counter over the
    loop's wall time, over its calls), gpu_w the loop's mean board power, sm_mhz the median
    SM clock of samples every 10 ms and one as the loop ends, power_capped / thermal_capped
    the fraction of samples the power limit / heat held the clock; a counter NVML cannot
    give is left out. Raises PowerUnavailable naming why it cannot open the device."""

    SAMPLE_S = 0.010
    REASONS_POWER = 0x4 | 0x80  # software power cap, hardware power brake
    REASONS_THERMAL = 0x20 | 0x40 | 0x8  # software and hardware thermal slowdown, hardware slowdown

    def __init__(self, pci_bus_id):
        path = os.environ.get("Q35_NVML_LIB") or "libnvidia-ml.so.1"
        self.path, self.notes = path, {}
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            raise PowerUnavailable(f"cannot open {path} ({e})") from None
        self.lib = lib
        if hasattr(lib, "nvmlErrorString"):
            lib.nvmlErrorString.restype = ctypes.c_char_p
        for name in ("nvmlInit_v2", "nvmlDeviceGetHandleByPciBusId_v2", "nvmlDeviceGetClockInfo",
                     "nvmlDeviceGetEnforcedPowerLimit"):
            if not hasattr(lib, name):
                raise PowerUnavailable(f"{path} lacks {name}")
        rc = lib.nvmlInit_v2()
        if rc:
            raise PowerUnavailable(f"nvmlInit_v2: {self._error(rc)}")
        self.dev = ctypes.c_void_p()
        rc = lib.nvmlDeviceGetHandleByPciBusId_v2(pci_bus_id.encode(), ctypes.byref(self.dev))
        if rc:
            raise PowerUnavailable(f"nvmlDeviceGetHandleByPciBusId_v2({pci_bus_id}): {self._error(rc)}")
        # newer drivers name them clock-event reasons, older ones throttle reasons: the same call
        self.reasons = next((getattr(lib, n) for n in ("nvmlDeviceGetCurrentClocksEventReasons",
                                                        "nvmlDeviceGetCurrentClocksThrottleReasons")
                             if hasattr(lib, n)), None)
        self.energy = getattr(lib, "nvmlDeviceGetTotalEnergyConsumption", None)
        if self.energy is None:
            self.notes["power_energy"] = "the library lacks nvmlDeviceGetTotalEnergyConsumption"
        elif self._energy() is None:
            self.notes["power_energy"] = self._last_error
            self.energy = None
        if self.reasons is None:
            self.notes["power_reasons"] = "the library lacks nvmlDeviceGetCurrentClocksEventReasons"
        elif self._sample()[1] is None:
            self.notes["power_reasons"] = self._last_error
            self.reasons = None
        mw = ctypes.c_uint()
        self.limit_w = (mw.value * 1e-3 if lib.nvmlDeviceGetEnforcedPowerLimit(self.dev, ctypes.byref(mw)) == 0
                        else None)

    def _error(self, rc):
        s = self.lib.nvmlErrorString(rc) if hasattr(self.lib, "nvmlErrorString") else None
        return s.decode() if s else f"NVML error {rc}"

    def _energy(self):
        mj = ctypes.c_ulonglong()
        rc = self.energy(self.dev, ctypes.byref(mj))
        self._last_error = self._error(rc) if rc else None
        return None if rc else mj.value

    def _sample(self):
        mhz, mask = ctypes.c_uint(), ctypes.c_ulonglong()
        clock = mhz.value if self.lib.nvmlDeviceGetClockInfo(self.dev, 1, ctypes.byref(mhz)) == 0 else None
        reasons = None
        if self.reasons is not None:
            rc = self.reasons(self.dev, ctypes.byref(mask))
            self._last_error = self._error(rc) if rc else None
            reasons = None if rc else mask.value
        return clock, reasons

    def context(self):
        """The results file's context keys (SCHEMA.md): power, power_limit_w, and what NVML lacks."""
        return {"power": "nvml", "power_limit_w": "unknown" if self.limit_w is None else "%.1f" % self.limit_w,
                **self.notes}

    def loop(self):
        """A context manager around a loop of calls; its values(calls) the counters."""
        return _PowerLoop(self)


class _PowerLoop:
    def __init__(self, power):
        self.p, self.samples, self.stop = power, [], threading.Event()

    def _run(self):
        while True:
            self.samples.append(self.p._sample())
            if self.stop.wait(Power.SAMPLE_S):
                return

    def __enter__(self):
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        self.e0 = self.p._energy() if self.p.energy else None
        self.t0 = time.monotonic()
        return self

    def __exit__(self, *exc):
        self.e1 = self.p._energy() if self.e0 is not None else None
        self.t1 = time.monotonic()
        self.stop.set()
        self.thread.join()
        self.samples.append(self.p._sample())
        return False

    def values(self, calls):
        """bench/power.h's counters of the loop, for `calls` timed calls."""
        out = {}
        wall = self.t1 - self.t0
        if self.e0 is not None and self.e1 is not None and self.e1 >= self.e0 and calls > 0 and wall > 0:
            joules = (self.e1 - self.e0) * 1e-3
            out.update(gpu_j=joules / calls, gpu_w=joules / wall)
        clocks = [c for c, _ in self.samples if c is not None]
        if clocks:
            out["sm_mhz"] = float(statistics.median(clocks))
        reasons = [r for _, r in self.samples if r is not None]
        if reasons:
            out["power_capped"] = sum(1 for r in reasons if r & Power.REASONS_POWER) / len(reasons)
            out["thermal_capped"] = sum(1 for r in reasons if r & Power.REASONS_THERMAL) / len(reasons)
        return out


def pci_bus_id(torch, device):
    """The device's PCI address as CUDA writes it (0000:18:00.0), from torch's properties;
    None where this torch does not give it."""
    p = torch.cuda.get_device_properties(device)
    bus = getattr(p, "pci_bus_id", None)
    if bus is None:
        return None
    return "%04x:%02x:%02x.0" % (getattr(p, "pci_domain_id", 0) or 0, bus, getattr(p, "pci_device_id", 0) or 0)


def open_power(torch, device, enabled=True):
    """(Power or None, the context's keys): NVML for the device, or why not (power
    "off (--no-power)" or "unavailable: ..."), said on stderr too."""
    if not enabled:
        return None, {"power": "off (--no-power)"}
    pci = pci_bus_id(torch, device)
    try:
        if pci is None:
            raise PowerUnavailable("this torch gives no PCI bus id (get_device_properties().pci_bus_id)")
        power = Power(pci)
    except PowerUnavailable as e:
        print(f"peer: power: unavailable: {e}; no power, clock or energy counters", file=sys.stderr)
        return None, {"power": f"unavailable: {e}"}
    print(f"peer: power: NVML ({power.path}), limit {power.context()['power_limit_w']} W", file=sys.stderr)
    return power, power.context()


def time_ms(torch, run, reps, seconds, power=None, out=None):
    """Milliseconds of each timed call of run(): one untimed call first (compilation,
    autotuning, the allocator), then up to `reps` calls each between two CUDA events on
    the current stream, no further one once `seconds` of timed calls are spent, but at
    least two (one when reps is 1) so that the spread is known. With power (a Power),
    the board's counters over those timed calls into the dict out (Power.loop)."""
    run()
    torch.cuda.synchronize()
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    with power.loop() if power is not None else contextlib.nullcontext() as loop:
        while len(times) < reps and (len(times) < min(reps, 2) or sum(times) < seconds * 1e3):
            a.record()
            run()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b))
    if loop is not None and out is not None:
        out.update(loop.values(len(times)))
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
