#!/bin/sh
# tools/sweep.sh with bench_fake standing in for a GPU benchmark (the shim takes
# --device and ignores it without a GPU): one process per "GPU", each with its
# own --device and shard, merged into one file holding every point once; a
# host's share of a multi-host sweep (--shards, --first); refusals; a failing
# shard makes the sweep fail and shows its log.
#   bench/tests/sweep.sh BENCH_FAKE SOURCE_DIR TMP_DIR
set -u
fake=$1 src=$2 tmp=$3
. "$src/tools/tests/lib.sh"
rm -rf "$tmp" && mkdir -p "$tmp"
sweep=$src/tools/sweep.sh
"$fake" --benchmark_list_tests=true 2>/dev/null >"$tmp/full" # names end in /manual_time, as in the JSON

check "a sweep over 3 GPUs" sh -c "'$sweep' --gpus 3 -o '$tmp/m.json' --dir '$tmp/d' -- '$fake' --benchmark_min_time=0.01 >'$tmp/sweep.log' 2>&1"
"$JQ" -r '.benchmarks[].name' "$tmp/m.json" | sort >"$tmp/got"
sort "$tmp/full" >"$tmp/want"
check "the merged sweep holds every point exactly once" cmp -s "$tmp/got" "$tmp/want"
jq_check "$tmp/m.json" '[.context.sources[] | . as $c | [.q35_shard, (.command | contains("--device " + ($c.q35_shard | split("/")[0]) + " "))]] == [["0/3",true],["1/3",true],["2/3",true]]' \
    "process i ran shard i/3 with --device i"
check "each shard kept its log" [ -s "$tmp/d/shard-0.log" -a -s "$tmp/d/shard-1.log" -a -s "$tmp/d/shard-2.log" ]

check "a host's share: devices 4,6 as shards 2, 3 of 4" sh -c "'$sweep' --devices 4,6 --shards 4 --first 2 -o '$tmp/part.json' --dir '$tmp/p' -- '$fake' --benchmark_min_time=0.01 >/dev/null 2>&1"
awk 'NR % 4 == 3 || NR % 4 == 0' "$tmp/full" | sort >"$tmp/want23"
"$JQ" -r '.benchmarks[].name' "$tmp/part.json" | sort >"$tmp/got23"
check "it holds the points at positions 2, 3 modulo 4" cmp -s "$tmp/got23" "$tmp/want23"
jq_check "$tmp/part.json" '[.context.sources[] | . as $c | [.q35_shard, (.command | contains(if $c.q35_shard == "2/4" then "--device 4 " else "--device 6 " end))]] == [["2/4",true],["3/4",true]]' \
    "shard 2/4 on device 4, shard 3/4 on device 6"

check "shards that do not fit are refused" sh -c "! '$sweep' --gpus 2 --shards 3 --first 2 -- '$fake' >/dev/null 2>&1"
check "a sweep without a GPU count or device list is refused where nvidia-smi finds none" \
    sh -c "command -v nvidia-smi >/dev/null || ! CUDA_VISIBLE_DEVICES= '$sweep' -- '$fake' >/dev/null 2>&1"
"$sweep" --gpus 2 -o "$tmp/bad.json" --dir "$tmp/b" -- "$fake" --q35_shard=9/9 >"$tmp/bad.log" 2>&1
rc=$?
check "a failing shard fails the sweep (exit $rc)" [ $rc != 0 ]
check "and its log is shown" grep -q "shard 0 failed" "$tmp/bad.log"
finish
