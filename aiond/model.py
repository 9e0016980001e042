"""``mx.model``: checkpoints (``save_checkpoint``/``load_checkpoint``), the
parameter-update helpers the Module API shares, and the old ``FeedForward``
estimator, as in MXNet 1.9.1.

A checkpoint is two files: ``prefix-symbol.json`` (MXNet graph JSON) and
``prefix-%04d.params`` (MXNet's binary NDArray format) whose names are
``arg:<name>`` for arguments and ``aux:<name>`` for auxiliary states. Files
written here load in MXNet and the other way round.
"""
from __future__ import annotations

import logging
import time
import warnings
from collections import namedtuple

import numpy as np

from . import io
from . import kvstore as kvs
from . import metric
from . import ndarray as nd
from . import optimizer as opt
from .base import MXNetError
from .context import Context, cpu
from .initializer import Uniform
from .io import DataDesc
# the kvstore helpers, under MXNet's private names for them here
from .kvstore.updates import create_kvstore as _create_kvstore
from .kvstore.updates import initialize_kvstore as _initialize_kvstore
from .kvstore.updates import update_params as _update_params
from .kvstore.updates import update_params_on_kvstore as _update_params_on_kvstore

__all__ = ["BatchEndParam", "save_checkpoint", "load_checkpoint", "load_params", "FeedForward"]

BatchEndParam = namedtuple('BatchEndParams', ['epoch', 'nbatch', 'eval_metric', 'locals'])


def _multiple_callbacks(callbacks, *args, **kwargs):
    """Call ``callbacks`` (None, one function or a list) with the arguments."""
    if isinstance(callbacks, list):
        for cb in callbacks:
            cb(*args, **kwargs)
        return
    if callbacks:
        callbacks(*args, **kwargs)


def _check_arguments(symbol):
    """Raise ValueError if ``symbol`` has two arguments (or two auxiliary
    states) of the same name."""
    arg_names = symbol.list_arguments()
    seen = set()
    for name in arg_names:
        if name in seen:
            raise ValueError(('Find duplicated argument name "%s", please make the weight name '
                              'non-duplicated(using name arguments), arguments are %s')
                             % (name, str(arg_names)))
        seen.add(name)
    aux_names = symbol.list_auxiliary_states()
    seen = set()
    for name in aux_names:
        if name in seen:
            raise ValueError(('Find duplicated auxiliary param name "%s", please make the weight '
                              'name non-duplicated(using name arguments), arguments are %s, '
                              'auxiliary params are %s') % (name, str(arg_names), str(aux_names)))
        seen.add(name)


# ------------------------------------------------------------------ checkpoints

# the checkpoint files' I/O lives in checkpoint.py (callback.py writes them too)
from .checkpoint import load_checkpoint, load_params, save_checkpoint  # noqa: E402,F401
from .checkpoint import split_params as _split_params  # noqa: E402,F401


# ------------------------------------------------------------------ FeedForward

def _load_data(batch, targets):
    """Copy the batch's data into ``targets`` (one array per input)."""
    for src, dst in zip(batch.data, targets):
        src.copyto(dst)


