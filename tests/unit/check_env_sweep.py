"""bench/env_sweep.py without a GPU: its variant parsing, its filtered draw
(deterministic per seed, every row inside --where, the random generator's
problems in order) and its run over a stand-in jitgemm-bench (BENCH=) whose
times depend on the variant's environment, so that the ratios it prints and
writes are known.

    python3 check_env_sweep.py SOURCE_ROOT
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pycheck import check, finish  # noqa: E402

root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "bench"))
import env_sweep  # noqa: E402
import random_draw  # noqa: E402



# variants
name, env = env_sweep.parse_variant("sk=JITGEMM_TILE=128x128,JITGEMM_STREAM_K=8")
check(name == "sk" and env == {"JITGEMM_TILE": "128x128", "JITGEMM_STREAM_K": "8"}, "a variant's switches")
check(env_sweep.parse_variant("base=") == ("base", {}), "a variant without switches")
check(env_sweep.parse_variant("b=BENCH=/x/jitgemm-bench")[1] == {"BENCH": "/x/jitgemm-bench"}, "BENCH=")
for bad in ["noequals", "=JITGEMM_TILE=1", "x=PATH=/bin", "x=JITGEMM_TILE"]:
    try:
        env_sweep.parse_variant(bad)
        check(False, f"variant {bad!r} refused")
    except Exception:
        pass

script = os.path.join(root, "bench", "env_sweep.py")
with tempfile.TemporaryDirectory() as tmp:
    # the filtered draw
    where = "128 < m <= 2048 and k >= 4096"
    spec = os.path.join(tmp, "a.jsonl")
    again = os.path.join(tmp, "b.jsonl")
    for out in (spec, again):
        subprocess.run([sys.executable, script, "--draw", "12", "--seed", "77", "--where", where,
                        "--dims", os.path.join(root, "bench", "model-dims.json"), "--emit", out],
                       check=True, capture_output=True)
    check(open(spec).read() == open(again).read(), "one seed draws the same rows")
    rows = [json.loads(line) for line in open(spec) if not line.startswith("#")]
    check(len(rows) == 12, f"12 rows drawn, not {len(rows)}")
    check(all(128 < r["m"] <= 2048 and r["k"] >= 4096 for r in rows), "every row inside --where")
    dims = random_draw.load_dims(os.path.join(root, "bench", "model-dims.json"))
    first = [p for p in random_draw.draw(77, dims, 200, 0) if 128 < p["m"] <= 2048 and p["k"] >= 4096]
    check([(r["m"], r["n"], r["k"]) for r in rows[:len(first)]] ==
          [(p["m"], p["n"], p["k"]) for p in first[:12]], "the generator's problems, in order")

    # a run over a stand-in jitgemm-bench: ours_us = m / 100, halved under
    # JITGEMM_TILE; energy m uJ; cuBLAS at 2 m / 100 where it is timed
    fake = os.path.join(tmp, "fake-bench")
    with open(fake, "w") as f:
        f.write(f"""#!{sys.executable}
import json, os, sys, time
a = sys.argv
time.sleep(float(os.environ.get("FAKE_SLEEP", "0")))
spec, out = a[a.index("--spec") + 1], a[a.index("--json") + 1]
rows = []
for line in open(spec):
    if line.startswith("#"):
        continue
    r = json.loads(line)
    # JITGEMM_SWAP=1: three times as fast where M is odd, the base's kernel elsewhere
    fast = 2.0 if os.environ.get("JITGEMM_TILE") else 1.0
    if os.environ.get("JITGEMM_SWAP") and r["m"] % 2:
        fast = 3.0
    rows.append({{"name": r["name"], "m": r["m"], "n": r["n"], "k": r["k"],
                 "ours_us": r["m"] / 100 / fast, "ours_uj": float(r["m"]),
                 "cublas_us": None if "--no-peer" in a else 2 * r["m"] / 100,
                 "cublas_uj": None if "--no-peer" in a else 2.0 * r["m"],
                 "kernel": "k" + str(fast)}})
json.dump({{"rows": rows}}, open(out, "w"))
os.makedirs(os.environ["JITGEMM_CACHE_DIR"], exist_ok=True)
with open(os.path.join(os.environ["JITGEMM_CACHE_DIR"], "seen"), "a") as f:
    f.write(os.environ.get("JITGEMM_TILE", "-") + "\\n")
