"""SSD's box ops (src/operator/contrib/multibox_*.cc in MXNet 1.9.1):
``_contrib_MultiBoxPrior`` (anchor boxes), ``_contrib_MultiBoxTarget``
(training targets for anchors against labelled boxes) and
``_contrib_MultiBoxDetection`` (decoded, non-maximum-suppressed detections);
``mx.nd.contrib.MultiBox*`` and ``npx.multibox_*``.

Boxes are (xmin, ymin, xmax, ymax) in [0, 1]; anchors are shared by the batch
(shape (1, N, 4)); labels are (batch, M, >= 5) rows of (class, box...), padded
with rows of -1. Host kernels: the matching and suppression loops are
sequential, as MXNet's CPU kernels are. None of them has a gradient (zeros)."""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._grad import set_grads, zeros_grad
from ._rules import fmt
from .registry import Param, _lit, host_kernels, p_bool, p_float, p_int, register


def _p_floats(v):
    v = _lit(v)
    if isinstance(v, (int, float, np.number)):
        return (float(v),)
    return tuple(float(a) for a in v)


# ================================================================= prior
def _prior_rule(attrs, shapes, dtypes):
    if len(shapes) != 1:
        raise OpError("MultiBoxPrior takes 1 input (data), got %d" % len(shapes))
    s = tuple(shapes[0])
    if len(s) < 4 or s[2] <= 0 or s[3] <= 0:
        raise ShapeError("MultiBoxPrior: data must be 4-D (batch, channel, height, width) "
                         "with height and width > 0, got %s" % fmt(s))
    n = s[2] * s[3] * (len(attrs["sizes"]) + len(attrs["ratios"]) - 1)
    return ((1, n, 4),), (dtypes[0],)


def _prior_check(op, attrs):
    if not attrs["sizes"] or not attrs["ratios"]:
        raise OpError("%s: sizes and ratios must not be empty" % op.name)
    if len(attrs["steps"]) != 2 or len(attrs["offsets"]) != 2:
        raise OpError("%s: steps and offsets must hold 2 values (y, x), got %r and %r"
                      % (op.name, attrs["steps"], attrs["offsets"]))
    if not all(0 <= o <= 1 for o in attrs["offsets"]):
        raise OpError("%s: offsets must be in [0, 1], got %r" % (op.name, attrs["offsets"]))
    if attrs["steps"][0] * attrs["steps"][1] < 0:
        raise OpError("%s: give both step_y and step_x (or neither), got %r"
                      % (op.name, attrs["steps"]))


def prior_boxes(height, width, sizes, ratios, steps, offsets, clip):
    """The (height * width * (len(sizes) + len(ratios) - 1), 4) anchors: per
    location, every size at the first ratio, then the first size at the other
    ratios (MXNet's order)."""
    step_y, step_x = steps
    if step_y <= 0 or step_x <= 0:
        step_y, step_x = 1.0 / height, 1.0 / width
    whs = [(s * height / width * np.sqrt(ratios[0]) / 2, s / np.sqrt(ratios[0]) / 2)
           for s in sizes]
    whs += [(sizes[0] * height / width * np.sqrt(r) / 2, sizes[0] / np.sqrt(r) / 2)
            for r in ratios[1:]]
    wh = np.array(whs, dtype=np.float32)                              # (A, 2)
    cy = (np.arange(height, dtype=np.float32) + offsets[0]) * step_y
    cx = (np.arange(width, dtype=np.float32) + offsets[1]) * step_x
    cyx = np.stack(np.meshgrid(cy, cx, indexing="ij"), axis=-1).reshape(-1, 1, 2)
    c = cyx[..., ::-1]                                                # (HW, 1, 2) as (x, y)
    boxes = np.concatenate([c - wh, c + wh], axis=-1).reshape(-1, 4)
    return np.clip(boxes, 0, 1) if clip else boxes


@register("_contrib_MultiBoxPrior", infer=_prior_rule, attr_check=_prior_check,
          aliases=("_npx_multibox_prior",), params=[
              Param("sizes", _p_floats, (1.0,), "List of sizes of generated MultiBoxPriores."),
              Param("ratios", _p_floats, (1.0,), "List of aspect ratios of generated "
                    "MultiBoxPriores."),
              Param("clip", p_bool, False, "Whether to clip out-of-boundary boxes."),
              Param("steps", _p_floats, (-1.0, -1.0), "Priorbox step across y and x, -1 for "
                    "auto calculation."),
              Param("offsets", _p_floats, (0.5, 0.5), "Priorbox center offsets, y and x "
                    "respectively")])
