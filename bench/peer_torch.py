#!/usr/bin/env python3
"""Grouped GEMM: libjitgemm against PyTorch's torch._grouped_mm, same process.

    python3 bench/peer_torch.py [--spec bench/shapes.jsonl] [--lib build/libjitgemm.so]
                                [--only NAME,NAME] [--timer events|triton]
                                [--reps N] [--json FILE] [--fp8] [--nvfp4]
    python3 bench/peer_torch.py --random N [--seed S] [--random-generic F]
                                [--dims FILE] [--emit-shapes FILE]
                                [--dtype bf16|fp16|fp8] [--scale tensor|row|block] [...]
    python3 bench/peer_torch.py --check-abi [--lib build/libjitgemm.so]

For every line of kind "grouped", layout "list" in the spec (the seeds' four
cases): D_g[m_g, n] = A_g[m_g, k] * B_g[n, k]^T in BF16, FP32 accumulation.
Both sides read the same tensors: A is one [sum m_g, k] tensor whose groups
follow each other, B one [G, n, k] tensor, D one [sum m_g, n] tensor -- the
MoE layout torch._grouped_mm takes (2D x 3D with end offsets). libjitgemm gets
per-group pointers into those tensors through ctypes.

The results are compared (max |D_jg - D_torch| / max |D_torch|) before timing;
a mismatch marks the row and makes the exit status 1. Times are medians over
launches of torch and libjitgemm in alternation, each launch preceded by a
read of 256 MiB that evicts the 50 MB L2 and leaves only clean lines -- the
method of tools/jitgemm-bench (a write flush, as triton's do_bench does with
zero_(), leaves dirty lines that the timed kernel must write back).
`--timer triton` times each side with do_bench instead. `--fp8` adds each case
in FP8 with row-wise scales (e4m3 quantized once, per row of A and of each B_g):
torch._scaled_grouped_mm against our contiguous layout on the same tensors.

`--nvfp4` adds each case in NVFP4 (rows NAME_nvfp4): our list layout over
A_g and B_g quantized by jg_quantize_nvfp4 (e2m1 codes, e4m3 block scales per
16 of k in the 128x4 swizzled layout, one FP32 global scale per group
operand), against the FP8 row-wise peer of `--fp8`, made and timed the same
way (NVFP4's target is stated against that peer). The two compute different
products, so ours is checked against an FP32 matmul of the dequantized NVFP4
operands instead. Each case also gives a row NAME_nvfp4_ws: the same problem
and operands planned with flags = JG_GROUPED_WORKSPACE (0.5), a workspace of
jg_plan_workspace_bytes allocated by torch passed with every launch (the
activation dequantized once per launch, sm90_nvfp4_pre.cu), checked and timed
against the same peer the same way.

`--random N` draws N dense problems as `jitgemm-bench --random` does (the
same generator, bench/random_draw.py: the same seed gives the same problems)
and times ours against torch.mm or torch._scaled_mm (tensor, row or block
scales), with an M-generic plan for some rows; as the Python package runs
them, the context is made with JG_CONTEXT_WORKSPACE and each launch passes a
workspace of jg_plan_workspace_bytes (plans that split K through one,
stream-K, run so; without one they would run their unsplit plan); then the summary of
jitgemm-bench's random mode (bench/README.md, "Random problems").

`--check-abi` needs neither a GPU nor torch: it compiles a small C program
against include/jitgemm/jitgemm.h (with $CC, else cc), compares the sizes and
offsets of the ctypes mirrors (the package's, python/jitgemm/_abi.py) and the
JG_ constants with C's, and the scale offsets of the NVFP4 check with the
library's jg_nvfp4_sf_offset.
"""
import argparse
import concurrent.futures
import ctypes
import inspect
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

import random_draw  # bench/random_draw.py: --random's draw, jitgemm-bench's generator

try:
    import torch
except ImportError:  # --check-abi runs without it; main() says so otherwise
    torch = None

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOLERANCE = 2e-2  # two bf16 roundings of the same FP32 sums, different orders
# NVFP4 against an FP32 matmul of the values our kernel read: every code times
# block scale is exact in BF16 and sums are FP32, so what differs is D's one
# bf16 rounding (2^-9 of an element, so at most that of max |ref|) and the
# summation order (~1e-6 at these k): 1e-2 leaves a margin of 5, while a
# misplaced block scale or a swapped nibble is off by O(1).
NVFP4_TOLERANCE = 1e-2

# ---- libjitgemm through ctypes ------------------------------------------------
# The package's mirrors of include/jitgemm/jitgemm.h (python/jitgemm/_abi.py),
# imported from the source tree: the benchmark needs neither an
# installed package nor torch for --check-abi, and importing the package would
# load its own library at import.

sys.path.insert(0, os.path.join(REPO, "python", "jitgemm"))
from _abi import (CONSTANTS, JG_BF16, JG_CONTEXT_WORKSPACE, JG_DTYPE_NONE, JG_E4M3,  # noqa: E402,F401
                  JG_FP16, JG_FP32, JG_GEMM_A_M_MAJOR, JG_GEMM_B_N_MAJOR, JG_GEMM_FP32_EXACT,
                  JG_GEMM_M_GENERIC, JG_GEMM_UNALIGNED, JG_GROUPED_CONTIGUOUS, JG_GROUPED_LIST,
                  JG_GROUPED_WORKSPACE, JG_NVFP4, JG_OK, JG_ORIGIN_COMPILED, JG_SCALE_BLOCK,
                  JG_SCALE_NVFP4, JG_SCALE_ROW, JG_SCALE_TENSOR, JG_SF_SWIZZLED_128X4, MIRRORS,
                  GemmArgs, GemmProblem, GroupedArgs, GroupedProblem, Options, PlanInfo,
                  QuantArgs, QuantProblem, open_library)


