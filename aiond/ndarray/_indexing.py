"""``NDArray.__getitem__``/``__setitem__`` with MXNet 1.9.1's rules.

Basic keys (ints, slices, None, Ellipsis) whose result is contiguous in
memory give a view sharing the base's storage and var; other basic keys give
a copy; advanced keys (lists, numpy arrays, NDArrays) follow numpy's
advanced indexing and give a copy. A scalar result has shape (1,).
"""
from __future__ import annotations

import math

import numpy as np

from ..base import ShapeError, integer_types, numeric_types
from ..engine import get as _get_engine
from ..engine.scheduler import CALLER
from ..ops.matrix import _axis_len, _axis_of, _index_shape
from ._invoke import INLINE_MAX, data_of, host_copy, invoke
from ._invoke import hooks as _hooks
from .ndarray import NDArray, _cached, _copy_into, _view

_engine = _get_engine()
_prod = math.prod


class IndexKeyError(IndexError, ValueError):
    """An index of an unsupported type: MXNet raises ValueError, numpy IndexError."""


_BOOL_MASK_MSG = ("boolean mask indexing is not supported by MXNet 1.x NDArrays (MXNet raises "
                  "'Cannot perform boolean indexing in legacy mode'); use integer indices, e.g. "
                  "mx.nd.array(np.nonzero(mask)[0]), or mx.nd.contrib.boolean_mask")


def _is_advanced(k):
    return isinstance(k, (list, tuple, np.ndarray, NDArray, range))


def _normalize_one(k):
    """One key component in MXNet 1.9.1's terms: bools are the ints 0/1, a
    numpy bool array is an array of 0/1 indices (not a mask), a tuple inside
    the key is a list, a 0-d NDArray is its int value."""
    if isinstance(k, (bool, np.bool_)):
        return int(k)
    if isinstance(k, tuple):
        return list(k)
    if isinstance(k, NDArray):
        if k.dtype is np.bool_:
            raise ValueError(_BOOL_MASK_MSG)
        if k.ndim == 0:
            return int(k.asscalar())
    elif isinstance(k, np.ndarray) and k.dtype == np.bool_:
        return k.astype(np.int64)
    return k


def _normalize(arr, key):
    if not isinstance(key, tuple):
        key = (key,)
    key = tuple(_normalize_one(k) for k in key)
    if any(_is_advanced(k) for k in key):
        return key, True
    for k in key:
        if not (k is None or k is Ellipsis or isinstance(k, (slice,) + integer_types)):
            raise IndexKeyError("NDArray does not support slicing with key %r of type %s; use "
                                "ints, slices, None, Ellipsis, lists, numpy arrays or NDArrays"
                                % (k, type(k).__name__))
    return key, False


