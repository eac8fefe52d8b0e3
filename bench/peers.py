#!/usr/bin/env python3
"""The kernel peers: what a user would run instead of our units, timed on the same
device at the same shapes as the benchmarks they pair with, written in the
project's benchmark JSON (bench/results/SCHEMA.md):

  peer_sdpa/backend:{cudnn,flash}/dtype:{bf16,f16}/model:M/ctx:C/query:{chunk,prompt}
      torch's scaled_dot_product_attention, causal, at bench_attention's heads
      (model 0/1/2 = bench/models.c's), contexts and chunk: `chunk` is a chunk of CHUNK
      query rows at the end of the context (flash_chunk's point), `prompt` the whole
      context at once (flash_prompt's and bench_flash_sm90's flash_sm90_whole's, up to
      the latter's WHOLE_MAX); FLOP as bench_attention
      counts them (visible pairs only)
  peer_fla/backend:{triton,flash_qla}/model:M/rows:T/graph:{0,1}
      flash-linear-attention's chunk_gated_delta_rule at bench_kernels' DeltaNet
      heads and the delta rule's rows (delta_rows), eager (graph:0) and replayed from a CUDA
      graph (graph:1); flash_qla is fla's FlashQLA backend where it is importable
  peer_gemm/dtype:{bf16,f16,fp8}/proj:P/rows:T
      torch's F.linear (y = x W^T) at bench_linear's projections and rows; fp8:
      torch._scaled_mm on e4m3 operands with row-wise scales (a scale a token and
      one an output), f32 accumulation, bf16 out (what torch's row-wise form allows),
      beside our gemm_fp8 (f32 out)

    python3 bench/peers.py [--families sdpa,fla,gemm] [--filter REGEX] [--reps 10]
                           [--seconds 1] [--device N] [--out results.json]
    python3 bench/peers.py --list      # the names, no torch needed

Each point gets fresh random inputs (never zeros), runs once untimed, then is timed
with CUDA events (bench/peerlib.py time_ms); with two or more timed calls the mean,
median, stddev and cv aggregates are written, as our benchmarks' repetitions are.
Where torch, a GPU, fla or a backend is missing, or a point fails, that point is
reported skipped with the reason and the JSON is still written (exit 0).
"""

import argparse
import contextlib
import importlib.util
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402

FAMILIES = ("sdpa", "fla", "gemm")
DTYPES = ("bf16", "f16")


class Skip(Exception):
    """A point that cannot run here, with the reason."""


def axes():
    """The axes of the benchmarks the peers pair with, read from their sources."""
    models = peerlib.bench_models(peerlib.read_shapes())
    att, ker, lin = "bench/bench_attention.c", "bench/bench_kernels.c", "bench/bench_linear.c"
    sm90 = "bench/bench_flash_sm90.c"
    if len({m["head_dim"] for m in models}) != 1:
        raise SystemExit("peers: the benchmarks' models differ in head_dim")
    return {
        "sdpa": {
            "models": [{"name": m["name"].upper(), "heads": m["n_head"], "kv": m["n_head_kv"]} for m in models],
            "head_dim": models[0]["head_dim"],
            "contexts": peerlib.c_ints(att, "contexts"),
            "chunk": peerlib.c_define(att, "CHUNK"),
            "prompt_max": max(peerlib.c_define(att, "PROMPT_MAX"), peerlib.c_define(sm90, "WHOLE_MAX")),
        },
        "fla": {
            "models": [{"name": m["name"].upper(), "hk": m["ssm_hk"], "hv": m["ssm_hv"], "dk": m["ssm_dk"],
                        "dv": m["ssm_dv"]} for m in models],
            "rows": peerlib.c_ints(ker, "delta_rows"),
        },
        "gemm": {
            "projections": [{"name": n, "n": out, "k": k} for n, out, k in peerlib.c_rows(lin, "k_proj")],
            "rows": peerlib.c_ints(lin, "rows"),
        },
    }


# ---- the points: (name, family, setup or the reason it is skipped); setup(torch, dev) returns
# (run, rates per call, values, scope: a context-manager factory entered around the timing) -----

def sdpa_points(ax):
    """torch SDPA at bench_attention's points."""
    hd, chunk = ax["head_dim"], ax["chunk"]
    for backend in ("cudnn", "flash"):
        for dtype in DTYPES:
            for mi, m in enumerate(ax["models"]):
                for ctx in ax["contexts"]:
                    for query in ("chunk", "prompt"):
                        rows = min(chunk, ctx) if query == "chunk" else ctx
                        name = f"peer_sdpa/backend:{backend}/dtype:{dtype}/model:{mi}/ctx:{ctx}/query:{query}"
                        if query == "prompt" and ctx > ax["prompt_max"]:
                            yield name, "sdpa", f"flash_sm90_whole stops at {ax['prompt_max']} (WHOLE_MAX)"
                            continue
                        yield name, "sdpa", (lambda torch, dev, b=backend, d=dtype, m=m, c=ctx, r=rows:
                                             sdpa_setup(torch, dev, b, d, m["heads"], m["kv"], hd, c, r))


