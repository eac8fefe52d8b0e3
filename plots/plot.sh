#!/bin/sh
# The plots of one results JSON (bench/results/SCHEMA.md; merged files too):
# jq turns the benchmarks into TSV, gnuplot draws each figure as PNG and SVG.
#
#   plots/plot.sh [-o OUTDIR] [RESULTS.json]
#
# RESULTS.json defaults to the newest file of bench/results/'s run folders (by the date
# in its context); OUTDIR to build/plots. A figure whose benchmarks are not in
# the file is skipped with a line saying so, never an error.
#
#   prefill_tokens_per_s     prefill tokens/s against prompt length, a line per path
#                            (shape, quant, attention, GEMM) at the commonest chunk rows, and the
#                            transformers peer
#   prefill_chunk_rows       tokens/s against rows per chunk, a line per prompt length
#   prefill_time_split       where one prefill's time goes: projections, scan,
#                            attention, other, as shares of the prefill, per prompt length
#   attention_f32_vs_flash   attention time against prompt length, f32 (cuBLAS) and flash,
#                            and where flash becomes faster (from the prefill sweep, else
#                            from bench_attention's 512-row chunks)
#   roofline                 every benchmark with FLOP and bytes: achieved FLOP/s against
#                            FLOP per byte, under the copy, SGEMM and HGEMM ceilings
#   devices                  devices side by side: prefill tokens/s at 4096 tokens, else
#                            the time of every benchmark the devices share
#   peers_prefill, peers_attention, peers_scan, peers_gemm
#                            ours against the peers bench/peers.map pairs them with
#                            ($Q35_PEERS_MAP overrides it; plots/pairs.jq), on one device:
#                            prefill tokens/s against prompt length (transformers), flash
#                            TFLOP/s against context (torch SDPA), the scan's time against
#                            rows (fla), the f16 GEMMs' TFLOP/s per projection at the most
#                            rows (torch); our speed-up over each peer on the right axis
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
JQ=${JQ:-jq}
GNUPLOT=${GNUPLOT:-gnuplot}
out=$root/build/plots
if [ "${1:-}" = "-o" ]; then
    out=$2
    shift 2
fi
for tool in "$JQ" "$GNUPLOT"; do
    command -v "$tool" >/dev/null 2>&1 || { echo "plots: $tool not found (tools/deps.sh installs jq and gnuplot-nox)" >&2; exit 1; }
