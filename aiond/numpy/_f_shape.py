"""Shape manipulation and selection as front functions (see ``_front``):
reshape and transposes, joins and splits, flips, rolls, pads, inserts and
deletes, triangles and diagonals, where and take. Each is one registry op
(aiond/ops/np_shape.py), so arrays and graphs get the same shapes, dtypes
and gradients."""
from __future__ import annotations

from numbers import Integral

import numpy as _np

from ..base import numeric_types
from ._front import front


def _int_or_tuple(x):
    if x is None:
        return None
    if isinstance(x, Integral):
        return int(x)
    return tuple(int(v) for v in x)


def _is_scalar(x):
    return isinstance(x, numeric_types) and not isinstance(x, _np.ndarray)


def _arrs(F, seq):
    seq = list(seq)
    if not seq:
        raise ValueError("need at least one array")
    like = next((x for x in seq if F.isarr(x)), None)
    return [F.arr(x, like=like) for x in seq]


def _as_list(res):
    return list(res) if isinstance(res, (list, tuple)) else [res]


# ------------------------------------------------------------ reshape
@front()
def reshape(F, a, newshape, order="C", out=None):
    """``a`` with a new shape (NumPy's rules, with MXNet's special codes -2..-6)."""
    if order != "C":
        raise NotImplementedError("reshape: only order='C' is supported, got %r" % (order,))
    if newshape is None:
        raise TypeError("reshape: newshape cannot be None")
    newshape = _int_or_tuple(newshape)
    newshape = (newshape,) if isinstance(newshape, int) else newshape
    a = F.arr(a)
    if F.kind == "nd":
        from ..ops.np_shape import npx_newshape
        from .multiarray import _reshape
        res = _reshape(a, npx_newshape(a.shape, newshape))
        if out is not None:
            out[...] = res
            return out
        return res
    return F.op("_npx_reshape", [a], {"newshape": newshape, "reverse": False})


@front("reshape", ns="npx")
def _npx_reshape(F, a, newshape, reverse=False, order="C"):
    """``a`` reshaped with MXNet's codes: -1 infers a dim, -2 copies one, -3
    drops a dim of size 1, -4 copies the rest, -5 merges two, -6 d1 d2 splits
    one; ``reverse`` reads both shapes from the right."""
    if order != "C":
        raise NotImplementedError("npx.reshape: only order='C' is supported")
    newshape = _int_or_tuple(newshape)
    newshape = (newshape,) if isinstance(newshape, int) else newshape
    return F.op("_npx_reshape", [F.arr(a)], {"newshape": newshape, "reverse": bool(reverse)})


@front()
def ravel(F, x, order="C"):
    """The flattened array."""
    if order != "C":
        raise NotImplementedError("ravel: only order='C' is supported")
    return reshape(F, x, (-1,))


@front()
def transpose(F, a, axes=None):
    """``a`` with its axes permuted (reversed by default)."""
    return F.op("_np_transpose", [F.arr(a)], {"axes": _int_or_tuple(axes)})


@front()
def swapaxes(F, a, axis1, axis2):
    """``a`` with two axes interchanged."""
    return F.op("_npi_swapaxes", [F.arr(a)], {"dim1": int(axis1), "dim2": int(axis2)})


@front()
def moveaxis(F, a, source, destination):
    """``a`` with axes moved to new positions."""
    return F.op("_np_moveaxis", [F.arr(a)], {"source": _int_or_tuple(source),
                                              "destination": _int_or_tuple(destination)})


@front()
def rollaxis(F, a, axis, start=0):
    """``a`` with ``axis`` rolled back to position ``start``."""
    return F.op("_npi_rollaxis", [F.arr(a)], {"axis": int(axis), "start": int(start)})


@front()
def expand_dims(F, a, axis):
    """``a`` with a new axis of size 1 at ``axis``."""
    return F.op("_npi_expand_dims", [F.arr(a)], {"axis": int(axis)})


@front()
def squeeze(F, a, axis=None, out=None):
    """``a`` without its size-1 axes (or only those in ``axis``)."""
    return F.op("_np_squeeze", [F.arr(a)], {"axis": _int_or_tuple(axis)}, out)


