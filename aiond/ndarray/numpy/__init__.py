"""``mx.nd.np`` (``mxnet.ndarray.numpy``): the NumPy interface's functions on
NDArrays, returning ``mx.np.ndarray``; the same functions as ``mx.np``
(one front function each, see ``aiond.numpy._front``)."""
from __future__ import annotations

import sys as _sys

from ... import numpy as _mxnp  # the NumPy front end, built on this layer

__all__ = list(_mxnp.__all__)
globals().update({n: getattr(_mxnp, n) for n in __all__})
linalg = _mxnp.linalg
random = _mxnp.random
fft = _mxnp.fft
for _m in ("linalg", "random", "fft"):
    _sys.modules.setdefault("%s.%s" % (__name__, _m), getattr(_mxnp, _m))
del _m
from . import _internal  # noqa: E402,F401  (MXNet's _npi: the _npi_* ops by their short names)
