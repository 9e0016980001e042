"""AdamW update ops (src/operator/contrib/adamw-inl.h): ``_adamw_update``,
``_mp_adamw_update`` and their multi-weight forms ``_multi_adamw_update`` /
``_multi_mp_adamw_update``; and Group AdaGrad's ``_contrib_group_adagrad_update``
(contrib/optimizer_op-inl.h).

AdamW decouples the weight decay from the gradient step::

    g = clip(rescale_grad * grad, clip_gradient)        (clipping when >= 0)
    m = beta1*m + (1-beta1)*g;  v = beta2*v + (1-beta2)*g*g
    w = w - eta * (lr * m / (sqrt(v) + epsilon) + wd * w)

``rescale_grad`` is an input here (a 1-element array, so a loss scaler can set
it without a host round trip when building the op); when it is 0, NaN or inf
the whole update is skipped: states and weights keep their values (MXNet's
dynamic loss scaling relies on this). The multi-precision forms keep the
weights' float32 master copies (``weight32``) and float32 states, and write the
result cast to the weight's dtype. Inputs of the multi forms are flattened per
weight (``weight_0, grad_0, mean_0, var_0[, weight32_0], weight_1, ...``) with
``rescale_grad`` last; ``lrs``, ``wds``, ``etas`` hold one value per weight.
"""
from __future__ import annotations

import math

import numpy as np

from ..base import OpError, ShapeError
from ._rules import fmt
from .optimizer_multi import _multi_rule, _outs, _p_floats, _stride_mutates
from .optimizer_ops import _CLIP, _FLOATS, _LR, _P, _RESCALE, _cast_into, _rule
from .registry import Param, p_int, register
from .sparse_update import _lazy_kernel, _lazy_stypes
from .sparse import SPARSE, SparseImpl


def _scale_of(rescale_grad):
    """The rescale factor as a Python float (MXNet's GetScaleFloat: a host read)."""
    a = rescale_grad.get() if hasattr(rescale_grad, "get") else rescale_grad
    return float(np.asarray(a).reshape(-1)[0])


def _check_scale(shape, dtype, what="rescale_grad"):
    if math.prod(shape) != 1:
        raise ShapeError("%s has shape %s; it must hold one value (e.g. shape (1,))"
                         % (what, fmt(shape)))
    if dtype.kind != "f":
        raise OpError("%s has dtype %s; it must be a float array" % (what, dtype.name))


def _adamw_one(xp, w, g, mean, var, w32, out, lr, eta, wd, beta1, beta2, epsilon, scale, clip,
               multi):
    """One weight's AdamW step in the kernel's type (float32 with a master copy,
    else the weight's), in the operation order of MXNet's single (``multi=False``)
    or multi-weight kernel."""
    f = np.float32 if w32 is not None else w.dtype.type
    src = w32 if w32 is not None else w
    sg = xp.empty(src.shape, dtype=f)
    xp.multiply(g, f(scale), out=sg, dtype=f, casting="unsafe")
    if clip >= 0:
        xp.clip(sg, f(-clip), f(clip), out=sg)
    sq = xp.multiply(sg, sg)
    b1, b2 = f(beta1), f(beta2)
    if multi:
        # m = beta1*(m - g) + g; v = beta2*(v - g*g) + g*g
        xp.subtract(mean, sg, out=mean)
        xp.multiply(mean, b1, out=mean)
        xp.add(mean, sg, out=mean)
        xp.subtract(var, sq, out=var)
        xp.multiply(var, b2, out=var)
        xp.add(var, sq, out=var)
    else:
        xp.multiply(mean, b1, out=mean)
        xp.multiply(sg, f(1) - b1, out=sg)
        xp.add(mean, sg, out=mean)
        xp.multiply(var, b2, out=var)
        xp.multiply(sq, f(1) - b2, out=sq)
        xp.add(var, sq, out=var)
    t = xp.sqrt(var)
    xp.add(t, f(epsilon), out=t)
    xp.divide(mean, t, out=t)
    xp.multiply(t, f(lr), out=t)
    xp.multiply(src, f(wd), out=sg)
    xp.add(t, sg, out=t)
    xp.multiply(t, f(eta), out=t)
    if w32 is not None:
        xp.subtract(w32, t, out=w32)
        _cast_into(xp, out, w32)
    else:
        xp.subtract(w, t, out=out)


