"""Weights kept in the layout a primitive chose, between calls.

A convolution's weight is reordered into oneDNN's blocked layout before
each call; for inference the weight does not change between calls, and the
reorder costs as much as the late layers' convolution at batch 1. The copy
is kept here, keyed by the primitive and the weight's buffer, and served
only while the weight's engine variable is the same object at the same
version: every write the engine runs bumps the version (``engine/var.py``),
so a weight updated after a call is reordered again at its next call.

The version reaches a kernel through a per-thread table the executor sets
around an op's kernel (``scope``): the arrays it hands the kernel, each
with its variable. A kernel given an array not in the table (a view made
on the way, no executor around it) gets no stamp and reorders every call,
as before. Writes that bypass the engine (a numpy array shared zero-copy
and written through numpy) are not seen: such memory is not cached
safely by anyone, oneDNN's own users included.
"""
from __future__ import annotations

import collections
import threading

import numpy as np

CAPACITY = 256 << 20    # bytes of reordered weights kept (least recently used go first)

_local = threading.local()
_lock = threading.Lock()
_entries: "collections.OrderedDict" = collections.OrderedDict()
_bytes = [0]
_filling: dict = {}     # key -> the lock its fill holds
stats = {"hits": 0, "misses": 0}


class scope:
    """Within it, this thread's kernels find the variable of each of
    ``arrays`` (numpy arrays, by identity) in ``handles`` (the NDArray
    handles they came from, same order: ``h._st.var``; None: not kept).
    ``written``: handles the op writes; an input sharing their storage is
    not kept (its version moves only when the op ends). Nothing is looked
    at before a kernel asks (most ops never do)."""
    __slots__ = ("arrays", "handles", "written", "prev")

    def __init__(self, arrays, handles, written=()):
        self.arrays, self.handles, self.written = arrays, handles, written

    def __enter__(self):
        self.prev = getattr(_local, "cur", None)
        _local.cur = [self.arrays, self.handles, None, self.written]
        return self

    def __exit__(self, *exc):
        _local.cur = self.prev


def stamp(a):
    """(var, version) of numpy array ``a`` if the running executor handed it
    to this thread's kernel, else None."""
    cur = getattr(_local, "cur", None)
    if cur is None:
        return None
    index = cur[2]
    if index is None:       # built at the first question of the op
        index = cur[2] = {}
        written = {id(getattr(w, "_st", None)) for w in cur[3]}
        for x, h in zip(cur[0], cur[1]):
            st = getattr(h, "_st", None)
            var = getattr(st, "var", None)
            if var is not None and x is not None and id(st) not in written:
                index[id(x)] = (x, var)
    got = index.get(id(a))
    if got is None or got[0] is not a:
        return None
    var = got[1]
    return var, var.version


def get(key, st, nbytes, fill):
    """A 64-byte aligned float32 buffer of ``nbytes`` holding the reordered
    weight of ``key`` at stamp ``st`` = (var, version); ``fill(buf)`` makes
    it on a miss."""
    buf = _hit(key, st)
    if buf is not None:
        return buf
    # the ranges of one split op miss together: one fills, the others wait
    # for it and hit (a copy each would be fresh memory on every step)
    with _lock:
        gate = _filling.get(key)
        if gate is None:
            gate = _filling[key] = threading.Lock()
    with gate:
        buf = _hit(key, st)
        if buf is not None:
            return buf
        stats["misses"] += 1
        var, version = st
        # a weight updated since (a training step) is reordered into the
        # buffer its entry had: fresh memory of several MB a step costs page
        # faults. No op still reads that copy: the update that moved the
        # version waited for them
        with _lock:
            old = _entries.pop(key, None)
            if old is not None:
                _bytes[0] -= old[2].nbytes
        if old is not None and old[2].nbytes == nbytes:
            buf = old[2]
        else:
            raw = np.empty(nbytes + 64, np.uint8)
            off = (-raw.ctypes.data) % 64
            buf = raw[off:off + nbytes]
        fill(buf)
        with _lock:
            # the entry holds the variable itself: its id cannot be reused
            # while the entry lives, so ``is`` never confuses two variables
            _entries[key] = (var, version, buf)
            _bytes[0] += buf.nbytes
            while _bytes[0] > CAPACITY and len(_entries) > 1:
                k, e = _entries.popitem(last=False)
                _bytes[0] -= e[2].nbytes
                _filling.pop(k, None)
    return buf


def _hit(key, st):
    e = _entries.get(key)
    if e is not None and e[0] is st[0] and e[1] == st[1]:
        stats["hits"] += 1
        with _lock:
            if key in _entries:
                _entries.move_to_end(key)
        return e[2]
    return None


def clear():
    with _lock:
        _entries.clear()
        _filling.clear()
        _bytes[0] = 0
