#!/bin/sh
# tools/device-report.sh without a GPU: --help and its refusals; the GPU stages
# skipped, saying so (nvidia-smi a stand-in that fails); the report and file
# stages on a folder of measured runs from bench/results/ (an H100's ceilings in
# its context, FP8 GEMM ceilings, kernels, the prefill and transformers beside it):
# the README of the filed folder with the ceilings, each kernel family against
# its ceiling, the prefill table and what was skipped; the files named
# <slug>-<name>-<commit>, one index line each.
#   tools/tests/device-report.sh SOURCE_DIR TMP_DIR
set -u
src=$1 tmp=$2
. "$src/tools/tests/lib.sh"
need_jq
rm -rf "$tmp" && mkdir -p "$tmp/bin" "$tmp/d/kernels" "$tmp/res"
dr=$src/tools/device-report.sh
r=$src/bench/results
printf '#!/bin/sh\necho "nvidia-smi: no devices (a stand-in)" >&2\nexit 9\n' >"$tmp/bin/nvidia-smi"
chmod +x "$tmp/bin/nvidia-smi"
h100='.context.device = "NVIDIA H100 80GB HBM3"'
cp "$r/baseline/h100.json" "$tmp/d/ceilings.json"
"$JQ" "$h100" "$r/2026-12-04-h200-c3d0dc8/h200-linear-fp8-c3d0dc8.json" >"$tmp/d/ceilings-linear.json"
"$JQ" "$h100" "$r/2026-12-05-h200-7cc79b4/h200-kern-7cc79b4.json" >"$tmp/d/kernels/bench_kernels.json"
cp "$r/2026-12-06-h100-a53d6c0/h100-prefill-a53d6c0.json" "$tmp/d/prefill.json"
cp "$r/2026-12-06-h100-a53d6c0/h100-peer-hf-a53d6c0.json" "$tmp/d/peer-hf.json"

check "--help: exit 0, every stage" sh -c "'$dr' --help >'$tmp/help' && for s in build ceilings kernels peers prefill plots report file; do
    grep -q \"^  \$s \" '$tmp/help' || exit 1; done"
check "an unknown stage: exit 2" exit_is 2 "$tmp/usage.log" "$dr" -o "$tmp/u" nosuchstage
check "no GPU: the GPU stages skipped, exit 0" exit_is 0 "$tmp/nogpu.log" env PATH="$tmp/bin:$PATH" "$dr" -o "$tmp/d" ceilings kernels peers prefill
check "  each says why" sh -c "for s in ceilings kernels peers prefill; do
    grep -q \"^\$s: skipped: no GPU (nvidia-smi -L fails)\" '$tmp/d/skipped.txt' || exit 1; done"
check "the report and the filing: exit 0" exit_is 0 "$tmp/file.log" "$dr" -o "$tmp/d" --results "$tmp/res" --commit a53d6c0 report file
run=$tmp/res/2026-12-06-h100-a53d6c0
readme=$run/README.md
check "  the folder: the date of the newest JSON, the device's slug, the commit" [ -f "$readme" ]
check "  the ceilings from the context: copy, SGEMM, HGEMM" sh -c "grep -qF '| copy, device to device (read + write) | 3013 GB/s | 1 GiB; nominal peak 3352 GB/s |' '$readme' &&
    grep -qF '| SGEMM (no TF32) | 51.4 TFLOP/s |' '$readme' && grep -qF '| HGEMM (f32 accumulate) | 748.7 TFLOP/s |' '$readme'"
check "  the FP8 GEMM ceiling: its best projection" grep -Eq '^\| FP8 GEMM \(e4m3\) \| [0-9.]+ TFLOP/s \| best of [0-9]+ projections: ceiling/fp8/proj:' "$readme"
check "  the kernels against the copy ceiling" grep -qF '| `delta_chunk` | 3 | 32.8% |  |  |' "$readme"
check "  the prefill, ours and transformers, by length" sh -c "grep -qF '| tokens/s | 512 | 4096 | 16384 |' '$readme' &&
    grep -qF '| prefill/shape:9b/quant:q4_k/gemm:fp8/attn:flash/chunk:8192 | 50.30k | 59.54k | 56.66k |' '$readme' &&
    grep -qF '| peer_hf/shape:9b/dtype:bf16 | 7.95k | 26.16k | 25.58k |' '$readme'"
check "  the peers not measured, and why" sh -c "sed -n '/^## The kernels against the peers/,/^## /p' '$readme' | grep -q '^- peers: skipped: no GPU'"
check "  the command" grep -q '^tools/device-report.sh report file$' "$readme"
check "  the files, named <slug>-<name>-<commit>" sh -c "for f in ceilings ceilings-linear bench_kernels prefill peer-hf; do
    [ -f '$run'/h100-\$f-a53d6c0.json ] || { echo \"      no h100-\$f-a53d6c0.json\"; exit 1; }; done"
check "  the logs tarred" [ -f "$run/logs.tgz" ]
check "  an index line a file (5 JSON and logs.tgz)" [ "$(grep -c '2026-12-06-h100-a53d6c0/' "$tmp/res/index.tsv")" -eq 6 ]
check "file without a report: exit 1" exit_is 1 "$tmp/noreport.log" "$dr" -o "$tmp/empty" --results "$tmp/res" --commit a53d6c0 file
finish
