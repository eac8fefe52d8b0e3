#!/usr/bin/env python3
"""The converter round trip (issue 49): transformers' Qwen3_5ForCausalLM with random
weights -> llama.cpp's convert_hf_to_gguf.py -> q35 and llama.cpp, each against
transformers' own float32 logits of the same token ids.

    tools/convert_roundtrip.py --q35 Q35 [--llama-logits BIN] [--llama-src DIR]
                               [--shape tiny] [--layers N] [--seed S] [-o OUT.md]

For each conversion (outtypes f32, f16, bf16, q8_0; f32 with --fuse-qkv; f32 of
the model with an MTP block, Qwen3_5's mtp_num_hidden_layers = 1; f32 of the
published checkpoints' class, Qwen3_5ForConditionalGeneration, with a small
vision tower whose tensors the converter leaves to the mmproj file): the file
converted, `q35 run --cpu --logits-at ...` (the float64 reference), and llama.cpp's
CPU logits (tools/llama-oracle/logits.c, built by tools/llama-oracle.sh build),
each position's rel L2 against transformers' float32 logits, worst position.
transformers' floor is its own float32 arithmetic: its prefill against its
token-by-token decode, printed too.

It needs torch and transformers (Qwen3_5ForCausalLM) and the pinned llama.cpp
source (convert_hf_to_gguf.py, gguf-py; tools/llama-oracle.sh build unpacks it into
~/.cache/q35-llama/src). The converter asks for a tokenizer; a random model has
none, so the conversion here writes llama.cpp's "none" vocabulary (token ids
only, as q35's own files do) in place of the converter's set_vocab: every tensor
and every other key is the converter's. Writes a markdown table (stdout, or -o).
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "bench"))

IDS = [3, 1, 4, 1, 5, 9, 2, 6]


def shape_of(name):
    """The shape's row of model/shapes.c, as `bench/peerlib.read_shapes` reads it."""
    from peerlib import read_shapes
    return read_shapes(os.path.join(ROOT, "model", "shapes.c"))[name]


def build(shape, layers, seed, mtp, vl=False):
    """Qwen3_5ForCausalLM, or with vl the published checkpoints' class,
    Qwen3_5ForConditionalGeneration (a small vision tower beside the same text
    model: the converter writes the text part, the logits are of text alone)."""
    import torch
    from hf_peer import hf_config_args
    from transformers import Qwen3_5ForCausalLM, Qwen3_5TextConfig

    args = hf_config_args(shape, layers)
    if mtp:
        args["mtp_num_hidden_layers"] = 1
    torch.manual_seed(seed)
    if vl:
        from transformers import Qwen3_5Config, Qwen3_5ForConditionalGeneration
        vision = dict(depth=1, hidden_size=64, num_heads=2, intermediate_size=128, out_hidden_size=args["hidden_size"])
        config = Qwen3_5Config(text_config=args, vision_config=vision, tie_word_embeddings=args["tie_word_embeddings"])
        model = Qwen3_5ForConditionalGeneration(config).float().eval()
    else:
        model = Qwen3_5ForCausalLM(Qwen3_5TextConfig(**args)).float().eval()
    with torch.no_grad():  # every parameter moved off its init, so the +1 norms and A_log are exercised
        for p in model.parameters():
            p.add_(0.05 * torch.randn_like(p))
    return model


def hf_logits(model):
    """transformers' float32 logits of IDS: the prefill, and token by token (its floor)."""
    import torch
    ids = torch.tensor([IDS])
    with torch.no_grad():
        full = model(ids).logits[0].float().numpy()
        out, past = [], None
        for t in range(len(IDS)):
            r = model(ids[:, t:t + 1], past_key_values=past, use_cache=True)
            past = r.past_key_values
            out.append(r.logits[0, -1].float().numpy())
    return full, np.stack(out)


def rel_l2(a, b):
    return float(np.linalg.norm(a.astype(np.float64) - b) / np.linalg.norm(b.astype(np.float64)))


def worst(a, ref):
    return max(rel_l2(a[i], ref[i]) for i in range(len(ref)))


def convert(src, hf_dir, out, outtype, fuse, mtp):
    """convert_hf_to_gguf.py with the "none" vocabulary (module docstring); --no-mtp
    where the model has no MTP block (the converter asks for one otherwise)."""
    code = f"""
import sys
sys.path.insert(0, {src!r}); sys.path.insert(1, {os.path.join(src, 'gguf-py')!r})
sys.argv = ['convert_hf_to_gguf.py', {hf_dir!r}, '--outfile', {out!r}, '--outtype', {outtype!r}] + {(['--fuse-qkv'] if fuse else []) + ([] if mtp else ['--no-mtp'])!r}
import convert_hf_to_gguf as conv
from conversion.base import TextModel
def set_vocab_none(self):
    self.gguf_writer.add_tokenizer_model("none")
    self.gguf_writer.add_vocab_size(self.hparams["vocab_size"])
TextModel.set_vocab = set_vocab_none
import conversion.qwen as q
for name in dir(q):
    cls = getattr(q, name)
    if isinstance(cls, type) and issubclass(cls, TextModel) and 'set_vocab' in cls.__dict__:
        cls.set_vocab = set_vocab_none
conv.main()
"""
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if r.returncode != 0:
        raise SystemExit(f"convert_roundtrip: the converter failed ({outtype}{' --fuse-qkv' if fuse else ''}):\n"
                         + r.stderr[-3000:])


