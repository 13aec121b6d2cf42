"""The ops: PyTorch custom ops (``torch.ops.jitgemm.*``) with fake kernels, and
the public functions that call them.

Each op is a ``torch.library.custom_op`` whose fake (meta) kernel runs the
same argument checks as the real one (``_checks``) and makes outputs of the
same shapes, so ``torch.compile(fullgraph=True)`` traces them without graph
breaks. The real kernels launch on PyTorch's current stream of the operands'
device, never synchronize or allocate outside PyTorch's allocator, and so are
captured by CUDA graphs.

The public functions call the real kernel directly in plain eager code (real
tensors, no tracing, no dispatch or function modes): the dispatcher's round
trip into Python costs several microseconds a call, and plain eager calls
gain nothing from it. Anything else (torch.compile, FakeTensorMode, tensor
subclasses, TorchFunctionModes such as ``with torch.device(...)``) goes
through ``torch.ops.jitgemm``.
"""

import ctypes
import threading
from typing import Optional, Tuple

import torch
import torch.nn.functional as F
from torch import Tensor

from . import _capi as C
from . import _checks as K
from ._device import device, m_hint, m_hint_pow2

# ---- helpers ------------------------------------------------------------------------

_dispatch_modes = torch._C._len_torch_dispatch_stack
_function_modes = torch._C._is_torch_function_mode_enabled
# dynamo knows the function, not its name; one frame (`return False`) where
# torch.compiler.is_compiling takes two
_is_dynamo_compiling = torch.compiler.is_dynamo_compiling
_pack_gemm_args = C.GEMM_ARGS.pack
_pack_gemm_pointers = C.GEMM_POINTERS.pack


def _direct(t: Tensor) -> bool:
    """True where the real kernel may be called without the dispatcher.
    is_dynamo_compiling comes before the C calls: under dynamo (torch.compile,
    strict export) it is a constant True, and dynamo then never sees the
    others. The traces that are not dynamo's (AOTAutograd, non-strict export)
    hold fake tensors, under FakeTensorMode: not plain Tensors, and a
    dispatch mode."""
    return (type(t) is Tensor and not _is_dynamo_compiling() and not _dispatch_modes()
            and not _function_modes())


def _misaligned(mask: int, *tensors: Optional[Tensor]) -> bool:
    """Whether a pointer has bits of mask set (the fast test; K.aligned then
    names the tensor)."""
    for t in tensors:
        if t is not None and t.data_ptr() & mask:
            return True
    return False


def _meta(t: Optional[Tensor]):
    """What the checks read of a tensor (not its address), as the memo keys
    hold it: shape, layout, dtype, device. The layout is True for a
    contiguous tensor, else its strides: a contiguous tensor's strides
    follow from its shape in every dimension the checks read (they skip
    dimensions of size 1, whose strides torch's contiguity ignores), and
    is_contiguous() reads a flag where stride() builds a tuple. (Torch
    calls a tensor of no elements contiguous whatever its strides: _memo
    keeps no entry of a call without rows.) The eager ops write this out
    in their keys, for the tensors every call has."""
    return None if t is None else (t.shape, t.is_contiguous() or t.stride(), t.dtype, t.device)


class _Call:
    """What the checks derived for operands of one metadata: the op's shape
    spec, its plan key, device (where: torch's; dev: its jitgemm context)
    and, once planned, plan; what every launch reads, as slots (a plain
    load where a NamedTuple's field costs a descriptor call): the rows, the
    bias mode, new_out(*out_shape) (the output, see __init__) and stream (the
    device's stream getter, None where launches go through run_asking); for
    dense calls, the bytes of the workspace each launch gets (0: none), the
    call planned for pointers off 16 bytes (made on the first such call)
    and, where a launch passes no scales and no workspace, args_tail (the
    bytes of jg_gemm_args after its four pointers, made with the plan:
    planned()); for FP8 calls, whether the scales are read as given (already
    row-major: no copy); for the contiguous grouped layout with torch's G
    end offsets, the zero put in front of them (None: F.pad's two kernels
    instead, see _offsets_zero); for dense calls with out=, the bytes each
    operand spans (K.span: A, B, bias, scale_a, scale_b, 0 for none) and
    out's, last (_disjoint's)."""

    __slots__ = ("spec", "key", "dev", "plan", "grouped", "workspace_bytes", "unaligned",
                 "direct_scales", "pad_rows", "zero", "m", "where", "new_out", "bias",
                 "spans", "unaligned_d", "packs", "stream", "out_shape", "args_tail")

    def __init__(self, spec, key: tuple, where: torch.device, grouped: bool = False):
        self.spec, self.key, self.where, self.dev, self.plan = spec, key, where, device(
            where.index), 0
        self.m = spec.m
        self.stream = None if self.dev.asks_current else self.dev.stream
        # new_out(*out_shape): new_empty of a tensor of the output's dtype on the device,
        # whose dtype and device come with it where torch.empty's parser reads them from
        # keywords at each call (a functools.partial of it costs more than the star call)
        self.new_out = _no_elements(spec.out_dtype, where).new_empty
        self.out_shape = spec.out_shape
        self.bias = K.BIAS_NONE if grouped else spec.bias
        self.grouped = grouped
        self.workspace_bytes, self.unaligned, self.unaligned_d, self.packs = 0, None, None, True
        self.direct_scales, self.pad_rows, self.zero = False, False, None
        self.spans, self.args_tail = None, None

    @property
    def rows(self) -> int:
        """M (masked grouped: m_max), as K.Quant's rows: _memo keeps no
        entry without."""
        return self.m

    def planned(self) -> int:
        if not self.plan:
            if self.grouped:
                self.plan = self.dev.grouped_plan(self.key)
            else:
                plan = self.dev.gemm_plan(self.key)
                self.workspace_bytes = pack_workspace_bytes(
                    self.key, self.dev.records[self.key].workspace_bytes,
                    self.spec.m) if self.packs else 0
                if not self.workspace_bytes and self.key[_KEY_SCALE] == C.JG_SCALE_NONE:
                    # the launch's fields after the pointers, the same at every call
                    beta = 1.0 if self.bias == K.BIAS_C else 0.0
                    self.args_tail = _pack_gemm_args(0, 0, 0, 0, 1.0, beta, self.m, 0, 0, 0, 0, 0,
                                                     0)[C.GEMM_POINTERS.size:]
                self.plan = plan  # last: another thread that sees the plan sees the rest
        return self.plan

    def for_pointers(self, a: int, b: int, d: int = 0) -> "_Call":
        """The call whose plan takes A, B and D at these addresses (d: 0 for
        an output made here, 16-byte aligned): this one, or, where one lies
        off 16 bytes and its rows are 16-byte multiples (a plan that loads
        or stores it by TMA), the same problem planned with
        JG_GEMM_UNALIGNED (with rows off 16 bytes the plan takes any
        element-aligned pointer). D is never packed: where D alone needs the
        flag (A and B aligned, pointers and rows), that plan's call gets no
        workspace (the library would not pack A or B: unaligned_d)."""
        key = self.key
        size = K.JG_SIZES[key[_KEY_A_TYPE]]
        rows_a, rows_b = key[_KEY_LDA] * size & 15, key[_KEY_LDB] * size & 15
        ldd_bytes = key[_KEY_LDD] * K.JG_SIZES[key[_KEY_D_TYPE]]
        if not ((a & 15 and not rows_a) or (b & 15 and not rows_b)
                or (d & 15 and not ldd_bytes & 15)):
            return self
        packs = bool((a | b) & 15 or rows_a or rows_b)
        e = self.unaligned if packs else self.unaligned_d
        if e is None:
            e = _Call(self.spec, (key[0] | C.JG_GEMM_UNALIGNED,) + key[1:], self.where)
            e.packs = packs
            if packs:
                self.unaligned = e
            else:
                self.unaligned_d = e
        return e


# (dtype, torch.device) -> a tensor of no elements (no memory) of them, made once
_NO_ELEMENTS: dict = {}


def _no_elements(dtype: torch.dtype, where: torch.device) -> Tensor:
    t = _NO_ELEMENTS.get((dtype, where))
    if t is None:
        t = _NO_ELEMENTS[(dtype, where)] = torch.empty(0, dtype=dtype, device=where)
    return t


_PACK_PITCH = 128  # jitgemm.h: the pack's copies are rows on 128-byte lines


