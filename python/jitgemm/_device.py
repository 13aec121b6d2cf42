"""One libjitgemm context per CUDA device, its plans, and launches.

A context binds the CUDA context current when it is created
(``jg_context_create``), and ``jg_gemm_run`` launches in the context current
on the calling thread. PyTorch works in each device's primary context, so each
device's jitgemm context is created inside that primary context (retained and
pushed through the driver API, which leaves PyTorch's current device alone),
and each launch makes it current where it is not (another device current, or
a thread on which no CUDA call has run yet): the library's
``jg_gemm_run_in_context`` does so itself (0.9), else the package asks the
driver before each launch and pushes it for the launch.

Plans are cached here by a tuple of everything that shapes them, so a call
whose plan exists costs a dict lookup, a small struct and one foreign call
(two with a library older than 0.9).
"""

import ctypes
import functools
import os
import threading
from typing import Dict, Optional, Tuple

import torch

from . import _capi as C


class JitGemmError(RuntimeError):
    """A libjitgemm call failed; the message is ``jg_context_last_error``'s.

    Attributes
    ----------
    status : int or None
        The ``jg_status`` value (negative), or None for errors found by this
        package before calling the library.
    status_name : str or None
        ``"JG_ERR_INVALID"`` etc.
    """

    def __init__(self, message: str, status: Optional[int] = None):
        super().__init__(message)
        self.status = status
        self.status_name = C.status_name(status) if status is not None else None


class ArgumentError(JitGemmError, ValueError):
    """An argument breaks a rule of the op (dtype, shape, device, layout,
    alignment); raised before anything is planned or launched."""


# ---- the CUDA driver: only to bind PyTorch's primary contexts --------------------


class _Driver:
    """The few driver calls that make a device's primary context current."""

    def __init__(self):
        path = os.environ.get("JITGEMM_LIBCUDA", "libcuda.so.1")
        try:
            cu = ctypes.CDLL(path)
        except OSError as e:
            raise JitGemmError(f"cannot load the CUDA driver {path}: {e}") from e
        vp, pvp, i = ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p), ctypes.c_int
        sig = {
            "cuInit": [ctypes.c_uint],
            "cuDeviceGet": [ctypes.POINTER(i), i],
            "cuDevicePrimaryCtxRetain": [pvp, i],
            "cuCtxGetCurrent": [pvp],
            "cuCtxPushCurrent_v2": [vp],
            "cuCtxPopCurrent_v2": [pvp],
            "cuGetErrorName": [i, ctypes.POINTER(ctypes.c_char_p)],
        }
        for name, argtypes in sig.items():
            fn = getattr(cu, name)
            fn.argtypes = argtypes
            fn.restype = i
        self.cu = cu
        # a second, untyped handle for the hot path: its one argument is always
        # the byref of a thread's own buffer, and ctypes passes that without
        # the conversion a typed call makes (half the call's cost)
        self.get_current = cu["cuCtxGetCurrent"]
        self.get_current.restype = i
        self.slot = _ContextSlot()
        self.check(cu.cuInit(0), "cuInit")

    def check(self, r: int, call: str):
        if r != 0:
            name = ctypes.c_char_p()
            self.cu.cuGetErrorName(r, ctypes.byref(name))
            raise JitGemmError(f"{call}: {(name.value or b'?').decode()}")

    def primary_context(self, index: int) -> int:
        dev = ctypes.c_int()
        self.check(self.cu.cuDeviceGet(ctypes.byref(dev), index), "cuDeviceGet")
        ctx = ctypes.c_void_p()
        # retained for the life of the process, as PyTorch retains it
        self.check(self.cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev),
                   "cuDevicePrimaryCtxRetain")
        return ctx.value

    def current(self) -> Optional[int]:
        """The calling thread's current CUDA context (None: none). Every launch
        asks, so the answer lands in a buffer of the thread's made once."""
        slot = self.slot
        self.get_current(slot.ref)
        return slot.ctx.value

    def push(self, ctx: int):
        self.check(self.cu.cuCtxPushCurrent_v2(ctx), "cuCtxPushCurrent")

    def pop(self):
        popped = ctypes.c_void_p()
        self.cu.cuCtxPopCurrent_v2(ctypes.byref(popped))


