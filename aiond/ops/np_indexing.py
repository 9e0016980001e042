"""NumPy-interface ops that pick elements by condition or index (MXNet's
``_npi_*`` names): where (and its scalar forms), take, take_along_axis,
insert and delete. Like the shape ops of np_shape.py each is a selection op
(``np_select``): one indexing function gives the kernel and, run on element
positions, the gradient."""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._rules import broadcast_shapes, fmt, norm_axis
from .np_ops import promote
from .np_select import opt_int as _opt_int
from .np_select import select_op
from .registry import Param, p_float, register

_I64 = np.dtype(np.int64)


# ------------------------------------------------------------ where
def _where_rule(attrs, shapes, dtypes):
    s = broadcast_shapes(broadcast_shapes(tuple(shapes[0]), tuple(shapes[1])), tuple(shapes[2]))
    return (s,), (promote(dtypes[1], dtypes[2]),)


def _where(xp, c, x, y, fill=None):
    if x.dtype != y.dtype and x.dtype != _I64:
        d = promote(x.dtype, y.dtype)
        x, y = x.astype(d), y.astype(d)
    return xp.where(c != 0, x, y)


select_op("_npi_where", _where, _where_rule, inputs=("condition", "x", "y"),
          diff=lambda n, at: (1, 2), doc="_npi_where(condition, x, y): x where condition, else y.")


def _where_s_rule(attrs, shapes, dtypes):
    return (broadcast_shapes(tuple(shapes[0]), tuple(shapes[1])),), (dtypes[1],)


def _where_lscalar(xp, c, y, fill=None, scalar=0.0):
    s = np.asarray(scalar if fill is None else fill).astype(y.dtype)
    return xp.where(c != 0, s, y)


def _where_rscalar(xp, c, x, fill=None, scalar=0.0):
    s = np.asarray(scalar if fill is None else fill).astype(x.dtype)
    return xp.where(c != 0, x, s)


select_op("_npi_where_lscalar", _where_lscalar, _where_s_rule, [Param("scalar", p_float, 0.0)],
          inputs=("condition", "y"), diff=lambda n, at: (1,),
          doc="_npi_where_lscalar(condition, y, scalar): scalar where condition, else y.")
select_op("_npi_where_rscalar", _where_rscalar, _where_s_rule, [Param("scalar", p_float, 0.0)],
          inputs=("condition", "x"), diff=lambda n, at: (1,),
          doc="_npi_where_rscalar(condition, x, scalar): x where condition, else scalar.")


@register("_npi_where_scalar2", inputs=("condition",),
          params=[Param("x", p_float, 0.0), Param("y", p_float, 0.0)],
          infer=lambda at, s, d: ((tuple(s[0]),), (np.dtype(np.float32),)),
          grad=lambda F, at, ins, outs, og: [None])
def _npi_where_scalar2(xp, condition, out, x=0.0, y=0.0):
    """_npi_where_scalar2(condition, x, y): scalar x where condition, else scalar y."""
    out[...] = xp.where(condition != 0, out.dtype.type(x), out.dtype.type(y))


# ------------------------------------------------------------ take
def _take_rule(attrs, shapes, dtypes):
    s, i = tuple(shapes[0]), tuple(shapes[1])
    if dtypes[1].kind not in "iubf":
        raise OpError("indices must be numbers, got %s" % dtypes[1])
    ax = attrs["axis"]
    if ax is None:
        return (i,), (dtypes[0],)
    s = s or (1,)       # NumPy takes from a 0-d array as from its flattened (1,)
    ax = norm_axis(ax, len(s))
    if s[ax] == 0 and i and int(np.prod(i)):
        raise OpError("cannot do a non-empty take from an empty axes.")
    return (s[:ax] + i + s[ax + 1:],), (dtypes[0],)


def _take(xp, a, idx, fill=None, axis=0, mode="clip"):
    if axis is None or a.ndim == 0:
        a, axis = xp.reshape(a, (-1,)), 0
    n = a.shape[axis]
    idx = idx.astype(np.int64)      # float indices truncate, as MXNet's take does
    if mode == "wrap":
        idx = idx % n if n else idx
    elif mode == "raise":
        if idx.size and n and (int(idx.max()) >= n or int(idx.min()) < -n):
            raise IndexError("index out of bounds for axis %d with size %d" % (axis, n))
        idx = idx % n if n else idx
    else:
        idx = xp.clip(idx, 0, n - 1)
    return xp.take(a, idx, axis=axis)


select_op("_npi_take", _take, _take_rule,
          [Param("axis", _opt_int, 0), Param("mode", str, "clip",
                                            choices=("clip", "wrap", "raise"))],
          inputs=("a", "indices"), diff=lambda n, at: (0,),
          doc="_npi_take(a, indices, axis, mode): elements of a at indices along axis.")


