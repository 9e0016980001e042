"""``mx.optimizer``: the ``Optimizer`` base, its registry, and the SGD family
(SGD, NAG, Signum, LAMB, DCASGD, SGLD, ccSGD; LARS in ``lars.py``), as in
MXNet 1.9.1.

Every update of a dense weight is one fused engine op (see
``aiond/ops/optimizer_ops.py``) with MXNet's float arithmetic: the same
numbers as MXNet, step for step. SGD and LAMB update lists of weights with
MXNet's multi-weight ops (``aiond/ops/optimizer_multi.py``): one op per group.
The adaptive optimizers (Adam, AdaGrad, RMSProp, ...) live in ``adaptive.py``
and are re-exported here, so ``mx.optimizer.optimizer.Adam`` works as in MXNet.
"""
from __future__ import annotations

import math
import os
import warnings

import numpy

from ..ndarray import NDArray, clip, zeros
from ..ndarray import contrib as _contrib
from ..ndarray._invoke import hooks as _invoke_hooks, invoke, prepare
from ..ndarray.random import normal
from ..ops import optimizer_ops as _optimizer_ops  # noqa: F401  (registers the update ops)
from ..ops import optimizer_multi as _optimizer_multi  # noqa: F401  (multi_sgd_update, ...)
from ..ops import registry as _reg

__all__ = [
    'AdaDelta', 'AdaGrad', 'Adam', 'Adamax', 'DCASGD', 'FTML', 'Ftrl', 'LAMB', 'LARS', 'NAG',
    'Nadam',
    'Optimizer', 'RMSProp', 'SGD', 'SGLD', 'Signum', 'Test', 'ccSGD', 'create', 'register',
]


class _KeptCalls:
    """An optimizer's update calls, kept for pushing again (see ``_update``).
    ``new_step()`` at the start of each fused update: a call that no update
    of the last ``_KEEP_STEPS`` used is dropped, so the arrays of a
    re-initialized or recast model are not kept alive (a Trainer with a
    copy per device updates once per device each step)."""
    __slots__ = ("d", "n")

    def __init__(self):
        self.d, self.n = {}, 0

    def new_step(self):
        self.n += 1
        if len(self.d) > 1:
            n = self.n - _KEEP_STEPS
            self.d = {k: v for k, v in self.d.items() if v[3] >= n}

    def get(self, key):
        v = self.d.get(key)
        if v is not None:
            v[3] = self.n
        return v

    def put(self, key, ids, akey, pc):
        self.d[key] = [ids, akey, pc, self.n]

    def __len__(self):
        return len(self.d)


_KEEP_STEPS = 8


def _update(opname, inputs, out, calls=None, **kwargs):
    """Push fused update op ``opname`` on NDArray ``inputs`` (kwargs are op
    params). ``calls`` (an optimizer's ``_KeptCalls``) keeps the checked
    call: the next update of the same arrays with the same numbers pushes
    it again, without parsing its attributes and running its shape rule anew."""
    op = _reg.get(opname)
    if calls is None or _invoke_hooks.record is not None:
        return invoke(op, inputs, op.parse(kwargs), out)
    outs = out if isinstance(out, list) else [out]
    ids = tuple(map(id, inputs)) + tuple(map(id, outs))
    akey = tuple([(k, tuple(v) if isinstance(v, list) else v) for k, v in kwargs.items()])
    key = (opname, ids[0])
    hit = calls.get(key)
    # the kept call holds its arrays: equal ids are the same arrays
    if hit is not None and hit[0] == ids and hit[1] == akey:
        hit[2].push()
        return out
    attrs = op.parse(kwargs)
    pc = prepare(op, inputs, attrs, out)
    if pc is None:
        return invoke(op, inputs, attrs, out)
    calls.put(key, ids, akey, pc)
    pc.push()
    return out


def _flatten_list(nested_list):
    return [item for sublist in nested_list for item in sublist]


