"""libjitgemm's C API through ctypes: the library, its constants and struct mirrors.

ctypes rather than a C extension: the package then needs no Python headers and
no compiler beyond the C library's own, works with any CPython and PyTorch
build (no ABI to match), and the hot path is still one foreign call
(``jg_gemm_run``) with a struct built in well under a microsecond. The mirrors
below must match ``include/jitgemm/jitgemm.h`` field for field;
``tests/python/test_abi.py`` compiles a C program against the header and
compares every size and offset.

The library is found, in this order, at ``$JITGEMM_LIBRARY`` (a path, e.g. a
meson build directory's ``libjitgemm.so``, for use without installing) or
next to this file (where ``pip install .`` puts it).
"""

from __future__ import annotations

import ctypes
import os

# ---- constants (jitgemm.h) ----------------------------------------------------

JG_OK = 0
JG_ERR_INVALID = -1
JG_ERR_OFFLINE = -12

JG_DTYPE_NONE = 0
JG_BF16 = 1
JG_FP16 = 2
JG_FP32 = 3
JG_E4M3 = 4
JG_NVFP4 = 5

JG_SCALE_NONE = 0
JG_SCALE_TENSOR = 1
JG_SCALE_ROW = 2
JG_SCALE_BLOCK = 3
JG_SCALE_NVFP4 = 4

JG_SF_LAYOUT_NONE = 0
JG_SF_ROW_MAJOR = 1
JG_SF_SWIZZLED_128X4 = 2

JG_CONTEXT_OFFLINE = 1

JG_GEMM_M_GENERIC = 1
JG_GEMM_PDL = 2

JG_GROUPED_LIST = 1
JG_GROUPED_CONTIGUOUS = 2
JG_GROUPED_MASKED = 3
JG_GROUPED_WORKSPACE = 1
JG_GROUPED_MAX_DEVICE_GROUPS = 256

JG_ORIGIN_COMPILED = 1
JG_ORIGIN_DISK = 2

# Every constant above with its C name, for the ABI test.
CONSTANTS = {name: value for name, value in globals().items() if name.startswith("JG_")}

# ---- struct mirrors -------------------------------------------------------------

_vp = ctypes.c_void_p
_i64 = ctypes.c_int64
_u32 = ctypes.c_uint32
_enum = ctypes.c_int  # C enums are int-sized on every ABI the library builds for
_PointerArray = ctypes.POINTER(ctypes.c_void_p)  # a host array of device pointers

LogFn = ctypes.CFUNCTYPE(None, _vp, _enum, ctypes.c_char_p, ctypes.c_char_p)


class Options(ctypes.Structure):
    """jg_options."""

    _fields_ = [
        ("flags", _u32),
        ("arch", ctypes.c_char_p),
        ("cache_dir", ctypes.c_char_p),
        ("cache_mode", _enum),
        ("log", LogFn),
        ("log_user", _vp),
        ("log_mask", _u32),
        ("sm_count", ctypes.c_int),
        # Read only with their JG_CONTEXT_ flags, which the package does not
        # set: JITGEMM_MAX_KERNELS and JITGEMM_BACKEND choose for it.
        ("max_kernels", ctypes.c_int),
        ("backend", _enum),
    ]


class ContextStats(ctypes.Structure):
    """jg_context_stats."""

    _fields_ = [
        ("plans_memory", ctypes.c_uint64),
        ("plans_disk", ctypes.c_uint64),
        ("plans_compiled", ctypes.c_uint64),
        ("compile_failures", ctypes.c_uint64),
        ("compile_ms", ctypes.c_double),
    ]


class GemmProblem(ctypes.Structure):
    """jg_gemm_problem."""

    _fields_ = [
        ("flags", _u32),
        ("a_type", _enum),
        ("b_type", _enum),
        ("c_type", _enum),
        ("d_type", _enum),
        ("m", _i64),
        ("n", _i64),
        ("k", _i64),
        ("lda", _i64),
        ("ldb", _i64),
        ("ldc", _i64),
        ("ldd", _i64),
        ("scale", _enum),
        ("a_sf_layout", _enum),
        ("b_sf_layout", _enum),
    ]


class GemmArgs(ctypes.Structure):
    """jg_gemm_args (device pointers as ints)."""

    _fields_ = [
        ("a", _vp),
        ("b", _vp),
        ("c", _vp),
        ("d", _vp),
        ("alpha", ctypes.c_float),
        ("beta", ctypes.c_float),
        ("m", _i64),
        ("a_scale", _vp),
        ("b_scale", _vp),
        ("a_sf", _vp),
        ("b_sf", _vp),
        ("workspace", _vp),  # 0.7, read only with JG_GEMM_FP32_EXACT
        ("workspace_bytes", ctypes.c_size_t),
    ]


class GroupedProblem(ctypes.Structure):
    """jg_grouped_problem."""

    _fields_ = [
        ("flags", _u32),
        ("layout", _enum),
        ("a_type", _enum),
        ("b_type", _enum),
        ("c_type", _enum),
        ("d_type", _enum),
        ("groups", ctypes.c_int32),
        ("m", ctypes.POINTER(_i64)),
        ("n", _i64),
        ("k", _i64),
        ("lda", _i64),
        ("ldb", _i64),
        ("ldc", _i64),
        ("ldd", _i64),
        ("m_max", _i64),
        ("scale", _enum),
        ("a_sf_layout", _enum),
        ("b_sf_layout", _enum),
    ]


