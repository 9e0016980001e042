"""NumPy indexing for ``mx.np.ndarray``: the legacy NDArray machinery does the
work (views for contiguous basic keys, copies otherwise); this module gives
the result NumPy's shape (an integer index drops its axis, so ``a[0, 1]`` is
0-d) and adds boolean-mask indexing."""
from __future__ import annotations

import numpy as _np

from ..base import integer_types
from ..ndarray import _indexing as _nd_idx
from ..ndarray.ndarray import NDArray
from .multiarray import _as_np, _reshape, array, ndarray


def _host_key(key):
    """The key with mx arrays replaced by numpy ones (values fetched only for
    boolean masks), for computing the result shape with numpy."""
    def one(k):
        if isinstance(k, NDArray):
            if k.dtype == _np.bool_:
                return k.asnumpy()
            return _np.zeros(k.shape, dtype=_np.int64)
        return k
    if isinstance(key, tuple):
        return tuple(one(k) for k in key)
    return one(key)


def _bool_key(key):
    parts = key if isinstance(key, tuple) else (key,)
    return any((isinstance(k, NDArray) and k.dtype == _np.bool_) or
               (isinstance(k, _np.ndarray) and k.dtype == _np.bool_) for k in parts)


def _as_index_key(key):
    """Boolean masks -> integer index arrays (numpy's nonzero), so the legacy
    advanced-indexing path can take them."""
    parts = key if isinstance(key, tuple) else (key,)
    out = []
    for k in parts:
        if isinstance(k, NDArray) and k.dtype == _np.bool_:
            k = k.asnumpy()
        if isinstance(k, _np.ndarray) and k.dtype == _np.bool_:
            out.extend(array(i, dtype=_np.int64) for i in _np.nonzero(k))
        else:
            out.append(k)
    return tuple(out)


def _result_shape(shape, key):
    dummy = _np.broadcast_to(_np.empty((), _np.int8), shape)
    return dummy[_host_key(key)].shape


def getitem(arr, key):
    shape = arr.shape
    if isinstance(key, ndarray) and key.ndim == 0 and key.dtype.kind in "iu":
        key = int(key.item())
    out_shape = _result_shape(shape, key)      # raises IndexError as numpy does
    if not shape:
        return arr if out_shape == () else _reshape(arr, out_shape)
    if _bool_key(key):
        key = _as_index_key(key)
    if isinstance(key, tuple) and len(key) == 0:
        return arr
    if _np.prod(out_shape) == 0 and not _is_basic(key):
        from .multiarray import empty
        return empty(out_shape, dtype=arr.dtype, ctx=arr.context)
    res = _nd_idx.getitem(arr, key)
    if res.shape != out_shape:
        res = _reshape(_as_np(res), out_shape)
    return _as_np(res)


def _is_basic(key):
    parts = key if isinstance(key, tuple) else (key,)
    return all(k is None or k is Ellipsis or isinstance(k, (slice,) + integer_types)
               for k in parts)


def setitem(arr, key, value):
    if isinstance(value, (list, tuple)):
        value = _np.array(value)
    from ._bool_assign import assign
    if assign(arr, key, value):
        return
    if not arr.shape:
        parts = key if isinstance(key, tuple) else (key,)
        if any(p not in (Ellipsis, slice(None)) for p in parts):
            raise IndexError("too many indices for array: array is 0-dimensional")
        _nd_idx.setitem(arr, (), value)
        return
    if _bool_key(key):
        key = _as_index_key(key)
    if isinstance(key, tuple) and len(key) == 0:
        key = Ellipsis
    _result_shape(arr.shape, key)       # raises IndexError as numpy does
    _nd_idx.setitem(arr, key, value)
