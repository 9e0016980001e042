"""Region proposals of ``mx.nd.contrib``: Proposal (one image) and
MultiProposal (a batch), MXNet 1.9.1's ``contrib/proposal.cc`` and
``multi_proposal.cc``.

Per image: anchors from ``feature_stride``, ``ratios`` and ``scales``
(Faster R-CNN's enumeration, ratios outer) shifted over the feature map;
the foreground scores (the second half of ``cls_prob``'s channels); boxes
decoded from ``bbox_pred`` (or offset with ``iou_loss``) and clipped to the
image; boxes outside the image's real feature extent or smaller than
``rpn_min_size * scale`` get score -1; a stable descending sort keeps
``rpn_pre_nms_top_n``; greedy NMS at ``threshold`` keeps up to
``rpn_post_nms_top_n``, and the output cycles through the kept boxes when
fewer survive. Box arithmetic is float32 like MXNet's CPU kernel. Proposals
get no gradient (all zeros, as MXNet)."""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError, ShapeError
from ._grad import ignores_ograd, set_grads
from ._rules import fmt
from .registry import Param, _lit, p_bool, p_float, p_int, register

_F = np.float32


def _p_floats(v):
    v = _lit(v)
    if isinstance(v, (int, float, np.number)):
        return (float(v),)
    return tuple(float(x) for x in v)


_PARAMS = [
    Param("rpn_pre_nms_top_n", p_int, 6000, "Number of top scoring boxes to keep before "
          "applying NMS to RPN proposals"),
    Param("rpn_post_nms_top_n", p_int, 300, "Number of top scoring boxes to keep after "
          "applying NMS to RPN proposals"),
    Param("threshold", p_float, 0.7, "NMS value, below which to suppress."),
    Param("rpn_min_size", p_int, 16, "Minimum height or width in proposal"),
    Param("scales", _p_floats, (4.0, 8.0, 16.0, 32.0), "Used to generate anchor windows by "
          "enumerating scales"),
    Param("ratios", _p_floats, (0.5, 1.0, 2.0), "Used to generate anchor windows by "
          "enumerating ratios"),
    Param("feature_stride", p_int, 16, "The size of the receptive field each unit in the "
          "convolution layer of the rpn,for example the product of all stride's prior to "
          "this layer."),
    Param("output_score", p_bool, False, "Add score to outputs"),
    Param("iou_loss", p_bool, False, "Usage of IoU Loss")]


def _anchors(stride, ratios, scales):
    base = [0.0, 0.0, stride - 1.0, stride - 1.0]
    w = _F(base[2] - base[0] + 1.0)
    h = _F(base[3] - base[1] + 1.0)
    xc = _F(base[0] + 0.5 * (w - 1.0))
    yc = _F(base[1] + 0.5 * (h - 1.0))
    out = []
    for r in ratios:
        for s in scales:
            size_ratios = _F(math.floor(w * h / _F(r)))
            nw = _F(math.floor(math.sqrt(size_ratios) + 0.5) * s)
            nh = _F(math.floor(nw / _F(s) * _F(r) + 0.5) * s)
            out.append([xc - _F(0.5) * (nw - 1), yc - _F(0.5) * (nh - 1),
                        xc + _F(0.5) * (nw - 1), yc + _F(0.5) * (nh - 1)])
    return np.array(out, dtype=_F)


def _nms(dets, thresh, limit):
    x1, y1, x2, y2 = dets[:, 0], dets[:, 1], dets[:, 2], dets[:, 3]
    area = (x2 - x1 + 1) * (y2 - y1 + 1)
    n = dets.shape[0]
    suppressed = np.zeros(n, dtype=bool)
    keep = []
    for i in range(n):
        if len(keep) >= limit:
            break
        if suppressed[i]:
            continue
        keep.append(i)
        j = slice(i + 1, n)
        w = np.maximum(_F(0), np.minimum(x2[i], x2[j]) - np.maximum(x1[i], x1[j]) + _F(1))
        h = np.maximum(_F(0), np.minimum(y2[i], y2[j]) - np.maximum(y1[i], y1[j]) + _F(1))
        inter = w * h
        ovr = inter / (area[i] + area[j] - inter)
        suppressed[j] |= ovr > _F(thresh)
    return keep


