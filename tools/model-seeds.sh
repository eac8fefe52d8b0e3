#!/bin/sh
# Runs a CUDA model suite once per seed and summarises how close each path came
# to its bound: the way to set or check a tolerance from measurements rather
# than one seed (a bound that holds at one seed and fails at the next is not a
# bound). Each run gets Q35_SEED (and, with -m, Q35_SWEEP_MODELS); their logs
# go to DIR/seed-<S>.log; then, per (model, path), the worst rel L2 of a
# position's logits and of the state over every seed, with the seed that gave
# it, and per seed its PASS/FAIL counts. Reads the suites' one-line verdicts
# (parity/model/cuda_model_cases.c: "<model> ... <path>: logits ... rel L2 X,
# argmax ...; state ..., rel L2 Y ..."). Exits 1 when any run failed.
#
#   tools/model-seeds.sh [-n N | -s S1,S2,..] [-j J] [-m MODELS] [-d DIR] -- SUITE [ARGS]
#   tools/model-seeds.sh --summary LOG...     (only the summary, of logs already written)
#
#   -n N       N random seeds (default 4)
#   -s LIST    these seeds (decimal or 0x hex, comma-separated)
#   -j J       runs at a time (default 1: one GPU; the suites are small, 4 fit an H200)
#   -m MODELS  Q35_SWEEP_MODELS for test_cuda_model_sweep (e.g. 9b-4)
#   -d DIR     where the logs go (default build/model-seeds/)
#
# e.g. the sweep's 9B-4 model over 4 seeds, 4 at once (about 330 s on an H200):
#   tools/model-seeds.sh -n 4 -j 4 -m 9b-4 -- build/gpu/parity/model/test_cuda_model_sweep
set -u

# summary LOG...: the table described above, from the verdict lines of the logs.
summary() {
    awk '
    function num(s, key,   i, r) { i = index(s, key); if (!i) return -1; r = substr(s, i + length(key)); sub(/[,;: ].*/, "", r); return r + 0 }
    FNR == 1 { seed = FILENAME; sub(/.*seed-/, "", seed); sub(/\.log$/, "", seed); seeds[++ns] = seed }
    /^(PASS|FAIL) / {
        verdict[seed, $1]++
        path = ""
        for (i = 3; i <= NF; i++) { f = $i; sub(/[:,]$/, "", f)
            if (f ~ /^(f32|flash|fp8|f16)\// || f == "deterministic") { path = f; break } }
        if (path == "" || index($0, ": logits") == 0) next
        split($0, parts, "; state")
        l = num(parts[1], "rel L2 "); st = num(parts[2], "rel L2 ")
        key = $2 " " path
        if (!(key in lw)) { keys[++nk] = key; lw[key] = -1; sw[key] = -1 }
        n[key]++
        if (l > lw[key]) { lw[key] = l; lseed[key] = seed }
        if (st > sw[key]) { sw[key] = st; sseed[key] = seed }
        if ($1 == "FAIL") fails[key]++
    }
    END {
        printf "%-8s %-16s %6s %6s  %-11s %-20s %-11s %s\n", "model", "path", "cases", "failed", "logits L2", "at seed", "state L2", "at seed"
        for (k = 1; k <= nk; k++) { key = keys[k]; split(key, kp, " ")
            printf "%-8s %-16s %6d %6d  %-11.3e %-20s %-11.3e %s\n", kp[1], kp[2], n[key], fails[key], lw[key], lseed[key], sw[key], sseed[key] }
        for (i = 1; i <= ns; i++)
            printf "seed %-20s %d passed, %d failed\n", seeds[i], verdict[seeds[i], "PASS"], verdict[seeds[i], "FAIL"]
    }' "$@"
}

if [ "${1:-}" = --summary ]; then
    shift
    [ $# -gt 0 ] || { echo "model-seeds: --summary needs log files" >&2; exit 2; }
    summary "$@"
    exit 0
fi

n=4 seeds="" jobs=1 models="" dir=build/model-seeds
while [ $# -gt 0 ]; do
    case $1 in
    -n) n=${2:?-n needs a count}; shift 2 ;;
    -s) seeds=$(echo "${2:?-s needs seeds}" | tr , ' '); shift 2 ;;
    -j) jobs=${2:?-j needs a count}; shift 2 ;;
    -m) models=${2:?-m needs model labels}; shift 2 ;;
    -d) dir=${2:?-d needs a folder}; shift 2 ;;
    --) shift; break ;;
    *) echo "model-seeds: unknown option '$1' (see the header of $0)" >&2; exit 2 ;;
    esac
done
[ $# -gt 0 ] || { echo "model-seeds: no suite given (after --)" >&2; exit 2; }
case $n$jobs in *[!0-9]*) echo "model-seeds: -n and -j take whole numbers (got '$n', '$jobs')" >&2; exit 2 ;; esac
if [ "$n" -lt 1 ] || [ "$jobs" -lt 1 ]; then echo "model-seeds: -n and -j must be at least 1" >&2; exit 2; fi
[ -x "$1" ] || { echo "model-seeds: '$1' is not an executable suite" >&2; exit 2; }
if [ -z "$seeds" ]; then
    seeds=$(od -An -N$((8 * n)) -tx8 /dev/urandom | tr -s ' \n' '\n' | sed '/^$/d; s/^/0x/')
fi
for s in $seeds; do
    case $s in 0x[0-9a-fA-F]*|[0-9]*) ;; *) echo "model-seeds: seed '$s' is not a number" >&2; exit 2 ;; esac
done
mkdir -p "$dir" || exit 1
rc=0 running=0 pids=""
for s in $seeds; do
    log=$dir/seed-$s.log
    echo "model-seeds: seed $s -> $log"
    ( if [ -n "$models" ]; then export Q35_SWEEP_MODELS="$models"; fi
      Q35_SEED=$s "$@" >"$log" 2>&1 ) &
    pids="$pids $!" running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
        for p in $pids; do wait "$p" || rc=1; done
        pids="" running=0
    fi
done
for p in $pids; do wait "$p" || rc=1; done
logs=""
for s in $seeds; do logs="$logs $dir/seed-$s.log"; done
# shellcheck disable=SC2086 # the logs' names hold no spaces (seeds are numbers)
summary $logs
[ $rc -eq 0 ] || echo "model-seeds: at least one run failed (its log says which cases)"
exit $rc
