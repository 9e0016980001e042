"""``SVRGModule``: a Module trained with stochastic variance reduced
gradients (Johnson and Zhang, 2013).

Every ``update_freq`` epochs the module snapshots its weights into an
auxiliary Module and computes the full gradient at the snapshot (the mean of
the batch gradients over the whole data). Each step then uses, instead of the
batch gradient ``g(w)``::

    g(w) - g(w_snapshot) + full_gradient(w_snapshot)

where both batch gradients are of the same batch, which keeps the estimate
unbiased with a variance that shrinks as ``w`` nears the snapshot."""
from __future__ import annotations

import sys

import logging
import time

from ... import context as ctx
from ... import metric
from ... import ndarray as nd
from ...base import _as_list
from ...initializer import Uniform
from ...kvstore.updates import create_kvstore as _create_kvstore
from ...model import BatchEndParam
from ...module import Module
from ...optimizer import create as _create_optimizer
from .svrg_optimizer import _SVRGOptimizer

# MXNet's module has `mx` (it imports mxnet as mx): the top package, already
# loaded before any of its submodules, named here without importing upward
mx = sys.modules[__name__.split(".")[0]]

__all__ = ["SVRGModule"]


class SVRGModule(Module):
    """A Module that trains with SVRG; otherwise used as Module is.

    Parameters are Module's, and:

    update_freq : int
        Recompute the full gradients every ``update_freq`` epochs (with
        ``fit``; call ``update_full_grads`` yourself in a loop of your own).

    Examples
    --------
    >>> mod = SVRGModule(symbol=lro, data_names=['data'], label_names=['lin_reg_label'],
    ...                  update_freq=2)
    >>> mod.fit(di, eval_metric='mse', optimizer='sgd',
    ...         optimizer_params=(('learning_rate', 0.025),), num_epoch=10)
    """

    def __init__(self, symbol, data_names=('data',), label_names=('softmax_label',),
                 logger=logging, context=ctx.cpu(), work_load_list=None,
                 fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None, update_freq=None):
        super(SVRGModule, self).__init__(symbol, data_names=data_names, label_names=label_names,
                                         logger=logger, context=context,
                                         work_load_list=work_load_list,
                                         fixed_param_names=fixed_param_names,
                                         state_names=state_names, group2ctxs=group2ctxs,
                                         compression_params=compression_params)
        if not isinstance(update_freq, int) or isinstance(update_freq, bool):
            raise TypeError("update_freq in SVRGModule must be an integer to represent the "
                            "frequency for calculating full gradients (got %r)" % (update_freq,))
        if update_freq <= 0:
            raise ValueError("update_freq in SVRGModule must be a positive integer to represent "
                             "the frequency for calculating full gradients (got %d)"
                             % update_freq)
        self.update_freq = update_freq
        # the module at the snapshot weights
        self._mod_aux = Module(symbol, data_names, label_names, logger, context, work_load_list,
                               fixed_param_names, state_names, group2ctxs, compression_params)
        # per device: parameter name -> full gradient at the snapshot
        self._param_dict = None
        self._ctx_len = len(self._context)

    def _reset_bind(self):
        super(SVRGModule, self)._reset_bind()
        self._mod_aux._reset_bind()

    def reshape(self, data_shapes, label_shapes=None):
        """Reshape both modules for new input shapes."""
        super(SVRGModule, self).reshape(data_shapes, label_shapes=label_shapes)
        self._mod_aux.reshape(data_shapes, label_shapes=label_shapes)

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Bind both modules (the auxiliary one only ``for_training``)."""
        super(SVRGModule, self).bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                                     force_rebind, shared_module, grad_req)
        if for_training:
            self._mod_aux.bind(data_shapes, label_shapes, for_training, inputs_need_grad,
                               force_rebind, shared_module, grad_req)

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Install an ``_SVRGOptimizer`` wrapping ``optimizer``. With a kvstore,
        a ``<name>_full`` key per parameter gathers the full gradients (summed
        over devices and workers)."""
        self._param_dict = [{k: nd.zeros(shape=v.shape, ctx=self._context[i])
                             for k, v in self.get_params()[0].items()}
                            for i in range(self._ctx_len)]
        svrg_optimizer = self._create_optimizer(_SVRGOptimizer.__name__, default_opt=optimizer,
                                                kvstore=kvstore,
                                                optimizer_params=optimizer_params)
        super(SVRGModule, self).init_optimizer(kvstore=kvstore, optimizer=svrg_optimizer,
                                               optimizer_params=optimizer_params,
                                               force_init=force_init)
        if self._kvstore:
            # MXNet also pulls these zeros into the weights when it updates on
            # the kvstore, which erases them; the keys only gather gradients
            for name in self._exec_group.param_names:
                self._kvstore.init(name + "_full", nd.zeros(shape=self._arg_params[name].shape))

    def _create_optimizer(self, optimizer, default_opt, kvstore, optimizer_params):
        """The ``_SVRGOptimizer`` (``optimizer``) with Module's rescale_grad and
        index -> name map, plus the ``_full`` keys."""
        batch_size = self._exec_group.batch_size
        kv_store, update_on_kvstore = _create_kvstore(kvstore, self._ctx_len, self._arg_params)
        if kv_store and 'dist' in kv_store.type and '_sync' in kv_store.type:
            batch_size *= kv_store.num_workers
        idx2name = {}
        if update_on_kvstore:
            idx2name.update(enumerate(self._exec_group.param_names))
        else:
            for k in range(self._ctx_len):
                idx2name.update({i * self._ctx_len + k: n
                                 for i, n in enumerate(self._exec_group.param_names)})
        for key in self._param_dict[0]:
            idx2name[max(idx2name, default=-1) + 1] = key + "_full"
        params = dict(optimizer_params)
        params.setdefault('rescale_grad', 1.0 / batch_size)
        params["default_optimizer"] = default_opt
        params["param_idx2name"] = idx2name
        return _create_optimizer(optimizer, **params)

    def forward(self, data_batch, is_train=None):
        """Forward on both modules (the auxiliary one when ``is_train`` is True)."""
        super(SVRGModule, self).forward(data_batch, is_train)
        if is_train:
            self._mod_aux.forward(data_batch, is_train)

    def backward(self, out_grads=None):
        """Backward on both modules."""
        super(SVRGModule, self).backward(out_grads)
        if self._mod_aux.binded:
            self._mod_aux.backward(out_grads)

    def update(self):
        """Replace the gradients by the SVRG estimate, then update as Module does."""
        self._update_svrg_gradients()
        super(SVRGModule, self).update()

    def update_full_grads(self, train_data):
        """Snapshot the weights into the auxiliary module and average its
        gradients over one pass of ``train_data`` (a padded last batch counts
        for its real share); with a kvstore, gather them there."""
        if self._param_dict is None:
            raise RuntimeError("update_full_grads: call init_optimizer first (it allocates the "
                               "full gradients)")
        param_names = self._exec_group.param_names
        arg, aux = self.get_params()
        self._mod_aux.set_params(arg_params=arg, aux_params=aux)
        # MXNet adds the new sum to the previous snapshot's full gradient; the
        # full gradient is of this snapshot alone
        for c in range(self._ctx_len):
            for name in param_names:
                self._param_dict[c][name] = nd.zeros_like(self._param_dict[c][name])
        train_data.reset()
        nbatch = 0
        padding = 0
        for batch in train_data:
            self._mod_aux.forward(batch, is_train=True)
            self._mod_aux.backward()
            nbatch += 1
            for c in range(self._ctx_len):
                for index, name in enumerate(param_names):
                    grads = self._mod_aux._exec_group.grad_arrays[index][c]
                    if grads is not None:       # None: a fixed parameter
                        self._param_dict[c][name] = self._param_dict[c][name] + grads
            padding = batch.pad or 0
        if nbatch == 0:
            raise ValueError("update_full_grads: train_data gave no batches")
        true_num_batch = nbatch - padding / train_data.batch_size
        for name in param_names:
            grad_list = []
            for i in range(self._ctx_len):
                self._param_dict[i][name] /= true_num_batch
                grad_list.append(self._param_dict[i][name])
            if self._kvstore:
                self._accumulate_kvstore(name, grad_list)

    def _accumulate_kvstore(self, key, value):
        """Sum the full gradients ``value`` (one per device) of parameter ``key``
        over devices and workers in the kvstore, and share them back."""
        self._kvstore.push(key + "_full", value)
        self._kvstore._barrier()
        self._kvstore.pull(key + "_full", value)
        self._allocate_gradients(key, value)

    def _allocate_gradients(self, key, value):
        for i in range(self._ctx_len):
            self._param_dict[i][key] = value[i] / self._ctx_len

    @staticmethod
    def _svrg_grads_update_rule(g_curr_batch_curr_weight, g_curr_batch_special_weight,
                                g_special_weight_all_batch):
        """``g_curr_batch_curr_weight - g_curr_batch_special_weight +
        g_special_weight_all_batch``, into the first (a list of arrays)."""
        for index, grad in enumerate(g_curr_batch_curr_weight):
            grad -= g_curr_batch_special_weight[index]
            grad += g_special_weight_all_batch[index]
        return g_curr_batch_curr_weight

    def _update_svrg_gradients(self):
        if self._param_dict is None:
            raise RuntimeError("update: call init_optimizer first")
        eg = self._exec_group
        for c in range(self._ctx_len):
            for index, name in enumerate(eg.param_names):
                g = eg.grad_arrays[index][c]
                if g is None:           # a fixed parameter
                    continue
                special = self._mod_aux._exec_group.grad_arrays[index][c]
                self._svrg_grads_update_rule([g], [special], [self._param_dict[c][name]])

    def fit(self, train_data, eval_data=None, eval_metric='acc',
            epoch_end_callback=None, batch_end_callback=None, kvstore='local',
            optimizer='sgd', optimizer_params=(('learning_rate', 0.01),),
            eval_end_callback=None, eval_batch_end_callback=None, initializer=Uniform(0.01),
            arg_params=None, aux_params=None, allow_missing=False,
            force_rebind=False, force_init=False, begin_epoch=0, num_epoch=None,
            validation_metric=None, monitor=None, sparse_row_id_fn=None):
        """Train as ``Module.fit`` does, recomputing the full gradients at the
        start of every ``update_freq``-th epoch; logs each epoch's training
        metrics and time, and the validation metrics with ``eval_data``."""
        if num_epoch is None:
            raise ValueError('please specify number of epochs (num_epoch)')
        self.bind(data_shapes=train_data.provide_data, label_shapes=train_data.provide_label,
                  for_training=True, force_rebind=force_rebind)
        if monitor is not None:
            self.install_monitor(monitor)
        self.init_params(initializer=initializer, arg_params=arg_params, aux_params=aux_params,
                         allow_missing=allow_missing, force_init=force_init)
        self.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                            optimizer_params=optimizer_params)
        if validation_metric is None:
            validation_metric = eval_metric
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)

        for epoch in range(begin_epoch, num_epoch):
            eval_metric.reset()
            tic = time.time()
            if epoch % self.update_freq == 0:
                self.update_full_grads(train_data)
            train_data.reset()
            data_iter = iter(train_data)
            end_of_batch = False
            nbatch = 0
            next_data_batch = next(data_iter)
            while not end_of_batch:
                data_batch = next_data_batch
                if monitor is not None:
                    monitor.tic()
                self.forward_backward(data_batch)
                self.update()
                if isinstance(data_batch, list):
                    self.update_metric(eval_metric, [db.label for db in data_batch],
                                       pre_sliced=True)
                else:
                    self.update_metric(eval_metric, data_batch.label)
                try:
                    next_data_batch = next(data_iter)
                    self.prepare(next_data_batch, sparse_row_id_fn=sparse_row_id_fn)
                except StopIteration:
                    end_of_batch = True
                if monitor is not None:
                    monitor.toc_print()
                if end_of_batch:
                    eval_name_vals = eval_metric.get_name_value()
                if batch_end_callback is not None:
                    params = BatchEndParam(epoch=epoch, nbatch=nbatch, eval_metric=eval_metric,
                                           locals=locals())
                    for callback in _as_list(batch_end_callback):
                        callback(params)
                nbatch += 1
            for name, val in eval_name_vals:
                self.logger.info('Epoch[%d] Train-%s=%f', epoch, name, val)
            self.logger.info('Epoch[%d] Time cost=%.3f', epoch, time.time() - tic)
            arg_params, aux_params = self.get_params()
            self.set_params(arg_params, aux_params)
            if epoch_end_callback is not None:
                for callback in _as_list(epoch_end_callback):
                    callback(epoch, self.symbol, arg_params, aux_params)
            if eval_data:
                res = self.score(eval_data, validation_metric,
                                 score_end_callback=eval_end_callback,
                                 batch_end_callback=eval_batch_end_callback, epoch=epoch)
                for name, val in res:
                    self.logger.info('Epoch[%d] Validation-%s=%f', epoch, name, val)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Prepare both modules for ``data_batch``."""
        super(SVRGModule, self).prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
        self._mod_aux.prepare(data_batch, sparse_row_id_fn=sparse_row_id_fn)
