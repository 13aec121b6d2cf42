#!/usr/bin/env python3
"""Host cost of the Python package's calls against the C API's (issue 29's
target: one eager call at most 10 us above jg_gemm_run's), and GPU time of
the same GEMM launched by both inside CUDA graphs (target: equal within 2%).

    PYTHONPATH=python JITGEMM_LIBRARY=build/libjitgemm.so python3 bench/python_overhead.py

Host time: N calls back to back (N below the launch queue's depth, on a
decode shape whose kernel takes a few microseconds, so the host never waits
for the GPU), wall time / N, median of R rounds; jg_gemm_run, jitgemm.linear
and linear(out=) take their rounds in turn, and "(above)" is the median over
rounds of a call's time above jg_gemm_run's in the same round. Rows:
  jg_gemm_run        the plan's launch through ctypes, arguments prepared once
                     (the floor a Python caller can reach; a C caller saves
                     the ctypes call, ~0.3-0.5 us)
  jitgemm.linear     the public function, eager (checks, output allocation,
                     plan lookup, arguments, launch: jg_gemm_run_in_context,
                     which checks the current CUDA context in C)
  linear(out=)       the same with a preallocated output (out=): no
                     allocation; out's overlap with x and w tested instead
  torch.ops.jitgemm  the same op through PyTorch's dispatcher (what compiled
                     code and tensor subclasses call)
  F.linear           PyTorch's own (cuBLAS), for scale
GPU time: one CUDA graph each of 20 launches of jitgemm.linear and of
jg_gemm_run (same plan, same tensors), replayed in alternation, CUDA
events, median.
Then torch.empty's own host time (for scale: every eager call without out=
allocates its output, by new_empty of a tensor of no elements),
and the host time of grouped_mm and scaled_grouped_mm against
torch._grouped_mm and torch._scaled_grouped_mm on the MoE example's gate/up
GEMM (examples/python/moe_layer.py), 50 calls a round (the kernels are long:
fewer calls keep the launch queue from filling).

    ... python3 bench/python_overhead.py --cpu-stub

measures the Python side alone, on any machine (no GPU): host tensors, the
device check lifted, plans made by an offline context, and the foreign calls
of a launch answered by stubs of the same signatures (tests/python/
stub_cuda.c, compiled here): jg_gemm_run_in_context's, or with a library
older than 0.9, cuCtxGetCurrent's and jg_gemm_run's. Every other step of
an eager call (checks memo, pointers, alignment, output allocation, argument
packing) runs as it does on a GPU. torch's raw-stream getter, which needs a GPU,
is stood in for by a builtin call. The floor row calls the stub launch as the
GPU mode's jg_gemm_run row calls the real one; the grouped rows likewise
against a stub jg_grouped_run. Host allocation is not the
CUDA caching allocator's, so the figures rank changes to the Python path;
they are not the GPU host's.
"""
import ctypes
import os
import statistics
import sys
import tempfile
import time

import torch
import torch.nn.functional as F

import jitgemm
from jitgemm import _capi as C
from jitgemm import _checks as K
from jitgemm import _ops as O
from jitgemm._device import device


def host_us(fn, n=200, rounds=30):
    return statistics.median(host_rounds([fn], n, rounds)[0])


def host_rounds(fns, n=200, rounds=30):
    """Host us a call of each fn: per round, n calls of each in turn (the order
    reversed every other round), so that a host's slow spells weigh on all
    alike; returns each fn's list of rounds (median: statistics.median)."""
    for fn in fns:
        fn()
    torch.cuda.synchronize()
    times = [[] for _ in fns]
    for r in range(rounds):
        order = range(len(fns)) if r % 2 == 0 else reversed(range(len(fns)))
        for i in order:
            t0 = time.perf_counter()
            for _ in range(n):
                fns[i]()
            times[i].append((time.perf_counter() - t0) / n * 1e6)
            torch.cuda.synchronize()
    return times


def above_us(rounds, floor):
    """The median over rounds of one fn's time above the floor's, in the same round."""
    return statistics.median(a - b for a, b in zip(rounds, floor))


def graphs_us(fns, launches=20, reps=50):
    """GPU us per launch of each fn, each captured `launches` times in its own
    CUDA graph; the graphs' replays alternate (one of each per round), so
    that clock and power drift over the run weigh on all of them alike
    (timed one after the other, the second graph of the 4096^3 row had run
    3-4% faster than the first)."""
    graphs = []
    for fn in fns:
        fn()
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            for _ in range(launches):
                fn()
        graphs.append(g)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = [[] for _ in graphs]
    for r in range(reps):
        order = range(len(graphs)) if r % 2 == 0 else reversed(range(len(graphs)))
        for i in order:
            start.record()
            graphs[i].replay()
            end.record()
            end.synchronize()
            times[i].append(start.elapsed_time(end) * 1e3 / launches)
    return [statistics.median(t) for t in times]


