"""The plans the ops make, made by the library for real without a GPU: warm()
with arch="sm_90a" plans every op family through an offline context, which
validates each problem the package builds (every field of jg_gemm_problem and
jg_grouped_problem in its place) and compiles its kernel with NVRTC into a
temporary disk cache; a second context loads them from that cache. Library
errors come back as JitGemmError with jg_context_last_error's text."""
import pytest

import jitgemm
from jitgemm import _capi as C
from jitgemm import _device

SPECS = [
    {"op": "linear", "n": 512, "k": 256, "m": [1, 1000]},
    {"op": "linear", "n": 256, "k": 512, "dtype": "fp16", "out_dtype": "fp32", "bias": "c",
     "m": 64},
    {"op": "scaled_mm", "n": 512, "k": 512, "scale": "tensor", "m": 8},
    {"op": "scaled_mm", "n": 512, "k": 512, "scale": "row", "m": 300},
    {"op": "scaled_mm", "n": 384, "k": 640, "scale": "block", "m": 100},
    {"op": "nvfp4_mm", "n": 512, "k": 512, "m": 16},
    {"op": "nvfp4_mm", "n": 512, "k": 512, "m": 1000, "a_sf_layout": "row",
     "b_sf_layout": "row"},
    {"op": "grouped_mm", "groups": 8, "n": 256, "k": 512, "m": 700},
    {"op": "scaled_grouped_mm", "groups": 4, "n": 384, "k": 512, "scale": "row", "m": 300},
    {"op": "scaled_grouped_mm", "groups": 4, "n": 384, "k": 512, "scale": "block", "m": 300},
    {"op": "scaled_grouped_mm", "groups": 4, "n": 384, "k": 512, "scale": "tensor", "m": 300},
    {"op": "masked_grouped_mm", "groups": 6, "n": 256, "k": 512, "m_max": 40,
     "expected_m": [0, 8]},
    {"op": "masked_scaled_grouped_mm", "groups": 4, "n": 384, "k": 512, "m_max": 32,
     "scale": "block"},
    {"op": "quantize_fp8", "k": 1000, "scale": "tensor"},
    {"op": "quantize_fp8", "k": 1000, "scale": "row", "dtype": "fp16"},
    {"op": "quantize_fp8", "k": 1000, "scale": "block"},
    {"op": "quantize_fp8", "k": 1000, "scale": "block", "block_rows": 128},
    {"op": "quantize_nvfp4", "k": 512},
    {"op": "quantize_nvfp4", "k": 512, "sf_layout": "row"},
]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    """A private disk cache, and offline contexts made afresh (they read
    JITGEMM_CACHE_DIR when created)."""
    d = tmp_path / "cache"
    d.mkdir(mode=0o700)
    monkeypatch.setenv("JITGEMM_CACHE_DIR", str(d))
    monkeypatch.setenv("JITGEMM_CACHE", "readwrite")
    saved = dict(_device._offline)
    _device._offline.clear()
    yield d
    _device._offline.clear()
    _device._offline.update(saved)


def test_every_op_plans_offline(cache):
    records = jitgemm.warm(SPECS, arch="sm_90a")
    ops = [r.op for r in records]
    assert ops == ["gemm"] * 8 + ["grouped"] * 7 + ["quantize"] * 6
    for r in records:
        assert r.origin in ("compiled", "disk", "memory")
        if r.op != "quantize":
            assert r.kernel_name.startswith("jg_") and r.block_m and r.threads
    names = [r.kernel_name for r in records]
    assert "nvfp4" in names[6] and "nvfp4" in names[7], names[6:8]
    assert all("e4m3" in n for n in names[3:6] + names[9:12] + names[14:15]), names
    assert any(cache.rglob("*.cubin"))
    # the same plans in a new context: from the disk cache, nothing compiled
    _device._offline.clear()
    again = jitgemm.warm(SPECS, arch="sm_90a")
    assert [r.kernel_name for r in again] == names
    assert all(r.origin in ("disk", "memory") for r in again)
    assert "disk" in {r.origin for r in again}


def test_library_errors_carry_its_message(cache):
    dev = _device.offline_device("sm_90a")
    key = (C.JG_GEMM_M_GENERIC, C.JG_FP32, C.JG_FP32, 0, C.JG_BF16, 16, 64, 64, 64, 64, 0, 64,
           0, 0, 0)  # an FP32 A, which no op passes
    with pytest.raises(jitgemm.JitGemmError, match=r"jg_gemm_plan: .*a_type fp32") as e:
        dev.gemm_plan(key)
    assert e.value.status_name == "JG_ERR_UNSUPPORTED" and e.value.status < 0
    assert not isinstance(e.value, jitgemm.ArgumentError)


def test_offline_arch_must_be_known(cache):
    with pytest.raises(jitgemm.JitGemmError, match="jg_context_create on offline .*sm_80"):
        jitgemm.warm([{"op": "linear", "n": 64, "k": 64, "m": 1}], arch="sm_80")


