"""Adaptive optimizers of ``mx.optimizer``: Adam, AdaGrad, RMSProp, AdaDelta,
Ftrl, Adamax, Nadam, FTML, and MXNet's ``Test`` optimizer.

Where MXNet's Python optimizer composes several NDArray ops (AdaGrad on dense
weights, AdaDelta, Adamax, Nadam) aiond runs one fused op with the same float
arithmetic (see ``aiond/ops/optimizer_ops.py``).
"""
from __future__ import annotations

import math

import numpy

from ..ndarray import NDArray, zeros
from .optimizer import Optimizer, _clip_kw, _update, register

__all__ = ['AdaDelta', 'AdaGrad', 'Adam', 'Adamax', 'FTML', 'Ftrl', 'Nadam', 'RMSProp', 'Test']


def _clip_arg(clip_gradient):
    """The fused ops' clip for MXNet's ``if clip_gradient is not None: clip(...)``."""
    return -1.0 if clip_gradient is None else clip_gradient


@register
class Adam(Optimizer):
    """The Adam optimizer::

        rescaled_grad = clip(grad * rescale_grad + wd * weight, clip_gradient)
        m = beta1 * m + (1 - beta1) * rescaled_grad
        v = beta2 * v + (1 - beta2) * (rescaled_grad**2)
        lr = learning_rate * sqrt(1 - beta2**t) / (1 - beta1**t)
        w = w - lr * m / (sqrt(v) + epsilon)
    """
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 lazy_update=True, **kwargs):
        super(Adam, self).__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lazy_update = lazy_update

    def create_state(self, index, weight):
        stype = weight.stype if self.lazy_update else 'default'
        return (zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype),  # mean
                zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype))  # var

    def _prepare(self, index):
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        coef1 = 1. - self.beta1**t
        coef2 = 1. - self.beta2**t
        lr *= math.sqrt(coef2) / coef1
        kwargs = {'beta1': self.beta1, 'beta2': self.beta2, 'epsilon': self.epsilon,
                  'rescale_grad': self.rescale_grad}
        _clip_kw(kwargs, self.clip_gradient)
        return lr, wd, kwargs

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        lr, wd, kwargs = self._prepare(index)
        mean, var = state
        _update('adam_update', [weight, grad, mean, var], weight,
                lazy_update=self.lazy_update, lr=lr, wd=wd, **kwargs)

    def update_multi_precision(self, index, weight, grad, state):
        if (self.multi_precision and weight.dtype == numpy.float16
                and type(self).update is Adam.update):
            # MXNet's generic wrapper (cast grad, update the master copy, cast back)
            # as one fused op
            weight32, (mean, var) = state
            lr, wd, kwargs = self._prepare(index)
            _update('_mp_adam_update', [weight, grad, mean, var, weight32], weight,
                    lazy_update=self.lazy_update, lr=lr, wd=wd, **kwargs)
        else:
            super(Adam, self).update_multi_precision(index, weight, grad, state)


@register
class AdaGrad(Optimizer):
    """AdaGrad optimizer::

        grad = clip(grad * rescale_grad, clip_gradient)
        history += square(grad)
        div = grad / sqrt(history + float_stable_eps)
        weight += (div + weight * wd) * -lr

    Parameters
    ----------
    eps : float, default 1e-7
    """
    def __init__(self, eps=1e-7, **kwargs):
        super(AdaGrad, self).__init__(**kwargs)
        self.float_stable_eps = eps

    def create_state(self, index, weight):
        return zeros(weight.shape, weight.context, stype=weight.stype)  # history (float32)

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        # a row_sparse gradient: MXNet's sparse adagrad_update (its rows only; wd must be 0)
        opname = '_sparse_adagrad_update' if grad.stype == 'row_sparse' else '_adagrad_update'
        _update(opname, [weight, grad, state], weight, lr=lr, wd=wd,
                epsilon=self.float_stable_eps, rescale_grad=self.rescale_grad,
                clip_gradient=_clip_arg(self.clip_gradient))


