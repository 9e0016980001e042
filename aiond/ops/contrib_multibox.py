"""SSD's anchor operators (MXNet's ``contrib/multibox_*``):

- ``MultiBoxPrior(data)``: anchor boxes centred on every cell of data's
  (H, W) grid, ``len(sizes) + len(ratios) - 1`` per cell, as
  (1, H*W*A, 4) corner boxes in [0, 1] units;
- ``MultiBoxTarget(anchor, label, cls_pred)``: matches anchors to the
  ground-truth boxes of ``label`` (rows [cls, xmin, ymin, xmax, ymax, ...],
  padded with -1) and gives (loc_target, loc_mask, cls_target);
- ``MultiBoxDetection(cls_prob, loc_pred, anchor)``: decodes predictions into
  [cls_id, score, xmin, ymin, xmax, ymax] rows, per-class (or forced) NMS.

None has a gradient worth the name: MXNet's backward writes zeros, and so do
these. The matching and the NMS are greedy sequential loops: the kernels run
on the host (numpy) on every device."""
from __future__ import annotations

import numpy as np

from ..base import ShapeError
from ._grad import set_grads, zeros_grad
from ._rules import fmt
from .registry import Param, host_kernels, p_bool, p_float, p_int, register


def _p_floats(v):
    from .registry import _lit
    v = _lit(v)
    if isinstance(v, (int, float, np.number)):
        return (float(v),)
    try:
        return tuple(float(x) for x in v)
    except TypeError:
        raise TypeError("expected a tuple of numbers, got %r" % (v,)) from None


_VARIANCES = Param("variances", _p_floats, (0.1, 0.1, 0.2, 0.2),
                   "Variances to be encoded in box regression target.")


# ------------------------------------------------------------- MultiBoxPrior
def _prior_rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    if len(d) < 4:
        raise ShapeError("MultiBoxPrior: data should be 4-D (batch, channel, y, x), got %s"
                         % fmt(d))
    if d[2] <= 0 or d[3] <= 0:
        raise ShapeError("MultiBoxPrior: data height and width must be > 0, got %s" % fmt(d))
    if len(attrs["steps"]) != 2:
        raise ShapeError("MultiBoxPrior: steps must be (step_y, step_x), got %s"
                         % (attrs["steps"],))
    if len(attrs["offsets"]) != 2:
        raise ShapeError("MultiBoxPrior: offsets must be (offset_y, offset_x), got %s"
                         % (attrs["offsets"],))
    if not attrs["sizes"] or not attrs["ratios"]:
        raise ShapeError("MultiBoxPrior: sizes and ratios must not be empty")
    a = len(attrs["sizes"]) + len(attrs["ratios"]) - 1
    return ((1, d[2] * d[3] * a, 4),), (dtypes[0],)


@register("_contrib_MultiBoxPrior", params=[
    Param("sizes", _p_floats, (1.0,), "List of sizes of generated MultiBoxPriores."),
    Param("ratios", _p_floats, (1.0,), "List of aspect ratios of generated MultiBoxPriores."),
    Param("clip", p_bool, False, "Whether to clip out-of-boundary boxes."),
    Param("steps", _p_floats, (-1.0, -1.0),
          "Priorbox step across y and x, -1 for auto calculation."),
    Param("offsets", _p_floats, (0.5, 0.5), "Priorbox center offsets, y and x respectively")],
    infer=_prior_rule)
def _contrib_multibox_prior(xp, data, out, sizes=(1.0,), ratios=(1.0,), clip=False,
                            steps=(-1.0, -1.0), offsets=(0.5, 0.5)):
    """MultiBoxPrior(data, sizes=(1,), ratios=(1,), clip=False, steps=(-1,-1),
    offsets=(0.5,0.5)): per cell, anchors of every size at ratios[0], then
    of sizes[0] at each further ratio."""
    H, W = data.shape[2], data.shape[3]
    f = np.float32
    if steps[0] * steps[1] < 0:
        raise ValueError("MultiBoxPrior: give both step_y and step_x, or neither (-1)")
    sy, sx = (f(steps[0]), f(steps[1])) if steps[0] > 0 and steps[1] > 0 \
        else (f(1) / f(H), f(1) / f(W))
    # (w/2, h/2) of each anchor, in the order MXNet lays them out per cell
    shapes = [(f(s) * f(H) / f(W) * np.sqrt(f(ratios[0])) / f(2),
               f(s) / np.sqrt(f(ratios[0])) / f(2)) for s in sizes]
    shapes += [(f(sizes[0]) * f(H) / f(W) * np.sqrt(f(r)) / f(2),
                f(sizes[0]) / np.sqrt(f(r)) / f(2)) for r in ratios[1:]]
    hw = np.array(shapes, dtype=f)                                   # (A, 2)
    cy = (np.arange(H, dtype=f) + f(offsets[0])) * sy
    cx = (np.arange(W, dtype=f) + f(offsets[1])) * sx
    cyy, cxx = np.meshgrid(cy, cx, indexing="ij")                   # (H, W)
    c = np.stack([cxx, cyy], axis=-1)[:, :, None, :]                 # (H, W, 1, 2)
    boxes = np.concatenate([c - hw, c + hw], axis=-1).reshape(-1, 4)  # xmin ymin xmax ymax
    if clip:
        boxes = np.clip(boxes, 0, 1)
    out[...] = boxes.reshape(out.shape)


