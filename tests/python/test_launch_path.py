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
from jitgemm import _checks as K
from jitgemm import _ops as O
from stub_cuda import available, stub_device

bf16, fp32, e4m3 = torch.bfloat16, torch.float32, torch.float8_e4m3fn


def test_packed_args_are_the_structs_bytes():
    values = [0x1111_2222_3333_4440, 0x10, 0x20, 0x30, 1.5, -2.25, 12345, 0x40, 0x50, 0x60,
              0x70, 0x80, 4096]
    assert len(values) == len(C.GemmArgs._fields_)
    assert C.GEMM_ARGS.pack(*values) == bytes(C.GemmArgs(*values))
    # the pointers packed alone, then the other fields' bytes (a memo entry's args_tail)
    tail = C.GEMM_ARGS.pack(0, 0, 0, 0, *values[4:])[C.GEMM_POINTERS.size:]
    assert C.GEMM_POINTERS.pack(*values[:4]) + tail == bytes(C.GemmArgs(*values))


def test_packed_grouped_args_are_the_structs_bytes():
    """GROUPED_ARGS: jg_grouped_args's fields (pointers as ints), then the
    three pointers of the one-element arrays."""
    names = [name for name, _ in C.GroupedArgs._fields_]
    values = [0x1000 + 8 * i for i in range(len(names))]
    values[names.index("alpha")], values[names.index("beta")] = 1.5, -2.25
    packed = C.GROUPED_ARGS.pack(*values, 0xa0, 0xb0, 0xd0)
    assert len(packed) == C.GROUPED_ARRAYS + 24
    args = C.GroupedArgs.from_buffer_copy(packed[:C.GROUPED_ARRAYS])
    for name, want in zip(names, values):
        got = getattr(args, name)
        if isinstance(got, ctypes._Pointer):
            got = ctypes.cast(got, ctypes.c_void_p).value
        assert got == want, name
    assert packed[C.GROUPED_ARRAYS:] == C.GEMM_ARGS.pack(
        0xa0, 0xb0, 0xd0, *[0] * (len(C.GemmArgs._fields_) - 3))[:24]
    # in two parts: the fields before rows (a thread's buffer packs them once), and
    # from rows on with the arrays (each launch), at rows' offset
    rows = names.index("rows")
    assert C.GROUPED_HEAD.size == C.GROUPED_ROWS
    assert C.GROUPED_HEAD.pack(*values[:rows]) + C.GROUPED_LAUNCH.pack(
        *values[rows:], 0xa0, 0xb0, 0xd0) == packed


def make_stub(tmp_path, monkeypatch, in_context=None):
    if not available(C.library_path()):
        pytest.skip("needs a C compiler and the meson build's include/ (version.h)")
    monkeypatch.setattr(O, "_MEMO", {})
    return stub_device(str(tmp_path), monkeypatch, in_context)[1]


@pytest.fixture
def stub(cache, tmp_path, monkeypatch):
    yield make_stub(tmp_path, monkeypatch)


@pytest.fixture(params=[True, False], ids=["in_context", "asks_driver"])
def either_stub(cache, tmp_path, monkeypatch, request):
    """(stub library, in_context): the launches of the in-context calls (0.9),
    or of jg_gemm_run and jg_grouped_run after the package asks the driver."""
    yield make_stub(tmp_path, monkeypatch, request.param), request.param


def last_call(lib):
    args = C.GemmArgs.from_address(lib.stub_last_args())
    return args, lib.stub_last_stream()


