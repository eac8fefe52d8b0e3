#!/usr/bin/env python3
"""The peer: Hugging Face transformers' own Qwen3.5 (Qwen3_5ForCausalLM, random
weights, bf16, SDPA attention) timing a prefill at the same prompt lengths as
the prefill sweep, written in the project's benchmark JSON (bench/results/
SCHEMA.md): benchmarks `peer_hf/shape:9b/dtype:bf16/len:4096/manual_time_median`
with `tokens_per_s`; lengths that do not fit are reported skipped with the reason.

    python3 bench/hf_peer.py --shape 9b [--layers N] [--lengths 512,4096,...]
                             [--reps 3] [--max-seconds 300] [--device N] [-o results.json]
    python3 bench/hf_peer.py --show-config --shape 27b   # the config only (no torch)

The shapes are read from data/shapes.c (the generator's own table), so the peer
and the C benchmarks run the same widths. A prefill is one forward over the
whole prompt with the cache on (as the model's prefill leaves its state), only
the last position's logits computed (logits_to_keep=1); each length is run once
to warm up, then timed `reps` times with CUDA events (fewer once --max-seconds
are spent on it); the median is reported, `repetitions` saying how many ran.
Needs torch and transformers (>= 5, which has Qwen3.5); the gated delta rule
runs through flash-linear-attention when installed, else transformers' torch
fallback (the context says which).
"""

import argparse
import datetime
import json
import os
import platform
import re
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
LENGTHS = [512, 4096, 16384, 65536, 131072]


def c_value(text):
    """A C initializer value of data/shapes.c as Python: int, float, bool."""
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if text.startswith('"'):
        return text.strip('"')
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return float(text.rstrip("fF"))


def read_shapes(path=os.path.join(ROOT, "data", "shapes.c")):
    """The shapes table of data/shapes.c: {name: {field: value}}, the
    QWEN35_COMMON macro expanded."""
    with open(path, encoding="utf-8") as f:
        src = f.read()
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    macro = re.search(r"#define\s+QWEN35_COMMON\s+((?:.*\\\n)*.*)", src)
    common = macro.group(1).replace("\\\n", " ") if macro else ""
    table = re.search(r"k_shapes\[\]\s*=\s*\{(.*?)\n\};", src, flags=re.S)
    if not table:
        raise SystemExit(f"hf_peer: no k_shapes table in {path}")
    shapes = {}
    for entry in re.findall(r"\{([^{}]*)\}", table.group(1)):
        entry = entry.replace("QWEN35_COMMON", common)
        fields = {k: c_value(v) for k, v in re.findall(r"\.(\w+)\s*=\s*([^,]+)", entry)}
        shapes[fields["name"]] = fields
    return shapes


def hf_config_args(shape, layers=None):
    """The keyword arguments of transformers' Qwen3_5TextConfig for a shape of
    data/shapes.c (layer i is full attention when (i + 1) % interval == 0)."""
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


def git_describe():
    """$Q35_GIT_DESCRIBE when set (a tree copied without .git), else git describe."""
    if os.environ.get("Q35_GIT_DESCRIBE"):
        return os.environ["Q35_GIT_DESCRIBE"]
    try:
        out = subprocess.run(["git", "-C", ROOT, "describe", "--always", "--dirty", "--abbrev=7"],
                             capture_output=True, text=True, check=True)
        return out.stdout.strip() or "unknown"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def entry(name, index, reps, ms=None, tokens=None, skipped=None):
    """One benchmark entry in Google Benchmark's JSON form: the median of reps
    runs, or a skipped point with its reason."""
    e = {"name": name + "/manual_time", "family_index": 0, "per_family_instance_index": index,
         "run_name": name + "/manual_time", "threads": 1}
    if skipped is not None:
        e.update(run_type="iteration", repetitions=reps, repetition_index=0, iterations=0, real_time=0.0,
                 cpu_time=0.0, time_unit="ms", error_occurred=True, error_message="skipped: " + skipped)
        return e
    e.update(name=name + "/manual_time_median", run_type="aggregate", repetitions=reps, aggregate_name="median",
             aggregate_unit="time", iterations=reps, real_time=ms, cpu_time=ms, time_unit="ms",
             tokens_per_s=tokens / (ms / 1e3))
    return e


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


