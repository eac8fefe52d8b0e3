#!/usr/bin/env python3
"""Our ops beside llama.cpp's, on the same file and device: where each one's
time goes in a prompt chunk and in a decode step, by what the time does.

    python3 bench/ops_beside.py --ours RUN.log --llama OPS.json [-o OUT.md]

RUN.log is `q35 run --model FILE --random ROWS --decode STEPS` output: its two
tables of device time per op (CUDA events), "timed prefill" (one prefill of
ROWS tokens) and "timed decode, STEPS steps" (divided by STEPS). OPS.json is
bench/llama_ops.py's for the same file at the same ROWS: its kinds
(`peer_llama_ops/.../graph:pp|tg/kind:K`), each op timed alone by
test-backend-ops, summed over the graph.

The groups, each side's ops in it:

    projections   ours: proj (with SwiGLU where the GEMM fuses it) and tail
                  (the output norm and lm_head); llama.cpp: MUL_MAT of every
                  weight type
    delta rule    delta_rule | GATED_DELTA_NET
    conv          conv1d | SSM_CONV, CONCAT (its state's rows)
    attention     attention | FLASH_ATTN_EXT
    the rest      every other op of either (norms, gates, RoPE, SwiGLU apart,
                  the KV append, copies, the embedding)
    gaps          ours: "(other)", the step's time outside the timed ops;
                  llama.cpp: none (its ops timed alone: no launch gaps, no
                  fusion across ops)

A table of ROWS too short, a missing table or a kind the JSON does not have is
refused with what is missing: nothing is guessed.
"""

import argparse
import json
import re
import sys

OURS = {"proj": "projections", "tail": "projections", "delta_rule": "delta rule", "conv1d": "conv",
        "attention": "attention", "(other)": "gaps"}
LLAMA = {"GATED_DELTA_NET": "delta rule", "SSM_CONV": "conv", "CONCAT": "conv", "FLASH_ATTN_EXT": "attention"}
GROUPS = ["projections", "delta rule", "conv", "attention", "the rest", "gaps"]


def fail(msg):
    sys.exit(f"ops_beside: {msg}")


def our_tables(path):
    """{"pp": {op: ms}, "tg": {op: ms a step}, "device": name or None}, rows, steps from a q35 run log."""
    text = open(path, encoding="utf-8").read()
    m = re.search(r"^prompt\s+(\d+) tokens", text, re.M)
    rows = int(m.group(1)) if m else None
    d = re.search(r"^path\s+CUDA on (.+?) \(device", text, re.M)
    out, steps = {"device": d.group(1) if d else None}, None
    for graph, head, title in (("pp", r"^timed prefill \(device time per op", "timed prefill"),
                               ("tg", r"^timed decode, (\d+) steps", "timed decode, N steps")):
        h = re.search(head, text, re.M)
        if not h:
            fail(f"{path}: no table '{title}' (q35 run --random ROWS --decode STEPS writes both)")
        if graph == "tg":
            steps = int(h.group(1))
        ops = {}
        lines = text[h.end():].splitlines()[1:]
        if not lines or not lines[0].startswith("op "):
            fail(f"{path}: the {graph} table has no header line")
        for line in lines[1:]:
            f = line.split()
            if not f or f[0] == "total":
                break
            try:
                ops[f[0]] = float(f[1]) / (steps if graph == "tg" else 1)
            except (IndexError, ValueError):
                fail(f"{path}: {graph} table line '{line}' is not 'op ms % calls'")
        if not ops:
            fail(f"{path}: the {graph} table has no ops")
        out[graph] = ops
    return out, rows, steps


def llama_kinds(path, rows):
    """{"pp": {kind: ms}, "tg": {kind: ms}} from bench/llama_ops.py's JSON at rows."""
    doc = json.load(open(path, encoding="utf-8"))
    out = {"pp": {}, "tg": {}}
    pat = re.compile(r"^peer_llama_ops/.*/rows:(\d+)/graph:(pp|tg)/kind:([^/]+)/")
    for b in doc.get("benchmarks", []):
        m = pat.match(b.get("name", ""))
        if m and int(m.group(1)) == rows:
            out[m.group(2)][m.group(3)] = float(b["real_time"])
    for g in out:
        if not out[g]:
            fail(f"{path}: no {g} kinds at rows {rows} (bench/llama_ops.py's JSON at the run's rows)")
    return out, doc.get("context", {})


def group(name, table):
    if table is OURS:
        return OURS.get(name, "the rest")
    if name.startswith("MUL_MAT"):
        return "projections"
    return LLAMA.get(name, "the rest")


def sums(ops, table):
    s = dict.fromkeys(GROUPS, 0.0)
    for name, ms in ops.items():
        s[group(name, table)] += ms
    return s


def fmt(v):
    return f"{v:.3f}" if v >= 0.01 or v == 0 else f"{v:.4f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--ours", required=True, help="q35 run --random ROWS --decode STEPS output")
    ap.add_argument("--llama", required=True, help="bench/llama_ops.py's JSON at the same rows")
    ap.add_argument("-o", "--out", help="the table (markdown); default stdout")
    a = ap.parse_args()
    ours, rows, steps = our_tables(a.ours)
    if rows is None:
        fail(f"{a.ours}: no 'prompt N tokens' line (q35 run --random ROWS)")
    llama, ctx = llama_kinds(a.llama, rows)
    device = ours["device"] or ctx.get("device", "the same device")
    lines = [f"Where the time goes, ours beside llama.cpp {ctx.get('peer_llama_commit', '')} on "
             f"{device}: a prompt of {rows} tokens (pp: ours one prefill, llama.cpp its "
             f"graph for a chunk of {rows} rows) and a decode step at a cache of {rows} (tg: ours the mean of "
             f"{steps} timed steps). Ours: device time per op (CUDA events); llama.cpp: each op timed alone "
             "(test-backend-ops), summed over its graph. ms; ratio = ours / llama.cpp.", ""]
    for g in ("pp", "tg"):
        o, l = sums(ours[g], OURS), sums(llama[g], LLAMA)
        lines += [f"| {g} {rows}: group | ours ms | llama.cpp ms | ours / llama.cpp |", "|---|---:|---:|---:|"]
        for name in GROUPS + ["total"]:
            ov = sum(o.values()) if name == "total" else o[name]
            lv = sum(l.values()) if name == "total" else l[name]
            ratio = f"{ov / lv:.2f}x" if lv > 0 else "-"
            bold = "**" if name == "total" else ""
            lines.append(f"| {bold}{name}{bold} | {bold}{fmt(ov)}{bold} | {bold}{fmt(lv)}{bold} | {ratio} |")
        lines.append("")
    for g in ("pp", "tg"):
        rest_o = sorted((k for k in ours[g] if group(k, OURS) == "the rest"))
        rest_l = sorted((k for k in llama[g] if group(k, LLAMA) == "the rest"))
        lines.append(f"{g} 'the rest': ours {', '.join(rest_o) or '-'}; llama.cpp {', '.join(rest_l) or '-'}.")
    text = "\n".join(lines) + "\n"
    if a.out:
        open(a.out, "w", encoding="utf-8").write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
