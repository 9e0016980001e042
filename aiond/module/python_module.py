"""``PythonModule`` and ``PythonLossModule``: modules written in Python
rather than as a Symbol (MXNet 1.9.1's ``mx.mod.PythonModule``), most often
a custom loss at the end of a ``SequentialModule``.

    loss = mx.mod.PythonLossModule(grad_func=lambda scores, labels: scores - labels)
    seq = mx.mod.SequentialModule().add(net_mod).add(loss, take_labels=True,
                                                     auto_wiring=True)

A PythonModule has no parameters: ``init_params``, ``init_optimizer`` and
``update`` do nothing. Subclasses give ``_compute_output_shapes``,
``forward``, ``get_outputs``, ``backward`` and ``get_input_grads``.
"""
from __future__ import annotations

import logging

from .. import ndarray as nd
from ..base import MXNetError
from ..initializer import Uniform
from .base_module import BaseModule

__all__ = ["PythonModule", "PythonLossModule"]


class PythonModule(BaseModule):
    """A parameterless module; subclass it to compute in Python.

    Parameters
    ----------
    data_names, label_names, output_names : list of str
    logger : Logger
    """

    def __init__(self, data_names, label_names, output_names, logger=logging):
        super(PythonModule, self).__init__(logger=logger)
        if isinstance(data_names, tuple):
            data_names = list(data_names)
        if isinstance(label_names, tuple):
            label_names = list(label_names)
        self._data_names = data_names
        self._label_names = label_names
        self._output_names = output_names
        self._data_shapes = None
        self._label_shapes = None
        self._output_shapes = None

    @property
    def data_names(self):
        return self._data_names

    @property
    def output_names(self):
        return self._output_names

    @property
    def data_shapes(self):
        return self._data_shapes

    @property
    def label_shapes(self):
        return self._label_shapes

    @property
    def output_shapes(self):
        return self._output_shapes

    def get_params(self):
        """No parameters: ``({}, {})``."""
        return (dict(), dict())

    def init_params(self, initializer=Uniform(0.01), arg_params=None, aux_params=None,
                    allow_missing=False, force_init=False, allow_extra=False):
        """Nothing to initialise."""
        self.params_initialized = True

    def update(self):
        """No parameters to update."""

    def update_metric(self, eval_metric, labels, pre_sliced=False):
        """Update ``eval_metric`` with ``labels`` and the outputs (only when
        bound with labels)."""
        if self._label_shapes is None:
            return
        if pre_sliced:
            raise RuntimeError("PythonModule does not support presliced labels")
        eval_metric.update(labels, self.get_outputs())

    def bind(self, data_shapes, label_shapes=None, for_training=True, inputs_need_grad=False,
             force_rebind=False, shared_module=None, grad_req='write'):
        """Record the shapes (their names must be ``data_names``/``label_names``,
        in order) and compute the output shapes."""
        if self.binded and not force_rebind:
            self.logger.warning('Already bound, ignoring bind()')
            return
        if grad_req != 'write':
            raise MXNetError("PythonModule only supports grad_req='write', got %r" % (grad_req,))
        names = [x[0] for x in data_shapes]
        if names != list(self._data_names):
            raise MXNetError("PythonModule.bind: data_shapes name %s but the module's "
                             "data_names are %s" % (names, self._data_names))
        if label_shapes is not None:
            lnames = [x[0] for x in label_shapes]
            if self._label_names is None or lnames != list(self._label_names):
                raise MXNetError("PythonModule.bind: label_shapes name %s but the module's "
                                 "label_names are %s" % (lnames, self._label_names))
        self.for_training = for_training
        self.inputs_need_grad = inputs_need_grad
        self._data_shapes = data_shapes
        self._label_shapes = label_shapes
        self._output_shapes = self._compute_output_shapes()
        self.binded = True

    def _compute_output_shapes(self):
        """``[(name, shape)]`` of the outputs, from ``self._data_shapes``."""
        raise NotImplementedError()

    def init_optimizer(self, kvstore='local', optimizer='sgd',
                       optimizer_params=(('learning_rate', 0.01),), force_init=False):
        """No parameters, so no optimizer."""
        self.optimizer_initialized = True


class PythonLossModule(PythonModule):
    """A loss written in Python: forward passes the scores through, backward
    gives ``grad_func(scores, labels)`` as the input gradient.

    Parameters
    ----------
    name : str
        The output is named ``name + '_output'``.
    data_names, label_names : one name each
    grad_func : callable, optional
        ``grad_func(scores, labels) -> gradient`` (an NDArray, or anything
        ``nd.array`` takes). Without it ``backward`` is for a subclass to give.
    """

    def __init__(self, name='pyloss', data_names=('data',), label_names=('softmax_label',),
                 logger=logging, grad_func=None):
        if len(data_names) != 1 or len(label_names) != 1:
            raise ValueError("PythonLossModule takes one data and one label name, got %s and %s"
                             % (list(data_names), list(label_names)))
        if grad_func is not None and not callable(grad_func):
            raise TypeError("grad_func must be callable, got %s" % type(grad_func).__name__)
        super(PythonLossModule, self).__init__(data_names, label_names, [name + '_output'],
                                               logger=logger)
        self._name = name
        self._scores = None
        self._labels = None
        self._scores_grad = None
        self._grad_func = grad_func

    def _compute_output_shapes(self):
        return [(self._name + '_output', self._data_shapes[0][1])]

    def forward(self, data_batch, is_train=None):
        """Keep the scores (and, when training, the labels)."""
        self._scores = data_batch.data[0]
        if is_train is None:
            is_train = self.for_training
        if is_train:
            self._labels = data_batch.label[0]

    def get_outputs(self, merge_multi_context=True):
        if merge_multi_context is not True:
            raise MXNetError("PythonLossModule runs on one device: merge_multi_context must "
                             "be True")
        return [self._scores]

    def backward(self, out_grads=None):
        """The input gradient ``grad_func(scores, labels)`` (a loss takes no
        ``out_grads``)."""
        if out_grads is not None:
            raise MXNetError('For a loss module, out_grads should be None')
        if not self.for_training:
            raise MXNetError("backward: the module is bound with for_training=False")
        self._backward_impl()

    def _backward_impl(self):
        if self._grad_func is None:
            raise NotImplementedError("PythonLossModule without grad_func: subclass it and "
                                      "give _backward_impl, or pass grad_func")
        grad = self._grad_func(self._scores, self._labels)
        if not isinstance(grad, nd.NDArray):
            grad = nd.array(grad)
        self._scores_grad = grad

    def get_input_grads(self, merge_multi_context=True):
        if merge_multi_context is not True:
            raise MXNetError("PythonLossModule runs on one device: merge_multi_context must "
                             "be True")
        return [self._scores_grad]

    def install_monitor(self, mon):
        """A Python loss runs no executor to monitor."""
        raise NotImplementedError("PythonLossModule has no executor to install a monitor on")
