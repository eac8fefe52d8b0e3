#!/bin/sh
# bench/peers.py where torch is absent (or, on a GPU runner, with a filter that
# selects nothing heavy): the axes it reads from the C benchmarks it pairs with,
# the names it registers, a run that skips every point saying why and still
# writes valid benchmark JSON (exit 0), its refusals; and bench/peerlib.py's
# entries: Google Benchmark's aggregates of given times, read back by
# plots/points.jq with their spread.
#   tools/tests/peers.sh SOURCE_DIR TMP_DIR
set -u
src=$1 tmp=$2
. "$src/tools/tests/lib.sh"
need_jq
rm -rf "$tmp" && mkdir -p "$tmp"
peers=$src/bench/peers.py
need_python3
check "py_compile of peers.py and peerlib.py" python3 -c "import py_compile, sys; [py_compile.compile(f, cfile='$tmp/x.pyc', doraise=True) for f in sys.argv[1:]]" "$peers" "$src/bench/peerlib.py"

python3 "$peers" --show-axes >"$tmp/axes.json"
jq_check "$tmp/axes.json" '.sdpa.models == [{"name":"0.8B","heads":8,"kv":2},{"name":"9B","heads":16,"kv":4},{"name":"27B","heads":24,"kv":4}] and .sdpa.head_dim == 256' \
    "sdpa: the benchmarks' models' heads (bench/models.c, model/shapes.c)"
jq_check "$tmp/axes.json" '.sdpa.contexts == [512,1024,2048,4096,8192,16384,32768,65536,131072] and .sdpa.chunk == 512 and .sdpa.prompt_max == 65536' \
    "sdpa: bench_attention's contexts and CHUNK, bench_flash_sm90's WHOLE_MAX"
jq_check "$tmp/axes.json" '.fla.models[1] == {"name":"9B","hk":16,"hv":32,"dk":128,"dv":128} and .fla.models[2].hv == 48 and .fla.rows == [64,512,1024,2048,4096,8192,16384]' \
    "fla: the benchmarks' models' DeltaNet heads (model/shapes.c) and delta_rule_scan's rows"
jq_check "$tmp/axes.json" '(.gemm.projections | length) == 13 and .gemm.projections[0] == {"name":"attn_qkv","n":8192,"k":4096} and .gemm.projections[9] == {"name":"lm_head","n":248320,"k":4096} and .gemm.projections[12] == {"name":"ffn_gate+up","n":24576,"k":4096} and .gemm.rows == [1,64,512,2048]' \
    "gemm: bench_linear's projections and rows"
for m in 0 1 2; do # the benchmarks' models against model/shapes.c (through hf_peer's reading of it)
    s=$(jq -r ".sdpa.models[$m].name | ascii_downcase" "$tmp/axes.json")
    python3 "$src/bench/hf_peer.py" --show-config --shape "$s" >"$tmp/$s.json"
    jq -s '{cfg: .[0], ax: .[1]}' "$tmp/$s.json" "$tmp/axes.json" >"$tmp/$s-both.json"
    jq_check "$tmp/$s-both.json" ".ax as \$a | .cfg | .num_attention_heads == \$a.sdpa.models[$m].heads and .num_key_value_heads == \$a.sdpa.models[$m].kv and .head_dim == \$a.sdpa.head_dim and .linear_num_key_heads == \$a.fla.models[$m].hk and .linear_num_value_heads == \$a.fla.models[$m].hv" \
        "  model $m ($s): bench_attention's and bench_kernels' heads are model/shapes.c's"
done

python3 "$peers" --list >"$tmp/names"
check "--list: 456 names (sdpa 216, fla 84, gemm 156)" sh -c "[ \$(wc -l <'$tmp/names') -eq 456 ] && [ \$(grep -c '^peer_sdpa/' '$tmp/names') -eq 216 ] && [ \$(grep -c '^peer_fla/' '$tmp/names') -eq 84 ] && [ \$(grep -c '^peer_gemm/' '$tmp/names') -eq 156 ]"
check "  the grammar: family, then axis:value segments" sh -c "! grep -Ev '^peer_[a-z]+(/[a-z_]+:[A-Za-z0-9_.-]+)+\$' '$tmp/names'"
for n in peer_sdpa/backend:cudnn/dtype:f16/model:1/ctx:4096/query:chunk peer_sdpa/backend:flash/dtype:bf16/model:2/ctx:131072/query:prompt \
    peer_fla/backend:triton/model:1/rows:4096/graph:1 peer_fla/backend:flash_qla/model:0/rows:64/graph:0 peer_gemm/dtype:f16/proj:9/rows:2048; do
    check "  names $n" grep -qx "$n" "$tmp/names"
