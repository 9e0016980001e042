"""Metric argument checks shared by the estimator and its handlers."""
from ....metric import Accuracy, CompositeEvalMetric, EvalMetric
from ...loss import SoftmaxCrossEntropyLoss


def _check_metrics(metrics):
    """Normalise ``metrics`` to a flat list of EvalMetric (composites are
    unpacked so each member gets its own training/validation name)."""
    if isinstance(metrics, CompositeEvalMetric):
        return [m for sub in metrics.metrics for m in _check_metrics(sub)]
    if isinstance(metrics, EvalMetric):
        return [metrics]
    metrics = metrics or []
    if isinstance(metrics, (str, bytes)) or not all(
            isinstance(m, EvalMetric) for m in metrics):
        raise ValueError("metrics must be an EvalMetric or a list of EvalMetric "
                         "(see mxnet.metric.EvalMetric), got: {!r}".format(metrics))
    return list(metrics)


def _metric_refs(handler):
    """The metric objects a handler holds in its ``*metric*`` / ``*monitor*``
    attributes."""
    for attr, value in vars(handler).items():
        if 'metric' not in attr and 'monitor' not in attr:
            continue
        values = value if isinstance(value, (list, tuple)) else [value]
        for v in values:
            if isinstance(v, EvalMetric):
                yield v


def _check_handler_metric_ref(handler, known_metrics):
    """Handlers mixed with the estimator's defaults must share its metric
    objects; otherwise nothing would ever update theirs."""
    known = {id(m) for m in known_metrics}
    for metric in _metric_refs(handler):
        if id(metric) not in known:
            raise ValueError(
                "Event handler {} refers to a metric instance {} outside of the "
                "known training and validation metrics. Please use the metrics "
                "from estimator.train_metrics and estimator.val_metrics "
                "instead.".format(type(handler).__name__, metric))


def _suggest_metric_for_loss(loss):
    if isinstance(loss, SoftmaxCrossEntropyLoss):
        return Accuracy()
    return None
