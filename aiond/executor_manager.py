"""``mx.executor_manager``: the data-parallel executor group and manager of
MXNet 1.x's ``FeedForward`` era (MXNet 1.9.1's ``executor_manager.py``).

A ``DataParallelExecutorManager`` splits every batch across contexts by
``work_load_list``, binds one training executor per context (sharing the
default bucket's parameter arrays when a ``sym_gen`` gives one symbol per
bucket key), loads batches into the executors' input arrays and runs
forward/backward on all of them. New code uses ``mx.mod.Module`` (whose
executor group is ``mx.module.DataParallelExecutorGroup``).
"""
from __future__ import annotations

import logging

import numpy as np

from . import ndarray as nd
from .base import mx_real_t
from .context import cpu
from .io import DataDesc
from .symbol.executor import _reshaped

__all__ = ["DataParallelExecutorGroup", "DataParallelExecutorManager"]


def _split_input_slice(batch_size, work_load_list):
    """One slice of the batch per device, sized by ``work_load_list``."""
    total = sum(work_load_list)
    counts = [round(w * batch_size / total) for w in work_load_list]
    if sum(counts) < batch_size:
        counts[-1] += batch_size - sum(counts)
    slices, end = [], 0
    for n in counts:
        begin = int(min(end, batch_size))
        end = int(min(begin + n, batch_size))
        if begin >= end:
            raise ValueError('Too many slices: batch size %d split by work_load_list %s leaves '
                             'a device without examples' % (batch_size, work_load_list))
        slices.append(slice(begin, end))
    return slices


def _check_arguments(symbol):
    """Argument and auxiliary-state names must be unique."""
    arg_names = symbol.list_arguments()
    seen = set()
    for name in arg_names:
        if name in seen:
            raise ValueError('Find duplicated argument name "%s", please make the weight name '
                             'non-duplicated(using name arguments), arguments are %s'
                             % (name, arg_names))
        seen.add(name)
    aux_names = symbol.list_auxiliary_states()
    seen = set()
    for name in aux_names:
        if name in seen:
            raise ValueError('Find duplicated auxiliary param name "%s", please make the weight '
                             'name non-duplicated(using name arguments), arguments are %s, '
                             'auxiliary params are %s' % (name, arg_names, aux_names))
        seen.add(name)


def _load_general(data, targets):
    """Copy each source array to its target (one array, or per-device
    ``(slice, array)`` pairs)."""
    for d_src, d_targets in zip(data, targets):
        if isinstance(d_targets, nd.NDArray):
            d_src.copyto(d_targets)
            continue
        if d_targets[-1][0].stop != d_src.shape[0]:
            raise ValueError("Batch size miss match. Expected %d, got %d"
                             % (d_targets[-1][0].stop, d_src.shape[0]))
        for slice_idx, d_dst in d_targets:
            d_src[slice_idx].copyto(d_dst)


def _load_data(batch, targets):
    _load_general(batch.data, targets)


def _load_label(batch, targets):
    _load_general(batch.label, targets)