def _train_multi_device(symbol, ctx, param_names, arg_params, aux_params,
                        begin_epoch, end_epoch, epoch_size, optimizer, kvstore,
                        update_on_kvstore, train_data, eval_data=None, eval_metric=None,
                        epoch_end_callback=None, batch_end_callback=None, logger=None,
                        work_load_list=None, monitor=None, eval_end_callback=None,
                        eval_batch_end_callback=None):
    """FeedForward's training loop (MXNet's ``_train_multi_device``); updates
    ``arg_params``/``aux_params`` in place."""
    from .module.executor_group import DataParallelExecutorGroup
    if logger is None:
        logger = logging
    if work_load_list is None:
        work_load_list = [1] * len(ctx)
    group = DataParallelExecutorGroup(symbol, ctx, work_load_list, train_data.provide_data,
                                      train_data.provide_label, param_names, True, False,
                                      logger=logger)
    if monitor:
        group.install_monitor(monitor)
    group.set_params(arg_params, aux_params)
    updater = None
    if not update_on_kvstore:
        updater = opt.get_updater(optimizer)
    else:
        kvstore.set_optimizer(optimizer)
    if kvstore:
        _initialize_kvstore(kvstore, group.param_arrays, arg_params, group.param_names,
                            update_on_kvstore)

    train_data.reset()
    for epoch in range(begin_epoch, end_epoch):
        tic = time.time()
        eval_metric.reset()
        nbatch = 0
        while True:
            do_reset = True
            for data_batch in train_data:
                group.load_data_batch(data_batch)
                if monitor is not None:
                    monitor.tic()
                group.forward(None, is_train=True)
                group.backward()
                if update_on_kvstore:
                    _update_params_on_kvstore(group.param_arrays, group.grad_arrays, kvstore,
                                              group.param_names)
                else:
                    _update_params(group.param_arrays, group.grad_arrays, updater=updater,
                                   num_device=len(ctx), kvstore=kvstore,
                                   param_names=group.param_names)
                if monitor is not None:
                    monitor.toc_print()
                group.update_metric(eval_metric, data_batch.label, False, by_name=False)
                nbatch += 1
                if batch_end_callback is not None:
                    _multiple_callbacks(batch_end_callback,
                                        BatchEndParam(epoch=epoch, nbatch=nbatch,
                                                      eval_metric=eval_metric, locals=locals()))
                if epoch_size is not None and nbatch >= epoch_size:
                    do_reset = False
                    break
            if do_reset:
                logger.info('Epoch[%d] Resetting Data Iterator', epoch)
                train_data.reset()
            if epoch_size is None or nbatch >= epoch_size:
                break
        toc = time.time()
        logger.info('Epoch[%d] Time cost=%.3f', epoch, (toc - tic))

        if epoch_end_callback or epoch + 1 == end_epoch:
            group.get_params(arg_params, aux_params)
        _multiple_callbacks(epoch_end_callback, epoch, symbol, arg_params, aux_params)

        if eval_data:
            eval_metric.reset()
            eval_data.reset()
            total_num_batch = 0
            for i, eval_batch in enumerate(eval_data):
                group.load_data_batch(eval_batch)
                group.forward(None, is_train=False)
                group.update_metric(eval_metric, eval_batch.label, False, by_name=False)
                if eval_batch_end_callback is not None:
                    _multiple_callbacks(eval_batch_end_callback,
                                        BatchEndParam(epoch=epoch, nbatch=i,
                                                      eval_metric=eval_metric, locals=locals()))
                total_num_batch += 1
            if eval_end_callback is not None:
                _multiple_callbacks(eval_end_callback,
                                    BatchEndParam(epoch=epoch, nbatch=total_num_batch,
                                                  eval_metric=eval_metric, locals=locals()))
            eval_data.reset()


from .callback import LogValidationMetricsCallback  # noqa: E402


