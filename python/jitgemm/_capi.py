"""libjitgemm's C API through ctypes: the library, its constants and struct mirrors.

ctypes rather than a C extension: the package then needs no Python headers and
no compiler beyond the C library's own, works with any CPython and PyTorch
build (no ABI to match), and the hot path is still one foreign call
(``jg_gemm_run_in_context``) with a struct built in well under a microsecond. The
constants, struct mirrors and signatures live in ``_abi`` (re-exported here),
which ``bench/peer_torch.py`` shares.

The library is found, in this order, at ``$JITGEMM_LIBRARY`` (a path, e.g. a
meson build directory's ``libjitgemm.so``, for use without installing) or
next to this file (where ``pip install .`` puts it).
"""

from __future__ import annotations

import ctypes
import os
import struct

from ._abi import *  # noqa: F401,F403  (the JG_ constants, mirrors, CONSTANTS, MIRRORS)
from ._abi import GemmArgs, GroupedArgs, open_library, packer


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
        return open_library(path)
    except OSError as e:
        raise ImportError(
            f"jitgemm: cannot load libjitgemm from {path}: {e}. Install the package with "
            "`pip install .` from the repository root, or point JITGEMM_LIBRARY at a built "
            "libjitgemm.so (e.g. build/libjitgemm.so after scripts/build.sh)") from e


lib = _load()

# Whether the library launches with the plan's CUDA context current itself
# (0.9's jg_gemm_run_in_context, jg_grouped_run_in_context): a launch is then
# one foreign call, where an older library's needs the caller to ask the
# driver for the current context first (_device.Device.run_asking).
IN_CONTEXT = hasattr(lib, "jg_gemm_run_in_context") and hasattr(lib, "jg_grouped_run_in_context")
_GEMM_RUN = "jg_gemm_run_in_context" if IN_CONTEXT else "jg_gemm_run"
_GROUPED_RUN = "jg_grouped_run_in_context" if IN_CONTEXT else "jg_grouped_run"


# jg_gemm_args as bytes: GEMM_ARGS.pack(a, b, c, d, alpha, beta, m, a_scale, b_scale,
# a_sf, b_sf, workspace, workspace_bytes), pointers as ints (0 for NULL).
GEMM_ARGS = packer(GemmArgs)
# its first four fields (A, B, C, D): GEMM_POINTERS.pack(a, b, c, d) + the bytes of the
# others (GEMM_ARGS.pack(...)[GEMM_POINTERS.size:]) are GEMM_ARGS.pack(a, b, c, d, ...)
GEMM_POINTERS = struct.Struct("@PPPP")


def _gemm_run_packed():
    """jg_gemm_run_in_context (IN_CONTEXT), else jg_gemm_run, (plan, args,
    stream) with args as GEMM_ARGS bytes: ctypes passes
    a bytes argument of a char * parameter as the address of the object's own
    buffer, uncopied, and the library only reads it during the call. CPython
    keeps that buffer 32 bytes into a 16-byte-aligned allocation, so the
    struct's 8-byte alignment holds; where it would not, each call copies the
    bytes into a GemmArgs instead."""
    fn = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p,
                          ctypes.c_void_p)((_GEMM_RUN, lib))
    probe = GEMM_ARGS.pack(*[0] * len(GemmArgs._fields_))
    if ctypes.cast(ctypes.c_char_p(probe), ctypes.c_void_p).value % ctypes.alignment(GemmArgs):
        run, copy, ref = getattr(lib, _GEMM_RUN), GemmArgs.from_buffer_copy, ctypes.byref
        return lambda plan, args, stream: run(plan, ref(copy(args)), stream)
    return fn


gemm_run_packed = _gemm_run_packed()

# jg_grouped_args followed by the three one-element host arrays (A's, B's and
# D's device pointer) that the device layouts' a, b and d point at: packed
# into a buffer of the calling thread's (_ops), whose address is its args.
GROUPED_ARGS = packer(GroupedArgs, "PPP")
GROUPED_ARRAYS = ctypes.sizeof(GroupedArgs)  # the arrays' offset in the buffer
# GROUPED_ARGS in two parts: the fields before rows (a, b, c, d, alpha, beta), which
# no launch from one buffer changes, and those from rows on with the arrays' three
# pointers (rows, a_scale, b_scale, a_scales, b_scales, a_sfs, b_sfs, a_sf, b_sf,
# workspace, workspace_bytes, A, B, D), packed at GROUPED_ROWS
_ROWS_FIELD = [name for name, _ in GroupedArgs._fields_].index("rows")
GROUPED_HEAD = struct.Struct("@" + GROUPED_ARGS.format.lstrip("@")[:_ROWS_FIELD])
GROUPED_LAUNCH = struct.Struct("@" + GROUPED_ARGS.format.lstrip("@")[_ROWS_FIELD:])
GROUPED_ROWS = GroupedArgs.rows.offset

# jg_grouped_run_in_context (IN_CONTEXT), else jg_grouped_run, (plan, args,
# stream) with args as an address (an int)
grouped_run_at = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p,
                                  ctypes.c_void_p)((_GROUPED_RUN, lib))


def version() -> str:
    """The loaded library's version, ``"MAJOR.MINOR.PATCH"``."""
    return lib.jg_version().decode()


def status_name(status: int) -> str:
    """``"JG_ERR_INVALID"`` etc. for a jg_status value."""
    return lib.jg_status_name(status).decode()
