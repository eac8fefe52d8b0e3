#!/bin/bash
# On a machine with a GPU and no package registry: unpack Google Benchmark from
# .deps (apt-get download libbenchmark-dev libbenchmark1debian), build for the
# local GPU, and run the stages named: build, test (ctest -L gpu), cpu (ctest -L
# cpu), bench (the benchmarks to JSON), sanitize (compute-sanitizer memcheck and
# racecheck over the GPU suites), model (the CUDA model's suites, ctest -L model,
# then q35 run on the full 9B shape, Q4_K, a 4096-token prompt, f16 and f32 GEMM).
# Logs and results go to $OUT (default ./out).
# bench: Q35_BENCHES picks the executables (default all three), Q35_BENCH_FILTER
# the points, Q35_REPS the repetitions, Q35_BENCH_MIN_TIME (e.g. 0.1s) the time
# each point runs.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
root=$PWD/.deps/root
for f in .deps/*.deb; do [ -f "$f" ] && dpkg -x "$f" "$root"; done
export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -1 | tr -d .)
build=build/gpu
rc=0
for stage in "$@"; do
    case $stage in
    build)
        cmake -S . -B $build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DQ35_WERROR=ON \
            -DCMAKE_CUDA_ARCHITECTURES=${arch:-90} -Dbenchmark_DIR=$root/usr/lib/x86_64-linux-gnu/cmake/benchmark \
            >"$OUT/configure.log" 2>&1 && cmake --build $build -j"$(nproc)" >"$OUT/build.log" 2>&1 ||
            { echo "build failed"; tail -30 "$OUT/build.log" "$OUT/configure.log"; exit 1; } ;;
    test) (cd $build && ctest -L gpu -V -j1) >"$OUT/gpu-tests.log" 2>&1 || rc=1
          grep -E ": (FAIL|SKIP)|: == |tests passed|Failed" "$OUT/gpu-tests.log" | tail -60 ;;
    cpu) (cd $build && ctest -L cpu -j"$(nproc)" -E fuzz) >"$OUT/cpu-tests.log" 2>&1 || rc=1
         grep -E "tests passed|Failed|\*\*\*" "$OUT/cpu-tests.log" | tail -10 ;;
    bench) for b in ${Q35_BENCHES:-bench_kernels bench_attention bench_linear}; do
               $build/bench/$b --benchmark_out="$OUT/$b.json" --benchmark_out_format=json \
                   --benchmark_filter="${Q35_BENCH_FILTER:-.}" ${Q35_BENCH_MIN_TIME:+--benchmark_min_time=$Q35_BENCH_MIN_TIME} \
                   --benchmark_repetitions=${Q35_REPS:-3} --benchmark_report_aggregates_only=true \
                   >"$OUT/$b.log" 2>&1 || rc=1
               grep -E "median|ERROR|SKIP" "$OUT/$b.log" | head -80
           done ;;
    model) (cd $build && ctest -L model -V -j1) >"$OUT/model-tests.log" 2>&1 || rc=1
           grep -E ": (FAIL|SKIP)|: == |tests passed|Failed|Total Test" "$OUT/model-tests.log" | tail -40
           for g in f16 f32; do
               $build/cli/q35 run --shape 9b --quant q4_k --random 4096 --gemm $g >"$OUT/run-9b-4096-$g.log" 2>&1 || rc=1
               grep -E "^(path|plan|load|phases|prefill)|tokens/s|q35 cuda" "$OUT/run-9b-4096-$g.log"
           done ;;
    sanitize) (cd $build && ctest -L sanitize --output-on-failure -j4) >"$OUT/sanitize.log" 2>&1 || rc=1
              grep -E "ERROR SUMMARY|Test +#|tests passed" "$OUT/sanitize.log" | tail -30 ;;
    *) echo "unknown stage $stage"; exit 2 ;;
    esac
done
exit $rc
