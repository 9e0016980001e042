"""Online evaluation metrics (MXNet 1.9.1 ``mxnet.metric``).

Every metric reads its inputs with ``asnumpy()`` and computes with numpy, as
MXNet's do, so results match MXNet on the same inputs. ``update`` takes lists
of NDArrays (a single NDArray is wrapped; numpy arrays are accepted too).
Each metric keeps a local count (``num_inst``/``sum_metric``, cleared by
``reset_local``) and a global one (``global_num_inst``/``global_sum_metric``,
cleared only by ``reset``).
"""
from __future__ import annotations

import json
import math
import warnings
from collections import OrderedDict

import numpy

from .base import ShapeError, numeric_types, string_types
from .ndarray import NDArray

__all__ = ["EvalMetric", "CompositeEvalMetric", "Accuracy", "TopKAccuracy", "F1", "MCC",
           "Perplexity", "MAE", "MSE", "RMSE", "CrossEntropy", "NegativeLogLikelihood",
           "PearsonCorrelation", "PCC", "Loss", "Torch", "Caffe", "CustomMetric", "np",
           "create", "register", "alias", "check_label_shapes"]


_AxisError = getattr(getattr(numpy, "exceptions", numpy), "AxisError", ValueError)


def _np(x):
    """numpy view of an NDArray (or of anything numpy takes)."""
    if isinstance(x, NDArray):
        return x.asnumpy()
    return numpy.asarray(x)


def _f(x):
    """A numpy scalar as a Python float (float32 values would otherwise keep
    sums in float32 under numpy 2; MXNet under numpy 1 summed in float64)."""
    return float(x)


def check_label_shapes(labels, preds, wrap=False, shape=False):
    """Raise ValueError unless ``labels`` and ``preds`` have the same length
    (or, with ``shape=True``, the same shape); with ``wrap=True`` a single
    array is put in a list."""
    if not shape:
        label_shape, pred_shape = len(labels), len(preds)
    else:
        label_shape, pred_shape = labels.shape, preds.shape

    if label_shape != pred_shape:
        raise ValueError("Shape of labels {} does not match shape of "
                         "predictions {}".format(label_shape, pred_shape))

    if wrap:
        if isinstance(labels, (NDArray, numpy.ndarray)):
            labels = [labels]
        if isinstance(preds, (NDArray, numpy.ndarray)):
            preds = [preds]

    return labels, preds


# --------------------------------------------------------------------------
# registry (MXNet's mxnet.registry, for EvalMetric only)

_REGISTRY = {}


def register(klass, name=None):
    """Register an EvalMetric subclass under ``name`` (default: its class name), lower-cased."""
    assert issubclass(klass, EvalMetric), \
        "Can only register subclass of %s" % EvalMetric.__name__
    if name is None:
        name = klass.__name__
    name = name.lower()
    if name in _REGISTRY:
        warnings.warn(
            "New metric %s.%s registered with name %s is overriding existing metric %s.%s" % (
                klass.__module__, klass.__name__, name,
                _REGISTRY[name].__module__, _REGISTRY[name].__name__),
            UserWarning, stacklevel=2)
    _REGISTRY[name] = klass
    return klass


def alias(*aliases):
    """Class decorator registering the class under each of ``aliases``."""
    def reg(klass):
        for name in aliases:
            register(klass, name)
        return klass
    return reg


def _create(*args, **kwargs):
    if len(args):
        name = args[0]
        args = args[1:]
    else:
        name = kwargs.pop('metric')
    if isinstance(name, EvalMetric):
        assert len(args) == 0 and len(kwargs) == 0, \
            "metric is already an instance. Additional arguments are invalid"
        return name
    if isinstance(name, dict):
        return _create(**name)
    assert isinstance(name, string_types), "metric must be of string type"
    if name.startswith('['):
        assert not args and not kwargs
        name, kwargs = json.loads(name)
        return _create(name, **kwargs)
    elif name.startswith('{'):
        assert not args and not kwargs
        kwargs = json.loads(name)
        return _create(**kwargs)
    name = name.lower()
    assert name in _REGISTRY, \
        "%s is not registered. Please register with metric.register first" % str(name)
    return _REGISTRY[name](*args, **kwargs)