def test_dense_calls_pass_their_own_pointers(stub):
    w = torch.randn(512, 256).to(bf16)
    for rows in (1, 49, 64):  # one M bucket past the first: the memo's and plan's entries reused
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
    # NVFP4: codes, global scales (as a_scale, b_scale) and block scales
    ops = []
    for rows in (5, 256):  # K = 512: 256 bytes of codes a row
        sf_shape = K.sf_shape(C.JG_SF_SWIZZLED_128X4, rows, 512)
        ops += [torch.zeros(rows, 256, dtype=torch.uint8), torch.zeros(sf_shape, dtype=e4m3),
                torch.ones(1)]
    out = jitgemm.nvfp4_mm(*ops)
    args, _ = last_call(stub)
    a, a_sf, a_global, b, b_sf, b_global = ops
    assert (args.a, args.b, args.c, args.d, args.m) == (a.data_ptr(), b.data_ptr(), None,
                                                        out.data_ptr(), 5)
    assert (args.a_scale, args.b_scale) == (a_global.data_ptr(), b_global.data_ptr())
    assert (args.a_sf, args.b_sf) == (a_sf.data_ptr(), b_sf.data_ptr())
    assert out.shape == (5, 256) and out.dtype == bf16


@pytest.fixture
def spies(stub, monkeypatch):
    """Counts of jg_plan_workspace_bytes calls, and the torch.empty and
    Tensor.new_empty calls (with their arguments) that allocate, made while
    a test runs (the outputs come from new_empty of a tensor of no elements,
    which takes no memory and is left out)."""
    seen = {"queries": 0, "empty": []}
    query, empty, new_empty = C.lib.jg_plan_workspace_bytes, torch.empty, torch.Tensor.new_empty

    def counted_query(plan, out):
        seen["queries"] += 1
        return query(plan, out)

    def recorded(allocate):
        def call(*args, **kwargs):
            t = allocate(*args, **kwargs)
            if t.numel():
                seen["empty"].append((args[1:] if allocate is new_empty else args, kwargs))
            return t
        return call

    monkeypatch.setattr(C.lib, "jg_plan_workspace_bytes", counted_query)
    monkeypatch.setattr(torch, "empty", recorded(empty))
    monkeypatch.setattr(torch.Tensor, "new_empty", recorded(new_empty))
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
    for rows in (40, 48, 33):  # one plan (bucket 48): one size query, at planning
        x = torch.randn(rows, 256).to(bf16)
        spies["empty"].clear()
        out = jitgemm.linear(x, w)
        args, _ = last_call(stub)
        assert args.workspace is None and args.workspace_bytes == 0
        assert [a for a, _ in spies["empty"]] == [(rows, 512)]  # the output only (sizes as ints)
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
    for rows in (64, 50, 64):
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


def in_other_context(stub, call):
    """call() on a new thread whose current context is another (0x2000):
    {"out": its result's shape, "after": the thread's current context after
    it}; fails the test where it raises."""
    seen = {}

    def other_thread():
        stub.stub_set_current(0x2000)  # another context current on this thread only
        try:
            seen["out"] = call().shape  # the stub refuses a launch outside 0x1000
        except Exception as e:  # reported to the test's thread
            seen["error"] = e
        seen["after"] = O.device(None).driver.current()

    t = threading.Thread(target=other_thread)
    t.start()
    t.join()
    assert "error" not in seen, seen.get("error")
    return seen


def test_primary_context_pushed_only_where_another_is_current(either_stub):
    """Pushed for the launch and popped after it, by the in-context launch
    itself (no driver call of the package's) or by the package after asking
    the driver (one a launch)."""
    stub, in_context = either_stub
    w = torch.randn(512, 256).to(bf16)
    x = torch.randn(8, 256).to(bf16)
    jitgemm.linear(x, w)  # plans (asking the driver: the plan is made in the context)
    gets = stub.stub_gets()
    jitgemm.linear(x, w)
    jitgemm.linear(x, w)
    assert stub.stub_gets() - gets == (0 if in_context else 2)
    assert stub.stub_pushes() == 0  # the primary context current: no push
    seen = in_other_context(stub, lambda: jitgemm.linear(x, w))
    assert seen["out"] == (8, 512) and stub.stub_pushes() == 1
    assert seen["after"] == 0x2000  # popped: the thread's own context current again
    jitgemm.linear(x, w)
    assert stub.stub_pushes() == 1 and O.device(None).driver.current() == 0x1000


