"""Event handlers an :class:`Estimator` calls at train/epoch/batch begin and end.

A handler subscribes to an event by inheriting its mixin (``TrainBegin``,
``EpochEnd``, ...). Handlers run in ascending ``priority`` (default 0);
``batch_end`` / ``epoch_end`` returning True stops training."""
import os
import re
import time
import warnings

import numpy as np

from ....metric import CompositeEvalMetric, EvalMetric
from ....metric import Loss as metric_loss
from .utils import _check_metrics

__all__ = ['TrainBegin', 'TrainEnd', 'EpochBegin', 'EpochEnd', 'BatchBegin', 'BatchEnd',
           'StoppingHandler', 'MetricHandler', 'ValidationHandler',
           'LoggingHandler', 'CheckpointHandler', 'EarlyStoppingHandler',
           'GradientUpdateHandler']


class EventHandler(object):
    pass


def _check_event_handlers(handlers):
    """A fresh list of handlers (the caller's list is not modified)."""
    if isinstance(handlers, EventHandler):
        return [handlers]
    handlers = handlers or []
    if isinstance(handlers, (str, bytes)) or not all(
            isinstance(h, EventHandler) for h in handlers):
        raise ValueError("event_handlers must be an EventHandler or a list of "
                         "EventHandler, got: {!r}".format(handlers))
    return list(handlers)


class TrainBegin(EventHandler):
    def train_begin(self, estimator, *args, **kwargs):
        pass


class TrainEnd(EventHandler):
    def train_end(self, estimator, *args, **kwargs):
        pass


class EpochBegin(EventHandler):
    def epoch_begin(self, estimator, *args, **kwargs):
        pass


class EpochEnd(EventHandler):
    def epoch_end(self, estimator, *args, **kwargs):
        return False


class BatchBegin(EventHandler):
    def batch_begin(self, estimator, *args, **kwargs):
        pass


class BatchEnd(EventHandler):
    def batch_end(self, estimator, *args, **kwargs):
        return False


def _monitor_op(mode, monitor, who):
    """np.less / np.greater for ``mode``; 'auto' picks greater for accuracy
    and f1 metrics and less for the rest (losses, errors)."""
    if mode not in ('auto', 'min', 'max'):
        warnings.warn('%s mode %s is unknown, fallback to auto mode' % (who, mode),
                      RuntimeWarning)
        mode = 'auto'
    if mode == 'min':
        return np.less
    if mode == 'max':
        return np.greater
    name = monitor.get()[0]
    lname = name.lower()
    if 'acc' in lname or 'f1' in lname:
        warnings.warn("`greater` operator will be used to determine if {} has improved. "
                      "Please specify `mode='min'` to use the `less` operator. "
                      "Specify `mode='max'` to disable this warning.".format(name))
        return np.greater
    warnings.warn("`less` operator will be used to determine if {} has improved. "
                  "Please specify `mode='max'` to use the `greater` operator. "
                  "Specify `mode='min'` to disable this warning.".format(name))
    return np.less


class StoppingHandler(TrainBegin, BatchEnd, EpochEnd):
    """Stop training after ``max_epoch`` epochs or ``max_batch`` batches
    (taken from the estimator at train begin)."""

    def __init__(self, max_epoch=None, max_batch=None):
        self.max_epoch = max_epoch
        self.max_batch = max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def train_begin(self, estimator, *args, **kwargs):
        self.max_epoch = estimator.max_epoch
        self.max_batch = estimator.max_batch
        self.current_batch = 0
        self.current_epoch = 0
        self.stop_training = False

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.current_batch == self.max_batch:
            self.stop_training = True
        return self.stop_training

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.current_epoch == self.max_epoch:
            self.stop_training = True
        return self.stop_training


class MetricHandler(EpochBegin, BatchEnd):
    """Reset ``metrics`` at epoch begin and update them at batch end: Loss
    metrics from the loss values, the others from (label, pred).

    priority -1000: metrics are current before other handlers read them."""

    def __init__(self, metrics, priority=-1000):
        self.metrics = _check_metrics(metrics)
        self.priority = priority

    def epoch_begin(self, estimator, *args, **kwargs):
        for metric in self.metrics:
            metric.reset()

    def batch_end(self, estimator, *args, **kwargs):
        pred, label, loss = kwargs['pred'], kwargs['label'], kwargs['loss']
        for metric in self.metrics:
            if isinstance(metric, metric_loss):
                metric.update(0, loss)
            else:
                metric.update(label, pred)


