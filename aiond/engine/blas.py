"""How many threads BLAS uses: one per worker, every core for a serial loop,
and the user's own setting while the engine runs nothing.

The CPU workers pin BLAS to one thread each, so that workers x BLAS threads
never exceed the cores: a worker narrows BLAS when it takes an item and,
the last to finish, gives it back its resting width. A ready op that a plain
thread runs itself (``push(inline=CALLER)``: a serial loop, where no worker
runs anything) may use every core instead: ``Engine._run_caller`` widens
BLAS around it. At rest (no worker, no split op, no caller op running)
BLAS has the width it had before the workers started, so the user's own
numpy matmuls in the same process are not slowed by the engine's pinning.

OpenBLAS on pthreads has one process-wide setting that each call reads when
it starts, and setting it costs well under a microsecond, so it can follow
the ops. Any other BLAS (MKL, BLIS, OpenBLAS on OpenMP, whose thread count
is per calling thread) stays at one thread; with none of OpenBLAS on
pthreads, ``dynamic`` is False.
"""
from __future__ import annotations

import threading

__all__ = ["state", "setup"]

# (set, get) symbol pairs of OpenBLAS builds: plain, scipy-openblas (numpy's
# wheels), 64-bit-integer builds
_SYMBOLS = (("openblas_set_num_threads", "openblas_get_num_threads"),
            ("scipy_openblas_set_num_threads64_", "scipy_openblas_get_num_threads64_"),
            ("scipy_openblas_set_num_threads", "scipy_openblas_get_num_threads"),
            ("openblas_set_num_threads64_", "openblas_get_num_threads64_"))


class BlasThreads:
    __slots__ = ("dynamic", "wide", "rest", "cur", "callers", "running", "lock", "_set",
                 "_get")

    def __init__(self):
        self.dynamic = False    # True: the methods below switch the thread count
        self.wide = 1           # around a CALLER op (at most ``rest``)
        self.rest = 1           # while the engine runs nothing: the user's setting
        self.cur = 1            # the width last set here
        self.callers = 0        # threads running a CALLER op wide (under lock)
        self.running = 0        # engine threads running kernels narrow (under lock)
        self.lock = threading.Lock()
        self._set = ()          # the set_num_threads of each OpenBLAS on pthreads
        self._get = None        # the first one's get_num_threads

    def _sync(self):
        """Adopt a width that someone else set since the last change made
        here (the user's ``threadpool_limits``, say) as the resting width."""
        if self._get is not None:
            actual = self._get()
            if actual != self.cur:
                self.cur = self.rest = max(1, actual)

    def _set_to(self, n):
        if self.cur != n:
            self.cur = n
            for f in self._set:
                f(n)

    def widen(self):
        self._sync()
        self._set_to(min(self.wide, self.rest))

    def settle(self):
        """The width once a kernel ends (under lock): one thread while an
        engine thread still runs kernels, wide while a CALLER op does, else
        the resting width."""
        self._sync()
        if self.running:
            self._set_to(1)
        elif self.callers:
            self._set_to(min(self.wide, self.rest))
        else:
            self._set_to(self.rest)

    def enter(self):
        """An engine thread starts running kernels beside others: narrow."""
        with self.lock:
            self.running += 1
            self._sync()
            self._set_to(1)

    def leave(self):
        with self.lock:
            self.running -= 1
            if not self.running:
                self.settle()


state = BlasThreads()
_lock = threading.Lock()
_done = False


def setup(ncores):
    """Find the BLAS numpy uses, pin it to one thread and decide whether it
    may follow the engine (once, when the workers start).

    OpenBLAS on pthreads is switched through its own symbols, never through
    threadpoolctl: threadpoolctl lets only the first Python thread that
    limits OpenBLAS through it do so again, and a worker that did would
    silently disable the user's own ``threadpool_limits`` for good."""
    global _done
    with _lock:
        if _done:
            return
        _done = True
        try:
            from threadpoolctl import ThreadpoolController
            libs = ThreadpoolController().select(user_api="blas").lib_controllers
        except Exception:   # threadpoolctl missing or no BLAS found: nothing to steer
            return
        # numpy's OpenBLAS, and scipy's own copy when scipy is loaded: each
        # OpenBLAS on pthreads gets switched; any other BLAS stays pinned
        setters = []
        getter = None
        wide = max(1, int(ncores))
        rest = None
        for lib in libs:
            pair = None
            if lib.internal_api == "openblas" \
                    and getattr(lib, "threading_layer", "") == "pthreads":
                for set_name, get_name in _SYMBOLS:
                    f, g = getattr(lib.dynlib, set_name, None), getattr(lib.dynlib, get_name, None)
                    if f is not None and g is not None:
                        pair = f, g
                        break
            if pair is None:
                try:                # MKL, BLIS, OpenMP builds: one thread for good
                    lib.set_num_threads(1)
                except Exception:   # noqa: BLE001 - a BLAS that cannot be limited
                    pass
                continue
            f, g = pair
            n = max(1, int(g()))
            setters.append(f)
            getter = getter or g
            wide = min(wide, n)
            rest = n if rest is None else min(rest, n)
            f(1)
        with state.lock:
            state.cur = 1
            if setters and rest >= 2:
                state._set = tuple(setters)
                state._get = getter
                state.wide = wide
                state.rest = rest
                state.dynamic = True
                state.settle()


def after_fork_in_child():
    """The child has none of the threads that were running kernels (one may
    even have held the lock): a fresh lock, nothing running, BLAS at rest
    (OpenBLAS restarts its own thread pool in the child by itself)."""
    st = state
    st.lock = threading.Lock()
    st.running = 0
    st.callers = 0
    if st.dynamic:
        with st.lock:
            st.settle()
