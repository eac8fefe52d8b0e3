#!/bin/bash
# llama.cpp as an oracle: its CPU logits for fixed token ids on models q35 makes,
# committed under data/golden/llama-0c1e570/ for the CPU suite test_llama_golden
# (CI never builds llama.cpp; this script is how the goldens were made).
#
#   tools/llama-oracle.sh build      the pinned llama.cpp (ggml-org/llama.cpp 0c1e570, from
#                                    the llama-cpp-python 0.3.36 sdist on PyPI) built for the CPU
#                                    (GGML_NATIVE=OFF: ggml's portable x86-64 set, AVX2, FMA, F16C, no
#                                    AVX-512, the same on every x86-64 machine; SPEC.md says what its
#                                    activation rounding is, which --act-quant ggml reproduces)
#                                    into $Q35_LLAMA_CACHE (default ~/.cache/q35-llama), and
#                                    tools/llama-oracle/logits.c against its libllama
#   tools/llama-oracle.sh quantize Q35  llama-quantize's Q4_K_M types of the f16 models the suite
#                                    test_generate compares q4_k_m with (quantize/q4_k_m-*.tsv)
#   tools/llama-oracle.sh goldens Q35   for each case of data/golden/llama-0c1e570/cases.tsv: the
#                                    model made by Q35 (the q35 binary) `model make` with the case's
#                                    arguments, llama.cpp's logits of its last two positions, into
#                                    <case>.f32 beside it, and the model file's cksum into <case>.cksum
#
# llama.cpp runs as exactly as it allows (logits.c): an f32 KV cache, its f32
# attention (flash off), one ubatch, 2 threads. The goldens record its numerics:
# on quantized weights ggml rounds the activations too (Q8_K for the K-quants'
# dot products, Q8_0 / Q8_1 for the legacy types, f16 / bf16 for f16 / bf16
# weights); SPEC.md's "llama.cpp's logits" says what the suite holds each case to.
set -eu
cd "$(dirname "$0")/.."
C=${Q35_LLAMA_CACHE:-$HOME/.cache/q35-llama}
G=data/golden/llama-0c1e570
case ${1:-} in
build)
    mkdir -p "$C"
    if [ ! -d "$C/src/llama.cpp" ]; then # the pinned source as the GPU peer takes it (bench/llama_peer.sh pack)
        [ -r .llama/llama-0c1e570.tar.xz ] || bench/llama_peer.sh pack
        mkdir -p "$C/src" && tar xJf .llama/llama-0c1e570.tar.xz -C "$C/src"
    fi
    cmake -S "$C/src/llama.cpp" -B "$C/build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLAMA_CURL=OFF \
        -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=ON \
        -DGGML_NATIVE=OFF -DBUILD_SHARED_LIBS=ON >"$C/configure.log"
    cmake --build "$C/build" -j"$(nproc)" --target llama llama-quantize >"$C/build.log"
    cc -O2 -o "$C/logits" tools/llama-oracle/logits.c -I"$C/src/llama.cpp/include" -I"$C/src/llama.cpp/ggml/include" \
        -L"$C/build/bin" -lllama -Wl,-rpath,"$C/build/bin"
    echo "llama-oracle: built $C/logits" ;;
goldens)
    q35=${2:?usage: tools/llama-oracle.sh goldens Q35}
    [ -x "$C/logits" ] || { echo "llama-oracle: no $C/logits (tools/llama-oracle.sh build)"; exit 1; }
    tmp=$(mktemp -d)
    tail -n +2 "$G/cases.tsv" | while IFS="$(printf '\t')" read -r name args ids _; do
        # shellcheck disable=SC2086 # the case's arguments, split as written
        "$q35" model make $args -o "$tmp/$name.gguf" >/dev/null
        "$C/logits" "$tmp/$name.gguf" "$tmp/$name.all.f32" "$ids"
        vocab=$(( $(stat -c %s "$tmp/$name.all.f32") / 4 / $(echo "$ids" | tr ',' '\n' | wc -l) ))
        tail -c $((2 * vocab * 4)) "$tmp/$name.all.f32" >"$G/$name.f32" # the last two positions
        # the model file's POSIX cksum and size, so a generator that changes what it writes fails the suite plainly
        cksum <"$tmp/$name.gguf" >"$G/$name.cksum"
        echo "llama-oracle: $name: vocab $vocab, $(stat -c %s "$G/$name.f32") bytes"
        rm -f "$tmp/$name.gguf" "$tmp/$name.all.f32"
    done
    rm -rf "$tmp" ;;
quantize)
    q35=${2:?usage: tools/llama-oracle.sh quantize Q35}
    tmp=$(mktemp -d)
    for shape in 0.8b 9b; do
        "$q35" model make --shape $shape --layers 8 --vocab 4096 --quant f16 --seed 3 -o "$tmp/f16.gguf" >/dev/null
        "$C/build/bin/llama-quantize" "$tmp/f16.gguf" "$tmp/q.gguf" Q4_K_M 2 >"$tmp/quantize.log" 2>&1
        { echo "# llama-quantize (0c1e570) Q4_K_M of q35 model make --shape $shape --layers 8 --vocab 4096 --quant f16 --seed 3: name, type"
          "$q35" info "$tmp/q.gguf" | awk '/^tensors:/ { f = 1; next } f && $1 ~ /^(blk\.|[a-z_]+\.weight)/ { print $1 "\t" $2 }' | sort
        } >"$G/quantize/q4_k_m-$shape-8.tsv"
    done
    rm -rf "$tmp" ;;
*) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
