"""The ops are registered as torch.library custom ops whose fake kernels give
the real kernels' output shapes and dtypes (FakeTensorMode, CUDA fake
tensors), and that torch.compile(fullgraph=True) and torch.export trace into
one graph without breaks. No GPU: nothing here runs a kernel."""
import pytest
import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import jitgemm

bf16, fp16, fp32, e4m3 = torch.bfloat16, torch.float16, torch.float32, torch.float8_e4m3fn
OPS = ["linear", "mm", "scaled_mm", "quantize_fp8", "quantize_nvfp4", "nvfp4_mm", "grouped_mm",
       "scaled_grouped_mm", "masked_grouped_mm", "masked_scaled_grouped_mm", "nvfp4_grouped_mm",
       "masked_nvfp4_grouped_mm", "linear_out", "mm_out", "scaled_mm_out"]


def test_every_op_is_a_custom_op_with_a_fake_kernel():
    for name in OPS:
        op = getattr(torch.ops.jitgemm, name).default
        assert op._schema.name == f"jitgemm::{name}"
        assert torch._C._dispatch_has_kernel_for_dispatch_key(op.name(), "Meta") or \
            torch.library.get_kernel(op, "Meta") is not None, name
    assert "ScalarType? out_dtype" in str(torch.ops.jitgemm.linear.default._schema)


def test_out_ops_declare_their_write():
    """The out= forms mutate out alone and return nothing; the plain ops'
    schemas are unchanged (no out, no mutation)."""
    for name, plain in (("linear_out", "linear"), ("mm_out", "mm"),
                        ("scaled_mm_out", "scaled_mm")):
        schema = getattr(torch.ops.jitgemm, name).default._schema
        mutable = [a.name for a in schema.arguments if a.alias_info and a.alias_info.is_write]
        assert mutable == ["out"] and not schema.returns, str(schema)
        plain_schema = getattr(torch.ops.jitgemm, plain).default._schema
        assert [a.name for a in schema.arguments] == \
            [a.name for a in plain_schema.arguments] + ["out"]
        assert not any(a.alias_info for a in plain_schema.arguments)


def cuda(shape, dtype):
    return torch.empty(shape, dtype=dtype, device="cuda")


