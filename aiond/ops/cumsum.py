"""``mx.nd.cumsum`` / ``mx.sym.cumsum`` (MXNet 1.9.1's ``_np_cumsum`` under its
legacy alias ``cumsum``, ``operator/numpy/np_cumsum*``): the running sum along
``axis``, or over the flattened array when ``axis`` is None (output 1-D).

The output dtype is ``dtype`` when given, else the input's (bool gives
int64), and the sum accumulates in the output dtype, as MXNet's kernel does.
The gradient is the reversed running sum of the output gradient."""
from __future__ import annotations

import numpy as np

from ..base import OpError
from ._grad import set_grads
from ._rules import norm_axis
from .registry import Param, p_dtype, register

_CUMSUM_DTYPES = tuple(np.dtype(t) for t in ("float16", "float32", "float64", "int32",
                                             "int64", "int8"))


def _p_axis(v):
    from .registry import _lit
    v = _lit(v)
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, np.integer)):
        raise TypeError("axis must be an int or None, got %r" % (v,))
    return int(v)


def _rule(attrs, shapes, dtypes):
    shape = tuple(shapes[0])
    axis, dt = attrs["axis"], attrs["dtype"]
    if axis is None:
        out = (int(np.prod(shape)),)
    else:
        norm_axis(axis, len(shape))
        out = shape
    if dt is not None:
        if dt not in _CUMSUM_DTYPES:
            raise OpError("cumsum: dtype=%s is not supported; expected one of %s"
                          % (dt.name, ", ".join(d.name for d in _CUMSUM_DTYPES)))
        od = dt
    else:
        od = np.dtype(np.int64) if dtypes[0] == np.bool_ else dtypes[0]
    return (out,), (od,)


@register("cumsum", inputs=("a",), params=[
    Param("axis", _p_axis, None, "Axis along which the cumulative sum is computed. The default "
          "(None) is to compute the cumsum over the flattened array."),
    Param("dtype", p_dtype, None, "Type of the returned array and of the accumulator in which "
          "the elements are summed. If dtype is not specified, it defaults to the dtype of a.")],
    infer=_rule)
def cumsum(xp, a, out, axis=None, dtype=None):
    """cumsum(a, axis=None, dtype=None): the cumulative sum of the elements
    along a given axis (of the flattened array when axis is None)."""
    if axis is None:
        a, axis = a.reshape(-1), 0
    if a.size:
        xp.cumsum(a, axis=axis % a.ndim, dtype=out.dtype, out=out)


@register("_backward_np_cumsum", inputs=("ograd",), params=[
    Param("axis", _p_axis, None, "the forward's axis"),
    Param("dtype", p_dtype, None, "the forward's dtype")],
    infer=lambda attrs, shapes, dtypes: ((tuple(shapes[0]),), (dtypes[0],)))
def _backward_np_cumsum(xp, ograd, out, axis=None, dtype=None):
    """The gradient of cumsum along ``axis`` (the data's shape is restored by
    the gradient rule): the reversed running sum of ograd."""
    ax = 0 if axis is None else axis % ograd.ndim
    if ograd.size:
        out[...] = xp.flip(xp.cumsum(xp.flip(ograd, ax), axis=ax), ax)


def _grad(F, attrs, ins, outs, og):
    g = F._internal._backward_np_cumsum(og[0], **attrs)
    if attrs["axis"] is None:
        g = g.reshape(ins[0].shape)
    if g.dtype != ins[0].dtype:
        g = g.astype(ins[0].dtype)
    return [g]


set_grads({"cumsum": _grad})
