"""Shape and dtype rules shared by many ops. A rule takes
``(attrs, in_shapes, in_dtypes)`` and returns ``(out_shapes, out_dtypes)``;
it raises ``OpError``/``ShapeError`` without the op's name, which the caller
adds. Rules run at push time on the caller's thread, so they stay cheap."""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError

__all__ = ["unary", "same_dtype", "broadcast", "elemwise_same", "broadcast_shapes",
           "reduce_axes", "reduce_rule", "norm_axis", "fmt"]


def fmt(shape) -> str:
    return "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"


def unary(attrs, shapes, dtypes):
    return (shapes[0],), (dtypes[0],)


def same_dtype(dtypes):
    d0 = dtypes[0]
    for i, d in enumerate(dtypes):
        if d != d0:
            raise OpError("input %d has dtype %s but input 0 has %s; all inputs must have "
                          "the same dtype (cast one with .astype())" % (i, d.name, d0.name))
    return d0


def broadcast_shapes(a, b):
    if a == b:
        return a
    n = max(len(a), len(b))
    pa = (1,) * (n - len(a)) + tuple(a)
    pb = (1,) * (n - len(b)) + tuple(b)
    out = []
    for x, y in zip(pa, pb):
        if x == y or y == 1:
            out.append(x)
        elif x == 1:
            out.append(y)
        else:
            raise ShapeError("shapes %s and %s cannot be broadcast together" % (fmt(a), fmt(b)))
    return tuple(out)


def broadcast(attrs, shapes, dtypes):
    a, b = shapes
    d = dtypes[0]
    if d != dtypes[1]:
        same_dtype(dtypes)
    if a == b:
        return (a,), (d,)
    return (broadcast_shapes(a, b),), (d,)


def elemwise_same(attrs, shapes, dtypes):
    s0 = shapes[0]
    for i, s in enumerate(shapes):
        if s != s0:
            raise ShapeError("input %d has shape %s but input 0 has %s; this op needs equal "
                             "shapes (use the broadcast_* op to broadcast)" % (i, fmt(s), fmt(s0)))
    return (s0,), (same_dtype(dtypes),)


def norm_axis(axis, ndim, name="axis"):
    if not -ndim <= axis < max(ndim, 1):
        raise OpError("%s=%d is out of range for an array of %d dimension(s)" % (name, axis, ndim))
    return axis % ndim if ndim else 0


def reduce_axes(attrs, ndim):
    """The sorted tuple of axes reduced, from MXNet's axis/exclude."""
    axis = attrs.get("axis")
    if axis is None or axis == ():
        axes = tuple(range(ndim))
    else:
        if isinstance(axis, int):
            axis = (axis,)
        axes = tuple(sorted(set(norm_axis(a, ndim) for a in axis)))
    if attrs.get("exclude"):
        axes = tuple(i for i in range(ndim) if i not in axes)
    return axes


def reduce_rule(attrs, shapes, dtypes, out_dtype=None):
    shape = shapes[0]
    axes = reduce_axes(attrs, len(shape))
    if attrs.get("keepdims"):
        out = tuple(1 if i in axes else d for i, d in enumerate(shape))
    else:
        out = tuple(d for i, d in enumerate(shape) if i not in axes)
        if not out:
            out = (1,)          # MXNet 1.x: a full reduction has shape (1,)
    return (out,), (np.dtype(out_dtype) if out_dtype is not None else dtypes[0],)
