#!/usr/bin/env python3
"""A DeepSeek-style MoE layer's forward pass, with PyTorch's grouped GEMMs and
with jitgemm's, checked against each other and timed, eager and in CUDA graphs.

    python3 examples/python/moe_layer.py [--tokens 16,512,4096] [--hidden 2048]
        [--inter 1408] [--experts 64] [--topk 6] [--reps 50] [--seed S]

(default: DeepSeek-V2-Lite's routed experts). Run from a checkout without
installing: PYTHONPATH=python JITGEMM_LIBRARY=build/libjitgemm.so.

The layer: router logits x Wr^T, softmax, top-k; the token-expert pairs sorted
by expert (permute); grouped gate/up GEMM [T k, H] x [E, 2I, H]^T; SiLU(gate) *
up; grouped down GEMM [T k, I] x [E, H, I]^T; each pair's output weighted by
its router weight and summed back per token (un-permute). Everything but the
grouped GEMMs (and, in FP8, the activations' quantization) is the same torch
code in both paths.

  bf16      torch._grouped_mm            against jitgemm.grouped_mm
  fp8 row   torch._scaled_grouped_mm     against jitgemm.scaled_grouped_mm, both
            row-wise scales (torch's FP8 grouped GEMM has no others), the
            activations quantized per row by torch ops and by jitgemm.quantize_fp8
  fp8 block jitgemm.scaled_grouped_mm with DeepSeek-V3's 1x128 / 128x128 block
            scales (no torch counterpart; checked against the bf16 layer)

Checks (norm-wise relative difference of the layer outputs): bf16 paths within
1e-2 (the same bf16 GEMMs summed in other orders: the intermediate's bf16
roundings, 2^-8 each, differ, and propagate through SiLU and the down GEMM);
fp8 row paths within 3e-2 (besides that, a requantized intermediate may land
on the neighbouring e4m3 code, 2^-4 apart, for a few elements); fp8 block
against bf16 within 0.15 (e4m3's own error: each operand off by up to 2^-4
relative, about 4% RMS per GEMM output, through two GEMMs). A failed check
makes the exit status 1.
"""
import argparse
import statistics
import sys

import torch
import torch.nn.functional as F

import jitgemm

E4M3 = torch.float8_e4m3fn


class Weights:
    def __init__(self, hidden, inter, experts, seed):
        g = torch.Generator(device="cuda").manual_seed(seed)
        rnd = lambda *s: (torch.randn(*s, device="cuda", generator=g) / s[-1] ** 0.5).bfloat16()
        self.router = rnd(experts, hidden)
        self.w13 = rnd(experts, 2 * inter, hidden)  # [E, 2I, H]: gate and up, K-major
        self.w2 = rnd(experts, hidden, inter)       # [E, H, I]
        # FP8 copies: per output row (torch's row-wise) and per 128x128 block
        self.w13_q, self.w13_s = quantize_rows(self.w13)
        self.w2_q, self.w2_s = quantize_rows(self.w2)
        self.w13_qb, self.w13_sb = quantize_blocks(self.w13)
        self.w2_qb, self.w2_sb = quantize_blocks(self.w2)


def quantize_rows(x):
    """Row-wise e4m3 with torch ops: x ~= q * s[..., None], s = amax / 448."""
    s = x.float().abs().amax(dim=-1).clamp(min=1e-12) / 448.0
    return (x.float() / s.unsqueeze(-1)).clamp(-448, 448).to(E4M3), s


def quantize_blocks(w):
    """Each expert's weight in 128x128 blocks (jitgemm's quantizer)."""
    qs = [jitgemm.quantize_fp8(w[e], "block", 128) for e in range(w.shape[0])]
    return torch.stack([q for q, _ in qs]), torch.stack([s for _, s in qs])


def route(x, w: Weights, topk):
    """Top-k routing and the permutation that sorts the pairs by expert:
    (order, ends, weights); pair p of token p // topk."""
    probs = F.softmax(x.float() @ w.router.float().t(), dim=-1)
    weights, experts = probs.topk(topk, dim=-1)
    weights = weights / weights.sum(-1, keepdim=True)
    flat = experts.reshape(-1)
    order = flat.argsort(stable=True)
    counts = torch.zeros(w.router.shape[0], dtype=torch.int32, device=x.device)
    counts.scatter_add_(0, flat, torch.ones_like(flat, dtype=torch.int32))
    return order, counts.cumsum(0, dtype=torch.int32), weights


def unpermute(y_sorted, order, weights, tokens, topk):
    out = torch.empty_like(y_sorted)
    out[order] = y_sorted
    return (out.view(tokens, topk, -1).float() * weights.unsqueeze(-1)).sum(1).bfloat16()