class ValidationHandler(TrainBegin, BatchEnd, EpochEnd):
    """Call ``eval_fn(val_data=..., batch_axis=..., event_handlers=...)``
    every ``epoch_period`` epochs and/or every ``batch_period`` batches."""

    def __init__(self, val_data, eval_fn, epoch_period=1, batch_period=None,
                 priority=-1000, event_handlers=None):
        if not callable(eval_fn):
            raise ValueError("eval_fn must be callable (e.g. estimator.evaluate), "
                             "got {!r}".format(eval_fn))
        self.val_data = val_data
        self.eval_fn = eval_fn
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.priority = priority
        self.event_handlers = event_handlers

    def _validate(self, estimator):
        self.eval_fn(val_data=self.val_data, batch_axis=estimator.batch_axis,
                     event_handlers=self.event_handlers)

    def train_begin(self, estimator, *args, **kwargs):
        self.current_batch = 0
        self.current_epoch = 0

    def batch_end(self, estimator, *args, **kwargs):
        self.current_batch += 1
        if self.batch_period and self.current_batch % self.batch_period == 0:
            self._validate(estimator)

    def epoch_end(self, estimator, *args, **kwargs):
        self.current_epoch += 1
        if self.epoch_period and self.current_epoch % self.epoch_period == 0:
            self._validate(estimator)


