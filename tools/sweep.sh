#!/bin/sh
# Runs one benchmark executable sharded over this host's GPUs: one process per
# GPU, process j with `--device D_j --q35_shard=S/N` (the shim runs only the
# selected points whose index is S modulo N, in a stable order), each writing
# its own JSON and log; then merges the shards (tools/bench-merge.sh) into one
# file. Exits non-zero when a shard failed (its log is printed; the merge still
# holds the shards that finished). Where jq is missing the shards stay in DIR
# and the merge command to run elsewhere is printed.
#
#   tools/sweep.sh [--gpus G | --devices 0,2,3] [--shards N --first S] [-o OUT.json]
#                  [--dir DIR] -- BENCH [its flags: --benchmark_filter=..., --benchmark_repetitions=...]
#
#   --gpus G        devices 0 .. G-1 (default: the entries of CUDA_VISIBLE_DEVICES,
#                   else the GPUs `nvidia-smi -L` lists)
#   --devices LIST  these device ordinals, one shard each
#   --shards N      the sweep's total shards across every host (default: this host's GPUs)
#   --first S       this host runs shards S .. S+G-1 (default 0)
#   -o OUT.json     the merged file (default out/<device>-<bench>-<git describe>.json,
#                   <bench> the executable's name without bench_; tools/results-file.sh
#                   files it under bench/results/, as the last line says)
#   --dir DIR       where the shards' JSON and logs go (default build/sweep-<bench>/)
#
# Across hosts, the same shards run as the tasks of a Slurm job array (each
# task one GPU, device 0 of its CUDA_VISIBLE_DEVICES) and one merge joins them:
#   sbatch --array=0-15 --gpus=1 --wrap 'tools/sweep.sh --gpus 1 --shards 16 \
#       --first $SLURM_ARRAY_TASK_ID -o out/shard-$SLURM_ARRAY_TASK_ID.json -- build/default/bench/bench_prefill'
#   tools/bench-merge.sh -o out/h200-prefill-$(git describe --always).json out/shard-*.json
set -eu
here=$(cd "$(dirname "$0")" && pwd)
gpus="" devices="" shards="" first=0 out="" dir=""
while [ $# -gt 0 ]; do
    case $1 in
    --gpus) gpus=$2; shift 2 ;;
    --devices) devices=$(echo "$2" | tr ',' ' '); shift 2 ;;
    --shards) shards=$2; shift 2 ;;
    --first) first=$2; shift 2 ;;
    -o) out=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    --) shift; break ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "sweep: unknown option '$1' (the benchmark and its flags come after --)" >&2; exit 2 ;;
    esac
done
[ $# -ge 1 ] || { echo "usage: tools/sweep.sh [options] -- BENCH [flags] (--help)" >&2; exit 2; }
bench=$1
shift
[ -x "$bench" ] || { echo "sweep: $bench is not an executable" >&2; exit 2; }
is_int() { case $1 in ''|*[!0-9]*) return 1 ;; esac; }
if [ -z "$devices" ]; then
    if [ -z "$gpus" ]; then
        if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
            gpus=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
        else
            gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
        fi
    fi
    is_int "$gpus" && [ "$gpus" -ge 1 ] || { echo "sweep: no GPU found; give --gpus G or --devices LIST" >&2; exit 2; }
    devices=$(seq 0 $((gpus - 1)) | tr '\n' ' ')
fi
count=$(echo $devices | wc -w)
[ -n "$shards" ] || shards=$count
for v in $devices $shards $first; do
    is_int "$v" || { echo "sweep: '$v' is not a whole number" >&2; exit 2; }
done
[ $((first + count)) -le "$shards" ] ||
    { echo "sweep: shards $first..$((first + count - 1)) do not fit in --shards $shards" >&2; exit 2; }

name=$(basename "$bench")
name=${name#bench_}
[ -n "$out" ] || out="out/$name.json" # renamed below, once the device is known
[ -n "$dir" ] || dir="build/sweep-$name"
mkdir -p "$dir" "$(dirname "$out")"

echo "sweep: $bench over devices [$(echo $devices)] as shards $first..$((first + count - 1)) of $shards; shards in $dir"
pids="" s=$first
for d in $devices; do
    "$bench" --device "$d" --q35_shard="$s/$shards" --benchmark_out="$dir/shard-$s.json" \
        --benchmark_out_format=json "$@" >"$dir/shard-$s.log" 2>&1 &
    pids="$pids $!:$s"
    s=$((s + 1))
done
rc=0 done_files=""
for p in $pids; do
    if wait "${p%%:*}"; then
        done_files="$done_files $dir/shard-${p#*:}.json"
    else
        echo "sweep: shard ${p#*:} failed; the end of its log ($dir/shard-${p#*:}.log):" >&2
        tail -20 "$dir/shard-${p#*:}.log" >&2
        rc=1
    fi
done
[ -n "$done_files" ] || { echo "sweep: no shard finished" >&2; exit 1; }
JQ=${JQ:-jq}
if ! command -v "$JQ" >/dev/null 2>&1; then
    echo "sweep: jq not found here: the shards are in $dir; merge them where jq is:" >&2
    echo "  tools/bench-merge.sh -o out/<device>-$name-<commit>.json$done_files" >&2
    exit $rc
fi
if [ "$out" = "out/$name.json" ]; then
    first_file=${done_files# }
    first_file=${first_file%% *}
    device=$("$JQ" -r '.context.device // .context.host_name // "unknown"' "$first_file" |
        tr 'A-Z' 'a-z' | sed 's/^nvidia //; s/[^a-z0-9.]\{1,\}/-/g; s/^-//; s/-$//')
    describe=$("$JQ" -r '.context.git_describe // "unknown"' "$first_file")
    out="out/$device-$name-$describe.json"
fi
# shellcheck disable=SC2086
"$here/bench-merge.sh" -o "$out" $done_files
echo "sweep: wrote $out ($("$JQ" '.benchmarks | length' "$out") entries from $(echo "$done_files" | wc -w | tr -d ' ') shard(s))"
echo "sweep: to keep it: tools/results-file.sh --commit <the tree's commit> --what '<what it shows>' $out"
exit $rc
