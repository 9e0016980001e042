"""Shape, copy and linear-algebra ops: dot, batch_dot, Reshape (MXNet's
special codes), transpose, expand_dims, Flatten, squeeze, broadcast_to,
slice/slice_axis, the slice-assign ops behind ``__setitem__``, Cast, clip,
and the general indexing ops behind advanced ``__getitem__``."""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError, ShapeError
from ._rules import fmt, norm_axis, same_dtype, unary
from .elemwise import cast_scalar
from .registry import Param, p_axis, p_bool, p_dtype, p_float, p_int, p_shape, register

# ------------------------------------------------------------------- dot


def _dot_cost(attrs, shapes, oshapes):
    # output size x contracted length (whichever operand axis is contracted)
    a = shapes[0]
    k = (a[0] if attrs.get("transpose_a") and len(a) > 1 else a[-1]) if a else 1
    if len(a) == 3 and attrs.get("transpose_a"):
        k = a[1]
    n = 1
    for d in oshapes[0]:
        n *= d
    return n * k // 8


def _dot_axes(a, b, ta, tb):
    """The contracted axes of MXNet's dot: lhs's last (its first if
    transpose_a), rhs's first (its last if transpose_b)."""
    return (0 if ta else len(a) - 1), (len(b) - 1 if tb else 0)


def _dot_rule(attrs, shapes, dtypes):
    a, b = shapes
    same_dtype(dtypes)
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    if len(a) == 0 or len(b) == 0:
        raise ShapeError("needs arrays of at least 1 dimension, got %s and %s" % (fmt(a), fmt(b)))
    ka, kb = _dot_axes(a, b, ta, tb)
    if a[ka] != b[kb]:
        raise ShapeError("shapes %s and %s do not match: %d (%s axis of lhs%s) != "
                         "%d (%s axis of rhs%s)"
                         % (fmt(a), fmt(b), a[ka], "first" if ka == 0 else "last",
                            ", transpose_a" if ta else "", b[kb], "first" if kb == 0 else "last",
                            ", transpose_b" if tb else ""))
    out = tuple(a[:ka]) + tuple(a[ka + 1:]) + tuple(b[:kb]) + tuple(b[kb + 1:])
    return (out or (1,),), (dtypes[0],)


# Multiply-adds below which a matmul runs whole on one thread: sharing its
# rows with a worker costs a wake-up and GIL hand-offs (tens of us), which a
# GEMM of an MLP layer (32-128 x 784 x 256: 6-26 M) does not win back
# (measured: 1.3 -> 2.3 ms a batch-32 MLP step with splits from 0.5 M).
MATMUL_SPLIT_MACS = 1 << 26


def _dot_rows(xp, ins, out, attrs):
    """2-D dot by ranges of output rows (so both workers share one matmul)."""
    a, b = ins
    if a.ndim != 2 or b.ndim != 2:
        return 0, None
    A = a.T if attrs["transpose_a"] else a
    B = b.T if attrs["transpose_b"] else b
    if A.shape[0] * A.shape[1] * B.shape[1] < MATMUL_SPLIT_MACS:
        return 0, None

    def run(lo, hi):
        xp.matmul(A[lo:hi], B, out=out[lo:hi])
    return out.shape[0], run


@register("dot", inputs=("lhs", "rhs"), params=[
    Param("transpose_a", p_bool, False), Param("transpose_b", p_bool, False),
    Param("forward_stype", lambda v: v, None)], infer=_dot_rule, inline=_dot_cost,
    rows=_dot_rows)
def dot(xp, lhs, rhs, out, transpose_a=False, transpose_b=False, forward_stype=None):
    """dot(lhs, rhs, transpose_a=False, transpose_b=False): matrix product;
    N-D arrays contract lhs's last axis (first if transpose_a) with rhs's
    first (last if transpose_b)."""
    if lhs.ndim == 2 and rhs.ndim == 2:
        a = lhs.T if transpose_a else lhs
        b = rhs.T if transpose_b else rhs
        xp.matmul(a, b, out=out)
        return
    ka, kb = _dot_axes(lhs.shape, rhs.shape, transpose_a, transpose_b)
    r = xp.tensordot(lhs, rhs, axes=([ka], [kb]))
    out[...] = r.reshape(out.shape)


