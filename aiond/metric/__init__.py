"""Online evaluation metrics (MXNet 1.9.1 ``mxnet.metric``).

Every metric reads its inputs with ``asnumpy()`` and computes with numpy, as
MXNet's do, so results match MXNet on the same inputs. ``update`` takes lists
of NDArrays (a single NDArray is wrapped; numpy arrays are accepted too).
Each metric keeps a local count (``num_inst``/``sum_metric``, cleared by
``reset_local``) and a global one (``global_num_inst``/``global_sum_metric``,
cleared only by ``reset``).

The metrics live in _base (EvalMetric, CompositeEvalMetric, CustomMetric,
``create``), _classification, _regression and _loss; this module is their
one public name, as in MXNet.
"""
from __future__ import annotations

from ._base import (_REGISTRY, CompositeEvalMetric, CustomMetric, EvalMetric, alias,
                    check_label_shapes, create, np, register)
from ._classification import F1, MCC, Accuracy, Perplexity, TopKAccuracy
from ._loss import Caffe, Loss, Torch
from ._regression import (MAE, MSE, PCC, RMSE, CrossEntropy, NegativeLogLikelihood,
                          PearsonCorrelation)

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC",
           "Perplexity", "MAE", "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood",
           "PearsonCorrelation", "PCC", "Loss", "Torch", "Caffe", "CustomMetric", "np",
           "create", "register", "alias", "check_label_shapes"]

for _cls in (EvalMetric, CompositeEvalMetric, Accuracy, TopKAccuracy, F1, MCC, Perplexity, MAE,
             MSE, RMSE, CrossEntropy, NegativeLogLikelihood, PearsonCorrelation, PCC, Loss,
             Torch, Caffe, CustomMetric):
    # reprs, pickles and the registry's messages name the public module
    _cls.__module__ = __name__
    if _cls is not EvalMetric:
        register(_cls)
del _cls

# MXNet keeps the metric table in mx.registry; share it (and the module names MXNet has)
from .. import ndarray, registry  # noqa: E402,F401
registry._share(EvalMetric, _REGISTRY)
