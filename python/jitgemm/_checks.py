"""Argument checks of every op, on tensor metadata only (shapes, strides,
dtypes, devices), so that the real kernels and the fake (meta) kernels that
torch.compile traces with raise the same errors and agree on every output.

Each check returns what the op needs to plan and launch: rows, leading
dimensions (in elements), the output's shape and dtype. What metadata cannot
tell, the device pointers' alignment, ``aligned`` tests at every call of the
ops whose kernels load by TMA only (grouped, NVFP4); the dense 16-bit and FP8
ops take any pointer aligned to its element (``_ops`` picks the plan).
"""

import math
from typing import NamedTuple, Optional, Sequence, Tuple

import torch

from . import _capi as C
from ._device import ArgumentError

BF16, FP16, FP32, E4M3 = torch.bfloat16, torch.float16, torch.float32, torch.float8_e4m3fn
JG_TYPES = {BF16: C.JG_BF16, FP16: C.JG_FP16, FP32: C.JG_FP32, E4M3: C.JG_E4M3}
JG_SIZES = {t: d.itemsize for d, t in JG_TYPES.items()}  # bytes of an element, by jg_dtype
HALF = (BF16, FP16)
OUT_TYPES = (BF16, FP16, FP32)
OFFSET_TYPES = (torch.int32,)
SCALE_BLOCK = 128  # FP8 block scales: 1x128 (activations) and 128x128 (weights)
NVFP4_BLOCK = 16   # NVFP4: one e4m3 scale per 16 elements of K
SF_LAYOUTS = {"swizzled": C.JG_SF_SWIZZLED_128X4, "row": C.JG_SF_ROW_MAJOR}

# bias: none, C operand with beta = 1 (full [..., N]), added after ([N])
BIAS_NONE, BIAS_C, BIAS_ADD = 0, 1, 2


def fail(op: str, message: str):
    raise ArgumentError(f"jitgemm.{op}: {message}")


def cdiv(a: int, b: int) -> int:
    return (a + b - 1) // b


def shape(t: torch.Tensor) -> Tuple[int, ...]:
    return tuple(t.shape)


def dtype_in(op: str, name: str, t: torch.Tensor, allowed: Sequence[torch.dtype]):
    if t.dtype not in allowed:
        names = " or ".join(str(d).replace("torch.", "") for d in allowed)
        fail(op, f"{name} must be {names}, got {str(t.dtype).replace('torch.', '')}")


def dims(op: str, name: str, t: torch.Tensor, n: int, what: str):
    if t.dim() != n:
        fail(op, f"{name} must be {what} ({n}-D), got shape {shape(t)}")


def same_device(op: str, ref: torch.Tensor, **tensors: Optional[torch.Tensor]):
    for name, t in tensors.items():
        if t is not None and t.device != ref.device:
            fail(op, f"{name} is on {t.device}, the other operands on {ref.device}")


def out_dtype_of(op: str, out_dtype: Optional[torch.dtype], default: torch.dtype) -> torch.dtype:
    d = default if out_dtype is None else out_dtype
    if d not in OUT_TYPES:
        fail(op, f"out_dtype must be bfloat16, float16 or float32, got {d}")
    return d


def aligned_rows(op: str, what: str, ld: int, dtype: torch.dtype):
    """TMA's rule: rows of an operand start 16 bytes apart."""
    size = dtype.itemsize
    if (ld * size) % 16:
        fail(op, f"{what}: rows of {ld} {str(dtype).replace('torch.', '')} elements "
                 f"({ld * size} bytes) are not a multiple of 16 bytes")


def rows_of(op: str, name: str, t: torch.Tensor, fix: str = "") -> Tuple[int, int]:
    """t [..., K] as a matrix: (rows, leading dimension). The last dimension
    must be contiguous and the others must collapse into rows of one stride
    (as t.view(-1, K) would). fix: what the errors advise (default: pass
    t.contiguous())."""
    fix = fix or f"pass {name}.contiguous()"
    k = t.shape[-1]
    if k > 1 and t.stride(-1) != 1:
        fail(op, f"{name} must be contiguous in its last dimension (stride 1), got strides "
                 f"{tuple(t.stride())}; {fix}")
    lead = [(s, st) for s, st in zip(t.shape[:-1], t.stride()[:-1]) if s != 1]
    rows = math.prod(t.shape[:-1])
    if not lead:
        return rows, k
    for (_, outer), (size, inner) in zip(lead, lead[1:]):
        if outer != inner * size:
            fail(op, f"{name}'s leading dimensions do not collapse into rows of one stride "
                     f"(shape {shape(t)}, strides {tuple(t.stride())}); {fix}")
    ld = lead[-1][1]
    if ld < k:
        fail(op, f"{name}'s rows overlap (row stride {ld} < {k} columns)")
    return rows, ld


