"""Ops that create arrays from nothing: zeros, ones, full, arange, linspace,
eye, and the *_like twins."""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError
from .elemwise import cast_scalar
from .registry import Param, p_dtype, p_float, p_int, p_shape, register
from .registry import get as _get

_SHAPE_DT = [Param("shape", p_shape, (), "output shape"),
             Param("dtype", p_dtype, np.dtype(np.float32), "output dtype")]


def _given_rule(attrs, shapes, dtypes):
    shape = attrs["shape"]
    for d in shape:
        if d < 0:
            raise OpError("shape %s has a negative dimension" % (shape,))
    return (tuple(shape),), (attrs["dtype"] or np.dtype(np.float32),)


@register("_zeros", inputs=(), params=_SHAPE_DT, infer=_given_rule)
def _zeros(xp, out, shape=(), dtype=None):
    out.fill(0)


@register("_ones", inputs=(), params=_SHAPE_DT, infer=_given_rule)
def _ones(xp, out, shape=(), dtype=None):
    out.fill(1)


@register("_full", inputs=(), params=_SHAPE_DT + [Param("value", p_float, 0.0)], infer=_given_rule)
def _full(xp, out, shape=(), dtype=None, value=0.0):
    out.fill(cast_scalar(value, out.dtype))     # C cast: uint8 300 -> 44, as MXNet


def _arange_len(attrs):
    start, stop, step, rep = attrs["start"], attrs["stop"], attrs["step"], attrs["repeat"]
    if stop is None:
        start, stop = 0.0, start
    if step == 0:
        raise OpError("step must not be 0")
    if rep < 1:
        raise OpError("repeat must be >= 1, got %d" % rep)
    n = int(math.ceil((stop - start) / step))
    return start, step, max(n, 0), rep


def _arange_rule(attrs, shapes, dtypes):
    _, _, n, rep = _arange_len(attrs)
    return ((n * rep,),), (attrs["dtype"] or np.dtype(np.float32),)


@register("_arange", inputs=(), params=[
    Param("start", p_float, 0.0), Param("stop", lambda v: None if v in (None, "None") else p_float(v), None),
    Param("step", p_float, 1.0), Param("repeat", p_int, 1), Param("infer_range", lambda v: bool(v), False),
    Param("dtype", p_dtype, np.dtype(np.float32))], infer=_arange_rule)
def _arange(xp, out, start=0.0, stop=None, step=1.0, repeat=1, infer_range=False, dtype=None):
    start, step, n, rep = _arange_len({"start": start, "stop": stop, "step": step, "repeat": repeat})
    dt = out.dtype
    if dt.kind in "iub":
        # MXNet casts start and step to the output type first (C casts: 1.3 -> 1)
        st, sp = (np.array(int(x), dtype=np.int64).astype(dt).astype(np.int64)
                  for x in (start, step))
        v = (st + sp * xp.arange(n, dtype=np.int64)).astype(dt)
    else:
        v = start + step * xp.arange(n, dtype=np.float64)
    if rep > 1:
        v = xp.repeat(v, rep)
    out[...] = v


def _linspace_rule(attrs, shapes, dtypes):
    if attrs["num"] < 0:
        raise OpError("num must be >= 0, got %d" % attrs["num"])
    return ((attrs["num"],),), (attrs["dtype"] or np.dtype(np.float32),)


@register("_linspace", inputs=(), params=[
    Param("start", p_float), Param("stop", p_float), Param("num", p_int),
    Param("endpoint", lambda v: bool(v), True), Param("dtype", p_dtype, np.dtype(np.float32))],
    infer=_linspace_rule)
def _linspace(xp, out, start, stop, num, endpoint=True, dtype=None):
    out[...] = xp.linspace(start, stop, num, endpoint=endpoint)


def _eye_rule(attrs, shapes, dtypes):
    n, m = attrs["N"], attrs["M"] or attrs["N"]
    if n < 0 or m < 0:
        raise OpError("N and M must be >= 0, got N=%d M=%d" % (n, m))
    return ((n, m),), (attrs["dtype"] or np.dtype(np.float32),)


@register("_eye", inputs=(), params=[
    Param("N", p_int), Param("M", p_int, 0), Param("k", p_int, 0),
    Param("dtype", p_dtype, np.dtype(np.float32))], infer=_eye_rule)
def _eye(xp, out, N, M=0, k=0, dtype=None):
    out[...] = xp.eye(N, M or N, k)


def _like_rule(attrs, shapes, dtypes):
    return (shapes[0],), (dtypes[0],)


# MXNet 1.9.1 registers zeros_like/ones_like without an attribute parser: extra
# keywords (GluonCV passes dtype=) are accepted and ignored, the result keeps
# data's dtype
@register("zeros_like", infer=_like_rule, free_attrs=True)
def zeros_like(xp, data, out):
    """zeros_like(data): zeros of data's shape and dtype."""
    out.fill(0)


@register("ones_like", infer=_like_rule, free_attrs=True)
def ones_like(xp, data, out):
    """ones_like(data): ones of data's shape and dtype."""
    out.fill(1)


# MXNet: zeros_like/ones_like pass a zero gradient to their input (MakeZeroGradNodes)
def _zero_grad(F, attrs, ins, outs, og):
    return [F.zeros_like(ins[0])]


for _n in ("zeros_like", "ones_like"):
    _get(_n).grad = _zero_grad

