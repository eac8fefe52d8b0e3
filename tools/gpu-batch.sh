#!/bin/bash
# One device call's work (the lead's batch): build, the GPU suites of label
# Q35_BATCH_TESTS (default gpu; Q35_TEST_ARGS e.g. "-R name"), the sanitizer
# runs matching Q35_BATCH_SANITIZE, then the benchmarks named in Q35_BATCH_BENCH
# ("exe:filter" words, each to its own numbered JSON); logs into one tarball
# under $OUT (the device returns at most 8 files).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}; logs=$OUT/logs; mkdir -p "$logs"
export LD_LIBRARY_PATH=$PWD/.deps/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
OUT=$logs timeout ${Q35_BUILD_S:-240} tools/gpu-run.sh build || { tar czf "$OUT/logs.tgz" -C "$OUT" logs; exit 1; }
if [ -n "${Q35_BATCH_TESTS:-gpu}" ]; then
    (cd build/gpu && timeout ${Q35_TEST_S:-300} ctest -L "${Q35_BATCH_TESTS:-gpu}" ${Q35_TEST_ARGS:-} -j${Q35_TEST_J:-4} --timeout 240 -V) >"$logs/gpu-tests.log" 2>&1
    grep -E "^ *[0-9]+/[0-9]+ Test|: FAIL|tests passed|Failed" "$logs/gpu-tests.log" | head -80
fi
if [ -n "${Q35_BATCH_SANITIZE:-}" ]; then
    (cd build/gpu && timeout ${Q35_SANITIZE_S:-200} ctest -L sanitize -R "$Q35_BATCH_SANITIZE" -j${Q35_SANITIZE_J:-6} --output-on-failure) >"$logs/sanitize.log" 2>&1
    grep -E "ERROR SUMMARY: [1-9]|Test +#|tests passed" "$logs/sanitize.log" | head -40
fi
i=0
for spec in ${Q35_BATCH_BENCH:-}; do
    exe=${spec%%:*}; filter=${spec#*:}; i=$((i + 1))
    timeout ${Q35_BENCH_S:-150} build/gpu/bench/$exe --benchmark_filter="$filter" --benchmark_min_time=${Q35_MIN_TIME:-0.2} \
        --benchmark_out="$OUT/$i-$exe.json" --benchmark_out_format=json --q35_progress=0 >"$logs/$i-$exe.log" 2>&1
    grep -E "manual_time|ERROR|SKIP|ceilings" "$logs/$i-$exe.log" | sed 's/  */ /g' | head -60
done
tar czf "$OUT/logs.tgz" -C "$OUT" logs && rm -rf "$logs"
