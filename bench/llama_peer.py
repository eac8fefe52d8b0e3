#!/usr/bin/env python3
"""llama.cpp as a peer: llama-bench's JSON (`llama-bench -o json`) written as the
project's benchmark JSON (bench/results/SCHEMA.md), so tools/bench-compare.sh
--map bench/peers.map and the plots pair it with ours:

    peer_llama/prefill/shape:9b/quant:q4_k/len:4096/manual_time_median   (tokens_per_s)
    peer_llama/decode/shape:9b/quant:q4_k/ctx:4096/manual_time_median    (tokens_per_s; the time a token)

    python3 bench/llama_peer.py --shape 9b --quant q4_k [-o out.json] LLAMA_BENCH.json...

A prompt test of llama-bench (n_prompt > 0, n_gen 0) is a prefill of len =
n_prompt tokens from an empty cache; a generation test (n_gen > 0, n_prompt 0)
at depth d is the decode step at ctx = d (llama-bench's tg at -d), its time the
time of one token. Each sample of llama-bench is one repetition. llama.cpp is
built by bench/llama_peer.sh (the pinned source; the file is the one our
benchmark measures: shape and quant name it, as llama-bench's JSON does not).
"""

import argparse
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402

LLAMA_COMMIT = "0c1e570"  # ggml-org/llama.cpp as vendored in llama-cpp-python 0.3.36 (its sdist on PyPI)


def points(runs, shape, quant):
    """(name, times_ms, tokens) of each llama-bench run; a run it cannot place is refused."""
    out = []
    for r in runs:
        n_prompt, n_gen, depth = int(r["n_prompt"]), int(r["n_gen"]), int(r.get("n_depth", 0))
        samples = [float(ns) / 1e6 for ns in r["samples_ns"]]
        if n_prompt > 0 and n_gen == 0 and depth == 0:
            out.append((f"peer_llama/prefill/shape:{shape}/quant:{quant}/len:{n_prompt}", samples, n_prompt))
        elif n_gen > 0 and n_prompt == 0:
            out.append((f"peer_llama/decode/shape:{shape}/quant:{quant}/ctx:{depth}", [t / n_gen for t in samples], 1))
        else:
            raise SystemExit(f"llama_peer: a run of n_prompt {n_prompt}, n_gen {n_gen}, depth {depth} is neither a "
                             "prefill (-p N -n 0) nor a decode step (-p 0 -n N -d D)")
    return out


def context(first, files):
    ctx = peerlib.base_context("bench/llama_peer.py")
    ctx.update({
        "device": first.get("gpu_info", "unknown"),
        "peer": f"llama.cpp {LLAMA_COMMIT} (llama-bench, {first.get('backends', '?')})",
        "peer_llama_commit": LLAMA_COMMIT,
        "peer_llama_settings": (f"-fa {first.get('flash_attn')} -ngl {first.get('n_gpu_layers')} "
                                f"-ub {first.get('n_ubatch')} -b {first.get('n_batch')} "
                                f"KV {first.get('type_k')}/{first.get('type_v')}"),
        "peer_llama_model_type": first.get("model_type", "?"),
        "peer_llama_files": ",".join(os.path.basename(f) for f in files),
    })
    return ctx


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", required=True, help="the shape the file was made with (model make --shape)")
    ap.add_argument("--quant", required=True, help="its mix (model make --quant)")
    ap.add_argument("-o", "--out", default="", help="the JSON to write (default: stdout)")
    ap.add_argument("files", nargs="+", help="llama-bench -o json outputs")
    a = ap.parse_args()
    runs = []
    for path in a.files:
        with open(path, encoding="utf-8") as f:
            runs += json.load(f)
    if not runs:
        raise SystemExit("llama_peer: no runs in " + " ".join(a.files))
    benchmarks = []
    for i, (name, times, tokens) in enumerate(points(runs, a.shape, a.quant)):
        benchmarks += peerlib.entries(name, i, times, rates={"tokens_per_s": tokens})
    peerlib.write_results(a.out, context(runs[0], a.files), benchmarks)


if __name__ == "__main__":
    main()
