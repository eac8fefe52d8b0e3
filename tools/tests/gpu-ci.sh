#!/bin/sh
# tools/gpu-ci.sh without a GPU: --help and its refusals; its gate stage on
# sweeps made from bench/results/baseline/h100.json (the baseline's prefill
# points at 512 and 4096, times scaled): the baseline found by the device's
# slug, the slowdown threshold derived from the repetitions' noise and said,
# the exit code of a slowdown past it (1) and within it (0), the floor, a sweep
# without repetitions, and the gate skipped, exit 0, where the device has no
# baseline or the baseline is of another board; the workflow's gpu job runs it.
#   tools/tests/gpu-ci.sh SOURCE_DIR TMP_DIR
set -u
src=$1 tmp=$2
. "$src/tools/tests/lib.sh"
need_jq
rm -rf "$tmp" && mkdir -p "$tmp"
ci=$src/tools/gpu-ci.sh
base=$src/bench/results/baseline/h100.json

# sweep OUT SCALE [CV]: the baseline's f16 points at 512 and 4096, times x SCALE, the cv aggregate CV if given
sweep() {
    "$JQ" --argjson s "$2" --argjson cv "${3:-null}" '.benchmarks |= map(select(.name | test("gemm:f16/.*len:(512|4096)/"))
        | if .aggregate_name == "cv" then (if $cv then .real_time = $cv | .cpu_time = $cv else . end)
          elif .aggregate_name == "stddev" then . else .real_time *= $s | .cpu_time *= $s end)' "$base" >"$1"
}
gate() { # gate WANT NAME SWEEP [ARGS...]: the gate stage on SWEEP into $tmp/NAME/, exit WANT
    want=$1 name=$2 sw=$3
    shift 3
    exit_is "$want" "$tmp/$name.log" "$ci" -o "$tmp/$name" --sweep "$sw" "$@" gate
}

check "--help: exit 0, the stages and the gate's rule" sh -c "'$ci' --help >'$tmp/help' && grep -q '^  gate ' '$tmp/help' &&
    grep -q 'sqrt(cv_base^2 + cv_new^2)' '$tmp/help' && grep -q 'no failure' '$tmp/help'"
check "an unknown argument: exit 2" exit_is 2 "$tmp/usage.log" "$ci" -o "$tmp/u" nosuchstage
check "--reps 0: exit 2" exit_is 2 "$tmp/usage2.log" "$ci" -o "$tmp/u" --reps 0 gate
check "--jobs x: exit 2, naming it" sh -c "! '$ci' -o '$tmp/u' --jobs x gate 2>'$tmp/usage3.log'; grep -q \"^gpu-ci: --jobs wants a count, got 'x'\" '$tmp/usage3.log'"

sweep "$tmp/same.json" 1.02
check "2% slower, cv 2% a side: exit 0" gate 0 same "$tmp/same.json"
check "  the baseline found by the device's slug" grep -q "A = $base (NVIDIA H100 80GB HBM3" "$tmp/same/compare.txt"
check "  the threshold: 3 x the noise 2.8% of len:512 = 8.5%, said with its reasons" grep -q \
    "^gate: --max-slowdown 8.5%: the larger of the floor 5% and 3 x the largest repetition noise .* 2.8% (prefill/shape:9b/quant:q4_k/gemm:f16/attn:flash/chunk:8192/len:512: .* = 8.5%; the floor: " "$tmp/same/gate.txt"