class JitGemm:
    """The library at path (typed by the package's signatures) and the few
    calls this benchmark makes through it."""

    def __init__(self, path):
        self.lib = open_library(path)
        self.ctx = None

    def check(self, status, what):
        if status != JG_OK:
            # the context's message already starts with the status name
            text = self.lib.jg_context_last_error(self.ctx).decode(errors="replace")
            raise RuntimeError(f"{what}: {text or self.lib.jg_status_name(status).decode()}")

    def create_context(self):
        """Binds to the CUDA context current on this thread: torch's primary one;
        with JG_CONTEXT_WORKSPACE, as the Python package makes its contexts (dense
        launches without a workspace run the plans that take none)."""
        ctx = ctypes.c_void_p()
        opts = Options(flags=JG_CONTEXT_WORKSPACE)
        self.check(self.lib.jg_context_create(ctypes.byref(opts), ctypes.byref(ctx)),
                   "jg_context_create")
        self.ctx = ctx

    def plan_grouped(self, what, rows, n, k, **fields):
        """Plans a grouped problem, D in BF16, without C: the groups' rows, n, k
        and the fields that differ from that; returns (plan, PlanInfo)."""
        m = (ctypes.c_int64 * len(rows))(*rows)  # copied by the library
        p = GroupedProblem(c_type=JG_DTYPE_NONE, d_type=JG_BF16, groups=len(rows),
                           m=m, n=n, k=k, **fields)
        plan = ctypes.c_void_p()
        self.check(self.lib.jg_grouped_plan(self.ctx, ctypes.byref(p), ctypes.byref(plan)),
                   f"jg_grouped_plan ({what})")
        info = PlanInfo()
        self.check(self.lib.jg_plan_get_info(plan, ctypes.byref(info)), "jg_plan_get_info")
        return plan, info

    def plan(self, rows, n, k):
        """Plans a BF16 list-layout problem."""
        return self.plan_grouped("bf16", rows, n, k, layout=JG_GROUPED_LIST,
                                 a_type=JG_BF16, b_type=JG_BF16)

    def plan_fp8_rows(self, rows, n, k):
        """Plans an e4m3 contiguous-layout problem with row scales (the groups'
        rows one after another in A, offsets on the device; rows, the expected
        rows, only size the tiles)."""
        return self.plan_grouped("fp8", rows, n, k, layout=JG_GROUPED_CONTIGUOUS,
                                 a_type=JG_E4M3, b_type=JG_E4M3, m_max=sum(rows),
                                 scale=JG_SCALE_ROW)

    def plan_nvfp4_list(self, rows, n, k, flags=0):
        """Plans an NVFP4 list-layout problem, block scales swizzled 128x4, with
        flags (JG_GROUPED_WORKSPACE: the caller passes a workspace)."""
        what = "nvfp4, workspace" if flags & JG_GROUPED_WORKSPACE else "nvfp4"
        return self.plan_grouped(what, rows, n, k, flags=flags, layout=JG_GROUPED_LIST,
                                 a_type=JG_NVFP4, b_type=JG_NVFP4, scale=JG_SCALE_NVFP4,
                                 a_sf_layout=JG_SF_SWIZZLED_128X4,
                                 b_sf_layout=JG_SF_SWIZZLED_128X4)

    def workspace_bytes(self, plan):
        """jg_plan_workspace_bytes: the workspace each launch of plan needs."""
        n = ctypes.c_size_t()
        self.check(self.lib.jg_plan_workspace_bytes(plan, ctypes.byref(n)),
                   "jg_plan_workspace_bytes")
        return n.value

    def workspace(self, plan):
        """A workspace of jg_plan_workspace_bytes for plan's launches from torch (its
        allocations start 16-byte aligned, as the library requires) and the launch
        fields that pass it: (tensor or None, fields). The caller keeps the tensor
        alive until the launches are over."""
        n = self.workspace_bytes(plan)
        ws = torch.empty(n, dtype=torch.uint8, device="cuda") if n else None
        return ws, {"workspace": ws.data_ptr() if n else None, "workspace_bytes": n}

    def quantize_nvfp4(self, src, rows, cols, layout, codes, sf, global_scale, stream):
        """Launches jg_quantize_nvfp4 on stream: BF16 src [rows, cols] (packed) to
        codes [rows, cols / 2], block scales sf in layout, one FP32 global scale
        (all device addresses)."""
        p = QuantProblem(src_type=JG_BF16, scale=JG_SCALE_NVFP4, rows=rows, cols=cols,
                         sf_layout=layout)
        a = QuantArgs(src=src, dst=codes, scale=global_scale, sf=sf)
        self.check(self.lib.jg_quantize_nvfp4(self.ctx, ctypes.byref(p), ctypes.byref(a),
                                              stream), "jg_quantize_nvfp4")

    def sf_bytes(self, layout, rows, k):
        n = self.lib.jg_nvfp4_sf_bytes(layout, rows, k)
        if n < 0:
            raise RuntimeError(f"jg_nvfp4_sf_bytes({layout}, {rows}, {k}) refused")
        return n

    def destroy(self):
        if self.ctx:
            self.lib.jg_context_destroy(self.ctx)
            self.ctx = None


def pointer_array(ptrs):
    return (ctypes.c_void_p * len(ptrs))(*ptrs)


def current_stream():
    return ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)


class Launch:
    """A planned problem bound to its arguments: jg_grouped_args from keyword
    fields, where a list of device addresses (ints, None for NULL) becomes a
    host pointer array.

    The arrays are built once and kept alive here, so a timed call is only the
    ctypes call and the launch (the library keeps the tensor maps of the last
    pointer set, so repeated calls encode nothing)."""

    def __init__(self, jg, plan, what, **fields):
        self._arrays = {name: pointer_array(v) for name, v in fields.items()
                        if isinstance(v, list)}
        fields.update(self._arrays)
        self.args = GroupedArgs(alpha=1.0, beta=0.0, **fields)
        self.jg, self.plan, self.what = jg, plan, what

    def __call__(self):
        self.jg.check(self.jg.lib.jg_grouped_run(self.plan, ctypes.byref(self.args),
                                                 current_stream()), self.what)


def group_starts(rows):
    """The first row of each group in a tensor holding the groups one after another."""
    return [sum(rows[:g]) for g in range(len(rows))]


def group_row_ptrs(t, rows):
    """Per-group addresses into t [sum m_g, cols], the groups' rows one after another."""
    row_bytes = t.shape[1] * t.element_size()
    return [t.data_ptr() + s * row_bytes for s in group_starts(rows)]


def quantize_rows(x):
    """Row-wise e4m3 quantization: (q, s) with x ~= q * s[..., None], s = amax / 448."""
    amax = x.float().abs().amax(dim=-1).clamp(min=1e-12)
    s = amax / 448.0
    q = (x.float() / s.unsqueeze(-1)).clamp(-448.0, 448.0).to(torch.float8_e4m3fn)
    return q, s.contiguous()


def fp8_row_peer(a16, b16, rows):
    """torch._scaled_grouped_mm over row-wise e4m3 quantizations of A [M, k]
    and B [G, n, k]: returns (fn, (a, sa, b, sb, offs)), fn computing D [M, n]
    in BF16, then the quantized operands, their scales and the G + 1 int32 row
    offsets of the groups (our contiguous layout's)."""
    op = getattr(torch, "_scaled_grouped_mm", None)
    if op is None:
        raise RuntimeError("torch._scaled_grouped_mm is missing: no FP8 grouped peer")
    a, sa = quantize_rows(a16)              # [M, k], [M]
    b, sb = quantize_rows(b16)              # [G, n, k], [G, n]
    ends = torch.tensor(rows, dtype=torch.int32, device="cuda").cumsum(0, dtype=torch.int32)
    offs = torch.cat([torch.zeros(1, dtype=torch.int32, device="cuda"), ends])
    bt = b.transpose(-2, -1)  # [G, k, n] view, k contiguous
    theirs = lambda: op(a, bt, sa, sb, offs=ends, out_dtype=torch.bfloat16)  # noqa: E731
    return theirs, (a, sa, b, sb, offs)


def run_case_fp8(jg, case, timer, reps):
    """The case in FP8 with row-wise scales: torch._scaled_grouped_mm against our
    contiguous layout over the same quantized tensors."""
    rows, n, k = case["m"], case["n"], case["k"]
    theirs, (a, sa, b, sb, offs) = fp8_row_peer(*make_operands(case), rows)
    d_jg = torch.full((sum(rows), n), float("nan"), dtype=torch.bfloat16, device="cuda")
    plan, info = jg.plan_fp8_rows(rows, n, k)
    ours = Launch(jg, plan, "jg_grouped_run (fp8)", a=[a.data_ptr()], b=[b.data_ptr()],
                  d=[d_jg.data_ptr()], rows=offs.data_ptr(), a_scale=sa.data_ptr(),
                  b_scale=sb.data_ptr())
    ours()
    d_torch = theirs()
    torch.cuda.synchronize()
    diff = max_rel_diff(d_jg, d_torch)
    times = timer([theirs, ours], reps)
    return result_row(case, "_fp8row", "torch._scaled_grouped_mm", times, info, diff, TOLERANCE)


