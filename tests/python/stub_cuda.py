"""Builds stub_cuda.c (see there) and makes a jitgemm Device for host tensors
whose launches reach it: the eager path of every dense and grouped op runs
as on a GPU down to the foreign calls, which the stubs answer. For test_launch_path.py
and ``bench/python_overhead.py --cpu-stub``; needs a C compiler and the
meson build's include/ (version.h)."""
import ctypes
import functools
import os
import shlex
import shutil
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
CC = shlex.split(os.environ.get("CC", "cc"))


def build_include(library_path: str) -> str:
    """The meson build's include/ (version.h) next to its libjitgemm.so."""
    return os.path.join(os.path.dirname(os.path.abspath(library_path)), "include")


def available(library_path: str) -> bool:
    return bool(shutil.which(CC[0])) and os.path.exists(
        os.path.join(build_include(library_path), "jitgemm", "version.h"))


def build(tmp: str, library_path: str) -> ctypes.CDLL:
    so = os.path.join(tmp, "libstubcuda.so")
    subprocess.run(CC + ["-std=c11", "-O2", "-shared", "-fPIC", "-I",
                         os.path.join(REPO, "include"), "-I", build_include(library_path),
                         os.path.join(HERE, "stub_cuda.c"), "-o", so], check=True)
    lib = ctypes.CDLL(so)
    lib.stub_last_args.restype = ctypes.c_void_p
    lib.stub_last_stream.restype = ctypes.c_void_p
    lib.stub_last_plan.restype = ctypes.c_void_p
    lib.stub_set_current.argtypes = [ctypes.c_void_p]
    lib.stub_last_grouped.restype = ctypes.c_void_p
    lib.stub_grouped_ptr.restype = ctypes.c_void_p
    lib.stub_grouped_ptr.argtypes = [ctypes.c_int]
    lib.path = so
    return lib


def stub_device(tmp: str, monkeypatch=None, in_context=None):
    """(Device, stub library): a Device under index None (host tensors) with
    the offline context's plans, the stub driver and launch, and the device
    check lifted. in_context: the launches are the stubs of the in-context
    calls (the Device asks no driver first), else of jg_gemm_run and
    jg_grouped_run (it asks, as with a library older than 0.9); None: as
    the loaded library (C.IN_CONTEXT). With monkeypatch (pytest's), every
    patch is undone after the test; without, they stay (the benchmark)."""
    from jitgemm import _capi as C
    from jitgemm import _checks as K
    from jitgemm import _device as D

    def setattr_(obj, name, value):
        if monkeypatch is not None:
            monkeypatch.setattr(obj, name, value)
        else:
            setattr(obj, name, value)

    stub = build(tmp, C.library_path())
    old_env = os.environ.get("JITGEMM_LIBCUDA")
    os.environ["JITGEMM_LIBCUDA"] = stub.path
    try:
        driver = D._Driver()
    finally:
        if old_env is None:
            del os.environ["JITGEMM_LIBCUDA"]
        else:
            os.environ["JITGEMM_LIBCUDA"] = old_env
    run = stub.stub_run
    run.restype, run.argtypes = C.lib.jg_gemm_run.restype, C.lib.jg_gemm_run.argtypes
    setattr_(C.lib, "jg_gemm_run", run)
    grouped = stub.stub_grouped_run
    grouped.restype, grouped.argtypes = C.lib.jg_grouped_run.restype, C.lib.jg_grouped_run.argtypes
    setattr_(C.lib, "jg_grouped_run", grouped)
    if in_context is None:
        in_context = getattr(C, "IN_CONTEXT", False)
    suffix = "_in_context" if in_context else ""
    if hasattr(C, "grouped_run_at"):
        setattr_(C, "grouped_run_at", ctypes.CFUNCTYPE(
            ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p)(
                ("stub_grouped_run" + suffix, stub)))
    if hasattr(C, "gemm_run_packed"):
        setattr_(C, "gemm_run_packed", ctypes.CFUNCTYPE(
            ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
                ("stub_run" + suffix, stub)))
    setattr_(K, "on_cuda", lambda op, **tensors: None)
    offline = D.offline_device("sm_90a")
    dev = D.Device.__new__(D.Device)
    dev.__dict__.update(offline.__dict__)  # its context plans; launches go to the stub
    dev.index, dev.driver = None, driver
    dev.asks_current = not in_context
    dev.primary = driver.primary_context(0)
    # for torch._C._cuda_getCurrentRawStream(index), which needs a GPU: a builtin call
    dev.stream = functools.partial(abs, 0x5000)
    if monkeypatch is not None:
        monkeypatch.setitem(D._devices, None, dev)
    else:
        D._devices[None] = dev
    return dev, stub
