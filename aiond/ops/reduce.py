"""Reductions with MXNet's ``axis``/``keepdims``/``exclude`` (a full
reduction has shape (1,)); argmax/argmin return indices in the input's dtype
(float32 indices for float32 data) as MXNet does."""
from __future__ import annotations

import numpy as np

from ..base import OpError
from ._fast import last_axis_max, last_axis_min
from ._rules import norm_axis, reduce_axes, reduce_rule
from .registry import Param, memo_rule, p_axis, p_bool, p_int, p_str, register

_RED = [Param("axis", p_axis, None, "axis or axes to reduce; None: all"),
        Param("keepdims", p_bool, False, "keep reduced axes with size 1"),
        Param("exclude", p_bool, False, "reduce over the axes NOT in axis")]


_AXES = {}


def _axes(axis, exclude, ndim):
    """``reduce_axes`` of these attributes, remembered (a training loop sums
    the same axes every step)."""
    key = (axis, exclude, ndim)
    axes = _AXES.get(key)
    if axes is None:
        axes = reduce_axes({"axis": axis, "exclude": exclude}, ndim)
        if len(_AXES) < 4096:
            _AXES[key] = axes
    return axes


def _reducer(fname):
    # a float sum into an output of numpy's result shape reduces straight into
    # it: the same ufunc loop as np.sum, without its wrapper and a copy
    direct = np.add.reduce if fname == "sum" else None
    # max/min over a short last axis: numpy's row-at-a-time loop is slow there
    extreme = {"max": last_axis_max, "min": last_axis_min}.get(fname)

    def kernel(xp, data, out, axis=None, keepdims=False, exclude=False):
        axes = _axes(axis, exclude, data.ndim)
        if (direct is not None and xp is np and data.dtype == out.dtype and data.dtype.kind == "f"
                and (keepdims or out.ndim == data.ndim - len(axes))):
            direct(data, axis=axes, keepdims=keepdims, out=out)
            return
        if extreme is not None and data.ndim >= 2 and axes == (data.ndim - 1,):
            out[...] = xp.reshape(extreme(xp, data), out.shape)
            return
        r = getattr(xp, fname)(data, axis=axes, keepdims=keepdims)
        out[...] = xp.reshape(r, out.shape)
    return kernel


def _extreme_rule(attrs, shapes, dtypes):
    shape = shapes[0]
    if any(shape[i] == 0 for i in reduce_axes(attrs, len(shape))):
        raise OpError("cannot reduce a zero-size axis of shape %s: max/min have no identity"
                      % (tuple(shape),))
    return reduce_rule(attrs, shapes, dtypes)


for _name, _f in (("sum", "sum"), ("mean", "mean"), ("prod", "prod"), ("max", "max"),
                  ("min", "min"), ("nansum", "nansum"), ("nanprod", "nanprod")):
    _k = _reducer(_f)
    _k.__doc__ = "%s(data, axis=None, keepdims=False, exclude=False)" % _name
    register(_name, params=_RED,
             infer=memo_rule(_extreme_rule if _name in ("max", "min") else reduce_rule),
             aliases={"sum": ("sum_axis",), "max": ("max_axis",), "min": ("min_axis",)}.get(_name, ()))(_k)


def _norm_check(op, attrs):
    if attrs["ord"] not in (1, 2):
        raise OpError("norm: ord=%r is not supported; expected 1 or 2" % attrs["ord"])


@register("norm", params=[Param("ord", p_int, 2), Param("axis", p_axis, None),
                          Param("out_dtype", p_str, "None"), Param("keepdims", p_bool, False)],
          infer=reduce_rule, attr_check=_norm_check)
def norm(xp, data, out, ord=2, axis=None, out_dtype="None", keepdims=False):
    """norm(data, ord=2, axis=None, keepdims=False): the L1 or L2 norm."""
    axes = reduce_axes({"axis": axis}, data.ndim)
    if ord == 1:
        r = xp.sum(xp.abs(data), axis=axes, keepdims=keepdims)
    else:
        r = xp.sqrt(xp.sum(xp.square(data.astype(np.float64) if data.dtype == np.float16 else data),
                           axis=axes, keepdims=keepdims))
    out[...] = xp.reshape(r, out.shape)


