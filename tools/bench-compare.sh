#!/bin/sh
# Compares two benchmark results (bench/results/SCHEMA.md; merged files too):
# each benchmark of A against the same-named one of B (two runs of ours, e.g.
# two commits), or, with --map, against the peer a name map pairs it with
# (bench/peers.map: ours in A, the peers in B). Prints each pair's median
# times, the spread of each side's repetitions (cv), B/A and a verdict, then a
# summary; exits 1 when a benchmark of B is slower than A's by more than
# --max-slowdown and by more than the noise, so a GPU runner can gate a merge.
#
#   tools/bench-compare.sh [--map FILE] [--max-slowdown PCT] [--noise K] [--force]
#                          [--fail-missing] A.json B.json
#
# Where both sides of a pair carry the power counters (bench/power.h; the
# peers' too), a second table gives each side's joules an iteration (gpu_j),
# their ratio, the mean board power and the median SM clock.
#
# Noise: each side's cv (plots/points.jq: the cv aggregate of its repetitions,
# else computed from its iteration entries; unknown, counted 0 and shown `?`,
# with one repetition); the pair's noise is sqrt(cvA^2 + cvB^2), and a change
# within K times it (K = --noise, default 2) is `same`. A regression is slower
# past both --max-slowdown (a percentage, e.g. 5%) and the noise; without
# --max-slowdown nothing fails. Files from different devices (context.device,
# or a merged file's devices) are refused unless --force.
# Exit: 0 no regression; 1 a regression (or, with --fail-missing, a benchmark
# missing on one side); 2 a usage error, an unreadable or malformed file,
# different devices, a name held twice in one file, nothing to compare.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
JQ=${JQ:-jq}
usage="usage: tools/bench-compare.sh [--map FILE] [--max-slowdown PCT] [--noise K] [--force] [--fail-missing] A.json B.json"
die() { echo "bench-compare: $*" >&2; exit 2; }
map="" max="" noise=2 force=false fail_missing=false
while [ $# -gt 0 ]; do
    case $1 in
    --map) [ $# -ge 2 ] || die "--map needs a file"; map=$2; shift 2 ;;
    --max-slowdown) [ $# -ge 2 ] || die "--max-slowdown needs a percentage"; max=${2%\%}; shift 2
        echo "$max" | grep -Eq '^[0-9]+([.][0-9]+)?$' || die "--max-slowdown wants a percentage (5%, 0.5), got '$max'" ;;
    --noise) [ $# -ge 2 ] || die "--noise needs a number"; noise=$2; shift 2
        echo "$noise" | grep -Eq '^[0-9]+([.][0-9]+)?$' || die "--noise wants a number >= 0, got '$noise'" ;;
    --force) force=true; shift ;;
    --fail-missing) fail_missing=true; shift ;;
    -h | --help) echo "$usage"; exit 0 ;;
    -*) die "unknown option $1 ($usage)" ;;
    *) break ;;
    esac
