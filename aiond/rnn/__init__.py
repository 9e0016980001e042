"""``mx.rnn``: MXNet 1.x's symbolic recurrent cells (``mx.rnn.LSTMCell``,
``FusedRNNCell``, ``SequentialRNNCell``, ``BidirectionalCell`` ...), which
build unrolled graphs out of ``mx.sym`` ops."""
from . import rnn_cell  # noqa: F401
from .rnn_cell import *  # noqa: F401,F403
