#!/bin/sh
# Writes a ctest resource spec file with one `gpus` resource per GPU (ids 0 ..
# N-1: the CUDA ordinals as the suites see them, CUDA_VISIBLE_DEVICES
# included), so `ctest -j N --resource-spec-file FILE` runs the GPU suites side
# by side, each alone on its own GPU (each declares RESOURCE_GROUPS gpus:1).
#
#   tools/gpu-resource-spec.sh [--slots S] [COUNT] [-o FILE]     (stdout without -o)
#
# COUNT defaults to the entries of CUDA_VISIBLE_DEVICES when it is set, else to
# the GPUs `nvidia-smi -L` lists. --slots S lets S suites share one GPU.
set -eu
slots=1 count="" out=""
while [ $# -gt 0 ]; do
    case $1 in
    --slots) slots=${2:-}; shift 2 ;;
    -o) out=${2:-}; shift 2 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) count=$1; shift ;;
    esac
done
is_count() { case $1 in ''|*[!0-9]*) return 1 ;; *) [ "$1" -ge 1 ] ;; esac; }
if [ -z "$count" ]; then
    if [ -n "${CUDA_VISIBLE_DEVICES:-}" ]; then
        count=$(echo "$CUDA_VISIBLE_DEVICES" | tr ',' '\n' | grep -c .)
    elif command -v nvidia-smi >/dev/null 2>&1; then
        count=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
    else
        count=0
    fi
    is_count "$count" || { echo "gpu-resource-spec: no GPU found (nvidia-smi -L lists none); give a count" >&2; exit 1; }
fi
is_count "$count" || { echo "gpu-resource-spec: the GPU count must be an integer >= 1, got '$count'" >&2; exit 2; }
is_count "$slots" || { echo "gpu-resource-spec: --slots must be an integer >= 1, got '$slots'" >&2; exit 2; }
spec() {
    printf '{\n  "version": {"major": 1, "minor": 0},\n  "local": [\n    {\n      "gpus": [\n'
    i=0
    while [ "$i" -lt "$count" ]; do
        sep=","
        [ "$i" -eq $((count - 1)) ] && sep=""
        printf '        {"id": "%d", "slots": %d}%s\n' "$i" "$slots" "$sep"
        i=$((i + 1))
    done
    printf '      ]\n    }\n  ]\n}\n'
}
if [ -n "$out" ]; then spec >"$out"; else spec; fi