@front()
def broadcast_to(F, array, shape):  # noqa: A002 - NumPy's argument name
    """``array`` broadcast to ``shape``."""
    shape = _int_or_tuple(shape)
    shape = (shape,) if isinstance(shape, int) else shape
    a = F.arr(array)
    if F.kind == "nd" and a.shape == shape:
        return a
    return F.op("_npi_broadcast_to", [a], {"shape": shape})


@front()
def broadcast_arrays(F, *args):
    """The arrays broadcast against each other (their shapes must be known)."""
    arrs = _arrs(F, args)
    shapes = [F.shape(x) for x in arrs]
    if any(s is None for s in shapes):
        raise ValueError("broadcast_arrays needs the arrays' shapes; a Symbol's are unknown "
                         "(use broadcast_to with the shape)")
    shape = _np.broadcast_shapes(*shapes)
    return [x if s == shape else broadcast_to(F, x, shape) for x, s in zip(arrs, shapes)]


# ------------------------------------------------------------ joins
@front()
def concatenate(F, seq, axis=0, out=None):
    """Join arrays along an existing axis (``axis=None`` flattens them first)."""
    arrs = _arrs(F, seq)
    if axis is None:
        arrs, axis = [reshape(F, x, (-1,)) for x in arrs], 0
    return F.op("_npi_concatenate", arrs, {"axis": int(axis), "num_args": len(arrs)}, out)


@front()
def append(F, arr, values, axis=None):
    """``values`` appended to ``arr`` (flattened unless ``axis``)."""
    return concatenate(F, [arr, values], axis=axis)


@front()
def stack(F, arrays, axis=0, out=None):
    """Join arrays along a new axis."""
    arrs = _arrs(F, arrays)
    return F.op("_npi_stack", arrs, {"axis": int(axis), "num_args": len(arrs)}, out)


def _joiner(name, opname):
    def impl(F, arrays, out=None):
        arrs = _arrs(F, arrays)
        return F.op(opname, arrs, {"num_args": len(arrs)}, out)
    impl.__name__ = impl.__qualname__ = name
    impl.__doc__ = "NumPy's %s." % name
    return impl


vstack = front("vstack", "row_stack")(_joiner("vstack", "_npi_vstack"))


@front()
def hstack(F, arrays):
    """Stack arrays column-wise (along axis 0 for 1-D arrays)."""
    return _joiner("hstack", "_npi_hstack")(F, arrays)


@front()
def dstack(F, arrays):
    """Stack arrays along the third axis."""
    return _joiner("dstack", "_npi_dstack")(F, arrays)


@front()
def column_stack(F, tup):
    """Stack 1-D arrays as columns of a 2-D array."""
    return _joiner("column_stack", "_npi_column_stack")(F, tup)


def _atleast(n):
    def impl(F, *arys):
        arrs = _arrs(F, arys)
        res = _as_list(F.op("_np_atleast_%dd" % n, arrs, {"num_args": len(arrs)}))
        return res[0] if len(res) == 1 else res
    impl.__name__ = impl.__qualname__ = "atleast_%dd" % n
    impl.__doc__ = "Each input viewed with at least %d dimension(s)." % n
    return front(impl.__name__)(impl)


atleast_1d = _atleast(1)
atleast_2d = _atleast(2)
atleast_3d = _atleast(3)


# ------------------------------------------------------------ splits
def _split_attrs(indices_or_sections, axis, what):
    if isinstance(indices_or_sections, Integral):
        n = int(indices_or_sections)
        if n <= 0:
            raise ValueError("number sections must be larger than 0.")
        return {"indices": (), "sections": n, "axis": axis, "squeeze_axis": False}
    if isinstance(indices_or_sections, (list, tuple, set)):
        return {"indices": (0,) + tuple(int(i) for i in indices_or_sections), "sections": 0,
                "axis": axis, "squeeze_axis": False}
    raise ValueError("indices_or_sections must be either int, or tuple / list / set of ints"
                     " (%s)" % what)


def _split(F, opname, ary, indices_or_sections, axis, strict):
    a = F.arr(ary)
    attrs = _split_attrs(indices_or_sections, int(axis), opname)
    shape = F.shape(a)
    if strict and attrs["sections"] and shape is not None and shape:
        ax = {"_npi_hsplit": 0 if len(shape) == 1 else 1, "_npi_dsplit": 2}.get(
            opname, axis)
        if ax < len(shape) and shape[ax] % attrs["sections"]:
            raise ValueError("array split does not result in an equal division")
    return _as_list(F.op(opname, [a], attrs))