def _skip(scale):
    return not math.isfinite(scale) or scale == 0


# ------------------------------------------------------------ single weight

_ADAMW_PARAMS = [_LR, _P("beta1", 0.9, "decay rate of the 1st moment estimates"),
                 _P("beta2", 0.999, "decay rate of the 2nd moment estimates"),
                 _P("epsilon", 1e-8, "small constant for numerical stability"),
                 _P("wd", 0.0, "weight decay"),
                 Param("eta", _LR.parse, doc="learning rate schedule multiplier"), _CLIP]


def _single_rule(n_same, n_f32):
    base = _rule(n_same, n_f32)

    def rule(attrs, shapes, dtypes):
        _check_scale(shapes[-1], dtypes[-1])
        return base(attrs, shapes[:-1], dtypes[:-1])
    return rule


@register("_adamw_update", inputs=("weight", "grad", "mean", "var", "rescale_grad"),
          params=_ADAMW_PARAMS, infer=_single_rule(4, 0), mutates=(2, 3))
def _adamw_update(xp, weight, grad, mean, var, rescale_grad, out, lr, eta, beta1=0.9,
                  beta2=0.999, epsilon=1e-8, wd=0.0, clip_gradient=-1.0):
    """_adamw_update(weight, grad, mean, var, rescale_grad, lr, eta, ...): one AdamW
    step (mean and var updated in place); skipped when rescale_grad is 0, NaN or inf.
    Called through mx.nd.contrib.adamw_update."""
    scale = _scale_of(rescale_grad)
    if _skip(scale):
        _cast_into(xp, out, weight)
        return
    _adamw_one(xp, weight, grad, mean, var, None, out, lr, eta, wd, beta1, beta2, epsilon,
               scale, clip_gradient, False)


@register("_mp_adamw_update", inputs=("weight", "grad", "mean", "var", "weight32",
                                      "rescale_grad"),
          params=_ADAMW_PARAMS, infer=_single_rule(2, 3), mutates=(2, 3, 4))
def _mp_adamw_update(xp, weight, grad, mean, var, weight32, rescale_grad, out, lr, eta,
                     beta1=0.9, beta2=0.999, epsilon=1e-8, wd=0.0, clip_gradient=-1.0):
    """_mp_adamw_update(weight, grad, mean, var, weight32, rescale_grad, lr, eta, ...):
    AdamW on the float32 master weight32 (updated in place with mean and var), the
    result cast to weight's dtype. Called through mx.nd.contrib.mp_adamw_update."""
    scale = _scale_of(rescale_grad)
    if _skip(scale):
        _cast_into(xp, out, weight)
        return
    _adamw_one(xp, weight, grad, mean, var, weight32, out, lr, eta, wd, beta1, beta2, epsilon,
               scale, clip_gradient, False)


# ------------------------------------------------------------- multi weight

_MULTI_PARAMS = [Param("lrs", _p_floats, doc="learning rates"),
                 _P("beta1", 0.9, "decay rate of the 1st moment estimates"),
                 _P("beta2", 0.999, "decay rate of the 2nd moment estimates"),
                 _P("epsilon", 1e-8, "small constant for numerical stability"),
                 Param("wds", _p_floats, doc="weight decays"),
                 Param("etas", _p_floats, doc="learning rate schedule multipliers"), _CLIP,
                 Param("num_weights", p_int, 1, "number of updated weights")]
_LISTS = (("lrs", "learning rates"), ("wds", "weight decays"),
          ("etas", "learning rates schedule multiplier"))


def _multi_adamw_rule(names, n_f32):
    base = _multi_rule(names, n_f32, lists=_LISTS)
    stride = len(names)

    def rule(attrs, shapes, dtypes):
        n = attrs["num_weights"]
        if len(shapes) != stride * n + 1:
            raise OpError("expected %d inputs (num_weights=%d, %d per weight: %s; then "
                          "rescale_grad), got %d" % (stride * n + 1, n, stride,
                                                     ", ".join(names), len(shapes)))
        _check_scale(shapes[-1], dtypes[-1])
        return base(attrs, shapes[:-1], dtypes[:-1])
    return rule


