#!/bin/sh
# The tests: installs what is missing, then configures, builds and runs every
# test (warnings as errors; GPU suites skip where no GPU is), then the host
# tests again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -e
cd "$(dirname "$0")/.."
. tools/deps.sh
cmake --workflow --preset ci
cmake --workflow --preset asan
