"""Translations of shape and indexing ops: reshape, transpose, slice, split,
concat, tile, broadcast, take, pad, sort, constant fills and random draws."""
from __future__ import annotations

import numpy as np

from ._graph import INT64_MAX, INT64_MIN
from ._registry import register


# ---- Reshape ------------------------------------------------------------

def _reshape_plan(spec, ndim, reverse):
    """MXNet's reshape codes (0 copy, -1 infer, -2 copy the rest, -3 merge two,
    -4 split one) as a list of output dims, each ('const', v), ('dim', i),
    ('prod', i, j), ('div', i, v) or ('infer',), over the input dims."""
    spec = list(spec)
    dims = list(range(ndim))
    if reverse:
        spec = spec[::-1]
        dims = dims[::-1]
    out = []
    i = 0
    k = 0
    while k < len(spec):
        s = spec[k]
        if s > 0:
            out.append(("const", s))
            i += 1
        elif s == 0:
            out.append(("dim", dims[i]))
            i += 1
        elif s == -1:
            out.append(("infer",))
            i += 1
        elif s == -2:
            out.extend(("dim", d) for d in dims[i:])
            i = len(dims)
        elif s == -3:
            out.append(("prod", dims[i], dims[i + 1]))
            i += 2
        elif s == -4:
            a, c = spec[k + 1], spec[k + 2]
            if reverse:
                a, c = c, a
            d = dims[i]
            if a == -1:
                part = [("div", d, c), ("const", c)]
            elif c == -1:
                part = [("const", a), ("div", d, a)]
            else:
                part = [("const", a), ("const", c)]
            out.extend(part[::-1] if reverse else part)
            i += 1
            k += 2
        k += 1
    return out[::-1] if reverse else out


def _dynamic_shape(b, x, plan):
    shape = b.add("Shape", [x])
    parts = []
    for item in plan:
        if item[0] == "const":
            parts.append(b.i64([item[1]]))
        elif item[0] == "infer":
            parts.append(b.i64([-1]))
        elif item[0] == "dim":
            parts.append(b.add("Gather", [shape, b.i64([item[1]])], axis=0))
        elif item[0] == "prod":
            d0 = b.add("Gather", [shape, b.i64([item[1]])], axis=0)
            d1 = b.add("Gather", [shape, b.i64([item[2]])], axis=0)
            parts.append(b.add("Mul", [d0, d1]))
        else:
            d = b.add("Gather", [shape, b.i64([item[1]])], axis=0)
            parts.append(b.add("Div", [d, b.i64([item[2]])]))
    return b.add("Concat", parts, axis=0)


@register("Reshape")
def reshape(b, n):
    x = n.x[0]
    if not b.dynamic:
        return b.reshape(x, list(n.oshape[0]), [n.out()])
    spec = n.p.get("shape") or ()
    if not spec:
        return b.reshape(x, list(n.oshape[0]), [n.out()])
    plan = _reshape_plan(spec, len(n.ishape[0]), bool(n.p.get("reverse")))
    return b.add("Reshape", [x, _dynamic_shape(b, x, plan)], [n.out()])


@register("reshape_like")
def reshape_like(b, n):
    p = n.p
    if b.dynamic and p.get("lhs_begin") is None and p.get("rhs_begin") is None \
            and p.get("lhs_end") is None and p.get("rhs_end") is None:
        return b.add("Reshape", [n.x[0], b.add("Shape", [n.x[1]])], [n.out()])
    return b.reshape(n.x[0], list(n.oshape[0]), [n.out()])


@register("transpose")
def transpose(b, n):
    axes = n.p.get("axes") or ()
    ndim = len(n.ishape[0])
    perm = [int(a) % ndim for a in axes] if axes else list(range(ndim))[::-1]
    return b.add("Transpose", [n.x[0]], [n.out()], perm=perm)


@register("SwapAxis")
def swap_axis(b, n):
    ndim = len(n.ishape[0])
    perm = list(range(ndim))
    d1, d2 = int(n.p.get("dim1", 0)) % ndim, int(n.p.get("dim2", 0)) % ndim
    perm[d1], perm[d2] = perm[d2], perm[d1]
    return b.add("Transpose", [n.x[0]], [n.out()], perm=perm)


@register("expand_dims")
def expand_dims(b, n):
    ndim = len(n.oshape[0])
    return b.unsqueeze(n.x[0], [int(n.p["axis"]) % ndim], [n.out()])


