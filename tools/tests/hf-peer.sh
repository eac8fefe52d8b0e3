#!/bin/sh
# bench/hf_peer.py where torch and transformers are absent: it compiles, imports
# without them, reads model/shapes.c (the 0.8B/9B/27B widths the C side uses)
# into transformers' Qwen3_5TextConfig arguments, honours --layers, and says
# plainly what it needs when asked to run.
#   tools/tests/hf-peer.sh SOURCE_DIR TMP_DIR
set -u
src=$1 tmp=$2
. "$src/tools/tests/lib.sh"
need_jq
rm -rf "$tmp" && mkdir -p "$tmp"
peer=$src/bench/hf_peer.py
need_python3
check "py_compile" python3 -c "import py_compile, sys; py_compile.compile(sys.argv[1], cfile='$tmp/peer.pyc', doraise=True)" "$peer"
check "imports without torch or transformers" python3 -c "import sys; sys.path.insert(0, '$src/bench'); import hf_peer; assert 'torch' not in sys.modules"
python3 "$peer" --show-config --shape 9b >"$tmp/9b.json"
jq_check "$tmp/9b.json" '.hidden_size == 4096 and .num_hidden_layers == 32 and .num_attention_heads == 16 and .num_key_value_heads == 4 and .head_dim == 256 and .intermediate_size == 12288 and .linear_num_key_heads == 16 and .linear_num_value_heads == 32 and .vocab_size == 248320 and .tie_word_embeddings == false' \
    "9b: the widths of model/shapes.c"
jq_check "$tmp/9b.json" '[.layer_types | to_entries[] | select(.value == "full_attention") | .key] == [3,7,11,15,19,23,27,31]' \
    "9b: every 4th layer is full attention (layers 3, 7, ..., 31)"
jq_check "$tmp/9b.json" '.rope_parameters == {"rope_type": "default", "rope_theta": 10000000.0, "partial_rotary_factor": 0.25}' \
    "RoPE: theta 1e7 over 64 of 256 dims"
python3 "$peer" --show-config --shape 27b --layers 8 >"$tmp/27b.json"
jq_check "$tmp/27b.json" '.hidden_size == 5120 and .num_hidden_layers == 8 and (.layer_types | length) == 8 and .linear_num_value_heads == 48 and .num_attention_heads == 24' \
    "27b with --layers 8"
python3 "$peer" --show-config --shape 0.8b >"$tmp/08b.json"
jq_check "$tmp/08b.json" '.hidden_size == 1024 and .tie_word_embeddings == true and .linear_num_value_heads == 16' "0.8b: tied, 16 value heads"
check "an unknown shape is refused" sh -c "! python3 '$peer' --show-config --shape 13b >/dev/null 2>&1"
check "a malformed --lengths is refused" sh -c "! python3 '$peer' --lengths 5,x >/dev/null 2>&1"
if ! python3 -c "import torch, transformers" >/dev/null 2>&1; then
    python3 "$peer" --shape 0.8b --lengths 512 >/dev/null 2>"$tmp/run.err"
    check "without torch a run exits non-zero saying what it needs" sh -c "grep -q 'needs torch and transformers' '$tmp/run.err'"
fi
finish
