"""Bilinear UpSampling (MXNet 1.9.1): a depthwise Deconvolution of
``data`` (N, C, H, W) with the ``weight`` input (C, 1, k, k), where
k = 2*scale - scale % 2, stride = scale and pad = ceil((scale - 1) / 2), so
the output is (N, C, H*scale, W*scale). ``num_filter`` must equal C.
(Nearest upsampling is in nn.py, whose UpSampling entry calls these.)"""
from __future__ import annotations

import math

from ..base import ShapeError
from ._rules import fmt, same_dtype
from .conv import Deconvolution
from .registry import get


def _geometry(scale):
    k = 2 * scale - scale % 2
    return k, int(math.ceil((scale - 1) / 2.0))


def _deconv_attrs(attrs, channels):
    k, p = _geometry(attrs["scale"])
    s = attrs["scale"]
    return get("Deconvolution").parse({"kernel": (k, k), "stride": (s, s), "pad": (p, p),
                                       "num_filter": channels, "num_group": channels,
                                       "no_bias": True})


def bilinear_rule(attrs, shapes, dtypes):
    if len(shapes) != 2:
        raise ShapeError("bilinear upsampling takes data and weight, got %d input(s)"
                         % len(shapes))
    d, w = tuple(shapes[0]), tuple(shapes[1])
    if len(d) != 4:
        raise ShapeError("data must be 4-D (batch, channel, y, x), got %s" % fmt(d))
    k, _ = _geometry(attrs["scale"])
    if w != (d[1], 1, k, k):
        raise ShapeError("weight has shape %s but data %s with scale=%d needs %s"
                         % (fmt(w), fmt(d), attrs["scale"], fmt((d[1], 1, k, k))))
    if attrs["num_filter"] and attrs["num_filter"] != d[1]:
        raise ShapeError("num_filter=%d but data has %d channels" % (attrs["num_filter"], d[1]))
    s = attrs["scale"]
    return ((d[0], d[1], d[2] * s, d[3] * s),), (same_dtype(dtypes),)


def bilinear_param_shapes(params, dshape):
    k, _ = _geometry(params["scale"])
    if len(dshape) != 4 or not dshape[1]:
        return {}
    w = (dshape[1], 1, k, k)
    return {"weight": w, "data1": w}       # the second (variadic) input is the weight


def bilinear(xp, data, weight, out, attrs):
    Deconvolution(xp, data, weight, out=out, **_deconv_attrs(attrs, data.shape[1]))


def bilinear_grad(F, attrs, ins, outs, og):
    data, weight = ins
    a = _deconv_attrs(attrs, data.shape[1])
    return [F._internal._backward_Deconvolution_data(og[0], data, weight, **a),
            F._internal._backward_Deconvolution_weight(og[0], data, **a)]
