"""The engine's unit records: a storage buffer's ``Var``, a pushed ``Opr``
and the ``Failure`` that poisons what a failed op wrote.

These are plain slotted objects touched only under the engine lock; they
carry no behaviour of their own, so the scheduler's rules stay in one file.
"""
from __future__ import annotations

import os
import sys

__all__ = ["Var", "Opr", "Failure", "FailureLog", "user_origin"]


class Var:
    """Dependency state of one storage buffer (MXNet's ThreadedVar).

    Invariant (engine lock held): ``queue`` is None or a non-empty list of
    ``(opr, is_write)`` not yet granted, in push order; ``nreads`` granted
    reads are running; ``writing`` is True while a granted write runs. A
    read is granted when nothing is queued and nothing writes; a write when
    nothing is queued, nothing writes and no read runs.

    Memory accounting: ``nbytes`` is the size of the buffer once allocated
    (0 before; set by its ``Storage``); ``pins`` counts registered ops that
    read the var and have not finished; while pinned and allocated, the
    var's bytes are counted once in the engine's pending bytes (``held``),
    since pending ops keep the buffer alive even after the user dropped it.

    ``prof`` is the profiler's own record of who last wrote and read the var
    (see ``profiler.Profiler.wrap``): never set in ``__init__``, so a var
    costs nothing more to make while no profiler records. ``gev`` likewise
    belongs to the GPU executor (the CUDA events of the var's last GPU write
    and the GPU reads since, see ``gpu.py``), set only for vars a GPU touched.
    """
    __slots__ = ("queue", "head", "nreads", "writing", "version", "exc",
                 "nbytes", "pins", "held", "prof", "gev", "reader")

    def __init__(self):
        self.queue = None
        self.head = 0
        self.nreads = 0
        self.writing = False
        self.version = 0
        self.exc = None
        self.nbytes = 0
        self.pins = 0
        self.held = 0
        # set while the op writing this var can answer reads itself (a
        # batch of coalesced calls, see ndarray/_coalesce.py): read() asks it
        self.reader = None

    def pending_write(self) -> bool:
        """True if a write pushed earlier has not finished (lock held)."""
        if self.writing:
            return True
        q = self.queue
        if q is None:
            return False
        for i in range(self.head, len(q)):
            if q[i][1]:
                return True
        return False


class Opr:
    """One pushed operation: ``fn()`` plus the vars it reads and writes.

    ``reads`` and ``writes`` are disjoint tuples; ``rw`` says some written
    var is also read (in-place ops), which matters for poisoning only.
    ``wait`` counts vars not granted yet; the op is ready at 0.
    """
    __slots__ = ("fn", "reads", "writes", "rw", "name", "nbytes", "wait", "origin",
                 "split", "executor", "done", "failure", "result", "on_done", "counted",
                 "bulk", "tiny")

    def __init__(self, fn, reads, writes, name, nbytes=0, rw=False):
        self.fn = fn
        self.reads = reads
        self.writes = writes
        self.rw = rw
        self.name = name
        self.nbytes = nbytes
        self.wait = 0
        self.origin = None
        self.split = None
        self.executor = None
        self.done = False
        self.failure = None
        self.result = None
        self.on_done = None
        self.counted = False
        # a segment's combined op: its runner (per-var failures, members).
        # (Its members do not refer back to it: a training step makes
        # segments by the dozen, and each would be a reference cycle left
        # to the cyclic collector.)
        self.bulk = None
        # a tiny kernel (pushed inline=True) that found its vars busy: whoever
        # finishes the op it waited for runs it too, without a queue hop
        # (set at registration, under the lock, before anyone can grant it)
        self.tiny = False

    def __repr__(self):
        return "<Opr %s wait=%d done=%s>" % (self.name, self.wait, self.done)


class Failure:
    """Why a var is poisoned: the op that failed, where the user pushed it,
    and the original exception. ``reported`` turns True once the error was
    raised to the user, so ``waitall()`` reports each failure once while
    readers of a poisoned var keep failing. A reported failure leaves the
    engine's ``FailureLog`` at once: only the vars it poisoned keep it, and
    they die with their arrays (a server that never calls ``waitall()`` must
    not accumulate the failures it already answered)."""
    __slots__ = ("op", "origin", "exc", "reported", "log")

    def __init__(self, op, origin, exc):
        self.op = op
        self.origin = origin
        self.exc = exc
        self.reported = False
        self.log = None

    def error(self, during: str = ""):
        from ..base import MXNetError
        f, line = self.origin or ("<unknown>", 0)
        msg = "operator %s, pushed at %s:%d, failed: %s: %s" % (
            self.op, f, line, type(self.exc).__name__, self.exc)
        if during:
            msg += " (raised by %s)" % during
        err = _error_class(type(self.exc), MXNetError)(msg)
        err.__cause__ = self.exc
        self.reported = True
        log = self.log
        if log is not None:
            self.log = None
            log.discard(self)
        return err


# MXNet's error registry (python/mxnet/error.py) raises a kernel's
# "IndexError: ..." as IndexError, and likewise these builtins; aiond's error
# is an MXNetError that is also an instance of that builtin
_MAPPED = (IndexError, ValueError, TypeError, AttributeError, NotImplementedError)
_ERROR_CLASSES = {}


def _error_class(exc_type, base):
    for t in _MAPPED:
        if issubclass(exc_type, t):
            cls = _ERROR_CLASSES.get(t)
            if cls is None:
                cls = _ERROR_CLASSES[t] = type("MXNet" + t.__name__, (base, t),
                                               {"__module__": base.__module__})
            return cls
    return base


class FailureLog:
    """The failures no reader has been told of yet, in the order they
    happened (what ``waitall()`` raises). Appending and discarding are
    single dict operations, atomic under the GIL, so kernels' threads and
    readers need no lock for them."""
    __slots__ = ("_d",)

    def __init__(self):
        self._d = {}

    def append(self, fail):
        fail.log = self
        self._d[fail] = None

    def discard(self, fail):
        self._d.pop(fail, None)

    def take(self):
        """Remove and return every failure held, oldest first."""
        d, self._d = self._d, {}
        fails = list(d)
        for f in fails:
            f.log = None
        return fails

    def __len__(self):
        return len(self._d)

    def __iter__(self):
        return iter(list(self._d))

    def __repr__(self):
        return "<FailureLog of %d unreported failure(s)>" % len(self._d)


_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def user_origin(depth: int = 2):
    """(filename, lineno) of the innermost frame outside the aiond package."""
    try:
        f = sys._getframe(depth)
    except ValueError:
        return ("<unknown>", 0)
    while f is not None and f.f_code.co_filename.startswith(_PKG_DIR):
        f = f.f_back
    if f is None:
        return ("<unknown>", 0)
    return (f.f_code.co_filename, f.f_lineno)