@register("squeeze")
def squeeze(b, n):
    axis = n.p.get("axis")
    ishape = n.ishape[0]
    if axis is None or axis == ():
        axes = [i for i, d in enumerate(ishape) if d == 1]
    else:
        axes = [int(axis)] if isinstance(axis, (int, np.integer)) else list(axis)
        axes = sorted(a % len(ishape) for a in axes)
    if len(axes) == len(ishape):          # MXNet keeps one dim: shape (1,)
        return b.reshape(n.x[0], [1], [n.out()])
    return b.squeeze(n.x[0], axes, [n.out()])


@register("Concat", "concat", "_rnn_param_concat")
def concat(b, n):
    ndim = len(n.ishape[0])
    return b.add("Concat", list(n.x), [n.out()], axis=int(n.p.get("dim", 1)) % ndim)


@register("stack")
def stack(b, n):
    ndim = len(n.oshape[0])
    axis = int(n.p.get("axis", 0)) % ndim
    parts = [b.unsqueeze(x, [axis]) for x in n.x]
    return b.add("Concat", parts, [n.out()], axis=axis)


@register("slice", "crop")
def slice_op(b, n):
    begin, end = list(n.p["begin"]), list(n.p["end"])
    step = list(n.p.get("step") or ())
    starts, ends, axes, steps = [], [], [], []
    for i, beg in enumerate(begin):
        st = step[i] if i < len(step) and step[i] is not None else 1
        e = end[i] if i < len(end) else None
        if beg is None:
            beg = 0 if st > 0 else INT64_MAX
        if e is None:
            e = INT64_MAX if st > 0 else INT64_MIN
        starts.append(beg)
        ends.append(e)
        axes.append(i)
        steps.append(st)
    return b.slice(n.x[0], starts, ends, axes, steps, [n.out()])


@register("Crop")
def crop(b, n):
    """The legacy NCHW Crop: a Slice of axes 2 and 3, to h_w or to the second
    input's height and width (read at run time when the export is dynamic)."""
    d, o = n.ishape[0], n.oshape[0]
    if n.p.get("center_crop"):
        y, x = (d[2] - o[2]) // 2, (d[3] - o[3]) // 2
    else:
        y, x = (tuple(n.p.get("offset") or ()) + (0, 0))[:2]
    if len(n.x) == 2 and b.dynamic:
        ends = b.add("Add", [b.i64([y, x]), b.shape_of(n.x[1], 2, 4)])
        return b.add("Slice", [n.x[0], b.i64([y, x]), ends, b.i64([2, 3])], [n.out()])
    return b.slice(n.x[0], [y, x], [y + o[2], x + o[3]], [2, 3], None, [n.out()])


@register("slice_axis")
def slice_axis(b, n):
    ndim = len(n.ishape[0])
    axis = int(n.p["axis"]) % ndim
    beg = int(n.p.get("begin") or 0)
    end = n.p.get("end")
    end = INT64_MAX if end is None else int(end)
    return b.slice(n.x[0], [beg], [end], [axis], None, [n.out()])


@register("slice_like")
def slice_like(b, n):
    ndim = len(n.ishape[0])
    axes = n.p.get("axes") or ()
    axes = [int(a) % ndim for a in axes] if axes else list(range(ndim))
    ends = [n.oshape[0][a] for a in axes]
    return b.slice(n.x[0], [0] * len(axes), ends, axes, None, [n.out()])


def _split_outputs(b, n, sizes, axis, squeeze_axis):
    outs = [n.out(i) for i in range(len(sizes))]
    if squeeze_axis:
        parts = b.split(n.x[0], sizes, axis)
        parts = [parts] if isinstance(parts, str) else parts
        return [b.squeeze(t, [axis], [o]) for t, o in zip(parts, outs)]
    r = b.split(n.x[0], sizes, axis, outs)
    return [r] if isinstance(r, str) else r


