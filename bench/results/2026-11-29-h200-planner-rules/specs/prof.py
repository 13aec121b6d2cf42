# which kernels torch (cuBLAS) runs on our worst rows, with their times
import torch, sys
from torch.profiler import profile, ProfilerActivity
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
dev = "cuda"
for dt, m, n, k in rows:
    m, n, k = int(m), int(n), int(k)
    torch.manual_seed(0)
    a = torch.randn(m, k, device=dev).to(torch.bfloat16)
    b = torch.randn(n, k, device=dev).to(torch.bfloat16)
    if dt == "fp8":
        a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
        one = torch.ones((), device=dev)
        fn = lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
    else:
        fn = lambda: torch.mm(a, b.t())
    for _ in range(5): fn()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        for _ in range(10): fn()
        torch.cuda.synchronize()
    ks = {}
    for e in p.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            ks.setdefault(e.name, []).append(e.device_time)
    print(f"{dt} {m}x{n}x{k}: " + "; ".join(f"{nm[:110]} {sum(v)/len(v):.1f}us x{len(v)//10}" for nm, v in ks.items()), flush=True)
