"""Smaller legacy ops of MXNet 1.9.1's ``mx.nd``: ``rcbrt``, ``softmin``,
``_split_v2`` (behind ``mx.nd.split_v2``) and the 0-index element ops
``choose_element_0index`` / ``fill_element_0index``."""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._common import _as_index, _axis, _n_inputs, _no_grad, _outs
from ._grad import set_grads
from ._rules import fmt, unary
from .nn import _errstate, _softmax_core, _softmax_params, _softmax_rule
from .registry import Param, p_bool, p_int, p_shape, register


# ------------------------------------------------------------------ rcbrt
@register("rcbrt", infer=unary, elemwise=True)
def rcbrt(xp, data, out):
    """rcbrt(data): elementwise 1 / cbrt(data)."""
    with _errstate():
        if out.dtype.kind in "iu":
            r = np.float32(1.0) / xp.cbrt(data.astype(np.float32))
            xp.copyto(out, r, casting="unsafe")
        else:
            xp.cbrt(data, out=out)
            xp.reciprocal(out, out=out)


# ---------------------------------------------------------------- softmin
@register("softmin", params=_softmax_params(False), infer=_softmax_rule)
def softmin(xp, data, out, axis=-1, temperature=None, dtype=None, use_length=False):
    """softmin(data, axis=-1, temperature=None, dtype=None): softmax of -data."""
    xp.copyto(out, _softmax_core(xp, -data, axis % data.ndim, temperature), casting="unsafe")


# --------------------------------------------------------------- split_v2
def _split_v2_bounds(attrs, n):
    if attrs["sections"] > 0:
        k = attrs["sections"]
        q, r = divmod(n, k)
        b = [0]
        for i in range(k):
            b.append(b[-1] + q + (1 if i < r else 0))
        return b
    return list(attrs["indices"]) + [n]


def _split_v2_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = tuple(shapes[0])
    ax = _axis(attrs["axis"], len(s))
    bounds = _split_v2_bounds(attrs, s[ax])
    outs = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        lo, hi = min(lo, s[ax]), min(max(hi, lo), s[ax])
        k = max(hi - lo, 0)
        if attrs["squeeze_axis"]:
            if k != 1:
                raise ShapeError("squeeze_axis=True needs parts of size 1 along axis %d, got %d"
                                 % (ax, k))
            outs.append(s[:ax] + s[ax + 1:])
        else:
            outs.append(s[:ax] + (k,) + s[ax + 1:])
    return tuple(outs), (dtypes[0],) * len(outs)


def _split_v2_n(attrs):
    return attrs["sections"] if attrs["sections"] > 0 else len(attrs["indices"])


@register("_split_v2", params=[
    Param("indices", p_shape, (), "Boundaries of the parts along axis (starting with 0)."),
    Param("axis", p_int, 1, "Axis along which to split."),
    Param("squeeze_axis", p_bool, False, "Remove the split axis from parts of size 1."),
    Param("sections", p_int, 0, "Number of equal parts (0: split by indices).")],
    infer=_split_v2_rule, num_outputs=_split_v2_n, num_visible=_split_v2_n)
def _split_v2(xp, data, out, indices=(), axis=1, squeeze_axis=False, sections=0):
    """_split_v2(data, indices, axis=1, squeeze_axis=False, sections=0): parts
    of data between consecutive boundaries along axis."""
    outs = _outs(out)
    ax = axis % data.ndim
    n = data.shape[ax]
    bounds = _split_v2_bounds({"indices": indices, "sections": sections}, n)
    key = [slice(None)] * data.ndim
    for o, lo, hi in zip(outs, bounds[:-1], bounds[1:]):
        key[ax] = slice(min(lo, n), min(max(hi, lo), n))
        xp.copyto(o, data[tuple(key)].reshape(o.shape))


def _split_v2_grad(F, attrs, ins, outs, og):
    x = ins[0]
    ax = attrs["axis"] % x.ndim
    gs = [F.zeros_like(o) if g is None else g for g, o in zip(og, outs)]
    if attrs["squeeze_axis"]:
        s = tuple(x.shape)
        gs = [g.reshape(s[:ax] + (1,) + s[ax + 1:]) for g in gs]
    gs = [g for g in gs if g.shape[ax] > 0]
    if len(gs) == 1:
        return [gs[0].reshape(x.shape)]
    return [F.concat(*gs, dim=ax)]


# ------------------------------------------------- 0-index element ops
def _choose_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("lhs", "rhs"))
    lhs, rhs = tuple(shapes[0]), tuple(shapes[1])
    if len(lhs) != 2 or rhs != lhs[:1]:
        raise ShapeError("lhs must be 2-D (n, k) and rhs of shape (n,), got %s and %s"
                         % (fmt(lhs), fmt(rhs)))
    return (lhs[:1],), (dtypes[0],)


@register("choose_element_0index", inputs=("lhs", "rhs"), infer=_choose_rule)
def choose_element_0index(xp, lhs, rhs, out):
    """choose_element_0index(lhs, rhs): out[i] = lhs[i, rhs[i]]."""
    idx = xp.clip(_as_index(xp, rhs), 0, lhs.shape[1] - 1)
    xp.copyto(out, lhs[xp.arange(lhs.shape[0]), idx])


def _fill_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("lhs", "mhs", "rhs"))
    lhs, mhs, rhs = (tuple(s) for s in shapes)
    if len(lhs) != 2 or mhs != lhs[:1] or rhs != lhs[:1]:
        raise ShapeError("lhs must be 2-D (n, k), mhs and rhs of shape (n,), got %s, %s, %s"
                         % (fmt(lhs), fmt(mhs), fmt(rhs)))
    return (lhs,), (dtypes[0],)


@register("fill_element_0index", inputs=("lhs", "mhs", "rhs"), infer=_fill_rule)
def fill_element_0index(xp, lhs, mhs, rhs, out):
    """fill_element_0index(lhs, mhs, rhs): lhs with out[i, rhs[i]] = mhs[i]."""
    xp.copyto(out, lhs)
    idx = xp.clip(_as_index(xp, rhs), 0, lhs.shape[1] - 1)
    out[xp.arange(lhs.shape[0]), idx] = mhs


def _softmin_grad(F, attrs, ins, outs, og):
    y, g = outs[0], og[0]
    gi = -(y * (g - F.sum(g * y, axis=attrs["axis"], keepdims=True)))
    t = attrs["temperature"]
    if t is not None and t != 1.0:
        gi = gi / t
    return [gi if gi.dtype == ins[0].dtype else gi.astype(ins[0].dtype)]


set_grads({
    "rcbrt": lambda F, at, ins, outs, og: [og[0] * (-1.0 / 3) * outs[0] / ins[0]],
    "softmin": _softmin_grad,
    "_split_v2": _split_v2_grad,
    "choose_element_0index": _no_grad,
    "fill_element_0index": _no_grad,
})

_ = OpError
