"""``mx.nd.contrib.DeformableConvolution`` (``contrib/deformable_convolution*``
and ``nn/deformable_im2col.h``): a 2-D convolution whose kernel taps sample
the input at positions moved by learned offsets.

``offset`` is (N, num_deformable_group * 2 * kh * kw, Ho, Wo): for group g
and tap (i, j), channel 2*(i*kw + j) holds the row offset and the next
channel the column offset. A tap at (row, col) inside [0, H) x [0, W) reads
the input by bilinear interpolation (clamped at the last row/column), a tap
outside reads 0 -- MXNet's deformable_im2col. The columns then meet the
weight as in Convolution (num_group groups). Gradients w.r.t. data, offset,
weight and bias are the exact derivatives of that forward."""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._rules import fmt
from .registry import Param, optional, p_bool, p_int, p_shape, register, window_cost

def _p_opt_str(v):
    return None if v is None or v == "None" else str(v)


_PARAMS = [
    Param("kernel", p_shape, None, "Convolution kernel size: (h, w) or (d, h, w)"),
    Param("stride", p_shape, (), "Convolution stride: (h, w) or (d, h, w). Defaults to 1 for "
          "each dimension."),
    Param("dilate", p_shape, (), "Convolution dilate: (h, w) or (d, h, w). Defaults to 1 for "
          "each dimension."),
    Param("pad", p_shape, (), "Zero pad for convolution: (h, w) or (d, h, w). Defaults to no "
          "padding."),
    Param("num_filter", p_int, None, "Convolution filter(channel) number"),
    Param("num_group", p_int, 1, "Number of group partitions."),
    Param("num_deformable_group", p_int, 1, "Number of deformable group partitions."),
    Param("workspace", p_int, 1024, "Maximum temperal workspace allowed for convolution (MB)."),
    Param("no_bias", p_bool, False, "Whether to disable bias parameter."),
    Param("layout", _p_opt_str, None, "Set layout for input, output and weight. Empty for default "
          "layout: NCW for 1d, NCHW for 2d and NCDHW for 3d.", choices=(None, "NCHW"))]


def _geom(attrs):
    k = tuple(attrs["kernel"])
    if len(k) != 2:
        raise OpError("DeformableConvolution supports 2-D kernels only, got kernel=%s" % (k,))
    s = tuple(attrs["stride"] or (1, 1))
    d = tuple(attrs["dilate"] or (1, 1))
    p = tuple(attrs["pad"] or (0, 0))
    if len(s) != 2 or len(d) != 2 or len(p) != 2:
        raise OpError("stride, dilate and pad must have 2 dimensions like kernel")
    return k, s, d, p


def _out_hw(attrs, H, W):
    k, s, d, p = _geom(attrs)
    ho = (H + 2 * p[0] - (d[0] * (k[0] - 1) + 1)) // s[0] + 1
    wo = (W + 2 * p[1] - (d[1] * (k[1] - 1) + 1)) // s[1] + 1
    return ho, wo