def k_major(op: str, name: str, t: torch.Tensor, k_dim: int, rows_dim: int) -> int:
    """Leading dimension of an operand whose k_dim is contiguous (stride 1) and
    whose rows_dim steps over rows."""
    if t.shape[k_dim] > 1 and t.stride(k_dim) != 1:
        fail(op, f"{name} must be K-major: its dimension {k_dim} (K = {t.shape[k_dim]}) "
                 f"contiguous, got shape {shape(t)} with strides {tuple(t.stride())}")
    ld = t.stride(rows_dim) if t.shape[rows_dim] > 1 else t.shape[k_dim]
    if ld < t.shape[k_dim]:
        fail(op, f"{name}'s rows overlap (stride {ld} < K = {t.shape[k_dim]})")
    return ld


def positive(op: str, **sizes: int):
    for name, v in sizes.items():
        if v < 1:
            fail(op, f"{name} = {v}: must be at least 1")


def on_cuda(op: str, **tensors: Optional[torch.Tensor]):
    for name, t in tensors.items():
        if t is not None and t.device.type != "cuda":
            fail(op, f"{name} is on {t.device}: jitgemm runs on CUDA devices only")


def aligned(op: str, align: int = 16, **tensors: Optional[torch.Tensor]):
    """Device pointers aligned as the kernels load them (TMA: 16 bytes). Real
    tensors only (fake ones have no addresses); checked at every call."""
    for name, t in tensors.items():
        if t is not None and t.data_ptr() % align and t.numel():
            fail(op, f"{name}'s data (0x{t.data_ptr():x}) is not {align}-byte aligned: "
                     f"an offset view? pass {name}.clone()")


# ---- dense ------------------------------------------------------------------------


class Gemm(NamedTuple):
    m: int
    n: int
    k: int
    lda: int
    ldb: int
    out_shape: Tuple[int, ...]
    out_dtype: torch.dtype
    bias: int
    ldc: int
    ldd: int = 0  # the output's row stride (0: packed, n; out= gives its own)


def bias_mode(op: str, bias: Optional[torch.Tensor], out_shape, out_dtype) -> Tuple[int, int]:
    """(mode, ldc): a bias of the output's shape and dtype is the C operand
    (beta = 1); a bias [N] (the library's C has no broadcast: ldc >= N) is
    added after the GEMM."""
    if bias is None:
        return BIAS_NONE, 0
    n = out_shape[-1]
    if shape(bias) == tuple(out_shape) and bias.dtype == out_dtype:
        _, ldc = rows_of(op, "bias", bias)
        return BIAS_C, ldc
    if shape(bias) == (n,):
        return BIAS_ADD, 0
    fail(op, f"bias must be [N] = [{n}] or of the output's shape {tuple(out_shape)} and "
             f"dtype {out_dtype}; got {shape(bias)} {bias.dtype}")


def gemm(op: str, a: torch.Tensor, b: torch.Tensor, bias: Optional[torch.Tensor],
         out_dtype: Optional[torch.dtype], in_types, default_out) -> Gemm:
    """a [..., K] (x of linear, a of mm) times b [N, K]^T. Rows need not be 16
    bytes apart: the library plans such problems for element-aligned loads
    and stores (and packs A and B where the op gives it a workspace)."""
    dtype_in(op, "a" if op != "linear" else "x", a, in_types)
    name_a, name_b = ("x", "w") if op == "linear" else ("a", "b")
    if b.dtype != a.dtype:
        fail(op, f"{name_b} is {b.dtype}, {name_a} {a.dtype}: they must match")
    if a.dim() < 1:
        fail(op, f"{name_a} must have at least one dimension (K)")
    dims(op, name_b, b, 2, "[N, K]")
    same_device(op, a, **{name_b: b, "bias": bias})
    k, n = a.shape[-1], b.shape[0]
    if b.shape[1] != k:
        fail(op, f"{name_b} is [N, K] = {shape(b)}: its K ({b.shape[1]}) differs from "
                 f"{name_a}'s last dimension ({k})")
    positive(op, K=k, N=n)
    m, lda = rows_of(op, name_a, a)
    ldb = k_major(op, name_b, b, 1, 0)
    out_dtype = out_dtype_of(op, out_dtype, default_out if default_out else a.dtype)
    out_shape = tuple(a.shape[:-1]) + (n,)
    return Gemm(m, n, k, lda, ldb, out_shape, out_dtype, *bias_mode(op, bias, out_shape, out_dtype))


