#!/usr/bin/env python3
"""A trained Qwen3.5 small enough to commit (issue 50): transformers' Qwen3_5ForCausalLM
with both layer kinds, trained on bytes of Python source, written as a qwen35 GGUF.

    tools/train_tiny.py [--corpus DIR] [--steps N] [--seed S] [--device cpu|cuda]
                        [--threads N] [--llama-src DIR] -o OUTDIR

The model: hidden 256, 4 layers (three Gated DeltaNet, the fourth gated full
attention, as every Qwen3.5 repeats them), 2 attention heads / 1 KV head of 256,
DeltaNet 2 key heads x 128 and 4 value heads x 128 (value heads tiled over key
heads, r = 2, as in the 9B), SwiGLU FFN 512 (a multiple of 256, so every K-quant
applies to every projection), vocabulary the 256 byte values, untied output.
About 3.8 M parameters. Trained in float32; then every 2-D weight but the
conv kernel is rounded to f16 (as tiny-r2's were), so the F16 GGUF (about 7.7 MB:
the repository travels to the GPU machine, whose copy is limited) holds exactly
the weights whose logits are the golden ones.

The text: the top-level `*.py` files of the Debian python3 standard library
(`/usr/lib/python3.X`, the newest there; any directory with --corpus), sorted by
name; every tenth file (index % 10 == 9) is held out, the rest is training text.
Training: AdamW (lr 3e-3, betas 0.9 / 0.95, weight decay 0.1, warm-up 50 steps,
cosine to 10 %), batches of 16 windows of 256 bytes at offsets drawn from the
seed, gradient norm clipped at 1, float32. Deterministic from its seed on one
device and thread count (torch.use_deterministic_algorithms); a different device
or torch gives a different (equally good) model, which is why the GGUF is
committed.

Writes into OUTDIR:
  model.gguf      llama.cpp's convert_hf_to_gguf.py, --outtype f16 (2-D weights F16,
                  the conv kernel and vectors F32), the "none" vocabulary (token id =
                  byte value; tools/convert_roundtrip.py)
  heldout.i32     the first 16384 bytes of the held-out text as int32 token ids
  tokens.i32      its first 256 tokens: the golden prompt
  logits.f32      transformers' float32 logits of tokens.i32, one full forward,
                  [256][256] (row t: after token t)
  case.json       the model, the corpus (files, bytes, sha256), the held-out loss,
                  transformers' floor (its full forward against its token-by-token
                  decode), versions, device, seconds
  train.log       the loss every 25 steps and the held-out loss every 200
"""
import argparse
import glob
import hashlib
import json
import math
import os
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))

CONFIG = dict(
    vocab_size=256, hidden_size=256, intermediate_size=512, num_hidden_layers=4,
    num_attention_heads=2, num_key_value_heads=1, head_dim=256,
    linear_conv_kernel_dim=4, linear_key_head_dim=128, linear_value_head_dim=128,
    linear_num_key_heads=2, linear_num_value_heads=4,
    max_position_embeddings=32768, rms_norm_eps=1e-6, tie_word_embeddings=False,
    rope_parameters={"rope_type": "default", "rope_theta": 1e7, "partial_rotary_factor": 0.25},
    layer_types=["linear_attention"] * 3 + ["full_attention"],
)
SEQ, BATCH, HELDOUT, GOLDEN = 256, 16, 16384, 256


def default_corpus():
    dirs = sorted(glob.glob("/usr/lib/python3.[0-9]*"), key=lambda d: [int(x) for x in d.rsplit("3.", 1)[1].split(".") if x.isdigit()])
    if not dirs:
        raise SystemExit("train_tiny: no /usr/lib/python3.X here; name a directory of text with --corpus")
    return dirs[-1]


def corpus(directory):
    files = sorted(glob.glob(os.path.join(directory, "*.py")))
    if len(files) < 20:
        raise SystemExit(f"train_tiny: {directory} has {len(files)} *.py files; at least 20 wanted")
    train, held = [], []
    for i, f in enumerate(files):
        with open(f, "rb") as fh:
            (held if i % 10 == 9 else train).append(fh.read())
    train_b, held_b = b"".join(train), b"".join(held)
    sha = hashlib.sha256(train_b + held_b).hexdigest()
    return (np.frombuffer(train_b, dtype=np.uint8).astype(np.int64),
            np.frombuffer(held_b, dtype=np.uint8).astype(np.int64),
            dict(dir=directory, files=len(files), held_out_files=[os.path.basename(f) for i, f in enumerate(files) if i % 10 == 9],
                 train_bytes=len(train_b), held_out_bytes=len(held_b), sha256=sha))


def lr_at(step, steps, peak=3e-3, warm=50):
    if step < warm:
        return peak * (step + 1) / warm
    t = (step - warm) / max(1, steps - warm)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * t)))


def held_loss(model, held, torch, device, windows=8):
    """Mean loss (nats per byte) over the first `windows` held-out windows of 4 * SEQ bytes."""
    n = 4 * SEQ
    total, count = 0.0, 0
    with torch.no_grad():
        for w in range(windows):
            x = torch.tensor(held[w * n:(w + 1) * n + 1], device=device)
            if len(x) < n + 1:
                break
            out = model(x[None, :-1], labels=x[None, :-1])
            logits = out.logits[0, :-1].float()
            total += float(torch.nn.functional.cross_entropy(logits, x[1:-1], reduction="sum"))
            count += n - 1
    return total / count


