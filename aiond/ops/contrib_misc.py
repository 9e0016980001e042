"""Small MXNet 1.9.1 operators with no family of their own: softmin,
amp_cast, all_finite / multi_all_finite, rcbrt, batch_take, moments,
depth_to_space / space_to_depth, _split_v2 and, from ``mx.nd.contrib``:
div_sqrt_dim, quadratic, allclose, index_copy, index_array.

Semantics follow the MXNet sources named in each section (shapes, dtypes,
error checks, gradients)."""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError, ShapeError
from ._common import _axis, _n_inputs, _p_opt_int, _p_opt_shape, _prod
from ._grad import ignores_ograd, set_grads
from ._rules import fmt, reduce_axes, unary
from .elemwise import _make_unary
from ._nn_util import _errstate
from .softmax import _softmax_core, _softmax_params, _softmax_rule
from .registry import Param, p_bool, p_dtype, p_float, p_int, p_shape, register
from .registry import _lit, optional as _optional

_F16, _F32 = np.dtype(np.float16), np.dtype(np.float32)

# ------------------------------------------------------------- softmin
# src/operator/nn/softmax.cc: softmax of -data (same parameters, one input)


def _softmin_rule(attrs, shapes, dtypes):
    if attrs["use_length"]:
        raise OpError("softmin does not take a length input (use_length must be False)")
    return _softmax_rule(attrs, shapes, dtypes)


@register("softmin", params=_softmax_params(False), infer=_softmin_rule)
def softmin(xp, data, out, axis=-1, temperature=None, dtype=None, use_length=False):
    """softmin(data, axis=-1, temperature=None, dtype=None): softmax of -data."""
    xp.copyto(out, _softmax_core(xp, -data, axis % data.ndim, temperature), casting="unsafe")


def _softmin_grad(F, attrs, ins, outs, og):
    y, g = outs[0], og[0]
    gi = -(y * (g - F.sum(g * y, axis=attrs["axis"], keepdims=True)))
    t = attrs["temperature"]
    if t is not None and t != 1.0:
        gi = gi / t
    if gi.dtype != ins[0].dtype:
        gi = gi.astype(ins[0].dtype)
    return [gi]

# ------------------------------------------------------------- amp_cast
# src/operator/tensor/amp_cast.h: only float16/float32 inputs are cast


def _amp_cast_rule(attrs, shapes, dtypes):
    d = dtypes[0]
    return (shapes[0],), (attrs["dtype"] if d in (_F16, _F32) else d,)


@register("amp_cast", params=[Param("dtype", p_dtype, None, "Output data type.")],
          infer=_amp_cast_rule, elemwise=True)
def amp_cast(xp, data, out, dtype=None):
    """amp_cast(data, dtype): cast float16/float32 data to dtype; other dtypes pass."""
    xp.copyto(out, data, casting="unsafe")


def _amp_multicast_rule(attrs, shapes, dtypes):
    n = attrs["num_outputs"]
    _n_inputs(shapes, ["data%d" % i for i in range(n)], " (num_outputs)")
    floats = [d for d in dtypes if d in (_F16, _F32)]
    if attrs["cast_narrow"]:
        t = _F16 if _F16 in floats else _F32
    else:
        t = _F32 if _F32 in floats else (floats[0] if floats else None)
    return tuple(shapes), tuple(t if d in (_F16, _F32) else d for d in dtypes)


@register("amp_multicast", inputs=("*data",), variadic=True, params=[
    Param("num_outputs", p_int, None, "Number of input/output pairs to be casted to the "
          "widest type."),
    Param("cast_narrow", p_bool, False, "Whether to cast to the narrowest type")],
    infer=_amp_multicast_rule, num_outputs=lambda a: a["num_outputs"])
def amp_multicast(xp, *data, out, num_outputs, cast_narrow=False):
    """amp_multicast(*data, num_outputs, cast_narrow=False): cast the float16/
    float32 inputs to the widest (or narrowest) of their types."""
    for d, o in zip(data, out if isinstance(out, (list, tuple)) else [out]):
        xp.copyto(o, d, casting="unsafe")