# (function, make arguments inside FakeTensorMode, expected (shape, dtype) of each output)
FAKE_CASES = [
    ("linear 3-D", lambda: jitgemm.linear(cuda((2, 3, 64), bf16), cuda((96, 64), bf16)),
     [((2, 3, 96), bf16)]),
    ("linear fp16 -> fp32, bias", lambda: jitgemm.linear(cuda((5, 64), fp16), cuda((96, 64), fp16),
                                                         cuda((96,), fp32), out_dtype=fp32),
     [((5, 96), fp32)]),
    ("linear 1-D x", lambda: jitgemm.linear(cuda((64,), bf16), cuda((96, 64), bf16)),
     [((96,), bf16)]),
    ("mm", lambda: jitgemm.mm(cuda((7, 64), bf16), cuda((48, 64), bf16), fp16),
     [((7, 48), fp16)]),
    ("linear, rows off 16 bytes", lambda: jitgemm.linear(cuda((5, 999), bf16),
                                                         cuda((37, 999), bf16)),
     [((5, 37), bf16)]),
    ("scaled_mm K 1000", lambda: jitgemm.scaled_mm(
        cuda((7, 1000), e4m3), cuda((40, 1000), e4m3), cuda((7,), fp32), cuda((40,), fp32)),
     [((7, 40), bf16)]),
    ("scaled_mm block", lambda: jitgemm.scaled_mm(
        cuda((7, 256), e4m3), cuda((384, 256), e4m3), cuda((7, 2), fp32), cuda((3, 2), fp32)),
     [((7, 384), bf16)]),
    ("scaled_mm torch row-wise", lambda: jitgemm.scaled_mm(
        cuda((7, 256), e4m3), cuda((384, 256), e4m3).t().t(), cuda((7, 1), fp32),
        cuda((1, 384), fp32).t(), out_dtype=fp32), [((7, 384), fp32)]),
    ("quantize_fp8 row", lambda: jitgemm.quantize_fp8(cuda((2, 3, 256), bf16)),
     [((2, 3, 256), e4m3), ((2, 3), fp32)]),
    ("quantize_fp8 1x128", lambda: jitgemm.quantize_fp8(cuda((5, 300), fp16), "block"),
     [((5, 300), e4m3), ((5, 3), fp32)]),
    ("quantize_fp8 128x128", lambda: jitgemm.quantize_fp8(cuda((300, 300), bf16), "block", 128),
     [((300, 300), e4m3), ((3, 3), fp32)]),
    ("quantize_fp8 tensor", lambda: jitgemm.quantize_fp8(cuda((5, 64), bf16), "tensor"),
     [((5, 64), e4m3), ((1,), fp32)]),
    ("quantize_nvfp4 swizzled", lambda: jitgemm.quantize_nvfp4(cuda((130, 80), bf16)),
     [((130, 40), torch.uint8), ((256, 8), e4m3), ((1,), fp32)]),
    ("quantize_nvfp4 row", lambda: jitgemm.quantize_nvfp4(cuda((130, 512), bf16), "row"),
     [((130, 256), torch.uint8), ((130, 32), e4m3), ((1,), fp32)]),
    ("nvfp4_mm", lambda: jitgemm.nvfp4_mm(
        cuda((3, 64), torch.uint8), cuda((128, 8), e4m3), cuda((1,), fp32),
        cuda((256, 64), torch.uint8), cuda((256, 8), e4m3), cuda((1,), fp32)),
     [((3, 256), bf16)]),
    ("grouped_mm", lambda: jitgemm.grouped_mm(
        cuda((40, 64), bf16), cuda((4, 96, 64), bf16).transpose(1, 2),
        cuda((4,), torch.int32)), [((40, 96), bf16)]),
    ("scaled_grouped_mm row", lambda: jitgemm.scaled_grouped_mm(
        cuda((40, 128), e4m3), cuda((4, 96, 128), e4m3).transpose(1, 2), cuda((40,), fp32),
        cuda((4, 96), fp32), cuda((5,), torch.int32)), [((40, 96), bf16)]),
    ("scaled_grouped_mm block", lambda: jitgemm.scaled_grouped_mm(
        cuda((40, 256), e4m3), cuda((4, 384, 256), e4m3).transpose(1, 2), cuda((40, 2), fp32),
        cuda((4, 3, 2), fp32).transpose(1, 2), cuda((4,), torch.int32)), [((40, 384), bf16)]),
    ("masked_grouped_mm", lambda: jitgemm.masked_grouped_mm(
        cuda((4, 16, 64), fp16), cuda((4, 96, 64), fp16), cuda((4,), torch.int32), fp32, 5),
     [((4, 16, 96), fp32)]),
    ("masked_scaled_grouped_mm", lambda: jitgemm.masked_scaled_grouped_mm(
        cuda((4, 16, 256), e4m3), cuda((4, 384, 256), e4m3), cuda((4, 16, 2), fp32),
        cuda((4, 3, 2), fp32), cuda((4,), torch.int32)), [((4, 16, 384), bf16)]),
]


def test_fake_out_kernels_return_out():
    """With fake tensors the out= forms run their checks and return out itself."""
    with FakeTensorMode():
        x, w, out = cuda((2, 3, 64), bf16), cuda((96, 64), bf16), cuda((2, 3, 96), fp32)
        assert jitgemm.linear(x, w, out_dtype=fp32, out=out) is out
        a, b_t, o = cuda((7, 64), fp16), cuda((48, 64), fp16), cuda((7, 56), fp16)[:, :48]
        assert jitgemm.mm(a, b_t, out=o) is o
        qa, qb = cuda((7, 256), e4m3), cuda((384, 256), e4m3)
        o = cuda((7, 384), bf16)
        assert jitgemm.scaled_mm(qa, qb, cuda((7, 2), fp32), cuda((3, 2), fp32), out=o) is o
        with pytest.raises(jitgemm.ArgumentError, match="out's leading dimensions do not"):
            jitgemm.linear(x, w, out_dtype=fp32, out=cuda((3, 2, 96), fp32).transpose(0, 1))
        with pytest.raises(jitgemm.ArgumentError, match="out is bfloat16, the output float32"):
            jitgemm.linear(x, w, out_dtype=fp32, out=cuda((2, 3, 96), bf16))


@pytest.mark.parametrize("call,want", [c[1:] for c in FAKE_CASES], ids=[c[0] for c in FAKE_CASES])
def test_fake_kernels_give_the_output_shapes(call, want):
    with FakeTensorMode():
        out = call()
    outs = out if isinstance(out, tuple) else (out,)
    assert [(tuple(o.shape), o.dtype) for o in outs] == want
    assert all(o.device.type == "cuda" for o in outs)


