#!/bin/bash
# What a GPU CI runner runs (.github/workflows/ci.yml's gpu job): the stages named
# (in the order named; default all five, in this order), every artifact in one folder.
#
#   tools/gpu-ci.sh [-o DIR] [--build DIR] [--jobs N] [--reps N] [--baseline FILE] [--baselines DIR]
#                   [--sweep FILE] [--floor PCT] [--noise-k K] [STAGE...]
#
#   deps    tools/deps.sh: installs what the build misses (a runner has a package
#           registry; Q35_NO_INSTALL=1 only names it)
#   build   tools/gpu-run.sh build: configure and build for the local GPU into
#           build/gpu (warnings are errors); configure.log, build.log
#   test    ctest -L gpu, --jobs N suites at once (default 1; the suites share the
#           one GPU, so more than one only shortens the wall time): gpu-tests.log
#           and the JUnit XML junit-gpu.xml
#   bench   the short sweep, Google Benchmark JSON, N repetitions (--reps, default
#           5; Q35_BENCH_MIN_TIME the time each runs): bench_prefill at
#           ^prefill/shape:9b/quant:q4_k/gemm:f16/attn:flash/chunk:8192/len:(512|4096)/
#           into prefill.json, a few bench_kernels points (Q35_CI_KERNELS, a regex)
#           into kernels.json, both merged into sweep.json (tools/bench-merge.sh)
#   gate    tools/bench-compare.sh of the sweep (--sweep, default DIR/sweep.json)
#           against bench/results/baseline/<device-slug>.json (--baselines DIR,
#           or --baseline FILE) into compare.txt. The slowdown that fails it
#           (--max-slowdown) is derived from the measured repetition noise: the
#           larger of the floor (--floor, default 5%) and K (--noise-k, default 3)
#           times the largest noise of a compared pair, sqrt(cv_base^2 + cv_new^2),
#           each cv from that side's repetitions; gate.txt says which and why.
#           No baseline for the device, or one of another board of the same
#           slug: the gate is skipped, saying so, and that is no failure.
#
# DIR: -o, else $OUT, else out/gpu-ci/. It ends with summary.txt (a line a stage).
# Exit: 0 every stage passed (or was skipped, saying why); 1 a stage failed (the
# build, a GPU test, a benchmark, a slowdown past the gate, a comparison that
# could not run); 2 a usage error.
set -u
cd "$(dirname "$0")/.." || exit 2
root=$PWD
JQ=${JQ:-jq}
die() { echo "gpu-ci: $*" >&2; exit 2; }

dir=${OUT:-out/gpu-ci} build=build/gpu jobs=1 reps=5 baseline="" baselines=$root/bench/results/baseline sweep=""
floor=5 noise_k=3 stages=()
while [ $# -gt 0 ]; do
    case $1 in
    -o | --out) [ $# -ge 2 ] || die "$1 needs a folder"; dir=$2; shift 2 ;;
    --build) [ $# -ge 2 ] || die "--build needs a folder"; build=$2; shift 2 ;;
    --jobs) [ $# -ge 2 ] || die "--jobs needs a number"; jobs=$2; shift 2 ;;
    --reps) [ $# -ge 2 ] || die "--reps needs a number"; reps=$2; shift 2 ;;
    --baseline) [ $# -ge 2 ] || die "--baseline needs a file"; baseline=$2; shift 2 ;;
    --baselines) [ $# -ge 2 ] || die "--baselines needs a folder"; baselines=$2; shift 2 ;;
    --sweep) [ $# -ge 2 ] || die "--sweep needs a file"; sweep=$2; shift 2 ;;
    --floor) [ $# -ge 2 ] || die "--floor needs a percentage"; floor=${2%\%}; shift 2 ;;
    --noise-k) [ $# -ge 2 ] || die "--noise-k needs a number"; noise_k=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    deps | build | test | bench | gate) stages+=("$1"); shift ;;
    *) die "unknown argument $1 (--help)" ;;
    esac
