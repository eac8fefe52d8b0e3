#!/bin/sh
# tools/bench-ab.sh through bench_fake (no GPU; $Q35_FAKE_SCALE makes one arm's
# times a fixed multiple of the other's): B 0.9x in six rounds is called
# faster (6/6, p 0.031), 1.1x slower, the same settings the same, five rounds
# all one way never called (p 0.062); the arms alternate their order; the
# median aggregates are read where the runs have repetitions; every run's
# JSON and log kept; -m compares a counter (gpu_j, through a stand-in for
# NVML: lower, same; by -s too; one no run has); a failing run stops it (exit
# 1, its log named); usage errors exit 2 and run nothing.
#   bench/tests/ab.sh BENCH_FAKE SOURCE_DIR TMP_DIR
set -u
fake=$1 src=$2 tmp=$3
. "$src/tools/tests/lib.sh"
need_jq
rm -rf "$tmp" && mkdir -p "$tmp"
ab=$src/tools/bench-ab.sh
args="--benchmark_filter=^fake/path:flash/n:(1|4)/|^fake_prefill/.*/attn:flash/ --benchmark_min_time=0.001"

# ab_rc EXPECTED NAME ARGS...: the tool's exit code is EXPECTED; output in $tmp/NAME.out
ab_rc() {
    want=$1 name=$2
    shift 2
    exit_is "$want" "$tmp/$name.out" "$ab" "$@"
}
# rows FILE VERDICT COUNT: COUNT benchmark rows of the summary end in VERDICT
rows() { [ "$(grep -c "  $2\$" "$1")" -eq "$3" ] || { echo "      want $3 rows '$2' in:"; sed 's/^/      | /' "$1"; return 1; }; }

# shellcheck disable=SC2086 # $args: the benchmark's words
check "B at 0.9x, six rounds: done" ab_rc 0 faster -r 6 -o "$tmp/faster" -a '' -b Q35_FAKE_SCALE=0.9 -- "$fake" $args
check "  all 4 benchmarks called 'B faster'" rows "$tmp/faster/summary.txt" "B faster" 4
check "  B/A 0.9000 (least and most too), 6/6, p 0.031" \
    grep -E "^fake/path:flash/n:4/manual_time +4\.0000 +3\.6000 +0\.9000 +0\.9000\.\.0\.9000 +6/6 +0\.031  B faster$" \
    "$tmp/faster/summary.txt"
check "  the prefill benchmark's times: 51.2 ms against 46.08 at 512 tokens" \
    grep -E "^fake_prefill/shape:9b/quant:q4_k/attn:flash/gemm:f16/chunk:512/len:512/manual_time +51\.2000 +46\.0800 " \
    "$tmp/faster/summary.txt"
check "  every run's JSON and log kept (12 each)" \
    [ "$(ls "$tmp/faster"/[ab]-*.json | wc -l)" -eq 12 ] && [ "$(ls "$tmp/faster"/[ab]-*.log | wc -l)" -eq 12 ]
tail -n "$(wc -l <"$tmp/faster/summary.txt")" "$tmp/faster.out" >"$tmp/faster.printed"
check "  the summary printed is the one written (the output's last lines)" cmp -s "$tmp/faster.printed" "$tmp/faster/summary.txt"
order=$(grep -o "round [0-9], [ab]" "$tmp/faster.out" | sed 's/round //; s/, //' | tr '\n' ' ')
check "  arms in turns: a first in odd rounds, b first in even ones ($order)" \
    [ "$order" = "1a 1b 2b 2a 3a 3b 4b 4a 5a 5b 6b 6a " ]

check "B at 1.1x: 'B slower'" ab_rc 0 slower -r 6 -o "$tmp/slower" -a '' -b Q35_FAKE_SCALE=1.1 -- "$fake" $args
check "  all 4 rows" rows "$tmp/slower/summary.txt" "B slower" 4
check "the same settings (Q35_FAKE_SCALE=1 against none): 'same', 0/6" ab_rc 0 same -r 6 -o "$tmp/same" \
    -a Q35_FAKE_SCALE=1 -b '' -- "$fake" $args
check "  all 4 rows, none faster" sh -c "[ \$(grep -c ' 0/6 .*  same\$' '$tmp/same/summary.txt') -eq 4 ]"
check "five rounds all one way: not called (p 0.062)" ab_rc 0 five -r 5 -o "$tmp/five" -a '' -b Q35_FAKE_SCALE=0.9 \
    -- "$fake" $args
check "  all 4 rows 'same', 5/5" sh -c "[ \$(grep -c ' 5/5 .*0\.062  same\$' '$tmp/five/summary.txt') -eq 4 ]"
check "with repetitions: the median aggregate read, the same call" ab_rc 0 reps -r 6 -o "$tmp/reps" -a '' \
    -b Q35_FAKE_SCALE=0.9 -- "$fake" $args --benchmark_repetitions=3 --benchmark_report_aggregates_only=true
check "  all 4 rows 'B faster'" rows "$tmp/reps/summary.txt" "B faster" 4

