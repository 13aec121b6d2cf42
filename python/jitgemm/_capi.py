"""libjitgemm's C API through ctypes: the library, its constants and struct mirrors.

ctypes rather than a C extension: the package then needs no Python headers and
no compiler beyond the C library's own, works with any CPython and PyTorch
build (no ABI to match), and the hot path is still one foreign call
(``jg_gemm_run``) with a struct built in well under a microsecond. The
constants, struct mirrors and signatures live in ``_abi`` (re-exported here),
which ``bench/peer_torch.py`` shares.

The library is found, in this order, at ``$JITGEMM_LIBRARY`` (a path, e.g. a
meson build directory's ``libjitgemm.so``, for use without installing) or
next to this file (where ``pip install .`` puts it).
"""

from __future__ import annotations

import ctypes
import os

from ._abi import *  # noqa: F401,F403  (the JG_ constants, mirrors, CONSTANTS, MIRRORS)
from ._abi import open_library


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


def version() -> str:
    """The loaded library's version, ``"MAJOR.MINOR.PATCH"``."""
    return lib.jg_version().decode()


def status_name(status: int) -> str:
    """``"JG_ERR_INVALID"`` etc. for a jg_status value."""
    return lib.jg_status_name(status).decode()