def _batch_dot_rule(attrs, shapes, dtypes):
    a, b = shapes
    same_dtype(dtypes)
    if len(a) < 3 or len(a) != len(b):
        raise ShapeError("needs two N-D arrays with N >= 3, got %s and %s" % (fmt(a), fmt(b)))
    m, k = (a[-1], a[-2]) if attrs["transpose_a"] else (a[-2], a[-1])
    k2, n = (b[-1], b[-2]) if attrs["transpose_b"] else (b[-2], b[-1])
    if a[:-2] != b[:-2] or k != k2:
        raise ShapeError("shapes %s and %s do not match (transpose_a=%s, transpose_b=%s)"
                         % (fmt(a), fmt(b), attrs["transpose_a"], attrs["transpose_b"]))
    return (tuple(a[:-2]) + (m, n),), (dtypes[0],)


@register("batch_dot", inputs=("lhs", "rhs"), params=[
    Param("transpose_a", p_bool, False), Param("transpose_b", p_bool, False),
    Param("forward_stype", lambda v: v, None)], infer=_batch_dot_rule, inline=_dot_cost)
def batch_dot(xp, lhs, rhs, out, transpose_a=False, transpose_b=False, forward_stype=None):
    """batch_dot(lhs, rhs): a matrix product per batch entry of N-D arrays (N >= 3)."""
    a = xp.swapaxes(lhs, -1, -2) if transpose_a else lhs
    b = xp.swapaxes(rhs, -1, -2) if transpose_b else rhs
    xp.matmul(a, b, out=out)

# --------------------------------------------------------------- reshape


def infer_reshape(src, target, reverse=False):
    """MXNet's Reshape rule: 0 copy, -1 infer, -2 copy rest, -3 merge two,
    -4 split one into the next two given dims."""
    src = list(src)
    tgt = list(target)
    if reverse:
        src.reverse()
        tgt.reverse()
    out = []
    si = 0
    inf = -1
    i = 0
    n = len(tgt)
    try:
        while i < n:
            d = tgt[i]
            if d == 0:
                out.append(src[si])
                si += 1
            elif d == -1:
                if inf >= 0:
                    raise ShapeError("only one dimension can be -1")
                inf = len(out)
                out.append(1)
                si += 1
            elif d == -2:
                out.extend(src[si:])
                si = len(src)
            elif d == -3:
                out.append(src[si] * src[si + 1])
                si += 2
            elif d == -4:
                d0 = src[si]
                si += 1
                d1, d2 = tgt[i + 1], tgt[i + 2]
                i += 2
                if d1 == -1 and d2 == -1:
                    raise ShapeError("-4 split dims cannot both be -1")
                if d1 == -1:
                    d1 = d0 // d2
                if d2 == -1:
                    d2 = d0 // d1
                if d1 * d2 != d0:
                    raise ShapeError("-4 split dims %d, %d do not divide dimension %d" % (d1, d2, d0))
                out.extend([d1, d2])
            elif d > 0:
                out.append(d)
                si += 1
            else:
                raise ShapeError("invalid dimension %d in shape %s" % (d, tuple(target)))
            i += 1
    except IndexError:
        raise ShapeError("shape %s refers to more dimensions than the input's %s"
                         % (tuple(target), fmt(tuple(src[::-1] if reverse else src)))) from None
    total = 1
    for d in src:
        total *= d
    if inf >= 0:
        rest = 1
        for j, d in enumerate(out):
            if j != inf:
                rest *= d
        if rest == 0 or total % rest:
            raise ShapeError("cannot infer the -1 dimension: %d elements do not divide into %s"
                             % (total, tuple(target)))
        out[inf] = total // rest
    if reverse:
        out.reverse()
    size = 1
    for d in out:
        size *= d
    if size != total:
        raise ShapeError("cannot reshape array of shape %s into shape %s (%d elements vs %d)"
                         % (fmt(tuple(src[::-1] if reverse else src)), tuple(target), total, size))
    return tuple(out)


def _reshape_rule(attrs, shapes, dtypes):
    target = attrs.get("target_shape")
    if not attrs["shape"] and target:
        return (_legacy_target_shape(shapes[0], target, attrs.get("keep_highest", False)),), \
            (dtypes[0],)
    return (infer_reshape(shapes[0], attrs["shape"], attrs["reverse"]),), (dtypes[0],)


