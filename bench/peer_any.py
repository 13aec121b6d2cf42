#!/usr/bin/env python3
"""Dense problems beyond packed, aligned K-major ones: libjitgemm against torch.

    python3 bench/peer_any.py [--suite unaligned,tf32,exact,layouts] [--count N]
                              [--seed S] [--workspace] [--spec bench/shapes.jsonl]
                              [--only NAME,NAME]
                              [--lib build/libjitgemm.so] [--timer events|triton]
                              [--reps N] [--json FILE]

Suites (the targets of the "any problem" work):

  unaligned  --count random problems (the seed is printed; --seed replays):
             M, N and K log-uniform in [256, 8192], any integers; each leading
             dimension its row plus 1 to 7 elements (so rows are not 16 bytes
             apart); every pointer one element (2 bytes) past a 16-byte
             boundary; BF16 in and out. Ours (planned with JG_GEMM_UNALIGNED:
             cp.async loads and direct stores) against torch.mm on the same
             strided views (cuBLAS, which runs cuBLASLt's kernels; torch passes
             such views to it without a copy). Target: the geometric mean of
             torch/jg at least 0.8. --workspace: each plan also gets the
             workspace jg_plan_workspace_bytes asks for (from torch), so that
             its launches pack A and B there and run the aligned kernel (the
             pack's time counted); time both ways on the same --seed.
  tf32       the spec's dense and decode lines in FP32 -> FP32 on TF32 tensor
             cores, against torch.mm with torch.backends.cuda.matmul.allow_tf32
             = True. Target: geometric mean at least 1.0.
  exact      the same lines with JG_GEMM_FP32_EXACT (a workspace from torch,
             jg_plan_workspace_bytes) against torch.mm with allow_tf32 = False
             (cuBLAS SGEMM). No stated target: how far FP32 accuracy costs.
  layouts    the spec's lines in BF16, ours four ways: A as [M, K] or [K, M]
             (JG_GEMM_A_M_MAJOR), B as [N, K] or [K, N] (JG_GEMM_B_N_MAJOR);
             each row's ratio is against ours K-major (row NAME_kk) and torch.mm
             runs on the same views. Target: N-major B (NAME_kn) within 5% of
             K-major, i.e. ratio at least 0.95.

Every result is checked against an FP64 matmul (torch, on the GPU) of the same
operands: max |D - ref| / max |ref| under the bound of its type (BOUNDS below);
torch's own error is printed beside ours. A mismatch marks the row and makes
the exit status 1. Times are medians of alternating launches after an L2 flush
(bench/peer_torch.py's method, whose ctypes mirrors this script uses; its
--check-abi checks them against jitgemm.h).
"""
import argparse
import concurrent.futures
import ctypes
import json
import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import peer_torch as pt  # noqa: E402  (the mirrors, the timers, torch or None)

torch = pt.torch
DEVICE = "cuda"  # where operands live (tests of this script set "cpu")

# Bounds on max |D - ref| / max |ref| against FP64, standard-normal operands:
#   bf16: D's one rounding, 2^-9 of an element, at most that of max |ref|
#         (FP32 sums add ~1e-6): 8e-3 leaves a margin of 4.
#   tf32: each input rounded to TF32 as it is loaded (10 significand bits,
#         within 2^-11 of itself), so each product within 2^-10 of itself,
#         errors of independent signs: the sum's error has a standard
#         deviation of about 2^-11 sqrt(k), while max |ref| is about 5-6
#         sqrt(k) over a large D; ~3e-4 at 6 sigma. 4e-3 leaves room for a
#         load that truncated instead (an error of 2^-10 of each element on
#         top); torch's TF32 meets the same bound.
#   exact: a_lo b_lo (2^-22 of each product) and the parts' roundings
#         dropped, FP32 sums: ~1e-6 of max |ref|; 2e-5 (torch's SGEMM ~1e-6).
BOUNDS = {"bf16": 8e-3, "tf32": 4e-3, "exact": 2e-5}


# ---- operands ------------------------------------------------------------------

