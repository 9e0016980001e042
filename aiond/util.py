"""``mx.util``: NumPy-shape and NumPy-array semantics switches, and small helpers.

NumPy-shape semantics (``mx.np_shape``, ``set_np_shape``) decide what a shape
means: off (MXNet 1.x default), ``0`` in a shape marks an unknown dimension
and ``()`` an unknown shape; on, ``()`` is a scalar, ``0`` a zero-size
dimension and ``-1`` an unknown one. As in MXNet the flag is per thread
(``set_np_shape(True)``), or global for every thread (``set_np_shape(2)``).

NumPy-array semantics (``mx.np_array``, ``use_np``) make Gluon create
``mx.np.ndarray`` parameters instead of ``mx.nd.NDArray`` ones.
"""
from __future__ import annotations

import functools
import inspect
import logging
import os
import threading

from ._extras import install_hint

__all__ = ["set_np_shape", "is_np_shape", "np_shape", "use_np_shape", "np_array",
           "is_np_array", "use_np_array", "use_np", "set_np", "reset_np", "getenv", "setenv",
           "get_gpu_count", "get_gpu_memory", "set_module", "wrap_np_unary_func",
           "wrap_np_binary_func", "get_cuda_compute_capability"]

_shape_local = threading.local()
_shape_global = False        # set_np_shape(2): on for every thread
_logged = {"shape": False, "array": False}


def get_gpu_count() -> int:
    """Number of GPUs aiond can use (0 without CuPy or a device)."""
    from .context import num_gpus
    return num_gpus()


def get_gpu_memory(gpu_dev_id):
    """(free, total) bytes of GPU ``gpu_dev_id``."""
    from .context import gpu_memory_info
    return gpu_memory_info(gpu_dev_id)


def is_np_shape() -> bool:
    """Whether NumPy-shape semantics are on in this thread."""
    return _shape_global or getattr(_shape_local, "value", False)


def set_np_shape(active):
    """Turn NumPy-shape semantics on or off; returns the previous state.

    ``active`` is a bool for this thread, or ``2`` to turn them on for every
    thread (MXNet's GlobalOn); turning off clears both.
    """
    global _shape_global
    if active and not _logged["shape"]:
        logging.info("NumPy-shape semantics has been activated in your code. This is required "
                     "for creating and manipulating scalar and zero-size tensors.")
        _logged["shape"] = True
    elif not active and is_np_array():
        raise ValueError("Deactivating NumPy shape semantics while NumPy array semantics is "
                         "still active is not allowed. Please consider calling "
                         "`npx.reset_np()` to deactivate both of them.")
    prev = is_np_shape()
    if int(active) == 2:
        _shape_global = True
        _shape_local.value = True
    elif active:
        _shape_local.value = True
    else:
        _shape_global = False
        _shape_local.value = False
    return prev


class _NumpyShapeScope:
    """``with`` scope for NumPy-shape semantics; use :func:`np_shape`."""

    def __init__(self, is_np_shape):  # noqa: F811 - MXNet's argument name
        self._enter_is_np_shape = is_np_shape
        self._prev_is_np_shape = None

    def __enter__(self):
        if self._enter_is_np_shape is not None:
            self._prev_is_np_shape = set_np_shape(self._enter_is_np_shape)

    def __exit__(self, ptype, value, trace):
        if self._enter_is_np_shape is not None and \
                self._prev_is_np_shape != self._enter_is_np_shape:
            set_np_shape(self._prev_is_np_shape)


def np_shape(active=True):
    """A ``with`` scope with NumPy-shape semantics on (or off)."""
    return _NumpyShapeScope(active)


def _scoped(func, scope, name):
    if inspect.isclass(func):
        for attr, method in inspect.getmembers(
                func, predicate=lambda f: inspect.isfunction(f) or inspect.ismethod(f)
                or isinstance(f, property)):
            if isinstance(method, property):
                setattr(func, attr, property(_scoped(method.__get__, scope, name),
                                             method.__set__, method.__delattr__,
                                             method.__doc__))
            else:
                setattr(func, attr, _scoped(method, scope, name))
        return func
    if callable(func):
        @functools.wraps(func)
        def _with_scope(*args, **kwargs):
            with scope():
                return func(*args, **kwargs)
        return _with_scope
    raise TypeError("%s can only decorate classes and callable objects, while received a %s"
                    % (name, type(func)))


def use_np_shape(func):
    """Decorate a function or class so it runs with NumPy-shape semantics."""
    return _scoped(func, lambda: np_shape(True), "use_np_shape")


class _NumpyArrayScope:
    """``with`` scope for NumPy-array semantics; use :func:`np_array`."""
    _current = threading.local()

    def __init__(self, is_np_array):  # noqa: F811 - MXNet's argument name
        self._old_scope = None
        self._is_np_array = is_np_array

    def __enter__(self):
        if not hasattr(_NumpyArrayScope._current, "value"):
            _NumpyArrayScope._current.value = _NumpyArrayScope(False)
        self._old_scope = _NumpyArrayScope._current.value
        _NumpyArrayScope._current.value = self
        return self

    def __exit__(self, ptype, value, trace):
        assert self._old_scope
        _NumpyArrayScope._current.value = self._old_scope


def np_array(active=True):
    """A ``with`` scope with NumPy-array semantics on (or off)."""
    return _NumpyArrayScope(active)


