"""The asyncio dependency engine (``mx.engine``).

Public API, with MXNet's names where MXNet has them::

    mx.engine.set_bulk_size(n) / with mx.engine.bulk(n):   group ready ops
    mx.engine.waitall()          (also mx.nd.waitall())
    mx.engine.statistics()       pending ops, bytes held, peaks, workers busy
    mx.engine.set_limits(max_pending_ops=, max_pending_bytes=)
    with mx.engine.naive():      run every op synchronously at push
    mx.engine.push(fn, reads, writes, name=)   low-level: run fn() in order
    with mx.engine.segment(n):   push this thread's ops as bulk segments of n

Hybridized blocks, executors, backward and optimizer steps run their ops
as bulk segments (``segments.py``), sized as MXNet's ``MXNET_EXEC_BULK_EXEC_*``
variables say: ``..._INFERENCE=0`` / ``..._TRAIN=0`` turn it off for
inference / training, ``..._MAX_NODE_TRAIN`` (``_FWD``/``_BWD``) caps a
training segment (default 15 as MXNet); a thread's ``set_bulk_size(n > 1)``
caps it at n instead.

``AIOND_ENGINE=naive`` makes the naive mode the default;
``AIOND_MAX_PENDING_OPS`` / ``AIOND_MAX_PENDING_BYTES`` set the bounds;
``AIOND_CPU_WORKERS`` the number of CPU worker threads.
"""
from __future__ import annotations

import contextlib
import dataclasses
import os

from .loopblock import LoopBlockedWarning
from .loopblock import set_threshold_ms as set_loop_block_warn_ms
from .scheduler import Engine
from .storage import Storage, pool
from .var import Var

__all__ = ["Engine", "Var", "Storage", "get", "waitall", "set_bulk_size", "bulk",
           "statistics", "EngineStatistics", "set_limits", "naive", "push", "engine_loop",
           "is_naive", "room", "segment", "bulk_scope", "reset_bulk_env",
           "LoopBlockedWarning", "set_loop_block_warn_ms"]

_engine = None


def get() -> Engine:
    global _engine
    if _engine is None:
        _engine = Engine()
    return _engine


_engine = get()


def _before_fork():
    # MXNet stops its engine around fork: finish pending work so no var is
    # left waiting on a thread the child will not have
    if not _engine.in_engine_thread():
        try:
            _engine.wait_all()
        except Exception:  # noqa: BLE001 - reported later by the parent's own waitall
            pass


def _after_fork_in_child():
    # the child has none of the parent's threads: fresh locks, lazily restarted workers
    import threading
    from .cpu import CPUExecutor
    from . import loop as _loop
    e = _engine
    e.lock = threading.Lock()
    e.cv = threading.Condition(e.lock)
    e.cv_waiters = 0
    e.idle_waiters = 0
    e.threads = set()
    e.pending = 0
    e.bytes = 0
    e.room_waiters = []
    e.bulk_threads = 1 if e.bulk_size() > 1 else 0   # the forking thread's own
    e.cpu = CPUExecutor(e, e.cpu.nworkers)
    _loop._eloop = None
    from . import blas
    blas.after_fork_in_child()
    global _async_ex
    _async_ex = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)


def engine_loop():
    from .loop import engine_loop as _el
    return _el()


def waitall():
    """Wait for all pushed ops; raise the first failure not yet reported."""
    _engine.wait_all()


def set_bulk_size(size: int) -> int:
    """Hand ready ops to workers in batches of ``size`` (0 or 1: one by one).
    The size belongs to the calling thread, as in MXNet. Returns the
    thread's previous size, as MXNet does."""
    size = int(size)
    if size < 0:
        raise ValueError("bulk size must be >= 0, got %d" % size)
    return _engine.set_bulk_size(size)


@contextlib.contextmanager
def bulk(size: int):
    """``with mx.engine.bulk(n):`` - batch ready ops by ``n`` inside the block
    (on the calling thread)."""
    prev = set_bulk_size(size)
    try:
        yield
    finally:
        set_bulk_size(prev)
        _engine.flush_bulk()


def segment(limit: int = 0, name=None):
    """``with mx.engine.segment():`` - run the ops this thread pushes inside
    the block as bulk segments of at most ``limit`` ops (0: the whole block
    is one), each one engine op. Pushes still return at once; a wait inside
    the block pushes what was gathered first."""
    return _engine.segment(int(limit or 0), name)


class _NoScope:
    __slots__ = ()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


_NO_SCOPE = _NoScope()
# MXNet reads its MXNET_EXEC_BULK_EXEC_* variables once; so does aiond (per
# kind, at first use; ``reset_bulk_env()`` reads them again)
_BULK_ENV = {}


def reset_bulk_env():
    """Forget the MXNET_EXEC_BULK_EXEC_* values read so far."""
    _BULK_ENV.clear()


def _env_limit(kind):
    from .scheduler import _env_int as env_limit
    if kind == "inference":
        return 0 if env_limit("MXNET_EXEC_BULK_EXEC_INFERENCE", 1) else 1
    if not env_limit("MXNET_EXEC_BULK_EXEC_TRAIN", 1):
        return 1
    base = env_limit("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN", 15)
    if kind == "forward":
        return env_limit("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_FWD", base)
    if kind == "backward":
        return env_limit("MXNET_EXEC_BULK_EXEC_MAX_NODE_TRAIN_BWD", base)
    return base


