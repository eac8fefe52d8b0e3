#!/bin/sh
# bench/llama_peer.py on a llama-bench JSON (trimmed from an H100 run,
# bench/results/2026-12-06-h100-dd9378e/): a prompt test becomes a prefill
# point, a generation test at a depth the decode step at that ctx (the time of
# one token), each sample a repetition; a test of neither kind is refused.
# bench/llama_ops.py on a list of llama.cpp's graph ops (bench/llama_graph_ops.cpp)
# and test-backend-ops' SQL for it (both trimmed from a CPU run on a 0.8b Q4_K
# file at 64 rows, where one op of each graph could not be built): each op's
# time with its count and count x time, the kinds' sums ranked, the op with no
# result reported as not timed; results that are not of the list are refused.
#   tools/tests/llama-peer.sh SOURCE_DIR TMP_DIR
set -u
src=$1 tmp=$2
. "$src/tools/tests/lib.sh"
need_jq
rm -rf "$tmp" && mkdir -p "$tmp"
need_python3
in=$src/tools/tests/data/llama-bench.json
check "converts" python3 "$src/bench/llama_peer.py" --shape 9b --quant q4_k -o "$tmp/peer.json" "$in"
jq_check "$tmp/peer.json" '[.benchmarks[] | select(.aggregate_name == "median") | .name] == ["peer_llama/prefill/shape:9b/quant:q4_k/len:512/manual_time_median", "peer_llama/prefill/shape:9b/quant:q4_k/len:4096/manual_time_median", "peer_llama/decode/shape:9b/quant:q4_k/ctx:4096/manual_time_median"]' \
    "the points: two prefills, the decode step at ctx 4096"
jq_check "$tmp/peer.json" '.benchmarks[] | select(.name == "peer_llama/prefill/shape:9b/quant:q4_k/len:4096/manual_time_median") | (.tokens_per_s / 8929.985658 - 1 | fabs) < 1e-6 and .repetitions == 2' \
    "a prefill's tokens/s is llama-bench's (its mean over the 2 samples, as avg_ts), 2 repetitions"
jq_check "$tmp/peer.json" '.benchmarks[] | select(.name == "peer_llama/decode/shape:9b/quant:q4_k/ctx:4096/manual_time_median") | (.tokens_per_s / 239.396347 - 1 | fabs) < 1e-6 and .real_time > 4 and .real_time < 4.3' \
    "a decode step's time is one token's (4.18 ms), its rate llama-bench's tg rate"
jq_check "$tmp/peer.json" '.context.peer_llama_commit == "0c1e570" and (.context.peer_llama_settings | test("-fa 1 -ngl 99 -ub 2048 -b 8192")) and .context.device == "NVIDIA H100 80GB HBM3"' \
    "the context names llama.cpp's commit, its settings and the device"
printf '[{"n_prompt": 512, "n_gen": 128, "n_depth": 0, "samples_ns": [1]}]\n' >"$tmp/pg.json"
check "a pp+tg test is refused" sh -c "! python3 '$src/bench/llama_peer.py' --shape 9b --quant q4_k '$tmp/pg.json' >/dev/null 2>&1"

# bench/llama_ops.py
g=$src/tools/tests/data/llama-graph-ops.txt sql=$src/tools/tests/data/llama-ops.sql
run() { python3 "$src/bench/llama_ops.py" --shape 0.8b --quant q4_k --rows 64 "$@"; }
check "converts" run --graph "$g" -o "$tmp/ops.json" --table "$tmp/ops.md" "$sql"
b=peer_llama_ops/shape:0.8b/quant:q4_k/rows:64
jq_check "$tmp/ops.json" "[.benchmarks[] | select(.name | test(\"/op:\"))] | length == 18" \
    "18 ops timed: 10 list rows a graph, one of each not built"
jq_check "$tmp/ops.json" ".benchmarks[] | select(.name == \"$b/graph:pp/op:MUL_MAT/node:node_13/manual_time\") | .count == 18 and (.real_time / 8.023824265 - 1 | fabs) < 1e-9 and (.graph_ms / .real_time - 18 | fabs) < 1e-9" \
    "an op: its one run's time (test-backend-ops' us/run), its count, count x time"
jq_check "$tmp/ops.json" ".benchmarks[] | select(.name == \"$b/graph:tg/op:MUL_MAT/node:node_13/manual_time\") | (.real_time / 0.205231589 - 1 | fabs) < 1e-9" \
    "the same node in the decode graph takes the decode graph's result (matched in order)"
