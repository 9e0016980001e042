"""The Gluon Estimator: a fit/evaluate loop driven by event handlers."""
import copy
import logging
import sys
import warnings

from ....context import Context, cpu, gpu, num_gpus
from ....metric import Loss as metric_loss
from ...data import DataLoader
from ...loss import Loss as gluon_loss
from ...trainer import Trainer
from ...utils import split_and_load
from .batch_processor import BatchProcessor
from .event_handler import (BatchBegin, BatchEnd, EpochBegin, EpochEnd,
                            GradientUpdateHandler, LoggingHandler, MetricHandler,
                            StoppingHandler, TrainBegin, TrainEnd, ValidationHandler,
                            _check_event_handlers)
from .utils import _check_handler_metric_ref, _check_metrics, _suggest_metric_for_loss

__all__ = ['Estimator']

_DATA_ERROR = ("Estimator only supports a gluon.data.DataLoader as {}, got {}. "
               "Wrap a DataIter or NDArrays in a gluon.data.Dataset and DataLoader.")


class Estimator(object):
    """Train and evaluate a Gluon ``net`` with ``loss``.

    Parameters
    ----------
    net : gluon.Block
        The model to train.
    loss : gluon.loss.Loss
        Training objective.
    train_metrics, val_metrics : EvalMetric or list of EvalMetric
        Metrics on training / validation data. Without train_metrics the loss
        suggests one (Accuracy for SoftmaxCrossEntropyLoss) and a Loss metric
        is added; without val_metrics copies of the training metrics are used.
    initializer : Initializer
        Used when ``net`` is not (fully) initialized.
    trainer : gluon.Trainer
        Default: SGD with learning rate 0.001 over ``net``'s parameters.
    context : Context or list of Context
        Devices; batches are split over them with ``split_and_load``.
    val_net : gluon.Block
        Model for validation (typically sharing ``net``'s parameters).
    val_loss : gluon.loss.Loss
        Validation objective; default ``loss``.
    batch_processor : BatchProcessor
        Provides ``fit_batch`` and ``evaluate_batch``.
    """

    logger = None

    def __init__(self, net, loss, train_metrics=None, val_metrics=None,
                 initializer=None, trainer=None, context=None, val_net=None,
                 val_loss=None, batch_processor=None):
        self.net = net
        self.loss = self._check_loss(loss)
        self._train_metrics = _check_metrics(train_metrics)
        self._val_metrics = _check_metrics(val_metrics)
        self._add_default_training_metrics()
        self._add_validation_metrics()
        self.val_loss = self.loss if val_loss is None else self._check_loss(val_loss)
        self.val_net = self.net if val_net is None else val_net

        # A private (unregistered) logger per estimator, writing INFO to stdout.
        self.logger = logging.Logger(name='Estimator', level=logging.INFO)
        self.logger.addHandler(logging.StreamHandler(sys.stdout))

        self.context = self._check_context(context)
        self._initialize(initializer)
        self.trainer = self._check_trainer(trainer)
        self.batch_processor = self._check_batch_processor(batch_processor)
        self.max_epoch = None
        self.max_batch = None
        self.batch_axis = 0

    # ----- argument checks -------------------------------------------------
    @staticmethod
    def _check_loss(loss):
        if not isinstance(loss, gluon_loss):
            raise ValueError("loss must be a gluon.loss.Loss, got {!r}".format(loss))
        return loss

    @staticmethod
    def _check_context(context):
        gpus = num_gpus()
        available_gpus = [gpu(i) for i in range(gpus)]
        if not context:
            if gpus > 1:
                warnings.warn("You have multiple GPUs, gpu(0) will be used by default. "
                              "To utilize all your GPUs, specify context as a list of "
                              "gpus, e.g. context=[mx.gpu(0), mx.gpu(1)]")
            return [gpu(0)] if gpus > 0 else [cpu()]
        if isinstance(context, Context):
            context = [context]
        elif not (isinstance(context, list) and context
                  and all(isinstance(c, Context) for c in context)):
            raise ValueError("context must be a Context or a list of Context, for example "
                             "mx.cpu() or [mx.gpu(0), mx.gpu(1)], got {!r}".format(context))
        for ctx in context:
            if not (ctx in available_gpus or str(ctx).startswith('cpu')):
                # AssertionError as in MXNet, which callers may catch.
                raise AssertionError(
                    "%s is not available, please make sure your context is in one of: "
                    "%s" % (ctx, ", ".join(['mx.cpu()'] + [str(c) for c in available_gpus])))
        return context

    @staticmethod
    def _check_batch_processor(batch_processor):
        if batch_processor is None:
            return BatchProcessor()
        if not (callable(getattr(batch_processor, 'fit_batch', None))
                and callable(getattr(batch_processor, 'evaluate_batch', None))):
            raise ValueError("Customized Batch Processor must contain fit_batch() "
                             "and evaluate_batch() methods")
        return batch_processor

    def _check_trainer(self, trainer):
        if trainer is None:
            warnings.warn("No trainer specified, default SGD optimizer "
                          "with learning rate 0.001 is used.")
            return Trainer(self.net.collect_params(), 'sgd', {'learning_rate': 0.001})
        if not isinstance(trainer, Trainer):
            raise ValueError("trainer must be a gluon.Trainer, got {!r}".format(trainer))
        return trainer

    def _is_initialized(self):
        params = self.net.collect_params()
        for name in params:
            try:
                params[name].list_ctx()
            except RuntimeError:
                return False
        return True

    def _initialize(self, initializer):
        if not self._is_initialized():
            # Only parameters not yet initialized are touched (fine-tuning keeps
            # pretrained weights).
            if initializer:
                self.net.initialize(init=initializer, ctx=self.context)
            else:
                self.net.initialize(ctx=self.context)
        elif initializer:
            warnings.warn("Network already fully initialized, skipping initialization. "
                          "You don't need to pass initializer if you already "
                          "initialized your net. You can use "
                          "net.initialize(init=your_initializer, force_reinit=True) "
                          "to force re-initialize.")

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    # ----- metrics ---------------------------------------------------------
    def _add_default_training_metrics(self):
        if not self._train_metrics:
            suggested = _suggest_metric_for_loss(self.loss)
            if suggested:
                self._train_metrics = [suggested]
            # 'softmaxcrossentropyloss0' -> 'softmaxcrossentropyloss'
            self._train_metrics.append(metric_loss(self.loss.name.rstrip('1234567890')))
        # The prefixes let handlers tell training from validation metrics.
        for metric in self._train_metrics:
            metric.name = 'training ' + metric.name

    def _add_validation_metrics(self):
        if not self._val_metrics:
            self._val_metrics = [copy.deepcopy(m) for m in self._train_metrics]
        for metric in self._val_metrics:
            if 'training' in metric.name:
                metric.name = metric.name.replace('training', 'validation')
            else:
                metric.name = 'validation ' + metric.name

    @property
    def train_metrics(self):
        return self._train_metrics

    @property
    def val_metrics(self):
        return self._val_metrics

    # ----- loops -----------------------------------------------------------
    def evaluate(self, val_data, batch_axis=0, event_handlers=None):
        """Evaluate ``val_net`` on ``val_data`` (a DataLoader), updating
        ``val_metrics``. A MetricHandler and a LoggingHandler over
        ``val_metrics`` are added unless given in ``event_handlers``."""
        if not isinstance(val_data, DataLoader):
            raise ValueError(_DATA_ERROR.format('val_data', type(val_data).__name__))
        for metric in self.val_metrics:
            metric.reset()
        handlers = self._prepare_default_validation_handlers(event_handlers)
        _, epoch_begin, batch_begin, batch_end, epoch_end, _ = \
            self._categorize_handlers(handlers)
        for handler in epoch_begin:
            handler.epoch_begin(self)
        for batch in val_data:
            for handler in batch_begin:
                handler.batch_begin(self, batch=batch)
            _, label, pred, loss = self.batch_processor.evaluate_batch(self, batch, batch_axis)
            for handler in batch_end:
                handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
        for handler in epoch_end:
            handler.epoch_end(self)

    def fit(self, train_data, val_data=None, epochs=None, event_handlers=None,
            batches=None, batch_axis=0):
        """Train on ``train_data`` (a DataLoader) for exactly one of
        ``epochs`` or ``batches``. StoppingHandler, GradientUpdateHandler,
        MetricHandler, LoggingHandler and (with ``val_data``) ValidationHandler
        are added unless ``event_handlers`` already has one of that kind."""
        if not isinstance(train_data, DataLoader):
            raise ValueError(_DATA_ERROR.format('train_data', type(train_data).__name__))
        if (not epochs) == (not batches):
            raise ValueError("fit trains by exactly one of epochs or batches; please "
                             "specify one and only one of them (got epochs=%r, batches=%r)"
                             % (epochs, batches))
        self.max_epoch = epochs
        self.max_batch = batches
        self.batch_axis = batch_axis

        handlers = self._prepare_default_handlers(val_data, event_handlers)
        train_begin, epoch_begin, batch_begin, batch_end, epoch_end, train_end = \
            self._categorize_handlers(handlers)

        for handler in train_begin:
            handler.train_begin(self)
        while True:
            for handler in epoch_begin:
                handler.epoch_begin(self)
            for batch in train_data:
                for handler in batch_begin:
                    handler.batch_begin(self, batch=batch)
                _, label, pred, loss = self.batch_processor.fit_batch(self, batch, batch_axis)
                # Every handler sees the batch end even if an earlier one asks to stop.
                stop = [handler.batch_end(self, batch=batch, pred=pred, label=label, loss=loss)
                        for handler in batch_end]
                if any(stop):
                    break
            stop = [handler.epoch_end(self) for handler in epoch_end]
            if any(stop):
                break
        for handler in train_end:
            handler.train_end(self)

    # ----- handlers --------------------------------------------------------
    def _finish_handlers(self, handlers, added, known_metrics):
        mixing = bool(handlers) and bool(added)
        handlers.extend(added)
        if mixing:
            for handler in handlers:
                _check_handler_metric_ref(handler, known_metrics)
        # Stable sort: equal priorities keep the user's order, then defaults.
        handlers.sort(key=lambda h: getattr(h, 'priority', 0))
        return handlers

    def _prepare_default_handlers(self, val_data, event_handlers):
        handlers = _check_event_handlers(event_handlers)
        added = [StoppingHandler(self.max_epoch, self.max_batch)]
        if not any(isinstance(h, GradientUpdateHandler) for h in handlers):
            added.append(GradientUpdateHandler())
        if not any(isinstance(h, MetricHandler) for h in handlers):
            added.append(MetricHandler(metrics=self.train_metrics))
        if val_data and not any(isinstance(h, ValidationHandler) for h in handlers):
            # Checked now rather than after the first training epoch.
            if not isinstance(val_data, DataLoader):
                raise ValueError(_DATA_ERROR.format('val_data', type(val_data).__name__))
            added.append(ValidationHandler(val_data=val_data, eval_fn=self.evaluate))
        if not any(isinstance(h, LoggingHandler) for h in handlers):
            added.append(LoggingHandler(metrics=self.train_metrics))
        return self._finish_handlers(handlers, added,
                                     self.train_metrics + self.val_metrics)

    def _prepare_default_validation_handlers(self, event_handlers):
        handlers = _check_event_handlers(event_handlers)
        added = []
        if not any(isinstance(h, MetricHandler) for h in handlers):
            added.append(MetricHandler(metrics=self.val_metrics))
        if not any(isinstance(h, LoggingHandler) for h in handlers):
            added.append(LoggingHandler(metrics=self.val_metrics))
        return self._finish_handlers(handlers, added, self.val_metrics)

    @staticmethod
    def _categorize_handlers(event_handlers):
        """Split handlers by the events they implement, so each event only
        calls the handlers that subscribed to it."""
        kinds = (TrainBegin, EpochBegin, BatchBegin, BatchEnd, EpochEnd, TrainEnd)
        return tuple([h for h in event_handlers if isinstance(h, kind)] for kind in kinds)