@front()
def split(F, ary, indices_or_sections, axis=0):
    """Split into equal sections (or at the given indices) along ``axis``."""
    return _split(F, "_npi_split", ary, indices_or_sections, axis, True)


@front()
def array_split(F, ary, indices_or_sections, axis=0):
    """Split into sections that may differ in size by one."""
    return _split(F, "_npi_split", ary, indices_or_sections, axis, False)


@front()
def hsplit(F, ary, indices_or_sections):
    """Split along axis 1 (axis 0 for 1-D arrays)."""
    return _split(F, "_npi_hsplit", ary, indices_or_sections, 1, True)


@front()
def vsplit(F, ary, indices_or_sections):
    """Split along axis 0 (arrays of 2 or more dimensions)."""
    shape = F.shape(F.arr(ary))
    if shape is not None and len(shape) < 2:
        raise ValueError("vsplit only works on arrays of 2 or more dimensions")
    return _split(F, "_npi_split", ary, indices_or_sections, 0, True)


@front()
def dsplit(F, ary, indices_or_sections):
    """Split along axis 2 (arrays of 3 or more dimensions)."""
    shape = F.shape(F.arr(ary))
    if shape is not None and len(shape) < 3:
        raise ValueError("dsplit only works on arrays of 3 or more dimensions")
    return _split(F, "_npi_dsplit", ary, indices_or_sections, 2, True)


# ------------------------------------------------------------ repeats, flips
@front()
def tile(F, A, reps):
    """``A`` repeated ``reps`` times along each axis."""
    reps = _int_or_tuple(reps)
    return F.op("_npi_tile", [F.arr(A)], {"reps": (reps,) if isinstance(reps, int) else reps})


@front()
def repeat(F, a, repeats, axis=None):
    """Each element repeated ``repeats`` times (along ``axis``, or flattened)."""
    if F.isarr(repeats):
        raise NotImplementedError("repeat: repeats as an array is not supported; pass an int "
                                  "or a tuple of ints")
    repeats = _int_or_tuple(repeats)
    return F.op("_npi_repeats", [F.arr(a)], {
        "repeats": (repeats,) if isinstance(repeats, int) else repeats,
        "axis": None if axis is None else int(axis)})


@front()
def flip(F, m, axis=None, out=None):
    """Reverse the order of elements along ``axis`` (all axes by default)."""
    if _is_scalar(m):
        return m
    return F.op("_npi_flip", [F.arr(m)], {"axis": _int_or_tuple(axis)}, out)


@front()
def flipud(F, m):
    """Reverse the order of rows (axis 0)."""
    return flip(F, m, 0)


@front()
def fliplr(F, m):
    """Reverse the order of columns (axis 1)."""
    return flip(F, m, 1)


@front()
def rot90(F, m, k=1, axes=(0, 1)):
    """``m`` rotated by 90 degrees ``k`` times in the plane of ``axes``."""
    return F.op("_npi_rot90", [F.arr(m)], {"k": int(k), "axes": tuple(int(x) for x in axes)})


@front()
def roll(F, a, shift, axis=None):
    """``a`` rolled by ``shift`` along ``axis`` (of the flattened array by default)."""
    shift = _int_or_tuple(shift)
    return F.op("_np_roll", [F.arr(a)], {
        "shift": (shift,) if isinstance(shift, int) else shift, "axis": _int_or_tuple(axis)})


_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "maximum", "minimum")


@front()
def pad(F, x, pad_width, mode="constant", **kwargs):
    """NumPy's pad (modes constant, edge, reflect, symmetric, maximum, minimum)."""
    if mode not in _PAD_MODES:
        raise NotImplementedError("pad: mode=%r is not supported; expected one of %s"
                                  % (mode, ", ".join(_PAD_MODES)))
    if F.isarr(pad_width):
        raise TypeError("pad: pad_width must be an int or a tuple of ints, got an array")
    if isinstance(pad_width, Integral):
        pw = (int(pad_width),)
    else:
        pw = tuple(tuple(int(v) for v in p) if hasattr(p, "__len__") else int(p)
                   for p in pad_width)
    attrs = {"pad_width": pw, "mode": mode}
    if mode == "constant":
        attrs["constant_value"] = float(kwargs.pop("constant_values", 0))
    elif mode in ("reflect", "symmetric"):
        rt = kwargs.pop("reflect_type", "even")
        if rt != "even":
            raise NotImplementedError("pad: only reflect_type='even' is supported")
    if mode in ("maximum", "minimum") and kwargs.pop("stat_length", None) is not None:
        raise NotImplementedError("pad: stat_length is not supported")
    if kwargs:
        raise TypeError("pad: unexpected keyword argument(s) %s for mode %r"
                        % (sorted(kwargs), mode))
    return F.op("_npi_pad", [F.arr(x)], attrs)


