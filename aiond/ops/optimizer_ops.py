"""Fused optimizer update ops: MXNet 1.9.1's ``sgd_update``, ``sgd_mom_update``,
``adam_update``, ``rmsprop_update``, ... with MXNet's names, parameters and
float arithmetic (operation order of ``src/operator/optimizer_op-inl.h``, the
scalar parameters cast to the weight's dtype first, as ``static_cast<DType>``).

Each update is one engine op. The optimizer passes ``out=weight``; the state
inputs (momentum, mean, var, master weights) are updated in place and listed
in ``mutates`` so the engine orders them as writes. Kernels are written
against ``xp`` with in-place ufuncs and at most a few scratch buffers of the
weight's size; every read of ``weight`` happens before ``out`` is written, so
``out`` may be ``weight`` itself. Elementwise kernels are marked ``elemwise``
and the engine may split big updates across threads by flat ranges.

``_mp_adam_update`` is private: what MXNet runs in several ops (Adam's
generic multi-precision wrapper). LAMB and the fused forms of MXNet's
Python-composed updates are in ``optimizer_fused.py``; the multi-weight ops
(``multi_sgd_update``, ...) in ``optimizer_multi.py``.
"""
from __future__ import annotations

import numpy as np

from ..base import OpError, ShapeError
from ._rules import fmt
from .registry import Param, p_bool, p_float, p_int, register

__all__ = []

_F32 = np.dtype(np.float32)
_FLOATS = (np.dtype(np.float16), _F32, np.dtype(np.float64))


# ------------------------------------------------------------------ rules

def _rule(n_same, n_f32=0, out_f32=False):
    """All inputs of one shape; the first ``n_same`` of one float dtype, the next
    ``n_f32`` float32 (master weights and states of the mp_* ops)."""
    def rule(attrs, shapes, dtypes):
        s0 = shapes[0]
        for i, s in enumerate(shapes):
            if s != s0:
                raise ShapeError("input %d has shape %s but the weight has %s; the weight, "
                                 "gradient and states must have the same shape"
                                 % (i, fmt(s), fmt(s0)))
        d0 = dtypes[0]
        if d0 not in _FLOATS:
            raise OpError("the weight has dtype %s; update ops need float16, float32 or "
                          "float64" % d0.name)
        for i in range(1, n_same):
            if dtypes[i] != d0:
                raise OpError("input %d has dtype %s but the weight has %s; they must match"
                              % (i, dtypes[i].name, d0.name))
        for i in range(n_same, n_same + n_f32):
            if dtypes[i] != _F32:
                raise OpError("input %d has dtype %s; the multi-precision states and master "
                              "weight must be float32" % (i, dtypes[i].name))
        return (s0,), (_F32 if out_f32 else d0,)
    return rule


def p_f32(v):
    """A C ``float`` parameter: the value rounded to float32, as MXNet stores it."""
    return float(np.float32(p_float(v)))


def _P(name, default=0.0, doc="", double=False):
    """A float parameter; ``double`` for those MXNet declares double (and for the
    scalars of Python-composed updates, which MXNet's scalar ops take as double)."""
    if double:
        return Param(name, p_float, default, doc)
    return Param(name, p_f32, p_f32(default), doc)     # defaults are not parsed: round here


def _D(name, default=0.0, doc=""):
    return _P(name, default, doc, double=True)


_LR = Param("lr", p_f32, doc="learning rate")
_WD = _P("wd", 0.0, "weight decay")
_RESCALE = _P("rescale_grad", 1.0, "rescale the gradient to grad = rescale_grad*grad")
_CLIP = _P("clip_gradient", -1.0, "clip the gradient to [-clip_gradient, clip_gradient]; "
           "off when < 0")
# the same, taken as double (MXNet's scalar NDArray ops), for the fused Python updates
_LRD = Param("lr", p_float, doc="learning rate")
_WDD = _D("wd", 0.0, "weight decay")
_RESCALED = _D("rescale_grad", 1.0, "rescale the gradient to grad = rescale_grad*grad")
_LAZY = Param("lazy_update", p_bool, True,
               "lazy updates for row_sparse gradients (no effect on dense ones)")
_MOM = _P("momentum", 0.0, "the decay rate of momentum estimates")


# ------------------------------------------------------------------ helpers

def _scratch(xp, like, dtype=None):
    return xp.empty(like.shape, dtype=dtype or like.dtype)


