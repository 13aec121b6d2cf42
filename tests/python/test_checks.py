"""Bad arguments to every op raise jitgemm.ArgumentError with a message that
names the rule, before anything is planned or launched (no libjitgemm context
is even created). CPU tensors: the shape and dtype rules are checked first,
the device last. No GPU."""
import pytest
import torch

import jitgemm
from jitgemm import _device

bf16, fp16, fp32, e4m3 = torch.bfloat16, torch.float16, torch.float32, torch.float8_e4m3fn
i32 = torch.int32


def t(*shape, dtype=bf16):
    return torch.zeros(shape, dtype=dtype)


def f8(*shape):
    return torch.zeros(shape, dtype=e4m3)


CASES = [
    # linear / mm
    ("linear fp32 x", lambda: jitgemm.linear(t(4, 64, dtype=fp32), t(32, 64, dtype=fp32)),
     "x must be bfloat16 or float16, got float32"),
    ("linear dtypes differ", lambda: jitgemm.linear(t(4, 64), t(32, 64, dtype=fp16)),
     "w is torch.float16, x torch.bfloat16: they must match"),
    ("linear K differs", lambda: jitgemm.linear(t(4, 64), t(32, 48)),
     r"its K \(48\) differs from x's last dimension \(64\)"),
    ("linear w 3-D", lambda: jitgemm.linear(t(4, 64), t(2, 32, 64)), r"w must be \[N, K\]"),
    ("linear x strided", lambda: jitgemm.linear(t(4, 128)[:, ::2], t(32, 64)),
     "x must be contiguous in its last dimension"),
    ("linear x not collapsible", lambda: jitgemm.linear(t(4, 6, 64).transpose(0, 1), t(32, 64)),
     "do not collapse into rows of one stride"),
    ("linear w transposed", lambda: jitgemm.linear(t(4, 64), t(64, 32).t()), "w must be K-major"),
    ("linear out_dtype", lambda: jitgemm.linear(t(4, 64), t(32, 64), out_dtype=torch.int8),
     "out_dtype must be bfloat16, float16 or float32"),
    ("linear bias shape", lambda: jitgemm.linear(t(4, 64), t(32, 64), t(16)),
     r"bias must be \[N\] = \[32\]"),
    ("linear empty K", lambda: jitgemm.linear(t(4, 0), t(32, 0)), "K = 0: must be at least 1"),
    ("mm 3-D a", lambda: jitgemm.mm(t(2, 4, 64), t(32, 64)), r"a must be \[M, K\]"),
    # FP8
    ("scaled_mm bf16", lambda: jitgemm.scaled_mm(t(4, 64), t(32, 64), t(1, dtype=fp32),
                                                 t(1, dtype=fp32)),
     "a must be float8_e4m3fn"),
    ("scaled_mm scale dtype", lambda: jitgemm.scaled_mm(f8(4, 64), f8(32, 64), t(1), t(1)),
     "scale_a must be float32"),
    ("scaled_mm scale shapes", lambda: jitgemm.scaled_mm(f8(4, 64), f8(32, 64),
                                                         t(4, dtype=fp32), t(31, dtype=fp32)),
     r"match no scale mode: tensor .*row \(\[4\] and \[32\]\) or block \(\[4, 1\] and \[1, 1\]"),
    ("quantize_fp8 mode", lambda: jitgemm.quantize_fp8(t(4, 64), "col"),
     "scale must be 'tensor', 'row' or 'block'"),
    ("quantize_fp8 block rows", lambda: jitgemm.quantize_fp8(t(4, 64), "block", 64),
     "block_rows must be 1"),
    ("quantize_fp8 128x128 3-D", lambda: jitgemm.quantize_fp8(t(2, 4, 64), "block", 128),
     r"x must be \[rows, K\] for 128x128 blocks"),
    # NVFP4
    ("quantize_nvfp4 K", lambda: jitgemm.quantize_nvfp4(t(4, 40)), "K = 40 must be a multiple of 16"),
    ("quantize_nvfp4 layout", lambda: jitgemm.quantize_nvfp4(t(4, 64), "col"),
     "sf_layout must be 'swizzled'"),
    ("nvfp4_mm sf size", lambda: jitgemm.nvfp4_mm(
        t(4, 32, dtype=torch.uint8), f8(128, 4), t(1, dtype=fp32),
        t(32, 32, dtype=torch.uint8), f8(32, 4), t(1, dtype=fp32)),
     r"b_sf must be a contiguous 128x4 array of scales \(128x4 swizzled\)"),
    ("nvfp4_mm row layout K", lambda: jitgemm.nvfp4_mm(
        t(4, 32, dtype=torch.uint8), f8(4, 4), t(1, dtype=fp32),
        t(32, 32, dtype=torch.uint8), f8(32, 4), t(1, dtype=fp32), a_sf_layout="row"),
     "a_sf_layout 'row' needs K a multiple of 256"),
    ("nvfp4_mm K differs", lambda: jitgemm.nvfp4_mm(
        t(4, 32, dtype=torch.uint8), f8(128, 4), t(1, dtype=fp32),
        t(32, 16, dtype=torch.uint8), f8(128, 4), t(1, dtype=fp32)),
     r"hold different K \(64 and 32\)"),
    # grouped
    ("grouped_mm b [G, N, K]", lambda: jitgemm.grouped_mm(t(16, 64), t(4, 32, 64),
                                                          t(4, dtype=i32)),
     r"b is \[G, K, N\] = \(4, 32, 64\): its K \(32\) differs from a's \(64\)"),
    ("grouped_mm b N-major", lambda: jitgemm.grouped_mm(t(16, 64), t(4, 64, 32),
                                                        t(4, dtype=i32)),
     "b must be K-major"),
    ("grouped_mm offs dtype", lambda: jitgemm.grouped_mm(
        t(16, 64), t(4, 32, 64).transpose(1, 2), t(4, dtype=torch.int64)),
     "offs must be int32"),
    ("grouped_mm offs length", lambda: jitgemm.grouped_mm(
        t(16, 64), t(4, 32, 64).transpose(1, 2), t(3, dtype=i32)),
     "offs must be a contiguous 1-D int32 tensor of 4 or 5 values"),
    ("grouped_mm too many groups", lambda: jitgemm.grouped_mm(
        t(16, 64), t(257, 32, 64).transpose(1, 2), t(257, dtype=i32)),
     "257 groups: at most 256"),
    ("grouped_mm groups apart", lambda: jitgemm.grouped_mm(
        t(16, 64), t(4, 64, 64)[:, :32].transpose(1, 2), t(4, dtype=i32)),
     "b's groups must follow each other"),
    ("scaled_grouped_mm scales", lambda: jitgemm.scaled_grouped_mm(
        f8(16, 128), f8(4, 32, 128).transpose(1, 2), t(16, dtype=fp32), t(4, 31, dtype=fp32),
        t(4, dtype=i32)),
     "match no scale mode"),
    ("masked a groups", lambda: jitgemm.masked_grouped_mm(t(3, 8, 64), t(4, 32, 64),
                                                          t(4, dtype=i32)),
     r"a must be \[G, m_max, K\] = \[4, m_max, 64\]"),
    ("masked counts length", lambda: jitgemm.masked_grouped_mm(t(4, 8, 64), t(4, 32, 64),
                                                               t(5, dtype=i32)),
     "counts must be a contiguous 1-D int32 tensor of 4 values"),
    ("masked expected_m", lambda: jitgemm.masked_grouped_mm(t(4, 8, 64), t(4, 32, 64),
                                                            t(4, dtype=i32), expected_m=0),
     "expected_m = 0"),
    ("masked fp8 block scales", lambda: jitgemm.masked_scaled_grouped_mm(
        f8(4, 8, 256), f8(4, 256, 256), t(4, 8, 2, dtype=fp32), t(4, 2, 3, dtype=fp32),
        t(4, dtype=i32)),
     "match no scale mode"),
    ("nvfp4 grouped A swizzled", lambda: jitgemm._ops._nvfp4_grouped_impl(
        "nvfp4_grouped_mm", False, t(40, 128, dtype=torch.uint8), f8(128, 16), t(4, dtype=fp32),
        t(4, 96, 128, dtype=torch.uint8), f8(4, 128, 16), t(4, dtype=fp32), t(4, dtype=i32),
        None, None, "swizzled", "swizzled"), "a_sf_layout must be 'row' in the contiguous"),
    ("nvfp4 grouped globals", lambda: jitgemm.nvfp4_grouped_mm(
        t(40, 128, dtype=torch.uint8), f8(40, 16), t(1, dtype=fp32),
        t(4, 96, 128, dtype=torch.uint8), f8(4, 128, 16), t(4, dtype=fp32), t(4, dtype=i32)),
     r"a_global must hold one FP32 per group \(4\)"),
    ("nvfp4 grouped b_sf", lambda: jitgemm.nvfp4_grouped_mm(
        t(40, 128, dtype=torch.uint8), f8(40, 16), t(4, dtype=fp32),
        t(4, 96, 128, dtype=torch.uint8), f8(128, 16), t(4, dtype=fp32), t(4, dtype=i32)),
     r"b_sf must be contiguous, 4 x 128 x 16 scales \(128x4 swizzled\)"),
    ("masked nvfp4 a groups", lambda: jitgemm.masked_nvfp4_grouped_mm(
        t(3, 8, 128, dtype=torch.uint8), f8(3, 128, 16), t(4, dtype=fp32),
        t(4, 96, 128, dtype=torch.uint8), f8(4, 128, 16), t(4, dtype=fp32), t(4, dtype=i32)),
     r"a must be \[4, m_max, 128\] \(K/2 bytes of codes\)"),
    # devices: valid shapes on the CPU
    ("linear on the CPU", lambda: jitgemm.linear(t(4, 64), t(32, 64)),
     "x is on cpu: jitgemm runs on CUDA devices only"),
    ("grouped_mm on the CPU", lambda: jitgemm.grouped_mm(
        t(16, 64), t(4, 32, 64).transpose(1, 2), t(4, dtype=i32)), "a is on cpu"),
    ("masked on the CPU", lambda: jitgemm.masked_scaled_grouped_mm(
        f8(4, 8, 256), f8(4, 256, 256), t(4, 8, 2, dtype=fp32), t(4, 2, 2, dtype=fp32),
        t(4, dtype=i32)), "a is on cpu"),
    ("quantize_fp8 on the CPU", lambda: jitgemm.quantize_fp8(t(4, 64)), "x is on cpu"),
    ("nvfp4_mm on the CPU", lambda: jitgemm.nvfp4_mm(
        t(4, 32, dtype=torch.uint8), f8(128, 4), t(1, dtype=fp32),
        t(32, 32, dtype=torch.uint8), f8(128, 4), t(1, dtype=fp32)), "a is on cpu"),
    ("masked nvfp4 on the CPU", lambda: jitgemm.masked_nvfp4_grouped_mm(
        t(4, 8, 128, dtype=torch.uint8), f8(4, 128, 16), t(4, dtype=fp32),
        t(4, 96, 128, dtype=torch.uint8), f8(4, 128, 16), t(4, dtype=fp32), t(4, dtype=i32)),
     "a is on cpu"),
    ("meta device", lambda: jitgemm.linear(t(4, 64).to("meta"), t(32, 64).to("meta")),
     "x is on meta"),
    # rows and pointers off 16 bytes pass every rule of the dense ops (the
    # library plans them): only the device is wrong
    ("linear K 12, N 36, x offset", lambda: jitgemm.linear(t(4 * 12 + 1)[1:].view(4, 12),
                                                         t(36, 12), out_dtype=fp16),
     "x is on cpu"),
    ("mm rows 7 apart", lambda: jitgemm.mm(t(4, 7)[:, :5], t(9, 7)[:, :5]), "a is on cpu"),
    ("scaled_mm K 40", lambda: jitgemm.scaled_mm(f8(4, 40), f8(32, 40), t(1, dtype=fp32),
                                                 t(1, dtype=fp32)), "a is on cpu"),
    ("linear C bias rows off 16 bytes", lambda: jitgemm.linear(
        t(4, 64), t(36, 64), t(4, 37)[:, :36]), "x is on cpu"),
]


