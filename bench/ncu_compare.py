#!/usr/bin/env python3
"""Ours against the peer's kernels, metric by metric, from Nsight Compute's CSV
(`ncu --csv --metrics ...`, as bench/ncu-pair.sh writes them): where a GEMM that
runs slower or spends more energy than cuBLAS's spends it.

    python3 bench/ncu_compare.py DIR            # DIR/ncu-ROW-ours.csv with DIR/ncu-ROW-torch.csv
    python3 bench/ncu_compare.py OURS.csv PEER.csv

Each file may hold several profiled launches (ncu's "ID"); a metric's value per kernel
name is its median over that kernel's launches. A peer that runs more than one kernel per
GEMM (cuBLAS's split-K and its reduction) is summed over its distinct kernels. Per row it
prints, for ours and the peer, the kernels and grids, then each metric and ours over the
peer's, with the derived rows that the comparisons of bench/RESULTS.md used: instructions
per wgmma (smsp__inst_executed over sm__inst_executed_pipe_tensor_op_gmma) and L2 read
bytes (32-byte sectors). --json FILE writes the same as JSON.
"""
import argparse
import csv
import glob
import json
import os
import re
import statistics
import sys

DERIVED = {
    "inst per wgmma": ("smsp__inst_executed.sum", "sm__inst_executed_pipe_tensor_op_gmma.sum"),
}
SECTOR_BYTES = 32


def number(text):
    """ncu's value: '1,234,567' or '12.5'; None for n/a or text."""
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def read(path):
    """{kernel name: {"grid": text, "block": text, "launches": n, metric: median value}}."""
    launches = {}  # ID -> (kernel, grid, block, {metric: value})
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu's own lines (==PROF==) out
    for row in csv.DictReader(lines):
        lid = row.get("ID")
        if lid is None or row.get("Metric Name") is None:
            continue
        entry = launches.setdefault(lid, (row["Kernel Name"], row.get("Grid Size", ""),
                                          row.get("Block Size", ""), {}))
        value = number(row.get("Metric Value", ""))
        if value is not None:
            entry[3][row["Metric Name"]] = value
    kernels = {}
    for name, grid, block, metrics in launches.values():
        k = kernels.setdefault(name, {"grid": grid, "block": block, "runs": []})
        k["runs"].append(metrics)
    out = {}
    for name, k in kernels.items():
        names = sorted({m for run in k["runs"] for m in run})
        med = {m: statistics.median([run[m] for run in k["runs"] if m in run]) for m in names}
        out[name] = dict(med, grid=k["grid"], block=k["block"], launches=len(k["runs"]))
    return out


def total(kernels):
    """One GEMM's metrics: the sum over its distinct kernels (times, counts and bytes add;
    per-cycle averages are the first kernel's, the GEMM's main one, in launch order)."""
    s = {}
    for i, k in enumerate(kernels.values()):
        for m, v in k.items():
            if not isinstance(v, float):
                continue
            if m.endswith(".sum"):  # times, counts and bytes
                s[m] = s.get(m, 0.0) + v
            elif i == 0:
                s[m] = v
    for name, (num, den) in DERIVED.items():
        if s.get(num) is not None and s.get(den):
            s[name] = s[num] / s[den]
    if "lts__t_sectors_srcunit_tex_op_read.sum" in s:
        s["L2 read bytes"] = s["lts__t_sectors_srcunit_tex_op_read.sum"] * SECTOR_BYTES
    return s


def compare(ours_path, peer_path):
    ours, peer = read(ours_path), read(peer_path)
    a, b = total(ours), total(peer)
    rows = []
    for m in sorted(set(a) | set(b)):
        x, y = a.get(m), b.get(m)
        rows.append({"metric": m, "ours": x, "peer": y,
                     "ratio": x / y if x is not None and y else None})
    return {"ours_kernels": {k: {"grid": v["grid"], "block": v["block"],
                                 "launches": v["launches"]} for k, v in ours.items()},
            "peer_kernels": {k: {"grid": v["grid"], "block": v["block"],
                                 "launches": v["launches"]} for k, v in peer.items()},
            "metrics": rows}


def fmt(v):
    if v is None:
        return "-"
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


def pairs(args):
    if len(args) == 2 and all(p.endswith(".csv") for p in args):
        return [(os.path.basename(args[0]), args[0], args[1])]
    if len(args) != 1 or not os.path.isdir(args[0]):
        sys.exit("ncu_compare.py: give a directory, or OURS.csv PEER.csv")
    out = []
    for path in sorted(glob.glob(os.path.join(args[0], "ncu-*-ours.csv"))):
        row = re.match(r"ncu-(.*)-ours\.csv$", os.path.basename(path)).group(1)
        peer = os.path.join(args[0], f"ncu-{row}-torch.csv")
        if os.path.exists(peer):
            out.append((row, path, peer))
    if not out:
        sys.exit(f"ncu_compare.py: no ncu-ROW-ours.csv with ncu-ROW-torch.csv in {args[0]}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("paths", nargs="+")
    ap.add_argument("--json")
    a = ap.parse_args()
    result = {}
    for row, ours, peer in pairs(a.paths):
        r = result[row] = compare(ours, peer)
        print(f"== {row}")
        for side in ("ours", "peer"):
            for k, v in r[f"{side}_kernels"].items():
                print(f"   {side:4s} {k} grid {v['grid']} block {v['block']} "
                      f"({v['launches']} launch{'es' if v['launches'] != 1 else ''})")
        print(f"   {'metric':52s} {'ours':>16s} {'peer':>16s} {'ours/peer':>9s}")
        for m in r["metrics"]:
            ratio = f"{m['ratio']:.3f}" if m["ratio"] is not None else "-"
            print(f"   {m['metric']:52s} {fmt(m['ours']):>16s} {fmt(m['peer']):>16s} {ratio:>9s}")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