def _expand_basic(shape, key):
    """Key -> (one slice or int per axis, positions of None) with Ellipsis
    expanded; raises IndexError as numpy does."""
    nreal = sum(1 for k in key if k is not None and k is not Ellipsis)
    if sum(1 for k in key if k is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if nreal > len(shape):
        raise IndexError("too many indices (%d) for array with %d dimensions" % (nreal, len(shape)))
    out = []
    for k in key:
        if k is Ellipsis:
            out.extend([slice(None)] * (len(shape) - nreal))
        else:
            out.append(k)
    if Ellipsis not in key:
        out.extend([slice(None)] * (len(shape) - nreal))
    real = [k for k in out if k is not None]
    for ax, (k, n) in enumerate(zip(real, shape)):
        if isinstance(k, integer_types) and not -n <= k < n:
            raise IndexError("index %d is out of bounds for axis %d with size %d" % (k, ax, n))
    return out, real


def _contiguous(real, shape):
    """MXNet's rule: from the right, once an axis is a proper subset the axes
    to its left must select at most one element. Returns the flat begin or None."""
    lens = []
    starts = []
    for k, n in zip(real, shape):
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            ln = len(range(start, stop, step))
            if ln > 1 and step != 1:
                return None
            lens.append(ln)
            starts.append(start if ln else 0)
        else:
            lens.append(1)
            starts.append(k % n)
    total = _prod(lens)
    subset = False
    if total > 1:
        for ln, n in zip(reversed(lens), reversed(shape)):
            if subset and ln > 1:
                return None
            if ln < n:
                subset = True
    off = 0
    stride = 1
    for st, n in zip(reversed(starts), reversed(shape)):
        off += st * stride
        stride *= n
    return off


def _basic_result_shape(shape, expanded):
    dummy = np.broadcast_to(np.empty((), np.int8), shape)
    return dummy[tuple(expanded)].shape


def getitem(arr, key):
    shape = arr._shape
    if not shape:
        if key == () or key is Ellipsis:
            return arr
        raise IndexError("too many indices for a 0-d array")
    key, advanced = _normalize(arr, key)
    if advanced:
        return _advanced_get(arr, key)
    expanded, real = _expand_basic(shape, key)
    out_shape = _basic_result_shape(shape, expanded)
    if not out_shape:
        out_shape = (1,)
    off = _contiguous(real, shape)
    if off is not None and (arr._ag is None or _hooks.record is None):
        return _view(arr, out_shape, (arr._off or 0) + off)
    # a copy (strided key, or a view of an array autograd is recording through)
    spec = _key_spec(expanded)
    res = invoke(_cached("_index"), [arr], {"key": spec})
    if res._shape != out_shape:
        res = res.reshape(out_shape)
    return res


def _key_spec(key, arrays=None):
    spec = []
    for k in key:
        if k is None:
            spec.append(("n",))
        elif k is Ellipsis:
            spec.append(("e",))
        elif isinstance(k, slice):
            spec.append(("s", k.start, k.stop, k.step))
        elif isinstance(k, integer_types):
            spec.append(("i", int(k)))
        else:
            spec.append(("a", arrays.index(k) if arrays is not None else 0))
    return tuple(spec)


def _index_arrays(arr, key):
    """Replace advanced components by NDArray inputs; returns (spec, inputs)."""
    inputs = []
    spec = []
    known = []
    for k in key:
        if k is None:
            spec.append(("n",))
        elif k is Ellipsis:
            spec.append(("e",))
        elif isinstance(k, slice):
            spec.append(("s", k.start, k.stop, k.step))
        elif isinstance(k, integer_types):
            spec.append(("i", int(k)))
        else:
            if isinstance(k, NDArray):
                if k.context is not arr.context:
                    k = k.as_in_context(arr.context)
                idx = k
            else:
                a = np.asarray(list(k) if isinstance(k, range) else k)
                if a.dtype.kind in "iub" or a.size == 0:
                    a = a.astype(np.int64)
                elif a.dtype.kind == "f":
                    a = a.astype(np.int64)      # MXNet truncates float indices
                else:
                    raise IndexKeyError("NDArray index of dtype %s is not supported" % a.dtype)
                known.append((len(inputs), a))
                idx = _from_np(a, arr.context)
            spec.append(("a", len(inputs)))
            inputs.append(idx)
    spec = tuple(spec)
    # values known now (lists, numpy arrays): out-of-range raises here, as for ints
    for i, a in known:
        n = _axis_len(arr._shape, spec, i)
        bad = a[(a < -n) | (a >= n)]
        if bad.size:
            raise IndexError("index %d is out of bounds for axis %d with size %d"
                             % (int(bad.flat[0]), _axis_of(arr._shape, spec, i), n))
    return spec, inputs


def _from_np(a, ctx):
    from .ndarray import array
    return array(a, ctx=ctx, dtype=a.dtype)


def _advanced_get(arr, key):
    if any(k is None for k in key):
        return _advanced_get_newaxes(arr, key)
    spec, idx = _index_arrays(arr, key)
    return invoke(_cached("_index"), [arr] + idx, {"key": spec})


def _adv_shape(k):
    if isinstance(k, integer_types):
        return (1,)             # MXNet turns an int into a 1-element index array
    if isinstance(k, NDArray):
        return k.shape
    return np.shape(list(k) if isinstance(k, range) else k)


def _advanced_get_newaxes(arr, key):
    """MXNet 1.9.1 gathers without the ``None`` entries, then inserts the new
    axes where ``_new_axes_after_advanced_indexing`` puts them: when the
    advanced indices are adjacent their result axes are not counted, so
    ``a[[0, 1], None]`` has shape (1, 2, ...) where numpy gives (2, 1, ...)."""
    shape = arr._shape
    nreal = sum(1 for k in key if k is not None and k is not Ellipsis)
    if nreal > len(shape):
        raise IndexError("too many indices (%d) for array with %d dimensions" % (nreal, len(shape)))
    full = []
    for k in key:
        if k is Ellipsis:
            full.extend([slice(None)] * (len(shape) - nreal))
        else:
            full.append(k)
    if not any(k is Ellipsis for k in key):
        full.extend([slice(None)] * (len(shape) - nreal))
    stripped = tuple(k for k in full if k is not None)
    res = _advanced_get(arr, stripped)
    block = _moved_block(full)
    if block is not None:
        # a None between the advanced indices makes them non-adjacent (MXNet and
        # numpy): their broadcast block goes first, though the gather kept it in place
        p, n = block
        order = list(range(p, p + n)) + [i for i in range(res.ndim) if not p <= i < p + n]
        if order != list(range(res.ndim)):
            res = invoke(_cached("transpose"), [res], {"axes": tuple(order)})
    final = list(res.shape)
    for ax in _new_axes(full):
        final.insert(ax, 1)
    return res.reshape(tuple(final))


def _full_key(shape, key):
    nreal = sum(1 for k in key if k is not None and k is not Ellipsis)
    if nreal > len(shape):
        raise IndexError("too many indices (%d) for array with %d dimensions" % (nreal, len(shape)))
    full = []
    for k in key:
        if k is Ellipsis:
            full.extend([slice(None)] * (len(shape) - nreal))
        else:
            full.append(k)
    if not any(k is Ellipsis for k in key):
        full.extend([slice(None)] * (len(shape) - nreal))
    return full


def _moved_block(full):
    """(position, ndim) of the advanced block in the gather of ``full``
    without its ``None`` entries, when those entries alone made the advanced
    indices non-adjacent (so the result puts the block first); else None."""
    stripped = [k for k in full if k is not None]
    adv_full = [i for i, k in enumerate(full) if _is_advanced(k) or isinstance(k, integer_types)]
    adv_st = [i for i, k in enumerate(stripped) if _is_advanced(k) or isinstance(k, integer_types)]
    if all(b - a == 1 for a, b in zip(adv_full, adv_full[1:])) or \
            any(b - a != 1 for a, b in zip(adv_st, adv_st[1:])):
        return None
    n = len(np.broadcast_shapes(*[_adv_shape(stripped[i]) for i in adv_st]))
    return adv_st[0], n


def _new_axes(full):
    """Where the ``None`` entries of an advanced key put their size-1 axes in
    the result (MXNet's ``_new_axes_after_advanced_indexing``)."""
    adv = [i for i, k in enumerate(full) if _is_advanced(k) or isinstance(k, integer_types)]
    adv_ndim = len(np.broadcast_shapes(*[_adv_shape(full[i]) for i in adv]))
    adjacent = all(b - a == 1 for a, b in zip(adv, adv[1:]))
    steps = [0 if adjacent else adv_ndim] + [0 if i in adv else 1 for i in range(len(full))]
    cum = np.cumsum(steps)
    return [int(cum[i]) for i, k in enumerate(full) if k is None]


# ------------------------------------------------------------------ setitem


_FULL = slice(None)


def setitem(arr, key, value):
    shape = arr._shape
    if type(key) is slice and key == _FULL and shape:
        return _set_whole(arr, value)      # `x[:] = v`, MXNet's most common write
    key, advanced = _normalize(arr, key)
    if advanced:
        return _advanced_set(arr, key, value)
    if not shape:
        if key not in ((), (Ellipsis,), (slice(None),)):
            raise IndexError("too many indices for a 0-d array")
        return _set_whole(arr, value)
    expanded, real = _expand_basic(shape, key)
    sel_shape = _basic_result_shape(shape, expanded)
    whole = all(isinstance(k, slice) and k.indices(n) == (0, n, 1)
                for k, n in zip(real, shape))
    if whole:
        return _set_whole(arr, value)
    off = _contiguous(real, shape)
    if off is not None and not (_hooks.record is not None and isinstance(value, NDArray)
                                and value._ag is not None):
        # (a value autograd tracks goes through _index_assign below, an op that
        # reads and writes arr, so recording rejects it as MXNet does)
        view = _view(arr, sel_shape or (1,), (arr._off or 0) + off)
        return _set_whole(view, value, partial=True)
    spec = _key_spec(expanded)
    if isinstance(value, numeric_types) and not isinstance(value, np.ndarray):
        invoke(_cached("_index_assign_scalar"), [arr], {"key": spec, "scalar": float(value)}, arr)
    else:
        v = _value_nd(value, arr, sel_shape)
        invoke(_cached("_index_assign"), [arr, v], {"key": spec}, arr)


def _value_nd(value, arr, target_shape):
    from .ndarray import array
    if isinstance(value, NDArray):
        v = value if value.context is arr.context else value.as_in_context(arr.context)
        if v._dtype != arr._dtype:
            v = v.astype(arr._dtype)
    else:
        v = array(_np_value(value), ctx=arr.context, dtype=arr._dtype)
    if v._shape != tuple(target_shape):
        try:
            np.broadcast_shapes(v._shape, tuple(target_shape))
        except ValueError:
            raise ShapeError("cannot assign a value of shape %s to a selection of shape %s"
                             % (v._shape, tuple(target_shape))) from None
    return v


def _set_whole(dst, value, partial=False):
    """dst[...] = value where dst is a whole array or a contiguous view."""
    shape = dst._shape
    if isinstance(value, NDArray):
        if value._st is dst._st and value._off == dst._off and value._shape == shape:
            return
        if value._shape != shape:
            value = _broadcast_value(value, shape)
        _copy_into(value, dst)
        return
    if isinstance(value, numeric_types) and not isinstance(value, np.ndarray):
        invoke(_cached("_full"), [], {"shape": shape, "dtype": dst._dtype,
                                      "value": float(value)}, dst, dst.context)
        return
    # numpy or array-like: copied before this returns, so later changes by
    # the caller don't leak in - straight into dst where dst is free now,
    # else into a copy of its own that the copy op reads when its turn comes
    try:
        src = _np_value(value)
        if src.shape == shape:
            if dst._st.ctx.device_typeid != 2 and src.dtype.kind in "biufc":
                # (numbers only: a value that cannot be cast raises here, below)
                def copy_now():
                    np.copyto(data_of(dst), src, casting="unsafe")
                if _engine.run_now(copy_now, (dst._st.var,), "_sync_copyfrom", src.nbytes,
                                   partial or dst._off is not None
                                   or dst._st.shape != shape) is not None:
                    return
            src = host_copy(src, dst._dtype)
        else:
            src = np.array(np.broadcast_to(src.reshape(_squeeze_to(src.shape, shape)), shape),
                           dtype=dst._dtype, copy=True)
    except ValueError:
        raise ShapeError("cannot assign a value of shape %s to an array (or selection) of "
                         "shape %s" % (np.shape(value), shape)) from None
    n = src.size
    rw = partial or dst._off is not None or dst._st.shape != shape
    if dst._st.ctx.device_typeid == 2:
        from ._gpu import copy_in as gpu_copy_in
        gpu_copy_in(dst, src, rw)
        return

    def copy_in():
        np.copyto(data_of(dst), src)
    # a copy never pushes or waits: a plain thread may run it when ready
    _engine.push(copy_in, (), (dst._st.var,), "_sync_copyfrom", src.nbytes,
                 True if n <= INLINE_MAX else CALLER, rw)


def _np_value(value):
    src = np.asarray(value)
    if src.dtype.kind in "USV":
        raise TypeError("NDArray does not support assignment with non-array-like object %r of "
                        "type %s" % (value, type(value).__name__))
    return src


def _squeeze_to(src_shape, shape):
    # allow extra leading 1s in the value (MXNet drops them)
    s = tuple(src_shape)
    while len(s) > len(shape) and s[0] == 1:
        s = s[1:]
    return s


def _broadcast_value(value, shape):
    vs = value._shape
    s = vs
    while len(s) > len(shape) and s[0] == 1:
        s = s[1:]
    if s != vs:
        value = value.reshape(s)
    try:
        np.broadcast_shapes(s, shape)
    except ValueError:
        raise ShapeError("cannot assign a value of shape %s to an array (or selection) of shape %s"
                         % (vs, shape)) from None
    return value.broadcast_to(shape)


def _advanced_set(arr, key, value):
    new_axes, block = (), None
    if any(k is None for k in key):
        full = _full_key(arr._shape, key)
        new_axes = _new_axes(full)
        block = _moved_block(full)
    key = tuple(k for k in key if k is not None)   # the value loses those axes instead
    spec, idx = _index_arrays(arr, key)
    if isinstance(value, numeric_types) and not isinstance(value, np.ndarray):
        invoke(_cached("_index_assign_scalar"), [arr] + idx, {"key": spec, "scalar": float(value)}, arr)
        return
    from .ndarray import array
    if isinstance(value, NDArray):
        v = value.as_in_context(arr.context)
        if v._dtype != arr._dtype:
            v = v.astype(arr._dtype)
    else:
        v = array(_np_value(value), ctx=arr.context, dtype=arr._dtype)
    sel = _index_shape(arr._shape, spec, [x._shape for x in idx])
    if new_axes and v.ndim > len(sel):
        # MXNet's _prepare_value_nd(squeeze_axes=new_axes): drop the axes None added
        drop = [ax for ax in new_axes if ax < v.ndim and v._shape[ax] == 1]
        v = v.reshape(tuple(d for i, d in enumerate(v._shape) if i not in drop))
    if block is not None and v.ndim == len(sel):
        p, n = block     # the value is in numpy's order: the advanced block first
        order = list(range(n, n + p)) + list(range(n)) + list(range(n + p, v.ndim))
        if order != list(range(v.ndim)):
            v = invoke(_cached("transpose"), [v], {"axes": tuple(order)})
    vs = _squeeze_to(v._shape, sel)
    try:
        np.broadcast_to(np.empty(vs, np.int8), sel)
    except ValueError:
        raise ShapeError("cannot assign a value of shape %s to a selection of shape %s"
                         % (v._shape, tuple(sel))) from None
    if vs != v._shape:
        v = v.reshape(vs)
    invoke(_cached("_index_assign"), [arr, v] + idx, {"key": spec}, arr)
