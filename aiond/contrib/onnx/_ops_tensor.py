"""ONNX -> aiond translations of the tensor operators: shapes and layout,
indexing, reductions, padding and resizing, control flow and the rest."""
from __future__ import annotations

import math

import numpy as np

from ... import symbol as sym
from ._graph import Const
from ._ops import OPS, _BIG, _axes_arg, _norm_axis, op
from ._ops_nn import _pad_sym


# ------------------------------------------------------------ shape ops
@op("Shape")
def _shape_op(imp, node, ins, at):
    a, b = imp.shape(ins[0], "Shape's input")
    s, e = at.get("start", 0), at.get("end")
    return Const(np.array(a, np.int64)[s:e], np.array(b, np.int64)[s:e])


@op("Size")
def _size_op(imp, node, ins, at):
    a, b = imp.shape(ins[0], "Size's input")
    return Const(np.array(int(np.prod(a)), np.int64), np.array(int(np.prod(b)), np.int64))


def _shape_codes(imp, x, target, what):
    """A target shape (Const, maybe different under the two probes) as MXNet
    shape codes: entries that follow a dynamic axis of ``x`` become 0 (copy
    that axis) or -1 (infer)."""
    if target.static:
        return tuple(int(d) for d in target.a)
    xa, xb = imp.shapes(x)
    codes, inferred = [], 0
    for i, (p, q) in enumerate(zip(target.a.tolist(), target.b.tolist())):
        if p == q:
            codes.append(int(p))
        elif xa is not None and i < len(xa) and xa[i] == p and xb[i] == q:
            codes.append(0)
        else:
            codes.append(-1)
            inferred += 1
    if inferred > 1 or (inferred == 1 and -1 in target.a.tolist()):
        imp.fail("%s depends on dynamic input axes in a way aiond cannot express "
                 "(%s / %s under two sizes)" % (what, target.a.tolist(), target.b.tolist()))
    return tuple(codes)


@op("Reshape")
def _reshape(imp, node, ins, at):
    x = ins[0]
    if imp.opset < 5:
        shape = Const(np.array(at["shape"], np.int64))
    else:
        shape = ins[1]
        imp.const(shape, "Reshape's shape", static=False)
    if at.get("allowzero", 0) and 0 in shape.a.tolist():
        imp.unsupported("Reshape to a zero-size axis (allowzero=1)")
    return sym.reshape(imp.sym(x), shape=_shape_codes(imp, x, shape, "Reshape's shape"))


@op("Flatten")
def _flatten(imp, node, ins, at):
    x = ins[0]
    axis = at.get("axis", 1)
    X = imp.sym(x)
    if axis == 1:
        return sym.Flatten(X)
    r = imp.rank(x, "Flatten's input")
    axis = _norm_axis(axis, r)
    if axis == 0:
        return sym.reshape(X, shape=(1, -1))
    a, b = imp.shape(x)
    if a[axis:] == b[axis:]:
        return sym.reshape(X, shape=(-1, int(np.prod(a[axis:]))))
    if a[:axis] == b[:axis]:
        return sym.reshape(X, shape=(int(np.prod(a[:axis])), -1))
    imp.unsupported("Flatten at axis %d with dynamic axes on both sides" % axis)


@op("Transpose")
def _transpose(imp, node, ins, at):
    perm = at.get("perm")
    X = imp.sym(ins[0])
    if perm is None:
        return sym.transpose(X)
    return sym.transpose(X, axes=tuple(int(p) for p in perm))


@op("Concat")
def _concat(imp, node, ins, at):
    xs = [v for v in ins if v is not None]
    axis = at["axis"]
    if axis < 0:
        axis = _norm_axis(axis, imp.rank(next(v for v in xs if not isinstance(v, Const))))
    xs = [v for v in xs if not (isinstance(v, Const) and v.a.size == 0)]
    if len(xs) == 1:
        return xs[0]
    return sym.concat(*[imp.sym(v) for v in xs], dim=axis)