def _bind_exec(sym, ctx, input_shapes, param_names, need_grad=False, base_exec=None,
               shared_data_arrays=None, input_types=None, logger=logging):
    """An executor of ``sym`` on ``ctx``: parameters from ``base_exec`` when
    given (shared across buckets), inputs reusing ``shared_data_arrays``
    where they are large enough."""
    arg_shapes, _, aux_shapes = sym.infer_shape(**input_shapes)
    if arg_shapes is None:
        raise ValueError("cannot infer the shapes of %s from %s"
                         % (sym.list_arguments(), input_shapes))
    if input_types is None:
        input_types = {k: mx_real_t for k in input_shapes}
    arg_types, _, aux_types = sym.infer_type(**input_types)
    arg_names = sym.list_arguments()
    grad_arrays = {} if need_grad is not False else None
    if need_grad is False:
        need_grad = set()
    elif need_grad is True:
        need_grad = set(arg_names) - set(input_shapes.keys())
    elif not isinstance(need_grad, set):
        raise TypeError("need_grad must be a bool or a set of names, got %s"
                        % type(need_grad).__name__)
    grad_req = {name: ('write' if name in need_grad else 'null') for name in arg_names}

    arg_arrays = []
    for i, name in enumerate(arg_names):
        shape, dtype = arg_shapes[i], arg_types[i]
        if name not in param_names:
            arr = None
            if shared_data_arrays is not None and name in shared_data_arrays:
                old = shared_data_arrays[name]
                if np.prod(old.shape) >= np.prod(shape) and old.dtype == dtype:
                    arr = _reshaped(old, tuple(shape))     # a view of its first elements
                else:
                    logger.warning('bucketing: data "%s" has a shape %s, which is larger than '
                                   'already allocated shape %s. Need to re-allocate. Consider '
                                   'putting default_bucket_key to be the bucket taking the '
                                   'largest input for better memory sharing.',
                                   name, shape, old.shape)
            if arr is None:
                arr = nd.zeros(shape, ctx, dtype=dtype)
                if shared_data_arrays is not None:
                    shared_data_arrays[name] = arr
            arg_arrays.append(arr)
        elif base_exec is None:
            arg_arrays.append(nd.zeros(shape, ctx, dtype=dtype))
            if name in need_grad:
                grad_arrays[name] = nd.zeros(shape, ctx, dtype=dtype)
        else:
            arr = base_exec.arg_dict[name]
            if arr.shape != tuple(shape) or arr.dtype != dtype:
                raise ValueError("parameter %s has shape %s (%s) in this bucket but %s (%s) in "
                                 "the shared one" % (name, shape, np.dtype(dtype).name,
                                                     arr.shape, np.dtype(arr.dtype).name))
            arg_arrays.append(arr)
            if name in need_grad:
                grad_arrays[name] = base_exec.grad_dict[name]
    if base_exec is None:
        aux_arrays = [nd.zeros(s, ctx, dtype=t) for s, t in zip(aux_shapes, aux_types)]
    else:
        for s, a in zip(aux_shapes, base_exec.aux_arrays):
            if tuple(s) != a.shape:
                raise ValueError("auxiliary state of shape %s differs from the shared one's %s"
                                 % (s, a.shape))
        aux_arrays = list(base_exec.aux_arrays)
    return sym.bind(ctx=ctx, args=arg_arrays, args_grad=grad_arrays, aux_states=aux_arrays,
                    grad_req=grad_req, shared_exec=base_exec)


class DataParallelExecutorGroup(object):
    """One training executor per context for ``sym``, each on its slice of
    the batch (``train_data`` gives ``provide_data``/``provide_label``)."""

    def __init__(self, sym, arg_names, param_names, ctx, slices, train_data, shared_group=None):
        _check_arguments(sym)
        if shared_group is None:
            self.shared_data_arrays = [{} for _ in ctx]
        else:
            self.shared_data_arrays = shared_group.shared_data_arrays
        self.data_names = [x[0] for x in train_data.provide_data]
        self.label_names = [x[0] for x in train_data.provide_label]
        self.aux_names = sym.list_auxiliary_states()
        self.param_idx = [i for i in range(len(arg_names)) if arg_names[i] in param_names]
        self.param_names = [arg_names[i] for i in self.param_idx]

        self.train_execs = []
        for i, ctxi in enumerate(ctx):
            data_shapes, data_types = {}, {}
            for x in train_data.provide_data + train_data.provide_label:
                data_shapes[x[0]] = tuple([slices[i].stop - slices[i].start] + list(x[1][1:]))
                data_types[x[0]] = x.dtype if isinstance(x, DataDesc) else mx_real_t
            shared_exec = None if shared_group is None else shared_group.train_execs[i]
            self.train_execs.append(_bind_exec(sym, ctxi, data_shapes, self.param_names,
                                               need_grad=True, base_exec=shared_exec,
                                               shared_data_arrays=self.shared_data_arrays[i],
                                               input_types=data_types))
        self.data_arrays = [[(slices[i], e.arg_dict[name]) for i, e in enumerate(self.train_execs)]
                            for name in self.data_names]
        self.label_arrays = [[(slices[i], e.arg_dict[name])
                              for i, e in enumerate(self.train_execs)]
                             for name in self.label_names]
        self.param_arrays = [[e.arg_arrays[i] for e in self.train_execs] for i in self.param_idx]
        self.grad_arrays = [[e.grad_arrays[i] for e in self.train_execs] for i in self.param_idx]
        self.aux_arrays = [[e.aux_arrays[i] for e in self.train_execs]
                           for i in range(len(self.aux_names))]
        self.slices = slices

    def load_data_batch(self, data_batch):
        """Copy the batch's data and labels into every executor's slice."""
        _load_data(data_batch, self.data_arrays)
        _load_label(data_batch, self.label_arrays)

    def forward(self, is_train=False):
        for texec in self.train_execs:
            texec.forward(is_train=is_train)

    def backward(self):
        for texec in self.train_execs:
            texec.backward()

    def update_metric(self, metric, labels, pre_sliced=False):
        """Update ``metric`` with each executor's outputs and its slice of
        ``labels`` (or ``labels[i]`` when ``pre_sliced``)."""
        for i, (texec, islice) in enumerate(zip(self.train_execs, self.slices)):
            labels_slice = labels[i] if pre_sliced else [label[islice] for label in labels]
            metric.update(labels_slice, texec.outputs)