def strided(rows, cols, ld, offset, dtype, gen, fill=None):
    """A [rows, cols] view whose rows are ld elements apart, offset elements
    into a fresh buffer (whose start torch aligns to 256 bytes): standard
    normal values, or `fill` everywhere (padding included)."""
    size = (rows - 1) * ld + cols + offset
    if fill is None:
        buf = torch.randn(size, generator=gen, device=gen.device).to(dtype)
    else:
        buf = torch.full((size,), fill, dtype=dtype, device=gen.device)
    return buf.as_strided((rows, cols), (ld, 1), offset)


def leading_dims(m, n, k, a_mn=False, b_mn=False, pad=(0, 0, 0)):
    """lda, ldb, ldd (elements) of a problem whose A is given as [m, k] (or
    [k, m]: a_mn), B as [n, k] (or [k, n]: b_mn), each row padded by pad's."""
    return (m if a_mn else k) + pad[0], (n if b_mn else k) + pad[1], n + pad[2]


def layout_flags(a_mn, b_mn):
    """The jg_gemm_problem flags of the operands' layouts."""
    return (pt.JG_GEMM_A_M_MAJOR if a_mn else 0) | (pt.JG_GEMM_B_N_MAJOR if b_mn else 0)


class Problem:
    """One dense problem: D [m, n] = A B^T with A [m, k] (or given as [k, m]),
    B [n, k] (or given as [k, n]), every leading dimension and pointer offset
    (elements) as given. Builds the operand views and the FP64 reference."""

    def __init__(self, name, m, n, k, dtype, out_dtype, seed, a_mn=False, b_mn=False,
                 pad=(0, 0, 0), offset=0):
        self.name, self.m, self.n, self.k = name, m, n, k
        self.dtype, self.out_dtype = dtype, out_dtype
        self.a_mn, self.b_mn, self.pad, self.offset = a_mn, b_mn, pad, offset
        gen = torch.Generator(device=DEVICE).manual_seed(seed)
        a_rows, a_cols = (k, m) if a_mn else (m, k)
        b_rows, b_cols = (k, n) if b_mn else (n, k)
        self.lda, self.ldb, self.ldd = leading_dims(m, n, k, a_mn, b_mn, pad)
        self.a_given = strided(a_rows, a_cols, self.lda, offset, dtype, gen)
        self.b_given = strided(b_rows, b_cols, self.ldb, offset, dtype, gen)
        self.d = strided(m, n, self.ldd, offset, out_dtype, gen, fill=float("nan"))
        # the operands as math sees them: A [m, k], B^T [k, n] (views, no copies)
        self.a = self.a_given.t() if a_mn else self.a_given
        self.bt = self.b_given if b_mn else self.b_given.t()
        self.ref = self.a.double() @ self.bt.double()

    def flop(self):
        return 2.0 * self.m * self.n * self.k

    def torch_fn(self):
        """torch.mm on the same views (its output allocated by torch: packed)."""
        return lambda: torch.mm(self.a, self.bt)

    def error(self, x):
        """max |x - ref| / max |ref|; inf if x holds a NaN (an element not written)."""
        x = x.double()
        if torch.isnan(x).any():
            return float("inf")
        scale = self.ref.abs().max().item()
        return (x - self.ref).abs().max().item() / (scale if scale > 0 else 1.0)


# ---- libjitgemm ------------------------------------------------------------------

TYPES = None  # torch dtype -> jg_dtype, once torch is known


def gemm_problem(m, n, k, dtype, out_dtype, flags=0, a_mn=False, b_mn=False, pad=(0, 0, 0)):
    """The jg_gemm_problem of a dense problem (torch dtypes) laid out as
    Problem lays it out, without its operands (plan_ahead's)."""
    lda, ldb, ldd = leading_dims(m, n, k, a_mn, b_mn, pad)
    return pt.GemmProblem(flags=flags | layout_flags(a_mn, b_mn), a_type=TYPES[dtype],
                          b_type=TYPES[dtype], d_type=TYPES[out_dtype], m=m, n=n, k=k,
                          lda=lda, ldb=ldb, ldd=ldd)


