#!/bin/sh
# tools/model-seeds.sh without a GPU: a stand-in suite that prints the model
# suites' verdict lines from its Q35_SEED (and echoes Q35_SWEEP_MODELS) runs
# under three seeds, two at a time; the logs, the worst rel L2 per (model, path)
# with the seed that gave it, the per-seed counts and the exit status (1: a run
# failed) are checked; --summary reads logs alone; bad options are refused.
#   tools/tests/model-seeds.sh SOURCE_DIR TMP_DIR
set -u
src=$1 tmp=$2
. "$src/tools/tests/lib.sh"
rm -rf "$tmp" && mkdir -p "$tmp"
tool=$src/tools/model-seeds.sh

cat >"$tmp/suite.sh" <<'SUITE'
#!/bin/sh
echo "models: ${Q35_SWEEP_MODELS:-all}"
case $Q35_SEED in
0x1) a=1.00e-03 b=5.00e-04 c=2.10e-03 v=PASS w=FAIL ;;
0x2) a=1.50e-03 b=2.50e-04 c=1.20e-03 v=PASS w=PASS ;;
*)   a=9.00e-04 b=7.00e-04 c=1.00e-03 v=PASS w=PASS ;;
esac
echo "$v  9b-4    len    63 rows   64 flash/f16/scan: logits at 5 positions differ (first differing row 0: x), max rel Linf 1.0e-03 at 62, rel L2 $a, argmax 5/5, KL 2.9e-06 nats; state differs, max rel Linf 1.5e-03, rel L2 $b: worst conv (limit rel L2 2e-03, rel Linf 1e-02)"
echo "$w  9b-4    len    64 rows    7 flash/f16     : logits at 7 positions differ (first differing row 0: x), max rel Linf 2.4e-03 at 62, rel L2 $c, argmax 7/7, KL 3.9e-06 nats; state differs, max rel Linf 2.0e-03, rel L2 1.51e-03 (limit rel L2 2e-03, rel Linf 1e-02)"
echo "PASS  tiny    len   600 rows   64 flash/f16     split at 200 + decode at 600: logits at 1 positions differ, max rel Linf 8.2e-04 at 600, rel L2 1.01e-03, argmax 1/1, KL 1e-07 nats; state differs, max rel Linf 1.8e-03, rel L2 1.48e-03 (limit rel L2 2e-03, rel Linf 1e-02)"
[ "$w" = PASS ]
SUITE
chmod +x "$tmp/suite.sh"

"$tool" -s 0x1,0x2,0x3 -j 2 -m 9b-4 -d "$tmp/logs" -- "$tmp/suite.sh" >"$tmp/out.txt" 2>&1
rc=$?
check "exit 1: the run of seed 0x1 failed" [ "$rc" -eq 1 ]
check "one log a seed" [ -s "$tmp/logs/seed-0x1.log" -a -s "$tmp/logs/seed-0x2.log" -a -s "$tmp/logs/seed-0x3.log" ]
check "Q35_SWEEP_MODELS reaches the suite" grep -q "^models: 9b-4$" "$tmp/logs/seed-0x2.log"
check "flash/f16/scan: 3 cases, worst logits 1.5e-3 at 0x2, worst state 7e-4 at 0x3" \
    grep -Eq "^9b-4 +flash/f16/scan +3 +0 +1\.500e-03 +0x2 +7\.000e-04 +0x3$" "$tmp/out.txt"
check "flash/f16: 1 failed, worst logits 2.1e-3 at 0x1" grep -Eq "^9b-4 +flash/f16 +3 +1 +2\.100e-03 +0x1 " "$tmp/out.txt"
check "the split case is its own model's row" grep -Eq "^tiny +flash/f16 +3 +0 +1\.010e-03 " "$tmp/out.txt"
check "per seed: 0x1 2 passed, 1 failed" grep -Eq "^seed 0x1 +2 passed, 1 failed$" "$tmp/out.txt"
check "per seed: 0x3 3 passed, 0 failed" grep -Eq "^seed 0x3 +3 passed, 0 failed$" "$tmp/out.txt"

"$tool" --summary "$tmp/logs/seed-0x2.log" "$tmp/logs/seed-0x3.log" >"$tmp/sum.txt" 2>&1
check "--summary of two logs: worst logits 1.5e-3 at 0x2" grep -Eq "^9b-4 +flash/f16/scan +2 +0 +1\.500e-03 +0x2 " "$tmp/sum.txt"

"$tool" -n 2 -d "$tmp/rand" -- "$tmp/suite.sh" >"$tmp/rand.txt" 2>&1
set -- "$tmp"/rand/seed-0x*.log
check "-n 2: two random seeds, two logs" [ "$#" -eq 2 ]

check "-n 0 refused" sh -c "'$tool' -n 0 -- '$tmp/suite.sh' >/dev/null 2>&1; [ \$? -eq 2 ]"
check "-j x refused" sh -c "'$tool' -j x -- '$tmp/suite.sh' >/dev/null 2>&1; [ \$? -eq 2 ]"
check "a seed that is not a number refused" sh -c "'$tool' -s 12,abc -- '$tmp/suite.sh' >/dev/null 2>&1; [ \$? -eq 2 ]"
check "no suite refused" sh -c "'$tool' -n 1 >/dev/null 2>&1; [ \$? -eq 2 ]"
check "an unknown option refused" sh -c "'$tool' --nope -- '$tmp/suite.sh' >/dev/null 2>&1; [ \$? -eq 2 ]"
finish