jq_check "$tmp/ops.json" "[.benchmarks[] | select(.name | test(\"graph:pp/kind:\")) | .name | sub(\".*kind:\"; \"\") | sub(\"/manual_time\"; \"\")] == [\"MUL_MAT_q4_K\", \"CONCAT\", \"RMS_NORM\", \"MUL\", \"CPY\", \"SCALE\", \"GET_ROWS_f32\", \"GET_ROWS_q4_K\"]" \
    "the kinds ranked by their share (MUL_MAT and GET_ROWS by the weight's type)"
jq_check "$tmp/ops.json" "([.benchmarks[] | select(.name | test(\"graph:pp/op:\")) | .graph_ms] | add) as \$s | [.benchmarks[] | select(.name | test(\"graph:pp/kind:\")) | .real_time] | add | (. / \$s - 1 | fabs) < 1e-9" \
    "the kinds' sums add up to the ops'"
check "  the table names the op not timed, in each graph" sh -c "[ \$(grep -c 'not timed (1: .*cache_r_l0_(view)_(copy_of_)' '$tmp/ops.md') = 2 ]"
check "  the table's sum row" grep -q '^| \*\*sum\*\* | 207 | \*\*167.667\*\* | | |$' "$tmp/ops.md"
jq_check "$tmp/ops.json" ".benchmarks[] | select(.name == \"$b/graph:tg/op:MUL_MAT/node:node_13/manual_time\") | (.bytes / (3484 * 1024 / 0.205231589e-3) - 1 | fabs) < 1e-9" \
    "  an op's bytes/s: test-backend-ops' size of the op (3484 kB) over its time"
check "  the table's GB/s of a decode step's MUL_MAT kind, and none for the others" sh -c "grep -q '^| MUL_MAT q4_K | 18 | 3.694 | 78.9 % | 17.4 |$' '$tmp/ops.md' && grep -q '^| CONCAT | 18 | 0.605 | 12.9 % | - |$' '$tmp/ops.md'"
sed 's/node_13/node_99/' "$sql" >"$tmp/other.sql"
check "results for a node not in the list: refused" sh -c "! python3 '$src/bench/llama_ops.py' --shape 0.8b --quant q4_k --rows 64 --graph '$g' -o '$tmp/x.json' '$tmp/other.sql' 2>'$tmp/other.err'"
check "  saying which" grep -q 'node_99 (MUL_MAT).*matches no later row' "$tmp/other.err"
: >"$tmp/empty.sql"
check "no results: refused" sh -c "! python3 '$src/bench/llama_ops.py' --shape 0.8b --quant q4_k --rows 64 --graph '$g' '$tmp/empty.sql' >/dev/null 2>&1"
echo "pp 1 40 0" >"$tmp/bad.txt"
check "a list that is not llama_graph_ops.cpp's: refused" sh -c "! python3 '$src/bench/llama_ops.py' --shape 0.8b --quant q4_k --rows 64 --graph '$tmp/bad.txt' '$sql' >/dev/null 2>&1"
# bench/ops_beside.py: ours (a q35 run log's tables) beside llama_ops.py's kinds
ours=$src/tools/tests/data/q35-run-decode.log
check "ops beside: converts" sh -c "python3 '$src/bench/ops_beside.py' --ours '$ours' --llama '$tmp/ops.json' -o '$tmp/beside.md'"
check "  a prefill's groups: proj and tail the projections, beside MUL_MAT" grep -q '^| projections | 6.500 | 144.429 | 0.05x |$' "$tmp/beside.md"
check "  the totals: ours the table's, llama.cpp's the sum of its kinds" grep -q '^| \*\*total\*\* | \*\*10.000\*\* | \*\*167.667\*\* | 0.06x |$' "$tmp/beside.md"
check "  a decode step: the steps' table over their count (4)" sh -c "grep -q '^| attention | 1.000 | 0.000 | - |$' '$tmp/beside.md' && grep -q '^| \*\*total\*\* | \*\*5.000\*\* | \*\*4.680\*\* | 1.07x |$' '$tmp/beside.md'"
check "  the ungapped: our untimed time its own row" grep -q '^| gaps | 0.500 | 0.000 | - |$' "$tmp/beside.md"
sed '/^timed decode/,$d' "$ours" >"$tmp/nodecode.log"
check "a log without the decode table: refused, naming it" sh -c "! python3 '$src/bench/ops_beside.py' --ours '$tmp/nodecode.log' --llama '$tmp/ops.json' 2>'$tmp/nd.err' && grep -q 'no table .timed decode' '$tmp/nd.err'"
sed 's/^prompt  64 tokens/prompt  65 tokens/' "$ours" >"$tmp/rows65.log"
check "a log at other rows than the JSON's: refused" sh -c "! python3 '$src/bench/ops_beside.py' --ours '$tmp/rows65.log' --llama '$tmp/ops.json' 2>'$tmp/r.err' && grep -q 'no pp kinds at rows 65' '$tmp/r.err'"
finish
