"""``mx.gluon.Trainer``: applies an Optimizer to a set of Parameters
(MXNet 1.9.1). With parameters on several contexts the gradients are
summed through a KVStore ('device' by default) and, as in MXNet, the
update then runs in the store (``update_on_kvstore``) or on every copy."""
from __future__ import annotations

import os

import numpy as np

from .. import engine as _engine
from .. import optimizer as opt
from ..kvstore import create as _kv_create
from ..kvstore import KVStore
from ..kvstore.base import KVStoreBase
from ..optimizer.optimizer import FUSE_ELEMS
from ..optimizer.updater import fused_update
from .parameter import Parameter, ParameterDict, _clear_fresh, _fresh_grad

__all__ = ["Trainer"]

_eng = _engine.get()


def _create_sparse_kvstore(kvstore):
    """MXNet's ``model._create_sparse_kvstore``: a store for row_sparse weights
    (always updated on the store)."""
    if isinstance(kvstore, KVStore):
        kv = kvstore
    elif isinstance(kvstore, str):
        kv = _kv_create(kvstore)
    else:
        raise TypeError("Cannot create '%s' KVStore with row_sparse parameters. "
                        "The type must be KVStore or str." % kvstore)
    assert kv.is_capable(KVStoreBase.OPTIMIZER), \
        "KVStore with sparse weight requires optimizer support. " \
        "However, type(kv) does not support optimizer. " \
        "Please consider other kvstore backends (e.g. dist_device) instead."
    return (kv, True)


def _create_kvstore(kvstore, num_device, arg_params):
    """MXNet's ``model._create_kvstore``: (kvstore or None, update_on_kvstore)."""
    update_on_kvstore = bool(int(os.getenv("MXNET_UPDATE_ON_KVSTORE", "1")))
    if kvstore is None:
        kv = None
    elif isinstance(kvstore, KVStoreBase):
        kv = kvstore
    elif isinstance(kvstore, str):
        if num_device == 1 and "dist" not in kvstore:
            kv = None       # no store for one device on one machine
        else:
            kv = _kv_create(kvstore)
            if kvstore == "local":
                max_size = max(np.prod(param.shape) for param in arg_params.values())
                if max_size > 1024 * 1024 * 16:
                    update_on_kvstore = False
    else:
        raise TypeError("kvstore must be KVStore, str or None")
    if kv is None:
        update_on_kvstore = False
    else:
        update_on_kvstore &= bool(kv.is_capable(KVStoreBase.OPTIMIZER))
    return (kv, update_on_kvstore)


