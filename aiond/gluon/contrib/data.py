"""``mx.gluon.contrib.data``: MXNet 1.9.1's ``IntervalSampler``."""
from ..data.sampler import IntervalSampler  # noqa: F401

__all__ = ["IntervalSampler"]