class LoggingHandler(TrainBegin, TrainEnd, EpochBegin, EpochEnd, BatchBegin, BatchEnd):
    """Log the optimizer, learning rate, timings and ``metrics`` to
    ``estimator.logger``: every epoch (``log_interval='epoch'``) or, with an
    int k, also every k-th batch.

    priority inf: it runs last, after all states of the step are updated."""

    def __init__(self, log_interval='epoch', metrics=None, priority=np.inf):
        super(LoggingHandler, self).__init__()
        if log_interval != 'epoch' and (isinstance(log_interval, bool)
                                        or not isinstance(log_interval, int)
                                        or log_interval <= 0):
            raise ValueError("log_interval must be either a positive integer or the "
                             "string 'epoch', got {!r}".format(log_interval))
        self.metrics = _check_metrics(metrics)
        self.batch_index = 0
        self.current_epoch = 0
        self.processed_samples = 0
        self.priority = priority
        self.log_interval = log_interval
        self.log_interval_time = 0
        self.train_start = self.epoch_start = self.batch_start = time.time()

    def _metric_msg(self, msg):
        for metric in self.metrics:
            name, value = metric.get()
            msg += '%s: %.4f, ' % (name, value)
        return msg.rstrip(', ')

    def train_begin(self, estimator, *args, **kwargs):
        self.train_start = time.time()
        trainer = estimator.trainer
        estimator.logger.info("Training begin: using optimizer %s "
                              "with current learning rate %.4f ",
                              trainer.optimizer.__class__.__name__, trainer.learning_rate)
        if estimator.max_epoch:
            estimator.logger.info("Train for %d epochs.", estimator.max_epoch)
        else:
            estimator.logger.info("Train for %d batches.", estimator.max_batch)
        self.current_epoch = 0
        self.batch_index = 0
        self.processed_samples = 0
        self.log_interval_time = 0

    def train_end(self, estimator, *args, **kwargs):
        train_time = time.time() - self.train_start
        estimator.logger.info(self._metric_msg(
            'Train finished using total %ds with %d epochs. ' % (train_time, self.current_epoch)))

    def batch_begin(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            self.batch_start = time.time()

    def batch_end(self, estimator, *args, **kwargs):
        if isinstance(self.log_interval, int):
            batch_time = time.time() - self.batch_start
            axis = getattr(estimator, 'batch_axis', 0) or 0
            self.processed_samples += kwargs['batch'][0].shape[axis]
            self.log_interval_time += batch_time
            if self.batch_index % self.log_interval == 0:
                msg = '[Epoch %d][Batch %d][Samples %s] time/interval: %.3fs ' % (
                    self.current_epoch, self.batch_index, self.processed_samples,
                    self.log_interval_time)
                self.log_interval_time = 0
                estimator.logger.info(self._metric_msg(msg))
        self.batch_index += 1

    def epoch_begin(self, estimator, *args, **kwargs):
        self.epoch_start = time.time()
        # The estimator prefixes its metric names with 'training'/'validation'.
        if any('training' in metric.name for metric in self.metrics):
            estimator.logger.info("[Epoch %d] Begin, current learning rate: %.4f",
                                  self.current_epoch, estimator.trainer.learning_rate)
        else:
            estimator.logger.info("Validation Begin")

    def epoch_end(self, estimator, *args, **kwargs):
        epoch_time = time.time() - self.epoch_start
        estimator.logger.info(self._metric_msg(
            '[Epoch %d] Finished in %.3fs, ' % (self.current_epoch, epoch_time)))
        self.current_epoch += 1
        self.batch_index = 0


class CheckpointHandler(TrainBegin, BatchEnd, EpochEnd):
    """Save parameters (``.params``) and trainer states (``.states``) to
    ``model_dir`` as ``{model_prefix}-epoch{E}batch{B}`` every ``epoch_period``
    epochs or ``batch_period`` batches, keeping the newest ``max_checkpoints``;
    with ``save_best`` also ``{model_prefix}-best`` whenever ``monitor``
    improves; the symbol of a hybridized net goes to
    ``{model_prefix}-symbol.json`` after the first batch.

    With ``resume_from_checkpoint`` the newest checkpoint in ``model_dir`` is
    loaded at train begin and only the remaining epochs/batches are trained.
    """

    def __init__(self, model_dir, model_prefix='model', monitor=None, verbose=0,
                 save_best=False, mode='auto', epoch_period=1, batch_period=None,
                 max_checkpoints=5, resume_from_checkpoint=False):
        if save_best and not isinstance(monitor, EvalMetric):
            raise ValueError("To save best model only, please provide one of the metric "
                             "objects from estimator.train_metrics and "
                             "estimator.val_metrics as monitor.")
        if not epoch_period and not batch_period:
            raise ValueError("CheckpointHandler needs epoch_period or batch_period to "
                             "know when to save; both are None/0")
        os.makedirs(model_dir, exist_ok=True)
        self.model_dir = model_dir
        self.model_prefix = model_prefix
        self.monitor = monitor
        self.verbose = verbose
        self.save_best = save_best
        self.epoch_period = epoch_period
        self.batch_period = batch_period
        self.current_batch = 0
        self.current_epoch = 0
        self.max_checkpoints = max_checkpoints
        self.resume_from_checkpoint = resume_from_checkpoint
        self.saved_checkpoints = []
        self.trained_epoch = -1
        self.trained_batch = -1
        if save_best:
            self.monitor_op = _monitor_op(mode, monitor, 'CheckpointHandler')
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def train_begin(self, estimator, *args, **kwargs):
        self.current_epoch = 0
        self.current_batch = 0
        if self.save_best:
            self.best = np.inf if self.monitor_op is np.less else -np.inf
        if self.resume_from_checkpoint:
            # Checkpoint names count epochs or batches, so resuming needs the
            # same kind of period as the training run.
            if (estimator.max_batch and (not self.batch_period or self.epoch_period)) or \
                    (estimator.max_epoch and (not self.epoch_period or self.batch_period)):
                raise ValueError(
                    "To resume from checkpoint, save by the same kind of period you "
                    "train for: with fit(epochs=...) use epoch_period and "
                    "batch_period=None; with fit(batches=...) use batch_period and "
                    "epoch_period=None")
            self._resume_from_checkpoint(estimator)

    def batch_end(self, estimator, *args, **kwargs):
        if self.current_batch == 0:
            self._save_symbol(estimator)
        if self.batch_period and (self.current_batch + 1) % self.batch_period == 0:
            self._save_checkpoint(estimator)
        self.current_batch += 1

    def epoch_end(self, estimator, *args, **kwargs):
        if self.epoch_period and (self.current_epoch + 1) % self.epoch_period == 0:
            self._save_checkpoint(estimator)
        self.current_epoch += 1

    def _save_checkpoint(self, estimator):
        # Names continue the numbering of the run resumed from. In epoch mode
        # the batch number is the count of batches done (saved at epoch end,
        # after the counter moved); in batch mode it is the batch's index.
        if self.resume_from_checkpoint:
            epoch_no = self.current_epoch + self.trained_epoch + 1
            batch_no = self.current_batch + self.trained_batch
            if not estimator.max_epoch:
                batch_no += 1
        else:
            epoch_no, batch_no = self.current_epoch, self.current_batch
        prefix = "%s-epoch%dbatch%d" % (self.model_prefix, epoch_no, batch_no)
        self._save_params_and_trainer(estimator, prefix)
        if self.verbose > 0:
            estimator.logger.info('[Epoch %d] CheckpointHandler: trained total %d batches, '
                                  'saving model at %s with prefix: %s',
                                  self.current_epoch, self.current_batch + 1,
                                  self.model_dir, prefix)
        if not self.save_best:
            return
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(RuntimeWarning(
                'Skipping save best because %s is not updated, make sure you pass one of '
                'the metric objects estimator.train_metrics and estimator.val_metrics '
                'as monitor' % name))
        elif self.monitor_op(value, self.best):
            best_prefix = self.model_prefix + '-best'
            self._save_params_and_trainer(estimator, best_prefix)
            if self.verbose > 0:
                estimator.logger.info('[Epoch %d] CheckpointHandler: %s improved from '
                                      '%0.5f to %0.5f, updating best model at %s with '
                                      'prefix: %s', self.current_epoch, name, self.best,
                                      value, self.model_dir, best_prefix)
            self.best = value
        elif self.verbose > 0:
            estimator.logger.info('[Epoch %d] CheckpointHandler: %s did not improve from '
                                  '%0.5f, skipping updating best model',
                                  self.current_epoch, name, self.best)

    def _save_symbol(self, estimator):
        symbol_file = os.path.join(self.model_dir, self.model_prefix + '-symbol.json')
        graph = getattr(estimator.net, '_cached_graph', None)
        if graph:
            graph[1].save(symbol_file)
        else:
            estimator.logger.info(
                "Model architecture(symbol file) is not saved, please use HybridBlock "
                "to construct your model, and call net.hybridize() before passing to "
                "Estimator in order to save model architecture as %s.", symbol_file)

    def _save_params_and_trainer(self, estimator, file_prefix):
        base = os.path.join(self.model_dir, file_prefix)
        estimator.net.save_parameters(base + '.params')
        estimator.trainer.save_states(base + '.states')
        if file_prefix == self.model_prefix + '-best':
            return  # the best checkpoint does not count against max_checkpoints
        if file_prefix in self.saved_checkpoints:
            self.saved_checkpoints.remove(file_prefix)
        self.saved_checkpoints.append(file_prefix)
        while len(self.saved_checkpoints) > self.max_checkpoints:
            old = self.saved_checkpoints.pop(0)
            for ext in ('.params', '.states'):
                path = os.path.join(self.model_dir, old + ext)
                if os.path.exists(path):
                    os.remove(path)

    def _existing_checkpoints(self):
        """Sorted (epoch, batch) pairs of this prefix's checkpoints in model_dir."""
        head = self.model_prefix + '-epoch'
        pattern = re.compile(re.escape(head) + r'(\d+)batch(\d+)\.params$')
        found = []
        for fname in os.listdir(self.model_dir):
            if not (fname.startswith(head) and fname.endswith('.params')):
                continue
            m = pattern.match(fname)
            if m is None:
                raise ValueError(
                    "Error parsing checkpoint file %s, please check your checkpoints have "
                    "the format: {model_prefix}-epoch{epoch_number}batch{batch_number}"
                    ".params, with a .states file for each .params file" % fname)
            found.append((int(m.group(1)), int(m.group(2))))
        return sorted(found)

    def _resume_from_checkpoint(self, estimator):
        found = self._existing_checkpoints()
        if not found:
            self.trained_epoch = self.trained_batch = -1
            estimator.logger.info(
                "CheckpointHandler: No checkpoint found, training from scratch for "
                + ("%d batches" % estimator.max_batch if estimator.max_batch
                   else "%d epochs" % estimator.max_epoch))
            return
        # Files already on disk count against max_checkpoints too.
        self.saved_checkpoints = ["%s-epoch%dbatch%d" % (self.model_prefix, e, b)
                                  for e, b in found]
        self.trained_epoch, self.trained_batch = found[-1]
        msg = ("CheckpointHandler: Checkpoint resumed from epoch %d batch %d, "
               "continue to train for " % (self.trained_epoch, self.trained_batch))
        if estimator.max_epoch:
            if self.trained_epoch >= estimator.max_epoch - 1:
                raise ValueError(
                    "Found checkpoint with maximum number of epoch %d reached, please "
                    "specify resume_from_checkpoint=False (default value) if you want to "
                    "train from scratch." % estimator.max_epoch)
            estimator.max_epoch = estimator.max_epoch - self.trained_epoch - 1
            msg += "%d epochs " % estimator.max_epoch
        if estimator.max_batch:
            if self.trained_batch >= estimator.max_batch - 1:
                raise ValueError(
                    "Found checkpoint with maximum number of batch %d reached, please "
                    "specify resume_from_checkpoint=False (default value) if you want to "
                    "train from scratch." % estimator.max_batch)
            estimator.max_batch = estimator.max_batch - self.trained_batch - 1
            msg += "%d batches " % estimator.max_batch
        base = os.path.join(self.model_dir, "%s-epoch%dbatch%d" % (
            self.model_prefix, self.trained_epoch, self.trained_batch))
        for ext in ('.params', '.states'):
            if not os.path.exists(base + ext):
                raise ValueError("Failed to load checkpoint, %s does not exist" % (base + ext))
        estimator.net.load_parameters(base + '.params', ctx=estimator.context)
        estimator.trainer.load_states(base + '.states')
        estimator.logger.warning(msg)


class EarlyStoppingHandler(TrainBegin, EpochEnd, TrainEnd):
    """Stop training when ``monitor`` has not improved by more than
    ``min_delta`` for ``patience`` epochs (improvement measured against
    ``baseline`` when given). ``mode``: 'min', 'max' or 'auto' (max for
    accuracy/f1, min otherwise)."""

    def __init__(self, monitor, min_delta=0, patience=0, mode='auto', baseline=None):
        super(EarlyStoppingHandler, self).__init__()
        if not isinstance(monitor, EvalMetric):
            raise ValueError("Please provide one of the metric objects from "
                             "estimator.train_metrics and estimator.val_metrics as "
                             "monitor, got {!r}".format(monitor))
        if isinstance(monitor, CompositeEvalMetric):
            raise ValueError("CompositeEvalMetric is not supported for "
                             "EarlyStoppingHandler, please specify a simple metric instead.")
        self.monitor = monitor
        self.baseline = baseline
        self.patience = patience
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        self.monitor_op = _monitor_op(mode, monitor, 'EarlyStoppingHandler')
        # Stored signed so that `op(value - min_delta, best)` tests improvement.
        self.min_delta = min_delta if self.monitor_op is np.greater else -min_delta
        self.best = np.inf if self.monitor_op is np.less else -np.inf

    def train_begin(self, estimator, *args, **kwargs):
        self.wait = 0
        self.stopped_epoch = 0
        self.current_epoch = 0
        self.stop_training = False
        if self.baseline is not None:
            self.best = self.baseline
        else:
            self.best = np.inf if self.monitor_op is np.less else -np.inf

    def epoch_end(self, estimator, *args, **kwargs):
        name, value = self.monitor.get()
        if np.isnan(value):
            warnings.warn(RuntimeWarning(
                '%s is not updated, make sure you pass one of the metric objects from '
                'estimator.train_metrics and estimator.val_metrics as monitor.' % name))
        elif self.monitor_op(value - self.min_delta, self.best):
            self.best = value
            self.wait = 0
        else:
            self.wait += 1
            if self.wait >= self.patience:
                self.stopped_epoch = self.current_epoch
                self.stop_training = True
        self.current_epoch += 1
        return self.stop_training

    def train_end(self, estimator, *args, **kwargs):
        if self.stop_training:
            estimator.logger.info('[Epoch %d] EarlyStoppingHandler: early stopping due '
                                  'to %s not improving',
                                  self.stopped_epoch, self.monitor.get()[0])


class GradientUpdateHandler(BatchEnd):
    """Apply the gradients at batch end: ``trainer.step(batch_size)`` with the
    batch size summed over the per-device losses.

    priority -2000: parameters are updated before any other handler runs."""

    def __init__(self, priority=-2000):
        self.priority = priority

    def batch_end(self, estimator, *args, **kwargs):
        loss = kwargs['loss']
        if not isinstance(loss, (list, tuple)):
            loss = [loss]
        batch_size = sum(l.shape[0] for l in loss)
        estimator.trainer.step(batch_size)
