#!/bin/sh
# tools/gpu-resource-spec.sh for a given count: valid JSON of ctest's resource
# spec (version 1.0, one gpus entry per GPU, ids 0..N-1, the slots asked for),
# bad counts refused; and ctest itself, given the file, runs three tests that
# each declare RESOURCE_GROUPS gpus:1 side by side, each on a different id.
#   tools/gpu-resource-spec.sh SOURCE_DIR TMP_DIR
set -u
src=$1 tmp=$2
. "$src/tools/tests/lib.sh"
need_jq
rm -rf "$tmp" && mkdir -p "$tmp"
gen=$src/tools/gpu-resource-spec.sh

check "a spec for 4 GPUs" "$gen" 4 -o "$tmp/spec4.json"
jq_check "$tmp/spec4.json" '.version == {"major": 1, "minor": 0}' "version 1.0"
jq_check "$tmp/spec4.json" '.local | length == 1 and (.[0] | keys == ["gpus"])' "one local machine with gpus only"
jq_check "$tmp/spec4.json" '.local[0].gpus == [{"id":"0","slots":1},{"id":"1","slots":1},{"id":"2","slots":1},{"id":"3","slots":1}]' \
    "ids \"0\"..\"3\" (strings), one slot each"
check "stdout without -o, --slots 2" sh -c "'$gen' --slots 2 1 >'$tmp/spec1.json'"
jq_check "$tmp/spec1.json" '.local[0].gpus == [{"id":"0","slots":2}]' "a single GPU with 2 slots"
check "CUDA_VISIBLE_DEVICES=5,7 gives a count of 2" sh -c "CUDA_VISIBLE_DEVICES=5,7 '$gen' >'$tmp/specv.json'"
jq_check "$tmp/specv.json" '[.local[0].gpus[].id] == ["0","1"]' "ids are ordinals as the runtime sees them (0, 1), not 5, 7"
check "a count of 0 is refused" sh -c "! '$gen' 0 >/dev/null 2>&1"
check "a count that is not a number is refused" sh -c "! '$gen' two >/dev/null 2>&1"
check "--slots 0 is refused" sh -c "! '$gen' --slots 0 2 >/dev/null 2>&1"

# ctest accepts the file and gives each of three concurrent tests its own GPU id.
"$gen" 3 -o "$tmp/spec3.json"
mkdir -p "$tmp/proj"
cat >"$tmp/proj/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.25)
project(spec_check NONE)
enable_testing()
foreach(i 1 2 3)
  add_test(NAME t${i} COMMAND sh -c "echo \"$CTEST_RESOURCE_GROUP_COUNT $CTEST_RESOURCE_GROUP_0_GPUS\" >${CMAKE_BINARY_DIR}/t${i}.env; sleep 1")
  set_tests_properties(t${i} PROPERTIES RESOURCE_GROUPS "gpus:1")
endforeach()
CMAKE
if cmake -S "$tmp/proj" -B "$tmp/proj/b" >"$tmp/cmake.log" 2>&1 &&
    (cd "$tmp/proj/b" && ctest -j3 --resource-spec-file "$tmp/spec3.json" >"$tmp/ctest.log" 2>&1); then
    echo "PASS  ctest -j3 --resource-spec-file runs three gpus:1 tests"
    got=$(cat "$tmp/proj/b"/t*.env | sort | tr '\n' ' ')
    check "each got its own GPU: [$got]" [ "$got" = "1 id:0,slots:1 1 id:1,slots:1 1 id:2,slots:1 " ]
else
    echo "FAIL  ctest with the spec file (see $tmp/ctest.log)"
    q35_fails=$((q35_fails + 1))
fi
finish
