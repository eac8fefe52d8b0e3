#!/bin/sh
# An A/B of two settings of one benchmark, in turns: each round runs the
# benchmark once with A's environment and once with B's (A then B in odd
# rounds, B then A in even ones, so a drift of the device, its clocks at the
# power limit warming up, weighs on both alike), each run's JSON kept; then,
# for every benchmark the runs share, the rounds' times of A and B, B/A per
# round and a sign test over the rounds: a change is called only when B was
# faster (or slower) in enough rounds that chance alone would do it at most
# 5 % of the time (two-sided; 6 rounds all one way: p = 0.031; 5 rounds can
# never call it). What a benchmark's own repetitions cannot show, a change
# smaller than the device's run-to-run drift (the 4k prefill's +-1.5 %
# between runs at 700 W), shows here as rounds that disagree.
#
#   tools/bench-ab.sh [-r ROUNDS] [-o DIR] [-m METRIC] -a 'NAME=VALUE ...' -b 'NAME=VALUE ...'
#                     -- BENCHMARK [ARGS...]
#   tools/bench-ab.sh [-m METRIC] -s DIR
#
#   -r ROUNDS   rounds (default 6, 1 .. 99)
#   -o DIR      where the runs' JSON (a-R.json, b-R.json), their logs and
#               summary.txt go (default bench-ab.out; made if missing)
#   -a, -b      each arm's environment: NAME=VALUE words (no spaces inside a
#               value), e.g. -a Q35_GEMM_SM90_VARIANT=persist; '' for none
#   BENCHMARK   a Google Benchmark program of bench/ (its own options after it:
#               a filter, repetitions; not --benchmark_out, which this sets)
#   -m METRIC   what is compared: time (the default), or a counter of the
#               benchmark's JSON, lower being better: gpu_j (joules an
#               iteration, bench/power.h) asks whether B spends less energy,
#               which at the power limit is what makes it faster
#   -s DIR      no runs: the summary of the runs already in DIR (a-R.json and
#               b-R.json, R = 1, 2, ...: a call's, or ones made by hand from
#               benchmark JSON run in turns), into DIR/summary.txt
#
# A benchmark's time in a run: its median aggregate where the run has
# repetitions, else the mean of its iteration entries. The summary: per
# benchmark, the medians over the rounds of A's and B's times, of B/A, its
# least and most, the rounds B was faster, slower (ties counted in neither),
# the test's p and the verdict (B faster, B slower, same); with -m a counter,
# its values (the median aggregate's, else the mean of the iterations'),
# the rounds B was lower, and B lower, B higher, same. Needs jq.
# Exit: 0 done; 1 a run failed (its log named) or the runs share no
# benchmark; 2 a usage error.
set -u
usage="usage: tools/bench-ab.sh [-r ROUNDS] [-o DIR] [-m METRIC] -a 'NAME=VALUE ...' -b 'NAME=VALUE ...' -- BENCHMARK [ARGS...] | [-m METRIC] -s DIR"
die() { echo "bench-ab: $*" >&2; exit 2; }
JQ=${JQ:-jq}
rounds=6 out=bench-ab.out a_env="" b_env="" have_a=false have_b=false summary="" metric=time
while [ $# -gt 0 ]; do
    case $1 in
    -s) [ $# -ge 2 ] || die "-s wants a directory; $usage"; summary=$2; shift 2 ;;
    -r) [ $# -ge 2 ] || die "-r wants a value; $usage"; rounds=$2; shift 2 ;;
    -o) [ $# -ge 2 ] || die "-o wants a value; $usage"; out=$2; shift 2 ;;
    -m) [ $# -ge 2 ] || die "-m wants a value; $usage"; metric=$2; shift 2 ;;
    -a) [ $# -ge 2 ] || die "-a wants a value; $usage"; a_env=$2; have_a=true; shift 2 ;;
    -b) [ $# -ge 2 ] || die "-b wants a value; $usage"; b_env=$2; have_b=true; shift 2 ;;
    --) shift; break ;;
    -h | --help) echo "$usage"; exit 0 ;;
    *) die "unknown option '$1'; $usage" ;;
    esac
