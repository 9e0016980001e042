"""``mx.gluon``: MXNet 1.9.1's imperative training API."""
from . import data  # noqa: F401
from .parameter import Constant, DeferredInitializationError, Parameter, ParameterDict  # noqa: F401
from .block import Block, HybridBlock, SymbolBlock  # noqa: F401
from . import nn  # noqa: F401
from . import loss  # noqa: F401
from . import utils  # noqa: F401
from . import rnn, model_zoo  # noqa: F401
from . import contrib  # noqa: F401
from .trainer import Trainer  # noqa: F401


def __getattr__(name):
    if name == "tensor_types":
        from .parameter import _tensor_types
        return _tensor_types()
    raise AttributeError("module 'aiond.gluon' has no attribute %r" % name)
