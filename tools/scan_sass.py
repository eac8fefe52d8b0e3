#!/usr/bin/env python3
"""The delta-rule scan's per-token loop in SASS, and a rough issue model of it.

    tools/scan_sass.py [CUBIN...]

Without CUBIN, compiles kernels/delta_rule.cu and kernels/experiments/delta_rule.cu
(the production and the experiment layouts) for sm_90 (nvcc, cuobjdump on PATH).
For each scan kernel (one per variant layout) prints its registers, the
instructions of its token loop (the innermost loop with the FFMAs; PF variants
run two tokens a pass) per token, and the model's cycles per token at the 9B
shape (32 state rows an SM), for two calibrations.

The model (a guess made without a GPU, to rank layouts, not a measurement): one
SM, each warp issues in order, one instruction per scheduler per cycle; FP and
integer results after 4 cycles; LDS, SHFL and STG wait in their scheduler's
queue (8 deep) for one shared unit that serves the queues in turn, busy `mio`
cycles per 32-bit register an LDS returns (`cshfl` per SHFL), results `lds` or
`shfl` cycles after. Calibrated on the first three layouts as measured on an H200
(rows2 1.178, rows1 1.338, lanes4 1.224 ms; bench/results/log/), whose
loops it puts 56-91 cycles a token below the measured time (the per-tile
staging, then unpipelined)."""
import collections
import os
import re
import subprocess
import sys
import tempfile

CALIBRATIONS = {"A": dict(mio=1.25, cshfl=2, shfl=24, lds=40, q=8), "B": dict(mio=1.5, cshfl=1, shfl=24, lds=30, q=8)}