done
[ ${#stages[@]} -gt 0 ] || stages=(deps build test bench gate)
echo "$reps" | grep -Eq '^[1-9][0-9]*$' || die "--reps wants a count, got '$reps'"
echo "$jobs" | grep -Eq '^[1-9][0-9]*$' || die "--jobs wants a count, got '$jobs'"
for n in "$floor" "$noise_k"; do
    echo "$n" | grep -Eq '^[0-9]+([.][0-9]+)?$' || die "--floor and --noise-k want numbers >= 0, got '$n'"
done
mkdir -p "$dir" || die "cannot make $dir"
dir=$(cd "$dir" && pwd)
sweep=${sweep:-$dir/sweep.json}
rc=0
: >"$dir/summary.txt"
# say STAGE VERDICT TEXT: a line of the summary, printed too
say() { printf '%-6s %-8s %s\n' "$1" "$2" "$3" | tee -a "$dir/summary.txt"; }

prefill_filter='^prefill/shape:9b/quant:q4_k/gemm:f16/attn:flash/chunk:8192/len:(512|4096)/'
kernels_filter=${Q35_CI_KERNELS:-'^(delta_chunk/model:1/rows:4096/variant:11|delta_prep/model:1/rows:2048|attn_prep/model:1/rows:2048|rmsnorm_rows/model:1/rows:4096|conv1d_silu_rows/model:1/rows:4096)/'}

# bench_run EXE FILTER NAME: one benchmark's points into DIR/NAME.json (log NAME.log)
bench_run() {
    "$build/bench/$1" --benchmark_filter="$2" --benchmark_repetitions="$reps" --benchmark_report_aggregates_only=true \
        ${Q35_BENCH_MIN_TIME:+--benchmark_min_time=$Q35_BENCH_MIN_TIME} --q35_progress=0 \
        --benchmark_out="$dir/$3.json" --benchmark_out_format=json >"$dir/$3.log" 2>&1
}

# threshold BASE NEW: "PCT<TAB>why" for the gate from the pairs' measured noise
threshold() {
    "$JQ" -n --slurpfile A <("$JQ" -f plots/points.jq "$1") --slurpfile B <("$JQ" -f plots/points.jq "$2") \
        --argjson floor "$floor" --argjson k "$noise_k" -r '
      ($B[0] | map({(.id): .}) | add // {}) as $b
      | [$A[0][] | select($b[.id]) | {id, a: .cv, b: $b[.id].cv, reps: $b[.id].reps}] as $p
      | [$p[] | select(.a != null and .b != null) | . + {noise: ((.a * .a + .b * .b) | sqrt)}] as $known
      | ($known | max_by(.noise)) as $top
      | (if $top == null then 0 else $k * $top.noise * 100 end) as $derived
      | ([$floor, $derived] | max * 10 | ceil / 10) as $pct
      | "\($pct)\t" + "--max-slowdown \($pct)%: the larger of the floor \($floor)% and \($k) x the largest "
        + "repetition noise sqrt(cv_base^2 + cv_new^2) of the \($p | length) compared point(s), "
        + (if $top == null then "unknown (no pair has repetitions on both sides), so the floor decides"
           else "\($top.noise * 1000 | round / 10)% (\($top.id): cv \($top.a * 1000 | round / 10)% in the baseline, "
                + "\($top.b * 1000 | round / 10)% over \($top.reps) repetitions here) = \($derived * 10 | ceil / 10)%"
                + (if ($p | length) > ($known | length) then "; \(($p | length) - ($known | length)) pair(s) without a cv on a side" else "" end)
           end)
        + "; the floor: the 9B prefill drifts up to 1.5% between runs on one machine at the power limit "
        + "(bench/results/, 6e4d6be), more than its repetitions show, and the baseline ran on another machine of the model"'
}

gate() {
    [ -r "$sweep" ] || { say gate FAILED "no sweep $sweep (the bench stage makes it)"; rc=1; return; }
    command -v "$JQ" >/dev/null 2>&1 || { say gate FAILED "jq not found (tools/deps.sh installs it)"; rc=1; return; }
    local device slug base bdev t pct
    device=$("$JQ" -r '.context.device // (.context.devices // [] | first) // ""' "$sweep" 2>/dev/null)
    [ -n "$device" ] || { say gate FAILED "$sweep names no device (context.device)"; rc=1; return; }
    slug=$(tools/results-file.sh --slug "$device")
    base=${baseline:-$baselines/$slug.json}
    if [ ! -r "$base" ]; then
        say gate skipped "no baseline for $device ($base): the gate is skipped, not failed (bench/results/baseline/README.md adds one)"
        return
    fi
    bdev=$("$JQ" -r '.context.device // (.context.devices // [] | first) // ""' "$base" 2>/dev/null)
    if [ "$bdev" != "$device" ]; then
        say gate skipped "the baseline $base ran on $bdev, this run on $device: another board, the gate is skipped, not failed"
        return
    fi
    t=$(threshold "$base" "$sweep") || { say gate FAILED "cannot read the noise of $base or $sweep"; rc=1; return; }
    pct=$(printf '%s\n' "$t" | cut -f1)
    printf 'gate: %s\n' "$(printf '%s\n' "$t" | cut -f2-)" | tee "$dir/gate.txt"
    tools/bench-compare.sh --max-slowdown "$pct" --noise 2 "$base" "$sweep" >"$dir/compare.txt" 2>&1
    case $? in
    0) say gate passed "$(tail -1 "$dir/compare.txt")" ;;
    1) say gate FAILED "a slowdown past $pct% and the noise: $(grep -c REGRESSION "$dir/compare.txt") point(s) (compare.txt)"
       grep REGRESSION "$dir/compare.txt"; rc=1 ;;
    *) say gate FAILED "the comparison did not run: $(tail -1 "$dir/compare.txt")"; rc=1 ;;
    esac
}