def plan_ahead(jg, problems, threads):
    """Plans every jg_gemm_problem of the list on `threads` threads at once
    (ctypes lets go of the GIL during jg_gemm_plan, so their NVRTC compiles
    run side by side); the suite's own jg_gemm_plan then finds each in the
    context's memory cache, and a suite's time goes to timing, not to one
    compile after another. Returns the seconds it took."""
    def one(prob):
        plan = ctypes.c_void_p()
        jg.check(jg.lib.jg_gemm_plan(jg.ctx, ctypes.byref(prob), ctypes.byref(plan)),
                 "jg_gemm_plan (ahead)")

    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, threads)) as pool:
        list(pool.map(one, problems))
    return time.monotonic() - t0


class Ours:
    """A plan for a Problem and its launch (args built once, as a server would)."""

    def __init__(self, jg, p, flags=0, workspace=False):
        prob = gemm_problem(p.m, p.n, p.k, p.dtype, p.out_dtype, flags, p.a_mn, p.b_mn, p.pad)
        self.plan = ctypes.c_void_p()
        jg.check(jg.lib.jg_gemm_plan(jg.ctx, ctypes.byref(prob), ctypes.byref(self.plan)),
                 f"jg_gemm_plan ({p.name})")
        self.info = pt.PlanInfo()
        jg.check(jg.lib.jg_plan_get_info(self.plan, ctypes.byref(self.info)),
                 "jg_plan_get_info")
        # exact FP32 plans need theirs; unaligned plans' is optional (workspace)
        exact = bool(flags & pt.JG_GEMM_FP32_EXACT)
        ws_bytes = jg.workspace_bytes(self.plan) if workspace or exact else 0
        self.packs = bool(ws_bytes) and not exact
        # kept alive as long as the launch
        self.workspace = torch.empty(ws_bytes, dtype=torch.uint8, device="cuda") \
            if ws_bytes else None
        self.args = pt.GemmArgs(a=p.a_given.data_ptr(), b=p.b_given.data_ptr(),
                                d=p.d.data_ptr(), alpha=1.0, beta=0.0,
                                workspace=self.workspace.data_ptr() if ws_bytes else None,
                                workspace_bytes=ws_bytes)
        self.jg, self.what = jg, f"jg_gemm_run ({p.name})"

    def __call__(self):
        self.jg.check(self.jg.lib.jg_gemm_run(self.plan, ctypes.byref(self.args),
                                              pt.current_stream()), self.what)

    def kernel(self):
        name = self.info.kernel_name.decode()
        return name + " +pack" if self.packs else name


def measure(jg, p, timer, reps, bound, flags=0, versus=None, workspace=False):
    """Checks ours (and torch) on p against the FP64 reference, then times them
    in alternation. versus: (label, fn) to time against instead of torch.mm on
    p's views (the layouts suite's K-major plan). workspace: an unaligned
    plan gets the workspace it may use (exact FP32 plans always get theirs).
    Returns a result row."""
    ours = Ours(jg, p, flags, workspace)
    ours()
    theirs = p.torch_fn()
    torch_out = theirs()
    torch.cuda.synchronize()
    err, torch_err = p.error(p.d), p.error(torch_out)
    label, peer = versus if versus else ("torch.mm", theirs)
    peer_us, jg_us = timer([peer, ours], reps)
    # progress as it goes (stderr, flushed): a run cut short keeps its rows
    print(f"  {p.name}: {label} {peer_us:.1f} us, jitgemm {jg_us:.1f} us", file=sys.stderr,
          flush=True)
    return {"case": p.name, "m": p.m, "n": p.n, "k": p.k, "lda": p.lda, "ldb": p.ldb,
            "ldd": p.ldd, "offset_elements": p.offset, "a_mn": p.a_mn, "b_mn": p.b_mn,
            "peer": label, "peer_us": peer_us, "jitgemm_us": jg_us,
            "ratio": peer_us / jg_us, "jitgemm_tflops": p.flop() / (jg_us * 1e-6) / 1e12,
            "max_rel_err": err, "torch_max_rel_err": torch_err, "bound": bound,
            "match": err <= bound, "kernel": ours.kernel(), "workspace": ours.packs}


# ---- suites --------------------------------------------------------------------

