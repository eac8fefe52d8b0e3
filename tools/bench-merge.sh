#!/bin/sh
# Merges benchmark JSON files (Google Benchmark's output, or earlier merges)
# into one: the benchmarks arrays concatenated in the order given, each entry
# keeping where it ran: `device` (its file's context.device, else host_name),
# `source` (the file's name) and `git_describe`; the context lists every
# file's context under `sources` and the devices under `devices`. Merging is
# associative: a merged file merges again as its sources would.
#
#   tools/bench-merge.sh [-o OUT.json] FILE.json...     (stdout without -o)
#
# Shards of one sweep (tools/sweep.sh, Slurm array tasks, CI matrix jobs) and
# runs on several devices join the same way; bench/results/SCHEMA.md describes
# the result.
set -eu
JQ=${JQ:-jq}
out=""
if [ "${1:-}" = "-o" ]; then
    [ $# -ge 2 ] || { echo "bench-merge: -o needs a file" >&2; exit 2; }
    out=$2
    shift 2
fi
[ $# -ge 1 ] || { echo "usage: tools/bench-merge.sh [-o OUT.json] FILE.json..." >&2; exit 2; }
command -v "$JQ" >/dev/null 2>&1 || { echo "bench-merge: jq not found (tools/deps.sh installs it)" >&2; exit 1; }
for f in "$@"; do
    [ -r "$f" ] || { echo "bench-merge: cannot read $f" >&2; exit 1; }
done
merge='
  [inputs | {file: (input_filename | split("/") | last), doc: .}]
  | map(if (.doc.benchmarks | type) != "array" or (.doc.context | type) != "object"
        then error("\(.file): not a benchmark JSON (no context object or benchmarks array)") else . end)
  | map(.doc.context as $c
        | .file as $file
        | {sources: ($c.sources // [$c + {source: $file}]),
           benchmarks: [.doc.benchmarks[]
                        | . + {device: (.device // $c.device // $c.host_name // "unknown"),
                               source: (.source // $file),
                               git_describe: (.git_describe // $c.git_describe // "unknown")}]})
  | {context: {q35_merged: "true",
               q35_schema: "1",
               devices: ([.[].benchmarks[].device] | unique),
               sources: [.[].sources[]]},
     benchmarks: [.[].benchmarks[]]}'
if [ -n "$out" ]; then
    tmp="$out.tmp.$$"
    "$JQ" -n "$merge" "$@" >"$tmp" && mv "$tmp" "$out" || { rm -f "$tmp"; exit 1; }
else
    "$JQ" -n "$merge" "$@"
fi