def main():
    cache = os.environ.get("Q35_LLAMA_CACHE", os.path.expanduser("~/.cache/q35-llama"))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=None)
    ap.add_argument("--steps", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--llama-src", default=os.path.join(cache, "src", "llama.cpp"))
    ap.add_argument("-o", "--out", required=True)
    a = ap.parse_args()
    import torch
    import transformers
    from transformers import Qwen3_5ForCausalLM, Qwen3_5TextConfig
    sys.path.insert(0, HERE)
    from convert_roundtrip import convert

    t0 = time.time()
    torch.use_deterministic_algorithms(True)
    if a.threads:
        torch.set_num_threads(a.threads)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    train, held, info = corpus(a.corpus or default_corpus())
    os.makedirs(a.out, exist_ok=True)
    log = open(os.path.join(a.out, "train.log"), "w")

    def say(s):
        print(s, flush=True)
        log.write(s + "\n")
        log.flush()

    torch.manual_seed(a.seed)
    config = Qwen3_5TextConfig(**CONFIG)
    config._attn_implementation = "eager"
    model = Qwen3_5ForCausalLM(config).float().to(a.device)
    params = sum(p.numel() for p in model.parameters())
    say(f"train_tiny: {params} parameters; corpus {info['dir']}: {info['files']} files, "
        f"{info['train_bytes']} training bytes, {info['held_out_bytes']} held out; {a.steps} steps of "
        f"{BATCH} x {SEQ} bytes on {a.device}, {torch.get_num_threads()} threads")
    decay = [p for n, p in model.named_parameters() if p.dim() >= 2]
    other = [p for n, p in model.named_parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": other, "weight_decay": 0.0}],
                            lr=3e-3, betas=(0.9, 0.95), eps=1e-8)
    gen = np.random.default_rng(a.seed)
    data = torch.tensor(train)
    model.train()
    for step in range(a.steps):
        for g in opt.param_groups:
            g["lr"] = lr_at(step, a.steps)
        offs = gen.integers(0, len(train) - SEQ - 1, size=BATCH)
        x = torch.stack([data[o:o + SEQ + 1] for o in offs]).to(a.device)
        logits = model(x[:, :-1]).logits
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, logits.shape[-1]).float(), x[:, 1:].reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0 or step == a.steps - 1:
            say(f"step {step:5d}  lr {lr_at(step, a.steps):.2e}  loss {float(loss):.4f}  {time.time() - t0:.0f} s")
        if (step + 1) % 200 == 0 and step + 1 < a.steps:
            model.eval()
            say(f"step {step:5d}  held-out loss {held_loss(model, held, torch, a.device):.4f} nats/byte")
            model.train()
    model.eval()
    hl32 = held_loss(model, held, torch, a.device)
    with torch.no_grad():
        for name, p in model.named_parameters():
            if p.dim() >= 2 and "conv1d" not in name:
                p.copy_(p.half().float())
    hl = held_loss(model, held, torch, a.device)
    say(f"held-out loss {hl32:.4f} nats/byte in float32, {hl:.4f} with the 2-D weights rounded to f16 "
        f"(perplexity {math.exp(hl):.3f}), {time.time() - t0:.0f} s")

    model = model.cpu()
    held_tokens = held[:HELDOUT].astype(np.int32)
    held_tokens.tofile(os.path.join(a.out, "heldout.i32"))
    prompt = held_tokens[:GOLDEN]
    prompt.tofile(os.path.join(a.out, "tokens.i32"))
    ids = torch.tensor(prompt[None, :].astype(np.int64))
    with torch.no_grad():
        full = model(ids).logits[0].float().numpy()
        past, steps = None, []
        for t in range(GOLDEN):
            r = model(ids[:, t:t + 1], past_key_values=past, use_cache=True)
            past = r.past_key_values
            steps.append(r.logits[0, -1].float().numpy())
    steps = np.stack(steps)
    full.astype("<f4").tofile(os.path.join(a.out, "logits.f32"))
    floor = max(float(np.linalg.norm(steps[i].astype(np.float64) - full[i]) / np.linalg.norm(full[i].astype(np.float64)))
                for i in range(GOLDEN))
    with tempfile.TemporaryDirectory() as tmp:
        model.save_pretrained(tmp, safe_serialization=True)
        convert(a.llama_src, tmp, os.path.join(a.out, "model.gguf"), "f16", False, False)
    case = dict(case="trained-bytes", parameters=params, config=CONFIG, corpus=info, steps=a.steps, seed=a.seed,
                batch=BATCH, seq=SEQ, held_out_loss_f32_nats_per_byte=hl32, held_out_loss_nats_per_byte=hl, held_out_perplexity=math.exp(hl),
                golden_tokens=GOLDEN, heldout_tokens=int(len(held_tokens)),
                logits="float32 [tokens][vocab], row t = logits after token t (full-sequence forward)",
                hf_decode_vs_full_rel_l2=floor, transformers=transformers.__version__, torch=torch.__version__,
                device=a.device, threads=torch.get_num_threads(), seconds=round(time.time() - t0, 1))
    with open(os.path.join(a.out, "case.json"), "w") as f:
        json.dump(case, f, indent=1)
    say(f"wrote {a.out}: model.gguf, heldout.i32, tokens.i32, logits.f32, case.json; floor {floor:.2e}")


if __name__ == "__main__":
    main()
