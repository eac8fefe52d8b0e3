#!/usr/bin/env python3
"""Where llama.cpp's time goes: the ops of its own graph for a model file
(bench/llama_graph_ops.cpp's list, each with how often the graph runs it),
timed one by one by test-backend-ops (`perf --test-file ... --output sql`),
written as the project's benchmark JSON and as a table:

    peer_llama_ops/shape:9b/quant:q4_k/rows:4096/graph:pp/op:MUL_MAT/node:ffn_gate-0/manual_time
        real_time: one run of the op (ms); rate bytes (its output and inputs, test-backend-ops'
        size of the op: a GEMV's weight, mostly); values: count (runs a graph), graph_ms (count x time)
    peer_llama_ops/shape:9b/quant:q4_k/rows:4096/graph:pp/kind:MUL_MAT_q4_K/manual_time
        the kind's share of the graph: real_time = the sum of count x time over its ops, bytes the
        sum of count x bytes

    python3 bench/llama_ops.py --shape 9b --quant q4_k --rows 4096 --graph GRAPH_OPS.txt \\
        [-o OUT.json] [--table OUT.md] PERF.sql...

GRAPH_OPS lines: GRAPH COUNT then a line of test-backend-ops' test-file format
whose last field is the node's name (llama_graph_ops.cpp). A graph is pp (a
prompt chunk of ROWS rows, one output row) or tg (one decode step at a cache of
the context the list was made for). The SQL's rows are matched to the list in
order, by name: test-backend-ops prints nothing for a case it cannot build, so
such an op is reported as not timed, never guessed. A kind is the op, and for
MUL_MAT and GET_ROWS the weight's type; a MUL_MAT kind's GB/s the bytes
test-backend-ops counts for its ops (output and inputs: in a decode step, the
weight, mostly) over their time (the JSON has every op's bytes; for other ops
they count whole inputs, e.g. GET_ROWS its whole table, so the table leaves them out). The sum over ops is the graph's kernel
time with no launch gaps and no fusion across ops: llama-bench's own figure for
the same file is the whole graph's.
"""

import argparse
import collections
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peerlib  # noqa: E402
import llama_peer  # noqa: E402

SQL_FIELDS = ("test_time", "build_commit", "backend_name", "op_name", "op_params", "test_mode", "supported",
              "passed", "error_message", "time_us", "flops", "bandwidth_gb_s", "memory_kb", "n_runs",
              "device_description", "backend_reg_name")
INSERT = re.compile(r"^INSERT INTO test_backend_ops \(([^)]*)\) VALUES \((.*)\);\s*$")
VALUE = re.compile(r"'((?:[^']|'')*)'")


def read_graph(path):
    """[(graph, count, ne, name)] of a llama_graph_ops.cpp list (ne: "ne0,ne1,ne2,ne3")."""
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            w = line.split()
            if not w:
                continue
            if len(w) < 9 or w[0] not in ("pp", "tg") or not w[1].isdigit() or not w[8].isdigit():
                raise SystemExit(f"llama_ops: {path}:{n}: not a line of llama_graph_ops.cpp's list")
            rows.append((w[0], int(w[1]), ",".join(w[4:8]), w[-1]))
    if not rows:
        raise SystemExit(f"llama_ops: {path}: no ops")
    return rows


def read_sql(paths):
    """The perf results of test-backend-ops --output sql, in order, as dicts."""
    out = []
    for path in paths:
        with open(path, encoding="utf-8", errors="replace") as f:
            for line in f:
                m = INSERT.match(line)
                if not m:
                    continue
                fields = [x.strip() for x in m.group(1).split(",")]
                values = [v.replace("''", "'") for v in VALUE.findall(m.group(2))]
                if len(fields) != len(values):
                    raise SystemExit(f"llama_ops: {path}: a row of {len(values)} values for {len(fields)} fields")
                r = dict(zip(fields, values))
                if r.get("test_mode") == "perf":
                    out.append(r)
    return out


def node_name(op_params):
    m = re.match(r"name=([^,]*),", op_params)
    return m.group(1) if m else ""


def node_ne(op_params):
    m = re.search(r",ne=\[([-0-9,]*)\]", op_params)
    return m.group(1) if m else ""


def src0_type(op_params):
    m = re.search(r"sources=([A-Za-z0-9_]+)\[", op_params)
    return m.group(1) if m else "?"


def match(rows, results):
    """Each list row with its result (or None): results taken in order, each to the
    next row of its name and shape."""
    timed = [None] * len(rows)
    i = 0
    for r in results:
        name, ne = node_name(r.get("op_params", "")), node_ne(r.get("op_params", ""))
        j = i
        while j < len(rows) and (rows[j][3] != name or rows[j][2] != ne):
            j += 1
        if j == len(rows):
            raise SystemExit(f"llama_ops: a result for {name or '?'} ({r.get('op_name')}) after row {i} of the list "
                             "matches no later row: the SQL is not of this list")
        timed[j] = r
        i = j + 1
    return timed