def _arg_rule(attrs, shapes, dtypes):
    # MXNet: the indices come in the input's dtype (float32 for float32 data)
    shape = shapes[0]
    axis = attrs["axis"]
    if axis is None:
        if not all(shape):
            raise OpError("cannot take the index of an extremum of an empty array %s" % (shape,))
        return ((1,),), (dtypes[0],)
    ax = norm_axis(axis, len(shape))
    if len(shape) and shape[ax] == 0:
        raise OpError("axis %d of %s is empty: there is no index of an extremum" % (ax, shape))
    if attrs["keepdims"]:
        out = tuple(1 if i == ax else d for i, d in enumerate(shape))
    else:
        out = tuple(d for i, d in enumerate(shape) if i != ax) or (1,)
    return (out,), (dtypes[0],)


def _arg(fname):
    def kernel(xp, data, out, axis=None, keepdims=False):
        if axis is None:
            r = getattr(xp, fname)(data.reshape(-1))
        else:
            r = getattr(xp, fname)(data, axis=axis)
        out[...] = xp.reshape(r, out.shape)
    return kernel


for _name in ("argmax", "argmin"):
    _k = _arg(_name)
    _k.__doc__ = "%s(data, axis=None, keepdims=False): indices in data's dtype." % _name
    register(_name, params=[Param("axis", lambda v: None if v in (None, "None") else p_int(v), None),
                            Param("keepdims", p_bool, False)], infer=_arg_rule)(_k)

# ------------------------------------------------------------ gradient table
from ._grad import set_grads  # noqa: E402


def _kept_shape(attrs, shape):
    axes = reduce_axes(attrs, len(shape))
    return tuple(1 if i in axes else d for i, d in enumerate(shape)), axes


def _spread(F, g, attrs, shape):
    """Broadcast a reduction's out-grad back to the input's shape."""
    kept, _ = _kept_shape(attrs, shape)
    return F.broadcast_to(g.reshape(kept), shape=shape)


def _sum_grad(F, attrs, ins, outs, og):
    return [_spread(F, og[0], attrs, ins[0].shape)]


def _mean_grad(F, attrs, ins, outs, og):
    shape = ins[0].shape
    _, axes = _kept_shape(attrs, shape)
    n = 1
    for a in axes:
        n *= shape[a]
    return [_spread(F, og[0], attrs, shape) / max(n, 1)]


def _extreme_grad(F, attrs, ins, outs, og):
    x = ins[0]
    y = _spread(F, outs[0], attrs, x.shape)
    return [_spread(F, og[0], attrs, x.shape) * (x == y)]


def _prod_grad(F, attrs, ins, outs, og):
    x = ins[0]
    return [_spread(F, og[0] * outs[0], attrs, x.shape) / x]


def _nansum_grad(F, attrs, ins, outs, og):
    x = ins[0]
    return [_spread(F, og[0], attrs, x.shape) * (x == x)]


def _nanprod_grad(F, attrs, ins, outs, og):
    # MXNet's nanprod_grad: out / x where x is a number, 0 where it is NaN
    x = ins[0]
    ok = x == x
    return [F.where(ok, _spread(F, og[0] * outs[0], attrs, x.shape) / F.where(ok, x, F.ones_like(x)),
                    F.zeros_like(x))]


def _norm_grad(F, attrs, ins, outs, og):
    x = ins[0]
    a = {"axis": attrs["axis"]}
    g = _spread(F, og[0], a, x.shape)
    if attrs["ord"] == 1:
        return [g * F.sign(x)]
    return [g * x / _spread(F, outs[0], a, x.shape)]


def _index_grad(F, attrs, ins, outs, og):
    return [None]


_index_grad.ignores_ograd = True    # indices: MXNet never reads their head gradient


set_grads({"sum": _sum_grad, "mean": _mean_grad, "max": _extreme_grad, "min": _extreme_grad,
           "prod": _prod_grad, "nansum": _nansum_grad, "nanprod": _nanprod_grad, "norm": _norm_grad,
           "argmax": _index_grad, "argmin": _index_grad})