def _contrib_multibox_prior(xp, data, out, sizes=(1.0,), ratios=(1.0,), clip=False,
                            steps=(-1.0, -1.0), offsets=(0.5, 0.5)):
    """MultiBoxPrior(data, sizes, ratios, clip, steps, offsets): SSD anchor boxes for
    every location of data's (height, width) grid, shape (1, N, 4)."""
    boxes = prior_boxes(data.shape[2], data.shape[3], sizes, ratios, steps, offsets, clip)
    out[...] = boxes.reshape(out.shape)


# ================================================================= target
def _target_rule(attrs, shapes, dtypes):
    if len(shapes) != 3:
        raise OpError("MultiBoxTarget takes 3 inputs (anchor, label, cls_pred), got %d"
                      % len(shapes))
    a, l, p = (tuple(s) for s in shapes)
    if len(a) != 3 or a[0] != 1 or a[1] <= 0 or a[2] != 4:
        raise ShapeError("MultiBoxTarget: anchor must have shape (1, num_anchors, 4), got %s"
                         % fmt(a))
    if len(l) != 3 or l[1] <= 0 or l[2] < 5:
        raise ShapeError("MultiBoxTarget: label must have shape (batch, num_labels, >= 5), "
                         "got %s" % fmt(l))
    if len(p) != 3 or p[2] != a[1]:
        raise ShapeError("MultiBoxTarget: cls_pred must have shape (batch, num_classes, %d), "
                         "got %s" % (a[1], fmt(p)))
    n = a[1]
    d = dtypes[0]
    return ((l[0], n * 4), (l[0], n * 4), (l[0], n)), (d, d, d)


def _check_var(op, attrs):
    if len(attrs["variances"]) != 4:
        raise OpError("%s: variances must hold 4 values, got %r" % (op.name, attrs["variances"]))


def _iou(a, b):
    """IoU of every box of a (N, 4) with every box of b (M, 4): (N, M)."""
    lt = np.maximum(a[:, None, :2], b[None, :, :2])
    rb = np.minimum(a[:, None, 2:], b[None, :, 2:])
    inter = np.prod(np.maximum(rb - lt, 0), axis=-1)
    area_a = np.prod(a[:, 2:] - a[:, :2], axis=-1)
    area_b = np.prod(b[:, 2:] - b[:, :2], axis=-1)
    union = area_a[:, None] + area_b[None, :] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union != 0, inter / union, 0.0)


def _encode(anchor, gt, var):
    aw, ah = anchor[:, 2] - anchor[:, 0], anchor[:, 3] - anchor[:, 1]
    ax, ay = (anchor[:, 0] + anchor[:, 2]) / 2, (anchor[:, 1] + anchor[:, 3]) / 2
    gw, gh = gt[:, 2] - gt[:, 0], gt[:, 3] - gt[:, 1]
    gx, gy = (gt[:, 0] + gt[:, 2]) / 2, (gt[:, 1] + gt[:, 3]) / 2
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.stack([(gx - ax) / aw / var[0], (gy - ay) / ah / var[1],
                         np.log(gw / aw) / var[2], np.log(gh / ah) / var[3]], axis=-1)


def _match(anchors, labels, cls_pred, overlap_threshold, ratio, thresh):
    """anchor flags (1 positive, 0 negative, -1 ignored) and matched labels."""
    n = anchors.shape[0]
    valid = 0
    while valid < labels.shape[0] and labels[valid, 0] != -1:
        valid += 1
    flags = np.full(n, -1, np.int8)
    best = np.full(n, -1, np.int64)
    best_iou = np.full(n, -1.0)
    if valid == 0:
        return flags, best, False
    iou = _iou(anchors.astype(np.float64), labels[:valid, 1:5].astype(np.float64))
    # greedy bipartite matching: each ground truth takes its best free anchor
    work = np.where(iou > 1e-6, iou, -np.inf)
    gt_free = np.ones(valid, bool)
    while gt_free.any():
        w = np.where(gt_free[None, :] & (flags != 1)[:, None], work, -np.inf)
        j, k = np.unravel_index(int(np.argmax(w)), w.shape)
        if not np.isfinite(w[j, k]):
            break
        best[j], best_iou[j], flags[j] = k, iou[j, k], 1
        gt_free[k] = False
    npos = int((flags == 1).sum())
    rest = flags != 1
    k = np.argmax(iou, axis=1)
    m = iou[np.arange(n), k]
    if overlap_threshold > 0:
        best[rest], best_iou[rest] = k[rest], m[rest]
        pos = rest & (m > overlap_threshold)
        flags[pos] = 1
        npos += int(pos.sum())
    if ratio > 0:
        nneg = min(int(npos * ratio), n - npos)
        if nneg > 0:
            unset = (flags != 1) & (best_iou < 0)
            best[unset], best_iou[unset] = k[unset], m[unset]
            cand = np.nonzero((flags == -1) & (best_iou < thresh))[0]
            # in the predictions' dtype, as MXNet (ties then break the same way)
            p = cls_pred[:, cand]
            e = np.exp(p - p.max(axis=0))
            bg = e[0] / e.sum(axis=0)
            # the least background-like first (stable, as MXNet's stable_sort)
            order = cand[np.argsort(bg, kind="stable")]
            if order.size < nneg:
                raise ValueError("MultiBoxTarget: %d negatives wanted, only %d candidates"
                                 % (nneg, order.size))
            flags[order[:nneg]] = 0
    else:
        flags[flags != 1] = 0
    return flags, best, True


