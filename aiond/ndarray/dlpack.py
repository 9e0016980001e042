"""DLPack exchange (MXNet 1.9.1's ``to_dlpack_for_read``/``to_dlpack_for_write``
/``from_dlpack``) for CPU arrays: the capsule shares the NDArray's buffer.

``to_dlpack_for_read`` waits for pending writes, ``to_dlpack_for_write``
for pending reads and writes, as MXNet's WaitToRead/WaitToWrite do; what the
consumer does with the buffer afterwards is outside the engine's ordering.
"""
from __future__ import annotations

import numpy as np

from .. import engine as _engine_mod
from ..base import MXNetError
from ._invoke import data_of, new_array

__all__ = ["to_dlpack_for_read", "to_dlpack_for_write", "from_dlpack"]

_engine = _engine_mod.get()


def _wait(data, write):
    what = "to_dlpack_for_write()" if write else "to_dlpack_for_read()"
    _engine.check_blocking(what)
    var = data._st.var
    if write:
        opr = _engine.push(None, (), (var,), "wait_to_write", 0, True, True)
    else:
        opr = _engine.push(None, (var,), (), "wait_to_read", 0, True)
    if not opr.done:
        _engine.wait_opr(opr, what)
    if opr.failure is not None:
        raise opr.failure.error(what)


def _capsule(data, write):
    if data.context.device_type != "cpu":
        raise MXNetError("DLPack exchange of %s arrays is not supported yet" % data.context)
    _wait(data, write)
    return data_of(data).__dlpack__()


def to_dlpack_for_read(data):
    """A DLPack capsule of ``data``'s buffer, once its pending writes are done."""
    return _capsule(data, False)


def to_dlpack_for_write(data):
    """A DLPack capsule of ``data``'s buffer, once its pending reads and writes are done."""
    return _capsule(data, True)


class _Capsule:
    """Adapts a bare capsule to the ``__dlpack__`` protocol numpy consumes."""

    def __init__(self, capsule):
        self._capsule = capsule

    def __dlpack__(self, stream=None, **kwargs):
        return self._capsule

    def __dlpack_device__(self):
        return (1, 0)     # kDLCPU


def _writable(a):
    """A writable view of ``a``'s memory (numpy marks DLPack imports read-only;
    a DLPack tensor is the producer's buffer, which MXNet lets its consumer write)."""
    import ctypes
    buf = (ctypes.c_char * a.nbytes).from_address(a.__array_interface__["data"][0])
    buf._owner = a          # keeps the producer's tensor (and its deleter) alive
    return np.frombuffer(buf, dtype=a.dtype).reshape(a.shape)


def from_dlpack(dlpack):
    """An NDArray sharing the memory of a DLPack capsule (or any object with
    ``__dlpack__``) of a CPU tensor."""
    src = dlpack if hasattr(dlpack, "__dlpack__") else _Capsule(dlpack)
    try:
        a = np.from_dlpack(src)
    except (TypeError, RuntimeError, BufferError) as e:
        raise MXNetError("from_dlpack: %s" % e) from None
    from ..context import cpu
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    elif not a.flags.writeable and a.size:
        a = _writable(a)
    h = new_array(tuple(a.shape), a.dtype, cpu(0))
    h._st.set(a)
    return h
