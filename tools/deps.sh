#!/bin/sh
# Installs what the build and the tests need and are missing, and fails, saying
# what, when it cannot:
#   - from Debian's packages (apt-get): cmake, ninja, a C/C++ compiler, clang
#     with its fuzzer runtime (fuzz_gguf), Google Benchmark (the benchmarks and
#     their shell tests), gnuplot and jq (the plots, the merge of benchmark
#     JSON), python3 with pip;
#   - from PyPI, pinned and hash-checked (tools/cuda-tools.txt): cuobjdump and
#     nvdisasm, which the flash kernel's SASS check (kernels_flash_hmma) runs and
#     not every CUDA toolkit carries, into ~/.cache/q35-tools/cuda-tools (only
#     where the toolkit has no pair of its own); the workflow's two lints
#     (tools/tests/workflow.sh): actionlint (tools/lint-tools.txt) into
#     ~/.cache/q35-tools/actionlint where none is on PATH, and check-jsonschema
#     (tools/workflow-schema.txt) into ~/.cache/q35-tools/workflow-schema.
#     actionlint's build fetches its binary from actionlint's releases, so where
#     that fails deps.sh says so, remembers it (ending the retries until the pin
#     moves) and goes on, and that lint is skipped.
# The CUDA toolkit (nvcc, cuBLAS) must already be there; this script finds it
# under /usr/local/cuda when it is not on PATH. Source it (. tools/deps.sh) so
# the PATH it sets stays set. With Q35_NO_INSTALL=1 (a machine with no package
# registry, e.g. a lent GPU box) it names what is missing and installs nothing:
# the tests that need it are then skipped, each naming what it misses.
need=""
have() { command -v "$1" >/dev/null 2>&1; }
pkg() { dpkg -s "$1" >/dev/null 2>&1; }
deps_fail() { echo "deps: $*" >&2; }
have cmake || need="$need cmake"
have ninja || need="$need ninja-build"
have gcc || need="$need gcc"
have g++ || need="$need g++"
have clang || need="$need clang"
pkg libclang-rt-14-dev || pkg libclang-rt-dev || need="$need libclang-rt-dev"
pkg libbenchmark-dev || need="$need libbenchmark-dev"
have gnuplot || need="$need gnuplot-nox"
have jq || need="$need jq"
have python3 || need="$need python3"
python3 -m pip --version >/dev/null 2>&1 || need="$need python3-pip"
if ! have nvcc; then
    for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
        [ -x "$d/nvcc" ] && PATH="$d:$PATH" && export PATH && break
    done
fi
have nvcc || { deps_fail "the CUDA toolkit (nvcc) is required and was not found on PATH or in /usr/local/cuda"
               return 1 2>/dev/null || exit 1; }

# cuobjdump and nvdisasm as a pair: the toolkit's where it has both, else the
# pinned wheels (a copy installed under another pin is replaced). The SASS check
# looks in the same places (parity/kernels/flash_sass.cmake).
q35_tools="${XDG_CACHE_HOME:-$HOME/.cache}/q35-tools/cuda-tools"
pair_in() { [ -x "$1/cuobjdump" ] && [ -x "$1/nvdisasm" ]; }
sass_needed=1
for d in "$(dirname "$(command -v nvcc)")" /usr/local/cuda/bin; do
    if pair_in "$d"; then sass_needed=0; fi
done
if pair_in "$q35_tools/nvidia/cu13/bin" && cmp -s tools/cuda-tools.txt "$q35_tools/cuda-tools.txt"; then
    sass_needed=0
fi

if [ -n "$need" ] && [ "${Q35_NO_INSTALL:-0}" = 1 ]; then
    echo "deps: missing:$need (Q35_NO_INSTALL=1: not installing; the tests that need them are skipped)"
    need=""
fi
if [ -n "$need" ]; then
    echo "deps: installing:$need"
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $need >/dev/null ||
        { deps_fail "apt-get install$need failed"; return 1 2>/dev/null || exit 1; }
fi
if [ $sass_needed = 1 ] && [ "${Q35_NO_INSTALL:-0}" = 1 ]; then
    echo "deps: missing: cuobjdump and nvdisasm (Q35_NO_INSTALL=1: not installing tools/cuda-tools.txt; kernels_flash_hmma is skipped)"
elif [ $sass_needed = 1 ]; then
    echo "deps: installing cuobjdump and nvdisasm (tools/cuda-tools.txt, hash-checked) into $q35_tools"
    rm -rf "$q35_tools" &&
        python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --require-hashes \
            --target "$q35_tools" -r tools/cuda-tools.txt &&
        cp tools/cuda-tools.txt "$q35_tools/cuda-tools.txt" && pair_in "$q35_tools/nvidia/cu13/bin" ||
        { deps_fail "could not install tools/cuda-tools.txt into $q35_tools (pip needs PyPI): the SASS check" \
                    "kernels_flash_hmma needs cuobjdump and nvdisasm; Q35_NO_INSTALL=1 skips it instead"
          return 1 2>/dev/null || exit 1; }
fi
# The workflow's two lints (tools/tests/workflow.sh), each pinned and installed
# into ~/.cache/q35-tools/NAME: a failed install is remembered per pin (the
# .failed copy of the pin file) and not fatal: only that lint needs it.
#   lint_tool NAME PIN_FILE CHECK_FILE PIP_ARGS...: CHECK_FILE (under the folder)
#   exists after a good install.
lint_tool() {
    lt_dir="${XDG_CACHE_HOME:-$HOME/.cache}/q35-tools/$1" lt_pin=$2 lt_check=$3
    shift 3
    if [ -e "$lt_dir/$lt_check" ] && cmp -s "$lt_pin" "$lt_dir/pin.txt"; then
        :
    elif [ "${Q35_NO_INSTALL:-0}" = 1 ]; then
        echo "deps: missing: $lt_pin (Q35_NO_INSTALL=1: not installing it; its workflow lint is skipped)"
    elif cmp -s "$lt_pin" "$lt_dir.failed" 2>/dev/null; then
        echo "deps: installing $lt_pin failed before ($lt_dir.failed; remove it to try again): its workflow lint is skipped"
    else
        echo "deps: installing $lt_pin (hash-checked) into $lt_dir"
        rm -rf "$lt_dir" && mkdir -p "$(dirname "$lt_dir")" &&
            python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore --no-deps --require-hashes \
                --target "$lt_dir" "$@" -r "$lt_pin" >"$lt_dir.log" 2>&1 &&
            [ -e "$lt_dir/$lt_check" ] && cp "$lt_pin" "$lt_dir/pin.txt" && rm -f "$lt_dir.failed" ||
            { cp "$lt_pin" "$lt_dir.failed"
              echo "deps: could not install $lt_pin ($lt_dir.log): its workflow lint is skipped; not fatal"; }
    fi
}
# actionlint (on PATH, else the pin): a source package whose build fetches the
# binary from actionlint's releases, beyond PyPI. check-jsonschema: wheels only.
have actionlint || lint_tool actionlint tools/lint-tools.txt bin/actionlint
lint_tool workflow-schema tools/workflow-schema.txt check_jsonschema/__main__.py --only-binary :all:
