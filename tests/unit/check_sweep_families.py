"""bench/sweep-families.py without a GPU: the committed table is what its `table` step
writes from the committed sweep's results; `grid` draws each cell's shapes inside the
cell (the first the same whatever --per-cell); a cell's family is the best geomean over
its shapes, the plain tiles unless one beats them by the noise margin.

    python3 check_sweep_families.py SOURCE_ROOT
"""
import importlib.util
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pycheck import check, finish  # noqa: E402

root = sys.argv[1]
spec = importlib.util.spec_from_file_location("sweep", os.path.join(root, "bench", "sweep-families.py"))
sweep = importlib.util.module_from_spec(spec)
spec.loader.exec_module(sweep)


# the committed table from the committed results
header = os.path.join(root, "src", "codegen", "plan_sm90_table.h")
first = open(header).read().splitlines()[1]
source = first.split("table from ")[1].strip()
with tempfile.TemporaryDirectory() as tmp:
    out = os.path.join(tmp, "table.h")
    subprocess.run([sys.executable, os.path.join(root, "bench", "sweep-families.py"), "table",
                    source, "--out", out], cwd=root, check=True, capture_output=True)
    check(open(out).read() == open(header).read(),
          f"sweep-families.py table {source} rewrites {header} unchanged")

# the grid's shapes
dims = sweep.model_dims(os.path.join(root, "bench", "model-dims.json"))
one = sweep.grid_shapes(20261127, dims)
three = sweep.grid_shapes(20261127, dims, 3)
check(len(three) == 3 * len(one), "three shapes a cell")
check(all("_s" not in s["name"] for s in one), "one shape a cell: names without _s")
check([dict(s, name=s["name"][:-3]) for s in three if s["name"].endswith("_s0")] == one,
      "a cell's first shape is the same for any --per-cell")
for s in three:
    dclass, mb, nb, kb = s["cell"]
    lo, hi = sweep.bucket_range(sweep.M_EDGES, mb, 1, sweep.M_MAX)
    nlo, nhi = sweep.bucket_range(sweep.NK_EDGES, nb, sweep.NK_MIN, sweep.NK_MAX)
    klo, khi = sweep.bucket_range(sweep.NK_EDGES, kb, sweep.NK_MIN, sweep.NK_MAX)
    if not (lo <= s["m"] <= hi and nlo <= s["n"] <= nhi and klo <= s["k"] <= khi):
        check(False, f"{s['name']} ({s['m']}, {s['n']}, {s['k']}) inside its cell")
        break

# a cell's family
c = sweep.cell_choice
check(c([{"plain": 10.0, "swap": 8.0}]) == ("swap", 1.25), "one shape: the fastest family")
fam, gain = c([{"plain": 10.0, "swap": 8.0}, {"plain": 10.0, "swap": 12.0}])
check(fam == "plain" and gain == 1.0, "a family fast on one shape and slow on another: plain")
fam, gain = c([{"plain": 10.0, "swap": 8.0}, {"plain": 10.0}])
check(fam == "swap" and abs(gain - 1.25 ** 0.5) < 1e-9, "a family not timed on a shape counts 1 there")
check(c([{"plain": 10.0, "split": 9.8}]) == ("plain", 1.0), "under the noise margin: plain")
check(c([{"swap": 1.0}]) == (None, None), "no plain time: no entry")

finish("sweep-families")