def _rule(attrs, shapes, dtypes):
    n_in = 3 if attrs["no_bias"] else 4
    if len(shapes) != n_in:
        raise OpError("expects %d inputs with no_bias=%s, got %d"
                      % (n_in, attrs["no_bias"], len(shapes)))
    x, off, w = (tuple(s) for s in shapes[:3])
    if len(x) != 4:
        raise ShapeError("data must be 4-D (N, C, H, W), got %s" % fmt(x))
    k, _, _, _ = _geom(attrs)
    G, dg, F = attrs["num_group"], attrs["num_deformable_group"], attrs["num_filter"]
    if x[1] % G or x[1] % dg or F % G:
        raise ShapeError("channels %d and num_filter %d must divide by num_group %d and "
                         "num_deformable_group %d" % (x[1], F, G, dg))
    ho, wo = _out_hw(attrs, x[2], x[3])
    if ho <= 0 or wo <= 0:
        raise ShapeError("kernel %s does not fit data %s" % (fmt(k), fmt(x)))
    if off != (x[0], dg * 2 * k[0] * k[1], ho, wo):
        raise ShapeError("offset must have shape %s, got %s"
                         % (fmt((x[0], dg * 2 * k[0] * k[1], ho, wo)), fmt(off)))
    if w != (F, x[1] // G) + k:
        raise ShapeError("weight must have shape %s, got %s" % (fmt((F, x[1] // G) + k), fmt(w)))
    if n_in == 4 and tuple(shapes[3]) != (F,):
        raise ShapeError("bias must have shape (%d,), got %s" % (F, fmt(shapes[3])))
    return ((x[0], F, ho, wo),), (dtypes[0],)


def _sampling(xp, attrs, shape, offset):
    """Per (group, tap): (valid mask, h_low, h_high, w_low, w_high, lh, lw,
    clamped-h, clamped-w), arrays (N, Ho, Wo)."""
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
            valid = (r >= 0) & (c >= 0) & (r < H) & (c < W)
            hl = xp.floor(r).astype(np.int64)
            wl = xp.floor(c).astype(np.int64)
            ch, cw = hl >= H - 1, wl >= W - 1
            hl = xp.clip(hl, 0, H - 1)
            wl = xp.clip(wl, 0, W - 1)
            hh = xp.where(ch, H - 1, xp.minimum(hl + 1, H - 1))
            wh = xp.where(cw, W - 1, xp.minimum(wl + 1, W - 1))
            lh = xp.where(ch, 0.0, r - hl)
            lw = xp.where(cw, 0.0, c - wl)
            out[g, t] = (valid, hl, hh, wl, wh, lh, lw, ch, cw)
    return out


def _gather(x, n_idx, hi, wi):
    """x (N, Cg, H, W) at per-(n, ho, wo) positions -> (N, Cg, Ho, Wo)."""
    return x[n_idx, :, hi, wi].transpose(0, 3, 1, 2)


def _columns(xp, data, attrs, samp):
    N, C, H, W = data.shape
    k, _, _, _ = _geom(attrs)
    dg = attrs["num_deformable_group"]
    cg = C // dg
    ho, wo = next(iter(samp.values()))[0].shape[1:]
    cols = xp.zeros((N, C, k[0] * k[1], ho, wo), dtype=np.float64)
    n_idx = xp.arange(N)[:, None, None]
    x = data.astype(np.float64)
    for (g, t), (valid, hl, hh, wl, wh, lh, lw, _, _) in samp.items():
        xg = x[:, g * cg:(g + 1) * cg]
        v = ((1 - lh) * (1 - lw))[:, None] * _gather(xg, n_idx, hl, wl) \
            + ((1 - lh) * lw)[:, None] * _gather(xg, n_idx, hl, wh) \
            + (lh * (1 - lw))[:, None] * _gather(xg, n_idx, hh, wl) \
            + (lh * lw)[:, None] * _gather(xg, n_idx, hh, wh)
        cols[:, g * cg:(g + 1) * cg, t] = xp.where(valid[:, None], v, 0.0)
    return cols


@register("_contrib_DeformableConvolution", inputs=("data", "offset", "weight", "bias"),
          params=_PARAMS, infer=_rule, inline=window_cost)
@optional("bias")
def _contrib_deformable_convolution(xp, data, offset, weight, *bias, out, num_filter,
                                    num_group=1, no_bias=False, **attrs):
    """DeformableConvolution(data, offset, weight, bias=None, kernel, stride,
    dilate, pad, num_filter, num_group=1, num_deformable_group=1,
    no_bias=False): convolution with taps moved by offset (bilinear sampling)."""
    attrs["num_filter"], attrs["num_group"] = num_filter, num_group
    samp = _sampling(xp, attrs, data.shape, offset)
    cols = _columns(xp, data, attrs, samp)                       # (N, C, T, Ho, Wo)
    N, C = data.shape[:2]
    ho, wo = cols.shape[3:]
    G = num_group
    cm = cols.reshape(N, G, (C // G) * cols.shape[2], ho * wo)
    wm = weight.astype(np.float64).reshape(G, num_filter // G, -1)
    y = xp.matmul(wm, cm).reshape(N, num_filter, ho, wo)
    if bias:
        y = y + bias[0].astype(np.float64).reshape(1, -1, 1, 1)
    out[...] = y


@register("_backward_DeformableConvolution",
          inputs=("ograd", "data", "offset", "weight"), params=_PARAMS, num_outputs=4,
          infer=lambda a, s, d: ((tuple(s[1]), tuple(s[2]), tuple(s[3]), (a["num_filter"],)),
                                 (d[1], d[2], d[3], d[3])), inline=window_cost)
def _backward_deformable_convolution(xp, ograd, data, offset, weight, out, num_filter,
                                     num_group=1, no_bias=False, **attrs):
    """The gradients of DeformableConvolution w.r.t. data, offset, weight, bias."""
    attrs["num_filter"], attrs["num_group"] = num_filter, num_group
    k, _, _, _ = _geom(attrs)
    T = k[0] * k[1]
    N, C, H, W = data.shape
    G = num_group
    dg = attrs["num_deformable_group"]
    cg = C // dg
    ho, wo = ograd.shape[2:]
    samp = _sampling(xp, attrs, data.shape, offset)
    cols = _columns(xp, data, attrs, samp)
    g = ograd.astype(np.float64).reshape(N, G, num_filter // G, ho * wo)
    wm = weight.astype(np.float64).reshape(G, num_filter // G, -1)
    cm = cols.reshape(N, G, (C // G) * T, ho * wo)
    out[2][...] = xp.einsum("ngfp,ngkp->gfk", g, cm).reshape(weight.shape)
    out[3][...] = ograd.astype(np.float64).sum(axis=(0, 2, 3))
    dcols = xp.matmul(wm.transpose(0, 2, 1), g).reshape(N, C, T, ho, wo)
    dx = xp.zeros((N, C, H, W), dtype=np.float64)
    doff = xp.zeros((N, dg, T, 2, ho, wo), dtype=np.float64)
    x = data.astype(np.float64)
    n_idx = xp.broadcast_to(xp.arange(N)[:, None, None], (N, ho, wo))
    for (gi, t), (valid, hl, hh, wl, wh, lh, lw, ch, cw) in samp.items():
        sl = slice(gi * cg, (gi + 1) * cg)
        dc = xp.where(valid[:, None], dcols[:, sl, t], 0.0)          # (N, cg, Ho, Wo)
        xg = x[:, sl]
        v1, v2 = _gather(xg, n_idx, hl, wl), _gather(xg, n_idx, hl, wh)
        v3, v4 = _gather(xg, n_idx, hh, wl), _gather(xg, n_idx, hh, wh)
        # d/d(row) and d/d(col) of the bilinear value (0 along a clamped axis)
        dr = ((1 - lw)[:, None] * (v3 - v1) + lw[:, None] * (v4 - v2))
        dcl = ((1 - lh)[:, None] * (v2 - v1) + lh[:, None] * (v4 - v3))
        doff[:, gi, t, 0] = xp.where(ch, 0.0, (dc * dr).sum(axis=1))
        doff[:, gi, t, 1] = xp.where(cw, 0.0, (dc * dcl).sum(axis=1))
        view = dx[:, sl].transpose(0, 2, 3, 1)                      # (N, H, W, cg)
        for hi, wi, wt in ((hl, wl, (1 - lh) * (1 - lw)), (hl, wh, (1 - lh) * lw),
                           (hh, wl, lh * (1 - lw)), (hh, wh, lh * lw)):
            xp.add.at(view, (n_idx, hi, wi), (dc * wt[:, None]).transpose(0, 2, 3, 1))
    out[0][...] = dx
    out[1][...] = doff.reshape(offset.shape)


def _grad(F, attrs, ins, outs, og):
    dx, doff, dw, db = F._internal._backward_DeformableConvolution(og[0], ins[0], ins[1],
                                                                   ins[2], **attrs)
    return [dx, doff, dw] + ([db] if len(ins) == 4 else [])


set_grads({"_contrib_DeformableConvolution": _grad})
