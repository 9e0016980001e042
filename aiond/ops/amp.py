"""MXNet 1.9.1's mixed-precision casts (src/operator/tensor/amp_cast.h):
``amp_cast`` and ``amp_multicast``, which models such as GluonCV's SSD call
even in float32.

amp_cast casts only float32 / float16 data (anything else passes through in
its own dtype). amp_multicast casts its float32 / float16 inputs to the
widest of them (``cast_narrow=True``: the narrowest), starting from the first
input's dtype as MXNet does; other inputs pass through. Gradients are the
output gradients cast back to each input's dtype.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError
from .registry import Param, p_bool, p_dtype, p_int, register

_F16, _F32 = np.dtype(np.float16), np.dtype(np.float32)
_AMP = (_F16, _F32)


def _cast_rule(attrs, shapes, dtypes):
    if len(shapes) != 1:
        raise OpError("amp_cast takes 1 input, got %d" % len(shapes))
    d = np.dtype(dtypes[0])
    return (tuple(shapes[0]),), (attrs["dtype"] if d in _AMP else d,)


@register("amp_cast", infer=_cast_rule, elemwise=True,
          params=[Param("dtype", p_dtype, doc="Output data type.")])
def amp_cast(xp, data, out, dtype=None):
    """amp_cast(data, dtype): cast float32/float16 data to dtype (other dtypes
    are returned unchanged)."""
    xp.copyto(out, data, casting="unsafe")


def _multi_dtypes(attrs, dtypes):
    n = attrs["num_outputs"]
    if len(dtypes) != n:
        raise OpError("amp_multicast: num_outputs=%d but %d inputs were given"
                      % (n, len(dtypes)))
    dts = [np.dtype(d) for d in dtypes]
    if attrs["cast_narrow"]:
        target = _F16 if _F16 in dts else _F32
    else:
        target = _F32 if _F32 in dts else dts[0]
    return [target if d in _AMP else d for d in dts]


def _multi_rule(attrs, shapes, dtypes):
    return tuple(tuple(s) for s in shapes), tuple(_multi_dtypes(attrs, dtypes))


@register("amp_multicast", inputs=("*data",), variadic=True, infer=_multi_rule,
          num_outputs=lambda a: a["num_outputs"],
          params=[Param("num_outputs", p_int, doc="Number of input/output pairs to be casted "
                        "to the widest type."),
                  Param("cast_narrow", p_bool, False, "Whether to cast to the narrowest "
                        "type")])
def amp_multicast(xp, *data, out, num_outputs, cast_narrow=False):
    """amp_multicast(*data, num_outputs, cast_narrow=False): cast the
    float32/float16 inputs to the widest (or narrowest) of their types."""
    outs = out if isinstance(out, (list, tuple)) else [out]
    for x, o in zip(data, outs):
        xp.copyto(o, x, casting="unsafe")


def _back_rule(attrs, shapes, dtypes):
    n = len(shapes) // 2
    return tuple(tuple(s) for s in shapes[n:]), tuple(dtypes[n:])


@register("_backward_amp_multicast", inputs=("*data",), variadic=True, infer=_back_rule,
          num_outputs=lambda a: a["num_outputs"],
          params=[Param("num_outputs", p_int, doc="Number of gradients."),
                  Param("cast_narrow", p_bool, False, "unused")])
def _backward_amp_multicast(xp, *data, out, num_outputs, cast_narrow=False):
    """_backward_amp_multicast(*ograds, *inputs): each ograd in its input's dtype."""
    outs = out if isinstance(out, (list, tuple)) else [out]
    for g, o in zip(data[:num_outputs], outs):
        xp.copyto(o, g, casting="unsafe")


# ------------------------------------------------------------ gradient table
from ._grad import set_grads  # noqa: E402


def _cast_grad(F, attrs, ins, outs, og):
    outs_ = F._internal._backward_amp_multicast(og[0], ins[0], num_outputs=1)
    return [outs_]


def _multi_grad(F, attrs, ins, outs, og):
    n = attrs["num_outputs"]
    g = F._internal._backward_amp_multicast(*(list(og) + list(ins)), num_outputs=n)
    return list(g) if n > 1 else [g]


set_grads({"amp_cast": _cast_grad, "amp_multicast": _multi_grad})
