#!/usr/bin/env python3
"""Times one spec's rows under several environments of the planner's switches, in
alternation, on one GPU: which variant (a forced tile, split or stream-K) is fastest per
row, and by how much against the first variant (the planner's own choice).

    python3 bench/env_sweep.py --spec ROWS.jsonl --variant base= \\
        --variant sk8=JITGEMM_TILE=128x128,JITGEMM_STREAM_K=8 [--rounds 2] \\
        [--peer] [--out DIR] [-- JITGEMM-BENCH-ARGS...]

    python3 bench/env_sweep.py --draw 24 --seed S --where "m>128 and m*n<=3.2e6 and k>=4096" \\
        --emit ROWS.jsonl

Each --variant is NAME=VAR=VALUE,VAR=VALUE (empty after the first '=': no switch; BENCH=PATH
runs another build's jitgemm-bench, e.g. a tree with a kernel change). Every
round runs jitgemm-bench --pooled --no-check once per variant (its rows planned on
parallel threads; the GPU tests check the kernels) with a cache directory of its own, so
the rounds of one variant reuse its kernels. --peer times cuBLASLt in the first variant's
runs (its column "cuBLAS us"). Prints per row each variant's mean time over the rounds and
its ratio to the first variant's (above 1: the variant is faster), the kernel each ran,
then per variant the geomean of those ratios (over all rows, and over the rows whose
kernel it changes), the spread of the rows where a variant ran the first variant's own
kernel (the run's noise, which biases a best of several upward), and the
best-of-all-variants geomean; the runs' JSON and a summary JSON go to --out.

--chunk N times the rows N at a time: every variant runs a chunk before the next chunk
starts, so that a sweep cut short has timed the same rows under every variant. --deadline
S (seconds, for a device call's budget; chunks of 6 unless --chunk) starts no chunk that
the slowest chunk so far says would end past S, and reports the rows timed, saying where
it stopped.

--draw N draws N rows from the random generator of jitgemm-bench --random (a fresh seed
unless --seed; printed) that satisfy --where (a Python expression in m, n, k) and writes
them as spec lines to --emit, with no GPU.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import random_draw  # noqa: E402


# rows a run under --deadline without --chunk
DEADLINE_CHUNK = 6


def parse_variant(text):
    name, sep, rest = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"--variant {text!r}: expected NAME=VAR=VALUE,...")
    env = {}
    for part in filter(None, rest.split(",")):
        var, sep, value = part.partition("=")
        if not sep or not (var.startswith("JITGEMM_") or var == "BENCH"):
            raise argparse.ArgumentTypeError(f"--variant {text!r}: {part!r} is not JITGEMM_VAR=VALUE")
        env[var] = value
    return name, env


def draw_rows(args):
    seed = args.seed if args.seed is not None else random_draw.fresh_seed()
    dims = random_draw.load_dims(args.dims)
    code = compile(args.where, "--where", "eval")
    rows, tried = [], 0
    while len(rows) < args.draw and tried < 10000:
        batch = random_draw.draw(seed + tried, dims, 200, 0)
        tried += 1
        for p in batch:
            if eval(code, {}, {"m": p["m"], "n": p["n"], "k": p["k"]}) and len(rows) < args.draw:
                rows.append(p)
    with open(args.emit, "w") as f:
        f.write(f"# env_sweep.py --draw {args.draw} --seed {seed} --where {args.where!r}\n")
        for i, p in enumerate(rows, 1):
            f.write(f'{{"name": "s{i}", "kind": "dense", "m": {p["m"]}, "n": {p["n"]}, '
                    f'"k": {p["k"]}}}\n')
    print(f"seed {seed}: {len(rows)} rows to {args.emit}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec")
    ap.add_argument("--variant", action="append", type=parse_variant, default=[])
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--caches", help="a cache directory per variant under it (DIR/NAME); "
                    "default: fresh ones in a temporary directory")
    ap.add_argument("--peer", action="store_true")
    ap.add_argument("--bench", default="build/tools/jitgemm-bench")
    ap.add_argument("--out", default="bench/tmp/env-sweep")
    ap.add_argument("--draw", type=int)
    ap.add_argument("--seed", type=int)
    ap.add_argument("--where", default="True")
    ap.add_argument("--dims", default="bench/model-dims.json")
    ap.add_argument("--emit")
    ap.add_argument("--chunk", type=int, help="rows a run (default: all; 6 with --deadline)")
    ap.add_argument("--deadline", type=float, help="seconds for the whole sweep")
    ap.add_argument("rest", nargs="*")
    args = ap.parse_args()
    if args.draw:
        if not args.emit:
            ap.error("--draw needs --emit")
        return draw_rows(args)
    if not args.spec or len(args.variant) < 2:
        ap.error("--spec and at least two --variant are needed")
    os.makedirs(args.out, exist_ok=True)
    # --caches: a directory holding a cache per variant (DIR/NAME), e.g. filled ahead by
    # jitgemm-warm --arch sm_90a on a build box, so the GPU host does not compile.
    caches = args.caches or tempfile.mkdtemp(prefix="env-sweep-")
    names = [n for n, _ in args.variant]
    times = {}  # row -> variant -> [us]
    kernels = {}  # row -> variant -> kernel
    peer = {}
    energy, peer_energy = {}, {}  # --energy (in the jitgemm-bench arguments): uJ per GEMM
    info = {}
    lines = [line for line in open(args.spec) if line.strip() and not line.startswith("#")]
    size = args.chunk or (DEADLINE_CHUNK if args.deadline else len(lines)) or 1
    if size < 1:
        ap.error("--chunk takes a positive number of rows")
    specs = [args.spec]
    chunk_dir = None
    if size < len(lines):
        chunk_dir = tempfile.mkdtemp(prefix="env-sweep-chunks-")
        specs = []
        for i in range(0, len(lines), size):
            specs.append(os.path.join(chunk_dir, f"c{len(specs)}.jsonl"))
            with open(specs[-1], "w") as f:
                f.writelines(lines[i:i + size])
    start, slowest, stopped = time.monotonic(), 0.0, None
    for r in range(1, args.rounds + 1):
        for ci, spec in enumerate(specs):
            if args.deadline and time.monotonic() - start + slowest > args.deadline:
                stopped = (r, ci)
                break
            t0 = time.monotonic()
            for vi, (name, env) in enumerate(args.variant):
                tag = f"{name}-{r}" if len(specs) == 1 else f"{name}-{r}-c{ci}"
                out = os.path.join(args.out, f"{tag}.json")
                bench = env.get("BENCH", args.bench)
                cmd = [bench, "--spec", spec, "--pooled", "--no-check", "--json", out]
                if not (args.peer and vi == 0 and r == 1):
                    cmd.append("--no-peer")
                cmd += args.rest
                e = dict(os.environ, JITGEMM_CACHE_DIR=os.path.join(caches, name),
                         **{v: x for v, x in env.items() if v != "BENCH"})
                res = subprocess.run(cmd, env=e, capture_output=True, text=True)
                if res.returncode not in (0, 1):
                    print(f"{tag}: jitgemm-bench exited {res.returncode}:\n{res.stderr[-2000:]}",
                          file=sys.stderr)
                    continue
                try:
                    rows = json.load(open(out))["rows"]
                except (OSError, ValueError, KeyError) as err:
                    print(f"{tag}: no JSON ({err})", file=sys.stderr)
                    continue
                for row in rows:
                    key = row["name"]
                    info[key] = (row["m"], row["n"], row["k"])
                    if row.get("ours_us"):
                        times.setdefault(key, {}).setdefault(name, []).append(row["ours_us"])
                    kernels.setdefault(key, {})[name] = row.get("kernel", "")
                    if row.get("cublas_us"):
                        peer[key] = row["cublas_us"]
                    if row.get("ours_uj"):
                        energy.setdefault(key, {}).setdefault(name, []).append(row["ours_uj"])
                    if row.get("cublas_uj"):
                        peer_energy[key] = row["cublas_uj"]
            slowest = max(slowest, time.monotonic() - t0)
        if stopped:
            break
    if chunk_dir:
        shutil.rmtree(chunk_dir, ignore_errors=True)
    if stopped:
        print(f"deadline {args.deadline:g} s: stopped in round {stopped[0]} before chunk "
              f"{stopped[1] + 1} of {len(specs)} ({size} rows each); the ratios below are "
              f"over the rows every variant timed")
    if not args.caches:
        shutil.rmtree(caches, ignore_errors=True)  # the variants' kernels
    base = names[0]
    logs = {n: [] for n in names}
    best_logs, peer_logs, best_peer_logs = [], [], []
    summary = []
    print(f"{'row':6s} {'M':>6s} {'N':>6s} {'K':>6s} " +
          " ".join(f"{n:>14s}" for n in names) + (f" {'cuBLAS us':>10s}" if args.peer else ""))
    for key, v in times.items():
        mean = {n: sum(x) / len(x) for n, x in v.items() if x}
        if base not in mean:
            continue
        cells = []
        for n in names:
            if n in mean:
                ratio = mean[base] / mean[n]
                logs[n].append(math.log(ratio))
                cells.append(f"{mean[n]:8.1f} {ratio:5.2f}")
            else:
                cells.append(f"{'-':>14s}")
        best = min(mean.values())
        best_logs.append(math.log(mean[base] / best))
        if key in peer:
            peer_logs.append(math.log(peer[key] / mean[base]))
            best_peer_logs.append(math.log(peer[key] / best))
        m, n_, k = info[key]
        print(f"{key:6s} {m:6d} {n_:6d} {k:6d} " + " ".join(f"{c:>14s}" for c in cells) +
              (f" {peer.get(key, 0):10.1f}" if args.peer else ""))
        summary.append({"name": key, "m": m, "n": n_, "k": k, "us": mean,
                        "kernels": kernels.get(key, {}), "cublas_us": peer.get(key)})
    g = lambda xs: math.exp(sum(xs) / len(xs)) if xs else float("nan")
    # Rows where a variant ran the base's own kernel measure the run's noise; the
    # others are what the variant changes (an A/B's answer).
    changed = {n: [] for n in names[1:]}
    same = []
    for item in summary:
        ks, us = item["kernels"], item["us"]
        for n in names[1:]:
            if n not in us:
                continue
            r = math.log(us[base] / us[n])
            (same if ks.get(n) and ks.get(n) == ks.get(base) else changed[n]).append(r)
    for n in names[1:]:
        print(f"{n:>14s}: {base} us / {n} us geomean {g(logs[n]):.3f} over {len(logs[n])} rows")
        c = changed[n]
        if c and len(c) < len(logs[n]):
            print(f"{'':>14s}  over the {len(c)} rows whose kernel it changes {g(c):.3f} "
                  f"({math.exp(min(c)):.2f}-{math.exp(max(c)):.2f})")
    if same:
        mean = sum(same) / len(same)
        sd = math.sqrt(sum((x - mean) ** 2 for x in same) / len(same))
        print(f"{'same kernel':>14s}: {len(same)} rows where a variant ran the {base}'s kernel: "
              f"{g(same):.3f}, log sd {sd:.3f} (the run's noise; a best of several is biased "
              f"upward by it)")
    print(f"{'best of all':>14s}: {base} us / best us geomean {g(best_logs):.3f}")
    if peer_logs:
        print(f"{'cuBLAS':>14s}: cuBLAS us / {base} us {g(peer_logs):.3f}, "
              f"cuBLAS us / best us {g(best_peer_logs):.3f} over {len(peer_logs)} rows")
    if energy:
        for n in names:
            el = [math.log(sum(v[n]) / len(v[n]) / (sum(v[base]) / len(v[base])))
                  for v in energy.values() if n in v and base in v]
            pl = [math.log(sum(v[n]) / len(v[n]) / peer_energy[k])
                  for k, v in energy.items() if n in v and k in peer_energy]
            print(f"{n:>14s}: energy per GEMM / {base}'s {g(el):.3f}" +
                  (f", / cuBLAS's {g(pl):.3f} over {len(pl)} rows" if pl else ""))
        for item in summary:
            item["uj"] = {n: sum(x) / len(x) for n, x in energy.get(item["name"], {}).items()}
            item["cublas_uj"] = peer_energy.get(item["name"])
    with open(os.path.join(args.out, "summary.json"), "w") as f:
        json.dump({"variants": {n: e for n, e in args.variant}, "rows": summary}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