class Optimizer(object):
    """The base class inherited by all optimizers.

    Parameters
    ----------
    rescale_grad : float, default 1.0
        Multiply the gradient with ``rescale_grad`` before updating.
    param_idx2name : dict of int to str, optional
        Maps an index to a parameter name. Names not ending in ``_weight`` or
        ``_gamma`` then get a weight decay multiplier of 0.
    clip_gradient : float, optional
        Clip the gradient to ``[-clip_gradient, clip_gradient]``.
    learning_rate : float, optional
        The initial learning rate (0.01 if neither it nor ``lr_scheduler`` is
        given; overrides the scheduler's ``base_lr`` when both are).
    lr_scheduler : LRScheduler, optional
    wd : float, default 0.0
        Weight decay.
    sym : Symbol, optional
        Its ``__lr_mult__``/``__wd_mult__`` attributes set multipliers by name.
    begin_num_update : int, default 0
    multi_precision : bool, default False
        Keep a float32 master copy of float16 weights and update that.
    param_dict : dict of int to gluon.Parameter, optional
        Looked up for ``lr_mult`` and ``wd_mult``.
    """
    def __init__(self, rescale_grad=1., param_idx2name=None, wd=0.,
                 clip_gradient=None, learning_rate=None,
                 lr_scheduler=None, sym=None, begin_num_update=0,
                 multi_precision=False, param_dict=None):
        self.rescale_grad = rescale_grad
        self.lr_scheduler = lr_scheduler
        if self.lr_scheduler is None and learning_rate is None:
            learning_rate = 0.01
        self.lr = learning_rate
        if self.lr_scheduler is not None and learning_rate is not None:
            if self.lr_scheduler.base_lr != learning_rate:
                # MXNet prints (not warns) this
                print(UserWarning("learning rate from ``lr_scheduler`` has been "
                                  "overwritten by ``learning_rate`` in optimizer."))
                self.lr_scheduler.base_lr = learning_rate

        self.wd = wd
        self.lr_mult = {}
        self.wd_mult = {}
        self.begin_num_update = begin_num_update
        self.num_update = begin_num_update
        self._all_index_update_counts = {0: {}}
        self._index_update_count = self._all_index_update_counts[0]
        self.clip_gradient = clip_gradient
        self.multi_precision = multi_precision
        self.aggregate_num = 0

        if param_idx2name is None:
            param_idx2name = {}
        assert isinstance(param_idx2name, dict), \
            'param_idx2name should be a dict of param indexes to names.'
        self.idx2name = param_idx2name.copy()
        self.sym_info = (sym.attr_dict(), sym.list_arguments()) if sym is not None else ()
        self.param_dict = param_dict if param_dict else {}
        self.allow_np_array = False

        self.set_lr_mult({})
        self.set_wd_mult({})

    opt_registry = {}

    @staticmethod
    def register(klass):
        """Registers a new optimizer under its lower-cased class name.

        >>> @mx.optimizer.Optimizer.register
        ... class MyOptimizer(mx.optimizer.Optimizer):
        ...     pass
        """
        assert isinstance(klass, type)
        name = klass.__name__.lower()
        if name in Optimizer.opt_registry:
            warnings.warn('WARNING: New optimizer %s.%s is overriding '
                          'existing optimizer %s.%s' %
                          (klass.__module__, klass.__name__,
                           Optimizer.opt_registry[name].__module__,
                           Optimizer.opt_registry[name].__name__))
        Optimizer.opt_registry[name] = klass
        return klass

    @staticmethod
    def create_optimizer(name, **kwargs):
        """An instance of the optimizer registered as ``name`` (case insensitive)."""
        if name.lower() in Optimizer.opt_registry:
            return Optimizer.opt_registry[name.lower()](**kwargs)
        raise ValueError('Cannot find optimizer %s' % name)

    @property
    def learning_rate(self):
        if self.lr_scheduler is not None:
            return self.lr_scheduler(self.num_update)
        return self.lr

    def create_state(self, index, weight):
        """The auxiliary state (e.g. momentum) of ``weight``; None by default."""

    # MXNet's SGD/NAG kernels take (state, weight32), the generic path (weight32, state)
    _mp_state_first = False
    _mp_name = ""

    def create_state_multi_precision(self, index, weight):
        """``create_state`` plus a float32 master copy for float16 weights when
        ``multi_precision``: returns ``(weight32, state)`` then (``(state,
        weight32)`` for SGD and NAG, as MXNet's fused kernels take them)."""
        if self.multi_precision and weight.dtype == numpy.float16:
            weight_master_copy = weight.astype(numpy.float32)
            state = self.create_state(index, weight_master_copy)
            return (state, weight_master_copy) if self._mp_state_first \
                else (weight_master_copy, state)
        if weight.dtype == numpy.float16 and not self.multi_precision:
            warnings.warn("Accumulating with float16 in optimizer can lead to "
                          "poor accuracy or slow convergence. "
                          "Consider using multi_precision=True option of the "
                          + (self._mp_name + " " if self._mp_name else "") + "optimizer")
        return self.create_state(index, weight)

    def update(self, index, weight, grad, state):
        """Updates ``weight`` in place from ``grad`` and ``state``."""
        raise NotImplementedError()

    def update_multi_precision(self, index, weight, grad, state):
        """``update``, on the float32 master copy for float16 weights when
        ``multi_precision`` (the weight then receives the master copy's cast)."""
        if self.multi_precision and weight.dtype == numpy.float16:
            weight_master_copy = state[0]
            original_state = state[1]
            grad32 = grad.astype(numpy.float32)
            self.update(index, weight_master_copy, grad32, original_state)
            _update("Cast", [weight_master_copy], weight, dtype=weight.dtype)
        else:
            self.update(index, weight, grad, state)

    def set_learning_rate(self, lr):
        """Sets the learning rate; an error (``UserWarning`` raised, as in MXNet)
        when an ``lr_scheduler`` is in use."""
        if self.lr_scheduler is not None:
            raise UserWarning("LRScheduler of the optimizer has already been "
                              "defined. Note that set_learning_rate can mutate "
                              "the value of the learning rate of the optimizer "
                              "only when the LRScheduler of the optimizer is "
                              "undefined.")
        self.lr = lr

    def set_lr_scale(self, args_lrscale):  # pylint: disable=unused-argument
        """[DEPRECATED] Use set_lr_mult."""
        raise DeprecationWarning

    def set_lr_mult(self, args_lr_mult):
        """Sets learning rate multipliers by parameter name (with ``sym``) or index;
        the ``__lr_mult__`` attributes of ``sym`` come first."""
        self.lr_mult = {}
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and '__lr_mult__' in attr[name]:
                    self.lr_mult[name] = float(attr[name]['__lr_mult__'])
        self.lr_mult.update(args_lr_mult)

    def set_wd_mult(self, args_wd_mult):
        """Sets weight decay multipliers by name or index. Names in
        ``param_idx2name`` not ending in ``_weight`` or ``_gamma`` get 0, then
        ``sym``'s ``__wd_mult__`` attributes, then ``args_wd_mult``."""
        self.wd_mult = {}
        for n in self.idx2name.values():
            if not (n.endswith('_weight') or n.endswith('_gamma')):
                self.wd_mult[n] = 0.0
        if self.sym_info:
            attr, arg_names = self.sym_info
            for name in arg_names:
                if name in attr and '__wd_mult__' in attr[name]:
                    self.wd_mult[name] = float(attr[name]['__wd_mult__'])
        self.wd_mult.update(args_wd_mult)

    def _set_current_context(self, device_id):
        """Switches the per-index update counts to those of device ``device_id``."""
        if device_id not in self._all_index_update_counts:
            self._all_index_update_counts[device_id] = {}
        self._index_update_count = self._all_index_update_counts[device_id]

    def _update_count(self, index):
        """Counts one update of ``index`` (an int or a list of them)."""
        if not isinstance(index, (list, tuple)):
            index = [index]
        for idx in index:
            if idx not in self._index_update_count:
                self._index_update_count[idx] = self.begin_num_update
            self._index_update_count[idx] += 1
            self.num_update = max(self._index_update_count[idx], self.num_update)

    def _get_lrs(self, indices):
        """Learning rates of ``indices``: the scheduler's (or ``lr``) times lr_mult."""
        if self.lr_scheduler is not None:
            lr = self.lr_scheduler(self.num_update)
        else:
            lr = self.lr
        lrs = [lr for _ in indices]
        for i, index in enumerate(indices):
            if index in self.param_dict:
                lrs[i] *= self.param_dict[index].lr_mult
            elif index in self.lr_mult:
                lrs[i] *= self.lr_mult[index]
            elif index in self.idx2name:
                lrs[i] *= self.lr_mult.get(self.idx2name[index], 1.0)
        return lrs

    def _get_lr(self, index):
        return self._get_lrs([index])[0]

    def _get_wds(self, indices):
        """Weight decays of ``indices``: ``wd`` times wd_mult."""
        wds = [self.wd for _ in indices]
        for i, index in enumerate(indices):
            if index in self.param_dict:
                wds[i] *= self.param_dict[index].wd_mult
            elif index in self.wd_mult:
                wds[i] *= self.wd_mult[index]
            elif index in self.idx2name:
                wds[i] *= self.wd_mult.get(self.idx2name[index], 1.0)
        return wds

    def _get_wd(self, index):
        return self._get_wds([index])[0]

    def __getstate__(self):
        ret = self.__dict__.copy()
        # param_dict is not saved (the trainer sets it again), nor the kept calls
        del ret['param_dict']
        ret.pop('_calls', None)
        ret.pop('_fusing', None)
        return ret

    def __setstate__(self, state):
        self.__dict__ = state
        self.param_dict = {}

    def _call_cache(self):
        """The update calls kept for pushing again (see ``_update``)."""
        calls = self.__dict__.get('_calls')
        if calls is None:
            calls = self._calls = _KeptCalls()
        return calls