mkdir -p "$tmp/again" && cp "$tmp/faster"/[ab]-*.json "$tmp/again/"
check "-s DIR: the summary of runs already there" ab_rc 0 again -s "$tmp/again"
grep ' B faster$' "$tmp/faster/summary.txt" >"$tmp/faster.rows"
grep ' B faster$' "$tmp/again/summary.txt" >"$tmp/again.rows"
check "  the same rows as the call's own" cmp -s "$tmp/faster.rows" "$tmp/again.rows"
check "  all 4 of them" [ "$(wc -l <"$tmp/again.rows")" -eq 4 ]
check "  saying where they came from" grep -F "the runs in $tmp/again: 6 rounds" "$tmp/again/summary.txt"
rm "$tmp/again/b-6.json"
check "-s with a round missing on one side: compared over the others" ab_rc 0 again5 -s "$tmp/again"
check "  5 rounds of 6, and said so" sh -c "grep -q ' 5/5 .*  same\$' '$tmp/again/summary.txt' && grep -q 'in 5 of 6 rounds of both arms' '$tmp/again/summary.txt'"
mkdir -p "$tmp/empty" "$tmp/badname" && cp "$tmp/faster/a-1.json" "$tmp/badname/a-x.json"
check "-s on a directory without runs: exit 2" ab_rc 2 s1 -s "$tmp/empty"
check "-s on a run not named a-R.json: exit 2" ab_rc 2 s2 -s "$tmp/badname"
check "-s with arms: exit 2" ab_rc 2 s3 -s "$tmp/again" -a ''
check "-s on no directory: exit 2" ab_rc 2 s4 -s "$tmp/nowhere"

# -m: a counter compared, lower better; bench_fake's fake_power with the stand-in for NVML, whose
# gpu_j is an iteration's wall time at 400 W (2 ms asleep, times Q35_FAKE_SCALE: 40 ms against 10 here,
# so a loaded machine's late wake-ups cannot turn a round's order: 20 against 10 still failed once under
# a two-CPU ctest -j2, where a wake-up can come a scheduler's slice or more late)
if [ -n "${Q35_TEST_FAKE_NVML:-}" ]; then
    export Q35_NVML_LIB="$Q35_TEST_FAKE_NVML" Q35_FAKE_POWER_PCI=0000:01:00.0
    pargs="--benchmark_filter=^fake_power/ --benchmark_min_time=0.01"
    # shellcheck disable=SC2086 # $pargs: the benchmark's words
    check "-m gpu_j, B asleep a quarter as long: done" ab_rc 0 energy -r 6 -m gpu_j -o "$tmp/energy" -a Q35_FAKE_SCALE=20 \
        -b Q35_FAKE_SCALE=5 -- "$fake" $pargs
    check "  'B lower', 6/6, p 0.031, under a header naming the counter" sh -c \
        "grep -qE '^fake_power/ms:2/manual_time .* 6/6 +0\.031  B lower\$' '$tmp/energy/summary.txt' &&
         grep -q '^metric: gpu_j (lower is better)\$' '$tmp/energy/summary.txt' &&
         grep -qE '^benchmark .* A gpu_j +B gpu_j .* lower ' '$tmp/energy/summary.txt'"
    # shellcheck disable=SC2086
    check "-m sm_mhz, the same clock in both arms: 'same', 0/6" ab_rc 0 clock -r 6 -m sm_mhz -o "$tmp/clock" -a '' \
        -b Q35_FAKE_SCALE=0.5 -- "$fake" $pargs
    check "  its row" grep -qE '^fake_power/ms:2/manual_time +1500 +1500 +1\.0000 .* 0/6 +1\.000  same$' \
        "$tmp/clock/summary.txt"
    check "-s with -m: the summary of the runs there by that counter" ab_rc 0 energy_s -m gpu_j -s "$tmp/energy"
    check "  'B lower' again" grep -qE ' 6/6 +0\.031  B lower$' "$tmp/energy/summary.txt"
    check "-m a counter no run has: exit 1, saying which" ab_rc 1 nosuch -m nosuch -s "$tmp/energy"
    check "  naming it" grep -F "no benchmark in both arms with nosuch" "$tmp/nosuch.out"
    check "  the summary there left as it was" grep -qE ' 6/6 +0\.031  B lower$' "$tmp/energy/summary.txt"
    unset Q35_NVML_LIB Q35_FAKE_POWER_PCI
else
    echo "SKIP  -m: no stand-in for NVML (\$Q35_TEST_FAKE_NVML)"
fi
check "-m with a name that is no counter's: exit 2" ab_rc 2 u9 -m 'gpu-j' -s "$tmp/again"

check "a failing run: exit 1" ab_rc 1 fails -r 2 -o "$tmp/fails" -a '' -b Q35_FAKE_SCALE=-1 -- "$fake" $args
check "  naming its log" grep -F "round 1, arm b failed: see $tmp/fails/b-1.log" "$tmp/fails.out"
check "  and its error" grep -F "Q35_FAKE_SCALE=-1 is not a positive number" "$tmp/fails.out"

check "no -b: exit 2" ab_rc 2 u1 -a '' -- "$fake"
check "  saying so" grep -F "both arms wanted" "$tmp/u1.out"
check "a word that is not NAME=VALUE: exit 2" ab_rc 2 u2 -a FOO -b '' -- "$fake"
check "  naming it" grep -F "'FOO' is not NAME=VALUE" "$tmp/u2.out"
check "-r 0: exit 2" ab_rc 2 u3 -r 0 -a '' -b '' -- "$fake"
check "-r x: exit 2" ab_rc 2 u4 -r x -a '' -b '' -- "$fake"
check "--benchmark_out among the benchmark's arguments: exit 2" ab_rc 2 u5 -a '' -b '' -- "$fake" --benchmark_out=x.json
check "  naming it" grep -F "'--benchmark_out=x.json': bench-ab sets the output" "$tmp/u5.out"
check "no program: exit 2" ab_rc 2 u6 -a '' -b '' -- "$tmp/no-such-bench"
check "nothing after --: exit 2" ab_rc 2 u7 -a '' -b '' --
check "an unknown option: exit 2" ab_rc 2 u8 -x -a '' -b '' -- "$fake"
check "the usage errors ran nothing (no bench-ab.out made)" [ ! -e bench-ab.out ]
finish