def _legacy_target_shape(src, target, keep_highest):
    """MXNet's deprecated ``target_shape``: one 0 is inferred from the size;
    ``keep_highest`` keeps the first dimension."""
    out = list(target)
    start = 0
    if keep_highest:
        out[0] = src[0]
        start = 1
    zeros = [i for i in range(start, len(out)) if out[i] == 0]
    total = 1
    for d in src:
        total *= d
    if len(zeros) == 1:
        out[zeros[0]] = 1
        rest = 1
        for d in out:
            rest *= d
        out[zeros[0]] = total // rest if rest else 0
    size = 1
    for d in out:
        size *= d
    if size != total:
        raise ShapeError("cannot reshape array of shape %s into target_shape %s (%d elements "
                         "vs %d)" % (fmt(tuple(src)), tuple(target), total, size))
    return tuple(out)


@register("Reshape", params=[Param("shape", p_shape, ()), Param("reverse", p_bool, False),
                             Param("target_shape", p_shape, None), Param("keep_highest", p_bool, False)],
          infer=_reshape_rule, aliases=("reshape",), elemwise=True)
def Reshape(xp, data, out, shape=(), reverse=False, target_shape=None, keep_highest=False):
    """Reshape(data, shape, reverse=False): a copy with a new shape (MXNet codes)."""
    xp.copyto(out, data.reshape(out.shape))


def _flatten_rule(attrs, shapes, dtypes):
    s = shapes[0]
    rest = 1
    for d in s[1:]:
        rest *= d
    return ((s[0] if s else 1, rest),), (dtypes[0],)


@register("Flatten", infer=_flatten_rule, aliases=("flatten",))
def Flatten(xp, data, out):
    """Flatten(data): (d0, d1*...*dn)."""
    xp.copyto(out, data.reshape(out.shape))


def _expand_rule(attrs, shapes, dtypes):
    s = shapes[0]
    ax = attrs["axis"]
    nd = len(s) + 1
    if not -nd <= ax < nd:
        raise OpError("axis=%d is out of range for the %d-D result" % (ax, nd))
    ax %= nd
    return (tuple(s[:ax]) + (1,) + tuple(s[ax:]),), (dtypes[0],)


@register("expand_dims", params=[Param("axis", p_int)], infer=_expand_rule)
def expand_dims(xp, data, out, axis):
    """expand_dims(data, axis): insert a size-1 axis."""
    xp.copyto(out, data.reshape(out.shape))


def _squeeze_rule(attrs, shapes, dtypes):
    s = shapes[0]
    ax = attrs["axis"]
    if ax is None:
        out = tuple(d for d in s if d != 1)
    else:
        axes = (ax,) if isinstance(ax, int) else ax
        axes = set(norm_axis(a, len(s)) for a in axes)
        for a in axes:
            if s[a] != 1:
                raise ShapeError("cannot squeeze axis %d of size %d" % (a, s[a]))
        out = tuple(d for i, d in enumerate(s) if i not in axes)
    return (out or (1,),), (dtypes[0],)


@register("squeeze", params=[Param("axis", p_axis, None)], infer=_squeeze_rule)
def squeeze(xp, data, out, axis=None):
    """squeeze(data, axis=None): drop size-1 axes."""
    xp.copyto(out, data.reshape(out.shape))


def _transpose_rule(attrs, shapes, dtypes):
    s = shapes[0]
    axes = attrs["axes"]
    if not axes:
        return (tuple(reversed(s)),), (dtypes[0],)
    if sorted(a % len(s) for a in axes) != list(range(len(s))):
        raise ShapeError("axes %s are not a permutation of the %d axes" % (tuple(axes), len(s)))
    return (tuple(s[a] for a in axes),), (dtypes[0],)


@register("transpose", params=[Param("axes", p_shape, ())], infer=_transpose_rule)
def transpose(xp, data, out, axes=()):
    """transpose(data, axes=()): permute axes (reverse them by default)."""
    xp.copyto(out, xp.transpose(data, axes or None))


