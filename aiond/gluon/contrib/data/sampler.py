"""``gluon.contrib.data.sampler``: MXNet 1.9.1 keeps ``IntervalSampler``
here; it is ``gluon.data.sampler.IntervalSampler``."""
from ...data.sampler import IntervalSampler  # noqa: F401

__all__ = ["IntervalSampler"]
