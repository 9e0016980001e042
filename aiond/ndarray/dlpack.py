"""DLPack exchange (MXNet 1.9.1's ``to_dlpack_for_read``/``to_dlpack_for_write``
/``from_dlpack``): the capsule shares the NDArray's buffer, in host memory
or on a GPU (through CuPy).

``to_dlpack_for_read`` waits for pending writes, ``to_dlpack_for_write``
for pending reads and writes, as MXNet's WaitToRead/WaitToWrite do (for a
GPU array: until the device has run them); what the consumer does with the
buffer afterwards is outside the engine's ordering. ``from_dlpack`` of a
CUDA tensor gives an array on ``mx.gpu(i)``; a producer that takes a stream
(``__dlpack__(stream=...)``) is handed the device's compute stream to order
its pending work before aiond's.
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
    if data._st.ctx.device_typeid == 2:
        from . import _gpu
        opr = (_gpu.wait_to_write if write else _gpu.wait_to_read)(data)
    elif write:
        opr = _engine.push(None, (), (var,), "wait_to_write", 0, True, True)
    else:
        opr = _engine.push(None, (var,), (), "wait_to_read", 0, True)
    if not opr.done:
        _engine.wait_opr(opr, what)
    if opr.failure is not None:
        raise opr.failure.error(what)


def _capsule(data, write):
    if data._sparse:
        raise MXNetError("DLPack exchange of %s arrays is not supported: DLPack tensors are "
                         "dense; use tostype('default') first" % data.stype)
    _wait(data, write)
    a = data_of(data)
    if data._st.ctx.device_typeid == 2:
        _order_compute(data, write)
        legacy = getattr(a, "toDlpack", None)     # CuPy: a "dltensor" capsule, as MXNet's
        return legacy() if legacy is not None else a.__dlpack__()
    return a.__dlpack__()


def _order_compute(data, write):
    """Besides the host wait: put the device's compute stream after the
    array's device history too, so that an aiond array made from the capsule
    (whose work goes there) is ordered after it on the device as well."""
    from ..engine import gpu as _gpu_engine
    ex = _gpu_engine.executor(data._st.ctx)
    var = (data._st.var,)
    with ex.device:
        if write:
            ex.wait_for(ex.compute, writes=var)     # its last write and the reads since
        else:
            ex.wait_for(ex.compute, reads=var)      # its last write


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


_KDL_CUDA, _KDL_ROCM = 2, 10


def _from_gpu(dlpack, dev_id):
    from ..context import gpu
    from ..engine import gpu as _gpu_engine
    from . import _gpu
    ctx = gpu(dev_id)
    ex = _gpu_engine.executor(ctx)
    cp = ex.cp
    with ex.device, ex.compute:     # a producer taking a stream orders its work on ours
        try:
            if hasattr(dlpack, "__dlpack__"):
                a = cp.from_dlpack(dlpack)
            else:
                legacy = getattr(cp, "fromDlpack", None) or cp.from_dlpack
                a = legacy(dlpack)
        except (TypeError, RuntimeError, BufferError, ValueError) as e:
            raise MXNetError("from_dlpack: %s" % e) from None
    return _gpu.from_device_array(a, ctx, ex)


def _device_of(dlpack):
    dev = getattr(dlpack, "__dlpack_device__", None)
    if dev is None:
        return None
    try:
        return tuple(dev())
    except Exception:  # noqa: BLE001 - leave it to numpy's own error below
        return None


def from_dlpack(dlpack):
    """An NDArray sharing the memory of a DLPack capsule (or any object with
    ``__dlpack__``): on the CPU for a host tensor, on ``mx.gpu(i)`` for a
    CUDA tensor of device ``i``."""
    bare = not hasattr(dlpack, "__dlpack__")
    # a bare capsule names its device only inside its DLTensor
    dev = _capsule_device(dlpack) if bare else _device_of(dlpack)
    if dev is not None and dev[0] in (_KDL_CUDA, _KDL_ROCM):
        return _from_gpu(dlpack, int(dev[1]))
    src = _Capsule(dlpack) if bare else dlpack
    try:
        a = np.from_dlpack(src)
    except (TypeError, RuntimeError, BufferError, ValueError) as e:
        raise MXNetError("from_dlpack: %s" % e) from None
    from ..context import cpu
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    elif not a.flags.writeable and a.size:
        a = _writable(a)
    h = new_array(tuple(a.shape), a.dtype, cpu(0))
    h._st.set(a)
    return h


def _capsule_device(capsule):
    """(device type, id) of a bare "dltensor" capsule's DLTensor (DLPack's C
    layout: the data pointer, then DLDevice {int32 type, int32 id}); None
    when it is not one (numpy then says what is wrong with it)."""
    import ctypes
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    try:
        p = get(capsule, b"dltensor")
    except Exception:  # noqa: BLE001 - not a DLPack capsule, or one already used
        return None
    dev = (ctypes.c_int32 * 2).from_address(p + ctypes.sizeof(ctypes.c_void_p))
    return int(dev[0]), int(dev[1])
