"""``mx.gluon.contrib``: MXNet 1.9.1's contributed Gluon layers (``nn``) and
data helpers (``data.IntervalSampler``)."""
from . import nn  # noqa: F401
from . import data  # noqa: F401
