# One point per benchmark and device from a results JSON (bench/results/
# SCHEMA.md), merged or not: the median aggregate where repetitions made one,
# else the median of the iteration entries; skipped points left out.
#   {device, family, axes: {axis: "value"}, id, ms, cv, reps, counters...}
# id: the name without "/manual_time..."; cv: the spread of the repetitions'
# times (stddev / mean: the cv aggregate, else computed from the iterations),
# null with a single repetition; reps: how many repetitions ran.
def device_of($c): .device // $c.device // $c.host_name // "unknown";
def to_ms: .real_time * ({"ns": 1e-6, "us": 1e-3, "ms": 1, "s": 1e3}[.time_unit // "ns"] // 1);
def parse_name:
  (.run_name // .name | sub("/manual_time.*$"; "") | sub("/real_time.*$"; "")) as $id
  | ($id | split("/")) as $seg
  | {id: $id,
     family: ([$seg[] | select(contains(":") | not)] | join("/")),
     axes: ([$seg[] | select(contains(":")) | capture("^(?<k>[^:]+):(?<v>.*)$") | {(.k): .v}] | add // {})};
def aggregate($name): map(select(.run_type == "aggregate" and .aggregate_name == $name)) | first;
def spread: # the cv of a point's entries (one benchmark on one device), or null
  if aggregate("cv") then aggregate("cv").real_time
  elif aggregate("stddev") and aggregate("mean") and aggregate("mean").real_time > 0
  then aggregate("stddev").real_time / aggregate("mean").real_time
  else map(select((.run_type // "iteration") == "iteration") | to_ms) as $t
    | ($t | length) as $n
    | if $n < 2 then null
      else ($t | add / $n) as $m
        | if $m > 0 then ($t | map(. - $m | . * .) | add / ($n - 1) | sqrt) / $m else null end
      end
  end;
.context as $c
| [.benchmarks[] | select((.error_occurred // false) | not) | . + {device: device_of($c)}]
| group_by([.device, (.run_name // .name)])
| map(spread as $cv
      | (map(select((.run_type // "iteration") == "iteration")) | length) as $iters
      | aggregate("median") as $median
      | if $median then $median
        else map(select((.run_type // "iteration") == "iteration")) | sort_by(.real_time) | .[length / 2 | floor]
        end
      | select(. != null)
      | . + parse_name + {ms: to_ms, cv: $cv, reps: (if .run_type == "aggregate" then .repetitions else $iters end)})