def _bto_rule(attrs, shapes, dtypes):
    s = shapes[0]
    tgt = attrs["shape"]
    if len(tgt) < len(s):
        raise ShapeError("cannot broadcast %s to %s" % (fmt(s), fmt(tgt)))
    ps = (1,) * (len(tgt) - len(s)) + tuple(s)
    out = []
    for x, t in zip(ps, tgt):
        if t == 0:
            t = x
        if x != t and x != 1:
            raise ShapeError("cannot broadcast %s to %s" % (fmt(s), fmt(tgt)))
        out.append(t)
    return (tuple(out),), (dtypes[0],)


@register("broadcast_to", params=[Param("shape", p_shape, ())], infer=_bto_rule)
def broadcast_to(xp, data, out, shape=()):
    """broadcast_to(data, shape): broadcast to shape (0 keeps a dim)."""
    xp.copyto(out, xp.broadcast_to(data.reshape((1,) * (out.ndim - data.ndim) + data.shape), out.shape))


def _cast_rule(attrs, shapes, dtypes):
    return (shapes[0],), (attrs["dtype"],)


@register("Cast", params=[Param("dtype", p_dtype)], infer=_cast_rule, aliases=("cast",),
          elemwise=True)
def Cast(xp, data, out, dtype=None):
    """Cast(data, dtype): convert to dtype."""
    xp.copyto(out, data, casting="unsafe")


@register("clip", params=[Param("a_min", p_float), Param("a_max", p_float)], infer=unary,
          elemwise=True)
def clip(xp, data, out, a_min, a_max):
    """clip(data, a_min, a_max): limit values to [a_min, a_max]."""
    if out.dtype.kind in "iub":
        # MXNet compares against the float bounds and casts the result (uint8 200
        # clipped to [10, 300] stays 200)
        x = xp.asarray(data, dtype=np.float64)
        r = xp.where(x > a_max, a_max, xp.where(x < a_min, a_min, x))
        with np.errstate(invalid="ignore", over="ignore"):
            xp.copyto(out, r, casting="unsafe")
        return
    lo, hi = out.dtype.type(a_min), out.dtype.type(a_max)
    if lo <= hi:
        xp.clip(data, lo, hi, out=out)
    else:       # MXNet: x > a_max ? a_max : (x < a_min ? a_min : x)
        xp.copyto(out, xp.where(data > hi, hi, xp.where(data < lo, lo, data)))

# ------------------------------------------------------------------ slicing


def _norm_begin_end_step(shape, begin, end, step):
    n = len(shape)
    if len(begin) > n or len(end) != len(begin) or (step and len(step) != len(begin)):
        raise ShapeError("begin %s, end %s and step %s do not fit an array of shape %s"
                         % (begin, end, step, fmt(shape)))
    sl = []
    for i in range(n):
        if i < len(begin):
            s = step[i] if step and step[i] is not None else 1
            if s == 0:
                raise OpError("slice step cannot be 0 (axis %d)" % i)
            sl.append(slice(begin[i], end[i], s))
        else:
            sl.append(slice(None))
    return tuple(sl)


def _p_tuple_none(v):
    from .registry import _lit
    v = _lit(v)
    if v is None:
        return ()
    if isinstance(v, int):
        return (v,)
    return tuple(None if x is None else int(x) for x in v)


_SLICE = [Param("begin", _p_tuple_none), Param("end", _p_tuple_none), Param("step", _p_tuple_none, ())]


def _slice_rule(attrs, shapes, dtypes):
    s = shapes[0]
    key = _norm_begin_end_step(s, attrs["begin"], attrs["end"], attrs["step"])
    out = tuple(len(range(*k.indices(d))) for k, d in zip(key, s))
    return (out,), (dtypes[0],)


@register("slice", params=_SLICE, infer=_slice_rule, aliases=("crop",))
def slice_op(xp, data, out, begin, end, step=()):
    """slice(data, begin, end, step=()): a (strided) slice; None keeps a bound open."""
    xp.copyto(out, data[_norm_begin_end_step(data.shape, begin, end, step)])


@register("_backward_slice", inputs=("ograd", "data"), params=_SLICE,
          infer=lambda attrs, shapes, dtypes: ((tuple(shapes[1]),), (dtypes[0],)))
