"""ROIPooling (MXNet 1.9.1): max pooling of each region of interest into a
fixed (pooled_h, pooled_w) grid, as in Fast R-CNN.

``rois`` is (R, 5): [batch index, x1, y1, x2, y2] in input-image
coordinates; corners are scaled by ``spatial_scale`` and rounded (half away
from zero), the region is split into bins of size region/pooled, and each
output is the maximum of its bin (0 for an empty bin). The gradient goes to
the first maximum of each bin; ``rois`` gets none.
"""
from __future__ import annotations

import math

import numpy as np

from ..base import ShapeError
from ._grad import set_grads
from ._rules import fmt
from .registry import Param, p_float, p_shape, register


def _round(v):
    return int(math.floor(v + 0.5)) if v >= 0 else int(math.ceil(v - 0.5))


def _rule(attrs, shapes, dtypes):
    d, r = tuple(shapes[0]), tuple(shapes[1])
    ps = attrs["pooled_size"]
    if len(d) != 4:
        raise ShapeError("data must be 4-D (batch, channel, height, width), got %s" % fmt(d))
    if len(r) != 2 or r[1] != 5:
        raise ShapeError("rois must be (num_rois, 5), got %s" % fmt(r))
    if len(ps) != 2:
        raise ShapeError("pooled_size must be (height, width), got %s" % (ps,))
    return ((r[0], d[1], ps[0], ps[1]),), (dtypes[0],)


def _bins(data_shape, roi, pooled, scale):
    """(batch, [(ph, pw, hs, he, ws, we)]) of one roi."""
    _, _, height, width = data_shape
    b = int(roi[0])
    x1, y1, x2, y2 = (_round(float(v) * scale) for v in roi[1:5])
    rh = max(y2 - y1 + 1, 1)
    rw = max(x2 - x1 + 1, 1)
    PH, PW = pooled
    bh, bw = rh / PH, rw / PW
    out = []
    for ph in range(PH):
        hs = min(max(int(math.floor(ph * bh)) + y1, 0), height)
        he = min(max(int(math.ceil((ph + 1) * bh)) + y1, 0), height)
        for pw in range(PW):
            ws = min(max(int(math.floor(pw * bw)) + x1, 0), width)
            we = min(max(int(math.ceil((pw + 1) * bw)) + x1, 0), width)
            out.append((ph, pw, hs, he, ws, we))
    return b, out


_PARAMS = [Param("pooled_size", p_shape, doc="ROI pooling output shape (h,w)"),
           Param("spatial_scale", p_float, doc="Ratio of input feature map height (or w) to "
                 "raw image height (or w). Equals the reciprocal of total stride in "
                 "convolutional layers")]


@register("ROIPooling", inputs=("data", "rois"), params=_PARAMS, infer=_rule, inline=False)
def roi_pooling(xp, data, rois, out, pooled_size, spatial_scale):
    """ROIPooling(data, rois, pooled_size, spatial_scale): max pooling per region of interest."""
    out[...] = 0
    for i in range(rois.shape[0]):
        b, bins = _bins(data.shape, rois[i], pooled_size, spatial_scale)
        if not 0 <= b < data.shape[0]:
            continue
        for ph, pw, hs, he, ws, we in bins:
            if he > hs and we > ws:
                out[i, :, ph, pw] = data[b, :, hs:he, ws:we].reshape(data.shape[1], -1).max(1)


@register("_backward_ROIPooling", inputs=("ograd", "data", "rois"), params=_PARAMS,
          infer=lambda a, s, d: ((tuple(s[1]),), (d[1],)), inline=False)
def _backward_roi_pooling(xp, ograd, data, rois, out, pooled_size, spatial_scale):
    out[...] = 0
    C = data.shape[1]
    ch = xp.arange(C)
    for i in range(rois.shape[0]):
        b, bins = _bins(data.shape, rois[i], pooled_size, spatial_scale)
        if not 0 <= b < data.shape[0]:
            continue
        for ph, pw, hs, he, ws, we in bins:
            if he > hs and we > ws:
                k = data[b, :, hs:he, ws:we].reshape(C, -1).argmax(1)
                w = we - ws
                xp.add.at(out[b], (ch, hs + k // w, ws + k % w), ograd[i, :, ph, pw])


set_grads({"ROIPooling": lambda F, at, ins, outs, og: [
    F._internal._backward_ROIPooling(og[0], ins[0], ins[1], **at), None]})
