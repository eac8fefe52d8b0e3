#!/bin/sh
# The plots target (plots/plot.sh through `cmake --build --target plots`) on
# the CPU: on the H200 kernel results only the roofline can be drawn and every
# prefill figure is skipped with a message; on the synthetic prefill-sweep JSON
# (data/fixtures/bench/prefill-synthetic.json: two devices, every future name)
# all six figures are drawn; two merged device fixtures give the devices
# figure from the benchmarks they share; without a file the newest under
# bench/results/ is read. Each figure: a PNG (its signature) and an SVG, non-empty.
#   tools/tests/plots.sh SOURCE_DIR BUILD_DIR TMP_DIR
set -u
src=$1 build=$2 tmp=$3
. "$src/tools/tests/lib.sh"
command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1 || { echo "SKIP  gnuplot not found (tools/deps.sh installs gnuplot-nox)"; exit 77; }
rm -rf "$tmp" && mkdir -p "$tmp"
figures="prefill_tokens_per_s prefill_chunk_rows prefill_time_split attention_f32_vs_flash roofline devices"

# target RESULTS OUTDIR LOG: the plots target on RESULTS (empty: the default) into OUTDIR
target() {
    Q35_PLOTS_RESULTS=$1 Q35_PLOTS_OUT=$2 cmake --build "$build" --target plots >"$3" 2>&1
}
# drawn DIR NAME: both files there, non-empty, a PNG and an SVG
drawn() {
    [ -s "$1/$2.png" ] && [ -s "$1/$2.svg" ] && [ "$(head -c 8 "$1/$2.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
        grep -q "<svg" "$1/$2.svg"
}

check "the target on the H200 kernel results" target "$src/bench/results/h200-kernels-37b483d.json" "$tmp/kernels" "$tmp/kernels.log"
check "  the roofline is drawn (PNG and SVG)" drawn "$tmp/kernels" roofline
for f in prefill_tokens_per_s prefill_chunk_rows prefill_time_split attention_f32_vs_flash devices; do
    check "  $f is skipped, saying so" sh -c "grep -q 'plots: skipped $f: ' '$tmp/kernels.log' && [ ! -e '$tmp/kernels/$f.png' ]"
done

check "the target on the synthetic prefill sweep" target "$src/data/fixtures/bench/prefill-synthetic.json" "$tmp/synthetic" "$tmp/synthetic.log"
for f in $figures; do
    check "  $f is drawn (PNG and SVG)" drawn "$tmp/synthetic" "$f"
done
check "  no gnuplot warning" sh -c "! grep -qi 'warning' '$tmp/synthetic.log'"
check "  the crossover is named in the key" grep -q "flash, first faster at [0-9]* tokens" "$tmp/synthetic/attention_f32_vs_flash.svg"
check "  the peer is in the throughput figure" grep -q "9b transformers bf16 (peer)" "$tmp/synthetic/prefill_tokens_per_s.svg"

"$src/tools/bench-merge.sh" -o "$tmp/two.json" "$src/data/fixtures/bench/h200-small.json" "$src/data/fixtures/bench/a100-small.json"
check "the target on two merged devices" target "$tmp/two.json" "$tmp/two" "$tmp/two.log"
check "  devices side by side is drawn" drawn "$tmp/two" devices
check "  both devices are in it" sh -c "grep -q 'NVIDIA H200' '$tmp/two/devices.svg' && grep -q 'NVIDIA A100-SXM4-80GB' '$tmp/two/devices.svg'"

check "the target without a file" target "" "$tmp/default" "$tmp/default.log"
check "  reads the newest file under bench/results/" grep -q "^plots: $src/bench/results/[^ ]*\.json -> " "$tmp/default.log"
finish
