"""``mx.nd.contrib.ModulatedDeformableConvolution`` (DCNv2; MXNet's
``contrib/modulated_deformable_convolution*`` and
``nn/modulated_deformable_im2col.h``): DeformableConvolution whose sampled
taps are also scaled by a learned ``mask``.

``offset`` is (N, dg * 2 * kh * kw, Ho, Wo) laid out as DeformableConvolution's;
``mask`` is (N, dg * kh * kw, Ho, Wo). Unlike DeformableConvolution, a tap at
(row, col) reads the input when -1 < row < H and -1 < col < W, by bilinear
interpolation whose corners outside the input read 0 (zero padding), as
MXNet's modulated im2col does. Gradients w.r.t. data, offset, mask, weight and
bias are the exact derivatives of that forward."""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._rules import fmt
from .deformable import _PARAMS as _DCN_PARAMS, _geom, _out_hw
from .registry import Param, optional, p_int, register, window_cost

_PARAMS = _DCN_PARAMS[:-1] + [
    Param("im2col_step", p_int, 64, "Maximum number of images per im2col computation; The "
          "total batch size should be divisable by this value or smaller than this value; if "
          "you face out of memory problem, you can try to use a smaller value here."),
    _DCN_PARAMS[-1]]


def _rule(attrs, shapes, dtypes):
    n_in = 4 if attrs["no_bias"] else 5
    if len(shapes) != n_in:
        raise OpError("expects %d inputs with no_bias=%s, got %d"
                      % (n_in, attrs["no_bias"], len(shapes)))
    x, off, mask, w = (tuple(s) for s in shapes[:4])
    if len(x) != 4:
        raise ShapeError("data must be 4-D (N, C, H, W), got %s" % fmt(x))
    k, _, _, _ = _geom(attrs)
    G, dg, F = attrs["num_group"], attrs["num_deformable_group"], attrs["num_filter"]
    if x[1] % G or x[1] % dg or F % G:
        raise ShapeError("channels %d and num_filter %d must divide by num_group %d and "
                         "num_deformable_group %d" % (x[1], F, G, dg))
    if F % dg:
        raise ShapeError("num_filter %d must divide by num_deformable_group %d" % (F, dg))
    if x[0] > attrs["im2col_step"] and x[0] % attrs["im2col_step"]:
        raise ShapeError("batch size %d must be at most im2col_step %d or divide by it"
                         % (x[0], attrs["im2col_step"]))
    ho, wo = _out_hw(attrs, x[2], x[3])
    if ho <= 0 or wo <= 0:
        raise ShapeError("kernel %s does not fit data %s" % (fmt(k), fmt(x)))
    T = k[0] * k[1]
    if off != (x[0], dg * 2 * T, ho, wo):
        raise ShapeError("offset must have shape %s, got %s"
                         % (fmt((x[0], dg * 2 * T, ho, wo)), fmt(off)))
    if mask != (x[0], dg * T, ho, wo):
        raise ShapeError("mask must have shape %s, got %s"
                         % (fmt((x[0], dg * T, ho, wo)), fmt(mask)))
    if w != (F, x[1] // G) + k:
        raise ShapeError("weight must have shape %s, got %s" % (fmt((F, x[1] // G) + k), fmt(w)))
    if n_in == 5 and tuple(shapes[4]) != (F,):
        raise ShapeError("bias must have shape (%d,), got %s" % (F, fmt(shapes[4])))
    return ((x[0], F, ho, wo),), (dtypes[0],)


def _taps(xp, attrs, shape, offset):
    """Per (group, tap): the sampling position's 4 corners as (row, col,
    bilinear weight, inside-input flag) plus the d(weight)/d(row), d/d(col)
    factors; every array (N, Ho, Wo)."""
    k, s, d, p = _geom(attrs)
    N, C, H, W = shape
    ho, wo = offset.shape[2:]
    dg = attrs["num_deformable_group"]
    off = offset.reshape(N, dg, k[0] * k[1], 2, ho, wo).astype(np.float64)
    base_r = (xp.arange(ho) * s[0] - p[0])[:, None]
    base_c = (xp.arange(wo) * s[1] - p[1])[None, :]
    out = {}
    for g in range(dg):
        for t in range(k[0] * k[1]):
            i, j = divmod(t, k[1])
            r = base_r + i * d[0] + off[:, g, t, 0]
            c = base_c + j * d[1] + off[:, g, t, 1]
            valid = (r > -1) & (c > -1) & (r < H) & (c < W)
            hl = xp.floor(r).astype(np.int64)
            wl = xp.floor(c).astype(np.int64)
            lh, lw = r - hl, c - wl
            corners = []
            for dh, dw, wt, dwr, dwc in ((0, 0, (1 - lh) * (1 - lw), -(1 - lw), -(1 - lh)),
                                         (0, 1, (1 - lh) * lw, -lw, 1 - lh),
                                         (1, 0, lh * (1 - lw), 1 - lw, -lh),
                                         (1, 1, lh * lw, lw, lh)):
                rr, cc = hl + dh, wl + dw
                inside = valid & (rr >= 0) & (cc >= 0) & (rr <= H - 1) & (cc <= W - 1)
                corners.append((xp.clip(rr, 0, H - 1), xp.clip(cc, 0, W - 1),
                                xp.where(inside, wt, 0.0), inside, dwr, dwc))
            out[g, t] = (valid, corners)
    return out


def _gather(x, n_idx, hi, wi):
    """x (N, Cg, H, W) at per-(n, ho, wo) positions -> (N, Cg, Ho, Wo)."""
    return x[n_idx, :, hi, wi].transpose(0, 3, 1, 2)


def _columns(xp, data, mask, attrs, taps):
    """(masked columns (N, C, T, Ho, Wo), unmasked sampled values likewise)."""
    N, C, H, W = data.shape
    k, _, _, _ = _geom(attrs)
    T = k[0] * k[1]
    dg = attrs["num_deformable_group"]
    cg = C // dg
    ho, wo = mask.shape[2:]
    vals = xp.zeros((N, C, T, ho, wo), dtype=np.float64)
    n_idx = xp.arange(N)[:, None, None]
    x = data.astype(np.float64)
    m = mask.reshape(N, dg, T, ho, wo).astype(np.float64)
    for (g, t), (valid, corners) in taps.items():
        xg = x[:, g * cg:(g + 1) * cg]
        v = sum(wt[:, None] * _gather(xg, n_idx, rr, cc) for rr, cc, wt, _, _, _ in corners)
        vals[:, g * cg:(g + 1) * cg, t] = xp.where(valid[:, None], v, 0.0)
    cols = vals * xp.repeat(m, cg, axis=1)
    return cols, vals


@register("_contrib_ModulatedDeformableConvolution",
          inputs=("data", "offset", "mask", "weight", "bias"),
          params=_PARAMS, infer=_rule, inline=window_cost)
@optional("bias")
def _contrib_modulated_deformable_convolution(xp, data, offset, mask, weight, *bias, out,
                                              num_filter, num_group=1, no_bias=False,
                                              **attrs):
    """ModulatedDeformableConvolution(data, offset, mask, weight, bias=None,
    kernel, stride, dilate, pad, num_filter, num_group=1,
    num_deformable_group=1, no_bias=False, im2col_step=64): convolution with
    taps moved by offset (zero-padded bilinear sampling) and scaled by mask."""
    attrs["num_filter"], attrs["num_group"] = num_filter, num_group
    taps = _taps(xp, attrs, data.shape, offset)
    cols, _ = _columns(xp, data, mask, attrs, taps)
    N, C = data.shape[:2]
    ho, wo = cols.shape[3:]
    G = num_group
    cm = cols.reshape(N, G, (C // G) * cols.shape[2], ho * wo)
    wm = weight.astype(np.float64).reshape(G, num_filter // G, -1)
    y = xp.matmul(wm, cm).reshape(N, num_filter, ho, wo)
    if bias:
        y = y + bias[0].astype(np.float64).reshape(1, -1, 1, 1)
    out[...] = y


@register("_backward_ModulatedDeformableConvolution",
          inputs=("ograd", "data", "offset", "mask", "weight"), params=_PARAMS, num_outputs=5,
          infer=lambda a, s, d: ((tuple(s[1]), tuple(s[2]), tuple(s[3]), tuple(s[4]),
                                  (a["num_filter"],)), (d[1], d[2], d[3], d[4], d[4])),
          inline=window_cost)
def _backward_modulated_deformable_convolution(xp, ograd, data, offset, mask, weight, out,
                                               num_filter, num_group=1, no_bias=False,
                                               **attrs):
    """The gradients of ModulatedDeformableConvolution w.r.t. data, offset,
    mask, weight and bias."""
    attrs["num_filter"], attrs["num_group"] = num_filter, num_group
    k, _, _, _ = _geom(attrs)
    T = k[0] * k[1]
    N, C, H, W = data.shape
    G = num_group
    dg = attrs["num_deformable_group"]
    cg = C // dg
    ho, wo = ograd.shape[2:]
    taps = _taps(xp, attrs, data.shape, offset)
    cols, vals = _columns(xp, data, mask, attrs, taps)
    g = ograd.astype(np.float64).reshape(N, G, num_filter // G, ho * wo)
    wm = weight.astype(np.float64).reshape(G, num_filter // G, -1)
    cm = cols.reshape(N, G, (C // G) * T, ho * wo)
    out[3][...] = xp.einsum("ngfp,ngkp->gfk", g, cm).reshape(weight.shape)
    out[4][...] = ograd.astype(np.float64).sum(axis=(0, 2, 3))
    dcols = xp.matmul(wm.transpose(0, 2, 1), g).reshape(N, C, T, ho, wo)
    m = mask.reshape(N, dg, T, ho, wo).astype(np.float64)
    # d mask: the unmasked sampled values against the column gradient
    out[2][...] = (dcols * vals).reshape(N, dg, cg, T, ho, wo).sum(axis=2).reshape(mask.shape)
    dx = xp.zeros((N, C, H, W), dtype=np.float64)
    doff = xp.zeros((N, dg, T, 2, ho, wo), dtype=np.float64)
    x = data.astype(np.float64)
    n_idx = xp.broadcast_to(xp.arange(N)[:, None, None], (N, ho, wo))
    for (gi, t), (valid, corners) in taps.items():
        sl = slice(gi * cg, (gi + 1) * cg)
        dc = xp.where(valid[:, None], dcols[:, sl, t], 0.0) * m[:, gi, t][:, None]
        xg = x[:, sl]
        dr = 0.0
        dcl = 0.0
        view = dx[:, sl].transpose(0, 2, 3, 1)                      # (N, H, W, cg)
        for rr, cc, wt, inside, dwr, dwc in corners:
            v = xp.where(inside[:, None], _gather(xg, n_idx, rr, cc), 0.0)
            dr = dr + dwr[:, None] * v
            dcl = dcl + dwc[:, None] * v
            xp.add.at(view, (n_idx, rr, cc), (dc * wt[:, None]).transpose(0, 2, 3, 1))
        doff[:, gi, t, 0] = (dc * dr).sum(axis=1)
        doff[:, gi, t, 1] = (dc * dcl).sum(axis=1)
    out[0][...] = dx
    out[1][...] = doff.reshape(offset.shape)


def _grad(F, attrs, ins, outs, og):
    dx, doff, dmask, dw, db = F._internal._backward_ModulatedDeformableConvolution(
        og[0], ins[0], ins[1], ins[2], ins[3], **attrs)
    return [dx, doff, dmask, dw] + ([db] if len(ins) == 5 else [])


set_grads({"_contrib_ModulatedDeformableConvolution": _grad})