class _ContextSlot(threading.local):
    """A thread's cuCtxGetCurrent buffer (threads may not share one: ctypes lets
    go of the GIL in the call, so another thread could write it between the
    call and the read)."""

    def __init__(self):
        self.ctx = ctypes.c_void_p()
        self.ref = ctypes.byref(self.ctx)


_driver: Optional[_Driver] = None


# ---- M hints ----------------------------------------------------------------------

M_HINT_MIN = 16
M_HINT_MAX = 16384


def m_hint(m: int) -> int:
    """The planner's M hint for a dense call of m rows: the smallest power of
    two or 1.5 times one (16, 24, 32, 48, ..., 12288, 16384) that holds m,
    16384 past it. Dense M-generic plans are keyed by it, so a serving loop
    plans (and at most compiles) once per bucket and shape, never per batch
    size. On an H200, over 108 random BF16 rows (bench/peer_torch.py
    --random), plans for these hints ran at 0.959 of the speed of plans for
    the exact M, against 0.932 with powers of two alone, for 21 buckets
    instead of 11 (the plans a shape when warming every bucket)."""
    h = m_hint_pow2(m)
    return h // 4 * 3 if h > M_HINT_MIN and h // 4 * 3 >= m else h


def m_hint_pow2(m: int) -> int:
    """m rounded up to a power of two, between 16 and 16384: the grouped ops'
    M hint for the rows a group (1.5 times a power of two is unmeasured
    there)."""
    return M_HINT_MIN if m <= M_HINT_MIN else min(1 << (m - 1).bit_length(), M_HINT_MAX)


# ---- devices ------------------------------------------------------------------------


class PlanRecord:
    """A plan this package holds, with where its kernel came from.

    Attributes
    ----------
    op : str
        The op family: ``"gemm"`` (linear, mm, scaled_mm, nvfp4_mm),
        ``"grouped"`` or ``"quantize"``.
    key : tuple
        Everything that shaped the plan (dtypes, N, K, leading dimensions,
        the M hint, ...): the cache key.
    kernel_name : str
        The generated kernel's name (``jg_gemm_...``); "" for quantizers.
    origin : str
        How the kernel reached this process: ``"compiled"`` (NVRTC),
        ``"disk"`` (the disk cache) or ``"memory"`` (already loaded for
        another plan).
    block_m, block_n, block_k, stages, cluster, grid, threads, smem_bytes : int
        ``jg_plan_info``'s fields (0 for quantizers).
    workspace_bytes : int
        ``jg_plan_workspace_bytes``: the device workspace a launch of the plan
        may use, for the rows of its M hint (0: none). Dense plans with
        unaligned A or B get one at each call (``linear``'s Notes).
    """

    __slots__ = ("op", "key", "kernel_name", "origin", "block_m", "block_n", "block_k",
                 "stages", "cluster", "grid", "threads", "smem_bytes", "workspace_bytes")

    def __init__(self, op: str, key: tuple, origin: str, info: Optional[C.PlanInfo] = None,
                 workspace_bytes: int = 0):
        self.op, self.key, self.origin = op, key, origin
        self.workspace_bytes = workspace_bytes
        self.kernel_name = info.kernel_name.decode() if info is not None else ""
        for f in ("block_m", "block_n", "block_k", "stages", "cluster", "grid", "threads",
                  "smem_bytes"):
            setattr(self, f, getattr(info, f) if info is not None else 0)

    def __repr__(self) -> str:
        return (f"PlanRecord(op={self.op!r}, kernel={self.kernel_name!r}, "
                f"origin={self.origin!r}, key={self.key!r})")