register = Optimizer.register   # pylint: disable=invalid-name
create = Optimizer.create_optimizer  # pylint: disable=invalid-name


def _clip_kw(kwargs, clip_gradient):
    if clip_gradient:
        kwargs['clip_gradient'] = clip_gradient
    return kwargs


# Without MXNET_OPTIMIZER_AGGREGATION_SIZE in the environment, the updater pushes
# consecutive groups of aggregate_num dense weights as one multi_*sgd* op until it
# holds about this many elements (see SGD._update_fused): small weights share one
# push, big ones keep ops of their own that workers can run side by side.
FUSE_ELEMS = 1 << 20


def _sgd_per_weight(weights, grads, states, lrs, wds, kwargs, multi_precision, lazy_update):
    """SGD's fused update weight by weight (SGD's and LARS's sparse paths);
    ``states`` as ``create_state(_multi_precision)`` made them."""
    for weight, grad, state, lr, wd in zip(weights, grads, states, lrs, wds):
        if not multi_precision:
            if state is not None:
                _update('sgd_mom_update', [weight, grad, state], weight,
                        lazy_update=lazy_update, lr=lr, wd=wd, **kwargs)
            else:
                _update('sgd_update', [weight, grad], weight,
                        lazy_update=lazy_update, lr=lr, wd=wd, **kwargs)
        elif state[0] is not None:
            _update('mp_sgd_mom_update', [weight, grad, state[0], state[1]], weight,
                    lr=lr, wd=wd, **kwargs)
        else:
            _update('mp_sgd_update', [weight, grad, state[1]], weight,
                    lr=lr, wd=wd, **kwargs)