@register
class RMSProp(Optimizer):
    """The RMSProp optimizer: Tieleman & Hinton's (``centered=False``, op
    ``rmsprop_update``) or Graves's (``centered=True``, ``rmspropalex_update``).

    Parameters
    ----------
    gamma1 : float, default 0.9
    gamma2 : float, default 0.9 (centered only)
    epsilon : float, default 1e-8
    centered : bool, default False
    clip_weights : float, optional
    """
    def __init__(self, learning_rate=0.001, gamma1=0.9, gamma2=0.9,
                 epsilon=1e-8, centered=False, clip_weights=None, **kwargs):
        super(RMSProp, self).__init__(learning_rate=learning_rate, **kwargs)
        self.gamma1 = gamma1
        self.gamma2 = gamma2
        self.centered = centered
        self.epsilon = epsilon
        self.clip_weights = clip_weights

    def create_state(self, index, weight):
        if self.centered:
            return (zeros(weight.shape, weight.context, stype=weight.stype),   # n
                    zeros(weight.shape, weight.context, stype=weight.stype),   # g
                    zeros(weight.shape, weight.context, stype=weight.stype))   # delta
        return (zeros(weight.shape, weight.context, stype=weight.stype),)      # n

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        kwargs = {'gamma1': self.gamma1, 'epsilon': self.epsilon,
                  'rescale_grad': self.rescale_grad}
        if self.centered:
            kwargs['gamma2'] = self.gamma2
        _clip_kw(kwargs, self.clip_gradient)
        if self.clip_weights:
            kwargs['clip_weights'] = self.clip_weights
        if not self.centered:
            (n,) = state
            _update('rmsprop_update', [weight, grad, n], weight, lr=lr, wd=wd, **kwargs)
        else:
            n, g, delta = state
            _update('rmspropalex_update', [weight, grad, n, g, delta], weight, lr=lr, wd=wd,
                    **kwargs)


@register
class AdaDelta(Optimizer):
    """The AdaDelta optimizer (no learning rate)::

        grad = clip(grad * rescale_grad, clip_gradient)
        acc_grad = rho * acc_grad + (1. - rho) * grad * grad
        delta = sqrt(acc_delta + epsilon) / sqrt(acc_grad + epsilon) * grad
        acc_delta = rho * acc_delta + (1. - rho) * delta * delta
        weight -= (delta + wd * weight)

    As in MXNet, ``grad`` itself is multiplied by ``rescale_grad`` in place.
    """
    def __init__(self, rho=0.90, epsilon=1e-5, **kwargs):
        super(AdaDelta, self).__init__(**kwargs)
        self.rho = rho
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context),   # accumulated g
                zeros(weight.shape, weight.context))   # accumulated delta

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        wd = self._get_wd(index)
        self._update_count(index)
        acc_g, acc_delta = state
        _update('_adadelta_update', [weight, grad, acc_g, acc_delta], weight, rho=self.rho,
                epsilon=self.epsilon, wd=wd, rescale_grad=self.rescale_grad,
                clip_gradient=_clip_arg(self.clip_gradient))


@register
class Ftrl(Optimizer):
    """The Ftrl optimizer (FTRL-proximal, op ``ftrl_update``).

    Parameters
    ----------
    lamda1 : float, default 0.01
    learning_rate : float, default 0.1
    beta : float, default 1
    """
    def __init__(self, lamda1=0.01, learning_rate=0.1, beta=1, **kwargs):
        super(Ftrl, self).__init__(**kwargs)
        self.lamda1 = lamda1
        self.beta = beta
        self.lr = learning_rate

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, stype=weight.stype),   # z
                zeros(weight.shape, weight.context, stype=weight.stype))   # n

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        wd = self._get_wd(index)
        lr = self._get_lr(index)
        kwargs = {'lamda1': self.lamda1, 'beta': self.beta, 'rescale_grad': self.rescale_grad}
        _clip_kw(kwargs, self.clip_gradient)
        z, n = state
        _update('ftrl_update', [weight, grad, z, n], weight, lr=lr, wd=wd, **kwargs)


