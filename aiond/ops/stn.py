"""SpatialTransformer (MXNet 1.9.1; affine transform, bilinear sampler).

``loc`` (N, 6) is each sample's row-major 2x3 affine matrix. Output pixel
(h, w) of the (H', W') target reads the input at theta @ [x_t, y_t, 1],
with x_t = -1 + 2w/(W'-1), y_t = -1 + 2h/(H'-1) (normalised coordinates,
-1..1 spanning the input), by bilinear interpolation; neighbours outside the
input count as 0. Gradients flow to ``data`` and ``loc``.
"""
from __future__ import annotations

import numpy as np

from ..base import ShapeError
from ._grad import set_grads
from ._rules import fmt
from .registry import Param, p_shape, p_str, register

_PARAMS = [
    Param("target_shape", p_shape, (0, 0), "output shape(h, w) of spatial transformer: (y, x)"),
    Param("transform_type", p_str, doc="transformation type", choices=("affine",)),
    Param("sampler_type", p_str, doc="sampling type", choices=("bilinear",)),
    Param("cudnn_off", lambda v: None if v is None else bool(v), None, "ignored (cuDNN)")]


def _rule(attrs, shapes, dtypes):
    d, loc = tuple(shapes[0]), tuple(shapes[1])
    if len(d) != 4:
        raise ShapeError("data must be 4-D (batch, channel, height, width), got %s" % fmt(d))
    if len(loc) != 2 or loc[0] != d[0] or loc[1] != 6:
        raise ShapeError("loc has shape %s but data %s needs (%d, 6)" % (fmt(loc), fmt(d), d[0]))
    th, tw = attrs["target_shape"]
    if th <= 0 or tw <= 0:
        raise ShapeError("target_shape must be positive, got %s" % (attrs["target_shape"],))
    return ((d[0], d[1], th, tw),), (dtypes[0],)


def _grid_dst(xp, th, tw):
    """(3, th*tw): normalised target x, y and 1 for each output pixel."""
    i = xp.arange(th * tw)
    x = -1.0 + (i % tw) * (2.0 / (tw - 1) if tw > 1 else 0.0)
    y = -1.0 + (i // tw) * (2.0 / (th - 1) if th > 1 else 0.0)
    return xp.stack([x, y, xp.ones(th * tw)])


def _corners(xp, data, loc, target):
    """Source coordinates and the four neighbours' values and weights."""
    N = data.shape[0]
    th, tw = target
    g = xp.einsum("nkj,jp->nkp", loc.reshape(N, 2, 3).astype(xp.float64), _grid_dst(xp, th, tw))
    return corners_at(xp, data, g)


def corners_at(xp, data, g):
    """For normalised source points ``g`` (N, 2, P) (x then y, -1..1 spanning
    the input): their floor corners, the left/top weights, the four
    neighbours' values (N, P, C; 0 outside the input) and where they are."""
    N, C, H, W = data.shape
    x = (g[:, 0] + 1) * (W - 1) / 2           # (N, P)
    y = (g[:, 1] + 1) * (H - 1) / 2
    x0 = xp.floor(x).astype(xp.int64)
    y0 = xp.floor(y).astype(xp.int64)
    wx = 1 - (x - x0)                         # weight of the left / top neighbour
    wy = 1 - (y - y0)
    n = xp.arange(N)[:, None]
    vals, masks = [], []
    for dy in (0, 1):
        for dx in (0, 1):
            yy, xx = y0 + dy, x0 + dx
            ok = (yy >= 0) & (yy <= H - 1) & (xx >= 0) & (xx <= W - 1)
            v = data[n, :, xp.clip(yy, 0, H - 1), xp.clip(xx, 0, W - 1)]   # (N, P, C)
            vals.append(xp.where(ok[..., None], v, 0).astype(xp.float64))
            masks.append((n, yy, xx, ok))
    return x0, y0, wx, wy, vals, masks


@register("SpatialTransformer", inputs=("data", "loc"), params=_PARAMS, infer=_rule,
          inline=False)
def spatial_transformer(xp, data, loc, out, target_shape, transform_type="affine",
                        sampler_type="bilinear", cudnn_off=None):
    """SpatialTransformer(data, loc, target_shape, transform_type='affine',
    sampler_type='bilinear'): affine warp of data sampled bilinearly."""
    N, C = data.shape[:2]
    _, _, wx, wy, (tl, tr, bl, br), _ = _corners(xp, data, loc, target_shape)
    wx, wy = wx[..., None], wy[..., None]
    o = tl * wy * wx + tr * wy * (1 - wx) + bl * (1 - wy) * wx + br * (1 - wy) * (1 - wx)
    out[...] = xp.moveaxis(o, 2, 1).reshape(N, C, *target_shape)


@register("_backward_SpatialTransformer", inputs=("ograd", "data", "loc"), params=_PARAMS,
          infer=lambda a, s, d: ((tuple(s[1]), tuple(s[2])), (d[1], d[2])), num_outputs=2,
          inline=False)
def _backward_spatial_transformer(xp, ograd, data, loc, out, target_shape,
                                  transform_type="affine", sampler_type="bilinear",
                                  cudnn_off=None):
    ddata, dloc = out
    N, C, H, W = data.shape
    th, tw = target_shape
    _, _, wx, wy, (tl, tr, bl, br), masks = _corners(xp, data, loc, target_shape)
    g = xp.moveaxis(ograd.reshape(N, C, th * tw).astype(xp.float64), 1, 2)   # (N, P, C)
    acc = xp.zeros((N, H, W, C))
    weights = (wy * wx, wy * (1 - wx), (1 - wy) * wx, (1 - wy) * (1 - wx))
    for (n, yy, xx, ok), w in zip(masks, weights):
        nn, pp = xp.nonzero(ok)
        xp.add.at(acc, (nn, yy[nn, pp], xx[nn, pp]), g[nn, pp] * w[nn, pp, None])
    ddata[...] = xp.moveaxis(acc, 3, 1)
    wx, wy = wx[..., None], wy[..., None]
    # d out / d x (source pixels) and d out / d y, summed over channels with ograd
    gx = ((tr - tl) * wy + (br - bl) * (1 - wy)) * g
    gy = ((bl - tl) * wx + (br - tr) * (1 - wx)) * g
    gx = gx.sum(axis=2) * (W - 1) / 2          # to normalised coordinates
    gy = gy.sum(axis=2) * (H - 1) / 2
    dst = _grid_dst(xp, th, tw)
    dloc[...] = xp.stack([gx @ dst.T, gy @ dst.T], axis=1).reshape(N, 6)


set_grads({"SpatialTransformer": lambda F, at, ins, outs, og: list(
    F._internal._backward_SpatialTransformer(og[0], ins[0], ins[1], **at))})