def _lr_grad(xp, grad, f, lr, rescale, clip):
    """``lr*clip(rescale*grad)`` (clipping on) or ``(lr*rescale)*grad``, in a new
    buffer of dtype ``f`` (float32 for the mp_* ops, where ``grad`` is float16)."""
    # dtype=f: numpy < 2 would pick a float16 loop for float16 grad * float32 scalar
    t = xp.empty(grad.shape, dtype=f)
    if clip >= 0:
        xp.multiply(grad, f(rescale), out=t, dtype=f)
        xp.clip(t, f(-clip), f(clip), out=t)
        xp.multiply(t, f(lr), out=t)
    else:
        xp.multiply(grad, f(lr) * f(rescale), out=t, dtype=f)
    return t


def _rescaled(xp, grad, f, rescale, clip, weight=None, wd=0.0, clip_first=False):
    """``clip(grad*rescale + weight*wd)``, or ``clip(grad*rescale)`` when
    ``weight`` is None, in a new buffer of dtype ``f``."""
    t = xp.empty(grad.shape, dtype=f)
    xp.multiply(grad, f(rescale), out=t, dtype=f)
    if weight is not None and wd != 0:
        w = _scratch(xp, t)
        xp.multiply(weight, f(wd), out=w, dtype=f)
        xp.add(t, w, out=t)
    if clip >= 0:
        xp.clip(t, f(-clip), f(clip), out=t)
    return t


def _sign_into(xp, x, out, tmp):
    """``(x > 0) - (x < 0)`` as C computes it (0 for NaN, unlike ``sign``)."""
    xp.greater(x, 0, out=out)
    xp.less(x, 0, out=tmp)
    xp.subtract(out, tmp, out=out)


def _cast_into(xp, out, src):
    if out is not src:
        xp.copyto(out, src, casting="unsafe")


# ------------------------------------------------------------------- SGD

_SGD_PARAMS = [_LR, _WD, _RESCALE, _CLIP, _LAZY]
_SGD_MOM_PARAMS = [_LR, _MOM, _WD, _RESCALE, _CLIP, _LAZY]


@register("sgd_update", inputs=("weight", "grad"), params=_SGD_PARAMS, infer=_rule(2),
          elemwise=True)
def sgd_update(xp, weight, grad, out, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
               lazy_update=True):
    """sgd_update(weight, grad, lr, wd, rescale_grad, clip_gradient): weight =
    (1 - lr*wd)*weight - lr*clip(rescale_grad*grad, clip_gradient)."""
    f = weight.dtype.type
    t = _lr_grad(xp, grad, f, lr, rescale_grad, clip_gradient)
    c = f(1) - f(lr) * f(wd)
    if c != 1:
        xp.multiply(weight, c, out=out)
        xp.subtract(out, t, out=out)
    else:
        xp.subtract(weight, t, out=out)


def _mom_step(xp, weight, mom, t, f, lr, momentum, wd):
    """mom = momentum*mom - (lr*wd)*weight - t (in float type f)."""
    xp.multiply(mom, f(momentum), out=mom)
    if wd != 0:
        w = _scratch(xp, mom)
        xp.multiply(weight, f(lr) * f(wd), out=w)
        xp.subtract(mom, w, out=mom)
    xp.subtract(mom, t, out=mom)


@register("sgd_mom_update", inputs=("weight", "grad", "mom"), params=_SGD_MOM_PARAMS,
          infer=_rule(3), mutates=(2,), elemwise=True)
def sgd_mom_update(xp, weight, grad, mom, out, lr, momentum=0.0, wd=0.0, rescale_grad=1.0,
                   clip_gradient=-1.0, lazy_update=True):
    """sgd_mom_update(weight, grad, mom, lr, momentum, ...): mom = momentum*mom -
    lr*wd*weight - lr*clip(rescale_grad*grad); weight = weight + mom."""
    f = weight.dtype.type
    t = _lr_grad(xp, grad, f, lr, rescale_grad, clip_gradient)
    _mom_step(xp, weight, mom, t, f, lr, momentum, wd)
    xp.add(weight, mom, out=out)


@register("mp_sgd_update", inputs=("weight", "grad", "weight32"), params=_SGD_PARAMS,
          infer=_rule(2, 1), mutates=(2,), elemwise=True)
