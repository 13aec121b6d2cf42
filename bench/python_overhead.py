#!/usr/bin/env python3
"""Host cost of the Python package's calls against the C API's (issue 29's
target: one eager call at most 10 us above jg_gemm_run's), and GPU time of
the same GEMM launched by both inside CUDA graphs (target: equal within 2%).

    PYTHONPATH=python JITGEMM_LIBRARY=build/libjitgemm.so python3 bench/python_overhead.py

Host time: N calls back to back (N below the launch queue's depth, on a
decode shape whose kernel takes a few microseconds, so the host never waits
for the GPU), wall time / N, median of R rounds. Rows:
  jg_gemm_run        the plan's launch through ctypes, arguments prepared once
                     (the floor a Python caller can reach; a C caller saves
                     the ctypes call, ~0.3-0.5 us)
  jitgemm.linear     the public function, eager (checks, output allocation,
                     plan lookup, arguments, launch)
  torch.ops.jitgemm  the same op through PyTorch's dispatcher (what compiled
                     code and tensor subclasses call)
  F.linear           PyTorch's own (cuBLAS), for scale
GPU time: one CUDA graph each of 20 launches of jitgemm.linear and of
jg_gemm_run (same plan, same tensors), replayed, CUDA events, median.

    ... python3 bench/python_overhead.py --cpu-stub

measures the Python side alone, on any machine (no GPU): host tensors, the
device check lifted, plans made by an offline context, and the foreign calls
of a launch (cuCtxGetCurrent, jg_gemm_run) answered by stubs of the same
signatures (tests/python/stub_cuda.c, compiled here), so every other step of
an eager call (checks memo, pointers, alignment, output allocation, argument
packing, the context check) runs as it does on a GPU. torch's raw-stream getter, which needs a GPU,
is stood in for by a builtin call. The floor row calls the stub launch as the
GPU mode's jg_gemm_run row calls the real one. Host allocation is not the
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
    fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t0) / n * 1e6)
        torch.cuda.synchronize()
    return statistics.median(times)


def graph_us(fn, launches=20, reps=50):
    fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(launches):
            fn()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        g.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3 / launches)
    return statistics.median(times)


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
              f"  {'torch.ops':>13}  {'torch.empty':>13}")
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
            t_op = host_ns(lambda: torch.ops.jitgemm.linear(x, w))
            t_empty = host_ns(lambda: torch.empty((m, n), dtype=torch.bfloat16, device=x.device))
            us = [f"{a / 1e3:5.2f} / {b / 1e3:5.2f}" for a, b in
                  (t_raw, t_py, (t_py[0] - t_raw[0], t_py[1] - t_raw[1]), t_op, t_empty)]
            print(f"{m:>6}x{n:>5}x{k:>5}  " + "  ".join(f"{u:>13}" for u in us))
    return 0


def main():
    if "--cpu-stub" in sys.argv[1:]:
        return cpu_stub()
    if not torch.cuda.is_available():
        print("python_overhead: needs a GPU")
        return 77
    print(f"{torch.cuda.get_device_name()}; torch {torch.__version__}; jitgemm "
          f"{jitgemm.__version__}")
    print(f"{'M x N x K':>18}  {'jg_gemm_run':>11}  {'jitgemm.linear':>14}  {'(above)':>8}  "
          f"{'torch.ops':>9}  {'F.linear':>8}  {'graph: C':>9}  {'graph: py':>9}")
    for m, n, k in ((1, 2048, 2048), (64, 4096, 4096), (4096, 4096, 4096)):
        x = torch.randn(m, k, device="cuda").bfloat16()
        w = torch.randn(n, k, device="cuda").bfloat16()
        out = torch.empty(m, n, device="cuda", dtype=torch.bfloat16)
        raw = raw_launcher(x, w, out)
        t_raw = host_us(raw)
        t_py = host_us(lambda: jitgemm.linear(x, w))
        t_op = host_us(lambda: torch.ops.jitgemm.linear(x, w))
        t_torch = host_us(lambda: F.linear(x, w))
        g_raw = graph_us(raw)
        g_py = graph_us(lambda: jitgemm.linear(x, w))
        print(f"{m:>6}x{n:>5}x{k:>5}  {t_raw:>9.2f}us  {t_py:>12.2f}us  {t_py - t_raw:>6.2f}us  "
              f"{t_op:>7.2f}us  {t_torch:>6.2f}us  {g_raw:>7.2f}us  {g_py:>7.2f}us")
    return 0


if __name__ == "__main__":
    sys.exit(main())
