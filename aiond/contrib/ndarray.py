"""``mxnet.contrib.ndarray``: in MXNet 1.9.1 the contrib operators are
registered into this module as well as ``mxnet.ndarray.contrib``; here the
two names are one module, so ``import mxnet.contrib.ndarray`` (and
``from mxnet.contrib.ndarray import MultiBoxPrior``) give ``mx.nd.contrib``."""
import sys as _sys

from ..ndarray import contrib as _contrib

_sys.modules[__name__] = _contrib
