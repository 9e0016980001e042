"""MXNet's ctypes helpers (``c_str``, ``c_array``, ``check_call`` ...), which
scripts and libraries written for MXNet 1.x import from ``mx.base``,
``mx.util``, ``mx.autograd`` and ``mx.executor``.

They build real ctypes objects, as MXNet's do, so code that packs strings or
numbers for a C call keeps working. aiond itself has no MXNet C library to
pass them to: its arrays' ``handle`` is a Python object, so
``c_handle_array`` gives an array of ``py_object`` for them, and
``check_call`` only turns a nonzero status (from a C library the caller
loaded itself) into an ``MXNetError``.
"""
from __future__ import annotations

import ctypes

from .base import MXNetError

__all__ = ["c_str", "c_str_array", "c_array", "c_array_buf", "c_handle_array", "check_call",
           "MXCallbackList"]


def c_str(string):
    """A ``ctypes.c_char_p`` of ``string`` encoded as UTF-8."""
    return ctypes.c_char_p(string.encode('utf-8'))


def c_str_array(strings):
    """A ``const char **`` (``ctypes.c_char_p * n``) of the UTF-8 strings."""
    arr = (ctypes.c_char_p * len(strings))()
    arr[:] = [s.encode('utf-8') for s in strings]
    return arr


def c_array(ctype, values):
    """A ctypes array of ``ctype`` holding ``values``."""
    out = (ctype * len(values))()
    out[:] = values
    return out


def c_array_buf(ctype, buf):
    """A ctypes array of ``ctype`` sharing the memory of ``buf`` (a writable
    buffer such as ``array.array``), without copying."""
    return (ctype * len(buf)).from_buffer(buf)


def c_handle_array(objs):
    """An array of the objects' ``handle``s: ``c_void_p`` when they are C
    pointers, else (aiond's arrays and symbols) ``py_object``."""
    handles = [o.handle for o in objs]
    if all(h is None or isinstance(h, (int, ctypes.c_void_p)) for h in handles):
        arr = (ctypes.c_void_p * len(handles))()
        arr[:] = [h.value if isinstance(h, ctypes.c_void_p) else h for h in handles]
        return arr
    return (ctypes.py_object * len(handles))(*handles)


def check_call(ret):
    """Raise ``MXNetError`` when a C call returned a nonzero status."""
    if ret != 0:
        raise MXNetError("a C API call returned the error status %r (aiond runs no MXNet C "
                         "library; the status came from a library the caller loaded)" % (ret,))


class MXCallbackList(ctypes.Structure):
    """MXNet's ``struct MXCallbackList``: ``num_callbacks`` C function
    pointers and their context pointers."""
    _fields_ = [
        ('num_callbacks', ctypes.c_int),
        ('callbacks', ctypes.POINTER(ctypes.CFUNCTYPE(ctypes.c_int))),
        ('contexts', ctypes.POINTER(ctypes.c_void_p)),
    ]
