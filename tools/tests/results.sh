#!/bin/sh
# The record a reader sees, checked on the CPU: README's headline table is the
# one tools/headline.sh writes from bench/results/index.tsv (and its decode
# table, --decode); the index is the
# one tools/results-file.sh --reindex writes from the run folders; every entry
# of bench/results/ sorts by date (a run folder <date>-<device>-<commit>/, else
# the layout's few names); every row of docs/STATUS.md's tables fits 200
# characters. Then the two tools on a scratch folder: a run filed from its JSON
# (folder, README, index lines), a big log gzipped, the headline from it, a newer run taking the
# points it measured and no others, an A/B run (--family prefill-ab) left out,
# --check failing on a changed table and passing after --write.
#   tools/tests/results.sh SOURCE_DIR TMP_DIR
set -u
src=$1 tmp=$2
. "$src/tools/tests/lib.sh"
need_jq
rm -rf "$tmp" && mkdir -p "$tmp"
file=$src/tools/results-file.sh
head=$src/tools/headline.sh
res=$src/bench/results
a53=$res/2026-12-06-h100-a53d6c0

# --- the repository's record
check "README's table is the one the index gives" "$head" --check "$src/README.md"
check "README's decode table is the one the index gives" "$head" --decode --check "$src/README.md"
check "README's 'Where it stands': the generated tables and at most 8 lines of prose" sh -c \
    "[ \$(awk '/^## Where it stands/ { f = 1; next } /^## / { f = 0 } /(headline|decode):begin/ { t = 1 }
          /(headline|decode):end/ { t = 0; next } f && !t && NF' '$src/README.md' | wc -l) -le 8 ]"
mkdir -p "$tmp/repo"
cp -R "$res"/. "$tmp/repo/"
check "the index is the one --reindex writes" sh -c "'$file' --results '$tmp/repo' --reindex >/dev/null &&
    cmp -s '$tmp/repo/index.tsv' '$res/index.tsv'"