def gemm_out(op: str, g: Gemm, ref: torch.Tensor, out: torch.Tensor) -> Gemm:
    """g writing into out (out=): out must be of the output's dtype and
    exact shape, on ref's device, its last dimension contiguous and the
    others collapsing into rows of one stride (any such stride >= N: the
    library's ldd). Returns g with out's row stride as ldd."""
    if out.dtype != g.out_dtype:
        fail(op, f"out is {str(out.dtype).replace('torch.', '')}, the output "
                 f"{str(g.out_dtype).replace('torch.', '')} (out_dtype, else the default)")
    if shape(out) != tuple(g.out_shape):
        fail(op, f"out is {shape(out)}, the output {tuple(g.out_shape)}: out must be of its "
                 f"shape exactly")
    same_device(op, ref, out=out)
    _, ldd = rows_of(op, "out", out, "the library writes rows of one stride (a row-major "
                                     "buffer, or a view of its columns)")
    return g._replace(ldd=ldd)


def span(t: Optional[torch.Tensor]) -> int:
    """Bytes from t's data pointer to past its last element (0: none, or no
    elements): the memory a kernel may touch, for out='s overlap test."""
    if t is None or not t.numel():
        return 0
    return (sum((s - 1) * st for s, st in zip(t.shape, t.stride())) + 1) * t.element_size()


def fp8_scales(op: str, m: int, n: int, k: int, scale_a: torch.Tensor, scale_b: torch.Tensor,
               a_lead=(), b_lead=()) -> int:
    """The scale mode that scale_a and scale_b's shapes say (FP32 both); a_lead
    and b_lead are the operands' group dimensions ([G] or none).
      tensor: one value each (grouped: one per group)
      row:    scale_a [*a_lead, M] or [*a_lead, M, 1]; scale_b [*b_lead, N] (or [N, 1], [1, N])
      block:  scale_a [*a_lead, M, ceil(K/128)]; scale_b [*b_lead, ceil(N/128), ceil(K/128)]
    """
    dtype_in(op, "scale_a", scale_a, (FP32,))
    dtype_in(op, "scale_b", scale_b, (FP32,))
    sa, sb = shape(scale_a), shape(scale_b)
    kb, nb = cdiv(k, SCALE_BLOCK), cdiv(n, SCALE_BLOCK)
    groups = math.prod(b_lead)
    if scale_a.numel() == math.prod(a_lead) and scale_b.numel() == groups and (
            a_lead or (scale_a.numel() == 1 and scale_b.numel() == 1)):
        return C.JG_SCALE_TENSOR
    if sa in (tuple(a_lead) + (m,), tuple(a_lead) + (m, 1)) and sb in (
            tuple(b_lead) + (n,), tuple(b_lead) + (n, 1), tuple(b_lead) + (1, n)):
        return C.JG_SCALE_ROW
    if sa == tuple(a_lead) + (m, kb) and sb == tuple(b_lead) + (nb, kb):
        return C.JG_SCALE_BLOCK
    lead_a = "".join(f"{d}, " for d in a_lead)
    lead_b = "".join(f"{d}, " for d in b_lead)
    fail(op, f"scale_a {sa} and scale_b {sb} match no scale mode: tensor (one value each"
             f"{', per group' if b_lead else ''}), row ([{lead_a}{m}] and [{lead_b}{n}]) or "
             f"block ([{lead_a}{m}, {kb}] and [{lead_b}{nb}, {kb}], 1x128 and 128x128 blocks)")


class ScaledGemm(NamedTuple):
    gemm: Gemm
    scale: int


