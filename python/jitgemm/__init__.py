"""jitgemm: libjitgemm's GEMM kernels, generated for each problem at run time,
as PyTorch custom ops (``torch.ops.jitgemm.*``) on Hopper GPUs.

Dense: ``linear``, ``mm``, ``scaled_mm`` (FP8), ``nvfp4_mm``; quantizers:
``quantize_fp8``, ``quantize_nvfp4``; grouped (MoE): ``grouped_mm``,
``scaled_grouped_mm`` (contiguous layout, ``torch._grouped_mm``'s semantics),
``masked_grouped_mm``, ``masked_scaled_grouped_mm``, and NVFP4's
``nvfp4_grouped_mm``, ``masked_nvfp4_grouped_mm``. Ahead-of-time planning:
``warm``; what the process holds: ``plans``.

Every op runs on PyTorch's current stream of its operands' device, is
capturable in CUDA graphs once its plan exists, and traces under
``torch.compile(fullgraph=True)``. Errors raise ``JitGemmError`` (bad
arguments: its subclass ``ArgumentError``, before anything is launched).
"""

from . import _capi
from ._capi import library_path
from ._device import ArgumentError, JitGemmError, PlanRecord, m_hint
from ._ops import (grouped_mm, linear, masked_grouped_mm, masked_nvfp4_grouped_mm,
                   masked_scaled_grouped_mm, mm, nvfp4_grouped_mm, nvfp4_mm, quantize_fp8,
                   quantize_nvfp4, scaled_grouped_mm, scaled_mm)
from ._warm import plans, warm

__version__ = _capi.version()

__all__ = [
    "ArgumentError", "JitGemmError", "PlanRecord", "grouped_mm", "library_path", "linear",
    "m_hint", "masked_grouped_mm", "masked_nvfp4_grouped_mm", "masked_scaled_grouped_mm", "mm",
    "nvfp4_grouped_mm", "nvfp4_mm", "plans",
    "quantize_fp8", "quantize_nvfp4", "scaled_grouped_mm", "scaled_mm", "warm",
]