def test_grouped_primary_context_pushed_where_another_is_current(either_stub):
    stub, in_context = either_stub
    a, b, ends = moe()
    jitgemm.grouped_mm(a, b, ends)  # plans
    gets = stub.stub_gets()
    jitgemm.grouped_mm(a, b, ends)
    assert stub.stub_gets() - gets == (0 if in_context else 1)
    assert stub.stub_pushes() == 0
    seen = in_other_context(stub, lambda: jitgemm.grouped_mm(a, b, ends))
    assert seen["out"] == (300, 384) and stub.stub_pushes() == 1 and seen["after"] == 0x2000


def test_launch_errors_carry_the_status(stub, monkeypatch):
    fail = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
        lambda plan, args, stream: C.JG_ERR_INVALID)
    monkeypatch.setattr(C, "gemm_run_packed", fail)
    with pytest.raises(jitgemm.JitGemmError) as e:
        jitgemm.linear(torch.randn(8, 256).to(bf16), torch.randn(512, 256).to(bf16))
    assert e.value.status_name == "JG_ERR_INVALID" and str(e.value).startswith("jitgemm.linear")


# ---- grouped: jg_grouped_run's packed arguments ------------------------------------------

def last_grouped(lib):
    """The last grouped launch: (args, (a[0], b[0], d[0]), stream)."""
    args = C.GroupedArgs.from_address(lib.stub_last_grouped())
    return args, tuple(lib.stub_grouped_ptr(i) for i in range(3)), lib.stub_last_stream()


def moe(groups=4, n=384, k=512, m=300, dtype=bf16):
    """a [m, K], b [G, K, N] (the transposed view of [G, N, K]), G end offsets."""
    ends = torch.tensor([10, 10, 200, m], dtype=torch.int32)[:groups]
    return torch.randn(m, k).to(dtype), torch.randn(groups, n, k).to(dtype).transpose(1, 2), ends


def test_grouped_calls_pass_their_own_pointers(stub):
    a, b, ends = moe()
    for call in range(3):  # the memo's entry and the thread's buffer reused
        if call == 2:
            a = torch.randn(300, 512).to(bf16)  # same metadata, other data
        runs = stub.stub_runs()
        out = jitgemm.grouped_mm(a, b, ends)
        assert stub.stub_runs() == runs + 1 and out.shape == (300, 384)
        args, ptrs, stream = last_grouped(stub)
        assert ptrs == (a.data_ptr(), b.data_ptr(), out.data_ptr()) and stream == 0x5000
        assert (args.alpha, args.beta) == (1.0, 0.0) and not args.c
        assert args.rows not in (None, ends.data_ptr())  # torch's G ends: a copy with 0 first
        assert args.a_scale is None and args.b_scale is None and args.workspace is None
    # G + 1 offsets from 0 are passed as they are
    offs = torch.cat([ends.new_zeros(1), ends])
    jitgemm.grouped_mm(a, b, offs)
    assert last_grouped(stub)[0].rows == offs.data_ptr()
    # each launch writes every field it may change: an FP8 call's scales are not left
    # in the thread's buffer for the next call
    sa, sb = torch.rand(300), torch.rand(4, 384)
    jitgemm.scaled_grouped_mm(a.to(e4m3), b.to(e4m3), sa, sb, offs)
    assert (last_grouped(stub)[0].a_scale, last_grouped(stub)[0].b_scale) == (
        sa.data_ptr(), sb.data_ptr())
    jitgemm.grouped_mm(a, b, offs)
    args, ptrs, _ = last_grouped(stub)
    assert args.a_scale is None and args.b_scale is None and args.a_sf is None
    assert ptrs[:2] == (a.data_ptr(), b.data_ptr()) and args.alpha == 1.0


