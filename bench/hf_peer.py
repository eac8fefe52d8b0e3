#!/usr/bin/env python3
"""The peer: Hugging Face transformers' own Qwen3.5 (Qwen3_5ForCausalLM, random
weights, bf16, SDPA attention) timing a prefill at the same prompt lengths as
the prefill sweep, written in the project's benchmark JSON (bench/results/
SCHEMA.md): benchmarks `peer_hf/shape:9b/dtype:bf16/len:4096/manual_time_median`
with `tokens_per_s`; lengths that do not fit are reported skipped with the reason.

    python3 bench/hf_peer.py --shape 9b [--layers N] [--lengths 512,4096,...]
                             [--reps 3] [--max-seconds 300] [--device N] [-o results.json]
    python3 bench/hf_peer.py --show-config --shape 27b   # the config only (no torch)

The shapes are read from model/shapes.c (the generator's own table), so the peer
and the C benchmarks run the same widths. A prefill is one forward over the
whole prompt with the cache on (as the model's prefill leaves its state), only
the last position's logits computed (logits_to_keep=1); each length is run once
to warm up, then timed `reps` times with CUDA events (fewer once --max-seconds
are spent on it, but at least two); the mean, median, stddev and cv over them are
reported (`repetitions` says how many ran), as our benchmarks' repetitions are.
Needs torch and transformers (>= 5, which has Qwen3.5); the gated delta rule
runs through flash-linear-attention when importable, else transformers' torch
reference: the context's peer_delta_rule and peer_conv1d say what ran.
"""

import argparse
import inspect
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402
from peerlib import read_shapes  # noqa: E402

LENGTHS = [512, 4096, 16384, 65536, 131072]


def hf_config_args(shape, layers=None):
    """The keyword arguments of transformers' Qwen3_5TextConfig for a shape of
    model/shapes.c (layer i is full attention when (i + 1) % interval == 0)."""
    n_layer = layers or shape["n_layer"]
    interval = shape["full_attn_interval"]
    return dict(
        vocab_size=shape["n_vocab"],
        hidden_size=shape["n_embd"],
        intermediate_size=shape["n_ff"],
        num_hidden_layers=n_layer,
        num_attention_heads=shape["n_head"],
        num_key_value_heads=shape["n_head_kv"],
        head_dim=shape["head_dim"],
        linear_conv_kernel_dim=shape["conv_kernel"],
        linear_key_head_dim=shape["ssm_dk"],
        linear_value_head_dim=shape["ssm_dv"],
        linear_num_key_heads=shape["ssm_hk"],
        linear_num_value_heads=shape["ssm_hv"],
        max_position_embeddings=max(shape["n_ctx_train"], max(LENGTHS)),
        rms_norm_eps=shape["eps"],
        tie_word_embeddings=shape["tied"],
        rope_parameters={
            "rope_type": "default",
            "rope_theta": shape["rope_base"],
            "partial_rotary_factor": shape["n_rot"] / shape["head_dim"],
        },
        layer_types=["full_attention" if (i + 1) % interval == 0 else "linear_attention" for i in range(n_layer)],
    )


def build_model(args, shape):
    """Qwen3_5ForCausalLM with random weights on the device, bf16, SDPA."""
    import torch
    from transformers import Qwen3_5ForCausalLM, Qwen3_5TextConfig

    config = Qwen3_5TextConfig(**hf_config_args(shape, args.layers))
    config._attn_implementation = "sdpa"
    torch.manual_seed(args.seed)
    previous = torch.get_default_dtype()
    torch.set_default_dtype(torch.bfloat16)
    try:
        with torch.device(args.torch_device):
            model = Qwen3_5ForCausalLM(config)
    finally:
        torch.set_default_dtype(previous)
    return model.to(dtype=torch.bfloat16).eval()


def time_prefill(model, n, reps, max_seconds, vocab, device, power=None, board=None):
    """The ms of each of up to reps timed prefills of n random tokens (peerlib.time_ms:
    one warm-up first, no further run once max_seconds are spent); with power, the
    board's counters over the timed prefills into the dict board."""
    import torch

    ids = torch.randint(0, vocab, (1, n), device=device)

    def once():
        with torch.inference_mode():
            model(input_ids=ids, use_cache=True, logits_to_keep=1)

    return peerlib.time_ms(torch, once, reps, max_seconds, power, board)