# ------------------------------------------------------------ MultiBoxTarget
def _target_rule(attrs, shapes, dtypes):
    a, lab, p = (tuple(s) for s in shapes)
    if len(a) != 3 or a[0] != 1 or a[2] != 4 or a[1] <= 0:
        raise ShapeError("MultiBoxTarget: anchor must be (1, num_anchors, 4) (shared across "
                         "the batch), got %s" % fmt(a))
    if len(lab) != 3 or lab[1] <= 0 or lab[2] < 5:
        raise ShapeError("MultiBoxTarget: label must be (batch, num_labels, label_width >= 5), "
                         "got %s" % fmt(lab))
    if len(p) != 3 or p[2] != a[1]:
        raise ShapeError("MultiBoxTarget: cls_pred must be (batch, num_classes, %d) to match "
                         "the anchors, got %s" % (a[1], fmt(p)))
    loc = (lab[0], a[1] * 4)
    return (loc, loc, (lab[0], a[1])), (dtypes[0],) * 3


def _iou(anchors, gts):
    """(A, 4) x (G, 4) -> (A, G) intersection over union (0 where the union is 0)."""
    lt = np.maximum(anchors[:, None, :2], gts[None, :, :2])
    rb = np.minimum(anchors[:, None, 2:], gts[None, :, 2:])
    inter = np.prod(np.maximum(rb - lt, 0), axis=-1)
    area_a = np.prod(anchors[:, 2:] - anchors[:, :2], axis=-1)
    area_g = np.prod(gts[:, 2:] - gts[:, :2], axis=-1)
    union = area_a[:, None] + area_g[None, :] - inter
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(union != 0, inter / np.where(union != 0, union, 1), 0.0)


def _match(ious, overlap_threshold):
    """Greedy bipartite matching first (each ground truth gets its best free
    anchor), then every other anchor whose best IoU passes the threshold.
    Returns flags (1 positive, -1 undecided), best IoU and best gt per anchor."""
    A, G = ious.shape
    flags = np.full(A, -1, np.int8)
    best_iou = np.full(A, -1.0)
    best_gt = np.full(A, -1, np.int64)
    work = ious.copy()
    gt_done = np.zeros(G, bool)
    while not gt_done.all():
        masked = np.where(flags[:, None] == 1, -np.inf, work)
        masked[:, gt_done] = -np.inf
        j, k = np.unravel_index(np.argmax(masked), masked.shape)
        if not masked[j, k] > 1e-6:
            break
        best_iou[j], best_gt[j] = masked[j, k], k
        flags[j], gt_done[k] = 1, True
    if overlap_threshold > 0:
        for j in np.nonzero(flags != 1)[0]:
            k = int(np.argmax(ious[j]))       # the first of equal maxima, as MXNet's scan
            best_iou[j], best_gt[j] = ious[j, k], k
            if ious[j, k] > overlap_threshold:
                flags[j] = 1
    return flags, best_iou, best_gt


@register("_contrib_MultiBoxTarget", inputs=("anchor", "label", "cls_pred"), params=[
    Param("overlap_threshold", p_float, 0.5,
          "Anchor-GT overlap threshold to be regarded as a positive match."),
    Param("ignore_label", p_float, -1.0, "Label for ignored anchors."),
    Param("negative_mining_ratio", p_float, -1.0,
          "Max negative to positive samples ratio, use -1 to disable mining"),
    Param("negative_mining_thresh", p_float, 0.5, "Threshold used for negative mining."),
    Param("minimum_negative_samples", p_int, 0, "Minimum number of negative samples."),
    _VARIANCES], num_outputs=3, infer=_target_rule,
    output_names=("loc_target", "loc_mask", "cls_target"))
