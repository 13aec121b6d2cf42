"""The ops on an sm_90 GPU (skipped without one): every op against an FP64
reference in every dtype it takes, CUDA-graph capture and replay,
torch.compile(fullgraph=True), torch.library.opcheck, unaligned operands (rows
and pointers off 16 bytes: the pack workspace), warm and plan records, two
devices (the library's own errors: test_offline.py).

Inputs are standard normals (the seed is printed; JITGEMM_TEST_SEED sets it);
outputs land in memory just poisoned with NaN (the caching allocator hands
the freed block to the op), so an element never written fails.

Bounds (those of tests/common/jg_test_gpu.h and tests/gpu/test_fp8.c), with
s = sum_k |a_ik b_jk| (FP64) and u_out the output's unit roundoff (2^-8
bf16, 2^-11 fp16, 2^-24 fp32):
  16-bit and NVFP4 operands (products exact, FP32 sums truncated by the
  tensor cores, u = 2^-23): element-wise |d - ref| <= e + u_out (|ref| + e)
  + tiny, e = (K u / (1 - K u) + 2u) s; norm-wise ||d - ref|| / ||ref|| <=
  2 u_out + 8 sqrt(K) 2^-24.
  FP8 (reference over the dequantized operands; the FP8 wgmma keeps ~14 bits,
  promoted to FP32 every 128 of K): element-wise s 2^-8 + 2 u_out |ref| +
  tiny; norm-wise 2 u_out + 2^-9.
A bias added after the GEMM (a [N] bias) rounds once more: u_out (|ref| +
|bias|) more element-wise, 2 u_out norm-wise.
"""
import math
import os

import pytest
import torch

import jitgemm
from jitgemm import _capi as C
from conftest import requires_sm90, requires_two, sm90_devices

pytestmark = requires_sm90

bf16, fp16, fp32, e4m3 = torch.bfloat16, torch.float16, torch.float32, torch.float8_e4m3fn
U_OUT = {bf16: 2.0 ** -8, fp16: 2.0 ** -11, fp32: 2.0 ** -24}
TINY = {bf16: 2.0 ** -126, fp16: 2.0 ** -14, fp32: 2.0 ** -126}
SEED = int(os.environ.get("JITGEMM_TEST_SEED", "20260529"))


@pytest.fixture(autouse=True)
def seeded():
    print(f"seed {SEED}")
    torch.manual_seed(SEED)


def randn(*shape, dtype=bf16, device="cuda"):
    return torch.randn(shape, device=device).to(dtype)


def poison(shape, dtype, device="cuda"):
    """Leaves a NaN-filled block of an output's size in the caching allocator's
    pool, which its best fit hands to the op's output next (the output is not
    made by the test, so this is as close as poisoning it gets)."""
    x = torch.full(shape, float("nan"), dtype=dtype, device=device)
    del x


def check(out, ref, s, k, out_dtype, fp8=False, bias=None):
    """out against the FP64 reference ref, with s = |A| @ |B|^T (the bounds of
    the module's docstring); bias: a [N] bias added after the GEMM."""
    u_out, tiny = U_OUT[out_dtype], TINY[out_dtype]
    d = out.double()
    assert torch.isfinite(d).all(), f"{(~torch.isfinite(d)).sum().item()} elements not written " \
                                    "or not finite"
    if fp8:
        allow = s * 2.0 ** -8 + 2 * u_out * ref.abs() + tiny
        norm_bound = 2 * u_out + 2.0 ** -9
    else:
        u = 2.0 ** -23
        e = (k * u / (1 - k * u) + 2 * u) * s
        allow = e + u_out * (ref.abs() + e) + tiny
        norm_bound = 2 * u_out + 8 * math.sqrt(k) * 2.0 ** -24
    if bias is not None:  # the GEMM's output rounded before the add: u_out |ref - bias|
        allow = allow + u_out * (ref.abs() + bias.double().abs())
        norm_bound += 2 * u_out
    err = (d - ref).abs()
    ratio = (err / allow).max().item()
    assert ratio <= 1, f"an element is {ratio:.3g} times its bound"
    norm = (err.norm() / ref.norm()).item() if ref.norm() > 0 else err.norm().item()
    assert norm <= norm_bound, f"norm-wise error {norm:.3g} > {norm_bound:.3g}"


def ref_mm(a, b):
    """(A B^T, |A| |B|^T) in FP64."""
    a, b = a.double(), b.double()
    return a @ b.t(), a.abs() @ b.abs().t()


# ---- dense 16-bit ----------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [bf16, fp16])
@pytest.mark.parametrize("out_dtype", [None, bf16, fp16, fp32])
@pytest.mark.parametrize("m", [1, 7, 64, 300, 1000])
def test_linear(dtype, out_dtype, m):
    n, k = 384, 1024
    x, w = randn(m, k, dtype=dtype), randn(n, k, dtype=dtype)
    od = out_dtype or dtype
    poison((m, n), od)
    out = jitgemm.linear(x, w, out_dtype=out_dtype)
    assert out.shape == (m, n) and out.dtype == od
    check(out, *ref_mm(x, w), k, od)


