"""``LBSGD``: large-batch SGD (MXNet 1.9.1's ``mx.optimizer.LBSGD``).

Gradients are accumulated per weight over ``batch_scale`` updates (to
emulate a batch ``batch_scale`` times larger); on every ``batch_scale``-th
update the mean gradient is applied with SGD (momentum, weight decay) at
the learning rate times a warm-up multiplier: 'linear', 'power2' or
'sqrt' ramps from 1 to ``batch_scale`` over ``warmup_epochs *
updates_per_epoch`` updates, 'lars' uses the layer-wise rate
``sqrt(|w|^2 / (|g|^2 + wd |w|^2))`` clipped to [0.01, 100]. Other
updates leave the weight as it is.
"""
from __future__ import annotations

import logging
import math
import warnings

import numpy

from ..ndarray import (NDArray, array, mp_sgd_mom_update, mp_sgd_update, multiply,
                       sgd_mom_update, sgd_update, zeros)
from .optimizer import Optimizer, register

__all__ = ["LBSGD"]


@register
class LBSGD(Optimizer):
    """Large-batch SGD with momentum, weight decay and warm-up.

    Parameters
    ----------
    momentum : float
    multi_precision : bool
        Keep a float32 master copy of float16 weights.
    warmup_strategy : str
        'linear', 'power2', 'sqrt' or 'lars'.
    warmup_epochs : int
    batch_scale : int
        Updates accumulated into one applied step.
    updates_per_epoch : int
    begin_epoch : int
    num_epochs : int
    """

    def __init__(self, momentum=0.0, multi_precision=False, warmup_strategy='linear',
                 warmup_epochs=5, batch_scale=1, updates_per_epoch=32, begin_epoch=0,
                 num_epochs=60, **kwargs):
        super(LBSGD, self).__init__(**kwargs)
        logging.info('Running Large-Batch SGD Algorithm')
        logging.info('(Batch_scale=%f, warmup_epochs=%d, warmup_strategy=%s, '
                     'updates_per_epoch=%d)', batch_scale, warmup_epochs, warmup_strategy,
                     updates_per_epoch)
        self.momentum = momentum
        self.multi_precision = multi_precision
        self.warmup_strategy = warmup_strategy
        self.warmup_epochs = warmup_epochs
        self.batch_scale = batch_scale
        self.updates_per_epoch = updates_per_epoch
        self.init_updates = begin_epoch * updates_per_epoch
        self.num_epochs = num_epochs
        self.lbmult = 1
        self.cumgrads = {}
        self.adaptive = False
        self.admult = 1

    def create_state(self, index, weight):
        momentum = None
        if self.multi_precision and weight.dtype == numpy.float16:
            master = array(weight, ctx=weight.context, dtype=numpy.float32)
            if self.momentum != 0.0:
                momentum = zeros(weight.shape, weight.context, dtype=numpy.float32,
                                 stype=weight.stype)
            return (momentum, master)
        if weight.dtype == numpy.float16 and not self.multi_precision:
            warnings.warn("Accumulating with float16 in optimizer can lead to "
                          "poor accuracy or slow convergence. "
                          "Consider using multi_precision=True option of the "
                          "SGD optimizer")
        if self.momentum != 0.0:
            momentum = zeros(weight.shape, weight.context, dtype=weight.dtype,
                             stype=weight.stype)
        return momentum

    def _get_lbmult(self, nup):
        """The warm-up multiplier after ``nup`` accumulated updates."""
        nwup = self.warmup_epochs * self.updates_per_epoch
        maxmult = float(self.batch_scale)
        if nup >= nwup:
            return maxmult
        if nwup <= 1:
            return 1.0
        if self.warmup_strategy == 'linear':
            return 1.0 + (maxmult - 1) * nup / nwup
        if self.warmup_strategy == 'power2':
            return 1.0 + (maxmult - 1) * (nup * nup) / (nwup * nwup)
        if self.warmup_strategy == 'sqrt':
            return 1.0 + (maxmult - 1) * math.sqrt(float(nup) / nwup)
        return 1.0

    def _get_lars(self, weight, g, wd):
        """The layer-wise rate multiplier, clipped to [0.01, 100]."""
        weight2 = self._l2norm(weight)
        grad2 = self._l2norm(g)
        lars = math.sqrt(weight2 / (grad2 + wd * weight2 + 1e-18))
        return min(max(lars, 0.01), 100)

    def _l2norm(self, v):
        """The squared 2-norm of ``v`` (a float)."""
        return multiply(v, v).asnumpy().sum()

    def _reset_cum_gradient(self, index):
        self.cumgrads[index]['cum_grad'] = 0

    def _get_cum_gradient(self, index):
        return self.cumgrads.get(index, {})

    def _put_cum_gradient(self, index, cgrad):
        self.cumgrads[index] = cgrad

    def _cumulate_gradient(self, grad, index):
        """Add ``grad`` to the accumulated gradient of ``index``."""
        cgrad = self._get_cum_gradient(index)
        if cgrad and cgrad['num_cums'] > 0:
            cum_grad = cgrad['cum_grad'] + grad
            num_cums = cgrad['num_cums'] + 1
        else:
            cum_grad = grad
            num_cums = self.init_updates + 1
        cgrad = {'cum_grad': cum_grad, 'num_cums': num_cums}
        self._put_cum_gradient(index, cgrad)
        return cgrad

    def update(self, index, weight, grad, state):
        if not isinstance(weight, NDArray) or not isinstance(grad, NDArray):
            raise TypeError("LBSGD.update takes NDArrays for weight and grad")
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        self._update_count(index)
        cgrad = self._cumulate_gradient(grad, index)
        if cgrad['num_cums'] % self.batch_scale != 0:
            return          # still accumulating: the weight stays (MXNet's lr=0 step)
        grad = cgrad['cum_grad'] / self.batch_scale
        if self.warmup_strategy == 'lars':
            lbmult = self._get_lars(weight, grad, wd)
        else:
            lbmult = self._get_lbmult(cgrad['num_cums'])
        lr = lr * lbmult
        kwargs = {'rescale_grad': self.rescale_grad}
        if self.momentum > 0:
            kwargs['momentum'] = self.momentum
        if self.clip_gradient:
            kwargs['clip_gradient'] = self.clip_gradient
        if not isinstance(state, (list, tuple)):
            if state is not None:
                sgd_mom_update(weight, grad, state, out=weight, lr=lr, wd=wd, **kwargs)
            else:
                sgd_update(weight, grad, out=weight, lr=lr, wd=wd, **kwargs)
        elif state[0] is not None:
            mp_sgd_mom_update(weight, grad, state[0], state[1], out=weight, lr=lr, wd=wd,
                              **kwargs)
        else:
            mp_sgd_update(weight, grad, state[1], out=weight, lr=lr, wd=wd, **kwargs)
        self._reset_cum_gradient(index)
