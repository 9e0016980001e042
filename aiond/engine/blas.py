"""How many threads a kernel library may use: one per engine thread, always,
and the user's own setting while the engine runs nothing.

The policy, for a machine that may be shared: parallelism inside a kernel
comes only from the engine itself, which splits a large op into ranges
(``cpu.py``: ``run_ranges``) that the pushing thread and idle workers take
from one list. That split is cooperative: a thread never waits for a range
another thread has not started, so a worker that cannot get a core (another
process holds it) costs nothing: the pusher runs its range too. It only
sleeps (never spins) on a range a worker began. A multi-threaded BLAS call
is the opposite: OpenBLAS hands fixed parts to its own helper threads and
spins until each is done, so one helper descheduled by a neighbour process
stalls the call a scheduler slice at a time (a 0.9 ms training step took
36 ms beside a nice-19 numpy process; issue 30). So every engine thread,
worker or plain pushing thread running a ready op (``push(inline=CALLER)``),
runs its kernels with one BLAS thread: a thread narrows BLAS when it starts
a kernel and the last one to finish gives it back its resting width.

At rest (no engine thread in a kernel) BLAS has the width it had before the
engine started, so the user's own numpy matmuls in the same process keep
their speed, and ``threadpool_limits`` keeps working: a width someone else
set is adopted as the resting one.

OpenBLAS on pthreads has one process-wide setting that each call reads when
it starts, and setting it costs well under a microsecond, so it can follow
the kernels. Any other BLAS (MKL, BLIS, OpenBLAS on OpenMP, whose thread
count is per calling thread) is set to one thread for good: ``dynamic`` is
then False and nothing here switches. A kernel library added later follows
the same rule: one thread per engine thread, or told not to spin.
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
    __slots__ = ("dynamic", "rest", "cur", "running", "lock", "_set", "_get", "_num")

    def __init__(self):
        self.dynamic = False    # True: enter/leave switch the thread count
        self.rest = 1           # while the engine runs nothing: the user's setting
        self.cur = 1            # the width last set here
        self.running = 0        # engine threads inside a kernel (under lock)
        self.lock = threading.Lock()
        self._set = ()          # the set_num_threads of each OpenBLAS on pthreads
        self._get = None        # the first one's get_num_threads
        self._num = None        # or its thread count variable itself (a c_int): cheaper

    def _sync(self):
        """Adopt a width that someone else set since the last change made
        here (the user's ``threadpool_limits``, say) as the resting width."""
        num = self._num
        if num is not None or self._get is not None:
            actual = num.value if num is not None else self._get()
            if actual != self.cur:
                self.cur = self.rest = max(1, actual)

    def _set_to(self, n):
        if self.cur != n:
            self.cur = n
            for f in self._set:
                f(n)

    def settle(self):
        """The width once a kernel ends (under lock): one thread while an
        engine thread is still inside one, else the resting width."""
        self._sync()
        self._set_to(1 if self.running else self.rest)

    def enter(self):
        """An engine thread starts running kernels: one BLAS thread."""
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


def ready():
    """Whether ``setup`` has run."""
    return _done


def setup():
    """Find the BLAS numpy uses, pin it to one thread and decide whether it
    may follow the engine (once, before the engine first runs a kernel).

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
        getter = num = None
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
            if getter is None:
                getter = g
                num = _count_variable(lib.dynlib, f, g)
            rest = n if rest is None else min(rest, n)
            f(1)
        with state.lock:
            state.cur = 1
            if setters and rest >= 2:
                state._set = tuple(setters)
                state._get = getter
                state._num = num
                state.rest = rest
                state.dynamic = True
                state.settle()


def _count_variable(dynlib, set_fn, get_fn):
    """OpenBLAS's ``blas_cpu_number``, which its get_num_threads returns, as
    a c_int read in ~50 ns instead of a foreign call (the engine reads it
    around every kernel), or None where it is not exported or does not
    follow the setter."""
    import ctypes
    try:
        v = ctypes.c_int.in_dll(dynlib, "blas_cpu_number")
    except (ValueError, AttributeError):
        return None
    was = get_fn()
    try:
        # never above the width it has: that would start helper threads
        for n in (1, was, 1):
            set_fn(n)
            if v.value != n or get_fn() != n:
                return None
    finally:
        set_fn(was)
    return v


def after_fork_in_child():
    """The child has none of the threads that were running kernels (one may
    even have held the lock): a fresh lock, nothing running, BLAS at rest
    (OpenBLAS restarts its own thread pool in the child by itself)."""
    st = state
    st.lock = threading.Lock()
    st.running = 0
    if st.dynamic:
        with st.lock:
            st.settle()