def is_np_array() -> bool:
    """Whether NumPy-array semantics are on in this thread."""
    cur = getattr(_NumpyArrayScope._current, "value", None)
    return cur._is_np_array if cur is not None else False


def use_np_array(func):
    """Decorate a function or class so it runs with NumPy-array semantics."""
    return _scoped(func, lambda: np_array(True), "use_np_array")


def use_np(func):
    """Decorate a function or class with both NumPy-shape and NumPy-array semantics."""
    return use_np_shape(use_np_array(func))


def _set_np_array(active):
    if active and not _logged["array"]:
        logging.info("NumPy array semantics has been activated in your code.")
        _logged["array"] = True
    cur = is_np_array()
    _NumpyArrayScope._current.value = _NumpyArrayScope(active)
    return cur


def set_np(shape=True, array=True):
    """Turn NumPy semantics on: array semantics need shape semantics."""
    if not shape and array:
        raise ValueError("NumPy Shape semantics is required in using NumPy array semantics.")
    _set_np_array(array)
    set_np_shape(shape)


def reset_np():
    """Turn NumPy-shape and NumPy-array semantics off."""
    set_np(shape=False, array=False)


def set_module(module):
    """Decorator that sets ``__module__`` of a function or class."""
    def decorator(func):
        if module is not None:
            func.__module__ = module
        return func
    return decorator


_np_ufunc_default_kwargs = {"where": True, "casting": "same_kind", "order": "K",
                            "dtype": None, "subok": True}


def np_ufunc_legal_option(key, value):
    """Whether ``value`` is one NumPy accepts for ufunc keyword ``key`` (MXNet
    then says the option is not implemented rather than not understood)."""
    if key == "where":
        return True
    if key == "casting":
        return value in ("no", "equiv", "safe", "same_kind", "unsafe")
    if key == "order":
        return isinstance(value, str)
    if key == "dtype":
        import numpy as _onp
        return value in (_onp.int8, _onp.uint8, _onp.int32, _onp.int64, _onp.float16,
                         _onp.float32, _onp.float64, "int8", "uint8", "int32", "int64",
                         "float16", "float32", "float64")
    if key == "subok":
        return isinstance(value, bool)
    return False


def _np_ufunc_check(func_name, kwargs):
    """MXNet's check of NumPy ufunc keywords: only the defaults are implemented
    (NotImplementedError for another legal value, TypeError for an unknown
    keyword or a value NumPy itself would reject)."""
    for key, value in kwargs.items():
        if key not in _np_ufunc_default_kwargs:
            raise TypeError("{} is an invalid keyword to function '{}'".format(key, func_name))
        if value != _np_ufunc_default_kwargs[key]:
            if np_ufunc_legal_option(key, value):
                raise NotImplementedError("{}={} is not implemented yet for operator {}"
                                          .format(key, value, func_name))
            raise TypeError("{}={} not understood for operator {}".format(key, value, func_name))


def np_ufunc_legal_option(key, value):
    """Whether ``key=value`` is a NumPy ufunc keyword argument aiond's
    ``mx.np`` functions accept (``where``, ``casting``, ``order``, ``dtype``,
    ``subok`` with an allowed value), as MXNet's helper decides."""
    import numpy as _np
    if key == 'where':
        return True
    if key == 'casting':
        return value in {'no', 'equiv', 'safe', 'same_kind', 'unsafe'}
    if key == 'order':
        return isinstance(value, str)
    if key == 'dtype':
        return value in {_np.int8, _np.uint8, _np.int32, _np.int64, _np.float16, _np.float32,
                         _np.float64, 'int8', 'uint8', 'int32', 'int64', 'float16', 'float32',
                         'float64'}
    if key == 'subok':
        return isinstance(value, bool)
    return False


def wrap_np_unary_func(func):
    """Check NumPy ufunc keyword arguments of a unary function, then call it."""
    @functools.wraps(func)
    def _wrap(x, out=None, **kwargs):
        _np_ufunc_check(func.__name__, kwargs)
        return func(x, out=out)
    return _wrap


def wrap_np_binary_func(func):
    """Check NumPy ufunc keyword arguments of a binary function, then call it."""
    @functools.wraps(func)
    def _wrap(x1, x2, out=None, **kwargs):
        _np_ufunc_check(func.__name__, kwargs)
        return func(x1, x2, out=out)
    return _wrap


def get_cuda_compute_capability(ctx):
    """Compute capability of the GPU of ``ctx`` as an int (e.g. 80)."""
    if ctx.device_type != "gpu":
        raise ValueError("Expecting a gpu context to get cuda compute capability, "
                         "while received ctx {}".format(str(ctx)))
    try:
        import cupy
    except ImportError as e:
        raise RuntimeError("the compute capability of %s needs CuPy: %s"
                           % (ctx, install_hint("gpu"))) from e
    return int(cupy.cuda.Device(ctx.device_id).compute_capability)


def getenv(name):
    """The value of environment variable ``name`` (None if unset)."""
    return os.environ.get(name)


def setenv(name, value):
    """Set (or with ``None`` unset) environment variable ``name``."""
    if value is None:
        os.environ.pop(name, None)
    else:
        os.environ[name] = str(value)

from .base import py_str  # noqa: E402,F401  (MXNet names in mx.util)
from ._ctypes_helpers import c_str, check_call  # noqa: E402,F401
