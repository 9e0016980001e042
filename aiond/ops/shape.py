"""The rest of MXNet 1.9.1's shape surface: reshape_like, SwapAxis, reverse,
tile, repeat, Concat, stack, SliceChannel, slice_like, Pad, broadcast_like,
broadcast_axis, shape_array and size_array.

MXNet behaviours kept on purpose (checked against MXNet 1.9.1):

- repeat(..., repeats=0) has shape (0,) whatever the axis.

Extensions over MXNet (where MXNet raises): Pad works on any rank and on
every axis (MXNet: 4-D/5-D, first two axes unpadded), broadcast_axis takes
negative axes. Negative pad widths (which MXNet turns into a crop) raise here.

The special functions, hard_sigmoid, logical_not, where and add_n live in
special.py, the indexing ops (take ... SequenceReverse, boolean_mask) in
indexing.py, sort/argsort/topk/argmax_channel in sorting.py; ``digamma``
and ``boolean_mask`` stay importable from here.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._common import (_I64, _axis, _n_inputs, _no_grad, _outs, _p_axes, _p_opt_int,
                      _p_opt_shape, _prod, _un)
from ._rules import fmt, same_dtype
from ._nn_util import _errstate
from .registry import Param, p_bool, p_float, p_int, p_shape, p_str, register
from .special import digamma  # noqa: F401  (re-exported)


# ============================================================== reshape_like


def _like_range(ndim, side, begin, end):
    b = 0 if begin is None else begin
    if b < 0:
        b += ndim
    e = ndim if end is None else end
    if e < 0:
        e += ndim
    if e > ndim:
        raise OpError("%s_end=%s is invalid for an array of %d dimension(s)" % (side, end, ndim))
    if not b < e:
        raise OpError("invalid range %s_begin=%s, %s_end=%s for an array of %d dimension(s)"
                      % (side, begin, side, end, ndim))
    if e < 0 or b < 0:
        raise OpError("%s_begin=%s is invalid for an array of %d dimension(s)"
                      % (side, begin, ndim))
    return b, e


def _reshape_like_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("lhs", "rhs"))
    ls, rs = tuple(shapes[0]), tuple(shapes[1])
    lb, le = _like_range(len(ls), "lhs", attrs["lhs_begin"], attrs["lhs_end"])
    rb, re_ = _like_range(len(rs), "rhs", attrs["rhs_begin"], attrs["rhs_end"])
    out = ls[:lb] + rs[rb:re_] + ls[le:]
    if _prod(out) != _prod(ls):
        raise ShapeError("cannot reshape lhs of shape %s to %s (from rhs %s): different sizes"
                         % (fmt(ls), fmt(out), fmt(rs)))
    return (out,), (dtypes[0],)


_OPT_INT = lambda name, doc: Param(name, _p_opt_int, None, doc)  # noqa: E731


@register("reshape_like", inputs=("lhs", "rhs"), params=[
    _OPT_INT("lhs_begin", "First lhs axis to replace (default 0)."),
    _OPT_INT("lhs_end", "Axis after the last lhs axis to replace (default: ndim)."),
    _OPT_INT("rhs_begin", "First rhs axis to take (default 0)."),
    _OPT_INT("rhs_end", "Axis after the last rhs axis to take (default: ndim).")],
    infer=_reshape_like_rule)
def reshape_like(xp, lhs, rhs, out, lhs_begin=None, lhs_end=None, rhs_begin=None, rhs_end=None):
    """reshape_like(lhs, rhs): lhs reshaped to rhs's shape (or lhs axes
    [lhs_begin, lhs_end) replaced by rhs axes [rhs_begin, rhs_end))."""
    xp.copyto(out, lhs.reshape(out.shape))


# ========================================================= swapaxes / flip


def _swap_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = list(shapes[0])
    a = _axis(attrs["dim1"], len(s), "dim1")
    b = _axis(attrs["dim2"], len(s), "dim2")
    s[a], s[b] = s[b], s[a]
    return (tuple(s),), (dtypes[0],)


@register("SwapAxis", params=[Param("dim1", p_int, 0, "the first axis to be swapped."),
                              Param("dim2", p_int, 0, "the second axis to be swapped.")],
          infer=_swap_rule, aliases=("swapaxes",))
def swap_axis(xp, data, out, dim1=0, dim2=0):
    """SwapAxis(data, dim1=0, dim2=0): data with two axes interchanged."""
    xp.copyto(out, xp.swapaxes(data, dim1, dim2))


def _flip_axes(attrs, ndim):
    ax = attrs["axis"]
    return tuple(sorted(set(_axis(a, ndim) for a in ax)))


def _flip_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    _flip_axes(attrs, len(shapes[0]))
    return (tuple(shapes[0]),), (dtypes[0],)


@register("reverse", params=[Param("axis", _p_axes, doc="The axis (or axes) to reverse.")],
          infer=_flip_rule, aliases=("flip",))
def reverse(xp, data, out, axis):
    """reverse(data, axis): data with the order of elements along axis reversed."""
    xp.copyto(out, xp.flip(data, axis=_flip_axes({"axis": axis}, data.ndim)))


# ============================================================ tile / repeat


def _tile_shapes(shape, reps):
    shape, reps = tuple(shape), tuple(reps)
    n = max(len(shape), len(reps))
    s = (1,) * (n - len(shape)) + shape
    r = (1,) * (n - len(reps)) + reps
    return s, r


def _tile_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    reps = attrs["reps"]
    for r in reps:
        if r < 0:
            raise OpError("reps=%s: repetitions must be non-negative" % (tuple(reps),))
    if 0 in reps:
        from ..util import is_np_shape
        if not is_np_shape():       # MXNet: a 0 dimension is an unknown shape there
            raise OpError("reps=%s: a repetition of 0 gives a zero-size output, which needs "
                          "NumPy-shape semantics (mx.np_shape())" % (tuple(reps),))
    s, r = _tile_shapes(shapes[0], reps)
    return (tuple(a * b for a, b in zip(s, r)),), (dtypes[0],)


@register("tile", params=[Param("reps", p_shape, doc="The number of times to repeat along "
                                "each axis (numpy's rules when the lengths differ).")],
          infer=_tile_rule)
def tile(xp, data, out, reps):
    """tile(data, reps): data repeated reps[i] times along axis i."""
    xp.copyto(out, xp.tile(data, tuple(reps)) if reps else data)


def _repeat_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = tuple(shapes[0])
    r = attrs["repeats"]
    if r < 0:
        raise OpError("repeats=%d cannot be negative" % r)
    ax = attrs["axis"]
    if ax is not None:
        ax = _axis(ax, len(s))
    if r == 0:
        return ((0,),), (dtypes[0],)       # MXNet: shape (0,) whatever the axis
    if ax is None:
        return ((_prod(s) * r,),), (dtypes[0],)
    return (s[:ax] + (s[ax] * r,) + s[ax + 1:],), (dtypes[0],)


@register("repeat", params=[Param("repeats", p_int, doc="The number of repetitions."),
                            Param("axis", _p_opt_int, None, "The axis (None: the flattened "
                                  "input).")], infer=_repeat_rule)
def repeat(xp, data, out, repeats, axis=None):
    """repeat(data, repeats, axis=None): each element repeated ``repeats`` times."""
    if out.size:
        xp.copyto(out, xp.repeat(data, repeats, axis=axis).reshape(out.shape))


# =============================================================== concat etc.


def _check_num_args(attrs, n):
    if n == 0:
        raise OpError("needs at least one input")
    if attrs["num_args"] and attrs["num_args"] != n:
        raise OpError("num_args=%d but %d input(s) were given" % (attrs["num_args"], n))


def _concat_rule(attrs, shapes, dtypes):
    _check_num_args(attrs, len(shapes))
    s0 = tuple(shapes[0])
    ax = _axis(attrs["dim"], len(s0), "dim")
    total = 0
    for i, s in enumerate(shapes):
        s = tuple(s)
        if len(s) != len(s0) or s[:ax] != s0[:ax] or s[ax + 1:] != s0[ax + 1:]:
            raise ShapeError("input %d has shape %s but input 0 has %s; they may differ only "
                             "along dim=%d" % (i, fmt(s), fmt(s0), attrs["dim"]))
        total += s[ax]
    return (s0[:ax] + (total,) + s0[ax + 1:],), (same_dtype(dtypes),)


_NUM_ARGS = Param("num_args", p_int, 0, "Number of inputs (filled in from the inputs given).")


@register("Concat", inputs=("*data",), variadic=True, aliases=("concat",),
          params=[Param("dim", p_int, 1, "the dimension to be concated."), _NUM_ARGS],
          infer=_concat_rule)
def concat(xp, *data, out, dim=1, num_args=0):
    """Concat(*data, dim=1): arrays joined along axis dim."""
    xp.concatenate(data, axis=dim % out.ndim, out=out)


def _stack_rule(attrs, shapes, dtypes):
    _check_num_args(attrs, len(shapes))
    s0 = tuple(shapes[0])
    for i, s in enumerate(shapes):
        if tuple(s) != s0:
            raise ShapeError("input %d has shape %s but input 0 has %s; stack needs equal "
                             "shapes" % (i, fmt(s), fmt(s0)))
    nd = len(s0) + 1
    ax = _axis(attrs["axis"], nd)
    return (s0[:ax] + (len(shapes),) + s0[ax:],), (same_dtype(dtypes),)


@register("stack", inputs=("*data",), variadic=True,
          params=[Param("axis", p_int, 0, "The axis in the result array along which the input "
                        "arrays are stacked."), _NUM_ARGS], infer=_stack_rule)
def stack(xp, *data, out, axis=0, num_args=0):
    """stack(*data, axis=0): arrays of equal shape joined along a new axis."""
    xp.stack(data, axis=axis % out.ndim, out=out)


def _split_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = tuple(shapes[0])
    n = attrs["num_outputs"]
    ax = _axis(attrs["axis"], len(s))
    if n < 1:
        raise OpError("num_outputs=%d must be at least 1" % n)
    if s[ax] % n:
        raise ShapeError("cannot split axis %d of shape %s into num_outputs=%d equal parts "
                         "(%d is not divisible by %d)" % (ax, fmt(s), n, s[ax], n))
    k = s[ax] // n
    if attrs["squeeze_axis"]:
        if k != 1:
            raise ShapeError("squeeze_axis=True needs axis %d of size num_outputs=%d, got %d"
                             % (ax, n, s[ax]))
        o = s[:ax] + s[ax + 1:]
    else:
        o = s[:ax] + (k,) + s[ax + 1:]
    return (o,) * n, (dtypes[0],) * n


@register("SliceChannel", params=[
    Param("num_outputs", p_int, doc="Number of splits."),
    Param("axis", p_int, 1, "Axis along which to split."),
    Param("squeeze_axis", p_bool, False, "Remove the split axis (its parts must have size 1).")],
    infer=_split_rule, aliases=("split",), num_outputs=lambda a: a["num_outputs"],
    num_visible=lambda a: a["num_outputs"])
def slice_channel(xp, data, out, num_outputs, axis=1, squeeze_axis=False):
    """SliceChannel(data, num_outputs, axis=1, squeeze_axis=False): a list of
    num_outputs equal parts along axis (one array when num_outputs=1)."""
    outs = _outs(out)
    ax = axis % data.ndim
    k = data.shape[ax] // num_outputs
    key = [slice(None)] * data.ndim
    for i, o in enumerate(outs):
        key[ax] = slice(i * k, (i + 1) * k)
        xp.copyto(o, data[tuple(key)].reshape(o.shape))


# ================================================================ slice_like


def _slice_like_axes(attrs, s, like):
    axes = attrs["axes"]
    if not axes:
        if len(like) != len(s):
            raise ShapeError("shape_like has %d dimension(s) but data has %d; without axes all "
                             "dimensions are sliced" % (len(like), len(s)))
        return tuple(range(len(s)))
    res = []
    for a in axes:
        b = a + len(s) if a < 0 else a
        if not 0 <= b < len(s):
            raise OpError("axes=%s: axis %d is out of range for data of shape %s"
                          % (tuple(axes), a, fmt(s)))
        if b >= len(like):
            raise OpError("axes=%s: axis %d is out of range for shape_like of shape %s"
                          % (tuple(axes), a, fmt(like)))
        res.append(b)
    return tuple(res)


def _slice_like_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data", "shape_like"))
    s, like = tuple(shapes[0]), tuple(shapes[1])
    out = list(s)
    for a in _slice_like_axes(attrs, s, like):
        if like[a] > s[a]:
            raise ShapeError("axis %d of shape_like (%d) exceeds data's (%d)" % (a, like[a], s[a]))
        out[a] = like[a]
    return (tuple(out),), (dtypes[0],)


@register("slice_like", inputs=("data", "shape_like"),
          params=[Param("axes", _p_axes, (), "Axes to slice (default: all).")],
          infer=_slice_like_rule)
def slice_like(xp, data, shape_like, out, axes=()):
    """slice_like(data, shape_like, axes=()): data[:n0, :n1, ...] with shape_like's sizes."""
    xp.copyto(out, data[tuple(slice(0, n) for n in out.shape)])