def random_unaligned(count, seed):
    """count (name, m, n, k, pads) draws: log-uniform in [256, 8192], pads 1..7."""
    rng = random.Random(seed)
    draw = lambda: int(round(math.exp(rng.uniform(math.log(256), math.log(8192)))))  # noqa
    return [(f"unaligned{i:03d}", draw(), draw(), draw(),
             tuple(rng.randint(1, 7) for _ in range(3))) for i in range(count)]


def suite_unaligned(jg, args, timer):
    draws = random_unaligned(args.count, args.seed)
    ahead = [gemm_problem(m, n, k, torch.bfloat16, torch.bfloat16, pt.JG_GEMM_UNALIGNED,
                          pad=pads) for _, m, n, k, pads in draws]
    print(f"unaligned: {len(ahead)} plans made ahead in "
          f"{plan_ahead(jg, ahead, args.threads):.1f} s", file=sys.stderr, flush=True)
    rows = []
    for name, m, n, k, pads in draws:
        p = Problem(name, m, n, k, torch.bfloat16, torch.bfloat16, args.seed, pad=pads,
                    offset=1)
        rows.append(measure(jg, p, timer, args.reps, BOUNDS["bf16"],
                            flags=pt.JG_GEMM_UNALIGNED, workspace=args.workspace))
        del p
    return rows


def suite_fp32(jg, args, timer, cases, exact):
    flags = pt.JG_GEMM_FP32_EXACT if exact else 0
    plan_ahead(jg, [gemm_problem(c["m"], c["n"], c["k"], torch.float32, torch.float32, flags)
                    for c in cases], args.threads)
    torch.backends.cuda.matmul.allow_tf32 = not exact  # torch's side: TF32 or SGEMM
    rows = []
    for c in cases:
        p = Problem(c["name"] + ("_exact" if exact else "_tf32"), c["m"], c["n"], c["k"],
                    torch.float32, torch.float32, c["seed"])
        rows.append(measure(jg, p, timer, args.reps, BOUNDS["exact" if exact else "tf32"],
                            flags=pt.JG_GEMM_FP32_EXACT if exact else 0))
        del p
    torch.backends.cuda.matmul.allow_tf32 = False
    return rows


def suite_layouts(jg, args, timer, cases):
    plan_ahead(jg, [gemm_problem(c["m"], c["n"], c["k"], torch.bfloat16, torch.bfloat16,
                                 a_mn=a_mn, b_mn=b_mn)
                    for c in cases for a_mn in (False, True) for b_mn in (False, True)],
               args.threads)
    rows = []
    for c in cases:
        base = Problem(c["name"] + "_kk", c["m"], c["n"], c["k"], torch.bfloat16,
                       torch.bfloat16, c["seed"])
        base_row = measure(jg, base, timer, args.reps, BOUNDS["bf16"])
        rows.append(base_row)
        kk = Ours(jg, base)
        for a_mn, b_mn, tag in ((False, True, "kn"), (True, False, "mk"), (True, True, "mn")):
            p = Problem(f"{c['name']}_{tag}", c["m"], c["n"], c["k"], torch.bfloat16,
                        torch.bfloat16, c["seed"], a_mn=a_mn, b_mn=b_mn)
            rows.append(measure(jg, p, timer, args.reps, BOUNDS["bf16"],
                                versus=("ours K-major", kk)))
            del p
        del kk, base
    return rows


# ---- driver --------------------------------------------------------------------

def read_cases(spec, only):
    """The spec's dense and decode lines (plain: no dtype, forms of their own)."""
    cases = []
    with open(spec) as f:
        for line in f:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            c = json.loads(line)
            if c.get("kind", "dense") not in ("dense", "decode") or isinstance(c["m"], list):
                continue
            if only and c["name"] not in only:
                continue
            cases.append({"name": c["name"], "m": c["m"], "n": c["n"], "k": c["k"],
                          "seed": c.get("seed", 0)})
    return cases


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def print_rows(title, rows):
    print(f"\n{title}")
    print(f"{'case':<28} {'peer us':>9} {'jitgemm us':>10} {'peer/jg':>7} {'TFLOP/s':>8} "
          f"{'err':>9} {'torch err':>9}  kernel")
    for r in rows:
        mark = "" if r["match"] else f"  MISMATCH (bound {r['bound']:.0e})"
        print(f"{r['case']:<28} {r['peer_us']:9.1f} {r['jitgemm_us']:10.1f} {r['ratio']:7.2f} "
              f"{r['jitgemm_tflops']:8.1f} {r['max_rel_err']:9.2e} "
              f"{r['torch_max_rel_err']:9.2e}  {r['kernel']}{mark}")