done
case $metric in '' | [!A-Za-z_]* | *[!A-Za-z0-9_]*) die "-m $metric: time, or a counter's name (letters, digits, _)" ;; esac
if [ -n "$summary" ]; then
    [ $# -eq 0 ] && ! $have_a && ! $have_b || die "-s takes no arms, rounds or program; $usage"
    [ -d "$summary" ] || die "-s $summary: no such directory"
    command -v "$JQ" >/dev/null 2>&1 || die "jq not found (tools/deps.sh installs it)"
    out=$summary rounds=0
    for f in "$out"/a-*.json "$out"/b-*.json; do
        [ -f "$f" ] || continue
        n=$(basename "$f" .json); n=${n#*-}
        case $n in '' | *[!0-9]*) die "-s: $f is not a-R.json or b-R.json with R a whole number" ;; esac
        [ "$n" -gt "$rounds" ] && rounds=$n
    done
    [ "$rounds" -ge 1 ] || die "-s $summary: no a-R.json or b-R.json there"
fi
if [ -z "$summary" ]; then
    $have_a && $have_b || die "both arms wanted (-a and -b; '' for an empty environment); $usage"
    case $rounds in '' | *[!0-9]*) die "-r $rounds is not a whole number (1 .. 99)" ;; esac
    [ "$rounds" -ge 1 ] && [ "$rounds" -le 99 ] || die "-r $rounds outside 1 .. 99"
    [ $# -ge 1 ] || die "no benchmark program after --; $usage"
    bench=$1
    shift
    for arg in "$@"; do
        case $arg in --benchmark_out=* | --benchmark_out | --benchmark_out_format*)
            die "'$arg': bench-ab sets the output (DIR/a-R.json, b-R.json)" ;;
        esac
    done
    for word in $a_env $b_env; do
        case $word in
        [A-Za-z_]*=*) name=${word%%=*}
                      case $name in *[!A-Za-z0-9_]*) die "'$word' is not NAME=VALUE (a name of letters, digits, _)" ;; esac ;;
        *) die "'$word' is not NAME=VALUE" ;;
        esac
    done
    command -v "$JQ" >/dev/null 2>&1 || die "jq not found (tools/deps.sh installs it)"
    [ -x "$bench" ] || command -v "$bench" >/dev/null 2>&1 || die "no program $bench"
    mkdir -p "$out" || die "cannot make $out"

    # Round by round, each arm: the benchmark under the arm's environment into DIR/ARM-ROUND.json.
    r=1
    while [ "$r" -le "$rounds" ]; do
        if [ $((r % 2)) -eq 1 ]; then order="a b"; else order="b a"; fi
        for arm in $order; do
            if [ "$arm" = a ]; then vars=$a_env; else vars=$b_env; fi
            echo "bench-ab: round $r, $arm ($(date +%T))${vars:+: $vars}"
            # shellcheck disable=SC2086 # the arm's NAME=VALUE words, split on purpose
            if ! env $vars "$bench" "$@" --benchmark_out="$out/$arm-$r.json" --benchmark_out_format=json \
                >"$out/$arm-$r.log" 2>&1; then
                echo "bench-ab: round $r, arm $arm failed: see $out/$arm-$r.log" >&2
                tail -5 "$out/$arm-$r.log" >&2
                exit 1
            fi
        done
        r=$((r + 1))
    done
fi

