#!/bin/bash
# llama.cpp as a GPU peer, on the file our benchmark measures. On the GPU machine
# (no registry there: the pinned source travels as a tarball made here):
#
#   bench/llama_peer.sh pack                 here, once: the source of ggml-org/llama.cpp
#                                            0c1e570 from the llama-cpp-python 0.3.36 sdist
#                                            (pip download), trimmed to what the CUDA build
#                                            needs, into .llama/llama-0c1e570.tar.xz (~3 MB;
#                                            .llama/ is ignored: carry it)
#   bench/llama_peer.sh build                there: unpack and build llama-bench and
#                                            test-backend-ops for the local GPU into
#                                            $LLAMA_DIR (default /tmp/llama), in the
#                                            background (setsid): resumable across calls,
#                                            `build` again waits for it (at most $WAIT_S s)
#   bench/llama_peer.sh bench SHAPE QUANT FILE
#                                            there: llama-bench on FILE (made by
#                                            `q35 model make --shape SHAPE --quant QUANT`):
#                                            prompts $LP (default 512,4096,16384), flash
#                                            attention on, every layer on the GPU, -ub $LUB
#                                            (2048) -b 8192, and tg128 at depths $LD (512,4096,
#                                            16384); written as the project's JSON
#                                            (bench/llama_peer.py) to $OUT/peer-llama-QUANT.json
#   bench/llama_peer.sh ubsweep FILE         llama-bench at 4096 over -ub 512 .. 8192
#   bench/llama_peer.sh ops SHAPE QUANT FILE there: where llama.cpp's time goes on FILE: its own
#                                            graph's ops (bench/llama_graph_ops.cpp, built as
#                                            q35-graph-ops) for a prompt chunk of $LROWS rows
#                                            (each of "2048 4096 16384" by default) and a decode
#                                            step at that cache, each timed alone by
#                                            test-backend-ops perf, written by bench/llama_ops.py
#                                            to $OUT/peer-llama-ops-ROWS.json and a table
#                                            $OUT/llama-ops-ROWS.md; with $Q35 (our q35)
#                                            set, ours on FILE at ROWS beside it
#                                            (bench/ops_beside.py: $OUT/ops-beside-ROWS.md)
set -u
cd "$(dirname "$0")/.." || exit 1
OUT=${OUT:-$PWD/out}
L=${LLAMA_DIR:-/tmp/llama}
TARBALL=.llama/llama-0c1e570.tar.xz
stage=${1:-}
shift || true
case $stage in
pack)
    mkdir -p .llama && tmp=$(mktemp -d) || exit 1
    python3 -m pip download -q --no-deps --no-binary :all: llama-cpp-python==0.3.36 -d "$tmp" || exit 1
    tar xzf "$tmp"/llama_cpp_python-0.3.36.tar.gz -C "$tmp" || exit 1
    src=$tmp/llama_cpp_python-0.3.36/vendor/llama.cpp
    # only llama-bench among the tools and test-backend-ops among the tests: their CMakeLists cut to
    # those (the repository travels to the GPU machine within 64 MiB, .llama with it)
    printf 'find_package(Threads REQUIRED)\nllama_add_compile_flags()\nadd_subdirectory(llama-bench)\n' >"$src/tools/CMakeLists.txt"
    head -n 117 "$src/tests/CMakeLists.txt" >"$tmp/tests.cmake" && echo 'llama_build(test-backend-ops.cpp)' >>"$tmp/tests.cmake" &&
        mv "$tmp/tests.cmake" "$src/tests/CMakeLists.txt" || exit 1
    sed -i '/add_subdirectory(miniaudio)/d; /add_subdirectory(stb)/d' "$src/vendor/CMakeLists.txt" || exit 1 # mtmd's only
    find "$src/tools" -mindepth 1 -maxdepth 1 -type d ! -name llama-bench -exec rm -rf {} +
    find "$src/tests" -mindepth 1 -maxdepth 1 ! -name CMakeLists.txt ! -name test-backend-ops.cpp -exec rm -rf {} +
    tar cJf "$TARBALL" -C "$tmp/llama_cpp_python-0.3.36/vendor" --exclude='llama.cpp/models/*' \
        --exclude='llama.cpp/examples' --exclude='llama.cpp/benches' --exclude='llama.cpp/conversion' \
        --exclude='llama.cpp/gguf-py' --exclude='llama.cpp/scripts' --exclude='llama.cpp/vendor/miniaudio' \
        --exclude='llama.cpp/vendor/stb' \
        --exclude='llama.cpp/docs' --exclude='llama.cpp/media' --exclude='llama.cpp/tools/server/webui' \
        --exclude='llama.cpp/tools/ui' --exclude='llama.cpp/ggml/src/ggml-sycl' --exclude='llama.cpp/ggml/src/ggml-vulkan' \
        --exclude='llama.cpp/ggml/src/ggml-opencl' --exclude='llama.cpp/ggml/src/ggml-hexagon' \
        --exclude='llama.cpp/ggml/src/ggml-metal' --exclude='llama.cpp/ggml/src/ggml-cann' \
        --exclude='llama.cpp/ggml/src/ggml-musa' --exclude='llama.cpp/ggml/src/ggml-et' llama.cpp || exit 1
    rm -rf "$tmp"
    grep -qx '/.llama/' .git/info/exclude 2>/dev/null || echo '/.llama/' >>.git/info/exclude
    ls -la "$TARBALL" ;;