def _contrib_multibox_target(xp, anchor, label, cls_pred, out, overlap_threshold=0.5,
                             ignore_label=-1.0, negative_mining_ratio=-1.0,
                             negative_mining_thresh=0.5, minimum_negative_samples=0,
                             variances=(0.1, 0.1, 0.2, 0.2)):
    """MultiBoxTarget(anchor, label, cls_pred, ...): regression targets, their
    mask and class targets (0 background, cls + 1 matched, ignore_label for
    anchors neither matched nor mined as negatives)."""
    if len(variances) != 4:
        raise ValueError("MultiBoxTarget: variances must have 4 values, got %s" % (variances,))
    loc_t, loc_m, cls_t = out
    anchors = np.asarray(anchor, np.float64).reshape(-1, 4)
    A = anchors.shape[0]
    labels = np.asarray(label, np.float64)
    preds = np.asarray(cls_pred, np.float64)
    lt = np.zeros((labels.shape[0], A, 4))
    lm = np.zeros((labels.shape[0], A, 4))
    ct = np.full((labels.shape[0], A), ignore_label)
    for b in range(labels.shape[0]):
        rows = labels[b]
        invalid = np.nonzero(rows[:, 0] == -1)[0]
        n_valid = int(invalid[0]) if invalid.size else rows.shape[0]   # up to the first pad row
        if n_valid == 0:
            continue
        ious = _iou(anchors, rows[:n_valid, 1:5])
        flags, best_iou, best_gt = _match(ious, overlap_threshold)
        n_pos = int((flags == 1).sum())
        if negative_mining_ratio > 0:
            if not negative_mining_thresh > 0:
                raise ValueError("MultiBoxTarget: negative_mining_thresh must be > 0, got %s"
                                 % negative_mining_thresh)
            n_neg = min(int(n_pos * negative_mining_ratio), A - n_pos)
            if n_neg > 0:
                undecided = best_iou < 0
                best_iou[undecided] = ious[undecided].max(axis=1)
                cand = np.nonzero((flags == -1) & (best_iou < negative_mining_thresh))[0]
                logits = preds[b][:, cand]
                e = np.exp(logits - logits.max(axis=0))
                bg_prob = e[0] / e.sum(axis=0)
                # the hardest negatives: lowest background probability first
                order = np.argsort(bg_prob, kind="stable")
                if order.size < n_neg:
                    raise ValueError("MultiBoxTarget: %d negatives requested, only %d "
                                     "candidates below negative_mining_thresh"
                                     % (n_neg, order.size))
                flags[cand[order[:n_neg]]] = 0
        else:
            flags[flags != 1] = 0
        pos = np.nonzero(flags == 1)[0]
        g = rows[best_gt[pos]]
        ct[b, pos] = g[:, 0] + 1
        ct[b, flags == 0] = 0
        lm[b, pos] = 1
        a = anchors[pos]
        aw, ah = a[:, 2] - a[:, 0], a[:, 3] - a[:, 1]
        ax, ay = (a[:, 0] + a[:, 2]) / 2, (a[:, 1] + a[:, 3]) / 2
        gw, gh = g[:, 3] - g[:, 1], g[:, 4] - g[:, 2]
        gx, gy = (g[:, 1] + g[:, 3]) / 2, (g[:, 2] + g[:, 4]) / 2
        with np.errstate(divide="ignore", invalid="ignore"):
            lt[b, pos] = np.stack([(gx - ax) / aw / variances[0], (gy - ay) / ah / variances[1],
                                   np.log(gw / aw) / variances[2],
                                   np.log(gh / ah) / variances[3]], axis=-1)
    loc_t[...] = lt.reshape(loc_t.shape)
    loc_m[...] = lm.reshape(loc_m.shape)
    cls_t[...] = ct


# --------------------------------------------------------- MultiBoxDetection
def _detection_rule(attrs, shapes, dtypes):
    c, lo, a = (tuple(s) for s in shapes)
    if len(c) != 3 or len(lo) != 2 or len(a) != 3:
        raise ShapeError("MultiBoxDetection: expects cls_prob (batch, num_classes, num_anchors), "
                         "loc_pred (batch, num_anchors*4) and anchor (1, num_anchors, 4), got "
                         "%s, %s, %s" % (fmt(c), fmt(lo), fmt(a)))
    if c[2] != a[1] or lo[1] != c[2] * 4 or a[1] <= 0 or a[2] != 4:
        raise ShapeError("MultiBoxDetection: number of anchors mismatch: cls_prob %s, loc_pred "
                         "%s, anchor %s" % (fmt(c), fmt(lo), fmt(a)))
    return ((c[0], a[1], 6),), (dtypes[0],)