# ------------------------------------------------------------ insert, delete
def _delete_positions(n, start, stop, step, int_ind, idx):
    if int_ind is not None or (idx is not None and np.ndim(idx) == 0):
        i = int(int_ind if idx is None else idx)
        if not -n <= i < n:
            raise IndexError("index %d is out of bounds for axis with size %d" % (i, n))
        return np.array([i % n], dtype=np.int64)
    if idx is not None:
        # MXNet ignores indices outside [0, n), negative ones included
        pos = np.asarray(idx, dtype=np.int64).reshape(-1)
        return np.unique(pos[(pos >= 0) & (pos < n)])
    return np.unique(np.arange(*slice(start, stop, step).indices(n), dtype=np.int64))


def _delete_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    ax = attrs["axis"]
    if ax is None:
        s = (int(np.prod(s)) if s else 1,)
        ax = 0
    ax = norm_axis(ax, len(s))
    if len(shapes) > 1:
        cnt = attrs.get("_count")
        if cnt is None:
            raise OpError("_npi_delete: the result's shape depends on the values of obj; "
                          "call np.delete with obj computed")
        return (s[:ax] + (s[ax] - cnt,) + s[ax + 1:],), (dtypes[0],)
    pos = _delete_positions(s[ax], attrs["start"], attrs["stop"], attrs["step"],
                            attrs["int_ind"], None)
    return (s[:ax] + (s[ax] - len(pos),) + s[ax + 1:],), (dtypes[0],)


def _delete(xp, a, *obj, fill=None, start=None, stop=None, step=None, int_ind=None, axis=None,
            _count=None):
    if axis is None:
        a, axis = xp.reshape(a, (-1,)), 0
    n = a.shape[axis]
    idx = None
    if obj:
        idx = obj[0]
        idx = idx.get() if hasattr(idx, "get") else np.asarray(idx)
    pos = _delete_positions(n, start, stop, step, int_ind, idx)
    keep = np.ones(n, dtype=bool)
    keep[pos] = False
    return xp.take(a, xp.asarray(np.nonzero(keep)[0]), axis=axis)


_SLICE = [Param("start", _opt_int, None), Param("stop", _opt_int, None),
          Param("step", _opt_int, None), Param("int_ind", _opt_int, None),
          Param("axis", _opt_int, None)]
select_op("_npi_delete", _delete, _delete_rule, _SLICE, inputs=("arr", "*obj"), variadic=True,
          diff=lambda n, at: (0,), doc="_npi_delete(arr, [obj], start, stop, step, int_ind, axis): "
          "arr without the sub-arrays obj names along axis.")


def delete_count(shape, axis, idx):
    """How many positions ``idx`` (a host array) deletes from ``shape``'s axis."""
    n = (int(np.prod(shape)) if shape else 1) if axis is None else shape[norm_axis(axis,
                                                                                    len(shape))]
    return len(_delete_positions(n, None, None, None, None, idx))


def _insert_args(rest, val):
    """(values, obj) among an insert's extra inputs: values unless ``val``, then obj."""
    rest = list(rest)
    values = rest.pop(0) if val is None and rest else None
    return values, (rest[0] if rest else None)


def _insert_count(nd, axis, vshape, obj_shape, attrs, n):
    """How many slices an insert adds along ``axis`` (NumPy's rule)."""
    scalar = attrs["int_ind"] is not None or (obj_shape is not None and len(obj_shape) == 0)
    if scalar:
        v = (1,) * max(0, nd - len(vshape)) + tuple(vshape)
        return v[0] if v else 1
    m = (int(np.prod(obj_shape)) if obj_shape else 1) if obj_shape is not None else \
        len(range(*slice(attrs["start"], attrs["stop"], attrs["step"]).indices(n)))
    if m == 1:
        # NumPy: one index inserts values (at least nd-dimensional) whole
        v = (1,) * max(0, nd - len(vshape)) + tuple(vshape)
        return v[axis]
    return m


def _insert_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    ax = attrs["axis"]
    if ax is None:
        s, ax = (int(np.prod(s)) if s else 1,), 0
    ax = norm_axis(ax, len(s))
    if attrs["int_ind"] is not None and not -s[ax] <= attrs["int_ind"] <= s[ax]:
        raise IndexError("index %d is out of bounds for axis %d with size %d"
                         % (attrs["int_ind"], ax, s[ax]))
    vs, obj = _insert_args([tuple(x) for x in shapes[1:]], attrs["val"])
    k = _insert_count(len(s), ax, () if vs is None else vs, obj, attrs, s[ax])
    return (s[:ax] + (s[ax] + k,) + s[ax + 1:],), (dtypes[0],)


