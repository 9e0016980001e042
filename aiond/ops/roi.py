"""Region-of-interest operators of ``mx.nd.contrib`` (ROIAlign itself is in
contrib_vision.py): RROIAlign (rotated, ``contrib/rroi_align.cc``).

ROIAlign averages bilinear samples on a grid of sample_ratio x sample_ratio
points per output bin (adaptive ceil(roi size / pooled size) when
sample_ratio <= 0). Bilinear sampling with MXNet's border rule (points
beyond one pixel outside the map count as 0, points inside clamp to the
edge) is separable, so each ROI is ``Ay @ data[b, c] @ Ax^T`` with per-axis
weight matrices and its gradient ``Ay^T @ g @ Ax``; rois get no gradient,
as in MXNet. RROIAlign has no backward in MXNet either."""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._rules import fmt
from .registry import Param, p_bool, p_float, p_int, p_shape, register


def _axis_weights(start, bin_size, pooled, grid, size):
    """(pooled, size) weights: the sum over the grid samples of each bin of
    their bilinear taps along one axis (MXNet's bilinear_interpolate)."""
    m = np.zeros((pooled, size), dtype=np.float64)
    for p in range(pooled):
        for i in range(grid):
            v = start + p * bin_size + (i + 0.5) * bin_size / grid
            if v < -1.0 or v > size:
                continue
            v = max(v, 0.0)
            lo = int(v)
            if lo >= size - 1:
                lo = hi = size - 1
                v = float(lo)
            else:
                hi = lo + 1
            frac = v - lo
            m[p, lo] += 1.0 - frac
            m[p, hi] += frac
    return m


def _roi_geometry(roi, attrs, H, W):
    PH, PW = attrs["pooled_size"]
    off = 0.5 if attrs["aligned"] else 0.0
    sw, sh, ew, eh = (float(v) * attrs["spatial_scale"] - off for v in roi[1:5])
    rw, rh = ew - sw, eh - sh
    if not attrs["aligned"]:
        rw, rh = max(rw, 1.0), max(rh, 1.0)
    bh, bw = rh / PH, rw / PW
    sr = attrs["sample_ratio"]
    gh = sr if sr > 0 else int(math.ceil(rh / PH))
    gw = sr if sr > 0 else int(math.ceil(rw / PW))
    ay = _axis_weights(sh, bh, PH, gh, H)
    ax = _axis_weights(sw, bw, PW, gw, W)
    return ay, ax, float(max(gh * gw, 1))


def _roi_align_rule(attrs, shapes, dtypes):
    d, r = tuple(shapes[0]), tuple(shapes[1])
    if len(d) != 4:
        raise ShapeError("data should be a 4D tensor, got %s" % fmt(d))
    if len(r) != 2 or r[1] != 5:
        raise ShapeError("rois should be a 2D tensor of shape [batch, 5], got %s" % fmt(r))
    PH, PW = attrs["pooled_size"]
    c = d[1]
    if attrs["position_sensitive"]:
        if c % (PH * PW):
            raise ShapeError("position_sensitive needs channels (%d) divisible by %d"
                             % (c, PH * PW))
        c //= PH * PW
    return ((r[0], c, PH, PW),), (dtypes[0],)


def _roi_check(op, attrs):
    ps = attrs["pooled_size"]
    if len(ps) != 2 or min(ps) <= 0:
        raise OpError("pooled_size=%s must be a positive (h, w)" % (ps,))
    if not 0.0 <= attrs["spatial_scale"] <= 1.0:
        raise OpError("spatial_scale=%r must be in [0, 1]" % attrs["spatial_scale"])


_ROI = [Param("pooled_size", p_shape, None, "ROI Align output roi feature map height and "
              "width: (h, w)"),
        Param("spatial_scale", p_float, None, "Ratio of input feature map height (or w) to raw "
              "image height (or w). Equals the reciprocal of total stride in convolutional "
              "layers"),
        Param("sample_ratio", p_int, -1, "Optional sampling ratio of ROI align, using "
              "adaptive size by default."),
        Param("position_sensitive", p_bool, False, "Whether to perform position-sensitive RoI "
              "pooling."),
        Param("aligned", p_bool, False, "Center-aligned ROIAlign introduced in Detectron2. To "
              "enable, set aligned to True.")]


def _ps_select(full, PH, PW):
    """Position-sensitive: out[c, ph, pw] = full[c*PH*PW + ph*PW + pw, ph, pw]."""
    C = full.shape[0] // (PH * PW)
    f = full.reshape(C, PH, PW, PH, PW)
    i, j = np.arange(PH), np.arange(PW)
    return f[:, i[:, None], j[None, :], i[:, None], j[None, :]]


