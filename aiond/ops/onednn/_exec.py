"""Running a primitive on numpy buffers: user arrays are wrapped zero-copy;
where the primitive chose another layout, the input is reordered into a
per-thread scratch buffer first and the output reordered back after."""
from __future__ import annotations

import threading

import numpy as np

from . import _lib as L, _wcache

_local = threading.local()
_KEEP = 64 << 20


def scratch(slot, nbytes):
    """A 64-byte aligned float32 buffer of at least ``nbytes`` (this thread's,
    reused across calls)."""
    bufs = getattr(_local, "bufs", None)
    if bufs is None:
        bufs = _local.bufs = {}
    b = bufs.get(slot)
    if b is None or b.nbytes < nbytes + 64:
        b = np.empty(max(nbytes, 1 << 12) + 64, np.uint8)
        if nbytes <= _KEEP:
            bufs[slot] = b
    off = (-b.ctypes.data) % 64
    return b[off:off + nbytes]


def _pad_md(prim):
    """(descriptor, bytes) of ``prim``'s scratchpad, or None if it needs none."""
    md = prim.md(L.Q_SCRATCHPAD)
    if md is None:
        return None
    size = md.size()
    return (md, size) if size else None


class Io:
    """One argument of a primitive: its user layout, the layout the
    primitive chose, and the reorder between them (None if equal)."""
    __slots__ = ("arg", "user", "inner", "reorder", "size", "out", "pad")

    def __init__(self, prim, arg, query, user, out=False):
        self.arg, self.user, self.out = arg, user, out
        inner = prim.md(query)
        self.pad = None
        if inner is None or inner == user:
            self.inner, self.reorder, self.size = None, None, 0
            return
        self.inner = inner
        self.size = inner.size()
        self.reorder = L.reorder(inner, user) if out else L.reorder(user, inner)
        if self.reorder is None:
            raise L.OneDNNError("no reorder between layouts")
        self.pad = _pad_md(self.reorder)

    def move(self, src, dst, keep):
        args = [(L.A_SRC, src), (L.A_DST, dst)]
        if self.pad is not None:
            buf = scratch("reorder-pad", self.pad[1])
            m = L.Memory(self.pad[0], buf.ctypes.data)
            keep += (buf, m)
            args.append((L.A_SCRATCHPAD, m))
        self.reorder.execute(args)


class Vec:
    """A per-channel vector argument (bias, statistics): always plain, as
    the user's, so never reordered."""
    __slots__ = ("arg", "user", "inner", "reorder", "size", "out", "pad")

    def __init__(self, arg, n, out=False):
        self.arg, self.user, self.out = arg, L.MD.plain((n,)), out
        self.inner = self.reorder = self.pad = None
        self.size = 0


class Call:
    """A built primitive and how each of its arguments meets user memory.

    ``extra``: (arg, query) memories the primitive needs beyond the user's
    (workspace): per-thread scratch."""
    __slots__ = ("prim", "ios", "extra")

    def __init__(self, prim, ios, extra=()):
        self.prim, self.ios = prim, ios
        self.extra = [(arg, md, md.size()) for arg, md in
                      ((a, prim.md(q)) for a, q in tuple(extra) + ((L.A_SCRATCHPAD,
                                                                    L.Q_SCRATCHPAD),))
                      if md is not None and md.size()]

    def run(self, arrays, kept=None):
        """``arrays``: {DNNL_ARG: numpy array in its user layout}.

        ``kept``: (arg, key, stamp) of an input whose reordered copy may be
        kept between calls (``_wcache``: a weight, by its variable's version)."""
        args, post = [], []
        keep = []
        for io in self.ios:
            a = arrays[io.arg]
            um = L.Memory(io.user, a.ctypes.data)
            keep.append(um)
            if io.reorder is None:
                args.append((io.arg, um))
                continue
            if kept is not None and kept[0] == io.arg and not io.out:
                def fill(buf, io=io, um=um):
                    io.move(um, L.Memory(io.inner, buf.ctypes.data), keep)
                buf = _wcache.get((kept[1], a.ctypes.data), kept[2], io.size, fill)
                im = L.Memory(io.inner, buf.ctypes.data)
                keep += (buf, im)
                args.append((io.arg, im))
                continue
            buf = scratch(io.arg, io.size)
            im = L.Memory(io.inner, buf.ctypes.data)
            keep += (buf, im)       # a buffer too big to keep in scratch lives until the end
            if io.out:
                post.append((io, im, um))
            else:
                io.move(um, im, keep)
            args.append((io.arg, im))
        for arg, md, size in self.extra:
            buf = scratch(arg, size)
            m = L.Memory(md, buf.ctypes.data)
            keep += (buf, m)
            args.append((arg, m))
        self.prim.execute(args)
        for io, im, um in post:
            io.move(im, um, keep)