def kernels(cubin):
    """{name: [(addr, text)]} from cuobjdump."""
    out = subprocess.run(["cuobjdump", "-sass", cubin], capture_output=True, text=True, check=True).stdout
    res = {}
    for f in re.split(r"\n\s+Function : ", out)[1:]:
        name = f.split("\n", 1)[0].strip()
        res[name] = [(int(m.group(1), 16), m.group(2))
                     for m in re.finditer(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;", f, re.M)]
    return res


def token_loop(ins):
    """The innermost backward-branch loop with more than 30 FFMA."""
    best = None
    for a, t in ins:
        m = re.search(r"BRA (?:`\(\.L_x_\d+\) )?0x([0-9a-f]+)", t)
        if m and "BRA.DIV" not in t and int(m.group(1), 16) < a:
            body = [x for x in ins if int(m.group(1), 16) <= x[0] <= a]
            if sum("FFMA" in x[1] for x in body) > 30 and (best is None or len(body) < len(best)):
                best = body
    return best


def parse(body):
    prog = []
    for _, text in body:
        guard = None
        m = re.match(r"(@!?U?P[T0-9]+)\s+(.*)", text)
        if m:
            guard, text = m.group(1).lstrip("@!"), m.group(2)
        op, _, rest = text.partition(" ")
        ops = [o.strip() for o in rest.split(",")] if rest else []
        base = op.split(".")[0]
        width = 4 if ".128" in op else 2 if (".64" in op or ".WIDE" in op) else 1

        def regs(tok, w=1):
            out = []
            for r in re.findall(r"(U?R)(\d+)(\.64)?", tok):
                out += [f"{r[0]}{int(r[1]) + i}" for i in range(2 if r[2] else w)]
            return out + re.findall(r"\bU?P\d\b", tok)

        nodest = base in ("STG", "STS", "BRA", "BAR", "LDGSTS", "BSSY", "BSYNC", "EXIT", "DEPBAR", "NOP")
        if base == "SHFL":  # SHFL.BFLY PT, Rd, ...: a predicate first
            ops = ops[1:]
        dst, src = [], []
        for i, o in enumerate(ops):
            if i == 0 and not nodest:
                dst += regs(o, width if base in ("LDS", "LDC", "IMAD") else 1)
            elif i == 1 and not nodest and re.fullmatch(r"U?P\d", o):
                dst.append(o)
            else:
                src += regs(o)
        if guard and guard not in ("PT", "UPT"):
            src.append(guard)
        prog.append(dict(base=base, width=width, dst=[d for d in dst if d not in ("PT", "UPT")], src=src))
    return prog


def model(prog, warps, tokens, mio, cshfl, shfl, lds, q, horizon=20000):
    """Cycles per token, all `warps` of the SM running `prog` (a loop of `tokens` tokens)."""
    lat = dict(LDS=lds, SHFL=shfl, S2R=20, LDC=10)
    cost = dict(LDS=mio, SHFL=cshfl, STG=mio)
    ready = [dict() for _ in range(warps)]
    pc, queues, unit_free, rr, last, done = [0] * warps, [[] for _ in range(4)], 0, 0, [None] * 4, 0
    for cycle in range(horizon):
        if unit_free <= cycle:
            for k in range(4):
                qi = (rr + k) % 4
                if queues[qi]:
                    c, w, dsts, base = queues[qi].pop(0)
                    unit_free, rr = cycle + c, qi + 1
                    for r in dsts:
                        ready[w][r] = cycle + c + lat[base]
                    break
        for s in range(4):
            mine = [w for w in range(warps) if w % 4 == s]
            if last[s] in mine:
                mine.remove(last[s])
                mine.insert(0, last[s])
            for w in mine:
                ins = prog[pc[w]]
                if any(ready[w].get(r, 0) > cycle for r in ins["src"] + ins["dst"]):
                    continue
                if ins["base"] in cost:
                    if len(queues[s]) >= q:
                        continue
                    c = cost[ins["base"]] * (ins["width"] if ins["base"] == "LDS" else 1)
                    queues[s].append((c, w, ins["dst"], ins["base"]))
                    for r in ins["dst"]:
                        ready[w][r] = 1 << 60
                else:
                    for r in ins["dst"]:
                        ready[w][r] = cycle + lat.get(ins["base"], 4)
                pc[w] = (pc[w] + 1) % len(prog)
                done += pc[w] == 0 and cycle >= horizon // 4
                last[s] = w
                break
    return (horizon - horizon // 4) * warps / (done * tokens) if done else float("nan")


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if len(sys.argv) > 1:
        cubins, report = sys.argv[1:], ""
    else:  # the production layouts and the experiments'
        cubins, report, tmp = [], "", tempfile.mkdtemp()
        for i, src in enumerate((("kernels", "delta_rule.cu"), ("kernels", "experiments", "delta_rule.cu"))):
            cubins.append(os.path.join(tmp, f"delta_rule{i}.cubin"))
            report += subprocess.run(["nvcc", "-std=c++17", "-arch=sm_90", "-cubin", "-lineinfo", "-Xptxas", "-v", "-I",
                                      root, os.path.join(root, *src), "-o", cubins[-1]],
                                     capture_output=True, text=True, check=True).stderr
    regs = dict(re.findall(r"Function properties for (\S+)\n.*\n.*Used (\d+) registers", report))
    print("layout (lanes rows warps PF IL NS)  regs  SASS/token  model A, B cycles/token at 9B")
    found = {}
    for cubin in cubins:
        found.update(kernels(cubin))
    for name, ins in found.items():
        m = re.search(r"cfgILi(\d+)ELi(\d+)ELi(\d+)ELb([01])ELb([01])ELb([01])E", name)
        loop = token_loop(ins)
        if not m or not loop:
            continue
        lanes, rpl, warps, pf = (int(g) for g in m.groups()[:4])
        tokens = 2 if pf else 1
        prog = parse(loop)
        wps = 32 // (32 // lanes * rpl)  # warps an SM at 32 rows an SM
        ops = collections.Counter(p["base"] for p in prog)
        cyc = [model(prog, wps, tokens, **c) for c in CALIBRATIONS.values()]
        print(f"L{lanes:<2} R{rpl} W{warps:<2} {' '.join(m.groups()[3:])}  {regs.get(name, '?'):>4}  "
              f"{len(prog) / tokens:6.1f} ({ops['LDS'] / tokens:.0f} LDS, {ops['SHFL'] / tokens:.0f} SHFL)  "
              f"{cyc[0]:5.0f} {cyc[1]:5.0f}")


if __name__ == "__main__":
    main()
