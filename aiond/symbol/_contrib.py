"""Python-level ``mx.sym.contrib`` functions (MXNet 1.9.1's symbol/contrib.py)."""
from __future__ import annotations

import math

__all__ = ["rand_zipfian"]


def rand_zipfian(true_classes, num_sampled, range_max):
    """Symbols for (sampled classes, expected counts of ``true_classes``,
    expected counts of the sampled ones) under the log-uniform distribution
    over [0, range_max) (see ``mx.nd.contrib.rand_zipfian``)."""
    from . import random
    log_range = math.log(range_max + 1)
    rand = random.uniform(0, log_range, shape=(num_sampled,), dtype="float64")
    sampled_classes = (rand.exp() - 1).astype("int64") % range_max
    true_classes = true_classes.astype("float64")
    expected_prob_true = ((true_classes + 2.0) / (true_classes + 1.0)).log() / log_range
    expected_count_true = expected_prob_true * num_sampled
    sampled_cls_fp64 = sampled_classes.astype("float64")
    expected_prob_sampled = ((sampled_cls_fp64 + 2.0) / (sampled_cls_fp64 + 1.0)).log() / log_range
    return sampled_classes, expected_count_true, expected_prob_sampled * num_sampled