@register
class SGD(Optimizer):
    """The SGD optimizer with momentum and weight decay::

        rescaled_grad = lr * (rescale_grad * clip(grad, clip_gradient) + wd * weight)
        state = momentum * state + rescaled_grad
        weight = weight - state

    Dense weights are updated ``aggregate_num`` at a time
    (``MXNET_OPTIMIZER_AGGREGATION_SIZE``, default 4) by ``multi_sgd_update``,
    ``multi_sgd_mom_update`` or their ``multi_mp_*`` forms, as in MXNet; sparse
    weights or gradients one at a time by ``sgd_update``/``sgd_mom_update``.

    Parameters
    ----------
    momentum : float, optional
    lazy_update : bool, default True
        Lazy updates for row_sparse gradients (no effect on dense ones).
    multi_precision : bool, optional
        Update a float32 master copy of float16 weights.
    """
    def __init__(self, momentum=0.0, lazy_update=True, **kwargs):
        super(SGD, self).__init__(**kwargs)
        self.momentum = momentum
        self.lazy_update = lazy_update
        self.aggregate_num = int(os.getenv('MXNET_OPTIMIZER_AGGREGATION_SIZE', "4"))
        # an explicit aggregation size is pushed as given: one op per group
        self._fuse_groups = 'MXNET_OPTIMIZER_AGGREGATION_SIZE' not in os.environ

    _mp_state_first = True
    _mp_name = "SGD"

    def create_state(self, index, weight):
        momentum = None
        if self.momentum != 0.0:
            stype = weight.stype if self.lazy_update else 'default'
            momentum = zeros(weight.shape, weight.context, dtype=weight.dtype, stype=stype)
        return momentum

    def _prepare(self, indices, weights, grads):
        """MXNet's bookkeeping of one group: update counts, then lrs and wds."""
        aggregate = True
        for weight, grad in zip(weights, grads):
            assert isinstance(weight, NDArray)
            assert isinstance(grad, NDArray)
            aggregate = aggregate and weight.stype == 'default' and grad.stype == 'default'
        self._update_count(indices)
        return aggregate, self._get_lrs(indices), self._get_wds(indices)

    def _kwargs(self):
        kwargs = {'rescale_grad': self.rescale_grad}
        if self.momentum > 0:
            kwargs['momentum'] = self.momentum
        return _clip_kw(kwargs, self.clip_gradient)

    def _push_multi(self, weights, grads, states, lrs, wds, kwargs, multi_precision):
        """One multi_(mp_)sgd(_mom)_update op for the dense ``weights``."""
        n = len(weights)
        # kept calls only inside _update_fused, whose call is one step
        calls = self.__dict__.get('_fusing')
        if not multi_precision:
            if self.momentum > 0:
                _update('multi_sgd_mom_update', _flatten_list(zip(weights, grads, states)),
                        list(weights), calls, num_weights=n, lrs=lrs, wds=wds, **kwargs)
            else:
                _update('multi_sgd_update', _flatten_list(zip(weights, grads)),
                        list(weights), calls, num_weights=n, lrs=lrs, wds=wds, **kwargs)
        elif self.momentum > 0:
            _update('multi_mp_sgd_mom_update',
                    _flatten_list(zip(weights, grads, *zip(*states))),
                    list(weights), calls, num_weights=n, lrs=lrs, wds=wds, **kwargs)
        else:
            _update('multi_mp_sgd_update',
                    _flatten_list(zip(weights, grads, list(zip(*states))[1])),
                    list(weights), calls, num_weights=n, lrs=lrs, wds=wds, **kwargs)

    def _push_single(self, weights, grads, states, lrs, wds, kwargs, multi_precision):
        """Weight by weight: sparse weights or gradients (lazy_update applies)."""
        _sgd_per_weight(weights, grads, states, lrs, wds, kwargs, multi_precision,
                        self.lazy_update)

    def _update_impl(self, indices, weights, grads, states, multi_precision=False):
        if not isinstance(indices, (tuple, list)):
            indices, weights, grads, states = [indices], [weights], [grads], [states]
        aggregate, lrs, wds = self._prepare(indices, weights, grads)
        push = self._push_multi if aggregate else self._push_single
        push(weights, grads, states, lrs, wds, self._kwargs(), multi_precision)

    def _update_fused(self, groups):
        """Updates the updater's groups of ``aggregate_num`` weights of one dtype
        (tuples of indices, weights, grads, states). Each group is counted and
        given its lrs and wds in turn, as ``update_multi_precision`` would (the
        numbers are MXNet's); consecutive dense groups then share one op of up
        to about ``FUSE_ELEMS`` elements."""
        mp = self.multi_precision and groups[0][1][0].dtype == numpy.float16
        calls = self._call_cache()
        if calls is not None:
            calls.new_step()
        self._fusing = calls
        try:
            self._update_groups(groups, mp)
        finally:
            self._fusing = None

    def _update_groups(self, groups, mp):
        kwargs = self._kwargs()
        pending = ([], [], [], [], [])
        size = 0
        for indices, weights, grads, states in groups:
            aggregate, lrs, wds = self._prepare(indices, weights, grads)
            if not aggregate:
                self._push_single(weights, grads, states, lrs, wds, kwargs, mp)
                continue
            for acc, part in zip(pending, (weights, grads, states, lrs, wds)):
                acc.extend(part)
            size += sum(w.size for w in weights)
            if size >= FUSE_ELEMS:
                self._push_multi(*pending, kwargs, mp)
                pending = ([], [], [], [], [])
                size = 0
        if pending[0]:
            self._push_multi(*pending, kwargs, mp)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        if not isinstance(index, (tuple, list)):
            use_multi_precision = self.multi_precision and weight.dtype == numpy.float16
        else:
            use_multi_precision = self.multi_precision and weight[0].dtype == numpy.float16
        self._update_impl(index, weight, grad, state, multi_precision=use_multi_precision)


