"""The LARS optimizer of ``mx.optimizer`` (MXNet 1.9.1's, 'Large Batch Training
of Convolution Networks', https://arxiv.org/abs/1708.03888).

SGD with momentum whose learning rate is scaled per layer (weights other than
``*gamma``, ``*beta`` and ``*bias``)::

    w_norm = L2norm(weight); g_norm = L2norm(rescale_grad * grad)
    lr_layer = lr * eta * w_norm / (g_norm + wd * w_norm + eps)   if both norms > 0

Dense groups (the updater passes ``aggregate_num`` weights,
``MXNET_OPTIMIZER_AGGREGATION_SIZE``, default 4) run as MXNet runs them: two
``multi_sum_sq``, one ``multi_lars`` and ``preloaded_multi_(mp_)sgd(_mom)_update``;
sparse weights or gradients weight by weight with norms computed on the host.
"""
from __future__ import annotations

import os

import numpy

from ..ndarray import NDArray, array, norm, zeros
from .optimizer import Optimizer, _flatten_list, _sgd_per_weight, _update, register

__all__ = ['LARS']


def _no_lars(name):
    return name.endswith('gamma') or name.endswith('beta') or name.endswith('bias')


@register
class LARS(Optimizer):
    """The LARS optimizer: SGD with a layer-wise adaptive learning rate.

    Parameters
    ----------
    momentum : float, optional
    lazy_update : bool, default True
        Lazy updates for row_sparse gradients (no effect on dense ones).
    eta : float, default 0.001
        LARS coefficient scaling the learning rate.
    eps : float, default 0
        Added to the denominator (very small gradients).
    momentum_correction : bool, default True
        Scale the momentum by the change of the global learning rate (with an
        ``lr_scheduler``), as in 'Accurate, Large Minibatch SGD'.
    """
    def __init__(self, momentum=0.0, lazy_update=True, eta=0.001, eps=0,
                 momentum_correction=True, **kwargs):
        super(LARS, self).__init__(**kwargs)
        self.momentum = momentum
        self.momentum_correction = momentum_correction
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv('MXNET_OPTIMIZER_AGGREGATION_SIZE', "4"))
        self.eta = eta
        self.eps = eps
        self.skip = 0
        self.last_lr = None
        self.cur_lr = None

    # MXNet's LARS keeps SGD's (state, weight32) order and its warning text
    _mp_state_first = True
    _mp_name = "SGD"

    def _get_lrs(self, indices):
        """Learning rates of ``indices``; also tracks the global learning rate of
        this call and of the previous one (``cur_lr``, ``last_lr``)."""
        if self.cur_lr is not None:
            self.last_lr = self.cur_lr
        if self.lr_scheduler is not None:
            lr = self.lr_scheduler(self.num_update)
        else:
            lr = self.lr
        if self.cur_lr is None:
            self.last_lr = lr
        self.cur_lr = lr
        lrs = [lr for _ in indices]
        for i, index in enumerate(indices):
            if index in self.param_dict:
                lrs[i] *= self.param_dict[index].lr_mult
            elif index in self.lr_mult:
                lrs[i] *= self.lr_mult[index]
            elif index in self.idx2name:
                lrs[i] *= self.lr_mult.get(self.idx2name[index], 1.0)
        return lrs

    def set_wd_mult(self, args_wd_mult):
        """As ``Optimizer.set_wd_mult``, but only ``*_weight`` names keep weight
        decay (``*_gamma`` too gets 0)."""
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not n.endswith('_weight'):
                self.wd_mult[n] = 0.0
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and '__wd_mult__' in attr[name]:
                    self.wd_mult[name] = float(attr[name]['__wd_mult__'])
        self.wd_mult.update(args_wd_mult)

    def create_state(self, index, weight):
        momentum = None
        if self.momentum != 0.0:
            stype = weight.stype if self.lazy_update else 'default'
            momentum = zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype)
        return momentum

    def _l2norm(self, v, rescale=False):
        """The L2 norm of ``v`` in float32 (times rescale_grad), on the host."""
        v = v.astype('float32')
        if rescale:
            v *= self.rescale_grad
        return norm(v).asnumpy()[0]

    def _get_lars(self, i, weight, g, lr, wd):
        """``lr`` scaled by this layer's LARS coefficient (not for gamma, beta, bias)."""
        name = self.idx2name[i] if i in self.idx2name else str(i)
        if _no_lars(name):
            return lr
        # float32 norms, the rest in double (numpy 1.x, MXNet's, promotes so)
        w_norm = float(self._l2norm(weight))
        g_norm = float(self._l2norm(g, rescale=True))
        if w_norm > 0.0 and g_norm > 0.0:
            lars = self.eta * w_norm / (g_norm + wd * w_norm + self.eps)
        else:
            lars = 1.0
        return lars * lr

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        aggregate = True
        if not isinstance(indices, (tuple, list)):
            indices, weights, grads, states = [indices], [weights], [grads], [states]
        for weight, grad in zip(weights, grads):
            assert isinstance(weight, NDArray)
            assert isinstance(grad, NDArray)
            aggregate = aggregate and weight.stype == 'default' and grad.stype == 'default'
        self._update_count(indices)
        lrs = self._get_lrs(indices)
        wds = self._get_wds(indices)

        kwargs = {'rescale_grad': self.rescale_grad}
        if self.momentum > 0:
            kwargs['momentum'] = (self.momentum * (self.cur_lr / self.last_lr)) \
                if (self.momentum_correction and self.last_lr != 0) else self.momentum
        if self.clip_gradient:
            kwargs['clip_gradient'] = self.clip_gradient

        if aggregate:
            self._update_aggregated(indices, weights, grads, states, lrs, wds, kwargs,
                                    multi_precision)
            return
        lrs = [self._get_lars(i, w, g, lr, wd)
               for (i, w, g, lr, wd) in zip(indices, weights, grads, lrs, wds)]
        _sgd_per_weight(weights, grads, states, lrs, wds, kwargs, multi_precision,
                        self.lazy_update)

    def _update_aggregated(self, indices, weights, grads, states, lrs, wds, kwargs,
                           multi_precision):
        """MXNet's dense path: the LARS layers first, their learning rates from
        multi_sum_sq + multi_lars on the device, then preloaded SGD in groups."""
        names = [self.idx2name[i] if i in self.idx2name else str(i) for i in indices]
        lars_idx = [i for i in range(len(indices)) if not _no_lars(names[i])]
        full_idx = lars_idx + [i for i in range(len(indices)) if _no_lars(names[i])]
        nb_lars = len(lars_idx)
        ctx = weights[0].context
        new_lrs = array([lrs[i] for i in full_idx], ctx=ctx, dtype='float32')
        new_wds = array([wds[i] for i in full_idx], ctx=ctx, dtype='float32')
        new_weights = [weights[i] for i in full_idx]
        new_grads = [grads[i] for i in full_idx]
        new_states = [states[i] for i in full_idx]
        if nb_lars > 0:
            w_sum_sq = _update('multi_sum_sq', new_weights[:nb_lars], None, num_arrays=nb_lars)
            g_sum_sq = _update('multi_sum_sq', new_grads[:nb_lars], None, num_arrays=nb_lars)
            _update('multi_lars', [new_lrs[:nb_lars], w_sum_sq, g_sum_sq, new_wds[:nb_lars]],
                    new_lrs[:nb_lars], eta=self.eta, eps=self.eps,
                    rescale_grad=self.rescale_grad)
        sidx = 0
        while sidx < len(indices):
            eidx = sidx + len(new_weights[sidx:sidx + self.aggregate_num])
            ws, gs, st = new_weights[sidx:eidx], new_grads[sidx:eidx], new_states[sidx:eidx]
            if not multi_precision:
                if self.momentum > 0:
                    op, per_weight = 'preloaded_multi_sgd_mom_update', zip(ws, gs, st)
                else:
                    op, per_weight = 'preloaded_multi_sgd_update', zip(ws, gs)
            elif self.momentum > 0:
                op, per_weight = 'preloaded_multi_mp_sgd_mom_update', zip(ws, gs, *zip(*st))
            else:
                op, per_weight = 'preloaded_multi_mp_sgd_update', \
                    zip(ws, gs, list(zip(*st))[1])
            _update(op, _flatten_list(per_weight) + [new_lrs[sidx:eidx], new_wds[sidx:eidx]],
                    list(ws), num_weights=len(ws), **kwargs)
            sidx += self.aggregate_num

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        if not isinstance(index, (tuple, list)):
            use_multi_precision = self.multi_precision and weight.dtype == numpy.float16
        else:
            use_multi_precision = self.multi_precision and weight[0].dtype == numpy.float16
        self._update_impl(index, weight, grad, state, multi_precision=use_multi_precision)
