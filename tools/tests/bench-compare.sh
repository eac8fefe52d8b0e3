#!/bin/sh
# tools/bench-compare.sh on fixtures (data/fixtures/bench/compare-*.json: one
# benchmark each faster, slower past the gate, slower within the noise, slower
# under the gate, slower from iteration entries alone, missing on either side,
# skipped in B; peers-*.json and bench/peers.map: ours against the peers):
# each verdict, the noise taken from the repetitions, the exit codes (0 pass,
# 1 regression or, asked, missing, 2 refusals), different devices refused.
#   tools/tests/bench-compare.sh SOURCE_DIR TMP_DIR
set -u
src=$1 tmp=$2
. "$src/tools/tests/lib.sh"
need_jq
rm -rf "$tmp" && mkdir -p "$tmp"
fx=$src/data/fixtures/bench
cmp=$src/tools/bench-compare.sh
a=$fx/compare-a.json b=$fx/compare-b.json

# rc EXPECTED OUTFILE ARGS...: runs the tool, its stdout and stderr to OUTFILE; passes on that exit code
rc() {
    want=$1 out=$2
    shift 2
    exit_is "$want" "$out" "$cmp" "$@"
}
# verdict OUTFILE NAME VERDICT: the row of NAME says VERDICT
verdict() { grep -E "  $3 +$2( |\$)" "$1" >/dev/null || { echo "      no '$3' row for $2 in:"; sed 's/^/      | /' "$1"; return 1; }; }

check "the gate at 5%: exit 1" rc 1 "$tmp/gate5" --max-slowdown 5% "$a" "$b"
check "  20% faster, cv 0.5%: faster" verdict "$tmp/gate5" delta_rule_scan/model:1/rows:4096/variant:5 faster
check "  10% slower, cv 0.4%: a regression" verdict "$tmp/gate5" flash_chunk/model:1/ctx:16384/split:0/variant:kv64 REGRESSION
check "  8% slower, cv 6% each: the same within the noise" verdict "$tmp/gate5" gemm_f16/proj:7/rows:2048 same
check "  3% slower, cv 0.3%: slower, under the gate" verdict "$tmp/gate5" gemm_f16/proj:8/rows:2048 slower
check "  30% slower, iteration entries only: a regression" verdict "$tmp/gate5" conv1d_silu_rows/model:1/rows:4096 REGRESSION
check "  the cv of iteration entries is computed (1%)" grep -Eq "0\.1000 +1% +0\.1300 +1% +1\.300" "$tmp/gate5"
check "  B/A of the 10% slowdown is 1.100" grep -Eq "0\.8100 +0\.4% +0\.8910 +0\.4% +1\.100 +REGRESSION" "$tmp/gate5"
check "  only in A: missing in B" grep -q "missing in B: rmsnorm_rows/model:1/rows:4096$" "$tmp/gate5"
check "  skipped in B: missing in B" grep -q "missing in B: decode/model:1/ctx:4096$" "$tmp/gate5"
check "  only in B: listed" grep -q "only in B: add_rmsnorm_rows/model:1/rows:4096/fused:1$" "$tmp/gate5"
check "  no energy table where neither side has the power counters" sh -c "! grep -q '^  energy' '$tmp/gate5'"
check "  the summary counts them" grep -q "5 compared: 1 faster, 3 slower, 1 the same within 2 x noise; .*; 3 missing on one side; 2 slower than A past 5% and the noise" "$tmp/gate5"
check "the gate at 12%: the 30% one alone, exit 1" rc 1 "$tmp/gate12" --max-slowdown 12 "$a" "$b"
check "  the 10% one is slower, not a regression" verdict "$tmp/gate12" flash_chunk/model:1/ctx:16384/split:0/variant:kv64 slower
check "the gate at 50%: exit 0" rc 0 "$tmp/gate50" --max-slowdown 50% "$a" "$b"
check "no gate: exit 0" rc 0 "$tmp/nogate" "$a" "$b"
check "  says there is no gate" grep -q "no gate (--max-slowdown)" "$tmp/nogate"
check "--fail-missing: exit 1 with benchmarks missing" rc 1 "$tmp/missing" --fail-missing --max-slowdown 50% "$a" "$b"
check "--noise 0: the 8% one slower past 5%, a regression" rc 1 "$tmp/noise0" --noise 0 --max-slowdown 5% "$a" "$b"
check "  (its row)" verdict "$tmp/noise0" gemm_f16/proj:7/rows:2048 REGRESSION
check "a file against itself at 0%: all the same, exit 0" rc 0 "$tmp/self" --max-slowdown 0 "$a" "$a"
check "  none slower" grep -q "7 compared: 0 faster, 0 slower, 7 the same" "$tmp/self"