def _make_multi(name, names, n_f32):
    stride = len(names)
    mp = stride == 5

    def kernel(xp, *ins, out, lrs, wds, etas, beta1=0.9, beta2=0.999, epsilon=1e-8,
               clip_gradient=-1.0, num_weights=1):
        outs = _outs(out)
        scale = _scale_of(ins[-1])
        for i, o in enumerate(outs):
            b = i * stride
            if _skip(scale):
                _cast_into(xp, o, ins[b])
                continue
            _adamw_one(xp, ins[b], ins[b + 1], ins[b + 2], ins[b + 3],
                       ins[b + 4] if mp else None, o, lrs[i], etas[i], wds[i], beta1, beta2,
                       epsilon, scale, clip_gradient, True)

    kernel.__name__ = name
    kernel.__doc__ = (
        "%s(*data, lrs, wds, etas, num_weights, ...): AdamW steps of num_weights weights in "
        "one op; data is %s per weight, then rescale_grad (the update is skipped when it is "
        "0, NaN or inf). Called through mx.nd.contrib.%s."
        % (name, ", ".join(n + "i" for n in names), name.lstrip("_")))
    register(name, inputs=("*data",), variadic=True, params=_MULTI_PARAMS,
             num_outputs=lambda a: a["num_weights"],
             mutates=_stride_mutates(stride, 2, stride - 1),
             infer=_multi_adamw_rule(names, n_f32))(kernel)


_make_multi("_multi_adamw_update", ("weight_", "grad_", "mean_", "var_"), 0)
_make_multi("_multi_mp_adamw_update", ("weight_", "grad_", "mean_", "var_", "weight32_"), 3)


# ----------------------------------------------------------- Group AdaGrad

def _group_adagrad_rule(attrs, shapes, dtypes):
    if len(shapes) != 3:
        raise OpError("expects 3 inputs (weight, grad, history), got %d" % len(shapes))
    w, g, h = (tuple(s) for s in shapes)
    if g != w:
        raise ShapeError("grad has shape %s but weight has %s; they must match"
                         % (fmt(g), fmt(w)))
    if len(w) < 2:
        raise ShapeError("weight has shape %s; group_adagrad_update needs a weight of at "
                         "least 2 dimensions (one learning rate per row)" % fmt(w))
    if h not in ((w[0],), (w[0], 1)):
        raise ShapeError("history has shape %s; it must be (%d, 1), one value per row of "
                         "the weight %s" % (fmt(h), w[0], fmt(w)))
    d = dtypes[0]
    if d not in _FLOATS:
        raise OpError("weight has dtype %s; update ops need float16, float32 or float64"
                      % d.name)
    for nm, di in zip(("grad", "history"), dtypes[1:]):
        if di != d:
            raise OpError("%s has dtype %s but weight has %s; they must match"
                          % (nm, di.name, d.name))
    return (w,), (d,)


@register("_contrib_group_adagrad_update", inputs=("weight", "grad", "history"),
          params=[_LR, _RESCALE, _CLIP, _P("epsilon", 1e-5, "epsilon for numerical stability")],
          infer=_group_adagrad_rule, mutates=(2,))
def _contrib_group_adagrad_update(xp, weight, grad, history, out, lr, rescale_grad=1.0,
                                  clip_gradient=-1.0, epsilon=1e-5):
    """group_adagrad_update(weight, grad, history, lr, rescale_grad=1, clip_gradient=-1,
    epsilon=1e-5): AdaGrad with one learning rate per row::

        g = clip(grad * rescale_grad, clip_gradient)
        history += mean(square(g), axis=1)
        weight -= lr * g / sqrt(history + epsilon)

    With a row_sparse gradient only its rows (and their history) are updated."""
    f = weight.dtype.type
    rows = weight.shape[0]
    g = xp.multiply(grad, f(rescale_grad)).reshape(rows, -1)
    if clip_gradient >= 0:
        xp.clip(g, f(-clip_gradient), f(clip_gradient), out=g)
    h = history.reshape(rows, 1) + (g * g).sum(axis=1, keepdims=True, dtype=f) / f(g.shape[1])
    xp.copyto(history, h.reshape(history.shape))
    step = f(lr) * g / xp.sqrt(h + f(epsilon))
    xp.copyto(out, (weight.reshape(rows, -1) - step).reshape(out.shape))


SPARSE["_contrib_group_adagrad_update"] = SparseImpl(
    _lazy_stypes(1, needs_lazy_flag=False), _lazy_kernel("_contrib_group_adagrad_update"))

