"""MXNet 1.9.1's indexing ops: take, pick, gather_nd, scatter_nd, one_hot,
diag, ravel/unravel_index, SequenceMask / SequenceLast / SequenceReverse
and boolean_mask.

MXNet behaviours kept on purpose (checked against MXNet 1.9.1):

- take/pick truncate float indices toward zero; 'clip' clips negatives to 0,
  'wrap' wraps them (-1 is the last); take(mode='raise') raises on an index
  outside [0, n) when the kernel runs (MXNet checks at run time too);
- gather_nd wraps negative indices (-n <= i < 0) and raises beyond; one_hot
  gives an all-off row for indices outside [0, depth);
- unravel_index uses C integer division and does not wrap the first
  dimension (99 in shape (7, 6) gives (16, 3)); ravel_multi_index does no
  range checks;
- SequenceMask accepts axis 0 or 1, SequenceReverse only axis 0; lengths
  are truncated to ints. Out-of-range lengths read garbage memory in MXNet;
  here SequenceLast clips them to [1, T] and SequenceReverse to [0, T].

Extension over MXNet (where MXNet raises): boolean_mask on any axis.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._common import (_F32, _as_index, _axis, _cast_into, _n_inputs, _no_grad, _p_opt_int,
                      _p_opt_shape, _prod)
from ._rules import fmt
from ._nn_util import _errstate
from .registry import Param, p_bool, p_dtype, p_float, p_int, p_shape, p_str, register


# ====================================================================== take


def _take_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("a", "indices"))
    s, i = tuple(shapes[0]), tuple(shapes[1])
    ax = _axis(attrs["axis"], len(s))
    return (s[:ax] + i + s[ax + 1:],), (dtypes[0],)


def _fix_index(xp, idx, n, mode, op="take"):
    if mode == "wrap":
        return idx % n if n else idx
    if mode == "raise":
        bad = (idx < 0) | (idx >= n)
        if bad.any():
            raise IndexError("%s: index %d is out of bounds for an axis of size %d (mode='raise')"
                             % (op, int(idx[bad].reshape(-1)[0]), n))
        return idx
    return xp.clip(idx, 0, max(n - 1, 0))


_MODES = ("clip", "raise", "wrap")


@register("take", inputs=("a", "indices"), params=[
    Param("axis", p_int, 0, "The axis of input array to be taken."),
    Param("mode", p_str, "clip", "clip, wrap or raise on out-of-range indices.", choices=_MODES)],
    infer=_take_rule)
def take(xp, a, indices, out, axis=0, mode="clip"):
    """take(a, indices, axis=0, mode='clip'): slices of a along axis at indices."""
    ax = axis % a.ndim
    idx = _fix_index(xp, _as_index(xp, indices), a.shape[ax], mode)
    if xp is np and out.flags.c_contiguous and out.dtype == a.dtype:
        # gathered straight into the output: one pass, not a temporary and a copy
        # (the indices are in range by now, so 'clip' never buffers)
        np.take(a, idx, axis=ax, mode="clip",
                out=out.reshape(a.shape[:ax] + idx.shape + a.shape[ax + 1:]))
        return
    xp.copyto(out, xp.take(a, idx, axis=ax).reshape(out.shape))


@register("_backward_take", inputs=("ograd", "indices", "a"), params=[
    Param("axis", p_int, 0), Param("mode", p_str, "clip", choices=_MODES)],
    infer=lambda at, s, d: ((tuple(s[2]),), (d[0],)))
def _backward_take(xp, ograd, indices, a, out, axis=0, mode="clip"):
    """_backward_take(ograd, indices, a): ograd summed into a's shape at the taken indices."""
    ax = axis % a.ndim
    n = a.shape[ax]
    idx = _fix_index(xp, _as_index(xp, indices), n, mode).reshape(-1)
    pre, post = _prod(a.shape[:ax]), _prod(a.shape[ax + 1:])
    out[...] = 0
    o3 = out.reshape(pre, n, post)
    xp.add.at(o3, (slice(None), idx), ograd.reshape(pre, idx.size, post))


# ====================================================================== pick