@register("_contrib_MultiBoxTarget", inputs=("anchor", "label", "cls_pred"),
          infer=_target_rule, attr_check=_check_var, num_outputs=3,
          output_names=("loc_target", "loc_mask", "cls_target"),
          aliases=("_npx_multibox_target",), inline=False, params=[
              Param("overlap_threshold", p_float, 0.5, "Anchor-GT overlap threshold to be "
                    "regarded as a positive match."),
              Param("ignore_label", p_float, -1.0, "Label for ignored anchors."),
              Param("negative_mining_ratio", p_float, -1.0, "Max negative to positive "
                    "samples ratio, use -1 to disable mining"),
              Param("negative_mining_thresh", p_float, 0.5, "Threshold used for negative "
                    "mining."),
              Param("minimum_negative_samples", p_int, 0, "Minimum number of negative "
                    "samples."),
              Param("variances", _p_floats, (0.1, 0.1, 0.2, 0.2), "Variances to be encoded "
                    "in box regression target.")])
def _contrib_multibox_target(xp, anchor, label, cls_pred, out, overlap_threshold=0.5,
                             ignore_label=-1.0, negative_mining_ratio=-1.0,
                             negative_mining_thresh=0.5, minimum_negative_samples=0,
                             variances=(0.1, 0.1, 0.2, 0.2)):
    """MultiBoxTarget(anchor, label, cls_pred, ...): (loc_target, loc_mask, cls_target)
    for SSD training: each anchor matched to a ground truth box (its class + 1,
    its encoded offsets), a negative (class 0) or ignored (ignore_label)."""
    loc_t, loc_m, cls_t = out
    loc_t[...] = 0
    loc_m[...] = 0
    cls_t[...] = ignore_label
    anchors = np.asarray(anchor)[0]
    n = anchors.shape[0]
    if negative_mining_ratio > 0 and not negative_mining_thresh > 0:
        raise ValueError("MultiBoxTarget: negative_mining_thresh must be > 0")
    for b in range(label.shape[0]):
        lab = np.asarray(label[b])
        flags, best, any_gt = _match(anchors, lab, np.asarray(cls_pred[b]), overlap_threshold,
                                     negative_mining_ratio, negative_mining_thresh)
        if not any_gt:
            continue
        pos = flags == 1
        ct = np.asarray(cls_t[b]).copy()
        ct[pos] = lab[best[pos], 0] + 1
        ct[flags == 0] = 0
        cls_t[b] = ct
        mask = np.repeat(pos.astype(loc_m.dtype), 4)
        loc_m[b] = mask
        tgt = np.zeros((n, 4))
        if pos.any():
            tgt[pos] = _encode(anchors[pos].astype(np.float64),
                               lab[best[pos], 1:5].astype(np.float64), variances)
        loc_t[b] = tgt.reshape(-1)


# ================================================================= detection
def _det_rule(attrs, shapes, dtypes):
    if len(shapes) != 3:
        raise OpError("MultiBoxDetection takes 3 inputs (cls_prob, loc_pred, anchor), got %d"
                      % len(shapes))
    c, l, a = (tuple(s) for s in shapes)
    if len(c) != 3:
        raise ShapeError("MultiBoxDetection: cls_prob must have shape (batch, num_classes, "
                         "num_anchors), got %s" % fmt(c))
    n = c[2]
    if len(a) != 3 or a[1:] != (n, 4) or len(l) != 2 or l != (c[0], n * 4):
        raise ShapeError("MultiBoxDetection: for cls_prob %s, loc_pred must be %s and anchor "
                         "(1, %d, 4); got %s and %s" % (fmt(c), fmt((c[0], n * 4)), n,
                                                         fmt(l), fmt(a)))
    return ((c[0], n, 6),), (dtypes[0],)


