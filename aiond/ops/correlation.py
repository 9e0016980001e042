"""MXNet 1.9.1's ``Correlation`` (FlowNet's correlation layer,
``src/operator/correlation*``): for every displacement (s2o, s2p) on a grid
of radius max_displacement / stride2 (step stride2), the mean over a
kernel_size x kernel_size window and all channels of data1 * shifted data2
(or |data1 - shifted data2| without is_multiply), sampled every stride1.

Index arithmetic follows MXNet's CPU kernel exactly: output position (i, j)
reads the zero-padded inputs from row i*stride1 + max_displacement and column
j*stride1 + max_displacement (the window starts there; it is not centred)."""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._rules import fmt
from .registry import Param, p_bool, p_int, register, window_cost

_PARAMS = [
    Param("kernel_size", p_int, 1, "kernel size for Correlation must be an odd number"),
    Param("max_displacement", p_int, 1, "Max displacement of Correlation "),
    Param("stride1", p_int, 1, "stride1 quantize data1 globally"),
    Param("stride2", p_int, 1, "stride2 quantize data2 within the neighborhood centered "
          "around data1"),
    Param("pad_size", p_int, 0, "pad for Correlation"),
    Param("is_multiply", p_bool, True, "operation type is either multiplication or subduction")]


def _geom(attrs, d):
    k, md, s1, s2, p = (attrs[n] for n in ("kernel_size", "max_displacement", "stride1",
                                          "stride2", "pad_size"))
    if k % 2 == 0:
        raise OpError("kernel size should be odd number, got %d" % k)
    if s1 < 1 or s2 < 1:
        raise OpError("stride1 and stride2 must be positive")
    Hp, Wp = d[2] + 2 * p, d[3] + 2 * p
    border = md + (k - 1) // 2
    th = math.ceil((Hp - 2 * border) / s1)
    tw = math.ceil((Wp - 2 * border) / s1)
    if th < 1 or tw < 1:
        raise ShapeError("Correlation cannot be done with current settings.Neighborhood and "
                         "kernel don't fit in blob (data %s, kernel_size=%d, max_displacement=%d,"
                         " pad_size=%d)" % (fmt(d), k, md, p))
    r = md // s2
    return th, tw, r, 2 * r + 1


def _corr_rule(attrs, shapes, dtypes):
    d1, d2 = tuple(shapes[0]), tuple(shapes[1])
    if len(d1) != 4 or len(d2) != 4:
        raise ShapeError("data should be a 4D tensor, got %s and %s" % (fmt(d1), fmt(d2)))
    if d1 != d2:
        raise ShapeError("data1 %s and data2 %s must have the same shape" % (fmt(d1), fmt(d2)))
    th, tw, _, gw = _geom(attrs, d1)
    return ((d1[0], gw * gw, th, tw),), (dtypes[0],)


def _padded(xp, x, p, extra):
    """x zero-padded by p on each side plus ``extra`` more at the end (MXNet's
    kernel may read a little past its padded buffer on the last window)."""
    N, C, H, W = x.shape
    buf = xp.zeros((N, C, H + 2 * p + extra, W + 2 * p + extra), dtype=np.float64)
    buf[:, :, p:p + H, p:p + W] = x
    return buf


