#!/usr/bin/env python3
"""The sweep behind the sm_90a planner's measured table (src/codegen/plan_sm90_table.h).

The planner chooses a dense problem's kernel among families: plain tiles (64 or 128 rows),
256-row tiles (16-bit operands), swap-AB (tiles of N x M), split-K (a cluster of CTAs sums
one tile), swap-AB with split-K, and ping-pong tiles (the two consumers on alternate tiles). Within a family the analytic model picks the tile;
which family wins is measured here, one shape per cell of a grid (M, N and K in buckets),
per class of operands (16-bit; FP8 with tensor or row scales; FP8 with block scales).

Three steps:

  grid  --seed S --out DIR        (no GPU) draws one shape per cell (--per-cell N: N) into
        [--per-cell N]            DIR/shapes.jsonl,
                                  asks the planner offline (jitgemm-warm -n) which kernel
                                  each family gives each shape, and writes
                                  DIR/<family>-<bf16|fp8>.jsonl with the shapes whose kernel
                                  differs from the plain one's
  run   DIR --out RES             (GPU) per family and input type: jitgemm-bench --pooled
        [--shard I/N]             plans its rows in parallel and times them (no peer, no
                                  output check: the GPU tests check these kernels); with
                                  --shard, only shard I of N of the cells (one GPU each,
                                  every family of a cell on the same GPU)
  table RES [RES...] --out FILE   the fastest family per cell (where it beats the plain
                                  tiles by more than the noise; with several shapes a cell,
                                  by the geomean over them) as the planner's C table

Families are forced through JITGEMM_SWAP, JITGEMM_SPLIT, JITGEMM_TILE and JITGEMM_PINGPONG,
which replace the table in the planner. Run from the repository root.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import time
import zlib

# Bucket edges: a value falls in the first bucket whose edge it does not exceed, or past
# the last. The planner reads them from the table this script writes.
M_EDGES = [16, 32, 64, 128, 256, 512, 1024, 2048]
NK_EDGES = [2048, 4096, 8192, 16384]
M_MAX = 16384
NK_MIN, NK_MAX = 1024, 28672
FLOP_CAP = 2.5e12  # shapes above it get a smaller M (in its bucket): each timing stays short

CLASSES = [  # (class index, dtype, scale) as the planner's sm90_dclass numbers them
    (0, "bf16", None),
    (1, "fp8", "tensor"),
    (2, "fp8", "block"),
]
# family -> (JG_FAMILY_* bit, environment); "plain" is what every other is measured against
FAMILIES = {
    "plain": (1, {"JITGEMM_SWAP": "0", "JITGEMM_SPLIT": "1"}),
    "swap": (2, {"JITGEMM_SWAP": "1", "JITGEMM_SPLIT": "1"}),
    "split": (4, {"JITGEMM_SWAP": "0", "JITGEMM_SPLIT": "any"}),
    "swapsplit": (8, {"JITGEMM_SWAP": "1", "JITGEMM_SPLIT": "any"}),
    "tall": (16, {"JITGEMM_SWAP": "0", "JITGEMM_SPLIT": "1", "JITGEMM_TILE": "256"}),
    "pingpong": (32, {"JITGEMM_PINGPONG": "1"}),
}
NOISE = 1.03  # a family must beat the plain tiles by this factor to win its cell


class SplitMix64:
    def __init__(self, seed):
        self.state = seed & (2**64 - 1)

    def next(self):
        self.state = (self.state + 0x9E3779B97F4A7C15) & (2**64 - 1)
        z = self.state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & (2**64 - 1)
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & (2**64 - 1)
        return z ^ (z >> 31)

    def uniform(self):
        return (self.next() >> 11) * 2.0**-53


def bucket_range(edges, b, lo, hi):
    """The values of bucket b: (low, high], clamped to [lo, hi]."""
    low = edges[b - 1] + 1 if b > 0 else lo
    high = edges[b] if b < len(edges) else hi
    return max(low, lo), min(high, hi)


def model_dims(path):
    with open(path) as f:
        models = json.load(f)["models"]
    dims = set()
    for widths in models.values():
        for v in widths.values():
            if isinstance(v, int) and NK_MIN <= v <= NK_MAX and v % 16 == 0:
                dims.add(v)
    return sorted(dims)


def draw_nk(rng, dims, lo, hi):
    """A model dimension in [lo, hi] where there is one (85%), else a multiple of 64."""
    inside = [d for d in dims if lo <= d <= hi]
    if inside and rng.uniform() < 0.85:
        return inside[rng.next() % len(inside)]
    lo64, hi64 = (lo + 63) // 64, hi // 64
    return 64 * (lo64 + rng.next() % (hi64 - lo64 + 1))


def grid_shapes(seed, dims, per_cell=1):
    """per_cell shapes in each cell, named c<class>_m<b>_n<b>_k<b> (per_cell 1, as the
    committed grid) or with _s<i> after it; the first shape of a cell is the same for any
    per_cell, the others come from a stream of their own."""
    rng = SplitMix64(seed)
    more = SplitMix64(seed ^ 0x5DEECE66D)
    shapes = []
    for dclass, dtype, scale in CLASSES:
        for mb in range(len(M_EDGES) + 1):
            for nb in range(len(NK_EDGES) + 1):
                for kb in range(len(NK_EDGES) + 1):
                    for i in range(per_cell):
                        r = rng if i == 0 else more
                        n = draw_nk(r, dims, *bucket_range(NK_EDGES, nb, NK_MIN, NK_MAX))
                        k = draw_nk(r, dims, *bucket_range(NK_EDGES, kb, NK_MIN, NK_MAX))
                        lo, hi = bucket_range(M_EDGES, mb, 1, M_MAX)
                        hi = min(hi, max(lo, int(FLOP_CAP / (2.0 * n * k))))
                        m = int(round(math.exp(math.log(lo) + r.uniform() *
                                               (math.log(hi) - math.log(lo)))))
                        name = "c%d_m%d_n%d_k%d" % (dclass, mb, nb, kb)
                        line = {"name": name + ("_s%d" % i if per_cell > 1 else ""),
                                "kind": "dense", "m": max(lo, min(hi, m)), "n": n, "k": k,
                                "dtype": dtype}
                        if scale:
                            line["scale"] = scale
                        line["cell"] = [dclass, mb, nb, kb]
                        shapes.append(line)
    return shapes


def planned_kernels(spec, env, warm):
    """{line number: kernel name} as the planner sizes them offline for an H100/H200."""
    out = subprocess.run([warm, "-n", "--arch", "sm_90a", "--sm-count", "132", "--cache-dir",
                          "/tmp/jitgemm-sweep-dry", spec], env=dict(os.environ, **env),
                         capture_output=True, text=True)
    kernels = {}
    for line in out.stdout.splitlines():
        m = re.match(r"\s*(missing|cached)\s+(\S+) \(.* line (\d+)\)", line)
        if m:
            kernels[int(m.group(3))] = m.group(2)
    return kernels


def cmd_grid(a):
    dims = model_dims(a.dims)
    shapes = grid_shapes(a.seed, dims, a.per_cell)
    os.makedirs(a.out, exist_ok=True)
    spec = os.path.join(a.out, "shapes.jsonl")
    with open(spec, "w") as f:
        for s in shapes:
            f.write(json.dumps(s) + "\n")
    plain = planned_kernels(spec, FAMILIES["plain"][1], a.warm)
    summary = {"seed": a.seed, "per_cell": a.per_cell, "shapes": len(shapes), "families": {}}
    for fam, (_, env) in FAMILIES.items():
        kern = plain if fam == "plain" else planned_kernels(spec, env, a.warm)
        keep = [s for i, s in enumerate(shapes, 1)
                if i in kern and (fam == "plain" or kern[i] != plain.get(i))]
        for dtype in ("bf16", "fp8"):  # --pooled: one input type a run
            with open(os.path.join(a.out, "%s-%s.jsonl" % (fam, dtype)), "w") as f:
                for s in keep:
                    if s["dtype"] == dtype:
                        f.write(json.dumps(s) + "\n")
        summary["families"][fam] = len(keep)
    with open(os.path.join(a.out, "grid.json"), "w") as f:
        json.dump(summary, f, indent=1)
    print("sweep grid: seed %d, %d shapes; rows per family: %s" % (
        a.seed, len(shapes), ", ".join("%s %d" % kv for kv in summary["families"].items())))


def in_shard(name, shard):
    """Whether the cell `name` falls in shard "I/N" (a stable hash of the name)."""
    i, n = (int(v) for v in shard.split("/"))
    return zlib.crc32(name.encode()) % n == i


def cmd_run(a):
    os.makedirs(a.out, exist_ok=True)
    for fam, (_, env) in FAMILIES.items():
        for dtype in ("bf16", "fp8"):
            name = "%s-%s" % (fam, dtype)
            spec = os.path.join(a.grid, name + ".jsonl")
            if not os.path.exists(spec) or os.path.getsize(spec) == 0:
                continue
            if a.shard:  # this shard's cells only, every family of a cell on one GPU
                with open(spec) as f:
                    rows = [l for l in f if in_shard(json.loads(l)["name"], a.shard)]
                if not rows:
                    continue
                spec = os.path.join(a.out, name + ".jsonl")
                with open(spec, "w") as f:
                    f.writelines(rows)
            t0 = time.time()
            r = subprocess.run([a.bench, "--spec", spec, "--pooled", "--no-peer", "--no-check",
                                "--reps", str(a.reps), "--json", os.path.join(a.out, name + ".json")],
                               env=dict(os.environ, **env), capture_output=True, text=True)
            print("sweep %s: %.0f s (exit %d)" % (name, time.time() - t0, r.returncode), flush=True)
            if r.returncode:
                sys.stdout.write(r.stdout[-3000:] + r.stderr[-2000:])


def cell_choice(shapes):
    """The family of a cell from its shapes' times ({shape: {family: us}}, each with the
    plain tiles'): per family, the geomean over the cell's shapes of the plain tiles' time
    over its (1 on a shape where its kernel is the plain one, not timed); the best family
    where that geomean beats NOISE, else the plain tiles. Returns (family, geomean)."""
    shapes = [by for by in shapes if "plain" in by]
    if not shapes:
        return None, None
    fams = sorted({f for by in shapes for f in by})
    gain = {}
    for fam in fams:
        logs = [math.log(by["plain"] / by[fam]) if fam in by else 0.0 for by in shapes]
        gain[fam] = math.exp(sum(logs) / len(logs))
    fam = max(fams, key=lambda f: (gain[f], f == "plain"))
    if gain[fam] < NOISE:
        return "plain", 1.0
    return fam, gain[fam]


def cmd_table(a):
    times = {}  # name -> {family: us}
    cells, device = {}, set()
    for res in a.results:
        for fam, dtype in ((f, d) for f in FAMILIES for d in ("bf16", "fp8")):
            path = os.path.join(res, "%s-%s.json" % (fam, dtype))
            if not os.path.exists(path):
                continue
            with open(path) as f:
                run = json.load(f)
            device.add(run.get("device", "?"))
            for row in run["rows"]:
                if row.get("error") or row.get("mismatch") or not row.get("ours_us"):
                    continue
                m = re.match(r"c(\d)_m(\d)_n(\d)_k(\d)(?:_s\d+)?$", row["name"])
                if not m:
                    continue
                cells[row["name"]] = tuple(int(g) for g in m.groups())
                times.setdefault(row["name"], {}).setdefault(fam, []).append(row["ours_us"])
    by_cell = {}  # cell -> [{family: best us} of each of its shapes]
    for name, by in times.items():
        by_cell.setdefault(cells[name], []).append({fam: min(us) for fam, us in by.items()})
    entries = []
    for cell in sorted(by_cell):
        fam, gain = cell_choice(by_cell[cell])
        if fam:
            entries.append((cell, fam, gain))
    with open(a.out, "w") as f:
        f.write("/* The sm_90a planner's measured table (plan_sm90.c), written by\n"
                " * bench/sweep-families.py table from %s\n"
                " * (%s): per cell, the dense family that was fastest by more than %d%%\n"
                " * over the plain tiles (else the plain tiles), and its speed-up. */\n"
                % (", ".join(a.results), ", ".join(sorted(device)), round((NOISE - 1) * 100)))
        f.write("static const uint32_t sm90_table_m_edges[] = {%s};\n" % ", ".join(map(str, M_EDGES)))
        f.write("static const uint32_t sm90_table_nk_edges[] = {%s};\n" % ", ".join(map(str, NK_EDGES)))
        f.write("static const sm90_table_cell sm90_table[] = {\n")
        names = {1: "PLAIN", 2: "SWAP", 4: "SPLIT", 8: "SWAP_SPLIT", 16: "TALL", 32: "PINGPONG"}
        for (dc, mb, nb, kb), fam, gain in entries:
            f.write("    {%d, %d, %d, %d, JG_FAMILY_%s, %d},\n" % (
                dc, mb, nb, kb, names[FAMILIES[fam][0]], round(gain * 1000)))
        f.write("};\n")
    won = {}
    for _, fam, _ in entries:
        won[fam] = won.get(fam, 0) + 1
    print("table: %d cells; won: %s" % (len(entries), won))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("grid")
    g.add_argument("--seed", type=int, default=int(time.time()) % 1000000007)
    g.add_argument("--out", required=True)
    g.add_argument("--dims", default="bench/model-dims.json")
    g.add_argument("--warm", default="build/tools/jitgemm-warm")
    g.add_argument("--per-cell", type=int, default=1,
                   help="shapes per cell (default 1); the table takes each family's geomean "
                        "over a cell's shapes")
    r = sub.add_parser("run")
    r.add_argument("grid")
    r.add_argument("--out", required=True)
    r.add_argument("--reps", type=int, default=50)
    r.add_argument("--bench", default="build/tools/jitgemm-bench")
    r.add_argument("--shard", help="I/N: time only the cells of shard I of N (one GPU each; "
                   "table takes the shards' result folders together)")
    t = sub.add_parser("table")
    t.add_argument("results", nargs="+")
    t.add_argument("--out", default="src/codegen/plan_sm90_table.h")
    a = p.parse_args()
    {"grid": cmd_grid, "run": cmd_run, "table": cmd_table}[a.cmd](a)


if __name__ == "__main__":
    main()