def create(metric, *args, **kwargs):
    """A metric from a name ('acc', 'ce', 'f1', ...), an EvalMetric (returned
    as is), a list of those (a CompositeEvalMetric), or a function
    ``feval(label, pred)`` (a CustomMetric)."""
    if callable(metric):
        return CustomMetric(metric, *args, **kwargs)
    elif isinstance(metric, list):
        composite_metric = CompositeEvalMetric()
        for child_metric in metric:
            composite_metric.add(create(child_metric, *args, **kwargs))
        return composite_metric
    return _create(metric, *args, **kwargs)


# --------------------------------------------------------------------------

class EvalMetric(object):
    """Base class of the metrics: subclasses implement ``update``."""

    def __init__(self, name, output_names=None, label_names=None, **kwargs):
        self.name = str(name)
        self.output_names = output_names
        self.label_names = label_names
        self._has_global_stats = kwargs.pop("has_global_stats", False)
        self._kwargs = kwargs
        self.reset()

    def __str__(self):
        return "EvalMetric: {}".format(dict(self.get_name_value()))

    def get_config(self):
        """Arguments to rebuild this metric with ``metric.create(**config)``."""
        config = self._kwargs.copy()
        config.update({
            'metric': self.__class__.__name__,
            'name': self.name,
            'output_names': self.output_names,
            'label_names': self.label_names})
        return config

    def update_dict(self, label, pred):
        """Update from dicts name -> NDArray, using ``output_names``/``label_names``."""
        if self.output_names is not None:
            pred = [pred[name] for name in self.output_names]
        else:
            pred = list(pred.values())

        if self.label_names is not None:
            label = [label[name] for name in self.label_names]
        else:
            label = list(label.values())

        self.update(label, pred)

    def update(self, labels, preds):
        """Add a batch: lists of label and prediction NDArrays."""
        raise NotImplementedError()

    def reset(self):
        """Clear the local and the global results."""
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0

    def reset_local(self):
        """Clear the local results only."""
        self.num_inst = 0
        self.sum_metric = 0.0

    def get(self):
        """``(name, value)`` of the local results; value is nan before any update."""
        if self.num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, self.sum_metric / self.num_inst)

    def get_global(self):
        """``(name, value)`` of the global results."""
        if self._has_global_stats:
            if self.global_num_inst == 0:
                return (self.name, float('nan'))
            return (self.name, self.global_sum_metric / self.global_num_inst)
        return self.get()

    def get_name_value(self):
        """``[(name, value), ...]`` of the local results."""
        name, value = self.get()
        if not isinstance(name, list):
            name = [name]
        if not isinstance(value, list):
            value = [value]
        return list(zip(name, value))

    def get_global_name_value(self):
        """``[(name, value), ...]`` of the global results."""
        if self._has_global_stats:
            name, value = self.get_global()
            if not isinstance(name, list):
                name = [name]
            if not isinstance(value, list):
                value = [value]
            return list(zip(name, value))
        return self.get_name_value()