def test_grouped_offsets_are_torchs_with_a_zero_first(stub, monkeypatch):
    """What the library reads as rows: F.pad's [0, ends...] (made by torch.cat
    of the device's zero), and F.pad itself where no zero could be made (a
    first call inside a CUDA graph capture)."""
    a, b, ends = moe()
    seen = []
    cat = torch.cat
    monkeypatch.setattr(torch, "cat", lambda ts: seen.append(cat(ts)) or seen[-1])
    jitgemm.grouped_mm(a, b, ends)
    assert len(seen) == 1 and seen[0].data_ptr() == last_grouped(stub)[0].rows
    assert torch.equal(seen[0], torch.nn.functional.pad(ends, (1, 0)))
    assert seen[0].dtype == torch.int32
    e = next(v for k, v in O._MEMO.items() if k[0] == "grouped_mm")
    assert e.pad_rows and e.zero is not None and int(e.zero) == 0
    e.zero = None  # as made while capturing
    assert torch.equal(O._offsets(e, ends), seen[0]) and len(seen) == 1


def test_grouped_memo_hit_still_checks_pointers_and_devices(stub):
    """A call whose metadata matches a memoized one's runs no checks but the
    pointers' (16 bytes for TMA): a view 8 bytes in is refused before any
    launch; a tensor on another device has another key, and its checks run."""
    a, b, ends = moe()
    jitgemm.grouped_mm(a, b, ends)
    base = torch.zeros(300 * 512 + 8, dtype=bf16)
    off = base[4:-4].view(300, 512)  # a's metadata, data 8 bytes off 16
    assert (off.shape, off.stride(), off.dtype) == (a.shape, a.stride(), a.dtype)
    runs = stub.stub_runs()
    with pytest.raises(jitgemm.ArgumentError, match="a's data .* not 16-byte aligned"):
        jitgemm.grouped_mm(off, b, ends)
    with pytest.raises(jitgemm.ArgumentError, match="b is on meta"):
        jitgemm.grouped_mm(a, b.to("meta"), ends)
    assert stub.stub_runs() == runs
    jitgemm.grouped_mm(base[8:].view(300, 512), b, ends)  # 16 bytes in: launched
    assert stub.stub_runs() == runs + 1


def test_dense_memo_hit_still_checks_devices(stub):
    x, w = torch.randn(8, 256).to(bf16), torch.randn(512, 256).to(bf16)
    jitgemm.linear(x, w)
    runs = stub.stub_runs()
    with pytest.raises(jitgemm.ArgumentError, match="w is on meta"):
        jitgemm.linear(x, w.to("meta"))
    a, b = torch.zeros(5, 256, dtype=e4m3), torch.zeros(512, 256, dtype=e4m3)
    jitgemm.scaled_mm(a, b, torch.ones(5), torch.ones(512))
    with pytest.raises(jitgemm.ArgumentError, match="scale_b is on meta"):
        jitgemm.scaled_mm(a, b, torch.ones(5), torch.ones(512, device="meta"))
    assert stub.stub_runs() == runs + 1


def test_dense_memo_tells_apart_strides_dtypes_and_options(stub):
    """Operands of the shapes of a memoized call but other strides, dtypes
    or options reach their own checks and plan: a row stride the plan key's
    lda, a transposed w the K-major error, fp16 and an FP32 output their
    types, a bias its mode."""
    x, w = torch.randn(8, 256).to(bf16), torch.randn(512, 256).to(bf16)
    jitgemm.linear(x, w)
    assert key_of(stub)[8:10] == (256, 256)  # lda, ldb
    wide = torch.randn(8, 320).to(bf16)[:, :256]  # x's shape, rows 320 apart
    jitgemm.linear(wide, w)
    args, _ = last_call(stub)
    assert key_of(stub)[8:10] == (320, 256) and args.a == wide.data_ptr()
    runs = stub.stub_runs()
    with pytest.raises(jitgemm.ArgumentError, match="w must be K-major"):
        jitgemm.linear(x, torch.randn(256, 512).to(bf16).t())  # w's shape, strides (1, 512)
    assert stub.stub_runs() == runs
    jitgemm.linear(x.half(), w.half())
    assert key_of(stub)[1:5] == (C.JG_FP16, C.JG_FP16, C.JG_DTYPE_NONE, C.JG_FP16)
    out = jitgemm.linear(x, w, out_dtype=fp32)
    assert out.dtype == fp32 and key_of(stub)[4] == C.JG_FP32
    c = torch.randn(8, 512).to(bf16)
    jitgemm.linear(x, w, c)  # the C operand: beta 1
    args, _ = last_call(stub)
    assert (args.c, args.beta, key_of(stub)[3]) == (c.data_ptr(), 1.0, C.JG_BF16)
    jitgemm.linear(x, w)  # the first entry again: no C
    args, _ = last_call(stub)
    assert (args.c, args.beta, key_of(stub)[3]) == (None, 0.0, C.JG_DTYPE_NONE)


