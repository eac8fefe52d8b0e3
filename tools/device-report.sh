#!/bin/bash
# One CUDA machine's report, filed as one results folder (tools/results-file.sh):
# the device's ceilings, every kernel against its ceiling and its peer, the
# prefill against the peers, the plots. A thin orchestration of the existing
# tools; each stage that the machine cannot run is skipped, saying why.
#
#   tools/device-report.sh [-o DIR] [--commit C] [--results DIR] [STAGE...]
#
# Stages (the order named; default all, in this order):
#   build     tools/gpu-run.sh build (build/gpu, for the local GPU: every stage runs
#             build/gpu's benchmarks)
#   ceilings  bench_ceilings (copy, SGEMM, HGEMM) into ceilings.json, and
#             bench_linear's ^ceiling/(fp8|hgemm_lt)/ (the FP8 GEMM, the tuned
#             HGEMM at the projections) into ceilings-linear.json
#   kernels   tools/gpu-run.sh bench into kernels/: bench_kernels, bench_attention,
#             bench_linear, bench_flash_sm90 where built; each point's pct_of_*
#             against the ceilings (Q35_BENCH_FILTER, Q35_REPS, Q35_BENCH_MIN_TIME)
#   peers     tools/gpu-run.sh peers into peers/, parts ours + peers: our kernels at
#             the points bench/peers.map pairs and bench/peers.py (which skips,
#             saying so, where torch or a backend is missing), peers-compare.txt
#   prefill   bench_prefill, the 9B Q4_K, f16 and fp8 GEMM, flash, 8192-row chunks,
#             at Q35_REPORT_LENS (default 512,4096,16384) into prefill.json; the
#             peers: transformers (bench/hf_peer.py, where torch and transformers
#             import, with the fla wheels of .whl/: tools/peer-site.sh) into peer-hf.json; llama.cpp on the same file (q35 model make,
#             seed 1; bench/llama_peer.sh bench, where $LLAMA_DIR, default
#             /tmp/llama, holds its build) into peer-llama-q4_k.json; the pairs by
#             bench/peers.map into prefill-compare.txt
#   plots     plots/plot.sh over everything measured (all.json), where gnuplot is
#   report    report.md from what DIR holds (the stages before, this call's or an
#             earlier one's)
#   file      tools/results-file.sh: the JSON, the comparisons and report.md's
#             sections in bench/results/<date>-<device>-<commit>/ (the newest JSON's
#             date; --results DIR
#             elsewhere), the plots and logs.tgz with them; --commit C (default
#             git rev-parse --short HEAD)
#
# DIR: -o, else $OUT, else out/device-report/. Exit: 0 every stage ran or was
# skipped saying why; 1 a stage failed; 2 a usage error.
set -u
cd "$(dirname "$0")/.." || exit 2
JQ=${JQ:-jq}
die() { echo "device-report: $*" >&2; exit 2; }
dir=${OUT:-out/device-report} build=build/gpu commit="" results="" stages=()
while [ $# -gt 0 ]; do
    case $1 in
    -o | --out) [ $# -ge 2 ] || die "$1 needs a folder"; dir=$2; shift 2 ;;
    --commit) [ $# -ge 2 ] || die "--commit needs a commit"; commit=$2; shift 2 ;;
    --results) [ $# -ge 2 ] || die "--results needs a folder"; results=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    build | ceilings | kernels | peers | prefill | plots | report | file) stages+=("$1"); shift ;;
    *) die "unknown argument $1 (--help)" ;;
    esac
