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
#   tools/llama-oracle.sh quantize Q35  llama-quantize's per-tensor types (its --dry-run: the types
#                                    it would write, without quantizing) of f16 models Q35 makes, for
#                                    every named ftype the generator mirrors and, with --pure, every
#                                    one-type mix: quantize/<mix>-<model>.tsv, the ftype's number
#                                    (llama.h) in its first line; test_generate compares the mixes' types
#   tools/llama-oracle.sh goldens Q35 [CASE..]  for each case of data/golden/llama-0c1e570/cases.tsv
#                                    (or those named): the
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
    shift 2
    tail -n +2 "$G/cases.tsv" | while IFS="$(printf '\t')" read -r name args ids _; do
        [ $# -eq 0 ] || case " $* " in *" $name "*) ;; *) continue ;; esac
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
    # the named ftypes (llama-quantize's spelling) and the types the one-type mixes (pure-<type>)
    # are --pure runs of: a k-quant's _S ftype (Q2_K for q2_K), as the mix's general.file_type says
    named="F32 F16 BF16 Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K Q2_K_S Q3_K_S Q3_K_M Q3_K_L Q4_K_S Q4_K_M Q5_K_S Q5_K_M
           Q6_K IQ4_NL IQ4_XS IQ3_S IQ3_M"
    pure="Q4_0 Q4_1 Q5_0 Q5_1 Q8_0 Q2_K:q2_k Q3_K_S:q3_k Q4_K_S:q4_k Q5_K_S:q5_k Q6_K IQ4_NL IQ4_XS
          IQ2_XXS IQ2_XS IQ2_M:iq2_s IQ3_XXS IQ3_S IQ1_S IQ1_M"
    # (llama-quantize needs an importance matrix to write the grid i-quants, not for --dry-run's types;
    # its IQ2_S ftype is IQ2_XS throughout, its IQ2_M IQ2_S)
    # model name and q35 model make arguments: the 0.8B's and 9B's widths (8 layers), the 0.8B whole
    # (24 layers), tiny (GQA 2, ffn 384: the row-length fallbacks) with an MTP block
    models="0.8b-8:--shape 0.8b --layers 8 --vocab 4096
            9b-8:--shape 9b --layers 8 --vocab 4096
            0.8b-24:--shape 0.8b --vocab 4096
            tiny-8-mtp1:--shape tiny --mtp 1"
    echo "$models" | while IFS=: read -r model args; do
        model=${model#"${model%%[![:space:]]*}"} # trimmed
        # shellcheck disable=SC2086 # the model's arguments, split as written
        "$q35" model make $args --quant f16 --seed 3 -o "$tmp/f16.gguf" >/dev/null
        for spec in $named $(for p in $pure; do echo "pure:$p"; done); do
            ft=$spec flag="" mix=$(echo "$spec" | tr '[:upper:]' '[:lower:]')
            if [ "${spec%%:*}" = pure ]; then # pure:FTYPE or pure:FTYPE:type
                case $model in 0.8b-8|tiny-8-mtp1) ;; *) continue ;; esac # the fallbacks are all there is to see
                ft=$(echo "$spec" | cut -d: -f2) flag=--pure
                mix=pure-$(echo "$spec" | cut -d: -f3 | tr '[:upper:]' '[:lower:]')
                [ "$mix" = pure- ] && mix=pure-$(echo "$ft" | tr '[:upper:]' '[:lower:]')
            fi
            num=$(sed -n "s/^ *LLAMA_FTYPE_\(MOSTLY\|ALL\)_$ft *= *\([0-9]*\),.*/\2/p" "$C/src/llama.cpp/include/llama.h")
            [ -n "$num" ] || { echo "llama-oracle: no llama_ftype $ft in llama.h"; exit 1; }
            "$C/build/bin/llama-quantize" --dry-run $flag "$tmp/f16.gguf" "$ft" 2 >"$tmp/quantize.log" 2>&1 ||
                { cat "$tmp/quantize.log"; exit 1; }
            { echo "# llama-quantize (0c1e570) --dry-run${flag:+ $flag} $ft (llama_ftype $num) of q35 model make $args --quant f16 --seed 3: name, type"
              # "[  12/ 109] blk.0.ffn_up.weight - [...], type = f16, size = ... -> ... (q4_K)": the
              # parenthesized type where it converts, else the type it keeps
              awk '/^\[ *[0-9]+\/ *[0-9]+\]/ { n = $0; sub(/^\[[^]]*\] */, "", n); sub(/ .*/, "", n)
                     t = $0; sub(/.*type = */, "", t); sub(/,.*/, "", t)
                     if (match($0, /\([A-Za-z0-9_]+\)$/)) t = substr($0, RSTART + 1, RLENGTH - 2)
                     print n "\t" t }' "$tmp/quantize.log" | sort
            } >"$G/quantize/$mix-$model.tsv"
        done
        set -- "$G"/quantize/*-"$model".tsv
        echo "llama-oracle: $model: $# mixes"
    done
    rm -rf "$tmp" ;;
*) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2 ;;
esac
