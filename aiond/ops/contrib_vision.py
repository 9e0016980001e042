"""MXNet 1.9.1's ``_contrib_ROIAlign`` (src/operator/contrib/roi_align.cc).

For one ROI, the bilinear sample weights are separable: a sample at (y, x)
weighs pixel (h, w) by wy(y, h) * wx(x, w), and a sample outside
[-1, H] x [-1, W] weighs nothing (a zero row in either factor). So each ROI's
output is ``Wy @ data[b, c] @ Wx.T / count`` with Wy (pooled_h, H) and Wx
(pooled_w, W) summed over the bin's sampling grid, and the gradient is the
transposed map. Coordinates are computed in float32 like MXNet's kernel.
A ROI whose batch index is negative gives zeros (MXNet's documentation).
"""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError, ShapeError
from ._rules import fmt
from .registry import Param, host_kernels, p_bool, p_float, p_int, p_shape, register


def _roi_rule(attrs, shapes, dtypes):
    if len(shapes) != 2:
        raise OpError("ROIAlign takes 2 inputs (data, rois), got %d" % len(shapes))
    d, b = tuple(shapes[0]), tuple(shapes[1])
    if len(d) != 4:
        raise ShapeError("ROIAlign: data should be a 4D tensor, got %s" % fmt(d))
    if len(b) != 2 or b[1] != 5:
        raise ShapeError("ROIAlign: rois should be a 2D tensor of shape [num_rois, 5], got %s"
                         % fmt(b))
    ps = attrs["pooled_size"]
    if len(ps) != 2 or ps[0] <= 0 or ps[1] <= 0:
        raise OpError("ROIAlign: pooled_size must be two positive ints, got %s" % (ps,))
    if dtypes[0] != dtypes[1]:
        raise OpError("ROIAlign: data and rois must have the same dtype, got %s and %s"
                      % (np.dtype(dtypes[0]).name, np.dtype(dtypes[1]).name))
    c = d[1]
    if attrs["position_sensitive"]:
        if c % (ps[0] * ps[1]):
            raise ShapeError("ROIAlign: input channels should be divided by "
                             "pooled_size[0]*pooled_size[1] when position_sensitive is true")
        c //= ps[0] * ps[1]
    return ((b[0], c, ps[0], ps[1]),), (dtypes[0],)


_ROI_PARAMS = [
    Param("pooled_size", p_shape, doc="ROI Align output roi feature map height and width: "
          "(h, w)"),
    Param("spatial_scale", p_float, doc="Ratio of input feature map height (or w) to raw "
          "image height (or w)."),
    Param("sample_ratio", p_int, -1, "Optional sampling ratio of ROI align, using adaptive "
          "size by default."),
    Param("position_sensitive", p_bool, False, "Whether to perform position-sensitive RoI "
          "pooling."),
    Param("aligned", p_bool, False, "Center-aligned ROIAlign introduced in Detectron2."),
]


def _axis_weights(start, bin_size, grid, pooled, size):
    """(pooled, size) summed bilinear weights of a bin's `grid` samples."""
    f32 = np.float32
    w = np.zeros((pooled, size), dtype=np.float64)
    for p in range(pooled):
        for i in range(grid):
            v = f32(start + f32(p) * bin_size + f32(i + 0.5) * bin_size / f32(grid))
            if v < -1.0 or v > size:
                continue
            if v <= 0:
                v = f32(0)
            lo = int(v)
            if lo >= size - 1:
                hi = lo = size - 1
                v = f32(lo)
            else:
                hi = lo + 1
            l = float(f32(v - f32(lo)))
            w[p, lo] += 1.0 - l
            w[p, hi] += l
    return w


def _support(w):
    """The [first, last + 1) columns of w that have a non-zero weight."""
    cols = np.nonzero(w.any(axis=0))[0]
    if not cols.size:
        return 0, 1
    return int(cols[0]), int(cols[-1]) + 1


