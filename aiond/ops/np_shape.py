"""NumPy-interface shape manipulation ops (MXNet's ``_np_*``/``_npi_*``/``_npx_*``
names in src/operator/numpy): transposes, joins, splits, flips, rolls, pads,
triangles and diagonals, resize, copy and npx.reshape (where, take, insert
and delete are in np_indexing.py). Each is a selection op (``np_select``): one indexing
function gives the kernel and, run on element positions, the gradient."""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._rules import fmt, norm_axis
from .np_ops import promote
from .np_select import opt_int as _opt_int
from .np_select import select_op
from .registry import Param, p_axis, p_bool, p_float, p_int, p_shape, register
from .registry import get as _reg_get

_I64 = np.dtype(np.int64)


def _same(attrs, shapes, dtypes):
    return (tuple(shapes[0]),), (dtypes[0],)


def _axes_of(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, int):
        axis = (axis,)
    return tuple(norm_axis(a, ndim) for a in axis)


# ------------------------------------------------------------ transposes
def _transpose_axes(axes, ndim):
    if axes is None or axes == ():
        return tuple(range(ndim))[::-1]
    if isinstance(axes, int):
        axes = (axes,)
    if len(axes) != ndim:
        raise ShapeError("axes %s don't match array of %d dimension(s)" % (tuple(axes), ndim))
    ax = tuple(norm_axis(a, ndim) for a in axes)
    if sorted(ax) != list(range(ndim)):
        raise ShapeError("axes %s repeat an axis" % (tuple(axes),))
    return ax


def _transpose_rule(attrs, shapes, dtypes):
    s = shapes[0]
    return (tuple(s[a] for a in _transpose_axes(attrs["axes"], len(s))),), (dtypes[0],)


def _transpose(xp, a, fill=None, axes=None):
    return xp.transpose(a, _transpose_axes(axes, a.ndim))


select_op("_np_transpose", _transpose, _transpose_rule,
          [Param("axes", p_axis, None, "the permutation; None reverses the axes")],
          doc="_np_transpose(a, axes): a with its axes permuted.")


def _transpose_grad(F, attrs, ins, outs, og):
    # the inverse permutation: one transpose, where the generic selection
    # gradient would scatter every element (a weight's w.T in each step)
    ndim = len(ins[0].shape)
    ax = _transpose_axes(attrs.get("axes"), ndim)
    inv = tuple(sorted(range(ndim), key=lambda i: ax[i]))
    return [F._internal._np_transpose(og[0], axes=inv)]


_reg_get("_np_transpose").grad = _transpose_grad


def _swap_rule(attrs, shapes, dtypes):
    s = list(shapes[0])
    i, j = norm_axis(attrs["dim1"], len(s)), norm_axis(attrs["dim2"], len(s))
    s[i], s[j] = s[j], s[i]
    return (tuple(s),), (dtypes[0],)


select_op("_npi_swapaxes", lambda xp, a, fill=None, dim1=0, dim2=0: xp.swapaxes(
    a, norm_axis(dim1, a.ndim), norm_axis(dim2, a.ndim)), _swap_rule,
    [Param("dim1", p_int, 0), Param("dim2", p_int, 0)],
    doc="_npi_swapaxes(a, dim1, dim2): a with two axes interchanged.")


