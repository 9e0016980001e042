"""``mx.rnn``: MXNet 1.x's symbolic recurrent cells (``mx.rnn.LSTMCell``,
``FusedRNNCell``, ``SequentialRNNCell``, ``BidirectionalCell``, the
convolutional ``ConvLSTMCell`` ...), which build unrolled graphs out of
``mx.sym`` ops; ``BucketSentenceIter`` to feed them by length; RNN
checkpoint helpers."""
from .. import initializer as init  # noqa: F401  (MXNet's mx.rnn.init, .ndarray, .symbol)
from .. import ndarray, symbol  # noqa: F401
from . import rnn_cell  # noqa: F401
from .rnn_cell import *  # noqa: F401,F403
from . import rnn  # noqa: F401
from .rnn import *  # noqa: F401,F403
from . import io  # noqa: F401
from .io import *  # noqa: F401,F403
