"""``DataParallelExecutorGroup``: one executor per context, each running a
slice of the batch (MXNet 1.9.1's ``mxnet.module.executor_group``).

The batch is split along each input's batch axis (``N`` of its layout)
in proportion to the work loads; outputs are concatenated back; the
gradients stay per device (the Module sums them through the kvstore or
the updater).
"""
from __future__ import annotations

import logging
from collections import OrderedDict

import numpy as np

from .. import context as ctx
from .. import ndarray as nd
from ..base import MXNetError
from ..io import DataDesc

__all__ = ["DataParallelExecutorGroup"]

# MXNet's dtype flags, for a variable's ``__dtype__`` attribute
_DTYPE_MX_TO_NP = {-1: None, 0: np.float32, 1: np.float64, 2: np.float16, 3: np.uint8,
                   4: np.int32, 5: np.int8, 6: np.int64, 7: np.bool_}


def _split_input_slice(batch_size, work_load_list):
    """Slices of ``range(batch_size)``, one per device, sized by work load."""
    total_work_load = sum(work_load_list)
    batch_num_list = [round(work_load * batch_size / total_work_load)
                      for work_load in work_load_list]
    batch_num_sum = sum(batch_num_list)
    if batch_num_sum < batch_size:
        batch_num_list[-1] += batch_size - batch_num_sum
    slices = []
    end = 0
    for batch_num in batch_num_list:
        begin = int(min((end, batch_size)))
        end = int(min((begin + batch_num, batch_size)))
        if begin >= end:
            raise ValueError('Too many slices. Some splits are empty.')
        slices.append(slice(begin, end))
    return slices


def _concat(arrays, axis):
    """``nd.concat`` of ``arrays`` along ``axis`` (on the first one's context)."""
    concat = getattr(nd, "concat", None)
    if concat is not None:
        return concat(*arrays, dim=axis)
    # fallback while the registry has no Concat op
    return nd.array(np.concatenate([a.asnumpy() for a in arrays], axis=axis),
                    ctx=arrays[0].context, dtype=arrays[0].dtype)


def _load_general(data, targets, major_axis):
    """Copy each source array into its targets: whole, or one batch slice per
    device."""
    for d_src, d_targets, axis in zip(data, targets, major_axis):
        if isinstance(d_targets, nd.NDArray):
            d_src.copyto(d_targets)
        elif isinstance(d_src, (list, tuple)):
            for src, dst in zip(d_src, d_targets):
                src.copyto(dst)
        else:
            for slice_idx, d_dst in d_targets:
                if axis >= 0:
                    shape = d_src.shape
                    if slice_idx.start != 0 or shape[axis] != slice_idx.stop:
                        if axis == 0:
                            d_src[slice_idx.start:slice_idx.stop].copyto(d_dst)
                        else:
                            nd.slice_axis(d_src, axis=axis, begin=slice_idx.start,
                                          end=slice_idx.stop).copyto(d_dst)
                    else:
                        d_src.copyto(d_dst)
                else:
                    d_src.copyto(d_dst)


def _load_batch(batch, targets, major_axis, field):
    if isinstance(batch, list):
        srcs = [[getattr(b, field)[i] for b in batch] for i in range(len(targets))]
        _load_general(srcs, [[dst for _, dst in t] for t in targets], major_axis)
    else:
        _load_general(getattr(batch, field), targets, major_axis)


def _merge_multi_context(outputs, major_axis):
    """One array per output: the devices' parts concatenated on the batch axis."""
    rets = []
    for tensors, axis in zip(outputs, major_axis):
        if axis >= 0 and len(tensors) > 1:
            rets.append(_concat([t.as_in_context(tensors[0].context) for t in tensors], axis))
        else:
            rets.append(tensors[0])
    return rets


def _prepare_group2ctxs(group2ctxs, ctx_len):
    """One ``{ctx_group: context}`` dict (or None) per device."""
    if group2ctxs is None:
        return [None] * ctx_len
    if isinstance(group2ctxs, list):
        if len(group2ctxs) != ctx_len:
            raise ValueError("length of group2ctxs should be %d" % ctx_len)
        return group2ctxs
    if isinstance(group2ctxs, dict):
        ret = [{} for _ in range(ctx_len)]
        for k, v in group2ctxs.items():
            if isinstance(v, ctx.Context):
                ctxs = [v] * ctx_len
            elif len(v) == 1:
                ctxs = list(v) * ctx_len
            else:
                if len(v) != ctx_len:
                    raise ValueError("length of group2ctxs[%s] should be %d or 1" % (k, ctx_len))
                ctxs = v
            for i in range(ctx_len):
                ret[i][k] = ctxs[i]
        return ret
    raise ValueError("group2ctxs should be list of dict of str to context, or dict of str to "
                     "context or list of context")