def _overlap(a, b):
    w = max(0.0, min(a[2], b[2]) - max(a[0], b[0]))
    h = max(0.0, min(a[3], b[3]) - max(a[1], b[1]))
    i = w * h
    u = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - i
    return 0.0 if u <= 0 else i / u


@register("_contrib_MultiBoxDetection", inputs=("cls_prob", "loc_pred", "anchor"), params=[
    Param("clip", p_bool, True, "Clip out-of-boundary boxes."),
    Param("threshold", p_float, 0.01, "Threshold to be a positive prediction."),
    Param("background_id", p_int, 0, "Background id."),
    Param("nms_threshold", p_float, 0.5, "Non-maximum suppression threshold."),
    Param("force_suppress", p_bool, False, "Suppress all detections regardless of class_id."),
    Param("variances", _p_floats, (0.1, 0.1, 0.2, 0.2),
          "Variances to be decoded from box regression output."),
    Param("nms_topk", p_int, -1, "Keep maximum top k detections before nms, -1 for no limit.")],
    infer=_detection_rule)
def _contrib_multibox_detection(xp, cls_prob, loc_pred, anchor, out, clip=True, threshold=0.01,
                                background_id=0, nms_threshold=0.5, force_suppress=False,
                                variances=(0.1, 0.1, 0.2, 0.2), nms_topk=-1):
    """MultiBoxDetection(cls_prob, loc_pred, anchor, ...): rows [class_id,
    score, xmin, ymin, xmax, ymax] per anchor, valid ones first, sorted by
    score and suppressed by NMS; class 0 of cls_prob is the background and
    suppressed or empty rows have class_id -1."""
    if len(variances) != 4:
        raise ValueError("MultiBoxDetection: variances must have 4 values, got %s"
                         % (variances,))
    dt = out.dtype.type
    probs = np.asarray(cls_prob)
    locs = np.asarray(loc_pred).reshape(probs.shape[0], -1, 4)
    anchors = np.asarray(anchor).reshape(-1, 4)
    A = anchors.shape[0]
    res = np.full(out.shape, -1, dtype=out.dtype)
    vx, vy, vw, vh = (dt(v) for v in variances)
    aw, ah = anchors[:, 2] - anchors[:, 0], anchors[:, 3] - anchors[:, 1]
    ax, ay = (anchors[:, 0] + anchors[:, 2]) / dt(2), (anchors[:, 1] + anchors[:, 3]) / dt(2)
    for b in range(probs.shape[0]):
        fg = probs[b, 1:]                                   # (C-1, A)
        if fg.shape[0]:
            best = fg.max(axis=0)
            cid = np.where(best > -1, fg.argmax(axis=0) + 1, 0)   # MXNet's scan starts at -1
            score = np.maximum(best, dt(-1))
        else:
            cid, score = np.zeros(A, np.int64), np.full(A, -1, out.dtype)
        cid = np.where(score < threshold, 0, cid)
        p = locs[b]
        ox, oy = p[:, 0] * vx * aw + ax, p[:, 1] * vy * ah + ay
        ow, oh = np.exp(p[:, 2] * vw) * aw / dt(2), np.exp(p[:, 3] * vh) * ah / dt(2)
        boxes = np.stack([ox - ow, oy - oh, ox + ow, oy + oh], axis=-1)
        if clip:
            boxes = np.clip(boxes, 0, 1)
        rows = np.concatenate([(cid - 1)[:, None].astype(out.dtype), score[:, None],
                               boxes.astype(out.dtype)], axis=1)
        rows = rows[rows[:, 0] >= 0]
        n = rows.shape[0]
        res[b, :n] = rows
        if n < 1 or nms_threshold <= 0 or nms_threshold > 1:
            continue
        order = np.argsort(-rows[:, 1], kind="stable")
        keep = n if not 0 < nms_topk < n else nms_topk
        res[b, keep:n, 0] = -1
        res[b, :keep] = rows[order[:keep]]
        det = res[b]
        for i in range(keep):
            if det[i, 0] < 0:
                continue
            for j in range(i + 1, keep):
                if det[j, 0] < 0:
                    continue
                if (force_suppress or det[i, 0] == det[j, 0]) \
                        and _overlap(det[i, 2:], det[j, 2:]) >= nms_threshold:
                    det[j, 0] = -1
    out[...] = res


set_grads({
    "_contrib_MultiBoxPrior": zeros_grad,
    "_contrib_MultiBoxTarget": zeros_grad,
    "_contrib_MultiBoxDetection": zeros_grad,
})
host_kernels("_contrib_MultiBoxPrior", "_contrib_MultiBoxTarget", "_contrib_MultiBoxDetection")
