"""warm(): plan (and compile, or load from the disk cache) ahead of time the
kernels that the ops will need, and plans(): what this process holds.

Warm plans are made from the ops' own checks and keys, run on meta tensors of
the spec's shapes, so a warmed shape is a dict hit in the op later.
"""

import json
import os
from typing import Any, Callable, Dict, Iterable, List, Optional, Sequence, Union

import torch

from . import _capi as C
from . import _checks as K
from . import _ops as O
from ._device import (M_HINT_MAX, M_HINT_MIN, ArgumentError, PlanRecord, all_devices, device,
                      m_hint, m_hint_pow2, offline_device)

DTYPES = {"bf16": K.BF16, "bfloat16": K.BF16, "fp16": K.FP16, "float16": K.FP16,
          "fp32": K.FP32, "float32": K.FP32}

Spec = Dict[str, Any]


def _buckets(hint: Callable[[int], int] = m_hint) -> List[int]:
    """Every value of hint, ascending: the dense ops' 21 (16, 24, 32, ...,
    16384) or the grouped ops' 11 (powers of two)."""
    out = [M_HINT_MIN]
    while out[-1] < M_HINT_MAX:
        out.append(hint(out[-1] + 1))
    return out


def _dtype(spec: Spec, field: str, default: torch.dtype) -> torch.dtype:
    v = spec.get(field)
    if v is None:
        return default
    if isinstance(v, torch.dtype):
        return v
    if v not in DTYPES:
        raise ArgumentError(f"jitgemm.warm: {field} {v!r}: one of {', '.join(DTYPES)}")
    return DTYPES[v]


def _ints(spec: Spec, field: str, default: Sequence[int]) -> List[int]:
    v = spec.get(field, default)
    return [int(x) for x in (v if isinstance(v, (list, tuple)) else [v])]


def _need(spec: Spec, *fields: str) -> List[int]:
    missing = [f for f in fields if f not in spec]
    if missing:
        raise ArgumentError(f"jitgemm.warm: {spec!r} lacks {', '.join(missing)}")
    return [int(spec[f]) for f in fields]


def _meta(shape, dtype) -> torch.Tensor:
    return torch.empty(shape, dtype=dtype, device="meta")


def _fp8_scales(mode: str, m: int, n: int, k: int, a_lead=(), b_lead=()):
    kb, nb = K.cdiv(k, K.SCALE_BLOCK), K.cdiv(n, K.SCALE_BLOCK)
    shapes = {"tensor": (a_lead or (1,), b_lead or (1,)),
              "row": (a_lead + (m,), b_lead + (n,)),
              "block": (a_lead + (m, kb), b_lead + (nb, kb))}
    if mode not in shapes:
        raise ArgumentError(f"jitgemm.warm: scale {mode!r}: 'tensor', 'row' or 'block'")
    sa, sb = shapes[mode]
    return _meta(sa, K.FP32), _meta(sb, K.FP32)