@register
class Adamax(Optimizer):
    """The AdaMax optimizer (Adam with the infinity norm)::

        grad = clip(grad * rescale_grad + wd * weight, clip_gradient)
        m = beta1 * m_t + (1 - beta1) * grad
        u = maximum(beta2 * u, abs(grad))
        weight -= lr / (1 - beta1**t) * m / u
    """
    def __init__(self, learning_rate=0.002, beta1=0.9, beta2=0.999, **kwargs):
        super(Adamax, self).__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, dtype=weight.dtype),   # mean
                zeros(weight.shape, weight.context, dtype=weight.dtype))   # variance

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        lr /= (1. - self.beta1**t)
        m_t, u_t = state
        _update('_adamax_update', [weight, grad, m_t, u_t], weight, lr=lr, beta1=self.beta1,
                beta2=self.beta2, wd=wd, rescale_grad=self.rescale_grad,
                clip_gradient=_clip_arg(self.clip_gradient))


@register
class Nadam(Optimizer):
    """The Nesterov Adam optimizer.

    As in MXNet, the momentum schedule ``m_schedule`` is one value per
    optimizer, advanced at every update of any weight.
    """
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-8,
                 schedule_decay=0.004, **kwargs):
        super(Nadam, self).__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.schedule_decay = schedule_decay
        self.m_schedule = 1.

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, dtype=weight.dtype),   # mean
                zeros(weight.shape, weight.context, dtype=weight.dtype))   # variance

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        momentum_t = self.beta1 * (1. - 0.5 * (pow(0.96, t * self.schedule_decay)))
        momentum_t_1 = self.beta1 * (1. - 0.5 * (pow(0.96, (t + 1) * self.schedule_decay)))
        self.m_schedule = self.m_schedule * momentum_t
        m_schedule_next = self.m_schedule * momentum_t_1
        m_t, v_t = state
        _update('_nadam_update', [weight, grad, m_t, v_t], weight, lr=lr, beta1=self.beta1,
                beta2=self.beta2, epsilon=self.epsilon, momentum_t=momentum_t,
                momentum_t_1=momentum_t_1, m_schedule=self.m_schedule,
                m_schedule_next=m_schedule_next, beta2_t=pow(self.beta2, t), wd=wd,
                rescale_grad=self.rescale_grad, clip_gradient=_clip_arg(self.clip_gradient))


@register
class FTML(Optimizer):
    """The FTML optimizer (Follow the Moving Leader, op ``ftml_update``).

    Parameters
    ----------
    beta1 : float, default 0.6
    beta2 : float, default 0.999
    epsilon : float, default 1e-8
    """
    def __init__(self, beta1=0.6, beta2=0.999, epsilon=1e-8, **kwargs):
        super(FTML, self).__init__(**kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon

    def create_state(self, index, weight):
        return (zeros(weight.shape, weight.context, dtype=weight.dtype),   # d_0
                zeros(weight.shape, weight.context, dtype=weight.dtype),   # v_0
                zeros(weight.shape, weight.context, dtype=weight.dtype))   # z_0

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        t = self._index_update_count[index]
        kwargs = {'beta1': self.beta1, 'beta2': self.beta2, 'epsilon': self.epsilon,
                  'rescale_grad': self.rescale_grad, 't': t}
        if self.clip_gradient:
            kwargs['clip_grad'] = self.clip_gradient
        prev_d, prev_v, prev_z = state
        _update('ftml_update', [weight, grad, prev_d, prev_v, prev_z], weight, lr=lr, wd=wd,
                **kwargs)


@register
class Test(Optimizer):
    """The Test optimizer: ``weight += rescale_grad * grad``; the state copies it."""
    def __init__(self, **kwargs):
        super(Test, self).__init__(**kwargs)

    def create_state(self, index, weight):
        return zeros(weight.shape, weight.context)

    def update(self, index, weight, grad, state):
        weight[:] += grad * self.rescale_grad
        state[:] = weight
