#!/usr/bin/env python3
"""Rows whose plan a change moves, offline: draws random dense problems
(jitgemm-bench --random's generator, --emit-shapes), plans them with two
builds' jitgemm-warm for sm_90a without compiling (JITGEMM_LOG=plan, -n), and
writes the rows whose plans differ as a spec for jitgemm-bench --spec ...
--pooled (an A/B on the rows it changes; bench/ab-patch.sh runs one).

    python3 bench/plan-diff.py --base build --cand /tmp/cand/build --dtype fp8 \\
        --count 3000 --seed 12345 --max 24 --out bench/tmp/changed-fp8.jsonl

One build with two environments compares a rule with its switch off:
    python3 bench/plan-diff.py --base build --cand build --base-env JITGEMM_STREAM_K=0 ...

A plan differs where the logged tile, stages, cluster or family differ.
--model-gain G keeps only the rows whose candidate plan the model estimates
G times faster or more (e.g. a forced family the planner never ranks:
--cand-env JITGEMM_N_STACK=2 --model-gain 1.1, the rows where the model
believes in it most). Prints how many of the drawn rows changed and the
first few pairs."""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def plans(build, spec, sm_count, extra):
    """The plan log line of each row of spec, in order (extra: VAR=VALUE)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, JITGEMM_LOG="plan")
        env.update(v.split("=", 1) for v in extra)
        r = subprocess.run([os.path.join(build, "tools", "jitgemm-warm"), "--arch", "sm_90a",
                            "--sm-count", str(sm_count), "-n", "--cache-dir", cache, spec],
                           env=env, capture_output=True, text=True)
    lines = [l.split("[plan]: ", 1)[1] for l in (r.stdout + r.stderr).splitlines()
             if "[plan]: " in l]
    return lines


def estimate(line):
    """The plan line's estimated time in us (None without one)."""
    m = re.search(r"estimated ([0-9.]+) us", line)
    return float(m.group(1)) if m else None


def shape(line):
    """What decides the kernel in a plan line: up to the estimate."""
    return re.sub(r"; \d+ tiles = .*", "", line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="the base build folder")
    ap.add_argument("--cand", required=True, help="the candidate's build folder")
    ap.add_argument("--dtype", choices=["bf16", "fp16", "fp8"], default="bf16")
    ap.add_argument("--scale", choices=["tensor", "row", "block"], default="tensor")
    ap.add_argument("--count", type=int, default=3000)
    ap.add_argument("--seed", type=int, help="default: a fresh one (printed)")
    ap.add_argument("--sm-count", type=int, default=132)
    ap.add_argument("--max", type=int, default=24, help="rows written, at most")
    ap.add_argument("--prefix", default="c", help="the written rows' names: PREFIX0, PREFIX1, ...")
    ap.add_argument("--out", required=True)
    ap.add_argument("--base-env", action="append", default=[], metavar="VAR=VALUE",
                    help="set for the base's planning (repeatable)")
    ap.add_argument("--cand-env", action="append", default=[], metavar="VAR=VALUE",
                    help="set for the candidate's planning (repeatable)")
    ap.add_argument("--model-gain", type=float, metavar="G",
                    help="only rows whose candidate the model estimates G times faster or more")
    a = ap.parse_args()
    seed = a.seed if a.seed is not None else random.SystemRandom().randrange(1, 2**32)
    with tempfile.TemporaryDirectory() as tmp:
        raw, spec = os.path.join(tmp, "raw.jsonl"), os.path.join(tmp, "spec.jsonl")
        subprocess.run([os.path.join(a.base, "tools", "jitgemm-bench"), "--random", str(a.count),
                        "--seed", str(seed), "--dtype", a.dtype, "--dims",
                        os.path.join(HERE, "model-dims.json"), "--emit-shapes", raw],
                       check=True, capture_output=True)
        rows = []
        for line in open(raw):
            if line.startswith("#"):
                continue
            r = json.loads(line)
            r.pop("generic_hint_m", None)
            r["dtype"] = a.dtype
            if a.dtype == "fp8":
                r["scale"] = a.scale
            rows.append(r)
        with open(spec, "w") as f:
            f.writelines(json.dumps(r) + "\n" for r in rows)
        base, cand = (plans(a.base, spec, a.sm_count, a.base_env),
                      plans(a.cand, spec, a.sm_count, a.cand_env))
    if len(base) != len(rows) or len(cand) != len(rows):
        sys.exit(f"plan-diff.py: {len(base)} and {len(cand)} plans for {len(rows)} rows")
    changed = [i for i in range(len(rows)) if shape(base[i]) != shape(cand[i])]
    print(f"seed {seed}: {len(changed)} of {len(rows)} {a.dtype} rows change plan")
    if a.model_gain:
        def gain(i):
            b, c = estimate(base[i]), estimate(cand[i])
            return b / c if b and c else 0.0
        changed = [i for i in changed if gain(i) >= a.model_gain]
        print(f"  {len(changed)} of them estimated {a.model_gain}x faster or more")
    for i in changed[:4]:
        print(f"  base {base[i][:160]}\n  cand {cand[i][:160]}")
    with open(a.out, "w") as f:
        for j, i in enumerate(changed[:a.max]):
            f.write(json.dumps(dict(rows[i], name=f"{a.prefix}{j}")) + "\n")
    print(f"wrote {min(len(changed), a.max)} rows to {a.out}")


if __name__ == "__main__":
    main()