def _pick_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data", "index"))
    s = tuple(shapes[0])
    if attrs["axis"] is None:
        raise OpError("axis=None is not supported by pick (as in MXNet 1.9.1); give an axis")
    ax = _axis(attrs["axis"], len(s))
    o = s[:ax] + ((1,) if attrs["keepdims"] else ()) + s[ax + 1:]
    if _prod(shapes[1]) != _prod(o):
        raise ShapeError("index has shape %s but data %s with axis=%d needs %s"
                         % (fmt(shapes[1]), fmt(s), attrs["axis"], fmt(s[:ax] + s[ax + 1:])))
    return (o,), (dtypes[0],)


def _pick_index(xp, data, index, axis, mode):
    ax = axis % data.ndim
    kshape = data.shape[:ax] + (1,) + data.shape[ax + 1:]
    idx = _as_index(xp, index).reshape(kshape)
    n = data.shape[ax]
    idx = idx % n if mode == "wrap" else xp.clip(idx, 0, n - 1)
    return ax, idx


_PICK = [Param("axis", _p_opt_int, -1, "The axis to pick along."),
         Param("keepdims", p_bool, False, "Keep the picked axis with size 1."),
         Param("mode", p_str, "clip", "clip or wrap out-of-range indices.",
               choices=("clip", "wrap"))]


@register("pick", inputs=("data", "index"), params=_PICK, infer=_pick_rule)
def pick(xp, data, index, out, axis=-1, keepdims=False, mode="clip"):
    """pick(data, index, axis=-1, keepdims=False, mode='clip'): one element per
    position along axis, chosen by index."""
    ax, idx = _pick_index(xp, data, index, axis, mode)
    xp.copyto(out, xp.take_along_axis(data, idx, axis=ax).reshape(out.shape))


@register("_backward_pick", inputs=("ograd", "index", "data"), params=_PICK,
          infer=lambda at, s, d: ((tuple(s[2]),), (d[0],)))
def _backward_pick(xp, ograd, index, data, out, axis=-1, keepdims=False, mode="clip"):
    """_backward_pick(ograd, index, data): ograd placed at the picked positions."""
    ax, idx = _pick_index(xp, data, index, axis, mode)
    out[...] = 0
    xp.put_along_axis(out, idx, ograd.reshape(idx.shape), axis=ax)


# ========================================================= gather / scatter


def _nd_index_rule(s_idx, data_shape, what):
    if len(s_idx) < 1:
        raise ShapeError("indices must have at least 1 dimension, got %s" % fmt(s_idx))
    m = s_idx[0]
    if m > len(data_shape):
        raise ShapeError("indices of shape %s index %d axes but %s has only %d"
                         % (fmt(s_idx), m, what, len(data_shape)))
    return m


def _gather_nd_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data", "indices"))
    s, i = tuple(shapes[0]), tuple(shapes[1])
    m = _nd_index_rule(i, s, "data %s" % fmt(s))
    return (i[1:] + s[m:] or (1,),), (dtypes[0],)


def _nd_key(xp, indices, shape):
    """A tuple index from (M, ...) indices: negatives wrap, beyond raises."""
    idx = _as_index(xp, indices)
    key = []
    for j in range(idx.shape[0]):
        n = shape[j]
        ij = idx[j]
        bad = (ij < -n) | (ij >= n)
        if bad.any():
            raise IndexError("index %d is out of bounds for axis %d with size %d"
                             % (int(ij[bad].reshape(-1)[0]), j, n))
        key.append(ij % n if n else ij)
    return tuple(key)


@register("gather_nd", inputs=("data", "indices"), infer=_gather_nd_rule)
def gather_nd(xp, data, indices, out):
    """gather_nd(data, indices): data[indices[0], indices[1], ...]; indices has
    shape (M, ...) and the result (...) + data.shape[M:]."""
    xp.copyto(out, data[_nd_key(xp, indices, data.shape)].reshape(out.shape))


def _scatter_nd_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data", "indices"))
    d, i = tuple(shapes[0]), tuple(shapes[1])
    shape = tuple(attrs["shape"])
    m = _nd_index_rule(i, shape, "shape=%s" % (shape,))
    want = i[1:] + shape[m:]
    if d != want and not (d == (1,) and not want):
        raise ShapeError("data has shape %s but indices %s and shape=%s need %s"
                         % (fmt(d), fmt(i), shape, fmt(want)))
    return (shape,), (dtypes[0],)