""")
    os.chmod(fake, 0o755)
    res = subprocess.run([sys.executable, script, "--spec", spec, "--bench", fake, "--rounds", "2",
                          "--peer", "--out", os.path.join(tmp, "out"), "--variant", "base=",
                          "--variant", "t=JITGEMM_TILE=128x128", "--variant", "s=JITGEMM_SWAP=1",
                          "--", "--energy"],
                         capture_output=True, text=True)
    check(res.returncode == 0, f"the run exits 0 ({res.stderr[-300:]})")
    check("t: base us / t us geomean 2.000 over 12 rows" in res.stdout, "the variant's ratio")
    odd = sum(r["m"] % 2 for r in rows)
    check(0 < odd < 12, f"the draw has rows of odd and even M ({odd} odd)")
    check(f"s: base us / s us geomean {3 ** (odd / 12):.3f} over 12 rows" in res.stdout,
          "a variant changing some rows: its ratio over all")
    check(f"over the {odd} rows whose kernel it changes 3.000 (3.00-3.00)" in res.stdout,
          "its ratio over the rows whose kernel it changes")
    check(f"same kernel: {12 - odd} rows where a variant ran the base's kernel: 1.000, log sd 0.000"
          in res.stdout, "the run's noise from the rows of one kernel")
    check("t: base us / t us geomean 2.000 over 12 rows\n" + " " * 16 + "over" not in res.stdout,
          "no changed-rows line where every row changes")
    best = 4 ** ((12 - odd) / 12) * 6 ** (odd / 12)  # JITGEMM_TILE's 2x, JITGEMM_SWAP's 3x
    check("cuBLAS us / base us 2.000" in res.stdout and f"cuBLAS us / best us {best:.3f}" in res.stdout,
          "the peer's ratios")
    check("energy per GEMM / base's 1.000, / cuBLAS's 0.500" in res.stdout, "the energy ratios")
    summary = json.load(open(os.path.join(tmp, "out", "summary.json")))
    check(len(summary["rows"]) == 12 and summary["rows"][0]["kernels"]["t"] == "k2.0",
          "summary.json's rows and kernels")

    # --caches: each variant's cache directory under it (DIR/NAME), kept after the run
    caches = os.path.join(tmp, "caches")
    for v in ("base", "t"):
        os.makedirs(os.path.join(caches, v))
    res = subprocess.run([sys.executable, script, "--spec", spec, "--bench", fake, "--rounds", "2",
                          "--caches", caches, "--out", os.path.join(tmp, "out2"),
                          "--variant", "base=", "--variant", "t=JITGEMM_TILE=128x128"],
                         capture_output=True, text=True)
    check(res.returncode == 0, f"the run with --caches exits 0 ({res.stderr[-300:]})")
    seen = {v: open(os.path.join(caches, v, "seen")).read().split() for v in ("base", "t")
            if os.path.exists(os.path.join(caches, v, "seen"))}
    check(seen == {"base": ["-", "-"], "t": ["128x128", "128x128"]},
          f"each variant's runs used its own cache under --caches, kept after the run: {seen}")

    # --chunk: every variant times a chunk before the next; the same ratios as one run
    res = subprocess.run([sys.executable, script, "--spec", spec, "--bench", fake, "--rounds", "2",
                          "--chunk", "5", "--peer", "--out", os.path.join(tmp, "out3"),
                          "--variant", "base=", "--variant", "t=JITGEMM_TILE=128x128",
                          "--variant", "s=JITGEMM_SWAP=1"], capture_output=True, text=True)
    check(res.returncode == 0, f"the chunked run exits 0 ({res.stderr[-300:]})")
    check("t: base us / t us geomean 2.000 over 12 rows" in res.stdout and
          f"s: base us / s us geomean {3 ** (odd / 12):.3f} over 12 rows" in res.stdout and
          "cuBLAS us / base us 2.000" in res.stdout, "chunks of 5: the ratios of one run")
    made = sorted(os.listdir(os.path.join(tmp, "out3")))
    check("base-2-c2.json" in made and "s-1-c0.json" in made and len(made) == 19,
          f"a JSON per variant, round and chunk, and the summary: {made}")

    # --deadline: no chunk starts that the slowest so far would end past it (each
    # run sleeps 0.3 s: the first chunk of two variants takes over half of 1 s)
    res = subprocess.run([sys.executable, script, "--spec", spec, "--bench", fake, "--rounds", "2",
                          "--deadline", "1", "--chunk", "4", "--out", os.path.join(tmp, "out4"),
                          "--variant", "base=", "--variant", "t=JITGEMM_TILE=128x128"],
                         capture_output=True, text=True, env=dict(os.environ, FAKE_SLEEP="0.3"))
    check(res.returncode == 0, f"the run under a deadline exits 0 ({res.stderr[-300:]})")
    check("deadline 1 s: stopped in round 1 before chunk 2 of 3 (4 rows each)" in res.stdout and
          "t: base us / t us geomean 2.000 over 4 rows" in res.stdout,
          f"the deadline's stop and the rows timed: {res.stdout[-400:]}")

finish("env_sweep")