def _dense_keys(spec: Spec) -> List[tuple]:
    op = spec["op"]
    n, k = _need(spec, "n", "k")
    keys = []
    for m in _ints(spec, "m", _buckets()):
        if op in ("linear", "mm"):
            dt = _dtype(spec, "dtype", K.BF16)
            out = _dtype(spec, "out_dtype", dt)
            c = _meta((m, n), out) if spec.get("bias") == "c" else None
            g = K.gemm(op, _meta((m, k), dt), _meta((n, k), dt), c, out, K.HALF, None)
            keys.append(O.gemm_key(g, K.JG_TYPES[dt], K.JG_TYPES[out], c is not None,
                                   C.JG_SCALE_NONE))
        elif op == "scaled_mm":
            out = _dtype(spec, "out_dtype", K.BF16)
            c = _meta((m, n), out) if spec.get("bias") == "c" else None
            sa, sb = _fp8_scales(spec.get("scale", "row"), m, n, k)
            s = K.scaled_mm(op, _meta((m, k), K.E4M3), _meta((n, k), K.E4M3), sa, sb, c, out)
            keys.append(O.gemm_key(s.gemm, C.JG_E4M3, K.JG_TYPES[out], c is not None, s.scale))
        else:  # nvfp4_mm
            out = _dtype(spec, "out_dtype", K.BF16)
            la = K.sf_layout_of("warm", "a_sf_layout", spec.get("a_sf_layout", "swizzled"))
            lb = K.sf_layout_of("warm", "b_sf_layout", spec.get("b_sf_layout", "swizzled"))
            operands = []
            for rows, layout in ((m, la), (n, lb)):
                operands += [_meta((rows, k // 2), torch.uint8),
                             _meta(K.sf_shape(layout, rows, k), K.E4M3), _meta((1,), K.FP32)]
            s = K.nvfp4_mm(op, *operands, out, spec.get("a_sf_layout", "swizzled"),
                           spec.get("b_sf_layout", "swizzled"))
            g = K.Gemm(s.m, s.n, s.k, s.lda, s.ldb, (s.m, s.n), out, K.BIAS_NONE, 0)
            keys.append(O.gemm_key(g, C.JG_NVFP4, K.JG_TYPES[out], False, C.JG_SCALE_NVFP4,
                                   (la, lb)))
    return keys


def _nvfp4_grouped_operands(spec: Spec, groups: int, m: int, n: int, k: int, masked: bool):
    """Meta tensors of an NVFP4 grouped call: (a, a_sf, a_global, b, b_sf, b_global)."""
    la = K.sf_layout_of("warm", "a_sf_layout", spec.get("a_sf_layout",
                                                        "swizzled" if masked else "row"))
    lb = K.sf_layout_of("warm", "b_sf_layout", spec.get("b_sf_layout", "swizzled"))
    a = _meta((groups, m, k // 2) if masked else (m, k // 2), torch.uint8)
    a_sf = _meta((groups if masked else 1,) + K.sf_shape(la, m, k), K.E4M3)
    b, b_sf = _meta((groups, n, k // 2), torch.uint8), _meta((groups,) + K.sf_shape(lb, n, k),
                                                               K.E4M3)
    g = _meta((groups,), K.FP32)
    return (a, a_sf, g, b, b_sf, g), ("row" if la == C.JG_SF_ROW_MAJOR else "swizzled",
                                     "row" if lb == C.JG_SF_ROW_MAJOR else "swizzled")


def _grouped_keys(spec: Spec) -> List[tuple]:
    op = spec["op"]
    groups, n, k = _need(spec, "groups", "n", "k")
    masked = op.startswith("masked")
    nvfp4 = "nvfp4" in op
    fp8 = "scaled" in op
    dt = torch.uint8 if nvfp4 else K.E4M3 if fp8 else _dtype(spec, "dtype", K.BF16)
    a_type = C.JG_NVFP4 if nvfp4 else K.JG_TYPES[dt]
    out = _dtype(spec, "out_dtype", K.BF16 if (fp8 or nvfp4) else dt)
    i32 = _meta((groups,), torch.int32)
    if masked:
        (m_max,) = _need(spec, "m_max")
        rows, hints = [m_max], [e or None for e in _ints(spec, "expected_m", [0])]
    else:
        rows, hints = _ints(spec, "m", [groups * h for h in _buckets(m_hint_pow2)]), [None]
    keys = []
    for m in rows:
        if nvfp4:
            ops, layouts = _nvfp4_grouped_operands(spec, groups, m, n, k, masked)
            g = K.nvfp4_grouped(op, masked, *ops, i32, out, *layouts)
        elif masked:
            g = K.masked_grouped_mm(op, _meta((groups, m, k), dt), _meta((groups, n, k), dt), i32,
                                    out, (dt,), None)
        else:
            g = K.grouped_mm(op, _meta((m, k), dt), _meta((groups, n, k), dt).transpose(1, 2),
                             i32, out, (dt,), None)
        if fp8:
            mode = spec.get("scale", "row")
            sa, sb = _fp8_scales(mode, m, n, k, (groups,) if masked else (), (groups,))
            if mode == "tensor" and not masked:  # one per group's A too
                sa = _meta((groups,), K.FP32)
            if not masked and sb.dim() == 3:  # the [G, K/128, N/128] view, as b is
                sb = sb.transpose(1, 2)
            g = K.grouped_scales(op, g, sa, sb, masked)
        keys += [O.grouped_key(g, masked, a_type, e) for e in hints]
    return keys


def _quant_problem(spec: Spec):
    """(op, QuantProblem of one row, the C function) of a quantizer spec."""
    op = spec["op"]
    (k,) = _need(spec, "k")
    dtype = _dtype(spec, "dtype", K.BF16)
    x = _meta((1, k), dtype)
    if op == "quantize_fp8":
        q = K.quantize_fp8("warm", x, spec.get("scale", "row"), int(spec.get("block_rows", 1)))
        return C.QuantProblem(K.JG_TYPES[dtype], q.scale, q.block_rows, 1, k, k, k,
                              C.JG_SF_LAYOUT_NONE), C.lib.jg_quantize_e4m3
    _, _, _, layout = K.quantize_nvfp4("warm", x, spec.get("sf_layout", "swizzled"))
    return (C.QuantProblem(K.JG_TYPES[dtype], C.JG_SCALE_NVFP4, 0, 1, k, k, k, layout),
            C.lib.jg_quantize_nvfp4)


def _warm_quantizer(op: str, problem: C.QuantProblem, fn, dev) -> tuple:
    """Quantizers have no plans in the C API: their first launch compiles or
    loads the kernel. Offline, the library compiles and then refuses the
    launch (the addresses are never read); on a GPU, one row of zeros is
    quantized."""
    key = O.quant_key(op, problem)
    if dev.offline:
        addr = 1 << 20
        before = dev.stats()
        dev.quantize(fn, problem, C.QuantArgs(addr, addr, addr, addr), f"jitgemm.warm ({op})")
        dev.record_quantizer(key, before)
        return key
    dtype = {v: k for k, v in K.JG_TYPES.items()}[problem.src_type]
    x = torch.zeros((1, problem.cols), dtype=dtype, device=f"cuda:{dev.index}")
    if op == "quantize_fp8":
        mode = {v: k for k, v in K.FP8_SCALES.items()}[problem.scale]
        O._quantize_fp8_impl(x, mode, problem.block_rows or 1)
    else:
        layout = {v: k for k, v in K.SF_LAYOUTS.items()}[problem.sf_layout]
        O._quantize_nvfp4_impl(x, layout)
    return key


_DENSE = ("linear", "mm", "scaled_mm", "nvfp4_mm")
_GROUPED = ("grouped_mm", "scaled_grouped_mm", "masked_grouped_mm", "masked_scaled_grouped_mm",
            "nvfp4_grouped_mm", "masked_nvfp4_grouped_mm")
_QUANT = ("quantize_fp8", "quantize_nvfp4")


def _read(specs: Union[str, os.PathLike, Spec, Iterable[Spec]]) -> List[Spec]:
    if isinstance(specs, dict):
        return [specs]
    if isinstance(specs, (str, os.PathLike)):
        with open(specs) as f:
            return [json.loads(line) for line in f
                    if line.strip() and not line.lstrip().startswith("#")]
    return list(specs)


def warm(specs: Union[str, os.PathLike, Spec, Iterable[Spec]],
         device_index: Optional[Union[int, torch.device]] = None, *,
         arch: Optional[str] = None, sm_count: int = 0) -> List[PlanRecord]:
    """Plans ahead the kernels that ops of the given shapes will use: each is
    compiled by NVRTC, or loaded from the disk cache, now rather than on its
    first call (and before CUDA-graph capture, which cannot load modules).

    Parameters
    ----------
    specs : dict, iterable of dicts, or path
        One spec per op and shape (a path: a file of such JSON objects, one a
        line). ``"op"`` names the op; the other fields give its shapes, with
        packed (contiguous) operands assumed:

        - ``linear``/``mm``: ``n``, ``k``, ``dtype`` ("bf16" (default),
          "fp16"), ``out_dtype`` (default dtype), ``bias`` ("c" for a bias of
          the output's shape; a ``[N]`` bias needs no plan of its own), ``m``:
          the rows, one or a list (default: every M bucket, the 21 values of
          ``m_hint``: 16, 24, 32, 48, ..., 12288, 16384);
        - ``scaled_mm``: the same with ``scale`` ("tensor", "row" (default),
          "block"), out_dtype default "bf16";
        - ``nvfp4_mm``: ``n``, ``k``, ``m``, ``a_sf_layout``/``b_sf_layout``
          ("swizzled" (default), "row");
        - ``grouped_mm``/``scaled_grouped_mm``: ``groups``, ``n``, ``k``, ``m``
          (total rows of a; default: groups times every power of two, 16 to
          16384), scale for FP8;
        - ``masked_grouped_mm``/``masked_scaled_grouped_mm``: ``groups``,
          ``n``, ``k``, ``m_max``, ``expected_m`` (one or a list; default
          none), scale for FP8;
        - ``nvfp4_grouped_mm``/``masked_nvfp4_grouped_mm``: as their 16-bit
          forms, with ``a_sf_layout``/``b_sf_layout`` (default "swizzled";
          contiguous A: "row");
        - ``quantize_fp8``: ``k``, ``dtype``, ``scale``, ``block_rows``;
          ``quantize_nvfp4``: ``k``, ``dtype``, ``sf_layout``.

    device_index : int or torch.device, optional
        The CUDA device (default: the current one).
    arch : str, optional
        ``"sm_90a"``: compile into the disk cache without a GPU (an offline
        context), for a build box that fills the cache GPU machines read.
    sm_count : int
        With arch: the target's SMs, which the planner sizes tiles for (0:
        132, an H100 SXM; an H100 PCIe has 114). Plans for another count may
        pick other kernels.

    Returns
    -------
    list of PlanRecord
        The plans, each with its kernel's name and origin ("compiled",
        "disk" or "memory").
    """
    # every spec's keys first: a bad spec raises before any device is touched
    work = []
    for spec in _read(specs):
        op = spec.get("op")
        if op in _DENSE:
            work.append((op, "gemm", _dense_keys(spec)))
        elif op in _GROUPED:
            work.append((op, "grouped", _grouped_keys(spec)))
        elif op in _QUANT:
            work.append((op, "quantize", _quant_problem(spec)))
        else:
            raise ArgumentError(f"jitgemm.warm: op {op!r}: one of "
                                f"{', '.join(_DENSE + _GROUPED + _QUANT)}")
    if arch is not None:
        dev = offline_device(arch, sm_count)
    else:
        if isinstance(device_index, torch.device):
            device_index = device_index.index
        dev = device(torch.cuda.current_device() if device_index is None else int(device_index))
    out: List[PlanRecord] = []
    for op, kind, keys in work:
        if kind == "quantize":
            keys = [_warm_quantizer(op, *keys, dev)]
        for key in dict.fromkeys(keys):
            if kind == "gemm":
                dev.gemm_plan(key)
            elif kind == "grouped":
                dev.grouped_plan(key)
            out.append(dev.records[key])
    return out


def plans(device_index: Optional[Union[int, torch.device]] = None) -> List[PlanRecord]:
    """The plans this process holds (on one device, or on all).

    Returns
    -------
    list of PlanRecord
        In the order they were made.
    """
    if isinstance(device_index, torch.device):
        device_index = device_index.index
    devs = all_devices() if device_index is None else (device(int(device_index)),)
    return [r for d in devs for r in d.records.values()]