_SHAPE = [Param("shape", p_shape, doc="Shape of the output.")]


@register("scatter_nd", inputs=("data", "indices"), params=_SHAPE, infer=_scatter_nd_rule)
def scatter_nd(xp, data, indices, out, shape):
    """scatter_nd(data, indices, shape): zeros of shape with data written at
    indices (the last write wins for repeated indices)."""
    out[...] = 0
    key = _nd_key(xp, indices, out.shape)
    out[key] = data.reshape(out[key].shape)


@register("_backward_gather_nd", inputs=("data", "indices"), params=_SHAPE,
          infer=_scatter_nd_rule)
def _backward_gather_nd(xp, data, indices, out, shape):
    """_backward_gather_nd(data, indices, shape): like scatter_nd, but repeated
    indices accumulate (the gradient of gather_nd)."""
    out[...] = 0
    key = _nd_key(xp, indices, out.shape)
    xp.add.at(out, key, data.reshape(out[key].shape))


# =================================================================== one_hot


def _one_hot_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("indices",))
    if attrs["depth"] < 0:
        raise OpError("depth=%d cannot be negative" % attrs["depth"])
    return (tuple(shapes[0]) + (attrs["depth"],),), (attrs["dtype"],)


@register("one_hot", inputs=("indices",), params=[
    Param("depth", p_int, doc="Depth of the one hot dimension."),
    Param("on_value", p_float, 1.0, "The value assigned to the locations represented by indices."),
    Param("off_value", p_float, 0.0, "The value assigned to the locations not represented by "
          "indices."),
    Param("dtype", p_dtype, _F32, "DType of the output")], infer=_one_hot_rule)
def one_hot(xp, indices, out, depth, on_value=1.0, off_value=0.0, dtype=None):
    """one_hot(indices, depth, on_value=1, off_value=0, dtype='float32'): a
    one-hot vector per index (all off_value for indices outside [0, depth))."""
    idx = _as_index(xp, indices)
    hot = xp.arange(depth).reshape((1,) * idx.ndim + (depth,)) == idx[..., None]
    with _errstate():
        on = np.array(on_value).astype(out.dtype)
        off = np.array(off_value).astype(out.dtype)
    xp.copyto(out, xp.where(hot, on, off))


# ====================================================================== diag


def _diag_axes(attrs, ndim):
    a1 = _axis(attrs["axis1"], ndim, "axis1")
    a2 = _axis(attrs["axis2"], ndim, "axis2")
    if a1 == a2:
        raise OpError("axis1 and axis2 cannot refer to the same axis %d" % a1)
    return a1, a2


def _diag_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = tuple(shapes[0])
    k = attrs["k"]
    if len(s) == 0:
        raise ShapeError("data must have at least 1 dimension")
    if len(s) == 1:
        n = s[0] + abs(k)
        return ((n, n),), (dtypes[0],)
    a1, a2 = _diag_axes(attrs, len(s))
    n = min(s[a1] + min(k, 0), s[a2] - max(k, 0))
    if n <= 0:
        raise ShapeError("diagonal k=%d does not exist in data of shape %s (axis1=%d, axis2=%d)"
                         % (k, fmt(s), a1, a2))
    rest = tuple(d for i, d in enumerate(s) if i not in (a1, a2))
    return (rest + (n,),), (dtypes[0],)


_DIAG = [Param("k", p_int, 0, "Diagonal offset (positive: above the main diagonal)."),
         Param("axis1", p_int, 0, "The first axis of the sub-arrays."),
         Param("axis2", p_int, 1, "The second axis of the sub-arrays.")]


@register("diag", params=_DIAG, infer=_diag_rule)
def diag(xp, data, out, k=0, axis1=0, axis2=1):
    """diag(data, k=0, axis1=0, axis2=1): a 1-D array's diagonal matrix, or the
    k-th diagonal of the (axis1, axis2) sub-arrays, as the last axis."""
    if data.ndim == 1:
        xp.copyto(out, xp.diag(data, k))
    else:
        xp.copyto(out, xp.diagonal(data, k, axis1 % data.ndim, axis2 % data.ndim))