# Each run's times (or METRIC's values), one TSV line a benchmark: arm, round, name, value.
for f in "$out"/a-*.json "$out"/b-*.json; do
    [ -f "$f" ] || continue
    base=$(basename "$f" .json)
    "$JQ" -r --arg arm "${base%%-*}" --arg round "${base#*-}" --arg metric "$metric" '
        def secs: if $metric == "time" then .real_time * ({"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[.time_unit // "ns"])
                  else .[$metric] end;
        (.benchmarks // []) as $b
        | ([$b[] | select(.aggregate_name == "median" and secs != null)] | map({key: .run_name, value: secs})
           | from_entries) as $med
        | ([$b[] | select((.run_type // "iteration") == "iteration" and (.error_occurred // false | not) and secs != null)]
           | group_by(.run_name // .name)
           | map({key: (.[0].run_name // .[0].name), value: (map(secs) | add / length)}) | from_entries) as $it
        | ($it + $med) | to_entries[] | [$arm, $round, .key, (.value | tostring)] | @tsv' "$f" \
        || { echo "bench-ab: cannot read $f" >&2; exit 1; }
done >"$out/times.tsv"

awk -F'\t' -v rounds="$rounds" -v a_env="$a_env" -v b_env="$b_env" -v from="$summary" -v metric="$metric" '
function median(list, n,    i, j, t, v) {
    for (i = 1; i <= n; i++) v[i] = list[i]
    for (i = 2; i <= n; i++) for (j = i; j > 1 && v[j - 1] > v[j]; j--) { t = v[j]; v[j] = v[j - 1]; v[j - 1] = t }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function choose(n, k,    c, i) { c = 1; for (i = 1; i <= k; i++) c = c * (n - k + i) / i; return c }
function sign_p(wins, losses,    n, k, p, i) { # two-sided sign test, ties dropped
    n = wins + losses; if (n == 0) return 1
    k = wins > losses ? wins : losses; p = 0
    for (i = k; i <= n; i++) p += choose(n, i)
    p = 2 * p / 2 ^ n
    return p > 1 ? 1 : p
}
function shown(v) { return metric == "time" ? sprintf("%11.4f", v * 1e3) : sprintf("%11.6g", v) }
{ t[$1, $2, $3] = $4; names[$3] = 1 }
END {
    if (from != "")
        printf "the runs in %s: %d rounds\n\n", from, rounds
    else
        printf "A: %s\nB: %s\nrounds: %d (A first in odd rounds, B first in even ones)\n\n", \
            a_env == "" ? "(no variables)" : a_env, b_env == "" ? "(no variables)" : b_env, rounds
    if (metric != "time") printf "metric: %s (lower is better)\n\n", metric
    better = metric == "time" ? "faster" : "lower"; worse = metric == "time" ? "slower" : "higher"
    unit = metric == "time" ? "ms" : substr(metric, 1, 8)
    shared = 0
    n_names = 0
    w = length("benchmark")
    for (name in names) { sorted[++n_names] = name; if (length(name) > w) w = length(name) }
    printf "%-" w "s %11s %11s %7s %15s %7s %7s  %s\n", "benchmark", "A " unit, "B " unit, "B/A", "B/A least..most", better, "p", "verdict"
    for (i = 2; i <= n_names; i++) for (j = i; j > 1 && sorted[j - 1] > sorted[j]; j--) { s = sorted[j]; sorted[j] = sorted[j - 1]; sorted[j - 1] = s }
    for (x = 1; x <= n_names; x++) {
        name = sorted[x]; n = 0; wins = 0; losses = 0; lo = ""; hi = ""
        for (r = 1; r <= rounds; r++) {
            if (!(("a", r, name) in t) || !(("b", r, name) in t)) continue
            n++; ta[n] = t["a", r, name]; tb[n] = t["b", r, name]; q[n] = tb[n] / ta[n]
            if (tb[n] < ta[n]) wins++; else if (tb[n] > ta[n]) losses++
            if (lo == "" || q[n] < lo) lo = q[n]; if (hi == "" || q[n] > hi) hi = q[n]
        }
        if (n < rounds) { missing = missing sprintf("  %s: in %d of %d rounds of both arms\n", name, n, rounds); if (n == 0) continue }
        shared++
        p = sign_p(wins, losses)
        verdict = p <= 0.05 ? (wins > losses ? "B " better : "B " worse) : "same"
        printf "%-" w "s %s %s %7.4f %7.4f..%-7.4f %3d/%-3d %7.3f  %s\n", name, shown(median(ta, n)), shown(median(tb, n)), \
            median(q, n), lo, hi, wins, n, p, verdict
    }
    if (missing != "") printf "\nnot in every round (compared over the rounds that have it in both arms):\n%s", missing
    if (!shared) { print "no benchmark in both arms" (metric == "time" ? "" : " with " metric) > "/dev/stderr"; exit 1 }
}' "$out/times.tsv" >"$out/summary.txt.new" || { cat "$out/summary.txt.new"; rm -f "$out/summary.txt.new"; exit 1; }
# in place only when whole: a failed summary leaves an earlier one as it was
mv "$out/summary.txt.new" "$out/summary.txt" || { echo "bench-ab: cannot write $out/summary.txt" >&2; exit 1; }
cat "$out/summary.txt"
