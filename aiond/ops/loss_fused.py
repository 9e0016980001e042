"""Gluon's SoftmaxCrossEntropyLoss with class-index labels as one op each way.

The loss is ``mean(-pick(log_softmax(pred, axis), label, keepdims=True),
exclude batch_axis)``: four ops forward and, through their gradient rules,
nine backward, each a tiny kernel on a (batch, classes) array whose
dispatch costs more than its arithmetic. ``_sparse_softmax_cross_entropy``
runs the same kernels in the same order in one op, and its backward is one
op too, so the values are bit for bit those of the composed ops.
"""
from __future__ import annotations

import math

import numpy as np

from ..base import ShapeError
from ._common import _axis, _n_inputs
from ._rules import fmt, reduce_axes
from ._fast import last_axis_max
from .elemwise import cast_scalar
from .indexing import _pick_index
from ._nn_util import _errstate, _need_float
from .softmax import _softmax_core
from .registry import Param, memo_rule, p_int, register

_PARAMS = [Param("axis", p_int, -1, "The class axis of pred."),
           Param("batch_axis", p_int, 0, "The axis the loss is kept along (the mean is "
                                             "taken over every other axis).")]


def _shapes(attrs, d):
    """(axis, the picked shape, the mean's reduced axes, the loss shape)."""
    ax = _axis(attrs["axis"], len(d))
    b = _axis(attrs["batch_axis"], len(d), "batch_axis")
    kept = d[:ax] + (1,) + d[ax + 1:]
    axes = reduce_axes({"axis": b, "exclude": True}, len(d))
    loss = tuple(n for i, n in enumerate(kept) if i not in axes) or (1,)
    return ax, kept, axes, loss


def _ce_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("pred", "label"))
    _need_float(dtypes[0], "pred")
    d = tuple(shapes[0])
    if len(d) == 0:
        raise ShapeError("pred must have at least 1 dimension, got shape ()")
    ax, kept, _, loss = _shapes(attrs, d)
    if math.prod(shapes[1]) != math.prod(kept):
        raise ShapeError("label has shape %s but pred %s with axis=%d needs %s (one class "
                         "index per sample)" % (fmt(shapes[1]), fmt(d), attrs["axis"],
                                                fmt(d[:ax] + d[ax + 1:])))
    return (loss,), (dtypes[0],)


def _log_softmax(xp, data, ax):
    """log_softmax's kernel, rounded to data's dtype as its output is."""
    y = _softmax_core(xp, data, ax, None, log=True)
    return y if y.dtype == data.dtype else y.astype(data.dtype)


@register("_sparse_softmax_cross_entropy", inputs=("pred", "label"), params=_PARAMS,
          infer=memo_rule(_ce_rule))
def sparse_softmax_cross_entropy(xp, pred, label, out, axis=-1, batch_axis=0):
    """_sparse_softmax_cross_entropy(pred, label, axis=-1, batch_axis=0): per
    sample, the mean over every axis but batch_axis of
    -log_softmax(pred, axis) at the class index label (clipped into range)."""
    if _rows_case(xp, pred, axis, batch_axis):
        with _errstate():
            z, s, idx = _rows_softmax(pred, label)
            picked = z[_ROWS[:z.shape[0]] if z.shape[0] <= len(_ROWS) else np.arange(z.shape[0]),
                       idx]
            np.subtract(picked, np.log(s.reshape(-1)), out=picked)
            np.negative(picked, out=out.reshape(-1))
        return
    ax, _, axes, _ = _shapes({"axis": axis, "batch_axis": batch_axis}, pred.shape)
    y = _log_softmax(xp, pred, ax)
    _, idx = _pick_index(xp, y, label, ax, "clip")
    picked = xp.take_along_axis(y, idx, axis=ax)
    xp.multiply(picked, cast_scalar(-1.0, picked.dtype), out=picked)
    r = xp.mean(picked, axis=axes, keepdims=False)
    out[...] = xp.reshape(r, out.shape)


_ROWS = np.arange(4096)
_F32_64 = (np.dtype(np.float32), np.dtype(np.float64))


def _rows_case(xp, pred, axis, batch_axis):
    """(batch, classes) float32/64 on the host with classes last: the case
    a classifier's loss takes, run by bare ufuncs. Float16 takes the general
    path (log_softmax rounds there before the pick)."""
    return (xp is np and pred.ndim == 2 and axis in (-1, 1) and batch_axis in (0, -2)
            and pred.dtype in _F32_64 and pred.shape[1] > 0)