def bulk_scope(kind: str, name=None, limit=None):
    """The segment scope library code opens around a graph's ops: ``kind``
    is 'inference' (whole graph), 'forward' / 'backward' (training) or
    'update'; ``limit`` (a hybridize() bulk size) overrides the variables."""
    if limit is None:
        limit = _BULK_ENV.get(kind)
        if limit is None:
            limit = _BULK_ENV[kind] = _env_limit(kind)
    tb = _engine.bulk_size()
    if tb > 1:
        limit = tb
    if limit == 1 or _engine.naive_depth:
        return _NO_SCOPE
    return _engine.segment(limit, name)


async def room():
    """``await mx.engine.room()``: wait, without blocking the event loop, until
    the engine's pending bounds hold again. An async producer calls it between
    pushes; ``await arr.read()`` does it by itself. (``push`` on a thread whose
    event loop is running does not block below a slack of the bounds.)"""
    if _engine.over_bound():
        await _engine.room()


@dataclasses.dataclass(frozen=True)
class EngineStatistics:
    pending_ops: int
    bytes_held: int
    peak_pending_ops: int
    peak_bytes_held: int
    max_pending_ops: int
    max_pending_bytes: int
    workers: int
    workers_busy: int
    ops_pushed: int         # ran on a worker (or their executor)
    ops_inline: int         # ran on the pushing thread at push (ops_caller included)
    ops_caller: int         # of those, ops too big for the inline rule that a plain
                            # thread ran because they were ready (a serial loop)
    ops_joined: int         # calls that joined a queued op of the same plan (a
                            # coroutine's inference call while the workers are busy)
    pool_cached_bytes: int
    pool_hits: int
    pool_misses: int
    naive: bool


def statistics() -> EngineStatistics:
    """A snapshot of the engine's counters."""
    e = _engine
    with e.lock:
        return EngineStatistics(
            pending_ops=e.pending, bytes_held=e.bytes, peak_pending_ops=e.peak_pending,
            peak_bytes_held=e.peak_bytes, max_pending_ops=e.max_pending,
            max_pending_bytes=e.max_bytes, workers=e.cpu.nworkers, workers_busy=e.cpu.busy,
            ops_pushed=e.ops_pushed, ops_inline=e.ops_inline, ops_caller=e.ops_caller,
            ops_joined=e.ops_joined,
            pool_cached_bytes=pool.cached_bytes, pool_hits=pool.hits, pool_misses=pool.misses,
            naive=bool(e.naive_depth))


def reset_peaks():
    with _engine.lock:
        _engine.peak_pending = _engine.pending
        _engine.peak_bytes = _engine.bytes


def set_limits(max_pending_ops: int | None = None, max_pending_bytes: int | None = None):
    """Set the bounds a producer is held to at push; returns the previous
    ``(max_pending_ops, max_pending_bytes)``."""
    prev = (_engine.max_pending, _engine.max_bytes)
    if max_pending_ops is not None:
        if int(max_pending_ops) < 1:
            raise ValueError("max_pending_ops must be >= 1, got %r" % (max_pending_ops,))
        _engine.max_pending = int(max_pending_ops)
    if max_pending_bytes is not None:
        if int(max_pending_bytes) < 1:
            raise ValueError("max_pending_bytes must be >= 1, got %r" % (max_pending_bytes,))
        _engine.max_bytes = int(max_pending_bytes)
    with _engine.lock:
        if _engine.cv_waiters:
            _engine._wake_room()    # raised bounds may let waiters go
    return prev


def is_naive() -> bool:
    return bool(_engine.naive_depth)


@contextlib.contextmanager
def naive():
    """Run every op synchronously at push (process-wide) inside the block,
    so a failing op raises at the line that pushed it."""
    _engine.wait_all()
    _engine.naive_depth += 1
    try:
        yield
    finally:
        _engine.naive_depth -= 1


def push(fn, reads=(), writes=(), name="custom", executor=None):
    """Push ``fn()`` to run after earlier ops on the vars it reads/writes.

    ``reads``/``writes`` are NDArrays (or Vars). Returns the ``Opr`` at once;
    ``fn``'s result is ``opr.result`` once ``opr.done``. With
    ``executor='async'`` ``fn`` returns an awaitable that runs on the engine loop.
    """
    rv = tuple(dict.fromkeys(_var_of(x) for x in reads))
    wv = tuple(dict.fromkeys(_var_of(x) for x in writes))
    rw = any(v in wv for v in rv)
    if rw:
        rv = tuple(v for v in rv if v not in wv)
    ex = None
    if executor == "async":
        ex = _async_executor()
    elif executor is not None:
        ex = executor
    return _engine.push(fn, rv, wv, name, executor=ex, rw=rw)


def _var_of(x):
    if isinstance(x, Var):
        return x
    st = getattr(x, "_st", None)
    if st is None:
        raise TypeError("engine.push takes NDArrays or Vars, got %s" % type(x).__name__)
    return st.var


_async_ex = None


def _async_executor():
    global _async_ex
    if _async_ex is None:
        from .loop import AsyncExecutor
        _async_ex = AsyncExecutor(_engine, engine_loop())
    return _async_ex