odd=$(ls "$res" | grep -Ev '^([0-9]{4}-[01][0-9]-[0-3][0-9]-[a-z0-9]+-[0-9a-f]{7}|README\.md|SCHEMA\.md|index\.tsv|baseline|log)$' || true)
check "bench/results/ holds run folders and the layout's names only${odd:+ (not: $odd)}" [ -z "$odd" ]
check "the index names files that exist" sh -c "tail -n +2 '$res/index.tsv' | cut -f5 | while read -r f; do
    [ -f '$res'/\"\$f\" ] || { echo \"      missing: \$f\"; exit 1; }; done"
long=$(awk 'length > 200 && /^\|/ { print FILENAME ":" FNR ": " length " characters" }' "$src/docs/STATUS.md")
check "docs/STATUS.md's table rows fit 200 characters${long:+ (not: $long)}" [ -z "$long" ]

# --- filing a run, and its headline
r=$tmp/results
mkdir -p "$r"
check "a run filed from its JSON" sh -c "'$file' --results '$r' --commit a53d6c0-dirty --what 'The prefill.' \
    '$a53/h100-prefill-a53d6c0.json' '$a53/h100-peer-hf-a53d6c0.json' >'$tmp/file1.log' 2>&1"
run=$r/2026-12-06-h100-a53d6c0
check "  its folder: date and device from the JSON, the commit's 7 digits" [ -f "$run/h100-prefill-a53d6c0.json" ]
check "  its README names the device, the command and what it shows" sh -c "grep -q '^- device: NVIDIA H100 80GB HBM3' '$run/README.md' &&
    grep -q '^build/gpu/bench/bench_prefill --benchmark_filter=' '$run/README.md' && grep -q '^The prefill.' '$run/README.md'"
check "  the index: a header and a line a file" [ "$(wc -l <"$r/index.tsv")" -eq 3 ]
check "  the prefill's line: family and headline" grep -q "	prefill	2026-12-06-h100-a53d6c0/h100-prefill-a53d6c0.json	prefill/9b/q4_k/f16/flash/8192: 512 35.76k, 4096 40.71k, 16384 38.91k; " "$r/index.tsv"
check "  the peer's line" grep -q "	peer_hf	2026-12-06-h100-a53d6c0/h100-peer-hf-a53d6c0.json	peer_hf/9b/bf16: 512 7.95k, 4096 26.16k" "$r/index.tsv"
check "a decode run's headline: tokens/s at each cache length" sh -c "'$file' --results '$r' --commit dd9378e \
    '$res/2026-12-06-h100-dd9378e/h100-decode-dd9378e.json' >/dev/null 2>&1 &&
    grep -q '	decode/9b/q4_k: ctx 512 183.3, 4096 163.9, 16384 119.7\$' '$r/index.tsv'"
e8=$res/2026-12-07-h100-ebb8e64
mkdir -p "$tmp/dres"
check "the decode table: the fast path, the exact GEMVs, llama.cpp and the ratio" sh -c "'$file' --results '$tmp/dres' \
    --commit ebb8e64 '$e8/decode-q8.json' '$e8/decode.json' '$e8/decode-graph-off.json' '$e8/peer-llama-q4_k.json' \
    '$res/2026-12-06-h100-dd9378e/h100-decode-dd9378e.json' >/dev/null 2>&1 &&
    '$head' --results '$tmp/dres' --decode >'$tmp/dec.md' 2>&1 &&
    grep -qF '| H100, ours, fast path (8-bit activations) | 295.3 | 275.8 | 228.1 |' '$tmp/dec.md' &&
    grep -qF '| H100, ours, exact GEMVs | 249.2 | 236.4 | 201.4 |' '$tmp/dec.md' &&
    grep -qF '| H100, llama.cpp tg, same file | 248.9 | 245.0 | 230.6 |' '$tmp/dec.md' &&
    grep -qF '| H100, fast path / llama.cpp | 1.19x | 1.13x | 0.99x |' '$tmp/dec.md'"
check "  no graph (decode-graph-off.json) and no counters (dd9378e's file) left out" sh -c "! grep -qE '230.2|183.3' '$tmp/dec.md'"
awk 'BEGIN { for (i = 0; i < 4000; i++) print "a line of a GPU suite'"'"'s log, number " i }' >"$tmp/big.log"
printf 'small\n' >"$tmp/small.log"
check "a log past 60 KB filed gzipped, a small one as it is" sh -c "'$file' --results '$r' --commit a53d6c0 \
    --device h100 --date 2026-12-06 '$tmp/big.log' '$tmp/small.log' >/dev/null 2>&1 &&
    gzip -dc '$run/big.log.gz' | cmp -s - '$tmp/big.log' && [ ! -e '$run/big.log' ] && [ -f '$run/small.log' ] &&
    grep -q '/big.log.gz	' '$r/index.tsv' && grep -q 'big.log.gz' '$run/README.md'"
printf '{"cpu": [{}, {}], "gpu": [{}]}' >"$tmp/kld.json"
printf '{"other": 1}' >"$tmp/odd.json"
check "a KLD report's JSON and another JSON filed: named so in the index" sh -c "'$file' --results '$r' --commit a53d6c0 \
    --device h100 --date 2026-12-06 --family json '$tmp/kld.json' '$tmp/odd.json' >/dev/null 2>&1 &&
    grep -q '/kld.json	KLD report: 2 CPU rows, 1 GPU rows\$' '$r/index.tsv' &&
    grep -q '/odd.json	JSON, not a benchmark file\$' '$r/index.tsv'"
"$head" --results "$r" >"$tmp/head1.md" 2>&1
check "the headline: ours f16" grep -qF "| H100, ours, f16 GEMM | 35.76k | 40.71k | 38.91k |" "$tmp/head1.md"
check "  ours fp8" grep -qF "| H100, ours, fp8 GEMM (opt-in) | 50.30k | 59.54k | 56.66k |" "$tmp/head1.md"
check "  the peer and the ratio" sh -c "grep -qF '| H100, transformers + fla | 7.95k | 26.16k | 25.58k |' '$tmp/head1.md' &&
    grep -qF '| H100, f16 / transformers + fla | 4.50x | 1.56x | 1.52x |' '$tmp/head1.md'"
check "  the device, the date and the commit under it" grep -qF "H100: NVIDIA H100 80GB HBM3, 2026-12-06, commits 512-16k a53d6c0." "$tmp/head1.md"

# a newer run of 4k alone (twice as fast), then a newer A/B run of every point (left out)
"$JQ" '.context.date = "2026-12-07T00:00:00+00:00"
       | .benchmarks |= map(select(.name | test("gemm:f16/.*len:4096/")) | .tokens_per_s *= 2)' \
    "$a53/h100-prefill-a53d6c0.json" >"$tmp/h100-prefill-4k.json"
"$JQ" '.context.date = "2026-12-08T00:00:00+00:00" | .benchmarks |= map(.tokens_per_s *= 10)' \
    "$a53/h100-prefill-a53d6c0.json" >"$tmp/h100-prefill-ab.json"
check "a newer run filed" sh -c "'$file' --results '$r' --commit abcdef1 '$tmp/h100-prefill-4k.json' >/dev/null 2>&1"
check "an A/B run filed as prefill-ab" sh -c "'$file' --results '$r' --commit 1234567 --family prefill-ab '$tmp/h100-prefill-ab.json' >/dev/null 2>&1"
check "  the index sorted by date" sh -c "tail -n +2 '$r/index.tsv' | cut -f1 | sort -c"
"$head" --results "$r" >"$tmp/head2.md" 2>&1
check "the headline takes the newer run's 4k, keeps the rest" grep -qF "| H100, ours, f16 GEMM | 35.76k | 81.42k | 38.91k |" "$tmp/head2.md"
check "  and names its commit" grep -qF "commits 512 a53d6c0, 4k abcdef1 / a53d6c0, 16k a53d6c0." "$tmp/head2.md"
check "  the A/B run is left out" sh -c "! grep -q '357.6' '$tmp/head2.md'"
check "--reindex keeps the families as filed" sh -c "cp '$r/index.tsv' '$tmp/index1' && '$file' --results '$r' --reindex >/dev/null &&
    cmp -s '$tmp/index1' '$r/index.tsv'"

# --check and --write
printf '# t\n\n<!-- headline:begin -->\n' >"$tmp/R.md"
cat "$tmp/head1.md" >>"$tmp/R.md"
printf '<!-- headline:end -->\n\nafter\n' >>"$tmp/R.md"
check "--check: a table the index no longer gives fails" exit_is 1 "$tmp/check1.log" "$head" --results "$r" --check "$tmp/R.md"
check "  showing the difference" grep -qF "81.42k" "$tmp/check1.log"
check "--write, then --check passes" sh -c "'$head' --results '$r' --write '$tmp/R.md' >/dev/null && '$head' --results '$r' --check '$tmp/R.md' >/dev/null"
check "  the text around the table kept" sh -c "head -3 '$tmp/R.md' | grep -q '^# t' && tail -1 '$tmp/R.md' | grep -q '^after'"
check "--check without the markers: exit 2" exit_is 2 "$tmp/check2.log" "$head" --results "$r" --check "$tmp/head1.md"
finish