# ------------------------------------------------------------ insert, delete, resize
def _obj_attrs(F, obj, n_name="int_ind"):
    if isinstance(obj, slice):
        return {"start": obj.start, "stop": obj.stop, "step": obj.step}, None
    if isinstance(obj, Integral) and not isinstance(obj, bool):
        return {n_name: int(obj)}, None
    if F.isarr(obj) or hasattr(obj, "shape") or isinstance(obj, (list, tuple)):
        if not F.isarr(obj):
            if F.kind != "nd" and hasattr(obj, "shape"):
                raise NotImplementedError("a Symbol's insert/delete takes obj as an int, a "
                                          "slice, a list or a Symbol, got %s"
                                          % type(obj).__name__)
            obj = _np.asarray(obj)
            if obj.dtype.kind not in "iu":
                if obj.size:
                    raise IndexError("arrays used as indices must be of integer type")
                obj = obj.astype(_np.int64)
        return {}, obj
    raise TypeError("obj must be an int, a slice or a sequence of ints, got %s"
                    % type(obj).__name__)


def _host_obj(F, obj, like):
    """An index array ``obj`` as an input of this backend."""
    if F.isarr(obj):
        return obj
    return F.arr(_np.asarray(obj, dtype=_np.int64), like=like)


@front()
def insert(F, arr, obj, values, axis=None):
    """``values`` inserted into ``arr`` before the indices ``obj`` along ``axis``."""
    a = F.arr(arr)
    attrs, idx = _obj_attrs(F, obj)
    attrs["axis"] = None if axis is None else int(axis)
    inputs = [a]
    if _is_scalar(values):
        attrs["val"] = float(values)
    else:
        v = F.arr(values, like=a)
        inputs.append(v)
    if idx is not None:
        inputs.append(_host_obj(F, idx, a))
    return F.op("_npi_insert", inputs, attrs)


@front()
def delete(F, arr, obj, axis=None):
    """``arr`` without the sub-arrays ``obj`` names along ``axis``; indices
    outside [0, n) in an index array are ignored, as MXNet does."""
    a = F.arr(arr)
    attrs, idx = _obj_attrs(F, obj)
    attrs["axis"] = None if axis is None else int(axis)
    if idx is None:
        return F.op("_npi_delete", [a], attrs)
    o = _host_obj(F, idx, a)
    if F.kind != "nd":
        raise NotImplementedError("delete: an index array obj makes the result's shape depend "
                                  "on its values, which a Symbol cannot; pass an int or a slice")
    from ..ops.np_indexing import delete_count
    attrs["_count"] = delete_count(a.shape, axis, o.asnumpy())
    return F.op("_npi_delete", [a, o], attrs)


@front()
def resize(F, a, new_shape):
    """An array of ``new_shape`` filled with ``a``'s elements, repeated in order."""
    ns = _int_or_tuple(new_shape)
    return F.op("_npi_resize", [F.arr(a)], {"new_shape": (ns,) if isinstance(ns, int) else ns})


# ------------------------------------------------------------ triangles, diagonals
@front()
def tril(F, m, k=0):
    """Lower triangle of ``m`` (zeros above the k-th diagonal)."""
    return F.op("_npi_tril", [F.arr(m)], {"k": int(k)})


@front()
def triu(F, m, k=0):
    """Upper triangle of ``m`` (zeros below the k-th diagonal)."""
    return F.op("_npi_triu", [F.arr(m)], {"k": int(k)})


@front()
def diag(F, array, k=0):  # noqa: A002 - MXNet's argument name
    """The k-th diagonal of a 2-D array, or a 2-D array with a 1-D ``array`` on it."""
    return F.op("_np_diag", [F.arr(array)], {"k": int(k)})


@front()
def diagflat(F, array, k=0):  # noqa: A002 - MXNet's argument name
    """A 2-D array with the flattened ``array`` on the k-th diagonal."""
    return F.op("_np_diagflat", [F.arr(array)], {"k": int(k)})