def pack_workspace_bytes(key: tuple, plan_bytes: int, m: int) -> int:
    """The workspace a call of m rows gets with the dense plan of key, whose
    jg_plan_workspace_bytes (for the key's M hint) is plan_bytes: 0 where
    that is 0 (aligned problems, NVFP4), else plan_bytes with A's copy
    resized from the hint's rows to m. jitgemm.h's rule for K-major
    operands: A's copy (first) holds m rows, B's n, each of K elements
    rounded up to 128 bytes, for the operands whose rows are off 16 bytes
    (both with JG_GEMM_UNALIGNED); the library reads the call's m, so an m
    past the largest hint (16384) needs more than the plan's figure."""
    if not plan_bytes:
        return 0
    size = K.JG_SIZES[key[_KEY_A_TYPE]]
    a_packed = key[0] & C.JG_GEMM_UNALIGNED or key[_KEY_LDA] * size % 16
    a_row = K.cdiv(key[_KEY_K] * size, _PACK_PITCH) * _PACK_PITCH if a_packed else 0
    return plan_bytes + (m - key[_KEY_M]) * a_row


# The checks run once per metadata (shapes, strides, dtypes, devices, the
# op's options): a call whose operands look like an earlier call's costs a
# dict lookup, not the checks (tens of microseconds of Python). Bounded: a
# serving loop's shapes repeat, and the dict starts over past the bound.
_MEMO: dict = {}
_MEMO_MAX = 4096


def _memo(key: tuple, compute, *args):
    """The entry for key, compute(*args)'s on a miss. The ops call it where
    `_MEMO[key]` raises KeyError: a hit then costs a subscript (cheaper
    than .get's method call) and no further frame. (compute and its
    arguments, not a lambda: a closure makes every argument it names a cell
    of the calling function, which each call then creates and reads
    through, hit or miss.) An entry whose call has no rows is not
    kept: its tensors of no elements are contiguous to torch whatever
    their strides (_meta), so its key would not tell apart strides that
    the checks refuse; such calls, which launch nothing, run their checks
    each time."""
    e = _MEMO.get(key)
    if e is None:
        e = compute(*args)
        if e.rows:
            if len(_MEMO) >= _MEMO_MAX:
                _MEMO.clear()
            _MEMO[key] = e
    return e


def gemm_key(g: K.Gemm, a_type: int, d_type: int, with_c: bool, scale: int,
             sf: Tuple[int, int] = (0, 0)) -> tuple:
    """The plan key (jg_gemm_problem's fields) of a dense call: M-generic, with
    the M hint of its rows."""
    return (C.JG_GEMM_M_GENERIC, a_type, a_type, d_type if with_c else C.JG_DTYPE_NONE,
            d_type, m_hint(g.m), g.n, g.k, g.lda, g.ldb, g.ldc, g.ldd or g.n, scale, sf[0],
            sf[1])


# jg_gemm_problem's fields' places in a gemm key
_KEY_A_TYPE, _KEY_D_TYPE, _KEY_M, _KEY_K, _KEY_LDA, _KEY_LDB, _KEY_LDD, _KEY_SCALE = \
    1, 4, 5, 7, 8, 9, 11, 12


def _dense_call(g: K.Gemm, a: Tensor, a_type: int, scale: int,
                sf: Tuple[int, int] = (0, 0)) -> _Call:
    key = gemm_key(g, a_type, K.JG_TYPES[g.out_dtype], g.bias == K.BIAS_C, scale, sf)
    return _Call(g, key, a.device)


def _dense(what: str, e: _Call, a: Tensor, b: Tensor, bias: Optional[Tensor],
           out: Optional[Tensor], a_scale: int = 0, b_scale: int = 0, a_sf: int = 0,
           b_sf: int = 0) -> Tensor:
    """The launch of a checked dense call (linear, mm, scaled_mm, nvfp4_mm;
    what: its name in errors), the scales' pointers given (0: none): the
    output (out, checked by the call's checks and here for overlap, or
    made here), the plan for a's, b's and the output's pointers
    (element-aligned, as every tensor's are; C is read element by element
    in every plan), the GEMM D = A B^T (+ C, beta = 1, where the bias is
    the C operand) with the plan (M-generic: args.m rows), an [N] bias
    added; the output returned. Where the plan packs
    unaligned A or B, the launch gets a workspace from PyTorch's caching
    allocator on the device (its current stream: the launch's, so the block
    goes back to the pool as soon as this returns, and work queued after the
    launch is what may reuse it).

    This is every eager dense call's path: pointers are read once, the
    launch arguments packed from them, and the launch made here (one
    foreign call, see _device.Device's launches), with no further Python
    frame."""
    pa, pb = a.data_ptr(), b.data_ptr()
    if out is None:
        if (pa | pb) & 15:
            e = e.for_pointers(pa, pb)
        out = e.new_out(*e.out_shape)
        pd = out.data_ptr()
    else:  # out=: its metadata checked with the call's; its bytes against the operands'
        pd = out.data_ptr()
        pc = 0 if bias is None else bias.data_ptr()
        sa, sb, sc, ssa, ssb, so = e.spans
        end = pd + so
        # a conservative test inline (a range of no bytes may pass it), _disjoint's exact one
        if ((pa < end and pd < pa + sa) or (pb < end and pd < pb + sb)
                or (pc < end and pd < pc + sc) or (a_scale < end and pd < a_scale + ssa)
                or (b_scale < end and pd < b_scale + ssb)):
            _disjoint(what, e, pd, pa, pb, pc, a_scale, b_scale)
        if (pa | pb | pd) & 15:
            e = e.for_pointers(pa, pb, pd)
    if e.m:
        plan = e.plan or e.planned()
        pc = 0 if bias is None or e.bias != _BIAS_C else bias.data_ptr()
        if e.args_tail:  # no scales, no workspace: only the pointers change between calls
            args = _pack_gemm_pointers(pa, pb, pc, pd) + e.args_tail
        else:
            ws = e.workspace_bytes
            buf = torch.empty(ws, dtype=torch.uint8, device=e.where) if ws else None
            args = _pack_gemm_args(pa, pb, pc, pd, 1.0, 1.0 if pc else 0.0, e.m, a_scale,
                                   b_scale, a_sf, b_sf, buf.data_ptr() if ws else 0, ws)
        stream = e.stream
        if stream is not None:
            st = C.gemm_run_packed(plan, args, stream())
        else:
            st = e.dev.run_asking(C.gemm_run_packed, plan, args)
        if st:  # not JG_OK (0)
            raise e.dev.error(st, what)
    if bias is not None and e.bias == _BIAS_ADD:
        out.add_(bias)
    return out


_BIAS_C, _BIAS_ADD = K.BIAS_C, K.BIAS_ADD

# the operands _disjoint tests out against, in e.spans' order, by op
_OPERANDS = {"jitgemm.linear": ("x", "w", "bias"), "jitgemm.mm": ("a", "b_t"),
             "jitgemm.scaled_mm": ("a", "b", "bias", "scale_a", "scale_b")}


def _disjoint(what: str, e: _Call, pd: int, *pointers: int):
    """Raises where out's bytes (at pd) meet those of an operand at one of
    pointers (A, B, bias, scale_a, scale_b; 0: none), each spanning what
    e.spans says (made from metadata with the call: K.span). A range test
    on addresses: out must not share a byte with what the launch reads
    (the kernel would read what it writes), while views of one buffer
    that do not meet pass. _dense calls it where its quicker test, which
    does not skip ranges of no bytes, finds a meeting."""
    spans = e.spans
    end = pd + spans[-1]
    for i, p in enumerate(pointers):
        s = spans[i]
        if s and p < end and pd < p + s and end > pd:
            name = _OPERANDS[what][i]
            K.fail(what.removeprefix("jitgemm."),
                   f"out overlaps {name} (out's bytes 0x{pd:x}..0x{end:x}, {name}'s "
                   f"0x{p:x}..0x{p + s:x}): out must be memory the call does not read")


def _with_spans(e: _Call, out: Tensor, *operands: Optional[Tensor]) -> _Call:
    """e with the spans _disjoint tests: the operands in _OPERANDS' order (A,
    B, bias, scale_a, scale_b; 0 for those not given), then out's."""
    spans = [K.span(t) for t in operands] + [0] * (5 - len(operands))
    e.spans = tuple(spans) + (K.span(out),)
    return e


def _fp8_scale_args(mode: int, scale_a: Tensor, scale_b: Tensor) -> Tuple[Tensor, Tensor]:
    """The scales as the library reads them: row-major FP32 arrays."""
    if mode == C.JG_SCALE_BLOCK:
        return scale_a.contiguous(), scale_b.contiguous()
    return scale_a.reshape(-1).contiguous(), scale_b.reshape(-1).contiguous()


def _row_major(*views: Tensor) -> bool:
    """Whether scales in the layouts the library reads (views of the tensors
    given) are those tensors' memory as it is: then their pointers are passed
    and no copy is made (what the scale-args functions return for them is a
    view of the same data). Metadata only: memoized with the call."""
    return all(t.is_contiguous() for t in views)


def _fake_like(ref: Tensor, shape, dtype) -> Tensor:
    return torch.empty(shape, dtype=dtype, device=ref.device)