def test_dense_memo_keys_contiguous_tensors_by_shape(stub):
    """The memo keys a contiguous tensor by its shape, not its strides: one
    whose size-1 dimension has another stride (contiguous to torch too)
    shares the entry and its plan; a tensor of no elements, contiguous to
    torch whatever its strides, has its checks run at every call, so
    strides they refuse are refused after a memoized call of the same shape."""
    w = torch.randn(512, 256).to(bf16)
    x = torch.randn(1, 256).to(bf16)
    jitgemm.linear(x, w)
    key, entries = key_of(stub), len(O._MEMO)
    odd = torch.randn(4, 256).to(bf16).as_strided((1, 256), (999, 1))
    assert odd.is_contiguous() and odd.stride() != x.stride()
    jitgemm.linear(odd, w)
    args, _ = last_call(stub)
    assert (key_of(stub), len(O._MEMO), args.a) == (key, entries, odd.data_ptr())
    runs = stub.stub_runs()
    jitgemm.linear(torch.empty(0, 256, dtype=bf16), w)
    assert len(O._MEMO) == entries  # no rows: not kept
    no_rows = torch.empty(0, 512, dtype=bf16).as_strided((0, 256), (512, 2))
    assert no_rows.is_contiguous()
    with pytest.raises(jitgemm.ArgumentError, match="x must be contiguous in its last dim"):
        jitgemm.linear(no_rows, w)
    with pytest.raises(jitgemm.ArgumentError, match="a must be contiguous in its last dim"):
        jitgemm.grouped_mm(no_rows, *moe(k=256)[1:])
    out = torch.empty(0, 512, dtype=bf16)
    assert jitgemm.linear(torch.empty(0, 256, dtype=bf16), w, out=out) is out
    with pytest.raises(jitgemm.ArgumentError, match="out must be contiguous in its last dim"):
        jitgemm.linear(torch.empty(0, 256, dtype=bf16), w,
                       out=torch.empty(0, 1024, dtype=bf16).as_strided((0, 512), (1024, 2)))
    assert stub.stub_runs() == runs


def test_fp8_scales_passed_as_given_or_copied(stub):
    """Row-major scales reach the launch as the tensors given; others as
    row-major copies (the memo records which, from their strides)."""
    a, _, ends = moe(dtype=bf16)
    qa = torch.zeros(300, 512, dtype=e4m3)
    qb = torch.zeros(4, 384, 512, dtype=e4m3).transpose(1, 2)
    sa, sb = torch.rand(300), torch.rand(4, 384)
    jitgemm.scaled_grouped_mm(qa, qb, sa, sb, ends)
    args, _, _ = last_grouped(stub)
    assert (args.a_scale, args.b_scale) == (sa.data_ptr(), sb.data_ptr())
    # block scales: b's as the [G, K/128, N/128] view of row-major [G, N/128, K/128]
    sab, sbb = torch.rand(300, 4), torch.rand(4, 3, 4)
    jitgemm.scaled_grouped_mm(qa, qb, sab, sbb.transpose(1, 2), ends)
    args, _, _ = last_grouped(stub)
    assert (args.a_scale, args.b_scale) == (sab.data_ptr(), sbb.data_ptr())
    # scale_b [G, N] with columns apart (not row-major): a copy, of the same values
    wide = torch.rand(4, 384 * 2)
    sb_strided = wide[:, ::2]
    copies = []
    contiguous = torch.Tensor.contiguous
    try:
        torch.Tensor.contiguous = lambda t: copies.append(contiguous(t)) or copies[-1]
        jitgemm.scaled_grouped_mm(qa, qb, sa, sb_strided, ends)
    finally:
        torch.Tensor.contiguous = contiguous
    args, _, _ = last_grouped(stub)
    assert args.a_scale == sa.data_ptr() and args.b_scale == copies[-1].data_ptr()
    assert torch.equal(copies[-1], sb_strided.reshape(-1))
    # dense: [M, 1] and torch's [1, N].t() are row-major as they are
    b = torch.zeros(384, 512, dtype=e4m3)
    s_a, s_b = torch.rand(300, 1), torch.rand(1, 384)
    jitgemm.scaled_mm(qa, b, s_a, s_b.t())
    dense, _ = last_call(stub)
    assert (dense.a_scale, dense.b_scale) == (s_a.data_ptr(), s_b.data_ptr())


