"""Errors raised by aiond, and a few helpers shared by every layer.

The exception tree::

    MXNetError (RuntimeError)          anything that went wrong inside aiond
     ├── EngineError                   misuse of the engine itself
     │    └── DeadlockError            a blocking wait on an engine thread
     └── OpError                       an op failed (at push or when it ran)
          └── ShapeError (also ValueError)   shapes that do not fit the op

``MXNetError`` keeps MXNet's name so ``except mx.base.MXNetError`` in MXNet
code keeps working. When an op fails while it runs, the error raised at the
read carries the original exception as ``__cause__``.
"""
from __future__ import annotations

__all__ = ["MXNetError", "EngineError", "DeadlockError", "OpError", "ShapeError",
           "NotImplementedForSymbol", "NotSupportedForSparseNDArray",
           "string_types", "numeric_types", "integer_types", "py_str", "mx_real_t"]

import numbers
import os

import numpy as _np


# MXNet's dtype codes (mshadow's type flags), as graph files write them in ``__dtype__``
DTYPE_NP_TO_MX = {_np.float32: 0, _np.float64: 1, _np.float16: 2, _np.uint8: 3, _np.int32: 4,
                  _np.int8: 5, _np.int64: 6, _np.bool_: 7, _np.int16: 8, _np.uint16: 9,
                  _np.uint32: 10, _np.uint64: 11}
DTYPE_MX_TO_NP = {v: k for k, v in DTYPE_NP_TO_MX.items()}


class MXNetError(RuntimeError):
    """Default error of aiond, named as in MXNet."""


class EngineError(MXNetError):
    """The engine was used in a way it cannot honour."""


class DeadlockError(EngineError):
    """A blocking wait was called where it could never return."""


class OpError(MXNetError):
    """An operator rejected its arguments or failed while running."""


class ShapeError(OpError, ValueError):
    """Input shapes do not fit the operator."""


class _UnsupportedFunction(MXNetError):
    """A function called on a kind of array it does not serve (MXNet's message)."""
    _where = ""

    def __init__(self, function, alias, *args):
        super().__init__()
        self.function = function.__name__ if callable(function) else str(function)
        self.alias = alias
        self.args = [str(type(a)) for a in args]

    def __str__(self):
        msg = 'Function {}'.format(self.function)
        if self.alias:
            msg += ' (namely operator "{}")'.format(self.alias)
        if self.args:
            msg += ' with arguments ({})'.format(', '.join(self.args))
        return msg + self._where


class NotImplementedForSymbol(_UnsupportedFunction):
    """An NDArray-only function was called on a Symbol."""
    _where = ' is not implemented for Symbol and only available in NDArray.'


class NotSupportedForSparseNDArray(_UnsupportedFunction):
    """A dense-only function was called on a sparse NDArray."""
    _where = ' is not supported for SparseNDArray and only available in NDArray.'


class _NullType:
    """MXNet's ``_Null``: an argument the caller did not give."""
    __slots__ = ()

    def __repr__(self):
        return "_Null"

    def __bool__(self):
        return False


_Null = _NullType()

mx_real_t = _np.float32
error_types = {}


def py_str(x):
    """bytes from the C API to str (MXNet's helper; aiond passes str through)."""
    return x.decode("utf-8") if isinstance(x, (bytes, bytearray)) else x


def data_dir_default():
    """Where MXNet keeps downloaded data: ``~/.mxnet`` (``%APPDATA%/mxnet`` on Windows)."""
    if os.name == "nt":
        return os.path.join(os.environ.get("APPDATA", "~"), "mxnet")
    return os.path.join(os.path.expanduser("~"), ".mxnet")


def data_dir():
    """``$MXNET_HOME`` or :func:`data_dir_default`."""
    return os.getenv("MXNET_HOME", data_dir_default())


def _as_list(obj):
    """A list (or tuple) as it is; anything else wrapped in a one-item list."""
    if isinstance(obj, (list, tuple)):
        return obj
    return [obj]


def register_error(func_name=None, cls=None):
    """Register an error class under a name (MXNet's decorator)."""
    if callable(func_name):
        cls = func_name
        func_name = cls.__name__

    def register(mycls):
        error_types[func_name or mycls.__name__] = mycls
        return mycls
    return register(cls) if cls is not None else register


def classproperty(func):
    """A read-only property of the class itself."""
    class _Desc:
        def __get__(self, obj, owner):
            return func(owner)
    return _Desc()


def with_metaclass(meta, *bases):
    """Create a base class with a metaclass (MXNet's py2/py3 helper)."""
    return meta("NewBase", bases, {})


string_types = (str,)
numeric_types = (float, int, _np.generic, numbers.Number)
integer_types = (int, _np.integer)


def ctypes2numpy_shared(cptr, shape):
    """A float32 numpy array of ``shape`` over the memory a ctypes float
    pointer points to (no copy), as MXNet's helper for C callbacks."""
    import ctypes
    if not isinstance(cptr, ctypes.POINTER(ctypes.c_float)):
        raise RuntimeError("expected float pointer")
    size = 1
    for s in shape:
        size *= s
    dbuffer = (ctypes.c_float * size).from_address(ctypes.addressof(cptr.contents))
    return _np.frombuffer(dbuffer, dtype=_np.float32).reshape(shape)


# MXNet's C API names (handle types, _LIB, check_call, ctypes helpers) with aiond meanings
from ._c_api import (_LIB, CachedOpHandle, CudaKernelHandle, CudaModuleHandle,  # noqa: E402,F401
                     DataIterCreatorHandle, DataIterHandle, DLPackHandle, ExecutorHandle,
                     FunctionHandle, KVStoreHandle, NDArrayHandle, OpHandle, ProfileHandle,
                     RecordIOHandle, RtcHandle, SymbolHandle, c_array, c_array_buf,
                     c_handle_array, c_str, c_str_array, check_call, mx_float, mx_float_p,
                     mx_int, mx_int64, mx_uint)
