"""LAMB's update ops (``lamb_update_phase1/2``, ``mp_lamb_update_phase1/2``;
``multi_lamb_update`` is in ``optimizer_multi.py``), and one-op forms of
the updates MXNet's Python optimizers compose from several NDArray ops
(``_adagrad_update``, ``_adadelta_update``, ``_adamax_update``,
``_nadam_update``), with the float arithmetic of that sequence of ops (scalars
taken as double, as MXNet's scalar ops take them). See ``optimizer_ops.py``.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._rules import fmt
from .optimizer_ops import (_CLIP, _D, _F32, _FLOATS, _LR, _LRD, _P, _RESCALE, _RESCALED,
                            _WDD, _cast_into, _rescaled, _rule, _scratch, p_f32)
from .registry import Param, p_bool, p_int, register

__all__ = []


# ------------------------------------------------------------------ LAMB

_LAMB1_PARAMS = [_P("beta1", 0.9), _P("beta2", 0.999), _P("epsilon", 1e-6),
                 Param("t", p_int, doc="index update count"),
                 Param("bias_correction", p_bool, True), Param("wd", p_f32), _RESCALE, _CLIP]
_LAMB2_PARAMS = [_LR, _P("lower_bound", -1.0), _P("upper_bound", -1.0)]


def _lamb1(xp, w, grad, mean, var, out, f, beta1, beta2, epsilon, t, bias_correction, wd,
           rescale, clip):
    g = _rescaled(xp, grad, f, rescale, clip)
    a = xp.empty(g.shape, dtype=f)
    b1, b2 = f(beta1), f(beta2)
    xp.multiply(mean, b1, out=mean)
    xp.multiply(g, f(1) - b1, out=a)
    xp.add(mean, a, out=mean)
    xp.multiply(var, b2, out=var)
    xp.multiply(g, f(1) - b2, out=a)
    xp.multiply(a, g, out=a)
    xp.add(var, a, out=var)
    if bias_correction:
        # C: mean / (1. - beta1_t) in double; var / (1 - beta2_t) in the float type
        b1t = f(float(b1) ** t)
        b2t = f(float(b2) ** t)
        xp.divide(mean, np.float64(1.0 - float(b1t)), out=g, casting="unsafe")
        xp.divide(var, f(1) - b2t, out=a)
    else:
        xp.copyto(g, mean)
        xp.copyto(a, var)
    xp.sqrt(a, out=a)
    xp.add(a, f(epsilon), out=a)
    xp.divide(g, a, out=g)
    xp.multiply(w, f(wd), out=a)
    xp.add(g, a, out=out)


@register("lamb_update_phase1", inputs=("weight", "grad", "mean", "var"),
          params=_LAMB1_PARAMS, infer=_rule(4), mutates=(2, 3), elemwise=True)
def lamb_update_phase1(xp, weight, grad, mean, var, out, t, wd, beta1=0.9, beta2=0.999,
                       epsilon=1e-6, bias_correction=True, rescale_grad=1.0,
                       clip_gradient=-1.0):
    """lamb_update_phase1(weight, grad, mean, var, t, wd, ...): updates mean and var and
    returns the LAMB direction g."""
    _lamb1(xp, weight, grad, mean, var, out, weight.dtype.type, beta1, beta2, epsilon, t,
           bias_correction, wd, rescale_grad, clip_gradient)


@register("mp_lamb_update_phase1", inputs=("weight", "grad", "mean", "var", "weight32"),
          params=_LAMB1_PARAMS, infer=_rule(2, 3, out_f32=True), mutates=(2, 3),
          elemwise=True)
def mp_lamb_update_phase1(xp, weight, grad, mean, var, weight32, out, t, wd, beta1=0.9,
                          beta2=0.999, epsilon=1e-6, bias_correction=True, rescale_grad=1.0,
                          clip_gradient=-1.0):
    """mp_lamb_update_phase1(weight, grad, mean, var, weight32, t, wd, ...): phase 1 in
    float32 on the master copy; g is float32."""
    _lamb1(xp, weight32, grad, mean, var, out, np.float32, beta1, beta2, epsilon, t,
           bias_correction, wd, rescale_grad, clip_gradient)


def _lamb2_rule(mp):
    def rule(attrs, shapes, dtypes):
        w, g = shapes[0], shapes[1]
        if g != w or (mp and shapes[4] != w):
            raise ShapeError("weight %s and g %s must have the same shape" % (fmt(w), fmt(g)))
        for i in (2, 3):
            if shapes[i][:1] != (1,):
                raise ShapeError("r%d must have shape (1,), got %s" % (i - 1, fmt(shapes[i])))
        d0 = dtypes[0]
        if d0 not in _FLOATS:
            raise OpError("the weight has dtype %s; update ops need a float dtype" % d0.name)
        want = [_F32] * 4 if mp else [d0] * 3
        for i, d in enumerate(dtypes[1:]):
            if d != want[i]:
                raise OpError("input %d has dtype %s, expected %s" % (i + 1, d.name, want[i].name))
        return (w,), (d0,)
    return rule


def _trust_lr(f, lr, r1, r2, lower_bound, upper_bound):
    r1 = f(float(r1.reshape(-1)[0]))
    r2 = f(float(r2.reshape(-1)[0]))
    if lower_bound >= 0:
        r1 = max(r1, f(lower_bound))
    if upper_bound >= 0:
        r1 = min(r1, f(upper_bound))
    lr = f(lr)
    if r1 == 0 or r2 == 0:
        return lr
    return lr * r1 / r2


@register("lamb_update_phase2", inputs=("weight", "g", "r1", "r2"), params=_LAMB2_PARAMS,
          infer=_lamb2_rule(False))
def lamb_update_phase2(xp, weight, g, r1, r2, out, lr, lower_bound=-1.0, upper_bound=-1.0):
    """lamb_update_phase2(weight, g, r1, r2, lr, ...): weight -= lr*(r1/r2)*g, r1 being
    the weight's norm (bounded) and r2 g's norm."""
    f = weight.dtype.type
    lr_ = _trust_lr(f, lr, r1, r2, lower_bound, upper_bound)
    t = _scratch(xp, weight)
    xp.multiply(g, lr_, out=t)
    xp.subtract(weight, t, out=out)


@register("mp_lamb_update_phase2", inputs=("weight", "g", "r1", "r2", "weight32"),
          params=_LAMB2_PARAMS, infer=_lamb2_rule(True))
def mp_lamb_update_phase2(xp, weight, g, r1, r2, weight32, out, lr, lower_bound=-1.0,
                          upper_bound=-1.0):
    """mp_lamb_update_phase2(weight, g, r1, r2, weight32, lr, ...): out = weight32 -
    lr*(r1/r2)*g. As in MXNet 1.9.1, ``weight32`` itself is not updated."""
    lr_ = _trust_lr(np.float32, lr, r1, r2, lower_bound, upper_bound)
    t = _scratch(xp, weight32)
    xp.multiply(g, lr_, out=t)
    xp.subtract(weight32, t, out=t)
    _cast_into(xp, out, t)


# ------------------------------------- fused forms of MXNet's Python updates

@register("_adagrad_update", inputs=("weight", "grad", "history"),
          params=[_LRD, _D("epsilon", 1e-7), _WDD, _RESCALED, _CLIP],
          infer=_rule(3), mutates=(2,), elemwise=True)
def _adagrad_update(xp, weight, grad, history, out, lr, epsilon=1e-7, wd=0.0,
                    rescale_grad=1.0, clip_gradient=-1.0):
    """_adagrad_update(weight, grad, history, lr, ...): MXNet's dense AdaGrad step:
    g = clip(grad*rescale_grad); history += g*g; weight += (g/sqrt(history + epsilon)
    + weight*wd) * -lr."""
    f = weight.dtype.type
    g = _rescaled(xp, grad, f, rescale_grad, clip_gradient)
    t = _scratch(xp, g)
    xp.multiply(g, g, out=t)
    xp.add(history, t, out=history)
    xp.add(history, f(epsilon), out=t)
    xp.sqrt(t, out=t)
    xp.divide(g, t, out=g)
    xp.multiply(weight, f(wd), out=t)
    xp.add(g, t, out=g)
    xp.multiply(g, f(-lr), out=g)
    xp.add(weight, g, out=out)


@register("_adadelta_update", inputs=("weight", "grad", "acc_g", "acc_delta"),
          params=[_D("rho", 0.9), _D("epsilon", 1e-5), _WDD, _RESCALED, _CLIP],
          infer=_rule(4), mutates=(1, 2, 3), elemwise=True)
def _adadelta_update(xp, weight, grad, acc_g, acc_delta, out, rho=0.9, epsilon=1e-5, wd=0.0,
                     rescale_grad=1.0, clip_gradient=-1.0):
    """_adadelta_update(weight, grad, acc_g, acc_delta, rho, epsilon, ...): MXNet's
    AdaDelta step, which also rescales ``grad`` in place (``grad *= rescale_grad``)."""
    f = weight.dtype.type
    if rescale_grad != 1:
        xp.multiply(grad, f(rescale_grad), out=grad)
    g = _scratch(xp, grad)
    if clip_gradient >= 0:
        xp.clip(grad, f(-clip_gradient), f(clip_gradient), out=g)
    else:
        xp.copyto(g, grad)
    r, c = f(rho), f(1.0 - rho)
    t = _scratch(xp, g)
    u = _scratch(xp, g)
    xp.multiply(acc_g, r, out=acc_g)
    xp.multiply(g, c, out=t)
    xp.multiply(t, g, out=t)
    xp.add(acc_g, t, out=acc_g)
    # delta = sqrt(acc_delta + eps) / sqrt(acc_g + eps) * g
    xp.add(acc_delta, f(epsilon), out=t)
    xp.sqrt(t, out=t)
    xp.add(acc_g, f(epsilon), out=u)
    xp.sqrt(u, out=u)
    xp.divide(t, u, out=t)
    xp.multiply(t, g, out=t)
    xp.multiply(acc_delta, r, out=acc_delta)
    xp.multiply(t, c, out=u)
    xp.multiply(u, t, out=u)
    xp.add(acc_delta, u, out=acc_delta)
    xp.multiply(weight, f(wd), out=u)
    xp.add(t, u, out=t)
    xp.subtract(weight, t, out=out)


@register("_adamax_update", inputs=("weight", "grad", "mean", "var"),
          params=[_LRD, _D("beta1", 0.9), _D("beta2", 0.999), _WDD, _RESCALED, _CLIP],
          infer=_rule(4), mutates=(2, 3), elemwise=True)
def _adamax_update(xp, weight, grad, mean, var, out, lr, beta1=0.9, beta2=0.999, wd=0.0,
                   rescale_grad=1.0, clip_gradient=-1.0):
    """_adamax_update(weight, grad, m, u, lr, ...): MXNet's Adamax step (``lr`` already
    divided by 1 - beta1**t): g = clip(grad*rescale_grad + wd*weight); m = beta1*m +
    (1-beta1)*g; u = max(beta2*u, |g|); weight -= lr*m/u."""
    f = weight.dtype.type
    g = _rescaled(xp, grad, f, rescale_grad, clip_gradient, weight, wd)
    t = _scratch(xp, g)
    xp.multiply(mean, f(beta1), out=mean)
    xp.multiply(g, f(1.0 - beta1), out=t)
    xp.add(mean, t, out=mean)
    xp.multiply(var, f(beta2), out=var)
    xp.abs(g, out=t)
    xp.maximum(var, t, out=var)
    xp.multiply(mean, f(lr), out=t)
    xp.divide(t, var, out=t)
    xp.subtract(weight, t, out=out)


@register("_nadam_update", inputs=("weight", "grad", "mean", "var"),
          params=[_LRD, _D("beta1", 0.9), _D("beta2", 0.999), _D("epsilon", 1e-8),
                  _D("momentum_t"), _D("momentum_t_1"), _D("m_schedule"),
                  _D("m_schedule_next"), _D("beta2_t"), _WDD, _RESCALED, _CLIP],
          infer=_rule(4), mutates=(2, 3), elemwise=True)
def _nadam_update(xp, weight, grad, mean, var, out, lr, beta1=0.9, beta2=0.999, epsilon=1e-8,
                  momentum_t=0.0, momentum_t_1=0.0, m_schedule=0.0, m_schedule_next=0.0,
                  beta2_t=0.0, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    """_nadam_update(weight, grad, m, v, ...): MXNet's Nadam step, the momentum
    schedule computed by the optimizer."""
    f = weight.dtype.type
    g = _rescaled(xp, grad, f, rescale_grad, clip_gradient, weight, wd)
    t = _scratch(xp, g)
    u = _scratch(xp, g)
    xp.multiply(mean, f(beta1), out=mean)
    xp.multiply(g, f(1.0 - beta1), out=t)
    xp.add(mean, t, out=mean)
    xp.multiply(var, f(beta2), out=var)
    xp.multiply(g, f(1.0 - beta2), out=t)
    xp.multiply(t, g, out=t)
    xp.add(var, t, out=var)
    xp.divide(g, f(1.0 - m_schedule), out=g)                 # grad_prime
    xp.divide(mean, f(1.0 - m_schedule_next), out=t)        # m_t_prime
    xp.multiply(g, f(1.0 - momentum_t), out=g)
    xp.multiply(t, f(momentum_t_1), out=t)
    xp.add(g, t, out=g)                                     # m_t_bar
    xp.divide(var, f(1.0 - beta2_t), out=u)                 # v_t_prime
    xp.sqrt(u, out=u)
    xp.add(u, f(epsilon), out=u)
    xp.multiply(g, f(lr), out=g)
    xp.divide(g, u, out=g)
    xp.subtract(weight, g, out=out)
