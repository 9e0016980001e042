"""How many OpenMP threads a oneDNN call may use, and no spinning.

The engine's rule (``aiond/engine/blas.py``, issue 30) holds for oneDNN too:
parallelism inside a kernel comes from the engine, which splits a large op
into ranges that the pushing thread and idle workers take from one list
(the oneDNN plans' units are samples or channel blocks), and each range is
one oneDNN call on the thread that took it, with one OpenMP thread. An
OpenMP team would hand fixed parts to threads that may not get a core and
wait for them, and its results would depend on how many threads it had.

``AIOND_ONEDNN_THREADS=n`` lets a call that has the machine to itself as
far as the engine knows (no other engine thread in a kernel, no other
thread in oneDNN) and is large enough use an OpenMP team of up to ``n``
threads instead (for a process that runs nothing else). For that case
``OMP_WAIT_POLICY=PASSIVE`` and ``GOMP_SPINCOUNT=0`` go into the environment
before libgomp loads with libdnnl (unless the user set them): an idle team
thread sleeps on a futex instead of spinning.
"""
from __future__ import annotations

import ctypes
import os
import threading

SMALL = 1 << 20         # MACs (or elements x 16): below, a team costs more than it saves

_state = {"set": None, "cores": 1}
_lock = threading.Lock()
_inside = [0]
_width = threading.local()      # the OpenMP width this thread last set


def quiet_omp_env():
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("GOMP_SPINCOUNT", "0")


def _cores():
    """The team size allowed: ``AIOND_ONEDNN_THREADS`` (default 1), at most the cores."""
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    try:
        want = int(os.environ.get("AIOND_ONEDNN_THREADS", "1"))
    except ValueError:
        want = 1
    return max(1, min(n, want))


def bind_omp():
    """libgomp's omp_set_num_threads (a per-thread setting), loaded with libdnnl."""
    _state["cores"] = _cores()
    try:
        # with the GIL held: the call only sets a per-thread variable
        gomp = ctypes.PyDLL("libgomp.so.1")
        f = gomp.omp_set_num_threads
        f.argtypes, f.restype = [ctypes.c_int], None
        _state["set"] = f
    except (OSError, AttributeError):
        _state["set"] = None
        _state["cores"] = 1
    return _state["set"]


def width(work):
    """Threads for a call of ``work`` MACs made now by this thread."""
    n = _state["cores"]
    if n == 1 or work < SMALL or _inside[0]:
        return 1
    try:
        from ...engine import blas
        if blas.state.running > 1:
            return 1
    except ImportError:
        pass
    return n


class inside:
    """Marks a thread as running oneDNN with ``n`` threads (sets its OpenMP width)."""
    __slots__ = ("n",)

    def __init__(self, n):
        self.n = n

    def __enter__(self):
        with _lock:
            _inside[0] += 1
        f = _state["set"]
        if f is not None and getattr(_width, "n", None) != self.n:
            f(self.n)
            _width.n = self.n
        return self

    def __exit__(self, *exc):
        with _lock:
            _inside[0] -= 1