def _amp_cast_grad(F, attrs, ins, outs, og):
    return [og[0].astype(ins[0].dtype) if og[0].dtype != ins[0].dtype else og[0]]


def _amp_multicast_grad(F, attrs, ins, outs, og):
    return [g.astype(x.dtype) if g.dtype != x.dtype else g for x, g in zip(ins, og)]

# ------------------------------------------------------ all_finite
# src/operator/contrib/all_finite.cc: a float32 (1,) flag


def _finite_rule(attrs, shapes, dtypes):
    return ((1,),), (_F32,)


def _all_finite_into(xp, arrays, out, init_output):
    # the verdict stays an array: on a GPU, reading it would stall the stream
    ok = True
    for a in arrays:
        ok = xp.logical_and(ok, xp.isfinite(a).all())
    if init_output:
        out[...] = ok
    else:
        out[...] = xp.where(ok, out, 0.0)


@register("all_finite", params=[Param("init_output", p_bool, True,
                                      "Initialize output to 1.")],
          infer=_finite_rule, mutates=())
def all_finite(xp, data, out, init_output=True):
    """all_finite(data, init_output=True): [1.] if every element is finite, else [0.]."""
    _all_finite_into(xp, [data], out, init_output)


def _multi_finite_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ["array%d" % i for i in range(attrs["num_arrays"])], " (num_arrays)")
    return ((1,),), (_F32,)


@register("multi_all_finite", inputs=("*data",), variadic=True, params=[
    Param("num_arrays", p_int, 1, "Number of arrays."),
    Param("init_output", p_bool, True, "Initialize output to 1.")], infer=_multi_finite_rule)
def multi_all_finite(xp, *data, out, num_arrays=1, init_output=True):
    """multi_all_finite(*data, num_arrays=1, init_output=True): [1.] if every
    element of every array is finite, else [0.]."""
    _all_finite_into(xp, data, out, init_output)

# ----------------------------------------------------------- rcbrt


def _rcbrt(xp, x, out):
    xp.cbrt(x, out=out)
    xp.reciprocal(out, out=out)


_make_unary("rcbrt", _rcbrt, "rcbrt(data): elementwise 1 / cbrt(data).")

# ------------------------------------------------------ batch_take
# src/operator/tensor/indexing_op.h: out[i] = a[i, clip(idx[i], 0, M-1)]


def _batch_take_rule(attrs, shapes, dtypes):
    a, idx = shapes
    if len(a) < 2 or _prod(a[:-1]) != _prod(idx):
        raise ShapeError("a %s must have as many rows as indices has elements (%s)"
                         % (fmt(a), fmt(idx)))
    return (tuple(idx),), (dtypes[0],)


@register("batch_take", inputs=("a", "indices"), infer=_batch_take_rule)
def batch_take(xp, a, indices, out):
    """batch_take(a, indices): a[i, indices[i]] for each row i (indices clipped)."""
    m = a.shape[-1]
    a2 = a.reshape(-1, m)
    j = xp.clip(indices.reshape(-1).astype(np.int64), 0, m - 1)
    out.reshape(-1)[...] = a2[xp.arange(a2.shape[0]), j]

# ---------------------------------------------------------- moments
# src/operator/nn/moments-inl.h: mean and (biased) variance over axes


def _moments_rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    axes = reduce_axes({"axis": attrs["axes"]}, len(d))
    if attrs["keepdims"]:
        o = tuple(1 if i in axes else n for i, n in enumerate(d))
    else:
        o = tuple(n for i, n in enumerate(d) if i not in axes) or (1,)
    return (o, o), (dtypes[0], dtypes[0])


@register("moments", params=[
    Param("axes", _p_opt_shape, None, "Array of ints. Axes along which to compute moments."),
    Param("keepdims", p_bool, False, "produce moments with the same dimensionality as input")],
    infer=_moments_rule, num_outputs=2, output_names=("mean", "var"))