# ======================================================================= Pad


def _pad_pairs(attrs, ndim):
    pw = attrs["pad_width"]
    if len(pw) != 2 * ndim:
        raise OpError("pad_width=%s has %d entries but data has %d dimension(s); it needs "
                      "2 * ndim = %d (before, after) pairs" % (tuple(pw), len(pw), ndim, 2 * ndim))
    if any(p < 0 for p in pw):
        raise OpError("pad_width=%s: pad widths must be non-negative" % (tuple(pw),))
    return tuple((pw[2 * i], pw[2 * i + 1]) for i in range(ndim))


def _pad_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = tuple(shapes[0])
    pairs = _pad_pairs(attrs, len(s))
    if attrs["mode"] == "reflect":
        for i, (b, a) in enumerate(pairs):
            if (b or a) and (b >= s[i] or a >= s[i]):
                raise OpError("pad_width=%s: mode='reflect' needs pad widths smaller than the "
                              "axis size (axis %d has size %d)"
                              % (tuple(attrs["pad_width"]), i, s[i]))
    if attrs["mode"] == "edge":
        for i, (b, a) in enumerate(pairs):
            if (b or a) and s[i] == 0:
                raise OpError("mode='edge' cannot pad the empty axis %d" % i)
    return (tuple(d + b + a for d, (b, a) in zip(s, pairs)),), (dtypes[0],)