class Trainer(object):
    """Applies an Optimizer on a set of Parameters.

    >>> trainer = gluon.Trainer(net.collect_params(), 'sgd', {'learning_rate': 0.1})
    >>> with autograd.record():
    ...     loss = loss_fn(net(x), y)
    >>> loss.backward()
    >>> trainer.step(batch_size)    # gradients are scaled by 1/batch_size
    """

    def __init__(self, params, optimizer, optimizer_params=None, kvstore="device",
                 compression_params=None, update_on_kvstore=None):
        param_list = []
        if isinstance(params, (dict, ParameterDict)):
            for key in sorted(list(params.keys())):
                param_list.append(params[key])
            params = param_list
        if not isinstance(params, (list, tuple)):
            raise ValueError("First argument must be a list or dict of Parameters, "
                             "got %s." % (type(params)))
        self._params = []
        self._contains_sparse_weight = False
        self._contains_sparse_grad = False
        self._param2idx = {}
        for i, param in enumerate(params):
            if not isinstance(param, Parameter):
                raise ValueError("First argument must be a list or dict of Parameters, "
                                 "got list of %s." % (type(param)))
            self._param2idx[param.name] = i
            self._params.append(param)
            param._set_trainer(self)
            if param._stype != "default":
                self._contains_sparse_weight = True
            if param._grad_stype != "default":
                self._contains_sparse_grad = True
        self._compression_params = compression_params
        self._contexts = self._check_contexts()
        optimizer_params = optimizer_params if optimizer_params else {}
        self._init_optimizer(optimizer, optimizer_params)
        self._scale = self._optimizer.rescale_grad
        self._kvstore_params = {"kvstore": kvstore, "update_on_kvstore": update_on_kvstore}
        self._kv_initialized = False
        self._express = None
        self._kvstore = None
        self._update_on_kvstore = None
        self._distributed = None
        self._params_to_init = []
        self._reset_kvstore()

    def _check_contexts(self):
        contexts = None
        for param in self._params:
            ctx = param.list_ctx()
            assert contexts is None or contexts == ctx, \
                "All Parameters must be initialized on the same set of contexts, " \
                "but Parameter %s is initialized on %s while previous Parameters " \
                "are initialized on %s." % (param.name, str(ctx), str(contexts))
            contexts = ctx
        return contexts

    def _init_optimizer(self, optimizer, optimizer_params):
        param_dict = {i: param for i, param in enumerate(self._params)}
        if isinstance(optimizer, opt.Optimizer):
            assert not optimizer_params, \
                "optimizer_params must be None if optimizer is an instance of " \
                "Optimizer instead of str"
            self._optimizer = optimizer
            self._optimizer.param_dict = param_dict
        else:
            self._optimizer = opt.create(optimizer, param_dict=param_dict, **optimizer_params)
        self._updaters = [opt.get_updater(self._optimizer) for _ in self._contexts]

    def _init_params(self):
        assert self._kv_initialized, "Cannot initialize parameters in KVStore " \
                                     "when KVStore is not initialized."
        params_to_init = []
        if self._kvstore:
            for param in self._params_to_init:
                if param._deferred_init:
                    params_to_init.append(param)
                else:
                    param_arrays = param._check_and_get(param._data, list)
                    idx = self._param2idx[param.name]
                    if param._stype != "default":
                        self._kvstore.init(idx, param_arrays[0])
                    else:
                        self._kvstore.broadcast(idx, param_arrays[0], param_arrays)
        self._params_to_init = params_to_init

    def _reset_kvstore(self):
        if self._kvstore and "dist" in self._kvstore.type:
            raise RuntimeError("Cannot reset distributed KVStore.")
        self._kv_initialized = False
        self._kvstore = None
        self._distributed = None
        self._update_on_kvstore = None
        self._params_to_init = [param for param in self._params]

    def _init_kvstore(self):
        config = self._kvstore_params
        if self._contains_sparse_weight:
            # sparse weights live in the store and are updated there:
            # row_sparse_pull(weight), forward, backward, push_and_update(grad)
            kvstore, update_on_kvstore = _create_sparse_kvstore(config["kvstore"])
            self._distributed = "dist" in kvstore.type
            if config["update_on_kvstore"] is False:
                raise ValueError("Cannot set update_on_kvstore=False when sparse weights "
                                 "are present.")
        elif self._contains_sparse_grad:
            # dense weights, sparse gradients: push and pull the gradients, update
            # the weights outside the store (update_on_kvstore=True is allowed)
            arg_arrays = {param.name: param.data(self._contexts[0]) for param in self._params}
            kvstore, _ = _create_kvstore(config["kvstore"], len(self._contexts), arg_arrays)
            self._distributed = "dist" in kvstore.type if kvstore else False
            update_on_kvstore = self._distributed
            if config["update_on_kvstore"] is not None:
                if config["update_on_kvstore"] is False and self._distributed:
                    raise ValueError("Cannot set update_on_kvstore=False on dist kvstore "
                                     "when sparse gradients are present.")
                update_on_kvstore = config["update_on_kvstore"]
            if kvstore is not None and not isinstance(kvstore, KVStore):
                raise ValueError("Cannot use {} for multi-device training with sparse gradients"
                                 .format(type(kvstore)))
        else:
            arg_arrays = {param.name: param.data(self._contexts[0]) for param in self._params}
            kvstore, update_on_kvstore = _create_kvstore(config["kvstore"], len(self._contexts),
                                                         arg_arrays)
            self._distributed = "dist" in kvstore.type if kvstore else False
            if self._distributed and "async" in kvstore.type:
                update_on_kvstore = True
                if config["update_on_kvstore"] is False:
                    raise ValueError("Please set update_on_kvstore=True "
                                     "when training in async mode.")
            if config["update_on_kvstore"] is not None:
                update_on_kvstore = config["update_on_kvstore"]
            if update_on_kvstore and kvstore is not None and not kvstore.is_capable("optimizer"):
                if config["update_on_kvstore"]:
                    raise ValueError("Please set update_on_kvstore=False "
                                     "when training with {}".format(type(kvstore)))
                update_on_kvstore = False
        if kvstore:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            self._kvstore = kvstore
            self._update_on_kvstore = update_on_kvstore
        else:
            self._kvstore = None
            self._update_on_kvstore = None
        self._kv_initialized = True

    @property
    def learning_rate(self):
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning "
                              "rate can be accessed.")
        return self._optimizer.learning_rate

    @property
    def optimizer(self):
        if isinstance(self._optimizer, opt.Optimizer):
            return self._optimizer
        raise UserWarning("Optimizer has not been initialized yet")

    def set_learning_rate(self, lr):
        """Set a new learning rate of the optimizer."""
        if not isinstance(self._optimizer, opt.Optimizer):
            raise UserWarning("Optimizer has to be defined before its learning "
                              "rate is mutated.")
        self._optimizer.set_learning_rate(lr)

    def _row_sparse_pull(self, parameter, out, row_id, full_idx=False):
        """Pull rows ``row_id`` of a row_sparse parameter from the store into
        ``out`` (``full_idx``: every row, by a plain pull)."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        idx = self._param2idx[parameter.name]
        if full_idx and "dist" not in self._kvstore.type:
            assert row_id.size == out.shape[0]
            self._kvstore.pull(idx, out=out, priority=-idx, ignore_sparse=False)
        else:
            self._kvstore.row_sparse_pull(idx, out=out, row_ids=row_id, priority=-idx)

    def _check_and_rescale_grad(self, scale):
        if self._update_on_kvstore and self._distributed and self._kv_initialized:
            if self._optimizer.rescale_grad != scale:
                raise UserWarning("Possible change in the `batch_size` from previous "
                                  "`step` detected. Optimizer gradient normalizing "
                                  "factor will not change w.r.t new batch_size when "
                                  "update_on_kvstore=True and when distributed kvstore "
                                  "is used.")
        self._optimizer.rescale_grad = scale

    def step(self, batch_size, ignore_stale_grad=False):
        """One update step: gradients are summed over contexts (if several),
        scaled by ``1/batch_size`` and applied. A parameter whose gradient no
        backward wrote since the last step raises, unless
        ``ignore_stale_grad`` (then it is skipped)."""
        rescale_grad = self._scale / batch_size
        self._check_and_rescale_grad(rescale_grad)
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        self._allreduce_grads()
        self._update(ignore_stale_grad)

    def allreduce_grads(self):
        """Sum the gradients over contexts (for ``update`` after, e.g.,
        gradient clipping)."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        assert not (self._kvstore and self._update_on_kvstore), \
            "allreduce_grads() when parameters are updated on kvstore " \
            "is not supported. Try setting `update_on_kvstore` " \
            "to False when creating trainer."
        self._allreduce_grads()

    def _allreduce_grads(self):
        if not self._kvstore:
            return
        if self._distributed and hasattr(self._kvstore, "_ct"):
            self._allreduce_grads_dist()
            return
        for i, param in enumerate(self._params):
            if param.grad_req != "null":
                grad_list = param.list_grad()
                if grad_list[0].stype != "default":
                    self._push_pull_sparse(i, param, grad_list)
                elif self._update_on_kvstore:
                    self._kvstore.pushpull(i, grad_list, out=param.list_data(), priority=-i)
                else:
                    self._kvstore.pushpull(i, grad_list, priority=-i)

    def _push_pull_sparse(self, i, param, grad_list):
        """Sparse gradients: pushed and pulled separately."""
        self._kvstore.push(i, grad_list, priority=-i)
        if param._stype == "default":
            pull_list = param.list_data() if self._update_on_kvstore else param.list_grad()
            self._kvstore.pull(i, pull_list, priority=-i, ignore_sparse=self._distributed)

    def _allreduce_grads_dist(self):
        """aiond's MPI stores: the dense gradients go in one call, last
        parameter first - the order backward computes them - so the store
        fuses them into buckets that each start as soon as their gradients
        exist, while backward still runs (every rank makes the same call)."""
        keys, grads, outs = [], [], []
        for i in reversed(range(len(self._params))):
            param = self._params[i]
            if param.grad_req == "null":
                continue
            grad_list = param.list_grad()
            if grad_list[0].stype != "default":
                self._push_pull_sparse(i, param, grad_list)
                continue
            keys.append(i)
            grads.append(grad_list)
            outs.append(param.list_data() if self._update_on_kvstore else grad_list)
        if keys:
            self._kvstore.pushpull(keys, grads, out=outs, priority=-keys[-1])

    def update(self, batch_size, ignore_stale_grad=False):
        """Apply the optimizer with the (already summed) gradients."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        assert not (self._kvstore and self._update_on_kvstore), \
            "update() when parameters are updated on kvstore " \
            "is not supported. Try setting `update_on_kvstore` " \
            "to False when creating trainer."
        self._check_and_rescale_grad(self._scale / batch_size)
        self._update(ignore_stale_grad)

    def _update(self, ignore_stale_grad=False):
        loss_scaler = getattr(self, '_amp_loss_scaler', None)  # amp.init_trainer's
        if loss_scaler is not None and loss_scaler.has_overflow(self._params):
            return  # skip on overflow
        ex = self._express
        if ex is not None and ex.ready(self):
            if ex.single and _eng.prof is None:
                # one op: a segment around it would only cost (the profiler
                # still shows the step's update as its segment span)
                ex.fused(ex.chunks)
            else:
                with _engine.bulk_scope("update", "update"):
                    ex.fused(ex.chunks)
            return
        self._express = None
        updates = [[] for _ in self._updaters]
        for i, param in enumerate(self._params):
            if param.grad_req == "null":
                continue
            if not ignore_stale_grad:
                for data in param._check_and_get(param._data, list):
                    if not _fresh_grad(data):
                        raise UserWarning(
                            "Gradient of Parameter `%s` on context %s has not been updated "
                            "by backward since last `step`. This could mean a bug in your "
                            "model that made it only use a subset of the Parameters (Blocks) "
                            "for this iteration. If you are intentionally only using a subset, "
                            "call step with ignore_stale_grad=True to suppress this "
                            "warning and skip updating of Parameters with stale gradient"
                            % (param.name, str(data.context)))
            if self._kvstore and self._update_on_kvstore:
                continue
            for upd, arr, grad in zip(updates, param.list_data(), param.list_grad()):
                if not ignore_stale_grad or _fresh_grad(arr):
                    upd.append((i, grad, arr))
                    _clear_fresh(arr)
        if not (self._kvstore and self._update_on_kvstore):
            with _engine.bulk_scope("update", "update"):
                for updater, upd in zip(self._updaters, updates):
                    if upd:
                        i, g, w = zip(*upd)
                        updater(list(i), list(g), list(w))
            self._express = _Express.make(self, updates)

    def save_states(self, fname):
        """Save the optimizer states (and the optimizer) to ``fname``."""
        assert self._optimizer is not None
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        if self._update_on_kvstore:
            assert not self._params_to_init, "Cannot save trainer states when some " \
                                             "parameters are not yet initialized in kvstore."
            self._kvstore.save_optimizer_states(fname, dump_optimizer=True)
        else:
            with open(fname, "wb") as fout:
                fout.write(self._updaters[0].get_states(dump_optimizer=True))

    def load_states(self, fname):
        """Load optimizer states saved by ``save_states`` (aiond's or MXNet's)."""
        if not self._kv_initialized:
            self._init_kvstore()
        if self._params_to_init:
            self._init_params()
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
            self._optimizer = self._kvstore._updater.optimizer
        else:
            with open(fname, "rb") as f:
                states = f.read()
            for updater in self._updaters:
                updater.set_states(states)
                updater.optimizer = self._updaters[0].optimizer
            self._optimizer = self._updaters[0].optimizer
        param_dict = {i: param for i, param in enumerate(self._params)}
        self._optimizer.param_dict = param_dict


class _Express:
    """The update of a one-context, no-store Trainer whose optimizer updates
    groups of weights in fused ops (SGD), repeated: the groups that the
    Updater formed at the last step, handed to the optimizer's fused update
    directly. The optimizer still counts the updates and works out the
    learning rates, weight decays and rescaling every step; what is skipped
    is re-deriving the groups from the parameters. Any change to what the
    groups were made from (a parameter's arrays or grad_req, a stale
    gradient, the updater, its states or optimizer) takes the general path,
    which raises or skips as it always did."""
    __slots__ = ("items", "updater", "opt", "states", "chunks", "fused", "device_id", "single")

    @staticmethod
    def make(trainer, updates):
        if trainer._kvstore is not None or len(trainer._updaters) != 1 or not updates[0]:
            return None
        updater = trainer._updaters[0]
        opt_ = updater.optimizer
        fused = fused_update(opt_)
        if fused is None or not updater.aggregate_updates:
            return None
        items = []
        for param in trainer._params:
            if param.grad_req == "null":
                continue
            data, grad = param._data, param._grad
            if data is None or grad is None or len(data) != 1 or param._stype != "default":
                return None
            items.append((param, param.grad_req, data, grad, data[0]))
        indices = [i for i, _, _ in updates[0]]
        weights = [w for _, _, w in updates[0]]
        if len(indices) != len(items) or len({w._dtype for w in weights}) != 1 \
                or any(w._sparse or g._sparse for _, g, w in updates[0]):
            return None
        n = opt_.aggregate_num
        chunks = []
        for k in range(0, len(indices), n):
            idx = tuple(indices[k:k + n])
            chunks.append((idx, tuple(weights[k:k + n]),
                           tuple(g for _, g, _ in updates[0][k:k + n]),
                           [updater.states[j] for j in idx]))
        ex = _Express()
        ex.items, ex.updater, ex.opt, ex.states = items, updater, opt_, updater.states
        ex.chunks, ex.fused, ex.device_id = chunks, fused, weights[0].context.device_id
        # weights that fit one fused op (see SGD._update_fused) push one op
        ex.single = sum(w.size for w in weights) < FUSE_ELEMS
        return ex

    def ready(self, trainer):
        """Whether the kept groups still stand; if so, clears the gradients'
        fresh flags as the general path does."""
        updater = self.updater
        if (trainer._updaters[0] is not updater or updater.optimizer is not self.opt
                or updater.states is not self.states or trainer._kvstore is not None
                or fused_update(self.opt) is None):
            return False
        for param, req, data, grad, arr in self.items:
            if param._data is not data or param._grad is not grad or param.grad_req != req:
                return False
            if not _fresh_grad(arr):
                return False
        for item in self.items:
            _clear_fresh(item[4])
        self.opt._set_current_context(self.device_id)
        return True