def _insert(xp, a, *rest, fill=None, val=None, start=None, stop=None, step=None,
            int_ind=None, axis=None):
    if axis is None:
        a, axis = xp.reshape(a, (-1,)), 0
    axis = norm_axis(axis, a.ndim)
    nd, n = a.ndim, a.shape[axis]
    values, idx = _insert_args(rest, val)
    if idx is not None:
        idx = (idx.get() if hasattr(idx, "get") else np.asarray(idx)).astype(np.int64)
    if values is None:
        values = xp.asarray(np.asarray(val if fill is None else fill).astype(a.dtype))
    elif fill is None and values.dtype != a.dtype:
        values = values.astype(a.dtype)
    if xp is np:
        # on the host NumPy's own insert is this rule (and quicker than the steps below)
        obj = int_ind if idx is None and int_ind is not None else \
            slice(start, stop, step) if idx is None else idx
        if not -n <= (obj if isinstance(obj, int) else 0) <= n:
            raise IndexError("index %d is out of bounds for axis %d with size %d" % (obj, axis, n))
        return np.insert(a, obj, values, axis=axis)
    shape = list(a.shape)
    if int_ind is not None or (idx is not None and idx.ndim == 0):
        i = int(int_ind if idx is None else idx)
        if not -n <= i <= n:
            raise IndexError("index %d is out of bounds for axis %d with size %d" % (i, axis, n))
        i = i + n if i < 0 else i
        v = xp.reshape(values, (1,) * max(0, nd - values.ndim) + values.shape)
        v = xp.moveaxis(v, 0, axis)
        k = v.shape[axis]
        pos = np.arange(i, i + k)
    else:
        pos = idx.reshape(-1) if idx is not None else \
            np.arange(*slice(start, stop, step).indices(n), dtype=np.int64)
        if ((pos < -n) | (pos > n)).any():
            raise IndexError("index out of bounds for axis %d with size %d" % (axis, n))
        pos = np.where(pos < 0, pos + n, pos)
        k = len(pos)
        v = values
        if k == 1:
            v = xp.reshape(values, (1,) * max(0, nd - values.ndim) + values.shape)
            k = v.shape[axis]
            pos = np.arange(int(pos[0]), int(pos[0]) + k)
        else:
            order = np.argsort(pos, kind="mergesort")
            pos = pos.copy()
            pos[order] += np.arange(k)
    vshape = tuple(shape[:axis] + [k] + shape[axis + 1:])
    vals = xp.broadcast_to(v, vshape)
    shape[axis] = n + k
    keep = np.ones(n + k, dtype=bool)
    keep[pos] = False
    res = xp.empty(tuple(shape), dtype=a.dtype)
    key = [slice(None)] * nd
    key[axis] = xp.asarray(np.nonzero(keep)[0])
    res[tuple(key)] = a
    key[axis] = xp.asarray(pos)
    res[tuple(key)] = vals
    return res


_INSERT = [Param("val", lambda v: None if v is None else p_float(v), None,
                 "a scalar to insert (None: the values input)")] + _SLICE
select_op("_npi_insert", _insert, _insert_rule, _INSERT, inputs=("arr", "*rest"),
          variadic=True, aliases=("_npi_insert_scalar", "_npi_insert_slice",
                                  "_npi_insert_tensor"),
          diff=lambda n, at: (0, 1) if at.get("val") is None and n >= 2 else (0,),
          doc="_npi_insert(arr, [values], [obj], val, start, stop, step, int_ind, axis): "
          "NumPy's insert (obj as int_ind, a slice, or an index array input).")



# ------------------------------------------------------------ take_along_axis
def _tala_rule(attrs, shapes, dtypes):
    s, i = tuple(shapes[0]), tuple(shapes[1])
    if dtypes[1].kind not in "iu":
        raise OpError("`indices` must be an integer array, got %s" % dtypes[1])
    if attrs["axis"] is None:
        if len(i) != 1:
            raise OpError("when axis=None, `indices` must have a single dimension")
        return (i,), (dtypes[0],)
    if len(i) != len(s):
        raise OpError("`indices` and `arr` must have the same number of dimensions")
    ax = norm_axis(attrs["axis"], len(s))
    out = []
    for k, (a, b) in enumerate(zip(s, i)):
        if k == ax:
            out.append(b)
        elif a == b or b == 1 or a == 1:
            out.append(max(a, b) if min(a, b) else 0)
        else:
            raise ShapeError("shape mismatch: indices %s cannot be broadcast against arr %s"
                             % (fmt(i), fmt(s)))
    return (tuple(out),), (dtypes[0],)


def _take_along_axis(xp, a, idx, fill=None, axis=None):
    if axis is None:
        a, axis = xp.reshape(a, (-1,)), 0
    return xp.take_along_axis(a, idx.astype(np.int64), axis)


select_op("_npi_take_along_axis", _take_along_axis, _tala_rule, [Param("axis", _opt_int, None)],
          inputs=("arr", "indices"), diff=lambda n, at: (0,),
          doc="_npi_take_along_axis(arr, indices, axis): NumPy's take_along_axis.")
