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


def _scalar_bools(key):
    """0-d boolean keys (``a[np.array(True)]``) act as NumPy's do: a new axis of
    length 1 (True) or 0 (False). Returns (key with them as None, any False)."""
    parts = key if isinstance(key, tuple) else (key,)
    if not any(_is_scalar_bool(k) for k in parts):
        return key, False
    out, false = [], False
    for k in parts:
        if _is_scalar_bool(k):
            false = false or not bool(k.item() if isinstance(k, (NDArray, _np.ndarray)) else k)
            out.append(None)
        else:
            out.append(k)
    return tuple(out), false


def _bool_lists(key):
    """Python lists of bools are boolean masks, as in NumPy."""
    def one(k):
        if isinstance(k, list) and k:
            a = _np.asarray(k)
            if a.dtype == _np.bool_:
                return a
        return k
    if isinstance(key, tuple):
        return tuple(one(k) for k in key)
    return one(key)


def _is_scalar_bool(k):
    if isinstance(k, (bool, _np.bool_)):
        return True
    return isinstance(k, (NDArray, _np.ndarray)) and k.ndim == 0 and k.dtype == _np.bool_


def getitem(arr, key):
    shape = arr.shape
    if isinstance(key, ndarray) and key.ndim == 0 and key.dtype.kind in "iu":
        key = int(key.item())
    key = _bool_lists(key)
    out_shape = _result_shape(shape, key)      # raises IndexError as numpy does
    key, false = _scalar_bools(key)
    if false:
        from .multiarray import empty
        return empty(out_shape, dtype=arr.dtype, ctx=arr.context)
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


def _drop_new_axes(arr, key, value):
    """``arr[key] = value`` for a basic key with None (new axes): the value
    broadcast to the selection NumPy sees, then viewed without those length-1
    axes, for the key without the Nones."""
    parts = key if isinstance(key, tuple) else (key,)
    plain = tuple(k for k in parts if k is not None)
    sel = _result_shape(arr.shape, parts)
    target = _result_shape(arr.shape, plain)
    if isinstance(value, NDArray):
        from .. import numpy as _mxnp
        value = _mxnp.broadcast_to(value.as_np_ndarray(), sel)
        value = _reshape(_as_np(value), target)
    elif not isinstance(value, (int, float, bool, _np.generic)):
        value = _np.broadcast_to(_np.asarray(value), sel).reshape(target)
    return plain, value


def setitem(arr, key, value):
    if isinstance(value, (list, tuple)):
        value = _np.array(value)
    key, false = _scalar_bools(_bool_lists(key))
    if false:
        _result_shape(arr.shape, key)   # raises IndexError as numpy does
        return
    parts = key if isinstance(key, tuple) else (key,)
    if arr.shape and any(k is None for k in parts) and _is_basic(key):
        key, value = _drop_new_axes(arr, key, value)
        if key == ():
            key = Ellipsis
    if not arr.shape:
        parts = key if isinstance(key, tuple) else (key,)
        # None (a new axis; a True mask becomes one) selects the one element too
        if any(p is not None and p not in (Ellipsis, slice(None)) for p in parts):
            raise IndexError("too many indices for array: array is 0-dimensional")
        if isinstance(value, NDArray) and value.size == 1 and value.shape:
            value = value.reshape(())
        elif isinstance(value, _np.ndarray) and value.size == 1:
            value = value.reshape(())
        _nd_idx.setitem(arr, (), value)
        return
    from ._bool_assign import assign
    if assign(arr, key, value):
        return
    if _bool_key(key):
        key = _as_index_key(key)
    if isinstance(key, tuple) and len(key) == 0:
        key = Ellipsis
    _result_shape(arr.shape, key)       # raises IndexError as numpy does
    _nd_idx.setitem(arr, key, value)