class GroupedArgs(ctypes.Structure):
    """jg_grouped_args: the pointer arrays are host arrays of device pointers
    (one element in the contiguous and masked layouts)."""

    _fields_ = [
        ("a", _PointerArray),
        ("b", _PointerArray),
        ("c", _PointerArray),
        ("d", _PointerArray),
        ("alpha", ctypes.c_float),
        ("beta", ctypes.c_float),
        ("rows", _vp),
        ("a_scale", _vp),
        ("b_scale", _vp),
        ("a_scales", _PointerArray),
        ("b_scales", _PointerArray),
        ("a_sfs", _PointerArray),
        ("b_sfs", _PointerArray),
        ("a_sf", _vp),
        ("b_sf", _vp),
        ("workspace", _vp),
        ("workspace_bytes", ctypes.c_size_t),
    ]


class QuantProblem(ctypes.Structure):
    """jg_quant_problem."""

    _fields_ = [
        ("src_type", _enum),
        ("scale", _enum),
        ("block_rows", ctypes.c_int32),
        ("rows", _i64),
        ("cols", _i64),
        ("ld_src", _i64),
        ("ld_dst", _i64),
        ("sf_layout", _enum),
    ]


class QuantArgs(ctypes.Structure):
    """jg_quant_args (device pointers as ints)."""

    _fields_ = [
        ("src", _vp),
        ("dst", _vp),
        ("scale", _vp),
        ("sf", _vp),
    ]


class PlanInfo(ctypes.Structure):
    """jg_plan_info."""

    _fields_ = [
        ("kernel_name", ctypes.c_char_p),
        ("origin", _enum),
        ("block_m", _u32),
        ("block_n", _u32),
        ("block_k", _u32),
        ("stages", _u32),
        ("cluster", _u32),
        ("grid", _u32),
        ("threads", _u32),
        ("smem_bytes", _u32),
        ("key_hash", ctypes.c_uint64 * 2),
    ]


# C struct name -> mirror, for the ABI test.
MIRRORS = {
    "jg_options": Options,
    "jg_context_stats": ContextStats,
    "jg_gemm_problem": GemmProblem,
    "jg_gemm_args": GemmArgs,
    "jg_grouped_problem": GroupedProblem,
    "jg_grouped_args": GroupedArgs,
    "jg_quant_problem": QuantProblem,
    "jg_quant_args": QuantArgs,
    "jg_plan_info": PlanInfo,
}

# ---- the library ----------------------------------------------------------------

_P = ctypes.POINTER
# name: (restype, argtypes)
_SIGNATURES = {
    "jg_version": (ctypes.c_char_p, []),
    "jg_status_name": (ctypes.c_char_p, [_enum]),
    "jg_status_string": (ctypes.c_char_p, [_enum]),
    "jg_context_create": (_enum, [_P(Options), _P(_vp)]),
    "jg_context_destroy": (None, [_vp]),
    "jg_context_last_error": (ctypes.c_char_p, [_vp]),
    "jg_context_arch": (ctypes.c_char_p, [_vp]),
    "jg_context_get_stats": (_enum, [_vp, _P(ContextStats)]),
    "jg_gemm_plan": (_enum, [_vp, _P(GemmProblem), _P(_vp)]),
    "jg_gemm_run": (_enum, [_vp, _P(GemmArgs), _vp]),
    "jg_grouped_plan": (_enum, [_vp, _P(GroupedProblem), _P(_vp)]),
    "jg_grouped_run": (_enum, [_vp, _P(GroupedArgs), _vp]),
    "jg_quantize_e4m3": (_enum, [_vp, _P(QuantProblem), _P(QuantArgs), _vp]),
    "jg_quantize_nvfp4": (_enum, [_vp, _P(QuantProblem), _P(QuantArgs), _vp]),
    "jg_plan_get_info": (_enum, [_vp, _P(PlanInfo)]),
    "jg_plan_workspace_bytes": (_enum, [_vp, _P(ctypes.c_size_t)]),
    "jg_nvfp4_sf_offset": (_i64, [_enum, _i64, _i64, _i64, _i64]),
    "jg_nvfp4_sf_bytes": (_i64, [_enum, _i64, _i64]),
}


def library_path() -> str:
    """The path of the libjitgemm this package loads: ``$JITGEMM_LIBRARY``, else
    the copy installed inside the package."""
    env = os.environ.get("JITGEMM_LIBRARY")
    if env:
        return env
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "libjitgemm.so")


def _load() -> ctypes.CDLL:
    path = library_path()
    try:
        lib = ctypes.CDLL(path)
    except OSError as e:
        raise ImportError(
            f"jitgemm: cannot load libjitgemm from {path}: {e}. Install the package with "
            "`pip install .` from the repository root, or point JITGEMM_LIBRARY at a built "
            "libjitgemm.so (e.g. build/libjitgemm.so after scripts/build.sh)") from e
    for name, (restype, argtypes) in _SIGNATURES.items():
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib


lib = _load()


def version() -> str:
    """The loaded library's version, ``"MAJOR.MINOR.PATCH"``."""
    return lib.jg_version().decode()


def status_name(status: int) -> str:
    """``"JG_ERR_INVALID"`` etc. for a jg_status value."""
    return lib.jg_status_name(status).decode()
