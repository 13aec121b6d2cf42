"""bench/ncu_compare.py over Nsight Compute CSVs committed with an H200 run
(bench/results/2026-11-28-h200-energy-weak-class/ncu): each metric against a
separate reading of the same files (a launch's values; the median over a
kernel's launches; a peer of two kernels summed), the derived rows, and the
command line's table.

    python3 check_ncu_compare.py SOURCE_ROOT
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from pycheck import check, finish  # noqa: E402

root = sys.argv[1]
sys.path.insert(0, os.path.join(root, "bench"))
import ncu_compare  # noqa: E402

data = os.path.join(root, "bench", "results", "2026-11-28-h200-energy-weak-class", "ncu")


def values(path, metric):
    """{kernel: [value per launch]}, read field by field from the quoted CSV lines."""
    out = {}
    for line in open(path):
        if not line.startswith('"') or line.startswith('"ID"'):
            continue
        fields = line.rstrip("\n")[1:-1].split('","')
        if fields[12] == metric:
            out.setdefault(fields[4], []).append(float(fields[14].replace(",", "")))
    return out


def value(rows, metric, side):
    return next(r[side] for r in rows if r["metric"] == metric)


# s1: one kernel each side, the peer's over 4 launches
r = ncu_compare.compare(os.path.join(data, "ncu-s1-ours.csv"), os.path.join(data, "ncu-s1-torch.csv"))
ours_t = values(os.path.join(data, "ncu-s1-ours.csv"), "gpu__time_duration.sum")
peer_t = values(os.path.join(data, "ncu-s1-torch.csv"), "gpu__time_duration.sum")
check(len(ours_t) == 1 and len(peer_t) == 1 and len(next(iter(peer_t.values()))) == 4,
      "s1: one kernel a side, four peer launches")
check(value(r["metrics"], "gpu__time_duration.sum", "ours") == next(iter(ours_t.values()))[0],
      "s1: ours' time is its launch's")
check(value(r["metrics"], "gpu__time_duration.sum", "peer") ==
      statistics.median(next(iter(peer_t.values()))), "s1: the peer's time is its launches' median")
inst = values(os.path.join(data, "ncu-s1-ours.csv"), "smsp__inst_executed.sum")
gmma = values(os.path.join(data, "ncu-s1-ours.csv"), "sm__inst_executed_pipe_tensor_op_gmma.sum")
want = next(iter(inst.values()))[0] / next(iter(gmma.values()))[0]
check(abs(value(r["metrics"], "inst per wgmma", "ours") - want) < 1e-9,
      f"s1: instructions per wgmma {want:.2f}")
sectors = values(os.path.join(data, "ncu-s1-torch.csv"), "lts__t_sectors_srcunit_tex_op_read.sum")
check(value(r["metrics"], "L2 read bytes", "peer") == 32 * statistics.median(next(iter(sectors.values()))),
      "s1: L2 read bytes are 32-byte sectors")
ratio = value(r["metrics"], "gpu__time_duration.sum", "ratio")
check(abs(ratio - next(iter(ours_t.values()))[0] / statistics.median(next(iter(peer_t.values())))) < 1e-12,
      "s1: ours over the peer's")

# s12: the peer's split-K and its reduction, summed per GEMM
r = ncu_compare.compare(os.path.join(data, "ncu-s12-ours.csv"), os.path.join(data, "ncu-s12-torch.csv"))
peer_t = values(os.path.join(data, "ncu-s12-torch.csv"), "gpu__time_duration.sum")
check(len(peer_t) == 2 and len(r["peer_kernels"]) == 2, "s12: the peer runs two kernels")
check(value(r["metrics"], "gpu__time_duration.sum", "peer") ==
      sum(statistics.median(v) for v in peer_t.values()), "s12: the peer's kernels summed")
grid = values(os.path.join(data, "ncu-s12-torch.csv"), "launch__grid_size")
first = next(k for k in r["peer_kernels"])
check(value(r["metrics"], "launch__grid_size", "peer") == statistics.median(grid[first]),
      "s12: a launch property is the main kernel's, not a sum")

# the command line: a directory's pairs, the table, --json
with tempfile.TemporaryDirectory() as tmp:
    js = os.path.join(tmp, "c.json")
    res = subprocess.run([sys.executable, os.path.join(root, "bench", "ncu_compare.py"), data,
                          "--json", js], capture_output=True, text=True)
    check(res.returncode == 0, f"the command exits 0 ({res.stderr[-300:]})")
    rows = sorted(json.load(open(js)))
    check(rows == ["s1", "s12", "s21", "w1", "w2"], f"every row with both files: {rows}")
    check("== s1" in res.stdout and "inst per wgmma" in res.stdout, "the table")
    res = subprocess.run([sys.executable, os.path.join(root, "bench", "ncu_compare.py"), tmp],
                         capture_output=True, text=True)
    check(res.returncode != 0 and "no ncu-ROW-ours.csv" in res.stderr, "a directory without pairs")

finish("ncu_compare")