build)
    if [ ! -f "$L/started" ]; then
        [ -r "$TARBALL" ] || { echo "llama_peer: no $TARBALL (bench/llama_peer.sh pack, here, then carry .llama)"; exit 1; }
        mkdir -p "$L" && tar xJf "$TARBALL" -C "$L" || exit 1
        # ours, built in its tree against its libraries (never part of this project's build)
        cp bench/llama_graph_ops.cpp "$L/llama.cpp/tests/q35-graph-ops.cpp" &&
            echo 'llama_build(q35-graph-ops.cpp)' >>"$L/llama.cpp/tests/CMakeLists.txt" && touch "$L/started" || exit 1
        arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
        (cd "$L/llama.cpp" && setsid nohup bash -c "cmake -S . -B $L/build -G Ninja -DGGML_CUDA=ON \
            -DCMAKE_CUDA_ARCHITECTURES=${arch:-90} -DLLAMA_CURL=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
            -DLLAMA_BUILD_TESTS=ON -DCMAKE_BUILD_TYPE=Release >$L/configure.log 2>&1 &&
            cmake --build $L/build -j${LLAMA_JOBS:-10} --target llama-bench test-backend-ops q35-graph-ops >$L/build.log 2>&1;
            echo \$? >$L/done" </dev/null >/dev/null 2>&1 &)
    fi
    t0=$(date +%s)
    while [ ! -f "$L/done" ] && [ $(($(date +%s) - t0)) -lt "${WAIT_S:-0}" ]; do sleep 5; done
    [ -f "$L/done" ] && echo "llama_peer: build exit $(cat "$L/done")" || echo "llama_peer: still building"
    tail -2 "$L/build.log" 2>/dev/null ;;
bench)
    [ $# -eq 3 ] || { echo "usage: bench/llama_peer.sh bench SHAPE QUANT FILE"; exit 2; }
    [ "$(cat "$L/done" 2>/dev/null)" = 0 ] || { echo "llama_peer: llama.cpp is not built (bench/llama_peer.sh build)"; exit 1; }
    mkdir -p "$OUT"
    raw=$OUT/llama-bench-$1
    "$L/build/bin/llama-bench" -m "$3" -p "${LP:-512,4096,16384}" -n 0 -fa 1 -ngl 99 -ub "${LUB:-2048}" -b 8192 -r 2 \
        -o json >"$raw-$2-pp.json" 2>"$raw-$2.log" || { tail -5 "$raw-$2.log"; exit 1; }
    "$L/build/bin/llama-bench" -m "$3" -p 0 -n 128 -d "${LD:-512,4096,16384}" -fa 1 -ngl 99 -r 2 \
        -o json >"$raw-$2-tg.json" 2>>"$raw-$2.log" || { tail -5 "$raw-$2.log"; exit 1; }
    python3 bench/llama_peer.py --shape "$1" --quant "$2" -o "$OUT/peer-llama-$2.json" "$raw-$2-pp.json" "$raw-$2-tg.json"
    jq -r '.benchmarks[] | select(.aggregate_name == "median") | "\(.name) \(.tokens_per_s | floor) tokens/s"' \
        "$OUT/peer-llama-$2.json" 2>/dev/null ;;
ubsweep)
    for ub in 512 1024 2048 4096 8192; do
        "$L/build/bin/llama-bench" -m "$1" -p 4096 -n 0 -fa 1 -ngl 99 -ub $ub -b 8192 -r 2 -o json 2>/dev/null |
            jq -r ".[] | \"-ub $ub: \(.avg_ts | floor) tokens/s at 4096\""
    done ;;
ops)
    [ $# -eq 3 ] || { echo "usage: bench/llama_peer.sh ops SHAPE QUANT FILE"; exit 2; }
    [ "$(cat "$L/done" 2>/dev/null)" = 0 ] || { echo "llama_peer: llama.cpp is not built (bench/llama_peer.sh build)"; exit 1; }
    mkdir -p "$OUT"
    for rows in ${LROWS:-2048 4096 16384}; do
        g=$OUT/llama-graph-$rows.txt
        "$L/build/bin/q35-graph-ops" -m "$3" -c "$rows" -ub "$rows" -b "$rows" -fa on -o "$g" >"$OUT/llama-graph-$rows.log" 2>&1 ||
            { tail -3 "$OUT/llama-graph-$rows.log"; exit 1; }
        cut -d' ' -f3- "$g" >"$g.cases"
        "$L/build/bin/test-backend-ops" perf -b CUDA0 --test-file "$g.cases" --output sql >"$OUT/llama-ops-$rows.sql" \
            2>"$OUT/llama-ops-$rows.log" || { tail -3 "$OUT/llama-ops-$rows.log"; exit 1; }
        python3 bench/llama_ops.py --shape "$1" --quant "$2" --rows "$rows" --graph "$g" -o "$OUT/peer-llama-ops-$rows.json" \
            --table "$OUT/llama-ops-$rows.md" "$OUT/llama-ops-$rows.sql" && cat "$OUT/llama-ops-$rows.md"
        if [ -n "${Q35:-}" ]; then # ours on the same file and rows, beside it
            "$Q35" run --model "$3" --random "$rows" --decode 64 >"$OUT/q35-run-$rows.log" 2>&1 ||
                { tail -3 "$OUT/q35-run-$rows.log"; exit 1; }
            python3 bench/ops_beside.py --ours "$OUT/q35-run-$rows.log" --llama "$OUT/peer-llama-ops-$rows.json" \
                -o "$OUT/ops-beside-$rows.md" && cat "$OUT/ops-beside-$rows.md"
        fi
    done ;;
*) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
