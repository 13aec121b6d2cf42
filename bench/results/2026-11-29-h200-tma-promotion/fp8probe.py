# torch._scaled_mm (tensor scales) on FP8 rows K apart: times and cuBLAS kernel names
import sys, torch
from torch.profiler import profile, ProfilerActivity
M, N = 2048, 8192
for K in [int(x) for x in sys.argv[1:]]:
    a = torch.randn(M, K, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(N, K, device="cuda").to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda")
    f = lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    for _ in range(5): f()
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    s.record()
    for _ in range(50): f()
    e.record(); torch.cuda.synchronize()
    us = s.elapsed_time(e) * 1000 / 50
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        f(); torch.cuda.synchronize()
    names = sorted({ev.name for ev in prof.events() if ev.device_type.name == "CUDA"})
    print(f"K={K} K%32={K%32} us={us:.1f} TFLOPs={2*M*N*K/us/1e6:.0f} kernels={names}", flush=True)