def mp_sgd_update(xp, weight, grad, weight32, out, lr, wd=0.0, rescale_grad=1.0,
                  clip_gradient=-1.0, lazy_update=True):
    """mp_sgd_update(weight, grad, weight32, ...): sgd_update on the float32 master
    copy ``weight32``; the weight receives its value cast to the weight's dtype."""
    f = np.float32
    t = _lr_grad(xp, grad, f, lr, rescale_grad, clip_gradient)
    c = f(1) - f(lr) * f(wd)
    if c != 1:
        xp.multiply(weight32, c, out=weight32)
    xp.subtract(weight32, t, out=weight32)
    _cast_into(xp, out, weight32)


@register("mp_sgd_mom_update", inputs=("weight", "grad", "mom", "weight32"),
          params=_SGD_MOM_PARAMS, infer=_rule(2, 2), mutates=(2, 3), elemwise=True)
def mp_sgd_mom_update(xp, weight, grad, mom, weight32, out, lr, momentum=0.0, wd=0.0,
                      rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True):
    """mp_sgd_mom_update(weight, grad, mom, weight32, ...): sgd_mom_update on the
    float32 master copy; float32 momentum."""
    f = np.float32
    t = _lr_grad(xp, grad, f, lr, rescale_grad, clip_gradient)
    _mom_step(xp, weight32, mom, t, f, lr, momentum, wd)
    xp.add(weight32, mom, out=weight32)
    _cast_into(xp, out, weight32)


# ------------------------------------------------------------------- NAG

_NAG_PARAMS = [_LR, _MOM, _WD, _RESCALE, _CLIP]


def _nag(xp, w, grad, mom, f, lr, momentum, wd, rescale, clip, new_w_in_mom):
    """Returns the new weight in a scratch buffer; updates mom.

    MXNet's kernel writes the weight, then updates mom with ``wd*weight``: with
    ``out=weight`` (what the optimizer passes) and in the mp kernel that reads
    the new weight (``new_w_in_mom``)."""
    gp = xp.empty(w.shape, dtype=f)
    xp.multiply(grad, f(rescale), out=gp)
    if clip >= 0:
        xp.clip(gp, f(-clip), f(clip), out=gp)
    a = xp.empty(w.shape, dtype=f)
    xp.multiply(w, f(wd), out=a)
    xp.add(gp, a, out=a)
    xp.multiply(a, f(lr), out=a)            # a = lr*(g' + wd*w)
    xp.multiply(mom, f(momentum), out=mom)
    b = xp.empty(w.shape, dtype=f)
    xp.subtract(w, mom, out=b)              # w - momentum*mom
    m1 = f(momentum) + f(1)
    if wd == 0 or not new_w_in_mom:
        xp.subtract(mom, a, out=mom)        # new mom
        xp.multiply(mom, m1, out=a)
        xp.add(b, a, out=b)                 # (w - mom) + (momentum+1)*(mom - a)
        return b
    xp.subtract(mom, a, out=a)
    xp.multiply(a, m1, out=a)
    xp.add(b, a, out=b)                     # the new weight
    xp.multiply(b, f(wd), out=a)
    xp.add(gp, a, out=a)
    xp.multiply(a, f(lr), out=a)
    xp.subtract(mom, a, out=mom)            # mom - lr*(g' + wd*new_weight)
    return b


@register("nag_mom_update", inputs=("weight", "grad", "mom"), params=_NAG_PARAMS,
          infer=_rule(3), mutates=(2,), elemwise=True)
def nag_mom_update(xp, weight, grad, mom, out, lr, momentum=0.0, wd=0.0, rescale_grad=1.0,
                   clip_gradient=-1.0):
    """nag_mom_update(weight, grad, mom, lr, momentum, ...): Nesterov momentum."""
    f = weight.dtype.type
    aliased = out is weight or xp.may_share_memory(out, weight)
    w = _nag(xp, weight, grad, mom, f, lr, momentum, wd, rescale_grad, clip_gradient, aliased)
    xp.copyto(out, w)


@register("mp_nag_mom_update", inputs=("weight", "grad", "mom", "weight32"),
          params=_NAG_PARAMS, infer=_rule(2, 2), mutates=(2, 3), elemwise=True)