class Device:
    """libjitgemm's context on one CUDA device, with its plans; or, made with
    an arch, an offline context that compiles into the caches without a GPU
    (``jitgemm.warm(..., arch="sm_90a")``)."""

    def __init__(self, index: Optional[int], arch: Optional[str] = None, sm_count: int = 0):
        self.index = index
        self.plans: Dict[tuple, int] = {}
        self.records: Dict[tuple, PlanRecord] = {}
        self.lock = threading.Lock()
        ctx = ctypes.c_void_p()
        if arch is not None:
            self.driver = self.primary = None
            self.asks_current = False
            self.stream = lambda: None
            opts = C.Options(flags=C.JG_CONTEXT_OFFLINE | C.JG_CONTEXT_WORKSPACE,
                             arch=arch.encode(), sm_count=sm_count)
            st = C.lib.jg_context_create(ctypes.byref(opts), ctypes.byref(ctx))
            where = f"offline ({arch})"
        else:
            self._bind(index)
            pushed = self.enter()
            # every launch's args carry the workspace fields: plans may split K through one
            opts = C.Options(flags=C.JG_CONTEXT_WORKSPACE)
            try:
                st = C.lib.jg_context_create(ctypes.byref(opts), ctypes.byref(ctx))
            finally:
                self.leave(pushed)
            where = f"cuda:{index}"
        if st != C.JG_OK:
            raise JitGemmError(f"jg_context_create on {where}: "
                               f"{C.lib.jg_context_last_error(None).decode()}", st)
        self.ctx = ctx.value

    @property
    def offline(self) -> bool:
        return self.driver is None

    def _bind(self, index: int):
        global _driver
        torch.cuda.init()
        if _driver is None:
            _driver = _Driver()
        self.driver = _driver
        # whether each launch asks the driver for the current context first:
        # only where the library's launch cannot make it current
        self.asks_current = not C.IN_CONTEXT
        # the raw-stream getter Inductor uses: an int, no Stream object
        raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
        self.stream = functools.partial(raw, index) if raw else (
            lambda: torch.cuda.current_stream(index).cuda_stream)
        self.primary = _driver.primary_context(index)

    # -- the current CUDA context --

    def enter(self) -> bool:
        """Makes this device's primary context current; True if it was pushed
        (then leave() pops it). Offline: nothing to do."""
        if self.driver is None or self.driver.current() == self.primary:
            return False
        self.driver.push(self.primary)
        return True

    def leave(self, pushed: bool):
        if pushed:
            self.driver.pop()

    # -- errors --

    def error(self, status: int, what: str) -> JitGemmError:
        text = C.lib.jg_context_last_error(self.ctx).decode(errors="replace")
        return JitGemmError(f"{what}: {text or C.status_name(status)}", status)

    def stats(self) -> C.ContextStats:
        s = C.ContextStats()
        C.lib.jg_context_get_stats(self.ctx, ctypes.byref(s))
        return s

    # -- plans --

    def _plan(self, op: str, key: tuple, make, what: str) -> int:
        """The plan for key: from the dict, else make(ctx, &plan) under the
        lock, recording where its kernel came from."""
        with self.lock:
            plan = self.plans.get(key)
            if plan is not None:
                return plan
            before = self.stats()
            handle = ctypes.c_void_p()
            pushed = self.enter()
            try:
                st = make(self.ctx, ctypes.byref(handle))
            finally:
                self.leave(pushed)
            if st != C.JG_OK:
                raise self.error(st, what)
            info = C.PlanInfo()
            C.lib.jg_plan_get_info(handle, ctypes.byref(info))
            ws = ctypes.c_size_t()
            C.lib.jg_plan_workspace_bytes(handle, ctypes.byref(ws))
            self.records[key] = PlanRecord(op, key, self._origin(before), info, ws.value)
            self.plans[key] = handle.value
            return handle.value

    def gemm_plan(self, key: tuple) -> int:
        """key: (flags, a_type, b_type, c_type, d_type, m, n, k, lda, ldb, ldc,
        ldd, scale, a_sf_layout, b_sf_layout): jg_gemm_problem's fields in order."""
        plan = self.plans.get(key)
        if plan is not None:
            return plan
        problem = C.GemmProblem(*key)
        return self._plan("gemm", key,
                          lambda ctx, out: C.lib.jg_gemm_plan(ctx, ctypes.byref(problem), out),
                          "jg_gemm_plan")

    def grouped_plan(self, key: tuple) -> int:
        """key: (layout, a_type, b_type, d_type, scale, groups, m_hint, n, k, lda,
        ldb, ldd, m_max, a_sf_layout, b_sf_layout); m_hint 0: none (the
        library sizes tiles for m_max), else each group's expected rows."""
        plan = self.plans.get(key)
        if plan is not None:
            return plan
        (layout, a_type, b_type, d_type, scale, groups, hint, n, k, lda, ldb, ldd, m_max,
         a_sf, b_sf) = key
        hints = (ctypes.c_int64 * groups)(*([hint] * groups)) if hint else None
        problem = C.GroupedProblem(flags=0, layout=layout, a_type=a_type, b_type=b_type,
                                   c_type=C.JG_DTYPE_NONE, d_type=d_type, groups=groups,
                                   m=hints, n=n, k=k, lda=lda, ldb=ldb, ldd=ldd, m_max=m_max,
                                   scale=scale, a_sf_layout=a_sf, b_sf_layout=b_sf)
        return self._plan("grouped", key,
                          lambda ctx, out: C.lib.jg_grouped_plan(ctx, ctypes.byref(problem), out),
                          "jg_grouped_plan")

    def record_quantizer(self, key: tuple, before: C.ContextStats):
        """Records a quantizer's kernel (the library has no quantizer plans: its
        first launch compiles or loads it) from the stats before that launch."""
        if key not in self.records:
            self.records[key] = PlanRecord("quantize", key, self._origin(before))

    def _origin(self, before: C.ContextStats) -> str:
        """Where the kernel of the call since `before` came from, by the
        context's counters (a kernel compiled meanwhile by another thread's
        call would be counted here too)."""
        after = self.stats()
        return ("compiled" if after.plans_compiled > before.plans_compiled else
                "disk" if after.plans_disk > before.plans_disk else "memory")

    # -- launches --

    # A launch is fn(plan, args, stream) (_capi's gemm_run_packed or
    # grouped_run_at, args in the form it takes) on PyTorch's current stream,
    # in this device's primary context: the hot path of every op, written out
    # where the ops launch (_ops._dense, _ops._grouped_launch) so that it
    # adds no Python frame. With a library whose launch makes the plan's
    # context current (C.IN_CONTEXT), and offline, that is the one foreign
    # call, on stream() (which each memo entry holds: _ops._Call.stream);
    # else (asks_current) run_asking, which asks the driver first.

    def run_asking(self, fn, plan: int, args) -> int:
        """A launch with a library older than 0.9: asks the driver for the
        current context, and pushes the primary one where it is not; the
        launch's status."""
        driver = self.driver
        slot = driver.slot  # Driver.current(), inlined: this runs at every call
        driver.get_current(slot.ref)
        if slot.ctx.value == self.primary:
            return fn(plan, args, self.stream())
        driver.push(self.primary)
        try:
            return fn(plan, args, self.stream())
        finally:
            driver.pop()

    def quantize(self, fn, problem: C.QuantProblem, args: C.QuantArgs, what: str):
        pushed = self.enter()
        try:
            st = fn(self.ctx, ctypes.byref(problem), ctypes.byref(args), self.stream())
        finally:
            self.leave(pushed)
        # offline, the kernel is compiled (and cached) before the launch is refused
        if st != C.JG_OK and not (self.offline and st == C.JG_ERR_OFFLINE):
            raise self.error(st, what)


_devices: Dict[int, Device] = {}
_devices_lock = threading.Lock()


def device(index: int) -> Device:
    """The Device for a CUDA device index, created on first use."""
    d = _devices.get(index)
    if d is not None:
        return d
    with _devices_lock:
        d = _devices.get(index)
        if d is None:
            d = _devices[index] = Device(index)
        return d


_offline: Dict[Tuple[str, int], Device] = {}


def offline_device(arch: str, sm_count: int = 0) -> Device:
    """An offline context for arch (and the SM count the planner sizes tiles
    for; 0: 132, an H100 SXM), created on first use."""
    with _devices_lock:
        d = _offline.get((arch, sm_count))
        if d is None:
            d = _offline[(arch, sm_count)] = Device(None, arch, sm_count)
        return d


def all_devices() -> Tuple[Device, ...]:
    return tuple(_devices.values()) + tuple(_offline.values())
