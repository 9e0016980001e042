"""``SequentialModule``: modules chained so that each one's outputs are the
next one's data (MXNet 1.9.1's ``mx.mod.SequentialModule``).

    seq = mx.mod.SequentialModule()
    seq.add(feature_mod).add(head_mod, take_labels=True, auto_wiring=True)
    seq.fit(train_iter, num_epoch=3)

``take_labels=True`` gives a module the batch's labels (and makes it one
the metric is computed on); ``auto_wiring=True`` renames the previous
module's outputs to this module's ``data_names``.
"""
from __future__ import annotations

import copy
import logging

from ..base import MXNetError
from ..initializer import Uniform
from .base_module import BaseModule

__all__ = ["SequentialModule"]


class SequentialModule(BaseModule):
    """A container of modules run one after the other."""

    META_TAKE_LABELS = 'take_labels'
    META_AUTO_WIRING = 'auto_wiring'

    def __init__(self, logger=logging):
        super(SequentialModule, self).__init__(logger=logger)
        self._modules = []
        self._metas = []
        self._label_shapes = None
        self._data_shapes = None
        self._meta_keys = {getattr(SequentialModule, x) for x in dir(SequentialModule)
                           if x.startswith('META_')}

    def add(self, module, **kwargs):
        """Append ``module`` with its meta flags (``take_labels``,
        ``auto_wiring``); the container must be bound again. Returns self,
        so calls chain."""
        for key in kwargs:
            if key not in self._meta_keys:
                raise ValueError('Unknown meta "%s", a typo? (known: %s)'
                                 % (key, ", ".join(sorted(self._meta_keys))))
        self._modules.append(module)
        self._metas.append(kwargs)
        self.binded = False
        self.params_initialized = False
        self.optimizer_initialized = False
        return self

    def _takes_labels(self, i):
        return bool(self._metas[i].get(SequentialModule.META_TAKE_LABELS, False))

    # ------------------------------------------------------------ information
    @property
    def data_names(self):
        return self._modules[0].data_names if self._modules else []

    @property
    def output_names(self):
        return self._modules[-1].output_names if self._modules else []

    @property
    def data_shapes(self):
        self._require(params=False, what="data_shapes")
        return self._modules[0].data_shapes

    @property
    def label_shapes(self):
        self._require(params=False, what="label_shapes")
        return self._label_shapes

    @property
    def output_shapes(self):
        self._require(params=False, what="output_shapes")
        return self._modules[-1].output_shapes

    # ------------------------------------------------------------ parameters
    def get_params(self):
        """Every module's parameters in one pair of dicts."""
        self._require(what="get_params")
        arg_params, aux_params = {}, {}
        for module in self._modules:
            arg, aux = module.get_params()
            arg_params.update(arg)
            aux_params.update(aux)
        return (arg_params, aux_params)

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Initialise every module's parameters; two modules may not have a
        parameter of the same name."""
        if self.params_initialized and not force_init:
            return
        self._require(params=False, what="init_params")
        for module in self._modules:
            module.init_params(initializer=initializer, arg_params=arg_params,
                               aux_params=aux_params, allow_missing=allow_missing,
                               force_init=force_init, allow_extra=allow_extra)

        def _check_name(known, new_names, i):
            for name in new_names:
                if name in known:
                    raise MXNetError(
                        'Duplicated parameter names: name "%s" in layer %d (%s) is already '
                        'used in layer %d (%s).' % (name, i, type(self._modules[i]),
                                                    known[name],
                                                    type(self._modules[known[name]])))
                known[name] = i

        arg_names, aux_names = {}, {}
        for i, module in enumerate(self._modules):
            arg, aux = module.get_params()
            _check_name(arg_names, arg.keys(), i)
            _check_name(aux_names, aux.keys(), i)
        self.params_initialized = True

    # ------------------------------------------------------------ binding
    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Bind each module on the previous one's output shapes; every module
        after the first needs input gradients when training."""
        if self.binded and not force_rebind:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if inputs_need_grad and not for_training:
            raise ValueError("bind: inputs_need_grad=True needs for_training=True")
        if shared_module is not None:
            raise MXNetError("SequentialModule.bind: shared_module is not supported")
        if not self._modules:
            raise MXNetError("Attempting to bind an empty SequentialModule (add modules "
                             "first)")
        self.binded = True
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._label_shapes = label_shapes
        my_data_shapes = data_shapes
        anybody_needs_label = False
        for i, module in enumerate(self._modules):
            meta = self._metas[i]
            if self._takes_labels(i):
                my_label_shapes = label_shapes
                anybody_needs_label = True
            else:
                my_label_shapes = None
            my_inputs_need_grad = bool(inputs_need_grad or (for_training and i > 0))
            if meta.get(SequentialModule.META_AUTO_WIRING, False):
                data_names = module.data_names
                if len(data_names) != len(my_data_shapes):
                    raise MXNetError(
                        "auto_wiring: layer %d takes %d data inputs %s but the previous layer "
                        "gives %d outputs" % (i, len(data_names), list(data_names),
                                              len(my_data_shapes)))
                my_data_shapes = [(new_name, shape) for new_name, (_, shape)
                                  in zip(data_names, my_data_shapes)]
            module.bind(data_shapes=my_data_shapes, label_shapes=my_label_shapes,
                        for_training=for_training, inputs_need_grad=my_inputs_need_grad,
                        force_rebind=force_rebind, shared_module=None, grad_req=grad_req)
            my_data_shapes = module.output_shapes
        if not anybody_needs_label:
            self._label_shapes = None

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        self._require(what="init_optimizer")
        if self.optimizer_initialized and not force_init:
            self.logger.warning('optimizer already initialized, ignoring.')
            return
        for module in self._modules:
            module.init_optimizer(kvstore=kvstore, optimizer=optimizer,
                                  optimizer_params=optimizer_params, force_init=force_init)
        self.optimizer_initialized = True

    # ------------------------------------------------------------ computation
    def forward(self, data_batch, is_train=None):
        """Run the modules in order, each on the previous one's outputs."""
        self._require(what="forward")
        data_batch = copy.copy(data_batch)
        for i, module in enumerate(self._modules):
            module.forward(data_batch, is_train=is_train)
            if i + 1 == len(self._modules):
                break
            data_batch.data = module.get_outputs()
            if hasattr(data_batch, 'provide_data'):
                data_names = [x[0] for x in module.output_shapes]
                data_batch.provide_data = [(name, x.shape) for name, x in
                                           zip(data_names, data_batch.data)]

    def backward(self, out_grads=None):
        """Backward from the last module to the first, each passing its input
        gradients on as the previous one's output gradients."""
        self._require(what="backward")
        for i in reversed(range(len(self._modules))):
            module = self._modules[i]
            module.backward(out_grads=out_grads)
            if i == 0:
                break
            out_grads = module.get_input_grads()

    def update(self):
        self._require(optimizer=True, what="update")
        for module in self._modules:
            module.update()

    def get_outputs(self, merge_multi_context=True):
        self._require(what="get_outputs")
        return self._modules[-1].get_outputs(merge_multi_context=merge_multi_context)

    def get_input_grads(self, merge_multi_context=True):
        self._require(what="get_input_grads")
        if not self.inputs_need_grad:
            raise MXNetError("get_input_grads: bind with inputs_need_grad=True first")
        return self._modules[0].get_input_grads(merge_multi_context=merge_multi_context)

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with the outputs of the modules added with
        ``take_labels=True``."""
        self._require(what="update_metric")
        for i, module in enumerate(self._modules):
            if self._takes_labels(i):
                module.update_metric(eval_metric, labels, pre_sliced)

    def install_monitor(self, mon):
        self._require(params=False, what="install_monitor")
        for module in self._modules:
            module.install_monitor(mon)
