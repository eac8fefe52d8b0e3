#!/bin/bash
# The README's headline table, written from bench/results/index.tsv and the
# JSON it lists, never typed: for each device, the 9B Q4_K prefill in tokens/s
# (flash attention, CHUNK-row chunks) on the f16 GEMM and on the opt-in fp8
# GEMM, the peers (transformers + fla, `peer_hf`; llama.cpp on the same file,
# `peer_llama`), the f16 / peer ratios, at
# each prompt length where ours was measured; a line under the table names
# each device, its dates and the commits of each column, and the command that
# measures it again.
# Each cell is the newest measurement of its point on that device (by the
# JSON's context.date), the median of its repetitions (plots/points.jq).
# Files of families other than prefill, peer_hf and llama_peer (e.g. `prefill-ab`, an
# A/B run filed so) are left out.
#
#   tools/headline.sh [--results DIR] [--chunk ROWS]            the table, to stdout
#   tools/headline.sh [...] --check FILE   exit 1 when FILE's table (between
#                   <!-- headline:begin --> and <!-- headline:end -->) differs, with the diff
#   tools/headline.sh [...] --write FILE   FILE's table replaced by the one written now
#
#   --chunk ROWS    the rows a chunk of the points shown (default 8192: the f16
#                   and fp8 paths' default, model/README.md)
#   --decode        the decode step's table instead (between <!-- decode:begin -->
#                   and <!-- decode:end -->): the 9B Q4_K decode in tokens/s at each
#                   cache where ours was measured, ours on the fast path (the decode
#                   graph, 8-bit activations) and with the exact GEMVs (the graph),
#                   llama.cpp's tg on the same file, the fast path / llama.cpp; points
#                   with decode-fuse or decode-overlap on, and older files without the
#                   switches' counters, are left out (decode-split, decode-act-q8 and
#                   decode-pdl are the default's: a point before one was the default is
#                   the default of its day, the A/B runs filed as prefill-ab, and the
#                   newest point of a cell wins)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
JQ=${JQ:-jq}
results=$root/bench/results
chunk=8192 mode=print target="" kind=prefill
while [ $# -gt 0 ]; do
    case $1 in
    --results) results=$2; shift 2 ;;
    --chunk) chunk=$2; shift 2 ;;
    --decode) kind=decode; shift ;;
    --check) mode=check target=$2; shift 2 ;;
    --write) mode=write target=$2; shift 2 ;;
    -h | --help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "headline: unknown argument $1 (--help)" >&2; exit 2 ;;
    esac
done
command -v "$JQ" >/dev/null 2>&1 || { echo "headline: jq not found (tools/deps.sh installs it)" >&2; exit 1; }
[ -r "$results/index.tsv" ] || { echo "headline: no $results/index.tsv" >&2; exit 1; }
begin="<!-- ${kind/prefill/headline}:begin -->" end="<!-- ${kind/prefill/headline}:end -->"