# ---- launch arguments: jg_gemm_run and jg_grouped_run check every pointer,
# the rows and the scales before an offline context refuses the launch, so a
# launch built as the ops build it (host tensors standing in for device ones)
# must come back JG_ERR_OFFLINE and nothing else.

import torch  # noqa: E402

from jitgemm import _checks as K  # noqa: E402
from jitgemm import _ops as O  # noqa: E402

bf16, fp32, e4m3 = torch.bfloat16, torch.float32, torch.float8_e4m3fn


def offline_call(spec, key, grouped=False):
    e = O._Call.__new__(O._Call)
    e.spec, e.key, e.dev, e.plan, e.grouped = spec, key, _device.offline_device("sm_90a"), 0, \
        grouped
    return e


def refused_offline(launch):
    with pytest.raises(jitgemm.JitGemmError) as e:
        launch()
    assert e.value.status_name == "JG_ERR_OFFLINE", str(e.value)


def test_dense_launch_arguments(cache):
    x, w, c = torch.zeros(5, 256, dtype=bf16), torch.zeros(512, 256, dtype=bf16), \
        torch.zeros(5, 512, dtype=fp32)
    g = K.gemm("linear", x, w, c, fp32, K.HALF, None)
    e = offline_call(g, O.gemm_key(g, C.JG_BF16, C.JG_FP32, True, C.JG_SCALE_NONE))
    out = torch.empty(g.out_shape, dtype=fp32)
    refused_offline(lambda: O._gemm("linear", e, x, w, out, c))
    # FP8, row scales
    a, b = torch.zeros(5, 512, dtype=e4m3), torch.zeros(384, 512, dtype=e4m3)
    sa, sb = torch.ones(5, 1), torch.ones(1, 384)
    s = K.scaled_mm("scaled_mm", a, b, sa, sb, None, None)
    e = offline_call(s.gemm, O.gemm_key(s.gemm, C.JG_E4M3, C.JG_BF16, False, s.scale))
    out = torch.empty(s.gemm.out_shape, dtype=bf16)
    refused_offline(lambda: O._gemm("scaled_mm", e, a, b, out, None,
                                    *O._fp8_scale_args(s.scale, sa, sb)))
    with pytest.raises(jitgemm.JitGemmError, match="a_scale") as err:  # the check is real
        O._gemm("scaled_mm", e, a, b, out)
    assert err.value.status_name == "JG_ERR_NULL_POINTER"
    # NVFP4, swizzled scales
    ops = []
    for rows in (5, 256):
        ops += [torch.zeros(rows, 256, dtype=torch.uint8),
                torch.zeros(K.sf_shape(C.JG_SF_SWIZZLED_128X4, rows, 512), dtype=e4m3),
                torch.ones(1)]
    s = K.nvfp4_mm("nvfp4_mm", *ops, None, "swizzled", "swizzled")
    g = O.nvfp4_gemm(s)
    e = offline_call(g, O.gemm_key(g, C.JG_NVFP4, C.JG_BF16, False, C.JG_SCALE_NVFP4,
                                   (s.a_layout, s.b_layout)))
    out = torch.empty((s.m, s.n), dtype=bf16)
    refused_offline(lambda: O._gemm("nvfp4_mm", e, ops[0], ops[3], out, None, ops[2], ops[5],
                                    ops[1], ops[4]))


def test_grouped_launch_arguments(cache):
    groups, n, k = 4, 384, 512
    a, w = torch.zeros(300, k, dtype=e4m3), torch.zeros(groups, n, k, dtype=e4m3)
    sa, sb = torch.ones(300, 4), torch.ones(groups, 3, 4).transpose(1, 2)
    offs = torch.zeros(groups + 1, dtype=torch.int32)
    g = K.grouped_scales("scaled_grouped_mm",
                         K.grouped_mm("scaled_grouped_mm", a, w.transpose(1, 2), offs, None,
                                      (e4m3,), bf16), sa, sb, False)
    assert g.scale == C.JG_SCALE_BLOCK
    e = offline_call(g, O.grouped_key(g, C.JG_GROUPED_CONTIGUOUS, C.JG_E4M3, C.JG_BF16,
                                      O.m_hint(75)), grouped=True)
    out = torch.empty(g.out_shape, dtype=bf16)
    refused_offline(lambda: O._grouped_launch("scaled_grouped_mm", e, a, w, offs, out,
                                              *O._grouped_scale_args(g, sa, sb, False)))
    a, w = torch.zeros(groups, 32, k, dtype=bf16), torch.zeros(groups, n, k, dtype=bf16)
    counts = torch.zeros(groups, dtype=torch.int32)
    g = K.masked_grouped_mm("masked_grouped_mm", a, w, counts, None, K.HALF, None)
    e = offline_call(g, O.grouped_key(g, C.JG_GROUPED_MASKED, C.JG_BF16, C.JG_BF16, 0),
                     grouped=True)
    out = torch.empty(g.out_shape, dtype=bf16)
    refused_offline(lambda: O._grouped_launch("masked_grouped_mm", e, a, w, counts, out))