for stage in "${stages[@]}"; do
    echo "== gpu-ci: $stage ($(date +%T))"
    case $stage in
    deps) if . tools/deps.sh >"$dir/deps.log" 2>&1; then say deps passed "$(tail -1 "$dir/deps.log")" # its PATH kept
          else say deps FAILED "tools/deps.sh: $(tail -1 "$dir/deps.log")"; exit 1; fi ;;
    build) if OUT=$dir tools/gpu-run.sh build; then say build passed "$build"
           else say build FAILED "build.log, configure.log"; exit 1; fi ;;
    test) ctest --version | head -1 >"$dir/gpu-tests.log"
          if ctest --test-dir "$build" -L gpu -j"$jobs" --output-on-failure --output-junit "$dir/junit-gpu.xml" \
              >>"$dir/gpu-tests.log" 2>&1; then
              say test passed "$(grep -E 'tests passed' "$dir/gpu-tests.log" | tail -1)"
          else
              say test FAILED "$(grep -E 'tests passed|tests failed' "$dir/gpu-tests.log" | tail -1) (gpu-tests.log, junit-gpu.xml)"
              rc=1
          fi ;;
    bench) ok=1
           bench_run bench_prefill "$prefill_filter" prefill || ok=0
           bench_run bench_kernels "$kernels_filter" kernels || ok=0
           if [ $ok = 1 ] && tools/bench-merge.sh -o "$dir/sweep.json" "$dir/prefill.json" "$dir/kernels.json"; then
               say bench passed "$("$JQ" '[.benchmarks[] | select(.aggregate_name == "median")] | length' "$dir/sweep.json") points x $reps repetitions (sweep.json)"
           else
               say bench FAILED "prefill.log, kernels.log"; rc=1
           fi ;;
    gate) gate ;;
    esac
done
echo "gpu-ci: $([ $rc = 0 ] && echo passed || echo FAILED); everything in $dir"
exit $rc