@register("SliceChannel", "split")
def slice_channel(b, n):
    ndim = len(n.ishape[0])
    axis = int(n.p.get("axis", 1)) % ndim
    k = int(n.p["num_outputs"])
    d = n.ishape[0][axis]
    return _split_outputs(b, n, [d // k] * k, axis, bool(n.p.get("squeeze_axis")))


@register("_split_v2")
def split_v2(b, n):
    ndim = len(n.ishape[0])
    axis = int(n.p.get("axis", 0)) % ndim
    d = n.ishape[0][axis]
    sections = int(n.p.get("sections") or 0)
    if sections > 0:
        sizes = [d // sections] * sections
    else:
        idx = [int(i) for i in n.p.get("indices") or ()]
        if not idx or idx[0] != 0:
            idx = [0] + idx
        bounds = idx + [d]
        sizes = [max(min(bounds[i + 1], d) - min(bounds[i], d), 0) for i in range(len(idx))]
    return _split_outputs(b, n, sizes, axis, bool(n.p.get("squeeze_axis")))


@register("tile")
def tile(b, n):
    reps = [int(r) for r in n.p["reps"]]
    x = n.x[0]
    ndim = len(n.ishape[0])
    if len(reps) < ndim:
        reps = [1] * (ndim - len(reps)) + reps
    elif len(reps) > ndim:
        x = b.reshape(x, [1] * (len(reps) - ndim) + list(n.ishape[0]))
    return b.add("Tile", [x, b.i64(reps)], [n.out()])


@register("repeat")
def repeat(b, n):
    r = int(n.p["repeats"])
    axis = n.p.get("axis")
    x = n.x[0]
    shape = list(n.ishape[0])
    if axis is None:
        x = b.reshape(x, [-1])
        shape = [int(np.prod(shape))]
        axis = 0
    axis = int(axis) % len(shape)
    u = b.unsqueeze(x, [axis + 1])
    reps = [1] * (len(shape) + 1)
    reps[axis + 1] = r
    t = b.add("Tile", [u, b.i64(reps)])
    return b.reshape(t, list(n.oshape[0]), [n.out()])


@register("reverse", "flip")
def reverse(b, n):
    axis = n.p["axis"]
    ndim = len(n.ishape[0])
    axes = [int(axis)] if isinstance(axis, (int, np.integer)) else [int(a) for a in axis]
    axes = [a % ndim for a in axes]
    k = len(axes)
    return b.slice(n.x[0], [-1] * k, [INT64_MIN] * k, axes, [-1] * k, [n.out()])


@register("broadcast_to", "broadcast_like", "broadcast_axis", "broadcast_axes")
def broadcast_to(b, n):
    return b.add("Expand", [n.x[0], b.i64(list(n.oshape[0]))], [n.out()])


@register("take")
def take(b, n):
    a, idx = n.x[:2]
    ndim = len(n.ishape[0])
    axis = int(n.p.get("axis", 0)) % ndim
    d = n.ishape[0][axis]
    mode = n.p.get("mode", "clip")
    idx = b.cast(idx, np.int64)
    if mode == "clip":
        idx = b.add("Clip", [idx, b.scalar(0, np.int64), b.scalar(d - 1, np.int64)])
    elif mode == "wrap":
        idx = b.add("Mod", [idx, b.scalar(d, np.int64)], fmod=0)
    return b.add("Gather", [a, idx], [n.out()], axis=axis)


@register("gather_nd")
def gather_nd(b, n):
    k = len(n.ishape[1])
    idx = b.cast(n.x[1], np.int64)
    idx = b.add("Transpose", [idx], perm=list(range(1, k)) + [0])
    return b.add("GatherND", [n.x[0], idx], [n.out()])


@register("one_hot")
def one_hot(b, n):
    depth = int(n.p["depth"])
    dt = n.odtype[0]
    idx = b.cast(n.x[0], np.int64)
    # MXNet leaves rows of negative indices all off; ONNX would count them from the end
    neg = b.add("Less", [idx, b.scalar(0, np.int64)])
    idx = b.add("Where", [neg, b.scalar(depth, np.int64), idx])
    values = b.const(np.array([n.p.get("off_value", 0.0), n.p.get("on_value", 1.0)]).astype(dt))
    return b.add("OneHot", [idx, b.i64([depth]), values], [n.out()], axis=-1)


@register("Pad", "pad")
def pad(b, n):
    mode = n.p.get("mode", "constant")
    width = [int(w) for w in n.p["pad_width"]]
    begins, ends = width[0::2], width[1::2]
    ins = [n.x[0], b.i64(begins + ends)]
    if mode == "constant":
        ins.append(b.scalar(n.p.get("constant_value", 0.0), n.idtype[0]))
    return b.add("Pad", ins, [n.out()], mode=mode)


@register("depth_to_space")
def depth_to_space(b, n):
    return b.add("DepthToSpace", [n.x[0]], [n.out()], blocksize=int(n.p["block_size"]),
                 mode="DCR")


@register("space_to_depth")
def space_to_depth(b, n):
    return b.add("SpaceToDepth", [n.x[0]], [n.out()], blocksize=int(n.p["block_size"]))


@register("shape_array")
def shape_array(b, n):
    n.odtype[0] = np.dtype(np.int64)     # MXNet's shape_array is int64
    return b.add("Shape", [n.x[0]], [n.out()])


@register("size_array")
def size_array(b, n):
    n.odtype[0] = np.dtype(np.int64)
    return b.reshape(b.add("Size", [n.x[0]]), [1], [n.out()])


def _constant(b, n, value):
    arr = np.full(n.oshape[0], value, dtype=n.odtype[0])
    t = b.numpy_helper.from_array(arr)
    return b.add("Constant", [], [n.out()], value=t)


register("_zeros", "zeros")(lambda b, n: _constant(b, n, 0))
register("_ones", "ones")(lambda b, n: _constant(b, n, 1))
register("_full")(lambda b, n: _constant(b, n, n.p["value"]))


def _fill_like(b, n, value):
    t = b.numpy_helper.from_array(np.array([value], dtype=n.odtype[0]))
    return b.add("ConstantOfShape", [b.add("Shape", [n.x[0]])], [n.out()], value=t)


register("zeros_like")(lambda b, n: _fill_like(b, n, 0))
register("ones_like")(lambda b, n: _fill_like(b, n, 1))


@register("_arange")
def arange(b, n):
    p = n.p
    start = float(p.get("start", 0))
    stop = p.get("stop")
    step = float(p.get("step", 1))
    if stop is None:
        start, stop = 0.0, start
    count = n.oshape[0][0] // int(p.get("repeat", 1))
    vals = start + step * np.arange(count, dtype=np.float64)
    vals = np.repeat(vals, int(p.get("repeat", 1))).astype(n.odtype[0])
    return b.add("Constant", [], [n.out()], value=b.numpy_helper.from_array(vals))


@register("_contrib_arange_like")
def arange_like(b, n):
    p = n.p
    start, step = float(p.get("start", 0)), float(p.get("step", 1))
    rep = int(p.get("repeat", 1))
    shape = n.oshape[0]
    size = int(np.prod(shape))
    vals = np.repeat(start + step * np.arange(-(-size // rep), dtype=np.float64), rep)[:size]
    vals = vals.reshape(shape).astype(n.odtype[0])
    return b.add("Constant", [], [n.out()], value=b.numpy_helper.from_array(vals))


def _topk_outputs(b, n, x, k, axis, largest):
    vals, idx = b.add("TopK", [x, b.i64([k])], n_out=2, axis=axis, largest=int(largest),
                      sorted=1)
    return vals, idx


@register("topk")
def topk(b, n):
    p = n.p
    ndim = len(n.ishape[0])
    axis = p.get("axis", -1)
    x = n.x[0]
    if axis is None:
        x = b.reshape(x, [-1])
        axis = 0
        ndim = 1
    axis = int(axis) % ndim
    d = n.ishape[0][axis] if p.get("axis", -1) is not None else int(np.prod(n.ishape[0]))
    k = int(p.get("k", 1))
    k = d if k <= 0 else min(k, d)
    vals, idx = _topk_outputs(b, n, x, k, axis, not p.get("is_ascend", False))
    ret = p.get("ret_typ", "indices")
    # MXNet: values keep the input's dtype, indices take ``dtype``
    idx_dt = np.dtype(p.get("dtype") or np.float32)
    n.odtype[:] = {"value": [n.idtype[0]], "indices": [idx_dt], "mask": [n.idtype[0]],
                   "both": [n.idtype[0], idx_dt]}.get(ret, n.odtype)[:len(n.odtype)]
    if ret == "value":
        return [b.add("Identity", [vals], [n.out()])]
    if ret == "indices":
        return [b.cast(idx, n.odtype[0], [n.out()])]
    if ret == "both":
        return [b.add("Identity", [vals], [n.out(0)]), b.cast(idx, n.odtype[1], [n.out(1)])]
    if ret == "mask":
        zeros = b.add("ConstantOfShape", [b.add("Shape", [x])],
                      value=b.numpy_helper.from_array(np.zeros((1,), n.odtype[0])))
        ones = b.add("ConstantOfShape", [b.add("Shape", [idx])],
                     value=b.numpy_helper.from_array(np.ones((1,), n.odtype[0])))
        return [b.add("ScatterElements", [zeros, idx, ones], [n.out()], axis=axis)]
    raise n.unsupported("ret_typ=%s" % ret)


@register("argsort")
def argsort(b, n):
    ndim = len(n.ishape[0])
    axis = n.p.get("axis", -1)
    x = n.x[0]
    if axis is None:
        x = b.reshape(x, [-1])
        axis, d = 0, int(np.prod(n.ishape[0]))
    else:
        axis = int(axis) % ndim
        d = n.ishape[0][axis]
    _, idx = _topk_outputs(b, n, x, d, axis, not n.p.get("is_ascend", True))
    return b.cast(idx, n.odtype[0], [n.out()])


@register("sort")
def sort(b, n):
    ndim = len(n.ishape[0])
    axis = int(n.p.get("axis", -1)) % ndim
    vals, _ = _topk_outputs(b, n, n.x[0], n.ishape[0][axis], axis,
                            not n.p.get("is_ascend", True))
    return b.add("Identity", [vals], [n.out()])


@register("SequenceMask")
def sequence_mask(b, n):
    x = n.x[0]
    if not n.p.get("use_sequence_length"):
        return b.add("Identity", [x], [n.out()])
    axis = int(n.p.get("axis", 0))
    ndim = len(n.ishape[0])
    t = n.ishape[0][axis]
    dt = n.idtype[0]
    length = b.cast(n.x[1], np.int64)
    if axis == 0:
        pos = b.const(np.arange(t, dtype=np.int64).reshape(t, 1))
        length = b.unsqueeze(length, [0])
    else:
        pos = b.const(np.arange(t, dtype=np.int64).reshape(1, t))
        length = b.unsqueeze(length, [1])
    mask = b.add("Less", [pos, length])
    if ndim > 2:
        mask = b.unsqueeze(mask, list(range(2, ndim)))
    value = b.scalar(n.p.get("value", 0.0), dt)
    return b.add("Where", [mask, x, value], [n.out()])


@register("SequenceReverse")
def sequence_reverse(b, n):
    x = n.x[0]
    if int(n.p.get("axis", 0)) != 0:
        raise n.unsupported("axis=%s (MXNet supports 0 only)" % n.p.get("axis"))
    if not n.p.get("use_sequence_length"):
        return b.slice(x, [-1], [INT64_MIN], [0], [-1], [n.out()])
    length = b.cast(n.x[1], np.int64)
    return b.add("ReverseSequence", [x, length], [n.out()], batch_axis=1, time_axis=0)


def _dtype_attr(b, n):
    return b.tensor_type(n.odtype[0])


@register("_random_uniform", "uniform", "random_uniform")
def random_uniform(b, n):
    return b.add("RandomUniform", [], [n.out()], low=float(n.p.get("low", 0.0)),
                 high=float(n.p.get("high", 1.0)), shape=list(n.oshape[0]),
                 dtype=_dtype_attr(b, n))


@register("_random_normal", "normal", "random_normal")
def random_normal(b, n):
    return b.add("RandomNormal", [], [n.out()], mean=float(n.p.get("loc", 0.0)),
                 scale=float(n.p.get("scale", 1.0)), shape=list(n.oshape[0]),
                 dtype=_dtype_attr(b, n))


@register("_random_uniform_like")
def random_uniform_like(b, n):
    return b.add("RandomUniformLike", [n.x[0]], [n.out()], low=float(n.p.get("low", 0.0)),
                 high=float(n.p.get("high", 1.0)), dtype=_dtype_attr(b, n))


@register("_random_normal_like")
def random_normal_like(b, n):
    return b.add("RandomNormalLike", [n.x[0]], [n.out()], mean=float(n.p.get("loc", 0.0)),
                 scale=float(n.p.get("scale", 1.0)), dtype=_dtype_attr(b, n))


@register("_sample_multinomial")
def sample_multinomial(b, n):
    if n.p.get("get_prob"):
        raise n.unsupported("get_prob=True")
    ishape = n.ishape[0]
    shape = n.p.get("shape") or ()
    shape = [shape] if isinstance(shape, int) else list(shape)
    count = int(np.prod(shape)) if shape else 1
    x = n.x[0]
    if len(ishape) == 1:
        x = b.unsqueeze(x, [0])
    logp = b.add("Log", [x])
    dt = n.odtype[0]
    if dt not in (np.int32, np.int64):
        s = b.add("Multinomial", [logp], sample_size=count, dtype=b.tensor_type(np.int64))
        s = b.cast(s, dt)
    else:
        s = b.add("Multinomial", [logp], sample_size=count, dtype=b.tensor_type(dt))
    return b.reshape(s, list(n.oshape[0]), [n.out()])