@register("_backward_diag", inputs=("ograd", "data"), params=_DIAG,
          infer=lambda at, s, d: ((tuple(s[1]),), (d[0],)))
def _backward_diag(xp, ograd, data, out, k=0, axis1=0, axis2=1):
    """_backward_diag(ograd, data): ograd put back on data's diagonal, zeros elsewhere."""
    if data.ndim == 1:
        xp.copyto(out, xp.diag(ograd, k))
        return
    out[...] = 0
    v = xp.moveaxis(out, (axis1 % data.ndim, axis2 % data.ndim), (-2, -1))
    i = xp.arange(ograd.shape[-1])
    v[..., i + max(-k, 0), i + max(k, 0)] = ograd


# ===================================================== ravel / unravel index


def _check_shape_param(attrs):
    shape = attrs["shape"]
    if not shape:
        raise OpError("shape=%s: a non-empty shape is required" % (shape,))
    if any(d == 0 for d in shape):
        raise OpError("shape=%s: dimensions cannot be 0" % (tuple(shape),))
    return tuple(shape)


def _ravel_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    shape = _check_shape_param(attrs)
    s = tuple(shapes[0])
    if len(s) != 2:
        raise ShapeError("data must be 2-D (ndim, n) multi-indices, got shape %s" % fmt(s))
    if s[0] != len(shape):
        raise ShapeError("data has %d rows of indices but shape=%s has %d dimension(s)"
                         % (s[0], shape, len(shape)))
    return ((s[1],),), (dtypes[0],)


@register("_ravel_multi_index", params=[Param("shape", _p_opt_shape, None,
                                              "Shape of the array into which the multi-indices "
                                              "apply.")],
          infer=_ravel_rule, aliases=("ravel_multi_index",))
def ravel_multi_index(xp, data, out, shape=None):
    """ravel_multi_index(data, shape): flat indices from (ndim, n) multi-indices
    (no range checks, as in MXNet)."""
    if data.dtype.kind in "iu":
        r = xp.zeros(data.shape[1:], dtype=np.int64)
        for j, d in enumerate(shape):
            r = r * d + data[j]
    else:
        r = xp.zeros(data.shape[1:], dtype=np.float64)
        with _errstate():
            for j, d in enumerate(shape):
                r = xp.trunc(r * d + data[j])
    _cast_into(xp, out, r)


def _unravel_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    shape = _check_shape_param(attrs)
    return ((len(shape),) + tuple(shapes[0]),), (dtypes[0],)


@register("_unravel_index", params=[Param("shape", _p_opt_shape, None,
                                          "Shape of the array into which the indices apply.")],
          infer=_unravel_rule, aliases=("unravel_index",))
def unravel_index(xp, data, out, shape=None):
    """unravel_index(data, shape): (ndim, ...) multi-indices of flat indices, with
    C integer division (the first dimension is not wrapped)."""
    idx = _as_index(xp, data)
    for j in range(len(shape) - 1, 0, -1):
        d = shape[j]
        q = xp.abs(idx) // abs(d) * (xp.sign(idx) * (1 if d > 0 else -1))   # C's truncation
        _cast_into(xp, out[j], idx - q * d)
        idx = q
    _cast_into(xp, out[0], idx)


# ========================================================== Sequence* ops


def _seq_rule(kind):
    def rule(attrs, shapes, dtypes):
        use = attrs["use_sequence_length"]
        if use:
            _n_inputs(shapes, ("data", "sequence_length"), " with use_sequence_length=True")
        else:
            _n_inputs(shapes, ("data",), " (pass use_sequence_length=True to use "
                      "sequence_length)")
        s = tuple(shapes[0])
        ax = attrs["axis"]
        allowed = (0,) if kind == "reverse" else (0, 1)
        if len(s) < 2:
            raise ShapeError("data must have at least 2 dimensions (time and batch), got %s"
                             % fmt(s))
        if ax not in allowed:
            raise OpError("axis=%d is not supported; expected %s" % (
                ax, " or ".join(str(a) for a in allowed)))
        if use:
            batch = s[1 - ax]
            if tuple(shapes[1]) != (batch,):
                raise ShapeError("sequence_length has shape %s but expected (%d,) (the batch "
                                 "size of data %s)" % (fmt(shapes[1]), batch, fmt(s)))
        if kind == "last":
            return (s[:ax] + s[ax + 1:],), (dtypes[0],)
        return (s,), (dtypes[0],)
    return rule