# ---- linear, mm -----------------------------------------------------------------------


def _linear_checks(x, w, bias, out_dtype, out=None) -> K.Gemm:
    g = K.gemm("linear", x, w, bias, out_dtype, K.HALF, None)
    return g if out is None else K.gemm_out("linear", g, x, out)


def _linear_call(x, w, bias, out_dtype, out=None) -> _Call:
    g = _linear_checks(x, w, bias, out_dtype, out)
    K.on_cuda("linear", x=x, w=w, bias=bias, out=out)
    e = _dense_call(g, x, K.JG_TYPES[x.dtype], C.JG_SCALE_NONE)
    return e if out is None else _with_spans(e, out, x, w, bias)


def _linear_run(x: Tensor, w: Tensor, bias: Optional[Tensor], out_dtype: Optional[torch.dtype],
                out: Optional[Tensor]) -> Tensor:
    """The eager call of linear (out None) and of its out= form: what the
    public function calls, and both registered kernels."""
    key = ("linear", out_dtype, x.shape, x.is_contiguous() or x.stride(), x.dtype, x.device,
           w.shape, w.is_contiguous() or w.stride(), w.dtype, w.device,
           bias if bias is None else _meta(bias), out if out is None else (
               out.shape, out.is_contiguous() or out.stride(), out.dtype, out.device))
    try:
        e = _MEMO[key]
    except KeyError:
        e = _memo(key, _linear_call, x, w, bias, out_dtype, out)
    return _dense("jitgemm.linear", e, x, w, bias, out)


def _linear_impl(x: Tensor, w: Tensor, bias: Optional[Tensor] = None,
                 out_dtype: Optional[torch.dtype] = None) -> Tensor:
    return _linear_run(x, w, bias, out_dtype, None)


def _linear_fake(x, w, bias=None, out_dtype=None):
    g = _linear_checks(x, w, bias, out_dtype)
    return _fake_like(x, g.out_shape, g.out_dtype)


# The out= forms (linear_out, mm_out, scaled_mm_out): ops of their own that
# write into out and return nothing (schemas with `Tensor(a!) out -> ()`,
# mutates_args=("out",)), so that torch.compile functionalizes the write and
# the plain ops keep their schemas. Eager, the public functions call the
# shared _run bodies (no extra frame for either form); memo keys end with
# out's metadata (None: no out), whose row stride is the plan's ldd; out's
# address is tested at each call (_dense: _disjoint, and for_pointers for a
# TMA store).


def _linear_out_impl(x: Tensor, w: Tensor, bias: Optional[Tensor],
                     out_dtype: Optional[torch.dtype], out: Tensor) -> None:
    _linear_run(x, w, bias, out_dtype, out)


def _linear_out_fake(x, w, bias, out_dtype, out) -> None:
    _linear_checks(x, w, bias, out_dtype, out)


def _mm_checks(a, b_t, out_dtype, out=None) -> K.Gemm:
    K.dims("mm", "a", a, 2, "[M, K]")
    g = K.gemm("mm", a, b_t, None, out_dtype, K.HALF, None)
    return g if out is None else K.gemm_out("mm", g, a, out)


def _mm_call(a, b_t, out_dtype, out=None) -> _Call:
    g = _mm_checks(a, b_t, out_dtype, out)
    K.on_cuda("mm", a=a, b_t=b_t, out=out)
    e = _dense_call(g, a, K.JG_TYPES[a.dtype], C.JG_SCALE_NONE)
    return e if out is None else _with_spans(e, out, a, b_t)


def _mm_run(a: Tensor, b_t: Tensor, out_dtype: Optional[torch.dtype],
            out: Optional[Tensor]) -> Tensor:
    key = ("mm", out_dtype, a.shape, a.is_contiguous() or a.stride(), a.dtype, a.device,
           b_t.shape, b_t.is_contiguous() or b_t.stride(), b_t.dtype, b_t.device,
           out if out is None else (
               out.shape, out.is_contiguous() or out.stride(), out.dtype, out.device))
    try:
        e = _MEMO[key]
    except KeyError:
        e = _memo(key, _mm_call, a, b_t, out_dtype, out)
    return _dense("jitgemm.mm", e, a, b_t, None, out)


def _mm_impl(a: Tensor, b_t: Tensor, out_dtype: Optional[torch.dtype] = None) -> Tensor:
    return _mm_run(a, b_t, out_dtype, None)


def _mm_fake(a, b_t, out_dtype=None):
    g = _mm_checks(a, b_t, out_dtype)
    return _fake_like(a, g.out_shape, g.out_dtype)


def _mm_out_impl(a: Tensor, b_t: Tensor, out_dtype: Optional[torch.dtype], out: Tensor) -> None:
    _mm_run(a, b_t, out_dtype, out)


def _mm_out_fake(a, b_t, out_dtype, out) -> None:
    _mm_checks(a, b_t, out_dtype, out)


# ---- FP8 -----------------------------------------------------------------------------------


def _scaled_mm_checks(a, b, scale_a, scale_b, bias, out_dtype, out=None) -> K.ScaledGemm:
    s = K.scaled_mm("scaled_mm", a, b, scale_a, scale_b, bias, out_dtype)
    return s if out is None else s._replace(gemm=K.gemm_out("scaled_mm", s.gemm, a, out))


def _scaled_mm_call(a, b, scale_a, scale_b, bias, out_dtype, out=None) -> _Call:
    s = _scaled_mm_checks(a, b, scale_a, scale_b, bias, out_dtype, out)
    K.on_cuda("scaled_mm", a=a, b=b, scale_a=scale_a, scale_b=scale_b, bias=bias, out=out)
    e = _dense_call(s.gemm, a, C.JG_E4M3, s.scale)
    e.direct_scales = _row_major(scale_a, scale_b)
    if out is None:
        return e
    # the scales the launch reads are these (direct) or fresh copies, which out cannot meet
    direct = e.direct_scales
    return _with_spans(e, out, a, b, bias, scale_a if direct else None,
                       scale_b if direct else None)


def _scaled_mm_run(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor,
                   bias: Optional[Tensor], out_dtype: Optional[torch.dtype],
                   out: Optional[Tensor]) -> Tensor:
    key = ("scaled_mm", out_dtype, a.shape, a.is_contiguous() or a.stride(), a.dtype, a.device,
           b.shape, b.is_contiguous() or b.stride(), b.dtype, b.device, _meta(scale_a),
           _meta(scale_b), bias if bias is None else _meta(bias), out if out is None else (
               out.shape, out.is_contiguous() or out.stride(), out.dtype, out.device))
    try:
        e = _MEMO[key]
    except KeyError:
        e = _memo(key, _scaled_mm_call, a, b, scale_a, scale_b, bias, out_dtype, out)
    psa, psb = scale_a.data_ptr(), scale_b.data_ptr()
    if (psa | psb) & 3:
        K.aligned("scaled_mm", 4, scale_a=scale_a, scale_b=scale_b)
    if e.direct_scales:
        return _dense("jitgemm.scaled_mm", e, a, b, bias, out, psa, psb)
    sa, sb = _fp8_scale_args(e.key[_KEY_SCALE], scale_a, scale_b)
    return _dense("jitgemm.scaled_mm", e, a, b, bias, out, sa.data_ptr(), sb.data_ptr())


def _scaled_mm_impl(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor,
                    bias: Optional[Tensor] = None,
                    out_dtype: Optional[torch.dtype] = None) -> Tensor:
    return _scaled_mm_run(a, b, scale_a, scale_b, bias, out_dtype, None)


def _scaled_mm_fake(a, b, scale_a, scale_b, bias=None, out_dtype=None):
    g = _scaled_mm_checks(a, b, scale_a, scale_b, bias, out_dtype).gemm
    return _fake_like(a, g.out_shape, g.out_dtype)


def _scaled_mm_out_impl(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor,
                        bias: Optional[Tensor], out_dtype: Optional[torch.dtype],
                        out: Tensor) -> None:
    _scaled_mm_run(a, b, scale_a, scale_b, bias, out_dtype, out)


def _scaled_mm_out_fake(a, b, scale_a, scale_b, bias, out_dtype, out) -> None:
    _scaled_mm_checks(a, b, scale_a, scale_b, bias, out_dtype, out)


def quant_key(op: str, problem: C.QuantProblem) -> tuple:
    """What shapes a quantizer's kernel (rows and leading dimensions do not)."""
    return (op, problem.src_type, problem.scale, problem.block_rows, problem.cols,
            problem.sf_layout)


def _quantize(op: str, fn, x: Tensor, problem: C.QuantProblem, args: C.QuantArgs):
    """Launches a quantizer, recording its kernel's origin on first sight."""
    dev = device(x.device.index)
    key = quant_key(op, problem)
    before = dev.stats() if key not in dev.records else None
    dev.quantize(fn, problem, args, f"jitgemm.{op}")
    if before is not None:
        dev.record_quantizer(key, before)