# The points: device, time, commit, row, len, tokens/s, the device's name, one TSV line each
points() {
    tail -n +2 "$results/index.tsv" | while IFS="$(printf '\t')" read -r _ dev commit family file _; do
        case "+$family+" in *+prefill+* | *+peer_hf+* | *+llama_peer+*) ;; *) continue ;; esac
        "$JQ" -f "$root/plots/points.jq" "$results/$file" | "$JQ" -r --slurpfile doc "$results/$file" \
            --arg dev "$dev" --arg commit "$commit" --arg chunk "$chunk" --arg kind "$kind" '
          ($doc[0].context | .date // ([.sources[]?.date] | max) // "") as $t
          | .[] | select(.tokens_per_s != null) | .axes as $a
          | if $kind == "decode" then
              ((.decode_fuse // 0) + (.decode_overlap // 0)) as $others
              | (if .family == "decode" and $a.shape == "9b" and $a.quant == "q4_k" and .decode_graph == 1 and $others == 0
                    and .decode_q8 != null then (if .decode_q8 == 1 then "ours_q8" else "ours_exact" end)
                 elif .family == "peer_llama/decode" and $a.shape == "9b" and $a.quant == "q4_k" then "peer_llama"
                 else empty end) as $row
              | [$dev, $t, $commit, $row, $a.ctx, .tokens_per_s, .device] | @tsv
            else
            (if .family == "prefill" and $a.shape == "9b" and $a.quant == "q4_k" and $a.attn == "flash"
                and $a.chunk == $chunk and ($a.gemm == "f16" or $a.gemm == "fp8") then "ours_" + $a.gemm
             elif .family == "peer_hf" and $a.shape == "9b" and $a.dtype == "bf16" and $a.layers == null then "peer_hf"
             elif .family == "peer_llama/prefill" and $a.shape == "9b" and $a.quant == "q4_k" then "peer_llama"
             else empty end) as $row
          | [$dev, $t, $commit, $row, $a.len, .tokens_per_s, .device] | @tsv end'
    done
}

# table: the markdown, from the points on stdin: a block of rows a device (the
# one with the newest point first), a column a length where ours was measured;
# then a line: each device's name, dates and commits, the command
table() {
    "$JQ" -L "$root/plots" -R -s -r --arg chunk "$chunk" --arg kind "$kind" 'include "fmt";
      def x: (. * 100 | round) as $c | "\($c / 100 | floor).\($c % 100 | tostring | if length < 2 then "0" + . else . end)x";
      def lenlabel: tonumber | if . >= 1024 and . % 1024 == 0 then "\(. / 1024)k" else tostring end;
      def cell($r; $l): map(select(.row == $r and .len == $l)) | first;
      def uniq: reduce .[] as $c ([]; if index([$c]) then . else . + [$c] end);
      [split("\n")[] | select(length > 0) | split("\t")
       | {dev: .[0], t: .[1], commit: .[2], row: .[3], len: .[4], v: (.[5] | tonumber), name: .[6]}]
      | group_by(.dev) | map(group_by([.row, .len]) | map(sort_by(.t) | last))
      | map(select(any(.[]; .row | startswith("ours_"))))
      | sort_by(map(.t) | max) | reverse
      | (map(.[] | select(.row | startswith("ours_")) | .len) | unique | sort_by(tonumber)) as $lens
      | map(map(select(.len as $l | $lens | index([$l])))) as $devs
      | ["| tokens/s | " + ($lens | map(lenlabel) | join(" | ")) + " |", "|---|" + ($lens | map("---|") | join(""))]
        + [$devs[] as $p | ($p[0].dev | ascii_upcase) as $d
           | def row($name; $r): if any($p[]; .row == $r)
               then "| \($d), \($name) | " + ($lens | map(. as $l | $p | cell($r; $l) | if . then .v | tokens_k else "" end) | join(" | ")) + " |"
               else empty end;
             def ratio($name; $r): (if $kind == "decode" then ["ours_q8", "fast path"] else ["ours_f16", "f16"] end) as [$b, $bn]
               | if any($p[]; .row == $b) and any($p[]; .row == $r) then
                "| \($d), \($bn) / \($name) | " + ($lens | map(. as $l | [($p | cell($b; $l)), ($p | cell($r; $l))]
                  | if .[0] and .[1] then .[0].v / .[1].v | x else "" end) | join(" | ")) + " |" else empty end;
             if $kind == "decode" then
               row("ours, fast path (8-bit activations)"; "ours_q8"), row("ours, exact GEMVs"; "ours_exact"),
               row("llama.cpp tg, same file"; "peer_llama"), ratio("llama.cpp"; "peer_llama")
             else
               row("ours, f16 GEMM"; "ours_f16"), row("ours, fp8 GEMM (opt-in)"; "ours_fp8"), row("transformers + fla"; "peer_hf"),
               row("llama.cpp, same file"; "peer_llama"), ratio("transformers + fla"; "peer_hf"),
               ratio("llama.cpp"; "peer_llama")
             end]
        + ["",
           ([$devs[] as $p
             | "\($p[0].dev | ascii_upcase): \($p[0].name), " + ([$p[].t[0:10]] | unique | if length == 1 then .[0] else "\(first) to \(last)" end)
               + ", commits " + ([$lens[] as $l | {l: $l, c: ([($p | cell("ours_f16"; $l)), ($p | cell("ours_fp8"; $l)), ($p | cell("peer_hf"; $l)),
                     ($p | cell("ours_q8"; $l)), ($p | cell("ours_exact"; $l)), ($p | cell("peer_llama"; $l))]
                   | map(select(.) | .commit) | uniq | join(" / "))} | select(.c != "")]
                  | reduce .[] as $e ([]; if length > 0 and .[-1].c == $e.c then .[-1].ls += [$e.l] else . + [{c: $e.c, ls: [$e.l]}] end)
                  | map((.ls | if length == 1 then (.[0] | lenlabel) else "\(.[0] | lenlabel)-\(.[-1] | lenlabel)" end) + " " + .c)
                  | join(", ")) + "."] | join(" "))
           + if $kind == "decode" then
               " The 9B Q4_K decode step at a cache of each length, tokens/s (the first step after the prefill untimed);"
               + " each cell the newest run of its point on its device (from `bench/results/index.tsv` by `tools/headline.sh --decode`)."
               + " Again: `build/default/bench/bench_prefill --benchmark_filter='"'"'^decode/shape:9b/quant:q4_k/ctx:(\($lens | join("|")))/'"'"'"
               + " --benchmark_repetitions=2` (and with `Q35_SWITCHES=decode-q8=off`); llama.cpp: `bench/llama_peer.sh bench`"
               + " (llama-bench tg128 at those depths)"
             else
               " The 9B Q4_K prefill, flash attention, \($chunk)-row chunks, tokens/s; each cell the newest run of its point on its device"
               + " (from `bench/results/index.tsv` by `tools/headline.sh`). Again: `build/default/bench/bench_prefill"
               + " --benchmark_filter='"'"'^prefill/shape:9b/quant:q4_k/gemm:(f16|fp8)/attn:flash/chunk:\($chunk)/len:(\($lens | join("|")))/'"'"'"
               + " --benchmark_repetitions=3; python3 bench/hf_peer.py --shape 9b --lengths \($lens | join(","))`;"
               + " llama.cpp: `bench/llama_peer.sh` (llama-bench on the same file)"
             end]
      | join("\n")'
}

new=$(points | table)
[ -n "$new" ] || { echo "headline: no $kind points in $results/index.tsv" >&2; exit 1; }
case $mode in
print) printf '%s\n' "$new" ;;
check | write)
    [ -r "$target" ] || { echo "headline: cannot read $target" >&2; exit 2; }
    grep -qxF "$begin" "$target" && grep -qxF "$end" "$target" ||
        { echo "headline: $target has no $begin ... $end" >&2; exit 2; }
    old=$(awk -v b="$begin" -v e="$end" '$0 == e { f = 0 } f { print } $0 == b { f = 1 }' "$target")
    if [ "$mode" = check ]; then
        [ "$old" = "$new" ] && { echo "headline: $target's table is the one the index gives"; exit 0; }
        echo "headline: $target's table differs from the index's (tools/headline.sh --write $target):" >&2
        diff <(printf '%s\n' "$old") <(printf '%s\n' "$new") >&2 || true
        exit 1
    fi
    printf '%s\n' "$new" >"$target.headline"
    awk -v b="$begin" -v e="$end" -v t="$target.headline" '
      $0 == e { while ((getline l < t) > 0) print l; f = 0 } !f { print } $0 == b { f = 1 }' "$target" >"$target.new"
    rm -f "$target.headline"
    mv "$target.new" "$target"
    echo "headline: wrote $target's table"
    ;;
esac
