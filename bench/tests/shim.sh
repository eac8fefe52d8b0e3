#!/bin/sh
# The shim through bench_fake (no GPU): names from the argument product (first
# axis outermost) with labelled axes; exact rate and pct_of_<ceiling> counters
# (repetitions' aggregates too); no counter for a ceiling never measured;
# skipped points reported; the context (ceiling, commit, shard, command); the
# progress lines on stderr (total after the filter; off with --q35_progress=0);
# the shim's flags refused when malformed and Google Benchmark's left alone.
#   bench/tests/shim.sh BENCH_FAKE SOURCE_DIR TMP_DIR
set -u
fake=$1 src=$2 tmp=$3
. "$src/tools/tests/lib.sh"
rm -rf "$tmp" && mkdir -p "$tmp"
run() { "$fake" --benchmark_min_time=0.01 "$@"; }

check "a full run" sh -c "'$fake' --benchmark_min_time=0.01 --benchmark_out='$tmp/all.json' --benchmark_out_format=json >'$tmp/all.out' 2>'$tmp/all.err'"
j=$tmp/all.json
jq_check "$j" '[.benchmarks[].name] == (["fake/path:f32/n:1","fake/path:f32/n:2","fake/path:f32/n:4","fake/path:f32/n:8","fake/path:f32/n:16","fake/path:flash/n:1","fake/path:flash/n:2","fake/path:flash/n:4","fake/path:flash/n:8","fake/path:flash/n:16","fake_skip/x:7","fake_skip/x:19","fake_prefill/shape:9b/quant:q4_k/attn:f32/gemm:f16/chunk:512/len:512","fake_prefill/shape:9b/quant:q4_k/attn:f32/gemm:f16/chunk:512/len:4096","fake_prefill/shape:9b/quant:q4_k/attn:flash/gemm:f16/chunk:512/len:512","fake_prefill/shape:9b/quant:q4_k/attn:flash/gemm:f16/chunk:512/len:4096","fake_none"] | map(. + "/manual_time"))' \
    "17 names, first axis outermost, labels for path (f32, flash) and the prefill axes, numbers for n, x, chunk, len"
jq_check "$j" '[.benchmarks[] | select(.name | startswith("fake/")) | (.name | capture("n:(?<n>[0-9]+)").n | tonumber) as $n | ((.pct_of_copy * $n / 50 - 1 | fabs) < 1e-12 and (.bytes * $n / 1e12 - 1 | fabs) < 1e-12 and (.real_time / $n - 1 | fabs) < 1e-12)] | length == 10 and all' \
    "bytes/s = 1e12/n and pct_of_copy = 50/n (1e9 bytes in n ms against 2e12 bytes/s; to 1e-12, the sum of manual times)"
jq_check "$j" '[.benchmarks[] | select(.name | startswith("fake/")) | .path_is_flash == (if (.name | contains("path:flash")) then 1 else 0 end) and .path_index == .path_is_flash] | all' \
    "q35_bench_arg and q35_bench_arg_label see the point's value and label"
jq_check "$j" '[.benchmarks[] | has("pct_of_sgemm")] | any | not' "no pct_of counter for a ceiling never measured"
jq_check "$j" '[.benchmarks[] | select(.name | startswith("fake_prefill/")) | (.name | capture("len:(?<n>[0-9]+)").n | tonumber / 1e4) as $s
    | ((.tokens_per_s / 1e4 - 1 | fabs) < 1e-12 and (.s_proj / (0.5 * $s) - 1 | fabs) < 1e-12 and (.s_scan / (0.2 * $s) - 1 | fabs) < 1e-12
       and (.s_attn / (0.2 * $s) - 1 | fabs) < 1e-12 and (.s_other / (0.1 * $s) - 1 | fabs) < 1e-12
       and (.proj_tflop_s / 600 - 1 | fabs) < 1e-12 and (.attn_tflop_s / 400 - 1 | fabs) < 1e-12)] | length == 4 and all' \
    "prefill counters: tokens_per_s a rate (1e4), q35_bench_phases per prefill (50/20/20/10 % of len/1e4 s), the projections' and attention's TFLOP/s (600, 400)"
jq_check "$j" '[.benchmarks[] | select(.name | test("^fake_(skip|none)")) | .error_occurred == true and (.error_message | startswith("skipped: this point cannot run"))] | length == 3 and all' \
    "skipped points are reported with their reason"
jq_check "$j" '.context | .ceiling_copy_bytes_per_s == "2.000000e+12" and .q35_shard == "0/1" and .q35_schema == "1" and (.git_describe | type == "string" and length > 0) and (.command | contains("bench_fake --benchmark_min_time=0.01"))' \
    "context: the ceiling, the shard, the schema, the commit, the command"
check "progress: one line per point on stderr, 1/17 .. 17/17" \
    [ "$(grep -c '^q35_bench: case [0-9]*/17 ' "$tmp/all.err")" = 17 ]
check "progress: the last line names the last point" grep -q '^q35_bench: case 17/17 fake_none (elapsed [0-9.]* s, about [0-9.]* s left)$' "$tmp/all.err"
check "progress: nothing on stdout" sh -c "! grep -q 'q35_bench: case' '$tmp/all.out'"

run --benchmark_filter=path:flash >/dev/null 2>"$tmp/flash.err"
check "progress counts the points the filter selects (5)" grep -q '^q35_bench: case 5/5 fake/path:flash/n:16 ' "$tmp/flash.err"
run --benchmark_filter=-fake_ --benchmark_list_tests=true >"$tmp/neg.out" 2>&1
check "a negative filter (-fake_): 10 points" [ "$(grep -c . "$tmp/neg.out")" = 10 ]
run --q35_progress=0 >/dev/null 2>"$tmp/quiet.err"
check "--q35_progress=0: no progress line" sh -c "! grep -q 'q35_bench: case' '$tmp/quiet.err'"

check "repetitions" sh -c "'$fake' --benchmark_min_time=0.01 --benchmark_repetitions=3 --benchmark_report_aggregates_only=true --benchmark_out='$tmp/rep.json' --benchmark_out_format=json >/dev/null 2>&1"
jq_check "$tmp/rep.json" '[.benchmarks[] | select(.run_type == "aggregate" and .aggregate_name == "median" and (.name | startswith("fake/path:f32/n:4/")))][0].pct_of_copy / 12.5 - 1 | fabs < 1e-12' \
    "the median of 3 repetitions carries pct_of_copy (12.5 at n:4)"

check "--device 3 and --device=3 are taken by the shim" sh -c "'$fake' --device 3 --device=3 --benchmark_list_tests=true >/dev/null 2>&1"
for bad in "--q35_shard=3/3" "--q35_shard=1" "--q35_shard=a/2" "--q35_shard=0/0" "--device=x" "--device=-1" "--device"; do
    "$fake" $bad --benchmark_list_tests=true >/dev/null 2>"$tmp/bad.err"
    rc=$?
    check "$bad refused (exit 2) with a message" sh -c "[ $rc = 2 ] && grep -q 'benchmark: --' '$tmp/bad.err'"
done
"$fake" --benchmark_frobnicate=1 >/dev/null 2>&1
check "an unknown --benchmark_ flag is Google Benchmark's to refuse (exit 1)" [ $? = 1 ]
finish