@alias('composite')
class CompositeEvalMetric(EvalMetric):
    """Several metrics updated together; ``get`` returns lists of names and values."""

    def __init__(self, metrics=None, name='composite',
                 output_names=None, label_names=None):
        super(CompositeEvalMetric, self).__init__(
            name, output_names=output_names, label_names=label_names,
            has_global_stats=True)
        if metrics is None:
            metrics = []
        self.metrics = [create(i) for i in metrics]

    def add(self, metric):
        """Add a child metric (anything ``create`` takes)."""
        self.metrics.append(create(metric))

    def get_metric(self, index):
        """The child metric at ``index``. As MXNet, an out-of-range index
        *returns* (does not raise) a ValueError."""
        try:
            return self.metrics[index]
        except IndexError:
            return ValueError("Metric index {} is out of range 0 and {}".format(
                index, len(self.metrics)))

    def update_dict(self, labels, preds):  # pylint: disable=arguments-differ
        if self.label_names is not None:
            labels = OrderedDict([i for i in labels.items() if i[0] in self.label_names])
        if self.output_names is not None:
            preds = OrderedDict([i for i in preds.items() if i[0] in self.output_names])

        for metric in self.metrics:
            metric.update_dict(labels, preds)

    def update(self, labels, preds):
        for metric in self.metrics:
            metric.update(labels, preds)

    def reset(self):
        try:
            for metric in self.metrics:
                metric.reset()
        except AttributeError:
            pass

    def reset_local(self):
        try:
            for metric in self.metrics:
                metric.reset_local()
        except AttributeError:
            pass

    def get(self):
        names = []
        values = []
        for metric in self.metrics:
            name, value = metric.get()
            if isinstance(name, string_types):
                name = [name]
            if isinstance(value, numeric_types):
                value = [value]
            names.extend(name)
            values.extend(value)
        return (names, values)

    def get_global(self):
        names = []
        values = []
        for metric in self.metrics:
            name, value = metric.get_global()
            if isinstance(name, string_types):
                name = [name]
            if isinstance(value, numeric_types):
                value = [value]
            names.extend(name)
            values.extend(value)
        return (names, values)

    def get_config(self):
        config = super(CompositeEvalMetric, self).get_config()
        config.update({'metrics': [i.get_config() for i in self.metrics]})
        return config


########################
# CLASSIFICATION METRICS
########################

@alias('acc')
class Accuracy(EvalMetric):
    """Fraction of predictions equal to the label. ``preds`` may hold class
    scores (argmax over ``axis`` is taken when its shape differs from the
    label's) or class indices."""

    def __init__(self, axis=1, name='accuracy',
                 output_names=None, label_names=None):
        super(Accuracy, self).__init__(
            name, axis=axis,
            output_names=output_names, label_names=label_names,
            has_global_stats=True)
        self.axis = axis

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)

        for label, pred_label in zip(labels, preds):
            pred_label = _np(pred_label)
            label = _np(label)
            if pred_label.shape != label.shape:
                try:
                    pred_label = numpy.argmax(pred_label, axis=self.axis)
                except _AxisError as e:
                    raise ShapeError("Accuracy: cannot take argmax over axis %d of predictions "
                                     "of shape %s (labels %s)"
                                     % (self.axis, pred_label.shape, label.shape)) from e
            pred_label = pred_label.astype('int32')
            label = label.astype('int32')
            # flatten before checking shapes to avoid shape miss match
            label = label.flat
            pred_label = pred_label.flat

            check_label_shapes(label, pred_label)

            num_correct = int((pred_label == label).sum())
            self.sum_metric += num_correct
            self.global_sum_metric += num_correct
            self.num_inst += len(pred_label)
            self.global_num_inst += len(pred_label)


@alias('top_k_accuracy', 'top_k_acc')
class TopKAccuracy(EvalMetric):
    """Fraction of samples whose label is among the ``top_k`` highest scores.
    The name is ``top_k_accuracy_<k>``."""

    def __init__(self, top_k=1, name='top_k_accuracy',
                 output_names=None, label_names=None):
        super(TopKAccuracy, self).__init__(
            name, top_k=top_k,
            output_names=output_names, label_names=label_names,
            has_global_stats=True)
        self.top_k = top_k
        assert (self.top_k > 1), 'Please use Accuracy if top_k is no more than 1'
        self.name += '_%d' % self.top_k

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)

        for label, pred_label in zip(labels, preds):
            assert (len(pred_label.shape) <= 2), 'Predictions should be no more than 2 dims'
            pred_label = numpy.argpartition(_np(pred_label).astype('float32'), -self.top_k)
            label = _np(label).astype('int32')
            check_label_shapes(label, pred_label)
            num_samples = pred_label.shape[0]
            num_dims = len(pred_label.shape)
            if num_dims == 1:
                # as MXNet: the global sum is not updated for 1-D predictions
                self.sum_metric += int((pred_label.flat == label.flat).sum())
            elif num_dims == 2:
                num_classes = pred_label.shape[1]
                top_k = min(num_classes, self.top_k)
                for j in range(top_k):
                    num_correct = int((pred_label[:, num_classes - 1 - j].flat == label.flat).sum())
                    self.sum_metric += num_correct
                    self.global_sum_metric += num_correct
            self.num_inst += num_samples
            self.global_num_inst += num_samples