def _taps(attrs, th, tw, r, gw):
    """(top channel, h, w, window slices of data1 and data2 in padded coords)."""
    k, md, s1, s2 = (attrs[n] for n in ("kernel_size", "max_displacement", "stride1",
                                       "stride2"))
    for tc in range(gw * gw):
        s2o = (tc % gw - r) * s2
        s2p = (tc // gw - r) * s2
        for h in range(k):
            for w in range(k):
                y1, x1 = md + h, md + w
                a = (slice(y1, y1 + s1 * (th - 1) + 1, s1), slice(x1, x1 + s1 * (tw - 1) + 1, s1))
                b = (slice(y1 + s2p, y1 + s2p + s1 * (th - 1) + 1, s1),
                     slice(x1 + s2o, x1 + s2o + s1 * (tw - 1) + 1, s1))
                yield tc, a, b


def _extra(attrs, d, th, tw):
    k, md, s1 = attrs["kernel_size"], attrs["max_displacement"], attrs["stride1"]
    need = max((th - 1) * s1 + 2 * md + k, (tw - 1) * s1 + 2 * md + k)
    return max(0, need - min(d[2], d[3]) - 2 * attrs["pad_size"])


@register("Correlation", inputs=("data1", "data2"), params=_PARAMS, infer=_corr_rule,
          inline=window_cost)
def correlation(xp, data1, data2, out, kernel_size=1, max_displacement=1, stride1=1, stride2=1,
                pad_size=0, is_multiply=True):
    """Correlation(data1, data2, kernel_size=1, max_displacement=1, stride1=1,
    stride2=1, pad_size=0, is_multiply=True): FlowNet's correlation of two
    feature maps, shape (N, (2*(max_displacement//stride2)+1)**2, H', W')."""
    attrs = dict(kernel_size=kernel_size, max_displacement=max_displacement, stride1=stride1,
                 stride2=stride2, pad_size=pad_size)
    th, tw, r, gw = _geom(attrs, data1.shape)
    ex = _extra(attrs, data1.shape, th, tw)
    t1, t2 = _padded(xp, data1, pad_size, ex), _padded(xp, data2, pad_size, ex)
    acc = xp.zeros((data1.shape[0], gw * gw, th, tw))
    for tc, a, b in _taps(attrs, th, tw, r, gw):
        u, v = t1[(slice(None), slice(None)) + a], t2[(slice(None), slice(None)) + b]
        acc[:, tc] += (u * v if is_multiply else xp.abs(u - v)).sum(axis=1)
    out[...] = acc / (kernel_size * kernel_size * data1.shape[1])


@register("_backward_Correlation", inputs=("ograd", "data1", "data2"), params=_PARAMS,
          num_outputs=2, infer=lambda a, s, d: ((tuple(s[1]), tuple(s[2])), (d[1], d[2])),
          inline=window_cost)
def _backward_correlation(xp, ograd, data1, data2, out, kernel_size=1, max_displacement=1,
                          stride1=1, stride2=1, pad_size=0, is_multiply=True):
    """The gradients of Correlation w.r.t. data1 and data2."""
    attrs = dict(kernel_size=kernel_size, max_displacement=max_displacement, stride1=stride1,
                 stride2=stride2, pad_size=pad_size)
    N, C, H, W = data1.shape
    th, tw, r, gw = _geom(attrs, data1.shape)
    ex = _extra(attrs, data1.shape, th, tw)
    t1, t2 = _padded(xp, data1, pad_size, ex), _padded(xp, data2, pad_size, ex)
    g1, g2 = xp.zeros_like(t1), xp.zeros_like(t2)
    scale = 1.0 / (kernel_size * kernel_size * C)
    g = ograd.astype(np.float64) * scale
    for tc, a, b in _taps(attrs, th, tw, r, gw):
        ia, ib = (slice(None), slice(None)) + a, (slice(None), slice(None)) + b
        gt = g[:, tc][:, None]
        if is_multiply:
            g1[ia] += gt * t2[ib]
            g2[ib] += gt * t1[ia]
        else:
            sg = xp.where(t1[ia] >= t2[ib], 1.0, -1.0)     # MXNet: ties count as +1
            g1[ia] += gt * sg
            g2[ib] -= gt * sg
    p = pad_size
    out[0][...] = g1[:, :, p:p + H, p:p + W]
    out[1][...] = g2[:, :, p:p + H, p:p + W]


def _corr_grad(F, attrs, ins, outs, og):
    return list(F._internal._backward_Correlation(og[0], ins[0], ins[1], **attrs))


set_grads({"Correlation": _corr_grad})