def _quantize_fp8_call(x, scale, block_rows) -> K.Quant:
    q = K.quantize_fp8("quantize_fp8", x, scale, block_rows)
    K.on_cuda("quantize_fp8", x=x)
    return q


def _quantize_fp8_impl(x: Tensor, scale: str = "row", block_rows: int = 1) -> Tuple[Tensor, Tensor]:
    q = _memo(("quantize_fp8", scale, block_rows, _meta(x)), _quantize_fp8_call, x, scale,
              block_rows)
    K.aligned("quantize_fp8", 2, x=x)
    out = torch.empty(x.shape, dtype=K.E4M3, device=x.device)
    s = torch.empty(q.scale_shape, dtype=K.FP32, device=x.device)
    if q.rows:
        problem = C.QuantProblem(K.JG_TYPES[x.dtype], q.scale, q.block_rows, q.rows, q.cols,
                                 q.ld, q.cols, C.JG_SF_LAYOUT_NONE)
        args = C.QuantArgs(x.data_ptr(), out.data_ptr(), s.data_ptr(), None)
        _quantize("quantize_fp8", C.lib.jg_quantize_e4m3, x, problem, args)
    return out, s


def _quantize_fp8_fake(x, scale="row", block_rows=1):
    q = K.quantize_fp8("quantize_fp8", x, scale, block_rows)
    return _fake_like(x, x.shape, K.E4M3), _fake_like(x, q.scale_shape, K.FP32)


# ---- NVFP4 ----------------------------------------------------------------------------------


