"""Classification metrics: Accuracy, TopKAccuracy, F1, MCC and Perplexity."""
from __future__ import annotations

import math

import numpy

from ..base import ShapeError
from ._base import EvalMetric, _AxisError, _f, _np, alias, check_label_shapes


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