class _BinaryClassificationMetrics(object):
    """True/false positive/negative counts, local and global, for F1 and MCC."""

    def __init__(self):
        self.true_positives = 0
        self.false_negatives = 0
        self.false_positives = 0
        self.true_negatives = 0
        self.global_true_positives = 0
        self.global_false_negatives = 0
        self.global_false_positives = 0
        self.global_true_negatives = 0

    def update_binary_stats(self, label, pred):
        pred = _np(pred)
        label = _np(label).astype('int32')
        pred_label = numpy.argmax(pred, axis=1)

        check_label_shapes(label, pred)
        if len(numpy.unique(label)) > 2:
            raise ValueError("%s currently only supports binary classification."
                             % self.__class__.__name__)
        pred_true = (pred_label == 1).astype(numpy.int64)
        pred_false = 1 - pred_true
        label_true = (label == 1).astype(numpy.int64)
        label_false = 1 - label_true

        true_pos = int((pred_true * label_true).sum())
        false_pos = int((pred_true * label_false).sum())
        false_neg = int((pred_false * label_true).sum())
        true_neg = int((pred_false * label_false).sum())
        self.true_positives += true_pos
        self.global_true_positives += true_pos
        self.false_positives += false_pos
        self.global_false_positives += false_pos
        self.false_negatives += false_neg
        self.global_false_negatives += false_neg
        self.true_negatives += true_neg
        self.global_true_negatives += true_neg

    @property
    def precision(self):
        if self.true_positives + self.false_positives > 0:
            return float(self.true_positives) / (self.true_positives + self.false_positives)
        return 0.

    @property
    def global_precision(self):
        if self.global_true_positives + self.global_false_positives > 0:
            return float(self.global_true_positives) / (
                self.global_true_positives + self.global_false_positives)
        return 0.

    @property
    def recall(self):
        if self.true_positives + self.false_negatives > 0:
            return float(self.true_positives) / (self.true_positives + self.false_negatives)
        return 0.

    @property
    def global_recall(self):
        if self.global_true_positives + self.global_false_negatives > 0:
            return float(self.global_true_positives) / (
                self.global_true_positives + self.global_false_negatives)
        return 0.

    @property
    def fscore(self):
        if self.precision + self.recall > 0:
            return 2 * self.precision * self.recall / (self.precision + self.recall)
        return 0.

    @property
    def global_fscore(self):
        if self.global_precision + self.global_recall > 0:
            return 2 * self.global_precision * self.global_recall / (
                self.global_precision + self.global_recall)
        return 0.

    def matthewscc(self, use_global=False):
        """Matthews correlation coefficient; zero terms of the denominator count as 1."""
        if use_global:
            if not self.global_total_examples:
                return 0.
            true_pos = float(self.global_true_positives)
            false_pos = float(self.global_false_positives)
            false_neg = float(self.global_false_negatives)
            true_neg = float(self.global_true_negatives)
        else:
            if not self.total_examples:
                return 0.
            true_pos = float(self.true_positives)
            false_pos = float(self.false_positives)
            false_neg = float(self.false_negatives)
            true_neg = float(self.true_negatives)
        terms = [(true_pos + false_pos),
                 (true_pos + false_neg),
                 (true_neg + false_pos),
                 (true_neg + false_neg)]
        denom = 1.
        for t in filter(lambda t: t != 0., terms):
            denom *= t
        return ((true_pos * true_neg) - (false_pos * false_neg)) / math.sqrt(denom)

    @property
    def total_examples(self):
        return self.false_negatives + self.false_positives + \
            self.true_negatives + self.true_positives

    @property
    def global_total_examples(self):
        return self.global_false_negatives + self.global_false_positives + \
            self.global_true_negatives + self.global_true_positives

    def local_reset_stats(self):
        self.false_positives = 0
        self.false_negatives = 0
        self.true_positives = 0
        self.true_negatives = 0

    def reset_stats(self):
        self.local_reset_stats()
        self.global_false_positives = 0
        self.global_false_negatives = 0
        self.global_true_positives = 0
        self.global_true_negatives = 0