@register
class Signum(Optimizer):
    """The Signum optimizer (signSGD with momentum)::

        state = momentum * state + (1-momentum) * (-rescale_grad * clip(grad) - wd * weight)
        weight = (1 - lr * wd_lh) * weight + lr * sign(state)
    """
    def __init__(self, learning_rate=0.01, momentum=0.9, wd_lh=0.0, **kwargs):
        super(Signum, self).__init__(learning_rate=learning_rate, **kwargs)
        self.momentum = momentum
        self.wd_lh = wd_lh

    def create_state(self, index, weight):
        momentum = None
        if self.momentum != 0.0:
            momentum = zeros(weight.shape, weight.context, dtype=weight.dtype, stype=weight.stype)
        return momentum

    def _update_impl(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        kwargs = {'rescale_grad': self.rescale_grad}
        if self.momentum > 0:
            kwargs['momentum'] = self.momentum
        _clip_kw(kwargs, self.clip_gradient)
        if self.wd_lh:
            kwargs['wd_lh'] = self.wd_lh
        if state is not None:
            _update('signum_update', [weight, grad, state], weight, lr=lr, wd=wd, **kwargs)
        else:
            kwargs.pop('wd_lh', None)
            _update('signsgd_update', [weight, grad], weight, lr=lr, wd=wd, **kwargs)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state)


