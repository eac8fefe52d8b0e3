# One point per benchmark and device from a results JSON (bench/results/
# SCHEMA.md), merged or not: the median aggregate where repetitions made one,
# else the median of the iteration entries; skipped points left out.
#   {device, family, axes: {axis: "value"}, ms, counters...}
def device_of($c): .device // $c.device // $c.host_name // "unknown";
def to_ms: .real_time * ({"ns": 1e-6, "us": 1e-3, "ms": 1, "s": 1e3}[.time_unit // "ns"] // 1);
def parse_name:
  (.run_name // .name | sub("/manual_time.*$"; "") | sub("/real_time.*$"; "") | split("/")) as $seg
  | {family: ([$seg[] | select(contains(":") | not)] | join("/")),
     axes: ([$seg[] | select(contains(":")) | capture("^(?<k>[^:]+):(?<v>.*)$") | {(.k): .v}] | add // {})};
.context as $c
| [.benchmarks[] | select((.error_occurred // false) | not) | . + {device: device_of($c)}]
| group_by([.device, (.run_name // .name)])
| map((map(select(.run_type == "aggregate" and .aggregate_name == "median")) | first) as $median
      | if $median then $median
        else map(select((.run_type // "iteration") == "iteration")) | sort_by(.real_time) | .[length / 2 | floor]
        end
      | select(. != null)
      | . + parse_name + {ms: to_ms})