class _BinaryScoreMetric(EvalMetric):
    """Shared by F1 and MCC: ``average='macro'`` averages the per-batch
    scores, ``'micro'`` scores all batches pooled; subclasses give ``_score``."""
    _zero = 0           # what num_inst resets to (MXNet's F1 uses 0, its MCC 0.)

    def __init__(self, name, output_names=None, label_names=None, average="macro"):
        self.average = average
        self.metrics = _BinaryClassificationMetrics()
        EvalMetric.__init__(self, name=name, output_names=output_names,
                            label_names=label_names, has_global_stats=True)

    def _score(self, use_global):
        raise NotImplementedError("The '_score' method must be implemented.")

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)

        for label, pred in zip(labels, preds):
            self.metrics.update_binary_stats(label, pred)

        m = self.metrics
        if self.average == "macro":
            self.sum_metric += self._score(False)
            self.global_sum_metric += self._score(True)
            self.num_inst += 1
            self.global_num_inst += 1
            m.reset_stats()
        else:
            self.sum_metric = self._score(False) * m.total_examples
            self.global_sum_metric = self._score(True) * m.global_total_examples
            self.num_inst = m.total_examples
            self.global_num_inst = m.global_total_examples

    def reset(self):
        self.sum_metric = 0.
        self.num_inst = self._zero
        self.global_num_inst = self._zero
        self.global_sum_metric = 0.
        self.metrics.reset_stats()

    def reset_local(self):
        self.sum_metric = 0.
        self.num_inst = self._zero
        self.metrics.local_reset_stats()


class F1(_BinaryScoreMetric):
    """F1 score of a binary classification (class 1 is positive; predictions
    are class scores, argmax over axis 1). ``average='macro'`` averages the
    per-batch scores, ``'micro'`` scores all batches pooled."""

    def __init__(self, name='f1', output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    def _score(self, use_global):
        return self.metrics.global_fscore if use_global else self.metrics.fscore


class MCC(_BinaryScoreMetric):
    """Matthews correlation coefficient of a binary classification; ``average``
    as in F1."""
    _zero = 0.

    def __init__(self, name='mcc', output_names=None, label_names=None, average="macro"):
        super().__init__(name, output_names, label_names, average)

    def _score(self, use_global):
        return self.metrics.matthewscc(use_global=use_global)

    # MXNet's MCC keeps these under private names
    _average = property(lambda self: self.average)
    _metrics = property(lambda self: self.metrics)


class Perplexity(EvalMetric):
    """exp of the mean negative log of the probability given to the label.
    Labels equal to ``ignore_label`` (None: none) are left out; ``axis`` is
    the class axis of the predictions."""

    def __init__(self, ignore_label, axis=-1, name='perplexity',
                 output_names=None, label_names=None):
        super(Perplexity, self).__init__(
            name, ignore_label=ignore_label,
            output_names=output_names, label_names=label_names,
            has_global_stats=True)
        self.ignore_label = ignore_label
        self.axis = axis

    def update(self, labels, preds):
        assert len(labels) == len(preds)
        loss = 0.
        num = 0
        for label, pred in zip(labels, preds):
            assert label.size == pred.size / pred.shape[-1], \
                "shape mismatch: %s vs. %s" % (label.shape, pred.shape)
            pred = _np(pred)
            label = _np(label).reshape((label.size,))
            # nd.pick(pred, label, axis) with its default mode='clip'
            moved = numpy.moveaxis(pred, self.axis, -1)
            nclass = moved.shape[-1]
            idx = numpy.clip(label.astype('int32'), 0, nclass - 1).astype(numpy.int64)
            idx = idx.reshape(moved.shape[:-1] + (1,))
            picked = numpy.take_along_axis(moved, idx, axis=-1)[..., 0]
            if self.ignore_label is not None:
                ignore = (label.reshape(picked.shape) == self.ignore_label).astype(picked.dtype)
                num -= _f(numpy.sum(ignore))
                picked = picked * (1 - ignore) + ignore
            loss -= _f(numpy.sum(numpy.log(numpy.maximum(picked.dtype.type(1e-10), picked))))
            num += picked.size
        self.sum_metric += loss
        self.global_sum_metric += loss
        self.num_inst += num
        self.global_num_inst += num

    def get(self):
        if self.num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, math.exp(self.sum_metric / self.num_inst))

    def get_global(self):
        if self.global_num_inst == 0:
            return (self.name, float('nan'))
        return (self.name, math.exp(self.global_sum_metric / self.global_num_inst))