def attn_flop(heads, hd, pos0, rows):
    """bench_attention's count: 4 hd heads over the visible (row, position) pairs."""
    return 4.0 * hd * heads * (rows * pos0 + rows * (rows + 1) / 2.0)


def sdpa_setup(torch, dev, backend, dtype, heads, kv, hd, ctx, rows):
    """rows query rows at positions ctx-rows .. ctx-1 over a causal cache of ctx; a
    chunk's mask is aligned to the bottom right (row i sees keys 0 .. ctx-rows+i):
    through torch's CausalBias for the flash backend (its lower-right path calls
    the flash kernel directly), an explicit additive mask for cuDNN. GQA through
    enable_gqa, else K and V expanded to every head (the value kv_expanded says
    which)."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    from torch.nn.attention.bias import causal_lower_right
    from torch.nn.functional import scaled_dot_product_attention as sdpa

    dt = {"bf16": torch.bfloat16, "f16": torch.float16}[dtype]
    q = torch.randn(1, heads, rows, hd, dtype=dt, device=dev)
    k = torch.randn(1, kv, ctx, hd, dtype=dt, device=dev)
    v = torch.randn(1, kv, ctx, hd, dtype=dt, device=dev)
    mask = None
    if rows < ctx and backend == "flash":
        mask = causal_lower_right(rows, ctx)
    elif rows < ctx:  # additive, in dtype: nothing to convert at each call
        visible = torch.ones(rows, ctx, dtype=torch.bool, device=dev).tril(ctx - rows)
        mask = torch.zeros(rows, ctx, dtype=dt, device=dev).masked_fill_(~visible, float("-inf"))
    only = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION}[backend]
    expanded = 0
    with sdpa_kernel(only):
        try:
            sdpa(q, k, v, attn_mask=mask, is_causal=mask is None, enable_gqa=True)
        except torch.cuda.OutOfMemoryError:
            raise
        except RuntimeError:
            k, v = (t.repeat_interleave(heads // kv, dim=1) for t in (k, v))
            expanded = 1

    def run():
        return sdpa(q, k, v, attn_mask=mask, is_causal=mask is None, enable_gqa=not expanded)

    rates = {"FLOP": attn_flop(heads, hd, ctx - rows, rows), "rows": rows}
    return run, rates, {"kv_expanded": expanded}, lambda: sdpa_kernel(only)


def fla_points(ax):
    """fla's chunk_gated_delta_rule at delta_rule_scan's points."""
    for backend in ("triton", "flash_qla"):
        for mi, m in enumerate(ax["models"]):
            for rows in ax["rows"]:
                for graph in (0, 1):
                    name = f"peer_fla/backend:{backend}/model:{mi}/rows:{rows}/graph:{graph}"
                    yield name, "fla", (lambda torch, dev, b=backend, m=m, t=rows, g=graph:
                                        fla_setup(torch, dev, b, m, t, g))


def fla_setup(torch, dev, backend, m, T, graph):
    """bf16 q, k (L2-normalised, as the model feeds the scan), v and beta in (0, 1),
    f32 log-decays g < 0 and a random f32 state in, the final state out."""
    try:
        from fla.ops.gated_delta_rule import chunk_gated_delta_rule
    except Exception as e:  # noqa: BLE001 (an import of fla can fail many ways: say how)
        raise Skip(f"fla not importable: {type(e).__name__}: {e}")
    if backend == "flash_qla" and importlib.util.find_spec("flash_qla") is None:
        raise Skip("FlashQLA (package flash_qla) not importable here")
    os.environ["FLA_FLASH_QLA"] = "1" if backend == "flash_qla" else "0"  # read by fla's dispatch at each call
    F = torch.nn.functional
    hk, hv, dk, dv = m["hk"], m["hv"], m["dk"], m["dv"]
    q = F.normalize(torch.randn(1, T, hk, dk, device=dev), dim=-1).to(torch.bfloat16)
    k = F.normalize(torch.randn(1, T, hk, dk, device=dev), dim=-1).to(torch.bfloat16)
    v = torch.randn(1, T, hv, dv, device=dev, dtype=torch.bfloat16)
    g = F.logsigmoid(torch.randn(1, T, hv, device=dev))
    beta = torch.rand(1, T, hv, device=dev, dtype=torch.bfloat16).clamp_min(0.01)
    h0 = 0.1 * torch.randn(1, hv, dk, dv, device=dev)
    args = (q, k, v, g, beta)
    kwargs = dict(initial_state=h0, output_final_state=True)
    if backend == "flash_qla":
        from fla.ops.gated_delta_rule.backends import FlashQLABackend
        ok, why = FlashQLABackend().verify("chunk_gated_delta_rule", *args, **kwargs)
        if not ok:
            raise Skip(f"FlashQLA refuses this call: {why}")

    def run():
        return chunk_gated_delta_rule(*args, **kwargs)

    if graph:
        run = captured(torch, run)
    ns = hv * dk * dv
    rates = {"FLOP": 7.0 * ns * T,  # delta_rule_scan's count of the recurrence
             "bytes": T * (2 * hk * dk * 2 + 2 * hv * dv * 2 + hv * (4 + 2)) + 2 * ns * 4,
             "tokens": T}
    return run, rates, {}, contextlib.nullcontext


def captured(torch, run):
    """run() captured in a CUDA graph (after two warm calls on a side stream, which
    compile and autotune); the graph's replay."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        run()
        run()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        run()
    return g.replay