def _propose(cls_prob, bbox_pred, im_info, a):
    """(rois (post, 4), scores (post,)) of one image (numpy, float32)."""
    A = cls_prob.shape[0] // 2
    H, W = cls_prob.shape[1:]
    count = A * H * W
    pre = a["rpn_pre_nms_top_n"] if a["rpn_pre_nms_top_n"] > 0 else count
    pre = min(pre, count)
    post_nms = min(a["rpn_post_nms_top_n"], pre)
    stride = a["feature_stride"]
    base = _anchors(stride, a["ratios"], a["scales"])
    if base.shape[0] != A:
        raise OpError("cls_prob has %d anchors per position but ratios x scales give %d"
                      % (A, base.shape[0]))
    shift_x = np.arange(W, dtype=_F) * _F(stride)
    shift_y = np.arange(H, dtype=_F) * _F(stride)
    # index = h * (W * A) + w * A + a
    boxes = np.empty((H, W, A, 4), dtype=_F)
    boxes[..., 0] = base[None, None, :, 0] + shift_x[None, :, None]
    boxes[..., 1] = base[None, None, :, 1] + shift_y[:, None, None]
    boxes[..., 2] = base[None, None, :, 2] + shift_x[None, :, None]
    boxes[..., 3] = base[None, None, :, 3] + shift_y[:, None, None]
    scores = cls_prob[A:].transpose(1, 2, 0).astype(_F).copy()          # (H, W, A)
    d = bbox_pred.reshape(A, 4, H, W).transpose(2, 3, 0, 1).astype(_F)  # (H, W, A, 4)
    im_h, im_w, im_scale = (_F(v) for v in im_info)
    if a["iou_loss"]:
        pred = boxes + d
    else:
        w = boxes[..., 2] - boxes[..., 0] + _F(1)
        h = boxes[..., 3] - boxes[..., 1] + _F(1)
        cx = boxes[..., 0] + _F(0.5) * (w - _F(1))
        cy = boxes[..., 1] + _F(0.5) * (h - _F(1))
        pcx = d[..., 0] * w + cx
        pcy = d[..., 1] * h + cy
        pw = np.exp(d[..., 2]) * w
        ph = np.exp(d[..., 3]) * h
        pred = np.stack([pcx - _F(0.5) * (pw - _F(1)), pcy - _F(0.5) * (ph - _F(1)),
                         pcx + _F(0.5) * (pw - _F(1)), pcy + _F(0.5) * (ph - _F(1))], axis=-1)
    lim = np.array([im_w - 1, im_h - 1, im_w - 1, im_h - 1], dtype=_F)
    pred = np.maximum(np.minimum(pred, lim), _F(0)).astype(_F)
    real_h, real_w = int(im_h / stride), int(im_w / stride)
    if H < real_h or W < real_w:
        raise OpError("im_info (%s, %s) is larger than the feature map allows (%d x %d, "
                      "stride %d)" % (im_info[0], im_info[1], H, W, stride))
    outside = (np.arange(H)[:, None] >= real_h) | (np.arange(W)[None, :] >= real_w)
    scores[outside] = _F(-1)
    min_size = _F(a["rpn_min_size"]) * im_scale
    iw = pred[..., 2] - pred[..., 0] + _F(1)
    ih = pred[..., 3] - pred[..., 1] + _F(1)
    small = (iw < min_size) | (ih < min_size)
    half = min_size / _F(2)
    pred[small] += np.array([-half, -half, half, half], dtype=_F)
    scores[small] = _F(-1)
    pred = pred.reshape(count, 4)
    scores = scores.reshape(count)
    order = np.argsort(-scores, kind="stable")[:pre]
    dets = np.concatenate([pred[order], scores[order][:, None]], axis=1)
    keep = _nms(dets, a["threshold"], post_nms)
    total = a["rpn_post_nms_top_n"]
    idx = [keep[i % len(keep)] for i in range(total)]
    return dets[idx, :4], dets[idx, 4]


def _rule(multi):
    def rule(attrs, shapes, dtypes):
        c, b, im = (tuple(s) for s in shapes)
        if len(c) != 4 or len(b) != 4 or c[0] != b[0] or c[2:] != b[2:] or b[1] != 2 * c[1]:
            raise ShapeError("cls_prob %s and bbox_pred %s must be (N, 2A, H, W) and "
                             "(N, 4A, H, W)" % (fmt(c), fmt(b)))
        if im != (c[0], 3):
            raise ShapeError("im_info must have shape (%d, 3), got %s" % (c[0], fmt(im)))
        if not multi and c[0] != 1:
            raise OpError("Sorry, multiple images each device is not implemented.")
        n = c[0] * attrs["rpn_post_nms_top_n"]
        return ((n, 5), (n, 1)), (dtypes[0], dtypes[0])
    return rule


def _run(xp, cls_prob, bbox_pred, im_info, out, attrs):
    def host(x):
        return np.asarray(x.get() if hasattr(x, "get") else x)
    c, b, im = host(cls_prob), host(bbox_pred), host(im_info)
    post = attrs["rpn_post_nms_top_n"]
    rois = np.zeros((c.shape[0] * post, 5), dtype=_F)
    sc = np.zeros((c.shape[0] * post, 1), dtype=_F)
    for n in range(c.shape[0]):
        r, s = _propose(c[n], b[n], im[n], attrs)
        rois[n * post:(n + 1) * post, 0] = n
        rois[n * post:(n + 1) * post, 1:] = r
        sc[n * post:(n + 1) * post, 0] = s
    out[0][...] = xp.asarray(rois)
    out[1][...] = xp.asarray(sc)


def _visible(a):
    return 2 if a["output_score"] else 1


@register("_contrib_Proposal", inputs=("cls_prob", "bbox_pred", "im_info"), params=_PARAMS,
          infer=_rule(False), num_outputs=2, output_names=("output", "score"),
          num_visible=_visible, inline=False)
def _contrib_proposal(xp, cls_prob, bbox_pred, im_info, out, **attrs):
    """Proposal(cls_prob, bbox_pred, im_info, ...): RPN region proposals of
    one image, rows [0, x1, y1, x2, y2] (and scores with output_score)."""
    _run(xp, cls_prob, bbox_pred, im_info, out, attrs)


@register("_contrib_MultiProposal", inputs=("cls_prob", "bbox_pred", "im_info"),
          params=_PARAMS, infer=_rule(True), num_outputs=2, output_names=("output", "score"),
          num_visible=_visible, inline=False)
def _contrib_multi_proposal(xp, cls_prob, bbox_pred, im_info, out, **attrs):
    """MultiProposal(cls_prob, bbox_pred, im_info, ...): Proposal for each
    image of a batch, rows [batch index, x1, y1, x2, y2]."""
    _run(xp, cls_prob, bbox_pred, im_info, out, attrs)


@ignores_ograd
def _zero(F, attrs, ins, outs, og):
    return [F.zeros_like(x) for x in ins]


set_grads({"_contrib_Proposal": _zero, "_contrib_MultiProposal": _zero})
