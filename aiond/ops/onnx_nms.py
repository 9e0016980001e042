"""``_onnx_non_max_suppression``: ONNX's NonMaxSuppression, the op behind
``mx.contrib.onnx``'s import of that operator (the NMS of every SSD, YOLOv3
and Faster R-CNN exported to ONNX, aiond's and MXNet's exporters included).

Its output, (selected, 3) int64 rows of (batch, class, box), has as many rows
as boxes survive: a value-shaped op (``ops/dynamic.py``). A graph runs it
through its ``DYNAMIC`` entry (``ndarray/contrib.py``), which reads the
computed boxes and scores and calls :func:`select`; symbol inference sees
(-1, 3).

Semantics are ONNX's (its reference implementation and onnxruntime's):
candidates score strictly above ``score_threshold``; per (batch, class) they
are visited by descending score, equal scores in box order; a box is dropped
when its IoU with an already selected box of that class is strictly above
``iou_threshold``; boxes with no area never suppress; at most
``max_output_boxes_per_class`` per class (0: none). ``center_point_box=0``
takes any two opposite corners (y1, x1, y2, x2), 1 takes
(x_center, y_center, width, height).
"""
from __future__ import annotations

import numpy as np

from ..base import OpError
from .dynamic import ValueShaped
from ._nn_util import _p_opt_float
from .registry import Param, p_float, p_int, register

_I64 = np.dtype(np.int64)


def _corners(boxes, center):
    """(x0, y0, x1, y1) with x0 <= x1, y0 <= y1, of (..., 4) boxes."""
    if center:
        xc, yc, w, h = boxes[..., 0], boxes[..., 1], boxes[..., 2] / 2, boxes[..., 3] / 2
        return xc - w, yc - h, xc + w, yc + h
    y0, x0, y1, x1 = boxes[..., 0], boxes[..., 1], boxes[..., 2], boxes[..., 3]
    return (np.minimum(x0, x1), np.minimum(y0, y1), np.maximum(x0, x1), np.maximum(y0, y1))


def select(boxes, scores, max_output_boxes_per_class=0, iou_threshold=0.0,
           score_threshold=None, center_point_box=0):
    """The selected (batch, class, box) rows of ONNX's NonMaxSuppression, on
    numpy arrays: boxes (B, N, 4), scores (B, C, N)."""
    boxes, scores = np.asarray(boxes), np.asarray(scores)
    B, N, _ = boxes.shape
    C = scores.shape[1]
    limit = int(max_output_boxes_per_class)
    if limit <= 0 or N == 0:
        return np.zeros((0, 3), _I64)
    x0, y0, x1, y1 = _corners(boxes, center_point_box)
    area = (x1 - x0) * (y1 - y0)
    t = boxes.dtype.type(iou_threshold)
    rows = []
    for b in range(B):
        bx0, by0, bx1, by1, ba = x0[b], y0[b], x1[b], y1[b], area[b]
        for c in range(C):
            s = scores[b, c]
            cand = np.arange(N) if score_threshold is None else \
                np.nonzero(s > s.dtype.type(score_threshold))[0]
            # descending score, equal scores in box order (a stable sort)
            order = cand[np.argsort(-s[cand], kind="stable")]
            kept = []
            while order.size and len(kept) < limit:
                i, rest = order[0], order[1:]
                kept.append(i)
                iw = np.minimum(bx1[i], bx1[rest]) - np.maximum(bx0[i], bx0[rest])
                ih = np.minimum(by1[i], by1[rest]) - np.maximum(by0[i], by0[rest])
                inter = iw * ih
                union = ba[i] + ba[rest] - inter
                with np.errstate(divide="ignore", invalid="ignore"):
                    gone = (iw > 0) & (ih > 0) & (inter > 0) & (ba[i] > 0) & (ba[rest] > 0) \
                        & (union > 0) & (inter / union > t)
                order = rest[~gone]
            rows.extend((b, c, i) for i in kept)
    return np.array(rows, _I64).reshape(-1, 3)


def _rule(attrs, shapes, dtypes):
    if len(shapes) != 2:
        raise OpError("NonMaxSuppression takes boxes and scores, got %d inputs" % len(shapes))
    bs, ss = tuple(shapes[0]), tuple(shapes[1])
    if len(bs) != 3 or bs[2] != 4:
        raise OpError("NonMaxSuppression: boxes must be (batches, boxes, 4), got %s" % (bs,))
    if len(ss) != 3 or ss[0] != bs[0] or ss[2] != bs[1]:
        raise OpError("NonMaxSuppression: scores must be (batches, classes, boxes) = "
                      "(%d, C, %d), got %s" % (bs[0], bs[1], ss))
    for what, d in (("boxes", dtypes[0]), ("scores", dtypes[1])):
        if np.dtype(d).kind != "f":
            raise OpError("NonMaxSuppression needs floating-point %s, got %s"
                          % (what, np.dtype(d).name))
    n = attrs.get("_count")
    if n is None:
        raise ValueShaped("the number of selected boxes depends on the values of boxes and "
                          "scores; run it in a graph or through mx.contrib.onnx",
                          ((-1, 3),), (_I64,))
    return ((int(n), 3),), (_I64,)


@register("_onnx_non_max_suppression", inputs=("boxes", "scores"),
          params=[Param("max_output_boxes_per_class", p_int, 0,
                        "Boxes selected per batch and class at most (0: none)."),
                  Param("iou_threshold", p_float, 0.0,
                        "Boxes overlapping a selected one by more than this IoU are dropped."),
                  Param("score_threshold", _p_opt_float, None,
                        "Only boxes scoring above this are candidates (None: all)."),
                  Param("center_point_box", p_int, 0,
                        "0: (y1, x1, y2, x2) corners; 1: (x_center, y_center, width, height).")],
          infer=_rule, inline=False)
def _onnx_non_max_suppression(xp, boxes, scores, out, max_output_boxes_per_class=0,
                              iou_threshold=0.0, score_threshold=None, center_point_box=0,
                              _count=None):
    """_onnx_non_max_suppression(boxes, scores, ...): ONNX's NonMaxSuppression,
    the (batch, class, box) int64 rows of the selected boxes."""
    host = getattr(xp, "asnumpy", np.asarray)
    r = select(host(boxes), host(scores), max_output_boxes_per_class, iou_threshold,
               score_threshold, center_point_box)
    out[...] = xp.asarray(r)


def _no_grad(F, attrs, ins, outs, og):
    return [F.zeros_like(ins[0]), F.zeros_like(ins[1])]


from ._grad import set_grads  # noqa: E402

set_grads({"_onnx_non_max_suppression": _no_grad})
