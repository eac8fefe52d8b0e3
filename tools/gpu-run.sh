#!/bin/bash
# On a machine with a GPU and no package registry: unpack Google Benchmark from
# .deps (apt-get download libbenchmark-dev libbenchmark1debian; a carried jq the
# same way), build for the local GPU, and run the stages named: build, test
# (ctest -L gpu), cpu (ctest -L cpu), bench (the benchmarks to JSON), sanitize
# (compute-sanitizer memcheck and racecheck over the GPU suites), seeds (the
# sweep under Q35_SEEDS_N random seeds, default 4, four at once, only the models
# of Q35_SWEEP_MODELS, default 9b-4: tools/model-seeds.sh), model (the CUDA
# model's suites, ctest -L model, then q35 run on the full 9B shape, Q4_K, a
# 4096-token prompt, the default fast path and --exact), peers (ours and the peers side by side,
# below). Logs and results go to $OUT (default ./out).
# bench: Q35_BENCHES picks the executables (default bench_kernels, bench_attention,
# bench_linear, and bench_flash_sm90 where built), Q35_BENCH_FILTER the points, Q35_REPS the repetitions,
# Q35_BENCH_MIN_TIME (e.g. 0.1) the time each point runs.
# peers: installs the wheels carried in .whl/ (flash-linear-attention, fla-core;
# bench/README.md, "Peers") into a private folder, then runs, in this order, the parts of
# Q35_PEER_PARTS (default "ours peers hf"): ours = our benchmarks at the points
# bench/peers.map pairs with a peer (its first column; Q35_REPS repetitions of
# Q35_BENCH_MIN_TIME, default 0.1 s; Q35_PEER_BENCHES the executables, default
# all) into peers-ours-*.json; peers =
# bench/peers.py, each point timed for at most Q35_PEER_SECONDS (default 0.5) into
# peers.json; hf = bench/hf_peer.py on the 9B shape, each length at most
# Q35_PEER_HF_SECONDS (default 20) into peer-hf.json. With jq: the merges
# peers-ours.json, peers-peers.json and peers-all.json (for plots/plot.sh), and
# tools/bench-compare.sh --map bench/peers.map into peers-compare.txt.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
root=$PWD/.deps/root
for f in .deps/*.deb; do [ -f "$f" ] && dpkg -x "$f" "$root"; done
export LD_LIBRARY_PATH=$root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# first on PATH: the carried jq must meet the carried libjq that LD_LIBRARY_PATH puts first (a machine's
# own newer jq fails against it: undefined symbol jq_set_stderr_cb)
export PATH=$root/usr/bin:$PATH
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
    bench) sm90=; [ -x $build/bench/bench_flash_sm90 ] && sm90=bench_flash_sm90 # built with the sm_90a code
           for b in ${Q35_BENCHES:-bench_kernels bench_attention bench_linear $sm90}; do
               $build/bench/$b --benchmark_out="$OUT/$b.json" --benchmark_out_format=json \
                   --benchmark_filter="${Q35_BENCH_FILTER:-.}" ${Q35_BENCH_MIN_TIME:+--benchmark_min_time=$Q35_BENCH_MIN_TIME} \
                   --benchmark_repetitions=${Q35_REPS:-3} --benchmark_report_aggregates_only=true \
                   >"$OUT/$b.log" 2>&1 || rc=1
               grep -E "median|ERROR|SKIP" "$OUT/$b.log" | head -80
           done ;;
    model) (cd $build && ctest -L model -V -j1) >"$OUT/model-tests.log" 2>&1 || rc=1
           grep -E ": (FAIL|SKIP)|: == |tests passed|Failed|Total Test" "$OUT/model-tests.log" | tail -40
           for g in fast exact; do # the default (the fast path), then --exact
               $build/cli/q35 run --shape 9b --quant q4_k --random 4096 $([ $g = exact ] && echo --exact) \
                   >"$OUT/run-9b-4096-$g.log" 2>&1 || rc=1
               grep -E "^(path|tier|plan|load|phases|prefill)|tokens/s|q35 cuda" "$OUT/run-9b-4096-$g.log"
           done ;;
    seeds) tools/model-seeds.sh -n "${Q35_SEEDS_N:-4}" -j 4 -m "${Q35_SWEEP_MODELS:-9b-4}" -d "$OUT/seeds" -- \
               $build/parity/model/test_cuda_model_sweep >"$OUT/seeds.txt" 2>&1 || rc=1
           cat "$OUT/seeds.txt" ;;
    sanitize) (cd $build && ctest -L sanitize --output-on-failure -j4) >"$OUT/sanitize.log" 2>&1 || rc=1
              grep -E "ERROR SUMMARY|Test +#|tests passed" "$OUT/sanitize.log" | tail -30 ;;
    peers) . tools/peer-site.sh "$OUT/peers-pip.log"
           for part in ${Q35_PEER_PARTS:-ours peers hf}; do
               echo "peers: $part from $(date +%T)"
               case $part in
               ours) filter=$(sed 's/#.*//' bench/peers.map | awk 'NF == 2 {print $1}' | sed 's/{[a-z_]*}/[^\/]+/g' | sort -u | paste -sd'|' -)
                     sm90=; [ -x $build/bench/bench_flash_sm90 ] && sm90=bench_flash_sm90
                     for b in ${Q35_PEER_BENCHES:-bench_attention bench_kernels bench_linear bench_prefill $sm90}; do
                         $build/bench/$b --benchmark_filter="^($filter)/manual_time" --benchmark_out="$OUT/peers-ours-$b.json" \
                             --benchmark_out_format=json --benchmark_min_time=${Q35_BENCH_MIN_TIME:-0.1} \
                             --benchmark_repetitions=${Q35_REPS:-3} --benchmark_report_aggregates_only=true \
                             >"$OUT/peers-ours-$b.log" 2>&1 || rc=1
                     done ;;
               peers) python3 bench/peers.py --seconds "${Q35_PEER_SECONDS:-0.5}" -o "$OUT/peers.json" 2>"$OUT/peers.log" || rc=1
                      echo "peers: $(grep -c ': skipped: ' "$OUT/peers.log") points skipped; reasons:"
                      sed -n 's/.*: skipped: //p' "$OUT/peers.log" | sort | uniq -c | head -20 ;;
               hf) python3 bench/hf_peer.py --shape 9b --reps "${Q35_REPS:-3}" --max-seconds "${Q35_PEER_HF_SECONDS:-20}" \
                       -o "$OUT/peer-hf.json" 2>"$OUT/peer-hf.log" || rc=1
                   grep "hf_peer:" "$OUT/peer-hf.log" | tail -12 ;;
               *) echo "peers: unknown part $part (ours, peers, hf)"; rc=1 ;;
               esac
           done
           echo "peers: done at $(date +%T)"
           if command -v jq >/dev/null 2>&1; then
               ls "$OUT"/peers-ours-*.json >/dev/null 2>&1 && tools/bench-merge.sh -o "$OUT/peers-ours.json" "$OUT"/peers-ours-*.json
               peer_files=$(ls "$OUT"/peers.json "$OUT"/peer-hf.json 2>/dev/null)
               [ -z "$peer_files" ] || tools/bench-merge.sh -o "$OUT/peers-peers.json" $peer_files
               if [ -f "$OUT/peers-ours.json" ] && [ -f "$OUT/peers-peers.json" ]; then
                   tools/bench-merge.sh -o "$OUT/peers-all.json" "$OUT/peers-ours.json" "$OUT/peers-peers.json"
                   tools/bench-compare.sh --map bench/peers.map "$OUT/peers-ours.json" "$OUT/peers-peers.json" \
                       >"$OUT/peers-compare.txt" 2>&1
                   tail -1 "$OUT/peers-compare.txt"
               fi
           else
               echo "peers: no jq here: merge and compare the JSON in $OUT elsewhere (bench/README.md, Peers)"
           fi ;;
    *) echo "unknown stage $stage"; exit 2 ;;
    esac
done
exit $rc