@register
class NAG(Optimizer):
    """Nesterov accelerated gradient::

        state = momentum * state + grad + wd * weight
        weight = weight - (lr * (grad + momentum * state))
    """
    def __init__(self, momentum=0.0, **kwargs):
        super(NAG, self).__init__(**kwargs)
        self.momentum = momentum

    _mp_state_first = True
    _mp_name = "NAG"

    def create_state(self, index, weight):
        momentum = None
        if self.momentum != 0.0:
            momentum = zeros(weight.shape, weight.context, dtype=weight.dtype)
        return momentum

    def _update_impl(self, index, weight, grad, state, multi_precision=False):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        kwargs = {'rescale_grad': self.rescale_grad}
        if self.momentum > 0:
            kwargs['momentum'] = self.momentum
        _clip_kw(kwargs, self.clip_gradient)
        if not multi_precision:
            if state is not None:
                _update('nag_mom_update', [weight, grad, state], weight, lr=lr, wd=wd, **kwargs)
            else:
                _update('sgd_update', [weight, grad], weight, lr=lr, wd=wd, **kwargs)
        else:
            if state[0] is not None:
                _update('mp_nag_mom_update', [weight, grad, state[0], state[1]], weight,
                        lr=lr, wd=wd, **kwargs)
            else:
                _update('mp_sgd_update', [weight, grad, state[1]], weight, lr=lr, wd=wd,
                        **kwargs)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        use_multi_precision = self.multi_precision and weight.dtype == numpy.float16 \
            and isinstance(state, (tuple, list))
        self._update_impl(index, weight, grad, state, multi_precision=use_multi_precision)


