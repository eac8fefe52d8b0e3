#!/bin/sh
# Installs what the build and the tests need and are missing, from Debian's
# packages: cmake, ninja, a C/C++ compiler, clang with its fuzzer runtime, Google
# Benchmark, gnuplot and jq (the plots, the merge of benchmark JSON); and
# cuobjdump (the flash kernel's SASS check), which not every CUDA toolkit
# carries, from PyPI's nvidia-cuda-cuobjdump wheel into ~/.cache/q35-tools. The CUDA toolkit (nvcc, cuBLAS) must already be there;
# this script finds it under /usr/local/cuda when it is not on PATH.
# Source it (. tools/deps.sh) so the PATH it finds stays set. With
# Q35_NO_INSTALL=1 (a machine with no package registry, e.g. a lent GPU box) it
# names what is missing and installs nothing: the parts that need it are skipped.
need=""
have() { command -v "$1" >/dev/null 2>&1; }
pkg() { dpkg -s "$1" >/dev/null 2>&1; }
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
q35_tools="$HOME/.cache/q35-tools"
# Puts the first cuobjdump found (PATH, the CUDA toolkit, the wheel) on PATH.
find_cuobjdump() {
    have cuobjdump && return 0
    for d in /usr/local/cuda/bin /usr/local/cuda-*/bin "$q35_tools"/nvidia/cu*/bin "$q35_tools"/nvidia/cuda_cuobjdump/bin; do
        [ -x "$d/cuobjdump" ] && PATH="$PATH:$d" && export PATH && return 0
    done
    return 1
}
if ! find_cuobjdump; then
    have python3 || need="$need python3"
    python3 -m pip --version >/dev/null 2>&1 || need="$need python3-pip"
fi
if [ -n "$need" ] && [ "${Q35_NO_INSTALL:-0}" = 1 ]; then
    echo "deps: missing:$need (Q35_NO_INSTALL=1: not installing; what needs them is skipped)"
    need=""
fi
if [ -n "$need" ]; then
    echo "deps: installing:$need"
    sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq $need >/dev/null ||
        { echo "deps: apt-get install$need failed" >&2; return 1 2>/dev/null || exit 1; }
fi
if ! have nvcc; then
    for d in /usr/local/cuda/bin /usr/local/cuda-*/bin; do
        [ -x "$d/nvcc" ] && PATH="$d:$PATH" && export PATH && break
    done
fi
have nvcc || { echo "deps: the CUDA toolkit (nvcc) is required and was not found on PATH or in /usr/local/cuda" >&2;
               return 1 2>/dev/null || exit 1; }
if ! find_cuobjdump && [ "${Q35_NO_INSTALL:-0}" != 1 ]; then
    echo "deps: installing cuobjdump (PyPI nvidia-cuda-cuobjdump) into $q35_tools"
    python3 -m pip install --quiet --disable-pip-version-check --target "$q35_tools" nvidia-cuda-cuobjdump &&
        find_cuobjdump ||
        echo "deps: could not install cuobjdump: the test kernels_flash_hmma will fail" >&2
fi