from .registry import optional as _optional  # noqa: E402


def _seq_len(xp, length, T):
    return xp.clip(_as_index(xp, length), 0, T)


def _bcast_len(L, ndim, axis):
    """(batch,) lengths shaped to broadcast against data (time axis ``axis``)."""
    shp = [1] * ndim
    shp[1 - axis] = L.shape[0]
    return L.reshape(shp)


def _seq_params(*extra):
    return [Param("use_sequence_length", p_bool, False, "Use the sequence_length input."),
            *extra, Param("axis", p_int, 0, "The sequence axis (0: (T, N, ...), 1: (N, T, ...)).")]


@register("SequenceMask", inputs=("data", "sequence_length"),
          params=_seq_params(Param("value", p_float, 0.0, "The value to be used as mask.")),
          infer=_seq_rule("mask"))
@_optional("sequence_length")
def sequence_mask(xp, data, *length, out, use_sequence_length=False, value=0.0, axis=0):
    """SequenceMask(data, sequence_length=None, use_sequence_length=False, value=0,
    axis=0): positions at or after each sequence's length set to value."""
    if not use_sequence_length:
        xp.copyto(out, data)
        return
    T = data.shape[axis]
    L = _bcast_len(_seq_len(xp, length[0], T), data.ndim, axis)
    shp = [1] * data.ndim
    shp[axis] = T
    keep = xp.arange(T).reshape(shp) < L
    with _errstate():
        v = np.array(value).astype(out.dtype)
    xp.copyto(out, xp.where(keep, data, v))


def _last_index(xp, data, length, axis):
    T = data.shape[axis]
    if length:
        idx = xp.clip(_as_index(xp, length[0]) - 1, 0, T - 1)
    else:
        idx = xp.full((data.shape[1 - axis],), T - 1, dtype=np.int64)
    shp = [1] * data.ndim
    shp[1 - axis] = idx.shape[0]
    return idx.reshape(shp)


@register("SequenceLast", inputs=("data", "sequence_length"), params=_seq_params(),
          infer=_seq_rule("last"))
@_optional("sequence_length")
def sequence_last(xp, data, *length, out, use_sequence_length=False, axis=0):
    """SequenceLast(data, sequence_length=None, use_sequence_length=False, axis=0):
    the last valid element of each sequence (axis removed)."""
    idx = _last_index(xp, data, length if use_sequence_length else (), axis)
    xp.copyto(out, xp.take_along_axis(data, idx, axis=axis).reshape(out.shape))


@register("_backward_SequenceLast", inputs=("ograd", "data", "sequence_length"),
          params=_seq_params(), infer=lambda at, s, d: ((tuple(s[1]),), (d[0],)))
@_optional("sequence_length")
def _backward_sequence_last(xp, ograd, data, *length, out, use_sequence_length=False, axis=0):
    """_backward_SequenceLast(ograd, data, sequence_length): ograd at the picked steps."""
    idx = _last_index(xp, data, length if use_sequence_length else (), axis)
    out[...] = 0
    xp.put_along_axis(out, idx, xp.expand_dims(ograd, axis), axis=axis)


@register("SequenceReverse", inputs=("data", "sequence_length"), params=_seq_params(),
          infer=_seq_rule("reverse"))
@_optional("sequence_length")
def sequence_reverse(xp, data, *length, out, use_sequence_length=False, axis=0):
    """SequenceReverse(data, sequence_length=None, use_sequence_length=False): the
    first sequence_length steps of each sequence reversed (all T steps without
    lengths); the rest unchanged."""
    T = data.shape[0]
    if not use_sequence_length:
        xp.copyto(out, data[::-1])
        return
    L = _seq_len(xp, length[0], T).reshape(1, -1)
    t = xp.arange(T).reshape(-1, 1)
    src = xp.where(t < L, L - 1 - t, t)                  # (T, batch)
    src = src.reshape(src.shape + (1,) * (data.ndim - 2))
    xp.copyto(out, xp.take_along_axis(data, src, axis=0))