####################
# REGRESSION METRICS
####################

def _as_2d(label, pred):
    label = _np(label)
    pred = _np(pred)
    if len(label.shape) == 1:
        label = label.reshape(label.shape[0], 1)
    if len(pred.shape) == 1:
        pred = pred.reshape(pred.shape[0], 1)
    return label, pred


class MAE(EvalMetric):
    """Mean absolute error, averaged over batches (each batch counts once)."""

    def __init__(self, name='mae', output_names=None, label_names=None):
        super(MAE, self).__init__(
            name, output_names=output_names, label_names=label_names,
            has_global_stats=True)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _as_2d(label, pred)
            mae = _f(numpy.abs(label - pred).mean())
            self.sum_metric += mae
            self.global_sum_metric += mae
            self.num_inst += 1
            self.global_num_inst += 1


class MSE(EvalMetric):
    """Mean squared error, averaged over batches (each batch counts once)."""

    def __init__(self, name='mse', output_names=None, label_names=None):
        super(MSE, self).__init__(
            name, output_names=output_names, label_names=label_names,
            has_global_stats=True)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _as_2d(label, pred)
            mse = _f(((label - pred) ** 2.0).mean())
            self.sum_metric += mse
            self.global_sum_metric += mse
            self.num_inst += 1
            self.global_num_inst += 1


class RMSE(EvalMetric):
    """Root mean squared error of each batch, averaged over batches."""

    def __init__(self, name='rmse', output_names=None, label_names=None):
        super(RMSE, self).__init__(
            name, output_names=output_names, label_names=label_names,
            has_global_stats=True)

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label, pred = _as_2d(label, pred)
            rmse = _f(numpy.sqrt(((label - pred) ** 2.0).mean()))
            self.sum_metric += rmse
            self.global_sum_metric += rmse
            self.num_inst += 1
            self.global_num_inst += 1