_PAD = [Param("mode", p_str, doc="constant, edge or reflect padding.",
              choices=("constant", "edge", "reflect")),
        Param("pad_width", p_shape, doc="(before, after) widths for every axis, flattened."),
        Param("constant_value", p_float, 0.0, "The value used for padding when mode is "
              "'constant'.")]


@register("Pad", params=_PAD, infer=_pad_rule, aliases=("pad",))
def pad(xp, data, out, mode, pad_width, constant_value=0.0):
    """Pad(data, mode, pad_width, constant_value=0): data padded on every axis
    by (before, after) widths: a constant, the edge values or a reflection."""
    pairs = _pad_pairs({"pad_width": pad_width}, data.ndim)
    if mode == "constant":
        with _errstate():
            out[...] = np.array(constant_value).astype(out.dtype)
        out[tuple(slice(b, b + d) for (b, _), d in zip(pairs, data.shape))] = data
    else:
        xp.copyto(out, xp.pad(data, pairs, mode=mode))


@register("_backward_Pad", inputs=("ograd",), params=_PAD + [Param("shape", p_shape)],
          infer=lambda at, s, d: ((tuple(at["shape"]),), (d[0],)))
def _backward_pad(xp, ograd, out, mode, pad_width, constant_value=0.0, shape=()):
    """_backward_Pad(ograd, mode, pad_width, shape): the gradient of Pad for an
    input of ``shape`` (padded positions add into the values they copy)."""
    pairs = _pad_pairs({"pad_width": pad_width}, len(shape))
    g = ograd
    if mode == "constant":
        xp.copyto(out, g[tuple(slice(b, b + d) for (b, _), d in zip(pairs, shape))])
        return
    for ax, ((b, a), n) in enumerate(zip(pairs, shape)):
        if not (b or a):
            continue
        src = xp.pad(xp.arange(n), (b, a), mode=mode)       # output position -> input position
        gm = xp.moveaxis(g, ax, 0)
        acc = xp.zeros((n,) + gm.shape[1:], dtype=g.dtype)
        xp.add.at(acc, src, gm)
        g = xp.moveaxis(acc, 0, ax)
    xp.copyto(out, g)