def raw_launcher(x, w, out):
    """jg_gemm_run of jitgemm.linear's own plan, arguments built once."""
    g = K.gemm("linear", x, w, None, None, K.HALF, None)
    dev = device(x.device.index)
    plan = dev.gemm_plan(O.gemm_key(g, C.JG_BF16, C.JG_BF16, False, C.JG_SCALE_NONE))
    args = C.GemmArgs(x.data_ptr(), w.data_ptr(), None, out.data_ptr(), 1.0, 0.0, g.m, None,
                      None, None, None)
    run, ref, index = C.lib.jg_gemm_run, ctypes.byref(args), x.device.index
    stream = torch._C._cuda_getCurrentRawStream  # an int; the capture stream in a capture

    def launch():
        if run(plan, ref, stream(index)) != C.JG_OK:
            raise jitgemm.JitGemmError("jg_gemm_run failed")
    return launch


# ---- --cpu-stub ---------------------------------------------------------------------

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests",
                                "python"))


def host_ns(fn, n=2000, rounds=40):
    """(min, median) over rounds of n calls, ns a call, in the thread's CPU time
    (what a shared, loaded machine repeats best: time spent descheduled is
    not counted; the stubs never wait)."""
    fn()
    times = []
    for _ in range(rounds):
        t0 = time.thread_time_ns()
        for _ in range(n):
            fn()
        times.append((time.thread_time_ns() - t0) / n)
    return min(times), statistics.median(times)


def cpu_stub():
    with tempfile.TemporaryDirectory() as tmp:
        os.environ.setdefault("JITGEMM_CACHE_DIR", os.path.join(tmp, "cache"))
        from stub_cuda import stub_device
        dev, stub = stub_device(tmp)
        run = C.lib.jg_gemm_run  # the stub's, typed as the library's
        print(f"--cpu-stub: Python path only, stubbed launch; torch {torch.__version__}; "
              f"jitgemm {jitgemm.__version__}; us of thread CPU time a call, min / median "
              f"of 40 x 2000")
        print(f"{'M x N x K':>18}  {'stub launch':>13}  {'jitgemm.linear':>14}  {'(above)':>13}"
              f"  {'linear(out=)':>13}  {'(above)':>13}  {'torch.ops':>13}  {'torch.empty':>13}")
        for m, n, k in ((1, 2048, 2048), (64, 4096, 4096)):
            x, w = torch.randn(m, k).bfloat16(), torch.randn(n, k).bfloat16()
            jitgemm.linear(x, w)  # plans
            g = K.gemm("linear", x, w, None, None, K.HALF, None)
            plan = dev.gemm_plan(O.gemm_key(g, C.JG_BF16, C.JG_BF16, False, C.JG_SCALE_NONE))
            out = torch.empty(m, n, dtype=torch.bfloat16)
            args = C.GemmArgs(x.data_ptr(), w.data_ptr(), None, out.data_ptr(), 1.0, 0.0, g.m,
                              None, None, None, None)
            ref, stream = ctypes.byref(args), dev.stream

            def floor():
                if run(plan, ref, stream()) != C.JG_OK:
                    raise jitgemm.JitGemmError("stub launch failed")
            t_raw = host_ns(floor)
            t_py = host_ns(lambda: jitgemm.linear(x, w))
            t_out = host_ns(lambda: jitgemm.linear(x, w, out=out))
            t_op = host_ns(lambda: torch.ops.jitgemm.linear(x, w))
            t_empty = host_ns(lambda: torch.empty(m, n, dtype=torch.bfloat16, device=x.device))
            us = [f"{a / 1e3:5.2f} / {b / 1e3:5.2f}" for a, b in
                  (t_raw, t_py, (t_py[0] - t_raw[0], t_py[1] - t_raw[1]), t_out,
                   (t_out[0] - t_raw[0], t_out[1] - t_raw[1]), t_op, t_empty)]
            print(f"{m:>6}x{n:>5}x{k:>5}  " + "  ".join(f"{u:>13}" for u in us))
        cpu_stub_grouped(dev)
    return 0


def moe_operands(tokens, device=None):
    """The MoE example's gate/up GEMM (DeepSeek-V2-Lite: 64 experts, top-6,
    H 2048, 2I 2816): a [6 tokens, H], b [E, H, 2I] (the transposed view of
    [E, 2I, H]), torch's E end offsets; FP8 copies with row scales. b is
    empty (never read by a stub)."""
    e, h, n, m = 64, 2048, 2816, 6 * tokens
    a = torch.randn(m, h, device=device).bfloat16()
    b = torch.empty(e, n, h, dtype=torch.bfloat16, device=device).transpose(1, 2)
    ends = torch.linspace(0, m, e + 1, device=device)[1:].round().to(torch.int32)
    fp8 = (a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn) if device else
           torch.empty(e, n, h, dtype=torch.float8_e4m3fn).transpose(1, 2),
           torch.ones(m, device=device), torch.ones(e, n, device=device))
    return a, b, ends, fp8