def _quantize_nvfp4_impl(x: Tensor, sf_layout: str = "swizzled") -> Tuple[Tensor, Tensor, Tensor]:
    rows, k, ld, layout = K.quantize_nvfp4("quantize_nvfp4", x, sf_layout)
    K.on_cuda("quantize_nvfp4", x=x)
    K.aligned("quantize_nvfp4", 2, x=x)
    codes = torch.empty((rows, k // 2), dtype=torch.uint8, device=x.device)
    sf = torch.empty(K.sf_shape(layout, rows, k), dtype=K.E4M3, device=x.device)
    g = torch.empty((1,), dtype=K.FP32, device=x.device)
    problem = C.QuantProblem(K.JG_TYPES[x.dtype], C.JG_SCALE_NVFP4, 0, rows, k, ld, k, layout)
    args = C.QuantArgs(x.data_ptr(), codes.data_ptr(), g.data_ptr(), sf.data_ptr())
    _quantize("quantize_nvfp4", C.lib.jg_quantize_nvfp4, x, problem, args)
    return codes, sf, g


def _quantize_nvfp4_fake(x, sf_layout="swizzled"):
    rows, k, _, layout = K.quantize_nvfp4("quantize_nvfp4", x, sf_layout)
    return (_fake_like(x, (rows, k // 2), torch.uint8),
            _fake_like(x, K.sf_shape(layout, rows, k), K.E4M3), _fake_like(x, (1,), K.FP32))


def nvfp4_gemm(s: K.Nvfp4Gemm) -> K.Gemm:
    return K.Gemm(s.m, s.n, s.k, s.lda, s.ldb, (s.m, s.n), s.out_dtype, K.BIAS_NONE, 0)


def _nvfp4_mm_call(a, a_sf, a_global, b, b_sf, b_global, out_dtype, a_sf_layout,
                   b_sf_layout) -> _Call:
    s = K.nvfp4_mm("nvfp4_mm", a, a_sf, a_global, b, b_sf, b_global, out_dtype, a_sf_layout,
                   b_sf_layout)
    K.on_cuda("nvfp4_mm", a=a, a_sf=a_sf, a_global=a_global, b=b, b_sf=b_sf, b_global=b_global)
    return _dense_call(nvfp4_gemm(s), a, C.JG_NVFP4, C.JG_SCALE_NVFP4, (s.a_layout, s.b_layout))


def _nvfp4_mm_impl(a: Tensor, a_sf: Tensor, a_global: Tensor, b: Tensor, b_sf: Tensor,
                   b_global: Tensor, out_dtype: Optional[torch.dtype] = None,
                   a_sf_layout: str = "swizzled", b_sf_layout: str = "swizzled") -> Tensor:
    op = "nvfp4_mm"
    key = (op, out_dtype, a_sf_layout, b_sf_layout, _meta(a), _meta(a_sf), _meta(a_global),
           _meta(b), _meta(b_sf), _meta(b_global))
    try:
        e = _MEMO[key]
    except KeyError:
        e = _memo(key, _nvfp4_mm_call, a, a_sf, a_global, b, b_sf, b_global, out_dtype,
                  a_sf_layout, b_sf_layout)
    if _misaligned(15, a, a_sf, b, b_sf) or _misaligned(3, a_global, b_global):
        K.aligned(op, a=a, a_sf=a_sf, b=b, b_sf=b_sf)
        K.aligned(op, 4, a_global=a_global, b_global=b_global)
    return _dense(_WHAT[op], e, a, b, None, None, a_global.data_ptr(),
                  b_global.data_ptr(), a_sf.data_ptr(), b_sf.data_ptr())


def _nvfp4_mm_fake(a, a_sf, a_global, b, b_sf, b_global, out_dtype=None,
                   a_sf_layout="swizzled", b_sf_layout="swizzled"):
    s = K.nvfp4_mm("nvfp4_mm", a, a_sf, a_global, b, b_sf, b_global, out_dtype, a_sf_layout,
                   b_sf_layout)
    return _fake_like(a, (s.m, s.n), s.out_dtype)


# ---- grouped -----------------------------------------------------------------------------------


def grouped_key(g: K.Grouped, masked: bool, a_type: int,
                expected_m: Optional[int]) -> tuple:
    """The plan key of a grouped call (Device.grouped_plan's fields), its tiles
    sized for m_hint_pow2(ceil(M / G)) rows a group (contiguous) or for
    expected_m (masked; none: for m_max)."""
    if masked:
        layout = C.JG_GROUPED_MASKED
        hint = m_hint_pow2(min(expected_m, g.m)) if expected_m else 0
    else:
        layout, hint = C.JG_GROUPED_CONTIGUOUS, m_hint_pow2(K.cdiv(g.m, g.groups))
    return (layout, a_type, a_type, K.JG_TYPES[g.out_dtype], g.scale, g.groups, hint, g.n, g.k,
            g.lda, g.ldb, g.n, g.m, g.a_sf_layout, g.b_sf_layout)


class _GroupedBuffer(threading.local):
    """The calling thread's buffer of launch arguments of the grouped device
    layouts: jg_grouped_args, then the three one-element host arrays its a,
    b and d point at (C.GROUPED_ARGS), its fields before rows packed here
    (the arrays' addresses, alpha 1, beta 0). Each launch packs into it, in
    one call, the fields from rows on and the arrays (C.GROUPED_LAUNCH):
    what building the mirror and three ctypes arrays took. Threads may not
    share one (ctypes lets go of the GIL in the call)."""

    def __init__(self):
        buf = (ctypes.c_uint64 * -(-C.GROUPED_ARGS.size // 8))()
        at = ctypes.addressof(buf)
        arrays = at + C.GROUPED_ARRAYS
        C.GROUPED_HEAD.pack_into(buf, 0, arrays, arrays + 8, 0, arrays + 16, 1.0, 0.0)
        self.parts = (buf, at)  # the buffer and its address


_grouped_buffer = _GroupedBuffer()
_pack_grouped_launch = C.GROUPED_LAUNCH.pack_into


def _grouped_launch(what: str, e: _Call, a: int, b: int, rows: int, d: int, a_scale: int = 0,
                    b_scale: int = 0, a_sf: int = 0, b_sf: int = 0):
    """Launches a checked grouped call (device layouts) on device pointers."""
    plan = e.plan or e.planned()
    buf, at = _grouped_buffer.parts
    _pack_grouped_launch(buf, C.GROUPED_ROWS, rows, a_scale, b_scale, 0, 0, 0, 0, a_sf, b_sf, 0,
                         0, a, b, d)
    stream = e.stream  # the launch, as in _dense
    if stream is not None:
        st = C.grouped_run_at(plan, at, stream())
    else:
        st = e.dev.run_asking(C.grouped_run_at, plan, at)
    if st:
        raise e.dev.error(st, what)


def _grouped_scale_args(g: K.Grouped, scale_a: Tensor, scale_b: Tensor, masked: bool):
    if g.scale == C.JG_SCALE_BLOCK and not masked:  # b's scales came as the [G, K/128, N/128] view
        return scale_a.contiguous(), scale_b.transpose(1, 2).contiguous()
    return _fp8_scale_args(g.scale, scale_a, scale_b)


def _grouped_checks(op, masked, a, b, rows, out_dtype, scale_a, scale_b) -> K.Grouped:
    fp8 = scale_a is not None
    check = K.masked_grouped_mm if masked else K.grouped_mm
    g = check(op, a, b, rows, out_dtype, (K.E4M3,) if fp8 else K.HALF, K.BF16 if fp8 else None)
    return K.grouped_scales(op, g, scale_a, scale_b, masked) if fp8 else g


def _rows_name(masked: bool) -> str:
    return "counts" if masked else "offs"


def _grouped_call(op, masked, a, b, rows, out_dtype, expected_m, scale_a, scale_b) -> _Call:
    g = _grouped_checks(op, masked, a, b, rows, out_dtype, scale_a, scale_b)
    _expected_m(op, expected_m)
    K.on_cuda(op, a=a, b=b, scale_a=scale_a, scale_b=scale_b, **{_rows_name(masked): rows})
    e = _grouped_plan_call(g, masked, K.JG_TYPES[a.dtype], expected_m, a, rows)
    if scale_a is not None:  # the views _grouped_scale_args makes row-major
        block_view = g.scale == C.JG_SCALE_BLOCK and not masked
        e.direct_scales = _row_major(scale_a, scale_b.transpose(1, 2) if block_view else scale_b)
    return e


def _grouped_plan_call(g: K.Grouped, masked: bool, a_type: int, expected_m: Optional[int],
                       a: Tensor, rows: Tensor) -> _Call:
    """The plan of a checked grouped call, and how its rows argument is made."""
    e = _Call(g, grouped_key(g, masked, a_type, expected_m), a.device, grouped=True)
    e.pad_rows = not masked and rows.shape[0] == g.groups
    e.zero = _offsets_zero(a.device) if e.pad_rows else None
    return e


def _expected_m(op: str, expected_m: Optional[int]):
    if expected_m is not None and expected_m < 1:
        K.fail(op, f"expected_m = {expected_m}: must be at least 1 (or None)")


# torch.device -> an int32 [1] zero on it, made once (see _offsets_zero)
_ZEROS: dict = {}


def _offsets_zero(where: torch.device) -> Optional[Tensor]:
    """The zero that _offsets puts in front of torch's end offsets on this
    device. Copied from the host and waited for once, so every stream reads
    a zero; never made while a CUDA graph is captured (its value would be
    written only at replay): None then, and that call pads instead."""
    z = _ZEROS.get(where)
    if z is None and not (where.type == "cuda" and torch.cuda.is_current_stream_capturing()):
        z = _ZEROS[where] = torch.zeros(1, dtype=torch.int32).to(where)
    return z


def _offsets(e: _Call, rows: Tensor) -> Tensor:
    """The rows argument: counts, and G + 1 offsets from 0, as they are;
    torch's G end offsets with a 0 in front, as the library reads G + 1
    offsets from 0 (group g is rows[g] .. rows[g + 1] - 1): one small kernel
    (torch.cat of the device's zero and the offsets; F.pad where there is
    no zero takes two), no sync."""
    if not e.pad_rows:
        return rows
    if e.zero is not None:
        return torch.cat((e.zero, rows))
    return F.pad(rows, (1, 0))


def _grouped_impl(op: str, masked: bool, a, b, rows, out_dtype, expected_m=None, scale_a=None,
                  scale_b=None) -> Tensor:
    # b's strides as they are: its [G, K, N] view of [G, N, K] weights is not contiguous
    key = (op, out_dtype, expected_m, a.shape, a.is_contiguous() or a.stride(), a.dtype,
           a.device, b.shape, b.stride(), b.dtype, b.device, rows.shape,
           rows.is_contiguous() or rows.stride(), rows.dtype, rows.device,
           None if scale_a is None else (_meta(scale_a), _meta(scale_b)))
    try:
        e = _MEMO[key]
    except KeyError:
        e = _memo(key, _grouped_call, op, masked, a, b, rows, out_dtype, expected_m, scale_a,
                  scale_b)
    pa, pb, pr = a.data_ptr(), b.data_ptr(), rows.data_ptr()
    psa, psb = (scale_a.data_ptr(), scale_b.data_ptr()) if scale_a is not None else (0, 0)
    if (pa | pb) & 15 or (pr | psa | psb) & 3:
        K.aligned(op, a=a, b=b)
        K.aligned(op, 4, scale_a=scale_a, scale_b=scale_b, **{_rows_name(masked): rows})
    out = e.new_out(*e.out_shape)
    if e.m == 0:
        return out
    g = e.spec
    sa = sb = None  # copies of the scales, held until the launch is queued
    if scale_a is not None and not e.direct_scales:
        sa, sb = _grouped_scale_args(g, scale_a, scale_b, masked)
        psa, psb = sa.data_ptr(), sb.data_ptr()
    offsets = _offsets(e, rows)
    _grouped_launch(_WHAT[op], e, pa, pb, offsets.data_ptr(), out.data_ptr(), psa, psb)
    return out


def _grouped_fake(op, masked, a, b, rows, out_dtype, expected_m=None, scale_a=None,
                  scale_b=None):
    g = _grouped_checks(op, masked, a, b, rows, out_dtype, scale_a, scale_b)
    return _fake_like(a, g.out_shape, g.out_dtype)


def _grouped_mm_impl(a: Tensor, b: Tensor, offs: Tensor,
                     out_dtype: Optional[torch.dtype] = None) -> Tensor:
    return _grouped_impl("grouped_mm", False, a, b, offs, out_dtype)


def _grouped_mm_fake(a, b, offs, out_dtype=None):
    return _grouped_fake("grouped_mm", False, a, b, offs, out_dtype)


def _scaled_grouped_mm_impl(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor,
                            offs: Tensor, out_dtype: Optional[torch.dtype] = None) -> Tensor:
    return _grouped_impl("scaled_grouped_mm", False, a, b, offs, out_dtype, None, scale_a,
                         scale_b)


def _scaled_grouped_mm_fake(a, b, scale_a, scale_b, offs, out_dtype=None):
    return _grouped_fake("scaled_grouped_mm", False, a, b, offs, out_dtype, None, scale_a,
                         scale_b)


def _masked_grouped_mm_impl(a: Tensor, b: Tensor, counts: Tensor,
                            out_dtype: Optional[torch.dtype] = None,
                            expected_m: Optional[int] = None) -> Tensor:
    return _grouped_impl("masked_grouped_mm", True, a, b, counts, out_dtype, expected_m)


def _masked_grouped_mm_fake(a, b, counts, out_dtype=None, expected_m=None):
    return _grouped_fake("masked_grouped_mm", True, a, b, counts, out_dtype, expected_m)


def _masked_scaled_grouped_mm_impl(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor,
                                   counts: Tensor, out_dtype: Optional[torch.dtype] = None,
                                   expected_m: Optional[int] = None) -> Tensor:
    return _grouped_impl("masked_scaled_grouped_mm", True, a, b, counts, out_dtype, expected_m,
                         scale_a, scale_b)


def _masked_scaled_grouped_mm_fake(a, b, scale_a, scale_b, counts, out_dtype=None,
                                   expected_m=None):
    return _grouped_fake("masked_scaled_grouped_mm", True, a, b, counts, out_dtype, expected_m,
                         scale_a, scale_b)


def _nvfp4_grouped_call(op, masked, a, a_sf, a_global, b, b_sf, b_global, rows, out_dtype,
                        expected_m, a_sf_layout, b_sf_layout) -> _Call:
    g = K.nvfp4_grouped(op, masked, a, a_sf, a_global, b, b_sf, b_global, rows, out_dtype,
                        a_sf_layout, b_sf_layout)
    _expected_m(op, expected_m)
    K.on_cuda(op, a=a, a_sf=a_sf, a_global=a_global, b=b, b_sf=b_sf, b_global=b_global,
              **{_rows_name(masked): rows})
    return _grouped_plan_call(g, masked, C.JG_NVFP4, expected_m, a, rows)


def _nvfp4_grouped_impl(op: str, masked: bool, a, a_sf, a_global, b, b_sf, b_global, rows,
                        out_dtype, expected_m, a_sf_layout, b_sf_layout) -> Tensor:
    key = (op, out_dtype, expected_m, a_sf_layout, b_sf_layout, _meta(a), _meta(a_sf),
           _meta(a_global), _meta(b), _meta(b_sf), _meta(b_global), _meta(rows))
    try:
        e = _MEMO[key]
    except KeyError:
        e = _memo(key, _nvfp4_grouped_call, op, masked, a, a_sf, a_global, b, b_sf, b_global,
                  rows, out_dtype, expected_m, a_sf_layout, b_sf_layout)
    K.aligned(op, a=a, a_sf=a_sf, b=b, b_sf=b_sf)
    K.aligned(op, 4, a_global=a_global, b_global=b_global, **{_rows_name(masked): rows})
    out = e.new_out(*e.out_shape)
    if e.m:
        offsets = _offsets(e, rows)
        _grouped_launch(_WHAT[op], e, a.data_ptr(), b.data_ptr(), offsets.data_ptr(),
                        out.data_ptr(), a_global.data_ptr(), b_global.data_ptr(),
                        a_sf.data_ptr(), b_sf.data_ptr())
    return out


def _nvfp4_grouped_fake(op, masked, a, a_sf, a_global, b, b_sf, b_global, rows, out_dtype,
                        a_sf_layout, b_sf_layout):
    g = K.nvfp4_grouped(op, masked, a, a_sf, a_global, b, b_sf, b_global, rows, out_dtype,
                        a_sf_layout, b_sf_layout)
    return _fake_like(a, g.out_shape, g.out_dtype)


def _nvfp4_grouped_mm_impl(a: Tensor, a_sf: Tensor, a_global: Tensor, b: Tensor, b_sf: Tensor,
                           b_global: Tensor, offs: Tensor,
                           out_dtype: Optional[torch.dtype] = None,
                           b_sf_layout: str = "swizzled") -> Tensor:
    return _nvfp4_grouped_impl("nvfp4_grouped_mm", False, a, a_sf, a_global, b, b_sf, b_global,
                               offs, out_dtype, None, "row", b_sf_layout)


def _nvfp4_grouped_mm_fake(a, a_sf, a_global, b, b_sf, b_global, offs, out_dtype=None,
                           b_sf_layout="swizzled"):
    return _nvfp4_grouped_fake("nvfp4_grouped_mm", False, a, a_sf, a_global, b, b_sf,
                               b_global, offs, out_dtype, "row", b_sf_layout)


def _masked_nvfp4_grouped_mm_impl(a: Tensor, a_sf: Tensor, a_global: Tensor, b: Tensor,
                                  b_sf: Tensor, b_global: Tensor, counts: Tensor,
                                  out_dtype: Optional[torch.dtype] = None,
                                  expected_m: Optional[int] = None,
                                  a_sf_layout: str = "swizzled",
                                  b_sf_layout: str = "swizzled") -> Tensor:
    return _nvfp4_grouped_impl("masked_nvfp4_grouped_mm", True, a, a_sf, a_global, b, b_sf,
                               b_global, counts, out_dtype, expected_m, a_sf_layout,
                               b_sf_layout)


def _masked_nvfp4_grouped_mm_fake(a, a_sf, a_global, b, b_sf, b_global, counts, out_dtype=None,
                                  expected_m=None, a_sf_layout="swizzled",
                                  b_sf_layout="swizzled"):
    return _nvfp4_grouped_fake("masked_nvfp4_grouped_mm", True, a, a_sf, a_global, b, b_sf,
                               b_global, counts, out_dtype, a_sf_layout, b_sf_layout)


# ---- registration ----------------------------------------------------------------------------

# name: (real kernel, fake kernel); the schema comes from the real one's annotations
_OPS = {
    "linear": (_linear_impl, _linear_fake),
    "mm": (_mm_impl, _mm_fake),
    "scaled_mm": (_scaled_mm_impl, _scaled_mm_fake),
    "linear_out": (_linear_out_impl, _linear_out_fake),
    "mm_out": (_mm_out_impl, _mm_out_fake),
    "scaled_mm_out": (_scaled_mm_out_impl, _scaled_mm_out_fake),
    "quantize_fp8": (_quantize_fp8_impl, _quantize_fp8_fake),
    "quantize_nvfp4": (_quantize_nvfp4_impl, _quantize_nvfp4_fake),
    "nvfp4_mm": (_nvfp4_mm_impl, _nvfp4_mm_fake),
    "grouped_mm": (_grouped_mm_impl, _grouped_mm_fake),
    "scaled_grouped_mm": (_scaled_grouped_mm_impl, _scaled_grouped_mm_fake),
    "masked_grouped_mm": (_masked_grouped_mm_impl, _masked_grouped_mm_fake),
    "masked_scaled_grouped_mm": (_masked_scaled_grouped_mm_impl,
                                 _masked_scaled_grouped_mm_fake),
    "nvfp4_grouped_mm": (_nvfp4_grouped_mm_impl, _nvfp4_grouped_mm_fake),
    "masked_nvfp4_grouped_mm": (_masked_nvfp4_grouped_mm_impl, _masked_nvfp4_grouped_mm_fake),
}

# the ops' names as launch errors give them
_WHAT = {op: f"jitgemm.{op}" for op in _OPS}

for _name, (_impl, _fake) in _OPS.items():
    torch.library.custom_op(f"jitgemm::{_name}", _impl, mutates_args=(
        ("out",) if _name.endswith("_out") else ())).register_fake(_fake)

_torch_ops = torch.ops.jitgemm


# ---- the public functions -------------------------------------------------------------------------


def linear(x: Tensor, w: Tensor, bias: Optional[Tensor] = None,
           out_dtype: Optional[torch.dtype] = None, *, out: Optional[Tensor] = None) -> Tensor:
    """``x @ w.T + bias``, as ``torch.nn.functional.linear``, on CUDA.

    Parameters
    ----------
    x : Tensor
        ``[..., K]``, bfloat16 or float16, contiguous in its last dimension,
        the others collapsible into rows of one stride (any contiguous tensor).
    w : Tensor
        ``[N, K]``, x's dtype, K contiguous (a ``nn.Linear`` weight).
    bias : Tensor, optional
        ``[N]`` (added after the GEMM, in the output's dtype), or of the
        output's shape and dtype (read as the GEMM's C operand, beta = 1:
        e.g. a residual).
    out_dtype : torch.dtype, optional
        bfloat16, float16 or float32; default x's dtype. Sums are FP32.
    out : Tensor, optional
        Where to write the result (keyword only), as torch's ``out=``: a
        tensor the caller owns (a static buffer of a CUDA graph, a
        workspace arena), so the call allocates no output. Of the output's
        dtype (out_dtype, else x's) and exact shape ``[..., N]``, on x's
        device, its last dimension contiguous and the others collapsing
        into rows of one stride (any stride of at least N: a view such as
        ``buf[:, :N]`` of a wider buffer; a row stride other than N plans a
        kernel of its own). It must share no byte with x, w or the bias (a
        test of address ranges at each call: views of one buffer pass
        where their bytes do not meet). ``ArgumentError`` otherwise,
        before anything is launched.

    Returns
    -------
    Tensor
        ``[..., N]``, contiguous; out itself where given.

    Notes
    -----
    Planned M-generic with the M hint of ``x``'s rows (``m_hint``: a power of
    two or 1.5 times one, 16 to 16384): the first call of each (dtypes, N, K,
    layout, M bucket) plans, and compiles if the kernel is in neither cache;
    ``warm`` does it ahead.

    Unaligned operands (``linear``, ``mm``, ``scaled_mm``): rows of x, w, the
    bias or the output need not be 16 bytes apart (any K or N), nor x's and
    w's data 16-byte aligned (offset views such as ``qkv[:, 1:]``). Where A's
    or B's rows or pointer are off 16 bytes, each call allocates a workspace
    from PyTorch's caching allocator (``torch.empty`` of
    ``jg_plan_workspace_bytes`` bytes, about ``(M + N) K`` elements, on the
    current stream; ``PlanRecord.workspace_bytes``) and the library copies A
    and B into it as rows on 128-byte lines, then runs the aligned kernel on
    the copies. Aligned calls allocate nothing but the output. A pointer off
    16 bytes with rows that are 16-byte multiples takes a plan of its own
    (``JG_GEMM_UNALIGNED``), made on the first such call.
    """
    # _direct(x), written out: the hottest call saves a frame
    if (type(x) is Tensor and not _is_dynamo_compiling() and not _dispatch_modes()
            and not _function_modes()):
        if out is None or type(out) is Tensor:
            return _linear_run(x, w, bias, out_dtype, out)
    if out is None:
        return _torch_ops.linear(x, w, bias, out_dtype)
    _torch_ops.linear_out(x, w, bias, out_dtype, out)
    return out


def mm(a: Tensor, b_t: Tensor, out_dtype: Optional[torch.dtype] = None, *,
       out: Optional[Tensor] = None) -> Tensor:
    """``a @ b_t.T``: a ``[M, K]``, b_t ``[N, K]`` (K-major: B given transposed,
    the layout libjitgemm reads; ``torch.mm(a, b)`` is ``mm(a, b.t())`` where b
    is a ``[K, N]`` column-major view of a contiguous ``[N, K]`` tensor).

    Parameters
    ----------
    a : Tensor
        ``[M, K]``, bfloat16 or float16, rows contiguous.
    b_t : Tensor
        ``[N, K]``, a's dtype, rows contiguous.
    out_dtype : torch.dtype, optional
        bfloat16, float16 or float32; default a's dtype.
    out : Tensor, optional
        ``[M, N]`` to write the result into, as ``linear``'s out (sharing no
        byte with a or b_t).

    Returns
    -------
    Tensor
        ``[M, N]``; out itself where given.

    Notes
    -----
    Any K, N, row stride and element-aligned pointer: unaligned operands get
    a workspace from PyTorch's allocator at each call (``linear``'s Notes).
    """
    if (type(a) is Tensor and not _is_dynamo_compiling() and not _dispatch_modes()
            and not _function_modes()):
        if out is None or type(out) is Tensor:  # _direct(a), written out as in linear
            return _mm_run(a, b_t, out_dtype, out)
    if out is None:
        return _torch_ops.mm(a, b_t, out_dtype)
    _torch_ops.mm_out(a, b_t, out_dtype, out)
    return out


def scaled_mm(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor,
              bias: Optional[Tensor] = None, out_dtype: Optional[torch.dtype] = None, *,
              out: Optional[Tensor] = None) -> Tensor:
    """FP8 GEMM: ``(scale_a * a) @ (scale_b * b).T + bias``.

    The operands follow DeepGEMM's ``fp8_gemm_nt``: a ``[M, K]`` and b
    ``[N, K]``, both float8_e4m3fn and K-major; the scales' dimensions follow
    their operands', FP32:

    ======  ============================  ========================================
    mode    scale_a                       scale_b
    ======  ============================  ========================================
    tensor  one value (``[]``, ``[1]``)   one value
    row     ``[M]`` or ``[M, 1]``         ``[N]``, ``[N, 1]`` or ``[1, N]``
    block   ``[M, ceil(K/128)]`` (1x128)  ``[ceil(N/128), ceil(K/128)]`` (128x128)
    ======  ============================  ========================================

    From ``torch._scaled_mm(a, b, scale_a, scale_b, bias, out_dtype)``, whose
    b is ``[K, N]`` column-major: call ``scaled_mm(a, b.t(), scale_a,
    scale_b.t(), bias, out_dtype)``. ``b.t()`` is then the ``[N, K]`` row-major
    tensor, and ``scale_b.t()`` turns torch's row-wise ``[1, N]`` into ``[N,
    1]`` and its 128x128 ``[ceil(K/128), ceil(N/128)]`` (a transposed view) into
    the row-major ``[ceil(N/128), ceil(K/128)]`` read here, both without a copy.
    torch's 1x128 scale_a is outer-dim-major (stride ``(1, M)``): it is copied
    to row-major here (one small kernel). From DeepGEMM's
    ``fp8_gemm_nt((a, sfa), (b, sfb), d)``: ``d = scaled_mm(a, b, sfa, sfb)``
    (sfa in any layout; non-row-major ones are copied).

    Parameters
    ----------
    a, b : Tensor
        ``[M, K]`` and ``[N, K]``, float8_e4m3fn, rows contiguous (any K, row
        stride and pointer: unaligned operands get a workspace at each call,
        as ``linear``'s Notes say).
    scale_a, scale_b : Tensor
        FP32, as in the table; the mode is read from their shapes.
    bias : Tensor, optional
        As ``linear``'s.
    out_dtype : torch.dtype, optional
        bfloat16 (default), float16 or float32.
    out : Tensor, optional
        ``[M, N]`` to write the result into, as ``linear``'s out (sharing no
        byte with a, b, the bias or the scales).

    Returns
    -------
    Tensor
        ``[M, N]``; out itself where given.
    """
    if _direct(a) and (out is None or type(out) is Tensor):
        return _scaled_mm_run(a, b, scale_a, scale_b, bias, out_dtype, out)
    if out is None:
        return _torch_ops.scaled_mm(a, b, scale_a, scale_b, bias, out_dtype)
    _torch_ops.scaled_mm_out(a, b, scale_a, scale_b, bias, out_dtype, out)
    return out


def quantize_fp8(x: Tensor, scale: str = "row", block_rows: int = 1) -> Tuple[Tensor, Tensor]:
    """bfloat16/float16 to float8_e4m3fn with FP32 scales, on the GPU
    (``jg_quantize_e4m3``): ``q = e4m3(x / s)``, ``s = amax / 448`` of each
    scale's group (1 for an all-zero group), so ``x ~= q * s``.

    Parameters
    ----------
    x : Tensor
        ``[..., K]``, bfloat16 or float16 (2-D for ``block_rows=128``).
    scale : {"row", "block", "tensor"}
        ``"tensor"``: s ``[1]``; ``"row"``: s ``[...]`` (x's leading shape);
        ``"block"``: 1x128 blocks, s ``[..., ceil(K/128)]`` (activations),
        or with ``block_rows=128`` 128x128 blocks, s
        ``[ceil(rows/128), ceil(K/128)]`` (weights).
    block_rows : {1, 128}
        The block height of ``scale="block"``.

    Returns
    -------
    (Tensor, Tensor)
        q (x's shape, contiguous) and s, in the layouts ``scaled_mm`` reads.
    """
    if _direct(x):
        return _quantize_fp8_impl(x, scale, block_rows)
    return _torch_ops.quantize_fp8(x, scale, block_rows)


def quantize_nvfp4(x: Tensor, sf_layout: str = "swizzled") -> Tuple[Tensor, Tensor, Tensor]:
    """bfloat16/float16 ``[R, K]`` to NVFP4 on the GPU (``jg_quantize_nvfp4``,
    NVIDIA's recipe; ``include/jitgemm/jitgemm.h`` gives every step).

    Parameters
    ----------
    x : Tensor
        ``[R, K]``, K a multiple of 16.
    sf_layout : {"swizzled", "row"}
        The block scales' layout: 128x4-swizzled (cuBLASLt's, CUTLASS's and
        ``torch._scaled_mm``'s NVFP4 layout) or row-major.

    Returns
    -------
    (Tensor, Tensor, Tensor)
        codes ``[R, K/2]`` uint8 (two e2m1 codes a byte, element 2i in the low
        nibble); block scales float8_e4m3fn, one per 16 of K, ``[R rounded up
        to 128, K/16 rounded up to 4]`` swizzled or ``[R, K/16]`` row-major;
        the FP32 global scale ``[1]``. An element is ``e2m1(code) *
        e4m3(scale) * global``.
    """
    if _direct(x):
        return _quantize_nvfp4_impl(x, sf_layout)
    return _torch_ops.quantize_nvfp4(x, sf_layout)


def nvfp4_mm(a: Tensor, a_sf: Tensor, a_global: Tensor, b: Tensor, b_sf: Tensor,
             b_global: Tensor, out_dtype: Optional[torch.dtype] = None,
             a_sf_layout: str = "swizzled", b_sf_layout: str = "swizzled") -> Tensor:
    """NVFP4 GEMM ``A @ B.T`` over operands from ``quantize_nvfp4`` (codes,
    block scales, global scale each). Hopper has no FP4 tensor cores: the
    kernels expand to FP16 exactly and sum in FP32.

    Parameters
    ----------
    a, a_sf, a_global : Tensor
        A ``[M, K]``: codes ``[M, K/2]`` uint8, its block scales, its global scale.
    b, b_sf, b_global : Tensor
        B ``[N, K]`` likewise.
    out_dtype : torch.dtype, optional
        bfloat16 (default), float16 or float32.
    a_sf_layout, b_sf_layout : {"swizzled", "row"}
        The block scales' layouts ("row" needs K a multiple of 256).

    Returns
    -------
    Tensor
        ``[M, N]``.
    """
    if _direct(a):
        return _nvfp4_mm_impl(a, a_sf, a_global, b, b_sf, b_global, out_dtype, a_sf_layout,
                              b_sf_layout)
    return _torch_ops.nvfp4_mm(a, a_sf, a_global, b, b_sf, b_global, out_dtype, a_sf_layout,
                               b_sf_layout)


def grouped_mm(a: Tensor, b: Tensor, offs: Tensor,
               out_dtype: Optional[torch.dtype] = None) -> Tensor:
    """Grouped GEMM with ``torch._grouped_mm``'s 2D x 3D semantics (MoE experts,
    the groups' rows one after another in a):
    ``out[offs[g-1]:offs[g]] = a[offs[g-1]:offs[g]] @ b[g]``.

    Parameters
    ----------
    a : Tensor
        ``[M, K]``, bfloat16 or float16.
    b : Tensor
        ``[G, K, N]``, K-major: ``w.transpose(1, 2)`` of expert weights ``w``
        ``[G, N, K]`` that are contiguous (what torch._grouped_mm runs fastest
        too). At most 256 groups.
    offs : Tensor
        int32 on the device: torch's ``[G]`` end offsets (group g is rows
        ``offs[g-1]`` (0 for g = 0) to ``offs[g] - 1``), or ``[G + 1]`` offsets
        starting with 0 (libjitgemm's own form, which saves one small kernel).
        Read on the device: no synchronization. Rows past the last offset are
        not written.
    out_dtype : torch.dtype, optional
        bfloat16, float16 or float32; default a's dtype.

    Returns
    -------
    Tensor
        ``[M, N]``.

    Notes
    -----
    Tiles are sized for ``ceil(M / G)`` rows a group rounded up to a power of
    two (16 to 16384; the dense ops' ``m_hint`` also has 1.5 times one); the
    plan also holds M, so each new M plans once (the kernel itself comes from
    the memory cache unless the hint's bucket is new).
    """
    if _direct(a):
        return _grouped_mm_impl(a, b, offs, out_dtype)
    return _torch_ops.grouped_mm(a, b, offs, out_dtype)


def scaled_grouped_mm(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor, offs: Tensor,
                      out_dtype: Optional[torch.dtype] = None) -> Tensor:
    """FP8 ``grouped_mm``, as ``torch._scaled_grouped_mm(a, b, scale_a, scale_b,
    offs=offs, out_dtype=...)``.

    Parameters
    ----------
    a : Tensor
        ``[M, K]`` float8_e4m3fn.
    b : Tensor
        ``[G, K, N]`` float8_e4m3fn, K-major (``w.transpose(1, 2)``).
    scale_a, scale_b : Tensor
        FP32, dims following their operands': row-wise ``[M]`` and ``[G, N]``
        (torch's); 1x128 and 128x128 blocks ``[M, ceil(K/128)]`` and ``[G,
        ceil(K/128), ceil(N/128)]`` (the transposed view of DeepGEMM's ``[G,
        ceil(N/128), ceil(K/128)]``, as b is of ``[G, N, K]``); or one per
        group each, ``[G]`` and ``[G]``.
    offs : Tensor
        As ``grouped_mm``'s.
    out_dtype : torch.dtype, optional
        bfloat16 (default), float16 or float32.
    """
    if _direct(a):
        return _scaled_grouped_mm_impl(a, b, scale_a, scale_b, offs, out_dtype)
    return _torch_ops.scaled_grouped_mm(a, b, scale_a, scale_b, offs, out_dtype)


def masked_grouped_mm(a: Tensor, b: Tensor, counts: Tensor,
                      out_dtype: Optional[torch.dtype] = None,
                      expected_m: Optional[int] = None) -> Tensor:
    """Masked grouped GEMM (DeepGEMM's ``m_grouped_*_masked`` layout, for
    CUDA-graph decode): ``out[g, :counts[g]] = a[g, :counts[g]] @ b[g].T``.

    Parameters
    ----------
    a : Tensor
        ``[G, m_max, K]``, bfloat16 or float16.
    b : Tensor
        ``[G, N, K]``, a's dtype, K contiguous.
    counts : Tensor
        ``[G]`` int32 on the device: the valid rows of each group (clamped to
        m_max), e.g. written by a router inside the same CUDA graph.
    out_dtype : torch.dtype, optional
        bfloat16, float16 or float32; default a's dtype.
    expected_m : int, optional
        The rows a group is expected to hold: sizes the tiles (rounded up to
        a power of two, 16 to 16384). Default: tiles sized for m_max.

    Returns
    -------
    Tensor
        ``[G, m_max, N]``; rows past each group's count are not written.
    """
    if _direct(a):
        return _masked_grouped_mm_impl(a, b, counts, out_dtype, expected_m)
    return _torch_ops.masked_grouped_mm(a, b, counts, out_dtype, expected_m)


def masked_scaled_grouped_mm(a: Tensor, b: Tensor, scale_a: Tensor, scale_b: Tensor,
                             counts: Tensor, out_dtype: Optional[torch.dtype] = None,
                             expected_m: Optional[int] = None) -> Tensor:
    """FP8 ``masked_grouped_mm`` (DeepGEMM's ``m_grouped_fp8_gemm_nt_masked``).

    Parameters
    ----------
    a, b : Tensor
        ``[G, m_max, K]`` and ``[G, N, K]``, float8_e4m3fn.
    scale_a, scale_b : Tensor
        FP32: row-wise ``[G, m_max]`` and ``[G, N]``; blocks ``[G, m_max,
        ceil(K/128)]`` and ``[G, ceil(N/128), ceil(K/128)]`` (DeepGEMM's
        shapes, any layout; non-row-major ones are copied); or ``[G]`` and
        ``[G]``.
    counts, out_dtype, expected_m
        As ``masked_grouped_mm``'s (out_dtype default bfloat16).
    """
    if _direct(a):
        return _masked_scaled_grouped_mm_impl(a, b, scale_a, scale_b, counts, out_dtype,
                                              expected_m)
    return _torch_ops.masked_scaled_grouped_mm(a, b, scale_a, scale_b, counts, out_dtype, expected_m)


def nvfp4_grouped_mm(a: Tensor, a_sf: Tensor, a_global: Tensor, b: Tensor, b_sf: Tensor,
                     b_global: Tensor, offs: Tensor, out_dtype: Optional[torch.dtype] = None,
                     b_sf_layout: str = "swizzled") -> Tensor:
    """NVFP4 grouped GEMM in the contiguous layout (``grouped_mm``'s, the
    groups' rows one after another in a):
    ``out[offs[g-1]:offs[g]] = A[offs[g-1]:offs[g]] @ B[g].T``.

    Parameters
    ----------
    a, a_sf : Tensor
        A ``[M, K]`` as from ``quantize_nvfp4(x, "row")``: codes ``[M, K/2]``
        uint8 and row-major block scales ``[M, K/16]`` (a group's first row is
        known only on the GPU, so A's scales cannot be swizzled here); K a
        multiple of 256.
    a_global : Tensor
        ``[G]`` FP32: the global scale of each group's rows of A (one
        quantization of the whole A: its scale repeated, ``g.repeat(G)``).
    b, b_sf, b_global : Tensor
        The experts' weights: codes ``[G, N, K/2]``, G scale arrays of N rows
        one after another (``torch.stack`` of ``quantize_nvfp4``'s), global
        scales ``[G]``.
    offs : Tensor
        As ``grouped_mm``'s.
    out_dtype : torch.dtype, optional
        bfloat16 (default), float16 or float32.
    b_sf_layout : {"swizzled", "row"}
        B's scale layout.

    Returns
    -------
    Tensor
        ``[M, N]``.
    """
    if _direct(a):
        return _nvfp4_grouped_mm_impl(a, a_sf, a_global, b, b_sf, b_global, offs, out_dtype,
                                      b_sf_layout)
    return _torch_ops.nvfp4_grouped_mm(a, a_sf, a_global, b, b_sf, b_global, offs, out_dtype,
                                       b_sf_layout)


def masked_nvfp4_grouped_mm(a: Tensor, a_sf: Tensor, a_global: Tensor, b: Tensor, b_sf: Tensor,
                            b_global: Tensor, counts: Tensor,
                            out_dtype: Optional[torch.dtype] = None,
                            expected_m: Optional[int] = None, a_sf_layout: str = "swizzled",
                            b_sf_layout: str = "swizzled") -> Tensor:
    """NVFP4 ``masked_grouped_mm``: ``out[g, :counts[g]] = A[g, :counts[g]] @ B[g].T``.

    Parameters
    ----------
    a, a_sf, a_global : Tensor
        A: codes ``[G, m_max, K/2]``; G scale arrays of m_max rows one after
        another (``quantize_nvfp4`` of A viewed as ``[G m_max, K]`` makes them
        where m_max is a multiple of 128 or the layout is "row"); ``[G]``
        global scales (there, the one scale repeated: ``g.repeat(G)``).
    b, b_sf, b_global, out_dtype, expected_m
        As ``nvfp4_grouped_mm``'s and ``masked_grouped_mm``'s.
    counts : Tensor
        As ``masked_grouped_mm``'s.
    a_sf_layout, b_sf_layout : {"swizzled", "row"}
        The scale layouts ("row" needs K a multiple of 256).

    Returns
    -------
    Tensor
        ``[G, m_max, N]``; rows past each group's count are not written.
    """
    if _direct(a):
        return _masked_nvfp4_grouped_mm_impl(a, a_sf, a_global, b, b_sf, b_global, counts,
                                             out_dtype, expected_m, a_sf_layout, b_sf_layout)
    return _torch_ops.masked_nvfp4_grouped_mm(a, a_sf, a_global, b, b_sf, b_global, counts,
                                              out_dtype, expected_m, a_sf_layout, b_sf_layout)