def q35_logits(q35, gguf, tmp, vocab):
    path = os.path.join(tmp, "q35.f32")
    at = ",".join(str(i) for i in range(len(IDS)))
    r = subprocess.run([q35, "run", "--cpu", "--model", gguf, "--prompt", ",".join(map(str, IDS)), "--logits-at", at,
                        "--logits-out", path], capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["?"])[-1]
    return np.fromfile(path, dtype=np.float32).reshape(len(IDS), vocab), ""


def llama_logits(binary, gguf, tmp, vocab):
    if not binary or not os.access(binary, os.X_OK):
        return None, "no llama.cpp oracle (tools/llama-oracle.sh build)"
    path = os.path.join(tmp, "llama.f32")
    r = subprocess.run([binary, gguf, path, ",".join(map(str, IDS))], capture_output=True, text=True)
    if r.returncode != 0:
        return None, (r.stderr.strip().splitlines() or ["?"])[-1]
    return np.fromfile(path, dtype=np.float32).reshape(len(IDS), vocab), ""


def main():
    cache = os.environ.get("Q35_LLAMA_CACHE", os.path.expanduser("~/.cache/q35-llama"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--q35", required=True)
    ap.add_argument("--llama-logits", default=os.path.join(cache, "logits"))
    ap.add_argument("--llama-src", default=os.path.join(cache, "src", "llama.cpp"))
    ap.add_argument("--shape", default="tiny")
    ap.add_argument("--layers", type=int, default=None)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("-o", "--out", default=None)
    a = ap.parse_args()
    import torch
    import transformers
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    shape = shape_of(a.shape)
    rows = []
    cases = [("f32", False, False), ("f16", False, False), ("bf16", False, False), ("q8_0", False, False),
             ("f32", True, False), ("f32", False, True), ("f32", False, "vl")]
    models = {}
    with tempfile.TemporaryDirectory() as tmp:
        for outtype, fuse, mtp in cases:
            if mtp not in models:
                m = build(shape, a.layers, a.seed, mtp is True, vl=mtp == "vl")
                d = os.path.join(tmp, f"hf-{mtp}")
                m.save_pretrained(d, safe_serialization=True)
                full, steps = hf_logits(m)
                models[mtp] = (d, full, steps, m.config.get_text_config().vocab_size)
            d, full, steps, vocab = models[mtp]
            gguf = os.path.join(tmp, f"m-{outtype}{'-fused' if fuse else ''}{'-' + str(mtp) if mtp else ''}.gguf")
            convert(a.llama_src, d, gguf, outtype, fuse, mtp is True)
            q, qwhy = q35_logits(a.q35, gguf, tmp, vocab)
            ll, lwhy = llama_logits(a.llama_logits, gguf, tmp, vocab)
            fmt = lambda x, why: f"{worst(x, full):.2e}" if x is not None else f"failed: {why}"
            rows.append((outtype + (" --fuse-qkv" if fuse else "") + (" +MTP" if mtp is True else "") +
                         (" Qwen3_5ForConditionalGeneration" if mtp == "vl" else ""), fmt(q, qwhy),
                         fmt(ll, lwhy), f"{worst(q, ll):.2e}" if q is not None and ll is not None else "-",
                         f"{worst(steps, full):.2e}"))
    lines = [f"Converter round trip: transformers {transformers.__version__} Qwen3_5ForCausalLM (random, shape "
             f"{a.shape}{f', {a.layers} layers' if a.layers else ''}, seed {a.seed}, weights moved 0.05 N(0,1) off "
             f"their init), torch {torch.__version__}, llama.cpp 0c1e570's convert_hf_to_gguf.py; token ids "
             f"{','.join(map(str, IDS))}; worst position's rel L2.", "",
             "| conversion | q35 (float64 reference) vs transformers | llama.cpp (CPU) vs transformers | "
             "q35 vs llama.cpp | transformers' floor (prefill vs per token) |", "|---|---|---|---|---|"]
    lines += [f"| {r[0]} | {r[1]} | {r[2]} | {r[3]} | {r[4]} |" for r in rows]
    text = "\n".join(lines) + "\n"
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