def delta_paths():
    """What transformers' Qwen3.5 calls for its gated delta rule and its causal
    conv: transformers (5.17) resolves each once, as its modeling module is
    imported (a hub kernel, else the package's function, else its torch
    reference), and keeps it in the wrapper's closure; read from there, with the
    package's version and, for flash-linear-attention, the backend its dispatch
    picks (FlashQLA where importable and enabled, else Triton)."""
    try:
        from transformers.models.qwen3_5 import modeling_qwen3_5 as m
    except ImportError as e:
        return {"peer_delta_rule": f"unknown (no transformers Qwen3.5: {e})"}
    out = {}
    for key, name in (("peer_delta_rule", "torch_chunk_gated_delta_rule"), ("peer_conv1d", "causal_conv1d_fn")):
        fn = getattr(m, name, None)
        try:
            impl = inspect.getclosurevars(fn).nonlocals.get("implementation", fn)
        except (TypeError, ValueError):
            impl = fn
        where = getattr(impl, "__module__", None) or "unknown"
        out[key] = ("transformers' torch reference (slow)" if where == m.__name__ else
                    f"{where}.{getattr(impl, '__name__', name)}")
    if out["peer_delta_rule"].startswith("fla."):
        import fla
        from fla.ops.gated_delta_rule.backends import FlashQLABackend
        qla = FlashQLABackend.is_available() and FlashQLABackend().is_enabled()
        out["peer_delta_rule"] = (f"flash-linear-attention {fla.__version__} ({out['peer_delta_rule']}, backend "
                                  + ("flash_qla where its verifier accepts the call, else triton)" if qla else
                                     "triton: FlashQLA not importable or disabled)"))
    return out


def run(args, shapes):
    try:
        import torch
        import transformers
    except ImportError as e:
        raise SystemExit(f"hf_peer: needs torch and transformers >= 5 (Qwen3.5): {e}")

    if not torch.cuda.is_available():
        raise SystemExit("hf_peer: no CUDA device visible to torch")
    args.torch_device = f"cuda:{args.device}"
    torch.cuda.set_device(args.device)
    shape = shapes[args.shape]
    context = peerlib.base_context("bench/hf_peer.py")
    context.update(peerlib.device_context(torch, args.device))
    power, keys = peerlib.open_power(torch, args.device, args.power)
    context.update(keys)
    context.update(delta_paths(), peer="huggingface transformers Qwen3_5ForCausalLM, random weights, bf16, sdpa",
                   peer_transformers=transformers.__version__, peer_layers=str(args.layers or shape["n_layer"]))
    print(f"hf_peer: delta rule: {context['peer_delta_rule']}; conv: {context.get('peer_conv1d', '?')}",
          file=sys.stderr)
    model = build_model(args, shape)
    family = f"peer_hf/shape:{args.shape}/dtype:bf16"
    if args.layers:
        family += f"/layers:{args.layers}"
    benchmarks = []
    for i, n in enumerate(args.lengths):
        name = f"{family}/len:{n}"
        try:
            board = {}
            times = time_prefill(model, n, args.reps, args.max_seconds, shape["n_vocab"], args.torch_device,
                                 power, board)
            benchmarks += peerlib.entries(name, i, times, rates={"tokens_per_s": n}, values=board)
            ms = sorted(times)[len(times) // 2]
            print(f"hf_peer: {name}: {ms:.1f} ms, {n / (ms / 1e3):.0f} tokens/s ({len(times)} timed)", file=sys.stderr)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            free, total = torch.cuda.mem_get_info(args.device)
            why = f"out of memory at {n} tokens ({free / 2**30:.1f} of {total / 2**30:.1f} GiB free after the attempt)"
            benchmarks.append(peerlib.skipped(name, i, why))
            print(f"hf_peer: {name}: skipped: {why}", file=sys.stderr)
        if args.output:  # rewritten after each length, so a run cut short keeps what it measured
            peerlib.write_results(args.output, context, benchmarks)
    if not args.output:
        peerlib.write_results("", context, benchmarks)


def main(argv=None):
    shapes = read_shapes()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", default="9b", choices=sorted(shapes), help="a shape of model/shapes.c (default 9b)")
    p.add_argument("--layers", type=int, default=None, help="decoder layers (default: the shape's)")
    p.add_argument("--lengths", default=",".join(map(str, LENGTHS)),
                   help="prompt lengths, comma-separated (default %(default)s)")
    p.add_argument("--reps", type=int, default=3,
                   help="timed prefills per length at most; their mean, median, stddev and cv reported (default 3)")
    p.add_argument("--max-seconds", type=float, default=300.0,
                   help="no further timed run of a length once this many seconds are spent on it (default 300)")
    p.add_argument("--device", type=int, default=int(os.environ.get("Q35_DEVICE", "0")),
                   help="CUDA device ordinal (default $Q35_DEVICE or 0; CUDA_VISIBLE_DEVICES applies)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-power", dest="power", action="store_false",
                   help="no power, clock or energy counters (bench/peerlib.py Power)")
    p.add_argument("-o", "--output", help="the JSON file (default stdout)")
    p.add_argument("--show-config", action="store_true",
                   help="print the Qwen3_5TextConfig arguments for the shape and exit (no torch needed)")
    args = p.parse_args(argv)
    try:
        args.lengths = [int(x) for x in args.lengths.split(",") if x]
    except ValueError:
        p.error(f"--lengths wants integers, got '{args.lengths}'")
    if not args.lengths or min(args.lengths) < 1 or args.reps < 1 or (args.layers is not None and args.layers < 1):
        p.error("lengths, --reps and --layers must be >= 1")
    if args.show_config:
        import json
        print(json.dumps(hf_config_args(shapes[args.shape], args.layers), indent=2))
        return 0
    run(args, shapes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
