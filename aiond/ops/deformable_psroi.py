"""``mx.nd.contrib.DeformablePSROIPooling`` (MXNet's
``contrib/deformable_psroi_pooling*``): position-sensitive ROI pooling whose
bins move by learned, normalised offsets ``trans``.

For ROI n, output channel c and bin (ph, pw): the bin's
``sample_per_part**2`` sample points, shifted by
``trans[n, 2*cls + {0: x, 1: y}, part_h, part_w] * trans_std * roi size``
(cls = c // (output_dim / num_classes), part = the bin's cell of a
part_size grid), read input channel ``(c * group_size + gh) * group_size + gw``
by bilinear interpolation; points outside [-0.5, size - 0.5] are skipped and
the rest averaged. ROI corners are rounded, then scaled by spatial_scale.
The second output, ``top_count`` (hidden from ``mx.nd`` callers as in
MXNet), holds the number of points each bin averaged."""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads
from ._rules import fmt
from .registry import Param, optional, p_bool, p_float, p_int, register

_PARAMS = [
    Param("spatial_scale", p_float, None, "Ratio of input feature map height (or w) to raw "
          "image height (or w). Equals the reciprocal of total stride in convolutional layers"),
    Param("output_dim", p_int, None, "fix output dim"),
    Param("group_size", p_int, None, "fix group size"),
    Param("pooled_size", p_int, None, "fix pooled size"),
    Param("part_size", p_int, 0, "fix part size"),
    Param("sample_per_part", p_int, 1, "fix samples per part"),
    Param("trans_std", p_float, 0.0, "fix transition std"),
    Param("no_trans", p_bool, False, "Whether to disable trans parameter.")]


def _check(attrs):
    if not 0.0 <= attrs["spatial_scale"] <= 1.0:
        raise OpError("spatial_scale must be in [0, 1], got %s" % attrs["spatial_scale"])
    if not 0.0 <= attrs["trans_std"] <= 1.0:
        raise OpError("trans_std must be in [0, 1], got %s" % attrs["trans_std"])
    for k in ("output_dim", "group_size", "pooled_size", "sample_per_part"):
        if attrs[k] <= 0:
            raise OpError("%s must be > 0, got %d" % (k, attrs[k]))