done
[ $# -eq 2 ] || die "$usage"
a=$1 b=$2
command -v "$JQ" >/dev/null 2>&1 || die "jq not found (tools/deps.sh installs it)"
for f in "$a" "$b" ${map:+"$map"}; do
    [ -r "$f" ] || die "cannot read $f"
done
for f in "$a" "$b"; do
    "$JQ" -e '(.benchmarks | type) == "array" and (.context | type) == "object"' "$f" >/dev/null 2>&1 ||
        die "$f: not a benchmark JSON (no context object or benchmarks array)"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The devices and commit of a file, as one line.
devices() {
    "$JQ" -r '(.context.devices // [.context.device // .context.host_name // "unknown"]) | sort | join(", ")' "$1"
}
commit() { "$JQ" -r '[.context.git_describe // (.context.sources[]?.git_describe) // "?"] | unique | join(", ")' "$1"; }
da=$(devices "$a") db=$(devices "$b")
if [ "$da" != "$db" ]; then
    $force || die "A ran on $da, B on $db: refused (--force compares them anyway)"
    echo "bench-compare: warning: A ran on $da, B on $db (--force)"
fi

# The points of each side, devices dropped (checked above), each name once.
for side in a b; do
    eval "f=\$$side"
    "$JQ" -f "$root/plots/points.jq" "$f" | "$JQ" 'map(.device = "")' >"$tmp/$side.json" ||
        die "$f: cannot read its benchmarks"
    twice=$("$JQ" -r 'group_by(.id) | map(select(length > 1) | .[0].id) | .[:3] | join(", ")' "$tmp/$side.json")
    [ -z "$twice" ] || die "$f holds $twice more than once (several devices?): compare one device's results"
done
if [ -n "$map" ]; then
    "$JQ" -R -s "$(cat "$root/plots/pairs.jq") map_rules" "$map" >"$tmp/rules.json" 2>"$tmp/err" ||
        die "$map: $(sed 's/^jq: error[^:]*: //' "$tmp/err")"
else
    echo '[{"line": 0, "a": "*", "b": "{id}", "re": "^(?<id>.*)$"}]' >"$tmp/rules.json"
fi

# The report: every pair with its ratio, noise and verdict, and what is missing.
"$JQ" -n --slurpfile A "$tmp/a.json" --slurpfile B "$tmp/b.json" --slurpfile R "$tmp/rules.json" \
    --arg max "$max" --argjson k "$noise" --argjson mapped "$([ -n "$map" ] && echo true || echo false)" \
    "$(cat "$root/plots/pairs.jq")"'
  ($A[0] | pairs($R[0]; $B[0])) as $p
  | ($max | if . == "" then null else tonumber / 100 end) as $max
  | {compared: [$p[] | select(.b) | (.b.ms / .a.ms) as $r
                | ([.a.cv, .b.cv] | map(. // 0) | map(. * .) | add | sqrt) as $noise
                | ($k * $noise) as $band
                | {a: .a.id, b: .b.id, a_ms: .a.ms, b_ms: .b.ms, a_cv: .a.cv, b_cv: .b.cv, ratio: $r,
                   a_j: .a.gpu_j, b_j: .b.gpu_j, a_w: .a.gpu_w, b_w: .b.gpu_w, a_mhz: .a.sm_mhz, b_mhz: .b.sm_mhz,
                   noise: $noise, verdict: (if ($r - 1 | fabs) <= $band then "same"
                             elif $r > 1 and $max != null and $r - 1 > $max then "REGRESSION"
                             elif $r > 1 then "slower" else "faster" end)}],
     missing_b: [$p[] | select(.b == null) | .a.id + (if .b_id != .a.id then " (no \(.b_id) in B)" else "" end)],
     missing_a: (if $mapped then [] else ([$A[0][].id] | map({(.): true}) | add) as $ids
                 | [$B[0][].id | select($ids[.] | not)] end)}' \
    >"$tmp/report.json" || die "the comparison failed"

formats='
  def pct: if . == null then "?" else (. * 1000 | round / 10 | tostring) + "%" end;
  def num($w): tostring | .[0:$w] | " " * ($w - length) + .;   # right-aligned in $w
  def fixed($d): (. * pow(10; $d) | round | tostring) as $s     # $d decimals (. >= 0)
    | ("0000000000"[0:([$d + 1 - ($s | length), 0] | max)] + $s) as $z
    | if $d == 0 then $z else $z[0:($z | length) - $d] + "." + $z[($z | length) - $d:] end;
  def fmt: fixed(if . >= 1000 then 0 elif . >= 100 then 1 elif . >= 10 then 2 elif . >= 1 then 3
                 elif . >= 0.1 then 4 else 5 end);
  def count($v): [.compared[] | select(.verdict | IN($v[]))] | length;'
echo "bench-compare: A = $a ($da, $(commit "$a")); B = $b ($db, $(commit "$b"))"
echo "  B/A: B's median time over A's; verdicts say how B compares with A; +-: the repetitions' cv"
"$JQ" -r "$formats"'
  "      A ms    +-       B ms    +-     B/A  verdict     benchmark",
  (.compared[] | [(.a_ms | fmt | num(10)), (.a_cv | pct | num(5)), (.b_ms | fmt | num(10)), (.b_cv | pct | num(5)),
                  (.ratio | fixed(3) | num(7)), " " + (.verdict + "          " | .[0:10]),
                  " " + .a + (if .a != .b then "  vs  " + .b else "" end)] | join(" ")),
  ([.compared[] | select(.a_j != null and .b_j != null and .a_j > 0)] as $e | select($e | length > 0)
   | "  energy (bench/power.h; the pairs where both sides have it): J an iteration, the mean board power, "
     + "the median SM clock",
     "       A J       B J  B/A J     A W     B W   A MHz   B MHz  benchmark",
     ($e[] | [(.a_j | fmt | num(9)), (.b_j | fmt | num(9)), (.b_j / .a_j | fixed(3) | num(6)),
              (.a_w // 0 | round | num(7)), (.b_w // 0 | round | num(7)),
              (.a_mhz // 0 | round | num(7)), (.b_mhz // 0 | round | num(7)),
              " " + .a + (if .a != .b then "  vs  " + .b else "" end)] | join(" "))),
  (.missing_b[] | "  missing in B: \(.)"),
  (.missing_a[] | "  only in B: \(.)"),
  (.compared | length) as $n
  | "bench-compare: \($n) compared: \(count(["faster"])) faster, \(count(["slower", "REGRESSION"])) slower, "
    + "\(count(["same"])) the same within \($k) x noise"
    + (if $n > 0 then "; geometric mean of B/A \([.compared[].ratio | log] | add / $n | exp | fixed(3))" else "" end)
    + "; \((.missing_b | length) + (.missing_a | length)) missing on one side"
    + (if $max == "" then "; no gate (--max-slowdown)"
       else "; \(count(["REGRESSION"])) slower than A past \($max)% and the noise" end)' \
    --arg max "$max" --argjson k "$noise" "$tmp/report.json"
n=$("$JQ" '.compared | length' "$tmp/report.json")
[ "$n" -gt 0 ] || die "nothing to compare: no benchmark of A has its pair in B"
regressions=$("$JQ" '[.compared[] | select(.verdict == "REGRESSION")] | length' "$tmp/report.json")
missing=$("$JQ" '.missing_b + .missing_a | length' "$tmp/report.json")
[ "$regressions" -eq 0 ] || exit 1
! $fail_missing || [ "$missing" -eq 0 ] || exit 1
exit 0