def kind_of(r):
    op = r["op_name"]
    return f"{op} {src0_type(r['op_params'])}" if op in ("MUL_MAT", "GET_ROWS") else op


def build(rows, timed, shape, quant, n_rows):
    """(benchmarks, {graph: [(kind, nodes, ms, bytes)]}, {graph: [names not timed]})."""
    benchmarks, kinds, untimed = [], {}, collections.defaultdict(list)
    idx = 0
    for graph in ("pp", "tg"):
        base = f"peer_llama_ops/shape:{shape}/quant:{quant}/rows:{n_rows}/graph:{graph}"
        per_kind = collections.OrderedDict()
        for (g, count, _ne, name), r in zip(rows, timed):
            if g != graph:
                continue
            if r is None or r.get("supported") != "1" or float(r.get("time_us", 0)) <= 0:
                untimed[graph].append(name)
                continue
            ms, nbytes = float(r["time_us"]) / 1e3, 1024.0 * float(r.get("memory_kb") or 0)
            benchmarks += peerlib.entries(f"{base}/op:{r['op_name']}/node:{name}", idx, [ms], rates={"bytes": nbytes},
                                          values={"count": count, "graph_ms": count * ms})
            idx += 1
            k = kind_of(r)
            nodes, total, moved = per_kind.get(k, (0, 0.0, 0.0))
            per_kind[k] = (nodes + count, total + count * ms, moved + count * nbytes)
        ranked = sorted(((k, n, t, b) for k, (n, t, b) in per_kind.items()), key=lambda x: -x[2])
        for k, n, t, b in ranked:
            benchmarks += peerlib.entries(f"{base}/kind:{k.replace(' ', '_')}", idx, [t], rates={"bytes": b},
                                          values={"count": n})
            idx += 1
        kinds[graph] = ranked
    return benchmarks, kinds, untimed


def table(kinds, untimed, shape, quant, n_rows, device):
    lines = [f"llama.cpp {llama_peer.LLAMA_COMMIT}'s graph for the {shape} {quant} file, each op timed alone by "
             f"test-backend-ops on {device}: the prompt chunk (pp, {n_rows} rows, one output row) and one "
             f"decode step (tg, a cache of {n_rows}). Kernel time only: no launch gaps, no fusion across ops.", ""]
    for graph in ("pp", "tg"):
        ranked = kinds.get(graph, [])
        total = sum(t for _, _, t, _ in ranked)
        lines += [f"| {graph} {n_rows}: kind | nodes | ms | share | GB/s |", "|---|---:|---:|---:|---:|"]
        for k, n, t, b in ranked:
            share = f"{100 * t / total:.1f} %" if total > 0 else "-"
            gbs = f"{b / (t * 1e6):.1f}" if t > 0 and k.startswith("MUL_MAT") else "-"
            lines.append(f"| {k} | {n} | {t:.3f} | {share} | {gbs} |")
        lines.append(f"| **sum** | {sum(n for _, n, _, _ in ranked)} | **{total:.3f}** | | |")
        if untimed.get(graph):
            lines.append(f"\nnot timed ({len(untimed[graph])}: test-backend-ops could not build them): "
                         + ", ".join(untimed[graph]))
        lines.append("")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--shape", required=True, help="the shape the file was made with (model make --shape)")
    ap.add_argument("--quant", required=True, help="its mix (model make --quant)")
    ap.add_argument("--rows", required=True, type=int, help="the prompt chunk's rows the list was made at")
    ap.add_argument("--graph", required=True, help="llama_graph_ops.cpp's list")
    ap.add_argument("-o", "--out", default="", help="the JSON to write (default: stdout)")
    ap.add_argument("--table", default="", help="the markdown table to write")
    ap.add_argument("sql", nargs="+", help="test-backend-ops perf --output sql outputs")
    a = ap.parse_args()
    rows = read_graph(a.graph)
    results = read_sql(a.sql)
    if not results:
        raise SystemExit("llama_ops: no perf results in " + " ".join(a.sql))
    timed = match(rows, results)
    benchmarks, kinds, untimed = build(rows, timed, a.shape, a.quant, a.rows)
    device = results[0].get("device_description") or results[0].get("backend_name") or "unknown"
    ctx = peerlib.base_context("bench/llama_ops.py")
    ctx.update({"device": device, "peer": f"llama.cpp {llama_peer.LLAMA_COMMIT} (test-backend-ops perf, "
                f"{results[0].get('backend_name', '?')})", "peer_llama_commit": llama_peer.LLAMA_COMMIT,
                "peer_llama_graph": os.path.basename(a.graph)})
    peerlib.write_results(a.out, ctx, benchmarks)
    text = table(kinds, untimed, a.shape, a.quant, a.rows, device)
    if a.table:
        with open(a.table, "w", encoding="utf-8") as f:
            f.write(text)
    else:
        sys.stderr.write(text)


if __name__ == "__main__":
    main()