@register
class LAMB(Optimizer):
    """LAMB optimizer (layer-wise adaptive moments). Lists of indices (what the
    updater passes) go through ``multi_lamb_update`` (``multi_mp_lamb_update``)
    in groups of ``aggregate_num`` (``MXNET_OPTIMIZER_AGGREGATION_SIZE``, default
    and at most 45); one index at a time, ``lamb_update_phase1``/``phase2``."""
    def __init__(self, learning_rate=0.001, beta1=0.9, beta2=0.999, epsilon=1e-6,
                 lower_bound=None, upper_bound=None, bias_correction=True, **kwargs):
        super(LAMB, self).__init__(learning_rate=learning_rate, **kwargs)
        self.beta1 = beta1
        self.beta2 = beta2
        self.epsilon = epsilon
        self.lower_bound = lower_bound
        self.upper_bound = upper_bound
        self.bias_correction = bias_correction
        self.aggregate_num = max(1, min(45, int(os.getenv('MXNET_OPTIMIZER_AGGREGATION_SIZE',
                                                          "45"))))

    def create_state(self, index, weight):
        stype = weight.stype
        dtype = weight.dtype
        return (zeros(weight.shape, weight.context, dtype=dtype, stype=stype),
                zeros(weight.shape, weight.context, dtype=dtype, stype=stype))

    def _update_impl(self, index, weight, grad, state, multi_precision=False):
        kwargs = {'beta1': self.beta1, 'beta2': self.beta2, 'epsilon': self.epsilon,
                  'bias_correction': self.bias_correction,
                  'rescale_grad': self.rescale_grad}
        if self.aggregate_num <= 1 or not isinstance(index, (tuple, list)):
            if isinstance(index, (tuple, list)):
                assert len(index) == self.aggregate_num
                index, weight, grad, state = index[0], weight[0], grad[0], state[0]
            assert isinstance(weight, NDArray)
            assert isinstance(grad, NDArray)
            self._update_count(index)
            lr = self._get_lr(index)
            wd = self._get_wd(index)
            t = self._index_update_count[index]
            if multi_precision:
                mean, var = state[1]
                weight32 = state[0]
            else:
                mean, var = state
            kwargs['t'] = t
            _clip_kw(kwargs, self.clip_gradient)
            bounds = {}
            if self.lower_bound:
                bounds['lower_bound'] = self.lower_bound
            if self.upper_bound:
                bounds['upper_bound'] = self.upper_bound
            if multi_precision:
                g = _update('mp_lamb_update_phase1', [weight, grad, mean, var, weight32], None,
                            wd=wd, **kwargs)
                r_1 = weight32.norm()
                r_2 = g.norm()
                _update('mp_lamb_update_phase2', [weight, g, r_1, r_2, weight32], weight,
                        lr=lr, **bounds)
            else:
                g = _update('lamb_update_phase1', [weight, grad, mean, var], None, wd=wd,
                            **kwargs)
                r_1 = weight.norm()
                r_2 = g.norm()
                _update('lamb_update_phase2', [weight, g, r_1, r_2], weight, lr=lr, **bounds)
        else:
            _clip_kw(kwargs, self.clip_gradient)
            if self.lower_bound:
                kwargs['lower_bound'] = self.lower_bound
            if self.upper_bound:
                kwargs['upper_bound'] = self.upper_bound
            step_count, lrs, wds = [], [], []
            for i, w_i, g_i in zip(index, weight, grad):
                assert isinstance(w_i, NDArray)
                assert isinstance(g_i, NDArray)
                self._update_count(i)
                step_count.append(self._index_update_count[i])
                lrs.append(self._get_lr(i))
                wds.append(self._get_wd(i))
            # groups of aggregate_num (at most 45, the op's limit) tensors, one op each
            for sidx in range(0, len(weight), self.aggregate_num):
                eidx = min(sidx + self.aggregate_num, len(weight))
                ws, gs, st = list(weight[sidx:eidx]), list(grad[sidx:eidx]), state[sidx:eidx]
                kw = dict(kwargs, step_count=step_count[sidx:eidx], lrs=lrs[sidx:eidx],
                          wds=wds[sidx:eidx], out=ws)
                if not multi_precision:
                    mean, var = list(zip(*st))
                    _contrib.multi_lamb_update(ws, gs, mean, var, **kw)
                else:
                    mean, var = list(zip(*list(zip(*st))[1]))
                    _contrib.multi_mp_lamb_update(ws, gs, mean, var, list(zip(*st))[0], **kw)

    def update(self, index, weight, grad, state):
        self._update_impl(index, weight, grad, state, multi_precision=False)

    def update_multi_precision(self, index, weight, grad, state):
        if not isinstance(index, (tuple, list)):
            use_multi_precision = self.multi_precision and weight.dtype == numpy.float16
        else:
            use_multi_precision = self.multi_precision and weight[0].dtype == numpy.float16
        self._update_impl(index, weight, grad, state, multi_precision=use_multi_precision)


