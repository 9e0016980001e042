"""``mx.gluon.rnn``: recurrent cells and fused recurrent layers (MXNet 1.9.1)."""
from .rnn_cell import *  # noqa: F401,F403
from .rnn_layer import *  # noqa: F401,F403