def test_grouped_launch_from_another_thread(stub):
    """Each thread packs into its own buffer."""
    a, b, ends = moe()
    jitgemm.grouped_mm(a, b, ends)
    seen = {}

    def other():
        try:
            out = jitgemm.grouped_mm(a, b, ends)
            seen["ptrs"] = last_grouped(stub)[1] == (a.data_ptr(), b.data_ptr(), out.data_ptr())
            seen["buffer"] = O._grouped_buffer.parts[1]
        except Exception as e:  # reported to the test's thread
            seen["error"] = e

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert "error" not in seen, seen.get("error")
    assert seen["ptrs"] and seen["buffer"] != O._grouped_buffer.parts[1]


# ---- out=: the caller's output --------------------------------------------------------------


def test_out_is_the_launchs_d_and_is_returned(stub, spies):
    """out= passes out's pointer as D, returns out itself and allocates
    nothing; a contiguous out has the plain call's plan (ldd = N); a [N]
    bias is added into out."""
    w = torch.randn(512, 256).to(bf16)
    x = torch.randn(2, 4, 256).to(bf16)
    jitgemm.linear(x, w)
    plain = key_of(stub)
    for _ in range(2):  # the memo's entry reused
        out = torch.zeros(2, 4, 512, dtype=bf16)
        spies["empty"].clear()
        runs = stub.stub_runs()
        assert jitgemm.linear(x, w, out=out) is out
        args, _ = last_call(stub)
        assert stub.stub_runs() == runs + 1 and not spies["empty"]
        assert (args.a, args.b, args.c, args.d, args.m) == (x.data_ptr(), w.data_ptr(), None,
                                                            out.data_ptr(), 8)
        assert key_of(stub) == plain
    bias = torch.ones(512, dtype=bf16)
    assert jitgemm.linear(x, w, bias, out=out) is out
    assert torch.equal(out, torch.ones(2, 4, 512, dtype=bf16))  # the stub writes nothing
    c = torch.randn(2, 4, 512)
    out = torch.empty(2, 4, 512)
    assert jitgemm.linear(x, w, c, fp32, out=out) is out
    args, _ = last_call(stub)
    assert (args.c, args.d, args.beta) == (c.data_ptr(), out.data_ptr(), 1.0)
    a, b_t = torch.randn(5, 256).half(), torch.randn(48, 256).half()
    out = torch.empty(5, 48)
    spies["empty"].clear()
    assert jitgemm.mm(a, b_t, fp32, out=out) is out
    assert last_call(stub)[0].d == out.data_ptr() and key_of(stub)[4] == C.JG_FP32
    assert not spies["empty"]
    qa, qb, sa, sb = (torch.zeros(5, 256, dtype=e4m3), torch.zeros(384, 256, dtype=e4m3),
                      torch.ones(5), torch.ones(384))
    out = torch.empty(5, 384, dtype=bf16)
    spies["empty"].clear()
    assert jitgemm.scaled_mm(qa, qb, sa, sb, out=out) is out
    args, _ = last_call(stub)
    assert (args.a, args.b, args.d, args.a_scale, args.b_scale) == (
        qa.data_ptr(), qb.data_ptr(), out.data_ptr(), sa.data_ptr(), sb.data_ptr())
    assert not spies["empty"]


