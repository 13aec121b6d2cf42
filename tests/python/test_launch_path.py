"""The eager launch path of the dense ops down to the foreign calls, without a
GPU: host tensors, the device check lifted, plans from an offline context, and
stub_cuda.c answering the driver calls and jg_gemm_run (it records the
arguments it was given). Checks that the packed launch arguments carry each
call's own pointers, rows and beta; that unaligned problems (rows or pointers
off 16 bytes) get a workspace of the library's size from torch.empty, and
aligned ones none; and that the primary context is pushed on a thread where
another is current (and only there)."""
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


@pytest.fixture
def spies(stub, monkeypatch):
    """Counts of jg_plan_workspace_bytes calls and of torch.empty calls (with
    their arguments) made while a test runs."""
    seen = {"queries": 0, "empty": []}
    query, empty = C.lib.jg_plan_workspace_bytes, torch.empty

    def counted_query(plan, out):
        seen["queries"] += 1
        return query(plan, out)

    def recorded_empty(*args, **kwargs):
        seen["empty"].append((args, kwargs))
        return empty(*args, **kwargs)

    monkeypatch.setattr(C.lib, "jg_plan_workspace_bytes", counted_query)
    monkeypatch.setattr(torch, "empty", recorded_empty)
    return seen


def pitch(k, size):
    """A row of K elements as the pack copies it: on 128-byte lines (jitgemm.h)."""
    return -(-k * size // 128) * 128


def key_of(lib):
    """The plan key of the last launch's plan."""
    plans = O.device(None).plans
    return next(k for k, p in plans.items() if p == lib.stub_last_plan())


def test_aligned_calls_get_no_workspace(stub, spies):
    w = torch.randn(512, 256).to(bf16)
    for rows in (40, 64, 33):  # one plan (bucket 64): one size query, at planning
        x = torch.randn(rows, 256).to(bf16)
        spies["empty"].clear()
        out = jitgemm.linear(x, w)
        args, _ = last_call(stub)
        assert args.workspace is None and args.workspace_bytes == 0
        assert [a for a, _ in spies["empty"]] == [((rows, 512),)]  # the output only
        assert out.shape == (rows, 512)
    assert spies["queries"] == 1
    assert O.device(None).records[key_of(stub)].workspace_bytes == 0
    # rows off 16 bytes in the output and a C bias alone: stored and read
    # element by element, nothing to pack
    out = jitgemm.linear(x, torch.randn(37, 256).to(bf16), torch.randn(33, 39).to(bf16)[:, :37])
    args, _ = last_call(stub)
    assert args.workspace is None and args.workspace_bytes == 0 and out.shape == (33, 37)
    assert spies["queries"] == 2 and O.device(None).records[key_of(stub)].workspace_bytes == 0


def test_unaligned_rows_get_the_pack_workspace(stub, spies):
    """K = 999: rows of 1998 bytes, off 16 both for A and B. Each call gets
    (M + N) rows of K elements on 128-byte lines from torch.empty (uint8, on
    the op's device), exactly the library's jg_plan_workspace_bytes where M
    is the plan's M hint."""
    n, k = 130, 999
    w = torch.randn(n, k).to(bf16)
    dev = O.device(None)
    for rows in (64, 37, 64):
        x = torch.randn(rows, k).to(bf16)
        spies["empty"].clear()
        out = jitgemm.linear(x, w)
        args, _ = last_call(stub)
        want = (rows + n) * pitch(k, 2)
        assert args.workspace_bytes == want and args.workspace % 16 == 0
        assert (args.a, args.b, args.d, args.m) == (x.data_ptr(), w.data_ptr(), out.data_ptr(),
                                                    rows)
        assert spies["empty"][-1] == ((want,), {"dtype": torch.uint8, "device": x.device})
        key = key_of(stub)
        assert key[5] == 64 and dev.records[key].workspace_bytes == (64 + n) * pitch(k, 2)
    assert spies["queries"] == 1  # once per plan, not per call


def test_workspace_for_another_m_is_the_librarys(stub):
    """The per-call size (the plan's figure with A's rows resized to M) equals
    what the library reports for a plan whose M hint is that M: below the
    hint, and past the largest hint (16384), where the plan's own figure
    would be too small and the library would not pack."""
    k = 77  # fp16 rows of 154 bytes
    dev = O.device(None)
    for m, n in ((20, 48), (16500, 24)):
        x, w = torch.zeros(m, k, dtype=torch.float16), torch.zeros(n, k, dtype=torch.float16)
        jitgemm.mm(x, w)
        args, _ = last_call(stub)
        key = key_of(stub)
        assert key[5] != m  # the bucket's hint, not m
        exact = (key[0],) + key[1:5] + (m,) + key[6:]
        dev.gemm_plan(exact)
        assert args.workspace_bytes == dev.records[exact].workspace_bytes == \
            (m + n) * pitch(k, 2)


def test_misaligned_pointer_takes_the_unaligned_plan(stub, spies):
    """x 8 bytes off 16 with rows 512 bytes apart: the problem planned with
    JG_GEMM_UNALIGNED (once), both operands packed. A pointer off 16 bytes
    whose rows are already off 16 needs no other plan."""
    n, k, m = 512, 256, 4
    w = torch.randn(n, k).to(bf16)
    jitgemm.linear(torch.randn(m, k).to(bf16), w)
    base = key_of(stub)
    assert not base[0] & C.JG_GEMM_UNALIGNED
    x = torch.zeros(m * k + 4, dtype=bf16)[4:].view(m, k)  # 8 bytes in
    for _ in range(2):
        out = jitgemm.linear(x, w)
        args, _ = last_call(stub)
        assert key_of(stub) == (base[0] | C.JG_GEMM_UNALIGNED,) + base[1:]
        assert (args.a, args.d) == (x.data_ptr(), out.data_ptr())
        assert args.workspace_bytes == (m + n) * pitch(k, 2) and args.workspace % 16 == 0
    assert spies["queries"] == 2  # the aligned plan's and the unaligned one's
    jitgemm.linear(torch.randn(m, k).to(bf16), w)  # aligned again: the first plan, no workspace
    args, _ = last_call(stub)
    assert key_of(stub) == base and args.workspace is None
    # rows off 16 bytes (K = 99) take any element-aligned pointer: one plan for both
    w99 = torch.randn(n, 99).to(bf16)
    jitgemm.linear(torch.randn(m, 99).to(bf16), w99)
    rows_off = key_of(stub)
    jitgemm.linear(torch.zeros(m * 99 + 1, dtype=bf16)[1:].view(m, 99), w99)
    assert key_of(stub) == rows_off and not rows_off[0] & C.JG_GEMM_UNALIGNED


def test_fp8_unaligned_rows_get_the_workspace(stub):
    """scaled_mm with K = 1000 (rows 1000 bytes apart) and block scales."""
    m, n, k = 5, 384, 1000
    a, b = torch.zeros(m, k, dtype=e4m3), torch.zeros(n, k, dtype=e4m3)
    sa, sb = torch.ones(m, 8), torch.ones(3, 8)
    out = jitgemm.scaled_mm(a, b, sa, sb)
    args, _ = last_call(stub)
    assert (args.a, args.b, args.d) == (a.data_ptr(), b.data_ptr(), out.data_ptr())
    assert (args.a_scale, args.b_scale) == (sa.data_ptr(), sb.data_ptr())
    assert args.workspace_bytes == (m + n) * pitch(k, 1) and args.workspace % 16 == 0


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