def moments(xp, data, out, axes=None, keepdims=False):
    """moments(data, axes=None, keepdims=False): (mean, variance) over axes."""
    ax = reduce_axes({"axis": axes}, data.ndim)
    m = xp.mean(data, axis=ax, keepdims=True)
    v = xp.mean(xp.square(data - m), axis=ax, keepdims=True)
    out[0][...] = m.reshape(out[0].shape)
    out[1][...] = v.reshape(out[1].shape)


def _moments_grad(F, attrs, ins, outs, og):
    x = ins[0]
    ax = reduce_axes({"axis": attrs["axes"]}, x.ndim)
    kshape = tuple(1 if i in ax else n for i, n in enumerate(x.shape))
    n = _prod(x.shape) // max(_prod(kshape), 1)
    mean = outs[0].reshape(kshape)
    gm = og[0].reshape(kshape)
    gv = og[1].reshape(kshape)
    dx = F.broadcast_add(F.broadcast_mul(F.broadcast_sub(x, mean), gv * (2.0 / n)),
                         gm * (1.0 / n))
    return [dx]

# ---------------------------------------- depth_to_space / space_to_depth
# src/operator/tensor/matrix_op-inl.h (DepthToSpaceOpShape / SpaceToDepthOpShape)


def _d2s_rule(attrs, shapes, dtypes):
    d, b = tuple(shapes[0]), attrs["block_size"]
    if len(d) != 4:
        raise ShapeError("Operation Depth To Space requires exactly 4D tensor, got %s" % fmt(d))
    if b <= 0:
        raise OpError("block_size must be positive, got %d" % b)
    if d[1] % (b * b) != 0:
        raise ShapeError("Cannot perform Depth To Space operation on the specified tensor. "
                         "Dimension:1(depth dimension) should be a multiple of "
                         "'block_size * block_size', got %s" % fmt(d))
    if d[0] <= 0 or d[2] <= 0 or d[3] <= 0:
        raise ShapeError("Depth To Space needs non-empty batch and spatial dimensions, got %s"
                         % fmt(d))
    return ((d[0], d[1] // (b * b), d[2] * b, d[3] * b),), (dtypes[0],)


def _s2d_rule(attrs, shapes, dtypes):
    d, b = tuple(shapes[0]), attrs["block_size"]
    if len(d) != 4:
        raise ShapeError("Operation Space To Depth requires exactly 4D tensor, got %s" % fmt(d))
    if b <= 0:
        raise OpError("block_size must be positive, got %d" % b)
    if d[0] <= 0 or d[1] <= 0 or d[2] <= 0 or d[3] <= 0:
        raise ShapeError("Space To Depth needs a non-empty input, got %s" % fmt(d))
    if d[2] % b or d[3] % b:
        raise ShapeError("Cannot perform Space To Depth operation on the specified tensor. "
                         "Dimensions 2 and 3 should be multiples of 'block_size', got %s" % fmt(d))
    return ((d[0], d[1] * b * b, d[2] // b, d[3] // b),), (dtypes[0],)


def _d2s(xp, x, b):
    n, c, h, w = x.shape
    t = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return t.reshape(n, c // (b * b), h * b, w * b)


def _s2d(xp, x, b):
    n, c, h, w = x.shape
    t = x.reshape(n, c, h // b, b, w // b, b).transpose(0, 3, 5, 1, 2, 4)
    return t.reshape(n, c * b * b, h // b, w // b)


_BLOCK = [Param("block_size", p_int, None, "Blocks of [block_size. block_size] are moved")]


@register("depth_to_space", params=_BLOCK, infer=_d2s_rule)
def depth_to_space(xp, data, out, block_size):
    """depth_to_space(data, block_size): rearrange depth blocks into spatial blocks (NCHW)."""
    out[...] = _d2s(xp, data, block_size)


@register("space_to_depth", params=_BLOCK, infer=_s2d_rule)
def space_to_depth(xp, data, out, block_size):
    """space_to_depth(data, block_size): rearrange spatial blocks into depth (NCHW)."""
    out[...] = _s2d(xp, data, block_size)

# ------------------------------------------------------------ _split_v2
# src/operator/tensor/matrix_op-inl.h (SplitParam): indices start with 0


def _split_v2_bounds(attrs, n):
    sec = attrs["sections"]
    if sec > 0:
        if n % sec:
            raise ShapeError("the axis of length %d cannot be split into %d equal sections"
                             % (n, sec))
        step = n // sec
        starts = [i * step for i in range(sec)]
    else:
        starts = list(attrs["indices"])
    ends = starts[1:] + [n]
    for s, e in zip(starts, ends):
        if not 0 <= s <= e <= n:
            raise ShapeError("split indices %s are not increasing within the axis length %d"
                             % (tuple(attrs["indices"]), n))
    return list(zip(starts, ends))


def _split_v2_rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    ax = _axis(attrs["axis"], len(d))
    outs = []
    for s, e in _split_v2_bounds(attrs, d[ax]):
        o = d[:ax] + (e - s,) + d[ax + 1:]
        if attrs["squeeze_axis"]:
            if e - s != 1:
                raise ShapeError("squeeze_axis=True needs sections of length 1, got %d" % (e - s))
            o = d[:ax] + d[ax + 1:]
        outs.append(o)
    return tuple(outs), (dtypes[0],) * len(outs)


def _split_v2_n(attrs):
    return attrs["sections"] if attrs["sections"] > 0 else len(attrs["indices"])


@register("_split_v2", params=[
    Param("indices", p_shape, (), "Indices of splits. The elements should denote the "
          "boundaries of at which split is performed along the `axis`."),
    Param("axis", p_int, 0, "Axis along which to split."),
    Param("squeeze_axis", p_bool, False, "If true, removes the axis with length 1 from "
          "the shapes of the output arrays."),
    Param("sections", p_int, 0, "Number of sections if equally splitted. Default to 0 "
          "which means split by indices.")],
    infer=_split_v2_rule, num_outputs=_split_v2_n)
def _split_v2(xp, data, out, indices=(), axis=0, squeeze_axis=False, sections=0):
    """_split_v2(data, indices, axis=0, squeeze_axis=False, sections=0): the
    pieces of data between consecutive boundaries along axis."""
    ax = axis % data.ndim
    outs = out if isinstance(out, (list, tuple)) else [out]
    attrs = {"sections": sections, "indices": indices}
    for o, (s, e) in zip(outs, _split_v2_bounds(attrs, data.shape[ax])):
        sl = [slice(None)] * data.ndim
        sl[ax] = slice(s, e)
        o[...] = data[tuple(sl)].reshape(o.shape)


def _split_v2_grad(F, attrs, ins, outs, og):
    x = ins[0]
    ax = attrs["axis"] % x.ndim
    gs = []
    for g, o in zip(og, outs):
        if g is None:
            g = F.zeros_like(o)
        if attrs["squeeze_axis"]:
            g = F.expand_dims(g, axis=ax)
        gs.append(g)
    return [F.concat(*gs, dim=ax) if len(gs) > 1 else gs[0]]

# ------------------------------------------------------- contrib ops


@register("_contrib_div_sqrt_dim", infer=unary)
def _contrib_div_sqrt_dim(xp, data, out):
    """div_sqrt_dim(data): data / sqrt(data.shape[-1])."""
    xp.copyto(out, data / math.sqrt(data.shape[-1]), casting="unsafe")


def _div_sqrt_dim_grad(F, attrs, ins, outs, og):
    return [og[0] / math.sqrt(ins[0].shape[-1])]


_QUAD = [Param("a", p_float, 0.0, "Coefficient of the quadratic term in the quadratic function."),
         Param("b", p_float, 0.0, "Coefficient of the linear term in the quadratic function."),
         Param("c", p_float, 0.0, "Constant term in the quadratic function.")]


@register("_contrib_quadratic", params=_QUAD, infer=unary, elemwise=True)
def _contrib_quadratic(xp, data, out, a=0.0, b=0.0, c=0.0):
    """quadratic(data, a=0, b=0, c=0): a * data**2 + b * data + c."""
    t = out.dtype.type
    xp.copyto(out, t(a) * data * data + t(b) * data + t(c), casting="unsafe")


def _quadratic_grad(F, attrs, ins, outs, og):
    return [og[0] * (ins[0] * (2.0 * attrs["a"]) + attrs["b"])]


def _allclose_rule(attrs, shapes, dtypes):
    if tuple(shapes[0]) != tuple(shapes[1]):
        raise ShapeError("a %s and b %s must have the same shape"
                         % (fmt(shapes[0]), fmt(shapes[1])))
    return ((),), (np.dtype(np.uint8),)


@register("_contrib_allclose", inputs=("a", "b"), params=[
    Param("rtol", p_float, 1e-05, "Relative tolerance."),
    Param("atol", p_float, 1e-08, "Absolute tolerance."),
    Param("equal_nan", p_bool, True, "Whether to compare NaN's as equal.")],
    infer=_allclose_rule)
def _contrib_allclose(xp, a, b, out, rtol=1e-05, atol=1e-08, equal_nan=True):
    """allclose(a, b, rtol=1e-5, atol=1e-8, equal_nan=True): 1 (uint8 scalar)
    when |a - b| <= atol + rtol * |b| everywhere."""
    with _errstate():
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        ok = xp.abs(a64 - b64) <= atol + rtol * xp.abs(b64)
        if equal_nan:
            ok = ok | (xp.isnan(a64) & xp.isnan(b64))
    out[...] = ok.all()      # an array, not a Python bool: no device round trip


def _index_copy_rule(attrs, shapes, dtypes):
    old, idx, new = (tuple(s) for s in shapes)
    if len(idx) != 1:
        raise ShapeError("index_vector must be 1-D, got shape %s" % fmt(idx))
    if len(new) != len(old) or new[1:] != old[1:] or new[0] != idx[0]:
        raise ShapeError("new_tensor %s must have shape (len(index_vector),) + old_tensor's "
                         "shape[1:] (old_tensor %s, index_vector %s)"
                         % (fmt(new), fmt(old), fmt(idx)))
    if dtypes[0] != dtypes[2]:
        raise OpError("old_tensor and new_tensor must have the same dtype")
    return (old,), (dtypes[0],)


@register("_contrib_index_copy", inputs=("old_tensor", "index_vector", "new_tensor"),
          infer=_index_copy_rule)
def _contrib_index_copy(xp, old, index, new, out):
    """index_copy(old_tensor, index_vector, new_tensor): old_tensor with rows
    index_vector[i] replaced by new_tensor[i]."""
    xp.copyto(out, old)
    out[index.astype(np.int64)] = new


def _index_copy_grad(F, attrs, ins, outs, og):
    old, index, new = ins
    g = og[0]
    keep = F.ones_like(g)
    keep = F._internal._contrib_index_copy(keep, index, F.zeros_like(new))
    return [g * keep, None, F.take(g, index, axis=0)]


def _index_array_axes(attrs, ndim):
    axes = attrs["axes"]
    if axes is None:
        return list(range(ndim))
    return [_axis(a, ndim, "axes") for a in axes]


def _index_array_rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    return (d + (len(_index_array_axes(attrs, len(d))),),), (np.dtype(np.int64),)


@register("_contrib_index_array", params=[
    Param("axes", _p_opt_shape, None, "The axes to include in the index array.")],
    infer=_index_array_rule)
def _contrib_index_array(xp, data, out, axes=None):
    """index_array(data, axes=None): out[i0, ..., in, k] = i_axes[k] (int64)."""
    ax = _index_array_axes({"axes": axes}, data.ndim)
    for k, a in enumerate(ax):
        shp = [1] * data.ndim
        shp[a] = data.shape[a]
        out[..., k] = xp.arange(data.shape[a], dtype=np.int64).reshape(shp)


@ignores_ograd
def _zero_grads(F, attrs, ins, outs, og):
    return [F.zeros_like(x) for x in ins]


set_grads({
    "softmin": _softmin_grad,
    "amp_cast": _amp_cast_grad,
    "amp_multicast": _amp_multicast_grad,
    "all_finite": lambda F, at, ins, outs, og: [None],
    "multi_all_finite": lambda F, at, ins, outs, og: [None] * len(ins),
    "rcbrt": lambda F, at, ins, outs, og: [og[0] * -outs[0] / (3 * ins[0])],
    "moments": _moments_grad,
    "depth_to_space": lambda F, at, ins, outs, og: [
        F.space_to_depth(og[0], block_size=at["block_size"])],
    "space_to_depth": lambda F, at, ins, outs, og: [
        F.depth_to_space(og[0], block_size=at["block_size"])],
    "_split_v2": _split_v2_grad,
    "_contrib_div_sqrt_dim": _div_sqrt_dim_grad,
    "_contrib_quadratic": _quadratic_grad,
    "_contrib_allclose": lambda F, at, ins, outs, og: [None, None],
    "_contrib_index_copy": _index_copy_grad,
    "_contrib_index_array": _zero_grads,
})

# ------------------------------------------------------------- _histogram
# src/operator/tensor/histogram-inl.h: counts (int64) and bin edges


def _p_range(v):
    s = _p_opt_shape_f(v)
    if s is not None and len(s) != 2:
        raise TypeError("range must be a (min, max) pair, got %r" % (v,))
    return s


def _p_opt_shape_f(v):
    v = _lit(v)
    if v is None:
        return None
    return tuple(float(x) for x in v)


def _histogram_rule(attrs, shapes, dtypes):
    if len(shapes) == 2:
        b = tuple(shapes[1])
        if len(b) != 1 or b[0] < 2:
            raise ShapeError("bins must be a 1-D array of at least 2 edges, got shape %s"
                             % fmt(b))
        return ((b[0] - 1,), b), (np.dtype(np.int64), dtypes[0])
    n, r = attrs["bin_cnt"], attrs["range"]
    if n is None or r is None:
        raise OpError("_histogram needs either a bins input or both bin_cnt and range")
    if n <= 0:
        raise OpError("bin_cnt must be positive, got %d" % n)
    if not r[0] <= r[1]:
        raise OpError("max must be larger than min in range, got %s" % (r,))
    return ((n,), (n + 1,)), (np.dtype(np.int64), dtypes[0])


@register("_histogram", inputs=("data", "bins"), params=[
    Param("bin_cnt", _p_opt_int, None, "Number of bins for uniform case"),
    Param("range", _p_range, None, "The lower and upper range of the bins. if not provided, "
          "range is simply (a.min(), a.max()). values outside the range are ignored. the "
          "first element of the range must be less than or equal to the second. range "
          "affects the automatic bin computation as well. while bin width is computed to be "
          "optimal based on the actual data within range, the bin count will fill the "
          "entire range including portions containing no data.")],
    infer=_histogram_rule, num_outputs=2, output_names=("output0", "output1"))
@_optional("bins")
def _histogram(xp, data, *bins, out, bin_cnt=None, range=None):  # noqa: A002 - MXNet's name
    """_histogram(data, bins=None, bin_cnt=None, range=None): (counts, bin edges)
    of data, as numpy.histogram."""
    x = data.reshape(-1)
    if bins:
        edges = bins[0]
    else:
        edges = xp.linspace(range[0], range[1], bin_cnt + 1).astype(out[1].dtype)
    cnt, _ = xp.histogram(x, bins=edges.astype(np.float64) if bins else bin_cnt,
                          range=None if bins else range)
    out[0][...] = cnt
    out[1][...] = edges


set_grads({"_histogram": lambda F, at, ins, outs, og: [None] * len(ins)})