done
check "--filter and --families select, families in the order given" sh -c "[ \"\$(python3 '$peers' --list --families gemm,fla --filter 'proj:7/rows:2048|model:1/rows:4096/graph:1')\" = \"\$(printf 'peer_gemm/dtype:bf16/proj:7/rows:2048\npeer_gemm/dtype:f16/proj:7/rows:2048\npeer_gemm/dtype:fp8/proj:7/rows:2048\npeer_fla/backend:triton/model:1/rows:4096/graph:1\npeer_fla/backend:flash_qla/model:1/rows:4096/graph:1')\" ]"
check "an unknown family is refused" sh -c "! python3 '$peers' --families sdpa,conv --list >/dev/null 2>&1"
check "a malformed filter is refused" sh -c "! python3 '$peers' --filter '(' --list >/dev/null 2>&1"
check "--reps 0 is refused" sh -c "! python3 '$peers' --reps 0 --list >/dev/null 2>&1"

# A run: every point skipped where torch (or a GPU) is missing; on a GPU runner only prompt points past WHOLE_MAX are selected.
check "a run exits 0" sh -c "python3 '$peers' --families sdpa --filter 'model:0/ctx:131072/query:prompt' -o '$tmp/run.json' 2>'$tmp/run.err'"
jq_check "$tmp/run.json" '(.benchmarks | length) == 4 and all(.benchmarks[]; .error_occurred == true and (.error_message | startswith("skipped: ")))' \
    "  4 points, each skipped with a reason"
jq_check "$tmp/run.json" '.context | .q35_schema == "1" and .executable == "bench/peers.py" and (.git_describe | length) > 0 and (.models | startswith("0 = 0.8B (8 heads / 2 kv)")) and (.proj | startswith("0 attn_qkv 8192x4096"))' \
    "  the context: schema, executable, commit, the axes' legends"
check "  stderr says what is skipped and why" grep -q "peer_sdpa/backend:cudnn/dtype:bf16/model:0/ctx:131072/query:prompt: skipped: " "$tmp/run.err"
if ! python3 -c "import torch" >/dev/null 2>&1; then
    python3 "$peers" --families fla,gemm --filter 'model:1/rows:64/graph:0|proj:2/rows:1$' -o "$tmp/notorch.json" 2>/dev/null
    jq_check "$tmp/notorch.json" '[.benchmarks[].error_message] | length == 5 and all(. == "skipped: torch not importable: No module named '"'torch'"'")' \
        "  without torch: every point says torch is not importable"
fi
check "  merges with our results (tools/bench-merge.sh)" "$src/tools/bench-merge.sh" -o "$tmp/merged.json" "$tmp/run.json" "$src/data/fixtures/bench/h200-small.json"

# peerlib.entries: 1, 2, 3 ms of 6 FLOP a call (rates per repetition: 6000, 3000, 2000 FLOP/s)
python3 -c "
import json, sys
sys.path.insert(0, '$src/bench')
import peerlib
print(json.dumps({'context': {'device': 'X'}, 'benchmarks': peerlib.entries('f/a:1', 0, [3.0, 1.0, 2.0], {'FLOP': 6}, {'v': 7})
                 + peerlib.entries('f/a:2', 1, [5.0], {'FLOP': 5}) + [peerlib.skipped('f/a:3', 2, 'why')]}))" >"$tmp/entries.json"
jq_check "$tmp/entries.json" '[.benchmarks[] | .name] == ["f/a:1/manual_time_mean","f/a:1/manual_time_median","f/a:1/manual_time_stddev","f/a:1/manual_time_cv","f/a:2/manual_time","f/a:3/manual_time"]' \
    "entries: four aggregates for three repetitions, the iteration for one, a skipped point"
jq_check "$tmp/entries.json" '[.benchmarks[0:4][] | .real_time] == [2, 2, 1, 0.5] and all(.benchmarks[0:4][]; .run_type == "aggregate" and .repetitions == 3 and .run_name == "f/a:1/manual_time")' \
    "  mean 2, median 2, stddev 1 (n - 1), cv 0.5 of 3, 1, 2 ms"