# ============================================================== boolean_mask
# The result's length is the number of nonzero mask entries: a value, not a
# shape. aiond infers every shape at push time without waiting for data, so
# the front end (``mx.nd.contrib.boolean_mask``, ndarray/contrib.py) reads
# the mask only when it is already computed, through an inline engine read
# that never blocks; the count travels to the op as the hidden attribute
# ``_count``.


def _bmask_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data", "index"))
    s, m = tuple(shapes[0]), tuple(shapes[1])
    ax = _axis(attrs["axis"], len(s))
    if len(m) != 1 or m[0] != s[ax]:
        raise ShapeError("index has shape %s but expected (%d,) (data's axis %d)"
                         % (fmt(m), s[ax] if s else 0, ax))
    n = attrs.get("_count")
    if n is None:
        from .dynamic import ValueShaped
        raise ValueShaped("the result's shape depends on the values of index; call it as "
                          "mx.nd.contrib.boolean_mask(data, index, axis), which reads a "
                          "computed index", (s[:ax] + (-1,) + s[ax + 1:],), (dtypes[0],))
    return (s[:ax] + (n,) + s[ax + 1:],), (dtypes[0],)


@register("_contrib_boolean_mask", inputs=("data", "index"),
          params=[Param("axis", p_int, 0, "The axis to select along.")], infer=_bmask_rule)
def _contrib_boolean_mask(xp, data, index, out, axis=0, _count=None):
    """boolean_mask(data, index, axis=0): the slices of data along axis where index
    is nonzero."""
    ax = axis % data.ndim
    sel = xp.nonzero(index.reshape(-1) != 0)[0]
    xp.copyto(out, xp.take(data, sel, axis=ax))


@register("_backward_boolean_mask", inputs=("ograd", "index", "data"),
          params=[Param("axis", p_int, 0)], infer=lambda at, s, d: ((tuple(s[2]),), (d[0],)))
def _backward_boolean_mask(xp, ograd, index, data, out, axis=0):
    """_backward_boolean_mask(ograd, index, data): ograd at the selected slices."""
    ax = axis % data.ndim
    sel = xp.nonzero(index.reshape(-1) != 0)[0]
    out[...] = 0
    key = [slice(None)] * data.ndim
    key[ax] = sel
    out[tuple(key)] = ograd


# ============================================================ gradient table
from ._grad import set_grads  # noqa: E402


def _take_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_take(og[0], ins[1], ins[0], **attrs), None]


def _pick_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_pick(og[0], ins[1], ins[0], **attrs), None]


def _gather_nd_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_gather_nd(og[0], ins[1], shape=ins[0].shape), None]


def _scatter_nd_grad(F, attrs, ins, outs, og):
    return [F.gather_nd(og[0], ins[1]).reshape(ins[0].shape), None]


def _diag_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_diag(og[0], ins[0], **attrs)]


def _seq_mask_grad(F, attrs, ins, outs, og):
    if not attrs["use_sequence_length"]:
        return [og[0]]
    kw = dict(attrs, value=0.0)
    return [F.SequenceMask(og[0], ins[1], **kw), None]


def _seq_last_grad(F, attrs, ins, outs, og):
    g = F._internal._backward_SequenceLast(og[0], *ins, **attrs)
    return [g] + [None] * (len(ins) - 1)


def _seq_reverse_grad(F, attrs, ins, outs, og):
    return [F.SequenceReverse(og[0], *ins[1:], **attrs)] + [None] * (len(ins) - 1)


def _bmask_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_boolean_mask(og[0], ins[1], ins[0], axis=attrs["axis"]), None]


set_grads({
    "take": _take_grad,
    "pick": _pick_grad,
    "gather_nd": _gather_nd_grad,
    "scatter_nd": _scatter_nd_grad,
    "_backward_gather_nd": lambda F, at, ins, outs, og: [
        F.gather_nd(og[0], ins[1]).reshape(ins[0].shape), None],
    "one_hot": _no_grad,
    "diag": _diag_grad,
    "_ravel_multi_index": _no_grad,
    "_unravel_index": _no_grad,
    "SequenceMask": _seq_mask_grad,
    "SequenceLast": _seq_last_grad,
    "SequenceReverse": _seq_reverse_grad,
    "_contrib_boolean_mask": _bmask_grad,
})
