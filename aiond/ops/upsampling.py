"""UpSampling (MXNet 1.9.1). Nearest upsampling copies each input to
(scale*h0, scale*w0) with strided copies, several inputs concatenated along
channels or summed. Bilinear upsampling is a depthwise Deconvolution of
``data`` (N, C, H, W) with the ``weight`` input (C, 1, k, k), where
k = 2*scale - scale % 2, stride = scale and pad = ceil((scale - 1) / 2), so
the output is (N, C, H*scale, W*scale); ``num_filter`` must equal C."""
from __future__ import annotations

import math

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._nn_util import _in_range, _need_float
from ._rules import fmt, same_dtype
from .registry import Param, get, p_int, p_str, register


def _up_rule(attrs, shapes, dtypes):
    if attrs["sample_type"] == "bilinear":
        return bilinear_rule(attrs, shapes, dtypes)
    if not shapes:
        raise OpError("needs at least one input")
    if attrs["num_args"] and attrs["num_args"] != len(shapes):
        raise OpError("num_args=%d but %d input(s) were given" % (attrs["num_args"], len(shapes)))
    d0 = tuple(shapes[0])
    scale = attrs["scale"]
    for i, s in enumerate(shapes):
        s = tuple(s)
        if len(s) != 4:
            raise ShapeError("input %d has shape %s; inputs must be 4-D (batch, channel, y, x)"
                             % (i, fmt(s)))
        if s[0] != d0[0]:
            raise ShapeError("input %d has batch size %d but input 0 has %d" % (i, s[0], d0[0]))
        oh, ow = d0[2] * scale, d0[3] * scale
        if (s[2] == 0 or oh % s[2]) or (s[3] == 0 or ow % s[3]):
            raise ShapeError("input %d of shape %s does not divide the output size (%d, %d)"
                             % (i, fmt(s), oh, ow))
        if oh // s[2] != ow // s[3]:
            raise ShapeError("input %d of shape %s needs scale %d along y but %d along x to "
                             "reach the output size (%d, %d)"
                             % (i, fmt(s), oh // s[2], ow // s[3], oh, ow))
        if attrs["multi_input_mode"] == "sum" and s[1] != d0[1]:
            raise ShapeError("input %d has %d channels but input 0 has %d; "
                             "multi_input_mode='sum' needs equal channels" % (i, s[1], d0[1]))
    dt = same_dtype(dtypes)
    _need_float(dt)
    c = d0[1] if attrs["multi_input_mode"] == "sum" else sum(s[1] for s in shapes)
    return ((d0[0], c, d0[2] * scale, d0[3] * scale),), (dt,)


@register("UpSampling", inputs=("*data",), variadic=True, params=[
    Param("scale", p_int, doc="Up sampling scale"),
    Param("num_filter", p_int, 0, "Input filter (bilinear only)."),
    Param("sample_type", p_str, doc="upsampling method", choices=("bilinear", "nearest")),
    Param("multi_input_mode", p_str, "concat", "How to handle multiple inputs: concat along "
          "channels or sum.", choices=("concat", "sum")),
    Param("num_args", p_int, 0, "Number of inputs (filled in from the inputs given)."),
    Param("workspace", p_int, 512, "Ignored.")],
    infer=_up_rule, attr_check=_in_range(("scale", 1, None)))
def upsampling(xp, *data, out, scale, sample_type="nearest", num_filter=0,
               multi_input_mode="concat", num_args=0, workspace=512):
    """UpSampling(*data, scale, sample_type='nearest', multi_input_mode='concat'):
    nearest-neighbour upsampling of 4-D inputs to (scale*h0, scale*w0); several
    inputs are concatenated along channels or summed. sample_type='bilinear'
    takes (data, weight) and is a depthwise Deconvolution."""
    if sample_type == "bilinear":
        return bilinear(xp, *data, out, {"scale": scale})
    oh = out.shape[2]
    begin = 0
    for i, d in enumerate(data):
        s = oh // d.shape[2]
        if multi_input_mode == "sum":
            o = out
        else:
            o = out[:, begin:begin + d.shape[1]]
            begin += d.shape[1]
        for a in range(s):          # s*s strided copies, each a whole-array op
            for b in range(s):
                if multi_input_mode == "sum" and i > 0:
                    o[:, :, a::s, b::s] += d
                else:
                    o[:, :, a::s, b::s] = d


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
    from .conv import Deconvolution     # the conv ops load only when bilinear is used
    Deconvolution(xp, data, weight, out=out, **_deconv_attrs(attrs, data.shape[1]))


def bilinear_grad(F, attrs, ins, outs, og):
    data, weight = ins
    a = _deconv_attrs(attrs, data.shape[1])
    return [F._internal._backward_Deconvolution_data(og[0], data, weight, **a),
            F._internal._backward_Deconvolution_weight(og[0], data, **a)]


def _upsampling_grad(F, attrs, ins, outs, og):
    if attrs["sample_type"] == "bilinear":
        return bilinear_grad(F, attrs, ins, outs, og)
    g = og[0]
    oh = g.shape[2]
    res = []
    begin = 0
    for x in ins:
        n, c, h, w = x.shape
        s = oh // h
        gi = g
        if attrs["multi_input_mode"] != "sum":
            gi = F.slice_axis(g, axis=1, begin=begin, end=begin + c)
            begin += c
        res.append(F.sum(gi.reshape((n, c, h, s, w, s)), axis=(3, 5)))
    return res


set_grads({
    "UpSampling": _upsampling_grad,
})
