#!/bin/sh
# The main job: installs what is missing, builds, and runs the prefill of the
# built-in default model (the tiny shape generated in memory), printing the time
# per op and the top logits. Extra arguments go to `q35 run`.
set -e
cd "$(dirname "$0")/.."
. tools/deps.sh
cmake --preset default >/dev/null
cmake --build --preset default
exec build/default/cli/q35 run "$@"