def mp_nag_mom_update(xp, weight, grad, mom, weight32, out, lr, momentum=0.0, wd=0.0,
                      rescale_grad=1.0, clip_gradient=-1.0):
    """mp_nag_mom_update(weight, grad, mom, weight32, ...): nag_mom_update on the
    float32 master copy."""
    w = _nag(xp, weight32, grad, mom, np.float32, lr, momentum, wd, rescale_grad,
             clip_gradient, True)
    xp.copyto(weight32, w)
    _cast_into(xp, out, weight32)


# ------------------------------------------------------------------ Adam

_ADAM_PARAMS = [_LR, _P("beta1", 0.9), _P("beta2", 0.999), _P("epsilon", 1e-8), _WD,
                _RESCALE, _CLIP, _LAZY]


def _adam(xp, w, grad, mean, var, out, f, lr, beta1, beta2, epsilon, wd, rescale, clip):
    g = _rescaled(xp, grad, f, rescale, clip, w, wd)
    t = xp.empty(w.shape, dtype=f)
    b1, b2 = f(beta1), f(beta2)
    xp.multiply(mean, b1, out=mean)
    xp.multiply(g, f(1) - b1, out=t)
    xp.add(mean, t, out=mean)
    xp.multiply(var, b2, out=var)
    xp.multiply(g, f(1) - b2, out=t)
    xp.multiply(t, g, out=t)
    xp.add(var, t, out=var)
    xp.sqrt(var, out=t)
    xp.add(t, f(epsilon), out=t)
    xp.multiply(mean, f(lr), out=g)
    xp.divide(g, t, out=g)
    xp.subtract(w, g, out=out)


@register("adam_update", inputs=("weight", "grad", "mean", "var"), params=_ADAM_PARAMS,
          infer=_rule(4), mutates=(2, 3), elemwise=True)
def adam_update(xp, weight, grad, mean, var, out, lr, beta1=0.9, beta2=0.999, epsilon=1e-8,
                wd=0.0, rescale_grad=1.0, clip_gradient=-1.0, lazy_update=True):
    """adam_update(weight, grad, mean, var, lr, ...): g = clip(grad*rescale_grad +
    wd*weight); mean = beta1*mean + (1-beta1)*g; var = beta2*var + (1-beta2)*g*g;
    weight -= lr*mean/(sqrt(var) + epsilon)."""
    _adam(xp, weight, grad, mean, var, out, weight.dtype.type, lr, beta1, beta2, epsilon, wd,
          rescale_grad, clip_gradient)


@register("_mp_adam_update", inputs=("weight", "grad", "mean", "var", "weight32"),
          params=_ADAM_PARAMS, infer=_rule(2, 3), mutates=(2, 3, 4), elemwise=True)
def _mp_adam_update(xp, weight, grad, mean, var, weight32, out, lr, beta1=0.9, beta2=0.999,
                    epsilon=1e-8, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
                    lazy_update=True):
    """_mp_adam_update(weight, grad, mean, var, weight32, ...): adam_update on the
    float32 master copy, the weight receiving its cast (what MXNet's generic
    multi-precision wrapper does in three ops)."""
    _adam(xp, weight32, grad, mean, var, weight32, np.float32, lr, beta1, beta2, epsilon, wd,
          rescale_grad, clip_gradient)
    _cast_into(xp, out, weight32)


# --------------------------------------------------------------- RMSProp

_CLIPW = _P("clip_weights", -1.0, "clip the weights to [-clip_weights, clip_weights]; off when < 0")


@register("rmsprop_update", inputs=("weight", "grad", "n"),
          params=[_LR, _P("gamma1", 0.95), _P("epsilon", 1e-8), _WD, _RESCALE, _CLIP, _CLIPW],
          infer=_rule(3), mutates=(2,), elemwise=True)
def rmsprop_update(xp, weight, grad, n, out, lr, gamma1=0.95, epsilon=1e-8, wd=0.0,
                   rescale_grad=1.0, clip_gradient=-1.0, clip_weights=-1.0):
    """rmsprop_update(weight, grad, n, lr, gamma1, epsilon, ...): Tieleman & Hinton."""
    f = weight.dtype.type
    g = _rescaled(xp, grad, f, rescale_grad, clip_gradient, weight, wd)
    t = _scratch(xp, g)
    g1 = f(gamma1)
    xp.multiply(g, g, out=t)
    xp.multiply(t, f(1) - g1, out=t)
    xp.multiply(n, g1, out=n)
    xp.add(t, n, out=n)
    xp.add(n, f(epsilon), out=t)
    xp.sqrt(t, out=t)
    xp.divide(g, t, out=g)
    xp.multiply(g, f(lr), out=g)
    xp.subtract(weight, g, out=out)
    if clip_weights >= 0:
        xp.clip(out, f(-clip_weights), f(clip_weights), out=out)


