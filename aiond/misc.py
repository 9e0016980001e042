"""``mx.misc``: MXNet's oldest learning-rate schedulers (kept by MXNet 1.9.1
beside ``mx.lr_scheduler``): called with the iteration number, they return
the learning rate."""
from __future__ import annotations

import logging
import math

__all__ = ["LearningRateScheduler", "FactorScheduler"]


class LearningRateScheduler(object):
    """Base class: ``scheduler(iteration) -> learning rate``; ``base_lr``
    (default 0.01) is the starting rate."""

    def __init__(self):
        self.base_lr = 0.01

    def __call__(self, iteration):
        raise NotImplementedError("must override this")


class FactorScheduler(LearningRateScheduler):
    """``base_lr * factor ** (iteration // step)``, logging each change.

    Parameters
    ----------
    step : int (>= 1)
        Iterations between reductions.
    factor : float (< 1)
        The reduction factor.
    """

    def __init__(self, step, factor=0.1):
        super(FactorScheduler, self).__init__()
        if step < 1:
            raise ValueError("Schedule step must be greater or equal than 1 round")
        if factor >= 1.0:
            raise ValueError("Factor must be less than 1 to make lr reduce")
        self.step = step
        self.factor = factor
        self.old_lr = self.base_lr
        self.init = False

    def __call__(self, iteration):
        if not self.init:
            self.init = True
            self.old_lr = self.base_lr
        lr = self.base_lr * math.pow(self.factor, int(iteration / self.step))
        if lr != self.old_lr:
            self.old_lr = lr
            logging.info("At Iteration [%d]: Swith to new learning rate %.5f", iteration, lr)
        return lr
