#!/bin/sh
# The main job, on the built-in default model (the tiny shape, q4_k_m, seed 1,
# generated in memory):
#   1. build (installing what is missing);
#   2. `q35 run`: one prefill, on the GPU when one is usable (the float64 CPU
#      reference otherwise), with its time per op and tokens/s;
#   3. the parity suites of the default model: the reference against
#      transformers' golden logits and against its own per-token steps, and,
#      on a GPU, the CUDA model batched against per-token (bitwise in the
#      deterministic mode), against the reference and against the golden logits;
#   4. on a GPU, a short benchmark sweep of the default model (every attention
#      and GEMM path, 512 and 4096 tokens, and a decode step) into a results
#      JSON, and its plots;
#   5. a summary table: the paths and their tokens/s, and each suite's verdict.
# Everything lands in build/main/. Without a GPU the GPU parts are skipped, and
# say so, and the job still exits 0 when the CPU parts pass. Extra arguments go
# to `q35 run` (e.g. tools/main.sh --random 256 --chunk-rows 64).
set -e
cd "$(dirname "$0")/.."
. tools/deps.sh
cmake --preset default >/dev/null
cmake --build --preset default
out=build/main
rm -rf "$out" && mkdir -p "$out"
bin=build/default

echo "== q35 run"
"$bin"/cli/q35 run "$@" | tee "$out/run.txt"

echo "== parity of the default model"
suites='^(test_golden|test_ref_model|test_cuda_model_batched|test_cuda_model_reference|test_cuda_model_golden)$'
parity_rc=0
ctest --test-dir "$bin" -R "$suites" --output-on-failure >"$out/parity.log" 2>&1 || parity_rc=1
grep -E "Test +#" "$out/parity.log" || true

echo "== benchmark sweep of the default model"
gpu=yes
if [ -x "$bin/bench/bench_prefill" ]; then
    "$bin"/bench/bench_prefill --benchmark_filter='shape:tiny/' --q35_progress=0 \
        --benchmark_out="$out/results.json" --benchmark_out_format=json >"$out/bench.log" 2>&1 || gpu=no
else
    echo "bench_prefill was not built (no CUDA or no Google Benchmark)" >"$out/bench.log"
    gpu=no
fi
if [ $gpu = yes ] && command -v gnuplot >/dev/null; then
    plots/plot.sh -o "$out/plots" "$out/results.json" || true
elif [ $gpu = yes ]; then
    echo "plots skipped: no gnuplot (tools/deps.sh installs gnuplot-nox)"
else
    echo "GPU parts skipped: $(grep -m1 -E 'benchmark:|not built' "$out/bench.log" || echo 'no usable GPU')"
fi

echo "== summary (build/main/)"
printf '%-58s %s\n' "path" "tokens/s"
grep -E "^path|tokens/s" "$out/run.txt" | sed 's/^/  q35 run: /' || true
if [ $gpu = yes ] && ! command -v jq >/dev/null; then
    echo "  (no jq: the sweep's tokens/s are in $out/results.json)"
elif [ $gpu = yes ]; then
    jq -r '.benchmarks[] | select(.run_type != "aggregate" or .aggregate_name == "median")
           | select(.tokens_per_s != null)
           | [(.name | sub("/manual_time$"; "")), (.tokens_per_s | floor)] | @tsv' "$out/results.json" |
        while IFS="$(printf '\t')" read -r name tps; do printf '%-58s %s\n' "$name" "$tps"; done
    grep -E '"error_message"' "$out/results.json" | sed 's/^ */  skipped: /' || true
fi
printf '%-58s %s\n' "parity suite" "verdict"
sed -n 's/^ *[0-9]*\/[0-9]* Test *#[0-9]*: \([a-z_0-9]*\) [ .*]*\(Passed\|Failed\|Skipped\|Not Run\).*/\1 \2/p' "$out/parity.log" |
    while read -r name verdict; do
        case $verdict in Not*|Skipped) verdict="skipped (no GPU)" ;; esac
        printf '%-58s %s\n' "$name" "$verdict"
    done
[ $parity_rc -eq 0 ] || { echo "parity FAILED: see $out/parity.log" >&2; exit 1; }
echo "parity: every suite that ran passed"