done
[ ${#stages[@]} -gt 0 ] || stages=(build ceilings kernels peers prefill plots report file)
command -v "$JQ" >/dev/null 2>&1 || die "jq not found (tools/deps.sh installs it)"
mkdir -p "$dir/logs" || die "cannot make $dir"
dir=$(cd "$dir" && pwd)
rc=0
# note STAGE TEXT: a line of skipped.txt (what the machine lacked), printed too
note() { echo "$1: skipped: $2" | tee -a "$dir/skipped.txt"; }
fail() { echo "$1: FAILED: $2"; rc=1; }
gpu() { nvidia-smi -L >/dev/null 2>&1 || { note "$1" "no GPU (nvidia-smi -L fails)"; return 1; }; }
built() { [ -x "$build/bench/$2" ] || { note "$1" "$build/bench/$2 is not built (tools/gpu-run.sh build; Google Benchmark?)"; return 1; }; }
# bench STAGE EXE FILTER OUT.json: one benchmark's points, 3 repetitions, its log in logs/
bench() {
    "$build/bench/$2" --benchmark_filter="$3" --benchmark_repetitions="${Q35_REPS:-3}" \
        --benchmark_report_aggregates_only=true ${Q35_BENCH_MIN_TIME:+--benchmark_min_time=$Q35_BENCH_MIN_TIME} \
        --q35_progress=0 --benchmark_out="$dir/$4" --benchmark_out_format=json >"$dir/logs/${4%.json}.log" 2>&1 ||
        fail "$1" "$2 (logs/${4%.json}.log)"
}
lens=${Q35_REPORT_LENS:-512,4096,16384}

# points FILE...: the points of the files (plots/points.jq), one array
points() { for f in "$@"; do [ -f "$f" ] && "$JQ" -f plots/points.jq "$f"; done | "$JQ" -s 'add // []'; }
# report_md: report.md from what DIR holds, a section a part, each saying where it was skipped
report_md() {
    skipped() { grep "^$1" "$dir/skipped.txt" 2>/dev/null | awk '!seen[$0]++' | sed 's/^/- /; 1s/^/\n/' || true; }
    echo "## The ceilings"
    echo
    if [ -f "$dir/ceilings.json" ]; then
        points "$dir/ceilings-linear.json" | "$JQ" -r --slurpfile c "$dir/ceilings.json" '
          def t: . / 1e12 * 10 | round / 10;
          ($c[0].context) as $x
          | (map(select(.family == "ceiling/fp8")) | max_by(.FLOP)) as $fp8
          | (map(select(.family == "ceiling/hgemm_lt")) | max_by(.FLOP)) as $lt
          | "| ceiling | measured | where |", "|---|---|---|",
            "| copy, device to device (read + write) | \($x.ceiling_copy_bytes_per_s | tonumber / 1e9 | round) GB/s | 1 GiB; nominal peak \($x.device_memory_peak_bytes_per_s // "0" | tonumber / 1e9 | round) GB/s |",
            "| SGEMM (no TF32) | \($x.ceiling_sgemm_flop_per_s | tonumber | t) TFLOP/s | 8192^3 |",
            "| HGEMM (f32 accumulate) | \($x.ceiling_hgemm_flop_per_s | tonumber | t) TFLOP/s | 8192^3 |",
            (if $lt then "| HGEMM, tuned cuBLASLt (the f16 path) | \($lt.FLOP | t) TFLOP/s | best of \(map(select(.family == "ceiling/hgemm_lt")) | length) projections: \($lt.id) |" else empty end),
            (if $fp8 then "| FP8 GEMM (e4m3) | \($fp8.FLOP | t) TFLOP/s | best of \(map(select(.family == "ceiling/fp8")) | length) projections: \($fp8.id) |" else "| FP8 GEMM | not measured | no ceiling/fp8 point (bench_linear; sm_89+) |" end)'
    else
        echo "Not measured."; skipped ceilings
    fi
    echo
    echo "## The kernels against the ceilings"
    echo
    if ls "$dir"/kernels/*.json >/dev/null 2>&1; then
        echo "Each family's best point, as a percentage of the ceiling it reports (the JSON: \`kernels/\`, every point):"
        echo
        points "$dir"/kernels/*.json | "$JQ" -r '
          def pct($k): (map(.[$k] // empty) | max) as $m | if $m == null then "" else "\($m * 10 | round / 10)%" end;
          "| family | points | best % of copy | best % of HGEMM | best % of SGEMM |", "|---|---|---|---|---|",
          (group_by(.family)[] | "| `\(.[0].family)` | \(length) | \(pct("pct_of_copy")) | \(pct("pct_of_hgemm")) | \(pct("pct_of_sgemm")) |")'
    else
        echo "Not measured."; skipped kernels
    fi
    echo
    echo "## The kernels against the peers"
    echo
    if [ -f "$dir/peers/peers-compare.txt" ]; then
        echo "\`tools/bench-compare.sh --map bench/peers.map\` (B: the peer, A: ours; B/A > 1: ours faster), every pair in \`peers-compare.txt\`:"
        printf '\n```text\n%s\n```\n' "$(tail -1 "$dir/peers/peers-compare.txt")"
        grep -h ': skipped: ' "$dir"/peers/peers.log 2>/dev/null | sed 's/.*: skipped: /- peer skipped: /' | sort | uniq -c | sed 's/^ *\([0-9]*\) - /- \1 x /'
    else
        echo "Not measured."; skipped peers
    fi
    echo
    echo "## The prefill against the peers"
    echo
    if [ -f "$dir/prefill.json" ]; then
        points "$dir/prefill.json" "$dir/peer-hf.json" "$dir/peer-llama-q4_k.json" | "$JQ" -L plots -r 'include "fmt";
          map(select(.tokens_per_s != null and .axes.len != null)) as $p
          | ($p | map(.axes.len | tonumber) | unique) as $lens
          | "| tokens/s | \($lens | map(tostring) | join(" | ")) |", "|---|\($lens | map("---") | join("|"))|",
            ($p | group_by(.family + (.axes | del(.len) | tostring))[]
             | (map({(.axes.len): .tokens_per_s}) | add) as $row
             | "| \(.[0].id | sub("/len:[0-9]+"; "")) | \($lens | map(tostring | $row[.] // null | if . then tokens_k else "" end) | join(" | ")) |")'
        [ -f "$dir/prefill-compare.txt" ] &&
            printf '\nOurs against each peer by `bench/peers.map` (B/A > 1: ours faster):\n\n```text\n%s\n```\n' \
                "$(grep -E '  vs  |^bench-compare: [0-9]' "$dir/prefill-compare.txt")"
        skipped "prefill: "
    else
        echo "Not measured."; skipped prefill
    fi
    echo
    echo "## Plots"
    echo
    if [ -d "$dir/plots" ]; then ls "$dir/plots" | grep '\.png$' | sed 's|.*|- [&](plots/&)|'; else echo "None."; skipped plots; fi
}

for stage in "${stages[@]}"; do
    echo "== device-report: $stage ($(date +%T))"
    case $stage in
    build) OUT=$dir/logs tools/gpu-run.sh build || { fail build "logs/build.log"; exit 1; } ;;
    ceilings) gpu ceilings || continue
              built ceilings bench_ceilings && bench ceilings bench_ceilings . ceilings.json
              built ceilings bench_linear && bench ceilings bench_linear '^ceiling/(fp8|hgemm_lt)/' ceilings-linear.json ;;
    kernels) gpu kernels && { OUT=$dir/kernels tools/gpu-run.sh bench || fail kernels "kernels/*.log"; } ;;
    peers) gpu peers && { Q35_PEER_PARTS="ours peers" Q35_PEER_BENCHES="bench_attention bench_kernels bench_linear$([ -x "$build/bench/bench_flash_sm90" ] && echo ' bench_flash_sm90')" \
               OUT=$dir/peers tools/gpu-run.sh peers || fail peers "peers/*.log"; } ;;
    prefill) gpu prefill && built prefill bench_prefill || continue
             bench prefill bench_prefill "^prefill/shape:9b/quant:q4_k/gemm:(f16|fp8)/attn:flash/chunk:8192/len:(${lens//,/|})/" prefill.json
             peer_files=()
             . tools/peer-site.sh "$dir/logs/peers-pip.log"
             if python3 -c 'import torch, transformers' >/dev/null 2>&1; then
                 python3 bench/hf_peer.py --shape 9b --lengths "$lens" --reps "${Q35_REPS:-3}" -o "$dir/peer-hf.json" \
                     2>"$dir/logs/peer-hf.log" && peer_files+=("$dir/peer-hf.json") || fail prefill "bench/hf_peer.py (logs/peer-hf.log)"
             else
                 note "prefill: transformers" "torch or transformers does not import here: $(python3 -c 'import torch, transformers' 2>&1 | tail -1)"
             fi
             if [ "$(cat "${LLAMA_DIR:-/tmp/llama}/done" 2>/dev/null)" = 0 ] && [ -x "$build/cli/q35" ]; then
                 gguf=${TMPDIR:-/tmp}/q35-report-9b-q4_k.gguf
                 [ -f "$gguf" ] || "$build/cli/q35" model make --shape 9b --quant q4_k --seed 1 -o "$gguf" >"$dir/logs/model-make.log" 2>&1
                 LP=$lens OUT=$dir/logs bench/llama_peer.sh bench 9b q4_k "$gguf" && mv "$dir/logs/peer-llama-q4_k.json" "$dir/" &&
                     peer_files+=("$dir/peer-llama-q4_k.json") || fail prefill "bench/llama_peer.sh bench (logs/)"
             else
                 note "prefill: llama.cpp" "no llama.cpp build in ${LLAMA_DIR:-/tmp/llama} (bench/llama_peer.sh pack, then build)"
             fi
             if [ -f "$dir/prefill.json" ] && [ ${#peer_files[@]} -gt 0 ]; then
                 tools/bench-merge.sh -o "$dir/prefill-peers.json" "${peer_files[@]}" &&
                     tools/bench-compare.sh --map bench/peers.map "$dir/prefill.json" "$dir/prefill-peers.json" \
                         >"$dir/prefill-compare.txt" 2>&1
                 tail -1 "$dir/prefill-compare.txt"
             fi ;;
    plots) command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1 || { note plots "no gnuplot (tools/deps.sh installs gnuplot-nox)"; continue; }
           all=$(ls "$dir"/*.json "$dir"/kernels/*.json "$dir"/peers/peers-all.json 2>/dev/null | grep -v '/all\.json$')
           [ -n "$all" ] || { note plots "nothing measured in $dir"; continue; }
           tools/bench-merge.sh -o "$dir/all.json" $all && plots/plot.sh -o "$dir/plots" "$dir/all.json" >"$dir/logs/plots.log" 2>&1 ||
               fail plots "logs/plots.log" ;;
    report) report_md >"$dir/report.md" || fail report "report.md could not be written"
            echo "report: $dir/report.md ($(wc -l <"$dir/report.md") lines)" ;;
    file) [ -f "$dir/report.md" ] || { fail file "no report.md (the report stage)"; continue; }
          commit=${commit:-$(git rev-parse --short HEAD)}
          device=$("$JQ" -r '.context.device // empty' "$dir"/*.json "$dir"/kernels/*.json 2>/dev/null | head -1)
          [ -n "$device" ] || { fail file "no JSON in $dir names the device"; continue; }
          slug=$(tools/results-file.sh --slug "$device") c7=$(printf '%s' "$commit" | cut -c1-7)
          rm -rf "$dir/filed" && mkdir -p "$dir/filed" && cp "$dir"/kernels/*.log "$dir"/peers/*.log "$dir/logs/" 2>/dev/null
          for f in "$dir"/*.json "$dir"/*.txt "$dir"/kernels/*.json "$dir"/peers/peers-ours.json "$dir"/peers/peers.json \
                   "$dir"/peers/peers-compare.txt; do
              b=${f##*/}
              case $b in all.json | prefill-peers.json | skipped.txt) continue ;; esac
              [ -f "$f" ] && cp "$f" "$dir/filed/$slug-${b%.*}-$c7.${b##*.}"
          done
          day=$("$JQ" -r '.context.date // ([.context.sources[]?.date] | max) // empty' "$dir"/filed/*.json 2>/dev/null |
                sort | tail -1 | cut -c1-10)   # the newest run's day
          plots=(); [ -d "$dir/plots" ] && plots=(--plots "$dir/plots")
          tools/results-file.sh ${results:+--results "$results"} --commit "$commit" --device "$device" ${day:+--date "$day"} \
              --command "tools/device-report.sh ${stages[*]}" --what "$(cat "$dir/report.md")" "${plots[@]}" --logs "$dir/logs" \
              "$dir"/filed/* || fail file "tools/results-file.sh" ;;
    esac
done
echo "device-report: $([ $rc = 0 ] && echo 'done' || echo FAILED); everything in $dir$([ -s "$dir/skipped.txt" ] && echo "; skipped: skipped.txt")"
exit $rc