@alias('ce')
class CrossEntropy(EvalMetric):
    """Mean of ``-log(p[label] + eps)`` over samples."""

    def __init__(self, eps=1e-12, name='cross-entropy',
                 output_names=None, label_names=None):
        super(CrossEntropy, self).__init__(
            name, eps=eps,
            output_names=output_names, label_names=label_names,
            has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _np(label)
            pred = _np(pred)
            label = label.ravel()
            assert label.shape[0] == pred.shape[0]
            prob = pred[numpy.arange(label.shape[0]), numpy.int64(label)]
            cross_entropy = _f((-numpy.log(prob + self.eps)).sum())
            self.sum_metric += cross_entropy
            self.global_sum_metric += cross_entropy
            self.num_inst += label.shape[0]
            self.global_num_inst += label.shape[0]


@alias('nll_loss')
class NegativeLogLikelihood(EvalMetric):
    """Mean of ``-log(p[label] + eps)`` over samples (named 'nll-loss')."""

    def __init__(self, eps=1e-12, name='nll-loss',
                 output_names=None, label_names=None):
        super(NegativeLogLikelihood, self).__init__(
            name, eps=eps,
            output_names=output_names, label_names=label_names,
            has_global_stats=True)
        self.eps = eps

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            label = _np(label)
            pred = _np(pred)
            label = label.ravel()
            num_examples = pred.shape[0]
            assert label.shape[0] == num_examples, (label.shape[0], num_examples)
            prob = pred[numpy.arange(num_examples, dtype=numpy.int64), numpy.int64(label)]
            nll = _f((-numpy.log(prob + self.eps)).sum())
            self.sum_metric += nll
            self.global_sum_metric += nll
            self.num_inst += num_examples
            self.global_num_inst += num_examples


@alias('pearsonr')
class PearsonCorrelation(EvalMetric):
    """Pearson correlation of labels and predictions. ``average='macro'``
    averages per-batch correlations, ``'micro'`` correlates all batches pooled."""

    def __init__(self, name='pearsonr',
                 output_names=None, label_names=None, average='macro'):
        self.average = average
        super(PearsonCorrelation, self).__init__(
            name, output_names=output_names, label_names=label_names,
            has_global_stats=True)
        if self.average == 'micro':
            self.reset_micro()

    def reset_micro(self):
        self._sse_p = 0
        self._mean_p = 0
        self._sse_l = 0
        self._mean_l = 0
        self._pred_nums = 0
        self._label_nums = 0
        self._conv = 0

    def reset(self):
        self.num_inst = 0
        self.sum_metric = 0.0
        self.global_num_inst = 0
        self.global_sum_metric = 0.0
        if self.average == 'micro':
            self.reset_micro()

    def update_variance(self, new_values, *aggregate):
        # Welford's online algorithm for variance update
        count, mean, m_2 = aggregate
        count += len(new_values)
        delta = new_values - mean
        mean += numpy.sum(delta / count)
        delta_2 = new_values - mean
        m_2 += numpy.sum(delta * delta_2)
        return count, mean, m_2

    def update_cov(self, label, pred):
        self._conv = self._conv + numpy.sum((label - self._mean_l) * (pred - self._mean_p))

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)
        for label, pred in zip(labels, preds):
            check_label_shapes(label, pred, False, True)
            label = _np(label).ravel().astype(numpy.float64)
            pred = _np(pred).ravel().astype(numpy.float64)
            if self.average == 'macro':
                pearson_corr = numpy.corrcoef(pred, label)[0, 1]
                self.sum_metric += pearson_corr
                self.global_sum_metric += pearson_corr
                self.num_inst += 1
                self.global_num_inst += 1
            else:
                self.global_num_inst += 1
                self.num_inst += 1
                self._label_nums, self._mean_l, self._sse_l = \
                    self.update_variance(label, self._label_nums, self._mean_l, self._sse_l)
                self.update_cov(label, pred)
                self._pred_nums, self._mean_p, self._sse_p = \
                    self.update_variance(pred, self._pred_nums, self._mean_p, self._sse_p)

    def get(self):
        if self.num_inst == 0:
            return (self.name, float('nan'))
        if self.average == 'macro':
            return (self.name, self.sum_metric / self.num_inst)
        n = self._label_nums
        pearsonr = self._conv / ((n - 1) * numpy.sqrt(self._sse_p / (n - 1))
                                 * numpy.sqrt(self._sse_l / (n - 1)))
        return (self.name, pearsonr)