def summarize(suite, rows):
    """The suite's geometric mean against its target, one line."""
    if suite == "layouts":
        for tag, what in (("_kn", "N-major B"), ("_mk", "M-major A"), ("_mn", "both MN-major")):
            sel = [r["ratio"] for r in rows if r["case"].endswith(tag)]
            target = " (target >= 0.95)" if tag == "_kn" else ""
            print(f"layouts: {what} against K-major, geomean {geomean(sel):.3f}, "
                  f"worst {min(sel, default=float('nan')):.3f}{target}")
        return
    targets = {"unaligned": " (target >= 0.8)", "tf32": " (target >= 1.0)", "exact": ""}
    sel = [r["ratio"] for r in rows]
    print(f"{suite}: torch/jg geomean {geomean(sel):.3f} over {len(sel)} problems"
          f"{targets[suite]}")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--suite", default="unaligned,tf32,exact,layouts",
                    help="comma-separated: unaligned, tf32, exact, layouts")
    ap.add_argument("--count", type=int, default=40, help="unaligned problems")
    ap.add_argument("--seed", type=int, default=None, help="default: drawn and printed")
    ap.add_argument("--workspace", action="store_true",
                    help="unaligned: give each plan the workspace it may use (the pack)")
    ap.add_argument("--spec", default=os.path.join(pt.REPO, "bench", "shapes.jsonl"))
    ap.add_argument("--only", default="", help="comma-separated spec names (not unaligned)")
    ap.add_argument("--lib", default=os.path.join(pt.REPO, "build", "libjitgemm.so"))
    ap.add_argument("--timer", choices=["events", "triton"], default="events")
    ap.add_argument("--reps", type=int, default=50, help="launches per median (events)")
    ap.add_argument("--json", help="also write the rows here")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1,
                    help="plans made ahead at once (NVRTC compiles side by side)")
    args = ap.parse_args()
    args.suites = [s for s in args.suite.split(",") if s]
    bad = set(args.suites) - {"unaligned", "tf32", "exact", "layouts"}
    if bad:
        ap.error(f"unknown suite(s): {', '.join(sorted(bad))}")
    if args.seed is None:
        args.seed = random.SystemRandom().randrange(1 << 31)
    return args


def main():
    global TYPES
    args = parse_args()
    if torch is None:
        sys.exit("PyTorch is needed (import torch failed)")
    if not torch.cuda.is_available():
        print("no CUDA GPU: nothing to time")
        return 0
    TYPES = {torch.bfloat16: pt.JG_BF16, torch.float16: pt.JG_FP16, torch.float32: pt.JG_FP32}
    torch.zeros(1, device="cuda")  # the primary context now exists and is current
    jg = pt.JitGemm(args.lib)
    jg.create_context()
    timer_name, timer = pt.pick_timer(args.timer)
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"libjitgemm {jg.lib.jg_version().decode()}, timer: {timer_name}, seed {args.seed}")
    cases = read_cases(args.spec, [s for s in args.only.split(",") if s])
    results = {}
    try:
        for suite in args.suites:
            if suite == "unaligned":
                results[suite] = suite_unaligned(jg, args, timer)
            elif suite in ("tf32", "exact"):
                results[suite] = suite_fp32(jg, args, timer, cases, suite == "exact")
            else:
                results[suite] = suite_layouts(jg, args, timer, cases)
            print_rows(suite, results[suite])
    finally:
        torch.cuda.synchronize()
        jg.destroy()
    print()
    for suite, rows in results.items():
        summarize(suite, rows)
    if args.json:
        meta = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
                "timer": timer_name, "seed": args.seed,
                "commit": os.environ.get("JITGEMM_COMMIT", "unknown")}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "suites": results}, f, indent=1)
    return 0 if all(r["match"] for rows in results.values() for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
