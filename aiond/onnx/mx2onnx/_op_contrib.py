"""Translations of contrib ops: attention products, box decoding and NMS."""
from __future__ import annotations

import numpy as np

from ._registry import register


def _heads_view(b, n, qkv, which):
    """(L, B, H*3*D) interleaved projections -> the (B*H, L, D) slice ``which``
    (0 queries, 1 keys, 2 values)."""
    L, B, E = n.ishape[0]
    H = int(n.p["heads"])
    D = E // (3 * H)
    x = b.reshape(qkv, [L, B, H, 3, D])
    x = b.squeeze(b.slice(x, [which], [which + 1], [3]), [3])
    x = b.add("Transpose", [x], perm=[1, 2, 0, 3])
    return b.reshape(x, [B * H, L, D]), (L, B, H, D)


@register("_contrib_interleaved_matmul_selfatt_qk")
def selfatt_qk(b, n):
    q, (_, _, _, D) = _heads_view(b, n, n.x[0], 0)
    k, _ = _heads_view(b, n, n.x[0], 1)
    q = b.add("Div", [q, b.scalar(np.sqrt(D), n.idtype[0])])
    kt = b.add("Transpose", [k], perm=[0, 2, 1])
    return b.add("MatMul", [q, kt], [n.out()])


@register("_contrib_interleaved_matmul_selfatt_valatt")
def selfatt_valatt(b, n):
    v, (L, B, H, D) = _heads_view(b, n, n.x[0], 2)
    o = b.add("MatMul", [n.x[1], v])
    o = b.add("Transpose", [b.reshape(o, [B, H, L, D])], perm=[2, 0, 1, 3])
    return b.reshape(o, [L, B, H * D], [n.out()])


@register("_contrib_box_decode")
def box_decode(b, n):
    p = n.p
    dt = n.idtype[0]
    data, anchors = n.x[:2]
    N = n.ishape[0][1]
    a = b.slice(b.reshape(b.cast(anchors, dt) if n.idtype[1] != dt else anchors, [-1, 4]),
                [0], [N], [0])
    ax, ay, aw, ah = b.split(a, [1, 1, 1, 1], 1)
    half = b.scalar(0.5, dt)
    if p.get("format", "center") == "corner":
        aw = b.add("Sub", [aw, ax])
        ah = b.add("Sub", [ah, ay])
        ax = b.add("Add", [ax, b.add("Mul", [aw, half])])
        ay = b.add("Add", [ay, b.add("Mul", [ah, half])])
    # anchors (N, 1) rows broadcast against data's (B, N, 1) columns
    d0, d1, d2, d3 = b.split(data, [1, 1, 1, 1], 2)
    std = [b.scalar(float(p.get("std%d" % i, 1.0)), dt) for i in range(4)]
    ox = b.add("Add", [b.add("Mul", [b.add("Mul", [d0, std[0]]), aw]), ax])
    oy = b.add("Add", [b.add("Mul", [b.add("Mul", [d1, std[1]]), ah]), ay])
    dw = b.add("Mul", [d2, std[2]])
    dh = b.add("Mul", [d3, std[3]])
    clip = float(p.get("clip", -1.0))
    if clip > 0:
        c = b.scalar(clip, dt)
        dw = b.add("Min", [dw, c])
        dh = b.add("Min", [dh, c])
    ow = b.add("Mul", [b.add("Mul", [b.add("Exp", [dw]), aw]), half])
    oh = b.add("Mul", [b.add("Mul", [b.add("Exp", [dh]), ah]), half])
    parts = [b.add("Sub", [ox, ow]), b.add("Sub", [oy, oh]),
             b.add("Add", [ox, ow]), b.add("Add", [oy, oh])]
    return b.add("Concat", parts, [n.out()], axis=2)