def test_fake_kernels_check_arguments():
    with FakeTensorMode():
        with pytest.raises(jitgemm.ArgumentError, match="differs from x's last dimension"):
            jitgemm.linear(cuda((4, 64), bf16), cuda((32, 48), bf16))


def compiled_graph(fn, *args):
    """Compiles fn with fullgraph=True (a graph break raises) and returns the
    FX graph dynamo made, without running it (its inputs are CPU tensors)."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return lambda *a: [None] * len(gm.graph.find_nodes(op="output")[0].args[0])

    torch._dynamo.reset()
    torch.compile(fn, fullgraph=True, backend=backend)(*args)
    assert len(graphs) == 1
    return graphs[0]


def jitgemm_calls(gm):
    """The jitgemm ops a graph calls (dynamo's graphs name the packet, export's
    the overload: both as jitgemm.NAME)."""
    return [str(n.target).removesuffix(".default") for n in gm.graph.nodes
            if n.op == "call_function" and str(n.target).startswith("jitgemm.")]


def test_compile_fullgraph_traces_the_ops():
    def mlp(x, w1, w2, w3):
        h = jitgemm.linear(x, w1)
        g, u = h.chunk(2, dim=-1)
        y = jitgemm.linear(torch.nn.functional.silu(g) * u, w2)
        q, s = jitgemm.quantize_fp8(y)
        return jitgemm.scaled_mm(q, w3, s, torch.ones(w3.shape[0]))

    x, w1, w2 = torch.zeros(8, 64, dtype=bf16), torch.zeros(256, 64, dtype=bf16), \
        torch.zeros(64, 128, dtype=bf16)
    w3 = torch.zeros(32, 64, dtype=e4m3)
    gm = compiled_graph(mlp, x, w1, w2, w3)
    assert jitgemm_calls(gm) == ["jitgemm.linear", "jitgemm.linear", "jitgemm.quantize_fp8",
                                 "jitgemm.scaled_mm"]


def test_compile_fullgraph_out():
    """out= traces as the mutable *_out ops, in one graph."""
    def step(x, w, y, q, w8, s8, z):
        jitgemm.linear(x, w, out=y)
        jitgemm.mm(y, w, out=z)
        return jitgemm.scaled_mm(q, w8, s8, torch.ones(w8.shape[0]), out=z), y

    args = (torch.zeros(8, 64, dtype=bf16), torch.zeros(64, 64, dtype=bf16),
            torch.empty(8, 64, dtype=bf16), torch.zeros(8, 64, dtype=e4m3),
            torch.zeros(64, 64, dtype=e4m3), torch.ones(8), torch.empty(8, 64, dtype=bf16))
    gm = compiled_graph(step, *args)
    assert jitgemm_calls(gm) == ["jitgemm.linear_out", "jitgemm.mm_out", "jitgemm.scaled_mm_out"]


def test_compile_fullgraph_grouped():
    def moe(a, w, offs, aq, wq, sa, sb, counts):
        return (jitgemm.grouped_mm(a, w.transpose(1, 2), offs),
                jitgemm.masked_scaled_grouped_mm(aq, wq, sa, sb, counts))

    args = (torch.zeros(40, 64, dtype=bf16), torch.zeros(4, 96, 64, dtype=bf16),
            torch.zeros(4, dtype=torch.int32), torch.zeros(4, 16, 128, dtype=e4m3),
            torch.zeros(4, 96, 128, dtype=e4m3), torch.zeros(4, 16, dtype=fp32),
            torch.zeros(4, 96, dtype=fp32), torch.zeros(4, dtype=torch.int32))
    gm = compiled_graph(moe, *args)
    assert jitgemm_calls(gm) == ["jitgemm.grouped_mm", "jitgemm.masked_scaled_grouped_mm"]


def test_export_traces_the_ops():
    class Linear(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = torch.nn.Parameter(torch.zeros(96, 64, dtype=bf16), requires_grad=False)

        def forward(self, x):
            return jitgemm.linear(x, self.w)

    ep = torch.export.export(Linear(), (torch.zeros(8, 64, dtype=bf16),), strict=True)
    assert jitgemm_calls(ep.graph_module) == ["jitgemm.linear"]