class DataParallelExecutorGroup(object):
    """Executors of ``symbol`` on ``contexts``, each bound to its share of the
    batch; parameters are separate arrays per device."""

    def __init__(self, symbol, contexts, workload, data_shapes, label_shapes, param_names,
                 for_training, inputs_need_grad, shared_group=None, logger=logging,
                 fixed_param_names=None, grad_req='write', state_names=None, group2ctxs=None):
        self.param_names = param_names
        self.arg_names = symbol.list_arguments()
        self.aux_names = symbol.list_auxiliary_states()
        self.symbol = symbol
        self.contexts = contexts
        self.workload = workload
        self.group2ctxs = _prepare_group2ctxs(group2ctxs, len(contexts))
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self.logger = logger
        self._total_exec_bytes = 0
        self.fixed_param_names = list(fixed_param_names or [])
        self.state_names = list(state_names or [])
        if not for_training:
            grad_req = 'null'
        data_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in data_shapes]
        if label_shapes is not None:
            label_shapes = [x if isinstance(x, DataDesc) else DataDesc(*x) for x in label_shapes]
        data_names = [x.name for x in data_shapes]
        self.grad_req = self._grad_reqs(grad_req, data_names)
        if shared_group is not None:
            self.shared_data_arrays = shared_group.shared_data_arrays
        else:
            self.shared_data_arrays = [{} for _ in contexts]
        self.batch_size = None
        self.slices = None
        self.execs = []
        self._default_execs = None
        self._reshape_cache = {}
        self.data_arrays = self.label_arrays = self.param_arrays = None
        self.state_arrays = self.grad_arrays = self.aux_arrays = None
        self.input_grad_arrays = None
        self.data_shapes = self.label_shapes = None
        self.data_names = self.label_names = None
        self.data_layouts = self.label_layouts = None
        self.output_names = self.symbol.list_outputs()
        self.num_outputs = len(self.output_names)
        self.output_layouts = [DataDesc.get_batch_axis(self.symbol[i].attr('__layout__'))
                               for i in range(self.num_outputs)]
        self.bind_exec(data_shapes, label_shapes, shared_group)

    def _grad_reqs(self, grad_req, data_names):
        def default(k, req):
            if k in self.param_names:
                return 'null' if k in self.fixed_param_names else req
            if k in data_names:
                return req if self.inputs_need_grad else 'null'
            return 'null'
        if isinstance(grad_req, str):
            return {k: default(k, grad_req) for k in self.arg_names}
        if isinstance(grad_req, (list, tuple)):
            if len(grad_req) != len(self.arg_names):
                raise ValueError("grad_req has %d entries for the %d arguments %s"
                                 % (len(grad_req), len(self.arg_names), self.arg_names))
            return dict(zip(self.arg_names, grad_req))
        if isinstance(grad_req, dict):
            reqs = {k: default(k, 'write') for k in self.arg_names}
            reqs.update(grad_req)
            return reqs
        raise ValueError("grad_req must be one of str, list, tuple, or dict.")

    def decide_slices(self, data_shapes):
        """Batch axis of each input; sets ``batch_size`` and ``slices``."""
        if not data_shapes:
            raise MXNetError("bind: no data shapes given")
        major_axis = [DataDesc.get_batch_axis(x.layout) for x in data_shapes]
        for (name, shape), axis in zip(data_shapes, major_axis):
            if axis == -1:
                continue
            batch_size = shape[axis]
            if self.batch_size is not None:
                if batch_size != self.batch_size:
                    raise ValueError("all data must have the same batch size: batch_size = %d, "
                                     "but %s has shape %s" % (self.batch_size, name, shape))
            else:
                self.batch_size = batch_size
                self.slices = _split_input_slice(self.batch_size, self.workload)
        return major_axis

    def _collect_arrays(self):
        execs = self.execs
        self.data_arrays = [[(self.slices[i], e.arg_dict[name]) for i, e in enumerate(execs)]
                            for name, _ in self.data_shapes]
        self.state_arrays = [[e.arg_dict[name] for e in execs] for name in self.state_names]
        if self.label_shapes is not None:
            self.label_arrays = [[(self.slices[i], e.arg_dict[name])
                                  for i, e in enumerate(execs)]
                                 for name, _ in self.label_shapes]
        else:
            self.label_arrays = None
        self.param_arrays = [[e.arg_arrays[i] for e in execs]
                             for i, name in enumerate(self.arg_names) if name in self.param_names]
        if self.for_training:
            self.grad_arrays = [[e.grad_arrays[i] for e in execs]
                                for i, name in enumerate(self.arg_names)
                                if name in self.param_names]
        else:
            self.grad_arrays = None
        if self.inputs_need_grad:
            self.input_grad_arrays = [[e.grad_arrays[self.arg_names.index(name)] for e in execs]
                                      for name, _ in self.data_shapes if name in self.arg_names]
        else:
            self.input_grad_arrays = None
        self.aux_arrays = [[e.aux_arrays[i] for e in execs] for i in range(len(self.aux_names))]

    def bind_exec(self, data_shapes, label_shapes, shared_group=None, reshape=False):
        """Bind (or, with ``reshape``, reshape) the executor of every device."""
        assert reshape or not self.execs
        self.batch_size = None
        self.data_layouts = self.decide_slices(data_shapes)
        if label_shapes is not None:
            self.label_layouts = self.decide_slices(label_shapes)
        for i in range(len(self.contexts)):
            data_shapes_i = self._sliced_shape(data_shapes, i, self.data_layouts)
            label_shapes_i = ([] if label_shapes is None else
                              self._sliced_shape(label_shapes, i, self.label_layouts))
            if reshape:
                self.execs[i] = self._reshaped_exec(i, dict(data_shapes_i + label_shapes_i))
            else:
                self.execs.append(self._bind_ith_exec(i, data_shapes_i, label_shapes_i,
                                                      shared_group))
        self.data_shapes = data_shapes
        self.label_shapes = label_shapes
        self.data_names = [i.name for i in self.data_shapes]
        if label_shapes is not None:
            self.label_names = [i.name for i in self.label_shapes]
        self._collect_arrays()

    def _reshaped_exec(self, i, shapes):
        """Device ``i``'s executor for the input ``shapes``: the first binding
        when they are its shapes, else a reshaped one (kept for reuse, so
        alternating batch sizes do not rebuild executors)."""
        default = self._default_execs[i]
        shapes = {k: tuple(v) for k, v in shapes.items()}
        if all(default.arg_dict[k].shape == v for k, v in shapes.items()):
            return default
        key = (i, tuple(sorted(shapes.items())))
        exe = self._reshape_cache.get(key)
        if exe is None:
            exe = self._reshape_cache[key] = default.reshape(allow_up_sizing=True, **shapes)
        return exe

    def reshape(self, data_shapes, label_shapes):
        """Executors for new input shapes, sharing the first binding's memory."""
        if data_shapes == self.data_shapes and label_shapes == self.label_shapes:
            return
        if self._default_execs is None:
            self._default_execs = list(self.execs)
        self.bind_exec(data_shapes, label_shapes, reshape=True)

    def set_params(self, arg_params, aux_params, allow_extra=False):
        """Copy the parameters into every executor."""
        for exec_ in self.execs:
            exec_.copy_params_from(arg_params, aux_params, allow_extra_params=allow_extra)

    def get_params(self, arg_params, aux_params):
        """Write the devices' parameters (averaged over devices) into the
        given dicts of arrays, in place."""
        for names, blocks, target in ((self.param_names, self.param_arrays, arg_params),
                                      (self.aux_names, self.aux_arrays, aux_params)):
            for name, block in zip(names, blocks):
                dst = target[name]
                if len(block) == 1:
                    w = block[0]
                else:
                    w = sum(w.copyto(ctx.cpu()) for w in block) / len(block)
                if w.dtype != dst.dtype:
                    w = w.astype(dst.dtype)
                w.copyto(dst)

    def load_data_batch(self, data_batch):
        """Copy the batch's data and labels into the executors' inputs."""
        _load_batch(data_batch, self.data_arrays, self.data_layouts, "data")
        if self.label_arrays is None:
            return
        first = data_batch[0] if isinstance(data_batch, list) else data_batch
        if first is not None and first.label:
            _load_batch(data_batch, self.label_arrays, self.label_layouts, "label")

    def forward(self, data_batch, is_train=None):
        """Load ``data_batch`` (unless None: already loaded) and run forward on
        every device."""
        if data_batch is not None:
            self.load_data_batch(data_batch)
        if is_train is None:
            is_train = self.for_training
        for exec_ in self.execs:
            exec_.forward(is_train=is_train)

    def get_output_shapes(self):
        """``[(name, shape)]`` of the outputs for the whole batch."""
        shapes = []
        for key, out, axis in zip(self.output_names, self.execs[0].outputs,
                                  self.output_layouts):
            the_shape = list(out.shape)
            if axis >= 0:
                the_shape[axis] = self.batch_size
            shapes.append((key, tuple(the_shape)))
        return shapes

    def get_outputs(self, merge_multi_context=True, begin=0, end=None):
        """Outputs ``[begin, end)``: merged over devices, or per device."""
        if end is None:
            end = self.num_outputs
        outputs = [[exec_.outputs[i] for exec_ in self.execs] for i in range(begin, end)]
        if merge_multi_context:
            outputs = _merge_multi_context(outputs, self.output_layouts)
        return outputs

    def get_states(self, merge_multi_context=True):
        if merge_multi_context:
            raise MXNetError("merge_multi_context=True is not supported for get_states yet.")
        return self.state_arrays

    def set_states(self, states=None, value=None):
        """Set the state arrays from ``states`` (per state, per device) or to ``value``."""
        if states is not None:
            if value is not None:
                raise ValueError("Only one of states & value can be specified.")
            _load_general(states, self.state_arrays, (0,) * len(states))
        else:
            if value is None:
                raise ValueError("At least one of states & value must be specified.")
            for d_dst in self.state_arrays:
                for dst in d_dst:
                    dst[:] = value

    def get_input_grads(self, merge_multi_context=True):
        """Gradients of the data inputs (bind with ``inputs_need_grad=True``)."""
        if not self.inputs_need_grad:
            raise MXNetError("get_input_grads: bind with inputs_need_grad=True first")
        if merge_multi_context:
            return _merge_multi_context(self.input_grad_arrays, self.data_layouts)
        return self.input_grad_arrays

    def backward(self, out_grads=None):
        """Backward on every device, with its slice of ``out_grads``."""
        if not self.for_training:
            raise MXNetError("re-bind with for_training=True to run backward")
        if out_grads is None:
            out_grads = []
        elif isinstance(out_grads, nd.NDArray):
            out_grads = [out_grads]
        for i, (exec_, islice) in enumerate(zip(self.execs, self.slices)):
            out_grads_slice = []
            for grad, axis in zip(out_grads, self.output_layouts):
                if axis >= 0 and len(self.execs) > 1:
                    og = nd.slice_axis(grad, axis=axis, begin=islice.start, end=islice.stop)
                    out_grads_slice.append(og.as_in_context(self.contexts[i]))
                elif axis >= 0:
                    out_grads_slice.append(grad.as_in_context(self.contexts[i]))
                else:
                    out_grads_slice.append(grad.copyto(self.contexts[i]))
            exec_.backward(out_grads=out_grads_slice)

    def update_metric(self, eval_metric, labels, pre_sliced, by_name=True):
        """Feed each device's outputs and its slice of ``labels`` to
        ``eval_metric`` (by output/label name; FeedForward passes lists)."""
        for current_exec, (texec, islice) in enumerate(zip(self.execs, self.slices)):
            if not pre_sliced:
                labels_slice = []
                for label, axis in zip(labels, self.label_layouts):
                    if axis == 0:
                        labels_slice.append(label if len(self.execs) == 1 and
                                            islice.start == 0 and
                                            islice.stop == label.shape[0] else label[islice])
                    elif axis > 0:
                        labels_slice.append(nd.slice_axis(label, axis=axis, begin=islice.start,
                                                          end=islice.stop)
                                            .as_in_context(label.context))
                    else:
                        labels_slice.append(label)
            else:
                labels_slice = labels[current_exec]
            if by_name:
                eval_metric.update_dict(OrderedDict(zip(self.label_names, labels_slice)),
                                        OrderedDict(zip(self.output_names, texec.outputs)))
            else:
                eval_metric.update(labels_slice, texec.outputs)

    def _bind_ith_exec(self, i, data_shapes, label_shapes, shared_group):
        shared_exec = None if shared_group is None else shared_group.execs[i]
        context = self.contexts[i]
        input_shapes = dict(data_shapes)
        if label_shapes is not None:
            input_shapes.update(dict(label_shapes))
        input_types = {x.name: x.dtype for x in data_shapes}
        attr_dict = self.symbol.attr_dict()
        for name in self.symbol.list_inputs():
            dt = attr_dict.get(name, {}).get("__dtype__")
            if name in input_types and dt is not None and dt != "-1":
                input_types[name] = _DTYPE_MX_TO_NP[int(dt)]
        if label_shapes is not None:
            input_types.update({x.name: x.dtype for x in label_shapes})
        return self.symbol.simple_bind(ctx=context, grad_req=self.grad_req,
                                       type_dict=input_types, shared_arg_names=self.param_names,
                                       shared_exec=shared_exec, group2ctx=self.group2ctxs[i],
                                       shared_buffer=self.shared_data_arrays[i], **input_shapes)

    def _sliced_shape(self, shapes, i, major_axis):
        """``shapes`` with the batch axis cut to device ``i``'s slice."""
        sliced = []
        for desc, axis in zip(shapes, major_axis):
            shape = list(desc.shape)
            if axis >= 0:
                shape[axis] = self.slices[i].stop - self.slices[i].start
            sliced.append(DataDesc(desc.name, tuple(shape), desc.dtype, desc.layout))
        return sliced

    def install_monitor(self, mon):
        """Install ``mon`` (a ``mx.mon.Monitor``) on every executor."""
        for exe in self.execs:
            mon.install(exe)