def scaled_mm(op: str, a, b, scale_a, scale_b, bias, out_dtype) -> ScaledGemm:
    dims(op, "a", a, 2, "[M, K]")
    g = gemm(op, a, b, bias, out_dtype, (E4M3,), BF16)
    same_device(op, a, scale_a=scale_a, scale_b=scale_b)
    return ScaledGemm(g, fp8_scales(op, g.m, g.n, g.k, scale_a, scale_b))


# ---- quantizers ----------------------------------------------------------------------

FP8_SCALES = {"tensor": C.JG_SCALE_TENSOR, "row": C.JG_SCALE_ROW, "block": C.JG_SCALE_BLOCK}


class Quant(NamedTuple):
    rows: int
    cols: int
    ld: int
    scale: int
    block_rows: int
    scale_shape: Tuple[int, ...]


def quantize_fp8(op: str, x: torch.Tensor, scale: str, block_rows: int) -> Quant:
    dtype_in(op, "x", x, HALF)
    if scale not in FP8_SCALES:
        fail(op, f"scale must be 'tensor', 'row' or 'block', got {scale!r}")
    mode = FP8_SCALES[scale]
    if mode == C.JG_SCALE_BLOCK and block_rows not in (1, 128):
        fail(op, f"block_rows must be 1 (1x128 blocks, activations) or 128 (128x128, "
                 f"weights), got {block_rows}")
    if x.dim() < 1:
        fail(op, "x must have at least one dimension")
    if mode == C.JG_SCALE_BLOCK and block_rows == 128:
        dims(op, "x", x, 2, "[rows, K] for 128x128 blocks")
    rows, ld = rows_of(op, "x", x)
    cols = x.shape[-1]
    positive(op, K=cols)
    lead = tuple(x.shape[:-1])
    if mode == C.JG_SCALE_TENSOR:
        s = (1,)
    elif mode == C.JG_SCALE_ROW:
        s = lead
    elif block_rows == 1:
        s = lead + (cdiv(cols, SCALE_BLOCK),)
    else:
        s = (cdiv(rows, SCALE_BLOCK), cdiv(cols, SCALE_BLOCK))
    return Quant(rows, cols, ld, mode, block_rows if mode == C.JG_SCALE_BLOCK else 0, s)


def sf_layout_of(op: str, name: str, layout: str) -> int:
    if layout not in SF_LAYOUTS:
        fail(op, f"{name} must be 'swizzled' (128x4 blocks) or 'row' (row-major), "
                 f"got {layout!r}")
    return SF_LAYOUTS[layout]


def sf_shape(layout: int, rows: int, k: int) -> Tuple[int, int]:
    """The block scales of an NVFP4 operand as a 2-D e4m3 tensor: row-major
    [rows, K/16]; swizzled [rows rounded up to 128, K/16 rounded up to 4]
    (torch's shape for the same 128x4-blocked bytes)."""
    kbs = k // NVFP4_BLOCK
    if layout == C.JG_SF_ROW_MAJOR:
        return (rows, kbs)
    return (cdiv(rows, 128) * 128, cdiv(kbs, 4) * 4)


def quantize_nvfp4(op: str, x: torch.Tensor, sf_layout: str) -> Tuple[int, int, int, int]:
    """(rows, K, ld, layout)."""
    dtype_in(op, "x", x, HALF)
    dims(op, "x", x, 2, "[rows, K]")
    layout = sf_layout_of(op, "sf_layout", sf_layout)
    rows, ld = rows_of(op, "x", x)
    k = x.shape[1]
    positive(op, rows=rows, K=k)
    if k % NVFP4_BLOCK:
        fail(op, f"K = {k} must be a multiple of {NVFP4_BLOCK}")
    return rows, k, ld, layout


def nvfp4_operand(op: str, name: str, codes, sf, g, layout: int, k: int) -> Tuple[int, int]:
    """An NVFP4 operand: codes [rows, K/2] uint8, sf e4m3 of sf_shape, g one FP32.
    Returns (rows, leading dimension in elements)."""
    dtype_in(op, name, codes, (torch.uint8,))
    dims(op, name, codes, 2, "[rows, K/2] (two e2m1 codes a byte)")
    dtype_in(op, name + "_sf", sf, (E4M3, torch.uint8))
    dtype_in(op, name + "_global", g, (FP32,))
    if g.numel() != 1:
        fail(op, f"{name}_global must hold one value, got shape {shape(g)}")
    rows = codes.shape[0]
    positive(op, **{f"rows of {name}": rows})
    ld = 2 * k_major(op, name, codes, 1, 0)
    want = sf_shape(layout, rows, k)
    if sf.numel() != want[0] * want[1] or not sf.is_contiguous():
        fail(op, f"{name}_sf must be a contiguous {want[0]}x{want[1]} array of scales "
                 f"({'row-major' if layout == C.JG_SF_ROW_MAJOR else '128x4 swizzled'}), got "
                 f"shape {shape(sf)}")
    return rows, ld