def test_out_row_stride_is_the_plans_ldd(stub):
    """A view of a wider buffer's columns plans with ldd = its row stride
    (once); a pointer off 16 bytes with rows 16-byte multiples takes the
    JG_GEMM_UNALIGNED plan (D is stored by TMA otherwise); rows off 16
    bytes take any element-aligned pointer with one plan."""
    w, x = torch.randn(512, 256).to(bf16), torch.randn(8, 256).to(bf16)
    dev = O.device(None)
    buf = torch.empty(8, 640, dtype=bf16)
    for _ in range(2):
        jitgemm.linear(x, w, out=buf[:, :512])
        assert key_of(stub)[11] == 640 and not key_of(stub)[0] & C.JG_GEMM_UNALIGNED
    planned = len(dev.plans)
    jitgemm.linear(x, w, out=buf[:, 8:520])  # 16 bytes in: the same plan
    assert len(dev.plans) == planned and last_call(stub)[0].d == buf[:, 8:].data_ptr()
    jitgemm.linear(x, w, out=buf[:, 1:513])  # 2 bytes in
    assert key_of(stub)[0] & C.JG_GEMM_UNALIGNED and key_of(stub)[11] == 640
    args, _ = last_call(stub)
    # D is never packed, and aligned A and B would not be: no workspace
    assert args.d == buf[:, 1:].data_ptr() and args.workspace is None
    assert args.workspace_bytes == 0
    x_off = torch.zeros(8 * 256 + 4, dtype=bf16)[4:].view(8, 256)  # 8 bytes in: packed
    jitgemm.linear(x_off, w, out=buf[:, 1:513])
    flagged = key_of(stub)
    args, _ = last_call(stub)
    assert args.workspace_bytes == (8 + 512) * pitch(256, 2) and args.a == x_off.data_ptr()
    jitgemm.linear(x, w, out=buf[:, 1:513])  # the same plan again, no workspace
    assert key_of(stub) == flagged and last_call(stub)[0].workspace is None
    odd = torch.empty(8, 513, dtype=bf16)  # rows of 1026 bytes
    jitgemm.linear(x, w, out=odd[:, :512])
    rows_off = key_of(stub)
    jitgemm.linear(x, w, out=odd[:, 1:])
    assert key_of(stub) == rows_off and rows_off[11] == 513
    assert not rows_off[0] & C.JG_GEMM_UNALIGNED


def bytes_of(buf, start, shape, dtype):
    """A tensor of shape and dtype over buf's bytes from start."""
    n = torch.Size(shape).numel() * dtype.itemsize
    return buf[start:start + n].view(dtype).view(shape)


