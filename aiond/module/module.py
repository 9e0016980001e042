"""``Module``: a Symbol bound on one or more contexts (data parallel), with
parameters, an optimizer and a kvstore (MXNet 1.9.1's ``mx.mod.Module``).

    mod = mx.mod.Module(net, context=mx.cpu())
    mod.fit(train_iter, eval_data=val_iter, num_epoch=10,
            optimizer_params={'learning_rate': 0.1})
    mod.predict(val_iter)

The master copy of the parameters lives in ``_arg_params``/``_aux_params``
(CPU); the executors hold one copy per device. After ``update()`` the
device copies are newer (``_params_dirty``) and ``get_params()`` copies
them back. With several devices the gradients are summed through the
kvstore ('local' by default), which also runs the optimizer.
"""
from __future__ import annotations

import logging
import warnings

from .. import context as ctx
from .. import optimizer as opt
from ..base import MXNetError
from ..initializer import InitDesc, Uniform
from ..io import DataDesc
from ..kvstore.updates import (create_kvstore as _create_kvstore,
                               initialize_kvstore as _initialize_kvstore,
                               update_params as _update_params,
                               update_params_on_kvstore as _update_params_on_kvstore)
from ..model import load_checkpoint
from .. import ndarray as nd  # noqa: F401  (mxnet.module.module.nd, as in MXNet)
from ..ndarray import zeros
from .base_module import BaseModule, _check_input_names, _parse_data_desc
from .executor_group import DataParallelExecutorGroup

__all__ = ["Module"]


