"""``mx.gluon.contrib``: MXNet 1.9.1's contributed Gluon blocks.

aiond has ``contrib.nn`` (Concurrent, HybridConcurrent, Identity,
SyncBatchNorm, PixelShuffle1D/2D/3D); MXNet's ``SparseEmbedding`` needs
row_sparse storage and ``contrib.rnn`` / ``cnn`` / ``data`` / ``estimator``
are not here yet."""
from . import nn  # noqa: F401
