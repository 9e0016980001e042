"""``mx.base``'s C API surface with aiond meanings: the handle types,
``_LIB``, ``check_call`` and the ctypes type names MXNet code imports.

aiond has no C library. ``_LIB`` is an object whose ``MX*`` functions are
Python functions taking and returning what MXNet's take and return (ctypes
strings, arrays and ``byref`` outputs, a 0/-1 status), for the functions
that have a meaning on aiond's objects: the symbol and graph-partitioning
calls MXNet's Python code and tests make (``aiond.symbol._c_api``) and a
few runtime calls (``aiond._c_api_runtime``: version, GPU count, seed,
waitall). A
``SymbolHandle`` is a ctypes pointer value naming a Symbol in a handle
table; ``Symbol(handle)`` and ``sym.handle`` convert both ways. Any other
``_LIB.MX*`` name raises an MXNetError saying aiond has no such function.
"""
from __future__ import annotations

import ctypes
import itertools
import threading
import weakref

from . import _ctypes_helpers as _ch
from .base import MXNetError, py_str

__all__ = ["SymbolHandle", "NDArrayHandle", "FunctionHandle", "OpHandle", "CachedOpHandle",
           "ExecutorHandle", "DataIterCreatorHandle", "DataIterHandle", "KVStoreHandle",
           "RecordIOHandle", "RtcHandle", "CudaModuleHandle", "CudaKernelHandle",
           "ProfileHandle", "DLPackHandle", "mx_uint", "mx_int", "mx_int64", "mx_float",
           "mx_float_p", "_LIB", "check_call", "c_str", "c_str_array", "c_array",
           "c_array_buf", "c_handle_array", "handle_for", "object_of", "release_handle"]

mx_uint = ctypes.c_uint
mx_int = ctypes.c_int
mx_int64 = ctypes.c_int64
mx_float = ctypes.c_float
mx_float_p = ctypes.POINTER(mx_float)

c_str = _ch.c_str
c_str_array = _ch.c_str_array
c_array = _ch.c_array
c_array_buf = _ch.c_array_buf
c_handle_array = _ch.c_handle_array


# ------------------------------------------------------------------ handles

_lock = threading.Lock()
_keys = itertools.count(0x10000, 0x10)
_table: dict = {}        # handle value -> object, or a weakref to it
_by_object: dict = {}    # id(object) -> handle value (weakly held objects)


def handle_for(obj, owned=False):
    """The handle value naming ``obj``. A handle ``owned`` by the table (an
    object the C API created) keeps ``obj`` alive until ``MX*Free``; other
    objects are held weakly and keep one handle while they live."""
    with _lock:
        if not owned:
            key = _by_object.get(id(obj))
            if key is not None:
                return key
        key = next(_keys)
        if owned:
            _table[key] = obj
        else:
            _table[key] = weakref.ref(obj)
            _by_object[id(obj)] = key
            weakref.finalize(obj, _forget, key, id(obj))
        return key


def _forget(key, oid):
    with _lock:
        _table.pop(key, None)
        if _by_object.get(oid) == key:
            del _by_object[oid]


def _value(handle):
    if isinstance(handle, ctypes._Pointer):
        raise MXNetError("expected a handle, got a pointer to one (pass the handle itself)")
    if hasattr(handle, "_obj"):             # ctypes.byref(h)
        handle = handle._obj
    if isinstance(handle, ctypes.c_void_p):
        return handle.value
    return handle


def object_of(handle, kind=None):
    """The object a handle names; MXNetError for a null, freed or unknown
    handle (or one naming an object that is not a ``kind``)."""
    key = _value(handle)
    if key is None:
        raise MXNetError("null handle (was it filled by the C API call?)")
    ref = _table.get(key)
    obj = ref() if isinstance(ref, weakref.ref) else ref
    if obj is None:
        raise MXNetError("handle 0x%x names no live aiond object (freed, or not made by aiond)"
                         % key)
    if kind is not None and not isinstance(obj, kind):
        raise MXNetError("handle 0x%x names a %s, not a %s"
                         % (key, type(obj).__name__, kind.__name__))
    return obj