def _rule(attrs, shapes, dtypes):
    _check(attrs)
    n_in = 2 if attrs["no_trans"] else 3
    if len(shapes) != n_in:
        raise OpError("expects %d inputs (data, rois%s) with no_trans=%s, got %d"
                      % (n_in, "" if attrs["no_trans"] else ", trans", attrs["no_trans"],
                         len(shapes)))
    d, b = tuple(shapes[0]), tuple(shapes[1])
    if len(d) != 4:
        raise ShapeError("data should be a 4-D tensor (batch, channels, height, width), got %s"
                         % fmt(d))
    if len(b) != 2 or b[1] != 5:
        raise ShapeError("rois should be a 2-D tensor of shape (num_rois, 5), got %s" % fmt(b))
    D, G, P = attrs["output_dim"], attrs["group_size"], attrs["pooled_size"]
    if d[1] != D * G * G:
        raise ShapeError("data has %d channels; output_dim * group_size**2 = %d expected"
                         % (d[1], D * G * G))
    if n_in == 3:
        t = tuple(shapes[2])
        part = attrs["part_size"] or P
        if len(t) != 4 or t[0] != b[0] or t[1] % 2 or t[1] == 0 or t[2:] != (part, part) \
                or D % (t[1] // 2):
            raise ShapeError("trans should be (num_rois, 2 * num_classes, part_size, part_size)"
                             " = (%d, 2*k, %d, %d) with output_dim %d divisible by k, got %s"
                             % (b[0], part, part, D, fmt(t)))
    o = (b[0], D, P, P)
    return (o, o), (dtypes[0], dtypes[0])


def _points(xp, data_shape, rois, trans, attrs):
    """Sample points of every (roi, c, ph, pw, ih, iw): clamped (h, w), the
    inside flag, the input channel, the trans index and the ROI size."""
    _, C, H, W = data_shape
    D, G, P = attrs["output_dim"], attrs["group_size"], attrs["pooled_size"]
    part = attrs["part_size"] or P
    S, scale, std = attrs["sample_per_part"], attrs["spatial_scale"], attrs["trans_std"]
    r = rois.astype(np.float64)
    R = r.shape[0]
    sw = xp.round(r[:, 1]) * scale - 0.5
    sh = xp.round(r[:, 2]) * scale - 0.5
    rw = xp.maximum((xp.round(r[:, 3]) + 1.0) * scale - 0.5 - sw, 0.1)
    rh = xp.maximum((xp.round(r[:, 4]) + 1.0) * scale - 0.5 - sh, 0.1)
    bw, bh = rw / P, rh / P
    p = xp.arange(P)
    part_idx = xp.floor(p / P * part).astype(np.int64)
    c = xp.arange(D)
    if trans is None:
        ncls, cls = 1, xp.zeros(D, np.int64)
        tx = ty = xp.zeros((R, D, P, P))
    else:
        ncls = trans.shape[1] // 2
        cls = c // (D // ncls)
        t = trans.astype(np.float64)
        tx = t[:, 2 * cls][:, :, part_idx][:, :, :, part_idx] * std   # (R, D, Pph, Ppw)
        ty = t[:, 2 * cls + 1][:, :, part_idx][:, :, :, part_idx] * std
    ws = (p[None, None, None, :] * bw[:, None, None, None] + sw[:, None, None, None]
          + tx * rw[:, None, None, None])
    hs = (p[None, None, :, None] * bh[:, None, None, None] + sh[:, None, None, None]
          + ty * rh[:, None, None, None])
    i = xp.arange(S)
    w = ws[..., None, None] + i[None, :] * (bw / S)[:, None, None, None, None, None]
    h = hs[..., None, None] + i[:, None] * (bh / S)[:, None, None, None, None, None]
    inside = (w >= -0.5) & (w <= W - 0.5) & (h >= -0.5) & (h <= H - 0.5)
    w = xp.clip(w, 0, W - 1)
    h = xp.clip(h, 0, H - 1)
    g = xp.clip(xp.floor(p * G / P).astype(np.int64), 0, G - 1)
    chan = (c[:, None, None] * G + g[:, None]) * G + g[None, :]       # (D, Pph, Ppw)
    return dict(w=w, h=h, inside=inside, chan=chan, cls=cls, ncls=ncls, part_idx=part_idx,
                rw=rw, rh=rh, batch=r[:, 0].astype(np.int64))


def _corners(xp, data, pts):
    """Bilinear pieces at every point: (values of the 4 corners, indices, weights)."""
    w, h = pts["w"], pts["h"]
    x0, y0 = xp.floor(w).astype(np.int64), xp.floor(h).astype(np.int64)
    x1, y1 = xp.ceil(w).astype(np.int64), xp.ceil(h).astype(np.int64)
    dx, dy = w - x0, h - y0
    n = pts["batch"][:, None, None, None, None, None]
    ch = pts["chan"][None, :, :, :, None, None]
    x = data.astype(np.float64)
    u00, u01 = x[n, ch, y0, x0], x[n, ch, y1, x0]
    u10, u11 = x[n, ch, y0, x1], x[n, ch, y1, x1]
    return (u00, u01, u10, u11), (n, ch, x0, x1, y0, y1), (dx, dy)


@register("_contrib_DeformablePSROIPooling", inputs=("data", "rois", "trans"), params=_PARAMS,
          infer=_rule, num_outputs=2, output_names=("output", "top_count"),
          num_visible=lambda attrs: 1)
@optional("trans")
def _contrib_deformable_psroi_pooling(xp, data, rois, *trans, out, **attrs):
    """DeformablePSROIPooling(data, rois, trans=None, spatial_scale, output_dim,
    group_size, pooled_size, part_size=0, sample_per_part=1, trans_std=0,
    no_trans=False): (num_rois, output_dim, pooled_size, pooled_size)."""
    pts = _points(xp, data.shape, rois, None if attrs["no_trans"] else trans[0], attrs)
    (u00, u01, u10, u11), _, (dx, dy) = _corners(xp, data, pts)
    val = ((1 - dx) * (1 - dy) * u00 + (1 - dx) * dy * u01 + dx * (1 - dy) * u10
           + dx * dy * u11)
    inside = pts["inside"]
    count = inside.sum(axis=(-2, -1))
    total = xp.where(inside, val, 0.0).sum(axis=(-2, -1))
    out[0][...] = xp.where(count > 0, total / xp.maximum(count, 1), 0.0)
    out[1][...] = count


@register("_backward_DeformablePSROIPooling", inputs=("ograd", "data", "rois", "trans"),
          params=_PARAMS, num_outputs=3,
          infer=lambda a, s, d: ((tuple(s[1]), tuple(s[2]), tuple(s[-1] if len(s) == 4
                                                                   else (0,))),
                                 (d[1], d[2], d[1])))
@optional("trans")
def _backward_deformable_psroi_pooling(xp, ograd, data, rois, *trans, out, **attrs):
    """Gradients of DeformablePSROIPooling w.r.t. data, rois (zeros) and trans."""
    no_trans = attrs["no_trans"]
    pts = _points(xp, data.shape, rois, None if no_trans else trans[0], attrs)
    (u00, u01, u10, u11), (n, ch, x0, x1, y0, y1), (dx, dy) = _corners(xp, data, pts)
    inside = pts["inside"]
    count = inside.sum(axis=(-2, -1))
    diff = xp.where(count > 0, ograd.astype(np.float64) / xp.maximum(count, 1), 0.0)
    dv = xp.where(inside, diff[..., None, None], 0.0)
    grad = xp.zeros(data.shape, dtype=np.float64)
    shape = dv.shape
    for yy, xx, q in ((y0, x0, (1 - dx) * (1 - dy)), (y1, x0, (1 - dx) * dy),
                      (y0, x1, dx * (1 - dy)), (y1, x1, dx * dy)):
        xp.add.at(grad, (xp.broadcast_to(n, shape), xp.broadcast_to(ch, shape), yy, xx), q * dv)
    out[0][...] = grad
    out[1][...] = 0
    if not no_trans:
        std = attrs["trans_std"]
        gx = (u11 * dy + u10 * (1 - dy) - u01 * dy - u00 * (1 - dy)) * dv * std \
            * pts["rw"][:, None, None, None, None, None]
        gy = (u11 * dx + u01 * (1 - dx) - u10 * dx - u00 * (1 - dx)) * dv * std \
            * pts["rh"][:, None, None, None, None, None]
        t = trans[0]
        R, D, P = t.shape[0], attrs["output_dim"], attrs["pooled_size"]
        gt = xp.zeros(t.shape, dtype=np.float64)
        ridx = xp.broadcast_to(xp.arange(R)[:, None, None, None], (R, D, P, P))
        cls = xp.broadcast_to(pts["cls"][None, :, None, None], (R, D, P, P))
        ph = xp.broadcast_to(pts["part_idx"][None, None, :, None], (R, D, P, P))
        pw = xp.broadcast_to(pts["part_idx"][None, None, None, :], (R, D, P, P))
        xp.add.at(gt, (ridx, 2 * cls, ph, pw), gx.sum(axis=(-2, -1)))
        xp.add.at(gt, (ridx, 2 * cls + 1, ph, pw), gy.sum(axis=(-2, -1)))
        out[2][...] = gt
    else:
        out[2][...] = 0


def _grad(F, attrs, ins, outs, og):
    gs = F._internal._backward_DeformablePSROIPooling(og[0], *ins, **attrs)
    return [gs[0], gs[1]] + ([gs[2]] if len(ins) == 3 else [])


set_grads({"_contrib_DeformablePSROIPooling": _grad})
