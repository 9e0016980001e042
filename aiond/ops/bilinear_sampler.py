"""BilinearSampler (MXNet 1.9.1): sample ``data`` (N, C, H, W) at the points of
``grid`` (N, 2, H', W') by bilinear interpolation.

``grid[:, 0]`` holds x and ``grid[:, 1]`` y in normalised coordinates (-1..1
spanning the input's width and height): the source pixel is
((x + 1) (W - 1) / 2, (y + 1) (H - 1) / 2). Neighbours outside the input
count as 0. Gradients flow to ``data`` and ``grid``. (SpatialTransformer is
GridGenerator's affine grid followed by this sampler.)"""
from __future__ import annotations

from ..base import ShapeError
from ._grad import set_grads
from ._rules import fmt
from .registry import Param, register
from .stn import corners_at

_PARAMS = [Param("cudnn_off", lambda v: None if v is None else bool(v), None,
                 "whether to turn cudnn off (aiond has no cuDNN path: ignored)")]


def _rule(attrs, shapes, dtypes):
    if len(shapes) != 2:
        raise ShapeError("BilinearSampler takes 2 inputs (data, grid), got %d" % len(shapes))
    d, g = tuple(shapes[0]), tuple(shapes[1])
    if len(d) != 4:
        raise ShapeError("data must be 4-D (batch, channel, height, width), got %s" % fmt(d))
    if len(g) != 4 or g[0] != d[0] or g[1] != 2:
        raise ShapeError("grid has shape %s but data %s needs (%d, 2, height, width)"
                         % (fmt(g), fmt(d), d[0]))
    return ((d[0], d[1], g[2], g[3]),), (dtypes[0],)


def _points(xp, grid):
    N, _, h, w = grid.shape
    return grid.reshape(N, 2, h * w).astype(xp.float64)


@register("BilinearSampler", inputs=("data", "grid"), params=_PARAMS, infer=_rule,
          inline=False)
def bilinear_sampler(xp, data, grid, out, cudnn_off=None):
    """BilinearSampler(data, grid): data sampled bilinearly at grid's
    normalised (x, y) points; shape (N, C, grid height, grid width)."""
    N, C = data.shape[:2]
    _, _, wx, wy, (tl, tr, bl, br), _ = corners_at(xp, data, _points(xp, grid))
    wx, wy = wx[..., None], wy[..., None]
    o = tl * wy * wx + tr * wy * (1 - wx) + bl * (1 - wy) * wx + br * (1 - wy) * (1 - wx)
    out[...] = xp.moveaxis(o, 2, 1).reshape(out.shape)


@register("_backward_BilinearSampler", inputs=("ograd", "data", "grid"), params=_PARAMS,
          infer=lambda a, s, d: ((tuple(s[1]), tuple(s[2])), (d[1], d[2])), num_outputs=2,
          inline=False)
def _backward_bilinear_sampler(xp, ograd, data, grid, out, cudnn_off=None):
    ddata, dgrid = out
    N, C, H, W = data.shape
    P = grid.shape[2] * grid.shape[3]
    _, _, wx, wy, (tl, tr, bl, br), masks = corners_at(xp, data, _points(xp, grid))
    g = xp.moveaxis(ograd.reshape(N, C, P).astype(xp.float64), 1, 2)   # (N, P, C)
    acc = xp.zeros((N, H, W, C))
    weights = (wy * wx, wy * (1 - wx), (1 - wy) * wx, (1 - wy) * (1 - wx))
    for (n, yy, xx, ok), w in zip(masks, weights):
        nn, pp = xp.nonzero(ok)
        xp.add.at(acc, (nn, yy[nn, pp], xx[nn, pp]), g[nn, pp] * w[nn, pp, None])
    ddata[...] = xp.moveaxis(acc, 3, 1)
    wx, wy = wx[..., None], wy[..., None]
    # d out / d (source x, source y), summed over channels with ograd, then
    # to normalised coordinates
    gx = (((tr - tl) * wy + (br - bl) * (1 - wy)) * g).sum(axis=2) * (W - 1) / 2
    gy = (((bl - tl) * wx + (br - tr) * (1 - wx)) * g).sum(axis=2) * (H - 1) / 2
    dgrid[...] = xp.stack([gx, gy], axis=1).reshape(dgrid.shape)


set_grads({"BilinearSampler": lambda F, at, ins, outs, og: list(
    F._internal._backward_BilinearSampler(og[0], ins[0], ins[1], **at))})
