#!/bin/sh
# tools/bench-merge.sh on two device fixtures (data/fixtures/bench): every entry
# kept in order with its own file's device, the contexts kept, merging
# associative, and a file that is not benchmark JSON refused.
#   tools/tests/bench-merge.sh SOURCE_DIR TMP_DIR
set -u
src=$1 tmp=$2
. "$src/tools/tests/lib.sh"
need_jq
rm -rf "$tmp" && mkdir -p "$tmp"
h=$src/data/fixtures/bench/h200-small.json a=$src/data/fixtures/bench/a100-small.json
merge=$src/tools/bench-merge.sh

check "merge of the two fixtures succeeds" "$merge" -o "$tmp/ha.json" "$h" "$a"
jq_check "$tmp/ha.json" '(.benchmarks | length) == 5' "5 entries: 3 of the H200 and 2 of the A100"
jq_check "$tmp/ha.json" '[.benchmarks[].device] == ["NVIDIA H200","NVIDIA H200","NVIDIA H200","NVIDIA A100-SXM4-80GB","NVIDIA A100-SXM4-80GB"]' \
    "each entry keeps its own file's device, in the order given"
jq_check "$tmp/ha.json" '[.benchmarks[].source] | unique == ["a100-small.json","h200-small.json"]' "each entry names its file"
jq_check "$tmp/ha.json" '.benchmarks[1] | .name == "delta_rule_scan/model:1/rows:4096/variant:1/manual_time_mean" and .FLOP == 1.28e13 and .real_time == 1.18' \
    "entries are unchanged otherwise (name, counters, time)"
jq_check "$tmp/ha.json" '.context.devices == ["NVIDIA A100-SXM4-80GB","NVIDIA H200"]' "the context lists both devices"
jq_check "$tmp/ha.json" '[.context.sources[] | [.device, .ceiling_copy_bytes_per_s, .source]] == [["NVIDIA H200","4.240000e+12","h200-small.json"],["NVIDIA A100-SXM4-80GB","1.550000e+12","a100-small.json"]]' \
    "the context keeps each file's context (ceilings included)"

# associativity: (h + a) + h == h + (a + h) == h + a + h
"$merge" -o "$tmp/hah1.json" "$tmp/ha.json" "$h"
"$merge" -o "$tmp/ah.json" "$a" "$h"
"$merge" -o "$tmp/hah2.json" "$h" "$tmp/ah.json"
"$merge" -o "$tmp/hah3.json" "$h" "$a" "$h"
check "merging is associative: (h+a)+h == h+(a+h)" cmp -s "$tmp/hah1.json" "$tmp/hah2.json"
check "merging is associative: (h+a)+h == h+a+h" cmp -s "$tmp/hah1.json" "$tmp/hah3.json"
jq_check "$tmp/hah1.json" '(.benchmarks | length) == 8 and (.context.sources | length) == 3' "a merged file merges as its sources"

echo '{"context": {}, "nothing": []}' >"$tmp/bad.json"
check "a file without a benchmarks array is refused" sh -c "! '$merge' '$h' '$tmp/bad.json' >/dev/null 2>'$tmp/err'"
check "the refusal names the file" grep -q "bad.json: not a benchmark JSON" "$tmp/err"
check "a missing file is refused" sh -c "! '$merge' '$tmp/absent.json' >/dev/null 2>&1"
check "-o writes nothing on failure" sh -c "! '$merge' -o '$tmp/none.json' '$tmp/bad.json' 2>/dev/null && [ ! -e '$tmp/none.json' ]"
finish
