"""How many threads BLAS uses: one per worker, every core for a serial loop.

The CPU workers pin BLAS to one thread each, so that workers x BLAS threads
never exceed the cores. A ready op that a plain thread runs itself
(``push(inline=CALLER)``: a serial loop, where no worker runs anything) may
use every core instead: ``Engine._run_caller`` widens BLAS around it and
narrows it again after.

OpenBLAS on pthreads has one process-wide setting that each call reads when
it starts, and setting it costs well under a microsecond, so it can follow
the ops. Any other BLAS (MKL, BLIS, OpenBLAS on OpenMP, whose thread count
is per calling thread) stays at one thread; with none of OpenBLAS on
pthreads, ``dynamic`` is False.
"""
from __future__ import annotations

import threading

__all__ = ["state", "setup"]

_SYMBOLS = ("openblas_set_num_threads", "scipy_openblas_set_num_threads64_",
            "scipy_openblas_set_num_threads", "openblas_set_num_threads64_")


class BlasThreads:
    __slots__ = ("dynamic", "wide", "cur", "callers", "lock", "_set")

    def __init__(self):
        self.dynamic = False    # True: narrow()/widen() switch the thread count
        self.wide = 1
        self.cur = 1
        self.callers = 0        # threads running a CALLER op wide (under lock)
        self.lock = threading.Lock()
        self._set = ()          # the set_num_threads of each OpenBLAS on pthreads

    def narrow(self):
        if self.cur != 1:
            self.cur = 1
            for f in self._set:
                f(1)

    def widen(self):
        if self.cur != self.wide:
            self.cur = self.wide
            for f in self._set:
                f(self.wide)


state = BlasThreads()
_lock = threading.Lock()
_done = False


def setup(ncores):
    """Find the BLAS numpy uses, pin it to one thread and decide whether
    CALLER ops may widen it (once, when the workers start)."""
    global _done
    with _lock:
        if _done:
            return
        _done = True
        try:
            from threadpoolctl import ThreadpoolController, threadpool_limits
            libs = ThreadpoolController().select(user_api="blas").lib_controllers
        except Exception:   # threadpoolctl missing or no BLAS found: nothing to steer
            return
        # numpy's OpenBLAS, and scipy's own copy when scipy is loaded: each
        # OpenBLAS on pthreads gets switched; any other BLAS stays pinned
        setters = []
        wide = max(1, int(ncores))
        for lib in libs:
            if lib.internal_api != "openblas" \
                    or getattr(lib, "threading_layer", "") != "pthreads":
                continue
            for name in _SYMBOLS:
                setter = getattr(lib.dynlib, name, None)
                if setter is not None:
                    setters.append(setter)
                    wide = min(wide, int(lib.num_threads or 1))
                    break
        threadpool_limits(limits=1, user_api="blas")
        if setters and wide >= 2:
            state._set = tuple(setters)
            state.wide = wide
            state.cur = 1
            state.dynamic = True