@register("rmspropalex_update", inputs=("weight", "grad", "n", "g", "delta"),
          params=[_LR, _P("gamma1", 0.95), _P("gamma2", 0.9), _P("epsilon", 1e-8), _WD,
                  _RESCALE, _CLIP, _CLIPW],
          infer=_rule(5), mutates=(2, 3, 4), elemwise=True)
def rmspropalex_update(xp, weight, grad, n, g, delta, out, lr, gamma1=0.95, gamma2=0.9,
                       epsilon=1e-8, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0,
                       clip_weights=-1.0):
    """rmspropalex_update(weight, grad, n, g, delta, lr, ...): centered RMSProp (Graves)."""
    f = weight.dtype.type
    r = _rescaled(xp, grad, f, rescale_grad, clip_gradient, weight, wd)
    t = _scratch(xp, r)
    g1, c1 = f(gamma1), f(1) - f(gamma1)
    xp.multiply(r, c1, out=t)
    xp.multiply(t, r, out=t)
    xp.multiply(n, g1, out=n)
    xp.add(t, n, out=n)
    xp.multiply(r, c1, out=t)
    xp.multiply(g, g1, out=g)
    xp.add(t, g, out=g)
    xp.multiply(g, g, out=t)
    xp.subtract(n, t, out=t)
    xp.add(t, f(epsilon), out=t)
    xp.sqrt(t, out=t)
    xp.multiply(r, f(lr), out=r)
    xp.divide(r, t, out=r)
    xp.multiply(delta, f(gamma2), out=delta)
    xp.subtract(delta, r, out=delta)
    xp.add(weight, delta, out=out)
    if clip_weights >= 0:
        xp.clip(out, f(-clip_weights), f(clip_weights), out=out)


# ------------------------------------------------------------------ Ftrl

@register("ftrl_update", inputs=("weight", "grad", "z", "n"),
          params=[_LR, _P("lamda1", 0.01), _P("beta", 1.0), _WD, _RESCALE, _CLIP],
          infer=_rule(4), mutates=(2, 3), elemwise=True)
def ftrl_update(xp, weight, grad, z, n, out, lr, lamda1=0.01, beta=1.0, wd=0.0,
                rescale_grad=1.0, clip_gradient=-1.0):
    """ftrl_update(weight, grad, z, n, lr, lamda1, beta, ...): FTRL-proximal."""
    f = weight.dtype.type
    lr_, l1 = f(lr), f(lamda1)
    g = _rescaled(xp, grad, f, rescale_grad, clip_gradient)
    sq = _scratch(xp, g)
    a = _scratch(xp, g)
    b = _scratch(xp, g)
    xp.multiply(g, g, out=sq)
    xp.add(n, sq, out=a)
    xp.sqrt(a, out=a)
    xp.sqrt(n, out=b)
    xp.subtract(a, b, out=a)
    xp.multiply(a, weight, out=a)
    xp.divide(a, lr_, out=a)
    xp.subtract(g, a, out=g)
    xp.add(z, g, out=z)
    xp.add(n, sq, out=n)
    # out = (sign(z)*lamda1 - z) / ((beta + sqrt(n))/lr + wd) * (|z| > lamda1)
    _sign_into(xp, z, a, b)
    xp.multiply(a, l1, out=a)
    xp.subtract(a, z, out=a)
    xp.sqrt(n, out=b)
    xp.add(b, f(beta), out=b)
    xp.divide(b, lr_, out=b)
    xp.add(b, f(wd), out=b)
    xp.divide(a, b, out=a)
    xp.abs(z, out=b)
    xp.greater(b, l1, out=b)
    xp.multiply(a, b, out=out)


# ------------------------------------------------------------------ FTML

@register("ftml_update", inputs=("weight", "grad", "d", "v", "z"),
          params=[_LR, _P("beta1", 0.6), _P("beta2", 0.999), _D("epsilon", 1e-8),
                  Param("t", p_int, doc="number of updates"), _WD, _RESCALE,
                  _P("clip_grad", -1.0)],
          infer=_rule(5), mutates=(2, 3, 4), elemwise=True)