# out=: the output given. Its dtype, exact shape, layout and device are
# checked with the operands' (its overlap with them at the launch, on
# addresses: test_launch_path.py); valid ones reach the device check.
OUT_CASES = [
    ("linear out dtype", lambda: jitgemm.linear(t(4, 64), t(32, 64), out=t(4, 32, dtype=fp32)),
     r"out is float32, the output bfloat16 \(out_dtype, else the default\)"),
    ("linear out_dtype and out differ", lambda: jitgemm.linear(
        t(4, 64), t(32, 64), out_dtype=fp16, out=t(4, 32)), "out is bfloat16, the output float16"),
    ("linear out shape", lambda: jitgemm.linear(t(4, 64), t(32, 64), out=t(4, 33)),
     r"out is \(4, 33\), the output \(4, 32\): out must be of its shape exactly"),
    ("linear out flattened", lambda: jitgemm.linear(t(2, 3, 64), t(32, 64), out=t(6, 32)),
     r"out is \(6, 32\), the output \(2, 3, 32\)"),
    ("linear out transposed", lambda: jitgemm.linear(t(4, 64), t(32, 64), out=t(32, 4).t()),
     "out must be contiguous in its last dimension .*the library writes rows of one stride"),
    ("linear out not collapsible", lambda: jitgemm.linear(
        t(2, 3, 64), t(32, 64), out=t(3, 2, 32).transpose(0, 1)),
     "out's leading dimensions do not collapse into rows of one stride"),
    ("linear out rows overlap", lambda: jitgemm.linear(t(4, 64), t(32, 64),
                                                       out=t(32).expand(4, 32)),
     r"out's rows overlap \(row stride 0 < 32 columns\)"),
    ("linear out on another device", lambda: jitgemm.linear(t(4, 64), t(32, 64),
                                                            out=t(4, 32).to("meta")),
     "out is on meta, the other operands on cpu"),
    ("mm out dtype", lambda: jitgemm.mm(t(4, 64), t(32, 64), out=t(4, 32, dtype=fp16)),
     "out is float16, the output bfloat16"),
    ("scaled_mm out shape", lambda: jitgemm.scaled_mm(
        f8(4, 64), f8(32, 64), t(1, dtype=fp32), t(1, dtype=fp32), out=t(32, 4)),
     r"out is \(32, 4\), the output \(4, 32\)"),
    # valid: only the device is wrong
    ("linear out rows wider", lambda: jitgemm.linear(t(4, 64), t(32, 64), out=t(4, 40)[:, :32]),
     "x is on cpu"),
    ("linear out fp32", lambda: jitgemm.linear(t(2, 3, 64), t(32, 64), t(32), fp32,
                                               out=t(2, 3, 32, dtype=fp32)), "x is on cpu"),
    ("mm out offset", lambda: jitgemm.mm(t(4, 64), t(32, 64), out=t(4 * 32 + 1)[1:].view(4, 32)),
     "a is on cpu"),
    ("scaled_mm out", lambda: jitgemm.scaled_mm(
        f8(4, 64), f8(32, 64), t(1, dtype=fp32), t(1, dtype=fp32), out=t(4, 32, dtype=fp16),
        out_dtype=fp16), "a is on cpu"),
]