def gemm_points(ax):
    """torch matmul at bench_linear's gemm points."""
    for dtype in DTYPES + ("fp8",):
        for pi, p in enumerate(ax["projections"]):
            for rows in ax["rows"]:
                yield f"peer_gemm/dtype:{dtype}/proj:{pi}/rows:{rows}", "gemm", (
                    lambda torch, dev, d=dtype, p=p, t=rows: gemm_setup(torch, dev, d, p["n"], p["k"], t))


def gemm_setup(torch, dev, dtype, n, k, T):
    """y [T, n] = x [T, k] W^T, W [n, k] (the model's layout), all in dtype (torch's
    defaults: cuBLAS, f32 accumulation)."""
    if dtype == "fp8":
        return scaled_mm_setup(torch, dev, n, k, T)
    dt = {"bf16": torch.bfloat16, "f16": torch.float16}[dtype]
    x = torch.randn(T, k, device=dev, dtype=dt)
    w = torch.randn(n, k, device=dev, dtype=dt) * k**-0.5

    def run():
        return torch.nn.functional.linear(x, w)

    return run, {"FLOP": 2.0 * T * n * k, "bytes": 2.0 * (n * k + T * k + T * n)}, {}, contextlib.nullcontext


def scaled_mm_setup(torch, dev, n, k, T):
    """y [T, n] (bf16) = (x8 [T, k] * sx) (w8 [n, k] * sw)^T, e4m3 operands with a
    scale a row of each: torch._scaled_mm's row-wise form (sm_89+)."""
    if not hasattr(torch, "_scaled_mm") or not hasattr(torch, "float8_e4m3fn"):
        raise Skip("this torch has no _scaled_mm / float8_e4m3fn")
    major, minor = torch.cuda.get_device_capability(dev)
    if major * 10 + minor < 89:
        raise Skip(f"FP8 needs compute capability 8.9 (this device: {major}.{minor})")
    x8 = torch.randn(T, k, device=dev).to(torch.float8_e4m3fn)
    w8 = (torch.randn(n, k, device=dev) * 16).to(torch.float8_e4m3fn)
    sx = torch.rand(T, 1, device=dev, dtype=torch.float32) + 0.5
    sw = torch.rand(1, n, device=dev, dtype=torch.float32) * k**-0.5

    def run():
        return torch._scaled_mm(x8, w8.t(), scale_a=sx, scale_b=sw, out_dtype=torch.bfloat16)

    return run, {"FLOP": 2.0 * T * n * k, "bytes": 1.0 * (n * k + T * k) + 2.0 * T * n}, {}, contextlib.nullcontext


POINTS = {"sdpa": sdpa_points, "fla": fla_points, "gemm": gemm_points}


# ---- the run ----------------------------------------------------------------------------------

def versions(torch):
    """The context keys naming what ran: torch's, cuDNN's, Triton's, fla's, FlashQLA's."""
    out = {"peer_cudnn": str(torch.backends.cudnn.version()),
           "peer_matmul_flags": "allow_tf32=%s, fp16_reduced_precision=%s, bf16_reduced_precision=%s" % (
               torch.backends.cuda.matmul.allow_tf32,
               torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction,
               torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction)}
    for key, module in (("peer_triton", "triton"), ("peer_fla", "fla"), ("peer_flash_qla", "flash_qla")):
        try:
            out[key] = getattr(__import__(module), "__version__", "importable, version unknown")
        except Exception as e:  # noqa: BLE001
            out[key] = f"not importable: {type(e).__name__}: {e}"
    return out