@front()
def diagonal(F, a, offset=0, axis1=0, axis2=1):
    """The diagonals of ``a`` over axes ``axis1`` and ``axis2`` (a new last axis)."""
    return F.op("_np_diagonal", [F.arr(a)], {"offset": int(offset), "axis1": int(axis1),
                                              "axis2": int(axis2)})


@front()
def copy(F, a, out=None):
    """A copy of ``a``."""
    return F.op("_np_copy", [F.arr(a)], None, out)


# ------------------------------------------------------------ where, take
@front()
def where(F, condition, x=None, y=None):
    """Elements of ``x`` where ``condition`` holds, else of ``y`` (with neither,
    the indices of the nonzero elements)."""
    if x is None and y is None:
        from ._front import table
        nz = table("np").get("nonzero")
        if nz is None:
            raise NotImplementedError("where(condition) needs np.nonzero")
        return nz(F, condition)
    if x is None or y is None:
        raise ValueError("either both or neither of x and y should be given")
    if _is_scalar(condition):
        return x if condition else y
    c = F.arr(condition)
    sx, sy = _is_scalar(x), _is_scalar(y)
    if sx and sy:
        return F.op("_npi_where_scalar2", [c], {"x": float(x), "y": float(y)})
    if sx:
        return F.op("_npi_where_lscalar", [c, F.arr(y, like=c)], {"scalar": float(x)})
    if sy:
        return F.op("_npi_where_rscalar", [c, F.arr(x, like=c)], {"scalar": float(y)})
    return F.op("_npi_where", [c, F.arr(x, like=c), F.arr(y, like=c)])


@front()
def take(F, a, indices, axis=None, mode="raise", out=None):
    """Elements of ``a`` at ``indices`` along ``axis`` (of the flattened array by
    default); ``mode`` 'raise', 'wrap' or 'clip' handles indices out of range."""
    if mode not in ("raise", "wrap", "clip"):
        raise NotImplementedError("function take does not support mode '%s'" % mode)
    a = F.arr(a)
    if _is_scalar(indices):
        idx = F.arr(_np.asarray(indices, dtype=_np.int64), like=a) if F.kind == "nd" else None
        if idx is None:
            raise TypeError("take: a Symbol's indices must be a Symbol")
    else:
        idx = F.arr(indices if F.isarr(indices) else _np.asarray(indices), like=a)
    if axis is None:
        a, axis = reshape(F, a, (-1,)), 0
    return F.op("_npi_take", [a, idx], {"axis": int(axis), "mode": mode}, out)


@front()
def meshgrid(F, *xi, **kwargs):
    """Coordinate matrices from coordinate vectors (``indexing`` 'xy' or 'ij',
    ``sparse``); the vectors' lengths must be known."""
    indexing = kwargs.pop("indexing", "xy")
    sparse = kwargs.pop("sparse", False)
    kwargs.pop("copy", True)
    if kwargs:
        raise TypeError("meshgrid() got unexpected keyword argument(s) %s" % sorted(kwargs))
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    arrs = [ravel(F, x) for x in _arrs(F, xi)] if xi else []
    ndim = len(arrs)
    lens = []
    for x in arrs:
        s = F.shape(x)
        if s is None:
            raise ValueError("meshgrid needs the vectors' lengths; a Symbol's are unknown")
        lens.append(s[0])
    out = []
    for i, x in enumerate(arrs):
        shp = [1] * ndim
        shp[i] = -1
        if indexing == "xy" and ndim > 1 and i < 2:
            # 'xy': the first two vectors run along axes 1 and 0
            shp[i], shp[1 - i] = 1, -1
        out.append(reshape(F, x, tuple(shp)))
    if not sparse and ndim:
        full = list(lens)
        if indexing == "xy" and ndim > 1:
            full[0], full[1] = full[1], full[0]
        out = [broadcast_to(F, x, tuple(full)) for x in out]
    return out


@front()
def take_along_axis(F, arr, indices, axis):
    """Values of ``arr`` at ``indices`` matched along ``axis`` (NumPy's take_along_axis)."""
    a = F.arr(arr)
    idx = F.arr(indices if F.isarr(indices) else _np.asarray(indices), like=a)
    return F.op("_npi_take_along_axis", [a, idx], {"axis": None if axis is None else int(axis)})
