#!/usr/bin/env python3
"""The peer's GEMM for Nsight Compute (bench/ncu-pair.sh): torch's own call on random
normal operands, launched 10 times (ncu profiles the last 4 of its GEMM kernels).

    python3 bench/ncu_peer.py M N K [bf16|fp16|fp8]

bf16 and fp16: torch.nn.functional.linear(a[M,K], b[N,K]) as torch.mm runs it (cuBLAS);
fp8: torch._scaled_mm with tensor scales, bf16 out (e4m3 operands, FP32 scales), the call
bench/peer_torch.py times.
"""
import sys

import torch

m, n, k = map(int, sys.argv[1:4])
dtype = sys.argv[4] if len(sys.argv) > 4 else "bf16"
if dtype == "fp8":
    a = torch.randn(m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(n, k, device="cuda").to(torch.float8_e4m3fn)
    one = torch.ones((), device="cuda")
    run = lambda: torch._scaled_mm(a, b.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)
else:
    t = {"bf16": torch.bfloat16, "fp16": torch.float16}[dtype]
    a = torch.randn(m, k, device="cuda", dtype=t)
    b = torch.randn(n, k, device="cuda", dtype=t)
    run = lambda: torch.nn.functional.linear(a, b)
for _ in range(10):
    run()
torch.cuda.synchronize()