@pytest.mark.parametrize("dtype", [bf16, fp16])
def test_linear_bias_3d_and_strided_rows(dtype):
    n, k = 256, 512
    big = randn(2, 5, k + 64, dtype=dtype)
    x = big[..., :k]  # rows k + 64 apart: lda != K
    w, bias = randn(n, k, dtype=dtype), randn(n, dtype=dtype)
    out = jitgemm.linear(x, w, bias)
    assert out.shape == (2, 5, n)
    ref, s = ref_mm(x.reshape(10, k), w)
    check(out.reshape(10, n), ref + bias.double(), s, k, dtype, bias=bias)
    # a bias of the output's shape is the C operand (beta = 1)
    res = randn(2, 5, n, dtype=fp32)
    out = jitgemm.linear(x, w, res, out_dtype=fp32)
    check(out.reshape(10, n), ref + res.reshape(10, n).double(), s + res.reshape(10, n).double().abs(),
          k, fp32)


@pytest.mark.parametrize("dtype", [bf16, fp16])
def test_mm(dtype):
    a, b = randn(333, 768, dtype=dtype), randn(520, 768, dtype=dtype)
    check(jitgemm.mm(a, b), *ref_mm(a, b), 768, dtype)
    torch_b = b.t()  # torch.mm's [K, N], column-major
    check(jitgemm.mm(a, torch_b.t(), out_dtype=fp32), *ref_mm(a, b), 768, fp32)


def test_new_m_uses_its_bucket_plan():
    """M changes every call: one plan per bucket, none per M."""
    w = randn(256, 512)
    before = len(jitgemm.plans())
    for m in (49, 50, 60, 64):  # one bucket: 64
        x = randn(m, 512)
        check(jitgemm.linear(x, w), *ref_mm(x, w), 512, bf16)
    assert len(jitgemm.plans()) - before <= 1


# ---- FP8 ---------------------------------------------------------------------------------------


def dequant(q, s, mode, block_rows=1):
    """FP64 values of e4m3 q with scales s in the given layout."""
    v = q.double()
    if mode == "tensor":
        return v * s.double()
    if mode == "row":
        return v * s.double().reshape(-1, 1)
    rb = block_rows
    rows, cols = q.shape
    srep = s.double().repeat_interleave(rb, 0)[:rows].repeat_interleave(128, 1)[:, :cols]
    return v * srep


@pytest.mark.parametrize("mode", ["tensor", "row", "block"])
@pytest.mark.parametrize("out_dtype", [bf16, fp16, fp32])
@pytest.mark.parametrize("m", [1, 100, 512])
def test_scaled_mm(mode, out_dtype, m):
    n, k = 384, 1024
    qa, sa = jitgemm.quantize_fp8(randn(m, k), mode)
    qb, sb = jitgemm.quantize_fp8(randn(n, k), mode, 128 if mode == "block" else 1)
    poison((m, n), out_dtype)
    out = jitgemm.scaled_mm(qa, qb, sa, sb, out_dtype=out_dtype)
    a, b = dequant(qa, sa, mode), dequant(qb, sb, mode, 128)
    check(out, a @ b.t(), a.abs() @ b.abs().t(), k, out_dtype, fp8=True)


def test_scaled_mm_in_torchs_conventions():
    """torch._scaled_mm(a, b, sa, sb) == scaled_mm(a, b.t(), sa, sb.t()), row-wise
    and 128x128 (torch's b [K, N] column-major, sb [1, N] or its [K/128, N/128]
    transposed view)."""
    m, n, k = 64, 256, 512
    qa, sa = jitgemm.quantize_fp8(randn(m, k), "row")
    qw, sw = jitgemm.quantize_fp8(randn(n, k), "row")
    b_t, sb_t = qw.t(), sw.reshape(1, n)  # torch's forms
    out = jitgemm.scaled_mm(qa, b_t.t(), sa.reshape(m, 1), sb_t.t())
    theirs = torch._scaled_mm(qa, b_t, sa.reshape(m, 1), sb_t, out_dtype=bf16)
    a, b = dequant(qa, sa, "row"), dequant(qw, sw, "row")
    check(out, a @ b.t(), a.abs() @ b.abs().t(), k, bf16, fp8=True)
    check(theirs, a @ b.t(), a.abs() @ b.abs().t(), k, bf16, fp8=True)
    qw, sw = jitgemm.quantize_fp8(randn(n, k), "block", 128)
    qa, sa = jitgemm.quantize_fp8(randn(m, k), "block")
    sa_torch = sa.t().contiguous().t()  # torch's 1x128 scale_a: outer-dim-major
    b_torch, sb_torch = qw.t(), sw.t()  # torch's [K, N] and [K/128, N/128] views
    out = jitgemm.scaled_mm(qa, b_torch.t(), sa_torch, sb_torch.t())
    a, b = dequant(qa, sa, "block"), dequant(qw, sw, "block", 128)
    check(out, a @ b.t(), a.abs() @ b.abs().t(), k, bf16, fp8=True)


