"""``mx.nd.image`` / ``mx.sym.image`` operators (``src/operator/image/``):
normalize. Registered as ``_image_<name>``."""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._rules import fmt
from .registry import Param, _lit, register


def _p_floats(v):
    v = _lit(v)
    if isinstance(v, (int, float, np.number)):
        return (float(v),)
    return tuple(float(x) for x in v)


def _norm_rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    if len(d) not in (3, 4):
        raise ShapeError("Input tensor must have shape (channels, height, width), or "
                         "(N, channels, height, width), but got %s" % fmt(d))
    c = d[-3]
    if c not in (1, 3):
        raise ShapeError("The channel of the input should be 1 or 3, but got %d" % c)
    for name in ("mean", "std"):
        n = len(attrs[name])
        if n != 1 and n != c:   # MXNet's check: the 4-entry defaults need 1 or 4 channels
            raise ShapeError("Invalid %s for input with shape %s. %s must have either 1 or %d "
                          "elements, but got %s" % (name, fmt(d), name, c, attrs[name]))
    if dtypes[0].kind != "f":
        raise OpError("data must be a float array, got %s" % dtypes[0].name)
    return (d,), (dtypes[0],)


def _per_channel(xp, vals, c, ndim, dtype):
    v = np.array([vals[0]] * c if len(vals) == 1 else vals[:c], dtype=dtype)
    return xp.asarray(v.reshape((c, 1, 1)))


_NORM = [Param("mean", _p_floats, (0.0, 0.0, 0.0, 0.0), "Sequence of means for each channel. "
               "Default value is 0."),
         Param("std", _p_floats, (1.0, 1.0, 1.0, 1.0), "Sequence of standard deviations for "
               "each channel. Default value is 1.")]


@register("_image_normalize", params=_NORM, infer=_norm_rule)
def _image_normalize(xp, data, out, mean=(0.0,), std=(1.0,)):
    """normalize(data, mean=0, std=1): (data - mean[c]) / std[c] per channel of
    a (C, H, W) or (N, C, H, W) image tensor."""
    c = data.shape[-3]
    m = _per_channel(xp, mean, c, data.ndim, data.dtype)
    s = _per_channel(xp, std, c, data.ndim, data.dtype)
    out[...] = (data - m) / s


@register("_backward_image_normalize", inputs=("ograd",), params=_NORM,
          infer=lambda attrs, shapes, dtypes: ((tuple(shapes[0]),), (dtypes[0],)))
def _backward_image_normalize(xp, ograd, out, mean=(0.0,), std=(1.0,)):
    """The gradient of normalize: ograd / std[c]."""
    out[...] = ograd / _per_channel(xp, std, ograd.shape[-3], ograd.ndim, ograd.dtype)


set_grads({"_image_normalize": lambda F, at, ins, outs, og: [
    F._internal._backward_image_normalize(og[0], mean=at["mean"], std=at["std"])]})