@register
class DCASGD(Optimizer):
    """The DCASGD optimizer (asynchronous SGD with delay compensation)."""
    def __init__(self, momentum=0.0, lamda=0.04, **kwargs):
        super(DCASGD, self).__init__(**kwargs)
        self.momentum = momentum
        self.weight_previous = {}
        self.lamda = lamda

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return (None, weight.copy())
        return (zeros(weight.shape, weight.context, dtype=weight.dtype), weight.copy())

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = clip(grad, -self.clip_gradient, self.clip_gradient)
        mom, previous_weight = state
        if mom:
            mom[:] *= self.momentum
            mom[:] += -lr * (grad + wd * weight + self.lamda
                             * grad * grad * (weight - previous_weight))
        else:
            assert self.momentum == 0.0
            mom = -lr * (grad + wd * weight + self.lamda
                         * grad * grad * (weight - previous_weight))
        previous_weight[:] = weight
        weight[:] += mom


@register
class SGLD(Optimizer):
    """Stochastic Gradient Riemannian Langevin Dynamics."""
    def __init__(self, **kwargs):
        super(SGLD, self).__init__(**kwargs)

    def create_state(self, index, weight):
        return None

    def update(self, index, weight, grad, state):
        assert isinstance(weight, NDArray)
        assert isinstance(grad, NDArray)
        self._update_count(index)
        lr = self._get_lr(index)
        wd = self._get_wd(index)
        grad = grad * self.rescale_grad
        if self.clip_gradient is not None:
            grad = clip(grad, -self.clip_gradient, self.clip_gradient)
        weight[:] += - lr / 2 * (grad + wd * weight)
        weight[:] += normal(0, math.sqrt(lr), shape=weight.shape,
                            dtype=weight.dtype, ctx=weight.context)


@register  # pylint: disable=invalid-name
class ccSGD(SGD):
    """[DEPRECATED] Same as `SGD`. Left here for backward compatibility."""
    def __init__(self, *args, **kwargs):
        super(ccSGD, self).__init__(*args, **kwargs)


from .adaptive import (AdaDelta, AdaGrad, Adam, Adamax, FTML, Ftrl, Nadam,  # noqa: E402,F401
                       RMSProp, Test)
from .lars import LARS  # noqa: E402,F401
from .updater import Updater, get_updater  # noqa: E402,F401

from .lbsgd import LBSGD  # noqa: E402,F401  (MXNet defines it in this module)
__all__.append("LBSGD")