def _backward_slice(xp, ograd, data, out, begin, end, step=()):
    """_backward_slice(ograd, data, begin, end, step): zeros of data's shape with
    ograd at the slice (the gradient of slice, written once into the output)."""
    out.fill(0)
    out[_norm_begin_end_step(out.shape, begin, end, step)] = ograd


def _slice_axis_key(attrs, shape):
    ax = norm_axis(attrs["axis"], len(shape))
    key = [slice(None)] * len(shape)
    key[ax] = slice(attrs["begin"], attrs["end"])
    return tuple(key)


def _slice_axis_rule(attrs, shapes, dtypes):
    s = shapes[0]
    key = _slice_axis_key(attrs, s)
    return (tuple(len(range(*k.indices(d))) for k, d in zip(key, s)),), (dtypes[0],)


@register("slice_axis", params=[Param("axis", p_int), Param("begin", p_int),
                                Param("end", lambda v: None if v in (None, "None") else p_int(v))],
          infer=_slice_axis_rule)
def slice_axis(xp, data, out, axis, begin, end):
    """slice_axis(data, axis, begin, end): slice along one axis."""
    xp.copyto(out, data[_slice_axis_key({"axis": axis, "begin": begin, "end": end}, data.shape)])


def _assign_rule(attrs, shapes, dtypes):
    return (shapes[0],), (dtypes[0],)


@register("_slice_assign", inputs=("lhs", "rhs"), params=_SLICE, infer=_assign_rule,
          aliases=("_crop_assign",))
def _slice_assign(xp, lhs, rhs, out, begin, end, step=()):
    """_slice_assign(lhs, rhs, begin, end, step): lhs with a slice replaced by rhs."""
    if out is not lhs:
        xp.copyto(out, lhs)
    out[_norm_begin_end_step(out.shape, begin, end, step)] = rhs


@register("_slice_assign_scalar", params=_SLICE + [Param("scalar", p_float, 0.0)],
          infer=_assign_rule, aliases=("_crop_assign_scalar",))
def _slice_assign_scalar(xp, data, out, begin, end, step=(), scalar=0.0):
    """_slice_assign_scalar(data, scalar, begin, end, step): data with a slice set to scalar."""
    if out is not data:
        xp.copyto(out, data)
    out[_norm_begin_end_step(out.shape, begin, end, step)] = cast_scalar(scalar, out.dtype)

# ---------------------------------------------------- general (numpy) indexing
# ``key`` is a tuple describing the index: ('s', start, stop, step) slices,
# ('i', int) integers, ('n',) None, ('e',) Ellipsis and ('a', k) for the k-th
# index array, which is an op input (so an NDArray index is a dependency).


def _build_key(key, arrays):
    out = []
    for k in key:
        t = k[0]
        if t == "s":
            out.append(slice(k[1], k[2], k[3]))
        elif t == "i":
            out.append(k[1])
        elif t == "n":
            out.append(None)
        elif t == "e":
            out.append(Ellipsis)
        else:
            a = arrays[k[1]]
            out.append(a.astype(np.intp) if a.dtype.kind != "b" else a)
    return tuple(out)


def _index_shape(shape, key, index_shapes):
    # evaluate the result shape with numpy on a zero-strided dummy
    dummy = np.broadcast_to(np.empty((), dtype=np.int8), shape)
    arrays = []
    for s in index_shapes:
        arrays.append(np.zeros(s, dtype=np.intp))
    try:
        return dummy[_build_key(key, arrays)].shape
    except IndexError as e:
        raise ShapeError(str(e)) from None


def _index_rule(attrs, shapes, dtypes):
    return (_index_shape(shapes[0], attrs["key"], shapes[1:]),), (dtypes[0],)


@register("_index", inputs=("data", "*indices"), params=[Param("key")], infer=_index_rule,
          variadic=True)
def _index(xp, data, *indices, out, key):
    """_index(data, *indices, key): numpy-style advanced indexing (a copy)."""
    for i, a in enumerate(indices):
        if a.dtype.kind != "b" and a.size:
            n = _axis_len(data.shape, key, i)
            ia = a.astype(np.intp)
            bad = ia[(ia < -n) | (ia >= n)]
            if bad.size:
                raise IndexError("index %d is out of bounds for axis %d with size %d"
                                 % (int(bad.flat[0]), _axis_of(data.shape, key, i), n))
    r = data[_build_key(key, indices)]
    xp.copyto(out, r.reshape(out.shape))