class FeedForward(object):
    """MXNet's deprecated estimator for a single-input, single-output network
    (use ``mx.mod.Module``). Extra keyword arguments go to the optimizer,
    e.g. ``learning_rate=0.1``."""

    def __init__(self, symbol, ctx=None, num_epoch=None, epoch_size=None, optimizer='sgd',
                 initializer=Uniform(0.01), numpy_batch_size=128, arg_params=None,
                 aux_params=None, allow_extra_params=False, begin_epoch=0, **kwargs):
        warnings.warn('\033[91mmxnet.model.FeedForward has been deprecated. '
                      'Please use mxnet.mod.Module instead.\033[0m',
                      DeprecationWarning, stacklevel=2)
        from .symbol import Symbol
        if isinstance(symbol, Symbol):
            self.symbol = symbol
            self.sym_gen = None
        else:
            if not callable(symbol):
                raise TypeError("FeedForward: symbol must be a Symbol or a function "
                                "returning one, got %s" % type(symbol).__name__)
            self.symbol = None
            self.sym_gen = symbol
        self.arg_params = arg_params
        self.aux_params = aux_params
        self.allow_extra_params = allow_extra_params
        self.argument_checked = False
        if self.sym_gen is None:
            self._check_arguments()
        if ctx is None:
            ctx = [cpu()]
        elif isinstance(ctx, Context):
            ctx = [ctx]
        self.ctx = ctx
        self.num_epoch = num_epoch
        self.epoch_size = epoch_size
        self.kwargs = kwargs.copy()
        self.optimizer = optimizer
        self.initializer = initializer
        self.numpy_batch_size = numpy_batch_size
        self._pred_exec = None
        self.begin_epoch = begin_epoch

    def _check_arguments(self):
        if self.argument_checked:
            return
        self.argument_checked = True
        _check_arguments(self.symbol)
        if self.allow_extra_params:
            if self.arg_params:
                names = set(self.symbol.list_arguments())
                self.arg_params = {k: v for k, v in self.arg_params.items() if k in names}
            if self.aux_params:
                names = set(self.symbol.list_auxiliary_states())
                self.aux_params = {k: v for k, v in self.aux_params.items() if k in names}

    @staticmethod
    def _is_data_arg(name):
        return name.endswith('data') or name.endswith('label')

    def _init_params(self, inputs, overwrite=False):
        """Create and initialise (or copy from the given ones) the parameters."""
        inputs = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in inputs]
        input_shapes = {item.name: item.shape for item in inputs}
        arg_shapes, _, aux_shapes = self.symbol.infer_shape(**input_shapes)
        if arg_shapes is None:
            raise MXNetError("FeedForward: cannot infer the parameter shapes from the inputs %s"
                             % input_shapes)
        arg_dtypes, _, aux_dtypes = self.symbol.infer_type(
            **{item.name: item.dtype for item in inputs})
        arg_names = self.symbol.list_arguments()
        param_names = [key for key in arg_names if key not in input_shapes]
        aux_names = self.symbol.list_auxiliary_states()
        arg_params = {k: nd.zeros(shape=s, dtype=t)
                      for k, s, t in zip(arg_names, arg_shapes, arg_dtypes) if k in param_names}
        aux_params = {k: nd.zeros(shape=s, dtype=t)
                      for k, s, t in zip(aux_names, aux_shapes, aux_dtypes)}
        for k, v in arg_params.items():
            if self.arg_params and k in self.arg_params and not overwrite:
                arg_params[k][:] = self.arg_params[k][:]
            else:
                self.initializer(k, v)
        for k, v in aux_params.items():
            if self.aux_params and k in self.aux_params and not overwrite:
                aux_params[k][:] = self.aux_params[k][:]
            else:
                self.initializer(k, v)
        self.arg_params = arg_params
        self.aux_params = aux_params
        return arg_names, list(param_names), aux_names

    def __getstate__(self):
        this = self.__dict__.copy()
        this['_pred_exec'] = None
        return this

    def __setstate__(self, state):
        self.__dict__.update(state)

    def _init_predictor(self, input_shapes, type_dict=None):
        """Bind (or reuse) the prediction executor for ``input_shapes``."""
        shapes = {name: self.arg_params[name].shape for name in self.arg_params}
        shapes.update(dict(input_shapes))
        if self._pred_exec is not None:
            arg_shapes, _, _ = self.symbol.infer_shape(**shapes)
            if arg_shapes is not None and \
                    arg_shapes == [x.shape for x in self._pred_exec.arg_arrays]:
                return
        pred_exec = self.symbol.simple_bind(self.ctx[0], grad_req='null', type_dict=type_dict,
                                            **shapes)
        pred_exec.copy_params_from(self.arg_params, self.aux_params)
        _check_arguments(self.symbol)
        self._pred_exec = pred_exec

    def _init_iter(self, X, y, is_train):
        """A DataIter for X (and y) given as arrays, or X itself."""
        if isinstance(X, (np.ndarray, nd.NDArray)):
            if y is None:
                if is_train:
                    raise ValueError('y must be specified when X is numpy.ndarray')
                y = np.zeros(X.shape[0])
            if not isinstance(y, (np.ndarray, nd.NDArray)):
                raise TypeError('y must be ndarray when X is numpy.ndarray')
            if X.shape[0] != y.shape[0]:
                raise ValueError("The numbers of data points and labels not equal")
            if y.ndim == 2 and y.shape[1] == 1:
                y = y.flatten()
            if y.ndim != 1:
                raise ValueError("Label must be 1D or 2D (with 2nd dimension being 1)")
            if is_train:
                return io.NDArrayIter(X, y, min(X.shape[0], self.numpy_batch_size),
                                      shuffle=is_train, last_batch_handle='roll_over')
            return io.NDArrayIter(X, y, min(X.shape[0], self.numpy_batch_size), shuffle=False)
        if not isinstance(X, io.DataIter):
            raise TypeError('X must be DataIter, NDArray or numpy.ndarray')
        return X

    def _init_eval_iter(self, eval_data):
        if eval_data is None:
            return eval_data
        if isinstance(eval_data, (tuple, list)) and len(eval_data) == 2:
            if eval_data[0] is None:
                raise ValueError("Eval data is NONE")
            if eval_data[1] is None and isinstance(eval_data[0], io.DataIter):
                return eval_data[0]
            x = np.array(eval_data[0]) if isinstance(eval_data[0], list) else eval_data[0]
            y = np.array(eval_data[1]) if isinstance(eval_data[1], list) else eval_data[1]
            return self._init_iter(x, y, is_train=True)
        if not isinstance(eval_data, io.DataIter):
            raise TypeError('Eval data must be DataIter, or '
                            'NDArray/numpy.ndarray/list pair (i.e. tuple/list of length 2)')
        return eval_data

    def _pred_setup(self, X):
        data_shapes = X.provide_data
        type_dict = {key: value.dtype for key, value in self.arg_params.items()}
        for x in data_shapes:
            type_dict[x[0]] = x.dtype if isinstance(x, DataDesc) else np.float32
        self._init_predictor(data_shapes, type_dict)
        return [self._pred_exec.arg_dict[x[0]] for x in data_shapes]

    def predict(self, X, num_batch=None, return_data=False, reset=True):
        """Outputs (numpy; a list when the network has several) for X, on the
        first context; with ``return_data`` also the data and labels."""
        X = self._init_iter(X, None, is_train=False)
        if reset:
            X.reset()
        data_arrays = self._pred_setup(X)
        batch_size = X.batch_size
        output_list = [[] for _ in range(len(self._pred_exec.outputs))]
        if return_data:
            data_list = [[] for _ in X.provide_data]
            label_list = [[] for _ in X.provide_label]
        i = 0
        for batch in X:
            _load_data(batch, data_arrays)
            self._pred_exec.forward(is_train=False)
            real_size = batch_size - batch.pad
            for o_list, o_nd in zip(output_list, self._pred_exec.outputs):
                o_list.append(o_nd[0:real_size].asnumpy())
            if return_data:
                for j, x in enumerate(batch.data):
                    data_list[j].append(x[0:real_size].asnumpy())
                for j, x in enumerate(batch.label):
                    label_list[j].append(x[0:real_size].asnumpy())
            i += 1
            if num_batch is not None and i == num_batch:
                break
        outputs = [np.concatenate(x) for x in output_list]
        if len(outputs) == 1:
            outputs = outputs[0]
        if not return_data:
            return outputs
        data = [np.concatenate(x) for x in data_list]
        label = [np.concatenate(x) for x in label_list]
        return (outputs, data[0] if len(data) == 1 else data,
                label[0] if len(label) == 1 else label)

    def score(self, X, eval_metric='acc', num_batch=None, batch_end_callback=None, reset=True):
        """The value of ``eval_metric`` over X."""
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        X = self._init_iter(X, None, is_train=False)
        if reset:
            X.reset()
        data_arrays = self._pred_setup(X)
        for i, batch in enumerate(X):
            if num_batch is not None and i == num_batch:
                break
            _load_data(batch, data_arrays)
            self._pred_exec.forward(is_train=False)
            eval_metric.update(batch.label, self._pred_exec.outputs)
            if batch_end_callback is not None:
                _multiple_callbacks(batch_end_callback,
                                    BatchEndParam(epoch=0, nbatch=i, eval_metric=eval_metric,
                                                  locals=locals()))
        return eval_metric.get()[1]

    def fit(self, X, y=None, eval_data=None, eval_metric='acc', epoch_end_callback=None,
            batch_end_callback=None, kvstore='local', logger=None, work_load_list=None,
            monitor=None, eval_end_callback=LogValidationMetricsCallback(),
            eval_batch_end_callback=None):
        """Train on X (a DataIter, or arrays with labels ``y``); ``eval_data``
        is a DataIter or an ``(X, y)`` pair evaluated after every epoch."""
        data = self._init_iter(X, y, is_train=True)
        eval_data = self._init_eval_iter(eval_data)
        if self.sym_gen:
            self.symbol = self.sym_gen(data.default_bucket_key)
            self._check_arguments()
        self.kwargs["sym"] = self.symbol
        _, param_names, _ = self._init_params(data.provide_data + data.provide_label)
        if not isinstance(eval_metric, metric.EvalMetric):
            eval_metric = metric.create(eval_metric)
        kvstore, update_on_kvstore = _create_kvstore(kvstore, len(self.ctx), self.arg_params)
        param_idx2name = {}
        if update_on_kvstore:
            param_idx2name.update(enumerate(param_names))
        else:
            for i, n in enumerate(param_names):
                for k in range(len(self.ctx)):
                    param_idx2name[i * len(self.ctx) + k] = n
        self.kwargs["param_idx2name"] = param_idx2name
        if isinstance(self.optimizer, str):
            batch_size = data.batch_size
            if kvstore and 'dist' in kvstore.type and '_async' not in kvstore.type:
                batch_size *= kvstore.num_workers
            optimizer = opt.create(self.optimizer, rescale_grad=(1.0 / batch_size),
                                   **self.kwargs)
        elif isinstance(self.optimizer, opt.Optimizer):
            optimizer = self.optimizer
            if not optimizer.idx2name:
                optimizer.idx2name = param_idx2name.copy()
        else:
            raise TypeError("optimizer must be a name or an Optimizer, got %s"
                            % type(self.optimizer).__name__)
        _train_multi_device(self.symbol, self.ctx, param_names, self.arg_params,
                            self.aux_params, begin_epoch=self.begin_epoch,
                            end_epoch=self.num_epoch, epoch_size=self.epoch_size,
                            optimizer=optimizer, train_data=data, eval_data=eval_data,
                            eval_metric=eval_metric, epoch_end_callback=epoch_end_callback,
                            batch_end_callback=batch_end_callback, kvstore=kvstore,
                            update_on_kvstore=update_on_kvstore, logger=logger,
                            work_load_list=work_load_list, monitor=monitor,
                            eval_end_callback=eval_end_callback,
                            eval_batch_end_callback=eval_batch_end_callback)

    def save(self, prefix, epoch=None, remove_amp_cast=True):
        """``save_checkpoint(prefix, epoch or num_epoch, ...)`` of this model."""
        if epoch is None:
            epoch = self.num_epoch
        if epoch is None:
            raise ValueError("FeedForward.save: give epoch= (num_epoch is not set)")
        save_checkpoint(prefix, epoch, self.symbol, self.arg_params, self.aux_params,
                        remove_amp_cast=remove_amp_cast)

    @staticmethod
    def load(prefix, epoch, ctx=None, **kwargs):
        """A FeedForward from a checkpoint (``begin_epoch=epoch``)."""
        symbol, arg_params, aux_params = load_checkpoint(prefix, epoch)
        return FeedForward(symbol, ctx=ctx, arg_params=arg_params, aux_params=aux_params,
                           begin_epoch=epoch, **kwargs)

    @staticmethod
    def create(symbol, X, y=None, ctx=None, num_epoch=None, epoch_size=None, optimizer='sgd',
               initializer=Uniform(0.01), eval_data=None, eval_metric='acc',
               epoch_end_callback=None, batch_end_callback=None, kvstore='local', logger=None,
               work_load_list=None, eval_end_callback=LogValidationMetricsCallback(),
               eval_batch_end_callback=None, **kwargs):
        """Build a FeedForward and ``fit`` it; returns the model."""
        model = FeedForward(symbol, ctx=ctx, num_epoch=num_epoch, epoch_size=epoch_size,
                            optimizer=optimizer, initializer=initializer, **kwargs)
        model.fit(X, y, eval_data=eval_data, eval_metric=eval_metric,
                  epoch_end_callback=epoch_end_callback,
                  batch_end_callback=batch_end_callback, kvstore=kvstore, logger=logger,
                  work_load_list=work_load_list, eval_end_callback=eval_end_callback,
                  eval_batch_end_callback=eval_batch_end_callback)
        return model

# MXNet names in mx.model: its symbol module, and whether scikit-learn (for
# FeedForward as a BaseEstimator) is installed
from . import symbol as sym  # noqa: E402,F401
import importlib.util as _ilu  # noqa: E402
SKLEARN_INSTALLED = _ilu.find_spec("sklearn") is not None
