#!/bin/bash
# One device call's work (the lead's batch): build, every GPU suite, then the
# benchmarks named in Q35_BATCH_BENCH ("exe:filter" words); logs into one
# tarball under $OUT, JSON beside it (the device returns at most 8 files).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}; logs=$OUT/logs; mkdir -p "$logs"
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
OUT=$logs timeout ${Q35_BUILD_S:-240} tools/gpu-run.sh build || { tar czf "$OUT/logs.tgz" -C "$OUT" logs; exit 1; }
if [ -n "${Q35_BATCH_TESTS:-gpu}" ]; then
    (cd build/gpu && timeout ${Q35_TEST_S:-300} ctest -L "${Q35_BATCH_TESTS:-gpu}" ${Q35_TEST_ARGS:-} -j${Q35_TEST_J:-4} --timeout 240 -V) >"$logs/gpu-tests.log" 2>&1
    grep -E "^ *[0-9]+/[0-9]+ Test|: FAIL|tests passed|Failed" "$logs/gpu-tests.log" | head -80
fi
for spec in ${Q35_BATCH_BENCH:-}; do
    exe=${spec%%:*}; filter=${spec#*:}
    timeout ${Q35_BENCH_S:-150} build/gpu/bench/$exe --benchmark_filter="$filter" --benchmark_min_time=${Q35_MIN_TIME:-0.2} \
        --benchmark_out="$OUT/$exe.json" --benchmark_out_format=json --q35_progress=0 >"$logs/$exe.log" 2>&1
    grep -E "manual_time|ERROR|SKIP|ceilings" "$logs/$exe.log" | sed 's/  */ /g' | head -60
done
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$logs"