def _decode(anchor, loc, var, clip):
    aw, ah = anchor[:, 2] - anchor[:, 0], anchor[:, 3] - anchor[:, 1]
    ax, ay = (anchor[:, 0] + anchor[:, 2]) / 2, (anchor[:, 1] + anchor[:, 3]) / 2
    ox, oy = loc[:, 0] * var[0] * aw + ax, loc[:, 1] * var[1] * ah + ay
    ow, oh = np.exp(loc[:, 2] * var[2]) * aw / 2, np.exp(loc[:, 3] * var[3]) * ah / 2
    box = np.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1)
    return np.clip(box, 0, 1) if clip else box


@register("_contrib_MultiBoxDetection", inputs=("cls_prob", "loc_pred", "anchor"),
          infer=_det_rule, attr_check=_check_var, aliases=("_npx_multibox_detection",),
          inline=False, params=[
              Param("clip", p_bool, True, "Clip out-of-boundary boxes."),
              Param("threshold", p_float, 0.01, "Threshold to be a positive prediction."),
              Param("background_id", p_int, 0, "Background id."),
              Param("nms_threshold", p_float, 0.5, "Non-maximum suppression threshold."),
              Param("force_suppress", p_bool, False, "Suppress all detections regardless of "
                    "class_id."),
              Param("variances", _p_floats, (0.1, 0.1, 0.2, 0.2), "Variances to be decoded "
                    "from box regression output."),
              Param("nms_topk", p_int, -1, "Keep maximum top k detections before nms, -1 for "
                    "no limit.")])
def _contrib_multibox_detection(xp, cls_prob, loc_pred, anchor, out, clip=True, threshold=0.01,
                                background_id=0, nms_threshold=0.5, force_suppress=False,
                                variances=(0.1, 0.1, 0.2, 0.2), nms_topk=-1):
    """MultiBoxDetection(cls_prob, loc_pred, anchor, ...): per image, rows of
    (class id, score, xmin, ymin, xmax, ymax) sorted by score after non-maximum
    suppression; suppressed and background rows have class id -1."""
    out[...] = -1
    anchors = np.asarray(anchor)[0].astype(np.float64)
    n = anchors.shape[0]
    for b in range(cls_prob.shape[0]):
        p = np.asarray(cls_prob[b])
        if p.shape[0] > 1:
            cid = np.argmax(p[1:], axis=0) + 1
            score = p[cid, np.arange(n)]
        else:
            cid, score = np.zeros(n, np.int64), np.full(n, -1.0)
        cid = np.where(score < threshold, 0, cid)
        keep = np.nonzero(cid > 0)[0]
        if keep.size == 0:
            continue
        boxes = _decode(anchors[keep], np.asarray(loc_pred[b]).reshape(n, 4)[keep]
                        .astype(np.float64), variances, clip)
        rows = np.concatenate([(cid[keep] - 1)[:, None], score[keep, None], boxes], axis=1)
        if 0 < nms_threshold <= 1:
            ranked = rows[np.argsort(-rows[:, 1], kind="stable")]
            live = len(rows)
            if 0 < nms_topk < live:
                # MXNet keeps the top k sorted; the rows past them stay in anchor
                # order, marked -1
                live = nms_topk
                rows = np.concatenate([ranked[:live], rows[live:]])
                rows[live:, 0] = -1
            else:
                rows = ranked
            for i in range(live):
                if rows[i, 0] < 0:
                    continue
                j = np.arange(i + 1, live)
                j = j[rows[j, 0] >= 0]
                if not force_suppress:
                    j = j[rows[j, 0] == rows[i, 0]]
                if j.size:
                    ov = _iou(rows[i:i + 1, 2:6], rows[j, 2:6])[0]
                    rows[j[ov >= nms_threshold], 0] = -1
        out[b, :len(rows)] = rows


host_kernels("_contrib_MultiBoxPrior", "_contrib_MultiBoxTarget", "_contrib_MultiBoxDetection")
set_grads({"_contrib_MultiBoxPrior": zeros_grad, "_contrib_MultiBoxTarget": zeros_grad,
           "_contrib_MultiBoxDetection": zeros_grad})