def cpu_stub_grouped(dev):
    """grouped_mm and scaled_grouped_mm on the MoE example's shapes, against
    the stub's jg_grouped_run with arguments built once."""
    run = C.lib.jg_grouped_run  # the stub's
    print(f"\n{'grouped, tokens':>18}  {'stub launch':>13}  {'grouped_mm':>14}  {'(above)':>13}"
          f"  {'scaled_grouped':>14}  {'(above)':>13}")
    for tokens in (16, 512):
        a, b, ends, (qa, qb, sa, sb) = moe_operands(tokens)
        out = jitgemm.grouped_mm(a, b, ends)  # plans
        jitgemm.scaled_grouped_mm(qa, qb, sa, sb, ends)
        plan = next(e.plan for k, e in O._MEMO.items() if k[0] == "grouped_mm")
        one = lambda t: (ctypes.c_void_p * 1)(t.data_ptr())  # noqa: E731
        offs = torch.nn.functional.pad(ends, (1, 0))
        arrays = one(a), one(b), one(out)
        args = C.GroupedArgs(a=arrays[0], b=arrays[1], d=arrays[2], alpha=1.0, beta=0.0,
                             rows=offs.data_ptr())
        ref, stream = ctypes.byref(args), dev.stream

        def floor():
            if run(plan, ref, stream()) != C.JG_OK:
                raise jitgemm.JitGemmError("stub launch failed")
        t_raw = host_ns(floor, n=500, rounds=20)
        t_g = host_ns(lambda: jitgemm.grouped_mm(a, b, ends), n=500, rounds=20)
        t_s = host_ns(lambda: jitgemm.scaled_grouped_mm(qa, qb, sa, sb, ends), n=500, rounds=20)
        us = [f"{x / 1e3:5.2f} / {y / 1e3:5.2f}" for x, y in
              (t_raw, t_g, (t_g[0] - t_raw[0], t_g[1] - t_raw[1]), t_s,
               (t_s[0] - t_raw[0], t_s[1] - t_raw[1]))]
        print(f"{tokens:>18}  " + "  ".join(f"{u:>13}" for u in us))


def main():
    if "--cpu-stub" in sys.argv[1:]:
        return cpu_stub()
    if not torch.cuda.is_available():
        print("python_overhead: needs a GPU")
        return 77
    print(f"{torch.cuda.get_device_name()}; torch {torch.__version__}; jitgemm "
          f"{jitgemm.__version__}")
    print(f"{'M x N x K':>18}  {'jg_gemm_run':>11}  {'jitgemm.linear':>14}  {'(above)':>8}  "
          f"{'linear(out=)':>12}  {'(above)':>8}  {'torch.ops':>9}  {'F.linear':>8}  "
          f"{'graph: C':>9}  {'graph: py':>9}")
    for m, n, k in ((1, 2048, 2048), (64, 4096, 4096), (4096, 4096, 4096)):
        x = torch.randn(m, k, device="cuda").bfloat16()
        w = torch.randn(n, k, device="cuda").bfloat16()
        out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        raw = raw_launcher(x, w, out)
        r_raw, r_py, r_out = host_rounds([raw, lambda: jitgemm.linear(x, w),
                                          lambda: jitgemm.linear(x, w, out=out)])
        t_raw, t_py, t_out = (statistics.median(r) for r in (r_raw, r_py, r_out))
        t_op = host_us(lambda: torch.ops.jitgemm.linear(x, w))
        t_torch = host_us(lambda: F.linear(x, w))
        g_raw, g_py = graphs_us([raw, lambda: jitgemm.linear(x, w)])
        print(f"{m:>6}x{n:>5}x{k:>5}  {t_raw:>9.2f}us  {t_py:>12.2f}us  "
              f"{above_us(r_py, r_raw):>6.2f}us  {t_out:>10.2f}us  {above_us(r_out, r_raw):>6.2f}us"
              f"  {t_op:>7.2f}us  {t_torch:>6.2f}us  {g_raw:>7.2f}us  {g_py:>7.2f}us")
    t_empty = host_us(lambda: torch.empty(64, 4096, dtype=torch.bfloat16, device="cuda"))
    print(f"torch.empty(64, 4096, bf16, cuda): {t_empty:.2f}us (an output's allocation: part of "
          f"every row but the C one and out=)")
    print(f"\n{'grouped, tokens':>18}  {'jitgemm':>9}  {'torch':>9}  {'scaled: jitgemm':>15}  "
          f"{'torch':>9}   (host us a call, the MoE example's gate/up shapes)")
    for tokens in (16, 512):
        a, b, ends, (qa, qb, sa, sb) = moe_operands(tokens, "cuda")
        t_g = host_us(lambda: jitgemm.grouped_mm(a, b, ends), n=50)
        t_tg = host_us(lambda: torch._grouped_mm(a, b, ends), n=50)
        t_s = host_us(lambda: jitgemm.scaled_grouped_mm(qa, qb, sa, sb, ends), n=50)
        t_ts = host_us(lambda: torch._scaled_grouped_mm(qa, qb, sa, sb, offs=ends,
                                                        out_dtype=torch.bfloat16), n=50)
        print(f"{tokens:>18}  {t_g:>7.2f}us  {t_tg:>7.2f}us  {t_s:>13.2f}us  {t_ts:>7.2f}us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