def test_out_overlapping_an_operand_raises_before_any_launch(stub):
    """out may share no byte with what the launch reads: x, w, the bias (as
    C or added after) or the FP8 scales read in place; tested on addresses
    at every call (the memo's hit too). Views of one buffer whose bytes do
    not meet pass."""
    buf = torch.zeros(1 << 16, dtype=torch.uint8)
    x = bytes_of(buf, 0, (8, 256), bf16)  # bytes 0..4096
    w = torch.zeros(512, 256, dtype=bf16)
    runs = stub.stub_runs()
    with pytest.raises(jitgemm.ArgumentError, match="out overlaps x"):  # x's last 8 elements
        jitgemm.linear(x, w, out=bytes_of(buf, 4096 - 16, (8, 512), bf16))
    out = bytes_of(buf, 4096, (8, 512), bf16)  # right after x: passes
    assert jitgemm.linear(x, w, out=out) is out and stub.stub_runs() == runs + 1
    with pytest.raises(jitgemm.ArgumentError, match="out overlaps x"):  # the memo's entry
        jitgemm.linear(x, w, out=bytes_of(buf, 2048, (8, 512), bf16))
    w_buf = torch.zeros(512 * 256 * 2 + 8192, dtype=torch.uint8)
    w2 = bytes_of(w_buf, 8192, (512, 256), bf16)
    with pytest.raises(jitgemm.ArgumentError, match="out overlaps w"):
        jitgemm.linear(x, w2, out=bytes_of(w_buf, 8192 - 1024, (8, 512), bf16))
    bias = bytes_of(buf, 20000, (512,), bf16)
    with pytest.raises(jitgemm.ArgumentError, match="out overlaps bias"):  # [N], added after
        jitgemm.linear(x, w, bias, out=bytes_of(buf, 20000 - 8192 + 2, (8, 512), bf16))
    c = torch.zeros(8, 512, dtype=bf16)
    with pytest.raises(jitgemm.ArgumentError, match="out overlaps bias"):  # C, in place
        jitgemm.linear(x, w, c, out=c)
    with pytest.raises(jitgemm.ArgumentError, match="out overlaps a"):
        jitgemm.mm(x, w, out=bytes_of(buf, 4094, (8, 512), bf16))
    qa, qb = torch.zeros(5, 256, dtype=e4m3), torch.zeros(384, 256, dtype=e4m3)
    scales = torch.zeros(8192, dtype=torch.uint8)
    sa, sb = bytes_of(scales, 0, (5,), fp32), bytes_of(scales, 64, (384,), fp32)
    with pytest.raises(jitgemm.ArgumentError, match="out overlaps scale_b"):
        jitgemm.scaled_mm(qa, qb, sa, sb, out=bytes_of(scales, 64 + 1536 - 2, (5, 384), bf16))
    out = bytes_of(scales, 64 + 1536, (5, 384), bf16)  # after the scales
    assert jitgemm.scaled_mm(qa, qb, sa, sb, out=out) is out
    assert stub.stub_runs() == runs + 2
    # scales read as row-major copies (1x128 scale_a in torch's layout, stride (1, M)):
    # the launch reads the copies, which out cannot meet, so out may reuse the originals'
    # bytes (the copy is queued before the GEMM)
    sa_t = bytes_of(scales, 0, (2, 5), fp32).t()
    sb_block = torch.ones(3, 2)
    out = bytes_of(scales, 0, (5, 384), bf16)
    assert jitgemm.scaled_mm(qa, qb, sa_t, sb_block, out=out) is out
    assert last_call(stub)[0].a_scale != sa_t.data_ptr() and stub.stub_runs() == runs + 3


def test_out_with_no_rows_launches_nothing(stub):
    w = torch.randn(512, 256).to(bf16)
    out = torch.empty(0, 512, dtype=bf16)
    runs = stub.stub_runs()
    assert jitgemm.linear(torch.empty(0, 256, dtype=bf16), w, out=out) is out
    assert stub.stub_runs() == runs


def test_out_ops_pass_opcheck(stub):
    """torch.library.opcheck of the *_out ops (schema: only out written;
    fake kernel against the real one; AOTAutograd's functionalization of
    the write), their real kernels launching through the stub."""
    x, w = torch.randn(33, 256).to(bf16), torch.randn(128, 256).to(bf16)
    utils = ("test_schema", "test_faketensor", "test_aot_dispatch_dynamic")
    torch.library.opcheck(torch.ops.jitgemm.linear_out.default,
                          (x, w, None, None, torch.zeros(33, 128, dtype=bf16)), test_utils=utils)
    torch.library.opcheck(torch.ops.jitgemm.mm_out.default,
                          (x, w, fp32, torch.zeros(33, 128)), test_utils=utils)
    qa, qb = torch.zeros(33, 256, dtype=e4m3), torch.zeros(128, 256, dtype=e4m3)
    torch.library.opcheck(torch.ops.jitgemm.scaled_mm_out.default,
                          (qa, qb, torch.ones(33), torch.ones(128), None, None,
                           torch.zeros(33, 128, dtype=bf16)), test_utils=("test_faketensor",))