def legends(ax):
    """The axes' legends for the context, in the form of our benchmarks' own."""
    s, f, g = ax["sdpa"], ax["fla"], ax["gemm"]
    return {
        "models": ", ".join(f"{i} = {m['name']} ({m['heads']} heads / {m['kv']} kv)" for i, m in enumerate(s["models"]))
        + f"; head_dim {s['head_dim']}; chunk {s['chunk']} rows",
        "fla_models": ", ".join(f"{i} = {m['name']} ({m['hk']} key / {m['hv']} value heads, {m['dk']} x {m['dv']})"
                                for i, m in enumerate(f["models"])),
        "proj": ", ".join(f"{i} {p['name']} {p['n']}x{p['k']}" for i, p in enumerate(g["projections"])) + " (n x k)",
    }


def run_points(args, points, context):
    """Times every point (or skips it, saying why) and writes the JSON after each."""
    benchmarks = []
    try:
        import torch
    except ImportError as e:
        torch, why_all = None, f"torch not importable: {e}"
    else:
        why_all = None if torch.cuda.is_available() else "no CUDA device visible to torch"
    if torch is not None and why_all is None:
        dev = torch.device("cuda", args.device)
        torch.cuda.set_device(dev)
        context.update(peerlib.device_context(torch, args.device))
        context.update(versions(torch))
        power, keys = peerlib.open_power(torch, args.device, args.power)
        context.update(keys)
        torch.manual_seed(args.seed)
    for i, (name, family, setup) in enumerate(points):
        why = why_all or (setup if isinstance(setup, str) else None)
        if why is None:
            try:
                with torch.inference_mode():
                    run, rates, values, scope = setup(torch, dev)
                    board = {}
                    with scope():
                        times = peerlib.time_ms(torch, run, args.reps, args.seconds, power, board)
                benchmarks += peerlib.entries(name, i, times, rates, {**values, **board})
                print(f"peers: {name}: {sorted(times)[len(times) // 2]:.4f} ms ({len(times)} timed)", file=sys.stderr)
            except Skip as e:
                why = str(e)
            except Exception as e:  # noqa: BLE001 (a failing peer is reported, the others still run)
                why = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"[:400]
            finally:
                run = None
                torch.cuda.empty_cache()
        if why is not None:
            benchmarks.append(peerlib.skipped(name, i, why))
            print(f"peers: {name}: skipped: {why}", file=sys.stderr)
        if args.out:
            peerlib.write_results(args.out, context, benchmarks)
    if not args.out:
        peerlib.write_results("", context, benchmarks)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--families", default=",".join(FAMILIES), help="comma-separated, of %(default)s")
    p.add_argument("--filter", default="", help="only the points whose name this regex finds (re.search)")
    p.add_argument("--reps", type=int, default=10, help="timed calls per point at most (default %(default)s)")
    p.add_argument("--seconds", type=float, default=1.0,
                   help="no further timed call of a point once this many seconds are spent on it, "
                        "after two (default %(default)s)")
    p.add_argument("--device", type=int, default=int(os.environ.get("Q35_DEVICE", "0")),
                   help="CUDA device ordinal (default $Q35_DEVICE or 0; CUDA_VISIBLE_DEVICES applies)")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--no-power", dest="power", action="store_false",
                   help="no power, clock or energy counters (bench/peerlib.py Power)")
    p.add_argument("-o", "--out", default="", help="the JSON file (default stdout)")
    p.add_argument("--list", action="store_true", help="print the selected names and exit (no torch needed)")
    p.add_argument("--show-axes", action="store_true", help="print the axes read from the C sources as JSON")
    args = p.parse_args(argv)
    families = [f for f in args.families.split(",") if f]
    if not families or any(f not in FAMILIES for f in families):
        p.error(f"--families takes a comma-separated list of {', '.join(FAMILIES)}, got '{args.families}'")
    if args.reps < 1 or args.seconds < 0:
        p.error("--reps must be >= 1 and --seconds >= 0")
    try:
        selected = re.compile(args.filter)
    except re.error as e:
        p.error(f"--filter: {e}")
    ax = axes()
    if args.show_axes:
        import json
        print(json.dumps(ax, indent=2))
        return 0
    points = [pt for f in families for pt in POINTS[f](ax[f]) if selected.search(pt[0])]
    if args.list:
        print("\n".join(pt[0] for pt in points))
        return 0
    context = peerlib.base_context("bench/peers.py")
    context.update(legends(ax), peer="torch SDPA (cuDNN, flash), flash-linear-attention chunk_gated_delta_rule, "
                                      "torch F.linear; bench/peers.py")
    run_points(args, points, context)
    return 0


if __name__ == "__main__":
    sys.exit(main())