done
if [ $# -ge 1 ]; then
    results=$1
else
    results=$(for f in "$root"/bench/results/*/*.json; do
        [ -f "$f" ] && printf '%s\t%s\n' "$("$JQ" -r '.context.date // ([.context.sources[]?.date] | max) // ""' "$f" 2>/dev/null)" "$f"
    done | sort | tail -1 | cut -f2)
    [ -n "$results" ] || { echo "plots: no results JSON under bench/results/" >&2; exit 1; }
fi
[ -r "$results" ] || { echo "plots: cannot read $results" >&2; exit 1; }
mkdir -p "$out"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "plots: $results -> $out"
"$JQ" -f "$here/points.jq" "$results" >"$tmp/points.json"
made=0

# draw NAME SCRIPT.gp TSV VARS: runs gnuplot (VARS: gnuplot assignments) when
# the TSV has data, else says why the figure is skipped (SKIP_WHY).
draw() {
    if [ ! -s "$3" ]; then
        echo "plots: skipped $1: $SKIP_WHY"
        return 0
    fi
    "$GNUPLOT" -e "set loadpath '$here'; data='$3'; out='$out/$1'; $4" "$here/$2" ||
        { echo "plots: gnuplot failed on $1" >&2; exit 1; }
    echo "plots: wrote $out/$1.png and .svg"
    made=$((made + 1))
}

# q JQ_PROGRAM [JQ_OPTIONS]: jq -r over the points with the helpers below.
q() {
    q_prog=$1
    shift
    "$JQ" -r "$@" "$helpers $q_prog" "$tmp/points.json"
}
helpers='
  def num: tonumber? // .;
  def devices: map(.device) | unique;
  def with_dev($multi): if $multi then " [" + .device + "]" else "" end;
  def default_chunk: map(.axes.chunk) | group_by(.) | max_by(length) | .[0];   # the commonest (the paths family)
  def path_title: "\(.axes.shape) \(.axes.quant), attention \(.axes.attn), GEMM \(.axes.gemm)";
  def block($title; rows): (rows | map(map(tostring) | join("\t"))) as $r   # a titled block, none when empty
    | if ($r | length) == 0 then empty else "\"\($title)\"\t\"y\"", $r[], "", "" end;
  def prefill: map(select(.family == "prefill"));
'

# prefill_tokens_per_s
q '(prefill | map(select(.tokens_per_s))) as $p | ($p + map(select(.family == "peer_hf" and .tokens_per_s))) as $all
   | ($all | devices | length > 1) as $multi | ($p | default_chunk) as $chunk
   | ($p | map(select(.axes.chunk == $chunk)) | group_by([.device, .axes.shape, .axes.quant, .axes.attn, .axes.gemm])
      | .[] | block((.[0] | path_title) + (.[0] | with_dev($multi)); sort_by(.axes.len | num) | map([.axes.len, .tokens_per_s]))),
     (map(select(.family == "peer_hf" and .tokens_per_s)) | group_by([.device, .axes.shape, .axes.dtype, .axes.layers])
      | .[] | block("\(.[0].axes.shape) transformers \(.[0].axes.dtype) (peer)" + (.[0] | with_dev($multi));
                    sort_by(.axes.len | num) | map([.axes.len, .tokens_per_s])))' >"$tmp/tokens.tsv"
SKIP_WHY="no prefill/... or peer_hf/... benchmarks with tokens_per_s"
tokens_chunk=$(q '(prefill | map(select(.tokens_per_s))) | if length == 0 then "" else default_chunk end')
draw prefill_tokens_per_s lines.gp "$tmp/tokens.tsv" "blocks=$(grep -c '^"' "$tmp/tokens.tsv" || true);
    title='Prefill throughput against prompt length (${tokens_chunk}-row chunks)'; xlabel='prompt length (tokens)';
    ylabel='prefill throughput (tokens/s)'; logx=2; logy=1; yformat='%.0s%c'"

# prefill_chunk_rows: the path swept over the most chunk sizes
q '(prefill | map(select(.tokens_per_s))) as $p
   | ($p | group_by([.device, .axes.shape, .axes.quant, .axes.attn, .axes.gemm])
      | map(select((map(.axes.chunk) | unique | length) > 1)) | max_by(map(.axes.chunk) | unique | length)) as $g
   | if $g == null then empty else
       $g | group_by(.axes.len | num) | map(select(length > 1)) | .[]
       | block("\(.[0].axes.len) tokens"; sort_by(.axes.chunk | num) | map([.axes.chunk, .tokens_per_s]))
     end' >"$tmp/chunk.tsv"
chunk_title=$(q '(prefill | map(select(.tokens_per_s))) | group_by([.device, .axes.shape, .axes.quant, .axes.attn, .axes.gemm])
   | map(select((map(.axes.chunk) | unique | length) > 1)) | max_by(map(.axes.chunk) | unique | length)
   | if . == null then "" else .[0] | "\(path_title), \(.device)" end')
SKIP_WHY="no prefill benchmarks at more than one chunk:R"
draw prefill_chunk_rows lines.gp "$tmp/chunk.tsv" "blocks=$(grep -c '^"' "$tmp/chunk.tsv" || true);
    title='Prefill throughput against rows per chunk: $chunk_title'; xlabel='rows per chunk';
    ylabel='prefill throughput (tokens/s)'; logx=2; logy=0; yformat='%.0s%c'"

# prefill_time_split: the path with the most prompt lengths, 9b first
split_sel='(prefill | map(select(.s_proj and .s_scan and .s_attn and .s_other))) as $p
   | ($p | default_chunk) as $chunk
   | ($p | map(select(.axes.chunk == $chunk)) | group_by([.device, .axes.shape, .axes.quant, .axes.attn, .axes.gemm])
      | sort_by([(.[0].axes.shape == "9b"), length]) | last)'
q "$split_sel"' | if . == null then empty else
     "\"prompt length\"\t\"projections\"\t\"delta-rule scan\"\t\"attention\"\t\"other\"",
     (sort_by(.axes.len | num)[] | (.s_proj + .s_scan + .s_attn + .s_other) as $t
      | [("\(.axes.len) (\($t * 1e3 | . * 10 | round / 10) ms)" | @json)]
        + ([.s_proj, .s_scan, .s_attn, .s_other] | map(. / $t * 100)) | join("\t"))
   end' >"$tmp/split.tsv"
split_title=$(q "$split_sel"' | if . == null then "" else .[0] | "\(path_title), \(.axes.chunk)-row chunks, \(.device)" end')
SKIP_WHY="no prefill benchmarks with s_proj, s_scan, s_attn, s_other"
draw prefill_time_split stacked.gp "$tmp/split.tsv" "ncols=5;
    title='Where one prefill spends its time: $split_title'; xlabel='prompt length (tokens), the prefill total in brackets';
    ylabel='share of the prefill (%)'"

# attention_f32_vs_flash: from the prefill sweep (s_attn per prefill, one GEMM path), else from
# bench_attention (one 512-row chunk at the end of the context: f32/.../part:0 against flash_chunk/.../split:0)
attn_src=$(q 'if (prefill | map(select(.s_attn and (.axes.attn == "f32" or .axes.attn == "flash"))) | length) > 0
              then "prefill" else "units" end')
q '(if $src == "prefill" then
      (prefill | map(select(.s_attn and (.axes.attn == "f32" or .axes.attn == "flash")))) as $p
      | ($p | default_chunk) as $chunk
      | ($p | map(.axes.gemm) | if index("f16") then "f16" else (group_by(.) | max_by(length) | .[0]) end) as $gemm
      | $p | map(select(.axes.chunk == $chunk and .axes.gemm == $gemm))
      | map({key: "\(.axes.shape) \(.axes.quant)", device, path: .axes.attn, x: (.axes.len | num), ms: (.s_attn * 1e3)})
    else
      map(select((.family == "f32" and .axes.part == "0") or (.family == "flash_chunk" and .axes.split == "0")))
      | map({key: ({"0": "0.8B", "1": "9B", "2": "27B"}[.axes.model] // "model \(.axes.model)"), device,
             path: (if .family == "f32" then "f32" else "flash" end), x: (.axes.ctx | num), ms})
    end) as $pts
   | ($pts | devices | length > 1) as $multi
   | $pts | group_by([.device, .key]) | map(select((map(.path) | unique) == ["f32", "flash"])) | .[]
   | (map(select(.path == "f32")) | map({(.x | tostring): .ms}) | add) as $f32
   | (sort_by(.x) | map(select(.path == "flash" and $f32[.x | tostring] != null))) as $both
   | ($both | map(select(.ms < $f32[.x | tostring]))) as $faster
   | (.[0] | .key + with_dev($multi)) as $k
   | block("\($k): f32 (cuBLAS)"; map(select(.path == "f32")) | sort_by(.x) | map([.x, .ms])),
     block("\($k): flash" + (if ($faster | length) == 0 then ", never faster where both ran"
                              elif ($faster | length) == ($both | length) then ", faster at every length both ran"
                              else ", first faster at \($faster[0].x) tokens" end);
           map(select(.path == "flash")) | sort_by(.x) | map([.x, .ms]))' --arg src "$attn_src" >"$tmp/attn.tsv"
if [ "$attn_src" = prefill ]; then
    attn_vars="title='Attention: f32 (cuBLAS) against flash, per prefill (the prefill sweep)';
        xlabel='prompt length (tokens)'; ylabel='attention time of one prefill (ms)'"
else
    attn_vars="title='Attention: f32 (cuBLAS) against flash, a chunk of 512 query rows at the end of the context';
        xlabel='context length (tokens)'; ylabel='attention time of the chunk (ms)'"
fi
SKIP_WHY="neither prefill benchmarks with s_attn on both paths nor bench_attention's f32/.../part:0 with flash_chunk/.../split:0"
draw attention_f32_vs_flash lines.gp "$tmp/attn.tsv" "blocks=$(grep -c '^"' "$tmp/attn.tsv" || true); $attn_vars;
    logx=2; logy=1; yformat='%g'"

# roofline: one device (the first with points), its ceilings from the context, else from ceiling/ benchmarks
roof_dev=$(q 'map(select(.FLOP and .bytes and .bytes > 0)) | group_by(.device) | max_by(length) | .[0].device // ""')
q 'map(select(.device == $d and .FLOP and .bytes and .bytes > 0 and (.family | startswith("ceiling/") | not)))
   | group_by(.family) | .[] | block(.[0].family; map([.FLOP / .bytes, .FLOP]))' --arg d "$roof_dev" >"$tmp/roof.tsv"
ceil() { # ceil KEY FAMILY COUNTER: the context's ceiling for the device, else the best ceiling benchmark
    c=$("$JQ" -r --arg d "$roof_dev" --arg k "$1" '[.context, (.context.sources // [])[]] | map(select(.device == $d) | .[$k] // empty) | first // ""' "$results")
    [ -n "$c" ] || c=$("$JQ" -r --arg d "$roof_dev" --arg f "$2" --arg n "$3" \
        'map(select(.device == $d and (.family | test($f)) and .[$n])) | map(.[$n]) | max // 0' "$tmp/points.json")
    echo "${c:-0}"
}
copy=$(ceil ceiling_copy_bytes_per_s '^ceiling/(d2d_)?copy$' bytes)
sgemm=$(ceil ceiling_sgemm_flop_per_s '^ceiling/sgemm$' FLOP)
hgemm=$(ceil ceiling_hgemm_flop_per_s '^ceiling/hgemm$' FLOP)
range=$(q 'map(select(.device == $d and .FLOP and .bytes and .bytes > 0)) | map(.FLOP / .bytes) as $ai
     | if ($ai | length) == 0 then "xmin=0.01; xmax=100" else
         [($ai | min) / 2, ([($ai | max) * 2] + (if $c > 0 then [$s, $h] | map(. / $c * 4) else [] end) | max)]
         | "xmin=\(.[0]); xmax=\(.[1])" end' --arg d "$roof_dev" --argjson c "$copy" --argjson s "$sgemm" --argjson h "$hgemm")
SKIP_WHY="no benchmarks with both FLOP and bytes counters"
draw roofline roofline.gp "$tmp/roof.tsv" "blocks=$(grep -c '^"' "$tmp/roof.tsv" || true); copy=$copy; sgemm=$sgemm; hgemm=$hgemm; $range;
    title='Achieved against the ceilings measured in the same run ($roof_dev)'"

# devices: prefill tokens/s at 4096 tokens per path, else every benchmark's time the devices share
q '(devices) as $devs | if ($devs | length) < 2 then empty else
     (prefill | map(select(.tokens_per_s and .axes.len == "4096")) | (default_chunk) as $chunk
      | map(select(.axes.chunk == $chunk))) as $p
     | (if ($p | devices | length) > 1 then
          $p | map(. + {label: path_title, v: .tokens_per_s})
        else
          map(. + {label: (.family + ([.axes | to_entries[] | "/\(.key):\(.value)"] | join(""))), v: .ms})
        end) as $rows
     | ($rows | group_by(.label) | map(select((map(.device) | unique | length) == ($devs | length))) | .[:24]) as $common
     | if ($common | length) == 0 then empty else
         ([("benchmark" | @json)] + ($devs | map(@json)) | join("\t")),
         ($common[] | (map({(.device): .v}) | add) as $by
          | [(.[0].label | @json)] + ($devs | map($by[.] // "?" | tostring)) | join("\t"))
       end
   end' >"$tmp/devices.tsv"
devices_kind=$(q '(prefill | map(select(.tokens_per_s and .axes.len == "4096")) | devices | length) > 1')
if [ "$devices_kind" = true ]; then
    dev_vars="ylabel='prefill throughput at 4096 tokens (tokens/s)'; title='Devices side by side: prefill at 4096 tokens (512-row chunks)'; logy=0; yformat='%.0s%c'"
else
    dev_vars="ylabel='median time (ms)'; title='Devices side by side: the benchmarks they share'; logy=1; yformat='%g'"
fi
SKIP_WHY="fewer than two devices (merge several devices' files with tools/bench-merge.sh)"
draw devices bars.gp "$tmp/devices.tsv" "ncols=$(head -1 "$tmp/devices.tsv" 2>/dev/null | awk -F'\t' '{print NF}'); $dev_vars"
# The peer figures: the pairs of bench/peers.map on the device with the most of them
peers_map=${Q35_PEERS_MAP:-$root/bench/peers.map}
pairs=$(cat "$here/pairs.jq")
if [ -r "$peers_map" ]; then
    "$JQ" -R -s "$pairs map_rules" "$peers_map" >"$tmp/rules.json" ||
        { echo "plots: $peers_map is not a name map" >&2; exit 1; }
else
    echo '[]' >"$tmp/rules.json"
fi
"$JQ" --slurpfile r "$tmp/rules.json" "$pairs"' pairs($r[0]; .) | map(select(.b))
    | (group_by(.a.device) | max_by(length) | .[0].a.device) as $d | map(select(.a.device == $d))' \
    "$tmp/points.json" >"$tmp/pairs.json"
peer_dev=$("$JQ" -r '.[0].a.device // ""' "$tmp/pairs.json")
peer_helpers='
  def title_of: gsub("/[a-z_]+:\\{[a-z_]+\\}"; "") | gsub("/"; " ");   # a map name without its {axis} segments
  def peer_lines($families; sel; $x; y):   # ours per OURS (families: a regex alternation), each peer, then our speed-up over each (the last blocks)
    map(select((.rule.a | test("^(" + $families + ")/")) and sel)) | map(. + {x: (.caps[$x] | tonumber)}) as $p
    | ($p | map(.rule.a) | unique) as $ours | ($ours | length) as $n_ours | ($p | map(.rule.b) | unique) as $peers
    | "# y2colors: " + ([$p | group_by(.rule.line)[] | .[0].rule as $r
                         | if ($peers | length) == 1 then ($ours | index($r.a)) + 1
                           else $n_ours + ($peers | index($r.b)) + 1 end | tostring]
                        | join(" ")),   # each speed-up in the colour of the line of its peer (lines.gp), or of
                                        # its ours where one peer serves them all
      ($p | group_by(.rule.a)[] | block("ours: " + (.[0].rule.a | title_of); unique_by(.x) | map([.x, (.a | y)]))),
      ($p | group_by(.rule.b)[] | block(.[0].rule.b | title_of; unique_by(.x) | map([.x, (.b | y)]))),
      ($p | group_by(.rule.line)[]
       | block("speed-up: " + (.[0].rule.a | title_of) + " over " + (.[0].rule.b | title_of);
               sort_by(.x) | map([.x, .b.ms / .a.ms])));'
# peer_figure NAME FAMILY SELECTION X Y VARS: a lines figure of peer_lines
speedup='our speed-up over the peer (its time / ours)'
peer_figure() {
    "$JQ" -r "$helpers $peer_helpers peer_lines(\"$2\"; $3; \"$4\"; $5)" "$tmp/pairs.json" >"$tmp/$1.tsv"
    SKIP_WHY="no $2 benchmarks paired with a peer by $peers_map (run tools/gpu-run.sh peers and merge its files)"
    grep -q '^"' "$tmp/$1.tsv" || : >"$tmp/$1.tsv"   # no block (only the colours' line): skipped
    draw "$1" lines.gp "$tmp/$1.tsv" "blocks=$(grep -c '^"' "$tmp/$1.tsv" || true);
        y2blocks=$(grep -c '^"speed-up' "$tmp/$1.tsv" || true); y2label='$speedup';
        y2colors='$(sed -n 's/^# y2colors: //p' "$tmp/$1.tsv")'; $6"
}
peer_figure peers_prefill prefill true len .tokens_per_s "title='Prefill: ours against transformers, same device ($peer_dev)';
    xlabel='prompt length (tokens)'; ylabel='prefill throughput (tokens/s)'; logx=2; logy=1; yformat='%.0s%c'"
peer_figure peers_attention flash_chunk '.caps.model == "1"' ctx '.FLOP / 1e12' \
    "title='Attention, 9B heads, 512 rows at the end of the context: ours against torch SDPA ($peer_dev)';
    xlabel='context length (tokens)'; ylabel='TFLOP/s (visible pairs)'; logx=2; logy=0; yformat='%g'"
peer_figure peers_scan 'delta_rule_scan|delta_chunk|delta_chunk_qk16' '.caps.model == "1"' rows .ms \
    "title='The delta rule, 9B heads: our scan and chunked form against fla chunk_gated_delta_rule ($peer_dev)';
    xlabel='rows (tokens)'; ylabel='time (ms)'; logx=2; logy=1; yformat='%g'"

# peers_gemm: TFLOP/s per projection at the most rows, ours and each peer; the speed-ups as points
legend=$("$JQ" -c '[.context, (.context.sources // [])[]] | map(.proj // empty) | first // ""
    | sub(" \\(n x k\\)$"; "") | split(", ") | map(capture("^(?<i>[0-9]+) (?<v>.*)$") | {(.i): .v}) | add // {}' "$results")
"$JQ" -r --argjson legend "$legend" "$peer_helpers"'
  map(select(.rule.a | startswith("gemm_f16/"))) as $g
  | if ($g | length) == 0 then empty else
      ($g | map(.caps.rows | tonumber) | max | tostring) as $rows
      | ($g | map(select(.caps.rows == $rows))) as $p
      | ($p | map(.rule) | unique_by(.line)) as $rules
      | ([("\($rows) rows" | @json), ("ours: " + ($rules[0].a | title_of) | @json)]
         + ($rules | map(.b | title_of | @json)) + ($rules | map("speed-up over " + (.b | title_of) | @json))
         | join("\t")),
        ($p | group_by(.caps.proj | tonumber)[] | . as $row
         | ($rules | map(.line as $l | $row | map(select(.rule.line == $l)) | first)) as $m
         | [($legend[$row[0].caps.proj] // "proj \($row[0].caps.proj)" | @json), $row[0].a.FLOP / 1e12]
           + ($m | map(if . then .b.FLOP / 1e12 else "?" end)) + ($m | map(if . then .b.ms / .a.ms else "?" end))
         | map(tostring) | join("\t"))
    end' "$tmp/pairs.json" >"$tmp/peers_gemm.tsv"
gemm_rows=$(head -1 "$tmp/peers_gemm.tsv" 2>/dev/null | cut -f1 | tr -d '"')
SKIP_WHY="no gemm_f16 benchmarks paired with a peer by $peers_map (run tools/gpu-run.sh peers and merge its files)"
draw peers_gemm bars.gp "$tmp/peers_gemm.tsv" "ncols=$(head -1 "$tmp/peers_gemm.tsv" 2>/dev/null | awk -F'\t' '{print NF}');
    y2cols=$(head -1 "$tmp/peers_gemm.tsv" 2>/dev/null | tr '\t' '\n' | grep -c '^"speed-up over' || true);
    y2label='$speedup'; ylabel='TFLOP/s'; logy=0; yformat='%g';
    title='f16 projections of the 9B shape, $gemm_rows: ours against torch F.linear ($peer_dev)'"
echo "plots: $made figure(s) in $out"
