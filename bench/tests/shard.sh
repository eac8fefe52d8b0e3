#!/bin/sh
# --q35_shard=i/n through bench_fake (no GPU): the shards' lists are disjoint,
# their union is the full set, shard i holds exactly the points at positions
# i, i+n, ... of the full list (stable order), a filter is applied before the
# split (so shards stay even), and the shards' JSON merged (tools/bench-merge.sh)
# hold every point once with its counters.
#   bench/tests/shard.sh BENCH_FAKE SOURCE_DIR TMP_DIR
set -u
fake=$1 src=$2 tmp=$3
. "$src/tools/tests/lib.sh"
rm -rf "$tmp" && mkdir -p "$tmp"
list() { "$fake" --benchmark_list_tests=true "$@" 2>/dev/null; }

list >"$tmp/full"
check "the full list has 17 points" [ "$(wc -l <"$tmp/full")" = 17 ]
for i in 0 1 2; do
    list --q35_shard=$i/3 >"$tmp/s$i"
    awk -v i=$i 'NR % 3 == (i + 1) % 3' "$tmp/full" >"$tmp/want$i"
    check "shard $i/3 is points $i, $i+3, ... of the full list, in order ($(wc -l <"$tmp/s$i") points)" cmp -s "$tmp/s$i" "$tmp/want$i"
done
cat "$tmp/s0" "$tmp/s1" "$tmp/s2" | sort >"$tmp/union"
sort "$tmp/full" >"$tmp/full.sorted"
check "the union of the three shards is the full set" cmp -s "$tmp/union" "$tmp/full.sorted"
check "no point is in two shards" [ "$(sort -u "$tmp/union" | wc -l)" = 17 ]
check "sizes 6, 6, 5" [ "$(wc -l <"$tmp/s0")$(wc -l <"$tmp/s1")$(wc -l <"$tmp/s2")" = 665 ]
list --q35_shard=0/1 >"$tmp/one"
check "shard 0/1 is the full list" cmp -s "$tmp/one" "$tmp/full"

list --benchmark_filter=path:flash --q35_shard=0/2 >"$tmp/f0"
list --benchmark_filter=path:flash --q35_shard=1/2 >"$tmp/f1"
check "a filter first, then the split: 5 flash points as 3 + 2" \
    [ "$(wc -l <"$tmp/f0")$(wc -l <"$tmp/f1")$(cat "$tmp/f0" "$tmp/f1" | grep -c path:flash)" = 325 ]

for i in 0 1 2; do
    "$fake" --benchmark_min_time=0.01 --q35_progress=0 --q35_shard=$i/3 --benchmark_out="$tmp/shard-$i.json" \
        --benchmark_out_format=json >/dev/null 2>&1
done
check "the three shards' JSON merge" "$src/tools/bench-merge.sh" -o "$tmp/merged.json" "$tmp/shard-0.json" "$tmp/shard-1.json" "$tmp/shard-2.json"
sort "$tmp/full" >"$tmp/full.names" # listed names end in /manual_time, as in the JSON
"$JQ" -r '.benchmarks[].name' "$tmp/merged.json" | sort >"$tmp/merged.names"
check "the merge holds every point exactly once" cmp -s "$tmp/merged.names" "$tmp/full.names"
jq_check "$tmp/merged.json" '[.context.sources[].q35_shard] == ["0/3","1/3","2/3"]' "the merge keeps each shard's context"
jq_check "$tmp/merged.json" '[.benchmarks[] | select(.name == "fake/path:flash/n:8/manual_time")][0] | (.pct_of_copy / 6.25 - 1 | fabs) < 1e-12' \
    "counters survive the merge (pct_of_copy 6.25 at n:8)"
finish