def nvfp4_k(op: str, k: int, la: int, lb: int):
    """NVFP4's K: whole 16-element scale blocks; row-major scales a row 16
    bytes apart (TMA), so K a multiple of 256."""
    if k % NVFP4_BLOCK:
        fail(op, f"K = {k} must be a multiple of {NVFP4_BLOCK}")
    for name, layout in (("a", la), ("b", lb)):
        if layout == C.JG_SF_ROW_MAJOR and k % 256:
            fail(op, f"{name}_sf_layout 'row' needs K a multiple of 256 (K = {k})")


def nvfp4_rows(op: str, lda: int, ldb: int):
    """Rows of codes (leading dimensions in elements) 16 bytes apart."""
    for name, ld in (("a", lda), ("b", ldb)):
        if ld % 32:
            fail(op, f"{name}'s rows hold {ld} codes: must be a multiple of 32 (16 bytes)")


class Nvfp4Gemm(NamedTuple):
    m: int
    n: int
    k: int
    lda: int
    ldb: int
    out_dtype: torch.dtype
    a_layout: int
    b_layout: int


def nvfp4_mm(op: str, a, a_sf, a_global, b, b_sf, b_global, out_dtype, a_sf_layout,
             b_sf_layout) -> Nvfp4Gemm:
    la = sf_layout_of(op, "a_sf_layout", a_sf_layout)
    lb = sf_layout_of(op, "b_sf_layout", b_sf_layout)
    if a.dim() != 2 or b.dim() != 2:
        fail(op, f"a and b must be 2-D code arrays, got {shape(a)} and {shape(b)}")
    k = 2 * a.shape[1]
    if 2 * b.shape[1] != k:
        fail(op, f"a ({shape(a)}) and b ({shape(b)}) hold different K ({k} and "
                 f"{2 * b.shape[1]})")
    nvfp4_k(op, k, la, lb)
    m, lda = nvfp4_operand(op, "a", a, a_sf, a_global, la, k)
    n, ldb = nvfp4_operand(op, "b", b, b_sf, b_global, lb, k)
    same_device(op, a, a_sf=a_sf, a_global=a_global, b=b, b_sf=b_sf, b_global=b_global)
    nvfp4_rows(op, lda, ldb)
    out = out_dtype_of(op, out_dtype, BF16)
    aligned_rows(op, "the output", n, out)
    return Nvfp4Gemm(m, n, k, lda, ldb, out, la, lb)


# ---- grouped ----------------------------------------------------------------------------


class Grouped(NamedTuple):
    groups: int
    m: int      # contiguous: rows of a; masked: m_max (rows of each group's slab)
    n: int
    k: int
    lda: int
    ldb: int
    out_shape: Tuple[int, ...]
    out_dtype: torch.dtype
    scale: int
    a_sf_layout: int = C.JG_SF_LAYOUT_NONE  # NVFP4 only
    b_sf_layout: int = C.JG_SF_LAYOUT_NONE


def grouped_b(op: str, b: torch.Tensor, k_dim: int) -> Tuple[int, int, int, int]:
    """B of G groups, K along k_dim (1: torch's [G, K, N]; 2: [G, N, K]), K-major;
    returns (groups, n, k, ldb) and checks that the groups are n * ldb apart,
    as the library's B [G, N, K] with leading dimension ldb is."""
    n_dim = 3 - k_dim
    groups, n, k = b.shape[0], b.shape[n_dim], b.shape[k_dim]
    positive(op, groups=groups, N=n, K=k)
    if groups > C.JG_GROUPED_MAX_DEVICE_GROUPS:
        fail(op, f"{groups} groups: at most {C.JG_GROUPED_MAX_DEVICE_GROUPS}")
    ldb = k_major(op, "b", b, k_dim, n_dim)
    if groups > 1 and b.stride(0) != n * ldb:
        fail(op, f"b's groups must follow each other ({n} rows of {ldb} apart: stride "
                 f"{n * ldb}), got strides {tuple(b.stride())}")
    return groups, n, k, ldb