check "different devices: refused, exit 2" rc 2 "$tmp/devices" "$a" "$fx/compare-b-a100.json"
check "  the refusal names both devices" grep -q "A ran on NVIDIA H200, B on NVIDIA A100-SXM4-80GB: refused" "$tmp/devices"
check "different devices with --force: compared, exit 1 at 5%" rc 1 "$tmp/forced" --force --max-slowdown 5% "$a" "$fx/compare-b-a100.json"
check "  with a warning" grep -q "warning: A ran on NVIDIA H200, B on NVIDIA A100-SXM4-80GB (--force)" "$tmp/forced"

"$src/tools/bench-merge.sh" -o "$tmp/both.json" "$fx/h200-small.json" "$fx/a100-small.json"
check "a name held twice in a file (two devices merged): refused, exit 2" rc 2 "$tmp/twice" "$tmp/both.json" "$tmp/both.json"
check "  naming it" grep -q "holds ceiling/copy/MiB:1024, delta_rule_scan/model:1/rows:4096/variant:1 more than once (several devices?)" "$tmp/twice"
check "nothing in common: exit 2" rc 2 "$tmp/none" "$fx/h200-small.json" "$b"
check "a file that is not benchmark JSON: exit 2" rc 2 "$tmp/bad" "$a" "$fx/../gguf-bad/README.md"
check "a missing file: exit 2" rc 2 "$tmp/absent" "$a" "$tmp/absent.json"
check "a malformed --max-slowdown: exit 2" rc 2 "$tmp/usage" --max-slowdown five "$a" "$b"
check "one file: exit 2" rc 2 "$tmp/usage1" "$a"

check "ours against the peers by bench/peers.map: exit 0" rc 0 "$tmp/peers" --map "$src/bench/peers.map" "$fx/peers-ours.json" "$fx/peers-peers.json"
check "  flash_chunk paired with cuDNN SDPA (B/A 0.300)" grep -Eq "0\.2318 .* 0\.300 +faster +flash_chunk/model:1/ctx:4096/split:0/variant:kv64  vs  peer_sdpa/backend:cudnn/dtype:f16/model:1/ctx:4096/query:chunk$" "$tmp/peers"
check "  the prefill paired with transformers, lengths in order" sh -c "grep -o 'vs  peer_hf/[^ ]*' '$tmp/peers' | tr '\n' ' ' | grep -q 'len:512 .*len:4096 .*len:16384 .*len:65536 .*len:131072'"
check "  one scan against two fla timings (graph 1 and 0)" sh -c "[ \$(grep -c 'delta_rule_scan/model:1/rows:4096/variant:5  vs  peer_fla/backend:triton' '$tmp/peers') -eq 2 ]"
check "  the skipped FlashQLA peer: missing in B" grep -q "missing in B: delta_rule_scan/model:1/rows:4096/variant:5 (no peer_fla/backend:flash_qla/model:1/rows:4096/graph:1 in B)" "$tmp/peers"
check "  43 pairs" grep -q "43 compared" "$tmp/peers"
printf 'flash_chunk/model:{m}   peer_sdpa/model:{m}\nflash_prompt only-two words here\n' >"$tmp/bad.map"
check "a map line that is not two names: exit 2" rc 2 "$tmp/badmap" --map "$tmp/bad.map" "$a" "$b"
check "  naming its line" grep -q "map line 2: want OURS PEER" "$tmp/badmap"
# the energy table: the power counters (bench/power.h) on the delta rule's median in both files, on
# the flash chunk's in A only
with_power() { # with_power IN OUT J W MHZ [NAME]: IN with gpu_j J, gpu_w W, sm_mhz MHZ on NAME's median
    "$JQ" --argjson j "$3" --argjson w "$4" --argjson m "$5" --arg n "${6:-delta_rule_scan/model:1/rows:4096/variant:5/manual_time_median}" \
        '.benchmarks |= map(if .name == $n then . + {gpu_j: $j, gpu_w: $w, sm_mhz: $m} else . end)' "$1" >"$2"
}
with_power "$a" "$tmp/pa0.json" 0.5 700 1425
with_power "$tmp/pa0.json" "$tmp/pa.json" 0.2 650 1500 flash_chunk/model:1/ctx:16384/split:0/variant:kv64/manual_time_median
with_power "$b" "$tmp/pb.json" 0.4 690 1440
check "power counters on both sides: the comparison as before (exit 0 without a gate)" rc 0 "$tmp/energy" "$tmp/pa.json" "$tmp/pb.json"
check "  an energy table with the one pair both sides measured" sh -c "[ \$(grep -c 'variant:5\$' '$tmp/energy') -eq 2 ] &&
    grep -Eq '^ +0\.5000 +0\.4000 +0\.800 +700 +690 +1425 +1440  delta_rule_scan/model:1/rows:4096/variant:5\$' '$tmp/energy' &&
    ! grep -Eq '^ +0\.2000 ' '$tmp/energy'"
check "  its header" grep -q "^  energy (bench/power.h; the pairs where both sides have it)" "$tmp/energy"
finish