def _rows_softmax(pred, label):
    """_softmax_core's z = x - max and s = sum(exp(z)) along rows, and the
    clipped class index of each row."""
    z = np.subtract(pred, last_axis_max(np, pred))
    s = np.add.reduce(np.exp(z), axis=1, keepdims=True)
    idx = label.reshape(-1)
    if idx.dtype.kind not in "iub":
        idx = np.trunc(idx)
    idx = idx.astype(np.int64)
    np.maximum(idx, 0, out=idx)
    np.minimum(idx, pred.shape[1] - 1, out=idx)
    return z, s, idx


def _bwd_rule(attrs, shapes, dtypes):
    _n_inputs(shapes, ("ograd", "pred", "label"))
    (loss,), _ = _ce_rule(attrs, shapes[1:], dtypes[1:])
    if tuple(shapes[0]) != loss:
        raise ShapeError("ograd has shape %s but the loss has shape %s"
                         % (fmt(shapes[0]), fmt(loss)))
    return (tuple(shapes[1]),), (dtypes[1],)


def _mean_kept(kept, axes):
    return tuple(1 if i in axes else n for i, n in enumerate(kept))


@register("_backward_sparse_softmax_cross_entropy", inputs=("ograd", "pred", "label"),
          params=_PARAMS, infer=_bwd_rule)
def _backward_sparse_softmax_cross_entropy(xp, ograd, pred, label, out, axis=-1,
                                           batch_axis=0):
    """The gradient of _sparse_softmax_cross_entropy: the composed ops' rules
    in their order (mean: spread and divide; negation; pick: scatter;
    log_softmax: g - exp(y) * sum(g))."""
    if _rows_case(xp, pred, axis, batch_axis):
        with _errstate():
            z, s, idx = _rows_softmax(pred, label)
            np.subtract(z, np.log(s), out=z)                    # y, the log-softmax
            c = np.negative(ograd.reshape(-1))                  # ograd / 1, negated
            n = z.shape[0]
            rows = _ROWS[:n] if n <= len(_ROWS) else np.arange(n)
            out[...] = 0
            out[rows, idx] = c
            s = np.add.reduce(out, axis=1, keepdims=True)
            np.exp(z, out=z)
            np.multiply(z, s, out=z)
            np.subtract(out, z, out=out)
        return
    ax, kept, axes, _ = _shapes({"axis": axis, "batch_axis": batch_axis}, pred.shape)
    dt = out.dtype
    n = math.prod(kept[a] for a in axes)
    with _errstate():
        y = _log_softmax(xp, pred, ax)
        c = xp.true_divide(xp.broadcast_to(ograd.reshape(_mean_kept(kept, axes)), kept),
                           cast_scalar(float(max(n, 1)), dt))
        xp.multiply(c, cast_scalar(-1.0, dt), out=c)
        _, idx = _pick_index(xp, y, label, ax, "clip")
        g = xp.zeros(pred.shape, dtype=dt)
        xp.put_along_axis(g, idx, c, axis=ax)
        s = xp.sum(g, axis=(ax,), keepdims=True)
        e = xp.exp(y)
        xp.multiply(e, s, out=e)
        xp.subtract(g, e, out=out)


# ------------------------------------------------------------ gradient rules
from ._grad import set_grads  # noqa: E402


def _ce_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_sparse_softmax_cross_entropy(
        og[0], ins[0], ins[1], axis=attrs["axis"], batch_axis=attrs["batch_axis"]), None]


def _ce_backward_grad(F, attrs, ins, outs, og):
    """Second order. The gradient is c * (onehot - p) with p = softmax(pred)
    and c = -ograd/n spread over the picked shape, so along a head h:
    d/dpred = -c * p * (h - sum(h * p)) and d/dograd = -(1/n) times the sum
    over the mean's axes of pick(h, label) - sum(h * p)."""
    o, x, label = ins
    h = og[0]
    ax, kept, axes, _ = _shapes(attrs, x.shape)
    n = float(max(math.prod(kept[a] for a in axes), 1))
    p = F.softmax(x, axis=ax)
    hp = F.sum(h * p, axis=ax, keepdims=True)
    c = F.broadcast_to(o.reshape(_mean_kept(kept, axes)), shape=kept) / n     # -c
    dx = F.broadcast_mul(c, p * F.broadcast_sub(h, hp))
    t = F.pick(h, label, axis=ax, keepdims=True) - hp
    do = F.sum(t, axis=attrs["batch_axis"], exclude=True) / (-n)
    return [do.reshape(o.shape), dx, None]


set_grads({"_sparse_softmax_cross_entropy": _ce_grad,
           "_backward_sparse_softmax_cross_entropy": _ce_backward_grad})
