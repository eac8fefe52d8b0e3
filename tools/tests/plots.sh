#!/bin/sh
# The plots target (plots/plot.sh through `cmake --build --target plots`) on
# the CPU: on the H200 kernel results only the roofline can be drawn and every
# prefill figure is skipped with a message; on the synthetic prefill-sweep JSON
# (data/fixtures/bench/prefill-synthetic.json: two devices, every future name)
# all six figures are drawn; two merged device fixtures give the devices
# figure from the benchmarks they share; ours and the peers merged
# (peers-ours.json, peers-peers.json) give the four peer figures with the
# speed-ups on a right axis; without a file the newest under bench/results/ is
# read. Each figure: a PNG (its signature) and an SVG, non-empty.
#   tools/tests/plots.sh SOURCE_DIR BUILD_DIR TMP_DIR
set -u
src=$1 build=$2 tmp=$3
. "$src/tools/tests/lib.sh"
need_jq
command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1 || { echo "SKIP  gnuplot not found (tools/deps.sh installs gnuplot-nox)"; exit 77; }
rm -rf "$tmp" && mkdir -p "$tmp"
figures="prefill_tokens_per_s prefill_chunk_rows prefill_time_split attention_f32_vs_flash roofline devices"
peer_figures="peers_prefill peers_attention peers_scan peers_gemm"

# target RESULTS OUTDIR LOG: the plots target on RESULTS (empty: the default) into OUTDIR
target() {
    Q35_PLOTS_RESULTS=$1 Q35_PLOTS_OUT=$2 cmake --build "$build" --target plots >"$3" 2>&1
}
# drawn DIR NAME: both files there, non-empty, a PNG and an SVG
drawn() {
    [ -s "$1/$2.png" ] && [ -s "$1/$2.svg" ] && [ "$(head -c 8 "$1/$2.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] &&
        grep -q "<svg" "$1/$2.svg"
}
# stroke_of SVG TITLE: the stroke colour of the first line drawn after the plot titled TITLE
stroke_of() {
    awk -v t="<title>$2</title>" 'index($0, t) { f = 1 } f && match($0, /stroke=.rgb\([^)]*\)/) {
        print substr($0, RSTART + 8, RLENGTH - 8); exit }' "$1"
}
# same_stroke SVG TITLE1 TITLE2: both plots drawn, in one colour
same_stroke() {
    q35_a=$(stroke_of "$1" "$2") && q35_b=$(stroke_of "$1" "$3") && [ -n "$q35_a" ] && [ "$q35_a" = "$q35_b" ]
}

check "the target on the H200 kernel results" target "$src/bench/results/2026-12-02-h200-37b483d/h200-kernels-37b483d.json" "$tmp/kernels" "$tmp/kernels.log"
check "  the roofline is drawn (PNG and SVG)" drawn "$tmp/kernels" roofline
for f in prefill_tokens_per_s prefill_chunk_rows prefill_time_split attention_f32_vs_flash devices $peer_figures; do
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

"$src/tools/bench-merge.sh" -o "$tmp/peers.json" "$src/data/fixtures/bench/peers-ours.json" "$src/data/fixtures/bench/peers-peers.json"
check "the target on ours and the peers, merged" target "$tmp/peers.json" "$tmp/peers" "$tmp/peers.log"
for f in $peer_figures; do
    check "  $f is drawn (PNG and SVG)" drawn "$tmp/peers" "$f"
    check "  $f has our speed-up on the right axis" grep -q "our speed-up over the peer" "$tmp/peers/$f.svg"
done
check "  no gnuplot warning" sh -c "! grep -qi 'warning' '$tmp/peers.log'"
check "  flash against cuDNN and flash SDPA" sh -c "grep -q 'speed-up: flash_chunk split:0 variant:kv64 over peer_sdpa backend:cudnn dtype:f16 query:chunk' '$tmp/peers/peers_attention.svg' && grep -q 'peer_sdpa backend:flash dtype:f16 query:chunk' '$tmp/peers/peers_attention.svg'"
check "  the scan against fla with and without a CUDA graph" sh -c "grep -q 'peer_fla backend:triton graph:1' '$tmp/peers/peers_scan.svg' && grep -q 'peer_fla backend:triton graph:0' '$tmp/peers/peers_scan.svg'"
check "  the GEMMs per projection, named from the context" grep -q "ffn_gate/up 12288x4096" "$tmp/peers/peers_gemm.svg"
check "  each speed-up in its peer's colour (graph:0)" same_stroke "$tmp/peers/peers_scan.svg" "peer_fla backend:triton graph:0" "speed-up: delta_rule_scan variant:5 over peer_fla backend:triton graph:0"
check "  each speed-up in its peer's colour (graph:1)" same_stroke "$tmp/peers/peers_scan.svg" "peer_fla backend:triton graph:1" "speed-up: delta_rule_scan variant:5 over peer_fla backend:triton graph:1"
check "  the prefill against transformers" grep -q "speed-up: prefill shape:9b quant:q4_k gemm:f16 attn:flash chunk:2048 over peer_hf shape:9b dtype:bf16" "$tmp/peers/peers_prefill.svg"

check "the target without a file" target "" "$tmp/default" "$tmp/default.log"
check "  reads the newest file under bench/results/" grep -q "^plots: $src/bench/results/[^ ]*\.json -> " "$tmp/default.log"
finish