def counts_of(op: str, name: str, t: torch.Tensor, lengths: Tuple[int, ...], ref):
    dtype_in(op, name, t, OFFSET_TYPES)
    if t.dim() != 1 or t.shape[0] not in lengths or (t.shape[0] > 1 and t.stride(0) != 1):
        fail(op, f"{name} must be a contiguous 1-D int32 tensor of "
                 f"{' or '.join(str(x) for x in lengths)} values, got shape {shape(t)}")
    same_device(op, ref, **{name: t})


def grouped_inputs(op: str, a, b, in_types, a_dims: int, a_form: str, b_form: str):
    """a of one of in_types and b of the same, a a_dims-D (a_form) and b 3-D
    (b_form), on one device."""
    dtype_in(op, "a", a, in_types)
    if b.dtype != a.dtype:
        fail(op, f"b is {b.dtype}, a {a.dtype}: they must match")
    dims(op, "a", a, a_dims, a_form)
    dims(op, "b", b, 3, b_form)
    same_device(op, a, b=b)


def grouped_out(op: str, out_dtype, default_out, a, lda: int, b, ldb: int, n: int):
    """The output's dtype (out_dtype, else default_out, else a's), once the rows
    of a, b and the output (n wide) are found 16-byte aligned."""
    out = out_dtype_of(op, out_dtype, default_out if default_out else a.dtype)
    aligned_rows(op, "a", lda, a.dtype)
    aligned_rows(op, "b", ldb, b.dtype)
    aligned_rows(op, "the output", n, out)
    return out


def grouped_mm(op: str, a, b, offs, out_dtype, in_types, default_out) -> Grouped:
    """torch._grouped_mm's 2D x 3D: a [M, K], b [G, K, N] (K-major: a transposed
    view of [G, N, K]), offs [G] int32 end offsets (or [G + 1] starting at 0)."""
    grouped_inputs(op, a, b, in_types, 2, "[M, K]", "[G, K, N]")
    if a.shape[1] != b.shape[1]:
        fail(op, f"b is [G, K, N] = {shape(b)}: its K ({b.shape[1]}) differs from a's "
                 f"({a.shape[1]}); expert weights w [G, N, K] are passed as w.transpose(1, 2)")
    groups, n, k, ldb = grouped_b(op, b, 1)
    counts_of(op, "offs", offs, (groups, groups + 1), a)
    m, lda = rows_of(op, "a", a)
    out = grouped_out(op, out_dtype, default_out, a, lda, b, ldb, n)
    return Grouped(groups, m, n, k, lda, ldb, (m, n), out, C.JG_SCALE_NONE)


def masked_grouped_mm(op: str, a, b, counts, out_dtype, in_types, default_out) -> Grouped:
    """a [G, m_max, K], b [G, N, K], counts [G] int32 (valid rows per group)."""
    grouped_inputs(op, a, b, in_types, 3, "[G, m_max, K]", "[G, N, K]")
    groups, n, k, ldb = grouped_b(op, b, 2)
    if a.shape[0] != groups or a.shape[2] != k:
        fail(op, f"a is {shape(a)}, b {shape(b)}: a must be [G, m_max, K] = "
                 f"[{groups}, m_max, {k}]")
    counts_of(op, "counts", counts, (groups,), a)
    m_max = a.shape[1]
    positive(op, m_max=m_max)
    _, lda = rows_of(op, "a", a)
    out = grouped_out(op, out_dtype, default_out, a, lda, b, ldb, n)
    return Grouped(groups, m_max, n, k, lda, ldb, (groups, m_max, n), out, C.JG_SCALE_NONE)