# ============================================================ broadcast_like


def _bcast_like_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("lhs", "rhs"))
    ls, rs = tuple(shapes[0]), tuple(shapes[1])
    la, ra = attrs["lhs_axes"], attrs["rhs_axes"]
    if la is None and ra is None:
        if len(ls) != len(rs):
            raise ShapeError("lhs of shape %s cannot be broadcast like rhs of shape %s (different "
                             "numbers of dimensions)" % (fmt(ls), fmt(rs)))
        out = []
        for i, (a, b) in enumerate(zip(ls, rs)):
            if a != b and a != 1:
                raise ShapeError("lhs of shape %s cannot be broadcast to %s (axis %d)"
                                 % (fmt(ls), fmt(rs), i))
            out.append(b)
        return (tuple(out),), (dtypes[0],)
    if la == () or ra == ():
        raise OpError("Empty axes tuple is not allowed (lhs_axes=%s, rhs_axes=%s)" % (la, ra))
    if la is None or ra is None or len(la) != len(ra):
        raise OpError("lhs_axes=%s and rhs_axes=%s must both be given, with the same length"
                      % (la, ra))
    out = list(ls)
    for a, b in zip(la, ra):
        a2 = _axis(a, len(ls), "lhs_axes")
        b2 = _axis(b, len(rs), "rhs_axes")
        if ls[a2] != 1 and ls[a2] != rs[b2]:
            raise ShapeError("lhs axis %d of size %d cannot be broadcast to %d (rhs axis %d)"
                             % (a2, ls[a2], rs[b2], b2))
        out[a2] = rs[b2]
    return (tuple(out),), (dtypes[0],)