def ftml_update(xp, weight, grad, d, v, z, out, lr, t, beta1=0.6, beta2=0.999, epsilon=1e-8,
                wd=0.0, rescale_grad=1.0, clip_grad=-1.0):
    """ftml_update(weight, grad, d, v, z, lr, t, ...): Follow the Moving Leader."""
    f = weight.dtype.type
    b1, b2, ft = f(beta1), f(beta2), f(t)
    g = _rescaled(xp, grad, f, rescale_grad, clip_grad, weight, wd)
    a = _scratch(xp, g)
    xp.multiply(g, g, out=a)
    xp.multiply(a, f(1) - b2, out=a)
    xp.multiply(v, b2, out=v)
    xp.add(v, a, out=v)
    # d_t = (1 - beta1^t)/lr * (sqrt(v/(1 - beta2^t)) + epsilon)
    with np.errstate(over="ignore", under="ignore"):     # host scalars: numpy, not xp
        c1 = (f(1) - np.power(b1, ft)) / f(lr)
        c2 = f(1) - np.power(b2, ft)
    dt_ = _scratch(xp, g)
    xp.divide(v, f(c2), out=dt_)
    xp.sqrt(dt_, out=dt_)
    xp.add(dt_, f(epsilon), out=dt_)
    xp.multiply(dt_, f(c1), out=dt_)
    # z = beta1*z + (1-beta1)*g - (d_t - beta1*d)*weight
    xp.multiply(z, b1, out=z)
    xp.multiply(g, f(1) - b1, out=g)
    xp.add(z, g, out=z)
    xp.multiply(d, b1, out=a)
    xp.subtract(dt_, a, out=a)
    xp.multiply(a, weight, out=a)
    xp.subtract(z, a, out=z)
    xp.copyto(d, dt_)
    xp.negative(z, out=a)
    xp.divide(a, dt_, out=out)


# ------------------------------------------------------- signSGD / Signum

@register("signsgd_update", inputs=("weight", "grad"),
          params=[_LR, _WD, _RESCALE, _CLIP], infer=_rule(2), elemwise=True)
def signsgd_update(xp, weight, grad, out, lr, wd=0.0, rescale_grad=1.0, clip_gradient=-1.0):
    """signsgd_update(weight, grad, lr, wd): weight = (1 - lr*wd)*weight - lr*sign(grad)."""
    f = weight.dtype.type
    s = _scratch(xp, weight)
    t = _scratch(xp, weight)
    _sign_into(xp, grad, s, t)
    xp.multiply(s, f(lr), out=s)
    xp.multiply(weight, f(1) - f(lr) * f(wd), out=t)
    xp.subtract(t, s, out=out)


@register("signum_update", inputs=("weight", "grad", "mom"),
          params=[_LR, _MOM, _WD, _RESCALE, _CLIP, _P("wd_lh", 0.0)],
          infer=_rule(3), mutates=(2,), elemwise=True)
def signum_update(xp, weight, grad, mom, out, lr, momentum=0.0, wd=0.0, rescale_grad=1.0,
                  clip_gradient=-1.0, wd_lh=0.0):
    """signum_update(weight, grad, mom, lr, momentum, ...): mom = momentum*mom -
    (1-momentum)*(wd*weight + clip(rescale_grad*grad)); weight = (1 - lr*wd_lh)*weight
    + lr*sign(mom)."""
    f = weight.dtype.type
    m = f(momentum)
    c = f(1) - m
    t = _scratch(xp, weight)
    if clip_gradient >= 0:
        xp.multiply(grad, f(rescale_grad), out=t)
        xp.clip(t, f(-clip_gradient), f(clip_gradient), out=t)
        xp.multiply(t, c, out=t)
    else:
        xp.multiply(grad, c * f(rescale_grad), out=t)
    s = _scratch(xp, weight)
    xp.multiply(weight, c * f(wd), out=s)
    xp.multiply(mom, m, out=mom)
    xp.subtract(mom, s, out=mom)
    xp.subtract(mom, t, out=mom)
    _sign_into(xp, mom, s, t)
    xp.multiply(s, f(lr), out=s)
    xp.multiply(weight, f(1) - f(lr) * f(wd_lh), out=t)
    xp.add(t, s, out=out)


from . import optimizer_fused  # noqa: E402,F401  (LAMB and the fused Python updates)