def _axis_of(shape, key, k):
    """The data axis the k-th index array indexes."""
    ax = 0
    nreal = sum(1 for t in key if t[0] in "sia")
    for t in key:
        if t[0] == "e":
            ax += len(shape) - nreal
        elif t[0] == "a" and t[1] == k:
            return ax
        elif t[0] != "n":
            ax += 1
    return max(len(shape) - 1, 0)


def _axis_len(shape, key, k):
    """Length of the data axis the k-th index array indexes."""
    ax = 0
    nreal = sum(1 for t in key if t[0] in "sia")
    for t in key:
        if t[0] == "e":
            ax += len(shape) - nreal
            continue
        if t[0] == "n":
            continue
        if t[0] == "a" and t[1] == k:
            return shape[ax]
        ax += 1
    return shape[-1] if shape else 0


def _index_assign_rule(attrs, shapes, dtypes):
    return (shapes[0],), (dtypes[0],)


@register("_index_assign", inputs=("data", "value", "*indices"), params=[Param("key")],
          infer=_index_assign_rule, variadic=True)
def _index_assign(xp, data, value, *indices, out, key):
    """_index_assign(data, value, *indices, key): data with data[key] = value."""
    if out is not data:
        xp.copyto(out, data)
    out[_build_key(key, indices)] = value


@register("_index_assign_scalar", inputs=("data", "*indices"),
          params=[Param("key"), Param("scalar", p_float, 0.0)], infer=_index_assign_rule,
          variadic=True)
def _index_assign_scalar(xp, data, *indices, out, key, scalar=0.0):
    """_index_assign_scalar(data, *indices, key, scalar): data with data[key] = scalar."""
    if out is not data:
        xp.copyto(out, data)
    out[_build_key(key, indices)] = cast_scalar(scalar, out.dtype)


@register("_index_add", inputs=("data", "value", "*indices"), params=[Param("key")],
          infer=_index_assign_rule, variadic=True)
def _index_add(xp, data, value, *indices, out, key):
    """_index_add(data, value, *indices, key): data with value added at data[key]
    (repeated indices accumulate); the gradient of advanced indexing."""
    if out is not data:
        xp.copyto(out, data)
    xp.add.at(out, _build_key(key, indices), value)

# ------------------------------------------------------------ gradient table
from ._grad import set_grads, takes_need, unbroadcast  # noqa: E402


@takes_need
def _dot_grad(F, attrs, ins, outs, og, need=(True, True)):
    a, b = ins
    g = og[0]
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    if a.ndim == 1 and b.ndim == 1:
        return [g * b, g * a]
    if a.ndim == 2 and b.ndim == 2:
        # one product per input, and none for an input nobody differentiates
        # (a layer's data): half of a first layer's backward
        if not ta and not tb:
            ga, gb = lambda: F.dot(g, b, transpose_b=True), lambda: F.dot(a, g, transpose_a=True)
        elif ta and not tb:
            ga, gb = lambda: F.dot(b, g, transpose_b=True), lambda: F.dot(a, g)
        elif not ta and tb:
            ga, gb = lambda: F.dot(g, b), lambda: F.dot(g, a, transpose_a=True)
        else:
            ga = lambda: F.dot(b, g, transpose_a=True, transpose_b=True)  # noqa: E731
            gb = lambda: F.dot(g, a, transpose_a=True, transpose_b=True)  # noqa: E731
        return [ga() if need[0] else None, gb() if need[1] else None]
    if ta or tb:
        # N-d with transpose flags contracts lhs's first axis / rhs's last: move
        # them where the plain dot contracts, differentiate that, move them back
        na, nb = a.ndim, b.ndim
        to_last = tuple(range(1, na)) + (0,)
        from_last = (na - 1,) + tuple(range(na - 1))
        to_first = (nb - 1,) + tuple(range(nb - 1))
        from_first = tuple(range(1, nb)) + (0,)
        ae = F.transpose(a, axes=to_last) if ta else a
        be = F.transpose(b, axes=to_first) if tb else b
        ga, gb = _dot_grad(F, {"transpose_a": False, "transpose_b": False}, [ae, be], outs, og)
        return [F.transpose(ga, axes=from_last) if ta else ga,
                F.transpose(gb, axes=from_first) if tb else gb]
    a2 = a.reshape((-1, a.shape[-1])) if a.ndim > 1 else a.reshape((1, -1))
    b2 = b.reshape((b.shape[0], -1)) if b.ndim > 1 else b.reshape((-1, 1))
    g2 = g.reshape((a2.shape[0], b2.shape[1]))
    return [F.dot(g2, b2, transpose_b=True).reshape(a.shape),
            F.dot(a2, g2, transpose_a=True).reshape(b.shape)]