def _moveaxis_order(src, dst, ndim):
    src = (src,) if isinstance(src, int) else tuple(src)
    dst = (dst,) if isinstance(dst, int) else tuple(dst)
    if len(src) != len(dst):
        raise OpError("`source` and `destination` arguments must have the same number of "
                      "elements")
    src = [norm_axis(a, ndim, "source") for a in src]
    dst = [norm_axis(a, ndim, "destination") for a in dst]
    if len(set(src)) != len(src) or len(set(dst)) != len(dst):
        raise OpError("repeated axis in `source` or `destination` argument")
    order = [n for n in range(ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return tuple(order)


def _moveaxis_rule(attrs, shapes, dtypes):
    s = shapes[0]
    order = _moveaxis_order(attrs["source"], attrs["destination"], len(s))
    return (tuple(s[a] for a in order),), (dtypes[0],)


select_op("_np_moveaxis", lambda xp, a, fill=None, source=0, destination=0: xp.transpose(
    a, _moveaxis_order(source, destination, a.ndim)), _moveaxis_rule,
    [Param("source", p_axis), Param("destination", p_axis)],
    doc="_np_moveaxis(a, source, destination): a with axes moved to new positions.")


def _rollaxis_order(axis, start, ndim):
    axis = norm_axis(axis, ndim)
    if not -ndim <= start <= ndim:
        raise OpError("start=%d is out of range for an array of %d dimension(s)" % (start, ndim))
    start = start % (ndim + 1) if start < 0 else start
    order = list(range(ndim))
    order.remove(axis)
    order.insert(start - 1 if start > axis else start, axis)
    return tuple(order)


def _rollaxis_rule(attrs, shapes, dtypes):
    s = shapes[0]
    return (tuple(s[a] for a in _rollaxis_order(attrs["axis"], attrs["start"], len(s))),), \
        (dtypes[0],)


select_op("_npi_rollaxis", lambda xp, a, fill=None, axis=0, start=0: xp.transpose(
    a, _rollaxis_order(axis, start, a.ndim)), _rollaxis_rule,
    [Param("axis", p_int), Param("start", p_int, 0)],
    doc="_npi_rollaxis(a, axis, start): axis rolled back to position start.")


# ------------------------------------------------------------ squeeze, expand
def _squeeze_axes(axis, shape):
    if not shape:
        if axis is not None and tuple(np.atleast_1d(axis)) not in ((0,), (-1,)):
            raise OpError("axis %s is out of bounds for array of dimension 0" % (axis,))
        return ()
    if axis is None:
        return tuple(i for i, d in enumerate(shape) if d == 1)
    axes = _axes_of(axis, len(shape))
    for a in axes:
        if shape[a] != 1:
            raise ShapeError("cannot select an axis to squeeze out which has size not equal "
                             "to one (axis %d of shape %s)" % (a, fmt(shape)))
    return axes


def _squeeze_rule(attrs, shapes, dtypes):
    s = shapes[0]
    ax = _squeeze_axes(attrs["axis"], s)
    return (tuple(d for i, d in enumerate(s) if i not in ax),), (dtypes[0],)


select_op("_np_squeeze", lambda xp, a, fill=None, axis=None: xp.reshape(
    a, tuple(d for i, d in enumerate(a.shape) if i not in _squeeze_axes(axis, a.shape))),
    _squeeze_rule, [Param("axis", p_axis, None, "the size-1 axes to remove; None: all")],
    doc="_np_squeeze(a, axis): a without size-1 axes.")


def _expand_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    ax = attrs["axis"]
    if not -len(s) - 1 <= ax <= len(s):
        raise OpError("axis=%d is out of range for an array of %d dimension(s)" % (ax, len(s)))
    ax %= len(s) + 1
    return (s[:ax] + (1,) + s[ax:],), (dtypes[0],)


select_op("_npi_expand_dims", lambda xp, a, fill=None, axis=0: xp.expand_dims(a, axis),
          _expand_rule, [Param("axis", p_int)],
          doc="_npi_expand_dims(a, axis): a with a new size-1 axis at axis.")


# ------------------------------------------------------------ broadcast_to
def _bto_shape(src, shape):
    shape = tuple(shape)
    if len(shape) < len(src):
        raise ShapeError("cannot broadcast an array of shape %s to shape %s"
                         % (fmt(src), fmt(shape)))
    pad = (1,) * (len(shape) - len(src)) + tuple(src)
    out = []
    for a, b in zip(pad, shape):
        if b == -2:         # MXNet: keep the input's size
            b = a
        if a != b and a != 1:
            raise ShapeError("operands could not be broadcast together with remapped shapes "
                             "[original->remapped]: %s and requested shape %s"
                             % (fmt(src), fmt(shape)))
        out.append(b)
    return tuple(out)


def _bto_rule(attrs, shapes, dtypes):
    return (_bto_shape(shapes[0], attrs["shape"]),), (dtypes[0],)


select_op("_npi_broadcast_to", lambda xp, a, fill=None, shape=(): xp.broadcast_to(
    a, _bto_shape(a.shape, shape)), _bto_rule, [Param("shape", p_shape, ())],
    doc="_npi_broadcast_to(a, shape): a broadcast to shape.")


# ------------------------------------------------------------ joins
_NARGS = Param("num_args", p_int, 1, "number of inputs")


def _promoted(dtypes):
    d = dtypes[0]
    for x in dtypes[1:]:
        d = promote(d, x)
    return d


def _cast_all(xp, arrs):
    d = _promoted([x.dtype for x in arrs])
    return [x if x.dtype == d else x.astype(d) for x in arrs]


def _concat_shape(shapes, axis):
    if axis is None:
        n = 0
        for s in shapes:
            n += int(np.prod(s)) if s else 1
        return (n,)
    s0 = shapes[0]
    if len(s0) == 0:
        raise ShapeError("zero-dimensional arrays cannot be concatenated")
    ax = norm_axis(axis, len(s0))
    tot = 0
    for i, s in enumerate(shapes):
        if len(s) != len(s0):
            raise ShapeError("all the input arrays must have same number of dimensions, but "
                             "the array at index 0 has %d dimension(s) and the array at index "
                             "%d has %d dimension(s)" % (len(s0), i, len(s)))
        for k, (a, b) in enumerate(zip(s, s0)):
            if k != ax and a != b:
                raise ShapeError("all the input array dimensions except for the concatenation "
                                 "axis must match exactly: %s and %s" % (fmt(s0), fmt(s)))
        tot += s[ax]
    return tuple(s0[:ax]) + (tot,) + tuple(s0[ax + 1:])


def _concat_rule(attrs, shapes, dtypes):
    if not shapes:
        raise OpError("need at least one array to concatenate")
    return (_concat_shape([tuple(s) for s in shapes], attrs["axis"]),), (_promoted(dtypes),)


def _concat(xp, *arrs, fill=None, axis=0, num_args=1):
    arrs = _cast_all(xp, arrs)
    if axis is None:
        return xp.concatenate([xp.reshape(a, (-1,)) for a in arrs])
    return xp.concatenate(arrs, axis=axis)


select_op("_npi_concatenate", _concat, _concat_rule,
          [_NARGS, Param("axis", _opt_int, 0, "the axis to join along; None flattens")],
          inputs=("*data",), variadic=True,
          doc="_npi_concatenate(*data, axis): the arrays joined along axis.")


def _stack_rule(attrs, shapes, dtypes):
    if not shapes:
        raise OpError("need at least one array to stack")
    s0 = tuple(shapes[0])
    for s in shapes:
        if tuple(s) != s0:
            raise ShapeError("all input arrays must have the same shape, got %s and %s"
                             % (fmt(s0), fmt(s)))
    ax = norm_axis(attrs["axis"], len(s0) + 1)
    return (s0[:ax] + (len(shapes),) + s0[ax:],), (_promoted(dtypes),)


select_op("_npi_stack", lambda xp, *arrs, fill=None, axis=0, num_args=1: xp.stack(
    _cast_all(xp, arrs), axis=axis), _stack_rule, [_NARGS, Param("axis", p_int, 0)],
    inputs=("*data",), variadic=True, doc="_npi_stack(*data, axis): the arrays joined along a "
    "new axis.")


def _atleast(nd, shape):
    s = tuple(shape)
    if len(s) >= nd:
        return s
    if nd == 1:
        return (1,)
    if nd == 2:
        return (1,) * (2 - len(s)) + s
    return {0: (1, 1, 1), 1: (1,) + s + (1,), 2: s + (1,)}[len(s)]


def _joiner(name, prep, axis_of):
    def shapes_of(shapes):
        return [prep(tuple(s)) for s in shapes]

    def rule(attrs, shapes, dtypes):
        if not shapes:
            raise OpError("need at least one array to concatenate")
        ss = shapes_of(shapes)
        return (_concat_shape(ss, axis_of(ss)),), (_promoted(dtypes),)

    def fn(xp, *arrs, fill=None, num_args=1):
        arrs = _cast_all(xp, arrs)
        ss = shapes_of([a.shape for a in arrs])
        return xp.concatenate([xp.reshape(a, s) for a, s in zip(arrs, ss)], axis=axis_of(ss))
    select_op(name, fn, rule, [_NARGS], inputs=("*data",), variadic=True,
              doc="%s(*data): NumPy's %s." % (name, name[5:]))


_joiner("_npi_vstack", lambda s: _atleast(2, s), lambda ss: 0)
_joiner("_npi_hstack", lambda s: _atleast(1, s), lambda ss: 0 if len(ss[0]) == 1 else 1)
_joiner("_npi_dstack", lambda s: _atleast(3, s), lambda ss: 2)
_joiner("_npi_column_stack", lambda s: (s[0], 1) if len(s) == 1 else _atleast(2, s),
        lambda ss: 1)


def _atleast_rule(nd):
    def rule(attrs, shapes, dtypes):
        return tuple(_atleast(nd, s) for s in shapes), tuple(dtypes)
    return rule


for _nd in (1, 2, 3):
    select_op("_np_atleast_%dd" % _nd,
              (lambda k: lambda xp, *arrs, fill=None, num_args=1: [
                  xp.reshape(a, _atleast(k, a.shape)) for a in arrs])(_nd),
              _atleast_rule(_nd), [_NARGS], inputs=("*arys",), variadic=True,
              num_outputs=lambda a: a["num_args"],
              doc="_np_atleast_%dd(*arys): each array viewed with at least %d dimensions."
              % (_nd, _nd))


# ------------------------------------------------------------ splits
def _split_bounds(n, indices, sections):
    if sections > 0:
        q, r = divmod(n, sections)
        b = [0]
        for i in range(sections):
            b.append(b[-1] + q + (1 if i < r else 0))
        return list(zip(b[:-1], b[1:]))
    idx = list(indices)
    out = []
    for i, s in enumerate(idx):
        e = idx[i + 1] if i + 1 < len(idx) else n
        s, e = min(max(s, 0), n), min(max(e, 0), n)
        out.append((s, max(s, e)))
    return out


_SPLIT = [Param("indices", p_shape, (), "the boundaries, starting with 0"),
          Param("axis", p_int, 0), Param("squeeze_axis", p_bool, False),
          Param("sections", p_int, 0, "the number of sections (0: split at indices)")]


def _split_axis(kind, axis, ndim):
    if kind == "hsplit":
        if ndim == 0:
            raise OpError("hsplit only works on arrays of 1 or more dimensions")
        return 0 if ndim == 1 else 1
    if kind == "dsplit":
        if ndim < 3:
            raise OpError("dsplit only works on arrays of 3 or more dimensions")
        return 2
    if ndim == 0:
        raise OpError("split needs an array of 1 or more dimensions")
    return norm_axis(axis, ndim)


def _splitter(name, kind):
    def rule(attrs, shapes, dtypes):
        s = tuple(shapes[0])
        ax = _split_axis(kind, attrs["axis"], len(s))
        outs = []
        for lo, hi in _split_bounds(s[ax], attrs["indices"], attrs["sections"]):
            o = s[:ax] + (hi - lo,) + s[ax + 1:]
            if attrs["squeeze_axis"]:
                o = s[:ax] + s[ax + 1:]
            outs.append(o)
        return tuple(outs), (dtypes[0],) * len(outs)

    def fn(xp, a, fill=None, indices=(), axis=0, squeeze_axis=False, sections=0):
        ax = _split_axis(kind, axis, a.ndim)
        res = []
        for lo, hi in _split_bounds(a.shape[ax], indices, sections):
            key = (slice(None),) * ax + (slice(lo, hi),)
            r = a[key]
            res.append(xp.squeeze(r, axis=ax) if squeeze_axis else r)
        return res
    select_op(name, fn, rule, _SPLIT,
              num_outputs=lambda a: a["sections"] if a["sections"] > 0 else len(a["indices"]),
              doc="%s(a, indices, axis, squeeze_axis, sections): the pieces of a between "
              "boundaries (MXNet's split_v2 rule: n sections differ in size by at most one)"
              % name)


_splitter("_npi_split", "split")
_splitter("_npi_hsplit", "hsplit")
_splitter("_npi_dsplit", "dsplit")


# ------------------------------------------------------------ tile, repeat
def _tile_rule(attrs, shapes, dtypes):
    s, reps = tuple(shapes[0]), tuple(attrs["reps"])
    for r in reps:
        if r < 0:
            raise OpError("reps must be non-negative, got %s" % (reps,))
    n = max(len(s), len(reps))
    s = (1,) * (n - len(s)) + s
    reps = (1,) * (n - len(reps)) + reps
    return (tuple(a * b for a, b in zip(s, reps)),), (dtypes[0],)


select_op("_npi_tile", lambda xp, a, fill=None, reps=(): xp.tile(a, tuple(reps)), _tile_rule,
          [Param("reps", p_shape)], doc="_npi_tile(a, reps): a repeated reps times per axis.")


def _repeats_of(repeats, axis, shape):
    n = (int(np.prod(shape)) if shape else 1) if axis is None else shape[norm_axis(axis, len(shape))]
    r = tuple(repeats)
    if any(x < 0 for x in r):
        raise OpError("repeats may not contain negative values")
    if len(r) == 1:
        return r[0]
    if len(r) != n:
        raise OpError("operands could not be broadcast together: repeats of length %d for "
                      "an axis of length %d" % (len(r), n))
    return np.asarray(r, dtype=np.int64)


def _repeat_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    r = _repeats_of(attrs["repeats"], attrs["axis"], s)
    tot = int(np.sum(r)) if not isinstance(r, int) else None
    if attrs["axis"] is None:
        n = int(np.prod(s)) if s else 1
        return ((tot if tot is not None else n * r,),), (dtypes[0],)
    ax = norm_axis(attrs["axis"], len(s))
    return (s[:ax] + (tot if tot is not None else s[ax] * r,) + s[ax + 1:],), (dtypes[0],)


def _repeat(xp, a, fill=None, repeats=(1,), axis=None):
    r = _repeats_of(repeats, axis, a.shape)
    if not isinstance(r, int):
        r = xp.asarray(r)
    return xp.repeat(a, r, axis=axis)


select_op("_npi_repeats", _repeat, _repeat_rule,
          [Param("repeats", p_shape), Param("axis", _opt_int, None)],
          doc="_npi_repeats(a, repeats, axis): each element repeated.")


# ------------------------------------------------------------ flip, roll, rot90
def _flip_rule(attrs, shapes, dtypes):
    _axes_of(attrs["axis"], len(shapes[0]))     # checks the axes
    return (tuple(shapes[0]),), (dtypes[0],)


select_op("_npi_flip", lambda xp, a, fill=None, axis=None: a if a.ndim == 0 else xp.flip(
    a, _axes_of(axis, a.ndim)), _flip_rule,
    [Param("axis", p_axis, None)], doc="_npi_flip(a, axis): a reversed along axis.")


def _roll(xp, a, fill=None, shift=None, axis=None):
    if shift is None:
        raise OpError("roll: shift is required")
    if axis is None:
        return xp.reshape(xp.roll(xp.reshape(a, (-1,)), shift[0] if len(shift) == 1 else
                                  sum(shift)), a.shape)
    ax = _axes_of(axis, a.ndim)
    sh = tuple(shift)
    if len(sh) == 1:
        sh = sh * len(ax)
    if len(sh) != len(ax):
        raise OpError("shift and axis must have the same length")
    return xp.roll(a, sh, axis=ax)


def _roll_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    if attrs["axis"] is not None:
        ax = _axes_of(attrs["axis"], len(s))
        sh = tuple(attrs["shift"] or ())
        if len(sh) not in (1, len(ax)):
            raise OpError("shift and axis must have the same length, got %s and %s"
                          % (sh, attrs["axis"]))
    return (s,), (dtypes[0],)


select_op("_np_roll", _roll, _roll_rule,
          [Param("shift", p_shape, None), Param("axis", p_axis, None)],
          doc="_np_roll(a, shift, axis): a rolled by shift along axis.")


def _rot_axes(axes, ndim):
    axes = tuple(axes)
    if len(axes) != 2:
        raise OpError("len(axes) must be 2")
    a0, a1 = norm_axis(axes[0], ndim), norm_axis(axes[1], ndim)
    if a0 == a1:
        raise OpError("Axes must be different.")
    return a0, a1


def _rot90_rule(attrs, shapes, dtypes):
    s = list(shapes[0])
    a0, a1 = _rot_axes(attrs["axes"], len(s))
    if attrs["k"] % 2:
        s[a0], s[a1] = s[a1], s[a0]
    return (tuple(s),), (dtypes[0],)


select_op("_npi_rot90", lambda xp, a, fill=None, k=1, axes=(0, 1): xp.rot90(
    a, k, _rot_axes(axes, a.ndim)), _rot90_rule,
    [Param("k", p_int, 1), Param("axes", p_shape, (0, 1))],
    doc="_npi_rot90(a, k, axes): a rotated by 90 degrees k times in the plane of axes.")


# ------------------------------------------------------------ pad
_PAD_MODES = ("constant", "edge", "reflect", "symmetric", "maximum", "minimum")


def _pad_width(pw, ndim):
    pw = np.asarray(pw, dtype=np.int64)
    try:
        pw = np.broadcast_to(pw.reshape(-1, 2) if pw.size > 2 and pw.ndim == 1 else pw,
                             (ndim, 2))
    except ValueError:
        raise OpError("pad_width %s does not fit an array of %d dimension(s)"
                      % (pw.tolist(), ndim)) from None
    if (pw < 0).any():
        raise OpError("index can't contain negative values")
    return tuple((int(a), int(b)) for a, b in pw)


def _p_pad_width(v):
    from .registry import _lit
    v = _lit(v)
    if isinstance(v, (int, np.integer)):
        return (int(v),)
    return tuple(tuple(int(y) for y in x) if hasattr(x, "__len__") else int(x) for x in v)


def _pad_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    pw = _pad_width(attrs["pad_width"], len(s))
    if attrs["mode"] in ("reflect", "symmetric", "maximum", "minimum", "edge"):
        for d, (a, b) in zip(s, pw):
            if d == 0 and (a or b):
                raise OpError("can't extend empty axis using modes other than 'constant'")
    return (tuple(d + a + b for d, (a, b) in zip(s, pw)),), (dtypes[0],)


def _pad(xp, a, fill=None, pad_width=(), mode="constant", constant_value=0.0,
         reflect_type="even"):
    pw = _pad_width(pad_width, a.ndim)
    if mode == "constant":
        c = constant_value if fill is None else fill
        return xp.pad(a, pw, mode="constant", constant_values=np.asarray(c).astype(a.dtype))
    if mode in ("maximum", "minimum") and fill is not None:
        # a position array: which element holds the extreme needs the values
        raise OpError("pad: mode=%r has no gradient" % mode)
    kw = {"reflect_type": reflect_type} if mode in ("reflect", "symmetric") else {}
    return xp.pad(a, pw, mode=mode, **kw)


def _pad_check(op, attrs):
    if attrs["mode"] not in _PAD_MODES:
        raise OpError("pad: mode=%r is not supported; expected one of %s"
                      % (attrs["mode"], ", ".join(_PAD_MODES)))


select_op("_npi_pad", _pad, _pad_rule,
          [Param("pad_width", _p_pad_width),
           Param("mode", str, "constant"), Param("constant_value", p_float, 0.0),
           Param("reflect_type", str, "even")],
          doc="_npi_pad(a, pad_width, mode, constant_value, reflect_type): NumPy's pad.")
from .registry import get as _get  # noqa: E402
_get("_npi_pad").attr_check = _pad_check


# ------------------------------------------------------------ triangles, diagonals
def _tri_rule(attrs, shapes, dtypes):
    return (tuple(shapes[0]),), (dtypes[0],)


def _tri(lower):
    def fn(xp, a, fill=None, k=0):
        z = np.asarray(0 if fill is None else fill).astype(a.dtype)
        if a.ndim == 0:
            raise OpError("tril/triu need an array of at least 1 dimension")
        if a.ndim == 1:
            n = a.shape[0]
            a = xp.broadcast_to(a, (n, n))
        n, m = a.shape[-2:]
        keep = xp.tri(n, m, k, dtype=bool) if lower else ~xp.tri(n, m, k - 1, dtype=bool)
        return xp.where(keep, a, z)
    return fn


def _trilu_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    if len(s) == 0:
        raise OpError("tril/triu need an array of at least 1 dimension")
    if len(s) == 1:
        s = (s[0], s[0])
    return (s,), (dtypes[0],)


select_op("_npi_tril", _tri(True), _trilu_rule, [Param("k", p_int, 0)],
          doc="_npi_tril(a, k): the lower triangle of a (on and below the k-th diagonal).")
select_op("_npi_triu", _tri(False), _trilu_rule, [Param("k", p_int, 0)],
          doc="_npi_triu(a, k): the upper triangle of a.")


def _diag_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    k = attrs["k"]
    if len(s) == 1:
        n = s[0] + abs(k)
        return ((n, n),), (dtypes[0],)
    if len(s) == 2:
        n = max(0, min(s[0] + min(k, 0), s[1] - max(k, 0)))
        return ((n,),), (dtypes[0],)
    raise OpError("Input must be 1- or 2-d, got %d dimension(s)" % len(s))


def _diag(xp, a, fill=None, k=0):
    if a.ndim == 1:
        n = a.shape[0] + abs(k)
        z = np.asarray(0 if fill is None else fill).astype(a.dtype)
        r = xp.full((n, n), z, dtype=a.dtype)
        i = xp.arange(a.shape[0])
        r[i + max(-k, 0), i + max(k, 0)] = a
        return r
    return xp.diagonal(a, k).copy()


select_op("_np_diag", _diag, _diag_rule, [Param("k", p_int, 0)],
          doc="_np_diag(a, k): the k-th diagonal of a 2-D a, or a 2-D array with a 1-D a on it.")


def _diagflat_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    n = (int(np.prod(s)) if s else 1) + abs(attrs["k"])
    return ((n, n),), (dtypes[0],)


select_op("_np_diagflat", lambda xp, a, fill=None, k=0: _diag(xp, xp.reshape(a, (-1,)), fill, k),
          _diagflat_rule, [Param("k", p_int, 0)],
          doc="_np_diagflat(a, k): a 2-D array with the flattened a on the k-th diagonal.")


def _diagonal_rule(attrs, shapes, dtypes):
    s = tuple(shapes[0])
    if len(s) < 2:
        raise OpError("diag requires an array of at least two dimensions")
    a1, a2 = norm_axis(attrs["axis1"], len(s)), norm_axis(attrs["axis2"], len(s))
    if a1 == a2:
        raise OpError("axis1 and axis2 cannot refer to the same axis %d" % a1)
    k = attrs["offset"]
    n = max(0, min(s[a1] + min(k, 0), s[a2] - max(k, 0)))
    rest = tuple(d for i, d in enumerate(s) if i not in (a1, a2))
    return (rest + (n,),), (dtypes[0],)


select_op("_np_diagonal", lambda xp, a, fill=None, offset=0, axis1=0, axis2=1: xp.diagonal(
    a, offset, axis1, axis2).copy(), _diagonal_rule,
    [Param("offset", p_int, 0), Param("axis1", p_int, 0), Param("axis2", p_int, 1)],
    doc="_np_diagonal(a, offset, axis1, axis2): the diagonals of a.")


# ------------------------------------------------------------ resize
def _resize_rule(attrs, shapes, dtypes):
    ns = tuple(attrs["new_shape"])
    if any(d < 0 for d in ns):
        raise OpError("all elements of `new_shape` must be non-negative")
    return (ns,), (dtypes[0],)


def _resize(xp, a, fill=None, new_shape=()):
    ns = tuple(new_shape)
    n = int(np.prod(ns)) if ns else 1
    flat = xp.reshape(a, (-1,))
    if flat.size == 0 or n == 0:
        z = np.asarray(0 if fill is None else fill).astype(a.dtype)
        return xp.full(ns, z, dtype=a.dtype)
    reps = -(-n // flat.size)
    return xp.reshape(xp.tile(flat, reps)[:n], ns)


select_op("_npi_resize", _resize, _resize_rule, [Param("new_shape", p_shape)],
          doc="_npi_resize(a, new_shape): a's elements repeated (in order) to fill new_shape.")


# ------------------------------------------------------------ copy
select_op("_np_copy", lambda xp, a, fill=None: a.copy(), _same,
          doc="_np_copy(a): a copy of a.")



# ------------------------------------------------------------ npx.reshape
def npx_newshape(src, target):
    """MXNet's ``npx.reshape`` rule: NumPy's ``-1`` plus the special codes
    -2 (copy a dim), -3 (drop a dim of size 1), -4 (copy all remaining dims),
    -5 (merge two dims), -6 d1 d2 (split a dim in two, one may be -1)."""
    src, target = tuple(src), tuple(target)
    size = int(np.prod(src)) if src else 1
    err = "cannot reshape array of shape %s into shape %s" % (fmt(src), fmt(target))
    if all(d >= 0 for d in target):
        if int(np.prod(target) if target else 1) != size:
            raise ShapeError(err)
        return target
    out, unknown, known, si, i = [], -1, 1, 0, 0
    while i < len(target):
        d = target[i]
        if d < -6:
            raise ShapeError("dimension size must be greater than or equal to -6, got %d" % d)
        if d == -1:
            if unknown >= 0:
                raise ShapeError("one and only one dim can be inferred")
            unknown = len(out)
            out.append(-1)
            si += 1
        elif d == -2:
            if si >= len(src):
                raise ShapeError("unmatching dimension of proposed new shape: " + err)
            known *= src[si]
            out.append(src[si])
            si += 1
        elif d == -3:
            if si >= len(src) or src[si] != 1:
                raise ShapeError("-3 index should only be used to skip dimension size 1")
            si += 1
        elif d == -4:
            while si < len(src):
                known *= src[si]
                out.append(src[si])
                si += 1
        elif d == -5:
            if si >= len(src) - 1:
                raise ShapeError("not enough dimensions left for the product")
            known *= src[si] * src[si + 1]
            out.append(src[si] * src[si + 1])
            si += 2
        elif d == -6:
            if i + 2 >= len(target) or si >= len(src):
                raise ShapeError("-6 needs two dims after it and a source dim to split")
            d0, d1, d2 = src[si], target[i + 1], target[i + 2]
            si += 1
            i += 2
            if d1 == -1 and d2 == -1:
                raise ShapeError("split dims cannot both be -1")
            if d1 == -1:
                d1 = d0 // d2
            if d2 == -1:
                d2 = d0 // d1
            if d1 * d2 != d0:
                raise ShapeError("split dims %d, %d do not divide original dim %d" % (d1, d2, d0))
            known *= d0
            out += [d1, d2]
        else:
            known *= d
            out.append(d)
            si += 1
        i += 1
    if unknown >= 0:
        if known == 0 or size % known:
            raise ShapeError(err)
        out[unknown] = size // known
    if int(np.prod(out) if out else 1) != size:
        raise ShapeError(err)
    return tuple(out)


def _npx_shape(src, newshape, reverse):
    if not reverse:
        return npx_newshape(src, newshape)
    return npx_newshape(tuple(src)[::-1], tuple(newshape)[::-1])[::-1]


def _npx_reshape_rule(attrs, shapes, dtypes):
    return (_npx_shape(shapes[0], attrs["newshape"], attrs["reverse"]),), (dtypes[0],)


@register("_npx_reshape", params=[Param("newshape", p_shape), Param("reverse", p_bool, False),
                                  Param("order", str, "C", choices=("C",))],
          inputs=("a",), infer=_npx_reshape_rule, aliases=("_npi_reshape",),
          grad=lambda F, at, ins, outs, og: [F._internal._np_reshape(og[0],
                                                                      newshape=ins[0].shape)])
def _npx_reshape(xp, a, out, newshape, reverse=False, order="C"):
    """_npx_reshape(a, newshape, reverse): a reshaped with MXNet's special codes
    (-1 infer, -2 copy, -3 drop a 1, -4 copy the rest, -5 merge two, -6 split one)."""
    out[...] = a.reshape(out.shape)