def _roi_maps(roi, H, W, ph, pw, spatial_scale, sample_ratio, aligned):
    """(batch index, Wy, Wx, count) for one ROI row [b, x1, y1, x2, y2]."""
    f32 = np.float32
    b = int(roi[0])
    if b < 0:
        return b, None, None, 1
    scale = f32(spatial_scale)
    off = f32(0.5) if aligned else f32(0)
    sw, sh = f32(roi[1]) * scale - off, f32(roi[2]) * scale - off
    ew, eh = f32(roi[3]) * scale - off, f32(roi[4]) * scale - off
    rw, rh = f32(ew - sw), f32(eh - sh)
    if aligned:
        if not (rw > 0 and rh > 0):
            raise OpError("ROIAlign(aligned=True): ROI width and height must be > 0")
    else:
        rw, rh = max(rw, f32(1)), max(rh, f32(1))
    bh, bw = f32(rh / f32(ph)), f32(rw / f32(pw))
    gh = sample_ratio if sample_ratio > 0 else int(math.ceil(rh / ph))
    gw = sample_ratio if sample_ratio > 0 else int(math.ceil(rw / pw))
    wy = _axis_weights(sh, bh, gh, ph, H)
    wx = _axis_weights(sw, bw, gw, pw, W)
    return b, wy, wx, gh * gw


@register("_contrib_ROIAlign", inputs=("data", "rois"), params=_ROI_PARAMS, infer=_roi_rule,
          inline=False)
def _contrib_ROIAlign(xp, data, rois, out, pooled_size, spatial_scale, sample_ratio=-1,
                      position_sensitive=False, aligned=False):
    """ROIAlign(data, rois, pooled_size, spatial_scale, sample_ratio=-1,
    position_sensitive=False, aligned=False): bilinear ROI pooling of NCHW
    data over rois [batch_index, x1, y1, x2, y2] into (num_rois, C, ph, pw)."""
    x = np.asarray(data)
    r = np.asarray(rois)
    ph, pw = pooled_size
    H, W = x.shape[2:]
    res = np.zeros(out.shape, dtype=x.dtype)
    for n in range(r.shape[0]):
        b, wy, wx, count = _roi_maps(r[n], H, W, ph, pw, spatial_scale, sample_ratio, aligned)
        if b < 0:
            continue
        (h0, h1), (w0, w1) = _support(wy), _support(wx)
        wy = (wy[:, h0:h1] / count).astype(x.dtype)
        wx = wx[:, w0:w1].astype(x.dtype)
        if position_sensitive:
            d = x[b].reshape(-1, ph, pw, H, W)[..., h0:h1, w0:w1]
            res[n] = np.einsum("ph,cpqhw,qw->cpq", wy, d, wx)
        else:
            res[n] = np.matmul(np.matmul(wy, x[b][:, h0:h1, w0:w1]), wx.T)
    out[...] = xp.asarray(res)


def _roi_bwd_rule(attrs, shapes, dtypes):
    return (tuple(shapes[2]), tuple(shapes[1])), (dtypes[2], dtypes[1])


@register("_backward_ROIAlign", inputs=("ograd", "rois", "data"), params=_ROI_PARAMS,
          infer=_roi_bwd_rule, num_outputs=2, inline=False)
def _backward_ROIAlign(xp, ograd, rois, data, out, pooled_size, spatial_scale, sample_ratio=-1,
                       position_sensitive=False, aligned=False):
    """Gradients of ROIAlign w.r.t. (data, rois); the rois' is zero, as in MXNet."""
    gd, gr = out
    g = np.asarray(ograd)
    r = np.asarray(rois)
    ph, pw = pooled_size
    H, W = data.shape[2:]
    res = np.zeros(gd.shape, dtype=gd.dtype)
    for n in range(r.shape[0]):
        b, wy, wx, count = _roi_maps(r[n], H, W, ph, pw, spatial_scale, sample_ratio, aligned)
        if b < 0:
            continue
        (h0, h1), (w0, w1) = _support(wy), _support(wx)
        wy = (wy[:, h0:h1] / count).astype(res.dtype)
        wx = wx[:, w0:w1].astype(res.dtype)
        if position_sensitive:
            v = res[b].reshape(-1, ph, pw, H, W)[..., h0:h1, w0:w1]
            v += np.einsum("ph,cpq,qw->cpqhw", wy, g[n], wx)
        else:
            res[b][:, h0:h1, w0:w1] += np.matmul(np.matmul(wy.T, g[n]), wx)
    gd[...] = xp.asarray(res)
    gr[...] = 0


# ------------------------------------------------------------ gradient table
from ._grad import set_grads  # noqa: E402


def _roi_grad(F, attrs, ins, outs, og):
    gd, gr = F._internal._backward_ROIAlign(og[0], ins[1], ins[0], **attrs)
    return [gd, gr]


set_grads({"_contrib_ROIAlign": _roi_grad})


host_kernels("_contrib_ROIAlign", "_backward_ROIAlign")   # per-RoI numpy sampling: host-side on a GPU