def layer(x, w: Weights, topk, gemm):
    """One forward; gemm(a, name of the weights, end offsets) runs a grouped GEMM."""
    tokens = x.shape[0]
    order, ends, weights = route(x, w, topk)
    xs = x[order // topk]
    h = gemm(xs, "w13", ends)
    gate, up = h.chunk(2, dim=-1)
    h = (F.silu(gate.float()) * up.float()).bfloat16()
    y = gemm(h, "w2", ends)
    return unpermute(y, order, weights, tokens, topk)


def torch_bf16(w):
    return lambda a, name, ends: torch._grouped_mm(a, getattr(w, name).transpose(1, 2), ends)


def jitgemm_bf16(w):
    return lambda a, name, ends: jitgemm.grouped_mm(a, getattr(w, name).transpose(1, 2), ends)


def torch_fp8(w):
    def gemm(a, name, ends):
        qa, sa = quantize_rows(a)
        return torch._scaled_grouped_mm(qa, getattr(w, name + "_q").transpose(1, 2), sa,
                                        getattr(w, name + "_s"), offs=ends, out_dtype=torch.bfloat16)
    return gemm


def jitgemm_fp8_row(w):
    def gemm(a, name, ends):
        qa, sa = jitgemm.quantize_fp8(a, "row")
        return jitgemm.scaled_grouped_mm(qa, getattr(w, name + "_q").transpose(1, 2), sa,
                                         getattr(w, name + "_s"), ends)
    return gemm


def jitgemm_fp8_block(w):
    def gemm(a, name, ends):
        qa, sa = jitgemm.quantize_fp8(a, "block")
        sb = getattr(w, name + "_sb").transpose(1, 2)  # dims follow b [E, K, N]
        return jitgemm.scaled_grouped_mm(qa, getattr(w, name + "_qb").transpose(1, 2), sa, sb,
                                         ends)
    return gemm


def time_eager(fn, reps):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def time_graph(fn, reps):
    """Captures fn once (after a warm-up run that plans), replays it."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fn()
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = fn()
    graph.replay()
    torch.cuda.synchronize()
    return time_eager(graph.replay, reps), out


def rel_diff(a, b):
    return ((a.float() - b.float()).norm() / b.float().norm()).item()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", default="16,512,4096")
    ap.add_argument("--hidden", type=int, default=2048)
    ap.add_argument("--inter", type=int, default=1408)
    ap.add_argument("--experts", type=int, default=64)
    ap.add_argument("--topk", type=int, default=6)
    ap.add_argument("--reps", type=int, default=50)
    ap.add_argument("--seed", type=int, default=1234)
    args = ap.parse_args()
    if not torch.cuda.is_available() or torch.cuda.get_device_capability() != (9, 0):
        print("moe_layer: needs an sm_90 (Hopper) GPU")
        return 77
    print(f"seed {args.seed}; H {args.hidden}, I {args.inter}, E {args.experts}, "
          f"top-{args.topk}; {torch.cuda.get_device_name()}; torch {torch.__version__}, "
          f"jitgemm {jitgemm.__version__}")
    w = Weights(args.hidden, args.inter, args.experts, args.seed)
    paths = [  # (name, torch's, jitgemm's, tolerance of jitgemm's against the reference)
        ("bf16", torch_bf16(w), jitgemm_bf16(w), 1e-2),
        ("fp8 row", torch_fp8(w), jitgemm_fp8_row(w), 3e-2),
        ("fp8 block", torch_bf16(w), jitgemm_fp8_block(w), 0.15),
    ]
    ok = True
    print(f"{'tokens':>6}  {'path':<9}  {'torch eager':>11}  {'ours eager':>10}  {'x':>5}  "
          f"{'torch graph':>11}  {'ours graph':>10}  {'x':>5}  {'rel diff':>8}")
    for tokens in [int(t) for t in args.tokens.split(",")]:
        x = (torch.randn(tokens, args.hidden, device="cuda",
                         generator=torch.Generator(device="cuda").manual_seed(args.seed + tokens))
             ).bfloat16()
        for name, theirs, ours, tol in paths:
            ref = layer(x, w, args.topk, theirs)
            got = layer(x, w, args.topk, ours)
            diff = rel_diff(got, ref)
            ok &= diff <= tol
            t_eager = time_eager(lambda: layer(x, w, args.topk, theirs), args.reps)
            o_eager = time_eager(lambda: layer(x, w, args.topk, ours), args.reps)
            t_graph, _ = time_graph(lambda: layer(x, w, args.topk, theirs), args.reps)
            o_graph, g_out = time_graph(lambda: layer(x, w, args.topk, ours), args.reps)
            ok &= rel_diff(g_out, ref) <= tol
            ref_times = "" if name != "fp8 block" else " (vs bf16)"
            print(f"{tokens:>6}  {name:<9}  {t_eager:>9.3f}ms  {o_eager:>8.3f}ms  "
                  f"{t_eager / o_eager:>5.2f}  {t_graph:>9.3f}ms  {o_graph:>8.3f}ms  "
                  f"{t_graph / o_graph:>5.2f}  {diff:>8.2e}{'' if diff <= tol else ' FAILED'}"
                  f"{ref_times}")
    print("ok" if ok else "FAILED: a path differs beyond its tolerance")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