def _batch_dot_grad(F, attrs, ins, outs, og):
    a, b = ins
    g = og[0]
    ta, tb = attrs["transpose_a"], attrs["transpose_b"]
    if not ta and not tb:
        return [F.batch_dot(g, b, transpose_b=True), F.batch_dot(a, g, transpose_a=True)]
    if ta and not tb:
        return [F.batch_dot(b, g, transpose_b=True), F.batch_dot(a, g)]
    if not ta and tb:
        return [F.batch_dot(g, b), F.batch_dot(g, a, transpose_a=True)]
    return [F.batch_dot(b, g, transpose_a=True, transpose_b=True),
            F.batch_dot(g, a, transpose_a=True, transpose_b=True)]


def _reshape_back(F, attrs, ins, outs, og):
    shape = ins[0].shape
    if 0 in shape:
        # reshape would read the zero-size axes as MXNet's "copy this axis" code
        return [F.reshape_like(og[0], ins[0])]
    return [og[0].reshape(shape)]


def _transpose_grad(F, attrs, ins, outs, og):
    axes = attrs["axes"]
    if not axes:
        return [F.transpose(og[0])]
    nd = len(axes)
    inv = [0] * nd
    for i, a in enumerate(axes):
        inv[a % nd] = i
    return [F.transpose(og[0], axes=tuple(inv))]


def _slice_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_slice(og[0], ins[0], begin=attrs["begin"], end=attrs["end"],
                                        step=attrs["step"])]


def _backward_slice_grad(F, attrs, ins, outs, og):
    return [F.slice(og[0], begin=attrs["begin"], end=attrs["end"], step=attrs["step"]), None]


def _slice_axis_grad(F, attrs, ins, outs, og):
    x = ins[0]
    ax = norm_axis(attrs["axis"], x.ndim)
    begin = [None] * x.ndim
    end = [None] * x.ndim
    begin[ax], end[ax] = attrs["begin"], attrs["end"]
    return [F._internal._slice_assign(F.zeros_like(x), og[0], begin=tuple(begin),
                                      end=tuple(end), step=())]


def _index_grad(F, attrs, ins, outs, og):
    x = ins[0]
    g = F._internal._index_add(F.zeros_like(x), og[0], *ins[1:], key=attrs["key"])
    return [g] + [None] * (len(ins) - 1)


def _slice_assign_grad(F, attrs, ins, outs, og):
    g = og[0]
    kw = dict(begin=attrs["begin"], end=attrs["end"], step=attrs["step"])
    return [F._internal._slice_assign_scalar(g, scalar=0.0, **kw), F.slice(g, **kw)]


set_grads({
    "dot": _dot_grad, "batch_dot": _batch_dot_grad,
    "Reshape": _reshape_back, "Flatten": _reshape_back, "expand_dims": _reshape_back,
    "squeeze": _reshape_back, "transpose": _transpose_grad,
    "broadcast_to": lambda F, at, ins, outs, og: [unbroadcast(F, og[0], ins[0].shape)],
    "Cast": lambda F, at, ins, outs, og: [og[0].astype(ins[0].dtype)],
    "clip": lambda F, at, ins, outs, og: [og[0] * (ins[0] >= at["a_min"]) * (ins[0] <= at["a_max"])],
    "slice": _slice_grad, "_backward_slice": _backward_slice_grad, "slice_axis": _slice_axis_grad, "_index": _index_grad,
    "_slice_assign": _slice_assign_grad,
})