@register("broadcast_like", inputs=("lhs", "rhs"), params=[
    Param("lhs_axes", _p_opt_shape, None, "Axes of lhs to broadcast (default: all)."),
    Param("rhs_axes", _p_opt_shape, None, "Axes of rhs whose sizes to use (default: all).")],
    infer=_bcast_like_rule)
def broadcast_like(xp, lhs, rhs, out, lhs_axes=None, rhs_axes=None):
    """broadcast_like(lhs, rhs, lhs_axes=None, rhs_axes=None): lhs broadcast to
    rhs's shape (or to rhs's sizes on the given axes)."""
    xp.copyto(out, xp.broadcast_to(lhs, out.shape))


def _bcast_axis_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = list(shapes[0])
    axes, sizes = attrs["axis"], attrs["size"]
    if len(axes) != len(sizes):
        raise OpError("axis=%s and size=%s must have the same length" % (tuple(axes), tuple(sizes)))
    for a, n in zip(axes, sizes):
        a2 = _axis(a, len(s))
        if s[a2] != 1:
            raise ShapeError("axis %d has size %d; broadcast_axis needs size-1 axes" % (a, s[a2]))
        if n < 0:
            raise OpError("size=%s cannot be negative" % (tuple(sizes),))
        s[a2] = n
    return (tuple(s),), (dtypes[0],)


@register("broadcast_axis", params=[
    Param("axis", _p_axes, (), "The axes to perform the broadcasting."),
    Param("size", _p_axes, (), "Target sizes of the broadcasting axes.")],
    infer=_bcast_axis_rule, aliases=("broadcast_axes",))
def broadcast_axis(xp, data, out, axis=(), size=()):
    """broadcast_axis(data, axis, size): size-1 axes broadcast to the given sizes."""
    xp.copyto(out, xp.broadcast_to(data, out.shape))


