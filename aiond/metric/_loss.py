"""Loss, the mean of outputs that are losses, and its Torch and Caffe names."""
from __future__ import annotations

import numpy

from ..ndarray import NDArray
from ._base import EvalMetric, _f, _np


class Loss(EvalMetric):
    """Mean of the predictions themselves (for outputs that are losses)."""

    def __init__(self, name='loss', output_names=None, label_names=None):
        super(Loss, self).__init__(
            name, output_names=output_names, label_names=label_names,
            has_global_stats=True)

    def update(self, _, preds):
        if isinstance(preds, (NDArray, numpy.ndarray)):
            preds = [preds]
        for pred in preds:
            loss = _f(numpy.sum(_np(pred)))
            self.sum_metric += loss
            self.global_sum_metric += loss
            self.num_inst += pred.size
            self.global_num_inst += pred.size


class Torch(Loss):
    """Dummy metric for torch criterions."""

    def __init__(self, name='torch', output_names=None, label_names=None):
        super(Torch, self).__init__(name, output_names=output_names, label_names=label_names)


class Caffe(Loss):
    """Dummy metric for caffe criterions."""

    def __init__(self, name='caffe', output_names=None, label_names=None):
        super(Caffe, self).__init__(name, output_names=output_names, label_names=label_names)

