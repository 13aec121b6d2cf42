"""The eager launch path of the dense ops down to the foreign calls, without a
GPU: host tensors, the device check lifted, plans from an offline context, and
stub_cuda.c answering the driver calls and jg_gemm_run (it records the
arguments it was given). Checks that the packed launch arguments carry each
call's own pointers, rows and beta, that the primary context is pushed on a
thread where another is current (and only there), and that a bad pointer
still raises before any launch."""
import ctypes
import threading

import pytest
import torch

import jitgemm
from jitgemm import _capi as C
from jitgemm import _ops as O
from stub_cuda import available, stub_device

bf16, fp32, e4m3 = torch.bfloat16, torch.float32, torch.float8_e4m3fn


def test_packed_args_are_the_structs_bytes():
    values = [0x1111_2222_3333_4440, 0x10, 0x20, 0x30, 1.5, -2.25, 12345, 0x40, 0x50, 0x60,
              0x70, 0x80, 4096]
    assert len(values) == len(C.GemmArgs._fields_)
    assert C.GEMM_ARGS.pack(*values) == bytes(C.GemmArgs(*values))


@pytest.fixture
def stub(cache, tmp_path, monkeypatch):
    if not available(C.library_path()):
        pytest.skip("needs a C compiler and the meson build's include/ (version.h)")
    monkeypatch.setattr(O, "_MEMO", {})
    dev, lib = stub_device(str(tmp_path), monkeypatch)
    yield lib


def last_call(lib):
    args = C.GemmArgs.from_address(lib.stub_last_args())
    return args, lib.stub_last_stream()


def test_dense_calls_pass_their_own_pointers(stub):
    w = torch.randn(512, 256).to(bf16)
    for rows in (1, 33, 64):  # one M bucket past the first: the memo's and plan's entries reused
        x = torch.randn(rows, 256).to(bf16)
        runs = stub.stub_runs()
        out = jitgemm.linear(x, w)
        assert stub.stub_runs() == runs + 1 and out.shape == (rows, 512)
        args, stream = last_call(stub)
        assert (args.a, args.b, args.c, args.d) == (x.data_ptr(), w.data_ptr(), None,
                                                    out.data_ptr())
        assert (args.alpha, args.beta, args.m, stream) == (1.0, 0.0, rows, 0x5000)
        assert args.a_scale is None and args.workspace is None and args.workspace_bytes == 0
    # a bias of the output's shape and dtype is the C operand, beta 1
    c = torch.randn(rows, 512).to(bf16)
    out = jitgemm.linear(x, w, c)
    args, _ = last_call(stub)
    assert (args.c, args.beta, args.d) == (c.data_ptr(), 1.0, out.data_ptr())
    # FP8 row scales reach the launch as the tensors given (already row-major)
    a, b = torch.zeros(5, 256, dtype=e4m3), torch.zeros(512, 256, dtype=e4m3)
    sa, sb = torch.ones(5, 1), torch.ones(512)
    out = jitgemm.scaled_mm(a, b, sa, sb)
    args, _ = last_call(stub)
    assert (args.a, args.b, args.d, args.m) == (a.data_ptr(), b.data_ptr(), out.data_ptr(), 5)
    assert (args.a_scale, args.b_scale) == (sa.data_ptr(), sb.data_ptr())


def test_misaligned_pointer_raises_before_the_launch(stub):
    w = torch.randn(512, 256).to(bf16)
    jitgemm.linear(torch.randn(4, 256).to(bf16), w)
    runs = stub.stub_runs()
    x = torch.zeros(4 * 256 + 4, dtype=bf16)[4:].view(4, 256)  # 8 bytes in
    with pytest.raises(jitgemm.ArgumentError, match="x's data .* is not 16-byte aligned"):
        jitgemm.linear(x, w)
    assert stub.stub_runs() == runs


def test_primary_context_pushed_only_where_another_is_current(stub):
    w = torch.randn(512, 256).to(bf16)
    x = torch.randn(8, 256).to(bf16)
    jitgemm.linear(x, w)
    assert stub.stub_pushes() == 0  # the primary context current: no push
    seen = {}

    def other_thread():
        stub.stub_set_current(0x2000)  # another context current on this thread only
        try:
            out = jitgemm.linear(x, w)  # the stub refuses a launch outside 0x1000
            seen["out"] = out.shape
        except Exception as e:  # reported to the test's thread
            seen["error"] = e
        seen["after"] = O.device(None).driver.current()

    t = threading.Thread(target=other_thread)
    t.start()
    t.join()
    assert "error" not in seen, seen.get("error")
    assert seen["out"] == (8, 512) and stub.stub_pushes() == 1
    assert seen["after"] == 0x2000  # popped: the thread's own context current again
    jitgemm.linear(x, w)
    assert stub.stub_pushes() == 1 and O.device(None).driver.current() == 0x1000


def test_launch_errors_carry_the_status(stub, monkeypatch):
    fail = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
        lambda plan, args, stream: C.JG_ERR_INVALID)
    monkeypatch.setattr(C, "gemm_run_packed", fail)
    with pytest.raises(jitgemm.JitGemmError) as e:
        jitgemm.linear(torch.randn(8, 256).to(bf16), torch.randn(512, 256).to(bf16))
    assert e.value.status_name == "JG_ERR_INVALID" and str(e.value).startswith("jitgemm.linear")