# ================================================== shape_array / size_array


@register("shape_array", infer=lambda at, s, d: (((len(s[0]),),), (_I64,)))
def shape_array(xp, data, out):
    """shape_array(data): data's shape as a 1-D int64 array."""
    out[...] = xp.asarray(data.shape, dtype=np.int64)


@register("size_array", infer=lambda at, s, d: (((1,),), (_I64,)))
def size_array(xp, data, out):
    """size_array(data): data's size as a (1,) int64 array."""
    out[...] = data.size


# ============================================================ gradient table
from ._grad import set_grads, unbroadcast  # noqa: E402


def _reshape_like_grad(F, attrs, ins, outs, og):
    return [og[0].reshape(ins[0].shape), None]


def _flip_grad(F, attrs, ins, outs, og):
    return [F.reverse(og[0], axis=attrs["axis"])]


def _tile_grad(F, attrs, ins, outs, og):
    x, g = ins[0], og[0]
    s, r = _tile_shapes(x.shape, attrs["reps"])
    if not attrs["reps"]:
        return [g]
    inter = []
    for a, b in zip(r, s):
        inter += [a, b]
    red = tuple(range(0, 2 * len(s), 2))
    return [F.sum(g.reshape(tuple(inter)), axis=red).reshape(x.shape)]


def _repeat_grad(F, attrs, ins, outs, og):
    x, g = ins[0], og[0]
    r, ax = attrs["repeats"], attrs["axis"]
    if r == 0 or x.size == 0:
        return [F.zeros_like(x)]
    if ax is None:
        return [F.sum(g.reshape((x.size, r)), axis=1).reshape(x.shape)]
    ax %= x.ndim
    s = tuple(x.shape)
    return [F.sum(g.reshape(s[:ax] + (s[ax], r) + s[ax + 1:]), axis=ax + 1)]


def _concat_grad(F, attrs, ins, outs, og):
    ax = attrs["dim"] % ins[0].ndim
    res, b = [], 0
    for x in ins:
        n = x.shape[ax]
        res.append(F.slice_axis(og[0], axis=ax, begin=b, end=b + n))
        b += n
    return res


def _stack_grad(F, attrs, ins, outs, og):
    ax = attrs["axis"] % (ins[0].ndim + 1)
    if len(ins) == 1:
        return [og[0].reshape(ins[0].shape)]
    return list(F.split(og[0], num_outputs=len(ins), axis=ax, squeeze_axis=True))


def _split_grad(F, attrs, ins, outs, og):
    x = ins[0]
    ax = attrs["axis"] % x.ndim
    gs = og
    if attrs["squeeze_axis"]:
        s = tuple(x.shape)
        gs = [g.reshape(s[:ax] + (1,) + s[ax + 1:]) for g in og]
    if len(gs) == 1:
        return [gs[0].reshape(x.shape)]
    return [F.concat(*gs, dim=ax)]


def _slice_like_grad(F, attrs, ins, outs, og):
    x, g = ins[0], og[0]
    return [F._internal._slice_assign(F.zeros_like(x), g, begin=(0,) * x.ndim,
                                      end=tuple(g.shape), step=()), None]


def _pad_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_Pad(og[0], shape=ins[0].shape, **attrs)]


def _bcast_like_grad(F, attrs, ins, outs, og):
    return [unbroadcast(F, og[0], ins[0].shape), None]


set_grads({
    "reshape_like": _reshape_like_grad,
    "SwapAxis": _un(lambda F, x, y, g, a: F.swapaxes(g, dim1=a["dim1"], dim2=a["dim2"])),
    "reverse": _flip_grad,
    "tile": _tile_grad,
    "repeat": _repeat_grad,
    "Concat": _concat_grad,
    "stack": _stack_grad,
    "SliceChannel": _split_grad,
    "slice_like": _slice_like_grad,
    "Pad": _pad_grad,
    "broadcast_like": _bcast_like_grad,
    "broadcast_axis": _un(lambda F, x, y, g, a: unbroadcast(F, g, x.shape)),
    "shape_array": _no_grad,
    "size_array": _no_grad,
})
