"""Activation, its one-op gradient ``_backward_Activation``, LeakyReLU and
``_nn_erf`` (MXNet 1.9.1).

MXNet behaviours kept on purpose: LeakyReLU's leaky/elu/selu gradients are
computed from the output, so selu's is ``lambda * (alpha + out)`` for
out <= 0 (not d/dx); rrelu runs in predict mode only."""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError, ShapeError
from ._fast import relu_into
from ._grad import set_grads, unbroadcast
from ._nn_util import _errstate, _float_unary, _need_float, _num_inputs, erf
from ._rules import fmt, same_dtype
from .registry import Param, p_float, p_str, register
from .registry import optional as _optional

_SQRT_2PI = math.sqrt(2.0 * math.pi)


@register("_nn_erf", infer=_float_unary, elemwise=True)
def _nn_erf(xp, data, out):
    """_nn_erf(data): the error function (used by LeakyReLU's gelu gradient)."""
    xp.copyto(out, erf(xp, data), casting="unsafe")


# ----------------------------------------------------------- Activation
_ACT_TYPES = ("relu", "sigmoid", "softrelu", "softsign", "tanh")


@register("Activation", params=[
    Param("act_type", p_str, doc="Activation function to be applied.", choices=_ACT_TYPES)],
    infer=_float_unary, elemwise=True)
def activation(xp, data, out, act_type):
    """Activation(data, act_type): relu, sigmoid, tanh, softrelu (softplus) or softsign."""
    with _errstate():
        if act_type == "relu":
            relu_into(xp, data, out)
        elif act_type == "sigmoid":
            xp.negative(data, out=out)
            xp.exp(out, out=out)
            out += 1
            xp.reciprocal(out, out=out)
        elif act_type == "tanh":
            xp.tanh(data, out=out)
        elif act_type == "softrelu":
            # MXNet: x itself above 20 (log1p(exp(x)) == x in float32 there)
            xp.copyto(out, xp.where(data > 20, data, xp.log1p(xp.exp(data))))
        else:
            xp.abs(data, out=out)
            out += 1
            xp.true_divide(data, out, out=out)


_OUT_GRAD_ACTS = ("relu", "sigmoid", "tanh")


def _bwd_act_rule(attrs, shapes, dtypes):
    _num_inputs(shapes, ("ograd", "output"))
    if tuple(shapes[0]) != tuple(shapes[1]):
        raise ShapeError("ograd has shape %s but the output has shape %s"
                         % (fmt(shapes[0]), fmt(shapes[1])))
    return (shapes[1],), (same_dtype(dtypes),)


@register("_backward_Activation", inputs=("ograd", "output"), params=[
    Param("act_type", p_str, doc="relu, sigmoid or tanh", choices=_OUT_GRAD_ACTS)],
    infer=_bwd_act_rule, elemwise=True)
def _backward_activation(xp, ograd, output, *, out, act_type):
    """The gradient of Activation (relu, sigmoid, tanh) from its output, in
    one op: ograd*(output > 0) (NaN where the output is NaN, as MXNet), ograd*output*(1 - output), ograd*(1 - output^2),
    each rounded as those ops would be one by one."""
    with _errstate():
        if act_type == "relu":
            # a ReLU output's sign is 1 above 0, else 0, NaN at NaN (MXNet's
            # relu_grad passes NaN through); ograd's own NaN are kept too
            xp.sign(output, out=out)
            out *= ograd
        elif act_type == "sigmoid":
            t = xp.multiply(ograd, output)
            xp.subtract(out.dtype.type(1), output, out=out)
            out *= t
        else:
            xp.multiply(output, output, out=out)
            xp.subtract(out.dtype.type(1), out, out=out)
            out *= ograd


# ------------------------------------------------------------ LeakyReLU
_LEAKY_TYPES = ("elu", "gelu", "leaky", "prelu", "rrelu", "selu")
_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_LAMBDA = 1.0507009873554804934193349852946


def _prelu_gamma_shape(g, d):
    """MXNet's expand_shape: gamma's axes align with data's first two axes
    from the right ((C,) -> (1, C, 1, 1)); the rest become 1."""
    res = [1] * len(d)
    s = len(g) - 1
    for i in range(len(d) - 1, -1, -1):
        if s >= 0 and i <= 1 and (d[i] == g[s] or g[s] == 1):
            res[i] = g[s]
            s -= 1
    if s != -1:
        raise ShapeError("cannot broadcast gamma of shape %s to data of shape %s (gamma's axes "
                         "match data's axes 0 and 1, e.g. (channels,))" % (fmt(g), fmt(d)))
    return tuple(res)


def _leaky_rule(attrs, shapes, dtypes):
    t = attrs["act_type"]
    if t == "prelu":
        _num_inputs(shapes, ("data", "gamma"), " with act_type='prelu'")
        _prelu_gamma_shape(tuple(shapes[1]), tuple(shapes[0]))
        same_dtype(dtypes)
    else:
        _num_inputs(shapes, ("data",), " with act_type=%r (gamma is for 'prelu')" % t)
    _need_float(dtypes[0])
    if t == "rrelu":
        from .registry import hooks
        if hooks.is_training():
            raise OpError("act_type='rrelu' in training mode (random slopes) is not supported "
                          "yet; in predict mode it uses slope (lower_bound + upper_bound) / 2")
        return (shapes[0], shapes[0]), (dtypes[0], dtypes[0])
    return (shapes[0],), (dtypes[0],)