def release_handle(handle):
    """Drop the table's hold on an owned handle (``MXSymbolFree``)."""
    key = _value(handle)
    with _lock:
        ref = _table.get(key)
        if ref is not None and not isinstance(ref, weakref.ref):
            del _table[key]


class SymbolHandle(ctypes.c_void_p):
    """MXNet's ``SymbolHandle``: a pointer-sized value naming a Symbol.
    ``Symbol(handle)`` reads the graph it names (its output entries). A
    handle a ``_LIB`` call filled owns its table entry: the entry goes when
    the handle object does (or at ``MXSymbolFree``), as the C library's
    symbol goes when MXNet's Python Symbol frees it."""

    def __del__(self):
        key = getattr(self, "_owned", None)
        if key is not None and key == self.value:
            release_handle(key)

    def __iter__(self):
        obj = object_of(self)
        if not hasattr(obj, "_outputs"):
            raise MXNetError("handle 0x%x names a %s, not a Symbol"
                             % (self.value, type(obj).__name__))
        return iter(obj._outputs)

    def __repr__(self):
        return "SymbolHandle(%s)" % (hex(self.value) if self.value else "NULL")


NDArrayHandle = ctypes.c_void_p
FunctionHandle = ctypes.c_void_p
OpHandle = ctypes.c_void_p
CachedOpHandle = ctypes.c_void_p
ExecutorHandle = ctypes.c_void_p
DataIterCreatorHandle = ctypes.c_void_p
DataIterHandle = ctypes.c_void_p
KVStoreHandle = ctypes.c_void_p
RecordIOHandle = ctypes.c_void_p
RtcHandle = ctypes.c_void_p
CudaModuleHandle = ctypes.c_void_p
CudaKernelHandle = ctypes.c_void_p
ProfileHandle = ctypes.c_void_p
DLPackHandle = ctypes.c_void_p


# ------------------------------------------------------------------ _LIB


class CAPIFunctionMissing(MXNetError, AttributeError):
    """``_LIB.<name>`` for a C function aiond has no meaning for."""


class _Lib:
    """MXNet's ``_LIB`` with aiond meanings (see the module docstring)."""

    def __init__(self):
        self._funcs = {}
        self._err = threading.local()

    def _register(self, name, fn):
        def call(*args):
            try:
                fn(*args)
            except Exception as e:  # noqa: BLE001 - the C API turns every failure into -1
                self._err.msg = "%s: %s" % (name, e) if not isinstance(e, MXNetError) \
                    else str(e)
                return -1
            return 0
        call.__name__ = name
        call.__doc__ = fn.__doc__
        self._funcs[name] = call

    def MXGetLastError(self):  # noqa: N802 - MXNet's name
        """The message of the last failed call on this thread (bytes, as a
        ``const char*`` restype gives)."""
        return getattr(self._err, "msg", "").encode("utf-8")

    def __getattr__(self, name):
        funcs = self.__dict__.get("_funcs")
        if funcs is not None and name in funcs:
            return funcs[name]
        if name.startswith("_"):
            raise AttributeError(name)
        if _providers:      # layers that register functions but have not loaded yet
            pending = list(_providers)
            del _providers[:]
            for load in pending:
                load()
            if name in self._funcs:
                return self._funcs[name]
        raise CAPIFunctionMissing(
            "aiond has no C library: _LIB.%s has no aiond meaning (aiond implements %s)"
            % (name, ", ".join(sorted(self._funcs))))

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._funcs))


_LIB = _Lib()
_providers = []


def add_provider(load):
    """``load()`` imports a higher layer's module that registers functions
    on ``_LIB``; it runs at the first lookup of a name not yet registered
    (so ``_LIB.MXSymbolCreateFromJSON`` works before ``mx.sym`` was used)."""
    _providers.append(load)


def check_call(ret):
    """Raise MXNetError with the last error message when a C API call
    returned a nonzero status."""
    if ret != 0:
        msg = py_str(_LIB.MXGetLastError())
        if msg:
            raise MXNetError(msg)
        _ch.check_call(ret)


# The functions themselves register on _LIB from their own layers: the
# symbol calls when aiond.symbol loads (symbol/_c_api.py), the runtime calls
# when the package does (_c_api_runtime).
