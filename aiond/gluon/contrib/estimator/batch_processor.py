"""Per-batch training and evaluation steps of the Gluon Estimator."""
from .... import autograd
from ...utils import split_and_load

__all__ = ['BatchProcessor']


class BatchProcessor(object):
    """Default ``fit_batch`` / ``evaluate_batch`` of an :class:`Estimator`.

    Subclass and override either method to customise how one mini-batch is
    trained or evaluated; both return ``(data, label, pred, loss)`` where each
    is a list with one NDArray per context."""

    def __init__(self):
        pass

    def _get_data_and_label(self, batch, ctx, batch_axis=0):
        if not isinstance(batch, (list, tuple)) or len(batch) < 2:
            raise ValueError("a batch must be a (data, label) pair, got {}"
                             .format(type(batch).__name__))
        data = split_and_load(batch[0], ctx_list=ctx, batch_axis=batch_axis)
        label = split_and_load(batch[1], ctx_list=ctx, batch_axis=batch_axis)
        return data, label

    def evaluate_batch(self, estimator, val_batch, batch_axis=0):
        """Run ``estimator.val_net`` and ``estimator.val_loss`` on one
        validation batch (no gradient recording)."""
        data, label = self._get_data_and_label(val_batch, estimator.context, batch_axis)
        pred = [estimator.val_net(x) for x in data]
        loss = [estimator.val_loss(p, y) for p, y in zip(pred, label)]
        return data, label, pred, loss

    def fit_batch(self, estimator, train_batch, batch_axis=0):
        """Forward and backward ``estimator.net`` / ``estimator.loss`` on one
        training batch; the parameter update is left to
        ``GradientUpdateHandler``."""
        data, label = self._get_data_and_label(train_batch, estimator.context, batch_axis)
        with autograd.record():
            pred = [estimator.net(x) for x in data]
            loss = [estimator.loss(p, y) for p, y in zip(pred, label)]
        for l in loss:
            l.backward()
        return data, label, pred, loss