@op("Split")
def _split(imp, node, ins, at):
    x = ins[0]
    axis = at.get("axis", 0)
    nout = len(node.output)
    if imp.opset >= 13 and len(ins) > 1 and ins[1] is not None:
        sizes = imp.const(ins[1], "Split's split").tolist()
    else:
        sizes = at.get("split")
    X = imp.sym(x)
    if sizes is None:
        if "num_outputs" in at:
            nout = at["num_outputs"]
            dim = imp.static_shape(x, "Split's input")[axis]
            if dim % nout:      # opset 18: the last chunk is smaller
                step = -(-dim // nout)
                sizes = [step] * (nout - 1) + [dim - step * (nout - 1)]
        if sizes is None:
            out = sym.split(X, num_outputs=nout, axis=axis)
            return [out[i] for i in range(nout)] if nout > 1 else [out]
    outs, start = [], 0
    for s in sizes:
        outs.append(sym.slice_axis(X, axis=axis, begin=int(start), end=int(start + s)))
        start += s
    return outs


@op("Squeeze")
def _squeeze(imp, node, ins, at):
    axes = _axes_arg(imp, node, ins, at, 1, 13)
    X = imp.sym(ins[0])
    if axes is None:
        a, b = imp.shape(ins[0], "Squeeze's input (no axes given)")
        axes = [i for i, (p, q) in enumerate(zip(a, b)) if p == 1 and q == 1]
    return sym.squeeze(X, axis=tuple(axes)) if axes else X


@op("Unsqueeze")
def _unsqueeze(imp, node, ins, at):
    axes = _axes_arg(imp, node, ins, at, 1, 13)
    X = imp.sym(ins[0])
    if any(a < 0 for a in axes):
        r = imp.rank(ins[0], "Unsqueeze's input") + len(axes)
        axes = [_norm_axis(a, r) for a in axes]
    for a in sorted(axes):
        X = sym.expand_dims(X, axis=a)
    return X


def _end_rel(v_a, v_b, d_a, d_b, imp, what):
    """One slice bound under both probes as a single MXNet bound."""
    if v_a == v_b:
        return v_a
    if d_a - v_a == d_b - v_b:
        return (v_a - d_a) or None
    imp.fail("%s depends on dynamic input axes in a way aiond cannot express" % what)


@op("Slice")
def _slice(imp, node, ins, at):
    x = ins[0]
    if imp.opset < 10:
        starts = Const(np.array(at["starts"]))
        ends = Const(np.array(at["ends"]))
        axes = at.get("axes")
        steps = None
    else:
        starts, ends = ins[1], ins[2]
        imp.const(starts, "Slice's starts", static=False)
        imp.const(ends, "Slice's ends", static=False)
        axes = None if len(ins) < 4 or ins[3] is None else \
            imp.const(ins[3], "Slice's axes").tolist()
        steps = None if len(ins) < 5 or ins[4] is None else \
            imp.const(ins[4], "Slice's steps").tolist()
    n = len(starts.a)
    axes = list(range(n)) if axes is None else [int(a) for a in axes]
    steps = [1] * n if steps is None else [int(s) for s in steps]
    sa, sb = imp.partial_shapes(x)
    if sa is None or sb is None:
        imp.shape(x, "Slice's input")       # says it cannot
    r = len(sa)
    axes = [_norm_axis(a, r) for a in axes]
    bounds = []
    for i, ax in enumerate(axes):
        if sa[ax] is None or sb[ax] is None:
            # an axis whose length is a value (NMS rows): Python's bounds,
            # which slice_axis takes as they are
            st, en = int(starts.a[i]), int(ends.a[i])
            if steps[i] != 1 or not (starts.static and ends.static):
                imp.fail("Slice of an axis whose length is only known at run time "
                         "needs fixed starts and ends and step 1")
            bounds.append((ax, st, None if en >= _BIG or en > 2 ** 31 else en, 1))
            continue
        per = []
        for st, en, shp in ((starts.a, ends.a, sa), (starts.b, ends.b, sb)):
            b, e, s = slice(int(st[i]), int(max(min(en[i], _BIG), -_BIG)),
                            steps[i]).indices(shp[ax])
            per.append((b, e))
        (ba, ea), (bb, eb) = per
        b = _end_rel(ba, bb, sa[ax], sb[ax], imp, "Slice's starts")
        if steps[i] < 0 and ea == -1 and eb == -1:
            e = None        # down to index 0 inclusive
        else:
            e = _end_rel(ea, eb, sa[ax], sb[ax], imp, "Slice's ends")
        bounds.append((ax, b if b is not None else 0, e, steps[i]))
    X = imp.sym(x)
    if all(s == 1 for *_, s in bounds):
        for ax, b, e, _ in bounds:
            X = sym.slice_axis(X, axis=ax, begin=b, end=e)
        return X
    begin, end, step = [None] * r, [None] * r, [None] * r
    for ax, b, e, s in bounds:
        begin[ax], end[ax], step[ax] = b, e, s
    last = max(ax for ax, *_ in bounds) + 1
    return sym.slice(X, begin=tuple(begin[:last]), end=tuple(end[:last]),
                     step=tuple(1 if s is None else s for s in step[:last]))


@op("Gather")
def _gather(imp, node, ins, at):
    data, idx = ins
    axis = at.get("axis", 0)
    if axis < 0:
        axis = _norm_axis(axis, imp.rank(data, "Gather's data"))
    if isinstance(idx, Const) and idx.static and idx.a.ndim == 0 and \
            not isinstance(data, Const):
        i = int(idx.a)
        y = sym.slice_axis(imp.sym(data), axis=axis, begin=i, end=(i + 1) or None)
        return sym.squeeze(y, axis=axis)
    neg = isinstance(idx, Const) and (idx.a < 0).any()
    return sym.take(imp.sym(data), imp.sym(idx), axis=axis, mode="wrap" if neg else "clip")


def element_coords(idx, r, axis):
    """gather_nd's index tuples (r, *idx.shape) for GatherElements and
    ScatterElements: per element of ``idx``, its value along ``axis`` and
    the element's own coordinate elsewhere."""
    coords = []
    for ax in range(r):
        if ax == axis:
            coords.append(idx)
        else:
            coords.append(sym.broadcast_like(
                sym.reshape(sym.contrib.arange_like(idx, axis=ax),
                            shape=tuple(-1 if k == ax else 1 for k in range(r))), idx))
    return sym.stack(*coords, axis=0)


@op("GatherElements")
def _gather_elements(imp, node, ins, at):
    data, idx = imp.sym(ins[0]), imp.sym(ins[1])
    r = imp.rank(ins[0], "GatherElements' data")
    axis = _norm_axis(at.get("axis", 0), r)
    return sym.gather_nd(data, element_coords(idx, r, axis))


@op("GatherND")
def _gather_nd(imp, node, ins, at):
    if at.get("batch_dims", 0):
        imp.unsupported("GatherND with batch_dims")
    r = imp.rank(ins[1], "GatherND's indices")
    # MXNet's gather_nd takes the index tuple on the first axis, ONNX on the last
    idx = sym.transpose(imp.sym(ins[1]), axes=(r - 1,) + tuple(range(r - 1)))
    return sym.gather_nd(imp.sym(ins[0]), idx)


@op("ScatterND")
def _scatter_nd(imp, node, ins, at):
    data, idx, upd = ins
    red = at.get("reduction", "none")
    if red not in ("none", "add"):
        imp.unsupported("ScatterND with reduction=%r (aiond imports 'none' and 'add')" % red)
    shape = imp.static_shape(data, "ScatterND's data")
    r = imp.rank(idx, "ScatterND's indices")
    # MXNet takes the index tuple on the first axis, ONNX on the last
    I = sym.transpose(sym.Cast(imp.sym(idx), dtype="int64"), axes=(r - 1,) + tuple(range(r - 1)))
    return scatter_into(imp.sym(data), I, imp.sym(upd), shape, red)


def scatter_into(D, I, U, shape, reduction):
    """``D`` with ``U``'s rows written (or added) at gather_nd index tuples ``I``."""
    if reduction == "add":      # gather_nd's gradient sums rows sent to one place
        return sym.broadcast_add(D, sym._internal._backward_gather_nd(U, I, shape=shape))
    hit = sym.scatter_nd(sym.ones_like(U), I, shape=shape)
    return sym.where(hit, sym.scatter_nd(U, I, shape=shape), D)


@op("Expand")
def _expand(imp, node, ins, at):
    x, shape = ins
    imp.const(shape, "Expand's shape", static=False)
    xa, xb = imp.shape(x, "Expand's input")
    ta = np.broadcast_shapes(xa, tuple(shape.a.tolist()))
    tb = np.broadcast_shapes(xb, tuple(shape.b.tolist()))
    X = imp.sym(x)
    if ta == xa and tb == xb:
        return X
    for _ in range(len(ta) - len(xa)):
        X = sym.expand_dims(X, axis=0)
    xa = (1,) * (len(ta) - len(xa)) + tuple(xa)
    xb = (1,) * (len(tb) - len(xb)) + tuple(xb)
    codes, likes = [], []
    for i, (p, q, dp, dq) in enumerate(zip(ta, tb, xa, xb)):
        if p == dp and q == dq:
            codes.append(0)     # broadcast_to: 0 keeps the input's axis
        elif p == q:
            codes.append(int(p))
        else:
            # the size of another tensor's dynamic axis: broadcast like it
            ref = imp.dim_ref(p, q) if dp == dq == 1 else None
            if ref is None:
                imp.fail("Expand's shape depends on a dynamic axis aiond cannot trace "
                         "to an input")
            codes.append(0)
            likes.append((i, ref))
    if any(c != 0 for c in codes):
        X = sym.broadcast_to(X, shape=tuple(codes))
    for i, (var, k) in likes:
        X = sym.broadcast_like(X, var, lhs_axes=(i,), rhs_axes=(k,))
    return X


@op("Tile")
def _tile(imp, node, ins, at):
    reps = imp.const(ins[1], "Tile's repeats").tolist()
    return sym.tile(imp.sym(ins[0]), reps=tuple(int(r) for r in reps))


@op("Where")
def _where(imp, node, ins, at):
    c, x, y = ins
    sc, sx, sy = (imp.shapes(v)[0] for v in ins)
    C, X, Y = imp.sym(c), imp.sym(x), imp.sym(y)
    if sc is not None and sc == sx == sy:
        return sym.where(C, X, Y)
    # broadcast all three to the common shape (zeros: an x of -inf stays -inf),
    # in the values' dtype: ONNX's condition is bool (0/1), so casting it keeps
    # its truth, and a condition can pick int64 values
    dx = imp.dtype(x)
    if dx is not None:
        C = sym.cast(C, dtype=dx)
    z = sym.broadcast_add(sym.broadcast_add(sym.zeros_like(C), sym.zeros_like(X)),
                          sym.zeros_like(Y))
    return sym.where(sym.broadcast_add(C, z), sym.broadcast_add(X, z),
                     sym.broadcast_add(Y, z))


@op("ConstantOfShape")
def _constant_of_shape(imp, node, ins, at):
    imp.fail("ConstantOfShape's shape depends on a dynamic input axis")


@op("Range")
def _range(imp, node, ins, at):
    imp.unsupported("Range over values computed from the model's inputs")


# ------------------------------------------------------------ reductions
def _reduce(fn, since=18):
    def tr(imp, node, ins, at):
        axes = _axes_arg(imp, node, ins, at, 1, 13 if node.op_type == "ReduceSum" else since)
        keep = bool(at.get("keepdims", 1))
        X = imp.sym(ins[0])
        if axes is None and at.get("noop_with_empty_axes", 0):
            return X
        if axes is not None and not axes:       # an empty axes input: as none given
            if at.get("noop_with_empty_axes", 0):
                return X
            axes = None
        ax = None if axes is None else tuple(axes)
        return fn(X, ax, keep)
    return tr


def _kw(ax, keep):
    return {"keepdims": keep} if ax is None else {"axis": ax, "keepdims": keep}


OPS["ReduceMean"] = _reduce(lambda x, ax, k: sym.mean(x, **_kw(ax, k)))
OPS["ReduceSum"] = _reduce(lambda x, ax, k: sym.sum(x, **_kw(ax, k)))
OPS["ReduceMax"] = _reduce(lambda x, ax, k: sym.max(x, **_kw(ax, k)))
OPS["ReduceMin"] = _reduce(lambda x, ax, k: sym.min(x, **_kw(ax, k)))
OPS["ReduceProd"] = _reduce(lambda x, ax, k: sym.prod(x, **_kw(ax, k)))
OPS["ReduceSumSquare"] = _reduce(lambda x, ax, k: sym.sum(sym.square(x), **_kw(ax, k)))
OPS["ReduceL1"] = _reduce(lambda x, ax, k: sym.sum(sym.abs(x), **_kw(ax, k)))
OPS["ReduceL2"] = _reduce(lambda x, ax, k: sym.sqrt(sym.sum(sym.square(x), **_kw(ax, k))))
OPS["ReduceLogSum"] = _reduce(lambda x, ax, k: sym.log(sym.sum(x, **_kw(ax, k))))
OPS["ReduceLogSumExp"] = _reduce(lambda x, ax, k: sym.log(sym.sum(sym.exp(x), **_kw(ax, k))))


def _arg(fn):
    def tr(imp, node, ins, at):
        axis, keep = at.get("axis", 0), bool(at.get("keepdims", 1))
        X = imp.sym(ins[0])
        if at.get("select_last_index", 0):
            # the last of equal extremes: the first one on the flipped axis
            shp = imp.static_shape(ins[0], "%s's input" % node.op_type)
            n = shp[_norm_axis(axis, len(shp))]
            y = (n - 1) - fn(sym.flip(X, axis=axis), axis=axis, keepdims=keep)
        else:
            y = fn(X, axis=axis, keepdims=keep)
        return sym.Cast(y, dtype="int64")
    return tr


OPS["ArgMax"] = _arg(sym.argmax)
OPS["ArgMin"] = _arg(sym.argmin)


@op("TopK")
def _topk(imp, node, ins, at):
    k = at["k"] if imp.opset < 10 else int(imp.const(ins[1], "TopK's K").reshape(-1)[0])
    out = sym.topk(imp.sym(ins[0]), axis=at.get("axis", -1), k=k, ret_typ="both",
                   is_ascend=not at.get("largest", 1))
    return [out[0], sym.Cast(out[1], dtype="int64")]


@op("CumSum")
def _cumsum(imp, node, ins, at):
    axis = int(imp.const(ins[1], "CumSum's axis").reshape(()))
    X = imp.sym(ins[0])
    if at.get("reverse", 0):
        X = sym.flip(X, axis=axis)
    y = sym.np.cumsum(X.as_np_ndarray(), axis=axis).as_nd_ndarray()
    if at.get("exclusive", 0):
        y = y - X
    if at.get("reverse", 0):
        y = sym.flip(y, axis=axis)
    return y


# ------------------------------------------------------------------ misc
@op("Pad")
def _pad(imp, node, ins, at):
    mode = at.get("mode", "constant")
    if imp.opset < 11:
        pads = list(at.get("pads", at.get("paddings", [])))
        value = at.get("value", 0.0)
        axes = None
    else:
        pads = imp.const(ins[1], "Pad's pads").tolist()
        value = 0.0 if len(ins) < 3 or ins[2] is None else \
            imp.const(ins[2], "Pad's constant_value").item()
        axes = None if len(ins) < 4 or ins[3] is None else \
            imp.const(ins[3], "Pad's axes").tolist()
    r = imp.rank(ins[0], "Pad's input")
    if mode not in ("constant", "edge", "reflect"):
        imp.unsupported("Pad mode %r" % mode)
    n = len(pads) // 2
    axes = list(range(r)) if axes is None else [_norm_axis(a, r) for a in axes]
    beg, end = [0] * r, [0] * r
    for i, ax in enumerate(axes[:n]):
        beg[ax], end[ax] = int(pads[i]), int(pads[n + i])
    return _pad_sym(imp, imp.sym(ins[0]), beg, end, mode, value)


@op("Resize", "Upsample")
def _resize(imp, node, ins, at):
    x = ins[0]
    mode = at.get("mode", "nearest")
    s, s_b = imp.shape(x, "%s's input" % node.op_type)
    if s[1:] != s_b[1:]:
        imp.unsupported("%s of an image whose size depends on a dynamic axis" % node.op_type)
    if len(s) != 4:
        imp.unsupported("%s of a %d-d tensor (aiond resizes NCHW images)"
                        % (node.op_type, len(s)))
    scales = sizes = None
    if node.op_type == "Upsample" and imp.opset < 9:
        scales = list(at["scales"])
    elif node.op_type == "Upsample" or imp.opset < 11:
        scales = imp.const(ins[1], "the scales").tolist()
    else:
        if len(ins) > 3 and ins[3] is not None:
            sizes = imp.const(ins[3], "Resize's sizes").tolist()
        if len(ins) > 2 and ins[2] is not None and \
                imp.const(ins[2], "Resize's scales").size:
            scales = imp.const(ins[2], "Resize's scales").tolist()
    if at.get("axes") is not None:
        imp.unsupported("Resize with axes")
    if at.get("antialias", 0):
        imp.unsupported("Resize with antialias")
    if sizes is None and scales is None:
        imp.fail("Resize needs scales or sizes")
    if sizes is None:
        if scales[0] != 1 or scales[1] != 1:
            imp.unsupported("resizing the batch or channel axis")
        sizes = [s[0], s[1], int(math.floor(s[2] * scales[2])), int(math.floor(s[3] * scales[3]))]
    elif sizes[:2] != list(s[:2]):
        imp.unsupported("resizing the batch or channel axis")
    ct = at.get("coordinate_transformation_mode", "half_pixel" if imp.opset >= 11
                else "asymmetric")
    nm = at.get("nearest_mode", "round_prefer_floor" if imp.opset >= 11 else "floor")
    X = imp.sym(x)
    if mode == "nearest":
        fh, fw = sizes[2] / s[2], sizes[3] / s[3]
        # UpSampling repeats each pixel: the source index is floor(x / scale),
        # which for an integer scale is asymmetric+floor, and half_pixel with
        # either rounding (x/s + 1/2s - 1/2 never falls on a half)
        same = (ct == "asymmetric" and nm == "floor") or \
            (ct in ("half_pixel", "pytorch_half_pixel") and
             nm in ("round_prefer_floor", "round_prefer_ceil"))
        if fh == fw and fh == int(fh) and fh >= 1 and same:
            return X if fh == 1 else sym.UpSampling(X, scale=int(fh), sample_type="nearest")
        imp.unsupported("nearest Resize by %s x %s with %s / %s (aiond: equal integer "
                        "factors, asymmetric+floor or half_pixel)" % (fh, fw, ct, nm))
    if mode in ("linear", "bilinear"):
        if scales is not None and any(s[i] * scales[i] != sizes[i] for i in (2, 3)):
            # ONNX maps coordinates with the given scale, BilinearResize2D
            # with the sizes' ratio: the same only when the scale hits a whole size
            imp.unsupported("linear Resize by scales %s giving fractional sizes"
                            % scales[2:])
        if ct not in ("align_corners", "half_pixel", "pytorch_half_pixel"):
            imp.unsupported("linear Resize with coordinate_transformation_mode=%r" % ct)
        return sym.contrib.BilinearResize2D(X, height=int(sizes[2]), width=int(sizes[3]),
                                            align_corners=ct == "align_corners")
    imp.unsupported("Resize mode %r" % mode)


@op("DepthToSpace")
def _d2s(imp, node, ins, at):
    bs = int(at["blocksize"])
    X = imp.sym(ins[0])
    if at.get("mode", "DCR") == "DCR":
        return sym.depth_to_space(X, block_size=bs)
    # CRD: channels are (C, bs, bs)
    y = sym.reshape(X, shape=(0, -4, -1, bs * bs, -2))
    y = sym.reshape(y, shape=(0, 0, -4, bs, bs, -2))
    y = sym.transpose(y, axes=(0, 1, 4, 2, 5, 3))
    y = sym.reshape(y, shape=(0, 0, -3, -3))
    return y


@op("SpaceToDepth")
def _s2d(imp, node, ins, at):
    return sym.space_to_depth(imp.sym(ins[0]), block_size=int(at["blocksize"]))


@op("Einsum")
def _einsum(imp, node, ins, at):
    xs = [imp.sym(v).as_np_ndarray() for v in ins]
    return sym.np.einsum(at["equation"].replace(" ", ""), *xs).as_nd_ndarray()


@op("Trilu")
def _trilu(imp, node, ins, at):
    k = 0 if len(ins) < 2 or ins[1] is None else int(imp.const(ins[1], "Trilu's k"))
    X = imp.sym(ins[0]).as_np_ndarray()
    y = sym.np.triu(X, k=k) if at.get("upper", 1) else sym.np.tril(X, k=k)
    return y.as_nd_ndarray()


@op("MaxRoiPool")
def _roipool(imp, node, ins, at):
    return sym.ROIPooling(imp.sym(ins[0]), imp.sym(ins[1]),
                          pooled_size=tuple(at["pooled_shape"]),
                          spatial_scale=at.get("spatial_scale", 1.0))


def _dtype_attr(imp, at, default="float32"):
    from ._graph import np_dtype
    return np_dtype(at["dtype"]).name if "dtype" in at else default


@op("RoiAlign")
def _roi_align(imp, node, ins, at):
    x, rois, idx = ins
    if at.get("mode", "avg") != "avg":
        imp.unsupported("RoiAlign with mode=%r (aiond imports 'avg', MXNet's ROIAlign)"
                        % at.get("mode"))
    ctm = at.get("coordinate_transformation_mode",
                 "half_pixel" if imp.opset >= 16 else "output_half_pixel")
    if ctm not in ("half_pixel", "output_half_pixel"):
        imp.unsupported("RoiAlign with coordinate_transformation_mode=%r" % ctm)
    dt = (imp.dtype(x) or np.dtype(np.float32)).name
    # MXNet's rois are (batch index, x1, y1, x2, y2) rows
    R = sym.concat(sym.reshape(sym.Cast(imp.sym(idx), dtype=dt), shape=(-1, 1)),
                   sym.Cast(imp.sym(rois), dtype=dt), dim=1)
    sr = int(at.get("sampling_ratio", 0))
    return sym.contrib.ROIAlign(
        imp.sym(x), R, pooled_size=(int(at.get("output_height", 1)),
                                    int(at.get("output_width", 1))),
        spatial_scale=float(at.get("spatial_scale", 1.0)), sample_ratio=sr if sr > 0 else -1,
        aligned=ctm == "half_pixel")


@op("RandomUniform", "RandomUniformLike")
def _rand_uniform(imp, node, ins, at):
    shape = tuple(at["shape"]) if node.op_type == "RandomUniform" else \
        imp.static_shape(ins[0], "RandomUniformLike's input")
    return sym.random.uniform(low=at.get("low", 0.0), high=at.get("high", 1.0), shape=shape,
                              dtype=_dtype_attr(imp, at))


@op("RandomNormal", "RandomNormalLike")
def _rand_normal(imp, node, ins, at):
    shape = tuple(at["shape"]) if node.op_type == "RandomNormal" else \
        imp.static_shape(ins[0], "RandomNormalLike's input")
    return sym.random.normal(loc=at.get("mean", 0.0), scale=at.get("scale", 1.0), shape=shape,
                             dtype=_dtype_attr(imp, at))

@op("If")
def _if(imp, node, ins, at):
    # a condition known at import time (shape checks exporters write) picks
    # its branch, which is inlined; one computed from the data is a sym.contrib.cond
    if not isinstance(ins[0], Const):
        from ._control import data_if
        return data_if(imp, node, ins[0], at)
    cond = imp.const(ins[0], "If's condition")
    return imp.inline(at["then_branch" if bool(np.asarray(cond).reshape(-1)[0])
                         else "else_branch"])


@op("OneHot")
def _one_hot(imp, node, ins, at):
    depth = int(imp.const(ins[1], "OneHot's depth").reshape(-1)[0])
    off, on = (float(v) for v in imp.const(ins[2], "OneHot's values").reshape(-1)[:2])
    idx = imp.sym(ins[0])
    idx = idx + (idx < 0) * depth       # ONNX counts negative indices from the end
    r = imp.rank(ins[0], "OneHot's indices")
    y = sym.one_hot(idx, depth=depth, on_value=on, off_value=off)
    axis = _norm_axis(at.get("axis", -1), r + 1)
    if axis != r:
        perm = list(range(r))
        perm.insert(axis, r)
        y = sym.transpose(y, axes=tuple(perm))
    return y


@op("Mod")
def _mod(imp, node, ins, at):
    a, b = imp.sym(ins[0]), imp.sym(ins[1])
    # C's fmod (sign of a; integer division truncates too), then for fmod=0
    # Python's % (sign of b): add b where the remainder's sign differs from b's
    r = sym.broadcast_sub(a, sym.broadcast_mul(b, sym.trunc(sym.broadcast_div(a, b))))
    if not at.get("fmod", 0):
        r = sym.broadcast_add(r, sym.broadcast_mul(b, sym.broadcast_mul(r, b) < 0))
    return r


@op("NonMaxSuppression")
def _nms(imp, node, ins, at):
    def opt(i, what):
        v = ins[i] if len(ins) > i else None
        if v is None:
            return None
        a = imp.const(v, "NonMaxSuppression's " + what).reshape(-1)
        return a[0].item() if a.size else None
    limit = opt(2, "max_output_boxes_per_class")
    iou = opt(3, "iou_threshold")
    score = opt(4, "score_threshold")
    center = int(at.get("center_point_box", 0))
    if center not in (0, 1):
        imp.fail("center_point_box must be 0 or 1, got %d" % center)
    # the number of rows is a value: later shapes are partly known (-1 rows)
    return sym._internal._onnx_non_max_suppression(
        imp.sym(ins[0]), imp.sym(ins[1]), max_output_boxes_per_class=int(limit or 0),
        iou_threshold=float(iou or 0.0), score_threshold=None if score is None else float(score),
        center_point_box=center)


@op("NonZero")
def _nonzero(imp, node, ins, at):
    # (nonzero elements, rank) rows from npx.nonzero; ONNX wants (rank, count)
    return sym.transpose(sym._internal._npx_nonzero(imp.sym(ins[0])))


@op("Compress")
def _compress(imp, node, ins, at):
    x, cond = ins
    axis = at.get("axis")
    X = imp.sym(x)
    if axis is None:
        X, axis = sym.reshape(X, shape=(-1,)), 0
    else:
        axis = _norm_axis(axis, imp.rank(x, "Compress's input"))
    n = imp.partial_shapes(cond)[0]
    d = imp.partial_shapes(x)[0] if at.get("axis") is not None else None
    if n is not None and n[0] is not None and d is not None and d[axis] is not None \
            and n[0] < d[axis]:
        X = sym.slice_axis(X, axis=axis, begin=0, end=n[0])     # a shorter condition
    return sym.contrib.boolean_mask(X, imp.sym(cond), axis=axis)


@op("IsNaN")
def _isnan(imp, node, ins, at):
    x = imp.sym(ins[0])
    return x != x


@op("IsInf")
def _isinf(imp, node, ins, at):
    x = imp.sym(ins[0])
    pos, neg = at.get("detect_positive", 1), at.get("detect_negative", 1)
    if pos and neg:
        return sym.abs(x) == float("inf")
    if pos:
        return x == float("inf")
    if neg:
        return x == float("-inf")
    return sym.zeros_like(x)


@op("Shrink")
def _shrink(imp, node, ins, at):
    x = imp.sym(ins[0])
    lambd, bias = at.get("lambd", 0.5), at.get("bias", 0.0)
    return (x < -lambd) * (x + bias) + (x > lambd) * (x - bias)


@op("MeanVarianceNormalization")
def _mvn(imp, node, ins, at):
    x = imp.sym(ins[0])
    axes = tuple(at.get("axes", [0, 2, 3]))
    d = sym.broadcast_sub(x, sym.mean(x, axis=axes, keepdims=True))
    return sym.broadcast_div(d, sym.sqrt(sym.mean(sym.square(d), axis=axes, keepdims=True)))


@op("GroupNormalization")
def _group_norm(imp, node, ins, at):
    x, scale, bias = ins[0], ins[1], ins[2]
    groups, eps = int(at["num_groups"]), at.get("epsilon", 1e-5)
    shp = imp.shape(x, "GroupNormalization's input")[0]
    c = shp[1]
    X = imp.sym(x)
    g = sym.reshape(X, shape=(0, groups, -1))
    d = sym.broadcast_sub(g, sym.mean(g, axis=2, keepdims=True))
    var = sym.mean(sym.square(d), axis=2, keepdims=True)
    y = sym.reshape_like(sym.broadcast_div(d, sym.sqrt(var + eps)), X)
    cshape = (1, c) + (1,) * (len(shp) - 2)
    sc, bi = imp.const(scale, "GroupNormalization's scale"), \
        imp.const(bias, "GroupNormalization's bias")
    if sc.size == groups and groups != c:      # opset 18: one scale per group
        sc, bi = np.repeat(sc, c // groups), np.repeat(bi, c // groups)
    sc = Const(sc.reshape(cshape))
    bi = Const(bi.reshape(cshape))
    return sym.broadcast_add(sym.broadcast_mul(y, imp.sym(sc)), imp.sym(bi))
