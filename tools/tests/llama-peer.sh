#!/bin/sh
# bench/llama_peer.py on a llama-bench JSON (trimmed from an H100 run,
# bench/results/2026-12-06-h100-dd9378e/): a prompt test becomes a prefill
# point, a generation test at a depth the decode step at that ctx (the time of
# one token), each sample a repetition; a test of neither kind is refused.
#   tools/tests/llama-peer.sh SOURCE_DIR TMP_DIR
set -u
src=$1 tmp=$2
. "$src/tools/tests/lib.sh"
need_jq
rm -rf "$tmp" && mkdir -p "$tmp"
command -v python3 >/dev/null 2>&1 || { echo "SKIP  python3 not found (tools/deps.sh installs it)"; exit 77; }
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
finish
