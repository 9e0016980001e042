"""``mx.contrib.tensorboard``: log training metrics as TensorBoard scalars
(MXNet 1.9.1's ``LogMetricsCallback``), through mxboard's
``SummaryWriter``, imported when the callback is created."""
from __future__ import annotations

import importlib

__all__ = ["LogMetricsCallback"]


class LogMetricsCallback(object):
    """A batch-end or eval-end callback writing each metric of
    ``param.eval_metric`` as a scalar (step: the epoch) to TensorBoard event
    files in ``logging_dir``; ``prefix`` is put before the metric names
    (``'<prefix>-<name>'``). Needs mxboard (``pip install mxboard``): without
    it creating the callback raises ImportError (MXNet only logged an
    error, then failed at the first call)."""

    def __init__(self, logging_dir, prefix=None):
        self.prefix = prefix
        try:
            summary_writer = importlib.import_module("mxboard").SummaryWriter
        except ImportError:
            raise ImportError("LogMetricsCallback writes TensorBoard files through mxboard, "
                              "which is not installed: pip install mxboard") from None
        self.summary_writer = summary_writer(logging_dir)

    def __call__(self, param):
        if param.eval_metric is None:
            return
        for name, value in param.eval_metric.get_name_value():
            if self.prefix is not None:
                name = '%s-%s' % (self.prefix, name)
            self.summary_writer.add_scalar(name, value, global_step=param.epoch)