@pytest.mark.parametrize("dtype", [bf16, fp16])
@pytest.mark.parametrize("mode,block_rows", [("tensor", 1), ("row", 1), ("block", 1),
                                             ("block", 128)])
def test_quantize_fp8(dtype, mode, block_rows):
    """Each group's scale is its amax / 448 as FP32 computes it; every element
    dequantizes within e4m3's rounding: |q s - x| <= 2^-4 |x| + 2^-10 s."""
    rows, cols = 300, 1000  # ragged against 128 both ways
    x = randn(rows, cols, dtype=dtype)
    q, s = jitgemm.quantize_fp8(x, mode, block_rows)
    xd = x.double()
    gr = {"tensor": rows, "row": 1, "block": block_rows}[mode]
    gc = cols if mode in ("tensor", "row") else 128
    for bi in range(0, rows, gr):
        for bj in range(0, cols, gc):
            blk = xd[bi:bi + gr, bj:bj + gc]
            amax = blk.abs().max().float()
            want = (amax / 448.0).item() if amax > 0 else 1.0
            got = s.reshape(-1)[(bi // gr) * math.ceil(cols / gc) + bj // gc].item()
            assert abs(got - want) <= 1e-6 * want
            d = q[bi:bi + gr, bj:bj + gc].double() * got
            assert ((d - blk).abs() <= 2.0 ** -4 * blk.abs() + 2.0 ** -10 * got).all()


# ---- NVFP4 -----------------------------------------------------------------------------------------

E2M1 = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]


def dequant_nvfp4(codes, sf, g, layout, k):
    rows = codes.shape[0]
    table = torch.tensor(E2M1 + [-v for v in E2M1], dtype=torch.float64, device=codes.device)
    nib = torch.stack([codes & 15, codes >> 4], dim=-1).reshape(rows, k).long()
    r = torch.arange(rows, device=codes.device).unsqueeze(1)
    kb = torch.arange(k // 16, device=codes.device).unsqueeze(0)
    if layout == "row":
        off = r * (k // 16) + kb
    else:
        kbp = 4 * ((k // 16 + 3) // 4)
        off = ((r // 128) * (kbp // 4) + kb // 4) * 512 + (r % 32) * 16 + ((r // 32) % 4) * 4 \
            + kb % 4
    scales = sf.reshape(-1).view(torch.uint8)[off].view(e4m3).double()
    return table[nib] * scales.repeat_interleave(16, 1) * g.double()


@pytest.mark.parametrize("layout", ["swizzled", "row"])
@pytest.mark.parametrize("m", [1, 16, 200, 600])
@pytest.mark.parametrize("out_dtype", [bf16, fp32])
def test_nvfp4_mm(layout, m, out_dtype):
    n, k = 512, 1024
    a = jitgemm.quantize_nvfp4(randn(m, k), layout)
    b = jitgemm.quantize_nvfp4(randn(n, k), layout)
    out = jitgemm.nvfp4_mm(*a, *b, out_dtype=out_dtype, a_sf_layout=layout, b_sf_layout=layout)
    da, db = dequant_nvfp4(*a, layout, k), dequant_nvfp4(*b, layout, k)
    check(out, da @ db.t(), da.abs() @ db.abs().t(), k, out_dtype)


def test_quantize_nvfp4_is_close():
    """Every element within the recipe's error (jitgemm.h): e2m1's largest step
    is 2 (between 4 and 6), so |q - x| <= 1 s g, and s g = e4m3(bmax / 6 / g) g
    <= (bmax / 6) (1 + 2^-4) for a block of largest magnitude bmax."""
    x = randn(130, 256)
    d = dequant_nvfp4(*jitgemm.quantize_nvfp4(x), "swizzled", 256)
    blocks = x.double().reshape(130, 16, 16)
    allow = blocks.abs().amax(-1, keepdim=True) / 6 * (1 + 2.0 ** -4) * (1 + 2.0 ** -20)
    assert ((d.reshape(130, 16, 16) - blocks).abs() <= allow).all()


# ---- grouped ------------------------------------------------------------------------------------------


def group_rows(groups, total):
    """Random group sizes summing to total, some empty."""
    cuts = sorted(torch.randint(0, total + 1, (groups - 1,)).tolist())
    return [e - s for s, e in zip([0] + cuts, cuts + [total])]


@pytest.mark.parametrize("dtype", [bf16, fp16])
@pytest.mark.parametrize("offs_form", ["ends", "starts"])
def test_grouped_mm(dtype, offs_form):
    g, n, k = 8, 256, 512
    rows = group_rows(g, 700)
    a, w = randn(sum(rows), k, dtype=dtype), randn(g, n, k, dtype=dtype)
    ends = torch.tensor(rows, device="cuda").cumsum(0).to(torch.int32)
    offs = ends if offs_form == "ends" else torch.cat([ends.new_zeros(1), ends])
    poison((sum(rows), n), dtype)
    out = jitgemm.grouped_mm(a, w.transpose(1, 2), offs)
    # torch._grouped_mm: BF16 only
    theirs = torch._grouped_mm(a, w.transpose(1, 2), ends) if dtype == bf16 else None
    start = 0
    for i, r in enumerate(rows):
        if r:
            ref, s = ref_mm(a[start:start + r], w[i])
            check(out[start:start + r], ref, s, k, dtype)
            if dtype == bf16:
                check(theirs[start:start + r], ref, s, k, dtype)
        start += r


@pytest.mark.parametrize("mode", ["row", "block", "tensor"])
def test_scaled_grouped_mm(mode):
    g, n, k = 4, 384, 512
    rows = group_rows(g, 300)
    a16, w16 = randn(sum(rows), k), randn(g, n, k)
    if mode == "tensor":
        parts = [jitgemm.quantize_fp8(a16[s:s + r], "tensor") if r else
                 (a16[s:s].to(e4m3), torch.ones(1, device="cuda"))
                 for s, r in zip([sum(rows[:i]) for i in range(g)], rows)]
        qa = torch.cat([p[0] for p in parts]) if sum(rows) else a16.to(e4m3)
        sa = torch.cat([p[1] for p in parts])
        wq = [jitgemm.quantize_fp8(w16[i], "tensor") for i in range(g)]
        qw, sw = torch.stack([q for q, _ in wq]), torch.cat([s for _, s in wq])
        sb_arg = sw
    else:
        qa, sa = jitgemm.quantize_fp8(a16, mode)
        wq = [jitgemm.quantize_fp8(w16[i], mode, 128 if mode == "block" else 1) for i in range(g)]
        qw, sw = torch.stack([q for q, _ in wq]), torch.stack([s for _, s in wq])
        sb_arg = sw.transpose(1, 2) if mode == "block" else sw  # dims follow b [G, K, N]
    ends = torch.tensor(rows, device="cuda").cumsum(0).to(torch.int32)
    out = jitgemm.scaled_grouped_mm(qa, qw.transpose(1, 2), sa, sb_arg, ends)
    start = 0
    for i, r in enumerate(rows):
        if r:
            if mode == "tensor":
                a = qa[start:start + r].double() * sa[i].double()
                b = qw[i].double() * sw[i].double()
            else:
                sa_i = sa[start:start + r]
                a = dequant(qa[start:start + r], sa_i, mode)
                b = dequant(qw[i], sw[i], mode, 128)
            check(out[start:start + r], a @ b.t(), a.abs() @ b.abs().t(), k, bf16, fp8=True)
        start += r


@pytest.mark.parametrize("dtype", [bf16, fp16])
@pytest.mark.parametrize("expected_m", [None, 8])
def test_masked_grouped_mm(dtype, expected_m):
    g, m_max, n, k = 6, 40, 256, 512
    a, w = randn(g, m_max, k, dtype=dtype), randn(g, n, k, dtype=dtype)
    counts = torch.tensor([0, 1, 40, 17, 8, 33], dtype=torch.int32, device="cuda")
    poison((g, m_max, n), dtype)
    out = jitgemm.masked_grouped_mm(a, w, counts, expected_m=expected_m)
    for i, c in enumerate(counts.tolist()):
        if c:
            check(out[i, :c], *ref_mm(a[i, :c], w[i]), k, dtype)


@pytest.mark.parametrize("mode", ["row", "block"])
def test_masked_scaled_grouped_mm(mode):
    g, m_max, n, k = 4, 32, 384, 512
    qa, sa = jitgemm.quantize_fp8(randn(g * m_max, k), mode)
    wq = [jitgemm.quantize_fp8(randn(n, k), mode, 128 if mode == "block" else 1) for _ in range(g)]
    qw, sw = torch.stack([q for q, _ in wq]), torch.stack([s for _, s in wq])
    counts = torch.tensor([5, 0, 32, 19], dtype=torch.int32, device="cuda")
    sa_g = sa.reshape(g, m_max, -1) if mode == "block" else sa.reshape(g, m_max)
    out = jitgemm.masked_scaled_grouped_mm(qa.reshape(g, m_max, k), qw, sa_g, sw, counts)
    for i, c in enumerate(counts.tolist()):
        if c:
            rows = slice(i * m_max, i * m_max + c)
            a, b = dequant(qa[rows], sa[rows], mode), dequant(qw[i], sw[i], mode, 128)
            check(out[i, :c], a @ b.t(), a.abs() @ b.abs().t(), k, bf16, fp8=True)


def quantized_experts(g, n, k, layout="swizzled"):
    """G experts' weights quantized one by one: (codes [G, N, K/2], scales
    stacked, globals [G]) and each one's FP64 values."""
    parts = [jitgemm.quantize_nvfp4(randn(n, k), layout) for _ in range(g)]
    values = [dequant_nvfp4(*p, layout, k) for p in parts]
    return (torch.stack([p[0] for p in parts]), torch.stack([p[1] for p in parts]),
            torch.cat([p[2] for p in parts])), values


@pytest.mark.parametrize("b_layout", ["swizzled", "row"])
def test_nvfp4_grouped_mm(b_layout):
    g, n, k = 4, 256, 512
    rows = group_rows(g, 300)
    codes, sf, ga = jitgemm.quantize_nvfp4(randn(sum(rows), k), "row")
    b, wv = quantized_experts(g, n, k, b_layout)
    ends = torch.tensor(rows, device="cuda").cumsum(0).to(torch.int32)
    poison((sum(rows), n), bf16)
    out = jitgemm.nvfp4_grouped_mm(codes, sf, ga.repeat(g), *b, ends, b_sf_layout=b_layout)
    av = dequant_nvfp4(codes, sf, ga, "row", k)
    start = 0
    for i, r in enumerate(rows):
        if r:
            a = av[start:start + r]
            check(out[start:start + r], a @ wv[i].t(), a.abs() @ wv[i].abs().t(), k, bf16)
        start += r


def test_masked_nvfp4_grouped_mm():
    g, m_max, n, k = 4, 128, 256, 512  # m_max a multiple of 128: one quantization of A
    codes, sf, ga = jitgemm.quantize_nvfp4(randn(g * m_max, k))
    b, wv = quantized_experts(g, n, k)
    counts = torch.tensor([0, 5, 128, 77], dtype=torch.int32, device="cuda")
    out = jitgemm.masked_nvfp4_grouped_mm(codes.view(g, m_max, k // 2), sf, ga.repeat(g), *b,
                                          counts, expected_m=64)
    for i, c in enumerate(counts.tolist()):
        if c:
            rows = slice(i * m_max, (i + 1) * m_max)
            a = dequant_nvfp4(codes[rows], sf[rows], ga, "swizzled", k)[:c]
            check(out[i, :c], a @ wv[i].t(), a.abs() @ wv[i].abs().t(), k, bf16)


# ---- CUDA graphs, torch.compile, opcheck -------------------------------------------------------


def test_cuda_graph_capture_and_replay():
    """Plans made before capture; the graph replays with new inputs, new
    counts and on another stream's work order."""
    m, n, k, g = 96, 256, 512, 4
    x, w = randn(m, k), randn(n, k)
    a, wg = randn(g, 32, k), randn(g, n, k)
    counts = torch.tensor([3, 32, 0, 9], dtype=torch.int32, device="cuda")

    def step():
        y = jitgemm.linear(x, w)
        q, s = jitgemm.quantize_fp8(y)
        return y, jitgemm.masked_grouped_mm(a, wg, counts), q, s

    step()  # plans (and compiles) outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        outs = step()
    for _ in range(2):
        x.copy_(randn(m, k))
        a.copy_(randn(g, 32, k))
        counts.copy_(torch.randint(0, 33, (g,), dtype=torch.int32, device="cuda"))
        graph.replay()
        torch.cuda.synchronize()
        y, d, q, s = outs
        check(y, *ref_mm(x, w), k, bf16)
        for i, c in enumerate(counts.tolist()):
            if c:
                check(d[i, :c], *ref_mm(a[i, :c], wg[i]), k, bf16)
        ref_q, ref_s = jitgemm.quantize_fp8(y)
        assert torch.equal(q.view(torch.uint8), ref_q.view(torch.uint8)) and torch.equal(s, ref_s)


def test_torch_compile_fullgraph():
    def mlp(x, w1, w2):
        h = jitgemm.linear(x, w1)
        gate, up = h.chunk(2, dim=-1)
        return jitgemm.linear(torch.nn.functional.silu(gate) * up, w2)

    x, w1, w2 = randn(50, 512), randn(1024, 512), randn(256, 512)
    torch._dynamo.reset()
    compiled = torch.compile(mlp, fullgraph=True)
    for m in (50, 7, 130):  # new M: dynamic shapes, no graph break
        x = randn(m, 512)
        out, eager = compiled(x, w1, w2).float(), mlp(x, w1, w2).float()
        # Inductor fuses silu(gate) * up in FP32, eager rounds silu to bf16
        # first: the second GEMM's inputs may differ by one bf16 rounding
        # (2^-8 relative), its outputs by about as much of their magnitude
        torch.testing.assert_close(out, eager, rtol=2.0 ** -6,
                                   atol=2.0 ** -6 * eager.abs().max().item())


def test_opcheck():
    """torch.library.opcheck: schema, fake kernel against the real one,
    AOTAutograd's functionalization."""
    x, w = randn(33, 256), randn(128, 256)
    torch.library.opcheck(torch.ops.jitgemm.linear.default, (x, w, None, None),
                          test_utils=("test_schema", "test_faketensor", "test_aot_dispatch_dynamic"))
    qa, sa = jitgemm.quantize_fp8(x)
    qw, sw = jitgemm.quantize_fp8(w)
    # torch's test_schema compares FP8 inputs with allclose, which torch 2.11 does not
    # implement for float8_e4m3fn: the schema's no-mutation promise is checked here on
    # the inputs' bytes instead.
    before = [t.view(torch.uint8).clone() for t in (qa, qw)]
    torch.ops.jitgemm.scaled_mm.default(qa, qw, sa, sw, None, None)
    torch.cuda.synchronize()
    assert all(torch.equal(b, t.view(torch.uint8)) for b, t in zip(before, (qa, qw)))
    torch.library.opcheck(torch.ops.jitgemm.scaled_mm.default, (qa, qw, sa, sw, None, None),
                          test_utils=("test_faketensor",))
    torch.library.opcheck(torch.ops.jitgemm.quantize_fp8.default, (x, "block", 1),
                          test_utils=("test_schema", "test_faketensor"))


# ---- out=: the caller's output -----------------------------------------------------------------


def nan_filled(shape, dtype):
    return torch.full(shape, float("nan"), dtype=dtype, device="cuda")


@pytest.mark.parametrize("dtype", [bf16, fp16])
@pytest.mark.parametrize("out_dtype", [None, fp32])
def test_linear_out(dtype, out_dtype):
    """out= writes every element of out (NaN before) within the bounds, and
    returns out; into a view of a wider buffer's columns 2 bytes in (a row
    stride other than N, a pointer off 16 bytes) it writes those columns
    only; a [N] bias is added, a C bias read."""
    m, n, k = 300, 384, 1024
    od = out_dtype or dtype
    x, w = randn(2, 150, k, dtype=dtype), randn(n, k, dtype=dtype)
    ref, s = ref_mm(x.reshape(m, k), w)
    out = nan_filled((2, 150, n), od)
    assert jitgemm.linear(x, w, out_dtype=out_dtype, out=out) is out
    check(out.reshape(m, n), ref, s, k, od)
    assert torch.equal(out, jitgemm.linear(x, w, out_dtype=out_dtype))  # the same plan
    buf = nan_filled((m, n + 24), od)
    view = buf[:, 1:n + 1]
    assert jitgemm.linear(x.reshape(m, k), w, out_dtype=out_dtype, out=view) is view
    check(view, ref, s, k, od)
    assert torch.isnan(buf[:, 0]).all() and torch.isnan(buf[:, n + 1:]).all()
    view.fill_(float("nan"))  # x 2 bytes in as well: A packed into the workspace
    jitgemm.linear(placed(x.reshape(m, k), k + 8, 1), w, out_dtype=out_dtype, out=view)
    check(view, ref, s, k, od)
    bias = randn(n, dtype=od)
    out = nan_filled((2, 150, n), od)
    jitgemm.linear(x, w, bias, out_dtype, out=out)
    check(out.reshape(m, n), ref + bias.double(), s, k, od, bias=bias)
    c = randn(m, n, dtype=od)
    out = nan_filled((m, n), od)
    jitgemm.linear(x.reshape(m, k), w, c, out_dtype, out=out)
    check(out, ref + c.double(), s + c.double().abs(), k, od)


@pytest.mark.parametrize("dtype", [bf16, fp16])
def test_mm_out(dtype):
    a, b = randn(333, 768, dtype=dtype), randn(520, 768, dtype=dtype)
    out = nan_filled((333, 520), fp32)
    assert jitgemm.mm(a, b, fp32, out=out) is out
    check(out, *ref_mm(a, b), 768, fp32)


@pytest.mark.parametrize("mode", ["tensor", "row", "block"])
def test_scaled_mm_out(mode):
    m, n, k = 100, 384, 1024
    qa, sa = jitgemm.quantize_fp8(randn(m, k), mode)
    qb, sb = jitgemm.quantize_fp8(randn(n, k), mode, 128 if mode == "block" else 1)
    out = nan_filled((m, n), fp16)
    assert jitgemm.scaled_mm(qa, qb, sa, sb, out_dtype=fp16, out=out) is out
    a, b = dequant(qa, sa, mode), dequant(qb, sb, mode, 128)
    check(out, a @ b.t(), a.abs() @ b.abs().t(), k, fp16, fp8=True)
    assert torch.equal(out, jitgemm.scaled_mm(qa, qb, sa, sb, out_dtype=fp16))


def test_out_allocates_nothing():
    """An aligned out= call takes no block from PyTorch's allocator; the
    plain call takes its output's."""
    x, w = randn(64, 512), randn(256, 512)
    out = torch.empty(64, 256, dtype=bf16, device="cuda")
    jitgemm.linear(x, w, out=out)  # plans
    torch.cuda.synchronize()
    allocations = torch.cuda.memory_stats()["allocation.all.allocated"]
    for _ in range(3):
        jitgemm.linear(x, w, out=out)
        jitgemm.mm(x, w, out=out)
    assert torch.cuda.memory_stats()["allocation.all.allocated"] == allocations
    y = jitgemm.linear(x, w)
    assert torch.cuda.memory_stats()["allocation.all.allocated"] == allocations + 1
    assert torch.equal(y, out)


def test_out_in_cuda_graph():
    """Static output buffers: the captured out= launches write into them at
    each replay, with new inputs."""
    m, n, k = 96, 256, 512
    x, w, w2 = randn(m, k), randn(n, k), randn(128, n)
    y = torch.empty(m, n, dtype=bf16, device="cuda")
    z = torch.empty(m, 128, dtype=fp32, device="cuda")

    def step():
        jitgemm.linear(x, w, out=y)
        jitgemm.mm(y, w2, fp32, out=z)

    step()  # plans outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    for _ in range(2):
        x.copy_(randn(m, k))
        y.fill_(float("nan"))
        z.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        check(y, *ref_mm(x, w), k, bf16)
        check(z, *ref_mm(y, w2), n, fp32)


def test_out_compiled_and_opcheck():
    def f(x, w, y):
        jitgemm.linear(x, w, out=y)
        return y * 2

    x, w = randn(50, 512), randn(256, 512)
    torch._dynamo.reset()
    compiled = torch.compile(f, fullgraph=True)
    y = nan_filled((50, 256), bf16)
    doubled = compiled(x, w, y)
    check(y, *ref_mm(x, w), 512, bf16)
    assert torch.equal(doubled, y * 2)
    utils = ("test_schema", "test_faketensor", "test_aot_dispatch_dynamic")
    torch.library.opcheck(torch.ops.jitgemm.linear_out.default,
                          (x, w, None, None, torch.empty(50, 256, dtype=bf16, device="cuda")),
                          test_utils=utils)
    torch.library.opcheck(torch.ops.jitgemm.mm_out.default,
                          (x, w, fp32, torch.empty(50, 256, device="cuda")), test_utils=utils)
    qa, sa = jitgemm.quantize_fp8(x)
    qw, sw = jitgemm.quantize_fp8(w)
    torch.library.opcheck(torch.ops.jitgemm.scaled_mm_out.default,
                          (qa, qw, sa, sw, None, None,
                           torch.empty(50, 256, dtype=bf16, device="cuda")),
                          test_utils=("test_faketensor",))


# ---- errors, plans, devices ---------------------------------------------------------------------


def test_misaligned_pointer_takes_an_unaligned_plan():
    x = randn(4, 72)[:, 8:]  # rows 144 bytes apart, data 16 bytes in: aligned
    w = randn(32, 64)
    check(jitgemm.linear(x, w), *ref_mm(x, w), 64, bf16)
    x = placed(randn(4, 64), 64, 4)  # data 8 bytes in
    poison((4, 32), bf16)
    check(jitgemm.linear(x, w), *ref_mm(x, w), 64, bf16)
    assert any(r.op == "gemm" and r.key[0] & C.JG_GEMM_UNALIGNED for r in jitgemm.plans())


# ---- unaligned operands: the pack workspace ------------------------------------------------------


def placed(t, ld, offset=0):
    """t [rows, K]'s values in a view whose rows are ld elements apart and
    whose data starts offset elements into its (aligned) storage."""
    rows, k = t.shape
    store = torch.empty(offset + (rows - 1) * ld + k, dtype=t.dtype, device=t.device)
    v = store[offset:].as_strided((rows, k), (ld, 1))
    v.copy_(t)
    return v


def off16(t):
    """Whether t's rows or data are off 16 bytes (the cases below must be)."""
    return bool((t.stride(0) * t.element_size()) % 16 or t.data_ptr() % 16)


# (name, m, n, k, (x's ld, offset), (w's ld, offset)); 16-bit elements
UNALIGNED_16 = [
    ("K odd", 77, 130, 999, (999, 0), (999, 0)),       # A, B and D rows off 16 bytes
    ("x one element in", 300, 384, 1024, (1032, 1), (1024, 0)),  # rows aligned: JG_GEMM_UNALIGNED
    ("w rows k + 3 apart", 64, 256, 520, (520, 0), (523, 0)),
    ("decode", 1, 48, 77, (77, 0), (77, 0)),
    ("M past the last hint", 16500, 24, 99, (99, 0), (101, 3)),
]


def unaligned_operands(case, dtype):
    _, m, n, k, (lda, oa), (ldb, ob) = case
    x, w = placed(randn(m, k, dtype=dtype), lda, oa), placed(randn(n, k, dtype=dtype), ldb, ob)
    assert off16(x) or off16(w)
    return x, w


@pytest.mark.parametrize("dtype", [bf16, fp16])
@pytest.mark.parametrize("case", UNALIGNED_16, ids=[c[0] for c in UNALIGNED_16])
def test_unaligned_linear_and_mm(dtype, case):
    x, w = unaligned_operands(case, dtype)
    m, n, k = x.shape[0], w.shape[0], x.shape[1]
    ref, s = ref_mm(x, w)
    poison((m, n), dtype)
    check(jitgemm.linear(x, w), ref, s, k, dtype)
    poison((m, n), fp32)
    check(jitgemm.mm(x, w, out_dtype=fp32), ref, s, k, fp32)


@pytest.mark.parametrize("dtype", [bf16, fp16])
def test_unaligned_linear_with_bias(dtype):
    """K odd with a [N] bias, and with a C operand whose rows are off 16 bytes."""
    m, n, k = 45, 70, 333
    x, w = randn(m, k, dtype=dtype), randn(n, k, dtype=dtype)
    ref, s = ref_mm(x, w)
    bias = randn(n, dtype=dtype)
    poison((m, n), dtype)
    check(jitgemm.linear(x, w, bias), ref + bias.double(), s, k, dtype, bias=bias)
    res = placed(randn(m, n, dtype=fp32), n + 1)
    poison((m, n), fp32)
    check(jitgemm.linear(x, w, res, out_dtype=fp32), ref + res.double(), s + res.double().abs(),
          k, fp32)


# (name, m, n, k, (a's ld, offset), (b's ld, offset)); e4m3 elements
UNALIGNED_FP8 = [
    ("K 1000", 100, 384, 1000, (1000, 0), (1000, 0)),
    ("a 3 bytes in", 64, 256, 512, (528, 3), (512, 0)),  # rows aligned: JG_GEMM_UNALIGNED
    ("b rows 260 apart", 33, 130, 256, (256, 0), (260, 0)),
]


@pytest.mark.parametrize("mode", ["row", "block"])
@pytest.mark.parametrize("case", UNALIGNED_FP8, ids=[c[0] for c in UNALIGNED_FP8])
def test_unaligned_scaled_mm(mode, case):
    _, m, n, k, (lda, oa), (ldb, ob) = case
    qa, sa = jitgemm.quantize_fp8(randn(m, k), mode)
    qb, sb = jitgemm.quantize_fp8(randn(n, k), mode, 128 if mode == "block" else 1)
    a, b = placed(qa, lda, oa), placed(qb, ldb, ob)
    assert off16(a) or off16(b)
    poison((m, n), bf16)
    out = jitgemm.scaled_mm(a, b, sa, sb)
    da, db = dequant(qa, sa, mode), dequant(qb, sb, mode, 128)
    check(out, da @ db.t(), da.abs() @ db.abs().t(), k, bf16, fp8=True)


def kernels_launched(call):
    """The names of libjitgemm's kernels that call() launches (torch.profiler,
    whose CUPTI trace holds every kernel of the process)."""
    from torch.profiler import ProfilerActivity, profile
    call()  # planned (and compiled) outside the profile
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        call()
        torch.cuda.synchronize()
    return {e.name for e in prof.events() if e.name.startswith("jg_")}


@pytest.mark.parametrize("case", UNALIGNED_16, ids=[c[0] for c in UNALIGNED_16])
def test_unaligned_calls_pack(case):
    """The workspace each call gets is large enough for the library to pack
    (with one too small it would quietly take the element-wise loads): the
    pack kernel runs, for every case, M past the largest hint included. An
    aligned call launches no pack and its plan reports no workspace."""
    x, w = unaligned_operands(case, bf16)
    names = kernels_launched(lambda: jitgemm.linear(x, w))
    assert any(s.startswith("jg_pack") for s in names), names
    n, k = w.shape
    assert any(r.workspace_bytes for r in jitgemm.plans() if r.key[6:8] == (n, k))
    xa, wa = randn(64, 512), randn(320, 512)
    names = kernels_launched(lambda: jitgemm.linear(xa, wa))
    assert names and not any(s.startswith("jg_pack") for s in names), names  # the GEMM alone
    aligned = [r.workspace_bytes for r in jitgemm.plans() if r.key[6:9] == (320, 512, 512)]
    assert aligned and not any(aligned)


def test_unaligned_in_cuda_graph_and_compiled():
    """The workspace comes from torch inside the op: captured into a graph's
    pool and replayed with new inputs; traced by torch.compile(fullgraph)."""
    m, n, k = 96, 200, 999
    x = placed(randn(m, k), k + 1, 1)
    w = randn(n, k)
    jitgemm.linear(x, w)  # plans outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        y = jitgemm.linear(x, w)
    for _ in range(2):
        x.copy_(randn(m, k))
        graph.replay()
        torch.cuda.synchronize()
        check(y, *ref_mm(x, w), k, bf16)
    torch._dynamo.reset()
    compiled = torch.compile(lambda a, b: jitgemm.linear(a, b), fullgraph=True)
    for rows in (7, 50):
        a = randn(rows, k)
        poison((rows, n), bf16)
        check(compiled(a, w), *ref_mm(a, w), k, bf16)


def test_warm_and_plan_info():
    recs = jitgemm.warm([{"op": "linear", "n": 512, "k": 256, "m": [1, 100, 4000]},
                         {"op": "scaled_mm", "n": 256, "k": 512, "scale": "block", "m": 64},
                         {"op": "quantize_fp8", "k": 512, "scale": "block"}])
    assert [r.op for r in recs] == ["gemm"] * 4 + ["quantize"]
    assert all(r.origin in ("compiled", "disk", "memory") for r in recs)
    assert all(r.kernel_name.startswith("jg_") for r in recs[:4])
    before = {r.key for r in jitgemm.plans()}
    x, w = randn(120, 256), randn(512, 256)  # bucket 128: warmed (100)
    jitgemm.linear(x, w)
    assert {r.key for r in jitgemm.plans()} == before


@requires_two
def test_two_devices():
    """One context per device; each op runs on its operands' device, whatever
    device is current."""
    devs = sm90_devices()[:2]
    torch.cuda.set_device(devs[0])
    for d in devs:
        x, w = randn(64, 256, device=f"cuda:{d}"), randn(128, 256, device=f"cuda:{d}")
        out = jitgemm.linear(x, w)
        assert out.device == x.device
        check(out, *ref_mm(x, w), 256, bf16)
    assert torch.cuda.current_device() == devs[0]