def grouped_scales(op: str, g: Grouped, scale_a, scale_b, masked: bool) -> Grouped:
    """The FP8 scales of a grouped GEMM, whose dims follow their operands':
    contiguous (b [G, K, N]): row scale_a [M], scale_b [G, N]; block scale_a
    [M, ceil(K/128)], scale_b [G, ceil(K/128), ceil(N/128)] (a transposed view
    of [G, ceil(N/128), ceil(K/128)], as b is of [G, N, K]); masked (b [G, N,
    K]): row [G, m_max] and [G, N]; block [G, m_max, ceil(K/128)] and [G,
    ceil(N/128), ceil(K/128)]. Tensor: one per group each ([G])."""
    a_lead = (g.groups,) if masked else ()
    if not masked and scale_b.dim() == 3:  # the [G, K/128, N/128] view, as b is
        scale_b = scale_b.transpose(1, 2)
    if not masked and shape(scale_a) == (g.groups,) and shape(scale_b) == (g.groups,):
        mode = C.JG_SCALE_TENSOR
    else:
        mode = fp8_scales(op, g.m, g.n, g.k, scale_a, scale_b, a_lead, (g.groups,))
    same_device(op, scale_a, scale_b=scale_b)
    return g._replace(scale=mode)


def sf_array(op: str, name: str, sf: torch.Tensor, count: int, layout: int, rows: int, k: int):
    """count operands' block scales one after another, each of rows x K in
    layout: a contiguous e4m3 (or uint8) tensor of their bytes."""
    dtype_in(op, name, sf, (E4M3, torch.uint8))
    h, w = sf_shape(layout, rows, k)
    if sf.numel() != count * h * w or not sf.is_contiguous():
        what = "row-major" if layout == C.JG_SF_ROW_MAJOR else "128x4 swizzled"
        fail(op, f"{name} must be contiguous, {count} x {h} x {w} scales ({what}), got shape "
                 f"{shape(sf)}")


def nvfp4_grouped(op: str, masked: bool, a, a_sf, a_global, b, b_sf, b_global, rows, out_dtype,
                  a_sf_layout: str, b_sf_layout: str) -> Grouped:
    """NVFP4 grouped GEMM: codes two a byte along K. Contiguous: a [M, K/2],
    a_sf row-major [M, K/16] (a group's first row is known only on the GPU);
    masked: a [G, m_max, K/2], a_sf G arrays of m_max rows. b [G, N, K/2], b_sf
    G arrays of N rows; a_global and b_global one FP32 per group."""
    la = sf_layout_of(op, "a_sf_layout", a_sf_layout)
    lb = sf_layout_of(op, "b_sf_layout", b_sf_layout)
    if not masked and la != C.JG_SF_ROW_MAJOR:
        fail(op, "a_sf_layout must be 'row' in the contiguous layout: a group's first row is "
                 "known only on the GPU, so its scales cannot be found in 128-row blocks")
    for name, t in (("a", a), ("b", b)):
        dtype_in(op, name, t, (torch.uint8,))
    dims(op, "a", a, 3 if masked else 2, "[G, m_max, K/2]" if masked else "[M, K/2]")
    dims(op, "b", b, 3, "[G, N, K/2]")
    same_device(op, a, a_sf=a_sf, a_global=a_global, b=b, b_sf=b_sf, b_global=b_global)
    groups, n, half_k, ldb = grouped_b(op, b, 2)
    k = 2 * half_k
    if a.shape[-1] != half_k or (masked and a.shape[0] != groups):
        fail(op, f"a is {shape(a)}, b {shape(b)}: a must be "
                 f"{f'[{groups}, m_max, {half_k}]' if masked else f'[M, {half_k}]'} "
                 f"(K/2 bytes of codes)")
    nvfp4_k(op, k, la, lb)
    counts_of(op, "counts" if masked else "offs", rows,
              (groups,) if masked else (groups, groups + 1), a)
    m = a.shape[1] if masked else a.shape[0]
    if masked:
        positive(op, m_max=m)
    _, lda = rows_of(op, "a", a)
    nvfp4_rows(op, 2 * lda, 2 * ldb)
    sf_array(op, "a_sf", a_sf, groups if masked else 1, la, m, k)
    sf_array(op, "b_sf", b_sf, groups, lb, n, k)
    for name, g in (("a_global", a_global), ("b_global", b_global)):
        dtype_in(op, name, g, (FP32,))
        if g.numel() != groups or (g.dim() and not g.is_contiguous()):
            fail(op, f"{name} must hold one FP32 per group ({groups}), got shape {shape(g)}")
    out = out_dtype_of(op, out_dtype, BF16)
    aligned_rows(op, "the output", n, out)
    out_shape = (groups, m, n) if masked else (m, n)
    return Grouped(groups, m, n, k, 2 * lda, 2 * ldb, out_shape, out, C.JG_SCALE_NVFP4, la, lb)