class PCC(EvalMetric):
    """Multiclass Matthews correlation from a confusion matrix that grows with
    the classes seen."""

    def __init__(self, name='pcc',
                 output_names=None, label_names=None,
                 has_global_stats=True):
        self.k = 2
        super(PCC, self).__init__(
            name=name, output_names=output_names, label_names=label_names,
            has_global_stats=has_global_stats)

    def _grow(self, inc):
        self.lcm = numpy.pad(self.lcm, ((0, inc), (0, inc)), 'constant', constant_values=(0))
        self.gcm = numpy.pad(self.gcm, ((0, inc), (0, inc)), 'constant', constant_values=(0))
        self.k += inc

    def _calc_mcc(self, cmat):
        n = cmat.sum()
        x = cmat.sum(axis=1)
        y = cmat.sum(axis=0)
        cov_xx = numpy.sum(x * (n - x))
        cov_yy = numpy.sum(y * (n - y))
        if cov_xx == 0 or cov_yy == 0:
            return float('nan')
        i = cmat.diagonal()
        cov_xy = numpy.sum(i * n - x * y)
        return cov_xy / (cov_xx * cov_yy) ** 0.5

    def update(self, labels, preds):
        labels, preds = check_label_shapes(labels, preds, True)

        # update the confusion matrix
        for label, pred in zip(labels, preds):
            label = _np(label).astype('int32')
            pred = _np(pred)
            if pred.shape != label.shape:
                pred = pred.argmax(axis=1)
            else:
                pred = pred.astype('int32', copy=False)
            n = max(pred.max(), label.max())
            if n >= self.k:
                self._grow(int(n) + 1 - self.k)
            bcm = numpy.zeros((self.k, self.k))
            for i, j in zip(pred, label):
                bcm[i, j] += 1
            self.lcm += bcm
            self.gcm += bcm

        self.num_inst += 1
        self.global_num_inst += 1

    @property
    def sum_metric(self):
        return self._calc_mcc(self.lcm) * self.num_inst

    @property
    def global_sum_metric(self):
        return self._calc_mcc(self.gcm) * self.global_num_inst

    def reset(self):
        self.global_num_inst = 0.
        self.gcm = numpy.zeros((self.k, self.k))
        self.reset_local()

    def reset_local(self):
        self.num_inst = 0.
        self.lcm = numpy.zeros((self.k, self.k))


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


class CustomMetric(EvalMetric):
    """A metric from ``feval(label, pred)`` on numpy arrays, returning a value
    (one instance) or a ``(sum_metric, num_inst)`` tuple."""

    def __init__(self, feval, name=None, allow_extra_outputs=False,
                 output_names=None, label_names=None):
        if name is None:
            name = feval.__name__
            if name.find('<') != -1:
                name = 'custom(%s)' % name
        super(CustomMetric, self).__init__(
            name, feval=feval,
            allow_extra_outputs=allow_extra_outputs,
            output_names=output_names, label_names=label_names,
            has_global_stats=True)
        self._feval = feval
        self._allow_extra_outputs = allow_extra_outputs

    def update(self, labels, preds):
        if not self._allow_extra_outputs:
            labels, preds = check_label_shapes(labels, preds, True)

        for pred, label in zip(preds, labels):
            label = _np(label)
            pred = _np(pred)

            reval = self._feval(label, pred)
            if isinstance(reval, tuple):
                (sum_metric, num_inst) = reval
                self.sum_metric += sum_metric
                self.global_sum_metric += sum_metric
                self.num_inst += num_inst
                self.global_num_inst += num_inst
            else:
                self.sum_metric += reval
                self.global_sum_metric += reval
                self.num_inst += 1
                self.global_num_inst += 1

    def get_config(self):
        raise NotImplementedError("CustomMetric cannot be serialized")


def np(numpy_feval, name=None, allow_extra_outputs=False):  # pylint: disable=invalid-name
    """A CustomMetric from a function of numpy ``(label, pred)``."""
    def feval(label, pred):
        return numpy_feval(label, pred)
    feval.__name__ = numpy_feval.__name__
    return CustomMetric(feval, name, allow_extra_outputs)


for _cls in (CompositeEvalMetric, Accuracy, TopKAccuracy, F1, MCC, Perplexity, MAE, MSE,
             RMSE, CrossEntropy, NegativeLogLikelihood, PearsonCorrelation, PCC, Loss,
             Torch, Caffe, CustomMetric):
    register(_cls)
del _cls

# MXNet keeps the metric table in mx.registry; share it (and the module names MXNet has)
from . import ndarray, registry  # noqa: E402,F401
registry._share(EvalMetric, _REGISTRY)
