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
    {"op": "nvfp4_grouped_mm", "groups": 4, "n": 256, "k": 512, "m": 300},
    {"op": "masked_nvfp4_grouped_mm", "groups": 4, "n": 256, "k": 512, "m_max": 128,
     "expected_m": 16},
    {"op": "quantize_fp8", "k": 1000, "scale": "tensor"},
    {"op": "quantize_fp8", "k": 1000, "scale": "row", "dtype": "fp16"},
    {"op": "quantize_fp8", "k": 1000, "scale": "block"},
    {"op": "quantize_fp8", "k": 1000, "scale": "block", "block_rows": 128},
    {"op": "quantize_nvfp4", "k": 512},
    {"op": "quantize_nvfp4", "k": 512, "sf_layout": "row"},
]


def test_every_op_plans_offline(cache):
    records = jitgemm.warm(SPECS, arch="sm_90a")
    ops = [r.op for r in records]
    assert ops == ["gemm"] * 8 + ["grouped"] * 9 + ["quantize"] * 6
    for r in records:
        assert r.origin in ("compiled", "disk", "memory")
        if r.op != "quantize":
            assert r.kernel_name.startswith("jg_") and r.block_m and r.threads
    names = [r.kernel_name for r in records]
    assert "nvfp4" in names[6] and "nvfp4" in names[7], names[6:8]
    assert all("e4m3" in n for n in names[3:6] + names[9:12] + names[14:15]), names
    assert all("nvfp4" in n for n in names[15:17]), names
    assert any(cache.rglob("*.cubin"))
    # the same plans in a new context: from the disk cache, nothing compiled
    _device._offline.clear()
    again = jitgemm.warm(SPECS, arch="sm_90a")
    assert [r.kernel_name for r in again] == names
    assert all(r.origin in ("disk", "memory") for r in again)
    assert "disk" in {r.origin for r in again}


def test_warm_plans_unaligned_problems_with_their_workspace(cache):
    """K = 1001 bf16 (rows 2002 bytes apart): the plan also holds the pack,
    and reports (hint + N) rows of K elements on 128-byte lines; an aligned
    problem, none."""
    recs = jitgemm.warm([{"op": "linear", "n": 48, "k": 1001, "m": 16},
                         {"op": "linear", "n": 48, "k": 1024, "m": 16}], arch="sm_90a")
    assert [r.workspace_bytes for r in recs] == [(16 + 48) * 2048, 0]


def test_library_errors_carry_its_message(cache):
    dev = _device.offline_device("sm_90a")
    # an N-major e4m3 B (8: JG_GEMM_B_N_MAJOR), which no op passes
    key = (C.JG_GEMM_M_GENERIC | 8, C.JG_E4M3, C.JG_E4M3, 0, C.JG_BF16, 16, 64, 64, 64, 64, 0,
           64, C.JG_SCALE_TENSOR, 0, 0)
    with pytest.raises(jitgemm.JitGemmError,
                       match=r"jg_gemm_plan: .*JG_GEMM_B_N_MAJOR with e4m3 operands") as e:
        dev.gemm_plan(key)
    assert e.value.status_name == "JG_ERR_UNSUPPORTED" and e.value.status < 0
    assert not isinstance(e.value, jitgemm.ArgumentError)


def test_offline_arch_must_be_known(cache):
    with pytest.raises(jitgemm.JitGemmError, match="jg_context_create on offline .*sm_80"):
        jitgemm.warm([{"op": "linear", "n": 64, "k": 64, "m": 1}], arch="sm_80")


# ---- the ops end to end: with the device check lifted and the offline context
# standing in for a GPU's, host tensors take every op's real path (checks,
# memo, plan key, plan, launch arguments) down to jg_gemm_run / jg_grouped_run,
# which check every pointer, the rows and the scales before refusing to launch
# offline: a call must come back JG_ERR_OFFLINE and nothing else.

import torch  # noqa: E402

