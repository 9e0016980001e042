"""MXNet 1.9.1's ordering ops: sort, argsort, topk and argmax_channel.

MXNet behaviours kept on purpose (checked against MXNet 1.9.1): sort /
argsort / topk are stable: equal keys keep their order in both directions;
topk(k=0) (or k < 0) returns all entries; topk's 'mask' has data's dtype
whatever ``dtype`` says.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._common import _F32, _I64, _cast_into, _n_inputs, _no_grad, _outs, _p_opt_int, _prod
from ._rules import fmt
from .registry import Param, p_bool, p_dtype, p_int, p_str, register


# ============================================================ argmax_channel


def _argmax_channel_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = tuple(shapes[0])
    if len(s) < 2:
        raise ShapeError("needs data with at least 2 dimensions (it reduces axis 1), got %s"
                         % fmt(s))
    return (s[:1] + s[2:],), (dtypes[0],)


@register("argmax_channel", infer=_argmax_channel_rule)
def argmax_channel(xp, data, out):
    """argmax_channel(data): argmax over axis 1, in data's dtype."""
    xp.copyto(out, xp.argmax(data, axis=1), casting="unsafe")


# ======================================================= sort / argsort / topk


def _sort_axis(attrs, s):
    ax = attrs["axis"]
    if ax is None:
        return None
    if not -len(s) <= ax < len(s):
        raise OpError("axis=%d is out of range for an array of %d dimension(s)" % (ax, len(s)))
    return ax % len(s)


def _stable_order(xp, data, axis, ascend, k=None):
    """Stable argsort (equal keys keep their order, in both directions), or
    its first ``k`` entries along the axis."""
    x = data.reshape(-1) if axis is None else data
    ax = 0 if axis is None else axis
    packed = _packed_keys(xp, x, ax, ascend)
    if packed is not None:
        n = x.shape[ax]
        if k is not None and k < n:
            # the k first of a total order: partition (O(n)), sort only those
            packed = np.partition(packed, k - 1, axis=ax)
            packed = packed[(slice(None),) * ax + (slice(0, k),)]
        packed.sort(axis=ax)
        return (packed & np.uint64(0xFFFFFFFF)).astype(np.int64)
    if not ascend:
        if x.dtype.kind in "ub":
            x = x.astype(np.int64)
        x = -x
    order = xp.argsort(x, axis=ax, kind="stable")
    if k is not None and k < x.shape[ax]:
        order = xp.take(order, xp.arange(k), axis=ax)
    return order


_UINT = {1: np.uint8, 2: np.uint16, 4: np.uint32}


def _packed_keys(xp, x, ax, ascend):
    """``(order-preserving key << 32) | index along ax`` as uint64, or None
    where keys are wider than 32 bits (or not on numpy).

    The packed values are unique and sort exactly as the stable order of the
    keys does, so numpy's fast unstable sort / partition of them give MXNet's
    stable order: several times faster than a stable argsort."""
    if xp is not np or x.size == 0:
        return None
    n = x.shape[ax]
    kind, size = x.dtype.kind, x.dtype.itemsize
    if n >= 1 << 32 or size > 4 or kind not in "fiub":
        return None
    ut = _UINT.get(size)
    if ut is None:
        return None
    sign = ut(1 << (8 * size - 1))
    if kind == "f":
        # -0.0 == 0.0 and every NaN sorts last, as numpy's sort has them
        x = (x if ascend else -x) + x.dtype.type(0)
        nan = np.isnan(x)
        bits = x.view(ut)
        if nan.any():
            bits = bits.copy()
            bits[nan] = ~sign       # the largest positive NaN pattern: last
        u = np.where(bits & sign, ~bits, bits | sign)
    else:
        u = x.view(ut) if kind != "b" else x.view(np.uint8)
        if kind == "i":
            u = u ^ sign
        if not ascend:
            u = ~u
    packed = u.astype(np.uint64) << np.uint64(32)
    shape = [1] * x.ndim
    shape[ax] = n
    packed |= np.arange(n, dtype=np.uint64).reshape(shape)
    return packed


_SORT_AXIS = Param("axis", _p_opt_int, -1, "Axis along which to sort (None: the flattened "
                   "array).")


def _sort_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = tuple(shapes[0])
    o = (_prod(s),) if _sort_axis(attrs, s) is None else s
    return (o, o), (dtypes[0], _I64)


@register("sort", params=[_SORT_AXIS, Param("is_ascend", p_bool, True, "Ascending order.")],
          infer=_sort_rule, num_outputs=2, output_names=("output", "indices"),
          num_visible=lambda a: 1)
def sort(xp, data, out, axis=-1, is_ascend=True):
    """sort(data, axis=-1, is_ascend=True): sorted copy (stable)."""
    y, idx = out
    ax = None if axis is None else axis % data.ndim
    order = _stable_order(xp, data, ax, is_ascend)
    src = data.reshape(-1) if ax is None else data
    xp.copyto(y, xp.take_along_axis(src, order, axis=0 if ax is None else ax))
    xp.copyto(idx, order)


