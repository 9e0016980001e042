"""Storage buffers and the pool that reuses them.

A ``Storage`` is one buffer plus its engine ``Var``; NDArray views share it.
The buffer is allocated when a kernel first touches it, not at push, so a
producer that runs ahead of the engine holds no memory for outputs not yet
computed. Buffers of 64 KiB and more come from a size-class pool: the page
faults of a fresh 4 MB buffer cost more than the add that fills it.
"""
from __future__ import annotations

import os
import sys
import threading

import numpy as np

from .. import context as _context
from .var import Var

__all__ = ["Storage", "BufferPool", "pool"]

MIN_POOLED = 1 << 16


def _size_class(nbytes: int) -> int:
    """Round up to 4 classes per power of two (at most 25 % slack)."""
    if nbytes <= MIN_POOLED:
        return MIN_POOLED
    top = 1 << (nbytes - 1).bit_length()
    quarter = top >> 3          # classes: top/2 * (1, 1.25, 1.5, 1.75), top
    base = top >> 1
    k = -(-(nbytes - base) // quarter)
    return base + k * quarter


class BufferPool:
    """Free host buffers by size class, capped at ``max_bytes`` cached."""

    def __init__(self, max_bytes: int):
        self.max_bytes = max_bytes
        self.cached_bytes = 0
        self.hits = 0
        self.misses = 0
        self._free: dict = {}
        self._lock = threading.Lock()

    def take(self, nbytes: int) -> np.ndarray:
        size = _size_class(nbytes)
        with self._lock:
            lst = self._free.get(size)
            if lst:
                self.cached_bytes -= size
                self.hits += 1
                return lst.pop()
            self.misses += 1
        return np.empty(size, dtype=np.uint8)

    def give(self, buf: np.ndarray):
        size = buf.nbytes
        with self._lock:
            if self.cached_bytes + size > self.max_bytes:
                return
            self._free.setdefault(size, []).append(buf)
            self.cached_bytes += size

    def clear(self):
        with self._lock:
            self._free.clear()
            self.cached_bytes = 0


pool = BufferPool(int(float(os.environ.get("AIOND_POOL_BYTES", 1 << 29))))
_context.on_empty_cache(pool.clear)   # Context.empty_cache on a CPU

# mem_hook(ctx, delta_bytes): set by mx.profiler while it records memory
mem_hook = None


class Storage:
    """A (lazily allocated) host buffer of ``shape``/``dtype`` and its Var."""
    __slots__ = ("arr", "var", "ctx", "shape", "dtype", "pooled", "counted", "__weakref__")

    def __init__(self, shape, dtype, ctx):
        self.arr = None
        self.var = Var()
        self.ctx = ctx
        self.shape = shape
        self.dtype = dtype
        self.pooled = False
        self.counted = 0            # bytes reported to mem_hook

    def get(self) -> np.ndarray:
        """The buffer as a ``shape``-shaped array, allocated on first use."""
        a = self.arr
        if a is None:
            a = self._alloc()
        return a

    def _alloc(self):
        dt = self.dtype
        n = 1
        for d in self.shape:
            n *= d
        nbytes = n * dt.itemsize
        if nbytes < MIN_POOLED:
            a = np.empty(self.shape, dtype=dt)
        else:
            buf = pool.take(nbytes)
            a = buf[:nbytes].view(dt).reshape(self.shape)
            self.pooled = True
        # two racing readers of a never-written buffer may both allocate; the
        # first to store wins and the content is undefined either way
        cur = self.arr
        if cur is not None:
            return cur
        self.arr = a
        self.var.nbytes = nbytes
        h = mem_hook
        if h is not None:
            self.counted = nbytes
            h(self.ctx, nbytes)
        return a

    def set(self, a: np.ndarray):
        """Adopt ``a`` (already ``shape``/``dtype``) as the buffer."""
        self.arr = a
        self.pooled = False
        self.var.nbytes = a.nbytes

    def __del__(self):
        if self.counted:
            h = mem_hook
            if h is not None:
                h(self.ctx, -self.counted)
        if self.pooled:
            a = self.arr
            if a is None:
                return
            buf = a.base
            self.arr = None
            del a
            # refs now: ``buf`` here and getrefcount's argument; any more
            # means a view escaped, and the buffer must not be reused
            if buf is not None and sys.getrefcount(buf) <= 2:
                pool.give(buf)
