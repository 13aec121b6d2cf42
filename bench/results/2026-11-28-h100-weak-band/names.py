import json, sys, torch
from torch.profiler import profile, ProfilerActivity
rows = json.load(open(sys.argv[1]))
for m, n, k, dt in rows:
    if dt == 'fp8':
        a = torch.randn(m, k, device='cuda').to(torch.float8_e4m3fn)
        b = torch.randn(n, k, device='cuda').to(torch.float8_e4m3fn)
        one = torch.ones((), device='cuda')
        f = lambda: torch._scaled_mm(a, b.t(), one, one, out_dtype=torch.bfloat16)
    else:
        a = torch.randn(m, k, device='cuda', dtype=torch.bfloat16)
        b = torch.randn(n, k, device='cuda', dtype=torch.bfloat16)
        f = lambda: torch.mm(a, b.t())
    for _ in range(3): f()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        f(); torch.cuda.synchronize()
    ks = [(e.name, round(e.device_time, 1)) for e in prof.events() if e.device_type == torch.autograd.DeviceType.CUDA]
    print(dt, m, n, k, ks, flush=True)
