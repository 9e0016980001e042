"""``mx.gluon.contrib``: MXNet 1.9.1's contributed Gluon blocks and data helpers.

``contrib.nn`` (Concurrent, HybridConcurrent, Identity, SparseEmbedding,
SyncBatchNorm, PixelShuffle1D/2D/3D), ``contrib.cnn`` (deformable
convolutions), ``contrib.rnn`` (convolutional RNN cells, LSTMPCell,
VariationalDropoutCell), ``contrib.data`` (``IntervalSampler``, WikiText) and
``contrib.estimator`` (Estimator, its event handlers and BatchProcessor)."""
from . import nn  # noqa: F401
from . import data  # noqa: F401
from . import estimator  # noqa: F401
from . import cnn  # noqa: F401
from . import rnn  # noqa: F401
