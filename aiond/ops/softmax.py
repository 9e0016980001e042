"""softmax, log_softmax, SoftmaxActivation, SoftmaxOutput (alias Softmax)
and softmax_cross_entropy (MXNet 1.9.1).

MXNet behaviours kept on purpose:

- SoftmaxOutput ignores the incoming head gradient; with out_grad=True it
  multiplies its gradient by the softmax *output* (MXNet passes the output
  where the head gradient belongs);
- SoftmaxOutput(multi_output=True, normalization='null'|'batch') also
  divides by the spatial size; normalization never applies to a
  probability label (label.shape == data.shape);
- SoftmaxActivation(mode='instance') normalises over the last axis but its
  gradient reduces over axis 1 (the same for 2-D data);
- softmax_cross_entropy clips probabilities at 1e-8.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._fast import last_axis_max
from ._grad import set_grads
from ._nn_util import (_F32, _errstate, _need_float, _num_inputs, _p_opt_bool, _p_opt_float,
                       _prod)
from ._rules import fmt, same_dtype
from .registry import Param, p_bool, p_dtype, p_float, p_int, p_str, register
from .registry import optional as _optional


def _softmax_params(with_length=True):
    return [Param("axis", p_int, -1, "The axis along which to compute softmax."),
            Param("temperature", _p_opt_float, None, "Temperature parameter in softmax"),
            Param("dtype", p_dtype, None, "DType of the output (None: the input's)."),
            Param("use_length", _p_opt_bool, False,
                  "Whether to use the length input as a mask over the data input."
                  if with_length else
                  "Not supported by log_softmax (MXNet 1.9.1 has no length input).")]


def _softmax_rule(attrs, shapes, dtypes):
    d = tuple(shapes[0])
    if attrs["use_length"]:
        _num_inputs(shapes, ("data", "length"), " with use_length=True")
    else:
        _num_inputs(shapes, ("data",), " (pass use_length=True to use a length input)")
    _need_float(dtypes[0])
    nd = len(d)
    if nd == 0 or not -nd <= attrs["axis"] < nd:
        raise OpError("axis %d exceeds the input dimension of %d" % (attrs["axis"], nd))
    if attrs["use_length"]:
        ax = attrs["axis"] % nd
        want = d[:ax] + d[ax + 1:]
        if tuple(shapes[1]) != want:
            raise ShapeError("length has shape %s but expected %s (data's shape without axis %d)"
                             % (fmt(shapes[1]), fmt(want), attrs["axis"]))
    odt = attrs["dtype"] if attrs["dtype"] is not None else dtypes[0]
    _need_float(odt, "dtype")
    return (d,), (odt,)


def _softmax_core(xp, data, axis, temperature, length=None, log=False):
    """Softmax (or log-softmax) of data along axis, MXNet style:
    exp((x - max) / T) / sum. Masks positions >= length to 0 when given."""
    if data.size == 0:
        return data     # a zero-size axis has no max: nothing to normalise
    x = data.astype(_F32) if data.dtype == np.float16 else data
    mask = None
    with _errstate():
        if length is not None:
            shp = [1] * x.ndim
            shp[axis] = x.shape[axis]
            mask = xp.arange(x.shape[axis]).reshape(shp) < xp.expand_dims(length, axis)
            m = xp.max(xp.where(mask, x, -xp.inf), axis=axis, keepdims=True)
            m = xp.where(xp.isfinite(m), m, 0)
        elif axis == x.ndim - 1:
            m = last_axis_max(xp, x)
        else:
            m = xp.max(x, axis=axis, keepdims=True)
        z = x - m
        if temperature is not None and temperature != 1.0:
            z = z / x.dtype.type(temperature)
        e = xp.exp(z)
        if mask is not None:
            e = xp.where(mask, e, 0)
        s = xp.sum(e, axis=axis, keepdims=True)
        if log:
            return z - xp.log(s)
        if mask is not None:
            s = xp.where(s == 0, 1, s)
        return e / s


@register("softmax", inputs=("data", "length"), params=_softmax_params(), infer=_softmax_rule)
@_optional("length")
def softmax(xp, data, *length, out, axis=-1, temperature=None, dtype=None, use_length=False):
    """softmax(data, length=None, axis=-1, temperature=None, dtype=None,
    use_length=False): exp(x/T) normalised along axis; with use_length,
    positions at or past length[...] along axis are 0."""
    ax = axis % data.ndim
    ln = length[0].astype(np.int64) if use_length else None
    xp.copyto(out, _softmax_core(xp, data, ax, temperature, ln), casting="unsafe")


@register("log_softmax", params=_softmax_params(False), infer=_softmax_rule)
def log_softmax(xp, data, out, axis=-1, temperature=None, dtype=None, use_length=False):
    """log_softmax(data, axis=-1, temperature=None, dtype=None): log of softmax."""
    xp.copyto(out, _softmax_core(xp, data, axis % data.ndim, temperature, log=True),
              casting="unsafe")


def _sa_rule(attrs, shapes, dtypes):
    _num_inputs(shapes, ("data",))
    _need_float(dtypes[0])
    if len(shapes[0]) == 0:
        raise ShapeError("data must have at least 1 dimension, got shape ()")
    if attrs["mode"] == "channel" and len(shapes[0]) < 3:
        raise ShapeError("mode='channel' needs data with at least 3 dimensions, got shape %s"
                         % fmt(shapes[0]))
    return (shapes[0],), (dtypes[0],)


@register("SoftmaxActivation", params=[
    Param("mode", p_str, "instance", "instance: softmax over the last axis; channel: over axis 1.",
          choices=("channel", "instance"))], infer=_sa_rule)
def softmax_activation(xp, data, out, mode="instance"):
    """SoftmaxActivation(data, mode='instance'): softmax over the last axis
    (instance) or over axis 1 (channel)."""
    ax = data.ndim - 1 if mode == "instance" else 1
    xp.copyto(out, _softmax_core(xp, data, ax, None), casting="unsafe")


# -------------------------------------------------------- SoftmaxOutput
_SO_PARAMS = [
    Param("grad_scale", p_float, 1.0, "Scales the gradient by a float factor."),
    Param("ignore_label", p_float, -1.0, "Label ignored in backward when use_ignore is set."),
    Param("multi_output", p_bool, False, "Softmax along axis 1 (labels (n, spatial...))."),
    Param("use_ignore", p_bool, False, "Whether ignore_label contributes no gradient."),
    Param("preserve_shape", p_bool, False, "Softmax along the last axis."),
    Param("normalization", p_str, "null", "Normalizes the gradient.",
          choices=("batch", "null", "valid")),
    Param("out_grad", p_bool, False, "Multiplies the gradient (MXNet: by the output)."),
    Param("smooth_alpha", p_float, 0.0, "Label smoothing constant for the backward pass."),
]


def _so_rule(attrs, shapes, dtypes):
    _num_inputs(shapes, ("data", "label"))
    d, lab = tuple(shapes[0]), tuple(shapes[1])
    if len(d) == 0:
        raise ShapeError("data must have at least 1 dimension, got shape ()")
    if d != lab:
        if attrs["multi_output"]:
            if len(d) < 2:
                raise ShapeError("multi_output=True needs data with at least 2 dimensions, "
                                 "got %s" % fmt(d))
            l1 = (d[0], _prod(d) // d[0] // d[1] if d[1] else 0)
            l2 = (d[0],) + d[2:]
            l3 = (d[0], 1) + d[2:]
            if lab not in (l1, l2, l3):
                raise ShapeError("label has shape %s but expected %s or %s for data %s with "
                                 "multi_output=True" % (fmt(lab), fmt(l1), fmt(l2), fmt(d)))
        elif lab != d[:-1]:
            raise ShapeError("label has shape %s but expected %s (data's shape without its last "
                             "axis) or %s (a probability label)" % (fmt(lab), fmt(d[:-1]), fmt(d)))
    dt = same_dtype(dtypes)
    _need_float(dt)
    return (d,), (dt,)


def _so_view(shape, multi_output, preserve_shape):
    n = _prod(shape)
    if multi_output:
        return (shape[0], shape[1], n // shape[0] // shape[1] if shape[1] else 0)
    if preserve_shape:
        return (n // shape[-1] if shape[-1] else 0, shape[-1])
    return (shape[0], n // shape[0] if shape[0] else 0)


@register("SoftmaxOutput", inputs=("data", "label"), params=_SO_PARAMS, infer=_so_rule,
          aliases=("Softmax",))
def softmax_output(xp, data, label, out, grad_scale=1.0, ignore_label=-1.0, multi_output=False,
                   use_ignore=False, preserve_shape=False, normalization="null", out_grad=False,
                   smooth_alpha=0.0):
    """SoftmaxOutput(data, label, ...): softmax forward (over data reshaped to
    (n, -1) by default, axis 1 with multi_output, the last axis with
    preserve_shape); backward is the cross-entropy gradient
    ``(softmax - onehot(label)) * grad_scale`` (normalised), ignoring the head
    gradient."""
    v = _so_view(data.shape, multi_output, preserve_shape)
    xp.copyto(out.reshape(v), _softmax_core(xp, data.reshape(v), 1, None), casting="unsafe")


def _so_backward_rule(attrs, shapes, dtypes):
    return (shapes[0],), (dtypes[0],)


@register("_backward_SoftmaxOutput", inputs=("output", "label"), params=_SO_PARAMS,
          infer=_so_backward_rule)
def _backward_softmax_output(xp, y, label, out, grad_scale=1.0, ignore_label=-1.0,
                             multi_output=False, use_ignore=False, preserve_shape=False,
                             normalization="null", out_grad=False, smooth_alpha=0.0):
    """The gradient of SoftmaxOutput w.r.t. data, from its output and label."""
    dt = y.dtype.type
    if label.shape == y.shape:          # a probability label: no normalisation
        g = (y - label) * dt(grad_scale)
        if out_grad:
            g = g * y
        xp.copyto(out, g, casting="unsafe")
        return
    ign = int(ignore_label)
    lab = label.astype(np.int64)        # static_cast<int>: truncates toward zero
    if multi_output:
        n, k, s = _so_view(y.shape, True, False)
        y3 = y.reshape(n, k, s)
        lab2 = lab.reshape(n, s)
        g = y3 - (xp.arange(k).reshape(1, k, 1) == lab2[:, None, :]).astype(y.dtype)
        if use_ignore:
            g = xp.where((lab2 == ign)[:, None, :], dt(0), g)
        if normalization == "batch":
            cnt = n
        elif normalization == "valid":
            cnt = max(int(lab2.size - xp.count_nonzero(lab2 == ign)), 1)
        else:
            cnt = 1
        g = g * dt(grad_scale / (1 if normalization == "valid" else s) / cnt)
        if out_grad:
            g = g * y3
    else:
        rows, cols = _so_view(y.shape, False, preserve_shape)
        y2 = y.reshape(rows, cols)
        flat = lab.reshape(-1)
        lr = flat[:rows]
        hot = xp.arange(cols).reshape(1, cols) == lr[:, None]
        if smooth_alpha == 0.0:
            g = y2 - hot.astype(y.dtype)
        else:
            g = y2 - xp.where(hot, dt(1.0 - smooth_alpha), dt(smooth_alpha / (cols - 1)))
        if use_ignore:
            g = xp.where((lr == ign)[:, None], dt(0), g)
        if normalization == "batch":
            cnt = flat.size
        elif normalization == "valid":
            cnt = max(int(flat.size - xp.count_nonzero(flat == ign)), 1)
        else:
            cnt = 1
        g = g * dt(grad_scale / cnt)
        if out_grad:
            g = g * y2
    xp.copyto(out, g.reshape(out.shape), casting="unsafe")


def _sce_rule(attrs, shapes, dtypes):
    _num_inputs(shapes, ("data", "label"))
    d, lab = tuple(shapes[0]), tuple(shapes[1])
    if len(d) != 2:
        raise ShapeError("only accepts 2-D data, got shape %s" % fmt(d))
    if len(lab) != 1:
        raise ShapeError("only accepts a 1-D label, got shape %s" % fmt(lab))
    if d[0] != lab[0]:
        raise ShapeError("data %s and label %s do not match: %d rows vs %d labels"
                         % (fmt(d), fmt(lab), d[0], lab[0]))
    dt = same_dtype(dtypes)
    _need_float(dt)
    return ((1,),), (dt,)


def _picked(xp, data, label):
    idx = xp.clip(label.astype(np.int64), 0, data.shape[1] - 1)
    return idx, xp.arange(data.shape[1]).reshape(1, -1) == idx[:, None]


@register("softmax_cross_entropy", inputs=("data", "label"), infer=_sce_rule)
def softmax_cross_entropy(xp, data, label, out):
    """softmax_cross_entropy(data, label): sum over rows of
    -log(softmax(data)[label]), shape (1,)."""
    p = _softmax_core(xp, data, 1, None)
    _, hot = _picked(xp, data, label)
    picked = xp.sum(xp.where(hot, p, 0), axis=1)
    with _errstate():
        out[...] = -xp.sum(xp.log(xp.maximum(picked, p.dtype.type(1e-8))))


@register("_backward_softmax_cross_entropy", inputs=("data", "label"),
          infer=lambda a, s, d: ((s[0],), (d[0],)))
def _backward_softmax_cross_entropy(xp, data, label, out):
    """softmax(data) - onehot(label): the gradient of softmax_cross_entropy for a head of 1."""
    _, hot = _picked(xp, data, label)
    xp.copyto(out, _softmax_core(xp, data, 1, None) - hot, casting="unsafe")


def _softmax_grad(F, attrs, ins, outs, og):
    y, g = outs[0], og[0]
    ax = attrs["axis"]
    gi = y * (g - F.sum(g * y, axis=ax, keepdims=True))
    t = attrs["temperature"]
    if t is not None and t != 1.0:
        gi = gi / t
    if gi.dtype != ins[0].dtype:
        gi = gi.astype(ins[0].dtype)
    return [gi] + [None] * (len(ins) - 1)


def _log_softmax_grad(F, attrs, ins, outs, og):
    y, g = outs[0], og[0]
    gi = g - F.exp(y) * F.sum(g, axis=attrs["axis"], keepdims=True)
    t = attrs["temperature"]
    if t is not None and t != 1.0:
        gi = gi / t
    if gi.dtype != ins[0].dtype:
        gi = gi.astype(ins[0].dtype)
    return [gi]


def _softmax_activation_grad(F, attrs, ins, outs, og):
    y, g = outs[0], og[0]
    if y.ndim == 1:
        return [y * (g - F.sum(g * y, axis=0, keepdims=True))]
    # MXNet reduces over axis 1 of (n, c, rest) in both modes
    v = (y.shape[0], y.shape[1], -1)
    y3, g3 = y.reshape(v), g.reshape(v)
    return [(y3 * (g3 - F.sum(g3 * y3, axis=1, keepdims=True))).reshape(y.shape)]


def _so_grad(F, attrs, ins, outs, og):
    return [F._internal._backward_SoftmaxOutput(outs[0], ins[1], **attrs), None]


set_grads({
    "softmax": _softmax_grad,
    "log_softmax": _log_softmax_grad,
    "SoftmaxActivation": _softmax_activation_grad,
    "SoftmaxOutput": _so_grad,
    "softmax_cross_entropy": lambda F, at, ins, outs, og: [
        F._internal._backward_softmax_cross_entropy(ins[0], ins[1]) * og[0], None],
})
