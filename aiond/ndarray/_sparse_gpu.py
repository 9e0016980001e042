"""Sparse arrays on ``mx.gpu(i)``: their ops as host work ordered with the
device's. Imported on the first sparse op of a GPU context.

A ``row_sparse`` or ``csr`` array on a GPU context keeps its value (the
``RSP``/``CSR`` parts) in host memory, and its ops run the same numpy
kernels as on the CPU (aiond has no CUDA kernels for sparse storage). Such
an op is a CPU worker's op, never the pushing thread's: it makes the
device's compute stream wait for the events the executor keeps for its
dense device arrays, copies dense device inputs to the host through that
stream (a host synchronization, as the number of stored rows or elements is
data-dependent on any device), runs the kernel, and enqueues dense device
outputs on the same stream, marking their vars with an event there so the
device's later ops wait for it and not for the host. Sparse values, host
memory, are complete when the op ends.
"""
from __future__ import annotations

import numpy as np

from ..engine import gpu as _gpu
from ..ops import sparse as _sp
from . import _gpu as _ndgpu
from ._invoke import data_of

__all__ = ["host_op", "executor_for"]


def _on_gpu(h):
    return h._st.ctx.device_typeid == 2


def executor_for(*handles):
    """The GPU executor that runs an op over ``handles``: that of the first
    dense device array among them, else of the first GPU array."""
    dense = [h for h in handles if _on_gpu(h) and not h._sparse]
    for h in dense or [h for h in handles if _on_gpu(h)]:
        return _gpu.executor(h._st.ctx)
    return None


class Host:
    """Values of handles as host objects, and results back into handles,
    for one op launched on ``stream``."""
    __slots__ = ("cp", "stream")

    def __init__(self, cp, stream):
        self.cp, self.stream = cp, stream

    def value(self, h):
        """A numpy array (dense) or an RSP/CSR of host arrays (sparse)."""
        from ._sparse_invoke import value_of
        if h._sparse:
            return value_of(h)
        a = data_of(h)
        if isinstance(a, np.ndarray):
            return a
        return _ndgpu.to_host(self.cp, a, self.stream)     # waits for the device

    def store(self, h, v):
        """Make ``v`` (host) the value of ``h``."""
        from ._sparse_invoke import _store
        if h._sparse or not _on_gpu(h):
            _store(h, v)
            return
        if _sp.stype_of(v) != "default":
            v = _sp.to_dense(v, h._shape, h._dtype)
        with self.stream:       # a fresh buffer's home is this stream
            data_of(h)[...] = self.cp.asarray(np.ascontiguousarray(v, dtype=h._dtype))


def host_op(fn, reads, writes, ex):
    """The engine op (a plain callable, run by a CPU worker) running
    ``fn(host)`` after the device work on ``reads``/``writes`` (handles)."""
    cp = ex.cp
    rvars = [h._st.var for h in reads if _on_gpu(h) and not h._sparse]
    wvars = [h._st.var for h in writes if _on_gpu(h) and not h._sparse]

    def op():
        stream = ex.compute
        with ex.device:
            # on the device: the host reads below synchronize this stream
            ex.wait_for(stream, rvars, wvars)
            fn(Host(cp, stream))
            if not rvars and not wvars:
                return None
            ev = cp.cuda.Event(disable_timing=True)
            ev.record(stream)
        ex.record_done(stream, ev, rvars, wvars)    # this op holds the vars' grants
        return None
    return op
