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
"""
import ctypes
import statistics
import sys
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


def main():
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