def time_prefill(model, n, reps, max_seconds, vocab, device):
    """The median ms of up to reps prefills of n random tokens (one warm-up
    first; no further run once max_seconds of timed runs are spent) and how
    many ran."""
    import torch

    ids = torch.randint(0, vocab, (1, n), device=device)

    def once():
        with torch.inference_mode():
            model(input_ids=ids, use_cache=True, logits_to_keep=1)

    once()
    torch.cuda.synchronize(device)
    times = []
    while len(times) < reps and sum(times) < max_seconds * 1e3:
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        once()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    times.sort()
    return times[len(times) // 2], len(times)


def fast_path():
    """Which gated-delta-rule and conv implementations transformers will use."""
    try:
        from transformers.utils import is_flash_linear_attention_available
        fla = is_flash_linear_attention_available()
    except ImportError:
        fla = False
    return "flash-linear-attention" if fla else "transformers torch fallback (no flash-linear-attention)"


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
    props = torch.cuda.get_device_properties(args.device)
    context = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "host_name": socket.gethostname(),
        "executable": "bench/hf_peer.py",
        "command": " ".join([os.path.basename(sys.executable)] + sys.argv),
        "device": torch.cuda.get_device_name(args.device),
        "device_ordinal": str(args.device),
        "device_sms": str(props.multi_processor_count),
        "device_memory_gib": "%.1f" % (props.total_memory / 2**30),
        "cuda_visible_devices": os.environ.get("CUDA_VISIBLE_DEVICES", "(unset)"),
        "peer": "huggingface transformers Qwen3_5ForCausalLM, random weights, bf16, sdpa",
        "peer_transformers": transformers.__version__,
        "peer_torch": torch.__version__,
        "peer_torch_cuda": str(torch.version.cuda),
        "peer_python": platform.python_version(),
        "peer_delta_rule": fast_path(),
        "peer_layers": str(args.layers or shape["n_layer"]),
        "git_describe": git_describe(),
        "q35_schema": "1",
        "q35_shard": "0/1",
    }
    model = build_model(args, shape)
    family = f"peer_hf/shape:{args.shape}/dtype:bf16"
    if args.layers:
        family += f"/layers:{args.layers}"
    benchmarks = []

    def write():
        text = json.dumps({"context": context, "benchmarks": benchmarks}, indent=2) + "\n"
        if args.output:  # rewritten after each length, so a run cut short keeps what it measured
            with open(args.output, "w", encoding="utf-8") as f:
                f.write(text)
        return text

    for i, n in enumerate(args.lengths):
        name = f"{family}/len:{n}"
        try:
            ms, ran = time_prefill(model, n, args.reps, args.max_seconds, shape["n_vocab"], args.torch_device)
            benchmarks.append(entry(name, i, ran, ms=ms, tokens=n))
            print(f"hf_peer: {name}: {ms:.1f} ms, {n / (ms / 1e3):.0f} tokens/s", file=sys.stderr)
        except torch.cuda.OutOfMemoryError:
            torch.cuda.empty_cache()
            free, total = torch.cuda.mem_get_info(args.device)
            why = f"out of memory at {n} tokens ({free / 2**30:.1f} of {total / 2**30:.1f} GiB free after the attempt)"
            benchmarks.append(entry(name, i, args.reps, skipped=why))
            print(f"hf_peer: {name}: skipped: {why}", file=sys.stderr)
        write()
    if not args.output:
        sys.stdout.write(write())


def main(argv=None):
    shapes = read_shapes()
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shape", default="9b", choices=sorted(shapes), help="a shape of data/shapes.c (default 9b)")
    p.add_argument("--layers", type=int, default=None, help="decoder layers (default: the shape's)")
    p.add_argument("--lengths", default=",".join(map(str, LENGTHS)),
                   help="prompt lengths, comma-separated (default %(default)s)")
    p.add_argument("--reps", type=int, default=3, help="timed prefills per length, median reported (default 3)")
    p.add_argument("--max-seconds", type=float, default=300.0,
                   help="no further timed run of a length once this many seconds are spent on it (default 300)")
    p.add_argument("--device", type=int, default=int(os.environ.get("Q35_DEVICE", "0")),
                   help="CUDA device ordinal (default $Q35_DEVICE or 0; CUDA_VISIBLE_DEVICES applies)")
    p.add_argument("--seed", type=int, default=1)
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
        print(json.dumps(hf_config_args(shapes[args.shape], args.layers), indent=2))
        return 0
    run(args, shapes)
    return 0


if __name__ == "__main__":
    sys.exit(main())
