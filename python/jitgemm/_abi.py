"""libjitgemm's C ABI as ctypes sees it: the JG_ constants, the struct mirrors
and the functions' signatures, with nothing loaded.

The package's ``_capi`` loads the library with these; ``bench/peer_torch.py``
loads this file by its path (the benchmark needs no installed package), so
both speak to the library through the same mirrors. They must match
``include/jitgemm/jitgemm.h`` field for field: ``tests/python/test_abi.py``
and ``bench/peer_torch.py --check-abi`` compile a C program against the header
and compare every size and offset.
"""

from __future__ import annotations

import ctypes
import struct

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
JG_CONTEXT_WORKSPACE = 8  # 0.9: the args passed carry the workspace fields (they always do here)

JG_GEMM_M_GENERIC = 1
JG_GEMM_PDL = 2
JG_GEMM_A_M_MAJOR = 4
JG_GEMM_B_N_MAJOR = 8
JG_GEMM_UNALIGNED = 16
JG_GEMM_FP32_EXACT = 32

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


def _each(ctype, *names: str) -> list:
    """Fields of one C type, in order: ("a", t), ("b", t), ..."""
    return [(name, ctype) for name in names]


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
        *_each(ctypes.c_uint64, "plans_memory", "plans_disk", "plans_compiled",
               "compile_failures"),
        ("compile_ms", ctypes.c_double),
    ]


class GemmProblem(ctypes.Structure):
    """jg_gemm_problem."""

    _fields_ = [
        ("flags", _u32),
        *_each(_enum, "a_type", "b_type", "c_type", "d_type"),
        *_each(_i64, "m", "n", "k", "lda", "ldb", "ldc", "ldd"),
        *_each(_enum, "scale", "a_sf_layout", "b_sf_layout"),
    ]


class GemmArgs(ctypes.Structure):
    """jg_gemm_args (device pointers as ints)."""

    _fields_ = [
        *_each(_vp, "a", "b", "c", "d"),
        *_each(ctypes.c_float, "alpha", "beta"),
        ("m", _i64),
        *_each(_vp, "a_scale", "b_scale", "a_sf", "b_sf"),
        ("workspace", _vp),  # 0.7: JG_GEMM_FP32_EXACT; 0.8: also unaligned A or B (the pack)
        ("workspace_bytes", ctypes.c_size_t),
    ]


class GroupedProblem(ctypes.Structure):
    """jg_grouped_problem."""

    _fields_ = [
        ("flags", _u32),
        *_each(_enum, "layout", "a_type", "b_type", "c_type", "d_type"),
        ("groups", ctypes.c_int32),
        ("m", ctypes.POINTER(_i64)),
        *_each(_i64, "n", "k", "lda", "ldb", "ldc", "ldd", "m_max"),
        *_each(_enum, "scale", "a_sf_layout", "b_sf_layout"),
    ]


class GroupedArgs(ctypes.Structure):
    """jg_grouped_args: the pointer arrays are host arrays of device pointers
    (one element in the contiguous and masked layouts)."""

    _fields_ = [
        *_each(_PointerArray, "a", "b", "c", "d"),
        *_each(ctypes.c_float, "alpha", "beta"),
        *_each(_vp, "rows", "a_scale", "b_scale"),
        *_each(_PointerArray, "a_scales", "b_scales", "a_sfs", "b_sfs"),
        *_each(_vp, "a_sf", "b_sf", "workspace"),
        ("workspace_bytes", ctypes.c_size_t),
    ]


class QuantProblem(ctypes.Structure):
    """jg_quant_problem."""

    _fields_ = [
        *_each(_enum, "src_type", "scale"),
        ("block_rows", ctypes.c_int32),
        *_each(_i64, "rows", "cols", "ld_src", "ld_dst"),
        ("sf_layout", _enum),
    ]


class QuantArgs(ctypes.Structure):
    """jg_quant_args (device pointers as ints)."""

    _fields_ = _each(_vp, "src", "dst", "scale", "sf")


class PlanInfo(ctypes.Structure):
    """jg_plan_info."""

    _fields_ = [
        ("kernel_name", ctypes.c_char_p),
        ("origin", _enum),
        *_each(_u32, "block_m", "block_n", "block_k", "stages", "cluster", "grid", "threads",
               "smem_bytes"),
        ("key_hash", ctypes.c_uint64 * 2),
    ]


def packer(mirror, tail: str = "") -> struct.Struct:
    """A struct.Struct whose pack() makes the bytes of a mirror of scalar or
    pointer fields (pointers as ints, 0 for NULL), then of the fields of
    `tail` (struct codes, e.g. "PPP": pointers the struct's own may point
    at): native sizes and alignment, as ctypes and the C compiler lay the
    struct out. Packing is several times cheaper than building the mirror,
    which sets its fields one by one."""
    codes = ["P" if issubclass(t, ctypes._Pointer) else getattr(t, "_type_", None)
             for _, t in mirror._fields_]
    if not all(isinstance(c, str) for c in codes):
        raise TypeError(f"{mirror.__name__} has fields that are not scalars or pointers")
    s = struct.Struct("@" + "".join(codes))
    if s.size != ctypes.sizeof(mirror):
        raise TypeError(f"{mirror.__name__}: packs {s.size} bytes, the mirror has "
                        f"{ctypes.sizeof(mirror)}")
    return struct.Struct(s.format + tail) if tail else s


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
SIGNATURES = {
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
# Functions of later versions than the oldest library the package loads:
# typed where the library has them (0.9: the launches that make the plan's
# CUDA context current themselves).
OPTIONAL_SIGNATURES = {
    "jg_gemm_run_in_context": (_enum, [_vp, _P(GemmArgs), _vp]),
    "jg_grouped_run_in_context": (_enum, [_vp, _P(GroupedArgs), _vp]),
}


def open_library(path: str) -> ctypes.CDLL:
    """Loads the libjitgemm at path with every function of SIGNATURES typed,
    and those of OPTIONAL_SIGNATURES it has; OSError where it cannot be loaded."""
    lib = ctypes.CDLL(path)
    for name, (restype, argtypes) in (*SIGNATURES.items(), *OPTIONAL_SIGNATURES.items()):
        if name in OPTIONAL_SIGNATURES and not hasattr(lib, name):
            continue
        fn = getattr(lib, name)
        fn.restype = restype
        fn.argtypes = argtypes
    return lib