# ---- NVFP4 (list layout) against the FP8 row-wise peer -----------------------

# e2m1 codes 0..15 (jitgemm.h, "NVFP4"): bit 3 the sign
E2M1_VALUES = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
               -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0]


def sf_offset_swizzled(r, kb, kbs):
    """Byte offset of block scale (r, kb) in the 128x4 swizzled layout of an
    operand with kbs = k / 16 scales a row (jitgemm.h's formula). Plain
    arithmetic, so r and kb may be ints or tensors; --check-abi compares it
    with jg_nvfp4_sf_offset."""
    kbp = 4 * ((kbs + 3) // 4)
    return (((r // 128) * (kbp // 4) + kb // 4) * 512 + (r % 32) * 16 + ((r // 32) % 4) * 4
            + kb % 4)


def quantize_nvfp4(jg, x):
    """x [rows, k] (BF16, contiguous) quantized on the GPU by jg_quantize_nvfp4:
    returns (codes [rows, k / 2] uint8, sf uint8 (swizzled 128x4), g [1] FP32)."""
    rows, k = x.shape
    codes = torch.empty(rows, k // 2, dtype=torch.uint8, device="cuda")
    sf = torch.empty(jg.sf_bytes(JG_SF_SWIZZLED_128X4, rows, k), dtype=torch.uint8,
                     device="cuda")
    g = torch.empty(1, dtype=torch.float32, device="cuda")
    jg.quantize_nvfp4(x.data_ptr(), rows, k, JG_SF_SWIZZLED_128X4, codes.data_ptr(),
                      sf.data_ptr(), g.data_ptr(), current_stream())
    return codes, sf, g


def dequantize_nvfp4(codes, sf, g):
    """The FP32 values an NVFP4 operand stands for: e2m1(code) * e4m3(sf) * g."""
    rows, k = codes.shape[0], codes.shape[1] * 2
    table = torch.tensor(E2M1_VALUES, dtype=torch.float32, device=codes.device)
    # element 2j in the low nibble of byte j, 2j + 1 in its high nibble
    nibbles = torch.stack([codes & 15, codes >> 4], dim=-1).reshape(rows, k)
    r = torch.arange(rows, device=codes.device).unsqueeze(1)
    kb = torch.arange(k // 16, device=codes.device).unsqueeze(0)
    scales = sf[sf_offset_swizzled(r, kb, k // 16)].view(torch.float8_e4m3fn).float()
    return table[nibbles.long()] * scales.repeat_interleave(16, dim=1) * g


def run_case_nvfp4(jg, case, timer, reps):
    """The case in NVFP4, our list layout (a group's A_g, B_g quantized on
    their own), against the FP8 row-wise peer of run_case_fp8 on the same BF16
    operands: two rows, NAME_nvfp4 (flags 0) and NAME_nvfp4_ws (the same
    problem with JG_GROUPED_WORKSPACE and a workspace of its own), over the
    same quantized operands. Each is checked against FP32 products of the
    dequantized operands, then timed against the peer."""
    rows, n, k = case["m"], case["n"], case["k"]
    a16, b16 = make_operands(case)
    theirs = fp8_row_peer(a16, b16, rows)[0]
    starts = group_starts(rows)
    # group g's operands (codes, sf, g) for A_g and B_g; None where m_g = 0
    qa = [quantize_nvfp4(jg, a16[s:s + m]) if m else None for s, m in zip(starts, rows)]
    qb = [quantize_nvfp4(jg, b16[g]) if m else None for g, m in enumerate(rows)]
    theirs()  # once untimed, as in run_case_fp8: a failure shows before timing
    ref = torch.zeros(sum(rows), n, dtype=torch.float32, device="cuda")
    for s, m, oa, ob in zip(starts, rows, qa, qb):
        if m:  # FP32 matmul (torch's default: no TF32)
            ref[s:s + m] = dequantize_nvfp4(*oa) @ dequantize_nvfp4(*ob).t()
    return [run_nvfp4_list(jg, case, qa, qb, ref, theirs, timer, reps, flags)
            for flags in (0, JG_GROUPED_WORKSPACE)]


def run_nvfp4_list(jg, case, qa, qb, ref, theirs, timer, reps, flags):
    """One row of run_case_nvfp4: our list layout planned with flags over the
    quantized operands qa, qb into a fresh D, checked against ref, timed against
    theirs. With JG_GROUPED_WORKSPACE, a workspace of jg_plan_workspace_bytes
    from torch (its allocations start 16-byte aligned, as the library requires)
    is passed with every launch; the row is NAME_nvfp4_ws."""
    rows, n, k = case["m"], case["n"], case["k"]
    d_jg = torch.full((sum(rows), n), float("nan"), dtype=torch.bfloat16, device="cuda")
    plan, info = jg.plan_nvfp4_list(rows, n, k, flags)
    workspace, suffix, ws_args = None, "_nvfp4", {}
    if flags & JG_GROUPED_WORKSPACE:
        # the tensor kept alive by this frame until the timing below is over
        (workspace, ws_args), suffix = jg.workspace(plan), "_nvfp4_ws"
    ws_bytes = ws_args.get("workspace_bytes", 0)

    def ptrs(ops, i):  # field i of each group's operand; NULL for empty groups
        return [op[i].data_ptr() if op else None for op in ops]

    ours = Launch(jg, plan, f"jg_grouped_run ({suffix[1:]})", a=ptrs(qa, 0), b=ptrs(qb, 0),
                  d=[p if m else None for p, m in zip(group_row_ptrs(d_jg, rows), rows)],
                  a_scales=ptrs(qa, 2), b_scales=ptrs(qb, 2), a_sfs=ptrs(qa, 1),
                  b_sfs=ptrs(qb, 1), **ws_args)
    ours()
    torch.cuda.synchronize()
    diff = max_rel_diff(d_jg, ref)
    times = timer([theirs, ours], reps)
    return result_row(case, suffix, "torch._scaled_grouped_mm (fp8 row-wise)", times, info,
                      diff, NVFP4_TOLERANCE, sf_layout="swizzled_128x4",
                      check="fp32 matmul of the dequantized nvfp4 operands",
                      workspace_bytes=ws_bytes)


# ---- the PyTorch side --------------------------------------------------------

def torch_grouped(rows, a, b, d):
    """Returns (name, fn) computing d = a * b^T per group into d.

    torch._grouped_mm(mat_a [M, k], mat_b [G, k, n], offs=int32 group ends)
    is used when present (its signature is read at run time; out_dtype is
    passed only if accepted); else one torch.mm per group."""
    op = getattr(torch, "_grouped_mm", None)
    if op is not None:
        offs = torch.tensor(rows, dtype=torch.int32, device=a.device).cumsum(0, dtype=torch.int32)
        bt = b.transpose(-2, -1)  # [G, k, n] view, k contiguous: B's natural layout
        kwargs = {"offs": offs}
        if accepts(op, "out_dtype"):
            kwargs["out_dtype"] = torch.bfloat16

        # The op allocates its output (from torch's caching allocator, no cudaMalloc
        # once warm); d is filled only for the check, so the timed call is the
        # grouped kernel alone.
        return "torch._grouped_mm", lambda: op(a, bt, **kwargs)
    starts = group_starts(rows)

    def loop():
        for g, m in enumerate(rows):
            if m:
                s = starts[g]
                torch.mm(a[s:s + m], b[g].t(), out=d[s:s + m])
        return d

    return "torch.mm loop", loop


def accepts(op, name):
    """Whether op takes keyword `name`: from the Python signature, else the schema."""
    try:
        return name in inspect.signature(op).parameters
    except (TypeError, ValueError):
        pass
    schema = getattr(getattr(torch.ops.aten, "_grouped_mm", None), "default", None)
    return schema is not None and name in str(schema._schema)


def describe_torch_op():
    op = getattr(torch, "_grouped_mm", None)
    if op is None:
        return "torch._grouped_mm missing: timing a loop of torch.mm"
    try:
        return "torch._grouped_mm" + str(torch.ops.aten._grouped_mm.default._schema).split(
            "_grouped_mm", 1)[1]
    except Exception:  # the schema text is informative only
        return "torch._grouped_mm"


# ---- timing ------------------------------------------------------------------

_flush_buffer = None


def flush_l2():
    """Reads 256 MiB (a sum), so no operand is left in the 50 MB L2 and no line
    of it is dirty."""
    global _flush_buffer
    if _flush_buffer is None:
        _flush_buffer = torch.ones(64 << 20, dtype=torch.float32, device="cuda")
    _flush_buffer.sum()


def time_events(fns, reps):
    """Median microseconds of `reps` launches of each of fns, in alternation
    (clock drift hits them alike), each launch flushed and timed alone."""
    for _ in range(10):
        for fn in fns:
            fn()
    events = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
               for _ in range(reps)] for _ in fns]
    for i in range(reps):
        for fn, ev in zip(fns, events):
            flush_l2()
            ev[i][0].record()
            fn()
            ev[i][1].record()
    torch.cuda.synchronize()
    return [statistics.median(s.elapsed_time(e) for s, e in ev) * 1e3 for ev in events]


def triton_timer():
    """triton.testing.do_bench as a median timer, if it has return_mode (it flushes L2
    itself between reps); None otherwise."""
    try:
        from triton.testing import do_bench
    except ImportError:
        return None
    if "return_mode" not in inspect.signature(do_bench).parameters:
        return None
    return lambda fns, reps: [do_bench(fn, warmup=25, rep=100, return_mode="median") * 1e3
                              for fn in fns]


# ---- cases -------------------------------------------------------------------

def read_cases(spec, only):
    """The spec's grouped list-layout lines; n and k must be the same for all groups."""
    cases = []
    with open(spec) as f:
        for line_no, line in enumerate(f, 1):
            if not line.strip():
                continue
            c = json.loads(line)
            if c.get("kind") != "grouped" or c.get("layout") != "list":
                continue
            if only and c["name"] not in only:
                continue
            n, k = set(c["n"]), set(c["k"])
            if len(n) != 1 or len(k) != 1:
                sys.exit(f"{spec}:{line_no}: {c['name']}: n and k must be shared by all groups")
            cases.append({"name": c["name"], "m": list(c["m"]), "n": n.pop(), "k": k.pop(),
                          "seed": c.get("seed", 0)})
    if only and len(cases) != len(only):
        missing = sorted(set(only) - {c["name"] for c in cases})
        sys.exit(f"not grouped list cases in {spec}: {', '.join(missing)}")
    return cases


def make_operands(case):
    """Standard-normal BF16 operands (not zeros: tensor-core power depends on data)."""
    gen = torch.Generator(device="cuda").manual_seed(case["seed"])
    total, g, n, k = sum(case["m"]), len(case["m"]), case["n"], case["k"]
    a = torch.randn(total, k, device="cuda", generator=gen).to(torch.bfloat16)
    b = torch.randn(g, n, k, device="cuda", generator=gen).to(torch.bfloat16)
    return a, b


def max_rel_diff(x, y):
    """max |x - y| / max |y| in FP32; inf if x has a NaN (an unwritten output)."""
    x, y = x.float(), y.float()
    if torch.isnan(x).any():
        return float("inf")
    scale = y.abs().max().item()
    return (x - y).abs().max().item() / (scale if scale > 0 else 1.0)


def run_case(jg, case, timer, reps):
    rows, n, k = case["m"], case["n"], case["k"]
    a, b = make_operands(case)
    d_jg = torch.full((sum(rows), n), float("nan"), dtype=torch.bfloat16, device="cuda")
    d_torch = torch.empty_like(d_jg)
    plan, info = jg.plan(rows, n, k)
    ours = Launch(jg, plan, "jg_grouped_run", a=group_row_ptrs(a, rows),
                  b=[b[g].data_ptr() for g in range(len(rows))],
                  d=group_row_ptrs(d_jg, rows))
    impl, theirs = torch_grouped(rows, a, b, d_torch)

    ours()
    d_torch.copy_(theirs())
    torch.cuda.synchronize()
    diff = max_rel_diff(d_jg, d_torch)

    times = timer([theirs, ours], reps)
    return result_row(case, "", impl, times, info, diff, TOLERANCE)


def result_row(case, suffix, impl, times, info, diff, tolerance, **extra):
    """A row of the table and the JSON: times = (torch us, jitgemm us) of the
    case's problem, diff its check against the tolerance; extra keys appended."""
    rows, n, k = case["m"], case["n"], case["k"]
    torch_us, jg_us = times
    flop = 2.0 * sum(rows) * n * k
    return {"case": case["name"] + suffix, "groups": len(rows), "m": rows, "n": n, "k": k,
            "torch_impl": impl, "torch_us": torch_us, "jitgemm_us": jg_us,
            "ratio": torch_us / jg_us, "jitgemm_tflops": flop / (jg_us * 1e-6) / 1e12,
            "torch_tflops": flop / (torch_us * 1e-6) / 1e12,
            "kernel": info.kernel_name.decode(),
            "kernel_origin": "compiled" if info.origin == JG_ORIGIN_COMPILED else "disk",
            "max_rel_diff": diff, "match": diff <= tolerance, **extra}


def print_table(results):
    print(f"{'case':<20} {'torch us':>9} {'jitgemm us':>10} {'torch/jg':>8} "
          f"{'jg TFLOP/s':>10} {'max rel diff':>12}  kernel")
    for r in results:
        mark = "" if r["match"] else "  MISMATCH"
        print(f"{r['case']:<20} {r['torch_us']:9.1f} {r['jitgemm_us']:10.1f} {r['ratio']:8.2f} "
              f"{r['jitgemm_tflops']:10.1f} {r['max_rel_diff']:12.2e}  {r['kernel']}{mark}")
    print("torch/jg > 1: libjitgemm is faster")


def bounded(kind, lo, hi):
    """An argparse type: a `kind` (int or float) in [lo, hi], else jitgemm-bench's message."""
    what = "an integer" if kind is int else "a number"

    def parse(text):
        try:
            v = kind(text)
        except ValueError:
            v = None
        if v is None or not lo <= v <= hi:
            raise argparse.ArgumentTypeError(f"must be {what} in [{lo}, {hi}], not '{text}'")
        return v
    return parse


def seed_arg(text):
    seed = random_draw.parse_seed(text)
    if seed is None:
        raise argparse.ArgumentTypeError(
            f"must be an integer in [0, {random_draw.SEED_MAX}], not '{text}'")
    return seed


# --random's options, and the grouped cases' (None: not given)
RANDOM_ONLY = ("seed", "random_generic", "generic_buckets", "dims", "emit_shapes", "dtype",
               "scale")
GROUPED_ONLY = ("spec", "only", "fp8", "nvfp4")


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--spec", help="the grouped cases (default bench/shapes.jsonl)")
    ap.add_argument("--lib", default=os.path.join(REPO, "build", "libjitgemm.so"))
    ap.add_argument("--only", help="comma-separated case names")
    ap.add_argument("--timer", choices=["events", "triton"], default="events",
                    help="events: alternating launches after a read-only L2 flush (as "
                         "jitgemm-bench); triton: triton.testing.do_bench for each")
    ap.add_argument("--reps", type=int, default=100,
                    help="launches per median (events timer; --random: at least 20)")
    ap.add_argument("--json", help="also write the rows here")
    ap.add_argument("--fp8", action="store_true",
                    help="also each case in FP8 (e4m3, row-wise scales): "
                         "torch._scaled_grouped_mm against our contiguous layout")
    ap.add_argument("--nvfp4", action="store_true",
                    help="also each case in NVFP4 (rows NAME_nvfp4, and NAME_nvfp4_ws "
                         "planned with JG_GROUPED_WORKSPACE): our list layout, operands "
                         "quantized by jg_quantize_nvfp4 (block scales swizzled 128x4), "
                         "against the --fp8 peer (torch._scaled_grouped_mm, FP8 "
                         "row-wise); checked against FP32 products of the dequantized "
                         "operands")
    ap.add_argument("--check-abi", action="store_true",
                    help="only compare the ctypes mirrors and JG_ constants with "
                         "jitgemm.h through a C program ($CC, else cc; headers from "
                         "include/ and the --lib folder's include/), and the NVFP4 "
                         "check's scale offsets with --lib's jg_nvfp4_sf_offset; needs "
                         "no GPU and no torch")
    ap.add_argument("--random", type=bounded(int, 1, random_draw.COUNT_MAX), metavar="N",
                    help="instead of the grouped cases, N dense problems drawn as "
                         "jitgemm-bench --random draws them (the same seed, the same "
                         "problems), ours against torch.mm / torch._scaled_mm")
    ap.add_argument("--seed", type=seed_arg, help="--random's seed (default: a fresh one)")
    ap.add_argument("--random-generic", type=bounded(float, 0, 1), metavar="F",
                    help="the fraction of rows also timed through an M-generic plan "
                         "(default 0.25)")
    ap.add_argument("--generic-buckets", choices=["pow2", "half"],
                    help="the M-generic plans' hints: M rounded up to a power of two or "
                         "1.5 times one (half, default: as jitgemm.m_hint) or to a power "
                         "of two (pow2)")
    ap.add_argument("--dims", help="the model widths (default bench/model-dims.json)")
    ap.add_argument("--emit-shapes", metavar="FILE",
                    help="only write the drawn problems as spec lines (no torch, no GPU)")
    ap.add_argument("--dtype", choices=sorted(RANDOM_TYPES),
                    help="--random's inputs (default bf16)")
    ap.add_argument("--scale", choices=sorted(SCALE_MODES),
                    help="--random --dtype fp8's scales (default tensor)")
    args = ap.parse_args()
    given = [name for name in (RANDOM_ONLY if not args.random else GROUPED_ONLY)
             if getattr(args, name)]
    if given:
        ap.error(", ".join("--" + name.replace("_", "-") for name in given) +
                 (": only with --random N" if not args.random else
                  ": not with --random (it draws its own problems)"))
    if args.random and args.reps < 20:
        ap.error(f"--reps must be at least 20 with --random, not {args.reps}")
    defaults = {"spec": os.path.join(REPO, "bench", "shapes.jsonl"), "only": "",
                "random_generic": 0.25, "generic_buckets": "half",
                "dims": os.path.join(REPO, "bench", "model-dims.json"),
                "dtype": "bf16", "scale": "tensor"}
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    return args


def pick_timer(choice):
    if choice == "events":
        return ("CUDA events, alternating, read-only L2 flush", time_events)
    timer = triton_timer()
    if timer is None:
        sys.exit("triton.testing.do_bench with return_mode is not available")
    return ("triton do_bench", timer)


# ---- --random: dense problems drawn afresh (bench/random_draw.py) -----------

# --dtype: our A and B type, torch's, our D type (bf16 for fp8, as jitgemm-bench)
RANDOM_TYPES = {"bf16": (JG_BF16, "bfloat16", JG_BF16), "fp16": (JG_FP16, "float16", JG_FP16),
                "fp8": (JG_E4M3, "float8_e4m3fn", JG_BF16)}
SCALE_MODES = {"tensor": JG_SCALE_TENSOR, "row": JG_SCALE_ROW, "block": JG_SCALE_BLOCK}
FP64_CHUNK = 4096  # rows of B dequantized to FP64 at a time by the spot check
WORST_ROWS = 10


def dense_problem(p, dtype, scale, generic):
    """The jg_gemm_problem of a drawn problem; an M-generic plan is planned for
    its hint (M rounded up to its bucket's top, --generic-buckets)."""
    ab, _, d = RANDOM_TYPES[dtype]
    return GemmProblem(flags=JG_GEMM_M_GENERIC if generic else 0, a_type=ab, b_type=ab,
                       c_type=JG_DTYPE_NONE, d_type=d,
                       m=p["generic_hint"] if generic else p["m"], n=p["n"], k=p["k"],
                       scale=SCALE_MODES[scale] if dtype == "fp8" else 0)


def plan_random(jg, problems, dtype, scale):
    """Every problem's plan and the M-generic ones, compiled on parallel
    threads (ctypes lets go of the GIL during jg_gemm_plan): {(i, generic):
    (plan, PlanInfo) or (None, message)}. A failed plan is planned again on
    this thread for its message (the context's last error, which the threads
    share)."""
    jobs = [(i, False) for i in range(len(problems))]
    jobs += [(i, True) for i, p in enumerate(problems) if p["generic_hint"]]

    def plan(job):
        prob = dense_problem(problems[job[0]], dtype, scale, job[1])
        out = ctypes.c_void_p()
        return jg.lib.jg_gemm_plan(jg.ctx, ctypes.byref(prob), ctypes.byref(out)), out

    threads = max(1, min(16, os.cpu_count() or 1))
    t0 = time.monotonic()
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        done = list(pool.map(plan, jobs))
    plans = {}
    for job, (status, handle) in zip(jobs, done):
        if status != JG_OK:
            status, handle = plan(job)
        info = PlanInfo()
        if status == JG_OK and jg.lib.jg_plan_get_info(handle, ctypes.byref(info)) == JG_OK:
            plans[job] = (handle, info)
        else:
            plans[job] = (None, jg.lib.jg_context_last_error(jg.ctx).decode(errors="replace"))
    print(f"plans: {len(jobs)} ({len(problems)} rows, {len(jobs) - len(problems)} M-generic) "
          f"in {time.monotonic() - t0:.1f} s on {threads} threads")
    return plans


def random_e4m3(n, gen):
    """n random e4m3 codes as jitgemm-bench makes them: random sign and
    mantissa, exponent field 5..9 (|x| in [0.25, 7.5], never zero or NaN)."""
    bits = torch.randint(0, 256, (n,), device="cuda", dtype=torch.uint8, generator=gen)
    exp = torch.randint(5, 10, (n,), device="cuda", dtype=torch.uint8, generator=gen)
    return ((bits & 0x87) | (exp << 3)).view(torch.float8_e4m3fn)


def random_pools(problems, dtype, gen):
    """A and B of the largest problem, random normal (16-bit) or e4m3 codes;
    each row takes the first M*K and N*K elements."""
    na = max(p["m"] * p["k"] for p in problems)
    nb = max(p["n"] * p["k"] for p in problems)
    if dtype == "fp8":
        return random_e4m3(na, gen), random_e4m3(nb, gen)
    t = getattr(torch, RANDOM_TYPES[dtype][1])
    return (torch.randn(na, device="cuda", dtype=t, generator=gen),
            torch.randn(nb, device="cuda", dtype=t, generator=gen))


def random_scales(p, scale, gen):
    """Our a_scale and b_scale (FP32, uniform in [0.5, 1.5)) in the library's
    shapes: one each, [M] and [N], or [M][ceil(K/128)] and
    [ceil(N/128)][ceil(K/128)]."""
    kb = -(-p["k"] // 128)
    shapes = {"tensor": ((), ()), "row": ((p["m"],), (p["n"],)),
              "block": ((p["m"], kb), (-(-p["n"] // 128), kb))}[scale]
    return [torch.rand(s, device="cuda", generator=gen) + 0.5 for s in shapes]


def scale_factor(s, scale, rows, k, block_rows):
    """The FP64 factors of the given rows (an index tensor) of an fp8 operand
    with scales s: block_rows 1 for A (a scale per row per 128 of K), 128 for
    B (one per 128x128 block)."""
    s = s.double()
    if scale == "tensor":
        return s
    if scale == "row":
        return s[rows, None]
    return s[rows // block_rows].repeat_interleave(128, dim=1)[:, :k]


def fp64_rows(a, b, sa, sb, scale, d):
    """max |D - ref| / max |ref| over rows 0, M/2 and M-1 of D, ref an FP64
    product of the same inputs with the scales applied as the library defines
    them (sa None: 16-bit inputs); inf when D has a NaN."""
    m, n, k = a.shape[0], b.shape[0], a.shape[1]
    rows = torch.tensor(sorted({0, m // 2, m - 1}), device="cuda")
    # fp8 rows gathered as bytes: indexing kernels need not cover float8 types
    ar = (a.view(torch.uint8)[rows].view(a.dtype) if sa is not None else a[rows]).float().double()
    if sa is not None:
        ar = ar * scale_factor(sa, scale, rows, k, 1)
    ref = torch.empty(len(rows), n, dtype=torch.float64, device="cuda")
    for n0 in range(0, n, FP64_CHUNK):
        bd = b[n0:n0 + FP64_CHUNK].float().double()
        if sb is not None:
            bd = bd * scale_factor(sb, scale, torch.arange(n0, n0 + len(bd), device="cuda"), k,
                                   128)
        ref[:, n0:n0 + len(bd)] = ar @ bd.t()
    return max_rel_diff(d[rows], ref)


def blockwise_scaled_mm():
    """torch's DeepSeek-style block-scaled FP8 GEMM (A 1x128, B 128x128
    blocks, cuBLAS 12.9+, sm_90): (name, fn(a, bt, sa, sb)). The explicit
    torch.nn.functional.scaled_mm where this torch has it, else
    torch._scaled_mm, which tells the recipes from the scales' shapes."""
    fn = getattr(torch.nn.functional, "scaled_mm", None)
    kinds = getattr(torch.nn.functional, "ScalingType", None)
    recipes = [getattr(kinds, name, None) for name in
               ("BlockWise1x128", "Blockwise_1x128", "BlockWise128x128", "Blockwise_128x128")]
    one = recipes[0] if recipes[0] is not None else recipes[1]
    block = recipes[2] if recipes[2] is not None else recipes[3]
    if fn is not None and one is not None and block is not None:
        return ("torch.nn.functional.scaled_mm (1x128, 128x128 blocks)",
                lambda a, bt, sa, sb: fn(a, bt, scale_a=sa, scale_recipe_a=one, scale_b=sb,
                                         scale_recipe_b=block, output_dtype=torch.bfloat16))
    return ("torch._scaled_mm (1x128, 128x128 blocks)",
            lambda a, bt, sa, sb: torch._scaled_mm(a, bt, scale_a=sa, scale_b=sb,
                                                   out_dtype=torch.bfloat16))


def torch_dense(a, b, sa, sb, scale):
    """(name, fn) of torch's GEMM for a row: torch.mm for 16-bit inputs, else
    torch._scaled_mm with the row's scales (no fast accumulation, as ours),
    block scales in the layouts torch's blockwise GEMM reads: A's [M][kb]
    outer-dimension-major, B's [ceil(N/128)][kb] padded to kb rounded up to
    4 and transposed."""
    bt = b.t()
    if sa is None:
        d = torch.empty(a.shape[0], b.shape[0], dtype=a.dtype, device="cuda")
        return "torch.mm", lambda: torch.mm(a, bt, out=d)
    if scale != "block":
        sa_, sb_ = (sa, sb) if scale == "tensor" else (sa.view(-1, 1), sb.view(1, -1))
        return (f"torch._scaled_mm ({scale}-wise)",
                lambda: torch._scaled_mm(a, bt, scale_a=sa_, scale_b=sb_,
                                         out_dtype=torch.bfloat16))
    name, fn = blockwise_scaled_mm()
    kb = sa.shape[1]
    sa_ = sa.t().contiguous().t()
    sb_ = torch.zeros(sb.shape[0], -(-kb // 4) * 4, device="cuda")
    sb_[:, :kb] = sb
    sb_ = sb_.t()
    return name, lambda: fn(a, bt, sa_, sb_)


class DenseLaunch:
    """jg_gemm_run of a plan over fixed arguments (device addresses), built
    once, so a timed call is the ctypes call and the launch."""

    def __init__(self, jg, plan, what, **fields):
        self.args = GemmArgs(alpha=1.0, beta=0.0, **fields)
        self.jg, self.plan, self.what = jg, plan, what

    def __call__(self):
        self.jg.check(self.jg.lib.jg_gemm_run(self.plan, ctypes.byref(self.args),
                                              current_stream()), self.what)


def run_random_row(jg, i, p, plans, pools, args, timer, gen, notes):
    """One drawn problem: ours (and its M-generic plan where drawn) against
    torch; each of our D's checked on sampled rows against FP64 and whole
    against torch's, then all timed in alternation."""
    m, n, k = p["m"], p["n"], p["k"]
    fp8 = args.dtype == "fp8"
    row = {"name": f"r{i + 1}", "m": m, "n": n, "k": k, "dtype": args.dtype,
           "scale": args.scale if fp8 else None, "generic_hint_m": p["generic_hint"] or None,
           "torch_impl": None, "torch_us": None, "jitgemm_us": None, "generic_us": None,
           "ratio": None, "kernel": None, "generic_kernel": None, "fp64_rel_diff": None,
           "torch_rel_diff": None, "generic_fp64_rel_diff": None, "match": False,
           "generic_match": None, "error": None}
    plan, info = plans[(i, False)]
    gplan, ginfo = plans.get((i, True), (None, None))
    if plan is None or (p["generic_hint"] and gplan is None):
        row["error"] = f"plan: {info}" if plan is None else f"M-generic plan: {ginfo}"
        return row
    a, b = pools[0][:m * k].view(m, k), pools[1][:n * k].view(n, k)
    sa, sb = random_scales(p, args.scale, gen) if fp8 else (None, None)
    out = torch.bfloat16 if RANDOM_TYPES[args.dtype][2] == JG_BF16 else torch.float16
    d = torch.full((m, n), float("nan"), dtype=out, device="cuda")
    fields = {"a": a.data_ptr(), "b": b.data_ptr()}
    if fp8:
        fields.update(a_scale=sa.data_ptr(), b_scale=sb.data_ptr())
    workspace, ws_args = jg.workspace(plan)  # the tensors held until the row's launches are done
    fns = [DenseLaunch(jg, plan, "jg_gemm_run", d=d.data_ptr(), **fields, **ws_args)]
    row["kernel"] = info.kernel_name.decode()
    dg = None
    if gplan is not None:
        dg = torch.full_like(d, float("nan"))
        gworkspace, gws_args = jg.workspace(gplan)
        fns.append(DenseLaunch(jg, gplan, "jg_gemm_run (M-generic)", d=dg.data_ptr(), m=m,
                               **gws_args, **fields))
        row["generic_kernel"] = ginfo.kernel_name.decode()
    try:
        for fn in fns:
            fn()
    except RuntimeError as e:  # jg_gemm_run's status and message
        row["error"] = str(e)
        return row
    d_torch = None
    try:
        impl, theirs = torch_dense(a, b, sa, sb, args.scale)
        d_torch = theirs()
        fns.append(theirs)
        row["torch_impl"] = impl
    except (RuntimeError, NotImplementedError, TypeError, ValueError) as e:
        note = (f"torch cannot run {args.dtype}{' ' + args.scale + ' scales' if fp8 else ''} "
                f"here ({type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}): such "
                f"rows have no torch time")
        if note not in notes:
            notes.add(note)
            print(note)
    torch.cuda.synchronize()
    row["fp64_rel_diff"] = fp64_rows(a, b, sa, sb, args.scale, d)
    row["match"] = row["fp64_rel_diff"] <= TOLERANCE
    if d_torch is not None:
        row["torch_rel_diff"] = max_rel_diff(d, d_torch)
        row["match"] = row["match"] and row["torch_rel_diff"] <= TOLERANCE
    if dg is not None:
        row["generic_fp64_rel_diff"] = fp64_rows(a, b, sa, sb, args.scale, dg)
        row["generic_match"] = row["generic_fp64_rel_diff"] <= TOLERANCE
    times = timer(fns, args.reps)
    row["jitgemm_us"] = times[0]
    if dg is not None:
        row["generic_us"] = times[1]
    if d_torch is not None:
        row["torch_us"] = times[-1]
        row["ratio"] = times[-1] / times[0]
    return row


def print_random_row(r):
    def num(v, width, prec=1):
        return f"{v:{width}.{prec}f}" if v is not None else f"{'-':>{width}}"

    line = (f"{r['name']:<7} {r['m']:6d} {r['n']:6d} {r['k']:6d} {num(r['torch_us'], 9)} "
            f"{num(r['jitgemm_us'], 9)} {num(r['generic_us'], 9)} {num(r['ratio'], 6, 3)}  "
            f"{r['kernel'] or '-'}")
    if r["error"]:
        line += f"  ERROR {r['error']}"
    elif not r["match"] or r["generic_match"] is False:
        line += (f"  MISMATCH (FP64 rows {r['fp64_rel_diff']:.2e}, torch {r['torch_rel_diff']}, "
                 f"M-generic {r['generic_fp64_rel_diff']})")
    print(line, flush=True)


def random_summary(rows, half=False):
    """torch us / ours us over the rows that ran, matched and have a torch
    time: geomean, 10th percentile, minimum, by bands of M, the ten worst;
    and the M-generic plans against the baked ones. Printed and returned
    (the JSON's "summary", with jitgemm-bench's fields)."""
    counted = sorted((r for r in rows if not r["error"] and r["match"] and r["ratio"]),
                     key=lambda r: r["ratio"])
    st = random_draw.ratio_stats([r["ratio"] for r in counted])
    print(f"\nrandom summary torch us / ours us (above 1: ours faster) over {st['count']} of "
          f"{len(rows)} rows")
    if st["count"]:
        print(f"  ratio        geomean {st['geomean']:.3f}, 10th percentile {st['p10']:.3f}, "
              f"min {st['min']:.3f}")
    bands = []
    for lo, hi in random_draw.M_BANDS:
        b = random_draw.ratio_stats([r["ratio"] for r in counted if lo <= r["m"] <= hi])
        bands.append({**b, "m_min": lo, "m_max": hi})
    print("  by M         " + "   ".join(
        f"{b['m_min']}-{b['m_max']}: " + (f"{b['geomean']:.3f} ({b['count']})" if b["count"]
                                           else "- (0)") for b in bands))
    worst = [{key: r[key] for key in ("name", "m", "n", "k")} |
             {"ours_us": r["jitgemm_us"], "peer_us": r["torch_us"], "ratio": r["ratio"]}
             for r in counted[:WORST_ROWS]]
    print(f"  the {len(worst)} worst rows\n  {'name':<8} {'M':>6} {'N':>6} {'K':>6} "
          f"{'ours us':>10} {'torch us':>10} {'ratio':>7}")
    for w in worst:
        print(f"  {w['name']:<8} {w['m']:6d} {w['n']:6d} {w['k']:6d} {w['ours_us']:10.1f} "
              f"{w['peer_us']:10.1f} {w['ratio']:7.3f}")
    timed = [r for r in rows if not r["error"] and r["match"] and r["generic_match"]]
    baked = random_draw.ratio_stats([r["jitgemm_us"] / r["generic_us"] for r in timed])
    peer = random_draw.ratio_stats([r["torch_us"] / r["generic_us"] for r in timed
                                    if r["torch_us"]])
    if baked["count"]:
        print(f"  M-generic    {baked['count']} rows, planned for M rounded up to "
              f"{random_draw.buckets_text(half)}: "
              f"ours us / generic us geomean {baked['geomean']:.3f}, 10th percentile "
              f"{baked['p10']:.3f}, min {baked['min']:.3f} (below 1: slower than the plan for "
              f"the exact M); torch us / generic us geomean "
              f"{peer['geomean'] if peer['count'] else float('nan'):.3f} over {peer['count']}")
    return {"rows": len(rows), **st, "by_m": bands, "worst": worst,
            "generic": {"baked_over_generic": baked, "peer_over_generic": peer}}


def print_draw(args, seed, dims, problems):
    """The first lines: what was drawn, and the seed that draws it again."""
    generic = sum(1 for p in problems if p["generic_hint"])
    print(f"random: {args.random} problems, seed {seed} (--seed {seed} draws them again); "
          f"M log-uniform in 1..{random_draw.M_MAX}; N, K from {args.dims} ({len(dims)} widths) "
          f"{100 * random_draw.FROM_LIST:.0f}% of the time, else multiples of "
          f"{random_draw.DIM_STEP} in {random_draw.DIM_MIN}..{random_draw.DIM_MAX}; "
          f"M*K + N*K + M*N <= 2^30 elements; {generic} also through an M-generic plan",
          flush=True)


def open_on_gpu(args, header=""):
    """libjitgemm (args.lib) on torch's primary context and the timer of
    args.timer, after a line naming the device, the versions and the timer
    (then header): (jg, timer name, timer), or None without a CUDA GPU."""
    if not torch.cuda.is_available():
        print("no CUDA GPU: nothing to time")
        return None
    torch.cuda.init()
    torch.zeros(1, device="cuda")  # the primary context now exists and is current
    jg = JitGemm(args.lib)
    jg.create_context()
    timer_name, timer = pick_timer(args.timer)
    print(f"{torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"libjitgemm {jg.lib.jg_version().decode()}, timer: {timer_name}{header}")
    return jg, timer_name, timer


def run_meta(timer_name, **extra):
    """The "meta" object of a --json file: device, versions, timer, commit."""
    return {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
            "timer": timer_name, "commit": os.environ.get("JITGEMM_COMMIT", "unknown"),
            **extra}


def run_random(args):
    """--random N: the draw (or, with --emit-shapes, only that), then every
    row against torch; the exit status."""
    try:
        dims = random_draw.load_dims(args.dims)
    except (OSError, ValueError) as e:
        sys.exit(f"peer_torch.py: {e}")
    seed = args.seed if args.seed is not None else random_draw.fresh_seed()
    half = args.generic_buckets == "half"
    problems = random_draw.draw(seed, dims, args.random, args.random_generic, half)
    print_draw(args, seed, dims, problems)
    if args.emit_shapes:
        random_draw.emit_shapes(args.emit_shapes, args.random, seed, args.random_generic,
                                problems, half)
        print(f"wrote {args.random} problems to {args.emit_shapes}")
        return 0
    if torch is None:
        sys.exit("PyTorch is needed (import torch failed); --emit-shapes runs without it")
    opened = open_on_gpu(args, f", {args.dtype}"
                         f"{' ' + args.scale + ' scales' if args.dtype == 'fp8' else ''}")
    if opened is None:
        return 0
    jg, timer_name, timer = opened
    try:
        plans = plan_random(jg, problems, args.dtype, args.scale)
        gen = torch.Generator(device="cuda").manual_seed(seed)
        pools = random_pools(problems, args.dtype, gen)
        print(f"{'name':<7} {'M':>6} {'N':>6} {'K':>6} {'torch us':>9} {'ours us':>9} "
              f"{'gen us':>9} {'ratio':>6}  kernel")
        rows, notes = [], set()
        for i, p in enumerate(problems):
            rows.append(run_random_row(jg, i, p, plans, pools, args, timer, gen, notes))
            print_random_row(rows[-1])
        summary = random_summary(rows, half)
    finally:
        torch.cuda.synchronize()
        jg.destroy()
    if args.json:
        meta = run_meta(timer_name, reps=args.reps)
        drawn = {"count": args.random, "seed": seed, "dims_file": args.dims,
                 "dtype": args.dtype, "scale": args.scale if args.dtype == "fp8" else None,
                 "m_max": random_draw.M_MAX, "dim_min": random_draw.DIM_MIN,
                 "dim_max": random_draw.DIM_MAX, "dim_step": random_draw.DIM_STEP,
                 "from_list": random_draw.FROM_LIST, "max_elements": random_draw.MAX_ELEMENTS,
                 "generic_fraction": args.random_generic,
                 "generic_buckets": args.generic_buckets}
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "random": drawn, "rows": rows, "summary": summary}, f,
                      indent=1)
    bad = [r for r in rows if r["error"] or not r["match"] or r["generic_match"] is False]
    if bad:
        print(f"{len(bad)} row(s) failed or mismatched (tolerance {TOLERANCE:.0e})")
    return 1 if bad else 0


# ---- --check-abi -------------------------------------------------------------

def abi_program():
    """C source printing, for every mirror, its struct's size and each field's
    offset and size, and every JG_ constant of the mirrors, one "label value"
    a line; and what ctypes says for the same labels. A field the header lacks
    fails the compile; one the mirror lacks moves a later offset or the size."""
    expected, prints = {}, []

    def add(label, value, c_expr, fmt="%zu"):
        expected[label] = value
        prints.append(f'    printf("{label} {fmt}\\n", {c_expr});')

    for cname, mirror in MIRRORS.items():
        add(f"sizeof({cname})", ctypes.sizeof(mirror), f"sizeof({cname})")
        for fname, _ in mirror._fields_:
            field = getattr(mirror, fname)
            add(f"{cname}.{fname}.offset", field.offset, f"offsetof({cname}, {fname})")
            add(f"{cname}.{fname}.size", field.size, f"sizeof((({cname} *)0)->{fname})")
    for name, value in sorted(CONSTANTS.items()):
        add(name, value, f"(long long){name}", "%lld")
    source = ("#include <stddef.h>\n#include <stdio.h>\n#include \"jitgemm/jitgemm.h\"\n"
              "int main(void)\n{\n" + "\n".join(prints) + "\n    return 0;\n}\n")
    return source, expected


def check_sf_offsets(jg):
    """sf_offset_swizzled against the library's jg_nvfp4_sf_offset, every (r, kb)
    of a few shapes (partial 128-row and 4-scale tiles included); mismatches."""
    bad = []
    for rows in (1, 33, 130, 300):
        for k in (16, 48, 80, 2048):
            for r in range(rows):
                for kb in range(k // 16):
                    want = jg.lib.jg_nvfp4_sf_offset(JG_SF_SWIZZLED_128X4, rows, k, r, kb)
                    got = sf_offset_swizzled(r, kb, k // 16)
                    if got != want:
                        bad.append(f"sf offset rows={rows} k={k} ({r}, {kb}): "
                                   f"{got}, library {want}")
    return bad


def check_abi(lib_path):
    """--check-abi: 0 when the mirrors, constants and scale offsets match, else 1."""
    source, expected = abi_program()
    cc = shlex.split(os.environ.get("CC", "cc"))
    includes = [os.path.join(REPO, "include"),  # jitgemm.h
                os.path.join(os.path.dirname(os.path.abspath(lib_path)), "include")]  # version.h
    with tempfile.TemporaryDirectory() as tmp:
        src, exe = os.path.join(tmp, "abi.c"), os.path.join(tmp, "abi")
        with open(src, "w") as f:
            f.write(source)
        build = subprocess.run(cc + ["-std=c11"] + [f"-I{d}" for d in includes]
                               + [src, "-o", exe], capture_output=True, text=True)
        if build.returncode != 0:
            print(f"ABI: the C check does not compile:\n{build.stderr}")
            return 1
        out = subprocess.run([exe], capture_output=True, text=True, check=True).stdout
    got = dict(line.rsplit(" ", 1) for line in out.splitlines())
    bad = [f"{label}: ctypes {value}, C {got.get(label)}"
           for label, value in expected.items() if got.get(label) != str(value)]
    bad += check_sf_offsets(JitGemm(lib_path))
    for line in bad:
        print("ABI MISMATCH", line)
    print(f"ABI: {len(MIRRORS)} structs, {len(expected)} sizes, offsets and constants "
          f"against jitgemm.h, swizzled scale offsets against {os.path.basename(lib_path)}: "
          + ("match" if not bad else f"{len(bad)} mismatches"))
    return 1 if bad else 0


def main():
    args = parse_args()
    if args.check_abi:
        return check_abi(args.lib)
    if args.random:
        return run_random(args)
    if torch is None:
        sys.exit("PyTorch is needed (import torch failed); only --check-abi runs without it")
    cases = read_cases(args.spec, [s for s in args.only.split(",") if s])
    opened = open_on_gpu(args)
    if opened is None:
        return 0
    jg, timer_name, timer = opened
    print(describe_torch_op())
    try:
        results = [run_case(jg, c, timer, args.reps) for c in cases]
        if args.fp8:
            results += [run_case_fp8(jg, c, timer, args.reps) for c in cases]
        if args.nvfp4:
            results += [r for c in cases for r in run_case_nvfp4(jg, c, timer, args.reps)]
    finally:
        torch.cuda.synchronize()
        jg.destroy()
    print_table(results)
    if args.json:
        meta = run_meta(timer_name)
        with open(args.json, "w") as f:
            json.dump({"meta": meta, "rows": results}, f, indent=1)
    return 0 if all(r["match"] for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