@pytest.mark.parametrize("call,message", [c[1:] for c in CASES + OUT_CASES],
                         ids=[c[0] for c in CASES + OUT_CASES])
def test_bad_arguments_raise_before_any_launch(call, message):
    with pytest.raises(jitgemm.ArgumentError, match=message) as e:
        call()
    assert str(e.value).startswith("jitgemm.")
    assert isinstance(e.value, ValueError) and isinstance(e.value, jitgemm.JitGemmError)
    assert not _device._devices, "a libjitgemm context was created for a bad call"


class _PassThrough(torch.overrides.TorchFunctionMode):
    def __torch_function__(self, func, types, args=(), kwargs=None):
        return func(*args, **(kwargs or {}))


@pytest.mark.parametrize("call,message", [c[1:] for c in CASES[:12] + OUT_CASES],
                         ids=[c[0] for c in CASES[:12] + OUT_CASES])
def test_the_dispatcher_path_raises_the_same(call, message):
    """Through torch.ops.jitgemm (a TorchFunctionMode forces the dispatcher;
    out= calls reach the *_out ops)."""
    with _PassThrough():
        with pytest.raises(jitgemm.ArgumentError, match=message):
            call()


HALF_BUCKETS = [16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 3072,
                4096, 6144, 8192, 12288, 16384]


