"""GPU values of the synchronous distributed stores, staged through the host.

The baseline that works with any MPI (CUDA-aware or not): a key's values on
GPUs are first summed on the device of the first of them (as kvstore
'device' does), then copied into a host buffer, and the collective sums host
buffers; results go back to the values' own devices by host->device copies.

Every step is an ordinary engine op, so no thread ever waits on the device
as a whole: the device->host copy runs on the GPU's copy stream after a
``wait_event`` on the event of the array's producer, and is finished (its
host buffer readable by the collective) from a host callback on that stream
once the bytes are there. The communication thread only ever sees host
buffers, and is never blocked by a GPU. The host buffers are kept per key
and reused: the engine orders the next push's copy into one after the
collective that read it.
"""
from __future__ import annotations

from ..context import cpu

__all__ = ["is_gpu", "Stager"]

_GPU = 2


def is_gpu(a):
    return a._st.ctx.device_typeid == _GPU


def device_reduce(vals):
    """One array holding the sum of ``vals`` (all on GPUs), on the first
    one's device: the others are copied there (device to device) and the
    sum is one ``add_n`` kernel; a single value is returned as it is."""
    if len(vals) == 1:
        return vals[0]
    from ..ndarray import add_n
    ctx = vals[0].context
    return add_n(*[v.as_in_context(ctx) for v in vals])


class Stager:
    """The host buffers of one store, by (key, role)."""

    def __init__(self):
        self.bufs = {}
        self.copies = 0             # device->host stagings pushed (tests, profiling)

    def host(self, k, role, like):
        """The host buffer ``role`` of key ``k``, shaped like ``like``."""
        b = self.bufs.get((k, role))
        if b is None or b.shape != like.shape or b.dtype != like.dtype:
            from ..ndarray import empty
            b = self.bufs[(k, role)] = empty(like.shape, cpu(), dtype=like.dtype)
        return b

    def values(self, k, vals):
        """The host values the collective of key ``k`` reads for ``vals``:
        CPU values as they are, the GPU ones summed on a device and copied
        to one host buffer (``vals`` itself when none is on a GPU)."""
        on_gpu = [v for v in vals if is_gpu(v)]
        if not on_gpu:
            return vals
        staged = self.host(k, "in", on_gpu[0])
        device_reduce(on_gpu).copyto(staged)
        self.copies += 1
        return [staged] + [v for v in vals if not is_gpu(v)]

    def target(self, k, out):
        """Where the collective writes key ``k``'s result for ``out``: ``out``
        itself on the CPU, else a host buffer copied to it afterwards."""
        return self.host(k, "out", out) if is_gpu(out) else out


def copy_out(pairs):
    """``dst[...] = src`` for (src, dst) pairs, each an engine op on the
    destination's device (host->device copies for GPU destinations)."""
    for src, dst in pairs:
        if src is not dst:
            src.copyto(dst)
