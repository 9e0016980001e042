"""How many threads BLAS uses: one per worker, every core for a serial loop.

The CPU workers pin BLAS to one thread each, so that workers x BLAS threads
never exceed the cores. A ready op that a plain thread runs itself
(``push(inline=CALLER)``: a serial loop, where no worker runs anything) may
use every core instead: ``Engine._run_caller`` widens BLAS around it and
narrows it again after.

OpenBLAS on pthreads has one process-wide setting that each call reads when
it starts, and setting it costs well under a microsecond, so it can follow
the ops. Any other BLAS (MKL, BLIS, OpenBLAS on OpenMP, whose thread count
is per calling thread) stays at one thread (``dynamic`` is False).
``AIOND_BLAS_THREADS=N`` fixes the count for everything (1: always narrow).
"""
from __future__ import annotations

import os
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
        self._set = None

    def narrow(self):
        if self.cur != 1:
            self.cur = 1
            self._set(1)

    def widen(self):
        if self.cur != self.wide:
            self.cur = self.wide
            self._set(self.wide)


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
        fixed = os.environ.get("AIOND_BLAS_THREADS", "")
        try:
            from threadpoolctl import ThreadpoolController, threadpool_limits
            libs = ThreadpoolController().select(user_api="blas").lib_controllers
        except Exception:   # threadpoolctl missing or no BLAS found: nothing to steer
            return
        if fixed:
            try:
                n = max(1, int(float(fixed)))
            except ValueError:
                from ..base import MXNetError
                raise MXNetError("environment variable AIOND_BLAS_THREADS=%r is not a "
                                 "number" % fixed) from None
            threadpool_limits(limits=n, user_api="blas")
            return
        setter = None
        wide = 1
        if len(libs) == 1 and libs[0].internal_api == "openblas" \
                and getattr(libs[0], "threading_layer", "") == "pthreads":
            lib = libs[0]
            for name in _SYMBOLS:
                setter = getattr(lib.dynlib, name, None)
                if setter is not None:
                    break
            wide = min(int(lib.num_threads or 1), max(1, int(ncores)))
        threadpool_limits(limits=1, user_api="blas")
        if setter is not None and wide >= 2:
            state._set = setter
            state.wide = wide
            state.cur = 1
            state.dynamic = True
