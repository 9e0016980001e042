"""``mx.nd.npx`` (``mxnet.ndarray.numpy_extension``): ``mx.npx``'s
operators on NDArrays, returning ``mx.np.ndarray``."""
from __future__ import annotations

import sys as _sys

from ... import numpy_extension as _npx  # the NumPy front end, built on this layer

__all__ = [n for n in dir(_npx) if not n.startswith("_")]
globals().update({n: getattr(_npx, n) for n in __all__})
for _m in ("random", "image"):
    _sys.modules.setdefault("%s.%s" % (__name__, _m), getattr(_npx, _m))
del _m
