"""MXNet 1.9.1's bounding-box contrib ops (src/operator/contrib/bounding_box*):
``box_nms`` (alias ``box_non_maximum_suppression``), ``box_iou``,
``bipartite_matching``, ``box_encode``, ``box_decode``; and ``arange_like``
(src/operator/tensor/init_op.h).

Kept from MXNet on purpose: box_nms sorts scores descending with a stable
sort, considers only the first ``topk`` valid boxes of each batch, writes -1
rows after the kept ones, and converts coordinates (``in_format`` ->
``out_format``) only for rows whose first coordinate is >= 0; its hidden
second output records, for each output row, the flat input row it came
from (the gradient copies rows back through it). bipartite_matching stops at
the first pair under the threshold and, with ``topk > 0``, keeps ``topk + 1``
matches (MXNet's ``count > topk`` check). box_iou, bipartite_matching,
box_encode and box_decode have zero gradients, as in MXNet.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._common import _outs, _p_opt_int
from ._rules import fmt
from .registry import Param, alias, host_kernels, p_bool, p_float, p_int, p_str, register

_FORMATS = ("corner", "center")


def _need(cond, msg):
    if not cond:
        raise ShapeError(msg)


# ====================================================================== box_nms

_NMS_PARAMS = [
    Param("overlap_thresh", p_float, 0.5, "Overlapping(IoU) threshold to suppress object with "
          "smaller score."),
    Param("valid_thresh", p_float, 0.0, "Filter input boxes to those whose scores greater "
          "than valid_thresh."),
    Param("topk", p_int, -1, "Apply nms to topk boxes with descending scores, -1 to no "
          "restriction."),
    Param("coord_start", p_int, 2, "Start index of the consecutive 4 coordinates."),
    Param("score_index", p_int, 1, "Index of the scores/confidence of boxes."),
    Param("id_index", p_int, -1, "Optional, index of the class categories, -1 to disable."),
    Param("background_id", p_int, -1, "Optional, id of the background class which will be "
          "ignored in nms."),
    Param("force_suppress", p_bool, False, "Optional, if set false and id_index is provided, "
          "nms will only apply to boxes belongs to the same category"),
    Param("in_format", p_str, "corner", "The input box encoding type.", choices=_FORMATS),
    Param("out_format", p_str, "corner", "The output box encoding type.", choices=_FORMATS),
]


def _nms_rule(attrs, shapes, dtypes):
    if len(shapes) != 1:
        raise OpError("box_nms takes 1 input, got %d" % len(shapes))
    s = tuple(shapes[0])
    _need(len(s) >= 2, "box_nms: input must have dim >= 2 (the last two dimensions are "
          "num_box and box_width), %s provided" % fmt(s))
    width = s[-1]
    expected = 6 if attrs["id_index"] >= 0 else 5
    _need(width >= expected, "box_nms: the last dimension must have at least 5 elements "
          "(score, coordinates x 4), %d provided, %d expected" % (width, expected))
    cs, si, ii = attrs["coord_start"], attrs["score_index"], attrs["id_index"]
    _need(0 <= si < width, "box_nms: score_index %d out of range (0, %d)" % (si, width))
    _need(si < cs or si > cs + 3, "box_nms: score_index %d conflicts with coordinates "
          "(%d, %d)" % (si, cs, cs + 3))
    _need(cs >= 0 and cs + 3 < width, "box_nms: coordinates (%d, %d) out of range (0, %d)"
          % (cs, cs + 3, width))
    if ii >= 0:
        _need(ii < width, "box_nms: id_index %d out of range (0, %d)" % (ii, width))
        _need(ii < cs or ii > cs + 3, "box_nms: id_index %d conflicts with coordinates "
              "(%d, %d)" % (ii, cs, cs + 3))
        _need(ii != si, "box_nms: id_index %d conflicts with score_index %d" % (ii, si))
    if np.dtype(dtypes[0]).kind != "f":
        raise OpError("box_nms needs floating-point data, got %s" % np.dtype(dtypes[0]).name)
    return (s, s[:-1] + (1,)), (dtypes[0], dtypes[0])


def _intersect_1d(a1, a2, b1, b2, center):
    """Overlap along one axis; (a1, a2) is (min, max) or (centre, size)."""
    if center:
        al, ar = a1 - a2 / 2, a1 + a2 / 2
        bl, br = b1 - b2 / 2, b1 + b2 / 2
        w = np.minimum(br, ar) - np.maximum(bl, al)
    else:
        w = np.minimum(a2, b2) - np.maximum(a1, b1)
    return np.maximum(w, 0)


def _area(boxes, center):
    if center:
        w, h = boxes[..., 2], boxes[..., 3]
    else:
        w, h = boxes[..., 2] - boxes[..., 0], boxes[..., 3] - boxes[..., 1]
    return np.where((w < 0) | (h < 0), np.zeros_like(w), w * h)


def _convert(rows, cs, to_center):
    """In-place corner<->center conversion of rows whose first coordinate >= 0."""
    c = rows[:, cs:cs + 4]
    ok = c[:, 0] >= 0
    a, b, x2, y2 = c[ok, 0].copy(), c[ok, 1].copy(), c[ok, 2].copy(), c[ok, 3].copy()
    if to_center:
        c[ok, 0], c[ok, 1], c[ok, 2], c[ok, 3] = (a + x2) / 2, (b + y2) / 2, x2 - a, y2 - b
    else:
        w, h = x2 / 2, y2 / 2
        c[ok, 0], c[ok, 1], c[ok, 2], c[ok, 3] = a - w, b - h, a + w, b + h


@register("_contrib_box_nms", params=_NMS_PARAMS, infer=_nms_rule, num_outputs=2,
          output_names=("output", "temp"), num_visible=lambda a: 1, inline=False)
def _contrib_box_nms(xp, data, out, overlap_thresh=0.5, valid_thresh=0.0, topk=-1,
                     coord_start=2, score_index=1, id_index=-1, background_id=-1,
                     force_suppress=False, in_format="corner", out_format="corner"):
    """box_nms(data, overlap_thresh=0.5, valid_thresh=0, topk=-1, coord_start=2,
    score_index=1, id_index=-1, background_id=-1, force_suppress=False,
    in_format='corner', out_format='corner'): non-maximum suppression over the
    boxes of each batch (the last two axes are (num_box, box_width)); kept boxes
    come first, sorted by descending score, the rest are -1."""
    y, rec = _outs(out)
    x = np.asarray(data)
    W, N = x.shape[-1], x.shape[-2]
    B = x.size // max(N * W, 1) if N * W else 0
    flat = x.reshape(B * N, W)
    o = np.full((B * N, W), -1, dtype=x.dtype)
    r = np.full((B * N,), -1, dtype=x.dtype)
    k = N if topk < 0 else min(N, topk)
    if k < 1:
        y[...] = xp.asarray(x)
        rec[...] = xp.asarray(np.arange(B * N, dtype=x.dtype).reshape(rec.shape))
        return
    scores = flat[:, score_index]
    valid = scores > x.dtype.type(valid_thresh)
    if id_index >= 0:
        valid &= flat[:, id_index] != x.dtype.type(background_id)
    idx = np.nonzero(valid)[0]
    if idx.size:
        order = idx[np.argsort(-scores[idx], kind="stable")]
        order = order[np.argsort(order // N, kind="stable")]
        center = in_format == "center"
        check_id = id_index >= 0 and not force_suppress
        thresh = np.float32(overlap_thresh)
        for b in range(B):
            sel = order[(order // N) == b][:k]
            if not sel.size:
                continue
            boxes = flat[sel, coord_start:coord_start + 4]
            areas = _area(boxes, center)
            ids = flat[sel, id_index].astype(np.int64) if check_id else None
            keep = np.ones(sel.size, dtype=bool)
            for i in range(sel.size - 1):
                if not keep[i]:
                    continue
                rest = np.arange(i + 1, sel.size)
                rest = rest[keep[rest]]
                if ids is not None:
                    rest = rest[ids[rest] == ids[i]]
                if not rest.size:
                    continue
                bi, br = boxes[i], boxes[rest]
                inter = _intersect_1d(bi[0], bi[2], br[:, 0], br[:, 2], center) * \
                    _intersect_1d(bi[1], bi[3], br[:, 1], br[:, 3], center)
                iou = inter / (areas[i] + areas[rest] - inter)
                keep[rest[iou > thresh]] = False
            kept = sel[keep]
            o[b * N:b * N + kept.size] = flat[kept]
            r[b * N:b * N + kept.size] = kept
        if in_format != out_format:
            _convert(o, coord_start, out_format == "center")
    y[...] = xp.asarray(o.reshape(y.shape))
    rec[...] = xp.asarray(r.reshape(rec.shape))


alias("_contrib_box_nms", "_contrib_box_non_maximum_suppression")


@register("_backward_contrib_box_nms", inputs=("ograd", "record"), params=_NMS_PARAMS,
          infer=lambda a, s, d: ((tuple(s[0]),), (d[0],)), inline=False)
def _backward_contrib_box_nms(xp, ograd, record, out, **_attrs):
    """Gradient of box_nms: each output row's gradient goes back to the input
    row it was copied from."""
    W = ograd.shape[-1]
    g = ograd.reshape(-1, W)
    rec = record.reshape(-1).astype(np.int64)
    o = out.reshape(-1, W)
    o[...] = 0
    ok = rec >= 0
    o[rec[ok]] = g[ok]


# ====================================================================== box_iou


def _iou_rule(attrs, shapes, dtypes):
    if len(shapes) != 2:
        raise OpError("box_iou takes 2 inputs (lhs, rhs), got %d" % len(shapes))
    l, r = tuple(shapes[0]), tuple(shapes[1])
    _need(len(l) >= 2, "box_iou: lhs must have dim >= 2, %d provided" % len(l))
    _need(l[-1] == 4, "box_iou: last dimension of lhs must be 4, %d provided" % l[-1])
    _need(len(r) >= 2, "box_iou: rhs must have dim >= 2, %d provided" % len(r))
    _need(r[-1] == 4, "box_iou: last dimension of rhs must be 4, %d provided" % r[-1])
    return (l[:-1] + r[:-1],), (dtypes[0],)


def box_iou_np(lhs, rhs, fmt_="corner"):
    """(..., 4) x (..., 4) -> IoU matrix of shape lhs.shape[:-1] + rhs.shape[:-1]."""
    center = fmt_ == "center"
    L = lhs.reshape(-1, 4)[:, None, :]
    R = rhs.reshape(-1, 4)[None, :, :]
    inter = _intersect_1d(L[..., 0], L[..., 2], R[..., 0], R[..., 2], center) * \
        _intersect_1d(L[..., 1], L[..., 3], R[..., 1], R[..., 3], center)
    with np.errstate(divide="ignore", invalid="ignore"):
        iou = inter / (_area(L, center) + _area(R, center) - inter)
    iou = np.where(inter <= 0, np.zeros_like(iou), iou)
    return iou.reshape(lhs.shape[:-1] + rhs.shape[:-1])


@register("_contrib_box_iou", inputs=("lhs", "rhs"), infer=_iou_rule, inline=False,
          params=[Param("format", p_str, "corner", "The box encoding type.",
                        choices=_FORMATS)])
def _contrib_box_iou(xp, lhs, rhs, out, format="corner"):
    """box_iou(lhs, rhs, format='corner'): intersection over union of every box
    of lhs with every box of rhs; output shape lhs.shape[:-1] + rhs.shape[:-1]."""
    out[...] = xp.asarray(box_iou_np(np.asarray(lhs), np.asarray(rhs).astype(lhs.dtype),
                                     format))


# =========================================================== bipartite_matching


def _bm_rule(attrs, shapes, dtypes):
    if len(shapes) != 1:
        raise OpError("bipartite_matching takes 1 input, got %d" % len(shapes))
    s = tuple(shapes[0])
    _need(len(s) >= 2, "bipartite_matching: score matrix must have dim >= 2, %d provided"
          % len(s))
    return (s[:-1], s[:-2] + (s[-1],)), (dtypes[0], dtypes[0])


@register("_contrib_bipartite_matching", infer=_bm_rule, num_outputs=2, inline=False,
          params=[Param("is_ascend", p_bool, False, "Use ascend order for scores instead of "
                        "descending."),
                  Param("threshold", p_float, doc="Ignore matching when score < thresh, if "
                        "is_ascend=false, or ignore score > thresh, if is_ascend=true."),
                  Param("topk", p_int, -1, "Limit the number of matches to topk, set -1 for "
                        "no limit")])
def _contrib_bipartite_matching(xp, data, out, is_ascend=False, threshold=0.0, topk=-1):
    """bipartite_matching(data, threshold, is_ascend=False, topk=-1): greedy
    matching of a (..., rows, cols) score matrix; returns (row -> col, col ->
    row) markers, -1 where unmatched."""
    rm, cm = _outs(out)
    x = np.asarray(data)
    R, C = x.shape[-2:]
    B = x.size // max(R * C, 1) if R * C else 0
    s = x.reshape(B, R * C)
    rmark = np.full((B, R), -1, dtype=x.dtype)
    cmark = np.full((B, C), -1, dtype=x.dtype)
    th = np.float32(threshold)
    for b in range(B):
        key = s[b] if is_ascend else -s[b]
        order = np.argsort(key, kind="stable")
        count = 0
        for j in order:
            r, c = divmod(int(j), C)
            if rmark[b, r] == -1 and cmark[b, c] == -1:
                v = s[b, j]
                if (not is_ascend and v > th) or (is_ascend and v < th):
                    rmark[b, r] = c
                    cmark[b, c] = r
                    count += 1
                    if topk > 0 and count > topk:
                        break
                else:
                    break
    rm[...] = xp.asarray(rmark.reshape(rm.shape))
    cm[...] = xp.asarray(cmark.reshape(cm.shape))


# ============================================================ box_encode/decode


def _enc_rule(attrs, shapes, dtypes):
    if len(shapes) != 6:
        raise OpError("box_encode takes 6 inputs (samples, matches, anchors, refs, means, "
                      "stds), got %d" % len(shapes))
    ss, ms, an, rf, mn, sd = (tuple(s) for s in shapes)
    _need(len(ss) == 2, "box_encode: samples shape must have dim == 2, %d provided" % len(ss))
    _need(len(ms) >= 2, "box_encode: matches shape must have dim == 2, %d provided" % len(ms))
    _need(len(an) >= 3 and an[-1] == 4, "box_encode: anchors must be (B, N, 4), got %s"
          % fmt(an))
    _need(len(rf) >= 3 and rf[-1] == 4, "box_encode: refs must be (B, M, 4), got %s" % fmt(rf))
    _need(mn == (4,) and sd == (4,), "box_encode: means and stds must have shape (4,), got "
          "%s and %s" % (fmt(mn), fmt(sd)))
    return (an, an), (dtypes[2], dtypes[2])


@register("_contrib_box_encode", inputs=("samples", "matches", "anchors", "refs", "means",
                                         "stds"), infer=_enc_rule, num_outputs=2,
          inline=False)
def _contrib_box_encode(xp, samples, matches, anchors, refs, means, stds, out):
    """box_encode(samples, matches, anchors, refs, means, stds): (targets, masks)
    of corner-encoded anchors against their matched refs, normalised by means
    and stds; samples > 0.5 marks positives (others get 0 and mask 0)."""
    tg, mk = _outs(out)
    a = np.asarray(anchors)
    dt = a.dtype
    B, N = a.shape[0], a.shape[1]
    ref = np.asarray(refs).astype(dt, copy=False)
    M = ref.shape[1]
    match = np.asarray(matches).reshape(B, N).astype(np.int64)
    valid = np.asarray(samples).reshape(B, N) > 0.5
    r = np.take_along_axis(ref.reshape(B, M, 4), np.clip(match, 0, M - 1)[..., None], axis=1)
    a3 = a.reshape(B, N, 4)
    half = dt.type(0.5)
    rw, rh = r[..., 2] - r[..., 0], r[..., 3] - r[..., 1]
    rx, ry = r[..., 0] + rw * half, r[..., 1] + rh * half
    aw, ah = a3[..., 2] - a3[..., 0], a3[..., 3] - a3[..., 1]
    ax, ay = a3[..., 0] + aw * half, a3[..., 1] + ah * half
    m = np.asarray(means).astype(dt)
    s = np.asarray(stds).astype(dt)
    with np.errstate(all="ignore"):
        t = np.stack([((rx - ax) / aw - m[0]) / s[0], ((ry - ay) / ah - m[1]) / s[1],
                      (np.log(rw / aw) - m[2]) / s[2], (np.log(rh / ah) - m[3]) / s[3]],
                     axis=-1)
    v = valid[..., None]
    tg[...] = xp.asarray(np.where(v, t, np.zeros_like(t)).astype(dt).reshape(tg.shape))
    mk[...] = xp.asarray(np.broadcast_to(v, (B, N, 4)).astype(dt).reshape(mk.shape))


def _dec_rule(attrs, shapes, dtypes):
    if len(shapes) != 2:
        raise OpError("box_decode takes 2 inputs (data, anchors), got %d" % len(shapes))
    d, a = tuple(shapes[0]), tuple(shapes[1])
    _need(len(d) == 3 and d[-1] == 4, "box_decode: data must be (B, N, 4), got %s" % fmt(d))
    _need(len(a) >= 3 and a[-1] == 4, "box_decode: anchors must be (1, N, 4), got %s"
          % fmt(a))
    return (d,), (dtypes[0],)


@register("_contrib_box_decode", inputs=("data", "anchors"), infer=_dec_rule, inline=False,
          params=[Param("std0", p_float, 1.0, "value to be divided from the 1st encoded values"),
                  Param("std1", p_float, 1.0, "value to be divided from the 2nd encoded values"),
                  Param("std2", p_float, 1.0, "value to be divided from the 3rd encoded values"),
                  Param("std3", p_float, 1.0, "value to be divided from the 4th encoded values"),
                  Param("clip", p_float, -1.0, "If larger than 0, bounding box target will be "
                        "clipped to this value."),
                  Param("format", p_str, "center", "The box encoding type of the anchors.",
                        choices=_FORMATS)])
def _contrib_box_decode(xp, data, anchors, out, std0=1.0, std1=1.0, std2=1.0, std3=1.0,
                        clip=-1.0, format="center"):
    """box_decode(data, anchors, std0=1, std1=1, std2=1, std3=1, clip=-1,
    format='center'): decode (B, N, 4) offsets against (1, N, 4) anchors into
    corner boxes."""
    x = np.asarray(data)
    dt = x.dtype
    B, N = x.shape[:2]
    a = np.asarray(anchors).astype(dt, copy=False).reshape(-1, 4)[:N]
    ax, ay, aw, ah = a[:, 0], a[:, 1], a[:, 2], a[:, 3]
    half = dt.type(0.5)
    if format == "corner":
        aw, ah = aw - ax, ah - ay
        ax, ay = ax + aw * half, ay + ah * half
    c = dt.type
    ox = x[..., 0] * c(std0) * aw + ax
    oy = x[..., 1] * c(std1) * ah + ay
    dw = x[..., 2] * c(std2)
    dh = x[..., 3] * c(std3)
    if clip > 0:
        dw = np.minimum(dw, c(clip))
        dh = np.minimum(dh, c(clip))
    with np.errstate(over="ignore"):
        ow = np.exp(dw) * aw * half
        oh = np.exp(dh) * ah * half
    out[...] = xp.asarray(np.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1).astype(dt))


# ================================================================== arange_like


def _al_rule(attrs, shapes, dtypes):
    if len(shapes) != 1:
        raise OpError("arange_like takes 1 input, got %d" % len(shapes))
    s = tuple(shapes[0])
    ax = attrs["axis"]
    if ax is None:
        return (s,), (dtypes[0],)
    real = ax + len(s) if ax < 0 else ax
    if not 0 <= real < len(s):
        raise OpError("arange_like: cannot handle axis %d for %d-d data" % (ax, len(s)))
    return ((s[real],),), (dtypes[0],)


@register("_contrib_arange_like", infer=_al_rule, params=[
    Param("start", p_float, 0.0, "Start of interval. The interval includes this value."),
    Param("step", p_float, 1.0, "Spacing between values."),
    Param("repeat", p_int, 1, "The repeating time of all elements."),
    Param("ctx", p_str, "", "Context of output (ignored: data's context is used)."),
    Param("axis", _p_opt_int, None, "Arange elements according to the size of a certain axis "
          "of input array. None: the whole input shape."),
])
def _contrib_arange_like(xp, data, out, start=0.0, step=1.0, repeat=1, ctx="", axis=None):
    """arange_like(data, start=0, step=1, repeat=1, axis=None): a range shaped
    like data (or like one of its axes), in data's dtype."""
    n = out.size
    i = np.arange(n, dtype=np.float64)
    v = start + np.floor(i / repeat) * step
    out[...] = xp.asarray(v.reshape(out.shape)).astype(out.dtype)


# ------------------------------------------------------------ gradient table
from ._grad import set_grads, zeros_grad  # noqa: E402


def _nms_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_contrib_box_nms(og[0], outs[1], **attrs)]


set_grads({
    "_contrib_box_nms": _nms_grad,
    "_contrib_box_iou": zeros_grad,
    "_contrib_bipartite_matching": zeros_grad,
    "_contrib_box_encode": zeros_grad,
    "_contrib_box_decode": zeros_grad,
    "_contrib_arange_like": zeros_grad,
})
# numpy box arithmetic and greedy selections: on a GPU they run on the host
host_kernels("_contrib_box_iou", "_contrib_box_nms", "_contrib_box_encode", "_contrib_box_decode",
             "_contrib_bipartite_matching")
