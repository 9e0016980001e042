"""``mx.gluon.contrib``: MXNet 1.9.1's contributed Gluon blocks and data helpers.

aiond has ``contrib.nn`` (Concurrent, HybridConcurrent, Identity,
SyncBatchNorm, PixelShuffle1D/2D/3D), ``contrib.data``
(``IntervalSampler``) and ``contrib.estimator`` (Estimator, its event
handlers and BatchProcessor); MXNet's ``SparseEmbedding``, ``contrib.rnn``
and ``cnn`` are not here yet."""
from . import nn  # noqa: F401
from . import data  # noqa: F401
from . import estimator  # noqa: F401