@register("_contrib_box_nms", "_contrib_box_non_maximum_suppression")
def box_nms(b, n):
    """ONNX NonMaxSuppression picks the kept boxes; they are gathered back into
    MXNet's layout: per batch, the kept rows by descending score, then -1 rows.
    MXNet's rules around it are built from plain ops: rows whose class is
    ``background_id`` are dropped, only the ``topk`` best candidates enter the
    suppression, and with ``id_index`` (without ``force_suppress``) boxes of
    different classes never suppress each other (onnxruntime's NMS has one
    class axis per score column, not a class per box)."""
    p = n.p
    if p.get("in_format") != p.get("out_format"):
        raise n.unsupported("in_format != out_format")
    shape = n.ishape[0]
    N, K = shape[-2], shape[-1]
    B = int(np.prod(shape[:-2])) if len(shape) > 2 else 1
    dt = n.idtype[0]
    data = b.reshape(n.x[0], [B, N, K])
    if dt != np.float32:
        data = b.cast(data, np.float32)
    cs, si = int(p.get("coord_start", 2)), int(p.get("score_index", 1))
    center = p.get("in_format") == "center"
    boxes = b.slice(data, [cs], [cs + 4], [2])                            # (B, N, 4)
    scores = b.squeeze(b.slice(data, [si], [si + 1], [2]), [2])           # (B, N)
    dropped = b.const(np.array(-3.0e38, np.float32))
    # Boxes are moved apart by multiples of (extent of all boxes + 1) where MXNet
    # keeps them from interacting: boxes of different classes (with id_index and
    # without force_suppress), and boxes with a negative width or height, which
    # MXNet gives area 0 (they never suppress nor get suppressed) while ONNX
    # takes any two corners of a box. Each of those gets a place of its own.
    zero = b.const(np.array(0, np.float32))
    # NaN coordinates (a decoder's overflow) must not make the extent NaN
    finite = b.add("Where", [b.add("IsNaN", [boxes]), zero, boxes])
    extent = b.add("Sub", [b.reduce("ReduceMax", finite, None, False),
                           b.reduce("ReduceMin", finite, None, False)])
    step = b.add("Add", [extent, b.const(np.array(1, np.float32))])
    if center:
        w, h = b.slice(boxes, [2], [3], [2]), b.slice(boxes, [3], [4], [2])
    else:
        w = b.add("Sub", [b.slice(boxes, [2], [3], [2]), b.slice(boxes, [0], [1], [2])])
        h = b.add("Sub", [b.slice(boxes, [3], [4], [2]), b.slice(boxes, [1], [2], [2])])
    degenerate = b.add("Or", [b.add("Less", [w, zero]), b.add("Less", [h, zero])])  # (B, N, 1)
    shift = b.const(-(np.arange(N, dtype=np.float32) + 2).reshape(1, N, 1))
    shift = b.add("Where", [degenerate, shift, zero])
    id_index = int(p.get("id_index", -1))
    if id_index >= 0:
        ids = b.slice(data, [id_index], [id_index + 1], [2])              # (B, N, 1)
        background = b.add("Equal", [b.squeeze(ids, [2]), b.const(
            np.array(p.get("background_id", -1), np.float32))])
        scores = b.add("Where", [background, dropped, scores])
        if not p.get("force_suppress"):        # classes at 0..C steps, degenerate below
            shift = b.add("Where", [degenerate, shift, ids])
    shift = b.add("Mul", [shift, step])
    if center:        # move the centres, keep the sizes
        shift = b.add("Mul", [shift, b.const(np.array([1, 1, 0, 0], np.float32))])
    boxes = b.add("Add", [boxes, shift])
    topk = int(p.get("topk", -1))
    k = min(topk, N) if topk > 0 else N
    if k < N:       # MXNet suppresses among the k best candidates only
        kth = b.slice(b.add("TopK", [scores, b.i64([k])], n_out=2, axis=1)[0],
                      [k - 1], [k], [1])                                # (B, 1)
        chosen = b.add("GreaterOrEqual", [scores, kth])
        scores = b.add("Where", [chosen, scores, dropped])
    keep = b.add("NonMaxSuppression", [
        boxes, b.unsqueeze(scores, [1]), b.i64([k]),
        b.const(np.array([p.get("overlap_thresh", 0.5)], np.float32)),
        b.const(np.array([p.get("valid_thresh", 0.0)], np.float32))],
        center_point_box=1 if center else 0)
    batch = b.slice(keep, [0], [1], [1])                       # (S, 1)
    box = b.slice(keep, [2], [3], [1])
    rows = b.add("GatherND", [data, b.add("Concat", [batch, box], axis=1)])     # (S, K)
    # each kept row's slot: how many earlier kept rows share its batch
    same = b.cast(b.add("Equal", [batch, b.const(np.arange(B, dtype=np.int64).reshape(1, B))]),
                  np.int64)                                     # (S, B)
    slot = b.add("Sub", [b.add("CumSum", [same, b.const(np.array(0, np.int64))]), same])
    slot = b.reduce("ReduceSum", b.add("Mul", [slot, same]), [1], True)       # (S, 1)
    where = b.add("Concat", [batch, slot], axis=1)
    fill = b.const(np.full((B, N, K), -1, np.float32))
    out = b.add("ScatterND", [fill, where, rows])
    if dt != np.float32:
        out = b.cast(out, dt)
    return [b.reshape(out, list(shape), [n.out()])]