check "  summary.txt: gate passed" grep -q "^gate   passed   bench-compare: 2 compared" "$tmp/same/summary.txt"
sweep "$tmp/slow.json" 1.2
check "20% slower: exit 1" gate 1 slow "$tmp/slow.json"
check "  both points a REGRESSION in compare.txt" [ "$(grep -c REGRESSION "$tmp/slow/compare.txt")" -eq 2 ]
check "  summary.txt: gate FAILED" grep -q "^gate   FAILED   a slowdown past 8.5% and the noise: 2 point(s)" "$tmp/slow/summary.txt"
check "20% slower, --floor 25: exit 0" gate 0 floor "$tmp/slow.json" --floor 25%
check "  the floor decides: 25%" grep -q "^gate: --max-slowdown 25%: the larger of the floor 25%" "$tmp/floor/gate.txt"
sweep "$tmp/slow12.json" 1.12
check "12% slower, cv 2%: past 8.5%, exit 1" gate 1 slow12 "$tmp/slow12.json"
sweep "$tmp/noisy12.json" 1.12 0.05
check "12% slower, cv 5% here: the noise 5.4% sets 16.2%, exit 0" gate 0 noisy12 "$tmp/noisy12.json"
check "  its threshold" grep -q "^gate: --max-slowdown 16.2%: .* 5.4% (" "$tmp/noisy12/gate.txt"
"$JQ" '.benchmarks |= map(select(.aggregate_name == "median") | del(.run_type, .aggregate_name))' "$tmp/slow.json" >"$tmp/once.json"
check "20% slower, one repetition (no cv): the floor alone, exit 1" gate 1 once "$tmp/once.json"
check "  says the noise is unknown" grep -q "^gate: --max-slowdown 5%: .*unknown (no pair has repetitions on both sides), so the floor decides" "$tmp/once/gate.txt"
"$JQ" '.context.device = "NVIDIA A100-SXM4-80GB"' "$tmp/slow.json" >"$tmp/a100.json"
check "a device without a baseline, 20% slower: exit 0" gate 0 a100 "$tmp/a100.json"
check "  the gate skipped, saying so" grep -q "^gate   skipped  no baseline for NVIDIA A100-SXM4-80GB (.*/bench/results/baseline/a100.json): the gate is skipped, not failed" "$tmp/a100/summary.txt"
check "  no comparison ran" [ ! -f "$tmp/a100/compare.txt" ]
"$JQ" '.context.device = "NVIDIA H100 PCIe"' "$tmp/slow.json" >"$tmp/pcie.json"
check "another board of the slug (H100 PCIe against the H100 SXM baseline): skipped, exit 0" gate 0 pcie "$tmp/pcie.json"
check "  saying which boards" grep -q "ran on NVIDIA H100 80GB HBM3, this run on NVIDIA H100 PCIe: another board" "$tmp/pcie/summary.txt"
mkdir -p "$tmp/bases" && cp "$base" "$tmp/bases/a100.json"
check "--baselines DIR: a100.json found there (and refused as another board)" gate 0 bases "$tmp/a100.json" --baselines "$tmp/bases"
check "  (its line)" grep -q "the baseline $tmp/bases/a100.json ran on NVIDIA H100 80GB HBM3" "$tmp/bases/summary.txt"
check "--baseline FILE: that file, exit 1 at 20%" gate 1 named "$tmp/slow.json" --baseline "$base"
check "no sweep: exit 1, saying so" gate 1 nosweep "$tmp/absent.json"
check "  (its line)" grep -q "^gate   FAILED   no sweep $tmp/absent.json" "$tmp/nosweep/summary.txt"
check "OUT names the folder when -o is not given" sh -c "OUT='$tmp/env' '$ci' --sweep '$tmp/same.json' gate >/dev/null && [ -f '$tmp/env/gate.txt' ]"

wf=$src/.github/workflows/ci.yml
check "the workflow's gpu job: a self-hosted gpu runner, tools/gpu-ci.sh, its folder and JUnit uploaded" sh -c "
    grep -q 'runs-on: \[self-hosted, gpu\]' '$wf' && grep -q 'run: tools/gpu-ci.sh -o \"\$OUT\"' '$wf' &&
    grep -q 'path: out/gpu-ci/$' '$wf' && grep -q 'path: out/gpu-ci/junit-gpu.xml' '$wf' && grep -q 'run: tools/test.sh' '$wf'"
finish