def _rroi_rule(attrs, shapes, dtypes):
    d, r = tuple(shapes[0]), tuple(shapes[1])
    if len(d) != 4:
        raise ShapeError("data should be a 4D tensor, got %s" % fmt(d))
    if len(r) != 2 or r[1] != 6:
        raise ShapeError("rois should be a 2D tensor of shape [batch, 6], got %s" % fmt(r))
    PH, PW = attrs["pooled_size"]
    return ((r[0], d[1], PH, PW),), (dtypes[0],)


def _bilinear_gather(xp, img, y, x):
    """img (C, H, W) sampled at points y, x (any shape) with MXNet's rule."""
    H, W = img.shape[1:]
    outside = (y < -1.0) | (y > H) | (x < -1.0) | (x > W)
    y = np.maximum(y, 0.0)
    x = np.maximum(x, 0.0)
    y0 = y.astype(np.int64)
    x0 = x.astype(np.int64)
    ey, ex = y0 >= H - 1, x0 >= W - 1
    y0 = np.where(ey, H - 1, y0)
    x0 = np.where(ex, W - 1, x0)
    y1 = np.where(ey, H - 1, y0 + 1)
    x1 = np.where(ex, W - 1, x0 + 1)
    ly = np.where(ey, 0.0, y - y0)
    lx = np.where(ex, 0.0, x - x0)
    hy, hx = 1.0 - ly, 1.0 - lx
    v = (img[:, y0, x0] * (hy * hx) + img[:, y0, x1] * (hy * lx)
         + img[:, y1, x0] * (ly * hx) + img[:, y1, x1] * (ly * lx))
    return xp.where(xp.asarray(outside), 0.0, v)


@register("_contrib_RROIAlign", inputs=("data", "rois"), params=[
    Param("pooled_size", p_shape, None, "RROI align output shape (h,w) "),
    Param("spatial_scale", p_float, None, "Ratio of input feature map height (or width) to "
          "raw image height (or width). Equals the reciprocal of total stride in "
          "convolutional layers"),
    Param("sampling_ratio", p_int, -1, "Optional sampling ratio of RROI align, using adaptive "
          "size by default.")], infer=_rroi_rule, inline=False)
def _contrib_rroi_align(xp, data, rois, out, pooled_size, spatial_scale, sampling_ratio=-1):
    """RROIAlign(data, rois, pooled_size, spatial_scale, sampling_ratio=-1):
    rotated RoI align; rois rows are [batch index, center x, center y, width,
    height, angle in degrees]."""
    PH, PW = pooled_size
    r_np = np.asarray(rois.get() if hasattr(rois, "get") else rois, dtype=np.float64)
    f32 = np.float32
    for r in range(r_np.shape[0]):
        b = int(r_np[r, 0])
        if b < 0:
            out[r] = 0
            continue
        cw, ch, rw, rh = (f32(v) * f32(spatial_scale) for v in r_np[r, 1:5])
        theta = f32(r_np[r, 5] * np.pi / 180.0)
        rw, rh = max(rw, f32(1.0)), max(rh, f32(1.0))
        bh, bw = rh / f32(PH), rw / f32(PW)
        gh = sampling_ratio if sampling_ratio > 0 else int(np.ceil(rh / f32(PH)))
        gw = sampling_ratio if sampling_ratio > 0 else int(np.ceil(rw / f32(PW)))
        count = max(gh * gw, 1)
        yy = (-rh / f32(2.0) + np.arange(PH, dtype=f32)[:, None] * bh
              + (np.arange(gh, dtype=f32)[None, :] + f32(0.5)) * bh / f32(gh))     # (PH, gh)
        xx = (-rw / f32(2.0) + np.arange(PW, dtype=f32)[:, None] * bw
              + (np.arange(gw, dtype=f32)[None, :] + f32(0.5)) * bw / f32(gw))     # (PW, gw)
        Y = yy[:, :, None, None]
        X = xx[None, None, :, :]
        c, s = np.cos(theta, dtype=f32), np.sin(theta, dtype=f32)
        x = X * c + Y * s + cw
        y = Y * c - X * s + ch
        v = _bilinear_gather(xp, data[b].astype(np.float64), xp.asarray(y.astype(np.float64)),
                             xp.asarray(x.astype(np.float64)))                   # (C, PH, gh, PW, gw)
        out[r] = v.sum(axis=(2, 4)) / count


# ------------------------------------------------------------ PSROIPooling


def _c_round(v):
    return math.floor(abs(v) + 0.5) * (1 if v >= 0 else -1)     # C's round()