from jitgemm import _checks as K  # noqa: E402
from jitgemm import _ops as O  # noqa: E402

bf16, fp16, fp32, e4m3 = torch.bfloat16, torch.float16, torch.float32, torch.float8_e4m3fn


@pytest.fixture
def offline_ops(cache, monkeypatch):
    dev = _device.offline_device("sm_90a")
    monkeypatch.setattr(K, "on_cuda", lambda op, **tensors: None)
    monkeypatch.setattr(O, "device", lambda index: dev)
    O._MEMO.clear()
    yield dev
    O._MEMO.clear()


def refused_offline(call):
    with pytest.raises(jitgemm.JitGemmError) as e:
        call()
    assert e.value.status_name == "JG_ERR_OFFLINE", str(e.value)


def z(*shape, dtype=bf16):
    return torch.zeros(shape, dtype=dtype)


def test_dense_ops_end_to_end(offline_ops):
    dev = offline_ops
    w = z(512, 256)
    refused_offline(lambda: jitgemm.linear(z(2, 20, 256), w))
    planned = len(dev.records)
    for m in (33, 45, 48):  # the 40 rows' bucket (48): no new plan
        refused_offline(lambda: jitgemm.linear(z(m, 256), w))
    refused_offline(lambda: jitgemm.linear(z(m, 256), w, z(m, 512, dtype=fp32), fp32))
    assert len(dev.records) == planned + 1  # the C operand's plan
    refused_offline(lambda: jitgemm.mm(z(7, 256, dtype=fp16), z(512, 256, dtype=fp16)))
    # pointers and rows off 16 bytes: the library's launch checks take the
    # pointers with the plan the op picks (a TMA plan would refuse x with
    # JG_ERR_MISALIGNED), and the plans that pack report their workspace
    x = z(4 * 256 + 4)[4:].view(4, 256)  # 8 bytes in, rows 512 bytes apart
    refused_offline(lambda: jitgemm.linear(x, w))
    refused_offline(lambda: jitgemm.linear(z(3, 99), z(70, 99), z(3, 71)[:, :70]))  # C rows 142 B
    refused_offline(lambda: jitgemm.mm(z(5, 99)[:, 1:], z(70, 99)[:, 1:], fp32))
    packs = [r for r in dev.records.values() if r.workspace_bytes]
    assert len(packs) == 3 and all(r.key[0] & C.JG_GEMM_UNALIGNED or r.key[8] % 8
                                   for r in packs)
    # FP8 in torch._scaled_mm's conventions: b [K, N] column-major, scale_b [1, N]
    a, b_torch = z(5, 512, dtype=e4m3), z(384, 512, dtype=e4m3).t()
    refused_offline(lambda: jitgemm.scaled_mm(a, b_torch.t(), torch.ones(5, 1),
                                              torch.ones(1, 384).t()))
    refused_offline(lambda: jitgemm.scaled_mm(a, b_torch.t(), torch.ones(5, 4),
                                              torch.ones(4, 3).t()))  # 128x128: [K/128, N/128] view
    refused_offline(lambda: jitgemm.scaled_mm(z(5, 1000, dtype=e4m3), z(384, 1000, dtype=e4m3),
                                              torch.ones(5, 8), torch.ones(3, 8)))  # K = 1000
    # the library's checks are real: a launch without its scales is refused as such
    e = next(v for k, v in O._MEMO.items() if k[0] == "scaled_mm")
    with pytest.raises(jitgemm.JitGemmError, match="a_scale") as err:
        O._dense("jitgemm.scaled_mm", e, a, b_torch.t(), None, None)
    assert err.value.status_name == "JG_ERR_NULL_POINTER"
    # out=: the library's launch checks take out's pointer with the plan for
    # it (ldd its row stride; 2 bytes in, rows 1040 bytes apart: a TMA store
    # would refuse it with JG_ERR_MISALIGNED)
    refused_offline(lambda: jitgemm.linear(z(4, 256), w, out=z(4, 512)))
    wide = z(4, 520)
    refused_offline(lambda: jitgemm.linear(z(4, 256), w, out=wide[:, 1:513]))
    assert O._MEMO and any(k[11] == 520 and k[0] & C.JG_GEMM_UNALIGNED for k in dev.plans)
    refused_offline(lambda: jitgemm.mm(z(3, 99), z(70, 99), fp32, out=z(3, 71, dtype=fp32)[:, 1:]))
    refused_offline(lambda: jitgemm.scaled_mm(a, b_torch.t(), torch.ones(5, 1),
                                              torch.ones(1, 384).t(), out=z(5, 384)))
    # NVFP4
    ops = []
    for rows in (5, 256):
        ops += [z(rows, 256, dtype=torch.uint8),
                z(*K.sf_shape(C.JG_SF_SWIZZLED_128X4, rows, 512), dtype=e4m3), torch.ones(1)]
    refused_offline(lambda: jitgemm.nvfp4_mm(*ops))


