"""``mxnet.contrib.symbol``: in MXNet 1.9.1 the contrib operators are
registered into this module as well as ``mxnet.symbol.contrib``; here the
two names are one module, so ``import mxnet.contrib.symbol`` gives
``mx.sym.contrib``."""
import sys as _sys

from .. import symbol as _symbol

_sys.modules[__name__] = _symbol.contrib