jq_check "$tmp/entries.json" '[.benchmarks[0:4][] | .FLOP] as $f | [3666.6667, 3000, 2081.6660, 0.56772709] as $want
    | all(range(4); ($f[.] - $want[.] | fabs) <= 1e-6 * $want[.]) and .benchmarks[1].v == 7' \
    "  rate counters per second, each aggregate over the repetitions' rates; values as given"
jq_check "$tmp/entries.json" '.benchmarks[4] | .run_type == "iteration" and .real_time == 5 and .FLOP == 1000' "  one repetition: the iteration, its rate"
jq -f "$src/plots/points.jq" "$tmp/entries.json" >"$tmp/points.json"
jq_check "$tmp/points.json" 'map({id, ms, cv, reps}) == [{"id":"f/a:1","ms":2,"cv":0.5,"reps":3},{"id":"f/a:2","ms":5,"cv":null,"reps":1}]' \
    "  plots/points.jq reads them back: the median, the cv, the repetitions; the skipped point left out"

# peerlib.Power through the stand-in for NVML (bench/tests/fake_nvml.c: 400 W, 1500 MHz, the power
# cap; $Q35_TEST_FAKE_NVML, built beside the benchmarks): the same counters as bench/power.h's
if [ -n "${Q35_TEST_FAKE_NVML:-}" ]; then
    power_py() { # power_py NAME PCI [ENV...]: a loop of 20 calls asleep 2 ms each, its counters and context
        name=$1 pci=$2
        shift 2
        env Q35_NVML_LIB="$Q35_TEST_FAKE_NVML" "$@" python3 -c "
import json, sys, time
sys.path.insert(0, '$src/bench')
import peerlib
try:
    p = peerlib.Power('$pci')
except peerlib.PowerUnavailable as e:
    print(json.dumps({'unavailable': str(e)}))
    sys.exit(0)
with p.loop() as loop:
    for _ in range(20):
        time.sleep(0.002)
print(json.dumps({'context': p.context(), 'values': loop.values(20)}))" >"$tmp/$name.json" 2>"$tmp/$name.err"
    }
    check "Power: a loop through the stand-in" power_py power 0000:01:00.0
    jq_check "$tmp/power.json" '.values | (.gpu_w / 400 - 1 | fabs) < 0.02 and .gpu_j / .gpu_w >= 0.002 and .gpu_j / .gpu_w < 0.05' \
        "  gpu_w 400 W (within 2 %), gpu_j a call's wall time (2 ms asleep and more) at that power"
    jq_check "$tmp/power.json" '.values | .sm_mhz == 1500 and .power_capped == 1 and .thermal_capped == 0' \
        "  sm_mhz 1500, power_capped 1, thermal_capped 0 (reasons by the older name)"
    jq_check "$tmp/power.json" '.context == {"power": "nvml", "power_limit_w": "700.0"}' "  context: power nvml, power_limit_w 700.0"
    check "Power: an energy counter Not Supported" power_py noenergy 0000:01:00.0 FAKE_NVML_NO_ENERGY=1
    jq_check "$tmp/noenergy.json" '(.values | has("gpu_w") or has("gpu_j") | not) and .values.sm_mhz == 1500 and .context.power_energy == "Not Supported"' \
        "  no gpu_w, gpu_j; the clock stays; the context says why"
    check "Power: an unknown PCI id" power_py badpci 0000:02:00.0
    jq_check "$tmp/badpci.json" '.unavailable == "nvmlDeviceGetHandleByPciBusId_v2(0000:02:00.0): Not Found"' "  unavailable, naming the id"
    check "Power: NVML failing to start" power_py initfail 0000:01:00.0 FAKE_NVML_INIT_FAIL=1
    jq_check "$tmp/initfail.json" '.unavailable == "nvmlInit_v2: Uninitialized"' "  unavailable, saying so"
    check "Power: no library" power_py nolib 0000:01:00.0 Q35_NVML_LIB="$tmp/none.so"
    jq_check "$tmp/nolib.json" ".unavailable | startswith(\"cannot open $tmp/none.so (\")" "  unavailable, naming the library"
else
    echo "SKIP  peerlib.Power: no stand-in for NVML (\$Q35_TEST_FAKE_NVML: built with the benchmarks)"
fi
finish
