#!/usr/bin/env python3
"""What each path and each quant costs on the trained model (issue 50): perplexity
and KL divergence against the float64 CPU reference on the f32 weights, as
`llama-perplexity --kl-divergence` reports a quant.

    tools/kld_report.py --q35 Q35 [--model DIR] [--ctx 512] [--chunks 8]
                        [--mixes a,b,..] [--gpu] [-o OUT.md] [--json OUT.json]

DIR holds model.gguf and heldout.i32 (tools/train_tiny.py writes both;
default data/golden/trained-bytes). The reference: `q35 run --cpu --eval` on the
model file (F16: the weights as trained, rounded once), its log-probabilities
saved. Then each mix: `q35 model quantize` and `q35 run --cpu --eval
--ref-logits` (the CPU reference on those weights: what the weights alone cost);
F16, Q8_0 and Q4_K_M also with --act-quant ggml (llama.cpp's CPU numerics), Q8_0 and
Q4_K_M with --act-quant decode-q8 (the decode step's 8-bit activations, in every
product: the most that rounding can cost). With --gpu, each GPU path on the f32 weights (--exact,
--deterministic, the default f16 fast path, --gemm fp8) and, on the Q8_0 and
Q4_K_M files, the default path, fp8, and the decode path's logits (--eval-steps;
with --switch decode-q8=on too): what the path costs, and what both cost together.
Writes a markdown table (stdout, or -o) and every run's JSON (--json).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIXES = ("f16,bf16,q8_0,q6_k,q5_k_m,q5_k_s,q5_0,q4_k_m,q4_k_s,q4_0,q4_1,iq4_xs,iq4_nl,q3_k_l,q3_k_m,q3_k_s,iq3_s,"
         "iq3_m,q2_k,q2_k_s,pure-iq3_xxs,pure-iq2_s,pure-iq2_xs,pure-iq2_xxs,pure-iq1_m,pure-iq1_s")
GPU_PATHS = (("exact (f32 GEMM, f32 attention, scan)", ["--exact"]),
             ("deterministic", ["--deterministic"]),
             ("fast path (f16 GEMM, flash, chunked)", []),
             ("fp8 GEMM", ["--gemm", "fp8"]))


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"kld_report: {' '.join(cmd)} failed ({r.returncode}):\n{r.stderr[-2000:]}")
    return r.stdout


def evaluate(a, model, tmp, name, extra, ref=None, save=None):
    out = os.path.join(tmp, f"{len(os.listdir(tmp))}.json")
    cmd = [a.q35, "run", "--model", model, "--eval", a.tokens, "--ctx", str(a.ctx), "--chunks", str(a.chunks),
           "--eval-json", out] + extra
    cmd += ["--ref-logits", ref] if ref else []
    cmd += ["--save-logits", save] if save else []
    text = run(cmd)
    with open(out) as f:
        r = json.load(f)
    r["name"] = name
    r["path_line"] = next((ln[8:] for ln in text.splitlines() if ln.startswith("path    ")), "")
    r["mib"] = os.path.getsize(model) / 1048576.0
    return r


def row(r):
    if "kld_mean" not in r:
        return f"| {r['name']} | {r['mib']:.2f} | {r['ppl']:.4f} | reference | | | | |"
    return (f"| {r['name']} | {r['mib']:.2f} | {r['ppl']:.4f} | {r['dppl']:+.4f} | {r['kld_mean']:.3e} ± "
            f"{r['kld_err']:.1e} | {r['kld_p99']:.3e} | {r['kld_max']:.3e} | {100 * r['same_top']:.2f} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--q35", required=True)
    ap.add_argument("--model", default=os.path.join(ROOT, "data", "golden", "trained-bytes"))
    ap.add_argument("--ctx", type=int, default=512)
    ap.add_argument("--chunks", type=int, default=8)
    ap.add_argument("--mixes", default=MIXES)
    ap.add_argument("--gpu", action="store_true")
    ap.add_argument("-o", "--out")
    ap.add_argument("--json")
    a = ap.parse_args()
    f32 = os.path.join(a.model, "model.gguf")
    a.tokens = os.path.join(a.model, "heldout.i32")
    rows, gpu_rows = [], []
    with tempfile.TemporaryDirectory() as tmp:
        work = os.path.join(tmp, "w")
        os.mkdir(work)
        ref = os.path.join(tmp, "ref.lp")
        base = evaluate(a, f32, work, "as trained (F16; the reference)", ["--cpu"], save=ref)
        rows.append(base)
        files = {}
        for mix in [m for m in a.mixes.split(",") if m]:
            q = os.path.join(tmp, f"{mix}.gguf")
            run([a.q35, "model", "quantize", "--model", f32, "--quant", mix, "-o", q])
            files[mix] = q
            rows.append(evaluate(a, q, work, mix, ["--cpu"], ref=ref))
            print(row(rows[-1]), file=sys.stderr)
        for mix in ("f16", "q8_0", "q4_k_m"):  # llama.cpp's CPU numerics on the same weights
            if mix in files:
                rows.append(evaluate(a, files[mix], work, f"{mix}, --act-quant ggml (llama.cpp's CPU numerics)",
                                     ["--act-quant", "ggml"], ref=ref))
        for mix in ("q8_0", "q4_k_m"):  # the decode step's 8-bit activations (decode-q8), in every product
            if mix in files:
                rows.append(evaluate(a, files[mix], work, f"{mix}, --act-quant decode-q8 (every product)",
                                     ["--act-quant", "decode-q8"], ref=ref))
        if a.gpu:
            for name, flags in GPU_PATHS:
                gpu_rows.append(evaluate(a, f32, work, f"as trained, {name}", flags, ref=ref))
                print(row(gpu_rows[-1]), file=sys.stderr)
            for mix in ("q8_0", "q4_k_m"):
                if mix in files:
                    gpu_rows.append(evaluate(a, files[mix], work, f"{mix}, fast path", [], ref=ref))
                    gpu_rows.append(evaluate(a, files[mix], work, f"{mix}, fp8 GEMM", ["--gemm", "fp8"], ref=ref))
                    # the decode path's logits (q35 run --eval-steps): its exact GEMVs, and 8-bit activations
                    # (decode-q8, the fast path's default: named both ways)
                    gpu_rows.append(evaluate(a, files[mix], work, f"{mix}, decode steps",
                                             ["--eval-steps", "--switch", "decode-q8=off"], ref=ref))
                    gpu_rows.append(evaluate(a, files[mix], work, f"{mix}, decode steps, decode-q8",
                                             ["--eval-steps", "--switch", "decode-q8=on"], ref=ref))
    head = ("| weights / path | MiB | perplexity | Δppl | mean KLD ± s.e. | p99 KLD | max KLD | same top % |\n"
            "|---|---|---|---|---|---|---|---|")
    n = base["positions"]
    lines = [f"Trained model `{os.path.relpath(a.model, ROOT)}`, held-out text: {a.chunks} windows of {a.ctx} tokens, "
             f"{n} scored positions; reference: the float64 CPU reference on the model's own weights "
             f"(perplexity {base['ppl']:.4f}). Weights: the CPU reference on each mix (`q35 model quantize`).", "",
             head] + [row(r) for r in rows]
    if gpu_rows:
        lines += ["", f"GPU paths ({gpu_rows[0]['path_line'].split(':')[0]}), against the same reference:", "", head]
        lines += [row(r) for r in gpu_rows]
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"cpu": rows, "gpu": gpu_rows}, f, indent=1)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