class DataParallelExecutorManager(object):
    """Data-parallel training executors for ``symbol`` on the contexts
    ``ctx`` (one group per bucket key when ``sym_gen`` is given)."""

    def __init__(self, symbol, ctx, train_data, arg_names, param_names, aux_names,
                 work_load_list=None, logger=None, sym_gen=None):
        if logger is None:
            logger = logging
        num_device = len(ctx)
        logger.info('Start training with %s', str(ctx))
        if work_load_list is None:
            work_load_list = [1] * num_device
        if not isinstance(work_load_list, list) or len(work_load_list) != num_device:
            raise ValueError("Invalid settings for work load: work_load_list must be a list "
                             "with one number per context (%d), got %r"
                             % (num_device, work_load_list))
        self.slices = _split_input_slice(train_data.batch_size, work_load_list)
        self.arg_names = arg_names
        self.param_names = param_names
        self.aux_names = aux_names
        self.ctx = ctx
        self.execgrp = DataParallelExecutorGroup(symbol, self.arg_names, self.param_names,
                                                 self.ctx, self.slices, train_data)
        self.symbol = symbol
        self.sym_gen = sym_gen
        self.curr_execgrp = None    # set by load_data_batch
        if self.sym_gen is not None:
            self.execgrp_bucket = {train_data.default_bucket_key: self.execgrp}

    def install_monitor(self, monitor):
        """Install ``monitor`` on every training executor."""
        if self.sym_gen is not None:
            raise NotImplementedError("Monitoring is not implemented for bucketing")
        for train_exec in self.execgrp.train_execs:
            monitor.install(train_exec)

    def set_params(self, arg_params, aux_params):
        """Copy ``arg_params``/``aux_params`` into every executor."""
        for texec in self.execgrp.train_execs:
            texec.copy_params_from(arg_params, aux_params)

    def copy_to(self, arg_params, aux_params):
        """Average each parameter over the devices into ``arg_params``/
        ``aux_params`` (in place)."""
        for name, block in zip(self.param_names, self.param_arrays):
            weight = sum(w.copyto(cpu()) for w in block) / len(block)
            weight.astype(arg_params[name].dtype).copyto(arg_params[name])
        for name, block in zip(self.aux_names, self.aux_arrays):
            weight = sum(w.copyto(cpu()) for w in block) / len(block)
            weight.astype(aux_params[name].dtype).copyto(aux_params[name])

    @property
    def param_arrays(self):
        return self.execgrp.param_arrays

    @property
    def grad_arrays(self):
        return self.execgrp.grad_arrays

    @property
    def aux_arrays(self):
        return self.execgrp.aux_arrays

    def load_data_batch(self, data_batch):
        """Load ``data_batch`` (binding its bucket's executors the first time
        a bucket key is seen)."""
        if self.sym_gen is not None:
            key = data_batch.bucket_key
            if key not in self.execgrp_bucket:
                symbol = self.sym_gen(key)
                self.execgrp_bucket[key] = DataParallelExecutorGroup(
                    symbol, self.arg_names, self.param_names, self.ctx, self.slices,
                    data_batch, shared_group=self.execgrp)
            self.curr_execgrp = self.execgrp_bucket[key]
        else:
            self.curr_execgrp = self.execgrp
        self.curr_execgrp.load_data_batch(data_batch)

    def forward(self, is_train=False):
        self.curr_execgrp.forward(is_train=is_train)

    def backward(self):
        self.curr_execgrp.backward()

    def update_metric(self, metric, labels, pre_sliced=False):
        self.curr_execgrp.update_metric(metric, labels, pre_sliced)