def _argsort_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = tuple(shapes[0])
    o = (_prod(s),) if _sort_axis(attrs, s) is None else s
    return (o,), (attrs["dtype"],)


@register("argsort", params=[_SORT_AXIS, Param("is_ascend", p_bool, True, "Ascending order."),
                             Param("dtype", p_dtype, _F32, "DType of the output indices.")],
          infer=_argsort_rule)
def argsort(xp, data, out, axis=-1, is_ascend=True, dtype=None):
    """argsort(data, axis=-1, is_ascend=True, dtype='float32'): the indices that
    sort data (stable), in dtype."""
    ax = None if axis is None else axis % data.ndim
    _cast_into(xp, out, _stable_order(xp, data, ax, is_ascend))


_RET_TYPES = ("both", "indices", "mask", "value")


def _topk_k(attrs, s):
    ax = _sort_axis(attrs, s)
    n = _prod(s) if ax is None else s[ax]
    k = attrs["k"]
    if k > n:
        raise OpError("k=%d is larger than the %d element(s) along the %s" % (
            k, n, "flattened array" if ax is None else "axis %d" % ax))
    return ax, (n if k <= 0 else k)


def _topk_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("data",))
    s = tuple(shapes[0])
    ax, k = _topk_k(attrs, s)
    t = attrs["ret_typ"]
    if t == "mask":
        return (s,), (dtypes[0],)
    o = (k,) if ax is None else s[:ax] + (k,) + s[ax + 1:]
    if t == "indices":
        return (o,), (attrs["dtype"],)
    if t == "value":
        return (o, o), (dtypes[0], _I64)
    return (o, o, o), (dtypes[0], attrs["dtype"], _I64)


@register("topk", params=[
    _SORT_AXIS, Param("k", p_int, 1, "Number of top elements to select (<= 0: all)."),
    Param("ret_typ", p_str, "indices", "value, indices, both (value, indices) or mask.",
          choices=_RET_TYPES),
    Param("is_ascend", p_bool, False, "Select the smallest (True) or largest elements."),
    Param("dtype", p_dtype, _F32, "DType of the output indices.")],
    infer=_topk_rule, num_outputs=lambda a: {"mask": 1, "indices": 1, "value": 2}.get(
        a["ret_typ"], 3),
    num_visible=lambda a: 2 if a["ret_typ"] == "both" else 1)
def topk(xp, data, out, axis=-1, k=1, ret_typ="indices", is_ascend=False, dtype=None):
    """topk(data, axis=-1, k=1, ret_typ='indices', is_ascend=False): the k
    largest (smallest if is_ascend) elements along axis: their values, indices,
    both, or a 0/1 mask over data."""
    ax = None if axis is None else axis % data.ndim
    n = data.size if ax is None else data.shape[ax]
    kk = n if k <= 0 else k
    top = _stable_order(xp, data, ax, is_ascend, kk)
    a = 0 if ax is None else ax
    outs = _outs(out)
    if ret_typ == "mask":
        m = xp.zeros(data.size if ax is None else data.shape, dtype=out.dtype)
        xp.put_along_axis(m, top, m.dtype.type(1), axis=a)
        xp.copyto(outs[0], m.reshape(data.shape))
        return
    if ret_typ == "indices":
        _cast_into(xp, outs[0], top)
        return
    src = data.reshape(-1) if ax is None else data
    xp.copyto(outs[0], xp.take_along_axis(src, top, axis=a))
    if ret_typ == "both":
        _cast_into(xp, outs[1], top)
    xp.copyto(outs[-1], top)


@register("_backward_sort", inputs=("ograd", "indices", "data"), params=[_SORT_AXIS],
          infer=lambda at, s, d: ((tuple(s[2]),), (d[0],)))
def _backward_sort(xp, ograd, indices, data, out, axis=-1):
    """_backward_sort(ograd, indices, data): ograd scattered back to the positions
    the sort/topk indices (int64) came from; zeros elsewhere."""
    out[...] = 0
    if axis is None:
        out.reshape(-1)[indices.reshape(-1)] = ograd.reshape(-1)
    else:
        xp.put_along_axis(out, indices, ograd, axis=axis % data.ndim)


# ============================================================ gradient table
from ._grad import set_grads  # noqa: E402


def _sort_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_sort(og[0], outs[1], ins[0], axis=attrs["axis"])]


def _topk_grad(F, attrs, ins, outs, og):
    t = attrs["ret_typ"]
    if t in ("indices", "mask"):
        return [F.zeros_like(ins[0])]
    return [F._internal._backward_sort(og[0], outs[-1], ins[0], axis=attrs["axis"])]


set_grads({
    "argmax_channel": _no_grad,
    "sort": _sort_grad,
    "argsort": _no_grad,
    "topk": _topk_grad,
})