def test_m_hint_buckets():
    rows = (1, 16, 17, 24, 25, 48, 49, 100, 128, 129, 12288, 12289, 16384, 10 ** 6)
    assert [jitgemm.m_hint(m) for m in rows] == \
        [16, 16, 24, 24, 32, 48, 64, 128, 128, 192, 12288, 16384, 16384, 16384]
    assert sorted({jitgemm.m_hint(m) for m in range(1, 20000)}) == HALF_BUCKETS


def test_warm_defaults_and_grouped_hints():
    """warm's dense default is every half bucket; grouped tiles stay sized for
    rows a group rounded up to a power of two (contiguous: ceil(M / G); masked:
    expected_m), and their default M is groups times each power of two."""
    from jitgemm import _warm
    dense = _warm._dense_keys({"op": "linear", "n": 64, "k": 64})
    assert [key[5] for key in dense] == HALF_BUCKETS
    spec = {"op": "grouped_mm", "groups": 4, "n": 64, "k": 64}
    assert [key[6] for key in _warm._grouped_keys(spec)] == [1 << i for i in range(4, 15)]
    assert [key[6] for key in _warm._grouped_keys(dict(spec, m=[4 * 17, 4 * 33, 4 * 100]))] == \
        [32, 64, 128]
    masked = dict(spec, op="masked_grouped_mm", m_max=256, expected_m=[17, 33, 100])
    assert [key[6] for key in _warm._grouped_keys(masked)] == [32, 64, 128]


@pytest.mark.parametrize("spec,message", [
    ({"op": "gemm", "n": 64, "k": 64}, "op 'gemm': one of linear, mm"),
    ({"op": "linear", "n": 64}, "lacks k"),
    ({"op": "linear", "n": 64, "k": 64, "dtype": "int8"}, "dtype 'int8': one of bf16"),
    ({"op": "scaled_mm", "n": 64, "k": 64, "scale": "col"}, "scale 'col'"),
    ({"op": "grouped_mm", "n": 64, "k": 64}, "lacks groups"),
    ({"op": "masked_grouped_mm", "groups": 4, "n": 64, "k": 64}, "lacks m_max"),
    ({"op": "nvfp4_mm", "n": 64, "k": 64, "a_sf_layout": "row"}, "needs K a multiple of 256"),
    ({"op": "quantize_fp8"}, "lacks k"),
])
def test_warm_checks_specs_before_touching_a_device(spec, message):
    with pytest.raises(jitgemm.ArgumentError, match=message):
        jitgemm.warm([spec])
    assert not _device._devices