def test_grouped_ops_end_to_end(offline_ops):
    groups, n, k = 4, 384, 512
    ends = torch.tensor([10, 10, 200, 300], dtype=torch.int32)
    w = z(groups, n, k)
    refused_offline(lambda: jitgemm.grouped_mm(z(300, k), w.transpose(1, 2), ends))
    refused_offline(lambda: jitgemm.grouped_mm(  # [G + 1] offsets from 0
        z(300, k), w.transpose(1, 2), torch.cat([ends.new_zeros(1), ends])))
    qw = z(groups, n, k, dtype=e4m3)
    for sa, sb in ((torch.ones(300), torch.ones(groups, n)),
                   (torch.ones(300, 4), torch.ones(groups, 3, 4).transpose(1, 2)),
                   (torch.ones(groups), torch.ones(groups))):
        refused_offline(lambda: jitgemm.scaled_grouped_mm(z(300, k, dtype=e4m3),
                                                          qw.transpose(1, 2), sa, sb, ends))
    counts = torch.zeros(groups, dtype=torch.int32)
    refused_offline(lambda: jitgemm.masked_grouped_mm(z(groups, 32, k), w, counts,
                                                      expected_m=5))
    refused_offline(lambda: jitgemm.masked_scaled_grouped_mm(
        z(groups, 32, k, dtype=e4m3), qw, torch.ones(groups, 32, 4), torch.ones(groups, 3, 4),
        counts))
    # NVFP4: contiguous (A's scales row-major), masked (swizzled)
    u8, sw, row = torch.uint8, C.JG_SF_SWIZZLED_128X4, C.JG_SF_ROW_MAJOR
    b = (z(groups, n, k // 2, dtype=u8), z(groups, *K.sf_shape(sw, n, k), dtype=e4m3),
         torch.ones(groups))
    refused_offline(lambda: jitgemm.nvfp4_grouped_mm(
        z(300, k // 2, dtype=u8), z(*K.sf_shape(row, 300, k), dtype=e4m3), torch.ones(groups),
        *b, ends))
    refused_offline(lambda: jitgemm.masked_nvfp4_grouped_mm(
        z(groups, 128, k // 2, dtype=u8), z(groups, *K.sf_shape(sw, 128, k), dtype=e4m3),
        torch.ones(groups), *b, counts))


def test_quantizers_end_to_end(offline_ops):
    """Offline, a quantizer compiles and its launch is refused (quietly: warm
    relies on it); each mode's kernel is recorded once."""
    dev = offline_ops
    for mode, rows in (("tensor", 1), ("row", 1), ("block", 1), ("block", 128)):
        q, s = jitgemm.quantize_fp8(z(300, 1000), mode, rows)
        assert q.dtype == e4m3 and s.dtype == fp32
    codes, sf, g = jitgemm.quantize_nvfp4(z(130, 512))
    assert codes.shape == (130, 256) and sf.shape == (256, 32)
    assert sum(r.op == "quantize" for r in dev.records.values()) == 5