class Module(BaseModule):
    """A module wrapping one Symbol.

    Parameters
    ----------
    symbol : Symbol
    data_names, label_names : list of str
        Inputs fed from the data iterator's data and label.
    logger : Logger (default: the ``logging`` module)
    context : Context or list of Context
        Several contexts split every batch between them.
    work_load_list : list of number, optional
        Relative share of the batch per context (default: equal).
    fixed_param_names : list of str, optional
        Parameters that are not trained.
    state_names : list of str, optional
        Inputs that are neither data nor label nor parameters (set with
        ``set_states``).
    group2ctxs : dict or list of dict, optional
        ``ctx_group`` attribute -> context.
    compression_params : dict, optional
        Gradient compression for distributed kvstores.
    """

    def __init__(self, symbol, data_names=('data',), label_names=('softmax_label',),
                 logger=logging, context=ctx.cpu(), work_load_list=None,
                 fixed_param_names=None, state_names=None, group2ctxs=None,
                 compression_params=None):
        super(Module, self).__init__(logger=logger)
        if isinstance(context, ctx.Context):
            context = [context]
        self._context = context
        if work_load_list is None:
            work_load_list = [1] * len(self._context)
        if len(work_load_list) != len(self._context):
            raise ValueError("work_load_list has %d entries for %d contexts"
                             % (len(work_load_list), len(self._context)))
        self._work_load_list = work_load_list
        self._group2ctxs = group2ctxs
        self._symbol = symbol

        data_names = list(data_names) if data_names is not None else []
        label_names = list(label_names) if label_names is not None else []
        state_names = list(state_names) if state_names is not None else []
        fixed_param_names = list(fixed_param_names) if fixed_param_names is not None else []
        _check_input_names(symbol, data_names, "data", True)
        _check_input_names(symbol, label_names, "label", False)
        _check_input_names(symbol, state_names, "state", True)
        _check_input_names(symbol, fixed_param_names, "fixed_param", True)

        arg_names = symbol.list_arguments()
        input_names = data_names + label_names + state_names
        self._param_names = [x for x in arg_names if x not in input_names]
        self._fixed_param_names = fixed_param_names
        self._aux_names = symbol.list_auxiliary_states()
        self._data_names = data_names
        self._label_names = label_names
        self._state_names = state_names
        self._output_names = symbol.list_outputs()

        self._arg_params = None
        self._aux_params = None
        self._params_dirty = False
        self._compression_params = compression_params
        self._optimizer = None
        self._kvstore = None
        self._update_on_kvstore = None
        self._updater = None
        self._preload_opt_states = None
        self._grad_req = None
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    # ------------------------------------------------------------ checkpoints
    @staticmethod
    def load(prefix, epoch, load_optimizer_states=False, **kwargs):
        """A Module from ``prefix-symbol.json`` and ``prefix-%04d.params`` (and
        ``prefix-%04d.states`` with ``load_optimizer_states``); other keyword
        arguments go to ``Module()``. Bind it before use."""
        sym, args, auxs = load_checkpoint(prefix, epoch)
        mod = Module(symbol=sym, **kwargs)
        mod._arg_params = args
        mod._aux_params = auxs
        mod.params_initialized = True
        if load_optimizer_states:
            mod._preload_opt_states = '%s-%04d.states' % (prefix, epoch)
        return mod

    def save_checkpoint(self, prefix, epoch, save_optimizer_states=False, remove_amp_cast=True):
        """Write ``prefix-symbol.json``, ``prefix-%04d.params`` and, with
        ``save_optimizer_states``, ``prefix-%04d.states``."""
        self._symbol.save('%s-symbol.json' % prefix, remove_amp_cast=remove_amp_cast)
        param_name = '%s-%04d.params' % (prefix, epoch)
        self.save_params(param_name)
        logging.info('Saved checkpoint to "%s"', param_name)
        if save_optimizer_states:
            state_name = '%s-%04d.states' % (prefix, epoch)
            self.save_optimizer_states(state_name)
            logging.info('Saved optimizer state to "%s"', state_name)

    def _reset_bind(self):
        self.binded = False
        self._exec_group = None
        self._data_shapes = None
        self._label_shapes = None

    # ------------------------------------------------------------ information
    @property
    def data_names(self):
        return self._data_names

    @property
    def label_names(self):
        return self._label_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        """``[DataDesc]`` of the data inputs."""
        self._require(params=False, what="data_shapes")
        return self._data_shapes

    @property
    def label_shapes(self):
        """``[DataDesc]`` of the labels, or None when bound without labels."""
        self._require(params=False, what="label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self):
        """``[(name, shape)]`` of the outputs."""
        self._require(params=False, what="output_shapes")
        return self._exec_group.get_output_shapes()

    # ------------------------------------------------------------ parameters
    def get_params(self):
        """``(arg_params, aux_params)``: the current parameters, on the CPU."""
        self._require(binded=False, what="get_params")
        if self._params_dirty:
            self._sync_params_from_devices()
        return (self._arg_params, self._aux_params)

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialise the parameters: copied from ``arg_params``/``aux_params``
        where given, else drawn by ``initializer``. A parameter missing from
        given dicts is an error unless ``allow_missing``; names the symbol does
        not have are an error unless ``allow_extra``."""
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "init_params call ignored.", stacklevel=2)
            return
        self._require(params=False, what="init_params")

        def _impl(name, arr, cache):
            if cache is not None:
                if name in cache:
                    cache_arr = cache[name]
                    if cache_arr is not arr:
                        if cache_arr.shape != arr.shape:
                            raise MXNetError(
                                "init_params: %s has shape %s in the given parameters but the "
                                "module needs %s" % (name, cache_arr.shape, arr.shape))
                        cache_arr.copyto(arr)
                else:
                    if not allow_missing:
                        raise MXNetError(
                            "%s is not presented: the given parameters have no %r (pass "
                            "allow_missing=True to initialize it with the initializer)"
                            % (name, str(name)))
                    if initializer is not None:
                        initializer(name, arr)
            else:
                if initializer is None:
                    raise MXNetError("init_params: no initializer and no value for %s" % name)
                initializer(name, arr)

        attrs = self._symbol.attr_dict()
        for name, arr in sorted(self._arg_params.items()):
            _impl(InitDesc(name, attrs.get(name, None)), arr, arg_params)
        for name, arr in sorted(self._aux_params.items()):
            _impl(InitDesc(name, attrs.get(name, None)), arr, aux_params)
        self.params_initialized = True
        self._params_dirty = False
        self._exec_group.set_params(self._arg_params, self._aux_params, allow_extra=allow_extra)

    def set_params(self, arg_params, aux_params, allow_missing=False, force_init=True,
                   allow_extra=False):
        """Assign the parameter and auxiliary state values."""
        if not allow_missing:
            self.init_params(initializer=None, arg_params=arg_params, aux_params=aux_params,
                             allow_missing=allow_missing, force_init=force_init,
                             allow_extra=allow_extra)
            return
        if self.params_initialized and not force_init:
            warnings.warn("Parameters already initialized and force_init=False. "
                          "set_params call ignored.", stacklevel=2)
            return
        self._exec_group.set_params(arg_params, aux_params, allow_extra=allow_extra)
        self._params_dirty = True
        self.params_initialized = True

    # ------------------------------------------------------------ binding
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Allocate executors for ``data_shapes`` (``[(name, shape)]`` or
        DataDescs, usually ``data_iter.provide_data``) and ``label_shapes``."""
        if force_rebind:
            self._reset_bind()
        if self.binded:
            self.logger.warning('Already bound, ignoring bind()')
            return
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._grad_req = grad_req
        if not for_training and inputs_need_grad:
            raise ValueError("bind: inputs_need_grad=True needs for_training=True")
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes)
        self._check_bind_inputs()

        if shared_module is not None:
            if not (isinstance(shared_module, Module) and shared_module.binded and
                    shared_module.params_initialized):
                raise MXNetError("bind: shared_module must be a bound Module with initialized "
                                 "parameters")
            shared_group = shared_module._exec_group
            assert len(shared_group.execs) >= len(self._context)
        else:
            shared_group = None

        self._exec_group = DataParallelExecutorGroup(
            self._symbol, self._context, self._work_load_list, self._data_shapes,
            self._label_shapes, self._param_names, for_training, inputs_need_grad,
            shared_group, logger=self.logger, fixed_param_names=self._fixed_param_names,
            grad_req=grad_req, group2ctxs=self._group2ctxs, state_names=self._state_names)
        self._total_exec_bytes = self._exec_group._total_exec_bytes
        if shared_module is not None:
            self.params_initialized = True
            self._arg_params = shared_module._arg_params
            self._aux_params = shared_module._aux_params
        elif self.params_initialized:
            # parameters loaded before binding (Module.load): copy them in
            self._check_loaded_params()
            self._exec_group.set_params(self._arg_params, self._aux_params)
        else:
            assert self._arg_params is None and self._aux_params is None
            self._arg_params = {name: zeros(x[0].shape, dtype=x[0].dtype, stype=x[0].stype)
                                for name, x in zip(self._param_names,
                                                   self._exec_group.param_arrays)}
            self._aux_params = {name: zeros(x[0].shape, dtype=x[0].dtype, stype=x[0].stype)
                                for name, x in zip(self._aux_names,
                                                   self._exec_group.aux_arrays)}
        if shared_module is not None and shared_module.optimizer_initialized:
            self.borrow_optimizer(shared_module)
        self.binded = True

    def _check_loaded_params(self):
        """Loaded parameters must cover the symbol's parameters, with the bound
        shapes (MXNet would silently leave a missing weight at zero)."""
        for kind, names, given, blocks in (
                ("argument", self._param_names, self._arg_params, self._exec_group.param_arrays),
                ("auxiliary state", self._aux_names, self._aux_params,
                 self._exec_group.aux_arrays)):
            missing = [n for n in names if n not in given]
            if missing:
                raise MXNetError(
                    "bind: the loaded parameters have no value for the %s(s) %s of the symbol "
                    "(the parameter file has %s); it does not belong to this symbol, or was "
                    "saved incompletely" % (kind, ", ".join(missing), sorted(given)))
            for name, block in zip(names, blocks):
                if given[name].shape != block[0].shape:
                    raise MXNetError("bind: the loaded %s %s has shape %s but the symbol needs %s"
                                     % (kind, name, given[name].shape, block[0].shape))

    def _check_bind_inputs(self):
        """Raise a clear error when the given shapes leave an input of the
        symbol (a label the user forgot, say) with an unknown shape."""
        shapes = {d.name: d.shape for d in self._data_shapes}
        if self._label_shapes is not None:
            shapes.update({d.name: d.shape for d in self._label_shapes})
        arg_shapes, _, _ = self._symbol.infer_shape_partial(**shapes)
        if arg_shapes is None:
            return      # simple_bind reports what is wrong
        unknown = [n for n, s in zip(self._symbol.list_arguments(), arg_shapes)
                   if not s or 0 in s]
        if not unknown:
            return
        labels = [n for n in unknown if n in self._label_names]
        if labels:
            raise MXNetError(
                "bind: the shape of the label input(s) %s cannot be inferred from the data "
                "shapes %s; pass label_shapes=[(name, shape)] (usually data_iter.provide_label)"
                % (labels, [tuple(d) for d in self._data_shapes]))
        raise MXNetError("bind: cannot infer the shape of %s from the data shapes %s and label "
                         "shapes %s" % (unknown, [tuple(d) for d in self._data_shapes],
                                        None if self._label_shapes is None else
                                        [tuple(d) for d in self._label_shapes]))

    def reshape(self, data_shapes, label_shapes=None):
        """Re-shape the executors for new input shapes (memory is shared)."""
        self._require(params=False, what="reshape")
        self._data_shapes, self._label_shapes = _parse_data_desc(
            self.data_names, self.label_names, data_shapes, label_shapes)
        self._exec_group.reshape(self._data_shapes, self._label_shapes)

    # ------------------------------------------------------------ optimizer
    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """Install the optimizer (a name with ``optimizer_params``, or an
        Optimizer) and the kvstore. ``rescale_grad`` defaults to 1/batch_size."""
        self._require(what="init_optimizer")
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring...')
            return
        if self._params_dirty:
            self._sync_params_from_devices()
        kvstore, update_on_kvstore = _create_kvstore(kvstore, len(self._context),
                                                     self._arg_params)
        batch_size = self._exec_group.batch_size
        if kvstore and 'dist' in kvstore.type and '_sync' in kvstore.type:
            batch_size *= kvstore.num_workers
        rescale_grad = 1.0 / batch_size

        idx2name = {}
        if update_on_kvstore:
            idx2name.update(enumerate(self._exec_group.param_names))
        else:
            for k in range(len(self._context)):
                idx2name.update({i * len(self._context) + k: n
                                 for i, n in enumerate(self._exec_group.param_names)})
        if isinstance(optimizer, str):
            optimizer_params = dict(optimizer_params)
            if 'rescale_grad' not in optimizer_params:
                optimizer_params['rescale_grad'] = rescale_grad
            optimizer = opt.create(optimizer, sym=self.symbol, param_idx2name=idx2name,
                                   **optimizer_params)
        else:
            if not isinstance(optimizer, opt.Optimizer):
                raise TypeError("optimizer must be a name or an mx.optimizer.Optimizer, got %s"
                                % type(optimizer).__name__)
            if optimizer.rescale_grad != rescale_grad:
                warnings.warn(
                    "Optimizer created manually outside Module but rescale_grad "
                    "is not normalized to 1.0/batch_size/num_workers (%s vs. %s). "
                    "Is this intended?" % (optimizer.rescale_grad, rescale_grad), stacklevel=2)
            if not optimizer.idx2name:
                optimizer.idx2name = idx2name.copy()

        self._optimizer = optimizer
        self._kvstore = kvstore
        self._update_on_kvstore = update_on_kvstore
        self._updater = None
        if kvstore:
            if self._compression_params:
                kvstore.set_gradient_compression(self._compression_params)
            if update_on_kvstore:
                kvstore.set_optimizer(self._optimizer)
            _initialize_kvstore(kvstore=kvstore, param_arrays=self._exec_group.param_arrays,
                                arg_params=self._arg_params, param_names=self._param_names,
                                update_on_kvstore=update_on_kvstore)
        if not update_on_kvstore:
            self._updater = opt.get_updater(optimizer)
        self.optimizer_initialized = True
        if self._preload_opt_states is not None:
            self.load_optimizer_states(self._preload_opt_states)
            self._preload_opt_states = None

    def borrow_optimizer(self, shared_module):
        """Use ``shared_module``'s optimizer, kvstore and updater."""
        if not shared_module.optimizer_initialized:
            raise MXNetError("borrow_optimizer: the shared module has no optimizer")
        self._optimizer = shared_module._optimizer
        self._kvstore = shared_module._kvstore
        self._update_on_kvstore = shared_module._update_on_kvstore
        self._updater = shared_module._updater
        self.optimizer_initialized = True

    # ------------------------------------------------------------ computation
    def forward(self, data_batch, is_train=None):
        """Run forward on ``data_batch`` (``is_train`` defaults to
        ``for_training``). A batch of another shape (a smaller last batch)
        reshapes the executors first."""
        self._require(what="forward")
        curr_data_shapes = tuple(i.shape for i in self._data_shapes)
        if isinstance(data_batch, list):
            if not data_batch:
                raise MXNetError("forward: empty list of data batches")
            new_data_shapes = []
            for i in range(len(data_batch[0].data)):
                shape = data_batch[0].data[i].shape
                for db in data_batch:
                    if shape != db.data[i].shape:
                        raise MXNetError("All data batches in a list need to have the same "
                                         "shape")
                new_data_shapes.append((len(data_batch) * shape[0],) + shape[1:])
            new_data_shapes = tuple(new_data_shapes)
        else:
            if len(data_batch.data) != len(self._data_shapes):
                raise MXNetError("forward: the batch has %d data arrays but the module has %d "
                                 "data inputs %s" % (len(data_batch.data),
                                                     len(self._data_shapes), self._data_names))
            new_data_shapes = tuple(i.shape for i in data_batch.data)

        if curr_data_shapes != new_data_shapes:
            if getattr(data_batch, "provide_data", None):
                new_dshape = data_batch.provide_data
            else:
                new_dshape = [DataDesc(i.name, shape, i.dtype, i.layout)
                              for i, shape in zip(self._data_shapes, new_data_shapes)]
            if getattr(data_batch, "provide_label", None):
                new_lshape = data_batch.provide_label
            elif getattr(data_batch, "label", None) and self._label_shapes:
                new_lshape = [DataDesc(i.name, j.shape, i.dtype, i.layout)
                              for i, j in zip(self._label_shapes, data_batch.label)]
            else:
                # no labels in the batch (predict on an array): MXNet fails to reshape
                # the label inputs here; infer their shapes from the new data shapes
                new_lshape = self._infer_label_shapes(new_dshape)
            self.reshape(new_dshape, new_lshape)
        self._exec_group.forward(data_batch, is_train)

    def _infer_label_shapes(self, data_shapes):
        """Label DataDescs for new data shapes, or None when there are no
        labels or their shapes do not follow from the data."""
        if not self._label_shapes:
            return None
        shapes = {d[0]: tuple(d[1]) for d in data_shapes}
        arg_shapes, _, _ = self._symbol.infer_shape_partial(**shapes)
        if arg_shapes is None:
            return None
        inferred = dict(zip(self._symbol.list_arguments(), arg_shapes))
        out = []
        for desc in self._label_shapes:
            s = inferred.get(desc.name)
            if not s or 0 in s:
                return None
            out.append(DataDesc(desc.name, tuple(s), desc.dtype, desc.layout))
        return out

    def backward(self, out_grads=None):
        """Backward of the last forward (``out_grads`` for non-loss outputs)."""
        self._require(what="backward")
        self._exec_group.backward(out_grads=out_grads)

    def update(self):
        """Update the parameters from the gradients of the last backward."""
        self._require(optimizer=True, what="update")
        self._params_dirty = True
        kv = self._kvstore
        if kv is not None and hasattr(kv, "_ct") and "async" not in kv.type:
            # aiond's MPI stores: every gradient in one call (fused buckets,
            # last parameter first: the order backward computes them)
            eg = self._exec_group
            keys, grads, outs = [], [], []
            for index in reversed(range(len(eg.param_arrays))):
                if eg.grad_arrays[index][0] is None:
                    continue
                keys.append(eg.param_names[index])
                grads.append(eg.grad_arrays[index])
                outs.append(eg.param_arrays[index] if self._update_on_kvstore
                            else eg.grad_arrays[index])
            if keys:
                kv.pushpull(keys, grads, out=outs)
            if not self._update_on_kvstore:
                _update_params(eg.param_arrays, eg.grad_arrays, updater=self._updater,
                               num_device=len(self._context), kvstore=None,
                               param_names=eg.param_names)
            return
        if self._update_on_kvstore:
            _update_params_on_kvstore(self._exec_group.param_arrays,
                                      self._exec_group.grad_arrays,
                                      self._kvstore, self._exec_group.param_names)
        else:
            _update_params(self._exec_group.param_arrays, self._exec_group.grad_arrays,
                           updater=self._updater, num_device=len(self._context),
                           kvstore=self._kvstore, param_names=self._exec_group.param_names)

    def get_outputs(self, merge_multi_context=True):
        """Outputs of the last forward (merged over devices by default)."""
        self._require(what="get_outputs")
        return self._exec_group.get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the data inputs (bind with ``inputs_need_grad=True``)."""
        self._require(what="get_input_grads")
        if not self.inputs_need_grad:
            raise MXNetError("get_input_grads: bind with inputs_need_grad=True first")
        return self._exec_group.get_input_grads(merge_multi_context=merge_multi_context)

    def get_states(self, merge_multi_context=True):
        self._require(what="get_states")
        return self._exec_group.get_states(merge_multi_context=merge_multi_context)

    def set_states(self, states=None, value=None):
        self._require(what="set_states")
        self._exec_group.set_states(states, value)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with the last outputs and ``labels``."""
        self._exec_group.update_metric(eval_metric, labels, pre_sliced)

    def _sync_params_from_devices(self):
        self._exec_group.get_params(self._arg_params, self._aux_params)
        self._params_dirty = False

    # ------------------------------------------------------------ optimizer states
    def save_optimizer_states(self, fname):
        """Write the optimizer (updater) states to ``fname``."""
        self._require(optimizer=True, what="save_optimizer_states")
        if self._update_on_kvstore:
            self._kvstore.save_optimizer_states(fname)
        else:
            with open(fname, 'wb') as fout:
                fout.write(self._updater.get_states())

    def load_optimizer_states(self, fname):
        """Read the optimizer states written by ``save_optimizer_states`` (or
        by MXNet)."""
        self._require(optimizer=True, what="load_optimizer_states")
        if self._update_on_kvstore:
            self._kvstore.load_optimizer_states(fname)
        else:
            with open(fname, 'rb') as f:
                self._updater.set_states(f.read())

    def install_monitor(self, mon):
        """Install a ``mx.mon.Monitor`` on every executor."""
        self._require(params=False, what="install_monitor")
        self._exec_group.install_monitor(mon)

    def prepare(self, data_batch, sparse_row_id_fn=None):
        """Nothing to prepare for dense parameters."""
        self._require(params=False, what="prepare")
        if sparse_row_id_fn is not None:
            warnings.warn(UserWarning("Parameters are not updated in the KVStore. "
                                      "No need to call sparse_row_id_fn."))