@register("LeakyReLU", inputs=("data", "gamma"), params=[
    Param("act_type", p_str, "leaky", "Activation function to be applied.", choices=_LEAKY_TYPES),
    Param("slope", p_float, 0.25, "Init slope for the activation. (For leaky and elu only)"),
    Param("lower_bound", p_float, 0.125, "Lower bound of random slope. (For rrelu only)"),
    Param("upper_bound", p_float, 0.334, "Upper bound of random slope. (For rrelu only)")],
    infer=_leaky_rule, elemwise=True, num_outputs=2, output_names=("output", "mask"),
    num_visible=lambda attrs: 2 if attrs["act_type"] == "rrelu" else 1)
@_optional("gamma")
def leaky_relu(xp, data, *gamma, out, act_type="leaky", slope=0.25, lower_bound=0.125,
               upper_bound=0.334):
    """LeakyReLU(data, gamma=None, act_type='leaky', slope=0.25): leaky (x or
    slope*x), prelu (learned slope gamma), elu, selu, gelu (erf form) or rrelu
    (predict mode: slope (lower_bound+upper_bound)/2; returns (output, mask))."""
    x = data
    with _errstate():
        if act_type == "leaky":
            r = xp.where(x > 0, x, x * x.dtype.type(slope))
        elif act_type == "prelu":
            g = gamma[0].reshape(_prelu_gamma_shape(gamma[0].shape, x.shape))
            r = xp.where(x > 0, x, x * g)
        elif act_type == "elu":
            r = xp.where(x > 0, x, x.dtype.type(slope) * xp.expm1(x))
        elif act_type == "selu":
            r = x.dtype.type(_SELU_LAMBDA) * xp.where(x > 0, x,
                                                      x.dtype.type(_SELU_ALPHA) * xp.expm1(x))
        elif act_type == "gelu":
            r = 0.5 * x * (1.0 + erf(xp, x * (1.0 / math.sqrt(2.0))))
        else:   # rrelu, predict mode
            s = (np.float32(lower_bound) + np.float32(upper_bound)) / np.float32(2)
            out, mask = out
            mask[...] = s
            r = xp.where(x > 0, x, x * x.dtype.type(s))
    xp.copyto(out, r, casting="unsafe")


def _activation_grad(F, attrs, ins, outs, og):
    x, y, g = ins[0], outs[0], og[0]
    t = attrs["act_type"]
    if t in _OUT_GRAD_ACTS:
        return [F._internal._backward_Activation(g, y, act_type=t)]
    if t == "softrelu":
        return [-(g * F.expm1(-y))]
    return [g / F.square(1 + F.abs(x))]


def _backward_activation_grad(F, attrs, ins, outs, og):
    g, y, h = ins[0], ins[1], og[0]
    t = attrs["act_type"]
    dg = F._internal._backward_Activation(h, y, act_type=t)
    if t == "relu":
        return [dg, F.zeros_like(y)]
    if t == "sigmoid":
        return [dg, h * g * (1 - 2 * y)]
    return [dg, h * g * (-2 * y)]


def _leaky_grad(F, attrs, ins, outs, og):
    x, y, g = ins[0], outs[0], og[0]
    t = attrs["act_type"]
    if t == "leaky":                # MXNet: from the output (out > 0 ? 1 : slope)
        s = attrs["slope"]
        return [g * ((y > 0) * (1.0 - s) + s)]
    if t == "elu":
        pos = y > 0
        return [g * (pos + (1 - pos) * (y + attrs["slope"]))]
    if t == "selu":                 # MXNet's selu_grad(out) = lambda * (alpha + out) for out <= 0
        pos = y > 0
        return [g * (_SELU_LAMBDA * (pos + (1 - pos) * (y + _SELU_ALPHA)))]
    if t == "gelu":
        cdf = 0.5 * (1 + F._internal._nn_erf(x * (1.0 / math.sqrt(2.0))))
        return [g * (cdf + x * F.exp(-0.5 * x * x) * (1.0 / _SQRT_2PI))]
    if t == "prelu":
        gamma = ins[1]
        gb = gamma.reshape(_prelu_gamma_shape(gamma.shape, x.shape))
        pos = x > 0
        dx = g * (pos + (1 - pos) * gb)
        dgamma = unbroadcast(F, g * x * (1 - pos), gb.shape).reshape(gamma.shape)
        return [dx, dgamma]
    s = (np.float32(attrs["lower_bound"]) + np.float32(attrs["upper_bound"])) / np.float32(2)
    return [g * ((y > 0) * (1.0 - float(s)) + float(s))]       # rrelu, predict mode


set_grads({
    "_nn_erf": lambda F, at, ins, outs, og: [og[0] * (2.0 / math.sqrt(math.pi))
                                             * F.exp(-ins[0] * ins[0])],
    "Activation": _activation_grad,
    "_backward_Activation": _backward_activation_grad,
    "LeakyReLU": _leaky_grad,
})
