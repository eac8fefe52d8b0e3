#!/bin/sh
# The power counters (bench/power.h) through bench_fake and a stand-in for
# NVML (bench/tests/fake_nvml.c: 400 W, SM clock 1500 MHz, the power cap
# holding it, limit 700 W; its clock-event reasons under the older name): the
# counters of a point that sleeps 2 ms an iteration (gpu_w 400 W, gpu_j its
# wall time an iteration at 400 W, sm_mhz, power_capped, thermal_capped) and
# the context; on repetitions' medians; an energy counter Not Supported (the
# others stay, the context says why); a library that cannot be opened, an
# NVML that fails to start, a PCI bus id it does not know, --q35_power=0
# (no counter, the context says why, the run goes on).
#   bench/tests/power.sh BENCH_FAKE SOURCE_DIR TMP_DIR   ($Q35_TEST_FAKE_NVML: the stand-in)
set -u
fake=$1 src=$2 tmp=$3
. "$src/tools/tests/lib.sh"
need_jq
rm -rf "$tmp" && mkdir -p "$tmp"
lib=${Q35_TEST_FAKE_NVML:?the stand-in library}
pci=0000:01:00.0

# power NAME [ENV...] [-- FLAGS...]: bench_fake's fake_power point with the power counters, the
# environment's assignments and the benchmark's flags added; JSON to $tmp/NAME.json
power() {
    name=$1 envs="" flags=""
    shift
    while [ $# -gt 0 ] && [ "$1" != -- ]; do envs="$envs $1"; shift; done
    [ $# -gt 0 ] && shift
    flags="$*"
    # shellcheck disable=SC2086 # the words of the assignments and the flags
    env Q35_NVML_LIB="$lib" Q35_FAKE_POWER_PCI=$pci $envs "$fake" --benchmark_filter='^fake_power/' \
        --benchmark_min_time=0.05 --q35_progress=0 --benchmark_out="$tmp/$name.json" --benchmark_out_format=json \
        $flags >"$tmp/$name.out" 2>"$tmp/$name.err"
}
sel='.benchmarks[] | select(.name == "fake_power/ms:2/manual_time")'

check "a run with the stand-in" power on
jq_check "$tmp/on.json" "[$sel | (.gpu_w / 400 - 1 | fabs) < 0.02] == [true]" "gpu_w: the loop's energy over its wall time, 400 W (within 2 %)"
jq_check "$tmp/on.json" "[$sel | .gpu_j / .gpu_w >= 0.002 and .gpu_j / .gpu_w < 0.05] == [true]" \
    "gpu_j: joules an iteration, its wall time (2 ms asleep and more) at that power"
jq_check "$tmp/on.json" "[$sel | .sm_mhz == 1500 and .power_capped == 1 and .thermal_capped == 0] == [true]" \
    "sm_mhz 1500 (the median), power_capped 1, thermal_capped 0 (reasons by the older name)"
jq_check "$tmp/on.json" '.context | .power == "nvml" and .power_limit_w == "700.0" and (has("power_energy") | not) and (has("power_reasons") | not)' \
    "context: power nvml, power_limit_w 700.0"
check "stderr: one line naming the library and the limit" grep -q "^benchmark: power: NVML ($lib), limit 700.0 W, SM clock sampled every 10 ms\$" "$tmp/on.err"

check "repetitions" power rep -- --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
jq_check "$tmp/rep.json" '[.benchmarks[] | select(.aggregate_name == "median") | .sm_mhz == 1500 and (.gpu_w / 400 - 1 | fabs) < 0.02] == [true]' \
    "the median of 3 repetitions carries the counters"

check "an energy counter Not Supported" power noenergy FAKE_NVML_NO_ENERGY=1
jq_check "$tmp/noenergy.json" "[$sel | (has(\"gpu_w\") or has(\"gpu_j\") | not) and .sm_mhz == 1500 and .power_capped == 1] == [true]" \
    "  no gpu_w, gpu_j (never a zero); the clock and the reasons stay"
jq_check "$tmp/noenergy.json" '.context | .power == "nvml" and .power_energy == "Not Supported"' "  the context says why"

# unavailable NAME CONTEXT [ENV...] [-- FLAGS...]: the run goes on (exit 0) without counters, the
# context's power starting with CONTEXT
unavailable() {
    name=$1 want=$2
    shift 2
    check "$name: the run goes on" power "$name" "$@"
    jq_check "$tmp/$name.json" "[$sel | has(\"sm_mhz\") or has(\"gpu_w\") or has(\"power_capped\")] == [false]" "  $name: no counter"
    jq_check "$tmp/$name.json" ".context.power | startswith(\"$want\")" "  $name: context power \"$want...\""
}
unavailable nolib "unavailable: cannot open $tmp/none.so ($tmp/none.so: " Q35_NVML_LIB="$tmp/none.so"
check "  nolib: stderr says so" grep -q "^benchmark: power: unavailable: cannot open $tmp/none.so" "$tmp/nolib.err"
unavailable initfail "unavailable: nvmlInit_v2: Uninitialized" FAKE_NVML_INIT_FAIL=1
unavailable badpci "unavailable: nvmlDeviceGetHandleByPciBusId_v2(0000:02:00.0): Not Found" Q35_FAKE_POWER_PCI=0000:02:00.0
unavailable off "off (--q35_power=0)" -- --q35_power=0
check "  off: no 'benchmark: power' line on stderr" sh -c "! grep -q '^benchmark: power' '$tmp/off.err'"
finish
