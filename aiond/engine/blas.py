"""How many threads BLAS may use, following what the CPU workers run.

A serial loop (a training step, one request at a time) runs one GEMM after
another on one worker while the other cores idle: there OpenBLAS's own
threads split each GEMM better than ranges handed to other workers (no GIL
to take back, no Python per range). When several kernels run at once, a
multi-threaded BLAS in each would oversubscribe the cores. So:

* *wide* (BLAS's own thread count, at most the cores) while one kernel runs;
* *narrow* (one thread) while two or more run, and while an op's ranges are
  shared between workers (``CPUExecutor.run_ranges``).

OpenBLAS on pthreads has one process-wide setting that each call reads when
it starts, and setting it costs well under a microsecond, so the workers
switch it as they pick up work. Any other BLAS (MKL, BLIS, OpenBLAS on
OpenMP) is pinned to one thread per worker, as before; then the engine
splits large GEMMs over the workers itself (``dynamic`` is False).
``AIOND_BLAS_THREADS=N`` fixes the count (1: always narrow).
"""
from __future__ import annotations

import os
import threading

__all__ = ["state", "setup"]

_SYMBOLS = ("openblas_set_num_threads", "scipy_openblas_set_num_threads64_",
            "scipy_openblas_set_num_threads", "openblas_set_num_threads64_")


class BlasThreads:
    __slots__ = ("dynamic", "wide", "cur", "_set")

    def __init__(self):
        self.dynamic = False    # True: narrow()/widen() switch the thread count
        self.wide = 1
        self.cur = 0
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
    """Find the BLAS numpy uses and decide the policy (once, before the
    workers start)."""
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
        setter = None
        if len(libs) == 1 and libs[0].internal_api == "openblas" \
                and getattr(libs[0], "threading_layer", "") == "pthreads":
            lib = libs[0]
            for name in _SYMBOLS:
                setter = getattr(lib.dynlib, name, None)
                if setter is not None:
                    break
            wide = min(int(lib.num_threads or 1), max(1, ncores))
        if fixed:
            n = max(1, int(float(fixed)))
            threadpool_limits(limits=n, user_api="blas")
            return
        if setter is None or wide < 2:
            # one thread per worker; the engine splits big GEMMs itself
            threadpool_limits(limits=1, user_api="blas")
            return
        state._set = setter
        state.wide = wide
        state.cur = wide
        state.dynamic = True