def _psroi_bins(roi, attrs, H, W):
    """[(ph, pw, hstart, hend, wstart, wend, channel offset gh*G+gw)] of one roi."""
    sc, P = attrs["spatial_scale"], attrs["pooled_size"]
    G = attrs["group_size"] or P
    sw = _c_round(float(roi[1])) * sc
    sh = _c_round(float(roi[2])) * sc
    ew = (_c_round(float(roi[3])) + 1.0) * sc
    eh = (_c_round(float(roi[4])) + 1.0) * sc
    rw, rh = max(ew - sw, 0.1), max(eh - sh, 0.1)
    bh, bw = rh / P, rw / P
    bins = []
    for ph in range(P):
        for pw in range(P):
            hs = min(max(int(math.floor(ph * bh + sh)), 0), H)
            he = min(max(int(math.ceil((ph + 1) * bh + sh)), 0), H)
            ws = min(max(int(math.floor(pw * bw + sw)), 0), W)
            we = min(max(int(math.ceil((pw + 1) * bw + sw)), 0), W)
            gw = min(max(int(math.floor(pw * G / P)), 0), G - 1)
            gh = min(max(int(math.floor(ph * G / P)), 0), G - 1)
            bins.append((ph, pw, hs, he, ws, we, gh * G + gw))
    return bins, G


def _psroi_rule(attrs, shapes, dtypes):
    d, r = tuple(shapes[0]), tuple(shapes[1])
    P, od = attrs["pooled_size"], attrs["output_dim"]
    G = attrs["group_size"] or P
    if len(d) != 4 or d[1] != od * G * G:
        raise ShapeError("data must be (N, output_dim * group_size^2 = %d, H, W), got %s"
                         % (od * G * G, fmt(d)))
    if len(r) != 2 or r[1] != 5:
        raise ShapeError("rois should be a 2D tensor of shape [batch, 5], got %s" % fmt(r))
    return ((r[0], od, P, P),), (dtypes[0],)


_PSROI = [Param("spatial_scale", p_float, None, "Ratio of input feature map height (or w) to "
                "raw image height (or w). Equals the reciprocal of total stride in "
                "convolutional layers"),
          Param("output_dim", p_int, None, "fix output dim"),
          Param("pooled_size", p_int, None, "fix pooled size"),
          Param("group_size", p_int, 0, "fix group size")]


@register("_contrib_PSROIPooling", inputs=("data", "rois"), params=_PSROI, infer=_psroi_rule,
          inline=False)
def _contrib_psroi_pooling(xp, data, rois, out, spatial_scale, output_dim, pooled_size,
                           group_size=0):
    """PSROIPooling(data, rois, spatial_scale, output_dim, pooled_size,
    group_size=0): position-sensitive RoI average pooling (R-FCN)."""
    attrs = dict(spatial_scale=spatial_scale, pooled_size=pooled_size, group_size=group_size)
    H, W = data.shape[2:]
    r_np = np.asarray(rois.get() if hasattr(rois, "get") else rois, dtype=np.float64)
    out[...] = 0
    for r in range(r_np.shape[0]):
        b = int(r_np[r, 0])
        bins, G = _psroi_bins(r_np[r], attrs, H, W)
        ch = xp.arange(output_dim) * G * G
        for ph, pw, hs, he, ws, we, c0 in bins:
            if he <= hs or we <= ws:
                continue
            v = data[b, ch + c0, hs:he, ws:we].astype(np.float64)
            out[r, :, ph, pw] = v.sum(axis=(1, 2)) / ((he - hs) * (we - ws))


@register("_backward_PSROIPooling", inputs=("ograd", "data", "rois"), params=_PSROI,
          infer=lambda a, s, d: ((tuple(s[1]),), (d[1],)), inline=False)
def _backward_psroi_pooling(xp, ograd, data, rois, out, spatial_scale, output_dim,
                            pooled_size, group_size=0):
    """The gradient of PSROIPooling w.r.t. data."""
    attrs = dict(spatial_scale=spatial_scale, pooled_size=pooled_size, group_size=group_size)
    H, W = data.shape[2:]
    acc = xp.zeros(data.shape, dtype=np.float64)
    r_np = np.asarray(rois.get() if hasattr(rois, "get") else rois, dtype=np.float64)
    for r in range(r_np.shape[0]):
        b = int(r_np[r, 0])
        bins, G = _psroi_bins(r_np[r], attrs, H, W)
        ch = xp.arange(output_dim) * G * G
        for ph, pw, hs, he, ws, we, c0 in bins:
            if he <= hs or we <= ws:
                continue
            g = ograd[r, :, ph, pw].astype(np.float64) / ((he - hs) * (we - ws))
            acc[b, ch + c0, hs:he, ws:we] += g[:, None, None]
    out[...] = acc


def _psroi_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_PSROIPooling(og[0], ins[0], ins[1], **attrs),
            F.zeros_like(ins[1])]


set_grads({"_contrib_PSROIPooling": _psroi_grad})
